//! What a swap run measures. Counters are exact integers; times and energies are the
//! devices' figures summed over the counted operations. Its [`Stats`] listing names
//! every figure, the names used in result tables.

use serde::Serialize;

use crate::core::stats::{percentile, Stats};

use super::launch::{LaunchKind, LaunchRecord};
use crate::core::swap::{IoCounts, SwapDevice};
use crate::devices::swap::SwapDevices;
use crate::devices::PAGE_BYTES;
use crate::trace::ProcId;

/// Launches of one app (first launches left out).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AppLaunches {
    pub proc: ProcId,
    pub pid: u32,
    pub name: String,
    pub cold_starts: u64,
    pub warm_launches: u64,
    /// Mean launch time over its cold and warm launches, ms (NaN without any).
    pub mean_ms: f64,
}

/// Counters and sums of one swap run.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Stats)]
pub struct SwapMetrics {
    pub architecture: String,
    pub events: u64,
    /// Accesses to anonymous pages, the ones the model simulates.
    pub accesses: u64,
    /// Accesses not simulated: file pages (left to the page cache) and, when a swap trace
    /// is replayed, every access.
    pub ignored_accesses: u64,
    pub dram_hits: u64,
    /// Pages touched with no copy anywhere: zero-filled, no I/O. In a replay, swap-ins of
    /// pages whose app the killer took (the restarted app allocates them afresh).
    pub fresh_allocations: u64,
    /// Pages reclaimed from DRAM into swap.
    pub swap_outs: u64,
    /// Of those, pages whose slot already held their data, so nothing was written.
    pub clean_swap_outs: u64,
    /// Swap-in faults.
    pub swap_ins: u64,
    /// Distinct pages ever swapped out: the swap footprint.
    pub swapped_pages: u64,
    #[stats(then(
        flash_reads = self.io.flash_reads,
        flash_writes = self.io.flash_writes,
        flash_accesses = self.flash_accesses(),
        nvm_reads = self.io.nvm_reads,
        nvm_writes = self.io.nvm_writes,
        zram_compressions = self.io.zram_compressions,
        zram_decompressions = self.io.zram_decompressions,
        promotions = self.io.promotions,
        demotions = self.io.demotions,
        writebacks = self.io.writebacks,
    ))]
    pub io: IoCounts,
    /// Sum of the NVM and flash latencies of every device operation, ns.
    #[stats(skip, then(io_time_ms = self.io_time_ns / 1e6))]
    pub io_time_ns: f64,
    /// CPU time of zram compressions and decompressions, ns.
    #[stats(skip, then(zram_cpu_ms = self.zram_cpu_ns / 1e6))]
    pub zram_cpu_ns: f64,
    /// Energy of every device operation and zram compression, nJ.
    #[stats(skip, then(energy_mj = self.energy_nj / 1e6))]
    pub energy_nj: f64,
    /// Apps killed by the low-memory killer.
    pub kills: u64,
    /// Apps that exited by themselves (exit events).
    pub exits: u64,
    /// Pages of unkillable apps dropped because nothing else could be reclaimed.
    pub dropped_pages: u64,
    pub first_launches: u64,
    pub cold_starts: u64,
    pub warm_launches: u64,
    /// Swap-in faults during launches.
    pub launch_faults: u64,
    /// Launch time over cold and warm launches (first launches left out), ms.
    pub launch_mean_ms: f64,
    pub launch_p50_ms: f64,
    pub launch_p95_ms: f64,
    /// On the clock: the apps' memory stall (PSI memory some of the whole machine), ms;
    /// NaN when times are summed.
    pub memory_stall_ms: f64,
    /// On the clock: time operations waited in the flash's queue, ms; NaN when summed.
    pub flash_queue_wait_ms: f64,
    /// Pages swapped in at least once, and exactly once.
    pub pages_swapped_in: u64,
    pub single_access_pages: u64,
    /// Share of swap-ins that are of pages swapped in exactly once in the run.
    pub single_access_share: f64,
    pub flash_write_bytes: u64,
    /// Share of the flash device's endurance the run's writes used.
    pub flash_endurance_used: f64,
    /// Per app, in process-id order: apps with at least one launch.
    pub per_app: Vec<AppLaunches>,
    /// Every launch, in order.
    pub launches: Vec<LaunchRecord>,
}

fn mean(values: &[f64]) -> f64 {
    crate::core::stats::mean(values.iter().copied())
}

