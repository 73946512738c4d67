//! LeCaR: two experts, LRU and LFU, each naming a victim; one of them is picked at
//! random by weights that regret learns from: a page requested again after an expert
//! evicted it lowers that expert's weight.
//!
//! Source: G. Vietri, L. V. Rodriguez, W. A. Martinez, S. Lyons, J. Liu, R. Rangaswami,
//! M. Zhao and G. Narasimhan, "Driving Cache Replacement with ML-based LeCaR", USENIX
//! HotStorage 2018. The variant is libCacheSim's `LeCaR` (commit aa0fc409,
//! `cache/eviction/LeCaR.c`) at its defaults: learning rate 0.45, discount rate
//! `0.005^(1/C)` for a memory of `C`, weights starting at 0.5 each, and a history of
//! evicted pages per expert of at most `C / 2` (integer division), in the run's unit.
//!
//! ```text
//! on access(x), the n-th request:
//!   x resident:  move x to the LRU front; count[x] += 1; hit
//!   else:
//!     if x is in an expert's history (evicted by it at request e):
//!       r = dr^(n - e)
//!       w_that = w_that exp(-0.45 r) + 1e-10; s = w_that + w_other + 2e-10
//!       w_that = w_that / s; w_other = (w_other + 1e-10) / s
//!       x leaves that history
//!     while full: evict()
//!     put x at the LRU front; count[x] = 1; miss
//!
//! evict():
//!   a = the LRU back; b = the LFU victim (least count; of those, the one that reached
//!       it first)
//!   if a = b: evict it, into no history (no random number is drawn)
//!   else: r = (rand() mod 100) / 100; evict a into LRU's history if r < w_lru, else b
//!         into LFU's
//!   an expert's history is a FIFO: while its pages' sizes pass C / 2, its oldest goes
//! ```
//! `rand` is libCacheSim's generator ([`super::rand`]), which its simulator starts at 0
//! for each cache of a run of several; so this gives libCacheSim's miss ratios
//! (`tests/policies_libcachesim.rs`). The arithmetic is libCacheSim's, in the same
//! order, with the same `pow` and `exp`.
//!
//! Per page: two `u32` links (the LRU list or a history), LFU's bucket state
//! ([`super::lfu`]), and in one `u64` its state and the request of its eviction (a page
//! evicted is looked up once more on its return; one word, one cache line). Sizes are
//! the engine's ([`Memory::size_of`]), which keeps a page's after it leaves.

use super::lfu::Lfu;
use super::rand::Lcg;
use crate::core::ensure_index;
use crate::core::list::{Links, List};
use crate::mm::placement::engine::Memory;
use crate::mm::placement::{CachePolicy, Effects, Request, Tier};
use crate::trace::PageId;

/// The learning rate.
pub const LEARNING_RATE: f64 = 0.45;
/// The discount rate is this to the power `1 / C`.
pub const DISCOUNT_BASE: f64 = 0.005;
/// Each expert's starting weight.
pub const START_WEIGHT: f64 = 0.5;

/// Where a page is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Gone,
    Resident,
    /// In LRU's history: LRU evicted it.
    LruHistory,
    LfuHistory,
}

/// A page's [`State`] (the low two bits) and the request at which it was last evicted
/// (below 2^62).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Meta(u64);

impl Meta {
    const GONE: Meta = Meta(0);

    fn new(state: State, evicted_at: u64) -> Self {
        Meta(evicted_at << 2 | state as u64)
    }

    fn state(self) -> State {
        match self.0 & 3 {
            0 => State::Gone,
            1 => State::Resident,
            2 => State::LruHistory,
            _ => State::LfuHistory,
        }
    }

    fn evicted_at(self) -> u64 {
        self.0 >> 2
    }

    fn with_state(self, state: State) -> Self {
        Meta(self.0 & !3 | state as u64)
    }
}

#[derive(Debug, Clone)]
pub struct LeCaR {
    /// The LRU list (front = most recent) and the two histories (front = newest) share
    /// one arena: a page is on one of them at most.
    links: Links,
    lru: List,
    lru_history: List,
    lfu_history: List,
    lfu: Lfu,
    meta: Vec<Meta>,
    /// Sizes of the pages in each history.
    lru_history_size: u64,
    lfu_history_size: u64,
    /// A history's most size: `C / 2`.
    history_limit: u64,
    w_lru: f64,
    w_lfu: f64,
    discount: f64,
    /// Requests so far, this one included.
    requests: u64,
    rand: Lcg,
}

