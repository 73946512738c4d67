//! Importing ftrace text: the output of `trace-cmd report`, of
//! `/sys/kernel/tracing/trace` and `trace_pipe`, and of Android's atrace/systrace.
//!
//! Every line of such a capture has the same head, then an event-specific payload:
//!
//! ```text
//!             bash-1234    [001] d..2. 12345.678901: mm_filemap_fault: dev=8:1 ino=1a ofs=4096
//!             bash-1234    (   1234) [001] .....  12345.678901: ...     (option record-tgid)
//!            <...>-3493    (-----) [004] ....  14594.815353: ...        (Android: task, TGID unknown)
//! ```
//!
//! [`FtraceImporter`] takes lines one at a time and builds the trace model:
//!
//! - page cache (`include/trace/events/filemap.h`): `mm_filemap_add_to_page_cache` in its
//!   old layout (`dev M:m ino %lx page=%p pfn=%lu ofs=%lu`) and its folio layout
//!   (`dev M:m ino %lx pfn=0x%lx ofs=%lu order=%u`, 2^order pages); where the kernel has
//!   them, the read path `mm_filemap_get_pages` and `mm_filemap_map_pages`
//!   (`ofs=FIRST-LAST` in bytes) and `mm_filemap_fault` (`ofs=%lld`). A file page is keyed
//!   by device and inode (see [`file_owner`]) and its index `ofs / 4096`;
//! - anonymous accesses: `page_fault_user` (`arch/x86/include/asm/trace/exceptions.h`;
//!   bit 1 of `error_code` is a write);
//! - importance: `oom_score_adj_update` (`include/trace/events/oom.h`) and
//!   `task_newtask`'s inherited `oom_score_adj` (`include/trace/events/task.h`);
//! - process life: `sched_process_fork`, `sched_process_exit` (`group_dead=` on recent
//!   kernels), `task_newtask` (`CLONE_THREAD` in `clone_flags` makes a thread),
//!   `task_rename`;
//! - user input: atrace markers `tracing_mark_write: B|PID|deliverInputEvent...`;
//! - counted only, to compare with the simulation: `mm_filemap_delete_from_page_cache`
//!   (the kernel's evictions) and `mm_vmscan_*` (reclaim).
//!
//! A process of the trace is a thread group: a thread's events go to its TGID when the
//! line says it (`record-tgid`) or `task_newtask` told it. Times are relative to the first
//! event. Lines that are not events are counted by reason; a line that should be an event
//! and cannot be read is malformed: counted with its line number, or a fatal error with
//! [`ImportOptions::strict`].
//!
//! Which events make the accesses ([`AccessSource`]): the pages added to the cache are its
//! misses only, so when the read-path events are present (Linux 6.x) they give the
//! accesses, hits included, and an added page counts as an access only if no read-path
//! event ever reached it (a page written, or read ahead and never read).
//!
//! One `read()` is several `mm_filemap_get_pages` events (`mm/filemap.c`, Linux 6.11 on):
//! `filemap_read()` takes the cached folios in batches of at most 31 (a `folio_batch`),
//! calling `filemap_get_pages()` once per batch, and each call prints the range from the
//! current position to the end of the whole request. So an event of a task that follows
//! its previous one on the same file, with the same last page and a first page inside the
//! previous range, continues that read: the previous batch read the pages from its own
//! first page up to the page before the new one. The last batch of a read is not followed
//! by another event, so its end is not printed: it read up to the request's last page
//! unless the file ended first, and the trace does not carry the file's size. The importer
//! counts it up to the request's last page or the highest page of the file the capture
//! shows to exist, whichever is lower ([`FtraceImporter::finish`]; see `docs/real-traces.md`).

use std::collections::{BTreeMap, HashMap};
use std::io::BufRead;
use std::path::{Path, PathBuf};
use std::str::FromStr;

use serde::Serialize;

use super::{Event, EventKind, Interner, PageId, PageKey, ProcId, Trace, ADJ_FOREGROUND};
use crate::{Error, Position, Result};

/// Bytes per page: the filemap events give byte offsets (`index << PAGE_SHIFT`).
pub const PAGE_SIZE: u64 = 4096;

/// Folios `filemap_read()` takes from the page cache per `filemap_get_pages()` call: the
/// size of a `struct folio_batch` (`PAGEVEC_SIZE`, later `FOLIO_BATCH_SIZE`, 31 in the
/// kernels that have `mm_filemap_get_pages`, 6.11 on). Seen on 6.18: a 4 MiB read of
/// order-0 folios came in batches of 31 pages.
pub const READ_BATCH_FOLIOS: u64 = 31;

/// Most pages one event line may name: a `read()` moves at most `MAX_RW_COUNT` bytes
/// (`INT_MAX & PAGE_MASK`, `include/linux/fs.h`), just under 2^19 pages, and the largest
/// folio read here has order 19. A line asking for more is malformed, not a huge read.
pub const MAX_EVENT_PAGES: u64 = 1 << 19;

/// Highest page index a line may give in pages (Perfetto's `index=`, `last_index=`): the
/// page of the highest byte offset the kernel's `ofs=` can give, so both spellings name
/// the same pages (and a page index never overflows as a byte offset).
pub const MAX_PAGE_INDEX: u64 = u64::MAX / PAGE_SIZE;

/// `oom_score_adj` given to a process marked background: the bottom of Android's cached
/// range (ActivityManager `ProcessList.CACHED_APP_MIN_ADJ`).
pub const ADJ_MARKED_BACKGROUND: i16 = 900;

/// `CLONE_THREAD` (`include/uapi/linux/sched.h`): the new task joins its parent's group.
const CLONE_THREAD: u64 = 0x0001_0000;

/// Input markers of atrace: a `B|PID|NAME` slice whose name starts with one of these is
/// a user input delivered to process PID (`ViewRootImpl` and `InputConsumer` on Android).
pub const INPUT_MARKERS: [&str; 3] = ["deliverInputEvent", "InputConsumer", "processInputEvent"];

/// Input markers of one process closer than this to its previous one belong to the same
/// gesture (a swipe delivers an event every frame), which is one interaction.
pub const INPUT_GESTURE_GAP_NS: u64 = 100_000_000;

/// Line numbers kept per skip reason.
const FIRST_LINES_KEPT: usize = 5;

/// Which events become page accesses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum AccessSource {
    /// `read-path` if the capture has any read-path event, else `added`.
    #[default]
    Auto,
    /// Every page added to the cache is an access (misses only).
    Added,
    /// The read path (`get_pages`, `map_pages`, `fault`), plus added pages it never
    /// reached.
    ReadPath,
}

impl AccessSource {
    pub fn name(self) -> &'static str {
        match self {
            AccessSource::Auto => "auto",
            AccessSource::Added => "added",
            AccessSource::ReadPath => "read-path",
        }
    }
}

impl FromStr for AccessSource {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        [
            AccessSource::Auto,
            AccessSource::Added,
            AccessSource::ReadPath,
        ]
        .into_iter()
        .find(|a| a.name() == s)
        .ok_or_else(|| Error::Unknown {
            what: "access source",
            name: s.to_string(),
            known: vec!["auto".into(), "added".into(), "read-path".into()],
        })
    }
}

/// A process named on the command line: by pid, or by name (`comm`, compared on the
/// kernel's 15 characters).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ProcessMatch {
    Pid(u32),
    Comm(String),
}

impl ProcessMatch {
    fn matches(&self, pid: u32, name: &str) -> bool {
        match self {
            ProcessMatch::Pid(p) => *p == pid,
            ProcessMatch::Comm(c) => !name.is_empty() && truncate_comm(c) == truncate_comm(name),
        }
    }
}

impl FromStr for ProcessMatch {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        if s.is_empty() {
            return Err(Error::config("process", "give a pid or a process name"));
        }
        Ok(match s.parse::<u32>() {
            Ok(pid) => ProcessMatch::Pid(pid),
            Err(_) => ProcessMatch::Comm(s.to_string()),
        })
    }
}

/// `comm` as the kernel keeps it: `TASK_COMM_LEN` 16 bytes with the terminating NUL.
fn truncate_comm(name: &str) -> &str {
    let mut end = name.len().min(15);
    while !name.is_char_boundary(end) {
        end -= 1;
    }
    &name[..end]
}

