//! Queues of one policy: several lists of pages in one [`TaggedLists`] arena, each
//! knowing what it holds in the run's unit (pages, or bytes: the sizes the engine keeps).
//!
//! libCacheSim composes policies from sub-caches (S3-FIFO of a small FIFO, a main FIFO
//! and a ghost FIFO; 2Q of a FIFO, a ghost FIFO and an LRU), each counting its bytes.
//! Here a policy's queues share one arena, each page tagged with the queue it is on, and
//! each queue counts its units, so "is it in the small queue" is one byte read and "is
//! the main queue over its size" one comparison.
//!
//! A page's size MUST NOT change while it is on a queue: the engine changes a page's size
//! only when it inserts it, so a policy takes the page off its ghost queues in
//! [`CachePolicy::admit`](crate::mm::placement::CachePolicy::admit).

use crate::core::list::{Links, List, TaggedLists};
use crate::core::prefetch::prefetch;
use crate::mm::placement::engine::Memory;
use crate::mm::placement::Tier;
use crate::trace::PageId;

/// The one queue of a policy that keeps its pages in a single order (LRU, FIFO, CLOCK,
/// SIEVE): a list in a [`Links`] arena, front = newest (or most recent).
#[derive(Debug, Clone, Default)]
pub struct Queue {
    links: Links,
    list: List,
}

impl Queue {
    pub fn new(pages: usize) -> Self {
        Queue {
            links: Links::with_pages(pages),
            list: List::new(),
        }
    }

    #[inline]
    pub fn push_front(&mut self, page: PageId) {
        self.links.push_front(&mut self.list, page);
    }

    #[inline]
    pub fn move_to_front(&mut self, page: PageId) {
        self.links.move_to_front(&mut self.list, page);
    }

    #[inline]
    pub fn pop_back(&mut self) -> Option<PageId> {
        self.links.pop_back(&mut self.list)
    }

    #[inline]
    pub fn back(&self) -> Option<PageId> {
        self.list.back()
    }

    #[inline]
    pub fn front(&self) -> Option<PageId> {
        self.list.front()
    }

    /// Take `page`, which MUST be on the queue, off it.
    #[inline]
    pub fn remove(&mut self, page: PageId) {
        self.links.remove(&mut self.list, page);
    }

    /// The page before `page` (towards the front), if any.
    #[inline]
    pub fn prev_of(&self, page: PageId) -> Option<PageId> {
        self.links.prev_of(page)
    }

    /// [`CachePolicy::holds`](crate::mm::placement::CachePolicy::holds) of a single-tier
    /// policy whose resident pages are those on the queue.
    pub fn holds(&self, page: PageId) -> Option<Tier> {
        self.links.is_on(&self.list, page).then_some(Tier::Dram)
    }

    #[inline]
    pub fn prefetch(&self, page: PageId) {
        self.links.prefetch(page);
    }

    /// Bring into the cache what the next eviction reads when it starts looking at
    /// `start`, on the queue (a hint): the page table entries of `start` and of the page
    /// before it, that page's links, and both pages' entries of the policy's `state`.
    /// They lie scattered over tables larger than the cache, and are known a few requests
    /// before they are read. `start`'s own links are in the cache when it is next to the
    /// page just taken.
    #[inline]
    pub fn prefetch_from<T>(&self, start: PageId, mem: &Memory, state: &[T]) {
        mem.pages().prefetch(start);
        prefetch(state, start as usize);
        if let Some(before) = self.prev_of(start) {
            self.links.prefetch(before);
            mem.pages().prefetch(before);
            prefetch(state, before as usize);
        }
    }

    /// The pages, front to back.
    pub fn iter(&self) -> impl Iterator<Item = PageId> + '_ {
        self.links.iter(&self.list)
    }
}

#[derive(Debug, Clone, Default)]
pub struct Queues {
    lists: TaggedLists,
    units: Vec<u64>,
}

impl Queues {
    /// `queues` empty queues, sized for `pages` pages.
    pub fn new(queues: usize, pages: usize) -> Self {
        Queues {
            lists: TaggedLists::new(queues, pages),
            units: vec![0; queues],
        }
    }

    /// The queue `page` is on.
    #[inline]
    pub fn queue_of(&self, page: PageId) -> Option<usize> {
        self.lists.list_of(page)
    }

    /// Pages on `queue`.
    #[inline]
    pub fn len(&self, queue: usize) -> usize {
        self.lists.len(queue)
    }

    #[inline]
    pub fn is_empty(&self, queue: usize) -> bool {
        self.lists.is_empty(queue)
    }

