//! Experiments: a grid of workloads x policies x memory sizes x DRAM shares, run in
//! parallel, gathered in a fixed order so results do not depend on the thread count.

pub mod cache;
pub mod config;
pub mod file;
pub mod kinds;
pub mod overrides;
pub mod reproductions;
pub mod sensitivity;
pub mod sweep;

pub use crate::mm::placement::split_memory;
pub use config::{ExperimentConfig, Sweep, WorkloadSpec};
pub use file::{ExperimentFile, RunOptions, Runs};

use std::path::Path;
use std::sync::Arc;

use rayon::prelude::*;
use serde::Serialize;

use crate::config_file::Echo;
use crate::core::stats::Stats;
use crate::devices::{CostModel, Devices};
use crate::mm::placement::clock::ClockSetup;
use crate::mm::placement::metrics::Metrics;
use crate::mm::placement::sim::{run_trace, RunSetup};
use crate::mm::placement::{find_policy, Capacity, Family};
use crate::report::{Figure, Row, Table};
use crate::trace::{self, Trace};
use crate::{workload, Error, Result};
use sweep::Grid as _;

/// A workload ready to run.
#[derive(Debug, Clone)]
pub struct LoadedWorkload {
    pub name: String,
    pub trace: Arc<Trace>,
}

/// Read or generate every workload of an experiment.
pub fn load_workloads(config: &ExperimentConfig) -> Result<Vec<LoadedWorkload>> {
    config
        .workloads
        .par_iter()
        .map(|spec| load_workload(config, spec, None))
        .collect()
}

/// Read or generate one workload of an experiment. `data`, when given, is the content of
/// the workload's trace file, fetched by the caller (e.g. from a URL); the trace's path
/// then only names it and tells its format.
pub fn load_workload(
    config: &ExperimentConfig,
    spec: &WorkloadSpec,
    data: Option<Vec<u8>>,
) -> Result<LoadedWorkload> {
    let context = || format!("workload {}", spec.name);
    // A failure names the workload and the key whose value failed.
    let at_key = |key: &str| {
        let name = spec.name.clone();
        let key = key.to_string();
        move |e: Error| Error::config(format!("workload '{name}', key `{key}`"), e.to_string())
    };
    let generated = match (&spec.preset, &spec.config) {
        (Some(preset), _) => Some(workload::preset(preset).map_err(at_key("preset"))?),
        (None, Some(path)) => {
            Some(workload::load_config(path, Echo::Withhold).map_err(at_key("config"))?)
        }
        (None, None) => None,
    };
    let trace = match (generated, &spec.trace) {
        (Some(_), _) if data.is_some() => {
            return Err(Error::config(
                context(),
                "is generated, so it reads no trace file",
            ))
        }
        (Some(mut wc), _) => {
            if let Some(scale) = spec.scale {
                wc.scale *= scale;
            }
            workload::generate(&wc, spec.seed.unwrap_or(config.seed)).map_err(at_key(
                if spec.preset.is_some() {
                    "preset"
                } else {
                    "config"
                },
            ))?
        }
        (None, Some(path)) => {
            let format = spec.trace_format().map_err(at_key("format"))?;
            let read = match data {
                Some(bytes) => trace::read_all_data(path, bytes, format),
                None if config::is_url(path) => {
                    return Err(Error::config(
                        context(),
                        format!(
                            "trace {} is a URL; mobmem reads local files (the Python package fetches URLs)",
                            path.display()
                        ),
                    ))
                }
                None => trace::read_all(path, format),
            };
            read.map_err(at_key("trace"))?
        }
        (None, None) => {
            return Err(Error::config(
                context(),
                "give exactly one of preset, config or trace",
            ))
        }
    };
    if trace.footprint() == 0 {
        return Err(Error::config(context(), "has no page accesses"));
    }
    Ok(LoadedWorkload {
        name: spec.name.clone(),
        trace: Arc::new(trace),
    })
}

/// One run of the grid.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Point {
    pub workload: String,
    pub policy: String,
    pub family: &'static str,
    pub memory_pages: u64,
    /// Memory as a fraction of the workload's footprint.
    pub memory_fraction: f64,
    /// DRAM share; 1 for single-tier policies.
    pub dram_fraction: f64,
    pub dram_pages: u64,
    pub pcm_pages: u64,
}

/// The result of one point.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ResultRow {
    #[serde(flatten)]
    pub point: Point,
    pub metrics: Metrics,
}

/// All results of an experiment, in grid order.
#[derive(Debug, Clone, Serialize)]
pub struct Results {
    pub experiment: String,
    pub title: String,
    pub rows: Vec<ResultRow>,
    /// Footprint (distinct pages) and accesses of each workload.
    pub workloads: Vec<WorkloadFacts>,
}

#[derive(Debug, Clone, Serialize)]
pub struct WorkloadFacts {
    pub name: String,
    pub footprint: u64,
    pub events: u64,
    pub accesses: u64,
}

