//! mobmem's CSV trace format (specified in `docs/trace-formats.md`): one event a line,
//! readable and writable by hand and by spreadsheet tools.
//!
//! ```text
//! time_ns,pid,event,page_kind,owner,index,op,value
//! 0,1234,start,,,,,com.example.app
//! 10,1234,importance,,,,,foreground
//! 20,1234,access,anon,1234,4096,W,
//! 30,1234,access,file,77,0,R,
//! 40,1234,exit,,,,,
//! ```

use std::io::{Read, Seek, Write};
use std::path::{Path, PathBuf};

use super::shared::{empty_input, parse_u64, read_up_to, PartialFile};
use super::{Event, EventKind, EventSource, Interner, PageKey, PageKind, Tables, Trace};
use crate::{Error, Position, Result};

/// The columns, in order; the first non-comment line of a file must name exactly these.
pub const COLUMNS: [&str; 8] = [
    "time_ns",
    "pid",
    "event",
    "page_kind",
    "owner",
    "index",
    "op",
    "value",
];

/// The first line of a CSV trace whose writer has not finished, or never will (the file
/// `NAME.partial` a killed `gen` or `convert` leaves), padded with spaces to the length of
/// the header line, which replaces it when the writer finishes. A file that starts with
/// it is refused, as `.mmt` files with `mmt::UNFINISHED_MAGIC` are.
pub const UNFINISHED_MARK: &str = "# UNFINISHED: the writer did not finish";

/// Longest record the reader takes, in bytes as written with its line break. An event line
/// is a few dozen bytes; a record that goes on past this (a file that is not a CSV trace,
/// a quote never closed) is an error, so that one record cannot take memory without
/// bound.
pub const MAX_RECORD_BYTES: u64 = 1 << 20;

/// Android importance classes accepted in the `value` column of importance events, with
/// the `oom_score_adj` each stands for (the bottom of the class's range in
/// ActivityManager's `ProcessList`; `background` is an alias of `cached`).
pub const IMPORTANCE_CLASSES: [(&str, i16); 8] = [
    ("foreground", 0),
    ("visible", 100),
    ("perceptible", 200),
    ("service", 500),
    ("previous", 700),
    ("cached", 900),
    ("background", 900),
    ("empty", 999),
];

/// The `oom_score_adj` the kernel derives from a legacy `oom_adj` write (-17..=15), by
/// the rule of `oom_adj_write` in `fs/proc/base.c`: 15 maps to 1000 so that the maximum
/// stays reachable, any other value to `oom_adj * 1000 / 17` rounded towards zero (so
/// -17 maps to -1000). `None` outside -17..=15.
pub fn score_adj_from_oom_adj(oom_adj: i64) -> Option<i16> {
    match oom_adj {
        15 => Some(1000),
        -17..=14 => i16::try_from(oom_adj * 1000 / 17).ok(),
        _ => None,
    }
}

/// Streams the events of a CSV trace, interning pages and processes as they appear.
pub struct Reader {
    path: PathBuf,
    records: Records,
    interner: Interner,
}

impl Reader {
    /// Check the header line; events are read by `read_batch`.
    pub fn new(path: &Path, mut input: Box<dyn Read + Send>) -> Result<Self> {
        let mut head = vec![0u8; UNFINISHED_MARK.len()];
        let got = read_up_to(&mut input, &mut head).map_err(|e| Error::io(path, e))?;
        head.truncate(got);
        if head == UNFINISHED_MARK.as_bytes() {
            return Err(Error::format(
                path,
                Position::Line(1),
                "incomplete trace: the writer did not finish (the file starts with its \
                 UNFINISHED mark)",
            ));
        }
        let input: Box<dyn Read + Send> = Box::new(std::io::Cursor::new(head).chain(input));
        let mut reader = Reader {
            path: path.to_path_buf(),
            records: Records::new(input),
            interner: Interner::new(),
        };
        let expected = format!("expected the header line `{}`", COLUMNS.join(","));
        let Some(line) = reader.records.next(path)? else {
            if reader.records.bytes_read() == 0 {
                return Err(empty_input(path, "a CSV trace"));
            }
            return Err(Error::format(
                path,
                Position::Line(1),
                format!("the file holds no events, only comments and blank lines: {expected}"),
            ));
        };
        let records = &reader.records;
        let fields = (0..records.len()).map(|i| trim(records.get(i)));
        if fields.eq(COLUMNS.iter().map(|c| c.as_bytes())) {
            Ok(reader)
        } else {
            let header: Vec<&[u8]> = (0..records.len()).map(|i| trim(records.get(i))).collect();
            let block_layout = super::columns::MOBILE_BLOCK_HEADER
                .split(',')
                .map(str::as_bytes);
            let hint = if header.iter().copied().eq(block_layout) {
                " (this header is the Pixel 6a block trace's: give --format mobile-block)"
            } else {
                // Any other layout is read by saying which column holds what.
                " (a CSV of another layout: give --columns SPEC, which column holds what; \
                 see docs/trace-formats.md)"
            };
            Err(Error::format(
                path,
                Position::Line(line),
                format!("{expected}{hint}"),
            ))
        }
    }
}

