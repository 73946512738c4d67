//! 2Q, the full version: a page must prove itself twice before it enters the main LRU.
//!
//! Source: T. Johnson and D. Shasha, "2Q: A Low Overhead High Performance Buffer
//! Management Replacement Algorithm", VLDB 1994, section 2 ("Full Version").
//!
//! Three queues: `A1in`, a FIFO of resident pages seen once recently; `A1out`, a FIFO of
//! the ids of pages pushed out of `A1in` (ghosts: not resident, not counted in the
//! capacity); `Am`, an LRU of resident pages referenced again after leaving `A1in`.
//!
//! ```text
//! on access(p):
//!   if p in Am:    move p to the front of Am; hit
//!   if p in A1in:  hit                                    (A1in is FIFO: no reordering)
//!   if p in A1out: remove p from A1out; while full: reclaim(); put p at the front of Am
//!                  (first evicting the back of Am while Am would exceed c - Kin); miss
//!   else:          while full: reclaim(); put p at the front of A1in; miss
//!
//! reclaim():
//!   if |A1in| > Kin: evict the back of A1in, put its id at the front of A1out,
//!                    first forgetting the back of A1out while it would exceed Kout
//!   else:            evict the back of Am                 (not remembered)
//! ```
//! `p` leaves `A1out` before the reclaim, so the reclaim's own ghost cannot push `p` out
//! of the queue it was just found in. With pages, `A1in` never holds less than `Kin`
//! once memory is full (it only loses pages while above `Kin`), so `Am` never exceeds
//! `c - Kin` and its bound never evicts.
//!
//! With sizes in bytes this is libCacheSim's `TwoQ` (commit aa0fc409,
//! `cache/eviction/TwoQ.c`, `Ain-size-ratio=0.25,Aout-size-ratio=0.5`): the queues count
//! bytes, a ghost keeps its size (one larger than `Kout` is not remembered), a page
//! larger than `Kin` is not admitted, and `Am` is an LRU of `c - Kin` bytes, which a
//! returning ghost may overfill (`A1in` can fall below `Kin` in bytes), evicting its
//! back.
//!
//! Sizes: the paper recommends `Kin` = 25% and `Kout` = 50% of the buffer, which is
//! [`TwoQ::new`]; [`TwoQ::with_fractions`] takes others. A fraction of `c` units is
//! rounded to the nearest unit (libCacheSim rounds down: the same when `c` is a multiple
//! of 4), then `Kin` is kept in `1..=c-1` and `Kout` at least 1:
//! - `Kin >= 1` so a new page survives at least one more miss in `A1in`;
//! - `Kin <= c - 1` so that, when memory is full and `|A1in| <= Kin`, `Am` is not empty
//!   and the reclaim has a victim (for `c = 1` this makes `Kin = 0`: the one frame goes to
//!   whichever page came last, and `Am` keeps it only while `A1in` is empty);
//! - `Kout >= 1` so a page can ever reach `Am`; with no ghosts 2Q would be FIFO.
//!
//! Note that `A1in` holds up to `Kin + 1` pages: the reclaim runs before the new page
//! enters, and only trims `A1in` when it is strictly above `Kin`, as in the paper.
//!
//! Per page: two `u32` links and one byte saying which queue holds it. A page is admitted
//! if it is no larger than `Kin` (at least one unit, so that one page of memory holds the
//! latest page).

use super::queued::{Queued, QueuesRule};
use super::queues::Queues;
use crate::mm::placement::engine::Memory;
use crate::mm::placement::{Effects, Request};
use crate::trace::PageId;
use crate::{Error, Result};

const A1IN: usize = 0;
const A1OUT: usize = 1;
const AM: usize = 2;

/// 2Q's rule over its queues `A1in`, `A1out` and `Am` (newest, or most recently used,
/// first).
#[derive(Debug, Clone)]
pub struct TwoQRule {
    kin: u64,
    kout: u64,
    /// `Am`'s size: the capacity less `Kin`.
    am_size: u64,
    /// The page of the latest request was found in `A1out`.
    from_ghost: bool,
}

pub type TwoQ = Queued<TwoQRule>;

/// The paper's recommended share of the buffer for `A1in`.
pub const DEFAULT_KIN_FRACTION: f64 = 0.25;
/// The paper's recommended number of `A1out` ghosts, as a share of the buffer.
pub const DEFAULT_KOUT_FRACTION: f64 = 0.5;

impl TwoQ {
    /// 2Q with the paper's recommended sizes: `Kin` 25%, `Kout` 50% of `capacity` units.
    pub fn new(capacity: usize, page_count_hint: usize) -> Self {
        let capacity = capacity.max(1);
        let (kin, kout) = queue_sizes(capacity, DEFAULT_KIN_FRACTION, DEFAULT_KOUT_FRACTION);
        Self::with_sizes(capacity, kin, kout, page_count_hint)
    }

