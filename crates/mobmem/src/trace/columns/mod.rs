//! Text traces read by a column spec: `--format csv --columns SPEC` (`txt` for fields
//! separated by blanks), or a preset that names a common layout (`--format msr`,
//! `blkparse`, `mobile-block`, `libcachesim-csv`, `libcachesim-txt`); read only. The
//! spec's words are in [`spec`]; `docs/trace-formats.md` lists them with examples.
//!
//! A line is one request:
//! - an object (`obj-id-col`): one access of page `PageKey::file(device, id)`, with the
//!   object's size (`obj-size-col`) for byte capacities ([`EventSource::batch_sizes`]);
//!   ids are decimal integers, or with `obj-id-is-num=false` any text, each distinct
//!   text the next number from 0;
//! - a block range (`offset-col`, `length-col`): one access per 4 KiB page it covers,
//!   from `offset/4096` through `(offset+length-1)/4096` in bytes, in order, each
//!   `PageKey::file(device, page)`. A request of length 0 covers no page.
//!
//! The device column is a decimal number, or `major,minor` / `major:minor` (blkparse's
//! `8,0`), which stands for the kernel's `MKDEV(major, minor)` (`major << 20 | minor`);
//! without it every page is on device 0. Each distinct (pid, process text) is one
//! process, started at its first request with the pid (`pid-col`, the tid of a
//! `comm-tid`, else 0) and the name. Without a process or pid column, the trace has one
//! process, pid 0 and no name. The operation column makes a write or a read (reads
//! without one). Times are nanoseconds after the first request, from the time column in
//! its unit (a decimal fraction allowed, rounded to the nanosecond) and kept from going
//! backwards (a request stamped before the one above it takes that one's time); without a
//! time column, a request's time is its 0-based index.
//!
//! Fields may be wrapped in double quotes, which are removed (a quoted field cannot hold
//! the delimiter). Blank lines and comment lines (`comment=#`) are passed over, as are
//! lines the `keep` filter leaves out.
//!
//! The reading is in two halves: a `Parser` turns lines into events whose pages are
//! still keys, and a `Numbering` gives the pages their ids. With two threads allowed,
//! the parser runs on a thread of its own a few batches ahead; an object trace's pages
//! are numbered on the reader's caller's thread, beside the work on the events, and a
//! block trace's (more pages a line) on the parsing thread. The ids are the same either
//! way.
//!
//! Limits: a line of at most [`MAX_LINE_BYTES`](super::MAX_LINE_BYTES), a block request
//! of at most [`MAX_REQUEST_BYTES`], and the pages of the whole file bounded by its size
//! as for `.lis` ([`EXPANSION_ALLOWANCE`](super::EXPANSION_ALLOWANCE) plus
//! [`EXPANSION_PER_BYTE`](super::EXPANSION_PER_BYTE) a byte, as stored).

pub mod spec;

use std::io::Read;
use std::path::{Path, PathBuf};

use hashbrown::HashMap;

pub use spec::{Address, Column, ColumnSpec, Delimiter, OpForm, ProcessForm, TimeUnit, PRESETS};

use super::object_ids::ObjectIds;
use super::shared::{
    empty_input, line_too_long, parse_u64, Expansion, LineBlock, LineRead, StoredBytes,
    EXPANSION_ALLOWANCE, EXPANSION_PER_BYTE, MAX_LINE_BYTES,
};
use super::{Event, EventSource, Interner, PageId, PageKey, ProcId, ProcessInfo, Tables};
use crate::devices::PAGE_BYTES;
use crate::{Error, Position, Result};

/// The header line of the Pixel 6a block traces (`--format mobile-block`).
pub const MOBILE_BLOCK_HEADER: &str = "proces,device,rw_flag,sector,size,timestamp";
/// Most bytes one block request may cover: 1 GiB. The kernel splits block requests far
/// smaller (a few MiB at most).
pub const MAX_REQUEST_BYTES: u64 = 1 << 30;

/// Pids below this are looked up by index (the kernel's `PID_MAX_DEFAULT` is 32768);
/// the table stays within 256 KiB whatever pid a file names, and larger pids are hashed.
const PID_TABLE_LEN: usize = 1 << 16;
/// Marks a pid of the table with no process yet.
const NO_PROCESS: ProcId = ProcId::MAX;

/// Most digits after a number's decimal point (a float printed in full has about 17).
const MAX_FRACTION_DIGITS: usize = 32;

type FastMap<K, V> = HashMap<K, V, foldhash::fast::FixedState>;

/// The spec's columns as 0-based field indexes of the file's lines.
#[derive(Debug, Clone, Copy, Default)]
struct Fields {
    time: Option<usize>,
    id: usize,
    size: Option<usize>,
    length: Option<usize>,
    op: Option<usize>,
    pid: Option<usize>,
    process: Option<usize>,
    device: Option<usize>,
    keep: Option<usize>,
    /// Fields a line must have: one past the highest index named.
    needed: usize,
}

/// What [`Parser::parse_plain`] does with a field of a line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Slot {
    /// Not read.
    Skip,
    /// Kept as text: a process, a pid beside one, an object id as text.
    Text,
    /// A pid without a process column: read as a number when written as a plain decimal
    /// (see `plain_decimal`), else the line is split and read by [`Parser::parse`].
    Pid,
    Op,
    Time,
    /// The object id or the block offset.
    Id,
    Size,
    Length,
    Device,
}

impl Fields {
    /// The slot of each field up to the last one read, for [`Parser::parse_plain`];
    /// `None` when a spec's reading needs the general parser: fields separated by
    /// blanks or by a digit, a `keep-col`, or a field read for two things.
    fn plain_slots(&self, spec: &ColumnSpec, text_ids: bool) -> Option<Box<[Slot]>> {
        match spec.delimiter {
            Delimiter::Byte(d) if !d.is_ascii_digit() => {}
            _ => return None,
        }
        if self.keep.is_some() {
            return None;
        }
        let mut slots = vec![Slot::Skip; self.needed];
        let id = if text_ids { Slot::Text } else { Slot::Id };
        for (field, slot) in [
            (self.time, Slot::Time),
            (Some(self.id), id),
            (self.size, Slot::Size),
            (self.length, Slot::Length),
            (self.op, Slot::Op),
            (
                self.pid,
                if self.process.is_some() {
                    Slot::Text
                } else {
                    Slot::Pid
                },
            ),
            (self.process, Slot::Text),
            (self.device, Slot::Device),
        ] {
            if let Some(i) = field {
                if slots[i] != Slot::Skip {
                    return None;
                }
                slots[i] = slot;
            }
        }
        Some(slots.into_boxed_slice())
    }
}

