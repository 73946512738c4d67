//! mobmem's binary trace format, `.mmt`, version 2 (specified in `docs/trace-formats.md`);
//! version 1 files are read too.
//!
//! A 64-byte header, the event records (each exactly [`Event::to_bytes`]), then the page
//! table and the process table. The tables come last so that a [`Writer`] can stream
//! events as they are produced; it patches the header's counts when it finishes. Because
//! a reader may be fed a zstd stream, the [`Reader`] never seeks: it reads the records,
//! then the tables that follow them.
//!
//! The header's counts are checked against the data as it arrives and never size
//! anything by themselves: [`Reader::page_count_hint`](super::EventSource::page_count_hint)
//! is bounded by the length of the file where it is known (a plain file, or data in
//! memory), and by [`HINT_WITHOUT_LENGTH`] for a stream, so that a 64-byte file claiming
//! 2^32 - 1 pages makes no one allocate for them.

use std::io::{self, BufReader, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use super::shared::{le_u32, le_u64, read_up_to, PartialFile};
use super::{
    Event, EventKind, EventSource, PageId, PageKey, PageKind, ProcId, ProcessInfo, Tables, Trace,
    MAX_PROC_ID,
};
use crate::{Error, Position, Result};

/// First 8 bytes of a complete `.mmt` file.
pub const MAGIC: [u8; 8] = *b"MOBMEMTR";
/// First 8 bytes of a file whose writer has not finished, or never will.
pub const UNFINISHED_MAGIC: [u8; 8] = *b"MOBMEMT?";
/// The version this module writes.
pub const VERSION: u32 = 2;
/// The first version, still read: 28-bit process ids and 2-bit event kinds (no swap
/// events); its records are converted to the current layout as they are read.
pub const VERSION_1: u32 = 1;
pub const HEADER_SIZE: u64 = 64;
pub const RECORD_SIZE: u64 = 16;
/// Bytes of one page table entry: kind, 7 bytes of padding, owner, index.
pub const PAGE_ENTRY_SIZE: u64 = 24;

const PAGE_KIND_FILE: u8 = 0;
const PAGE_KIND_ANON: u8 = 1;

/// Most records decoded per `read_batch`, whatever the caller asks: it bounds the byte
/// buffer (1 MiB) and so the reader's memory.
const MAX_BATCH: usize = 1 << 16;
/// Page table entries decoded per read.
const PAGE_CHUNK: usize = 1 << 12;
/// Most pages [`Reader`]'s page count hint gives for an input of unknown length (a zstd
/// stream): beyond it, per-page state grows with the pages the events use.
pub const HINT_WITHOUT_LENGTH: u64 = 1 << 16;
/// Bytes of the smallest process table entry (a pid and an empty name's length).
const PROCESS_ENTRY_MIN_SIZE: u64 = 8;

/// The counts a `.mmt` header records.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Header {
    /// Format version of the file.
    pub version: u32,
    pub record_count: u64,
    pub page_count: u64,
    pub process_count: u64,
    /// Byte offset of the page table, i.e. the end of the records.
    pub tables_offset: u64,
}

impl Header {
    fn for_records(record_count: u64, page_count: u64, process_count: u64) -> Header {
        Header {
            version: VERSION,
            record_count,
            page_count,
            process_count,
            tables_offset: HEADER_SIZE + record_count * RECORD_SIZE,
        }
    }

    fn to_bytes(self, magic: [u8; 8]) -> [u8; HEADER_SIZE as usize] {
        let mut out = [0u8; HEADER_SIZE as usize];
        out[0..8].copy_from_slice(&magic);
        out[8..12].copy_from_slice(&self.version.to_le_bytes());
        out[12..16].copy_from_slice(&(RECORD_SIZE as u32).to_le_bytes());
        out[16..24].copy_from_slice(&self.record_count.to_le_bytes());
        out[24..32].copy_from_slice(&self.page_count.to_le_bytes());
        out[32..40].copy_from_slice(&self.process_count.to_le_bytes());
        out[40..48].copy_from_slice(&self.tables_offset.to_le_bytes());
        out
    }

