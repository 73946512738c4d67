//! The read-path cost model against figures worked by hand, its invariants on random
//! files, and the pxa250 calibration. The stock-path figures for the paper's board are
//! printed as predictions (run with `--nocapture` to see them), not checked against a
//! target.

use std::cell::RefCell;

use mobmem::devices::platform::{flash, ram, DecompressTimes, Platform};
use mobmem::mm::fs::{
    read_file, read_twice, read_twice_in, Codec, FsMemory, ReadCost, ReadPath, StoredFile,
    StoredPage,
};
use proptest::prelude::*;

/// Round numbers, every one different so a figure in the wrong place shows.
fn round_platform() -> Platform {
    Platform {
        name: "round".into(),
        // Flash: 1 ns and 2 nJ per byte read; RAM: 0.5 ns per byte copied, 0.25 nJ per
        // byte read, 0.5 nJ per byte written.
        flash: flash(1.0, 2.0),
        flash_read_by_cpu: false,
        ram: ram(0.5, 0.25, 0.5),
        page_alloc_ns: 1000.0,
        page_alloc_nj: 100.0,
        page_lookup_ns: 10.0,
        fs_page_ns: 2000.0,
        decompress_ns_per_byte: DecompressTimes {
            zlib: 2.0,
            lzo: 3.0,
            lz4: 4.0,
            zstd: 5.0,
        },
        cpu_active_w: 1.0,
        base_w: 0.5,
    }
}

fn page(data_len: u32, stored_len: u32, compressed: bool) -> StoredPage {
    StoredPage::new(compressed, data_len, stored_len)
}

/// Page 0 raw 4096 bytes, page 1 compressed 4096 -> 1000 bytes, page 2 raw 100 bytes.
fn three_pages() -> StoredFile {
    StoredFile {
        name: "three".into(),
        codec: Codec::Zlib,
        pages: vec![
            page(4096, 4096, false),
            page(4096, 1000, true),
            page(100, 100, false),
        ],
    }
}

fn raw_file(name: &str, pages: usize) -> StoredFile {
    StoredFile {
        name: name.into(),
        codec: Codec::Zlib,
        pages: vec![page(4096, 4096, false); pages],
    }
}

// Time and energy below are worked with the round platform:
//   time    = 1 x flash bytes + 2 x decompressed + 0.5 x copied + 1000 x allocated
//             + 10 x pages + 2000 x pages read from flash
//   CPU     = time - flash time (flash by DMA)
//   energy  = 0.5 x time + 1 x CPU + 2 x flash bytes + 0.25 x RAM read + 0.5 x RAM written
//             + 100 x allocated
// All products are exact in binary floating point, so the structs compare exactly.

#[test]
fn page_cache_path_first_read() {
    let (first, _) = read_twice(&three_pages(), ReadPath::PAGE_CACHE, &round_platform()).unwrap();
    // flash 4096 + 1000 + 100 = 5196; copies 4096 + 4096 + 100 = 8292;
    // RAM read = copies 8292 + decompression input 1000 = 9292;
    // RAM written = flash 5196 + decompression output 4096 + copies 8292 = 17584.
    // CPU = 2 x 4096 + 0.5 x 8292 + 3 x 1000 + 3 x 10 + 3 x 2000
    //     = 8192 + 4146 + 3000 + 30 + 6000 = 21368; time = 21368 + 5196 = 26564.
    // energy = 13282 + 21368 + 10392 + 2323 + 8792 + 300 = 56457.
    let expected = ReadCost {
        time_ns: 26564.0,
        cpu_busy_ns: 21368.0,
        energy_nj: 56457.0,
        pages: 3,
        cache_hits: 0,
        flash_bytes: 5196,
        decompressed_bytes: 4096,
        ram_copy_bytes: 8292,
        ram_read_bytes: 9292,
        ram_write_bytes: 17584,
        pages_allocated: 3,
    };
    assert_eq!(first, expected);
}

#[test]
fn page_cache_path_re_read() {
    let (_, again) = read_twice(&three_pages(), ReadPath::PAGE_CACHE, &round_platform()).unwrap();
    // Three hits: copies only. CPU = time = 0.5 x 8292 + 3 x 10 = 4176.
    // energy = 2088 + 4176 + 0 + 0.25 x 8292 + 0.5 x 8292 = 2088 + 4176 + 2073 + 4146 = 12483.
    let expected = ReadCost {
        time_ns: 4176.0,
        cpu_busy_ns: 4176.0,
        energy_nj: 12483.0,
        pages: 3,
        cache_hits: 3,
        flash_bytes: 0,
        decompressed_bytes: 0,
        ram_copy_bytes: 8292,
        ram_read_bytes: 8292,
        ram_write_bytes: 8292,
        pages_allocated: 0,
    };
    assert_eq!(again, expected);
}

