//! Opening a trace file of any supported format, compressed or not.

use std::fs::File;
use std::io::{self, BufRead, BufReader, Cursor, Read};
use std::path::Path;
use std::str::FromStr;

use super::mmt::InputLength;
use super::{EventSource, Trace};
use crate::{Error, Result};

/// The trace formats mobmem reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Format {
    /// mobmem's binary format (`.mmt`), read and written.
    Mmt,
    /// mobmem's CSV text format (`.csv`), read and written.
    Csv,
    /// The ARC paper's text traces (`.lis`): `start_block block_count ignored request_id`.
    Lis,
    /// libCacheSim's `oracleGeneral` binary (`.oracleGeneral.bin`, `.oracleGeneral`).
    OracleGeneral,
}

impl Format {
    pub const ALL: [Format; 4] = [Format::Mmt, Format::Csv, Format::Lis, Format::OracleGeneral];

    pub fn name(self) -> &'static str {
        match self {
            Format::Mmt => "mmt",
            Format::Csv => "csv",
            Format::Lis => "lis",
            Format::OracleGeneral => "oracle-general",
        }
    }

    /// Guess the format from a file name, ignoring a trailing `.zst`.
    pub fn from_path(path: &Path) -> Option<Format> {
        let name = path.file_name()?.to_str()?.to_ascii_lowercase();
        let name = name.strip_suffix(".zst").unwrap_or(&name);
        if name.ends_with(".mmt") {
            Some(Format::Mmt)
        } else if name.ends_with(".csv") {
            Some(Format::Csv)
        } else if name.ends_with(".lis") {
            Some(Format::Lis)
        } else if name.contains("oraclegeneral") {
            Some(Format::OracleGeneral)
        } else {
            None
        }
    }
}

impl FromStr for Format {
    type Err = Error;

    fn from_str(s: &str) -> Result<Self> {
        let wanted = s.to_ascii_lowercase().replace('_', "-");
        Format::ALL
            .into_iter()
            .find(|f| {
                f.name() == wanted || (wanted == "oraclegeneral" && *f == Format::OracleGeneral)
            })
            .ok_or_else(|| Error::Unknown {
                what: "trace format",
                name: s.to_string(),
                known: Format::ALL.iter().map(|f| f.name().to_string()).collect(),
            })
    }
}

impl std::fmt::Display for Format {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

const ZSTD_MAGIC: [u8; 4] = [0x28, 0xB5, 0x2F, 0xFD];

/// Open `path` as a byte stream, transparently decompressing zstd (detected by its magic
/// number, whatever the file is called). A read error of the zstd data says how far the
/// compressed and the decompressed data had been read.
pub fn open_bytes(path: &Path) -> Result<Box<dyn Read + Send>> {
    Ok(open_input(path)?.0)
}

/// Most bytes one byte of zstd data decompresses to: a block regenerates at most 128 KiB
/// and takes at least a 3-byte header, so `2^17 / 3` < 2^16. It bounds what a compressed
/// file can hold, whatever its headers claim.
pub const MAX_ZSTD_EXPANSION: u64 = 1 << 16;

/// [`open_bytes`], and what is known of the length of the bytes before reading them: the
/// size of a regular file that is not compressed, a bound for a compressed one.
fn open_input(path: &Path) -> Result<(Box<dyn Read + Send>, InputLength)> {
    let file = File::open(path).map_err(|e| Error::io(path, e))?;
    let metadata = file.metadata().map_err(|e| Error::io(path, e))?;
    let length = metadata.is_file().then_some(metadata.len());
    let mut reader = BufReader::with_capacity(1 << 16, file);
    let head = reader.fill_buf().map_err(|e| Error::io(path, e))?;
    if head.len() >= 4 && head[..4] == ZSTD_MAGIC {
        let decoder = ZstdInput::new(reader).map_err(|e| Error::io(path, e))?;
        let bound = length.map_or(InputLength::Unknown, |n| {
            InputLength::AtMost(n.saturating_mul(MAX_ZSTD_EXPANSION))
        });
        Ok((Box::new(BufReader::with_capacity(1 << 16, decoder)), bound))
    } else {
        let exact = length.map_or(InputLength::Unknown, InputLength::Exact);
        Ok((Box::new(reader), exact))
    }
}

/// Counts the bytes the zstd decoder takes from the compressed input.
struct Counted<R> {
    inner: R,
    consumed: u64,
}

impl<R: BufRead> Read for Counted<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.consumed += n as u64;
        Ok(n)
    }
}

impl<R: BufRead> BufRead for Counted<R> {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        self.inner.fill_buf()
    }

    fn consume(&mut self, amount: usize) {
        self.consumed += amount as u64;
        self.inner.consume(amount);
    }
}

