//! Reports: what a person reads and a program parses.
//!
//! For an experiment named `NAME`, `DIR/NAME/` holds `results.csv` (long format: the key
//! columns of a run, then `metric,value`), `results.json`, one SVG per figure and
//! `claims.json` (an array of `{id, claim, paper, measured, holds, ...}`); `DIR/index.html`
//! shows them all. The folder is written under a temporary name and renamed when
//! complete, so a failed run never leaves a report that looks finished.

pub mod claims;
mod html;
mod plot;
pub mod table;

pub use claims::{
    Claim, ClaimResult, Expect, FigureStatus, Finding, FindingResult, PaperFigure, Verdict,
};
pub use html::write_index;
pub use table::{Row, Table};

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::{Error, Result};

/// A figure: one metric against a numeric key column, one line per value of another key
/// column, over the rows that match a filter.
#[derive(Debug, Clone, Serialize)]
pub struct Figure {
    /// File stem of the SVG.
    pub id: String,
    pub title: String,
    /// Key column on the x axis (numeric), shown multiplied by `x_scale`.
    pub x: String,
    pub x_label: String,
    pub x_scale: f64,
    /// Key column whose values are the lines.
    pub series: String,
    /// The lines to draw, in order (each a value of `series`).
    pub lines: Vec<String>,
    /// Only rows whose key columns have these values.
    pub filter: Vec<(String, String)>,
    pub metric: String,
    pub y_label: String,
    /// Divide each value by this line's value at the same x.
    pub normalize_to: Option<String>,
}

/// Everything written for one experiment.
#[derive(Debug, Clone)]
pub struct ExperimentReport {
    pub table: Table,
    /// `results.json`: the richest form of the results (defaults to the table's rows).
    pub json: serde_json::Value,
    /// A small table shown in the HTML index (e.g. the workloads): header, then rows.
    pub facts: Vec<Vec<String>>,
    pub figures: Vec<Figure>,
    /// The claims over every seed run (`claims.json`).
    pub claims: Vec<ClaimResult>,
    /// Each seed's claims, from which `claims` is summarized.
    pub seed_claims: Vec<Vec<Claim>>,
    /// The seeds the synthetic workloads ran with (empty: none is synthetic).
    pub seeds: Vec<u64>,
    /// What the run shows beyond the paper's claims, over every seed.
    pub findings: Vec<FindingResult>,
    /// Each seed's findings, from which `findings` is summarized.
    pub seed_findings: Vec<Vec<Finding>>,
    /// The paper's figures and tables, and what became of each here.
    pub paper_figures: Vec<PaperFigure>,
    /// Paragraphs shown above the figures in the HTML index.
    pub notes: Vec<String>,
}

/// What a reproduction's analysis of its table gives: figures, claims and notes.
pub type Analysis = (Vec<Figure>, Vec<Claim>, Vec<String>);

impl ExperimentReport {
    /// A report whose `results.json` is the table's rows.
    pub fn of_table(table: Table, facts: Vec<Vec<String>>, analysis: Analysis) -> Self {
        let (figures, claims, notes) = analysis;
        ExperimentReport {
            json: table.to_json(),
            facts,
            table,
            figures,
            claims: claims::summarize(std::slice::from_ref(&claims)),
            seed_claims: vec![claims],
            seeds: Vec::new(),
            findings: Vec::new(),
            seed_findings: vec![Vec::new()],
            paper_figures: Vec::new(),
            notes,
        }
    }

    /// This report with `findings` (one seed's).
    pub fn with_findings(mut self, findings: Vec<Finding>) -> Self {
        self.findings = claims::summarize_findings(std::slice::from_ref(&findings));
        self.seed_findings = vec![findings];
        self
    }

    /// This report with the paper's figure list.
    pub fn with_paper_figures(mut self, figures: Vec<PaperFigure>) -> Self {
        self.paper_figures = figures;
        self
    }

