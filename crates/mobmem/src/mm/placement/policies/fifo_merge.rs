//! FIFO-Merge: a FIFO queue that, when it must evict, looks at the next 100 pages from
//! the oldest end and evicts the half used least since they came in, keeping the others
//! where they are.
//!
//! Source: libCacheSim's `FIFO_Merge` (commit aa0fc409, `cache/eviction/FIFO_Merge.c`),
//! after the merge of segments in Segcache (J. Yang, Y. Yue and K. V. Rashmi, "Segcache:
//! a memory-efficient and scalable in-memory key-value cache for small objects", NSDI
//! 2021), which keeps the most used objects of the segments it merges. Its defaults:
//! 100 pages examined, 50 kept, retained by frequency.
//!
//! ```text
//! on access(x):
//!   if x resident: freq[x] += 1; hit                     (the queue is not reordered)
//!   else: while full, evict(); insert x at the head, freq[x] = 0; miss
//!
//! evict():
//!   if a saved list has entries left (pos < 100):
//!     v = list[pos]; pos += 1
//!     if pos < 100 - 50: remove v; return
//!   if at most 100 pages are resident: remove the tail; next = unset; return
//!   o = next, or the tail if unset
//!   for i in 0..100:
//!     list[i] = (1e6 (freq[o] + (rand() mod 1000) / 10000) / size[o], o)
//!     o = the page before o (towards the head), or the tail past the head
//!   next = the page after the last one looked at (unset past the head)
//!   sort list by its metric, stable; pos = 1; remove list[0]
//! ```
//! As libCacheSim has it, one scan evicts 49 pages, not 50: `list[0]` at once and
//! `list[1..49]` by the next calls, while `list[49]` is taken without being evicted
//! before the next scan. `rand` is libCacheSim's generator (`utils/include/mymath.h`),
//! the 64-bit LCG `x = 6364136223846793005 x + 1442695040888963407`, which its simulator
//! starts at 0 for each cache when it runs several; one number is drawn for each page
//! looked at, so that pages of equal counts are kept at random. On the CloudPhysics and
//! OLTP traces this gives libCacheSim's miss ratios (`tests/policies_libcachesim.rs`).
//!
//! Decided here: a page that leaves memory for another reason ([`CachePolicy::remove`])
//! leaves the saved list (its entry is passed over) and, if the next scan was to start
//! at it, the scan starts at the page before it; libCacheSim's simulator never removes a
//! page that way.
//!
//! The queue is a vector of pages in order of arrival with holes where pages left, not a
//! linked list: a scan reads the next hundred pages from consecutive slots instead of
//! following a hundred links, each a cache miss. Insertion appends; once holes make up
//! half the vector, it is compacted. Per page: its slot and its count (a `u32` each).
//! With sizes in bytes, as libCacheSim's: the metric divides by the page's bytes (the
//! engine's, [`Memory::size_of`]), and pages go until the new one fits.

use super::rand::Lcg;
use crate::core::ensure_index;
use crate::mm::placement::engine::Memory;
use crate::mm::placement::{CachePolicy, Effects, Request, Tier};
use crate::trace::PageId;

/// Pages looked at a scan (libCacheSim's `n-exam`).
pub const EXAMINED: usize = 100;
/// Of those, the pages kept (`n-keep`).
pub const KEPT: usize = EXAMINED / 2;

/// A page not resident (its count); a slot a page left.
const ABSENT: u32 = u32::MAX;

/// What the policy keeps of a page.
#[derive(Debug, Clone, Copy)]
struct Entry {
    /// Its slot in the queue, if resident.
    slot: u32,
    /// Hits since it came in; [`ABSENT`] for a page not resident.
    freq: u32,
}

const GONE: Entry = Entry {
    slot: ABSENT,
    freq: ABSENT,
};

#[derive(Debug, Clone)]
pub struct FifoMerge {
    /// The queue, oldest first, from `start`: resident pages in order of arrival, with
    /// [`ABSENT`] where one left. `slots[start]` is resident unless the queue is empty.
    slots: Vec<u32>,
    start: usize,
    /// Resident pages.
    len: usize,
    pages: Vec<Entry>,
    /// Where the next scan starts; `None` = at the tail.
    next: Option<PageId>,
    /// The last scan's pages, least worth keeping first; `None` for one removed since.
    saved: Vec<(f64, Option<PageId>)>,
    /// The next entry of `saved` to take.
    pos: usize,
    rand: Lcg,
}

impl FifoMerge {
    pub fn new(page_count_hint: usize) -> Self {
        FifoMerge {
            slots: Vec::new(),
            start: 0,
            len: 0,
            pages: vec![GONE; page_count_hint],
            next: None,
            saved: Vec::with_capacity(EXAMINED),
            pos: usize::MAX,
            rand: Lcg::default(),
        }
    }

