//! Importing Perfetto traces: the protobuf files Android records (`.perfetto-trace`,
//! `.pftrace`), plain, gzip- or zstd-compressed, read directly (no `traceconv`).
//!
//! A trace is a stream of `TracePacket`s ([`proto`]). The import reads:
//!
//! - `FtraceEventBundle`s: each CPU's ftrace events. The events the ftrace text import
//!   uses are decoded from their messages (`mm_filemap_add_to_page_cache` and
//!   `_delete_from_page_cache`, `oom_score_adj_update`, `task_newtask`, `task_rename`,
//!   `sched_process_fork`, `_exec`, `_exit`, `print` with atrace markers); events Perfetto
//!   has no message for arrive as generic events with their fields by name, and those the
//!   text import uses are read from them (`mm_filemap_get_pages`, `_map_pages`,
//!   `mm_filemap_fault`, `page_fault_user`, `mm_vmscan_*`);
//! - `compact_sched` and `sched_switch`: the names of tasks;
//! - `ProcessTree`: the processes running when the trace began (pid, command line), and
//!   which thread belongs to which;
//! - `PackagesList`: app names by uid, for a process whose command line is empty.
//!
//! Bundles are per CPU, so the events of the whole trace are sorted by time (stably, so
//! events with the same time keep the order they were written in) before they are
//! applied, as `trace_processor` does; then each becomes the same
//! [`Record`](super::ftrace) the ftrace text import makes of its line, and the importer
//! builds the trace from them alike. Importing a trace and importing the `traceconv
//! systrace` text of the same trace give the same accesses, except where the text drops
//! something (a generic event's fields, task names longer than 15 bytes).
//!
//! Packets and events of other kinds are skipped and counted. A truncated file, or bytes
//! that are not a packet stream, is an error naming the byte offset; nothing is built.
//! Memory grows with the packets read: a packet's length is checked against
//! [`MAX_PACKET_BYTES`] and read as it arrives, never allocated from the length alone.

pub mod proto;

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read};
use std::path::Path;

use prost::Message;
use serde::Serialize;

use super::ftrace::line::Head;
use super::ftrace::payload::{
    begin_marker, checked_adj, checked_index, checked_range, owner_of_userspace_dev, NewTask,
    CLONE_THREAD,
};
use super::ftrace::record::{base_name, Record};
use super::ftrace::{FtraceImporter, ImportOptions, ImportReport, PAGE_SIZE};
use super::open::zstd_bound;
use super::shared::StoredBytes;
use super::Trace;
use crate::{Error, Position, Result};

/// Largest packet read: Perfetto's own writer keeps packets far smaller (its trace
/// buffer chunks are at most a few hundred KiB); a larger length is not a trace.
pub const MAX_PACKET_BYTES: u64 = 64 << 20;

/// What the import found in the packet stream, beside what the events gave.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct PerfettoStats {
    /// Bytes of the packet stream (after decompression).
    pub bytes: u64,
    pub packets: u64,
    /// Packets with ftrace events, a process tree or a package list.
    pub packets_used: u64,
    /// Packets of other kinds (track events, counters, clock snapshots, config...).
    pub packets_other: u64,
    pub ftrace_bundles: u64,
    /// Bundles whose CPU lost events (the kernel overwrote them before they were read).
    pub bundles_with_lost_events: u64,
    pub ftrace_events: u64,
    /// Events of kinds the import does not decode (their name is not read).
    pub events_not_decoded: u64,
    pub compact_sched_switches: u64,
    pub process_tree_processes: u64,
    pub process_tree_threads: u64,
    pub packages: u64,
    /// Processes named by the process tree, by the package list (an empty command line)
    /// and by the scheduler's task names (processes the tree does not list).
    pub named_by_process_tree: u64,
    pub named_by_packages: u64,
    pub named_by_sched: u64,
}

