//! The read path of the file system and its cost (Song, Cha, "A Selective Usage of Page
//! Cache towards Low-Power Systems", KIISE: its sections 2 and 3, Figures 1 and 2).
//!
//! The page cache is the memory's: a file page is cached when it holds a frame of the
//! machine's memory ([`crate::mm::reclaim::Machine`]), and reclaim evicts it like any
//! other file page. A file is read whole, sequentially, page by page. Each page is first
//! looked up in the page cache; then, by what it is and which [`ReadPath`] is used:
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
//!
//! A read path is a [`FileSystem`]: its verbs read or write one page through a
//! [`PageCache`] (the memory's answers: does it hold the page; bring it in) and return
//! the page's [`ReadCost`]. The read paths are listed in
//! [`READ_PATHS`](super::paths::READ_PATHS); a new one is its file in `mm/fs/paths/` and
//! one entry there. [`read_file`] and [`read_twice`] read whole files through an
//! [`FsMemory`], a machine whose memory holds the page cache.

use std::iter::Sum;
use std::ops::{Add, AddAssign};

use serde::{Deserialize, Serialize, Serializer};

use super::memory::FsMemory;
use super::paths::{self, ReadPathInfo, READ_PATHS};
use super::{Codec, StoredFile, StoredPage};
use crate::core::stats::{Figures, Stats, Visitor};
use crate::devices::platform::Platform;
use crate::trace::PageId;
use crate::Result;

/// A read path of the file system: an entry of [`READ_PATHS`], by name.
#[derive(Clone, Copy)]
pub struct ReadPath(&'static ReadPathInfo);

impl ReadPath {
    /// Stock Linux and JFFS2: every page goes through the page cache.
    pub const PAGE_CACHE: ReadPath = ReadPath(&paths::PAGE_CACHE);
    /// The paper's proposal: pages stored raw bypass the page cache.
    pub const SELECTIVE: ReadPath = ReadPath(&paths::SELECTIVE);

    /// Every read path, in the registry's order.
    pub fn all() -> Vec<ReadPath> {
        READ_PATHS.into_iter().map(ReadPath).collect()
    }

    pub fn name(self) -> &'static str {
        self.0.name
    }

    /// One line: what the path does.
    pub fn summary(self) -> &'static str {
        self.0.summary
    }

    /// The read path called `name`; an unknown name lists the known ones.
    pub fn named(name: &str) -> Result<Self> {
        READ_PATHS.find(name).map(ReadPath)
    }

    /// The path's verbs.
    pub fn fs(self) -> &'static dyn FileSystem {
        self.0.fs
    }
}

/// Read paths are the same when their names are.
impl PartialEq for ReadPath {
    fn eq(&self, other: &Self) -> bool {
        self.name() == other.name()
    }
}

impl Eq for ReadPath {}

