//! Replaying swap traces: swap-out and swap-in events drive an architecture with no DRAM
//! model. Worked by hand, the errors for impossible traces (with the event's index), and
//! an oracle: the swap-outs and swap-ins a simulation performed, replayed on the same
//! architecture, give exactly the same device operations.

use crate::common;
use common::assert_mentions;

use mobmem::mm::swap::{
    replay, IoCause, IoOp, SlotOnSwapIn, SwapConfig, SwapDevice, SwapRun, ARCHITECTURES,
};
use mobmem::trace::{Event, EventKind, Tables, Trace};
use proptest::prelude::*;

fn config(architecture: &str, nvm: usize, slot: SlotOnSwapIn) -> SwapConfig {
    SwapConfig {
        architecture: architecture.into(),
        dram_pages: 4,
        nvm_pages: nvm,
        slot_on_swap_in: slot,
        ..Default::default()
    }
}

fn trace(events: Vec<Event>) -> Trace {
    Trace {
        events,
        tables: Tables::default(),
    }
}

fn out(page: u32) -> Event {
    Event::swap_out(0, 0, page)
}

fn back(page: u32) -> Event {
    Event::swap_in(0, 0, page)
}

#[test]
fn the_filter_replayed_by_hand() {
    // NVM 1 slot, slots freed on swap-in.
    let events = vec![
        out(1),  // first swap-out: flash
        out(2),  // flash
        back(1), // flash read; 1's bit set
        out(1),  // still single-access: flash
        back(1), // flash read with the bit set: multi-access
        out(1),  // NVM
        back(2), // flash read
        out(2),  // flash (single-access so far)
        back(1), // NVM read
        Event::access(0, 0, 9, false, true),
    ];
    let config = config("parallel-filtered", 1, SlotOnSwapIn::Free);
    let mut machine = SwapRun::for_replay(&config, 0, 0).unwrap();
    machine.enable_io_log();
    let mut log = Vec::new();
    for (i, e) in events.iter().enumerate() {
        machine.step(i, e).unwrap();
        machine.validate().unwrap();
        log.extend(
            machine
                .take_io_log()
                .into_iter()
                .map(|r| (r.device, r.op, r.page)),
        );
    }
    use IoOp::{Read, Write};
    use SwapDevice::{Flash, Nvm};
    assert_eq!(
        log,
        vec![
            (Flash, Write, 1),
            (Flash, Write, 2),
            (Flash, Read, 1),
            (Flash, Write, 1),
            (Flash, Read, 1),
            (Nvm, Write, 1),
            (Flash, Read, 2),
            (Flash, Write, 2),
            (Nvm, Read, 1),
        ]
    );
    let m = machine.finish(&Tables::default()).unwrap();
    assert_eq!((m.swap_outs, m.swap_ins, m.swapped_pages), (5, 4, 2));
    assert_eq!((m.ignored_accesses, m.accesses), (1, 0));
    // 1 swapped in 3 times, 2 once: 1 of 4 swap-ins is single-access.
    assert_eq!(m.single_access_share, 0.25);
}

#[test]
fn kept_slots_are_rewritten_in_place() {
    // Flash only, slots kept: the second swap-out of 1 writes the slot it kept.
    let m = replay(
        &trace(vec![out(1), back(1), out(1), back(1)]),
        &config("flash", 0, SlotOnSwapIn::Keep),
    )
    .unwrap();
    assert_eq!((m.io.flash_writes, m.io.flash_reads), (2, 2));
    assert_eq!(m.clean_swap_outs, 0);
}

#[test]
fn impossible_traces_name_the_event() {
    let flash = config("flash", 0, SlotOnSwapIn::Free);
    let cases = [
        (
            vec![out(1), back(1), back(2)],
            "event 2",
            "page 2, which was never swapped out",
        ),
        (
            vec![out(1), back(1), back(1)],
            "event 2",
            "swapped in already",
        ),
        (
            vec![out(1), out(2), out(1)],
            "event 2",
            "page 1 swapped out again",
        ),
    ];
    for (events, position, what) in cases {
        let err = replay(&trace(events), &flash).unwrap_err().to_string();
        assert!(err.contains(position) && err.contains(what), "{err}");
    }
    let err = replay(&trace(vec![out(1)]), &config("none", 0, SlotOnSwapIn::Free))
        .unwrap_err()
        .to_string();
    assert_mentions(&err, &["no swap"]);
    // Ids beyond the trace's tables are refused before anything is sized by them.
    let mut stray = trace(vec![out(1), Event::swap_out(0, 0, 7)]);
    stray.tables.pages = vec![mobmem::trace::PageKey::anon(1, 0); 2];
    let err = replay(&stray, &flash).unwrap_err().to_string();
    assert_mentions(&err, &["event 1", "page id 7"]);
    // Simulation refuses swap events and points to replay.
    let err = mobmem::mm::swap::run(&trace(vec![out(1)]), &flash)
        .unwrap_err()
        .to_string();
    assert_mentions(&err, &["event 0", "replay"]);
}

