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
//! Memory grows with what the packets read hold and the import keeps, never with a count
//! a file states: a packet's length is checked against [`MAX_PACKET_BYTES`] and read as it
//! arrives into one reused buffer; the packet is then read in place field by field
//! ([`walk`]) and dropped. An event waiting for the time sort keeps 16 bytes and its
//! fields (shared with its neighbour when alike, its names end to end in one buffer);
//! faults and event names are kept once each ([`MAX_LABELS`]), not as a message per
//! event; a packet or event that does not decode is counted as it is read.

mod framing;
pub mod proto;
mod walk;
pub mod write;

pub use framing::{is_packet_stream, MAX_COMPRESSED_DEPTH, MAX_INFLATED_BATCH};

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
use super::ftrace::{FtraceImporter, ImportOptions, ImportReport, INPUT_MARKERS, PAGE_SIZE};
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
    /// Packets read, those inside compressed batches included.
    pub packets: u64,
    /// `compressed_packets` fields inflated, and the bytes they inflated to.
    pub compressed_batches: u64,
    pub compressed_bytes: u64,
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

/// Bytes of a file's start that decide whether it is a packet stream or text.
const HEAD_BYTES: u64 = 64 << 10;

/// Whether the file at `path` is a Perfetto protobuf trace (plain, gzip or zstd) rather
/// than text: its first bytes, decompressed, parse as packets ([`is_packet_stream`]).
pub fn is_protobuf_file(path: &Path) -> Result<bool> {
    let file = crate::input::open(path)?;
    let mut reader = BufReader::with_capacity(1 << 16, file);
    let gzip = reader
        .fill_buf()
        .map_err(|e| Error::io(path, e))?
        .starts_with(&[0x1f, 0x8b]);
    let mut head = Vec::new();
    if gzip {
        flate2::read::MultiGzDecoder::new(reader)
            .take(HEAD_BYTES)
            .read_to_end(&mut head)
            .map_err(|e| Error::io(path, e))?;
    } else {
        drop(reader);
        let (input, _) = super::open::open_bytes_metered(path)?;
        input
            .take(HEAD_BYTES)
            .read_to_end(&mut head)
            .map_err(|e| Error::io(path, e))?;
    }
    Ok(is_packet_stream(&head, (head.len() as u64) < HEAD_BYTES))
}