/// How to import.
#[derive(Debug, Clone, Default)]
pub struct ImportOptions {
    /// A malformed line is a fatal error instead of being skipped.
    pub strict: bool,
    pub accesses: AccessSource,
    /// Processes (and their descendants) pinned to the foreground, `oom_score_adj` 0.
    pub foreground: Vec<ProcessMatch>,
    /// Processes (and their descendants) pinned to the background.
    pub background: Vec<ProcessMatch>,
    /// Tasks whose events are dropped (the capturing process itself). A process one of
    /// them starts is not dropped: its `task_newtask` line still gives it its name and
    /// inherited `oom_score_adj`.
    pub exclude_pids: Vec<u32>,
    /// Keep only the processes marked foreground or background (and those they start),
    /// leaving out the rest of the system.
    pub marked_only: bool,
    /// The text was written by Perfetto (`traceconv systrace`, trace_processor's
    /// `to_ftrace`): fields Perfetto has no printk format for are printed in decimal
    /// (`clone_flags`, `address`, `error_code`), and a task without a name is `<unknown>`.
    pub perfetto: bool,
}

/// Lines skipped for one reason.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Skipped {
    pub lines: u64,
    /// The first few line numbers (1-based).
    pub first_lines: Vec<u64>,
}

/// One process of the imported trace.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ImportedProcess {
    pub pid: u32,
    pub name: String,
    pub threads: u32,
    pub accesses: u64,
    /// Importance pinned by a `--foreground`/`--background` mark.
    pub marked: Option<i16>,
}

/// What an import found.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ImportReport {
    pub lines: u64,
    /// Lines used, by ftrace event name.
    pub used: BTreeMap<String, u64>,
    /// Event lines of events the trace model does not use, by name.
    pub ignored: BTreeMap<String, u64>,
    /// Lines that are not events, or malformed, by reason.
    pub skipped: BTreeMap<String, Skipped>,
    /// Events the kernel dropped (`CPU:N [LOST M EVENTS]`).
    pub lost_events: u64,
    /// Which events made the accesses (`added` or `read-path`).
    pub accesses_from: String,
    pub file_accesses: u64,
    pub anon_accesses: u64,
    pub importance_changes: u64,
    pub starts: u64,
    pub exits: u64,
    pub inputs: u64,
    /// Pages the kernel added to and deleted from the page cache (its misses and
    /// evictions, for comparison with a simulation).
    pub pages_added: u64,
    pub pages_deleted: u64,
    /// `nr_reclaimed` summed over `mm_vmscan_lru_shrink_inactive`.
    pub pages_reclaimed: u64,
    /// `read()` calls rebuilt from `mm_filemap_get_pages` events (each one or more
    /// events, one per batch of folios).
    pub reads: u64,
    /// Pages that reads asked for past the highest page their file is known to have,
    /// not counted as accesses (a read reaching past the end of its file).
    pub read_pages_past_known_end: u64,
    /// Distinct pages and files of the trace.
    pub pages: u64,
    pub files: u64,
    /// Threads folded into their process.
    pub threads: u64,
    /// Times earlier than the previous event's (merged per-CPU streams), moved up to it.
    pub reordered_times: u64,
    pub time_span_ns: u64,
    pub processes: Vec<ImportedProcess>,
}

impl ImportReport {
    fn skip(&mut self, reason: &str, line: u64) {
        if !self.skipped.contains_key(reason) {
            self.skipped.insert(reason.to_string(), Skipped::default());
        }
        let Some(entry) = self.skipped.get_mut(reason) else {
            return;
        };
        entry.lines += 1;
        if entry.first_lines.len() < FIRST_LINES_KEPT {
            entry.first_lines.push(line);
        }
    }
}

impl std::fmt::Display for ImportReport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        writeln!(f, "lines                {}", self.lines)?;
        writeln!(
            f,
            "time span            {:.3} s",
            self.time_span_ns as f64 / 1e9
        )?;
        writeln!(f, "accesses from        {}", self.accesses_from)?;
        writeln!(
            f,
            "events               {} file accesses, {} anonymous accesses, {} importance changes, {} starts, {} exits, {} inputs",
            self.file_accesses, self.anon_accesses, self.importance_changes, self.starts, self.exits, self.inputs
        )?;
        writeln!(
            f,
            "pages                {} distinct in {} files; in the whole capture the kernel added {}, deleted {}, reclaimed {}",
            self.pages, self.files, self.pages_added, self.pages_deleted, self.pages_reclaimed
        )?;
        if self.reads > 0 {
            writeln!(
                f,
                "reads                {} read() calls from mm_filemap_get_pages; {} pages asked for past the known end of their file left out",
                self.reads, self.read_pages_past_known_end
            )?;
        }
        writeln!(
            f,
            "processes            {} ({} threads folded into them)",
            self.processes.len(),
            self.threads
        )?;
        let mut by_accesses: Vec<&ImportedProcess> = self.processes.iter().collect();
        by_accesses.sort_by(|a, b| b.accesses.cmp(&a.accesses).then(a.pid.cmp(&b.pid)));
        for p in by_accesses.iter().take(10) {
            let mark = match p.marked {
                Some(ADJ_FOREGROUND) => " [foreground]",
                Some(_) => " [background]",
                None => "",
            };
            writeln!(
                f,
                "  {:>7} {:<16} {:>10} accesses{}",
                p.pid, p.name, p.accesses, mark
            )?;
        }
        if self.processes.len() > 10 {
            writeln!(f, "  ... and {} more", self.processes.len() - 10)?;
        }
        writeln!(f, "used                 (ftrace event: lines)")?;
        for (name, n) in &self.used {
            writeln!(f, "  {name:<40} {n}")?;
        }
        if !self.ignored.is_empty() {
            writeln!(f, "ignored events       (not in the trace model)")?;
            for (name, n) in &self.ignored {
                writeln!(f, "  {name:<40} {n}")?;
            }
        }
        if self.lost_events > 0 {
            writeln!(
                f,
                "LOST                 {} events dropped by the kernel (ring buffer full)",
                self.lost_events
            )?;
        }
        if self.reordered_times > 0 {
            writeln!(
                f,
                "reordered times      {} events earlier than the one before",
                self.reordered_times
            )?;
        }
        if !self.skipped.is_empty() {
            writeln!(f, "skipped lines")?;
            for (reason, s) in &self.skipped {
                let lines: Vec<String> = s.first_lines.iter().map(|l| l.to_string()).collect();
                writeln!(
                    f,
                    "  {:>8}  {} ({} {}{})",
                    s.lines,
                    reason,
                    if s.lines == 1 { "line" } else { "lines" },
                    lines.join(", "),
                    if s.lines as usize > s.first_lines.len() {
                        ", ..."
                    } else {
                        ""
                    }
                )?;
            }
        }
        Ok(())
    }
}

/// Which event an access came from, to choose the accesses at the end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Origin {
    Other,
    Added,
    ReadPath,
    /// One batch of a `read()` (an `mm_filemap_get_pages` event): index into
    /// `FtraceImporter::batches`. Its pages are known at the end of the import.
    ReadBatch(u32),
}

/// What the capture shows of a file's size.
#[derive(Debug, Clone, Copy)]
struct FileExtent {
    /// The highest page index seen in the file.
    highest: u64,
    /// Pages of the file entered or left the page cache during the capture: it was read
    /// from storage, and readahead adds the pages a read needs up to the file's end.
    cache_events: bool,
}

/// One `mm_filemap_get_pages` event: the pages `first..=last` asked for from this batch on.
#[derive(Debug, Clone, Copy)]
struct ReadBatch {
    owner: u64,
    first: u64,
    last: u64,
    /// The last page this batch read, when the next batch of the same read says it.
    end: Option<u64>,
}

/// The importer's view of one process.
#[derive(Debug, Clone)]
struct ProcState {
    tgid: u32,
    name: String,
    mark: Option<i16>,
    exited: bool,
    threads: u32,
    last_input_ns: Option<u64>,
}

/// The head of an event line.
struct Head<'a> {
    comm: Option<&'a str>,
    pid: u32,
    tgid: Option<u32>,
    time_ns: u64,
    event: &'a str,
    payload: &'a str,
}