    /// Parse and check a header; `bytes` holds what the file has of its first 64 bytes.
    fn parse(path: &Path, bytes: &[u8]) -> Result<Header> {
        let bad =
            |offset: u64, message: String| Error::format(path, Position::Byte(offset), message);
        if bytes.is_empty() {
            return Err(super::shared::empty_input(path, "a .mmt trace"));
        }
        if bytes.len() >= 8 && bytes[0..8] == UNFINISHED_MAGIC {
            return Err(bad(0, "incomplete trace: the writer did not finish".into()));
        }
        if bytes.len() < 8 || bytes[0..8] != MAGIC {
            return Err(bad(
                0,
                "not a mobmem trace: the file does not start with MOBMEMTR".into(),
            ));
        }
        if bytes.len() < HEADER_SIZE as usize {
            return Err(bad(
                bytes.len() as u64,
                format!("truncated header: the file ends at byte {}", bytes.len()),
            ));
        }
        let version = le_u32(&bytes[8..12]);
        if version != VERSION && version != VERSION_1 {
            return Err(bad(
                8,
                format!("unsupported .mmt version {version} (this build reads versions {VERSION_1} and {VERSION})"),
            ));
        }
        let record_size = le_u32(&bytes[12..16]);
        if u64::from(record_size) != RECORD_SIZE {
            return Err(bad(
                12,
                format!("record size {record_size}, expected {RECORD_SIZE}"),
            ));
        }
        let header = Header {
            version,
            record_count: le_u64(&bytes[16..24]),
            page_count: le_u64(&bytes[24..32]),
            process_count: le_u64(&bytes[32..40]),
            tables_offset: le_u64(&bytes[40..48]),
        };
        // Page ids are u32 and the interner never hands out u32::MAX.
        if header.page_count > u64::from(PageId::MAX) {
            return Err(bad(
                24,
                format!(
                    "page count {} exceeds the 2^32 - 1 page ids",
                    header.page_count
                ),
            ));
        }
        if header.process_count > u64::from(MAX_PROC_ID) + 1 {
            return Err(bad(
                32,
                format!(
                    "process count {} exceeds the 2^27 process ids",
                    header.process_count
                ),
            ));
        }
        let records_end = header
            .record_count
            .checked_mul(RECORD_SIZE)
            .and_then(|bytes| bytes.checked_add(HEADER_SIZE));
        if records_end != Some(header.tables_offset) {
            return Err(bad(
                40,
                format!(
                    "tables offset {} does not follow {} records of {RECORD_SIZE} bytes",
                    header.tables_offset, header.record_count
                ),
            ));
        }
        Ok(header)
    }
}

// The raw fields of a record, as laid out in `Event` (see its table in `trace/mod.rs`).
const RECORD_PROC_MASK: u32 = MAX_PROC_ID;
const WRITE_FLAG: u32 = 1 << 30;
const RECORD_FLAG_BITS: u32 = 3 << 30;

/// A version 1 record word in the current layout: its 28-bit process id must fit in 27
/// bits (checked by the caller against the header's process count), its 2-bit kind moves
/// up one bit.
#[inline]
fn word_from_version_1(word: u32) -> u32 {
    let proc = word & ((1 << 28) - 1);
    let kind = (word >> 28) & 3;
    proc | (kind << 27) | (word & RECORD_FLAG_BITS)
}

/// Whether a record's fields are consistent with the header's table sizes. Kept apart
/// from [`describe_bad_record`] so the hot loop is a few comparisons.
#[inline]
fn record_is_valid(word: u32, arg: u32, header: &Header) -> bool {
    if u64::from(word & RECORD_PROC_MASK) >= header.process_count {
        return false;
    }
    match Event::raw_kind(word) {
        0 => u64::from(arg) < header.page_count,
        1 => word & RECORD_FLAG_BITS == 0 && (-1000..=1000).contains(&(arg as i32)),
        2 | 3 | 6 => word & RECORD_FLAG_BITS == 0 && arg == 0,
        4 | 5 => word & WRITE_FLAG == 0 && u64::from(arg) < header.page_count,
        _ => false,
    }
}