impl std::fmt::Debug for ReadPath {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "ReadPath({})", self.name())
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
    /// Bytes copied from RAM to RAM (page cache to user buffer, or back for a write).
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

    /// One page served from the page cache (a hit): `data_len` copied to the user.
    pub fn cache_hit(page: &StoredPage) -> Self {
        let mut cost = Self::one_page();
        cost.cache_hits = 1;
        cost.copy_to_user(u64::from(page.data_len));
        cost
    }

    /// One page read from flash into a new page-cache page, then copied to the user. A
    /// compressed page: `stored_len` read into a buffer, a page allocated, decompressed
    /// into it (`jffs2_decompress`); a raw page: a page allocated and `data_len` read
    /// into it.
    pub fn into_page_cache(page: &StoredPage) -> Self {
        let mut cost = Self::one_page();
        let data = u64::from(page.data_len);
        if page.compressed {
            let stored = u64::from(page.stored_len);
            cost.flash_read(stored);
            cost.pages_allocated += 1;
            cost.decompress(stored, data);
        } else {
            cost.pages_allocated += 1;
            cost.flash_read(data);
        }
        cost.copy_to_user(data);
        cost
    }

    /// One raw page read from flash straight into the user buffer
    /// (`nocmpr_copy_to_user`, the last partial page trimmed to its `data_len`): no
    /// page-cache page, no copy.
    pub fn to_user(page: &StoredPage) -> Self {
        let mut cost = Self::one_page();
        cost.flash_read(u64::from(page.data_len));
        cost
    }

    /// One page written through the page cache: `data_len` copied from the user into
    /// it, and a page-cache page allocated when the page had none (`allocated`). Nothing
    /// is read (`pages` stays 0); the flash write happens when the memory writes the
    /// dirty page back, which a read cost does not price.
    pub fn written(page: &StoredPage, allocated: bool) -> Self {
        let mut cost = ReadCost {
            pages_allocated: u64::from(allocated),
            ..ReadCost::default()
        };
        cost.copy_to_user(u64::from(page.data_len));
        cost
    }

    fn one_page() -> Self {
        ReadCost {
            pages: 1,
            ..ReadCost::default()
        }
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

    /// These counts with time and energy filled in: priced on `platform` for a file of
    /// `codec` (the codec sets the decompression speed).
    pub fn priced(mut self, platform: &Platform, codec: Codec) -> Self {
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

/// One page of a file as the file system reads or writes it: its id in the memory's
/// page table and how it is stored on flash.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FilePage {
    pub id: PageId,
    pub stored: StoredPage,
}

/// What a file system asks of the memory its page cache lives in. The memory owns the
/// state (which pages are in frames, which are dirty, what reclaim evicted); the file
/// system only asks and hands pages over.
pub trait PageCache {
    /// Whether the page cache holds `page` (it is in memory).
    fn holds(&self, page: PageId) -> bool;
    /// An access to `page` through the page cache, a write when `write`: a page held is
    /// marked accessed (and dirty when written); a page not held is brought in, taking a
    /// frame (reclaim may evict other pages first), dirty when written. Errors are the
    /// memory's (out of memory).
    fn access(&mut self, page: PageId, write: bool) -> Result<()>;
}

/// A read path of the file system, plugged into the memory's page cache: how one page
/// of a file is read and written. A new path is one file in `mm/fs/paths/` and one
/// entry of [`READ_PATHS`].
///
/// Contracts (`tests` in `mm/fs/paths/mod.rs` check them for every entry):
/// - `read` MUST first ask the page cache whether it [holds](PageCache::holds) the page.
///   A page held MUST be a hit ([`ReadCost::cache_hit`]), whatever path brought it in,
///   and MUST be [accessed](PageCache::access) so the memory sees the reference;
/// - a page read from flash that the path keeps MUST be handed to the page cache by
///   [`PageCache::access`] (it takes a frame, and reclaim may evict it later: read again
///   after that, it comes from flash again);
/// - a page the path does not keep MUST NOT be handed to the page cache: it takes no
///   frame and the memory does not change;
/// - `read` returns the counts of exactly that one page (`pages` 1, `cache_hits` 1 for
///   a hit and 0 otherwise), not priced ([`ReadCost::priced`] prices them);
/// - `write` MUST hand the page to the page cache as written (it takes a frame when it
///   had none and is dirty from then on; writing it back is the memory's) and returns
///   its counts; the default, [`write_through_page_cache`], reads nothing;
/// - neither verb panics; the page cache's errors are returned as they are.
pub trait FileSystem: Sync {
    /// Read `page`, returning what it did (counts only).
    fn read(&self, cache: &mut dyn PageCache, page: FilePage) -> Result<ReadCost>;

    /// Write `page` whole, returning what it did (counts only).
    fn write(&self, cache: &mut dyn PageCache, page: FilePage) -> Result<ReadCost> {
        write_through_page_cache(cache, page)
    }
}

/// The stock write (`generic_perform_write`): the page is copied from the user into the
/// page cache, which takes a frame for it if it had none (the whole page is written, so
/// nothing is read first), and is dirty until the memory writes it back.
pub fn write_through_page_cache(cache: &mut dyn PageCache, page: FilePage) -> Result<ReadCost> {
    let held = cache.holds(page.id);
    cache.access(page.id, true)?;
    Ok(ReadCost::written(&page.stored, !held))
}

/// A page cache with no room at all: it holds nothing and keeps nothing handed to it.
/// Pages of a file that got no page ids are read through it (see
/// [`FileIds`](super::memory::FileIds)): from flash every time, never cached.
struct NoPageCache;

impl PageCache for NoPageCache {
    fn holds(&self, _: PageId) -> bool {
        false
    }

    fn access(&mut self, _: PageId, _: bool) -> Result<()> {
        Ok(())
    }
}

/// Reads all of `file` sequentially along `path` through the page cache of `mem`, and
/// returns what it did and cost on `platform`.
pub fn read_file(
    file: &StoredFile,
    path: ReadPath,
    platform: &Platform,
    mem: &mut FsMemory,
) -> Result<ReadCost> {
    let mut cost = ReadCost::default();
    walk(file, path, mem, |page| cost += page)?;
    Ok(cost.priced(platform, file.codec))
}

/// Reads all of `file` as [`read_file`] does, and returns what each page did and cost,
/// in order: the steps of the read, each priced alone (their sum is `read_file`'s cost up
/// to rounding). A page's time is the time its step takes and its energy over that time
/// gives the power drawn meanwhile.
pub fn read_file_by_page(
    file: &StoredFile,
    path: ReadPath,
    platform: &Platform,
    mem: &mut FsMemory,
) -> Result<Vec<ReadCost>> {
    let mut pages = Vec::with_capacity(file.pages.len());
    walk(file, path, mem, |page| {
        pages.push(page.clone().priced(platform, file.codec))
    })?;
    Ok(pages)
}

/// Reads the pages of `file` in order along `path` through `mem`, and hands what each
/// page did (its counts; time and energy not yet priced) to `each`.
fn walk(
    file: &StoredFile,
    path: ReadPath,
    mem: &mut FsMemory,
    mut each: impl FnMut(&ReadCost),
) -> Result<()> {
    let ids = mem.ids_of(&file.name, file.pages.len());
    for (index, &stored) in file.pages.iter().enumerate() {
        let cost = match ids.get(index) {
            Some(&id) => {
                let cost = mem.read(path, FilePage { id, stored })?;
                crate::core::events::check_step(index as u64 + 1, || mem.check())?;
                cost
            }
            None => path
                .fs()
                .read(&mut NoPageCache, FilePage { id: 0, stored })?,
        };
        each(&cost);
    }
    Ok(())
}

/// Reads `file` twice along `path` starting from an empty page cache in a memory of
/// `platform`'s RAM ([`FsMemory::for_platform`]): the first read and the re-read. The
/// re-read shows where bypassing the page cache loses: raw pages come from flash again
/// instead of from RAM.
pub fn read_twice(
    file: &StoredFile,
    path: ReadPath,
    platform: &Platform,
) -> Result<(ReadCost, ReadCost)> {
    read_twice_in(file, path, platform, &mut FsMemory::for_platform(platform)?)
}

/// [`read_twice`] in `mem`, which is emptied first ([`FsMemory::clear`]): for many
/// files read on one memory without building it again for each.
pub fn read_twice_in(
    file: &StoredFile,
    path: ReadPath,
    platform: &Platform,
    mem: &mut FsMemory,
) -> Result<(ReadCost, ReadCost)> {
    mem.clear()?;
    let first = read_file(file, path, platform, mem)?;
    let again = read_file(file, path, platform, mem)?;
    Ok((first, again))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::pages::Location;

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

    /// A memory far larger than any file read here (nothing is evicted).
    fn memory() -> FsMemory {
        FsMemory::new(4096).unwrap()
    }

    fn read(f: &StoredFile, path: ReadPath, mem: &mut FsMemory) -> ReadCost {
        read_file(f, path, &Platform::pxa250(), mem).unwrap()
    }

    #[test]
    fn the_cache_tracks_pages_per_file_and_forgets_a_file() {
        let mut mem = memory();
        let a = file("a", &[(4096, 4096, false), (4096, 900, true)]);
        let b = file("b", &[(4096, 4096, false)]);
        read(&a, ReadPath::SELECTIVE, &mut mem);
        read(&b, ReadPath::PAGE_CACHE, &mut mem);
        // a: only its compressed page; b: its raw page, read through the cache.
        assert!(!mem.is_cached("a", 0));
        assert!(mem.is_cached("a", 1));
        assert!(mem.is_cached("b", 0));
        assert!(!mem.is_cached("b", 1));
        assert!(!mem.is_cached("c", 0));
        assert_eq!(mem.cached_pages(), 2);
        // The cached pages hold frames of the machine's memory.
        let machine = mem.machine();
        assert_eq!(machine.mem.free(), 4096 - 2);
        mem.check().unwrap();

        assert_eq!(mem.forget("a"), 1);
        assert_eq!(mem.forget("a"), 0);
        assert_eq!(mem.cached_pages(), 1);
        mem.check().unwrap();
        mem.clear().unwrap();
        assert_eq!(mem.cached_pages(), 0);
        assert!(!mem.is_cached("b", 0));
        assert_eq!(mem.machine().mem.free(), 4096);
        assert!(mem.files().is_empty());
    }

    #[test]
    fn forgetting_a_file_drops_its_pages_and_a_re_read_counts_them_again() {
        let mut mem = memory();
        let f = file("f", &[(4096, 4096, false), (4096, 900, true)]);
        let first = read(&f, ReadPath::PAGE_CACHE, &mut mem);
        assert_eq!((first.cache_hits, first.pages_allocated), (0, 2));
        let again = read(&f, ReadPath::PAGE_CACHE, &mut mem);
        assert_eq!((again.cache_hits, mem.cached_pages()), (2, 2));
        let ids = mem.files().all_ids("f");
        assert_eq!(mem.forget("f"), 2);
        // Dropped unwritten: absent, not "only on flash", so the re-read is a cold read.
        for &id in &ids {
            assert_eq!(mem.machine().mem.pages().location(id), Location::Absent);
        }
        assert!(!mem.is_cached("f", 0) && !mem.is_cached("f", 1));
        assert_eq!(mem.machine().mem.counters.file_drops, 0);
        // Read again after the rewrite: misses again, cached again, in the same ids.
        let after = read(&f, ReadPath::PAGE_CACHE, &mut mem);
        assert_eq!(after, first);
        assert_eq!(mem.cached_pages(), 2);
        assert_eq!(mem.files().all_ids("f"), ids);
        mem.check().unwrap();
    }

    /// The selective-page-cache experiment reads one file at a time on a board running
    /// nothing else, synchronously: on the clock (its one core, the flash as a queue, the
    /// steps as the phone gives them, `MachineClock::file_read`) a read takes what the
    /// sum gives it, to the ns of rounding per step. So that reproduction keeps the sum.
    #[test]
    fn a_lone_read_on_the_clock_takes_its_summed_time() {
        use crate::core::time::{DeviceQueue, ThreadSpec, Timeline};
        use crate::mm::clock::MachineClock;
        let f = file(
            "f",
            &[(4096, 4096, false), (4096, 900, true), (100, 100, false)],
        );
        for platform in [Platform::pxa250(), Platform::modern_phone()] {
            for path in ReadPath::all() {
                let pages = read_file_by_page(&f, path, &platform, &mut memory()).unwrap();
                let mut steps = Vec::new();
                for p in &pages {
                    MachineClock::file_read(p.time_ns - p.cpu_busy_ns, p.cpu_busy_ns, &mut steps);
                }
                // The clock's flash is device 0 (device 1 the NVM), as on the phone.
                let devices = ["flash", "nvm"].map(|n| DeviceQueue::new(n, 1).unwrap());
                let mut t = Timeline::new(&[1024], devices.to_vec(), 0, 250).unwrap();
                let reader = t.spawn(ThreadSpec::new("reader")).unwrap();
                let job = t.submit(reader, 0, steps.clone()).unwrap();
                t.run_to_end().unwrap();
                let clock = t.job(job).response_ns().unwrap() as f64;
                let summed: f64 = pages.iter().map(|p| p.time_ns).sum();
                assert!(
                    (clock - summed).abs() <= steps.len() as f64,
                    "{} on {}: {clock} ns on the clock, {summed} summed",
                    path.name(),
                    platform.name
                );
            }
        }
    }

    #[test]
    fn a_read_by_page_adds_up_to_the_whole_read_and_its_parts_to_its_totals() {
        let f = file(
            "f",
            &[(4096, 4096, false), (4096, 900, true), (100, 100, false)],
        );
        for platform in [Platform::pxa250(), Platform::modern_phone()] {
            for path in ReadPath::all() {
                let whole = read_file(&f, path, &platform, &mut memory()).unwrap();
                let mut mem = memory();
                let pages = read_file_by_page(&f, path, &platform, &mut mem).unwrap();
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
                // The memory ends as a whole read leaves it.
                let mut after_whole = memory();
                read_file(&f, path, &platform, &mut after_whole).unwrap();
                assert_eq!(mem.cached_pages(), after_whole.cached_pages());
                for i in 0..3 {
                    assert_eq!(mem.is_cached("f", i), after_whole.is_cached("f", i));
                }
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
        let mut mem = memory();
        let a = file("a", &[(4096, 900, true), (4096, 4096, false)]);
        let b = file("b", &[(4096, 4096, false), (4096, 900, true)]);
        read(&a, ReadPath::SELECTIVE, &mut mem);
        read(&b, ReadPath::SELECTIVE, &mut mem);
        // a: page 0 cached, 1 bypassed; b the other way round.
        assert!(mem.is_cached("a", 0) && !mem.is_cached("a", 1));
        assert!(!mem.is_cached("b", 0) && mem.is_cached("b", 1));
        let (ia, ib) = (mem.files().all_ids("a"), mem.files().all_ids("b"));
        assert!(ia.iter().all(|id| !ib.contains(id)));
        // Cached pages are in memory, owned by the reader; bypassed ones never entered it.
        let pages = mem.machine().mem.pages();
        assert_eq!(pages.location(ia[0]), Location::Dram);
        assert_eq!(pages.owner(ia[0]), crate::mm::fs::memory::READER);
        assert_eq!(pages.location(ia[1]), Location::Absent);
        assert_eq!(pages.location(ib[1]), Location::Dram);
        assert_eq!(pages.count_at(Location::Dram), 2);
        assert_eq!(mem.forget("a"), 1);
        assert!(mem.is_cached("b", 1));
        let b_again = read(&b, ReadPath::SELECTIVE, &mut mem);
        assert_eq!(b_again.cache_hits, 1);
    }

    #[test]
    fn a_file_read_longer_keeps_its_cached_pages() {
        let platform = Platform::modern_phone();
        let mut mem = memory();
        let short = file("f", &[(4096, 900, true)]);
        let long = file(
            "f",
            &[(4096, 900, true), (4096, 4096, false), (100, 100, false)],
        );
        read_file(&short, ReadPath::PAGE_CACHE, &platform, &mut mem).unwrap();
        // Another file after f, so f's ids cannot grow in place.
        let g = file("g", &[(4096, 4096, false)]);
        read_file(&g, ReadPath::PAGE_CACHE, &platform, &mut mem).unwrap();
        let before = mem.files().all_ids("f");
        let cost = read_file(&long, ReadPath::SELECTIVE, &platform, &mut mem).unwrap();
        let after = mem.files().all_ids("f");
        // Its first page keeps its id (and its frame); the others are new ids.
        assert_eq!(after[0], before[0]);
        assert!(after.len() >= 3);
        assert!(!after[1..].contains(&mem.files().all_ids("g")[0]));
        assert_eq!(cost.cache_hits, 1);
        assert!(mem.is_cached("f", 0) && !mem.is_cached("f", 1));
        assert!(mem.is_cached("g", 0));
        assert_eq!(mem.cached_pages(), 2);
        // A shorter read later leaves the longer file's ids as they are.
        read_file(&short, ReadPath::PAGE_CACHE, &platform, &mut mem).unwrap();
        assert_eq!(mem.files().all_ids("f"), after);
        mem.check().unwrap();
    }

    #[test]
    fn read_cost_lists_every_field_once_and_is_written_by_its_listing() {
        crate::core::stats::check_listing::<ReadCost>().unwrap();
        let platform = Platform::pxa250();
        let f = file("f", &[(4096, 4096, false), (4096, 900, true)]);
        let (first, again) = read_twice(&f, ReadPath::SELECTIVE, &platform).unwrap();
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
        let mut mem = memory();
        let raw = file("raw", &[(4096, 4096, false)]);
        read(&raw, ReadPath::PAGE_CACHE, &mut mem);
        let again = read(&raw, ReadPath::SELECTIVE, &mut mem);
        assert_eq!((again.cache_hits, again.flash_bytes), (1, 0));
    }

    #[test]
    fn an_empty_file_costs_nothing() {
        let (first, again) = read_twice(
            &file("empty", &[]),
            ReadPath::PAGE_CACHE,
            &Platform::pxa250(),
        )
        .unwrap();
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
        let (first, again) = read_twice(&f, ReadPath::PAGE_CACHE, &platform).unwrap();
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
    fn read_twice_in_a_used_memory_is_read_twice_in_a_new_one() {
        let platform = Platform::pxa250();
        let f = file("f", &[(4096, 4096, false), (4096, 1000, true)]);
        let mut mem = memory();
        read(
            &file("other", &[(4096, 4096, false); 3]),
            ReadPath::PAGE_CACHE,
            &mut mem,
        );
        read(&f, ReadPath::PAGE_CACHE, &mut mem);
        for path in ReadPath::all() {
            let fresh = read_file(&f, path, &platform, &mut memory()).unwrap();
            let (first, _) = read_twice_in(&f, path, &platform, &mut mem).unwrap();
            assert_eq!(first, fresh);
        }
    }

    #[test]
    fn a_write_goes_through_the_memory_and_is_dirty_there() {
        let mut mem = memory();
        let raw = FilePage {
            id: mem.ids_of("w", 1)[0],
            stored: StoredPage::new(false, 4096, 4096),
        };
        let cost = mem.write(ReadPath::SELECTIVE, raw).unwrap();
        assert_eq!(
            (cost.pages, cost.pages_allocated, cost.ram_copy_bytes),
            (0, 1, 4096)
        );
        let machine = mem.machine();
        let pfn = machine.mem.frame_of(raw.id).unwrap();
        assert!(machine.mem.frame(pfn).is_dirty());
        assert_eq!(machine.mem.dirty(), 1);
        // Written pages are cached, so even the selective path reads them from RAM.
        let read_back = mem.read(ReadPath::SELECTIVE, raw).unwrap();
        assert_eq!((read_back.cache_hits, read_back.flash_bytes), (1, 0));
        mem.check().unwrap();
    }

    #[test]
    fn flash_reads_count_as_cpu_time_only_when_the_cpu_does_them() {
        let mut platform = Platform::modern_phone();
        let f = file("raw", &[(4096, 4096, false)]);
        let dma = read_twice(&f, ReadPath::SELECTIVE, &platform).unwrap().0;
        platform.flash_read_by_cpu = true;
        let by_cpu = read_twice(&f, ReadPath::SELECTIVE, &platform).unwrap().0;
        let flash_ns = 4096.0 * platform.flash_read_ns_per_byte();
        assert_eq!(dma.time_ns, by_cpu.time_ns);
        assert!((dma.time_ns - dma.cpu_busy_ns - flash_ns).abs() < 1e-9);
        assert_eq!(by_cpu.time_ns, by_cpu.cpu_busy_ns);
        let extra = by_cpu.energy_nj - dma.energy_nj;
        assert!((extra - platform.cpu_active_w * flash_ns).abs() < 1e-6);
    }
}
