//! LHD (least hit density): evict, of a few resident pages drawn at random and the
//! pages admitted last, the one expected to bring the fewest hits per unit of space and
//! time, from hit and eviction counts by age learnt as the trace goes.
//!
//! Source: N. Beckmann, H. Chen and A. Cidon, "LHD: improving cache hit rate by
//! maximizing hit density", NSDI 2018; as libCacheSim carries its authors' code (commit
//! aa0fc409, `cache/eviction/LHD/lhd.cpp`, `lhd.hpp`, `LHD_Interface.cpp`), with its
//! constants: ages of 2^10 accesses at first, 20000 ages, 16 classes by the sum of a
//! page's last two hit ages, 8 candidates drawn (32 after 50 reconfigurations), the
//! last 8 pages admitted below the average victim's rank, 1 % of the capacity for
//! explorers (one access in 32 draws the chance to be one), a reconfiguration every
//! 2^20 accesses with counts decayed by 0.9.
//!
//! ```text
//! rank(p) = density[class(p)][age(p)] / size(p)  (+1 for an explorer; the lowest
//!           rank possible at the last age)
//! on access(p):        hit: count a hit of p's class at p's age; p's hit ages shift
//!                      p's age restarts; one draw decides whether p explores
//!                      a page admitted, not exploring, below the victims' average
//!                      rank is remembered (8 at most)
//!                      every 2^20 accesses: decay the counts, model the densities
//! evict():             8 draws among the resident pages, then the remembered ones:
//!                      the lowest rank goes (a later candidate only if strictly
//!                      lower); the victims' average rank moves a tenth towards it
//! ```
//! Every number is a 32-bit float, computed in libCacheSim's order, and the draws are
//! libCacheSim's generator's ([`Lcg`]), taken in its order (the eviction's 8 first,
//! then one per access), over the resident pages in libCacheSim's vector order (a page
//! that leaves is replaced by the last one). So on the CloudPhysics and OLTP traces the
//! miss counts are libCacheSim's (`tests/policies_libcachesim.rs`).
//!
//! As in libCacheSim, a page removed for another reason ([`CachePolicy::remove`]) gives
//! back no explorer budget and is not counted as an eviction.
//!
//! Per page: a `u32` index into a 32-byte record per resident page; 16 classes of three
//! tables of 20000 floats (3.8 MB), whatever the trace.

use super::rand::Lcg;
use crate::core::ensure_index;
use crate::mm::placement::engine::Memory;
use crate::mm::placement::{CachePolicy, Effects, Request, Tier};
use crate::trace::PageId;

/// Ages a class counts; a page older than the last is always evicted first.
pub const AGES: usize = 20_000;
/// Classes by hit age (libCacheSim's `HIT_AGE_CLASSES`); every page is of one app.
const CLASSES: usize = 16;
/// The app every page belongs to (libCacheSim's `DEFAULT_APP_ID`): classes are numbered
/// from `APP * CLASSES`, which their first densities depend on.
const APP: usize = 1;
/// Accesses between two reconfigurations.
pub const ACCESSES_PER_RECONFIGURATION: u64 = 1 << 20;
const EWMA_DECAY: f32 = 0.9;
const EXPLORER_BUDGET_FRACTION: f32 = 0.01;
const EXPLORE_INVERSE_PROBABILITY: u64 = 32;
const AGE_COARSENING_ERROR_TOLERANCE: f32 = 0.01;
/// Pages admitted last that each eviction also ranks (`ADMISSIONS`).
const ADMISSIONS: usize = 8;
/// Pages drawn for each eviction, then after 50 reconfigurations (`ASSOCIATIVITY`).
const CANDIDATES: u32 = 8;
const ASSOCIATIVITY: u32 = 32;
const NONE: u32 = u32::MAX;

/// What LHD keeps of a resident page (libCacheSim's `Tag`).
#[derive(Debug, Clone, Copy)]
struct Tag {
    page: PageId,
    timestamp: u64,
    last_hit_age: u32,
    last_last_hit_age: u32,
    size: f32,
    explorer: bool,
}

/// A class's hits and evictions by age.
#[derive(Debug, Clone)]
struct Class {
    hits: Vec<f32>,
    evictions: Vec<f32>,
}