/// The parsing half of [`Reader`]: lines into requests, requests into events whose pages
/// are still keys (numbered by [`Numbering`]), in order.
struct Parser {
    path: PathBuf,
    input: Box<dyn Read + Send>,
    spec: ColumnSpec,
    fields: Fields,
    /// Block mode: bytes in one unit of the offset and of the length; `None` for objects.
    block_units: Option<(u64, u64)>,
    /// Object ids as text: each distinct text's number.
    text_ids: Option<FastMap<Vec<u8>, u64>>,
    /// The input's lines; the current one is `lines.line()`.
    lines: LineBlock,
    /// Field boundaries of the current line, reused.
    spans: Vec<(usize, usize)>,
    /// How [`Parser::parse_plain`] reads each field; `None` when every line is split
    /// and read by [`Parser::parse`].
    plain: Option<Box<[Slot]>>,
    /// 1-based number of the current line.
    line_number: u64,
    /// Names of the header's fields, for messages.
    header: Vec<String>,
    /// The processes (the pages are [`Numbering`]'s).
    interner: Interner,
    /// Page accesses given out so far: a bound on the distinct pages.
    keys_given: u64,
    /// The process of each (pid field, process field) seen.
    processes: FastMap<Vec<u8>, ProcId>,
    /// The process of each pid written as a plain decimal, when there is no process
    /// column (see `plain_decimal`).
    pid_processes: FastMap<u64, ProcId>,
    /// The same for pids below [`PID_TABLE_LEN`], by index (`NO_PROCESS` where none).
    pid_table: Vec<ProcId>,
    /// The last such pid and its process.
    last_pid_number: Option<(u64, ProcId)>,
    /// The fields and process of the last request looked up by its text: most requests
    /// are their predecessor's process, found without hashing.
    last_pid: Vec<u8>,
    last_text: Vec<u8>,
    last_process: Option<ProcId>,
    process_key: Vec<u8>,
    /// What each one-byte operation spelling means (0: not one, 1: read, 2: write): most
    /// files spell operations with one letter, looked up without comparing strings.
    one_byte_ops: [u8; 256],
    /// The current request's pages not yet returned.
    device: u64,
    next_page: u64,
    pages_left: u64,
    write: bool,
    proc: ProcId,
    time_ns: u64,
    size: u32,
    /// Time of the first request, ns.
    first_ns: Option<u64>,
    requests: u64,
    bytes_read: u64,
    accesses: Expansion,
    stored: StoredBytes,
}

impl Parser {
    /// Check the spec and read the header line when it has one; requests are read by
    /// `read_batch`.
    pub(crate) fn with_stored(
        path: &Path,
        input: Box<dyn Read + Send>,
        stored: StoredBytes,
        spec: &ColumnSpec,
    ) -> Result<Self> {
        let Some(address) = &spec.address else {
            return Err(Error::config(
                format!("{}: {spec}", path.display()),
                "the spec names no column to read: give obj-id-col=N (an object a line) or \
                 offset-col=N with length-col=N (a block range a line)",
            ));
        };
        let (block_units, text_ids) = match address {
            Address::Object { id_is_num, .. } => (None, (!id_is_num).then(FastMap::default)),
            Address::Block {
                offset_unit,
                length_unit,
                ..
            } => (
                Some((*offset_unit, length_unit.unwrap_or(*offset_unit))),
                None,
            ),
        };
        let mut reader = Parser {
            path: path.to_path_buf(),
            input,
            spec: spec.clone(),
            fields: Fields::default(),
            block_units,
            text_ids,
            lines: LineBlock::default(),
            spans: Vec::new(),
            plain: None,
            line_number: 0,
            header: Vec::new(),
            interner: Interner::new(),
            keys_given: 0,
            processes: FastMap::default(),
            pid_processes: FastMap::default(),
            pid_table: Vec::new(),
            last_pid_number: None,
            last_pid: Vec::new(),
            last_text: Vec::new(),
            last_process: None,
            process_key: Vec::new(),
            one_byte_ops: one_byte_ops(&spec.op_form),
            device: 0,
            next_page: 0,
            pages_left: 0,
            write: false,
            proc: 0,
            time_ns: 0,
            size: 0,
            first_ns: None,
            requests: 0,
            bytes_read: 0,
            accesses: Expansion::default(),
            stored,
        };
        if spec.has_header {
            let mut lines = LineBlock::default();
            if !reader.next_content_line(&mut lines)? {
                return Err(reader.empty());
            }
            let line = lines.line().to_vec();
            reader.lines = lines;
            reader.split(&line, usize::MAX);
            reader.header = reader
                .spans
                .iter()
                .map(|&(a, b)| String::from_utf8_lossy(&line[a..b]).into_owned())
                .collect();
        }
        reader.fields = reader.resolve()?;
        reader.plain = reader
            .fields
            .plain_slots(&reader.spec, reader.text_ids.is_some());
        Ok(reader)
    }

    /// The spec's columns as field indexes, names looked up in the header.
    fn resolve(&self) -> Result<Fields> {
        let index = |key: &str, column: &Column| -> Result<usize> {
            match column {
                Column::Number(n) => Ok(n - 1),
                Column::Name(name) if !self.spec.has_header => Err(Error::config(
                    format!("{}: {}", self.path.display(), self.spec),
                    format!("{key}={name} names a column, which needs has-header=true"),
                )),
                Column::Name(name) => self
                    .header
                    .iter()
                    .position(|h| h == name)
                    .or_else(|| {
                        self.header
                            .iter()
                            .position(|h| h.eq_ignore_ascii_case(name))
                    })
                    .ok_or_else(|| {
                        self.malformed(&format!(
                            "the header has no column `{name}` ({key}); its columns are {}",
                            self.header
                                .iter()
                                .map(|h| format!("`{h}`"))
                                .collect::<Vec<_>>()
                                .join(", ")
                        ))
                    }),
            }
        };
        let optional = |key: &str, column: &Option<Column>| -> Result<Option<usize>> {
            column.as_ref().map(|c| index(key, c)).transpose()
        };
        let spec = &self.spec;
        let mut fields = Fields {
            time: optional("time-col", &spec.time)?,
            op: optional("op-col", &spec.op)?,
            pid: optional("pid-col", &spec.pid)?,
            process: optional("process-col", &spec.process)?,
            device: optional("device-col", &spec.device)?,
            keep: optional("keep-col", &spec.keep)?,
            ..Fields::default()
        };
        match &spec.address {
            Some(Address::Object { id, size, .. }) => {
                fields.id = index("obj-id-col", id)?;
                fields.size = optional("obj-size-col", size)?;
            }
            Some(Address::Block { offset, length, .. }) => {
                fields.id = index("offset-col", offset)?;
                fields.length = optional("length-col", length)?;
            }
            None => {}
        }
        fields.needed = [
            fields.time,
            Some(fields.id),
            fields.size,
            fields.length,
            fields.op,
            fields.pid,
            fields.process,
            fields.device,
            fields.keep,
        ]
        .into_iter()
        .flatten()
        .max()
        .map_or(0, |i| i + 1);
        Ok(fields)
    }

    fn empty(&self) -> Error {
        if self.bytes_read == 0 {
            empty_input(&self.path, &format!("a trace read by {}", self.spec))
        } else {
            self.malformed("no request covers a page: the file holds no events")
        }
    }

