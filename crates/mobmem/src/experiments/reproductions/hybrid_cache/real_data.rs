//! Findings of `hybrid-cache` on real phone data: the four policies on the Pixel 6a block
//! I/O traces of the `mobile-block` preset (published with "Space-efficient FTL for
//! Mobile Storage via Tiny Neural Nets", SYSTOR 2024, repository
//! acsl-technion/MobileBlockIOTraces). The paper did not use these traces, so they give
//! findings, not claims.
//!
//! The traces say nothing of app state, so the foreground app is derived by the rule of
//! [`crate::trace::foreground`]: the busiest named process that is not a kernel thread.
//! The traces are fixed, so they run once per reproduction, not once per seed.

use std::path::{Path, PathBuf};

use super::super::pixel_traces::{find_dir, trace_path, RealData, PIXEL_TRACES};
use super::{mean_reduction, paired, DWF, LRU, PROPOSED, TWO_Q};
use crate::devices::{CostModel, Devices};
use crate::experiments::sweep::run_points;
use crate::experiments::{run_point, split_memory, Point, ResultRow, Results, WorkloadFacts};
use crate::mm::placement::metrics::Metrics;
use crate::report::Finding;
use crate::trace::{self, foreground, Trace};
use crate::Result;

/// Memory sizes, as fractions of each trace's footprint: a few, so the reproduction
/// stays quick on some 12 million page accesses.
pub const MEMORY_FRACTIONS: [f64; 3] = [0.1, 0.3, 0.5];

/// DRAM's share of memory, as in the synthetic sweep.
pub const DRAM_FRACTION: f64 = 0.05;

/// The policies run, in the order their points run.
pub const POLICIES: [&str; 4] = [LRU, TWO_Q, DWF, PROPOSED];

/// The findings and notes of the Pixel traces in the first of `dirs` that has any (the
/// reproduction passes [`candidate_dirs`]); when none has, a note saying where they were
/// looked for.
pub fn run(dirs: Vec<PathBuf>, cost: &CostModel, devices: &Devices) -> Result<RealData> {
    match find_dir(dirs) {
        Ok(dir) => run_traces(&dir, &PIXEL_TRACES, cost, devices),
        Err(looked) => {
            let looked: Vec<String> = looked.iter().map(|d| d.display().to_string()).collect();
            Ok(RealData {
                findings: Vec::new(),
                notes: vec![format!(
                    "Pixel 6a traces not found at {}; the real-data findings were not run \
(set MOBMEM_TRACES to a folder whose mobile-block/ holds {}).",
                    looked.join(" or "),
                    PIXEL_TRACES.map(|t| format!("{t}.csv.gz")).join(", ")
                )],
            })
        }
    }
}

/// The findings of the traces `names` of `dir` (those missing or unreadable are named in
/// a note, never an error: real data is an addition to the reproduction).
pub fn run_traces(
    dir: &Path,
    names: &[&str],
    cost: &CostModel,
    devices: &Devices,
) -> Result<RealData> {
    let mut out = RealData::default();
    let mut ran = Vec::new();
    let mut missing = Vec::new();
    for name in names {
        let path = trace_path(dir, name);
        if !path.is_file() {
            missing.push(format!("{name}.csv.gz"));
            continue;
        }
        let mut trace = match trace::read_all(&path, Some("mobile-block".parse()?)) {
            Ok(t) => t,
            Err(e) => {
                out.notes.push(format!(
                    "Pixel 6a trace {name} could not be read, so it was not run: {e}"
                ));
                continue;
            }
        };
        match trace_findings(name, &mut trace, cost, devices)? {
            Some(findings) => {
                out.findings.extend(findings);
                ran.push(*name);
            }
            None => out.notes.push(format!(
                "Pixel 6a trace {name}: no access is by a named process other than a kernel \
thread, so it has no foreground app and was not run."
            )),
        }
    }
    let n = crate::report::format_number;
    let mut note = format!(
        "Real data (findings only; the paper did not use it): the Pixel 6a block I/O traces published \
with \"Space-efficient FTL for Mobile Storage via Tiny Neural Nets\" (SYSTOR 2024, \
github.com/acsl-technion/MobileBlockIOTraces), read with the mobile-block preset from {}: {}. They \
carry no app state, so the foreground app is derived: of the processes whose names are not kernel \
threads' (kworker/*, loop<N>, jbd2/*, f2fs_*, dm-*, kswapd*, ...) nor empty (<...>), the one with the \
most accesses is the foreground (oom_score_adj 0 from time 0), every other process background (900). \
The traces name threads, not apps, so the foreground is the app's busiest thread. The four policies \
run at {} % of each trace's footprint, DRAM {} % of memory, with this experiment's cost model; the \
traces are fixed, so they run once, not per seed.",
        dir.display(),
        if ran.is_empty() {
            "none could be run".to_string()
        } else {
            ran.join(", ")
        },
        MEMORY_FRACTIONS.map(|f| n(100.0 * f)).join(", "),
        n(100.0 * DRAM_FRACTION),
    );
    if !missing.is_empty() {
        note.push_str(&format!(" Not found there: {}.", missing.join(", ")));
    }
    out.notes.insert(0, note);
    Ok(out)
}

