//! Multi-swap: swapping app memory to NVM, flash and compressed RAM (
//! Bahn, Kim, "Design and Performance Analysis of Multi-Swap Architectures for Mobile
//! Devices", JIIBC 2023).
//!
//! A run replays a trace's anonymous-page accesses and importance changes on a machine
//! with `dram_pages` of DRAM ([`memory`]): pages that do not fit are swapped out by an
//! architecture ([`architectures`]) into a swap space of NVM, flash and zram slots
//! ([`space`]), or their apps are killed. App launches are timed ([`launch`]) and every
//! device operation counted ([`SwapMetrics`]). `docs/swap.md` describes the model, the
//! architectures with their pseudocode and every default.
//!
//! ```no_run
//! use mobmem::mm::swap::{self, workload::AppCyclingConfig, SwapConfig};
//!
//! let trace = swap::workload::generate(&AppCyclingConfig::default(), 1)?;
//! let config = SwapConfig::default();
//! let footprint = swap::swap_footprint(&trace, &config)?;
//! for percent in [5, 10, 20] {
//!     let nvm_pages = footprint as usize * percent / 100;
//!     let m = swap::run_point(&trace, &config, "parallel-filtered", nvm_pages)?;
//!     println!("{percent}%: {} ms of I/O", m.io_time_ns / 1e6);
//! }
//! # Ok::<(), mobmem::Error>(())
//! ```

pub mod architectures;
mod config;
pub mod launch;
mod metrics;
pub mod run;
pub mod zram_pool;

pub use crate::core::swap::{
    Architecture, IoCause, IoCounts, IoOp, IoRecord, NvmOrder, SwapDevice, SwapSlots, SwapSpace,
};
/// The multi-swap paper's workload, kept under this name beside the swap code it drives.
pub use crate::workload::app_cycling as workload;
pub use architectures::{find_architecture, ArchitectureInfo, ARCHITECTURES};
pub use config::{
    LaunchModel, ReclaimOrder, SlotOnSwapIn, SwapConfig, ZramConfig, DEFAULT_DRAM_PAGES,
    DEFAULT_NVM_PAGES,
};
pub use metrics::{AppLaunches, SwapMetrics};
pub use run::SwapRun;

use crate::core::events;
use crate::trace::{EventKind, Trace};
use crate::{Error, Result};

/// Check that every event's ids are in the trace's tables, when it has them: per-page and
/// per-process state is indexed by id, so a stray id must not size it.
fn check_ids(trace: &Trace) -> Result<()> {
    let (pages, procs) = (trace.tables.pages.len(), trace.tables.processes.len());
    for (index, event) in trace.events.iter().enumerate() {
        let has_page = matches!(
            event.kind(),
            EventKind::Access | EventKind::SwapOut | EventKind::SwapIn
        );
        let problem = if procs > 0 && event.proc() as usize >= procs {
            Some(format!(
                "process id {} is not in the trace's {procs} processes",
                event.proc()
            ))
        } else if has_page && pages > 0 && event.page() as usize >= pages {
            Some(format!(
                "page id {} is not in the trace's {pages} pages",
                event.page()
            ))
        } else {
            None
        };
        if let Some(message) = problem {
            return Err(Error::config(format!("swap run, event {index}"), message));
        }
    }
    Ok(())
}

/// Run `config` over a trace's accesses.
pub fn run(trace: &Trace, config: &SwapConfig) -> Result<SwapMetrics> {
    drive(trace, config, SwapRun::new)
}

/// Run `config` over a trace's accesses with zram storing each page at the size its
/// real contents compress to with `codec` (same-filled pages take no pool bytes, pages
/// compressing to a huge-class size a whole page; [`zram_pool`]). `contents` fills a
/// page's bytes and returns false when they are unknown: such a page, and every page
/// when no trace carries contents, keeps the fixed compressed size and incompressible
/// share of `config` (the model without contents).
pub fn run_with_contents(
    trace: &Trace,
    config: &SwapConfig,
    codec: crate::mm::fs::codec::Codec,
    contents: &dyn Fn(&crate::trace::PageKey, &mut [u8]) -> bool,
) -> Result<SwapMetrics> {
    check_ids(trace)?;
    let mut page = vec![0u8; zram_pool::PAGE_BYTES];
    let mut sizes = Vec::with_capacity(trace.tables.pages.len());
    for key in &trace.tables.pages {
        sizes.push(if contents(key, &mut page) {
            zram_pool::stored_size(codec, &page)? as u32
        } else {
            crate::core::swap::UNKNOWN_SIZE
        });
    }
    let mut run = SwapRun::new(config, trace.footprint(), trace.tables.processes.len())?;
    run.set_zram_sizes(sizes);
    events::replay(&mut run, &trace.events).map_err(|e| e.in_run("swap run"))?;
    run.finish(&trace.tables)
}

/// Run one point of a sweep: `config` with its architecture and NVM size replaced.
pub fn run_point(
    trace: &Trace,
    config: &SwapConfig,
    architecture: &str,
    nvm_pages: usize,
) -> Result<SwapMetrics> {
    let config = SwapConfig {
        architecture: architecture.to_string(),
        nvm_pages,
        ..config.clone()
    };
    run(trace, &config)
}

/// Replay a trace's own swap-out and swap-in events (a swap I/O trace captured on a
/// device) on `config`'s architecture, with no DRAM model: each swap-out is written out
/// by the architecture, each swap-in read back; importance changes still time launches
/// and accesses are ignored. A swap-in of a page that is not swapped out is an error
/// naming the event's index.
pub fn replay(trace: &Trace, config: &SwapConfig) -> Result<SwapMetrics> {
    drive(trace, config, SwapRun::for_replay)
}

/// Check a trace's ids, build a run for it with `build` and step it through every
/// event.
fn drive(
    trace: &Trace,
    config: &SwapConfig,
    build: fn(&SwapConfig, usize, usize) -> Result<SwapRun>,
) -> Result<SwapMetrics> {
    check_ids(trace)?;
    let mut run = build(config, trace.footprint(), trace.tables.processes.len())?;
    events::replay(&mut run, &trace.events).map_err(|e| e.in_run("swap run"))?;
    run.finish(&trace.tables)
}

/// The swap footprint of a trace: the distinct pages ever swapped out under flash-only
/// swap with `config`'s DRAM and reclaim order. Sweeps size NVM as a share of it.
pub fn swap_footprint(trace: &Trace, config: &SwapConfig) -> Result<u64> {
    Ok(run_point(trace, config, "flash", 0)?.swapped_pages)
}
