//! The policies made of queues. Their resident pages are the pages on their resident
//! queues, so the queues answer the verbs that ask where a page is
//! ([`CachePolicy::remove`], [`CachePolicy::holds`], [`CachePolicy::prefetch`]) the same
//! way for all of them; a rule says what the policy does with its queues.
//!
//! - [`OneQueue`]: one [`Queue`], front = newest. LRU, FIFO, CLOCK and SIEVE differ only
//!   in what a hit does ([`OnHit`]) and which page an eviction takes ([`OneQueueRule`]).
//! - [`Queued`]: several [`Queues`] in one arena, some resident, the others holding ghosts
//!   (S3-FIFO, 2Q, ARC); the rule ([`QueuesRule`]) answers the other verbs.

use std::fmt;

use super::queues::{Queue, Queues};
use crate::core::ensure_index;
use crate::mm::placement::engine::Memory;
use crate::mm::placement::{CachePolicy, Effects, Request, Tier};
use crate::trace::PageId;

/// What a hit does to a page of a [`OneQueue`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OnHit {
    /// Nothing: the queue stays in order of arrival (FIFO).
    Nothing,
    /// The page moves to the front: the queue is in order of recency (LRU).
    MoveToFront,
    /// The page's mark is set (CLOCK's reference bit, SIEVE's visited bit). A page enters
    /// the queue unmarked: the miss that brought it in is not a reuse.
    Mark,
}

/// The rule of a [`OneQueue`] policy.
pub trait OneQueueRule: fmt::Debug + Clone + Send {
    /// What a hit does.
    const ON_HIT: OnHit;

    /// Take the page to evict off `queue` and return it (`None` only when the queue is
    /// empty); `marks`, indexed by page, holds the pages' marks (with [`OnHit::Mark`]).
    /// The default takes the back: the oldest arrival, or the least recently used.
    #[inline]
    fn evict(&mut self, queue: &mut Queue, _marks: &mut [bool]) -> Option<PageId> {
        queue.pop_back()
    }

    /// `page`, on `queue`, is about to be taken off it for another reason
    /// ([`CachePolicy::remove`]).
    #[inline]
    fn forget(&mut self, _queue: &Queue, _page: PageId) {}

    /// Where the next eviction starts looking (the back by default; a hand where the rule
    /// keeps one): what is worth bringing into the cache before it.
    #[inline]
    fn next_look(&self, queue: &Queue) -> Option<PageId> {
        queue.back()
    }
}

/// A policy of one queue of resident pages, newest first, with one mark a page where its
/// rule uses marks. Per page: two `u32` links, and one byte with marks.
#[derive(Debug, Clone)]
pub struct OneQueue<R> {
    queue: Queue,
    marks: Vec<bool>,
    rule: R,
}

impl<R: OneQueueRule + Default> OneQueue<R> {
    pub fn new(page_count_hint: usize) -> Self {
        Self::with_rule(R::default(), page_count_hint)
    }
}

impl<R: OneQueueRule> OneQueue<R> {
    pub fn with_rule(rule: R, page_count_hint: usize) -> Self {
        let marks = match R::ON_HIT {
            OnHit::Mark => vec![false; page_count_hint],
            OnHit::Nothing | OnHit::MoveToFront => Vec::new(),
        };
        OneQueue {
            queue: Queue::new(page_count_hint),
            marks,
            rule,
        }
    }

    pub fn rule(&self) -> &R {
        &self.rule
    }

    /// Resident pages from the front (the newest arrival, or the most recently used) to
    /// the back.
    pub fn order(&self) -> Vec<PageId> {
        self.queue.iter().collect()
    }

    /// [`OneQueue::order`], each page with its mark.
    pub fn marked(&self) -> Vec<(PageId, bool)> {
        self.queue
            .iter()
            .map(|p| (p, self.marks.get(p as usize).copied().unwrap_or(false)))
            .collect()
    }
}

impl<R: OneQueueRule> CachePolicy for OneQueue<R> {
    #[inline]
    fn hit(&mut self, req: &Request, _mem: &Memory, _out: &mut Effects) {
        match R::ON_HIT {
            OnHit::Nothing => {}
            OnHit::MoveToFront => self.queue.move_to_front(req.page),
            OnHit::Mark => self.marks[req.page as usize] = true,
        }
    }

