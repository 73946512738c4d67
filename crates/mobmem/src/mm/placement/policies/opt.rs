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
//! A finite key `j` is an access of the future with `f[j] = p`, so no two resident pages
//! share one, and the page of key `j` is `f[j]`. The finite keys of the resident pages
//! are the bits of a bitset over `[0, n)` in levels (a bit per access, then a bit per
//! non-empty word of the level below, up to a single word: four levels for ten million
//! accesses): setting a bit, clearing one and finding the largest cost a word operation
//! or two per level, where a heap of the pages cost O(log capacity) sifts on every hit.
//! Each page records its key, so that a hit clears the old bit and sets the new one. The
//! word a request a few ahead will set, and the page the next eviction will likely take,
//! are loaded ahead (hints): both are far from the recent accesses.
//!
//! Pages never used again (NEVER) are evicted first, the one with the largest trace id
//! among them; which one does not change the miss count. They sit apart in a max-heap of
//! (trace id, page), entered when a page's key becomes NEVER and checked when popped: an
//! entry whose page has left, or has a finite key again, is dropped then. A page entered
//! twice has two equal entries, so the order is the same.
//!
//! The policy counts requests (a hit, or an admission): the i-th is the access
//! `future[i]`. A request whose page differs from `future[i]`, or that comes after the
//! end of the future, breaks that contract; the page is then treated as never used
//! again, and the count still advances (it does not try to find its place in the future
//! again). The policy stays correct (capacity, residency, effects) but its choices are no
//! longer optimal.
//!
//! With sizes in bytes this is libCacheSim's `Belady` (commit aa0fc409,
//! `cache/eviction/Belady.c`): the page of the farthest next use goes, then the next,
//! until the new page fits. Ties, among pages never used again, can matter there (which
//! of them stay changes the room left); libCacheSim's heap breaks them by position, this
//! one by the trace's page id. On its CloudPhysics trace the two give the same miss
//! ratios and byte miss ratios to the four decimals printed
//! (`tests/policies_libcachesim.rs`).
//!
//! Memory: a next use per access of the future and a key per page, each a `u32` when
//! the future is shorter than 2^32 - 2 accesses (a `usize` otherwise); a bit per access
//! (and 1/63 of that for the levels above); a heap entry (8 bytes) per resident page
//! never used again, up to about twice as many after calls off the future.

use std::collections::BinaryHeap;
use std::sync::Arc;

use crate::core::ensure_index;
use crate::mm::placement::engine::Memory;
use crate::mm::placement::{CachePolicy, Effects, Request, Tier};
use crate::trace::PageId;

#[derive(Debug, Clone)]
pub struct Opt {
    state: State,
}

/// The policy with keys as narrow as the future allows: half the memory, and half the
/// cache lines per page, for futures shorter than 2^32 - 2 accesses.
#[derive(Debug, Clone)]
enum State {
    Narrow(Belady<u32>),
    Wide(Belady<usize>),
}

/// Calls `$body` on the policy's state, whatever its key type.
macro_rules! with_state {
    ($self:expr, $b:ident => $body:expr) => {
        match $self.state {
            State::Narrow(ref $b) => $body,
            State::Wide(ref $b) => $body,
        }
    };
    (mut $self:expr, $b:ident => $body:expr) => {
        match $self.state {
            State::Narrow(ref mut $b) => $body,
            State::Wide(ref mut $b) => $body,
        }
    };
}

impl Opt {
    pub fn new(future: Arc<[PageId]>) -> Self {
        let state = if future.len() < <u32 as Key>::GONE as usize {
            State::Narrow(Belady::new(future))
        } else {
            State::Wide(Belady::new(future))
        };
        Opt { state }
    }

    /// Resident pages in increasing id order (for tests).
    pub fn resident(&self) -> Vec<PageId> {
        with_state!(self, b => b.resident())
    }
}

/// An index into the future, or one of two marks a page's key can be instead.
trait Key: Copy + Eq + std::fmt::Debug {
    /// A resident page never used again (or whose next use is unknown).
    const NEVER: Self;
    /// A page that is not resident.
    const GONE: Self;
    fn from_index(index: usize) -> Self;
    fn index(self) -> usize;
}

