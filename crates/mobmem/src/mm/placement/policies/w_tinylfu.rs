//! W-TinyLFU: a small LRU window in front of a segmented LRU, with a frequency sketch
//! deciding whether a page leaving the window may take the place of the main cache's
//! victim.
//!
//! Source: G. Einziger, R. Friedman and B. Manes, "TinyLFU: A Highly Efficient Cache
//! Admission Policy", ACM Transactions on Storage 13(4), 2017, sections 3 (TinyLFU) and
//! 4 (W-TinyLFU). The variant is libCacheSim's `WTinyLFU-w0.01-SLRU`
//! (`cache/eviction/WTinyLFU.c`, `SLRU.c` and `dataStructure/minimalIncrementCBF.c`,
//! commit aa0fc409), so that this policy gives its miss ratios
//! (`tests/policies_libcachesim.rs`). libCacheSim's `cachesim` names it both `wtinyLFU`
//! and `tinyLFU`: its TinyLFU is this same cache (`cache_init.h` gives `tinyLFU` a
//! window of 0.01 unless told otherwise; the two give equal counts on CloudPhysics at
//! 500, 2,000 and 20,000 objects). With `-e window-size=0`, TinyLFU without a window,
//! its window of 0 objects refuses every page and every request misses, so there is no
//! windowless variant of libCacheSim's to match.
//!
//! Memory of `c` pages: a window of nominally `W = floor(0.01 c)` pages (at least one) and
//! a main cache of `M = c - W` pages, an SLRU of a probation segment of `floor(0.2 M)`
//! pages and a protected one of `floor(0.8 M)` (each at least one). Lists, front = most
//! recent: the window (LRU), probation and protected.
//!
//! ```text
//! on access(x):
//!   x in the window:     move x to the window's front; hit
//!   x in probation:      move x to protected's front
//!                        while protected is over its size: its back moves to the front
//!                          of probation, and while probation is over its size, the back
//!                          of probation leaves memory
//!                        count(x); hit
//!   x in protected:      move x to protected's front; count(x); hit
//!   x nowhere:           while memory is full: evict()
//!                        put x at the window's front; count(x); miss
//!   every 32 M hits in the main cache: halve every counter of the sketch
//!
//! evict():
//!   loop:
//!     if the window is empty: the main cache's victim leaves memory; return
//!     v = the back of the window
//!     if the main cache has room:  v moves into it; count(v)
//!     else if freq(v) > freq(victim): the victim leaves memory, v moves into the main
//!                                     cache; count(v)
//!     else:                          v leaves memory; count(v); return
//!
//! the main cache's victim: the back of probation, or of protected if probation is empty
//! moving into the main cache: to the front of probation if it has room, else of
//!   protected if it has room, else of probation
//! ```
//!
//! The sketch (`count`, `freq`): a count-min sketch of `w = ceil(b M)` 32-bit counters,
//! `b = -ln(0.001) / ln(2)^2` (a 0.1 % error for `M` entries), and `d = ceil(b ln 2) = 10`
//! counters a key, at `(h0 + i h1) mod w` for `i` in `0..d`, with `h0`, `h1` the low 32
//! bits of XXH64 of the key's 8 little-endian bytes under libCacheSim's seeds
//! `0x12345678` and `0x12344321`. `count` adds one to each of the key's counters (every
//! one, not only the smallest, although libCacheSim names it minimal increment);
//! `freq` is the smallest of them.
//!
//! Where this differs from the paper, it follows libCacheSim:
//! - no doorkeeper (the paper's Bloom filter in front of the sketch);
//! - the aging sample counts hits in the main cache only, not every access, and the
//!   sample size is `32 M`; window hits are not counted in the sketch, while every page
//!   entering the window and every window page offered to the main cache (admitted or
//!   not) is;
//! - the window has no bound of its own: a new page always enters it, and one eviction
//!   may move several window pages into the main cache (each admission frees a place in
//!   the main cache for the next window page) until a window page is refused or the
//!   window is empty;
//! - when `floor(0.2 M) + floor(0.8 M) < M` (at 100 pages: 19 + 79 of 99), a page moving
//!   into a full pair of segments goes to probation past its size, and a later promotion
//!   out of probation then evicts probation's back: a hit may evict a page.
//!
//! Decided here:
//! - the sketch hashes a page's key, which is its page id in the trace (the engine's
//!   renumbering, [`Memory::dense_page`], undone) unless the policy is built with
//!   [`WTinyLfu::with_sketch_keys`]. The registered policy hashes page ids, which are
//!   interned traces number in the order pages first appear, while libCacheSim hashes the trace's
//!   object ids: the sketch's collisions differ, and so do the miss ratios, by up to
//!   0.003 on the CloudPhysics trace with capacities in objects (with capacities in
//!   bytes, 1 MiB to 1 GiB, they agree to the four decimals printed). Built with the
//!   trace's object ids as keys ([`crate::mm::placement::BuildContext::object_ids`], `sim --hash-object-ids`),
//!   it gives libCacheSim's miss ratios exactly (`tests/policies_libcachesim.rs` checks
//!   both);
//! - libCacheSim admits nothing below 100 pages (a window of 0 pages) or with a
//!   probation segment of 0 pages; here the window and each segment get at least one
//!   page, and with no main cache (one page of memory) a window page offered to it
//!   leaves memory;
//! - the counters are allocated when first read (the main cache is full for the first
//!   time, or an aging is due); until then each page's counts are kept per page and
//!   replayed then, which gives the same counters, since a count raises every one of the
//!   key's counters whatever their values. So a capacity far beyond the trace allocates
//!   for the pages seen, not for the capacity.
//!
//! With sizes in bytes, as libCacheSim's: the window, the main cache and its segments
//! count bytes and their sizes are those shares of the capacity in bytes; a page larger
//! than the window's nominal size or than probation is not admitted; a window page moves
//! into the main cache if it fits there, else is compared with the main cache's victim;
//! one admitted by the sketch takes the victim's place and, if it still does not fit,
//! the main cache evicts further victims. The sketch is sized for the main cache's bytes
//! (as many entries as bytes, up to `2^31 - 1` counters); with that many counters and so
//! few keys, its counters are kept in a map, not an array (the estimates are the same).
//!
//! Per page: two `u32` links, one byte for its list and, until the sketch is allocated,
//! a `u32` count.

