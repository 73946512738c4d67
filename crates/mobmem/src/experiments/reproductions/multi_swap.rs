//! `multi-swap`: SPEC.md section 2, NVM + flash swap devices (Bahn, Kim, JIIBC 2023).
//!
//! The `app-cycling` preset (20 apps launched in rounds under memory pressure) runs on
//! every swap architecture; the NVM-backed ones at NVM sizes from 1% to 100% of the swap
//! footprint (the distinct pages flash-only swap writes out). Figures: storage I/O time
//! (parallel vs hierarchical), flash accesses and NVM writes (single-access filter vs
//! plain CLOCK), mean and per-app launch time (filter, flash-only, no swap, zram).
//! Claims: parallel beats hierarchical at small NVM (5% on average, 22% at most) and
//! loses at large NVM; the filter cuts flash accesses (6% / 24%) and NVM writes
//! (55% / 64%) versus CLOCK; launch time 53% below flash-only swap and close to no swap;
//! over half of the swap data is single-access.

use std::sync::atomic::{AtomicUsize, Ordering};

use rayon::prelude::*;

use super::{reduction_claim, Context};
use crate::core::stats::Stats;
use crate::mm::swap::{self, workload::AppCyclingConfig, SwapConfig, SwapMetrics};
use crate::report::table::filter;
use crate::report::{format_number, Claim, ExperimentReport, Figure, Row, Table};
use crate::Result;

/// NVM sizes, % of the swap footprint.
const NVM_PERCENT: [f64; 10] = [1.0, 2.0, 5.0, 10.0, 15.0, 20.0, 30.0, 50.0, 75.0, 100.0];
/// "Small NVM" for the parallel-versus-hierarchical claim: up to this share.
const SMALL_NVM_PERCENT: f64 = 20.0;
/// The NVM size at which launch times are compared.
const LAUNCH_NVM_PERCENT: f64 = 10.0;
const NVM_ARCHITECTURES: [&str; 4] = [
    "hierarchical-lru",
    "hierarchical-clock",
    "parallel-clock",
    "parallel-filtered",
];
const OTHER_ARCHITECTURES: [&str; 4] = ["flash", "none", "zram", "zram-writeback"];
const KEYS: [&str; 7] = [
    "scope",
    "series",
    "architecture",
    "nvm_percent",
    "nvm_pages",
    "app",
    "app_name",
];

fn run_row(
    series: &str,
    architecture: &str,
    percent: Option<f64>,
    nvm_pages: usize,
    m: &SwapMetrics,
) -> Row {
    Row {
        keys: vec![
            "run".into(),
            series.into(),
            architecture.into(),
            percent.map(format_number).unwrap_or_default(),
            nvm_pages.to_string(),
            String::new(),
            String::new(),
        ],
        values: m
            .values()
            .into_iter()
            .map(|(k, v)| (k.to_string(), v))
            .collect(),
    }
}

/// One row per app: its mean launch time and launch counts.
fn app_rows(
    series: &str,
    architecture: &str,
    percent: Option<f64>,
    nvm_pages: usize,
    m: &SwapMetrics,
) -> Vec<Row> {
    m.per_app
        .iter()
        .enumerate()
        .map(|(i, app)| Row {
            keys: vec![
                "app".into(),
                series.into(),
                architecture.into(),
                percent.map(format_number).unwrap_or_default(),
                nvm_pages.to_string(),
                (i + 1).to_string(),
                app.name.clone(),
            ],
            values: vec![
                ("launch_mean_ms".into(), app.mean_ms),
                ("cold_starts".into(), app.cold_starts as f64),
                ("warm_launches".into(), app.warm_launches as f64),
            ],
        })
        .collect()
}

