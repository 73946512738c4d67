//! Opening a trace file of any supported format, compressed or not.

use std::io::{self, BufRead, BufReader, Cursor, Read};
use std::path::Path;
use std::str::FromStr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use super::columns::{ColumnSpec, PRESETS};
use super::mmt::InputLength;
use super::shared::StoredBytes;
use super::{EventSource, Trace};
use crate::{Error, Result};

/// The trace formats mobmem reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Format {
    /// mobmem's binary format (`.mmt`), read and written.
    Mmt,
    /// mobmem's CSV text format (`.csv`), read and written.
    Csv,
    /// The ARC paper's text traces (`.lis`): `start_block block_count ignored request_id`.
    Lis,
    /// libCacheSim's `oracleGeneral` binary (`.oracleGeneral.bin`, `.oracleGeneral`).
    OracleGeneral,
    /// VMware `vscsiStats` block traces as libCacheSim reads them (`.vscsi`), read only.
    Vscsi,
    /// libCacheSim's binary layout of Twitter's cache traces (`NAME.twr.…`), read only.
    Twr,
    /// `twr` with a namespace per record (`NAME.twrNS.…`), read only.
    TwrNs,
    /// A text trace read by a column spec (`--format csv --columns SPEC`, `txt`, or a
    /// preset such as `mobile-block`), read only; given by name, never told from a file
    /// name.
    Columns(Arc<ColumnSpec>),
}

impl Format {
    /// The formats of a fixed layout.
    const FIXED: [Format; 7] = [
        Format::Mmt,
        Format::Csv,
        Format::Lis,
        Format::OracleGeneral,
        Format::Vscsi,
        Format::Twr,
        Format::TwrNs,
    ];

    /// The formats of a fixed layout, then the presets of column specs.
    pub fn all() -> Vec<Format> {
        let mut all = Self::FIXED.to_vec();
        all.extend(
            PRESETS
                .iter()
                .filter_map(|(name, ..)| ColumnSpec::preset(name))
                .map(|spec| Format::Columns(Arc::new(spec))),
        );
        all
    }

    /// Every name `--format` takes.
    pub fn names() -> Vec<&'static str> {
        let mut names: Vec<&'static str> = Self::FIXED.iter().map(Format::name).collect();
        names.insert(2, "txt");
        names.extend(PRESETS.iter().map(|(name, ..)| *name));
        names
    }

    pub fn name(&self) -> &'static str {
        match self {
            Format::Mmt => "mmt",
            Format::Csv => "csv",
            Format::Lis => "lis",
            Format::OracleGeneral => "oracle-general",
            Format::Vscsi => "vscsi",
            Format::Twr => "twr",
            Format::TwrNs => "twr-ns",
            Format::Columns(spec) => spec.preset.unwrap_or("csv"),
        }
    }

    /// Guess the format from a file name, ignoring a trailing `.zst` or `.gz`.
    pub fn from_path(path: &Path) -> Option<Format> {
        let name = path.file_name()?.to_str()?.to_ascii_lowercase();
        let name = name.strip_suffix(".zst").unwrap_or(&name);
        let name = name.strip_suffix(".gz").unwrap_or(name);
        if name.ends_with(".mmt") {
            Some(Format::Mmt)
        } else if name.ends_with(".csv") {
            Some(Format::Csv)
        } else if name.ends_with(".lis") {
            Some(Format::Lis)
        } else if name.contains("oraclegeneral") {
            Some(Format::OracleGeneral)
        } else {
            // As libCacheSim's `detect_trace_type` (libCacheSim/bin/cli_reader_utils.c):
            // `.vscsi`, `.twr.` or `.twrNS.` in the name (`cluster52.twr.sample10.zst`).
            name.split('.').skip(1).find_map(|part| match part {
                "vscsi" => Some(Format::Vscsi),
                "twr" => Some(Format::Twr),
                "twrns" => Some(Format::TwrNs),
                _ => None,
            })
        }
    }

    /// The format `--format` and `--columns` name together: a column spec (`columns`) on
    /// top of `csv` (comma-separated; also when no format is given), `txt` (fields
    /// separated by blanks) or a preset, whose keys it changes. A spec with any other
    /// format is an error.
    pub fn with_columns(format: Option<Format>, columns: Option<&str>) -> Result<Option<Format>> {
        let Some(columns) = columns else {
            return Ok(format);
        };
        let base = match format {
            None | Some(Format::Csv) => ColumnSpec::base("csv"),
            Some(Format::Columns(spec)) => (*spec).clone(),
            Some(other) => {
                return Err(Error::config(
                    "--columns",
                    format!(
                        "a column spec goes with --format csv, txt or a preset ({}), not {other}",
                        PRESETS.map(|(name, ..)| name).join(", ")
                    ),
                ))
            }
        };
        Ok(Some(Format::Columns(Arc::new(ColumnSpec::parse(
            base, columns,
        )?))))
    }
}

