//! A paper's claims checked against the simulation over several seeds, each given a
//! verdict by one rule ([`RULE`]).
//!
//! A reproduction states each claim once per seed ([`Claim`]: what the paper says, what
//! this seed measured, and what would explain a miss); [`summarize`] gathers the seeds
//! into a [`ClaimResult`]: the mean, a 95 % interval (Student t over the seeds), the
//! verdict and, where the verdict is not `reproduced`, the explanation filled in with the
//! means of the run's own counters.

use super::shape::Shape;
use super::FigureData;
use serde::{Deserialize, Deserializer, Serialize};

/// What the paper's statement is, and so how the verdict is reached.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", tag = "kind")]
pub enum Expect {
    /// A number (`paper` is it): reproduced when it lies in the interval or the mean is
    /// within 25 % of it.
    Value,
    /// A bound: the measured value is at least `bound` (for example a gap that is never
    /// negative).
    AtLeast { bound: f64 },
    /// A bound: the measured value is at most `bound`.
    AtMost { bound: f64 },
    /// The model cannot test the claim (for example it holds by construction): `why`. A
    /// claim of a bound keeps it as `claimed` (at least or at most), though nothing is
    /// checked against it, so that the paper's side of the claim can still be shown.
    NotTestable {
        why: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        claimed: Option<Box<Expect>>,
    },
}

impl Expect {
    /// This expectation made not testable for `why`: a bound is kept as what the claim
    /// states ([`Expect::NotTestable`]'s `claimed`), a number is the claim's `paper`.
    pub fn untestable(self, why: impl Into<String>) -> Expect {
        let claimed = match self {
            Expect::AtLeast { .. } | Expect::AtMost { .. } => Some(Box::new(self)),
            Expect::NotTestable { claimed, .. } => claimed,
            Expect::Value => None,
        };
        Expect::NotTestable {
            why: why.into(),
            claimed,
        }
    }
}

/// Who makes a claim: the paper reproduced, or mobmem itself (a threshold of its own,
/// as the composed phone's, where no paper says anything).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Source {
    #[default]
    Paper,
    Mobmem,
}

/// One claim as one seed measured it.
#[derive(Debug, Clone, PartialEq)]
pub struct Claim {
    pub id: String,
    /// The claim in words.
    pub claim: String,
    pub source: Source,
    /// The paper's number, where it gives one.
    pub paper: Option<f64>,
    /// The same quantity measured on this seed.
    pub measured: f64,
    pub unit: String,
    pub expect: Expect,
    /// Why the measured value is what it is, with `{name}` standing for the mean over
    /// seeds of `evidence` entry `name` (formatted for people). Shown next to every claim
    /// that is not reproduced.
    pub explain: String,
    /// Counters and figures of this seed's run that the explanation cites.
    pub evidence: Vec<(String, f64)>,
}

impl Claim {
    /// A claim of a number: the paper's `paper`, this seed's `measured`.
    pub fn value(
        id: impl Into<String>,
        claim: impl Into<String>,
        paper: f64,
        measured: f64,
        unit: impl Into<String>,
    ) -> Self {
        Claim {
            id: id.into(),
            claim: claim.into(),
            source: Source::Paper,
            paper: Some(paper),
            measured,
            unit: unit.into(),
            expect: Expect::Value,
            explain: String::new(),
            evidence: Vec::new(),
        }
    }

    /// A claim that the measured value is at least `bound`.
    pub fn at_least(
        id: impl Into<String>,
        claim: impl Into<String>,
        bound: f64,
        measured: f64,
        unit: impl Into<String>,
    ) -> Self {
        Claim::value(id, claim, bound, measured, unit).bounded(Expect::AtLeast { bound })
    }

    /// A claim that the measured value is at most `bound`.
    pub fn at_most(
        id: impl Into<String>,
        claim: impl Into<String>,
        bound: f64,
        measured: f64,
        unit: impl Into<String>,
    ) -> Self {
        Claim::value(id, claim, bound, measured, unit).bounded(Expect::AtMost { bound })
    }

    /// This claim as one of a bound, `expect`, with no number of the paper's.
    fn bounded(self, expect: Expect) -> Self {
        Claim {
            expect,
            paper: None,
            ..self
        }
    }

    /// The paper's number, where the claim states one beside a bound.
    pub fn with_paper(mut self, paper: f64) -> Self {
        self.paper = Some(paper);
        self
    }

