//! CACHEUS: two experts, a scan-resistant LRU (SR-LRU) and a churn-resistant LFU
//! (CR-LFU), each naming a victim; one of them is picked at random by weights that
//! regret learns from, at a learning rate that itself adapts to the hit rate.
//!
//! Source: L. V. Rodriguez, F. Yusuf, S. Lyons, E. Paz, R. Rangaswami, J. Liu, M. Zhao
//! and G. Narasimhan, "Learning Cache Replacement with CACHEUS", FAST 2021. The variant
//! is libCacheSim's `Cacheus` (commit aa0fc409: `cache/eviction/Cacheus.c`, `SR_LRU.c`,
//! `CR_LFU.c`), with what its code does where it differs from the paper, so that this
//! gives its miss counts (`tests/policies_libcachesim.rs`).
//!
//! For a memory of `C` (pages, or bytes), in the run's unit:
//!
//! ```text
//! SR-LRU: R (pages hit again or back from history), SR (pages seen once, and pages
//!   R pushed out), each a list with the front most recent; H, a history of pages
//!   SR-LRU let go, newest first, with the count CR-LFU had for each.
//!   |R| <= C/2 and |SR| <= C/2 (integer division), |H| < C
//! CR-LFU: resident pages by count; the victim is the page of least count that reached
//!   it last
//! two ghost lists of C/2, newest first: pages evicted by SR-LRU's choice, by CR-LFU's
//! w_lru = w_lfu = 0.5; lr = 0.001 + (rand() mod 1000) / 1000, drawn when made
//!
//! on access(x), the n-th request:
//!   x resident (hit):
//!     CR-LFU: count[x] += 1
//!     x in R: x to R's front
//!     x in SR: x to R's front; while |R| > C/2: R's back to SR's front
//!   else (miss):
//!     if x is in a ghost list: that expert's weight *= exp(-lr)
//!     w_lru = w_lru / (w_lru + w_lfu); w_lfu = 1 - w_lru; x leaves the ghost lists
//!     while full: evict()
//!     CR-LFU: count[x] = its count in H + 1 if x is in H, else 1
//!     x in H: x leaves H; while |R| + size(x) > C/2: R's back to SR's front
//!             x to R's front
//!     else:   x to SR's front
//!     while |SR| > C/2: SR's back y into H (with its count) and out of memory
//!   after the request, when n is a multiple of C: update_lr()
//!
//! evict():
//!   a = SR's back (R's if SR is empty); b = CR-LFU's victim
//!   r = (rand() mod 100) / 100, drawn at every eviction
//!   a = b:          it goes into H with its count; no ghost
//!   else r < w_lru: a goes into H with its count, and into SR-LRU's ghost list
//!   else:           b goes into H with its count, and into CR-LFU's ghost list
//!   H keeps fewer than C: its oldest go
//!
//! update_lr(): with h = hits since the last update / C, in integers (so 0 unless every
//!   request hit), d_h = h - h_prev, d_lr = lr - lr_prev:
//!   d_lr != 0: s = 1 if d_h / d_lr > 0 else -1; lr = lr + s |lr d_lr|, or 0.0001 if
//!              that is not above 0.001
//!   else:      h = 0 or d_h <= 0: one more update without learning; after 10 of
//!              them, lr is drawn again as at the start
//! ```
//!
//! Where libCacheSim's code differs from the paper, this follows it:
//! - SR-LRU's sizes do not adapt. The paper moves the boundary between R and SR when a
//!   demoted page is hit or a page new to the cache comes back from history; libCacheSim
//!   reads both marks from entries it has just made (its fresh entries are zeroed), so
//!   neither ever holds and R and SR stay at `C / 2` each;
//! - the hit rate is computed in integers (`num_hit / update_interval`), so it is 0
//!   unless every request of an interval hit, and the learning rate mostly shrinks;
//! - a random number is drawn at every eviction, also when the experts agree.
//!
//! `rand` is libCacheSim's generator ([`super::rand`]). Its simulator starts it at 0
//! for each cache of a run of several, for the evictions; the first learning rate is
//! drawn earlier, when `cachesim` makes its caches one after another from one
//! generator, so the k-th cache of a command starts from the k-th draw. This takes the
//! first draw, 0.408, as the first cache of a command has it.
//!
//! Decided here: `remove` (a page taken out for another reason) forgets the page without
//! a place in H, as [`CachePolicy::remove`] asks, where libCacheSim's keeps one; with
//! sizes in bytes, a page larger than SR's half (R's, if it is in H) is refused before
//! anything is evicted, where libCacheSim evicts for it and then does not insert it; R
//! and SR hold at least 1 each, so that a memory of one page holds a page, where
//! libCacheSim's halves of 0 admit nothing.
//!
//! Per page: two tagged list memberships (R, SR or H; a ghost list), CR-LFU's bucket
//! state ([`super::lfu`]), its size and its count in H.