    /// The next line into `lines` (the reader's, taken out while a batch is read);
    /// `false` at the end.
    fn read_next(&mut self, lines: &mut LineBlock) -> Result<bool> {
        match lines
            .next(&mut *self.input, MAX_LINE_BYTES)
            .map_err(|e| Error::io(&self.path, e))?
        {
            LineRead::End => Ok(false),
            LineRead::TooLong => Err(line_too_long(
                &self.path,
                self.line_number + 1,
                &format!("a line of {}", self.spec),
            )),
            LineRead::Line => {
                self.line_number += 1;
                self.bytes_read += lines.line().len() as u64;
                Ok(true)
            }
        }
    }

    /// The next line that is neither blank nor a comment; `false` at the end.
    fn next_content_line(&mut self, lines: &mut LineBlock) -> Result<bool> {
        loop {
            if !self.read_next(lines)? {
                return Ok(false);
            }
            let text = trim(lines.line());
            let start = text.iter().position(|b| !b.is_ascii_whitespace());
            match start {
                None => continue,
                Some(i) if Some(text[i]) == self.spec.comment => continue,
                Some(_) => return Ok(true),
            }
        }
    }

    /// Field boundaries of `line` into `self.spans`, at most `limit` fields (the rest of
    /// the line is not looked at).
    fn split(&mut self, line: &[u8], limit: usize) {
        self.spans.clear();
        let line = trim(line);
        let padded = match self.spec.delimiter {
            Delimiter::Byte(d) => split_at_byte(line, d, limit, &mut self.spans),
            Delimiter::Whitespace => {
                let mut start = None;
                for (i, &b) in line.iter().enumerate() {
                    let blank = b == b' ' || b == b'\t';
                    match (start, blank) {
                        (None, false) => start = Some(i),
                        (Some(s), true) => {
                            self.spans.push((s, i));
                            start = None;
                            if self.spans.len() == limit {
                                break;
                            }
                        }
                        _ => {}
                    }
                }
                if let Some(s) = start {
                    self.spans.push((s, line.len()));
                }
                true
            }
        };
        if !padded {
            return;
        }
        // Every field taken is trimmed and unquoted, those before a limit too.
        for span in &mut self.spans {
            // Most fields start and end with neither a blank nor a quote: leave them.
            let plain = |b: u8| !b.is_ascii_whitespace() && b != b'"';
            if span.1 > span.0 && plain(line[span.0]) && plain(line[span.1 - 1]) {
                continue;
            }
            let field = &line[span.0..span.1];
            let mut a = span.0 + (field.len() - field.trim_ascii_start().len());
            let mut b = a + field.trim_ascii().len();
            if b - a >= 2 && line[a] == b'"' && line[b - 1] == b'"' {
                a += 1;
                b -= 1;
            }
            *span = (a, b);
        }
    }

    /// Read and parse the next request; `false` at the end of the input.
    fn next_request(&mut self, lines: &mut LineBlock) -> Result<bool> {
        loop {
            if !self.next_content_line(lines)? {
                return Ok(false);
            }
            let line = lines.line();
            let taken = match self.parse_plain(line) {
                Some(taken) => taken?,
                None => {
                    self.split(line, self.fields.needed);
                    self.parse(line)?
                }
            };
            if taken {
                return Ok(true);
            }
        }
    }

