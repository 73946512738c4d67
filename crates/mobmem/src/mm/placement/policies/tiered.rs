//! App-blind hybrid placement over any single-tier policy: the baselines `hybrid-lru` and
//! `hybrid-2q` of the app-state-aware paper (Oh, Kang, Lee, Eom, KIISE 2015).
//!
//! The paper compares against LRU and 2Q on the same DRAM + PCM memory without saying how
//! they place pages. Reading used here (Oh, Kang, Lee, Eom, KIISE 2015): the inner policy alone decides
//! which pages are in memory, with the capacity of both tiers; DRAM holds the most
//! recently accessed resident pages.
//!
//! ```text
//! on access(p):
//!   inner.access(p)               -> hit, or fill and maybe evict victim v (from its tier)
//!   if p in PCM: promote p         (a PCM hit migrates to DRAM)
//!   if p new: place p in DRAM
//!   if DRAM over capacity: demote the DRAM LRU page to PCM
//!   move p to the DRAM MRU end
//! ```
//! With inner LRU this is exactly one LRU stack whose top `dram` pages are in DRAM.

use crate::core::list::{Links, List};
use crate::mm::placement::{CachePolicy, Capacity, Effect, Effects, Locations, Request, Tier};
use crate::trace::PageId;

#[derive(Debug, Clone)]
pub struct Tiered<P> {
    inner: P,
    capacity: Capacity,
    /// Recency order of the pages in DRAM.
    links: Links,
    dram: List,
    pcm_len: usize,
    location: Locations,
    scratch: Effects,
}

impl<P: CachePolicy> Tiered<P> {
    pub fn new(inner: P, capacity: Capacity, page_count_hint: usize) -> Self {
        Tiered {
            inner,
            capacity,
            links: Links::with_pages(page_count_hint),
            dram: List::new(),
            pcm_len: 0,
            location: Locations::with_pages(page_count_hint),
            scratch: Effects::new(),
        }
    }

    fn remove_from_memory(&mut self, page: PageId, out: &mut Effects) {
        let from = match self.location.get(page) {
            Some(Tier::Dram) => {
                self.links.remove(&mut self.dram, page);
                Tier::Dram
            }
            _ => {
                self.pcm_len -= 1;
                Tier::Pcm
            }
        };
        self.location.set(page, None);
        out.push(Effect::Evict { page, from });
    }

    /// Make room for one more page in DRAM by demoting its LRU page to PCM.
    fn make_dram_room(&mut self, out: &mut Effects) {
        if self.dram.len() >= self.capacity.dram {
            if let Some(victim) = self.links.pop_back(&mut self.dram) {
                self.location.set(victim, Some(Tier::Pcm));
                self.pcm_len += 1;
                out.push(Effect::Migrate {
                    page: victim,
                    to: Tier::Pcm,
                });
            }
        }
    }
}

impl<P: CachePolicy> CachePolicy for Tiered<P> {
    fn access(&mut self, req: &Request, out: &mut Effects) {
        let page = req.page;
        self.scratch.clear();
        self.inner.access(req, &mut self.scratch);
        let mut scratch = std::mem::take(&mut self.scratch);
        let first = scratch.as_slice()[0];
        match first {
            Effect::Hit { .. } => match self.location.get(page) {
                Some(Tier::Dram) => {
                    out.push(Effect::Hit { tier: Tier::Dram });
                    self.links.move_to_front(&mut self.dram, page);
                }
                _ => {
                    out.push(Effect::Hit { tier: Tier::Pcm });
                    // Take the page out of PCM first so the demoted DRAM page has a slot.
                    self.pcm_len -= 1;
                    self.make_dram_room(out);
                    self.location.set(page, Some(Tier::Dram));
                    self.links.push_front(&mut self.dram, page);
                    out.push(Effect::Migrate {
                        page,
                        to: Tier::Dram,
                    });
                }
            },
            _ => {
                out.push(Effect::Fill { tier: Tier::Dram });
                for effect in &scratch.as_slice()[1..] {
                    if let Effect::Evict { page: victim, .. } = *effect {
                        self.remove_from_memory(victim, out);
                    }
                }
                self.make_dram_room(out);
                self.location.set(page, Some(Tier::Dram));
                self.links.push_front(&mut self.dram, page);
            }
        }
        scratch.clear();
        self.scratch = scratch;
    }

    fn tier_of(&self, page: PageId) -> Option<Tier> {
        self.location.get(page)
    }

    fn occupancy(&self) -> [usize; 2] {
        [self.dram.len(), self.pcm_len]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mm::placement::policies::lru::Lru;
    use crate::mm::placement::policies::testing::{describe, run_pages};

    #[test]
    fn hybrid_lru_is_one_stack_split_at_dram_size() {
        // DRAM 1, PCM 2: the most recent page is in DRAM, the next two in PCM.
        let cap = Capacity { dram: 1, pcm: 2 };
        let mut policy = Tiered::new(Lru::new(3, 0), cap, 0);
        let outcome = run_pages(&mut policy, &[1, 2, 3]);
        assert_eq!(describe(&outcome[2]), "fill dram, 2 to pcm");
        assert_eq!(policy.tier_of(3), Some(Tier::Dram));
        assert_eq!(policy.tier_of(1), Some(Tier::Pcm));
        // A PCM hit on 1 promotes it and demotes 3.
        let outcome = run_pages(&mut policy, &[1]);
        assert_eq!(describe(&outcome[0]), "hit pcm, 3 to pcm, 1 to dram");
        // A new page 4 evicts the LRU page 2 from PCM and demotes 1.
        let outcome = run_pages(&mut policy, &[4]);
        assert_eq!(
            describe(&outcome[0]),
            "fill dram, evict 2 from pcm, 1 to pcm"
        );
        assert_eq!(policy.occupancy(), [1, 2]);
    }
}
