//! Swap invariants on random traces, for every architecture, both slot readings and both
//! reclaim orders, checked after every event:
//! - DRAM never holds more than its size, counting the zram pool's frames;
//! - a swapped-out page lives in exactly one place, and every device's occupancy is the
//!   pages it holds (`SwapRun::validate`);
//! - every swap-in reads the device that holds the page at that moment, following the
//!   page through the demotions and writebacks logged before it;
//! - no page changes device without a logged write;
//! - the device counters equal the logged operations, and the run's figures equal the
//!   counts of the corresponding operations.

use std::collections::HashMap;

use mobmem::mm::swap::{
    IoCause, IoOp, IoRecord, ReclaimOrder, SlotOnSwapIn, SwapConfig, SwapDevice, SwapRun,
    ARCHITECTURES,
};
use mobmem::trace::{Event, Tables};
use proptest::prelude::*;

const PAGES: u32 = 40;

#[derive(Debug, Clone)]
enum Op {
    Access { proc: u32, page: u32, write: bool },
    Importance { proc: u32, adj: i16 },
    Exit { proc: u32 },
}

fn ops() -> impl Strategy<Value = Vec<(Op, u64)>> {
    let op = prop_oneof![
        12 => (0u32..3, 0..PAGES, any::<bool>())
            .prop_map(|(proc, page, write)| Op::Access { proc, page, write }),
        2 => (0u32..3, prop_oneof![Just(0i16), Just(700), Just(900)])
            .prop_map(|(proc, adj)| Op::Importance { proc, adj }),
        1 => (0u32..3).prop_map(|proc| Op::Exit { proc }),
    ];
    // Time steps up to more than a day, so that writeback budgets renew.
    let gap = prop_oneof![
        Just(1u64),
        Just(1_000_000),
        Just(2_000_000_000),
        Just(100_000_000_000_000)
    ];
    proptest::collection::vec((op, gap), 1..300)
}

#[derive(Debug, Clone)]
struct Setup {
    dram: usize,
    nvm: usize,
    pool: usize,
    writeback_limit: u64,
    idle_age_ns: u64,
    incompressible_share: f64,
    window_ns: u64,
}

fn setups() -> impl Strategy<Value = Setup> {
    (
        1usize..8,
        0usize..6,
        0usize..8,
        0u64..4,
        prop_oneof![Just(0u64), Just(3_000_000_000)],
        prop_oneof![Just(0.0), Just(0.3), Just(1.0)],
        prop_oneof![Just(0u64), Just(5_000_000), Just(1_000_000_000)],
    )
        .prop_map(
            |(dram, nvm, pool, writeback_limit, idle_age_ns, incompressible_share, window_ns)| {
                Setup {
                    dram,
                    nvm,
                    pool: pool % dram,
                    writeback_limit,
                    idle_age_ns,
                    incompressible_share,
                    window_ns,
                }
            },
        )
}

fn config(
    architecture: &str,
    setup: &Setup,
    slot: SlotOnSwapIn,
    reclaim: ReclaimOrder,
) -> SwapConfig {
    let mut c = SwapConfig {
        architecture: architecture.into(),
        dram_pages: setup.dram,
        nvm_pages: setup.nvm,
        slot_on_swap_in: slot,
        reclaim,
        ..Default::default()
    };
    c.zram.pool_pages = setup.pool;
    c.zram.writeback_limit_pages_per_day = setup.writeback_limit;
    c.zram.idle_age_ns = setup.idle_age_ns;
    c.devices.zram.incompressible_share = setup.incompressible_share;
    c.launch.window_ns = setup.window_ns;
    c
}

fn events(ops: &[(Op, u64)]) -> Vec<Event> {
    let mut now = 0u64;
    ops.iter()
        .map(|(op, gap)| {
            now += gap;
            match *op {
                Op::Access { proc, page, write } => Event::access(now, proc, page, write, true),
                Op::Importance { proc, adj } => Event::importance(now, proc, adj),
                Op::Exit { proc } => Event::exit(now, proc),
            }
        })
        .collect()
}

/// Follow the logged operations of one step from where the pages were before it; fail
/// on a read from a device that does not hold the page.
fn check_step(
    machine: &SwapRun,
    before: &[Option<SwapDevice>],
    log: &[IoRecord],
) -> Result<(), TestCaseError> {
    let mut shadow = before.to_vec();
    for r in log {
        let here = &mut shadow[r.page as usize];
        match (r.op, r.cause) {
            (IoOp::Write, _) => *here = Some(r.device),
            (IoOp::Read, IoCause::SwapIn) => {
                prop_assert_eq!(
                    *here,
                    Some(r.device),
                    "swap-in of page {} from a device that does not hold it",
                    r.page
                );
            }
            (IoOp::Read, cause @ (IoCause::Demote | IoCause::Writeback)) => {
                // A demotion reads the page from NVM, a writeback from the zram pool.
                let from = if cause == IoCause::Demote {
                    SwapDevice::Nvm
                } else {
                    SwapDevice::Zram
                };
                prop_assert_eq!(r.device, from);
                prop_assert_eq!(
                    *here,
                    Some(from),
                    "{:?} of page {} not in {:?}",
                    cause,
                    r.page,
                    from
                );
            }
            (IoOp::Read, cause) => prop_assert!(false, "unexpected read for {:?}", cause),
        }
    }
    // Slots may be freed without I/O (swap-in, death), but never appear or move silently.
    for page in 0..PAGES {
        let now = machine.slot_of(page);
        prop_assert!(
            now.is_none() || now == shadow[page as usize],
            "page {page} is on {now:?} but its operations put it on {:?}",
            shadow[page as usize]
        );
    }
    Ok(())
}