enum Line<'a> {
    Blank,
    Comment,
    Lost(u64),
    /// An HTML tag line of a systrace page.
    Markup,
    /// A header line a capture tool writes before the events: atrace's `TRACE:` and
    /// `capturing trace...`, trace-cmd's `version = N`, `cpus=N`, `CPU N is empty`.
    Header,
    /// Not an event line; malformed once events have started, and before them with
    /// [`ImportOptions::strict`] unless the input is an HTML page.
    Other,
    Event(Head<'a>),
}

/// Streams ftrace text lines into a trace; see the module documentation.
pub struct FtraceImporter {
    name: PathBuf,
    options: ImportOptions,
    line: u64,
    seen_event: bool,
    /// The input is an HTML page (a systrace file): its text before the trace data is
    /// the page, not a malformed header.
    html: Option<bool>,
    interner: Interner,
    events: Vec<Event>,
    origins: Vec<Origin>,
    /// Per page id: a read-path event reached it.
    read_path_pages: Vec<bool>,
    first_ts: Option<u64>,
    last_time: u64,
    procs: Vec<ProcState>,
    /// Current process of each TGID.
    current: HashMap<u32, ProcId>,
    /// Thread group of each thread seen (pid -> tgid) when it is not the pid itself.
    tgid_of: HashMap<u32, u32>,
    /// Threads seen per thread group.
    thread_counts: HashMap<u32, u32>,
    /// Pids just forked as new processes: name, inherited importance and mark.
    forked: HashMap<u32, Forked>,
    /// Processes running before the trace began (see [`FtraceImporter::running_process`]).
    running: HashMap<u32, Forked>,
    read_path_lines: u64,
    /// Every `mm_filemap_get_pages` event, in order.
    batches: Vec<ReadBatch>,
    /// Per task (pid): its latest batch, which the task's next one may continue.
    open_read: HashMap<u32, u32>,
    /// Per file: what the capture shows of its size.
    file_extent: HashMap<u64, FileExtent>,
    /// Pages beyond their first that the read batches may add at the end, kept free
    /// among the page ids.
    batch_room: u64,
    report: ImportReport,
}

#[derive(Debug, Clone, Default)]
struct Forked {
    name: Option<String>,
    adj: Option<i16>,
    mark: Option<i16>,
}

impl FtraceImporter {
    /// `name` stands for the input in errors (a file, or `trace_pipe`).
    pub fn new(name: &Path, options: ImportOptions) -> Self {
        FtraceImporter {
            name: name.to_path_buf(),
            options,
            line: 0,
            seen_event: false,
            html: None,
            interner: Interner::new(),
            events: Vec::new(),
            origins: Vec::new(),
            read_path_pages: Vec::new(),
            first_ts: None,
            last_time: 0,
            procs: Vec::new(),
            current: HashMap::new(),
            tgid_of: HashMap::new(),
            thread_counts: HashMap::new(),
            forked: HashMap::new(),
            running: HashMap::new(),
            read_path_lines: 0,
            batches: Vec::new(),
            open_read: HashMap::new(),
            file_extent: HashMap::new(),
            batch_room: 0,
            report: ImportReport::default(),
        }
    }

    /// Process `tgid` was already running, named `name` (empty if unknown) with
    /// `oom_score_adj` `adj`, when the trace began: the process of `tgid` first seen without
    /// a fork in the trace takes this importance (unless a mark pins it) and, where its
    /// lines give none, this name.
    pub fn running_process(&mut self, tgid: u32, name: &str, adj: i16) {
        let name = (!name.is_empty()).then(|| name.to_string());
        let entry = Forked {
            name,
            adj: Some(adj),
            mark: None,
        };
        self.running.insert(tgid, entry);
    }

    /// Lines read so far.
    pub fn lines(&self) -> u64 {
        self.line
    }

    /// Events built so far.
    pub fn events(&self) -> usize {
        self.events.len()
    }

    /// Read every line of `input`.
    pub fn read(&mut self, input: &mut dyn BufRead) -> Result<()> {
        let mut buf = Vec::new();
        loop {
            buf.clear();
            let n = input
                .read_until(b'\n', &mut buf)
                .map_err(|e| Error::io(&self.name, e))?;
            if n == 0 {
                return Ok(());
            }
            self.push_bytes(&buf)?;
        }
    }

    /// One line as bytes (task names need not be UTF-8: they are read lossily).
    pub fn push_bytes(&mut self, line: &[u8]) -> Result<()> {
        match std::str::from_utf8(line) {
            Ok(text) => self.push_line(text),
            Err(_) => self.push_line(&String::from_utf8_lossy(line)),
        }
    }

    /// One line of text (with or without its line break).
    pub fn push_line(&mut self, line: &str) -> Result<()> {
        self.line += 1;
        self.report.lines += 1;
        let line = line.trim_end_matches(['\n', '\r']);
        if self.html.is_none() && !line.trim().is_empty() {
            let start = line.trim_start().as_bytes();
            let prefix = &start[..start.len().min(14)];
            self.html = Some(
                prefix.eq_ignore_ascii_case(b"<!doctype html")
                    || prefix.starts_with(b"<html")
                    || prefix.starts_with(b"<HTML"),
            );
        }
        match classify(line, self.options.perfetto) {
            Ok(Line::Blank) => self.report.skip("blank", self.line),
            Ok(Line::Comment) => self.report.skip("comment (# ...)", self.line),
            Ok(Line::Lost(n)) => {
                self.report.lost_events += n;
                self.report
                    .skip("lost-events marker (CPU:N [LOST M EVENTS])", self.line);
            }
            Ok(Line::Markup) => self.report.skip("HTML tag (systrace page)", self.line),
            Ok(Line::Header) if !self.seen_event => self
                .report
                .skip("header (before the first event)", self.line),
            Ok(Line::Other) if !self.seen_event && self.html == Some(true) => self
                .report
                .skip("HTML page text (before the trace data)", self.line),
            // Strict: only the header lines capture tools write may precede the events.
            Ok(Line::Other) if !self.seen_event && !self.options.strict => self
                .report
                .skip("text before the first event (not ftrace)", self.line),
            Ok(Line::Other) if !self.seen_event => self.malformed(
                "text before the first event: expected an event line `TASK-PID [CPU] SECONDS: EVENT: FIELDS` or a header line (# comment, TRACE:, version = N, cpus=N, CPU N is empty)",
            )?,
            Ok(Line::Other | Line::Header) => self.malformed(
                "not an event line: expected `TASK-PID [CPU] SECONDS: EVENT: FIELDS`",
            )?,
            Ok(Line::Event(head)) => {
                self.seen_event = true;
                let excluded = |pid: u32| self.options.exclude_pids.contains(&pid);
                if excluded(head.pid) || head.tgid.is_some_and(excluded) {
                    // A process it starts is not excluded, and its fork is this line.
                    if head.event == "task_newtask" {
                        match new_task(head.payload, self.options.perfetto) {
                            Ok(task) if !task.thread => self.forked_process(&task, None),
                            Ok(_) => {}
                            Err(expected) => {
                                return self.malformed(&format!("task_newtask: {expected}"));
                            }
                        }
                    }
                    self.report
                        .skip("excluded task (the capturing process)", self.line);
                    return Ok(());
                }
                if let Err(expected) = self.event(&head) {
                    self.malformed(&format!("{}: {expected}", head.event))?;
                }
            }
            Err(expected) => {
                self.seen_event = true;
                self.malformed(&expected)?;
            }
        }
        Ok(())
    }

    fn malformed(&mut self, expected: &str) -> Result<()> {
        if self.options.strict {
            return Err(Error::format(
                &self.name,
                Position::Line(self.line),
                expected.to_string(),
            ));
        }
        self.report
            .skip(&format!("malformed: {expected}"), self.line);
        Ok(())
    }

    /// Time of an event relative to the first, never before the previous event.
    fn time(&mut self, ts: u64) -> u64 {
        let first = *self.first_ts.get_or_insert(ts);
        let t = ts.saturating_sub(first);
        if t < self.last_time {
            self.report.reordered_times += 1;
            return self.last_time;
        }
        self.last_time = t;
        t
    }

