//! Platform profiles: what the read path of a compressed flash file system costs on one
//! machine (Song, Cha, "A Selective Usage of Page Cache towards
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

use std::borrow::Cow;

use serde::{Deserialize, Serialize};

use super::Device;
use crate::Result;

/// Bytes in a file-system page, as a float for the calibration arithmetic and the
/// per-byte figures.
const PAGE_BYTES: f64 = 4096.0;

/// Costs of the read path of a flash file system on one platform.
///
/// The flash and the RAM are [`Device`]s, priced per 4 KiB page like every other device;
/// the read path counts bytes and prices them at the per-byte figures, which are the
/// per-page ones divided by 4096 ([`Platform::flash_read_ns_per_byte`] and the other
/// per-byte methods). Since 4096 is a power of two, a per-byte figure turned into a page's
/// and back is the same number exactly. A profile's TOML table keeps its per-byte keys
/// (`flash_read_ns_per_byte` and so on), converted on reading and writing.
///
/// Time model: a read is a sequence of steps that do not overlap, so its time is the sum
/// of the step times. CPU-busy time is every step except flash reads done by a DMA engine
/// (`flash_read_by_cpu = false`). Energy model, all terms added:
/// `base_w x time + cpu_active_w x CPU-busy time + flash_read_nj_per_byte x flash bytes +
/// ram_read_nj_per_byte x RAM bytes read + ram_write_nj_per_byte x RAM bytes written +
/// page_alloc_nj x pages allocated`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(from = "Keys", into = "Keys")]
pub struct Platform {
    pub name: String,
    /// The flash files are read from, made by [`flash`]: `read_ns` to move one page from
    /// flash into RAM, `read_nj` the flash device's energy meanwhile. The read path
    /// writes no flash, so writes and wear are not modelled (0, no endurance).
    pub flash: Device,
    /// Whether the CPU moves flash data itself (NOR flash mapped in the address space,
    /// read with loads), so flash-read time is CPU-busy time; `false` for a DMA engine
    /// (UFS, eMMC), whose transfers leave the CPU idle.
    pub flash_read_by_cpu: bool,
    /// The RAM, made by [`ram`]: `read_nj` and `write_nj` per page read and written; a
    /// page copy (`copy_to_user`) is a page read and a page write and takes
    /// `read_ns + write_ns` (profiles give the copy's time, split evenly between the two).
    pub ram: Device,
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

/// A platform's flash from its per-byte read figures: `read_ns_per_byte`, time to move
/// one byte from flash into RAM (the RAM write it causes is overlapped with the much
/// slower flash side and costs no extra time); `read_nj_per_byte`, energy of the flash
/// device while reading, per byte read (the RAM write at the destination is counted
/// separately, as RAM energy). Per page, both times 4096.
pub fn flash(read_ns_per_byte: f64, read_nj_per_byte: f64) -> Device {
    Device {
        name: Cow::Borrowed("flash"),
        read_ns: read_ns_per_byte * PAGE_BYTES,
        write_ns: 0.0,
        read_nj: read_nj_per_byte * PAGE_BYTES,
        write_nj: 0.0,
        endurance_writes: None,
        static_w_per_gib: 0.0,
        capacity_gib: None,
    }
}

/// A platform's RAM from its per-byte figures: `copy_ns_per_byte`, time of a RAM-to-RAM
/// copy (`copy_to_user`) per byte copied, which is one byte read and one byte written
/// (this time covers both: half is the page read's, half the page write's);
/// `read_nj_per_byte` and `write_nj_per_byte`, energy per byte read and written (a copy
/// of n bytes reads n bytes and writes n; a flash read into RAM and a decompression
/// write their output too). Per page, times 4096.
pub fn ram(copy_ns_per_byte: f64, read_nj_per_byte: f64, write_nj_per_byte: f64) -> Device {
    let copy_ns = copy_ns_per_byte * PAGE_BYTES;
    Device {
        name: Cow::Borrowed("RAM"),
        read_ns: copy_ns / 2.0,
        write_ns: copy_ns / 2.0,
        read_nj: read_nj_per_byte * PAGE_BYTES,
        write_nj: write_nj_per_byte * PAGE_BYTES,
        endurance_writes: None,
        static_w_per_gib: 0.0,
        capacity_gib: None,
    }
}

/// A platform as its TOML table has it: the flash and RAM as per-byte figures. Every
/// key is required and no other is taken.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Keys {
    name: String,
    /// Flash read time, ns per byte ([`flash`]).
    flash_read_ns_per_byte: f64,
    /// Flash read energy, nJ per byte ([`flash`]).
    flash_read_nj_per_byte: f64,
    flash_read_by_cpu: bool,
    /// RAM-to-RAM copy time, ns per byte copied ([`ram`]).
    ram_copy_ns_per_byte: f64,
    /// RAM energy per byte read, nJ ([`ram`]).
    ram_read_nj_per_byte: f64,
    /// RAM energy per byte written, nJ ([`ram`]).
    ram_write_nj_per_byte: f64,
    page_alloc_ns: f64,
    page_alloc_nj: f64,
    page_lookup_ns: f64,
    fs_page_ns: f64,
    decompress_ns_per_byte: DecompressTimes,
    cpu_active_w: f64,
    base_w: f64,
}