    /// The current line's field `index` (the line was split by `split`).
    fn field<'a>(&self, line: &'a [u8], index: usize) -> &'a [u8] {
        let (a, b) = self.spans[index];
        &line[a..b]
    }

    /// Parse a request line into the pending request; `false` for a line passed over.
    fn parse(&mut self, line: &[u8]) -> Result<bool> {
        // Only the indexes used: a copy of the whole `Fields` is a call to memcpy a line.
        let Fields {
            keep,
            op: op_field,
            needed,
            time,
            device: device_field,
            id,
            length,
            size: size_field,
            ..
        } = self.fields;
        if let Some(keep) = keep {
            let kept = keep < self.spans.len() && {
                let value = self.field(line, keep);
                self.spec.keep_values.iter().any(|k| k.as_bytes() == value)
            };
            if !kept {
                return Ok(false);
            }
        }
        // A request that moves no data (RWBS without R or W) may be short of the other
        // fields: blkparse prints a flush without a range.
        let op = match op_field {
            Some(i) if i < self.spans.len() => match self.op(self.field(line, i))? {
                Some(write) => Some(write),
                None => return Ok(false),
            },
            _ => None,
        };
        if self.spans.len() < needed {
            return Err(self.malformed(&format!(
                "{} fields, expected at least {} (split at {})",
                self.spans.len(),
                needed,
                self.spec.delimiter
            )));
        }
        let write = op.unwrap_or(false);
        let raw_time = match time {
            None => self.requests,
            Some(i) => self.time(self.field(line, i))?,
        };
        let device = match device_field {
            None => 0,
            Some(i) => self.device(self.field(line, i))?,
        };
        let (first, pages, size) = match self.block_units {
            Some((offset_unit, length_unit)) => {
                let offset = self.number("offset-col", id, line)?;
                let length = match length {
                    None => 1,
                    Some(i) => self.number("length-col", i, line)?,
                };
                let (first, pages) = self.pages(offset, offset_unit, length, length_unit)?;
                (first, pages, PAGE_BYTES as u32)
            }
            None => {
                let id = self.object_id(line)?;
                let size = match size_field {
                    None => 0,
                    Some(i) => {
                        let n = self.number("obj-size-col", i, line)?;
                        u32::try_from(n).map_err(|_| {
                            self.malformed(&format!(
                                "obj-size-col: {n} bytes, expected at most {} (4 GiB)",
                                u32::MAX
                            ))
                        })?
                    }
                };
                (id, 1, size)
            }
        };
        let process = ProcessOf::Fields(line);
        self.take_request(process, write, raw_time, device, (first, pages), size)
    }

    /// Make a parsed line the pending request: `pages` pages from `first`. `false` when
    /// it covers none.
    fn take_request(
        &mut self,
        process: ProcessOf,
        write: bool,
        raw_time: u64,
        device: u64,
        (first, pages): (u64, u64),
        size: u32,
    ) -> Result<bool> {
        if pages == 0 {
            return Ok(false);
        }
        let stored = self.stored.of(self.bytes_read);
        if let Err(bound) = self.accesses.take(pages, stored) {
            return Err(self.malformed(&format!(
                "this request takes the file past {bound} page accesses, the most its first \
                 {stored} bytes (as stored) may ask for ({EXPANSION_ALLOWANCE} plus \
                 {EXPANSION_PER_BYTE} a byte): expected the requests of a real trace"
            )));
        }
        self.proc = match process {
            ProcessOf::Fields(line) => self.process(line)?,
            ProcessOf::Pid(number, digits) => self.pid_process(number, digits)?,
        };
        let first_ns = *self.first_ns.get_or_insert(raw_time);
        self.time_ns = self.time_ns.max(raw_time.saturating_sub(first_ns));
        self.device = device;
        self.next_page = first;
        self.pages_left = pages;
        self.write = write;
        self.size = size;
        self.requests += 1;
        Ok(true)
    }

    /// Parse a request line in one pass over its bytes, the numbers read as they are
    /// passed, when every field the spec reads is plain: digits (a time maybe with a
    /// point), an operation spelled as the spec spells it, text neither padded nor
    /// quoted. `None` for any other line, which [`Parser::parse`] then reads (and reports
    /// on) after splitting it: both give the same request, checked by a test. Splitting
    /// first and reading field by field took about a sixth longer a line.
    #[inline]
    fn parse_plain(&mut self, line: &[u8]) -> Option<Result<bool>> {
        let slots = self.plain.as_deref()?;
        let Delimiter::Byte(delimiter) = self.spec.delimiter else {
            return None;
        };
        let line = trim(line);
        let unit_ns = self.spec.time_unit.ns();
        let (mut time, mut id, mut size, mut length, mut device) = (None, 0, None, None, 0);
        let mut op = None;
        let mut pid = None;
        // Only the text fields' spans are read after this pass (by `process` and
        // `object_id`), so only theirs are kept, in place.
        if self.spans.len() != slots.len() {
            self.spans.clear();
            self.spans.resize(slots.len(), (0, 0));
        }
        let mut at = 0;
        for (k, &slot) in slots.iter().enumerate() {
            let start = at;
            match slot {
                Slot::Skip => {
                    while at < line.len() && line[at] != delimiter {
                        at += 1;
                    }
                }
                Slot::Text | Slot::Op => {
                    while at < line.len() && line[at] != delimiter {
                        at += 1;
                    }
                    let padded = |b: u8| b.is_ascii_whitespace() || b == b'"';
                    if at > start && (padded(line[start]) || padded(line[at - 1])) {
                        return None;
                    }
                    if slot == Slot::Op {
                        op = Some(match &line[start..at] {
                            [byte] if self.one_byte_ops[usize::from(*byte)] != 0 => {
                                Some(self.one_byte_ops[usize::from(*byte)] == 2)
                            }
                            value => self.op(value).ok()?,
                        });
                    } else {
                        self.spans[k] = (start, at);
                    }
                }
                Slot::Time | Slot::Id | Slot::Size | Slot::Length | Slot::Device | Slot::Pid => {
                    let mut value = 0u64;
                    while at < line.len() {
                        let d = line[at].wrapping_sub(b'0');
                        if d > 9 {
                            break;
                        }
                        value = value.wrapping_mul(10).wrapping_add(u64::from(d));
                        at += 1;
                    }
                    // Nineteen digits cannot overflow; longer numbers take the long way.
                    if at == start || at - start > 19 {
                        return None;
                    }
                    if at < line.len() && line[at] != delimiter {
                        if slot != Slot::Time {
                            return None;
                        }
                        while at < line.len() && line[at] != delimiter {
                            at += 1;
                        }
                        time = Some(decimal_to_ns(&line[start..at], unit_ns)?);
                    } else {
                        match slot {
                            Slot::Time => time = Some(value.checked_mul(unit_ns)?),
                            Slot::Id => id = value,
                            Slot::Size => size = Some(value),
                            Slot::Length => length = Some(value),
                            Slot::Pid => {
                                // A leading zero makes another spelling of the number.
                                if line[start] == b'0' && at - start > 1 {
                                    return None;
                                }
                                pid = Some((value, start, at));
                            }
                            _ => device = value,
                        }
                    }
                }
            }
            if k + 1 < slots.len() {
                if at >= line.len() {
                    return None;
                }
                at += 1;
            }
        }
        let write = match op {
            None => false,
            Some(Some(write)) => write,
            // A request that moves no data.
            Some(None) => return Some(Ok(false)),
        };
        let raw_time = time.unwrap_or(self.requests);
        let (pages, size) = match self.block_units {
            Some((offset_unit, length_unit)) => (
                self.pages(id, offset_unit, length.unwrap_or(1), length_unit)
                    .ok()?,
                PAGE_BYTES as u32,
            ),
            None => {
                if self.text_ids.is_some() {
                    id = self.object_id(line).ok()?;
                }
                ((id, 1), size.map_or(Some(0), |n| u32::try_from(n).ok())?)
            }
        };
        let process = match pid {
            Some((number, a, b)) => ProcessOf::Pid(number, &line[a..b]),
            None => ProcessOf::Fields(line),
        };
        Some(self.take_request(process, write, raw_time, device, pages, size))
    }

    /// The first page and the count of pages of a block range.
    fn pages(
        &self,
        offset: u64,
        offset_unit: u64,
        length: u64,
        length_unit: u64,
    ) -> Result<(u64, u64)> {
        let start = offset.checked_mul(offset_unit);
        let bytes = length.checked_mul(length_unit);
        let (Some(start), Some(bytes)) = (start, bytes) else {
            return Err(self.malformed("the request's bytes pass 64 bits"));
        };
        if bytes > MAX_REQUEST_BYTES {
            return Err(self.malformed(&format!(
                "a request of {bytes} bytes, expected at most {MAX_REQUEST_BYTES}"
            )));
        }
        if bytes == 0 {
            return Ok((0, 0));
        }
        let Some(end) = start.checked_add(bytes) else {
            return Err(self.malformed("the request's bytes pass 64 bits"));
        };
        let first = start / PAGE_BYTES;
        Ok((first, (end - 1) / PAGE_BYTES + 1 - first))
    }

    fn number(&self, key: &str, index: usize, line: &[u8]) -> Result<u64> {
        let digits = self.field(line, index);
        parse_u64(digits).ok_or_else(|| {
            self.malformed(&format!(
                "{}: `{}`, expected a non-negative integer",
                self.column_name(key, index),
                String::from_utf8_lossy(digits)
            ))
        })
    }

    fn object_id(&mut self, line: &[u8]) -> Result<u64> {
        let id = self.fields.id;
        let text = self.field(line, id);
        match &mut self.text_ids {
            None => parse_u64(text).ok_or_else(|| {
                self.malformed(&format!(
                    "{}: `{}`, expected a non-negative integer (or give obj-id-is-num=false \
                     to take any text as an id)",
                    self.column_name("obj-id-col", id),
                    String::from_utf8_lossy(text)
                ))
            }),
            Some(ids) => {
                if let Some(&n) = ids.get(text) {
                    return Ok(n);
                }
                let n = ids.len() as u64;
                ids.insert(text.to_vec(), n);
                Ok(n)
            }
        }
    }

    /// `Some(true)` for a write, `Some(false)` for a read, `None` for a request that
    /// moves no data (RWBS without R or W).
    fn op(&self, value: &[u8]) -> Result<Option<bool>> {
        match &self.spec.op_form {
            OpForm::Rwbs => Ok(if value.contains(&b'W') {
                Some(true)
            } else if value.contains(&b'R') {
                Some(false)
            } else {
                None
            }),
            OpForm::Spellings { reads, writes } => {
                if let [byte] = value {
                    match self.one_byte_ops[usize::from(*byte)] {
                        1 => return Ok(Some(false)),
                        2 => return Ok(Some(true)),
                        _ => {}
                    }
                }
                if writes.iter().any(|w| w.as_bytes() == value) {
                    Ok(Some(true))
                } else if reads.iter().any(|r| r.as_bytes() == value) {
                    Ok(Some(false))
                } else {
                    Err(self.malformed(&format!(
                        "{}: `{}`, expected a read ({}) or a write ({})",
                        self.column_name("op-col", self.fields.op.unwrap_or(0)),
                        String::from_utf8_lossy(value),
                        reads.join(", "),
                        writes.join(", ")
                    )))
                }
            }
        }
    }

    fn time(&self, value: &[u8]) -> Result<u64> {
        decimal_to_ns(value, self.spec.time_unit.ns()).ok_or_else(|| {
            self.malformed(&format!(
                "{}: `{}`, expected a time in {} (digits, a point and at most \
                 {MAX_FRACTION_DIGITS} decimals)",
                self.column_name("time-col", self.fields.time.unwrap_or(0)),
                String::from_utf8_lossy(value),
                self.spec.time_unit
            ))
        })
    }

    fn device(&self, value: &[u8]) -> Result<u64> {
        let split = value.iter().position(|&b| b == b',' || b == b':');
        let parsed = match split {
            None => parse_u64(value),
            Some(i) => match (parse_u64(&value[..i]), parse_u64(&value[i + 1..])) {
                // MKDEV of the kernel's kdev_t: 12 bits of major, 20 of minor.
                (Some(major), Some(minor)) if major < 1 << 12 && minor < 1 << 20 => {
                    Some(major << 20 | minor)
                }
                _ => None,
            },
        };
        parsed.ok_or_else(|| {
            self.malformed(&format!(
                "{}: `{}`, expected a device number or major,minor",
                self.column_name("device-col", self.fields.device.unwrap_or(0)),
                String::from_utf8_lossy(value)
            ))
        })
    }

    /// The process of the current line: by its pid and process fields.
    fn process(&mut self, line: &[u8]) -> Result<ProcId> {
        let pid = self.fields.pid.map(|i| self.field(line, i));
        let text = self.fields.process.map(|i| self.field(line, i));
        // A pid alone, written as a plain decimal, is looked up by its number: the same
        // process as by its text (such text and numbers match one to one), without
        // hashing and comparing bytes.
        if let (Some(digits), None) = (pid, text) {
            if let Some(number) = plain_decimal(digits) {
                return self.pid_process(number, digits);
            }
        }
        let (pid_bytes, text_bytes) = (pid.unwrap_or_default(), text.unwrap_or_default());
        if let Some(id) = self.last_process {
            if same(&self.last_pid, pid_bytes) && same(&self.last_text, text_bytes) {
                return Ok(id);
            }
        }
        self.process_key.clear();
        self.process_key.extend_from_slice(pid_bytes);
        self.process_key.push(0);
        self.process_key.extend_from_slice(text_bytes);
        let id = match self.processes.get(&self.process_key) {
            Some(&id) => id,
            None => {
                let id = self.new_process(pid, text)?;
                self.processes.insert(self.process_key.clone(), id);
                id
            }
        };
        self.last_pid.clear();
        self.last_pid.extend_from_slice(pid_bytes);
        self.last_text.clear();
        self.last_text.extend_from_slice(text_bytes);
        self.last_process = Some(id);
        Ok(id)
    }

    /// The process of a pid alone, written as the plain decimal `digits` of `number`.
    fn pid_process(&mut self, number: u64, digits: &[u8]) -> Result<ProcId> {
        if let Some((last, id)) = self.last_pid_number {
            if last == number {
                return Ok(id);
            }
        }
        let known = match usize::try_from(number) {
            Ok(i) if i < PID_TABLE_LEN => self.pid_table.get(i).copied(),
            _ => self.pid_processes.get(&number).copied(),
        };
        let id = match known.filter(|&id| id != NO_PROCESS) {
            Some(id) => id,
            None => {
                let id = self.new_process(Some(digits), None)?;
                match usize::try_from(number) {
                    Ok(i) if i < PID_TABLE_LEN => {
                        if self.pid_table.len() <= i {
                            self.pid_table.resize(i + 1, NO_PROCESS);
                        }
                        self.pid_table[i] = id;
                    }
                    _ => {
                        self.pid_processes.insert(number, id);
                    }
                }
                id
            }
        };
        self.last_pid_number = Some((number, id));
        Ok(id)
    }

    fn new_process(&mut self, pid: Option<&[u8]>, text: Option<&[u8]>) -> Result<ProcId> {
        let text = String::from_utf8_lossy(text.unwrap_or_default()).into_owned();
        let (name, tid) = match self.spec.process_form {
            ProcessForm::CommTid => match text.rsplit_once('-') {
                Some((comm, tid)) if !tid.is_empty() && tid.bytes().all(|b| b.is_ascii_digit()) => {
                    (comm, tid.parse::<u32>().ok())
                }
                _ => (&*text, None),
            },
            ProcessForm::Name => {
                let bare = text
                    .strip_prefix('[')
                    .and_then(|t| t.strip_suffix(']'))
                    .unwrap_or(&text);
                (bare, None)
            }
        };
        let pid = match pid {
            None => tid.unwrap_or(0),
            Some(digits) => parse_u64(digits)
                .and_then(|p| u32::try_from(p).ok())
                .ok_or_else(|| {
                    self.malformed(&format!(
                        "{}: `{}`, expected a process id (0 to {})",
                        self.column_name("pid-col", self.fields.pid.unwrap_or(0)),
                        String::from_utf8_lossy(digits),
                        u32::MAX
                    ))
                })?,
        };
        let name = if name == "<...>" { "" } else { name };
        self.interner
            .start_process(pid, name)
            .ok_or_else(|| self.malformed("more processes than the trace format's ids"))
    }

    /// How a column is named in messages: its number, and its header name if known.
    fn column_name(&self, key: &str, index: usize) -> String {
        match self.header.get(index) {
            Some(name) => format!("column {} (`{name}`, {key})", index + 1),
            None => format!("column {} ({key})", index + 1),
        }
    }

    #[cold]
    fn malformed(&self, message: &str) -> Error {
        Error::format(&self.path, Position::Line(self.line_number), message)
    }
}