#[derive(Debug, Clone)]
pub struct Lhd {
    tags: Vec<Tag>,
    /// Each page's place in `tags`, [`NONE`] when it is not resident.
    index: Vec<u32>,
    classes: Vec<Class>,
    /// Hit density by class and age, `[class * AGES + age]`: one load a rank.
    densities: Vec<f32>,
    timestamp: u64,
    next_reconfiguration: u64,
    reconfigurations: u32,
    age_shift: u32,
    ewma_objects: f32,
    ewma_objects_mass: f32,
    recently_admitted: [Option<PageId>; ADMISSIONS],
    admitted_head: usize,
    ewma_victim_density: f32,
    explorer_budget: i64,
    rand: Lcg,
}

impl Lhd {
    /// LHD for a memory of `capacity` units (pages, or bytes): 1 % of it for explorers.
    pub fn new(capacity: u64, page_count_hint: usize) -> Self {
        let classes = vec![
            Class {
                hits: vec![0.0; AGES],
                evictions: vec![0.0; AGES],
            };
            CLASSES
        ];
        // libCacheSim's first densities, by the class's number among all apps'.
        let densities = (0..CLASSES * AGES)
            .map(|i| {
                let (c, a) = (APP * CLASSES + i / AGES, i % AGES);
                (1.0 * (c + 1) as f64 / (a + 1) as f64) as f32
            })
            .collect();
        Lhd {
            tags: Vec::new(),
            index: vec![NONE; page_count_hint],
            classes,
            densities,
            timestamp: 0,
            next_reconfiguration: ACCESSES_PER_RECONFIGURATION,
            reconfigurations: 0,
            age_shift: 10,
            ewma_objects: 0.0,
            ewma_objects_mass: 0.0,
            recently_admitted: [None; ADMISSIONS],
            admitted_head: 0,
            ewma_victim_density: 0.0,
            explorer_budget: (capacity as f32 * EXPLORER_BUDGET_FRACTION) as i64,
            rand: Lcg::default(),
        }
    }

    /// How many times the model was rebuilt, and the age unit's shift (for tests).
    pub fn model(&self) -> (u32, u32) {
        (self.reconfigurations, self.age_shift)
    }

    fn age(&self, tag: &Tag) -> usize {
        (((self.timestamp - tag.timestamp) >> self.age_shift) as usize).min(AGES - 1)
    }

    fn class_of(tag: &Tag) -> usize {
        hit_age_class(u64::from(tag.last_hit_age) + u64::from(tag.last_last_hit_age))
    }

    fn density(&self, tag: &Tag) -> f32 {
        let age = self.age(tag);
        if age == AGES - 1 {
            return f32::MIN;
        }
        let density = self.densities[Self::class_of(tag) * AGES + age] / tag.size;
        if tag.explorer {
            // `density += 1.` in C++: the sum in double, then rounded to float.
            (f64::from(density) + 1.0) as f32
        } else {
            density
        }
    }

    /// The budget as libCacheSim changes it: an `int64_t` plus a `float`, in float.
    fn change_budget(&mut self, by: f32) {
        self.explorer_budget = (self.explorer_budget as f32 + by) as i64;
    }

    /// `lhd.cpp`'s `update`, for a page just inserted (`new`) or hit.
    fn update(&mut self, page: PageId, size: f32, new: bool) {
        let at = self.index[page as usize] as usize;
        if !new {
            let tag = self.tags[at];
            let age = self.age(&tag);
            self.classes[Self::class_of(&tag)].hits[age] += 1.0;
            if tag.explorer {
                self.change_budget(tag.size);
            }
            let tag = &mut self.tags[at];
            tag.last_last_hit_age = tag.last_hit_age;
            tag.last_hit_age = age as u32;
        }
        let timestamp = self.timestamp;
        let explore = self.rand.draw().is_multiple_of(EXPLORE_INVERSE_PROBABILITY);
        let explorer = explore && self.explorer_budget > 0 && self.reconfigurations < 50;
        {
            let tag = &mut self.tags[at];
            tag.timestamp = timestamp;
            tag.size = size;
            tag.explorer = explorer;
        }
        if explorer {
            self.change_budget(-size);
        }
        if new && !explore && self.density(&self.tags[at]) < self.ewma_victim_density {
            self.recently_admitted[self.admitted_head % ADMISSIONS] = Some(page);
            self.admitted_head += 1;
        }
        self.timestamp += 1;
        self.next_reconfiguration -= 1;
        if self.next_reconfiguration == 0 {
            self.reconfigure();
            self.next_reconfiguration = ACCESSES_PER_RECONFIGURATION;
            self.reconfigurations += 1;
        }
    }