impl FromStr for Format {
    type Err = Error;

    fn from_str(s: &str) -> Result<Self> {
        let wanted = s.to_ascii_lowercase().replace('_', "-");
        let fixed = Self::FIXED.into_iter().find(|f| {
            f.name() == wanted
                || (wanted == "oraclegeneral" && *f == Format::OracleGeneral)
                || (wanted == "twrns" && *f == Format::TwrNs)
        });
        let columns = || {
            let spec = if wanted == "txt" {
                Some(ColumnSpec::base("txt"))
            } else {
                ColumnSpec::preset(&wanted)
            };
            spec.map(|spec| Format::Columns(Arc::new(spec)))
        };
        fixed.or_else(columns).ok_or_else(|| Error::Unknown {
            what: "trace format",
            name: s.to_string(),
            known: Format::names().into_iter().map(String::from).collect(),
        })
    }
}

impl std::fmt::Display for Format {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Format::Columns(spec) => write!(f, "{spec}"),
            other => f.write_str(other.name()),
        }
    }
}

const ZSTD_MAGIC: [u8; 4] = [0x28, 0xB5, 0x2F, 0xFD];
const GZIP_MAGIC: [u8; 2] = [0x1f, 0x8b];

/// Open `path` as a byte stream, transparently decompressing zstd (detected by its magic
/// number, whatever the file is called), with the count of stored bytes read (see
/// [`StoredBytes`]). A read error of the zstd data says how far the compressed and the
/// decompressed data had been read.
pub(crate) fn open_bytes_metered(path: &Path) -> Result<(Box<dyn Read + Send>, StoredBytes)> {
    let (input, _, stored) = open_input(path)?;
    Ok((input, stored))
}

/// Most bytes one byte of zstd data may decompress to, beyond [`ZSTD_ALLOWANCE`]. The
/// format allows about 2^15 (a 128 KiB block in a few bytes); real traces compress 3 to 10
/// times. A stream that expands further is refused, so that a few KiB of crafted zstd
/// data cannot stand for gigabytes of trace.
///
/// Smaller in the fuzz driver (`cfg(fuzzing)`), as [`super::shared::EXPANSION_PER_BYTE`]
/// is: an input of a few KiB that decompresses to megabytes of text would otherwise take
/// milliseconds of the campaign, through the same checks.
pub const MAX_ZSTD_EXPANSION: u64 = if cfg!(fuzzing) { 1 << 4 } else { 1 << 10 };
/// Bytes a zstd stream may decompress to whatever its size (smaller in the fuzz driver).
pub const ZSTD_ALLOWANCE: u64 = if cfg!(fuzzing) { 1 << 12 } else { 1 << 20 };

/// Most decompressed bytes `compressed` bytes of zstd data may stand for.
pub fn zstd_bound(compressed: u64) -> u64 {
    ZSTD_ALLOWANCE.saturating_add(compressed.saturating_mul(MAX_ZSTD_EXPANSION))
}

