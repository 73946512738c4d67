//! Processes already running when an ftrace capture starts (`FtraceImporter::running_process`):
//! no fork of theirs is in the trace, so their importance and name come from what the
//! capture read in /proc. The lines below are written for these tests.

use std::path::Path;

use mobmem::trace::ftrace::{FtraceImporter, ImportOptions, ProcessMatch};
use mobmem::trace::Event;

const MS: u64 = 1_000_000;

fn import(options: ImportOptions, lines: &[&str]) -> mobmem::trace::Trace {
    let mut importer = FtraceImporter::new(Path::new("pipe"), options);
    importer.running_process(300, "pushd", 500);
    importer.running_process(400, "editor", 200);
    importer.running_process(500, "gone", 100);
    for line in lines {
        importer.push_line(line).unwrap();
    }
    importer.finish().0
}

/// pid 300 runs from before the trace (importance 500 from the start; `<...>` gives no name);
/// 400 is marked foreground, which wins over its 200; pid 500 was running but is seen
/// only after a fork reused its pid, so the new process takes the fork's values.
const LINES: [&str; 5] = [
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
    let t = import(options, &LINES);
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
    assert_eq!(t.events, expected);
    let names: Vec<(u32, &str)> = t
        .tables
        .processes
        .iter()
        .map(|p| (p.pid, p.name.as_str()))
        .collect();
    assert_eq!(
        names,
        vec![(300, "pushd"), (400, "editor"), (77, "bash"), (500, "bash")]
    );
}

/// A name mark matches the name read in /proc when the lines give none.
#[test]
fn a_name_mark_matches_the_running_name() {
    let options = ImportOptions {
        background: vec![ProcessMatch::Comm("pushd".into())],
        ..Default::default()
    };
    let t = import(options, &LINES[..1]);
    assert_eq!(
        t.events[..2],
        [Event::start(0, 0), Event::importance(0, 0, 900)]
    );
}
