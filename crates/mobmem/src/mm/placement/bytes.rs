//! Caches that hold bytes, not pages: a capacity in bytes, on traces whose requests carry
//! object sizes (libCacheSim's oracleGeneral), with the rules libCacheSim applies by
//! default (`cache_get_base` in libCacheSim/cache/cache.c):
//!
//! ```text
//! request(obj, size):
//!   obj resident: hit (its stored size is the one it was inserted with)
//!   size > capacity: miss, obj not inserted ("too large")
//!   else: miss; while used + size > capacity: evict the policy's next victim
//!         insert obj with size; used += size
//! ```
//!
//! The policy is built with an unbounded page capacity, so it never evicts on its own,
//! and the loop here asks it for victims ([`CachePolicy::evict_next`]). That drives the
//! policies whose order of eviction does not depend on their capacity (LRU, FIFO,
//! SIEVE, LFU); a policy whose queues are sized from its capacity (S3-FIFO, ARC, 2Q,
//! LIRS, W-TinyLFU) or whose frames are (CLOCK) would need those sizes in bytes and says
//! it cannot ([`CachePolicy::evicts_on_demand`]).
//!
//! Byte runs are single-tier and carry no device costs: they count hits, misses and
//! bytes, as a cache simulator does.

use rayon::prelude::*;
use serde::Serialize;

use super::{BuildContext, CachePolicy, Capacity, Effect, Effects, PolicyInfo, Request};
use crate::core::ensure_index;
use crate::trace::{Event, EventSource, PageId};
use crate::{Error, Result};

/// What a byte-capacity run counts.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct ByteMetrics {
    pub capacity_bytes: u64,
    pub accesses: u64,
    pub hits: u64,
    pub misses: u64,
    /// Misses of objects larger than the whole cache, which are never inserted.
    pub too_large: u64,
    pub evictions: u64,
    pub bytes_requested: u64,
    pub bytes_missed: u64,
}

impl ByteMetrics {
    pub fn miss_ratio(&self) -> f64 {
        ratio(self.misses, self.accesses)
    }

    pub fn byte_miss_ratio(&self) -> f64 {
        ratio(self.bytes_missed, self.bytes_requested)
    }

    /// Every figure by name, in a fixed order (for tables and JSON).
    pub fn values(&self) -> Vec<(&'static str, f64)> {
        vec![
            ("capacity_bytes", self.capacity_bytes as f64),
            ("accesses", self.accesses as f64),
            ("hits", self.hits as f64),
            ("misses", self.misses as f64),
            ("miss_ratio", self.miss_ratio()),
            ("bytes_requested", self.bytes_requested as f64),
            ("bytes_missed", self.bytes_missed as f64),
            ("byte_miss_ratio", self.byte_miss_ratio()),
            ("evictions", self.evictions as f64),
            ("too_large", self.too_large as f64),
        ]
    }
}

fn ratio(part: u64, whole: u64) -> f64 {
    if whole == 0 {
        0.0
    } else {
        part as f64 / whole as f64
    }
}

/// Marks a page that is not resident in [`ByteCache::stored`].
const ABSENT: u64 = u64::MAX;

/// One cache of a byte capacity, fed one request at a time.
pub struct ByteCache {
    policy: Box<dyn CachePolicy>,
    policy_name: &'static str,
    capacity: u64,
    used: u64,
    /// Per page: the size it was inserted with while resident, else [`ABSENT`].
    stored: Vec<u64>,
    effects: Effects,
    metrics: ByteMetrics,
}

impl ByteCache {
    pub fn new(
        info: &'static PolicyInfo,
        capacity_bytes: u64,
        page_count_hint: usize,
    ) -> Result<Self> {
        if capacity_bytes == 0 {
            return Err(Error::config(
                "memory",
                "the capacity must be at least 1 byte",
            ));
        }
        if info.offline || info.family != super::Family::SingleTier {
            return Err(unsupported(info));
        }
        let policy = (info.build)(&BuildContext {
            capacity: Capacity::single(usize::MAX),
            page_count_hint,
            future: None,
        })?;
        if !policy.evicts_on_demand() {
            return Err(unsupported(info));
        }
        Ok(ByteCache {
            policy,
            policy_name: info.name,
            capacity: capacity_bytes,
            used: 0,
            stored: vec![ABSENT; page_count_hint],
            effects: Effects::new(),
            metrics: ByteMetrics {
                capacity_bytes,
                ..ByteMetrics::default()
            },
        })
    }

