//! The papers' experiments, reproduced: each is an experiment file shipped with mobmem
//! plus the figures the paper has and the claims it makes, computed from the results.

pub mod composed;
mod hybrid_cache;
mod ksm;
mod multi_swap;
mod page_protection;
mod selective_page_cache;

use crate::core::registry::Registry;
use crate::experiments::ExperimentConfig;
use crate::report::{Claim, ExperimentReport};
use crate::Result;

/// What a reproduction runs with.
pub struct Context<'a> {
    /// Called with (done, total) as the experiment goes.
    pub progress: &'a (dyn Fn(usize, usize) + Sync),
    /// Folder of the real media and text files (`scripts/make-media.sh` makes it).
    pub media_dir: std::path::PathBuf,
    /// Seed of the synthetic workloads.
    pub seed: u64,
}

/// A reproduction of one paper's experiment.
pub struct Reproduction {
    pub name: &'static str,
    pub summary: &'static str,
    /// One run, with the context's seed.
    pub run: fn(&Context) -> Result<ExperimentReport>,
    /// Whether its workloads are synthetic, so that it runs once per seed (otherwise
    /// once: its inputs are real files).
    pub seeded: bool,
}

crate::named_entry!(Reproduction);

/// Every reproduction, in the order `reproduce all` runs them.
pub static REPRODUCTIONS: Registry<Reproduction> = Registry::new(
    "reproduction",
    &[
    Reproduction {
        name: "hybrid-cache",
        summary: "app-state-aware buffer cache on hybrid DRAM + PCM (Oh, Kang, Lee, Eom, KIISE 2015)",
        run: hybrid_cache::run,
        seeded: true,
    },
    Reproduction {
        name: "multi-swap",
        summary: "multi-swap architectures with NVM + flash swap devices (Bahn, Kim, JIIBC 2023)",
        run: multi_swap::run,
        seeded: true,
    },
    Reproduction {
        name: "page-protection",
        summary: "framework-assisted selective protection of interactive pages from reclaim (FMP; Kim, SNU 2016)",
        run: page_protection::run,
        seeded: true,
    },
    Reproduction {
        name: "selective-page-cache",
        summary: "selective page cache and selective compression on a compressed flash file system (Song, Cha, KIISE)",
        run: selective_page_cache::run,
        seeded: false,
    },
    Reproduction {
        name: "ksm",
        summary: "KSM memory deduplication tuned for Android: pages_to_scan, sleep_millisecs, app impact (Kim, Hong, Shin, SKKU)",
        run: ksm::run,
        seeded: true,
    },
    Reproduction {
        name: "composed",
        summary: "all five techniques on one simulated phone: an ablation of each technique alone, all on, and all on but one",
        run: composed::run,
        seeded: true,
    },
    ],
);

/// Seeds `reproduce` runs by default: 1 to 5.
pub const DEFAULT_SEEDS: u64 = 5;

impl Reproduction {
    /// Run it over `seeds` (each in turn; a reproduction that is not seeded runs once,
    /// with the first) and gather the runs into one report.
    pub fn run_seeds(
        &self,
        progress: &(dyn Fn(usize, usize) + Sync),
        media_dir: &std::path::Path,
        seeds: &[u64],
    ) -> Result<ExperimentReport> {
        if seeds.is_empty() {
            return Err(crate::Error::config(
                "reproduce",
                "at least one seed is needed",
            ));
        }
        let seeds = if self.seeded { seeds } else { &seeds[..1] };
        let mut runs = Vec::with_capacity(seeds.len());
        for &seed in seeds {
            let context = Context {
                progress,
                media_dir: media_dir.to_path_buf(),
                seed,
            };
            runs.push((seed, (self.run)(&context)?));
        }
        if !self.seeded {
            if let Some((_, report)) = runs.pop() {
                return Ok(report);
            }
        }
        Ok(ExperimentReport::of_seeds(runs))
    }
}

/// The reproduction called `name`; an unknown name lists the known ones and `all`.
pub fn find(name: &str) -> Result<&'static Reproduction> {
    REPRODUCTIONS
        .iter()
        .find(|r| r.name == name)
        .ok_or_else(|| REPRODUCTIONS.unknown(name, &["all"]))
}

/// Parse an experiment file shipped with mobmem.
pub fn shipped_config(name: &str, text: &str) -> Result<ExperimentConfig> {
    ExperimentConfig::parse(text, &format!("experiments/{name}.toml"))
}

/// A claim that a technique reduces something by the paper's percentage (a claim of a
/// number: see [`crate::report::claims::RULE`]).
pub fn reduction_claim(
    id: String,
    claim: String,
    paper_percent: f64,
    measured_percent: f64,
) -> Claim {
    Claim::value(id, claim, paper_percent, measured_percent, "%")
}

/// `f` run with a context of seed 1, no progress shown and no media folder (tests of
/// reproductions that read no media).
#[cfg(test)]
pub(crate) fn with_seed_one<T>(f: impl FnOnce(&Context) -> T) -> T {
    let progress = |_: usize, _: usize| {};
    f(&Context {
        seed: 1,
        progress: &progress,
        media_dir: std::path::PathBuf::new(),
    })
}

/// Checks every reproduction's report should pass: each claim's explanation template
/// and each finding names only evidence it has (no `{name}` is left once filled in), and
/// every report figure the paper-figure list names exists.
#[cfg(test)]
pub(crate) fn check_report(report: &ExperimentReport) {
    use crate::report::claims::{summarize, summarize_findings};
    use crate::report::FigureStatus;
    for claim in report.seed_claims.iter().flatten() {
        // Filled in as if the claim were not reproduced, whatever its verdict.
        let mut shown = claim.clone();
        shown.measured = f64::NAN;
        let filled = summarize(&[vec![shown]])[0].explanation.clone();
        if let Some(text) = filled {
            assert!(!text.contains('{'), "{}: {text}", claim.id);
        }
        assert!(
            !claim.explain.is_empty() || claim.expect != crate::report::Expect::Value,
            "claim {} of a number has no explanation",
            claim.id
        );
    }
    for finding in summarize_findings(&report.seed_findings) {
        assert!(!finding.text.contains('{'), "{}", finding.text);
    }
    let ids: Vec<&str> = report.figures.iter().map(|f| f.id.as_str()).collect();
    for p in &report.paper_figures {
        if let FigureStatus::Reproduced { figures } | FigureStatus::Proxy { figures, .. } =
            &p.status
        {
            assert!(!figures.is_empty(), "{}", p.paper);
            for f in figures {
                assert!(ids.contains(&f.as_str()), "{}: no figure {f}", p.paper);
            }
        }
    }
}
