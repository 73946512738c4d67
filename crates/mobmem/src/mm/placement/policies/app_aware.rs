//! The app-state-aware buffer cache on hybrid DRAM + PCM of Oh, Kang, Lee and Eom,
//! "Hybrid Main Memory based Buffer Cache Scheme by Using Characteristics of Mobile
//! Applications", KIISE 2015 (its Figure 3).
//!
//! DRAM and PCM are each an LRU list; every page has a reference count.
//!
//! ```text
//! hit in DRAM:  count += 1; move to DRAM MRU
//! hit in PCM:   count += 1
//!               if foreground and dirty (or written now) and count >= 2:
//!                   migrate to DRAM MRU (demoting the DRAM victim to PCM MRU if DRAM is full)
//!               else move to PCM MRU                 -- reads never migrate
//! miss, foreground app:
//!               if DRAM full: (if PCM full: evict the PCM victim to storage)
//!                             demote the DRAM victim to PCM MRU
//!               place at DRAM MRU, count 0
//! miss, other app:
//!               if PCM full: evict the PCM victim to storage
//!               place at PCM MRU, count 0
//! victim of a list: look at its LRU page; count 0 -> that page;
//!                   otherwise count -= 1 and move it to the MRU end, and look again
//! ```
//!
//! Readings (the paper leaves them open): a page at the LRU end with a count above zero gets a
//! counting second chance in its own list; "count >= 2" counts re-references including
//! the current one; a page keeps its count when it moves between tiers; a page left in
//! DRAM after its app went to the background stays there until LRU demotes it.
//! Each victim search is amortized O(1): every decrement pays for an earlier increment.
//!
//! The engine asks for an eviction only when both tiers are full; the victim is then
//! PCM's (a foreground miss evicts it to make room for the DRAM page it demotes, a
//! background miss to make room for itself). The rest of a miss, the demotion and the
//! eviction when only PCM is full, is the insertion's.

use crate::core::ensure_index;
use crate::core::list::TaggedLists;
use crate::mm::placement::engine::Memory;
use crate::mm::placement::{CachePolicy, Effect, Effects, Request, Tier};
use crate::trace::PageId;

/// Reference count at which a dirty foreground PCM page is migrated to DRAM.
pub const MIGRATION_COUNT: u32 = 2;

#[derive(Debug, Clone)]
pub struct AppAware {
    /// The LRU list of each tier, indexed by [`Tier::index`], MRU first.
    lists: TaggedLists,
    count: Vec<u32>,
}

impl AppAware {
    pub fn new(page_count_hint: usize) -> Self {
        AppAware {
            lists: TaggedLists::new(2, page_count_hint),
            count: vec![0; page_count_hint],
        }
    }

    /// Pages of a tier from MRU to LRU, and their counts (for tests).
    pub fn contents(&self, tier: Tier) -> Vec<(PageId, u32)> {
        self.lists
            .iter(tier.index())
            .map(|p| (p, self.count[p as usize]))
            .collect()
    }

    fn len(&self, tier: Tier) -> u64 {
        self.lists.len(tier.index()) as u64
    }

    /// Remove and return the victim of a tier's list (counting second chance).
    fn take_victim(&mut self, tier: Tier) -> Option<PageId> {
        let list = tier.index();
        loop {
            let page = self.lists.back(list)?;
            let count = &mut self.count[page as usize];
            if *count == 0 {
                self.lists.remove(page);
                return Some(page);
            }
            *count -= 1;
            self.lists.move_to_front(list, page);
        }
    }

    fn evict_from_pcm(&mut self, out: &mut Effects) {
        if let Some(victim) = self.take_victim(Tier::Pcm) {
            out.push(Effect::Evict {
                page: victim,
                from: Tier::Pcm,
            });
        }
    }

    /// Demote the DRAM victim to PCM MRU; PCM MUST have room.
    fn demote_from_dram(&mut self, out: &mut Effects) {
        if let Some(victim) = self.take_victim(Tier::Dram) {
            self.lists.push_front(Tier::Pcm.index(), victim);
            out.push(Effect::Migrate {
                page: victim,
                to: Tier::Pcm,
            });
        }
    }

    fn hit_in_pcm(&mut self, req: &Request, mem: &Memory, out: &mut Effects) {
        let page = req.page;
        let written = req.dirty || req.write;
        if req.foreground && written && self.count[page as usize] >= MIGRATION_COUNT {
            // Leaving PCM first frees the slot the demoted DRAM page needs.
            self.lists.remove(page);
            if self.len(Tier::Dram) >= mem.capacity(Tier::Dram) {
                self.demote_from_dram(out);
            }
            self.lists.push_front(Tier::Dram.index(), page);
            out.push(Effect::Migrate {
                page,
                to: Tier::Dram,
            });
        } else {
            self.lists.move_to_front(Tier::Pcm.index(), page);
        }
    }
}

impl CachePolicy for AppAware {
    fn hit(&mut self, req: &Request, mem: &Memory, out: &mut Effects) {
        let page = req.page;
        self.count[page as usize] = self.count[page as usize].saturating_add(1);
        match mem.tier_of(page) {
            Some(Tier::Pcm) => self.hit_in_pcm(req, mem, out),
            _ => self.lists.move_to_front(Tier::Dram.index(), page),
        }
    }

    /// Both tiers are full: PCM's victim goes.
    fn evict(&mut self, _req: &Request, _mem: &Memory, out: &mut Effects) {
        if self.lists.is_empty(Tier::Pcm.index()) {
            if let Some(victim) = self.take_victim(Tier::Dram) {
                out.push(Effect::Evict {
                    page: victim,
                    from: Tier::Dram,
                });
            }
        } else {
            self.evict_from_pcm(out);
        }
    }

