//! LRU-K: evict the page whose K-th most recent reference is oldest.
//!
//! Source: E. J. O'Neil, P. E. O'Neil and G. Weikum, "The LRU-K Page Replacement
//! Algorithm For Database Disk Buffering", SIGMOD 1993, section 2. libCacheSim has no
//! LRU-K (its `LRU_K.cpp` is empty at aa0fc409); this is the paper's algorithm with K = 2
//! (`lru-2`), its Correlated Reference Period 0 (every reference counts) and its
//! Retained Information Period a history of evicted pages as large as the cache (the
//! paper leaves it a parameter).
//!
//! `t` counts requests. Each page keeps the times of its last K references, `HIST`.
//!
//! ```text
//! on access(p) at t:
//!   if p not resident: if p's history is not retained, it is empty
//!                      evict while full: the resident page with the largest backward
//!                        K-distance t - HIST(q, K), a page with fewer than K references
//!                        counting as infinite (and among those, the least recently
//!                        used, the paper's subsidiary policy); its history is retained
//!                        (forgetting the oldest retained while over the cache's size)
//!   shift HIST(p): HIST(p, 1) = t
//! ```
//! So the victim is the least recently used of the pages referenced fewer than K times,
//! if any; else the page whose K-th most recent reference is the oldest. With sizes in
//! bytes the retained histories count their pages' bytes, up to the capacity.
//!
//! Per page: K `u64` times and a count, two `u32` links (the queue of pages referenced
//! fewer than K times, and of retained histories); the pages referenced K times or more
//! are in an ordered set by their K-th most recent reference.

use std::collections::BTreeSet;

use super::queues::Queues;
use crate::core::ensure_index;
use crate::mm::placement::engine::Memory;
use crate::mm::placement::{CachePolicy, Effects, Request, Tier};
use crate::trace::PageId;

/// Resident pages referenced fewer than K times, most recent first.
const YOUNG: usize = 0;
/// Evicted pages whose history is retained, newest first.
const RETAINED: usize = 1;

#[derive(Debug, Clone)]
pub struct LruK<const K: usize> {
    queues: Queues,
    /// Per page: its last K reference times, most recent first, and how many of them
    /// are real (at most K).
    history: Vec<[u64; K]>,
    references: Vec<u8>,
    /// Resident pages referenced K times or more, by (K-th most recent reference, page).
    mature: BTreeSet<(u64, PageId)>,
    is_mature: Vec<bool>,
    now: u64,
    /// How much history is retained, in the run's unit.
    retained: u64,
    from_history: bool,
}

/// LRU-2, the paper's recommended K.
pub type Lru2 = LruK<2>;

impl<const K: usize> LruK<K> {
    /// LRU-K for a memory of `capacity` units.
    pub fn new(capacity: usize, page_count_hint: usize) -> Self {
        LruK {
            queues: Queues::new(2, page_count_hint),
            history: Vec::new(),
            references: Vec::new(),
            mature: BTreeSet::new(),
            is_mature: Vec::new(),
            now: 0,
            retained: capacity.max(1) as u64,
            from_history: false,
        }
    }

    /// Record a reference to resident `page` now and put it where its history says.
    fn reference(&mut self, page: PageId, mem: &Memory) {
        let p = page as usize;
        if self.is_mature[p] {
            self.mature.remove(&(self.history[p][K - 1], page));
        }
        self.history[p].rotate_right(1);
        self.history[p][0] = self.now;
        self.now += 1;
        let n = &mut self.references[p];
        *n = (*n + 1).min(K as u8);
        if usize::from(*n) >= K {
            if !self.is_mature[p] {
                self.queues.remove(page, mem);
                self.is_mature[p] = true;
            }
            self.mature.insert((self.history[p][K - 1], page));
        } else {
            self.queues.move_to_front(YOUNG, page, mem);
        }
    }

    /// The resident pages referenced fewer than K times, most recent first.
    pub fn young(&self) -> Vec<PageId> {
        self.queues.iter(YOUNG).collect()
    }

    /// The resident pages referenced K times or more, the next victim first.
    pub fn mature(&self) -> Vec<PageId> {
        self.mature.iter().map(|&(_, p)| p).collect()
    }
}

impl<const K: usize> CachePolicy for LruK<K> {
    fn hit(&mut self, req: &Request, mem: &Memory, _out: &mut Effects) {
        self.reference(req.page, mem);
    }

    fn admit(&mut self, req: &Request, mem: &Memory, _out: &mut Effects) -> bool {
        self.from_history = self.queues.queue_of(req.page) == Some(RETAINED);
        if self.from_history {
            self.queues.remove(req.page, mem);
        }
        req.size <= mem.capacity_total()
    }

    fn evict(&mut self, _req: &Request, mem: &Memory, out: &mut Effects) {
        let victim = match self.queues.pop_back(YOUNG, mem) {
            Some(page) => page,
            None => match self.mature.pop_first() {
                Some((_, page)) => {
                    self.is_mature[page as usize] = false;
                    page
                }
                None => return,
            },
        };
        out.evict(victim);
        self.queues.remember(RETAINED, victim, self.retained, mem);
    }

