//! The native module `mobmem._native`: the few entry points the Python package `mobmem`
//! builds its API on. Everything here is a thin layer over the `mobmem` crate, so Python
//! and the CLI share one parser, one simulator and one CSV writer.
//!
//! Errors come back as `MobmemError` with the message the CLI prints. Work runs with the
//! interpreter released (other Python threads, such as a Dask worker's, go on) and inside
//! `catch_unwind`, so a panic becomes a `MobmemError` instead of reaching Python.

use std::any::Any;
use std::collections::HashMap;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};

use pyo3::create_exception;
use pyo3::exceptions::PyException;
use pyo3::prelude::*;
use pyo3::types::PyDict;

use mobmem::config_file::Echo;
use mobmem::devices::CostModel;
use mobmem::experiments::file::MAX_SEEDS;
use mobmem::experiments::reproductions::{self, composed::PHONES, REPRODUCTIONS};
use mobmem::experiments::{
    self, ExperimentConfig, ExperimentFile, LoadedWorkload, Point, ResultRow, Results, RunOptions,
};
use mobmem::mm::phone::{self, PhoneConfig};
use mobmem::mm::placement::sim::{run_source, run_trace, RunSetup};
use mobmem::mm::placement::{find_policy, Capacity, REGISTRY};
use mobmem::report::{ExperimentReport, Table};
use mobmem::trace::{self, Format};
use mobmem::{report, workload, Error};

create_exception!(
    mobmem,
    MobmemError,
    PyException,
    "An error of the mobmem simulator (bad input, unknown name, a run that cannot be done); the message is the one the mobmem CLI prints."
);

fn raise(error: Error) -> PyErr {
    MobmemError::new_err(error.to_string())
}

fn panic_message(panic: &(dyn Any + Send)) -> String {
    if let Some(text) = panic.downcast_ref::<&str>() {
        (*text).to_string()
    } else if let Some(text) = panic.downcast_ref::<String>() {
        text.clone()
    } else {
        "a panic without a message".to_string()
    }
}

/// Run `work` with the interpreter released; its error or panic becomes a `MobmemError`.
fn detached<T: Send>(
    py: Python<'_>,
    work: impl FnOnce() -> mobmem::Result<T> + Send,
) -> PyResult<T> {
    py.detach(|| catch_unwind(AssertUnwindSafe(work)))
        .map_err(|panic| {
            MobmemError::new_err(format!(
                "internal error (please report it): {}",
                panic_message(panic.as_ref())
            ))
        })?
        .map_err(raise)
}

/// The format `format` and `columns` name together, as `--format` and `--columns` do.
fn parse_format(format: Option<&str>, columns: Option<&str>) -> mobmem::Result<Option<Format>> {
    Format::with_columns(format.map(str::parse).transpose()?, columns)
}

/// An experiment file of any kind, parsed and validated.
#[pyclass(module = "mobmem._native", frozen)]
struct Experiment {
    file: ExperimentFile,
}

/// A workload of a cache experiment, read or generated, held in memory.
#[pyclass(module = "mobmem._native", frozen)]
struct Workload {
    loaded: LoadedWorkload,
}

#[pymethods]
impl Workload {
    #[getter]
    fn name(&self) -> &str {
        &self.loaded.name
    }

    /// Distinct pages.
    #[getter]
    fn footprint(&self) -> usize {
        self.loaded.trace.footprint()
    }

    #[getter]
    fn events(&self) -> usize {
        self.loaded.trace.events.len()
    }
}

#[pymethods]
impl Experiment {
    /// Read an experiment file (TOML) as `mobmem run` does; its relative paths are made
    /// absolute, relative to its folder.
    #[staticmethod]
    fn load(py: Python<'_>, path: PathBuf) -> PyResult<Self> {
        let file = detached(py, || {
            let text = mobmem::config_file::read(&path)?;
            let folder = path.parent().unwrap_or(Path::new("."));
            let base = std::path::absolute(folder).map_err(|e| Error::io(folder, e))?;
            ExperimentFile::parse(&text, &path.display().to_string(), &base)
        })?;
        Ok(Experiment { file })
    }

