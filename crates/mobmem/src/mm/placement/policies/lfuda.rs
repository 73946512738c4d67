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
//! from the lowest filled bucket; elsewhere that is the same bucket, unless a hit put its
//! page below the least the search had just moved past it to (then eviction takes from
//! there and the least goes back down to it).
//!
//! Buckets hold only pages (an emptied bucket is dropped), so the search is not a walk
//! over every priority up to the highest, which is what made libCacheSim's run at 100
//! objects on the CloudPhysics trace take more than ten minutes. Most hits move their
//! page into a bucket of a new priority and empty the one it left (on a Zipf trace of
//! 10 M requests at 76k pages, two hits in three, over about 5,000 buckets), so buckets
//! are found by priority in a hash table, kept in a slab, and ordered by a binary heap
//! of their priorities for the lowest: an emptied bucket's entry stays in the heap until
//! it comes to the top or the heap, grown to twice the buckets, is rebuilt. The next
//! filled bucket above the least is the heap's lowest, save where a filled bucket lies
//! below the least; then the buckets are searched.
//!
//! Priorities grow by the age at each hit, so on a long trace they can pass any 64-bit
//! bound: here they stop at `u64::MAX` (pages there are taken in order of arrival),
//! where libCacheSim's signed counts would wrap. The oracle's runs match libCacheSim
//! with this rule.
//!
//! Per page: two `u32` links and the `u32` slot of its bucket. With sizes in bytes,
//! victims are taken until the new page fits.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use slab::Slab;

use crate::core::ensure_index;
use crate::core::list::{Links, List};
use crate::mm::placement::engine::Memory;
use crate::mm::placement::{CachePolicy, Effects, Request, Tier};
use crate::trace::PageId;

/// No bucket: a page not resident.
const NONE: u32 = u32::MAX;

/// The pages of one priority, front = the next victim among them.
/// Whether the heap's entry `(priority, slot)` names a bucket in use: a slot let go, or
/// taken since by another priority, makes it stale.
fn is_live(buckets: &Slab<Bucket>, priority: u64, slot: u32) -> bool {
    buckets
        .get(slot as usize)
        .is_some_and(|bucket| bucket.priority == priority)
}

#[derive(Debug, Clone)]
struct Bucket {
    priority: u64,
    pages: List,
}

#[derive(Debug, Clone)]
pub struct Lfuda {
    links: Links,
    /// Per page the slot of its bucket; [`NONE`] for a page not resident.
    slot_of: Vec<u32>,
    /// The buckets; one in use holds a page.
    buckets: Slab<Bucket>,
    /// The slot of each bucket in use, by priority.
    by_priority: hashbrown::HashMap<u64, u32, foldhash::fast::FixedState>,
    /// `(priority, slot)` of every bucket in use, lowest first, and of some emptied
    /// since (stale: the slot is free or holds another priority).
    order: BinaryHeap<Reverse<(u64, u32)>>,
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
            slot_of: vec![NONE; page_count_hint],
            buckets: Slab::new(),
            by_priority: hashbrown::HashMap::with_hasher(foldhash::fast::FixedState::with_seed(0)),
            order: BinaryHeap::new(),
            least: 0,
            highest: 0,
        }
    }

    /// The resident pages by priority, lowest first, each bucket from its front (the
    /// next victim among equals).
    pub fn by_priority(&self) -> Vec<(u64, Vec<PageId>)> {
        let mut out: Vec<(u64, Vec<PageId>)> = self
            .by_priority
            .iter()
            .map(|(&p, &slot)| {
                (
                    p,
                    self.links
                        .iter(&self.buckets[slot as usize].pages)
                        .collect(),
                )
            })
            .collect();
        out.sort_unstable_by_key(|(p, _)| *p);
        out
    }

    /// Whether the heap's entry `(priority, slot)` is a bucket in use.
    fn is_live(&self, priority: u64, slot: u32) -> bool {
        is_live(&self.buckets, priority, slot)
    }

    /// The bucket in use of least priority: `(priority, slot)`. Stale entries above it
    /// in the heap are dropped.
    fn lowest(&mut self) -> Option<(u64, u32)> {
        while let Some(&Reverse((priority, slot))) = self.order.peek() {
            if self.is_live(priority, slot) {
                return Some((priority, slot));
            }
            self.order.pop();
        }
        None
    }

    fn append(&mut self, page: PageId, priority: u64) {
        if self.order.len() >= 2 * self.by_priority.len() + 64 {
            // Without the stale entries, so that the heap stays near the buckets' number
            // however many were emptied.
            let buckets = &self.buckets;
            self.order
                .retain(|&Reverse((priority, slot))| is_live(buckets, priority, slot));
        }
        let slot = match self.by_priority.entry(priority) {
            hashbrown::hash_map::Entry::Occupied(entry) => *entry.get(),
            hashbrown::hash_map::Entry::Vacant(entry) => {
                let bucket = Bucket {
                    priority,
                    pages: List::new(),
                };
                let slot = self.buckets.insert(bucket) as u32;
                entry.insert(slot);
                self.order.push(Reverse((priority, slot)));
                slot
            }
        };
        self.links
            .push_back(&mut self.buckets[slot as usize].pages, page);
        self.slot_of[page as usize] = slot;
    }

    /// Take resident `page` off its bucket `slot`; whether the bucket is left empty (it
    /// is then dropped).
    fn unlink(&mut self, page: PageId, slot: u32) -> bool {
        let bucket = &mut self.buckets[slot as usize];
        self.links.remove(&mut bucket.pages, page);
        self.slot_of[page as usize] = NONE;
        if !bucket.pages.is_empty() {
            return false;
        }
        self.by_priority.remove(&bucket.priority);
        self.buckets.remove(slot as usize);
        true
    }

    /// libCacheSim's `update_min_freq`, once the least's bucket is empty: the next
    /// filled bucket above the least, up to the highest priority a hit gave; the least
    /// stays where it is if there is none.
    fn raise_least(&mut self) {
        if self.least >= self.highest {
            return;
        }
        let next = match self.lowest() {
            Some((lowest, _)) if lowest > self.least => Some(lowest),
            // A filled bucket below the least, or none.
            Some(_) => self
                .by_priority
                .keys()
                .copied()
                .filter(|&p| p > self.least)
                .min(),
            None => None,
        };
        if let Some(next) = next.filter(|&next| next <= self.highest) {
            self.least = next;
        }
    }
}

