//! The papers' experiments, reproduced: each is an experiment file shipped with mobmem
//! (`experiments/NAME.toml`, embedded here, with `reproduces = "NAME"`) whose kind's
//! module holds the figures the paper has and the claims it makes, computed from the
//! results. `mobmem reproduce NAME` runs the shipped file as `mobmem run` runs any file.

pub mod composed;
pub mod hybrid_cache;
pub mod ksm;
pub mod multi_swap;
pub mod page_protection;
pub mod pixel_traces;
pub mod selective_page_cache;

use std::path::Path;

use crate::core::registry::Registry;
use crate::experiments::file::ExperimentFile;
use crate::report::Claim;
use crate::Result;

pub use crate::experiments::file::Context;

crate::registry_entry! {
    /// A reproduction of one paper's experiment: a shipped experiment file.
    pub struct Reproduction {
        /// The text of `experiments/<name>.toml`.
        pub file: &'static str,
    }
}

/// A reproduction shipped as `experiments/NAME.toml`, embedded.
macro_rules! shipped {
    ($name:literal, $summary:literal) => {
        Reproduction {
            name: $name,
            summary: $summary,
            file: include_str!(concat!("../../../../../experiments/", $name, ".toml")),
        }
    };
}

/// Every reproduction, in the order `reproduce all` runs them.
pub static REPRODUCTIONS: Registry<Reproduction> = Registry::new(
    "reproduction",
    &[
        shipped!(
            "hybrid-cache",
            "app-state-aware buffer cache on hybrid DRAM + PCM (Oh, Kang, Lee, Eom, KIISE 2015)"
        ),
        shipped!(
            "multi-swap",
            "multi-swap architectures with NVM + flash swap devices (Bahn, Kim, JIIBC 2023)"
        ),
        shipped!(
            "page-protection",
            "framework-assisted selective protection of interactive pages from reclaim (FMP; Kim, SNU 2016)"
        ),
        shipped!(
            "selective-page-cache",
            "selective page cache and selective compression on a compressed flash file system (Song, Cha, KIISE)"
        ),
        shipped!(
            "ksm",
            "KSM memory deduplication tuned for Android: pages_to_scan, sleep_millisecs, app impact (Kim, Hong, Shin, SKKU)"
        ),
        shipped!(
            "composed",
            "all five techniques on one simulated phone: each technique alone, all on, and all on but one"
        ),
    ],
);

/// Seeds `reproduce` runs by default: 1 to 5 (the shipped files' `seeds`).
pub const DEFAULT_SEEDS: u64 = 5;

impl Reproduction {
    /// The shipped file, read (its relative paths, if any, are relative to the current
    /// folder).
    pub fn experiment(&self) -> Result<ExperimentFile> {
        self.experiment_with(&[])
    }

    /// The shipped file with keys changed (`reproduce NAME --set KEY=VALUE`).
    pub fn experiment_with(
        &self,
        overrides: &[super::overrides::Override],
    ) -> Result<ExperimentFile> {
        ExperimentFile::parse_with(
            self.file,
            &format!("experiments/{}.toml", self.name),
            Path::new("."),
            overrides,
        )
    }
}

/// The reproduction called `name`; an unknown name lists the known ones and `all`.
pub fn find(name: &str) -> Result<&'static Reproduction> {
    REPRODUCTIONS
        .iter()
        .find(|r| r.name == name)
        .ok_or_else(|| REPRODUCTIONS.unknown(name, &["all"]))
}

/// Claims whose value could not be computed because the experiment's grid lacks a point
/// they need (an edited copy of a shipped file) say so: not testable, with the reason. A
/// shipped file's grid has every point, so its claims are unchanged.
pub fn grid_lacks(claims: Vec<Claim>) -> Vec<Claim> {
    claims
        .into_iter()
        .map(|claim| {
            if claim.measured.is_finite()
                || matches!(claim.expect, crate::report::Expect::NotTestable { .. })
            {
                claim
            } else {
                claim.not_testable(
                    "this experiment's grid lacks a point the claim needs (its value could not \
                     be computed); the shipped file has every point",
                )
            }
        })
        .collect()
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

/// The report of one run, with seed 1, of `params` under the header of the shipped
/// reproduction `name`. For the kinds' tests.
#[cfg(test)]
pub(crate) fn run_shipped(
    name: &str,
    params: &impl crate::experiments::file::Experiment,
) -> crate::report::ExperimentReport {
    let header = find(name).unwrap().experiment().unwrap().header;
    crate::experiments::kinds::with_seed(1, |context| params.run_once(&header, context).unwrap())
}

/// Checks that `report` has `claims` claims, `findings` findings and `paper_figures`
/// paper figures, and passes [`check_report`].
#[cfg(test)]
pub(crate) fn check_report_of_size(
    report: &crate::report::ExperimentReport,
    claims: usize,
    findings: usize,
    paper_figures: usize,
) {
    assert_eq!(report.claims.len(), claims);
    assert_eq!(report.findings.len(), findings);
    assert_eq!(report.paper_figures.len(), paper_figures);
    check_report(report);
}

/// The figure `name` of `claim`'s evidence. For the kinds' tests.
#[cfg(test)]
pub(crate) fn evidence(claim: &Claim, name: &str) -> f64 {
    claim
        .evidence
        .iter()
        .find(|(n, _)| n == name)
        .unwrap_or_else(|| panic!("{}: no evidence {name}", claim.id))
        .1
}

/// Whether two computed figures are equal but for rounding. For the kinds' tests.
#[cfg(test)]
pub(crate) fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-9
}

/// Checks every reproduction's report should pass: each claim's explanation template
/// and each finding names only evidence it has (no `{name}` is left once filled in), and
/// every report figure the paper-figure list names exists.
#[cfg(test)]
pub(crate) fn check_report(report: &crate::report::ExperimentReport) {
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
        if !matches!(p.status, FigureStatus::Missing { .. }) {
            assert!(!p.figure_ids().is_empty(), "{}", p.paper);
        }
        for f in p.figure_ids() {
            assert!(ids.contains(&f.as_str()), "{}: no figure {f}", p.paper);
        }
        // A drawn figure is judged by its shape, on figures the report has.
        let drawn = matches!(
            p.status,
            FigureStatus::Reproduced { .. } | FigureStatus::ShapeDiffers { .. }
        );
        assert_eq!(drawn, p.shape.is_some(), "{}", p.paper);
        for f in p.shape.iter().flat_map(|s| s.figures()) {
            assert!(
                ids.contains(&f),
                "{}: its shape reads no figure {f}",
                p.paper
            );
        }
    }
}