use std::sync::Arc;

use super::queues::Queues;
use super::slru::Segments;
use crate::core::ensure_index;
use crate::mm::placement::engine::Memory;
use crate::mm::placement::{CachePolicy, Effects, Request, Tier};
use crate::trace::PageId;

/// The window's nominal share of memory.
pub const WINDOW_FRACTION: f64 = 0.01;
/// Probation's share of the main cache (libCacheSim's `seg-size=1:4`); protected has
/// `1 - PROBATION_FRACTION`.
pub const PROBATION_FRACTION: f64 = 1.0 / 5.0;
/// The sketch's target error rate for `M` entries.
pub const SKETCH_ERROR: f64 = 0.001;
/// Hits in the main cache between agings, per unit of the main cache.
pub const SAMPLE_PER_PAGE: u64 = 32;

/// libCacheSim's seeds for the sketch's two hashes.
const SEEDS: [u64; 2] = [0x1234_5678, 0x1234_4321];

/// The window's one queue.
const WINDOW: usize = 0;

#[derive(Debug, Clone)]
pub struct WTinyLfu {
    capacity: u64,
    window_size: u64,
    main_size: u64,
    /// The window, an LRU list.
    window: Queues,
    /// The main cache: probation (segment 0) and protected (segment 1).
    main: Segments,
    sketch: Sketch,
    /// Hits in the main cache since the last aging.
    main_hits: u64,
    sample_size: u64,
    /// The key the sketch hashes for each page; a page past the end hashes its id.
    keys: Option<Arc<[u64]>>,
}

