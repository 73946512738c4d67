//! Small hostile inputs must not take the machine: header counts size nothing before the
//! data is read, lines and their expansion are bounded, every format reports an empty
//! input alike, and the errors name the file and the position. Each test writes its
//! inputs into a temporary folder; a memory bound is checked by the run failing at once.

use crate::common;
use common::assert_mentions;

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use mobmem::mm::placement::sim::{run_source, run_trace, RunSetup};
use mobmem::mm::placement::{find_policy, Capacity};
use mobmem::trace::ftrace::{import_file, FtraceImporter, ImportOptions};
use mobmem::trace::{self, csv, lis, mmt, EXPANSION_ALLOWANCE, EXPANSION_PER_BYTE, MAX_LINE_BYTES};

/// A `.mmt` file: `records` as (time, word, arg), `pages` as (kind, owner, index),
/// `processes` as (pid, name); `claim` overrides the header's counts (records, pages,
/// processes) when given.
fn mmt_bytes(
    records: &[(u64, u32, u32)],
    pages: &[(u8, u64, u64)],
    processes: &[(u32, &str)],
    claim: Option<(u64, u64, u64)>,
) -> Vec<u8> {
    let (record_count, page_count, process_count) = claim.unwrap_or((
        records.len() as u64,
        pages.len() as u64,
        processes.len() as u64,
    ));
    let mut out = Vec::new();
    out.extend_from_slice(b"MOBMEMTR");
    out.extend_from_slice(&2u32.to_le_bytes());
    out.extend_from_slice(&16u32.to_le_bytes());
    for value in [
        record_count,
        page_count,
        process_count,
        64 + 16 * record_count,
    ] {
        out.extend_from_slice(&value.to_le_bytes());
    }
    out.resize(64, 0);
    for &(time, word, arg) in records {
        out.extend_from_slice(&time.to_le_bytes());
        out.extend_from_slice(&word.to_le_bytes());
        out.extend_from_slice(&arg.to_le_bytes());
    }
    for &(kind, owner, index) in pages {
        out.push(kind);
        out.extend_from_slice(&[0; 7]);
        out.extend_from_slice(&owner.to_le_bytes());
        out.extend_from_slice(&index.to_le_bytes());
    }
    for &(pid, name) in processes {
        out.extend_from_slice(&pid.to_le_bytes());
        out.extend_from_slice(&(name.len() as u32).to_le_bytes());
        out.extend_from_slice(name.as_bytes());
    }
    out
}

fn write(dir: &Path, name: &str, bytes: &[u8]) -> PathBuf {
    let path = dir.join(name);
    fs::write(&path, bytes).unwrap();
    path
}

fn zstd(bytes: &[u8]) -> Vec<u8> {
    zstd::encode_all(bytes, 3).unwrap()
}

fn setup(policy: &str, capacity: usize) -> RunSetup {
    RunSetup::new(find_policy(policy).unwrap(), Capacity::single(capacity))
}

/// Run `policy` over the trace at `path`, streamed; the error as text.
fn sim(path: &Path, policy: &str) -> Result<u64, String> {
    let mut source = trace::open(path, None).map_err(|e| e.to_string())?;
    run_source(source.as_mut(), &setup(policy, 100), &mut |_| {})
        .map(|m| m.accesses)
        .map_err(|e| e.to_string())
}

/// `f()` must fail within a few seconds (so it did not allocate or run for the claim);
/// returns its error.
fn fails_fast<T: std::fmt::Debug>(what: &str, f: impl FnOnce() -> Result<T, String>) -> String {
    let started = Instant::now();
    let result = f();
    let took = started.elapsed();
    let err = match result {
        Ok(v) => panic!("{what}: should fail, gave {v:?}"),
        Err(e) => e,
    };
    assert!(took < Duration::from_secs(5), "{what}: took {took:?}");
    err
}