/// Whether `head` (the first bytes of a file) looks like a Perfetto protobuf trace
/// rather than text: gzip or zstd data, or a first packet tag (field 1, length-delimited)
/// followed by bytes that are not text.
pub fn looks_like_protobuf(head: &[u8]) -> bool {
    if head.starts_with(&[0x1f, 0x8b]) {
        return true;
    }
    head.first() == Some(&0x0a)
        && head
            .iter()
            .take(64)
            .any(|&b| b < 0x20 && !matches!(b, b'\t' | b'\n' | b'\r'))
}

/// Import a Perfetto protobuf trace file (plain, gzip or zstd).
pub fn import_file(path: &Path, options: ImportOptions) -> Result<(Trace, ImportReport)> {
    let file = crate::input::open(path)?;
    let length = file
        .metadata()
        .ok()
        .filter(|m| m.is_file())
        .map(|m| m.len());
    let mut reader = BufReader::with_capacity(1 << 16, file);
    let head = reader.fill_buf().map_err(|e| Error::io(path, e))?;
    if head.starts_with(&[0x1f, 0x8b]) {
        // As for zstd: a few KiB of gzip cannot stand for gigabytes of trace.
        let bound = length.map_or(u64::MAX, zstd_bound);
        let decoder = flate2::read::MultiGzDecoder::new(reader);
        let input = Bounded {
            inner: decoder,
            left: bound,
            bound,
        };
        return import(path, BufReader::new(input), StoredBytes::default(), options);
    }
    drop(reader);
    let (input, stored) = super::open::open_bytes_metered(path)?;
    import(
        path,
        BufReader::with_capacity(1 << 16, input),
        stored,
        options,
    )
}

/// A reader that fails past `bound` bytes.
struct Bounded<R> {
    inner: R,
    left: u64,
    bound: u64,
}

impl<R: Read> Read for Bounded<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        if n as u64 > self.left {
            return Err(std::io::Error::other(format!(
                "the gzip data decompresses to more than {} bytes, the most its size allows ({} MiB plus {} bytes a compressed byte)",
                self.bound,
                super::open::ZSTD_ALLOWANCE >> 20,
                super::open::MAX_ZSTD_EXPANSION
            )));
        }
        self.left -= n as u64;
        Ok(n)
    }
}

/// One ftrace event waiting for the events of the other CPUs, to be applied in time
/// order.
struct Pending {
    time_ns: u64,
    pid: u32,
    /// Byte offset of its packet in the stream.
    packet_at: u64,
    event: Option<proto::Event>,
}

/// Import the packet stream `input` (not compressed: standard input); `name` stands for it
/// in errors.
pub fn import_reader(
    name: &Path,
    input: impl BufRead,
    options: ImportOptions,
) -> Result<(Trace, ImportReport)> {
    import(name, input, StoredBytes::default(), options)
}

