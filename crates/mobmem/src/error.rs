//! Errors are values: every failure a user can cause (bad file, bad config, unknown
//! name) comes back as an [`Error`] that names where it happened.

use std::fmt;
use std::ops::RangeInclusive;
use std::path::PathBuf;

/// Where in an input a problem was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Position {
    /// 1-based line of a text file.
    Line(u64),
    /// 0-based record index of a binary file, with the byte offset of that record.
    Record { index: u64, offset: u64 },
    /// Byte offset of a binary file (header, tables).
    Byte(u64),
}

impl fmt::Display for Position {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Position::Line(line) => write!(f, "line {line}"),
            Position::Record { index, offset } => {
                write!(f, "record {index} (byte offset {offset})")
            }
            Position::Byte(offset) => write!(f, "byte offset {offset}"),
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The message already says what the OS said; it is not also given as the error's
    /// source, which chain printers (`{:#}`) would print a second time.
    #[error("{path}: {error}")]
    Io {
        path: PathBuf,
        error: std::io::Error,
    },
    /// Malformed or truncated input.
    #[error("{path}: {position}: {message}")]
    Format {
        path: PathBuf,
        position: Position,
        message: String,
    },
    /// A configuration that cannot be run.
    #[error("{context}: {message}")]
    Config { context: String, message: String },
    #[error("unknown {what} '{name}' (known: {})", known.join(", "))]
    Unknown {
        what: &'static str,
        name: String,
        known: Vec<String>,
    },
    /// The real machine refused or was interrupted (`host/`): the message says what was
    /// being done and what went wrong.
    #[error("{0}")]
    Host(String),
    /// A mechanism's memory broke one of its invariants (a page in two places, a frame
    /// or a swap slot lost): a fault of the simulator, found by
    /// [`crate::core::events::with_checks`].
    #[error("memory invariant broken: {0}")]
    Invariant(String),
}

impl Error {
    pub fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Error::Io {
            path: path.into(),
            error: source,
        }
    }

    pub fn format(
        path: impl Into<PathBuf>,
        position: Position,
        message: impl Into<String>,
    ) -> Self {
        Error::Format {
            path: path.into(),
            position,
            message: message.into(),
        }
    }

    pub fn config(context: impl Into<String>, message: impl Into<String>) -> Self {
        Error::Config {
            context: context.into(),
            message: message.into(),
        }
    }

    pub fn host(message: impl Into<String>) -> Self {
        Error::Host(message.into())
    }

    /// The one of `all` that `name_of` calls `name`, or an [`Error::Unknown`] listing
    /// every name: the `FromStr` of a small enum of named choices.
    pub fn find_named<T: Copy>(
        what: &'static str,
        name: &str,
        all: &[T],
        name_of: impl Fn(&T) -> &'static str,
    ) -> Result<T> {
        all.iter()
            .find(|t| name_of(t) == name)
            .copied()
            .ok_or_else(|| Error::Unknown {
                what,
                name: name.to_string(),
                known: all.iter().map(|t| name_of(t).to_string()).collect(),
            })
    }
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Fields of a value with their names, as `(name, value)` pairs for a loop over checks or
/// keys: `fields!(self; read_ns, memory.dram_mib)` is `[("read_ns", self.read_ns),
/// ("memory.dram_mib", self.memory.dram_mib)]`. The name is the field as written, so the
/// two cannot drift apart.
#[macro_export]
macro_rules! fields {
    ($from:expr; $($($field:ident).+),+ $(,)?) => {
        [$((stringify!($($field).+), $from.$($field).+)),+]
    };
}

/// Checks of the fields of one configuration, named by its context (`Check("reclaim
/// config")`): each is an [`Error::Config`] naming the field and its value when the value
/// is out of bounds.
#[derive(Debug, Clone, Copy)]
pub struct Check(pub &'static str);

impl Check {
    /// An error of this context saying `message`.
    pub fn fail<T>(self, message: impl Into<String>) -> Result<T> {
        Err(Error::config(self.0, message))
    }

    fn unless(self, ok: bool, message: impl FnOnce() -> String) -> Result<()> {
        if ok {
            Ok(())
        } else {
            self.fail(message())
        }
    }

    /// "NAME must be LO..=HI, got VALUE" unless `value` lies in `range`.
    pub fn range<T>(self, name: &str, value: T, range: RangeInclusive<T>) -> Result<()>
    where
        T: PartialOrd + fmt::Display,
    {
        let ok = range.contains(&value);
        let (lo, hi) = range.into_inner();
        self.unless(ok, || format!("{name} must be {lo}..={hi}, got {value}"))
    }

    /// "NAME must be at most MOST, got VALUE" unless `value` is.
    pub fn at_most<T>(self, name: &str, value: T, most: T) -> Result<()>
    where
        T: PartialOrd + fmt::Display,
    {
        self.unless(value <= most, || {
            format!("{name} must be at most {most}, got {value}")
        })
    }

    /// A range `[min, max]` to draw from: "NAME must be [min, max] with LEAST <= min <=
    /// max <= MOST, got [MIN, MAX]" unless it is one.
    pub fn min_max<T>(self, name: &str, [min, max]: [T; 2], least: T, most: T) -> Result<()>
    where
        T: PartialOrd + fmt::Display,
    {
        self.unless(least <= min && min <= max && max <= most, || {
            format!("{name} must be [min, max] with {least} <= min <= max <= {most}, got [{min}, {max}]")
        })
    }

    /// "NAME must be in [0, 1], got VALUE" unless `value` is a share.
    pub fn share(self, name: &str, value: f64) -> Result<()> {
        self.unless((0.0..=1.0).contains(&value), || {
            format!("{name} must be in [0, 1], got {value}")
        })
    }
}
