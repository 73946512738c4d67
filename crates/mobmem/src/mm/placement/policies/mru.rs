//! MRU: evict the most recently used page.
//!
//! The policy that suits a loop larger than memory, where the page just used is the one
//! needed last; see H.-T. Chou and D. J. DeWitt, "An evaluation of buffer management
//! strategies for relational database systems", VLDB 1985, which recommends it for such
//! sequential scans.
//!
//! ```text
//! on access(p):
//!   if p resident: move p to the front; hit
//!   else: while full, evict the front; insert p at the front; miss
//! ```
//! libCacheSim's `MRU` (commit aa0fc409, `cache/eviction/MRU.c`): one queue in recency
//! order whose head is evicted. Eviction comes before the new page is linked, so the
//! victim is the page of the previous access, not the one being brought in. Per page:
//! two `u32` links. With sizes in bytes, the front is evicted until the new page fits.

use super::queued::{OnHit, OneQueue, OneQueueRule};
use super::queues::Queue;
use crate::trace::PageId;

/// MRU's rule: LRU's recency order, evicted from the other end.
#[derive(Debug, Clone, Copy, Default)]
pub struct MostRecent;

impl OneQueueRule for MostRecent {
    const ON_HIT: OnHit = OnHit::MoveToFront;

    #[inline]
    fn evict(&mut self, queue: &mut Queue, _marks: &mut [bool]) -> Option<PageId> {
        let front = queue.front()?;
        queue.remove(front);
        Some(front)
    }
}

pub type Mru = OneQueue<MostRecent>;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mm::placement::policies::testing::{engine, evictions, hit_pattern, run_pages};

    #[test]
    fn evicts_the_most_recently_used() {
        // capacity 3:
        //   1 2 3   three misses                     [3 2 1]
        //   4       miss, evicts 3 (most recent)     [4 2 1]
        //   1       hit                              [1 4 2]
        //   5       miss, evicts 1                   [5 4 2]
        //   2 4     hits                             [4 2 5]
        let mut mru = engine(Mru::new(0), 3);
        let outcome = run_pages(&mut mru, &[1, 2, 3, 4, 1, 5, 2, 4]);
        assert_eq!(hit_pattern(&outcome), "mmmmhmhh");
        assert_eq!(
            evictions(&outcome),
            vec![
                vec![],
                vec![],
                vec![],
                vec![3],
                vec![],
                vec![1],
                vec![],
                vec![]
            ]
        );
        assert_eq!(mru.policy().order(), vec![4, 2, 5]);
    }

    #[test]
    fn matches_a_plain_mru_and_beats_lru_on_a_loop() {
        // A second implementation: resident pages with the time of their last use, the
        // latest evicted. On a loop of 5 pages over 4 frames LRU misses every access.
        let plain = |trace: &[PageId], capacity: usize| -> String {
            let mut resident: Vec<(PageId, usize)> = Vec::new();
            let mut out = String::new();
            for (t, &p) in trace.iter().enumerate() {
                if let Some(k) = resident.iter().position(|&(q, _)| q == p) {
                    resident[k].1 = t;
                    out.push('h');
                    continue;
                }
                if resident.len() == capacity {
                    let latest = (0..resident.len()).max_by_key(|&k| resident[k].1).unwrap();
                    resident.remove(latest);
                }
                resident.push((p, t));
                out.push('m');
            }
            out
        };
        let looped: Vec<PageId> = (0..10).flat_map(|_| 0..5u32).collect();
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let random: Vec<PageId> = (0..5_000)
            .map(|_| {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                (state % 61) as PageId
            })
            .collect();
        for (trace, capacity) in [(&looped, 4), (&random, 1), (&random, 17), (&random, 60)] {
            let mut mru = engine(Mru::new(0), capacity);
            let ours = hit_pattern(&run_pages(&mut mru, trace));
            assert_eq!(ours, plain(trace, capacity), "capacity {capacity}");
        }
        let mut mru = engine(Mru::new(0), 4);
        let misses = hit_pattern(&run_pages(&mut mru, &looped))
            .matches('m')
            .count();
        assert!(misses < looped.len() / 2, "{misses} misses");
    }
}
