//! KSM, kernel samepage merging, tuned for Android (Kim, Hong, Shin,
//! SKKU; the kernel's mm/ksm.c and Documentation/admin-guide/mm/ksm.rst).
//!
//! - [`pages`]: what ksmd scans: processes, their mergeable regions and page contents
//!   as 64-bit fingerprints that change over time;
//! - [`presets`]: the Android workload (apps forked from Zygote with Dalvik heap, native
//!   heap and stack) and the content the real-kernel validation allocates;
//! - [`ksmd`]: the scanner, stable and unstable trees, copy-on-write, counters, on the
//!   pages of a core memory;
//! - [`memory`]: what ksmd needs of that memory ([`KsmMemory`]: a bare memory, or the
//!   reclaim machine) and the memory of a standalone run;
//! - [`advisor`]: the scan-time advisor;
//! - [`run`]: ksmd over time, sampled;
//! - [`impact`]: what KSM does to apps: touch response time and launch time;
//! - [`variants`]: the deduplicators the phone's dedup slot names ([`Deduplicator`],
//!   [`DEDUP_VARIANTS`]);
//! - [`snapshot`]: page fingerprints of live processes: their file format and the
//!   population the simulator makes of them (`host::snapshot` reads them from `/proc`,
//!   `host::ksm_sysfs` drives the real kernel's KSM).
//!
//! `docs/ksm.md` describes the model, its parameters and every assumed number.

pub mod advisor;
mod config;
pub mod impact;
pub mod ksmd;
pub mod memory;
pub mod pages;
pub mod presets;
pub mod run;
pub mod snapshot;
pub mod variants;

pub use config::{AdvisorMode, KsmParams, MergeOrder, ScanCosts};
pub use ksmd::{Counters, Ksmd, MemoryState};
pub use memory::{KsmMemory, Standalone};
pub use pages::{PageContent, Population, Potential};
pub use run::{simulate, simulate_with_wakes, KsmRun, RunSpec, Sample, Wake};
pub use variants::{DedupInfo, Deduplicator, DEDUP_VARIANTS};

#[cfg(test)]
mod tests;