/// A zstd decoder whose errors say where in the data they happened: the library's own
/// messages ("Destination buffer is too small", "Unknown frame descriptor") name no
/// position.
struct ZstdInput<R: BufRead> {
    decoder: zstd::Decoder<'static, Counted<R>>,
    /// Decompressed bytes returned so far.
    produced: u64,
}

impl<R: BufRead> ZstdInput<R> {
    fn new(compressed: R) -> io::Result<Self> {
        let counted = Counted {
            inner: compressed,
            consumed: 0,
        };
        Ok(ZstdInput {
            decoder: zstd::Decoder::with_buffer(counted)?,
            produced: 0,
        })
    }
}

impl<R: BufRead> Read for ZstdInput<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self.decoder.read(buf) {
            Ok(n) => {
                self.produced += n as u64;
                Ok(n)
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => Err(e),
            Err(e) => Err(io::Error::new(
                e.kind(),
                format!(
                    "zstd data unreadable by compressed byte offset {} (decompressed byte offset {}): {e}",
                    self.decoder.get_ref().consumed,
                    self.produced
                ),
            )),
        }
    }
}

/// Open a trace for streaming. `format` overrides detection from the file name.
pub fn open(path: &Path, format: Option<Format>) -> Result<Box<dyn EventSource + Send>> {
    let format = format_of(path, format)?;
    let (input, length) = open_input(path)?;
    source(path, input, length, format)
}

/// Open a trace whose file content is already in memory (fetched from elsewhere, say).
/// `name` stands for the file in errors and, unless `format` is given, tells the format.
pub fn open_data(
    name: &Path,
    data: Vec<u8>,
    format: Option<Format>,
) -> Result<Box<dyn EventSource + Send>> {
    let format = format_of(name, format)?;
    let (input, length): (Box<dyn Read + Send>, _) = if data.starts_with(&ZSTD_MAGIC) {
        let bound = InputLength::AtMost((data.len() as u64).saturating_mul(MAX_ZSTD_EXPANSION));
        let decoder = ZstdInput::new(Cursor::new(data)).map_err(|e| Error::io(name, e))?;
        (Box::new(BufReader::with_capacity(1 << 16, decoder)), bound)
    } else {
        let length = InputLength::Exact(data.len() as u64);
        (Box::new(Cursor::new(data)), length)
    };
    source(name, input, length, format)
}

fn format_of(path: &Path, format: Option<Format>) -> Result<Format> {
    format.or_else(|| Format::from_path(path)).ok_or_else(|| {
        Error::config(
            path.display().to_string(),
            format!(
                "cannot tell the trace format from the file name; pass --format ({})",
                Format::ALL.map(|f| f.name()).join(", ")
            ),
        )
    })
}

fn source(
    path: &Path,
    input: Box<dyn Read + Send>,
    length: InputLength,
    format: Format,
) -> Result<Box<dyn EventSource + Send>> {
    Ok(match format {
        Format::Mmt => Box::new(super::mmt::Reader::with_length(path, input, length)?),
        Format::Csv => Box::new(super::csv::Reader::new(path, input)?),
        Format::Lis => Box::new(super::lis::Reader::new(path, input)),
        Format::OracleGeneral => Box::new(super::oracle::Reader::new(path, input)),
    })
}

/// Read a whole trace into memory. A `.mmt` file's events are also checked against its
/// tables, which come after them (see [`super::mmt::check_against_tables`]).
pub fn read_all(path: &Path, format: Option<Format>) -> Result<Trace> {
    let trace = collect(open(path, format)?.as_mut())?;
    check(path, format_of(path, format)?, trace)
}

/// Read a whole trace from its file content in memory (see [`open_data`]).
pub fn read_all_data(name: &Path, data: Vec<u8>, format: Option<Format>) -> Result<Trace> {
    let trace = collect(open_data(name, data, format)?.as_mut())?;
    check(name, format_of(name, format)?, trace)
}

fn check(path: &Path, format: Format, trace: Trace) -> Result<Trace> {
    if format == Format::Mmt {
        super::mmt::check_against_tables(path, &trace)?;
    }
    Ok(trace)
}

fn collect(source: &mut dyn EventSource) -> Result<Trace> {
    let mut events = Vec::new();
    let mut batch = Vec::with_capacity(1 << 16);
    while source.read_batch(&mut batch, 1 << 16)? {
        events.extend_from_slice(&batch);
    }
    let tables = source.tables()?;
    Ok(Trace { events, tables })
}

/// Write a trace as `.mmt` or `.csv`, chosen by the file name.
pub fn write(path: &Path, trace: &Trace) -> Result<()> {
    match Format::from_path(path) {
        Some(Format::Mmt) => super::mmt::write(path, trace),
        Some(Format::Csv) => super::csv::write(path, trace),
        _ => Err(Error::config(
            path.display().to_string(),
            "output must end in .mmt or .csv",
        )),
    }
}
