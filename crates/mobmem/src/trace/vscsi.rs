//! VMware `vscsiStats` block traces, as libCacheSim reads them (its `vscsi` trace type),
//! read only.
//!
//! The layouts are those of libCacheSim's
//! `libCacheSim/traceReader/customizedReader/vscsi.h`: fixed-size little-endian records,
//! no header, in one of two versions told apart by the data. Version 1 records are 32
//! bytes, version 2 records 40:
//!
//! | field | v1 offset | v2 offset | type |
//! |---|---|---|---|
//! | `sn` (serial number) | 0 | 4 | u32 |
//! | `len` (bytes) | 4 | 8 | u32 |
//! | `nSG` (scatter-gather entries) | 8 | 12 | u32 |
//! | `cmd` (SCSI opcode) | 12 | 0 | u16 |
//! | `ver` (version in its high byte) | 14 | 2 | u16 |
//! | `lbn` (block number) | 16 | 16 | u64 |
//! | `ts` (microseconds) | 24 | 24 | u64 |
//! | `rt` (response time) | - | 32 | u64 |
//!
//! The version is the high byte of `ver`. As libCacheSim does, the file is version 2
//! when its first two 40-byte records (one, in a shorter file) say 2, else version 1
//! when its first two 32-byte records say 1, else it is not a vscsi trace. Every later
//! record must carry the same version: libCacheSim does not look again, but a record
//! that says otherwise is not one of this trace's, and random bytes stop there.
//!
//! Each record becomes one access of page `PageKey::file(0, lbn)` by a single process
//! (pid 0, no name), with object size `len` ([`EventSource::batch_sizes`]) and
//! `time_ns = ts * 1000`: the fields libCacheSim makes its request's object id, size and
//! time of. libCacheSim reads no operation from these traces; here the SCSI opcode sets
//! the write bit: WRITE (6, 10, 12, 16), WRITE AND VERIFY (10, 12, 16) and WRITE SAME
//! (10, 16) are writes. Any other opcode (READ (6, 10, 12, 16), and commands that move
//! no data) is a read: libCacheSim requests every record whatever its command, so every
//! record is kept, and only a command that writes data marks a write. `sn`, `nSG` and
//! `rt` are ignored. A file whose length is not a whole number of records is an error
//! naming the partial record (libCacheSim drops it silently); so is an empty file.

use std::io::{self, BufReader, Cursor, Read};
use std::path::{Path, PathBuf};

use super::object_ids::{ObjectRecord, ObjectRecords};
use super::shared::{empty_input, le_u32, le_u64, read_up_to};
use super::{Event, EventSource, Tables};
use crate::{Error, Position, Result};

/// Most records decoded per `read_batch`, bounding the byte buffer (640 KiB of version
/// 2 records).
const MAX_BATCH: usize = 1 << 14;

/// The two record layouts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Version {
    V1,
    V2,
}

impl Version {
    /// Bytes a record.
    pub fn record_size(self) -> usize {
        match self {
            Version::V1 => 32,
            Version::V2 => 40,
        }
    }

    /// The number the high byte of `ver` holds.
    pub fn number(self) -> u8 {
        match self {
            Version::V1 => 1,
            Version::V2 => 2,
        }
    }

    /// Offset of the high byte of `ver` in a record.
    fn version_byte(self) -> usize {
        match self {
            Version::V1 => 15,
            Version::V2 => 3,
        }
    }

    fn len(self, record: &[u8]) -> u32 {
        let at = match self {
            Version::V1 => 4,
            Version::V2 => 8,
        };
        le_u32(&record[at..at + 4])
    }

    fn cmd(self, record: &[u8]) -> u16 {
        let at = match self {
            Version::V1 => 12,
            Version::V2 => 0,
        };
        u16::from_le_bytes([record[at], record[at + 1]])
    }

    fn lbn(record: &[u8]) -> u64 {
        le_u64(&record[16..24])
    }

    fn ts(record: &[u8]) -> u64 {
        le_u64(&record[24..32])
    }

    /// The version of a trace that starts with `head`, the first 80 bytes or the whole
    /// file when shorter; version 2 first, as libCacheSim tests.
    fn of(head: &[u8]) -> Option<Version> {
        [Version::V2, Version::V1].into_iter().find(|v| {
            let mut records = head.chunks_exact(v.record_size()).take(2).peekable();
            records.peek().is_some() && records.all(|r| r[v.version_byte()] == v.number())
        })
    }
}

/// Bytes read to tell the version: two version 2 records.
const HEAD: usize = 80;

