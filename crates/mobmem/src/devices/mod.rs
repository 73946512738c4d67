//! Memory devices and the cost models that turn device operations into time and energy.
//!
//! Defaults come from Table 1 of the app-state-aware buffer cache paper (Oh, Kang, Lee,
//! Eom, KIISE 2015), restated in SPEC.md section 1. Where the table gives a range, the
//! slower end is used (the paper itself chose pessimistic PCM figures).

pub mod platform;
pub mod swap;

use serde::{Deserialize, Serialize};

use crate::mm::placement::Tier;
use crate::{Error, Result};

/// Check that every named figure is a finite number >= 0; the error names the first
/// one that is not, in `context`.
pub fn check_non_negative(context: &str, fields: &[(&str, f64)]) -> Result<()> {
    match fields.iter().find(|(_, v)| !(v.is_finite() && *v >= 0.0)) {
        Some((field, value)) => Err(Error::config(
            context,
            format!("{field} must be a finite number >= 0, got {value}"),
        )),
        None => Ok(()),
    }
}

/// Bytes in a page.
pub const PAGE_BYTES: u64 = 4096;
/// Bits in a page: per-bit energies are multiplied by this for one page operation.
pub const PAGE_BITS: f64 = (PAGE_BYTES * 8) as f64;

/// One memory technology.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Device {
    pub name: String,
    /// Latency of one page read, ns.
    pub read_ns: f64,
    /// Latency of one page write, ns.
    pub write_ns: f64,
    /// Read energy, nJ per bit.
    pub read_nj_per_bit: f64,
    /// Write energy, nJ per bit.
    pub write_nj_per_bit: f64,
    /// Static (refresh/leakage) power, W per GiB. Reported, not part of comparisons.
    pub static_w_per_gib: f64,
    /// Writes a cell endures; `None` for unlimited.
    pub endurance_writes: Option<f64>,
}

impl Device {
    /// DRAM per Table 1: 50 ns read, 20-50 ns write (50 used), 0.1 nJ/bit both ways,
    /// about 1 W/GB static, unlimited endurance.
    pub fn dram() -> Self {
        Device {
            name: "DRAM".into(),
            read_ns: 50.0,
            write_ns: 50.0,
            read_nj_per_bit: 0.1,
            write_nj_per_bit: 0.1,
            static_w_per_gib: 1.0,
            endurance_writes: None,
        }
    }

    /// PCM per Table 1: 50-100 ns read (100 used), about 1 us write, 0.1 nJ/bit read,
    /// 1 nJ/bit write, well under 0.1 W static (0.01 used), 10^8 writes endurance.
    pub fn pcm() -> Self {
        Device {
            name: "PCM".into(),
            read_ns: 100.0,
            write_ns: 1000.0,
            read_nj_per_bit: 0.1,
            write_nj_per_bit: 1.0,
            static_w_per_gib: 0.01,
            endurance_writes: Some(1e8),
        }
    }

    pub fn read_energy_nj(&self) -> f64 {
        self.read_nj_per_bit * PAGE_BITS
    }

    pub fn write_energy_nj(&self) -> f64 {
        self.write_nj_per_bit * PAGE_BITS
    }

    fn validate(&self) -> Result<()> {
        let fields = [
            ("read_ns", self.read_ns),
            ("write_ns", self.write_ns),
            ("read_nj_per_bit", self.read_nj_per_bit),
            ("write_nj_per_bit", self.write_nj_per_bit),
            ("static_w_per_gib", self.static_w_per_gib),
        ];
        check_non_negative(&format!("device {}", self.name), &fields)?;
        if let Some(e) = self.endurance_writes {
            if !(e.is_finite() && e > 0.0) {
                return Err(Error::config(
                    format!("device {}", self.name),
                    "endurance_writes must be > 0",
                ));
            }
        }
        Ok(())
    }
}

/// Time charged per page operation, in the model's own unit.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CostModel {
    pub name: String,
    /// Unit of every figure below ("relative" or "ns").
    pub unit: String,
    pub dram_read: f64,
    pub dram_write: f64,
    pub pcm_read: f64,
    pub pcm_write: f64,
    /// Reading a missing page from storage.
    pub storage_read: f64,
    /// Every page evicted to storage, clean or dirty.
    pub eviction: f64,
    /// Extra for each dirty page written back on eviction.
    pub writeback: f64,
    /// Which evictions count towards the foreground app's elapsed time.
    #[serde(default)]
    pub eviction_charge: EvictionCharge,
}