/// The bytes of `path` (see [`open_bytes_metered`]), what is known of the length of the bytes before reading them: the
/// size of a regular file that is not compressed, a bound for a compressed one.
fn open_input(path: &Path) -> Result<(Box<dyn Read + Send>, InputLength, StoredBytes)> {
    let file = crate::input::open(path)?;
    let metadata = file.metadata().map_err(|e| Error::io(path, e))?;
    let length = metadata.is_file().then_some(metadata.len());
    decoded(path, BufReader::with_capacity(1 << 16, file), length)
}

/// `input`, decompressed when it starts with gzip's or zstd's magic number, and what is
/// known of its length before reading it: `length` (its size as stored, when known)
/// for plain bytes, a bound from it for compressed ones. Files, bytes in memory and
/// streams all go through here, so each is decoded and bounded alike.
fn decoded<R: BufRead + Send + 'static>(
    name: &Path,
    input: R,
    length: Option<u64>,
) -> Result<(Box<dyn Read + Send>, InputLength, StoredBytes)> {
    match Expanding::detect(name, input)? {
        Err(plain) => {
            let exact = length.map_or(InputLength::Unknown, InputLength::Exact);
            Ok((Box::new(plain), exact, StoredBytes::default()))
        }
        Ok(decoder) => {
            let bound = length.map_or(InputLength::Unknown, |n| InputLength::AtMost(zstd_bound(n)));
            if rayon::current_num_threads() < 2 {
                let stored = StoredBytes::compressed(decoder.consumed());
                return Ok((
                    Box::new(BufReader::with_capacity(1 << 16, decoder)),
                    bound,
                    stored,
                ));
            }
            let ahead = DecodedAhead::spawn(decoder);
            let stored = StoredBytes::compressed(ahead.consumed.clone());
            Ok((Box::new(ahead), bound, stored))
        }
    }
}

/// Counts the bytes a decoder takes from the compressed input.
struct Counted<R> {
    inner: R,
    /// Shared with the readers that bound expansion by stored bytes.
    consumed: Arc<AtomicU64>,
}

impl<R> Counted<R> {
    /// `inner` counted, and the count.
    fn new(inner: R) -> (Self, Arc<AtomicU64>) {
        let consumed = Arc::new(AtomicU64::new(0));
        (
            Counted {
                inner,
                consumed: consumed.clone(),
            },
            consumed,
        )
    }

    fn add(&self, n: usize) {
        self.consumed.fetch_add(n as u64, Ordering::Relaxed);
    }
}

impl<R: BufRead> Read for Counted<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.add(n);
        Ok(n)
    }
}

impl<R: BufRead> BufRead for Counted<R> {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        self.inner.fill_buf()
    }

    fn consume(&mut self, amount: usize) {
        self.add(amount);
        self.inner.consume(amount);
    }
}

/// A zstd or gzip decoder whose output is bounded by [`zstd_bound`] of the compressed
/// bytes it took, and whose errors say where in the data they happened: the libraries'
/// own messages ("Destination buffer is too small", "Unknown frame descriptor") name no
/// position.
struct Expanding {
    decoder: Box<dyn Read + Send>,
    /// Compressed bytes taken so far (shared with the decoder's [`Counted`] input).
    consumed: Arc<AtomicU64>,
    /// Decompressed bytes returned so far.
    produced: u64,
    codec: &'static str,
}

