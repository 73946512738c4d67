//! The papers' experiments, reproduced: each is an experiment file shipped with mobmem
//! plus the figures the paper has and the claims it makes, computed from the results.

mod hybrid_cache;

use crate::experiments::{self, ExperimentConfig, Results};
use crate::report::{default_figures, Claim, ExperimentReport, Figure};
use crate::{Error, Result};

/// A reproduction of one paper's experiment.
pub struct Reproduction {
    pub name: &'static str,
    pub summary: &'static str,
    /// The experiment file (also in `experiments/NAME.toml`).
    pub config_text: &'static str,
    /// Figures, claims and notes from the results.
    pub analyze: fn(&Results) -> Analysis,
}

/// What a reproduction makes of its results.
#[derive(Debug, Clone, Default)]
pub struct Analysis {
    pub figures: Vec<Figure>,
    pub claims: Vec<Claim>,
    pub notes: Vec<String>,
}

pub static REPRODUCTIONS: &[Reproduction] = &[Reproduction {
    name: "hybrid-cache",
    summary: "app-state-aware buffer cache on hybrid DRAM + PCM (Oh, Kang, Lee, Eom, KIISE 2015)",
    config_text: include_str!("../../../../../experiments/hybrid-cache.toml"),
    analyze: hybrid_cache::analyze,
}];

pub fn find(name: &str) -> Result<&'static Reproduction> {
    REPRODUCTIONS
        .iter()
        .find(|r| r.name == name)
        .ok_or_else(|| Error::Unknown {
            what: "reproduction",
            name: name.to_string(),
            known: REPRODUCTIONS
                .iter()
                .map(|r| r.name.to_string())
                .chain(["all".to_string()])
                .collect(),
        })
}

impl Reproduction {
    pub fn config(&self) -> Result<ExperimentConfig> {
        ExperimentConfig::parse(self.config_text, &format!("experiments/{}.toml", self.name))
    }

    /// Run the experiment and analyze it.
    pub fn run(&self, progress: &(dyn Fn(usize, usize) + Sync)) -> Result<ExperimentReport> {
        let results = experiments::run(&self.config()?, progress)?;
        Ok(self.report(results))
    }

    pub fn report(&self, results: Results) -> ExperimentReport {
        let analysis = (self.analyze)(&results);
        ExperimentReport {
            figures: if analysis.figures.is_empty() {
                default_figures(&results)
            } else {
                analysis.figures
            },
            claims: analysis.claims,
            notes: analysis.notes,
            results,
        }
    }
}

/// "Same direction, at least half the paper's size": the rule for claims that a policy
/// reduces something by some percentage.
pub fn reduction_claim(
    id: String,
    claim: String,
    paper_percent: f64,
    measured_percent: f64,
) -> Claim {
    Claim {
        id,
        claim,
        paper: paper_percent,
        measured: measured_percent,
        unit: "%".into(),
        criterion: format!(
            "a reduction of at least half the paper's ({:.1}%)",
            paper_percent / 2.0
        ),
        holds: measured_percent.is_finite() && measured_percent >= paper_percent / 2.0,
    }
}
