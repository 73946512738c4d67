//! The reclaim-policy trait, what a reclaim request says, the registry, and lumpy
//! reclaim's isolation of an aligned block around a tag page (shared by the policies).

use super::app_lru::AppLru;
use super::lists::{ListId, LruLists, NO_LIST};
use super::lru::{Protection, TwoListLru};
use super::mglru::MgLru;
use super::workingset::{WorkingsetLru, WorkingsetStats};
use super::ReclaimConfig;
use crate::core::memory::{FrameState, Memory};
use crate::core::registry::Registry;
use crate::trace::ProcId;
use crate::Result;

/// `SWAP_CLUSTER_MAX`: pages reclaim isolates per batch and direct reclaim's target.
pub const SWAP_CLUSTER_MAX: usize = 32;
/// `DEF_PRIORITY`: the first reclaim pass scans 1/2^12 of each list.
pub const DEF_PRIORITY: u32 = 12;
/// `PAGE_ALLOC_COSTLY_ORDER`: orders above it are "costly" allocations.
pub const PAGE_ALLOC_COSTLY_ORDER: u32 = 3;

/// When a reclaim call may stop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Goal {
    /// kswapd: until this many frames are free (the high watermark).
    FreeAtLeast(usize),
    /// kswapd balancing for a high-order request (3.4 `balance_pgdat` with an order):
    /// until the watermark check of the request's order against this many pages passes.
    Watermark(usize),
    /// Direct reclaim: until this many pages were reclaimed by this call.
    Reclaim(usize),
}

/// What the tasks are at the time of a reclaim call.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TaskView {
    /// The interactive task (FTI's answer): the latest input receiver, else the
    /// foreground app.
    pub interactive: Option<ProcId>,
    /// The foreground app (`oom_score_adj` 0).
    pub foreground: Option<ProcId>,
}

/// One reclaim call.
#[derive(Debug, Clone, Copy)]
pub struct ShrinkRequest {
    pub goal: Goal,
    /// Allocation order the reclaim serves; above 0, lumpy reclaim.
    pub order: u32,
    pub tasks: TaskView,
    /// The fallback: protection off (FMP once nothing else is reclaimable; memcg
    /// `memory.low` breached).
    pub ignore_protection: bool,
}

impl ShrinkRequest {
    /// A call to reclaim `n` pages of order 0 for no task in particular, protection on.
    pub fn reclaim(n: usize) -> Self {
        ShrinkRequest {
            goal: Goal::Reclaim(n),
            order: 0,
            tasks: TaskView::default(),
            ignore_protection: false,
        }
    }

    pub fn done(&self, mem: &Memory, reclaimed: usize) -> bool {
        match self.goal {
            Goal::FreeAtLeast(n) => mem.free() >= n,
            Goal::Watermark(mark_pages) => mem.watermark_ok(self.order, mark_pages),
            Goal::Reclaim(n) => reclaimed >= n,
        }
    }
}

