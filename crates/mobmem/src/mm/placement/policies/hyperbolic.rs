//! Hyperbolic caching: evict, of 64 resident pages drawn at random, the one with the
//! fewest hits per request since it came in.
//!
//! Source: A. Blankstein, S. Sen and M. J. Freedman, "Hyperbolic caching: flexible
//! caching for web applications", USENIX ATC 2017; as libCacheSim implements it (commit
//! aa0fc409, `cache/eviction/Hyperbolic.c`), whose default is 64 samples.
//!
//! ```text
//! on access(x), the r-th request:
//!   if x resident: n[x] += 1; hit
//!   else: while full, evict(); insert x with n[x] = 1, t[x] = r; miss
//!
//! evict() during request r:
//!   best = none, score = 1e16
//!   64 times: y = sample(); s = 1e8 n[y] / (r - t[y])
//!             if s < score: best = y, score = s
//!   remove best
//! ```
//! The age counts from the page's insertion, not its last access, as libCacheSim has
//! it. `sample()` is libCacheSim's `hashtable_rand_obj`, which this file reproduces so
//! that the same pages are drawn: resident pages sit in a chained hash table of 2^p
//! buckets (p = 12 at first, libCacheSim's `max(12, 16 - 8)`), keyed by XXH3-64 of the
//! page's 8-byte key; an insertion first doubles the table if it holds more than 2^p
//! pages (moving each old bucket's chain, in bucket order, to the front of its new
//! bucket), then puts the page at the front of its bucket's chain; a sample draws
//! buckets with libCacheSim's generator ([`Lcg`]) until one is not empty and takes the
//! page at the front of its chain, so pages behind another in a chain are never drawn.
//!
//! The key is the trace's page id, or its object id when the run hashes object ids
//! ([`crate::mm::placement::BuildContext::object_ids`], `sim --hash-object-ids`), which
//! is what libCacheSim hashes: then the table is libCacheSim's, bucket for bucket, and so
//! are the miss counts (`tests/policies_libcachesim.rs`). With page ids the buckets
//! differ and so do the draws; the miss ratios stay within a few thousandths.
//!
//! Per page: a 16-byte record (count, insertion time, chain link). Per bucket: its front
//! page and a bit saying whether it holds one, which the draws read: most draws find an
//! empty bucket, and the bits fit the first level of the cache.

use std::sync::Arc;

use super::rand::Lcg;
use crate::core::ensure_index;
use crate::mm::placement::engine::Memory;
use crate::mm::placement::{CachePolicy, Effects, Request, Tier};
use crate::trace::PageId;

/// Pages drawn for each eviction (libCacheSim's `n-sample`).
pub const SAMPLES: usize = 64;
/// Chains of draws followed side by side.
const LANES: usize = 4;
/// The table's first size, as a power of two.
const FIRST_POWER: u32 = 12;
/// No page: an empty bucket, the end of a chain, a page not resident (its count).
const NONE: u32 = u32::MAX;

/// What the policy keeps of a page.
#[derive(Debug, Clone, Copy)]
struct Entry {
    /// The request that inserted it, if resident.
    entered: u64,
    /// Hits since insertion plus one; [`NONE`] for a page not resident.
    count: u32,
    /// The next page in its chain.
    chain: u32,
}

const ABSENT: Entry = Entry {
    entered: 0,
    count: NONE,
    chain: NONE,
};

#[derive(Debug, Clone)]
pub struct Hyperbolic {
    pages: Vec<Entry>,
    /// Each bucket's front page.
    buckets: Vec<u32>,
    /// A bit a bucket, set if it holds a page: a draw reads this, in the first level of
    /// the cache, and only a draw that found a page reads its bucket.
    filled: Vec<u64>,
    power: u32,
    resident: usize,
    /// Requests so far, this one included (libCacheSim's `n_req`).
    requests: u64,
    rand: Lcg,
    keys: Option<Arc<[u64]>>,
}

impl Hyperbolic {
    pub fn new(page_count_hint: usize) -> Self {
        Hyperbolic {
            pages: vec![ABSENT; page_count_hint],
            buckets: vec![NONE; 1 << FIRST_POWER],
            filled: vec![0; 1 << (FIRST_POWER - 6)],
            power: FIRST_POWER,
            resident: 0,
            requests: 0,
            rand: Lcg::default(),
            keys: None,
        }
    }

    /// The policy keyed by `keys[page]` (the trace's object ids) instead of page ids.
    pub fn with_keys(page_count_hint: usize, keys: Arc<[u64]>) -> Self {
        Hyperbolic {
            keys: Some(keys),
            ..Self::new(page_count_hint)
        }
    }

