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
//! The frames form a circle in the order pages entered them, so the circle is a queue:
//! the hand's frame is its tail, the frame just behind the hand its head. Sparing a page
//! moves it from the tail to the head; a new page, put in the victim's frame with the
//! hand moved past it, enters at the head. That queue, with one reference bit a page, is
//! libCacheSim's `Clock` (commit aa0fc409, `cache/eviction/Clock.c`, one bit): it counts
//! no frames, so it runs with sizes in bytes too, evicting until the new page fits.
//!
//! ```text
//! evict():
//!   while ref[tail] == 1: ref[tail] = 0; move the tail to the head
//!   evict the tail
//! ```
//! The search ends within one revolution: after the hand clears every bit it meets, the
//! page where it started has a clear bit. Per page: two `u32` links and one bit.

use super::queued::{OnHit, OneQueue, OneQueueRule};
use super::queues::Queue;
use crate::trace::PageId;

/// CLOCK's rule: a hit sets the page's reference bit; the queue's front is the head (just
/// behind the hand), its back the tail (at the hand).
#[derive(Debug, Clone, Copy, Default)]
pub struct SecondChance;

impl OneQueueRule for SecondChance {
    const ON_HIT: OnHit = OnHit::Mark;

    #[inline]
    fn evict(&mut self, queue: &mut Queue, referenced: &mut [bool]) -> Option<PageId> {
        while let Some(tail) = queue.back() {
            if std::mem::replace(&mut referenced[tail as usize], false) {
                queue.move_to_front(tail);
            } else {
                queue.remove(tail);
                return Some(tail);
            }
        }
        None
    }
}

pub type Clock = OneQueue<SecondChance>;

impl Clock {
    /// The pages in the order the hand examines them, each with its reference bit.
    pub fn from_hand(&self) -> Vec<(PageId, bool)> {
        let mut pages = self.marked();
        pages.reverse();
        pages
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mm::placement::policies::testing::{
        engine, eviction_steps, evictions, hits, run_pages,
    };

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
        let mut clock = engine(Clock::new(0), 3);
        let outcome = run_pages(&mut clock, &[1, 2, 3, 1, 4, 1, 5, 2, 1]);
        assert_eq!(
            hits(&outcome),
            vec![false, false, false, true, false, true, false, false, true]
        );
        assert_eq!(eviction_steps(&outcome), vec![(4, 2), (6, 3), (7, 4)]);
        assert_eq!(
            clock.policy().from_hand(),
            vec![(5, false), (1, true), (2, false)]
        );
    }

    #[test]
    fn all_bits_set_degrades_to_fifo() {
        // capacity 2: 1 2 1 2 sets both bits; 3 clears 1 and 2, wraps and evicts 1.
        //   frames from the hand after 3: 2(0) 3(0)
        let mut clock = engine(Clock::new(0), 2);
        let outcome = run_pages(&mut clock, &[1, 2, 1, 2, 3]);
        assert_eq!(hits(&outcome), vec![false, false, true, true, false]);
        assert_eq!(evictions(&outcome)[4], vec![1]);
        assert_eq!(clock.policy().from_hand(), vec![(2, false), (3, false)]);
    }
}
