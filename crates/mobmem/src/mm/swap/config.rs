//! What a swap run is configured with. Every field has a default, so a TOML file states
//! only what it changes; unknown fields are errors.

use serde::{Deserialize, Serialize};

use super::architectures::find_architecture;
use crate::devices::check_non_negative;
use crate::devices::swap::SwapDevices;
use crate::{Error, Result};

/// One swap run: the architecture, the memory sizes, the devices, the launch model and
/// the reclaim order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SwapConfig {
    /// Registry name of the architecture (`swap::ARCHITECTURES`), e.g. `parallel-filtered`.
    pub architecture: String,
    /// Page frames of DRAM available to apps' anonymous memory. With zram, the pool's
    /// compressed bytes come out of these frames.
    pub dram_pages: usize,
    /// Swap slots (pages) of the NVM device, for the architectures that have one.
    pub nvm_pages: usize,
    pub zram: ZramConfig,
    pub devices: SwapDevices,
    pub launch: LaunchModel,
    pub reclaim: ReclaimOrder,
    /// What a swap-in does to the page's swap slot on the NVM and flash devices.
    pub slot_on_swap_in: SlotOnSwapIn,
    /// How launches become times: on the clock (the default; CPUs, device queues) or as
    /// a sum of the launch's latencies.
    pub time: crate::mm::clock::TimeModel,
}

/// Default DRAM for apps: 32768 pages (128 MiB), a third or less of the working sets of
/// the `app-cycling` preset's 20 apps (see `docs/swap.md`).
pub const DEFAULT_DRAM_PAGES: usize = 32_768;
/// Default NVM: 8192 pages (32 MiB).
pub const DEFAULT_NVM_PAGES: usize = 8_192;

impl Default for SwapConfig {
    fn default() -> Self {
        SwapConfig {
            architecture: "parallel-filtered".into(),
            dram_pages: DEFAULT_DRAM_PAGES,
            nvm_pages: DEFAULT_NVM_PAGES,
            zram: ZramConfig::default(),
            devices: SwapDevices::default(),
            launch: LaunchModel::default(),
            reclaim: ReclaimOrder::default(),
            slot_on_swap_in: SlotOnSwapIn::default(),
            time: crate::mm::clock::TimeModel::default(),
        }
    }
}

/// The zram pool and its writeback.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ZramConfig {
    /// Largest size of the pool's compressed data, in pages (zram's `mem_limit`); it must
    /// be smaller than `dram_pages`.
    pub pool_pages: usize,
    /// Pages `zram-writeback` may write to flash per day of trace time (zram's
    /// `writeback_limit`, which Android resets daily).
    pub writeback_limit_pages_per_day: u64,
    /// A pool page is idle, so may be written back, once it has been in the pool this
    /// long without being read, ns.
    pub idle_age_ns: u64,
}

impl Default for ZramConfig {
    /// A pool of a quarter of the default DRAM (Android devices commonly size zram's disk
    /// at a quarter to a half of RAM); 1 GiB of writeback a day (assumed); idle after 60 s
    /// (Android marks pages idle over hours, scaled down to traces of minutes).
    fn default() -> Self {
        ZramConfig {
            pool_pages: DEFAULT_DRAM_PAGES / 4,
            writeback_limit_pages_per_day: (1u64 << 30) / crate::devices::PAGE_BYTES,
            idle_age_ns: 60_000_000_000,
        }
    }
}

/// How long a launch takes (see `docs/swap.md`, "Launch model").
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct LaunchModel {
    /// A launch covers the launching app's accesses from its move to the foreground until
    /// this much trace time has passed, ns.
    pub window_ns: u64,
    /// Also end the window after this many of the app's accesses, when set.
    pub window_accesses: Option<u64>,
    /// CPU time of a warm launch with no swap-in faults, ns.
    pub warm_base_ns: f64,
    /// Time of a cold start (the process is created anew), ns.
    pub cold_start_ns: f64,
    /// Also charge the swap-out writes (and zram compressions) that the launching app's
    /// own faults cause through direct reclaim.
    pub charge_reclaim_writes: bool,
}

impl Default for LaunchModel {
    /// A 1 s window (the `app-cycling` preset touches its launch set within it); warm
    /// 300 ms and cold 1500 ms, assumed typical of popular apps on mid-range phones and
    /// well under Android vitals' "excessive" thresholds (warm >= 2 s, cold >= 5 s).
    fn default() -> Self {
        LaunchModel {
            window_ns: 1_000_000_000,
            window_accesses: None,
            warm_base_ns: 300e6,
            cold_start_ns: 1500e6,
            charge_reclaim_writes: false,
        }
    }
}

/// Which resident page reclaim takes first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ReclaimOrder {
    /// The coldest page (per-app LRU) of the least important app: highest
    /// `oom_score_adj`, ties broken by the app used least recently.
    #[default]
    AppImportance,
    /// The coldest page of all, whatever app owns it (one global LRU list).
    GlobalLru,
}

/// What a swap-in does to the page's slot on an NVM or flash device. zram always frees
/// its copy (see `docs/swap.md`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SlotOnSwapIn {
    /// The slot is freed and the page's access bit is remembered per page (its swap
    /// history); every swap-out writes the page and its place is decided again then.
    /// The paper's plainer reading, and the one whose results come closest to the paper's.
    #[default]
    Free,
    /// The slot stays allocated with the page's data, as Linux's swap cache keeps it after
    /// a read fault: a later swap-out of the unchanged page writes nothing, a changed page
    /// is written back to its slot, and the slot's access bit can be set while the page
    /// is in DRAM. Hierarchical swap then refills NVM from flash on a fault.
    Keep,
}

impl SwapConfig {
    pub fn validate(&self) -> Result<()> {
        let info = find_architecture(&self.architecture)?;
        self.devices.validate()?;
        self.time.validate()?;
        let launch = &self.launch;
        check_non_negative(
            "swap launch model",
            &[
                ("warm_base_ns", launch.warm_base_ns),
                ("cold_start_ns", launch.cold_start_ns),
            ],
        )?;
        if launch.window_accesses == Some(0) {
            return Err(Error::config(
                "swap launch model",
                "window_accesses must be at least 1 when set",
            ));
        }
        let most = crate::mm::reclaim::MAX_MEMORY_PAGES;
        if !(1..=most).contains(&self.dram_pages) {
            return Err(Error::config(
                "swap config",
                format!(
                    "dram_pages must be 1..={most} (16 GiB of frames, the machine's largest \
memory), got {}",
                    self.dram_pages
                ),
            ));
        }
        if info.uses_zram && self.zram.pool_pages >= self.dram_pages {
            return Err(Error::config(
                "swap config",
                format!(
                    "zram.pool_pages ({}) must be smaller than dram_pages ({}): the pool lives in DRAM",
                    self.zram.pool_pages, self.dram_pages
                ),
            ));
        }
        Ok(())
    }
}