    /// The table's buckets, each chain from its front: for tests.
    pub fn chains(&self) -> Vec<Vec<PageId>> {
        self.buckets
            .iter()
            .map(|&head| {
                let mut chain = Vec::new();
                let mut at = head;
                while at != NONE {
                    chain.push(at);
                    at = self.pages[at as usize].chain;
                }
                chain
            })
            .collect()
    }

    fn bucket(&self, page: PageId, mem: &Memory) -> usize {
        let id = mem.trace_page(page);
        let key = self
            .keys
            .as_ref()
            .and_then(|keys| keys.get(id as usize).copied())
            .unwrap_or(u64::from(id));
        bucket_of(key, self.power)
    }

    fn push_front(&mut self, bucket: usize, page: PageId) {
        self.pages[page as usize].chain = self.buckets[bucket];
        self.buckets[bucket] = page;
        self.filled[bucket / 64] |= 1 << (bucket % 64);
    }

    /// Double the table, moving the chains as libCacheSim's `_chained_hashtable_expand_v2`.
    fn grow(&mut self, mem: &Memory) {
        let old = std::mem::replace(&mut self.buckets, vec![NONE; 2 << self.power]);
        self.filled = vec![0; 2 << (self.power - 6)];
        self.power += 1;
        for head in old {
            let mut at = head;
            while at != NONE {
                let next = self.pages[at as usize].chain;
                let bucket = self.bucket(at, mem);
                self.push_front(bucket, at);
                at = next;
            }
        }
    }

    fn unlink(&mut self, page: PageId, mem: &Memory) {
        let bucket = self.bucket(page, mem);
        let after = self.pages[page as usize].chain;
        if self.buckets[bucket] == page {
            self.buckets[bucket] = after;
            if after == NONE {
                self.filled[bucket / 64] &= !(1 << (bucket % 64));
            }
        } else {
            let mut at = self.buckets[bucket];
            while self.pages[at as usize].chain != page {
                at = self.pages[at as usize].chain;
            }
            self.pages[at as usize].chain = after;
        }
        self.pages[page as usize] = ABSENT;
        self.resident -= 1;
    }

    /// [`SAMPLES`] resident pages, drawn as libCacheSim's `chained_hashtable_rand_obj_v2`
    /// draws each: a bucket at random until one is not empty, the page at its front.
    /// The draws are followed as [`LANES`] chains side by side (each moved on [`LANES`]
    /// steps at a time), so that no draw waits for the one before it, and each is looked
    /// up in the bits of filled buckets without a branch; the buckets found are read
    /// once all are found, their pages prefetched for [`Hyperbolic::least_score`]. Draws
    /// past the last bucket needed are given back.
    fn sample(&mut self) -> [PageId; SAMPLES] {
        let filled = &self.filled[..];
        let mask = self.buckets.len() - 1;
        let (a, c) = const { Lcg::jump::<LANES>() };
        let mut draws: [u64; LANES] = self.rand.draws();
        // Past SAMPLES, room for the rest of a group (the index is masked to it).
        let mut found_at = [0u32; 2 * SAMPLES];
        let mut found = 0;
        let is_filled = |draw: u64| {
            let bucket = draw as usize & mask;
            (filled[bucket / 64] >> (bucket % 64)) as usize & 1
        };
        loop {
            let before = found;
            for &draw in &draws {
                found_at[found % (2 * SAMPLES)] = (draw as usize & mask) as u32;
                found += is_filled(draw);
            }
            if found >= SAMPLES {
                let mut taken = before;
                for &draw in &draws {
                    taken += is_filled(draw);
                    if taken == SAMPLES {
                        self.rand.resume_after(draw);
                        break;
                    }
                }
                break;
            }
            draws = draws.map(|draw| a.wrapping_mul(draw).wrapping_add(c));
        }
        let mut sampled = [NONE; SAMPLES];
        for (page, &bucket) in sampled.iter_mut().zip(&found_at) {
            *page = self.buckets[bucket as usize];
            crate::core::prefetch::prefetch(&self.pages, *page as usize);
        }
        sampled
    }