#[test]
fn mmt_header_counts_size_nothing_before_the_data() {
    let dir = tempfile::tempdir().unwrap();
    for pages in [u64::from(u32::MAX), 1 << 28] {
        let bytes = mmt_bytes(&[], &[], &[], Some((0, pages, 0)));
        assert_eq!(bytes.len(), 64);
        let plain = write(dir.path(), "claim.mmt", &bytes);
        let packed = write(dir.path(), "claim.mmt.zst", &zstd(&bytes));
        // What a policy is sized by: the file holds no page table, the stream is unknown.
        assert_eq!(
            trace::open(&plain, None).unwrap().page_count_hint(),
            Some(0)
        );
        let hint = trace::open(&packed, None)
            .unwrap()
            .page_count_hint()
            .unwrap();
        assert!(hint <= mmt::HINT_WITHOUT_LENGTH, "{hint}");
        for path in [&plain, &packed] {
            for policy in ["lru", "clock", "arc", "2q", "fifo"] {
                let err = fails_fast(policy, || sim(path, policy));
                assert!(
                    err.contains("byte offset 64: truncated page table"),
                    "{policy}: {err}"
                );
            }
            let err = fails_fast("read_all", || {
                trace::read_all(path, None).map_err(|e| e.to_string())
            });
            assert_mentions(&err, &["truncated page table"]);
        }
    }
    // A claim of many records and processes allocates nothing either.
    let bytes = mmt_bytes(&[], &[], &[], Some((1 << 40, 0, 1 << 27)));
    let path = write(dir.path(), "records.mmt", &bytes);
    let err = fails_fast("records", || sim(&path, "lru"));
    assert_mentions(&err, &["record 0 (byte offset 64): truncated"]);
}

#[test]
fn record_ids_are_bounded_by_what_the_file_can_hold() {
    let dir = tempfile::tempdir().unwrap();
    // One record naming the last page id the header allows (per-page state for 2^32 pages),
    // or the last process id.
    let far_page = mmt_bytes(
        &[(0, 0, u32::MAX - 1)],
        &[],
        &[],
        Some((1, u64::from(u32::MAX), 1)),
    );
    // A start event of the last process id, with no page table to hold.
    let far_process = mmt_bytes(
        &[(0, 2 << 27 | ((1 << 27) - 1), 0)],
        &[],
        &[],
        Some((1, 0, 1 << 27)),
    );
    let cases = [
        // Plain, the file's length shows the page table missing before any record is used.
        ("page.mmt", far_page.clone(), "byte offset 80: truncated page table: the file ends in entry 0 of 4294967295"),
        ("page.mmt.zst", zstd(&far_page), "record 0 (byte offset 64): page id 4294967294 out of range: the input has room for only "),
        ("process.mmt", far_process.clone(), "record 0 (byte offset 64): process id 134217727 out of range: the input has room for only 0 of the 134217728 processes"),
        ("process.mmt.zst", zstd(&far_process), "record 0 (byte offset 64): process id 134217727 out of range: the input has room for only "),
    ];
    for (name, bytes, expected) in cases {
        let path = write(dir.path(), name, &bytes);
        for policy in ["lru", "clock"] {
            let err = fails_fast(name, || sim(&path, policy));
            assert!(
                err.starts_with(&format!("{}: {expected}", path.display())),
                "{err}"
            );
        }
    }
    // A file too short for the records its header announces is reported where it ends,
    // before any record is used.
    let bytes = mmt_bytes(
        &[(0, 0, u32::MAX - 1)],
        &[],
        &[],
        Some((1000, u64::from(u32::MAX), 1)),
    );
    let path = write(dir.path(), "short.mmt", &bytes);
    let err = fails_fast("short", || sim(&path, "lru"));
    assert_mentions(&err, &["short.mmt: record 1 (byte offset 80): truncated: the file ends 0 bytes into this record, but the header announces 1000 records"]);
}

/// A small valid trace: one process, three accesses to two pages.
fn small_mmt() -> Vec<u8> {
    mmt_bytes(
        &[(0, 2 << 27, 0), (1, 0, 0), (2, 0, 1), (3, 0, 0)],
        &[(0, 7, 0), (0, 7, 1)],
        &[(42, "app")],
        None,
    )
}