/// Import what `--from perfetto` reads from a stream (standard input): a protobuf packet
/// stream, or else traceconv's text, plain or compressed with gzip or zstd, told apart by
/// parsing its first (decompressed) bytes. `name` names the stream in errors.
pub fn import_stream(
    name: &Path,
    input: impl Read + Send + 'static,
    options: ImportOptions,
) -> Result<(Trace, ImportReport)> {
    let mut input =
        super::open::decompressed_stream(name, BufReader::with_capacity(1 << 16, input))?;
    let mut head = Vec::new();
    (&mut input)
        .take(HEAD_BYTES)
        .read_to_end(&mut head)
        .map_err(|e| Error::io(name, e))?;
    let protobuf = is_packet_stream(&head, (head.len() as u64) < HEAD_BYTES);
    let input = BufReader::with_capacity(1 << 16, std::io::Cursor::new(head).chain(input));
    if protobuf {
        import(name, input, StoredBytes::default(), options)
    } else {
        let mut importer = FtraceImporter::new(name, options);
        importer.read(&mut { input })?;
        Ok(importer.finish())
    }
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

/// Largest pid Linux gives (`PID_MAX_LIMIT`, `include/linux/threads.h`, 64-bit): a
/// process tree entry or task name of a larger one is not a task's, and is not kept.
pub const MAX_PID: u32 = 1 << 22;

/// Distinct uids of the package lists kept: Android has a few hundred packages.
pub const MAX_PACKAGES: usize = 1 << 16;

/// Generic event layouts of one bundle, counted as one plus their fields: a kernel has
/// about two thousand event types of a few dozen fields at most, and a bundle describes
/// only those it holds. A descriptor past it is left out (its events are not decoded).
pub const MAX_LAYOUT_FIELDS: usize = 1 << 16;

/// Task names interned in one bundle's `compact_sched`: it names the tasks that ran on
/// one CPU while the bundle was filled. Names past it are not read.
pub const MAX_INTERNED_NAMES: usize = 1 << 16;

/// Distinct event names and faults kept as text: faults name the values they found, so
/// a hostile trace could make each event's differ. Past it they share one text.
pub const MAX_LABELS: usize = 1 << 12;

/// The text that stands for the names and faults past [`MAX_LABELS`].
const OTHER_LABELS: &str = "(more kinds of events and faults than the import lists)";

/// One ftrace event waiting for the events of the other CPUs, to be applied in time
/// order; what it does is in `Reading::kept`.
struct Pending {
    time_ns: u64,
    pid: u32,
    kept: u32,
}

/// An event as read: its name (a label), the packet it came in (for errors) and its
/// fields, or what was expected of it (a label) where they could not be read.
#[derive(Clone, Copy, PartialEq)]
struct Kept {
    packet: u32,
    name: u32,
    event: std::result::Result<Record<Text>, u32>,
}

/// Names read from the trace (task names, programs, packages), end to end.
#[derive(Default)]
struct Texts {
    all: String,
}

/// A name in [`Texts`].
#[derive(Clone, Copy, PartialEq, Eq)]
struct Text {
    start: u32,
    len: u32,
}

impl Texts {
    /// `None` past 4 GiB of names.
    fn add(&mut self, s: &str) -> Option<Text> {
        let start = u32::try_from(self.all.len()).ok()?;
        let len = u32::try_from(s.len()).ok()?;
        start.checked_add(len)?;
        self.all.push_str(s);
        Some(Text { start, len })
    }

    fn get(&self, t: Text) -> &str {
        &self.all[t.start as usize..(t.start + t.len) as usize]
    }
}

/// Event names and faults, each kept once, at most [`MAX_LABELS`].
#[derive(Default)]
struct Labels {
    ids: HashMap<String, u32>,
    all: Vec<String>,
}

impl Labels {
    fn id(&mut self, s: &str) -> u32 {
        if let Some(&id) = self.ids.get(s) {
            return id;
        }
        let s = if self.all.len() + 1 < MAX_LABELS {
            s
        } else {
            OTHER_LABELS
        };
        if let Some(&id) = self.ids.get(s) {
            return id;
        }
        let id = self.all.len() as u32;
        self.all.push(s.to_string());
        self.ids.insert(s.to_string(), id);
        id
    }

    fn get(&self, id: u32) -> &str {
        &self.all[id as usize]
    }
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
    let mut importer = FtraceImporter::new(name, options);
    let mut reading = Reading::new(name);
    let mut packet = Vec::new();
    let mut offset = 0u64;
    let mut inflated = framing::Inflated::default();
    while let Some(at) = next_packet(name, &mut input, &mut offset, &mut packet)? {
        reading.packet_or_batches(&packet, at, offset, &mut inflated, &mut importer, 0)?;
    }
    reading.report_faults(&mut importer)?;
    // The buffer may have grown to the largest packet: give it back before the events
    // are applied.
    drop(packet);
    let Reading {
        mut stats,
        mut pending,
        kept,
        packets,
        labels,
        texts,
        tree_names,
        tree_threads,
        packages,
        sched_names,
        ..
    } = reading;
    stats.bytes = offset;
    importer.set_bytes_read(offset, stored);

    // The processes running when the trace began, and their threads.
    let mut named: Vec<(u32, String)> = Vec::new();
    for (&pid, &(program, uid)) in &tree_names {
        let program = texts.get(program);
        if !program.is_empty() {
            named.push((pid, program.to_string()));
            stats.named_by_process_tree += 1;
        } else if let Some(Some(package)) = uid
            .and_then(|u| u64::try_from(u).ok())
            .and_then(|u| packages.get(&u))
        {
            named.push((pid, texts.get(*package).to_string()));
            stats.named_by_packages += 1;
        }
    }
    for (&pid, &comm) in &sched_names {
        if !tree_names.contains_key(&pid) && !tree_threads.contains_key(&pid) {
            named.push((pid, texts.get(comm).to_string()));
            stats.named_by_sched += 1;
        }
    }
    named.sort();
    for (pid, name) in &named {
        importer.named_process(*pid, name);
    }
    let mut threads: Vec<(u32, u32)> = tree_threads.into_iter().collect();
    threads.sort_unstable();
    for (tid, tgid) in threads {
        importer.thread_of(tid, tgid);
    }

    // Every CPU's events, in time order.
    pending.sort_by_key(|p| p.time_ns);
    for p in &pending {
        let kept = &kept[p.kept as usize];
        let at = Position::Byte(packets[kept.packet as usize]);
        let event = labels.get(kept.name);
        let record = match kept.event {
            Ok(record) => record.map_names(|name| texts.get(name)),
            Err(expected) => {
                importer.malformed_record(event, labels.get(expected), at)?;
                continue;
            }
        };
        let head = Head {
            comm: None,
            pid: p.pid,
            tgid: None,
            time_ns: p.time_ns,
            event,
            payload: "",
        };
        importer.push_record(&head, record, at)?;
    }
    let (trace, mut report) = importer.finish();
    report.perfetto = Some(stats);
    Ok((trace, report))
}

/// What the packets read so far hold, for the end of the import: each packet is read
/// in place and dropped, and what it leaves here grows with the events and names it
/// held, never with a count it states.
struct Reading<'p> {
    path: &'p Path,
    stats: PerfettoStats,
    pending: Vec<Pending>,
    kept: Vec<Kept>,
    /// Events without fields that cannot fail (undecoded, `sched_switch`, markers that
    /// are not input) share one `kept` entry per name: by (name, marker).
    shared: HashMap<(u32, bool), u32>,
    /// Byte offsets of the packets that `kept` names.
    packets: Vec<u64>,
    /// Faults alike in a row not reported yet: what was expected, where, how many.
    faults: Option<(String, u64, u64)>,
    labels: Labels,
    texts: Texts,
    /// [`INPUT_MARKERS`] in `texts`: what an input marker's record keeps of its slice.
    input_markers: [Text; INPUT_MARKERS.len()],
    /// From the process tree: pid -> command line's program and uid.
    tree_names: HashMap<u32, (Text, Option<i32>)>,
    /// From the process tree: tid -> tgid (the lowest, if it says several).
    tree_threads: HashMap<u32, u32>,
    /// uid -> package name; `None` when several share the uid.
    packages: HashMap<u64, Option<Text>>,
    /// From the scheduler: tid -> comm, the first seen.
    sched_names: HashMap<u32, Text>,
}

