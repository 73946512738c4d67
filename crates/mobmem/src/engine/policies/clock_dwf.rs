//! Placeholder, being written.
use crate::engine::{Capacity, CachePolicy, Effects, Request, Tier};
use crate::trace::PageId;

pub struct ClockDwf(super::tiered::Tiered<super::lru::Lru>);

impl ClockDwf {
    pub fn new(capacity: Capacity, hint: usize) -> Self { ClockDwf(super::tiered::Tiered::new("clock_dwf", super::lru::Lru::new(capacity.total(), hint), capacity, hint)) }
}

impl CachePolicy for ClockDwf {
    fn name(&self) -> &'static str { "clock_dwf" }
    fn access(&mut self, req: &Request, out: &mut Effects) { self.0.access(req, out) }
    fn tier_of(&self, page: PageId) -> Option<Tier> { self.0.tier_of(page) }
    fn occupancy(&self) -> [usize; 2] { self.0.occupancy() }
}
