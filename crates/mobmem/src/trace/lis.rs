//! The `.lis` traces of the ARC paper (N. Megiddo and D. S. Modha, "ARC: A Self-Tuning,
//! Low Overhead Replacement Cache", USENIX FAST 2003), read only.
//!
//! Each line is `start_block block_count ignored request_id`, separated by whitespace,
//! and stands for `block_count` requests of consecutive blocks from `start_block`. Each
//! request becomes a read of page `PageKey::file(0, block)` by a single process (pid 0,
//! no name) at `time_ns` = the 0-based line index, so time never decreases. Only the
//! first two fields are read; blank lines are skipped (but counted).
//!
//! Limits (see `docs/trace-formats.md`): a line is at most
//! [`MAX_LINE_BYTES`](super::MAX_LINE_BYTES) long and asks for at most
//! [`MAX_BLOCKS_PER_LINE`] blocks, and the requests of the whole file are bounded by its
//! size ([`EXPANSION_ALLOWANCE`](super::EXPANSION_ALLOWANCE) plus
//! [`EXPANSION_PER_BYTE`](super::EXPANSION_PER_BYTE) per byte), so that a small file
//! cannot ask for endless requests. A file without any request is an error.

use std::io::{BufReader, Read};
use std::path::{Path, PathBuf};

use super::object_ids::ObjectTrace;
use super::shared::{
    empty_input, line_too_long, parse_u64, read_line, Expansion, LineRead, StoredBytes,
    EXPANSION_ALLOWANCE, EXPANSION_PER_BYTE, MAX_LINE_BYTES,
};
use super::{Event, EventSource, PageId, Tables};
use crate::{Error, Position, Result};

/// Most blocks one line may ask for: 2^20 (512 MiB of 512-byte blocks). The ARC paper's
/// traces ask for at most 128.
pub const MAX_BLOCKS_PER_LINE: u64 = 1 << 20;

const EXPECTED_LINE: &str = "`start_block block_count ignored request_id`";

pub struct Reader {
    path: PathBuf,
    input: BufReader<Box<dyn Read + Send>>,
    /// The current line's bytes, reused.
    line: Vec<u8>,
    /// 1-based number of the current line; 0 before the first.
    line_number: u64,
    /// The requests of the current line not yet returned.
    next_block: u64,
    blocks_left: u64,
    /// Page ids of block numbers (the pages are `PageKey::file(0, block)`) and the
    /// trace's one process, interned at the first request.
    interned: ObjectTrace,
    /// The current line's blocks, then their page ids; reused.
    blocks: Vec<u64>,
    pages: Vec<PageId>,
    /// Bytes of text read so far.
    bytes_read: u64,
    /// Requests the lines read so far asked for.
    requests: Expansion,
    stored: StoredBytes,
}

impl Reader {
    pub fn new(path: &Path, input: Box<dyn Read + Send>) -> Self {
        Self::with_stored(path, input, StoredBytes::default())
    }

    /// A reader whose expansion is bounded by `stored` bytes (a zstd stream's compressed
    /// bytes) rather than by the text's own length.
    pub(crate) fn with_stored(
        path: &Path,
        input: Box<dyn Read + Send>,
        stored: StoredBytes,
    ) -> Self {
        Reader {
            path: path.to_path_buf(),
            input: BufReader::with_capacity(1 << 18, input),
            line: Vec::new(),
            line_number: 0,
            next_block: 0,
            blocks_left: 0,
            interned: ObjectTrace::default(),
            blocks: Vec::new(),
            pages: Vec::new(),
            bytes_read: 0,
            requests: Expansion::default(),
            stored,
        }
    }

