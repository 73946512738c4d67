//! Swap architectures: where swapped pages live. One small trait, one list.
//!
//! An architecture only decides; the [`SwapSpace`] moves pages and counts every device
//! operation, so all architectures are measured by the same rules. Adding one: write its
//! file here with the pseudocode it follows beside the code, and add one entry to
//! [`ARCHITECTURES`]. The property tests in `tests/swap_props.rs` and
//! `tests/swap_replay.rs` run every entry.

mod basic;
mod hierarchical;
mod parallel;
mod zram;

use super::config::SwapConfig;
use super::space::{NvmOrder, SwapDevice, SwapSpace};
use crate::core::registry::Registry;
use crate::trace::PageId;
use crate::Result;

/// Where swapped pages go and how they move between devices.
///
/// Contracts:
/// - [`Architecture::swap_out`] is called for a page leaving DRAM whose data is not in
///   swap: it has no slot, or (with slots kept on swap-in) a stale slot on NVM or flash.
///   It MUST either leave the page with exactly one slot holding its data and return
///   `true`, or change nothing about the page and return `false` (no room: the caller
///   falls back to the low-memory killer). It may move other pages (demotions,
///   writebacks).
/// - [`Architecture::swap_in`] is called for a page that has a slot. It MUST read the
///   page from the device holding it (once, with [`SwapSpace::read`]) and return that
///   device; it may then move or free the page's slot.
/// - Neither may panic, whatever the sequence of calls.
pub trait Architecture: Send {
    /// Registry name.
    fn name(&self) -> &'static str;

    /// `false` when there is no swap at all: memory pressure goes to the low-memory
    /// killer.
    fn swaps(&self) -> bool {
        true
    }

    fn swap_out(&mut self, space: &mut SwapSpace, page: PageId, now_ns: u64) -> Result<bool>;

    fn swap_in(&mut self, space: &mut SwapSpace, page: PageId) -> Result<SwapDevice>;
}

/// A registered architecture.
pub struct ArchitectureInfo {
    pub name: &'static str,
    /// One line: what it does and where it comes from.
    pub summary: &'static str,
    /// Has an NVM device (its size is `SwapConfig::nvm_pages`).
    pub uses_nvm: bool,
    /// Has a zram pool (its size is `SwapConfig::zram.pool_pages`).
    pub uses_zram: bool,
    /// How the NVM orders its slots for replacement.
    pub nvm_order: NvmOrder,
    pub build: fn(&SwapConfig) -> Box<dyn Architecture>,
}

crate::named_entry!(ArchitectureInfo);

/// Every architecture: the baselines, then the paper's multi-swap ones, then zram.
pub static ARCHITECTURES: Registry<ArchitectureInfo> = Registry::new(
    "swap architecture",
    &[
    ArchitectureInfo {
        name: "none",
        summary: "no swap: the low-memory killer kills the least important app",
        uses_nvm: false,
        uses_zram: false,
        nvm_order: NvmOrder::Clock,
        build: |_| Box::new(basic::NoSwap),
    },
    ArchitectureInfo {
        name: "flash",
        summary: "flash-only swap (the paper's baseline)",
        uses_nvm: false,
        uses_zram: false,
        nvm_order: NvmOrder::Clock,
        build: |_| Box::new(basic::FlashOnly),
    },
    ArchitectureInfo {
        name: "hierarchical-lru",
        summary: "NVM caches swap in front of flash, LRU replacement (Bahn, Kim 2023, Fig. 1a)",
        uses_nvm: true,
        uses_zram: false,
        nvm_order: NvmOrder::Lru,
        build: |_| Box::new(hierarchical::Hierarchical::new("hierarchical-lru")),
    },
    ArchitectureInfo {
        name: "hierarchical-clock",
        summary: "NVM caches swap in front of flash, CLOCK replacement (Bahn, Kim 2023, Fig. 1a)",
        uses_nvm: true,
        uses_zram: false,
        nvm_order: NvmOrder::Clock,
        build: |_| Box::new(hierarchical::Hierarchical::new("hierarchical-clock")),
    },
    ArchitectureInfo {
        name: "parallel-clock",
        summary:
            "NVM beside flash, every swap-out to NVM, CLOCK demotion (the paper's CLOCK baseline)",
        uses_nvm: true,
        uses_zram: false,
        nvm_order: NvmOrder::Clock,
        build: |_| Box::new(parallel::ParallelClock),
    },
    ArchitectureInfo {
        name: "parallel-filtered",
        summary: "NVM beside flash with the single-access filter (Bahn, Kim 2023, the proposal)",
        uses_nvm: true,
        uses_zram: false,
        nvm_order: NvmOrder::Clock,
        build: |_| Box::new(parallel::ParallelFiltered::default()),
    },
    ArchitectureInfo {
        name: "zram",
        summary: "compressed RAM swap; the low-memory killer when the pool is full",
        uses_nvm: false,
        uses_zram: true,
        nvm_order: NvmOrder::Clock,
        build: |_| Box::new(zram::Zram::without_writeback()),
    },
    ArchitectureInfo {
        name: "zram-writeback",
        summary:
            "zram whose incompressible and idle pages go to flash under a daily budget (Android)",
        uses_nvm: false,
        uses_zram: true,
        nvm_order: NvmOrder::Clock,
        build: |config| Box::new(zram::Zram::with_writeback(&config.zram)),
    },
    ],
);

/// The architecture called `name`; an unknown name lists the known ones.
pub fn find_architecture(name: &str) -> Result<&'static ArchitectureInfo> {
    ARCHITECTURES.find(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_distinct_and_found() {
        for (i, info) in ARCHITECTURES.iter().enumerate() {
            assert!(ARCHITECTURES[..i].iter().all(|a| a.name != info.name));
            assert_eq!(find_architecture(info.name).unwrap().name, info.name);
            let built = (info.build)(&SwapConfig::default());
            assert_eq!(built.name(), info.name);
        }
        let err = find_architecture("hybrid").unwrap_err().to_string();
        assert!(
            err.contains("parallel-filtered") && err.contains("none"),
            "{err}"
        );
    }
}