/// Why a record is not valid. `limits` is the header with its counts bounded by what the
/// input can hold (see [`Reader::limits`]).
#[cold]
fn describe_bad_record(word: u32, arg: u32, header: &Header, limits: &Header) -> String {
    let proc = word & RECORD_PROC_MASK;
    if u64::from(proc) >= header.process_count {
        return format!(
            "process id {proc} out of range (the trace has {} processes)",
            header.process_count
        );
    }
    if u64::from(proc) >= limits.process_count {
        return format!(
            "process id {proc} out of range: the input has room for only {} of the {} \
             processes its header announces after its records (truncated, or a wrong header)",
            limits.process_count, header.process_count
        );
    }
    match Event::raw_kind(word) {
        0 | 4 | 5 if u64::from(arg) >= header.page_count => format!(
            "page id {arg} out of range (the trace has {} pages)",
            header.page_count
        ),
        0 | 4 | 5 if u64::from(arg) >= limits.page_count => format!(
            "page id {arg} out of range: the input has room for only {} of the {} pages its \
             header announces after its records (truncated, or a wrong header)",
            limits.page_count, header.page_count
        ),
        4 | 5 => "write flag set on a swap event".to_string(),
        7 => "event kind 7, expected 0..=6".to_string(),
        _ if word & RECORD_FLAG_BITS != 0 => {
            "write or anonymous flag set on an event that is not an access".to_string()
        }
        1 => format!(
            "importance {} outside the oom_score_adj range -1000..=1000",
            arg as i32
        ),
        _ => format!("argument {arg} on a start, exit or input event, expected 0"),
    }
}

/// Streams the events of a `.mmt` file, then its tables.
pub struct Reader {
    path: PathBuf,
    input: BufReader<Box<dyn Read + Send>>,
    header: Header,
    /// Records consumed so far, returned or skipped.
    next_record: u64,
    /// Raw bytes of the current batch, reused.
    bytes: Vec<u8>,
    /// The tables, once read; the records were all consumed by then.
    tables: Option<Tables>,
    /// The tables were read and checked by `finish` without being kept.
    finished: bool,
    /// What is known of the input's length before it is read.
    length: InputLength,
    /// The header with its page and process counts bounded by what the input can hold
    /// after the records: record ids are checked against these, so that no id in a
    /// record makes per-page or per-process state grow past what the data can back.
    limits: Header,
}

/// What is known of the length of a `.mmt` input before it is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InputLength {
    /// A stream (standard input, a pipe).
    Unknown,
    /// Exactly this many bytes (a regular file that is not compressed, data in memory).
    Exact(u64),
    /// At most this many bytes (a zstd file: see [`crate::trace::zstd_bound`]).
    AtMost(u64),
}

impl Reader {
    /// Read and check the header of an input of unknown length.
    pub fn new(path: &Path, input: Box<dyn Read + Send>) -> Result<Self> {
        Self::with_length(path, input, InputLength::Unknown)
    }

    /// Read and check the header; `length` is what is known of the input's size, which
    /// bounds what the header's counts may size and the ids records may use.
    pub fn with_length(
        path: &Path,
        input: Box<dyn Read + Send>,
        length: InputLength,
    ) -> Result<Self> {
        let mut input = BufReader::with_capacity(1 << 18, input);
        let mut head = [0u8; HEADER_SIZE as usize];
        let got = read_up_to(&mut input, &mut head).map_err(|e| Error::io(path, e))?;
        let header = Header::parse(path, &head[..got])?;
        let mut reader = Reader {
            path: path.to_path_buf(),
            input,
            header,
            next_record: 0,
            bytes: Vec::new(),
            tables: None,
            finished: false,
            length,
            limits: header,
        };
        reader.limits.page_count =
            reader.room(header.page_count, header.tables_offset, PAGE_ENTRY_SIZE);
        reader.limits.process_count = reader.room(
            header.process_count,
            header.tables_offset,
            PROCESS_ENTRY_MIN_SIZE,
        );
        Ok(reader)
    }

    /// At most `count` entries of at least `entry_size` bytes each, as many as the input
    /// can hold from byte `offset` on.
    fn room(&self, count: u64, offset: u64, entry_size: u64) -> u64 {
        match self.length {
            InputLength::Exact(length) | InputLength::AtMost(length) => {
                count.min(length.saturating_sub(offset) / entry_size)
            }
            InputLength::Unknown => count,
        }
    }

