//! What KSM does to apps, in a deliberately simple model (docs/ksm.md, "App impact").
//!
//! - CPU: ksmd uses a share `u` of one core (its scan CPU time over wall time, from the
//!   run's samples). Work that keeps `L` threads runnable on a device with `N` cores runs
//!   `max(1, (L + u) / N)` times slower than alone on the cores (processor sharing);
//!   without contention (`L + u <= N`) ksmd costs it nothing.
//! - Touch response time of the foreground app: `touch_cpu_ms x max(1, (fg_load + u)/N)`
//!   plus a copy-on-write fault for each page the touch writes that KSM has merged
//!   (`touch_writes` pages, the merged share of the app's mergeable pages).
//! - Launch time: the apps are launched one after another, then switched round-robin
//!   (the paper's "run one after another and then used together"). A launch needs
//!   `launch_need_pages` free above the low-memory killer's `min_free_pages`, plus the
//!   app's whole footprint if it is not running; while memory is short the least
//!   recently used other app is killed. Memory used by a running app is its footprint
//!   (mergeable pages + `other_pages`) less what KSM saves in its pages at that time.
//!   A relaunch of a killed app is cold (`cold_ms`), of a running one warm (`warm_ms`);
//!   both are stretched by `max(1, (launch_load + u) / N)`. First launches are cold
//!   with and without KSM and are left out.
//!
//! The killed apps' pages stay in the KSM simulation (a relaunched app has the same
//! contents); the touch writes are not fed back into it.

use serde::{Deserialize, Serialize};

use super::pages::Population;
use super::run::KsmRun;
use crate::{Error, Result};

/// One app's figures.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AppModel {
    pub name: String,
    /// Memory the app uses besides its mergeable pages (code, graphics, file pages).
    pub other_pages: u64,
    /// CPU time to handle one touch, alone on a core, ms.
    pub touch_cpu_ms: f64,
    /// Runnable threads while the app is in the foreground.
    pub fg_load: f64,
    /// Pages a touch writes.
    pub touch_writes: f64,
    pub warm_ms: f64,
    pub cold_ms: f64,
}

/// The device and the usage scenario.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ImpactConfig {
    pub cores: f64,
    pub memory_pages: u64,
    /// Memory of the kernel, system services and everything but the apps.
    pub system_pages: u64,
    /// The low-memory killer keeps this much free.
    pub min_free_pages: u64,
    /// Free memory a launch needs on top.
    pub launch_need_pages: u64,
    /// Runnable threads during a launch.
    pub launch_load: f64,
    /// A copy-on-write fault (fault + 4 KiB copy), us.
    pub cow_fault_us: f64,
    /// From this time on, apps are switched round-robin every `switch_ms`.
    pub together_from_ms: u64,
    pub switch_ms: u64,
    pub apps: Vec<AppModel>,
}

fn app(
    name: &str,
    other_pages: u64,
    touch_cpu_ms: f64,
    fg_load: f64,
    warm: f64,
    cold: f64,
) -> AppModel {
    AppModel {
        name: name.into(),
        other_pages,
        touch_cpu_ms,
        fg_load,
        touch_writes: 16.0,
        warm_ms: warm,
        cold_ms: cold,
    }
}

impl Default for ImpactConfig {
    /// A Nexus 10 (2 cores, 2 GiB); the rest are assumptions stated in docs/ksm.md.
    fn default() -> Self {
        ImpactConfig {
            cores: 2.0,
            memory_pages: 524_288,
            system_pages: 344_288,
            min_free_pages: 16_384,
            launch_need_pages: 12_800,
            launch_load: 2.0,
            cow_fault_us: 8.0,
            together_from_ms: 60_000,
            switch_ms: 10_000,
            apps: vec![
                app("browser", 30_000, 60.0, 1.8, 500.0, 1500.0),
                app("camera", 25_000, 40.0, 1.0, 700.0, 1600.0),
                app("gallery", 28_000, 50.0, 2.0, 450.0, 1300.0),
                app("youtube", 30_000, 50.0, 1.9, 550.0, 1500.0),
            ],
        }
    }
}

/// Per-app results of one run.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AppImpact {
    pub name: String,
    pub touch_ms: f64,
    /// Mean relaunch time (warm and cold), ms; NaN without relaunches.
    pub launch_ms: f64,
    pub relaunches: u64,
    pub cold_relaunches: u64,
    pub killed: u64,
}

fn slowdown(load: f64, cores: f64) -> f64 {
    (load / cores).max(1.0)
}

