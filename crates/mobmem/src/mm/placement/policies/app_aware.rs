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

use crate::core::list::{Links, List};
use crate::mm::placement::{
    ensure_index, CachePolicy, Capacity, Effect, Effects, Locations, Request, Tier,
};
use crate::trace::PageId;

/// Reference count at which a dirty foreground PCM page is migrated to DRAM.
pub const MIGRATION_COUNT: u32 = 2;

#[derive(Debug, Clone)]
pub struct AppAware {
    capacity: Capacity,
    links: Links,
    dram: List,
    pcm: List,
    location: Locations,
    count: Vec<u32>,
}

impl AppAware {
    pub fn new(capacity: Capacity, page_count_hint: usize) -> Self {
        AppAware {
            capacity,
            links: Links::with_pages(page_count_hint),
            dram: List::new(),
            pcm: List::new(),
            location: Locations::with_pages(page_count_hint),
            count: vec![0; page_count_hint],
        }
    }

    /// Pages of a tier from MRU to LRU, and their counts (for tests).
    pub fn contents(&self, tier: Tier) -> Vec<(PageId, u32)> {
        let list = match tier {
            Tier::Dram => &self.dram,
            Tier::Pcm => &self.pcm,
        };
        self.links
            .iter(list)
            .map(|p| (p, self.count[p as usize]))
            .collect()
    }

    /// Remove and return the victim of a tier's list (counting second chance).
    fn take_victim(&mut self, tier: Tier) -> Option<PageId> {
        let list = match tier {
            Tier::Dram => &mut self.dram,
            Tier::Pcm => &mut self.pcm,
        };
        loop {
            let page = list.back()?;
            let count = &mut self.count[page as usize];
            if *count == 0 {
                self.links.remove(list, page);
                return Some(page);
            }
            *count -= 1;
            self.links.move_to_front(list, page);
        }
    }

    fn evict_from_pcm(&mut self, out: &mut Effects) {
        if let Some(victim) = self.take_victim(Tier::Pcm) {
            self.location.set(victim, None);
            out.push(Effect::Evict {
                page: victim,
                from: Tier::Pcm,
            });
        }
    }

    /// Demote the DRAM victim to PCM MRU; PCM MUST have room.
    fn demote_from_dram(&mut self, out: &mut Effects) {
        if let Some(victim) = self.take_victim(Tier::Dram) {
            self.location.set(victim, Some(Tier::Pcm));
            self.links.push_front(&mut self.pcm, victim);
            out.push(Effect::Migrate {
                page: victim,
                to: Tier::Pcm,
            });
        }
    }

    fn hit_in_pcm(&mut self, req: &Request, out: &mut Effects) {
        let page = req.page;
        out.push(Effect::Hit { tier: Tier::Pcm });
        let written = req.dirty || req.write;
        if req.foreground && written && self.count[page as usize] >= MIGRATION_COUNT {
            // Leaving PCM first frees the slot the demoted DRAM page needs.
            self.links.remove(&mut self.pcm, page);
            if self.dram.len() >= self.capacity.dram {
                self.demote_from_dram(out);
            }
            self.links.push_front(&mut self.dram, page);
            self.location.set(page, Some(Tier::Dram));
            out.push(Effect::Migrate {
                page,
                to: Tier::Dram,
            });
        } else {
            self.links.move_to_front(&mut self.pcm, page);
        }
    }

    fn miss(&mut self, req: &Request, out: &mut Effects) {
        let page = req.page;
        self.count[page as usize] = 0;
        if req.foreground {
            out.push(Effect::Fill { tier: Tier::Dram });
            if self.dram.len() >= self.capacity.dram {
                if self.pcm.len() >= self.capacity.pcm {
                    self.evict_from_pcm(out);
                }
                self.demote_from_dram(out);
            }
            self.links.push_front(&mut self.dram, page);
            self.location.set(page, Some(Tier::Dram));
        } else {
            out.push(Effect::Fill { tier: Tier::Pcm });
            if self.pcm.len() >= self.capacity.pcm {
                self.evict_from_pcm(out);
            }
            self.links.push_front(&mut self.pcm, page);
            self.location.set(page, Some(Tier::Pcm));
        }
    }
}