    /// Of `sampled`, the page of least score `1e8 n / (r - t)` (the first of equal
    /// scores), as libCacheSim finds it: a page replaces the best so far if its score,
    /// rounded to a double, is below the best's. Division is correctly rounded, so
    /// rounding keeps the order of the exact quotients (a smaller one never rounds to a
    /// larger double): a page whose exact quotient is not below the best's cannot replace
    /// it, and only the others, a few a sample, need the division. The exact comparison
    /// is of `n a_best` against `n_best a` in 64-bit integers, with ages below 2^32 (`1e8 n`
    /// is exact in a double for any 32-bit `n`, and so is such an age).
    fn least_score(&self, sampled: &[PageId]) -> PageId {
        let score = |page: PageId| {
            let entry = self.pages[page as usize];
            let age = self.requests - entry.entered;
            (
                entry.count,
                age,
                1.0e8 * f64::from(entry.count) / age as f64,
            )
        };
        let (first, rest) = sampled.split_first().expect("a sample has pages");
        let (count, age, first_score) = score(*first);
        if first_score >= 1.0e16 || first_score.is_nan() || self.requests > u64::from(u32::MAX) {
            // A first page that is no best at all, or ages whose products with counts
            // could pass 64 bits: the plain comparison of doubles.
            let (mut best, mut best_score) = (NONE, 1.0e16);
            for &page in sampled {
                let (_, _, score) = score(page);
                if best_score > score {
                    (best, best_score) = (page, score);
                }
            }
            return best;
        }
        let (mut best, mut best_score) = (*first, first_score);
        let (mut best_count, mut best_age) = (u64::from(count), age);
        for &page in rest {
            let entry = self.pages[page as usize];
            let age = self.requests - entry.entered;
            if u64::from(entry.count) * best_age < best_count * age {
                let score = 1.0e8 * f64::from(entry.count) / age as f64;
                if best_score > score {
                    (best, best_score) = (page, score);
                    (best_count, best_age) = (u64::from(entry.count), age);
                }
            }
        }
        best
    }
}

/// The bucket of `key` in a table of 2^`power`: XXH3-64 of its 8 bytes, as libCacheSim
/// hashes an object id (`get_hash_value_int_64`).
pub fn bucket_of(key: u64, power: u32) -> usize {
    (twox_hash::XxHash3_64::oneshot(&key.to_le_bytes()) & ((1u64 << power) - 1)) as usize
}

impl CachePolicy for Hyperbolic {
    #[inline]
    fn hit(&mut self, req: &Request, _mem: &Memory, _out: &mut Effects) {
        self.requests += 1;
        let count = &mut self.pages[req.page as usize].count;
        *count = count.saturating_add(1).min(NONE - 1);
    }

    fn admit(&mut self, req: &Request, mem: &Memory, _out: &mut Effects) -> bool {
        self.requests += 1;
        req.size <= mem.capacity_total()
    }

    fn evict(&mut self, _req: &Request, mem: &Memory, out: &mut Effects) {
        if self.resident == 0 {
            return;
        }
        let sampled = self.sample();
        let best = self.least_score(&sampled);
        self.unlink(best, mem);
        out.evict(best);
    }

    fn insert(&mut self, req: &Request, mem: &Memory, _out: &mut Effects) -> Tier {
        let page = req.page;
        ensure_index(&mut self.pages, page, ABSENT);
        if self.resident > 1 << self.power {
            self.grow(mem);
        }
        let entry = &mut self.pages[page as usize];
        entry.count = 1;
        entry.entered = self.requests;
        let bucket = self.bucket(page, mem);
        self.push_front(bucket, page);
        self.resident += 1;
        Tier::Dram
    }

    fn remove(&mut self, page: PageId, mem: &Memory) {
        if self.holds(page).is_some() {
            self.unlink(page, mem);
        }
    }

    fn holds(&self, page: PageId) -> Option<Tier> {
        self.pages
            .get(page as usize)
            .is_some_and(|entry| entry.count != NONE)
            .then_some(Tier::Dram)
    }

