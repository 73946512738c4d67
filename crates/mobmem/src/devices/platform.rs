//! Platform profiles: what the read path of a compressed flash file system costs on one
//! machine (SPEC.md section 3; Song, Cha, "A Selective Usage of Page Cache towards
//! Low-Power Systems", KIISE).
//!
//! A [`Platform`] prices the operations that [`crate::mm::fs::read`] counts: bytes read
//! from flash, bytes decompressed, bytes copied from RAM to RAM, page-cache pages allocated
//! and per-page file-system work. Time is in ns and energy in nJ; since 1 W x 1 ns = 1 nJ,
//! powers in W multiply times in ns directly.
//!
//! Two profiles are built in: [`Platform::pxa250`], the paper's board, and
//! [`Platform::modern_phone`]. Every figure is either taken from a datasheet-class source
//! or an assumption, and says which; `docs/flashfs-read.md` lists them all. The pxa250
//! profile has exactly one calibrated constant, [`Platform::fs_page_ns`], fitted to the
//! paper's one absolute figure (1 MB read in about 330 ms on the proposed path).

use serde::{Deserialize, Serialize};

use crate::Result;

/// Bytes in a file-system page, as a float for the calibration arithmetic.
const PAGE_BYTES: f64 = 4096.0;

/// Costs of the read path of a flash file system on one platform.
///
/// Time model: a read is a sequence of steps that do not overlap, so its time is the sum
/// of the step times. CPU-busy time is every step except flash reads done by a DMA engine
/// (`flash_read_by_cpu = false`). Energy model, all terms added:
/// `base_w x time + cpu_active_w x CPU-busy time + flash_read_nj_per_byte x flash bytes +
/// ram_read_nj_per_byte x RAM bytes read + ram_write_nj_per_byte x RAM bytes written +
/// page_alloc_nj x pages allocated`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Platform {
    pub name: String,
    /// Time to move one byte from flash into RAM, ns per byte (the RAM write it causes is
    /// overlapped with the much slower flash side and costs no extra time).
    pub flash_read_ns_per_byte: f64,
    /// Energy of the flash device while reading, nJ per byte read. The RAM write at the
    /// destination is counted separately, as RAM energy.
    pub flash_read_nj_per_byte: f64,
    /// Whether the CPU moves flash data itself (NOR flash mapped in the address space,
    /// read with loads), so flash-read time is CPU-busy time; `false` for a DMA engine
    /// (UFS, eMMC), whose transfers leave the CPU idle.
    pub flash_read_by_cpu: bool,
    /// Time of a RAM-to-RAM copy (`copy_to_user`), ns per byte copied. One copied byte is
    /// one byte read and one byte written; this time covers both.
    pub ram_copy_ns_per_byte: f64,
    /// RAM energy per byte read, nJ. A copy of n bytes reads n bytes.
    pub ram_read_nj_per_byte: f64,
    /// RAM energy per byte written, nJ. A copy of n bytes writes n bytes; a flash read
    /// into RAM and a decompression write their output too.
    pub ram_write_nj_per_byte: f64,
    /// Time to allocate a page-cache page and insert it into the page cache, ns per page.
    pub page_alloc_ns: f64,
    /// Energy of a page allocation beyond the CPU's active power over `page_alloc_ns`,
    /// nJ per page (0 where the page is not cleared, so no RAM traffic is added).
    pub page_alloc_nj: f64,
    /// Time to look a page up in the page cache, ns per page. Every page of every read
    /// pays it, hit or miss, on both read paths.
    pub page_lookup_ns: f64,
    /// File-system work for each page read from flash, ns per page: finding the page's
    /// data node (JFFS2's fragment lookup) and checking the node's data CRC. Page-cache
    /// hits skip it: the file system is not called for them.
    pub fs_page_ns: f64,
    /// Decompression time per codec, ns per output (decompressed) byte.
    pub decompress_ns_per_byte: DecompressTimes,
    /// Power the CPU draws above `base_w` while busy, W.
    pub cpu_active_w: f64,
    /// Power of the whole system over the whole read time, busy or not, W (the paper
    /// measured whole-system power with a meter).
    pub base_w: f64,
}

/// Decompression time of each codec, ns per output byte.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DecompressTimes {
    pub zlib: f64,
    pub lzo: f64,
    pub lz4: f64,
    pub zstd: f64,
}

impl DecompressTimes {
    /// From speeds in MB/s of output (1 MB = 10^6 bytes), in the order zlib, lzo, lz4,
    /// zstd. A speed of 0 gives an infinite time, which `Platform::validate` rejects.
    pub fn from_mb_s(zlib: f64, lzo: f64, lz4: f64, zstd: f64) -> Self {
        DecompressTimes {
            zlib: ns_per_byte(zlib),
            lzo: ns_per_byte(lzo),
            lz4: ns_per_byte(lz4),
            zstd: ns_per_byte(zstd),
        }
    }
}

