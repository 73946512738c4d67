//! `hybrid-cache`: SPEC.md section 1, the app-state-aware buffer cache on DRAM + PCM.
//!
//! Figures per workload, as in the paper: total hit ratio, foreground hit ratio,
//! foreground elapsed time normalized to LRU, energy normalized to LRU; plus PCM writes.
//! Claims: foreground elapsed time -58% (chrome-push) and -73% (app-switching) on
//! average versus LRU; energy -22% and -23%; hit ratios never below LRU's or 2Q's;
//! foreground hit ratio up to 3 points above the total.

use super::{reduction_claim, shipped_config, Context};
use crate::core::stats::Stats;
use crate::experiments::{self, Results};
use crate::report::{Claim, ExperimentReport, Figure};
use crate::Result;

/// The experiment file (also `experiments/hybrid-cache.toml`).
pub const CONFIG: &str = include_str!("../../../../../experiments/hybrid-cache.toml");

pub fn run(context: &Context) -> Result<ExperimentReport> {
    let mut config = shipped_config("hybrid-cache", CONFIG)?;
    config.seed = context.seed;
    let results = experiments::run(&config, context.progress)?;
    let (figures, claims, notes) = analyze(&results);
    Ok(results.report(figures, claims, notes))
}

const PROPOSED: &str = "app-aware";
const LRU: &str = "hybrid-lru";
const TWO_Q: &str = "hybrid-2q";

/// The paper's averages per trace: (foreground time reduction %, energy reduction %).
fn paper_numbers(workload: &str) -> Option<(f64, f64)> {
    match workload {
        "chrome-push" => Some((58.0, 22.0)),
        "app-switching" => Some((73.0, 23.0)),
        _ => None,
    }
}

/// Mean over memory sizes of 1 - proposed/LRU for a metric, in percent.
fn mean_reduction(results: &Results, workload: &str, metric: &str) -> f64 {
    let lru = results.series(workload, LRU);
    let proposed = results.series(workload, PROPOSED);
    let ratios: Vec<f64> = proposed
        .iter()
        .filter_map(|p| {
            let base = lru
                .iter()
                .find(|l| l.point.memory_pages == p.point.memory_pages)?;
            let b = base.metrics.value(metric)?;
            let v = p.metrics.value(metric)?;
            (b > 0.0).then(|| 1.0 - v / b)
        })
        .collect();
    if ratios.is_empty() {
        f64::NAN
    } else {
        100.0 * ratios.iter().sum::<f64>() / ratios.len() as f64
    }
}

/// Smallest (proposed - baseline) hit ratio gap, in points, over memory sizes and both
/// hit ratios (total and foreground).
fn worst_hit_ratio_gap(results: &Results, workload: &str, baseline: &str) -> f64 {
    let proposed = results.series(workload, PROPOSED);
    let mut worst = f64::INFINITY;
    for b in results.series(workload, baseline) {
        if let Some(p) = proposed
            .iter()
            .find(|p| p.point.memory_pages == b.point.memory_pages)
        {
            worst = worst
                .min(p.metrics.hit_ratio() - b.metrics.hit_ratio())
                .min(p.metrics.fg_hit_ratio() - b.metrics.fg_hit_ratio());
        }
    }
    100.0 * worst
}