/// Import the packet stream `input`, `stored` counting its bytes as stored.
fn import(
    name: &Path,
    mut input: impl BufRead,
    stored: StoredBytes,
    options: ImportOptions,
) -> Result<(Trace, ImportReport)> {
    let mut stats = PerfettoStats::default();
    let mut importer = FtraceImporter::new(name, options);
    let mut pending: Vec<Pending> = Vec::new();
    // Names: from the process tree (pid -> command line's program), threads (tid ->
    // tgid), packages (uid -> name, None when several share the uid), the scheduler
    // (tid -> comm, the first seen).
    let mut tree_names: HashMap<u32, (String, Option<i32>)> = HashMap::new();
    let mut tree_threads: Vec<(u32, u32)> = Vec::new();
    let mut packages: HashMap<u64, Option<String>> = HashMap::new();
    let mut sched_names: HashMap<u32, String> = HashMap::new();
    let mut malformed: Vec<(u64, String)> = Vec::new();
    let mut packet = Vec::new();
    let mut offset = 0u64;
    while let Some(at) = next_packet(name, &mut input, &mut offset, &mut packet)? {
        stats.packets += 1;
        let decoded = match proto::TracePacket::decode(packet.as_slice()) {
            Ok(p) => p,
            Err(e) => {
                malformed.push((at, format!("a TracePacket that does not decode ({e})")));
                continue;
            }
        };
        let used = decoded.ftrace_events.is_some()
            || decoded.process_tree.is_some()
            || decoded.packages_list.is_some();
        if used {
            stats.packets_used += 1;
        } else {
            stats.packets_other += 1;
        }
        if let Some(tree) = decoded.process_tree {
            for p in tree.processes {
                stats.process_tree_processes += 1;
                let Some(pid) = p.pid.and_then(|p| u32::try_from(p).ok()) else {
                    continue;
                };
                let program = p
                    .cmdline
                    .first()
                    .map(|c| base_name(&String::from_utf8_lossy(c)).to_string())
                    .unwrap_or_default();
                tree_names.entry(pid).or_insert((program, p.uid));
            }
            for t in tree.threads {
                stats.process_tree_threads += 1;
                let tid = t.tid.and_then(|t| u32::try_from(t).ok());
                let tgid = t.tgid.and_then(|t| u32::try_from(t).ok());
                if let (Some(tid), Some(tgid)) = (tid, tgid) {
                    if tid != tgid && tgid != 0 {
                        tree_threads.push((tid, tgid));
                    }
                }
                if let (Some(tid), Some(name)) = (tid, t.name) {
                    sched_names
                        .entry(tid)
                        .or_insert_with(|| String::from_utf8_lossy(&name).into_owned());
                }
            }
        }
        if let Some(list) = decoded.packages_list {
            for p in list.packages {
                stats.packages += 1;
                let (Some(name), Some(uid)) = (p.name, p.uid) else {
                    continue;
                };
                let name = String::from_utf8_lossy(&name).into_owned();
                packages
                    .entry(uid)
                    .and_modify(|known| {
                        if known.as_deref() != Some(name.as_str()) {
                            *known = None;
                        }
                    })
                    .or_insert(Some(name));
            }
        }
        if let Some(bundle) = decoded.ftrace_events {
            stats.ftrace_bundles += 1;
            if bundle.lost_events == Some(true) {
                stats.bundles_with_lost_events += 1;
            }
            if let Some(cs) = bundle.compact_sched {
                stats.compact_sched_switches += cs.switch_next_pid.len() as u64;
                let pairs = (cs.switch_next_pid.iter().zip(&cs.switch_next_comm_index))
                    .chain(cs.waking_pid.iter().zip(&cs.waking_comm_index));
                for (&pid, &index) in pairs {
                    let (Ok(pid), Some(comm)) =
                        (u32::try_from(pid), cs.intern_table.get(index as usize))
                    else {
                        continue;
                    };
                    if pid != 0 {
                        sched_names
                            .entry(pid)
                            .or_insert_with(|| String::from_utf8_lossy(comm).into_owned());
                    }
                }
            }
            let layouts = dense_layouts(&bundle.generic_event_descriptors);
            for raw in bundle.event {
                stats.ftrace_events += 1;
                let e = match decode_event(&raw, &layouts) {
                    Ok(e) => e,
                    Err(expected) => {
                        malformed.push((at, expected));
                        continue;
                    }
                };
                let Some(time_ns) = e.timestamp else {
                    malformed.push((at, "an ftrace event without a timestamp".into()));
                    continue;
                };
                if let Some(proto::Event::SchedSwitch(s)) = &e.event {
                    if let (Some(pid), Some(comm)) = (s.next_pid, &s.next_comm) {
                        if let Ok(pid) = u32::try_from(pid) {
                            if pid != 0 {
                                sched_names
                                    .entry(pid)
                                    .or_insert_with(|| String::from_utf8_lossy(comm).into_owned());
                            }
                        }
                    }
                }
                if e.event.is_none() {
                    stats.events_not_decoded += 1;
                }
                pending.push(Pending {
                    time_ns,
                    pid: e.pid.unwrap_or(0),
                    packet_at: at,
                    event: e.event,
                });
            }
        }
    }
    stats.bytes = offset;
    importer.set_bytes_read(offset, stored);
    for (at, expected) in malformed {
        importer.malformed_record("packet", &expected, Position::Byte(at))?;
    }

    // The processes running when the trace began, and their threads.
    let mut named: Vec<(u32, String)> = Vec::new();
    for (&pid, (program, uid)) in &tree_names {
        if !program.is_empty() {
            named.push((pid, program.clone()));
            stats.named_by_process_tree += 1;
        } else if let Some(Some(package)) = uid
            .and_then(|u| u64::try_from(u).ok())
            .and_then(|u| packages.get(&u))
        {
            named.push((pid, package.clone()));
            stats.named_by_packages += 1;
        }
    }
    let threads: HashMap<u32, u32> = tree_threads.iter().copied().collect();
    for (&pid, comm) in &sched_names {
        if !tree_names.contains_key(&pid) && !threads.contains_key(&pid) {
            named.push((pid, comm.clone()));
            stats.named_by_sched += 1;
        }
    }
    named.sort();
    for (pid, name) in &named {
        importer.named_process(*pid, name);
    }
    tree_threads.sort_unstable();
    tree_threads.dedup_by_key(|t| t.0);
    for (tid, tgid) in tree_threads {
        importer.thread_of(tid, tgid);
    }

    // Every CPU's events, in time order.
    pending.sort_by_key(|p| p.time_ns);
    for p in &pending {
        let at = Position::Byte(p.packet_at);
        let (event, record) = match record_of(p.event.as_ref()) {
            Ok(r) => r,
            Err((event, expected)) => {
                importer.malformed_record(&event, &expected, at)?;
                continue;
            }
        };
        let head = Head {
            comm: None,
            pid: p.pid,
            tgid: None,
            time_ns: p.time_ns,
            event: &event,
            payload: "",
        };
        importer.push_record(&head, record, at)?;
    }
    let (trace, mut report) = importer.finish();
    report.perfetto = Some(stats);
    Ok((trace, report))
}