impl CachePolicy for Lfuda {
    #[inline]
    fn hit(&mut self, req: &Request, _mem: &Memory, _out: &mut Effects) {
        let page = req.page;
        let slot = self.slot_of[page as usize];
        let old = self.buckets[slot as usize].priority;
        // A hit adds the age, so priorities can double with each hit: they stop at the
        // largest (libCacheSim's 64-bit signed counts would wrap).
        let new = old.saturating_add(self.least);
        self.highest = self.highest.max(new);
        if new == old {
            // Before the first eviction: to the back of its own bucket.
            let pages = &mut self.buckets[slot as usize].pages;
            self.links.remove(pages, page);
            self.links.push_back(pages, page);
            return;
        }
        let emptied = self.unlink(page, slot);
        if emptied && self.least == old {
            self.raise_least();
        }
        self.append(page, new);
    }

    fn evict(&mut self, _req: &Request, _mem: &Memory, out: &mut Effects) {
        // The lowest filled bucket: the least's wherever that one holds a page.
        let Some((priority, slot)) = self.lowest() else {
            return;
        };
        let victim = self.buckets[slot as usize]
            .pages
            .front()
            .expect("a bucket in use has a page");
        self.least = priority;
        if self.unlink(victim, slot) {
            self.raise_least();
        }
        out.evict(victim);
    }

    fn insert(&mut self, req: &Request, _mem: &Memory, _out: &mut Effects) -> Tier {
        ensure_index(&mut self.slot_of, req.page, NONE);
        self.append(req.page, self.least.saturating_add(1));
        Tier::Dram
    }

    fn remove(&mut self, page: PageId, _mem: &Memory) {
        let slot = match self.slot_of.get(page as usize) {
            Some(&slot) if slot != NONE => slot,
            _ => return,
        };
        let priority = self.buckets[slot as usize].priority;
        if self.unlink(page, slot) && priority == self.least {
            self.raise_least();
        }
    }

    fn holds(&self, page: PageId) -> Option<Tier> {
        super::held_unless(&self.slot_of, page, NONE)
    }

