//! A KSM run over time: ksmd wakes, scans a batch, sleeps `sleep_millisecs` (rounded up
//! to timer ticks) and wakes again; the scan takes the CPU time its pages cost, so the
//! next wake-up comes that much later. The state is sampled at a fixed interval.
//!
//! The pages are those of a [`Standalone`] memory: a frame for every page of the
//! population (numbered in scan order), each process's pages faulted in when it starts.

use serde::Serialize;

use crate::core::stats::{Stats, Visitor};
use crate::{counts, reals};

use super::config::{KsmParams, ScanCosts};
use super::ksmd::{Counters, Ksmd, MemoryState};
use super::memory::Standalone;
use super::pages::Population;
use crate::{Error, Result};

/// How long to run and how often to sample.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct RunSpec {
    pub duration_ms: u64,
    pub sample_ms: u64,
    /// false: KSM stays off (`run` = 0), for the baseline.
    pub ksm_on: bool,
}

/// Longest run: about 11.6 days, so that times in ns stay far inside u64.
pub const MAX_DURATION_MS: u64 = 1_000_000_000;
/// Most samples a run may take.
pub const MAX_SAMPLES: u64 = 1_000_000;

impl RunSpec {
    pub fn validate(&self) -> Result<()> {
        let bad = |m: String| Err(Error::config("ksm run", m));
        if self.sample_ms == 0 || self.duration_ms == 0 {
            return bad("duration and sample interval must be at least 1 ms".into());
        }
        if self.duration_ms > MAX_DURATION_MS {
            return bad(format!(
                "a run of {} ms is longer than the {MAX_DURATION_MS} ms allowed",
                self.duration_ms
            ));
        }
        let samples = self.duration_ms / self.sample_ms + 1;
        if samples > MAX_SAMPLES {
            return bad(format!(
                "{samples} samples ({} ms every {} ms) are more than the {MAX_SAMPLES} allowed; sample less often",
                self.duration_ms, self.sample_ms
            ));
        }
        Ok(())
    }
}

/// One sample.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Sample {
    pub time_ms: u64,
    pub counters: Counters,
    pub memory: MemoryState,
    /// ksmd's share of one core since the previous sample.
    pub cpu_share: f64,
}

impl Stats for Sample {
    /// The curve's figures: the kernel's counters as `/sys/kernel/mm/ksm/` names them,
    /// then memory, then ksmd's CPU time. (The tree and rmap counts are in `counters`.)
    fn visit(&self, v: &mut dyn Visitor) {
        let c = &self.counters;
        let m = &self.memory;
        v.figure("time_s", self.time_ms as f64 / 1000.0);
        counts!(v, c;
            pages_shared, pages_sharing, pages_unshared, pages_volatile, ksm_zero_pages,
            full_scans, pages_scanned, pages_skipped);
        v.figure("general_profit", c.general_profit as f64);
        counts!(v, c; pages_to_scan);
        counts!(v, m; pages, frames);
        v.count("saved_pages", m.saved);
        counts!(v, m; metadata_bytes);
        v.figure("ksmd_cpu_ms", c.cpu_ns / 1e6);
        reals!(v, self; cpu_share);
    }
}

/// A whole run.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct KsmRun {
    pub params: KsmParams,
    pub samples: Vec<Sample>,
    pub wakeups: u64,
}

impl KsmRun {
    pub fn last(&self) -> &Sample {
        self.samples.last().expect("a run has samples")
    }

    /// First sample time (ms) at which `pages_sharing` reached `fraction` of its final
    /// value (None if it never became positive).
    pub fn time_to_reach(&self, fraction: f64, metric: impl Fn(&Sample) -> f64) -> Option<u64> {
        let target = metric(self.last()) * fraction;
        if target <= 0.0 {
            return None;
        }
        self.samples
            .iter()
            .find(|s| metric(s) >= target)
            .map(|s| s.time_ms)
    }

    /// ksmd's CPU time over the run, ms.
    pub fn cpu_ms(&self) -> f64 {
        self.last().counters.cpu_ns / 1e6
    }
}

