//! Swap devices: where pages go when they leave DRAM (Bahn, Kim, JIIBC 2023).
//!
//! Three kinds, each priced per 4 KiB page:
//! - flash: the phone's eMMC/UFS storage, holding a swap partition or file, a [`Device`]
//!   ([`UFS21`] by default);
//! - NVM: a small non-volatile memory used as a block device, a [`Device`] ([`EMRAM`] by
//!   default);
//! - [`ZramSwap`]: compressed RAM (Linux zram), the CPU compressing pages, which costs
//!   CPU time instead of I/O.
//!
//! The multi-swap paper (Bahn, Kim, JIIBC 2023) gives no device timings, so every default
//! is an assumption with the source it leans on; `docs/swap.md` lists them together.
//! Energies are per page operation, in nJ; since 1 W x 1 ns = 1 nJ, an energy stated as
//! "power x latency" multiplies W by ns directly.

use serde::{Deserialize, Serialize};

use super::{keys, Device, EMRAM, PAGE_BYTES, UFS21};
use crate::{Error, Result};

/// Compressed RAM swap (zram with LZ4).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ZramSwap {
    pub name: String,
    /// Mean compression ratio of the pages that compress (original / compressed).
    pub compression_ratio: f64,
    /// Share of pages that do not compress and are stored whole (zram's "huge" pages).
    pub incompressible_share: f64,
    /// CPU time to compress one page, ns.
    pub compress_ns: f64,
    /// CPU time to decompress one page, ns.
    pub decompress_ns: f64,
    /// Energy of one compression, nJ.
    pub compress_nj: f64,
    /// Energy of one decompression, nJ.
    pub decompress_nj: f64,
}

impl Default for ZramSwap {
    /// LZ4 on a mobile big core.
    ///
    /// - 10 us to compress and 3 us to decompress a page: assumed. LZ4's own README states
    ///   over 500 MB/s per core to compress and several GB/s to decompress on desktop
    ///   cores; a phone core at about 400 MB/s and 1.5 GB/s, plus zsmalloc's allocation,
    ///   gives these figures.
    /// - ratio 2.5 for pages that compress (assumed; Android's anonymous memory commonly
    ///   shrinks 2.5-3x with LZ4, e.g. 100 MB of app heap into 40 MB), with 10% of pages
    ///   incompressible (assumed).
    /// - energy: an assumed 1 W big core over the CPU time: 10 uJ and 3 uJ.
    fn default() -> Self {
        ZramSwap {
            name: "zram-lz4".into(),
            compression_ratio: 2.5,
            incompressible_share: 0.1,
            compress_ns: 10_000.0,
            decompress_ns: 3_000.0,
            compress_nj: 1.0 * 10_000.0,
            decompress_nj: 1.0 * 3_000.0,
        }
    }
}

impl ZramSwap {
    /// Rejects figures outside their range (times and energies >= 0, a ratio >= 1, a
    /// share in 0..=1), naming the field.
    pub fn validate(&self) -> Result<()> {
        let ranges = [
            (
                "compression_ratio",
                self.compression_ratio,
                1.0,
                f64::INFINITY,
            ),
            ("incompressible_share", self.incompressible_share, 0.0, 1.0),
            ("compress_ns", self.compress_ns, 0.0, f64::INFINITY),
            ("decompress_ns", self.decompress_ns, 0.0, f64::INFINITY),
            ("compress_nj", self.compress_nj, 0.0, f64::INFINITY),
            ("decompress_nj", self.decompress_nj, 0.0, f64::INFINITY),
        ];
        match ranges
            .iter()
            .find(|(_, v, min, max)| !(v.is_finite() && v >= min && v <= max))
        {
            Some((field, value, min, max)) => Err(Error::config(
                format!("zram device {}", self.name),
                format!("{field} must be a finite number in {min}..={max}, got {value}"),
            )),
            None => Ok(()),
        }
    }

    /// Bytes a compressible page takes in the pool.
    pub fn compressed_bytes(&self) -> u64 {
        ((PAGE_BYTES as f64 / self.compression_ratio).ceil() as u64).clamp(1, PAGE_BYTES)
    }
}

/// The swap devices of a run; an architecture uses the ones it needs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SwapDevices {
    #[serde(with = "keys::flash")]
    pub flash: Device,
    #[serde(with = "keys::nvm")]
    pub nvm: Device,
    pub zram: ZramSwap,
}

impl Default for SwapDevices {
    fn default() -> Self {
        SwapDevices {
            flash: UFS21,
            nvm: EMRAM,
            zram: ZramSwap::default(),
        }
    }
}

impl SwapDevices {
    pub fn validate(&self) -> Result<()> {
        self.flash.validate()?;
        self.nvm.validate()?;
        self.zram.validate()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_valid_and_ordered() {
        let d = SwapDevices::default();
        d.validate().unwrap();
        // The point of the paper: NVM is much faster than flash, and writes cost more
        // than reads on both.
        assert!(d.nvm.read_ns * 10.0 < d.flash.read_ns);
        assert!(d.nvm.write_ns * 10.0 < d.flash.write_ns);
        assert!(d.flash.write_ns > d.flash.read_ns && d.nvm.write_ns > d.nvm.read_ns);
        assert_eq!(d.zram.compressed_bytes(), 1639);
        // 128 GiB x 3000 cycles = 384000 GiB = 375 TiB.
        assert_eq!(d.flash.endurance_bytes(), 375.0 * (1u64 << 40) as f64);
    }

    #[test]
    fn invalid_figures_are_named() {
        type Spoil = fn(&mut SwapDevices);
        let cases: [(&str, Spoil); 4] = [
            ("write_ns", |d| d.nvm.write_ns = f64::NAN),
            ("compression_ratio", |d| d.zram.compression_ratio = 0.5),
            ("incompressible_share", |d| {
                d.zram.incompressible_share = 1.5
            }),
            ("decompress_nj", |d| d.zram.decompress_nj = -1.0),
        ];
        for (field, spoil) in cases {
            let mut d = SwapDevices::default();
            spoil(&mut d);
            let message = d.validate().unwrap_err().to_string();
            assert!(message.contains(field), "{message}");
        }
    }
}
