//! The papers' experiments, reproduced: each is an experiment file shipped with mobmem
//! plus the figures the paper has and the claims it makes, computed from the results.

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
}

/// A reproduction of one paper's experiment.
pub struct Reproduction {
    pub name: &'static str,
    pub summary: &'static str,
    pub run: fn(&Context) -> Result<ExperimentReport>,
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
    },
    Reproduction {
        name: "multi-swap",
        summary: "multi-swap architectures with NVM + flash swap devices (Bahn, Kim, JIIBC 2023)",
        run: multi_swap::run,
    },
    Reproduction {
        name: "page-protection",
        summary: "framework-assisted selective protection of interactive pages from reclaim (FMP; Kim, SNU 2016)",
        run: page_protection::run,
    },
    Reproduction {
        name: "selective-page-cache",
        summary: "selective page cache and selective compression on a compressed flash file system (Song, Cha, KIISE)",
        run: selective_page_cache::run,
    },
    Reproduction {
        name: "ksm",
        summary: "KSM memory deduplication tuned for Android: pages_to_scan, sleep_millisecs, app impact (Kim, Hong, Shin, SKKU)",
        run: ksm::run,
    },
    ],
);

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