/// Nanoseconds of a decimal number (`653406.907265`) of units of `unit_ns` nanoseconds,
/// rounded to the nanosecond: files hold times printed from floats
/// (`48750.608267999996`).
fn decimal_to_ns(text: &[u8], unit_ns: u64) -> Option<u64> {
    // The common time read in one pass: some digits, then maybe a point and at most
    // nine more.
    let mut whole = 0u64;
    let mut i = 0;
    while i < text.len().min(19) {
        let d = text[i].wrapping_sub(b'0');
        if d > 9 {
            break;
        }
        whole = whole * 10 + u64::from(d);
        i += 1;
    }
    if i > 0 && i == text.len() {
        return whole.checked_mul(unit_ns);
    }
    if i > 0 && text[i] == b'.' && (2..=10).contains(&(text.len() - i)) && unit_ns <= 1_000_000_000
    {
        let digits = &text[i + 1..];
        if let Some(numerator) = parse_u64(digits) {
            let extra = fraction_ns(numerator, digits.len(), unit_ns);
            return whole.checked_mul(unit_ns)?.checked_add(extra);
        }
    }
    decimal_to_ns_in_full(text, unit_ns)
}

/// Nanoseconds of `numerator` / 10^`digits` (at most 9 digits) units of `unit_ns` (at
/// most a second), rounded to the nearest: exact in u64 (10^9 x 10^9 < 2^64), and where
/// the unit is a whole number of the last decimal's steps (a time in s printed to the
/// us) without a division.
#[inline]
fn fraction_ns(numerator: u64, digits: usize, unit_ns: u64) -> u64 {
    let denominator = 10u64.pow(digits as u32);
    if unit_ns.is_multiple_of(denominator) {
        numerator * (unit_ns / denominator)
    } else {
        let scaled = numerator * unit_ns;
        scaled / denominator + u64::from((scaled % denominator) * 2 >= denominator)
    }
}