impl CachePolicy for AppAware {
    fn access(&mut self, req: &Request, out: &mut Effects) {
        let page = req.page;
        ensure_index(&mut self.count, page, 0);
        match self.location.get(page) {
            Some(Tier::Dram) => {
                self.count[page as usize] = self.count[page as usize].saturating_add(1);
                self.links.move_to_front(&mut self.dram, page);
                out.push(Effect::Hit { tier: Tier::Dram });
            }
            Some(Tier::Pcm) => {
                self.count[page as usize] = self.count[page as usize].saturating_add(1);
                self.hit_in_pcm(req, out);
            }
            None => self.miss(req, out),
        }
    }

    fn tier_of(&self, page: PageId) -> Option<Tier> {
        self.location.get(page)
    }

    fn occupancy(&self) -> [usize; 2] {
        [self.dram.len(), self.pcm.len()]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::mm::placement::policies::testing::{describe, request as req, step};

    #[test]
    fn foreground_miss_with_dram_full_demotes_and_pcm_full_evicts() {
        let mut p = AppAware::new(Capacity { dram: 1, pcm: 2 }, 0);
        step(&mut p, req(1, true, false)); // DRAM [1]
        step(&mut p, req(2, false, false)); // PCM [2]
        step(&mut p, req(3, false, false)); // PCM [3 2]
                                            // Foreground miss on 4: PCM full -> evict its LRU 2; DRAM full -> demote 1 to PCM MRU.
        let effects = step(&mut p, req(4, true, false));
        assert_eq!(describe(&effects), "fill dram, evict 2 from pcm, 1 to pcm");
        // DRAM: [4]; PCM: [1 3]
        assert_eq!(p.contents(Tier::Dram), vec![(4, 0)]);
        assert_eq!(p.contents(Tier::Pcm), vec![(1, 0), (3, 0)]);
    }

    #[test]
    fn background_miss_goes_to_pcm_even_with_dram_free() {
        let mut p = AppAware::new(Capacity { dram: 4, pcm: 4 }, 0);
        assert_eq!(describe(&step(&mut p, req(7, false, true))), "fill pcm");
        assert_eq!(p.occupancy(), [0, 1]);
    }

    #[test]
    fn pcm_hit_migrates_only_foreground_dirty_pages_with_count_two() {
        let mut p = AppAware::new(Capacity { dram: 1, pcm: 3 }, 0);
        step(&mut p, req(5, false, false)); // PCM [5], count 0
        step(&mut p, req(1, true, false)); // DRAM [1]
                                           // First foreground write hit: count 1 < 2, stays in PCM (moved to MRU).
        assert_eq!(describe(&step(&mut p, req(5, true, true))), "hit pcm");
        // A foreground read of a page that was never written: count 2 but clean, so it
        // stays (reads never migrate).
        let mut read = req(5, true, false);
        read.dirty = false;
        assert_eq!(describe(&step(&mut p, read)), "hit pcm");
        assert_eq!(p.contents(Tier::Pcm), vec![(5, 2)]);
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
        assert_eq!(p.contents(Tier::Dram), vec![(5, 4)]);
        assert_eq!(p.contents(Tier::Pcm), vec![(1, 0)]);
    }

    #[test]
    fn victim_search_gives_counted_pages_a_second_chance() {
        let mut p = AppAware::new(Capacity { dram: 1, pcm: 2 }, 0);
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
        assert_eq!(p.contents(Tier::Pcm), vec![(3, 0), (2, 1)]);
    }

    #[test]
    fn background_page_left_in_dram_stays_on_rereference() {
        let mut p = AppAware::new(Capacity { dram: 2, pcm: 2 }, 0);
        step(&mut p, req(1, true, false)); // foreground app brings 1 into DRAM
                                           // The app is now background; a re-reference keeps the page at DRAM MRU.
        assert_eq!(describe(&step(&mut p, req(1, false, true))), "hit dram");
        assert_eq!(p.tier_of(1), Some(Tier::Dram));
    }
}
