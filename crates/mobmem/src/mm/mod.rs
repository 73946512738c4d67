//! The memory-management mechanisms, one folder per kind. Each kind is a small trait
//! with documented contracts and one registry; an implementation is one file.
//!
//! - [`placement`]: buffer-cache replacement and hybrid DRAM+PCM placement (technique 1);
//! - [`reclaim`]: Linux page reclaim: two-list LRU, MGLRU, FMP, memory.low (technique 5);
//! - [`swap`]: swap architectures over NVM, flash and zram (technique 2);
//! - [`dedup`]: kernel samepage merging and its advisor (technique 4);
//! - [`fs`]: the compressed flash file system, its write rules and read paths (technique 3);
//! - [`clock`]: the threads a machine's mechanisms spend their time on (apps, kswapd,
//!   ksmd) and its flash queue, on [`crate::core::time`]; the phone and reclaim's replay
//!   run on it.

pub mod clock;
pub mod dedup;
pub mod fs;
pub mod phone;
pub mod placement;
pub mod reclaim;
pub mod swap;
