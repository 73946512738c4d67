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
//! (pid 0, no name), with object size `len` ([`EventSource::batch_sizes`](super::EventSource::batch_sizes)) and
//! `time_ns = ts * 1000`: the fields libCacheSim makes its request's object id, size and
//! time of. libCacheSim reads no operation from these traces; here the SCSI opcode sets
//! the write bit: WRITE (6, 10, 12, 16), WRITE AND VERIFY (10, 12, 16) and WRITE SAME
//! (10, 16) are writes. Any other opcode (READ (6, 10, 12, 16), and commands that move
//! no data) is a read: libCacheSim requests every record whatever its command, so every
//! record is kept, and only a command that writes data marks a write. `sn`, `nSG` and
//! `rt` are ignored. A file whose length is not a whole number of records is an error
//! naming the partial record (libCacheSim drops it silently); so is an empty file.

use std::io::{self, BufReader, Cursor, Read};
use std::path::Path;

use super::object_ids::ObjectRecord;
use super::records::{record_error, truncated, RecordFormat, RecordReader};
use super::shared::{empty_input, le_u32, le_u64, read_up_to};
use crate::{Error, Result};

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

/// The vscsi records, of the version the file's first records say once they are read.
pub struct Vscsi {
    version: Option<Version>,
}

/// A reader of a vscsi trace. Its input is the file; once the version is known, its
/// first bytes (read to tell it) again, then the rest.
pub type Reader = RecordReader<Vscsi>;

impl Reader {
    pub fn new(path: &Path, input: Box<dyn Read + Send>) -> Self {
        let input: Box<dyn Read + Send> = Box::new(BufReader::with_capacity(1 << 18, input));
        RecordReader::with_format(path, input, Vscsi { version: None })
    }

    /// The version the file's first records say, once known.
    pub fn version(&self) -> Option<Version> {
        self.format().version
    }
}

impl Vscsi {
    /// The version, told by the time records are checked and decoded.
    fn known(&self) -> Version {
        self.version
            .expect("the version is told before the first batch")
    }

    /// Read the first bytes, tell the version from them and put them back before the
    /// rest of the input.
    fn detect(&mut self, input: &mut Box<dyn Read + Send>, path: &Path) -> Result<Version> {
        let mut head = [0u8; HEAD];
        let got = read_up_to(input, &mut head).map_err(|e| Error::io(path, e))?;
        if got == 0 {
            return Err(empty_input(path, &self.expected()));
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
            return Err(record_error(path, 0, 0, message));
        };
        let rest = std::mem::replace(input, Box::new(io::empty()));
        *input = Box::new(Cursor::new(head.to_vec()).chain(rest));
        self.version = Some(version);
        Ok(version)
    }
}

impl RecordFormat for Vscsi {
    type Input = Box<dyn Read + Send>;

    const IDS: &'static str = "blocks";

    fn expected(&self) -> String {
        "a vscsi trace".into()
    }

    fn record_size(&mut self, input: &mut Self::Input, path: &Path) -> Result<usize> {
        let version = match self.version {
            Some(v) => v,
            None => self.detect(input, path)?,
        };
        Ok(version.record_size())
    }

    /// A bad whole record is named before a partial one after it.
    fn fault(&self, bytes: &[u8], size: usize) -> Option<(usize, String)> {
        let version = self.known();
        let bad = bytes.chunks_exact(size).position(|r| {
            r[version.version_byte()] != version.number() || Version::ts(r) > u64::MAX / 1000
        });
        if let Some(i) = bad {
            let record = &bytes[i * size..][..size];
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
            return Some((i, message));
        }
        truncated(
            bytes,
            size,
            format_args!("vscsi version {} records", version.number()),
        )
    }

    fn decoder(&self) -> impl Fn(&[u8]) -> ObjectRecord + '_ {
        let version = self.known();
        move |record| ObjectRecord {
            id: Version::lbn(record),
            size: version.len(record),
            // Checked by `fault`: below 2^64 / 1000.
            time_ns: Version::ts(record) * 1000,
            write: writes(version.cmd(record)),
        }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::records::read_in_batches;
    use crate::trace::{Event, EventSource, Format, PageKey};

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

    /// Version 1 READ(10)s of 512 bytes, of each block of `blocks` at that many
    /// microseconds.
    fn v1_reads(blocks: std::ops::Range<u64>) -> Vec<u8> {
        blocks.flat_map(|i| v1(0x28, 512, i, i)).collect()
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
        read_in_batches(name, bytes, Format::Vscsi, 2)
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
        let mut bytes = v1_reads(1..4);
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
        let mut bytes = v1_reads(1..4);
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
        let mut bytes = v1_reads(0..5);
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
