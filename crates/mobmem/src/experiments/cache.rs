//! The `cache` kind (the default): workloads x placement policies x memory sizes x DRAM
//! shares ([`ExperimentConfig`]), run by the sweep runner.

use std::path::Path;

use super::file::{Context, Experiment, Header};
use super::reproductions::hybrid_cache;
use super::sweep::{self, Analyzed, Grid};
use super::{load_workloads, points, run_point, ExperimentConfig, LoadedWorkload, Point};
use super::{ResultRow, Results, WorkloadFacts};
use crate::devices::CostModel;
use crate::mm::placement::clock::{ClockSetup, ClockSpec};
use crate::mm::placement::metrics::Metrics;
use crate::report::{Row, Table};
use crate::{Error, Result};

/// The cache kind's parameters: [`ExperimentConfig`], whose `name` and `title` are the
/// header's.
#[derive(Debug)]
pub struct Cache(ExperimentConfig);

/// Read a cache file's keys (the file less its header, whose name and title it takes).
pub fn parse(
    header: &Header,
    mut table: toml::Table,
    base: &Path,
    origin: &str,
) -> Result<Box<dyn Experiment>> {
    if header.seeds.is_some() && table.contains_key("seed") {
        return Err(Error::config(
            origin,
            "give `seed` (one run) or `seeds` (seeds 1 to N), not both",
        ));
    }
    table.insert("name".into(), header.name.clone().into());
    table.insert("title".into(), header.title.clone().into());
    let mut config: ExperimentConfig = toml::Value::Table(table)
        .try_into()
        .map_err(|e: toml::de::Error| Error::config(origin, e.to_string().trim_end()))?;
    config.validate(origin)?;
    config.resolve_paths(base);
    Ok(Box::new(Cache(config)))
}

impl Experiment for Cache {
    fn run_once(&self, header: &Header, context: &Context) -> Result<ExperimentReport> {
        let mut config = self.0.clone();
        config.seed = context.seed;
        // Before the workloads are read or generated, which may take long.
        sweep::check_points(header, config.point_count(), context.runs)?;
        let workloads = load_workloads(&config)?;
        let grid = CacheGrid::new(&config, &workloads)?;
        let mut report = sweep::run(&grid, header, context)?;
        // The Pixel traces are fixed: the first run (seed 1, or the only run) adds them.
        if header.reproduces.is_some() && (context.seed == 1 || context.runs == 1) {
            add_real_data(&mut report, &config, &grid.cost)?;
        }
        Ok(report)
    }

    fn default_seed(&self) -> u64 {
        self.0.seed
    }

    fn cache_grid(&self) -> Option<&ExperimentConfig> {
        Some(&self.0)
    }

    fn to_toml(&self) -> Result<toml::Table> {
        let mut table = toml::Table::try_from(&self.0)
            .map_err(|e| Error::config(&self.0.name, e.to_string()))?;
        table.remove("name");
        table.remove("title");
        // The default seed is left out: a file with `seeds` has none.
        if self.0.seed == 1 {
            table.remove("seed");
        }
        Ok(table)
    }
}

use crate::report::ExperimentReport;

/// The findings and notes of [`hybrid_cache::real_data`], added to a reproduction's report
/// when its grid runs the four policies they compare (an edited copy of the file may not).
fn add_real_data(
    report: &mut ExperimentReport,
    config: &ExperimentConfig,
    cost: &CostModel,
) -> Result<()> {
    let policies = &config.sweep.policies;
    if !(hybrid_cache::real_data::POLICIES.iter()).all(|p| policies.iter().any(|q| q == p)) {
        return Ok(());
    }
    let dirs = super::reproductions::pixel_traces::candidate_dirs();
    let real = hybrid_cache::real_data::run(dirs, cost, &config.devices)?;
    report.notes.extend(real.notes);
    let mut findings = report.seed_findings.concat();
    findings.extend(real.findings);
    report.findings = crate::report::claims::summarize_findings(std::slice::from_ref(&findings));
    report.seed_findings = vec![findings];
    Ok(())
}

/// One run of a cache grid on its workloads, loaded.
pub struct CacheGrid<'a> {
    config: &'a ExperimentConfig,
    workloads: &'a [LoadedWorkload],
    cost: CostModel,
    clock: Option<ClockSetup>,
}

impl<'a> CacheGrid<'a> {
    pub fn new(config: &'a ExperimentConfig, workloads: &'a [LoadedWorkload]) -> Result<Self> {
        Ok(CacheGrid {
            config,
            workloads,
            cost: config.cost.resolve()?,
            clock: config.clock.as_ref().map(ClockSpec::setup).transpose()?,
        })
    }

    /// The results of the points run, in grid order.
    pub fn results(&self, runs: &[(Point, Metrics)]) -> Results {
        Results {
            experiment: self.config.name.clone(),
            title: self.config.title.clone(),
            rows: (runs.iter())
                .map(|(point, metrics)| ResultRow {
                    point: point.clone(),
                    metrics: metrics.clone(),
                })
                .collect(),
            workloads: (self.workloads.iter())
                .map(|w| WorkloadFacts {
                    name: w.name.clone(),
                    footprint: w.trace.footprint() as u64,
                    events: w.trace.events.len() as u64,
                    accesses: w.trace.accesses().count() as u64,
                })
                .collect(),
        }
    }
}

impl Grid for CacheGrid<'_> {
    type Point = Point;
    type Output = Metrics;

    const KEYS: &'static [&'static str] = &Results::KEYS;

    fn points(&self) -> Result<Vec<Point>> {
        points(self.config, self.workloads)
    }

    fn run_point(&self, point: &Point) -> Result<Metrics> {
        let w = (self.workloads.iter())
            .find(|w| w.name == point.workload)
            .ok_or_else(|| Error::config(&self.config.name, "a point of no workload"))?;
        run_point(
            point,
            &w.trace,
            &self.cost,
            &self.config.devices,
            self.clock.as_ref(),
        )
    }

    fn point_rows(&self, point: &Point, metrics: &Metrics) -> Vec<Row> {
        vec![Results::row(point, metrics)]
    }

    fn facts(&self, _: &Table, runs: &[(Point, Metrics)]) -> Vec<Vec<String>> {
        self.results(runs).facts()
    }

    fn analyze(&self, _: &Table, runs: &[(Point, Metrics)], paper: bool) -> Result<Analyzed> {
        let results = self.results(runs);
        if !paper {
            return Ok(Analyzed::shown(results.default_figures(), Vec::new()));
        }
        let model = hybrid_cache::Model {
            cost: self.cost.clone(),
            devices: self.config.devices.clone(),
            clock: self.clock.clone(),
        };
        let analysis = hybrid_cache::analyze(&results, &model);
        Ok(Analyzed {
            figures: analysis.figures,
            notes: analysis.notes,
            claims: analysis.claims,
            findings: analysis.findings,
            paper_figures: hybrid_cache::paper_figures(),
        })
    }

    fn json(&self, _: &Table, runs: &[(Point, Metrics)]) -> serde_json::Value {
        serde_json::to_value(self.results(runs)).unwrap_or(serde_json::Value::Null)
    }

    /// The seeds of the generated workloads.
    fn seeds(&self, _: &[(Point, Metrics)]) -> Vec<u64> {
        let mut seeds: Vec<u64> = (self.config.workloads.iter())
            .filter(|w| w.trace.is_none())
            .map(|w| w.seed.unwrap_or(self.config.seed))
            .collect();
        seeds.sort_unstable();
        seeds.dedup();
        seeds
    }
}