impl WTinyLfu {
    /// W-TinyLFU for a memory of `capacity` units (pages, or bytes).
    pub fn new(capacity: usize, page_count_hint: usize) -> Self {
        let capacity = capacity.max(1);
        // As libCacheSim computes them: each share times the size, truncated.
        let window_size = ((capacity as f64 * WINDOW_FRACTION) as usize).clamp(1, capacity);
        let main_size = capacity - window_size;
        let probation = ((PROBATION_FRACTION * main_size as f64) as u64).max(1);
        let protected = (((1.0 - PROBATION_FRACTION) * main_size as f64) as u64).max(1);
        WTinyLfu {
            capacity: capacity as u64,
            window_size: window_size as u64,
            main_size: main_size as u64,
            window: Queues::new(1, page_count_hint),
            main: Segments::new(vec![probation, protected], page_count_hint),
            sketch: Sketch::new(main_size),
            main_hits: 0,
            sample_size: SAMPLE_PER_PAGE.saturating_mul(main_size as u64),
            keys: None,
        }
    }

    /// The policy with `keys[page]` hashed in the sketch for each page instead of the
    /// page's id: the trace's own object ids, for instance, as libCacheSim hashes them.
    pub fn with_sketch_keys(capacity: usize, page_count_hint: usize, keys: Arc<[u64]>) -> Self {
        WTinyLfu {
            keys: Some(keys),
            ..Self::new(capacity, page_count_hint)
        }
    }

    /// `(window, probation, protected)` sizes in units; the window's is nominal.
    pub fn sizes(&self) -> (u64, u64, u64) {
        let limits = self.main.limits();
        (self.window_size, limits[0], limits[1])
    }

    /// The lists `[window, probation, protected]`, each from front to back.
    pub fn lists(&self) -> [Vec<PageId>; 3] {
        let main = self.main.pages();
        [
            self.window.iter(WINDOW).collect(),
            main[0].clone(),
            main[1].clone(),
        ]
    }

    /// The sketch's estimate of how often `page` was counted, for a run whose pages were
    /// not renumbered ([`Memory::dense_page`]): tests that feed the engine directly.
    pub fn frequency(&mut self, page: PageId) -> u32 {
        self.materialize(None);
        self.sketch.estimate(self.key(page, None))
    }

    /// What the sketch hashes for `page`: its key if the policy has keys, else the
    /// trace's id of the page, so that renumbering pages changes no estimate.
    fn key(&self, page: PageId, mem: Option<&Memory>) -> u64 {
        let id = mem.map_or(page, |mem| mem.trace_page(page));
        self.keys
            .as_ref()
            .and_then(|keys| keys.get(id as usize).copied())
            .unwrap_or(u64::from(id))
    }

    fn count(&mut self, page: PageId, mem: &Memory) {
        if self.sketch.is_allocated() {
            self.sketch
                .add(&self.sketch.slots(self.key(page, Some(mem))));
        } else {
            self.sketch.defer(page);
        }
    }

    /// Bring `page`'s counters into the cache (a hint): ten lines of an array of
    /// megabytes, read at random, which each count and estimate of the page reads.
    #[inline]
    fn prefetch_counters(&self, page: PageId, mem: &Memory) {
        if let Counters::Dense(counters) = &self.sketch.counters {
            let slots = self.sketch.slots(self.key(page, Some(mem)));
            for &slot in &slots[..self.sketch.hashes as usize] {
                crate::core::prefetch::prefetch_l2(counters, slot as usize);
            }
        }
    }

    /// Allocate the sketch's counters, replaying the counts kept per page so far.
    fn materialize(&mut self, mem: Option<&Memory>) {
        if self.sketch.is_allocated() {
            return;
        }
        let deferred = self.sketch.allocate();
        for (page, &times) in deferred.iter().enumerate() {
            let slots = self.sketch.slots(self.key(page as PageId, mem));
            for _ in 0..times {
                self.sketch.add(&slots);
            }
        }
    }
}