    /// `lhd.cpp`'s `rank`: the victim's place in `tags`.
    fn victim(&mut self) -> usize {
        let mut victim = usize::MAX;
        let mut victim_rank = f32::MAX;
        let candidates = if self.reconfigurations > 50 {
            ASSOCIATIVITY
        } else {
            CANDIDATES
        };
        // The draws first, then their records, loaded independently of one another.
        let mut places = [0usize; ASSOCIATIVITY as usize];
        let places = &mut places[..candidates as usize];
        let len = self.tags.len() as u64;
        for at in places.iter_mut() {
            *at = (self.rand.draw() % len) as usize;
        }
        for &at in places.iter() {
            let rank = self.density(&self.tags[at]);
            if rank < victim_rank {
                (victim, victim_rank) = (at, rank);
            }
        }
        for slot in 0..ADMISSIONS {
            let Some(page) = self.recently_admitted[slot] else {
                continue;
            };
            let at = self.index.get(page as usize).copied().unwrap_or(NONE);
            if at == NONE {
                continue;
            }
            let rank = self.density(&self.tags[at as usize]);
            if rank < victim_rank {
                (victim, victim_rank) = (at as usize, rank);
            }
        }
        self.ewma_victim_density =
            EWMA_DECAY * self.ewma_victim_density + (1.0 - EWMA_DECAY) * victim_rank;
        victim
    }

    /// Take the record at `at` out, the last one moving into its place.
    fn forget(&mut self, at: usize) -> PageId {
        let page = self.tags[at].page;
        self.index[page as usize] = NONE;
        self.tags.swap_remove(at);
        if let Some(moved) = self.tags.get(at) {
            self.index[moved.page as usize] = at as u32;
        }
        page
    }

    fn reconfigure(&mut self) {
        for class in &mut self.classes {
            for (hits, evictions) in class.hits.iter_mut().zip(&mut class.evictions) {
                *hits *= EWMA_DECAY;
                *evictions *= EWMA_DECAY;
            }
        }
        self.adapt_age_coarsening();
        self.model_hit_densities();
    }

    /// `lhd.cpp`'s `modelHitDensity`: from the oldest age down, hits over the page-ages
    /// spent by the pages that reached that age.
    fn model_hit_densities(&mut self) {
        for (class, densities) in self.classes.iter().zip(self.densities.chunks_mut(AGES)) {
            let last = AGES - 1;
            let mut events = class.hits[last] + class.evictions[last];
            let mut hits = class.hits[last];
            let mut lifetime = events;
            for a in (0..last).rev() {
                hits += class.hits[a];
                events += class.hits[a] + class.evictions[a];
                lifetime += events;
                densities[a] = if f64::from(events) > 1e-5 {
                    hits / lifetime
                } else {
                    0.0
                };
            }
        }
    }