    /// What may be allocated for `count` entries the header claims, before the data is
    /// read: [`Reader::room`], and at most [`HINT_WITHOUT_LENGTH`] unless the length is
    /// exact.
    fn bounded(&self, count: u64, offset: u64, entry_size: u64) -> u64 {
        let room = self.room(count, offset, entry_size);
        match self.length {
            InputLength::Exact(_) => room,
            _ => room.min(HINT_WITHOUT_LENGTH),
        }
    }

    pub fn header(&self) -> &Header {
        &self.header
    }

    /// Before any record is used: a file whose length is known and too short for its
    /// records or its page table is reported where it ends, as reading on would report it,
    /// since the ids of its records could not be bounded by the tables that follow.
    fn check_length(&self) -> Result<()> {
        let InputLength::Exact(length) = self.length else {
            return Ok(());
        };
        let header = &self.header;
        if length < header.tables_offset {
            let data = length.saturating_sub(HEADER_SIZE);
            return Err(self.truncated_in_records(data / RECORD_SIZE, data % RECORD_SIZE));
        }
        let room = (length - header.tables_offset) / PAGE_ENTRY_SIZE;
        if room < header.page_count {
            return Err(Error::format(
                &self.path,
                Position::Byte(length),
                format!(
                    "truncated page table: the file ends in entry {room} of {}",
                    header.page_count
                ),
            ));
        }
        Ok(())
    }

    fn truncated_in_records(&self, index: u64, bytes_into_record: u64) -> Error {
        Error::format(
            &self.path,
            Position::Record {
                index,
                offset: HEADER_SIZE + index * RECORD_SIZE,
            },
            format!(
                "truncated: the file ends {bytes_into_record} bytes into this record, \
                 but the header announces {} records",
                self.header.record_count
            ),
        )
    }

    /// Consume the records not read yet, without decoding them.
    fn skip_records(&mut self) -> Result<()> {
        let left = (self.header.record_count - self.next_record) * RECORD_SIZE;
        let skipped = io::copy(&mut (&mut self.input).take(left), &mut io::sink())
            .map_err(|e| Error::io(&self.path, e))?;
        if skipped < left {
            let index = self.next_record + skipped / RECORD_SIZE;
            return Err(self.truncated_in_records(index, skipped % RECORD_SIZE));
        }
        self.next_record = self.header.record_count;
        Ok(())
    }

    /// Read and check the tables; the page table is kept only if `keep_pages`.
    fn read_tables(&mut self, keep_pages: bool) -> Result<Tables> {
        let mut offset = self.header.tables_offset;
        let pages = self.read_page_table(&mut offset, keep_pages)?;
        let processes = self.read_process_table(&mut offset)?;
        let mut probe = [0u8; 1];
        let extra =
            read_up_to(&mut self.input, &mut probe).map_err(|e| Error::io(&self.path, e))?;
        if extra > 0 {
            return Err(Error::format(
                &self.path,
                Position::Byte(offset),
                "unexpected data after the process table",
            ));
        }
        Ok(Tables { pages, processes })
    }

    fn read_page_table(&mut self, offset: &mut u64, keep: bool) -> Result<Vec<PageKey>> {
        let count = self.header.page_count;
        // The count is checked against the data as it arrives, not trusted for allocation.
        let reserve = if keep {
            self.bounded(count, *offset, PAGE_ENTRY_SIZE)
        } else {
            0
        };
        let mut pages = Vec::with_capacity(reserve as usize);
        let mut chunk = vec![0u8; PAGE_CHUNK * PAGE_ENTRY_SIZE as usize];
        let mut read = 0u64;
        while read < count {
            let entries = (count - read).min(PAGE_CHUNK as u64) as usize;
            let bytes = &mut chunk[..entries * PAGE_ENTRY_SIZE as usize];
            let got = read_up_to(&mut self.input, bytes).map_err(|e| Error::io(&self.path, e))?;
            if got < bytes.len() {
                let entry = read + got as u64 / PAGE_ENTRY_SIZE;
                return Err(Error::format(
                    &self.path,
                    Position::Byte(*offset + got as u64),
                    format!("truncated page table: the file ends in entry {entry} of {count}"),
                ));
            }
            for entry in bytes.chunks_exact(PAGE_ENTRY_SIZE as usize) {
                // The kind byte and the 7 bytes of padding, read as one word: 0 or 1 when
                // the kind is valid and the padding zero.
                let head = le_u64(&entry[0..8]);
                let kind = match head {
                    0 => PageKind::File,
                    1 => PageKind::Anon,
                    _ if entry[0] > PAGE_KIND_ANON => {
                        let other = entry[0];
                        return Err(Error::format(
                            &self.path,
                            Position::Byte(*offset),
                            format!(
                                "page {read}: kind {other}, expected 0 (file) or 1 (anonymous)"
                            ),
                        ));
                    }
                    _ => {
                        return Err(Error::format(
                            &self.path,
                            Position::Byte(*offset + 1),
                            format!("page {read}: padding bytes 1..8 are not zero"),
                        ))
                    }
                };
                if keep {
                    pages.push(PageKey {
                        kind,
                        owner: le_u64(&entry[8..16]),
                        index: le_u64(&entry[16..24]),
                    });
                }
                read += 1;
                *offset += PAGE_ENTRY_SIZE;
            }
        }
        Ok(pages)
    }