    fn event(&mut self, h: &Head) -> std::result::Result<(), String> {
        let name = h.event;
        let payload = h.payload;
        if let Some(tgid) = h.tgid {
            if tgid != 0 && tgid != h.pid {
                self.thread_of(h.pid, tgid);
            }
        }
        match name {
            "mm_filemap_add_to_page_cache" | "mm_filemap_delete_from_page_cache" => {
                let (owner, first, count) = filemap_pages(payload)?;
                let added = name == "mm_filemap_add_to_page_cache";
                self.used(name);
                self.file_has(owner, first + count - 1, true);
                if !added {
                    self.report.pages_deleted += count;
                    return Ok(());
                }
                self.report.pages_added += count;
                let time = self.time(h.time_ns);
                let proc = self.context_process(h, time)?;
                self.accesses(time, proc, owner, first, count, Origin::Added)
            }
            "mm_filemap_get_pages" => {
                let (owner, first, last) = filemap_page_range(payload)?;
                self.used(name);
                self.read_path_lines += 1;
                let time = self.time(h.time_ns);
                let proc = self.context_process(h, time)?;
                self.read_batch(h.pid, time, proc, owner, first, last)
            }
            "mm_filemap_map_pages" | "mm_filemap_fault" => {
                let (owner, first, last) = if name == "mm_filemap_fault" {
                    let (owner, index) = filemap_key(payload)?;
                    (owner, index, index)
                } else {
                    filemap_page_range(payload)?
                };
                self.used(name);
                self.read_path_lines += 1;
                // Both stay inside the file: filemap_fault() returns SIGBUS past its end
                // and filemap_map_pages() stops its range at the file's last page.
                self.file_has(owner, last, false);
                let time = self.time(h.time_ns);
                let proc = self.context_process(h, time)?;
                self.accesses(time, proc, owner, first, last - first + 1, Origin::ReadPath)
            }
            "page_fault_user" => {
                let perfetto = self.options.perfetto;
                let address = value(payload, "address").ok_or("expected address=0x...")?;
                let address = kernel_hex(address, perfetto)
                    .ok_or_else(|| format!("address={address}, expected an address"))?;
                let code = value(payload, "error_code").ok_or("expected error_code=0x...")?;
                let code = kernel_hex(code, perfetto)
                    .ok_or_else(|| format!("error_code={code}, expected a number"))?;
                self.used(name);
                let time = self.time(h.time_ns);
                let proc = self.context_process(h, time)?;
                let tgid = self.procs[proc as usize].tgid;
                let page = self.page(PageKey::anon(u64::from(tgid), address / PAGE_SIZE))?;
                self.push(
                    Event::access(time, proc, page, code & 2 != 0, true),
                    Origin::Other,
                );
                Ok(())
            }
            "oom_score_adj_update" => {
                let pid = number(value(payload, "pid"), "pid=PID")?;
                let adj = adj(value(payload, "oom_score_adj"))?;
                let comm = text_between(payload, "comm=", " oom_score_adj=");
                self.used(name);
                let time = self.time(h.time_ns);
                let tgid = self.tgid(pid);
                let proc = self.process(tgid, comm, pid == tgid, time)?;
                self.importance(time, proc, adj);
                Ok(())
            }
            "task_newtask" => {
                let task = new_task(payload, self.options.perfetto)?;
                self.used(name);
                let time = self.time(h.time_ns);
                let parent_proc = self.context_process(h, time)?;
                let parent = self.procs[parent_proc as usize].tgid;
                if task.thread {
                    self.thread_of(task.pid, parent);
                    self.forked.remove(&task.pid);
                } else {
                    let mark = self.procs[parent_proc as usize].mark;
                    self.forked_process(&task, mark);
                }
                Ok(())
            }
            "sched_process_fork" => {
                let child = number(value(payload, "child_pid"), "child_pid=PID")?;
                let child_comm = text_between(payload, "child_comm=", " child_pid=");
                self.used(name);
                let time = self.time(h.time_ns);
                let parent_proc = self.context_process(h, time)?;
                // A thread (known from task_newtask) stays one.
                if self.tgid_of.contains_key(&child) {
                    return Ok(());
                }
                let mark = self.procs[parent_proc as usize].mark;
                let f = self.forked.entry(child).or_default();
                if f.name.is_none() {
                    f.name = child_comm.map(str::to_string);
                }
                f.mark = f.mark.or(mark);
                Ok(())
            }
            "sched_process_exit" => {
                let pid = number(value(payload, "pid"), "pid=PID")?;
                let group_dead = match value(payload, "group_dead") {
                    Some("true") | Some("1") => Some(true),
                    Some("false") | Some("0") => Some(false),
                    Some(other) => {
                        return Err(format!("group_dead={other}, expected true or false"))
                    }
                    None => None,
                };
                self.used(name);
                let time = self.time(h.time_ns);
                let tgid = self.tgid(pid);
                self.tgid_of.remove(&pid);
                self.forked.remove(&pid);
                let whole = group_dead.unwrap_or(pid == tgid);
                if whole {
                    if let Some(&proc) = self.current.get(&tgid) {
                        if !self.procs[proc as usize].exited {
                            self.procs[proc as usize].exited = true;
                            self.push(Event::exit(time, proc), Origin::Other);
                        }
                    }
                }
                Ok(())
            }
            "task_rename" => {
                let pid = number(value(payload, "pid"), "pid=PID")?;
                let new = text_between(payload, "newcomm=", " oom_score_adj=")
                    .ok_or("expected newcomm=NAME")?;
                self.used(name);
                let time = self.time(h.time_ns);
                let tgid = self.tgid(pid);
                if pid == tgid {
                    if let Some(f) = self.forked.get_mut(&pid) {
                        f.name = Some(new.to_string());
                    } else {
                        let proc = self.process(tgid, Some(new), true, time)?;
                        if self.procs[proc as usize].name != new {
                            self.rename(proc, new, time);
                        }
                    }
                }
                Ok(())
            }
            "tracing_mark_write" | "print" => {
                self.time(h.time_ns);
                let Some((pid, slice)) = begin_marker(payload) else {
                    self.ignored("trace markers (not input)");
                    return Ok(());
                };
                if !INPUT_MARKERS.iter().any(|m| slice.starts_with(m)) {
                    self.ignored("trace markers (not input)");
                    return Ok(());
                }
                self.used("tracing_mark_write (input)");
                let time = self.last_time;
                let tgid = self.tgid(pid);
                let proc = self.process(tgid, None, false, time)?;
                let state = &mut self.procs[proc as usize];
                let same_gesture = state
                    .last_input_ns
                    .is_some_and(|last| time.saturating_sub(last) < INPUT_GESTURE_GAP_NS);
                state.last_input_ns = Some(time);
                if !same_gesture {
                    self.push(Event::input(time, proc), Origin::Other);
                }
                Ok(())
            }
            _ if name.starts_with("mm_vmscan_") => {
                if name == "mm_vmscan_lru_shrink_inactive" {
                    if let Some(n) =
                        value(payload, "nr_reclaimed").and_then(|v| v.parse::<u64>().ok())
                    {
                        self.report.pages_reclaimed += n;
                    }
                }
                self.used(name);
                Ok(())
            }
            _ => {
                self.ignored(name);
                Ok(())
            }
        }
    }

    fn used(&mut self, name: &str) {
        count(&mut self.report.used, name);
    }

    fn ignored(&mut self, name: &str) {
        count(&mut self.report.ignored, name);
    }

    fn push(&mut self, event: Event, origin: Origin) {
        self.events.push(event);
        self.origins.push(origin);
    }

    fn page(&mut self, key: PageKey) -> std::result::Result<PageId, String> {
        self.page_with_room(key, self.batch_room)
    }

    /// The id of `key`, keeping `room` ids free for the pages read batches may still add
    /// at the end.
    fn page_with_room(&mut self, key: PageKey, room: u64) -> std::result::Result<PageId, String> {
        let ids = self.interner.tables().pages.len() as u64 + room;
        if ids >= u64::from(PageId::MAX) {
            return Err("more distinct pages than the 2^32 - 1 page ids".to_string());
        }
        self.interner
            .page(key)
            .ok_or_else(|| "more distinct pages than the 2^32 - 1 page ids".to_string())
    }

    fn accesses(
        &mut self,
        time: u64,
        proc: ProcId,
        owner: u64,
        first: u64,
        count: u64,
        origin: Origin,
    ) -> std::result::Result<(), String> {
        for index in first..first.saturating_add(count) {
            let page = self.page(PageKey::file(owner, index))?;
            if origin == Origin::ReadPath {
                mark_page(&mut self.read_path_pages, page);
            }
            self.push(Event::access(time, proc, page, false, false), origin);
        }
        Ok(())
    }

