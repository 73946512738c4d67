//! Reports: what a person reads and a program parses.
//!
//! For an experiment named `NAME`, `DIR/NAME/` holds `results.csv` (long format: the key
//! columns of a run, then `metric,value`), `results.json`, `claims.json` (an array of
//! `{id, claim, paper, unit, seeds, mean, ci95, verdict, explanation, ...}`),
//! `findings.json`, `paper-figures.json`, `report.json` (what the page shows besides:
//! title, notes, facts, the figures and their captions), one SVG per figure,
//! `provenance.json` and `index.html`, a page that opens alone. `DIR/index.html` shows
//! every experiment folder under `DIR`, whichever command wrote it, and
//! `DIR/provenance.json` says which command wrote last. The folder is written under a
//! temporary name and renamed when complete, so a failed run never leaves a report that
//! looks finished.
//!
//! Only the pages and the `provenance.json` files say when, where and by what build a
//! report was made: the data files depend on the seeds alone.

pub mod claims;
mod html;
pub mod numbers;
mod plot;
pub use plot::LineAxis;
pub mod provenance;
pub mod shape;
pub mod table;

use crate::experiments::sensitivity::Sensitivity;
pub use claims::{
    Claim, ClaimResult, Expect, FigureStatus, Finding, FindingResult, PaperFigure, PaperSide,
    Source, Verdict,
};
pub use html::{
    claims_markdown, experiment_page, findings_markdown, load_sections, replace_summary,
    summary_markdown, write_index, Section, SectionFiles, FINDINGS_BEGIN, FINDINGS_END,
    SUMMARY_BEGIN, SUMMARY_END,
};
pub use provenance::{Machine, Provenance};
pub use table::{Row, Table};

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::output::{Existing, Placed};
use crate::{Error, Result};

/// A figure: one metric against a key column, one line (or, for categories, one bar) per
/// value of another key column, over the rows that match a filter.
///
/// The x axis is continuous when its values are numbers, drawn as lines with markers;
/// it is categorical (bars) when a value of a row with the metric is not a number or the
/// key column names things ([`CATEGORY_KEYS`], such as apps numbered 1, 2, 3): see
/// [`figure_data`].
#[derive(Debug, Clone, Serialize)]
pub struct Figure {
    /// File stem of the SVG.
    pub id: String,
    pub title: String,
    /// Key column on the x axis; a numeric one is shown multiplied by `x_scale`.
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
    /// How the claims' verdicts move with the assumed constants (`--sensitivity` only).
    pub sensitivity: Option<Sensitivity>,
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
            sensitivity: None,
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