use super::lfu::{Lfu, Ties};
use super::rand::Lcg;
use crate::core::ensure_index;
use crate::core::list::TaggedLists;
use crate::mm::placement::engine::Memory;
use crate::mm::placement::{CachePolicy, Effects, Request, Tier};
use crate::trace::PageId;

/// Each expert's starting weight.
pub const START_WEIGHT: f64 = 0.5;
/// Updates of the learning rate without learning after which it is drawn again.
pub const UNLEARN_LIMIT: i64 = 10;

/// SR-LRU's lists.
const R: usize = 0;
const SR: usize = 1;
const H: usize = 2;
/// The ghost lists of the pages each expert chose to evict.
const LRU_GHOSTS: usize = 0;
const LFU_GHOSTS: usize = 1;

/// A learning rate drawn from `rand`: 0.001 to 1.
fn draw_learning_rate(rand: &mut Lcg) -> f64 {
    0.001 + (rand.draw() % 1000) as f64 / 1000.0
}

#[derive(Debug, Clone)]
pub struct Cacheus {
    /// R, SR and H.
    lists: TaggedLists,
    /// Sizes of R, SR and H.
    used: [u64; 3],
    /// Most size of R and of SR: `C / 2`, at least 1.
    half: u64,
    /// H holds less than this: `C`.
    history_limit: u64,
    lfu: Lfu,
    ghosts: TaggedLists,
    ghost_used: [u64; 2],
    ghost_limit: u64,
    /// CR-LFU's count of a page in H when it left.
    count_in_history: Vec<u64>,
    size: Vec<u64>,
    w_lru: f64,
    w_lfu: f64,
    lr: f64,
    lr_previous: f64,
    hit_rate_previous: f64,
    unlearned: i64,
    hits: u64,
    /// The learning rate is updated every this many requests: `C`.
    update_interval: u64,
    /// Requests so far.
    requests: u64,
    rand: Lcg,
}

impl Cacheus {
    /// CACHEUS for a memory of `capacity` in the run's unit (pages or bytes).
    pub fn new(capacity: u64, page_count_hint: usize) -> Self {
        Cacheus {
            lists: TaggedLists::new(3, page_count_hint),
            used: [0; 3],
            half: (capacity / 2).max(1),
            history_limit: capacity,
            lfu: Lfu::with_ties(Ties::MostRecent, page_count_hint),
            ghosts: TaggedLists::new(2, page_count_hint),
            ghost_used: [0; 2],
            ghost_limit: capacity / 2,
            count_in_history: vec![0; page_count_hint],
            size: vec![0; page_count_hint],
            w_lru: START_WEIGHT,
            w_lfu: START_WEIGHT,
            lr: draw_learning_rate(&mut Lcg::default()),
            lr_previous: 0.0,
            hit_rate_previous: 0.0,
            unlearned: 0,
            hits: 0,
            update_interval: capacity.max(1),
            requests: 0,
            rand: Lcg::default(),
        }
    }

    /// The experts' weights: (SR-LRU, CR-LFU).
    pub fn weights(&self) -> (f64, f64) {
        (self.w_lru, self.w_lfu)
    }

    pub fn learning_rate(&self) -> f64 {
        self.lr
    }

    /// R, SR and H, each front (newest) first.
    pub fn lists(&self) -> [Vec<PageId>; 3] {
        [R, SR, H].map(|list| self.lists.iter(list).collect())
    }

