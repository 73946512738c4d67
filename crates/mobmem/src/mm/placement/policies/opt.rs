//! OPT (Belady's MIN): evict the resident page whose next use is farthest in the future.
//! It needs the whole trace in advance, and gives the fewest misses any demand-paging
//! policy can have: the lower bound the online policies are measured against.
//!
//! Source: L. A. Belady, "A study of replacement algorithms for a virtual-storage
//! computer", IBM Systems Journal 5(2), 1966 (policy MIN); optimality proved by
//! R. L. Mattson et al., "Evaluation techniques for storage hierarchies", IBM Systems
//! Journal 9(2), 1970.
//!
//! ```text
//! at construction, from the future f[0..n):
//!   next[i] = the least j > i with f[j] = f[i], or NEVER     (one backward pass)
//! on the i-th access, to page p:
//!   key = next[i] if f[i] = p else NEVER
//!   if p resident: key[p] = key; hit
//!   else: while full, evict the resident page with the largest key;
//!         key[p] = key; make p resident; miss
//! ```
//! Resident pages sit in a binary max-heap ordered by `(next use, page id)` with each
//! page's heap position recorded, so a hit updates the page's key in place: there are no
//! stale entries, the heap holds exactly the resident pages, and an access costs
//! O(log capacity). Pages never used again (NEVER) are evicted first, the one with the
//! largest id among them; which one does not change the miss count.
//!
//! The policy counts requests (a hit, or an admission): the i-th is the access
//! `future[i]`. A request whose page differs from `future[i]`, or that comes after the
//! end of the future, breaks that contract; the page is then treated as never used again, and the count
//! still advances (it does not try to find its place in the future again). The policy
//! stays correct (capacity, residency, effects) but its choices are no longer optimal.
//!
//! With sizes in bytes this is libCacheSim's `Belady` (commit aa0fc409,
//! `cache/eviction/Belady.c`): the page of the farthest next use goes, then the next,
//! until the new page fits. Ties, among pages never used again, can matter there (which
//! of them stay changes the room left); libCacheSim's heap breaks them by position, this
//! one by page id. On its CloudPhysics trace the two give the same miss ratios and byte
//! miss ratios to the four decimals printed (`tests/policies_libcachesim.rs`).
//!
//! Memory: one `usize` per access of the future, plus a key (`usize`), a heap position
//! (`u32`) and the trace's id (`u32`) per page.

use std::sync::Arc;

use crate::core::ensure_index;
use crate::mm::placement::engine::Memory;
use crate::mm::placement::{CachePolicy, Effects, Request, Tier};
use crate::trace::PageId;

/// The next use of a page that is never used again.
const NEVER: usize = usize::MAX;
/// Heap position of a page that is not resident.
const NOT_RESIDENT: u32 = u32::MAX;

#[derive(Debug, Clone)]
pub struct Opt {
    future: Arc<[PageId]>,
    /// For each access of the future, the index of the next access to the same page.
    next_use: Vec<usize>,
    /// Requests seen so far: the index in `future` of the next.
    clock: usize,
    /// The next use of the page of the latest request, for its insertion.
    pending: usize,
    /// Resident pages, a max-heap on `(next_use_of[page], trace_id[page])`.
    heap: Vec<PageId>,
    next_use_of: Vec<usize>,
    heap_pos: Vec<u32>,
    /// The trace's id of each page ([`Memory::trace_page`]): pages never used again tie on
    /// their next use and the largest id goes first, so that renumbering pages changes no
    /// choice.
    trace_id: Vec<PageId>,
}

impl Opt {
    pub fn new(future: Arc<[PageId]>) -> Self {
        let next_use = next_uses(&future);
        let pages = future.iter().max().map_or(0, |&p| p as usize + 1);
        Opt {
            future,
            next_use,
            clock: 0,
            pending: NEVER,
            heap: Vec::new(),
            next_use_of: vec![NEVER; pages],
            heap_pos: vec![NOT_RESIDENT; pages],
            trace_id: vec![0; pages],
        }
    }