#[test]
fn selective_path_first_read() {
    let (first, _) = read_twice(&three_pages(), ReadPath::SELECTIVE, &round_platform()).unwrap();
    // Raw pages: flash straight to the user (4096 + 100 bytes written to RAM, nothing
    // else). The compressed page as on the page-cache path.
    // RAM read = copy 4096 + decompression input 1000 = 5096;
    // RAM written = flash 5196 + decompression output 4096 + copy 4096 = 13388.
    // CPU = 8192 + 0.5 x 4096 + 1000 + 30 + 6000 = 17270; time = 17270 + 5196 = 22466.
    // energy = 11233 + 17270 + 10392 + 1274 + 6694 + 100 = 46963.
    let expected = ReadCost {
        time_ns: 22466.0,
        cpu_busy_ns: 17270.0,
        energy_nj: 46963.0,
        pages: 3,
        cache_hits: 0,
        flash_bytes: 5196,
        decompressed_bytes: 4096,
        ram_copy_bytes: 4096,
        ram_read_bytes: 5096,
        ram_write_bytes: 13388,
        pages_allocated: 1,
    };
    assert_eq!(first, expected);
}

#[test]
fn selective_path_re_read() {
    let (_, again) = read_twice(&three_pages(), ReadPath::SELECTIVE, &round_platform()).unwrap();
    // Page 1 is a hit (copy 4096); pages 0 and 2 come from flash again (4196 bytes).
    // CPU = 0.5 x 4096 + 3 x 10 + 2 x 2000 = 6078; time = 6078 + 4196 = 10274.
    // energy = 5137 + 6078 + 8392 + 1024 + 0.5 x (4196 + 4096) = 5137 + 6078 + 8392
    //        + 1024 + 4146 = 24777.
    let expected = ReadCost {
        time_ns: 10274.0,
        cpu_busy_ns: 6078.0,
        energy_nj: 24777.0,
        pages: 3,
        cache_hits: 1,
        flash_bytes: 4196,
        decompressed_bytes: 0,
        ram_copy_bytes: 4096,
        ram_read_bytes: 4096,
        ram_write_bytes: 8292,
        pages_allocated: 0,
    };
    assert_eq!(again, expected);
}

#[test]
fn selective_wins_the_first_read_and_loses_the_re_read() {
    let platform = round_platform();
    let (pc_first, pc_again) = read_twice(&three_pages(), ReadPath::PAGE_CACHE, &platform).unwrap();
    let (sel_first, sel_again) =
        read_twice(&three_pages(), ReadPath::SELECTIVE, &platform).unwrap();
    assert!(sel_first.time_ns < pc_first.time_ns);
    assert!(sel_first.energy_nj < pc_first.energy_nj);
    assert!(sel_again.time_ns > pc_again.time_ns);
    assert!(sel_again.energy_nj > pc_again.energy_nj);
}

#[test]
fn the_codec_of_the_file_sets_the_decompression_time() {
    let platform = round_platform();
    let mut file = three_pages();
    let zlib = read_twice(&file, ReadPath::SELECTIVE, &platform).unwrap().0;
    file.codec = Codec::Zstd;
    let zstd = read_twice(&file, ReadPath::SELECTIVE, &platform).unwrap().0;
    // 4096 decompressed bytes at 5 instead of 2 ns per byte.
    assert_eq!(zstd.time_ns - zlib.time_ns, 3.0 * 4096.0);
}

#[test]
fn a_cache_shared_by_several_files_keeps_them_apart() {
    let platform = round_platform();
    let mut cache = FsMemory::new(4096).unwrap();
    let a = three_pages();
    let mut b = three_pages();
    b.name = "other".into();
    read_file(&a, ReadPath::PAGE_CACHE, &platform, &mut cache).unwrap();
    let b_first = read_file(&b, ReadPath::PAGE_CACHE, &platform, &mut cache).unwrap();
    assert_eq!(b_first.cache_hits, 0);
    assert_eq!(cache.cached_pages(), 6);
    let a_again = read_file(&a, ReadPath::PAGE_CACHE, &platform, &mut cache).unwrap();
    assert_eq!(a_again.cache_hits, 3);
}

#[test]
fn the_pxa250_selective_path_reads_1_mib_of_raw_pages_in_330_ms() {
    // The calibration: 256 raw pages, 330 ms within 5%.
    let platform = Platform::pxa250();
    let (first, again) =
        read_twice(&raw_file("mpeg", 256), ReadPath::SELECTIVE, &platform).unwrap();
    let ms = first.time_ns / 1e6;
    assert!((ms - 330.0).abs() <= 330.0 * 0.05, "{ms} ms");
    // Nothing is cached, so the re-read costs the same.
    assert_eq!(first, again);
    assert_eq!((first.pages_allocated, first.ram_copy_bytes), (0, 0));
}