pub fn run(context: &Context) -> Result<ExperimentReport> {
    let trace = swap::workload::generate(&AppCyclingConfig::default(), context.seed)?;
    let config = SwapConfig::default();
    let footprint = swap::swap_footprint(&trace, &config)?;
    let mut points: Vec<(&str, Option<f64>)> =
        OTHER_ARCHITECTURES.iter().map(|a| (*a, None)).collect();
    for &p in &NVM_PERCENT {
        points.extend(NVM_ARCHITECTURES.iter().map(|a| (*a, Some(p))));
    }
    let done = AtomicUsize::new(0);
    (context.progress)(0, points.len());
    let results: Vec<(&str, Option<f64>, usize, SwapMetrics)> = points
        .par_iter()
        .map(|&(architecture, percent)| {
            let nvm_pages =
                percent.map_or(0, |p| ((footprint as f64) * p / 100.0).round() as usize);
            let m = swap::run_point(&trace, &config, architecture, nvm_pages)?;
            (context.progress)(done.fetch_add(1, Ordering::Relaxed) + 1, points.len());
            Ok((architecture, percent, nvm_pages, m))
        })
        .collect::<Result<_>>()?;
    let mut rows = Vec::new();
    for (architecture, percent, nvm_pages, m) in &results {
        rows.push(run_row(architecture, architecture, *percent, *nvm_pages, m));
    }
    // Per-app launch times of the configurations the paper compares.
    for (architecture, percent, nvm_pages, m) in &results {
        let series = match percent {
            None => architecture.to_string(),
            Some(p) if *architecture == "parallel-filtered" && *p == LAUNCH_NVM_PERCENT => {
                format!("parallel-filtered {}% NVM", format_number(*p))
            }
            Some(_) => continue,
        };
        rows.extend(app_rows(&series, architecture, *percent, *nvm_pages, m));
    }
    let table = Table {
        experiment: "multi-swap".into(),
        title: "Multi-swap: NVM + flash swap devices, hierarchical vs parallel, the single-access filter".into(),
        keys: KEYS.iter().map(|k| k.to_string()).collect(),
        rows,
    };
    let flash = &results
        .iter()
        .find(|r| r.0 == "flash")
        .expect("flash ran")
        .3;
    let facts = vec![
        vec![
            "workload".into(),
            "events".into(),
            "apps".into(),
            "DRAM (pages)".into(),
            "swap footprint (pages)".into(),
            "single-access share of swapped-in pages (flash)".into(),
        ],
        vec![
            format!("app-cycling, seed {}", context.seed),
            trace.events.len().to_string(),
            trace.tables.processes.len().to_string(),
            config.dram_pages.to_string(),
            footprint.to_string(),
            format!("{:.1}%", 100.0 * flash.single_access_share),
        ],
    ];
    let analysis = analyze(&table);
    Ok(ExperimentReport::of_table(table, facts, analysis))
}

/// `metric` of an architecture at each NVM size, in size order.
fn by_nvm(table: &Table, architecture: &str, metric: &str) -> Vec<(f64, f64)> {
    let rows = filter(&[("scope", "run"), ("architecture", architecture)]);
    table.curve(&rows, "nvm_percent", metric)
}

/// `metric` of an architecture that has no NVM.
fn single(table: &Table, architecture: &str, metric: &str) -> f64 {
    table.first_value(
        &filter(&[("scope", "run"), ("architecture", architecture)]),
        metric,
    )
}

/// Reductions (%) of `ours` versus `base` at each size where both ran, with the size.
fn reductions(ours: &[(f64, f64)], base: &[(f64, f64)]) -> Vec<(f64, f64)> {
    ours.iter()
        .filter_map(|&(x, v)| {
            let b = base.iter().find(|p| p.0 == x)?.1;
            (b > 0.0).then(|| (x, 100.0 * (1.0 - v / b)))
        })
        .collect()
}

fn mean(values: impl Iterator<Item = f64>) -> f64 {
    let v: Vec<f64> = values.collect();
    if v.is_empty() {
        f64::NAN
    } else {
        v.iter().sum::<f64>() / v.len() as f64
    }
}

fn max(values: impl Iterator<Item = f64>) -> f64 {
    values.fold(f64::NAN, f64::max)
}

