//! The trace formats on small inputs: round trips, a golden `.mmt` file, and the error
//! each kind of malformed input produces (file, line or record, and what was expected).

use crate::common;
use common::assert_mentions;

use std::fs;
use std::path::{Path, PathBuf};

use mobmem::trace::{
    self, csv, lis, mmt, oracle, Event, EventKind, EventSource, Format, Interner, PageKey,
    ProcessInfo, Tables, Trace,
};

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

/// Each case's bad line, made into the content of file `name` by `content` (which puts
/// it on line 3), fails to read with an error naming the file, line 3 and the case's
/// expectation.
fn assert_bad_line_3(name: &str, content: impl Fn(&str) -> String, cases: &[(&str, &str)]) {
    let dir = tempfile::tempdir().unwrap();
    for (bad, expected) in cases {
        let path = put(&dir, name, content(bad));
        assert_mentions(&read_error(&path), &[name, "line 3", expected]);
    }
}

/// The header line of the CSV format.
const HEADER: &str = "time_ns,pid,event,page_kind,owner,index,op,value\n";

/// The kinds of a trace's events, in order.
fn kinds(t: &Trace) -> Vec<EventKind> {
    t.events.iter().map(|e| e.kind()).collect()
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

    /// The checked-in files pin the byte layout: if this fails, the format changed and
    /// its version must change with it. `small.mmt` is version 1 (still read),
    /// `small-v2.mmt` what the writer makes now.
    #[test]
    fn golden_file() {
        let golden = data("small-v2.mmt");
        assert_eq!(trace::read_all(&golden, None).unwrap(), small_trace());
        let dir = tempfile::tempdir().unwrap();
        let (bytes, _) = small_mmt(&dir);
        assert_eq!(bytes, fs::read(&golden).unwrap());
    }

    /// Version 1 and 2 differ only in the version field and in each record's word:
    /// 28-bit process id and kind at bit 28 become a 27-bit process id and kind at bit 27.
    #[test]
    fn version_1_files_are_read_as_version_2() {
        let v1 = fs::read(data("small.mmt")).unwrap();
        let v2 = fs::read(data("small-v2.mmt")).unwrap();
        assert_eq!(
            trace::read_all(&data("small.mmt"), None).unwrap(),
            small_trace()
        );
        assert_eq!(v1.len(), v2.len());
        assert_eq!(u32::from_le_bytes(v1[8..12].try_into().unwrap()), 1);
        assert_eq!(u32::from_le_bytes(v2[8..12].try_into().unwrap()), 2);
        let records = small_trace().events.len();
        for i in 0..records {
            let at = 64 + 16 * i;
            assert_eq!(v1[at..at + 8], v2[at..at + 8], "time of record {i}");
            assert_eq!(
                v1[at + 12..at + 16],
                v2[at + 12..at + 16],
                "arg of record {i}"
            );
            let w1 = u32::from_le_bytes(v1[at + 8..at + 12].try_into().unwrap());
            let w2 = u32::from_le_bytes(v2[at + 8..at + 12].try_into().unwrap());
            let converted = (w1 & ((1 << 28) - 1)) | (((w1 >> 28) & 3) << 27) | (w1 & (3 << 30));
            assert_eq!(w2, converted, "word of record {i}");
        }
        assert_eq!(v1[64 + 16 * records..], v2[64 + 16 * records..], "tables");
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
                version: 1,
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
                patched(8, &3u32.to_le_bytes()),
                &["byte offset 8", "version 3"],
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
        const IMPORTANCE: u32 = 1 << 27;
        const START: u32 = 2 << 27;
        const SWAP_IN: u32 = 5 << 27;
        let cases: [(usize, Option<u32>, Option<u32>, &str); 9] = [
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
                "argument 3 on a start, exit or input event",
            ),
            (0, Some(7 << 27), Some(0), "event kind 7, expected 0..=6"),
            (0, Some(SWAP_IN), Some(6), "page id 6 out of range"),
            (
                0,
                Some(SWAP_IN | 1 << 30),
                Some(1),
                "write flag set on a swap event",
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

mod csv_format {
    use super::*;

    #[test]
    fn reads_the_small_trace() {
        assert_eq!(
            trace::read_all(&data("small.csv"), None).unwrap(),
            small_trace()
        );
    }

    #[test]
    fn csv_trace_csv_is_the_identity() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("copy.csv");
        let trace = trace::read_all(&data("small.csv"), None).unwrap();
        csv::write(&path, &trace).unwrap();
        assert_eq!(
            fs::read_to_string(&path).unwrap(),
            fs::read_to_string(data("small.csv")).unwrap()
        );
    }

    #[test]
    fn mmt_csv_mmt_is_the_identity() {
        let dir = tempfile::tempdir().unwrap();
        let from_mmt = trace::read_all(&data("small-v2.mmt"), None).unwrap();
        let csv_path = dir.path().join("small.csv");
        csv::write(&csv_path, &from_mmt).unwrap();
        let mmt_path = dir.path().join("again.mmt");
        mmt::write(&mmt_path, &trace::read_all(&csv_path, None).unwrap()).unwrap();
        assert_eq!(
            fs::read(mmt_path).unwrap(),
            fs::read(data("small-v2.mmt")).unwrap()
        );
    }

    #[test]
    fn comments_blank_lines_and_spelling_variants() {
        let trace = trace::read_all(&data("annotated.csv"), None).unwrap();
        let expected = vec![
            Event::start(0, 0),
            Event::importance(1, 0, 0),
            Event::access(2, 0, 0, false, false),
            Event::access(3, 0, 1, true, true),
            Event::importance(4, 0, -1000),
            // The kernel maps oom_adj 15 to 1000, not 15 * 1000 / 17.
            Event::importance(5, 0, 1000),
            Event::importance(6, 0, 352),
            Event::importance(7, 0, 900),
            Event::importance(8, 0, 900),
            Event::importance(9, 0, 999),
            Event::importance(10, 0, -800),
            Event::access(11, 0, 0, true, false),
            Event::exit(12, 0),
        ];
        assert_eq!(trace.events, expected);
        assert_eq!(
            trace.tables,
            Tables {
                pages: vec![PageKey::file(1, 2), PageKey::anon(7, 3)],
                processes: vec![ProcessInfo {
                    pid: 7,
                    name: "launcher".into()
                }],
            }
        );
    }

    #[test]
    fn legacy_oom_adj() {
        assert_eq!(csv::score_adj_from_oom_adj(-17), Some(-1000));
        assert_eq!(csv::score_adj_from_oom_adj(-16), Some(-941));
        assert_eq!(csv::score_adj_from_oom_adj(0), Some(0));
        assert_eq!(csv::score_adj_from_oom_adj(1), Some(58));
        assert_eq!(csv::score_adj_from_oom_adj(14), Some(823));
        assert_eq!(csv::score_adj_from_oom_adj(15), Some(1000));
        assert_eq!(csv::score_adj_from_oom_adj(16), None);
        assert_eq!(csv::score_adj_from_oom_adj(-18), None);
    }

    /// A file whose line 3 is `bad`, after the header and one good line.
    fn with_bad_line(bad: &str) -> String {
        format!("{HEADER}0,1,start,,,,,app\n{bad}\n")
    }

    #[test]
    fn malformed_lines_name_the_line_and_the_expectation() {
        let cases = [
            (
                "-5,1,exit,,,,,",
                "`time_ns` is `-5`, expected a non-negative integer",
            ),
            ("1.5,1,exit,,,,,", "`time_ns` is `1.5`"),
            (",1,exit,,,,,", "`time_ns` is ``"),
            ("1,-1,exit,,,,,", "`pid` is `-1`"),
            ("1,4294967296,exit,,,,,", "`pid` is `4294967296`"),
            (
                "1,1,jump,,,,,",
                "`event` is `jump`, expected access, importance, start, exit, swap_out, swap_in or input",
            ),
            (
                "1,1,access,heap,1,2,R,",
                "`page_kind` is `heap`, expected file or anon",
            ),
            ("1,1,access,file,x,2,R,", "`owner` is `x`"),
            ("1,1,access,file,1,,R,", "`index` is ``"),
            ("1,1,access,file,1,2,X,", "`op` is `X`, expected R or W"),
            (
                "1,1,access,file,1,2,R,900",
                "`value` must be empty on access events",
            ),
            (
                "1,1,importance,,,,,1001",
                "`value` is `1001`, expected an oom_score_adj",
            ),
            ("1,1,importance,,,,,-1001", "`value` is `-1001`"),
            ("1,1,importance,,,,,oom_adj=16", "`value` is `oom_adj=16`"),
            ("1,1,importance,,,,,sleepy", "`value` is `sleepy`"),
            ("1,1,importance,,,,,", "`value` is ``"),
            (
                "1,1,importance,file,,,,0",
                "`page_kind` must be empty on importance events",
            ),
            ("1,1,exit,,,,,now", "`value` must be empty on exit events"),
            ("1,1,start,,,,R,app", "`op` must be empty on start events"),
            ("1,1,exit", "expected 8 fields"),
            ("1,1,exit,,,,,,", "expected 8 fields"),
        ];
        assert_bad_line_3("bad.csv", with_bad_line, &cases);
    }

    #[test]
    fn process_names_must_be_utf8() {
        let dir = tempfile::tempdir().unwrap();
        let mut content = format!("{HEADER}0,1,start,,,,,app\n").into_bytes();
        content.extend_from_slice(b"1,2,start,,,,,b\xFFd\n");
        let path = put(&dir, "bad.csv", content);
        assert_mentions(&read_error(&path), &["line 3", "not valid UTF-8"]);
    }

    #[test]
    fn line_numbers_count_comments_and_blank_lines() {
        let dir = tempfile::tempdir().unwrap();
        let path = put(
            &dir,
            "bad.csv",
            format!("# comment\n{HEADER}# another\n\n0,1,exit,,,,,\n\n1,1,access,file,1,2,X,\n"),
        );
        assert_mentions(&read_error(&path), &["line 7", "`op` is `X`"]);
    }

    #[test]
    fn bad_or_missing_header() {
        let dir = tempfile::tempdir().unwrap();
        let path = put(&dir, "bad.csv", "");
        assert_mentions(
            &read_error(&path),
            &["bad.csv", "byte offset 0", "empty file: it holds no events"],
        );
        let path = put(&dir, "bad.csv", "# only a comment\n");
        assert_mentions(&read_error(&path), &["line 1", "holds no events"]);
        let path = put(&dir, "bad.csv", "time,pid,event\n0,1,exit\n");
        assert_mentions(
            &read_error(&path),
            &[
                "line 1",
                "expected the header line `time_ns,pid,event,page_kind,owner,index,op,value`",
                "a CSV of another layout: give --columns SPEC",
            ],
        );
        let path = put(
            &dir,
            "bad.csv",
            format!("# note\n\n{}", HEADER.replace("op", "rw")),
        );
        assert_mentions(&read_error(&path), &["line 3", "expected the header line"]);
        // A byte order mark, before the header or before a comment.
        for content in [
            format!("\u{FEFF}{HEADER}0,1,exit,,,,,\n"),
            format!("\u{FEFF}# note\n{HEADER}0,1,exit,,,,,\n"),
        ] {
            let path = put(&dir, "bom.csv", content);
            assert_eq!(
                trace::read_all(&path, None).unwrap().events,
                [Event::exit(0, 0)]
            );
        }
    }

    #[test]
    fn quoted_fields_and_line_breaks() {
        let dir = tempfile::tempdir().unwrap();
        let content = format!(
            "{HEADER}0,1,start,,,,,\"say \"\"hi\"\", twice\"\r\n1,2,start,,,,,\"two\r\nlines\"\n\"2\",1,exit,,,,,\n"
        )
        .replace(HEADER, &HEADER.replace('\n', "\r\n"));
        let path = put(&dir, "quoted.csv", content);
        let trace = trace::read_all(&path, None).unwrap();
        let names: Vec<_> = trace
            .tables
            .processes
            .iter()
            .map(|p| p.name.as_str())
            .collect();
        assert_eq!(names, ["say \"hi\", twice", "two\r\nlines"]);
        assert_eq!(trace.events[2], Event::exit(2, 0));
        // Line numbers go on counting inside a quoted field that spans lines.
        let content = format!("{HEADER}0,1,start,,,,,\"a\nb\nc\"\n1,1,exit,,,,,x\n");
        let path = put(&dir, "quoted.csv", content);
        assert_mentions(&read_error(&path), &["line 5", "`value` must be empty"]);
    }

    #[test]
    fn bad_quotes() {
        let dir = tempfile::tempdir().unwrap();
        let path = put(&dir, "bad.csv", format!("{HEADER}0,1,start,,,,,\"app\"x\n"));
        assert_mentions(
            &read_error(&path),
            &["line 2", "a closing quote must end its field"],
        );
        let path = put(
            &dir,
            "bad.csv",
            format!("{HEADER}\n0,1,start,,,,,\"app\n\n"),
        );
        assert_mentions(
            &read_error(&path),
            &["line 3", "quoted field is not closed"],
        );
    }

    #[test]
    fn records_longer_than_the_limit() {
        let dir = tempfile::tempdir().unwrap();
        let limit = csv::MAX_RECORD_BYTES as usize;
        // A line of the limit's length, line break included, is read whole.
        let name = "n".repeat(limit - "0,1,start,,,,,\n".len());
        let path = put(&dir, "long.csv", format!("{HEADER}0,1,start,,,,,{name}\n"));
        let trace = trace::read_all(&path, None).unwrap();
        assert_eq!(trace.tables.processes[0].name, name);
        // A line one byte longer, and a quote left open over many short lines.
        let (long, open) = ("x".repeat(limit), format!("\"{}", "x\n".repeat(limit)));
        let expected = "longer than 1048576 bytes";
        assert_bad_line_3(
            "bad.csv",
            with_bad_line,
            &[(&long, expected), (&open, expected)],
        );
    }

    /// The example in `docs/trace-formats.md` is a valid trace.
    #[test]
    fn documented_example() {
        let doc = fs::read_to_string(
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/trace-formats.md"),
        )
        .unwrap();
        let example = doc
            .split("```csv\n")
            .nth(1)
            .and_then(|rest| rest.split("```").next())
            .expect("a ```csv block");
        let dir = tempfile::tempdir().unwrap();
        let trace = trace::read_all(&put(&dir, "example.csv", example), None).unwrap();
        assert_eq!(trace.events.len(), 9);
        assert_eq!(trace.tables.processes.len(), 2);
        assert_eq!(trace.events[6], Event::importance(35, 0, 900));
    }

    #[test]
    fn writer_refuses_ids_outside_the_tables() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("bad.csv");
        let mut trace = small_trace();
        trace.tables.processes.truncate(3);
        let message = csv::write(&path, &trace).unwrap_err().to_string();
        assert_mentions(&message, &["bad.csv", "event 14", "process id 3"]);
        assert!(!path.exists());
        assert!(!dir.path().join("bad.csv.partial").exists());
    }
}

mod lis_format {
    use super::*;

    #[test]
    fn lines_expand_to_consecutive_block_reads() {
        let trace = trace::read_all(&data("small.lis"), None).unwrap();
        // Line 2 is blank and line 4 asks for no blocks; time is the 0-based line index.
        let expected = [(0, 0), (0, 1), (0, 2), (2, 2), (2, 3), (4, 4)]
            .map(|(time, page)| Event::access(time, 0, page, false, false));
        assert_eq!(trace.events, expected);
        assert_eq!(
            trace.tables.pages,
            [10, 11, 12, 13, 100].map(|block| PageKey::file(0, block))
        );
        assert_eq!(
            trace.tables.processes,
            [ProcessInfo {
                pid: 0,
                name: String::new()
            }]
        );
    }

    #[test]
    fn a_line_may_span_batches() {
        let path = data("small.lis");
        let mut source = lis::Reader::new(&path, Box::new(fs::File::open(&path).unwrap()));
        let mut sizes = Vec::new();
        let mut batch = Vec::new();
        while source.read_batch(&mut batch, 2).unwrap() {
            sizes.push(batch.len());
        }
        assert_eq!(sizes, [2, 2, 2]);
    }

    #[test]
    fn malformed_lines() {
        let cases = [
            (
                "x 1 0 0",
                "expected `start_block block_count ignored request_id`",
            ),
            ("5", "expected `start_block block_count"),
            ("5 -1 0 0", "integer start_block and block_count"),
            ("18446744073709551615 2 0 0", "overflows"),
        ];
        let content = |bad: &str| format!("1 1 0 0\n\n{bad}\n4 1 0 0\n");
        assert_bad_line_3("bad.lis", content, &cases);
    }
}

mod oracle_format {
    use super::*;

    fn record(timestamp: u32, obj_id: u64, obj_size: u32, next: i64) -> Vec<u8> {
        let mut bytes = Vec::new();
        bytes.extend_from_slice(&timestamp.to_le_bytes());
        bytes.extend_from_slice(&obj_id.to_le_bytes());
        bytes.extend_from_slice(&obj_size.to_le_bytes());
        bytes.extend_from_slice(&next.to_le_bytes());
        bytes
    }

    fn three_records() -> Vec<u8> {
        [
            record(0, 77, 4096, 2),
            record(1, 5, 512, -1),
            record(3, 77, 1 << 20, i64::MAX),
        ]
        .concat()
    }

    #[test]
    fn one_read_per_record() {
        let dir = tempfile::tempdir().unwrap();
        let path = put(&dir, "tiny.oracleGeneral.bin", three_records());
        let trace = trace::read_all(&path, None).unwrap();
        let expected = [(0, 0), (1_000_000_000, 1), (3_000_000_000, 0)]
            .map(|(time, page)| Event::access(time, 0, page, false, false));
        assert_eq!(trace.events, expected);
        assert_eq!(
            trace.tables.pages,
            [PageKey::file(0, 77), PageKey::file(0, 5)]
        );
        assert_eq!(trace.tables.processes.len(), 1);
    }

    #[test]
    fn a_trailing_partial_record_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let mut bytes = three_records();
        bytes.extend_from_slice(&[1, 2, 3, 4, 5]);
        let path = put(&dir, "cut.oracleGeneral.bin", bytes);
        assert_mentions(
            &read_error(&path),
            &[
                "cut.oracleGeneral.bin",
                "record 3 (byte offset 72)",
                "5 bytes into it",
            ],
        );
        // The same where the partial record falls in a later batch.
        let mut source = oracle::Reader::new(&path, Box::new(fs::File::open(&path).unwrap()));
        let mut batch = Vec::new();
        assert!(source.read_batch(&mut batch, 2).unwrap());
        let message = source.read_batch(&mut batch, 2).unwrap_err().to_string();
        assert_mentions(&message, &["record 3 (byte offset 72)"]);
    }

    #[test]
    fn empty_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = put(&dir, "empty.oracleGeneral.bin", []);
        assert_mentions(
            &trace::read_all(&path, None).unwrap_err().to_string(),
            &[
                "empty.oracleGeneral.bin",
                "byte offset 0",
                "holds no events",
            ],
        );
    }
}