/// The points of one trace: every policy at every size, in [`POLICIES`] order.
fn points(workload: &str, footprint: u64) -> Vec<Point> {
    let mut out = Vec::new();
    for policy in POLICIES {
        for fraction in MEMORY_FRACTIONS {
            // A hybrid memory needs a page in each tier.
            let memory = ((footprint as f64 * fraction).round() as u64).max(2);
            let (dram, pcm) = split_memory(memory, DRAM_FRACTION);
            out.push(Point {
                workload: workload.to_string(),
                policy: policy.to_string(),
                family: "hybrid",
                memory_pages: memory,
                memory_fraction: fraction,
                dram_fraction: DRAM_FRACTION,
                dram_pages: dram,
                pcm_pages: pcm,
            });
        }
    }
    out
}

/// The findings of one trace, after marking its foreground app; `None` when it has none.
pub fn trace_findings(
    name: &str,
    trace: &mut Trace,
    cost: &CostModel,
    devices: &Devices,
) -> Result<Option<Vec<Finding>>> {
    let accesses = trace.accesses().count() as u64;
    let footprint = trace.footprint() as u64;
    let Some(fg) = foreground::mark_foreground(trace) else {
        return Ok(None);
    };
    let fg_info = &trace.tables.processes[fg as usize];
    // Braces would read as evidence names in a finding's text.
    let fg_name = fg_info.name.replace(['{', '}'], "");
    let fg_pid = fg_info.pid;
    let fg_trace_accesses = trace.accesses().filter(|e| e.proc() == fg).count() as u64;
    let workload = format!("pixel-{name}");
    let points = points(&workload, footprint);
    // Points run in parallel and come back in point order: nothing depends on the threads.
    let metrics = run_points(&points, &|_, _| {}, |p| {
        run_point(p, trace, cost, devices, None)
    })?;
    let results = Results {
        experiment: "hybrid-cache".into(),
        title: String::new(),
        rows: points
            .into_iter()
            .zip(metrics)
            .map(|(point, metrics)| ResultRow { point, metrics })
            .collect(),
        workloads: vec![WorkloadFacts {
            name: workload.clone(),
            footprint,
            events: trace.events.len() as u64,
            accesses,
        }],
    };
    Ok(Some(findings(
        &results,
        &workload,
        (name, &fg_name, fg_pid),
        (accesses, footprint, fg_trace_accesses),
        trace.tables.processes.len() as f64,
    )))
}