/// A pid field of a message (`int32`), if it is one.
fn pid(v: Option<u64>) -> Option<u32> {
    u32::try_from(v? as i32).ok().filter(|&p| p <= MAX_PID)
}

impl<'p> Reading<'p> {
    fn new(path: &'p Path) -> Self {
        let mut texts = Texts::default();
        let input_markers = INPUT_MARKERS.map(|m| texts.add(m).expect("a few names fit"));
        Reading {
            path,
            stats: PerfettoStats::default(),
            pending: Vec::new(),
            kept: Vec::new(),
            shared: HashMap::new(),
            packets: Vec::new(),
            faults: None,
            labels: Labels::default(),
            texts,
            input_markers,
            tree_names: HashMap::new(),
            tree_threads: HashMap::new(),
            packages: HashMap::new(),
            sched_names: HashMap::new(),
        }
    }

    fn text(&mut self, s: &str, at: u64) -> Result<Text> {
        self.texts
            .add(s)
            .ok_or_else(|| too_much(self.path, at, "more than 4 GiB of task and package names"))
    }

    /// The first name of task `tid` the scheduler gives.
    fn sched_name(&mut self, tid: Option<u32>, comm: &[u8], at: u64) -> Result<()> {
        let Some(tid) = tid.filter(|&t| t != 0) else {
            return Ok(());
        };
        if !self.sched_names.contains_key(&tid) {
            let comm = self.text(&String::from_utf8_lossy(comm), at)?;
            self.sched_names.insert(tid, comm);
        }
        Ok(())
    }