/// A densely encoded generic event's name and its fields by number (name, signed).
struct DenseLayout {
    name: String,
    fields: HashMap<u32, (String, bool)>,
}

/// The layouts of a bundle's densely encoded generic events, by field number.
fn dense_layouts(descriptors: &[proto::GenericEventDescriptor]) -> HashMap<u32, DenseLayout> {
    let mut out = HashMap::new();
    for d in descriptors {
        let (Some(id), Some(bytes)) = (d.field_id, &d.event_descriptor) else {
            continue;
        };
        let (Ok(id), Ok(desc)) = (
            u32::try_from(id),
            proto::DescriptorProto::decode(bytes.as_slice()),
        ) else {
            continue;
        };
        let fields = desc
            .field
            .iter()
            .filter_map(|f| {
                let number = u32::try_from(f.number?).ok()?;
                let name = String::from_utf8_lossy(f.name.as_deref()?).into_owned();
                // int64, int32, sint32, sint64 are signed.
                let signed = matches!(f.r#type, Some(3 | 5 | 17 | 18));
                Some((number, (name, signed)))
            })
            .collect();
        let name = String::from_utf8_lossy(desc.name.as_deref().unwrap_or_default()).into_owned();
        out.insert(id, DenseLayout { name, fields });
    }
    out
}

/// First field number of the densely encoded generic events in `FtraceEvent`.
const FIRST_DENSE_FIELD: u32 = 1 << 16;

/// One encoded ftrace event: its known fields, and a densely encoded generic event
/// turned into the generic event of the older encoding.
fn decode_event(
    raw: &[u8],
    layouts: &HashMap<u32, DenseLayout>,
) -> std::result::Result<proto::FtraceEvent, String> {
    use prost::encoding::{decode_key, decode_varint, skip_field, DecodeContext, WireType};
    let mut event = proto::FtraceEvent::decode(raw)
        .map_err(|e| format!("an FtraceEvent that does not decode ({e})"))?;
    if event.event.is_some() || layouts.is_empty() {
        return Ok(event);
    }
    let bad = |e: prost::DecodeError| format!("an FtraceEvent that does not decode ({e})");
    let mut buf = raw;
    while !buf.is_empty() {
        let (tag, wire) = decode_key(&mut buf).map_err(bad)?;
        let layout = layouts.get(&tag).filter(|_| tag >= FIRST_DENSE_FIELD);
        let (Some(layout), WireType::LengthDelimited) = (layout, wire) else {
            skip_field(wire, tag, &mut buf, DecodeContext::default()).map_err(bad)?;
            continue;
        };
        let len = decode_varint(&mut buf).map_err(bad)?;
        let len = usize::try_from(len)
            .ok()
            .filter(|&l| l <= buf.len())
            .ok_or_else(|| format!("a generic event of {len} bytes in a smaller event"))?;
        let (mut body, rest) = buf.split_at(len);
        buf = rest;
        let mut generic = proto::Generic {
            event_name: Some(layout.name.clone().into_bytes()),
            field: Vec::new(),
        };
        while !body.is_empty() {
            let (number, wire) = decode_key(&mut body).map_err(bad)?;
            match (layout.fields.get(&number), wire) {
                (Some((name, signed)), WireType::Varint) => {
                    let v = decode_varint(&mut body).map_err(bad)?;
                    generic.field.push(proto::GenericField {
                        name: Some(name.clone().into_bytes()),
                        str_value: None,
                        int_value: signed.then_some(v as i64),
                        uint_value: (!signed).then_some(v),
                    });
                }
                _ => skip_field(wire, number, &mut body, DecodeContext::default()).map_err(bad)?,
            }
        }
        event.event = Some(proto::Event::Generic(generic));
    }
    Ok(event)
}

/// The next packet of the stream into `packet`, and the byte offset of its tag; `None`
/// at the end. Fields of `Trace` other than its packets are skipped.
fn next_packet(
    name: &Path,
    input: &mut impl BufRead,
    offset: &mut u64,
    packet: &mut Vec<u8>,
) -> Result<Option<u64>> {
    loop {
        let at = *offset;
        let Some(tag) = varint(name, input, offset, true)? else {
            return Ok(None);
        };
        let (field, wire) = (tag >> 3, tag & 7);
        let bad = |what: String| {
            Err(Error::format(
                name,
                Position::Byte(at),
                format!("{what}: expected a Perfetto trace (a stream of TracePacket messages, field 1 of Trace)"),
            ))
        };
        match wire {
            0 => {
                varint(name, input, offset, false)?;
            }
            1 | 5 => {
                let n = if wire == 1 { 8 } else { 4 };
                skip(name, input, offset, n, at)?;
            }
            2 => {
                let len = varint(name, input, offset, false)?.unwrap_or(0);
                if len > MAX_PACKET_BYTES {
                    return bad(format!(
                        "field {field} claims {len} bytes, more than a packet may hold ({MAX_PACKET_BYTES})"
                    ));
                }
                if field != 1 {
                    skip(name, input, offset, len, at)?;
                    continue;
                }
                packet.clear();
                let read = input
                    .take(len)
                    .read_to_end(packet)
                    .map_err(|e| Error::io(name, e))?;
                *offset += read as u64;
                if (read as u64) < len {
                    return Err(Error::format(
                        name,
                        Position::Byte(at),
                        format!("truncated: the packet here claims {len} bytes and the file ends after {read}"),
                    ));
                }
                return Ok(Some(at));
            }
            _ => {
                return bad(format!(
                    "field {field} has wire type {wire}, which protobuf does not define"
                ))
            }
        }
        if field == 0 {
            return bad("field number 0".into());
        }
    }
}

/// Skip `n` bytes of a field that starts at `at`.
fn skip(name: &Path, input: &mut impl BufRead, offset: &mut u64, n: u64, at: u64) -> Result<()> {
    let skipped =
        std::io::copy(&mut input.take(n), &mut std::io::sink()).map_err(|e| Error::io(name, e))?;
    *offset += skipped;
    if skipped < n {
        return Err(Error::format(
            name,
            Position::Byte(at),
            format!("truncated: the field here claims {n} bytes and the file ends after {skipped}"),
        ));
    }
    Ok(())
}

/// A protobuf varint; `None` at a clean end of the stream when `at_end_ok`.
fn varint(
    name: &Path,
    input: &mut impl BufRead,
    offset: &mut u64,
    at_end_ok: bool,
) -> Result<Option<u64>> {
    let start = *offset;
    let mut value = 0u64;
    for i in 0..10 {
        let mut byte = [0u8];
        let n = input.read(&mut byte).map_err(|e| Error::io(name, e))?;
        if n == 0 {
            if i == 0 && at_end_ok {
                return Ok(None);
            }
            return Err(Error::format(
                name,
                Position::Byte(start),
                "truncated: the file ends inside a field's tag or length".to_string(),
            ));
        }
        *offset += 1;
        value |= u64::from(byte[0] & 0x7f) << (7 * i);
        if byte[0] & 0x80 == 0 {
            return Ok(Some(value));
        }
    }
    Err(Error::format(
        name,
        Position::Byte(start),
        "a varint longer than 10 bytes: not protobuf".to_string(),
    ))
}

type RecordOf<'a> = std::result::Result<(String, Record<'a>), (String, String)>;