impl Key for u32 {
    const NEVER: u32 = u32::MAX;
    const GONE: u32 = u32::MAX - 1;
    #[inline]
    fn from_index(index: usize) -> u32 {
        debug_assert!(index < Self::GONE as usize);
        index as u32
    }
    #[inline]
    fn index(self) -> usize {
        self as usize
    }
}

impl Key for usize {
    const NEVER: usize = usize::MAX;
    const GONE: usize = usize::MAX - 1;
    #[inline]
    fn from_index(index: usize) -> usize {
        index
    }
    #[inline]
    fn index(self) -> usize {
        self
    }
}

/// How many requests ahead [`Belady::next_request`] brings in the bit that request will
/// set.
const BITS_AHEAD: usize = 16;

/// Entries of `never` allowed besides twice the pages they stand for, before the heap
/// is rebuilt without the dropped ones.
const NEVER_SLACK: usize = if cfg!(test) { 2 } else { 1024 };

/// The policy's state, its keys of type `K`.
#[derive(Debug, Clone)]
struct Belady<K> {
    future: Arc<[PageId]>,
    /// For each access of the future, the index of the next access to the same page.
    next_use: Vec<K>,
    /// Requests seen so far: the index in `future` of the next.
    clock: usize,
    /// The next use of the page of the latest request, for its insertion.
    pending: K,
    /// Per page: its next use while resident, or [`Key::GONE`].
    key: Vec<K>,
    /// The finite keys of the resident pages.
    finite: Levels,
    /// `(trace id, page)` of the resident pages never used again, and of pages that were
    /// once (dropped when they come to the top): the largest trace id goes first, so
    /// that renumbering pages changes no choice.
    never: BinaryHeap<(PageId, PageId)>,
    /// Resident pages never used again: `never` holds an entry for each.
    never_resident: usize,
}

impl<K: Key> Belady<K> {
    fn new(future: Arc<[PageId]>) -> Self {
        let pages = future.iter().max().map_or(0, |&p| p as usize + 1);
        let next_use = next_uses(&future, pages);
        let finite = Levels::new(future.len());
        Belady {
            future,
            next_use,
            clock: 0,
            pending: K::NEVER,
            key: vec![K::GONE; pages],
            finite,
            never: BinaryHeap::new(),
            never_resident: 0,
        }
    }

    fn resident(&self) -> Vec<PageId> {
        (0..self.key.len() as PageId)
            .filter(|&page| self.key[page as usize] != K::GONE)
            .collect()
    }

    /// The next use of the page of the request just made, advancing the count.
    #[inline]
    fn next_request(&mut self, page: PageId) -> K {
        let i = self.clock;
        self.clock = self.clock.saturating_add(1);
        // The bit a request a little ahead will set, most likely (a hint).
        if let Some(&ahead) = self.next_use.get(i.saturating_add(BITS_AHEAD)) {
            if ahead != K::NEVER {
                self.finite.prefetch(ahead.index());
            }
        }
        match self.future.get(i) {
            Some(&expected) if expected == page => self.next_use[i],
            _ => K::NEVER,
        }
    }

    /// Make `key` the key of resident `page`, whose key was `old` (possibly [`Key::GONE`]).
    #[inline]
    fn set_key(&mut self, page: PageId, old: K, key: K, mem: &Memory) {
        if old == K::NEVER {
            if key == K::NEVER {
                // Its entry in `never` is still there.
                return;
            }
            self.never_resident -= 1;
        } else if old != K::GONE {
            self.finite.remove(old.index());
        }
        self.key[page as usize] = key;
        if key == K::NEVER {
            self.never_resident += 1;
            self.push_never(page, mem.trace_page(page));
        } else {
            self.finite.insert(key.index());
        }
    }