impl EventSource for Reader {
    fn read_batch(&mut self, buf: &mut Vec<Event>, max: usize) -> Result<bool> {
        buf.clear();
        while buf.len() < max.max(1) {
            let Some(line) = self.records.next(&self.path)? else {
                break;
            };
            let event = parse_event(&self.records, &mut self.interner)
                .map_err(|message| Error::format(&self.path, Position::Line(line), message))?;
            buf.push(event);
        }
        Ok(!buf.is_empty())
    }

    /// The tables of the events read so far.
    fn tables(&mut self) -> Result<Tables> {
        Ok(self.interner.tables().clone())
    }

    /// Nothing follows the events, whose reading checked the whole input.
    fn finish(&mut self) -> Result<()> {
        Ok(())
    }
}

/// Bytes the csv reader asks of the input at a time.
const READ_BUFFER: usize = 1 << 16;

const BYTE_ORDER_MARK: &[u8] = b"\xEF\xBB\xBF";

/// The records of the input, split by the `csv` crate into fields separated by commas. A
/// field may be put in double quotes, inside which `""` stands for `"` and line breaks
/// are kept. Lines that start with `#` and blank lines are skipped between records.
///
/// The csv reader is more lenient than the format: it takes text after a closing quote
/// into the field, ends a quoted field left open at the end of the file, and numbers a
/// record by the line where the previous one ended, before any comment or blank line. So
/// it reads through [`RawInput`], which keeps the record being read as written and the
/// number of the line it starts on, and each record is checked against what was written.
struct Records {
    csv: ::csv::Reader<RawInput>,
    record: ::csv::ByteRecord,
    /// The csv reader left the `\r` of the record's `\r\n` line break at the end of its
    /// last field.
    crlf: bool,
}

impl Records {
    fn new(input: Box<dyn Read + Send>) -> Records {
        let csv = ::csv::ReaderBuilder::new()
            .has_headers(false)
            .flexible(true)
            .comment(Some(b'#'))
            .terminator(::csv::Terminator::Any(b'\n'))
            .buffer_capacity(READ_BUFFER)
            .from_reader(RawInput::new(input));
        Records {
            csv,
            record: ::csv::ByteRecord::new(),
            crlf: false,
        }
    }

    fn len(&self) -> usize {
        self.record.len()
    }

    /// Bytes read from the input so far.
    fn bytes_read(&self) -> u64 {
        let input = self.csv.get_ref();
        input.kept_at + input.kept.len() as u64
    }

    /// The fields of the current record, which has `N` of them.
    fn fields<const N: usize>(&self) -> [&[u8]; N] {
        debug_assert_eq!(self.record.len(), N);
        let mut fields = [&[][..]; N];
        for (slot, field) in fields.iter_mut().zip(&self.record) {
            *slot = field;
        }
        if let (true, Some(last)) = (self.crlf, fields.last_mut()) {
            *last = &last[..last.len() - 1];
        }
        fields
    }

    /// Field `i` of the current record (empty if there is no such field).
    fn get(&self, i: usize) -> &[u8] {
        match self.record.get(i) {
            Some(field) if self.crlf && i + 1 == self.record.len() => &field[..field.len() - 1],
            Some(field) => field,
            None => &[],
        }
    }

