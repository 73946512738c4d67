//! LFU: evict the resident page used the fewest times since it was brought in; among
//! those, the least recently used.
//!
//! A classic of the paging literature, studied for instance by R. L. Mattson, J. Gecsei,
//! D. R. Slutz and I. L. Traiger, "Evaluation techniques for storage hierarchies", IBM
//! Systems Journal 9(2), 1970. The constant-time structure below, pages grouped in
//! buckets of equal count kept in increasing order, is that of K. Shah, A. Mitra and
//! D. Matani, "An O(1) algorithm for implementing the LFU cache eviction scheme", 2010.
//!
//! ```text
//! on access(p):
//!   if p resident: count[p] += 1; hit
//!   else:
//!     while full: evict the page of least count, the least recently used among them
//!     count[p] = 1; miss
//! ```
//! The variant is libCacheSim's `LFU` (commit aa0fc409, `cache/eviction/LFU.c`):
//! counts are of accesses while resident, and are forgotten on eviction (a page that
//! comes back starts again at 1, "in-cache LFU"); ties go to the page that reached its
//! count first, which, since every access raises the count, is the page whose last
//! access is the oldest. The page just brought in is never the victim: eviction comes
//! first. On libCacheSim's CloudPhysics trace this gives its miss ratios to the four
//! decimals printed (`tests/policies_libcachesim.rs`).
//!
//! Buckets: one per count held by some resident page, in a doubly linked list from the
//! lowest count up, each with the list of its pages from most to least recently used.
//! A hit moves the page to the bucket of the next count, making it if missing; a bucket
//! left empty is unlinked and its slot reused. Every step is O(1).
//!
//! Per page: two `u32` links and the `u32` slot of its bucket; per bucket: its count, its
//! page list and two `u32` links. With sizes in bytes, as libCacheSim's: the least
//! frequent pages go until the new page fits.

use slab::Slab;

use crate::core::ensure_index;
use crate::core::list::{Links, List};
use crate::mm::placement::engine::Memory;
use crate::mm::placement::{CachePolicy, Effects, Request, Tier};
use crate::trace::PageId;

/// No bucket: the page is not resident, or a bucket link is at an end.
const NONE: u32 = u32::MAX;

/// The resident pages of one access count.
#[derive(Debug, Clone)]
struct Bucket {
    count: u64,
    /// Front = most recently used.
    pages: List,
    /// Neighbours in increasing count.
    lower: u32,
    higher: u32,
}

/// Which page of the least count an eviction takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ties {
    /// The one that reached its count first: the least recently used (LFU).
    LeastRecent,
    /// The one that reached its count last: the most recently used (CR-LFU, see
    /// [`super::cr_lfu`]).
    MostRecent,
}

#[derive(Debug, Clone)]
pub struct Lfu {
    ties: Ties,
    links: Links,
    /// The buckets in use, by slot.
    buckets: Slab<Bucket>,
    /// The bucket of least count.
    lowest: u32,
    bucket_of: Vec<u32>,
}

impl Lfu {
    pub fn new(page_count_hint: usize) -> Self {
        Self::with_ties(Ties::LeastRecent, page_count_hint)
    }

    pub fn with_ties(ties: Ties, page_count_hint: usize) -> Self {
        Lfu {
            ties,
            links: Links::with_pages(page_count_hint),
            buckets: Slab::new(),
            lowest: NONE,
            bucket_of: vec![NONE; page_count_hint],
        }
    }

    /// Resident pages by count, lowest first: `(count, pages from most to least
    /// recently used)`.
    pub fn by_count(&self) -> Vec<(u64, Vec<PageId>)> {
        let mut out = Vec::new();
        let mut at = self.lowest;
        while at != NONE {
            let bucket = &self.buckets[at as usize];
            out.push((bucket.count, self.links.iter(&bucket.pages).collect()));
            at = bucket.higher;
        }
        out
    }

    /// The page an eviction would take now.
    pub fn victim(&self) -> Option<PageId> {
        let pages = &self.buckets.get(self.lowest as usize)?.pages;
        match self.ties {
            Ties::LeastRecent => pages.back(),
            Ties::MostRecent => pages.front(),
        }
    }

    /// Bring into the cache what the next eviction reads first: the next victim's bucket
    /// entry, links and page table entry, and the links of the page that then takes its place at the end of
    /// its bucket (found in the victim's links, which the eviction before has just
    /// written). A hint, for the end of an eviction.
    #[inline]
    pub fn prefetch_victim(&self, mem: &Memory) {
        let Some(victim) = self.victim() else {
            return;
        };
        mem.pages().prefetch(victim);
        crate::core::prefetch::prefetch(&self.bucket_of, victim as usize);
        self.links.prefetch(victim);
        let after = match self.ties {
            Ties::LeastRecent => self.links.prev_of(victim),
            Ties::MostRecent => self.links.next_of(victim),
        };
        if let Some(after) = after {
            self.links.prefetch(after);
        }
    }