    fn push_never(&mut self, page: PageId, trace_id: PageId) {
        // Entries pile up only when the contract is broken (a page leaves or gets a
        // finite key again); keep them within a multiple of the pages they stand for.
        if self.never.len() >= 2 * self.never_resident + NEVER_SLACK {
            let key = &self.key;
            let mut entries = std::mem::take(&mut self.never).into_vec();
            entries.retain(|&(_, p)| key[p as usize] == K::NEVER);
            entries.sort_unstable();
            entries.dedup();
            self.never = entries.into();
        }
        self.never.push((trace_id, page));
    }

    /// Take the page to evict off the structures, and return it.
    fn pop_farthest(&mut self) -> Option<PageId> {
        while self.never_resident > 0 {
            // Some entry is valid while a page never used again is resident.
            let (_, page) = self.never.pop()?;
            if self.key[page as usize] == K::NEVER {
                self.never_resident -= 1;
                self.key[page as usize] = K::GONE;
                return Some(page);
            }
        }
        let farthest = self.finite.max()?;
        self.finite.remove(farthest);
        // The insertion that follows looks for the next largest (`insert`).
        self.finite.prefetch_max();
        let page = self.future[farthest];
        self.key[page as usize] = K::GONE;
        Some(page)
    }

    fn hit(&mut self, page: PageId, mem: &Memory) {
        let key = self.next_request(page);
        let old = self.key[page as usize];
        self.set_key(page, old, key, mem);
    }

    fn insert(&mut self, page: PageId, mem: &Memory) {
        ensure_index(&mut self.key, page, K::GONE);
        let old = self.key[page as usize];
        self.set_key(page, old, self.pending, mem);
        // The next eviction most likely takes the page of the largest key as it stands:
        // start loading it now, as it is far from the accesses of late.
        if let Some(farthest) = self.finite.max() {
            crate::core::prefetch::prefetch(&self.future, farthest);
        }
    }

    fn remove(&mut self, page: PageId) {
        let Some(&old) = self.key.get(page as usize) else {
            return;
        };
        if old == K::NEVER {
            // Its entry is dropped when it comes to the top.
            self.never_resident -= 1;
        } else if old != K::GONE {
            self.finite.remove(old.index());
        }
        self.key[page as usize] = K::GONE;
    }

    fn holds(&self, page: PageId) -> bool {
        self.key.get(page as usize).is_some_and(|&k| k != K::GONE)
    }
}

/// `next[i]` = the least `j > i` with `future[j] == future[i]`, or [`Key::NEVER`]; the
/// future's pages are below `pages`.
fn next_uses<K: Key>(future: &[PageId], pages: usize) -> Vec<K> {
    let mut seen_at = vec![K::NEVER; pages];
    let mut next = vec![K::NEVER; future.len()];
    for (i, &page) in future.iter().enumerate().rev() {
        next[i] = std::mem::replace(&mut seen_at[page as usize], K::from_index(i));
    }
    next
}

/// A set of indices below a bound, as bits in levels of 64-bit words: level 0 has a bit
/// per index, each level above a bit per non-empty word of the one below, and the last
/// is a single word.
#[derive(Debug, Clone)]
struct Levels {
    words: Vec<Vec<u64>>,
}

impl Levels {
    fn new(len: usize) -> Self {
        let mut words = Vec::new();
        let mut bits = len;
        loop {
            let n = bits.div_ceil(64).max(1);
            words.push(vec![0; n]);
            if n == 1 {
                return Levels { words };
            }
            bits = n;
        }
    }

    #[inline]
    fn insert(&mut self, mut index: usize) {
        for level in &mut self.words {
            let word = &mut level[index / 64];
            let was = *word;
            *word = was | 1 << (index % 64);
            if was != 0 {
                return;
            }
            index /= 64;
        }
    }

    #[inline]
    fn remove(&mut self, mut index: usize) {
        for level in &mut self.words {
            let word = &mut level[index / 64];
            *word &= !(1 << (index % 64));
            if *word != 0 {
                return;
            }
            index /= 64;
        }
    }

    /// Bring the word of `index` at level 0 into the cache (a hint).
    #[inline]
    fn prefetch(&self, index: usize) {
        crate::core::prefetch::prefetch(&self.words[0], index / 64);
    }