impl Expanding {
    fn zstd<R: BufRead + Send + 'static>(compressed: R) -> io::Result<Self> {
        let (counted, consumed) = Counted::new(compressed);
        Ok(Expanding {
            decoder: Box::new(zstd::Decoder::with_buffer(counted)?),
            consumed,
            produced: 0,
            codec: "zstd",
        })
    }

    fn gzip<R: BufRead + Send + 'static>(compressed: R) -> Self {
        let (counted, consumed) = Counted::new(compressed);
        Expanding {
            decoder: Box::new(flate2::bufread::MultiGzDecoder::new(counted)),
            consumed,
            produced: 0,
            codec: "gzip",
        }
    }

    /// A decoder of `input` when it starts with gzip's or zstd's magic number, else
    /// `input` back, untouched.
    fn detect<R: BufRead + Send + 'static>(
        name: &Path,
        mut input: R,
    ) -> Result<std::result::Result<Self, R>> {
        let head = input.fill_buf().map_err(|e| Error::io(name, e))?;
        if head.starts_with(&GZIP_MAGIC) {
            Ok(Ok(Expanding::gzip(input)))
        } else if head.starts_with(&ZSTD_MAGIC) {
            Ok(Ok(Expanding::zstd(input).map_err(|e| Error::io(name, e))?))
        } else {
            Ok(Err(input))
        }
    }

    /// The count of compressed bytes taken so far.
    fn consumed(&self) -> Arc<AtomicU64> {
        self.consumed.clone()
    }
}

impl Read for Expanding {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let codec = self.codec;
        match self.decoder.read(buf) {
            Ok(n) => {
                self.produced += n as u64;
                let consumed = self.consumed.load(Ordering::Relaxed);
                if self.produced > zstd_bound(consumed) {
                    return Err(io::Error::new(
                        io::ErrorKind::InvalidData,
                        format!(
                            "{codec} data expands past {} bytes by compressed byte offset \
                             {consumed}: more than {ZSTD_ALLOWANCE} bytes plus \
                             {MAX_ZSTD_EXPANSION} a compressed byte, which no real trace does",
                            self.produced
                        ),
                    ));
                }
                Ok(n)
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => Err(e),
            Err(e) => Err(io::Error::new(
                e.kind(),
                format!(
                    "{codec} data unreadable by compressed byte offset {} (decompressed byte offset {}): {e}",
                    self.consumed.load(Ordering::Relaxed),
                    self.produced
                ),
            )),
        }
    }
}

/// Bytes decompressed a chunk at a time.
const DECODED_CHUNK: usize = 1 << 18;
/// Chunks decompressed ahead of the reader.
const DECODED_AHEAD: usize = 2;

/// A decoder run on a thread of its own, a few chunks ahead of the reader: inflating
/// gzip took about a quarter of the reading thread's time on the Pixel 6a traces, beside
/// parsing their text. The bytes are the decoder's, in order; an error comes after the
/// bytes decoded before it. The compressed bytes taken (for [`StoredBytes`]) are those
/// taken by the end of the chunk being read, so they follow the chunks, not the thread's
/// timing: a run's bounds and messages are the same every time.
struct DecodedAhead {
    chunks: std::sync::mpsc::Receiver<io::Result<(Vec<u8>, u64)>>,
    give_back: std::sync::mpsc::Sender<Vec<u8>>,
    current: Vec<u8>,
    at: usize,
    /// Compressed bytes taken by the end of the current chunk.
    consumed: Arc<AtomicU64>,
    ended: bool,
}

impl DecodedAhead {
    fn spawn(mut decoder: Expanding) -> Self {
        let (ready, chunks) = std::sync::mpsc::sync_channel(DECODED_AHEAD);
        let (give_back, returned) = std::sync::mpsc::channel::<Vec<u8>>();
        let taken = decoder.consumed();
        std::thread::spawn(move || loop {
            let mut chunk = returned.try_recv().unwrap_or_default();
            chunk.resize(DECODED_CHUNK, 0);
            let mut filled = 0;
            let mut failed = None;
            while filled < chunk.len() {
                match decoder.read(&mut chunk[filled..]) {
                    Ok(0) => break,
                    Ok(n) => filled += n,
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                    Err(e) => {
                        failed = Some(e);
                        break;
                    }
                }
            }
            chunk.truncate(filled);
            let ended = filled == 0 || failed.is_some();
            if filled > 0
                && ready
                    .send(Ok((chunk, taken.load(Ordering::Relaxed))))
                    .is_err()
            {
                return; // The reader is gone.
            }
            if let Some(e) = failed {
                let _ = ready.send(Err(e));
            }
            if ended {
                return;
            }
        });
        DecodedAhead {
            chunks,
            give_back,
            current: Vec::new(),
            at: 0,
            consumed: Arc::new(AtomicU64::new(0)),
            ended: false,
        }
    }
}