impl LeCaR {
    /// LeCaR for a memory of `capacity` in the run's unit (pages or bytes).
    pub fn new(capacity: u64, page_count_hint: usize) -> Self {
        LeCaR {
            links: Links::with_pages(page_count_hint),
            lru: List::new(),
            lru_history: List::new(),
            lfu_history: List::new(),
            lfu: Lfu::new(page_count_hint),
            meta: vec![Meta::GONE; page_count_hint],
            lru_history_size: 0,
            lfu_history_size: 0,
            history_limit: capacity / 2,
            w_lru: START_WEIGHT,
            w_lfu: START_WEIGHT,
            discount: DISCOUNT_BASE.powf(1.0 / capacity.max(1) as f64),
            requests: 0,
            rand: Lcg::default(),
        }
    }

    /// The experts' weights: (LRU, LFU).
    pub fn weights(&self) -> (f64, f64) {
        (self.w_lru, self.w_lfu)
    }

    /// The pages in each history, newest first: (LRU's, LFU's).
    pub fn histories(&self) -> (Vec<PageId>, Vec<PageId>) {
        (
            self.links.iter(&self.lru_history).collect(),
            self.links.iter(&self.lfu_history).collect(),
        )
    }

    /// Lower `penalised`'s weight for a page requested `t` requests after it evicted it.
    fn regret(t: u64, discount: f64, penalised: &mut f64, other: &mut f64) {
        let r = discount.powf(t as f64);
        *penalised = *penalised * (-LEARNING_RATE * r).exp() + 1e-10;
        let s = *penalised + *other + 2e-10;
        *penalised /= s;
        *other = (*other + 1e-10) / s;
    }

    /// Bring into the cache what the next eviction reads of the pages it may take (each
    /// expert's victim) and of the oldest page of each history, a few requests ahead of
    /// it: victims and the oldest are pages long unused, their entries out of the cache.
    /// A hint, for the end of an eviction.
    fn prefetch_victims(&self, mem: &Memory) {
        let meta = |page: PageId| {
            crate::core::prefetch::prefetch(&self.meta, page as usize);
            mem.pages().prefetch(page);
        };
        if let Some(back) = self.lru.back() {
            meta(back);
            self.lfu.prefetch(back, mem);
            if let Some(before) = self.links.prev_of(back) {
                self.links.prefetch(before);
            }
        }
        if let Some(victim) = self.lfu.victim() {
            meta(victim);
            self.links.prefetch(victim);
        }
        self.lfu.prefetch_victim(mem);
        for history in [&self.lru_history, &self.lfu_history] {
            if let Some(oldest) = history.back() {
                meta(oldest);
                self.links.prefetch(oldest);
            }
        }
    }

    /// Forget `page`'s place in a history.
    fn leave_history(&mut self, page: PageId, mem: &Memory) {
        let meta = self.meta[page as usize];
        match meta.state() {
            State::LruHistory => {
                self.links.remove(&mut self.lru_history, page);
                self.lru_history_size -= mem.size_of(page);
            }
            State::LfuHistory => {
                self.links.remove(&mut self.lfu_history, page);
                self.lfu_history_size -= mem.size_of(page);
            }
            State::Gone | State::Resident => return,
        }
        self.meta[page as usize] = meta.with_state(State::Gone);
    }
}

impl CachePolicy for LeCaR {
    #[inline]
    fn hit(&mut self, req: &Request, mem: &Memory, out: &mut Effects) {
        self.requests += 1;
        self.links.move_to_front(&mut self.lru, req.page);
        self.lfu.hit(req, mem, out);
    }

    fn admit(&mut self, req: &Request, mem: &Memory, _out: &mut Effects) -> bool {
        self.requests += 1;
        let page = req.page;
        ensure_index(&mut self.meta, page, Meta::GONE);
        let meta = self.meta[page as usize];
        let t = self.requests - meta.evicted_at();
        match meta.state() {
            State::LruHistory => {
                Self::regret(t, self.discount, &mut self.w_lru, &mut self.w_lfu);
            }
            State::LfuHistory => {
                Self::regret(t, self.discount, &mut self.w_lfu, &mut self.w_lru);
            }
            State::Gone | State::Resident => {}
        }
        self.leave_history(page, mem);
        req.size <= mem.capacity_total()
    }

    fn evict(&mut self, _req: &Request, mem: &Memory, out: &mut Effects) {
        let Some(lru_victim) = self.lru.back() else {
            return;
        };
        let lfu_victim = self.lfu.victim().unwrap_or(lru_victim);
        let (victim, history) = if lru_victim == lfu_victim {
            (lru_victim, State::Gone)
        } else if ((self.rand.draw() % 100) as f64 / 100.0) < self.w_lru {
            (lru_victim, State::LruHistory)
        } else {
            (lfu_victim, State::LfuHistory)
        };
        self.links.remove(&mut self.lru, victim);
        self.lfu.remove(victim, mem);
        out.evict(victim);
        self.meta[victim as usize] = Meta::new(history, self.requests);
        let size = mem.size_of(victim);
        let (list, used) = match history {
            State::LruHistory => (&mut self.lru_history, &mut self.lru_history_size),
            State::LfuHistory => (&mut self.lfu_history, &mut self.lfu_history_size),
            State::Gone | State::Resident => {
                self.prefetch_victims(mem);
                return;
            }
        };
        self.links.push_front(list, victim);
        *used += size;
        while *used > self.history_limit {
            let Some(oldest) = self.links.pop_back(list) else {
                break;
            };
            *used -= mem.size_of(oldest);
            let meta = &mut self.meta[oldest as usize];
            *meta = meta.with_state(State::Gone);
        }
        self.prefetch_victims(mem);
    }

