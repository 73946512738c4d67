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
//! The engine runs a miss as libCacheSim does: `admit` is its `can_insert` (a ghost
//! coming back first demotes while the LIR set cannot take it and leaves `NH`; a new page
//! evicts from `Q` if neither the LIR set nor `Q` can take it), `evict` its `evict` (for
//! a ghost: evict from `Q` while `Q` is full, then demote; for a new page: evict from
//! `Q`), asked while the page does not fit, and `insert` its `insert`.
//!
//! With sizes in bytes, as libCacheSim's: `Llirs`, `Lhirs`, the LIR set, `Q` and `S` count
//! bytes (the `2c` bound on `S` too); a demoted LIR page larger than `Lhirs` leaves
//! memory instead of joining `Q`; a new page larger than `Llirs` or `Lhirs` is not
//! admitted. In the hit on a resident HIR page with no entry in `S`, the demotion is
//! skipped when it would push the page hit out of `Q` (the case libCacheSim does not
//! handle, above).
//!
//! Per page: two `u32` links in each of three arenas (`S`, `Q`, `NH`) and one byte for
//! its entry in `S`.

use crate::core::ensure_index;
use crate::core::list::{Links, List};
use crate::mm::placement::engine::Memory;
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
    capacity: u64,
    lir_limit: u64,
    hir_limit: u64,
    /// Units of the LIR pages.
    lir_units: u64,
    /// Units of the pages in `Q`.
    q_units: u64,
    /// Units of the entries of `S` (ghosts at the size they had).
    s_units: u64,
    entry: Vec<Entry>,
    s_links: Links,
    s: List,
    q_links: Links,
    q: List,
    nh_links: Links,
    nh: List,
}

impl Lirs {
    /// LIRS for a memory of `capacity` units (pages, or bytes).
    pub fn new(capacity: usize, page_count_hint: usize) -> Self {
        let capacity = capacity.max(1) as u64;
        // As libCacheSim computes it: the fraction times the size, truncated.
        let hir_limit = ((HIR_FRACTION * capacity as f64) as u64).clamp(1, capacity);
        Lirs {
            capacity,
            lir_limit: capacity - hir_limit,
            hir_limit,
            lir_units: 0,
            q_units: 0,
            s_units: 0,
            entry: vec![Entry::None; page_count_hint],
            s_links: Links::with_pages(page_count_hint),
            s: List::new(),
            q_links: Links::with_pages(page_count_hint),
            q: List::new(),
            nh_links: Links::with_pages(page_count_hint),
            nh: List::new(),
        }
    }

