//! Segmented LRU: memory split into LRU segments of rising rank; a hit lifts a page one
//! segment up, and a segment over its size pushes its least recently used page one
//! segment down. Pages leave memory only from the lowest segment holding any.
//!
//! Sources: R. Karedla, J. S. Love and B. G. Wherry, "Caching strategies to improve disk
//! system performance", IEEE Computer 27(3), 1994 (SLRU, two segments); with four equal
//! segments, the S4LRU of Q. Huang, K. Birman, R. van Renesse, W. Lloyd, S. Kumar and
//! H. C. Li, "An Analysis of Facebook Photo Caching", ACM SOSP 2013, section 6.
//!
//! Segments `L0` (lowest) to `Ln-1`, each an LRU list with a size `limit(k)`:
//!
//! ```text
//! on access(p):
//!   if p in Lk, k = n-1: move p to the front of Lk; hit
//!   if p in Lk, k < n-1: move p to the front of Lk+1
//!                        while p's segment is over its limit: cool(p's segment); hit
//!   else:
//!     while full: evict the back of the lowest non-empty segment
//!     put p at the front of the lowest segment with room for it (else L0); miss
//!
//! cool(j):
//!   if j = 0: evict the back of the lowest non-empty segment
//!   else: move the back of Lj to the front of Lj-1
//!         while Lj-1 is over its limit: cool(j-1)
//! ```
//! With pages, the cascade stops at the segment the page came from, which has just lost
//! a page, so a hit never evicts. With sizes in bytes it may not: a large page moving
//! down can push a segment over its limit, and `L0` over its limit evicts (a hit that
//! evicts), as in libCacheSim.
//!
//! The variant is libCacheSim's `SLRU` (commit aa0fc409, `cache/eviction/SLRU.c`),
//! whose default is four segments of `c / 4` pages each, `S4LRU(25:25:25:25)`. Where it
//! differs from the papers' description, it is followed: a new page goes into the lowest
//! segment with room, not always into `L0`, and the victim is the back of the lowest
//! segment holding pages. So memory fills up like any other policy's, pages seen once
//! landing in the upper segments while they have room; once it is full (and it stays
//! full), every segment is at its limit, and the victim is `L0`'s back and the new page
//! enters `L0`, as in the papers. Read literally, the papers fill `L1` and up only
//! through hits, and evict from `L0` while they are still empty: on libCacheSim's
//! CloudPhysics trace that reading misses 0.7606 of requests at 20,000 objects, against
//! 0.5325 for libCacheSim's. This one gives libCacheSim's miss ratios to the four
//! decimals printed at every capacity of that test (`tests/policies_libcachesim.rs`).
//!
//! One deliberate difference: libCacheSim rounds every segment down to `c / n`, so when
//! `c` is not a multiple of `n` its segments add up to less than memory; it then lets
//! `L0` overfill with new pages and trims it back, by evicting, when a hit pushes a page
//! down into it (a hit that evicts), and below `n` pages it caches nothing. Here the
//! remainder `c mod n` goes to `L0`, so the limits add up to the capacity exactly and
//! none of that arises. For multiples of `n` the two are the same.
//!
//! Per page: two `u32` links and one byte for its segment. A capacity of zero is treated
//! as one page.

use super::queues::Queues;
use crate::mm::placement::engine::Memory;
use crate::mm::placement::{CachePolicy, Effects, Request, Tier};
use crate::trace::PageId;
use crate::{Error, Result};

/// Segments of the registered `slru-4`.
pub const DEFAULT_SEGMENTS: usize = 4;
/// The most segments [`Slru::with_segments`] takes.
pub const MAX_SEGMENTS: usize = 64;

/// LRU segments of rising rank, each with a limit in units (module documentation).
#[derive(Debug, Clone)]
pub struct Segments {
    limits: Vec<u64>,
    /// `L0` first; each from most to least recently used.
    queues: Queues,
}

impl Segments {
    /// Segments of the given limits, `L0` first (at most [`MAX_SEGMENTS`]).
    pub fn new(limits: Vec<u64>, page_count_hint: usize) -> Self {
        let queues = Queues::new(limits.len(), page_count_hint);
        Segments { limits, queues }
    }

    pub fn limits(&self) -> &[u64] {
        &self.limits
    }

    #[inline]
    pub fn segment_of(&self, page: PageId) -> Option<usize> {
        self.queues.queue_of(page)
    }

    /// What all segments hold, in units.
    pub fn units(&self) -> u64 {
        (0..self.limits.len()).map(|k| self.queues.units(k)).sum()
    }

    /// The pages of each segment, `L0` first, each from most to least recently used.
    pub fn pages(&self) -> Vec<Vec<PageId>> {
        (0..self.limits.len())
            .map(|k| self.queues.iter(k).collect())
            .collect()
    }

    /// The next victim: the back of the lowest segment holding pages.
    pub fn victim(&self) -> Option<PageId> {
        (0..self.limits.len()).find_map(|k| self.queues.back(k))
    }

