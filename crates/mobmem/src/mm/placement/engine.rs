//! The placement engine: it owns memory (the index of where every page is, the capacity
//! of each tier and what each holds) and runs each request through a policy's verbs
//! ([`CachePolicy`]), checking every answer against its index.
//!
//! ```text
//! request(req):                                     (libCacheSim's cache_get_base)
//!   req.page resident in tier t:  Hit(t); policy.hit(req)
//!   else if !policy.admit(req):   Bypass            (a miss; the page stays out)
//!   else: while used + req.size > capacity: policy.evict(req)
//!         t = policy.insert(req); Fill(t)
//!   every tier holds at most its capacity
//! ```
//!
//! The index is the core page table ([`PageTable`]): each page's location (DRAM, PCM or
//! absent) and, in PCM, its frame. With capacities in bytes ([`Unit::Bytes`]) each page
//! also has the size it was last inserted with, beside the table; it stays after the page
//! leaves, so a policy that remembers pages gone (ghosts) knows how large they were.
//!
//! The engine changes locations, frames and sizes only. Flags (DIRTY) and owners are the
//! caller's: the simulator reads them to charge an eviction, then clears DIRTY.

use super::{
    BuildContext, CachePolicy, Capacity, Effect, Effects, PolicyInfo, Request, Tier, Unit,
};
use crate::core::dense_ids::DenseIds;
use crate::core::frames::{AllocOrder, FrameId, FramePool};
use crate::core::pages::{Location, PageTable, NO_FRAME};
use crate::trace::PageId;

/// A broken contract: what a policy answered that cannot be (the front end names the
/// policy and the request).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation(pub String);

impl std::fmt::Display for Violation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

fn location_of(tier: Tier) -> Location {
    match tier {
        Tier::Dram => Location::Dram,
        Tier::Pcm => Location::Pcm,
    }
}

fn tier_name(tier: Tier) -> &'static str {
    match tier {
        Tier::Dram => "DRAM",
        Tier::Pcm => "PCM",
    }
}

/// Memory as the engine keeps it and policies read it: where each page is, how large,
/// and what each tier holds of its capacity.
#[derive(Debug, Clone)]
pub struct Memory {
    pages: PageTable,
    unit: Unit,
    /// Per page, the size it was last inserted with ([`Unit::Bytes`] only; empty with
    /// pages, where every page is of size 1).
    sizes: Vec<u64>,
    capacity: [u64; 2],
    used: [u64; 2],
    /// PCM's frames, most recently freed first, with their writes (wear). DRAM frames
    /// are not numbered: nothing here depends on which DRAM frame a page is in.
    pcm_frames: FramePool,
    /// The trace's page ids renumbered densely ([`Memory::dense_page`]): per-page state,
    /// here and in the policy, is sized by the pages seen, not by the largest id.
    ids: DenseIds,
}

impl Memory {
    /// An empty memory of `capacity` in `unit`, sized for `page_count_hint` pages (it
    /// grows on demand).
    pub fn new(unit: Unit, capacity: Capacity, page_count_hint: usize) -> Self {
        // Frames are numbered with 32 bits, as pages are: a PCM larger than that can never
        // hold more pages than a pool of every frame number (the pool's memory grows with
        // the frames it hands out, not with its size).
        let pcm_pool = capacity.pcm.min(FrameId::MAX as usize);
        Memory {
            pages: PageTable::with_pages(page_count_hint),
            unit,
            sizes: match unit {
                Unit::Pages => Vec::new(),
                Unit::Bytes => vec![0; page_count_hint],
            },
            capacity: [capacity.dram as u64, capacity.pcm as u64],
            used: [0, 0],
            pcm_frames: FramePool::new(pcm_pool, AllocOrder::LastFreed, true),
            ids: DenseIds::new(),
        }
    }

