//! Hand-worked sequences, the kernel's documented numbers, and invariants under random
//! operation sequences for every policy.

use proptest::prelude::*;

use super::lists::{LruLists, NO_LIST};
use super::lru::{ACTIVE_FILE, INACTIVE_FILE};
use super::mglru::MgLru;
use super::policy::{
    isolate_lumpy_block, Goal, LumpyGating, LumpyUnmovable, ReclaimPolicy, ShrinkRequest,
    SWAP_CLUSTER_MAX,
};
use super::*;
use crate::core::memory::{FaultKind, FrameState, Memory};
use crate::core::pages::PageFlags;

/// A small machine: no reserved or unmovable frames, watermarks in pages as given.
fn small_config(policy: &str, frames: usize, wm_pages: [u64; 3]) -> ReclaimConfig {
    ReclaimConfig {
        policy: policy.into(),
        memory_pages: frames,
        reserved_pages: 0,
        unmovable_per_mille: 0,
        swap_pages: frames,
        watermarks_kb: Some(wm_pages.map(|p| p * 4)),
        high_order: HighOrderConfig {
            process: String::new(),
            ..Default::default()
        },
        ..Default::default()
    }
}

/// A machine for `pages` pages of one process under `config` with the flusher writing
/// dirty pages above `background_ratio` % of memory.
fn flusher_machine(mut config: ReclaimConfig, background_ratio: u32, pages: usize) -> Machine {
    config.dirty_writeback = DirtyWriteback::Flusher;
    config.dirty_background_ratio = background_ratio;
    Machine::new(&config, pages, 1).unwrap()
}

/// Access each of `pages` from `proc`, which must not fail.
fn access_each(
    m: &mut Machine,
    pages: impl IntoIterator<Item = u32>,
    proc: ProcId,
    anon: bool,
    write: bool,
) {
    for page in pages {
        m.access(page, proc, anon, write).unwrap();
    }
}

/// Fault `page` of process 0 into a free frame and hand it to `policy`; returns the frame.
fn fault_in(mem: &mut Memory, policy: &mut impl ReclaimPolicy, page: u32, anon: bool) -> u32 {
    let pfn = mem.find_free_block(0).unwrap();
    mem.fault_in(pfn, page, 0, anon);
    policy.add_page(mem, pfn);
    pfn
}

#[test]
fn watermarks_follow_min_free_kbytes() {
    // The paper: 2 GB device, min 5,752 KB, low 7,190 KB, high 8,628 KB. isqrt(kb * 16)
    // is 5752 for 2,067,844..=2,068,563 KiB of lowmem (2 GiB less the kernel's
    // reservations).
    for kb in [2_067_844, 2_068_000, 2_068_563] {
        let w = Watermarks::for_lowmem_kb(kb);
        assert_eq!((w.min_kb, w.low_kb, w.high_kb), (5752, 7190, 8628), "{kb}");
    }
    assert_eq!(Watermarks::for_lowmem_kb(2_068_564).min_kb, 5753);
    // A full 2 GiB: isqrt(33554432) = 5792.
    let w = Watermarks::for_lowmem_kb(2 << 20);
    assert_eq!((w.min_kb, w.low_kb, w.high_kb), (5792, 7240, 8688));
    // The kernel's clamps.
    assert_eq!(Watermarks::for_lowmem_kb(16).min_kb, 128);
    assert_eq!(Watermarks::for_lowmem_kb(1 << 40).min_kb, 65536);
    // In pages of 4 KiB.
    assert_eq!(w.min_pages(), 1448);
}

#[test]
fn page_referenced_twice_is_activated_at_the_next_scan() {
    let config = small_config("stock", 64, [0, 0, 0]);
    let mut m = Machine::new(&config, 8, 1).unwrap();
    // Pages 0, 1, 2: file pages faulted in that order (0 is at the inactive tail).
    for page in 0..3 {
        assert_eq!(
            m.access(page, 0, false, false).unwrap().map(|f| f.kind),
            Some(FaultKind::FileCold)
        );
    }
    // Page 0 referenced twice, page 1 once, page 2 not at all.
    m.access(0, 0, false, false).unwrap();
    m.access(0, 0, false, false).unwrap();
    m.access(1, 0, false, false).unwrap();
    let list_of = |m: &Machine, page| m.list_of(page);
    let reclaimed = m.reclaim(Goal::Reclaim(1), 0);
    assert_eq!(reclaimed, 1);
    assert_eq!(list_of(&m, 0), ACTIVE_FILE);
    // Referenced once: another round on the inactive list, PG_referenced now set.
    assert_eq!(list_of(&m, 1), INACTIVE_FILE);
    assert!(m.mem.frame(m.mem.frame_of(1).unwrap()).is_referenced());
    assert!(m.mem.frame_of(2).is_none());
    assert_eq!(m.mem.fault_kind(2, false, false), FaultKind::FileRefault);
    // One more reference to page 1: activated by the next scan.
    m.access(1, 0, false, false).unwrap();
    m.access(3, 0, false, false).unwrap();
    m.reclaim(Goal::Reclaim(1), 0);
    assert_eq!(list_of(&m, 1), ACTIVE_FILE);
    assert!(m.mem.frame_of(3).is_none(), "the unreferenced page went");
    m.check().unwrap();
}

#[test]
fn anonymous_page_referenced_once_is_activated() {
    let config = small_config("stock", 64, [0, 0, 0]);
    let mut m = Machine::new(&config, 4, 1).unwrap();
    m.access(0, 0, true, true).unwrap();
    m.access(1, 0, true, true).unwrap();
    m.access(0, 0, true, false).unwrap();
    assert_eq!(m.reclaim(Goal::Reclaim(1), 0), 1);
    assert_eq!(m.list_of(0), 1);
    assert!(m.mem.is_swapped(1));
    assert_eq!(m.mem.counters.swap_outs, 1);
    assert_eq!(
        m.access(1, 0, true, false).unwrap().map(|f| f.kind),
        Some(FaultKind::SwapIn)
    );
    assert_eq!(m.mem.swap_used(), 0);
}

