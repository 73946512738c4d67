//! Miss-ratio curves: the hits of a policy at many cache sizes from one pass of a trace.
//!
//! - **Exact LRU, in one pass** ([`lru_distances`]): Mattson, Gecsei, Slutz, Traiger,
//!   "Evaluation techniques for storage hierarchies", IBM Systems Journal 1970. LRU is a
//!   stack algorithm: an access hits a cache of `c` pages exactly when its *stack
//!   distance* (the number of distinct pages used since the page's previous access, the
//!   page included) is at most `c`. So one histogram of distances gives the hits at every
//!   size. The distances are counted over access times with a bit set at the latest
//!   access of each page: the distance of an access is the number of bits set after the
//!   page's previous time, counted in a Fenwick tree over blocks of 512 bits and within
//!   the block. The times are renumbered (the live ones packed to the front) whenever
//!   they fill a bitmap of twice the pages seen, so it stays the size of the footprint,
//!   not of the trace.
//! - **SHARDS** ([`shards_distances`]): Waldspurger, Park, Garthwaite, Ahmad, "Efficient
//!   MRC Construction with SHARDS", FAST 2015. Only pages whose hash falls under a
//!   threshold are tracked (spatial sampling at rate `R`); a sampled distance `d` stands
//!   for `d / R`, and each sampled access for `1 / R` accesses. *Fixed-rate* keeps `R`;
//!   *fixed-size* keeps at most `s_max` pages, lowering the threshold (and `R`) as new
//!   pages come, dropping the tracked pages of the highest hash. Both apply SHARDS-adj:
//!   the difference between the accesses expected at rate `R` and those sampled goes to
//!   the smallest distance a sampled access can have (`1 / R`), or, when more were
//!   sampled than expected, comes off the smallest distances; the paper shows this
//!   removes most of the bias that a few hot pages sampled or not would cause.
//! - **Any other policy**: [`simulate_sizes`] decodes the trace once and simulates each
//!   size on it, in parallel over sizes.

use rayon::prelude::*;

use super::metrics::Metrics;
use super::sim::{run_trace, RunSetup};
use super::Capacity;
use crate::core::dense_ids::DenseIds;
use crate::trace::{PageId, Trace};
use crate::Result;

/// Hits and misses at one cache size.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct CurvePoint {
    pub capacity: u64,
    pub hits: u64,
    pub misses: u64,
    pub accesses: u64,
}

impl CurvePoint {
    pub fn miss_ratio(&self) -> f64 {
        super::metrics::ratio(self.misses, self.accesses)
    }
}

/// Stack distances of a sequence of accesses: `counts[d]` accesses at distance `d`
/// (`d >= 1`; `counts[0]` is unused), and the accesses with no previous one (cold).
/// With sampling, counts are scaled to stand for the whole trace.
#[derive(Debug, Clone, PartialEq)]
pub struct DistanceHistogram {
    pub counts: Vec<f64>,
    pub cold: f64,
    pub accesses: u64,
}

impl DistanceHistogram {
    /// The LRU hits and misses at each of `capacities` (pages), rounded to whole accesses
    /// (exact without sampling).
    pub fn curve(&self, capacities: &[u64]) -> Vec<CurvePoint> {
        // Cumulative hits by distance.
        let mut cumulative = Vec::with_capacity(self.counts.len());
        let mut sum = 0.0;
        for &c in &self.counts {
            sum += c;
            cumulative.push(sum);
        }
        capacities
            .iter()
            .map(|&capacity| {
                let hits = match cumulative.len() {
                    0 => 0.0,
                    n => cumulative[(capacity as usize).min(n - 1)],
                };
                let hits = (hits.round() as u64).min(self.accesses);
                CurvePoint {
                    capacity,
                    hits,
                    misses: self.accesses - hits,
                    accesses: self.accesses,
                }
            })
            .collect()
    }
}

/// A Fenwick (binary indexed) tree of counts, 1-based inside.
struct Fenwick {
    tree: Vec<u32>,
}

