//! Reading a config file (experiment, workload, swap, reclaim, KSM settings; TOML):
//! bounded in size and checked to be UTF-8, with errors that give the file and the
//! position of the problem.

use std::io::Read;
use std::path::Path;

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