    /// `(Llirs, Lhirs)`: units for the LIR set and for resident HIR pages.
    pub fn limits(&self) -> (u64, u64) {
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

    fn in_q(&self, page: PageId) -> bool {
        self.q_links.is_on(&self.q, page)
    }

    fn push_q(&mut self, page: PageId, mem: &Memory) {
        self.q_links.push_front(&mut self.q, page);
        self.q_units += mem.size_of(page);
    }

    fn remove_q(&mut self, page: PageId, mem: &Memory) {
        self.q_links.remove(&mut self.q, page);
        self.q_units -= mem.size_of(page);
    }

    fn push_s(&mut self, page: PageId, mem: &Memory) {
        self.s_links.push_front(&mut self.s, page);
        self.s_units += mem.size_of(page);
    }

    /// Drop `page`'s entry from `S` (and from `NH` if it is a ghost).
    fn drop_entry(&mut self, page: PageId, mem: &Memory) {
        let size = mem.size_of(page);
        match self.entry[page as usize] {
            Entry::None => return,
            Entry::NonResidentHir => {
                if self.nh_links.is_on(&self.nh, page) {
                    self.nh_links.remove(&mut self.nh, page);
                }
            }
            Entry::Lir => self.lir_units -= size,
            Entry::ResidentHir => {}
        }
        self.s_links.remove(&mut self.s, page);
        self.s_units -= size;
        self.entry[page as usize] = Entry::None;
    }

    /// Drop HIR entries from the bottom of `S` up to the lowest LIR page, never the top.
    fn prune(&mut self, mem: &Memory) {
        while let Some(bottom) = self.s.back() {
            if self.s.front() == Some(bottom) || self.entry[bottom as usize] == Entry::Lir {
                break;
            }
            self.drop_entry(bottom, mem);
        }
    }

    /// The back of `Q` leaves memory; its entry in `S`, if any, becomes a ghost. False if
    /// `Q` is empty.
    fn evict_hir(&mut self, mem: &Memory, out: &mut Effects) -> bool {
        let Some(victim) = self.q.back() else {
            return false;
        };
        self.remove_q(victim, mem);
        out.evict(victim);
        if self.entry[victim as usize] != Entry::None {
            self.entry[victim as usize] = Entry::NonResidentHir;
            if !self.nh_links.is_on(&self.nh, victim) {
                self.nh_links.push_front(&mut self.nh, victim);
            }
        }
        true
    }

    /// The LIR page at the bottom of `S` (after pruning) and its size.
    fn bottom_lir(&mut self, mem: &Memory) -> Option<(PageId, u64)> {
        self.prune(mem);
        let bottom = self.s.back()?;
        (self.entry[bottom as usize] == Entry::Lir).then(|| (bottom, mem.size_of(bottom)))
    }

    /// The LIR page at the bottom of `S` becomes a resident HIR page at the front of `Q`
    /// (making room there), or leaves memory if it is larger than all of `Q`. False if
    /// there is no LIR page (never, while the LIR set is full and not empty).
    fn demote(&mut self, mem: &Memory, out: &mut Effects) -> bool {
        let Some((bottom, size)) = self.bottom_lir(mem) else {
            return false;
        };
        self.drop_entry(bottom, mem);
        if size <= self.hir_limit {
            while self.q_units + size > self.hir_limit && self.evict_hir(mem, out) {}
            self.push_q(bottom, mem);
        } else {
            out.evict(bottom);
        }
        self.prune(mem);
        true
    }

    /// Demote while the LIR set cannot take `size` more units; with `keep`, stop before a
    /// demotion that would push that page out of `Q`.
    fn make_room_for_lir(
        &mut self,
        size: u64,
        keep: Option<PageId>,
        mem: &Memory,
        out: &mut Effects,
    ) {
        while self.lir_units + size > self.lir_limit {
            if let Some(kept) = keep {
                // The demotion evicts from Q's back while the demoted page does not fit:
                // `kept` goes last, and only if it and the demoted page overflow Q.
                let Some((_, demoted)) = self.bottom_lir(mem) else {
                    return;
                };
                if self.in_q(kept) && mem.size_of(kept) + demoted > self.hir_limit {
                    return;
                }
            }
            if !self.demote(mem, out) {
                return;
            }
        }
    }

    /// Forget the oldest ghosts while `S` holds more than `2c` units.
    fn limit_stack(&mut self, mem: &Memory) {
        while self.s_units > self.capacity.saturating_mul(2) {
            let Some(oldest) = self.nh.back() else {
                break;
            };
            self.drop_entry(oldest, mem);
        }
    }
}

impl CachePolicy for Lirs {
    #[inline]
    fn hit(&mut self, req: &Request, mem: &Memory, out: &mut Effects) {
        let x = req.page;
        if self.lir_limit == 0 {
            // One unit of memory: `Q` holds the latest page.
            return;
        }
        let entry = self.entry[x as usize];
        let in_q = self.in_q(x);
        if entry != Entry::None {
            self.s_links.move_to_front(&mut self.s, x);
        }
        if in_q {
            self.q_links.move_to_front(&mut self.q, x);
        }
        let size = mem.size_of(x);
        match entry {
            Entry::Lir => self.prune(mem),
            Entry::ResidentHir => {
                if in_q {
                    self.remove_q(x, mem);
                }
                self.make_room_for_lir(size, None, mem, out);
                self.entry[x as usize] = Entry::Lir;
                self.lir_units += size;
            }
            Entry::None => {
                self.make_room_for_lir(size, Some(x), mem, out);
                self.entry[x as usize] = Entry::ResidentHir;
                self.push_s(x, mem);
            }
            Entry::NonResidentHir => {}
        }
        self.limit_stack(mem);
    }