impl Fenwick {
    /// A tree over `counts`, built in O(n).
    fn from_counts(counts: &[u32]) -> Self {
        let mut tree = vec![0u32; counts.len() + 1];
        tree[1..].copy_from_slice(counts);
        for i in 1..tree.len() {
            let parent = i + (i & i.wrapping_neg());
            if parent < tree.len() {
                let v = tree[i];
                tree[parent] += v;
            }
        }
        Fenwick { tree }
    }

    fn add(&mut self, at: usize, delta: i32) {
        let mut i = at + 1;
        while i < self.tree.len() {
            self.tree[i] = self.tree[i].wrapping_add_signed(delta);
            i += i & i.wrapping_neg();
        }
    }

    /// Sum over `0..end`.
    fn prefix(&self, end: usize) -> u64 {
        let mut i = end;
        let mut sum = 0u64;
        while i > 0 {
            sum += u64::from(self.tree[i]);
            i &= i - 1;
        }
        sum
    }
}

/// No access yet.
const NEVER: u32 = u32::MAX;

/// Times per block of the bitmap: 512 bits, one 64-byte cache line.
const BLOCK_TIMES: usize = 512;

/// 512 times of the bitmap, aligned to a cache line so that counting the ones before a
/// time reads one line.
#[derive(Clone, Copy, Default)]
#[repr(align(64))]
struct Block([u64; 8]);

impl Block {
    /// Ones at offsets `0..=offset`.
    #[inline]
    fn ones_through(&self, offset: usize) -> u64 {
        let (word, bit) = (offset / 64, offset % 64);
        let before: u32 = self.0[..word].iter().map(|w| w.count_ones()).sum();
        let mask = if bit == 63 {
            u64::MAX
        } else {
            (2u64 << bit) - 1
        };
        u64::from(before + (self.0[word] & mask).count_ones())
    }
}

/// Stack distances over access times: a bit per time, set at the latest access of each
/// page, in blocks of 512 with a Fenwick tree of their counts (small enough to stay in
/// the cache). The distance of an access is the number of set bits after the page's
/// previous time. Times are renumbered (the live ones packed to the front) when they
/// run out, so the bitmap stays about twice the pages tracked.
struct StackDistances {
    /// Per page id: the time of its latest access, or [`NEVER`].
    last: Vec<u32>,
    bits: Vec<Block>,
    blocks: Fenwick,
    /// Next time to hand out.
    now: usize,
    /// Pages with a time in the bitmap.
    live: usize,
}

impl StackDistances {
    fn new(pages_hint: usize) -> Self {
        let mut s = StackDistances {
            last: Vec::new(),
            bits: Vec::new(),
            blocks: Fenwick::from_counts(&[]),
            now: 0,
            live: 0,
        };
        s.resize_times(pages_hint, 0);
        s
    }

    /// A bitmap with its first `live` times set, of room for twice the pages tracked
    /// (and for at least as many times as page ids seen, so that renumbering, which
    /// scans them, costs O(1) an access).
    fn resize_times(&mut self, pages_hint: usize, live: usize) {
        let times = (2 * live)
            .max(pages_hint)
            .max(self.last.len())
            .max(BLOCK_TIMES);
        let blocks = times.div_ceil(BLOCK_TIMES);
        self.bits = vec![Block::default(); blocks];
        let mut counts = vec![0u32; blocks];
        for t in 0..live {
            self.bits[t / BLOCK_TIMES].0[(t % BLOCK_TIMES) / 64] |= 1 << (t % 64);
            counts[t / BLOCK_TIMES] += 1;
        }
        self.blocks = Fenwick::from_counts(&counts);
        self.now = live;
    }

    fn times(&self) -> usize {
        self.bits.len() * BLOCK_TIMES
    }

    /// Bring the state `page`'s next access reads into the cache: its time, and the
    /// bitmap block of that time once the time is known (a hint; see
    /// [`crate::core::prefetch`]).
    #[inline]
    fn prefetch_page(&self, page: u32) {
        crate::core::prefetch::prefetch(&self.last, page as usize);
    }

    #[inline]
    fn prefetch_block(&self, page: u32) {
        if let Some(&t) = self.last.get(page as usize) {
            if t != NEVER {
                crate::core::prefetch::prefetch(&self.bits, t as usize / BLOCK_TIMES);
            }
        }
    }