/// SCSI opcodes that write data blocks: WRITE (6, 10, 12, 16), WRITE AND VERIFY (10, 12,
/// 16), WRITE SAME (10, 16).
fn writes(cmd: u16) -> bool {
    matches!(
        cmd,
        0x0a | 0x2a | 0xaa | 0x8a | 0x2e | 0xae | 0x8e | 0x41 | 0x93
    )
}

pub struct Reader {
    path: PathBuf,
    /// The file; once the version is known, its first bytes (read to tell it) again,
    /// then the rest.
    input: Box<dyn Read + Send>,
    version: Option<Version>,
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
            input: Box::new(BufReader::with_capacity(1 << 18, input)),
            version: None,
            next_record: 0,
            bytes: Vec::new(),
            records: ObjectRecords::default(),
            exhausted: false,
        }
    }

    /// The version the file's first records say, once known.
    pub fn version(&self) -> Option<Version> {
        self.version
    }

    fn error_at(&self, index: u64, record_size: usize, message: String) -> Error {
        Error::format(
            &self.path,
            Position::Record {
                index,
                offset: index * record_size as u64,
            },
            message,
        )
    }

    /// Read the first bytes, tell the version from them and put them back before the
    /// rest of the input.
    fn detect(&mut self) -> Result<Version> {
        let mut head = [0u8; HEAD];
        let got = read_up_to(&mut self.input, &mut head).map_err(|e| Error::io(&self.path, e))?;
        if got == 0 {
            return Err(empty_input(&self.path, "a vscsi trace"));
        }
        let head = &head[..got];
        let Some(version) = Version::of(head) else {
            let message = if got < Version::V1.record_size() {
                format!("truncated record: the file ends {got} bytes into it (vscsi records are 32 or 40 bytes)")
            } else {
                format!(
                    "not a vscsi trace: the first records carry neither version 2 (byte 3 of \
                     40-byte records, here {}) nor version 1 (byte 15 of 32-byte records, here {})",
                    version_bytes(head, Version::V2),
                    version_bytes(head, Version::V1),
                )
            };
            return Err(self.error_at(0, 0, message));
        };
        let rest = std::mem::replace(&mut self.input, Box::new(io::empty()));
        self.input = Box::new(Cursor::new(head.to_vec()).chain(rest));
        self.version = Some(version);
        Ok(version)
    }
}

/// The version bytes of the first two records of `version`'s size in `head`, for an
/// error message.
fn version_bytes(head: &[u8], version: Version) -> String {
    let bytes: Vec<String> = head
        .chunks_exact(version.record_size())
        .take(2)
        .map(|r| r[version.version_byte()].to_string())
        .collect();
    match bytes.is_empty() {
        true => "no whole record".into(),
        false => bytes.join(" and "),
    }
}