    /// The page id requests use for the trace's page `id`, numbered in the order pages
    /// are first seen (the identity for traces mobmem interned). A driver that feeds a
    /// trace renumbers each page before its request; `None` only once 2^32 - 1 distinct
    /// ids were seen.
    #[inline]
    pub fn dense_page(&mut self, id: PageId) -> Option<PageId> {
        self.ids.dense(id)
    }

    /// The page id of the trace's page `id` if it was seen (for hints and tests).
    #[inline]
    pub fn seen_page(&self, id: PageId) -> Option<PageId> {
        self.ids.get(id)
    }

    /// Bring the entry that numbers the trace's page `id` into the cache, ahead of
    /// [`Memory::seen_page`] (a hint).
    #[inline]
    pub fn prefetch_id(&self, id: PageId) {
        self.ids.prefetch(id);
    }

    /// The trace's id of `page`: what a policy that hashes pages hashes, so that the
    /// renumbering changes no result (a page never renumbered is its own).
    #[inline]
    pub fn trace_page(&self, page: PageId) -> PageId {
        self.ids.original(page)
    }

    pub fn unit(&self) -> Unit {
        self.unit
    }

    /// Where `page` is, if it is resident.
    #[inline]
    pub fn tier_of(&self, page: PageId) -> Option<Tier> {
        match self.pages.location(page) {
            Location::Dram => Some(Tier::Dram),
            Location::Pcm => Some(Tier::Pcm),
            _ => None,
        }
    }

    #[inline]
    pub fn is_resident(&self, page: PageId) -> bool {
        self.pages.location(page).is_resident()
    }

    /// The size of `page` in the unit: 1 with pages; with bytes, the size it was last
    /// inserted with (0 if it never was), kept after it leaves.
    #[inline]
    pub fn size_of(&self, page: PageId) -> u64 {
        match self.unit {
            Unit::Pages => 1,
            Unit::Bytes => self.sizes.get(page as usize).copied().unwrap_or(0),
        }
    }

    #[inline]
    pub fn capacity(&self, tier: Tier) -> u64 {
        self.capacity[tier.index()]
    }

    #[inline]
    pub fn used(&self, tier: Tier) -> u64 {
        self.used[tier.index()]
    }

    /// The capacity of all tiers together.
    #[inline]
    pub fn capacity_total(&self) -> u64 {
        self.capacity[0].saturating_add(self.capacity[1])
    }

    /// What all tiers hold together.
    #[inline]
    pub fn used_total(&self) -> u64 {
        self.used[0] + self.used[1]
    }

    /// Whether `size` more fits in `tier` now.
    #[inline]
    pub fn fits(&self, tier: Tier, size: u64) -> bool {
        self.used(tier).saturating_add(size) <= self.capacity(tier)
    }

    /// The page table: locations, frames, flags and owners.
    pub fn pages(&self) -> &PageTable {
        &self.pages
    }

    /// The page table, for its flags and owners; locations and frames are the engine's
    /// to change.
    pub fn pages_mut(&mut self) -> &mut PageTable {
        &mut self.pages
    }

    /// One more write on the PCM frame holding `page` (nothing if it is in none).
    #[inline]
    pub fn record_pcm_write(&mut self, page: PageId) {
        let frame = self.pages.frame(page);
        if frame != NO_FRAME {
            self.pcm_frames.record_write(frame);
        }
    }

    /// PCM's frames with their writes.
    pub fn pcm_frames(&self) -> &FramePool {
        &self.pcm_frames
    }

    #[inline]
    fn set_size(&mut self, page: PageId, size: u64) {
        if self.unit == Unit::Bytes {
            crate::core::ensure_index(&mut self.sizes, page, 0);
            self.sizes[page as usize] = size;
        }
    }

    #[inline]
    fn leave(&mut self, page: PageId, tier: Tier) {
        self.used[tier.index()] -= self.size_of(page);
        if tier == Tier::Pcm {
            self.pcm_frames.release(self.pages.frame(page));
        }
        self.pages.place(page, Location::Absent, NO_FRAME);
    }

