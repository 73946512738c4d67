//! Memory and storage devices, and the cost models that turn device operations into
//! time and energy.
//!
//! - [`Device`] ([`device`]): the one description of a memory or storage device, with the
//!   built-in devices ([`DRAM`], [`PCM`], [`EMMC`], [`EMRAM`], [`UFS21`]) as data; [`keys`] keeps
//!   each kind's configuration-file keys.
//! - [`swap`]: the swap devices of a run, with zram's compression CPU.
//! - [`platform`]: what a compressed flash file system's read path costs on one machine:
//!   its flash and RAM as [`Device`]s, and the work of the CPU and the kernel.
//! - [`registry`]: every built-in profile by name (devices, zram, cost models,
//!   platforms), the lists an experiment file names them from.
//!
//! DRAM and PCM defaults come from Table 1 of the app-state-aware buffer cache paper (Oh,
//! Kang, Lee, Eom, KIISE 2015).

mod device;
pub mod keys;
pub mod platform;
pub mod registry;
pub mod swap;

pub use device::{Device, DRAM, EMMC, EMRAM, PCM, UFS21};

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

/// Check that every number in `value`, a struct of figures as it serializes, is finite
/// and >= 0; the error names the first one that is not by its key (`outer.inner` when
/// nested).
pub fn check_figures<T: Serialize>(context: &str, value: &T) -> Result<()> {
    fn collect(prefix: &str, value: &toml::Value, out: &mut Vec<(String, f64)>) {
        match value {
            toml::Value::Float(v) => out.push((prefix.to_string(), *v)),
            toml::Value::Integer(v) => out.push((prefix.to_string(), *v as f64)),
            toml::Value::Table(table) => {
                for (key, inner) in table {
                    let path = match prefix {
                        "" => key.clone(),
                        _ => format!("{prefix}.{key}"),
                    };
                    collect(&path, inner, out);
                }
            }
            _ => {}
        }
    }
    let value = toml::Value::try_from(value).map_err(|e| Error::config(context, e.to_string()))?;
    let mut figures = Vec::new();
    collect("", &value, &mut figures);
    let fields: Vec<(&str, f64)> = figures.iter().map(|(k, v)| (k.as_str(), *v)).collect();
    check_non_negative(context, &fields)
}

/// Bytes in a page.
pub const PAGE_BYTES: u64 = 4096;
/// Bits in a page: per-bit energies are multiplied by this for one page operation.
pub const PAGE_BITS: f64 = (PAGE_BYTES * 8) as f64;

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
    /// (the reading of the paper).
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

    /// Latencies in ns from Table 1 for memory, and an eMMC-class flash ([`EMMC`]) for
    /// storage (set your own in an experiment file). Only dirty evictions cost a storage
    /// write.
    pub fn table1_ns() -> Self {
        let (dram, pcm, storage) = (DRAM, PCM, EMMC);
        CostModel {
            name: "table1-ns".into(),
            unit: "ns".into(),
            dram_read: dram.read_ns,
            dram_write: dram.write_ns,
            pcm_read: pcm.read_ns,
            pcm_write: pcm.write_ns,
            storage_read: storage.read_ns,
            eviction: 0.0,
            writeback: storage.write_ns,
            eviction_charge: EvictionCharge::ForegroundPages,
        }
    }

    /// The built-in cost models' names ([`registry::COST_MODELS`]).
    pub fn names() -> Vec<&'static str> {
        registry::COST_MODELS.names().collect()
    }

    /// The built-in cost model called `name`; an unknown name lists the known ones.
    pub fn named(name: &str) -> Result<Self> {
        Ok((registry::COST_MODELS.find(name)?.model)())
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

    /// Rejects negative and non-finite figures, naming the field.
    pub fn validate(&self) -> Result<()> {
        check_figures(&format!("cost model {}", self.name), self)
    }
}

/// The memory devices of a run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Devices {
    #[serde(with = "keys::memory")]
    pub dram: Device,
    #[serde(with = "keys::memory")]
    pub pcm: Device,
}

impl Default for Devices {
    fn default() -> Self {
        Devices {
            dram: DRAM,
            pcm: PCM,
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
    fn storage_figures_are_the_emmc_device() {
        // table1-ns prices storage, and reclaim times a fault, with the eMMC latencies.
        let model = CostModel::table1_ns();
        assert_eq!(
            (model.storage_read, model.writeback),
            (100_000.0, 300_000.0)
        );
        assert_eq!(crate::mm::reclaim::ReclaimConfig::default().fault_ms, 0.1);
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
