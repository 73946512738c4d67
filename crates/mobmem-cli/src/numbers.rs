//! Numbers on the command line: value parsers whose errors say what was expected.
//!
//! Numeric options are declared with `allow_negative_numbers = true`, so that `-1` reaches
//! the parser (clap would otherwise take it for an unknown flag) and is refused as what it
//! is: a negative number where a non-negative integer is expected.

use std::str::FromStr;

/// Most worker threads `--threads` takes.
pub const MAX_THREADS: usize = 1024;

/// A non-negative integer of type `T` (`u32`, `u64`, `usize`), with an error saying so and
/// giving the largest value when the number is too large.
pub fn non_negative<T>(text: &str) -> Result<T, String>
where
    T: FromStr + Bounded,
{
    let digits = text.trim();
    if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) {
        return digits.parse::<T>().map_err(|_| {
            format!(
                "must be a non-negative integer of at most {}, got {digits}",
                T::max_text()
            )
        });
    }
    if digits.starts_with('-') && digits[1..].parse::<f64>().is_ok() {
        return Err(format!(
            "must be a non-negative integer, got the negative number {digits}"
        ));
    }
    Err(format!("must be a non-negative integer, got '{text}'"))
}

/// The largest value of an integer type, for messages.
pub trait Bounded {
    fn max_text() -> String;
}

macro_rules! bounded {
    ($($t:ty),*) => {$(
        impl Bounded for $t {
            fn max_text() -> String {
                <$t>::MAX.to_string()
            }
        }
    )*};
}

bounded!(u32, u64, usize);

/// Worker threads: 1 to [`MAX_THREADS`].
pub fn threads(text: &str) -> Result<usize, String> {
    let range = || format!("must be a whole number of threads from 1 to {MAX_THREADS}");
    match non_negative::<u64>(text) {
        Ok(n) if (1..=MAX_THREADS as u64).contains(&n) => Ok(n as usize),
        Ok(n) => Err(format!("{}, got {n}", range())),
        Err(_) => Err(format!("{}, got '{}'", range(), text.trim())),
    }
}

/// Most seeds `reproduce --seeds` runs.
pub const MAX_SEEDS: u64 = 100;

/// Seeds of a reproduction: 1 to [`MAX_SEEDS`].
pub fn seeds(text: &str) -> Result<u64, String> {
    let range = || format!("must be a whole number of seeds from 1 to {MAX_SEEDS}");
    match non_negative::<u64>(text) {
        Ok(n) if (1..=MAX_SEEDS).contains(&n) => Ok(n),
        Ok(n) => Err(format!("{}, got {n}", range())),
        Err(_) => Err(format!("{}, got '{}'", range(), text.trim())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integers_are_checked_with_clear_messages() {
        assert_eq!(non_negative::<u64>("18446744073709551615"), Ok(u64::MAX));
        assert_eq!(non_negative::<u32>(" 7 "), Ok(7));
        let e = non_negative::<u64>("-1").unwrap_err();
        assert!(
            e.contains("non-negative integer") && e.contains("-1"),
            "{e}"
        );
        let e = non_negative::<u32>("4294967296").unwrap_err();
        assert!(e.contains("at most 4294967295"), "{e}");
        let e = non_negative::<u64>("1e3").unwrap_err();
        assert!(
            e.contains("non-negative integer") && e.contains("1e3"),
            "{e}"
        );
        assert!(non_negative::<usize>("").is_err());
        assert!(non_negative::<usize>("+3").is_err());
    }

    #[test]
    fn threads_are_1_to_1024() {
        assert_eq!(threads("1"), Ok(1));
        assert_eq!(threads("1024"), Ok(1024));
        for bad in [
            "0",
            "1025",
            "18446744073709551615",
            "99999999999999999999",
            "-1",
            "x",
        ] {
            let e = threads(bad).unwrap_err();
            assert!(e.contains("from 1 to 1024"), "{bad}: {e}");
        }
    }
}

/// A memory size on the command line: pages (a bare number) or bytes (a number with a
/// unit: B, KiB, MiB, GiB, TiB in powers of 1024; KB, MB, GB, TB in powers of 1000).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MemorySize {
    Pages(u64),
    Bytes(u64),
}

const BYTE_UNITS: [(&str, u64); 9] = [
    ("KiB", 1 << 10),
    ("MiB", 1 << 20),
    ("GiB", 1 << 30),
    ("TiB", 1 << 40),
    ("KB", 1_000),
    ("MB", 1_000_000),
    ("GB", 1_000_000_000),
    ("TB", 1_000_000_000_000),
    ("B", 1),
];

/// Parse a [`MemorySize`]; bytes may have a fraction (`1.5GiB`) that comes to whole bytes
/// when rounded down, and must come to at least 1 byte.
pub fn memory_size(text: &str) -> Result<MemorySize, String> {
    let trimmed = text.trim();
    let expected = "expected pages (a whole number) or a size in bytes with a unit, like 64MiB, 512KB or 4096B";
    for (unit, scale) in BYTE_UNITS {
        if let Some(number) = trimmed.strip_suffix(unit) {
            let value: f64 = number
                .trim()
                .parse()
                .map_err(|_| format!("'{text}': {expected}"))?;
            let bytes = value * scale as f64;
            if !(bytes.is_finite() && bytes >= 1.0 && bytes < u64::MAX as f64) {
                return Err(format!(
                    "'{text}': a size in bytes must be at least 1 byte and below 2^64"
                ));
            }
            return Ok(MemorySize::Bytes(bytes as u64));
        }
    }
    non_negative::<u64>(trimmed)
        .map(MemorySize::Pages)
        .map_err(|e| format!("{e}: {expected}"))
}

#[cfg(test)]
mod memory_size_tests {
    use super::*;

    #[test]
    fn pages_and_bytes() {
        assert_eq!(memory_size("1000"), Ok(MemorySize::Pages(1000)));
        assert_eq!(memory_size("64MiB"), Ok(MemorySize::Bytes(64 << 20)));
        assert_eq!(memory_size("1.5GiB"), Ok(MemorySize::Bytes(3 << 29)));
        assert_eq!(memory_size("512KB"), Ok(MemorySize::Bytes(512_000)));
        assert_eq!(memory_size("4096B"), Ok(MemorySize::Bytes(4096)));
        assert!(memory_size("0.1B").unwrap_err().contains("at least 1 byte"));
        assert!(memory_size("64 MiBs").is_err());
        assert!(memory_size("-5").unwrap_err().contains("negative"));
    }
}