impl Read for DecodedAhead {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        while self.at == self.current.len() {
            if self.ended {
                return Ok(0);
            }
            match self.chunks.recv() {
                Ok(Ok((chunk, taken))) => {
                    let done = std::mem::replace(&mut self.current, chunk);
                    // The decoder may be gone already; the buffer is then dropped.
                    let _ = self.give_back.send(done);
                    self.at = 0;
                    self.consumed.store(taken, Ordering::Relaxed);
                }
                Ok(Err(e)) => {
                    self.ended = true;
                    return Err(e);
                }
                // The decoder stopped at the end of the data.
                Err(_) => self.ended = true,
            }
        }
        let n = buf.len().min(self.current.len() - self.at);
        buf[..n].copy_from_slice(&self.current[self.at..self.at + n]);
        self.at += n;
        Ok(n)
    }
}

/// `input` decompressed when it starts with zstd's or gzip's magic number (bounded as
/// [`Expanding`] says), else as it is: for a stream, which can be read only once.
pub(crate) fn decompressed_stream<R: BufRead + Send + 'static>(
    name: &Path,
    input: R,
) -> Result<Box<dyn Read + Send>> {
    Ok(match Expanding::detect(name, input)? {
        Ok(decoder) => Box::new(decoder),
        Err(plain) => Box::new(plain),
    })
}

/// Open a trace for streaming. `format` overrides detection from the file name.
pub fn open(path: &Path, format: Option<Format>) -> Result<Box<dyn EventSource + Send>> {
    let format = format_of(path, format)?;
    let (input, length, stored) = open_input(path)?;
    source(path, input, length, stored, format)
}

/// Open a trace whose file content is already in memory (fetched from elsewhere, say).
/// `name` stands for the file in errors and, unless `format` is given, tells the format.
pub fn open_data(
    name: &Path,
    data: Vec<u8>,
    format: Option<Format>,
) -> Result<Box<dyn EventSource + Send>> {
    let format = format_of(name, format)?;
    let length = data.len() as u64;
    let (input, length, stored) = decoded(name, Cursor::new(data), Some(length))?;
    source(name, input, length, stored, format)
}

/// Open a trace read from a stream of unknown length (a pipe, a socket): as a FIFO
/// given as a file is read, with the bounds of an input whose size is not known.
pub fn open_stream(
    name: &Path,
    stream: impl Read + Send + 'static,
    format: Option<Format>,
) -> Result<Box<dyn EventSource + Send>> {
    let format = format_of(name, format)?;
    let (input, length, stored) = decoded(name, BufReader::with_capacity(1 << 16, stream), None)?;
    source(name, input, length, stored, format)
}

fn format_of(path: &Path, format: Option<Format>) -> Result<Format> {
    format.or_else(|| Format::from_path(path)).ok_or_else(|| {
        Error::config(
            path.display().to_string(),
            format!(
                "cannot tell the trace format from the file name; pass --format ({})",
                Format::names().join(", ")
            ),
        )
    })
}