/// The event's name and its record, or its name and what was expected of it.
fn record_of(event: Option<&proto::Event>) -> RecordOf<'_> {
    use proto::Event as E;
    let Some(event) = event else {
        return Ok(("(an event type not decoded)".into(), Record::Other));
    };
    fn named<'a>(name: &str, r: std::result::Result<Record<'a>, String>) -> RecordOf<'a> {
        match r {
            Ok(record) => Ok((name.to_string(), record)),
            Err(expected) => Err((name.to_string(), expected)),
        }
    }
    match event {
        E::Print(p) => {
            let buf = p.buf.as_deref().unwrap_or_default();
            let marker = std::str::from_utf8(buf).ok().and_then(begin_marker);
            named("print", Ok(Record::Marker(marker)))
        }
        E::SchedSwitch(_) => named("sched_switch", Ok(Record::Other)),
        E::MmFilemapAddToPageCache(m) => named("mm_filemap_add_to_page_cache", page_cache(m, true)),
        E::MmFilemapDeleteFromPageCache(m) => {
            named("mm_filemap_delete_from_page_cache", page_cache(m, false))
        }
        E::TaskNewtask(t) => named("task_newtask", new_task(t)),
        E::TaskRename(t) => named("task_rename", rename(t)),
        E::SchedProcessExec(x) => named("sched_process_exec", exec(x)),
        E::SchedProcessExit(x) => named(
            "sched_process_exit",
            pid_of(x.pid, "pid").map(|pid| Record::Exit {
                pid,
                group_dead: None,
            }),
        ),
        E::SchedProcessFork(x) => named(
            "sched_process_fork",
            pid_of(x.child_pid, "child_pid").map(|child| Record::Fork {
                child,
                child_comm: utf8(&x.child_comm),
            }),
        ),
        E::OomScoreAdjUpdate(o) => named("oom_score_adj_update", oom_score_adj(o)),
        E::Generic(g) => {
            let name =
                String::from_utf8_lossy(g.event_name.as_deref().unwrap_or_default()).into_owned();
            match generic_record(&name, g) {
                Ok(record) => Ok((name, record)),
                Err(expected) => Err((name, expected)),
            }
        }
    }
}

