//! LRU: evict the least recently used page.
//!
//! ```text
//! on access(p):
//!   if p resident: move p to the front; hit
//!   else: while full, evict the back; insert p at the front; miss
//! ```
//! Per page: two `u32` links. With sizes in bytes, as libCacheSim's `LRU`: the back is
//! evicted until the new page fits.

use super::queued::{OnHit, OneQueue, OneQueueRule};

/// LRU's rule: a hit moves the page to the front, so the back is the least recently used.
#[derive(Debug, Clone, Copy, Default)]
pub struct Recency;

impl OneQueueRule for Recency {
    const ON_HIT: OnHit = OnHit::MoveToFront;
}

/// LRU: the queue in recency order.
pub type Lru = OneQueue<Recency>;

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