    /// Read the packet at byte `at`: one that is not protobuf is malformed, as a whole.
    fn packet(&mut self, packet: &[u8], at: u64, importer: &mut FtraceImporter) -> Result<()> {
        self.stats.packets += 1;
        if let Err(e) = check_packet(packet) {
            let expected = format!("a TracePacket that does not decode ({e})");
            return self.fault(&expected, at, importer);
        }
        let trees = walk::bytes(packet, 2);
        let lists = walk::bytes(packet, 47);
        let bundles = walk::bytes(packet, 1);
        if bundles.clone().next().is_some()
            || trees.clone().next().is_some()
            || lists.clone().next().is_some()
        {
            self.stats.packets_used += 1;
        } else {
            self.stats.packets_other += 1;
        }
        for process in trees.clone().flat_map(|t| walk::bytes(t, 1)) {
            self.stats.process_tree_processes += 1;
            let Some(pid) = pid(walk::last_varint(process, 1)) else {
                continue;
            };
            if self.tree_names.contains_key(&pid) {
                continue;
            }
            let program = walk::bytes(process, 3)
                .next()
                .map(|c| base_name(&String::from_utf8_lossy(c)).to_string())
                .unwrap_or_default();
            let uid = walk::last_varint(process, 5).map(|u| u as i32);
            let program = self.text(&program, at)?;
            self.tree_names.insert(pid, (program, uid));
        }
        for thread in trees.flat_map(|t| walk::bytes(t, 2)) {
            self.stats.process_tree_threads += 1;
            let Ok(t) = proto::Thread::decode(thread) else {
                continue;
            };
            let tid = pid(t.tid.map(|t| t as u64));
            let tgid = pid(t.tgid.map(|t| t as u64));
            if let (Some(tid), Some(tgid)) = (tid, tgid) {
                if tid != tgid && tgid != 0 {
                    let lowest = self.tree_threads.entry(tid).or_insert(tgid);
                    *lowest = (*lowest).min(tgid);
                }
            }
            if let (Some(tid), Some(name)) = (tid, t.name) {
                if !self.sched_names.contains_key(&tid) {
                    let name = self.text(&String::from_utf8_lossy(&name), at)?;
                    self.sched_names.insert(tid, name);
                }
            }
        }
        for package in lists.flat_map(|l| walk::bytes(l, 1)) {
            self.stats.packages += 1;
            let Ok(p) = proto::PackageInfo::decode(package) else {
                continue;
            };
            let (Some(name), Some(uid)) = (p.name, p.uid) else {
                continue;
            };
            let name = String::from_utf8_lossy(&name);
            let room = self.packages.len() < MAX_PACKAGES;
            match self.packages.get_mut(&uid) {
                Some(known) if known.is_some_and(|k| self.texts.get(k) != name) => *known = None,
                Some(_) => {}
                None if room => {
                    let name = self.text(&name, at)?;
                    self.packages.insert(uid, Some(name));
                }
                None => {}
            }
        }
        if bundles.clone().next().is_some() {
            self.bundle(bundles, at, importer)?;
        }
        Ok(())
    }