impl From<Keys> for Platform {
    fn from(k: Keys) -> Self {
        Platform {
            name: k.name,
            flash: flash(k.flash_read_ns_per_byte, k.flash_read_nj_per_byte),
            flash_read_by_cpu: k.flash_read_by_cpu,
            ram: ram(
                k.ram_copy_ns_per_byte,
                k.ram_read_nj_per_byte,
                k.ram_write_nj_per_byte,
            ),
            page_alloc_ns: k.page_alloc_ns,
            page_alloc_nj: k.page_alloc_nj,
            page_lookup_ns: k.page_lookup_ns,
            fs_page_ns: k.fs_page_ns,
            decompress_ns_per_byte: k.decompress_ns_per_byte,
            cpu_active_w: k.cpu_active_w,
            base_w: k.base_w,
        }
    }
}

impl From<Platform> for Keys {
    fn from(p: Platform) -> Self {
        Keys {
            flash_read_ns_per_byte: p.flash_read_ns_per_byte(),
            flash_read_nj_per_byte: p.flash_read_nj_per_byte(),
            ram_copy_ns_per_byte: p.ram_copy_ns_per_byte(),
            ram_read_nj_per_byte: p.ram_read_nj_per_byte(),
            ram_write_nj_per_byte: p.ram_write_nj_per_byte(),
            name: p.name,
            flash_read_by_cpu: p.flash_read_by_cpu,
            page_alloc_ns: p.page_alloc_ns,
            page_alloc_nj: p.page_alloc_nj,
            page_lookup_ns: p.page_lookup_ns,
            fs_page_ns: p.fs_page_ns,
            decompress_ns_per_byte: p.decompress_ns_per_byte,
            cpu_active_w: p.cpu_active_w,
            base_w: p.base_w,
        }
    }
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
            flash: flash(flash_read_ns_per_byte, flash_read_nj_per_byte),
            flash_read_by_cpu: true,
            ram: ram(ram_copy_ns_per_byte, ram_nj_per_byte, ram_nj_per_byte),
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
            flash: flash(flash_read_ns_per_byte, flash_read_nj_per_byte),
            flash_read_by_cpu: false,
            ram: ram(
                // Assumed memcpy of 4 KiB on a big core over LPDDR4X/5: 10 GB/s.
                ns_per_byte(10_000.0),
                // Assumed about 5 pJ per bit moved for LPDDR4X/5 including I/O: 0.04 nJ
                // per byte, read or written.
                0.04,
                0.04,
            ),
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

