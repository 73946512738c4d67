//! Experiment files (TOML). `experiments/reference.toml` lists every key with its default;
//! unknown keys are errors.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::devices::{CostModel, Devices, EvictionCharge};
use crate::mm::placement::clock::ClockSpec;
use crate::mm::placement::find_policy;
use crate::report;
use crate::{Error, Result};

/// The longest experiment or workload name, in bytes: each names files of the report
/// (with suffixes such as `-fg-hit-ratio-dram-0.05.svg`), see [`report::safe_file_name`].
pub const MAX_NAME_BYTES: usize = 64;

/// The largest `sweep.memory_fraction`: from 1 on every page of the footprint fits, so
/// larger memories add nothing but a plot axis too wide to draw.
pub const MAX_MEMORY_FRACTION: f64 = 1000.0;

/// A whole experiment: workloads x policies x memory sizes x DRAM shares.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExperimentConfig {
    /// Names the output folder and the rows of the results.
    pub name: String,
    #[serde(default)]
    pub title: String,
    /// Seed of generated workloads that do not set their own.
    #[serde(default = "default_seed")]
    pub seed: u64,
    #[serde(rename = "workload")]
    pub workloads: Vec<WorkloadSpec>,
    pub sweep: Sweep,
    #[serde(default)]
    pub cost: CostSpec,
    #[serde(default)]
    pub devices: Devices,
    /// Run every point's requests on the machine's clock too (`[clock]`; absent: not).
    #[serde(default)]
    pub clock: Option<ClockSpec>,
}

fn default_seed() -> u64 {
    1
}

/// Where a workload's trace comes from: a built-in preset, generated, or a file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WorkloadSpec {
    /// Label in results and plots.
    pub name: String,
    /// A synthetic workload preset (`mobmem gen --list`).
    #[serde(default)]
    pub preset: Option<String>,
    /// A workload config file (TOML, see `docs/workloads.md`), generated like a preset;
    /// relative paths are relative to the experiment file.
    #[serde(default)]
    pub config: Option<PathBuf>,
    /// A trace file; relative paths are relative to the experiment file.
    #[serde(default)]
    pub trace: Option<PathBuf>,
    /// Format of `trace` (as `--format` takes it); detected from the file name when
    /// absent.
    #[serde(default)]
    pub format: Option<String>,
    /// A column spec for a text trace of any layout (as `--columns` takes it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub columns: Option<String>,
    /// Seed of a preset; the experiment's seed when absent.
    #[serde(default)]
    pub seed: Option<u64>,
    /// Multiplies a preset's length (and footprint where the preset scales it).
    #[serde(default)]
    pub scale: Option<f64>,
}

impl WorkloadSpec {
    /// The format to read `trace` with (`format` and `columns` together); `None` to tell
    /// it from the file name.
    pub fn trace_format(&self) -> Result<Option<crate::trace::Format>> {
        let format = self.format.as_deref().map(str::parse).transpose()?;
        crate::trace::Format::with_columns(format, self.columns.as_deref())
    }
}

/// The grid of points to run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Sweep {
    /// Policy names from the registry (`mobmem policies`).
    pub policies: Vec<String>,
    /// Memory sizes as fractions of each workload's footprint (distinct pages).
    #[serde(default)]
    pub memory_fraction: Vec<f64>,
    /// Memory sizes in pages (instead of `memory_fraction`).
    #[serde(default)]
    pub memory_pages: Vec<u64>,
    /// Share of memory that is DRAM, for hybrid policies (single-tier policies use all
    /// memory as one tier and ignore it).
    #[serde(default = "default_dram_fraction")]
    pub dram_fraction: Vec<f64>,
}

fn default_dram_fraction() -> Vec<f64> {
    vec![0.05]
}

/// The cost model: a named base with any field overridden.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CostSpec {
    #[serde(default = "default_cost_model")]
    pub model: String,
    pub dram_read: Option<f64>,
    pub dram_write: Option<f64>,
    pub pcm_read: Option<f64>,
    pub pcm_write: Option<f64>,
    pub storage_read: Option<f64>,
    pub eviction: Option<f64>,
    pub writeback: Option<f64>,
    pub eviction_charge: Option<EvictionCharge>,
}

fn default_cost_model() -> String {
    "paper-relative".into()
}

