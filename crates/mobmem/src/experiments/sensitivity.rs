//! How much a reproduction's verdicts rest on the constants its model assumes.
//!
//! An experiment file lists its assumed constants (`[[assumed]]`: a key as `--set` takes
//! it, the low and high ends of its plausible range, and where that range comes from).
//! `reproduce --sensitivity` reruns the experiment once per end of each constant, all
//! else as shipped, and compares every claim's verdict with the base run's: a claim is
//! robust when no single end of any constant changes its verdict.

use serde::{Deserialize, Serialize};

use super::overrides::Override;
use crate::report::{ClaimResult, ExperimentReport, Verdict};
use crate::{Error, Result};

/// At most this many assumed constants in a file: each costs two more runs of the whole
/// experiment.
pub const MAX_ASSUMED: usize = 16;

/// One assumed constant of an experiment, and its plausible range.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Assumption {
    /// The constant's key, dotted as `--set` takes it (`swap.launch.cold_start_ns`).
    pub key: String,
    /// The low end of its plausible range (a TOML number).
    pub low: toml::Value,
    /// The high end.
    pub high: toml::Value,
    /// Where the range comes from (a datasheet, a kernel default, a published threshold,
    /// or why none exists and how the range was set).
    pub source: String,
}

/// An end of an assumed constant's range.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum End {
    Low,
    High,
}

impl End {
    pub fn name(self) -> &'static str {
        match self {
            End::Low => "low",
            End::High => "high",
        }
    }
}

impl Assumption {
    /// The value at `end`.
    pub fn value(&self, end: End) -> &toml::Value {
        match end {
            End::Low => &self.low,
            End::High => &self.high,
        }
    }

    /// The key change that runs the experiment at `end`.
    pub fn change(&self, end: End) -> Result<Override> {
        Override::parse("[[assumed]]", &format!("{}={}", self.key, self.value(end)))
    }
}

fn number(value: &toml::Value) -> Option<f64> {
    match value {
        toml::Value::Integer(n) => Some(*n as f64),
        toml::Value::Float(x) if x.is_finite() => Some(*x),
        _ => None,
    }
}

/// Read a file's `[[assumed]]` list (absent: none) and check each entry: a key, two
/// numbers low < high, a source.
pub fn parse_assumed(value: Option<toml::Value>, origin: &str) -> Result<Vec<Assumption>> {
    let Some(value) = value else {
        return Ok(Vec::new());
    };
    let list: Vec<Assumption> = value.try_into().map_err(|e: toml::de::Error| {
        Error::config(
            origin,
            format!(
                "key `assumed`: {} (expected [[assumed]] tables of key, low, high and source)",
                e.message().trim_end()
            ),
        )
    })?;
    if list.len() > MAX_ASSUMED {
        return Err(Error::config(
            origin,
            format!(
                "key `assumed`: {} constants, at most {MAX_ASSUMED} (each reruns the experiment twice)",
                list.len()
            ),
        ));
    }
    for (i, a) in list.iter().enumerate() {
        let at = format!("key `assumed`, entry {} ({})", i + 1, a.key);
        let (Some(low), Some(high)) = (number(&a.low), number(&a.high)) else {
            return Err(Error::config(
                origin,
                format!("{at}: low and high must be finite numbers"),
            ));
        };
        if low >= high {
            return Err(Error::config(
                origin,
                format!("{at}: low ({low}) must be below high ({high})"),
            ));
        }
        if a.source.trim().is_empty() {
            return Err(Error::config(
                origin,
                format!("{at}: `source` must say where the range comes from"),
            ));
        }
        for end in [End::Low, End::High] {
            a.change(end)
                .map_err(|e| Error::config(origin, format!("{at}: {e}")))?;
        }
        if list[..i].iter().any(|b| b.key == a.key) {
            return Err(Error::config(
                origin,
                format!("{at}: the key is listed twice"),
            ));
        }
    }
    Ok(list)
}