    #[inline]
    fn set(&mut self, t: usize, on: bool) {
        let word = &mut self.bits[t / BLOCK_TIMES].0[(t % BLOCK_TIMES) / 64];
        if on {
            *word |= 1 << (t % 64);
        } else {
            *word &= !(1 << (t % 64));
        }
        self.blocks.add(t / BLOCK_TIMES, if on { 1 } else { -1 });
    }

    /// The stack distance of an access to `page` (`None`: its first), then the access
    /// recorded.
    #[inline]
    fn access(&mut self, page: u32) -> Option<u64> {
        let p = page as usize;
        if p >= self.last.len() {
            self.last.resize((p + 1).max(self.last.len() * 2), NEVER);
        }
        if self.now == self.times() {
            self.renumber();
        }
        let previous = self.last[p];
        let distance = if previous == NEVER {
            self.live += 1;
            None
        } else {
            let t = previous as usize;
            // Pages whose latest access is after this page's, plus the page itself.
            let through = self.blocks.prefix(t / BLOCK_TIMES)
                + self.bits[t / BLOCK_TIMES].ones_through(t % BLOCK_TIMES);
            self.set(t, false);
            Some(self.live as u64 - through + 1)
        };
        let now = self.now;
        self.set(now, true);
        self.last[p] = now as u32;
        self.now += 1;
        distance
    }

    /// A page no longer tracked (fixed-size SHARDS).
    fn forget(&mut self, page: u32) {
        let p = page as usize;
        if let Some(&t) = self.last.get(p) {
            if t != NEVER {
                self.set(t as usize, false);
                self.last[p] = NEVER;
                self.live -= 1;
            }
        }
    }

    /// Pack the live times to the front, in order.
    fn renumber(&mut self) {
        let mut page_at = vec![NEVER; self.now];
        for (page, &t) in self.last.iter().enumerate() {
            if t != NEVER {
                page_at[t as usize] = page as u32;
            }
        }
        let mut next = 0u32;
        for &page in page_at.iter().filter(|&&p| p != NEVER) {
            self.last[page as usize] = next;
            next += 1;
        }
        debug_assert_eq!(next as usize, self.live);
        self.resize_times(0, self.live);
    }
}

fn record(counts: &mut Vec<f64>, distance: usize, weight: f64) {
    if distance >= counts.len() {
        counts.resize(distance + 1, 0.0);
    }
    counts[distance] += weight;
}

/// Builds a [`DistanceHistogram`] from accesses fed one at a time, exactly or by SHARDS:
/// one pass over a streamed trace, with memory for the pages tracked only.
pub struct CurveBuilder {
    stack: StackDistances,
    counts: Vec<f64>,
    cold: f64,
    accesses: u64,
    sampling: Option<Sampling>,
    /// SHARDS: the hash threshold (out of [`HASH_SPACE`]) and the most pages tracked.
    threshold: u64,
    s_max: usize,
    /// SHARDS: tracked pages by hash, to drop the highest when over `s_max`.
    tracked: std::collections::BTreeSet<(u64, PageId)>,
    /// SHARDS-adj: the accesses the sampled ones stand for (each `1 / R` of its time).
    sampled_weight: f64,
    /// Page ids of a batch of events, reused.
    scratch: Vec<PageId>,
    /// The trace's page ids renumbered densely, so that the stack's per-page state grows
    /// with the pages tracked, not with the largest id.
    ids: DenseIds,
}

impl CurveBuilder {
    /// Exact LRU stack distances; `footprint_hint` sizes the tree (it grows as needed).
    pub fn exact(footprint_hint: usize) -> Self {
        Self::with(None, footprint_hint)
    }

    /// LRU stack distances sampled by SHARDS.
    pub fn shards(sampling: Sampling) -> Self {
        Self::with(Some(sampling), 1024)
    }

