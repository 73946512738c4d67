//! The compression codecs of the file system, run on real bytes.
//!
//! Each page (or, for F2FS, each cluster) is compressed on its own, as a flash file
//! system does it, with these settings:
//!
//! - **zlib**: a zlib stream (2-byte header, deflate data, 4-byte Adler-32) at level 3.
//!   JFFS2 writes zlib streams, not raw deflate (`fs/jffs2/compr_zlib.c`:
//!   `zlib_deflateInit(&def_strm, 3)`; its reader recognises the zlib header), so the
//!   6 bytes of framing are part of what it stores. Deflate is `flate2`'s pure-Rust
//!   backend (miniz_oxide); sizes can differ from the kernel's zlib by a few bytes, and
//!   JFFS2's partial-flush loop adds a few more on nearly incompressible pages.
//! - **lzo**: LZO1X-1, the compressor JFFS2, UBIFS and F2FS call (`lzo1x_1_compress`),
//!   from the `lzo1x` crate at its default level 3 (LZO1X-1 with a 2^14-entry
//!   dictionary). That crate is GPL-2.0, so it is built only with the cargo feature
//!   `lzo`; without it, LZO calls return an error.
//! - **lz4**: the LZ4 block format (no frame), `lz4_flex`'s default fast compressor, as
//!   the kernel's `LZ4_compress_default` used by F2FS.
//! - **zstd**: a zstd frame at level 3, zstd's own default and btrfs's; F2FS defaults to
//!   level 1 (`F2FS_ZSTD_DEFAULT_CLEVEL`).

use std::cell::RefCell;
use std::fmt;
use std::str::FromStr;

use crate::{Error, Result};

/// zlib level: JFFS2's (`zlib_deflateInit(&def_strm, 3)` in `fs/jffs2/compr_zlib.c`).
pub const ZLIB_LEVEL: u32 = 3;
/// zstd level: zstd's default (`ZSTD_CLEVEL_DEFAULT`).
pub const ZSTD_LEVEL: i32 = 3;
/// Level of the `lzo1x` crate that is LZO1X-1.
#[cfg(feature = "lzo")]
const LZO1X_1_LEVEL: u8 = 3;

/// A compression codec of the file system.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "kebab-case")]
pub enum Codec {
    Zlib,
    Lzo,
    Lz4,
    Zstd,
}

impl Codec {
    /// Every codec, built in or not.
    pub const ALL: [Codec; 4] = [Codec::Zlib, Codec::Lzo, Codec::Lz4, Codec::Zstd];

    pub fn name(&self) -> &'static str {
        match self {
            Codec::Zlib => "zlib",
            Codec::Lzo => "lzo",
            Codec::Lz4 => "lz4",
            Codec::Zstd => "zstd",
        }
    }

    /// Whether this build can run the codec (LZO needs the `lzo` feature).
    pub fn is_available(&self) -> bool {
        *self != Codec::Lzo || cfg!(feature = "lzo")
    }

    /// The codecs this build can run, in [`Codec::ALL`] order.
    pub fn available() -> Vec<Codec> {
        Codec::ALL.into_iter().filter(Codec::is_available).collect()
    }

    /// Compress `page` on its own. The output may be larger than the input
    /// (incompressible data); the write policy decides what is kept.
    pub fn compress(&self, page: &[u8]) -> Result<Vec<u8>> {
        match self {
            Codec::Zlib => zlib_compress(page),
            Codec::Lzo => lzo_compress(page),
            Codec::Lz4 => Ok(lz4_flex::block::compress(page)),
            Codec::Zstd => zstd_compress(page),
        }
    }

    /// Decompress what [`Codec::compress`] produced from `original_len` bytes. Corrupt
    /// input, or output of any other length, is an error.
    pub fn decompress(&self, stored: &[u8], original_len: usize) -> Result<Vec<u8>> {
        let data = match self {
            Codec::Zlib => zlib_decompress(stored, original_len)?,
            Codec::Lzo => lzo_decompress(stored, original_len)?,
            Codec::Lz4 => {
                lz4_flex::block::decompress(stored, original_len).map_err(|e| corrupt(*self, e))?
            }
            Codec::Zstd => zstd_decompress(stored, original_len)?,
        };
        if data.len() != original_len {
            return Err(corrupt(
                *self,
                format!("{} bytes out, expected {original_len}", data.len()),
            ));
        }
        Ok(data)
    }
}

