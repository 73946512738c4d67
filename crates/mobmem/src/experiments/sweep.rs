//! The one sweep runner of every kind of experiment file.
//!
//! A kind says what one run of its file is as a [`Grid`]: its points (in the order their
//! rows are written), how to run one point, how a point's result becomes rows of the
//! long-format table, the facts shown beside it, and its analysis (figures and notes;
//! the paper's claims, findings and figure list when the file sets `reproduces`).
//! [`run`] does the rest the same way for every kind: the points run in parallel on
//! rayon's threads, progress is reported as they finish, the results are gathered in
//! point order (so nothing depends on the thread count), and the table and the report
//! are assembled.

use std::sync::atomic::{AtomicUsize, Ordering};

use rayon::prelude::*;

use super::file::{Context, Header};
use crate::report::{Analysis, Claim, ExperimentReport, Figure, Finding, PaperFigure, Row, Table};
use crate::Result;

/// Most points an experiment file may run, over all its seeds. A point's results and
/// rows take about 10 KB, so the limit keeps a run's memory near 100 MB; the largest
/// shipped experiment runs a few hundred points.
pub const MAX_POINTS: u128 = 10_000;

/// Refuse a file whose runs would make more than [`MAX_POINTS`] points: `per_run` points
/// in each of `runs` runs (one per seed). Checked before any point runs.
pub fn check_points(header: &Header, per_run: u128, runs: usize) -> Result<()> {
    let total = per_run.saturating_mul(runs.max(1) as u128);
    if total <= MAX_POINTS {
        return Ok(());
    }
    Err(crate::Error::config(
        &header.name,
        format!(
            "the grid has {per_run} points{} = {total}, more than the {MAX_POINTS} an \
             experiment may run: split it into several files or take fewer values",
            if runs > 1 {
                format!(" x {runs} seeds")
            } else {
                String::new()
            }
        ),
    ))
}

/// One run of an experiment file as a grid of independent points.
pub trait Grid: Sync {
    /// One point of the grid.
    type Point: Sync;
    /// What running one point gives.
    type Output: Send;

    /// The key columns of the table, in order.
    const KEYS: &'static [&'static str];

    /// Whether a claim whose value could not be computed means that the file's grid
    /// lacks a point it needs (see [`super::reproductions::grid_lacks`]); a kind whose
    /// claims can be NaN for other reasons says no.
    const GRID_CLAIMS: bool = true;

    /// How many points [`Grid::points`] makes, for a kind that can tell before building
    /// them: a product of long lists is then refused without being built.
    fn point_count(&self) -> Option<u128> {
        None
    }

    /// The points, in the order their rows are written.
    fn points(&self) -> Result<Vec<Self::Point>>;

    /// Run one point. Points run in parallel, each on its own: the result must depend
    /// on the point alone.
    fn run_point(&self, point: &Self::Point) -> Result<Self::Output>;

    /// The rows of one point's result.
    fn point_rows(&self, point: &Self::Point, output: &Self::Output) -> Vec<Row>;

    /// Every row, in order: by default each point's rows, in point order.
    fn rows(&self, runs: &[(Self::Point, Self::Output)]) -> Vec<Row> {
        runs.iter()
            .flat_map(|(p, o)| self.point_rows(p, o))
            .collect()
    }

    /// The small table the report shows beside the results: a header, then rows.
    fn facts(&self, table: &Table, runs: &[(Self::Point, Self::Output)]) -> Vec<Vec<String>>;

    /// Figures and notes of the results; with `paper` (the file sets `reproduces`), the
    /// paper's claims, findings and figure list too (otherwise they are left out).
    fn analyze(
        &self,
        table: &Table,
        runs: &[(Self::Point, Self::Output)],
        paper: bool,
    ) -> Result<Analyzed>;

    /// `results.json`: by default the table's rows.
    fn json(&self, table: &Table, _runs: &[(Self::Point, Self::Output)]) -> serde_json::Value {
        table.to_json()
    }

    /// The seeds the run's synthetic workloads ran with (none: it read only real files).
    fn seeds(&self, runs: &[(Self::Point, Self::Output)]) -> Vec<u64>;
}

