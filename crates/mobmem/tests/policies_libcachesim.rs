//! Oracle: libCacheSim's miss ratios on the CloudPhysics trace it ships
//! (`../shared/oracles/libcachesim-cloudphysics.csv`, made by libCacheSim's `cachesim`
//! with every object of size 1, so capacity counts objects; see that folder's README).
//!
//! Every policy of the oracle that mobmem has must give the same miss ratio to the four
//! decimals libCacheSim prints, at every capacity. Policies mobmem does not have yet are
//! named on stderr and in the skip log.

mod common;

use mobmem::mm::placement::registry::find_policy;
use mobmem::mm::placement::sim::{run_trace, RunSetup};
use mobmem::mm::placement::Capacity;
use mobmem::trace;

#[test]
fn every_shared_policy_matches_libcachesim_on_cloudphysics() {
    let test = "every_shared_policy_matches_libcachesim_on_cloudphysics";
    let Some(oracle) = common::shared_oracle(test, "libcachesim-cloudphysics.csv") else {
        return;
    };
    let Some(path) = common::public_trace(test, "libcachesim/cloudPhysicsIO.oracleGeneral.bin")
    else {
        return;
    };
    let trace = trace::read_all(&path, None).unwrap();
    let text = std::fs::read_to_string(&oracle).unwrap();
    let mut lines = text.lines();
    assert_eq!(
        lines.next(),
        Some("policy,libcachesim_name,capacity_objects,requests,miss_ratio")
    );
    let (mut compared, mut missing) = (0, Vec::new());
    for line in lines {
        let fields: Vec<&str> = line.split(',').collect();
        let [policy, _, capacity, requests, miss_ratio] = fields[..] else {
            panic!("malformed oracle line {line:?}");
        };
        let Ok(info) = find_policy(policy) else {
            if !missing.contains(&policy) {
                missing.push(policy);
            }
            continue;
        };
        let capacity: usize = capacity.parse().unwrap();
        let metrics = run_trace(&trace, &RunSetup::new(info, Capacity::single(capacity))).unwrap();
        assert_eq!(metrics.accesses.to_string(), requests, "{line}");
        let ours = format!("{:.4}", metrics.misses as f64 / metrics.accesses as f64);
        assert_eq!(ours, miss_ratio, "{policy} at {capacity} objects");
        compared += 1;
    }
    // lru, fifo, clock, sieve, s3fifo, lfu, slru-4, arc, 2q and opt at five capacities
    // each.
    assert!(compared >= 50, "only {compared} rows compared");
    if !missing.is_empty() {
        common::skip(
            "libcachesim oracle rows",
            &format!("policies not in mobmem: {}", missing.join(", ")),
        );
    }
}