    /// The ftrace events of a packet: `chunks` are its `ftrace_events` fields, one
    /// bundle (protobuf merges a message given twice).
    fn bundle<'a>(
        &mut self,
        chunks: impl Iterator<Item = &'a [u8]> + Clone,
        at: u64,
        importer: &mut FtraceImporter,
    ) -> Result<()> {
        self.stats.ftrace_bundles += 1;
        let lost = chunks
            .clone()
            .filter_map(|b| walk::last_varint(b, 3))
            .last();
        if lost.is_some_and(|l| l != 0) {
            self.stats.bundles_with_lost_events += 1;
        }
        let compact = chunks.clone().flat_map(|b| walk::bytes(b, 4));
        let interned: Vec<&[u8]> = compact
            .clone()
            .flat_map(|c| walk::bytes(c, 5))
            .take(MAX_INTERNED_NAMES)
            .collect();
        let switches = compact.clone().flat_map(|c| walk::varints(c, 3));
        self.stats.compact_sched_switches += switches.clone().count() as u64;
        let pairs = switches
            .zip(compact.clone().flat_map(|c| walk::varints(c, 6)))
            .chain(
                compact
                    .clone()
                    .flat_map(|c| walk::varints(c, 8))
                    .zip(compact.flat_map(|c| walk::varints(c, 11))),
            );
        for (tid, index) in pairs {
            if let Some(comm) = interned.get(index as u32 as usize) {
                self.sched_name(pid(Some(tid)), comm, at)?;
            }
        }
        let layouts = dense_layouts(chunks.clone().flat_map(|b| walk::bytes(b, 11)));
        for raw in chunks.flat_map(|b| walk::bytes(b, 2)) {
            self.stats.ftrace_events += 1;
            let e = match decode_event(raw, &layouts) {
                Ok(e) => e,
                Err(expected) => {
                    self.fault(&expected, at, importer)?;
                    continue;
                }
            };
            let Some(time_ns) = e.timestamp else {
                self.fault("an ftrace event without a timestamp", at, importer)?;
                continue;
            };
            if let Some(proto::Event::SchedSwitch(s)) = &e.event {
                if let (Some(tid), Some(comm)) = (s.next_pid, &s.next_comm) {
                    self.sched_name(pid(Some(tid as u64)), comm, at)?;
                }
            }
            if e.event.is_none() {
                self.stats.events_not_decoded += 1;
            }
            let kept = self.keep(record_of(e.event.as_ref()), at)?;
            self.pending.push(Pending {
                time_ns,
                pid: e.pid.unwrap_or(0),
                kept,
            });
        }
        Ok(())
    }

    /// A packet or event at `at` that does not decode: counted with those alike just
    /// before it, reported when another comes ([`Reading::report_faults`]).
    fn fault(&mut self, expected: &str, at: u64, importer: &mut FtraceImporter) -> Result<()> {
        match &mut self.faults {
            Some((known, known_at, n)) if *known == expected && *known_at == at => *n += 1,
            _ => {
                self.report_faults(importer)?;
                self.faults = Some((expected.to_string(), at, 1));
            }
        }
        Ok(())
    }

    /// Report the faults counted by [`Reading::fault`], as malformed "packet" records.
    fn report_faults(&mut self, importer: &mut FtraceImporter) -> Result<()> {
        let Some((expected, at, n)) = self.faults.take() else {
            return Ok(());
        };
        importer.malformed_records("packet", &expected, Position::Byte(at), n)
    }

    /// Keep what an event read in the packet at `at` does; its index in `kept`.
    fn keep(&mut self, of: RecordOf, at: u64) -> Result<u32> {
        let (name, event) = match of {
            Ok((name, record)) => {
                let event = self.kept_record(record, at)?;
                (name, Ok(event))
            }
            Err((name, expected)) => (name, Err(self.labels.id(&expected))),
        };
        let name = self.labels.id(&name);
        let shared = match event {
            Ok(Record::Other) => Some(false),
            Ok(Record::Marker(None)) => Some(true),
            _ => None,
        };
        if let Some(&index) = shared.and_then(|marker| self.shared.get(&(name, marker))) {
            return Ok(index);
        }
        let kept = Kept {
            packet: self.packet_index(at)?,
            name,
            event,
        };
        if shared.is_none() && self.kept.last() == Some(&kept) {
            // Events alike in one packet (a fault repeated) share their entry.
            return Ok(self.kept.len() as u32 - 1);
        }
        let index = u32::try_from(self.kept.len())
            .ok()
            .filter(|&i| i < u32::MAX)
            .ok_or_else(|| too_much(self.path, at, "more than 2^32 - 1 kinds of events"))?;
        self.kept.push(kept);
        if let Some(marker) = shared {
            self.shared.insert((name, marker), index);
        }
        Ok(index)
    }

    /// The index in `packets` of the packet at `at`, the latest.
    fn packet_index(&mut self, at: u64) -> Result<u32> {
        if self.packets.last() != Some(&at) {
            self.packets.push(at);
        }
        u32::try_from(self.packets.len() - 1)
            .map_err(|_| too_much(self.path, at, "more than 2^32 packets with events"))
    }

    /// The record kept of `record`, its names added to `texts`. Of a trace marker only the
    /// start of an input slice is used: it is kept as that start, other markers without
    /// their slice.
    fn kept_record(&mut self, record: Record<&str>, at: u64) -> Result<Record<Text>> {
        if let Record::Marker(begin) = record {
            let input = begin.and_then(|(pid, slice)| {
                let marker = INPUT_MARKERS.iter().position(|m| slice.starts_with(m))?;
                Some((pid, self.input_markers[marker]))
            });
            return Ok(Record::Marker(input));
        }
        record.try_map_names(|name| self.text(name, at))
    }
}

