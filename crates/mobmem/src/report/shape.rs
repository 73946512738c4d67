//! What a paper's figure shows, as a check on the data of the report's own figure.
//!
//! A paper figure counts as reproduced only when its shape is: who is below whom, where
//! lines cross, which way they go. Each [`Shape`] names a figure of the report and its
//! lines, and is checked on what that figure draws ([`FigureData`], the mean over seeds
//! at each x), so the status in `paper-figures.json` comes from the drawn data and not
//! from a word written beside it.

use super::{FigureData, FigurePoint};

/// Where along the x axis a comparison must hold.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Along {
    /// At every x both lines have.
    Every,
    /// At the smallest x both lines have.
    Smallest,
    /// At the largest x both lines have.
    Largest,
    /// At this share of the x values both lines have, or more (0..=1).
    AtLeast(f64),
}

/// A property of a figure's lines.
#[derive(Debug, Clone, PartialEq)]
pub enum Shape {
    /// `line` is below `other` (strictly) along the x axis as `along` says.
    Below {
        figure: String,
        line: String,
        other: String,
        along: Along,
    },
    /// `line` is not below `other` (at or above it) as `along` says: where the paper's
    /// lines meet or cross.
    NotBelow {
        figure: String,
        line: String,
        other: String,
        along: Along,
    },
    /// `line` rises with x (or falls, `rising == false`): its last point beyond its first,
    /// and no step back by more than [`TREND_SLACK`] of the line's range.
    Trend {
        figure: String,
        line: String,
        rising: bool,
    },
    /// Every one of these holds.
    All(Vec<Shape>),
}

/// How far a step may go against a trend, as a share of the line's range (max - min):
/// the seeds' mean wobbles a little where a curve is flat.
pub const TREND_SLACK: f64 = 0.05;

/// What a check found: whether it holds, and the numbers it was decided on.
#[derive(Debug, Clone, PartialEq)]
pub struct Checked {
    pub holds: bool,
    pub measured: String,
}

impl Shape {
    /// `line` below `other` as `along` says, in `figure`.
    pub fn below(figure: &str, line: &str, other: &str, along: Along) -> Shape {
        Shape::Below {
            figure: figure.into(),
            line: line.into(),
            other: other.into(),
            along,
        }
    }

    /// `line` at or above `other` as `along` says, in `figure`.
    pub fn not_below(figure: &str, line: &str, other: &str, along: Along) -> Shape {
        Shape::NotBelow {
            figure: figure.into(),
            line: line.into(),
            other: other.into(),
            along,
        }
    }

    pub fn rising(figure: &str, line: &str) -> Shape {
        Shape::Trend {
            figure: figure.into(),
            line: line.into(),
            rising: true,
        }
    }

    pub fn falling(figure: &str, line: &str) -> Shape {
        Shape::Trend {
            figure: figure.into(),
            line: line.into(),
            rising: false,
        }
    }

    /// The figures this shape reads.
    pub fn figures(&self) -> Vec<&str> {
        match self {
            Shape::Below { figure, .. }
            | Shape::NotBelow { figure, .. }
            | Shape::Trend { figure, .. } => vec![figure.as_str()],
            Shape::All(parts) => parts.iter().flat_map(Shape::figures).collect(),
        }
    }

    /// The property in words.
    pub fn says(&self) -> String {
        match self {
            Shape::Below {
                figure,
                line,
                other,
                along,
            } => format!("{figure}: {line} below {other} {}", along_words(*along)),
            Shape::NotBelow {
                figure,
                line,
                other,
                along,
            } => format!(
                "{figure}: {line} at or above {other} {}",
                along_words(*along)
            ),
            Shape::Trend {
                figure,
                line,
                rising,
            } => format!(
                "{figure}: {line} {} with x",
                if *rising { "rises" } else { "falls" }
            ),
            Shape::All(parts) => parts.iter().map(Shape::says).collect::<Vec<_>>().join("; "),
        }
    }

