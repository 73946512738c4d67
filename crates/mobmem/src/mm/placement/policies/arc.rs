//! ARC, the adaptive replacement cache: balances recency against frequency by learning,
//! from ghost hits, how much of memory to give to pages seen only once.
//!
//! Source: N. Megiddo and D. S. Modha, "ARC: A Self-Tuning, Low Overhead Replacement
//! Cache", USENIX FAST 2003, Figure 4. Implemented case by case as printed there.
//!
//! Four LRU lists, front = MRU: `T1` (resident, seen once recently), `T2` (resident, seen
//! at least twice recently), `B1` and `B2` (ghost ids evicted from `T1` and `T2`; not
//! resident). `p` is the target size of `T1`, in pages.
//!
//! ```text
//! on access(x), with c the capacity:
//!   I   x in T1 or T2: move x to the front of T2; hit
//!   II  x in B1: p = min(p + d1, c), d1 = 1 if |B1| >= |B2| else |B2| / |B1|
//!                REPLACE(x, p); move x from B1 to the front of T2; miss
//!   III x in B2: p = max(p - d2, 0), d2 = 1 if |B2| >= |B1| else |B1| / |B2|
//!                REPLACE(x, p); move x from B2 to the front of T2; miss
//!   IV  x in no list; miss:
//!     A |T1| + |B1| = c:
//!         if |T1| < c: forget the back of B1; REPLACE(x, p)
//!         else:        evict the back of T1 (not remembered: B1 is empty)
//!     B |T1| + |B1| < c and |T1| + |T2| + |B1| + |B2| >= c:
//!         if the total = 2c: forget the back of B2
//!         REPLACE(x, p)
//!     put x at the front of T1
//!
//! REPLACE(x, p):
//!   if T1 is not empty and (|T1| > p or (x in B2 and |T1| = p)):
//!        evict the back of T1, put its id at the front of B1
//!   else evict the back of T2, put its id at the front of B2
//! ```
//! Rounding: none. `p` is a real number in `[0, c]` and `|B2| / |B1|`, `|B1| / |B2|` are
//! real quotients, as the paper defines them (the target is compared with `|T1|`, never
//! used as a count). On the OLTP trace this reproduces the paper's Table III to the
//! published two decimals at 2000, 5000, 10000 and 15000 pages and is 0.02 above it at
//! 1000 (38.95 against 38.93). Reading the quotients as integer divisions rounded down,
//! with a whole-page `p`, misses the table at every size, by up to 0.18 (39.06, 46.17,
//! 55.12, 61.92, 65.58 against 38.93, 46.08, 55.25, 61.87, 65.40); rounding up or to the
//! nearest page does not match either. See `tests/policies_arc_oltp.rs`.
//!
//! The engine asks for evictions only while memory is full, and ghosts exist only once
//! it has been, so the flows above run as printed: the ghost-hit cases REPLACE while the
//! new page does not fit, and case IV's A and B are tested when the first eviction is
//! asked for (`|T1| + |B1| + size(x) > c` is case A, and there `|B1| > 0` is `|T1| < c`).
//!
//! With sizes in bytes this is libCacheSim's `ARC` (commit aa0fc409,
//! `cache/eviction/ARC.c`): the lists count bytes, `p` is a target in bytes moved by the
//! same ratios (of the ghost lists' bytes, at least 1), and a ghost keeps its size.
//!
//! Per page: two `u32` links and one byte saying which list holds it.

use super::queued::{Queued, QueuesRule};
use super::queues::Queues;
use crate::mm::placement::engine::Memory;
use crate::mm::placement::{Effects, Request};
use crate::trace::PageId;

const T1: usize = 0;
const T2: usize = 1;
const B1: usize = 2;
const B2: usize = 3;

/// ARC's rule over its lists T1, T2, B1 and B2, each from MRU to LRU.
#[derive(Debug, Clone)]
pub struct ArcRule {
    capacity: u64,
    /// Target size of T1, in `[0, capacity]`; real, see the module documentation.
    p: f64,
    /// The ghost list the page of the latest request was found in.
    ghost_hit: Option<usize>,
}

pub type Arc = Queued<ArcRule>;

impl Arc {
    /// ARC for a memory of `capacity` units (pages, or bytes).
    pub fn new(capacity: usize, page_count_hint: usize) -> Self {
        let rule = ArcRule {
            capacity: capacity.max(1) as u64,
            p: 0.0,
            ghost_hit: None,
        };
        Queued::with_rule(rule, page_count_hint)
    }

