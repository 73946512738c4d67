//! The read path of the file system and its cost (Song, Cha, "A Selective Usage of Page
//! Cache towards Low-Power Systems", KIISE: its sections 2 and 3, Figures 1 and 2).
//!
//! A file is read whole, sequentially, page by page. Each page first looks itself up in
//! the page cache; then, by what it is and which [`ReadPath`] is used:
//!
//! | page | page cache | selective |
//! |---|---|---|
//! | cached (a hit) | copy `data_len` to the user | same |
//! | compressed | flash read `stored_len` into a buffer, allocate a page-cache page, decompress into it, copy `data_len` to the user; now cached | same |
//! | raw | allocate a page-cache page, flash read `data_len` into it, copy to the user; now cached | flash read `data_len` straight into the user buffer; never cached |
//!
//! Every page read from flash (not a hit) also pays the file system's per-page work (node
//! lookup, data CRC). The counts are priced by a [`Platform`]; see its documentation for
//! the time and energy formulas.

use std::collections::HashMap;
use std::iter::Sum;
use std::ops::{Add, AddAssign};

use serde::{Deserialize, Serialize, Serializer};

use super::{Codec, StoredFile};
use crate::core::pages::{Location, PageTable, NO_FRAME, NO_OWNER};
use crate::core::stats::{Figures, Stats, Visitor};
use crate::devices::platform::Platform;
use crate::trace::PageId;
use crate::Result;

/// Which read path the file system uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ReadPath {
    /// Stock Linux and JFFS2: every page goes through the page cache.
    PageCache,
    /// The paper's proposal: pages stored raw bypass the page cache and are read from
    /// flash straight into the user buffer (`nocmpr_copy_to_user`); compressed pages
    /// still go through the page cache.
    Selective,
}

impl ReadPath {
    pub const ALL: [ReadPath; 2] = [ReadPath::PageCache, ReadPath::Selective];

    pub fn name(self) -> &'static str {
        match self {
            ReadPath::PageCache => "page-cache",
            ReadPath::Selective => "selective",
        }
    }

    pub fn named(name: &str) -> Result<Self> {
        crate::core::registry::choose("read path", &Self::ALL, Self::name, name)
    }
}

/// What one or more reads did and cost. Counters are exact; time and energy are priced
/// by the platform the read ran on, so costs of reads on the same platform add up.
///
/// Its figures are listed once (`read_cost_figures!` below, in field order): the
/// [`Stats`] listing, the sum of two costs and the keys it is written with all come from
/// that list. It is read back from the same keys (every field required, no other key).
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReadCost {
    /// Elapsed time, ns: the sum of every step's time (steps do not overlap).
    pub time_ns: f64,
    /// Time the CPU was busy, ns: everything but flash reads done by DMA.
    pub cpu_busy_ns: f64,
    /// Energy, nJ: base power over `time_ns`, CPU active power over `cpu_busy_ns`, and
    /// the per-byte and per-page energies of flash, RAM and allocation.
    pub energy_nj: f64,
    /// Pages read, hits included.
    pub pages: u64,
    /// Pages served from the page cache.
    pub cache_hits: u64,
    /// Bytes read from flash (`stored_len` of compressed pages, `data_len` of raw ones).
    pub flash_bytes: u64,
    /// Bytes produced by decompression.
    pub decompressed_bytes: u64,
    /// Bytes copied from RAM to RAM (page cache to user buffer).
    pub ram_copy_bytes: u64,
    /// Bytes read from RAM: copy sources and decompression input.
    pub ram_read_bytes: u64,
    /// Bytes written to RAM: flash-read destinations, decompression output and copy
    /// destinations.
    pub ram_write_bytes: u64,
    /// Page-cache pages allocated.
    pub pages_allocated: u64,
}

impl ReadCost {
    /// Pages that went to flash (every page that was not a hit).
    pub fn flash_pages(&self) -> u64 {
        self.pages.saturating_sub(self.cache_hits)
    }

    fn flash_read(&mut self, bytes: u64) {
        self.flash_bytes += bytes;
        self.ram_write_bytes += bytes;
    }

    fn decompress(&mut self, input: u64, output: u64) {
        self.decompressed_bytes += output;
        self.ram_read_bytes += input;
        self.ram_write_bytes += output;
    }

