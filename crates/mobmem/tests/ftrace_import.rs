//! Importing ftrace text: each fixture was written for these tests, and the events it must
//! give are worked out by hand from its lines (see the comments).

use crate::common;
use common::assert_mentions;

use std::path::{Path, PathBuf};

use mobmem::trace::ftrace::{
    file_of_owner, file_owner, import_file, AccessSource, FtraceImporter, ImportOptions,
    ImportReport, ProcessMatch,
};
use mobmem::trace::{self, Event, EventKind, PageKey, Trace};
use mobmem::{Error, Position};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/ftrace")
        .join(name)
}

fn import(name: &str, options: ImportOptions) -> (Trace, ImportReport) {
    import_file(&fixture(name), options).expect("import")
}

/// A malformed line is an error.
fn strict() -> ImportOptions {
    ImportOptions {
        strict: true,
        ..Default::default()
    }
}

/// `lines` given to `importer` one by one, then the import's trace and report.
fn push_all(mut importer: FtraceImporter, lines: &[impl AsRef<str>]) -> (Trace, ImportReport) {
    for line in lines {
        importer.push_line(line.as_ref()).unwrap();
    }
    importer.finish()
}

/// `lines` imported one by one.
fn import_lines(options: ImportOptions, lines: &[impl AsRef<str>]) -> (Trace, ImportReport) {
    push_all(FtraceImporter::new(Path::new("lines"), options), lines)
}

/// The reasons of the malformed lines of a report, each with its first line numbers.
fn malformed(report: &ImportReport) -> Vec<(&String, &Vec<u64>)> {
    report
        .skipped
        .iter()
        .filter(|(k, _)| k.starts_with("malformed"))
        .map(|(k, s)| (k, &s.first_lines))
        .collect()
}

/// Some reason of `reasons` mentions every one of `parts`.
fn assert_some_reason_mentions(reasons: &[impl AsRef<str> + std::fmt::Debug], parts: &[&str]) {
    assert!(
        reasons
            .iter()
            .any(|r| parts.iter().all(|part| r.as_ref().contains(part))),
        "no reason mentions {parts:?}: {reasons:?}"
    );
}

/// Where a format error is and what it says; any other result fails the test.
fn format_error<T: std::fmt::Debug>(result: mobmem::Result<T>) -> (Position, String) {
    match result {
        Err(Error::Format {
            position, message, ..
        }) => (position, message),
        other => panic!("expected a format error, got {other:?}"),
    }
}

/// `t` written as CSV and read back.
fn through_csv(t: &Trace) -> Trace {
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("t.csv");
    trace::write(&csv, t).unwrap();
    trace::read_all(&csv, None).unwrap()
}

/// The processes of a trace as (pid, name), in order.
fn pid_names(t: &Trace) -> Vec<(u32, &str)> {
    t.tables
        .processes
        .iter()
        .map(|p| (p.pid, p.name.as_str()))
        .collect()
}

const US: u64 = 1_000;
const MS: u64 = 1_000_000;

fn file_page(major: u32, minor: u32, ino: u64, index: u64) -> PageKey {
    PageKey::file(file_owner(major, minor, ino).unwrap(), index)
}

/// The pages of device `major:minor` given as (inode, index).
fn file_pages(major: u32, minor: u32, pages: &[(u64, u64)]) -> Vec<PageKey> {
    pages
        .iter()
        .map(|&(ino, index)| file_page(major, minor, ino, index))
        .collect()
}

/// The trace has these events, this page table and these processes as (pid, name).
fn assert_trace(t: &Trace, events: &[Event], pages: &[PageKey], processes: &[(u32, &str)]) {
    assert_eq!(t.events, events);
    assert_eq!(t.tables.pages, pages);
    assert_eq!(pid_names(t), processes);
}

