//! The simulated memory system.
//!
//! The placement engine ([`engine::Engine`]) owns memory: its index of where every page
//! is (the core page table: DRAM, PCM or absent, with each page's size where capacities
//! count bytes) and the capacity of each tier, in pages or in bytes. A policy
//! ([`CachePolicy`]) keeps only its own order of pages and answers the engine's small
//! verbs: what a hit changes, whether a missing page may enter, which page to evict,
//! where a new page goes, and that a page left for another reason. The engine runs the
//! request (a hit, or: admit, evict while the page does not fit, insert), checks every
//! answer against its index and reports the request's [`Effect`]s: a hit or a fill, then
//! migrations between tiers and evictions to storage. The simulator ([`sim::Simulator`])
//! charges those effects to the devices and the metrics; policies never count costs
//! themselves, so every policy is measured by the same rules.
//!
//! Memory has up to two tiers: DRAM and PCM. A single-tier policy keeps every page in
//! [`Tier::Dram`] and is built with no PCM.

pub mod bytes;
pub mod clock;
pub mod engine;
pub mod metrics;
pub mod mrc;
pub mod policies;
pub mod registry;
pub mod sim;

pub use registry::{find_policy, BuildContext, Family, PolicyInfo, REGISTRY};

use crate::trace::{PageId, ProcId};

/// A tier of main memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Tier {
    /// The fast, volatile tier; also the only tier of single-tier policies.
    Dram = 0,
    /// The slow-write, non-volatile tier.
    Pcm = 1,
}

impl Tier {
    pub fn index(self) -> usize {
        self as usize
    }

    pub fn other(self) -> Tier {
        match self {
            Tier::Dram => Tier::Pcm,
            Tier::Pcm => Tier::Dram,
        }
    }
}

/// What each tier can hold, in the unit of the run: pages, or bytes ([`Unit`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Capacity {
    pub dram: usize,
    pub pcm: usize,
}

impl Capacity {
    pub fn single(pages: usize) -> Self {
        Capacity {
            dram: pages,
            pcm: 0,
        }
    }

    /// The tiers of a memory of `pages` pages: one tier for a single-tier policy; for a
    /// hybrid one, DRAM gets `dram_fraction` of it (see [`split_memory`]) and PCM the rest.
    pub fn of_memory(family: Family, pages: u64, dram_fraction: f64) -> crate::Result<Self> {
        let bad = |message: String| Err(crate::Error::config("memory", message));
        if pages == 0 {
            return bad("the capacity must be at least 1 page".into());
        }
        let pages_usize = |p: u64| {
            usize::try_from(p)
                .map_err(|_| crate::Error::config("memory", format!("{p} pages is too large")))
        };
        match family {
            Family::SingleTier => Ok(Capacity::single(pages_usize(pages)?)),
            Family::Hybrid => {
                if !(dram_fraction > 0.0 && dram_fraction < 1.0) {
                    return bad(format!(
                        "the DRAM fraction {dram_fraction} must be between 0 and 1 (exclusive)"
                    ));
                }
                if pages < 2 {
                    return bad("a hybrid policy needs a capacity of at least 2 pages".into());
                }
                let (dram, pcm) = split_memory(pages, dram_fraction);
                Ok(Capacity {
                    dram: pages_usize(dram)?,
                    pcm: pages_usize(pcm)?,
                })
            }
        }
    }

    pub fn total(&self) -> usize {
        self.dram + self.pcm
    }

    pub fn of(&self, tier: Tier) -> usize {
        match tier {
            Tier::Dram => self.dram,
            Tier::Pcm => self.pcm,
        }
    }
}

/// DRAM pages for a hybrid memory: the share rounded, at least one page, and at least
/// one page left for PCM.
pub fn split_memory(memory: u64, dram_fraction: f64) -> (u64, u64) {
    let dram =
        ((memory as f64 * dram_fraction).round() as u64).clamp(1, memory.saturating_sub(1).max(1));
    (dram, memory.saturating_sub(dram))
}

/// What capacities count: pages (every page of size 1) or bytes (each page of the size
/// its request gives, as libCacheSim's caches count them).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Unit {
    #[default]
    Pages,
    Bytes,
}