    /// 2Q with `Kin` and `Kout` given as fractions of `capacity` (`Kout` may exceed 1:
    /// ghosts cost no memory of the simulated device).
    ///
    /// # Errors
    /// A [`Error::Config`] if a fraction is not a finite number, is negative, or if the
    /// `Kin` fraction is 1 or more (`A1in` would leave no room for `Am`).
    pub fn with_fractions(
        capacity: usize,
        page_count_hint: usize,
        kin_fraction: f64,
        kout_fraction: f64,
    ) -> Result<Self> {
        for (name, value) in [("Kin", kin_fraction), ("Kout", kout_fraction)] {
            if !value.is_finite() || value < 0.0 {
                return Err(Error::config(
                    "policy 2q",
                    format!("{name} fraction must be a finite number >= 0, got {value}"),
                ));
            }
        }
        if kin_fraction >= 1.0 {
            return Err(Error::config(
                "policy 2q",
                format!(
                    "Kin fraction must be below 1 (A1in shares memory with Am), got {kin_fraction}"
                ),
            ));
        }
        let capacity = capacity.max(1);
        let (kin, kout) = queue_sizes(capacity, kin_fraction, kout_fraction);
        Ok(Self::with_sizes(capacity, kin, kout, page_count_hint))
    }

    fn with_sizes(capacity: usize, kin: usize, kout: usize, page_count_hint: usize) -> Self {
        let rule = TwoQRule {
            kin: kin as u64,
            kout: kout as u64,
            am_size: (capacity - kin) as u64,
            from_ghost: false,
        };
        Queued::with_rule(rule, page_count_hint)
    }

    /// `(Kin, Kout)` in units.
    pub fn queue_limits(&self) -> (u64, u64) {
        (self.rule().kin, self.rule().kout)
    }

    /// `A1in` from newest to oldest.
    pub fn a1in(&self) -> Vec<PageId> {
        self.pages(A1IN)
    }

    /// `A1out` (ghost ids) from newest to oldest.
    pub fn a1out(&self) -> Vec<PageId> {
        self.pages(A1OUT)
    }

    /// `Am` from most to least recently used.
    pub fn am(&self) -> Vec<PageId> {
        self.pages(AM)
    }
}

/// Round the fractions of `capacity` (at least 1) to the queue limits described in the
/// module documentation.
fn queue_sizes(capacity: usize, kin_fraction: f64, kout_fraction: f64) -> (usize, usize) {
    let pages = |fraction: f64| (fraction * capacity as f64).round() as usize;
    let kin = pages(kin_fraction).max(1).min(capacity - 1);
    let kout = pages(kout_fraction).max(1);
    (kin, kout)
}

impl QueuesRule for TwoQRule {
    const QUEUES: usize = 3;
    const RESIDENT: &'static [usize] = &[A1IN, AM];

    #[inline]
    fn hit(&mut self, q: &mut Queues, req: &Request, mem: &Memory, _out: &mut Effects) {
        // A1in is a FIFO: a hit there changes nothing.
        if q.queue_of(req.page) == Some(AM) {
            q.move_to_front(AM, req.page, mem);
        }
    }

    #[inline]
    fn admit(&mut self, q: &mut Queues, req: &Request, mem: &Memory, _out: &mut Effects) -> bool {
        self.from_ghost = q.queue_of(req.page) == Some(A1OUT);
        if self.from_ghost {
            q.remove(req.page, mem);
        }
        req.size <= self.kin.max(1) && req.size <= mem.capacity_total()
    }

    /// reclaim() of the module documentation. The fallbacks to the other queue only
    /// matter if the size bounds were violated; they keep the capacity promise whatever
    /// happens.
    fn evict(&mut self, q: &mut Queues, _req: &Request, mem: &Memory, out: &mut Effects) {
        if q.units(A1IN) > self.kin || q.is_empty(AM) {
            if let Some(victim) = q.pop_back(A1IN, mem) {
                out.evict(victim);
                q.remember(A1OUT, victim, self.kout, mem);
                return;
            }
        }
        if let Some(victim) = q.pop_back(AM, mem) {
            out.evict(victim);
        }
    }