impl Default for CostSpec {
    fn default() -> Self {
        CostSpec {
            model: default_cost_model(),
            dram_read: None,
            dram_write: None,
            pcm_read: None,
            pcm_write: None,
            storage_read: None,
            eviction: None,
            writeback: None,
            eviction_charge: None,
        }
    }
}

impl CostSpec {
    pub fn resolve(&self) -> Result<CostModel> {
        let mut model = CostModel::named(&self.model)?;
        let overrides = [
            (&mut model.dram_read, self.dram_read),
            (&mut model.dram_write, self.dram_write),
            (&mut model.pcm_read, self.pcm_read),
            (&mut model.pcm_write, self.pcm_write),
            (&mut model.storage_read, self.storage_read),
            (&mut model.eviction, self.eviction),
            (&mut model.writeback, self.writeback),
        ];
        for (field, value) in overrides {
            if let Some(v) = value {
                *field = v;
            }
        }
        if let Some(charge) = self.eviction_charge {
            model.eviction_charge = charge;
        }
        model.validate()?;
        Ok(model)
    }
}

impl ExperimentConfig {
    /// How many points one run of the grid makes: per workload, per policy, per memory
    /// size, and for hybrid policies per DRAM share.
    pub fn point_count(&self) -> u128 {
        let sweep = &self.sweep;
        let sizes = if sweep.memory_pages.is_empty() {
            sweep.memory_fraction.len()
        } else {
            sweep.memory_pages.len()
        } as u128;
        let per_workload: u128 = (sweep.policies.iter())
            .map(|p| match find_policy(p).map(|info| info.family) {
                Ok(crate::mm::placement::Family::Hybrid) => {
                    sizes * sweep.dram_fraction.len() as u128
                }
                _ => sizes,
            })
            .sum();
        per_workload.saturating_mul(self.workloads.len() as u128)
    }

    /// Parse an experiment file's text; `origin` names it in errors.
    pub fn parse(text: &str, origin: &str) -> Result<Self> {
        let config: ExperimentConfig = toml::from_str(text)
            .map_err(|e| Error::config(origin, e.to_string().trim_end().to_string()))?;
        config.validate(origin)?;
        Ok(config)
    }

    /// Parse an experiment given as JSON with the same keys as the TOML file; `origin`
    /// names it in errors. Validated exactly like a file.
    pub fn parse_json(text: &str, origin: &str) -> Result<Self> {
        let config: ExperimentConfig =
            serde_json::from_str(text).map_err(|e| Error::config(origin, e.to_string()))?;
        config.validate(origin)?;
        Ok(config)
    }

    /// Read an experiment file; relative trace paths become relative to its folder.
    pub fn load(path: &Path) -> Result<Self> {
        let text = crate::config_file::read(path)?;
        let mut config = Self::parse(&text, &path.display().to_string())?;
        config.resolve_paths(path.parent().unwrap_or(Path::new(".")));
        Ok(config)
    }

    /// Make relative trace and workload-config paths relative to `base`. URLs are left as
    /// they are: whoever reads them (the Python package, through fsspec) resolves them.
    pub fn resolve_paths(&mut self, base: &Path) {
        for w in &mut self.workloads {
            for path in [&mut w.trace, &mut w.config].into_iter().flatten() {
                if path.is_relative() && !is_url(path) {
                    *path = base.join(&*path);
                }
            }
        }
    }