mod compressed {
    use super::*;

    #[test]
    fn zstd_is_detected_by_magic_for_every_format() {
        let dir = tempfile::tempdir().unwrap();
        for (name, original) in [
            ("small.mmt", data("small.mmt")),
            ("small.csv", data("small.csv")),
        ] {
            let compressed = zstd::encode_all(fs::read(&original).unwrap().as_slice(), 3).unwrap();
            // Named `.zst`, and also not: detection goes by content.
            for target in [format!("{name}.zst"), name.to_string()] {
                let path = put(&dir, &target, &compressed);
                assert_eq!(
                    trace::read_all(&path, None).unwrap(),
                    small_trace(),
                    "{target}"
                );
            }
        }
        let lis = zstd::encode_all(fs::read(data("small.lis")).unwrap().as_slice(), 3).unwrap();
        let path = put(&dir, "small.lis.zst", lis);
        assert_eq!(
            trace::read_all(&path, None).unwrap(),
            trace::read_all(&data("small.lis"), None).unwrap()
        );
    }

    #[test]
    fn truncated_zstd_mmt_names_the_record() {
        let dir = tempfile::tempdir().unwrap();
        let bytes = fs::read(data("small.mmt")).unwrap();
        let compressed = zstd::encode_all(&bytes[..64 + 16 * 4 + 3], 3).unwrap();
        let path = put(&dir, "cut.mmt.zst", compressed);
        assert_mentions(
            &read_error(&path),
            &["cut.mmt.zst", "record 4 (byte offset 128)"],
        );
    }