/// [`decimal_to_ns`] of any text: a whole part of any length, up to
/// [`MAX_FRACTION_DIGITS`] decimals.
fn decimal_to_ns_in_full(text: &[u8], unit_ns: u64) -> Option<u64> {
    let (whole, fraction) = match text.iter().position(|&b| b == b'.') {
        Some(dot) => (&text[..dot], &text[dot + 1..]),
        None => (text, &b""[..]),
    };
    if fraction.len() > MAX_FRACTION_DIGITS || !fraction.iter().all(u8::is_ascii_digit) {
        return None;
    }
    let whole = if whole.is_empty() && !fraction.is_empty() {
        0
    } else {
        parse_u64(whole)?
    };
    let mut ns = whole.checked_mul(unit_ns)?;
    // Exact in u128 up to 19 digits (10^19 units of at most 10^9 ns); later digits are
    // far below a nanosecond and do not count.
    let digits = &fraction[..fraction.len().min(19)];
    if !digits.is_empty() && digits.len() <= 9 && unit_ns <= 1_000_000_000 {
        let numerator = parse_u64(digits)?;
        return ns.checked_add(fraction_ns(numerator, digits.len(), unit_ns));
    }
    if !digits.is_empty() {
        let numerator = digits
            .iter()
            .fold(0u128, |value, &d| value * 10 + u128::from(d - b'0'));
        let denominator = 10u128.pow(digits.len() as u32);
        let scaled = numerator * u128::from(unit_ns);
        let mut extra = scaled / denominator;
        if (scaled % denominator) * 2 >= denominator {
            extra += 1;
        }
        ns = ns.checked_add(u64::try_from(extra).ok()?)?;
    }
    Some(ns)
}

/// Field boundaries of `line` split at `delimiter` (not 0) into `spans`, at most `limit`
/// fields; `false` when no byte looked at is a blank, a control byte or a quote, so no
/// field needs trimming or unquoting. Eight bytes at a time, each delimiter found by bit
/// arithmetic: a byte-by-byte loop mispredicts a branch at every field (fields vary in
/// length), which cost more than the rest of a line's reading.
#[inline]
fn split_at_byte(
    line: &[u8],
    delimiter: u8,
    limit: usize,
    spans: &mut Vec<(usize, usize)>,
) -> bool {
    const LOW7: u64 = 0x7f7f_7f7f_7f7f_7f7f;
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    // The top bit of each byte of `word` that is 0.
    let zero_bytes = |x: u64| !(((x & LOW7) + LOW7) | x | LOW7);
    let lanes = ONES * u64::from(delimiter);
    let mut start = 0;
    let mut padded = false;
    // The delimiters of the 8 bytes `word` at `base`, of which the first `real` are the
    // line's (the others are 0, never the delimiter).
    let mut word_at = |word: u64, base: usize, real: usize, spans: &mut Vec<(usize, usize)>| {
        // Any byte below 0x21 (blanks, controls) or a quote; the bytes past the line
        // are masked out (a borrow runs only upwards, so they flag none below them).
        let low = word.wrapping_sub(ONES * 0x21) & !word & HIGH;
        padded |=
            ((low | zero_bytes(word ^ (ONES * u64::from(b'"')))) & (HIGH >> (8 * (8 - real)))) != 0;
        let mut found = zero_bytes(word ^ lanes);
        while found != 0 {
            let i = base + (found.trailing_zeros() / 8) as usize;
            spans.push((start, i));
            if spans.len() == limit {
                return true;
            }
            start = i + 1;
            found &= found - 1;
        }
        false
    };
    let whole = line.len() / 8;
    for w in 0..whole {
        let bytes: [u8; 8] = line[w * 8..w * 8 + 8].try_into().expect("8 bytes");
        if word_at(u64::from_le_bytes(bytes), w * 8, 8, spans) {
            return padded;
        }
    }
    let rest = line.len() % 8;
    if rest > 0 {
        let word = if line.len() >= 8 {
            // The line's last 8 bytes, shifted past those already looked at.
            let bytes: [u8; 8] = line[line.len() - 8..].try_into().expect("8 bytes");
            u64::from_le_bytes(bytes) >> (8 * (8 - rest))
        } else {
            line.iter()
                .rev()
                .fold(0u64, |word, &b| word << 8 | u64::from(b))
        };
        if word_at(word, whole * 8, rest, spans) {
            return padded;
        }
    }
    spans.push((start, line.len()));
    padded
}

/// The number of `digits` when they are its only decimal spelling (no sign, no leading
/// zero, at most 19 digits), so that the text and the number name the same thing.
#[inline]
fn plain_decimal(digits: &[u8]) -> Option<u64> {
    if digits.len() > 19 || (digits.len() > 1 && digits[0] == b'0') {
        return None;
    }
    parse_u64(digits)
}

/// Whether two short fields are equal, compared byte by byte (a call to `memcmp` costs
/// more than the few bytes of a pid or a name).
#[inline]
fn same(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x == y)
}

/// The table behind `Reader::one_byte_ops`.
fn one_byte_ops(form: &OpForm) -> [u8; 256] {
    let mut table = [0u8; 256];
    if let OpForm::Spellings { reads, writes } = form {
        // Writes win where a spelling is both, as in `Reader::op`.
        for (spellings, meaning) in [(reads, 1), (writes, 2)] {
            for spelling in spellings {
                if let [byte] = spelling.as_bytes() {
                    table[usize::from(*byte)] = meaning;
                }
            }
        }
    }
    table
}

fn trim(bytes: &[u8]) -> &[u8] {
    bytes.trim_ascii_end()
}

/// How the reader numbers its pages. A page is `PageKey::file(device, index)`; while
/// each key fits in 64 bits, it is interned as one number a batch at a time
/// ([`ObjectIds`]: a lookup reads one slot, prefetched ahead), which gives the same ids
/// in the same order as the general interner. The first key that does not fit moves every
/// page into the general interner, which numbers the rest.
#[derive(Debug)]
enum PageIds {
    /// No device column: the key is the index (an object id, any 64 bits).
    Objects(ObjectIds),
    /// A device column: `device << 32 | index`, for devices and indexes below 2^32.
    Packed(ObjectIds),
    /// In the reader's interner.
    General,
}