    fn copy_to_user(&mut self, bytes: u64) {
        self.ram_copy_bytes += bytes;
        self.ram_read_bytes += bytes;
        self.ram_write_bytes += bytes;
    }

    /// The time of these counts by step, ns, as `time_ns` adds them up: flash reads, then
    /// the CPU's work (decompression, copies to the user, page-cache allocations,
    /// page-cache lookups, the file system's per-page work), on `platform` for a file of
    /// `codec`. Names end in `_ns`.
    pub fn time_parts(&self, platform: &Platform, codec: Codec) -> [(&'static str, f64); 6] {
        let p = platform;
        [
            (
                "flash_read_ns",
                self.flash_bytes as f64 * p.flash_read_ns_per_byte(),
            ),
            (
                "decompress_ns",
                self.decompressed_bytes as f64 * p.decompress_ns_per_byte(codec),
            ),
            (
                "copy_ns",
                self.ram_copy_bytes as f64 * p.ram_copy_ns_per_byte(),
            ),
            (
                "page_alloc_ns",
                self.pages_allocated as f64 * p.page_alloc_ns,
            ),
            ("lookup_ns", self.pages as f64 * p.page_lookup_ns),
            ("fs_work_ns", self.flash_pages() as f64 * p.fs_page_ns),
        ]
    }

    /// The energy of these counts by term, nJ, as `energy_nj` adds them up: the system's
    /// base power over the read time, the CPU's active power over its busy time, flash
    /// reads, RAM reads, RAM writes and page allocations. `time_ns` and `cpu_busy_ns` must
    /// be priced on the same platform. Names end in `_nj`.
    pub fn energy_parts(&self, platform: &Platform) -> [(&'static str, f64); 6] {
        let p = platform;
        [
            ("base_energy_nj", p.base_w * self.time_ns),
            ("cpu_energy_nj", p.cpu_active_w * self.cpu_busy_ns),
            (
                "flash_energy_nj",
                p.flash_read_nj_per_byte() * self.flash_bytes as f64,
            ),
            (
                "ram_read_energy_nj",
                p.ram_read_nj_per_byte() * self.ram_read_bytes as f64,
            ),
            (
                "ram_write_energy_nj",
                p.ram_write_nj_per_byte() * self.ram_write_bytes as f64,
            ),
            (
                "page_alloc_energy_nj",
                p.page_alloc_nj * self.pages_allocated as f64,
            ),
        ]
    }

    /// Fills in time and energy of counts gathered by reading one file of `codec`.
    fn priced(mut self, platform: &Platform, codec: Codec) -> Self {
        let [flash, decompress, copy, alloc, lookup, fs_work] =
            self.time_parts(platform, codec).map(|(_, ns)| ns);
        let work_ns = decompress + copy + alloc + lookup + fs_work;
        let time_ns = work_ns + flash;
        self.time_ns = time_ns;
        self.cpu_busy_ns = if platform.flash_read_by_cpu {
            time_ns
        } else {
            work_ns
        };
        self.energy_nj = self
            .energy_parts(platform)
            .iter()
            .map(|(_, nj)| nj)
            .fold(0.0, |sum, nj| sum + nj);
        self
    }
}

/// The figures of a [`ReadCost`], listed once, each with the [`Visitor`] method that
/// reports it: its [`Stats`] listing (and so its names, its lookups and its serialized
/// keys) and its field-by-field sum both come from this one list.
macro_rules! read_cost_figures {
    ($($kind:ident $field:ident),+ $(,)?) => {
        impl Stats for ReadCost {
            fn visit(&self, v: &mut dyn Visitor) {
                $( v.$kind(stringify!($field), self.$field); )+
            }
        }

        impl AddAssign<&ReadCost> for ReadCost {
            fn add_assign(&mut self, other: &ReadCost) {
                $( self.$field += other.$field; )+
            }
        }
    };
}

read_cost_figures!(
    figure time_ns,
    figure cpu_busy_ns,
    figure energy_nj,
    count pages,
    count cache_hits,
    count flash_bytes,
    count decompressed_bytes,
    count ram_copy_bytes,
    count ram_read_bytes,
    count ram_write_bytes,
    count pages_allocated,
);

/// Written as its figures, by their [`Stats`] names (counters as integers).
impl Serialize for ReadCost {
    fn serialize<S: Serializer>(&self, serializer: S) -> std::result::Result<S::Ok, S::Error> {
        Figures(self).serialize(serializer)
    }
}

impl AddAssign for ReadCost {
    fn add_assign(&mut self, other: ReadCost) {
        *self += &other;
    }
}

impl Add for ReadCost {
    type Output = ReadCost;

    fn add(mut self, other: ReadCost) -> ReadCost {
        self += &other;
        self
    }
}

impl Sum for ReadCost {
    fn sum<I: Iterator<Item = ReadCost>>(iter: I) -> ReadCost {
        iter.fold(ReadCost::default(), Add::add)
    }
}

impl<'a> Sum<&'a ReadCost> for ReadCost {
    fn sum<I: Iterator<Item = &'a ReadCost>>(iter: I) -> ReadCost {
        iter.fold(ReadCost::default(), |mut total, cost| {
            total += cost;
            total
        })
    }
}

/// Which pages of which files are in the page cache.
///
/// The state is a core [`PageTable`]: a page in the page cache is at [`Location::Dram`];
/// a page of a known file that is not cached is at [`Location::Storage`] (only on flash);
/// every other page is [`Location::Absent`]. Each file name is interned once to a dense
/// file id, and each file gets a contiguous range of page ids (its base plus the page's
/// index in the file), so two files never share a page; a page's owner is its file's id.
///
/// A file read with more pages than its range holds gets a larger range: extended in
/// place when its range is the last one, else a new one at the end of the table, twice
/// as large, to which its pages' states move. Ranges are never shared, and a file's ranges
/// left behind add up to less than its current one, so the table stays within a small
/// multiple of the longest read of each file.
///
/// [`PageCacheState::forget`] resets the file's range in place: its pages become absent
/// (owner none) and the range stays the file's, so reading the file again, rewritten or
/// not, finds none of its pages cached and reuses the same page ids.
///
/// The cache is unbounded: nothing is evicted, as on a board whose RAM holds every file
/// read (64 MB of SDRAM against 32 MB of flash on the paper's board). A file rewritten
/// with new contents must be forgotten first. Page ids are 32 bits: once 2^32 - 1 pages
/// (16 TiB of files) have ranges, pages that would need more are read as the cache-full
/// case, from flash every time and never cached.
#[derive(Debug, Clone, Default)]
pub struct PageCacheState {
    /// The dense id of every file name seen since the last [`PageCacheState::clear`].
    ids: HashMap<String, FileId>,
    /// Each file's range of page ids, by file id.
    files: Vec<FileRange>,
    /// Where each page is: `Dram` when cached, `Storage` when only on flash.
    pages: PageTable,
    /// The first page id past every range.
    end: u64,
    cached_pages: u64,
}

/// A file's dense id: the owner of its pages in the page table.
type FileId = u32;

/// One past the largest page id a range may use ([`NO_OWNER`] is not a file id either).
const PAGE_IDS: u64 = PageId::MAX as u64;

/// The page ids of one file: `base..base + capacity`, of which the first `len` are its
/// pages (as many as the longest read of it since it was last forgotten); the others are
/// absent.
#[derive(Debug, Clone, Copy, Default)]
struct FileRange {
    base: PageId,
    len: u32,
    capacity: u32,
    /// Read since it was last forgotten.
    known: bool,
}

impl PageCacheState {
    pub fn new() -> Self {
        Self::default()
    }

