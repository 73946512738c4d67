//! libCacheSim's `oracleGeneral` binary traces, read only.
//!
//! Records of 24 little-endian bytes: `u32 timestamp` (seconds), `u64 obj_id`,
//! `u32 obj_size`, `i64 next_access_vtime`, with no header. Each record becomes one read
//! of page `PageKey::file(0, obj_id)` by a single process (pid 0, no name) at
//! `time_ns = timestamp * 10^9`. With a capacity in pages an object is one page, whatever
//! its size; with a capacity in bytes ([`crate::mm::placement::bytes`]) it takes its size
//! ([`EventSource::batch_sizes`]). `next_access_vtime` is ignored: a policy that needs the
//! future computes it from the trace itself; one below -1 (not a vtime) is an error, as
//! is an empty file.

use std::io::{BufReader, Read};
use std::path::{Path, PathBuf};

use super::object_ids::{ObjectRecord, ObjectRecords};
use super::shared::{empty_input, le_u32, le_u64, read_up_to};
use super::{Event, EventSource, Tables};
use crate::{Error, Position, Result};

pub const RECORD_SIZE: usize = 24;

/// Most records decoded per `read_batch`, bounding the byte buffer (384 KiB): enough to
/// overlap lookups, small beside the per-object tables.
const MAX_BATCH: usize = 1 << 14;

pub struct Reader {
    path: PathBuf,
    input: BufReader<Box<dyn Read + Send>>,
    /// Records read so far.
    next_record: u64,
    /// Raw bytes of the current batch, reused.
    bytes: Vec<u8>,
    /// The events of a batch of records, their sizes, and the ids interned (the pages
    /// are `PageKey::file(0, id)`; one process, at the first record).
    records: ObjectRecords,
    exhausted: bool,
}

impl Reader {
    pub fn new(path: &Path, input: Box<dyn Read + Send>) -> Self {
        Reader {
            path: path.to_path_buf(),
            input: BufReader::with_capacity(1 << 18, input),
            next_record: 0,
            bytes: Vec::new(),
            records: ObjectRecords::default(),
            exhausted: false,
        }
    }

    fn error_at(&self, index: u64, message: String) -> Error {
        Error::format(
            &self.path,
            Position::Record {
                index,
                offset: index * RECORD_SIZE as u64,
            },
            message,
        )
    }
}

impl EventSource for Reader {
    fn read_batch(&mut self, buf: &mut Vec<Event>, max: usize) -> Result<bool> {
        buf.clear();
        if self.exhausted {
            return Ok(false);
        }
        let count = max.clamp(1, MAX_BATCH);
        self.bytes.resize(count * RECORD_SIZE, 0);
        let got =
            read_up_to(&mut self.input, &mut self.bytes).map_err(|e| Error::io(&self.path, e))?;
        if got < self.bytes.len() {
            self.exhausted = true;
            if got % RECORD_SIZE != 0 {
                let index = self.next_record + (got / RECORD_SIZE) as u64;
                return Err(self.error_at(
                    index,
                    format!(
                        "truncated record: the file ends {} bytes into it (records are {RECORD_SIZE} bytes)",
                        got % RECORD_SIZE
                    ),
                ));
            }
        }
        let records = got / RECORD_SIZE;
        if records == 0 {
            if self.next_record == 0 {
                return Err(empty_input(&self.path, "a libCacheSim oracleGeneral trace"));
            }
            return Ok(false);
        }
        let records_bytes = &self.bytes[..got];
        // libCacheSim writes -1 (or a large value) for "never again", else a request's
        // index: below -1 the bytes are not a trace, and read on (an endless stream of
        // them) every record would be a new object.
        if let Some(i) = records_bytes
            .chunks_exact(RECORD_SIZE)
            .position(|record| (le_u64(&record[16..24]) as i64) < -1)
        {
            let vtime = le_u64(&records_bytes[i * RECORD_SIZE + 16..][..8]) as i64;
            return Err(self.error_at(
                self.next_record + i as u64,
                format!("next_access_vtime {vtime}, expected -1 (never requested again) or the index of a later request"),
            ));
        }
        let next = self.next_record;
        self.records
            .decode(
                records_bytes,
                RECORD_SIZE,
                |record| ObjectRecord {
                    id: le_u64(&record[4..12]),
                    size: le_u32(&record[12..16]),
                    time_ns: u64::from(le_u32(&record[0..4])) * 1_000_000_000,
                    write: false,
                },
                buf,
            )
            .map_err(|e| self.error_at(e.record(next), e.message("objects")))?;
        self.next_record += records as u64;
        Ok(true)
    }

    fn batch_sizes(&self) -> Option<&[u32]> {
        Some(self.records.sizes())
    }

    /// The tables of the records read so far.
    fn tables(&mut self) -> Result<Tables> {
        Ok(self.records.tables())
    }

    /// Nothing follows the events, whose reading checked the whole input.
    fn finish(&mut self) -> Result<()> {
        Ok(())
    }
}