/// A claim's value and verdict in one run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Outcome {
    pub mean: f64,
    pub verdict: Verdict,
}

impl Outcome {
    fn of(claim: &ClaimResult) -> Outcome {
        Outcome {
            mean: claim.mean,
            verdict: claim.verdict,
        }
    }
}

/// A claim at one end of one constant.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AtEnd {
    pub key: String,
    pub end: End,
    /// The constant's value there, as TOML writes it.
    pub value: String,
    /// The claim's outcome; `None` when the run made no such claim.
    pub outcome: Option<Outcome>,
}

impl AtEnd {
    /// Whether this end changes the base verdict (a claim the run did not make counts).
    pub fn flips(&self, base: &Outcome) -> bool {
        self.outcome
            .as_ref()
            .is_none_or(|o| o.verdict != base.verdict)
    }

    /// `key=value`.
    pub fn label(&self) -> String {
        format!("{}={}", self.key, self.value)
    }
}

/// One claim across the ends of every constant.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClaimSensitivity {
    pub id: String,
    pub claim: String,
    pub unit: String,
    pub base: Outcome,
    /// Each constant's low end, then its high end, in the file's order.
    pub ends: Vec<AtEnd>,
    /// No single end changes the verdict.
    pub robust: bool,
    /// The ends that change it (`key=value`).
    pub flipped_by: Vec<String>,
}

/// The sensitivity of every claim of a reproduction (`sensitivity.json`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Sensitivity {
    /// The rule, in words.
    pub rule: String,
    pub constants: Vec<Assumption>,
    pub claims: Vec<ClaimSensitivity>,
}

/// The rule on the page.
pub const RULE: &str = "Each assumed constant is set to the low and then the high end of its \
plausible range, every other input as shipped, and the experiment rerun with the same seeds; a \
claim is robust when no single end changes its verdict (a run that no longer makes the claim \
counts as a change).";