    fn with(sampling: Option<Sampling>, footprint_hint: usize) -> Self {
        let (threshold, s_max) = match sampling {
            None => (HASH_SPACE, usize::MAX),
            Some(Sampling::FixedRate(rate)) => (
                ((rate.clamp(0.0, 1.0) * HASH_SPACE as f64).round() as u64).max(1),
                usize::MAX,
            ),
            Some(Sampling::FixedSize(n)) => (HASH_SPACE, n.max(1)),
        };
        CurveBuilder {
            stack: StackDistances::new(footprint_hint),
            counts: Vec::new(),
            cold: 0.0,
            accesses: 0,
            sampling,
            threshold,
            s_max,
            tracked: Default::default(),
            sampled_weight: 0.0,
            scratch: Vec::new(),
            ids: DenseIds::new(),
        }
    }

    /// The accesses among `events`, in order (other events are skipped).
    pub fn access_events(&mut self, events: &[crate::trace::Event]) {
        let mut pages = std::mem::take(&mut self.scratch);
        pages.clear();
        pages.extend(events.iter().filter(|e| e.is_access()).map(|e| e.page()));
        self.access_all(&pages);
        self.scratch = pages;
    }

    /// Every access of `pages`, in order: the same as [`CurveBuilder::access`] on each,
    /// with the state of later accesses prefetched so that their memory reads overlap,
    /// and each distance counted a few accesses after it is known, once its counter has
    /// been prefetched too (the counts are whole numbers, so the order of the additions
    /// does not change them).
    pub fn access_all(&mut self, pages: &[PageId]) {
        const AHEAD: usize = 16;
        const DELAY: usize = 8;
        if self.sampling.is_some() {
            for &page in pages {
                self.access(page);
            }
            return;
        }
        let mut pending = [usize::MAX; DELAY];
        for (i, &id) in pages.iter().enumerate() {
            if let Some(&far) = pages.get(i + 2 * AHEAD) {
                self.ids.prefetch(far);
            }
            // Pages not seen yet have no state to bring in.
            if let Some(later) = pages.get(i + AHEAD).and_then(|&p| self.ids.get(p)) {
                self.stack.prefetch_page(later);
            }
            if let Some(nearer) = pages.get(i + AHEAD / 2).and_then(|&p| self.ids.get(p)) {
                self.stack.prefetch_block(nearer);
            }
            self.accesses += 1;
            let Some(d) = self.dense(id).and_then(|page| self.stack.access(page)) else {
                self.cold += 1.0;
                continue;
            };
            let d = d as usize;
            if d >= self.counts.len() {
                self.counts.resize(d + 1, 0.0);
            }
            crate::core::prefetch::prefetch(&self.counts, d);
            let slot = &mut pending[i % DELAY];
            if *slot != usize::MAX {
                self.counts[*slot] += 1.0;
            }
            *slot = d;
        }
        for d in pending.into_iter().filter(|&d| d != usize::MAX) {
            self.counts[d] += 1.0;
        }
    }

    /// The dense id of the trace's page `id`; `None` (counted as a first access) only
    /// past 2^32 - 1 distinct pages, which no trace of 32-bit ids reaches in memory.
    #[inline]
    fn dense(&mut self, id: PageId) -> Option<PageId> {
        self.ids.dense(id)
    }

    /// One access to `page`.
    #[inline]
    pub fn access(&mut self, id: PageId) {
        self.accesses += 1;
        if self.sampling.is_none() {
            match self.dense(id).and_then(|page| self.stack.access(page)) {
                Some(d) => record(&mut self.counts, d as usize, 1.0),
                None => self.cold += 1.0,
            }
            return;
        }
        // Sampled by the trace's id, so that renumbering samples the same pages.
        let h = page_hash(id);
        if h >= self.threshold {
            return;
        }
        let rate = self.threshold as f64 / HASH_SPACE as f64;
        let scale = 1.0 / rate;
        self.sampled_weight += scale;
        let Some(page) = self.dense(id) else {
            self.cold += scale;
            return;
        };
        match self.stack.access(page) {
            Some(d) => {
                let scaled = ((d as f64) * scale).round().max(1.0) as usize;
                record(&mut self.counts, scaled, scale);
            }
            None => {
                self.cold += scale;
                self.tracked.insert((h, page));
                while self.tracked.len() > self.s_max {
                    let Some(&(top, _)) = self.tracked.iter().next_back() else {
                        break;
                    };
                    // Lower the threshold to the highest hash: every page at it goes.
                    self.threshold = top;
                    while let Some(&(next, p)) = self.tracked.iter().next_back() {
                        if next < self.threshold {
                            break;
                        }
                        self.tracked.remove(&(next, p));
                        self.stack.forget(p);
                    }
                }
            }
        }
    }

