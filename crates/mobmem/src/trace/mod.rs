//! The trace model: what happened, in order, on the device being simulated.
//!
//! A trace is a sequence of [`Event`]s. Pages and processes are interned when a trace is
//! read or generated, so events carry dense integer ids ([`PageId`], [`ProcId`]) and the
//! simulator's hot loop indexes vectors instead of hashing keys. The key of each page
//! ([`PageKey`]) and the pid and name of each process ([`ProcessInfo`]) live in the
//! trace's tables.
//!
//! Formats (see `docs/trace-formats.md`): the binary `.mmt` format ([`mmt`]), a CSV text
//! format ([`csv`]), and, read only, the ARC paper's `.lis` text ([`lis`]), any text
//! trace by a column spec or a preset of one ([`columns`]), and the binary traces
//! libCacheSim reads: `oracleGeneral` ([`oracle`]), `vscsi` ([`vscsi`]), `twr` and `twrNS`
//! ([`twr`]). Any of them may be zstd- or gzip-compressed.

pub mod columns;
pub mod csv;
pub mod foreground;
pub mod ftrace;
pub mod lis;
pub mod mmt;
pub mod object_ids;
mod open;
pub mod oracle;
pub mod perfetto;
mod records;
mod shared;
pub mod summary;
pub mod twr;
pub mod vscsi;

pub use open::{
    object_ids_of, object_ids_to_hash, open, open_data, open_stream, read_all, read_all_data,
    write, zstd_bound, Format, MAX_ZSTD_EXPANSION, ZSTD_ALLOWANCE,
};
pub use shared::{PartialFile, EXPANSION_ALLOWANCE, EXPANSION_PER_BYTE, MAX_LINE_BYTES};

use std::collections::HashMap;
use std::hash::BuildHasher;

use hashbrown::HashTable;

/// Dense id of a page within one trace: an index into the trace's page table.
pub type PageId = u32;
/// Dense id of a process within one trace: an index into the trace's process table.
pub type ProcId = u32;

/// Largest process id an event can carry (27 bits, see [`Event`]).
pub const MAX_PROC_ID: ProcId = (1 << 27) - 1;

/// `oom_score_adj` of the foreground (top) app on Android.
pub const ADJ_FOREGROUND: i16 = 0;
/// `oom_score_adj` of the previous app (the last one to leave the foreground).
pub const ADJ_PREVIOUS: i16 = 700;
/// `oom_score_adj` of a cached app (in the background, nothing running).
pub const ADJ_CACHED: i16 = 900;
/// `oom_score_adj` assumed for a process whose importance the trace never states:
/// the top of the cached range, i.e. background.
pub const ADJ_UNKNOWN: i16 = 1000;

/// What an event is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum EventKind {
    /// A page access (read or write, file or anonymous page).
    Access,
    /// A change of a process's importance (`oom_score_adj`).
    Importance,
    /// A process started (or was first seen).
    Start,
    /// A process exited.
    Exit,
    /// The kernel wrote an anonymous page out to swap (replayed swap I/O traces).
    SwapOut,
    /// The kernel read a swapped-out page back in (a swap-in fault).
    SwapIn,
    /// The process received a user input event (touch, key): it is the interactive task
    /// from now until another process receives one. An input also starts a new
    /// interaction, the unit response time is measured in (Kim, SNU 2016).
    Input,
}

/// One trace event, 16 bytes, the same layout in memory and in `.mmt` files:
///
/// | bytes | field | meaning |
/// |---|---|---|
/// | 0..8 | `time_ns` | u64, nanoseconds since the start of the trace |
/// | 8..12 | `word` | bits 0..27 process id, 27..30 kind (0 access, 1 importance, 2 start, 3 exit, 4 swap-out, 5 swap-in, 6 input), bit 30 write, bit 31 anonymous |
/// | 12..16 | `arg` | access, swap-out, swap-in: page id; importance: `oom_score_adj` as i32; otherwise 0 |
///
/// (Version 1 of `.mmt` had 28-bit process ids and 2-bit kinds; its reader converts.)
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Event {
    time_ns: u64,
    word: u32,
    arg: u32,
}

const KIND_SHIFT: u32 = 27;
const KIND_MASK: u32 = 7;
const WRITE_BIT: u32 = 1 << 30;
const ANON_BIT: u32 = 1 << 31;

impl Event {
    pub fn access(time_ns: u64, proc: ProcId, page: PageId, write: bool, anon: bool) -> Self {
        debug_assert!(proc <= MAX_PROC_ID);
        let mut word = proc;
        if write {
            word |= WRITE_BIT;
        }
        if anon {
            word |= ANON_BIT;
        }
        Event {
            time_ns,
            word,
            arg: page,
        }
    }

