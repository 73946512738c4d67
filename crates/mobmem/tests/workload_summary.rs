//! `summarize` on hand-made traces, including ones no generator would write.

use mobmem::trace::{Event, Interner, PageKey, Trace};
use mobmem::workload::summarize;

#[test]
fn counts_a_hand_worked_trace() {
    let mut interner = Interner::new();
    let browser = interner.start_process(100, "browser").unwrap();
    let chat = interner.start_process(200, "chat").unwrap();
    let code = interner.page(PageKey::file(1, 0)).unwrap();
    let db = interner.page(PageKey::file(2, 0)).unwrap();
    let heap = interner.page(PageKey::anon(200, 7)).unwrap();
    let events = vec![
        Event::start(0, browser),
        Event::start(0, chat),
        // No importance yet: background.
        Event::access(5, browser, code, false, false),
        Event::importance(10, browser, 0),
        Event::access(11, browser, code, false, false),
        Event::access(12, browser, db, true, false),
        Event::access(13, chat, heap, true, true),
        Event::importance(20, browser, 700),
        Event::importance(20, chat, 0),
        Event::access(21, chat, db, false, false),
        Event::access(22, browser, code, false, false),
    ];
    let trace = Trace {
        events,
        tables: interner.into_tables(),
    };
    let s = summarize(&trace);
    assert_eq!(s.events, 11);
    assert_eq!(s.accesses, 6);
    assert_eq!(s.distinct_pages, 3);
    assert_eq!(s.writes, 2);
    assert!((s.write_fraction - 2.0 / 6.0).abs() < 1e-12);
    assert_eq!(s.anon_accesses, 1);
    assert_eq!((s.foreground_accesses, s.background_accesses), (3, 3));
    assert_eq!(s.foreground_to_background, Some(1.0));
    assert_eq!(s.foreground_entries, 2);
    assert_eq!(s.duration_ns, 22);
    let per_process: Vec<(&str, u64, u64, u64)> = s
        .processes
        .iter()
        .map(|p| (p.name.as_str(), p.accesses, p.foreground_accesses, p.writes))
        .collect();
    assert_eq!(per_process, [("browser", 4, 2, 1), ("chat", 2, 1, 1)]);
}

#[test]
fn tolerates_ids_missing_from_the_tables_and_empty_traces() {
    let empty = summarize(&Trace::default());
    assert_eq!(empty.accesses, 0);
    assert_eq!(empty.write_fraction, 0.0);
    assert_eq!(empty.foreground_to_background, None);

    let trace = Trace {
        events: vec![
            Event::importance(1, 9, 0),
            Event::access(2, 9, 4_000_000, false, false),
            Event::access(3, 9, 4_000_000, true, false),
            Event::access(4, 3, 17, false, false),
        ],
        tables: Default::default(),
    };
    let s = summarize(&trace);
    assert_eq!(s.accesses, 3);
    assert_eq!(s.distinct_pages, 2);
    assert_eq!(s.foreground_accesses, 2);
    assert_eq!(s.foreground_to_background, Some(2.0));
    let ids: Vec<(u32, Option<u32>, u64)> = s
        .processes
        .iter()
        .map(|p| (p.proc, p.pid, p.accesses))
        .collect();
    assert_eq!(ids, [(3, None, 1), (9, None, 2)]);
    assert!(s.to_string().contains("2.00:1"));
}