impl FromStr for Codec {
    type Err = Error;

    fn from_str(s: &str) -> Result<Self> {
        let wanted = s.trim().to_ascii_lowercase();
        crate::core::registry::choose("codec", &Codec::ALL, |c| c.name(), &wanted)
    }
}

impl fmt::Display for Codec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

fn corrupt(codec: Codec, detail: impl fmt::Display) -> Error {
    Error::config(
        format!("{codec} decompression"),
        format!("corrupt data: {detail}"),
    )
}

fn failed(codec: Codec, detail: impl fmt::Display) -> Error {
    Error::config(format!("{codec} compression"), detail.to_string())
}

// Compressor states are large and costly to set up; the kernel keeps one per
// compressor, we keep one per thread.
thread_local! {
    static DEFLATE: RefCell<Option<flate2::Compress>> = const { RefCell::new(None) };
    static INFLATE: RefCell<Option<flate2::Decompress>> = const { RefCell::new(None) };
    static ZSTD_COMPRESSOR: RefCell<Option<zstd::bulk::Compressor<'static>>> =
        const { RefCell::new(None) };
    static ZSTD_DECOMPRESSOR: RefCell<Option<zstd::bulk::Decompressor<'static>>> =
        const { RefCell::new(None) };
}

/// zlib's `compressBound`, plus slack for the stream framing.
fn zlib_bound(len: usize) -> usize {
    len + (len >> 12) + (len >> 14) + (len >> 25) + 64
}

fn zlib_compress(page: &[u8]) -> Result<Vec<u8>> {
    use flate2::{Compress, Compression, FlushCompress, Status};
    DEFLATE.with(|slot| {
        let mut slot = slot.borrow_mut();
        let deflate = slot.get_or_insert_with(|| Compress::new(Compression::new(ZLIB_LEVEL), true));
        deflate.reset();
        let mut out = Vec::with_capacity(zlib_bound(page.len()));
        loop {
            let consumed = usize::try_from(deflate.total_in()).unwrap_or(usize::MAX);
            let rest = page.get(consumed..).unwrap_or_default();
            let status = deflate
                .compress_vec(rest, &mut out, FlushCompress::Finish)
                .map_err(|e| failed(Codec::Zlib, e))?;
            if status == Status::StreamEnd {
                return Ok(out);
            }
            // Out of room (only if the bound above were wrong): grow and go on.
            out.reserve(out.capacity().max(256));
        }
    })
}

fn zlib_decompress(stored: &[u8], original_len: usize) -> Result<Vec<u8>> {
    use flate2::{Decompress, FlushDecompress, Status};
    INFLATE.with(|slot| {
        let mut slot = slot.borrow_mut();
        let inflate = slot.get_or_insert_with(|| Decompress::new(true));
        inflate.reset(true);
        // One spare byte tells "longer than expected" from "exactly right".
        let mut out = Vec::with_capacity(original_len + 1);
        let status = inflate
            .decompress_vec(stored, &mut out, FlushDecompress::Finish)
            .map_err(|e| corrupt(Codec::Zlib, e))?;
        match status {
            Status::StreamEnd => Ok(out),
            _ if out.len() > original_len => Err(corrupt(
                Codec::Zlib,
                format!("more than {original_len} bytes out"),
            )),
            _ => Err(corrupt(Codec::Zlib, "truncated stream")),
        }
    })
}

fn zstd_compress(page: &[u8]) -> Result<Vec<u8>> {
    ZSTD_COMPRESSOR.with(|slot| {
        let mut slot = slot.borrow_mut();
        if slot.is_none() {
            let compressor =
                zstd::bulk::Compressor::new(ZSTD_LEVEL).map_err(|e| failed(Codec::Zstd, e))?;
            *slot = Some(compressor);
        }
        match slot.as_mut() {
            Some(compressor) => compressor
                .compress(page)
                .map_err(|e| failed(Codec::Zstd, e)),
            None => Err(failed(Codec::Zstd, "no compressor")),
        }
    })
}

