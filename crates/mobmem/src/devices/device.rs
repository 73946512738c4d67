//! One description of a memory or storage device, and the built-in devices as data.
//!
//! Units, the same for every device: time in ns per page operation, energy in nJ per page
//! operation (a page is [`PAGE_BYTES`](super::PAGE_BYTES) bytes), static power in W per
//! GiB, endurance in writes a cell takes (program/erase cycles for flash). Configuration
//! files keep each kind's own keys and units ([`super::keys`]); they are converted here
//! once, on reading.
//!
//! Sources: DRAM and PCM from Table 1 of the app-state-aware buffer cache paper (Oh,
//! Kang, Lee, Eom, KIISE 2015; the slower end of each range, as the paper chose
//! pessimistic PCM figures). The multi-swap paper (Bahn, Kim, JIIBC 2023) gives no device
//! timings: its NVM and flash are assumptions, each stated at its constant below and
//! listed in `docs/swap.md`. The NVM is embedded MRAM, not the PCM of the buffer-cache
//! paper: a different part with different figures, so neither is derived from the other.

use std::borrow::Cow;

use super::{check_non_negative, PAGE_BITS};
use crate::{Error, Result};

/// One memory or storage technology, priced per page operation.
///
/// - `read_ns`, `write_ns`: latency of one page read, one page write (ns);
/// - `read_nj`, `write_nj`: their energies (nJ);
/// - `endurance_writes`: writes a cell endures, `None` for unlimited;
/// - `static_w_per_gib`: static (refresh/leakage) power (W per GiB), 0 where not
///   modelled;
/// - `capacity_gib`: size of the whole device where its wear is spread over all of it
///   (flash with wear leveling), `None` where wear is counted per frame.
#[derive(Debug, Clone, PartialEq)]
pub struct Device {
    pub name: Cow<'static, str>,
    pub read_ns: f64,
    pub write_ns: f64,
    pub read_nj: f64,
    pub write_nj: f64,
    pub endurance_writes: Option<f64>,
    pub static_w_per_gib: f64,
    pub capacity_gib: Option<f64>,
}

/// DRAM per Table 1: 50 ns read, 20-50 ns write (50 used), 0.1 nJ/bit both ways, about
/// 1 W/GB static, unlimited endurance.
pub const DRAM: Device = Device {
    name: Cow::Borrowed("DRAM"),
    read_ns: 50.0,
    write_ns: 50.0,
    read_nj: 0.1 * PAGE_BITS,
    write_nj: 0.1 * PAGE_BITS,
    static_w_per_gib: 1.0,
    endurance_writes: None,
    capacity_gib: None,
};

/// PCM per Table 1: 50-100 ns read (100 used), about 1 us write, 0.1 nJ/bit read,
/// 1 nJ/bit write, well under 0.1 W static (0.01 used), 10^8 writes endurance.
pub const PCM: Device = Device {
    name: Cow::Borrowed("PCM"),
    read_ns: 100.0,
    write_ns: 1000.0,
    read_nj: 0.1 * PAGE_BITS,
    write_nj: 1.0 * PAGE_BITS,
    static_w_per_gib: 0.01,
    endurance_writes: Some(1e8),
    capacity_gib: None,
};

/// Swap NVM: embedded STT-MRAM as a block device (the multi-swap paper cites Samsung's
/// eMRAM).
///
/// - read 3 us, write 10 us per 4 KiB page: assumed. MRAM arrays read in tens of ns and
///   write in tens to hundreds of ns per word; a page moved over a narrow embedded
///   interface plus the block layer's per-request work comes to a few us to read and
///   about 10 us to write.
/// - energy: about 0.1 nJ per bit written and 0.01 nJ per bit read at the array
///   (assumed, the order reported for perpendicular STT-MRAM), plus the interface at an
///   assumed 0.1 W over the latency: read 0.3 uJ + 0.33 uJ, write 1 uJ + 3.3 uJ.
pub const EMRAM: Device = Device {
    name: Cow::Borrowed("emram"),
    read_ns: 3_000.0,
    write_ns: 10_000.0,
    read_nj: 0.1 * 3_000.0 + 0.01 * PAGE_BITS,
    write_nj: 0.1 * 10_000.0 + 0.1 * PAGE_BITS,
    static_w_per_gib: 0.0,
    endurance_writes: None,
    capacity_gib: None,
};

/// Swap flash: UFS 2.1 class (phones of 2016-2020, the multi-swap paper's era and
/// setting).
///
/// - read 100 us, write 150 us: assumed queue-depth-1 latencies of random 4 KiB I/O.
///   Vendors quote tens of thousands of random IOPS, but at high queue depth; a fault
///   waits for one page at depth 1, a whole command round trip, on the order of 100 us
///   on UFS 2.x, with writes slower than reads.
/// - energy: assumed active power of about 0.25 W while reading and 0.35 W while
///   writing, times the latency (1 W x 1 ns = 1 nJ): 25 uJ a read, 52.5 uJ a write.
/// - endurance: 3000 P/E cycles, typical of TLC NAND (assumption); 128 GiB.
pub const UFS21: Device = Device {
    name: Cow::Borrowed("ufs2.1"),
    read_ns: 100_000.0,
    write_ns: 150_000.0,
    read_nj: 0.25 * 100_000.0,
    write_nj: 0.35 * 150_000.0,
    static_w_per_gib: 0.0,
    endurance_writes: Some(3000.0),
    capacity_gib: Some(128.0),
};

/// Storage behind the page cache: eMMC-class flash, 4 KiB random read about 100 us and
/// write about 300 us (assumed typical figures for eMMC 4.5/5.0 parts of the buffer-cache
/// paper's era). Only its latencies are used (the `table1-ns` cost model, reclaim's fault
/// time); its energy is not modelled.
pub const EMMC: Device = Device {
    name: Cow::Borrowed("emmc"),
    read_ns: 100_000.0,
    write_ns: 300_000.0,
    read_nj: 0.0,
    write_nj: 0.0,
    static_w_per_gib: 0.0,
    endurance_writes: None,
    capacity_gib: None,
};

impl Device {
    /// Energy of one page read, nJ.
    pub fn read_energy_nj(&self) -> f64 {
        self.read_nj
    }

    /// Energy of one page write, nJ.
    pub fn write_energy_nj(&self) -> f64 {
        self.write_nj
    }

    /// Bytes the whole device can absorb before its cells wear out (ideal wear
    /// leveling, no write amplification); 0 without a capacity and an endurance.
    pub fn endurance_bytes(&self) -> f64 {
        match (self.capacity_gib, self.endurance_writes) {
            (Some(gib), Some(cycles)) => gib * (1u64 << 30) as f64 * cycles,
            _ => 0.0,
        }
    }

    /// Rejects negative and non-finite figures and an endurance of 0, naming the field.
    pub fn validate(&self) -> Result<()> {
        let context = format!("device {}", self.name);
        check_non_negative(
            &context,
            &[
                ("read_ns", self.read_ns),
                ("write_ns", self.write_ns),
                ("read_nj", self.read_nj),
                ("write_nj", self.write_nj),
                ("static_w_per_gib", self.static_w_per_gib),
                ("capacity_gib", self.capacity_gib.unwrap_or(0.0)),
            ],
        )?;
        match self.endurance_writes {
            Some(e) if !(e.is_finite() && e > 0.0) => Err(Error::config(
                context,
                format!("endurance (endurance_writes, or endurance_pe_cycles of flash) must be > 0, got {e}"),
            )),
            _ => Ok(()),
        }
    }
}