    /// Parse an experiment given as a JSON object with the TOML file's keys; `origin`
    /// names it in errors, relative paths are relative to `base`.
    #[staticmethod]
    fn from_json(py: Python<'_>, text: &str, origin: &str, base: PathBuf) -> PyResult<Self> {
        let file = detached(py, || {
            let json: serde_json::Value =
                serde_json::from_str(text).map_err(|e| Error::config(origin, e.to_string()))?;
            let table = match toml::Value::try_from(json) {
                Ok(toml::Value::Table(table)) => table,
                Ok(_) => return Err(Error::config(origin, "an experiment is a table of keys")),
                Err(e) => return Err(Error::config(origin, e.to_string())),
            };
            ExperimentFile::parse_table(table, origin, &base)
        })?;
        Ok(Experiment { file })
    }

    /// The experiment file shipped with mobmem as `experiments/NAME.toml`: a
    /// reproduction's (what `mobmem reproduce NAME` runs) or a phone's. Its relative paths,
    /// if any, are relative to the current folder, as the CLI reads them.
    #[staticmethod]
    fn shipped(py: Python<'_>, name: &str) -> PyResult<Self> {
        let (text, origin) = shipped_text(name).map_err(MobmemError::new_err)?;
        let file = detached(py, || ExperimentFile::parse(text, &origin, Path::new(".")))?;
        Ok(Experiment { file })
    }

    /// Parse the text `to_toml` gives (what a worker is sent).
    #[staticmethod]
    fn from_toml(py: Python<'_>, text: &str, origin: &str) -> PyResult<Self> {
        let file = detached(py, || ExperimentFile::parse(text, origin, Path::new(".")))?;
        Ok(Experiment { file })
    }

    /// The whole experiment as TOML, which `from_toml` reads back to an equal experiment.
    fn to_toml(&self) -> PyResult<String> {
        self.file.to_toml().map_err(raise)
    }

    #[getter]
    fn name(&self) -> &str {
        &self.file.header.name
    }

    #[getter]
    fn title(&self) -> &str {
        &self.file.header.title
    }

    /// The file's kind (`cache`, `swap`, ...).
    #[getter]
    fn kind(&self) -> &str {
        self.file.header.kind
    }

    /// Whether its runs split further into points (the cache kind): then `workloads`,
    /// `load_workload`, `points` and `run_point` make them; otherwise a run is one task.
    #[getter]
    fn splits_by_point(&self) -> bool {
        self.file.params.cache_grid().is_some()
    }

    /// The runs `mobmem run` makes, `seeds` standing for `--seeds`: their seeds, in the
    /// order their rows are written, and whether the rows carry a `seed` column.
    #[pyo3(signature = (seeds=None))]
    fn runs(&self, seeds: Option<u64>) -> PyResult<(Vec<u64>, bool)> {
        let runs = self.file.runs(&options(checked_seeds(seeds)?, None));
        Ok((runs.seeds, runs.by_seed))
    }

