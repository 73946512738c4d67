//! S3-FIFO: three FIFO q. New pages go to a small queue `S`; those reused while
//! there (twice, here) move on to the main queue `M`, the others leave memory and are
//! remembered in a ghost queue `G`, from which a returning page goes straight to `M`. `M` is a FIFO with
//! reinsertion: a page reused since it last passed the tail goes round again.
//!
//! Source: J. Yang, Y. Zhang, Z. Qiu, Y. Yue and K. V. Rashmi, "FIFO queues are all you
//! need for cache eviction", ACM SOSP 2023. Parameters and the details below are
//! libCacheSim's `S3FIFO` (commit aa0fc409, `cache/eviction/S3FIFO.c`), the
//! authors' simulator, with its defaults: `S3FIFO-0.1000-2`.
//!
//! Each resident page has a counter `freq`, 0 on insertion into `S` or `M`, plus one on
//! every hit (kept up to 255; only `min(freq, 3)` matters).
//!
//! ```text
//! on access(x):
//!   if x in S or M: freq[x] += 1; hit                      (no queue is reordered)
//!   else:
//!     if x in G: remove x from G
//!     while |S| + |M| + size(x) > c: evict()
//!     if x was in G: insert x at the head of M, else at the head of S; freq[x] = 0; miss
//!
//! evict():
//!   if |M| > main_size or S is empty: evict_M() else evict_S()
//!
//! evict_S():    (may leave memory full, having only moved pages: evict() runs again)
//!   while S is not empty:
//!     t = tail of S; remove t from S
//!     if freq[t] >= 2: insert t at the head of M, freq[t] = 0     (not an eviction)
//!     else: evict t; insert t at the head of G, first forgetting G's tail while
//!           |G| + size(t) > ghost_size; stop
//!
//! evict_M():
//!   loop:
//!     t = tail of M; remove t from M
//!     if freq[t] >= 1: insert t at the head of M, freq[t] = min(freq[t], 3) - 1
//!     else: evict t (not remembered); stop
//! ```
//! Sizes, for a capacity of `c` pages: `small_size = floor(0.1 c)`, `main_size =
//! c - small_size`, `ghost_size = floor(0.9 c)` (ghost entries are ids, not pages: they
//! take no memory). When `c` is a multiple of 10 the ghost queue is as long as the main
//! queue. `small_size` is not a bound on `S`: the eviction takes from `S` whenever `M`
//! is within `main_size`, so `S` holds everything `M` does not use (all of memory, until
//! pages start reaching `M`), and `M` may exceed `main_size` for a while after pages move
//! into it (moves and ghost returns evict nothing themselves).
//!
//! The move-to-main threshold is libCacheSim's default of 2: a page moves from `S` to
//! `M` only if it was hit at least twice while in `S`, i.e. accessed three times in all;
//! a page hit once in `S` leaves memory at `S`'s tail like one never reused (and is
//! remembered in `G`). A page moved to `M` starts there with `freq` 0, as does one
//! returning from `G`. In `M`, `freq` is a two-bit counter in effect: a reinsertion keeps
//! at most 2 further passes.
//!
//! Sizes in bytes follow libCacheSim's sub-caches: `|S|`, `|M|` and `|G|` count bytes,
//! `small_size`, `main_size` and `ghost_size` are those shares of the capacity in bytes,
//! a ghost is remembered with the size it had (one larger than all of `G` is not), and
//! a new page larger than `small_size` is not admitted (a miss that leaves it out), even
//! when it returns from `G`.
//!
//! Two deliberate differences: libCacheSim admits a page only if it is smaller than
//! `small_size` (one of exactly `small_size` makes room and is then dropped), so with
//! pages of size 1 its S3-FIFO caches nothing below 20 pages; here `small_size` is at
//! least one unit and a page of at most `small_size` is admitted. At 20 pages and above,
//! and in bytes whenever no page is exactly `small_size` bytes, the two agree. On
//! libCacheSim's CloudPhysics trace this gives its miss ratios to the four decimals
//! printed, in pages and in bytes (`tests/policies_libcachesim.rs`).
//!
//! Per page: two `u32` links, one byte for its queue and one for `freq`.

use super::queued::{Queued, QueuesRule};
use super::queues::Queues;
use crate::core::ensure_index;
use crate::mm::placement::engine::Memory;
use crate::mm::placement::{Effects, Request};
use crate::trace::PageId;

/// Hits while in `S` that earn a move to `M` (libCacheSim's `move-to-main-threshold`).
pub const MOVE_TO_MAIN_THRESHOLD: u8 = 2;
/// The largest `freq` a page keeps when `M` reinserts it, plus one.
const MAIN_FREQ_CAP: u8 = 3;

