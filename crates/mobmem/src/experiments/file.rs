//! Experiment files of every kind. A file's `kind` key says what it runs (absent: the
//! cache grid of [`super::config`]); besides the keys every file has ([`Header`]: `kind`,
//! `name`, `title`, `seeds`, `reproduces`), its keys are those of its kind, one
//! `serde(deny_unknown_fields)` struct per kind. `docs/experiment-files.md` lists every
//! key of every kind with its default.
//!
//! A kind is one entry of [`super::kinds::KINDS`] plus a module with its parameters: a
//! struct that implements [`KindParams`] (validate, run once with a seed) and is read by
//! [`parse_params`]. `mobmem run FILE` and `mobmem reproduce NAME` (a file shipped in
//! `experiments/`) both go through [`ExperimentFile::run`].

use std::path::{Path, PathBuf};

use serde::de::DeserializeOwned;
use serde::Serialize;

use super::kinds::{Kind, KINDS};
use super::sweep::Grid;
use crate::report::ExperimentReport;
use crate::{Error, Result};

/// Most seeds a file or a command may ask for.
pub const MAX_SEEDS: u64 = 100;

/// What one run of an experiment gets.
pub struct Context<'a> {
    /// Called with (done, total) as the run goes.
    pub progress: &'a (dyn Fn(usize, usize) + Sync),
    /// The media folder given on the command line (`--media`), which overrides the file's.
    pub media_dir: Option<PathBuf>,
    /// Seed of the synthetic workloads.
    pub seed: u64,
    /// How many runs (seeds) the file makes in all, of which this is one: the grid's
    /// limit counts the points of every run.
    pub runs: usize,
}

/// What a run of a file may override.
pub struct RunOptions<'a> {
    pub progress: &'a (dyn Fn(usize, usize) + Sync),
    /// Seeds 1..=N instead of the file's `seeds`.
    pub seeds: Option<u64>,
    /// The media folder, instead of the file's (kinds that read real files).
    pub media_dir: Option<PathBuf>,
}

/// The runs of an experiment file: one per seed, independent of one another.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Runs {
    /// The seed of each run, in the order its rows are written.
    pub seeds: Vec<u64>,
    /// Whether the runs are gathered by [`ExperimentReport::of_seeds`], the table gaining
    /// a `seed` column in front; otherwise there is one run, and its report is the
    /// experiment's.
    pub by_seed: bool,
}

/// The keys every experiment file has, whatever its kind.
#[derive(Debug, Clone, PartialEq)]
pub struct Header {
    /// `kind`: the registry name of what the file runs (default `cache`).
    pub kind: &'static str,
    /// `name`: names the report's folder and the experiment in its results.
    pub name: String,
    /// `title`: shown in the report (default empty).
    pub title: String,
    /// `seeds = N`: run seeds 1..=N and report each claim's mean over them (absent: one
    /// run, with the cache kind's `seed` or seed 1, and no `seed` column).
    pub seeds: Option<u64>,
    /// `reproduces`: the reproduction whose paper analysis (claims, findings, the
    /// paper's figure list) is applied to the results.
    pub reproduces: Option<String>,
    /// `[[calibrated]]`: the inputs set to match a number of the paper's; the claims
    /// about that number are not testable.
    pub calibrated: Vec<Calibration>,
    /// `[[assumed]]`: the constants the model assumes, each with the ends of its
    /// plausible range; `reproduce --sensitivity` reruns the claims at each end.
    pub assumed: Vec<super::sensitivity::Assumption>,
}

/// An input of the experiment that was set so that the model matches one of the paper's
/// numbers or figures. A claim about that number measures the calibration, not the
/// model, so each claim listed is reported not testable, naming the calibration.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Calibration {
    /// What was set (a key, a preset's sizes, a device constant).
    pub input: String,
    /// To match what: the paper's figure or number.
    pub against: String,
    /// The ids of the claims about the calibrated quantity.
    pub claims: Vec<String>,
}

impl Calibration {
    /// Why a claim it lists is not testable.
    pub fn why(&self) -> String {
        format!(
            "calibrated: {}, set so that {}; the claim measures that calibration, not the \
             model",
            self.input.trim_end_matches('.'),
            self.against.trim_end_matches('.')
        )
    }
}