#[test]
fn a_streamed_run_checks_the_tables_before_its_result() {
    let dir = tempfile::tempdir().unwrap();
    let whole = small_mmt();
    let path = write(dir.path(), "whole.mmt", &whole);
    assert_eq!(sim(&path, "lru"), Ok(3));
    assert_eq!(sim(&path, "clock"), Ok(3));
    // Cut in the process table, in the page table, or followed by stray bytes (the plain
    // file cut in its page table is found short before its records are used).
    let end = whole.len();
    let cases: [(&[u8], String, String); 3] = [
        (
            &whole[..end - 1],
            format!("byte offset {}: truncated process table", end - 1),
            format!("byte offset {}: truncated process table", end - 1),
        ),
        (
            &whole[..end - 12],
            "truncated page table: the file ends in entry 1 of 2".to_string(),
            "truncated page table: the file ends in entry 1 of 2".to_string(),
        ),
        (
            &[whole.as_slice(), b"x"].concat(),
            format!("byte offset {end}: unexpected data after the process table"),
            format!("byte offset {end}: unexpected data after the process table"),
        ),
    ];
    for (bytes, plain, packed) in cases {
        let path = write(dir.path(), "bad.mmt", bytes);
        for policy in ["lru", "clock", "2q"] {
            let err = sim(&path, policy).unwrap_err();
            assert!(err.starts_with(&path.display().to_string()), "{err}");
            assert!(err.contains(&plain), "{policy}: {err}");
        }
        let path = write(dir.path(), "bad.mmt.zst", &zstd(bytes));
        let err = sim(&path, "lru").unwrap_err();
        assert!(err.contains(&packed), "{err}");
    }
}

#[test]
fn lis_block_counts_are_bounded() {
    let dir = tempfile::tempdir().unwrap();
    // 27 bytes asking for 2^64 - 1 blocks.
    let path = write(dir.path(), "huge.lis", b"0 18446744073709551615 0 0\n");
    let summarize = |path: &Path| {
        let mut source = trace::open(path, None).map_err(|e| e.to_string())?;
        trace::summary::summarize_source(source.as_mut())
            .map(|s| s.accesses)
            .map_err(|e| e.to_string())
    };
    let err = fails_fast("info", || summarize(&path));
    assert!(
        err.contains(
            "huge.lis: line 1: block_count 18446744073709551615, expected at most 1048576"
        ),
        "{err}"
    );
    let err = fails_fast("convert", || {
        trace::read_all(&path, None).map_err(|e| e.to_string())
    });
    assert_mentions(&err, &["line 1: block_count"]);

    // The most a line may ask for is taken.
    let most = format!("5 {} 0 0\n", lis::MAX_BLOCKS_PER_LINE);
    let path = write(dir.path(), "most.lis", most.as_bytes());
    assert_eq!(summarize(&path), Ok(lis::MAX_BLOCKS_PER_LINE));

    // Lines within the bound, but too many requests for the file's size.
    let line = format!("0 {} 0 0\n", lis::MAX_BLOCKS_PER_LINE);
    let path = write(dir.path(), "many.lis", line.repeat(4).as_bytes());
    let err = fails_fast("many", || summarize(&path));
    let bound = EXPANSION_ALLOWANCE + EXPANSION_PER_BYTE * 2 * line.len() as u64;
    assert_mentions(
        &err,
        &[&format!(
            "many.lis: line 2: block_count 1048576 takes the file past {bound} requests"
        )],
    );
}

#[test]
fn text_lines_are_bounded() {
    let dir = tempfile::tempdir().unwrap();
    let long = vec![b'1'; MAX_LINE_BYTES + 10];
    let path = write(
        dir.path(),
        "long.lis",
        &[b"1 1 0 0\n".as_slice(), &long].concat(),
    );
    let err = trace::read_all(&path, None).unwrap_err().to_string();
    assert_mentions(
        &err,
        &["long.lis: line 2: a line longer than 1048576 bytes"],
    );
    let path = write(dir.path(), "long.csv", &long);
    let err = trace::read_all(&path, None).unwrap_err().to_string();
    assert_mentions(&err, &["long.csv: line 1: a record longer"]);
    let path = write(dir.path(), "long.txt", &long);
    let err = import_file(&path, ImportOptions::default())
        .unwrap_err()
        .to_string();
    assert_mentions(
        &err,
        &["long.txt: line 1: a line longer than 1048576 bytes"],
    );
    // An endless line: /dev/zero reads as one.
    let zero = Path::new("/dev/zero");
    if zero.exists() {
        for format in [trace::Format::Lis, trace::Format::Csv] {
            let err = fails_fast(format.name(), || {
                trace::read_all(zero, Some(format)).map_err(|e| e.to_string())
            });
            assert_mentions(&err, &["/dev/zero: line 1: a "]);
        }
    }
    // A systrace page's long lines before the trace data are passed over.
    let page = [
        b"<!DOCTYPE html>\n<html>\n".as_slice(),
        &long,
        b"\n  python3-700 [001] ..... 10.000000: mm_filemap_fault: dev 254:0 ino a0 ofs=0\n",
    ]
    .concat();
    let path = write(dir.path(), "page.html", &page);
    let (t, report) = import_file(&path, ImportOptions::default()).unwrap();
    assert_eq!(t.accesses().count(), 1);
    assert_eq!(report.lines, 4);
}

