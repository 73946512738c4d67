//! GDSF (Greedy-Dual-Size-Frequency): evict the page of least priority, where a page's
//! priority is the memory's age plus its count of uses over its size, so small pages
//! used often stay and large ones used once go first.
//!
//! Source: L. Cherkasova, "Improving WWW proxies performance with Greedy-Dual-Size-
//! Frequency caching policy", HP Laboratories report HPL-98-69R1, 1998. The variant is
//! libCacheSim's `GDSF` (commit aa0fc409, `cache/eviction/cpp/GDSF.cpp`):
//!
//! ```text
//! L = 0                                     the age: the priority of the last victim
//! on access(p), the n-th request:
//!   if p resident: count[p] += 1; pri[p] = L + count[p] * 1e6 / size[p]; stamp[p] = n; hit
//!   else:
//!     while full: victim = least (pri, stamp); L = pri[victim]; evict it
//!     count[p] = 1; pri[p] = L + 1e6 / size[p]; stamp[p] = n; miss
//! ```
//! Priorities are `f64` computed in the same order of operations as libCacheSim, and
//! equal priorities go to the page whose priority was set first (its request number),
//! so the order is libCacheSim's. With capacities in pages every page has size 1 and
//! GDSF is LFU with aging.
//!
//! Per page: its count, priority and request number. The order is a binary heap of
//! (priority, request number, page) entries: a hit pushes the page's new entry and leaves
//! the old one, which eviction skips (its request number is no longer the page's), and
//! the heap is rebuilt from the live entries when stale ones outnumber them.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use crate::core::ensure_index;
use crate::mm::placement::engine::Memory;
use crate::mm::placement::{CachePolicy, Effects, Request, Tier};
use crate::trace::PageId;

/// A non-negative `f64` ordered by its bits, which orders such floats as numbers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct Priority(u64);

impl Priority {
    fn of(value: f64) -> Self {
        Priority(value.max(0.0).to_bits())
    }
    fn value(self) -> f64 {
        f64::from_bits(self.0)
    }
}

#[derive(Debug, Clone, Copy, Default)]
struct State {
    count: u64,
    /// The request number of the page's live entry in the order.
    stamp: u64,
}

type Entry = Reverse<(Priority, u64, PageId)>;

#[derive(Debug, Clone)]
pub struct Gdsf {
    pages: Vec<State>,
    /// Min-heap of entries; an entry is live while its page's `stamp` is its own.
    order: BinaryHeap<Entry>,
    /// Live entries (resident pages).
    live: usize,
    /// L: the priority of the last victim.
    age: f64,
    /// Requests so far (libCacheSim's `n_req`).
    requests: u64,
}

impl Gdsf {
    pub fn new(page_count_hint: usize) -> Self {
        Gdsf {
            pages: vec![State::default(); page_count_hint],
            order: BinaryHeap::new(),
            live: 0,
            age: 0.0,
            requests: 0,
        }
    }

    /// The resident pages from the next victim on, each with its priority.
    pub fn by_priority(&self) -> Vec<(PageId, f64)> {
        let mut live: Vec<(Priority, u64, PageId)> = self
            .order
            .iter()
            .map(|Reverse(e)| *e)
            .filter(|&e| self.is_live(e))
            .collect();
        live.sort_unstable();
        live.into_iter()
            .map(|(p, _, page)| (page, p.value()))
            .collect()
    }

    fn is_live(&self, (_, stamp, page): (Priority, u64, PageId)) -> bool {
        let state = &self.pages[page as usize];
        state.count > 0 && state.stamp == stamp
    }

    fn place(&mut self, page: PageId, size: u64) {
        let state = &mut self.pages[page as usize];
        let priority = Priority::of(self.age + state.count as f64 * 1.0e6 / size as f64);
        state.stamp = self.requests;
        self.order.push(Reverse((priority, self.requests, page)));
        // Stale entries past the live ones (and a floor): rebuild from the live.
        if self.order.len() > 2 * self.live + 1024 {
            let entries = std::mem::take(&mut self.order).into_vec();
            let live: Vec<Entry> = entries
                .into_iter()
                .filter(|Reverse(e)| self.is_live(*e))
                .collect();
            self.order = BinaryHeap::from(live);
        }
    }