#[test]
fn android_layout_old_filemap_importance_and_input() {
    let (t, report) = import("android.txt", ImportOptions::default());
    // Times from the first event, 14594.800000 s. Process 0 is pid 3493 (named by the
    // oom_score_adj_update line), process 1 pid 4100 (first seen as `<...>`, named later).
    let expected = vec![
        Event::start(0, 0),
        Event::importance(0, 0, 0),
        Event::access(15_353 * US, 0, 0, false, false), // ofs 2723840 = page 665
        Event::access(15_360 * US, 0, 1, false, false), // ofs 2727936 = page 666
        Event::input(20 * MS, 0),                       // the second marker is the same gesture
        Event::start(100 * MS, 1),
        Event::access(100 * MS, 1, 2, false, false),
        Event::importance(300 * MS, 0, 700),
        Event::importance(300 * MS + 10 * US, 1, 0),
        Event::access(400 * MS, 0, 0, false, false),
    ];
    let pages = file_pages(253, 6, &[(0x113b, 665), (0x113b, 666), (0x2000, 0)]);
    let processes = [(3493, "com.example.app"), (4100, "com.other")];
    assert_trace(&t, &expected, &pages, &processes);

    assert_eq!(report.lines, 25);
    assert_eq!(report.accesses_from, "added");
    assert_eq!(report.pages_added, 4);
    assert_eq!(report.pages_deleted, 1);
    assert_eq!(report.pages_reclaimed, 30);
    assert_eq!(report.inputs, 1);
    assert_eq!(report.used["mm_filemap_add_to_page_cache"], 4);
    assert_eq!(report.used["oom_score_adj_update"], 3);
    assert_eq!(report.ignored["sched_switch"], 1);
    assert_eq!(report.ignored["trace markers (not input)"], 1);
    assert_eq!(
        report.skipped["header (before the first event)"].first_lines,
        vec![1]
    );
    assert_eq!(report.skipped["comment (# ...)"].lines, 11);
    assert!(malformed(&report).is_empty());
    assert_eq!(report.time_span_ns, 400 * MS);
}

/// The Linux layout with `record-tgid`, the folio filemap layout and the read path.
#[test]
fn linux_layout_threads_read_path_and_malformed_lines() {
    let (t, report) = import("linux.txt", ImportOptions::default());
    // bash (500) is seen first, forking: process 0 at time 0. Its child 600 was renamed
    // to cat before its first event: process 1, with the oom_score_adj it inherited.
    // The four added pages of 1a (order 2) are accesses only where no read-path event
    // reached them (2 and 3); get_pages 0-8191 reads 0 and 1; thread 601 belongs to 600.
    let expected = vec![
        Event::start(0, 0),
        Event::start(200 * US, 1),
        Event::importance(200 * US, 1, 0),
        Event::access(200 * US, 1, 0, false, false), // 1a page 2
        Event::access(200 * US, 1, 1, false, false), // 1a page 3
        Event::access(300 * US, 1, 2, false, false), // 1a page 0
        Event::access(300 * US, 1, 3, false, false), // 1a page 1
        Event::access(400 * US, 1, 4, true, true),   // anon, write (error_code 0x6)
        Event::access(600 * US, 1, 5, false, false), // 1b page 1 (fault by thread 601)
        Event::access(700 * US, 1, 6, false, false), // 1b pages 2, 3 (map_pages)
        Event::access(700 * US, 1, 7, false, false),
        Event::exit(1000 * US, 1),
        Event::access(2000 * US, 0, 3, false, false),
    ];
    let pages = [
        file_pages(8, 1, &[(0x1a, 2), (0x1a, 3), (0x1a, 0), (0x1a, 1)]),
        vec![PageKey::anon(600, 0x7f0000001)],
        file_pages(8, 1, &[(0x1b, 1), (0x1b, 2), (0x1b, 3)]),
    ]
    .concat();
    assert_trace(&t, &expected, &pages, &[(500, "bash"), (600, "cat")]);
    assert_eq!(report.accesses_from, "read-path");
    assert_eq!(report.threads, 1);
    assert_eq!(report.lost_events, 7);
    assert_eq!(report.file_accesses, 8);
    assert_eq!(report.anon_accesses, 1);
    assert_eq!(report.files, 2);
    let malformed = malformed(&report);
    assert_eq!(malformed.len(), 2, "{malformed:?}");
    assert!(malformed
        .iter()
        .any(|(k, l)| k.contains("not an event line") && **l == vec![23]));
    assert!(malformed
        .iter()
        .any(|(k, l)| k.contains("ofs=oops") && **l == vec![24]));
    let cat = &report.processes[1];
    assert_eq!((cat.pid, cat.threads, cat.accesses), (600, 1, 8));
}