#[test]
fn ftrace_page_ranges_are_bounded_in_total() {
    let dir = tempfile::tempdir().unwrap();
    // Order-19 folios (2^19 pages a line, the most one line may name), as in the kernel's
    // folio layout and in Perfetto's text.
    let folio = |i: usize| {
        format!(
            "  python3-700 [001] ..... 10.{i:06}: mm_filemap_add_to_page_cache: dev 254:0 ino a0 pfn=0x1000 ofs={} order=19\n",
            i << 31
        )
    };
    let perfetto = |i: usize| {
        format!(
            "  python3-700 ( 700) [001] .... 10.{i:06}: mm_filemap_map_pages: dev 254:0 ino a0 index={} last_index={}\n",
            i << 19,
            ((i + 1) << 19) - 1
        )
    };
    for (name, line, is_perfetto) in [
        ("folios.txt", &folio as &dyn Fn(usize) -> String, false),
        ("perfetto.txt", &perfetto, true),
    ] {
        let text: String = (0..400).map(line).collect();
        assert!(text.len() < 60_000);
        let path = write(dir.path(), name, text.as_bytes());
        for strict in [false, true] {
            let options = ImportOptions {
                strict,
                perfetto: is_perfetto,
                ..Default::default()
            };
            let err = fails_fast(name, || {
                import_file(&path, options).map_err(|e| e.to_string())
            });
            // Two lines fit in the allowance; the third passes it.
            assert_mentions(
                &err,
                &[
                    &format!("{name}: line 3: "),
                    "more pages take the import past",
                ],
            );
        }
    }
    // The read path's batches count the room they take.
    let mut importer = FtraceImporter::new(Path::new("reads.txt"), ImportOptions::default());
    let mut failed = None;
    for i in 0..400u64 {
        let line = format!(
            "  python3-700 [001] ..... 10.{i:06}: mm_filemap_get_pages: dev 254:0 ino a0 ofs={}-{}\n",
            i << 31,
            (i << 31) + (1 << 31) - 1
        );
        if let Err(e) = importer.push_line(&line) {
            failed = Some((i, e.to_string()));
            break;
        }
    }
    let (i, err) = failed.expect("the batches pass the bound");
    assert_eq!(i, 2, "{err}");
    assert_mentions(&err, &["reads.txt: line 3: mm_filemap_get_pages: "]);
}

#[test]
fn every_format_reports_an_empty_input_alike() {
    let dir = tempfile::tempdir().unwrap();
    for (name, what) in [
        ("empty.mmt", "a .mmt trace"),
        ("empty.csv", "a CSV trace"),
        ("empty.lis", "an ARC .lis trace"),
        (
            "empty.oracleGeneral.bin",
            "a libCacheSim oracleGeneral trace",
        ),
        ("empty.lis.zst", "an ARC .lis trace"),
    ] {
        let bytes = if name.ends_with(".zst") {
            zstd(b"")
        } else {
            Vec::new()
        };
        let path = write(dir.path(), name, &bytes);
        let expected = format!(
            "{}: byte offset 0: empty file: it holds no events (expected {what})",
            path.display()
        );
        let err = trace::read_all(&path, None).unwrap_err().to_string();
        assert_eq!(err, expected);
        assert_eq!(sim(&path, "lru").unwrap_err(), expected);
    }
    let null = Path::new("/dev/null");
    if null.exists() {
        for format in trace::Format::all() {
            let err = trace::read_all(null, Some(format)).unwrap_err().to_string();
            assert!(
                err.starts_with("/dev/null: byte offset 0: empty file: it holds no events"),
                "{err}"
            );
        }
    }
    // A .lis file of blank lines and empty requests holds no events either.
    let path = write(dir.path(), "blank.lis", b"\n7 0 0 0\n\n");
    let err = trace::read_all(&path, None).unwrap_err().to_string();
    assert_mentions(
        &err,
        &["blank.lis: line 3: no line asks for a block: the file holds no events"],
    );
}

