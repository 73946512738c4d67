//! The `app-cycling` preset: what it is made of, and the properties the multi-swap
//! experiment needs from it under the default swap config: memory pressure that swaps
//! apps out between their sessions, and more than half of the swap-ins of pages swapped
//! in only once, as the paper measured on Android. Deterministic by seed.

use crate::common;

use mobmem::mm::swap::workload::{generate, AppCyclingConfig};
use mobmem::mm::swap::{run, run_point, swap_footprint, SwapConfig};
use mobmem::trace::{EventKind, PageKind};

#[test]
fn the_preset_has_twenty_apps_cycling_in_rounds() {
    let config = AppCyclingConfig::default();
    let trace = generate(&config, 1).unwrap();
    assert_eq!(trace.tables.processes.len(), 20);
    let launches = trace
        .events
        .iter()
        .filter(|e| e.kind() == EventKind::Importance && e.oom_score_adj() == 0)
        .count();
    assert_eq!(launches as u32, config.apps * config.rounds);
    assert!(trace.tables.pages.iter().all(|k| k.kind == PageKind::Anon));
    // The apps' memory is many times DRAM.
    let swap = SwapConfig::default();
    assert!(trace.footprint() > 10 * swap.dram_pages);
}

#[test]
fn single_access_data_is_over_half_of_the_swap_ins() {
    let trace = generate(&AppCyclingConfig::default(), 1).unwrap();
    let config = SwapConfig::default();
    let flash = run_point(&trace, &config, "flash", 0).unwrap();
    println!(
        "app-cycling seed 1: {} events, {} pages, {} swap-outs, {} swap-ins, {} pages swapped, single-access share {:.3}, launch {:.0} ms",
        trace.events.len(),
        trace.footprint(),
        flash.swap_outs,
        flash.swap_ins,
        flash.swapped_pages,
        flash.single_access_share,
        flash.launch_mean_ms
    );
    assert!(
        flash.single_access_share > 0.5,
        "{}",
        flash.single_access_share
    );
    // Pressure: most launches fault, and swapping makes them slower than the warm base.
    assert_eq!(flash.kills, 0);
    assert!(flash.warm_launches >= 100);
    assert!(flash.launch_mean_ms > 1.2 * config.launch.warm_base_ns / 1e6);
    // Without swap the killer empties the background and relaunches are cold.
    let none = run_point(&trace, &config, "none", 0).unwrap();
    assert!(none.cold_starts > none.warm_launches);
    // The footprint is what flash-only swap wrote out.
    assert_eq!(
        swap_footprint(&trace, &config).unwrap(),
        flash.swapped_pages
    );
}

#[test]
fn the_preset_is_deterministic_by_seed() {
    let config = AppCyclingConfig::default();
    let a = generate(&config, 3).unwrap();
    let b = generate(&config, 3).unwrap();
    assert_eq!(a, b);
    let c = generate(&config, 4).unwrap();
    assert_ne!(a.events, c.events);
    let swap = SwapConfig::default();
    assert_eq!(run(&a, &swap).unwrap(), run(&b, &swap).unwrap());
    // Another seed is another trace with the same character.
    let other = run_point(&c, &swap, "flash", 0).unwrap();
    assert!(other.single_access_share > 0.5);
}

/// Sizes far beyond the trace (up to 2^64 - 1 pages of DRAM, NVM or zram pool) run every
/// architecture and allocate for the pages seen, not the size; an NVM larger than the
/// swapped pages gives the results of one that just holds them.
#[test]
fn every_architecture_runs_with_sizes_far_beyond_the_trace() {
    let trace = generate(&common::small_app_cycling(), 1).unwrap();
    let pages = trace.footprint();
    for a in mobmem::mm::swap::ARCHITECTURES {
        let tight = SwapConfig {
            architecture: a.name.into(),
            dram_pages: 40,
            nvm_pages: pages,
            zram: mobmem::mm::swap::ZramConfig {
                pool_pages: 20,
                ..Default::default()
            },
            ..Default::default()
        };
        let fitting = run(&trace, &tight).unwrap();
        for huge in [1usize << 32, usize::MAX / 2, usize::MAX] {
            let far = SwapConfig {
                nvm_pages: huge,
                ..tight.clone()
            };
            let m = run(&trace, &far).unwrap_or_else(|e| panic!("{} at {huge}: {e}", a.name));
            assert_eq!(
                (m.swap_outs, m.swap_ins),
                (fitting.swap_outs, fitting.swap_ins),
                "{}",
                a.name
            );
            // DRAM beyond the machine's largest memory is refused, naming the key.
            let too_large = SwapConfig {
                dram_pages: huge,
                ..far.clone()
            };
            let e = run(&trace, &too_large).unwrap_err().to_string();
            assert!(e.contains("dram_pages must be"), "{}: {e}", a.name);
        }
        // The largest DRAM holds everything.
        let most = mobmem::mm::reclaim::MAX_MEMORY_PAGES;
        let roomy = SwapConfig {
            dram_pages: most,
            zram: mobmem::mm::swap::ZramConfig {
                pool_pages: most - 1,
                ..Default::default()
            },
            ..tight.clone()
        };
        let m = run(&trace, &roomy).unwrap_or_else(|e| panic!("{} at {most}: {e}", a.name));
        assert_eq!(m.swap_outs, 0, "{}: everything fits in DRAM", a.name);
    }
}

/// Launches on the clock against summed: the same counts; no launch faster; where the
/// flash serves one command at a time, reads wait behind the swap-out writes and flash
/// swap's launches slow down.
#[test]
fn launches_on_the_clock_keep_every_count_and_wait_behind_writes_on_a_one_command_flash() {
    use mobmem::mm::clock::{Accounting, TimeModel};
    let trace = generate(&common::small_app_cycling(), 1).unwrap();
    let with = |accounting, depth| SwapConfig {
        architecture: "flash".into(),
        dram_pages: 120,
        time: TimeModel {
            accounting,
            flash_queue_depth: depth,
            ..TimeModel::default()
        },
        ..SwapConfig::default()
    };
    let summed = run(&trace, &with(Accounting::Sum, 32)).unwrap();
    let clock = run(&trace, &with(Accounting::Contended, 32)).unwrap();
    let one = run(&trace, &with(Accounting::Contended, 1)).unwrap();
    assert!(
        summed.swap_ins > 50 && summed.warm_launches > 0,
        "{summed:?}"
    );
    assert!(summed.memory_stall_ms.is_nan() && summed.flash_queue_wait_ms.is_nan());
    for m in [&clock, &one] {
        assert_eq!(
            (
                m.swap_outs,
                m.swap_ins,
                m.io,
                m.kills,
                m.cold_starts,
                m.warm_launches
            ),
            (
                summed.swap_outs,
                summed.swap_ins,
                summed.io,
                summed.kills,
                summed.cold_starts,
                summed.warm_launches
            )
        );
        for (c, s) in m.launches.iter().zip(&summed.launches) {
            assert_eq!(
                (c.proc, c.start_ns, c.faults),
                (s.proc, s.start_ns, s.faults)
            );
            assert!(c.launch_ns >= s.launch_ns - 1.0, "{c:?} {s:?}");
        }
        assert!(m.memory_stall_ms > 0.0);
    }
    assert!(one.flash_queue_wait_ms > clock.flash_queue_wait_ms);
    assert!(
        one.launch_mean_ms > clock.launch_mean_ms,
        "{} {}",
        one.launch_mean_ms,
        clock.launch_mean_ms
    );
}