    /// This claim as mobmem's own, not a paper's.
    pub fn mobmems_own(mut self) -> Self {
        self.source = Source::Mobmem;
        self
    }

    /// A claim the model cannot test, and why (a bound it states is kept: see
    /// [`Expect::untestable`]).
    pub fn not_testable(mut self, why: impl Into<String>) -> Self {
        self.expect = self.expect.untestable(why);
        self
    }

    /// The explanation (see [`Claim::explain`]) and the evidence it cites.
    pub fn explained(mut self, explain: impl Into<String>, evidence: Vec<(&str, f64)>) -> Self {
        self.explain = explain.into();
        self.evidence = owned_evidence(evidence);
        self
    }
}

/// Evidence as a claim or a finding keeps it, its names owned.
fn owned_evidence(evidence: Vec<(&str, f64)>) -> Vec<(String, f64)> {
    evidence
        .into_iter()
        .map(|(name, value)| (name.to_string(), value))
        .collect()
}

/// The verdict on a claim.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Verdict {
    Reproduced,
    DirectionOnly,
    NotReproduced,
    NotTestable,
}

impl Verdict {
    pub fn name(self) -> &'static str {
        match self {
            Verdict::Reproduced => "reproduced",
            Verdict::DirectionOnly => "direction-only",
            Verdict::NotReproduced => "not-reproduced",
            Verdict::NotTestable => "not-testable",
        }
    }

    /// Every verdict, in the order the reports count them.
    pub const ALL: [Verdict; 4] = [
        Verdict::Reproduced,
        Verdict::DirectionOnly,
        Verdict::NotReproduced,
        Verdict::NotTestable,
    ];
}

/// The rule every verdict follows, as the report states it.
pub const RULE: &str = "A claim of a number is reproduced when the paper's value lies inside the 95 % \
interval of the seeds' mean (Student t) or the mean is within 25 % of it; direction-only when the mean \
has the paper's sign but another size; not-reproduced otherwise. A claim of a bound (at least, at most) \
is reproduced when the whole interval is on the claimed side; direction-only when the mean is but the \
interval crosses the bound; not-reproduced when the mean is on the other side. A claim the model cannot \
test (for example one that holds by construction) is not-testable, with the reason.";

/// A claim over all seeds. In `claims.json` a value that is not a number (no seed measured
/// it) is written as null, and read back as NaN.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClaimResult {
    pub id: String,
    pub claim: String,
    /// The paper's claim or mobmem's own (absent from reports of older versions: the
    /// paper's).
    #[serde(default)]
    pub source: Source,
    /// The paper's number, or null where it states none (a bound).
    pub paper: Option<f64>,
    pub unit: String,
    /// Seeds measured.
    pub seeds: usize,
    #[serde(deserialize_with = "nan_if_null")]
    pub mean: f64,
    /// 95 % interval of the mean (Student t over the seeds; one seed: the value itself).
    #[serde(deserialize_with = "nan_if_null_pair")]
    pub ci95: [f64; 2],
    pub verdict: Verdict,
    /// Why the claim is not reproduced, computed from the run's counters (null when it
    /// is).
    pub explanation: Option<String>,
    /// What the verdict compared against.
    pub expect: Expect,
    /// Each seed's value, in seed order.
    #[serde(deserialize_with = "nan_if_null_vec")]
    pub values: Vec<f64>,
}

/// The paper's side of a claim as the reports show it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum PaperSide {
    AtLeast(f64),
    AtMost(f64),
    /// The paper's number.
    Number(f64),
    /// The claim states no number.
    Nothing,
}

impl ClaimResult {
    /// The paper's side of the claim: the bound a claim of a bound is checked against;
    /// else the paper's number; else, for a claim the model cannot test, the bound it
    /// states.
    pub fn paper_side(&self) -> PaperSide {
        let bound = |expect: &Expect| match expect {
            Expect::AtLeast { bound } => Some(PaperSide::AtLeast(*bound)),
            Expect::AtMost { bound } => Some(PaperSide::AtMost(*bound)),
            _ => None,
        };
        if let Some(side) = bound(&self.expect) {
            return side;
        }
        match (&self.expect, self.paper) {
            (_, Some(p)) => PaperSide::Number(p),
            (Expect::NotTestable { claimed, .. }, None) => (claimed.as_deref())
                .and_then(bound)
                .unwrap_or(PaperSide::Nothing),
            _ => PaperSide::Nothing,
        }
    }
}

fn nan_if_null<'de, D: Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
    Ok(Option::<f64>::deserialize(d)?.unwrap_or(f64::NAN))
}