impl PageIds {
    fn key(&self, device: u64, index: u64) -> Option<u64> {
        match self {
            PageIds::Objects(_) => Some(index),
            PageIds::Packed(_) if device >> 32 == 0 && index >> 32 == 0 => {
                Some(device << 32 | index)
            }
            _ => None,
        }
    }

    /// The page keys by id (`None` for the general interner's, which it holds).
    fn keys(&self) -> Option<Vec<PageKey>> {
        match self {
            PageIds::Objects(ids) => Some(
                ids.keys()
                    .into_iter()
                    .map(|k| PageKey::file(0, k))
                    .collect(),
            ),
            PageIds::Packed(ids) => Some(
                ids.keys()
                    .into_iter()
                    .map(|k| PageKey::file(k >> 32, k & 0xffff_ffff))
                    .collect(),
            ),
            PageIds::General => None,
        }
    }
}

/// Events of a run of requests whose pages are still keys: what [`Parser`] gives and
/// [`Numbering`] numbers, a batch at a time.
#[derive(Debug, Default)]
struct Parsed {
    /// Accesses, page 0 until numbered.
    events: Vec<Event>,
    /// Each event's page, as (device, index).
    keys: Vec<(u64, u64)>,
    /// Each event's line, kept only when the batch could run out of page ids.
    lines: Vec<u64>,
    /// Each event's object size (with an `obj-size-col`).
    sizes: Vec<u32>,
    /// The processes started by the batch's requests, in order.
    processes: Vec<ProcessInfo>,
}

impl Parsed {
    fn clear(&mut self) {
        self.events.clear();
        self.keys.clear();
        self.lines.clear();
        self.sizes.clear();
        self.processes.clear();
    }
}