    #[inline]
    fn insert(&mut self, q: &mut Queues, req: &Request, mem: &Memory, out: &mut Effects) -> usize {
        if std::mem::take(&mut self.from_ghost) {
            while q.units(AM) + req.size > self.am_size {
                let Some(victim) = q.pop_back(AM, mem) else {
                    break;
                };
                out.evict(victim);
            }
            AM
        } else {
            A1IN
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
    fn queue_limits_round_and_stay_usable() {
        // c = 1: Kin 0 (Kin <= c - 1), Kout 1.
        assert_eq!(TwoQ::new(1, 0).queue_limits(), (0, 1));
        // c = 2: 0.5 rounds to 1; Kout 1.
        assert_eq!(TwoQ::new(2, 0).queue_limits(), (1, 1));
        // c = 3: 0.75 -> 1, 1.5 -> 2.
        assert_eq!(TwoQ::new(3, 0).queue_limits(), (1, 2));
        // c = 4: exactly 1 and 2.
        assert_eq!(TwoQ::new(4, 0).queue_limits(), (1, 2));
        // c = 10: 2.5 -> 3, 5.
        assert_eq!(TwoQ::new(10, 0).queue_limits(), (3, 5));
        assert_eq!(TwoQ::new(1000, 0).queue_limits(), (250, 500));
        // Explicit fractions: 0 is raised to one page; Kout may exceed the capacity.
        let two_q = TwoQ::with_fractions(8, 0, 0.0, 2.0).unwrap();
        assert_eq!(two_q.queue_limits(), (1, 16));
        assert!(TwoQ::with_fractions(8, 0, 1.0, 0.5).is_err());
        assert!(TwoQ::with_fractions(8, 0, 0.25, f64::NAN).is_err());
        assert!(TwoQ::with_fractions(8, 0, -0.1, 0.5).is_err());
    }

    #[test]
    fn second_reference_after_a1out_promotes_to_am() {
        // capacity 4: Kin 1, Kout 2. Queues written newest first.
        //   1 2 3 4  misses, all to A1in (free frames)     A1in [4 3 2 1]
        //   2        hit in A1in, no reordering
        //   5        miss, |A1in| 4 > 1: evict 1 -> A1out   A1in [5 4 3 2]  A1out [1]
        //   1        miss, ghost hit: evict 2 -> A1out,
        //            1 -> Am                                A1in [5 4 3]  A1out [2]  Am [1]
        //   6        miss, evict 3 -> A1out                 A1in [6 5 4]  A1out [3 2]  Am [1]
        //   7        miss, evict 4 -> A1out, forget 2       A1in [7 6 5]  A1out [4 3]  Am [1]
        //   1        hit in Am
        //   2        miss (forgotten): evict 5 -> A1out, forget 3
        //                                                   A1in [2 7 6]  A1out [5 4]  Am [1]
        let mut two_q = engine(TwoQ::new(4, 0), 4);
        let outcome = run_pages(&mut two_q, &[1, 2, 3, 4, 2, 5, 1, 6, 7, 1, 2]);
        assert_eq!(hit_pattern(&outcome), "mmmmhmmmmhm");
        let evicted: Vec<PageId> = evictions(&outcome).concat();
        assert_eq!(evicted, vec![1, 2, 3, 4, 5]);
        assert_eq!(two_q.policy().a1in(), vec![2, 7, 6]);
        assert_eq!(two_q.policy().a1out(), vec![5, 4]);
        assert_eq!(two_q.policy().am(), vec![1]);
        assert_eq!(two_q.memory().tier_of(5), None);
        assert_eq!(two_q.memory().used_total(), 4);
    }

    #[test]
    fn am_is_lru_and_evicted_when_a1in_is_small() {
        // capacity 4: Kin 1, Kout 2.
        //   1 2 3 4 5          A1in [5 4 3 2]  A1out [1]        (1 evicted)
        //   1                  ghost hit: evict 2; Am [1]; A1in [5 4 3]; A1out [2]
        //   2                  ghost hit: evict 3; Am [2 1]; A1in [5 4]; A1out [3]
        //   3                  ghost hit: evict 4; Am [3 2 1]; A1in [5]; A1out [4]
        //   1                  hit, Am [1 3 2]
        //   6                  |A1in| 1 = Kin: evict Am's LRU 2 (not remembered)
        //                      A1in [6 5]  Am [1 3]  A1out [4]
        let mut two_q = engine(TwoQ::new(4, 0), 4);
        let outcome = run_pages(&mut two_q, &[1, 2, 3, 4, 5, 1, 2, 3, 1, 6]);
        check_outcome(&outcome, "mmmmmmmmhm", &[1, 2, 3, 4, 2]);
        assert_eq!(two_q.policy().a1in(), vec![6, 5]);
        assert_eq!(two_q.policy().am(), vec![1, 3]);
        assert_eq!(two_q.policy().a1out(), vec![4]);
    }

    #[test]
    fn capacity_one_keeps_one_page() {
        // c = 1: Kin 0, Kout 1.
        //   1     A1in [1]
        //   2     |A1in| 1 > 0: evict 1 -> A1out [1]; A1in [2]
        //   1     ghost hit: evict 2 -> A1out [2]; Am [1]
        //   1     hit
        //   3     |A1in| 0, evict Am's 1; A1in [3]
        let mut two_q = engine(TwoQ::new(1, 0), 1);
        let outcome = run_pages(&mut two_q, &[1, 2, 1, 1, 3]);
        check_outcome(&outcome, "mmmhm", &[1, 2, 1]);
        assert_eq!(two_q.policy().a1in(), vec![3]);
        assert_eq!(two_q.policy().a1out(), vec![2]);
        assert!(two_q.policy().am().is_empty());
    }
}