    fn insert(&mut self, req: &Request, mem: &Memory, out: &mut Effects) -> Tier {
        let page = req.page;
        ensure_index(&mut self.meta, page, Meta::GONE);
        let meta = &mut self.meta[page as usize];
        *meta = meta.with_state(State::Resident);
        self.links.push_front(&mut self.lru, page);
        self.lfu.insert(req, mem, out);
        Tier::Dram
    }

    fn remove(&mut self, page: PageId, mem: &Memory) {
        if self.holds(page).is_none() {
            return;
        }
        self.links.remove(&mut self.lru, page);
        self.lfu.remove(page, mem);
        let meta = &mut self.meta[page as usize];
        *meta = meta.with_state(State::Gone);
    }

    fn holds(&self, page: PageId) -> Option<Tier> {
        self.meta
            .get(page as usize)
            .is_some_and(|meta| meta.state() == State::Resident)
            .then_some(Tier::Dram)
    }

    #[inline]
    fn prefetch(&self, page: PageId, mem: &Memory) {
        self.links.prefetch(page);
        crate::core::prefetch::prefetch(&self.meta, page as usize);
        self.lfu.prefetch(page, mem);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::mix64;
    use crate::mm::placement::policies::testing::*;

    #[test]
    fn experts_that_agree_draw_nothing_and_keep_no_history() {
        // capacity 2: 1 2 are both LRU's and LFU's victims in turn (counts all 1, the
        // LRU back is the first to reach count 1): no random number is drawn.
        let mut lecar = engine(LeCaR::new(2, 0), 2);
        let outcome = run_pages(&mut lecar, &[1, 2, 3, 4]);
        assert_eq!(hit_pattern(&outcome), "mmmm");
        assert_eq!(eviction_steps(&outcome), vec![(2, 1), (3, 2)]);
        assert_eq!(lecar.policy().histories(), (vec![], vec![]));
        assert_eq!(lecar.policy().weights(), (0.5, 0.5));
    }

    #[test]
    fn a_regretted_eviction_lowers_its_experts_weight() {
        // capacity 2: 1 1 2 gives 1 count 2, 2 count 1; LRU names 1, LFU names 2.
        // The first draw, 1442695040888963407 mod 100 = 7, is 0.07 < 0.5: LRU's 1 goes
        // into LRU's history at request 4. Requesting 1 at request 5 penalises LRU with
        // t = 1.
        let mut lecar = engine(LeCaR::new(2, 0), 2);
        let outcome = run_pages(&mut lecar, &[1, 1, 2, 3]);
        assert_eq!(eviction_steps(&outcome), vec![(3, 1)]);
        assert_eq!(lecar.policy().histories(), (vec![1], vec![]));
        run_pages(&mut lecar, &[1]);
        let discount = DISCOUNT_BASE.powf(0.5);
        let mut w = (START_WEIGHT, START_WEIGHT);
        LeCaR::regret(1, discount, &mut w.0, &mut w.1);
        assert_eq!(lecar.policy().weights(), w);
        assert!(w.0 < 0.5 && w.1 > 0.5, "{w:?}");
        assert!((w.0 + w.1 - 1.0).abs() < 1e-9);
    }

    #[test]
    fn histories_hold_at_most_half_of_memory() {
        let mut lecar = engine(LeCaR::new(10, 0), 10);
        for (i, page) in hot_and_cold(0, 20_000, 12, 200).into_iter().enumerate() {
            lecar.access(&read(page)).unwrap();
            lecar.check_agreement().unwrap();
            let (lru, lfu) = lecar.policy().histories();
            assert!(lru.len() <= 5 && lfu.len() <= 5, "{lru:?} {lfu:?}");
            for p in lru.iter().chain(&lfu) {
                assert!(lecar.policy().holds(*p).is_none(), "{p} is resident");
            }
            let x = mix64(i as u64);
            if x.is_multiple_of(11) {
                lecar.remove(((x >> 20) % 200) as PageId);
            }
        }
        let (w_lru, w_lfu) = lecar.policy().weights();
        assert!((w_lru + w_lfu - 1.0).abs() < 1e-6, "{w_lru} {w_lfu}");
        assert!(w_lru != START_WEIGHT, "the weights learned nothing");
    }
}
