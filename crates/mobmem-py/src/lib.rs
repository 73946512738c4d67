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
use std::path::PathBuf;

use pyo3::create_exception;
use pyo3::exceptions::PyException;
use pyo3::prelude::*;
use pyo3::types::PyDict;

use mobmem::core::stats::Stats;
use mobmem::devices::CostModel;
use mobmem::experiments::{self, ExperimentConfig, LoadedWorkload, Point, ResultRow, Results};
use mobmem::mm::placement::sim::{run_source, run_trace, RunSetup};
use mobmem::mm::placement::{find_policy, Capacity, REGISTRY};
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

fn parse_format(format: Option<&str>) -> mobmem::Result<Option<Format>> {
    format.map(str::parse).transpose()
}

/// An experiment, parsed and validated.
#[pyclass(module = "mobmem._native", frozen)]
struct Experiment {
    config: ExperimentConfig,
}

/// A workload of an experiment, read or generated, held in memory.
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
    /// Read an experiment file (TOML) as `mobmem run` does.
    #[staticmethod]
    fn load(py: Python<'_>, path: PathBuf) -> PyResult<Self> {
        let config = detached(py, || ExperimentConfig::load(&path))?;
        Ok(Experiment { config })
    }

    /// Parse an experiment given as JSON with the TOML file's keys; `origin` names it in
    /// errors.
    #[staticmethod]
    fn from_json(py: Python<'_>, text: &str, origin: &str) -> PyResult<Self> {
        let config = detached(py, || ExperimentConfig::parse_json(text, origin))?;
        Ok(Experiment { config })
    }

    /// The same experiment with relative trace and config paths made relative to `base`
    /// (URLs stay as they are).
    fn resolved(&self, base: PathBuf) -> Self {
        let mut config = self.config.clone();
        config.resolve_paths(&base);
        Experiment { config }
    }

    #[getter]
    fn name(&self) -> &str {
        &self.config.name
    }

    #[getter]
    fn title(&self) -> &str {
        &self.config.title
    }

    /// The whole experiment as JSON, which `from_json` reads back to an equal experiment:
    /// what a worker on another machine is sent.
    fn to_json(&self) -> PyResult<String> {
        serde_json::to_string(&self.config)
            .map_err(|e| MobmemError::new_err(format!("experiment {}: {e}", self.config.name)))
    }

    /// The workloads as given: name and exactly one of preset, config or trace, with the
    /// trace's format, seed and scale when set.
    fn workloads<'py>(&self, py: Python<'py>) -> PyResult<Vec<Bound<'py, PyDict>>> {
        let path_text = |p: &Option<PathBuf>| p.as_ref().map(|p| p.display().to_string());
        self.config
            .workloads
            .iter()
            .map(|w| {
                let d = PyDict::new(py);
                d.set_item("name", &w.name)?;
                d.set_item("preset", &w.preset)?;
                d.set_item("config", path_text(&w.config))?;
                d.set_item("trace", path_text(&w.trace))?;
                d.set_item("format", &w.format)?;
                d.set_item("seed", w.seed)?;
                d.set_item("scale", w.scale)?;
                Ok(d)
            })
            .collect()
    }

    /// Read or generate the workload `name`. `data` is its trace file's content when the
    /// caller fetched it (a URL); otherwise the file is read from its path.
    #[pyo3(signature = (name, data=None))]
    fn load_workload(
        &self,
        py: Python<'_>,
        name: &str,
        data: Option<Vec<u8>>,
    ) -> PyResult<Workload> {
        let spec = self.spec(name)?;
        let loaded = detached(py, || experiments::load_workload(&self.config, spec, data))?;
        Ok(Workload { loaded })
    }

    /// The points of one workload, in the order `mobmem run` runs and writes them.
    fn points<'py>(
        &self,
        py: Python<'py>,
        workload: &Workload,
    ) -> PyResult<Vec<Bound<'py, PyDict>>> {
        let grid = self.grid(py, workload)?;
        grid.iter().map(|p| point_dict(py, p)).collect()
    }

    /// Run one point (a dict from `points`) on its workload; returns its rows as the CSV
    /// text `mobmem run` writes (header included).
    fn run_point(
        &self,
        py: Python<'_>,
        workload: &Workload,
        point: &Bound<'_, PyDict>,
    ) -> PyResult<String> {
        let wanted = PointFields::extract(point)?;
        let grid = self.grid(py, workload)?;
        let Some(point) = grid.into_iter().find(|p| wanted.matches(p)) else {
            return Err(MobmemError::new_err(format!(
                "experiment {}: no point {} of workload {}",
                self.config.name, wanted, workload.loaded.name
            )));
        };
        let config = &self.config;
        let trace = &workload.loaded.trace;
        detached(py, || {
            let cost = config.cost.resolve()?;
            let metrics = experiments::run_point(&point, trace, &cost, &config.devices)?;
            results_csv(config, vec![ResultRow { point, metrics }])
        })
    }

    /// Run the whole experiment as `mobmem run` does (in parallel threads); returns the
    /// text of its `results.csv`. `data` maps workload names to trace file content the
    /// caller fetched.
    #[pyo3(signature = (data=None))]
    fn run(&self, py: Python<'_>, data: Option<HashMap<String, Vec<u8>>>) -> PyResult<String> {
        let mut data = data.unwrap_or_default();
        if let Some(name) = data.keys().find(|name| self.spec(name).is_err()) {
            return Err(MobmemError::new_err(format!(
                "experiment {}: trace content given for '{name}', which is not one of its workloads",
                self.config.name
            )));
        }
        let config = &self.config;
        detached(py, || {
            let no_progress = |_: usize, _: usize| {};
            let results = if data.is_empty() {
                experiments::run(config, &no_progress)?
            } else {
                let workloads = config
                    .workloads
                    .iter()
                    .map(|spec| experiments::load_workload(config, spec, data.remove(&spec.name)))
                    .collect::<mobmem::Result<Vec<_>>>()?;
                experiments::run_loaded(config, &workloads, &no_progress)?
            };
            results_csv(config, results.rows)
        })
    }
}