    /// Bring the word of the largest index at level 0 into the cache (a hint): the levels
    /// above are small and often read, so that finding it costs no wait.
    #[inline]
    fn prefetch_max(&self) {
        let mut index = 0;
        for level in self.words[1..].iter().rev() {
            let word = level[index];
            if word == 0 {
                return;
            }
            index = index * 64 + 63 - word.leading_zeros() as usize;
        }
        self.prefetch(index * 64);
    }

    /// The largest index in the set.
    #[inline]
    fn max(&self) -> Option<usize> {
        let mut index = 0;
        for level in self.words.iter().rev() {
            let word = level[index];
            if word == 0 {
                // Only the top word can be empty: a bit above marks a non-empty word.
                return None;
            }
            index = index * 64 + 63 - word.leading_zeros() as usize;
        }
        Some(index)
    }
}

impl CachePolicy for Opt {
    fn hit(&mut self, req: &Request, mem: &Memory, _out: &mut Effects) {
        with_state!(mut self, b => b.hit(req.page, mem));
    }

    fn admit(&mut self, req: &Request, mem: &Memory, _out: &mut Effects) -> bool {
        with_state!(mut self, b => b.pending = b.next_request(req.page));
        req.size <= mem.capacity_total()
    }

    fn evict(&mut self, _req: &Request, _mem: &Memory, out: &mut Effects) {
        if let Some(victim) = with_state!(mut self, b => b.pop_farthest()) {
            out.evict(victim);
        }
    }

    fn insert(&mut self, req: &Request, mem: &Memory, _out: &mut Effects) -> Tier {
        with_state!(mut self, b => b.insert(req.page, mem));
        Tier::Dram
    }

    fn remove(&mut self, page: PageId, _mem: &Memory) {
        with_state!(mut self, b => b.remove(page));
    }

    fn holds(&self, page: PageId) -> Option<Tier> {
        with_state!(self, b => b.holds(page)).then_some(Tier::Dram)
    }

