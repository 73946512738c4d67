//! Placeholder, being written.
use crate::engine::{CachePolicy, Effects, Request, Tier};
use crate::trace::PageId;
use std::sync::Arc;

pub struct Opt(super::lru::Lru);

impl Opt {
    pub fn new(capacity: usize, _future: Arc<[PageId]>) -> Self {
        Opt(super::lru::Lru::new(capacity, 0))
    }
}

impl CachePolicy for Opt {
    fn name(&self) -> &'static str {
        "opt"
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