type Expected<T> = std::result::Result<T, String>;

fn new_task(t: &proto::TaskNewtask) -> Expected<Record<'_>> {
    let pid = pid_of(t.pid, "pid")?;
    let flags = t.clone_flags.ok_or("expected clone_flags")?;
    Ok(Record::NewTask(NewTask {
        pid,
        thread: flags & CLONE_THREAD != 0,
        adj: adj_of(t.oom_score_adj)?,
        comm: utf8(&t.comm),
    }))
}

fn rename(t: &proto::TaskRename) -> Expected<Record<'_>> {
    Ok(Record::Rename {
        pid: pid_of(t.pid, "pid")?,
        newcomm: utf8(&t.newcomm).ok_or("expected newcomm (UTF-8)")?,
    })
}

fn exec(x: &proto::SchedProcessExec) -> Expected<Record<'_>> {
    let filename = utf8(&x.filename).ok_or("expected filename (UTF-8)")?;
    Ok(Record::Exec {
        pid: pid_of(x.pid, "pid")?,
        name: base_name(filename),
    })
}

fn oom_score_adj(o: &proto::OomScoreAdjUpdate) -> Expected<Record<'_>> {
    Ok(Record::OomScoreAdj {
        pid: pid_of(o.pid, "pid")?,
        adj: adj_of(o.oom_score_adj)?,
        comm: utf8(&o.comm),
    })
}