    /// The current target size of T1, in units.
    pub fn target_t1(&self) -> f64 {
        self.rule().p
    }

    /// The lists `[T1, T2, B1, B2]`, each from MRU to LRU.
    pub fn lists(&self) -> [Vec<PageId>; 4] {
        [T1, T2, B1, B2].map(|list| self.pages(list))
    }
}

impl ArcRule {
    /// Take the back of the resident list `from` out of memory into the ghost list `to`
    /// (or forget it, with `to` = `None`).
    fn evict_back(q: &mut Queues, from: usize, to: Option<usize>, mem: &Memory, out: &mut Effects) {
        if let Some(victim) = q.pop_back(from, mem) {
            if let Some(ghosts) = to {
                q.push_front(ghosts, victim, mem);
            }
            out.evict(victim);
        }
    }

    /// REPLACE(x, p) of the paper; `x_in_b2` is "x in B2".
    fn replace(&self, q: &mut Queues, x_in_b2: bool, mem: &Memory, out: &mut Effects) {
        let t1 = q.units(T1);
        let t1_units = t1 as f64;
        // The paper's flows call this with memory full and |T1| < c, so T2 is never
        // empty here; taking T1 when it is keeps this total on any state.
        let from_t1 =
            t1 > 0 && (t1_units > self.p || (x_in_b2 && t1_units == self.p) || q.is_empty(T2));
        if from_t1 {
            Self::evict_back(q, T1, Some(B1), mem, out);
        } else {
            Self::evict_back(q, T2, Some(B2), mem, out);
        }
    }
}

impl QueuesRule for ArcRule {
    const QUEUES: usize = 4;
    const RESIDENT: &'static [usize] = &[T1, T2];

    // Case I.
    #[inline]
    fn hit(&mut self, q: &mut Queues, req: &Request, mem: &Memory, _out: &mut Effects) {
        q.move_to_front(T2, req.page, mem);
    }

    /// Cases II and III adapt the target and take x out of its ghost list.
    fn admit(&mut self, q: &mut Queues, req: &Request, mem: &Memory, _out: &mut Effects) -> bool {
        let c = self.capacity as f64;
        let (b1, b2) = (q.units(B1) as f64, q.units(B2) as f64);
        self.ghost_hit = match q.queue_of(req.page) {
            Some(B1) => {
                // b1 >= 1 here (x is in B1), unless x's size is 0: then infinity,
                // capped at c.
                let delta = if b1 >= b2 { 1.0 } else { b2 / b1 };
                self.p = (self.p + delta).min(c);
                Some(B1)
            }
            Some(B2) => {
                let delta = if b2 >= b1 { 1.0 } else { b1 / b2 };
                self.p = (self.p - delta).max(0.0);
                Some(B2)
            }
            _ => None,
        };
        if self.ghost_hit.is_some() {
            q.remove(req.page, mem);
        }
        req.size <= mem.capacity_total()
    }

    fn evict(&mut self, q: &mut Queues, req: &Request, mem: &Memory, out: &mut Effects) {
        if let Some(ghosts) = self.ghost_hit {
            // Cases II and III.
            self.replace(q, ghosts == B2, mem, out);
            return;
        }
        // Case IV.
        let c = self.capacity;
        if q.units(T1) + q.units(B1) + req.size > c {
            // Case A.
            if q.units(B1) > 0 {
                // Forget the back of B1.
                q.pop_back(B1, mem);
                self.replace(q, false, mem, out);
            } else {
                Self::evict_back(q, T1, None, mem, out);
            }
        } else {
            // Case B.
            let total = q.units(T1) + q.units(T2) + q.units(B1) + q.units(B2);
            if total >= c.saturating_mul(2) {
                // Forget the back of B2.
                q.pop_back(B2, mem);
            }
            self.replace(q, false, mem, out);
        }
    }