    fn read_process_table(&mut self, offset: &mut u64) -> Result<Vec<ProcessInfo>> {
        let count = self.header.process_count;
        let reserve = self
            .bounded(count, *offset, PROCESS_ENTRY_MIN_SIZE)
            .min(1 << 16);
        let mut processes = Vec::with_capacity(reserve as usize);
        let mut name = Vec::new();
        while (processes.len() as u64) < count {
            let truncated = |at: u64, what: &str, index: usize| {
                Error::format(
                    &self.path,
                    Position::Byte(at),
                    format!("truncated process table: the file ends in the {what} of process {index} of {count}"),
                )
            };
            let mut fixed = [0u8; 8];
            let got =
                read_up_to(&mut self.input, &mut fixed).map_err(|e| Error::io(&self.path, e))?;
            if got < fixed.len() {
                return Err(truncated(
                    *offset + got as u64,
                    "pid and name length",
                    processes.len(),
                ));
            }
            let pid = le_u32(&fixed[0..4]);
            let name_len = u64::from(le_u32(&fixed[4..8]));
            *offset += 8;
            name.clear();
            // `take` + `read_to_end` grows with the data, so a corrupt length cannot
            // make us allocate gigabytes up front.
            let got = (&mut self.input)
                .take(name_len)
                .read_to_end(&mut name)
                .map_err(|e| Error::io(&self.path, e))?;
            if (got as u64) < name_len {
                return Err(truncated(*offset + got as u64, "name", processes.len()));
            }
            let name = match std::str::from_utf8(&name) {
                Ok(name) => name.to_string(),
                Err(e) => {
                    return Err(Error::format(
                        &self.path,
                        Position::Byte(*offset + e.valid_up_to() as u64),
                        format!("process {}: name is not valid UTF-8", processes.len()),
                    ))
                }
            };
            *offset += name_len;
            processes.push(ProcessInfo { pid, name });
        }
        Ok(processes)
    }
}

impl EventSource for Reader {
    fn read_batch(&mut self, buf: &mut Vec<Event>, max: usize) -> Result<bool> {
        buf.clear();
        // Once the tables are read the records are behind us (skipped if never read).
        if self.tables.is_some() || self.finished {
            return Ok(false);
        }
        if self.next_record == 0 {
            self.check_length()?;
        }
        let left = self.header.record_count - self.next_record;
        let count = (max.clamp(1, MAX_BATCH) as u64).min(left) as usize;
        if count == 0 {
            return Ok(false);
        }
        self.bytes.resize(count * RECORD_SIZE as usize, 0);
        let got =
            read_up_to(&mut self.input, &mut self.bytes).map_err(|e| Error::io(&self.path, e))?;
        if got < self.bytes.len() {
            let index = self.next_record + got as u64 / RECORD_SIZE;
            return Err(self.truncated_in_records(index, got as u64 % RECORD_SIZE));
        }
        buf.reserve(count);
        for (i, chunk) in self.bytes.chunks_exact(RECORD_SIZE as usize).enumerate() {
            let mut record = [0u8; RECORD_SIZE as usize];
            record.copy_from_slice(chunk);
            let mut word = le_u32(&record[8..12]);
            let arg = le_u32(&record[12..16]);
            if self.header.version == VERSION_1 {
                word = word_from_version_1(word);
            }
            if !record_is_valid(word, arg, &self.limits) {
                let index = self.next_record + i as u64;
                return Err(Error::format(
                    &self.path,
                    Position::Record {
                        index,
                        offset: HEADER_SIZE + index * RECORD_SIZE,
                    },
                    describe_bad_record(word, arg, &self.header, &self.limits),
                ));
            }
            buf.push(Event::from_raw(le_u64(&record[0..8]), word, arg));
        }
        self.next_record += count as u64;
        Ok(true)
    }

