//! Named figures of a run: one listing per result type, from which every name, every
//! value and every lookup is derived.
//!
//! A result type implements [`Stats::visit`], the one place that says which figures it
//! has, in which order and under which names. Tables, CSV and JSON columns, `--json`
//! output and lookups by name ([`Stats::value`], [`Stats::names`]) all come from it.
//! Result types nest: a part of a result that is a stats type of its own (the swap
//! devices' I/O counts, for example) is visited in place with `visitor.nest(part)`, so the
//! figures form a tree whose leaves are the named values.

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

    #[derive(Default)]
    struct Io {
        reads: u64,
        writes: u64,
    }

    impl Stats for Io {
        fn visit(&self, v: &mut dyn Visitor) {
            counts!(v, self; reads, writes);
        }
    }

    #[derive(Default)]
    struct Run {
        hits: u64,
        io: Io,
        time: f64,
        lifetime: Option<f64>,
    }

    impl Stats for Run {
        fn visit(&self, v: &mut dyn Visitor) {
            counts!(v, self; hits);
            v.nest(&self.io);
            v.figure(
                "io_per_hit",
                (self.io.reads + self.io.writes) as f64 / self.hits as f64,
            );
            reals!(v, self; time);
            v.optional("lifetime", self.lifetime);
        }
    }

    #[test]
    fn one_listing_gives_names_values_and_lookups() {
        let run = Run {
            hits: 4,
            io: Io {
                reads: 6,
                writes: 2,
            },
            time: 1.5,
            lifetime: None,
        };
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