#[test]
fn zstd_errors_say_where() {
    let dir = tempfile::tempdir().unwrap();
    let text: String = (0..20_000)
        .map(|i| format!("{} 8 0 {i}\n", i * 977))
        .collect();
    let packed = zstd(text.as_bytes());
    // A frame followed by bytes that are not one, and a frame cut short.
    let trailing = [packed.as_slice(), b"not a zstd frame"].concat();
    let cut = &packed[..packed.len() / 2];
    for (name, bytes) in [("trailing.lis.zst", &trailing[..]), ("cut.lis.zst", cut)] {
        let path = write(dir.path(), name, bytes);
        let err = trace::read_all(&path, None).unwrap_err().to_string();
        assert!(
            err.starts_with(&format!(
                "{}: zstd data unreadable by compressed byte offset ",
                path.display()
            )) && err.contains("(decompressed byte offset "),
            "{err}"
        );
        // The same from data in memory.
        let err = trace::read_all_data(&path, bytes.to_vec(), None)
            .unwrap_err()
            .to_string();
        assert_mentions(&err, &["zstd data unreadable by compressed byte offset"]);
    }
}

#[test]
fn an_mmt_inconsistency_blames_the_input() {
    let dir = tempfile::tempdir().unwrap();
    // An access flagged anonymous to a file page, then a swap-out of a file page.
    let cases = [
        (
            (1, 1 << 31, 0),
            "record 1 (byte offset 80): access with the anonymous flag set, but page 0 is a file page",
        ),
        (
            (1, 4 << 27 | 1 << 31, 0),
            "record 1 (byte offset 80): swap event of page 0, which is a file page",
        ),
    ];
    for (record, expected) in cases {
        let bytes = mmt_bytes(
            &[(0, 2 << 27, 0), record],
            &[(0, 7, 0)],
            &[(42, "app")],
            None,
        );
        let input = write(dir.path(), "in.mmt", &bytes);
        let err = trace::read_all(&input, None).unwrap_err().to_string();
        assert!(
            err.starts_with(&format!("{}: {expected}", input.display())),
            "{err}"
        );
    }
}

#[test]
fn an_unfinished_csv_is_recognised() {
    let dir = tempfile::tempdir().unwrap();
    let t = trace::read_all(&write(dir.path(), "t.mmt", &small_mmt()), None).unwrap();
    let out = dir.path().join("t.csv");
    csv::write(&out, &t).unwrap();
    let text = fs::read_to_string(&out).unwrap();
    // The finished file starts with the header, as before.
    assert!(text.starts_with(&format!("{}\n0,42,start", csv::COLUMNS.join(","))));
    assert!(!text.contains("UNFINISHED"));
    assert_eq!(trace::read_all(&out, None).unwrap(), t);
    // A file cut short keeps the mark the writer starts with.
    let partial = dir.path().join("t.csv.partial");
    let mut file = fs::File::create(&partial).unwrap();
    writeln!(file, "{}", csv::UNFINISHED_MARK).unwrap();
    writeln!(file, "0,42,start,,,,,app").unwrap();
    drop(file);
    let err = trace::read_all(&partial, Some(trace::Format::Csv))
        .unwrap_err()
        .to_string();
    assert_eq!(
        err,
        format!(
            "{}: line 1: incomplete trace: the writer did not finish (the file starts with its UNFINISHED mark)",
            partial.display()
        )
    );
}

#[test]
fn run_trace_still_runs_an_in_memory_trace() {
    let dir = tempfile::tempdir().unwrap();
    let t = trace::read_all(&write(dir.path(), "t.mmt", &small_mmt()), None).unwrap();
    assert_eq!(run_trace(&t, &setup("lru", 10)).unwrap().accesses, 3);
}

