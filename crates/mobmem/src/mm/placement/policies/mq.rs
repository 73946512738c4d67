//! MQ, the multi-queue algorithm: LRU queues by access frequency, blocks demoted a
//! queue at a time when they sit unused for a lifetime.
//!
//! Source: Y. Zhou, J. F. Philbin and K. Li, "The Multi-Queue Replacement Algorithm for
//! Second Level Buffer Caches", USENIX ATC 2001, section 4. libCacheSim's simulator has
//! no MQ; the parameters are the defaults of Caffeine's simulator (`reference.conf`,
//! `multi-queue`): 8 queues, a lifetime of 75 accesses, and a history `Qout` of half the
//! capacity.
//!
//! Queues `Q0..Q7` hold the resident pages, each in LRU order; `Qout` is a FIFO of the
//! ids of evicted pages, whose access counts are remembered. `t` counts accesses.
//!
//! ```text
//! on access(p):
//!   if p resident:  f(p) += 1; take p off its queue
//!   else:           f(p) = (p in Qout ? f(p) remembered, taken off Qout : 0) + 1
//!                   evict while full: the LRU end of the lowest non-empty queue, put at
//!                   the front of Qout (forgetting Qout's oldest while it is over its size)
//!   put p at the MRU end of Q(min(floor(log2 f(p)), 7)); expire(p) = t + lifetime
//!   t += 1
//!   for k in 1..8: the LRU end b of Qk, if expire(b) < t:
//!                  move b to the MRU end of Q(k-1); expire(b) = t + lifetime
//! ```
//! The page is looked up in `Qout` before the eviction, so that the victim entering
//! `Qout` cannot push it out (as Caffeine does). The demotion checks the LRU end's own
//! expiry, as the paper's pseudocode does (Caffeine's simulator checks the block after
//! it). With sizes in bytes the queues count bytes, `Qout` holds ghosts up to half the
//! capacity in bytes (a ghost keeps its size) and a page no larger than the capacity is
//! admitted.
//!
//! Per page: two `u32` links and its queue (the shared arena), its access count (`u32`)
//! and its expiry (`u64`).

use super::queues::Queues;
use crate::core::ensure_index;
use crate::mm::placement::engine::Memory;
use crate::mm::placement::{CachePolicy, Effects, Request, Tier};
use crate::trace::PageId;

/// The resident queues, `Q0` (seen least often) to `Q7`.
pub const QUEUES: usize = 8;
/// `Qout`, the ghost queue: the arena's list after the resident ones.
const QOUT: usize = QUEUES;
const RESIDENT: [usize; QUEUES] = [0, 1, 2, 3, 4, 5, 6, 7];
/// Accesses a page may sit at the LRU end of its queue before it is demoted.
pub const LIFETIME: u64 = 75;

#[derive(Debug, Clone)]
pub struct Mq {
    queues: Queues,
    /// Accesses of each page since it last entered memory from no history.
    count: Vec<u32>,
    expire: Vec<u64>,
    /// Accesses so far (the paper's currentTime).
    now: u64,
    /// `Qout`'s size in the run's unit.
    history: u64,
    /// The latest request's page was found in `Qout`.
    from_history: bool,
}

impl Mq {
    /// MQ for a memory of `capacity` units.
    pub fn new(capacity: usize, page_count_hint: usize) -> Self {
        Mq {
            queues: Queues::new(QUEUES + 1, page_count_hint),
            count: Vec::new(),
            expire: Vec::new(),
            now: 0,
            history: (capacity as u64 / 2).max(1),
            from_history: false,
        }
    }

    /// The queue of a page accessed `count` times: `floor(log2 count)`, at most the last.
    fn queue_for(count: u32) -> usize {
        (count.max(1).ilog2() as usize).min(QUEUES - 1)
    }

    /// Put `page` at the MRU end of the queue of its count, let it live a lifetime from
    /// now, and count the access: then demote each queue's expired LRU end.
    fn place(&mut self, page: PageId, mem: &Memory) {
        let queue = Self::queue_for(self.count[page as usize]);
        self.queues.move_to_front(queue, page, mem);
        self.expire[page as usize] = self.now + LIFETIME;
        self.now += 1;
        for k in 1..QUEUES {
            if let Some(oldest) = self.queues.back(k) {
                if self.expire[oldest as usize] < self.now {
                    self.queues.move_to_front(k - 1, oldest, mem);
                    self.expire[oldest as usize] = self.now + LIFETIME;
                }
            }
        }
    }

    /// The pages of queue `k` (`QUEUES` for `Qout`), most recent first.
    pub fn queue(&self, k: usize) -> Vec<PageId> {
        self.queues.iter(k).collect()
    }
}

impl CachePolicy for Mq {
    fn hit(&mut self, req: &Request, mem: &Memory, _out: &mut Effects) {
        let count = &mut self.count[req.page as usize];
        *count = count.saturating_add(1);
        self.place(req.page, mem);
    }

    fn admit(&mut self, req: &Request, mem: &Memory, _out: &mut Effects) -> bool {
        self.from_history = self.queues.queue_of(req.page) == Some(QOUT);
        if self.from_history {
            self.queues.remove(req.page, mem);
        }
        req.size <= mem.capacity_total()
    }

    fn evict(&mut self, _req: &Request, mem: &Memory, out: &mut Effects) {
        let Some(victim) = RESIDENT.iter().find_map(|&k| self.queues.pop_back(k, mem)) else {
            return;
        };
        out.evict(victim);
        self.queues.remember(QOUT, victim, self.history, mem);
    }