#[test]
fn kswapd_wakes_below_low_and_stops_at_high() {
    let (min, low, high) = (40, 50, 60);
    let config = small_config("stock", 512, [min, low, high]);
    let mut m = Machine::new(&config, 4000, 1).unwrap();
    let mut runs = 0;
    for page in 0..4000u32 {
        let before = m.mem.free();
        m.access(page, 0, false, false).unwrap();
        if m.kswapd_runs > runs {
            runs = m.kswapd_runs;
            // Woken because the allocation left free memory below low ...
            assert_eq!(before - 1, low as usize - 1, "page {page}");
            // ... and it stopped once free memory reached high, within one batch.
            let free = m.mem.free();
            assert!(
                free >= high as usize && free < high as usize + SWAP_CLUSTER_MAX,
                "free {free} after kswapd"
            );
        }
        assert!(m.mem.free() >= min as usize);
    }
    assert!(runs > 50);
    assert_eq!(m.direct_reclaims, 0);
    m.check().unwrap();
}

/// Frames 0..32 with pages placed by hand: `layout[pfn]` is 'p' (a page of owner 1 on
/// the inactive file list), 'i' (a page of owner 0), 'u' (unmovable), '.' (free).
fn laid_out(layout: &str) -> (Memory, LruLists) {
    let mut mem = Memory::new(layout.len(), &[], layout.len(), 2, 0);
    let mut lists = LruLists::new(layout.len());
    for (pfn, c) in layout.chars().enumerate() {
        let pfn = pfn as u32;
        match c {
            'p' | 'i' => {
                mem.fault_in(pfn, pfn, u32::from(c == 'p'), false);
                lists.push_head(INACTIVE_FILE, pfn);
            }
            'u' => mem.allocate_unmovable(pfn, 0),
            _ => {}
        }
    }
    (mem, lists)
}

fn lumpy(layout: &str, tag: u32, order: u32, mode: LumpyUnmovable, fmp: bool) -> Vec<u32> {
    let (mut mem, mut lists) = laid_out(layout);
    lists.unlink(tag);
    let mut out = Vec::new();
    let mut may_take = |m: &Memory, pfn: u32| !(fmp && m.owner_of_frame(pfn) == 0);
    isolate_lumpy_block(
        &mut mem,
        &mut lists,
        tag,
        order,
        mode,
        &mut may_take,
        &mut out,
    );
    out
}

#[test]
fn lumpy_takes_exactly_the_aligned_neighbours_it_may() {
    //              0123456789abcdef0123
    let layout = "pppppppppppppupppi.pp";
    // Tag 12, order 2: block 12..16 = p u p p -> frames 14, 15 (13 unmovable skipped).
    assert_eq!(
        lumpy(layout, 12, 2, LumpyUnmovable::Skip, false),
        vec![14, 15]
    );
    // The 3.4 kernel gives the block up at the unmovable frame.
    assert_eq!(
        lumpy(layout, 12, 2, LumpyUnmovable::Abort, false),
        Vec::<u32>::new()
    );
    // Tag 14, order 2: same block; 12 is taken before the unmovable frame is met.
    assert_eq!(lumpy(layout, 14, 2, LumpyUnmovable::Abort, false), vec![12]);
    assert_eq!(
        lumpy(layout, 14, 2, LumpyUnmovable::Skip, false),
        vec![12, 15]
    );
    // Tag 19, order 2: block 16..20 = p i . p: the free frame is skipped; FMP leaves
    // the interactive page (17) out.
    assert_eq!(
        lumpy(layout, 19, 2, LumpyUnmovable::Skip, false),
        vec![16, 17]
    );
    assert_eq!(lumpy(layout, 19, 2, LumpyUnmovable::Skip, true), vec![16]);
    // Order 3 around 5: block 0..8.
    assert_eq!(
        lumpy(layout, 5, 3, LumpyUnmovable::Skip, false),
        vec![0, 1, 2, 3, 4, 6, 7]
    );
    // Order 1 around 20: block 20..22 (the end of memory is at 21).
    assert_eq!(
        lumpy(layout, 20, 1, LumpyUnmovable::Skip, false),
        Vec::<u32>::new()
    );
}

/// Interactive task 0 owns pages 0..40; task 1 streams pages from 1000 on.
fn protection_run(policy: &str, high_order: bool) -> (Machine, Vec<usize>) {
    let config = small_config(policy, 256, [8, 10, 12]);
    let mut m = Machine::new(&config, 4000, 2).unwrap();
    m.set_foreground(0);
    m.set_input(0);
    for page in 0..40 {
        m.access(page, 0, page % 2 == 0, false).unwrap();
    }
    let mut interactive_resident = Vec::new();
    for (k, page) in (1000..3000u32).enumerate() {
        m.access(page, 1, false, true).unwrap();
        if high_order && k % 16 == 0 {
            if let Some(pfn) = m.allocate(2).unwrap() {
                m.mem.allocate_unmovable(pfn, 2);
                m.mem.free_unmovable(pfn, 2);
            }
        }
        interactive_resident.push(m.mem.resident_of(0));
    }
    (m, interactive_resident)
}

#[test]
fn fmp_never_evicts_interactive_pages_while_others_are_reclaimable() {
    for high_order in [false, true] {
        let (m, resident) = protection_run("fmp", high_order);
        assert!(resident.iter().all(|&r| r == 40), "high order {high_order}");
        assert!(m.mem.counters.protected_skips > 0);
        m.check().unwrap();
        // The same run on the stock kernel does evict them (the test can fail).
        let (_, stock) = protection_run("stock", high_order);
        assert!(stock.iter().any(|&r| r < 40));
    }
}