    /// Importance change; `oom_score_adj` is clamped to the kernel's -1000..=1000.
    pub fn importance(time_ns: u64, proc: ProcId, oom_score_adj: i16) -> Self {
        let adj = oom_score_adj.clamp(-1000, 1000);
        Event {
            time_ns,
            word: proc | (1 << KIND_SHIFT),
            arg: adj as i32 as u32,
        }
    }

    pub fn start(time_ns: u64, proc: ProcId) -> Self {
        Event {
            time_ns,
            word: proc | (2 << KIND_SHIFT),
            arg: 0,
        }
    }

    pub fn exit(time_ns: u64, proc: ProcId) -> Self {
        Event {
            time_ns,
            word: proc | (3 << KIND_SHIFT),
            arg: 0,
        }
    }

    /// Anonymous `page` of `proc` written out to swap.
    pub fn swap_out(time_ns: u64, proc: ProcId, page: PageId) -> Self {
        Event {
            time_ns,
            word: proc | (4 << KIND_SHIFT) | ANON_BIT,
            arg: page,
        }
    }

    /// Anonymous `page` of `proc` read back from swap.
    pub fn swap_in(time_ns: u64, proc: ProcId, page: PageId) -> Self {
        Event {
            time_ns,
            word: proc | (5 << KIND_SHIFT) | ANON_BIT,
            arg: page,
        }
    }

    /// `proc` received a user input event.
    pub fn input(time_ns: u64, proc: ProcId) -> Self {
        Event {
            time_ns,
            word: proc | (6 << KIND_SHIFT),
            arg: 0,
        }
    }

    /// The kind bits of a raw event word (value 7 is invalid).
    #[inline]
    pub(crate) fn raw_kind(word: u32) -> u32 {
        (word >> KIND_SHIFT) & KIND_MASK
    }

    #[inline]
    pub fn time_ns(&self) -> u64 {
        self.time_ns
    }

    #[inline]
    pub fn proc(&self) -> ProcId {
        self.word & MAX_PROC_ID
    }

    #[inline]
    pub fn kind(&self) -> EventKind {
        match Self::raw_kind(self.word) {
            0 => EventKind::Access,
            1 => EventKind::Importance,
            2 => EventKind::Start,
            3 => EventKind::Exit,
            4 => EventKind::SwapOut,
            5 => EventKind::SwapIn,
            // Readers reject 7; constructors never make it.
            _ => EventKind::Input,
        }
    }

    #[inline]
    pub fn is_access(&self) -> bool {
        Self::raw_kind(self.word) == 0
    }

    /// The page of an access, swap-out or swap-in (meaningless for other kinds).
    #[inline]
    pub fn page(&self) -> PageId {
        self.arg
    }

    #[inline]
    pub fn is_write(&self) -> bool {
        self.word & WRITE_BIT != 0
    }

    #[inline]
    pub fn is_anon(&self) -> bool {
        self.word & ANON_BIT != 0
    }

    /// The `oom_score_adj` of an importance event (meaningless for other kinds).
    #[inline]
    pub fn oom_score_adj(&self) -> i16 {
        self.arg as i32 as i16
    }

    /// Encode as the 16 little-endian bytes of a `.mmt` record.
    pub fn to_bytes(&self) -> [u8; 16] {
        let mut out = [0u8; 16];
        out[0..8].copy_from_slice(&self.time_ns.to_le_bytes());
        out[8..12].copy_from_slice(&self.word.to_le_bytes());
        out[12..16].copy_from_slice(&self.arg.to_le_bytes());
        out
    }

    /// The raw fields, as laid out in a `.mmt` version 2 record.
    pub(crate) fn from_raw(time_ns: u64, word: u32, arg: u32) -> Self {
        Event { time_ns, word, arg }
    }

    /// Decode a `.mmt` record without validating ids against the tables.
    pub fn from_bytes(bytes: &[u8; 16]) -> Self {
        Event {
            time_ns: u64::from_le_bytes(bytes[0..8].try_into().unwrap()),
            word: u32::from_le_bytes(bytes[8..12].try_into().unwrap()),
            arg: u32::from_le_bytes(bytes[12..16].try_into().unwrap()),
        }
    }
}

/// Whether a page caches a file or belongs to a process's anonymous memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum PageKind {
    /// Keyed by (file id, page index). Blocks of public cache traces are file pages of
    /// file id 0 (a device).
    File,
    /// Keyed by (pid, virtual page number).
    Anon,
}