impl CachePolicy for WTinyLfu {
    #[inline]
    fn hit(&mut self, req: &Request, mem: &Memory, out: &mut Effects) {
        let page = req.page;
        if self.window.queue_of(page) == Some(WINDOW) {
            self.window.move_to_front(WINDOW, page, mem);
            return;
        }
        self.main.hit(page, mem, out);
        self.count(page, mem);
        self.main_hits += 1;
        if self.main_hits >= self.sample_size {
            self.main_hits = 0;
            self.materialize(Some(mem));
            self.sketch.halve();
        }
    }

    fn admit(&mut self, req: &Request, _mem: &Memory, _out: &mut Effects) -> bool {
        req.size <= self.capacity
            && req.size <= self.window_size
            && req.size <= self.main.limits()[0]
    }

    /// Free memory: `evict()` of the module documentation.
    fn evict(&mut self, _req: &Request, mem: &Memory, out: &mut Effects) {
        loop {
            let Some(candidate) = self.window.back(WINDOW) else {
                self.main.evict(mem, out);
                return;
            };
            let size = mem.size_of(candidate);
            let admit = if self.main.units() + size <= self.main_size {
                true
            } else if let Some(victim) = self.main.victim() {
                // Whether the candidate is more frequent than the victim; the
                // candidate's counters, found once, are then counted.
                self.materialize(Some(mem));
                let slots = self.sketch.slots(self.key(candidate, Some(mem)));
                let admit =
                    self.sketch.least(&slots) > self.sketch.estimate(self.key(victim, Some(mem)));
                if admit {
                    self.main.evict(mem, out);
                }
                self.window.remove(candidate, mem);
                if admit {
                    self.main.insert(candidate, self.main_size, mem, out);
                } else {
                    out.evict(candidate);
                }
                self.sketch.add(&slots);
                if !admit {
                    // What the next eviction compares, most often: the window's back
                    // and the main cache's victim.
                    if let Some(next) = self.window.back(WINDOW) {
                        self.prefetch_counters(next, mem);
                    }
                    if let Some(victim) = self.main.victim() {
                        self.prefetch_counters(victim, mem);
                    }
                    return;
                }
                continue;
            } else {
                false
            };
            self.window.remove(candidate, mem);
            if admit {
                self.main.insert(candidate, self.main_size, mem, out);
            } else {
                out.evict(candidate);
            }
            self.count(candidate, mem);
            if !admit {
                return;
            }
        }
    }

    #[inline]
    fn insert(&mut self, req: &Request, mem: &Memory, _out: &mut Effects) -> Tier {
        self.window.push_front(WINDOW, req.page, mem);
        self.count(req.page, mem);
        Tier::Dram
    }

    fn remove(&mut self, page: PageId, mem: &Memory) {
        if self.window.remove(page, mem).is_none() {
            self.main.remove(page, mem);
        }
    }

    fn holds(&self, page: PageId) -> Option<Tier> {
        (self.window.queue_of(page).is_some() || self.main.segment_of(page).is_some())
            .then_some(Tier::Dram)
    }

    #[inline]
    fn prefetch(&self, page: PageId, mem: &Memory) {
        self.window.prefetch(page);
        self.main.prefetch(page);
        // A hit in the main cache and a miss count the page.
        self.prefetch_counters(page, mem);
    }
}

/// Above this many counters the sketch keeps them in a map (those of the keys counted),
/// not an array: a sketch sized for a main cache of bytes has up to `2^31 - 1` counters,
/// which a trace touches a few of.
const DENSE_COUNTERS: u32 = 1 << 24;

/// Room for a key's counters, of which it has 10 at libCacheSim's error rate ([`SKETCH_ERROR`]).
const HASH_ROOM: usize = 16;

/// A key's counters in a [`Sketch`]: their indices, the first [`Sketch::hashes`] used.
type Slots = [u32; HASH_ROOM];

