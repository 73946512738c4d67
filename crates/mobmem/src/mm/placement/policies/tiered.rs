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
//!   inner decides: hit, or admit and evict victims v (from their tiers) and insert
//!   if p in PCM: promote p         (a PCM hit migrates to DRAM)
//!   if p new: place p in DRAM
//!   if DRAM over capacity: demote the DRAM LRU page to PCM
//!   move p to the DRAM MRU end
//! ```
//! With inner LRU this is exactly one LRU stack whose top `dram` pages are in DRAM. The
//! inner policy answers the engine's verbs with the memory's whole capacity; this keeps
//! only the recency order of the pages in DRAM and reads the rest from the engine.

use crate::core::list::{Links, List};
use crate::mm::placement::engine::Memory;
use crate::mm::placement::{CachePolicy, Effect, Effects, Request, Tier};
use crate::trace::PageId;

#[derive(Debug, Clone)]
pub struct Tiered<P> {
    inner: P,
    /// Recency order of the pages in DRAM.
    links: Links,
    dram: List,
    scratch: Effects,
}

impl<P: CachePolicy> Tiered<P> {
    pub fn new(inner: P, page_count_hint: usize) -> Self {
        Tiered {
            inner,
            links: Links::with_pages(page_count_hint),
            dram: List::new(),
            scratch: Effects::new(),
        }
    }

    /// Report the inner policy's evictions (in `scratch`) from the tiers the pages are in.
    fn evictions(&mut self, mem: &Memory, out: &mut Effects) {
        let scratch = std::mem::take(&mut self.scratch);
        for effect in scratch.as_slice() {
            if let Effect::Evict { page, .. } = *effect {
                let from = mem.tier_of(page).unwrap_or(Tier::Dram);
                if from == Tier::Dram {
                    self.links.remove(&mut self.dram, page);
                }
                out.push(Effect::Evict { page, from });
            }
        }
        self.scratch = scratch;
        self.scratch.clear();
    }

    /// Make room for one more page in DRAM by demoting its LRU page to PCM.
    fn make_dram_room(&mut self, mem: &Memory, out: &mut Effects) {
        if self.dram.len() as u64 >= mem.capacity(Tier::Dram) {
            if let Some(victim) = self.links.pop_back(&mut self.dram) {
                out.push(Effect::Migrate {
                    page: victim,
                    to: Tier::Pcm,
                });
            }
        }
    }
}

impl<P: CachePolicy> CachePolicy for Tiered<P> {
    fn hit(&mut self, req: &Request, mem: &Memory, out: &mut Effects) {
        let page = req.page;
        self.inner.hit(req, mem, &mut self.scratch);
        self.evictions(mem, out);
        match mem.tier_of(page) {
            Some(Tier::Dram) => self.links.move_to_front(&mut self.dram, page),
            _ => {
                // The page leaves PCM before the demoted DRAM page enters it.
                self.make_dram_room(mem, out);
                self.links.push_front(&mut self.dram, page);
                out.push(Effect::Migrate {
                    page,
                    to: Tier::Dram,
                });
            }
        }
    }

    fn admit(&mut self, req: &Request, mem: &Memory, out: &mut Effects) -> bool {
        let admitted = self.inner.admit(req, mem, &mut self.scratch);
        self.evictions(mem, out);
        admitted
    }

    fn evict(&mut self, req: &Request, mem: &Memory, out: &mut Effects) {
        self.inner.evict(req, mem, &mut self.scratch);
        self.evictions(mem, out);
    }

    fn insert(&mut self, req: &Request, mem: &Memory, out: &mut Effects) -> Tier {
        self.inner.insert(req, mem, &mut self.scratch);
        self.evictions(mem, out);
        self.make_dram_room(mem, out);
        self.links.push_front(&mut self.dram, req.page);
        Tier::Dram
    }

    fn remove(&mut self, page: PageId, mem: &Memory) {
        if mem.tier_of(page) == Some(Tier::Dram) {
            self.links.remove(&mut self.dram, page);
        }
        self.inner.remove(page, mem);
    }

    fn holds(&self, page: PageId) -> Option<Tier> {
        self.inner.holds(page).map(|_| {
            if self.links.is_on(&self.dram, page) {
                Tier::Dram
            } else {
                Tier::Pcm
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mm::placement::policies::lru::Lru;
    use crate::mm::placement::policies::testing::{describe, hybrid, run_pages};
    use crate::mm::placement::Capacity;

    #[test]
    fn hybrid_lru_is_one_stack_split_at_dram_size() {
        // DRAM 1, PCM 2: the most recent page is in DRAM, the next two in PCM.
        let cap = Capacity { dram: 1, pcm: 2 };
        let mut policy = hybrid(Tiered::new(Lru::new(0), 0), cap);
        let outcome = run_pages(&mut policy, &[1, 2, 3]);
        assert_eq!(describe(&outcome[2]), "fill dram, 2 to pcm");
        assert_eq!(policy.memory().tier_of(3), Some(Tier::Dram));
        assert_eq!(policy.memory().tier_of(1), Some(Tier::Pcm));
        // A PCM hit on 1 promotes it and demotes 3.
        let outcome = run_pages(&mut policy, &[1]);
        assert_eq!(describe(&outcome[0]), "hit pcm, 3 to pcm, 1 to dram");
        // A new page 4 evicts the LRU page 2 from PCM and demotes 1.
        let outcome = run_pages(&mut policy, &[4]);
        assert_eq!(
            describe(&outcome[0]),
            "fill dram, evict 2 from pcm, 1 to pcm"
        );
        assert_eq!(
            [
                policy.memory().used(Tier::Dram),
                policy.memory().used(Tier::Pcm)
            ],
            [1, 2]
        );
    }
}