/// Evaluate the app impact of a run (KSM on or off) of a population whose processes are
/// the apps of `config`, in the same order.
pub fn evaluate(run: &KsmRun, pop: &Population, config: &ImpactConfig) -> Result<Vec<AppImpact>> {
    let n = config.apps.len();
    if n == 0 || n != pop.processes.len() {
        return Err(Error::config(
            "ksm impact",
            format!(
                "{} apps in the impact model but {} processes in the population",
                n,
                pop.processes.len()
            ),
        ));
    }
    if config.switch_ms == 0 || config.cores.is_nan() || config.cores <= 0.0 {
        return Err(Error::config(
            "ksm impact",
            "switch_ms and cores must be > 0",
        ));
    }
    let sample_at = |t_ms: u64| {
        let i = run.samples.partition_point(|s| s.time_ms <= t_ms);
        &run.samples[i.saturating_sub(1)]
    };
    let end_ms = run.last().time_ms;
    // Launch schedule: first launches at the apps' start times, then round-robin.
    let mut launches: Vec<(u64, usize)> = pop
        .processes
        .iter()
        .enumerate()
        .map(|(i, p)| (p.start_ns / 1_000_000, i))
        .collect();
    let mut t = config.together_from_ms;
    let mut k = 0;
    while t < end_ms {
        launches.push((t, k % n));
        k += 1;
        t += config.switch_ms;
    }
    launches.sort_by_key(|l| l.0);
    let footprint: Vec<f64> = (0..n)
        .map(|a| (pop.pages_of(a) as u64 + config.apps[a].other_pages) as f64)
        .collect();
    let mut alive = vec![false; n];
    let mut launched = vec![false; n];
    let mut last_used = vec![0u64; n];
    let mut out: Vec<AppImpact> = config
        .apps
        .iter()
        .map(|a| AppImpact {
            name: a.name.clone(),
            touch_ms: 0.0,
            launch_ms: 0.0,
            relaunches: 0,
            cold_relaunches: 0,
            killed: 0,
        })
        .collect();
    let mut touch_sum = vec![0.0; n];
    let mut touch_samples = vec![0u64; n];
    for (i, &(t_ms, a)) in launches.iter().enumerate() {
        let s = sample_at(t_ms);
        let used = |alive: &[bool]| -> f64 {
            (0..n)
                .filter(|&b| alive[b])
                .map(|b| footprint[b] - s.memory.saved_by_process[b])
                .sum()
        };
        let need = (config.min_free_pages + config.launch_need_pages) as f64
            + if alive[a] {
                0.0
            } else {
                footprint[a] - s.memory.saved_by_process[a]
            };
        loop {
            let free = config.memory_pages as f64 - config.system_pages as f64 - used(&alive);
            if free >= need {
                break;
            }
            let victim = (0..n)
                .filter(|&b| b != a && alive[b])
                .min_by_key(|&b| last_used[b]);
            match victim {
                Some(b) => {
                    alive[b] = false;
                    out[b].killed += 1;
                }
                None => break,
            }
        }
        let model = &config.apps[a];
        if launched[a] {
            let base = if alive[a] {
                model.warm_ms
            } else {
                model.cold_ms
            };
            out[a].launch_ms += base * slowdown(config.launch_load + s.cpu_share, config.cores);
            out[a].relaunches += 1;
            if !alive[a] {
                out[a].cold_relaunches += 1;
            }
        }
        launched[a] = true;
        alive[a] = true;
        last_used[a] = t_ms;
        // Touches while in the foreground of the together phase, one per sample.
        if t_ms >= config.together_from_ms {
            let until = launches.get(i + 1).map_or(end_ms, |l| l.0);
            for sample in run
                .samples
                .iter()
                .filter(|x| x.time_ms > t_ms && x.time_ms <= until)
            {
                let merged_share =
                    sample.memory.merged_by_process[a] as f64 / pop.pages_of(a).max(1) as f64;
                let touch = model.touch_cpu_ms
                    * slowdown(model.fg_load + sample.cpu_share, config.cores)
                    + model.touch_writes * merged_share * config.cow_fault_us / 1000.0;
                touch_sum[a] += touch;
                touch_samples[a] += 1;
            }
        }
    }
    for a in 0..n {
        out[a].touch_ms = if touch_samples[a] > 0 {
            touch_sum[a] / touch_samples[a] as f64
        } else {
            f64::NAN
        };
        out[a].launch_ms = if out[a].relaunches > 0 {
            out[a].launch_ms / out[a].relaunches as f64
        } else {
            f64::NAN
        };
    }
    Ok(out)
}