    fn insert(
        &mut self,
        _q: &mut Queues,
        _req: &Request,
        _mem: &Memory,
        _out: &mut Effects,
    ) -> usize {
        if self.ghost_hit.take().is_some() {
            T2
        } else {
            T1
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mm::placement::policies::testing::{
        check_outcome, engine, evictions, hit_pattern, run_pages,
    };

    #[test]
    fn ghost_hits_move_the_target() {
        // capacity 2, lists written [T1] [T2] [B1] [B2], MRU first; p starts at 0.
        //   1 2   misses (case IV, memory not full)     [2 1] [] [] []
        //   3     IV-A: |T1|+|B1| = 2 = c and |T1| = c: evict 1, not remembered
        //                                               [3 2] [] [] []
        //   2     hit, to T2                            [3] [2] [] []
        //   4     IV-B: total 2 >= c: REPLACE: |T1| 1 > p 0, 3 -> B1
        //                                               [4] [2] [3] []
        //   3     case II: |B1| 1 >= |B2| 0, p = 1; REPLACE: |T1| 1 = p, so T2's 2 -> B2;
        //         3 -> T2                               [4] [3] [] [2]
        //   2     case III: |B2| 1 >= |B1| 0, p = 0; REPLACE: |T1| 1 > 0, 4 -> B1;
        //         2 -> T2                               [] [2 3] [4] []
        let mut arc = engine(Arc::new(2, 0), 2);
        let outcome = run_pages(&mut arc, &[1, 2, 3, 2, 4, 3, 2]);
        assert_eq!(hit_pattern(&outcome), "mmmhmmm");
        assert_eq!(
            evictions(&outcome),
            vec![vec![], vec![], vec![1], vec![], vec![3], vec![2], vec![4]]
        );
        assert_eq!(arc.policy().lists(), [vec![], vec![2, 3], vec![4], vec![]]);
        assert_eq!(arc.policy().target_t1(), 0.0);
    }

    #[test]
    fn full_directory_forgets_b2_ghosts() {
        // capacity 2.
        //   1 2 1 2   T1 [] T2 [2 1]
        //   3         IV-B: total 2 >= c: REPLACE: T1 empty -> T2's 1 -> B2
        //                                         [3] [2] [] [1]
        //   1         case III: p stays 0 (max with 0); |T1| 1 > p: 3 -> B1
        //                                         [] [1 2] [3] []
        //   3         case II: |B1| 1 >= |B2| 0: p = 1; |T1| 0: T2's 2 -> B2
        //                                         [] [3 1] [] [2]
        //   4         IV-B: total 3 >= c, not 2c: REPLACE: T1 empty: 1 -> B2
        //                                         [4] [3] [] [1 2]
        //   5         IV-B: total 4 = 2c: forget 2; REPLACE: |T1| 1 = p 1, x not in B2:
        //             T2's 3 -> B2                [5 4] [] [] [3 1]
        //   1         case III: |B2| 2 >= |B1| 0: p = 0. REPLACE: |T1| 2 > 0: 4 -> B1
        //                                         [5] [1] [4] [3]
        let mut arc = engine(Arc::new(2, 0), 2);
        let outcome = run_pages(&mut arc, &[1, 2, 1, 2, 3, 1, 3, 4, 5, 1]);
        check_outcome(&outcome, "mmhhmmmmmm", &[1, 3, 2, 1, 3, 4]);
        assert_eq!(arc.policy().lists(), [vec![5], vec![1], vec![4], vec![3]]);
        assert_eq!(arc.policy().target_t1(), 0.0);
    }

    #[test]
    fn adaptation_steps_by_ghost_ratio() {
        // capacity 4. Fill T2 with 1..4 (each seen twice), then a scan of 5..12 pushes
        // T2's pages into B2 one by one while T1 churns into B1.
        let mut arc = engine(Arc::new(4, 0), 4);
        run_pages(&mut arc, &[1, 2, 3, 4, 1, 2, 3, 4]);
        assert_eq!(arc.policy().lists()[1], vec![4, 3, 2, 1]);
        //   5   IV-B, total 4: REPLACE: T1 empty: T2's 1 -> B2      T1 [5]
        //   6   IV-B, total 5: |T1| 1 > p 0: 5 -> B1               T1 [6]      B1 [5]
        //   7   IV-B, total 6: 6 -> B1                             B1 [6 5]
        //   8   IV-B, total 7: 7 -> B1                             B1 [7 6 5]  B2 [1]
        run_pages(&mut arc, &[5, 6, 7, 8]);
        assert_eq!(
            arc.policy().lists(),
            [vec![8], vec![4, 3, 2], vec![7, 6, 5], vec![1]]
        );
        // 5: case II, |B1| 3 >= |B2| 1: p = 1. REPLACE: |T1| 1 = p: T2's 2 -> B2.
        //    T1 [8] T2 [5 4 3] B1 [7 6] B2 [2 1]
        run_pages(&mut arc, &[5]);
        assert_eq!(arc.policy().target_t1(), 1.0);
        // 1: case III, |B2| 2 >= |B1| 2: p = 0. REPLACE: |T1| 1 > 0: 8 -> B1.
        //    T1 [] T2 [1 5 4 3] B1 [8 7 6] B2 [2]
        run_pages(&mut arc, &[1]);
        assert_eq!(arc.policy().target_t1(), 0.0);
        // 2: case III, |B2| 1 < |B1| 3: d2 = 3 / 1 = 3, p stays 0. REPLACE: T1 empty:
        //    T2's 3 -> B2.  T2 [2 1 5 4] B1 [8 7 6] B2 [3]
        run_pages(&mut arc, &[2]);
        assert_eq!(
            arc.policy().lists(),
            [vec![], vec![2, 1, 5, 4], vec![8, 7, 6], vec![3]]
        );
        // 6: case II, |B1| 3 >= |B2| 1: p = 1. REPLACE: T1 empty: 4 -> B2.
        //    T2 [6 2 1 5] B1 [8 7] B2 [4 3]
        // 7: case II, |B1| 2 >= |B2| 2: p = 2. 5 -> B2.  B1 [8] B2 [5 4 3]
        // 8: case II, |B1| 1 < |B2| 3: d1 = 3, p = min(5, 4) = 4. 1 -> B2.
        //    T2 [8 7 6 2] B1 [] B2 [1 5 4 3]
        run_pages(&mut arc, &[6, 7, 8]);
        assert_eq!(arc.policy().target_t1(), 4.0);
        assert_eq!(
            arc.policy().lists(),
            [vec![], vec![8, 7, 6, 2], vec![], vec![1, 5, 4, 3]]
        );
        // The directory is full (2c), so each new page forgets B2's back first.
        //   9    forget 3; |T1| 0: T2's 2 -> B2       T1 [9]        T2 [8 7 6]
        //   10   forget 4; |T1| 1 < p 4: 6 -> B2      T1 [10 9]     T2 [8 7]
        //   11   forget 5; 7 -> B2                    T1 [11 10 9]  T2 [8]   B2 [7 6 2 1]
        //   1    case III, |B2| 4 >= |B1| 0: p = 3. REPLACE: |T1| 3 = p and x in B2, so
        //        T1's 9 -> B1 (T2's 8 stays).         T1 [11 10]  T2 [1 8]  B1 [9]  B2 [7 6 2]
        let outcome = run_pages(&mut arc, &[9, 10, 11, 1]);
        assert_eq!(
            evictions(&outcome),
            vec![vec![2], vec![6], vec![7], vec![9]]
        );
        assert_eq!(arc.policy().target_t1(), 3.0);
        assert_eq!(
            arc.policy().lists(),
            [vec![11, 10], vec![1, 8], vec![9], vec![7, 6, 2]]
        );
    }

    #[test]
    fn target_moves_by_real_ghost_ratios() {
        // capacity 5. 1..5 twice fills T2; 6..11 churn through T1 into B1 (6 forgotten).
        //   T1 [11]  T2 [5 4 3 2]  B1 [10 9 8 7]  B2 [1]  p 0
        let mut arc = engine(Arc::new(5, 0), 5);
        run_pages(
            &mut arc,
            &[1, 2, 3, 4, 5, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11],
        );
        assert_eq!(
            arc.policy().lists(),
            [vec![11], vec![5, 4, 3, 2], vec![10, 9, 8, 7], vec![1]]
        );
        //   7    case II, |B1| 4 >= |B2| 1: p = 1; |T1| 1 = p: T2's 2 -> B2
        //   8    case II, |B1| 3 >= |B2| 2: p = 2; T2's 3 -> B2
        //   9    case II, |B1| 2 <  |B2| 3: p = 2 + 3/2 = 3.5; T2's 4 -> B2
        //   12   directory full: forget 1; |T1| 1 < p: T2's 5 -> B2
        //        T1 [12 11]  T2 [9 8 7]  B1 [10]  B2 [5 4 3 2]
        //   2    case III, |B2| 4 >= |B1| 1: p = 2.5; |T1| 2 is neither above nor equal to
        //        p, so T2's 7 -> B2 (with p rounded to 2, T1's 11 would go instead)
        let outcome = run_pages(&mut arc, &[7, 8, 9, 12, 2]);
        assert_eq!(
            evictions(&outcome),
            vec![vec![2], vec![3], vec![4], vec![5], vec![7]]
        );
        assert_eq!(arc.policy().target_t1(), 2.5);
        assert_eq!(
            arc.policy().lists(),
            [vec![12, 11], vec![2, 9, 8], vec![10], vec![7, 5, 4, 3]]
        );
    }
}
