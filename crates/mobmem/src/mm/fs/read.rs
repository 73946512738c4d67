//! The read path of the file system and its cost (SPEC.md section 3; the paper's
//! sections 2 and 3, Figures 1 and 2).
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
use crate::core::stats::{Figures, Stats, Visitor};
use crate::devices::platform::Platform;
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

    /// Fills in time and energy of counts gathered by reading one file of `codec`.
    fn priced(mut self, platform: &Platform, codec: Codec) -> Self {
        let p = platform;
        let flash_ns = self.flash_bytes as f64 * p.flash_read_ns_per_byte();
        let work_ns = self.decompressed_bytes as f64 * p.decompress_ns_per_byte(codec)
            + self.ram_copy_bytes as f64 * p.ram_copy_ns_per_byte()
            + self.pages_allocated as f64 * p.page_alloc_ns
            + self.pages as f64 * p.page_lookup_ns
            + self.flash_pages() as f64 * p.fs_page_ns;
        let time_ns = work_ns + flash_ns;
        let cpu_ns = if p.flash_read_by_cpu {
            time_ns
        } else {
            work_ns
        };
        self.time_ns = time_ns;
        self.cpu_busy_ns = cpu_ns;
        self.energy_nj = p.base_w * time_ns
            + p.cpu_active_w * cpu_ns
            + p.flash_read_nj_per_byte() * self.flash_bytes as f64
            + p.ram_read_nj_per_byte() * self.ram_read_bytes as f64
            + p.ram_write_nj_per_byte() * self.ram_write_bytes as f64
            + p.page_alloc_nj * self.pages_allocated as f64;
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

/// Which pages of which files are in the page cache, by file name.
///
/// The cache is unbounded: nothing is evicted, as on a board whose RAM holds every file
/// read (64 MB of SDRAM against 32 MB of flash on the paper's board). A file rewritten
/// with new contents must be forgotten first.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PageCacheState {
    files: HashMap<String, Vec<bool>>,
    cached_pages: u64,
}

impl PageCacheState {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn is_cached(&self, file: &str, page: usize) -> bool {
        self.files
            .get(file)
            .and_then(|pages| pages.get(page))
            .copied()
            .unwrap_or(false)
    }

    /// Pages in the cache, over all files.
    pub fn cached_pages(&self) -> u64 {
        self.cached_pages
    }

    /// Drops every cached page of `file` (it was rewritten or deleted); returns how many.
    pub fn forget(&mut self, file: &str) -> u64 {
        let dropped = self.files.remove(file).map_or(0, |pages| {
            pages.iter().filter(|&&cached| cached).count() as u64
        });
        self.cached_pages -= dropped;
        dropped
    }

    pub fn clear(&mut self) {
        self.files.clear();
        self.cached_pages = 0;
    }

    /// The cached flags of `file`, at least `pages` long.
    fn pages_of(&mut self, file: &str, pages: usize) -> &mut Vec<bool> {
        let flags = self.files.entry(file.to_string()).or_default();
        if flags.len() < pages {
            flags.resize(pages, false);
        }
        flags
    }
}

/// Reads all of `file` sequentially along `path`, updating `cache`, and returns what it
/// did and cost on `platform`.
pub fn read_file(
    file: &StoredFile,
    path: ReadPath,
    platform: &Platform,
    cache: &mut PageCacheState,
) -> ReadCost {
    let mut cost = ReadCost {
        pages: file.pages.len() as u64,
        ..ReadCost::default()
    };
    let mut newly_cached = 0;
    let cached = cache.pages_of(&file.name, file.pages.len());
    for (page, is_cached) in file.pages.iter().zip(cached.iter_mut()) {
        let data = u64::from(page.data_len);
        if *is_cached {
            cost.cache_hits += 1;
            cost.copy_to_user(data);
            continue;
        }
        match (page.compressed, path) {
            (true, _) => {
                cost.flash_read(u64::from(page.stored_len));
                cost.pages_allocated += 1;
                cost.decompress(u64::from(page.stored_len), data);
                cost.copy_to_user(data);
            }
            (false, ReadPath::PageCache) => {
                cost.pages_allocated += 1;
                cost.flash_read(data);
                cost.copy_to_user(data);
            }
            (false, ReadPath::Selective) => {
                // nocmpr_copy_to_user: flash to the user buffer, nothing left cached.
                cost.flash_read(data);
                continue;
            }
        }
        *is_cached = true;
        newly_cached += 1;
    }
    cache.cached_pages += newly_cached;
    cost.priced(platform, file.codec)
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