fn nan_if_null_pair<'de, D: Deserializer<'de>>(d: D) -> Result<[f64; 2], D::Error> {
    let [a, b] = <[Option<f64>; 2]>::deserialize(d)?;
    Ok([a.unwrap_or(f64::NAN), b.unwrap_or(f64::NAN)])
}

fn nan_if_null_vec<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<f64>, D::Error> {
    let values = Vec::<Option<f64>>::deserialize(d)?;
    Ok(values.into_iter().map(|v| v.unwrap_or(f64::NAN)).collect())
}

/// The 97.5 % quantile of Student's t with `df` degrees of freedom (two-sided 95 %).
/// Values for 1 to 30 from the standard tables; above, the normal 1.96 is within 2 %.
pub fn t_975(df: usize) -> f64 {
    const TABLE: [f64; 30] = [
        12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160,
        2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056,
        2.052, 2.048, 2.045, 2.042,
    ];
    match df {
        0 => f64::NAN,
        1..=30 => TABLE[df - 1],
        _ => 1.96,
    }
}

/// Mean and 95 % interval of `values` (NaN values are left out; none left: NaN).
pub fn mean_ci95(values: &[f64]) -> (f64, [f64; 2]) {
    let finite: Vec<f64> = values.iter().copied().filter(|v| v.is_finite()).collect();
    let n = finite.len();
    if n == 0 {
        return (f64::NAN, [f64::NAN; 2]);
    }
    let mean = finite.iter().sum::<f64>() / n as f64;
    if n == 1 {
        return (mean, [mean, mean]);
    }
    let variance = finite.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
    let half = t_975(n - 1) * (variance / n as f64).sqrt();
    (mean, [mean - half, mean + half])
}

/// The verdict on a claim whose seeds' mean and interval are `mean` and `ci`.
pub fn verdict(expect: &Expect, paper: Option<f64>, mean: f64, ci: [f64; 2]) -> Verdict {
    if !mean.is_finite() {
        return match expect {
            Expect::NotTestable { .. } => Verdict::NotTestable,
            _ => Verdict::NotReproduced,
        };
    }
    match expect {
        Expect::NotTestable { .. } => Verdict::NotTestable,
        Expect::Value => {
            let Some(p) = paper else {
                return Verdict::NotTestable;
            };
            if (ci[0] <= p && p <= ci[1]) || (mean - p).abs() <= 0.25 * p.abs() {
                Verdict::Reproduced
            } else if p != 0.0 && mean != 0.0 && mean.signum() == p.signum() {
                Verdict::DirectionOnly
            } else {
                Verdict::NotReproduced
            }
        }
        Expect::AtLeast { bound } => bound_verdict(ci[0] >= *bound, mean >= *bound),
        Expect::AtMost { bound } => bound_verdict(ci[1] <= *bound, mean <= *bound),
    }
}

fn bound_verdict(interval_on_side: bool, mean_on_side: bool) -> Verdict {
    if interval_on_side {
        Verdict::Reproduced
    } else if mean_on_side {
        Verdict::DirectionOnly
    } else {
        Verdict::NotReproduced
    }
}

/// A number for an explanation: up to 3 significant digits, no exponent below 10^7.
pub fn people(v: f64) -> String {
    if !v.is_finite() {
        return "n/a".into();
    }
    let a = v.abs();
    if a >= 1e7 {
        format!("{v:.2e}")
    } else if a >= 100.0 || v.fract() == 0.0 {
        format!("{v:.0}")
    } else if a >= 10.0 {
        format!("{v:.1}")
    } else if a >= 1.0 {
        format!("{v:.2}")
    } else {
        format!("{v:.3}")
    }
}

/// `template` with every `{name}` replaced by the mean of evidence `name` over the seeds.
fn fill(template: &str, evidence: &[Vec<(String, f64)>]) -> String {
    let mut out = template.to_string();
    let Some(first) = evidence.first() else {
        return out;
    };
    for (name, _) in first {
        let values: Vec<f64> = evidence
            .iter()
            .filter_map(|e| e.iter().find(|(n, _)| n == name).map(|(_, v)| *v))
            .collect();
        let (mean, _) = mean_ci95(&values);
        out = out.replace(&format!("{{{name}}}"), &people(mean));
    }
    out
}

