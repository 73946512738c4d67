//! The multi-swap zram pool sized from the pages' real contents: unknown contents keep
//! the fixed-ratio model exactly; known ones change what fits in the pool.

use mobmem::mm::fs::codec::Codec;
use mobmem::mm::swap::{self, workload::AppCyclingConfig, SwapConfig};

fn zram_config() -> SwapConfig {
    let mut config = SwapConfig {
        architecture: "zram".into(),
        ..SwapConfig::default()
    };
    // A pool small enough to fill with this trace at the fixed ratio.
    config.zram.pool_pages = 256;
    config
}

#[test]
fn unknown_contents_keep_the_fixed_ratio_model() {
    let trace = swap::workload::generate(&AppCyclingConfig::default(), 1).unwrap();
    let config = zram_config();
    let fixed = swap::run(&trace, &config).unwrap();
    let unknown = swap::run_with_contents(&trace, &config, Codec::Lz4, &|_, _| false).unwrap();
    assert_eq!(
        serde_json::to_string(&fixed).unwrap(),
        serde_json::to_string(&unknown).unwrap()
    );
}

#[test]
fn zero_pages_take_no_pool_and_noise_fills_it() {
    let trace = swap::workload::generate(&AppCyclingConfig::default(), 1).unwrap();
    let config = zram_config();
    let fixed = swap::run(&trace, &config).unwrap();
    assert!(
        fixed.kills > 0,
        "the fixed-ratio pool fills: {} kills",
        fixed.kills
    );
    let zeros = swap::run_with_contents(&trace, &config, Codec::Lz4, &|_, page| {
        page.fill(0);
        true
    })
    .unwrap();
    // Same-filled pages take no pool bytes: the pool never fills, nobody is killed.
    assert_eq!(zeros.kills, 0);
    let noise = swap::run_with_contents(&trace, &config, Codec::Lz4, &|key, page| {
        let mut x = key.index ^ key.owner.rotate_left(32);
        for b in page.iter_mut() {
            x = mobmem::core::mix64(x);
            *b = x as u8;
        }
        true
    })
    .unwrap();
    // Incompressible pages take a whole page each: more kills than at the fixed ratio.
    // Incompressible pages take a whole page each: the pool holds fewer of them, so fewer
    // swap-outs fit before apps are killed.
    assert!(
        noise.swap_outs < fixed.swap_outs,
        "{} swap-outs against {}",
        noise.swap_outs,
        fixed.swap_outs
    );
}