/// What a kind's analysis of one run says.
#[derive(Debug, Clone, Default)]
pub struct Analyzed {
    pub figures: Vec<Figure>,
    /// Paragraphs shown above the figures.
    pub notes: Vec<String>,
    /// The paper's claims, as this run measured them.
    pub claims: Vec<Claim>,
    /// What the run shows beyond the claims.
    pub findings: Vec<Finding>,
    /// The paper's figures and tables, and what became of each.
    pub paper_figures: Vec<PaperFigure>,
}

impl Analyzed {
    /// A kind's analysis: its figures, claims and notes, and with `paper` the findings
    /// and the paper's figure list `paper_part` gives (computed only then).
    pub fn of(
        (figures, claims, notes): Analysis,
        paper: bool,
        paper_part: impl FnOnce() -> (Vec<Finding>, Vec<PaperFigure>),
    ) -> Self {
        if !paper {
            return Analyzed::shown(figures, notes);
        }
        let (findings, paper_figures) = paper_part();
        Analyzed {
            figures,
            notes,
            claims,
            findings,
            paper_figures,
        }
    }

    /// Figures and notes alone.
    pub fn shown(figures: Vec<Figure>, notes: Vec<String>) -> Self {
        Analyzed {
            figures,
            notes,
            ..Analyzed::default()
        }
    }
}

/// Run `f` on every point in parallel, calling `progress(done, total)` as points finish
/// (from worker threads); the results are in point order whatever the threads do.
pub fn run_points<P: Sync, O: Send>(
    points: &[P],
    progress: &(dyn Fn(usize, usize) + Sync),
    f: impl Fn(&P) -> Result<O> + Sync,
) -> Result<Vec<O>> {
    let total = points.len();
    let done = AtomicUsize::new(0);
    progress(0, total);
    // Collecting an indexed parallel iterator keeps point order.
    points
        .par_iter()
        .map(|point| {
            let output = f(point)?;
            progress(done.fetch_add(1, Ordering::Relaxed) + 1, total);
            Ok(output)
        })
        .collect()
}

