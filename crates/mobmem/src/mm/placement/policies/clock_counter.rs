//! CLOCK with an n-bit counter a page: each hit raises the page's count up to 2^n - 1,
//! and the hand spares a page as many times as its count before evicting it.
//!
//! The generalisation of CLOCK's one reference bit that frequency-aware CLOCK variants
//! use (the "GCLOCK" of A. J. Smith, "Sequentiality and prefetching in database
//! systems", ACM TODS 3(3), 1978, counts references the same way). The variant is
//! libCacheSim's `Clock` with `n-bit-counter=N` (commit aa0fc409,
//! `cache/eviction/Clock.c`), named `Clock-N` there:
//!
//! ```text
//! on access(p):
//!   if p resident: count[p] = min(count[p] + 1, 2^n - 1); hit
//!   else:
//!     while full:
//!       while count[tail] >= 1: count[tail] -= 1; move the tail to the head
//!       evict the tail
//!     count[p] = 0; insert p at the head; miss
//! ```
//! With one bit this is [`super::clock::Clock`] (a test checks that the two agree). A
//! page loses one from its count each time the hand passes it, so the search for a victim
//! ends within 2^n - 1 revolutions. Per page: two `u32` links and one byte.

use super::queues::Queue;
use crate::core::ensure_index;
use crate::mm::placement::engine::Memory;
use crate::mm::placement::{CachePolicy, Effects, Request, Tier};
use crate::trace::PageId;

#[derive(Debug, Clone)]
pub struct ClockCounter {
    queue: Queue,
    counts: Vec<u8>,
    most: u8,
}

impl ClockCounter {
    /// A CLOCK whose counters have `bits` bits (1 to 8).
    pub fn new(bits: u32, page_count_hint: usize) -> Self {
        let bits = bits.clamp(1, 8);
        ClockCounter {
            queue: Queue::new(page_count_hint),
            counts: vec![0; page_count_hint],
            most: ((1u32 << bits) - 1) as u8,
        }
    }

    /// The pages from the head (newest) to the tail (at the hand), each with its count.
    pub fn counted(&self) -> Vec<(PageId, u8)> {
        self.queue
            .iter()
            .map(|p| (p, self.counts[p as usize]))
            .collect()
    }
}

impl CachePolicy for ClockCounter {
    #[inline]
    fn hit(&mut self, req: &Request, _mem: &Memory, _out: &mut Effects) {
        let count = &mut self.counts[req.page as usize];
        if *count < self.most {
            *count += 1;
        }
    }

    #[inline]
    fn evict(&mut self, _req: &Request, mem: &Memory, out: &mut Effects) {
        while let Some(tail) = self.queue.back() {
            let count = &mut self.counts[tail as usize];
            if *count >= 1 {
                *count -= 1;
                self.queue.move_to_front(tail);
            } else {
                self.queue.remove(tail);
                out.evict(tail);
                break;
            }
        }
        if let Some(next) = self.queue.back() {
            self.queue.prefetch_from(next, mem, &self.counts);
        }
    }

    #[inline]
    fn insert(&mut self, req: &Request, _mem: &Memory, _out: &mut Effects) -> Tier {
        ensure_index(&mut self.counts, req.page, 0);
        self.counts[req.page as usize] = 0;
        self.queue.push_front(req.page);
        Tier::Dram
    }

    fn remove(&mut self, page: PageId, _mem: &Memory) {
        self.queue.remove(page);
    }

    fn holds(&self, page: PageId) -> Option<Tier> {
        self.queue.holds(page)
    }

    #[inline]
    fn prefetch(&self, page: PageId, _mem: &Memory) {
        self.queue.prefetch(page);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mm::placement::policies::clock::Clock;
    use crate::mm::placement::policies::testing::{engine, evictions, hit_pattern, run_pages};

    #[test]
    fn a_page_hit_twice_survives_two_passes_of_the_hand() {
        // 2 bits, capacity 2:
        //   1 2        misses                          head [2:0 1:0]
        //   1 1 1      hits: 1 counts 1, 2, 3          head [2:0 1:3]
        //   3          miss: 1 is at the tail with 3: spared (2), moved to the head;
        //              2 (count 0) is evicted          head [3:0 1:2]
        //   4          miss: 1 spared again (1); 3 evicted   [4:0 1:1]
        //   5          miss: 1 spared (0); 4 evicted         [5:0 1:0]
        //   6          miss: 1 evicted                       [6:0 5:0]
        let mut clock = engine(ClockCounter::new(2, 0), 2);
        let outcome = run_pages(&mut clock, &[1, 2, 1, 1, 1, 3, 4, 5, 6]);
        assert_eq!(hit_pattern(&outcome), "mmhhhmmmm");
        let evicted: Vec<PageId> = evictions(&outcome).into_iter().flatten().collect();
        assert_eq!(evicted, vec![2, 3, 4, 1]);
        assert_eq!(clock.policy().counted(), vec![(6, 0), (5, 0)]);
    }

    #[test]
    fn one_bit_is_clock() {
        // A second implementation: with one bit the counter is CLOCK's reference bit.
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let trace: Vec<PageId> = (0..20_000)
            .map(|_| {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                (state % 97) as PageId
            })
            .collect();
        for capacity in [1, 7, 40, 96] {
            let mut counter = engine(ClockCounter::new(1, 0), capacity);
            let mut clock = engine(Clock::new(0), capacity);
            assert_eq!(
                run_pages(&mut counter, &trace),
                run_pages(&mut clock, &trace),
                "capacity {capacity}"
            );
        }
    }
}