impl EventSource for Reader {
    fn read_batch(&mut self, buf: &mut Vec<Event>, max: usize) -> Result<bool> {
        buf.clear();
        if self.exhausted {
            return Ok(false);
        }
        let version = match self.version {
            Some(v) => v,
            None => self.detect().inspect_err(|_| self.exhausted = true)?,
        };
        let size = version.record_size();
        let count = max.clamp(1, MAX_BATCH);
        self.bytes.resize(count * size, 0);
        let got =
            read_up_to(&mut self.input, &mut self.bytes).map_err(|e| Error::io(&self.path, e))?;
        self.exhausted = got < self.bytes.len();
        let records = got / size;
        let records_bytes = &self.bytes[..records * size];
        // A bad whole record is named before a partial one after it.
        let bad = records_bytes.chunks_exact(size).position(|r| {
            r[version.version_byte()] != version.number() || Version::ts(r) > u64::MAX / 1000
        });
        if let Some(i) = bad {
            let record = &records_bytes[i * size..][..size];
            let message = if record[version.version_byte()] != version.number() {
                format!(
                    "version byte {} (byte {} of the record), but the trace's first records \
                     are vscsi version {}: the file is cut, corrupt or not a vscsi trace",
                    record[version.version_byte()],
                    version.version_byte(),
                    version.number()
                )
            } else {
                format!("timestamp {} us is past 2^64 - 1 ns", Version::ts(record))
            };
            return Err(self.error_at(self.next_record + i as u64, size, message));
        }
        if got % size != 0 {
            return Err(self.error_at(
                self.next_record + records as u64,
                size,
                format!(
                    "truncated record: the file ends {} bytes into it (vscsi version {} records are {size} bytes)",
                    got % size,
                    version.number()
                ),
            ));
        }
        if records == 0 {
            return Ok(false);
        }
        let next = self.next_record;
        self.records
            .decode(
                records_bytes,
                size,
                |record| ObjectRecord {
                    id: Version::lbn(record),
                    size: version.len(record),
                    // Checked above: below 2^64 / 1000.
                    time_ns: Version::ts(record) * 1000,
                    write: writes(version.cmd(record)),
                },
                buf,
            )
            .map_err(|e| self.error_at(e.record(next), size, e.message("blocks")))?;
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::{Format, PageKey};

    /// A version 1 record.
    fn v1(cmd: u16, len: u32, lbn: u64, ts: u64) -> Vec<u8> {
        let mut r = Vec::new();
        r.extend_from_slice(&0x8000_00f4u32.to_le_bytes()); // sn
        r.extend_from_slice(&len.to_le_bytes());
        r.extend_from_slice(&1u32.to_le_bytes()); // nSG
        r.extend_from_slice(&cmd.to_le_bytes());
        r.extend_from_slice(&0x0100u16.to_le_bytes()); // ver: 1
        r.extend_from_slice(&lbn.to_le_bytes());
        r.extend_from_slice(&ts.to_le_bytes());
        assert_eq!(r.len(), 32);
        r
    }

    /// A version 2 record.
    fn v2(cmd: u16, len: u32, lbn: u64, ts: u64) -> Vec<u8> {
        let mut r = Vec::new();
        r.extend_from_slice(&cmd.to_le_bytes());
        r.extend_from_slice(&0x0200u16.to_le_bytes()); // ver: 2
        r.extend_from_slice(&7u32.to_le_bytes()); // sn
        r.extend_from_slice(&len.to_le_bytes());
        r.extend_from_slice(&1u32.to_le_bytes()); // nSG
        r.extend_from_slice(&lbn.to_le_bytes());
        r.extend_from_slice(&ts.to_le_bytes());
        r.extend_from_slice(&250u64.to_le_bytes()); // rt
        assert_eq!(r.len(), 40);
        r
    }

    fn read(name: &str, bytes: Vec<u8>) -> Result<(crate::trace::Trace, Vec<u32>)> {
        let path = Path::new(name);
        let mut source = super::super::open_data(path, bytes, Some(Format::Vscsi))?;
        let (mut events, mut sizes, mut batch) = (Vec::new(), Vec::new(), Vec::new());
        // Small batches, so that records cross batches.
        while source.read_batch(&mut batch, 2)? {
            events.extend_from_slice(&batch);
            let batch_sizes = source.batch_sizes().expect("vscsi has sizes");
            assert_eq!(batch_sizes.len(), batch.len());
            sizes.extend_from_slice(batch_sizes);
        }
        let tables = source.tables()?;
        Ok((crate::trace::Trace { events, tables }, sizes))
    }

    fn err(name: &str, bytes: Vec<u8>) -> String {
        read(name, bytes).unwrap_err().to_string()
    }

    /// The first records of libCacheSim's `data/cloudPhysicsIO.vscsi`: version 1,
    /// WRITE(10) of 512 bytes, then a READ(10).
    #[test]
    fn version_1_records_by_hand() {
        let bytes = [
            v1(0x2a, 512, 42_932_745, 5_633_898_368_802),
            v1(0x28, 4096, 42_932_746, 5_633_898_611_441),
            v1(0x2a, 8192, 42_932_745, 5_633_899_000_000),
            v1(0x12, 0, 0, 5_633_899_000_001), // INQUIRY: a read of block 0
            v1(0x8a, 65536, 9, 5_633_899_000_002),
        ]
        .concat();
        let (t, sizes) = read("cp.vscsi", bytes).unwrap();
        let expected = [
            (5_633_898_368_802_000, 0, true),
            (5_633_898_611_441_000, 1, false),
            (5_633_899_000_000_000, 0, true),
            (5_633_899_000_001_000, 2, false),
            (5_633_899_000_002_000, 3, true),
        ]
        .map(|(time, page, write)| Event::access(time, 0, page, write, false));
        assert_eq!(t.events, expected);
        assert_eq!(sizes, [512, 4096, 8192, 0, 65536]);
        assert_eq!(
            t.tables.pages,
            [42_932_745, 42_932_746, 0, 9].map(|b| PageKey::file(0, b))
        );
        assert_eq!(t.tables.processes.len(), 1);
        assert_eq!(t.tables.processes[0].pid, 0);
    }

    #[test]
    fn version_2_records_by_hand() {
        let bytes = [
            v2(0x88, 4096, 100, 1),
            v2(0xaa, 1024, 200, 2_000_000),
            v2(0x08, 512, 100, 3_500_000),
        ]
        .concat();
        let path = Path::new("x.vscsi");
        let mut reader = Reader::new(path, Box::new(Cursor::new(bytes.clone())));
        let mut batch = Vec::new();
        assert!(reader.read_batch(&mut batch, 10).unwrap());
        assert_eq!(reader.version(), Some(Version::V2));
        assert_eq!(reader.batch_sizes().unwrap(), [4096, 1024, 512]);
        let expected = [
            (1_000, 0, false),
            (2_000_000_000, 1, true),
            (3_500_000_000, 0, false),
        ]
        .map(|(time, page, write)| Event::access(time, 0, page, write, false));
        assert_eq!(batch, expected);
        assert!(!reader.read_batch(&mut batch, 10).unwrap());
        assert!(batch.is_empty());
        // A one-record file is told by its one record.
        let (t, sizes) = read("one.vscsi", v2(0x2a, 77, 5, 9)).unwrap();
        assert_eq!(t.events, [Event::access(9_000, 0, 0, true, false)]);
        assert_eq!(sizes, [77]);
    }

    #[test]
    fn a_truncated_record_names_its_index_and_offset() {
        let mut bytes = [
            v1(0x28, 512, 1, 1),
            v1(0x28, 512, 2, 2),
            v1(0x28, 512, 3, 3),
        ]
        .concat();
        bytes.extend_from_slice(&v1(0x28, 512, 4, 4)[..20]);
        let message = err("cut.vscsi", bytes);
        assert!(
            message.starts_with("cut.vscsi: record 3 (byte offset 96): truncated record: the file ends 20 bytes into it"),
            "{message}"
        );
        let mut bytes = [v2(0x28, 512, 1, 1), v2(0x28, 512, 2, 2)].concat();
        bytes.extend_from_slice(&[0; 3]);
        let message = err("cut2.vscsi", bytes);
        assert!(
            message.contains("record 2 (byte offset 80): truncated record: the file ends 3 bytes into it (vscsi version 2 records are 40 bytes)"),
            "{message}"
        );
        // Shorter than any record.
        let message = err("tiny.vscsi", vec![0; 10]);
        assert!(
            message.contains(
                "record 0 (byte offset 0): truncated record: the file ends 10 bytes into it"
            ),
            "{message}"
        );
    }

    #[test]
    fn an_empty_file_is_an_error() {
        let message = err("empty.vscsi", Vec::new());
        assert_eq!(
            message,
            "empty.vscsi: byte offset 0: empty file: it holds no events (expected a vscsi trace)"
        );
    }

    #[test]
    fn neither_version_is_an_error() {
        let mut bytes = [
            v1(0x28, 512, 1, 1),
            v1(0x28, 512, 2, 2),
            v1(0x28, 512, 3, 3),
        ]
        .concat();
        bytes[14 + 32 + 1] = 3; // the second record says version 3
        let message = err("odd.vscsi", bytes);
        assert!(
            message.starts_with("odd.vscsi: record 0 (byte offset 0): not a vscsi trace: the first records carry neither version 2"),
            "{message}"
        );
        assert!(message.contains("here 1 and 3)"), "{message}");
    }

    #[test]
    fn a_later_record_of_another_version_is_an_error() {
        let mut bytes: Vec<u8> = (0..5).flat_map(|i| v1(0x28, 512, i, i)).collect();
        bytes[3 * 32 + 15] = 0;
        let message = err("mixed.vscsi", bytes.clone());
        assert!(
            message.starts_with("mixed.vscsi: record 3 (byte offset 96): version byte 0 (byte 15 of the record), but the trace's first records are vscsi version 1"),
            "{message}"
        );
        // Named before a partial record after it in the same batch.
        let cut = bytes[..4 * 32 + 5].to_vec();
        let mut reader = Reader::new(Path::new("mixed.vscsi"), Box::new(Cursor::new(cut)));
        let message = reader
            .read_batch(&mut Vec::new(), 100)
            .unwrap_err()
            .to_string();
        assert!(
            message.contains("record 3 (byte offset 96): version byte 0"),
            "{message}"
        );
    }

    #[test]
    fn a_timestamp_past_the_nanosecond_range_is_an_error() {
        let bytes = [v1(0x28, 512, 1, 1), v1(0x28, 512, 2, u64::MAX / 1000 + 1)].concat();
        let message = err("late.vscsi", bytes);
        assert!(
            message.contains("record 1 (byte offset 32): timestamp 18446744073709552 us"),
            "{message}"
        );
        let bytes = [v1(0x28, 512, 1, u64::MAX / 1000)].concat();
        assert!(read("last.vscsi", bytes).is_ok());
    }

    #[test]
    fn the_file_name_tells_the_format() {
        for name in ["cloudPhysicsIO.vscsi", "w01.VSCSI.zst", "a.vscsi.gz"] {
            assert_eq!(
                Format::from_path(Path::new(name)),
                Some(Format::Vscsi),
                "{name}"
            );
        }
        assert_eq!(Format::from_path(Path::new("vscsi.bin")), None);
        assert_eq!("vscsi".parse::<Format>().unwrap(), Format::Vscsi);
    }
}
