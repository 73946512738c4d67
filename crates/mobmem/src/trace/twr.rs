//! libCacheSim's binary layouts of Twitter's cache traces, `twr` and `twrNS`, read only.
//!
//! The layouts are those of libCacheSim's `libCacheSim/traceReader/customizedReader/
//! twrBin.h` and `twrNSBin.h`: records of 20 (`twr`) or 22 (`twrNS`) little-endian
//! bytes, packed, no header:
//!
//! | offset | type | field |
//! |---|---|---|
//! | 0 | u32 | time, seconds |
//! | 4 | u64 | obj_id (the hashed key) |
//! | 12 | u32 | key size in the top 10 bits, value size in the low 22 |
//! | 16 | u32 | op in the top 8 bits, ttl (seconds) in the low 24 |
//! | 20 | u16 | namespace (`twrNS` only) |
//!
//! Each record becomes one access of page `PageKey::file(0, obj_id)` by a single
//! process (pid 0, no name) at `time_ns = time * 10^9`, with object size key size +
//! value size ([`EventSource::batch_sizes`](super::EventSource::batch_sizes)), the size libCacheSim gives the request.
//! The namespace and the ttl are ignored: libCacheSim keys an object by `obj_id` alone.
//!
//! The op codes are libCacheSim's (`req_op_e`, `libCacheSim/include/libCacheSim/enum.h`),
//! the memcached commands of Twitter's traces: 1 get and 2 gets are reads; 3 set, 4 add,
//! 5 cas, 6 replace, 7 append, 8 prepend, 9 delete, 10 incr and 11 decr are writes. A
//! delete counts as a write access: libCacheSim's cache simulation requests every
//! record whatever its op (it does not remove the object), the event model has no
//! removal, and dropping deletes would change the request stream against libCacheSim's.
//! Any other op (0, nop, or above 11) is an error naming the record: Twitter's traces
//! hold none, and random bytes, or a `twrNS` file read as `twr`, stop at once.
//!
//! libCacheSim by default skips a get or gets of value size 0 (its reader's
//! `ignore_size_zero_req`); here every record is an access, so request counts can exceed
//! libCacheSim's on traces that hold such gets. A file whose length is not a whole
//! number of records is an error naming the partial record (libCacheSim drops it
//! silently); so is an empty file.

use std::io::{BufReader, Read};
use std::path::Path;

use super::object_ids::ObjectRecord;
use super::records::{truncated, RecordFormat, RecordReader};
use super::shared::{le_u32, le_u64};
use crate::Result;

/// The two layouts, which differ only by the trailing namespace.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layout {
    /// `twr`, 20 bytes a record.
    Twr,
    /// `twrNS`, 22 bytes a record: `twr` and a u16 namespace.
    TwrNs,
}

impl Layout {
    pub fn record_size(self) -> usize {
        match self {
            Layout::Twr => 20,
            Layout::TwrNs => 22,
        }
    }

    /// libCacheSim's name of the layout.
    pub fn name(self) -> &'static str {
        match self {
            Layout::Twr => "twr",
            Layout::TwrNs => "twrNS",
        }
    }
}

/// Whether op code `op` writes (`Some(true)`), reads (`Some(false)`), or is none of
/// Twitter's (`None`).
fn op_writes(op: u8) -> Option<bool> {
    match op {
        1 | 2 => Some(false),
        3..=11 => Some(true),
        _ => None,
    }
}

fn op(record: &[u8]) -> u8 {
    // The top byte of the little-endian u32 at 16.
    record[19]
}

/// Key size plus value size.
fn object_size(record: &[u8]) -> u32 {
    let kv = le_u32(&record[12..16]);
    (kv >> 22) + (kv & ((1 << 22) - 1))
}

/// A reader of a `twr` or `twrNS` trace.
pub type Reader = RecordReader<Layout>;

impl Reader {
    pub fn new(path: &Path, input: Box<dyn Read + Send>, layout: Layout) -> Self {
        RecordReader::with_format(path, BufReader::with_capacity(1 << 18, input), layout)
    }
}

impl RecordFormat for Layout {
    type Input = BufReader<Box<dyn Read + Send>>;

    const IDS: &'static str = "objects";

    fn expected(&self) -> String {
        format!("a libCacheSim {} trace", self.name())
    }

