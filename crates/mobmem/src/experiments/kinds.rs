//! The kinds of experiment file: what a file's `kind` key may name. A kind is one entry
//! here plus one module whose parameters implement [`super::file::KindParams`]; see
//! `docs/experiment-files.md` for every kind's keys.

use std::path::Path;

use super::file::{parse_params, Context, Experiment, Header};
use super::reproductions::{
    composed, hybrid_cache, ksm, multi_swap, page_protection, selective_page_cache,
};
use super::ExperimentConfig;
use crate::core::registry::Registry;
use crate::report::ExperimentReport;
use crate::{Error, Result};

/// How a kind reads its keys: the file less its [`Header`], the folder relative paths
/// are relative to, and the file's name for errors.
pub type ParseFn = fn(&Header, toml::Table, &Path, &str) -> Result<Box<dyn Experiment>>;

/// A kind of experiment file.
pub struct Kind {
    /// The value of the file's `kind` key.
    pub name: &'static str,
    pub summary: &'static str,
    /// Whether it runs synthetic workloads, so once per seed. A kind that reads only real
    /// files runs once and refuses the `seeds` key.
    pub seeded: bool,
    /// The reproductions whose paper analysis its files may apply (`reproduces`).
    pub analyses: &'static [&'static str],
    /// Read the kind's keys: the file less its [`Header`]; relative paths in them become
    /// relative to the folder given. Most kinds use [`parse_params`] of their struct.
    pub parse: ParseFn,
}

crate::named_entry!(Kind);

/// Every kind; the first is the default (a file without `kind`).
pub static KINDS: Registry<Kind> = Registry::new(
    "experiment kind",
    &[
        Kind {
            name: "cache",
            summary: "buffer-cache policies x workloads x memory sizes x DRAM shares (experiments/reference.toml)",
            seeded: true,
            analyses: &["hybrid-cache"],
            parse: parse_cache,
        },
        Kind {
            name: "swap",
            summary: "swap architectures x NVM sizes on the app-cycling workload",
            seeded: true,
            analyses: &["multi-swap"],
            parse: parse_params::<multi_swap::Params>,
        },
        Kind {
            name: "reclaim",
            summary: "reclaim policies x memory sizes x background transfer rates on the gallery-usb workload",
            seeded: true,
            analyses: &["page-protection"],
            parse: parse_params::<page_protection::Params>,
        },
        Kind {
            name: "fs",
            summary: "write policies and read paths of a compressed flash file system on real media files",
            seeded: false,
            analyses: &["selective-page-cache"],
            parse: parse_params::<selective_page_cache::Params>,
        },
        Kind {
            name: "ksm",
            summary: "KSM pages_to_scan and sleep_millisecs sweeps and app impact on the android population",
            seeded: true,
            analyses: &["ksm"],
            parse: parse_params::<ksm::Params>,
        },
        Kind {
            name: "phone",
            summary: "one simulated phone with all five techniques (experiments/phone.toml): every slot at its mechanism and at its baseline",
            seeded: true,
            analyses: &[],
            parse: composed::parse_phone,
        },
        Kind {
            name: "composed",
            summary: "the ablation on phones: each technique alone, all on, and all on but one",
            seeded: true,
            analyses: &["composed"],
            parse: parse_params::<composed::Params>,
        },
    ],
);

/// The cache kind's parameters: [`ExperimentConfig`], whose `name` and `title` are the
/// header's.
#[derive(Debug)]
struct Cache(ExperimentConfig);

fn parse_cache(
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
        let results = super::run(&config, context.progress)?;
        if header.reproduces.is_some() {
            return hybrid_cache::report(&config, &results);
        }
        let mut report = results.report(results.default_figures(), Vec::new(), Vec::new());
        let mut seeds: Vec<u64> = (config.workloads.iter())
            .filter(|w| w.trace.is_none())
            .map(|w| w.seed.unwrap_or(config.seed))
            .collect();
        seeds.sort_unstable();
        seeds.dedup();
        report.seeds = seeds;
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

/// For kinds' tests: a context of `seed`, no progress shown, no media folder.
#[cfg(test)]
pub(crate) fn with_seed<T>(seed: u64, f: impl FnOnce(&Context) -> T) -> T {
    let progress = |_: usize, _: usize| {};
    f(&Context {
        seed,
        progress: &progress,
        media_dir: None,
    })
}
