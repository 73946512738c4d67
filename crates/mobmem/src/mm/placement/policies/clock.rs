//! CLOCK (second chance): FIFO order around a circle of frames, but a page referenced
//! since the hand last passed it is spared once.
//!
//! Source: F. J. Corbató, "A paging experiment with the Multics system", MIT Project MAC
//! report MAC-M-384, 1968. The formulation below (new page in the victim's frame with its
//! bit clear, hand moved past it) is the one used by Bansal and Modha's CAR paper
//! (FAST 2004) to describe CLOCK.
//!
//! ```text
//! on access(p):
//!   if p resident: ref[p] = 1; hit
//!   else if a frame is free: put p in it, ref[p] = 0; miss
//!   else:
//!     while ref[frame[hand]] == 1: ref[frame[hand]] = 0; hand = hand + 1 (mod c)
//!     evict frame[hand]; frame[hand] = p; ref[p] = 0; hand = hand + 1 (mod c); miss
//! ```
//! A new page starts with its bit clear: the miss that brought it in is not a reuse, and
//! the bit records whether the page was used again since it was loaded (or since the hand
//! last spared it). Since the hand moves past the new page, the page still gets a whole
//! revolution of the hand to be referenced again before it can be evicted. Setting the
//! bit instead would give every page, even one used once, a second revolution.
//!
//! The search ends within one revolution: after the hand clears every bit it meets, the
//! frame where it started has a clear bit. The frames, hand and bits are a
//! [`ClockRing`]. A capacity of zero is treated as one frame.

use crate::core::clock::ClockRing;
use crate::mm::placement::{CachePolicy, Effect, Effects, Request, Tier};
use crate::trace::PageId;

#[derive(Debug, Clone)]
pub struct Clock {
    ring: ClockRing,
}

impl Clock {
    pub fn new(capacity: usize, page_count_hint: usize) -> Self {
        Clock {
            ring: ClockRing::new(capacity.max(1), page_count_hint),
        }
    }

    /// The pages in frame order starting at the hand (the order the hand examines them),
    /// each with its reference bit.
    pub fn from_hand(&self) -> Vec<(PageId, bool)> {
        self.ring.from_hand().collect()
    }
}

impl CachePolicy for Clock {
    #[inline]
    fn access(&mut self, req: &Request, out: &mut Effects) {
        let page = req.page;
        if let Some(frame) = self.ring.frame_of(page) {
            self.ring.reference(frame);
            out.push(Effect::Hit { tier: Tier::Dram });
            return;
        }
        out.push(Effect::Fill { tier: Tier::Dram });
        if self.ring.insert(page).is_some() {
            return;
        }
        // Full, and the capacity is at least one: the ring has a victim.
        let frame = self
            .ring
            .victim()
            .expect("a full ring of at least one frame");
        let victim = self.ring.replace(frame, page);
        out.push(Effect::Evict {
            page: victim,
            from: Tier::Dram,
        });
    }

    fn tier_of(&self, page: PageId) -> Option<Tier> {
        self.ring.contains(page).then_some(Tier::Dram)
    }

    fn occupancy(&self) -> [usize; 2] {
        [self.ring.len(), 0]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mm::placement::policies::testing::{evictions, hits, run_pages};

    #[test]
    fn spares_referenced_pages_once() {
        // capacity 3, frames listed from the hand as page(bit):
        //   1 2 3  misses fill the free frames                 1(0) 2(0) 3(0)
        //   1      hit sets 1's bit                            1(1) 2(0) 3(0)
        //   4      miss: hand clears 1, evicts 2, 4 takes its
        //          frame, hand moves past 4                    3(0) 1(0) 4(0)
        //   1      hit                                         3(0) 1(1) 4(0)
        //   5      miss: evicts 3 (bit clear at the hand)      1(1) 4(0) 5(0)
        //   2      miss: clears 1, evicts 4                    5(0) 1(0) 2(0)
        //   1      hit                                         5(0) 1(1) 2(0)
        let mut clock = Clock::new(3, 0);
        let outcome = run_pages(&mut clock, &[1, 2, 3, 1, 4, 1, 5, 2, 1]);
        assert_eq!(
            hits(&outcome),
            vec![false, false, false, true, false, true, false, false, true]
        );
        assert_eq!(
            evictions(&outcome),
            vec![
                vec![],
                vec![],
                vec![],
                vec![],
                vec![2],
                vec![],
                vec![3],
                vec![4],
                vec![]
            ]
        );
        assert_eq!(clock.from_hand(), vec![(5, false), (1, true), (2, false)]);
    }

    #[test]
    fn all_bits_set_degrades_to_fifo() {
        // capacity 2: 1 2 1 2 sets both bits; 3 clears 1 and 2, wraps and evicts 1.
        //   frames from the hand after 3: 2(0) 3(0)
        let mut clock = Clock::new(2, 0);
        let outcome = run_pages(&mut clock, &[1, 2, 1, 2, 3]);
        assert_eq!(hits(&outcome), vec![false, false, true, true, false]);
        assert_eq!(evictions(&outcome)[4], vec![1]);
        assert_eq!(clock.from_hand(), vec![(2, false), (3, false)]);
    }
}
