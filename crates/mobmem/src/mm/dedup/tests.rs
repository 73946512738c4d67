//! ksmd worked by hand on tiny populations, and its invariants on random ones.

use proptest::prelude::*;

use super::pages::{zero_fingerprint, PageContent, Population, NEVER};
use super::*;
use crate::core::memory::Memory;
use crate::core::pages::{Location, ZERO_FRAME};

const MS: u64 = 1_000_000;

fn pop(processes: &[&[PageContent]]) -> Population {
    let mut p = Population::default();
    for (i, pages) in processes.iter().enumerate() {
        p.push_process(&format!("p{i}"), 0, vec![("heap".into(), pages.to_vec())])
            .unwrap();
    }
    p
}

/// The processes of `processes`, then a process "late" of one heap page holding `late`
/// that starts at `start_ms`.
fn with_late(processes: &[&[PageContent]], start_ms: u64, late: PageContent) -> Population {
    let mut p = pop(processes);
    p.push_process("late", start_ms * MS, vec![("heap".into(), vec![late])])
        .unwrap();
    p
}

fn c(fp: u64) -> PageContent {
    PageContent::constant(fp)
}

fn params(pages_to_scan: u32) -> KsmParams {
    KsmParams {
        pages_to_scan,
        ..KsmParams::default()
    }
}

/// ksmd on a standalone memory, driven as a run drives it: processes start (their pages
/// fault in) when the time passes their start.
struct Run<'a> {
    pop: &'a Population,
    k: Ksmd<'a>,
    alone: Standalone,
}

impl<'a> Run<'a> {
    fn new(pop: &'a Population, params: &KsmParams, costs: &ScanCosts) -> Self {
        Run {
            pop,
            k: Ksmd::new(pop, params, costs),
            alone: Standalone::new(pop),
        }
    }

    /// Wake ksmd at `t`; returns [`five`] of its counters after the pass.
    fn wake(&mut self, t: u64) -> (u64, u64, u64, u64, u64) {
        self.alone.start_until(self.pop, t);
        self.k.wake(&mut self.alone.mem, t).unwrap();
        five(self)
    }

    fn apply_all_writes(&mut self, t: u64) {
        self.alone.start_until(self.pop, t);
        self.k.apply_all_writes(&mut self.alone.mem, t);
    }

    fn counters(&self) -> Counters {
        self.k.counters(&self.alone.mem)
    }

    fn memory(&self) -> MemoryState {
        self.k.memory(&self.alone.mem)
    }

    /// The memory's invariants, then ksmd's.
    fn audit(&self) -> Result<(), String> {
        self.alone.mem.check()?;
        self.k.audit(&self.alone.mem)
    }

    fn audit_contents(&self, t: u64) -> Result<(), String> {
        self.k.audit_contents(&self.alone.mem, t)
    }
}

/// (shared, sharing, unshared, volatile, full_scans)
fn five(k: &Run) -> (u64, u64, u64, u64, u64) {
    let c = k.counters();
    (
        c.pages_shared,
        c.pages_sharing,
        c.pages_unshared,
        c.pages_volatile,
        c.full_scans,
    )
}

#[test]
fn two_identical_pages_merge_in_the_second_pass() {
    let p = pop(&[&[c(11)], &[c(11)]]);
    let mut k = Run::new(&p, &params(100), &ScanCosts::default());
    // Pass 1: both pages get an rmap item and a first checksum: volatile in the kernel's
    // sense (items in no tree). The batch ends at the end of the pass.
    assert_eq!(k.wake(0), (0, 0, 0, 2, 1));
    assert_eq!(k.counters().pages_scanned, 2);
    assert_eq!(k.memory().saved, 0);
    // Pass 2: page 0's checksum is unchanged, it goes into the unstable tree; page 1
    // finds it there and both merge into one KSM page.
    assert_eq!(k.wake(20 * MS), (1, 1, 0, 0, 2));
    let m = k.memory();
    assert_eq!((m.pages, m.frames, m.saved), (2, 1, 1));
    // Pass 3: nothing changes; a third identical page would now merge on first sight.
    assert_eq!(k.wake(40 * MS), (1, 1, 0, 0, 3));
    k.audit().unwrap();
}

