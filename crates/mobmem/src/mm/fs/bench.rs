//! How fast each codec runs on this machine, to calibrate a platform profile.
//!
//! The sample is cut into 4 KiB pages and each page is compressed and decompressed on
//! its own, on one thread, as the file system does it. Speeds are MB/s (10^6 bytes per
//! second) of uncompressed data.

use std::hint::black_box;
use std::time::{Duration, Instant};

use super::{Codec, PAGE_SIZE};
use crate::{Error, Result};

/// Measured speed of one codec on one sample.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct CodecSpeed {
    pub codec: Codec,
    /// Uncompressed MB compressed per second.
    pub compress_mb_s: f64,
    /// Uncompressed MB produced per second.
    pub decompress_mb_s: f64,
    /// Sample bytes over compressed bytes, every page compressed.
    pub ratio: f64,
}

/// Measure every codec this build has on `sample`, repeating each direction until it
/// has run for at least `min_seconds` (at least one pass).
pub fn bench_codecs(sample: &[u8], min_seconds: f64) -> Result<Vec<CodecSpeed>> {
    if sample.is_empty() {
        return Err(Error::config("codec benchmark", "the sample is empty"));
    }
    if !(min_seconds.is_finite() && min_seconds >= 0.0) {
        return Err(Error::config(
            "codec benchmark",
            format!("min_seconds must be a non-negative number, not {min_seconds}"),
        ));
    }
    let min_time = Duration::from_secs_f64(min_seconds);
    Codec::available()
        .into_iter()
        .map(|codec| bench_codec(codec, sample, min_time))
        .collect()
}

fn bench_codec(codec: Codec, sample: &[u8], min_time: Duration) -> Result<CodecSpeed> {
    // A first pass warms the codec and keeps the pages to decompress; it also checks
    // that they read back, so a fast but wrong codec cannot be reported.
    let mut packed = Vec::with_capacity(sample.len().div_ceil(PAGE_SIZE));
    for page in sample.chunks(PAGE_SIZE) {
        let bytes = codec.compress(page)?;
        if codec.decompress(&bytes, page.len())? != page {
            return Err(Error::config(
                format!("{codec} benchmark"),
                "a page did not decompress to its data",
            ));
        }
        packed.push((bytes, page.len()));
    }
    let packed_bytes: usize = packed.iter().map(|(bytes, _)| bytes.len()).sum();

    let compress_s = repeat_for(min_time, sample.len(), || {
        for page in sample.chunks(PAGE_SIZE) {
            black_box(codec.compress(black_box(page))?);
        }
        Ok(())
    })?;
    let decompress_s = repeat_for(min_time, sample.len(), || {
        for (bytes, len) in &packed {
            black_box(codec.decompress(black_box(bytes), *len)?);
        }
        Ok(())
    })?;
    Ok(CodecSpeed {
        codec,
        compress_mb_s: compress_s,
        decompress_mb_s: decompress_s,
        ratio: sample.len() as f64 / packed_bytes.max(1) as f64,
    })
}

/// Run `pass` (over `bytes` bytes) until `min_time` has gone by; MB/s.
fn repeat_for(
    min_time: Duration,
    bytes: usize,
    mut pass: impl FnMut() -> Result<()>,
) -> Result<f64> {
    let start = Instant::now();
    let mut passes = 0u64;
    loop {
        pass()?;
        passes += 1;
        if start.elapsed() >= min_time {
            break;
        }
    }
    // A clock too coarse to see one pass would give infinity; count a nanosecond.
    let seconds = start.elapsed().as_secs_f64().max(1e-9);
    Ok(bytes as f64 * passes as f64 / seconds / 1e6)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_available_codec_is_measured() {
        let sample: Vec<u8> = b"page after page of plain text, "
            .iter()
            .copied()
            .cycle()
            .take(3 * PAGE_SIZE + 100)
            .collect();
        let speeds = bench_codecs(&sample, 0.0).unwrap();
        let codecs: Vec<Codec> = speeds.iter().map(|s| s.codec).collect();
        assert_eq!(codecs, Codec::available());
        for speed in &speeds {
            assert!(speed.compress_mb_s > 0.0 && speed.compress_mb_s.is_finite());
            assert!(speed.decompress_mb_s > 0.0 && speed.decompress_mb_s.is_finite());
            assert!(speed.ratio > 4.0, "{speed:?}");
        }
    }

    #[test]
    fn bad_arguments_are_errors() {
        assert!(bench_codecs(&[], 0.1).is_err());
        assert!(bench_codecs(b"abc", -1.0).is_err());
        assert!(bench_codecs(b"abc", f64::NAN).is_err());
    }
}
