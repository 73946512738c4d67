//! A phone described as data: memory, devices, and the mechanism in each slot.
//!
//! Each slot names the `mechanism` the phone runs and the `baseline` an ablation puts in
//! its place when the slot's technique is switched off (`reproduce composed`). Unknown
//! keys are errors; `experiments/phone.toml` and `experiments/phone-2012.toml` list
//! every key.

use serde::{Deserialize, Serialize};

use crate::config_file::Echo;
use crate::devices::swap::SwapDevices;
use crate::mm::dedup::KsmParams;
use crate::mm::fs::Codec;
use crate::mm::swap::LaunchModel;
use crate::workload::phone::PhoneWorkload;
use crate::{Error, Result};

/// The five slots, in the order results list them.
pub const SLOTS: [&str; 5] = ["placement", "reclaim", "swap", "dedup", "fs"];

/// A whole phone.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PhoneConfig {
    /// `phone` (the experiment kind; optional in a phone file read on its own).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub kind: String,
    /// Short name (`phone`, `phone-2012`), used in results.
    pub name: String,
    #[serde(default)]
    pub title: String,
    /// The phone and its workload are simulated at this fraction of their size: every
    /// memory and device size and every page count of the workload is multiplied by it
    /// (KSM's pages_to_scan too, so that a scan pass takes as long as at full size).
    #[serde(default = "one")]
    pub scale: f64,
    pub memory: MemorySpec,
    pub placement: PlacementSlot,
    pub reclaim: ReclaimSlot,
    pub swap: SwapSlot,
    pub dedup: DedupSlot,
    pub fs: FsSlot,
    #[serde(default)]
    pub launch: LaunchModel,
    #[serde(default)]
    pub response: ResponseModel,
    #[serde(default)]
    pub time: crate::mm::clock::TimeModel,
    #[serde(default)]
    pub workload: PhoneWorkload,
    /// A trace file to run instead of the generated workload (any format mobmem reads;
    /// relative to the phone file). Its accesses, importance changes, inputs and exits
    /// drive the phone; KSM needs page contents, which a trace does not carry.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace: Option<std::path::PathBuf>,
}

fn one() -> f64 {
    1.0
}

/// Main memory.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MemorySpec {
    /// DRAM of the phone, MiB.
    pub dram_mib: f64,
    /// DRAM the kernel, firmware carve-outs and the system's own processes keep, MiB.
    #[serde(default)]
    pub system_mib: f64,
}

/// The buffer cache of file pages on hybrid DRAM + PCM (the app-state-aware paper), or
/// `off`: file pages live in main memory under reclaim.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PlacementSlot {
    /// `off`, or a placement policy (`mobmem policies`), e.g. `app-aware`.
    pub mechanism: String,
    pub baseline: String,
    /// DRAM of the buffer cache, MiB, taken out of main memory.
    #[serde(default)]
    pub dram_mib: f64,
    /// PCM of the buffer cache, MiB, beside main memory.
    #[serde(default)]
    pub pcm_mib: f64,
}

/// Page reclaim: `stock`, `fmp`, `memcg-low`, `mglru` or `workingset`. It cannot be
/// switched off: every kernel reclaims.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReclaimSlot {
    pub mechanism: String,
    pub baseline: String,
    #[serde(default = "swappiness")]
    pub swappiness: u32,
    /// memcg-low: `memory.low` of the foreground app, MiB.
    #[serde(default = "memcg_low_mib")]
    pub memcg_low_mib: f64,
}

fn swappiness() -> u32 {
    60
}
fn memcg_low_mib() -> f64 {
    256.0
}

/// Swap: an architecture of `mobmem swap --list` (`none`, `flash`, `hierarchical-lru`,
/// `parallel-filtered`, `zram`, `zram-writeback`, ...).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SwapSlot {
    pub mechanism: String,
    pub baseline: String,
    /// Swap area on flash, MiB (flash-backed architectures, zram's writeback device).
    #[serde(default)]
    pub flash_mib: f64,
    /// NVM swap device, MiB (hierarchical and parallel architectures).
    #[serde(default)]
    pub nvm_mib: f64,
    /// zram: largest compressed size of the pool, MiB (`mem_limit`).
    #[serde(default)]
    pub zram_mib: f64,
    #[serde(default)]
    pub devices: SwapDevices,
}