impl Experiment {
    fn spec(&self, name: &str) -> PyResult<&experiments::WorkloadSpec> {
        self.config
            .workloads
            .iter()
            .find(|w| w.name == name)
            .ok_or_else(|| {
                MobmemError::new_err(format!(
                    "experiment {}: no workload named '{name}'",
                    self.config.name
                ))
            })
    }

    fn grid(&self, py: Python<'_>, workload: &Workload) -> PyResult<Vec<Point>> {
        self.spec(&workload.loaded.name)?;
        detached(py, || {
            experiments::points(&self.config, std::slice::from_ref(&workload.loaded))
        })
    }
}

fn results_csv(config: &ExperimentConfig, rows: Vec<ResultRow>) -> mobmem::Result<String> {
    let results = Results {
        experiment: config.name.clone(),
        title: config.title.clone(),
        rows,
        workloads: Vec::new(),
    };
    let mut bytes = Vec::new();
    report::write_results_csv(&mut bytes, &results.to_table())?;
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
#[pyo3(signature = (trace, policy, capacity, dram_fraction, cost, format=None, data=None))]
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
) -> PyResult<Vec<(String, f64)>> {
    detached(py, || {
        let info = find_policy(policy)?;
        let format = parse_format(format)?;
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
        let mut out = vec![
            ("dram_pages".to_string(), setup.capacity.dram as f64),
            ("pcm_pages".to_string(), setup.capacity.pcm as f64),
        ];
        out.extend(
            metrics
                .values()
                .into_iter()
                .map(|(name, value)| (name.to_string(), value)),
        );
        Ok(out)
    })
}

/// What a trace holds, as the JSON `mobmem trace info --json` prints.
#[pyfunction]
#[pyo3(signature = (path, format=None, data=None))]
fn trace_summary(
    py: Python<'_>,
    path: PathBuf,
    format: Option<&str>,
    data: Option<Vec<u8>>,
) -> PyResult<String> {
    detached(py, || {
        let format = parse_format(format)?;
        let mut source = match data {
            Some(bytes) => trace::open_data(&path, bytes, format)?,
            None => trace::open(&path, format)?,
        };
        let summary = trace::summary::summarize_source(source.as_mut())?;
        serde_json::to_string(&summary)
            .map_err(|e| Error::config(path.display().to_string(), e.to_string()))
    })
}

/// Generate a synthetic workload from exactly one of a preset name, a workload config
/// file (TOML) or a workload config as JSON; write it to `out` (.mmt or .csv) when given.
/// Returns the JSON summary of the generated trace.
#[pyfunction]
#[pyo3(signature = (seed, preset=None, config_path=None, config_json=None, scale=None, out=None))]
fn generate(
    py: Python<'_>,
    seed: u64,
    preset: Option<&str>,
    config_path: Option<PathBuf>,
    config_json: Option<&str>,
    scale: Option<f64>,
    out: Option<PathBuf>,
) -> PyResult<String> {
    detached(py, || {
        let mut params: Box<dyn workload::Params> = match (preset, &config_path, config_json) {
            (Some(name), None, None) => workload::find_preset(name)?.params(),
            (None, Some(path), None) => Box::new(workload::load_config(path)?),
            (None, None, Some(json)) => {
                Box::new(workload::parse_config_json(json, "workload config")?)
            }
            _ => {
                return Err(Error::config(
                    "generate",
                    "give exactly one of a preset, a config file or a config",
                ))
            }
        };
        let options = workload::GenOptions {
            seed,
            scale,
            no_background: false,
        };
        let t = workload::generate_with(params.as_mut(), &options)?;
        if let Some(path) = &out {
            trace::write(path, &t)?;
        }
        serde_json::to_string(&workload::summarize(&t))
            .map_err(|e| Error::config("generate", e.to_string()))
    })
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
        generate, policies, presets, simulate, trace_summary, Experiment, MobmemError, Workload,
    };
}