/// The counters of a [`Sketch`]: every one in an array, or the non-zero ones in a map.
#[derive(Debug, Clone)]
enum Counters {
    Unallocated,
    Dense(Vec<u32>),
    Sparse(hashbrown::HashMap<u32, u32, foldhash::fast::FixedState>),
}

/// libCacheSim's counting Bloom filter, a count-min sketch in one array of counters.
#[derive(Debug, Clone)]
struct Sketch {
    hashes: u32,
    width: u32,
    /// `width`'s multiplier for [`remainder`].
    width_magic: u64,
    counters: Counters,
    /// Per page, counts made before the counters were allocated.
    deferred: Vec<u32>,
}

impl Sketch {
    /// A sketch for `entries` keys at [`SKETCH_ERROR`].
    fn new(entries: usize) -> Self {
        let entries = entries.min(i32::MAX as usize) as f64;
        // As libCacheSim computes them, with its 15-digit ln(2)^2 (the width depends on
        // its last digits); its 15-digit ln(2) gives the same 10 hashes as the exact one.
        let per_entry = -SKETCH_ERROR.ln() / 0.480453013918201;
        let hashes = ((std::f64::consts::LN_2 * per_entry).ceil() as u32).min(HASH_ROOM as u32);
        let mut width = (per_entry * entries).ceil().min(i32::MAX as f64) as u32;
        if width < hashes {
            width = 2 * hashes;
        }
        Sketch {
            hashes,
            width,
            width_magic: magic(width),
            counters: Counters::Unallocated,
            deferred: Vec::new(),
        }
    }

    fn is_allocated(&self) -> bool {
        !matches!(self.counters, Counters::Unallocated)
    }

    fn defer(&mut self, page: PageId) {
        ensure_index(&mut self.deferred, page, 0);
        let times = &mut self.deferred[page as usize];
        *times = times.saturating_add(1);
    }

    /// Allocate the counters; returns the deferred counts, per page.
    fn allocate(&mut self) -> Vec<u32> {
        self.counters = if self.width <= DENSE_COUNTERS {
            Counters::Dense(vec![0; self.width as usize])
        } else {
            Counters::Sparse(hashbrown::HashMap::with_hasher(
                foldhash::fast::FixedState::with_seed(0),
            ))
        };
        std::mem::take(&mut self.deferred)
    }

    /// The counters of `key`: the first [`Sketch::hashes`] of the array.
    #[inline]
    fn slots(&self, key: u64) -> Slots {
        let a = xxh64_u64(key, SEEDS[0]) as u32;
        let b = xxh64_u64(key, SEEDS[1]) as u32;
        let mut slots = [0; HASH_ROOM];
        for (i, slot) in (0..self.hashes).zip(&mut slots) {
            *slot = remainder(
                a.wrapping_add(i.wrapping_mul(b)),
                self.width,
                self.width_magic,
            );
        }
        slots
    }

    /// The least of the counters at `slots` (`u32::MAX` for none).
    #[inline]
    fn least(&self, slots: &Slots) -> u32 {
        let slots = &slots[..self.hashes as usize];
        match &self.counters {
            Counters::Dense(counters) => slots
                .iter()
                .map(|&slot| counters[slot as usize])
                .min()
                .unwrap_or(u32::MAX),
            Counters::Sparse(counters) => slots
                .iter()
                .map(|slot| counters.get(slot).copied().unwrap_or(0))
                .min()
                .unwrap_or(u32::MAX),
            Counters::Unallocated => {
                if slots.is_empty() {
                    u32::MAX
                } else {
                    0
                }
            }
        }
    }

    fn estimate(&self, key: u64) -> u32 {
        self.least(&self.slots(key))
    }

    /// Add one to each of the counters at `slots`, unless the least is at its largest.
    fn add(&mut self, slots: &Slots) {
        if self.least(slots) == u32::MAX {
            return;
        }
        let slots = &slots[..self.hashes as usize];
        match &mut self.counters {
            Counters::Dense(counters) => {
                for &slot in slots {
                    counters[slot as usize] = counters[slot as usize].wrapping_add(1);
                }
            }
            Counters::Sparse(_) => {
                for &slot in slots {
                    self.bump(slot);
                }
            }
            Counters::Unallocated => {}
        }
    }