    /// The ghost lists, newest first: (SR-LRU's, CR-LFU's).
    pub fn ghost_lists(&self) -> (Vec<PageId>, Vec<PageId>) {
        (
            self.ghosts.iter(LRU_GHOSTS).collect(),
            self.ghosts.iter(LFU_GHOSTS).collect(),
        )
    }

    /// A new request: the learning rate's update due after the last one, then the count.
    fn begin_request(&mut self) {
        if self.requests > 0 && self.requests.is_multiple_of(self.update_interval) {
            self.update_learning_rate();
        }
        self.requests += 1;
    }

    fn update_learning_rate(&mut self) {
        let hit_rate = (self.hits / self.update_interval) as f64;
        let delta_hit_rate = hit_rate - self.hit_rate_previous;
        let delta_lr = self.lr - self.lr_previous;
        self.lr_previous = self.lr;
        self.hit_rate_previous = hit_rate;
        if delta_lr != 0.0 {
            let sign = if delta_hit_rate / delta_lr > 0.0 {
                1.0
            } else {
                -1.0
            };
            let next = self.lr + sign * (self.lr * delta_lr).abs();
            self.lr = if next > 0.001 { next } else { 0.0001 };
            self.unlearned = 0;
        } else if hit_rate == 0.0 || delta_hit_rate <= 0.0 {
            self.unlearned += 1;
        } else if self.unlearned >= UNLEARN_LIMIT {
            self.unlearned = 0;
            self.lr = draw_learning_rate(&mut self.rand);
        }
        self.hits = 0;
    }

    /// Move a page between SR-LRU's lists, or onto one, keeping their sizes.
    fn put(&mut self, page: PageId, list: usize) {
        self.take_off(page);
        self.lists.push_front(list, page);
        self.used[list] += self.size[page as usize];
    }

    /// Take a page off the SR-LRU list it is on, if any.
    fn take_off(&mut self, page: PageId) {
        if let Some(from) = self.lists.remove(page) {
            self.used[from] -= self.size[page as usize];
        }
    }

    /// While R is over its size, its back moves to SR's front.
    fn demote_from_r(&mut self, incoming: u64) {
        while self.used[R] + incoming > self.half {
            let Some(back) = self.lists.back(R) else {
                break;
            };
            self.put(back, SR);
        }
    }

    /// A resident `page` leaves SR-LRU for H and CR-LFU, which notes its count there.
    fn send_to_history(&mut self, page: PageId, mem: &Memory) {
        self.put(page, H);
        self.count_in_history[page as usize] = self.lfu.count_of(page).unwrap_or(0);
        self.lfu.remove(page, mem);
    }

    fn trim_history(&mut self) {
        while self.used[H] >= self.history_limit {
            let Some(oldest) = self.lists.back(H) else {
                break;
            };
            self.take_off(oldest);
        }
    }

    fn send_to_ghosts(&mut self, page: PageId, list: usize) {
        let size = self.size[page as usize];
        if size > self.ghost_limit {
            return;
        }
        while self.ghost_used[list] + size > self.ghost_limit {
            let Some(oldest) = self.ghosts.pop_back(list) else {
                break;
            };
            self.ghost_used[list] -= self.size[oldest as usize];
        }
        self.ghosts.push_front(list, page);
        self.ghost_used[list] += size;
    }
}

impl CachePolicy for Cacheus {
    fn hit(&mut self, req: &Request, mem: &Memory, out: &mut Effects) {
        self.begin_request();
        self.hits += 1;
        let page = req.page;
        if self.lists.list_of(page) == Some(SR) {
            self.put(page, R);
            self.demote_from_r(0);
        } else {
            self.lists.move_to_front(R, page);
        }
        self.lfu.hit(req, mem, out);
    }

    fn admit(&mut self, req: &Request, mem: &Memory, _out: &mut Effects) -> bool {
        self.begin_request();
        let page = req.page;
        if let Some(list) = self.ghosts.remove(page) {
            self.ghost_used[list] -= self.size[page as usize];
            match list {
                LRU_GHOSTS => self.w_lru *= (-self.lr).exp(),
                _ => self.w_lfu *= (-self.lr).exp(),
            }
        }
        self.w_lru /= self.w_lru + self.w_lfu;
        self.w_lfu = 1.0 - self.w_lru;
        // R's size for a page back from H, SR's for another: both are C / 2.
        req.size <= mem.capacity_total() && req.size <= self.half
    }