    #[inline]
    fn prefetch(&self, page: PageId, _mem: &Memory) {
        self.links.prefetch(page);
        crate::core::prefetch::prefetch(&self.slot_of, page as usize);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::mix64;
    use crate::mm::placement::policies::testing::*;
    use std::collections::{BTreeMap, HashMap};

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

    #[test]
    fn a_hit_can_leave_its_page_below_the_least() {
        // capacity 2:
        //   1 2      misses: bucket 1: [1 2]
        //   3        miss: victim 1, L = 1; 3 gets 2           1: [2]   2: [3]
        //   3        hit: 2 + 1 = 3, highest 3                 1: [2]   3: [3]
        //   2        hit: 1 + 1 = 2; bucket 1 (the least's) empties before 2 is put
        //            back, so the least rises to 3: 2 lies below it   2: [2]  3: [3]
        //   3        hit: 3 + 3 = 6; the least's bucket empties again, and with bucket
        //            2 below it nothing is filled in (3, 6]: L stays 3    2: [2]  6: [3]
        //   4        miss: the lowest filled bucket is 2: victim 2, L = 2, then up to 6;
        //            4 gets 7                                   6: [3]   7: [4]
        let mut lfuda = engine(Lfuda::new(0), 2);
        let outcome = run_pages(&mut lfuda, &[1, 2, 3, 3, 2, 3]);
        assert_eq!(hit_pattern(&outcome), "mmmhhh");
        assert_eq!(lfuda.policy().least, 3);
        assert_eq!(
            lfuda.policy().by_priority(),
            vec![(2, vec![2]), (6, vec![3])]
        );
        let outcome = run_pages(&mut lfuda, &[4]);
        assert_eq!(evictions(&outcome), vec![vec![2]]);
        assert_eq!(lfuda.policy().least, 6);
        assert_eq!(
            lfuda.policy().by_priority(),
            vec![(6, vec![3]), (7, vec![4])]
        );
    }

    /// LFUDA as the module documentation writes it, over an ordered map of buckets.
    #[derive(Default)]
    struct Reference {
        priority: HashMap<PageId, u64>,
        buckets: BTreeMap<u64, Vec<PageId>>,
        least: u64,
        highest: u64,
    }

    impl Reference {
        /// Take `page` off its bucket; whether the bucket emptied.
        fn unlink(&mut self, page: PageId) -> bool {
            let priority = self.priority.remove(&page).unwrap();
            let list = self.buckets.get_mut(&priority).unwrap();
            list.retain(|&p| p != page);
            let emptied = list.is_empty();
            if emptied {
                self.buckets.remove(&priority);
            }
            emptied
        }

        fn append(&mut self, page: PageId, priority: u64) {
            self.buckets.entry(priority).or_default().push(page);
            self.priority.insert(page, priority);
        }

        fn raise_least(&mut self) {
            if self.least >= self.highest {
                return;
            }
            if let Some((&next, _)) = self.buckets.range(self.least + 1..=self.highest).next() {
                self.least = next;
            }
        }

        fn access(&mut self, page: PageId, capacity: usize) -> Vec<PageId> {
            if let Some(&old) = self.priority.get(&page) {
                let new = old.saturating_add(self.least);
                self.highest = self.highest.max(new);
                if self.unlink(page) && self.least == old {
                    self.raise_least();
                }
                self.append(page, new);
                return vec![];
            }
            let mut evicted = vec![];
            while self.priority.len() >= capacity {
                let (&bucket, list) = self.buckets.first_key_value().unwrap();
                let victim = list[0];
                self.least = bucket;
                if self.unlink(victim) {
                    self.raise_least();
                }
                evicted.push(victim);
            }
            self.append(page, self.least.saturating_add(1));
            evicted
        }

        fn remove(&mut self, page: PageId) {
            let Some(&priority) = self.priority.get(&page) else {
                return;
            };
            if self.unlink(page) && priority == self.least {
                self.raise_least();
            }
        }
    }

    #[test]
    fn agrees_with_an_ordered_map_of_buckets() {
        // Skewed traces at small capacities, with pages taken away now and then: the
        // same victims at every step and the same buckets at the end.
        for seed in 0..24u64 {
            let capacity = [1, 2, 3, 5, 8, 13, 40, 100][seed as usize % 8];
            let trace = hot_and_cold(seed, 6000, 1 + seed as PageId % 12, 150);
            let mut lfuda = engine(Lfuda::new(0), capacity);
            let mut reference = Reference::default();
            for (i, &page) in trace.iter().enumerate() {
                let outcome = run_pages(&mut lfuda, &[page]);
                let expected = reference.access(page, capacity);
                assert_eq!(evictions(&outcome)[0], expected, "seed {seed} step {i}");
                let x = mix64(seed << 32 | i as u64);
                if x.is_multiple_of(13) {
                    let gone = ((x >> 20) % 160) as PageId;
                    lfuda.remove(gone);
                    reference.remove(gone);
                }
            }
            lfuda.check_agreement().unwrap();
            let expected: Vec<(u64, Vec<PageId>)> = reference.buckets.into_iter().collect();
            assert_eq!(lfuda.policy().by_priority(), expected, "seed {seed}");
        }
    }
}
