//! What touches the real machine: the kernel's sysfs knobs and counters.
//!
//! - [`ksm_sysfs`]: the real kernel's KSM settings and counters.

pub mod ksm_sysfs;
