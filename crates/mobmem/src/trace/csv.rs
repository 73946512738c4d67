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

use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};

use super::shared::{parse_u64, PartialFile};
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
    pub fn new(path: &Path, input: Box<dyn Read + Send>) -> Result<Self> {
        let mut reader = Reader {
            path: path.to_path_buf(),
            records: Records::new(input),
            interner: Interner::new(),
        };
        let expected = format!("expected the header line `{}`", COLUMNS.join(","));
        let Some(line) = reader.records.next(path)? else {
            return Err(Error::format(
                path,
                Position::Line(1),
                format!("empty file: {expected}"),
            ));
        };
        let records = &reader.records;
        let fields = (0..records.len()).map(|i| trim(records.get(i)));
        if fields.eq(COLUMNS.iter().map(|c| c.as_bytes())) {
            Ok(reader)
        } else {
            Err(Error::format(path, Position::Line(line), expected))
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
}

/// Splits the input into records of fields separated by commas. A field may be put in
/// double quotes, inside which `""` stands for `"` and line breaks are kept. Lines that
/// start with `#` and blank lines are skipped between records.
///
/// Done here rather than with the `csv` crate's reader, which numbers a record by the
/// line where the previous record ended, wrong after a comment or a blank line.
struct Records {
    input: BufReader<Box<dyn Read + Send>>,
    /// The physical line being split, with its line break.
    line: Vec<u8>,
    /// Physical lines read so far.
    lines_read: u64,
    /// The current record's fields, unquoted, one after the other, and where each ends.
    bytes: Vec<u8>,
    ends: Vec<usize>,
}

impl Records {
    fn new(input: Box<dyn Read + Send>) -> Records {
        Records {
            input: BufReader::with_capacity(1 << 16, input),
            line: Vec::new(),
            lines_read: 0,
            bytes: Vec::new(),
            ends: Vec::new(),
        }
    }

    fn len(&self) -> usize {
        self.ends.len()
    }

    /// Field `i` of the current record (empty if there is no such field).
    fn get(&self, i: usize) -> &[u8] {
        let Some(&end) = self.ends.get(i) else {
            return &[];
        };
        let start = if i == 0 { 0 } else { self.ends[i - 1] };
        &self.bytes[start..end]
    }

    fn read_line(&mut self, path: &Path) -> Result<bool> {
        self.line.clear();
        let read = self
            .input
            .read_until(b'\n', &mut self.line)
            .map_err(|e| Error::io(path, e))?;
        if read == 0 {
            return Ok(false);
        }
        self.lines_read += 1;
        // Tolerate the byte order mark that some spreadsheet tools write.
        if self.lines_read == 1 && self.line.starts_with(b"\xEF\xBB\xBF") {
            self.line.drain(..3);
        }
        Ok(true)
    }

    /// Read the next record; returns the number of the line it starts on.
    fn next(&mut self, path: &Path) -> Result<Option<u64>> {
        self.bytes.clear();
        self.ends.clear();
        loop {
            if !self.read_line(path)? {
                return Ok(None);
            }
            let skip = self.line.first() == Some(&b'#')
                || self.line.iter().all(|b| b.is_ascii_whitespace());
            if !skip {
                break;
            }
        }
        let first_line = self.lines_read;
        let mut in_quotes = false;
        loop {
            let content_end = self.line.len() - line_break_len(&self.line);
            let mut pos = 0;
            while pos < content_end {
                let byte = self.line[pos];
                pos += 1;
                if in_quotes {
                    if byte != b'"' {
                        self.bytes.push(byte);
                    } else if pos < content_end && self.line[pos] == b'"' {
                        self.bytes.push(b'"');
                        pos += 1;
                    } else {
                        in_quotes = false;
                        if pos < content_end && self.line[pos] != b',' {
                            return Err(Error::format(
                                path,
                                Position::Line(self.lines_read),
                                "a closing quote must end its field",
                            ));
                        }
                    }
                } else if byte == b',' {
                    self.ends.push(self.bytes.len());
                } else if byte == b'"' && self.bytes.len() == self.ends.last().copied().unwrap_or(0)
                {
                    in_quotes = true;
                } else {
                    self.bytes.push(byte);
                }
            }
            if !in_quotes {
                self.ends.push(self.bytes.len());
                return Ok(Some(first_line));
            }
            // The quoted field goes on: keep the line break and read the next line.
            self.bytes.extend_from_slice(&self.line[content_end..]);
            if !self.read_line(path)? {
                return Err(Error::format(
                    path,
                    Position::Line(first_line),
                    "a quoted field is not closed before the end of the file",
                ));
            }
        }
    }
}

/// Length of the `\n` or `\r\n` that ends `line` (0 on a last line without one).
fn line_break_len(line: &[u8]) -> usize {
    if line.ends_with(b"\r\n") {
        2
    } else if line.ends_with(b"\n") {
        1
    } else {
        0
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
    let field = |i: usize| record.get(i);
    let time_ns = parse_u64(trim(field(0)))
        .ok_or_else(|| invalid(field(0), "time_ns", "a non-negative integer of nanoseconds"))?;
    let pid = parse_u64(trim(field(1)))
        .and_then(|pid| u32::try_from(pid).ok())
        .ok_or_else(|| invalid(field(1), "pid", "an integer in 0..=4294967295"))?;
    let event = trim(field(2));
    let kind = if event.eq_ignore_ascii_case(b"access") {
        EventKind::Access
    } else if event.eq_ignore_ascii_case(b"importance") {
        EventKind::Importance
    } else if event.eq_ignore_ascii_case(b"start") {
        EventKind::Start
    } else if event.eq_ignore_ascii_case(b"exit") {
        EventKind::Exit
    } else if event.eq_ignore_ascii_case(b"swap_out") {
        EventKind::SwapOut
    } else if event.eq_ignore_ascii_case(b"swap_in") {
        EventKind::SwapIn
    } else if event.eq_ignore_ascii_case(b"input") {
        EventKind::Input
    } else {
        return Err(invalid(
            field(2),
            "event",
            "access, importance, start, exit, swap_out, swap_in or input",
        ));
    };

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
            let owner = parse_u64(trim(field(4))).ok_or_else(|| {
                invalid(
                    field(4),
                    "owner",
                    "a non-negative integer (file id, or pid for anon)",
                )
            })?;
            let index = parse_u64(trim(field(5))).ok_or_else(|| {
                invalid(
                    field(5),
                    "index",
                    "a non-negative integer (page index or virtual page number)",
                )
            })?;
            let write = parse_op(trim(field(6)))
                .ok_or_else(|| invalid(field(6), "op", "R or W (or read, write)"))?;
            let key = if anon {
                PageKey::anon(owner, index)
            } else {
                PageKey::file(owner, index)
            };
            let proc = process(interner)?;
            let page = interner
                .page(key)
                .ok_or_else(|| "more distinct pages than the 2^32 - 1 page ids".to_string())?;
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
            let owner = parse_u64(trim(field(4))).ok_or_else(|| {
                invalid(
                    field(4),
                    "owner",
                    "a non-negative integer (the pid owning the page)",
                )
            })?;
            let index = parse_u64(trim(field(5))).ok_or_else(|| {
                invalid(
                    field(5),
                    "index",
                    "a non-negative integer (virtual page number)",
                )
            })?;
            let proc = process(interner)?;
            let page = interner
                .page(PageKey::anon(owner, index))
                .ok_or_else(|| "more distinct pages than the 2^32 - 1 page ids".to_string())?;
            Ok(if kind == EventKind::SwapOut {
                Event::swap_out(time_ns, proc, page)
            } else {
                Event::swap_in(time_ns, proc, page)
            })
        }
    }
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
pub fn write(path: &Path, trace: &Trace) -> Result<()> {
    let mut file = PartialFile::create(path)?;
    match write_events(&mut file, trace) {
        Ok(()) => file.commit(),
        Err(WriteError::Io(e)) => Err(file.io_error(e)),
        Err(WriteError::Trace(message)) => Err(Error::config(path.display().to_string(), message)),
    }
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
    let mut csv = ::csv::WriterBuilder::new()
        .buffer_capacity(1 << 16)
        .from_writer(out);
    csv.write_record(COLUMNS)?;
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
        set_number(&mut time, event.time_ns());
        set_number(&mut pid, process.pid);
        let mut page_kind = "";
        let mut op = "";
        owner.clear();
        index.clear();
        value.clear();
        let kind = match event.kind() {
            EventKind::SwapOut | EventKind::SwapIn => {
                let page = trace
                    .tables
                    .pages
                    .get(event.page() as usize)
                    .ok_or_else(|| {
                        bad(format!("page id {} is not in the page table", event.page()))
                    })?;
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
                let page = trace
                    .tables
                    .pages
                    .get(event.page() as usize)
                    .ok_or_else(|| {
                        bad(format!("page id {} is not in the page table", event.page()))
                    })?;
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