    /// The capture shows that file `owner` has page `index`, by a page entering or
    /// leaving the page cache (`cache`) or by a read.
    fn file_has(&mut self, owner: u64, index: u64, cache: bool) {
        let extent = self.file_extent.entry(owner).or_insert(FileExtent {
            highest: index,
            cache_events: cache,
        });
        extent.highest = extent.highest.max(index);
        extent.cache_events |= cache;
    }

    /// One `mm_filemap_get_pages` event of task `pid`: pages `first..=last` asked for.
    /// Its pages are decided in [`FtraceImporter::finish`]; here it is linked to the
    /// task's previous batch when it continues the same read.
    fn read_batch(
        &mut self,
        pid: u32,
        time: u64,
        proc: ProcId,
        owner: u64,
        first: u64,
        last: u64,
    ) -> std::result::Result<(), String> {
        let id = u32::try_from(self.batches.len())
            .map_err(|_| "more than 2^32 mm_filemap_get_pages events".to_string())?;
        let continued = self.open_read.get(&pid).and_then(|&prev| {
            let p = self.batches[prev as usize];
            (p.owner == owner && p.last == last && p.first < first && first <= p.last)
                .then_some(prev)
        });
        // A continued batch now ends before this one's first page.
        let room = match continued {
            Some(prev) => self.batch_room - (self.batches[prev as usize].last - (first - 1)),
            None => self.batch_room,
        } + (last - first);
        // Stands for the batch's accesses until they are known. Taken before anything is
        // recorded: finish() reads every recorded batch's pages in the room kept here.
        let page = self.page_with_room(PageKey::file(owner, first), room)?;
        self.batch_room = room;
        match continued {
            Some(prev) => self.batches[prev as usize].end = Some(first - 1),
            None => self.report.reads += 1,
        }
        // filemap_read() asks for pages only below the file's size: the first one exists.
        self.file_has(owner, first, false);
        self.open_read.insert(pid, id);
        self.batches.push(ReadBatch {
            owner,
            first,
            last,
            end: None,
        });
        self.push(
            Event::access(time, proc, page, false, false),
            Origin::ReadBatch(id),
        );
        Ok(())
    }

    /// `task` is a new process (not a thread) started with the parent's mark `mark`:
    /// remembered until its first event makes it a process.
    fn forked_process(&mut self, task: &NewTask, mark: Option<i16>) {
        self.tgid_of.remove(&task.pid);
        let f = self.forked.entry(task.pid).or_default();
        f.name = task.comm.map(str::to_string);
        f.adj = Some(task.adj);
        f.mark = mark;
    }

    /// `pid` is a thread of group `tgid`.
    fn thread_of(&mut self, pid: u32, tgid: u32) {
        if self.tgid_of.insert(pid, tgid) != Some(tgid) {
            self.report.threads += 1;
            *self.thread_counts.entry(tgid).or_default() += 1;
        }
    }

    /// Thread group of `pid` as known so far.
    fn tgid(&self, pid: u32) -> u32 {
        self.tgid_of.get(&pid).copied().unwrap_or(pid)
    }

    /// The process running the line's task.
    fn context_process(&mut self, h: &Head, time: u64) -> std::result::Result<ProcId, String> {
        let tgid = h
            .tgid
            .filter(|&t| t != 0)
            .unwrap_or_else(|| self.tgid(h.pid));
        self.process(tgid, h.comm, h.pid == tgid, time)
    }

    /// The current process of `tgid`, started (with a start event) at its first sight.
    fn process(
        &mut self,
        tgid: u32,
        comm: Option<&str>,
        leader: bool,
        time: u64,
    ) -> std::result::Result<ProcId, String> {
        let fresh = self.forked.remove(&tgid);
        if let Some(&proc) = self.current.get(&tgid) {
            let state = &self.procs[proc as usize];
            if !state.exited && fresh.is_none() {
                if let Some(comm) = comm {
                    if leader && state.name != comm {
                        self.rename(proc, comm, time);
                    } else if state.name.is_empty() {
                        self.procs[proc as usize].name = comm.to_string();
                    }
                }
                return Ok(proc);
            }
            if !state.exited {
                // The pid was reused: its old process ended unseen.
                self.procs[proc as usize].exited = true;
                self.push(Event::exit(time, proc), Origin::Other);
            }
        }
        // Only the first process of a pid can be the one that was running.
        let running = self.running.remove(&tgid);
        let fresh = fresh.or(running).unwrap_or_default();
        let name = comm
            .filter(|_| leader)
            .map(str::to_string)
            .or(fresh.name)
            .or(comm.map(str::to_string))
            .unwrap_or_default();
        let proc = self
            .interner
            .start_process(tgid, &name)
            .ok_or_else(|| "more processes than the 2^27 process ids".to_string())?;
        debug_assert_eq!(proc as usize, self.procs.len());
        self.current.insert(tgid, proc);
        let mark = self.user_mark(tgid, &name).or(fresh.mark);
        self.procs.push(ProcState {
            tgid,
            name,
            mark,
            exited: false,
            threads: 0,
            last_input_ns: None,
        });
        self.push(Event::start(time, proc), Origin::Other);
        if let Some(adj) = mark {
            self.push(Event::importance(time, proc, adj), Origin::Other);
        } else if let Some(adj) = fresh.adj {
            self.importance(time, proc, adj);
        }
        Ok(proc)
    }

    fn user_mark(&self, pid: u32, name: &str) -> Option<i16> {
        if self.options.foreground.iter().any(|m| m.matches(pid, name)) {
            Some(ADJ_FOREGROUND)
        } else if self.options.background.iter().any(|m| m.matches(pid, name)) {
            Some(ADJ_MARKED_BACKGROUND)
        } else {
            None
        }
    }

    /// A process takes a new name (exec, prctl); a name mark may now apply.
    fn rename(&mut self, proc: ProcId, name: &str, time: u64) {
        let state = &mut self.procs[proc as usize];
        state.name = name.to_string();
        let tgid = state.tgid;
        if self.procs[proc as usize].mark.is_none() {
            if let Some(adj) = self.user_mark(tgid, name) {
                self.procs[proc as usize].mark = Some(adj);
                self.push(Event::importance(time, proc, adj), Origin::Other);
            }
        }
    }

    /// An `oom_score_adj` change, unless a mark pins the process's importance.
    fn importance(&mut self, time: u64, proc: ProcId, adj: i16) {
        if self.procs[proc as usize].mark.is_none() {
            self.push(Event::importance(time, proc, adj), Origin::Other);
        }
    }