    /// Check the shape on the figures' data, `data(id)` giving what figure `id` draws
    /// (`None`: the report has no such figure, and the shape does not hold).
    pub fn check<'a>(&self, data: &dyn Fn(&str) -> Option<&'a FigureData>) -> Checked {
        match self {
            Shape::All(parts) => {
                let checked: Vec<Checked> = parts.iter().map(|p| p.check(data)).collect();
                Checked {
                    holds: checked.iter().all(|c| c.holds),
                    measured: (checked.iter())
                        .map(|c| c.measured.as_str())
                        .collect::<Vec<_>>()
                        .join("; "),
                }
            }
            Shape::Below {
                figure,
                line,
                other,
                along,
            }
            | Shape::NotBelow {
                figure,
                line,
                other,
                along,
            } => {
                let below = matches!(self, Shape::Below { .. });
                let Some(fig) = data(figure) else {
                    return missing(&format!("no figure {figure}"));
                };
                let (Some(a), Some(b)) = (points(fig, line), points(fig, other)) else {
                    return missing(&format!("{figure} lacks {line} or {other}"));
                };
                compare(fig, line, a, other, b, *along, below)
            }
            Shape::Trend {
                figure,
                line,
                rising,
            } => {
                let Some(fig) = data(figure) else {
                    return missing(&format!("no figure {figure}"));
                };
                let Some(p) = points(fig, line) else {
                    return missing(&format!("{figure} lacks {line}"));
                };
                trend(line, p, *rising)
            }
        }
    }
}

fn along_words(along: Along) -> String {
    match along {
        Along::Every => "at every x".into(),
        Along::Smallest => "at the smallest x".into(),
        Along::Largest => "at the largest x".into(),
        Along::AtLeast(share) => format!("at {} % of the x values or more", share * 100.0),
    }
}

fn missing(what: &str) -> Checked {
    Checked {
        holds: false,
        measured: what.to_string(),
    }
}

fn points<'a>(data: &'a FigureData, line: &str) -> Option<&'a [FigurePoint]> {
    (data.lines.iter())
        .find(|(name, points)| name == line && !points.is_empty())
        .map(|(_, points)| points.as_slice())
}

/// A value as the measured text shows it: four significant digits.
fn num(v: f64) -> String {
    if v == 0.0 || !v.is_finite() {
        return format!("{v}");
    }
    let digits = (3 - v.abs().log10().floor() as i32).max(0) as usize;
    format!("{v:.digits$}")
}

/// The x as a reader finds it on the axis: the category's label on a categorical one.
fn x_label(data: &FigureData, x: f64) -> String {
    match &data.categories {
        Some(names) => (names.get(x as usize).cloned()).unwrap_or_else(|| num(x)),
        None => num(x),
    }
}

fn compare(
    data: &FigureData,
    line: &str,
    a: &[FigurePoint],
    other: &str,
    b: &[FigurePoint],
    along: Along,
    below: bool,
) -> Checked {
    // The x values both lines have, in order.
    let common: Vec<(f64, f64, f64)> = (a.iter())
        .filter_map(|p| b.iter().find(|q| q.x == p.x).map(|q| (p.x, p.y, q.y)))
        .collect();
    if common.is_empty() {
        return missing(&format!("{line} and {other} share no x"));
    }
    let ok = |&(_, ya, yb): &(f64, f64, f64)| if below { ya < yb } else { ya >= yb };
    let show = |&(x, ya, yb): &(f64, f64, f64)| {
        format!("at {}: {} against {}", x_label(data, x), num(ya), num(yb))
    };
    match along {
        Along::Smallest | Along::Largest => {
            let at = if along == Along::Smallest {
                common[0]
            } else {
                common[common.len() - 1]
            };
            Checked {
                holds: ok(&at),
                measured: format!("{line} {}", show(&at)),
            }
        }
        Along::Every | Along::AtLeast(_) => {
            let held = common.iter().filter(|c| ok(c)).count();
            let needed = match along {
                Along::AtLeast(share) => (share * common.len() as f64).ceil() as usize,
                _ => common.len(),
            };
            let failing: Vec<String> = common.iter().filter(|c| !ok(c)).map(show).collect();
            let mut measured = format!(
                "{line} {} {other} at {held} of {} x values",
                if below { "below" } else { "at or above" },
                common.len()
            );
            if let Some(first) = failing.first() {
                measured.push_str(&format!(" (not {first})"));
            }
            Checked {
                holds: held >= needed.max(1),
                measured,
            }
        }
    }
}

