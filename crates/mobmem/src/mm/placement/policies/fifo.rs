//! FIFO: evict the page that entered memory first; a hit changes nothing.
//!
//! The oldest replacement policy; see Belady, "A study of replacement algorithms for a
//! virtual-storage computer", IBM Systems Journal 5(2), 1966, which measures it against
//! random and optimal replacement.
//!
//! ```text
//! on access(p):
//!   if p resident: hit                       (the queue is not reordered)
//!   else: if full, evict the back; insert p at the front; miss
//! ```
//! Per page: two `u32` links and one residency byte. A capacity of zero is treated as one
//! page, because the requested page must be resident after every access.

use crate::core::ensure_index;
use crate::core::list::{Links, List};
use crate::mm::placement::{CachePolicy, Effects, Request, Tier};
use crate::trace::PageId;

#[derive(Debug, Clone)]
pub struct Fifo {
    capacity: usize,
    links: Links,
    /// Front = newest arrival, back = next victim.
    queue: List,
    resident: Vec<bool>,
}

impl Fifo {
    pub fn new(capacity: usize, page_count_hint: usize) -> Self {
        Fifo {
            capacity: capacity.max(1),
            links: Links::with_pages(page_count_hint),
            queue: List::new(),
            resident: vec![false; page_count_hint],
        }
    }

    /// Resident pages from newest to oldest arrival.
    pub fn order(&self) -> Vec<PageId> {
        self.links.iter(&self.queue).collect()
    }
}

impl CachePolicy for Fifo {
    #[inline]
    fn access(&mut self, req: &Request, out: &mut Effects) {
        let page = req.page;
        ensure_index(&mut self.resident, page, false);
        if self.resident[page as usize] {
            out.hit();
            return;
        }
        out.fill();
        if self.queue.len() >= self.capacity {
            self.evict_next(out);
        }
        self.links.push_front(&mut self.queue, page);
        self.resident[page as usize] = true;
    }

    fn evict_next(&mut self, out: &mut Effects) -> bool {
        let Some(victim) = self.links.pop_back(&mut self.queue) else {
            return false;
        };
        self.resident[victim as usize] = false;
        out.evict(victim);
        true
    }

    fn evicts_on_demand(&self) -> bool {
        true
    }

    fn tier_of(&self, page: PageId) -> Option<Tier> {
        self.resident
            .get(page as usize)
            .copied()
            .unwrap_or(false)
            .then_some(Tier::Dram)
    }

    fn occupancy(&self) -> [usize; 2] {
        [self.queue.len(), 0]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mm::placement::policies::testing::{evictions, hit_pattern, run_pages};

    #[test]
    fn evicts_first_in_even_if_recently_hit() {
        // capacity 3:
        //   1 2 3      three misses fill the queue            [3 2 1]
        //   1          hit, queue unchanged                   [3 2 1]
        //   4          miss, evicts 1 (first in) although hit [4 3 2]
        //   1          miss, evicts 2                         [1 4 3]
        //   3          hit                                    [1 4 3]
        let mut fifo = Fifo::new(3, 0);
        let outcome = run_pages(&mut fifo, &[1, 2, 3, 1, 4, 1, 3]);
        assert_eq!(hit_pattern(&outcome), "mmmhmmh");
        assert_eq!(
            evictions(&outcome),
            vec![vec![], vec![], vec![], vec![], vec![1], vec![2], vec![]]
        );
        assert_eq!(fifo.order(), vec![1, 4, 3]);
    }

    #[test]
    fn zero_capacity_holds_the_requested_page() {
        // capacity 0 acts as 1: every new page evicts the previous one.
        let mut fifo = Fifo::new(0, 0);
        let outcome = run_pages(&mut fifo, &[5, 5, 6]);
        assert_eq!(hit_pattern(&outcome), "mhm");
        assert_eq!(evictions(&outcome)[2], vec![5]);
        assert_eq!(fifo.occupancy(), [1, 0]);
    }
}