    fn evict(&mut self, _req: &Request, mem: &Memory, out: &mut Effects) {
        let lru_victim = self.lists.back(SR).or_else(|| self.lists.back(R));
        let Some(lru_victim) = lru_victim else {
            return;
        };
        let lfu_victim = self.lfu.victim().unwrap_or(lru_victim);
        let lru_chosen = ((self.rand.draw() % 100) as f64 / 100.0) < self.w_lru;
        let victim = if lru_victim == lfu_victim || lru_chosen {
            lru_victim
        } else {
            lfu_victim
        };
        self.send_to_history(victim, mem);
        self.trim_history();
        if lru_victim != lfu_victim {
            self.send_to_ghosts(victim, if lru_chosen { LRU_GHOSTS } else { LFU_GHOSTS });
        }
        out.evict(victim);
    }

    fn insert(&mut self, req: &Request, mem: &Memory, out: &mut Effects) -> Tier {
        let page = req.page;
        ensure_index(&mut self.size, page, 0);
        ensure_index(&mut self.count_in_history, page, 0);
        if self.lists.list_of(page) == Some(H) {
            // CR-LFU first: it takes the count the page left H with.
            self.lfu
                .insert_counted(page, self.count_in_history[page as usize] + 1);
            self.take_off(page);
            self.size[page as usize] = req.size;
            self.demote_from_r(req.size);
            self.put(page, R);
        } else {
            self.lfu.insert(req, mem, out);
            self.size[page as usize] = req.size;
            self.put(page, SR);
        }
        while self.used[SR] > self.half {
            let Some(back) = self.lists.back(SR) else {
                break;
            };
            self.send_to_history(back, mem);
            out.evict(back);
        }
        self.trim_history();
        Tier::Dram
    }

    fn remove(&mut self, page: PageId, mem: &Memory) {
        if matches!(self.lists.list_of(page), Some(R | SR)) {
            self.take_off(page);
            self.lfu.remove(page, mem);
        }
    }