#[test]
fn a_page_like_a_ksm_page_merges_through_the_stable_tree_at_once() {
    // Process 2 starts after the first two merged.
    let p = with_late(&[&[c(5)], &[c(5)]], 30, c(5));
    let mut k = Run::new(&p, &params(100), &ScanCosts::default());
    k.wake(0);
    assert_eq!(k.wake(20 * MS), (1, 1, 0, 0, 2));
    k.wake(40 * MS);
    // No checksum round for the late page: the stable tree is searched first.
    assert_eq!(five(&k), (1, 2, 0, 0, 3));
    assert_eq!(k.memory().saved, 2);
    k.audit().unwrap();
}

#[test]
fn kernel_6_11_order_takes_a_checksum_round_before_the_stable_tree() {
    // As above: pages 0 and 1 merge in pass 2; the late page 2 has their content.
    let p = with_late(&[&[c(5)], &[c(5)]], 30, c(5));
    let modern = KsmParams {
        merge_order: MergeOrder::ChecksumFirst,
        ..params(100)
    };
    let mut k = Run::new(&p, &modern, &ScanCosts::default());
    k.wake(0);
    k.wake(20 * MS);
    // Two identical pages merge in the second pass in either order.
    assert_eq!(five(&k), (1, 1, 0, 0, 2));
    // Pass 3: the late page's first look only records its checksum (volatile)...
    assert_eq!(k.wake(40 * MS), (1, 1, 0, 1, 3));
    assert_eq!(k.memory().saved, 1);
    // ...pass 4: same checksum, then the stable tree: it joins the KSM page.
    assert_eq!(k.wake(60 * MS), (1, 2, 0, 0, 4));
    assert_eq!(k.memory().saved, 2);
    k.audit().unwrap();
    // The versions' orders.
    assert_eq!(MergeOrder::of_kernel((3, 4)), MergeOrder::StableTreeFirst);
    assert_eq!(MergeOrder::of_kernel((6, 10)), MergeOrder::StableTreeFirst);
    assert_eq!(MergeOrder::of_kernel((6, 11)), MergeOrder::ChecksumFirst);
    assert_eq!(MergeOrder::of_kernel((7, 0)), MergeOrder::ChecksumFirst);
}

#[test]
fn a_volatile_page_never_enters_the_unstable_tree() {
    let volatile = PageContent {
        period_ns: 10 * MS,
        ..c(3)
    };
    let p = pop(&[&[volatile, c(8)], &[c(8)]]);
    let mut k = Run::new(&p, &params(100), &ScanCosts::default());
    for i in 0..5 {
        k.wake(i * 25 * MS);
        k.audit().unwrap();
    }
    // The two 8s merged; the volatile page's checksum differed every pass.
    assert_eq!(five(&k), (1, 1, 0, 1, 5));
}

#[test]
fn a_write_to_a_shared_page_unshares_it_and_counters_follow_at_the_next_visit() {
    let written = PageContent {
        write_at_ns: 50 * MS,
        ..c(21)
    };
    let p = pop(&[&[c(21)], &[written]]);
    let mut k = Run::new(&p, &params(100), &ScanCosts::default());
    k.wake(0);
    assert_eq!(k.wake(20 * MS), (1, 1, 0, 0, 2));
    // The write at 50 ms breaks the sharing at once (copy-on-write)...
    k.apply_all_writes(60 * MS);
    let m = k.memory();
    assert_eq!((m.pages, m.frames, m.saved), (2, 2, 0));
    assert_eq!(m.cow_by_process, vec![0, 1]);
    // ...but, as in the kernel, the rmap item stays on the stable node until ksmd
    // visits the page again.
    assert_eq!(five(&k), (1, 1, 0, 0, 2));
    k.audit().unwrap();
    k.wake(60 * MS);
    // Page 1 leaves the stable node and, with new content, starts over (volatile).
    assert_eq!(five(&k), (1, 0, 0, 1, 3));
    k.audit().unwrap();
    k.audit_contents(60 * MS).unwrap();
}