/// What a page is, independent of any trace.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct PageKey {
    pub kind: PageKind,
    /// File id (inode) for file pages, pid for anonymous pages.
    pub owner: u64,
    /// Page index in the file, or virtual page number.
    pub index: u64,
}

impl PageKey {
    pub fn file(file: u64, index: u64) -> Self {
        PageKey {
            kind: PageKind::File,
            owner: file,
            index,
        }
    }

    pub fn anon(pid: u64, vpn: u64) -> Self {
        PageKey {
            kind: PageKind::Anon,
            owner: pid,
            index: vpn,
        }
    }
}

/// A process of the trace.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ProcessInfo {
    pub pid: u32,
    pub name: String,
}

/// The interned tables of a trace: ids index these vectors.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Tables {
    pub pages: Vec<PageKey>,
    pub processes: Vec<ProcessInfo>,
}

impl Tables {
    /// Each page's object id, by page id, when the trace's pages are objects: every key
    /// a file page of file 0, as the readers of object traces (oracleGeneral, vscsi,
    /// twr, a CSV by `obj-id-col`) key object `id` (file 0, index `id`). `None` for a
    /// trace of files or processes' pages, which have no single object id.
    pub fn object_ids(&self) -> Option<Vec<u64>> {
        self.pages
            .iter()
            .map(|key| (key.kind == PageKind::File && key.owner == 0).then_some(key.index))
            .collect()
    }

    /// [`Tables::object_ids`] for a policy to hash (`sim --hash-object-ids`), or why the
    /// trace read from `path` has none.
    pub fn object_ids_to_hash(
        &self,
        path: &std::path::Path,
    ) -> crate::Result<std::sync::Arc<[u64]>> {
        match self.object_ids() {
            Some(ids) => Ok(ids.into()),
            None => Err(crate::Error::config(
                "--hash-object-ids",
                format!(
                    "the pages of {} are not objects (it keys pages by file or process): \
                     only a trace of objects has object ids to hash",
                    path.display()
                ),
            )),
        }
    }
}

/// Builds [`Tables`] while a trace is read or generated: the first time a key is seen it
/// gets the next dense id.
///
/// Each page key is stored once, in the page table; the lookup table holds only the 4-byte
/// ids, hashed (with a fast non-cryptographic hash) and compared through the page table.
/// The page table grows by at most [`PAGE_TABLE_STEP`] entries at a time once it is that
/// large, so that its spare capacity stays small: about 31 bytes a distinct page at 50
/// million pages ([`Interner::page_bytes`]), against 87 with a map of keys to ids.
#[derive(Debug, Default)]
pub struct Interner {
    tables: Tables,
    /// The id of every page, found by the hash of its key in `tables.pages`.
    page_ids: HashTable<PageId>,
    /// Current process id of each pid (a pid reused under a new name gets a new id).
    proc_ids: HashMap<u32, ProcId>,
    /// Per process: whether its start event was seen.
    started: Vec<bool>,
}

/// Entries the interner's page table grows by, at most, once it has that many (24 MiB
/// of keys): the table doubles up to this size, then grows by this many.
pub const PAGE_TABLE_STEP: usize = 1 << 20;

/// The hash of a page key in the interner's lookup table (fixed, so that runs are alike).
#[inline]
fn page_hash(key: &PageKey) -> u64 {
    const STATE: foldhash::fast::FixedState = foldhash::fast::FixedState::with_seed(0);
    STATE.hash_one(key)
}

impl Interner {
    pub fn new() -> Self {
        Self::default()
    }

    /// Dense id of `key`, allocating one if it is new. `None` when ids are exhausted.
    #[inline]
    pub fn page(&mut self, key: PageKey) -> Option<PageId> {
        let hash = page_hash(&key);
        let pages = &mut self.tables.pages;
        if let Some(&id) = self.page_ids.find(hash, |&id| pages[id as usize] == key) {
            return Some(id);
        }
        let id = PageId::try_from(pages.len()).ok()?;
        if id == PageId::MAX {
            return None;
        }
        if pages.len() == pages.capacity() {
            // Double while small; then steps, so the spare capacity stays a small share.
            pages.reserve_exact(pages.len().clamp(64, PAGE_TABLE_STEP));
        }
        if self.page_ids.len() == self.page_ids.capacity() {
            // Grown by hand, reading the keys in id order: the table's own growth would
            // rehash its entries in slot order, a cache miss in `pages` for each one
            // once the table holds millions.
            let mut grown = HashTable::with_capacity((2 * self.page_ids.len()).max(16));
            for (id, key) in pages.iter().enumerate() {
                grown.insert_unique(page_hash(key), id as PageId, |&id| {
                    page_hash(&pages[id as usize])
                });
            }
            self.page_ids = grown;
        }
        pages.push(key);
        self.page_ids
            .insert_unique(hash, id, |&id| page_hash(&pages[id as usize]));
        Some(id)
    }