    /// One report of the runs of the same experiment with different seeds, `(seed,
    /// report)` in seed order: the table gains a `seed` key column in front, the claims
    /// are summarized over the seeds, and the figures and facts are the first run's (the
    /// figures draw every seed: the mean, and the spread between the lowest and the
    /// highest).
    pub fn of_seeds(runs: Vec<(u64, ExperimentReport)>) -> Self {
        let seeds: Vec<u64> = runs.iter().map(|(s, _)| *s).collect();
        let mut runs = runs.into_iter();
        let Some((first_seed, first)) = runs.next() else {
            panic!("of_seeds needs at least one run");
        };
        let mut keys = first.table.keys.clone();
        keys.insert(0, SEED_KEY.to_string());
        let mut table = Table {
            experiment: first.table.experiment.clone(),
            title: first.table.title.clone(),
            keys,
            rows: Vec::new(),
        };
        let mut json_runs = Vec::new();
        let mut seed_claims = Vec::new();
        let mut seed_findings = Vec::new();
        let mut add = |seed: u64, report: ExperimentReport, table: &mut Table| {
            for mut row in report.table.rows {
                row.keys.insert(0, seed.to_string());
                table.rows.push(row);
            }
            json_runs.push(serde_json::json!({ "seed": seed, "results": report.json }));
            seed_claims.extend(report.seed_claims);
            seed_findings.extend(report.seed_findings);
        };
        let (facts, figures, mut notes) = (
            first.facts.clone(),
            first.figures.clone(),
            first.notes.clone(),
        );
        let paper_figures = first.paper_figures.clone();
        add(first_seed, first, &mut table);
        for (seed, report) in runs {
            add(seed, report, &mut table);
        }
        if seeds.len() > 1 {
            notes.push(format!(
                "Numbers in the notes above are seed {first_seed}'s; the claims and figures use all {} seeds.",
                seeds.len()
            ));
        }
        ExperimentReport {
            json: serde_json::json!({ "seeds": seeds, "runs": json_runs }),
            facts,
            table,
            figures,
            claims: claims::summarize(&seed_claims),
            seed_claims,
            seeds,
            findings: claims::summarize_findings(&seed_findings),
            seed_findings,
            paper_figures,
            notes,
        }
    }
}

/// The key column that tells the runs of different seeds apart.
pub const SEED_KEY: &str = "seed";