    /// The workloads of a cache experiment as given: name and exactly one of preset,
    /// config or trace, with the trace's format, seed and scale when set. Empty for other
    /// kinds.
    fn workloads<'py>(&self, py: Python<'py>) -> PyResult<Vec<Bound<'py, PyDict>>> {
        let Some(config) = self.file.params.cache_grid() else {
            return Ok(Vec::new());
        };
        let path_text = |p: &Option<PathBuf>| p.as_ref().map(|p| p.display().to_string());
        config
            .workloads
            .iter()
            .map(|w| {
                let d = PyDict::new(py);
                d.set_item("name", &w.name)?;
                d.set_item("preset", &w.preset)?;
                d.set_item("config", path_text(&w.config))?;
                d.set_item("trace", path_text(&w.trace))?;
                d.set_item("format", &w.format)?;
                d.set_item("columns", &w.columns)?;
                d.set_item("seed", w.seed)?;
                d.set_item("scale", w.scale)?;
                Ok(d)
            })
            .collect()
    }

    /// Read or generate the workload `name` of a cache experiment, for the run with
    /// `seed`. `data` is its trace file's content when the caller fetched it (a URL);
    /// otherwise the file is read from its path.
    #[pyo3(signature = (name, seed, data=None))]
    fn load_workload(
        &self,
        py: Python<'_>,
        name: &str,
        seed: u64,
        data: Option<Vec<u8>>,
    ) -> PyResult<Workload> {
        let config = self.seeded_grid(seed)?;
        let spec = spec(&config, name)?;
        let loaded = detached(py, || experiments::load_workload(&config, spec, data))?;
        Ok(Workload { loaded })
    }

    /// The points of one workload of a cache experiment, in the order `mobmem run` runs
    /// and writes them.
    fn points<'py>(
        &self,
        py: Python<'py>,
        workload: &Workload,
    ) -> PyResult<Vec<Bound<'py, PyDict>>> {
        let grid = self.grid(py, workload)?;
        grid.iter().map(|p| point_dict(py, p)).collect()
    }

    /// Run one point (a dict from `points`) on its workload; returns its rows as the CSV
    /// text `mobmem run` writes (header included). `seed`, when the runs are gathered by
    /// seed (`runs`), is the value of their `seed` column.
    #[pyo3(signature = (workload, point, seed=None))]
    fn run_point(
        &self,
        py: Python<'_>,
        workload: &Workload,
        point: &Bound<'_, PyDict>,
        seed: Option<u64>,
    ) -> PyResult<String> {
        let wanted = PointFields::extract(point)?;
        let grid = self.grid(py, workload)?;
        let Some(point) = grid.into_iter().find(|p| wanted.matches(p)) else {
            return Err(MobmemError::new_err(format!(
                "experiment {}: no point {} of workload {}",
                self.file.header.name, wanted, workload.loaded.name
            )));
        };
        let config = self.grid_config()?;
        let trace = &workload.loaded.trace;
        detached(py, || {
            let cost = config.cost.resolve()?;
            let clock = config.clock.as_ref().map(|c| c.setup()).transpose()?;
            let metrics =
                experiments::run_point(&point, trace, &cost, &config.devices, clock.as_ref())?;
            let results = Results {
                experiment: config.name.clone(),
                title: config.title.clone(),
                rows: vec![ResultRow { point, metrics }],
                workloads: Vec::new(),
            };
            table_csv(of_seed(seed, results.to_table()))
        })
    }

    /// Run the experiment with one seed (one of `runs`), whatever its kind; returns its
    /// rows as the CSV text `mobmem run` writes (header included), with the `seed` column
    /// when `by_seed`. `media` stands for `--media`.
    #[pyo3(signature = (seed, by_seed, media=None))]
    fn run_seed(
        &self,
        py: Python<'_>,
        seed: u64,
        by_seed: bool,
        media: Option<PathBuf>,
    ) -> PyResult<String> {
        let file = &self.file;
        detached(py, || {
            let report = file.run_seed(seed, &options(None, media))?;
            table_csv(of_seed(by_seed.then_some(seed), report.table))
        })
    }

    /// Run the whole experiment as `mobmem run` does (in parallel threads), `seeds` and
    /// `media` standing for `--seeds` and `--media`; returns the text of its
    /// `results.csv`. `data` maps workload names of a cache experiment to trace file
    /// content the caller fetched.
    #[pyo3(signature = (seeds=None, media=None, data=None))]
    fn run(
        &self,
        py: Python<'_>,
        seeds: Option<u64>,
        media: Option<PathBuf>,
        data: Option<HashMap<String, Vec<u8>>>,
    ) -> PyResult<String> {
        let options = options(checked_seeds(seeds)?, media);
        let data = data.unwrap_or_default();
        let file = &self.file;
        if data.is_empty() {
            return detached(py, || table_csv(file.run(&options)?.table));
        }
        let config = self.grid_config()?;
        if let Some(name) = data.keys().find(|name| spec(config, name).is_err()) {
            return Err(MobmemError::new_err(format!(
                "experiment {}: trace content given for '{name}', which is not one of its workloads",
                config.name
            )));
        }
        // Workloads fetched by the caller: the cache kind's runs, with them, as
        // `ExperimentFile::run` makes them.
        detached(py, || {
            let runs = file.runs(&options);
            let mut tables = Vec::with_capacity(runs.seeds.len());
            for &seed in &runs.seeds {
                let mut config = config.clone();
                config.seed = seed;
                let workloads = (config.workloads.iter())
                    .map(|spec| {
                        experiments::load_workload(&config, spec, data.get(&spec.name).cloned())
                    })
                    .collect::<mobmem::Result<Vec<_>>>()?;
                let results = experiments::run_loaded(&config, &workloads, &|_, _| {})?;
                tables.push((seed, report_of(results.to_table())));
            }
            let table = if runs.by_seed {
                ExperimentReport::of_seeds(tables).table
            } else {
                tables.remove(0).1.table
            };
            table_csv(table)
        })
    }

    /// Run the whole experiment as `mobmem run` does; returns the text of the files it
    /// writes for the results and the paper analysis: `results.csv`, `claims.json` and
    /// `findings.json` (claims and findings are empty lists without `reproduces`).
    #[pyo3(signature = (seeds=None, media=None))]
    fn report(
        &self,
        py: Python<'_>,
        seeds: Option<u64>,
        media: Option<PathBuf>,
    ) -> PyResult<(String, String, String)> {
        let options = options(checked_seeds(seeds)?, media);
        let file = &self.file;
        detached(py, || {
            let report = file.run(&options)?;
            Ok((
                table_csv(report.table)?,
                as_json_file("claims.json", serde_json::to_string_pretty(&report.claims))?,
                as_json_file(
                    "findings.json",
                    serde_json::to_string_pretty(&report.findings),
                )?,
            ))
        })
    }

    /// The timeline of a phone experiment's run with `seed`: for each of its
    /// configurations (`all-off`, then `all-on`, as its results list them; or only
    /// `config`), the phone's name, the configuration's and the samples as JSON.
    #[pyo3(signature = (seed, config=None))]
    fn timeline(
        &self,
        py: Python<'_>,
        seed: u64,
        config: Option<&str>,
    ) -> PyResult<Vec<(String, String, String)>> {
        let phone = self.phone_config()?;
        let mut configs = vec![
            ("all-off", phone.baselines()),
            ("all-on", phone.mechanisms()),
        ];
        if let Some(wanted) = config {
            configs.retain(|(name, _)| *name == wanted);
            if configs.is_empty() {
                return Err(MobmemError::new_err(format!(
                    "experiment {}: a phone runs as `all-off` and `all-on`, not '{wanted}'",
                    self.file.header.name
                )));
            }
        }
        detached(py, || {
            let trace = phone::workload(&phone, seed)?;
            configs
                .iter()
                .map(|(name, choice)| {
                    let (_, samples) = phone::run_with_timeline(&phone, choice, &trace, seed)?;
                    let json = serde_json::to_string(&samples)
                        .map_err(|e| Error::config(&phone.name, e.to_string()))?;
                    Ok((phone.name.clone(), name.to_string(), json))
                })
                .collect()
        })
    }
}