/// An `oom_score_adj` field: present and in the kernel's range.
fn adj_of(adj: Option<i32>) -> Expected<i16> {
    checked_adj(i64::from(adj.ok_or("expected oom_score_adj")?))
}

/// A string field that is UTF-8 text, or `None`.
fn utf8(field: &Option<Vec<u8>>) -> Option<&str> {
    field.as_deref().and_then(|b| std::str::from_utf8(b).ok())
}

/// A pid field: present and not negative.
fn pid_of(pid: Option<i32>, field: &str) -> std::result::Result<u32, String> {
    let pid = pid.ok_or_else(|| format!("expected {field}"))?;
    u32::try_from(pid).map_err(|_| format!("{field}={pid}, expected a pid"))
}

/// The file key of a device number as Perfetto writes it (the user-space encoding) and
/// an inode.
fn file_of(s_dev: u64, ino: u64) -> std::result::Result<u64, String> {
    owner_of_userspace_dev(s_dev, ino)
}

/// The file and page index of a filemap event.
fn filemap_page(m: &proto::MmFilemapPage) -> std::result::Result<(u64, u64), String> {
    let dev = m.s_dev.ok_or("expected s_dev")?;
    let ino = m.i_ino.ok_or("expected i_ino")?;
    let index = checked_index("index", m.index.ok_or("expected index")?)?;
    Ok((file_of(dev, ino)?, index))
}

/// The page added to (`added`) or deleted from the page cache.
fn page_cache(m: &proto::MmFilemapPage, added: bool) -> std::result::Result<Record<'_>, String> {
    let (owner, first) = filemap_page(m)?;
    Ok(Record::PageCache {
        added,
        owner,
        first,
        count: 1,
    })
}

/// An unsigned field of a generic event, by name.
fn generic_u64(g: &proto::Generic, field: &str) -> std::result::Result<u64, String> {
    let f = g
        .field
        .iter()
        .find(|f| f.name.as_deref() == Some(field.as_bytes()))
        .ok_or_else(|| format!("expected a field {field}"))?;
    match (f.uint_value, f.int_value) {
        (Some(v), _) => Ok(v),
        (None, Some(v)) => {
            u64::try_from(v).map_err(|_| format!("{field}={v}, expected a number of at least 0"))
        }
        _ => Err(format!("{field}: expected a number")),
    }
}