    #[inline]
    fn bump(&mut self, slot: u32) {
        match &mut self.counters {
            Counters::Dense(counters) => {
                counters[slot as usize] = counters[slot as usize].wrapping_add(1)
            }
            Counters::Sparse(counters) => {
                let counter = counters.entry(slot).or_insert(0);
                *counter = counter.wrapping_add(1);
            }
            Counters::Unallocated => {}
        }
    }

    fn halve(&mut self) {
        match &mut self.counters {
            Counters::Dense(counters) => {
                for counter in counters {
                    *counter >>= 1;
                }
            }
            Counters::Sparse(counters) => {
                counters.retain(|_, counter| {
                    *counter >>= 1;
                    *counter != 0
                });
            }
            Counters::Unallocated => {}
        }
    }
}

/// The multiplier that [`remainder`] divides by `d` (at least 1) with.
fn magic(d: u32) -> u64 {
    (u64::MAX / u64::from(d)).wrapping_add(1)
}

/// `a % d`, by two multiplications instead of a division, exact for every 32-bit `a`
/// and `d` (D. Lemire, O. Kaser and N. Kurz, "Faster remainder by direct computation",
/// Software: Practice and Experience 49(6), 2019). The sketch takes ten remainders a
/// count and twenty an admission.
#[inline]
fn remainder(a: u32, d: u32, magic: u64) -> u32 {
    let low = magic.wrapping_mul(u64::from(a));
    ((u128::from(low) * u128::from(d)) >> 64) as u32
}

/// XXH64 (Y. Collet's xxHash) of the 8 little-endian bytes of `value`.
fn xxh64_u64(value: u64, seed: u64) -> u64 {
    const P1: u64 = 0x9E37_79B1_85EB_CA87;
    const P2: u64 = 0xC2B2_AE3D_27D4_EB4F;
    const P3: u64 = 0x1656_67B1_9E37_79F9;
    const P4: u64 = 0x85EB_CA77_C2B2_AE63;
    const P5: u64 = 0x27D4_EB2F_1656_67C5;
    let lane = value.wrapping_mul(P2).rotate_left(31).wrapping_mul(P1);
    let mut h = seed.wrapping_add(P5).wrapping_add(8);
    h ^= lane;
    h = h.rotate_left(27).wrapping_mul(P1).wrapping_add(P4);
    h ^= h >> 33;
    h = h.wrapping_mul(P2);
    h ^= h >> 29;
    h = h.wrapping_mul(P3);
    h ^ (h >> 32)
}

#[cfg(test)]
mod tests {
    use super::*;

    proptest::proptest! {
        #[test]
        fn remainders_are_exact(a in proptest::prelude::any::<u32>(), d in 1u32..) {
            proptest::prop_assert_eq!(remainder(a, d, magic(d)), a % d);
        }
    }

    #[test]
    fn remainders_are_exact_at_the_edges() {
        for d in [
            1,
            2,
            3,
            7,
            1424,
            720_000,
            i32::MAX as u32,
            u32::MAX - 1,
            u32::MAX,
        ] {
            for a in [
                0,
                1,
                d - 1,
                d,
                d.wrapping_add(1),
                u32::MAX / 2,
                u32::MAX - 1,
                u32::MAX,
            ] {
                assert_eq!(remainder(a, d, magic(d)), a % d, "{a} % {d}");
            }
        }
    }
    use crate::mm::placement::policies::testing::{
        check_outcome, engine, evictions, hit_pattern, run_pages,
    };

