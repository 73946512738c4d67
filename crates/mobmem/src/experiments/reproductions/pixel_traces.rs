//! The Pixel 6a block I/O traces (the `mobile-block` preset; published with
//! "Space-efficient FTL for Mobile Storage via Tiny Neural Nets", SYSTOR 2024, repository
//! acsl-technion/MobileBlockIOTraces), which reproductions read for findings on real
//! phone data: their names, where they are looked for, and what a reproduction adds from
//! them.

use std::path::{Path, PathBuf};

use crate::report::Finding;

/// The traces, as their files are named (`NAME.csv.gz`), in the order findings list them.
pub const PIXEL_TRACES: [&str; 4] = ["pubg_exec", "pubg_precond", "telegram_exec", "you_cut_exec"];

/// Where the traces are looked for, in order: `$MOBMEM_TRACES/mobile-block`, then
/// `../shared/traces/mobile-block` from the current folder (as the tests look for the
/// public traces).
pub fn candidate_dirs() -> Vec<PathBuf> {
    let mut dirs = Vec::new();
    if let Some(dir) = std::env::var_os("MOBMEM_TRACES") {
        dirs.push(PathBuf::from(dir).join("mobile-block"));
    }
    dirs.push(PathBuf::from("../shared/traces/mobile-block"));
    dirs
}

/// The first of `dirs` that holds at least one of [`PIXEL_TRACES`]; otherwise `dirs`,
/// to say where they were looked for.
pub fn find_dir(dirs: Vec<PathBuf>) -> std::result::Result<PathBuf, Vec<PathBuf>> {
    dirs.iter()
        .find(|d| PIXEL_TRACES.iter().any(|t| trace_path(d, t).is_file()))
        .cloned()
        .ok_or(dirs)
}

/// The file of trace `name` in `dir`.
pub fn trace_path(dir: &Path, name: &str) -> PathBuf {
    dir.join(format!("{name}.csv.gz"))
}

/// What the real data adds to a reproduction's report.
#[derive(Debug, Clone, Default)]
pub struct RealData {
    pub findings: Vec<Finding>,
    pub notes: Vec<String>,
}