    fn insert(&mut self, req: &Request, mem: &Memory, _out: &mut Effects) -> Tier {
        let page = req.page;
        ensure_index(&mut self.count, page, 0);
        ensure_index(&mut self.expire, page, 0);
        let remembered = if std::mem::take(&mut self.from_history) {
            self.count[page as usize]
        } else {
            0
        };
        self.count[page as usize] = remembered.saturating_add(1);
        self.place(page, mem);
        Tier::Dram
    }

    fn remove(&mut self, page: PageId, mem: &Memory) {
        self.queues.remove_from(page, &RESIDENT, mem);
    }

    fn holds(&self, page: PageId) -> Option<Tier> {
        self.queues.holds_in(page, &RESIDENT)
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
    fn frequent_pages_outlive_recent_ones_until_they_expire() {
        // capacity 2, Qout 1. t before each access:
        //   t0 1      miss: f1 = 1, Q0 [1]
        //   t1 1      hit:  f1 = 2, Q1 [1], expire(1) = 76
        //   t2 2      miss: f2 = 1, Q0 [2]
        //   t3 3      miss: evict the LRU end of Q0, 2 (Qout [2]); Q0 [3]
        //   t4 4      miss: evict 3 (Qout [3]: 2 forgotten, Qout holds 1); Q0 [4]
        // 1, in Q1, stays while the pages seen once come and go.
        let mut mq = engine(Mq::new(2, 0), 2);
        let outcome = run_pages(&mut mq, &[1, 1, 2, 3, 4]);
        assert_eq!(hit_pattern(&outcome), "mhmmm");
        assert_eq!(
            evictions(&outcome),
            vec![vec![], vec![], vec![], vec![2], vec![3]]
        );
        assert_eq!(mq.policy().queue(0), vec![4]);
        assert_eq!(mq.policy().queue(1), vec![1]);
        assert_eq!(mq.policy().queue(QOUT), vec![3]);
        // 72 hits of 4 (t5..t76) lift it to Q6; after the last, t = 77 > 76: 1, unused
        // for its lifetime at Q1's LRU end, is demoted to Q0, whose LRU end the next
        // new page evicts.
        let mut pages = vec![4; 72];
        pages.push(5);
        let outcome = run_pages(&mut mq, &pages);
        assert_eq!(mq.policy().queue(6), vec![4]);
        assert_eq!(mq.policy().queue(1), Vec::<PageId>::new());
        assert_eq!(evictions(&outcome).concat(), vec![1]);
    }

    #[test]
    fn a_page_back_from_history_keeps_its_count() {
        // capacity 1, Qout 1: 1 1 1 (f1 = 3, Q1), 2 evicts 1 into Qout, 1 comes back with
        // f1 = 4: Q2.
        let mut mq = engine(Mq::new(1, 0), 1);
        run_pages(&mut mq, &[1, 1, 1, 2, 1]);
        assert_eq!(mq.policy().queue(2), vec![1]);
        assert_eq!(mq.policy().queue(QOUT), vec![2]);
    }

    /// MQ written plainly: queues as vectors (LRU end first), counts and expiries in maps,
    /// `Qout` a deque of at most half the capacity.
    struct PlainMq {
        queues: Vec<Vec<PageId>>,
        out: VecDeque<PageId>,
        count: HashMap<PageId, u32>,
        expire: HashMap<PageId, u64>,
        now: u64,
        capacity: usize,
    }

    impl PlainMq {
        fn access(&mut self, page: PageId) -> bool {
            let at = self.queues.iter().position(|q| q.contains(&page));
            let hit = at.is_some();
            match at {
                Some(k) => {
                    self.queues[k].retain(|&p| p != page);
                    *self.count.get_mut(&page).unwrap() += 1;
                }
                None => {
                    // Found in Qout first, so that the victim's entry cannot push it out.
                    let remembered = match self.out.iter().position(|&p| p == page) {
                        Some(i) => {
                            self.out.remove(i);
                            self.count[&page]
                        }
                        None => 0,
                    };
                    let resident: usize = self.queues.iter().map(Vec::len).sum();
                    if resident >= self.capacity {
                        let k = self.queues.iter().position(|q| !q.is_empty()).unwrap();
                        let victim = self.queues[k].remove(0);
                        self.out.push_back(victim);
                        if self.out.len() > (self.capacity / 2).max(1) {
                            self.out.pop_front();
                        }
                    }
                    self.count.insert(page, remembered + 1);
                }
            }
            let f = self.count[&page];
            let k = (f.ilog2() as usize).min(7);
            self.queues[k].push(page);
            self.expire.insert(page, self.now + LIFETIME);
            self.now += 1;
            for k in 1..8 {
                if let Some(&oldest) = self.queues[k].first() {
                    if self.expire[&oldest] < self.now {
                        self.queues[k].remove(0);
                        self.queues[k - 1].push(oldest);
                        self.expire.insert(oldest, self.now + LIFETIME);
                    }
                }
            }
            hit
        }
    }

    proptest::proptest! {
        /// The same hits and misses as the plain version, access by access, on traces
        /// skewed enough for pages to climb queues and expire.
        #[test]
        fn agrees_with_a_plain_implementation(
            pages in skewed_pages(),
            capacity in 1usize..40,
        ) {
            let mut plain = PlainMq {
                queues: vec![Vec::new(); 8],
                out: VecDeque::new(),
                count: HashMap::new(),
                expire: HashMap::new(),
                now: 0,
                capacity,
            };
            let (ours, expected) = hit_patterns(Mq::new(capacity, 0), capacity, &pages, |p| plain.access(p));
            proptest::prop_assert_eq!(ours, expected);
        }
    }
}
