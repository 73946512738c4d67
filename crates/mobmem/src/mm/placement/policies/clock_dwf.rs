//! CLOCK-DWF, CLOCK with Dirty bits and Write Frequency: Lee, Bahn and Noh,
//! "CLOCK-DWF: A Write-History-Aware Page Replacement Algorithm for Hybrid PCM and DRAM
//! Memory Architectures", IEEE Transactions on Computers 63(9), 2014. The literature's
//! hybrid anchor next to the app-state-aware policy: it keeps write-hot pages in DRAM
//! and knows nothing of apps.
//!
//! Reading used here (from the paper's description; its exact counter widths are not
//! reproduced):
//! ```text
//! miss on a write:  place in DRAM (making room: DRAM victim migrates to PCM,
//!                   PCM victim is evicted to storage)
//! miss on a read:   place in PCM (PCM victim evicted if full)
//! write hit in PCM: migrate the page to DRAM (PCM holds read-mostly pages)
//! read hit in PCM:  set its reference bit
//! hit in DRAM:      a write sets the dirty bit and adds one to the write frequency
//! DRAM victim (write history only): sweep the DRAM clock:
//!     dirty bit set        -> clear it, advance   (recent writes)
//!     write frequency > 0  -> decrement, advance  (frequent writes)
//!     otherwise            -> victim, migrated to PCM
//! PCM victim: plain CLOCK on reference bits; the victim goes to storage
//! ```
//! A new DRAM page starts with its dirty bit set and frequency 0 (it was just written).
//!
//! The engine asks for an eviction only when both memories are full; the victim is then
//! PCM's (a write miss evicts it to make room for the DRAM page it demotes, a read miss
//! to make room for itself). The rest of a miss is the insertion's.

use crate::core::clock::ClockRing;
use crate::core::ensure_index;
use crate::mm::placement::engine::Memory;
use crate::mm::placement::{CachePolicy, Capacity, Effect, Effects, Request, Tier};
use crate::trace::PageId;

/// Each memory's frames are a [`ClockRing`]; frames emptied by migration are reused
/// before the hand evicts anything. The PCM reference bits are the ring's.
#[derive(Debug, Clone)]
pub struct ClockDwf {
    dram: ClockRing,
    pcm: ClockRing,
    /// DRAM write history: dirty bit and write frequency.
    dirty_bit: Vec<bool>,
    write_frequency: Vec<u32>,
}

impl ClockDwf {
    pub fn new(capacity: Capacity, page_count_hint: usize) -> Self {
        ClockDwf {
            dram: ClockRing::new(capacity.dram, page_count_hint),
            pcm: ClockRing::new(capacity.pcm, page_count_hint),
            dirty_bit: vec![false; page_count_hint],
            write_frequency: vec![0; page_count_hint],
        }
    }

    fn grow(&mut self, page: PageId) {
        ensure_index(&mut self.dirty_bit, page, false);
        ensure_index(&mut self.write_frequency, page, 0);
    }

    /// Sweep the PCM clock (plain second chance) and evict its victim to storage.
    fn evict_from_pcm(&mut self, out: &mut Effects) {
        if let Some(frame) = self.pcm.victim() {
            let page = self.pcm.remove(frame);
            out.push(Effect::Evict {
                page,
                from: Tier::Pcm,
            });
        }
    }

    /// Sweep the DRAM clock on write history and migrate its victim to PCM (making room
    /// there first).
    fn demote_from_dram(&mut self, out: &mut Effects) {
        let (dirty_bit, write_frequency) = (&mut self.dirty_bit, &mut self.write_frequency);
        let victim = self.dram.sweep(|page, _| {
            let p = page as usize;
            if dirty_bit[p] {
                dirty_bit[p] = false;
                true
            } else if write_frequency[p] > 0 {
                write_frequency[p] -= 1;
                true
            } else {
                false
            }
        });
        if let Some(frame) = victim {
            let page = self.dram.remove(frame);
            self.place(page, Tier::Pcm, out);
            out.push(Effect::Migrate {
                page,
                to: Tier::Pcm,
            });
        }
    }

    /// Put `page`, which is in neither memory, in `tier`, making room there first.
    fn place(&mut self, page: PageId, tier: Tier, out: &mut Effects) {
        let p = page as usize;
        match tier {
            Tier::Dram => {
                if self.dram.is_full() {
                    self.demote_from_dram(out);
                }
                self.dram.insert(page);
                self.dirty_bit[p] = true;
                self.write_frequency[p] = 0;
            }
            Tier::Pcm => {
                if self.pcm.is_full() {
                    self.evict_from_pcm(out);
                }
                self.pcm.insert(page);
            }
        }
    }
}