#[test]
fn a_stale_ksm_page_is_dropped_when_the_stable_tree_meets_it() {
    let w = PageContent {
        write_at_ns: 30 * MS,
        ..c(4)
    };
    // Pages 0 and 1 merge, then both are written; page 2 (same old content) starts late.
    let p = with_late(&[&[w], &[w]], 35, c(4));
    let mut k = Run::new(&p, &params(100), &ScanCosts::default());
    k.wake(0);
    k.wake(20 * MS);
    assert_eq!(five(&k).0, 1);
    // Pass 3 at 40 ms: pages 0 and 1 leave the node (written); page 2 then finds no
    // live KSM page and takes the checksum path.
    k.wake(40 * MS);
    k.audit().unwrap();
    assert_eq!(five(&k), (0, 0, 0, 3, 3));
    assert_eq!(k.memory().saved, 0);
}

#[test]
fn max_page_sharing_starts_a_second_ksm_page() {
    let p = pop(&[&[c(9), c(9), c(9)], &[c(9), c(9)]]);
    let costs = ScanCosts::default();
    let mut k = Run::new(
        &p,
        &KsmParams {
            max_page_sharing: 2,
            ..params(100)
        },
        &costs,
    );
    for i in 0..4 {
        k.wake(i * 20 * MS);
        k.audit().unwrap();
    }
    // Pass 2: pages 0+1 merge (node A full), 2 goes into the unstable tree, 3 merges
    // with 2 (node B full), 4 waits in the unstable tree; pass 3: page 4 finds both
    // nodes full, passes its checksum and sits in the unstable tree alone.
    let cnt = k.counters();
    assert_eq!((cnt.pages_shared, cnt.pages_sharing), (2, 2));
    assert_eq!((cnt.stable_node_chains, cnt.stable_node_dups), (1, 2));
    assert_eq!(cnt.pages_unshared, 1);
    assert_eq!(k.memory().saved, 2);
}

#[test]
fn zero_pages_merge_with_the_zero_page_when_asked() {
    let z = c(zero_fingerprint());
    let p = pop(&[&[z, z, c(1)], &[z]]);
    let mut k = Run::new(
        &p,
        &KsmParams {
            use_zero_pages: true,
            ..params(100)
        },
        &ScanCosts::default(),
    );
    k.wake(0);
    k.wake(20 * MS);
    let cnt = k.counters();
    // Three zero pages mapped to the zero page: counted apart, not in pages_sharing.
    assert_eq!(
        (cnt.ksm_zero_pages, cnt.pages_sharing, cnt.pages_shared),
        (3, 0, 0)
    );
    // Their rmap items are still there until the next pass (the kernel's volatile).
    assert_eq!((cnt.rmap_items, cnt.pages_volatile), (4, 3));
    assert_eq!(cnt.general_profit, 3 * 4096 - 4 * 64);
    let m = k.memory();
    assert_eq!((m.frames, m.saved), (1, 3));
    k.wake(40 * MS);
    assert_eq!(k.counters().rmap_items, 1);
    k.audit().unwrap();
    // Without use_zero_pages the zero pages share one KSM page.
    let mut k = Run::new(&p, &params(100), &ScanCosts::default());
    k.wake(0);
    assert_eq!(k.wake(20 * MS), (1, 2, 1, 0, 2));
}

#[test]
fn a_batch_stops_at_pages_to_scan_and_resumes_where_it_left() {
    let p = pop(&[&[c(1), c(2), c(3)], &[c(1), c(2)]]);
    let mut k = Run::new(&p, &params(2), &ScanCosts::default());
    k.wake(0);
    assert_eq!(k.counters().pages_scanned, 2);
    assert_eq!(k.counters().full_scans, 0);
    k.wake(MS);
    assert_eq!(k.counters().pages_scanned, 4);
    // Third batch: page 5, then the next take finds the end of the pass, which completes
    // the full scan and ends the batch early.
    k.wake(2 * MS);
    assert_eq!(k.counters().pages_scanned, 5);
    assert_eq!(k.counters().full_scans, 1);
    // The next batch starts a new pass from the first process.
    k.wake(3 * MS);
    assert_eq!(k.counters().pages_scanned, 7);
    assert_eq!(k.counters().full_scans, 1);
}