    fn record_size(&mut self, _: &mut Self::Input, _: &Path) -> Result<usize> {
        Ok(Layout::record_size(*self))
    }

    /// A bad whole record is named before a partial one after it.
    fn fault(&self, bytes: &[u8], size: usize) -> Option<(usize, String)> {
        if let Some(i) = bytes
            .chunks_exact(size)
            .position(|r| op_writes(op(r)).is_none())
        {
            let code = op(&bytes[i * size..][..size]);
            return Some((
                i,
                format!(
                    "op code {code} (byte 19), expected 1 to 11 (get, gets, set, add, cas, \
                     replace, append, prepend, delete, incr, decr): the file is corrupt or \
                     not a {} trace",
                    self.name()
                ),
            ));
        }
        truncated(bytes, size, format_args!("{} records", self.name()))
    }

    fn decoder(&self) -> impl Fn(&[u8]) -> ObjectRecord + '_ {
        |record| ObjectRecord {
            id: le_u64(&record[4..12]),
            size: object_size(record),
            time_ns: u64::from(le_u32(&record[0..4])) * 1_000_000_000,
            write: op_writes(op(record)) == Some(true),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::records::read_in_batches;
    use crate::trace::{Event, Format, PageKey, Trace};

    /// A record of `layout`; `ns` is written for `twrNS` only.
    fn record(
        layout: Layout,
        time: u32,
        obj_id: u64,
        (key_size, value_size): (u32, u32),
        (op, ttl): (u8, u32),
        ns: u16,
    ) -> Vec<u8> {
        let mut r = Vec::new();
        r.extend_from_slice(&time.to_le_bytes());
        r.extend_from_slice(&obj_id.to_le_bytes());
        r.extend_from_slice(&((key_size << 22) | value_size).to_le_bytes());
        r.extend_from_slice(&((u32::from(op) << 24) | ttl).to_le_bytes());
        if layout == Layout::TwrNs {
            r.extend_from_slice(&ns.to_le_bytes());
        }
        assert_eq!(r.len(), layout.record_size());
        r
    }

    fn format(layout: Layout) -> Format {
        match layout {
            Layout::Twr => Format::Twr,
            Layout::TwrNs => Format::TwrNs,
        }
    }

    fn read(name: &str, bytes: Vec<u8>, layout: Layout) -> Result<(Trace, Vec<u32>)> {
        read_in_batches(name, bytes, format(layout), 3)
    }

    fn err(name: &str, bytes: Vec<u8>, layout: Layout) -> String {
        read(name, bytes, layout).unwrap_err().to_string()
    }

    /// Every op, in both layouts: reads, writes (a delete too), times, sizes, tables.
    #[test]
    fn records_by_hand() {
        for layout in [Layout::Twr, Layout::TwrNs] {
            let ops = [
                (1, 10, 0x1234_5678_9abc_def0, (20, 400)), // get
                (2, 10, 7, (1023, (1 << 22) - 1)),         // gets: largest sizes
                (3, 11, 0x1234_5678_9abc_def0, (20, 410)), // set
                (4, 11, 8, (5, 1)),                        // add
                (5, 12, 7, (5, 2)),                        // cas
                (6, 12, 8, (5, 3)),                        // replace
                (7, 13, 8, (5, 4)),                        // append
                (8, 13, 8, (5, 5)),                        // prepend
                (9, 14, 7, (5, 0)),                        // delete
                (10, 15, 9, (3, 8)),                       // incr
                (11, 4_000_000_000u32, 9, (3, 8)),         // decr
            ];
            let bytes: Vec<u8> = ops
                .iter()
                .map(|&(op, time, id, sizes)| record(layout, time, id, sizes, (op, 3600), 300))
                .collect::<Vec<_>>()
                .concat();
            let (t, sizes) = read("c52.bin", bytes, layout).unwrap();
            let expected = [
                (10, 0, false),
                (10, 1, false),
                (11, 0, true),
                (11, 2, true),
                (12, 1, true),
                (12, 2, true),
                (13, 2, true),
                (13, 2, true),
                (14, 1, true),
                (15, 3, true),
                (4_000_000_000, 3, true),
            ]
            .map(|(s, page, write)| Event::access(s * 1_000_000_000, 0, page, write, false));
            assert_eq!(t.events, expected, "{layout:?}");
            assert_eq!(
                sizes,
                [420, 1023 + (1 << 22) - 1, 430, 6, 7, 8, 9, 10, 5, 11, 11],
                "{layout:?}"
            );
            assert_eq!(
                t.tables.pages,
                [0x1234_5678_9abc_def0, 7, 8, 9].map(|id| PageKey::file(0, id)),
                "{layout:?}"
            );
            assert_eq!(t.tables.processes.len(), 1);
        }
    }

    /// The namespace does not split an object: libCacheSim keys by obj_id alone.
    #[test]
    fn the_namespace_is_ignored() {
        let bytes = [
            record(Layout::TwrNs, 1, 5, (4, 4), (1, 0), 1),
            record(Layout::TwrNs, 2, 5, (4, 4), (1, 0), 2),
        ]
        .concat();
        let (t, _) = read("ns.bin", bytes, Layout::TwrNs).unwrap();
        assert_eq!(t.events[0].page(), t.events[1].page());
        assert_eq!(t.tables.pages.len(), 1);
    }

    #[test]
    fn an_unknown_op_is_an_error() {
        for (bad, layout) in [(0u8, Layout::Twr), (12, Layout::TwrNs), (255, Layout::Twr)] {
            let bytes = [
                record(layout, 1, 5, (4, 4), (1, 0), 0),
                record(layout, 1, 6, (4, 4), (3, 0), 0),
                record(layout, 1, 7, (4, 4), (bad, 0), 0),
            ]
            .concat();
            let message = err("bad.bin", bytes, layout);
            let offset = 2 * layout.record_size();
            assert!(
                message.starts_with(&format!(
                    "bad.bin: record 2 (byte offset {offset}): op code {bad} (byte 19), expected 1 to 11"
                )),
                "{message}"
            );
        }
        // A twrNS file read as twr goes astray at its second record, which is named
        // before the partial record its length leaves at the end.
        let bytes: Vec<u8> = (0..2)
            .flat_map(|i| record(Layout::TwrNs, 1, i, (4, 4), (3, 0), 0x0707))
            .collect();
        let message = err("ns.bin", bytes, Layout::Twr);
        assert!(
            message.contains("record 1 (byte offset 20): op code 0"),
            "{message}"
        );
    }

    #[test]
    fn a_truncated_record_names_its_index_and_offset() {
        for layout in [Layout::Twr, Layout::TwrNs] {
            let mut bytes: Vec<u8> = (0..4)
                .flat_map(|i| record(layout, i, u64::from(i), (1, 1), (1, 0), 0))
                .collect();
            bytes.extend_from_slice(&[1; 7]);
            let message = err("cut.bin", bytes, layout);
            let offset = 4 * layout.record_size();
            assert!(
                message.starts_with(&format!(
                    "cut.bin: record 4 (byte offset {offset}): truncated record: the file ends 7 bytes into it ({} records are {} bytes)",
                    layout.name(),
                    layout.record_size()
                )),
                "{message}"
            );
        }
    }

    #[test]
    fn an_empty_file_is_an_error() {
        assert_eq!(
            err("empty.bin", Vec::new(), Layout::Twr),
            "empty.bin: byte offset 0: empty file: it holds no events (expected a libCacheSim twr trace)"
        );
        assert_eq!(
            err("empty.bin", Vec::new(), Layout::TwrNs),
            "empty.bin: byte offset 0: empty file: it holds no events (expected a libCacheSim twrNS trace)"
        );
    }

    #[test]
    fn names_tell_the_layout_as_libcachesim_does() {
        for (name, format) in [
            ("cluster52.twr.sample10.zst", Some(Format::Twr)),
            ("cluster52.twr", Some(Format::Twr)),
            ("cluster53.twrNS.zst", Some(Format::TwrNs)),
            ("cluster10.twrNS.sample10.zst", Some(Format::TwrNs)),
            ("twr.bin", None),
            ("cluster52.twrx", None),
        ] {
            assert_eq!(Format::from_path(Path::new(name)), format, "{name}");
        }
        assert_eq!("twr".parse::<Format>().unwrap(), Format::Twr);
        assert_eq!("twr-ns".parse::<Format>().unwrap(), Format::TwrNs);
        assert_eq!("twrNS".parse::<Format>().unwrap(), Format::TwrNs);
    }
}
