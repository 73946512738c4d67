//! The memory the file system's page cache lives in.
//!
//! There is one page cache, the memory's: a file page has an id in the machine's page
//! table ([`crate::core::memory::Memory`]), is cached when it holds a frame, and leaves
//! memory when reclaim evicts it (back to `Storage`, written back first when dirty), as
//! every file page does. The file system keeps no state of its own about it:
//! - [`FileIds`] names pages: each file name is interned once to ranges of page ids of
//!   that one table (its base plus the page's index in the file);
//! - [`MachineCache`] is the [`PageCache`] a read path asks: whether a page is in
//!   memory, and an access that brings it in through the machine (a frame, reclaim and
//!   its refaults included);
//! - [`FsMemory`] is a machine of a platform's RAM holding nothing but the page cache,
//!   with the files read through it: what [`read_file`](super::read_file) and
//!   [`read_twice`](super::read_twice) read on.
//!
//! The composed phone ([`crate::mm::phone`]) reads through its own machine instead, its
//! file pages numbered by the trace.

use std::collections::HashMap;

use super::read::{FilePage, PageCache, ReadCost, ReadPath};
use crate::core::memory::ReclaimCounters;
use crate::devices::platform::Platform;
use crate::mm::reclaim::{Fault, HighOrderConfig, Machine, ReclaimConfig};
use crate::trace::{PageId, ProcId};
use crate::Result;

/// The pages of each file: every file name interned once to ranges of page ids
/// (extents) of the memory's page table, in the order of its pages. It keeps no state
/// of the pages: where each one is, is the memory's.
///
/// A file gets ids for as many pages as the longest read of it. One read longer than
/// the file's ids extends its last range in place when that range is the last of all,
/// else adds a range at the end, of as many ids as the file had (so a file that grows a
/// page at a time has few ranges); the ids a file has are never moved, so the pages it
/// has in memory keep theirs. Ranges are never shared. Ids run from where the table
/// starts them to a limit (`PageId::MAX`): pages of a read that would need ids past it
/// get none, and are read as by a page cache with no room (from flash every time, never
/// cached).
#[derive(Debug, Clone)]
pub struct FileIds {
    ids: HashMap<String, usize>,
    /// Each file's ranges, by its index.
    files: Vec<Vec<Extent>>,
    /// The first page id past every range.
    end: u64,
    /// One past the largest page id a range may use.
    limit: u64,
}

/// The page ids `base..base + len`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Extent {
    base: PageId,
    len: u32,
}

impl Default for FileIds {
    fn default() -> Self {
        FileIds::starting_at(0)
    }
}

impl FileIds {
    pub fn new() -> Self {
        Self::default()
    }

    /// Ids from `first` on (the pages below belong to others), up to `PageId::MAX`.
    pub fn starting_at(first: PageId) -> Self {
        FileIds::within(first, PageId::MAX)
    }

    /// Ids in `first..limit`.
    pub fn within(first: PageId, limit: PageId) -> Self {
        FileIds {
            ids: HashMap::new(),
            files: Vec::new(),
            end: u64::from(first),
            limit: u64::from(limit.max(first)),
        }
    }

    /// The id of page `index` of `file`, if it has one.
    pub fn id(&self, file: &str, index: usize) -> Option<PageId> {
        let mut left = index;
        for e in &self.files[*self.ids.get(file)?] {
            if left < e.len as usize {
                return Some(e.base + left as PageId);
            }
            left -= e.len as usize;
        }
        None
    }

    /// Every id `file` has, in the order of its pages.
    pub fn all_ids(&self, file: &str) -> Vec<PageId> {
        self.ids
            .get(file)
            .map_or_else(Vec::new, |&f| self.all_ids_of(f))
    }

