//! The part of Perfetto's trace format that the import reads, as prost messages. Field
//! numbers and types are Perfetto's wire format, read from the descriptors of
//! `perfetto_trace_pb2` in the `perfetto` Python package 0.59.1
//! (`protos/perfetto/trace/trace_packet.proto`, `ftrace/ftrace_event_bundle.proto`,
//! `ftrace/ftrace_event.proto` and the event protos, `ps/process_tree.proto`,
//! `android/packages_list.proto`; see docs/perfetto-wire.md). Every other field is
//! skipped by the decoder, as protobuf skips unknown fields. Strings are read as bytes
//! (a task name need not be UTF-8) and turned into text lossily where used.

use prost::Message;

/// One packet of the `Trace` stream (`repeated TracePacket packet = 1` of `Trace`; a
/// trace file is that field written once per packet).
#[derive(Clone, PartialEq, Message)]
pub struct TracePacket {
    #[prost(uint64, optional, tag = "8")]
    pub timestamp: Option<u64>,
    #[prost(message, optional, tag = "1")]
    pub ftrace_events: Option<FtraceEventBundle>,
    #[prost(message, optional, tag = "2")]
    pub process_tree: Option<ProcessTree>,
    #[prost(message, optional, tag = "47")]
    pub packages_list: Option<PackagesList>,
}

/// The ftrace events of one CPU, read from its ring buffer in one go.
#[derive(Clone, PartialEq, Message)]
pub struct FtraceEventBundle {
    #[prost(uint32, optional, tag = "1")]
    pub cpu: Option<u32>,
    /// The events, each still encoded: decoded as [`FtraceEvent`], and for the densely
    /// encoded generic events (field numbers from 65536) by their descriptors below.
    #[prost(bytes = "vec", repeated, tag = "2")]
    pub event: Vec<Vec<u8>>,
    /// The kernel overwrote events of this CPU before they were read.
    #[prost(bool, optional, tag = "3")]
    pub lost_events: Option<bool>,
    #[prost(message, optional, tag = "4")]
    pub compact_sched: Option<CompactSched>,
    #[prost(message, repeated, tag = "11")]
    pub generic_event_descriptors: Vec<GenericEventDescriptor>,
}

/// The layout of a densely encoded generic event: the field number it takes in
/// `FtraceEvent` and a protobuf `DescriptorProto` of its message (Perfetto v53 on).
#[derive(Clone, PartialEq, Message)]
pub struct GenericEventDescriptor {
    #[prost(int32, optional, tag = "1")]
    pub field_id: Option<i32>,
    #[prost(bytes = "vec", optional, tag = "2")]
    pub event_descriptor: Option<Vec<u8>>,
    #[prost(bytes = "vec", optional, tag = "3")]
    pub group_name: Option<Vec<u8>>,
}

/// The part of protobuf's `DescriptorProto` (`google/protobuf/descriptor.proto`) that
/// names a message and its fields.
#[derive(Clone, PartialEq, Message)]
pub struct DescriptorProto {
    #[prost(bytes = "vec", optional, tag = "1")]
    pub name: Option<Vec<u8>>,
    #[prost(message, repeated, tag = "2")]
    pub field: Vec<FieldDescriptorProto>,
}

#[derive(Clone, PartialEq, Message)]
pub struct FieldDescriptorProto {
    #[prost(bytes = "vec", optional, tag = "1")]
    pub name: Option<Vec<u8>>,
    #[prost(int32, optional, tag = "3")]
    pub number: Option<i32>,
    /// `FieldDescriptorProto.Type`: 3 int64, 4 uint64, 5 int32, 13 uint32, 9 string...
    #[prost(int32, optional, tag = "5")]
    pub r#type: Option<i32>,
}

