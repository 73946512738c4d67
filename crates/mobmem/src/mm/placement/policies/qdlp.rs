//! QD-LP (quick demotion, lazy promotion): a small FIFO probation queue in front of a
//! main CLOCK. A new page enters the FIFO; one hit there earns it a place in the main
//! cache when it reaches the FIFO's tail, the others leave memory at once and are
//! remembered in a ghost FIFO, from which a returning page goes straight to the main
//! cache.
//!
//! Source: J. Yang, Z. Qiu, Y. Zhang, Y. Yue and K. V. Rashmi, "FIFO can be better than
//! LRU: the power of lazy promotion and quick demotion", HotOS 2023. The variant is
//! libCacheSim's `QDLP` (commit aa0fc409, `cache/eviction/QDLP.c`) with its defaults,
//! named `QDLP-0.1000-0.9000-Clock2-1` there: FIFO 10 % of the capacity, ghost 90 %,
//! the main cache a CLOCK with 2-bit counters (`clock-2`), promotion after one hit.
//!
//! ```text
//! on access(x):
//!   if x in F: hits[x] += 1; hit
//!   else if x in M: count[x] = min(count[x] + 1, 3); hit
//!   else:
//!     ghost = x in G; remove x from G
//!     while |F| + |M| + size(x) > c: evict()
//!     if ghost: insert_main(x) else insert x at the head of F, hits[x] = 0; miss
//!
//! evict():
//!   if F is empty: evict_main(); return
//!   t = tail of F; remove t from F
//!   if hits[t] >= 1: insert_main(t)                      (may evict nothing)
//!   else: evict t; remember t at the head of G, forgetting G's tail while too full
//!
//! insert_main(x):  while |M| + size(x) > main_size: evict_main()
//!                  insert x at the head of M, count[x] = 0
//! evict_main():    while count[tail of M] >= 1: count -= 1, move it to the head
//!                  evict the tail of M
//! ```
//! Sizes, as libCacheSim computes them: `fifo_size = floor(c * 0.1)`, `main_size = c -
//! fifo_size`, `ghost_size = floor(c * 0.9)`, in the run's unit (ghost entries count the
//! size their page had). A page larger than `fifo_size` is not admitted. One deliberate
//! difference: libCacheSim evicts for a new page of exactly `fifo_size` and then drops
//! it, so with pages of size 1 its QD-LP caches nothing below 20 pages; here `fifo_size`
//! is at least one unit and such a page is admitted. An `evict()` that only promotes
//! repeats until a page leaves memory, which is what libCacheSim's loop of evictions
//! does while memory is still too full.
//!
//! Per page: two `u32` links, one byte for its queue and one for its counter.

use super::queued::{Queued, QueuesRule};
use super::queues::Queues;
use crate::core::ensure_index;
use crate::mm::placement::engine::Memory;
use crate::mm::placement::{Effects, Request};
use crate::trace::PageId;

const FIFO: usize = 0;
const MAIN: usize = 1;
const GHOST: usize = 2;
/// The main CLOCK's counters have 2 bits.
const MAIN_COUNT_MAX: u8 = 3;

/// QD-LP's rule over its queues `F`, `M` and `G` (front = head, newest).
#[derive(Debug, Clone)]
pub struct QdlpRule {
    fifo_size: u64,
    main_size: u64,
    ghost_size: u64,
    /// Hits while in `F`, or the main CLOCK's counter while in `M`.
    count: Vec<u8>,
    /// The page of the latest request was found in `G`.
    from_ghost: bool,
}

pub type Qdlp = Queued<QdlpRule>;

impl Qdlp {
    /// QD-LP for a memory of `capacity` units (pages, or bytes).
    pub fn new(capacity: usize, page_count_hint: usize) -> Self {
        let capacity = capacity.max(1) as u64;
        // libCacheSim's products of the capacity and the ratios, truncated.
        let fifo_size = ((capacity as f64 * 0.1) as u64).max(1);
        let rule = QdlpRule {
            fifo_size,
            main_size: capacity.saturating_sub(fifo_size),
            ghost_size: (capacity as f64 * 0.9) as u64,
            count: vec![0; page_count_hint],
            from_ghost: false,
        };
        Queued::with_rule(rule, page_count_hint)
    }

    /// `F` from head to tail, each page with its hits.
    pub fn fifo(&self) -> Vec<(PageId, u8)> {
        self.counted(FIFO)
    }

    /// `M` from head to tail, each page with its counter.
    pub fn main(&self) -> Vec<(PageId, u8)> {
        self.counted(MAIN)
    }

    /// `G` (ghost ids) from newest to oldest.
    pub fn ghost(&self) -> Vec<PageId> {
        self.pages(GHOST)
    }

