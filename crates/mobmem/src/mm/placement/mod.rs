//! The simulated memory system.
//!
//! A policy ([`CachePolicy`]) decides where pages live: it sees one [`Request`] at a time
//! and answers with the [`Effect`]s of that request (hit or fill, migrations between
//! tiers, evictions to storage). The simulator ([`sim::Simulator`]) applies those effects
//! to the devices and the metrics; policies never count costs themselves, so every policy
//! is measured by the same rules.
//!
//! Memory has up to two tiers: DRAM and PCM. A single-tier policy keeps every page in
//! [`Tier::Dram`] and is built with no PCM.

pub mod bytes;
pub mod metrics;
pub mod mrc;
pub mod policies;
pub mod registry;
pub mod sim;

pub use registry::{find_policy, BuildContext, Family, PolicyInfo, REGISTRY};

use crate::core::ensure_index;
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

/// Pages each tier can hold.
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

/// One page access as a policy sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Request {
    pub page: PageId,
    pub proc: ProcId,
    /// The access writes the page.
    pub write: bool,
    /// The accessing process is the foreground app (`oom_score_adj` 0) right now.
    pub foreground: bool,
    /// The page is resident and was written since it was brought in (before this access).
    pub dirty: bool,
}

impl Request {
    /// A read of `page` by process 0, in the background, of a clean page: a request of a
    /// trace that knows only pages (a cache trace).
    pub fn read(page: PageId) -> Self {
        Request {
            page,
            proc: 0,
            write: false,
            foreground: false,
            dirty: false,
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
    pub fn as_slice(&self) -> &[Effect] {
        &self.items
    }
}

/// A page placement and replacement policy.
///
/// Contracts, for every call of [`CachePolicy::access`]:
/// - it MUST push exactly one [`Effect::Hit`] (the page was resident, in that tier) or one
///   [`Effect::Fill`] (it was not, and now is, in that tier) for `req.page`, first;
/// - it MUST push a [`Effect::Migrate`] for every page that changes tier and an
///   [`Effect::Evict`] for every page that leaves memory, and nothing for pages it does
///   not move;
/// - after the call, no tier holds more pages than its capacity, and `req.page` is
///   resident (a policy never bypasses memory);
/// - it MUST NOT panic on any sequence of requests, whatever the page ids (policies grow
///   their per-page state on demand).
///
/// Policies are deterministic: the same requests give the same effects.
/// A policy's name is its registry entry's ([`PolicyInfo::name`]).
pub trait CachePolicy: Send {
    /// Handle one request, reporting its effects into `out` (cleared by the caller).
    fn access(&mut self, req: &Request, out: &mut Effects);

    /// Where `page` lives now, if it is resident. Used by tests and the simulator's
    /// checks, not in the hot loop.
    fn tier_of(&self, page: PageId) -> Option<Tier>;

    /// Resident pages per tier, `[dram, pcm]`.
    fn occupancy(&self) -> [usize; 2];

    /// Evict the page this policy would evict next, pushing its [`Effect::Evict`];
    /// `false` when it holds no page. Byte capacities ([`bytes`]) build the policy with an
    /// unbounded capacity and call this until the new object fits. Only policies whose
    /// order of eviction does not depend on their capacity implement it, and say so in
    /// [`CachePolicy::evicts_on_demand`].
    fn evict_next(&mut self, _out: &mut Effects) -> bool {
        false
    }

    /// Whether [`CachePolicy::evict_next`] is implemented.
    fn evicts_on_demand(&self) -> bool {
        false
    }

    /// `page` will be requested a few requests from now: bring its per-page state into
    /// the cache ([`crate::core::prefetch`]). A hint only; it must not change state.
    #[inline]
    fn prefetch(&self, _page: PageId) {}
}

/// Which tier each page is in, one byte a page: the bookkeeping every hybrid policy needs.
#[derive(Debug, Clone, Default)]
pub struct Locations {
    codes: Vec<u8>,
}

impl Locations {
    const ABSENT: u8 = 0;

    pub fn with_pages(pages: usize) -> Self {
        Locations {
            codes: vec![Self::ABSENT; pages],
        }
    }

    #[inline]
    pub fn get(&self, page: PageId) -> Option<Tier> {
        match self
            .codes
            .get(page as usize)
            .copied()
            .unwrap_or(Self::ABSENT)
        {
            1 => Some(Tier::Dram),
            2 => Some(Tier::Pcm),
            _ => None,
        }
    }

    #[inline]
    pub fn set(&mut self, page: PageId, tier: Option<Tier>) {
        ensure_index(&mut self.codes, page, Self::ABSENT);
        self.codes[page as usize] = tier.map_or(Self::ABSENT, |t| t as u8 + 1);
    }
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
