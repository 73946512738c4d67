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
//!   if p in Lk, k < n-1: move p to the front of Lk+1; demote(k+1); hit
//!   else:
//!     if full: evict the back of the lowest non-empty segment
//!     put p at the front of the lowest segment below its limit; miss
//!
//! demote(j):
//!   while j > 0 and |Lj| > limit(j):
//!     move the back of Lj to the front of Lj-1; j = j - 1
//! ```
//! The cascade stops at the segment the page came from, which has just lost a page, so
//! a hit never evicts.
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

use crate::core::ensure_index;
use crate::core::list::{Links, List};
use crate::mm::placement::{CachePolicy, Effects, Request, Tier};
use crate::trace::PageId;
use crate::{Error, Result};

/// Segments of the registered `slru-4`.
pub const DEFAULT_SEGMENTS: usize = 4;
/// The most segments [`Slru::with_segments`] takes (a segment number is a byte).
pub const MAX_SEGMENTS: usize = 64;

/// `segment_of` value of a page not resident.
const NONE: u8 = u8::MAX;

#[derive(Debug, Clone)]
pub struct Slru {
    capacity: usize,
    resident: usize,
    limits: Vec<usize>,
    links: Links,
    /// `L0` first; each from most to least recently used.
    segments: Vec<List>,
    segment_of: Vec<u8>,
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
        let capacity = capacity.max(1);
        let mut limits = vec![capacity / segments; segments];
        limits[0] += capacity % segments;
        Slru {
            capacity,
            resident: 0,
            limits,
            links: Links::with_pages(page_count_hint),
            segments: vec![List::new(); segments],
            segment_of: vec![NONE; page_count_hint],
        }
    }

    /// The size of each segment, `L0` first.
    pub fn limits(&self) -> &[usize] {
        &self.limits
    }

    /// The pages of each segment, `L0` first, each from most to least recently used.
    pub fn segments(&self) -> Vec<Vec<PageId>> {
        (self.segments.iter())
            .map(|list| self.links.iter(list).collect())
            .collect()
    }

    fn push_front(&mut self, segment: usize, page: PageId) {
        self.links.push_front(&mut self.segments[segment], page);
        self.segment_of[page as usize] = segment as u8;
    }

    /// Push the back of each overfull segment down one, from `top` towards `L0`.
    fn demote(&mut self, top: usize) {
        let mut j = top;
        while j > 0 && self.segments[j].len() > self.limits[j] {
            let Some(back) = self.links.pop_back(&mut self.segments[j]) else {
                break;
            };
            self.push_front(j - 1, back);
            j -= 1;
        }
    }
}

impl CachePolicy for Slru {
    #[inline]
    fn access(&mut self, req: &Request, out: &mut Effects) {
        let page = req.page;
        ensure_index(&mut self.segment_of, page, NONE);
        let top = self.segments.len() - 1;
        match self.segment_of[page as usize] {
            NONE => {}
            k if k as usize == top => {
                self.links.move_to_front(&mut self.segments[top], page);
                out.hit();
                return;
            }
            k => {
                let k = k as usize;
                self.links.remove(&mut self.segments[k], page);
                self.push_front(k + 1, page);
                self.demote(k + 1);
                out.hit();
                return;
            }
        }
        out.fill();
        if self.resident >= self.capacity {
            let lowest = self.segments.iter().position(|list| !list.is_empty());
            if let Some(victim) = lowest.and_then(|k| self.links.pop_back(&mut self.segments[k])) {
                self.segment_of[victim as usize] = NONE;
                self.resident -= 1;
                out.evict(victim);
            }
        }
        // The limits add up to the capacity, so some segment has room.
        let room = (0..self.segments.len())
            .find(|&k| self.segments[k].len() < self.limits[k])
            .unwrap_or(0);
        self.push_front(room, page);
        self.resident += 1;
    }

    fn tier_of(&self, page: PageId) -> Option<Tier> {
        match self.segment_of.get(page as usize) {
            Some(&k) if k != NONE => Some(Tier::Dram),
            _ => None,
        }
    }

    fn occupancy(&self) -> [usize; 2] {
        [self.resident, 0]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mm::placement::policies::testing::{evictions, hit_pattern, run_pages};

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
        let mut slru = Slru::new(4, 0);
        let outcome = run_pages(&mut slru, &[1, 2, 1, 3, 1, 1, 4, 5, 4, 6, 4]);
        assert_eq!(hit_pattern(&outcome), "mmhmhhmmhmh");
        assert_eq!(evictions(&outcome).concat(), vec![2, 5]);
        assert_eq!(slru.segments(), vec![vec![6], vec![3], vec![1], vec![4]]);
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
        let mut slru = Slru::new(8, 0);
        let outcome = run_pages(&mut slru, &[1, 2, 3, 4, 5, 6, 7, 8, 1, 6, 9, 4]);
        assert_eq!(hit_pattern(&outcome), "mmmmmmmmhhmh");
        assert_eq!(evictions(&outcome).concat(), vec![2]);
        assert_eq!(
            slru.segments(),
            vec![vec![9, 3], vec![5, 1], vec![4, 7], vec![6, 8]]
        );
        assert_eq!(slru.occupancy(), [8, 0]);
    }
}
