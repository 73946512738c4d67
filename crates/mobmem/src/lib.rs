//! mobmem: a trace-driven simulator of memory management on mobile devices.
//!
//! Reading order, one layer a folder, each using only the ones before it:
//! - [`trace`]: the event model, trace file formats and their readers and writers;
//! - [`workload`]: synthetic Android workloads, deterministic by seed;
//! - [`devices`]: memory and storage devices (latency, energy, endurance) and cost models;
//! - [`engine`]: the simulated memory system: the policy trait, the policies, the registry
//!   and the simulation loop that applies a policy's decisions to the devices;
//! - [`flashfs`]: a compressed flash file system (JFFS2-like): codecs, write policies,
//!   read paths with and without the page cache;
//! - [`swap`]: swapping app memory to NVM, flash and zram: DRAM with reclaim and the
//!   low-memory killer, the multi-swap architectures, app launch times;
//! - [`ksm`]: kernel samepage merging: ksmd, its trees and counters, the Android
//!   workload, app impact, snapshots of live processes and the real kernel's sysfs;
//! - [`metrics`]: the counters a run produces and the figures derived from them;
//! - [`reclaim`]: Linux page reclaim on page frames (3.4 two-list LRU, lumpy reclaim, FMP,
//!   memory.low, MGLRU), interactive response time;
//! - [`experiments`]: experiment files, sweeps run in parallel, the papers' reproductions;
//! - [`report`]: CSV, JSON, SVG plots, claims and the HTML index.

pub mod devices;
pub mod engine;
pub mod error;
pub mod experiments;
pub mod flashfs;
pub mod ksm;
pub mod metrics;
pub mod reclaim;
pub mod report;
pub mod swap;
pub mod trace;
pub mod workload;

pub use error::{Error, Position, Result};
