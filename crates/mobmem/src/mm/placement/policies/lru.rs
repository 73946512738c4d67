//! LRU: evict the least recently used page.
//!
//! ```text
//! on access(p):
//!   if p resident: move p to the front; hit
//!   else: while full, evict the back; insert p at the front; miss
//! ```
//! Per page: two `u32` links. With sizes in bytes, as libCacheSim's `LRU`: the back is
//! evicted until the new page fits.

use super::queues::Queue;
use crate::mm::placement::engine::Memory;
use crate::mm::placement::{CachePolicy, Effects, Request, Tier};
use crate::trace::PageId;

/// One queue of pages, newest first, evicted from the back: LRU when a hit moves the
/// page to the front (`MOVES_ON_HIT`), FIFO ([`super::fifo::Fifo`]) when it does not.
#[derive(Debug, Clone)]
pub struct OneQueue<const MOVES_ON_HIT: bool> {
    queue: Queue,
}

/// LRU: the queue in recency order.
pub type Lru = OneQueue<true>;

impl<const MOVES_ON_HIT: bool> OneQueue<MOVES_ON_HIT> {
    pub fn new(page_count_hint: usize) -> Self {
        OneQueue {
            queue: Queue::new(page_count_hint),
        }
    }

    /// Resident pages from the front (most recently used, or newest arrival) to the back.
    pub fn order(&self) -> Vec<PageId> {
        self.queue.iter().collect()
    }
}

impl<const MOVES_ON_HIT: bool> CachePolicy for OneQueue<MOVES_ON_HIT> {
    #[inline]
    fn hit(&mut self, req: &Request, _mem: &Memory, _out: &mut Effects) {
        if MOVES_ON_HIT {
            self.queue.move_to_front(req.page);
        }
    }

    #[inline]
    fn evict(&mut self, _req: &Request, _mem: &Memory, out: &mut Effects) {
        if let Some(victim) = self.queue.pop_back() {
            out.evict(victim);
        }
    }

    #[inline]
    fn insert(&mut self, req: &Request, _mem: &Memory, _out: &mut Effects) -> Tier {
        self.queue.push_front(req.page);
        Tier::Dram
    }

    fn remove(&mut self, page: PageId, _mem: &Memory) {
        self.queue.remove(page);
    }

    fn holds(&self, page: PageId) -> Option<Tier> {
        self.queue.holds(page)
    }

    #[inline]
    fn prefetch(&self, page: PageId) {
        self.queue.prefetch(page);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mm::placement::policies::testing::{engine, hit_pattern, run_pages};

    #[test]
    fn evicts_least_recently_used() {
        // capacity 3: 1 2 3 1 4 (evicts 2) 2 (miss, evicts 3) 1 (hit)
        let mut lru = engine(Lru::new(0), 3);
        let outcome = run_pages(&mut lru, &[1, 2, 3, 1, 4, 2, 1]);
        assert_eq!(hit_pattern(&outcome), "mmmhmmh");
        assert_eq!(lru.policy().order(), vec![1, 2, 4]);
    }
}