    /// The count of resident `page` (`None`: not resident).
    pub fn count_of(&self, page: PageId) -> Option<u64> {
        match self.bucket_of.get(page as usize) {
            Some(&slot) if slot != NONE => Some(self.buckets[slot as usize].count),
            _ => None,
        }
    }

    /// Link the admitted `page` with `count` uses (at least 1) already, as the most
    /// recent page of that count: a count remembered from before the page left, as
    /// CACHEUS's CR-LFU takes it back ([`super::cacheus`]). Walks the buckets below
    /// `count`.
    pub fn insert_counted(&mut self, page: PageId, count: u64) {
        ensure_index(&mut self.bucket_of, page, NONE);
        let (mut lower, mut at) = (NONE, self.lowest);
        while at != NONE && self.buckets[at as usize].count < count {
            lower = at;
            at = self.buckets[at as usize].higher;
        }
        let slot = if at != NONE && self.buckets[at as usize].count == count {
            at
        } else {
            self.new_bucket(count, lower, at)
        };
        self.link_page(page, slot);
    }

    /// A bucket for `count`, linked between `lower` and `higher` (either may be
    /// [`NONE`]).
    fn new_bucket(&mut self, count: u64, lower: u32, higher: u32) -> u32 {
        let bucket = Bucket {
            count,
            pages: List::new(),
            lower,
            higher,
        };
        let slot = self.buckets.insert(bucket) as u32;
        match lower {
            NONE => self.lowest = slot,
            _ => self.buckets[lower as usize].higher = slot,
        }
        if higher != NONE {
            self.buckets[higher as usize].lower = slot;
        }
        slot
    }

    /// Take `page` out of its bucket `slot`, dropping the bucket if it empties.
    fn unlink_page(&mut self, page: PageId, slot: u32) {
        let bucket = &mut self.buckets[slot as usize];
        self.links.remove(&mut bucket.pages, page);
        if !bucket.pages.is_empty() {
            return;
        }
        let (lower, higher) = (bucket.lower, bucket.higher);
        match lower {
            NONE => self.lowest = higher,
            _ => self.buckets[lower as usize].higher = higher,
        }
        if higher != NONE {
            self.buckets[higher as usize].lower = lower;
        }
        self.buckets.remove(slot as usize);
    }

    fn link_page(&mut self, page: PageId, slot: u32) {
        self.links
            .push_front(&mut self.buckets[slot as usize].pages, page);
        self.bucket_of[page as usize] = slot;
    }
}

impl CachePolicy for Lfu {
    #[inline]
    fn hit(&mut self, req: &Request, _mem: &Memory, _out: &mut Effects) {
        let page = req.page;
        let slot = self.bucket_of[page as usize];
        let Bucket { count, higher, .. } = self.buckets[slot as usize];
        let next = if higher != NONE && self.buckets[higher as usize].count == count + 1 {
            higher
        } else {
            self.new_bucket(count + 1, slot, higher)
        };
        self.unlink_page(page, slot);
        self.link_page(page, next);
    }

    #[inline]
    fn evict(&mut self, _req: &Request, mem: &Memory, out: &mut Effects) {
        let Some(victim) = self.victim() else {
            return;
        };
        self.unlink_page(victim, self.lowest);
        self.bucket_of[victim as usize] = NONE;
        out.evict(victim);
        self.prefetch_victim(mem);
    }

    #[inline]
    fn insert(&mut self, req: &Request, _mem: &Memory, _out: &mut Effects) -> Tier {
        ensure_index(&mut self.bucket_of, req.page, NONE);
        let first = match self.lowest {
            NONE => self.new_bucket(1, NONE, NONE),
            lowest if self.buckets[lowest as usize].count == 1 => lowest,
            lowest => self.new_bucket(1, NONE, lowest),
        };
        self.link_page(req.page, first);
        Tier::Dram
    }

    fn remove(&mut self, page: PageId, _mem: &Memory) {
        let slot = self.bucket_of[page as usize];
        if slot != NONE {
            self.unlink_page(page, slot);
            self.bucket_of[page as usize] = NONE;
        }
    }

    fn holds(&self, page: PageId) -> Option<Tier> {
        super::held_unless(&self.bucket_of, page, NONE)
    }