    /// The resident pages, head (newest) first.
    pub fn order(&self) -> Vec<PageId> {
        self.slots[self.start..]
            .iter()
            .rev()
            .copied()
            .filter(|&page| page != ABSENT)
            .collect()
    }

    /// The oldest page.
    fn tail(&self) -> Option<PageId> {
        (self.len > 0).then(|| self.slots[self.start])
    }

    /// The slot of the first resident page after slot `at` (towards the head).
    fn after(&self, at: usize) -> Option<usize> {
        (at + 1..self.slots.len()).find(|&i| self.slots[i] != ABSENT)
    }

    /// The page after resident `page` (towards the head), if any.
    fn newer(&self, page: PageId) -> Option<PageId> {
        self.after(self.pages[page as usize].slot as usize)
            .map(|i| self.slots[i])
    }

    /// Take resident `page` off the queue.
    fn unlink(&mut self, page: PageId) {
        let entry = &mut self.pages[page as usize];
        self.slots[entry.slot as usize] = ABSENT;
        *entry = GONE;
        self.len -= 1;
        if self.len == 0 {
            self.slots.clear();
            self.start = 0;
        } else {
            while self.slots[self.start] == ABSENT {
                self.start += 1;
            }
        }
    }

    fn take(&mut self, page: PageId, out: &mut Effects) {
        self.unlink(page);
        out.evict(page);
    }

    /// The queue without its holes, from slot 0.
    fn compact(&mut self) {
        let mut to = 0;
        for from in self.start..self.slots.len() {
            let page = self.slots[from];
            if page != ABSENT {
                self.slots[to] = page;
                self.pages[page as usize].slot = to as u32;
                to += 1;
            }
        }
        self.slots.truncate(to);
        self.start = 0;
    }

    /// Look at the next [`EXAMINED`] pages from `next` and order them by their metric.
    fn scan(&mut self, tail: PageId, mem: &Memory) {
        self.saved.clear();
        let slot_of = |page: PageId| self.pages[page as usize].slot as usize;
        let mut at = self.next.map(slot_of);
        for _ in 0..EXAMINED {
            let slot = at.unwrap_or(slot_of(tail));
            let page = self.slots[slot];
            let r = (self.rand.draw() % 1000) as f64 / 10000.0;
            let metric = 1.0e6 * (f64::from(self.pages[page as usize].freq) + r)
                / mem.size_of(page).max(1) as f64;
            self.saved.push((metric, Some(page)));
            at = self.after(slot);
        }
        self.next = at.map(|slot| self.slots[slot]);
        // Stable, as glibc's qsort is at this size (a merge sort): equal metrics keep the
        // order they were looked at in.
        self.saved.sort_by(|a, b| a.0.total_cmp(&b.0));
        // The pages this scan evicts, one an eviction from now on: their words in the
        // engine's page table, which each eviction reads and writes.
        for &(_, page) in &self.saved[..EXAMINED - KEPT - 1] {
            if let Some(page) = page {
                mem.pages().prefetch(page);
            }
        }
    }
}

impl CachePolicy for FifoMerge {
    #[inline]
    fn hit(&mut self, req: &Request, _mem: &Memory, _out: &mut Effects) {
        // Short of ABSENT, which marks a page gone.
        let freq = &mut self.pages[req.page as usize].freq;
        *freq = (*freq + 1).min(ABSENT - 1);
    }

    fn evict(&mut self, _req: &Request, mem: &Memory, out: &mut Effects) {
        while self.pos < self.saved.len() {
            let entry = self.saved[self.pos].1;
            self.pos += 1;
            if self.pos >= EXAMINED - KEPT {
                break;
            }
            if let Some(page) = entry {
                self.take(page, out);
                return;
            }
        }
        let Some(tail) = self.tail() else {
            return;
        };
        if self.len <= EXAMINED {
            self.next = None;
            self.take(tail, out);
            return;
        }
        self.scan(tail, mem);
        self.pos = 1;
        if let Some(page) = self.saved[0].1 {
            self.take(page, out);
        }
    }

    #[inline]
    fn insert(&mut self, req: &Request, _mem: &Memory, _out: &mut Effects) -> Tier {
        ensure_index(&mut self.pages, req.page, GONE);
        if self.slots.len() >= 2 * self.len + 64 {
            self.compact();
        }
        self.pages[req.page as usize] = Entry {
            slot: self.slots.len() as u32,
            freq: 0,
        };
        self.slots.push(req.page);
        self.len += 1;
        Tier::Dram
    }

    fn remove(&mut self, page: PageId, _mem: &Memory) {
        if self
            .pages
            .get(page as usize)
            .is_none_or(|e| e.freq == ABSENT)
        {
            return;
        }
        if self.next == Some(page) {
            self.next = self.newer(page);
        }
        for entry in &mut self.saved {
            if entry.1 == Some(page) {
                entry.1 = None;
            }
        }
        self.unlink(page);
    }