    /// What `queue` holds, in the unit.
    #[inline]
    pub fn units(&self, queue: usize) -> u64 {
        self.units[queue]
    }

    #[inline]
    pub fn back(&self, queue: usize) -> Option<PageId> {
        self.lists.back(queue)
    }

    /// Put `page`, on no queue, at the front of `queue`.
    #[inline]
    pub fn push_front(&mut self, queue: usize, page: PageId, mem: &Memory) {
        self.lists.push_front(queue, page);
        self.units[queue] += mem.size_of(page);
    }

    /// Put `page`, on no queue, at the back of `queue`.
    #[inline]
    pub fn push_back(&mut self, queue: usize, page: PageId, mem: &Memory) {
        self.lists.push_back(queue, page);
        self.units[queue] += mem.size_of(page);
    }

    /// Take `page` off its queue if that is one of `queues` (a policy's resident queues,
    /// for [`CachePolicy::remove`](crate::mm::placement::CachePolicy::remove)).
    pub fn remove_from(&mut self, page: PageId, queues: &[usize], mem: &Memory) {
        if self.queue_of(page).is_some_and(|q| queues.contains(&q)) {
            self.remove(page, mem);
        }
    }

    /// [`CachePolicy::holds`](crate::mm::placement::CachePolicy::holds) of a single-tier
    /// policy whose resident pages are those on `queues`.
    pub fn holds_in(&self, page: PageId, queues: &[usize]) -> Option<Tier> {
        self.queue_of(page)
            .is_some_and(|q| queues.contains(&q))
            .then_some(Tier::Dram)
    }

    /// Put the id of `page`, which just left memory, at the front of the ghost queue
    /// `ghosts`, forgetting its oldest ghosts until it holds at most `limit` units with
    /// it; a page larger than `limit` is not remembered.
    pub fn remember(&mut self, ghosts: usize, page: PageId, limit: u64, mem: &Memory) {
        let size = mem.size_of(page);
        if size > limit {
            return;
        }
        while self.units(ghosts) + size > limit {
            if self.pop_back(ghosts, mem).is_none() {
                break;
            }
        }
        self.push_front(ghosts, page, mem);
    }

    /// Take `page` off its queue; returns that queue.
    #[inline]
    pub fn remove(&mut self, page: PageId, mem: &Memory) -> Option<usize> {
        let queue = self.lists.remove(page)?;
        self.units[queue] -= mem.size_of(page);
        Some(queue)
    }

    /// Move `page`, on any queue or none, to the front of `queue`.
    #[inline]
    pub fn move_to_front(&mut self, queue: usize, page: PageId, mem: &Memory) {
        match self.lists.list_of(page) {
            Some(from) if from == queue => self.lists.move_to_front(queue, page),
            from => {
                let size = mem.size_of(page);
                if let Some(from) = from {
                    self.units[from] -= size;
                }
                self.lists.move_to_front(queue, page);
                self.units[queue] += size;
            }
        }
    }

    /// Take the back of `queue` off it.
    #[inline]
    pub fn pop_back(&mut self, queue: usize, mem: &Memory) -> Option<PageId> {
        let page = self.lists.pop_back(queue)?;
        self.units[queue] -= mem.size_of(page);
        Some(page)
    }

    #[inline]
    pub fn prefetch(&self, page: PageId) {
        self.lists.prefetch(page);
    }

    /// Bring into the cache what taking the back of `queue` off it reads next (a hint,
    /// as [`Queue::prefetch_from`]): the back's page table entry, and the links, tag and
    /// page table entry of the page before it.
    #[inline]
    pub fn prefetch_back(&self, queue: usize, mem: &Memory) {
        if let Some(back) = self.back(queue) {
            mem.pages().prefetch(back);
            if let Some(before) = self.lists.prev_of(back) {
                self.lists.prefetch(before);
                mem.pages().prefetch(before);
            }
        }
    }

    /// The pages of `queue`, front to back.
    pub fn iter(&self, queue: usize) -> impl Iterator<Item = PageId> + '_ {
        self.lists.iter(queue)
    }

    /// Check the links and tags, and that each queue's units add up (tests).
    pub fn check(&self, mem: &Memory) -> Result<(), String> {
        self.lists.check()?;
        for (queue, &units) in self.units.iter().enumerate() {
            let sum: u64 = self.iter(queue).map(|p| mem.size_of(p)).sum();
            if sum != units {
                return Err(format!(
                    "queue {queue} counts {units}, its pages add up to {sum}"
                ));
            }
        }
        Ok(())
    }
}