/// Each item of the first seed's list, with the item of the same id from every seed
/// that has one (the first seed's own among them), in seed order.
fn by_id<T>(per_seed: &[Vec<T>], id: impl Fn(&T) -> &str) -> impl Iterator<Item = (&T, Vec<&T>)> {
    let first = per_seed.first().map_or(&[][..], Vec::as_slice);
    first.iter().map(move |item| {
        let of_id = per_seed
            .iter()
            .filter_map(|items| items.iter().find(|other| id(other) == id(item)))
            .collect();
        (item, of_id)
    })
}

/// Gather the claims of several seeds (`per_seed[i]` is seed i's list, all with the same
/// ids in the same order as the first) into one result per claim.
pub fn summarize(per_seed: &[Vec<Claim>]) -> Vec<ClaimResult> {
    by_id(per_seed, |c| &c.id)
        .map(|(claim, of_id)| {
            let values: Vec<f64> = of_id.iter().map(|c| c.measured).collect();
            let (mean, ci95) = mean_ci95(&values);
            let verdict = verdict(&claim.expect, claim.paper, mean, ci95);
            let explanation = match (&claim.expect, verdict) {
                (_, Verdict::Reproduced) => None,
                (Expect::NotTestable { why, .. }, _) => Some(why.clone()),
                _ if claim.explain.is_empty() => None,
                _ => {
                    let evidence: Vec<Vec<(String, f64)>> =
                        of_id.iter().map(|c| c.evidence.clone()).collect();
                    Some(fill(&claim.explain, &evidence))
                }
            };
            ClaimResult {
                id: claim.id.clone(),
                claim: claim.claim.clone(),
                source: claim.source,
                paper: claim.paper,
                unit: claim.unit.clone(),
                seeds: values.len(),
                mean,
                ci95,
                verdict,
                explanation,
                expect: claim.expect.clone(),
                values,
            }
        })
        .collect()
}

/// A finding the paper did not state but the run shows, in words with numbers from the
/// run: most often a baseline (the literature's, or a modern mechanism) that beats the
/// paper's technique. `text` cites evidence as `{name}`, filled in with the mean over
/// seeds, as an explanation does.
#[derive(Debug, Clone, PartialEq)]
pub struct Finding {
    pub id: String,
    pub text: String,
    pub evidence: Vec<(String, f64)>,
}

impl Finding {
    pub fn new(id: impl Into<String>, text: impl Into<String>, evidence: Vec<(&str, f64)>) -> Self {
        Finding {
            id: id.into(),
            text: text.into(),
            evidence: owned_evidence(evidence),
        }
    }
}

/// A finding over all seeds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FindingResult {
    pub id: String,
    pub text: String,
    pub seeds: usize,
}

/// Gather the findings of several seeds (by id, in the first seed's order), their text
/// filled in with the means over the seeds that state them.
pub fn summarize_findings(per_seed: &[Vec<Finding>]) -> Vec<FindingResult> {
    by_id(per_seed, |f| &f.id)
        .map(|(finding, of_id)| {
            let evidence: Vec<Vec<(String, f64)>> =
                of_id.iter().map(|f| f.evidence.clone()).collect();
            FindingResult {
                id: finding.id.clone(),
                text: fill(&finding.text, &evidence),
                seeds: evidence.len(),
            }
        })
        .collect()
}

/// What became of one of the paper's figures or tables in the reproduction.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", tag = "status")]
pub enum FigureStatus {
    /// Drawn in these figures of the report (their ids), and the shape the paper's
    /// figure shows holds on their data: the property, and the numbers it held on.
    Reproduced {
        figures: Vec<String>,
        shape: String,
        measured: String,
    },
    /// Drawn, but the shape the paper's figure shows does not hold on the data: the
    /// property, and what was measured instead.
    #[serde(rename = "drawn-shape-differs")]
    ShapeDiffers {
        figures: Vec<String>,
        shape: String,
        measured: String,
    },
    /// Replaced by what the model can show instead: these figures, and why.
    Proxy { figures: Vec<String>, why: String },
    /// Not in the report, and why.
    Missing { why: String },
}

/// One figure or table of the paper.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PaperFigure {
    /// As the paper numbers it: "Fig. 4", "Table 2".
    pub paper: String,
    /// What it shows.
    pub shows: String,
    #[serde(flatten)]
    pub status: FigureStatus,
    /// The shape a drawn figure must have to count as reproduced, checked on the data
    /// when the report is written ([`PaperFigure::check_shape`]).
    #[serde(skip)]
    pub shape: Option<Shape>,
}

