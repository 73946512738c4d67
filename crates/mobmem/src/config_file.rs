//! Reading a config file (experiment, workload, swap, reclaim, KSM settings; TOML):
//! bounded in size and checked to be UTF-8, with errors that give the file and the
//! position of the problem.

use std::io::Read;
use std::ops::Range;
use std::path::Path;

use serde::de::DeserializeOwned;

use crate::{Error, Position, Result};

/// The largest config file read, in bytes: far above any real config, and a bound on
/// what a file such as `/dev/zero` given by mistake can take.
pub const MAX_CONFIG_BYTES: u64 = 16 << 20;

/// The text of the config file `path`.
///
/// # Errors
/// An [`Error::Io`] if it cannot be read; an [`Error::Format`] if it is larger than
/// [`MAX_CONFIG_BYTES`] or not UTF-8 (naming the line and the byte offset of the first
/// invalid byte).
pub fn read(path: &Path) -> Result<String> {
    let file = crate::input::open(path)?;
    let mut bytes = Vec::new();
    file.take(MAX_CONFIG_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| Error::io(path, e))?;
    if bytes.len() as u64 > MAX_CONFIG_BYTES {
        return Err(Error::format(
            path,
            Position::Byte(MAX_CONFIG_BYTES),
            format!(
                "a config file is at most {} MiB; this one is longer",
                MAX_CONFIG_BYTES >> 20
            ),
        ));
    }
    text(path, bytes)
}

/// `bytes`, the content of `path`, as text.
///
/// # Errors
/// An [`Error::Format`] naming the line, column and byte offset of the first byte that
/// is not UTF-8.
pub fn text(path: &Path, bytes: Vec<u8>) -> Result<String> {
    String::from_utf8(bytes).map_err(|e| {
        let offset = e.utf8_error().valid_up_to();
        let before = &e.as_bytes()[..offset];
        let line = before.iter().filter(|&&b| b == b'\n').count() as u64 + 1;
        let line_start = before
            .iter()
            .rposition(|&b| b == b'\n')
            .map_or(0, |i| i + 1);
        Error::format(
            path,
            Position::Line(line),
            format!(
                "byte offset {offset} (column {}): invalid UTF-8 (byte 0x{:02x}); a config \
                 file is UTF-8 text",
                offset - line_start + 1,
                e.as_bytes()[offset]
            ),
        )
    })
}

/// Whether an error about a config file may quote the file's text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Echo {
    /// The user named the file as this kind of config: the offending line helps.
    Quote,
    /// Another file named it (an experiment's `phone_files`, a workload's `config`), so
    /// it may be any file at all, `/etc/shadow` included: an error gives the position
    /// and nothing of the text.
    Withhold,
}

/// `text`, the TOML of `origin`, as a `T` (not yet validated); a parse error is an
/// [`Error::Config`] naming `origin` and the position, quoting the text only if `echo`
/// allows.
pub fn from_toml<T: DeserializeOwned>(text: &str, origin: &str, echo: Echo) -> Result<T> {
    toml::from_str(text).map_err(|e| {
        let message = match echo {
            Echo::Quote => e.to_string().trim_end().to_string(),
            Echo::Withhold => withheld(text, e.span()),
        };
        Error::config(origin, message)
    })
}

/// A parse error told without any of the text: where it is, and why nothing more.
fn withheld(text: &str, span: Option<Range<usize>>) -> String {
    const WHY: &str = "not a config of the kind expected here (its text is not shown: \
                       another file named it, so it may be any file)";
    let Some(start) = span.map(|s| s.start.min(text.len())) else {
        return WHY.to_string();
    };
    let before = &text.as_bytes()[..start];
    let line = before.iter().filter(|&&b| b == b'\n').count() + 1;
    let line_start = before
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |i| i + 1);
    // Columns count characters; a span inside a character counts it once.
    let column = String::from_utf8_lossy(&before[line_start..])
        .chars()
        .count()
        + 1;
    format!("line {line}, column {column}: {WHY}")
}

/// A config parsed from `origin` (by serde, from TOML or JSON) once `validate` accepts
/// it; a parse or validation error is an [`Error::Config`] naming `origin`.
pub fn validated<T, E: std::fmt::Display>(
    parsed: std::result::Result<T, E>,
    origin: &str,
    validate: impl FnOnce(&T) -> Result<()>,
) -> Result<T> {
    let config = parsed.map_err(|e| Error::config(origin, e.to_string()))?;
    validate(&config).map_err(|e| Error::config(origin, e.to_string()))?;
    Ok(config)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn invalid_utf8_names_the_line_and_the_byte() {
        let path = Path::new("c.toml");
        let e = text(path, b"a = 1\nb = \"x\xff\"\n".to_vec())
            .unwrap_err()
            .to_string();
        assert_eq!(
            e,
            "c.toml: line 2: byte offset 12 (column 7): invalid UTF-8 (byte 0xff); a config \
             file is UTF-8 text"
        );
        assert_eq!(text(path, "é = 1".into()).unwrap(), "é = 1");
    }

    #[test]
    fn a_withheld_error_gives_the_place_and_none_of_the_text() {
        #[derive(Debug, serde::Deserialize)]
        #[allow(dead_code)]
        struct Config {
            name: String,
        }
        let secret = "name = \"ok\"\nroot:$6$secret-hash:19000:0:99999:7:::\n";
        let quoted = from_toml::<Config>(secret, "f.toml", Echo::Quote)
            .unwrap_err()
            .to_string();
        assert!(quoted.contains("secret-hash"), "{quoted}");
        let withheld = from_toml::<Config>(secret, "f.toml", Echo::Withhold)
            .unwrap_err()
            .to_string();
        assert!(
            withheld.starts_with("f.toml: line 2, column "),
            "{withheld}"
        );
        assert!(
            !withheld.contains("secret") && !withheld.contains("root"),
            "{withheld}"
        );
        // A value of the wrong type is withheld too (serde would quote it).
        let e = from_toml::<Config>("name = 1234567\n", "f.toml", Echo::Withhold)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("line 1, column 8") && !e.contains("1234567"),
            "{e}"
        );
    }

    #[test]
    fn a_file_without_end_is_refused_at_the_bound() {
        let e = read(Path::new("/dev/zero")).unwrap_err().to_string();
        assert!(
            e.contains("/dev/zero") && e.contains("at most 16 MiB"),
            "{e}"
        );
        let e = read(Path::new("/nonexistent/c.toml"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("/nonexistent/c.toml"), "{e}");
    }
}