/// `sched_switch` and `sched_waking` in columns, task names interned: used here for the
/// names of tasks.
#[derive(Clone, PartialEq, Message)]
pub struct CompactSched {
    #[prost(bytes = "vec", repeated, tag = "5")]
    pub intern_table: Vec<Vec<u8>>,
    #[prost(int32, repeated, tag = "3")]
    pub switch_next_pid: Vec<i32>,
    #[prost(uint32, repeated, tag = "6")]
    pub switch_next_comm_index: Vec<u32>,
    #[prost(int32, repeated, tag = "8")]
    pub waking_pid: Vec<i32>,
    #[prost(uint32, repeated, tag = "11")]
    pub waking_comm_index: Vec<u32>,
}

/// One ftrace event: its time, its task (`pid`, a thread id) and its fields.
#[derive(Clone, PartialEq, Message)]
pub struct FtraceEvent {
    #[prost(uint64, optional, tag = "1")]
    pub timestamp: Option<u64>,
    #[prost(uint32, optional, tag = "2")]
    pub pid: Option<u32>,
    #[prost(
        oneof = "Event",
        tags = "3, 4, 97, 98, 235, 236, 237, 238, 239, 326, 327"
    )]
    pub event: Option<Event>,
}

/// The events read, by their field of `FtraceEvent`'s `event` oneof.
#[derive(Clone, PartialEq, prost::Oneof)]
pub enum Event {
    #[prost(message, tag = "3")]
    Print(Print),
    #[prost(message, tag = "4")]
    SchedSwitch(SchedSwitch),
    #[prost(message, tag = "97")]
    MmFilemapAddToPageCache(MmFilemapPage),
    #[prost(message, tag = "98")]
    MmFilemapDeleteFromPageCache(MmFilemapPage),
    #[prost(message, tag = "235")]
    TaskNewtask(TaskNewtask),
    #[prost(message, tag = "236")]
    TaskRename(TaskRename),
    #[prost(message, tag = "237")]
    SchedProcessExec(SchedProcessExec),
    #[prost(message, tag = "238")]
    SchedProcessExit(SchedProcessExit),
    #[prost(message, tag = "239")]
    SchedProcessFork(SchedProcessFork),
    #[prost(message, tag = "326")]
    OomScoreAdjUpdate(OomScoreAdjUpdate),
    /// An event Perfetto has no message for, with its fields by name.
    #[prost(message, tag = "327")]
    Generic(Generic),
}

/// `print`: a trace marker written to `trace_marker` (atrace's slices).
#[derive(Clone, PartialEq, Message)]
pub struct Print {
    #[prost(bytes = "vec", optional, tag = "2")]
    pub buf: Option<Vec<u8>>,
}

#[derive(Clone, PartialEq, Message)]
pub struct SchedSwitch {
    #[prost(bytes = "vec", optional, tag = "5")]
    pub next_comm: Option<Vec<u8>>,
    #[prost(int32, optional, tag = "6")]
    pub next_pid: Option<i32>,
}

/// `mm_filemap_add_to_page_cache` and `mm_filemap_delete_from_page_cache`.
#[derive(Clone, PartialEq, Message)]
pub struct MmFilemapPage {
    #[prost(uint64, optional, tag = "1")]
    pub pfn: Option<u64>,
    #[prost(uint64, optional, tag = "2")]
    pub i_ino: Option<u64>,
    /// The page's index in its file, in pages.
    #[prost(uint64, optional, tag = "3")]
    pub index: Option<u64>,
    /// The kernel's `dev_t`: `major << 20 | minor`.
    #[prost(uint64, optional, tag = "4")]
    pub s_dev: Option<u64>,
}

#[derive(Clone, PartialEq, Message)]
pub struct TaskNewtask {
    #[prost(int32, optional, tag = "1")]
    pub pid: Option<i32>,
    #[prost(bytes = "vec", optional, tag = "2")]
    pub comm: Option<Vec<u8>>,
    #[prost(uint64, optional, tag = "3")]
    pub clone_flags: Option<u64>,
    #[prost(int32, optional, tag = "4")]
    pub oom_score_adj: Option<i32>,
}