    /// The live entry of least (priority, request number), taken off the heap.
    fn pop_least(&mut self) -> Option<(Priority, u64, PageId)> {
        while let Some(Reverse(entry)) = self.order.pop() {
            if self.is_live(entry) {
                return Some(entry);
            }
        }
        None
    }
}

impl CachePolicy for Gdsf {
    fn hit(&mut self, req: &Request, mem: &Memory, _out: &mut Effects) {
        self.requests += 1;
        self.pages[req.page as usize].count += 1;
        self.place(req.page, mem.size_of(req.page).max(1));
    }

    fn admit(&mut self, req: &Request, mem: &Memory, _out: &mut Effects) -> bool {
        self.requests += 1;
        req.size <= mem.capacity_total()
    }

    fn evict(&mut self, _req: &Request, _mem: &Memory, out: &mut Effects) {
        if let Some((priority, _, victim)) = self.pop_least() {
            self.age = priority.value();
            self.pages[victim as usize] = State::default();
            self.live -= 1;
            out.evict(victim);
        }
    }

    fn insert(&mut self, req: &Request, _mem: &Memory, _out: &mut Effects) -> Tier {
        ensure_index(&mut self.pages, req.page, State::default());
        self.pages[req.page as usize].count = 1;
        self.live += 1;
        self.place(req.page, req.size.max(1));
        Tier::Dram
    }

    fn remove(&mut self, page: PageId, _mem: &Memory) {
        // Its entry goes stale with its state.
        if let Some(state) = self.pages.get_mut(page as usize) {
            if state.count > 0 {
                self.live -= 1;
            }
            *state = State::default();
        }
    }

    fn holds(&self, page: PageId) -> Option<Tier> {
        let state = self.pages.get(page as usize)?;
        (state.count > 0).then_some(Tier::Dram)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mm::placement::policies::testing::{
        bytes, engine, evictions, hit_pattern, run_pages, run_sized,
    };

    #[test]
    fn with_pages_it_is_lfu_with_aging() {
        // capacity 2, every page of size 1 (priorities in units of 1e6):
        //   1 2     misses: 1 and 2 at 1 (L = 0)
        //   1       hit: 1 at 2
        //   3       miss: victim 2 (least), L = 1; 3 at 1 + 1 = 2, after 1 (later stamp)
        //   4       miss: victim 1 (2, stamped before 3), L = 2; 4 at 3
        //   3       hit: 3 at 2 + 2 = 4
        //   5       miss: victim 4 (3), L = 3; 5 at 4
        let mut gdsf = engine(Gdsf::new(0), 2);
        let outcome = run_pages(&mut gdsf, &[1, 2, 1, 3, 4, 3, 5]);
        assert_eq!(hit_pattern(&outcome), "mmhmmhm");
        let evicted: Vec<PageId> = evictions(&outcome).into_iter().flatten().collect();
        assert_eq!(evicted, vec![2, 1, 4]);
        assert_eq!(gdsf.policy().by_priority(), vec![(3, 4e6), (5, 4e6)]);
    }

    #[test]
    fn with_bytes_the_large_page_goes_first() {
        // 300 bytes: page 1 of 200 bytes and page 2 of 100, then page 3 of 100 needs
        // room: 1's priority 1e6/200 is below 2's 1e6/100, so 1 goes although 2 is newer.
        let mut gdsf = bytes(Gdsf::new(0), 300);
        let outcome = run_sized(&mut gdsf, &[(1, 200), (2, 100), (3, 100)]);
        assert_eq!(evictions(&outcome), vec![vec![], vec![], vec![1]]);
    }
}