impl Experiment {
    /// The phone of an experiment of kind `phone`, as its file gives it; an error for
    /// other kinds.
    fn phone_config(&self) -> PyResult<PhoneConfig> {
        let header = &self.file.header;
        if header.kind != "phone" {
            return Err(MobmemError::new_err(format!(
                "experiment {}: a timeline is recorded for experiments of kind 'phone' \
                 (experiments/phone.toml), not '{}'",
                header.name, header.kind
            )));
        }
        let mut table = self.file.params.to_toml().map_err(raise)?;
        table.insert("name".into(), header.name.clone().into());
        table.insert("title".into(), header.title.clone().into());
        let phone: PhoneConfig = toml::Value::Table(table)
            .try_into()
            .map_err(|e: toml::de::Error| MobmemError::new_err(e.to_string()))?;
        Ok(phone)
    }

    /// The cache kind's grid; an error for other kinds.
    fn grid_config(&self) -> PyResult<&ExperimentConfig> {
        self.file.params.cache_grid().ok_or_else(|| {
            MobmemError::new_err(format!(
                "experiment {}: files of kind '{}' run by seed, not by point",
                self.file.header.name, self.file.header.kind
            ))
        })
    }

    /// The cache kind's grid with the seed of one run.
    fn seeded_grid(&self, seed: u64) -> PyResult<ExperimentConfig> {
        let mut config = self.grid_config()?.clone();
        config.seed = seed;
        Ok(config)
    }

    fn grid(&self, py: Python<'_>, workload: &Workload) -> PyResult<Vec<Point>> {
        let config = self.grid_config()?;
        spec(config, &workload.loaded.name)?;
        detached(py, || {
            experiments::points(config, std::slice::from_ref(&workload.loaded))
        })
    }
}

fn spec<'a>(config: &'a ExperimentConfig, name: &str) -> PyResult<&'a experiments::WorkloadSpec> {
    config
        .workloads
        .iter()
        .find(|w| w.name == name)
        .ok_or_else(|| {
            MobmemError::new_err(format!(
                "experiment {}: no workload named '{name}'",
                config.name
            ))
        })
}