/// ns per byte of a speed in MB/s (10^6 bytes per second): 10^9 ns / (mb_s x 10^6 B).
pub fn ns_per_byte(mb_s: f64) -> f64 {
    1000.0 / mb_s
}

/// The paper's one absolute figure: a 1 MB MPEG file read on the proposed system finished
/// after about 330 ms (its Figure 5). 1 MB is taken as 1 MiB, 256 pages.
pub const PXA250_CALIBRATION_NS: f64 = 330e6;
/// Pages of the calibration read.
pub const PXA250_CALIBRATION_PAGES: u64 = 256;

// pxa250 figures that the calibration depends on, named so the calibrated constant can be
// derived from them in one visible expression.
/// Assumed: 120 ns per 16-bit word, no page-mode bursts.
const PXA250_FLASH_NS_PER_BYTE: f64 = 120.0 / 2.0;
/// Assumed: about 200 cycles at 400 MHz for the 2.4 page-cache hash lookup.
const PXA250_PAGE_LOOKUP_NS: f64 = 500.0;

impl Platform {
    /// The paper's board: Intel DBPXA250 (PXA250 XScale at 400 MHz, 64 MB SDRAM at
    /// 100 MHz on a 32-bit bus, 32 MB Intel StrataFlash J3 NOR), Linux 2.4.17, JFFS2.
    ///
    /// Only `fs_page_ns` is fitted (to 330 ms for 1 MiB of raw pages on the selective
    /// path); every other figure is a datasheet-class number or an assumption, below.
    pub fn pxa250() -> Self {
        // Flash, StrataFlash J3: the J3A datasheet gives 110/120/150 ns initial access for
        // the 32/64/128-Mbit parts and 25 ns page-mode reads. Assumed: every 16-bit word
        // is a full 120 ns access (the driver copies word by word, no page-mode bursts),
        // so 60 ns per byte, 16.7 MB/s. The CPU issues the loads itself (memory-mapped
        // NOR), so it is busy throughout.
        let flash_read_ns_per_byte = PXA250_FLASH_NS_PER_BYTE;
        // Assumed read current about 20 mA at 3.3 V (J3-class parts list average read
        // currents in the tens of mA): 66 mW while reading, times 60 ns per byte.
        let flash_read_nj_per_byte = 0.066 * flash_read_ns_per_byte;
        // SDRAM, 32-bit bus at 100 MHz: 400 MB/s peak, and a copy moves every byte over
        // the bus twice. Assumed 100 MB/s for a 4 KiB memcpy once row misses, cache-line
        // fills and write-buffer stalls are paid: 10 ns per byte copied.
        let ram_copy_ns_per_byte = 10.0;
        // Assumed: about 100 mA above standby per x16 SDRAM chip during bursts at 3.3 V,
        // two chips on the 32-bit bus: 0.66 W at 0.4 bytes per ns, 1.65 nJ per byte,
        // read or written alike.
        let ram_nj_per_byte = 0.66 / 0.4;
        // Assumed: about 800 cycles at 400 MHz to take a free page and add it to the
        // 2.4 page-cache hash and LRU lists; the page is not cleared.
        let page_alloc_ns = 2000.0;
        // Assumed decompression speeds of the XScale at 400 MHz with no L2 cache and
        // 100 MHz SDRAM: zlib 5 MB/s (the kernel's inflate of the time), the others
        // scaled by their usual speed ratios to zlib on current cores (lzo about 2.4x,
        // lz4 about 12x, zstd about 3.4x) and kept below the 100 MB/s copy speed. JFFS2
        // in 2.4.17 had zlib only; the others are what-ifs on this board.
        let decompress_ns_per_byte = DecompressTimes::from_mb_s(5.0, 12.0, 60.0, 17.0);
        // The calibration: the selective path reads a raw page with one lookup, one
        // flash read of 4096 bytes and the file-system work; whatever the 330 ms holds
        // beyond the first two is put in the third.
        let fs_page_ns = PXA250_CALIBRATION_NS / PXA250_CALIBRATION_PAGES as f64
            - PXA250_PAGE_LOOKUP_NS
            - PAGE_BYTES * flash_read_ns_per_byte;
        Platform {
            name: "pxa250".into(),
            flash_read_ns_per_byte,
            flash_read_nj_per_byte,
            flash_read_by_cpu: true,
            ram_copy_ns_per_byte,
            ram_read_nj_per_byte: ram_nj_per_byte,
            ram_write_nj_per_byte: ram_nj_per_byte,
            page_alloc_ns,
            page_alloc_nj: 0.0,
            page_lookup_ns: PXA250_PAGE_LOOKUP_NS,
            fs_page_ns,
            decompress_ns_per_byte,
            // A PXA250 draws about 400 mW in run mode at 300 MHz (press figures of
            // 2002). Assumed: about 0.5 W at 400 MHz busy against about 0.1 W idle.
            cpu_active_w: 0.4,
            // Assumed: the development board (SDRAM, flash, companion chip, Ethernet,
            // LCD) at about 2.5 W whatever the CPU does.
            base_w: 2.5,
        }
    }

