//! Named figures of a run: one listing per result type, from which every name, every
//! value and every lookup is derived.
//!
//! A result type implements [`Stats::visit`], the one place that says which figures it
//! has, in which order and under which names. Most derive it, `#[derive(Stats)]` (crate
//! `mobmem-derive`): the listing is then the struct's number fields in declaration order,
//! with attributes for the fields left out, renamed, nested or followed by computed
//! figures. Tables, CSV and JSON columns, `--json`
//! output and lookups by name ([`Stats::value`], [`Stats::names`]) all come from it.
//! Result types nest: a part of a result that is a stats type of its own (the swap
//! devices' I/O counts, for example) is visited in place with `visitor.nest(part)`, so the
//! figures form a tree whose leaves are the named values. A result type that is written
//! as a record of its figures serializes through [`Figures`], so its keys are the listing's
//! names too.

use serde::ser::{Serialize, SerializeMap, Serializer};

pub use mobmem_derive::Stats;

/// The arithmetic mean, summed in order; NaN when there are no values.
pub fn mean(values: impl IntoIterator<Item = f64>) -> f64 {
    let mut n = 0usize;
    let sum: f64 = values.into_iter().inspect(|_| n += 1).sum();
    if n == 0 {
        f64::NAN
    } else {
        sum / n as f64
    }
}

/// Nearest-rank percentile `p` (0 to 100) of sorted values; NaN when there are none.
pub fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

/// Receives the figures of a [`Stats`] value, in order.
pub trait Visitor {
    /// One figure.
    fn figure(&mut self, name: &'static str, value: f64);

    /// A counter.
    #[inline]
    fn count(&mut self, name: &'static str, value: u64) {
        self.figure(name, value as f64);
    }

    /// A figure that may be missing: NaN when it is.
    #[inline]
    fn optional(&mut self, name: &'static str, value: Option<f64>) {
        self.figure(name, value.unwrap_or(f64::NAN));
    }
}

impl<F: FnMut(&'static str, f64)> Visitor for F {
    #[inline]
    fn figure(&mut self, name: &'static str, value: f64) {
        self(name, value)
    }
}

/// A value a listing reports as one figure: an integer as a counter, an `f64` as a real
/// figure, an `Option<f64>` as a figure that may be missing. What `#[derive(Stats)]`
/// lists a field of a number type with.
pub trait Number {
    fn list(&self, name: &'static str, visitor: &mut dyn Visitor);
}

impl Number for u64 {
    fn list(&self, name: &'static str, visitor: &mut dyn Visitor) {
        visitor.count(name, *self);
    }
}

impl Number for usize {
    fn list(&self, name: &'static str, visitor: &mut dyn Visitor) {
        visitor.count(name, *self as u64);
    }
}

impl Number for u32 {
    fn list(&self, name: &'static str, visitor: &mut dyn Visitor) {
        visitor.count(name, u64::from(*self));
    }
}

impl Number for f64 {
    fn list(&self, name: &'static str, visitor: &mut dyn Visitor) {
        visitor.figure(name, *self);
    }
}

impl Number for Option<f64> {
    fn list(&self, name: &'static str, visitor: &mut dyn Visitor) {
        visitor.optional(name, *self);
    }
}

/// A result with named figures.
pub trait Stats {
    /// Report every figure, by name, in a stable order. Names are distinct.
    fn visit(&self, visitor: &mut dyn Visitor);

    /// Every figure, by name, in order.
    fn values(&self) -> Vec<(&'static str, f64)> {
        let mut out = Vec::new();
        self.visit(&mut |name, value| out.push((name, value)));
        out
    }

    /// One figure by its name.
    fn value(&self, name: &str) -> Option<f64> {
        let mut found = None;
        self.visit(&mut |n: &'static str, v| {
            if found.is_none() && n == name {
                found = Some(v);
            }
        });
        found
    }

    /// The names of every figure, in order.
    fn names() -> Vec<&'static str>
    where
        Self: Default + Sized,
    {
        Self::default()
            .values()
            .into_iter()
            .map(|(name, _)| name)
            .collect()
    }
}

impl dyn Visitor + '_ {
    /// Every figure of a part that is a stats type of its own, in place.
    pub fn nest(&mut self, part: &dyn Stats) {
        part.visit(self);
    }
}

/// Counters visited as themselves: `counts!(visitor, self; hits, misses)` reports
/// `self.hits` as "hits" and so on.
#[macro_export]
macro_rules! counts {
    ($visitor:expr, $from:expr; $($field:ident),+ $(,)?) => {
        $( $visitor.count(stringify!($field), $from.$field); )+
    };
}

/// Real-valued fields visited as themselves: `reals!(visitor, self; fg_time)`.
#[macro_export]
macro_rules! reals {
    ($visitor:expr, $from:expr; $($field:ident),+ $(,)?) => {
        $( $visitor.figure(stringify!($field), $from.$field); )+
    };
}