    /// The trace and the report. Accesses are chosen by [`ImportOptions::accesses`];
    /// page ids are renumbered in order of first appearance among the accesses kept, as
    /// every trace reader numbers them.
    pub fn finish(mut self) -> (Trace, ImportReport) {
        let source = match self.options.accesses {
            AccessSource::Auto if self.read_path_lines > 0 => AccessSource::ReadPath,
            AccessSource::Auto => AccessSource::Added,
            other => other,
        };
        self.report.accesses_from = source.name().to_string();
        // The pages of each read batch, flat: batch i read batch_pages[starts[i]..starts[i + 1]].
        let mut batch_pages: Vec<PageId> = Vec::new();
        let mut starts: Vec<usize> = Vec::with_capacity(self.batches.len() + 1);
        for b in &self.batches {
            starts.push(batch_pages.len());
            let end = match b.end {
                Some(end) => end,
                // The last batch of a read: up to the request's end or the file's known
                // end, whichever is lower (the first page is known to exist).
                None => {
                    let bound = match self.file_extent.get(&b.owner) {
                        Some(e) if e.cache_events => e.highest.max(b.first),
                        Some(e) => e.highest.max(b.first + READ_BATCH_FOLIOS - 1),
                        None => b.first + READ_BATCH_FOLIOS - 1,
                    };
                    let end = b.last.min(bound);
                    self.report.read_pages_past_known_end += b.last - end;
                    end
                }
            };
            if source != AccessSource::ReadPath {
                continue;
            }
            for index in b.first..=end {
                let page = self
                    .interner
                    .page(PageKey::file(b.owner, index))
                    .expect("read_batch() recorded the batch only with room kept for its pages");
                mark_page(&mut self.read_path_pages, page);
                batch_pages.push(page);
            }
        }
        starts.push(batch_pages.len());
        let keys = self.interner.tables().pages.clone();
        let mut tables = self.interner.into_tables();
        let mut new_page = vec![PageId::MAX; keys.len()];
        let mut new_proc = vec![ProcId::MAX; self.procs.len()];
        let mut pages = Vec::new();
        let mut kept_procs = Vec::new();
        let mut events = Vec::with_capacity(self.events.len() + batch_pages.len());
        let mut accesses = vec![0u64; self.procs.len()];
        let report = &mut self.report;
        for (event, &origin) in self.events.iter().zip(&self.origins) {
            let keep = match origin {
                Origin::Other => true,
                Origin::ReadPath | Origin::ReadBatch(_) => source == AccessSource::ReadPath,
                Origin::Added => {
                    source == AccessSource::Added
                        || !self
                            .read_path_pages
                            .get(event.page() as usize)
                            .copied()
                            .unwrap_or(false)
                }
            };
            let old_proc = event.proc() as usize;
            if !keep || (self.options.marked_only && self.procs[old_proc].mark.is_none()) {
                continue;
            }
            if new_proc[old_proc] == ProcId::MAX {
                new_proc[old_proc] = kept_procs.len() as ProcId;
                kept_procs.push(old_proc);
            }
            let proc = new_proc[old_proc];
            let time = event.time_ns();
            if let Origin::ReadBatch(i) = origin {
                let i = i as usize;
                for &old in &batch_pages[starts[i]..starts[i + 1]] {
                    let old = old as usize;
                    if new_page[old] == PageId::MAX {
                        new_page[old] = pages.len() as PageId;
                        pages.push(keys[old]);
                    }
                    accesses[old_proc] += 1;
                    events.push(Event::access(time, proc, new_page[old], false, false));
                }
                continue;
            }
            events.push(match event.kind() {
                EventKind::Access => {
                    let old = event.page() as usize;
                    if new_page[old] == PageId::MAX {
                        new_page[old] = pages.len() as PageId;
                        pages.push(keys[old]);
                    }
                    accesses[old_proc] += 1;
                    Event::access(time, proc, new_page[old], event.is_write(), event.is_anon())
                }
                EventKind::Importance => {
                    report.importance_changes += 1;
                    Event::importance(time, proc, event.oom_score_adj())
                }
                EventKind::Start => {
                    report.starts += 1;
                    Event::start(time, proc)
                }
                EventKind::Exit => {
                    report.exits += 1;
                    Event::exit(time, proc)
                }
                // The importer makes no swap events.
                EventKind::Input | EventKind::SwapOut | EventKind::SwapIn => {
                    report.inputs += 1;
                    Event::input(time, proc)
                }
            });
        }
        report.file_accesses = events
            .iter()
            .filter(|e| e.is_access() && !e.is_anon())
            .count() as u64;
        report.anon_accesses = events
            .iter()
            .filter(|e| e.is_access() && e.is_anon())
            .count() as u64;
        tables.pages = pages;
        for (&tgid, &threads) in &self.thread_counts {
            if let Some(&proc) = self.current.get(&tgid) {
                self.procs[proc as usize].threads += threads;
            }
        }
        tables.processes = kept_procs
            .iter()
            .map(|&old| super::ProcessInfo {
                pid: self.procs[old].tgid,
                name: self.procs[old].name.clone(),
            })
            .collect();
        let report = &mut self.report;
        report.pages = tables.pages.len() as u64;
        report.files = {
            let mut owners: Vec<u64> = tables
                .pages
                .iter()
                .filter(|p| p.kind == super::PageKind::File)
                .map(|p| p.owner)
                .collect();
            owners.sort_unstable();
            owners.dedup();
            owners.len() as u64
        };
        report.time_span_ns = events.last().map_or(0, |e| e.time_ns());
        report.processes = kept_procs
            .iter()
            .map(|&old| {
                let s = &self.procs[old];
                ImportedProcess {
                    pid: s.tgid,
                    name: s.name.clone(),
                    threads: s.threads,
                    accesses: accesses[old],
                    marked: s.mark,
                }
            })
            .collect();
        (Trace { events, tables }, self.report)
    }
}

/// Set `page`'s flag, growing `flags` to reach it.
fn mark_page(flags: &mut Vec<bool>, page: PageId) {
    let i = page as usize;
    if flags.len() <= i {
        flags.resize(i + 1, false);
    }
    flags[i] = true;
}

/// One more line of `name`, allocating its key only the first time.
fn count(map: &mut BTreeMap<String, u64>, name: &str) {
    match map.get_mut(name) {
        Some(n) => *n += 1,
        None => {
            map.insert(name.to_string(), 1);
        }
    }
}

/// Import a whole ftrace text file (zstd-compressed or not).
pub fn import_file(path: &Path, options: ImportOptions) -> Result<(Trace, ImportReport)> {
    let input = super::open::open_bytes(path)?;
    let mut input = std::io::BufReader::with_capacity(1 << 16, input);
    let mut importer = FtraceImporter::new(path, options);
    importer.read(&mut input)?;
    Ok(importer.finish())
}

/// Largest device major a superblock can carry: block and character majors are below
/// `BLKDEV_MAJOR_MAX` and `CHRDEV_MAJOR_MAX` (512, `include/linux/blkdev.h`,
/// `include/linux/fs.h`), and anonymous devices (tmpfs, btrfs, overlay) have major 0.
pub const MAX_DEVICE_MAJOR: u32 = 511;
/// Largest device minor: `MINORBITS` is 20 (`include/linux/kdev_t.h`).
pub const MAX_DEVICE_MINOR: u32 = (1 << 20) - 1;
/// Largest inode number a file key holds: 35 bits (ext4, f2fs and tmpfs inodes are 32-bit).
pub const MAX_INODE: u64 = (1 << 35) - 1;

/// The page-key owner of a file: `major << 55 | minor << 35 | inode`, every device the
/// kernel can number ([`MAX_DEVICE_MAJOR`], [`MAX_DEVICE_MINOR`]) and inodes below 2^35,
/// so that the device and inode can be read back from a trace ([`file_of_owner`]).
/// `None` when they do not fit.
pub fn file_owner(major: u32, minor: u32, ino: u64) -> Option<u64> {
    if major > MAX_DEVICE_MAJOR || minor > MAX_DEVICE_MINOR || ino > MAX_INODE {
        return None;
    }
    Some(u64::from(major) << 55 | u64::from(minor) << 35 | ino)
}

/// Device major, minor and inode of a [`file_owner`] key.
pub fn file_of_owner(owner: u64) -> (u32, u32, u64) {
    (
        (owner >> 55) as u32,
        ((owner >> 35) & u64::from(MAX_DEVICE_MINOR)) as u32,
        owner & MAX_INODE,
    )
}

/// Split a line into its head, or say what kind of non-event line it is. `Err` says what
/// was expected of a line that looks like an event and is not one.
fn classify(line: &str, perfetto: bool) -> std::result::Result<Line<'_>, String> {
    let trimmed = line.trim_start();
    if trimmed.is_empty() {
        return Ok(Line::Blank);
    }
    if trimmed.starts_with('#') {
        return Ok(Line::Comment);
    }
    if let Some(rest) = trimmed.strip_prefix("CPU:") {
        if let Some(lost) = rest.split_once("[LOST ") {
            let n = lost.1.split_whitespace().next().unwrap_or("");
            return n
                .parse::<u64>()
                .map(Line::Lost)
                .map_err(|_| "expected `CPU:N [LOST M EVENTS]`".to_string());
        }
    }
    // The CPU column is the first ` [NNN]` whose left is a task and whose right is a
    // timestamp and an event: a task name may itself hold ` [12]` (names may contain
    // spaces and brackets), so a candidate is checked on both sides.
    let mut first_error = None;
    let mut from = 0;
    while let Some((cpu_start, cpu_end)) = cpu_field(line, from) {
        match head(line, cpu_start, cpu_end, perfetto) {
            Ok(h) => return Ok(Line::Event(h)),
            Err(e) => {
                first_error.get_or_insert(e);
            }
        }
        from = cpu_start + 1;
    }
    if let Some(e) = first_error {
        return Err(e);
    }
    // A systrace HTML page wraps the text in tags.
    if trimmed.starts_with('<') && trimmed.ends_with('>') {
        return Ok(Line::Markup);
    }
    let t = trimmed.trim_end();
    let header = t == "TRACE:"
        || t.starts_with("capturing trace...")
        || t.strip_prefix("version = ")
            .is_some_and(|v| v.parse::<u32>().is_ok())
        || t.strip_prefix("cpus=")
            .is_some_and(|v| v.parse::<u32>().is_ok())
        || t.strip_prefix("CPU ")
            .and_then(|v| v.strip_suffix(" is empty"))
            .is_some_and(|v| v.parse::<u32>().is_ok());
    Ok(if header { Line::Header } else { Line::Other })
}