    #[inline]
    fn enter(&mut self, page: PageId, tier: Tier) -> Result<(), Violation> {
        let frame = if tier == Tier::Pcm {
            let Some(frame) = self.pcm_frames.alloc() else {
                return Err(Violation("put more pages in PCM than it has frames".into()));
            };
            self.pcm_frames.record_write(frame);
            frame
        } else {
            NO_FRAME
        };
        self.used[tier.index()] += self.size_of(page);
        self.pages.place(page, location_of(tier), frame);
        Ok(())
    }

    /// Apply `effects[from..]`, moves reported by one verb: pages leaving a tier first
    /// (evictions, migrations out of PCM), then pages entering one, so that a page
    /// migrating into a full tier finds the room another left. Returns `effects.len()`.
    fn apply(&mut self, req: &Request, effects: &Effects, from: usize) -> Result<usize, Violation> {
        let moves = &effects.as_slice()[from..];
        for effect in moves {
            match *effect {
                Effect::Evict { page, from: tier } => {
                    if page == req.page {
                        return Err(Violation("evicted the page requested".into()));
                    }
                    if self.tier_of(page) != Some(tier) {
                        return Err(Violation(format!(
                            "evicted page {} from {tier:?} where it was not",
                            self.trace_page(page)
                        )));
                    }
                    self.leave(page, tier);
                }
                Effect::Migrate {
                    page,
                    to: Tier::Dram,
                } => {
                    self.migrate_out(page, Tier::Pcm)?;
                }
                Effect::Migrate { .. } => {}
                Effect::Hit { .. } | Effect::Fill { .. } | Effect::Bypass => {
                    return Err(Violation("reported more than one hit or fill".into()))
                }
            }
        }
        for effect in moves {
            match *effect {
                Effect::Migrate {
                    page,
                    to: Tier::Dram,
                } => self.enter(page, Tier::Dram)?,
                Effect::Migrate {
                    page,
                    to: Tier::Pcm,
                } => {
                    self.migrate_out(page, Tier::Dram)?;
                    self.enter(page, Tier::Pcm)?;
                }
                _ => {}
            }
        }
        Ok(effects.len())
    }

    /// A migrating `page` leaves `from`, where it MUST be.
    fn migrate_out(&mut self, page: PageId, from: Tier) -> Result<(), Violation> {
        if self.tier_of(page) != Some(from) {
            return Err(Violation(format!(
                "migrated page {} to {} from outside {}",
                self.trace_page(page),
                tier_name(from.other()),
                tier_name(from)
            )));
        }
        self.leave(page, from);
        Ok(())
    }

    fn check_capacity(&self) -> Result<(), Violation> {
        if self.used[0] > self.capacity[0] || self.used[1] > self.capacity[1] {
            let unit = match self.unit {
                Unit::Pages => "pages",
                Unit::Bytes => "bytes",
            };
            return Err(Violation(format!(
                "holds {:?} {unit}, over capacity {:?}",
                self.used, self.capacity
            )));
        }
        Ok(())
    }
}

/// A policy on a memory: the one place requests are decided and checked.
pub struct Engine<P: CachePolicy + ?Sized = dyn CachePolicy> {
    mem: Memory,
    /// The effects of the latest request: a hit, a fill or a bypass, then moves.
    out: Effects,
    policy: Box<P>,
}

impl Engine {
    /// `info`'s policy on an empty memory of `ctx.capacity` in `unit`.
    pub fn build(info: &PolicyInfo, ctx: &BuildContext, unit: Unit) -> crate::Result<Self> {
        let policy = info.build(ctx)?;
        Ok(Engine::new(
            policy,
            Memory::new(unit, ctx.capacity, ctx.page_count_hint),
        ))
    }
}

impl<P: CachePolicy + ?Sized> Engine<P> {
    pub fn new(policy: Box<P>, mem: Memory) -> Self {
        Engine {
            mem,
            out: Effects::new(),
            policy,
        }
    }

    pub fn memory(&self) -> &Memory {
        &self.mem
    }