fn trend(line: &str, p: &[FigurePoint], rising: bool) -> Checked {
    let sign = if rising { 1.0 } else { -1.0 };
    let (min, max) = (p.iter()).fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), q| {
        (lo.min(q.y), hi.max(q.y))
    });
    let slack = TREND_SLACK * (max - min);
    let against = (p.windows(2)).find(|w| sign * (w[1].y - w[0].y) < -slack);
    let (first, last) = (p[0], p[p.len() - 1]);
    let ends = p.len() >= 2 && sign * (last.y - first.y) > 0.0;
    let mut measured = format!(
        "{line} from {} at x {} to {} at x {}",
        num(first.y),
        num(first.x),
        num(last.y),
        num(last.x)
    );
    if let Some(w) = against {
        measured.push_str(&format!(
            " (back from {} to {} between x {} and {})",
            num(w[0].y),
            num(w[1].y),
            num(w[0].x),
            num(w[1].x)
        ));
    }
    Checked {
        holds: ends && against.is_none(),
        measured,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(name: &str, ys: &[(f64, f64)]) -> (String, Vec<FigurePoint>) {
        let points = (ys.iter())
            .map(|&(x, y)| FigurePoint { x, y, lo: y, hi: y })
            .collect();
        (name.to_string(), points)
    }

    fn data(lines: Vec<(String, Vec<FigurePoint>)>) -> FigureData {
        FigureData {
            categories: None,
            lines,
            seeds: 1,
        }
    }

    fn check(shape: &Shape, fig: &FigureData) -> Checked {
        shape.check(&|id: &str| (id == "f").then_some(fig))
    }

    #[test]
    fn below_holds_only_where_it_is_asked() {
        // a crosses b between x 2 and 3.
        let fig = data(vec![
            line("a", &[(1.0, 1.0), (2.0, 2.0), (3.0, 5.0)]),
            line("b", &[(1.0, 3.0), (2.0, 3.0), (3.0, 4.0)]),
        ]);
        let at = |along| check(&Shape::below("f", "a", "b", along), &fig);
        assert!(at(Along::Smallest).holds);
        assert!(!at(Along::Largest).holds);
        assert!(!at(Along::Every).holds);
        assert!(at(Along::AtLeast(0.6)).holds);
        assert!(!at(Along::AtLeast(0.7)).holds);
        assert_eq!(
            at(Along::Every).measured,
            "a below b at 2 of 3 x values (not at 3.000: 5.000 against 4.000)"
        );
        assert!(check(&Shape::not_below("f", "a", "b", Along::Largest), &fig).holds);
        // Equal is not below, and is not-below.
        let tie = data(vec![line("a", &[(1.0, 2.0)]), line("b", &[(1.0, 2.0)])]);
        assert!(!check(&Shape::below("f", "a", "b", Along::Every), &tie).holds);
        assert!(check(&Shape::not_below("f", "a", "b", Along::Every), &tie).holds);
    }

    #[test]
    fn a_trend_allows_small_steps_back_only() {
        let wobble = data(vec![line(
            "a",
            &[(1.0, 0.0), (2.0, 50.0), (3.0, 49.0), (4.0, 100.0)],
        )]);
        assert!(check(&Shape::rising("f", "a"), &wobble).holds);
        assert!(!check(&Shape::falling("f", "a"), &wobble).holds);
        let back = data(vec![line(
            "a",
            &[(1.0, 0.0), (2.0, 50.0), (3.0, 40.0), (4.0, 100.0)],
        )]);
        let c = check(&Shape::rising("f", "a"), &back);
        assert!(!c.holds);
        assert!(
            c.measured.contains("back from 50.00 to 40.00"),
            "{}",
            c.measured
        );
        let flat = data(vec![line("a", &[(1.0, 3.0), (2.0, 3.0)])]);
        assert!(!check(&Shape::rising("f", "a"), &flat).holds);
    }

    #[test]
    fn a_missing_figure_or_line_does_not_hold() {
        let fig = data(vec![line("a", &[(1.0, 1.0)])]);
        let c = check(&Shape::below("f", "a", "zz", Along::Every), &fig);
        assert!(!c.holds && c.measured.contains("lacks"));
        let c = check(&Shape::rising("g", "a"), &fig);
        assert!(!c.holds && c.measured == "no figure g");
    }

    #[test]
    fn all_holds_when_every_part_does() {
        let fig = data(vec![
            line("a", &[(1.0, 1.0), (2.0, 2.0)]),
            line("b", &[(1.0, 3.0), (2.0, 4.0)]),
        ]);
        let both = Shape::All(vec![
            Shape::rising("f", "a"),
            Shape::below("f", "a", "b", Along::Every),
        ]);
        assert!(check(&both, &fig).holds);
        assert_eq!(both.says(), "f: a rises with x; f: a below b at every x");
        let one_fails = Shape::All(vec![Shape::rising("f", "a"), Shape::falling("f", "b")]);
        assert!(!check(&one_fails, &fig).holds);
    }

    #[test]
    fn categories_are_named_by_their_labels() {
        let mut fig = data(vec![line("a", &[(0.0, 5.0)]), line("b", &[(0.0, 1.0)])]);
        fig.categories = Some(vec!["camera".into()]);
        let c = check(&Shape::below("f", "a", "b", Along::Smallest), &fig);
        assert_eq!(c.measured, "a at camera: 5.000 against 1.000");
    }
}