fn zstd_decompress(stored: &[u8], original_len: usize) -> Result<Vec<u8>> {
    ZSTD_DECOMPRESSOR.with(|slot| {
        let mut slot = slot.borrow_mut();
        if slot.is_none() {
            let decompressor =
                zstd::bulk::Decompressor::new().map_err(|e| corrupt(Codec::Zstd, e))?;
            *slot = Some(decompressor);
        }
        match slot.as_mut() {
            // Capacity caps the output, so a corrupt frame cannot make it allocate more.
            Some(decompressor) => decompressor
                .decompress(stored, original_len)
                .map_err(|e| corrupt(Codec::Zstd, e)),
            None => Err(corrupt(Codec::Zstd, "no decompressor")),
        }
    })
}

#[cfg(feature = "lzo")]
fn lzo_compress(page: &[u8]) -> Result<Vec<u8>> {
    Ok(lzo1x::compress(
        page,
        lzo1x::CompressLevel::new(LZO1X_1_LEVEL),
    ))
}

#[cfg(feature = "lzo")]
fn lzo_decompress(stored: &[u8], original_len: usize) -> Result<Vec<u8>> {
    let mut out = vec![0; original_len];
    lzo1x::decompress(stored, &mut out).map_err(|e| corrupt(Codec::Lzo, e))?;
    Ok(out)
}

#[cfg(not(feature = "lzo"))]
const LZO_MISSING: &str = "LZO support is not built in: rebuild with --features lzo (GPL-2.0)";

#[cfg(not(feature = "lzo"))]
fn lzo_compress(_page: &[u8]) -> Result<Vec<u8>> {
    Err(Error::config("lzo", LZO_MISSING))
}

#[cfg(not(feature = "lzo"))]
fn lzo_decompress(_stored: &[u8], _original_len: usize) -> Result<Vec<u8>> {
    Err(Error::config("lzo", LZO_MISSING))
}

// The platform's per-codec figures, keyed here so that the devices layer needs no codec.
impl crate::devices::platform::DecompressTimes {
    pub fn get(&self, codec: Codec) -> f64 {
        match codec {
            Codec::Zlib => self.zlib,
            Codec::Lzo => self.lzo,
            Codec::Lz4 => self.lz4,
            Codec::Zstd => self.zstd,
        }
    }

    pub(crate) fn get_mut(&mut self, codec: Codec) -> &mut f64 {
        match codec {
            Codec::Zlib => &mut self.zlib,
            Codec::Lzo => &mut self.lzo,
            Codec::Lz4 => &mut self.lz4,
            Codec::Zstd => &mut self.zstd,
        }
    }
}

impl crate::devices::platform::Platform {
    /// Decompression time of `codec`, ns per output byte.
    pub fn decompress_ns_per_byte(&self, codec: Codec) -> f64 {
        self.decompress_ns_per_byte.get(codec)
    }

    /// Decompression speed of `codec`, MB/s of output (infinite for a time of 0).
    pub fn decompress_mb_s(&self, codec: Codec) -> f64 {
        1000.0 / self.decompress_ns_per_byte.get(codec)
    }

    /// This platform with `codec` decompressing at `mb_s` MB/s of output (1 MB = 10^6
    /// bytes), e.g. a speed measured on the machine at hand.
    pub fn with_decompress_mb_s(mut self, codec: Codec, mb_s: f64) -> Result<Self> {
        if !(mb_s.is_finite() && mb_s > 0.0) {
            return Err(Error::config(
                format!("platform {}", self.name),
                format!(
                    "decompression speed of {codec:?} must be a finite number > 0 MB/s, got {mb_s}"
                ),
            ));
        }
        *self.decompress_ns_per_byte.get_mut(codec) = crate::devices::platform::ns_per_byte(mb_s);
        Ok(self)
    }
}

#[cfg(test)]
mod platform_tests {
    use super::*;
    use crate::devices::platform::Platform;

