//! LFUDA: LFU with dynamic aging. A page's priority is its count of uses plus the
//! memory's age, the priority of the last page evicted, so that pages once popular but
//! no longer used age out instead of staying for ever.
//!
//! Source: M. Arlitt, L. Cherkasova, J. Dilley, R. Friedrich and T. Jin, "Evaluating
//! content management techniques for Web proxy caches", ACM SIGMETRICS Performance
//! Evaluation Review 27(4), 2000. The variant is libCacheSim's `LFUDA` (commit aa0fc409,
//! `cache/eviction/LFUDA.c`), whose rules differ from the paper's `K = F + L` in how a
//! hit raises a page's priority; they are kept here so that counts are libCacheSim's:
//!
//! ```text
//! L = 0                                   the age: the priority of the last victim
//! on access(p):
//!   if p resident: pri[p] += L; move p to the back of bucket pri[p]; hit
//!   else:
//!     while full:
//!       victim = front of the bucket of least priority; L = pri[victim]; evict it
//!     pri[p] = L + 1; put p at the back of bucket pri[p]; miss
//! ```
//! Until the first eviction L is 0, a hit leaves the priority as it is and only moves
//! the page to the back of its bucket, so the policy is LRU until memory first fills.
//! The bucket of least priority is found as libCacheSim finds it: after the least
//! bucket empties, the next non-empty bucket above it, up to the highest priority a hit
//! has given (a page inserted above that is not found there); with L at 0 or 1 it is
//! bucket 1. Where that bucket is empty (every filled bucket lies above the highest
//! priority a hit gave, so the search left the least on an empty one) eviction takes
//! from the lowest filled bucket; no filled bucket lies below the least, so elsewhere
//! that is the same bucket. Buckets are an ordered map from priority to a list, holding
//! only buckets with pages, so the search is a lookup instead of a walk over every
//! priority up to the highest, which is what made libCacheSim's run at 100 objects on
//! the CloudPhysics trace take more than ten minutes.
//!
//! Priorities grow by the age at each hit, so on a long trace they can pass any 64-bit
//! bound: here they stop at `u64::MAX` (pages there are taken in order of arrival),
//! where libCacheSim's signed counts would wrap. The oracle's runs match libCacheSim
//! with this rule.
//!
//! Per page: two `u32` links and its `u64` priority. With sizes in bytes, victims are
//! taken until the new page fits.

use std::collections::BTreeMap;

use crate::core::ensure_index;
use crate::core::list::{Links, List};
use crate::mm::placement::engine::Memory;
use crate::mm::placement::{CachePolicy, Effects, Request, Tier};
use crate::trace::PageId;

#[derive(Debug, Clone)]
pub struct Lfuda {
    links: Links,
    /// Per page its priority; 0 for a page not resident.
    priority: Vec<u64>,
    /// The buckets that hold a page, by priority (an emptied bucket is dropped).
    buckets: BTreeMap<u64, List>,
    /// libCacheSim's `min_freq`: L, the priority of the last victim, until the bucket
    /// search moves it.
    least: u64,
    /// libCacheSim's `max_freq`: the highest priority a hit has given.
    highest: u64,
}

impl Lfuda {
    pub fn new(page_count_hint: usize) -> Self {
        Lfuda {
            links: Links::with_pages(page_count_hint),
            priority: vec![0; page_count_hint],
            buckets: BTreeMap::new(),
            least: 0,
            highest: 0,
        }
    }

    /// The resident pages by priority, lowest first, each bucket from its front (the
    /// next victim among equals).
    pub fn by_priority(&self) -> Vec<(u64, Vec<PageId>)> {
        self.buckets
            .iter()
            .map(|(p, list)| (*p, self.links.iter(list).collect()))
            .collect()
    }

    fn append(&mut self, page: PageId, priority: u64) {
        let list = self.buckets.entry(priority).or_default();
        self.links.push_back(list, page);
        self.priority[page as usize] = priority;
    }