    fn insert(&mut self, req: &Request, mem: &Memory, _out: &mut Effects) -> Tier {
        let page = req.page;
        ensure_index(&mut self.history, page, [0; K]);
        ensure_index(&mut self.references, page, 0);
        ensure_index(&mut self.is_mature, page, false);
        if !std::mem::take(&mut self.from_history) {
            self.references[page as usize] = 0;
        }
        self.reference(page, mem);
        Tier::Dram
    }

    fn remove(&mut self, page: PageId, mem: &Memory) {
        let p = page as usize;
        if self.is_mature.get(p).copied().unwrap_or(false) {
            self.mature.remove(&(self.history[p][K - 1], page));
            self.is_mature[p] = false;
        } else {
            self.queues.remove_from(page, &[YOUNG], mem);
        }
    }

    fn holds(&self, page: PageId) -> Option<Tier> {
        let mature = self.is_mature.get(page as usize).copied().unwrap_or(false);
        (mature || self.queues.queue_of(page) == Some(YOUNG)).then_some(Tier::Dram)
    }

    #[inline]
    fn prefetch(&self, page: PageId, _mem: &Memory) {
        self.queues.prefetch(page);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mm::placement::policies::testing::{
        engine, evictions, hit_pattern, hit_patterns, run_pages, skewed_pages,
    };
    use std::collections::{HashMap, VecDeque};

    #[test]
    fn pages_seen_once_go_before_pages_seen_twice() {
        // capacity 2, t before each access:
        //   t0 1, t1 1   1 referenced twice: HIST(1) = [1, 0]
        //   t2 2         2 once
        //   t3 3         miss: 2 is the only page seen fewer than twice: evicted
        //   t4 4         miss: 3 (seen once) is evicted, not 1, used longer ago
        let mut lru2 = engine(Lru2::new(2, 0), 2);
        let outcome = run_pages(&mut lru2, &[1, 1, 2, 3, 4]);
        assert_eq!(hit_pattern(&outcome), "mhmmm");
        assert_eq!(
            evictions(&outcome),
            vec![vec![], vec![], vec![], vec![2], vec![3]]
        );
        assert_eq!(lru2.policy().mature(), vec![1]);
        assert_eq!(lru2.policy().young(), vec![4]);
        //   t5 4         hit: HIST(4) = [5, 4]; both seen twice: 1's second-last
        //                reference (t0) is older than 4's (t4)
        //   t6 5         miss: evict 1
        let outcome = run_pages(&mut lru2, &[4, 5]);
        assert_eq!(evictions(&outcome), vec![vec![], vec![1]]);
        //   t7 1         miss, its history retained: HIST(1) = [7, 1]: seen twice, by
        //                its second-last reference (t1) the next victim, before 4 (t4);
        //                5, seen once, goes first
        let outcome = run_pages(&mut lru2, &[1]);
        assert_eq!(evictions(&outcome), vec![vec![5]]);
        assert_eq!(lru2.policy().mature(), vec![1, 4]);
    }

    /// LRU-K written plainly: resident pages in a vector, histories in a map, retained
    /// histories in a deque of at most the capacity; each eviction scans every page.
    struct PlainLruK {
        k: usize,
        capacity: usize,
        resident: Vec<PageId>,
        history: HashMap<PageId, Vec<u64>>,
        retained: VecDeque<PageId>,
        now: u64,
    }

    impl PlainLruK {
        fn access(&mut self, page: PageId) -> bool {
            let hit = self.resident.contains(&page);
            if !hit {
                match self.retained.iter().position(|&p| p == page) {
                    Some(i) => {
                        self.retained.remove(i);
                    }
                    None => {
                        self.history.insert(page, Vec::new());
                    }
                }
                if self.resident.len() >= self.capacity {
                    // The largest backward K-distance: fewer than K references first, by
                    // their last; else the oldest K-th most recent reference.
                    let key = |p: &PageId| {
                        let h = &self.history[p];
                        if h.len() < self.k {
                            (0, h[0])
                        } else {
                            (1, h[self.k - 1])
                        }
                    };
                    let at = (0..self.resident.len())
                        .min_by_key(|&i| key(&self.resident[i]))
                        .unwrap();
                    let victim = self.resident.remove(at);
                    self.retained.push_back(victim);
                    if self.retained.len() > self.capacity {
                        self.retained.pop_front();
                    }
                }
                self.resident.push(page);
            }
            let h = self.history.get_mut(&page).unwrap();
            h.insert(0, self.now);
            h.truncate(self.k);
            self.now += 1;
            hit
        }
    }

    proptest::proptest! {
        /// The same hits and misses as the plain version, access by access.
        #[test]
        fn agrees_with_a_plain_implementation(
            pages in skewed_pages(),
            capacity in 1usize..40,
        ) {
            let mut plain = PlainLruK {
                k: 2,
                capacity,
                resident: Vec::new(),
                history: HashMap::new(),
                retained: VecDeque::new(),
                now: 0,
            };
            let (ours, expected) = hit_patterns(Lru2::new(capacity, 0), capacity, &pages, |p| plain.access(p));
            proptest::prop_assert_eq!(ours, expected);
        }
    }
}