/// A [`Stats`] value written as a map of its figures, by name in the listing's order:
/// counters as integers, other figures as floats (a missing figure, NaN, as the format
/// writes NaN: `null` in JSON). `impl Serialize for T` can forward to `Figures(self)`.
pub struct Figures<'a, S: ?Sized>(pub &'a S);

impl<S: Stats + ?Sized> Serialize for Figures<'_, S> {
    fn serialize<Z: Serializer>(&self, serializer: Z) -> Result<Z::Ok, Z::Error> {
        enum Figure {
            Count(u64),
            Real(f64),
        }
        struct Collect(Vec<(&'static str, Figure)>);
        impl Visitor for Collect {
            fn figure(&mut self, name: &'static str, value: f64) {
                self.0.push((name, Figure::Real(value)));
            }
            fn count(&mut self, name: &'static str, value: u64) {
                self.0.push((name, Figure::Count(value)));
            }
        }
        let mut figures = Collect(Vec::new());
        self.0.visit(&mut figures);
        let mut map = serializer.serialize_map(Some(figures.0.len()))?;
        for (name, figure) in &figures.0 {
            match figure {
                Figure::Count(v) => map.serialize_entry(name, v)?,
                Figure::Real(v) => map.serialize_entry(name, v)?,
            }
        }
        map.end()
    }
}

/// Checks every [`Stats`] type should pass: names distinct, lookups agree with the
/// listing. For tests.
pub fn check_listing<S: Stats + Default>() -> Result<(), String> {
    let names = S::names();
    let mut sorted = names.clone();
    sorted.sort_unstable();
    sorted.dedup();
    if sorted.len() != names.len() {
        return Err(format!("duplicate figure names in {names:?}"));
    }
    let value = S::default();
    for (name, v) in value.values() {
        let found = value.value(name);
        let same = found.is_some_and(|f| f == v || (f.is_nan() && v.is_nan()));
        if !same {
            return Err(format!("value({name}) is {found:?}, the listing says {v}"));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Default, Stats)]
    struct Io {
        reads: u64,
        writes: u64,
    }

    /// Listed from its fields: a counter, a part in place followed by a figure computed
    /// from it, a real, one that may be missing; a name and a skipped number left out.
    #[derive(Default, Stats)]
    struct Run {
        hits: u64,
        #[stats(nest, then(io_per_hit = (self.io.reads + self.io.writes) as f64 / self.hits as f64))]
        io: Io,
        time: f64,
        #[allow(dead_code)]
        name: String,
        #[allow(dead_code)]
        #[stats(skip)]
        scratch: u64,
        lifetime: Option<f64>,
    }

    /// Renamed fields, small integers, and figures in place of a skipped field.
    #[derive(Default, Stats)]
    struct Renamed {
        #[stats(rename = "pages")]
        page_count: usize,
        #[stats(skip, then(time_ms = self.time_ns / 1e6, half = self.small / 2))]
        time_ns: f64,
        small: u32,
    }

    #[test]
    fn derived_listings_rename_skip_and_compute() {
        let r = Renamed {
            page_count: 3,
            time_ns: 2.5e6,
            small: 9,
        };
        assert_eq!(
            r.values(),
            vec![
                ("pages", 3.0),
                ("time_ms", 2.5),
                ("half", 4.0),
                ("small", 9.0)
            ]
        );
        check_listing::<Renamed>().unwrap();
        let run = Run {
            scratch: 5,
            ..sample_run()
        };
        assert_eq!(run.value("scratch"), None);
        assert_eq!(run.value("name"), None);
    }

    fn sample_run() -> Run {
        Run {
            hits: 4,
            io: Io {
                reads: 6,
                writes: 2,
            },
            time: 1.5,
            lifetime: None,
            ..Run::default()
        }
    }

    #[test]
    fn one_listing_gives_names_values_and_lookups() {
        let run = sample_run();
        let values = run.values();
        assert_eq!(
            values.iter().map(|(n, _)| *n).collect::<Vec<_>>(),
            vec!["hits", "reads", "writes", "io_per_hit", "time", "lifetime"]
        );
        assert_eq!(values[3].1, 2.0);
        assert_eq!(run.value("writes"), Some(2.0));
        assert_eq!(run.value("time"), Some(1.5));
        assert!(run.value("lifetime").unwrap().is_nan());
        assert_eq!(run.value("nothing"), None);
        assert_eq!(Run::names().len(), 6);
        check_listing::<Run>().unwrap();
    }

    #[test]
    fn figures_serialize_by_name_with_counters_as_integers() {
        let run = sample_run();
        assert_eq!(
            serde_json::to_string(&Figures(&run)).unwrap(),
            r#"{"hits":4,"reads":6,"writes":2,"io_per_hit":2.0,"time":1.5,"lifetime":null}"#
        );
    }

    #[derive(Default)]
    struct Twice;

    impl Stats for Twice {
        fn visit(&self, v: &mut dyn Visitor) {
            v.count("a", 1);
            v.count("a", 2);
        }
    }

    #[test]
    fn duplicate_names_are_caught() {
        assert!(check_listing::<Twice>().unwrap_err().contains("duplicate"));
    }
}