    /// Read and parse the next line; `false` at the end of the input.
    fn next_line(&mut self) -> Result<bool> {
        let read = read_line(&mut self.input, &mut self.line, MAX_LINE_BYTES)
            .map_err(|e| Error::io(&self.path, e))?;
        match read {
            LineRead::End => return self.end(),
            LineRead::TooLong => {
                return Err(line_too_long(
                    &self.path,
                    self.line_number + 1,
                    EXPECTED_LINE,
                ))
            }
            LineRead::Line => {}
        }
        self.line_number += 1;
        self.bytes_read += self.line.len() as u64;
        let mut fields = self
            .line
            .split(|b| b.is_ascii_whitespace())
            .filter(|field| !field.is_empty());
        let Some(start) = fields.next() else {
            return Ok(true);
        };
        let count = fields.next();
        let (Some(start), Some(count)) = (parse_u64(start), count.and_then(parse_u64)) else {
            return Err(self.malformed(&format!(
                "expected {EXPECTED_LINE} with integer start_block and block_count"
            )));
        };
        if count > MAX_BLOCKS_PER_LINE {
            return Err(self.malformed(&format!(
                "block_count {count}, expected at most {MAX_BLOCKS_PER_LINE} blocks a line"
            )));
        }
        let stored = self.stored.of(self.bytes_read);
        if let Err(bound) = self.requests.take(count, stored) {
            return Err(self.malformed(&format!(
                "block_count {count} takes the file past {bound} requests, the most its \
                 first {stored} bytes (as stored) may ask for ({EXPANSION_ALLOWANCE} plus \
                 {EXPANSION_PER_BYTE} a byte): expected the requests of a real trace"
            )));
        }
        // The last block must be addressable.
        if count > 0 && start.checked_add(count - 1).is_none() {
            return Err(self.malformed("start_block + block_count overflows 64 bits"));
        }
        self.next_block = start;
        self.blocks_left = count;
        Ok(true)
    }

    /// The end of the input: an error if no line asked for a block.
    fn end(&self) -> Result<bool> {
        // The process is interned at the first request.
        if self.interned.started() {
            return Ok(false);
        }
        if self.bytes_read == 0 {
            return Err(empty_input(&self.path, "an ARC .lis trace"));
        }
        Err(Error::format(
            &self.path,
            Position::Line(self.line_number),
            format!("no line asks for a block: the file holds no events (expected {EXPECTED_LINE} lines)"),
        ))
    }

    #[cold]
    fn malformed(&self, message: &str) -> Error {
        Error::format(&self.path, Position::Line(self.line_number), message)
    }
}

impl EventSource for Reader {
    fn read_batch(&mut self, buf: &mut Vec<Event>, max: usize) -> Result<bool> {
        buf.clear();
        let max = max.max(1);
        while buf.len() < max {
            if self.blocks_left == 0 {
                if self.next_line()? {
                    continue;
                }
                break;
            }
            let proc = self
                .interned
                .process()
                .ok_or_else(|| self.malformed("cannot allocate the trace's process"))?;
            let time_ns = self.line_number - 1;
            let take = self.blocks_left.min((max - buf.len()) as u64);
            // Consecutive blocks; wraps only after the last block of a line ending at
            // u64::MAX.
            self.blocks.clear();
            self.blocks
                .extend((0..take).map(|i| self.next_block.wrapping_add(i)));
            self.next_block = self.next_block.wrapping_add(take);
            self.pages.clear();
            if self
                .interned
                .page_ids(&self.blocks, &mut self.pages)
                .is_err()
            {
                return Err(self.malformed("more distinct pages than the 2^32 - 1 page ids"));
            }
            buf.extend(
                self.pages
                    .iter()
                    .map(|&page| Event::access(time_ns, proc, page, false, false)),
            );
            self.blocks_left -= take;
        }
        Ok(!buf.is_empty())
    }

    /// The tables of the requests read so far.
    fn tables(&mut self) -> Result<Tables> {
        Ok(self.interned.tables())
    }

    /// Nothing follows the events, whose reading checked the whole input.
    fn finish(&mut self) -> Result<()> {
        Ok(())
    }
}