    /// Evict [`Segments::victim`]; false if there is none.
    pub fn evict(&mut self, mem: &Memory, out: &mut Effects) -> bool {
        let Some(victim) = self.victim() else {
            return false;
        };
        if let Some(k) = self.queues.remove(victim, mem) {
            self.queues.prefetch_back(k, mem);
        }
        out.evict(victim);
        true
    }

    /// A hit on `page`, which is in a segment: up one segment, cooling what overflows.
    pub fn hit(&mut self, page: PageId, mem: &Memory, out: &mut Effects) {
        let top = self.limits.len() - 1;
        let Some(k) = self.segment_of(page) else {
            return;
        };
        if k == top {
            self.queues.move_to_front(top, page, mem);
            return;
        }
        self.queues.move_to_front(k + 1, page, mem);
        while let Some(j) = self.segment_of(page) {
            if self.queues.units(j) <= self.limits[j] {
                break;
            }
            self.cool(j, mem, out);
        }
    }

    /// cool(j) of the module documentation.
    fn cool(&mut self, j: usize, mem: &Memory, out: &mut Effects) {
        if j == 0 {
            self.evict(mem, out);
            return;
        }
        if let Some(back) = self.queues.pop_back(j, mem) {
            self.queues.push_front(j - 1, back, mem);
            self.queues.prefetch_back(j, mem);
        }
        while self.queues.units(j - 1) > self.limits[j - 1] {
            self.cool(j - 1, mem, out);
        }
    }

    /// Put `page` (`mem.size_of(page)` units, in no segment) at the front of the lowest
    /// segment with room for it; if none has, evict while the segments together would
    /// hold more than `total`, and put it in `L0`.
    pub fn insert(&mut self, page: PageId, total: u64, mem: &Memory, out: &mut Effects) {
        let size = mem.size_of(page);
        let room = (0..self.limits.len()).find(|&k| self.queues.units(k) + size <= self.limits[k]);
        let segment = match room {
            Some(k) => k,
            None => {
                while self.units() + size > total && self.evict(mem, out) {}
                0
            }
        };
        self.queues.push_front(segment, page, mem);
    }

    pub fn remove(&mut self, page: PageId, mem: &Memory) {
        self.queues.remove(page, mem);
    }

    #[inline]
    pub fn prefetch(&self, page: PageId) {
        self.queues.prefetch(page);
    }
}

#[derive(Debug, Clone)]
pub struct Slru {
    capacity: u64,
    segments: Segments,
}

impl Slru {
    /// Four equal segments (the remainder of `capacity / 4` in `L0`).
    pub fn new(capacity: usize, page_count_hint: usize) -> Self {
        Self::build(capacity, page_count_hint, DEFAULT_SEGMENTS)
    }

    /// `segments` equal segments.
    ///
    /// # Errors
    /// A [`Error::Config`] if `segments` is 0 or above [`MAX_SEGMENTS`].
    pub fn with_segments(capacity: usize, page_count_hint: usize, segments: usize) -> Result<Self> {
        if segments == 0 || segments > MAX_SEGMENTS {
            return Err(Error::config(
                "policy slru",
                format!("needs 1 to {MAX_SEGMENTS} segments, got {segments}"),
            ));
        }
        Ok(Self::build(capacity, page_count_hint, segments))
    }

    fn build(capacity: usize, page_count_hint: usize, segments: usize) -> Self {
        let capacity = capacity.max(1) as u64;
        let n = segments as u64;
        let mut limits = vec![capacity / n; segments];
        limits[0] += capacity % n;
        Slru {
            capacity,
            segments: Segments::new(limits, page_count_hint),
        }
    }

    /// The size of each segment, `L0` first.
    pub fn limits(&self) -> &[u64] {
        self.segments.limits()
    }

    /// The pages of each segment, `L0` first, each from most to least recently used.
    pub fn segments(&self) -> Vec<Vec<PageId>> {
        self.segments.pages()
    }
}

impl CachePolicy for Slru {
    #[inline]
    fn hit(&mut self, req: &Request, mem: &Memory, out: &mut Effects) {
        self.segments.hit(req.page, mem, out);
    }

    fn admit(&mut self, req: &Request, _mem: &Memory, _out: &mut Effects) -> bool {
        req.size <= self.capacity && req.size <= self.segments.limits()[0]
    }

    #[inline]
    fn evict(&mut self, _req: &Request, mem: &Memory, out: &mut Effects) {
        self.segments.evict(mem, out);
    }

    #[inline]
    fn insert(&mut self, req: &Request, mem: &Memory, out: &mut Effects) -> Tier {
        self.segments.insert(req.page, self.capacity, mem, out);
        Tier::Dram
    }

    fn remove(&mut self, page: PageId, mem: &Memory) {
        self.segments.remove(page, mem);
    }

    fn holds(&self, page: PageId) -> Option<Tier> {
        self.segments.segment_of(page).map(|_| Tier::Dram)
    }

