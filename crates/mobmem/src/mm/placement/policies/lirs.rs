//! LIRS, low inter-reference recency set: pages re-referenced at short distances (LIR)
//! keep most of memory; a small share holds the others (HIR) for one more chance.
//!
//! Source: S. Jiang and X. Zhang, "LIRS: An Efficient Low Inter-reference Recency Set
//! Replacement Policy to Improve Buffer Cache Performance", ACM SIGMETRICS 2002,
//! section 3. The variant is libCacheSim's (`cache/eviction/LIRS.c`, commit aa0fc409),
//! so that this policy gives its miss ratios (`tests/policies_libcachesim.rs`).
//!
//! Memory of `c` pages: `Lhirs = max(1, floor(0.01 c))` pages for resident HIR pages,
//! `Llirs = c - Lhirs` for LIR pages. Three lists, front = most recent:
//! - `S`, the LIRS stack: entries of LIR pages, resident HIR pages and non-resident HIR
//!   pages (ghosts), in recency order; its bottom is always an LIR page;
//! - `Q`, the resident HIR pages, whether or not they have an entry in `S`;
//! - `NH`, the non-resident entries of `S`, in the order they lost residency.
//!
//! ```text
//! on access(x):
//!   move x's entry in S (if any) to the top of S, and x (if in Q) to the front of Q
//!   x LIR:                     prune(); hit
//!   x resident HIR, in S:      remove x from Q; if the LIR set is full: demote()
//!                              x becomes LIR; hit
//!   x resident HIR, not in S:  if the LIR set is full: demote()        (see below)
//!                              x enters S at the top as resident HIR; hit
//!   x non-resident, in S:      if the LIR set is full: demote()
//!                              take x off NH
//!                              while memory is full: evict_hir() while Q is full; demote()
//!                              x becomes LIR (resident); miss
//!   x in no list:              if the LIR set and Q are full: evict_hir()
//!                              if the LIR set is not full: x enters S as LIR
//!                              else: x enters S at the top and Q at the front, resident HIR
//!                              miss
//!   then, while |S| > 2c and NH is not empty: forget NH's oldest entry (also from S)
//!
//! demote():    the bottom of S, an LIR page, leaves S; if Q is full: evict_hir()
//!              it joins Q at the front as resident HIR; prune()
//! evict_hir(): the back of Q leaves memory; its entry in S, if any, becomes
//!              non-resident and joins NH at the front
//! prune():     while the bottom of S is an HIR entry and not the top: drop it (and from NH)
//! ```
//!
//! Where this differs from the paper's section 3.3, it follows libCacheSim:
//! - the LIR set fills first: until it holds `Llirs` pages, every new page is LIR;
//! - a hit to a resident HIR page with no entry in `S` also demotes the bottom LIR page
//!   when the LIR set is full (the paper only moves the page to the top of `S` and the end
//!   of `Q`). The demotion can push the back of `Q` out of memory, so such a hit may
//!   evict a page;
//! - ghosts are bounded: `S` holds at most `2c` entries while ghosts remain, the ghost
//!   that lost residency first being forgotten first;
//! - the HIR share is 1 % of memory, at least one page.
//!
//! Two cases libCacheSim does not handle are decided here:
//! - when `Q` holds one page (`Lhirs = 1`, memories under 200 pages) and that page is
//!   hit while it has no entry in `S`, libCacheSim's demotion pushes the hit page itself
//!   out of `Q` while `S` keeps it marked resident, so memory holds one page more than
//!   its capacity. Here the demotion is skipped in that case and the page stays in `Q`
//!   (the paper's rule). On the CloudPhysics oracle trace at 100 pages this never
//!   happens;
//! - with one page of memory (`Llirs = 0`) libCacheSim admits nothing. Here the page
//!   holds the latest page, as it does under any policy.
//!
//! Per page: two `u32` links in each of three arenas (`S`, `Q`, `NH`) and one byte for
//! its entry in `S`. A capacity of zero is treated as one page.