    /// Read the next record; returns the number of the line it starts on.
    fn next(&mut self, path: &Path) -> Result<Option<u64>> {
        loop {
            let read = self.csv.read_byte_record(&mut self.record);
            let input = self.csv.get_ref();
            let line = input.line;
            match read {
                Ok(true) => {}
                Ok(false) => return Ok(None),
                Err(e) => return Err(read_error(path, line, input.too_long, e)),
            }
            let end = self.csv.position().byte();
            let written = input.record(end);
            // Reading stops at a record that outgrows the limit; one that ends in the bytes
            // read with it is caught here.
            if written.len() as u64 > MAX_RECORD_BYTES {
                return Err(record_too_long(path, line));
            }
            let blank = self.record.len() == 1 && written.iter().all(u8::is_ascii_whitespace);
            let (crlf, lines) = match as_written(written, &self.record) {
                Ok(read) => read,
                Err(QuoteError::TextAfterQuote(at)) => {
                    let before = written[..at].iter().filter(|&&b| b == b'\n').count();
                    return Err(Error::format(
                        path,
                        Position::Line(line + before as u64),
                        "a closing quote must end its field",
                    ));
                }
                Err(QuoteError::Unclosed) => {
                    return Err(Error::format(
                        path,
                        Position::Line(line),
                        "a quoted field is not closed before the end of the file",
                    ))
                }
            };
            self.crlf = crlf;
            self.csv.get_mut().record_read(end, lines);
            if !blank {
                return Ok(Some(line));
            }
        }
    }
}

/// The error of a failed read of the record that starts on `line`. Reading byte records
/// of any length, the csv reader fails only when its input does: the input itself, or
/// [`RawInput`] stopping a record longer than [`MAX_RECORD_BYTES`] (`too_long`).
fn read_error(path: &Path, line: u64, too_long: bool, e: ::csv::Error) -> Error {
    if too_long {
        return record_too_long(path, line);
    }
    match e.into_kind() {
        ::csv::ErrorKind::Io(e) => Error::io(path, e),
        other => Error::io(path, std::io::Error::other(format!("{other:?}"))),
    }
}

fn record_too_long(path: &Path, line: u64) -> Error {
    let message =
        format!("a record longer than {MAX_RECORD_BYTES} bytes, expected one event a line");
    Error::format(path, Position::Line(line), message)
}

/// Where a record as written breaks the format's quoting.
enum QuoteError {
    /// Text follows the closing quote at this offset of the record.
    TextAfterQuote(usize),
    /// The input ends inside a quoted field.
    Unclosed,
}

/// Check `written`, one record as written, against the fields the csv reader made of it:
/// each field must be written as it is, or in quotes with every `"` in it doubled,
/// followed by a comma or the end of the record. Returns whether the record ends with a
/// `\r\n` line break, whose `\r` the csv reader leaves at the end of the last field, and
/// the number of line breaks in the record.
fn as_written(written: &[u8], record: &::csv::ByteRecord) -> Result<(bool, u64), QuoteError> {
    let crlf = written.ends_with(b"\r\n");
    // Without quotes, the record is one line and its fields are as written.
    if !written.contains(&b'"') {
        return Ok((crlf, u64::from(written.last() == Some(&b'\n'))));
    }
    let lines = written.iter().filter(|&&b| b == b'\n').count() as u64;
    let mut at = 0;
    for (i, field) in record.iter().enumerate() {
        if i > 0 {
            // The comma.
            at += 1;
        }
        if written.get(at) != Some(&b'"') {
            at += field.len();
            continue;
        }
        at += 1;
        let last = i + 1 == record.len();
        for (f, &byte) in field.iter().enumerate() {
            match written.get(at) {
                Some(b'"') if byte == b'"' && written.get(at + 1) == Some(&b'"') => at += 2,
                // The closing quote, then the line break.
                Some(b'"') if last && &field[f..] == b"\r" && &written[at..] == b"\"\r\n" => {
                    return Ok((true, lines))
                }
                // The csv reader closed the quotes here and took what follows into the
                // field.
                Some(b'"') => return Err(QuoteError::TextAfterQuote(at)),
                Some(_) => at += 1,
                None => return Err(QuoteError::Unclosed),
            }
        }
        if written.get(at) != Some(&b'"') {
            return Err(QuoteError::Unclosed);
        }
        at += 1;
    }
    Ok((crlf, lines))
}