pub fn analyze(table: &Table) -> (Vec<Figure>, Vec<Claim>, Vec<String>) {
    let nvm_figure = |id: &str, title: &str, metric: &str, y: &str, lines: &[&str]| Figure {
        id: id.into(),
        title: title.into(),
        x: "nvm_percent".into(),
        x_label: "NVM size (% of the swap footprint)".into(),
        x_scale: 1.0,
        series: "architecture".into(),
        lines: lines.iter().map(|s| s.to_string()).collect(),
        filter: filter(&[("scope", "run")]),
        metric: metric.into(),
        y_label: y.into(),
        normalize_to: None,
    };
    let launch_lines: Vec<String> = table
        .distinct("series")
        .into_iter()
        .filter(|s| {
            table
                .select(&filter(&[("scope", "app"), ("series", s)]))
                .next()
                .is_some()
        })
        .collect();
    let figures = vec![
        nvm_figure(
            "io-time",
            "storage I/O time: parallel vs hierarchical",
            "io_time_ms",
            "ms",
            &[
                "hierarchical-lru",
                "hierarchical-clock",
                "parallel-clock",
                "parallel-filtered",
            ],
        ),
        nvm_figure(
            "flash-accesses",
            "flash accesses: filter vs CLOCK",
            "flash_accesses",
            "flash reads + writes",
            &["parallel-clock", "parallel-filtered"],
        ),
        nvm_figure(
            "nvm-writes",
            "NVM writes: filter vs CLOCK",
            "nvm_writes",
            "NVM page writes",
            &["parallel-clock", "parallel-filtered"],
        ),
        nvm_figure(
            "launch-mean",
            "mean app launch time",
            "launch_mean_ms",
            "ms",
            &["hierarchical-lru", "parallel-clock", "parallel-filtered"],
        ),
        Figure {
            id: "launch-per-app".into(),
            title: format!(
                "launch time per app (NVM {}% where used)",
                format_number(LAUNCH_NVM_PERCENT)
            ),
            x: "app".into(),
            x_label: "app".into(),
            x_scale: 1.0,
            series: "series".into(),
            lines: launch_lines,
            filter: filter(&[("scope", "app")]),
            metric: "launch_mean_ms".into(),
            y_label: "mean launch time (ms)".into(),
            normalize_to: None,
        },
    ];

    let io = |a: &str| by_nvm(table, a, "io_time_ms");
    let hierarchical_best: Vec<(f64, f64)> = io("hierarchical-lru")
        .into_iter()
        .zip(io("hierarchical-clock"))
        .map(|((x, a), (_, b))| (x, a.min(b)))
        .collect();
    let vs_hierarchical = reductions(&io("parallel-filtered"), &hierarchical_best);
    let small: Vec<f64> = vs_hierarchical
        .iter()
        .filter(|p| p.0 <= SMALL_NVM_PERCENT)
        .map(|p| p.1)
        .collect();
    let largest = vs_hierarchical.last().map_or(f64::NAN, |p| p.1);
    let flash_cut = reductions(
        &by_nvm(table, "parallel-filtered", "flash_accesses"),
        &by_nvm(table, "parallel-clock", "flash_accesses"),
    );
    let nvm_cut = reductions(
        &by_nvm(table, "parallel-filtered", "nvm_writes"),
        &by_nvm(table, "parallel-clock", "nvm_writes"),
    );
    let launch_pf = by_nvm(table, "parallel-filtered", "launch_mean_ms")
        .into_iter()
        .find(|p| p.0 == LAUNCH_NVM_PERCENT)
        .map_or(f64::NAN, |p| p.1);
    let launch_flash = single(table, "flash", "launch_mean_ms");
    let launch_none = single(table, "none", "launch_mean_ms");
    let single_access = 100.0 * single(table, "flash", "single_access_share");
    let small_label = format!(
        "NVM up to {}% of the footprint",
        format_number(SMALL_NVM_PERCENT)
    );

    let mut claims = vec![
        reduction_claim(
            "parallel-beats-hierarchical-average".into(),
            format!("parallel swap with the filter cuts storage I/O time versus hierarchical swap (the better of LRU and CLOCK) by 5% on average at small NVM ({small_label})"),
            5.0,
            mean(small.iter().copied()),
        ),
        reduction_claim(
            "parallel-beats-hierarchical-max".into(),
            format!("... and by up to 22% ({small_label})"),
            22.0,
            max(small.iter().copied()),
        ),
        Claim::at_most(
            "hierarchical-wins-at-large-nvm",
            "hierarchical swap wins once NVM is large (at 100% of the footprint)",
            0.0,
            largest,
            "% I/O time saved by parallel at the largest NVM",
        ),
    ];
    // The filter's cuts versus plain CLOCK: the mean and the largest over NVM sizes.
    let cuts = |what: &str, text: &str, (average, most): (f64, f64), cut: &[(f64, f64)]| {
        [
            reduction_claim(
                format!("filter-cuts-{what}-average"),
                format!("the single-access filter cuts {text} versus plain CLOCK by {average}% on average over NVM sizes"),
                average,
                mean(cut.iter().map(|p| p.1)),
            ),
            reduction_claim(
                format!("filter-cuts-{what}-max"),
                format!("... and by up to {most}%"),
                most,
                max(cut.iter().map(|p| p.1)),
            ),
        ]
    };
    claims.extend(cuts(
        "flash-accesses",
        "flash accesses",
        (6.0, 24.0),
        &flash_cut,
    ));
    claims.extend(cuts("nvm-writes", "NVM writes", (55.0, 64.0), &nvm_cut));
    claims.push(reduction_claim(
        "launch-faster-than-flash-swap".into(),
        format!(
            "mean app launch time with the filter ({}% NVM) is 53% below flash-only swap",
            format_number(LAUNCH_NVM_PERCENT)
        ),
        53.0,
        100.0 * (1.0 - launch_pf / launch_flash),
    ));
    let vs_none = 100.0 * (launch_pf / launch_none - 1.0);
    claims.push(Claim::at_most(
        "launch-close-to-no-swap",
        "launch time with the filter is not much worse than with no swap at all (at most 25% slower)",
        25.0,
        vs_none,
        "% slower than no swap",
    ));
    claims.push(Claim::at_least(
        "single-access-majority",
        "more than half of the swapped-in data is single-access (swapped in once)",
        50.0,
        single_access,
        "% of swapped-in pages (flash-only swap)",
    ));
    let notes = vec![
        "Workload: the app-cycling preset (docs/swap.md): 20 apps with launch sets, heaps and per-session data, \
launched in shuffled rounds so that their memory is many times the DRAM. Device timings are not in the paper; \
the defaults (UFS-class flash, embedded MRAM as NVM, LZ4 zram) are stated assumptions with sources in docs/swap.md."
            .into(),
        "With SPEC.md's definitions, hierarchical swap with CLOCK and parallel swap with plain CLOCK admission place \
every page the same way (write to NVM while it fits, demote the CLOCK victim to flash), so they measure the same; \
the paper's difference between parallel and hierarchical lies in the filter."
            .into(),
        "No swap means the low-memory killer: killed apps pay a cold start at their next launch.".into(),
    ];
    (figures, claims, notes)
}