/// A 1 MiB file the way stock JFFS2 stores an MPEG stream: a share of its pages kept
/// compressed because compression saved a few bytes (25 assumed), the rest raw.
fn mpeg_like(compressed_share: f64) -> StoredFile {
    let compressed = (256.0 * compressed_share).round() as usize;
    let mut file = raw_file("mpeg", 256);
    for stored in file.pages.iter_mut().take(compressed) {
        *stored = page(4096, 4096 - 25, true);
    }
    file
}

#[test]
fn stock_path_predictions_on_both_platforms() {
    // Printed, not asserted against the paper: only the fs_page_ns constant of pxa250 is
    // fitted, and it is fitted to the selective path.
    for name in Platform::names() {
        let platform = Platform::named(name).unwrap();
        let proposed = read_twice(&raw_file("mpeg", 256), ReadPath::SELECTIVE, &platform).unwrap();
        println!(
            "{name}: proposed (selective, all raw) 1 MiB: {:.3} ms, {:.3} mJ; re-read {:.3} ms, {:.3} mJ",
            proposed.0.time_ns / 1e6,
            proposed.0.energy_nj / 1e6,
            proposed.1.time_ns / 1e6,
            proposed.1.energy_nj / 1e6
        );
        for share in [0.0, 0.05, 0.1, 0.25, 1.0] {
            let stock = read_twice(&mpeg_like(share), ReadPath::PAGE_CACHE, &platform).unwrap();
            println!(
                "{name}: stock (page cache), {:>3.0}% of pages compressed: {:.3} ms ({:+.1}%), {:.3} mJ ({:+.1}%); re-read {:.3} ms, {:.3} mJ",
                share * 100.0,
                stock.0.time_ns / 1e6,
                (stock.0.time_ns / proposed.0.time_ns - 1.0) * 100.0,
                stock.0.energy_nj / 1e6,
                (stock.0.energy_nj / proposed.0.energy_nj - 1.0) * 100.0,
                stock.1.time_ns / 1e6,
                stock.1.energy_nj / 1e6
            );
            // What holds whatever the figures: the page cache costs more on the first
            // read, and wins the re-read.
            assert!(stock.0.time_ns > proposed.0.time_ns);
            assert!(stock.0.energy_nj > proposed.0.energy_nj);
            assert!(stock.1.time_ns < proposed.1.time_ns);
        }
    }
}

fn arbitrary_page() -> impl Strategy<Value = StoredPage> {
    (0u32..=4096, any::<bool>(), 0u32..=4200).prop_map(|(data_len, compressed, stored)| {
        let stored_len = if compressed { stored } else { data_len };
        page(data_len, stored_len, compressed)
    })
}

fn arbitrary_codec() -> impl Strategy<Value = Codec> {
    prop_oneof![
        Just(Codec::Zlib),
        Just(Codec::Lzo),
        Just(Codec::Lz4),
        Just(Codec::Zstd)
    ]
}

/// [`read_twice`] on a memory of the platform's RAM kept per platform and emptied before
/// each read ([`read_twice_in`]): building a memory of 8 GiB for every case would take
/// longer than the reads.
fn twice(file: &StoredFile, path: ReadPath, platform: &Platform) -> (ReadCost, ReadCost) {
    thread_local! {
        static MEMORIES: RefCell<Vec<(String, FsMemory)>> = const { RefCell::new(Vec::new()) };
    }
    MEMORIES.with_borrow_mut(|memories| {
        let at = match memories.iter().position(|(name, _)| *name == platform.name) {
            Some(at) => at,
            None => {
                let memory = FsMemory::for_platform(platform).unwrap();
                memories.push((platform.name.clone(), memory));
                memories.len() - 1
            }
        };
        read_twice_in(file, path, platform, &mut memories[at].1).unwrap()
    })
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 500,
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn invariants_of_any_file(
        pages in prop::collection::vec(arbitrary_page(), 0..40),
        codec in arbitrary_codec(),
        modern in any::<bool>(),
    ) {
        let platform = if modern { Platform::modern_phone() } else { Platform::pxa250() };
        let file = StoredFile { name: "f".into(), codec, pages };
        let raw: Vec<&StoredPage> = file.pages.iter().filter(|p| !p.compressed).collect();
        let compressed: Vec<&StoredPage> = file.pages.iter().filter(|p| p.compressed).collect();
        let raw_bytes: u64 = raw.iter().map(|p| u64::from(p.data_len)).sum();
        let compressed_pages = compressed.len() as u64;

        let (pc_first, pc_again) = twice(&file, ReadPath::PAGE_CACHE, &platform);
        let (sel_first, sel_again) = twice(&file, ReadPath::SELECTIVE, &platform);
        for cost in [&pc_first, &pc_again, &sel_first, &sel_again] {
            prop_assert_eq!(cost.pages, file.pages.len() as u64);
            prop_assert!(cost.cache_hits <= cost.pages);
            prop_assert!(cost.time_ns >= cost.cpu_busy_ns);
            prop_assert!(cost.cpu_busy_ns >= 0.0 && cost.energy_nj >= 0.0);
        }
        // The page-cache path caches everything on the first read.
        prop_assert_eq!(pc_first.pages_allocated, pc_first.pages);
        prop_assert_eq!(pc_again.cache_hits, pc_again.pages);
        prop_assert_eq!(pc_again.flash_bytes, 0);
        // Selective allocates only for compressed pages and never caches raw ones: a
        // re-read reads every raw byte from flash again.
        prop_assert_eq!(sel_first.pages_allocated, compressed_pages);
        prop_assert_eq!(sel_again.cache_hits, compressed_pages);
        prop_assert_eq!(sel_again.pages_allocated, 0);
        prop_assert_eq!(sel_again.flash_bytes, raw_bytes);
        // Both paths read the same bytes from flash the first time.
        prop_assert_eq!(pc_first.flash_bytes, sel_first.flash_bytes);

        // A file of its compressed pages alone costs the same on both paths.
        let only_compressed = StoredFile {
            name: "c".into(),
            codec,
            pages: compressed.into_iter().copied().collect(),
        };
        prop_assert_eq!(
            twice(&only_compressed, ReadPath::PAGE_CACHE, &platform),
            twice(&only_compressed, ReadPath::SELECTIVE, &platform)
        );
    }
}