    fn holds(&self, page: PageId) -> Option<Tier> {
        self.pages
            .get(page as usize)
            .is_some_and(|entry| entry.freq != ABSENT)
            .then_some(Tier::Dram)
    }

    #[inline]
    fn prefetch(&self, page: PageId, _mem: &Memory) {
        crate::core::prefetch::prefetch(&self.pages, page as usize);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::mix64;
    use crate::mm::placement::policies::testing::*;

    #[test]
    fn a_small_memory_is_a_fifo() {
        // At most 100 pages resident: the tail goes, hits change nothing.
        let mut fm = engine(FifoMerge::new(0), 3);
        let outcome = run_pages(&mut fm, &[1, 2, 3, 1, 4, 1, 5]);
        assert_eq!(hit_pattern(&outcome), "mmmhmmm");
        assert_eq!(eviction_steps(&outcome), vec![(4, 1), (5, 2), (6, 3)]);
        assert_eq!(fm.policy().order(), vec![5, 1, 4]);
    }

    /// FIFO-Merge as libCacheSim writes it, over vectors: the queue oldest first, the
    /// saved list as it was sorted.
    fn reference(capacity: usize, trace: &[PageId]) -> Vec<(bool, Vec<PageId>)> {
        let mut queue: Vec<PageId> = Vec::new(); // oldest first
        let mut freq = std::collections::HashMap::new();
        let mut next: Option<PageId> = None;
        let mut saved: Vec<(f64, PageId)> = Vec::new();
        let mut pos = usize::MAX;
        let mut rand = Lcg::default();
        let mut out = Vec::new();
        for &page in trace {
            if let Some(f) = freq.get_mut(&page) {
                *f += 1;
                out.push((true, vec![]));
                continue;
            }
            let mut evicted = vec![];
            while queue.len() >= capacity {
                let mut victim = None;
                if pos < EXAMINED {
                    let v = saved[pos].1;
                    pos += 1;
                    if pos < EXAMINED - KEPT {
                        victim = Some(v);
                    }
                }
                if victim.is_none() && queue.len() <= EXAMINED {
                    next = None;
                    victim = Some(queue[0]);
                }
                if victim.is_none() {
                    saved.clear();
                    let mut at = next.map(|n| queue.iter().position(|&q| q == n).unwrap());
                    for _ in 0..EXAMINED {
                        let i = at.unwrap_or(0);
                        let r = (rand.draw() % 1000) as f64 / 10000.0;
                        saved.push((1.0e6 * (f64::from(freq[&queue[i]]) + r), queue[i]));
                        at = (i + 1 < queue.len()).then_some(i + 1);
                    }
                    next = at.map(|i| queue[i]);
                    saved.sort_by(|a, b| a.0.partial_cmp(&b.0).unwrap());
                    pos = 1;
                    victim = Some(saved[0].1);
                }
                let v = victim.unwrap();
                queue.retain(|&q| q != v);
                freq.remove(&v);
                evicted.push(v);
            }
            queue.push(page);
            freq.insert(page, 0u32);
            out.push((false, evicted));
        }
        out
    }

    #[test]
    fn pages_taken_away_leave_the_saved_list_and_the_scan() {
        // Past 100 pages, with pages removed while a scan's list is being used up and
        // where the next scan starts: the policy and the engine agree on every page
        // after every step, and a removed page is never evicted.
        let mut fm = engine(FifoMerge::new(0), 150);
        let mut removed = 0;
        for i in 0..30_000u64 {
            let x = mix64(i);
            let page = ((x >> 8) % 700) as PageId;
            fm.access(&read(page)).unwrap();
            if x.is_multiple_of(7) {
                let next = fm.policy().next;
                let gone = match (x >> 40) % 3 {
                    0 => next,
                    1 => fm.policy().saved.iter().rev().find_map(|e| e.1),
                    _ => Some(((x >> 20) % 700) as PageId),
                };
                if let Some(gone) = gone {
                    if fm.policy().holds(gone).is_some() {
                        removed += 1;
                    }
                    fm.remove(gone);
                }
            }
            fm.check_agreement()
                .unwrap_or_else(|v| panic!("step {i}: {v}"));
        }
        assert!(removed > 1000, "{removed} pages removed");
    }

    #[test]
    fn agrees_with_a_plain_version_past_a_hundred_pages() {
        for seed in 0..6u64 {
            let capacity = [101, 120, 150, 250, 400, 101][seed as usize];
            let trace = hot_and_cold(seed, 20_000, 80, 900);
            let outcome = run_pages(&mut engine(FifoMerge::new(0), capacity), &trace);
            let ours: Vec<(bool, Vec<PageId>)> = hits(&outcome)
                .into_iter()
                .zip(evictions(&outcome))
                .collect();
            assert_eq!(ours, reference(capacity, &trace), "seed {seed}");
        }
    }
}