    /// The range of `file`, if it is known (read since it was last forgotten).
    fn range(&self, file: &str) -> Option<FileRange> {
        self.ids
            .get(file)
            .map(|&id| self.files[id as usize])
            .filter(|range| range.known)
    }

    pub fn is_cached(&self, file: &str, page: usize) -> bool {
        self.range(file).is_some_and(|range| {
            page < range.len as usize
                && self.pages.location(range.base + page as PageId) == Location::Dram
        })
    }

    /// Pages in the cache, over all files.
    pub fn cached_pages(&self) -> u64 {
        self.cached_pages
    }

    /// Drops every page of `file` (it was rewritten or deleted): its range is reset in
    /// place, every page absent. Returns how many of them were cached.
    pub fn forget(&mut self, file: &str) -> u64 {
        let Some(&id) = self.ids.get(file) else {
            return 0;
        };
        let range = &mut self.files[id as usize];
        let mut dropped = 0;
        for page in range.base..range.base + range.len {
            dropped += u64::from(self.pages.location(page) == Location::Dram);
            self.pages.place(page, Location::Absent, NO_FRAME);
            self.pages.set_owner(page, NO_OWNER);
        }
        range.len = 0;
        range.known = false;
        self.cached_pages -= dropped;
        dropped
    }

    pub fn clear(&mut self) {
        *self = Self::default();
    }