    fn violation(&self, message: &str) -> Error {
        Error::config(
            format!("policy {}", self.policy_name),
            format!(
                "broke its contract at request {} of a byte-capacity run: {message}",
                self.metrics.accesses
            ),
        )
    }

    /// One request of `size` bytes for `page`.
    pub fn request(&mut self, page: PageId, size: u64) -> Result<()> {
        ensure_index(&mut self.stored, page, ABSENT);
        let m = &mut self.metrics;
        m.accesses += 1;
        m.bytes_requested += size;
        let req = Request::read(page);
        if self.stored[page as usize] != ABSENT {
            m.hits += 1;
            self.effects.clear();
            self.policy.access(&req, &mut self.effects);
            if !matches!(self.effects.as_slice(), [Effect::Hit { .. }]) {
                return Err(self
                    .violation("answered a request for a resident page with other than one hit"));
            }
            return Ok(());
        }
        m.misses += 1;
        m.bytes_missed += size;
        if size > self.capacity {
            m.too_large += 1;
            return Ok(());
        }
        while self.used + size > self.capacity {
            self.effects.clear();
            if !self.policy.evict_next(&mut self.effects) {
                return Err(self.violation("had no page to evict while bytes were in use"));
            }
            let victim = match self.effects.as_slice() {
                [Effect::Evict { page, .. }] => *page,
                _ => return Err(self.violation("evicted other than one page when asked for one")),
            };
            let freed = self.stored.get(victim as usize).copied().unwrap_or(ABSENT);
            if freed == ABSENT {
                return Err(self.violation("evicted a page that was not resident"));
            }
            self.stored[victim as usize] = ABSENT;
            self.used -= freed;
            self.metrics.evictions += 1;
        }
        self.effects.clear();
        self.policy.access(&req, &mut self.effects);
        if !matches!(self.effects.as_slice(), [Effect::Fill { .. }]) {
            return Err(
                self.violation("answered a request for a missing page with other than one fill")
            );
        }
        self.stored[page as usize] = size;
        self.used += size;
        Ok(())
    }

    /// Bytes held now.
    pub fn used(&self) -> u64 {
        self.used
    }

    pub fn metrics(&self) -> ByteMetrics {
        self.metrics
    }
}

fn unsupported(info: &PolicyInfo) -> Error {
    Error::config(
        format!("policy {}", info.name),
        format!(
            "cannot run with a capacity in bytes; policies that can: {}",
            byte_policies().join(", ")
        ),
    )
}

/// The policies that run with a capacity in bytes.
pub fn byte_policies() -> Vec<&'static str> {
    super::REGISTRY
        .iter()
        .filter(|info| info.family == super::Family::SingleTier && !info.offline)
        .filter(|info| {
            (info.build)(&BuildContext {
                capacity: Capacity::single(1),
                ..BuildContext::default()
            })
            .is_ok_and(|p| p.evicts_on_demand())
        })
        .map(|info| info.name)
        .collect()
}

/// The requests of a trace with object sizes: page ids and sizes in bytes, in order.
#[derive(Debug, Clone, Default)]
pub struct SizedRequests {
    pub pages: Vec<PageId>,
    pub sizes: Vec<u32>,
}

/// Read every request of `source`, with its size. An error if the format records no
/// object sizes.
pub fn read_sized(source: &mut dyn EventSource) -> Result<SizedRequests> {
    let mut requests = SizedRequests::default();
    let mut batch: Vec<Event> = Vec::with_capacity(1 << 16);
    while source.read_batch(&mut batch, 1 << 16)? {
        let Some(sizes) = source.batch_sizes() else {
            return Err(no_sizes());
        };
        for (event, &size) in batch.iter().zip(sizes) {
            if event.is_access() {
                requests.pages.push(event.page());
                requests.sizes.push(size);
            }
        }
    }
    source.finish()?;
    Ok(requests)
}

fn no_sizes() -> Error {
    Error::config(
        "memory",
        "a capacity in bytes needs a trace with object sizes (oracleGeneral); give this trace's capacity in pages",
    )
}

/// A run of `info` at `capacity_bytes` over a streamed source.
pub fn run_source_bytes(
    source: &mut dyn EventSource,
    info: &'static PolicyInfo,
    capacity_bytes: u64,
    progress: &mut dyn FnMut(u64),
) -> Result<ByteMetrics> {
    let hint = source.page_count_hint().unwrap_or(0) as usize;
    let mut cache = ByteCache::new(info, capacity_bytes, hint)?;
    let mut batch: Vec<Event> = Vec::with_capacity(1 << 16);
    let mut done = 0;
    while source.read_batch(&mut batch, 1 << 16)? {
        let Some(sizes) = source.batch_sizes() else {
            return Err(no_sizes());
        };
        for (event, &size) in batch.iter().zip(sizes) {
            if event.is_access() {
                cache.request(event.page(), u64::from(size))?;
            }
        }
        done += batch.len() as u64;
        progress(done);
    }
    source.finish()?;
    Ok(cache.metrics())
}