#[test]
fn added_pages_as_the_only_accesses_when_asked() {
    let options = ImportOptions {
        accesses: AccessSource::Added,
        ..Default::default()
    };
    let (t, report) = import("linux.txt", options);
    let pages: Vec<PageKey> = t
        .accesses()
        .map(|e| t.tables.pages[e.page() as usize])
        .collect();
    assert_eq!(
        pages,
        vec![
            file_page(8, 1, 0x1a, 0),
            file_page(8, 1, 0x1a, 1),
            file_page(8, 1, 0x1a, 2),
            file_page(8, 1, 0x1a, 3),
            PageKey::anon(600, 0x7f0000001),
        ]
    );
    assert_eq!(report.accesses_from, "added");
}

#[test]
fn trace_cmd_report_layout_without_flags_or_tgid() {
    let (t, report) = import("trace-cmd.txt", ImportOptions::default());
    let expected = vec![
        Event::start(0, 0),
        Event::access(0, 0, 0, false, false),
        Event::start(500 * US, 1),
        Event::access(500 * US, 1, 1, false, false), // 2b page 2
        Event::access(1000 * US, 0, 2, false, false), // 1a page 1
        Event::importance(2000 * US, 1, -100),
        Event::exit(3000 * US, 1), // no group_dead: the pid is its own process
    ];
    assert_eq!(t.events, expected);
    assert_eq!(report.skipped["header (before the first event)"].lines, 2);
}

#[test]
fn malformed_lines_are_skipped_with_their_numbers_or_fatal_when_strict() {
    let (t, report) = import("malformed.txt", ImportOptions::default());
    assert_eq!(t.accesses().count(), 3);
    let mut lines: Vec<u64> = malformed(&report)
        .into_iter()
        .flat_map(|(_, lines)| lines.clone())
        .collect();
    lines.sort_unstable();
    assert_eq!(lines, vec![3, 4, 6, 7]);
    let reasons: Vec<&String> = report.skipped.keys().collect();
    for part in ["expected ino", "-1000..=1000", "timestamp `10.0005x`"] {
        assert_some_reason_mentions(&reasons, &[part]);
    }

    let (position, message) = format_error(import_file(&fixture("malformed.txt"), strict()));
    assert_eq!(position, Position::Line(3));
    assert_mentions(&message, &["expected ino"]);
}

#[test]
fn marks_pin_importance_and_pass_to_children() {
    let options = ImportOptions {
        foreground: vec!["bash".parse::<ProcessMatch>().unwrap()],
        ..Default::default()
    };
    let (t, report) = import("linux.txt", options);
    // bash is marked by name; cat, forked by it, inherits the mark instead of its
    // oom_score_adj.
    assert_eq!(importance_changes(&t), vec![(0, 0), (1, 0)]);
    assert_eq!(report.processes[1].marked, Some(0));

    let options = ImportOptions {
        background: vec![ProcessMatch::Pid(600)],
        ..Default::default()
    };
    let (t, _) = import("linux.txt", options);
    assert_eq!(importance_changes(&t), vec![(1, 900)]);
}

/// The importance changes of a trace as (process, oom_score_adj), in order.
fn importance_changes(t: &Trace) -> Vec<(u32, i16)> {
    t.events
        .iter()
        .filter(|e| e.kind() == EventKind::Importance)
        .map(|e| (e.proc(), e.oom_score_adj()))
        .collect()
}

#[test]
fn excluded_pids_leave_no_events() {
    let options = ImportOptions {
        exclude_pids: vec![4100],
        ..Default::default()
    };
    let (t, report) = import("android.txt", options);
    let pids: Vec<u32> = t
        .accesses()
        .map(|e| t.tables.processes[e.proc() as usize].pid)
        .collect();
    assert_eq!(pids, vec![3493, 3493, 3493]);
    assert_eq!(
        report.skipped["excluded task (the capturing process)"].lines,
        1
    );
}

