//! Errors are values: every failure a user can cause (bad file, bad config, unknown
//! name) comes back as an [`Error`] that names where it happened.

use std::fmt;
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