    fn holds(&self, page: PageId) -> Option<Tier> {
        matches!(self.lists.list_of(page), Some(R | SR)).then_some(Tier::Dram)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::mix64;
    use crate::mm::placement::policies::testing::*;

    /// The learning rate after its first update with no hit rate: 0.408 - 0.408^2.
    fn after_one_update() -> f64 {
        let lr = draw_learning_rate(&mut Lcg::default());
        lr + -(lr * lr).abs()
    }

    #[test]
    fn the_first_learning_rate_is_the_first_draw() {
        // 1442695040888963407 mod 1000 = 407.
        assert_eq!(Cacheus::new(4, 0).learning_rate(), 0.001 + 0.407);
    }

    #[test]
    fn new_pages_take_half_of_memory_and_experts_share_the_rest() {
        // capacity 4: R and SR hold 2 each, H fewer than 4, each ghost list 2.
        //   t1 1 t2 2   misses                      SR [2 1]
        //   t3 3        miss: SR over 2, its back 1 into H (count 1) and out of memory,
        //               though memory is not full                SR [3 2]  H [1]
        //   t4 2        hit in SR: to R                  R [2]   SR [3]
        //               (after t4, the 4th request: lr = 0.408 - 0.408^2)
        //   t5 1        miss, in H: count 1 + 1 = 2, into R  R [1 2]  SR [3]  H []
        //   t6 4        miss, room                       SR [4 3]
        //   t7 5        miss, full: SR-LRU names 3, CR-LFU the count-1 page that reached
        //               it last, 4; draw 1 = 0.07 < w_lru 0.5: 3 goes, into H and
        //               SR-LRU's ghosts                  SR [5 4]  H [3]  ghosts [3] []
        //   t8 3        miss, a ghost of SR-LRU: w_lru = 0.5 e^-lr, normalised (0.44);
        //               SR-LRU names 4, CR-LFU 5; draw 2 = 0.66 >= 0.44: 5 goes, into H
        //               and CR-LFU's ghosts; 3 comes back from H with count 2: R is
        //               full, its back 2 moves to SR     R [3 1]  SR [2 4]  H [5]
        let mut cacheus = engine(Cacheus::new(4, 0), 4);
        let outcome = run_pages(&mut cacheus, &[1, 2, 3, 2, 1, 4, 5, 3]);
        assert_eq!(hit_pattern(&outcome), "mmmhmmmm");
        assert_eq!(eviction_steps(&outcome), vec![(2, 1), (6, 3), (7, 5)]);
        let policy = cacheus.policy();
        assert_eq!(policy.lists(), [vec![3, 1], vec![2, 4], vec![5]]);
        assert_eq!(policy.ghost_lists(), (vec![], vec![5]));
        assert_eq!(policy.learning_rate(), after_one_update());
        let penalised = START_WEIGHT * (-after_one_update()).exp();
        let w_lru = penalised / (penalised + START_WEIGHT);
        assert_eq!(policy.weights(), (w_lru, 1.0 - w_lru));
        assert_eq!(
            policy.lfu.by_count(),
            // Count 2, most recent first: 3 (t8), 1 (t5, back from H), 2 (hit at t4).
            vec![(1, vec![4]), (2, vec![3, 1, 2])]
        );
    }

    #[test]
    fn a_memory_of_one_page_holds_one() {
        // Halves of 0 would refuse every page; at least 1, each page fills and the
        // one before goes.
        let mut cacheus = engine(Cacheus::new(1, 0), 1);
        let outcome = run_pages(&mut cacheus, &[1, 1, 2, 2, 1]);
        assert_eq!(hit_pattern(&outcome), "mhmhm");
        assert_eq!(eviction_steps(&outcome), vec![(2, 1), (4, 2)]);
    }

    #[test]
    fn the_learning_rate_follows_the_whole_hit_rate() {
        // capacity 2, an update after every second request. After t2 (one hit): hit
        // rate 1 / 2 = 0 in integers, lr falls to 0.408 - 0.408^2. After t4 (two hits):
        // hit rate 1, up by 1 while lr fell: lr falls again by |lr d_lr|.
        let mut cacheus = engine(Cacheus::new(2, 0), 2);
        run_pages(&mut cacheus, &[1, 1, 1]);
        let first = after_one_update();
        assert_eq!(cacheus.policy().learning_rate(), first);
        run_pages(&mut cacheus, &[1, 1]);
        let lr0 = draw_learning_rate(&mut Lcg::default());
        let second = first + -(first * (first - lr0)).abs();
        assert_eq!(cacheus.policy().learning_rate(), second);
    }

    #[test]
    fn lists_stay_within_their_sizes_and_agree_with_memory() {
        let mut cacheus = engine(Cacheus::new(10, 0), 10);
        for (i, page) in hot_and_cold(0, 20_000, 12, 200).into_iter().enumerate() {
            cacheus.access(&read(page)).unwrap();
            cacheus.check_agreement().unwrap();
            let policy = cacheus.policy();
            let [r, sr, h] = policy.lists();
            assert!(
                r.len() <= 5 && sr.len() <= 5 && h.len() < 10,
                "{r:?} {sr:?} {h:?}"
            );
            let (lru, lfu) = policy.ghost_lists();
            assert!(lru.len() <= 5 && lfu.len() <= 5, "{lru:?} {lfu:?}");
            for p in h.iter().chain(&lru).chain(&lfu) {
                assert!(policy.holds(*p).is_none(), "{p} is resident");
            }
            let counted: usize = policy.lfu.by_count().iter().map(|(_, p)| p.len()).sum();
            assert_eq!(counted, r.len() + sr.len());
            let x = mix64(i as u64);
            if x.is_multiple_of(11) {
                cacheus.remove(((x >> 20) % 200) as PageId);
            }
        }
        let (w_lru, w_lfu) = cacheus.policy().weights();
        assert!((w_lru + w_lfu - 1.0).abs() < 1e-9, "{w_lru} {w_lfu}");
        assert!(w_lru != START_WEIGHT, "the weights learned nothing");
    }
}
