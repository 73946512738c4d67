//! libCacheSim's `oracleGeneral` binary traces, read only.
//!
//! Records of 24 little-endian bytes: `u32 timestamp` (seconds), `u64 obj_id`,
//! `u32 obj_size`, `i64 next_access_vtime`, with no header. Each record becomes one read
//! of page `PageKey::file(0, obj_id)` by a single process (pid 0, no name) at
//! `time_ns = timestamp * 10^9`. With a capacity in pages an object is one page, whatever
//! its size; with a capacity in bytes ([`crate::mm::placement::bytes`]) it takes its size
//! ([`EventSource::batch_sizes`](super::EventSource::batch_sizes)). `next_access_vtime` is ignored: a policy that needs the
//! future computes it from the trace itself; one below -1 (not a vtime) is an error, as
//! is an empty file.

use std::io::{BufReader, Read};
use std::path::Path;

use super::object_ids::ObjectRecord;
use super::records::{truncated, RecordFormat, RecordReader};
use super::shared::{le_u32, le_u64};
use crate::Result;

pub const RECORD_SIZE: usize = 24;

/// The oracleGeneral records.
pub struct OracleGeneral;

/// A reader of an oracleGeneral trace.
pub type Reader = RecordReader<OracleGeneral>;

impl Reader {
    pub fn new(path: &Path, input: Box<dyn Read + Send>) -> Self {
        RecordReader::with_format(
            path,
            BufReader::with_capacity(1 << 18, input),
            OracleGeneral,
        )
    }
}

impl RecordFormat for OracleGeneral {
    type Input = BufReader<Box<dyn Read + Send>>;

    const IDS: &'static str = "objects";

    fn expected(&self) -> String {
        "a libCacheSim oracleGeneral trace".into()
    }

    fn record_size(&mut self, _: &mut Self::Input, _: &Path) -> Result<usize> {
        Ok(RECORD_SIZE)
    }

    /// A partial record first; then a `next_access_vtime` that is not one.
    fn fault(&self, bytes: &[u8], _: usize) -> Option<(usize, String)> {
        if let Some(fault) = truncated(bytes, RECORD_SIZE, "records") {
            return Some(fault);
        }
        // libCacheSim writes -1 (or a large value) for "never again", else a request's
        // index: below -1 the bytes are not a trace, and read on (an endless stream of
        // them) every record would be a new object.
        let i = bytes
            .chunks_exact(RECORD_SIZE)
            .position(|record| (le_u64(&record[16..24]) as i64) < -1)?;
        let vtime = le_u64(&bytes[i * RECORD_SIZE + 16..][..8]) as i64;
        Some((
            i,
            format!("next_access_vtime {vtime}, expected -1 (never requested again) or the index of a later request"),
        ))
    }

    fn decoder(&self) -> impl Fn(&[u8]) -> ObjectRecord + '_ {
        |record| ObjectRecord {
            id: le_u64(&record[4..12]),
            size: le_u32(&record[12..16]),
            time_ns: u64::from(le_u32(&record[0..4])) * 1_000_000_000,
            write: false,
        }
    }
}