/// The head of an event line whose CPU column is `line[cpu_start..cpu_end]`.
fn head(
    line: &str,
    cpu_start: usize,
    cpu_end: usize,
    perfetto: bool,
) -> std::result::Result<Head<'_>, String> {
    let before = line[..cpu_start].trim();
    let after = &line[cpu_end..];
    // Task and optional TGID column.
    let (task, tgid) = match before.strip_suffix(')') {
        Some(inner) => {
            let open = inner
                .rfind('(')
                .ok_or("expected `(TGID)` before the CPU column")?;
            let tgid_text = inner[open + 1..].trim();
            let tgid = if tgid_text.chars().all(|c| c == '-') {
                None
            } else {
                Some(
                    tgid_text
                        .parse::<u32>()
                        .map_err(|_| format!("TGID `{tgid_text}`, expected a number or -----"))?,
                )
            };
            (inner[..open].trim_end(), tgid)
        }
        None => (before, None),
    };
    let (comm, pid) = task
        .rsplit_once('-')
        .ok_or_else(|| format!("task `{task}`, expected COMM-PID"))?;
    let pid = pid
        .parse::<u32>()
        .map_err(|_| format!("task `{task}`, expected COMM-PID with a numeric PID"))?;
    let comm = if comm == "<...>" || comm.is_empty() || (perfetto && comm == "<unknown>") {
        None
    } else {
        Some(comm)
    };
    // `[flags] SECONDS.FRACTION: EVENT: PAYLOAD`
    let (stamp_part, rest) = after
        .split_once(": ")
        .or_else(|| after.strip_suffix(':').map(|s| (s, "")))
        .ok_or("expected `SECONDS: EVENT: FIELDS` after the CPU column")?;
    let stamp = stamp_part
        .split_whitespace()
        .last()
        .ok_or("expected a timestamp after the CPU column")?;
    let time_ns = timestamp(stamp)?;
    let rest = rest.trim_start();
    let (event, payload) = match rest.split_once(':') {
        Some((event, payload)) => (event.trim(), payload.trim()),
        None => return Err("expected `EVENT: FIELDS` after the timestamp".to_string()),
    };
    if event.is_empty() || event.contains(char::is_whitespace) {
        return Err(format!("event name `{event}`, expected one word"));
    }
    Ok(Head {
        comm,
        pid,
        tgid,
        time_ns,
        event,
        payload,
    })
}

/// Byte range of the first ` [NNN]` column (digits in brackets after a space) at or
/// after byte `from`.
fn cpu_field(line: &str, mut from: usize) -> Option<(usize, usize)> {
    let bytes = line.as_bytes();
    while let Some(rel) = line.get(from..)?.find('[') {
        let open = from + rel;
        let mut i = open + 1;
        while i < bytes.len() && bytes[i].is_ascii_digit() {
            i += 1;
        }
        if i > open + 1
            && i < bytes.len()
            && bytes[i] == b']'
            && open > 0
            && bytes[open - 1] == b' '
        {
            return Some((open, i + 1));
        }
        from = open + 1;
    }
    None
}

/// `SECONDS.FRACTION` (up to 9 fraction digits) in nanoseconds.
fn timestamp(text: &str) -> std::result::Result<u64, String> {
    let digits = |t: &str| !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit());
    let Some((secs, frac)) = text.split_once('.') else {
        if digits(text) {
            return Err(format!(
                "timestamp `{text}` without a fraction: expected SECONDS.FRACTION; a counter clock (trace_clock counter, x86-tsc) does not count seconds, capture with the local, global, mono or boot clock"
            ));
        }
        return Err(format!("timestamp `{text}`, expected SECONDS.FRACTION"));
    };
    if !digits(secs) || !digits(frac) || frac.len() > 9 {
        return Err(format!(
            "timestamp `{text}`, expected SECONDS.FRACTION (up to 9 fraction digits)"
        ));
    }
    let out_of_range = || format!("timestamp `{text}` out of range: more than 2^64 ns (584 years)");
    let secs: u64 = secs.parse().map_err(|_| out_of_range())?;
    let mut ns: u64 = frac.parse().map_err(|_| out_of_range())?;
    for _ in frac.len()..9 {
        ns *= 10;
    }
    secs.checked_mul(1_000_000_000)
        .and_then(|s| s.checked_add(ns))
        .ok_or_else(out_of_range)
}

/// The value of `key` in a payload: `key=VALUE` or `key VALUE`, at a word start.
fn value<'a>(payload: &'a str, key: &str) -> Option<&'a str> {
    let mut from = 0;
    while let Some(rel) = payload[from..].find(key) {
        let at = from + rel;
        let end = at + key.len();
        let word_start = at == 0 || payload.as_bytes()[at - 1] == b' ';
        let sep = payload.as_bytes().get(end).copied();
        if word_start && (sep == Some(b'=') || sep == Some(b' ')) {
            let rest = payload[end + 1..].trim_start();
            return Some(rest.split_whitespace().next().unwrap_or(""));
        }
        from = at + 1;
    }
    None
}

/// Text after `start` up to `end` (or the end of the payload): values that may hold spaces
/// (task names).
fn text_between<'a>(payload: &'a str, start: &str, end: &str) -> Option<&'a str> {
    let from = payload.find(start)? + start.len();
    let rest = &payload[from..];
    Some(rest.find(end).map_or(rest, |e| &rest[..e]))
}

fn number(text: Option<&str>, expected: &str) -> std::result::Result<u32, String> {
    text.and_then(|t| t.parse::<u32>().ok())
        .ok_or_else(|| format!("expected {expected}"))
}

fn adj(text: Option<&str>) -> std::result::Result<i16, String> {
    text.and_then(|t| t.parse::<i16>().ok())
        .filter(|a| (-1000..=1000).contains(a))
        .ok_or_else(|| "expected oom_score_adj=N with N in -1000..=1000".to_string())
}

/// A number the kernel prints in hexadecimal (`%lx`, `0x%lx`); Perfetto prints it in
/// decimal unless it has a `0x`.
fn kernel_hex(text: &str, perfetto: bool) -> Option<u64> {
    match text.strip_prefix("0x") {
        Some(digits) => u64::from_str_radix(digits, 16).ok(),
        None if perfetto => text.parse().ok(),
        None => u64::from_str_radix(text, 16).ok(),
    }
}

/// A file key, or what does not fit in one.
fn owner_of(major: u32, minor: u32, ino: u64) -> std::result::Result<u64, String> {
    if major > MAX_DEVICE_MAJOR {
        return Err(format!(
            "dev {major}:{minor}: device major above {MAX_DEVICE_MAJOR}, more than the kernel hands out, not supported"
        ));
    }
    if minor > MAX_DEVICE_MINOR {
        return Err(format!(
            "dev {major}:{minor}: device minor above {MAX_DEVICE_MINOR} (20 bits), not a Linux device number"
        ));
    }
    file_owner(major, minor, ino).ok_or_else(|| {
        format!("ino {ino:#x}: inode numbers of 2^35 and above are not supported (file pages are keyed by device and a 35-bit inode)")
    })
}