/// A page-reclaim policy: where new pages go and which pages reclaim frees. Accesses
/// only set bits on the page (the common hardware and `mark_page_accessed` part), so
/// policies see them when they scan.
///
/// Contracts:
/// - the policy keeps its own lists ([`LruLists`]) and per-frame state; the memory's
///   page table and frames are the memory's, changed only through its verbs;
/// - after [`ReclaimPolicy::add_page`], and after every call that returns, every page
///   in memory is on exactly one of the policy's lists ([`LruLists::check`]);
/// - a page leaves memory only by [`Memory::evict_or_keep`] (or [`Memory::evict`])
///   in `shrink`, after the policy took it off its lists, or by the machine after
///   [`ReclaimPolicy::remove`];
/// - it MUST NOT panic on any sequence of calls the machine makes.
pub trait ReclaimPolicy: Send {
    /// A page was just faulted into frame `pfn` (on no list yet).
    fn add_page(&mut self, mem: &mut Memory, pfn: u32);
    /// The page in frame `pfn` leaves memory for another reason than reclaim (its
    /// process exited or was killed, ksmd merged it): forget it. Takes it off its list
    /// by default.
    fn remove(&mut self, _mem: &Memory, pfn: u32) {
        self.lists_mut().unlink(pfn);
    }
    /// The page this policy would reclaim next, for the machine to drop when nothing
    /// can be swapped out and nobody can be killed. By default the tail of its lowest
    /// numbered non-empty list (inactive anonymous first, for the two-list LRU).
    fn next_victim(&mut self, _mem: &Memory) -> Option<u32> {
        let lists = self.lists();
        (0..lists.count() as ListId).find_map(|l| lists.tail(l))
    }
    /// The policy's lists.
    fn lists(&self) -> &LruLists;
    fn lists_mut(&mut self) -> &mut LruLists;
    /// Scan and reclaim until the request's goal is met or the policy gives up.
    /// Returns the pages reclaimed.
    fn shrink(&mut self, mem: &mut Memory, req: &ShrinkRequest) -> usize;
    /// The writeback of the page in `pfn`, which reclaim had kept dirty, ended: move
    /// it to where reclaim meets it next (`rotate_reclaimable_page`).
    fn rotate_reclaimable(&mut self, mem: &mut Memory, pfn: u32);
    /// An access to the resident page in `pfn`, after the frame's bits were set (the
    /// `mark_page_accessed` of modern kernels, which activates at once); nothing by
    /// default.
    fn accessed(&mut self, _mem: &mut Memory, _pfn: u32) {}
    /// The time of the event being replayed, before it is (for policies that act on
    /// time); nothing by default.
    fn clock(&mut self, _mem: &Memory, _now_ns: u64) {}
    /// The refault counters of a policy with workingset detection; None for others.
    fn workingset_stats(&self) -> Option<WorkingsetStats> {
        None
    }
    /// Whether protection could be keeping pages from reclaim right now (so that a
    /// reclaim that freed nothing should be retried with it off).
    fn protects(&self) -> bool {
        false
    }
    /// Whether only protected pages are left on the lists (FMP's fallback condition).
    fn only_protected_left(&self, _mem: &Memory, _tasks: &TaskView) -> bool {
        false
    }
}

crate::registry_entry! {
    /// A registered policy.
    pub struct PolicyInfo {
        /// It reclaims in passes of falling priority, so `lumpy_gating` applies to it.
        pub has_priorities: bool,
        pub build: fn(&ReclaimConfig) -> Box<dyn ReclaimPolicy>,
    }
}

/// Every reclaim policy.
pub static POLICIES: Registry<PolicyInfo> = Registry::new(
    "reclaim policy",
    &[
    PolicyInfo {
        name: "stock",
        has_priorities: true,
        summary: "Linux 3.4 two-list LRU (active/inactive per anon/file, PG_referenced)",
        build: |c| Box::new(TwoListLru::new(c, Protection::None)),
    },
    PolicyInfo {
        name: "fmp",
        has_priorities: true,
        summary: "stock + framework-assisted protection of the interactive task's pages (IPP, with fallback)",
        build: |c| Box::new(TwoListLru::new(c, Protection::Interactive)),
    },
    PolicyInfo {
        name: "memcg-low",
        has_priorities: true,
        summary: "stock + cgroup-v2 memory.low protection of the foreground app's pages",
        build: |c| {
            Box::new(TwoListLru::new(
                c,
                Protection::CgroupLow {
                    low_pages: c.memcg_low_pages,
                    proportional: c.memcg_proportional,
                },
            ))
        },
    },
    PolicyInfo {
        name: "mglru",
        has_priorities: false,
        summary: "multi-generational LRU (2..4 generations, aging promotes accessed pages)",
        build: |c| Box::new(MgLru::with_config(c)),
    },
    PolicyInfo {
        name: "workingset",
        has_priorities: true,
        summary: "Linux 6.x two-list LRU with shadow entries and refault-distance activation (memcg reclaim, no MGLRU)",
        build: |c| Box::new(WorkingsetLru::new(c)),
    },
    PolicyInfo {
        name: "app-lru",
        has_priorities: false,
        summary: "exact LRU per process, reclaiming the least important process's pages first (the multi-swap paper's model)",
        build: |c| Box::new(AppLru::new(c.memory_pages, false)),
    },
    PolicyInfo {
        name: "global-lru",
        has_priorities: false,
        summary: "one exact LRU list of every page",
        build: |c| Box::new(AppLru::new(c.memory_pages, true)),
    },
    ],
);

