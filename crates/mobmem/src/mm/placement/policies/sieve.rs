//! SIEVE: a FIFO queue with a visited bit and a hand that sweeps from the oldest page
//! towards the newest, keeping its place between evictions.
//!
//! Source: Y. Zhang, J. Yang, Y. Yue, Y. Vigfusson and K. V. Rashmi, "SIEVE is Simpler
//! than LRU: an Efficient Turn-Key Eviction Algorithm for Web Caches", USENIX NSDI 2024.
//!
//! ```text
//! on access(x):
//!   if x resident: visited[x] = 1; hit                   (the queue is not reordered)
//!   else: while full, evict(); insert x at the head, visited[x] = 0; miss
//!
//! evict():
//!   o = hand, or the tail if the hand is unset
//!   while visited[o] == 1:
//!     visited[o] = 0
//!     o = the page before o (towards the head), or the tail if o is the head
//!   hand = the page before o (unset if o is the head)
//!   remove o
//! ```
//! Unlike CLOCK, a surviving page stays where it is: new pages enter at the head, behind
//! the hand, so the hand meets them only after it has swept the older pages and wrapped
//! around. The sweep ends within one round, since it clears every bit it passes.
//!
//! This is libCacheSim's `Sieve` (commit aa0fc409, `cache/eviction/Sieve.c`): a new
//! page starts unvisited, a hit sets the bit (it is one bit, not a counter), and when the
//! evicted page was the head, the hand restarts at the tail. On its CloudPhysics trace it
//! gives libCacheSim's miss ratios to the four decimals printed
//! (`tests/policies_libcachesim.rs`).
//!
//! Per page: two `u32` links and one visited byte. With sizes in bytes, as libCacheSim's:
//! the sweep runs until the new page fits.

use super::queued::{OnHit, OneQueue, OneQueueRule};
use super::queues::Queue;
use crate::trace::PageId;

/// SIEVE's rule: a hit sets the page's visited bit; the queue's front is the head (newest
/// arrival), its back the tail (oldest).
#[derive(Debug, Clone, Copy, Default)]
pub struct SieveHand {
    /// Where the next eviction starts its sweep; `None` = at the tail.
    hand: Option<PageId>,
}

impl OneQueueRule for SieveHand {
    const ON_HIT: OnHit = OnHit::Mark;

    /// Sweep from the hand to the first unvisited page, clearing bits on the way, and
    /// take it.
    #[inline]
    fn evict(&mut self, queue: &mut Queue, visited: &mut [bool]) -> Option<PageId> {
        let tail = queue.back()?;
        let mut at = self.hand.unwrap_or(tail);
        while visited[at as usize] {
            visited[at as usize] = false;
            at = queue.prev_of(at).unwrap_or(tail);
        }
        self.hand = queue.prev_of(at);
        queue.remove(at);
        Some(at)
    }

    #[inline]
    fn next_look(&self, queue: &Queue) -> Option<PageId> {
        self.hand.or_else(|| queue.back())
    }

    /// As libCacheSim's: a hand on the page taken moves to the page before it.
    fn forget(&mut self, queue: &Queue, page: PageId) {
        if self.hand == Some(page) {
            self.hand = queue.prev_of(page);
        }
    }
}

pub type Sieve = OneQueue<SieveHand>;

impl Sieve {
    /// The page the next eviction's sweep starts at (`None`: the tail).
    pub fn hand(&self) -> Option<PageId> {
        self.rule().hand
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mm::placement::policies::testing::{
        check_outcome, engine, evictions, hit_pattern, run_pages,
    };

    #[test]
    fn hand_keeps_its_place_and_new_pages_wait_behind_it() {
        // capacity 3, queue written head to tail as page(bit), hand marked ^:
        //   1 2 3  misses                                       3(0) 2(0) 1(0)
        //   1      hit sets 1's bit, no reordering              3(0) 2(0) 1(1)
        //   4      miss: sweep from the tail: clear 1, evict 2;
        //          the hand stops at 3, the page before 2       4(0) 3(0)^ 1(0)
        //   1      hit                                          4(0) 3(0)^ 1(1)
        //   5      miss: the hand's 3 is unvisited: evict 3;
        //          the hand moves to 4                          5(0) 4(0)^ 1(1)
        //   6      miss: evict 4 (unvisited); 4 was next to the
        //          head 5, so the hand is at 5                  6(0) 5(0)^ 1(1)
        //   5      hit                                          6(0) 5(1)^ 1(1)
        //   7      miss: clear 5, step to 6: evict 6, which was
        //          the head: the hand is unset (back to the tail)
        //                                                       7(0) 5(0) 1(1)
        //   8      miss: the sweep starts at the tail: clear 1, step to
        //          5 (unvisited): evict 5; the hand is at 7     8(0) 7(0)^ 1(0)
        let mut sieve = engine(Sieve::new(0), 3);
        let outcome = run_pages(&mut sieve, &[1, 2, 3, 1, 4, 1, 5, 6, 5, 7, 8]);
        check_outcome(&outcome, "mmmhmhmmhmm", &[2, 3, 4, 6, 5]);
        assert_eq!(
            sieve.policy().marked(),
            vec![(8, false), (7, false), (1, false)]
        );
        assert_eq!(sieve.policy().hand(), Some(7));
        assert_eq!(sieve.memory().used_total(), 3);
    }

    #[test]
    fn all_visited_wraps_around_once() {
        // capacity 2: 1 2 1 2 sets both bits; 3 clears 1 (tail), then 2 (head), wraps to
        // the tail and evicts 1. The hand is at 2, the page before 1.
        //   after 3: 3(0) 2(0)^
        let mut sieve = engine(Sieve::new(0), 2);
        let outcome = run_pages(&mut sieve, &[1, 2, 1, 2, 3]);
        assert_eq!(hit_pattern(&outcome), "mmhhm");
        assert_eq!(evictions(&outcome)[4], vec![1]);
        assert_eq!(sieve.policy().marked(), vec![(3, false), (2, false)]);
        assert_eq!(sieve.policy().hand(), Some(2));
    }
}