    /// Resident pages in increasing id order (for tests).
    pub fn resident(&self) -> Vec<PageId> {
        let mut pages = self.heap.clone();
        pages.sort_unstable();
        pages
    }

    /// `a` should be evicted before `b`.
    #[inline]
    fn evicts_before(&self, a: PageId, b: PageId) -> bool {
        let key = |page: PageId| {
            let page = page as usize;
            (self.next_use_of[page], self.trace_id[page])
        };
        key(a) > key(b)
    }

    #[inline]
    fn place(&mut self, pos: usize, page: PageId) {
        self.heap[pos] = page;
        // Positions fit in u32: the heap holds distinct page ids, which are u32.
        self.heap_pos[page as usize] = pos as u32;
    }

    fn sift_up(&mut self, mut pos: usize) {
        let page = self.heap[pos];
        while pos > 0 {
            let parent = (pos - 1) / 2;
            let above = self.heap[parent];
            if !self.evicts_before(page, above) {
                break;
            }
            self.place(pos, above);
            pos = parent;
        }
        self.place(pos, page);
    }

    fn sift_down(&mut self, mut pos: usize) {
        let page = self.heap[pos];
        let len = self.heap.len();
        loop {
            let left = 2 * pos + 1;
            if left >= len {
                break;
            }
            let right = left + 1;
            let child = if right < len && self.evicts_before(self.heap[right], self.heap[left]) {
                right
            } else {
                left
            };
            let below = self.heap[child];
            if !self.evicts_before(below, page) {
                break;
            }
            self.place(pos, below);
            pos = child;
        }
        self.place(pos, page);
    }

    /// Remove and return the page to evict.
    fn pop_farthest(&mut self) -> Option<PageId> {
        let top = *self.heap.first()?;
        let last = self.heap.pop()?;
        if !self.heap.is_empty() {
            self.place(0, last);
            self.sift_down(0);
        }
        self.heap_pos[top as usize] = NOT_RESIDENT;
        Some(top)
    }
}

/// `next[i]` = the least `j > i` with `future[j] == future[i]`, or [`NEVER`].
fn next_uses(future: &[PageId]) -> Vec<usize> {
    let pages = future.iter().max().map_or(0, |&p| p as usize + 1);
    let mut seen_at = vec![NEVER; pages];
    let mut next = vec![NEVER; future.len()];
    for (i, &page) in future.iter().enumerate().rev() {
        next[i] = seen_at[page as usize];
        seen_at[page as usize] = i;
    }
    next
}

impl Opt {
    /// The next use of the page of the request just made, advancing the count.
    fn next_request(&mut self, page: PageId) -> usize {
        let i = self.clock;
        self.clock = self.clock.saturating_add(1);
        match self.future.get(i) {
            Some(&expected) if expected == page => self.next_use.get(i).copied().unwrap_or(NEVER),
            _ => NEVER,
        }
    }
}

impl CachePolicy for Opt {
    fn hit(&mut self, req: &Request, _mem: &Memory, _out: &mut Effects) {
        let page = req.page;
        let next = self.next_request(page);
        self.next_use_of[page as usize] = next;
        // Following the future the key only grows; after a contract violation it may
        // also shrink, so restore the heap both ways (one of them does nothing).
        let pos = self.heap_pos[page as usize] as usize;
        self.sift_up(pos);
        self.sift_down(self.heap_pos[page as usize] as usize);
    }

    fn admit(&mut self, req: &Request, mem: &Memory, _out: &mut Effects) -> bool {
        self.pending = self.next_request(req.page);
        req.size <= mem.capacity_total()
    }

    fn evict(&mut self, _req: &Request, _mem: &Memory, out: &mut Effects) {
        if let Some(victim) = self.pop_farthest() {
            out.evict(victim);
        }
    }