/// The page cache as cached flags per file name, with no memory behind it (nothing is
/// evicted). An oracle for any sequence of reads, forgets and clears on a memory larger
/// than every file read.
#[derive(Default)]
struct FlagsModel {
    files: std::collections::HashMap<String, Vec<bool>>,
}

impl FlagsModel {
    /// Hits of reading `file` along `path`, caching what the path caches.
    fn read(&mut self, file: &StoredFile, path: ReadPath) -> u64 {
        let flags = self.files.entry(file.name.clone()).or_default();
        if flags.len() < file.pages.len() {
            flags.resize(file.pages.len(), false);
        }
        let mut hits = 0;
        for (page, cached) in file.pages.iter().zip(flags.iter_mut()) {
            if *cached {
                hits += 1;
            } else if page.compressed || path == ReadPath::PAGE_CACHE {
                *cached = true;
            }
        }
        hits
    }

    fn cached_pages(&self) -> u64 {
        self.files.values().flatten().filter(|&&c| c).count() as u64
    }

    fn is_cached(&self, file: &str, page: usize) -> bool {
        self.files
            .get(file)
            .and_then(|flags| flags.get(page))
            .copied()
            .unwrap_or(false)
    }
}

#[derive(Debug, Clone)]
enum CacheOp {
    Read {
        file: usize,
        compressed: Vec<bool>,
        selective: bool,
    },
    Forget(usize),
    Clear,
}

fn cache_op() -> impl Strategy<Value = CacheOp> {
    prop_oneof![
        6 => (0usize..4, prop::collection::vec(any::<bool>(), 0..12), any::<bool>()).prop_map(
            |(file, compressed, selective)| CacheOp::Read { file, compressed, selective }
        ),
        2 => (0usize..4).prop_map(CacheOp::Forget),
        1 => Just(CacheOp::Clear),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 300,
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn the_page_cache_agrees_with_per_file_flags(ops in prop::collection::vec(cache_op(), 1..60)) {
        let platform = Platform::modern_phone();
        let names = ["a", "b", "c", "d"];
        let mut cache = FsMemory::new(4096).unwrap();
        let mut model = FlagsModel::default();
        for op in ops {
            match op {
                CacheOp::Read { file, compressed, selective } => {
                    let stored = StoredFile {
                        name: names[file].into(),
                        codec: Codec::Zlib,
                        pages: compressed
                            .iter()
                            .map(|&c| page(4096, if c { 1000 } else { 4096 }, c))
                            .collect(),
                    };
                    let path = if selective { ReadPath::SELECTIVE } else { ReadPath::PAGE_CACHE };
                    let cost = read_file(&stored, path, &platform, &mut cache).unwrap();
                    prop_assert_eq!(cost.cache_hits, model.read(&stored, path));
                }
                CacheOp::Forget(file) => {
                    let before = model.cached_pages();
                    model.files.remove(names[file]);
                    prop_assert_eq!(cache.forget(names[file]), before - model.cached_pages());
                }
                CacheOp::Clear => {
                    cache.clear().unwrap();
                    model.files.clear();
                }
            }
            prop_assert_eq!(cache.cached_pages(), model.cached_pages());
            for name in names {
                for index in 0..14 {
                    prop_assert_eq!(cache.is_cached(name, index), model.is_cached(name, index));
                }
            }
        }
    }
}