    #[inline]
    fn prefetch(&self, page: PageId, _mem: &Memory) {
        with_state!(self, b => crate::core::prefetch::prefetch(&b.key, page as usize));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mm::placement::engine::Engine;
    use crate::mm::placement::policies::testing::{
        bytes, check_outcome, engine, evictions, hits, run_pages, step,
    };
    use crate::mm::placement::Effect;
    use proptest::prelude::*;

    fn opt(capacity: usize, future: &[PageId]) -> Engine<Opt> {
        engine(Opt::new(Arc::from(future)), capacity)
    }

    #[test]
    fn next_uses_by_backward_pass() {
        const NEVER: usize = <usize as Key>::NEVER;
        // index:                0  1  2  3  4
        assert_eq!(
            next_uses::<usize>(&[7, 8, 7, 7, 8], 9),
            vec![2, 4, 3, NEVER, NEVER]
        );
        assert_eq!(
            next_uses::<u32>(&[7, 8, 7, 7, 8], 9),
            vec![2, 4, 3, u32::MAX, u32::MAX]
        );
        assert!(next_uses::<u32>(&[], 0).is_empty());
    }

    #[test]
    fn levels_find_the_largest_index() {
        for len in [1, 63, 64, 65, 4096, 4097, 300_000] {
            let mut set = Levels::new(len);
            assert_eq!(set.max(), None);
            let mut plain = std::collections::BTreeSet::new();
            for i in 0..2000u64 {
                let index = (crate::core::mix64(i) % len as u64) as usize;
                if plain.insert(index) {
                    set.insert(index);
                } else {
                    plain.remove(&index);
                    set.remove(index);
                }
                assert_eq!(set.max(), plain.last().copied(), "len {len}");
            }
        }
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

    /// OPT as the module's pseudocode says, by a scan of the resident pages for the
    /// largest `(next use, page)`, sizes in bytes or pages alike.
    struct PlainOpt {
        future: Vec<PageId>,
        clock: usize,
        capacity: u64,
        /// Resident pages: (page, next use, size).
        resident: Vec<(PageId, usize, u64)>,
    }

    impl PlainOpt {
        /// Whether the request hit, and the pages it evicted.
        fn access(&mut self, page: PageId, size: u64) -> (bool, Vec<PageId>) {
            let i = self.clock;
            self.clock += 1;
            let next = if self.future.get(i) == Some(&page) {
                (i + 1..self.future.len())
                    .find(|&j| self.future[j] == page)
                    .unwrap_or(usize::MAX)
            } else {
                usize::MAX
            };
            if let Some(entry) = self.resident.iter_mut().find(|e| e.0 == page) {
                entry.1 = next;
                return (true, Vec::new());
            }
            let mut evicted = Vec::new();
            if size > self.capacity {
                return (false, evicted);
            }
            while self.resident.iter().map(|e| e.2).sum::<u64>() + size > self.capacity {
                let (at, _) = self
                    .resident
                    .iter()
                    .enumerate()
                    .max_by_key(|(_, e)| (e.1, e.0))
                    .unwrap();
                evicted.push(self.resident.swap_remove(at).0);
            }
            self.resident.push((page, next, size));
            (false, evicted)
        }

        fn remove(&mut self, page: PageId) {
            self.resident.retain(|e| e.0 != page);
        }
    }

    /// A future, and the calls made against it: mostly its accesses, sometimes another
    /// page instead, an access left out, a page removed, or an extra access.
    fn script() -> impl Strategy<Value = Vec<(PageId, u8, PageId)>> {
        proptest::collection::vec(
            (prop_oneof![0u32..4, 0u32..12, 0u32..40], 0u8..24, 0u32..48),
            1..300,
        )
    }

    fn size_of(page: PageId) -> u64 {
        1 + crate::core::mix64(u64::from(page)) % 8
    }

    fn agrees(script: &[(PageId, u8, PageId)], capacity: usize, in_bytes: bool, wide: bool) {
        let future: Vec<PageId> = script.iter().map(|s| s.0).collect();
        let shared: Arc<[PageId]> = Arc::from(future.as_slice());
        let policy = Opt {
            state: if wide {
                State::Wide(Belady::new(shared))
            } else {
                State::Narrow(Belady::new(shared))
            },
        };
        let mut ours = if in_bytes {
            bytes(policy, capacity)
        } else {
            engine(policy, capacity)
        };
        let mut plain = PlainOpt {
            future,
            clock: 0,
            capacity: capacity as u64,
            resident: Vec::new(),
        };
        let access = |ours: &mut Engine<Opt>, plain: &mut PlainOpt, page: PageId| {
            let size = if in_bytes { size_of(page) } else { 1 };
            let outcome = vec![step(ours, Request::sized(page, size))];
            let expected = plain.access(page, size);
            assert_eq!(
                (hits(&outcome)[0], evictions(&outcome).concat()),
                expected,
                "request {} for page {page}",
                plain.clock - 1
            );
            if !expected.0 && !matches!(outcome[0][0], Effect::Bypass) {
                assert!(ours.policy().resident().contains(&page));
            }
        };
        for &(page, action, other) in script {
            match action {
                0 => access(&mut ours, &mut plain, other),
                1 => {}
                2 => {
                    ours.remove(other);
                    plain.remove(other);
                    ours.check_agreement().unwrap();
                    access(&mut ours, &mut plain, page);
                }
                3 => {
                    access(&mut ours, &mut plain, page);
                    access(&mut ours, &mut plain, other);
                }
                _ => access(&mut ours, &mut plain, page),
            }
        }
        let mut resident: Vec<PageId> = plain.resident.iter().map(|e| e.0).collect();
        resident.sort_unstable();
        assert_eq!(ours.policy().resident(), resident);
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(200))]

        /// The same hits, and the same evictions in the same order, as a scan for the
        /// farthest next use, in pages and in bytes, with calls that follow the future
        /// and calls that break it, for both widths of keys.
        #[test]
        fn evicts_as_a_plain_scan(script in script(), capacity in 1usize..12, capacity_bytes in 1usize..40) {
            for wide in [false, true] {
                agrees(&script, capacity, false, wide);
                agrees(&script, capacity_bytes, true, wide);
            }
        }
    }
}