    pub fn validate(&self, origin: &str) -> Result<()> {
        let bad = |message: String| Err(Error::config(origin, message));
        check_name(&self.name, origin)?;
        if self.workloads.is_empty() {
            return bad("needs at least one [[workload]]".into());
        }
        for (i, w) in self.workloads.iter().enumerate() {
            if w.name.len() > MAX_NAME_BYTES || report::safe_file_name(&w.name).is_err() {
                return bad(format!(
                    "workload {}, key `name` = '{}': must be 1 to {MAX_NAME_BYTES} ASCII \
                     letters, digits, '-', '_', '.' or '+', not starting with '.' (it names \
                     the report's files)",
                    i + 1,
                    w.name.escape_debug()
                ));
            }
            let sources = [w.preset.is_some(), w.config.is_some(), w.trace.is_some()];
            if sources.iter().filter(|&&given| given).count() != 1 {
                return bad(format!(
                    "workload {} ('{}'): give exactly one of preset, config or trace",
                    i + 1,
                    w.name
                ));
            }
            if w.trace.is_some() && (w.seed.is_some() || w.scale.is_some()) {
                return bad(format!(
                    "workload '{}': seed and scale apply to generated workloads only",
                    w.name
                ));
            }
            if let Some(s) = w.scale {
                if !(s.is_finite() && s > 0.0) {
                    return bad(format!("workload '{}': scale must be > 0", w.name));
                }
            }
            w.trace_format()?;
            if self.workloads[..i].iter().any(|o| o.name == w.name) {
                return bad(format!("two workloads are named '{}'", w.name));
            }
        }
        if let Some(clock) = &self.clock {
            clock
                .setup()
                .map_err(|e| Error::config(origin, e.to_string()))?;
        }
        let s = &self.sweep;
        if s.policies.is_empty() {
            return bad("sweep.policies is empty".into());
        }
        for p in &s.policies {
            find_policy(p)?;
        }
        if s.memory_fraction.is_empty() == s.memory_pages.is_empty() {
            return bad("give exactly one of sweep.memory_fraction or sweep.memory_pages".into());
        }
        if let Some(f) = s
            .memory_fraction
            .iter()
            .find(|f| !(f.is_finite() && **f > 0.0 && **f <= MAX_MEMORY_FRACTION))
        {
            return bad(format!(
                "sweep.memory_fraction {f:e} must be > 0 and at most {MAX_MEMORY_FRACTION} \
                 (from 1 on, every page of the footprint fits)"
            ));
        }
        if s.memory_pages.contains(&0) {
            return bad("sweep.memory_pages must be > 0".into());
        }
        if s.dram_fraction.is_empty() {
            return bad("sweep.dram_fraction is empty".into());
        }
        if let Some(f) = s
            .dram_fraction
            .iter()
            .find(|f| !(f.is_finite() && **f > 0.0 && **f < 1.0))
        {
            return bad(format!(
                "sweep.dram_fraction {f} must be between 0 and 1 (exclusive)"
            ));
        }
        self.cost.resolve()?;
        self.devices.validate()?;
        Ok(())
    }
}

/// Check an experiment's `name`: 1 to [`MAX_NAME_BYTES`] letters, digits, '-' or '_' (it
/// names the report's folder).
pub fn check_name(name: &str, origin: &str) -> Result<()> {
    if name.is_empty()
        || name.len() > MAX_NAME_BYTES
        || !name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
    {
        return Err(Error::config(
            origin,
            format!(
                "key `name` = '{}': must be 1 to {MAX_NAME_BYTES} letters, digits, '-' or '_' \
                 (it names the report's folder)",
                name.escape_debug()
            ),
        ));
    }
    Ok(())
}

/// Whether a path is a URL (`scheme://...`) rather than a file on this machine.
pub fn is_url(path: &Path) -> bool {
    let Some(text) = path.to_str() else {
        return false;
    };
    match text.split_once("://") {
        Some((scheme, _)) => {
            scheme.len() > 1
                && scheme.starts_with(|c: char| c.is_ascii_alphabetic())
                && scheme
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c))
        }
        None => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MINIMAL: &str = r#"