/// `info` at each of `capacities` (bytes) over the same requests, in parallel; results in
/// the order of `capacities`.
pub fn simulate_each_bytes(
    requests: &SizedRequests,
    info: &'static PolicyInfo,
    capacities: &[u64],
) -> Result<Vec<ByteMetrics>> {
    let footprint = requests.pages.iter().max().map_or(0, |&p| p as usize + 1);
    capacities
        .par_iter()
        .map(|&capacity| {
            let mut cache = ByteCache::new(info, capacity, footprint)?;
            for (&page, &size) in requests.pages.iter().zip(&requests.sizes) {
                cache.request(page, u64::from(size))?;
            }
            Ok(cache.metrics())
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mm::placement::find_policy;
    use proptest::prelude::*;

    fn run(policy: &str, capacity: u64, requests: &[(PageId, u64)]) -> (ByteMetrics, Vec<bool>) {
        let mut cache = ByteCache::new(find_policy(policy).unwrap(), capacity, 0).unwrap();
        let mut hits = Vec::new();
        for &(page, size) in requests {
            let before = cache.metrics().hits;
            cache.request(page, size).unwrap();
            hits.push(cache.metrics().hits > before);
        }
        (cache.metrics(), hits)
    }

    /// Worked by hand: 100 bytes of LRU.
    #[test]
    fn lru_by_hand() {
        // a(60) miss; b(30) miss [a b: 90]; c(20) miss, evicts a [b c: 50];
        // b hit; a(60) miss, 50+60 > 100 evicts c (LRU: c older than b) [b a: 90];
        // d(200) too large: miss, nothing changes; b hit; c(20) miss, evicts a [b c: 50].
        let (m, hits) = run(
            "lru",
            100,
            &[
                (0, 60),
                (1, 30),
                (2, 20),
                (1, 30),
                (0, 60),
                (3, 200),
                (1, 30),
                (2, 20),
            ],
        );
        assert_eq!(hits, [false, false, false, true, false, false, true, false]);
        assert_eq!(m.misses, 6);
        assert_eq!(m.too_large, 1);
        assert_eq!(m.evictions, 3);
        assert_eq!(m.bytes_requested, 450);
        assert_eq!(m.bytes_missed, 390);
    }

    #[test]
    fn policies_that_cannot_say_so() {
        for name in ["s3fifo", "arc", "clock", "opt", "hybrid-lru"] {
            let err = ByteCache::new(find_policy(name).unwrap(), 1000, 0)
                .err()
                .unwrap();
            assert!(
                err.to_string()
                    .contains("cannot run with a capacity in bytes"),
                "{name}: {err}"
            );
        }
        assert_eq!(byte_policies(), ["lru", "fifo", "sieve", "lfu"]);
    }

    proptest! {
        /// Every request is a hit or a miss, bytes in use never pass the capacity, and
        /// with every size 1 a byte run is the page run of the same capacity.
        #[test]
        fn invariants_and_unit_sizes(
            policy in prop::sample::select(vec!["lru", "fifo", "sieve", "lfu"]),
            capacity in 1u64..40,
            requests in prop::collection::vec((0u32..60, 1u64..30), 1..400),
        ) {
            let info = find_policy(policy).unwrap();
            let mut cache = ByteCache::new(info, capacity, 0).unwrap();
            for &(page, size) in &requests {
                cache.request(page, size).unwrap();
                prop_assert!(cache.used() <= capacity);
            }
            let m = cache.metrics();
            prop_assert_eq!(m.hits + m.misses, m.accesses);
            prop_assert!(m.bytes_missed <= m.bytes_requested);

            let unit: Vec<(PageId, u64)> = requests.iter().map(|&(p, _)| (p, 1)).collect();
            let (bytes, _) = run(policy, capacity, &unit);
            let mut pages = (info.build)(&BuildContext {
                capacity: Capacity::single(capacity as usize),
                ..BuildContext::default()
            }).unwrap();
            let mut effects = Effects::new();
            let mut hits = 0;
            for &(page, _) in &unit {
                effects.clear();
                pages.access(&Request::read(page), &mut effects);
                hits += matches!(effects.as_slice().first(), Some(Effect::Hit { .. })) as u64;
            }
            prop_assert_eq!(bytes.hits, hits);
        }
    }
}