    #[test]
    fn xxh64_matches_the_reference() {
        // From xxHash's reference implementation (libCacheSim's copy), XXH64 of the 8
        // bytes of each id under libCacheSim's two seeds.
        let cases: [(u64, u64, u64); 4] = [
            (0, 7474699180120069235, 14025973215857892985),
            (1, 512166280014807191, 9505396150020625599),
            (42, 17837433028698207781, 14585895858894559368),
            (u64::MAX, 6968065319778549417, 14892570850134674759),
        ];
        for (id, h0, h1) in cases {
            assert_eq!(xxh64_u64(id, SEEDS[0]), h0, "id {id}");
            assert_eq!(xxh64_u64(id, SEEDS[1]), h1, "id {id}");
        }
    }

    #[test]
    fn sizes_follow_libcachesim() {
        // c = 100: window 1, main 99: 19.8 and 79.2 round down.
        assert_eq!(WTinyLfu::new(100, 0).sizes(), (1, 19, 79));
        assert_eq!(WTinyLfu::new(500, 0).sizes(), (5, 99, 396));
        assert_eq!(WTinyLfu::new(20000, 0).sizes(), (200, 3960, 15840));
        // Below 100 pages every part gets at least one page.
        assert_eq!(WTinyLfu::new(10, 0).sizes(), (1, 1, 7));
        assert_eq!(WTinyLfu::new(2, 0).sizes(), (1, 1, 1));
        assert_eq!(WTinyLfu::new(1, 0).sizes(), (1, 1, 1));
        // libCacheSim's sketch for 99 entries: 10 hashes, ceil(14.3775.. x 99) counters.
        let sketch = Sketch::new(99);
        assert_eq!((sketch.hashes, sketch.width), (10, 1424));
        assert_eq!(Sketch::new(0).width, 20);
    }

    #[test]
    fn the_window_feeds_the_main_cache_until_it_is_full() {
        // capacity 10: window 1, main 9 (probation 1, protected 7; 1 + 7 < 9).
        // Lists written [window] [probation] [protected], front first.
        //   1..10   misses, memory not full: all in the window   [10 .. 1] [] []
        //   11      memory full: evict(): the main cache has room, so the window's back
        //           pages move in, 1 to probation, then 2..8 to protected (probation is
        //           at its size), then 9 to probation past its size (main full: 9 of 9);
        //           10 is offered with the main cache full: 10, counted once, is not
        //           more frequent than the victim (1, probation's back, counted twice:
        //           entering the window and being offered), so 10 leaves memory.
        //                                       [11] [9 1] [8 7 6 5 4 3 2]
        let mut tiny = engine(WTinyLfu::new(10, 0), 10);
        let outcome = run_pages(&mut tiny, &(1..=11).collect::<Vec<_>>());
        assert_eq!(hit_pattern(&outcome), "mmmmmmmmmmm");
        assert_eq!(evictions(&outcome)[10], vec![10]);
        assert_eq!(
            tiny.policy().lists(),
            [vec![11], vec![9, 1], vec![8, 7, 6, 5, 4, 3, 2]]
        );
        // 1 is hit in probation: promoted to protected, which is over its size, so its
        // back (2) moves to probation, which is then over its size: its back (1 left it,
        // so 9) leaves memory. A hit that evicts.
        //                                       [11] [2] [1 8 7 6 5 4 3]
        let outcome = run_pages(&mut tiny, &[1]);
        assert_eq!(hit_pattern(&outcome), "h");
        assert_eq!(evictions(&outcome), vec![vec![9]]);
        assert_eq!(
            tiny.policy().lists(),
            [vec![11], vec![2], vec![1, 8, 7, 6, 5, 4, 3]]
        );
        assert_eq!(tiny.memory().used_total(), 9);
    }

