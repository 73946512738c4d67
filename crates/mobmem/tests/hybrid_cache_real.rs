//! `reproduce hybrid-cache`'s findings on a Pixel 6a block trace (`mobile-block/` of the
//! public traces, see `tests/common`): what they count is checked against the trace read
//! here. Skipped, with a note, where the trace is not present.

use crate::common;

use mobmem::devices::{CostModel, Devices};
use mobmem::experiments::reproductions::hybrid_cache::real_data;
use mobmem::report::claims::summarize_findings;
use mobmem::report::Finding;

fn evidence(findings: &[Finding], id: &str, name: &str) -> f64 {
    let finding = findings
        .iter()
        .find(|f| f.id == id)
        .unwrap_or_else(|| panic!("no finding {id}"));
    finding
        .evidence
        .iter()
        .find(|(n, _)| n == name)
        .unwrap_or_else(|| panic!("{id}: no evidence {name}"))
        .1
}

#[test]
fn findings_count_the_traces_accesses_and_the_foreground_threads_alone() {
    let test = "findings_count_the_traces_accesses_and_the_foreground_threads_alone";
    let Some(path) = common::public_trace(test, "mobile-block/pubg_exec.csv.gz") else {
        return;
    };
    let dir = path.parent().unwrap();
    let out = real_data::run_traces(
        dir,
        &["pubg_exec", "no_such_trace"],
        &CostModel::paper_relative(),
        &Devices::default(),
    )
    .unwrap();

    // Counted here from the trace as read, without the importance events the run adds.
    let trace = mobmem::trace::read_all(&path, Some("mobile-block".parse().unwrap())).unwrap();
    let accesses = trace.accesses().count() as f64;
    // The busiest thread that is not the kernel's: PoolThread (a name without a tid).
    let pool = trace
        .tables
        .processes
        .iter()
        .position(|p| p.name == "PoolThread")
        .unwrap() as u32;
    let pool_accesses = trace.accesses().filter(|e| e.proc() == pool).count() as f64;
    let busiest_kernel = trace
        .tables
        .processes
        .iter()
        .enumerate()
        .filter(|(_, p)| p.name.starts_with("kworker/"))
        .map(|(id, _)| trace.accesses().filter(|e| e.proc() == id as u32).count() as f64)
        .fold(0.0, f64::max);
    assert!(
        busiest_kernel > pool_accesses,
        "a kernel thread is busier, and passed over"
    );

    let f = &out.findings;
    let id = "pixel-pubg_exec-foreground";
    assert_eq!(evidence(f, id, "accesses"), accesses);
    assert_eq!(evidence(f, id, "trace_accesses"), accesses);
    assert_eq!(evidence(f, id, "footprint"), trace.footprint() as f64);
    // The runs' foreground is PoolThread's accesses and no other's.
    assert_eq!(evidence(f, id, "fg_accesses"), pool_accesses);
    assert_eq!(evidence(f, id, "fg_trace_accesses"), pool_accesses);
    assert_eq!(
        evidence(f, "pixel-pubg_exec-hit-ratios", "fg_accesses"),
        pool_accesses
    );
    // Hit ratios are percentages of what the runs counted.
    for name in ["aa_hr_0", "aa_fg_hr_2", "lru_hr_1", "dwf_fg_hr_0", "q_hr_2"] {
        let v = evidence(f, "pixel-pubg_exec-hit-ratios", name);
        assert!((0.0..=100.0).contains(&v), "{name} = {v}");
    }
    assert_eq!(
        evidence(f, "pixel-pubg_exec-app-aware-vs-lru", "sizes"),
        3.0
    );

    // Every finding reads whole; the note names the source and the missing trace.
    let shown = summarize_findings(std::slice::from_ref(f));
    assert_eq!(shown.len(), 3);
    for s in &shown {
        assert!(!s.text.contains('{'), "{}", s.text);
    }
    assert!(shown[0].text.contains("PoolThread"), "{}", shown[0].text);
    let note = &out.notes[0];
    common::assert_mentions(
        note,
        &[
            "SYSTOR 2024",
            "pubg_exec",
            "Not found there: no_such_trace.csv.gz",
            "once, not per seed",
        ],
    );
}
