//! Changes to an experiment file's keys from the command line: `--set KEY=VALUE` and the
//! parameter study `--sweep KEY=V1,V2,...`.
//!
//! A key is a dotted path into the file's tables (`reclaim.swappiness`); a number names
//! an element of a list (`workloads.0.seed`). A value is read as a TOML value (`60`,
//! `0.5`, `true`, `[0.05, 0.2]`, `"lru"`); a bare word that is not one (`lru`) is a
//! string. The changed file is then checked exactly as if it had been written so: a key
//! its kind does not know, or a value of the wrong type, is refused with the file's own
//! message, which names the `--set` that caused it.

use crate::{Error, Result};

/// Most assignments one command may make (`--set` and the swept keys together).
pub const MAX_OVERRIDES: usize = 64;
/// Most points a `--sweep` grid may have (the product of the values of every key).
pub const MAX_SWEEP_POINTS: usize = 1000;
/// Longest dotted key, in segments.
const MAX_KEY_DEPTH: usize = 16;

/// One `KEY=VALUE`, parsed.
#[derive(Debug, Clone, PartialEq)]
pub struct Override {
    /// The key's segments (`["reclaim", "swappiness"]`).
    pub path: Vec<String>,
    pub value: toml::Value,
    /// As given on the command line, for provenance and errors.
    pub text: String,
}

/// The option a text came from, for errors.
fn usage_error(option: &str, text: &str, message: impl std::fmt::Display) -> Error {
    Error::config(
        format!("{option} {text}"),
        format!("{message} (expected KEY=VALUE, as in `reclaim.swappiness=60`)"),
    )
}

fn parse_key(option: &str, text: &str, key: &str) -> Result<Vec<String>> {
    let path: Vec<String> = key.split('.').map(str::to_string).collect();
    if path.len() > MAX_KEY_DEPTH {
        return Err(usage_error(
            option,
            text,
            format!("the key has more than {MAX_KEY_DEPTH} parts"),
        ));
    }
    for segment in &path {
        let bare = !segment.is_empty()
            && segment
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
        if !bare {
            return Err(usage_error(
                option,
                text,
                format!(
                    "key part '{}' is not a bare key (letters, digits, '_', '-')",
                    segment.escape_debug()
                ),
            ));
        }
    }
    Ok(path)
}

/// One value as TOML reads it; a bare word that is not TOML is a string.
fn parse_value(option: &str, text: &str, value: &str) -> Result<toml::Value> {
    let trimmed = value.trim();
    match toml::from_str::<toml::Table>(&format!("v = {trimmed}")) {
        Ok(mut table) => Ok(table.remove("v").unwrap_or(toml::Value::Boolean(false))),
        Err(e) => {
            // What looks like a number, a list, a table or a quoted string must be one.
            let structured = trimmed
                .chars()
                .next()
                .is_none_or(|c| "[{\"'+-.".contains(c) || c.is_ascii_digit());
            if structured {
                let message = e.message().trim_end().to_string();
                Err(usage_error(
                    option,
                    text,
                    format!(
                        "value '{}' is not a TOML value: {message}",
                        trimmed.escape_debug()
                    ),
                ))
            } else {
                Ok(toml::Value::String(trimmed.to_string()))
            }
        }
    }
}

impl Override {
    /// Parse `KEY=VALUE` given to `option` (named in errors).
    pub fn parse(option: &str, text: &str) -> Result<Override> {
        let (key, value) = text
            .split_once('=')
            .ok_or_else(|| usage_error(option, text, "no '='"))?;
        Ok(Override {
            path: parse_key(option, text, key.trim())?,
            value: parse_value(option, text, value)?,
            text: text.to_string(),
        })
    }

    /// The key, dotted.
    pub fn key(&self) -> String {
        self.path.join(".")
    }

    /// Set the key in `table`, making the tables on its way that are missing; a list's
    /// element is named by its number. A float key given a whole number stays a float
    /// (`dram_fraction=1`).
    pub fn apply(&self, table: &mut toml::Table) -> Result<()> {
        apply_path(table, self)
    }
}

