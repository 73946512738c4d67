//! Caches that hold bytes, not pages: a capacity in bytes, on traces whose requests carry
//! object sizes (libCacheSim's oracleGeneral), run by the placement engine in
//! [`Unit::Bytes`] with the rules libCacheSim applies by default (`cache_get_base` in
//! libCacheSim/cache/cache.c):
//!
//! ```text
//! request(obj, size):
//!   obj resident: hit (its stored size is the one it was inserted with)
//!   obj not admitted (larger than the cache, or than the queue the policy admits into):
//!     miss, obj not inserted ("too large")
//!   else: miss; while used + size > capacity: evict the policy's victims
//!         insert obj with size; used += size
//! ```
//!
//! Every single-tier policy runs so: its queues are sized in bytes from the capacity, as
//! libCacheSim sizes them. Hybrid policies place pages in DRAM and PCM frames and run
//! with capacities in pages only.
//!
//! Byte runs carry no device costs: they count hits, misses and bytes, as a cache
//! simulator does.

use rayon::prelude::*;
use serde::Serialize;

use super::engine::Engine;
use super::metrics::ratio;
use super::{BuildContext, Capacity, Effect, PolicyInfo, Request, Unit};
use crate::core::dense_ids::renumber;
use crate::trace::{Event, EventSource, PageId};
use crate::{Error, Result};

/// What a byte-capacity run counts.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct ByteMetrics {
    pub capacity_bytes: u64,
    pub accesses: u64,
    pub hits: u64,
    pub misses: u64,
    /// Misses of objects the policy does not admit, which are not inserted: larger than
    /// the whole cache, or than the queue that admits new objects.
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

/// One cache of a byte capacity, fed one request at a time.
pub struct ByteCache {
    engine: Engine,
    policy_name: &'static str,
    metrics: ByteMetrics,
}

impl ByteCache {
    /// `info` (an online single-tier policy) at `capacity_bytes`.
    pub fn new(
        info: &'static PolicyInfo,
        capacity_bytes: u64,
        page_count_hint: usize,
    ) -> Result<Self> {
        Self::with_future(info, capacity_bytes, page_count_hint, None)
    }

    /// `info` at `capacity_bytes`, with the pages requested in order for an offline
    /// policy (Belady's OPT).
    pub fn with_future(
        info: &'static PolicyInfo,
        capacity_bytes: u64,
        page_count_hint: usize,
        future: Option<std::sync::Arc<[PageId]>>,
    ) -> Result<Self> {
        Self::with_object_ids(info, capacity_bytes, page_count_hint, future, None)
    }

    /// As [`ByteCache::with_future`], with the trace's object ids by page id for the
    /// policies that hash pages ([`BuildContext::object_ids`], `--hash-object-ids`).
    pub fn with_object_ids(
        info: &'static PolicyInfo,
        capacity_bytes: u64,
        page_count_hint: usize,
        future: Option<std::sync::Arc<[PageId]>>,
        object_ids: Option<std::sync::Arc<[u64]>>,
    ) -> Result<Self> {
        if capacity_bytes == 0 {
            return Err(Error::config(
                "memory",
                "the capacity must be at least 1 byte",
            ));
        }
        if info.family != super::Family::SingleTier {
            return Err(unsupported(info));
        }
        if info.offline && future.is_none() {
            return Err(Error::config(
                format!("policy {}", info.name),
                "is offline: it needs the whole trace in memory",
            ));
        }
        let capacity = usize::try_from(capacity_bytes)
            .map_err(|_| Error::config("memory", format!("{capacity_bytes} bytes is too large")))?;
        // Requests are renumbered in first-seen order (`request`), so the future is too.
        let future = future.map(|f| renumber(&f).map_or(f, Into::into));
        let engine = Engine::build(
            info,
            &BuildContext {
                capacity: Capacity::single(capacity),
                page_count_hint,
                future,
                object_ids,
            },
            Unit::Bytes,
        )?;
        Ok(ByteCache {
            engine,
            policy_name: info.name,
            metrics: ByteMetrics {
                capacity_bytes,
                ..ByteMetrics::default()
            },
        })
    }

