//! The trace formats on small inputs: round trips, a golden `.mmt` file, and the error
//! each kind of malformed input produces (file, line or record, and what was expected).

use std::fs;
use std::path::{Path, PathBuf};

use mobmem::trace::{self, mmt, Event, EventSource, PageKey, ProcessInfo, Tables, Trace};

fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(name)
}

fn put(dir: &tempfile::TempDir, name: &str, bytes: impl AsRef<[u8]>) -> PathBuf {
    let path = dir.path().join(name);
    fs::write(&path, bytes).unwrap();
    path
}

/// The message of the error reading `path` as a whole trace produces.
fn read_error(path: &Path) -> String {
    match trace::read_all(path, None) {
        Ok(trace) => panic!("{} read without error: {trace:?}", path.display()),
        Err(e) => e.to_string(),
    }
}

fn assert_mentions(message: &str, parts: &[&str]) {
    for part in parts {
        assert!(
            message.contains(part),
            "error `{message}` does not mention `{part}`"
        );
    }
}

/// The trace of `tests/data/small.csv`, built by hand.
fn small_trace() -> Trace {
    let processes = [
        (1000, "com.android.launcher"),
        (2000, "com.example.mail"),
        (1000, "com.example.game, with a comma"),
        (3000, ""),
    ];
    let pages = [
        PageKey::file(42, 0),
        PageKey::anon(1000, 4096),
        PageKey::file(42, 1),
        PageKey::anon(2000, 7),
        PageKey::anon(1000, 12),
        PageKey::file(43, 9),
    ];
    let events = vec![
        Event::start(0, 0),
        Event::importance(5, 0, 0),
        Event::access(10, 0, 0, false, false),
        Event::access(20, 0, 1, true, true),
        Event::start(30, 1),
        Event::importance(31, 1, 100),
        Event::importance(35, 0, 900),
        Event::access(40, 1, 0, false, false),
        Event::access(50, 1, 2, false, false),
        Event::access(60, 1, 3, true, true),
        Event::access(70, 0, 1, false, true),
        Event::exit(80, 0),
        Event::start(90, 2),
        Event::access(100, 2, 4, true, true),
        Event::access(110, 3, 5, false, false),
    ];
    Trace {
        events,
        tables: Tables {
            pages: pages.to_vec(),
            processes: processes
                .iter()
                .map(|&(pid, name)| ProcessInfo {
                    pid,
                    name: name.to_string(),
                })
                .collect(),
        },
    }
}

mod mmt_format {
    use super::*;

    /// A `.mmt` file of `small_trace`, as bytes, with where its parts start.
    fn small_mmt(dir: &tempfile::TempDir) -> (Vec<u8>, usize) {
        let path = dir.path().join("small.mmt");
        mmt::write(&path, &small_trace()).unwrap();
        let tables_offset = 64 + 16 * small_trace().events.len();
        (fs::read(path).unwrap(), tables_offset)
    }