    /// The histogram, with SHARDS-adj applied when sampling: the accesses the rate
    /// should have sampled beyond those it did, at the smallest distance.
    pub fn finish(mut self) -> DistanceHistogram {
        if self.sampling.is_some() {
            let rate = self.threshold as f64 / HASH_SPACE as f64;
            // In accesses of the trace: each sampled access stands for 1 / R of its time,
            // so the sampled ones should add up to all of them.
            let mut adjustment = self.accesses as f64 - self.sampled_weight;
            // The smallest distance a sampled access can have: 1 scaled.
            let first = ((1.0 / rate).round() as usize).max(1);
            if adjustment > 0.0 {
                record(&mut self.counts, first, adjustment);
            } else {
                // More sampled than the rate expects: take them off the smallest
                // distances, as far as those hold them.
                for count in self.counts.iter_mut().skip(first) {
                    if adjustment >= 0.0 {
                        break;
                    }
                    let taken = count.min(-adjustment);
                    *count -= taken;
                    adjustment += taken;
                }
            }
        }
        DistanceHistogram {
            counts: self.counts,
            cold: self.cold,
            accesses: self.accesses,
        }
    }
}

/// Exact LRU stack distances of `pages` (dense page ids), in one pass.
pub fn lru_distances(pages: &[PageId], footprint_hint: usize) -> DistanceHistogram {
    let mut b = CurveBuilder::exact(footprint_hint);
    b.access_all(pages);
    b.finish()
}

/// How SHARDS samples.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Sampling {
    /// Pages whose hash is below `rate` of the hash space.
    FixedRate(f64),
    /// At most this many pages, the rate lowered as needed (starting at 1).
    FixedSize(usize),
}

/// The modulus of the sampling hash: rates are thresholds out of 2^24.
const HASH_SPACE: u64 = 1 << 24;

/// A page's place in the sampling hash space (splitmix64 of its id).
fn page_hash(page: PageId) -> u64 {
    let mut z = u64::from(page).wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    (z ^ (z >> 31)) % HASH_SPACE
}

/// Approximate LRU stack distances by SHARDS (with SHARDS-adj), scaled to the whole
/// trace.
pub fn shards_distances(pages: &[PageId], sampling: Sampling) -> DistanceHistogram {
    let mut b = CurveBuilder::shards(sampling);
    for &p in pages {
        b.access(p);
    }
    b.finish()
}

/// Simulate `setup`'s policy at each of `capacities` (pages; a hybrid policy's DRAM is
/// `dram_fraction` of each) on `trace`, decoded once, in parallel over sizes; the
/// metrics in the order of `capacities`.
pub fn simulate_each(
    trace: &Trace,
    setup: &RunSetup,
    capacities: &[u64],
    dram_fraction: f64,
) -> Result<Vec<Metrics>> {
    capacities
        .par_iter()
        .map(|&capacity| {
            let mut s = setup.clone();
            s.capacity = Capacity::of_memory(setup.policy.family, capacity, dram_fraction)?;
            run_trace(trace, &s)
        })
        .collect()
}