/// A process the excluded task starts is kept, with the name and inherited importance of
/// its fork (the excluded task's own `task_newtask` line); the excluded task gets no
/// process, and neither does a thread it starts.
#[test]
fn a_process_started_by_an_excluded_task_keeps_its_fork() {
    let lines = [
        "  mobmem-50  ( 50) [000] ..... 1.000000: task_newtask: pid=60 comm=mobmem clone_flags=1200011 oom_score_adj=300",
        "  mobmem-50  ( 50) [000] ..... 1.000100: task_newtask: pid=51 comm=mobmem clone_flags=3d0f00 oom_score_adj=300",
        "  mobmem-51  ( 50) [000] ..... 1.000200: mm_filemap_fault: dev=8:1 ino=1a ofs=4096",
        "      sh-60  ( 60) [001] ..... 1.001000: task_rename: pid=60 oldcomm=mobmem newcomm=sh oom_score_adj=300",
        "      sh-60  ( 60) [001] ..... 1.002000: mm_filemap_fault: dev=8:1 ino=1a ofs=0",
    ];
    let excluding = |marks: Vec<ProcessMatch>| ImportOptions {
        exclude_pids: vec![50],
        strict: true,
        foreground: marks,
        ..Default::default()
    };
    let (t, report) = import_lines(excluding(Vec::new()), &lines);
    // Times count from the rename, the first line not left out.
    assert_eq!(
        t.events,
        vec![
            Event::start(MS, 0),
            Event::importance(MS, 0, 300),
            Event::access(MS, 0, 0, false, false),
        ]
    );
    assert_eq!(pid_names(&t), vec![(60, "sh")]);
    assert_eq!(
        report.skipped["excluded task (the capturing process)"].first_lines,
        vec![1, 2, 3]
    );
    // A mark still pins the importance.
    let (t, _) = import_lines(excluding(vec![ProcessMatch::Pid(60)]), &lines);
    assert_eq!(t.events[1], Event::importance(MS, 0, 0));

    // A malformed fork of the excluded task is malformed like any line.
    let mut importer = FtraceImporter::new(Path::new("excluded"), excluding(Vec::new()));
    let (_, message) = format_error(importer.push_line(
        "  mobmem-50  ( 50) [000] ..... 1.000000: task_newtask: pid=60 comm=mobmem clone_flags=zz oom_score_adj=300",
    ));
    assert_mentions(&message, &["clone_flags=zz"]);
}

#[test]
fn streaming_lines_one_by_one_gives_the_same_trace() {
    let text = std::fs::read_to_string(fixture("linux.txt")).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let (streamed, _) = import_lines(ImportOptions::default(), &lines);
    let (whole, _) = import("linux.txt", ImportOptions::default());
    assert_eq!(streamed, whole);
}

#[test]
fn round_trip_through_mmt_and_csv() {
    let dir = tempfile::tempdir().unwrap();
    for name in ["android.txt", "linux.txt", "trace-cmd.txt"] {
        let (t, _) = import(name, ImportOptions::default());
        let mmt = dir.path().join("t.mmt");
        trace::write(&mmt, &t).unwrap();
        let back = trace::read_all(&mmt, None).unwrap();
        assert_eq!(back, t, "{name} through .mmt");
        assert_eq!(through_csv(&back), t, "{name} through .csv");
    }
    // The CSV of the Android fixture, line by line.
    let (t, _) = import("android.txt", ImportOptions::default());
    let csv = dir.path().join("a.csv");
    trace::write(&csv, &t).unwrap();
    let text = std::fs::read_to_string(&csv).unwrap();
    let owner = file_owner(253, 6, 0x113b).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[1], "0,3493,start,,,,,com.example.app");
    assert_eq!(
        lines[3],
        format!("15353000,3493,access,file,{owner},665,R,")
    );
    assert_eq!(lines[5], "20000000,3493,input,,,,,");
}

#[test]
fn marked_only_keeps_the_marked_processes_renumbered() {
    let options = ImportOptions {
        foreground: vec!["cat".parse::<ProcessMatch>().unwrap()],
        marked_only: true,
        ..Default::default()
    };
    let (t, report) = import("linux.txt", options);
    // bash (process 0 of the whole trace) is left out; cat becomes process 0, and its
    // mark replaces the oom_score_adj it inherited.
    assert_eq!(pid_names(&t), vec![(600, "cat")]);
    assert_eq!(t.events[0], Event::start(200 * US, 0));
    assert_eq!(t.events[1], Event::importance(200 * US, 0, 0));
    assert_eq!(t.events.last(), Some(&Event::exit(1000 * US, 0)));
    assert_eq!(t.accesses().count(), 8);
    assert_eq!(t.footprint(), 8);
    assert_eq!(
        (report.starts, report.exits, report.file_accesses),
        (1, 1, 7)
    );
    assert_eq!(through_csv(&t), t);
}

mod generated {
    use super::*;
    use proptest::prelude::*;

    /// One page-cache line: task pid, device minor, inode, page index, folio order,
    /// old (`page=%p pfn=%lu`) or folio layout, Android or Linux head.
    type Line = (u32, u32, u64, u64, u32, bool, bool);