    /// The header's page count, bounded by what the file can hold after its records (a
    /// page table entry is 24 bytes) or, for a stream, by [`HINT_WITHOUT_LENGTH`], and by
    /// the record count: the records name no more pages than there are records, however
    /// large a table follows them.
    fn page_count_hint(&self) -> Option<u64> {
        let records = self.bounded(self.header.record_count, HEADER_SIZE, RECORD_SIZE);
        Some(
            self.bounded(
                self.header.page_count,
                self.header.tables_offset,
                PAGE_ENTRY_SIZE,
            )
            .min(records),
        )
    }

    /// Reads the tables that follow the records; records not read yet are skipped
    /// (unchecked), and later `read_batch` calls return no events.
    fn tables(&mut self) -> Result<Tables> {
        if let Some(tables) = &self.tables {
            return Ok(tables.clone());
        }
        if self.finished {
            return Err(Error::config(
                self.path.display().to_string(),
                "the tables were checked and not kept (finish() was called): open the trace again to read them",
            ));
        }
        self.skip_records()?;
        let tables = self.read_tables(true)?;
        self.tables = Some(tables.clone());
        Ok(tables)
    }

    /// Reads and checks the tables without keeping the page table, so that a streamed
    /// run holds no more than it did; records not read yet are skipped (unchecked).
    fn finish(&mut self) -> Result<()> {
        if self.tables.is_some() || self.finished {
            return Ok(());
        }
        self.skip_records()?;
        self.read_tables(false)?;
        self.finished = true;
        Ok(())
    }
}

/// Writes a `.mmt` file event by event, in constant memory. The file is written under a
/// temporary name (the target's name plus `.partial`) whose header carries
/// [`UNFINISHED_MAGIC`]; [`Writer::finish`] appends the tables, completes the header and
/// renames the file into place. A writer dropped before `finish` removes its temporary
/// file, and nothing ever appears under the target name half-written.
pub struct Writer {
    file: PartialFile,
    records: u64,
    /// Largest ids the events use, checked against the tables by `finish`.
    max_proc: Option<ProcId>,
    max_page: Option<PageId>,
}

impl Writer {
    pub fn create(path: &Path) -> Result<Writer> {
        let mut file = PartialFile::create(path)?;
        let header = Header::for_records(0, 0, 0).to_bytes(UNFINISHED_MAGIC);
        file.write_all(&header).map_err(|e| file.io_error(e))?;
        Ok(Writer {
            file,
            records: 0,
            max_proc: None,
            max_page: None,
        })
    }

    pub fn write(&mut self, event: &Event) -> Result<()> {
        self.note_ids(event);
        self.file
            .write_all(&event.to_bytes())
            .map_err(|e| self.file.io_error(e))?;
        self.records += 1;
        Ok(())
    }

    pub fn write_all(&mut self, events: &[Event]) -> Result<()> {
        for event in events {
            self.write(event)?;
        }
        Ok(())
    }

    /// Events written so far.
    pub fn records(&self) -> u64 {
        self.records
    }

    /// The temporary file being written, renamed to the target by `finish`.
    pub fn partial_path(&self) -> &Path {
        self.file.temp_path()
    }

    /// Push buffered records to the temporary file (which stays marked unfinished).
    pub fn flush(&mut self) -> Result<()> {
        self.file.flush().map_err(|e| self.file.io_error(e))
    }

    fn note_ids(&mut self, event: &Event) {
        self.max_proc = self.max_proc.max(Some(event.proc()));
        if matches!(
            event.kind(),
            EventKind::Access | EventKind::SwapOut | EventKind::SwapIn
        ) {
            self.max_page = self.max_page.max(Some(event.page()));
        }
    }

