//! The CLI's integration tests that leave the host's kernel settings alone, one module
//! per file beside this one, built into one test program (each program links the whole
//! library, about 80 MB with debug information). The tests that change the kernel's
//! global settings (KSM, tracefs, memory cgroups, zram) stay programs of their own,
//! declared in Cargo.toml: cargo runs test programs one after another, so no two of
//! them change the same setting at once.

mod common;

mod cli;
mod hostile;
mod hostile_traces;
mod key_changes;
mod mrc;
mod reclaim;
mod report_pages;
mod trace_import;