    #[inline]
    fn prefetch(&self, page: PageId, _mem: &Memory) {
        crate::core::prefetch::prefetch(&self.pages, page as usize);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mm::placement::policies::testing::*;

    #[test]
    fn keys_hash_as_libcachesims_xxh3() {
        // XXH3_64bits of the 8-byte id, computed by libCacheSim's bundled xxHash.
        for (id, hash) in [
            (0u64, 14374147212387527897u64),
            (1, 3439722301264460078),
            (12345, 11234342765698724289),
            (4294967297, 6294774463056009471),
        ] {
            assert_eq!(twox_hash::XxHash3_64::oneshot(&id.to_le_bytes()), hash);
            assert_eq!(bucket_of(id, 12), (hash & 4095) as usize);
        }
    }

    #[test]
    fn the_fewest_hits_per_request_since_insertion_go() {
        // Two pages, so every draw lands on one of them: page 1 (in at request 1, one hit)
        // scores 2/3 at request 4 and page 2 (in at 2, none) 1/2, so page 2 goes; then at
        // request 6 page 1 scores 2/5 and page 3 (in at 4, one hit) 2/2, so page 1 goes.
        let mut hb = engine(Hyperbolic::new(0), 2);
        let outcome = run_pages(&mut hb, &[1, 2, 1, 3, 3, 4]);
        assert_eq!(hit_pattern(&outcome), "mmhmhm");
        assert_eq!(eviction_steps(&outcome), vec![(3, 2), (5, 1)]);
    }

    /// Hyperbolic over a plain table: a vector of chains rebuilt as libCacheSim's is.
    fn reference(capacity: usize, trace: &[PageId]) -> Vec<(bool, Vec<PageId>)> {
        let mut power = FIRST_POWER;
        let mut table: Vec<Vec<PageId>> = vec![Vec::new(); 1 << power];
        let mut state = std::collections::HashMap::new(); // page -> (count, entered)
        let mut rand = Lcg::default();
        let mut out = Vec::new();
        for (r, &page) in (1u64..).zip(trace) {
            if let Some((count, _)) = state.get_mut(&page) {
                *count += 1;
                out.push((true, vec![]));
                continue;
            }
            let mut evicted = vec![];
            while state.len() >= capacity {
                let mut best = (f64::INFINITY, 0);
                for _ in 0..SAMPLES {
                    let chain = loop {
                        let b = (rand.draw() & ((1 << power) - 1)) as usize;
                        if !table[b].is_empty() {
                            break &table[b];
                        }
                    };
                    let (count, entered) = state[&chain[0]];
                    let score = 1.0e8 * f64::from(count) / (r - entered) as f64;
                    if score < best.0 {
                        best = (score, chain[0]);
                    }
                }
                let victim = best.1;
                table[bucket_of(u64::from(victim), power)].retain(|&p| p != victim);
                state.remove(&victim);
                evicted.push(victim);
            }
            if state.len() > 1 << power {
                power += 1;
                let old = std::mem::replace(&mut table, vec![Vec::new(); 1 << power]);
                for p in old.into_iter().flatten() {
                    table[bucket_of(u64::from(p), power)].insert(0, p);
                }
            }
            table[bucket_of(u64::from(page), power)].insert(0, page);
            state.insert(page, (1u32, r));
            out.push((false, evicted));
        }
        out
    }

    #[test]
    fn evictions_match_a_plain_table_through_growth() {
        // 9000 pages in a memory of 5000: the table doubles once, at 4097 resident pages,
        // with chains long enough that pages behind others are never drawn.
        let trace: Vec<PageId> = (0..30_000u64)
            .map(|i| (crate::core::mix64(i) % 9000) as PageId)
            .collect();
        let mut hb = engine(Hyperbolic::new(0), 5000);
        let outcome = run_pages(&mut hb, &trace);
        let expected = reference(5000, &trace);
        for (i, (effects, (hit, evicted))) in outcome.iter().zip(&expected).enumerate() {
            assert_eq!(hits(std::slice::from_ref(effects))[0], *hit, "request {i}");
            assert_eq!(
                &evictions(std::slice::from_ref(effects))[0],
                evicted,
                "request {i}"
            );
        }
        assert_eq!(hb.policy().power, FIRST_POWER + 1);
        let chains = hb.policy().chains();
        assert_eq!(chains.iter().map(Vec::len).sum::<usize>(), 5000);
        assert!(chains.iter().any(|c| c.len() > 1));
    }

    #[test]
    fn a_page_removed_from_the_middle_of_a_chain_leaves_it_whole() {
        let mut hb = engine(Hyperbolic::new(0), 10_000);
        let pages: Vec<PageId> = (0..6000).collect();
        run_pages(&mut hb, &pages);
        let chain = hb
            .policy()
            .chains()
            .into_iter()
            .find(|c| c.len() >= 3)
            .unwrap();
        hb.remove(chain[1]);
        let after = hb.policy().chains();
        let now = after.iter().find(|c| c.first() == Some(&chain[0])).unwrap();
        let mut expected = chain.clone();
        expected.remove(1);
        assert_eq!(now, &expected);
        assert_eq!(hb.policy().holds(chain[1]), None);
        assert_eq!(after.iter().map(Vec::len).sum::<usize>(), 5999);
    }
}