    /// One request of `size` bytes for `page`.
    #[inline]
    pub fn request(&mut self, page: PageId, size: u64) -> Result<()> {
        let m = &mut self.metrics;
        m.accesses += 1;
        m.bytes_requested += size;
        let Some(page) = self.engine.memory_mut().dense_page(page) else {
            return Err(Error::config(
                format!("policy {}", self.policy_name),
                format!(
                    "request {}: page {page} is past the 2^32 - 1 distinct pages a run can hold",
                    m.accesses
                ),
            ));
        };
        if let Err(violation) = self.engine.access(&Request::sized(page, size)) {
            return Err(Error::config(
                format!("policy {}", self.policy_name),
                format!(
                    "broke its contract at request {} of a byte-capacity run: {violation}",
                    self.metrics.accesses
                ),
            ));
        }
        let effects = self.engine.effects();
        let m = &mut self.metrics;
        match effects[0] {
            Effect::Hit { .. } => m.hits += 1,
            first => {
                m.misses += 1;
                m.bytes_missed += size;
                if first == Effect::Bypass {
                    m.too_large += 1;
                }
            }
        }
        m.evictions += effects[1..]
            .iter()
            .filter(|e| matches!(e, Effect::Evict { .. }))
            .count() as u64;
        Ok(())
    }

    /// Bytes held now.
    pub fn used(&self) -> u64 {
        self.engine.memory().used_total()
    }

    /// The policy on its memory.
    pub fn engine(&self) -> &Engine {
        &self.engine
    }

    pub fn metrics(&self) -> ByteMetrics {
        self.metrics
    }
}

fn unsupported(info: &PolicyInfo) -> Error {
    Error::config(
        format!("policy {}", info.name),
        format!(
            "is a hybrid policy: it places pages in DRAM and PCM frames and runs with \
             capacities in pages only; policies that run with a capacity in bytes: {}",
            byte_policies().join(", ")
        ),
    )
}

/// The policies that run with a capacity in bytes: every single-tier one.
pub fn byte_policies() -> Vec<&'static str> {
    super::REGISTRY
        .iter()
        .filter(|info| info.family == super::Family::SingleTier)
        .map(|info| info.name)
        .collect()
}

/// The requests of a trace with object sizes: page ids and sizes in bytes, in order.
#[derive(Debug, Clone, Default)]
pub struct SizedRequests {
    pub pages: Vec<PageId>,
    pub sizes: Vec<u32>,
    /// The trace's object ids by page id, for policies that hash pages
    /// ([`BuildContext::object_ids`]); `None`: they hash page ids.
    pub object_ids: Option<std::sync::Arc<[u64]>>,
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
        "a capacity in bytes needs a trace with object sizes (oracleGeneral, vscsi, twr, twrNS); give this trace's capacity in pages",
    )
}