/// The file of a filemap event: the kernel's `dev M:m` / `dev=M:m` with `ino %lx` /
/// `ino=%lx`, or Perfetto's rendering of an event it has no format for, `s_dev=DEV_T
/// i_ino=DECIMAL` (`DEV_T` the kernel's `major << 20 | minor`).
fn file_of(payload: &str) -> std::result::Result<u64, String> {
    let Some(dev) = value(payload, "dev") else {
        let dev = value(payload, "s_dev").ok_or("expected dev MAJOR:MINOR")?;
        let dev = dev
            .parse::<u32>()
            .map_err(|_| format!("s_dev={dev}, expected a device number"))?;
        let ino_text = value(payload, "i_ino").ok_or("expected i_ino=INODE")?;
        let ino = ino_text
            .parse::<u64>()
            .map_err(|_| format!("i_ino={ino_text}, expected a decimal inode"))?;
        return owner_of(dev >> 20, dev & MAX_DEVICE_MINOR, ino);
    };
    let (major, minor) = dev
        .split_once(':')
        .and_then(|(a, b)| Some((a.parse::<u32>().ok()?, b.parse::<u32>().ok()?)))
        .ok_or_else(|| format!("dev `{dev}`, expected MAJOR:MINOR"))?;
    let ino_text = value(payload, "ino").ok_or("expected ino INODE (hexadecimal)")?;
    let ino = kernel_hex(ino_text, false)
        .ok_or_else(|| format!("ino `{ino_text}`, expected hexadecimal"))?;
    owner_of(major, minor, ino)
}

/// A page index given in bytes (`ofs=`, the kernel) or, without `ofs`, in pages
/// (`index=`, Perfetto).
fn page_index(payload: &str) -> std::result::Result<u64, String> {
    match value(payload, "ofs") {
        Some(ofs) => ofs
            .parse::<u64>()
            .map(|o| o / PAGE_SIZE)
            .map_err(|_| format!("ofs={ofs}, expected a byte offset")),
        None => index_value(
            "index",
            value(payload, "index").ok_or("expected ofs=BYTES")?,
        ),
    }
}

/// Perfetto's `index=N` (or `last_index=N`, named by `field`), in pages: at most
/// [`MAX_PAGE_INDEX`], the highest page the kernel's byte offsets can name.
fn index_value(field: &str, index: &str) -> std::result::Result<u64, String> {
    index
        .parse::<u64>()
        .ok()
        .filter(|&i| i <= MAX_PAGE_INDEX)
        .ok_or_else(|| {
            format!("{field}={index}, expected a page index of at most {MAX_PAGE_INDEX} (2^52 - 1: a byte offset below 2^64)")
        })
}

/// Added or deleted pages: file, first page index, number of pages (`order`).
fn filemap_pages(payload: &str) -> std::result::Result<(u64, u64, u64), String> {
    let owner = file_of(payload)?;
    let pfn = value(payload, "pfn").ok_or("expected pfn=N")?;
    // Decimal (`%lu`, the old layout) or `0x` hexadecimal (the folio layout).
    if kernel_hex(pfn, true).is_none() {
        return Err(format!(
            "pfn={pfn}, expected a page frame number (decimal, or hexadecimal after 0x)"
        ));
    }
    let first = page_index(payload)?;
    let order = match value(payload, "order") {
        Some(o) => o
            .parse::<u32>()
            .ok()
            .filter(|&o| o < 20)
            .ok_or_else(|| format!("order={o}, expected a folio order below 20"))?,
        None => 0,
    };
    Ok((owner, first, 1 << order))
}

/// `mm_filemap_fault`: file and page index.
fn filemap_key(payload: &str) -> std::result::Result<(u64, u64), String> {
    let owner = file_of(payload)?;
    Ok((owner, page_index(payload)?))
}

/// `mm_filemap_get_pages`, `mm_filemap_map_pages`: file and first and last page of the
/// byte range `ofs=FIRST-LAST` (Perfetto: `index=FIRST last_index=LAST` in pages), at
/// most [`MAX_EVENT_PAGES`] pages.
fn filemap_page_range(payload: &str) -> std::result::Result<(u64, u64, u64), String> {
    let owner = file_of(payload)?;
    let (first, last, shown) = match value(payload, "ofs") {
        None => {
            let last = value(payload, "last_index").ok_or("expected ofs=FIRST-LAST")?;
            let first = index_value(
                "index",
                value(payload, "index").ok_or("expected ofs=BYTES")?,
            )?;
            let last = index_value("last_index", last)?;
            (first, last, format!("index={first} last_index={last}"))
        }
        Some(ofs) => {
            let (a, b) = ofs
                .split_once('-')
                .and_then(|(a, b)| Some((a.parse::<u64>().ok()?, b.parse::<u64>().ok()?)))
                .ok_or_else(|| format!("ofs={ofs}, expected ofs=FIRST-LAST in bytes"))?;
            if b < a {
                return Err(format!("an empty range ofs={a}-{b}"));
            }
            (a / PAGE_SIZE, b / PAGE_SIZE, format!("ofs={ofs}"))
        }
    };
    if last < first {
        return Err(format!("an empty range {shown}"));
    }
    let pages = last - first + 1;
    if pages > MAX_EVENT_PAGES {
        return Err(format!(
            "{shown} spans {pages} pages, more than one read can ({MAX_EVENT_PAGES}: a read() moves less than 2 GiB)"
        ));
    }
    Ok((owner, first, last))
}

/// A `task_newtask` line's new task.
struct NewTask<'a> {
    pid: u32,
    /// `CLONE_THREAD`: a thread of its parent's group, not a process.
    thread: bool,
    /// `oom_score_adj` inherited from the parent.
    adj: i16,
    comm: Option<&'a str>,
}

/// `task_newtask`: `pid=%d comm=%s clone_flags=%lx oom_score_adj=%hd`.
fn new_task(payload: &str, perfetto: bool) -> std::result::Result<NewTask<'_>, String> {
    let pid = number(value(payload, "pid"), "pid=PID")?;
    let flags = value(payload, "clone_flags").ok_or("expected clone_flags=")?;
    let flags = kernel_hex(flags, perfetto).ok_or_else(|| {
        format!(
            "clone_flags={flags}, expected a number ({})",
            if perfetto { "decimal" } else { "hexadecimal" }
        )
    })?;
    Ok(NewTask {
        pid,
        thread: flags & CLONE_THREAD != 0,
        adj: adj(value(payload, "oom_score_adj"))?,
        comm: text_between(payload, "comm=", " clone_flags="),
    })
}

/// `B|PID|NAME` of an atrace marker.
fn begin_marker(payload: &str) -> Option<(u32, &str)> {
    let at = payload.find("B|")?;
    let rest = &payload[at + 2..];
    let (pid, name) = rest.split_once('|')?;
    Some((pid.trim().parse().ok()?, name))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn heads_of_the_three_layouts() {
        let android = "           <...>-3493  (-----) [004] .... 14594.815353: mm_filemap_add_to_page_cache: dev 253:6 ino 113b page=0000000069e2b98a pfn=628464 ofs=2723840";
        let Ok(Line::Event(h)) = classify(android, false) else {
            panic!("android line")
        };
        assert_eq!((h.comm, h.pid, h.tgid), (None, 3493, None));
        assert_eq!(h.time_ns, 14_594_815_353_000);
        assert_eq!(h.event, "mm_filemap_add_to_page_cache");
        assert_eq!(
            filemap_pages(h.payload),
            Ok((file_owner(253, 6, 0x113b).unwrap(), 2723840 / 4096, 1))
        );

        let linux =
            "   cat-812     [001] d..2.   120.000001: mm_filemap_fault: dev=8:1 ino=1a ofs=8192";
        let Ok(Line::Event(h)) = classify(linux, false) else {
            panic!("linux line")
        };
        assert_eq!((h.comm, h.pid, h.tgid), (Some("cat"), 812, None));
        assert_eq!(
            filemap_key(h.payload),
            Ok((file_owner(8, 1, 0x1a).unwrap(), 2))
        );

        let tgid = "  Chrome IO-thread-77 (     70) [000] ..... 5.5: task_rename: pid=70 oldcomm=a newcomm=b c oom_score_adj=0";
        let Ok(Line::Event(h)) = classify(tgid, false) else {
            panic!("tgid line")
        };
        assert_eq!(
            (h.comm, h.pid, h.tgid),
            (Some("Chrome IO-thread"), 77, Some(70))
        );
        assert_eq!(h.time_ns, 5_500_000_000);
        assert_eq!(
            text_between(h.payload, "newcomm=", " oom_score_adj="),
            Some("b c")
        );
    }

    #[test]
    fn folio_order_gives_pages() {
        assert_eq!(
            filemap_pages("dev 8:1 ino ff pfn=0x1000 ofs=16384 order=2"),
            Ok((file_owner(8, 1, 0xff).unwrap(), 4, 4))
        );
    }
}
