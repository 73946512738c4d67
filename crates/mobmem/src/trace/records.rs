//! The reader the binary object traces share (oracleGeneral, twr and twrNS, vscsi):
//! fixed-size records, no header, read a batch at a time, each record one access of an
//! object by one process ([`ObjectRecords`]). A [`RecordFormat`] says how long a record
//! is, which record of a batch is at fault and what a record says; the reading, the
//! errors' positions, the empty file and the interning are the same for all.

use std::io::Read;
use std::path::{Path, PathBuf};

use super::object_ids::{ObjectRecord, ObjectRecords};
use super::shared::{empty_input, read_up_to};
use super::{Event, EventSource, Tables};
use crate::{Error, Position, Result};

/// Most records decoded per `read_batch`, bounding the byte buffer (640 KiB of the
/// longest records, vscsi version 2's 40 bytes): enough to overlap lookups, small beside
/// the per-object tables.
const MAX_BATCH: usize = 1 << 14;

/// What one binary object trace's records are.
pub trait RecordFormat {
    /// What the records are read from.
    type Input: Read;

    /// What a record's id names, in the error of too many distinct ones (`objects`,
    /// `blocks`).
    const IDS: &'static str;

    /// The trace an empty file was expected to be (`a vscsi trace`).
    fn expected(&self) -> String;

    /// Bytes a record. Called before each batch; a format that tells its layout from the
    /// data reads what it needs of `input` here (and puts it back).
    fn record_size(&mut self, input: &mut Self::Input, path: &Path) -> Result<usize>;

    /// The first fault of a batch's `bytes`, `size` bytes a record (all whole but
    /// perhaps the last): the index in the batch of the record at fault, and what is
    /// wrong with it.
    fn fault(&self, bytes: &[u8], size: usize) -> Option<(usize, String)>;

    /// What a record says, for the records of a batch that [`RecordFormat::fault`]
    /// passed.
    fn decoder(&self) -> impl Fn(&[u8]) -> ObjectRecord + '_;
}

/// The fault of a batch whose `bytes` end part way into a record: that record's index,
/// and how many bytes of it there are; `records` names the records whose length is
/// `size` (`twr records`).
pub fn truncated(
    bytes: &[u8],
    size: usize,
    records: impl std::fmt::Display,
) -> Option<(usize, String)> {
    let part = bytes.len() % size;
    (part != 0).then(|| {
        (
            bytes.len() / size,
            format!(
                "truncated record: the file ends {part} bytes into it ({records} are {size} bytes)"
            ),
        )
    })
}

/// The error of record `index` of `path`, records being `size` bytes long.
pub fn record_error(path: &Path, index: u64, size: usize, message: String) -> Error {
    Error::format(
        path,
        Position::Record {
            index,
            offset: index * size as u64,
        },
        message,
    )
}

/// A binary object trace of format `F`, read a batch at a time.
pub struct RecordReader<F: RecordFormat> {
    path: PathBuf,
    format: F,
    input: F::Input,
    /// Records read so far.
    next_record: u64,
    /// Raw bytes of the current batch, reused.
    bytes: Vec<u8>,
    /// The events of a batch of records, their sizes, and the ids interned (the pages
    /// are `PageKey::file(0, id)`; one process, at the first record).
    records: ObjectRecords,
    exhausted: bool,
}

impl<F: RecordFormat> RecordReader<F> {
    pub(super) fn with_format(path: &Path, input: F::Input, format: F) -> Self {
        RecordReader {
            path: path.to_path_buf(),
            format,
            input,
            next_record: 0,
            bytes: Vec::new(),
            records: ObjectRecords::default(),
            exhausted: false,
        }
    }

    pub(super) fn format(&self) -> &F {
        &self.format
    }
}

impl<F: RecordFormat> EventSource for RecordReader<F> {
    fn read_batch(&mut self, buf: &mut Vec<Event>, max: usize) -> Result<bool> {
        buf.clear();
        if self.exhausted {
            return Ok(false);
        }
        let size = self
            .format
            .record_size(&mut self.input, &self.path)
            .inspect_err(|_| self.exhausted = true)?;
        let count = max.clamp(1, MAX_BATCH);
        self.bytes.resize(count * size, 0);
        let got =
            read_up_to(&mut self.input, &mut self.bytes).map_err(|e| Error::io(&self.path, e))?;
        self.exhausted = got < self.bytes.len();
        if let Some((i, message)) = self.format.fault(&self.bytes[..got], size) {
            let index = self.next_record + i as u64;
            return Err(record_error(&self.path, index, size, message));
        }
        let records = got / size;
        if records == 0 {
            if self.next_record == 0 {
                return Err(empty_input(&self.path, &self.format.expected()));
            }
            return Ok(false);
        }
        let next = self.next_record;
        self.records
            .decode(&self.bytes[..got], size, self.format.decoder(), buf)
            .map_err(|e| record_error(&self.path, e.record(next), size, e.message(F::IDS)))?;
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

/// The trace of `bytes` read as `format` under `name` in batches of `batch` records (small,
/// so that records cross batches), with the sizes of its events.
#[cfg(test)]
pub(super) fn read_in_batches(
    name: &str,
    bytes: Vec<u8>,
    format: super::Format,
    batch: usize,
) -> Result<(super::Trace, Vec<u32>)> {
    let mut source = super::open_data(Path::new(name), bytes, Some(format))?;
    let (mut events, mut sizes, mut buf) = (Vec::new(), Vec::new(), Vec::new());
    while source.read_batch(&mut buf, batch)? {
        events.extend_from_slice(&buf);
        let batch_sizes = source
            .batch_sizes()
            .expect("binary object traces have sizes");
        assert_eq!(batch_sizes.len(), buf.len());
        sizes.extend_from_slice(batch_sizes);
    }
    let tables = source.tables()?;
    Ok((super::Trace { events, tables }, sizes))
}