    /// Take `page` off its bucket; whether the bucket is left empty (false for a page on
    /// none).
    fn unlink(&mut self, page: PageId) -> bool {
        let priority = self.priority.get(page as usize).copied().unwrap_or(0);
        let Some(list) = self.buckets.get_mut(&priority) else {
            return false;
        };
        if !self.links.is_on(list, page) {
            return false;
        }
        self.links.remove(list, page);
        let emptied = list.is_empty();
        if emptied {
            self.buckets.remove(&priority);
        }
        emptied
    }

    /// libCacheSim's `update_min_freq`: the next non-empty bucket above the least, up to
    /// the highest priority a hit gave; the least stays where it is if there is none.
    fn raise_least(&mut self) {
        if self.least >= self.highest {
            return;
        }
        if let Some((&next, _)) = self
            .buckets
            .range(self.least.saturating_add(1)..=self.highest)
            .next()
        {
            self.least = next;
        }
    }
}

impl CachePolicy for Lfuda {
    #[inline]
    fn hit(&mut self, req: &Request, _mem: &Memory, _out: &mut Effects) {
        let old = self.priority[req.page as usize];
        // A hit adds the age, so priorities can double with each hit: they stop at the
        // largest (libCacheSim's 64-bit signed counts would wrap).
        let new = old.saturating_add(self.least);
        self.highest = self.highest.max(new);
        let emptied = self.unlink(req.page);
        if emptied && self.least == old {
            self.raise_least();
        }
        self.append(req.page, new);
    }

    fn evict(&mut self, _req: &Request, _mem: &Memory, out: &mut Effects) {
        // No filled bucket lies below the least, so the lowest filled bucket is the
        // least's wherever that one holds a page.
        let Some((&bucket, list)) = self.buckets.first_key_value() else {
            return;
        };
        let victim = list.front().expect("a kept bucket has a page");
        self.least = bucket;
        if self.unlink(victim) {
            self.raise_least();
        }
        self.priority[victim as usize] = 0;
        out.evict(victim);
    }

    fn insert(&mut self, req: &Request, _mem: &Memory, _out: &mut Effects) -> Tier {
        ensure_index(&mut self.priority, req.page, 0);
        self.append(req.page, self.least.saturating_add(1));
        Tier::Dram
    }

    fn remove(&mut self, page: PageId, _mem: &Memory) {
        let Some(&priority) = self.priority.get(page as usize) else {
            return;
        };
        if self.unlink(page) && priority == self.least {
            self.raise_least();
        }
        self.priority[page as usize] = 0;
    }

    fn holds(&self, page: PageId) -> Option<Tier> {
        let priority = *self.priority.get(page as usize)?;
        let list = self.buckets.get(&priority)?;
        (priority != 0 && self.links.is_on(list, page)).then_some(Tier::Dram)
    }

    #[inline]
    fn prefetch(&self, page: PageId) {
        self.links.prefetch(page);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mm::placement::policies::testing::{engine, evictions, hit_pattern, run_pages};

    #[test]
    fn ages_out_pages_once_popular() {
        // capacity 2, worked by hand:
        //   1 2      misses, L = 0: both priority 1       bucket 1: [1 2]
        //   1        hit with L = 0: stays 1, moves back  bucket 1: [2 1]
        //   3        miss: victim 2 (front of bucket 1), L = 1; 3 gets 2
        //                                                  1: [1]   2: [3]
        //   3        hit: 2 + L(1) = 3; highest 3          1: [1]   3: [3]
        //   4        miss: victim 1, L = 1; bucket 1 empty: least rises to 3 (the next
        //            filled bucket up to the highest); 4 gets 4     3: [3]  4: [4]
        //   5        miss: victim 3, L = 3; its bucket empties, nothing filled above up
        //            to 3: L stays 3; 5 gets 4                      4: [4 5]
        let mut lfuda = engine(Lfuda::new(0), 2);
        let outcome = run_pages(&mut lfuda, &[1, 2, 1, 3, 3, 4, 5]);
        assert_eq!(hit_pattern(&outcome), "mmhmhmm");
        let evicted: Vec<PageId> = evictions(&outcome).into_iter().flatten().collect();
        assert_eq!(evicted, vec![2, 1, 3]);
        assert_eq!(lfuda.policy().by_priority(), vec![(4, vec![4, 5])]);
    }
}