/// The parameters of one kind, as its files give them.
pub trait KindParams:
    DeserializeOwned + Serialize + std::fmt::Debug + Send + Sync + 'static
{
    /// One run of a file of the kind, as the grid the sweep runner runs.
    type Grid<'a>: Grid
    where
        Self: 'a;
    /// Check the values; the message names the key.
    fn validate(&self, origin: &str) -> Result<()>;
    /// Make relative paths relative to `base` (the file's folder).
    fn resolve_paths(&mut self, _base: &Path) {}
    /// The run with `context.seed` (its workloads made, its files found), named and
    /// titled by `header`; [`super::sweep::run`] runs it and applies the paper analysis
    /// when `header.reproduces` is set.
    fn grid<'a>(&'a self, header: &Header, context: &Context) -> Result<Self::Grid<'a>>;
    /// The seed of a run when the file sets no `seeds`.
    fn default_seed(&self) -> u64 {
        1
    }
}

/// A kind's parameters, whatever the kind.
pub trait Experiment: std::fmt::Debug + Send + Sync {
    fn run_once(&self, header: &Header, context: &Context) -> Result<ExperimentReport>;
    fn default_seed(&self) -> u64;
    /// The kind's keys as TOML (the file less its [`Header`]).
    fn to_toml(&self) -> Result<toml::Table>;
    /// The cache kind's grid, whose points run apart from one another (the Python
    /// package's sweeps make a task of each); `None` for every other kind, whose runs
    /// split by seed only.
    fn cache_grid(&self) -> Option<&super::ExperimentConfig> {
        None
    }
    /// The phone of a file of kind `phone`; `None` for every other kind.
    fn phone(&self) -> Option<&crate::mm::phone::PhoneConfig> {
        None
    }
}

impl<P: KindParams> Experiment for P {
    fn run_once(&self, header: &Header, context: &Context) -> Result<ExperimentReport> {
        super::sweep::run(&self.grid(header, context)?, header, context)
    }
    fn default_seed(&self) -> u64 {
        KindParams::default_seed(self)
    }
    fn to_toml(&self) -> Result<toml::Table> {
        toml::Table::try_from(self).map_err(|e| Error::config("experiment", e.to_string()))
    }
}

/// The error of a bad value of key `key` in the file `origin` ("key `KEY`: MESSAGE"), for
/// [`KindParams::validate`].
pub fn bad_key<T>(origin: &str, key: &str, message: impl std::fmt::Display) -> Result<T> {
    Err(at_key(origin, key)(message))
}

/// For `map_err`: an error of key `key` in the file `origin`, saying what went wrong.
pub fn at_key<'a, E: std::fmt::Display>(origin: &'a str, key: &'a str) -> impl Fn(E) -> Error + 'a {
    move |e| Error::config(origin, format!("key `{key}`: {e}"))
}

/// For `map_err`: an error in the table `[table]` of the file `origin`.
pub fn in_table<'a, E: std::fmt::Display>(
    origin: &'a str,
    table: &'a str,
) -> impl Fn(E) -> Error + 'a {
    move |e| Error::config(origin, format!("[{table}]: {e}"))
}

/// Check that no name of the list under `key` is given twice.
pub fn distinct(origin: &str, key: &str, names: &[String]) -> Result<()> {
    match (names.iter().enumerate()).find(|(i, name)| names[..*i].contains(name)) {
        Some((_, name)) => bad_key(origin, key, format!("'{name}' is listed twice")),
        None => Ok(()),
    }
}

/// Read a kind's keys (`table`: the file less its header) as `P`: unknown keys are errors
/// naming them, then the values are validated. For [`Kind::parse`].
pub fn parse_params<P: KindParams>(
    _header: &Header,
    table: toml::Table,
    base: &Path,
    origin: &str,
) -> Result<Box<dyn Experiment>> {
    let mut params: P = toml::Value::Table(table)
        .try_into()
        .map_err(|e: toml::de::Error| Error::config(origin, e.to_string().trim_end()))?;
    params.validate(origin)?;
    params.resolve_paths(base);
    Ok(Box::new(params))
}

/// An experiment file read and checked: its header and its kind's parameters.
#[derive(Debug)]
pub struct ExperimentFile {
    pub header: Header,
    pub params: Box<dyn Experiment>,
}