/// `--seeds N`, checked as the CLI checks it.
fn checked_seeds(seeds: Option<u64>) -> PyResult<Option<u64>> {
    match seeds {
        Some(n) if !(1..=MAX_SEEDS).contains(&n) => Err(MobmemError::new_err(format!(
            "seeds must be a whole number of seeds from 1 to {MAX_SEEDS}, got {n}"
        ))),
        _ => Ok(seeds),
    }
}

fn no_progress(_: usize, _: usize) {}

fn options(seeds: Option<u64>, media_dir: Option<PathBuf>) -> RunOptions<'static> {
    RunOptions {
        progress: &no_progress,
        seeds,
        media_dir,
    }
}

/// A table as the report of one run.
fn report_of(table: Table) -> ExperimentReport {
    ExperimentReport::of_table(table, Vec::new(), (Vec::new(), Vec::new(), Vec::new()))
}

/// The table of one run with `seed` as `ExperimentFile::run` gathers it: with the seed
/// column (`ExperimentReport::of_seeds`), so that the runs' tables one after another are
/// the experiment's; `None`: the one run's table as it is.
fn of_seed(seed: Option<u64>, table: Table) -> Table {
    match seed {
        Some(seed) => ExperimentReport::of_seeds(vec![(seed, report_of(table))]).table,
        None => table,
    }
}

/// JSON text as `mobmem run` writes its JSON files (`name`): pretty, with a final line
/// break.
fn as_json_file(name: &str, text: serde_json::Result<String>) -> mobmem::Result<String> {
    let mut text = text.map_err(|e| Error::config(name, e.to_string()))?;
    text.push('\n');
    Ok(text)
}

/// The text of the experiment file shipped as `experiments/NAME.toml`, and its name for
/// errors; an unknown name lists the shipped ones.
fn shipped_text(name: &str) -> Result<(&'static str, String), String> {
    let reproduction = REPRODUCTIONS
        .iter()
        .find(|r| r.name == name)
        .map(|r| r.file);
    let phone = PHONES
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, text)| *text);
    match reproduction.or(phone) {
        Some(text) => Ok((text, format!("experiments/{name}.toml"))),
        None => {
            let known: Vec<&str> = (REPRODUCTIONS.iter().map(|r| r.name))
                .chain(PHONES.iter().map(|(n, _)| *n))
                .collect();
            Err(format!(
                "no shipped experiment '{name}' (shipped: {})",
                known.join(", ")
            ))
        }
    }
}

/// The keys of the experiment file shipped as `experiments/NAME.toml`, as a JSON object.
#[pyfunction]
fn shipped_json(name: &str) -> PyResult<String> {
    let (text, origin) = shipped_text(name).map_err(MobmemError::new_err)?;
    let table: toml::Table =
        toml::from_str(text).map_err(|e| MobmemError::new_err(format!("{origin}: {e}")))?;
    serde_json::to_string(&table).map_err(|e| MobmemError::new_err(format!("{origin}: {e}")))
}

/// The reproductions, as `mobmem reproduce --help` lists them: (name, summary), in the
/// order `reproduce all` runs them; and the seeds it runs by default.
#[pyfunction(name = "reproductions")]
fn list_reproductions() -> (Vec<(&'static str, &'static str)>, u64) {
    (
        REPRODUCTIONS.iter().map(|r| (r.name, r.summary)).collect(),
        reproductions::DEFAULT_SEEDS,
    )
}

fn table_csv(table: Table) -> mobmem::Result<String> {
    let mut bytes = Vec::new();
    report::write_results_csv(&mut bytes, &table)?;
    String::from_utf8(bytes).map_err(|e| Error::config("results.csv", e.to_string()))
}

fn point_dict<'py>(py: Python<'py>, p: &Point) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("workload", &p.workload)?;
    d.set_item("policy", &p.policy)?;
    d.set_item("family", p.family)?;
    d.set_item("memory_pages", p.memory_pages)?;
    d.set_item("memory_fraction", p.memory_fraction)?;
    d.set_item("dram_fraction", p.dram_fraction)?;
    d.set_item("dram_pages", p.dram_pages)?;
    d.set_item("pcm_pages", p.pcm_pages)?;
    Ok(d)
}