/// Long-format CSV: `experiment`, the key columns, then `metric,value`.
pub fn write_results_csv(out: impl Write, table: &Table) -> Result<()> {
    let mut w = csv::Writer::from_writer(out);
    let csv_err = |e: csv::Error| Error::config("results.csv", e.to_string());
    let mut header = vec!["experiment".to_string()];
    header.extend(table.keys.iter().cloned());
    header.extend(["metric".to_string(), "value".to_string()]);
    w.write_record(&header).map_err(csv_err)?;
    for row in &table.rows {
        for (metric, value) in &row.values {
            let mut record = Vec::with_capacity(header.len());
            record.push(table.experiment.clone());
            record.extend(row.keys.iter().cloned());
            record.push(metric.clone());
            record.push(format_number(*value));
            w.write_record(&record).map_err(csv_err)?;
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

/// One point of a figure's line: the mean over seeds at `x`, and the lowest and highest
/// seed's value (equal to the mean with one seed).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FigurePoint {
    pub x: f64,
    pub y: f64,
    pub lo: f64,
    pub hi: f64,
}

/// The points of each line of a figure, sorted by x. With a `seed` key column, the rows
/// of one x are the seeds: a value is normalized by the reference line's value of the
/// same seed, then the seeds are averaged. Rows whose x is not a number, or whose
/// normalizing reference is missing or zero, are left out.
pub fn figure_lines(table: &Table, figure: &Figure) -> Vec<(String, Vec<FigurePoint>)> {
    let x_of = |row: &Row| {
        table
            .key(row, &figure.x)
            .and_then(|x| x.parse::<f64>().ok())
    };
    let seed_of = |row: &Row| table.key(row, SEED_KEY).map(str::to_string);
    let value_of = |line: &str, x: f64, seed: &Option<String>| -> Option<f64> {
        table
            .select(&figure.filter)
            .filter(|r| table.key(r, &figure.series) == Some(line))
            .find(|r| x_of(r) == Some(x) && &seed_of(r) == seed)
            .and_then(|r| r.value(&figure.metric))
    };
    figure
        .lines
        .iter()
        .map(|line| {
            // (x, value) of every seed's row.
            let mut values: Vec<(f64, f64)> = table
                .select(&figure.filter)
                .filter(|r| table.key(r, &figure.series) == Some(line.as_str()))
                .filter_map(|r| {
                    let x = x_of(r)?;
                    let v = r.value(&figure.metric)?;
                    let v = match &figure.normalize_to {
                        None => v,
                        Some(reference) => {
                            let base = value_of(reference, x, &seed_of(r))?;
                            if base == 0.0 {
                                return None;
                            }
                            v / base
                        }
                    };
                    v.is_finite().then_some((x * figure.x_scale, v))
                })
                .collect();
            values.sort_by(|a, b| a.0.total_cmp(&b.0));
            let points = values
                .chunk_by(|a, b| a.0 == b.0)
                .map(|same_x| {
                    let n = same_x.len() as f64;
                    let y = same_x.iter().map(|p| p.1).sum::<f64>() / n;
                    let lo = same_x.iter().map(|p| p.1).fold(f64::INFINITY, f64::min);
                    let hi = same_x.iter().map(|p| p.1).fold(f64::NEG_INFINITY, f64::max);
                    FigurePoint {
                        x: same_x[0].0,
                        y,
                        lo,
                        hi,
                    }
                })
                .collect();
            (line.clone(), points)
        })
        .collect()
}

/// The longest name [`safe_file_name`] takes, in bytes (file systems take 255; the
/// report adds suffixes such as `-fg-hit-ratio-dram-0.05.svg`).
pub const MAX_NAME_BYTES: usize = 128;

/// What a name must be to become a file name, for error messages.
pub const SAFE_NAME_RULE: &str =
    "1 to 128 ASCII letters, digits, '-', '_', '.' or '+', not starting with '.'";

/// `name` as a file name inside a report folder, or an error saying why it cannot be one.
/// Only ASCII letters, digits, `-`, `_`, `.` and `+` are taken, and not a leading `.`: a
/// name can never hold a path separator, be `.` or `..`, be absolute, be hidden or need
/// quoting in the HTML index's links. Every file name written under `--out` goes through
/// here; names from files (experiment and workload names) are checked with it when the
/// file is read.
pub fn safe_file_name(name: &str) -> Result<&str> {
    let allowed = |c: char| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '+');
    if name.is_empty()
        || name.len() > MAX_NAME_BYTES
        || name.starts_with('.')
        || !name.chars().all(allowed)
    {
        return Err(Error::config(
            format!("name '{}'", name.escape_debug()),
            format!("cannot be a file name: it must be {SAFE_NAME_RULE}"),
        ));
    }
    Ok(name)
}

fn write_file(path: &Path, bytes: &[u8]) -> Result<()> {
    fs::write(path, bytes).map_err(|e| Error::io(path, e))
}

/// Write `DIR/<name>/` for one experiment; returns the folder.
pub fn write_experiment(dir: &Path, report: &ExperimentReport) -> Result<PathBuf> {
    let name = safe_file_name(&report.table.experiment)?;
    // Every file name is checked before anything is written.
    let svgs = (report.figures.iter())
        .map(|f| Ok(format!("{}.svg", safe_file_name(&f.id)?)))
        .collect::<Result<Vec<_>>>()?;
    fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
    let final_dir = dir.join(name);
    let partial = dir.join(format!(".{name}.partial"));
    if partial.exists() {
        fs::remove_dir_all(&partial).map_err(|e| Error::io(&partial, e))?;
    }
    fs::create_dir_all(&partial).map_err(|e| Error::io(&partial, e))?;

    let mut csv_bytes = Vec::new();
    write_results_csv(&mut csv_bytes, &report.table)?;
    write_file(&partial.join("results.csv"), &csv_bytes)?;
    let json = serde_json::to_vec_pretty(&report.json)
        .map_err(|e| Error::config("results.json", e.to_string()))?;
    write_file(&partial.join("results.json"), &json)?;
    let claims = serde_json::to_vec_pretty(&report.claims)
        .map_err(|e| Error::config("claims.json", e.to_string()))?;
    write_file(&partial.join("claims.json"), &claims)?;
    let findings = serde_json::to_vec_pretty(&report.findings)
        .map_err(|e| Error::config("findings.json", e.to_string()))?;
    write_file(&partial.join("findings.json"), &findings)?;
    let paper_figures = serde_json::to_vec_pretty(&report.paper_figures)
        .map_err(|e| Error::config("paper-figures.json", e.to_string()))?;
    write_file(&partial.join("paper-figures.json"), &paper_figures)?;
    for (figure, file) in report.figures.iter().zip(&svgs) {
        let svg = plot::render(&report.table, figure)?;
        write_file(&partial.join(file), svg.as_bytes())?;
    }
    if final_dir.exists() {
        fs::remove_dir_all(&final_dir).map_err(|e| Error::io(&final_dir, e))?;
    }
    fs::rename(&partial, &final_dir).map_err(|e| Error::io(&final_dir, e))?;
    Ok(final_dir)
}

/// A table for a terminal: the key columns and the chosen metrics, one line per row.
pub fn text_table(table: &Table, metrics: &[&str]) -> String {
    let mut out = String::new();
    for k in &table.keys {
        out.push_str(&format!("{k:<14} "));
    }
    for m in metrics {
        out.push_str(&format!("{m:>14} "));
    }
    out.push('\n');
    for row in &table.rows {
        for k in &row.keys {
            out.push_str(&format!("{k:<14} "));
        }
        for m in metrics {
            out.push_str(&format!("{:>14} ", short(row.value(m).unwrap_or(f64::NAN))));
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_plain_names_become_file_names() {
        for good in ["hit-ratio", "chrome-push-dram-0.05", "a_b+c.svg", "x"] {
            assert_eq!(safe_file_name(good).unwrap(), good);
        }
        let long = "n".repeat(MAX_NAME_BYTES + 1);
        for bad in [
            "",
            ".",
            "..",
            "../../escaped",
            "/abs/name",
            "a/b",
            "a\\b",
            ".hidden",
            "nul\0",
            "new\nline",
            "space d",
            "é",
            long.as_str(),
        ] {
            let e = safe_file_name(bad).unwrap_err().to_string();
            assert!(e.contains("cannot be a file name"), "{bad:?}: {e}");
        }
    }

    #[test]
    fn a_report_with_an_unsafe_figure_name_writes_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("out");
        let table = Table {
            experiment: "exp".into(),
            title: String::new(),
            keys: vec![],
            rows: vec![],
        };
        let figure = Figure {
            id: "../../escaped".into(),
            title: String::new(),
            x: "x".into(),
            x_label: String::new(),
            x_scale: 1.0,
            series: "s".into(),
            lines: vec![],
            filter: vec![],
            metric: "m".into(),
            y_label: String::new(),
            normalize_to: None,
        };
        let report = ExperimentReport::of_table(table, vec![], (vec![figure], vec![], vec![]));
        let e = write_experiment(&out, &report).unwrap_err().to_string();
        assert!(e.contains("../../escaped"), "{e}");
        assert!(!out.exists());
        let e = write_index(&out, &[report]).unwrap_err().to_string();
        assert!(e.contains("cannot be a file name"), "{e}");
        let mut bad_name = ExperimentReport::of_table(
            Table {
                experiment: "../up".into(),
                title: String::new(),
                keys: vec![],
                rows: vec![],
            },
            vec![],
            (vec![], vec![], vec![]),
        );
        assert!(write_experiment(&out, &bad_name).is_err());
        bad_name.table.experiment = "ok".into();
        write_experiment(&out, &bad_name).unwrap();
        assert!(out.join("ok/results.csv").exists());
        assert!(!dir.path().join("up").exists());
    }
}