fn take_string(table: &mut toml::Table, key: &str, origin: &str) -> Result<Option<String>> {
    match table.remove(key) {
        None => Ok(None),
        Some(toml::Value::String(s)) => Ok(Some(s)),
        Some(other) => bad_key(
            origin,
            key,
            format!("expected a string, got {}", other.type_str()),
        ),
    }
}

impl ExperimentFile {
    /// Parse a file's text; `origin` names it in errors, `base` is the folder its
    /// relative paths are relative to.
    pub fn parse(text: &str, origin: &str, base: &Path) -> Result<Self> {
        Self::parse_with(text, origin, base, &[])
    }

    /// [`ExperimentFile::parse`] with keys changed first (`--set`): the changed file is
    /// checked as if it had been written so, and its errors name the changes.
    pub fn parse_with(
        text: &str,
        origin: &str,
        base: &Path,
        overrides: &[super::overrides::Override],
    ) -> Result<Self> {
        let mut table: toml::Table = toml::from_str(text)
            .map_err(|e| Error::config(origin, e.to_string().trim_end().to_string()))?;
        if overrides.is_empty() {
            return Self::parse_table(table, origin, base);
        }
        super::overrides::apply_all(&mut table, overrides)?;
        let sets: Vec<&str> = overrides.iter().map(|o| o.text.as_str()).collect();
        let origin = format!("{origin} with --set {}", sets.join(" --set "));
        Self::parse_table(table, &origin, base)
    }