const SMALL: usize = 0;
const MAIN: usize = 1;
const GHOST: usize = 2;

/// S3-FIFO's rule over its queues `S`, `M` and `G` (front = head, newest; back = tail,
/// next examined).
#[derive(Debug, Clone)]
pub struct S3FifoRule {
    small_size: u64,
    main_size: u64,
    ghost_size: u64,
    freq: Vec<u8>,
    /// The page of the latest request was found in `G`.
    from_ghost: bool,
}

pub type S3Fifo = Queued<S3FifoRule>;

impl S3Fifo {
    /// S3-FIFO for a memory of `capacity` units (pages, or bytes).
    pub fn new(capacity: usize, page_count_hint: usize) -> Self {
        let capacity = capacity.max(1) as u64;
        let small_size = (capacity / 10).max(1);
        let rule = S3FifoRule {
            small_size,
            main_size: capacity - small_size,
            // floor(0.9 c) without overflowing at the largest capacities.
            ghost_size: capacity / 10 * 9 + capacity % 10 * 9 / 10,
            freq: vec![0; page_count_hint],
            from_ghost: false,
        };
        Queued::with_rule(rule, page_count_hint)
    }

    /// `(main_size, ghost_size)` in units; the small queue's nominal size is the rest of
    /// the capacity.
    pub fn sizes(&self) -> (u64, u64) {
        (self.rule().main_size, self.rule().ghost_size)
    }

    /// `S` from head to tail, each page with its `freq`.
    pub fn small(&self) -> Vec<(PageId, u8)> {
        self.with_freq(SMALL)
    }

    /// `M` from head to tail, each page with its `freq`.
    pub fn main(&self) -> Vec<(PageId, u8)> {
        self.with_freq(MAIN)
    }

    /// `G` (ghost ids) from newest to oldest.
    pub fn ghost(&self) -> Vec<PageId> {
        self.pages(GHOST)
    }

    fn with_freq(&self, queue: usize) -> Vec<(PageId, u8)> {
        self.pages(queue)
            .into_iter()
            .map(|p| (p, self.rule().freq[p as usize]))
            .collect()
    }
}

impl S3FifoRule {
    /// Evict `S`'s first page not reused enough, moving the reused ones to `M`; may end
    /// with `S` empty and nothing evicted.
    fn evict_small(&mut self, q: &mut Queues, mem: &Memory, out: &mut Effects) -> bool {
        while let Some(tail) = q.pop_back(SMALL, mem) {
            if self.freq[tail as usize] >= MOVE_TO_MAIN_THRESHOLD {
                self.freq[tail as usize] = 0;
                q.push_front(MAIN, tail, mem);
            } else {
                out.evict(tail);
                q.remember(GHOST, tail, self.ghost_size, mem);
                return true;
            }
        }
        false
    }

    /// Evict `M`'s first page not reused since it last passed the tail.
    fn evict_main(&mut self, q: &mut Queues, mem: &Memory, out: &mut Effects) {
        while let Some(tail) = q.pop_back(MAIN, mem) {
            let freq = self.freq[tail as usize];
            if freq >= 1 {
                self.freq[tail as usize] = freq.min(MAIN_FREQ_CAP) - 1;
                q.push_front(MAIN, tail, mem);
            } else {
                out.evict(tail);
                return;
            }
        }
    }
}

impl QueuesRule for S3FifoRule {
    const QUEUES: usize = 3;
    const RESIDENT: &'static [usize] = &[SMALL, MAIN];

    #[inline]
    fn hit(&mut self, _q: &mut Queues, req: &Request, _mem: &Memory, _out: &mut Effects) {
        let freq = &mut self.freq[req.page as usize];
        *freq = freq.saturating_add(1);
    }

    #[inline]
    fn admit(&mut self, q: &mut Queues, req: &Request, mem: &Memory, _out: &mut Effects) -> bool {
        self.from_ghost = q.queue_of(req.page) == Some(GHOST);
        if self.from_ghost {
            q.remove(req.page, mem);
        }
        req.size <= self.small_size
    }

    fn evict(&mut self, q: &mut Queues, _req: &Request, mem: &Memory, out: &mut Effects) {
        loop {
            if q.units(MAIN) > self.main_size || q.is_empty(SMALL) {
                self.evict_main(q, mem, out);
                return;
            }
            if self.evict_small(q, mem, out) {
                return;
            }
        }
    }