    /// A current phone: UFS 3.x flash, LPDDR4X/5 memory, a big ARM core. All figures
    /// are assumptions from datasheet-class and published benchmark numbers, below.
    pub fn modern_phone() -> Self {
        // UFS 3.1 sequential reads run at about 1.5-2.1 GB/s; assumed 1.5 GB/s for a
        // file read with readahead. Transfers are DMA: the CPU is not busy meanwhile.
        let flash_read_ns_per_byte = ns_per_byte(1500.0);
        // Assumed about 1.2 W for the UFS device while streaming at 1.5 GB/s.
        let flash_read_nj_per_byte = 1.2 * flash_read_ns_per_byte;
        Platform {
            name: "modern-phone".into(),
            flash_read_ns_per_byte,
            flash_read_nj_per_byte,
            flash_read_by_cpu: false,
            // Assumed memcpy of 4 KiB on a big core over LPDDR4X/5: 10 GB/s.
            ram_copy_ns_per_byte: ns_per_byte(10_000.0),
            // Assumed about 5 pJ per bit moved for LPDDR4X/5 including I/O: 0.04 nJ
            // per byte, read or written.
            ram_read_nj_per_byte: 0.04,
            ram_write_nj_per_byte: 0.04,
            // Assumed about 1000 cycles at 3 GHz: page allocation, memory-cgroup
            // charge, insertion into the page-cache xarray and LRU.
            page_alloc_ns: 300.0,
            page_alloc_nj: 0.0,
            // Assumed about 150 cycles: an xarray lookup and a reference count.
            page_lookup_ns: 50.0,
            // Assumed: a tree lookup for the node (about 0.2 us) and a CRC32 of 4 KiB
            // with the CPU's CRC instructions (about 0.8 us).
            fs_page_ns: 1000.0,
            // Assumed big-core decompression speeds, in line with lzbench-style
            // figures for current cores: zlib 450, lzo 1000, lz4 4000, zstd 1400 MB/s.
            // `mobmem fs bench-codecs` measures them on the machine at hand.
            decompress_ns_per_byte: DecompressTimes::from_mb_s(450.0, 1000.0, 4000.0, 1400.0),
            // Assumed about 2 W for one big core at a high clock.
            cpu_active_w: 2.0,
            // Assumed about 0.5 W for the rest of the phone, awake with the screen off.
            base_w: 0.5,
        }
    }

    pub fn names() -> &'static [&'static str] {
        &["pxa250", "modern-phone"]
    }

    pub fn named(name: &str) -> Result<Self> {
        super::named(
            "platform",
            name,
            Self::names(),
            &[Self::pxa250, Self::modern_phone],
        )
    }

    /// Rejects negative and non-finite figures, naming the field.
    pub fn validate(&self) -> Result<()> {
        super::check_figures(&format!("platform {}", self.name), self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn named_profiles_are_valid_and_unknown_names_list_the_known_ones() {
        for name in Platform::names() {
            let platform = Platform::named(name).unwrap();
            assert_eq!(platform.name, *name);
            platform.validate().unwrap();
        }
        let message = Platform::named("pxa255").unwrap_err().to_string();
        assert_eq!(
            message,
            "unknown platform 'pxa255' (known: pxa250, modern-phone)"
        );
    }

    #[test]
    fn the_calibrated_constant_is_what_the_330_ms_leaves_after_lookup_and_flash() {
        // 330 ms / 256 pages = 1,289,062.5 ns per page; minus 500 ns lookup and
        // 4096 x 60 ns flash = 1,042,802.5 ns.
        assert_eq!(Platform::pxa250().fs_page_ns, 1_042_802.5);
    }

    #[test]
    fn validate_names_the_offending_field() {
        let mut platform = Platform::pxa250();
        platform.page_lookup_ns = -1.0;
        let message = platform.validate().unwrap_err().to_string();
        assert!(message.contains("page_lookup_ns"), "{message}");

        let mut platform = Platform::modern_phone();
        platform.decompress_ns_per_byte.lzo = f64::INFINITY;
        let message = platform.validate().unwrap_err().to_string();
        assert!(message.contains("decompress_ns_per_byte.lzo"), "{message}");
    }

    #[test]
    fn profiles_survive_a_toml_round_trip_and_unknown_fields_are_rejected() {
        for name in Platform::names() {
            let platform = Platform::named(name).unwrap();
            let text = toml::to_string(&platform).unwrap();
            let back: Platform = toml::from_str(&text).unwrap();
            assert_eq!(back, platform);
        }
        let text = toml::to_string(&Platform::pxa250()).unwrap();
        let with_typo = text.replace("base_w", "base_watts");
        assert!(toml::from_str::<Platform>(&with_typo).is_err());
    }
}