/// The fields that identify a point, read from a Python dict.
struct PointFields {
    workload: String,
    policy: String,
    memory_pages: u64,
    // Two fractions of a small footprint can round to the same pages.
    memory_fraction: f64,
    dram_fraction: f64,
}

impl PointFields {
    fn extract(d: &Bound<'_, PyDict>) -> PyResult<Self> {
        fn field<'py, T: FromPyObjectOwned<'py>>(d: &Bound<'py, PyDict>, key: &str) -> PyResult<T> {
            match d.get_item(key)? {
                Some(value) => value.extract::<T>().map_err(|e| {
                    let e: PyErr = e.into();
                    MobmemError::new_err(format!("point field '{key}': {}", e.value(d.py())))
                }),
                None => Err(MobmemError::new_err(format!(
                    "a point needs the field '{key}'"
                ))),
            }
        }
        Ok(PointFields {
            workload: field(d, "workload")?,
            policy: field(d, "policy")?,
            memory_pages: field(d, "memory_pages")?,
            memory_fraction: field(d, "memory_fraction")?,
            dram_fraction: field(d, "dram_fraction")?,
        })
    }

    fn matches(&self, p: &Point) -> bool {
        p.workload == self.workload
            && p.policy == self.policy
            && p.memory_pages == self.memory_pages
            && p.memory_fraction == self.memory_fraction
            && p.dram_fraction == self.dram_fraction
    }
}

impl std::fmt::Display for PointFields {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "({}, {} pages, DRAM share {})",
            self.policy, self.memory_pages, self.dram_fraction
        )
    }
}

/// Simulate one policy on one trace, as `mobmem sim` does. Returns the DRAM and PCM pages
/// and every metric (what `mobmem sim --json` prints besides the names), in the order the
/// metrics are listed.
#[pyfunction]
#[pyo3(signature = (trace, policy, capacity, dram_fraction, cost, format=None, data=None, columns=None, warmup=0, hash_object_ids=false))]
#[allow(clippy::too_many_arguments)] // one per option of `mobmem sim`, plus fetched content
fn simulate(
    py: Python<'_>,
    trace: PathBuf,
    policy: &str,
    capacity: i64,
    dram_fraction: f64,
    cost: &str,
    format: Option<&str>,
    data: Option<Vec<u8>>,
    columns: Option<&str>,
    warmup: u64,
    hash_object_ids: bool,
) -> PyResult<Vec<(String, f64)>> {
    detached(py, || {
        let info = find_policy(policy)?;
        let format = parse_format(format, columns)?;
        // As `sim --hash-object-ids`: the trace is read through once for its object ids.
        let object_ids = match (hash_object_ids, &data) {
            (false, _) => None,
            (true, Some(bytes)) => Some(trace::object_ids_of(
                trace::open_data(&trace, bytes.clone(), format.clone())?.as_mut(),
                &trace,
            )?),
            (true, None) => Some(trace::object_ids_to_hash(&trace, format.clone())?),
        };
        let setup = RunSetup {
            policy: info,
            // A negative capacity is refused like 0 pages is.
            capacity: Capacity::of_memory(
                info.family,
                u64::try_from(capacity).unwrap_or(0),
                dram_fraction,
            )?,
            cost: CostModel::named(cost)?,
            devices: Default::default(),
            clock: None,
            warmup,
            object_ids,
        };
        let metrics = if info.offline {
            // An offline policy needs the whole future, so the trace is read into memory.
            let t = match data {
                Some(bytes) => trace::read_all_data(&trace, bytes, format)?,
                None => trace::read_all(&trace, format)?,
            };
            run_trace(&t, &setup)?
        } else {
            let mut source = match data {
                Some(bytes) => trace::open_data(&trace, bytes, format)?,
                None => trace::open(&trace, format)?,
            };
            run_source(source.as_mut(), &setup, &mut |_| {})?
        };
        let mut out = vec![("dram_pages".to_string(), setup.capacity.dram as f64)];
        if info.family.has_metric("pcm_pages") {
            out.push(("pcm_pages".to_string(), setup.capacity.pcm as f64));
        }
        out.extend(
            info.shown_values(&metrics)
                .into_iter()
                .map(|(name, value)| (name.to_string(), value)),
        );
        Ok(out)
    })
}