    fn counted(&self, queue: usize) -> Vec<(PageId, u8)> {
        self.pages(queue)
            .into_iter()
            .map(|p| (p, self.rule().count[p as usize]))
            .collect()
    }
}

impl QdlpRule {
    /// Evict one page of `M`: the first at its tail whose counter is down to 0.
    fn evict_main(&mut self, q: &mut Queues, mem: &Memory, out: &mut Effects) -> bool {
        while let Some(tail) = q.pop_back(MAIN, mem) {
            let count = self.count[tail as usize];
            if count >= 1 {
                self.count[tail as usize] = count - 1;
                q.push_front(MAIN, tail, mem);
            } else {
                out.evict(tail);
                return true;
            }
        }
        false
    }

    /// Make room in `M` for `size` units (evicting from `M`); whether it fits.
    fn room_in_main(&mut self, size: u64, q: &mut Queues, mem: &Memory, out: &mut Effects) -> bool {
        if size > self.main_size {
            return false;
        }
        while q.units(MAIN) + size > self.main_size {
            if !self.evict_main(q, mem, out) {
                break;
            }
        }
        true
    }
}

impl QueuesRule for QdlpRule {
    const QUEUES: usize = 3;
    const RESIDENT: &'static [usize] = &[FIFO, MAIN];

    #[inline]
    fn hit(&mut self, q: &mut Queues, req: &Request, _mem: &Memory, _out: &mut Effects) {
        let count = &mut self.count[req.page as usize];
        if q.queue_of(req.page) == Some(FIFO) {
            *count = count.saturating_add(1);
        } else if *count < MAIN_COUNT_MAX {
            *count += 1;
        }
    }

    #[inline]
    fn admit(&mut self, q: &mut Queues, req: &Request, mem: &Memory, _out: &mut Effects) -> bool {
        self.from_ghost = q.queue_of(req.page) == Some(GHOST);
        if self.from_ghost {
            q.remove(req.page, mem);
        }
        req.size <= self.fifo_size
    }

    fn evict(&mut self, q: &mut Queues, _req: &Request, mem: &Memory, out: &mut Effects) {
        loop {
            let Some(tail) = q.pop_back(FIFO, mem) else {
                self.evict_main(q, mem, out);
                return;
            };
            if self.count[tail as usize] >= 1 {
                let size = mem.size_of(tail);
                let before = out.len();
                if self.room_in_main(size, q, mem, out) {
                    self.count[tail as usize] = 0;
                    q.push_front(MAIN, tail, mem);
                    if out.len() > before {
                        return;
                    }
                    // Only moved: memory is as full as before.
                    continue;
                }
                // Larger than the main cache: it leaves memory.
                out.evict(tail);
                return;
            }
            out.evict(tail);
            q.remember(GHOST, tail, self.ghost_size, mem);
            return;
        }
    }

    fn insert(&mut self, q: &mut Queues, req: &Request, mem: &Memory, out: &mut Effects) -> usize {
        ensure_index(&mut self.count, req.page, 0);
        self.count[req.page as usize] = 0;
        if std::mem::take(&mut self.from_ghost) && self.room_in_main(req.size, q, mem, out) {
            MAIN
        } else {
            FIFO
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mm::placement::policies::testing::{engine, evictions, hit_pattern, run_pages};

    #[test]
    fn one_hit_in_probation_earns_the_main_cache() {
        // capacity 20: F 2, M 18, G 18. Pages 1..=20 fill memory (all in F: the FIFO is
        // not bounded while M has room). 1 is hit once. 21 needs room: F's tail is 1, hit:
        // it moves to M (nothing leaves); then 2, never hit, leaves and is remembered.
        let mut trace: Vec<PageId> = (1..=20).collect();
        trace.extend([1, 21]);
        let mut qdlp = engine(Qdlp::new(20, 0), 20);
        let outcome = run_pages(&mut qdlp, &trace);
        assert_eq!(&hit_pattern(&outcome)[20..], "hm");
        assert_eq!(evictions(&outcome)[21], vec![2]);
        assert_eq!(qdlp.policy().main(), vec![(1, 0)]);
        assert_eq!(qdlp.policy().ghost(), vec![2]);
        // 2 returns from the ghost: straight to M. Room is made first: F's tail 3 leaves.
        let outcome = run_pages(&mut qdlp, &[2]);
        assert_eq!(evictions(&outcome), vec![vec![3]]);
        assert_eq!(qdlp.policy().main(), vec![(2, 0), (1, 0)]);
        assert_eq!(qdlp.policy().ghost(), vec![3]);
    }
}