/// The input under the csv reader. It keeps the bytes of the record being read as
/// written, and the number of the line the record starts on: like the csv reader, it
/// passes over a byte order mark at the start of the input and, before each record, the
/// lines that start with `#` and the empty lines.
struct RawInput {
    input: Box<dyn Read + Send>,
    /// Bytes read and not yet dropped: `kept[0]` is byte `kept_at` of the input.
    kept: Vec<u8>,
    kept_at: u64,
    /// Where the next record starts, or how far the lines before it have been passed over.
    start: u64,
    /// What `start` is in.
    at: Place,
    /// Number of the line `start` is on.
    line: u64,
    /// Reading stopped inside a record longer than [`MAX_RECORD_BYTES`].
    too_long: bool,
}

/// What the input holds at [`RawInput::start`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Place {
    /// The start of the input, where a byte order mark may stand.
    Beginning,
    LineStart,
    /// A comment line, to its line break.
    Comment,
    /// The next record.
    Record,
}

impl RawInput {
    fn new(input: Box<dyn Read + Send>) -> RawInput {
        RawInput {
            input,
            kept: Vec::new(),
            kept_at: 0,
            start: 0,
            at: Place::Beginning,
            line: 1,
            too_long: false,
        }
    }

    /// Bytes kept from `start` up to byte `end` of the input.
    fn record(&self, end: u64) -> &[u8] {
        &self.kept[(self.start - self.kept_at) as usize..(end - self.kept_at) as usize]
    }

    /// The csv reader has read the record from `start` up to byte `end`, which holds
    /// `lines` line breaks: pass over the lines before the next one.
    fn record_read(&mut self, end: u64, lines: u64) {
        self.line += lines;
        self.start = end;
        self.at = Place::LineStart;
        self.pass_over();
    }

    /// Move `start` over the comment and empty lines before the next record, as far as
    /// the bytes read go.
    fn pass_over(&mut self) {
        let end = self.kept_at + self.kept.len() as u64;
        while self.start < end {
            let rest = &self.kept[(self.start - self.kept_at) as usize..];
            match self.at {
                Place::Record => return,
                // The csv reader drops the mark only when the first bytes it is given
                // hold it whole, which `read` sees to.
                Place::Beginning => {
                    if rest.starts_with(BYTE_ORDER_MARK) {
                        self.start += BYTE_ORDER_MARK.len() as u64;
                    }
                    self.at = Place::LineStart;
                }
                Place::LineStart => match rest[0] {
                    b'#' => self.at = Place::Comment,
                    b'\n' => {
                        self.start += 1;
                        self.line += 1;
                    }
                    _ => self.at = Place::Record,
                },
                Place::Comment => match rest.iter().position(|&b| b == b'\n') {
                    Some(i) => {
                        self.start += i as u64 + 1;
                        self.line += 1;
                        self.at = Place::LineStart;
                    }
                    None => self.start = end,
                },
            }
        }
    }
}

impl Read for RawInput {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        // The csv reader asks for more only once it has taken every byte read before: what
        // is kept from `start` on is the part of the record it is still reading.
        let kept_end = self.kept_at + self.kept.len() as u64;
        if self.at == Place::Record && kept_end - self.start > MAX_RECORD_BYTES {
            self.too_long = true;
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                "record too long",
            ));
        }
        self.kept.drain(..(self.start - self.kept_at) as usize);
        self.kept_at = self.start;
        let n = if self.at == Place::Beginning {
            // A whole byte order mark and a byte after it, unless the input ends first:
            // given only the mark, the csv reader would take the input to have ended.
            let first = buf.len().min(BYTE_ORDER_MARK.len() + 1);
            read_up_to(&mut self.input, &mut buf[..first])?
        } else {
            // Read again when interrupted: the csv reader would stop at the error.
            loop {
                match self.input.read(buf) {
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                    read => break read?,
                }
            }
        };
        self.kept.extend_from_slice(&buf[..n]);
        self.pass_over();
        Ok(n)
    }
}