    fn insert(&mut self, req: &Request, mem: &Memory, _out: &mut Effects) -> Tier {
        let page = req.page;
        ensure_index(&mut self.next_use_of, page, NEVER);
        ensure_index(&mut self.heap_pos, page, NOT_RESIDENT);
        ensure_index(&mut self.trace_id, page, 0);
        self.next_use_of[page as usize] = self.pending;
        self.trace_id[page as usize] = mem.trace_page(page);
        self.heap.push(page);
        self.sift_up(self.heap.len() - 1);
        Tier::Dram
    }

    fn remove(&mut self, page: PageId, _mem: &Memory) {
        let Some(&pos) = self.heap_pos.get(page as usize) else {
            return;
        };
        if pos == NOT_RESIDENT {
            return;
        }
        let Some(last) = self.heap.pop() else {
            return;
        };
        self.heap_pos[page as usize] = NOT_RESIDENT;
        if last != page {
            self.place(pos as usize, last);
            self.sift_up(pos as usize);
            self.sift_down(self.heap_pos[last as usize] as usize);
        }
    }

    fn holds(&self, page: PageId) -> Option<Tier> {
        let pos = self
            .heap_pos
            .get(page as usize)
            .copied()
            .unwrap_or(NOT_RESIDENT);
        (pos != NOT_RESIDENT).then_some(Tier::Dram)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mm::placement::engine::Engine;
    use crate::mm::placement::policies::testing::{check_outcome, engine, run_pages};

    fn opt(capacity: usize, future: &[PageId]) -> Engine<Opt> {
        engine(Opt::new(Arc::from(future)), capacity)
    }

    #[test]
    fn next_uses_by_backward_pass() {
        //            index: 0  1  2  3  4
        assert_eq!(next_uses(&[7, 8, 7, 7, 8]), vec![2, 4, 3, NEVER, NEVER]);
        assert!(next_uses(&[]).is_empty());
    }

    #[test]
    fn evicts_farthest_next_use() {
        // capacity 3; next uses written page@index, NEVER as @-.
        //   idx 0 1 2 3 4 5 6 7 8 9 10 11 12 13
        //   pg  7 0 1 2 0 3 0 7 2 3  0  3  2  1
        //   7 0 1   misses                                      {7@7 0@4 1@13}
        //   2       evict 1 (13 is farthest)                    {7@7 0@4 2@8}
        //   0       hit                                         {7@7 0@6 2@8}
        //   3       evict 2 (8)                                 {7@7 0@6 3@9}
        //   0 7     hits                                        {7@- 0@10 3@9}
        //   2       evict 7 (never again)                       {0@10 3@9 2@12}
        //   3 0 3 2 hits                                        {0@- 3@- 2@-}
        //   1       all never again: evict the largest id, 3    {0 1 2}
        let trace = [7, 0, 1, 2, 0, 3, 0, 7, 2, 3, 0, 3, 2, 1];
        let mut policy = opt(3, &trace);
        let outcome = run_pages(&mut policy, &trace);
        check_outcome(&outcome, "mmmmhmhhmhhhhm", &[1, 2, 7, 3]);
        assert_eq!(policy.policy().resident(), vec![0, 1, 2]);
    }

    #[test]
    fn calls_off_the_future_are_pages_never_used_again() {
        // Future says 1 2 1, the caller sends 1 3 1 2 (3 is off, and one call too many).
        //   1   miss                    {1}, next use 2
        //   3   miss, unknown future    {1 3}, 3 NEVER
        //   1   hit
        //   2   past the end: miss; 1 and 3 are both never used again, the larger id 3 goes
        let mut policy = opt(2, &[1, 2, 1]);
        let outcome = run_pages(&mut policy, &[1, 3, 1, 2]);
        check_outcome(&outcome, "mmhm", &[3]);
        assert_eq!(policy.policy().resident(), vec![1, 2]);
    }
}