use crate::core::ensure_index;
use crate::core::list::{Links, List};
use crate::mm::placement::{CachePolicy, Effects, Request, Tier};
use crate::trace::PageId;

/// A page's entry in the stack `S`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Entry {
    None,
    Lir,
    ResidentHir,
    /// A ghost: the page is not in memory, and is on `NH`.
    NonResidentHir,
}

/// The share of memory for resident HIR pages (libCacheSim's `hirs_ratio`).
pub const HIR_FRACTION: f64 = 0.01;

#[derive(Debug, Clone)]
pub struct Lirs {
    capacity: usize,
    lir_limit: usize,
    hir_limit: usize,
    lir_count: usize,
    entry: Vec<Entry>,
    s_links: Links,
    s: List,
    q_links: Links,
    q: List,
    nh_links: Links,
    nh: List,
}

impl Lirs {
    pub fn new(capacity: usize, page_count_hint: usize) -> Self {
        let capacity = capacity.max(1);
        // As libCacheSim computes it: the fraction times the size, truncated.
        let hir_limit = ((HIR_FRACTION * capacity as f64) as usize).clamp(1, capacity);
        Lirs {
            capacity,
            lir_limit: capacity - hir_limit,
            hir_limit,
            lir_count: 0,
            entry: vec![Entry::None; page_count_hint],
            s_links: Links::with_pages(page_count_hint),
            s: List::new(),
            q_links: Links::with_pages(page_count_hint),
            q: List::new(),
            nh_links: Links::with_pages(page_count_hint),
            nh: List::new(),
        }
    }

    /// `(Llirs, Lhirs)`: pages for the LIR set and for resident HIR pages.
    pub fn limits(&self) -> (usize, usize) {
        (self.lir_limit, self.hir_limit)
    }

    /// The stack `S` from top to bottom, each page with its status: `'L'` LIR, `'H'`
    /// resident HIR, `'N'` non-resident HIR.
    pub fn stack(&self) -> Vec<(PageId, char)> {
        self.s_links
            .iter(&self.s)
            .map(|page| {
                let status = match self.entry[page as usize] {
                    Entry::Lir => 'L',
                    Entry::ResidentHir => 'H',
                    Entry::NonResidentHir => 'N',
                    Entry::None => '?',
                };
                (page, status)
            })
            .collect()
    }

    /// `Q` from front (most recent) to back (next to leave memory).
    pub fn hir_queue(&self) -> Vec<PageId> {
        self.q_links.iter(&self.q).collect()
    }

    /// `NH` from the ghost that lost residency last to the one that lost it first.
    pub fn ghosts(&self) -> Vec<PageId> {
        self.nh_links.iter(&self.nh).collect()
    }

    fn resident_len(&self) -> usize {
        self.lir_count + self.q.len()
    }

    fn lir_full(&self) -> bool {
        self.lir_count >= self.lir_limit
    }

    fn hir_full(&self) -> bool {
        self.q.len() >= self.hir_limit
    }

    /// Drop `page`'s entry from `S` (and from `NH` if it is a ghost).
    fn drop_entry(&mut self, page: PageId) {
        match self.entry[page as usize] {
            Entry::None => return,
            Entry::NonResidentHir => {
                if self.nh_links.is_on(&self.nh, page) {
                    self.nh_links.remove(&mut self.nh, page);
                }
            }
            Entry::Lir => self.lir_count -= 1,
            Entry::ResidentHir => {}
        }
        self.s_links.remove(&mut self.s, page);
        self.entry[page as usize] = Entry::None;
    }

    /// Drop HIR entries from the bottom of `S` up to the lowest LIR page, never the top.
    fn prune(&mut self) {
        while let Some(bottom) = self.s.back() {
            if self.s.front() == Some(bottom) || self.entry[bottom as usize] == Entry::Lir {
                break;
            }
            self.drop_entry(bottom);
        }
    }