#[test]
fn smart_scan_skips_pages_that_keep_failing_to_merge() {
    let p = pop(&[&[c(1), c(2), c(3), c(4)]]);
    let smart = KsmParams {
        smart_scan: true,
        ..params(100)
    };
    let mut k = Run::new(&p, &smart, &ScanCosts::default());
    for i in 0..20 {
        k.wake(i * MS);
        k.audit().unwrap();
    }
    let cnt = k.counters();
    assert!(cnt.pages_skipped > 0);
    assert_eq!(cnt.pages_scanned + cnt.pages_skipped, 4 * 20);
    // Without smart_scan every page is scanned every pass.
    let mut k = Run::new(&p, &params(100), &ScanCosts::default());
    for i in 0..20 {
        k.wake(i * MS);
    }
    assert_eq!(k.counters().pages_scanned, 80);
}

#[test]
fn a_run_samples_over_time_and_baseline_saves_nothing() {
    let p = presets::AndroidConfig {
        scale: 0.05,
        ..Default::default()
    }
    .generate(1)
    .unwrap();
    let spec = RunSpec {
        duration_ms: 120_000,
        sample_ms: 1_000,
        ksm_on: true,
    };
    let on = simulate(&p, &KsmParams::default(), &ScanCosts::default(), spec).unwrap();
    assert_eq!(on.samples.len(), 121);
    assert!(on.last().memory.saved > 0);
    assert!(on.cpu_ms() > 0.0);
    let off = simulate(
        &p,
        &KsmParams::default(),
        &ScanCosts::default(),
        RunSpec {
            ksm_on: false,
            ..spec
        },
    )
    .unwrap();
    assert_eq!(off.samples.len(), 121);
    assert_eq!(off.last().memory.saved, 0);
    assert_eq!(off.last().memory.pages, on.last().memory.pages);
    // Deterministic.
    let again = simulate(&p, &KsmParams::default(), &ScanCosts::default(), spec).unwrap();
    assert_eq!(again, on);
}

fn content_strategy() -> impl Strategy<Value = PageContent> {
    (0u64..6, 0u64..4, 0u64..50, prop::option::of(0u64..200)).prop_map(
        |(base, period, phase, write)| {
            let base = if base == 0 { zero_fingerprint() } else { base };
            PageContent {
                // Most pages constant; some volatile at 10..30 ms.
                period_ns: if period == 3 {
                    10 * MS + phase * MS / 3
                } else {
                    0
                },
                phase_ns: phase * MS,
                write_at_ns: write.map_or(NEVER, |w| w * MS),
                ..PageContent::constant(base)
            }
        },
    )
}

/// A population of one region a process, process i starting at `starts[i]` ms.
fn population_of(procs: &[Vec<PageContent>], starts: &[u64]) -> Population {
    let mut p = Population::default();
    for (i, pages) in procs.iter().enumerate() {
        p.push_process(
            &format!("p{i}"),
            starts[i] * MS,
            vec![("r".into(), pages.clone())],
        )
        .unwrap();
    }
    p
}

/// The settings a property varies.
fn settings(
    pages_to_scan: u32,
    max_page_sharing: u32,
    use_zero_pages: bool,
    smart_scan: bool,
    checksum_first: bool,
) -> KsmParams {
    let merge_order = if checksum_first {
        MergeOrder::ChecksumFirst
    } else {
        MergeOrder::StableTreeFirst
    };
    KsmParams {
        pages_to_scan,
        max_page_sharing,
        use_zero_pages,
        smart_scan,
        merge_order,
        ..KsmParams::default()
    }
}

