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