    fn insert(&mut self, req: &Request, mem: &Memory, out: &mut Effects) -> Tier {
        let page = req.page;
        ensure_index(&mut self.count, page, 0);
        self.count[page as usize] = 0;
        let tier = if req.foreground {
            if self.len(Tier::Dram) >= mem.capacity(Tier::Dram) {
                if self.len(Tier::Pcm) >= mem.capacity(Tier::Pcm) {
                    self.evict_from_pcm(out);
                }
                self.demote_from_dram(out);
            }
            Tier::Dram
        } else {
            if self.len(Tier::Pcm) >= mem.capacity(Tier::Pcm) {
                self.evict_from_pcm(out);
            }
            Tier::Pcm
        };
        self.lists.push_front(tier.index(), page);
        tier
    }

    fn remove(&mut self, page: PageId, _mem: &Memory) {
        self.lists.remove(page);
    }

    fn holds(&self, page: PageId) -> Option<Tier> {
        match self.lists.list_of(page) {
            Some(0) => Some(Tier::Dram),
            Some(_) => Some(Tier::Pcm),
            None => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::mm::placement::policies::testing::{describe, hybrid, request as req, step};
    use crate::mm::placement::Capacity;

    #[test]
    fn foreground_miss_with_dram_full_demotes_and_pcm_full_evicts() {
        let mut p = hybrid(AppAware::new(0), Capacity { dram: 1, pcm: 2 });
        step(&mut p, req(1, true, false)); // DRAM [1]
        step(&mut p, req(2, false, false)); // PCM [2]
        step(&mut p, req(3, false, false)); // PCM [3 2]
                                            // Foreground miss on 4: PCM full -> evict its LRU 2; DRAM full -> demote 1 to PCM MRU.
        let effects = step(&mut p, req(4, true, false));
        assert_eq!(describe(&effects), "fill dram, evict 2 from pcm, 1 to pcm");
        // DRAM: [4]; PCM: [1 3]
        assert_eq!(p.policy().contents(Tier::Dram), vec![(4, 0)]);
        assert_eq!(p.policy().contents(Tier::Pcm), vec![(1, 0), (3, 0)]);
    }

    #[test]
    fn background_miss_goes_to_pcm_even_with_dram_free() {
        let mut p = hybrid(AppAware::new(0), Capacity { dram: 4, pcm: 4 });
        assert_eq!(describe(&step(&mut p, req(7, false, true))), "fill pcm");
        assert_eq!(
            [p.memory().used(Tier::Dram), p.memory().used(Tier::Pcm)],
            [0, 1]
        );
    }

    #[test]
    fn pcm_hit_migrates_only_foreground_dirty_pages_with_count_two() {
        let mut p = hybrid(AppAware::new(0), Capacity { dram: 1, pcm: 3 });
        step(&mut p, req(5, false, false)); // PCM [5], count 0
        step(&mut p, req(1, true, false)); // DRAM [1]
                                           // First foreground write hit: count 1 < 2, stays in PCM (moved to MRU).
        assert_eq!(describe(&step(&mut p, req(5, true, true))), "hit pcm");
        // A foreground read of a page that was never written: count 2 but clean, so it
        // stays (reads never migrate).
        let mut read = req(5, true, false);
        read.dirty = false;
        assert_eq!(describe(&step(&mut p, read)), "hit pcm");
        assert_eq!(p.policy().contents(Tier::Pcm), vec![(5, 2)]);
        // A background write hit (count 3) does not migrate either.
        assert_eq!(describe(&step(&mut p, req(5, false, true))), "hit pcm");
        // Foreground, dirty (written before), count 4 >= 2: migrate; DRAM full so its
        // victim 1 (count 0) is demoted to PCM MRU.
        let mut dirty_hit = req(5, true, false);
        dirty_hit.dirty = true;
        assert_eq!(
            describe(&step(&mut p, dirty_hit)),
            "hit pcm, 1 to pcm, 5 to dram"
        );
        assert_eq!(p.policy().contents(Tier::Dram), vec![(5, 4)]);
        assert_eq!(p.policy().contents(Tier::Pcm), vec![(1, 0)]);
    }

    #[test]
    fn victim_search_gives_counted_pages_a_second_chance() {
        let mut p = hybrid(AppAware::new(0), Capacity { dram: 1, pcm: 2 });
        step(&mut p, req(1, false, false)); // PCM [1]
        step(&mut p, req(2, false, false)); // PCM [2 1]
        step(&mut p, req(1, false, false)); // hit: PCM [1 2], count(1) = 1
        step(&mut p, req(2, false, false)); // hit: PCM [2 1], count(2) = 1
        step(&mut p, req(2, false, false)); // hit: count(2) = 2
                                            // Miss on 3: LRU end is 1 (count 1) -> count 0, to MRU: [1 2]; LRU 2 (count 2)
                                            // -> 1, to MRU: [2 1]; LRU 1 (count 0) -> victim.
        let effects = step(&mut p, req(3, false, false));
        assert_eq!(
            effects[1],
            Effect::Evict {
                page: 1,
                from: Tier::Pcm
            }
        );
        assert_eq!(p.policy().contents(Tier::Pcm), vec![(3, 0), (2, 1)]);
    }

    #[test]
    fn background_page_left_in_dram_stays_on_rereference() {
        let mut p = hybrid(AppAware::new(0), Capacity { dram: 2, pcm: 2 });
        step(&mut p, req(1, true, false)); // foreground app brings 1 into DRAM
                                           // The app is now background; a re-reference keeps the page at DRAM MRU.
        assert_eq!(describe(&step(&mut p, req(1, false, true))), "hit dram");
        assert_eq!(p.memory().tier_of(1), Some(Tier::Dram));
    }
}