name = "t"
[[workload]]
name = "w"
preset = "chrome-push"
[sweep]
policies = ["lru"]
memory_fraction = [0.5]
"#;

    #[test]
    fn minimal_file_gets_defaults() {
        let c = ExperimentConfig::parse(MINIMAL, "t.toml").unwrap();
        assert_eq!(c.seed, 1);
        assert_eq!(c.sweep.dram_fraction, vec![0.05]);
        assert_eq!(c.cost.resolve().unwrap().pcm_write, 50.0);
    }

    #[test]
    fn unknown_keys_and_names_are_errors() {
        let typo = MINIMAL.replace("policies", "policy");
        let err = ExperimentConfig::parse(&typo, "t.toml")
            .unwrap_err()
            .to_string();
        assert!(err.contains("t.toml") && err.contains("policy"), "{err}");
        let unknown = MINIMAL.replace("\"lru\"", "\"lruu\"");
        let err = ExperimentConfig::parse(&unknown, "t.toml")
            .unwrap_err()
            .to_string();
        assert!(err.contains("unknown policy 'lruu'"), "{err}");
        let both = MINIMAL.replace(
            "memory_fraction = [0.5]",
            "memory_fraction = [0.5]\nmemory_pages = [4]",
        );
        assert!(ExperimentConfig::parse(&both, "t.toml").is_err());
        for fraction in ["1e308", "0", "-1", "1000.5"] {
            let wide = MINIMAL.replace(
                "memory_fraction = [0.5]",
                &format!("memory_fraction = [0.5, {fraction}]"),
            );
            let err = ExperimentConfig::parse(&wide, "t.toml")
                .unwrap_err()
                .to_string();
            assert!(err.contains("sweep.memory_fraction"), "{fraction}: {err}");
        }
    }

    #[test]
    fn reference_file_parses_and_matches_defaults() {
        let text = include_str!("../../../../experiments/reference.toml");
        let c = ExperimentConfig::parse(text, "reference.toml").unwrap();
        assert_eq!(c.cost.resolve().unwrap(), CostModel::paper_relative());
        assert_eq!(c.devices, Devices::default());
        assert_eq!(c.sweep.dram_fraction, default_dram_fraction());
    }

    #[test]
    fn names_that_would_make_paths_are_refused_naming_the_file_and_key() {
        for bad in ["../../escaped", "/abs/w", "..", ".w", "a/b", "a b", ""] {
            let text = MINIMAL.replace("name = \"w\"", &format!("name = {bad:?}"));
            let err = ExperimentConfig::parse(&text, "t.toml")
                .unwrap_err()
                .to_string();
            assert!(
                err.starts_with("t.toml: workload 1, key `name`"),
                "{bad}: {err}"
            );
        }
        let long = MINIMAL.replace("name = \"w\"", &format!("name = \"{}\"", "w".repeat(65)));
        assert!(ExperimentConfig::parse(&long, "t.toml").is_err());
        let err = ExperimentConfig::parse(&MINIMAL.replace("\"t\"", "\"../t\""), "t.toml")
            .unwrap_err()
            .to_string();
        assert!(err.starts_with("t.toml: key `name` = '../t'"), "{err}");
        let fine = MINIMAL.replace("name = \"w\"", "name = \"OLTP.lis_1+x-y\"");
        assert!(ExperimentConfig::parse(&fine, "t.toml").is_ok());
    }

    #[test]
    fn each_workload_has_exactly_one_source() {
        let config = MINIMAL.replace("preset = \"chrome-push\"", "config = \"w.toml\"");
        assert!(ExperimentConfig::parse(&config, "t.toml").is_ok());
        let two = MINIMAL.replace(
            "preset = \"chrome-push\"",
            "preset = \"chrome-push\"\ntrace = \"x.mmt\"",
        );
        let err = ExperimentConfig::parse(&two, "t.toml")
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("exactly one of preset, config or trace"),
            "{err}"
        );
    }

    #[test]
    fn json_parses_like_toml() {
        let from_toml = ExperimentConfig::parse(MINIMAL, "t.toml").unwrap();
        let json = serde_json::to_string(&from_toml).unwrap();
        assert_eq!(
            ExperimentConfig::parse_json(&json, "t.json").unwrap(),
            from_toml
        );
        let typo = json.replace("\"policies\"", "\"policy\"");
        let err = ExperimentConfig::parse_json(&typo, "t.json")
            .unwrap_err()
            .to_string();
        assert!(err.starts_with("t.json: unknown field `policy`"), "{err}");
        let unknown = json.replace("\"lru\"", "\"lruu\"");
        let err = ExperimentConfig::parse_json(&unknown, "t.json")
            .unwrap_err()
            .to_string();
        assert!(err.contains("unknown policy 'lruu'"), "{err}");
    }

    #[test]
    fn relative_paths_follow_the_base_and_urls_stay() {
        let text = r#"
name = "t"
[[workload]]
name = "local"
trace = "traces/a.mmt"
[[workload]]
name = "remote"
trace = "s3://bucket/b.mmt"
[sweep]
policies = ["lru"]
memory_pages = [4]
"#;
        let mut c = ExperimentConfig::parse(text, "t.toml").unwrap();
        c.resolve_paths(Path::new("/data"));
        assert_eq!(
            c.workloads[0].trace.as_deref(),
            Some(Path::new("/data/traces/a.mmt"))
        );
        assert_eq!(
            c.workloads[1].trace.as_deref(),
            Some(Path::new("s3://bucket/b.mmt"))
        );
    }

    #[test]
    fn urls_are_told_from_paths() {
        for url in ["s3://b/k.mmt", "file:///tmp/x.csv", "gcs+x://a"] {
            assert!(is_url(Path::new(url)), "{url}");
        }
        for path in ["a/b.mmt", "/abs/x.csv", "C://x", "://x", "a b://c"] {
            assert!(!is_url(Path::new(path)), "{path}");
        }
    }
}
