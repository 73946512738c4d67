//! The memory's invariant check runs inside every kind of experiment: a buffer-cache
//! policy (`cache`), reclaim (`reclaim`), a swap architecture (`swap`), the file
//! system's reads (`fs`), ksmd (`ksm`) and the phone with its five slots (`phone`).
//! Each property draws a mechanism from its registry, a size and a seed, and runs the
//! kind's own run function under `events::with_checks`, so that the memory is checked
//! every few events and at the end: every page in exactly one place, every frame and
//! swap slot accounted for, the mechanism's order holding exactly its resident pages. A
//! broken invariant ends the run with `Error::Invariant`, which fails the property.

use crate::common;

use mobmem::core::events::with_checks;
use mobmem::devices::platform::Platform;
use mobmem::mm::dedup::{self, KsmParams, RunSpec, ScanCosts};
use mobmem::mm::fs::read::{read_file, ReadPath};
use mobmem::mm::fs::{Codec, FsMemory, StoredFile, StoredPage};
use mobmem::mm::phone::{self, Choice, PhoneConfig};
use mobmem::mm::placement::registry::REGISTRY as PLACEMENT;
use mobmem::mm::placement::sim::{run_trace, RunSetup};
use mobmem::mm::placement::{Capacity, Family};
use mobmem::mm::reclaim::{self, policy::POLICIES, ReclaimConfig};
use mobmem::mm::swap::{self, SwapConfig, ARCHITECTURES};
use mobmem::trace::Trace;
use mobmem::workload::app_cycling;
use mobmem::workload::gallery_usb;
use mobmem::Error;
use proptest::prelude::*;

/// Events between two checks: often enough to catch a slip near where it happens.
const EVERY: u64 = 97;

/// A run's result: any error but a broken invariant is the run's own business (a
/// refused configuration); a broken invariant fails.
fn invariants_held<T>(what: &str, run: mobmem::Result<T>) -> Result<(), TestCaseError> {
    match run {
        Err(Error::Invariant(m)) => Err(TestCaseError::fail(format!("{what}: {m}"))),
        Err(e) => Err(TestCaseError::fail(format!("{what}: the run failed: {e}"))),
        Ok(_) => Ok(()),
    }
}

fn gallery_trace(seed: u64) -> Trace {
    gallery_usb::generate(&common::small_gallery_usb(), seed).expect("a small gallery-usb trace")
}

fn app_cycling_trace(seed: u64) -> Trace {
    app_cycling::generate(&common::small_app_cycling(), seed).expect("a small app-cycling trace")
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    #[test]
    fn cache_policies_keep_the_memory_whole(policy in 0usize..64, share in 0.02f64..0.9, seed in 0u64..1000) {
        let info = &PLACEMENT[policy % PLACEMENT.len()];
        let trace = gallery_trace(seed);
        let pages = ((trace.footprint() as f64 * share) as usize).max(4);
        let capacity = match info.family {
            Family::SingleTier => Capacity::single(pages),
            Family::Hybrid => Capacity { dram: (pages / 5).max(1), pcm: pages - (pages / 5).max(1) },
        };
        let setup = RunSetup::new(info, capacity);
        invariants_held(info.name, with_checks(EVERY, || run_trace(&trace, &setup)))?;
    }

    #[test]
    fn reclaim_policies_keep_the_memory_whole(policy in 0usize..64, share in 0.05f64..0.8, seed in 0u64..1000) {
        let info = &POLICIES[policy % POLICIES.len()];
        let trace = gallery_trace(seed);
        // Swap for every page, so that a run ends by its trace and not out of memory.
        let pages = ((trace.footprint() as f64 * share) as usize).max(300);
        let config = ReclaimConfig {
            policy: info.name.to_string(),
            memory_pages: pages,
            reserved_pages: pages / 8,
            swap_pages: trace.footprint(),
            ..ReclaimConfig::default()
        };
        invariants_held(info.name, with_checks(EVERY, || reclaim::run(&config, &trace)))?;
    }

    #[test]
    fn swap_architectures_keep_the_memory_whole(arch in 0usize..64, dram in 80usize..400, nvm in 0usize..300, seed in 0u64..1000) {
        let info = &ARCHITECTURES[arch % ARCHITECTURES.len()];
        let mut config = SwapConfig {
            architecture: info.name.to_string(),
            dram_pages: dram,
            nvm_pages: nvm,
            ..SwapConfig::default()
        };
        config.zram.pool_pages = dram / 4;
        if info.uses_nvm && config.nvm_pages == 0 {
            config.nvm_pages = 1;
        }
        let trace = app_cycling_trace(seed);
        invariants_held(info.name, with_checks(EVERY, || swap::run(&trace, &config)))?;
    }

    #[test]
    fn file_system_reads_keep_the_memory_whole(files in proptest::collection::vec((1usize..120, any::<bool>()), 1..8), frames in 180usize..400, selective in any::<bool>()) {
        let path = if selective { ReadPath::SELECTIVE } else { ReadPath::PAGE_CACHE };
        let platform = Platform::pxa250();
        let mut mem = FsMemory::new(frames).expect("a page-cache memory");
        let run = with_checks(7, || -> mobmem::Result<()> {
            for (i, &(pages, compressed)) in files.iter().enumerate() {
                let stored = if compressed { StoredPage::new(true, 4096, 1500) } else { StoredPage::new(false, 4096, 4096) };
                let file = StoredFile { name: format!("f{}", i % 3), codec: Codec::Zlib, pages: vec![stored; pages] };
                read_file(&file, path, &platform, &mut mem)?;
            }
            Ok(())
        });
        invariants_held(path.name(), run)?;
        prop_assert!(mem.check().is_ok());
    }

    #[test]
    fn ksmd_keeps_the_memory_whole(pages_to_scan in 1u32..3000, sharing in 2u32..300, zero in any::<bool>(), seed in 0u64..1000) {
        let preset = dedup::presets::AndroidConfig { scale: 0.05, ..Default::default() };
        let pop = preset.generate(seed).expect("a small Android population");
        let params = KsmParams {
            pages_to_scan,
            max_page_sharing: sharing,
            use_zero_pages: zero,
            ..KsmParams::default()
        };
        let spec = RunSpec { duration_ms: 20_000, sample_ms: 5_000, ksm_on: true };
        let run = with_checks(5, || dedup::simulate(&pop, &params, &ScanCosts::default(), spec));
        invariants_held("ksm", run)?;
    }
}

proptest! {
    // A phone run is the longest: fewer cases.
    #![proptest_config(ProptestConfig::with_cases(8))]

    #[test]
    fn the_phone_keeps_its_one_memory_whole(mask in 0u32..32, seed in 0u64..100) {
        let c = common::small_phone(6);
        let (on, off) = (c.mechanisms(), c.baselines());
        let mut choice: Choice = off.clone();
        for (i, slot) in phone::SLOTS.iter().enumerate() {
            if mask & (1 << i) != 0 {
                choice = PhoneConfig::with_slot(&choice, slot, &on);
            }
        }
        let trace = phone::workload(&c, seed).expect("the phone's workload");
        invariants_held(&format!("{choice:?}"), with_checks(EVERY * 10, || phone::run(&c, &choice, &trace, seed)))?;
    }
}