    /// The ids of the first `pages` pages of `file`, interning it and giving it more ids
    /// as needed: all of them, unless the ids ran out (then the first ones).
    pub fn ids(&mut self, file: &str, pages: usize) -> Vec<PageId> {
        let f = match self.ids.get(file) {
            Some(&f) => f,
            None => {
                self.ids.insert(file.to_string(), self.files.len());
                self.files.push(Vec::new());
                self.files.len() - 1
            }
        };
        let have: u64 = self.files[f].iter().map(|e| u64::from(e.len)).sum();
        if (pages as u64) > have {
            self.grow(f, have, pages as u64 - have);
        }
        let mut ids = self.all_ids_of(f);
        ids.truncate(pages);
        ids
    }

    fn all_ids_of(&self, f: usize) -> Vec<PageId> {
        self.files[f]
            .iter()
            .flat_map(|e| e.base..e.base + e.len)
            .collect()
    }

    /// Give file `f`, which has `have` ids, `missing` more: in place when its last range
    /// is the last of all, else a new range of at least `have` ids; as many as the limit
    /// allows when it does not allow that many.
    fn grow(&mut self, f: usize, have: u64, missing: u64) {
        let room = self.limit - self.end;
        let last_of_all = self.files[f]
            .last()
            .is_some_and(|e| u64::from(e.base) + u64::from(e.len) == self.end);
        let mut add = if last_of_all {
            missing
        } else {
            missing.max(have)
        };
        if add > room {
            add = missing.min(room);
        }
        let add = u32::try_from(add).unwrap_or(u32::MAX);
        if add == 0 {
            return;
        }
        match self.files[f].last_mut() {
            Some(e) if last_of_all && e.len.checked_add(add).is_some() => e.len += add,
            // `end` is below the limit, so a page id.
            _ => self.files[f].push(Extent {
                base: self.end as PageId,
                len: add,
            }),
        }
        self.end += u64::from(add);
    }

    /// The first id past every range.
    pub fn end(&self) -> u64 {
        self.end
    }

    /// Files known.
    pub fn len(&self) -> usize {
        self.files.len()
    }

    pub fn is_empty(&self) -> bool {
        self.files.is_empty()
    }
}

/// The machine's memory as a file system's page cache, for reads and writes by `proc`
/// (who owns the pages it brings in, as the task that faulted them in).
pub struct MachineCache<'a> {
    machine: &'a mut Machine,
    proc: ProcId,
    /// The page fault the last access took, if it took one.
    pub fault: Option<Fault>,
    /// Whether an access was made (the page went through the page cache).
    pub accessed: bool,
}

impl<'a> MachineCache<'a> {
    pub fn new(machine: &'a mut Machine, proc: ProcId) -> Self {
        MachineCache {
            machine,
            proc,
            fault: None,
            accessed: false,
        }
    }
}

impl PageCache for MachineCache<'_> {
    fn holds(&self, page: PageId) -> bool {
        self.machine.mem.frame_of(page).is_some()
    }

    fn access(&mut self, page: PageId, write: bool) -> Result<()> {
        self.accessed = true;
        self.fault = self.machine.access(page, self.proc, false, write)?;
        Ok(())
    }
}

/// RAM of each shipped platform, MiB: the paper's board has 64 MB of SDRAM (its
/// section 3); the modern phone 8 GiB (as `experiments/phone.toml`).
pub const PLATFORM_RAM_MIB: [(&str, usize); 2] = [("pxa250", 64), ("modern-phone", 8192)];

/// RAM of a platform not listed (a profile from a file), MiB: the paper board's.
pub const OTHER_RAM_MIB: usize = 64;

/// The RAM of `platform`, in 4 KiB frames ([`PLATFORM_RAM_MIB`] by its name, else
/// [`OTHER_RAM_MIB`]).
pub fn ram_pages(platform: &Platform) -> usize {
    let mib = PLATFORM_RAM_MIB
        .iter()
        .find(|(name, _)| *name == platform.name)
        .map_or(OTHER_RAM_MIB, |&(_, mib)| mib);
    mib * 256
}

/// The process that reads the files of an [`FsMemory`].
pub const READER: ProcId = 0;