    fn line_strategy() -> impl Strategy<Value = Line> {
        (
            1u32..6,
            0u32..3,
            1u64..0x3000,
            0u64..64,
            0u32..3,
            any::<bool>(),
            any::<bool>(),
        )
    }

    fn render(i: usize, &(pid, minor, ino, index, order, old, android): &Line) -> String {
        let head = if android {
            format!("           <...>-{pid}  (-----) [001] ....")
        } else {
            format!("            task{pid}-{pid}     [000] d..2.")
        };
        let ofs = index * 4096;
        let fields = if old {
            format!("dev 8:{minor} ino {ino:x} page=00000000deadbeef pfn={i} ofs={ofs}")
        } else {
            format!("dev 8:{minor} ino {ino:x} pfn=0x{i:x} ofs={ofs} order={order}")
        };
        format!(
            "{head} {}.{:06}: mm_filemap_add_to_page_cache: {fields}",
            1000 + i / 1000,
            i % 1000
        )
    }

    proptest! {
        /// Every added page is one access, in order, by the line's task, keyed by its
        /// device, inode and index; page ids come in order of first appearance; the
        /// trace survives CSV.
        #[test]
        fn added_pages_are_the_accesses(lines in proptest::collection::vec(line_strategy(), 1..60)) {
            let rendered: Vec<String> = lines.iter().enumerate().map(|(i, l)| render(i, l)).collect();
            let (t, report) = import_lines(strict(), &rendered);
            let mut expected = Vec::new();
            for &(pid, minor, ino, index, order, old, _) in &lines {
                let pages = if old { 1 } else { 1u64 << order };
                for k in 0..pages {
                    expected.push((pid, file_page(8, minor, ino, index + k)));
                }
            }
            let got: Vec<(u32, PageKey)> = t
                .accesses()
                .map(|e| (t.tables.processes[e.proc() as usize].pid, t.tables.pages[e.page() as usize]))
                .collect();
            prop_assert_eq!(&got, &expected);
            prop_assert_eq!(report.pages_added, expected.len() as u64);
            let mut next = 0;
            for e in t.accesses() {
                prop_assert!(e.page() <= next);
                if e.page() == next {
                    next += 1;
                }
            }
            prop_assert_eq!(through_csv(&t), t);
        }
    }
}

#[test]
fn systrace_html_page_tags_are_skipped() {
    let (t, report) = import("systrace.html", strict());
    assert_eq!(
        t.events,
        vec![
            Event::start(0, 0),
            Event::access(0, 0, 0, false, false),
            Event::input(100 * MS, 0),
        ]
    );
    assert_eq!(report.skipped["HTML tag (systrace page)"].lines, 11);
    assert_eq!(report.skipped["comment (# ...)"].lines, 2);
}

/// The accesses of a trace as (time, pid, file inode, page index), file pages only.
fn file_accesses(t: &Trace) -> Vec<(u64, u32, u64, u64)> {
    t.accesses()
        .filter(|e| !e.is_anon())
        .map(|e| {
            let key = t.tables.pages[e.page() as usize];
            let (_, _, ino) = file_of_owner(key.owner);
            let pid = t.tables.processes[e.proc() as usize].pid;
            (e.time_ns(), pid, ino, key.index)
        })
        .collect()
}

/// One read() comes as one mm_filemap_get_pages event per batch of folios, each with the
/// range from the batch to the end of the request: every page of the read is one access,
/// and the last batch stops at the end of the file as far as the capture shows it.
#[test]
fn read_batches_count_each_page_once_and_stop_at_the_known_end_of_the_file() {
    let (t, report) = import("readpath.txt", ImportOptions::default());
    let mut expected = Vec::new();
    let mut read = |us: u64, pid: u32, ino: u64, pages: std::ops::RangeInclusive<u64>| {
        for index in pages {
            expected.push((us * US, pid, ino, index));
        }
    };
    // python3 reads 100 pages of a0 in three batches: 0..=30 (the next batch starts at
    // 31), 31..=61, and the last from 62, which stops at page 67: a0's pages entered the
    // cache in the capture (two order-5 folios and an order-2 one), 0..=67, so the read
    // ran into the end of the file there. cat-800's read of c0 comes between: another
    // task, another read.
    read(10, 700, 0xa0, 0..=30);
    read(20, 800, 0xc0, 0..=0);
    read(30, 700, 0xa0, 31..=61);
    read(40, 700, 0xa0, 62..=67);
    // 64 MiB asked from page 2 of b0, of which the capture shows nothing else: the last
    // (here only) batch holds at most 31 folios, counted as 31 pages.
    read(50, 700, 0xb0, 2..=32);
    // The same page read again starts a new read (it does not start inside the previous
    // range); cat's read of a0 from page 1 is no continuation of python3's.
    read(60, 800, 0xc0, 0..=0);
    read(70, 800, 0xa0, 1..=67);
    assert_eq!(file_accesses(&t), expected);
    assert_eq!(report.accesses_from, "read-path");
    assert_eq!(report.reads, 5);
    assert_eq!(report.file_accesses, expected.len() as u64);
    // Pages asked for and left out: 68..=99 twice (a0), 33..=16385 (b0).
    assert_eq!(report.read_pages_past_known_end, 32 + 16353 + 32);
    assert_eq!(report.pages_added, 68);
}

