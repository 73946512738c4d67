//! Reports: what a person reads and a program parses.
//!
//! For an experiment named `NAME`, `DIR/NAME/` holds `results.csv` (long format: one row
//! per point and metric), `results.json`, one SVG per figure, `claims.json` (an array of
//! `{id, claim, paper, measured, holds, ...}`) and `README.md`-like notes in
//! `index.html`. The folder is written under a temporary name and renamed when complete,
//! so a failed run never leaves a report that looks finished.

mod html;
mod plot;

pub use html::write_index;

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::experiments::Results;
use crate::{Error, Result};

/// A figure: one metric against memory size, a line per policy, for one workload.
#[derive(Debug, Clone, Serialize)]
pub struct Figure {
    /// File stem of the SVG.
    pub id: String,
    pub title: String,
    pub workload: String,
    /// A metric name from [`Metrics::values`].
    pub metric: String,
    pub y_label: String,
    /// Divide each value by this policy's value at the same memory size.
    pub normalize_to: Option<String>,
    pub policies: Vec<String>,
}

/// A headline result of a paper, checked against what the simulation measured.
#[derive(Debug, Clone, Serialize)]
pub struct Claim {
    pub id: String,
    /// The claim in words.
    pub claim: String,
    /// The paper's number.
    pub paper: f64,
    /// The same quantity measured here.
    pub measured: f64,
    pub unit: String,
    /// The rule `holds` applies.
    pub criterion: String,
    pub holds: bool,
}

/// Everything written for one experiment.
#[derive(Debug, Clone)]
pub struct ExperimentReport {
    pub results: Results,
    pub figures: Vec<Figure>,
    pub claims: Vec<Claim>,
    /// Paragraphs shown above the figures in the HTML index.
    pub notes: Vec<String>,
}

/// Long-format CSV: the point's columns, then `metric,value`.
pub fn write_results_csv(out: impl Write, results: &Results) -> Result<()> {
    let mut w = csv::Writer::from_writer(out);
    let csv_err = |e: csv::Error| Error::config("results.csv", e.to_string());
    w.write_record([
        "experiment",
        "workload",
        "policy",
        "family",
        "memory_pages",
        "memory_fraction",
        "dram_fraction",
        "dram_pages",
        "pcm_pages",
        "metric",
        "value",
    ])
    .map_err(csv_err)?;
    for row in &results.rows {
        let p = &row.point;
        for (metric, value) in row.metrics.values() {
            w.write_record([
                results.experiment.as_str(),
                &p.workload,
                &p.policy,
                p.family,
                &p.memory_pages.to_string(),
                &format_number(p.memory_fraction),
                &format_number(p.dram_fraction),
                &p.dram_pages.to_string(),
                &p.pcm_pages.to_string(),
                metric,
                &format_number(value),
            ])
            .map_err(csv_err)?;
        }
    }
    w.flush().map_err(|e| Error::io("results.csv", e))?;
    Ok(())
}

/// Shortest text that reads back as the same f64; empty for NaN.
pub fn format_number(v: f64) -> String {
    if v.is_nan() {
        String::new()
    } else {
        format!("{v}")
    }
}

/// Value of `metric` for a row, normalized if asked. `None` if the reference is missing
/// or zero.
pub fn figure_value(
    results: &Results,
    figure: &Figure,
    row: &crate::experiments::ResultRow,
) -> Option<f64> {
    let v = row.metrics.value(&figure.metric)?;
    match &figure.normalize_to {
        None => Some(v),
        Some(reference) => {
            let base = results
                .series(&figure.workload, reference)
                .into_iter()
                .find(|r| {
                    r.point.memory_pages == row.point.memory_pages
                        && r.point.dram_pages == row.point.dram_pages
                })
                .or_else(|| {
                    results
                        .series(&figure.workload, reference)
                        .into_iter()
                        .find(|r| r.point.memory_pages == row.point.memory_pages)
                })?
                .metrics
                .value(&figure.metric)?;
            (base != 0.0).then(|| v / base)
        }
    }
}

/// Default figures for any experiment: hit ratio and foreground hit ratio per workload.
pub fn default_figures(results: &Results) -> Vec<Figure> {
    let policies = results.policies();
    let mut out = Vec::new();
    for w in &results.workloads {
        for (metric, label) in [
            ("hit_ratio", "hit ratio"),
            ("fg_hit_ratio", "foreground hit ratio"),
        ] {
            out.push(Figure {
                id: format!("{}-{}", w.name, metric.replace('_', "-")),
                title: format!("{}: {label}", w.name),
                workload: w.name.clone(),
                metric: metric.into(),
                y_label: label.into(),
                normalize_to: None,
                policies: policies.clone(),
            });
        }
    }
    out
}

fn write_file(path: &Path, bytes: &[u8]) -> Result<()> {
    fs::write(path, bytes).map_err(|e| Error::io(path, e))
}

/// Write `DIR/<name>/` for one experiment; returns the folder.
pub fn write_experiment(dir: &Path, report: &ExperimentReport) -> Result<PathBuf> {
    let name = &report.results.experiment;
    fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
    let final_dir = dir.join(name);
    let partial = dir.join(format!(".{name}.partial"));
    if partial.exists() {
        fs::remove_dir_all(&partial).map_err(|e| Error::io(&partial, e))?;
    }
    fs::create_dir_all(&partial).map_err(|e| Error::io(&partial, e))?;

    let mut csv_bytes = Vec::new();
    write_results_csv(&mut csv_bytes, &report.results)?;
    write_file(&partial.join("results.csv"), &csv_bytes)?;
    let json = serde_json::to_vec_pretty(&report.results)
        .map_err(|e| Error::config("results.json", e.to_string()))?;
    write_file(&partial.join("results.json"), &json)?;
    let claims = serde_json::to_vec_pretty(&report.claims)
        .map_err(|e| Error::config("claims.json", e.to_string()))?;
    write_file(&partial.join("claims.json"), &claims)?;
    for figure in &report.figures {
        let svg = plot::render(&report.results, figure)?;
        write_file(&partial.join(format!("{}.svg", figure.id)), svg.as_bytes())?;
    }
    if final_dir.exists() {
        fs::remove_dir_all(&final_dir).map_err(|e| Error::io(&final_dir, e))?;
    }
    fs::rename(&partial, &final_dir).map_err(|e| Error::io(&final_dir, e))?;
    Ok(final_dir)
}

/// Figures of a finished run, for a terminal: one line per point.
pub fn text_table(results: &Results, metrics: &[&str]) -> String {
    let mut out = String::new();
    out.push_str(&format!(
        "{:<16} {:<12} {:>10} {:>8} {:>8}",
        "workload", "policy", "memory", "dram", "pcm"
    ));
    for m in metrics {
        out.push_str(&format!(" {:>14}", m));
    }
    out.push('\n');
    for row in &results.rows {
        let p = &row.point;
        out.push_str(&format!(
            "{:<16} {:<12} {:>10} {:>8} {:>8}",
            p.workload, p.policy, p.memory_pages, p.dram_pages, p.pcm_pages
        ));
        for m in metrics {
            let v = row.metrics.value(m).unwrap_or(f64::NAN);
            out.push_str(&format!(" {:>14}", short(v)));
        }
        out.push('\n');
    }
    out
}

/// A number for people: 4 significant digits.
pub fn short(v: f64) -> String {
    if v.is_nan() {
        "-".into()
    } else if v != 0.0 && (v.abs() >= 1e7 || v.abs() < 1e-3) {
        format!("{v:.3e}")
    } else if v.fract() == 0.0 {
        format!("{v:.0}")
    } else {
        format!("{v:.4}")
    }
}