    fn admit(&mut self, req: &Request, mem: &Memory, out: &mut Effects) -> bool {
        let x = req.page;
        ensure_index(&mut self.entry, x, Entry::None);
        if self.lir_limit == 0 {
            return req.size <= self.capacity;
        }
        let entry = self.entry[x as usize];
        if entry != Entry::None {
            self.s_links.move_to_front(&mut self.s, x);
        }
        if req.size > self.capacity {
            self.limit_stack(mem);
            return false;
        }
        if entry == Entry::NonResidentHir {
            // A ghost comes back as an LIR page, at the size it had.
            let size = mem.size_of(x);
            self.make_room_for_lir(size, None, mem, out);
            if self.nh_links.is_on(&self.nh, x) {
                self.nh_links.remove(&mut self.nh, x);
            }
            // Inserted, it counts in `S` at its new size.
            self.s_units -= size;
            return true;
        }
        if req.size > self.lir_limit || req.size > self.hir_limit {
            self.limit_stack(mem);
            return false;
        }
        if self.lir_units + req.size > self.lir_limit && self.q_units + req.size > self.hir_limit {
            while self.q_units + req.size > self.hir_limit && self.evict_hir(mem, out) {}
        }
        true
    }

    fn evict(&mut self, req: &Request, mem: &Memory, out: &mut Effects) {
        let x = req.page;
        let before = out.len();
        loop {
            let progressed = if self.lir_limit == 0 {
                self.evict_hir(mem, out)
            } else if self.entry[x as usize] == Entry::NonResidentHir {
                while self.q_units >= self.hir_limit && self.evict_hir(mem, out) {}
                self.demote(mem, out) || out.len() > before || self.evict_hir(mem, out)
            } else {
                self.evict_hir(mem, out) || self.demote(mem, out)
            };
            if out.len() > before || !progressed {
                return;
            }
        }
    }

    fn insert(&mut self, req: &Request, mem: &Memory, _out: &mut Effects) -> Tier {
        let x = req.page;
        let size = mem.size_of(x);
        if self.lir_limit == 0 {
            self.push_q(x, mem);
            return Tier::Dram;
        }
        match self.entry[x as usize] {
            Entry::NonResidentHir => {
                self.entry[x as usize] = Entry::Lir;
                self.lir_units += size;
                self.s_units += size;
            }
            _ => {
                if self.lir_units + size <= self.lir_limit {
                    self.entry[x as usize] = Entry::Lir;
                    self.lir_units += size;
                } else {
                    self.entry[x as usize] = Entry::ResidentHir;
                    self.push_q(x, mem);
                }
                self.push_s(x, mem);
            }
        }
        self.limit_stack(mem);
        Tier::Dram
    }

    fn remove(&mut self, page: PageId, mem: &Memory) {
        let Some(&entry) = self.entry.get(page as usize) else {
            return;
        };
        if self.in_q(page) {
            self.remove_q(page, mem);
        }
        match entry {
            Entry::Lir => {
                self.drop_entry(page, mem);
                self.prune(mem);
            }
            Entry::ResidentHir => self.drop_entry(page, mem),
            Entry::None | Entry::NonResidentHir => {}
        }
    }

    fn holds(&self, page: PageId) -> Option<Tier> {
        let resident = matches!(self.entry.get(page as usize), Some(Entry::Lir)) || self.in_q(page);
        resident.then_some(Tier::Dram)
    }