#[test]
fn fmp_falls_back_when_only_interactive_pages_are_left() {
    let config = small_config("fmp", 128, [8, 10, 12]);
    let mut m = Machine::new(&config, 1000, 1).unwrap();
    m.set_input(0);
    access_each(&mut m, 0..400, 0, false, false);
    assert!(m.mem.counters.reclaimed > 200);
    assert!(m.mem.resident_of(0) < 128);
    m.check().unwrap();
}

#[test]
fn memory_full_of_unswappable_pages_is_an_error_not_a_panic() {
    let mut config = small_config("stock", 64, [2, 3, 4]);
    config.swap_pages = 8;
    let mut m = Machine::new(&config, 200, 1).unwrap();
    let e = (0..200)
        .find_map(|page| m.access(page, 0, true, true).err())
        .expect("runs out of memory")
        .to_string();
    assert!(
        e.contains("out of memory") && e.contains("swap_pages"),
        "{e}"
    );
    assert_eq!(m.mem.swap_used(), 8);
    m.check().unwrap();
}

#[test]
fn memcg_low_protects_the_foreground_app_below_low() {
    let mut config = small_config("memcg-low", 256, [8, 10, 12]);
    config.memcg_low_pages = 50;
    let mut m = Machine::new(&config, 4000, 2).unwrap();
    m.set_foreground(0);
    access_each(&mut m, 0..40, 0, false, false);
    for page in 1000..3000 {
        m.access(page, 1, false, true).unwrap();
        assert_eq!(m.mem.resident_of(0), 40);
    }
}

#[test]
fn mglru_evicts_the_oldest_generation_and_promotes_accessed_pages() {
    let config = small_config("mglru", 64, [0, 0, 0]);
    let mut mem = Memory::new(64, &[], 8, 1, 64);
    let mut policy = MgLru::new(64);
    for page in 0..4u32 {
        let pfn = fault_in(&mut mem, &mut policy, page, false);
        assert_eq!(
            policy.gen_of(pfn),
            policy.min_seq()[1],
            "file pages start oldest"
        );
    }
    for page in [1, 3] {
        let pfn = mem.frame_of(page).unwrap();
        mem.set_frame_flags(pfn, PageFlags::YOUNG, true);
    }
    let req = ShrinkRequest::reclaim(2);
    assert_eq!(policy.shrink(&mut mem, &req), 2);
    assert!(mem.frame_of(0).is_none() && mem.frame_of(2).is_none());
    for page in [1, 3] {
        let pfn = mem.frame_of(page).unwrap();
        assert_eq!(
            policy.gen_of(pfn),
            policy.max_seq(),
            "accessed pages promoted to the youngest"
        );
        assert!(!mem.frame(pfn).is_young());
    }
    // Anonymous pages start in the second oldest generation.
    let pfn = fault_in(&mut mem, &mut policy, 5, true);
    assert_eq!(policy.gen_of(pfn), policy.min_seq()[0] + 1);
    mem.check().unwrap();
    let _ = config;
}

#[test]
fn mglru_keeps_two_to_four_generations() {
    let mut mem = Memory::new(256, &[], 5000, 1, 5000);
    let mut policy = MgLru::new(256);
    let req = ShrinkRequest::reclaim(SWAP_CLUSTER_MAX);
    let mut x = 7u64;
    for page in 0..5000u32 {
        if mem.free() < 16 {
            assert!(policy.shrink(&mut mem, &req) > 0);
        }
        fault_in(&mut mem, &mut policy, page, page % 3 == 0);
        // Touch a pseudo-random resident page.
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        if let Some(pfn) = mem.frame_of((x >> 33) as u32 % (page + 1)) {
            mem.set_frame_flags(pfn, PageFlags::YOUNG, true);
        }
        for min in policy.min_seq() {
            let gens = policy.max_seq() - min + 1;
            assert!((2..=4).contains(&gens), "{gens} generations");
        }
    }
    assert!(policy.agings > 10);
    mem.check().unwrap();
}

#[test]
fn run_is_deterministic_and_rejects_bad_input() {
    let wl = workload::GalleryUsbConfig {
        interactions: 12,
        ..Default::default()
    };
    let trace = workload::generate(&wl, 3).unwrap();
    let config = ReclaimConfig {
        memory_pages: 16384,
        ..Default::default()
    };
    let a = run(&config, &trace).unwrap();
    let b = run(&config, &trace).unwrap();
    assert_eq!(a, b);
    assert_eq!(a.interactions, 12);
    assert!(a.rt_p50_ms >= config.execution_ms);
    assert!(a.rt_p95_ms >= a.rt_p50_ms);
    let bad = ReclaimConfig {
        policy: "nope".into(),
        ..Default::default()
    };
    let e = run(&bad, &trace).unwrap_err().to_string();
    assert!(e.contains("unknown reclaim policy 'nope'"), "{e}");
    let mut broken = trace.clone();
    broken
        .events
        .push(crate::trace::Event::access(0, 0, 999_999, false, false));
    let e = run(&config, &broken).unwrap_err().to_string();
    assert!(e.contains("page id 999999"), "{e}");
}