/// The findings of one trace's results.
fn findings(
    results: &Results,
    workload: &str,
    (name, fg_name, fg_pid): (&str, &str, u32),
    (accesses, footprint, fg_trace_accesses): (u64, u64, u64),
    processes: f64,
) -> Vec<Finding> {
    let aa = results.series(workload, PROPOSED);
    // Every run counts the same accesses; app-aware's counters are the ones cited.
    let counted = aa.first().map(|r| &r.metrics);
    let fg_accesses = counted.map_or(f64::NAN, |m| m.fg_accesses as f64);
    let run_accesses = counted.map_or(f64::NAN, |m| m.accesses as f64);
    let mut out = vec![Finding::new(
        format!("{workload}-foreground"),
        format!(
            "Pixel 6a {name} (real block I/O, run once, not per seed): {{accesses}} page accesses to \
{{footprint}} distinct pages by {{processes}} processes. The derived foreground app is its busiest \
named non-kernel thread, {fg_name} (tid {fg_pid}), with {{fg_accesses}} accesses ({{fg_share}} % of \
all); every other process counts as background."
        ),
        vec![
            ("accesses", run_accesses),
            ("trace_accesses", accesses as f64),
            ("footprint", footprint as f64),
            ("processes", processes),
            ("fg_accesses", fg_accesses),
            ("fg_trace_accesses", fg_trace_accesses as f64),
            ("fg_share", 100.0 * fg_accesses / run_accesses),
        ],
    )];

    let fg_time = |m: &Metrics| m.fg_time;
    let energy = |m: &Metrics| m.energy_nj;
    let total_time = |m: &Metrics| m.total_time;
    let sizes = aa.len() as f64;
    let lower = |policy: &str, f: fn(&Metrics) -> f64| {
        paired(results, workload, PROPOSED, policy)
            .iter()
            .filter(|(p, b)| f(&p.metrics) < f(&b.metrics))
            .count() as f64
    };
    let aa_time = mean_reduction(results, workload, PROPOSED, LRU, fg_time);
    let aa_energy = mean_reduction(results, workload, PROPOSED, LRU, energy);
    let side = |cut: f64| {
        if cut > 0.0 {
            "below"
        } else if cut < 0.0 {
            "above"
        } else {
            "equal to"
        }
    };
    let lead = format!(
        "on average over the memory sizes, app-aware's foreground time is {} hybrid-lru's and its energy {}",
        side(aa_time),
        side(aa_energy)
    );
    out.push(Finding::new(
        format!("{workload}-app-aware-vs-lru"),
        format!(
            "Pixel 6a {name}: {lead}. Versus hybrid-lru, on average over {{sizes}} memory sizes (10 %, \
30 % and 50 % of the footprint), app-aware cuts foreground time by {{aa_time}} % and energy by \
{{aa_energy}} %, clock-dwf by {{dwf_time}} % and {{dwf_energy}} %, hybrid-2q by {{q_time}} % and \
{{q_energy}} % (negative: more than hybrid-lru). app-aware's elapsed time over every process, \
background included, is cut by {{aa_total_time}} %, clock-dwf's by {{dwf_total_time}} %. app-aware's foreground time is below hybrid-lru's at {{aa_below_lru_t}} \
and below clock-dwf's at {{aa_below_dwf_t}} of the sizes; its energy at {{aa_below_lru_e}} and \
{{aa_below_dwf_e}}."
        ),
        vec![
            ("sizes", sizes),
            ("aa_time", aa_time),
            ("aa_energy", aa_energy),
            ("dwf_time", mean_reduction(results, workload, DWF, LRU, fg_time)),
            ("dwf_energy", mean_reduction(results, workload, DWF, LRU, energy)),
            ("q_time", mean_reduction(results, workload, TWO_Q, LRU, fg_time)),
            ("q_energy", mean_reduction(results, workload, TWO_Q, LRU, energy)),
            ("aa_total_time", mean_reduction(results, workload, PROPOSED, LRU, total_time)),
            ("dwf_total_time", mean_reduction(results, workload, DWF, LRU, total_time)),
            ("aa_below_lru_t", lower(LRU, fg_time)),
            ("aa_below_dwf_t", lower(DWF, fg_time)),
            ("aa_below_lru_e", lower(LRU, energy)),
            ("aa_below_dwf_e", lower(DWF, energy)),
        ],
    ));

    // Hit ratios at each size, from each run's own counters.
    let at = |policy: &str, f: fn(&Metrics) -> f64| -> Vec<f64> {
        results
            .series(workload, policy)
            .iter()
            .map(|r| 100.0 * f(&r.metrics))
            .collect()
    };
    let mut evidence: Vec<(String, f64)> = Vec::new();
    let mut parts = Vec::new();
    for (label, policy) in [("aa", PROPOSED), ("lru", LRU), ("dwf", DWF), ("q", TWO_Q)] {
        let total = at(policy, Metrics::hit_ratio);
        let fg = at(policy, Metrics::fg_hit_ratio);
        let mut names = (Vec::new(), Vec::new());
        for (i, (t, f)) in total.iter().zip(&fg).enumerate() {
            let (tn, fnm) = (format!("{label}_hr_{i}"), format!("{label}_fg_hr_{i}"));
            names.0.push(format!("{{{tn}}}"));
            names.1.push(format!("{{{fnm}}}"));
            evidence.push((tn, *t));
            evidence.push((fnm, *f));
        }
        parts.push(format!(
            "{policy} {} % (foreground {} %)",
            names.0.join("/"),
            names.1.join("/")
        ));
    }
    let evidence_refs: Vec<(&str, f64)> = evidence.iter().map(|(n, v)| (n.as_str(), *v)).collect();
    out.push(Finding::new(
        format!("{workload}-hit-ratios"),
        format!(
            "Pixel 6a {name}: total hit ratios at 10/30/50 % of the footprint: {}. The foreground hit \
ratio counts only the {{fg_accesses}} accesses of {fg_name}.",
            parts.join(", ")
        ),
        {
            let mut e = evidence_refs;
            e.push(("fg_accesses", fg_accesses));
            e
        },
    ));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn without_the_traces_a_note_says_where_they_were_looked_for() {
        let empty = tempfile::tempdir().unwrap();
        let dirs = vec![
            empty.path().join("mobile-block"),
            empty.path().to_path_buf(),
        ];
        let out = run(dirs, &CostModel::paper_relative(), &Devices::default()).unwrap();
        assert!(out.findings.is_empty());
        assert_eq!(out.notes.len(), 1);
        let note = &out.notes[0];
        assert!(note.starts_with("Pixel 6a traces not found at "), "{note}");
        assert!(note.contains(&empty.path().join("mobile-block").display().to_string()));
        assert!(
            note.contains("the real-data findings were not run"),
            "{note}"
        );
    }
}