impl PaperFigure {
    /// The paper's figure drawn in `figures`, reproduced when `shape` holds on their data
    /// (until checked, it is said to differ: nothing was measured yet).
    pub fn drawn(paper: &str, shows: &str, figures: &[&str], shape: Shape) -> Self {
        let figures = figure_ids(figures);
        let status = FigureStatus::ShapeDiffers {
            figures,
            shape: shape.says(),
            measured: "not checked".into(),
        };
        let mut figure = PaperFigure::new(paper, shows, status);
        figure.shape = Some(shape);
        figure
    }

    pub fn proxy(paper: &str, shows: &str, figures: &[&str], why: &str) -> Self {
        let figures = figure_ids(figures);
        let why = why.into();
        PaperFigure::new(paper, shows, FigureStatus::Proxy { figures, why })
    }

    pub fn missing(paper: &str, shows: &str, why: &str) -> Self {
        let why = why.into();
        PaperFigure::new(paper, shows, FigureStatus::Missing { why })
    }

    fn new(paper: &str, shows: &str, status: FigureStatus) -> Self {
        PaperFigure {
            paper: paper.into(),
            shows: shows.into(),
            status,
            shape: None,
        }
    }

    /// Check the figure's shape on the data of the report's figures (`data(id)`), and
    /// make its status reproduced or drawn-shape-differs by the result. A figure with no
    /// shape to check is left as it is.
    pub fn check_shape<'a>(&mut self, data: &dyn Fn(&str) -> Option<&'a FigureData>) {
        let Some(shape) = &self.shape else {
            return;
        };
        let figures = match &self.status {
            FigureStatus::Reproduced { figures, .. }
            | FigureStatus::ShapeDiffers { figures, .. } => figures.clone(),
            _ => return,
        };
        let checked = shape.check(data);
        let (shape, measured) = (shape.says(), checked.measured);
        self.status = if checked.holds {
            FigureStatus::Reproduced {
                figures,
                shape,
                measured,
            }
        } else {
            FigureStatus::ShapeDiffers {
                figures,
                shape,
                measured,
            }
        };
    }

    /// The figures of the report it is drawn in (none when missing).
    pub fn figure_ids(&self) -> &[String] {
        match &self.status {
            FigureStatus::Reproduced { figures, .. }
            | FigureStatus::ShapeDiffers { figures, .. }
            | FigureStatus::Proxy { figures, .. } => figures,
            FigureStatus::Missing { .. } => &[],
        }
    }
}