/// A machine whose memory holds nothing but the page cache, and the files read through
/// it. Its memory is all page cache: no frame is reserved or unmovable and there is no
/// swap (the kernel's own memory and other processes are not modelled); reclaim is the
/// stock two-list LRU (Linux 3.4) with its zone watermarks, so a memory full of file
/// pages evicts the least recently used ones.
pub struct FsMemory {
    machine: Machine,
    files: FileIds,
    memory_pages: usize,
}

impl FsMemory {
    /// A memory of `memory_pages` frames (an error when reclaim's watermarks leave too
    /// little of it, or it is larger than a run may simulate).
    pub fn new(memory_pages: usize) -> Result<Self> {
        Ok(FsMemory {
            machine: Self::machine_of(memory_pages)?,
            files: FileIds::new(),
            memory_pages,
        })
    }

    /// A memory of `platform`'s RAM ([`ram_pages`]).
    pub fn for_platform(platform: &Platform) -> Result<Self> {
        Self::new(ram_pages(platform))
    }

    fn machine_of(memory_pages: usize) -> Result<Machine> {
        let config = ReclaimConfig {
            policy: "stock".into(),
            memory_pages,
            reserved_pages: 0,
            unmovable_per_mille: 0,
            swap_pages: 0,
            high_order: HighOrderConfig {
                process: String::new(),
                ..HighOrderConfig::default()
            },
            ..ReclaimConfig::default()
        };
        Machine::new(&config, 0, 1)
    }

    /// Frames of memory.
    pub fn memory_pages(&self) -> usize {
        self.memory_pages
    }

    /// The machine: its memory's page table, frames and reclaim counters.
    pub fn machine(&self) -> &Machine {
        &self.machine
    }

    pub fn machine_mut(&mut self) -> &mut Machine {
        &mut self.machine
    }

    /// The files' page ids.
    pub fn files(&self) -> &FileIds {
        &self.files
    }

    /// The ids of the first `pages` pages of `file` ([`FileIds::ids`]).
    pub fn ids_of(&mut self, file: &str, pages: usize) -> Vec<PageId> {
        self.files.ids(file, pages)
    }

    /// Read `page` along `path` through this memory's page cache (counts only).
    pub fn read(&mut self, path: ReadPath, page: FilePage) -> Result<ReadCost> {
        path.fs()
            .read(&mut MachineCache::new(&mut self.machine, READER), page)
    }

    /// Write `page` along `path` through this memory's page cache (counts only).
    pub fn write(&mut self, path: ReadPath, page: FilePage) -> Result<ReadCost> {
        path.fs()
            .write(&mut MachineCache::new(&mut self.machine, READER), page)
    }

    /// Whether page `index` of `file` is in memory.
    pub fn is_cached(&self, file: &str, index: usize) -> bool {
        self.files
            .id(file, index)
            .is_some_and(|id| self.machine.mem.frame_of(id).is_some())
    }

    /// Pages in the page cache, over all files.
    pub fn cached_pages(&self) -> u64 {
        self.machine.mem.lru_pages() as u64
    }

    /// Drops every page of `file` (it was rewritten or deleted): those in memory give
    /// their frames back, unwritten; its ids stay its own, so reading it again finds
    /// none of its pages cached (a cold read, not a refault) and reuses them. Returns
    /// how many were in memory.
    pub fn forget(&mut self, file: &str) -> u64 {
        let mut dropped = 0;
        for id in self.files.all_ids(file) {
            dropped += u64::from(self.machine.mem.frame_of(id).is_some());
            self.machine.discard(id);
        }
        dropped
    }