/// [`simulate_each`], as hits and misses.
pub fn simulate_sizes(
    trace: &Trace,
    setup: &RunSetup,
    capacities: &[u64],
    dram_fraction: f64,
) -> Result<Vec<CurvePoint>> {
    let metrics = simulate_each(trace, setup, capacities, dram_fraction)?;
    Ok(capacities
        .iter()
        .zip(metrics)
        .map(|(&capacity, m)| CurvePoint {
            capacity,
            hits: m.hits,
            misses: m.misses,
            accesses: m.accesses,
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The distances worked by hand: a b c a b b d a.
    #[test]
    fn distances_by_hand() {
        let (a, b, c, d) = (0, 1, 2, 3);
        let h = lru_distances(&[a, b, c, a, b, b, d, a], 4);
        // a: cold; b: cold; c: cold; a: {b, c, a} = 3; b: {c, a, b} = 3; b: 1; d: cold;
        // a: {b, d, a} = 3.
        assert_eq!(h.cold, 4.0);
        assert_eq!(h.counts, vec![0.0, 1.0, 0.0, 3.0]);
        let curve = h.curve(&[1, 2, 3, 100]);
        let hits: Vec<u64> = curve.iter().map(|p| p.hits).collect();
        assert_eq!(hits, [1, 1, 4, 4]);
    }

    /// A long random trace: the distances survive renumbering (tree smaller than the
    /// trace), checked against a naive stack.
    #[test]
    fn renumbering_keeps_the_distances() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
        let pages: Vec<u32> = (0..20_000).map(|_| rng.gen_range(0..300u32)).collect();
        check_against_a_naive_stack(&pages);
        // Over many blocks of the bitmap: 3000 pages, hot and cold.
        let pages: Vec<u32> = (0..30_000)
            .map(|i| {
                if i % 3 == 0 {
                    rng.gen_range(0..3000u32)
                } else {
                    rng.gen_range(0..200u32)
                }
            })
            .collect();
        check_against_a_naive_stack(&pages);
    }

    fn check_against_a_naive_stack(pages: &[u32]) {
        let fast = lru_distances(pages, 10);
        let max = *pages.iter().max().unwrap() as usize;
        let mut stack: Vec<u32> = Vec::new();
        let mut counts = vec![0.0; max + 2];
        let mut cold = 0.0;
        for &p in pages {
            match stack.iter().position(|&q| q == p) {
                Some(i) => {
                    counts[i + 1] += 1.0;
                    stack.remove(i);
                }
                None => cold += 1.0,
            }
            stack.insert(0, p);
        }
        while counts.last() == Some(&0.0) {
            counts.pop();
        }
        assert_eq!(fast.cold, cold);
        assert_eq!(fast.counts, counts);
    }

    #[test]
    fn shards_at_rate_one_is_exact() {
        let pages: Vec<u32> = (0..5000u32).map(|i| (i * 7919) % 613).collect();
        let exact = lru_distances(&pages, 0);
        let full = shards_distances(&pages, Sampling::FixedRate(1.0));
        assert_eq!(exact.curve(&[10, 100, 600]), full.curve(&[10, 100, 600]));
        let sized = shards_distances(&pages, Sampling::FixedSize(10_000));
        assert_eq!(exact.curve(&[10, 100, 600]), sized.curve(&[10, 100, 600]));
    }
}

/// Miniature simulation: any single-tier policy's miss-ratio curve from small caches run
/// on a spatially sampled trace (C. A. Waldspurger, T. Saemundsson, I. Ahmad and N. Park,
/// "Cache modeling and optimization using miniature simulations", USENIX ATC 2017).
///
/// The requests of pages whose hash falls below `rate` of the hash space (the hash and
/// threshold SHARDS uses, [`CurveBuilder::shards`]) are kept, in order; a cache of
/// `round(C * R)` pages (at least 1) runs on them for each size `C`, `R` being the rate
/// the threshold gives. The estimate at `C` is the mini cache's own miss ratio (its
/// misses over the sampled requests), as the paper reads a miniature simulation, given
/// as misses and hits of the whole trace. SHARDS-adj's reading, misses over the `R N`
/// requests the rate should have sampled, was measured too and is not used: on the ARC
/// paper's P3 trace at rate 0.01 its mean error against full simulation was 0.010-0.013
/// (ARC, S3-FIFO, SIEVE at 20 sizes), the mini caches' own ratio 0.004-0.006.
///
/// The sizes run in parallel on one copy of the sampled requests; an offline policy
/// (`opt`) sees the sampled requests as its future.
pub fn miniature_sizes(
    trace: &Trace,
    policy: &'static super::PolicyInfo,
    capacities: &[u64],
    rate: f64,
) -> Result<Vec<CurvePoint>> {
    use super::engine::{Engine, Memory};
    use super::{BuildContext, Effect, Family, Request, Unit};
    if policy.family != Family::SingleTier {
        return Err(crate::Error::config(
            format!("policy {}", policy.name),
            "miniature simulation runs single-tier policies (a hybrid one splits memory into tiers a mini cache cannot scale)",
        ));
    }
    if !(rate > 0.0 && rate <= 1.0) {
        return Err(crate::Error::config(
            "sample",
            format!("rate {rate}: expected above 0 and at most 1"),
        ));
    }
    let threshold = ((rate * HASH_SPACE as f64).round() as u64).clamp(1, HASH_SPACE);
    let rate = threshold as f64 / HASH_SPACE as f64;
    // The sampled requests, their pages renumbered densely so that a mini cache's state
    // grows with the pages sampled.
    let mut ids = DenseIds::new();
    let mut sampled: Vec<PageId> = Vec::new();
    let mut accesses = 0u64;
    for event in trace.accesses() {
        accesses += 1;
        let page = event.page();
        if page_hash(page) < threshold {
            if let Some(dense) = ids.dense(page) {
                sampled.push(dense);
            }
        }
    }
    let distinct = ids.len();
    let future: Option<std::sync::Arc<[PageId]>> =
        policy.offline.then(|| sampled.as_slice().into());
    capacities
        .par_iter()
        .map(|&capacity| {
            let mini = ((capacity as f64 * rate).round() as u64).max(1);
            let mini = usize::try_from(mini).unwrap_or(usize::MAX);
            let context = BuildContext {
                capacity: Capacity::single(mini),
                page_count_hint: distinct,
                future: future.clone(),
                object_ids: None,
            };
            let cache = (policy.build)(&context)?;
            let memory = Memory::new(Unit::Pages, Capacity::single(mini), distinct);
            let mut engine = Engine::new(cache, memory);
            let mut misses = 0u64;
            for &page in &sampled {
                engine.access(&Request::read(page)).map_err(|v| {
                    crate::Error::config(format!("policy {}", policy.name), v.to_string())
                })?;
                misses += u64::from(!matches!(engine.effects()[0], Effect::Hit { .. }));
            }
            // The mini cache's own miss ratio, applied to the whole trace.
            let misses = if sampled.is_empty() {
                0
            } else {
                ((misses as f64 / sampled.len() as f64 * accesses as f64).round() as u64)
                    .min(accesses)
            };
            Ok(CurvePoint {
                capacity,
                hits: accesses - misses,
                misses,
                accesses,
            })
        })
        .collect()
}

#[cfg(test)]
mod miniature_tests {
    use super::*;
    use crate::mm::placement::find_policy;

    /// At rate 1 every page is sampled and every mini cache is the full cache: the
    /// estimate is the simulation itself.
    #[test]
    fn at_rate_one_a_miniature_simulation_is_the_full_one() {
        // Skewed reads of 2,000 pages: a page's id is the square of a uniform draw, so
        // low ids come up far more often.
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let trace = Trace {
            events: (0..30_000u64)
                .map(|i| {
                    state ^= state << 13;
                    state ^= state >> 7;
                    state ^= state << 17;
                    let u = state % 2_000;
                    let page = (u * u / 2_000) as PageId;
                    crate::trace::Event::access(i, 0, page, false, false)
                })
                .collect(),
            tables: Default::default(),
        };
        let capacities = [1, 10, 100, 700, 2_000];
        for name in ["arc", "s3fifo", "sieve", "lfuda", "opt"] {
            let info = find_policy(name).unwrap();
            let setup = RunSetup::new(info, Capacity::single(1));
            let full = simulate_sizes(&trace, &setup, &capacities, 0.05).unwrap();
            let mini = miniature_sizes(&trace, info, &capacities, 1.0).unwrap();
            assert_eq!(mini, full, "{name}");
        }
        let hybrid = find_policy("hybrid-lru").unwrap();
        assert!(miniature_sizes(&trace, hybrid, &capacities, 0.5).is_err());
        assert!(miniature_sizes(&trace, find_policy("arc").unwrap(), &capacities, 0.0).is_err());
    }
}
