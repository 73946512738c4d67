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

/// Cargo builds only the test programs Cargo.toml names (`autotests = false`): a test
/// file beside this one that is neither one of its modules nor a program of its own in
/// Cargo.toml would never run.
#[test]
fn every_test_file_is_a_module_here_or_a_program() {
    let crate_dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    assert_eq!(
        common::test_files_left_out(crate_dir, "commands"),
        Vec::<String>::new(),
        "add `mod NAME;` to tests/commands.rs, or a [[test]] to Cargo.toml"
    );
}