fn figure_ids(figures: &[&str]) -> Vec<String> {
    figures.iter().map(|f| f.to_string()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn findings_are_filled_with_means_over_seeds() {
        let f = |v: f64| vec![Finding::new("dwf", "clock-dwf saves {x} %", vec![("x", v)])];
        let results = summarize_findings(&[f(30.0), f(36.0)]);
        assert_eq!(results[0].text, "clock-dwf saves 33 %");
        assert_eq!(results[0].seeds, 2);
    }

    #[test]
    fn the_interval_is_student_t_over_the_seeds() {
        // 1, 2, 3: mean 2, s = 1, half-width t(2) / sqrt(3) = 4.303 / 1.732 = 2.484.
        let (mean, ci) = mean_ci95(&[1.0, 2.0, 3.0]);
        assert_eq!(mean, 2.0);
        assert!((ci[1] - 2.0 - 4.303 / 3f64.sqrt()).abs() < 1e-12);
        assert!((ci[0] + ci[1] - 4.0).abs() < 1e-12);
        assert_eq!(mean_ci95(&[5.0]), (5.0, [5.0, 5.0]));
        assert!(mean_ci95(&[]).0.is_nan());
        assert_eq!(mean_ci95(&[f64::NAN, 4.0]).0, 4.0);
    }

    #[test]
    fn value_verdicts_follow_the_rule() {
        let v = |paper, mean, ci| verdict(&Expect::Value, Some(paper), mean, ci);
        // Paper inside the interval, though the mean is far.
        assert_eq!(v(58.0, 30.0, [20.0, 60.0]), Verdict::Reproduced);
        // Mean within 25 % of the paper, interval not covering it.
        assert_eq!(v(58.0, 44.0, [43.0, 45.0]), Verdict::Reproduced);
        assert_eq!(v(58.0, 43.0, [42.0, 44.0]), Verdict::DirectionOnly);
        // An overshoot is not a success: -45 % against -22 % is direction-only.
        assert_eq!(v(22.0, 45.0, [44.0, 46.0]), Verdict::DirectionOnly);
        assert_eq!(v(5.0, -1350.0, [-1400.0, -1300.0]), Verdict::NotReproduced);
        assert_eq!(v(6.0, 0.0, [0.0, 0.0]), Verdict::NotReproduced);
        assert_eq!(v(6.0, f64::NAN, [f64::NAN; 2]), Verdict::NotReproduced);
    }

    #[test]
    fn bound_verdicts_follow_the_rule() {
        let at_least = Expect::AtLeast { bound: 0.0 };
        assert_eq!(
            verdict(&at_least, None, 1.0, [0.5, 1.5]),
            Verdict::Reproduced
        );
        assert_eq!(
            verdict(&at_least, None, 1.0, [-0.5, 2.5]),
            Verdict::DirectionOnly
        );
        assert_eq!(
            verdict(&at_least, None, -1.0, [-2.0, 0.5]),
            Verdict::NotReproduced
        );
        let at_most = Expect::AtMost { bound: 25.0 };
        assert_eq!(
            verdict(&at_most, None, 10.0, [5.0, 15.0]),
            Verdict::Reproduced
        );
        assert_eq!(
            verdict(&at_most, None, 30.0, [20.0, 40.0]),
            Verdict::NotReproduced
        );
        let no = Expect::NotTestable {
            why: "by construction".into(),
            claimed: None,
        };
        assert_eq!(
            verdict(&no, Some(3.0), 3.0, [3.0, 3.0]),
            Verdict::NotTestable
        );
    }

    #[test]
    fn summaries_gather_seeds_and_explain_what_is_not_reproduced() {
        let claim = |measured: f64, share: f64| {
            Claim::value("fmp", "FMP cuts response time by 11%", 11.0, measured, "%").explained(
                "{share} % of faults are first touches",
                vec![("share", share)],
            )
        };
        let results = summarize(&[
            vec![claim(5.7, 90.0)],
            vec![claim(3.8, 92.0)],
            vec![claim(3.0, 91.0)],
        ]);
        let r = &results[0];
        assert_eq!((r.seeds, r.values.clone()), (3, vec![5.7, 3.8, 3.0]));
        assert!((r.mean - 12.5 / 3.0).abs() < 1e-12);
        assert_eq!(r.verdict, Verdict::DirectionOnly);
        assert_eq!(
            r.explanation.as_deref(),
            Some("91 % of faults are first touches")
        );

        let reproduced = summarize(&[vec![claim(11.0, 90.0)]]);
        assert_eq!(reproduced[0].verdict, Verdict::Reproduced);
        assert_eq!(reproduced[0].explanation, None);
        let json = serde_json::to_value(&results[0]).unwrap();
        for key in [
            "id",
            "claim",
            "paper",
            "unit",
            "seeds",
            "mean",
            "ci95",
            "verdict",
            "explanation",
        ] {
            assert!(json.get(key).is_some(), "{key}");
        }
        assert_eq!(json["verdict"], "direction-only");
    }

    #[test]
    fn claims_findings_and_figures_read_back_from_json() {
        let mut claims = summarize(&[vec![
            Claim::value("a", "A", 1.0, f64::NAN, "%"),
            Claim::at_least("b", "B", 0.0, 2.0, "points").not_testable("by construction"),
        ]]);
        let json = serde_json::to_string(&claims).unwrap();
        let back: Vec<ClaimResult> = serde_json::from_str(&json).unwrap();
        assert!(back[0].mean.is_nan() && back[0].ci95[1].is_nan() && back[0].values[0].is_nan());
        assert_eq!(back[0].verdict, Verdict::NotReproduced);
        claims.remove(0);
        assert_eq!(back[1..], claims[..]);
        let figures = vec![
            PaperFigure::drawn(
                "Fig. 4",
                "hit ratio",
                &["hit-ratio"],
                Shape::rising("hit-ratio", "lru"),
            ),
            PaperFigure::proxy("Fig. 5", "power", &["energy"], "no power trace"),
            PaperFigure::missing("Table 2", "devices", "not modelled"),
        ];
        let json = serde_json::to_string(&figures).unwrap();
        assert!(json.contains(r#""status":"drawn-shape-differs""#), "{json}");
        // The shape to check is not written, only what it says and what was measured.
        let mut unchecked = figures.clone();
        unchecked[0].shape = None;
        assert_eq!(
            serde_json::from_str::<Vec<PaperFigure>>(&json).unwrap(),
            unchecked
        );
    }
}