/// Compare the claims of `base` with those of the runs at each end of each constant:
/// `runs[i]` holds the low and high runs of `constants[i]`.
pub fn analyze(
    base: &ExperimentReport,
    constants: &[Assumption],
    runs: &[(ExperimentReport, ExperimentReport)],
) -> Sensitivity {
    let claims = (base.claims.iter())
        .map(|claim| {
            let base_outcome = Outcome::of(claim);
            let mut ends = Vec::new();
            for (a, (low, high)) in constants.iter().zip(runs) {
                for (end, run) in [(End::Low, low), (End::High, high)] {
                    let outcome = (run.claims.iter())
                        .find(|c| c.id == claim.id)
                        .map(Outcome::of);
                    ends.push(AtEnd {
                        key: a.key.clone(),
                        end,
                        value: a.value(end).to_string(),
                        outcome,
                    });
                }
            }
            let flipped_by: Vec<String> = (ends.iter())
                .filter(|e| e.flips(&base_outcome))
                .map(AtEnd::label)
                .collect();
            ClaimSensitivity {
                id: claim.id.clone(),
                claim: claim.claim.clone(),
                unit: claim.unit.clone(),
                base: base_outcome,
                robust: flipped_by.is_empty(),
                flipped_by,
                ends,
            }
        })
        .collect();
    Sensitivity {
        rule: RULE.to_string(),
        constants: constants.to_vec(),
        claims,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::Claim;

    fn parse(text: &str) -> Result<Vec<Assumption>> {
        let table: toml::Table = toml::from_str(text).unwrap();
        parse_assumed(table.get("assumed").cloned(), "f.toml")
    }

    #[test]
    fn entries_are_checked() {
        let ok = parse(
            "[[assumed]]\nkey = \"swap.launch.cold_start_ns\"\nlow = 5e8\nhigh = 5e9\nsource = \"s\"\n",
        )
        .unwrap();
        assert_eq!(
            ok[0].change(End::High).unwrap().key(),
            "swap.launch.cold_start_ns"
        );
        let err = |text: &str| parse(text).unwrap_err().to_string();
        let e = err("[[assumed]]\nkey = \"a\"\nlow = 2\nhigh = 1\nsource = \"s\"\n");
        assert!(e.contains("low (2) must be below high (1)"), "{e}");
        let e = err("[[assumed]]\nkey = \"a\"\nlow = \"x\"\nhigh = 1\nsource = \"s\"\n");
        assert!(e.contains("finite numbers"), "{e}");
        let e = err("[[assumed]]\nkey = \"a\"\nlow = 1\nhigh = 2\nsource = \" \"\n");
        assert!(e.contains("where the range comes from"), "{e}");
        let e = err("[[assumed]]\nkey = \"a\"\nlow = 1\nhigh = 2\n");
        assert!(e.contains("source"), "{e}");
        let twice = "[[assumed]]\nkey = \"a\"\nlow = 1\nhigh = 2\nsource = \"s\"\n";
        let e = err(&format!("{twice}{twice}"));
        assert!(e.contains("listed twice"), "{e}");
        let e = err("[[assumed]]\nkey = \"a..b\"\nlow = 1\nhigh = 2\nsource = \"s\"\n");
        assert!(e.contains("entry 1"), "{e}");
    }

    /// Every shipped reproduction's assumed constants land where they say: the file read
    /// at each end holds that end's value at the key.
    #[test]
    fn shipped_assumptions_change_their_key() {
        let mut seen = 0;
        for r in crate::experiments::reproductions::REPRODUCTIONS {
            let shipped = r.experiment_with(&[]).unwrap();
            for a in &shipped.header.assumed {
                for end in [End::Low, End::High] {
                    let file = r.experiment_with(&[a.change(end).unwrap()]).unwrap();
                    let table: toml::Table = toml::from_str(&file.to_toml().unwrap()).unwrap();
                    let mut at = &toml::Value::Table(table);
                    for part in a.key.split('.') {
                        at = at
                            .get(part)
                            .unwrap_or_else(|| panic!("{}: {}", r.name, a.key));
                    }
                    assert_eq!(number(at), number(a.value(end)), "{}: {}", r.name, a.key);
                    seen += 1;
                }
            }
        }
        assert!(seen >= 12, "{seen}");
    }

    fn report(claims: Vec<(&str, f64)>) -> ExperimentReport {
        let claims = (claims.into_iter())
            .map(|(id, v)| Claim::at_most(id, "stays small", 10.0, v, "ms"))
            .collect();
        let table = crate::report::table::Table {
            experiment: "e".into(),
            title: "t".into(),
            keys: Vec::new(),
            rows: Vec::new(),
        };
        ExperimentReport::of_table(table, Vec::new(), (Vec::new(), claims, Vec::new()))
    }

    #[test]
    fn a_claim_is_robust_when_no_end_changes_its_verdict() {
        let a = |key: &str| Assumption {
            key: key.into(),
            low: 1.into(),
            high: 2.into(),
            source: "s".into(),
        };
        let base = report(vec![("x", 5.0), ("y", 5.0)]);
        let runs = vec![
            (
                report(vec![("x", 6.0), ("y", 9.0)]),
                report(vec![("x", 4.0), ("y", 12.0)]),
            ),
            (
                report(vec![("x", 5.0)]),
                report(vec![("x", 5.0), ("y", 5.0)]),
            ),
        ];
        let s = analyze(&base, &[a("k"), a("m")], &runs);
        let x = &s.claims[0];
        assert!(x.robust && x.flipped_by.is_empty());
        assert_eq!(x.ends.len(), 4);
        assert_eq!(x.ends[1].label(), "k=2");
        // y goes over its bound at k's high end, and is missing at m's low end.
        let y = &s.claims[1];
        assert!(!y.robust);
        assert_eq!(y.flipped_by, vec!["k=2", "m=1"]);
        assert_eq!(y.ends[2].outcome, None);
    }
}