    #[test]
    fn a_frequent_window_page_displaces_the_main_victim() {
        // capacity 3: window 1, main 2 (probation 1, protected 1). Lists written
        // [window] [probation] [protected]; counts in the sketch after each step.
        //   1 2 3   [3 2 1] [] []                       1: 1, 2: 1, 3: 1
        //   4       memory full: 1 moves into probation, 2 into protected (the main
        //           cache has room; each counted), then 3 is offered to a full main
        //           cache: freq(3) 1 is not above the victim's (1) 2, so 3 leaves
        //           (counted).  [4] [1] [2]             1: 2, 2: 2, 3: 2, 4: 1
        //   4       window hit, not counted
        //   5       4 offered: 1 against 2, leaves        [5] [1] [2]
        //   5 5     window hits
        //   6       5 offered: 1 against 2, leaves        [6] [1] [2]
        let mut tiny = engine(WTinyLfu::new(3, 0), 3);
        let outcome = run_pages(&mut tiny, &[1, 2, 3, 4, 4, 5, 5, 5, 6]);
        check_outcome(&outcome, "mmmmhmhhm", &[3, 4, 5]);
        assert_eq!(tiny.policy().lists(), [vec![6], vec![1], vec![2]]);
        //   3       miss: 6 offered, 1 against 2, leaves; 3 enters (counted a third time)
        //                                                 [3] [1] [2]
        //   7       3 offered: its estimate is 5, above 1's 2 (the sketch has 29
        //           counters for 10 a key here, so 3's are all shared with other pages
        //           and overestimate its 3 counts; a count-min sketch never
        //           underestimates). 1 leaves and 3 moves into probation (counted). The
        //           window is then empty and the loop goes on (nothing was refused yet):
        //           the main cache's victim, probation's back, leaves; it is 3 itself.
        //                                                 [7] [] [2]
        let outcome = run_pages(&mut tiny, &[3, 7]);
        assert_eq!(evictions(&outcome), vec![vec![6], vec![1, 3]]);
        assert_eq!(tiny.policy().lists(), [vec![7], vec![], vec![2]]);
        assert_eq!(tiny.memory().used_total(), 2);
        assert_eq!(tiny.policy_mut().frequency(3), 6);
        assert_eq!(tiny.policy_mut().frequency(1), 2);
        //   8       memory not full: 8 enters the window, nothing leaves
        let outcome = run_pages(&mut tiny, &[8]);
        assert!(evictions(&outcome)[0].is_empty());
        assert_eq!(tiny.policy().lists(), [vec![8, 7], vec![], vec![2]]);
    }

    #[test]
    fn aging_halves_the_counters() {
        // capacity 2: window 1, main 1 (sizes 1 and 1), sample size 32 main hits.
        //   1 2   [2 1]; 3: 1 moves into the main cache (room; 1 counted twice now), 2
        //   is offered to a full main cache: freq(2) 1 against freq(1) 2, refused.
        //                                                         [3] [1] []
        let mut tiny = engine(WTinyLfu::new(2, 0), 2);
        run_pages(&mut tiny, &[1, 2, 3]);
        assert_eq!(tiny.policy().lists(), [vec![3], vec![1], vec![]]);
        assert_eq!(tiny.policy_mut().frequency(1), 2);
        // 31 hits on 1 (the first promotes it): 33 counts, no aging yet.
        run_pages(&mut tiny, &[1; 31]);
        assert_eq!(tiny.policy_mut().frequency(1), 33);
        // The 32nd main hit counts 1 (34) and ages: 17.
        run_pages(&mut tiny, &[1]);
        assert_eq!(tiny.policy_mut().frequency(1), 17);
    }

    #[test]
    fn sketch_keys_replace_page_ids() {
        // The same pages under keys that collide in every counter (all the same key)
        // make every window page as frequent as the victim or more.
        let keys: Arc<[u64]> = vec![7; 8].into();
        let mut keyed = engine(WTinyLfu::with_sketch_keys(3, 0, keys), 3);
        run_pages(&mut keyed, &[1, 2, 3, 4]);
        // 1 and 2 entered the main cache; 3 is offered against 1, both key 7 (counted
        // five times by then): equal, refused.
        assert_eq!(
            keyed.policy_mut().frequency(1),
            keyed.policy_mut().frequency(3)
        );
        assert_eq!(keyed.policy().lists(), [vec![4], vec![1], vec![2]]);
    }
}