    #[test]
    fn round_trip() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("round.mmt");
        mmt::write(&path, &small_trace()).unwrap();
        assert_eq!(trace::read_all(&path, None).unwrap(), small_trace());
        assert!(!dir.path().join("round.mmt.partial").exists());
    }

    /// The checked-in file pins the byte layout: if this fails, the format changed and
    /// its version must change with it.
    #[test]
    fn golden_file() {
        let golden = data("small.mmt");
        assert_eq!(trace::read_all(&golden, None).unwrap(), small_trace());
        let dir = tempfile::tempdir().unwrap();
        let (bytes, _) = small_mmt(&dir);
        assert_eq!(bytes, fs::read(&golden).unwrap());
    }

    #[test]
    fn header_fields() {
        let source = mmt::Reader::new(
            &data("small.mmt"),
            Box::new(fs::File::open(data("small.mmt")).unwrap()),
        )
        .unwrap();
        assert_eq!(
            *source.header(),
            mmt::Header {
                record_count: 15,
                page_count: 6,
                process_count: 4,
                tables_offset: 64 + 15 * 16,
            }
        );
        assert_eq!(source.page_count_hint(), Some(6));
    }

    #[test]
    fn batches_of_any_size_give_the_same_events() {
        for max in [1, 2, 7, 15, 16, 1 << 20] {
            let mut source = trace::open(&data("small.mmt"), None).unwrap();
            let mut events = Vec::new();
            let mut batch = Vec::new();
            while source.read_batch(&mut batch, max).unwrap() {
                assert!(!batch.is_empty() && batch.len() <= max);
                events.extend_from_slice(&batch);
            }
            assert!(batch.is_empty());
            assert_eq!(events, small_trace().events, "batches of {max}");
            assert_eq!(source.tables().unwrap(), small_trace().tables);
        }
    }

    #[test]
    fn tables_before_the_end_skip_the_remaining_records() {
        let mut source = trace::open(&data("small.mmt"), None).unwrap();
        let mut batch = Vec::new();
        assert!(source.read_batch(&mut batch, 4).unwrap());
        assert_eq!(source.tables().unwrap(), small_trace().tables);
        assert!(!source.read_batch(&mut batch, 4).unwrap());
        assert!(batch.is_empty());
        // Asking twice gives the same tables.
        assert_eq!(source.tables().unwrap(), small_trace().tables);
    }

    #[test]
    fn empty_trace() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("empty.mmt");
        mmt::write(&path, &Trace::default()).unwrap();
        assert_eq!(fs::metadata(&path).unwrap().len(), 64);
        assert_eq!(trace::read_all(&path, None).unwrap(), Trace::default());
    }

    #[test]
    fn streaming_writer() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("streamed.mmt");
        let trace = small_trace();
        let mut writer = mmt::Writer::create(&path).unwrap();
        for event in &trace.events[..5] {
            writer.write(event).unwrap();
        }
        writer.write_all(&trace.events[5..]).unwrap();
        assert_eq!(writer.records(), 15);
        assert!(!path.exists(), "nothing at the target before finish");
        writer.finish(&trace.tables).unwrap();
        assert_eq!(trace::read_all(&path, None).unwrap(), trace);
    }

    #[test]
    fn unfinished_writer() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("unfinished.mmt");
        let mut writer = mmt::Writer::create(&path).unwrap();
        writer.write_all(&small_trace().events).unwrap();
        writer.flush().unwrap();
        // What a crash would leave behind, under a name a user might try to read.
        let leftover = dir.path().join("leftover.mmt");
        fs::copy(writer.partial_path(), &leftover).unwrap();
        let partial = writer.partial_path().to_path_buf();
        drop(writer);
        assert!(!path.exists());
        assert!(
            !partial.exists(),
            "a dropped writer removes its temporary file"
        );
        assert_mentions(
            &read_error(&leftover),
            &[
                "leftover.mmt",
                "byte offset 0",
                "incomplete trace: the writer did not finish",
            ],
        );
    }

    #[test]
    fn finish_refuses_tables_that_miss_ids() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("inconsistent.mmt");
        let mut tables = small_trace().tables;
        tables.pages.pop();
        let mut writer = mmt::Writer::create(&path).unwrap();
        writer.write_all(&small_trace().events).unwrap();
        let message = writer.finish(&tables).unwrap_err().to_string();
        assert_mentions(&message, &["inconsistent.mmt", "page id 5", "5 entries"]);
        assert!(!path.exists());
        assert!(!dir.path().join("inconsistent.mmt.partial").exists());
    }

    #[test]
    fn truncated_inside_a_record() {
        let dir = tempfile::tempdir().unwrap();
        let (bytes, _) = small_mmt(&dir);
        let path = put(&dir, "cut.mmt", &bytes[..64 + 2 * 16 + 5]);
        assert_mentions(
            &read_error(&path),
            &[
                "cut.mmt",
                "record 2 (byte offset 96)",
                "truncated",
                "5 bytes into",
            ],
        );
        // Cut exactly between records: the next record is missing.
        let path = put(&dir, "cut.mmt", &bytes[..64 + 3 * 16]);
        assert_mentions(&read_error(&path), &["record 3 (byte offset 112)"]);
    }

    #[test]
    fn truncated_when_skipping_records() {
        let dir = tempfile::tempdir().unwrap();
        let (bytes, _) = small_mmt(&dir);
        let path = put(&dir, "cut.mmt", &bytes[..64 + 10 * 16 + 1]);
        let mut source = trace::open(&path, None).unwrap();
        let message = source.tables().unwrap_err().to_string();
        assert_mentions(&message, &["record 10 (byte offset 224)", "1 bytes into"]);
    }

    #[test]
    fn truncated_inside_the_tables() {
        let dir = tempfile::tempdir().unwrap();
        let (bytes, tables) = small_mmt(&dir);
        // In the third page entry.
        let cut = tables + 2 * 24 + 10;
        let path = put(&dir, "cut.mmt", &bytes[..cut]);
        assert_mentions(
            &read_error(&path),
            &[
                &format!("byte offset {cut}"),
                "truncated page table",
                "entry 2 of 6",
            ],
        );
        // In the name of the first process.
        let cut = tables + 6 * 24 + 8 + 3;
        let path = put(&dir, "cut.mmt", &bytes[..cut]);
        assert_mentions(
            &read_error(&path),
            &[
                &format!("byte offset {cut}"),
                "truncated process table",
                "process 0 of 4",
            ],
        );
        // Missing the last process entirely.
        let cut = bytes.len() - 8;
        let path = put(&dir, "cut.mmt", &bytes[..cut]);
        assert_mentions(&read_error(&path), &["process 3 of 4"]);
    }

    #[test]
    fn bad_headers() {
        let dir = tempfile::tempdir().unwrap();
        let (bytes, _) = small_mmt(&dir);
        let patched = |at: usize, with: &[u8]| {
            let mut copy = bytes.clone();
            copy[at..at + with.len()].copy_from_slice(with);
            copy
        };
        let cases: [(Vec<u8>, &[&str]); 7] = [
            (b"hello".to_vec(), &["byte offset 0", "not a mobmem trace"]),
            (
                patched(0, b"MOBMEMXX"),
                &["byte offset 0", "not a mobmem trace"],
            ),
            (
                bytes[..40].to_vec(),
                &["byte offset 40", "truncated header"],
            ),
            (
                patched(8, &2u32.to_le_bytes()),
                &["byte offset 8", "version 2"],
            ),
            (
                patched(12, &24u32.to_le_bytes()),
                &["byte offset 12", "record size 24"],
            ),
            (
                patched(40, &65u64.to_le_bytes()),
                &["byte offset 40", "tables offset 65"],
            ),
            (
                patched(16, &14u64.to_le_bytes()),
                &["byte offset 40", "14 records"],
            ),
        ];
        for (content, parts) in cases {
            let path = put(&dir, "bad.mmt", content);
            let mut all = vec!["bad.mmt"];
            all.extend_from_slice(parts);
            assert_mentions(&read_error(&path), &all);
        }
    }

    fn patch_record(bytes: &mut [u8], index: usize, word: Option<u32>, arg: Option<u32>) {
        let at = 64 + 16 * index;
        if let Some(word) = word {
            bytes[at + 8..at + 12].copy_from_slice(&word.to_le_bytes());
        }
        if let Some(arg) = arg {
            bytes[at + 12..at + 16].copy_from_slice(&arg.to_le_bytes());
        }
    }

    #[test]
    fn bad_records() {
        let dir = tempfile::tempdir().unwrap();
        let (bytes, _) = small_mmt(&dir);
        const IMPORTANCE: u32 = 1 << 28;
        const START: u32 = 2 << 28;
        let cases: [(usize, Option<u32>, Option<u32>, &str); 6] = [
            // Record 2 is an access by process 0: make it process 99.
            (
                2,
                Some(99),
                None,
                "process id 99 out of range (the trace has 4 processes)",
            ),
            (
                2,
                None,
                Some(6),
                "page id 6 out of range (the trace has 6 pages)",
            ),
            (1, None, Some(1001), "importance 1001 outside"),
            (1, None, Some(-1001i32 as u32), "importance -1001 outside"),
            (
                1,
                Some(IMPORTANCE | 1 << 30),
                None,
                "write or anonymous flag",
            ),
            (
                0,
                Some(START),
                Some(3),
                "argument 3 on a start or exit event",
            ),
        ];
        for (index, word, arg, expected) in cases {
            let mut copy = bytes.clone();
            patch_record(&mut copy, index, word, arg);
            let path = put(&dir, "bad.mmt", copy);
            let offset = 64 + 16 * index;
            assert_mentions(
                &read_error(&path),
                &[
                    "bad.mmt",
                    &format!("record {index} (byte offset {offset})"),
                    expected,
                ],
            );
        }
    }

    #[test]
    fn bad_tables() {
        let dir = tempfile::tempdir().unwrap();
        let (bytes, tables) = small_mmt(&dir);
        let mut bad_kind = bytes.clone();
        bad_kind[tables + 24 * 3] = 2;
        let mut bad_padding = bytes.clone();
        bad_padding[tables + 24 * 3 + 4] = 1;
        // The first name starts after 6 page entries and the pid and length words.
        let name = tables + 6 * 24 + 8;
        let mut bad_name = bytes.clone();
        bad_name[name + 2] = 0xFF;
        let mut trailing = bytes.clone();
        trailing.push(0);
        let cases = [
            (bad_kind, tables + 72, "page 3: kind 2"),
            (bad_padding, tables + 73, "page 3: padding"),
            (bad_name, name + 2, "process 0: name is not valid UTF-8"),
            (
                trailing,
                bytes.len(),
                "unexpected data after the process table",
            ),
        ];
        for (content, offset, expected) in cases {
            let path = put(&dir, "bad.mmt", content);
            assert_mentions(
                &read_error(&path),
                &["bad.mmt", &format!("byte offset {offset}"), expected],
            );
        }
    }
}