/// A run of `info` at `capacity_bytes` over a streamed source.
pub fn run_source_bytes(
    source: &mut dyn EventSource,
    info: &'static PolicyInfo,
    capacity_bytes: u64,
    progress: &mut dyn FnMut(u64),
) -> Result<ByteMetrics> {
    if info.offline {
        return Err(Error::config(
            format!("policy {}", info.name),
            "is offline: read the trace into memory (read_sized) and use simulate_each_bytes",
        ));
    }
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
    // A hint: the requests name no more pages than there are requests.
    let footprint = requests
        .pages
        .iter()
        .max()
        .map_or(0, |&p| p as usize + 1)
        .min(requests.pages.len());
    let future: Option<std::sync::Arc<[PageId]>> =
        info.offline.then(|| requests.pages.as_slice().into());
    capacities
        .par_iter()
        .map(|&capacity| {
            let mut cache = ByteCache::with_object_ids(
                info,
                capacity,
                footprint,
                future.clone(),
                requests.object_ids.clone(),
            )?;
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
    use crate::mm::placement::sim::{run_trace, RunSetup};
    use crate::trace::{Tables, Trace};
    use proptest::prelude::*;

    fn run(policy: &str, capacity: u64, requests: &[(PageId, u64)]) -> (ByteMetrics, Vec<bool>) {
        let future: std::sync::Arc<[PageId]> = requests.iter().map(|&(p, _)| p).collect();
        let info = find_policy(policy).unwrap();
        let mut cache = ByteCache::with_future(info, capacity, 0, Some(future)).unwrap();
        let mut hits = Vec::new();
        for &(page, size) in requests {
            let before = cache.metrics().hits;
            cache.request(page, size).unwrap();
            cache.engine().check_agreement().unwrap();
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

    /// Worked by hand: 40 bytes of S3-FIFO (small queue 4 bytes, main 36, ghosts 36).
    #[test]
    fn s3fifo_admits_by_its_small_queue_in_bytes() {
        // a(4): S [a]; a hit twice (freq 2).
        // x(5): larger than S: a miss, not admitted.
        // b..j (4 each): S [j .. b a], 40 bytes: full.
        // k(4): 44 > 40: |M| 0 and S not empty: evict_S: tail a has freq 2: to M;
        //   tail b (freq 0) evicted, to G.     S [k j .. c]  M [a]  G [b]
        // b(4): a ghost: out of G, admitted, into M; 44 > 40: |M| 4 is within 36 and S
        //   is not empty: evict_S: c evicted, to G.   S [k .. d]  M [b a]  G [c]
        // a: a hit.
        let mut requests = vec![(0, 4), (0, 4), (0, 4), (99, 5)];
        requests.extend((1..=9).map(|p| (p, 4)));
        requests.extend([(10, 4), (1, 4), (0, 4)]);
        let (m, hits) = run("s3fifo", 40, &requests);
        let mut expected = vec![false, true, true, false];
        expected.extend([false; 11]);
        expected.push(true);
        assert_eq!(hits, expected);
        assert_eq!((m.too_large, m.evictions, m.hits), (1, 2, 3));
    }

    #[test]
    fn hybrid_policies_say_they_run_in_pages() {
        for name in ["hybrid-lru", "hybrid-2q", "clock-dwf", "app-aware"] {
            let err = ByteCache::new(find_policy(name).unwrap(), 1000, 0)
                .err()
                .unwrap()
                .to_string();
            assert!(err.contains("capacities in pages only"), "{name}: {err}");
            assert!(
                err.contains("s3fifo") && err.contains("opt"),
                "{name}: {err}"
            );
        }
        let err = ByteCache::new(find_policy("opt").unwrap(), 1000, 0)
            .err()
            .unwrap();
        assert!(err.to_string().contains("offline"), "{err}");
        assert_eq!(
            byte_policies(),
            [
                "lru",
                "fifo",
                "clock",
                "sieve",
                "s3fifo",
                "lfu",
                "lecar",
                "cacheus",
                "fifo-merge",
                "lhd",
                "hyperbolic",
                "cr-lfu",
                "mru",
                "clock-2",
                "lfuda",
                "gdsf",
                "qdlp",
                "lru-2",
                "mq",
                "slru-4",
                "2q",
                "arc",
                "lirs",
                "w-tinylfu",
                "opt"
            ]
        );
    }

    /// A trace of reads of `pages`, one a nanosecond.
    fn page_trace(pages: &[PageId]) -> Trace {
        Trace {
            events: pages
                .iter()
                .enumerate()
                .map(|(i, &p)| Event::access(i as u64, 0, p, false, false))
                .collect(),
            tables: Tables::default(),
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(48))]

        /// Every single-tier policy: every request is a hit or a miss, bytes in use never
        /// pass the capacity, the policy and the engine agree on every page, and with
        /// every size 1 a byte run is the page run of the same capacity.
        #[test]
        fn invariants_and_unit_sizes(
            capacity in 1u64..60,
            requests in prop::collection::vec((0u32..60, 1u64..30), 1..300),
        ) {
            for policy in byte_policies() {
                let (m, _) = run(policy, capacity, &requests);
                prop_assert_eq!(m.hits + m.misses, m.accesses);
                prop_assert!(m.bytes_missed <= m.bytes_requested);

                let unit: Vec<(PageId, u64)> = requests.iter().map(|&(p, _)| (p, 1)).collect();
                let (bytes, hits) = run(policy, capacity, &unit);
                let pages: Vec<PageId> = unit.iter().map(|&(p, _)| p).collect();
                let info = find_policy(policy).unwrap();
                let paged = run_trace(
                    &page_trace(&pages),
                    &RunSetup::new(info, Capacity::single(capacity as usize)),
                )
                .unwrap();
                prop_assert_eq!(bytes.hits, paged.hits, "{}", policy);
                prop_assert_eq!(bytes.evictions, paged.evictions, "{}", policy);
                prop_assert_eq!(hits.len(), pages.len());
            }
        }
    }
}