    #[test]
    fn speeds_and_times_convert_both_ways() {
        let pxa = Platform::pxa250();
        assert!((pxa.decompress_ns_per_byte(Codec::Zlib) - 200.0).abs() < 1e-9);
        assert!((pxa.decompress_mb_s(Codec::Zlib) - 5.0).abs() < 1e-9);
        let measured = pxa.with_decompress_mb_s(Codec::Lz4, 250.0).unwrap();
        assert!((measured.decompress_ns_per_byte(Codec::Lz4) - 4.0).abs() < 1e-12);
        // The other codecs are untouched.
        assert_eq!(
            measured.decompress_ns_per_byte(Codec::Zlib),
            Platform::pxa250().decompress_ns_per_byte(Codec::Zlib)
        );
    }

    #[test]
    fn a_measured_speed_must_be_positive_and_finite() {
        for bad in [0.0, -1.0, f64::NAN, f64::INFINITY] {
            let message = Platform::modern_phone()
                .with_decompress_mb_s(Codec::Zstd, bad)
                .unwrap_err()
                .to_string();
            assert!(message.contains("Zstd"), "{message}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text_page() -> Vec<u8> {
        b"the quick brown fox jumps over the lazy dog; "
            .iter()
            .copied()
            .cycle()
            .take(4096)
            .collect()
    }

    #[test]
    fn names_parse_back() {
        for codec in Codec::ALL {
            assert_eq!(codec.name().parse::<Codec>().unwrap(), codec);
            assert_eq!(codec.to_string(), codec.name());
        }
        assert_eq!(" ZSTD ".parse::<Codec>().unwrap(), Codec::Zstd);
    }

    #[test]
    fn unknown_name_lists_known_ones() {
        let err = "brotli".parse::<Codec>().unwrap_err();
        match err {
            Error::Unknown { what, name, known } => {
                assert_eq!(what, "codec");
                assert_eq!(name, "brotli");
                assert_eq!(known, ["zlib", "lzo", "lz4", "zstd"]);
            }
            other => panic!("unexpected error {other}"),
        }
    }

    #[test]
    fn available_codecs_round_trip() {
        let page = text_page();
        for codec in Codec::available() {
            let packed = codec.compress(&page).unwrap();
            assert!(packed.len() < page.len() / 4, "{codec}: {}", packed.len());
            assert_eq!(codec.decompress(&packed, page.len()).unwrap(), page);
        }
    }

    #[test]
    fn zlib_writes_a_zlib_stream() {
        let packed = Codec::Zlib.compress(&text_page()).unwrap();
        // CMF: deflate with a 32 KiB window; the header is a multiple of 31.
        assert_eq!(packed[0], 0x78);
        assert_eq!(u16::from_be_bytes([packed[0], packed[1]]) % 31, 0);
    }

    #[test]
    fn empty_input_round_trips() {
        for codec in Codec::available() {
            let packed = codec.compress(&[]).unwrap();
            assert_eq!(codec.decompress(&packed, 0).unwrap(), Vec::<u8>::new());
        }
    }

    #[test]
    fn wrong_length_and_garbage_are_errors() {
        let page = text_page();
        let garbage: Vec<u8> = (0..300u32).map(|i| (i * 37 % 251) as u8).collect();
        for codec in Codec::available() {
            let packed = codec.compress(&page).unwrap();
            assert!(
                codec.decompress(&packed, page.len() - 1).is_err(),
                "{codec}"
            );
            assert!(
                codec.decompress(&packed, page.len() + 1).is_err(),
                "{codec}"
            );
            assert!(codec
                .decompress(&packed[..packed.len() / 2], page.len())
                .is_err());
            assert!(codec.decompress(&garbage, page.len()).is_err(), "{codec}");
            assert!(codec.decompress(&[], page.len()).is_err(), "{codec}");
        }
    }

    #[cfg(not(feature = "lzo"))]
    #[test]
    fn lzo_without_the_feature_says_how_to_get_it() {
        assert!(!Codec::Lzo.is_available());
        let err = Codec::Lzo.compress(b"abc").unwrap_err().to_string();
        assert!(err.contains("--features lzo"), "{err}");
    }

    #[cfg(feature = "lzo")]
    #[test]
    fn lzo_is_lzo1x_1() {
        assert!(Codec::Lzo.is_available());
        // The lzo1x crate documents 100 bytes of 0xaa at its default level as 34 bytes.
        assert_eq!(Codec::Lzo.compress(&[0xaa; 100]).unwrap().len(), 34);
    }
}