/// Figures, claims and notes of the results.
pub fn analyze(results: &Results) -> (Vec<Figure>, Vec<Claim>, Vec<String>) {
    let mut figures = Vec::new();
    let mut claims = Vec::new();
    for w in &results.workloads {
        let name = &w.name;
        let fig = |id: &str, title: &str, metric: &str, y: &str, normalize: bool| Figure {
            id: format!("{name}-{id}"),
            normalize_to: normalize.then(|| LRU.to_string()),
            ..results.figure(name, None, metric, title, y)
        };
        figures.push(fig(
            "hit-ratio",
            "(a) total hit ratio",
            "hit_ratio",
            "hit ratio",
            false,
        ));
        figures.push(fig(
            "fg-hit-ratio",
            "(b) foreground hit ratio",
            "fg_hit_ratio",
            "foreground hit ratio",
            false,
        ));
        figures.push(fig(
            "fg-time",
            "(c) foreground elapsed time / LRU",
            "fg_time",
            "normalized to hybrid-lru",
            true,
        ));
        figures.push(fig(
            "energy",
            "energy / LRU",
            "energy_nj",
            "normalized to hybrid-lru",
            true,
        ));
        figures.push(fig(
            "pcm-writes",
            "PCM writes",
            "pcm_writes",
            "page writes to PCM",
            false,
        ));

        let Some((paper_time, paper_energy)) = paper_numbers(name) else {
            continue;
        };
        claims.push(reduction_claim(
            format!("{name}-fg-time"),
            format!("{name}: app-aware cuts foreground elapsed time versus LRU by {paper_time}% on average over memory sizes"),
            paper_time,
            mean_reduction(results, name, "fg_time"),
        ));
        claims.push(reduction_claim(
            format!("{name}-energy"),
            format!("{name}: app-aware cuts memory energy versus LRU by {paper_energy}% on average over memory sizes"),
            paper_energy,
            mean_reduction(results, name, "energy_nj"),
        ));
        for (baseline, label) in [(LRU, "LRU"), (TWO_Q, "2Q")] {
            let gap = worst_hit_ratio_gap(results, name, baseline);
            claims.push(Claim::at_least(
                format!("{name}-hit-ratio-never-below-{}", label.to_lowercase()),
                format!(
                    "{name}: app-aware's total and foreground hit ratios are never below {label}'s at any memory size"
                ),
                0.0,
                gap,
                "points (worst gap)",
            ));
        }
        let fg_above = results
            .series(name, PROPOSED)
            .iter()
            .map(|r| 100.0 * (r.metrics.fg_hit_ratio() - r.metrics.hit_ratio()))
            .fold(f64::NEG_INFINITY, f64::max);
        claims.push(Claim::value(
            format!("{name}-fg-above-total"),
            format!("{name}: app-aware's foreground hit ratio is up to 3 points above its total hit ratio"),
            3.0,
            fg_above,
            "points (largest gap)",
        ));
    }
    (
        figures,
        claims,
        vec![
            "Workloads are synthetic models of the paper's two Nexus 7 traces (which were never published): \
chrome-push (a foreground browser, two background push apps, about 15:1 requests) and app-switching \
(many apps switched between foreground and background, about 3:1). Memory is 10%..100% of each \
workload's footprint, DRAM 5% of it; costs use the paper's relative model (DRAM 1, PCM read 2, PCM write 50, \
eviction to storage 1000)."
                .into(),
            "hybrid-lru and hybrid-2q are the paper's app-blind baselines (one recency order over both tiers); \
clock-dwf is the literature's hybrid policy (Lee, Bahn, Noh 2014); app-aware is the paper's policy."
                .into(),
        ],
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiments::{Point, ResultRow, WorkloadFacts};
    use crate::mm::placement::metrics::Metrics;

    fn row(
        policy: &str,
        memory: u64,
        hits: u64,
        fg_hits: u64,
        fg_time: f64,
        energy: f64,
    ) -> ResultRow {
        ResultRow {
            point: Point {
                workload: "chrome-push".into(),
                policy: policy.into(),
                family: "hybrid",
                memory_pages: memory,
                memory_fraction: memory as f64 / 100.0,
                dram_fraction: 0.05,
                dram_pages: 1,
                pcm_pages: memory - 1,
            },
            metrics: Metrics {
                accesses: 100,
                hits,
                fg_accesses: 50,
                fg_hits,
                fg_time,
                energy_nj: energy,
                ..Default::default()
            },
        }
    }

    #[test]
    fn claims_are_computed_from_the_results() {
        // Two memory sizes. app-aware: fg time 40% and 60% of LRU's (mean reduction 50%),
        // energy 80% of LRU's (reduction 20%); hit ratio one point below 2Q at 10 pages.
        let rows = vec![
            row(LRU, 10, 50, 25, 100.0, 10.0),
            row(LRU, 20, 70, 35, 200.0, 20.0),
            row(TWO_Q, 10, 52, 26, 90.0, 10.0),
            row(TWO_Q, 20, 70, 35, 210.0, 20.0),
            row(PROPOSED, 10, 51, 27, 40.0, 8.0),
            row(PROPOSED, 20, 72, 37, 120.0, 16.0),
        ];
        let results = Results {
            experiment: "hybrid-cache".into(),
            title: String::new(),
            rows,
            workloads: vec![WorkloadFacts {
                name: "chrome-push".into(),
                footprint: 100,
                events: 100,
                accesses: 100,
            }],
        };
        let (figures, claims, _) = analyze(&results);
        let claim = |id: &str| claims.iter().find(|c| c.id == id).unwrap().clone();
        let time = claim("chrome-push-fg-time");
        assert!((time.measured - 50.0).abs() < 1e-9 && time.paper == Some(58.0));
        let energy = claim("chrome-push-energy");
        assert!((energy.measured - 20.0).abs() < 1e-9 && energy.paper == Some(22.0));
        let vs_lru = claim("chrome-push-hit-ratio-never-below-lru");
        assert!((vs_lru.measured - 1.0).abs() < 1e-9);
        assert_eq!(vs_lru.expect, crate::report::Expect::AtLeast { bound: 0.0 });
        let vs_2q = claim("chrome-push-hit-ratio-never-below-2q");
        assert!((vs_2q.measured + 1.0).abs() < 1e-9);
        // fg hit ratio minus total: 54-51 = 3 and 74-72 = 2 points: the largest is 3.
        let above = claim("chrome-push-fg-above-total");
        assert!((above.measured - 3.0).abs() < 1e-9);
        assert_eq!(figures.len(), 5);
    }
}