    /// Append `tables`, complete the header and move the file into place. Fails, leaving
    /// no file at the target, if an event refers to an id the tables do not have.
    pub fn finish(mut self, tables: &Tables) -> Result<()> {
        self.check_tables(tables)?;
        let header = Header::for_records(
            self.records,
            tables.pages.len() as u64,
            tables.processes.len() as u64,
        );
        self.write_tables(tables)
            .and_then(|()| {
                let out = self.file.writer()?;
                out.seek(SeekFrom::Start(0))?;
                out.write_all(&header.to_bytes(MAGIC))
            })
            .map_err(|e| self.file.io_error(e))?;
        self.file.commit()
    }

    fn check_tables(&self, tables: &Tables) -> Result<()> {
        let refuse = |message: String| {
            Err(Error::config(
                self.file.target_path().display().to_string(),
                message,
            ))
        };
        if tables.pages.len() as u64 > u64::from(PageId::MAX) {
            return refuse(format!(
                "{} pages exceed the 2^32 - 1 page ids",
                tables.pages.len()
            ));
        }
        if tables.processes.len() as u64 > u64::from(MAX_PROC_ID) + 1 {
            return refuse(format!(
                "{} processes exceed the 2^28 process ids",
                tables.processes.len()
            ));
        }
        if let Some(proc) = self
            .max_proc
            .filter(|&p| p as usize >= tables.processes.len())
        {
            return refuse(format!(
                "an event refers to process id {proc} but the process table has {} entries",
                tables.processes.len()
            ));
        }
        if let Some(page) = self.max_page.filter(|&p| p as usize >= tables.pages.len()) {
            return refuse(format!(
                "an event refers to page id {page} but the page table has {} entries",
                tables.pages.len()
            ));
        }
        if let Some(process) = tables
            .processes
            .iter()
            .find(|p| p.name.len() > u32::MAX as usize)
        {
            return refuse(format!("the name of pid {} is too long", process.pid));
        }
        Ok(())
    }

    fn write_tables(&mut self, tables: &Tables) -> io::Result<()> {
        let out = self.file.writer()?;
        for page in &tables.pages {
            let mut entry = [0u8; PAGE_ENTRY_SIZE as usize];
            entry[0] = match page.kind {
                PageKind::File => PAGE_KIND_FILE,
                PageKind::Anon => PAGE_KIND_ANON,
            };
            entry[8..16].copy_from_slice(&page.owner.to_le_bytes());
            entry[16..24].copy_from_slice(&page.index.to_le_bytes());
            out.write_all(&entry)?;
        }
        for process in &tables.processes {
            out.write_all(&process.pid.to_le_bytes())?;
            out.write_all(&(process.name.len() as u32).to_le_bytes())?;
            out.write_all(process.name.as_bytes())?;
        }
        Ok(())
    }
}

/// Check what a reader cannot check before the tables, which follow the records: that
/// each access's anonymous flag agrees with the kind of its page, and that swap events
/// are of anonymous pages. `trace` was read from the `.mmt` file `path` (so its ids are
/// within its tables); an error names the record.
pub fn check_against_tables(path: &Path, trace: &Trace) -> Result<()> {
    for (index, event) in trace.events.iter().enumerate() {
        let kind = event.kind();
        if !matches!(
            kind,
            EventKind::Access | EventKind::SwapOut | EventKind::SwapIn
        ) {
            continue;
        }
        let Some(page) = trace.tables.pages.get(event.page() as usize) else {
            continue;
        };
        let anon = page.kind == PageKind::Anon;
        if event.is_anon() == anon {
            continue;
        }
        let index = index as u64;
        let table = if anon { "an anonymous" } else { "a file" };
        let message = if kind == EventKind::Access {
            let flag = if event.is_anon() { "set" } else { "clear" };
            format!(
                "access with the anonymous flag {flag}, but page {} is {table} page in the \
                 page table",
                event.page()
            )
        } else {
            format!(
                "swap event of page {}, which is a file page in the page table (swap holds \
                 anonymous pages)",
                event.page()
            )
        };
        return Err(Error::format(
            path,
            Position::Record {
                index,
                offset: HEADER_SIZE + index * RECORD_SIZE,
            },
            message,
        ));
    }
    Ok(())
}

/// Write a whole trace to `path`.
pub fn write(path: &Path, trace: &Trace) -> Result<()> {
    let mut writer = Writer::create(path)?;
    writer.write_all(&trace.events)?;
    writer.finish(&trace.tables)
}