/// One page access as a policy sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Request {
    /// The page, as the driver numbered it: a trace's ids renumbered in first-seen order
    /// ([`engine::Memory::dense_page`]), so per-page state stays as small as the pages
    /// seen; [`engine::Memory::trace_page`] gives the trace's id back.
    pub page: PageId,
    pub proc: ProcId,
    /// The access writes the page.
    pub write: bool,
    /// The accessing process is the foreground app (`oom_score_adj` 0) right now.
    pub foreground: bool,
    /// The page is resident and was written since it was brought in (before this access).
    pub dirty: bool,
    /// The page's size in the run's unit: 1 with capacities in pages, its bytes with
    /// capacities in bytes. A resident page keeps the size it was inserted with.
    pub size: u64,
}

impl Request {
    /// A read of `page` by process 0, in the background, of a clean page of one unit: a
    /// request of a trace that knows only pages (a cache trace).
    pub fn read(page: PageId) -> Self {
        Request {
            page,
            proc: 0,
            write: false,
            foreground: false,
            dirty: false,
            size: 1,
        }
    }

    /// A read of `page` of `size` bytes (a request of a trace with object sizes).
    pub fn sized(page: PageId, size: u64) -> Self {
        Request {
            size,
            ..Request::read(page)
        }
    }
}

/// What a request did to memory. A policy reports the effects of one request in the
/// order they happen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Effect {
    /// The requested page was found in `tier`.
    Hit { tier: Tier },
    /// The requested page was missing and was brought from storage into `tier`.
    Fill { tier: Tier },
    /// The requested page was missing and was not brought in: the policy did not admit it
    /// (larger than memory, or than the queue that admits new pages).
    Bypass,
    /// `page` moved from the other tier into `to`.
    Migrate { page: PageId, to: Tier },
    /// `page` left memory from `from` (written back to storage if dirty).
    Evict { page: PageId, from: Tier },
}

/// The effects of one request; reused across requests so the hot loop does not allocate.
#[derive(Debug, Clone, Default)]
pub struct Effects {
    items: Vec<Effect>,
}

impl Effects {
    pub fn new() -> Self {
        Effects {
            items: Vec::with_capacity(8),
        }
    }

    #[inline]
    pub fn push(&mut self, effect: Effect) {
        self.items.push(effect);
    }

    /// A hit in DRAM, the one tier of a single-tier policy.
    #[inline]
    pub fn hit(&mut self) {
        self.items.push(Effect::Hit { tier: Tier::Dram });
    }

    /// A fill into DRAM, the one tier of a single-tier policy.
    #[inline]
    pub fn fill(&mut self) {
        self.items.push(Effect::Fill { tier: Tier::Dram });
    }

    /// `page` left DRAM, the one tier of a single-tier policy.
    #[inline]
    pub fn evict(&mut self, page: PageId) {
        self.items.push(Effect::Evict {
            page,
            from: Tier::Dram,
        });
    }

    #[inline]
    pub fn clear(&mut self) {
        self.items.clear();
    }

    #[inline]
    pub fn len(&self) -> usize {
        self.items.len()
    }

    #[inline]
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// Replace the effect at `index` (the engine settles the first once it knows it).
    #[inline]
    pub(crate) fn set(&mut self, index: usize, effect: Effect) {
        self.items[index] = effect;
    }

    #[inline]
    pub fn as_slice(&self) -> &[Effect] {
        &self.items
    }
}

/// A page placement and replacement policy: the order in which pages leave memory and,
/// for hybrid policies, which tier each page is in. The [`engine::Engine`] owns the index
/// of resident pages and the capacities; it asks the policy, for each request:
///
/// ```text
/// req.page resident:  hit(req)                               a hit in its tier
/// req.page missing:   admit(req)?                            else: a miss, not inserted
///                     while used + req.size > capacity: evict(req)
///                     tier = insert(req)                     a fill in that tier
/// ```
/// (libCacheSim's request flow, `cache_get_base` in its `cache/cache.c`, with capacity and
/// occupancy counted by the engine.) Verbs report what they move into `out`: an
/// [`Effect::Evict`] for each page they take out of memory, an [`Effect::Migrate`] for
/// each page they move between tiers. The engine applies them to its index, so a later
/// verb of the same request reads the index as they left it.
///
/// Contracts:
/// - a policy MUST NOT keep an index of residency of its own: [`engine::Memory`] answers
///   where a page is and how large it is; the policy's lists and per-page state say only
///   its order (an LRU list, queues, ghosts of pages gone, counters);
/// - every page a verb reports as evicted or migrated MUST be resident in the tier it
///   leaves, and MUST NOT be `req.page` (except [`CachePolicy::hit`]'s migrations of the
///   page hit, which hybrid policies use to promote it);
/// - [`CachePolicy::evict`] MUST report at least one eviction while any page is resident,
///   and [`CachePolicy::insert`] MUST leave the tier it returns with room for `req.size`;
/// - verbs MUST NOT panic on any sequence of requests, whatever the page ids and sizes
///   (per-page state grows on demand);
/// - policies are deterministic: the same requests give the same answers.
///
/// A policy's name is its registry entry's ([`PolicyInfo::name`]).
pub trait CachePolicy: Send {
    /// `req.page` is resident (in `mem.tier_of(req.page)`): update the policy's order.
    /// MAY report migrations (a hybrid policy promoting the page) and evictions of other
    /// pages (a policy whose hits rebalance queues of bounded size: LIRS, W-TinyLFU,
    /// segmented LRU with sizes in bytes).
    fn hit(&mut self, req: &Request, mem: &engine::Memory, out: &mut Effects);

