//! CR-LFU, churn-resistant LFU: evict the resident page used the fewest times since it
//! was brought in; among those, the most recently used.
//!
//! Source: L. V. Rodriguez, F. Yusuf, S. Lyons, E. Paz, R. Rangaswami, J. Liu, M. Zhao
//! and G. Narasimhan, "Learning Cache Replacement with CACHEUS", FAST 2021, section 4,
//! where it is one of CACHEUS's two experts: when many pages of equal count compete for
//! too little memory (churn), keeping the older ones keeps some of them long enough to
//! be hit, where LRU's tie-break would keep none.
//!
//! ```text
//! on access(p):
//!   if p resident: count[p] += 1; hit
//!   else:
//!     while full: evict the page of least count, the most recently used among them
//!     count[p] = 1; miss
//! ```
//! The variant is libCacheSim's `CR_LFU` (commit aa0fc409, `cache/eviction/CR_LFU.c`)
//! on its own, without the other expert CACHEUS pairs it with: a page inserted or hit
//! goes to the end of its count's list, and the victim is the end of the lowest count's
//! list, the page that reached that count last. Counts are forgotten on eviction, and
//! eviction comes before the new page is linked, as in [`super::lfu`], whose buckets it
//! shares with the other tie-break. libCacheSim's `cachesim` does not name it; its miss
//! ratios in `tests/policies_libcachesim.rs` come from `cachesim` with one more name
//! calling `CR_LFU_init`.
//!
//! Per page: two `u32` links and the `u32` slot of its bucket. With sizes in bytes, the
//! least frequent, most recent pages go until the new page fits.

use super::lfu::{Lfu, Ties};

/// CR-LFU: [`Lfu`]'s buckets, ties to the most recent.
pub fn new(page_count_hint: usize) -> Lfu {
    Lfu::with_ties(Ties::MostRecent, page_count_hint)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::mix64;
    use crate::mm::placement::policies::testing::*;
    use crate::trace::PageId;

    #[test]
    fn evicts_least_frequent_then_most_recent() {
        // capacity 3, buckets written count: [pages, most recent first]:
        //   1 2 3   misses                           1: [3 2 1]
        //   1 1 2   hits                             1: [3]  2: [2]  3: [1]
        //   4       miss: evict 3 (count 1)          1: [4]  2: [2]  3: [1]
        //   4       hit: count 2                     2: [4 2]  3: [1]
        //   5       miss: count 2 ties 2 and 4; 4 reached it last: evict 4
        //                                            1: [5]  2: [2]  3: [1]
        //   6       miss: evict 5, the only page of count 1
        //                                            1: [6]  2: [2]  3: [1]
        //   2       hit                              1: [6]  3: [2 1]
        let mut lfu = engine(new(0), 3);
        let outcome = run_pages(&mut lfu, &[1, 2, 3, 1, 1, 2, 4, 4, 5, 6, 2]);
        assert_eq!(hit_pattern(&outcome), "mmmhhhmhmmh");
        assert_eq!(eviction_steps(&outcome), vec![(6, 3), (8, 4), (9, 5)]);
        assert_eq!(lfu.policy().by_count(), vec![(1, vec![6]), (3, vec![2, 1])]);
    }

    /// CR-LFU as a scan over the resident pages with their counts and last-use times.
    fn reference(capacity: usize, trace: &[PageId]) -> Vec<(bool, Option<PageId>)> {
        let mut resident: Vec<(PageId, u64, usize)> = Vec::new();
        trace
            .iter()
            .enumerate()
            .map(|(time, &page)| {
                if let Some(entry) = resident.iter_mut().find(|e| e.0 == page) {
                    entry.1 += 1;
                    entry.2 = time;
                    return (true, None);
                }
                let mut victim = None;
                if resident.len() >= capacity {
                    let at = (0..resident.len())
                        .min_by_key(|&i| (resident[i].1, std::cmp::Reverse(resident[i].2)))
                        .unwrap();
                    victim = Some(resident.swap_remove(at).0);
                }
                resident.push((page, 1, time));
                (false, victim)
            })
            .collect()
    }

    #[test]
    fn agrees_with_a_scan_on_skewed_traces() {
        for seed in 0..20u64 {
            let capacity = 1 + (seed as usize % 7) * 3;
            let trace: Vec<PageId> = (0..3000u64)
                .map(|i| {
                    let x = mix64(seed * 1_000_003 + i);
                    if x.is_multiple_of(3) {
                        (x >> 8) as PageId % 5
                    } else {
                        (x >> 8) as PageId % 60
                    }
                })
                .collect();
            let outcome = run_pages(&mut engine(new(0), capacity), &trace);
            let ours: Vec<(bool, Option<PageId>)> = hits(&outcome)
                .into_iter()
                .zip(evictions(&outcome))
                .map(|(hit, evicted)| (hit, evicted.first().copied()))
                .collect();
            assert_eq!(ours, reference(capacity, &trace), "seed {seed}");
        }
    }
}