fn describe(value: &toml::Value) -> String {
    match value {
        toml::Value::Array(a) => format!("a list of {} element(s)", a.len()),
        other => format!("a {}", other.type_str()),
    }
}

/// `new`, as a float where `old` is one and `new` a whole number.
fn coerced(old: &toml::Value, new: toml::Value) -> toml::Value {
    match (old, new) {
        (toml::Value::Float(_), toml::Value::Integer(n)) => toml::Value::Float(n as f64),
        (_, new) => new,
    }
}

/// Apply `overrides` in order to a file's keys.
pub fn apply_all(table: &mut toml::Table, overrides: &[Override]) -> Result<()> {
    for o in overrides {
        o.apply(table)?;
    }
    Ok(())
}

/// Walks `o.path` from `table`: while it names tables, into them; at a list, the next
/// part is an index (`workloads.0.seed`).
fn apply_path(table: &mut toml::Table, o: &Override) -> Result<()> {
    let fail = |m: String| Error::config(format!("--set {}", o.text), m);
    let mut value_slot: Option<&mut toml::Value> = None;
    let mut walked = String::new();
    let mut rest = &o.path[..];
    let mut table_here: Option<&mut toml::Table> = Some(table);
    while let Some((segment, tail)) = rest.split_first() {
        if !walked.is_empty() {
            walked.push('.');
        }
        walked.push_str(segment);
        let slot: &mut toml::Value = match (table_here.take(), value_slot.take()) {
            (Some(t), _) => {
                if tail.is_empty() {
                    let new = o.value.clone();
                    match t.get_mut(segment.as_str()) {
                        Some(old) => *old = coerced(old, new),
                        None => {
                            t.insert(segment.clone(), new);
                        }
                    }
                    return Ok(());
                }
                t.entry(segment.clone())
                    .or_insert_with(|| toml::Value::Table(toml::Table::new()))
            }
            (None, Some(toml::Value::Array(list))) => {
                let len = list.len();
                let index: usize = segment.parse().map_err(|_| {
                    fail(format!(
                        "`{}` is a list of {len} element(s): name one by its number, from 0",
                        walked.rsplit_once('.').map_or("", |(head, _)| head)
                    ))
                })?;
                let element = list.get_mut(index).ok_or_else(|| {
                    fail(format!(
                        "`{}` has {len} element(s), numbered from 0: there is no {index}",
                        walked.rsplit_once('.').map_or("", |(head, _)| head)
                    ))
                })?;
                if tail.is_empty() {
                    *element = coerced(element, o.value.clone());
                    return Ok(());
                }
                element
            }
            (None, Some(other)) => {
                let parent = walked.rsplit_once('.').map_or("", |(head, _)| head);
                return Err(fail(format!(
                    "`{parent}` is {} in the file, not a table: it has no key `{segment}`",
                    describe(other)
                )));
            }
            (None, None) => unreachable!("the walk holds a table or a value"),
        };
        rest = tail;
        match slot {
            toml::Value::Table(t) => table_here = Some(t),
            other => value_slot = Some(other),
        }
    }
    Ok(())
}

/// A `--sweep KEY=V1,V2,...`: one key and the values it takes, in order.
#[derive(Debug, Clone, PartialEq)]
pub struct SweptKey {
    pub path: Vec<String>,
    /// Each value with its text, for names and tables.
    pub values: Vec<(toml::Value, String)>,
}

impl SweptKey {
    /// Parse `KEY=V1,V2,...`; commas inside a list, a table or quotes do not split.
    pub fn parse(text: &str) -> Result<SweptKey> {
        let option = "--sweep";
        let (key, values) = text
            .split_once('=')
            .ok_or_else(|| usage_error(option, text, "no '='"))?;
        let path = parse_key(option, text, key.trim())?;
        let mut parsed = Vec::new();
        for part in split_top_level(values) {
            let part = part.trim();
            if part.is_empty() {
                return Err(usage_error(option, text, "an empty value in the list"));
            }
            parsed.push((parse_value(option, text, part)?, part.to_string()));
        }
        if parsed.is_empty() {
            return Err(usage_error(option, text, "no values"));
        }
        Ok(SweptKey {
            path,
            values: parsed,
        })
    }