    /// Memory, for its page table's flags and owners and PCM's wear.
    pub fn memory_mut(&mut self) -> &mut Memory {
        &mut self.mem
    }

    pub fn policy(&self) -> &P {
        &self.policy
    }

    /// The policy, for tests that read state it computes on demand.
    #[cfg(test)]
    pub(crate) fn policy_mut(&mut self) -> &mut P {
        &mut self.policy
    }

    /// The effects of the latest request, the hit, fill or bypass first.
    #[inline]
    pub fn effects(&self) -> &[Effect] {
        self.out.as_slice()
    }

    /// Run one request (module documentation). On a broken contract the request's
    /// effects are those applied so far.
    #[inline]
    pub fn access(&mut self, req: &Request) -> Result<(), Violation> {
        let Engine { mem, out, policy } = self;
        out.clear();
        let page = req.page;
        mem.pages.ensure(page);
        match mem.tier_of(page) {
            Some(tier) => {
                out.push(Effect::Hit { tier });
                policy.hit(req, mem, out);
                if out.len() > 1 {
                    mem.apply(req, out, 1)?;
                }
            }
            None => {
                out.push(Effect::Fill { tier: Tier::Dram });
                let admitted = policy.admit(req, mem, out);
                let mut done = if out.len() > 1 {
                    mem.apply(req, out, 1)?
                } else {
                    1
                };
                if !admitted {
                    out.set(0, Effect::Bypass);
                    return mem.check_capacity();
                }
                while mem.used_total().saturating_add(req.size) > mem.capacity_total() {
                    if mem.used_total() == 0 {
                        return Err(Violation(format!(
                            "admitted a page of {} larger than memory",
                            req.size
                        )));
                    }
                    policy.evict(req, mem, out);
                    // The common answer, one eviction, without the general pass.
                    if out.len() == done + 1 {
                        if let Effect::Evict { page: victim, from } = out.as_slice()[done] {
                            if victim != page && mem.tier_of(victim) == Some(from) {
                                mem.leave(victim, from);
                                done += 1;
                                continue;
                            }
                        }
                    }
                    if out.len() == done {
                        return Err(Violation(
                            "evicted nothing while memory held too much".into(),
                        ));
                    }
                    if let Some(other) = out.as_slice()[done..]
                        .iter()
                        .find(|e| !matches!(e, Effect::Evict { .. }))
                    {
                        return Err(Violation(format!("reported {other:?} when asked to evict")));
                    }
                    done = mem.apply(req, out, done)?;
                }
                mem.set_size(page, req.size);
                let tier = policy.insert(req, mem, out);
                if out.len() > done {
                    mem.apply(req, out, done)?;
                }
                mem.enter(page, tier)?;
                out.set(0, Effect::Fill { tier });
            }
        }
        mem.check_capacity()
    }

    /// `page` leaves memory for another reason than a policy's choice; the policy is told
    /// ([`CachePolicy::remove`]). Returns the tier it was in.
    pub fn remove(&mut self, page: PageId) -> Option<Tier> {
        let tier = self.mem.tier_of(page)?;
        self.policy.remove(page, &self.mem);
        self.mem.leave(page, tier);
        Some(tier)
    }

    /// Bring `page`'s entries into the cache (a hint; see [`crate::core::prefetch`]).
    #[inline]
    pub fn prefetch(&self, page: PageId) {
        self.mem.pages.prefetch(page);
        self.policy.prefetch(page, &self.mem);
    }