/// The record of a generic event the text import reads (by the same field names the
/// kernel gives them), or [`Record::Other`].
fn generic_record<'a>(name: &str, g: &proto::Generic) -> std::result::Result<Record<'a>, String> {
    let file = || -> std::result::Result<u64, String> {
        file_of(generic_u64(g, "s_dev")?, generic_u64(g, "i_ino")?)
    };
    Ok(match name {
        "mm_filemap_get_pages" | "mm_filemap_map_pages" => {
            let owner = file()?;
            let first = checked_index("index", generic_u64(g, "index")?)?;
            let last = checked_index("last_index", generic_u64(g, "last_index")?)?;
            checked_range(first, last, &format!("index={first} last_index={last}"))?;
            if name == "mm_filemap_get_pages" {
                Record::GetPages { owner, first, last }
            } else {
                Record::MapPages { owner, first, last }
            }
        }
        "mm_filemap_fault" => Record::Fault {
            owner: file()?,
            index: checked_index("index", generic_u64(g, "index")?)?,
        },
        "page_fault_user" => Record::UserFault {
            page: generic_u64(g, "address")? / PAGE_SIZE,
            write: generic_u64(g, "error_code")? & 2 != 0,
        },
        "mm_vmscan_lru_shrink_inactive" => Record::Reclaim {
            reclaimed: generic_u64(g, "nr_reclaimed").unwrap_or(0),
        },
        _ if name.starts_with("mm_vmscan_") => Record::Reclaim { reclaimed: 0 },
        _ => Record::Other,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A trace of `packets`, framed as `Trace`'s field 1.
    fn framed(packets: &[proto::TracePacket]) -> Vec<u8> {
        let mut out = Vec::new();
        for p in packets {
            prost::encoding::message::encode(1, p, &mut out);
        }
        out
    }

    fn added(time: u64, pid: u32, index: u64) -> Vec<u8> {
        let e = proto::FtraceEvent {
            timestamp: Some(time),
            pid: Some(pid),
            event: Some(proto::Event::MmFilemapAddToPageCache(
                proto::MmFilemapPage {
                    pfn: Some(1),
                    i_ino: Some(7),
                    index: Some(index),
                    // 8:1 in the user-space encoding.
                    s_dev: Some(8 << 8 | 1),
                },
            )),
        };
        e.encode_to_vec()
    }

    #[test]
    fn a_process_without_a_command_line_is_named_by_its_package() {
        let tree = proto::TracePacket {
            process_tree: Some(proto::ProcessTree {
                processes: vec![proto::Process {
                    pid: Some(1000),
                    ppid: Some(1),
                    cmdline: vec![],
                    uid: Some(10050),
                }],
                threads: vec![],
            }),
            ..Default::default()
        };
        let packages = proto::TracePacket {
            packages_list: Some(proto::PackagesList {
                packages: vec![proto::PackageInfo {
                    name: Some(b"com.example.gallery".to_vec()),
                    uid: Some(10050),
                }],
            }),
            ..Default::default()
        };
        // Two CPUs, the later bundle first: the events are applied in time order.
        let bundle = |cpu, events| proto::TracePacket {
            ftrace_events: Some(proto::FtraceEventBundle {
                cpu: Some(cpu),
                event: events,
                ..Default::default()
            }),
            ..Default::default()
        };
        let bytes = framed(&[
            tree,
            packages,
            bundle(1, vec![added(300, 1000, 2)]),
            bundle(0, vec![added(100, 1000, 0), added(200, 1000, 1)]),
        ]);
        let (t, report) = import_reader(
            Path::new("t.pftrace"),
            bytes.as_slice(),
            ImportOptions::default(),
        )
        .unwrap();
        assert_eq!(t.tables.processes[0].name, "com.example.gallery");
        assert_eq!(report.perfetto.as_ref().unwrap().named_by_packages, 1);
        let pages: Vec<u64> = t
            .accesses()
            .map(|e| t.tables.pages[e.page() as usize].index)
            .collect();
        assert_eq!(pages, [0, 1, 2]);
        let (major, minor, ino) = crate::trace::ftrace::file_of_owner(t.tables.pages[0].owner);
        assert_eq!((major, minor, ino), (8, 1, 7));
    }

    #[test]
    fn user_space_device_numbers_are_read_back_to_the_kernel_s() {
        // 253:6 and 259:300 (a minor above 255), as glibc's makedev encodes them.
        let makedev = |major: u64, minor: u64| {
            (major & 0xfff) << 8 | (major & !0xfff) << 32 | (minor & 0xff) | (minor & !0xff) << 12
        };
        for (major, minor) in [(253u32, 6u32), (259, 300), (8, 0), (511, (1 << 20) - 1)] {
            let owner = file_of(makedev(u64::from(major), u64::from(minor)), 42).unwrap();
            assert_eq!(
                crate::trace::ftrace::file_of_owner(owner),
                (major, minor, 42)
            );
        }
        assert!(file_of(makedev(4096, 0), 1).is_err());
    }
}
