//! Runs the fuzz target named by the environment variable MOBMEM_FUZZ_TARGET (one of
//! `mobmem::fuzzing::TARGETS`) on every input libFuzzer makes.
#![no_main]

use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use mobmem::fuzzing::{target, Target};

static CHOSEN: OnceLock<&'static Target> = OnceLock::new();

fuzz_target!(|data: &[u8]| {
    let chosen = CHOSEN.get_or_init(|| {
        let name = std::env::var("MOBMEM_FUZZ_TARGET").unwrap_or_default();
        target(&name).unwrap_or_else(|| panic!("MOBMEM_FUZZ_TARGET={name:?} is no fuzz target"))
    });
    (chosen.run)(data);
});
