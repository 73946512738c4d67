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

pub mod list;
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
pub trait CachePolicy: Send {
    /// Registry name.
    fn name(&self) -> &'static str;

    /// Handle one request, reporting its effects into `out` (cleared by the caller).
    fn access(&mut self, req: &Request, out: &mut Effects);

    /// Where `page` lives now, if it is resident. Used by tests and the simulator's
    /// checks, not in the hot loop.
    fn tier_of(&self, page: PageId) -> Option<Tier>;

    /// Resident pages per tier, `[dram, pcm]`.
    fn occupancy(&self) -> [usize; 2];
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

/// Grow a per-page vector so that `page` is a valid index.
#[inline]
pub(crate) fn ensure_index<T: Clone>(v: &mut Vec<T>, page: PageId, fill: T) {
    let needed = page as usize + 1;
    if v.len() < needed {
        v.resize(needed.max(v.len() * 2), fill);
    }
}