    /// The page ids of the first `pages` pages of `file`: its range's base and how many
    /// of them have ids (all, unless the ids have run out). Interns the file, grows its
    /// range as needed and puts its new pages in storage.
    fn pages_of(&mut self, file: &str, pages: usize) -> (PageId, usize) {
        let id = match self.ids.get(file) {
            Some(&id) => id,
            None => {
                // File ids are page-table owners, so process-id sized (27 bits).
                let Some(id) = FileId::try_from(self.files.len())
                    .ok()
                    .filter(|&id| id <= crate::trace::MAX_PROC_ID)
                else {
                    return (0, 0);
                };
                self.ids.insert(file.to_string(), id);
                self.files.push(FileRange {
                    base: PageId::try_from(self.end).unwrap_or(0),
                    ..FileRange::default()
                });
                id
            }
        };
        let wanted = u32::try_from(pages).unwrap_or(u32::MAX);
        if wanted > self.files[id as usize].capacity {
            self.grow(id, wanted);
        }
        let range = &mut self.files[id as usize];
        let held = wanted.min(range.capacity);
        for page in range.base + range.len..range.base + held {
            self.pages.place(page, Location::Storage, NO_FRAME);
            self.pages.set_owner(page, id);
        }
        range.len = range.len.max(held);
        range.known = true;
        (range.base, held as usize)
    }