    /// Dense id of `key`, the page after `previous` in a run of pages (a block request's
    /// next page): when the two were first seen together their ids are consecutive, and
    /// that is checked with one comparison in the entry beside `previous`'s before the
    /// key is hashed. The id is [`Interner::page`]'s either way.
    #[inline]
    pub fn page_after(&mut self, previous: PageId, key: PageKey) -> Option<PageId> {
        let next = previous.wrapping_add(1);
        match self.tables.pages.get(next as usize) {
            Some(k) if *k == key => Some(next),
            _ => self.page(key),
        }
    }

    /// Bytes the interner holds for its pages: the page table's capacity and the lookup
    /// table's allocation.
    pub fn page_bytes(&self) -> usize {
        self.tables.pages.capacity() * std::mem::size_of::<PageKey>()
            + self.page_ids.allocation_size()
    }

    /// Dense id of the process currently running as `pid`; a pid never seen gets a new
    /// process with an empty name.
    pub fn process(&mut self, pid: u32) -> Option<ProcId> {
        if let Some(&id) = self.proc_ids.get(&pid) {
            return Some(id);
        }
        self.new_process(pid, String::new())
    }

    /// A process starts as `pid` with `name`: a new process, unless the pid's current
    /// process was only seen before its start (by an access or an importance change), in
    /// which case this start is its own and names it. A process so has at most one start,
    /// and its table name is the one its start gave, so a trace written out and read
    /// back interns to the same ids.
    pub fn start_process(&mut self, pid: u32, name: &str) -> Option<ProcId> {
        if let Some(&id) = self.proc_ids.get(&pid) {
            if !self.started[id as usize] {
                self.started[id as usize] = true;
                self.tables.processes[id as usize].name = name.to_string();
                return Some(id);
            }
        }
        let id = self.new_process(pid, name.to_string())?;
        self.started[id as usize] = true;
        Some(id)
    }

    fn new_process(&mut self, pid: u32, name: String) -> Option<ProcId> {
        let id = ProcId::try_from(self.tables.processes.len()).ok()?;
        if id > MAX_PROC_ID {
            return None;
        }
        self.tables.processes.push(ProcessInfo { pid, name });
        self.started.push(false);
        self.proc_ids.insert(pid, id);
        Some(id)
    }

    pub fn tables(&self) -> &Tables {
        &self.tables
    }

    pub fn into_tables(self) -> Tables {
        self.tables
    }
}

/// A whole trace in memory.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Trace {
    pub events: Vec<Event>,
    pub tables: Tables,
}

impl Trace {
    /// Distinct pages (the trace's footprint).
    pub fn footprint(&self) -> usize {
        self.tables.pages.len()
    }

    pub fn accesses(&self) -> impl Iterator<Item = &Event> + '_ {
        self.events.iter().filter(|e| e.is_access())
    }
}

/// A stream of events read from a file, in batches so that readers of any format can be
/// driven through one dynamic call per batch rather than per event.
pub trait EventSource {
    /// Clear `buf` and fill it with up to `max` next events. Returns `Ok(false)` when the
    /// trace is exhausted and `buf` was left empty.
    fn read_batch(&mut self, buf: &mut Vec<Event>, max: usize) -> crate::Result<bool>;

    /// Number of distinct pages, when the format records it up front: a hint to size
    /// per-page state, bounded by what the input can hold, never a promise.
    fn page_count_hint(&self) -> Option<u64> {
        None
    }

    /// The object size in bytes of each event of the last batch (0 for events other than
    /// accesses), for formats that record sizes (oracleGeneral, vscsi, twr, twrNS); `None` for the others.
    fn batch_sizes(&self) -> Option<&[u32]> {
        None
    }

    /// Whether the source reads on a thread of its own, ahead of `read_batch`: a caller
    /// then needs no reading thread of its own ([`crate::core::events::for_each_batch`]).
    fn reads_ahead(&self) -> bool {
        false
    }

    /// The interned tables. Complete only once the stream has been read to its end.
    fn tables(&mut self) -> crate::Result<Tables>;

    /// Once `read_batch` has returned `false`: read and check whatever follows the events
    /// (a `.mmt` file's tables), so that a run over a stream reports a result only for a
    /// whole, valid file. Nothing needs to be kept: the default reads the tables and
    /// drops them.
    fn finish(&mut self) -> crate::Result<()> {
        self.tables().map(drop)
    }
}