    /// Mark the claims `ids` not testable, for `why`, in every seed, and summarize again;
    /// a claim already not testable keeps its own reason (a grid that lacks its point,
    /// one its analysis gives), and a claim of a bound keeps the bound as what it states
    /// ([`Expect::untestable`]). `Err` names an id that is not a claim of the report.
    pub fn mark_not_testable(
        &mut self,
        ids: &[String],
        why: &str,
    ) -> std::result::Result<(), String> {
        for id in ids {
            if !self.claims.iter().any(|c| &c.id == id) {
                return Err(id.clone());
            }
        }
        for seed in &mut self.seed_claims {
            let testable = |c: &&mut Claim| !matches!(c.expect, Expect::NotTestable { .. });
            for claim in seed
                .iter_mut()
                .filter(|c| ids.contains(&c.id))
                .filter(testable)
            {
                claim.expect = claim.expect.clone().untestable(why);
            }
        }
        self.claims = claims::summarize(&self.seed_claims);
        Ok(())
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
            sensitivity: None,
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

/// First column of a sweep's table (`DIR/NAME.sweep.csv`), by which an earlier one of
/// mobmem's is recognised.
const SWEEP_TABLE_HEAD: &str = "sweep_point,";

/// Where `run --sweep` writes the table of every point of the sweep of experiment `name`.
pub fn sweep_table_path(dir: &Path, name: &str) -> Result<PathBuf> {
    Ok(dir.join(format!("{}.sweep.csv", safe_file_name(name)?)))
}

/// Whether `path` is a sweep table of mobmem's (its header).
pub fn is_own_sweep_table(path: &Path) -> bool {
    crate::output::file_head_is(path, |head| head.starts_with(SWEEP_TABLE_HEAD))
}

/// One point of a sweep, for its table: the report's name, the value of each swept key
/// (as given) and its results.
pub struct SweepRow<'a> {
    pub experiment: &'a str,
    pub values: Vec<String>,
    pub table: &'a Table,
}

/// The rows of every point's results.csv in one table, each after the point's name and
/// its value of each key in `keys`: `sweep_point,KEY...,experiment,...,metric,value`.
/// Every point must have the same columns (one experiment file, other values).
pub fn write_sweep_table(
    dir: &Path,
    name: &str,
    keys: &[String],
    points: &[SweepRow],
    existing: Existing,
) -> Result<(PathBuf, Placed)> {
    let path = sweep_table_path(dir, name)?;
    let csv_err = |e: csv::Error| Error::config(path.display().to_string(), e.to_string());
    let mut w = csv::Writer::from_writer(Vec::new());
    let mut columns: Option<&[String]> = None;
    for (n, point) in points.iter().enumerate() {
        let cols = &point.table.keys[..];
        if *columns.get_or_insert(cols) != cols {
            return Err(Error::config(
                path.display().to_string(),
                format!(
                    "point {} has other columns than the first",
                    point.experiment
                ),
            ));
        }
        if n == 0 {
            let mut header = vec!["sweep_point".to_string()];
            header.extend(keys.iter().cloned());
            header.push("experiment".into());
            header.extend(cols.iter().cloned());
            header.extend(["metric".to_string(), "value".to_string()]);
            w.write_record(&header).map_err(csv_err)?;
        }
        for row in &point.table.rows {
            for (metric, value) in &row.values {
                let mut record = vec![point.experiment.to_string()];
                record.extend(point.values.iter().cloned());
                record.push(point.table.experiment.clone());
                record.extend(row.keys.iter().cloned());
                record.push(metric.clone());
                record.push(format_number(*value));
                w.write_record(&record).map_err(csv_err)?;
            }
        }
    }
    let bytes = w
        .into_inner()
        .map_err(|e| Error::config(path.display().to_string(), e.to_string()))?;
    let placed = crate::output::write_file(&path, &bytes, is_own_sweep_table, existing)?;
    Ok((path, placed))
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
/// seed's value (equal to the mean with one seed). On a categorical axis `x` is the
/// category's index.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FigurePoint {
    pub x: f64,
    pub y: f64,
    pub lo: f64,
    pub hi: f64,
}

/// Key columns whose values name things even when they are written as numbers (apps
/// numbered 1, 2, 3): a figure over one of them draws bars. A column `KEY_name`, when the
/// table has one, gives the categories' labels.
pub const CATEGORY_KEYS: &[&str] = &["app", "workload", "policy", "series", "architecture"];

/// What a figure draws, computed from the table.
#[derive(Debug, Clone, PartialEq)]
pub struct FigureData {
    /// The categories' labels when the x axis is categorical (a point's x is then the
    /// index of its category); `None` for a continuous axis.
    pub categories: Option<Vec<String>>,
    /// Each line (or bar series) and its points, sorted by x.
    pub lines: Vec<(String, Vec<FigurePoint>)>,
    /// The most seeds any point is averaged over (1: a single run).
    pub seeds: usize,
}

impl FigureData {
    /// Groups of lines that lie exactly on one another (the same x and y at every point),
    /// which a reader could not otherwise tell apart.
    pub fn coinciding(&self) -> Vec<Vec<String>> {
        let same = |a: &[FigurePoint], b: &[FigurePoint]| {
            !a.is_empty()
                && a.len() == b.len()
                && a.iter().zip(b).all(|(p, q)| {
                    p.x == q.x && (p.y - q.y).abs() <= 1e-9 * p.y.abs().max(q.y.abs()).max(1e-300)
                })
        };
        let mut groups: Vec<Vec<usize>> = Vec::new();
        for i in 0..self.lines.len() {
            if groups.iter().any(|g| g.contains(&i)) {
                continue;
            }
            let group: Vec<usize> = (i..self.lines.len())
                .filter(|&j| same(&self.lines[i].1, &self.lines[j].1))
                .collect();
            if group.len() > 1 {
                groups.push(group);
            }
        }
        groups
            .into_iter()
            .map(|g| g.into_iter().map(|i| self.lines[i].0.clone()).collect())
            .collect()
    }