    #[inline]
    fn prefetch(&self, page: PageId, _mem: &Memory) {
        self.links.prefetch(page);
        crate::core::prefetch::prefetch(&self.bucket_of, page as usize);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mm::placement::policies::testing::*;

    #[test]
    fn a_page_inserted_with_a_count_joins_its_bucket_as_the_most_recent() {
        // 1 2 with count 1; 3 with count 3 (a new bucket above); 4 with count 2
        // (between); 5 with count 3 (the existing bucket, in front of 3); 6 with count
        // 1 (below them all once 1 and 2 are gone).
        let mut lfu = Lfu::with_ties(Ties::MostRecent, 0);
        for (page, count) in [(1, 1), (2, 1), (3, 3), (4, 2), (5, 3)] {
            lfu.insert_counted(page, count);
        }
        assert_eq!(
            lfu.by_count(),
            vec![(1, vec![2, 1]), (2, vec![4]), (3, vec![5, 3])]
        );
        assert_eq!(lfu.victim(), Some(2));
        assert_eq!((lfu.count_of(5), lfu.count_of(9)), (Some(3), None));
        for page in [1, 2] {
            let slot = lfu.bucket_of[page as usize];
            lfu.unlink_page(page, slot);
            lfu.bucket_of[page as usize] = NONE;
        }
        lfu.insert_counted(6, 1);
        assert_eq!(
            lfu.by_count(),
            vec![(1, vec![6]), (2, vec![4]), (3, vec![5, 3])]
        );
    }

    #[test]
    fn evicts_least_frequent_then_least_recent() {
        // capacity 3, buckets written count: [pages, most recent first]:
        //   1 2 3   misses                           1: [3 2 1]
        //   1 1 2   hits                             1: [3]  2: [2]  3: [1]
        //   4       miss: evict 3 (count 1)          1: [4]  2: [2]  3: [1]
        //   4       hit: count 2, after 2            2: [4 2]  3: [1]
        //   5       miss: count 2 ties 2 and 4; 2 was used longer ago: evict 2
        //                                            1: [5]  2: [4]  3: [1]
        //   3       miss: 3's count was forgotten; evict 5 (count 1)
        //                                            1: [3]  2: [4]  3: [1]
        let mut lfu = engine(Lfu::new(0), 3);
        let outcome = run_pages(&mut lfu, &[1, 2, 3, 1, 1, 2, 4, 4, 5, 3]);
        assert_eq!(hit_pattern(&outcome), "mmmhhhmhmm");
        assert_eq!(eviction_steps(&outcome), vec![(6, 3), (8, 2), (9, 5)]);
        assert_eq!(
            lfu.policy().by_count(),
            vec![(1, vec![3]), (2, vec![4]), (3, vec![1])]
        );
        assert_eq!(lfu.memory().used_total(), 3);
    }

    #[test]
    fn a_page_never_reused_goes_before_any_reused_one() {
        // capacity 2: 1 1 1 gives 1 a count of 3; then 2 3 4 5 each evict the previous
        // newcomer (count 1), never 1.
        let mut lfu = engine(Lfu::new(0), 2);
        let outcome = run_pages(&mut lfu, &[1, 1, 1, 2, 3, 4, 5, 1]);
        check_outcome(&outcome, "mhhmmmmh", &[2, 3, 4]);
        assert_eq!(lfu.policy().by_count(), vec![(1, vec![5]), (4, vec![1])]);
    }

    /// LFU as a scan over the resident pages with their counts and last-use times, ties
    /// to the least or the most recently used.
    fn reference(ties: Ties, capacity: usize, trace: &[PageId]) -> Vec<(bool, Option<PageId>)> {
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
                    // The later use sorts first with ties to the most recent.
                    let recency = |time: usize| match ties {
                        Ties::LeastRecent => time as i64,
                        Ties::MostRecent => -(time as i64),
                    };
                    let at = (0..resident.len())
                        .min_by_key(|&i| (resident[i].1, recency(resident[i].2)))
                        .unwrap();
                    victim = Some(resident.swap_remove(at).0);
                }
                resident.push((page, 1, time));
                (false, victim)
            })
            .collect()
    }

    /// Both tie-breaks: LFU's and CR-LFU's ([`super::super::cr_lfu`]).
    #[test]
    fn agrees_with_a_scan_on_skewed_traces() {
        for (seed, ties) in (0..40u64).map(|s| {
            let ties = [Ties::LeastRecent, Ties::MostRecent][(s % 2) as usize];
            (s / 2, ties)
        }) {
            let capacity = 1 + (seed as usize % 7) * 3;
            let trace = hot_and_cold(seed, 3000, 5, 60);
            let outcome = run_pages(&mut engine(Lfu::with_ties(ties, 0), capacity), &trace);
            let ours: Vec<(bool, Option<PageId>)> = hits(&outcome)
                .into_iter()
                .zip(evictions(&outcome))
                .map(|(hit, evicted)| (hit, evicted.first().copied()))
                .collect();
            assert_eq!(
                ours,
                reference(ties, capacity, &trace),
                "seed {seed} {ties:?}"
            );
        }
    }
}
