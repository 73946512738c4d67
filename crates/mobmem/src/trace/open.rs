//! Opening a trace file of any supported format, compressed or not.

use std::fs::File;
use std::io::{BufRead, BufReader, Cursor, Read};
use std::path::Path;
use std::str::FromStr;

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
/// number, whatever the file is called).
pub fn open_bytes(path: &Path) -> Result<Box<dyn Read + Send>> {
    let file = File::open(path).map_err(|e| Error::io(path, e))?;
    let mut reader = BufReader::with_capacity(1 << 16, file);
    let head = reader.fill_buf().map_err(|e| Error::io(path, e))?;
    if head.len() >= 4 && head[..4] == ZSTD_MAGIC {
        let decoder = zstd::Decoder::with_buffer(reader).map_err(|e| Error::io(path, e))?;
        Ok(Box::new(BufReader::with_capacity(1 << 16, decoder)))
    } else {
        Ok(Box::new(reader))
    }
}

/// Open a trace for streaming. `format` overrides detection from the file name.
pub fn open(path: &Path, format: Option<Format>) -> Result<Box<dyn EventSource + Send>> {
    let format = format_of(path, format)?;
    source(path, open_bytes(path)?, format)
}

/// Open a trace whose file content is already in memory (fetched from elsewhere, say).
/// `name` stands for the file in errors and, unless `format` is given, tells the format.
pub fn open_data(
    name: &Path,
    data: Vec<u8>,
    format: Option<Format>,
) -> Result<Box<dyn EventSource + Send>> {
    let format = format_of(name, format)?;
    let input: Box<dyn Read + Send> = if data.starts_with(&ZSTD_MAGIC) {
        let decoder = zstd::Decoder::new(Cursor::new(data)).map_err(|e| Error::io(name, e))?;
        Box::new(BufReader::with_capacity(1 << 16, decoder))
    } else {
        Box::new(Cursor::new(data))
    };
    source(name, input, format)
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
    format: Format,
) -> Result<Box<dyn EventSource + Send>> {
    Ok(match format {
        Format::Mmt => Box::new(super::mmt::Reader::new(path, input)?),
        Format::Csv => Box::new(super::csv::Reader::new(path, input)?),
        Format::Lis => Box::new(super::lis::Reader::new(path, input)),
        Format::OracleGeneral => Box::new(super::oracle::Reader::new(path, input)),
    })
}

/// Read a whole trace into memory.
pub fn read_all(path: &Path, format: Option<Format>) -> Result<Trace> {
    collect(open(path, format)?.as_mut())
}

/// Read a whole trace from its file content in memory (see [`open_data`]).
pub fn read_all_data(name: &Path, data: Vec<u8>, format: Option<Format>) -> Result<Trace> {
    collect(open_data(name, data, format)?.as_mut())
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