#[test]
fn workingset_runs_are_deterministic_and_count_every_refault() {
    let wl = workload::GalleryUsbConfig {
        interactions: 12,
        ..Default::default()
    };
    let trace = workload::generate(&wl, 3).unwrap();
    for stats_flush_ms in [0, 2000] {
        let config = ReclaimConfig {
            policy: "workingset".into(),
            memory_pages: 16384,
            stats_flush_ms,
            ..Default::default()
        };
        let a = run_detailed(&config, &trace).unwrap();
        let b = run_detailed(&config, &trace).unwrap();
        assert_eq!(a.result, b.result);
        assert_eq!(a.workingset, b.workingset);
        let ws = a.workingset.expect("workingset counts refaults");
        // Shadow entries are never lost: every fault on a dropped file page or a
        // swapped page is a refault, and only those are.
        let faults =
            |f: fn(&ProcessFaults) -> u64| -> u64 { a.result.per_process.iter().map(f).sum() };
        assert_eq!(ws.refault[1], faults(|p| p.file_refaults));
        assert_eq!(ws.refault[0], faults(|p| p.swap_ins));
        assert!(ws.refault[1] > 0 && ws.activate[1] <= ws.refault[1]);
        assert!(ws.restore[1] <= ws.activate[1]);
    }
}

#[derive(Debug, Clone)]
enum Op {
    Access { page: u32, proc: u32, write: bool },
    Input(u32),
    Foreground(u32),
    HighOrder(u32),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        8 => (0u32..300, 0u32..3, any::<bool>())
            .prop_map(|(page, proc, write)| Op::Access { page, proc, write }),
        1 => (0u32..3).prop_map(Op::Input),
        1 => (0u32..3).prop_map(Op::Foreground),
        1 => (1u32..4).prop_map(Op::HighOrder),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]
    #[test]
    fn frame_accounting_holds_for_every_policy(
        ops in prop::collection::vec(op(), 1..400),
        kernel_34 in any::<bool>(),
    ) {
        for info in POLICIES {
            let mut config = small_config(info.name, 128, [4, 6, 8]);
            // 3.4's literal choices, or the readings of the paper.
            if kernel_34 {
                config.dirty_writeback = DirtyWriteback::Flusher;
                config.dirty_background_ratio = 5;
                if info.has_priorities {
                    config.lumpy_gating = LumpyGating::CostlyOrPressure;
                }
                config.kswapd_high_order = true;
                config.lumpy_unmovable = LumpyUnmovable::Abort;
                config.rotate_referenced_active = false;
                config.new_anon_active = true;
            }
            config.swap_pages = 40;
            config.reserved_pages = 4;
            config.unmovable_per_mille = 50;
            config.memcg_low_pages = 20;
            let mut m = Machine::new(&config, 300, 3).unwrap();
            let mut held: Vec<(u32, u32)> = Vec::new();
            for op in &ops {
                match *op {
                    Op::Access { page, proc, write } => {
                        // Anonymous pages belong to one process.
                        let anon = page % 3 == 0;
                        let proc = if anon { page % 2 } else { proc };
                        m.access(page, proc, anon, write).unwrap();
                    }
                    Op::Input(p) => m.set_input(p),
                    Op::Foreground(p) => m.set_foreground(p),
                    Op::HighOrder(order) => {
                        if let Some(pfn) = m.allocate(order).unwrap() {
                            prop_assert_eq!(pfn % (1 << order), 0, "aligned");
                            m.mem.allocate_unmovable(pfn, order);
                            held.push((pfn, order));
                            if held.len() > 3 {
                                let (p, o) = held.remove(0);
                                m.mem.free_unmovable(p, o);
                            }
                        }
                    }
                }
                if let Err(e) = m.check() {
                    prop_assert!(false, "{}: {}", info.name, e);
                }
                let mem = &m.mem;
                let counted = (0..mem.total() as u32)
                    .filter(|&f| mem.frame(f).state == FrameState::Reserved)
                    .count();
                prop_assert_eq!(
                    mem.free() + mem.lru_pages() + mem.unmovable() + counted,
                    mem.total()
                );
                for f in 0..mem.total() as u32 {
                    let fr = mem.frame(f);
                    let listed = m.lists().list_of(f) != NO_LIST;
                    prop_assert_eq!(fr.state == FrameState::Page, listed);
                }
            }
        }
    }
}

#[test]
fn lumpy_gating_follows_set_reclaim_mode() {
    use super::policy::LumpyGating::{AnyOrder, CostlyOrPressure};
    for priority in 0..=12 {
        assert!(!AnyOrder.is_lumpy(0, priority));
        assert!(!CostlyOrPressure.is_lumpy(0, priority));
        for order in 1..=6 {
            assert!(AnyOrder.is_lumpy(order, priority));
            // 3.4: costly orders always, orders 1..=3 once priority < DEF_PRIORITY - 2.
            assert_eq!(
                CostlyOrPressure.is_lumpy(order, priority),
                order > 3 || priority < 10,
                "order {order} priority {priority}"
            );
        }
    }
}

/// 8,192 file pages filling frames 0..8192 of a 16,384-frame machine, so that the
/// first pass (priority 12) scans 2 pages of the inactive file list.
fn big_file_machine(gating: LumpyGating) -> Machine {
    let mut config = small_config("stock", 16384, [0, 0, 0]);
    config.lumpy_gating = gating;
    let mut m = Machine::new(&config, 8192, 1).unwrap();
    access_each(&mut m, 0..8192, 0, false, false);
    m
}

