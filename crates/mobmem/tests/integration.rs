//! The library's integration tests, one module per file beside this one. They build
//! into one test program: each program links the whole library with its debug
//! information (about 80 MB), so one program instead of one per file saves most of the
//! suite's link time and disk.

mod common;

mod config_limits;
mod docs_limits;
mod flashfs_read;
mod flashfs_read_docs;
mod flashfs_store;
mod ftrace_import;
mod fuzz_corpus;
mod hostile_input;
mod hybrid_cache_real;
mod interner;
mod memory_invariants;
mod mrc;
mod perfetto_import;
mod policies_arc_oltp;
mod policies_libcachesim;
mod policies_props;
mod report_outputs;
mod selective_page_cache_real;
mod sparse_page_ids;
mod swap_by_hand;
mod swap_docs;
mod swap_props;
mod swap_replay;
mod swap_workload;
mod swap_zram_contents;
mod trace_formats;
mod trace_real;
mod workload_config;
mod workload_docs;
mod workload_generate;
mod workload_shape;
mod workload_summary;

/// Cargo builds only the test programs Cargo.toml names (`autotests = false`): a test
/// file beside this one that is not one of its modules would never run.
#[test]
fn every_test_file_is_a_module_here() {
    let crate_dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    assert_eq!(
        common::test_files_left_out(crate_dir, "integration"),
        Vec::<String>::new(),
        "add `mod NAME;` to tests/integration.rs"
    );
}