/// A few KiB of zstd data of repeated lines stands for a huge trace: the decompressed
/// stream is bounded by the compressed bytes (1 MiB plus 1024 a byte), and a `.lis`
/// file's requests by its bytes as stored, so neither a whole read nor a streamed run
/// grows with what the repetition claims.
#[test]
fn small_compressed_files_cannot_stand_for_huge_traces() {
    let dir = tempfile::tempdir().unwrap();
    // 40 MB of lines each asking for 600 blocks: 2.5 G requests from about 4 KB.
    let lis = zstd::encode_all(&b"0 600 0 0\n".repeat(4 << 20)[..], 19).unwrap();
    assert!(lis.len() < 64 << 10, "{} bytes", lis.len());
    let path = write(dir.path(), "bomb.lis.zst", &lis);
    let err = fails_fast("lis bomb, whole read", || {
        trace::read_all(&path, None).map_err(|e| e.to_string())
    });
    assert_mentions(&err, &["(as stored) may ask for"]);
    fails_fast("lis bomb, streamed", || sim(&path, "lru"));

    // 25 MB of one CSV access line: past the decompression bound at once.
    let mut text = b"time_ns,pid,event,page_kind,owner,index,op,value\n".to_vec();
    text.extend_from_slice(&b"1,2,access,anon,2,3,R,\n".repeat(1 << 20));
    let csv = zstd::encode_all(&text[..], 19).unwrap();
    let path = write(dir.path(), "bomb.csv.zst", &csv);
    let err = fails_fast("csv bomb", || {
        trace::read_all(&path, None).map_err(|e| e.to_string())
    });
    assert_mentions(
        &err,
        &["zstd data expands past", "by compressed byte offset"],
    );
    let err = trace::read_all_data(&path, csv, None)
        .unwrap_err()
        .to_string();
    assert_mentions(&err, &["zstd data expands past"]);

    // A real compressed trace is far within both bounds.
    let real: String = (0..50_000)
        .map(|i| format!("{} 8 0 {i}\n", (i * 7919) % 100_003))
        .collect();
    let path = write(dir.path(), "real.lis.zst", &zstd(real.as_bytes()));
    assert_eq!(trace::read_all(&path, None).unwrap().events.len(), 400_000);
}

#[test]
fn ftrace_reports_keep_a_bounded_list_of_reasons_and_names() {
    use mobmem::trace::ftrace::{MAX_EVENT_NAMES, MAX_SKIP_REASONS};
    // Every line a fault of its own (its value in the reason), or an event of its own
    // name: the report counts them all and lists at most its bound of each.
    let lines = 3 * MAX_EVENT_NAMES;
    let mut importer = FtraceImporter::new(Path::new("many.txt"), ImportOptions::default());
    for i in 0..lines {
        importer
            .push_line(&format!(" a-1 [000] ..... 1.{i:06}: event_{i}: x=1\n"))
            .unwrap();
        importer
            .push_line(&format!(" a-1 [000] ..... 1.{i:06}: oom_score_adj_update: pid={i} comm=a oom_score_adj={}\n", 1001 + i))
            .unwrap();
    }
    let (_, report) = importer.finish();
    assert_eq!(report.lines, 2 * lines as u64);
    assert_eq!(report.ignored.len(), MAX_EVENT_NAMES + 1);
    assert_eq!(report.ignored.values().sum::<u64>(), lines as u64);
    assert_eq!(report.skipped.len(), MAX_SKIP_REASONS + 1);
    assert_eq!(
        report.skipped.values().map(|s| s.lines).sum::<u64>(),
        lines as u64
    );
}

#[test]
fn an_endless_stream_of_other_text_ends_with_an_error() {
    use mobmem::trace::ftrace::MAX_LINES_WITHOUT_EVENT;
    /// Lines that are not ftrace, without end.
    struct Endless;
    impl std::io::Read for Endless {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            for pair in buf.chunks_mut(2) {
                pair.copy_from_slice(&b"x\n"[..pair.len()]);
            }
            Ok(buf.len() - buf.len() % 2)
        }
    }
    let err = fails_fast("endless text", || {
        let mut importer = FtraceImporter::new(Path::new("pipe"), ImportOptions::default());
        importer
            .read(&mut std::io::BufReader::new(Endless))
            .map_err(|e| e.to_string())
    });
    assert_mentions(
        &err,
        &[&format!(
            "pipe: line {}: {MAX_LINES_WITHOUT_EVENT} lines from the start without an ftrace event",
            MAX_LINES_WITHOUT_EVENT + 1
        )],
    );
    // An event resets the count: a capture's lines between its events are not limited
    // in total.
    let mut importer = FtraceImporter::new(Path::new("t.txt"), ImportOptions::default());
    for _ in 0..3 {
        for _ in 0..MAX_LINES_WITHOUT_EVENT / 2 {
            importer.push_line("# a comment\n").unwrap();
        }
        importer
            .push_line(" a-1 [000] ..... 1.000000: sched_switch: x\n")
            .unwrap();
    }
}
