//! What touches the real machine: the kernel's sysfs knobs and counters, tracefs,
//! `/proc`, and processes started and ended here.
//!
//! - [`ksm_sysfs`]: the real kernel's KSM settings and counters;
//! - [`ksm_validate`]: the real kernel's KSM on pages of known content, against the
//!   simulator;
//! - [`reclaim_validate`]: the real kernel's reclaim and zram in a memory cgroup,
//!   captured with ftrace, against the simulator's `workingset` policy and zram model;
//! - [`snapshot`]: page fingerprints of live processes (`/proc/PID/maps`, `pagemap`,
//!   `mem`) into a [`crate::mm::dedup::snapshot::Snapshot`];
//! - [`capture`]: a live workload recorded with ftrace, through [`tracefs`], with the
//!   command in a [`process_group`] and running processes read from [`procfs`];
//! - [`time_validate`]: a touch task sharing a CPU with the real ksmd, against the time
//!   model ([`crate::core::time`]);
//! - [`state`]: what these commands change, written down before it changes, for
//!   `mobmem host restore` after a run was killed;
//! - [`costs`]: this CPU's per-page costs (compression, a page copy, a first-touch
//!   fault), measured for the time model's constants; it changes nothing.

pub mod capture;
pub mod costs;
pub mod ksm_sysfs;
pub mod ksm_validate;
pub mod process_group;
pub mod procfs;
pub mod reclaim_validate;
pub mod snapshot;
pub mod state;
pub mod time_validate;
pub mod tracefs;

use std::io::Write;

/// A message on stderr that cannot fail: after SIGHUP the terminal may be gone, and a
/// failed write must not stop settings from being restored (used where no caller can
/// be told: cleanup on drop).
pub(crate) fn note(message: &str) {
    let _ = writeln!(std::io::stderr(), "{message}");
}