#[test]
fn a_full_zram_pool_kills_another_app_whose_pages_come_back_fresh() {
    // Pool of 1 page holds 2 compressed pages (1639 bytes each).
    let mut config = config("zram", 0, SlotOnSwapIn::Free);
    config.zram.pool_pages = 1;
    config.devices.zram.incompressible_share = 0.0;
    let events = vec![
        Event::importance(0, 0, 900),
        Event::importance(0, 1, 0),
        Event::swap_out(0, 0, 10),
        Event::swap_out(0, 0, 11),
        // No room: app 0 (900) is killed, its pages leave the pool.
        Event::swap_out(0, 1, 20),
        // App 0's page was lost with it: a fresh allocation, no I/O.
        Event::swap_in(0, 0, 10),
        Event::swap_in(0, 1, 20),
    ];
    let m = replay(&trace(events), &config).unwrap();
    assert_eq!((m.kills, m.fresh_allocations), (1, 1));
    assert_eq!((m.io.zram_compressions, m.io.zram_decompressions), (3, 1));
}

/// A random trace of accesses and importance changes.
fn accesses() -> impl Strategy<Value = Vec<Event>> {
    let op = prop_oneof![
        10 => (0u32..3, 0u32..30, any::<bool>()).prop_map(|(p, page, w)| (p, Some((page, w)), 0i16)),
        1 => (0u32..3, prop_oneof![Just(0i16), Just(700), Just(900)]).prop_map(|(p, adj)| (p, None, adj)),
    ];
    proptest::collection::vec(op, 1..300).prop_map(|ops| {
        ops.into_iter()
            .enumerate()
            .map(|(i, (proc, access, adj))| match access {
                Some((page, write)) => Event::access(i as u64, proc, page, write, true),
                None => Event::importance(i as u64, proc, adj),
            })
            .collect()
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// The swap-outs and swap-ins a simulation made, replayed on the same architecture,
    /// cost exactly the same device operations.
    #[test]
    fn replaying_a_simulation_repeats_its_device_operations(
        events in accesses(), dram in 1usize..6, nvm in 0usize..5
    ) {
        for info in ARCHITECTURES.iter().filter(|a| a.name != "none" && !a.uses_zram) {
            let sim_config = SwapConfig {
                dram_pages: dram,
                ..config(info.name, nvm, SlotOnSwapIn::Free)
            };
            let mut machine = SwapRun::new(&sim_config, 0, 0).unwrap();
            machine.enable_io_log();
            let mut swap_events = Vec::new();
            for (i, event) in events.iter().enumerate() {
                machine.step(i, event).unwrap();
                if event.kind() == EventKind::Importance {
                    swap_events.push(*event);
                }
                for r in machine.take_io_log() {
                    match (r.op, r.cause) {
                        (IoOp::Write, IoCause::SwapOut) => {
                            swap_events.push(Event::swap_out(event.time_ns(), event.proc(), r.page))
                        }
                        (IoOp::Read, IoCause::SwapIn) => {
                            swap_events.push(Event::swap_in(event.time_ns(), event.proc(), r.page))
                        }
                        _ => {}
                    }
                }
            }
            let simulated = machine.finish(&Tables::default()).unwrap();
            let replayed = replay(&trace(swap_events), &sim_config)
                .map_err(|e| TestCaseError::fail(format!("{}: {e}", info.name)))?;
            prop_assert_eq!(simulated.io, replayed.io, "{}", info.name);
            prop_assert_eq!(simulated.swap_ins, replayed.swap_ins);
            prop_assert_eq!(simulated.swap_outs, replayed.swap_outs);
            prop_assert_eq!(simulated.single_access_share, replayed.single_access_share);
            prop_assert_eq!(simulated.io_time_ns, replayed.io_time_ns);
        }
    }

    /// Any consistent swap trace replays on every architecture and slot reading with the
    /// swap space's invariants intact.
    #[test]
    fn consistent_swap_traces_replay_everywhere(
        ops in proptest::collection::vec((0u32..2, 0u32..25), 1..300), nvm in 0usize..5
    ) {
        let mut out_now = [false; 25];
        let events: Vec<Event> = ops
            .iter()
            .enumerate()
            .map(|(i, &(proc, page))| {
                let was_out = out_now[page as usize];
                out_now[page as usize] = !was_out;
                if was_out {
                    Event::swap_in(i as u64, proc, page)
                } else {
                    Event::swap_out(i as u64, proc, page)
                }
            })
            .collect();
        for info in ARCHITECTURES.iter().filter(|a| a.name != "none") {
            for slot in [SlotOnSwapIn::Free, SlotOnSwapIn::Keep] {
                let mut config = config(info.name, nvm, slot);
                config.zram.pool_pages = 2;
                let mut machine = SwapRun::for_replay(&config, 0, 0).unwrap();
                for (i, event) in events.iter().enumerate() {
                    machine
                        .step(i, event)
                        .map_err(|e| TestCaseError::fail(format!("{} {slot:?}: {e}", info.name)))?;
                    machine
                        .validate()
                        .map_err(|e| TestCaseError::fail(format!("{} {slot:?} after {i}: {e}", info.name)))?;
                }
                let m = machine.finish(&Tables::default()).unwrap();
                let ins = events.iter().filter(|e| e.kind() == EventKind::SwapIn).count() as u64;
                prop_assert_eq!(m.swap_ins + m.fresh_allocations, ins);
            }
        }
    }
}