impl SwapMetrics {
    /// Fill in the figures derived from the counters: times, energy, wear.
    pub(crate) fn derive_costs(&mut self, devices: &SwapDevices) {
        let io = &self.io;
        let flash = &devices.flash;
        self.io_time_ns = io.time_ns(devices, |device, _| device != SwapDevice::Zram);
        self.zram_cpu_ns = io.time_ns(devices, |device, _| device == SwapDevice::Zram);
        self.energy_nj = io.energy_nj(devices, |_, _| true);
        self.flash_write_bytes = io.flash_writes * PAGE_BYTES;
        let endurance = flash.endurance_bytes();
        self.flash_endurance_used = if endurance > 0.0 {
            self.flash_write_bytes as f64 / endurance
        } else {
            f64::NAN
        };
    }

    /// Fill in the single-access figures from each page's swap-in count.
    pub(crate) fn set_swap_in_counts(&mut self, per_page: &[u32]) {
        self.pages_swapped_in = per_page.iter().filter(|&&n| n > 0).count() as u64;
        self.single_access_pages = per_page.iter().filter(|&&n| n == 1).count() as u64;
        self.single_access_share = if self.swap_ins == 0 {
            0.0
        } else {
            self.single_access_pages as f64 / self.swap_ins as f64
        };
    }

    /// Fill in the launch figures. `process` gives the pid and name of a process id.
    pub(crate) fn set_launches(
        &mut self,
        launches: Vec<LaunchRecord>,
        process: impl Fn(ProcId) -> (u32, String),
    ) {
        let counted = |r: &&LaunchRecord| r.kind != LaunchKind::First;
        self.first_launches = launches
            .iter()
            .filter(|r| r.kind == LaunchKind::First)
            .count() as u64;
        self.cold_starts = launches
            .iter()
            .filter(|r| r.kind == LaunchKind::Cold)
            .count() as u64;
        self.warm_launches = launches
            .iter()
            .filter(|r| r.kind == LaunchKind::Warm)
            .count() as u64;
        self.launch_faults = launches.iter().map(|r| r.faults).sum();
        let mut times: Vec<f64> = launches
            .iter()
            .filter(counted)
            .map(|r| r.launch_ns / 1e6)
            .collect();
        self.launch_mean_ms = mean(&times);
        times.sort_by(f64::total_cmp);
        self.launch_p50_ms = percentile(&times, 50.0);
        self.launch_p95_ms = percentile(&times, 95.0);

        let mut procs: Vec<ProcId> = launches.iter().map(|r| r.proc).collect();
        procs.sort_unstable();
        procs.dedup();
        self.per_app = procs
            .into_iter()
            .map(|proc| {
                let mine: Vec<&LaunchRecord> = launches
                    .iter()
                    .filter(|r| r.proc == proc)
                    .filter(counted)
                    .collect();
                let times: Vec<f64> = mine.iter().map(|r| r.launch_ns / 1e6).collect();
                let (pid, name) = process(proc);
                AppLaunches {
                    proc,
                    pid,
                    name,
                    cold_starts: mine.iter().filter(|r| r.kind == LaunchKind::Cold).count() as u64,
                    warm_launches: mine.iter().filter(|r| r.kind == LaunchKind::Warm).count()
                        as u64,
                    mean_ms: mean(&times),
                }
            })
            .collect();
        self.launches = launches;
    }

    /// Flash reads plus writes (the paper's Fig. 3 counts storage accesses).
    pub fn flash_accesses(&self) -> u64 {
        self.io.flash_reads + self.io.flash_writes
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_by_nearest_rank() {
        let v = [1.0, 2.0, 3.0, 4.0];
        assert_eq!(percentile(&v, 50.0), 2.0);
        assert_eq!(percentile(&v, 95.0), 4.0);
        assert!(percentile(&[], 50.0).is_nan());
    }

    #[test]
    fn every_value_has_a_distinct_name() {
        crate::core::stats::check_listing::<SwapMetrics>().unwrap();
        assert_eq!(SwapMetrics::names().len(), 39);
    }

    #[test]
    fn single_access_share_counts_swap_ins() {
        // Pages swapped in 1, 3, 0 and 1 times: 5 swap-ins, 2 of them single-access.
        let mut m = SwapMetrics {
            swap_ins: 5,
            ..Default::default()
        };
        m.set_swap_in_counts(&[1, 3, 0, 1]);
        assert_eq!((m.pages_swapped_in, m.single_access_pages), (3, 2));
        assert_eq!(m.single_access_share, 0.4);
    }
}