    /// Empties the page cache and forgets every file: afterwards the memory is as
    /// [`FsMemory::new`] makes it. When reclaim never ran, every file's pages are
    /// dropped (nothing else changed); otherwise the machine is built again.
    pub fn clear(&mut self) -> Result<()> {
        let m = &self.machine;
        let untouched = m.mem.counters == ReclaimCounters::default()
            && m.kswapd_runs == 0
            && m.direct_reclaims == 0
            && m.reserve_dips == 0;
        if untouched {
            for f in 0..self.files.files.len() {
                for id in self.files.all_ids_of(f) {
                    self.machine.discard(id);
                }
            }
        } else {
            self.machine = Self::machine_of(self.memory_pages)?;
        }
        self.files = FileIds::new();
        Ok(())
    }

    /// The machine's invariants ([`Machine::check`]).
    pub fn check(&self) -> std::result::Result<(), String> {
        self.machine.check()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::memory::FaultKind;
    use crate::core::pages::Location;
    use crate::mm::fs::read::read_file;
    use crate::mm::fs::{Codec, StoredFile, StoredPage};

    fn raw_file(name: &str, pages: usize) -> StoredFile {
        StoredFile {
            name: name.into(),
            codec: Codec::Zlib,
            pages: vec![StoredPage::new(false, 4096, 4096); pages],
        }
    }

    #[test]
    fn a_page_evicted_by_reclaim_is_read_from_flash_again_as_a_refault() {
        let platform = Platform::pxa250();
        // 256 frames: kswapd wakes below 40 free and reclaims up to 48 free.
        let mut mem = FsMemory::new(256).unwrap();
        let a = raw_file("a", 100);
        let first = read_file(&a, ReadPath::PAGE_CACHE, &platform, &mut mem).unwrap();
        assert_eq!((first.cache_hits, mem.cached_pages()), (0, 100));
        // Reading 200 more pages does not fit: reclaim drops a's pages, the oldest.
        read_file(
            &raw_file("b", 200),
            ReadPath::PAGE_CACHE,
            &platform,
            &mut mem,
        )
        .unwrap();
        let counters = &mem.machine().mem.counters;
        assert!(counters.file_drops >= 44, "{counters:?}");
        assert!(mem.cached_pages() <= 256 - 40);
        let a0 = mem.files().id("a", 0).unwrap();
        assert!(!mem.is_cached("a", 0));
        assert_eq!(mem.machine().mem.pages().location(a0), Location::Storage);
        mem.check().unwrap();
        // Read again, an evicted page costs its flash read again, and the memory counts
        // it as a refault.
        let page = FilePage {
            id: a0,
            stored: a.pages[0],
        };
        let mut cache = MachineCache::new(mem.machine_mut(), READER);
        let again = ReadPath::PAGE_CACHE.fs().read(&mut cache, page).unwrap();
        assert_eq!(cache.fault.map(|f| f.kind), Some(FaultKind::FileRefault));
        assert_eq!(again, ReadCost::into_page_cache(&a.pages[0]));
        assert_eq!((again.cache_hits, again.flash_bytes), (0, 4096));
        // The whole file again: what reclaim kept is a hit, the rest comes from flash.
        let whole = read_file(&a, ReadPath::PAGE_CACHE, &platform, &mut mem).unwrap();
        assert!(whole.flash_bytes >= 44 * 4096 && whole.cache_hits < 100);
        assert_eq!(whole.flash_bytes, (100 - whole.cache_hits) * 4096);
        mem.check().unwrap();
    }

    #[test]
    fn the_selective_path_takes_no_frame_for_raw_pages() {
        let platform = Platform::modern_phone();
        let mut mem = FsMemory::new(256).unwrap();
        let free = mem.machine().mem.free();
        // 1000 raw pages, four times the memory: nothing enters it, nothing is evicted.
        let cost = read_file(
            &raw_file("media", 1000),
            ReadPath::SELECTIVE,
            &platform,
            &mut mem,
        )
        .unwrap();
        assert_eq!((cost.pages_allocated, cost.flash_bytes), (0, 1000 * 4096));
        assert_eq!(mem.machine().mem.free(), free);
        assert_eq!(mem.cached_pages(), 0);
        assert_eq!(mem.machine().mem.counters, ReclaimCounters::default());
        let pages = mem.machine().mem.pages();
        assert!(mem
            .files()
            .all_ids("media")
            .iter()
            .all(|&id| pages.location(id) == Location::Absent));
        // The same file on the stock path fills memory and makes reclaim evict.
        read_file(
            &raw_file("media", 1000),
            ReadPath::PAGE_CACHE,
            &platform,
            &mut mem,
        )
        .unwrap();
        assert!(mem.machine().mem.free() < free);
        assert!(mem.machine().mem.counters.file_drops > 0);
        mem.check().unwrap();
    }

    #[test]
    fn a_memory_of_a_platform_has_its_ram() {
        assert_eq!(ram_pages(&Platform::pxa250()), 64 * 256);
        assert_eq!(ram_pages(&Platform::modern_phone()), 8192 * 256);
        let mut other = Platform::pxa250();
        other.name = "custom".into();
        assert_eq!(ram_pages(&other), OTHER_RAM_MIB * 256);
        let mem = FsMemory::for_platform(&Platform::pxa250()).unwrap();
        assert_eq!(mem.machine().mem.total(), 16384);
        // Too small for reclaim's watermarks: an error, not a panic.
        assert!(FsMemory::new(64).is_err());
    }

    #[test]
    fn clearing_after_reclaim_builds_the_machine_again() {
        let platform = Platform::pxa250();
        let mut mem = FsMemory::new(256).unwrap();
        read_file(
            &raw_file("big", 400),
            ReadPath::PAGE_CACHE,
            &platform,
            &mut mem,
        )
        .unwrap();
        assert!(mem.machine().mem.counters.reclaimed > 0);
        mem.clear().unwrap();
        assert_eq!(mem.machine().mem.counters, ReclaimCounters::default());
        assert_eq!((mem.cached_pages(), mem.machine().mem.free()), (0, 256));
        assert!(mem.files().is_empty());
    }

    #[test]
    fn file_ids_grow_in_place_or_in_new_ranges_and_never_move() {
        let mut ids = FileIds::starting_at(10);
        assert_eq!(ids.ids("f", 2), [10, 11]);
        // Last of all: grows in place.
        assert_eq!(ids.ids("f", 3), [10, 11, 12]);
        assert_eq!(ids.ids("g", 2), [13, 14]);
        // Not last: a new range of at least as many ids as it had.
        assert_eq!(ids.ids("f", 4), [10, 11, 12, 15]);
        assert_eq!(ids.all_ids("f"), [10, 11, 12, 15, 16, 17]);
        assert_eq!(ids.end(), 18);
        // A shorter read takes its first ids; none change.
        assert_eq!(ids.ids("f", 1), [10]);
        assert_eq!(ids.id("f", 3), Some(15));
        assert_eq!(ids.id("f", 6), None);
        assert_eq!(ids.id("h", 0), None);
        assert_eq!(ids.len(), 2);
    }

    #[test]
    fn when_page_ids_run_out_pages_are_read_from_flash_and_not_cached() {
        let platform = Platform::pxa250();
        let mut mem = FsMemory::new(256).unwrap();
        // Three ids in all.
        mem.files = FileIds::within(0, 3);
        let f = raw_file("f", 2);
        read_file(&f, ReadPath::PAGE_CACHE, &platform, &mut mem).unwrap();
        let g = raw_file("g", 2);
        assert_eq!(mem.ids_of("g", 2), [2]);
        let first = read_file(&g, ReadPath::PAGE_CACHE, &platform, &mut mem).unwrap();
        let again = read_file(&g, ReadPath::PAGE_CACHE, &platform, &mut mem).unwrap();
        // g's first page has an id and is cached; its second has none: flash each time.
        assert_eq!((first.cache_hits, again.cache_hits), (0, 1));
        assert_eq!(again.flash_bytes, 4096);
        assert_eq!(mem.cached_pages(), 3);
        assert!(mem.is_cached("g", 0) && !mem.is_cached("g", 1));
        mem.check().unwrap();
    }
}
