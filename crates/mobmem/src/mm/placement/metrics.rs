//! What a run measures. Counters are exact integers; times and energies are sums of the
//! cost model's and devices' figures. Its [`Stats`] listing names every figure, the
//! same names used in result CSV and JSON files.

use serde::Serialize;

use crate::core::frames::Wear;
use crate::core::stats::Stats;

const SECONDS_PER_YEAR: f64 = 365.25 * 24.0 * 3600.0;

/// Counters and sums of one simulation run.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Stats)]
pub struct Metrics {
    pub accesses: u64,
    pub reads: u64,
    pub writes: u64,
    pub hits: u64,
    #[stats(then(hit_ratio = self.hit_ratio()))]
    pub misses: u64,
    pub fg_accesses: u64,
    pub fg_hits: u64,
    #[stats(then(fg_hit_ratio = self.fg_hit_ratio()))]
    pub fg_misses: u64,
    /// Hits found in DRAM / in PCM.
    pub dram_hits: u64,
    pub pcm_hits: u64,
    /// Page operations on each device, including fills, migrations and write-back reads.
    pub dram_reads: u64,
    pub dram_writes: u64,
    pub pcm_reads: u64,
    pub pcm_writes: u64,
    pub migrations_to_dram: u64,
    pub migrations_to_pcm: u64,
    /// Pages read from storage (one a miss).
    pub storage_reads: u64,
    /// Dirty pages written back to storage on eviction.
    pub storage_writes: u64,
    pub evictions: u64,
    /// Evictions charged to the foreground app (see `EvictionCharge`).
    pub fg_evictions: u64,
    /// Elapsed time of the foreground app under the cost model.
    pub fg_time: f64,
    /// Elapsed time of all accesses under the cost model.
    pub total_time: f64,
    /// Dynamic memory energy (reads and writes of DRAM and PCM), nJ.
    pub energy_nj: f64,
    /// Static (refresh, leakage) energy of the configured DRAM and PCM over the trace's
    /// duration, nJ. Reported, not part of the papers' comparisons (every scheme of one
    /// experiment has the same memory).
    pub static_energy_nj: f64,
    /// PCM frames and the writes the most and the average written frame received.
    pub pcm_frames: u64,
    pub pcm_max_frame_writes: u64,
    pub pcm_mean_frame_writes: f64,
    /// Trace time covered, ns (last event time minus first).
    pub duration_ns: u64,
    /// Years until the most written PCM frame reaches its endurance, at the trace's write
    /// rate; `None` when nothing was written or the trace has no duration.
    pub pcm_lifetime_years: Option<f64>,
    /// The same with ideal wear leveling (the mean frame).
    pub pcm_lifetime_years_leveled: Option<f64>,
    /// On the machine's clock (the cache kind's `[clock]`; `None` without one), ns: the
    /// foreground app's requests from their time in the trace to their end, summed, and
    /// the same requests' own work (memory and storage operations, no waits).
    pub fg_response_ns: Option<f64>,
    pub fg_work_ns: Option<f64>,
    /// Of the foreground response, the time its requests spent behind their app's own
    /// earlier requests (the rest of the waits is for the storage queue or a core).
    pub fg_backlog_ns: Option<f64>,
    /// The same for the other apps' requests.
    pub bg_response_ns: Option<f64>,
    pub bg_work_ns: Option<f64>,
    /// Time the storage had an operation in service, and operations' waits in its queue.
    pub storage_busy_ns: Option<f64>,
    pub storage_wait_ns: Option<f64>,
}

/// `part` over `whole`, 0 when `whole` is 0 (a ratio of a run that counted nothing).
pub(crate) fn ratio(part: u64, whole: u64) -> f64 {
    if whole == 0 {
        0.0
    } else {
        part as f64 / whole as f64
    }
}

impl Metrics {
    pub fn hit_ratio(&self) -> f64 {
        ratio(self.hits, self.accesses)
    }

    pub fn miss_ratio(&self) -> f64 {
        ratio(self.misses, self.accesses)
    }

    pub fn fg_hit_ratio(&self) -> f64 {
        ratio(self.fg_hits, self.fg_accesses)
    }

    /// Fill in the wear figures from the PCM pool's writes over its `frames` frames.
    pub fn set_wear(&mut self, wear: Wear, frames: usize, endurance: Option<f64>) {
        self.pcm_frames = frames as u64;
        self.pcm_max_frame_writes = wear.max;
        self.pcm_mean_frame_writes = if frames == 0 {
            0.0
        } else {
            wear.total as f64 / frames as f64
        };
        let seconds = self.duration_ns as f64 / 1e9;
        let lifetime = |writes: f64| match endurance {
            Some(limit) if writes > 0.0 && seconds > 0.0 => {
                Some(limit / (writes / seconds) / SECONDS_PER_YEAR)
            }
            _ => None,
        };
        self.pcm_lifetime_years = lifetime(self.pcm_max_frame_writes as f64);
        self.pcm_lifetime_years_leveled = lifetime(self.pcm_mean_frame_writes);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wear_and_lifetime() {
        let mut m = Metrics {
            duration_ns: 1_000_000_000,
            ..Default::default()
        };
        // One frame written 10 times a second: 1e8 / 10 s = 1e7 s = 0.317 years.
        let wear = Wear {
            total: 12,
            max: 10,
            frames_written: 2,
        };
        m.set_wear(wear, 4, Some(1e8));
        assert_eq!(m.pcm_max_frame_writes, 10);
        assert_eq!(m.pcm_mean_frame_writes, 3.0);
        let years = m.pcm_lifetime_years.unwrap();
        assert!((years - 1e7 / SECONDS_PER_YEAR).abs() < 1e-9);
        m.set_wear(Wear::default(), 2, Some(1e8));
        assert_eq!(m.pcm_lifetime_years, None);
    }

    #[test]
    fn every_value_has_a_distinct_name() {
        crate::core::stats::check_listing::<Metrics>().unwrap();
        assert_eq!(Metrics::default().value("hit_ratio"), Some(0.0));
        assert_eq!(Metrics::names().len(), 39);
    }
}
