//! Placeholder, being written.
use crate::engine::{CachePolicy, Effects, Request, Tier};
use crate::trace::PageId;

pub struct TwoQ(super::lru::Lru);

impl TwoQ {
    pub fn new(capacity: usize, page_count_hint: usize) -> Self {
        TwoQ(super::lru::Lru::new(capacity, page_count_hint))
    }
}

impl CachePolicy for TwoQ {
    fn name(&self) -> &'static str {
        "two_q"
    }
    fn access(&mut self, req: &Request, out: &mut Effects) {
        self.0.access(req, out)
    }
    fn tier_of(&self, page: PageId) -> Option<Tier> {
        self.0.tier_of(page)
    }
    fn occupancy(&self) -> [usize; 2] {
        self.0.occupancy()
    }
}