    /// `req.page` is missing: whether it may enter memory. Called once per miss, before
    /// any eviction; a policy that remembers pages gone (ghosts) looks `req.page` up here
    /// and forgets its ghost, with the size it had ([`engine::Memory::size_of`]). MAY
    /// report evictions that prepare its queues (LIRS). The default admits a page no
    /// larger than all memory, as libCacheSim's caches do by default.
    fn admit(&mut self, req: &Request, mem: &engine::Memory, _out: &mut Effects) -> bool {
        req.size <= mem.capacity_total()
    }

    /// Memory holds too much for `req.page`: take one page or more out of it, reporting an
    /// [`Effect::Evict`] for each (at least one). The request is there for policies whose
    /// choice depends on it (ARC's REPLACE looks at where the page was a ghost).
    fn evict(&mut self, req: &Request, mem: &engine::Memory, out: &mut Effects);

    /// Link the admitted `req.page` (its size is `mem.size_of(req.page)`, which is
    /// `req.size`) and return the tier it goes into. MAY report migrations and evictions
    /// that make room in that tier (hybrid policies), or keep a queue of its own within
    /// its size (2Q's `Am`).
    fn insert(&mut self, req: &Request, mem: &engine::Memory, out: &mut Effects) -> Tier;

    /// `page` left memory for another reason (the engine or another mechanism took it):
    /// forget it as a resident page, keeping no ghost of it.
    fn remove(&mut self, page: PageId, mem: &engine::Memory);

    /// Where the policy's own order holds `page` (`None`: not as a resident page). For
    /// the engine's agreement checks in tests ([`engine::Engine::check_agreement`]), never
    /// on the hot path.
    fn holds(&self, page: PageId) -> Option<Tier>;

    /// `page` will be requested a few requests from now: bring its per-page state into
    /// the cache ([`crate::core::prefetch`]), and what the request will read of state
    /// found through `mem` (a sketch's counters, which hash the page's trace id). A hint
    /// only; it must not change state.
    #[inline]
    fn prefetch(&self, _page: PageId, _mem: &engine::Memory) {}
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn memory_splits_by_family() {
        let single = Capacity::of_memory(Family::SingleTier, 100, 0.05).unwrap();
        assert_eq!(single, Capacity::single(100));
        let hybrid = Capacity::of_memory(Family::Hybrid, 100, 0.05).unwrap();
        assert_eq!(hybrid, Capacity { dram: 5, pcm: 95 });
        let tiny = Capacity::of_memory(Family::Hybrid, 2, 0.01).unwrap();
        assert_eq!(tiny, Capacity { dram: 1, pcm: 1 });
    }

    #[test]
    fn impossible_memories_are_errors() {
        let message = |family, pages, df| {
            Capacity::of_memory(family, pages, df)
                .unwrap_err()
                .to_string()
        };
        assert!(message(Family::SingleTier, 0, 0.05).contains("at least 1 page"));
        assert!(message(Family::Hybrid, 1, 0.05).contains("at least 2 pages"));
        assert!(message(Family::Hybrid, 10, 1.0).contains("between 0 and 1"));
        assert!(message(Family::Hybrid, 10, f64::NAN).contains("between 0 and 1"));
    }

    #[test]
    fn a_single_tier_policy_given_pcm_names_the_hybrid_ones() {
        let context = BuildContext {
            capacity: Capacity { dram: 4, pcm: 4 },
            ..Default::default()
        };
        let error = find_policy("lru").unwrap().build(&context).err().unwrap();
        let hybrid = "hybrid-lru, hybrid-2q, clock-dwf, app-aware";
        assert!(error.to_string().contains(hybrid), "{error}");
    }
}