#[test]
fn small_order_reclaim_is_single_page_at_low_pressure_with_kernel_gating() {
    // The tag page (frame 0, the inactive tail) is referenced twice.
    for gating in [LumpyGating::AnyOrder, LumpyGating::CostlyOrPressure] {
        let mut m = big_file_machine(gating);
        m.access(0, 0, false, false).unwrap();
        m.access(0, 0, false, false).unwrap();
        let reclaimed = m.reclaim(Goal::Reclaim(1), 2);
        let c = &m.mem.counters;
        match gating {
            LumpyGating::AnyOrder => {
                // Lumpy at once: references ignored; the pass's two tag pages (0,
                // then 4 once 1..4 went with 0) bring the blocks 0..4 and 4..8.
                assert_eq!(reclaimed, 8);
                assert_eq!(c.lumpy_taken, 6);
                assert!(m.mem.frame_of(0).is_none());
            }
            LumpyGating::CostlyOrPressure => {
                // Priority 12 is single-page reclaim: the referenced tag page is
                // activated, the next one reclaimed alone, no neighbours taken.
                assert_eq!(reclaimed, 1);
                assert_eq!(c.lumpy_taken, 0);
                assert_eq!(m.list_of(0), ACTIVE_FILE);
                assert!(m.mem.frame_of(1).is_none() && m.mem.frame_of(2).is_some());
            }
        }
        m.check().unwrap();
    }
    // A costly order (4) is lumpy at every priority under either gating.
    let mut m = big_file_machine(LumpyGating::CostlyOrPressure);
    assert_eq!(m.reclaim(Goal::Reclaim(1), 4), 32);
    assert_eq!(m.mem.counters.lumpy_taken, 30);
}

/// A 512-frame machine (watermarks 8/10/12 pages) full of file pages but for one
/// frame in each aligned 8-frame block: 64 frames free, no free order-3 block.
fn fragmented(kswapd_high_order: bool) -> Machine {
    let mut config = small_config("stock", 512, [8, 10, 12]);
    config.kswapd_high_order = kswapd_high_order;
    let mut m = Machine::new(&config, 512, 1).unwrap();
    for pfn in 0..512u32 {
        m.mem.fault_in(pfn, pfn, 0, false);
        m.policy.lists_mut().push_head(INACTIVE_FILE, pfn);
    }
    for pfn in (3..512).step_by(8) {
        m.discard(pfn);
    }
    assert_eq!((m.mem.free(), m.mem.free_in_blocks(3)), (64, 0));
    m
}

#[test]
fn kswapd_balances_for_the_order_it_was_woken_with() {
    // The paper's kswapd looks at free memory only: 64 free frames are above low, so
    // the order-3 request reclaims directly.
    let mut m = fragmented(false);
    assert!(m.allocate(3).unwrap().is_some());
    assert_eq!(m.kswapd_runs, 0);
    assert!(m.direct_reclaims > 0);
    // 3.4: the order-3 watermark check fails against low, so kswapd is woken with
    // order 3 and reclaims until the order-3 check passes against high; the request
    // then needs no direct reclaim.
    let mut m = fragmented(true);
    let pfn = m.allocate(3).unwrap().expect("a block");
    assert_eq!(m.kswapd_runs, 1);
    assert_eq!(m.direct_reclaims, 0);
    assert!(
        m.mem.watermark_ok(3, 12),
        "balanced for order 3 before the allocation"
    );
    m.mem.allocate_unmovable(pfn, 3);
    m.check().unwrap();
}

#[test]
fn kswapd_gives_up_an_order_it_cannot_balance() {
    // Every aligned 8-frame block holds an unmovable frame: no order-3 block can be
    // made. kswapd tries, gives the order up, the request fails cleanly.
    let mut m = fragmented(true);
    for pfn in (0..512).step_by(8) {
        m.discard(pfn);
        m.mem.allocate_unmovable(pfn, 0);
    }
    assert_eq!(m.allocate(3).unwrap(), None);
    assert!(m.kswapd_runs >= 1);
    assert!(m.mem.free() >= 12);
    m.check().unwrap();
}

#[test]
fn dirty_file_pages_are_kept_for_the_flusher_in_kernel_mode() {
    // Pages 0..4 written (dirty), page 4 read; page 0 is at the inactive tail.
    let setup = |mode: DirtyWriteback| {
        let mut config = small_config("stock", 64, [0, 0, 0]);
        config.dirty_writeback = mode;
        config.dirty_background_ratio = 100; // the flusher stays idle
        let mut m = Machine::new(&config, 8, 1).unwrap();
        for page in 0..5 {
            m.access(page, 0, false, page < 4).unwrap();
        }
        assert_eq!(m.mem.dirty(), 4);
        m
    };
    // The reading of the paper: reclaim writes the tail page back and frees it at once.
    let mut m = setup(DirtyWriteback::InReclaim);
    assert_eq!(m.reclaim(Goal::Reclaim(1), 0), 1);
    assert!(m.mem.frame_of(0).is_none());
    assert_eq!(m.mem.counters.writebacks, 1);
    // 3.4: the four dirty pages are kept (PG_reclaim, back at the inactive head) and
    // the clean page behind them goes instead.
    let mut m = setup(DirtyWriteback::Flusher);
    assert_eq!(m.reclaim(Goal::Reclaim(1), 0), 1);
    assert!(m.mem.frame_of(4).is_none());
    assert!((0..4).all(|p| m.mem.frame_of(p).is_some()));
    // (Met more than once: the small list is rescanned at lower priorities.)
    assert!(m.mem.counters.dirty_kept >= 4);
    assert_eq!(m.mem.counters.writebacks, 0);
    assert!((0..4).all(|p| m.mem.frame(m.mem.frame_of(p).unwrap()).is_reclaim()));
    // By the next call their writeback has ended: clean, rotated to the inactive tail
    // (the last written, page 3, at the very tail), reclaimed first.
    m.access(5, 0, false, false).unwrap();
    assert_eq!(m.reclaim(Goal::Reclaim(1), 0), 1);
    assert!(m.mem.frame_of(3).is_none() && m.mem.frame_of(5).is_some());
    assert_eq!(m.mem.counters.writebacks, 4);
    assert_eq!(m.mem.dirty(), 0);
    assert_eq!(
        m.lists().frames(INACTIVE_FILE).last(),
        m.mem.frame_of(2).as_ref()
    );
    m.check().unwrap();
}