/// The grid of an experiment over loaded workloads, in a fixed order: workload, policy,
/// memory size, DRAM share.
pub fn points(config: &ExperimentConfig, workloads: &[LoadedWorkload]) -> Result<Vec<Point>> {
    let mut out = Vec::new();
    for w in workloads {
        let footprint = w.trace.footprint() as u64;
        let sizes: Vec<(u64, f64)> = if config.sweep.memory_pages.is_empty() {
            config
                .sweep
                .memory_fraction
                .iter()
                .map(|&f| (((footprint as f64) * f).round().max(1.0) as u64, f))
                .collect()
        } else {
            config
                .sweep
                .memory_pages
                .iter()
                .map(|&p| (p, p as f64 / footprint as f64))
                .collect()
        };
        for policy in &config.sweep.policies {
            let info = find_policy(policy)?;
            for &(memory, fraction) in &sizes {
                match info.family {
                    Family::SingleTier => out.push(Point {
                        workload: w.name.clone(),
                        policy: policy.clone(),
                        family: info.family.name(),
                        memory_pages: memory,
                        memory_fraction: fraction,
                        dram_fraction: 1.0,
                        dram_pages: memory,
                        pcm_pages: 0,
                    }),
                    Family::Hybrid => {
                        if memory < 2 {
                            return Err(Error::config(
                                format!("experiment {}", config.name),
                                format!("workload {}: a hybrid memory needs at least 2 pages, got {memory}", w.name),
                            ));
                        }
                        for &df in &config.sweep.dram_fraction {
                            let (dram, pcm) = split_memory(memory, df);
                            out.push(Point {
                                workload: w.name.clone(),
                                policy: policy.clone(),
                                family: info.family.name(),
                                memory_pages: memory,
                                memory_fraction: fraction,
                                dram_fraction: df,
                                dram_pages: dram,
                                pcm_pages: pcm,
                            });
                        }
                    }
                }
            }
        }
    }
    Ok(out)
}

/// Run one point.
pub fn run_point(
    point: &Point,
    trace: &Trace,
    cost: &CostModel,
    devices: &Devices,
    clock: Option<&ClockSetup>,
) -> Result<Metrics> {
    let info = find_policy(&point.policy)?;
    let setup = RunSetup {
        policy: info,
        capacity: Capacity {
            dram: point.dram_pages as usize,
            pcm: point.pcm_pages as usize,
        },
        cost: cost.clone(),
        devices: devices.clone(),
        clock: clock.cloned(),
        warmup: 0,
        object_ids: None,
    };
    run_trace(trace, &setup).map_err(|e| {
        Error::config(
            format!(
                "{} / {} / {} pages",
                point.workload, point.policy, point.memory_pages
            ),
            e.to_string(),
        )
    })
}

/// Run a whole experiment. `progress(done, total)` is called as points finish (from
/// worker threads).
pub fn run(config: &ExperimentConfig, progress: &(dyn Fn(usize, usize) + Sync)) -> Result<Results> {
    let workloads = load_workloads(config)?;
    run_loaded(config, &workloads, progress)
}

/// Run an experiment on workloads already loaded.
pub fn run_loaded(
    config: &ExperimentConfig,
    workloads: &[LoadedWorkload],
    progress: &(dyn Fn(usize, usize) + Sync),
) -> Result<Results> {
    let sweep = cache::CacheGrid::new(config, workloads)?;
    let grid = sweep.points()?;
    let metrics = sweep::run_points(&grid, progress, |p| sweep.run_point(p))?;
    let runs: Vec<(Point, Metrics)> = grid.into_iter().zip(metrics).collect();
    Ok(sweep.results(&runs))
}

impl Results {
    /// Rows of one workload and policy, by memory size.
    pub fn series(&self, workload: &str, policy: &str) -> Vec<&ResultRow> {
        let mut rows: Vec<&ResultRow> = self
            .rows
            .iter()
            .filter(|r| r.point.workload == workload && r.point.policy == policy)
            .collect();
        rows.sort_by_key(|r| r.point.memory_pages);
        rows
    }

    pub fn policies(&self) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for r in &self.rows {
            if !out.contains(&r.point.policy) {
                out.push(r.point.policy.clone());
            }
        }
        out
    }
}

/// A metric's name as an axis title: "fg_hit_ratio" as "foreground hit ratio",
/// "energy_nj" as "energy (nJ)".
pub fn metric_label(metric: &str) -> String {
    let (stem, unit) = [
        ("_nj", " (nJ)"),
        ("_ns", " (ns)"),
        ("_ms", " (ms)"),
        ("_years", " (years)"),
    ]
    .iter()
    .find_map(|(suffix, unit)| metric.strip_suffix(suffix).map(|s| (s, *unit)))
    .unwrap_or((metric, ""));
    let words = stem.replace('_', " ");
    let words = match words.strip_prefix("fg ") {
        Some(rest) => format!("foreground {rest}"),
        None => words,
    };
    let words = words.replace("dram", "DRAM").replace("pcm", "PCM");
    format!("{words}{unit}")
}