    #[inline]
    fn insert(
        &mut self,
        _q: &mut Queues,
        req: &Request,
        _mem: &Memory,
        _out: &mut Effects,
    ) -> usize {
        ensure_index(&mut self.freq, req.page, 0);
        self.freq[req.page as usize] = 0;
        if std::mem::take(&mut self.from_ghost) {
            MAIN
        } else {
            SMALL
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mm::placement::policies::testing::{
        check_outcome, engine, evictions, hit_pattern, run_pages,
    };
    use crate::mm::placement::Tier;

    #[test]
    fn sizes_follow_libcachesim() {
        assert_eq!(S3Fifo::new(100, 0).sizes(), (90, 90));
        assert_eq!(S3Fifo::new(2000, 0).sizes(), (1800, 1800));
        // Not a multiple of 10: floor(0.1 c) = 2, floor(0.9 c) = 22.
        assert_eq!(S3Fifo::new(25, 0).sizes(), (23, 22));
        // Below 10 pages the small queue keeps one page.
        assert_eq!(S3Fifo::new(5, 0).sizes(), (4, 4));
        assert_eq!(S3Fifo::new(1, 0).sizes(), (0, 0));
        assert_eq!(S3Fifo::new(0, 0).sizes(), (0, 0));
        let huge = u64::MAX;
        assert_eq!(
            S3Fifo::new(huge as usize, 0).sizes(),
            (huge - huge / 10, huge / 10 * 9 + 4)
        );
    }

    #[test]
    fn two_hits_in_small_move_a_page_to_main() {
        // capacity 10: main_size 9, ghost_size 9. Queues head first, page(freq).
        //   1..10   misses fill S (M is empty, so S takes all of memory)
        //   1 1 2   hits: freq 1 = 2, 2 = 1
        //   11      miss, memory full, |M| 0: evict_S: tail 1 has freq 2: to M (freq 0);
        //           tail 2 has freq 1 < 2: evicted, to G
        //           S [11 10 9 8 7 6 5 4 3]  M [1(0)]  G [2]
        //   2       miss (a ghost): out of G; evict_S: 3 (freq 0) evicted, to G;
        //           2 to M                    S [11 .. 4]  M [2(0) 1(0)]  G [3]
        //   1       hit in M: freq 1
        let mut s3 = engine(S3Fifo::new(10, 0), 10);
        let pages: Vec<PageId> = (1..=10).chain([1, 1, 2, 11, 2, 1]).collect();
        let outcome = run_pages(&mut s3, &pages);
        check_outcome(&outcome, "mmmmmmmmmmhhhmmh", &[2, 3]);
        assert_eq!(s3.policy().main(), vec![(2, 0), (1, 1)]);
        assert_eq!(s3.policy().ghost(), vec![3]);
        assert_eq!(
            s3.policy()
                .small()
                .iter()
                .map(|&(p, _)| p)
                .collect::<Vec<_>>(),
            vec![11, 10, 9, 8, 7, 6, 5, 4]
        );
        assert_eq!(s3.memory().tier_of(2), Some(Tier::Dram));
        assert_eq!(s3.memory().tier_of(3), None);
        assert_eq!(s3.memory().used_total(), 10);
    }

    #[test]
    fn main_reinserts_with_a_two_bit_counter() {
        // capacity 2: main_size 2 - 1 = 1, ghost_size 1.
        //   1 2     S [2 1]
        //   3       evict_S: 1 (freq 0) evicted, to G         S [3 2]  G [1]
        //   1       ghost: to M; evict_S: 2 evicted, to G      S [3]  M [1(0)]  G [2]
        //   1 1 1 1 hits in M: freq 4
        //   2       ghost: to M. |M| 1 is not above 1 and S is not empty: evict_S:
        //           3 evicted, to G                            S []  M [2(0) 1(4)]  G [3]
        //   4       S is empty: evict_M: tail 1 has freq 4: reinserted with
        //           min(4, 3) - 1 = 2; tail 2 (freq 0) evicted
        //                                                      S [4]  M [1(2)]
        //   5       |M| 1, S not empty: evict_S: 4 evicted, to G (3 forgotten)
        //                                                      S [5]  M [1(2)]  G [4]
        //   3       a forgotten ghost: a plain miss, into S; evict_S: 5 evicted, to G
        //           (4 forgotten)                              S [3]  M [1(2)]  G [5]
        let mut s3 = engine(S3Fifo::new(2, 0), 2);
        let outcome = run_pages(&mut s3, &[1, 2, 3, 1, 1, 1, 1, 1, 2, 4, 5, 3]);
        assert_eq!(hit_pattern(&outcome), "mmmmhhhhmmmm");
        assert_eq!(
            evictions(&outcome),
            vec![
                vec![],
                vec![],
                vec![1],
                vec![2],
                vec![],
                vec![],
                vec![],
                vec![],
                vec![3],
                vec![2],
                vec![4],
                vec![5]
            ]
        );
        assert_eq!(s3.policy().main(), vec![(1, 2)]);
        assert_eq!(s3.policy().small(), vec![(3, 0)]);
        assert_eq!(s3.policy().ghost(), vec![5]);
    }
}