#[test]
fn mglru_keeps_dirty_file_pages_for_the_flusher_too() {
    // As the two-list test above: pages 0..4 written, page 4 read, page 0 at the tail
    // of the oldest file generation.
    let mut config = small_config("mglru", 64, [0, 0, 0]);
    config.dirty_writeback = DirtyWriteback::Flusher;
    let mut policy = MgLru::with_config(&config);
    let mut mem = Memory::new(64, &[], 8, 1, 64);
    mem.set_flusher(true);
    let mut pfn_of = [0u32; 5];
    for page in 0..5u32 {
        let pfn = fault_in(&mut mem, &mut policy, page, false);
        if page < 4 {
            mem.mark_dirty(pfn);
        }
        pfn_of[page as usize] = pfn;
    }
    let oldest = policy.min_seq()[1];
    let req = ShrinkRequest::reclaim(1);
    assert_eq!(policy.shrink(&mut mem, &req), 1);
    // The clean page went; the dirty ones wait one generation up, PG_reclaim set,
    // nothing written by reclaim.
    assert!(mem.frame_of(4).is_none());
    assert_eq!(mem.counters.writebacks, 0);
    assert_eq!(mem.counters.dirty_kept, 4);
    for &pfn in &pfn_of[..4] {
        let f = mem.frame(pfn);
        assert!(f.is_dirty() && f.is_reclaim());
        assert_eq!(policy.gen_of(pfn), oldest + 1);
    }
    // Their writeback ends: clean, at the tail of the oldest file generation in the
    // order they were kept (page 3 last, at the very tail).
    for pfn in mem.end_kept_writeback() {
        policy.rotate_reclaimable(&mut mem, pfn);
    }
    assert_eq!(mem.counters.writebacks, 4);
    assert_eq!(mem.dirty(), 0);
    let oldest_list = policy.lists().list_of(pfn_of[3]);
    let tail_first: Vec<u32> = policy
        .lists()
        .frames(oldest_list)
        .into_iter()
        .rev()
        .collect();
    assert_eq!(tail_first, [pfn_of[3], pfn_of[2], pfn_of[1], pfn_of[0]]);
    assert!(pfn_of[..4].iter().all(|&p| policy.gen_of(p) == oldest));
    mem.check().unwrap();
}

#[test]
fn flusher_mode_frees_no_dirty_page_under_any_policy() {
    // A stream of file pages, every other one written, with the flusher idle (ratio
    // 100): the only writebacks are those of pages reclaim kept, once their writeback
    // ends; a dirty page reclaim wrote and freed itself would be one more.
    for info in POLICIES {
        let mut m = flusher_machine(small_config(info.name, 128, [4, 6, 8]), 100, 1000);
        for page in 0..1000u32 {
            m.access(page, 0, false, page % 2 == 0).unwrap();
            let c = &m.mem.counters;
            assert!(
                c.writebacks <= c.dirty_kept,
                "{}: page {page}: {} writebacks, {} kept",
                info.name,
                c.writebacks,
                c.dirty_kept
            );
        }
        assert!(m.mem.counters.dirty_kept > 0, "{}", info.name);
        m.check().unwrap();
    }
}

#[test]
fn mglru_refuses_priority_gated_lumpy_reclaim() {
    let mut config = small_config("mglru", 64, [0, 0, 0]);
    config.lumpy_gating = LumpyGating::CostlyOrPressure;
    let e = config.validate().unwrap_err().to_string();
    assert!(
        e.contains("lumpy_gating = \"costly-or-pressure\"") && e.contains("mglru"),
        "{e}"
    );
    // The name in the message is the one a config file uses.
    let parsed: ReclaimConfig = toml::from_str("lumpy_gating = \"costly-or-pressure\"").unwrap();
    assert_eq!(parsed.lumpy_gating, LumpyGating::CostlyOrPressure);
    config.policy = "stock".into();
    config.validate().unwrap();
}

#[test]
fn flusher_writes_in_dirtying_order_after_a_kept_page_was_written() {
    // As above: pages 0..4 written, 4 read; reclaim keeps 0..3 and frees 4, the next
    // call writes 0..3 back (their writeback ended) and frees page 3.
    let mut m = flusher_machine(small_config("stock", 64, [0, 0, 0]), 100, 16); // idle until lowered below
    for page in 0..5 {
        m.access(page, 0, false, page < 4).unwrap();
    }
    m.reclaim(Goal::Reclaim(1), 0);
    m.access(5, 0, false, false).unwrap();
    m.reclaim(Goal::Reclaim(1), 0);
    assert_eq!(m.mem.dirty(), 0);
    assert!((0..3).all(|p| m.mem.frame_of(p).is_some()));
    // Dirtied again, in the order 2, 6 (new), 0.
    access_each(&mut m, [2, 6, 0], 0, false, true);
    let frame = |m: &Machine, page| m.mem.frame_of(page).unwrap();
    let order: Vec<u32> = [2, 6, 0].iter().map(|&p| frame(&m, p)).collect();
    assert_eq!(m.mem.dirty_frames(), order);
    // The flusher now keeps at most 3 pages dirty (5% of the 64 frames): dirtying a
    // fourth writes the oldest, page 2, and nothing else.
    m.flusher = Some(5);
    m.access(7, 0, false, true).unwrap();
    let dirty = |m: &Machine, page| m.mem.frame(frame(m, page)).is_dirty();
    assert!(!dirty(&m, 2));
    assert!(dirty(&m, 6) && dirty(&m, 0) && dirty(&m, 7));
    assert_eq!(m.mem.dirty_frames().len(), 3);
    m.check().unwrap();
}