/// The error for a trace past one of the import's limits.
fn too_much(path: &Path, at: u64, what: &str) -> Error {
    Error::format(
        path,
        Position::Byte(at),
        format!("{what}: expected a Perfetto trace of a real capture"),
    )
}

/// Check a packet's structure as far as the import reads it, before anything of it is
/// used: a packet that is not protobuf is left out whole.
fn check_packet(packet: &[u8]) -> std::result::Result<(), String> {
    use walk::Kind::{Bytes, Varint, Varints};
    let thread = |_, b: &[u8]| {
        proto::Thread::decode(b)
            .map(drop)
            .map_err(|e| format!("Thread: {e}"))
    };
    let process = |_, b: &[u8]| {
        walk::check(
            b,
            "Process",
            &[(1, Varint), (2, Varint), (3, Bytes), (5, Varint)],
            |_, _| Ok(()),
        )
    };
    let package = |_, b: &[u8]| {
        proto::PackageInfo::decode(b)
            .map(drop)
            .map_err(|e| format!("PackageInfo: {e}"))
    };
    let compact = |_, b: &[u8]| {
        let known = [
            (5, Bytes),
            (3, Varints),
            (6, Varints),
            (8, Varints),
            (11, Varints),
        ];
        walk::check(b, "CompactSched", &known, |_, _| Ok(()))
    };
    let bundle = |_, b: &[u8]| {
        let known = [
            (1, Varint),
            (2, Bytes),
            (3, Varint),
            (4, Bytes),
            (11, Bytes),
        ];
        walk::check(b, "FtraceEventBundle", &known, |n, inner| match n {
            4 => compact(n, inner),
            11 => proto::GenericEventDescriptor::decode(inner)
                .map(drop)
                .map_err(|e| format!("GenericEventDescriptor: {e}")),
            _ => Ok(()),
        })
    };
    let known = [(1, Bytes), (2, Bytes), (8, Varint), (47, Bytes)];
    walk::check(packet, "TracePacket", &known, |n, inner| match n {
        1 => bundle(n, inner),
        2 => walk::check(inner, "ProcessTree", &[(1, Bytes), (2, Bytes)], |n, b| {
            if n == 1 {
                process(n, b)
            } else {
                thread(n, b)
            }
        }),
        47 => walk::check(inner, "PackagesList", &[(1, Bytes)], package),
        _ => Ok(()),
    })
}

/// A densely encoded generic event's name and its fields by number (name, signed).
struct DenseLayout {
    name: String,
    fields: HashMap<u32, (String, bool)>,
}