#[derive(Clone, PartialEq, Message)]
pub struct TaskRename {
    #[prost(int32, optional, tag = "1")]
    pub pid: Option<i32>,
    #[prost(bytes = "vec", optional, tag = "3")]
    pub newcomm: Option<Vec<u8>>,
}

#[derive(Clone, PartialEq, Message)]
pub struct SchedProcessExec {
    #[prost(bytes = "vec", optional, tag = "1")]
    pub filename: Option<Vec<u8>>,
    #[prost(int32, optional, tag = "2")]
    pub pid: Option<i32>,
}

#[derive(Clone, PartialEq, Message)]
pub struct SchedProcessExit {
    #[prost(bytes = "vec", optional, tag = "1")]
    pub comm: Option<Vec<u8>>,
    #[prost(int32, optional, tag = "2")]
    pub pid: Option<i32>,
    #[prost(int32, optional, tag = "3")]
    pub tgid: Option<i32>,
}

#[derive(Clone, PartialEq, Message)]
pub struct SchedProcessFork {
    #[prost(bytes = "vec", optional, tag = "3")]
    pub child_comm: Option<Vec<u8>>,
    #[prost(int32, optional, tag = "4")]
    pub child_pid: Option<i32>,
}

#[derive(Clone, PartialEq, Message)]
pub struct OomScoreAdjUpdate {
    #[prost(bytes = "vec", optional, tag = "1")]
    pub comm: Option<Vec<u8>>,
    #[prost(int32, optional, tag = "2")]
    pub oom_score_adj: Option<i32>,
    #[prost(int32, optional, tag = "3")]
    pub pid: Option<i32>,
}

#[derive(Clone, PartialEq, Message)]
pub struct Generic {
    #[prost(bytes = "vec", optional, tag = "1")]
    pub event_name: Option<Vec<u8>>,
    #[prost(message, repeated, tag = "2")]
    pub field: Vec<GenericField>,
}

#[derive(Clone, PartialEq, Message)]
pub struct GenericField {
    #[prost(bytes = "vec", optional, tag = "1")]
    pub name: Option<Vec<u8>>,
    #[prost(bytes = "vec", optional, tag = "3")]
    pub str_value: Option<Vec<u8>>,
    #[prost(int64, optional, tag = "4")]
    pub int_value: Option<i64>,
    #[prost(uint64, optional, tag = "5")]
    pub uint_value: Option<u64>,
}

/// The processes and threads running when it was taken.
#[derive(Clone, PartialEq, Message)]
pub struct ProcessTree {
    #[prost(message, repeated, tag = "1")]
    pub processes: Vec<Process>,
    #[prost(message, repeated, tag = "2")]
    pub threads: Vec<Thread>,
}

#[derive(Clone, PartialEq, Message)]
pub struct Process {
    #[prost(int32, optional, tag = "1")]
    pub pid: Option<i32>,
    #[prost(int32, optional, tag = "2")]
    pub ppid: Option<i32>,
    #[prost(bytes = "vec", repeated, tag = "3")]
    pub cmdline: Vec<Vec<u8>>,
    #[prost(int32, optional, tag = "5")]
    pub uid: Option<i32>,
}

#[derive(Clone, PartialEq, Message)]
pub struct Thread {
    #[prost(int32, optional, tag = "1")]
    pub tid: Option<i32>,
    #[prost(bytes = "vec", optional, tag = "2")]
    pub name: Option<Vec<u8>>,
    #[prost(int32, optional, tag = "3")]
    pub tgid: Option<i32>,
}

/// Android's installed packages (`/data/system/packages.list`).
#[derive(Clone, PartialEq, Message)]
pub struct PackagesList {
    #[prost(message, repeated, tag = "1")]
    pub packages: Vec<PackageInfo>,
}

#[derive(Clone, PartialEq, Message)]
pub struct PackageInfo {
    #[prost(bytes = "vec", optional, tag = "1")]
    pub name: Option<Vec<u8>>,
    #[prost(uint64, optional, tag = "2")]
    pub uid: Option<u64>,
}