/// The reclaim policy called `name`; an unknown name lists the known ones.
pub fn find_policy(name: &str) -> Result<&'static PolicyInfo> {
    POLICIES.find(name)
}

/// For which high-order requests reclaim is lumpy.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum LumpyGating {
    /// Every request of order above 0, at every priority (the reading of the paper).
    AnyOrder,
    /// Linux 3.4 `set_reclaim_mode` built without `CONFIG_COMPACTION`: lumpy for
    /// orders above `PAGE_ALLOC_COSTLY_ORDER` (3), and for orders 1..=3 only once the
    /// priority has dropped below `DEF_PRIORITY - 2`; otherwise single-page reclaim
    /// (references honoured, no block).
    CostlyOrPressure,
}

impl LumpyGating {
    /// The name in a config file.
    pub fn name(self) -> &'static str {
        match self {
            LumpyGating::AnyOrder => "any-order",
            LumpyGating::CostlyOrPressure => "costly-or-pressure",
        }
    }

    /// Whether a scan at `priority` for a request of `order` is lumpy.
    pub fn is_lumpy(self, order: u32, priority: u32) -> bool {
        match self {
            LumpyGating::AnyOrder => order > 0,
            LumpyGating::CostlyOrPressure => {
                order > PAGE_ALLOC_COSTLY_ORDER || (order > 0 && priority < DEF_PRIORITY - 2)
            }
        }
    }
}

/// What lumpy reclaim does at a neighbour it cannot take (unmovable or reserved).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum LumpyUnmovable {
    /// Skip it and go on with the rest of the block (the paper's wording).
    Skip,
    /// Give up the rest of the block, as `isolate_lru_pages` in Linux 3.4 does (the
    /// block cannot become free anyway).
    Abort,
}

/// Lumpy reclaim around the (already isolated) tag page `tag`: isolate the other
/// frames of the naturally aligned 2^order block that are on an LRU list and that
/// `may_take` allows, into `out`. Free frames are skipped; unmovable and reserved ones
/// per `on_unmovable`; anonymous pages are not taken when swap is full (as 3.4).
/// Returns the neighbours looked at.
pub fn isolate_lumpy_block(
    mem: &mut Memory,
    lists: &mut LruLists,
    tag: u32,
    order: u32,
    on_unmovable: LumpyUnmovable,
    may_take: &mut dyn FnMut(&Memory, u32) -> bool,
    out: &mut Vec<u32>,
) -> usize {
    let size = 1u32 << order;
    let start = tag & !(size - 1);
    let end = (start + size).min(mem.total() as u32);
    let mut looked = 0;
    let mut whole = true;
    for pfn in start..end {
        if pfn == tag {
            continue;
        }
        looked += 1;
        let f = mem.frame(pfn);
        match f.state {
            FrameState::Free => continue,
            FrameState::Reserved | FrameState::Unmovable => {
                whole = false;
                if on_unmovable == LumpyUnmovable::Abort {
                    break;
                }
            }
            FrameState::Page => {
                if lists.list_of(pfn) == NO_LIST {
                    // Already isolated by this batch.
                    continue;
                }
                if f.is_anon() && mem.swap_free() == 0 {
                    whole = false;
                    break;
                }
                if !may_take(mem, pfn) {
                    whole = false;
                    continue;
                }
                lists.unlink(pfn);
                out.push(pfn);
                mem.counters.lumpy_taken += 1;
            }
        }
    }
    if !whole {
        mem.counters.lumpy_failed += 1;
    }
    mem.counters.scanned += looked as u64;
    looked
}