/// The layouts of a bundle's densely encoded generic events, by field number, from its
/// descriptors, at most [`MAX_LAYOUT_FIELDS`] in all.
fn dense_layouts<'a>(descriptors: impl Iterator<Item = &'a [u8]>) -> HashMap<u32, DenseLayout> {
    let mut out = HashMap::new();
    let mut room = MAX_LAYOUT_FIELDS;
    for d in descriptors {
        let Ok(d) = proto::GenericEventDescriptor::decode(d) else {
            continue;
        };
        let (Some(id), Some(bytes)) = (d.field_id, &d.event_descriptor) else {
            continue;
        };
        let Ok(id) = u32::try_from(id) else {
            continue;
        };
        let mut fields = Vec::new();
        let checked = walk::check(
            bytes,
            "DescriptorProto",
            &[(1, walk::Kind::Bytes), (2, walk::Kind::Bytes)],
            |n, b| {
                if n == 2 {
                    fields.push(proto::FieldDescriptorProto::decode(b).map_err(|e| e.to_string())?);
                }
                Ok(())
            },
        );
        if checked.is_err() || fields.len() >= room {
            continue;
        }
        room -= fields.len() + 1;
        let fields = fields
            .iter()
            .filter_map(|f| {
                let number = u32::try_from(f.number?).ok()?;
                let name = String::from_utf8_lossy(f.name.as_deref()?).into_owned();
                // int64, int32, sint32, sint64 are signed.
                let signed = matches!(f.r#type, Some(3 | 5 | 17 | 18));
                Some((number, (name, signed)))
            })
            .collect();
        let name = walk::bytes(bytes, 1).last().unwrap_or_default();
        let name = String::from_utf8_lossy(name).into_owned();
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

type RecordOf<'a> = std::result::Result<(String, Record<&'a str>), (String, String)>;

/// The event's name and its record, or its name and what was expected of it.
fn record_of(event: Option<&proto::Event>) -> RecordOf<'_> {
    use proto::Event as E;
    let Some(event) = event else {
        return Ok(("(an event type not decoded)".into(), Record::Other));
    };
    fn named<'a>(name: &str, r: std::result::Result<Record<&'a str>, String>) -> RecordOf<'a> {
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

fn new_task(t: &proto::TaskNewtask) -> Expected<Record<&str>> {
    let pid = pid_of(t.pid, "pid")?;
    let flags = t.clone_flags.ok_or("expected clone_flags")?;
    Ok(Record::NewTask(NewTask {
        pid,
        thread: flags & CLONE_THREAD != 0,
        adj: adj_of(t.oom_score_adj)?,
        comm: utf8(&t.comm),
    }))
}

fn rename(t: &proto::TaskRename) -> Expected<Record<&str>> {
    Ok(Record::Rename {
        pid: pid_of(t.pid, "pid")?,
        newcomm: utf8(&t.newcomm).ok_or("expected newcomm (UTF-8)")?,
    })
}

fn exec(x: &proto::SchedProcessExec) -> Expected<Record<&str>> {
    let filename = utf8(&x.filename).ok_or("expected filename (UTF-8)")?;
    Ok(Record::Exec {
        pid: pid_of(x.pid, "pid")?,
        name: base_name(filename),
    })
}

fn oom_score_adj(o: &proto::OomScoreAdjUpdate) -> Expected<Record<&str>> {
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
fn page_cache(m: &proto::MmFilemapPage, added: bool) -> std::result::Result<Record<&str>, String> {
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
fn generic_record<'a>(
    name: &str,
    g: &proto::Generic,
) -> std::result::Result<Record<&'a str>, String> {
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
    fn faults_and_names_are_kept_once_and_bounded() {
        use crate::trace::ftrace::MAX_SKIP_REASONS;
        // Every event a fault of its own (its pid in the fault), and every one twice.
        let exit = |time: u64, pid: i32| {
            proto::FtraceEvent {
                timestamp: Some(time),
                pid: Some(1),
                event: Some(proto::Event::SchedProcessExit(proto::SchedProcessExit {
                    comm: None,
                    pid: Some(pid),
                    tgid: None,
                })),
            }
            .encode_to_vec()
        };
        let n = 2 * MAX_LABELS as i32;
        let events = (1..=n).flat_map(|i| [exit(i as u64, -i), exit(i as u64, -i)]);
        let bundle = proto::TracePacket {
            ftrace_events: Some(proto::FtraceEventBundle {
                event: events.collect(),
                ..Default::default()
            }),
            ..Default::default()
        };
        let (_, report) = import_reader(
            Path::new("t.pftrace"),
            framed(&[bundle]).as_slice(),
            ImportOptions::default(),
        )
        .unwrap();
        assert!(report.skipped.len() <= MAX_SKIP_REASONS + 1);
        let malformed: u64 = report.skipped.values().map(|s| s.lines).sum();
        assert_eq!(malformed, 2 * n as u64);
        assert!(report
            .skipped
            .keys()
            .any(|k| k.contains("sched_process_exit: pid=-1, expected a pid")));
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