/// Decode one line. Errors are messages; the caller adds the file and line.
fn parse_event(record: &Records, interner: &mut Interner) -> Result<Event, String> {
    if record.len() != COLUMNS.len() {
        return Err(format!(
            "expected {} fields ({}), found {}",
            COLUMNS.len(),
            COLUMNS.join(","),
            record.len()
        ));
    }
    let fields = record.fields::<{ COLUMNS.len() }>();
    let field = |i: usize| fields[i];
    // Column `i`, a non-negative integer; `expected` says what it stands for.
    let number = |i: usize, expected: &str| {
        parse_u64(trim(field(i))).ok_or_else(|| invalid(field(i), COLUMNS[i], expected))
    };
    let time_ns = number(0, "a non-negative integer of nanoseconds")?;
    let pid = parse_u64(trim(field(1)))
        .and_then(|pid| u32::try_from(pid).ok())
        .ok_or_else(|| invalid(field(1), "pid", "an integer in 0..=4294967295"))?;
    let event = trim(field(2));
    let kind = event_kind(event).ok_or_else(|| {
        invalid(
            field(2),
            "event",
            "access, importance, start, exit, swap_out, swap_in or input",
        )
    })?;

    let must_be_empty = |columns: std::ops::Range<usize>| -> Result<(), String> {
        match columns.into_iter().find(|&i| !trim(field(i)).is_empty()) {
            None => Ok(()),
            Some(i) => Err(format!(
                "`{}` must be empty on {} events, found `{}`",
                COLUMNS[i],
                String::from_utf8_lossy(event),
                String::from_utf8_lossy(field(i))
            )),
        }
    };
    let process = |interner: &mut Interner| {
        interner
            .process(pid)
            .ok_or_else(|| "more processes than the 2^27 process ids".to_string())
    };
    let page = |interner: &mut Interner, key: PageKey| {
        interner
            .page(key)
            .ok_or_else(|| "more distinct pages than the 2^32 - 1 page ids".to_string())
    };

    match kind {
        EventKind::Access => {
            must_be_empty(7..8)?;
            let page_kind = trim(field(3));
            let anon = if page_kind.eq_ignore_ascii_case(b"anon") {
                true
            } else if page_kind.eq_ignore_ascii_case(b"file") {
                false
            } else {
                return Err(invalid(field(3), "page_kind", "file or anon"));
            };
            let owner = number(4, "a non-negative integer (file id, or pid for anon)")?;
            let index = number(
                5,
                "a non-negative integer (page index or virtual page number)",
            )?;
            let write = parse_op(trim(field(6)))
                .ok_or_else(|| invalid(field(6), "op", "R or W (or read, write)"))?;
            let key = if anon {
                PageKey::anon(owner, index)
            } else {
                PageKey::file(owner, index)
            };
            let proc = process(interner)?;
            let page = page(interner, key)?;
            Ok(Event::access(time_ns, proc, page, write, anon))
        }
        EventKind::Importance => {
            must_be_empty(3..7)?;
            let adj = parse_importance(trim(field(7)))?;
            Ok(Event::importance(time_ns, process(interner)?, adj))
        }
        EventKind::Start => {
            must_be_empty(3..7)?;
            let name = std::str::from_utf8(field(7))
                .map_err(|_| "the process name in `value` is not valid UTF-8".to_string())?;
            let proc = interner
                .start_process(pid, name)
                .ok_or_else(|| "more processes than the 2^27 process ids".to_string())?;
            Ok(Event::start(time_ns, proc))
        }
        EventKind::Exit => {
            must_be_empty(3..8)?;
            Ok(Event::exit(time_ns, process(interner)?))
        }
        EventKind::Input => {
            must_be_empty(3..8)?;
            Ok(Event::input(time_ns, process(interner)?))
        }
        EventKind::SwapOut | EventKind::SwapIn => {
            must_be_empty(6..8)?;
            if !trim(field(3)).eq_ignore_ascii_case(b"anon") {
                return Err(invalid(
                    field(3),
                    "page_kind",
                    "anon (swap holds anonymous pages)",
                ));
            }
            let owner = number(4, "a non-negative integer (the pid owning the page)")?;
            let index = number(5, "a non-negative integer (virtual page number)")?;
            let proc = process(interner)?;
            let page = page(interner, PageKey::anon(owner, index))?;
            Ok(if kind == EventKind::SwapOut {
                Event::swap_out(time_ns, proc, page)
            } else {
                Event::swap_in(time_ns, proc, page)
            })
        }
    }
}