/// Which evictions to storage are charged to the foreground app's elapsed time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum EvictionCharge {
    /// Every eviction of a page whose owner is in the foreground, whoever caused it
    /// (SPEC.md's reading).
    #[default]
    ForegroundPages,
    /// Every eviction caused by a foreground access, plus foreground pages evicted by
    /// background accesses (the paper's text read literally).
    ForegroundCausedOrOwned,
}

impl CostModel {
    /// The paper's relative model: DRAM read = write = 1, PCM read 2, PCM write 50,
    /// eviction to storage 1000 (section 4 of the paper). It charges no separate storage
    /// read: a missing page costs the write that places it, and the eviction it causes.
    pub fn paper_relative() -> Self {
        CostModel {
            name: "paper-relative".into(),
            unit: "relative".into(),
            dram_read: 1.0,
            dram_write: 1.0,
            pcm_read: 2.0,
            pcm_write: 50.0,
            storage_read: 0.0,
            eviction: 1000.0,
            writeback: 0.0,
            eviction_charge: EvictionCharge::ForegroundPages,
        }
    }

    /// Latencies in ns from Table 1 for memory, and an eMMC-class flash for storage:
    /// 4 KiB random read about 100 us and write about 300 us (assumed typical figures for
    /// eMMC 4.5/5.0 parts of the paper's era; set your own in an experiment file). Only
    /// dirty evictions cost a storage write.
    pub fn table1_ns() -> Self {
        let (dram, pcm) = (Device::dram(), Device::pcm());
        CostModel {
            name: "table1-ns".into(),
            unit: "ns".into(),
            dram_read: dram.read_ns,
            dram_write: dram.write_ns,
            pcm_read: pcm.read_ns,
            pcm_write: pcm.write_ns,
            storage_read: 100_000.0,
            eviction: 0.0,
            writeback: 300_000.0,
            eviction_charge: EvictionCharge::ForegroundPages,
        }
    }

    pub fn names() -> &'static [&'static str] {
        &["paper-relative", "table1-ns"]
    }

    pub fn named(name: &str) -> Result<Self> {
        match name {
            "paper-relative" => Ok(Self::paper_relative()),
            "table1-ns" => Ok(Self::table1_ns()),
            _ => Err(Error::Unknown {
                what: "cost model",
                name: name.to_string(),
                known: Self::names().iter().map(|s| s.to_string()).collect(),
            }),
        }
    }

    #[inline]
    pub fn read(&self, tier: Tier) -> f64 {
        match tier {
            Tier::Dram => self.dram_read,
            Tier::Pcm => self.pcm_read,
        }
    }

    #[inline]
    pub fn write(&self, tier: Tier) -> f64 {
        match tier {
            Tier::Dram => self.dram_write,
            Tier::Pcm => self.pcm_write,
        }
    }

    pub fn validate(&self) -> Result<()> {
        let fields = [
            ("dram_read", self.dram_read),
            ("dram_write", self.dram_write),
            ("pcm_read", self.pcm_read),
            ("pcm_write", self.pcm_write),
            ("storage_read", self.storage_read),
            ("eviction", self.eviction),
            ("writeback", self.writeback),
        ];
        check_non_negative(&format!("cost model {}", self.name), &fields)
    }
}

/// The memory devices of a run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Devices {
    pub dram: Device,
    pub pcm: Device,
}

impl Default for Devices {
    fn default() -> Self {
        Devices {
            dram: Device::dram(),
            pcm: Device::pcm(),
        }
    }
}

impl Devices {
    pub fn of(&self, tier: Tier) -> &Device {
        match tier {
            Tier::Dram => &self.dram,
            Tier::Pcm => &self.pcm,
        }
    }

    pub fn validate(&self) -> Result<()> {
        self.dram.validate()?;
        self.pcm.validate()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn page_energy_follows_table1() {
        // 0.1 nJ/bit x 32768 bits = 3276.8 nJ per DRAM page read; PCM writes cost 10x.
        let d = Devices::default();
        assert!((d.dram.read_energy_nj() - 3276.8).abs() < 1e-9);
        assert!((d.pcm.write_energy_nj() / d.pcm.read_energy_nj() - 10.0).abs() < 1e-12);
    }

    #[test]
    fn named_models() {
        assert_eq!(CostModel::named("paper-relative").unwrap().pcm_write, 50.0);
        assert!(CostModel::named("nope")
            .unwrap_err()
            .to_string()
            .contains("paper-relative"));
        let mut bad = CostModel::paper_relative();
        bad.pcm_write = -1.0;
        assert!(bad
            .validate()
            .unwrap_err()
            .to_string()
            .contains("pcm_write"));
    }
}