#[test]
fn an_event_range_too_large_for_one_read_is_malformed_not_allocated() {
    let line = "cat-1 [000] ..... 1.000000: mm_filemap_get_pages: dev=8:1 ino=1a ofs=0-18446744073709551615";
    let fault = "cat-1 [000] ..... 0.500000: mm_filemap_fault: dev=8:1 ino=1a ofs=0";
    let (t, report) = import_lines(ImportOptions::default(), &[fault, line]);
    assert_eq!(t.accesses().count(), 1);
    let (reason, skipped) = report
        .skipped
        .iter()
        .find(|(k, _)| k.starts_with("malformed"))
        .expect("a malformed line");
    assert_mentions(reason, &["spans 4503599627370496 pages"]);
    assert_eq!(skipped.first_lines, vec![2]);

    let mut importer = FtraceImporter::new(Path::new("huge"), strict());
    let (position, message) = format_error(importer.push_line(line));
    assert_eq!(position, Position::Line(1));
    assert_mentions(&message, &["more than one read can"]);
}

/// Reasons of the malformed lines of `lines`, imported one by one.
fn malformed_reasons(lines: &[&str]) -> Vec<String> {
    let (_, report) = import_lines(ImportOptions::default(), lines);
    malformed(&report)
        .into_iter()
        .map(|(reason, _)| reason.clone())
        .collect()
}

#[test]
fn page_frame_numbers_and_timestamps_are_checked() {
    let reasons = malformed_reasons(&[
        "cat-1 [000] ..... 1.000000: mm_filemap_add_to_page_cache: dev 8:1 ino 1a pfn=zzz ofs=0 order=0",
        "cat-1 [000] ..... 1.000001: mm_filemap_add_to_page_cache: dev 8:1 ino 1a pfn=0xzz ofs=0 order=0",
        "cat-1 [000] ..... 99999999999.000000: mm_filemap_fault: dev=8:1 ino=1a ofs=0",
        "cat-1 [000] .....          2: mm_filemap_fault: dev=8:1 ino=1a ofs=0",
    ]);
    assert_eq!(reasons.len(), 4, "{reasons:?}");
    assert_some_reason_mentions(&reasons, &["pfn=zzz"]);
    assert_some_reason_mentions(&reasons, &["pfn=0xzz"]);
    assert_some_reason_mentions(&reasons, &["`99999999999.000000` out of range"]);
    assert_some_reason_mentions(&reasons, &["`2` without a fraction", "counter clock"]);
    // Both pfn layouts read.
    assert!(malformed_reasons(&[
        "cat-1 [000] ..... 1.000000: mm_filemap_add_to_page_cache: dev 8:1 ino 1a pfn=0x1f4 ofs=0 order=0",
        "cat-1 [000] ..... 1.000001: mm_filemap_add_to_page_cache: dev 8:1 ino 1a page=00000000deadbeef pfn=500 ofs=0",
    ])
    .is_empty());
}