#[test]
fn the_flusher_holds_each_dirty_page_once() {
    // Ten resident file pages written over and over while the flusher writes them:
    // what it has to write is the dirty pages, each once, however often they were
    // dirtied before.
    let mut m = flusher_machine(small_config("stock", 256, [8, 10, 12]), 1, 10);
    for round in 0..2000u32 {
        m.access(round % 10, 0, false, true).unwrap();
        let frames = m.mem.dirty_frames();
        assert_eq!(frames.len(), m.mem.dirty());
        assert!(frames.len() <= 2, "round {round}: {} dirty", frames.len());
    }
    assert!(m.mem.counters.writebacks > 1900);
    m.check().unwrap();
}

#[test]
fn flusher_keeps_dirty_pages_under_the_background_ratio() {
    let mut m = flusher_machine(small_config("stock", 256, [8, 10, 12]), 10, 2000);
    for page in 0..2000 {
        m.access(page, 0, false, true).unwrap();
        let bound = (m.mem.free() + m.mem.lru_pages()) / 10;
        assert!(
            m.mem.dirty() <= bound,
            "page {page}: {} dirty",
            m.mem.dirty()
        );
    }
    // The flusher wrote the oldest first: of the resident pages, the newest are dirty.
    let resident: Vec<u32> = (0..2000).filter(|&p| m.mem.frame_of(p).is_some()).collect();
    let dirty: Vec<bool> = resident
        .iter()
        .map(|&p| m.mem.frame(m.mem.frame_of(p).unwrap()).is_dirty())
        .collect();
    assert!(dirty.windows(2).all(|w| w[0] <= w[1]), "clean then dirty");
    assert!(m.mem.counters.writebacks > 1500);
    m.check().unwrap();
}

#[test]
fn lumpy_stops_at_reserved_frames_and_unswappable_neighbours() {
    // Frames 0..8, frame 2 reserved at boot; file pages elsewhere but an anonymous
    // page in frame 5; `swap` slots.
    let block = |swap: usize, mode: LumpyUnmovable| {
        let mut mem = Memory::new(8, &[2], 8, 1, swap);
        let mut lists = LruLists::new(8);
        for pfn in (0..8u32).filter(|&p| p != 2) {
            mem.fault_in(pfn, pfn, 0, pfn == 5);
            lists.push_head(INACTIVE_FILE, pfn);
        }
        lists.unlink(0);
        let mut out = Vec::new();
        isolate_lumpy_block(&mut mem, &mut lists, 0, 3, mode, &mut |_, _| true, &mut out);
        (out, mem.counters.lumpy_failed)
    };
    // Skip (the paper) goes past the reserved frame, Abort (3.4) ends the block there.
    assert_eq!(block(8, LumpyUnmovable::Skip), (vec![1, 3, 4, 5, 6, 7], 1));
    assert_eq!(block(8, LumpyUnmovable::Abort), (vec![1], 1));
    // With swap full the anonymous neighbour ends the block (3.4: reclaiming it is
    // pointless), in either mode.
    assert_eq!(block(0, LumpyUnmovable::Skip), (vec![1, 3, 4], 1));
    assert_eq!(block(0, LumpyUnmovable::Abort), (vec![1], 1));
}

#[test]
fn direct_reclaim_starts_only_below_min() {
    // Anonymous pages and no swap: kswapd is woken below low but frees nothing, so
    // the allocations go on until one would take free memory below min, which then
    // reclaims directly (and, nothing being reclaimable, dips into the reserve).
    let (min, low, high) = (8, 10, 12);
    let mut config = small_config("stock", 64, [min, low, high]);
    config.swap_pages = 0;
    let mut m = Machine::new(&config, 200, 1).unwrap();
    let mut first_direct = None;
    for page in 0..64u32 {
        let (free, direct) = (m.mem.free(), m.direct_reclaims);
        if m.access(page, 0, true, true).is_err() {
            break;
        }
        if m.direct_reclaims > direct {
            // Taking one frame would have left free memory below min.
            assert!(free - 1 < min as usize, "page {page}: {free} free");
            first_direct.get_or_insert((page, free));
        } else {
            assert!(free > min as usize || free == 0, "page {page}: {free} free");
        }
    }
    let (_, free) = first_direct.expect("direct reclaim ran");
    assert_eq!(free, min as usize);
    assert!(m.kswapd_runs > 0 && m.reserve_dips > 0);
    // With file pages to drop, kswapd keeps free memory above min and no
    // allocation reclaims directly.
    let mut m = Machine::new(&config, 200, 1).unwrap();
    access_each(&mut m, 0..200u32, 0, false, false);
    assert_eq!(m.direct_reclaims, 0);
    assert!(m.mem.free() >= min as usize);
}

#[test]
fn memcg_low_protects_in_proportion_above_low() {
    // The foreground app (task 0) holds 40 pages against memory.low = 20.
    let resident_after_stream = |proportional: bool| {
        let mut config = small_config("memcg-low", 256, [8, 10, 12]);
        config.memcg_low_pages = 20;
        config.memcg_proportional = proportional;
        let mut m = Machine::new(&config, 4000, 2).unwrap();
        m.set_foreground(0);
        access_each(&mut m, 0..40, 0, false, false);
        access_each(&mut m, 1000..1400, 1, false, true);
        (m.mem.resident_of(0), m.mem.counters.protected_skips)
    };
    let (proportional, skips) = resident_after_stream(true);
    let (plain, plain_skips) = resident_after_stream(false);
    // Without proportional protection its pages go as any other's until its usage is
    // down to low, where full protection starts; with it, a share low/usage of its
    // candidates is passed over on the way, so reclaim stops short of low.
    assert_eq!(plain, 20);
    assert!(proportional > plain && proportional < 40, "{proportional}");
    assert!(skips > plain_skips, "{skips} {plain_skips}");
}