    #[inline]
    fn prefetch(&self, page: PageId, _mem: &Memory) {
        crate::core::prefetch::prefetch(&self.entry, page as usize);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mm::placement::policies::testing::{
        check_outcome, engine, evictions, hit_pattern, run_pages,
    };

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
        let mut lirs = engine(Lirs::new(3, 0), 3);
        let outcome = run_pages(&mut lirs, &[1, 2, 3, 4, 3, 1, 2, 5, 3]);
        check_outcome(&outcome, "mmmmmhhmh", &[3, 4, 1]);
        assert_eq!(lirs.policy().stack(), vec![(3, 'L'), (5, 'H'), (2, 'L')]);
        assert_eq!(lirs.policy().hir_queue(), vec![5]);
        assert!(lirs.policy().ghosts().is_empty());
        assert_eq!([lirs.memory().used_total(), 0], [3, 0]);
        assert_eq!(lirs.memory().tier_of(1), None);
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
        let mut lirs = engine(Lirs::new(3, 0), 3);
        let outcome = run_pages(&mut lirs, &[1, 2, 3, 3, 1, 4]);
        check_outcome(&outcome, "mmmhhm", &[1]);
        assert_eq!(
            lirs.policy().stack(),
            vec![(4, 'H'), (1, 'N'), (3, 'L'), (2, 'L')]
        );
        assert_eq!(lirs.policy().hir_queue(), vec![4]);
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
        let mut lirs = engine(Lirs::new(200, 0), 200);
        let mut pages: Vec<PageId> = (0..=200).collect();
        pages.extend([0, 199]);
        run_pages(&mut lirs, &pages);
        assert_eq!(lirs.policy().hir_queue(), vec![1, 200]);
        let outcome = run_pages(&mut lirs, &[1]);
        assert_eq!(hit_pattern(&outcome), "h");
        assert_eq!(evictions(&outcome), vec![vec![200]]);
        assert_eq!(lirs.policy().hir_queue(), vec![2, 1]);
        assert_eq!(lirs.policy().stack()[0], (1, 'H'));
        assert_eq!([lirs.memory().used_total(), 0], [199, 0]);
    }

    #[test]
    fn ghosts_are_bounded_by_twice_the_capacity() {
        // capacity 2: Llirs 1, Lhirs 1. 1 is LIR; every other page passes through Q and
        // stays in S as a ghost while S holds at most 4 entries.
        //   1 2 3 4   S [4H 3N 2N 1L]         Q [4]  NH [3 2]
        //   5         4 leaves: S [5H 4N 3N 2N 1L] is 5 entries: forget 2, the oldest
        //   6         5 leaves; forget 3       S [6H 5N 4N 1L]  NH [5 4]
        let mut lirs = engine(Lirs::new(2, 0), 2);
        let outcome = run_pages(&mut lirs, &[1, 2, 3, 4, 5, 6]);
        assert_eq!(evictions(&outcome).concat(), vec![2, 3, 4, 5]);
        assert_eq!(
            lirs.policy().stack(),
            vec![(6, 'H'), (5, 'N'), (4, 'N'), (1, 'L')]
        );
        assert_eq!(lirs.policy().ghosts(), vec![5, 4]);
        // 4, a ghost, comes back (to the top of S): the LIR set is full, so 1 is demoted
        // to Q, pushing 6 out (a ghost); with no LIR page left, prune drops every entry
        // below the top (5N, 6N). 4 becomes LIR.
        let outcome = run_pages(&mut lirs, &[4]);
        assert_eq!(hit_pattern(&outcome), "m");
        assert_eq!(evictions(&outcome), vec![vec![6]]);
        assert_eq!(lirs.policy().stack(), vec![(4, 'L')]);
        assert_eq!(lirs.policy().hir_queue(), vec![1]);
        assert!(lirs.policy().ghosts().is_empty());
    }

    #[test]
    fn one_page_keeps_the_latest() {
        let mut lirs = engine(Lirs::new(1, 0), 1);
        let outcome = run_pages(&mut lirs, &[1, 1, 2, 1]);
        check_outcome(&outcome, "mhmm", &[1, 2]);
        assert_eq!([lirs.memory().used_total(), 0], [1, 0]);
    }
}