impl CachePolicy for ClockDwf {
    fn hit(&mut self, req: &Request, mem: &Memory, out: &mut Effects) {
        let page = req.page;
        let p = page as usize;
        match mem.tier_of(page) {
            Some(Tier::Pcm) if req.write => {
                self.pcm.remove_page(page);
                self.place(page, Tier::Dram, out);
                out.push(Effect::Migrate {
                    page,
                    to: Tier::Dram,
                });
            }
            Some(Tier::Pcm) => {
                if let Some(frame) = self.pcm.frame_of(page) {
                    self.pcm.reference(frame);
                }
            }
            _ => {
                if req.write {
                    self.dirty_bit[p] = true;
                    self.write_frequency[p] = self.write_frequency[p].saturating_add(1);
                }
            }
        }
    }

    /// Both memories are full: PCM's victim goes.
    fn evict(&mut self, _req: &Request, _mem: &Memory, out: &mut Effects) {
        if self.pcm.is_empty() {
            if let Some(frame) = self.dram.victim() {
                let page = self.dram.remove(frame);
                out.push(Effect::Evict {
                    page,
                    from: Tier::Dram,
                });
            }
        } else {
            self.evict_from_pcm(out);
        }
    }

    fn insert(&mut self, req: &Request, _mem: &Memory, out: &mut Effects) -> Tier {
        self.grow(req.page);
        let tier = if req.write { Tier::Dram } else { Tier::Pcm };
        self.place(req.page, tier, out);
        tier
    }

    fn remove(&mut self, page: PageId, _mem: &Memory) {
        if self.dram.remove_page(page).is_none() {
            self.pcm.remove_page(page);
        }
    }

    fn holds(&self, page: PageId) -> Option<Tier> {
        if self.dram.contains(page) {
            Some(Tier::Dram)
        } else if self.pcm.contains(page) {
            Some(Tier::Pcm)
        } else {
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::mm::placement::engine::Engine;
    use crate::mm::placement::policies::testing::{hybrid, request, step};

    fn req(page: PageId, write: bool) -> Request {
        request(page, true, write)
    }

    fn clock_dwf(capacity: Capacity) -> Engine<ClockDwf> {
        hybrid(ClockDwf::new(capacity, 0), capacity)
    }

    fn migrate(page: PageId, to: Tier) -> Effect {
        Effect::Migrate { page, to }
    }

    #[test]
    fn writes_go_to_dram_reads_to_pcm() {
        let mut p = clock_dwf(Capacity { dram: 2, pcm: 2 });
        assert_eq!(
            step(&mut p, req(1, true)),
            vec![Effect::Fill { tier: Tier::Dram }]
        );
        assert_eq!(
            step(&mut p, req(2, false)),
            vec![Effect::Fill { tier: Tier::Pcm }]
        );
        // A write hit in PCM moves the page to DRAM (free frame there: no demotion).
        assert_eq!(
            step(&mut p, req(2, true)),
            vec![Effect::Hit { tier: Tier::Pcm }, migrate(2, Tier::Dram)]
        );
        assert_eq!(
            [p.memory().used(Tier::Dram), p.memory().used(Tier::Pcm)],
            [2, 0]
        );
    }

    #[test]
    fn dram_victim_is_the_least_write_hot_page() {
        let mut p = clock_dwf(Capacity { dram: 2, pcm: 2 });
        step(&mut p, req(1, true)); // DRAM frame 0: page 1, dirty, freq 0
        step(&mut p, req(2, true)); // DRAM frame 1: page 2, dirty, freq 0
        step(&mut p, req(1, true)); // page 1: freq 1
        step(&mut p, req(1, true)); // page 1: freq 2

        // Write miss on 3: the sweep clears both dirty bits (1, 2), then page 1 has
        // freq 2 -> 1, page 2 has freq 0 -> victim, migrated to PCM.
        let effects = step(&mut p, req(3, true));
        assert_eq!(
            effects,
            vec![Effect::Fill { tier: Tier::Dram }, migrate(2, Tier::Pcm)]
        );
        assert_eq!(p.memory().tier_of(1), Some(Tier::Dram));
        assert_eq!(p.memory().tier_of(2), Some(Tier::Pcm));
    }

    #[test]
    fn pcm_uses_plain_clock() {
        let mut p = clock_dwf(Capacity { dram: 1, pcm: 2 });
        step(&mut p, req(1, false)); // PCM frame 0
        step(&mut p, req(2, false)); // PCM frame 1
        step(&mut p, req(1, false)); // reference bit of 1

        // Read miss on 3: hand at frame 0 (page 1, referenced) -> clear; frame 1 (page 2)
        // is the victim.
        assert_eq!(
            step(&mut p, req(3, false)),
            vec![
                Effect::Fill { tier: Tier::Pcm },
                Effect::Evict {
                    page: 2,
                    from: Tier::Pcm
                }
            ]
        );
    }
}