/// What a trace holds, as the JSON `mobmem trace info --json` prints.
#[pyfunction]
#[pyo3(signature = (path, format=None, data=None, columns=None))]
fn trace_summary(
    py: Python<'_>,
    path: PathBuf,
    format: Option<&str>,
    data: Option<Vec<u8>>,
    columns: Option<&str>,
) -> PyResult<String> {
    detached(py, || {
        let format = parse_format(format, columns)?;
        let mut source = match data {
            Some(bytes) => trace::open_data(&path, bytes, format)?,
            None => trace::open(&path, format)?,
        };
        let summary = trace::summary::summarize_source(source.as_mut())?;
        serde_json::to_string(&summary)
            .map_err(|e| Error::config(path.display().to_string(), e.to_string()))
    })
}

/// Generate a synthetic workload, as `mobmem gen` does, from a preset name, a workload
/// config file (TOML) or a workload config as JSON; a preset with a model of its own
/// also takes a config (file or JSON) of some of its parameters (`gen NAME --config
/// FILE`). `no_background` leaves the background load out. Writes the trace to `out`
/// (.mmt or .csv) when given; returns the JSON summary of the generated trace.
#[pyfunction]
#[pyo3(signature = (seed, preset=None, config_path=None, config_json=None, scale=None, out=None, no_background=false))]
#[allow(clippy::too_many_arguments)] // one per option of `mobmem gen`
fn generate(
    py: Python<'_>,
    seed: u64,
    preset: Option<&str>,
    config_path: Option<PathBuf>,
    config_json: Option<&str>,
    scale: Option<f64>,
    out: Option<PathBuf>,
    no_background: bool,
) -> PyResult<String> {
    detached(py, || {
        let preset = preset.map(workload::find_preset).transpose()?;
        let mut params: Box<dyn workload::Params> = match (preset, &config_path, config_json) {
            (Some(preset), None, None) => preset.params(),
            (Some(preset), Some(path), None) => preset.load(path)?,
            (Some(preset), None, Some(json)) => match preset.model {
                workload::Model::Own { parse, .. } => {
                    let origin = "workload config";
                    parse(&json_as_toml(json, origin)?, origin)?
                }
                // The app model's error, which says what to give instead.
                workload::Model::Apps(_) => preset.load(Path::new("workload config"))?,
            },
            (None, Some(path), None) => Box::new(workload::load_config(path, Echo::Quote)?),
            (None, None, Some(json)) => {
                Box::new(workload::parse_config_json(json, "workload config")?)
            }
            _ => {
                return Err(Error::config(
                    "generate",
                    "give a preset, a config file or a config, or a preset and a config",
                ))
            }
        };
        let options = workload::GenOptions {
            seed,
            scale,
            no_background,
        };
        let t = workload::generate_with(params.as_mut(), &options)?;
        if let Some(path) = &out {
            trace::write(path, &t)?;
        }
        serde_json::to_string(&workload::summarize(&t))
            .map_err(|e| Error::config("generate", e.to_string()))
    })
}

/// A JSON object as TOML text, for the parsers of TOML configs.
fn json_as_toml(json: &str, origin: &str) -> mobmem::Result<String> {
    let value: serde_json::Value =
        serde_json::from_str(json).map_err(|e| Error::config(origin, e.to_string()))?;
    match toml::Value::try_from(value) {
        Ok(toml::Value::Table(table)) => {
            toml::to_string(&table).map_err(|e| Error::config(origin, e.to_string()))
        }
        Ok(_) => Err(Error::config(origin, "a config is a table of keys")),
        Err(e) => Err(Error::config(origin, e.to_string())),
    }
}

/// Names of the workload presets, as `mobmem gen --list` lists them.
#[pyfunction]
fn presets() -> Vec<&'static str> {
    workload::PRESETS.names().collect()
}

/// The policies of the registry: (name, family, summary).
#[pyfunction]
fn policies() -> Vec<(&'static str, &'static str, &'static str)> {
    REGISTRY
        .iter()
        .map(|p| (p.name, p.family.name(), p.summary))
        .collect()
}

/// Native core of the mobmem Python package; use the `mobmem` package instead.
#[pymodule]
mod _native {
    #[pymodule_export]
    use super::{
        generate, list_reproductions, policies, presets, shipped_json, simulate, trace_summary,
        Experiment, MobmemError, Workload,
    };
}
