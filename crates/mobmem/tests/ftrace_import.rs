//! Importing ftrace text: each fixture was written for these tests, and the events it must
//! give are worked out by hand from its lines (see the comments).

use std::path::{Path, PathBuf};

use mobmem::trace::ftrace::{
    file_owner, import_file, AccessSource, FtraceImporter, ImportOptions, ProcessMatch,
};
use mobmem::trace::{self, Event, EventKind, PageKey, Trace};
use mobmem::Error;

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/ftrace")
        .join(name)
}

fn import(name: &str, options: ImportOptions) -> (Trace, mobmem::trace::ftrace::ImportReport) {
    import_file(&fixture(name), options).expect("import")
}

const US: u64 = 1_000;
const MS: u64 = 1_000_000;

fn file_page(major: u32, minor: u32, ino: u64, index: u64) -> PageKey {
    PageKey::file(file_owner(major, minor, ino).unwrap(), index)
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
    assert_eq!(t.events, expected);
    assert_eq!(
        t.tables.pages,
        vec![
            file_page(253, 6, 0x113b, 665),
            file_page(253, 6, 0x113b, 666),
            file_page(253, 6, 0x2000, 0)
        ]
    );
    let names: Vec<(u32, &str)> = t
        .tables
        .processes
        .iter()
        .map(|p| (p.pid, p.name.as_str()))
        .collect();
    assert_eq!(names, vec![(3493, "com.example.app"), (4100, "com.other")]);

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
    assert!(!report.skipped.keys().any(|k| k.starts_with("malformed")));
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
    assert_eq!(t.events, expected);
    assert_eq!(
        t.tables.pages,
        vec![
            file_page(8, 1, 0x1a, 2),
            file_page(8, 1, 0x1a, 3),
            file_page(8, 1, 0x1a, 0),
            file_page(8, 1, 0x1a, 1),
            PageKey::anon(600, 0x7f0000001),
            file_page(8, 1, 0x1b, 1),
            file_page(8, 1, 0x1b, 2),
            file_page(8, 1, 0x1b, 3),
        ]
    );
    let names: Vec<(u32, &str)> = t
        .tables
        .processes
        .iter()
        .map(|p| (p.pid, p.name.as_str()))
        .collect();
    assert_eq!(names, vec![(500, "bash"), (600, "cat")]);
    assert_eq!(report.accesses_from, "read-path");
    assert_eq!(report.threads, 1);
    assert_eq!(report.lost_events, 7);
    assert_eq!(report.file_accesses, 8);
    assert_eq!(report.anon_accesses, 1);
    assert_eq!(report.files, 2);
    let malformed: Vec<(&String, &Vec<u64>)> = report
        .skipped
        .iter()
        .filter(|(k, _)| k.starts_with("malformed"))
        .map(|(k, s)| (k, &s.first_lines))
        .collect();
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
    let mut lines: Vec<u64> = report
        .skipped
        .iter()
        .filter(|(k, _)| k.starts_with("malformed"))
        .flat_map(|(_, s)| s.first_lines.clone())
        .collect();
    lines.sort_unstable();
    assert_eq!(lines, vec![3, 4, 6, 7]);
    let reasons: Vec<&String> = report.skipped.keys().collect();
    assert!(
        reasons.iter().any(|r| r.contains("expected ino")),
        "{reasons:?}"
    );
    assert!(
        reasons.iter().any(|r| r.contains("-1000..=1000")),
        "{reasons:?}"
    );
    assert!(
        reasons.iter().any(|r| r.contains("timestamp `10.0005x`")),
        "{reasons:?}"
    );

    let strict = ImportOptions {
        strict: true,
        ..Default::default()
    };
    match import_file(&fixture("malformed.txt"), strict) {
        Err(Error::Format {
            position, message, ..
        }) => {
            assert_eq!(position, mobmem::Position::Line(3));
            assert!(message.contains("expected ino"), "{message}");
        }
        other => panic!("expected a format error, got {other:?}"),
    }
}

#[test]
fn marks_pin_importance_and_pass_to_children() {
    let options = ImportOptions {
        foreground: vec!["bash".parse::<ProcessMatch>().unwrap()],
        ..Default::default()
    };
    let (t, report) = import("linux.txt", options);
    let importance: Vec<(u32, i16)> = t
        .events
        .iter()
        .filter(|e| e.kind() == EventKind::Importance)
        .map(|e| (e.proc(), e.oom_score_adj()))
        .collect();
    // bash is marked by name; cat, forked by it, inherits the mark instead of its
    // oom_score_adj.
    assert_eq!(importance, vec![(0, 0), (1, 0)]);
    assert_eq!(report.processes[1].marked, Some(0));

    let options = ImportOptions {
        background: vec![ProcessMatch::Pid(600)],
        ..Default::default()
    };
    let (t, _) = import("linux.txt", options);
    let importance: Vec<(u32, i16)> = t
        .events
        .iter()
        .filter(|e| e.kind() == EventKind::Importance)
        .map(|e| (e.proc(), e.oom_score_adj()))
        .collect();
    assert_eq!(importance, vec![(1, 900)]);
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

#[test]
fn streaming_lines_one_by_one_gives_the_same_trace() {
    let text = std::fs::read_to_string(fixture("linux.txt")).unwrap();
    let mut importer = FtraceImporter::new(Path::new("linux.txt"), ImportOptions::default());
    for line in text.lines() {
        importer.push_line(line).unwrap();
    }
    let (streamed, _) = importer.finish();
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
        let csv = dir.path().join("t.csv");
        trace::write(&csv, &back).unwrap();
        let again = trace::read_all(&csv, None).unwrap();
        assert_eq!(again, t, "{name} through .csv");
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
    let names: Vec<(u32, &str)> = t
        .tables
        .processes
        .iter()
        .map(|p| (p.pid, p.name.as_str()))
        .collect();
    assert_eq!(names, vec![(600, "cat")]);
    assert_eq!(t.events[0], Event::start(200 * US, 0));
    assert_eq!(t.events[1], Event::importance(200 * US, 0, 0));
    assert_eq!(t.events.last(), Some(&Event::exit(1000 * US, 0)));
    assert_eq!(t.accesses().count(), 8);
    assert_eq!(t.footprint(), 8);
    assert_eq!(
        (report.starts, report.exits, report.file_accesses),
        (1, 1, 7)
    );
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("m.csv");
    trace::write(&csv, &t).unwrap();
    assert_eq!(trace::read_all(&csv, None).unwrap(), t);
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
            let mut importer = FtraceImporter::new(Path::new("gen"), ImportOptions { strict: true, ..Default::default() });
            for (i, l) in lines.iter().enumerate() {
                importer.push_line(&render(i, l)).unwrap();
            }
            let (t, report) = importer.finish();
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
            let dir = tempfile::tempdir().unwrap();
            let csv = dir.path().join("g.csv");
            trace::write(&csv, &t).unwrap();
            prop_assert_eq!(trace::read_all(&csv, None).unwrap(), t);
        }
    }
}

#[test]
fn systrace_html_page_tags_are_skipped() {
    let strict = ImportOptions {
        strict: true,
        ..Default::default()
    };
    let (t, report) = import("systrace.html", strict);
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