    /// Check that the policy's order holds exactly the resident pages, each in its tier,
    /// and that what each tier holds adds up (tests only: O(pages)).
    pub fn check_agreement(&self) -> Result<(), Violation> {
        let mut used = [0u64; 2];
        for page in 0..self.mem.pages.len() as PageId {
            let tier = self.mem.tier_of(page);
            if self.policy.holds(page) != tier {
                return Err(Violation(format!(
                    "holds page {} in {:?}, the engine has it in {tier:?}",
                    self.mem.trace_page(page),
                    self.policy.holds(page)
                )));
            }
            if let Some(tier) = tier {
                used[tier.index()] += self.mem.size_of(page);
            }
        }
        if used != self.mem.used {
            return Err(Violation(format!(
                "resident pages add up to {used:?}, the engine counts {:?}",
                self.mem.used
            )));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mm::placement::policies::lru::Lru;
    use crate::mm::placement::{find_policy, Family, REGISTRY};
    use proptest::prelude::*;

    fn pages(capacity: usize) -> Memory {
        Memory::new(Unit::Pages, Capacity::single(capacity), 0)
    }

    /// A policy that answers wrongly in one way, to see the engine catch it.
    struct Broken {
        lru: Lru,
        fault: Fault,
    }

    #[derive(Clone, Copy)]
    enum Fault {
        EvictsNothing,
        EvictsAStranger,
        MigratesInSingleTier,
        FillsPcm,
    }

    impl CachePolicy for Broken {
        fn hit(&mut self, req: &Request, mem: &Memory, out: &mut Effects) {
            self.lru.hit(req, mem, out);
        }
        fn evict(&mut self, req: &Request, mem: &Memory, out: &mut Effects) {
            match self.fault {
                Fault::EvictsNothing => {}
                Fault::EvictsAStranger => out.evict(1000),
                Fault::MigratesInSingleTier => out.push(Effect::Migrate {
                    page: 0,
                    to: Tier::Pcm,
                }),
                Fault::FillsPcm => self.lru.evict(req, mem, out),
            }
        }
        fn insert(&mut self, req: &Request, mem: &Memory, out: &mut Effects) -> Tier {
            self.lru.insert(req, mem, out);
            match self.fault {
                Fault::FillsPcm => Tier::Pcm,
                _ => Tier::Dram,
            }
        }
        fn remove(&mut self, page: PageId, mem: &Memory) {
            self.lru.remove(page, mem);
        }
        fn holds(&self, page: PageId) -> Option<Tier> {
            self.lru.holds(page)
        }
    }

    #[test]
    fn broken_answers_are_violations() {
        let cases = [
            (Fault::EvictsNothing, "evicted nothing"),
            (
                Fault::EvictsAStranger,
                "evicted page 1000 from Dram where it was not",
            ),
            (Fault::MigratesInSingleTier, "when asked to evict"),
            (Fault::FillsPcm, "more pages in PCM than it has frames"),
        ];
        for (fault, message) in cases {
            let broken = Broken {
                lru: Lru::new(0),
                fault,
            };
            let mut engine = Engine::new(Box::new(broken), pages(2));
            let outcome = [0, 1, 2]
                .iter()
                .try_for_each(|&page| engine.access(&Request::read(page)));
            let violation = outcome.expect_err("a broken answer");
            assert!(violation.0.contains(message), "{violation}");
        }
    }

    #[test]
    fn a_page_taken_away_is_forgotten_and_frees_its_room() {
        // LRU of 3 pages: 1 2 3; 2 is taken away (not by the policy): 4 then fits with no
        // eviction, and the next miss evicts 1, the least recently used left.
        let mut engine = Engine::new(Box::new(Lru::new(0)), pages(3));
        for page in [1, 2, 3] {
            engine.access(&Request::read(page)).unwrap();
        }
        assert_eq!(engine.remove(2), Some(Tier::Dram));
        assert_eq!(engine.remove(2), None);
        engine.check_agreement().unwrap();
        engine.access(&Request::read(4)).unwrap();
        assert_eq!(engine.effects(), [Effect::Fill { tier: Tier::Dram }]);
        engine.access(&Request::read(5)).unwrap();
        assert_eq!(
            engine.effects(),
            [
                Effect::Fill { tier: Tier::Dram },
                Effect::Evict {
                    page: 1,
                    from: Tier::Dram
                }
            ]
        );
        assert_eq!(engine.policy().order(), vec![5, 4, 3]);
        engine.check_agreement().unwrap();
    }

    #[test]
    fn bytes_evict_until_the_page_fits_and_remember_sizes() {
        // 100 bytes of LRU: 40 40 then 90 evicts both; the sizes stay after they leave.
        let memory = Memory::new(Unit::Bytes, Capacity::single(100), 0);
        let mut engine = Engine::new(Box::new(Lru::new(0)), memory);
        engine.access(&Request::sized(0, 40)).unwrap();
        engine.access(&Request::sized(1, 40)).unwrap();
        engine.access(&Request::sized(2, 90)).unwrap();
        let evicted: Vec<PageId> = engine.effects()[1..]
            .iter()
            .filter_map(|e| match *e {
                Effect::Evict { page, .. } => Some(page),
                _ => None,
            })
            .collect();
        assert_eq!(evicted, [0, 1]);
        assert_eq!(engine.memory().used_total(), 90);
        assert_eq!(engine.memory().size_of(0), 40);
        assert!(!engine.memory().is_resident(0));
        // Larger than memory: a bypass, nothing moves.
        engine.access(&Request::sized(3, 101)).unwrap();
        assert_eq!(engine.effects(), [Effect::Bypass]);
        engine.check_agreement().unwrap();
    }

    #[derive(Debug, Clone)]
    enum Op {
        Access(PageId, u64),
        Remove(PageId),
    }

    fn ops() -> impl Strategy<Value = Vec<Op>> {
        let op = prop_oneof![
            6 => (0u32..50, 1u64..20).prop_map(|(p, s)| Op::Access(p, s)),
            1 => (0u32..50).prop_map(Op::Remove),
        ];
        proptest::collection::vec(op, 1..300)
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(48))]

        /// Every single-tier policy, in pages and in bytes, with pages taken away between
        /// requests: the policy and the engine agree on every page after every step.
        #[test]
        fn every_policy_agrees_with_the_engine_through_removals(
            ops in ops(),
            capacity in 1usize..80,
        ) {
            let future: std::sync::Arc<[PageId]> = ops
                .iter()
                .filter_map(|op| match *op {
                    Op::Access(page, _) => Some(page),
                    Op::Remove(_) => None,
                })
                .collect();
            for info in REGISTRY.iter().filter(|i| i.family == Family::SingleTier) {
                for unit in [Unit::Pages, Unit::Bytes] {
                    let context = BuildContext {
                        capacity: Capacity::single(capacity),
                        page_count_hint: 0,
                        future: Some(future.clone()),
                        object_ids: None,
                    };
                    let mut engine = Engine::build(info, &context, unit).unwrap();
                    for op in &ops {
                        match *op {
                            Op::Access(page, size) => {
                                let size = if unit == Unit::Pages { 1 } else { size };
                                engine
                                    .access(&Request::sized(page, size))
                                    .map_err(|v| TestCaseError::fail(format!("{} {unit:?}: {v}", info.name)))?;
                            }
                            Op::Remove(page) => {
                                engine.remove(page);
                            }
                        }
                        engine
                            .check_agreement()
                            .map_err(|v| TestCaseError::fail(format!("{} {unit:?}: {v}", info.name)))?;
                    }
                }
            }
        }
    }

    #[test]
    fn hybrid_policies_take_pages_away_too() {
        let context = BuildContext {
            capacity: Capacity { dram: 2, pcm: 2 },
            ..BuildContext::default()
        };
        for name in ["hybrid-lru", "hybrid-2q", "clock-dwf", "app-aware"] {
            let info = find_policy(name).unwrap();
            let mut engine = Engine::build(info, &context, Unit::Pages).unwrap();
            for step in 0..40u32 {
                let page = step * 7 % 9;
                let req = Request {
                    write: step % 3 == 0,
                    foreground: step % 2 == 0,
                    ..Request::read(page)
                };
                engine.access(&req).unwrap();
                if step % 5 == 4 {
                    engine.remove((step + 1) * 5 % 9);
                }
                engine
                    .check_agreement()
                    .unwrap_or_else(|v| panic!("{name}: {v}"));
            }
        }
    }
}