    /// The built-in platforms' names ([`super::registry::PLATFORMS`]).
    pub fn names() -> Vec<&'static str> {
        super::registry::PLATFORMS.names().collect()
    }

    /// The built-in platform called `name`; an unknown name lists the known ones.
    pub fn named(name: &str) -> Result<Self> {
        Ok((super::registry::PLATFORMS.find(name)?.platform)())
    }

    /// Time to move one byte from flash into RAM, ns: the flash's page read over 4096.
    pub fn flash_read_ns_per_byte(&self) -> f64 {
        self.flash.read_ns / PAGE_BYTES
    }

    /// Energy of the flash device per byte read, nJ.
    pub fn flash_read_nj_per_byte(&self) -> f64 {
        self.flash.read_nj / PAGE_BYTES
    }

    /// Time of a RAM-to-RAM copy per byte copied, ns: a page read and a page write,
    /// over 4096.
    pub fn ram_copy_ns_per_byte(&self) -> f64 {
        (self.ram.read_ns + self.ram.write_ns) / PAGE_BYTES
    }

    /// RAM energy per byte read, nJ.
    pub fn ram_read_nj_per_byte(&self) -> f64 {
        self.ram.read_nj / PAGE_BYTES
    }

    /// RAM energy per byte written, nJ.
    pub fn ram_write_nj_per_byte(&self) -> f64 {
        self.ram.write_nj / PAGE_BYTES
    }

    /// Rejects negative and non-finite figures, naming the field (by its TOML key), and
    /// flash and RAM devices that [`Device::validate`] rejects.
    pub fn validate(&self) -> Result<()> {
        super::check_figures(&format!("platform {}", self.name), self)?;
        self.flash.validate()?;
        self.ram.validate()
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

        let mut platform = Platform::pxa250();
        platform.flash.read_nj = -1.0;
        let message = platform.validate().unwrap_err().to_string();
        assert!(message.contains("flash_read_nj_per_byte"), "{message}");

        let mut platform = Platform::modern_phone();
        platform.decompress_ns_per_byte.lzo = f64::INFINITY;
        let message = platform.validate().unwrap_err().to_string();
        assert!(message.contains("decompress_ns_per_byte.lzo"), "{message}");
    }

    #[test]
    fn flash_and_ram_are_devices_per_page_with_the_per_byte_figures_exact() {
        let pxa = Platform::pxa250();
        assert_eq!(
            (pxa.flash.read_ns, pxa.flash.read_nj),
            (245_760.0, 0.066 * 60.0 * 4096.0)
        );
        assert_eq!((pxa.ram.read_ns, pxa.ram.write_ns), (20_480.0, 20_480.0));
        assert_eq!(pxa.ram.read_nj, 0.66 / 0.4 * 4096.0);
        assert_eq!(
            (pxa.flash.name.as_ref(), pxa.ram.name.as_ref()),
            ("flash", "RAM")
        );
        // Per page and back is the same number, bit for bit, even where a per-byte
        // figure is not exact in binary.
        let phone = Platform::modern_phone();
        let same = |a: f64, b: f64| assert_eq!(a.to_bits(), b.to_bits(), "{a} vs {b}");
        same(phone.flash_read_ns_per_byte(), ns_per_byte(1500.0));
        same(phone.flash_read_nj_per_byte(), 1.2 * ns_per_byte(1500.0));
        same(phone.ram_copy_ns_per_byte(), ns_per_byte(10_000.0));
        same(phone.ram_read_nj_per_byte(), 0.04);
        same(phone.ram_write_nj_per_byte(), 0.04);
        same(pxa.flash_read_nj_per_byte(), 0.066 * 60.0);
        // The flash takes no writes and wears not; both devices are valid devices.
        assert_eq!(
            (phone.flash.write_ns, phone.flash.endurance_writes),
            (0.0, None)
        );
        phone.flash.validate().unwrap();
        phone.ram.validate().unwrap();
    }

    #[test]
    fn the_toml_table_keeps_its_per_byte_keys() {
        let text = toml::to_string(&Platform::pxa250()).unwrap();
        let keys: Vec<&str> = text
            .lines()
            .filter_map(|line| line.split_once(" = ").map(|(key, _)| key))
            .collect();
        assert_eq!(
            keys,
            [
                "name",
                "flash_read_ns_per_byte",
                "flash_read_nj_per_byte",
                "flash_read_by_cpu",
                "ram_copy_ns_per_byte",
                "ram_read_nj_per_byte",
                "ram_write_nj_per_byte",
                "page_alloc_ns",
                "page_alloc_nj",
                "page_lookup_ns",
                "fs_page_ns",
                "cpu_active_w",
                "base_w",
                "zlib",
                "lzo",
                "lz4",
                "zstd",
            ],
            "{text}"
        );
        assert!(text.contains("flash_read_ns_per_byte = 60.0\n"), "{text}");
        assert!(text.contains("ram_copy_ns_per_byte = 10.0\n"), "{text}");
        // A per-byte key read from a file is the device's page figure over 4096.
        let edited = text.replace("ram_copy_ns_per_byte = 10.0", "ram_copy_ns_per_byte = 3.0");
        let platform: Platform = toml::from_str(&edited).unwrap();
        assert_eq!(platform.ram.read_ns + platform.ram.write_ns, 3.0 * 4096.0);
        // A missing key is named.
        let missing = text.replace("flash_read_nj_per_byte = ", "flash_read_nj = ");
        let message = toml::from_str::<Platform>(&missing)
            .unwrap_err()
            .to_string();
        assert!(message.contains("flash_read_nj"), "{message}");
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