/// The kind an `event` column's keyword (in any case) stands for.
fn event_kind(event: &[u8]) -> Option<EventKind> {
    let mut lower = [0u8; 10];
    let lower = lower.get_mut(..event.len())?;
    lower.copy_from_slice(event);
    lower.make_ascii_lowercase();
    Some(match &*lower {
        b"access" => EventKind::Access,
        b"importance" => EventKind::Importance,
        b"start" => EventKind::Start,
        b"exit" => EventKind::Exit,
        b"swap_out" => EventKind::SwapOut,
        b"swap_in" => EventKind::SwapIn,
        b"input" => EventKind::Input,
        _ => return None,
    })
}

#[cold]
fn invalid(found: &[u8], column: &str, expected: &str) -> String {
    format!(
        "`{column}` is `{}`, expected {expected}",
        String::from_utf8_lossy(found)
    )
}

fn parse_op(op: &[u8]) -> Option<bool> {
    if op.eq_ignore_ascii_case(b"r") || op.eq_ignore_ascii_case(b"read") {
        Some(false)
    } else if op.eq_ignore_ascii_case(b"w") || op.eq_ignore_ascii_case(b"write") {
        Some(true)
    } else {
        None
    }
}

/// An importance value: an `oom_score_adj`, `oom_adj=N`, or a class name.
fn parse_importance(value: &[u8]) -> Result<i16, String> {
    let expected = "an oom_score_adj integer in -1000..=1000, oom_adj=N with N in -17..=15, \
                    or one of foreground, visible, perceptible, service, previous, cached, \
                    background, empty";
    if let Some(legacy) = strip_prefix_ignore_case(value, b"oom_adj=") {
        return parse_i64(trim(legacy))
            .and_then(score_adj_from_oom_adj)
            .ok_or_else(|| invalid(value, "value", expected));
    }
    if let Some(adj) = parse_i64(value) {
        return i16::try_from(adj)
            .ok()
            .filter(|adj| (-1000..=1000).contains(adj))
            .ok_or_else(|| invalid(value, "value", expected));
    }
    IMPORTANCE_CLASSES
        .iter()
        .find(|(name, _)| value.eq_ignore_ascii_case(name.as_bytes()))
        .map(|&(_, adj)| adj)
        .ok_or_else(|| invalid(value, "value", expected))
}

fn strip_prefix_ignore_case<'a>(value: &'a [u8], prefix: &[u8]) -> Option<&'a [u8]> {
    if value.len() >= prefix.len() && value[..prefix.len()].eq_ignore_ascii_case(prefix) {
        Some(&value[prefix.len()..])
    } else {
        None
    }
}

fn trim(field: &[u8]) -> &[u8] {
    let start = field
        .iter()
        .position(|b| !b.is_ascii_whitespace())
        .unwrap_or(field.len());
    let end = field
        .iter()
        .rposition(|b| !b.is_ascii_whitespace())
        .map_or(start, |last| last + 1);
    &field[start..end]
}

fn parse_i64(text: &[u8]) -> Option<i64> {
    match text.split_first() {
        Some((b'-', digits)) => parse_u64(digits)
            .and_then(|v| i64::try_from(v).ok())
            .map(|v| -v),
        Some((b'+', digits)) => parse_u64(digits).and_then(|v| i64::try_from(v).ok()),
        _ => parse_u64(text).and_then(|v| i64::try_from(v).ok()),
    }
}

