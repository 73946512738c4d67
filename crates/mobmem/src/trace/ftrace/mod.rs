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

// By concern: the grammar of a line's head (`line`), the fields of the event payloads
// (`payload`), what each line does to the import (`events`), processes and threads
// (`tasks`), `read()` calls rebuilt from their batches (`reads`), the end of an import
// (`finish`) and the report (`report`).
mod events;
mod finish;
pub(crate) mod line;
pub(crate) mod payload;
mod reads;
pub(crate) mod record;
mod report;
mod tasks;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::str::FromStr;

use serde::Serialize;

use super::shared::{Expansion, StoredBytes};
use super::{Event, Interner, ProcId, Trace};
use crate::{Error, Result};

use reads::{FileExtent, ReadBatch};
pub use report::{ImportReport, ImportedProcess, Skipped, MAX_EVENT_NAMES, MAX_SKIP_REASONS};
use tasks::{Forked, ProcState};

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
/// Over the whole import, the pages that ranges add beyond one a line are bounded by the
/// text read: [`EXPANSION_ALLOWANCE`](crate::trace::EXPANSION_ALLOWANCE) plus
/// [`EXPANSION_PER_BYTE`](crate::trace::EXPANSION_PER_BYTE) a byte; past that the import
/// fails (whether or not it is strict) naming the line.
pub const MAX_EVENT_PAGES: u64 = 1 << 19;

/// Highest page index a line may give in pages (Perfetto's `index=`, `last_index=`): the
/// page of the highest byte offset the kernel's `ofs=` can give, so both spellings name
/// the same pages (and a page index never overflows as a byte offset).
pub const MAX_PAGE_INDEX: u64 = u64::MAX / PAGE_SIZE;

/// Lines in a row that are not event lines, past which the input is not ftrace text and
/// the import stops with an error: a systrace page's text before its trace data is a
/// few thousand lines, and an endless stream of other bytes would otherwise be read
/// for ever.
pub const MAX_LINES_WITHOUT_EVENT: u64 = 1 << 20;

/// `oom_score_adj` given to a process marked background: the bottom of Android's cached
/// range (ActivityManager `ProcessList.CACHED_APP_MIN_ADJ`).
pub const ADJ_MARKED_BACKGROUND: i16 = 900;

/// Input markers of atrace: a `B|PID|NAME` slice whose name starts with one of these is
/// a user input delivered to process PID (`ViewRootImpl` and `InputConsumer` on Android).
pub const INPUT_MARKERS: [&str; 3] = ["deliverInputEvent", "InputConsumer", "processInputEvent"];

/// Input markers of one process closer than this to its previous one belong to the same
/// gesture (a swipe delivers an event every frame), which is one interaction.
pub const INPUT_GESTURE_GAP_NS: u64 = 100_000_000;

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

/// Streams ftrace text lines into a trace; see the module documentation.
pub struct FtraceImporter {
    name: PathBuf,
    options: ImportOptions,
    line: u64,
    seen_event: bool,
    /// Lines since the last event line (see [`MAX_LINES_WITHOUT_EVENT`]).
    lines_without_event: u64,
    /// Whether a well-formed event line was read (`seen_event` also counts a line that
    /// only looks like one): how the error past the limit says where it counted from.
    event_line_seen: bool,
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
    /// Bytes of text pushed so far.
    bytes_read: u64,
    /// Pages that events' ranges added beyond their first (read batches: the room they
    /// took), bounded by the text read.
    expansion: Expansion,
    /// Stored bytes read (compressed bytes of a zstd file), which bound the expansion.
    stored: StoredBytes,
    /// Why the line being imported stops the import (a limit passed): set with the error
    /// an event returns, which is then fatal instead of a malformed line.
    over_limit: Option<String>,
    /// Where the current event is, for an input that is not text (see
    /// [`FtraceImporter::position`]); `None`: its line.
    record_at: Option<crate::Position>,
    report: ImportReport,
}

impl FtraceImporter {
    /// `name` stands for the input in errors (a file, or `trace_pipe`).
    pub fn new(name: &Path, options: ImportOptions) -> Self {
        FtraceImporter {
            name: name.to_path_buf(),
            options,
            line: 0,
            seen_event: false,
            lines_without_event: 0,
            event_line_seen: false,
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
            bytes_read: 0,
            expansion: Expansion::default(),
            stored: StoredBytes::default(),
            over_limit: None,
            record_at: None,
            report: ImportReport::default(),
        }
    }

    /// Lines read so far.
    pub fn lines(&self) -> u64 {
        self.line
    }

    /// Events built so far.
    pub fn events(&self) -> usize {
        self.events.len()
    }
}

/// Import a whole ftrace text file (zstd-compressed or not).
pub fn import_file(path: &Path, options: ImportOptions) -> Result<(Trace, ImportReport)> {
    let (input, stored) = super::open::open_bytes_metered(path)?;
    let mut input = std::io::BufReader::with_capacity(1 << 16, input);
    let mut importer = FtraceImporter::new(path, options);
    importer.stored = stored;
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