/// Run `grid` as one run of the file `header` heads: every point, the table, the
/// analysis (the paper's when the file sets `reproduces`) and the report.
pub fn run<G: Grid>(grid: &G, header: &Header, context: &Context) -> Result<ExperimentReport> {
    let count = grid.point_count();
    if let Some(count) = count {
        check_points(header, count, context.runs)?;
    }
    let points = grid.points()?;
    debug_assert!(
        count.is_none_or(|n| n == points.len() as u128),
        "point_count is wrong"
    );
    check_points(header, points.len() as u128, context.runs)?;
    let outputs = run_points(&points, context.progress, |p| grid.run_point(p))?;
    let runs: Vec<(G::Point, G::Output)> = points.into_iter().zip(outputs).collect();
    let table = Table {
        experiment: header.name.clone(),
        title: header.title.clone(),
        keys: G::KEYS.iter().map(|k| k.to_string()).collect(),
        rows: grid.rows(&runs),
    };
    let paper = header.reproduces.is_some();
    let analyzed = grid.analyze(&table, &runs, paper)?;
    let facts = grid.facts(&table, &runs);
    let json = grid.json(&table, &runs);
    let seeds = grid.seeds(&runs);
    let claims = match (paper, G::GRID_CLAIMS) {
        (false, _) => Vec::new(),
        (true, true) => super::reproductions::grid_lacks(analyzed.claims),
        (true, false) => analyzed.claims,
    };
    let mut report =
        ExperimentReport::of_table(table, facts, (analyzed.figures, claims, analyzed.notes));
    if paper {
        report = report
            .with_findings(analyzed.findings)
            .with_paper_figures(analyzed.paper_figures);
    }
    report.json = json;
    report.seeds = seeds;
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Points 0..n whose result is the point squared, slower for smaller points, so
    /// that they finish out of order on several threads.
    struct Squares(u64);

    impl Grid for Squares {
        type Point = u64;
        type Output = u64;
        const KEYS: &'static [&'static str] = &["x"];

        fn points(&self) -> Result<Vec<u64>> {
            Ok((0..self.0).collect())
        }
        fn run_point(&self, &x: &u64) -> Result<u64> {
            if self.0 < 100 {
                std::thread::sleep(std::time::Duration::from_micros(50 * (self.0 - x)));
            }
            if x == 1000 {
                return Err(crate::Error::config("squares", "point 1000"));
            }
            Ok(x * x)
        }
        fn point_rows(&self, x: &u64, y: &u64) -> Vec<Row> {
            vec![Row {
                keys: vec![x.to_string()],
                values: vec![("y".into(), *y as f64)],
            }]
        }
        fn facts(&self, table: &Table, _: &[(u64, u64)]) -> Vec<Vec<String>> {
            vec![vec!["rows".into()], vec![table.rows.len().to_string()]]
        }
        fn analyze(&self, _: &Table, runs: &[(u64, u64)], _: bool) -> Result<Analyzed> {
            let last = runs.last().map_or(f64::NAN, |r| r.1 as f64);
            Ok(Analyzed {
                claims: vec![
                    Claim::at_least("last", "the last square", 0.0, last, ""),
                    Claim::at_least("nothing", "not computed", 0.0, f64::NAN, ""),
                ],
                notes: vec!["a note".into()],
                ..Analyzed::default()
            })
        }
        fn seeds(&self, _: &[(u64, u64)]) -> Vec<u64> {
            vec![7]
        }
    }

    fn header(reproduces: Option<&str>) -> Header {
        Header {
            kind: "test",
            name: "squares".into(),
            title: "Squares".into(),
            seeds: None,
            reproduces: reproduces.map(String::from),
            calibrated: Vec::new(),
            assumed: Vec::new(),
        }
    }

    #[test]
    fn rows_are_in_point_order_and_progress_counts_every_point() {
        let calls = std::sync::Mutex::new(Vec::new());
        let progress = |done: usize, total: usize| calls.lock().unwrap().push((done, total));
        let context = Context {
            progress: &progress,
            media_dir: None,
            seed: 1,
            runs: 1,
        };
        let report = run(&Squares(40), &header(None), &context).unwrap();
        let ys: Vec<f64> = report.table.rows.iter().map(|r| r.values[0].1).collect();
        assert_eq!(ys, (0..40).map(|x| (x * x) as f64).collect::<Vec<_>>());
        assert_eq!(report.table.keys, vec!["x"]);
        assert_eq!(report.table.experiment, "squares");
        assert_eq!(report.facts[1], vec!["40"]);
        assert_eq!(report.seeds, vec![7]);
        assert_eq!(report.notes, vec!["a note"]);
        // Without `reproduces`, no claims.
        assert!(report.claims.is_empty());
        let mut calls = calls.into_inner().unwrap();
        calls.sort_unstable();
        assert_eq!(calls, (0..=40).map(|d| (d, 40)).collect::<Vec<_>>());
    }

    #[test]
    fn with_reproduces_the_claims_come_and_those_not_computed_are_not_testable() {
        let report = crate::experiments::kinds::with_seed(1, |context| {
            run(&Squares(3), &header(Some("squares")), context).unwrap()
        });
        assert_eq!(report.claims.len(), 2);
        assert_eq!(report.claims[0].mean, 4.0);
        assert_eq!(
            report.claims[1].verdict,
            crate::report::Verdict::NotTestable
        );
    }

    #[test]
    fn a_failing_point_fails_the_run() {
        let err = crate::experiments::kinds::with_seed(1, |context| {
            run(&Squares(1001), &header(None), context).unwrap_err()
        });
        assert!(err.to_string().contains("point 1000"), "{err}");
    }
}