/// KSM (`ksm`) or `off`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DedupSlot {
    pub mechanism: String,
    pub baseline: String,
    #[serde(default)]
    pub ksm: KsmParams,
}

/// The file system: `off` (uncompressed, through the page cache), `stock` (JFFS2-like:
/// compressed, every read through the page cache) or `selective` (the selective page
/// cache: incompressible pages bypass it).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FsSlot {
    pub mechanism: String,
    pub baseline: String,
    /// Platform profile pricing reads: `pxa250` or `modern-phone`.
    pub platform: String,
    pub codec: Codec,
    /// Compression ratio of code and resources under `codec` (uncompressed / stored).
    #[serde(default = "code_ratio")]
    pub code_ratio: f64,
}

fn code_ratio() -> f64 {
    2.5
}

/// How long an interaction takes: `execution_ms` plus the time of every fault the
/// interactive task takes until the next input.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ResponseModel {
    /// T_E, the interaction's own work, ms (FMP's model).
    pub execution_ms: f64,
    /// A minor fault: a zero-filled or copied-on-write page, ns.
    pub minor_fault_ns: f64,
    /// Power of the CPU while ksmd works, W (its CPU time becomes energy; zram's
    /// compressions are priced by its device profile).
    pub cpu_w: f64,
}

impl Default for ResponseModel {
    /// 100 ms of work per interaction (FMP's T_E); a minor fault assumed 1 us (clearing
    /// or copying 4 KiB and a page-table update); 1 W of CPU (assumed: a little core).
    fn default() -> Self {
        ResponseModel {
            execution_ms: 100.0,
            minor_fault_ns: 1_000.0,
            cpu_w: 1.0,
        }
    }
}

/// The mechanism chosen in each slot for one run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Choice {
    pub placement: String,
    pub reclaim: String,
    pub swap: String,
    pub dedup: String,
    pub fs: String,
}

impl Choice {
    pub fn get(&self, slot: &str) -> &str {
        match slot {
            "placement" => &self.placement,
            "reclaim" => &self.reclaim,
            "swap" => &self.swap,
            "dedup" => &self.dedup,
            _ => &self.fs,
        }
    }

    fn slot_mut(&mut self, slot: &str) -> &mut String {
        match slot {
            "placement" => &mut self.placement,
            "reclaim" => &mut self.reclaim,
            "swap" => &mut self.swap,
            "dedup" => &mut self.dedup,
            _ => &mut self.fs,
        }
    }
}

impl PhoneConfig {
    /// Parse a phone file; `origin` names it in errors.
    pub fn parse(text: &str, origin: &str) -> Result<Self> {
        Self::parse_with(text, origin, Echo::Quote)
    }

    /// Parse a phone file, quoting its text in errors only if `echo` allows.
    pub fn parse_with(text: &str, origin: &str, echo: Echo) -> Result<Self> {
        let config: Self = crate::config_file::from_toml(text, origin, echo)?;
        config
            .validate()
            .map_err(|e| Error::config(origin, e.to_string()))?;
        Ok(config)
    }

    /// Every slot at its mechanism.
    pub fn mechanisms(&self) -> Choice {
        Choice {
            placement: self.placement.mechanism.clone(),
            reclaim: self.reclaim.mechanism.clone(),
            swap: self.swap.mechanism.clone(),
            dedup: self.dedup.mechanism.clone(),
            fs: self.fs.mechanism.clone(),
        }
    }

    /// Every slot at its baseline.
    pub fn baselines(&self) -> Choice {
        Choice {
            placement: self.placement.baseline.clone(),
            reclaim: self.reclaim.baseline.clone(),
            swap: self.swap.baseline.clone(),
            dedup: self.dedup.baseline.clone(),
            fs: self.fs.baseline.clone(),
        }
    }