impl Results {
    /// Key columns of cache-sweep results, in CSV order.
    pub const KEYS: [&'static str; 8] = [
        "workload",
        "policy",
        "family",
        "memory_pages",
        "memory_fraction",
        "dram_fraction",
        "dram_pages",
        "pcm_pages",
    ];

    /// The row of one point's metrics.
    pub fn row(p: &Point, metrics: &Metrics) -> Row {
        let keys = vec![
            p.workload.clone(),
            p.policy.clone(),
            p.family.to_string(),
            p.memory_pages.to_string(),
            crate::report::format_number(p.memory_fraction),
            crate::report::format_number(p.dram_fraction),
            p.dram_pages.to_string(),
            p.pcm_pages.to_string(),
        ];
        Row::of_stats(keys, metrics)
    }

    /// The results in long format for reports.
    pub fn to_table(&self) -> Table {
        Table {
            experiment: self.experiment.clone(),
            title: self.title.clone(),
            keys: Self::KEYS.iter().map(|k| k.to_string()).collect(),
            rows: (self.rows.iter())
                .map(|r| Self::row(&r.point, &r.metrics))
                .collect(),
        }
    }

    /// The workloads, as a small table for the HTML index.
    pub fn facts(&self) -> Vec<Vec<String>> {
        let mut out = vec![vec![
            "workload".into(),
            "footprint (pages)".into(),
            "accesses".into(),
        ]];
        out.extend(self.workloads.iter().map(|w| {
            vec![
                w.name.clone(),
                w.footprint.to_string(),
                w.accesses.to_string(),
            ]
        }));
        out
    }

    /// A figure of `metric` against memory size, a line per policy, for one workload and,
    /// if given, one DRAM share (rows of other shares are left out).
    pub fn figure(
        &self,
        workload: &str,
        dram_fraction: Option<f64>,
        metric: &str,
        title: &str,
        y_label: &str,
    ) -> Figure {
        let lines = self
            .policies()
            .into_iter()
            .filter(|p| {
                self.rows.iter().any(|r| {
                    &r.point.policy == p
                        && r.point.workload == workload
                        && dram_fraction.is_none_or(|df| r.point.dram_fraction == df)
                })
            })
            .collect();
        let mut filter = vec![("workload".to_string(), workload.to_string())];
        if let Some(df) = dram_fraction {
            filter.push(("dram_fraction".into(), crate::report::format_number(df)));
        }
        Figure {
            id: format!("{workload}-{}", metric.replace('_', "-")),
            title: format!("{workload}: {title}"),
            x: "memory_fraction".into(),
            x_label: "memory (% of footprint)".into(),
            x_scale: 100.0,
            series: "policy".into(),
            lines,
            filter,
            metric: metric.into(),
            y_label: y_label.into(),
            normalize_to: None,
        }
    }

    /// A figure of every metric per workload (hit ratio and foreground hit ratio
    /// first), but for a metric that is absent or has the same value at every point of
    /// the workload (the foreground hit ratio of a trace without foreground, the
    /// accesses); per DRAM share too when hybrid policies ran with several (single-tier
    /// policies then get figures of their own).
    pub fn default_figures(&self) -> Vec<Figure> {
        let mut shares: Vec<f64> = Vec::new();
        for r in &self.rows {
            if r.point.family == Family::Hybrid.name() && !shares.contains(&r.point.dram_fraction) {
                shares.push(r.point.dram_fraction);
            }
        }
        let groups: Vec<Option<f64>> = if shares.len() <= 1 {
            vec![None]
        } else {
            shares.iter().copied().chain([1.0]).map(Some).collect()
        };
        let mut metrics: Vec<&'static str> = vec!["hit_ratio", "fg_hit_ratio"];
        if let Some(first) = self.rows.first() {
            for (name, _) in first.metrics.values() {
                if !metrics.contains(&name) {
                    metrics.push(name);
                }
            }
        }
        let mut out = Vec::new();
        for w in &self.workloads {
            for &group in &groups {
                for &metric in &metrics {
                    let values: Vec<f64> = (self.rows.iter())
                        .filter(|r| r.point.workload == w.name)
                        .filter(|r| group.is_none_or(|df| r.point.dram_fraction == df))
                        .filter_map(|r| r.metrics.value(metric))
                        .filter(|v| v.is_finite())
                        .collect();
                    let (lo, hi) = values
                        .iter()
                        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), v| {
                            (a.min(*v), b.max(*v))
                        });
                    if values.is_empty() || hi - lo <= 1e-12 * hi.abs().max(lo.abs()) {
                        continue;
                    }
                    let label = metric_label(metric);
                    let mut f = self.figure(&w.name, group, metric, &label, &label);
                    if f.lines.is_empty() {
                        continue;
                    }
                    if let Some(df) = group {
                        f.id = format!("{}-dram-{}", f.id, crate::report::format_number(df));
                        f.title = format!("{} (DRAM share {df})", f.title);
                    }
                    out.push(f);
                }
            }
        }
        out
    }
}

/// Run an experiment file.
pub fn run_file(path: &Path, progress: &(dyn Fn(usize, usize) + Sync)) -> Result<Results> {
    run(&ExperimentConfig::load(path)?, progress)
}