    /// The back of `Q` leaves memory; its entry in `S`, if any, becomes a ghost.
    fn evict_hir(&mut self, out: &mut Effects) {
        let Some(victim) = self.q_links.pop_back(&mut self.q) else {
            return;
        };
        out.evict(victim);
        if self.entry[victim as usize] != Entry::None {
            self.entry[victim as usize] = Entry::NonResidentHir;
            if !self.nh_links.is_on(&self.nh, victim) {
                self.nh_links.push_front(&mut self.nh, victim);
            }
        }
    }

    /// The LIR page at the bottom of `S` becomes a resident HIR page at the front of `Q`.
    /// False if there is no LIR page (never, while the LIR set is full and not empty).
    fn demote(&mut self, out: &mut Effects) -> bool {
        self.prune();
        let Some(bottom) = self.s.back() else {
            return false;
        };
        if self.entry[bottom as usize] != Entry::Lir {
            return false;
        }
        self.drop_entry(bottom);
        while self.hir_full() {
            self.evict_hir(out);
        }
        self.q_links.push_front(&mut self.q, bottom);
        self.prune();
        true
    }

    /// Demote while the LIR set is full, so that one more page can become LIR.
    fn make_room_for_lir(&mut self, out: &mut Effects) {
        while self.lir_full() && self.demote(out) {}
    }

    /// A ghost in `S` (already at the top) comes back as an LIR page.
    fn reload_ghost(&mut self, x: PageId, out: &mut Effects) {
        self.make_room_for_lir(out);
        if self.nh_links.is_on(&self.nh, x) {
            self.nh_links.remove(&mut self.nh, x);
        }
        while self.resident_len() >= self.capacity {
            while self.hir_full() {
                self.evict_hir(out);
            }
            if !self.demote(out) {
                break;
            }
        }
        self.entry[x as usize] = Entry::Lir;
        self.lir_count += 1;
    }

    /// A page in no list enters memory.
    fn admit_new(&mut self, x: PageId, out: &mut Effects) {
        if self.lir_full() && self.hir_full() {
            self.evict_hir(out);
        }
        if self.lir_full() {
            self.entry[x as usize] = Entry::ResidentHir;
            self.q_links.push_front(&mut self.q, x);
        } else {
            self.entry[x as usize] = Entry::Lir;
            self.lir_count += 1;
        }
        self.s_links.push_front(&mut self.s, x);
    }

    /// Forget the oldest ghosts while `S` holds more than `2c` entries.
    fn limit_stack(&mut self) {
        while self.s.len() > self.capacity.saturating_mul(2) {
            let Some(oldest) = self.nh.back() else {
                break;
            };
            self.drop_entry(oldest);
        }
    }

    /// One page of memory: no LIR set, `Q` holds the latest page.
    fn access_one_frame(&mut self, x: PageId, out: &mut Effects) {
        if self.q_links.is_on(&self.q, x) {
            out.hit();
            return;
        }
        out.fill();
        self.evict_hir(out);
        self.q_links.push_front(&mut self.q, x);
    }
}

impl CachePolicy for Lirs {
    #[inline]
    fn access(&mut self, req: &Request, out: &mut Effects) {
        let x = req.page;
        ensure_index(&mut self.entry, x, Entry::None);
        if self.lir_limit == 0 {
            self.access_one_frame(x, out);
            return;
        }
        let entry = self.entry[x as usize];
        let in_q = self.q_links.is_on(&self.q, x);
        if entry != Entry::None {
            self.s_links.move_to_front(&mut self.s, x);
        }
        if in_q {
            self.q_links.move_to_front(&mut self.q, x);
        }
        match entry {
            Entry::Lir => {
                out.hit();
                self.prune();
            }
            Entry::ResidentHir => {
                out.hit();
                if in_q {
                    self.q_links.remove(&mut self.q, x);
                }
                self.make_room_for_lir(out);
                self.entry[x as usize] = Entry::Lir;
                self.lir_count += 1;
            }
            Entry::NonResidentHir => {
                out.fill();
                self.reload_ghost(x, out);
            }
            Entry::None if in_q => {
                out.hit();
                // x is at the front of Q: the demotion would push it out only if it is
                // also the back, Q's one page, and Q is full.
                let pushes_x_out = self.hir_full() && self.q.back() == Some(x);
                if !pushes_x_out {
                    self.make_room_for_lir(out);
                }
                self.entry[x as usize] = Entry::ResidentHir;
                self.s_links.push_front(&mut self.s, x);
            }
            Entry::None => {
                out.fill();
                self.admit_new(x, out);
            }
        }
        self.limit_stack();
    }