    #[test]
    fn format_override() {
        let dir = tempfile::tempdir().unwrap();
        let path = put(&dir, "no-extension", fs::read(data("small.csv")).unwrap());
        assert!(trace::open(&path, None).is_err());
        assert_eq!(
            trace::read_all(&path, Some(Format::Csv)).unwrap(),
            small_trace()
        );
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
                    0u8..5,
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
                                3 => Event::exit(time, proc),
                                _ => Event::input(time, proc),
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

    /// One event before interning; traces built from these have ids in order of first
    /// appearance, as every reader and generator makes them.
    #[derive(Debug, Clone)]
    enum Step {
        Start(u32, String),
        Access(u32, PageKey, bool),
        Importance(u32, i16),
        Exit(u32),
        Swap(u32, u64, bool),
        Input(u32),
    }

    fn step() -> impl Strategy<Value = Step> {
        let pid = 0u32..6;
        prop_oneof![
            (pid.clone(), "[ -~é\n,\"]{0,10}").prop_map(|(pid, name)| Step::Start(pid, name)),
            (pid.clone(), page_key(), any::<bool>())
                .prop_map(|(pid, key, write)| Step::Access(pid, key, write)),
            (pid.clone(), -1000i16..=1000).prop_map(|(pid, adj)| Step::Importance(pid, adj)),
            pid.clone().prop_map(Step::Exit),
            pid.clone().prop_map(Step::Input),
            (pid, 0u64..8, any::<bool>()).prop_map(|(pid, vpn, out)| Step::Swap(pid, vpn, out)),
        ]
    }

    fn interned(steps: &[Step]) -> Trace {
        let mut interner = Interner::new();
        let events = steps
            .iter()
            .enumerate()
            .map(|(i, step)| {
                let time = i as u64 * 10;
                match step {
                    Step::Start(pid, name) => {
                        Event::start(time, interner.start_process(*pid, name).unwrap())
                    }
                    Step::Access(pid, key, write) => {
                        let proc = interner.process(*pid).unwrap();
                        let page = interner.page(*key).unwrap();
                        Event::access(time, proc, page, *write, key.kind == trace::PageKind::Anon)
                    }
                    Step::Importance(pid, adj) => {
                        Event::importance(time, interner.process(*pid).unwrap(), *adj)
                    }
                    Step::Exit(pid) => Event::exit(time, interner.process(*pid).unwrap()),
                    Step::Input(pid) => Event::input(time, interner.process(*pid).unwrap()),
                    Step::Swap(pid, vpn, out) => {
                        let proc = interner.process(*pid).unwrap();
                        let page = interner.page(PageKey::anon(u64::from(*pid), *vpn)).unwrap();
                        if *out {
                            Event::swap_out(time, proc, page)
                        } else {
                            Event::swap_in(time, proc, page)
                        }
                    }
                }
            })
            .collect();
        Trace {
            events,
            tables: interner.into_tables(),
        }
    }

    proptest! {
        #[test]
        fn mmt_round_trip(trace in any_trace(), batch in 1usize..50) {
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join("any.mmt");
            mmt::write(&path, &trace).unwrap();
            let mut source = trace::open(&path, None).unwrap();
            // The records name no more pages than there are records.
            let hint = trace.tables.pages.len().min(trace.events.len()) as u64;
            prop_assert_eq!(source.page_count_hint(), Some(hint));
            let mut events = Vec::new();
            let mut buf = Vec::new();
            while source.read_batch(&mut buf, batch).unwrap() {
                events.extend_from_slice(&buf);
            }
            prop_assert_eq!(&events, &trace.events);
            prop_assert_eq!(source.tables().unwrap(), trace.tables);
        }

        #[test]
        fn csv_round_trip(steps in vec(step(), 0..120)) {
            let trace = interned(&steps);
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join("any.csv");
            csv::write(&path, &trace).unwrap();
            prop_assert_eq!(trace::read_all(&path, None).unwrap(), trace);
        }
    }
}

#[test]
fn swap_events_in_csv() {
    let dir = tempfile::tempdir().unwrap();
    let lines = "0,7,swap_out,anon,7,4096,,\n5,7,swap_in,anon,7,4096,,\n";
    let t = trace::read_all(&put(&dir, "swap.csv", format!("{HEADER}{lines}")), None).unwrap();
    assert_eq!(kinds(&t), [EventKind::SwapOut, EventKind::SwapIn]);
    assert_eq!(t.events[0].page(), t.events[1].page());
    assert_eq!(t.tables.pages, [PageKey::anon(7, 4096)]);
    let bad = put(
        &dir,
        "bad-swap.csv",
        format!("{HEADER}0,7,swap_out,file,7,1,,\n"),
    );
    assert_mentions(&read_error(&bad), &["bad-swap.csv", "line 2", "anon"]);
}

mod in_memory {
    use super::*;