/// Perfetto gives page indexes in pages: the highest one a byte offset can name (2^52 - 1)
/// is read; above it, or a `last_index` of 2^64 - 1, the line is malformed with its reason.
#[test]
fn huge_perfetto_page_indexes_are_malformed() {
    let fault = |index: u64| {
        format!(
            "cat-1 [000] ..... 1.000000: mm_filemap_fault: s_dev=8388609 i_ino=26 index={index}"
        )
    };
    let top = (1u64 << 52) - 1;
    let lines = [
        fault(top),
        fault(top + 1),
        fault(u64::MAX),
        "cat-1 [000] ..... 1.000001: mm_filemap_get_pages: s_dev=8388609 i_ino=26 index=0 last_index=18446744073709551615".to_string(),
    ];
    let (t, report) = import_lines(ImportOptions::default(), &lines);
    assert_eq!(t.tables.pages, vec![file_page(8, 1, 0x1a, top)]);
    let malformed = malformed(&report);
    assert_eq!(malformed.len(), 3, "{malformed:?}");
    for (field, value, line) in [
        ("index", top + 1, 2),
        ("index", u64::MAX, 3),
        ("last_index", u64::MAX, 4),
    ] {
        let wanted = format!("{field}={value}, expected a page index of at most {top}");
        assert!(
            malformed
                .iter()
                .any(|(k, lines)| k.contains(&wanted) && lines.as_slice() == [line]),
            "{wanted} on line {line}: {malformed:?}"
        );
    }
}

/// Every device the kernel numbers (minors have 20 bits) keys its own files.
#[test]
fn large_device_minors_key_distinct_files() {
    let lines: Vec<String> = ["0:5000", "0:904", "259:1048575", "8:1"]
        .iter()
        .enumerate()
        .map(|(i, dev)| {
            format!(
                "cat-1 [000] ..... 1.00000{i}: mm_filemap_fault: dev={dev} ino=ffffffff ofs=4096"
            )
        })
        .collect();
    let (t, _) = import_lines(strict(), &lines);
    let owners: Vec<(u32, u32, u64)> = t
        .tables
        .pages
        .iter()
        .map(|p| file_of_owner(p.owner))
        .collect();
    assert_eq!(
        owners,
        vec![
            (0, 5000, 0xffff_ffff),
            (0, 904, 0xffff_ffff),
            (259, 1_048_575, 0xffff_ffff),
            (8, 1, 0xffff_ffff)
        ]
    );
    // What does not fit says what is unsupported.
    let reasons = malformed_reasons(&[
        "cat-1 [000] ..... 1.000000: mm_filemap_fault: dev=8:1 ino=800000000 ofs=0",
        "cat-1 [000] ..... 1.000001: mm_filemap_fault: dev=512:1 ino=1 ofs=0",
    ]);
    assert_some_reason_mentions(&reasons, &["inode numbers of 2^35"]);
    assert_some_reason_mentions(&reasons, &["device major above 511"]);
}

#[test]
fn task_names_with_spaces_and_bracketed_digits() {
    // As the kernel prints a task renamed with prctl(PR_SET_NAME, "a [12] b-3").
    let lines = [
        "      a [12] b-3-26821   [000] .....  1083.399711: mm_filemap_get_pages: dev=254:0 ino=d1f ofs=0-4095",
        "   x [1]-5 (   77) [001] .....  1083.399712: mm_filemap_fault: dev=254:0 ino=d1f ofs=4096",
    ];
    let (t, _) = import_lines(strict(), &lines);
    // The second line's task is a thread of 77, which takes its name until its leader's
    // is seen.
    assert_eq!(pid_names(&t), vec![(26821, "a [12] b-3"), (77, "x [1]")]);
}

/// Strict: only header lines capture tools write may come before the first event.
#[test]
fn text_before_the_first_event_is_counted_or_fatal_when_strict() {
    let lines = [
        "TRACE:",
        "version = 6",
        "cpus=2",
        "CPU 1 is empty",
        "packet { timestamp: 1 }",
        "cat-1 [000] ..... 1.000000: mm_filemap_fault: dev=8:1 ino=1a ofs=0",
    ];
    let (_, report) = import_lines(ImportOptions::default(), &lines);
    assert_eq!(report.skipped["header (before the first event)"].lines, 4);
    assert_eq!(
        report.skipped["text before the first event (not ftrace)"].first_lines,
        vec![5]
    );

    let mut importer = FtraceImporter::new(Path::new("pre"), strict());
    let results: Vec<bool> = lines
        .iter()
        .map(|l| importer.push_line(l).is_ok())
        .collect();
    assert_eq!(results, vec![true, true, true, true, false, true]);
}