/// One wake-up of ksmd: when it woke and the CPU time its scan cost (ns of the core
/// the costs are for).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Wake {
    pub at_ns: u64,
    pub cpu_ns: f64,
}

/// Run ksmd over `pop`.
pub fn simulate(
    pop: &Population,
    params: &KsmParams,
    costs: &ScanCosts,
    spec: RunSpec,
) -> Result<KsmRun> {
    run(pop, params, costs, spec, None)
}

/// [`simulate`], also listing every wake-up: what the app-impact model replays on the
/// clock. The list grows with the run's wake-ups (a day at 10-ms sleeps is 8.6 million).
pub fn simulate_with_wakes(
    pop: &Population,
    params: &KsmParams,
    costs: &ScanCosts,
    spec: RunSpec,
) -> Result<(KsmRun, Vec<Wake>)> {
    let mut wakes = Vec::new();
    let run = run(pop, params, costs, spec, Some(&mut wakes))?;
    Ok((run, wakes))
}

fn run(
    pop: &Population,
    params: &KsmParams,
    costs: &ScanCosts,
    spec: RunSpec,
    mut wakes: Option<&mut Vec<Wake>>,
) -> Result<KsmRun> {
    params.validate()?;
    costs.validate()?;
    spec.validate()?;
    let mut alone = Standalone::new(pop);
    let mut ksmd = Ksmd::new(pop, params, costs);
    let end = spec.duration_ms * 1_000_000;
    let sample_ns = spec.sample_ms * 1_000_000;
    let sleep = params.sleep_ns();
    let mut samples = Vec::new();
    let mut next_sample = 0u64;
    let mut t = 0u64;
    let mut wakeups = 0u64;
    let mut last_cpu = 0.0;
    loop {
        while next_sample <= t.min(end) {
            alone.start_until(pop, next_sample);
            ksmd.apply_all_writes(&mut alone.mem, next_sample);
            let counters = ksmd.counters(&alone.mem);
            let cpu_share = if next_sample == 0 {
                0.0
            } else {
                (counters.cpu_ns - last_cpu) / sample_ns as f64
            };
            last_cpu = counters.cpu_ns;
            samples.push(Sample {
                time_ms: next_sample / 1_000_000,
                counters,
                memory: ksmd.memory(&alone.mem),
                cpu_share,
            });
            next_sample += sample_ns;
        }
        if t >= end || !spec.ksm_on {
            if !spec.ksm_on && next_sample <= end {
                t = next_sample;
                continue;
            }
            break;
        }
        alone.start_until(pop, t);
        let cpu = ksmd.wake(&mut alone.mem, t)?;
        wakeups += 1;
        if let Some(w) = wakes.as_deref_mut() {
            w.push(Wake {
                at_ns: t,
                cpu_ns: cpu,
            });
        }
        crate::core::events::check_step(wakeups, || {
            alone.mem.check()?;
            ksmd.audit(&alone.mem)
        })?;
        t += cpu.round() as u64 + sleep;
    }
    Ok(KsmRun {
        params: params.clone(),
        samples,
        wakeups,
    })
}

#[cfg(test)]
mod stats_tests {
    use super::*;

    #[test]
    fn a_sample_lists_each_figure_once_and_looks_it_up() {
        crate::core::stats::check_listing::<Sample>().unwrap();
        let sample = Sample {
            time_ms: 1500,
            counters: Counters {
                pages_sharing: 7,
                general_profit: -4096,
                cpu_ns: 2.5e6,
                ..Counters::default()
            },
            memory: MemoryState {
                saved: 3,
                ..MemoryState::default()
            },
            cpu_share: 0.25,
        };
        assert_eq!(sample.value("time_s"), Some(1.5));
        assert_eq!(sample.value("pages_sharing"), Some(7.0));
        assert_eq!(sample.value("general_profit"), Some(-4096.0));
        assert_eq!(sample.value("saved_pages"), Some(3.0));
        assert_eq!(sample.value("ksmd_cpu_ms"), Some(2.5));
        assert_eq!(sample.value("cpu_share"), Some(0.25));
    }
}