/// A population of 1 to 3 processes of fewer than `pages` pages each, starting before
/// `start_ms`, with the settings a property varies.
fn case_strategy(pages: usize, start_ms: u64) -> impl Strategy<Value = (Population, KsmParams)> {
    (
        prop::collection::vec(prop::collection::vec(content_strategy(), 0..pages), 1..4),
        prop::collection::vec(0u64..start_ms, 4),
        (
            1u32..12,
            2u32..5,
            any::<bool>(),
            any::<bool>(),
            any::<bool>(),
        ),
    )
        .prop_map(
            |(procs, starts, (scan, sharing, zero, smart, checksum_first))| {
                (
                    population_of(&procs, &starts),
                    settings(scan, sharing, zero, smart, checksum_first),
                )
            },
        )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    /// Whatever the pages and settings: the counters match a recount of the trees, the
    /// kernel's four page counters add up to the rmap items, rmap items never exceed the
    /// pages, frames + saved = pages, no page ever maps content it does not hold.
    #[test]
    fn counters_and_memory_are_conserved(
        (p, params) in case_strategy(12, 100),
        steps in 1usize..40,
    ) {
        let mut k = Run::new(&p, &params, &ScanCosts::default());
        for s in 0..steps as u64 {
            let t = s * 7 * MS;
            k.wake(t);
            k.audit().map_err(TestCaseError::fail)?;
            k.apply_all_writes(t);
            k.audit().map_err(TestCaseError::fail)?;
            k.audit_contents(t).map_err(TestCaseError::fail)?;
            let c = k.counters();
            // pages_volatile is what is left of the rmap items: the three tree counters
            // never exceed them.
            prop_assert!(c.pages_shared + c.pages_sharing + c.pages_unshared <= c.rmap_items);
            let m = k.memory();
            prop_assert!(c.rmap_items <= m.pages);
            // The page population by content, counted apart from ksmd: pages that exist
            // now, and how many distinct non-zero contents and zero pages they hold.
            let live: Vec<usize> = (0..p.pages.len())
                .filter(|&i| p.processes[p.owner[i] as usize].start_ns <= t)
                .collect();
            prop_assert_eq!(m.pages, live.len() as u64);
            let zero = zero_fingerprint();
            let mut contents: Vec<u64> = live.iter().map(|&i| p.pages[i].at(t)).collect();
            let zeros = contents.iter().filter(|&&f| f == zero).count() as u64;
            contents.retain(|&f| f != zero);
            contents.sort_unstable();
            contents.dedup();
            // Merging frees at most every page beyond one per distinct content; zero
            // pages may all go to the zero page with use_zero_pages.
            let zero_frames_needed = if params.use_zero_pages { 0 } else { zeros.min(1) };
            prop_assert!(
                m.frames >= contents.len() as u64 + zero_frames_needed,
                "{} frames for {} distinct contents and {} zero pages", m.frames, contents.len(), zeros
            );
            // Saved frames: each live KSM page saves its mappers but one, the zero page all.
            prop_assert!(m.saved <= c.pages_sharing + c.ksm_zero_pages);
            let by_process: f64 = m.saved_by_process.iter().sum();
            prop_assert!((by_process - m.saved as f64).abs() < 1e-6);
        }
    }
}

/// What happens to the memory between ksmd's looks.
#[derive(Debug, Clone)]
enum Step {
    /// ksmd wakes.
    Wake,
    /// Every write of the content model up to now is applied (copy-on-write).
    Writes,
    /// A store to the page at this scan index (modulo the population).
    Store(usize),
    /// This process (modulo the processes) exits.
    Exit(usize),
    /// The low-memory killer's candidate is killed.
    Kill,
    /// This process starts again (its absent pages fault in).
    Start(usize),
}

fn step_strategy() -> impl Strategy<Value = Step> {
    prop_oneof![
        6 => Just(Step::Wake),
        1 => Just(Step::Writes),
        3 => any::<usize>().prop_map(Step::Store),
        1 => any::<usize>().prop_map(Step::Exit),
        1 => Just(Step::Kill),
        2 => any::<usize>().prop_map(Step::Start),
    ]
}

