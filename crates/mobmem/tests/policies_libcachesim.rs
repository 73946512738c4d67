//! Oracle: libCacheSim's miss ratios on the CloudPhysics trace it ships
//! (`../shared/oracles/libcachesim-cloudphysics.csv`, made by libCacheSim's `cachesim`
//! with every object of size 1, so capacity counts objects; see that folder's README).
//!
//! Every policy of the oracle that mobmem has must give the same miss ratio to the four
//! decimals libCacheSim prints, at every capacity, except those [`tolerance`] names, which
//! must come within it. Policies mobmem does not have yet are named on stderr and in the
//! skip log.

mod common;

use std::sync::Arc;

use mobmem::mm::placement::policies::w_tinylfu::WTinyLfu;
use mobmem::mm::placement::registry::find_policy;
use mobmem::mm::placement::sim::{run_trace, RunSetup};
use mobmem::mm::placement::{CachePolicy, Capacity, Effect, Effects, Request};

#[test]
fn every_shared_policy_matches_libcachesim_on_cloudphysics() {
    let test = "every_shared_policy_matches_libcachesim_on_cloudphysics";
    let Some((trace, text)) = common::cloudphysics_with_oracle(test) else {
        return;
    };
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
        let ratio = metrics.misses as f64 / metrics.accesses as f64;
        match tolerance(policy) {
            None => assert_eq!(
                format!("{ratio:.4}"),
                miss_ratio,
                "{policy} at {capacity} objects"
            ),
            Some((tolerance, why)) => {
                let theirs: f64 = miss_ratio.parse().unwrap();
                assert!(
                    (ratio - theirs).abs() <= tolerance,
                    "{policy} at {capacity} objects: {ratio:.4} against {miss_ratio}, \
                     more than {tolerance} apart ({why})"
                );
            }
        }
        compared += 1;
    }
    // lru, fifo, clock, sieve, s3fifo, lfu, slru-4, arc, 2q, lirs, w-tinylfu and opt at
    // five capacities each: every row of the oracle.
    assert!(compared >= 60, "only {compared} rows compared");
    assert!(
        missing.is_empty(),
        "policies of the oracle not in mobmem: {missing:?}"
    );
    if !missing.is_empty() {
        common::skip(
            "libcachesim oracle rows",
            &format!("policies not in mobmem: {}", missing.join(", ")),
        );
    }
}

/// How far a policy may be from libCacheSim's miss ratio, and why, for the policies that
/// cannot match it to the four decimals; `None` for the others.
///
/// W-TinyLFU's sketch hashes a page's id: mobmem numbers pages in the order they first
/// appear, while libCacheSim hashes the trace's object ids, so the two sketches collide
/// on different pages and admit different ones. Registered, it differs by 0.0027,
/// 0.0011, 0.0007, 0.0016 and 0.0017 at 100, 500, 2000, 8000 and 20000 objects (0.8706,
/// 0.8467, 0.8244, 0.7053, 0.5251 against 0.8679, 0.8456, 0.8237, 0.7069, 0.5234);
/// hashing the object ids instead it matches exactly (the test below).
fn tolerance(policy: &str) -> Option<(f64, &'static str)> {
    match policy {
        "w-tinylfu" => Some((
            0.003,
            "its sketch hashes mobmem's page ids, not libCacheSim's object ids",
        )),
        _ => None,
    }
}

/// W-TinyLFU with the trace's object ids as the sketch's keys, as libCacheSim hashes
/// them: the same miss ratios as libCacheSim to the four decimals, at every capacity.
#[test]
fn w_tinylfu_hashing_object_ids_matches_libcachesim_exactly() {
    let test = "w_tinylfu_hashing_object_ids_matches_libcachesim_exactly";
    let Some((trace, text)) = common::cloudphysics_with_oracle(test) else {
        return;
    };
    // The reader interns object `id` as the page key (file 0, index `id`).
    let object_ids: Arc<[u64]> = trace.tables.pages.iter().map(|key| key.index).collect();
    let mut compared = 0;
    for line in text.lines().filter(|l| l.starts_with("w-tinylfu,")) {
        let fields: Vec<&str> = line.split(',').collect();
        let capacity: usize = fields[2].parse().unwrap();
        let mut policy =
            WTinyLfu::with_sketch_keys(capacity, trace.footprint(), object_ids.clone());
        let (mut accesses, mut misses) = (0u64, 0u64);
        let mut out = Effects::new();
        for event in trace.accesses() {
            out.clear();
            let request = Request {
                page: event.page(),
                proc: 0,
                write: false,
                foreground: false,
                dirty: false,
            };
            policy.access(&request, &mut out);
            accesses += 1;
            misses += u64::from(matches!(out.as_slice()[0], Effect::Fill { .. }));
        }
        assert_eq!(accesses.to_string(), fields[3], "{line}");
        let ours = format!("{:.4}", misses as f64 / accesses as f64);
        assert_eq!(
            ours, fields[4],
            "w-tinylfu with object ids at {capacity} objects"
        );
        compared += 1;
    }
    assert_eq!(compared, 5, "the oracle's w-tinylfu rows");
}

/// Oracle: libCacheSim's miss ratios and byte miss ratios on the same trace with each
/// object of its own size and the capacity in bytes (libCacheSim's default), in
/// `tests/data/libcachesim-cloudphysics-bytes.csv`, made by libCacheSim's `cachesim`
/// (commit aa0fc409):
///
/// ```text
/// cachesim cloudPhysicsIO.oracleGeneral.bin oracleGeneral lru,fifo,sieve,lfu \
///   1048576,4194304,16777216,67108864,268435456,1073741824
/// ```
///
/// Every policy that runs by bytes must match both ratios to the four decimals printed.
#[test]
fn byte_capacities_match_libcachesim_on_cloudphysics() {
    use mobmem::mm::placement::bytes::{self, ByteCache};
    let test = "byte_capacities_match_libcachesim_on_cloudphysics";
    let Some(path) = common::public_trace(test, "libcachesim/cloudPhysicsIO.oracleGeneral.bin")
    else {
        return;
    };
    let mut source = mobmem::trace::open(&path, None).unwrap();
    let requests = bytes::read_sized(source.as_mut()).unwrap();
    let text = include_str!("data/libcachesim-cloudphysics-bytes.csv");
    let mut lines = text.lines();
    assert_eq!(
        lines.next(),
        Some("policy,libcachesim_name,capacity_bytes,requests,miss_ratio,byte_miss_ratio")
    );
    let mut compared = 0;
    for line in lines {
        let fields: Vec<&str> = line.split(',').collect();
        let [policy, _, capacity, count, miss_ratio, byte_miss_ratio] = fields[..] else {
            panic!("malformed oracle line {line:?}");
        };
        let info = find_policy(policy).unwrap();
        let capacity: u64 = capacity.parse().unwrap();
        let mut cache = ByteCache::new(info, capacity, 0).unwrap();
        for (&page, &size) in requests.pages.iter().zip(&requests.sizes) {
            cache.request(page, u64::from(size)).unwrap();
        }
        let m = cache.metrics();
        assert_eq!(m.accesses.to_string(), count, "{line}");
        assert_eq!(
            (
                format!("{:.4}", m.miss_ratio()),
                format!("{:.4}", m.byte_miss_ratio())
            ),
            (miss_ratio.to_string(), byte_miss_ratio.to_string()),
            "{policy} at {capacity} bytes"
        );
        compared += 1;
    }
    assert_eq!(compared, 24, "4 policies at 6 capacities");
    assert_eq!(bytes::byte_policies(), ["lru", "fifo", "sieve", "lfu"]);
}