/// Write `trace` as CSV: exactly its events, one a line, importance as `oom_score_adj`
/// integers and process names on start events. The file appears at `path` only once
/// complete.
///
/// Reading the file back gives the same trace when the trace's ids were assigned in
/// order of first appearance (as every reader and generator does) and every process
/// with a name has a start event; a name without a start event is not written.
///
/// Until it is complete the file is `<path>.partial`, whose first line is
/// [`UNFINISHED_MARK`] in place of the header line: the header is written over it last.
pub fn write(path: &Path, trace: &Trace) -> Result<()> {
    let header = header_line();
    let mut file = PartialFile::create(path)?;
    let written = file
        .write_all(&unfinished_line(header.len()))
        .map_err(WriteError::Io)
        .and_then(|()| write_events(&mut file, trace))
        .and_then(|()| write_header(&mut file, &header).map_err(WriteError::Io));
    match written {
        Ok(()) => file.commit(),
        Err(WriteError::Io(e)) => Err(file.io_error(e)),
        Err(WriteError::Trace(message)) => Err(Error::config(path.display().to_string(), message)),
    }
}

/// Write `header` over the unfinished mark at the start of the file.
fn write_header(file: &mut PartialFile, header: &[u8]) -> std::io::Result<()> {
    let out = file.writer()?;
    out.seek(std::io::SeekFrom::Start(0))?;
    out.write_all(header)
}

/// The header line as the writer writes it.
fn header_line() -> Vec<u8> {
    format!("{}\n", COLUMNS.join(",")).into_bytes()
}

/// [`UNFINISHED_MARK`] as the first line of a file being written, `length` bytes long with
/// its line break.
fn unfinished_line(length: usize) -> Vec<u8> {
    let mut line = UNFINISHED_MARK.as_bytes().to_vec();
    debug_assert!(line.len() < length);
    line.resize(length - 1, b' ');
    line.push(b'\n');
    line
}

enum WriteError {
    Io(std::io::Error),
    /// The trace is inconsistent (an id outside its tables).
    Trace(String),
}

impl From<::csv::Error> for WriteError {
    fn from(e: ::csv::Error) -> Self {
        WriteError::Io(e.into())
    }
}

fn write_events(out: &mut dyn Write, trace: &Trace) -> Result<(), WriteError> {
    // The header line is written last, over the unfinished mark.
    let mut csv = ::csv::WriterBuilder::new()
        .buffer_capacity(1 << 16)
        .from_writer(out);
    // Formatting scratch, reused across lines.
    let mut time = String::new();
    let mut pid = String::new();
    let mut owner = String::new();
    let mut index = String::new();
    let mut value = String::new();
    for (i, event) in trace.events.iter().enumerate() {
        let bad = |what: String| WriteError::Trace(format!("event {i}: {what}"));
        let process = trace
            .tables
            .processes
            .get(event.proc() as usize)
            .ok_or_else(|| {
                bad(format!(
                    "process id {} is not in the process table",
                    event.proc()
                ))
            })?;
        let page = || {
            trace
                .tables
                .pages
                .get(event.page() as usize)
                .ok_or_else(|| bad(format!("page id {} is not in the page table", event.page())))
        };
        set_number(&mut time, event.time_ns());
        set_number(&mut pid, process.pid);
        let mut page_kind = "";
        let mut op = "";
        owner.clear();
        index.clear();
        value.clear();
        let kind = match event.kind() {
            EventKind::SwapOut | EventKind::SwapIn => {
                let page = page()?;
                if page.kind != PageKind::Anon {
                    return Err(bad(format!(
                        "swap event of page {}, which is not anonymous",
                        event.page()
                    )));
                }
                page_kind = "anon";
                set_number(&mut owner, page.owner);
                set_number(&mut index, page.index);
                if event.kind() == EventKind::SwapOut {
                    "swap_out"
                } else {
                    "swap_in"
                }
            }
            EventKind::Access => {
                let page = page()?;
                if (page.kind == PageKind::Anon) != event.is_anon() {
                    return Err(bad(format!(
                        "the anonymous flag disagrees with the kind of page {}",
                        event.page()
                    )));
                }
                page_kind = match page.kind {
                    PageKind::File => "file",
                    PageKind::Anon => "anon",
                };
                set_number(&mut owner, page.owner);
                set_number(&mut index, page.index);
                op = if event.is_write() { "W" } else { "R" };
                "access"
            }
            EventKind::Importance => {
                set_number(&mut value, event.oom_score_adj());
                "importance"
            }
            EventKind::Start => {
                value.push_str(&process.name);
                "start"
            }
            EventKind::Exit => "exit",
            EventKind::Input => "input",
        };
        csv.write_record([
            time.as_str(),
            pid.as_str(),
            kind,
            page_kind,
            owner.as_str(),
            index.as_str(),
            op,
            value.as_str(),
        ])?;
    }
    csv.flush().map_err(WriteError::Io)
}