/// Where [`Parser::take_request`] finds a request's process.
#[derive(Debug, Clone, Copy)]
enum ProcessOf<'a> {
    /// The pid and process fields of the line, whose spans are in `Parser::spans`.
    Fields(&'a [u8]),
    /// A pid alone, written as a plain decimal: its number and its digits.
    Pid(u64, &'a [u8]),
}

/// Events parsed a batch at a time.
const PARSED_BATCH: usize = 1 << 14;
/// Batches parsed ahead of the reader's user.
const PARSED_AHEAD: usize = 2;

impl Parser {
    /// The next events, up to `max`, into `out`; `false` at the end of the input.
    fn parse_batch(&mut self, out: &mut Parsed, max: usize) -> Result<bool> {
        // Out of `self` while the batch is read: a line being parsed borrows it.
        let mut lines = std::mem::take(&mut self.lines);
        let parsed = self.parse_batch_from(&mut lines, out, max);
        self.lines = lines;
        parsed
    }

    fn parse_batch_from(
        &mut self,
        lines: &mut LineBlock,
        out: &mut Parsed,
        max: usize,
    ) -> Result<bool> {
        out.clear();
        let max = max.max(1);
        let sized = self.fields.size.is_some();
        // Each key's line is kept for the message of a key that runs out of ids, which
        // none can while the pages given out cannot fill them.
        let near_last_id = self.keys_given.saturating_add(max as u64) >= u64::from(PageId::MAX);
        let processes_before = self.interner.tables().processes.len();
        while out.events.len() < max {
            if self.pages_left == 0 {
                if self.next_request(lines)? {
                    continue;
                }
                break;
            }
            out.events
                .push(Event::access(self.time_ns, self.proc, 0, self.write, false));
            out.keys.push((self.device, self.next_page));
            if near_last_id {
                out.lines.push(self.line_number);
            }
            if sized {
                out.sizes.push(self.size);
            }
            self.keys_given += 1;
            self.next_page += 1;
            self.pages_left -= 1;
        }
        out.processes
            .extend_from_slice(&self.interner.tables().processes[processes_before..]);
        if out.events.is_empty() && self.keys_given == 0 {
            return Err(self.empty());
        }
        Ok(!out.events.is_empty())
    }
}

/// The numbering half of [`Reader`]: page ids in order of first appearance.
#[derive(Debug)]
struct Numbering {
    path: PathBuf,
    page_ids: PageIds,
    /// The pages, once they are in the general interner.
    interner: Interner,
    /// The last key numbered by the general interner, and its id.
    previous: Option<((u64, u64), PageId)>,
    packed: Vec<u64>,
    ids: Vec<PageId>,
}

impl Numbering {
    fn new(path: &Path, block: bool, device: bool) -> Self {
        // A block request's pages are consecutive keys.
        let ids = if block {
            ObjectIds::with_runs()
        } else {
            ObjectIds::new()
        };
        Numbering {
            path: path.to_path_buf(),
            page_ids: if device {
                PageIds::Packed(ids)
            } else {
                PageIds::Objects(ids)
            },
            interner: Interner::new(),
            previous: None,
            packed: Vec::new(),
            ids: Vec::new(),
        }
    }

    /// Give the events of `parsed` their page ids.
    fn number(&mut self, parsed: &mut Parsed) -> Result<()> {
        let n = parsed.keys.len();
        let mut i = 0;
        while i < n {
            if let PageIds::General = self.page_ids {
                let (device, index) = parsed.keys[i];
                let key = PageKey::file(device, index);
                let page = match self.previous {
                    Some(((d, p), id)) if d == device && p.wrapping_add(1) == index => {
                        self.interner.page_after(id, key)
                    }
                    _ => self.interner.page(key),
                };
                let Some(page) = page else {
                    return Err(self.out_of_ids(parsed, i));
                };
                self.previous = Some(((device, index), page));
                set_page(&mut parsed.events[i], page);
                i += 1;
                continue;
            }
            // The keys from `i` that fit in 64 bits, a batch at a time.
            self.packed.clear();
            for &(device, index) in &parsed.keys[i..] {
                match self.page_ids.key(device, index) {
                    Some(key) => self.packed.push(key),
                    None => break,
                }
            }
            let (PageIds::Objects(ids) | PageIds::Packed(ids)) = &mut self.page_ids else {
                unreachable!("the general interner's keys are numbered above");
            };
            self.ids.clear();
            if let Err(k) = ids.ids(&self.packed, &mut self.ids) {
                return Err(self.out_of_ids(parsed, i + k));
            }
            for (event, &page) in parsed.events[i..].iter_mut().zip(&self.ids) {
                set_page(event, page);
            }
            i += self.packed.len();
            if i < n {
                self.to_general();
            }
        }
        Ok(())
    }

    /// Move every page into the general interner (a key that does not fit in 64 bits).
    fn to_general(&mut self) {
        for key in self.page_ids.keys().unwrap_or_default() {
            // The same ids, in the same order: the interner is empty of pages.
            self.interner.page(key);
        }
        self.page_ids = PageIds::General;
    }

    fn pages(&self) -> Vec<PageKey> {
        self.page_ids
            .keys()
            .unwrap_or_else(|| self.interner.tables().pages.clone())
    }

    #[cold]
    fn out_of_ids(&self, parsed: &Parsed, i: usize) -> Error {
        // Lines are kept for every key of a batch that may run out.
        let line = parsed.lines.get(i).copied().unwrap_or(0);
        Error::format(
            &self.path,
            Position::Line(line),
            "more distinct pages than the 2^32 - 1 page ids",
        )
    }
}

fn set_page(event: &mut Event, page: PageId) {
    *event = Event::access(event.time_ns(), event.proc(), page, event.is_write(), false);
}

/// Where parsing runs: on the reader's caller's thread, or on a thread of its own a few
/// batches ahead (two threads or more allowed), so that numbering pages and the work on
/// the events run beside it.
enum Parsing {
    Here(Box<Parser>),
    Ahead {
        batches: std::sync::mpsc::Receiver<Ahead>,
        give_back: std::sync::mpsc::Sender<Parsed>,
        thread: Option<std::thread::JoinHandle<()>>,
        /// Whether the parsing thread numbers the pages too.
        numbers: bool,
    },
    Ended,
}

/// What the parsing thread sends.
enum Ahead {
    Batch(Parsed),
    /// The end of the input, with the numbering when the thread kept it.
    End(Option<Box<Numbering>>),
    Failed(Error),
}

/// A text trace read by a column spec: see the module's documentation.
pub struct Reader {
    parsing: Parsing,
    numbering: Numbering,
    processes: Vec<ProcessInfo>,
    /// The batch being handed out, from event `at`.
    current: Parsed,
    at: usize,
    sized: bool,
    /// Object sizes of the events of the last batch handed out.
    sizes: Vec<u32>,
}

impl Reader {
    /// Check the spec and read the header line when it has one; requests are read by
    /// `read_batch`, parsed on a thread of their own when `ahead`.
    pub(crate) fn new(
        path: &Path,
        input: Box<dyn Read + Send>,
        stored: StoredBytes,
        spec: &ColumnSpec,
        ahead: bool,
    ) -> Result<Self> {
        let parser = Parser::with_stored(path, input, stored, spec)?;
        let mut numbering = Numbering::new(
            path,
            parser.block_units.is_some(),
            parser.fields.device.is_some(),
        );
        let sized = parser.fields.size.is_some();
        let parsing = if ahead {
            // Where the work of a line goes: a block request's pages, several a line and
            // mostly seen once (1.02 M distinct of 1.54 M on a Pixel 6a trace), take more
            // numbering than parsing, and are numbered on the parsing thread; an object a
            // line takes more parsing, and its page is numbered beside the work on it.
            let numbers = parser.block_units.is_some();
            let numbering = numbers
                .then(|| std::mem::replace(&mut numbering, Numbering::new(path, false, false)));
            Self::parse_ahead(parser, numbering)
        } else {
            Parsing::Here(Box::new(parser))
        };
        Ok(Reader {
            parsing,
            numbering,
            processes: Vec::new(),
            current: Parsed::default(),
            at: 0,
            sized,
            sizes: Vec::new(),
        })
    }

    fn parse_ahead(mut parser: Parser, mut numbering: Option<Numbering>) -> Parsing {
        use std::sync::mpsc;
        let (ready, batches) = mpsc::sync_channel(PARSED_AHEAD);
        let (give_back, returned) = mpsc::channel::<Parsed>();
        let numbers = numbering.is_some();
        let thread = std::thread::spawn(move || loop {
            let mut batch = returned.try_recv().unwrap_or_default();
            let message = match parser.parse_batch(&mut batch, PARSED_BATCH) {
                Ok(true) => match numbering.as_mut().map(|n| n.number(&mut batch)) {
                    Some(Err(e)) => Ahead::Failed(e),
                    _ => Ahead::Batch(batch),
                },
                Ok(false) => Ahead::End(numbering.take().map(Box::new)),
                Err(e) => Ahead::Failed(e),
            };
            let last = !matches!(message, Ahead::Batch(_));
            // Sent unless the reader is gone, which then stops parsing.
            if ready.send(message).is_err() || last {
                return;
            }
        });
        Parsing::Ahead {
            batches,
            give_back,
            thread: Some(thread),
            numbers,
        }
    }

    /// The next parsed batch into `current`, numbered; `false` at the end.
    fn next_parsed(&mut self) -> Result<bool> {
        let mut numbered = false;
        let got = match &mut self.parsing {
            Parsing::Here(parser) => {
                // The batch is parsed in place of the one handed out.
                self.at = 0;
                parser.parse_batch(&mut self.current, PARSED_BATCH)
            }
            Parsing::Ahead {
                batches,
                give_back,
                thread,
                numbers,
            } => match batches.recv() {
                Ok(Ahead::Batch(batch)) => {
                    let done = std::mem::replace(&mut self.current, batch);
                    // The parser may be gone already; the batch is then dropped.
                    let _ = give_back.send(done);
                    numbered = *numbers;
                    Ok(true)
                }
                Ok(Ahead::End(numbering)) => {
                    if let Some(numbering) = numbering {
                        self.numbering = *numbering;
                    }
                    Ok(false)
                }
                Ok(Ahead::Failed(e)) => Err(e),
                Err(_) => {
                    // The parser stopped without a word: it panicked.
                    if let Some(Err(panic)) = thread.take().map(std::thread::JoinHandle::join) {
                        std::panic::resume_unwind(panic);
                    }
                    Ok(false)
                }
            },
            Parsing::Ended => Ok(false),
        };
        match got {
            Ok(true) => {}
            other => {
                self.parsing = Parsing::Ended;
                return other;
            }
        }
        self.at = 0;
        self.processes.extend_from_slice(&self.current.processes);
        if !numbered {
            self.numbering.number(&mut self.current)?;
        }
        Ok(true)
    }
}

impl EventSource for Reader {
    fn read_batch(&mut self, buf: &mut Vec<Event>, max: usize) -> Result<bool> {
        buf.clear();
        self.sizes.clear();
        let max = max.max(1);
        while buf.len() < max {
            if self.at == self.current.events.len() {
                if !self.next_parsed()? {
                    break;
                }
                continue;
            }
            let take = (max - buf.len()).min(self.current.events.len() - self.at);
            let range = self.at..self.at + take;
            buf.extend_from_slice(&self.current.events[range.clone()]);
            if self.sized {
                self.sizes.extend_from_slice(&self.current.sizes[range]);
            }
            self.at += take;
        }
        Ok(!buf.is_empty())
    }

    fn batch_sizes(&self) -> Option<&[u32]> {
        self.sized.then_some(&self.sizes[..])
    }

    fn reads_ahead(&self) -> bool {
        matches!(self.parsing, Parsing::Ahead { .. })
    }

    /// The tables of the requests read so far; complete at the end of the input (a
    /// block trace parsed ahead has its pages numbered on the parsing thread, whose page
    /// table comes back with the end).
    fn tables(&mut self) -> Result<Tables> {
        Ok(Tables {
            pages: self.numbering.pages(),
            processes: self.processes.clone(),
        })
    }

    /// Nothing follows the requests, whose reading checked the whole input.
    fn finish(&mut self) -> Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests;