    /// Read a file's keys already parsed (e.g. from JSON): the same checks as
    /// [`ExperimentFile::parse`].
    pub fn parse_table(mut table: toml::Table, origin: &str, base: &Path) -> Result<Self> {
        let kind_name = take_string(&mut table, "kind", origin)?;
        let kind: &'static Kind = match &kind_name {
            None => &KINDS[0],
            Some(name) => KINDS.find(name).map_err(at_key(origin, "kind"))?,
        };
        let name = take_string(&mut table, "name", origin)?
            .ok_or_else(|| Error::config(origin, "missing key `name`"))?;
        super::config::check_name(&name, origin)?;
        let title = take_string(&mut table, "title", origin)?.unwrap_or_default();
        let seeds = match table.remove("seeds") {
            None => None,
            Some(toml::Value::Integer(n)) if (1..=MAX_SEEDS as i64).contains(&n) => Some(n as u64),
            Some(other) => {
                return Err(Error::config(
                    origin,
                    format!(
                        "key `seeds` = {other}: expected a whole number from 1 to {MAX_SEEDS} \
                         (seeds 1 to N)"
                    ),
                ))
            }
        };
        if seeds.is_some() && !kind.seeded {
            return Err(Error::config(
                origin,
                format!(
                    "key `seeds`: kind '{}' reads real files and runs once; remove the key",
                    kind.name
                ),
            ));
        }
        let reproduces = take_string(&mut table, "reproduces", origin)?;
        if let Some(r) = &reproduces {
            if !kind.analyses.contains(&r.as_str()) {
                let known = if kind.analyses.is_empty() {
                    "none".to_string()
                } else {
                    kind.analyses.join(", ")
                };
                return Err(Error::config(
                    origin,
                    format!(
                        "key `reproduces` = '{r}': files of kind '{}' can apply the analysis of: \
                         {known}",
                        kind.name
                    ),
                ));
            }
        }
        let calibrated: Vec<Calibration> = match table.remove("calibrated") {
            None => Vec::new(),
            Some(value) => value.try_into().map_err(|e: toml::de::Error| {
                Error::config(
                    origin,
                    format!(
                        "key `calibrated`: {} (expected [[calibrated]] tables of input, \
                             against and claims)",
                        e.message().trim_end()
                    ),
                )
            })?,
        };
        if !calibrated.is_empty() && reproduces.is_none() {
            return Err(Error::config(
                origin,
                "key `calibrated` names claims, and only a file with `reproduces` has claims",
            ));
        }
        let assumed = super::sensitivity::parse_assumed(table.remove("assumed"), origin)?;
        if !assumed.is_empty() && reproduces.is_none() {
            return Err(Error::config(
                origin,
                "key `assumed` is for the claims' sensitivity, and only a file with \
                 `reproduces` has claims",
            ));
        }
        let header = Header {
            kind: kind.name,
            name,
            title,
            seeds,
            reproduces,
            calibrated,
            assumed,
        };
        let params = (kind.parse)(&header, table, base, origin)?;
        Ok(ExperimentFile { header, params })
    }

    /// Read an experiment file; relative paths in it become relative to its folder.
    pub fn load(path: &Path) -> Result<Self> {
        Self::load_with(path, &[])
    }

    /// [`ExperimentFile::load`] with keys changed first ([`ExperimentFile::parse_with`]).
    pub fn load_with(path: &Path, overrides: &[super::overrides::Override]) -> Result<Self> {
        let text = crate::config_file::read(path)?;
        let base = path.parent().unwrap_or(Path::new("."));
        Self::parse_with(&text, &path.display().to_string(), base, overrides)
    }

    /// The file's kind.
    pub fn kind(&self) -> &'static Kind {
        KINDS
            .iter()
            .find(|k| k.name == self.header.kind)
            .unwrap_or(&KINDS[0])
    }

    /// The file as TOML again (its header, then its kind's keys).
    pub fn to_toml(&self) -> Result<String> {
        let mut table = toml::Table::new();
        let h = &self.header;
        table.insert("kind".into(), h.kind.into());
        table.insert("name".into(), h.name.clone().into());
        table.insert("title".into(), h.title.clone().into());
        if let Some(n) = h.seeds {
            table.insert("seeds".into(), (n as i64).into());
        }
        if let Some(r) = &h.reproduces {
            table.insert("reproduces".into(), r.clone().into());
        }
        if !h.calibrated.is_empty() {
            let list = toml::Value::try_from(&h.calibrated)
                .map_err(|e| Error::config(&h.name, e.to_string()))?;
            table.insert("calibrated".into(), list);
        }
        if !h.assumed.is_empty() {
            let list = toml::Value::try_from(&h.assumed)
                .map_err(|e| Error::config(&h.name, e.to_string()))?;
            table.insert("assumed".into(), list);
        }
        table.extend(self.params.to_toml()?);
        toml::to_string(&table).map_err(|e| Error::config(&h.name, e.to_string()))
    }

    /// The seeds a run with `options` uses (empty: one run with the kind's default seed,
    /// gathered without a `seed` column).
    pub fn seeds(&self, options: &RunOptions) -> Vec<u64> {
        match options.seeds.or(self.header.seeds) {
            Some(n) => (1..=n).collect(),
            None => Vec::new(),
        }
    }

    /// The runs a run with `options` makes: once per seed, or once (no seeds asked for,
    /// or a kind that reads only real files). They are independent of one another.
    pub fn runs(&self, options: &RunOptions) -> Runs {
        let seeds = self.seeds(options);
        if seeds.is_empty() || !self.kind().seeded {
            let seed = seeds
                .first()
                .copied()
                .unwrap_or_else(|| self.params.default_seed());
            return Runs {
                seeds: vec![seed],
                by_seed: false,
            };
        }
        Runs {
            seeds,
            by_seed: true,
        }
    }

    /// One of the [`ExperimentFile::runs`]: the experiment with `seed`.
    pub fn run_seed(&self, seed: u64, options: &RunOptions) -> Result<ExperimentReport> {
        self.run_one(seed, 1, options)
    }

    /// One run of `runs` in all.
    fn run_one(&self, seed: u64, runs: usize, options: &RunOptions) -> Result<ExperimentReport> {
        let context = Context {
            progress: options.progress,
            media_dir: options.media_dir.clone(),
            seed,
            runs,
        };
        let mut report = self.params.run_once(&self.header, &context)?;
        for calibration in &self.header.calibrated {
            report
                .mark_not_testable(&calibration.claims, &calibration.why())
                .map_err(|unknown| {
                    Error::config(
                        &self.header.name,
                        format!(
                            "key `calibrated`: '{unknown}' is not a claim of this reproduction"
                        ),
                    )
                })?;
        }
        Ok(report)
    }

    /// Run the experiment: every one of its [`ExperimentFile::runs`], in order, gathered
    /// into one report.
    pub fn run(&self, options: &RunOptions) -> Result<ExperimentReport> {
        let runs = self.runs(options);
        if !runs.by_seed {
            return self.run_one(runs.seeds[0], 1, options);
        }
        let count = runs.seeds.len();
        let mut reports = Vec::with_capacity(count);
        for seed in runs.seeds {
            reports.push((seed, self.run_one(seed, count, options)?));
        }
        Ok(ExperimentReport::of_seeds(reports))
    }
}

#[cfg(test)]
mod tests;