    /// `lhd.cpp`'s `adaptAgeCoarsening`: at the 5th and 25th reconfiguration, the age
    /// unit becomes the power of two that spreads the average resident count over 1 %
    /// of the ages, and the counts are moved to the new ages.
    fn adapt_age_coarsening(&mut self) {
        self.ewma_objects *= EWMA_DECAY;
        self.ewma_objects_mass *= EWMA_DECAY;
        self.ewma_objects += self.tags.len() as f32;
        self.ewma_objects_mass += 1.0;
        let objects = self.ewma_objects / self.ewma_objects_mass;
        let optimal = (1.0 * f64::from(objects)
            / f64::from(AGE_COARSENING_ERROR_TOLERANCE * AGES as f32)) as f32;
        if self.reconfigurations != 5 && self.reconfigurations != 25 {
            return;
        }
        let mut log2 = 1u32;
        while ((1u64 << log2) as f32) < optimal {
            log2 += 1;
        }
        let delta = i64::from(log2) - i64::from(self.age_shift);
        self.age_shift = log2;
        self.ewma_objects *= 8.0;
        self.ewma_objects_mass *= 8.0;
        for class in &mut self.classes {
            if delta < 0 {
                let d = (-delta) as u32;
                for table in [&mut class.hits, &mut class.evictions] {
                    for a in (AGES >> d)..AGES - 1 {
                        table[AGES - 1] += table[a];
                    }
                    for a in (0..=AGES - 2).rev() {
                        table[a] = table[a >> d] / (1u64 << d) as f32;
                    }
                }
            } else if delta > 0 {
                let d = delta as u32;
                for table in [&mut class.hits, &mut class.evictions] {
                    for a in 0..AGES >> d {
                        table[a] = table[a << d];
                        for i in 1..1usize << d {
                            table[a] += table[(a << d) + i];
                        }
                    }
                    for value in &mut table[AGES >> d..AGES - 1] {
                        *value = 0.0;
                    }
                }
            }
        }
    }
}

/// `lhd.hpp`'s `hitAgeClass`: 15 for 0, else how many doublings bring `age` to
/// [`AGES`], at most 15.
fn hit_age_class(mut age: u64) -> usize {
    if age == 0 {
        return CLASSES - 1;
    }
    let mut log = 0;
    while age < AGES as u64 && log < CLASSES - 1 {
        age <<= 1;
        log += 1;
    }
    log
}

impl CachePolicy for Lhd {
    #[inline]
    fn hit(&mut self, req: &Request, mem: &Memory, _out: &mut Effects) {
        self.update(req.page, mem.size_of(req.page) as f32, false);
    }

    fn evict(&mut self, _req: &Request, _mem: &Memory, out: &mut Effects) {
        if self.tags.is_empty() {
            return;
        }
        let at = self.victim();
        let tag = self.tags[at];
        let age = self.age(&tag);
        self.classes[Self::class_of(&tag)].evictions[age] += 1.0;
        if tag.explorer {
            self.change_budget(tag.size);
        }
        out.evict(self.forget(at));
    }

    fn insert(&mut self, req: &Request, _mem: &Memory, _out: &mut Effects) -> Tier {
        ensure_index(&mut self.index, req.page, NONE);
        self.index[req.page as usize] = self.tags.len() as u32;
        self.tags.push(Tag {
            page: req.page,
            timestamp: 0,
            last_hit_age: 0,
            last_last_hit_age: AGES as u32,
            size: 0.0,
            explorer: false,
        });
        self.update(req.page, req.size as f32, true);
        Tier::Dram
    }

    fn remove(&mut self, page: PageId, _mem: &Memory) {
        if let Some(&at) = self.index.get(page as usize) {
            if at != NONE {
                self.forget(at as usize);
            }
        }
    }

    fn holds(&self, page: PageId) -> Option<Tier> {
        super::held_unless(&self.index, page, NONE)
    }

    #[inline]
    fn prefetch(&self, page: PageId, _mem: &Memory) {
        crate::core::prefetch::prefetch(&self.index, page as usize);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mm::placement::policies::testing::*;

    #[test]
    fn hit_age_classes_are_libcachesims() {
        // 0 is its own class; then the doublings to 20000, at most 15.
        assert_eq!(hit_age_class(0), 15);
        assert_eq!(hit_age_class(20_000), 0);
        assert_eq!(hit_age_class(19_999), 1);
        assert_eq!(hit_age_class(10_000), 1);
        assert_eq!(hit_age_class(9_999), 2);
        assert_eq!(hit_age_class(1), 15);
    }

    #[test]
    fn a_new_page_ranks_as_its_class_and_age_say() {
        // New pages are of class 16 + 0 (hit ages 0 + 20000): density 17/(age+1).
        let mut lhd = engine(Lhd::new(100, 0), 100);
        run_pages(&mut lhd, &[7]);
        let p = lhd.policy();
        let tag = p.tags[0];
        assert_eq!(Lhd::class_of(&tag), 0);
        assert_eq!(p.density(&tag), if tag.explorer { 18.0 } else { 17.0 });
    }
}