    /// The slots whose mechanism differs from its baseline: the techniques an ablation
    /// switches.
    pub fn techniques(&self) -> Vec<&'static str> {
        let (on, off) = (self.mechanisms(), self.baselines());
        SLOTS
            .into_iter()
            .filter(|s| on.get(s) != off.get(s))
            .collect()
    }

    /// `base` with `slot` set as in `from`.
    pub fn with_slot(base: &Choice, slot: &str, from: &Choice) -> Choice {
        let mut c = base.clone();
        *c.slot_mut(slot) = from.get(slot).to_string();
        c
    }

    /// Pages of `mib` MiB at this phone's scale.
    pub fn scaled_pages(&self, mib: f64) -> usize {
        (mib * 256.0 * self.scale).round() as usize
    }

    pub fn validate(&self) -> Result<()> {
        let fail = |m: String| Err(Error::config("phone", m));
        if !self.kind.is_empty() && self.kind != "phone" {
            return fail(format!("kind must be \"phone\", got {:?}", self.kind));
        }
        if !(self.scale.is_finite() && self.scale > 0.0 && self.scale <= 1.0) {
            return fail(format!("scale must be in (0, 1], got {}", self.scale));
        }
        if self.workload.scale != 1.0 {
            return fail(
                "set the scale at the top of the file: it applies to the phone and its workload alike"
                    .into(),
            );
        }
        for (name, v) in crate::fields!(
            self; memory.dram_mib, memory.system_mib, placement.dram_mib, placement.pcm_mib,
            swap.flash_mib, swap.nvm_mib, swap.zram_mib, reclaim.memcg_low_mib
        ) {
            if !(v.is_finite() && v >= 0.0) {
                return fail(format!("{name} must be a number >= 0, got {v}"));
            }
        }
        if self.memory.system_mib + self.placement.dram_mib >= self.memory.dram_mib {
            return fail(format!(
                "memory.system_mib ({}) plus placement.dram_mib ({}) must be below memory.dram_mib ({})",
                self.memory.system_mib, self.placement.dram_mib, self.memory.dram_mib
            ));
        }
        let frames = self.scaled_pages(self.memory.dram_mib - self.placement.dram_mib);
        let most = crate::mm::reclaim::MAX_MEMORY_PAGES;
        if !(64..=most).contains(&frames) {
            return fail(format!(
                "memory.dram_mib less placement.dram_mib, times scale, gives {frames} frames of 4 KiB: it must be 64 to {most}"
            ));
        }
        for choice in [self.mechanisms(), self.baselines()] {
            super::check_choice(self, &choice)?;
            if self.trace.is_some() && choice.dedup != "off" {
                return fail(
                    "dedup needs the pages' contents, which a trace does not carry: set dedup's mechanism and baseline to off, or use the generated workload"
                        .into(),
                );
            }
        }
        if !(self.fs.code_ratio.is_finite() && self.fs.code_ratio >= 1.0) {
            return fail(format!(
                "fs.code_ratio must be >= 1, got {}",
                self.fs.code_ratio
            ));
        }
        let r = &self.response;
        // Bounds far beyond any phone: larger values would only make the clock run for
        // simulated years.
        for (name, v, most) in [
            ("response.execution_ms", r.execution_ms, 60_000.0),
            ("response.minor_fault_ns", r.minor_fault_ns, 1e9),
            ("response.cpu_w", r.cpu_w, f64::MAX),
        ] {
            if !(v.is_finite() && (0.0..=most).contains(&v)) {
                return fail(format!("{name} must be a number from 0 to {most}, got {v}"));
            }
        }
        self.swap.devices.validate()?;
        self.time.validate()?;
        self.dedup.ksm.validate()?;
        crate::devices::platform::Platform::named(&self.fs.platform)?;
        let mut w = self.workload.clone();
        w.scale = self.scale;
        w.validate()
    }
}
