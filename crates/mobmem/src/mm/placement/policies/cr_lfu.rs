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
//! calling `CR_LFU_init`; [`super::lfu`]'s tests hold both tie-breaks, access by
//! access, to a scan over the resident pages.
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
    use crate::mm::placement::policies::testing::*;

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
}