mod properties {
    use super::*;
    use proptest::collection::vec;
    use proptest::prelude::*;

    fn page_key() -> impl Strategy<Value = PageKey> {
        (any::<bool>(), any::<u64>(), any::<u64>()).prop_map(|(anon, owner, index)| {
            if anon {
                PageKey::anon(owner, index)
            } else {
                PageKey::file(owner, index)
            }
        })
    }

    /// Any trace whose ids are within its tables (the only thing `.mmt` requires).
    fn any_trace() -> impl Strategy<Value = Trace> {
        (
            vec(page_key(), 0..30),
            vec((any::<u32>(), "\\PC{0,12}"), 1..8),
        )
            .prop_flat_map(|(pages, processes)| {
                let page_ids = pages.len() as u32;
                let proc_ids = processes.len() as u32;
                let event = (
                    0u8..4,
                    any::<u64>(),
                    0..proc_ids,
                    any::<u32>(),
                    any::<bool>(),
                    any::<bool>(),
                    -1000i16..=1000,
                )
                    .prop_filter_map(
                        "an access needs a page",
                        move |(kind, time, proc, page, write, anon, adj)| {
                            Some(match kind {
                                0 if page_ids > 0 => {
                                    Event::access(time, proc, page % page_ids, write, anon)
                                }
                                0 => return None,
                                1 => Event::importance(time, proc, adj),
                                2 => Event::start(time, proc),
                                _ => Event::exit(time, proc),
                            })
                        },
                    );
                let tables = Tables {
                    pages,
                    processes: processes
                        .into_iter()
                        .map(|(pid, name)| ProcessInfo { pid, name })
                        .collect(),
                };
                (vec(event, 0..200), Just(tables))
            })
            .prop_map(|(events, tables)| Trace { events, tables })
    }

    proptest! {
        #[test]
        fn mmt_round_trip(trace in any_trace(), batch in 1usize..50) {
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join("any.mmt");
            mmt::write(&path, &trace).unwrap();
            let mut source = trace::open(&path, None).unwrap();
            prop_assert_eq!(source.page_count_hint(), Some(trace.tables.pages.len() as u64));
            let mut events = Vec::new();
            let mut buf = Vec::new();
            while source.read_batch(&mut buf, batch).unwrap() {
                events.extend_from_slice(&buf);
            }
            prop_assert_eq!(&events, &trace.events);
            prop_assert_eq!(source.tables().unwrap(), trace.tables);
        }

    }
}