    #[inline]
    fn evict(&mut self, _req: &Request, mem: &Memory, out: &mut Effects) {
        if let Some(victim) = self.rule.evict(&mut self.queue, &mut self.marks) {
            out.evict(victim);
        }
        if let Some(next) = self.rule.next_look(&self.queue) {
            self.queue.prefetch_from(next, mem, &self.marks);
        }
    }

    #[inline]
    fn insert(&mut self, req: &Request, _mem: &Memory, _out: &mut Effects) -> Tier {
        if R::ON_HIT == OnHit::Mark {
            ensure_index(&mut self.marks, req.page, false);
            self.marks[req.page as usize] = false;
        }
        self.queue.push_front(req.page);
        Tier::Dram
    }

    fn remove(&mut self, page: PageId, _mem: &Memory) {
        self.rule.forget(&self.queue, page);
        self.queue.remove(page);
    }

    fn holds(&self, page: PageId) -> Option<Tier> {
        self.queue.holds(page)
    }

    #[inline]
    fn prefetch(&self, page: PageId, _mem: &Memory) {
        self.queue.prefetch(page);
    }
}

/// The rule of a [`Queued`] policy: [`CachePolicy`]'s verbs that change its order, each
/// given the policy's queues.
pub trait QueuesRule: fmt::Debug + Clone + Send {
    /// How many queues the policy has.
    const QUEUES: usize;
    /// The queues whose pages are resident; the others hold ghosts.
    const RESIDENT: &'static [usize];

    /// [`CachePolicy::hit`].
    fn hit(&mut self, q: &mut Queues, req: &Request, mem: &Memory, out: &mut Effects);

    /// [`CachePolicy::admit`]; a rule with ghosts takes `req.page` off its ghost queue
    /// here.
    fn admit(&mut self, _q: &mut Queues, req: &Request, mem: &Memory, _: &mut Effects) -> bool {
        req.size <= mem.capacity_total()
    }

    /// [`CachePolicy::evict`].
    fn evict(&mut self, q: &mut Queues, req: &Request, mem: &Memory, out: &mut Effects);

    /// [`CachePolicy::insert`]: the resident queue whose front `req.page` goes to, once the
    /// rule has done what it does first (the page's state, room on that queue).
    fn insert(&mut self, q: &mut Queues, req: &Request, mem: &Memory, out: &mut Effects) -> usize;
}

/// A policy whose resident pages are those on its rule's resident queues.
#[derive(Debug, Clone)]
pub struct Queued<R> {
    queues: Queues,
    rule: R,
}

impl<R: QueuesRule> Queued<R> {
    pub fn with_rule(rule: R, page_count_hint: usize) -> Self {
        Queued {
            queues: Queues::new(R::QUEUES, page_count_hint),
            rule,
        }
    }

    pub fn rule(&self) -> &R {
        &self.rule
    }

    pub fn queues(&self) -> &Queues {
        &self.queues
    }

    /// The pages of `queue`, front to back.
    pub fn pages(&self, queue: usize) -> Vec<PageId> {
        self.queues.iter(queue).collect()
    }
}

impl<R: QueuesRule> CachePolicy for Queued<R> {
    #[inline]
    fn hit(&mut self, req: &Request, mem: &Memory, out: &mut Effects) {
        self.rule.hit(&mut self.queues, req, mem, out);
    }

    #[inline]
    fn admit(&mut self, req: &Request, mem: &Memory, out: &mut Effects) -> bool {
        self.rule.admit(&mut self.queues, req, mem, out)
    }

    #[inline]
    fn evict(&mut self, req: &Request, mem: &Memory, out: &mut Effects) {
        self.rule.evict(&mut self.queues, req, mem, out);
    }

    #[inline]
    fn insert(&mut self, req: &Request, mem: &Memory, out: &mut Effects) -> Tier {
        let queue = self.rule.insert(&mut self.queues, req, mem, out);
        self.queues.push_front(queue, req.page, mem);
        Tier::Dram
    }

    fn remove(&mut self, page: PageId, mem: &Memory) {
        self.queues.remove_from(page, R::RESIDENT, mem);
    }

    fn holds(&self, page: PageId) -> Option<Tier> {
        self.queues.holds_in(page, R::RESIDENT)
    }

    #[inline]
    fn prefetch(&self, page: PageId, _mem: &Memory) {
        self.queues.prefetch(page);
    }
}