fn source(
    path: &Path,
    input: Box<dyn Read + Send>,
    length: InputLength,
    stored: StoredBytes,
    format: Format,
) -> Result<Box<dyn EventSource + Send>> {
    Ok(match format {
        Format::Mmt => Box::new(super::mmt::Reader::with_length(path, input, length)?),
        Format::Csv => Box::new(super::csv::Reader::new(path, input)?),
        Format::Lis => Box::new(super::lis::Reader::with_stored(path, input, stored)),
        Format::OracleGeneral => Box::new(super::oracle::Reader::new(path, input)),
        // Parsed on a thread of its own when two threads are allowed.
        Format::Columns(spec) => Box::new(super::columns::Reader::new(
            path,
            input,
            stored,
            &spec,
            rayon::current_num_threads() >= 2,
        )?),
        Format::Vscsi => Box::new(super::vscsi::Reader::new(path, input)),
        Format::Twr => Box::new(super::twr::Reader::new(
            path,
            input,
            super::twr::Layout::Twr,
        )),
        Format::TwrNs => Box::new(super::twr::Reader::new(
            path,
            input,
            super::twr::Layout::TwrNs,
        )),
    })
}

/// Read a whole trace into memory. A `.mmt` file's events are also checked against its
/// tables, which come after them (see [`super::mmt::check_against_tables`]).
pub fn read_all(path: &Path, format: Option<Format>) -> Result<Trace> {
    let format = format_of(path, format)?;
    let trace = collect(open(path, Some(format.clone()))?.as_mut())?;
    check(path, format, trace)
}

/// The object ids of the trace at `path`, for a policy to hash (`sim
/// --hash-object-ids`), read through once: see [`object_ids_of`].
pub fn object_ids_to_hash(path: &Path, format: Option<Format>) -> Result<std::sync::Arc<[u64]>> {
    object_ids_of(open(path, format)?.as_mut(), path)
}

/// The object ids of the trace `source` reads ([`Tables::object_ids_to_hash`]), read
/// through to its end; `path` names it in the error of a trace that has none.
pub fn object_ids_of(source: &mut dyn EventSource, path: &Path) -> Result<std::sync::Arc<[u64]>> {
    let mut batch = Vec::new();
    while source.read_batch(&mut batch, 1 << 16)? {}
    let tables = source.tables()?;
    source.finish()?;
    tables.object_ids_to_hash(path)
}

/// Read a whole trace from its file content in memory (see [`open_data`]).
pub fn read_all_data(name: &Path, data: Vec<u8>, format: Option<Format>) -> Result<Trace> {
    let format = format_of(name, format)?;
    let trace = collect(open_data(name, data, Some(format.clone()))?.as_mut())?;
    check(name, format, trace)
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn gzip(data: &[u8]) -> Vec<u8> {
        let mut out = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        out.write_all(data).unwrap();
        out.finish().unwrap()
    }

    /// Text of several chunks, not all alike.
    fn text() -> Vec<u8> {
        (0..120_000u64)
            .flat_map(|i| format!("{},{},{}\n", i * 7, i % 13, (i * i) % 1009).into_bytes())
            .collect()
    }

    #[test]
    fn decoding_ahead_gives_the_decoders_bytes_then_its_error() {
        let data = text();
        assert!(data.len() > 3 * DECODED_CHUNK);
        let packed = gzip(&data);
        let mut ahead = DecodedAhead::spawn(Expanding::gzip(Cursor::new(packed.clone())));
        let mut got = Vec::new();
        ahead.read_to_end(&mut got).unwrap();
        assert_eq!(got, data);
        // Every compressed byte is counted once the last chunk is read.
        assert_eq!(ahead.consumed.load(Ordering::Relaxed), packed.len() as u64);

        // Cut short: the bytes decoded before the cut, in order, then the decoder's error.
        let cut = packed[..packed.len() / 2].to_vec();
        let mut plain = Vec::new();
        let plain_error = Expanding::gzip(Cursor::new(cut.clone()))
            .read_to_end(&mut plain)
            .unwrap_err();
        let mut ahead = DecodedAhead::spawn(Expanding::gzip(Cursor::new(cut)));
        let mut got = Vec::new();
        let error = ahead.read_to_end(&mut got).unwrap_err();
        assert!(got.len() > DECODED_CHUNK, "{}", got.len());
        assert_eq!(got, plain);
        assert_eq!(error.to_string(), plain_error.to_string());
    }
}