fn set_number(out: &mut String, number: impl std::fmt::Display) {
    use std::fmt::Write as _;
    out.clear();
    // Writing to a String cannot fail.
    let _ = write!(out, "{number}");
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Hands out its data `size` bytes at a time, each read interrupted once first.
    struct Trickle {
        data: Vec<u8>,
        at: usize,
        size: usize,
        interrupted: bool,
    }

    impl Read for Trickle {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            self.interrupted = !self.interrupted;
            if self.interrupted {
                return Err(std::io::ErrorKind::Interrupted.into());
            }
            let n = self.size.min(buf.len()).min(self.data.len() - self.at);
            buf[..n].copy_from_slice(&self.data[self.at..self.at + n]);
            self.at += n;
            Ok(n)
        }
    }

    fn read(input: Box<dyn Read + Send>) -> std::result::Result<(Vec<Event>, Tables), String> {
        let mut reader = Reader::new(Path::new("t.csv"), input).map_err(|e| e.to_string())?;
        let (mut events, mut batch) = (Vec::new(), Vec::new());
        while reader
            .read_batch(&mut batch, 2)
            .map_err(|e| e.to_string())?
        {
            events.extend_from_slice(&batch);
        }
        Ok((events, reader.tables().map_err(|e| e.to_string())?))
    }

    #[test]
    fn the_unfinished_mark_stands_where_the_header_goes() {
        let header = header_line();
        let mark = unfinished_line(header.len());
        assert_eq!(mark.len(), header.len());
        assert!(mark.starts_with(UNFINISHED_MARK.as_bytes()) && mark.ends_with(b"\n"));
        // What a killed writer leaves: the mark, then events.
        let mut partial = mark.clone();
        partial.extend_from_slice(b"0,1,exit,,,,,\n");
        let message = read(Box::new(std::io::Cursor::new(partial))).unwrap_err();
        assert!(
            message.starts_with("t.csv: line 1: incomplete trace: the writer did not finish"),
            "{message}"
        );
        // Finished, the header is over it.
        let mut whole = header.clone();
        whole.extend_from_slice(b"0,1,exit,,,,,\n");
        assert_eq!(
            read(Box::new(std::io::Cursor::new(whole))).unwrap().0.len(),
            1
        );
    }

    #[test]
    fn short_and_interrupted_reads_read_the_same() {
        let header = COLUMNS.join(",");
        let good = format!(
            "\u{FEFF}# note \"\n\n{header}\r\n0,1,start,,,,,\"two\r\nlines, \"\"quoted\"\"\"\r\n  \n#\n1,1,access,file,1,2,R,\n2,1,exit,,,,,"
        );
        let bad = format!("{header}\n# \"\n0,1,start,,,,,\"a\nb\"c,\n");
        for (data, expected) in [(good, Ok(3)), (bad, Err("t.csv: line 4: a closing quote"))] {
            let whole = read(Box::new(std::io::Cursor::new(data.clone().into_bytes())));
            match (&whole, expected) {
                (Ok((events, _)), Ok(n)) => assert_eq!(events.len(), n),
                (Err(message), Err(start)) => assert!(message.starts_with(start), "{message}"),
                _ => panic!("{data:?} read as {whole:?}"),
            }
            for size in 1..=5 {
                let trickle = Trickle {
                    data: data.clone().into_bytes(),
                    at: 0,
                    size,
                    interrupted: false,
                };
                assert_eq!(read(Box::new(trickle)), whole, "{size} bytes a read");
            }
        }
    }
}