    fn tier_of(&self, page: PageId) -> Option<Tier> {
        let resident = matches!(self.entry.get(page as usize), Some(Entry::Lir))
            || self.q_links.is_on(&self.q, page);
        resident.then_some(Tier::Dram)
    }

    fn occupancy(&self) -> [usize; 2] {
        [self.resident_len(), 0]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mm::placement::policies::testing::{evictions, hit_pattern, run_pages};

    #[test]
    fn limits_follow_libcachesim() {
        assert_eq!(Lirs::new(1, 0).limits(), (0, 1));
        assert_eq!(Lirs::new(2, 0).limits(), (1, 1));
        assert_eq!(Lirs::new(100, 0).limits(), (99, 1));
        assert_eq!(Lirs::new(199, 0).limits(), (198, 1));
        assert_eq!(Lirs::new(200, 0).limits(), (198, 2));
        assert_eq!(Lirs::new(20000, 0).limits(), (19800, 200));
    }

    #[test]
    fn hir_pages_become_lir_on_a_short_reuse() {
        // capacity 3: Llirs 2, Lhirs 1. S written top first with statuses, Q front first.
        //   1 2     misses, LIR set not full: LIR      S [2L 1L]         Q []
        //   3       miss, LIR set full: resident HIR   S [3H 2L 1L]      Q [3]
        //   4       miss, Q full: 3 leaves memory, its entry a ghost
        //                                              S [4H 3N 2L 1L]   Q [4]   NH [3]
        //   3       miss, ghost in S: demote 1 (Q full: 4 leaves, ghost), prune;
        //           3 becomes LIR                      S [3L 4N 2L]      Q [1]   NH [4]
        //   1       hit, resident HIR not in S: LIR set full, Q's one page is 1 itself:
        //           no demotion; 1 enters S            S [1H 3L 4N 2L]   Q [1]
        //   2       hit, LIR: to the top; the bottom is now 4N: prune drops it
        //                                              S [2L 1H 3L]      Q [1]   NH []
        //   5       miss, LIR set and Q full: 1 leaves memory (ghost)
        //                                              S [5H 2L 1N 3L]   Q [5]   NH [1]
        //   3       hit, LIR: to the top; prune drops 1N
        //                                              S [3L 5H 2L]      Q [5]   NH []
        let mut lirs = Lirs::new(3, 0);
        let outcome = run_pages(&mut lirs, &[1, 2, 3, 4, 3, 1, 2, 5, 3]);
        assert_eq!(hit_pattern(&outcome), "mmmmmhhmh");
        assert_eq!(evictions(&outcome).concat(), vec![3, 4, 1]);
        assert_eq!(lirs.stack(), vec![(3, 'L'), (5, 'H'), (2, 'L')]);
        assert_eq!(lirs.hir_queue(), vec![5]);
        assert!(lirs.ghosts().is_empty());
        assert_eq!(lirs.occupancy(), [3, 0]);
        assert_eq!(lirs.tier_of(1), None);
    }

    #[test]
    fn a_resident_hir_hit_in_s_swaps_with_the_bottom_lir() {
        // capacity 3: Llirs 2, Lhirs 1.
        //   1 2 3   S [3H 2L 1L]  Q [3]
        //   3       hit, resident HIR in S: leaves Q; 1 (bottom LIR) demoted to Q;
        //           3 LIR                              S [3L 2L]     Q [1]
        //   1       hit, resident HIR not in S; Q's one page is 1: no demotion
        //                                              S [1H 3L 2L]  Q [1]
        //   4       miss: LIR set and Q full: 1 leaves memory (ghost); 4 resident HIR
        //                                              S [4H 1N 3L 2L]  Q [4]  NH [1]
        let mut lirs = Lirs::new(3, 0);
        let outcome = run_pages(&mut lirs, &[1, 2, 3, 3, 1, 4]);
        assert_eq!(hit_pattern(&outcome), "mmmhhm");
        assert_eq!(evictions(&outcome).concat(), vec![1]);
        assert_eq!(lirs.stack(), vec![(4, 'H'), (1, 'N'), (3, 'L'), (2, 'L')]);
        assert_eq!(lirs.hir_queue(), vec![4]);
    }

    #[test]
    fn a_hit_outside_s_may_evict_from_a_larger_q() {
        // capacity 200: Llirs 198, Lhirs 2. Pages 0..198 fill the LIR set; 198 and 199
        // are resident HIR; 200 pushes 198 out (ghost).
        //   S [200H 199H 198N 197L .. 0L]   Q [200 199]
        // 0 is hit (LIR, at the bottom): prune stops at 1 (LIR).
        // 199 is hit: resident HIR in S, leaves Q and becomes LIR; the bottom LIR (1) is
        // demoted to Q, which has room.   Q [1 200]
        // 1 is hit: resident HIR with no entry in S, LIR set full: demote the bottom LIR
        // (2), which pushes Q's back (200) out of memory. A hit that evicts.
        let mut lirs = Lirs::new(200, 0);
        let mut pages: Vec<PageId> = (0..=200).collect();
        pages.extend([0, 199]);
        run_pages(&mut lirs, &pages);
        assert_eq!(lirs.hir_queue(), vec![1, 200]);
        let outcome = run_pages(&mut lirs, &[1]);
        assert_eq!(hit_pattern(&outcome), "h");
        assert_eq!(evictions(&outcome), vec![vec![200]]);
        assert_eq!(lirs.hir_queue(), vec![2, 1]);
        assert_eq!(lirs.stack()[0], (1, 'H'));
        assert_eq!(lirs.occupancy(), [199, 0]);
    }

    #[test]
    fn ghosts_are_bounded_by_twice_the_capacity() {
        // capacity 2: Llirs 1, Lhirs 1. 1 is LIR; every other page passes through Q and
        // stays in S as a ghost while S holds at most 4 entries.
        //   1 2 3 4   S [4H 3N 2N 1L]         Q [4]  NH [3 2]
        //   5         4 leaves: S [5H 4N 3N 2N 1L] is 5 entries: forget 2, the oldest
        //   6         5 leaves; forget 3       S [6H 5N 4N 1L]  NH [5 4]
        let mut lirs = Lirs::new(2, 0);
        let outcome = run_pages(&mut lirs, &[1, 2, 3, 4, 5, 6]);
        assert_eq!(evictions(&outcome).concat(), vec![2, 3, 4, 5]);
        assert_eq!(lirs.stack(), vec![(6, 'H'), (5, 'N'), (4, 'N'), (1, 'L')]);
        assert_eq!(lirs.ghosts(), vec![5, 4]);
        // 4, a ghost, comes back (to the top of S): the LIR set is full, so 1 is demoted
        // to Q, pushing 6 out (a ghost); with no LIR page left, prune drops every entry
        // below the top (5N, 6N). 4 becomes LIR.
        let outcome = run_pages(&mut lirs, &[4]);
        assert_eq!(hit_pattern(&outcome), "m");
        assert_eq!(evictions(&outcome), vec![vec![6]]);
        assert_eq!(lirs.stack(), vec![(4, 'L')]);
        assert_eq!(lirs.hir_queue(), vec![1]);
        assert!(lirs.ghosts().is_empty());
    }

    #[test]
    fn one_page_keeps_the_latest() {
        let mut lirs = Lirs::new(1, 0);
        let outcome = run_pages(&mut lirs, &[1, 1, 2, 1]);
        assert_eq!(hit_pattern(&outcome), "mhmm");
        assert_eq!(evictions(&outcome).concat(), vec![1, 2]);
        assert_eq!(lirs.occupancy(), [1, 0]);
    }
}