    pub fn key(&self) -> String {
        self.path.join(".")
    }
}

/// Split at the commas outside brackets, braces and quotes.
fn split_top_level(text: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    let (mut depth, mut quote, mut start) = (0i32, None::<char>, 0);
    for (i, c) in text.char_indices() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '"' | '\'') => quote = Some(c),
            (None, '[' | '{') => depth += 1,
            (None, ']' | '}') => depth -= 1,
            (None, ',') if depth == 0 => {
                parts.push(&text[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&text[start..]);
    parts
}

/// One point of a sweep: the assignments it makes, in the order the keys were given.
#[derive(Debug, Clone, PartialEq)]
pub struct SweepPoint {
    pub assignments: Vec<Override>,
}

impl SweepPoint {
    /// A name for the point's report, after the experiment's: `phone-swappiness-60`,
    /// each key's last part and its value, where a value's '.' is `p` and each run of
    /// other characters a folder name cannot hold is one `_` (`[0.05, 0.2]`:
    /// `0p05_0p2`).
    pub fn name(&self, experiment: &str) -> String {
        let mut name = experiment.to_string();
        for a in &self.assignments {
            let key = a.path.last().map_or("", String::as_str);
            let value = a.text.split_once('=').map_or("", |(_, v)| v.trim());
            let mut word = String::new();
            for c in value.chars() {
                match c {
                    '.' => word.push('p'),
                    c if c.is_ascii_alphanumeric() || c == '-' || c == '_' => word.push(c),
                    _ if !word.is_empty() && !word.ends_with('_') => word.push('_'),
                    _ => {}
                }
            }
            name.push('-');
            name.push_str(key);
            name.push('-');
            name.push_str(word.trim_end_matches('_'));
        }
        name
    }
}

/// Every point of the grid of `keys`, the first key varying slowest.
pub fn sweep_points(keys: &[SweptKey]) -> Result<Vec<SweepPoint>> {
    let count = keys
        .iter()
        .try_fold(1usize, |n, k| n.checked_mul(k.values.len()))
        .filter(|&n| n <= MAX_SWEEP_POINTS)
        .ok_or_else(|| {
            Error::config(
                "--sweep",
                format!("the grid has more than {MAX_SWEEP_POINTS} points (docs/limits.md)"),
            )
        })?;
    let mut points = Vec::with_capacity(count);
    for index in 0..count {
        let mut rest = index;
        let mut assignments = vec![None; keys.len()];
        for (k, key) in keys.iter().enumerate().rev() {
            let (value, text) = &key.values[rest % key.values.len()];
            rest /= key.values.len();
            assignments[k] = Some(Override {
                path: key.path.clone(),
                value: value.clone(),
                text: format!("{}={text}", key.key()),
            });
        }
        points.push(SweepPoint {
            assignments: assignments.into_iter().flatten().collect(),
        });
    }
    Ok(points)
}

/// Checks the count of assignments a command makes.
pub fn check_count(sets: usize, swept: usize) -> Result<()> {
    if sets + swept > MAX_OVERRIDES {
        return Err(Error::config(
            "--set/--sweep",
            format!("more than {MAX_OVERRIDES} keys changed (docs/limits.md)"),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(text: &str) -> toml::Table {
        toml::from_str(text).unwrap()
    }

    fn set(t: &mut toml::Table, text: &str) -> Result<()> {
        apply_all(t, &[Override::parse("--set", text)?])
    }

    #[test]
    fn values_are_toml_or_bare_words() {
        let v = |s: &str| Override::parse("--set", s).unwrap().value;
        assert_eq!(v("a=60"), toml::Value::Integer(60));
        assert_eq!(v("a=0.5"), toml::Value::Float(0.5));
        assert_eq!(v("a=true"), toml::Value::Boolean(true));
        assert_eq!(v("a=lru"), toml::Value::String("lru".into()));
        assert_eq!(v("a=\"x y\""), toml::Value::String("x y".into()));
        assert_eq!(
            v("a=[0.05, 0.2]"),
            toml::Value::Array(vec![0.05.into(), 0.2.into()])
        );
        // Looks like a number or a list but is not one: refused, not taken as text.
        for bad in ["a=1.2.3", "a=[1,", "a=\"open"] {
            let e = Override::parse("--set", bad).unwrap_err().to_string();
            assert!(e.contains("not a TOML value") && e.contains(bad), "{e}");
        }
        for bad in ["noequals", "=1", "a..b=1", "a b=1"] {
            let e = Override::parse("--set", bad).unwrap_err().to_string();
            assert!(e.contains(bad) && e.contains("KEY=VALUE"), "{e}");
        }
    }

    #[test]
    fn keys_walk_tables_and_lists() {
        let mut t = table(
            "name = 'x'\nfrac = 0.5\n[reclaim]\nswappiness = 100\n[[workloads]]\nseed = 1\n[[workloads]]\nseed = 2\n",
        );
        set(&mut t, "reclaim.swappiness=60").unwrap();
        set(&mut t, "frac=1").unwrap();
        set(&mut t, "workloads.1.seed=9").unwrap();
        set(&mut t, "new.deep.key=lru").unwrap();
        assert_eq!(t["reclaim"]["swappiness"], toml::Value::Integer(60));
        assert_eq!(
            t["frac"],
            toml::Value::Float(1.0),
            "a float key stays a float"
        );
        assert_eq!(t["workloads"][0]["seed"], toml::Value::Integer(1));
        assert_eq!(t["workloads"][1]["seed"], toml::Value::Integer(9));
        assert_eq!(t["new"]["deep"]["key"], toml::Value::String("lru".into()));

        let e = set(&mut t, "workloads.seed=3").unwrap_err().to_string();
        assert!(
            e.contains("`workloads` is a list of 2") && e.contains("by its number"),
            "{e}"
        );
        let e = set(&mut t, "workloads.5.seed=3").unwrap_err().to_string();
        assert!(e.contains("there is no 5"), "{e}");
        let e = set(&mut t, "name.inner=3").unwrap_err().to_string();
        assert!(
            e.contains("`name` is a string") && e.contains("--set name.inner=3"),
            "{e}"
        );
    }

    #[test]
    fn sweeps_split_at_top_level_commas_and_make_the_grid() {
        let a = SweptKey::parse("reclaim.swappiness=0,60,100").unwrap();
        let b = SweptKey::parse("dram_fraction=[0.05,0.2],[0.5]").unwrap();
        assert_eq!(a.values.len(), 3);
        assert_eq!(b.values[0].1, "[0.05,0.2]");
        let points = sweep_points(&[a, b]).unwrap();
        assert_eq!(points.len(), 6);
        let texts: Vec<Vec<&str>> = (points.iter())
            .map(|p| p.assignments.iter().map(|o| o.text.as_str()).collect())
            .collect();
        assert_eq!(
            texts[0],
            ["reclaim.swappiness=0", "dram_fraction=[0.05,0.2]"]
        );
        assert_eq!(texts[1], ["reclaim.swappiness=0", "dram_fraction=[0.5]"]);
        assert_eq!(texts[5], ["reclaim.swappiness=100", "dram_fraction=[0.5]"]);
        assert_eq!(
            points[2].name("phone"),
            "phone-swappiness-60-dram_fraction-0p05_0p2"
        );
        assert!(SweptKey::parse("a=1,,2").is_err());
        let many = SweptKey::parse(&format!("a={}", vec!["1"; 40].join(","))).unwrap();
        let e = sweep_points(&[many.clone(), many]).unwrap_err().to_string();
        assert!(e.contains("more than 1000 points"), "{e}");
    }
}
