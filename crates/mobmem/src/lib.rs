//! mobmem: a trace-driven simulator of memory management on mobile devices.
//!
//! Reading order, one layer a folder, each using only the ones before it:
//! - [`trace`]: the event model, trace file formats and their readers and writers;
//! - [`core`]: the memory core every mechanism builds on: page-indexed lists and state,
//!   and the registries of named entries;
//! - [`workload`]: synthetic Android workloads, deterministic by seed;
//! - [`devices`]: memory and storage devices (latency, energy, endurance) and cost models;
//! - [`mm`]: the mechanisms, one folder per kind: [`mm::placement`] (buffer-cache and
//!   hybrid DRAM+PCM placement), [`mm::reclaim`] (Linux page reclaim, FMP, memory.low,
//!   MGLRU), [`mm::swap`] (NVM, flash and zram swap), [`mm::dedup`] (KSM) and [`mm::fs`]
//!   (the compressed flash file system);
//! - [`host`]: what touches the real machine (the kernel's sysfs knobs and counters);
//! - [`experiments`]: experiment files, sweeps run in parallel, the papers' reproductions;
//! - [`report`]: CSV, JSON, SVG plots, claims and the HTML index;
//! - [`output`]: how every output file and folder is put in place (exclusive temporary
//!   names, renames, never replacing what mobmem did not write).

pub mod config_file;
pub mod core;
pub mod devices;
pub mod error;
pub mod experiments;
#[doc(hidden)]
pub mod fuzzing;
pub mod host;
pub mod input;
pub mod mm;
pub mod output;
pub mod report;
pub mod trace;
pub mod workload;

pub use error::{Check, Error, Position, Result};