fn run_checked(config: &SwapConfig, events: &[Event]) -> Result<(), TestCaseError> {
    let name = &config.architecture;
    let mut machine = SwapRun::new(config, 0, 0).map_err(|e| TestCaseError::fail(e.to_string()))?;
    machine.enable_io_log();
    let mut all: Vec<IoRecord> = Vec::new();
    let mut launches = 0u64;
    let mut adj: HashMap<u32, i16> = HashMap::new();
    for (index, event) in events.iter().enumerate() {
        let before: Vec<Option<SwapDevice>> = (0..PAGES).map(|p| machine.slot_of(p)).collect();
        machine
            .step(index, event)
            .map_err(|e| TestCaseError::fail(format!("{name}: {e}")))?;
        machine
            .validate()
            .map_err(|e| TestCaseError::fail(format!("{name} after event {index}: {e}")))?;
        prop_assert!(machine.dram_used() <= config.dram_pages);
        let log = machine.take_io_log();
        check_step(&machine, &before, &log)?;
        all.extend(log);
        if let mobmem::trace::EventKind::Importance = event.kind() {
            let was = adj.insert(event.proc(), event.oom_score_adj());
            if event.oom_score_adj() == 0 && was != Some(0) {
                launches += 1;
            }
        }
    }
    let count = |device: SwapDevice, op: IoOp| {
        all.iter()
            .filter(|r| r.device == device && r.op == op)
            .count() as u64
    };
    let io = *machine.io_counts();
    prop_assert_eq!(io.flash_reads, count(SwapDevice::Flash, IoOp::Read));
    prop_assert_eq!(io.flash_writes, count(SwapDevice::Flash, IoOp::Write));
    prop_assert_eq!(io.nvm_reads, count(SwapDevice::Nvm, IoOp::Read));
    prop_assert_eq!(io.nvm_writes, count(SwapDevice::Nvm, IoOp::Write));
    prop_assert_eq!(io.zram_decompressions, count(SwapDevice::Zram, IoOp::Read));
    prop_assert_eq!(io.zram_compressions, count(SwapDevice::Zram, IoOp::Write));
    let m = machine.finish(&Tables::default()).unwrap();
    let caused = |op: IoOp, cause: IoCause| {
        all.iter()
            .filter(|r| r.op == op && r.cause == cause)
            .count() as u64
    };
    prop_assert_eq!(m.swap_ins, caused(IoOp::Read, IoCause::SwapIn), "{}", name);
    prop_assert_eq!(
        m.swap_outs - m.clean_swap_outs,
        caused(IoOp::Write, IoCause::SwapOut),
        "{}",
        name
    );
    prop_assert_eq!(m.io.demotions, caused(IoOp::Read, IoCause::Demote));
    prop_assert_eq!(m.io.promotions, caused(IoOp::Write, IoCause::Promote));
    prop_assert_eq!(m.io.writebacks, caused(IoOp::Read, IoCause::Writeback));
    prop_assert!(m.single_access_pages <= m.pages_swapped_in);
    prop_assert!(m.pages_swapped_in <= m.swap_ins);
    prop_assert_eq!(m.accesses, m.dram_hits + m.swap_ins + m.fresh_allocations);
    prop_assert_eq!(m.first_launches + m.cold_starts + m.warm_launches, launches);
    if name == "none" {
        prop_assert!(all.is_empty());
    }
    if name != "none" && !name.starts_with("zram") {
        // Flash never runs out of slots: nothing is ever killed for room.
        prop_assert_eq!(m.kills, 0, "{}", name);
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn every_architecture_keeps_its_invariants(ops in ops(), setup in setups()) {
        let events = events(&ops);
        for info in ARCHITECTURES {
            for slot in [SlotOnSwapIn::Free, SlotOnSwapIn::Keep] {
                for reclaim in [ReclaimOrder::AppImportance, ReclaimOrder::GlobalLru] {
                    run_checked(&config(info.name, &setup, slot, reclaim), &events)?;
                }
            }
        }
    }
}

#[test]
fn configs_that_cannot_run_are_refused() {
    let cases = [
        (
            SwapConfig {
                architecture: "hybrid".into(),
                ..Default::default()
            },
            "parallel-filtered",
        ),
        (
            SwapConfig {
                dram_pages: 0,
                ..Default::default()
            },
            "dram_pages",
        ),
        (
            SwapConfig {
                architecture: "zram".into(),
                dram_pages: 100,
                ..Default::default()
            },
            "pool_pages",
        ),
    ];
    for (config, word) in cases {
        let err = SwapRun::new(&config, 0, 0)
            .err()
            .expect("refused")
            .to_string();
        assert!(err.contains(word), "'{err}' should mention {word}");
    }
    let mut config = SwapConfig::default();
    config.devices.flash.read_ns = -1.0;
    assert!(SwapRun::new(&config, 0, 0)
        .err()
        .unwrap()
        .to_string()
        .contains("read_ns"));
}

#[test]
fn a_config_reads_from_toml_and_refuses_unknown_fields() {
    let config: SwapConfig = toml::from_str(
        "architecture = \"hierarchical-lru\"\nnvm_pages = 100\nslot_on_swap_in = \"keep\"\n[launch]\nwarm_base_ns = 2e8\n",
    )
    .unwrap();
    assert_eq!(config.architecture, "hierarchical-lru");
    assert_eq!(config.slot_on_swap_in, SlotOnSwapIn::Keep);
    assert_eq!(config.launch.warm_base_ns, 2e8);
    assert_eq!(config.dram_pages, SwapConfig::default().dram_pages);
    assert!(toml::from_str::<SwapConfig>("nvm_size = 3").is_err());
}