    /// A file's content read from memory gives the same trace as the file, compressed or
    /// not, and errors still name the file.
    #[test]
    fn data_reads_like_the_file() {
        let dir = tempfile::tempdir().unwrap();
        for name in ["small.mmt", "small.csv"] {
            let path = dir.path().join(name);
            trace::write(&path, &small_trace()).unwrap();
            let bytes = fs::read(&path).unwrap();
            let from_file = trace::read_all(&path, None).unwrap();
            let plain = trace::read_all_data(Path::new(name), bytes.clone(), None).unwrap();
            assert_eq!(plain, from_file, "{name}");
            let compressed = zstd::encode_all(bytes.as_slice(), 3).unwrap();
            let zst = format!("{name}.zst");
            let unpacked = trace::read_all_data(Path::new(&zst), compressed, None).unwrap();
            assert_eq!(unpacked, from_file, "{zst}");
        }
        let err = trace::read_all_data(Path::new("remote/bad.mmt"), b"nope".to_vec(), None)
            .unwrap_err()
            .to_string();
        assert!(err.starts_with("remote/bad.mmt: "), "{err}");
    }

    #[test]
    fn writing_picks_the_format_by_name() {
        let dir = tempfile::tempdir().unwrap();
        let err = trace::write(&dir.path().join("t.txt"), &small_trace())
            .unwrap_err()
            .to_string();
        assert!(
            err.ends_with("t.txt: output must end in .mmt or .csv"),
            "{err}"
        );
    }
}

#[test]
fn input_events_in_csv() {
    let dir = tempfile::tempdir().unwrap();
    let lines = "0,7,start,,,,,gallery\n5,7,input,,,,,\n9,8,INPUT,,,,,\n";
    let t = trace::read_all(&put(&dir, "input.csv", format!("{HEADER}{lines}")), None).unwrap();
    use EventKind::{Input, Start};
    assert_eq!(kinds(&t), [Start, Input, Input]);
    assert_eq!(t.events[1].proc(), t.events[0].proc());
    assert_ne!(t.events[2].proc(), t.events[0].proc());
    assert_eq!(trace::summary::summarize(&t).inputs, 2);
    let bad = put(&dir, "bad-input.csv", format!("{HEADER}0,7,input,,,,,x\n"));
    assert_mentions(
        &read_error(&bad),
        &["bad-input.csv", "line 2", "value", "empty"],
    );
}