/// `traceconv systrace` text: TGID column, `<unknown>` tasks, markers without a space,
/// decimal `clone_flags`, and Perfetto's field names for the page-cache deletion.
#[test]
fn perfetto_traceconv_text() {
    let options = ImportOptions {
        perfetto: true,
        strict: true,
        ..Default::default()
    };
    let (t, report) = import("perfetto.txt", options);
    // Thread 3520's line has no TGID; task_newtask's clone_flags 4001536 (0x3d0f00) has
    // CLONE_THREAD, so it belongs to 3493.
    let expected = vec![
        Event::start(0, 0),
        Event::importance(0, 0, 0),
        Event::access(200 * MS, 0, 0, false, false), // 113b page 1, thread 3510
        Event::access(300 * MS, 0, 1, false, false), // 113b page 2, thread 3520
        Event::input(400 * MS, 0),
        Event::start(600 * MS, 1),
        Event::access(600 * MS, 1, 2, false, false),
    ];
    let pages = file_pages(253, 6, &[(0x113b, 1), (0x113b, 2), (0x2000, 0)]);
    let processes = [(3493, "com.example.app"), (4100, "")];
    assert_trace(&t, &expected, &pages, &processes);
    assert_eq!(report.pages_deleted, 1);
    assert_eq!(report.threads, 2);

    // Read as kernel text, 4001536 is hexadecimal: no CLONE_THREAD, and 3520 becomes a
    // process of its own; `<unknown>` is taken for a task name.
    let (t, _) = import("perfetto.txt", ImportOptions::default());
    assert_eq!(
        pid_names(&t),
        vec![
            (3493, "com.example.app"),
            (3520, "<unknown>"),
            (4100, "<unknown>")
        ]
    );
}

/// `lines` with processes already running when the capture started
/// (`FtraceImporter::running_process`): no fork of theirs is in the trace, so their
/// importance and name come from what the capture read in /proc.
fn import_with_running(options: ImportOptions, lines: &[&str]) -> Trace {
    let mut importer = FtraceImporter::new(Path::new("pipe"), options);
    importer.running_process(300, "pushd", 500);
    importer.running_process(400, "editor", 200);
    importer.running_process(500, "gone", 100);
    push_all(importer, lines).0
}

/// pid 300 runs from before the trace (importance 500 from the start; `<...>` gives no name);
/// 400 is marked foreground, which wins over its 200; pid 500 was running but is seen
/// only after a fork reused its pid, so the new process takes the fork's values.
const RUNNING_LINES: [&str; 5] = [
    "           <...>-300     [000] .....   10.000000: mm_filemap_fault: dev 8:1 ino 1a ofs=0",
    "          editor-400     [000] .....   10.001000: mm_filemap_fault: dev 8:1 ino 1a ofs=4096",
    "            bash-77      [001] .....   10.002000: task_newtask: pid=500 comm=bash clone_flags=1200000 oom_score_adj=0",
    "            bash-500     [001] .....   10.003000: mm_filemap_fault: dev 8:1 ino 1b ofs=0",
    "           <...>-300     [000] .....   10.004000: oom_score_adj_update: pid=300 comm=pushd oom_score_adj=900",
];

#[test]
fn a_running_process_has_its_importance_and_name_from_the_start() {
    let options = ImportOptions {
        foreground: vec![ProcessMatch::Pid(400)],
        ..Default::default()
    };
    let t = import_with_running(options, &RUNNING_LINES);
    // Processes in order of first sight: 300 (0), 400 (1), 77 (2, the forking bash), 500 (3).
    let expected = vec![
        Event::start(0, 0),
        Event::importance(0, 0, 500),
        Event::access(0, 0, 0, false, false),
        Event::start(MS, 1),
        Event::importance(MS, 1, 0),
        Event::access(MS, 1, 1, false, false),
        Event::start(2 * MS, 2),
        Event::start(3 * MS, 3),
        Event::importance(3 * MS, 3, 0),
        Event::access(3 * MS, 3, 2, false, false),
        Event::importance(4 * MS, 0, 900),
    ];
    let pages = file_pages(8, 1, &[(0x1a, 0), (0x1a, 1), (0x1b, 0)]);
    let processes = [(300, "pushd"), (400, "editor"), (77, "bash"), (500, "bash")];
    assert_trace(&t, &expected, &pages, &processes);
}

/// A name mark matches the name read in /proc when the lines give none.
#[test]
fn a_name_mark_matches_the_running_name() {
    let options = ImportOptions {
        background: vec![ProcessMatch::Comm("pushd".into())],
        ..Default::default()
    };
    let t = import_with_running(options, &RUNNING_LINES[..1]);
    assert_eq!(
        t.events[..2],
        [Event::start(0, 0), Event::importance(0, 0, 900)]
    );
}