/// The dedup invariants, recounted from the memory's page table apart from ksmd: every
/// merged page maps a live KSM page or the zero page and holds no frame of its own and
/// no slot; the KSM pages held are those mapped, each with the mappings it counts;
/// ksmd's counters agree with the page table; every frame is free, a page's own or a
/// KSM page.
fn dedup_invariants(k: &Ksmd, mem: &Memory) -> Result<(), String> {
    mem.check()?;
    k.audit(mem)?;
    let mut ksm = std::collections::BTreeMap::<u32, u32>::new();
    let mut zero = 0;
    for page in 0..mem.pages().len() as u32 {
        if !mem.is_merged(page) {
            continue;
        }
        let frame = mem.pages().frame(page);
        if mem.pages().location(page) != Location::Dram
            || mem.frame_of(page).is_some()
            || mem.pages().slot(page).is_some()
        {
            return Err(format!(
                "merged page {page} holds a frame or a slot of its own"
            ));
        }
        if frame == ZERO_FRAME {
            zero += 1;
        } else if mem.ksm_page(frame).is_some() {
            *ksm.entry(frame).or_default() += 1;
        } else {
            return Err(format!(
                "merged page {page} maps frame {frame}, no live KSM page"
            ));
        }
    }
    if ksm.len() != mem.ksm_pages() || mem.unmovable() != mem.ksm_pages() {
        return Err(format!(
            "{} KSM pages mapped, {} held, {} frames unmovable",
            ksm.len(),
            mem.ksm_pages(),
            mem.unmovable()
        ));
    }
    if let Some((frame, n)) = ksm
        .iter()
        .find(|&(&f, &n)| mem.ksm_page(f).map(|p| p.1) != Some(n))
    {
        return Err(format!(
            "KSM page {frame}: {n} pages map it, counted otherwise"
        ));
    }
    let c = k.counters(mem);
    let mapped: u32 = ksm.values().sum();
    // A page's rmap item stays on its stable node until ksmd looks again after a write
    // or an exit: the counters may count more, never fewer.
    if c.ksm_zero_pages != zero
        || u64::from(mapped) > c.pages_shared + c.pages_sharing
        || mem.ksm_pages() as u64 > c.pages_shared
    {
        return Err(format!(
            "counters {c:?} against {mapped} pages on {} KSM pages, {zero} on the zero page",
            ksm.len()
        ));
    }
    if mem.free() + mem.lru_pages() + mem.unmovable() != mem.total() {
        return Err("frames are neither free, a page's own, nor a KSM page".into());
    }
    let state = k.memory(mem);
    if state.frames != (mem.lru_pages() + mem.ksm_pages()) as u64 {
        return Err(format!(
            "{} frames by ksmd's count, {} in memory",
            state.frames,
            mem.lru_pages() + mem.ksm_pages()
        ));
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    /// ksmd on a memory whose processes store into merged pages, exit, are killed and
    /// start again: after every step the memory's invariants, ksmd's and the dedup
    /// invariants recounted from the page table hold.
    #[test]
    fn ksmd_keeps_the_memory_consistent_through_stores_exits_and_kills(
        (p, params) in case_strategy(10, 60),
        steps in prop::collection::vec(step_strategy(), 1..60),
    ) {
        let mut k = Ksmd::new(&p, &params, &ScanCosts::default());
        let mut alone = Standalone::new(&p);
        let (pages, n) = (p.pages.len(), p.processes.len());
        for (s, step) in steps.iter().enumerate() {
            let t = s as u64 * 7 * MS;
            alone.start_until(&p, t);
            match *step {
                Step::Wake => {
                    k.wake(&mut alone.mem, t).map_err(|e| TestCaseError::fail(e.to_string()))?;
                }
                Step::Writes => k.apply_all_writes(&mut alone.mem, t),
                Step::Store(i) if pages > 0 => {
                    let page = p.id(i % pages);
                    let merged = alone.mem.is_merged(page);
                    prop_assert_eq!(k.write_fault(&mut alone.mem, page), merged);
                    // A copy gets a frame of its own at once in a memory of its own.
                    prop_assert!(!alone.mem.is_merged(page));
                    prop_assert!(!merged || alone.mem.frame_of(page).is_some());
                }
                Step::Store(_) => {}
                Step::Exit(proc) => alone.end(proc % n),
                Step::Kill => {
                    if let Some(victim) = alone.mem.kill_candidate(u32::MAX) {
                        alone.end(victim as usize);
                    }
                }
                Step::Start(proc) => alone.start(&p, proc % n),
            }
            dedup_invariants(&k, &alone.mem).map_err(|e| TestCaseError::fail(format!("step {s} ({step:?}): {e}")))?;
        }
    }
}