    /// Gives file `id` a range of at least `wanted` pages if the ids allow: its own range
    /// extended if it is the last one, else a new one at the end, of twice its capacity
    /// when that is more. Otherwise its range stays as it is.
    fn grow(&mut self, id: FileId, wanted: u32) {
        let old = self.files[id as usize];
        let last = u64::from(old.base) + u64::from(old.capacity) == self.end;
        let (base, sizes) = if last {
            (u64::from(old.base), [u64::from(wanted); 2])
        } else {
            let doubled = u64::from(wanted).max(2 * u64::from(old.capacity));
            (self.end, [doubled, u64::from(wanted)])
        };
        let Some(capacity) = sizes.into_iter().find(|&c| base + c <= PAGE_IDS) else {
            return;
        };
        // Both fit below PAGE_IDS, so both convert.
        let (base, capacity) = (base as PageId, capacity as u32);
        self.pages.ensure(base + capacity - 1);
        if base != old.base {
            for i in 0..old.len {
                let (from, to) = (old.base + i, base + i);
                self.pages.place(to, self.pages.location(from), NO_FRAME);
                self.pages.set_owner(to, id);
                self.pages.place(from, Location::Absent, NO_FRAME);
                self.pages.set_owner(from, NO_OWNER);
            }
        }
        self.files[id as usize] = FileRange {
            base,
            capacity,
            ..old
        };
        self.end = u64::from(base) + u64::from(capacity);
    }
}

/// Two states are equal when they know the same files, with the same number of pages
/// each, and cache the same pages of them (page ids may differ).
impl PartialEq for PageCacheState {
    fn eq(&self, other: &Self) -> bool {
        let known = |state: &Self| state.files.iter().filter(|r| r.known).count();
        self.cached_pages == other.cached_pages
            && known(self) == known(other)
            && self
                .ids
                .keys()
                .all(|name| match (self.range(name), other.range(name)) {
                    (None, _) => true,
                    (Some(mine), Some(theirs)) => {
                        mine.len == theirs.len
                            && (0..mine.len).all(|i| {
                                self.pages.location(mine.base + i)
                                    == other.pages.location(theirs.base + i)
                            })
                    }
                    (Some(_), None) => false,
                })
    }
}

impl Eq for PageCacheState {}

/// Reads all of `file` sequentially along `path`, updating `cache`, and returns what it
/// did and cost on `platform`.
pub fn read_file(
    file: &StoredFile,
    path: ReadPath,
    platform: &Platform,
    cache: &mut PageCacheState,
) -> ReadCost {
    let mut cost = ReadCost::default();
    walk(file, path, cache, |page| cost += page);
    cost.priced(platform, file.codec)
}

/// Reads all of `file` as [`read_file`] does, and returns what each page did and cost,
/// in order: the steps of the read, each priced alone (their sum is `read_file`'s cost up
/// to rounding). A page's time is the time its step takes and its energy over that time
/// gives the power drawn meanwhile.
pub fn read_file_by_page(
    file: &StoredFile,
    path: ReadPath,
    platform: &Platform,
    cache: &mut PageCacheState,
) -> Vec<ReadCost> {
    let mut pages = Vec::with_capacity(file.pages.len());
    walk(file, path, cache, |page| {
        pages.push(page.clone().priced(platform, file.codec))
    });
    pages
}

/// Reads the pages of `file` in order along `path`, updating `cache`, and hands what
/// each page did (its counts; time and energy not yet priced) to `each`.
fn walk(
    file: &StoredFile,
    path: ReadPath,
    cache: &mut PageCacheState,
    mut each: impl FnMut(&ReadCost),
) {
    let mut newly_cached = 0;
    let (base, held) = cache.pages_of(&file.name, file.pages.len());
    for (index, page) in file.pages.iter().enumerate() {
        let mut cost = ReadCost {
            pages: 1,
            ..ReadCost::default()
        };
        // The page's id, unless the cache has run out of ids (then it is never cached).
        let id = (index < held).then(|| base + index as PageId);
        let data = u64::from(page.data_len);
        let cached = if id.is_some_and(|id| cache.pages.location(id) == Location::Dram) {
            cost.cache_hits += 1;
            cost.copy_to_user(data);
            false
        } else {
            match (page.compressed, path) {
                (true, _) => {
                    cost.flash_read(u64::from(page.stored_len));
                    cost.pages_allocated += 1;
                    cost.decompress(u64::from(page.stored_len), data);
                    cost.copy_to_user(data);
                    true
                }
                (false, ReadPath::PageCache) => {
                    cost.pages_allocated += 1;
                    cost.flash_read(data);
                    cost.copy_to_user(data);
                    true
                }
                (false, ReadPath::Selective) => {
                    // nocmpr_copy_to_user: flash to the user buffer, nothing left cached.
                    cost.flash_read(data);
                    false
                }
            }
        };
        if let (true, Some(id)) = (cached, id) {
            cache.pages.place(id, Location::Dram, NO_FRAME);
            newly_cached += 1;
        }
        each(&cost);
    }
    cache.cached_pages += newly_cached;
}

/// Reads `file` twice along `path` starting from an empty page cache: the first read
/// and the re-read. The re-read shows where bypassing the page cache loses: raw pages
/// come from flash again instead of from RAM.
pub fn read_twice(file: &StoredFile, path: ReadPath, platform: &Platform) -> (ReadCost, ReadCost) {
    let mut cache = PageCacheState::new();
    let first = read_file(file, path, platform, &mut cache);
    let again = read_file(file, path, platform, &mut cache);
    (first, again)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mm::fs::StoredPage;

    fn file(name: &str, pages: &[(u32, u32, bool)]) -> StoredFile {
        StoredFile {
            name: name.into(),
            codec: Codec::Zlib,
            pages: pages
                .iter()
                .map(|&(data_len, stored_len, compressed)| StoredPage {
                    data_len,
                    stored_len,
                    compressed,
                })
                .collect(),
        }
    }

    #[test]
    fn read_paths_have_names() {
        for path in ReadPath::ALL {
            assert_eq!(ReadPath::named(path.name()).unwrap(), path);
        }
        assert_eq!(
            ReadPath::named("direct").unwrap_err().to_string(),
            "unknown read path 'direct' (known: page-cache, selective)"
        );
    }

    #[test]
    fn the_cache_tracks_pages_per_file_and_forgets_a_file() {
        let platform = Platform::pxa250();
        let mut cache = PageCacheState::new();
        let a = file("a", &[(4096, 4096, false), (4096, 900, true)]);
        let b = file("b", &[(4096, 4096, false)]);
        read_file(&a, ReadPath::Selective, &platform, &mut cache);
        read_file(&b, ReadPath::PageCache, &platform, &mut cache);
        // a: only its compressed page; b: its raw page, read through the cache.
        assert!(!cache.is_cached("a", 0));
        assert!(cache.is_cached("a", 1));
        assert!(cache.is_cached("b", 0));
        assert!(!cache.is_cached("b", 1));
        assert!(!cache.is_cached("c", 0));
        assert_eq!(cache.cached_pages(), 2);

        assert_eq!(cache.forget("a"), 1);
        assert_eq!(cache.forget("a"), 0);
        assert_eq!(cache.cached_pages(), 1);
        cache.clear();
        assert_eq!(cache.cached_pages(), 0);
        assert!(!cache.is_cached("b", 0));
    }

    #[test]
    fn forgetting_a_file_resets_its_pages_and_a_re_read_counts_them_again() {
        let platform = Platform::pxa250();
        let mut cache = PageCacheState::new();
        let f = file("f", &[(4096, 4096, false), (4096, 900, true)]);
        let first = read_file(&f, ReadPath::PageCache, &platform, &mut cache);
        assert_eq!((first.cache_hits, first.pages_allocated), (0, 2));
        let again = read_file(&f, ReadPath::PageCache, &platform, &mut cache);
        assert_eq!((again.cache_hits, cache.cached_pages()), (2, 2));
        let range = cache.range("f").unwrap();
        assert_eq!(cache.forget("f"), 2);
        // The range is reset in place: every page absent, owned by nobody.
        for page in range.base..range.base + range.capacity {
            assert_eq!(cache.pages.entry(page).location, Location::Absent);
            assert_eq!(cache.pages.owner(page), NO_OWNER);
        }
        assert!(!cache.is_cached("f", 0) && !cache.is_cached("f", 1));
        // Read again after the rewrite: misses again, cached again, in the same ids.
        let after = read_file(&f, ReadPath::PageCache, &platform, &mut cache);
        assert_eq!(after, first);
        assert_eq!(cache.cached_pages(), 2);
        assert_eq!(cache.range("f").unwrap().base, range.base);
    }

    #[test]
    fn a_read_by_page_adds_up_to_the_whole_read_and_its_parts_to_its_totals() {
        let f = file(
            "f",
            &[(4096, 4096, false), (4096, 900, true), (100, 100, false)],
        );
        for platform in [Platform::pxa250(), Platform::modern_phone()] {
            for path in ReadPath::ALL {
                let whole = read_file(&f, path, &platform, &mut PageCacheState::new());
                let mut cache = PageCacheState::new();
                let pages = read_file_by_page(&f, path, &platform, &mut cache);
                assert_eq!(pages.len(), 3);
                assert!(pages.iter().all(|p| p.pages == 1));
                let sum: ReadCost = pages.iter().sum();
                let close = |a: f64, b: f64| (a - b).abs() <= 1e-9 * b.abs();
                assert!(close(sum.time_ns, whole.time_ns) && close(sum.energy_nj, whole.energy_nj));
                assert_eq!(
                    (sum.flash_bytes, sum.pages_allocated, sum.ram_copy_bytes),
                    (
                        whole.flash_bytes,
                        whole.pages_allocated,
                        whole.ram_copy_bytes
                    )
                );
                // The cache ends as a whole read leaves it.
                let mut after_whole = PageCacheState::new();
                read_file(&f, path, &platform, &mut after_whole);
                assert_eq!(cache, after_whole);
                // The parts add up, in the same order, to the same totals.
                let time: f64 = whole
                    .time_parts(&platform, f.codec)
                    .iter()
                    .map(|p| p.1)
                    .sum();
                let energy: f64 = whole.energy_parts(&platform).iter().map(|p| p.1).sum();
                assert!(close(time, whole.time_ns) && close(energy, whole.energy_nj));
            }
        }
    }

    #[test]
    fn files_with_the_same_page_index_do_not_alias() {
        let platform = Platform::pxa250();
        let mut cache = PageCacheState::new();
        let a = file("a", &[(4096, 900, true), (4096, 4096, false)]);
        let b = file("b", &[(4096, 4096, false), (4096, 900, true)]);
        read_file(&a, ReadPath::Selective, &platform, &mut cache);
        read_file(&b, ReadPath::Selective, &platform, &mut cache);
        // a: page 0 cached, 1 bypassed; b the other way round.
        assert!(cache.is_cached("a", 0) && !cache.is_cached("a", 1));
        assert!(!cache.is_cached("b", 0) && cache.is_cached("b", 1));
        let (ra, rb) = (cache.range("a").unwrap(), cache.range("b").unwrap());
        assert!(ra.base + ra.capacity <= rb.base || rb.base + rb.capacity <= ra.base);
        // Each file's pages are owned by its id; bypassed pages are in storage.
        let owner = |name: &str| cache.ids[name];
        assert_eq!(cache.pages.owner(ra.base), owner("a"));
        assert_eq!(cache.pages.owner(rb.base + 1), owner("b"));
        assert_eq!(cache.pages.location(ra.base + 1), Location::Storage);
        assert_eq!(cache.pages.location(rb.base + 1), Location::Dram);
        assert_eq!(cache.pages.count_at(Location::Dram), 2);
        assert_eq!(cache.forget("a"), 1);
        assert!(cache.is_cached("b", 1));
        let b_again = read_file(&b, ReadPath::Selective, &platform, &mut cache);
        assert_eq!(b_again.cache_hits, 1);
    }

    #[test]
    fn a_file_read_longer_keeps_its_cached_pages() {
        let platform = Platform::modern_phone();
        let mut cache = PageCacheState::new();
        let short = file("f", &[(4096, 900, true)]);
        let long = file(
            "f",
            &[(4096, 900, true), (4096, 4096, false), (100, 100, false)],
        );
        read_file(&short, ReadPath::PageCache, &platform, &mut cache);
        // Another file after f, so f's range cannot grow in place and moves.
        read_file(
            &file("g", &[(4096, 4096, false)]),
            ReadPath::PageCache,
            &platform,
            &mut cache,
        );
        let before = cache.range("f").unwrap();
        let cost = read_file(&long, ReadPath::Selective, &platform, &mut cache);
        let after = cache.range("f").unwrap();
        assert_ne!(after.base, before.base);
        assert_eq!((after.len, cost.cache_hits), (3, 1));
        assert_eq!(cache.pages.location(before.base), Location::Absent);
        assert!(cache.is_cached("f", 0) && !cache.is_cached("f", 1));
        assert!(cache.is_cached("g", 0));
        assert_eq!(cache.cached_pages(), 2);
        // A shorter read later leaves the longer file's pages known.
        read_file(&short, ReadPath::PageCache, &platform, &mut cache);
        assert_eq!(cache.range("f").unwrap().len, 3);
        // Equality looks at files and cached pages, not at page ids.
        let mut fresh = PageCacheState::new();
        read_file(&long, ReadPath::Selective, &platform, &mut fresh);
        read_file(
            &file("g", &[(4096, 4096, false)]),
            ReadPath::PageCache,
            &platform,
            &mut fresh,
        );
        assert_eq!(fresh, cache);
        fresh.forget("g");
        assert_ne!(fresh, cache);
    }

    #[test]
    fn when_page_ids_run_out_pages_are_read_from_flash_and_not_cached() {
        let platform = Platform::pxa250();
        let mut cache = PageCacheState::new();
        let f = file("f", &[(4096, 4096, false), (4096, 900, true)]);
        read_file(&f, ReadPath::PageCache, &platform, &mut cache);
        // Pretend every other id is taken: only one more page fits.
        cache.end = PAGE_IDS - 1;
        let g = file("g", &[(4096, 4096, false), (4096, 4096, false)]);
        let (first, again) = (
            read_file(&g, ReadPath::PageCache, &platform, &mut cache),
            read_file(&g, ReadPath::PageCache, &platform, &mut cache),
        );
        assert_eq!((first.cache_hits, again.cache_hits), (0, 0));
        assert_eq!(again.flash_bytes, 8192);
        assert_eq!(cache.cached_pages(), 2);
        assert!(cache.is_cached("f", 1) && !cache.is_cached("g", 0));
    }

    #[test]
    fn read_cost_lists_every_field_once_and_is_written_by_its_listing() {
        crate::core::stats::check_listing::<ReadCost>().unwrap();
        let platform = Platform::pxa250();
        let f = file("f", &[(4096, 4096, false), (4096, 900, true)]);
        let (first, again) = read_twice(&f, ReadPath::Selective, &platform);
        // The listing is the fields, in field order, and the JSON keys are its names
        // (written in its order: see `Figures`).
        let json = serde_json::to_value(&first).unwrap();
        let mut keys: Vec<&str> = json
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        keys.sort_unstable();
        let mut names = ReadCost::names();
        names.sort_unstable();
        assert_eq!(keys, names);
        assert_eq!(ReadCost::names().len(), 11);
        assert_eq!(
            ReadCost::names()[..4],
            ["time_ns", "cpu_busy_ns", "energy_nj", "pages"]
        );
        assert_eq!(json["pages"], serde_json::json!(2));
        let back: ReadCost = serde_json::from_value(json).unwrap();
        assert_eq!(back, first);
        // The sum adds every figure of the listing.
        let total = first.clone() + again.clone();
        for ((name, sum), ((_, a), (_, b))) in total
            .values()
            .into_iter()
            .zip(first.values().into_iter().zip(again.values()))
        {
            assert_eq!(sum, a + b, "{name}");
        }
    }

    #[test]
    fn a_page_cached_by_the_page_cache_path_is_a_hit_on_the_selective_path() {
        let platform = Platform::pxa250();
        let mut cache = PageCacheState::new();
        let raw = file("raw", &[(4096, 4096, false)]);
        read_file(&raw, ReadPath::PageCache, &platform, &mut cache);
        let again = read_file(&raw, ReadPath::Selective, &platform, &mut cache);
        assert_eq!((again.cache_hits, again.flash_bytes), (1, 0));
    }

    #[test]
    fn an_empty_file_costs_nothing() {
        let (first, again) = read_twice(
            &file("empty", &[]),
            ReadPath::PageCache,
            &Platform::pxa250(),
        );
        assert_eq!(first, ReadCost::default());
        assert_eq!(again, ReadCost::default());
    }

    #[test]
    fn costs_add_field_by_field() {
        let platform = Platform::modern_phone();
        let f = file(
            "f",
            &[(4096, 4096, false), (4096, 1000, true), (100, 100, false)],
        );
        let (first, again) = read_twice(&f, ReadPath::PageCache, &platform);
        let total: ReadCost = [first.clone(), again.clone()].into_iter().sum();
        let by_ref: ReadCost = [&first, &again].into_iter().sum();
        assert_eq!(total, by_ref);
        assert_eq!(total, first.clone() + again.clone());
        assert_eq!(total.pages, 6);
        assert_eq!(total.cache_hits, 3);
        assert_eq!(total.flash_bytes, first.flash_bytes);
        assert!((total.time_ns - first.time_ns - again.time_ns).abs() < 1e-9);
    }

    #[test]
    fn flash_reads_count_as_cpu_time_only_when_the_cpu_does_them() {
        let mut platform = Platform::modern_phone();
        let f = file("raw", &[(4096, 4096, false)]);
        let dma = read_twice(&f, ReadPath::Selective, &platform).0;
        platform.flash_read_by_cpu = true;
        let by_cpu = read_twice(&f, ReadPath::Selective, &platform).0;
        let flash_ns = 4096.0 * platform.flash_read_ns_per_byte();
        assert_eq!(dma.time_ns, by_cpu.time_ns);
        assert!((dma.time_ns - dma.cpu_busy_ns - flash_ns).abs() < 1e-9);
        assert_eq!(by_cpu.time_ns, by_cpu.cpu_busy_ns);
        let extra = by_cpu.energy_nj - dma.energy_nj;
        assert!((extra - platform.cpu_active_w * flash_ns).abs() < 1e-6);
    }
}
