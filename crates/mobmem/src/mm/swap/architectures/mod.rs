//! Swap architectures: where swapped pages live. Each implements the memory core's
//! [`Architecture`] trait (its contracts are there); this is their one list.
//!
//! An architecture only decides; the swap space ([`crate::core::swap::SwapSpace`])
//! moves pages and counts every device operation, so all architectures are measured by
//! the same rules. Adding one: write its
//! file here with the pseudocode it follows beside the code, and add one entry to
//! [`ARCHITECTURES`]. The property tests in `tests/swap_props.rs` and
//! `tests/swap_replay.rs` run every entry.

mod basic;
mod hierarchical;
mod parallel;
mod zram;

use super::config::SwapConfig;
use crate::core::registry::Registry;
use crate::core::swap::{Architecture, NvmOrder};
use crate::Result;

crate::registry_entry! {
    /// A registered architecture.
    pub struct ArchitectureInfo {
        /// Has an NVM device (its size is `SwapConfig::nvm_pages`).
        pub uses_nvm: bool,
        /// Has a zram pool (its size is `SwapConfig::zram.pool_pages`).
        pub uses_zram: bool,
        /// How the NVM orders its slots for replacement.
        pub nvm_order: NvmOrder,
        pub build: fn(&SwapConfig) -> Box<dyn Architecture>,
    }
}

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
        build: |_| Box::new(crate::core::swap::FlashOnly),
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