    #[inline]
    fn prefetch(&self, page: PageId, _mem: &Memory) {
        self.segments.prefetch(page);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mm::placement::policies::testing::{
        bytes, check_outcome, engine, evictions, hit_pattern, run_pages, run_sized,
    };

    #[test]
    fn limits_add_up_to_the_capacity() {
        assert_eq!(Slru::new(100, 0).limits(), &[25, 25, 25, 25]);
        assert_eq!(Slru::new(10, 0).limits(), &[4, 2, 2, 2]);
        assert_eq!(Slru::new(3, 0).limits(), &[3, 0, 0, 0]);
        assert_eq!(Slru::new(0, 0).limits(), &[1, 0, 0, 0]);
        assert_eq!(Slru::with_segments(7, 0, 2).unwrap().limits(), &[4, 3]);
        assert!(Slru::with_segments(7, 0, 0).is_err());
        assert!(Slru::with_segments(7, 0, 65).is_err());
    }

    #[test]
    fn hits_climb_and_overflow_cascades_down() {
        // capacity 4, one page a segment. Segments written [L0] [L1] [L2] [L3].
        //   1 2     misses: the lowest segment with room   [1] [2] [] []
        //   1       hit: 1 up to L1, which overflows: its back 2 down to L0
        //                                                  [2] [1] [] []
        //   3       miss: L2 is the lowest with room       [2] [1] [3] []
        //   1       hit: to L2, which pushes 3 down to L1  [2] [3] [1] []
        //   1       hit: to L3                             [2] [3] [] [1]
        //   4       miss: L2 has room                      [2] [3] [4] [1]
        //   5       miss, full: evict L0's 2; 5 into L0    [5] [3] [4] [1]
        //   4       hit: to L3; 1 down to L2               [5] [3] [1] [4]
        //   6       evict 5                                [6] [3] [1] [4]
        //   4       hit in L3: stays                       [6] [3] [1] [4]
        let mut slru = engine(Slru::new(4, 0), 4);
        let outcome = run_pages(&mut slru, &[1, 2, 1, 3, 1, 1, 4, 5, 4, 6, 4]);
        check_outcome(&outcome, "mmhmhhmmhmh", &[2, 5]);
        assert_eq!(
            slru.policy().segments(),
            vec![vec![6], vec![3], vec![1], vec![4]]
        );
    }

    #[test]
    fn a_hit_in_a_full_memory_demotes_down_to_where_it_came_from() {
        // capacity 8, two pages a segment. Fill memory, each page once:
        //   1..8    [2 1] [4 3] [6 5] [8 7]
        //   1       hit in L0: to L1 (3 pages), its back 3 to L0
        //                                   [3 2] [1 4] [6 5] [8 7]
        //   6       hit in L2: to L3, its back 7 to L2
        //                                   [3 2] [1 4] [7 5] [6 8]
        //   9       miss: evict L0's back 2 [9 3] [1 4] [7 5] [6 8]
        //   4       hit in L1: to L2, 5 down to L1
        //                                   [9 3] [5 1] [4 7] [6 8]
        let mut slru = engine(Slru::new(8, 0), 8);
        let outcome = run_pages(&mut slru, &[1, 2, 3, 4, 5, 6, 7, 8, 1, 6, 9, 4]);
        check_outcome(&outcome, "mmmmmmmmhhmh", &[2]);
        assert_eq!(
            slru.policy().segments(),
            vec![vec![9, 3], vec![5, 1], vec![4, 7], vec![6, 8]]
        );
        assert_eq!(slru.memory().used_total(), 8);
    }

    #[test]
    fn in_bytes_a_hit_may_evict() {
        // 40 bytes, four segments of 10. Pages a..f are 0..5.
        //   a b c d (10 each)   each in the lowest segment with room   [a] [b] [c] [d]
        //   e(4)   44 > 40: evict L0's a; e into L0                    [e] [b] [c] [d]
        //   f(6)   fits (40); L0 has room (4 + 6 = 10)                 [f e] [b] [c] [d]
        //   e      hit: up to L1, which holds 14 > 10: its back b down to L0, which
        //          holds 16 > 10: L0's back f leaves memory             [b] [e] [c] [d]
        let mut slru = bytes(Slru::new(40, 0), 40);
        let outcome = run_sized(
            &mut slru,
            &[(0, 10), (1, 10), (2, 10), (3, 10), (4, 4), (5, 6), (4, 4)],
        );
        assert_eq!(hit_pattern(&outcome), "mmmmmmh");
        assert_eq!(
            evictions(&outcome),
            vec![vec![], vec![], vec![], vec![], vec![0], vec![], vec![5]]
        );
        assert_eq!(
            slru.policy().segments(),
            vec![vec![1], vec![4], vec![2], vec![3]]
        );
        assert_eq!(slru.memory().used_total(), 34);
        // Larger than L0 (10 bytes): not admitted.
        let outcome = run_sized(&mut slru, &[(6, 11)]);
        assert_eq!(outcome[0], vec![crate::mm::placement::Effect::Bypass]);
    }
}