#[test]
fn fmp_spares_interactive_pages_while_other_pages_are_reclaimable_in_mixed_memory() {
    // Task 1 holds 40 anonymous pages of which only 10 fit in swap (the rest stay,
    // unreclaimable) and streams 100 file pages read once; then the interactive
    // task 0 faults in 400 file pages. Memory: 128 frames.
    let run = |policy: &str| {
        let mut config = small_config(policy, 128, [4, 6, 8]);
        config.swap_pages = 10;
        let mut m = Machine::new(&config, 2000, 2).unwrap();
        m.set_input(0);
        access_each(&mut m, 1000..1040, 1, true, true);
        access_each(&mut m, 1100..1200, 1, false, false);
        let mut early_evictions = 0;
        let mut evicted_total = 0;
        for (n, page) in (0..400u32).enumerate() {
            let evicted_before = n - m.mem.resident_of(0);
            m.access(page, 0, false, false).unwrap();
            let evicted = n + 1 - m.mem.resident_of(0);
            // Pages of task 1 that reclaim could still free: its file pages, and its
            // anonymous pages while swap has room.
            let others_reclaimable = (0..m.mem.total() as u32).any(|pfn| {
                let f = m.mem.frame(pfn);
                f.state == FrameState::Page
                    && m.mem.owner_of_frame(pfn) == 1
                    && (!f.is_anon() || m.mem.swap_free() > 0)
            });
            if evicted > evicted_before && others_reclaimable {
                early_evictions += 1;
            }
            evicted_total = evicted;
        }
        m.check().unwrap();
        (early_evictions, evicted_total, m.mem.resident_of(1))
    };
    let (early, evicted, others) = run("fmp");
    assert_eq!(
        early, 0,
        "fmp evicted an interactive page while others were reclaimable"
    );
    assert!(
        evicted > 0,
        "the fallback ran once only interactive pages were left"
    );
    assert_eq!(
        others, 30,
        "task 1's unswappable pages stay: the memory is mixed"
    );
    // Stock evicts interactive pages while task 1's are still there.
    let (early, _, _) = run("stock");
    assert!(early > 0);
}

#[test]
fn mglru_honours_swappiness_and_lumpy_unmovable() {
    // Anonymous and file pages in the same oldest generations: swappiness 0 evicts
    // file pages only, 200 anonymous pages first.
    let evicted = |swappiness: u32| {
        let mut config = small_config("mglru", 64, [0, 0, 0]);
        config.swappiness = swappiness;
        let mut policy = MgLru::with_config(&config);
        let mut mem = Memory::new(64, &[], 16, 1, 64);
        for page in 0..16u32 {
            fault_in(&mut mem, &mut policy, page, page % 2 == 0);
        }
        let req = ShrinkRequest::reclaim(4);
        policy.shrink(&mut mem, &req);
        (mem.counters.swap_outs, mem.counters.file_drops)
    };
    // (A batch evicts up to 32 pages of the oldest generation, so all 8 of a type.)
    assert_eq!(evicted(0), (0, 8));
    assert_eq!(evicted(60), (0, 8), "file first on a tie");
    assert_eq!(evicted(200), (8, 0));
    // lumpy_unmovable = "abort" ends a block at an unmovable frame under MGLRU too.
    let taken = |mode: LumpyUnmovable| {
        let mut config = small_config("mglru", 8, [0, 0, 0]);
        config.lumpy_unmovable = mode;
        let mut policy = MgLru::with_config(&config);
        let mut mem = Memory::new(8, &[], 8, 1, 8);
        for pfn in 0..8u32 {
            if pfn == 2 {
                mem.allocate_unmovable(pfn, 0);
                continue;
            }
            mem.fault_in(pfn, pfn, 0, false);
            policy.add_page(&mut mem, pfn);
        }
        let req = ShrinkRequest {
            order: 3,
            ..ShrinkRequest::reclaim(1)
        };
        policy.shrink(&mut mem, &req);
        mem.counters.lumpy_taken
    };
    assert_eq!(taken(LumpyUnmovable::Skip), 6);
    assert_eq!(taken(LumpyUnmovable::Abort), 1);
}

#[test]
fn the_clock_lengthens_responses_by_waits_and_changes_no_count() {
    // The gallery-usb workload with its transfer, summed and on the clock: every count
    // is the same; on the clock each interaction is its summed time plus what it waited
    // for (CPUs, the flash queue behind the writeback), so no mean is shorter.
    let wl = workload::GalleryUsbConfig {
        interactions: 12,
        ..Default::default()
    };
    let trace = workload::generate(&wl, 3).unwrap();
    let timed = ReclaimConfig {
        memory_pages: 16384,
        ..Default::default()
    };
    let mut summed = timed.clone();
    summed.time.accounting = crate::mm::clock::Accounting::Sum;
    let (a, b) = (run(&timed, &trace).unwrap(), run(&summed, &trace).unwrap());
    assert_eq!(a.counters, b.counters);
    assert_eq!(a.per_process, b.per_process);
    assert_eq!(a.interactive, b.interactive);
    assert!(a.counters.writebacks > 0, "the transfer is written back");
    assert!(
        a.rt_mean_ms >= b.rt_mean_ms - 1e-6,
        "{} {}",
        a.rt_mean_ms,
        b.rt_mean_ms
    );
    assert!(a.rt_p95_ms >= b.rt_p95_ms - 1e-6);
    assert!(b.memory_stall_s.is_none() && b.flash_queue_wait_ms.is_none());
    // The interactive task's major faults alone stall it for T_pf each, and PSI's SOME
    // counts at least one task's stall (its own reads do not overlap each other).
    let stall = a.memory_stall_s.unwrap();
    let own = a.interactive.major() as f64 * timed.fault_ms / 1e3;
    assert!(stall >= own * 0.99, "{stall} against {own}");
}