    /// The words under a figure: what the marks are, over how many seeds, and which
    /// lines hide one another.
    pub fn caption(&self) -> String {
        let marks = if self.categories.is_some() {
            "Bars"
        } else {
            "Lines"
        };
        let longest = self.lines.iter().map(|(_, p)| p.len()).max().unwrap_or(0);
        // Bars always carry error bars; only long lines draw the spread as a band.
        let spread = if longest > plot::BAND_ABOVE_POINTS && self.categories.is_none() {
            "the shaded band spans"
        } else {
            "the error bars span"
        };
        let mut out = if self.seeds > 1 {
            format!(
                "{marks} show the mean over {} seeds; {spread} the lowest to the highest seed.",
                self.seeds
            )
        } else {
            format!("{marks} show a single run (one seed, or a workload that has none).")
        };
        for group in self.coinciding() {
            let names = match group.as_slice() {
                [a, b] => format!("{a} and {b}"),
                [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
                [] => continue,
            };
            out.push_str(&format!(
                " {names} have the same values at every point: their lines lie on one another (told apart by their markers and dashes)."
            ));
        }
        out
    }
}

/// Whether `figure` has a categorical x axis: a key column of [`CATEGORY_KEYS`], or a
/// value on it that is not a number (an empty value, "not applicable", is neither) in a
/// row that has the figure's metric: a row without it draws nothing, so its x (such as
/// "all" of a whole read beside the windows of a time trace) does not make the axis one
/// of categories.
pub fn is_categorical(table: &Table, figure: &Figure) -> bool {
    CATEGORY_KEYS.contains(&figure.x.as_str())
        || table
            .select(&figure.filter)
            .filter(|r| {
                table
                    .key(r, &figure.series)
                    .is_some_and(|s| figure.lines.iter().any(|l| l == s))
                    && r.value(&figure.metric).is_some()
            })
            .filter_map(|r| table.key(r, &figure.x))
            .any(|x| !x.is_empty() && x.parse::<f64>().is_err())
}

/// The points of each line of a figure (see [`figure_data`]).
pub fn figure_lines(table: &Table, figure: &Figure) -> Vec<(String, Vec<FigurePoint>)> {
    figure_data(table, figure).lines
}

/// What `figure` draws. With a `seed` key column, the rows of one x are the seeds: a value
/// is normalized by the reference line's value of the same seed, then the seeds are
/// averaged. On a continuous axis, rows whose x is not a number are left out; on either,
/// rows whose normalizing reference is missing or zero, and values that are not finite.
pub fn figure_data(table: &Table, figure: &Figure) -> FigureData {
    let categorical = is_categorical(table, figure);
    let rows: Vec<&Row> = table.select(&figure.filter).collect();
    let seed_of = |row: &Row| table.key(row, SEED_KEY).map(str::to_string);
    // The normalizing line's value by (x, seed).
    let reference: std::collections::HashMap<(String, Option<String>), f64> =
        match &figure.normalize_to {
            None => Default::default(),
            Some(line) => rows
                .iter()
                .filter(|r| table.key(r, &figure.series) == Some(line.as_str()))
                .filter_map(|r| {
                    let x = table.key(r, &figure.x)?.to_string();
                    Some(((x, seed_of(r)), r.value(&figure.metric)?))
                })
                .collect(),
        };
    let value = |r: &Row| -> Option<f64> {
        let v = r.value(&figure.metric)?;
        let v = match &figure.normalize_to {
            None => v,
            Some(_) => {
                let x = table.key(r, &figure.x)?.to_string();
                let base = *reference.get(&(x, seed_of(r)))?;
                if base == 0.0 {
                    return None;
                }
                v / base
            }
        };
        v.is_finite().then_some(v)
    };
    // The categories, in first-seen order (numerically when they are numbers).
    let categories: Option<Vec<String>> = categorical.then(|| {
        let mut seen: Vec<String> = Vec::new();
        for r in &rows {
            let in_lines = table
                .key(r, &figure.series)
                .is_some_and(|s| figure.lines.iter().any(|l| l == s));
            if let (true, Some(x)) = (in_lines, table.key(r, &figure.x)) {
                if !x.is_empty() && !seen.iter().any(|s| s == x) {
                    seen.push(x.to_string());
                }
            }
        }
        if seen.iter().all(|x| x.parse::<f64>().is_ok()) {
            seen.sort_by(|a, b| {
                let (a, b): (f64, f64) = (a.parse().unwrap_or(0.0), b.parse().unwrap_or(0.0));
                a.total_cmp(&b)
            });
        }
        seen
    });
    let x_of = |r: &Row| -> Option<f64> {
        let x = table.key(r, &figure.x)?;
        match &categories {
            Some(c) => c.iter().position(|k| k == x).map(|i| i as f64),
            None => x.parse::<f64>().ok().map(|x| x * figure.x_scale),
        }
    };
    let seeds = {
        let mut distinct: Vec<Option<String>> = rows.iter().map(|r| seed_of(r)).collect();
        distinct.sort();
        distinct.dedup();
        distinct.len().max(1)
    };
    let lines = figure
        .lines
        .iter()
        .map(|line| {
            // (x, value) of every seed's row.
            let mut values: Vec<(f64, f64)> = rows
                .iter()
                .filter(|r| table.key(r, &figure.series) == Some(line.as_str()))
                .filter_map(|r| Some((x_of(r)?, value(r)?)))
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
        .collect();
    // Labels: the `KEY_name` column where there is one.
    let categories = categories.map(|keys| {
        let name_key = format!("{}_name", figure.x);
        keys.iter()
            .map(|k| {
                rows.iter()
                    .find(|r| table.key(r, &figure.x) == Some(k.as_str()))
                    .and_then(|r| table.key(r, &name_key))
                    .filter(|name| !name.is_empty())
                    .map_or_else(|| numbers::key(k), str::to_string)
            })
            .collect()
    });
    FigureData {
        categories,
        lines,
        seeds,
    }
}

/// The SVG of `figure` drawn from `table` (as the report pages draw it).
pub fn render_figure(table: &Table, figure: &Figure) -> Result<String> {
    plot::render(figure, &figure_data(table, figure))
}

/// [`render_figure`] with a line plot's x axis drawn as `axis` says (log scale, marks).
pub fn render_figure_with(table: &Table, figure: &Figure, axis: &LineAxis) -> Result<String> {
    plot::render_with(figure, &figure_data(table, figure), axis)
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

/// A file inside a folder this process just created (see [`crate::output::write_new`]).
fn write_file(path: &Path, bytes: &[u8]) -> Result<()> {
    crate::output::write_new(path, bytes)
}

/// What an experiment's page shows besides its claims, findings and paper figures:
/// `DIR/NAME/report.json`, from which the index of `DIR` is rebuilt.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PageInfo {
    pub experiment: String,
    pub title: String,
    /// The seeds of the synthetic workloads (empty: none is synthetic).
    pub seeds: Vec<u64>,
    pub notes: Vec<String>,
    /// A small table (header, then rows).
    pub facts: Vec<Vec<String>>,
    pub figures: Vec<FigureInfo>,
}

/// A figure of a page: its SVG is `ID.svg` beside the page.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FigureInfo {
    pub id: String,
    pub title: String,
    /// What the marks are and over how many seeds (see [`FigureData::caption`]).
    pub caption: String,
}

/// The file that marks a folder as a report mobmem wrote (its content says so to a
/// person): such a folder is replaced when its experiment runs again; any other folder
/// at that name is refused (see [`crate::output`]).
pub const REPORT_MARKER: &str = ".mobmem-report";

const MARKER_TEXT: &str = "This folder is a report written by mobmem. mobmem replaces it \
whole when the experiment is run again into the same --out folder.\n";

/// Whether `dir` is a report folder mobmem wrote: a real folder (not a link) holding
/// the marker file. Anything else at a report's name (a folder of report-like files
/// included: its files may be a person's) is refused without `--force`.
pub fn is_own_report(dir: &Path) -> bool {
    let is_file = |p: &Path| fs::symlink_metadata(p).is_ok_and(|m| m.is_file());
    fs::symlink_metadata(dir).is_ok_and(|m| m.is_dir()) && is_file(&dir.join(REPORT_MARKER))
}

/// Whether `path` is an index page mobmem wrote (`DIR/index.html`): a regular file
/// whose head has the report's title.
pub fn is_own_index(path: &Path) -> bool {
    crate::output::file_head_is(path, |head| head.contains("<title>mobmem report</title>"))
}

/// Whether `path` is a provenance file mobmem wrote (`DIR/provenance.json`).
pub fn is_own_provenance(path: &Path) -> bool {
    crate::output::file_head_is(path, |head| {
        head.starts_with("{\n  \"version\": ") && head.contains("\"commit\": ")
    })
}

/// Checks, before anything runs, that the report of each experiment in `names` and the
/// index can be written under `dir`: each target is absent or mobmem's own, or
/// `existing` allows keeping it aside. A long run then never ends in a refusal.
pub fn check_outputs(dir: &Path, names: &[&str], existing: Existing) -> Result<()> {
    if existing == Existing::KeepAside {
        return Ok(());
    }
    let hint = ", or pass --force to keep it (renamed NAME.replaced-N) beside the new report";
    let refuse = |path: &Path, owned| crate::output::check_replaceable(path, owned, hint);
    for name in names {
        refuse(&dir.join(safe_file_name(name)?), is_own_report)?;
    }
    refuse(&dir.join("index.html"), is_own_index)?;
    refuse(&dir.join("provenance.json"), is_own_provenance)
}

/// [`check_outputs`] for the table of a sweep of `name` ([`write_sweep_table`]).
pub fn check_sweep_table(dir: &Path, name: &str, existing: Existing) -> Result<()> {
    if existing == Existing::KeepAside {
        return Ok(());
    }
    let hint = ", or pass --force to keep it (renamed NAME.replaced-N) beside the new table";
    crate::output::check_replaceable(&sweep_table_path(dir, name)?, is_own_sweep_table, hint)
}

/// Write `DIR/<name>/` for one experiment, with its page `DIR/<name>/index.html` and
/// `provenance`; returns the folder. The folder is written under a fresh temporary name
/// and then put in place whole: an earlier report of mobmem's is replaced, any other
/// folder at that name is refused or kept aside, as `existing` says
/// ([`crate::output::put_in_place`]). `DIR/index.html` is [`write_index`]'s.
pub fn write_experiment(
    dir: &Path,
    report: &ExperimentReport,
    provenance: &Provenance,
    existing: Existing,
) -> Result<(PathBuf, Placed)> {
    let name = safe_file_name(&report.table.experiment)?;
    // Every file name is checked before anything is written.
    let svgs = (report.figures.iter())
        .map(|f| Ok(format!("{}.svg", safe_file_name(&f.id)?)))
        .collect::<Result<Vec<_>>>()?;
    fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
    let final_dir = dir.join(name);
    let temp = crate::output::create_temp_dir(&final_dir)?;
    let partial = temp.path().to_path_buf();
    write_file(&partial.join(REPORT_MARKER), MARKER_TEXT.as_bytes())?;

    let mut csv_bytes = Vec::new();
    write_results_csv(&mut csv_bytes, &report.table)?;
    write_file(&partial.join("results.csv"), &csv_bytes)?;
    write_json(&partial.join("results.json"), &report.json)?;
    write_json(&partial.join("claims.json"), &report.claims)?;
    write_json(&partial.join("findings.json"), &report.findings)?;
    let mut figures = Vec::new();
    let mut drawn = Vec::new();
    for (figure, file) in report.figures.iter().zip(&svgs) {
        let data = figure_data(&report.table, figure);
        let svg = plot::render(figure, &data)?;
        write_file(&partial.join(file), svg.as_bytes())?;
        figures.push(FigureInfo {
            id: figure.id.clone(),
            title: figure.title.clone(),
            caption: data.caption(),
        });
        drawn.push(data);
    }
    // A paper figure is reproduced when its shape holds on what the figures draw.
    let mut paper_figures = report.paper_figures.clone();
    let data_of = |id: &str| {
        let at = report.figures.iter().position(|f| f.id == id);
        at.map(|i| &drawn[i])
    };
    for paper in &mut paper_figures {
        paper.check_shape(&data_of);
    }
    write_json(&partial.join("paper-figures.json"), &paper_figures)?;
    if let Some(sensitivity) = &report.sensitivity {
        write_json(&partial.join("sensitivity.json"), sensitivity)?;
        for claim in &sensitivity.claims {
            let file = format!("sensitivity-{}.svg", safe_file_name(&claim.id)?);
            write_file(&partial.join(file), plot::render_tornado(claim)?.as_bytes())?;
        }
    }
    let info = PageInfo {
        experiment: name.to_string(),
        title: report.table.title.clone(),
        seeds: report.seeds.clone(),
        notes: report.notes.clone(),
        facts: report.facts.clone(),
        figures,
    };
    write_json(&partial.join("report.json"), &info)?;
    write_json(&partial.join("provenance.json"), provenance)?;
    let section = Section {
        info,
        claims: report.claims.clone(),
        findings: report.findings.clone(),
        paper_figures,
        provenance: Some(provenance.clone()),
        sensitivity: report.sensitivity.clone(),
    };
    write_file(
        &partial.join("index.html"),
        html::experiment_page(&section).as_bytes(),
    )?;
    let placed = temp.place(&final_dir, is_own_report, existing)?;
    Ok((final_dir, placed))
}

fn write_json(path: &Path, value: &impl Serialize) -> Result<()> {
    write_file(path, &json_bytes(path, value)?)
}

/// `value` as the pretty JSON of the file `path`, with a final line break.
fn json_bytes(path: &Path, value: &impl Serialize) -> Result<Vec<u8>> {
    let name = path.file_name().unwrap_or_default().to_string_lossy();
    let mut bytes =
        serde_json::to_vec_pretty(value).map_err(|e| Error::config(name, e.to_string()))?;
    bytes.push(b'\n');
    Ok(bytes)
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
            out.push_str(&format!("{:<14} ", numbers::key(k)));
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

    /// The report as the command line writes it without `--force`.
    fn write_experiment(
        dir: &Path,
        report: &ExperimentReport,
        provenance: &Provenance,
    ) -> Result<PathBuf> {
        super::write_experiment(dir, report, provenance, Existing::Refuse).map(|(p, _)| p)
    }

    fn write_index(dir: &Path, provenance: &Provenance) -> Result<Vec<PathBuf>> {
        super::write_index(dir, provenance, Existing::Refuse)
    }

    fn test_provenance() -> Provenance {
        Provenance::now("0.0.0", "unknown", None, vec!["mobmem".into()], vec![1])
    }

    fn figure(id: &str, x: &str, metric: &str, lines: &[&str]) -> Figure {
        Figure {
            id: id.into(),
            title: format!("{metric} by {x}"),
            x: x.into(),
            x_label: x.into(),
            x_scale: 1.0,
            series: "policy".into(),
            lines: lines.iter().map(|l| l.to_string()).collect(),
            filter: vec![],
            metric: metric.into(),
            y_label: metric.into(),
            normalize_to: None,
        }
    }

    /// One seed's run of a small experiment: a size sweep and an app breakdown, with a
    /// claim, a finding and the paper's figures.
    fn seed_report(name: &str, seed: u64) -> ExperimentReport {
        let s = seed as f64;
        let mut rows = Vec::new();
        for (policy, gain) in [("lru", 0.0), ("clock", 0.0), ("ours", 0.05)] {
            for size in [10, 20, 40] {
                rows.push(Row {
                    keys: vec![
                        "size".into(),
                        policy.into(),
                        size.to_string(),
                        String::new(),
                        String::new(),
                    ],
                    values: vec![(
                        "hit_ratio".into(),
                        0.5 + size as f64 / 100.0 + gain + s * 0.001,
                    )],
                });
            }
            for (app, app_name) in [("1", "com.example.mail"), ("2", "com.example.maps")] {
                rows.push(Row {
                    keys: vec![
                        "app".into(),
                        policy.into(),
                        String::new(),
                        app.into(),
                        app_name.into(),
                    ],
                    values: vec![("launch_ms".into(), 300.0 - gain * 1000.0 + s)],
                });
            }
        }
        let table = Table {
            experiment: name.into(),
            title: "A small experiment".into(),
            keys: ["scope", "policy", "size", "app", "app_name"]
                .map(String::from)
                .to_vec(),
            rows,
        };
        let figures = vec![
            figure("hit-ratio", "size", "hit_ratio", &["lru", "clock", "ours"]),
            figure("launch", "app", "launch_ms", &["lru", "ours"]),
        ];
        let claims = vec![
            Claim::value("gain", "ours gains 5 points", 5.0, 10.0 + s, "points")
                .explained("the gain is {g} points", vec![("g", 10.0 + s)]),
        ];
        ExperimentReport::of_table(
            table,
            vec![vec!["workload".into()], vec!["w".into()]],
            (figures, claims, vec!["A note.".into()]),
        )
        .with_findings(vec![Finding::new(
            "dwf",
            "clock-dwf beats ours by {x} %",
            vec![("x", 3.0 + s)],
        )])
        .with_paper_figures(vec![
            PaperFigure::drawn(
                "Fig. 4",
                "hit ratio by size",
                &["hit-ratio"],
                shape::Shape::below("hit-ratio", "lru", "ours", shape::Along::Every),
            ),
            PaperFigure::proxy("Fig. 5", "power over time", &["launch"], "no power trace"),
            PaperFigure::missing("Table 2", "the devices", "not modelled"),
        ])
    }

    fn small_report(name: &str) -> ExperimentReport {
        ExperimentReport::of_seeds(
            (1..=3)
                .map(|seed| (seed, seed_report(name, seed)))
                .collect(),
        )
    }

    #[test]
    fn figures_over_categories_are_bars_labelled_by_name() {
        let report = small_report("exp");
        let lines = figure_data(&report.table, &report.figures[0]);
        assert_eq!(lines.categories, None);
        assert_eq!(lines.seeds, 3);
        let lru = &lines.lines[0].1;
        assert_eq!(
            lru.iter().map(|p| p.x).collect::<Vec<_>>(),
            [10.0, 20.0, 40.0]
        );
        assert!((lru[0].y - 0.602).abs() < 1e-12 && lru[0].lo < lru[0].y && lru[0].y < lru[0].hi);
        // lru and clock are the same: the caption says so.
        assert_eq!(
            lines.coinciding(),
            vec![vec!["lru".to_string(), "clock".to_string()]]
        );
        assert!(
            lines
                .caption()
                .contains("lru and clock have the same values"),
            "{}",
            lines.caption()
        );
        assert!(lines.caption().contains("mean over 3 seeds"));

        let apps = figure_data(&report.table, &report.figures[1]);
        assert_eq!(
            apps.categories,
            Some(vec![
                "com.example.mail".to_string(),
                "com.example.maps".to_string()
            ])
        );
        assert_eq!(
            apps.lines[1].1.iter().map(|p| p.x).collect::<Vec<_>>(),
            [0.0, 1.0]
        );
        assert!(apps
            .caption()
            .starts_with("Bars show the mean over 3 seeds"));
        let svg = plot::render(&report.figures[1], &apps).unwrap();
        assert!(
            svg.contains("app01") || svg.contains("mail"),
            "category labels drawn"
        );
        assert!(
            svg.contains("com.example."),
            "the shared start is said in the axis title"
        );
    }

    /// A time trace beside whole-run rows: the whole runs' x ("all") is not a number, but
    /// they lack the figure's metric, so the axis stays one of time and the trace a line.
    #[test]
    fn rows_without_the_metric_do_not_make_the_axis_categorical() {
        let row = |scheme: &str, at: &str, values: Vec<(String, f64)>| Row {
            keys: vec![scheme.into(), at.into()],
            values,
        };
        let table = Table {
            experiment: "trace".into(),
            title: String::new(),
            keys: vec!["scheme".into(), "at_ms".into()],
            rows: vec![
                row("a", "all", vec![("time_ms".into(), 20.0)]),
                row("a", "5", vec![("power_w".into(), 3.0)]),
                row("a", "15", vec![("power_w".into(), 2.5)]),
            ],
        };
        let figure = Figure {
            series: "scheme".into(),
            ..figure("trace", "at_ms", "power_w", &["a"])
        };
        assert!(!is_categorical(&table, &figure));
        let data = figure_data(&table, &figure);
        assert_eq!(data.categories, None);
        let points: Vec<(f64, f64)> = data.lines[0].1.iter().map(|p| (p.x, p.y)).collect();
        assert_eq!(points, [(5.0, 3.0), (15.0, 2.5)]);
        // A row with the metric and a name on the axis still makes it one of categories.
        let mut named = table.clone();
        named.rows[0].values.push(("power_w".into(), 2.0));
        assert!(is_categorical(&named, &figure));
    }

    #[test]
    fn data_files_do_not_depend_on_the_provenance() {
        let dir = tempfile::tempdir().unwrap();
        let report = small_report("exp");
        let one = test_provenance();
        let other = Provenance {
            command: vec!["mobmem".into(), "--threads".into(), "1".into()],
            date_utc: "1999-12-31T23:59:59Z".into(),
            commit: "0123456789abcdef".into(),
            threads: 1,
            ..one.clone()
        };
        let a = write_experiment(&dir.path().join("a"), &report, &one).unwrap();
        let b = write_experiment(&dir.path().join("b"), &report, &other).unwrap();
        let mut names: Vec<String> = fs::read_dir(&a)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().to_string())
            .collect();
        names.sort();
        for expected in [
            "results.csv",
            "claims.json",
            "findings.json",
            "paper-figures.json",
            "report.json",
            "hit-ratio.svg",
            "launch.svg",
            "index.html",
            "provenance.json",
        ] {
            assert!(
                names.iter().any(|n| n == expected),
                "{expected} in {names:?}"
            );
        }
        for name in &names {
            let (x, y) = (
                fs::read(a.join(name)).unwrap(),
                fs::read(b.join(name)).unwrap(),
            );
            if name == "index.html" || name == "provenance.json" {
                assert_ne!(x, y, "{name} states the provenance");
                assert!(String::from_utf8(y)
                    .unwrap()
                    .contains("1999-12-31T23:59:59Z"));
            } else {
                assert_eq!(x, y, "{name} must depend on the seeds alone");
                let text = String::from_utf8(x).unwrap();
                assert!(
                    !text.contains(&one.date_utc) && !text.contains("0123456789abcdef"),
                    "{name}"
                );
            }
        }
    }

    #[test]
    fn a_page_shows_the_rule_claims_findings_paper_figures_and_figures() {
        let dir = tempfile::tempdir().unwrap();
        let folder =
            write_experiment(dir.path(), &small_report("exp"), &test_provenance()).unwrap();
        let page = fs::read_to_string(folder.join("index.html")).unwrap();
        assert_eq!(page.matches("How verdicts are given").count(), 1);
        for text in [
            "ours gains 5 points",
            "12.0 [9.5, 14.5]</span> points",
            "direction-only",
            "the gain is 12 points",
            "clock-dwf beats ours by 5 %",
            "href=\"#exp-fig-hit-ratio\"",
            "id=\"exp-fig-hit-ratio\"",
            "no power trace",
            "not modelled",
            "src=\"hit-ratio.svg\"",
            "href=\"../index.html\"",
            "mean over 3 seeds",
            "A note.",
            "Provenance",
        ] {
            assert!(page.contains(text), "{text} missing from the page");
        }
    }

    #[test]
    fn the_index_keeps_the_experiments_of_earlier_commands() {
        let dir = tempfile::tempdir().unwrap();
        let first = Provenance {
            experiments: vec!["first".into()],
            date_utc: "2000-01-01T00:00:00Z".into(),
            ..test_provenance()
        };
        write_experiment(dir.path(), &small_report("first"), &first).unwrap();
        write_index(dir.path(), &first).unwrap();
        let second = Provenance {
            experiments: vec!["second".into()],
            ..test_provenance()
        };
        write_experiment(dir.path(), &small_report("second"), &second).unwrap();
        write_index(dir.path(), &second).unwrap();
        let index = fs::read_to_string(dir.path().join("index.html")).unwrap();
        let (at_second, at_first) = (
            index.find("id=\"second\"").unwrap(),
            index.find("id=\"first\"").unwrap(),
        );
        assert!(
            at_second < at_first,
            "the last command's experiments come first"
        );
        assert!(
            index.contains("src=\"first/hit-ratio.svg\"")
                && index.contains("href=\"second/index.html\"")
        );
        assert!(
            index.contains("Written by another command") && index.contains("2000-01-01T00:00:00Z")
        );
        assert_eq!(index.matches("How verdicts are given").count(), 1);
        assert!(index.contains("2 paper claims: 0 reproduced, 2 direction-only"));
        let (last, sections, unread) = load_sections(dir.path()).unwrap();
        assert_eq!(last.unwrap().experiments, ["second"]);
        assert_eq!(sections.len(), 2);
        assert!(unread.is_empty());
        // A folder that is not a report is left out, and said to be.
        fs::create_dir(dir.path().join("stray")).unwrap();
        fs::write(dir.path().join("stray/report.json"), "{").unwrap();
        let (_, sections, unread) = load_sections(dir.path()).unwrap();
        assert_eq!((sections.len(), unread.len()), (2, 1));
    }

    #[test]
    fn the_summary_is_a_markdown_table_of_every_claim() {
        let dir = tempfile::tempdir().unwrap();
        let made = test_provenance();
        write_experiment(dir.path(), &small_report("exp"), &made).unwrap();
        let with_finding = small_report("other").with_findings(vec![Finding::new(
            "clock-wins",
            "clock beats ours\non every size",
            vec![],
        )]);
        let mut with_finding = with_finding;
        with_finding.claims.clear();
        // Another command, whose experiment has no claims: not named.
        let other = Provenance {
            command: vec!["mobmem".into(), "run".into()],
            ..test_provenance()
        };
        write_experiment(dir.path(), &with_finding, &other).unwrap();
        let (_, sections, _) = load_sections(dir.path()).unwrap();
        let made_by = format!("`mobmem` ({}) at {} UTC", made.build(), made.date_utc);
        assert_eq!(
            summary_markdown(&sections, None),
            format!("1 claims of 1 reproductions: 0 reproduced, 1 direction-only, 0 not-reproduced, 0 not-testable. \
Seeds: 1-3 (3 seeds). The rule: see any report page.\n\nMade by {made_by}.\n\n\
| reproduction | claim | paper | measured: mean [95% interval] | verdict |\n\
|---|---|---|---|---|\n\
| exp | ours gains 5 points (`gain`) | 5 points | 12.0 [9.5, 14.5] points | direction-only |\n\
\nFindings of `exp`:\n\n\
- clock-dwf beats ours by 5 % (`dwf`)\n\
\nFindings of `other`:\n\n\
- clock beats ours on every size (`clock-wins`)\n")
        );
        // Claims of two commands: each named with its experiments.
        write_experiment(dir.path(), &small_report("third"), &other).unwrap();
        let (_, sections, _) = load_sections(dir.path()).unwrap();
        let claims = claims_markdown(&sections, None);
        let run_by = format!("`mobmem run` ({}) at {} UTC", other.build(), other.date_utc);
        assert!(
            claims.contains(&format!(
                "\nMade by:\n- {made_by}: exp\n- {run_by}: third\n"
            )),
            "{claims}"
        );
        assert!(!claims.contains("Findings"), "{claims}");
    }

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
        let provenance = test_provenance();
        let e = write_experiment(&out, &report, &provenance)
            .unwrap_err()
            .to_string();
        assert!(e.contains("../../escaped"), "{e}");
        assert!(!out.exists());
        let bad_index = Provenance {
            experiments: vec!["../../escaped".into()],
            ..provenance.clone()
        };
        let e = write_index(&out, &bad_index).unwrap_err().to_string();
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
        assert!(write_experiment(&out, &bad_name, &provenance).is_err());
        bad_name.table.experiment = "ok".into();
        write_experiment(&out, &bad_name, &provenance).unwrap();
        assert!(out.join("ok/results.csv").exists());
        assert!(!dir.path().join("up").exists());
    }
}
