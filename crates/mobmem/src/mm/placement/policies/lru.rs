//! LRU: evict the least recently used page.
//!
//! ```text
//! on access(p):
//!   if p resident: move p to the front; hit
//!   else: if full, evict the back; insert p at the front; miss
//! ```
//! Per page: two `u32` links; a page is resident exactly when it is on the list.

use crate::core::list::{Links, List};
use crate::mm::placement::{CachePolicy, Effects, Request, Tier};
use crate::trace::PageId;

#[derive(Debug, Clone)]
pub struct Lru {
    capacity: usize,
    links: Links,
    list: List,
}

impl Lru {
    pub fn new(capacity: usize, page_count_hint: usize) -> Self {
        Lru {
            capacity,
            links: Links::with_pages(page_count_hint),
            list: List::new(),
        }
    }

    /// Pages from most to least recently used.
    pub fn order(&self) -> Vec<PageId> {
        self.links.iter(&self.list).collect()
    }
}

impl CachePolicy for Lru {
    #[inline]
    fn access(&mut self, req: &Request, out: &mut Effects) {
        let page = req.page;
        if self.links.is_on(&self.list, page) {
            self.links.move_to_front(&mut self.list, page);
            out.hit();
            return;
        }
        out.fill();
        if self.list.len() >= self.capacity {
            self.evict_next(out);
        }
        self.links.push_front(&mut self.list, page);
    }

    fn evict_next(&mut self, out: &mut Effects) -> bool {
        let victim = self.links.pop_back(&mut self.list);
        victim.inspect(|&v| out.evict(v)).is_some()
    }

    fn evicts_on_demand(&self) -> bool {
        true
    }

    fn tier_of(&self, page: PageId) -> Option<Tier> {
        self.links.is_on(&self.list, page).then_some(Tier::Dram)
    }

    fn occupancy(&self) -> [usize; 2] {
        [self.list.len(), 0]
    }

    #[inline]
    fn prefetch(&self, page: PageId) {
        self.links.prefetch(page);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mm::placement::policies::testing::{hit_pattern, run_pages};

    #[test]
    fn evicts_least_recently_used() {
        // capacity 3: 1 2 3 1 4 (evicts 2) 2 (miss, evicts 3) 1 (hit)
        let mut lru = Lru::new(3, 0);
        let outcome = run_pages(&mut lru, &[1, 2, 3, 1, 4, 2, 1]);
        assert_eq!(hit_pattern(&outcome), "mmmhmmh");
        assert_eq!(lru.order(), vec![1, 2, 4]);
    }
}
