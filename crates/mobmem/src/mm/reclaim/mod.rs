//! Linux page reclaim and framework-assisted protection of interactive pages (FMP):
//! Kim (Seoul National University, 2016), on the kernel's reclaim
//! of Linux 3.4 (mm/vmscan.c, mm/page_alloc.c) and its modern alternatives.
//!
//! A trace is replayed on physical memory of numbered frames ([`memory`]). Every
//! access to a page that is not resident is a page fault that allocates a frame; the
//! allocator keeps free memory above the zone watermarks of `setup_per_zone_wmarks`
//! (min = isqrt(lowmem KiB * 16) clamped to 128..65536 KiB, low = min * 5/4,
//! high = min * 3/2):
//! - after an allocation leaves free memory below *low*, kswapd reclaims until it is
//!   back at *high* (kswapd is modelled as keeping up: it runs at once);
//! - an allocation that would take free memory below *min*, or a high-order request
//!   that finds no free aligned block, reclaims directly (32 pages a call; lumpy
//!   reclaim for an order above 0).
//!
//! Which pages reclaim frees is the policy's ([`policy::POLICIES`]): `stock` (the 3.4
//! two-list LRU, [`lru`]), `fmp` (stock + IPP protecting the interactive task's pages),
//! `memcg-low` (stock + `memory.low` protection of the foreground app) and `mglru`
//! ([`mglru`]). When a protecting policy's reclaim falls short of its goal, it is
//! repeated with protection off (FMP's fallback; memcg's `memory.low` breach).
//!
//! The interactive task (FMP's CIPI + FTI) is the process that received the latest
//! input event, or before any input the foreground app (`oom_score_adj` 0). Each input
//! starts an *interaction*; its response time is `T_E + n * T_pf` (the paper), n being
//! the major faults (storage reads: first reads of file pages, file refaults, swap-ins)
//! of the interactive task until the next input.
//!
//! A driver that needs physically contiguous buffers (the USB gadget path of the
//! paper's experiment) is modelled by [`HighOrderConfig`]: every `every_faults` page
//! faults of the named process allocate one unmovable order-`order` block, and the
//! oldest block is freed once more than `held_blocks` are held.

pub mod app_lru;
pub mod lists;
pub mod lru;
pub mod mglru;
pub mod policy;
pub mod workingset;

use std::collections::VecDeque;

use serde::{Deserialize, Serialize};

use crate::core::events::{self, EventHandler};
use crate::core::memory::{FaultKind, Memory, ReclaimCounters};
use crate::core::pages::{PageFlags, SwapDevice};
use crate::core::stats::{percentile, Stats};
use crate::trace::{Event, PageId, PageKey, PageKind, ProcId, Trace, ADJ_FOREGROUND};
use crate::{Check, Error, Result};
use policy::{
    find_policy, Goal, LumpyGating, LumpyUnmovable, ReclaimPolicy, ShrinkRequest, TaskView,
};
pub use workingset::WorkingsetStats;

/// The page-protection workload, kept under this name beside the reclaim code it drives.
pub use crate::workload::gallery_usb as workload;
pub use policy::POLICIES;

/// Who writes a dirty file page back before reclaim may free it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum DirtyWriteback {
    /// Reclaim writes it back and frees it in the same scan, at no cost: it stands for
    /// a flusher that keeps up with the writers (the paper says nothing of dirty pages).
    InReclaim,
    /// Linux 3.4: `shrink_page_list` keeps a dirty file page (sets `PG_reclaim`, puts
    /// it back) and the flusher writes it; when its writeback ends it goes to the
    /// inactive tail. Modelled as: the flusher writes the oldest dirty pages whenever
    /// more than `dirty_background_ratio` % of free + reclaimable memory is dirty, and
    /// the pages reclaim kept are written by the next reclaim call.
    Flusher,
}

/// Zone watermarks in KiB.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Watermarks {
    pub min_kb: u64,
    pub low_kb: u64,
    pub high_kb: u64,
}

impl Watermarks {
    /// `min_free_kbytes` for `lowmem_kb` of memory (mm/page_alloc.c
    /// `init_per_zone_wmark_min`: isqrt(lowmem_kb * 16), clamped to 128..=65536), and
    /// low = min + min/4, high = min + min/2 (`setup_per_zone_wmarks`).
    pub fn for_lowmem_kb(lowmem_kb: u64) -> Self {
        let min = ((lowmem_kb * 16) as f64).sqrt() as u64;
        // f64 sqrt may be one off for large values: fix to the integer square root.
        let min = (min.saturating_sub(1)..=min + 1)
            .filter(|m| m * m <= lowmem_kb * 16)
            .max()
            .unwrap_or(0)
            .clamp(128, 65536);
        Self::from_min_kb(min)
    }

    pub fn from_min_kb(min_kb: u64) -> Self {
        Watermarks {
            min_kb,
            low_kb: min_kb + min_kb / 4,
            high_kb: min_kb + min_kb / 2,
        }
    }

    pub fn min_pages(&self) -> usize {
        (self.min_kb / 4) as usize
    }
    pub fn low_pages(&self) -> usize {
        (self.low_kb / 4) as usize
    }
    pub fn high_pages(&self) -> usize {
        (self.high_kb / 4) as usize
    }
}

/// A driver's high-order allocations, triggered by a process's page faults.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct HighOrderConfig {
    /// Name of the process whose faults drive the allocations (empty: none).
    pub process: String,
    pub order: u32,
    pub every_faults: u32,
    pub held_blocks: usize,
}

impl Default for HighOrderConfig {
    /// The gallery-usb preset's USB transfer: an order-3 (32 KiB) request buffer every
    /// 32 pages received, 128 buffers (4 MiB) held.
    fn default() -> Self {
        HighOrderConfig {
            process: workload::USB_PROCESS.into(),
            order: 3,
            every_faults: 32,
            held_blocks: 128,
        }
    }
}

/// Everything a reclaim run is configured by. `docs/reclaim.md` gives each default's
/// source.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ReclaimConfig {
    pub policy: String,
    /// Page frames of physical memory.
    pub memory_pages: usize,
    /// Frames reserved at boot, the lowest ones.
    pub reserved_pages: usize,
    /// Unmovable kernel pages scattered over memory, per mille of the frames.
    pub unmovable_per_mille: u32,
    pub swap_pages: usize,
    /// Override of the watermarks (min, low, high) in KiB.
    pub watermarks_kb: Option<[u64; 3]>,
    /// `vm.swappiness`.
    pub swappiness: u32,
    /// Referenced pages at the active tail go back to the active head (the paper's
    /// reading); if false they are deactivated as all non-executable pages in 3.4.
    pub rotate_referenced_active: bool,
    /// New anonymous pages start on the active list (3.4); the paper: inactive.
    pub new_anon_active: bool,
    pub lumpy_unmovable: LumpyUnmovable,
    /// Which high-order requests reclaim lumpily: every order above 0 (the paper) or as
    /// 3.4's `set_reclaim_mode` (costly orders, or small ones under pressure; refused
    /// for a policy without reclaim priorities, `mglru`).
    pub lumpy_gating: LumpyGating,
    /// Who writes dirty file pages back before reclaim frees them.
    pub dirty_writeback: DirtyWriteback,
    /// `vm.dirty_background_ratio`, for `dirty_writeback = "flusher"`.
    pub dirty_background_ratio: u32,
    /// kswapd is woken with a high-order request's order and balances for it
    /// (3.4 `wakeup_kswapd`/`balance_pgdat`, falling back to order 0 when it cannot);
    /// The paper: kswapd balances free memory (order 0) only.
    pub kswapd_high_order: bool,
    /// memcg-low: `memory.low` of the foreground app, in pages.
    pub memcg_low_pages: usize,
    /// memcg-low: above `low`, protect in proportion low/usage (cgroup v2).
    pub memcg_proportional: bool,
    /// T_E: execution time of an interaction without faults, ms.
    pub execution_ms: f64,
    /// T_pf: time of one major fault, ms.
    pub fault_ms: f64,
    pub high_order: HighOrderConfig,
    /// workingset: how often a memory cgroup's statistics are flushed, ms; the
    /// heuristics read them as of the last flush (0: always exact).
    #[serde(skip_serializing_if = "is_zero")]
    pub stats_flush_ms: u64,
    /// workingset: the times of the flushes instead, ns from the trace's start (as a
    /// capture observed them); empty: periodic.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub stats_flush_at_ns: Vec<u64>,
    /// Pages a direct reclaim call tries to free (`SWAP_CLUSTER_MAX`, 32, in the
    /// kernel; 1 reclaims exactly as a page is needed, as the multi-swap paper's model).
    #[serde(skip_serializing_if = "is_cluster")]
    pub reclaim_batch: usize,
    /// The clock a replay's work runs on ([`crate::mm::clock`]): CPUs, flash queue, and
    /// whether times are contended or summed. Its flash is `devices::EMMC` with reads
    /// of `fault_ms`.
    pub time: crate::mm::clock::TimeModel,
}

fn is_zero(v: &u64) -> bool {
    *v == 0
}

fn is_cluster(v: &usize) -> bool {
    *v == policy::SWAP_CLUSTER_MAX
}

impl Default for ReclaimConfig {
    fn default() -> Self {
        ReclaimConfig {
            policy: "stock".into(),
            memory_pages: 32768,
            reserved_pages: 512,
            unmovable_per_mille: 60,
            swap_pages: 8192,
            watermarks_kb: None,
            swappiness: 60,
            rotate_referenced_active: true,
            new_anon_active: false,
            lumpy_unmovable: LumpyUnmovable::Skip,
            lumpy_gating: LumpyGating::AnyOrder,
            kswapd_high_order: false,
            dirty_writeback: DirtyWriteback::InReclaim,
            dirty_background_ratio: 10,
            memcg_low_pages: 8192,
            memcg_proportional: true,
            execution_ms: 100.0,
            // A 4 KiB read from eMMC-class flash, in ms (exactly 0.1).
            fault_ms: crate::devices::EMMC.read_ns / 1e6,
            high_order: HighOrderConfig::default(),
            stats_flush_ms: 0,
            stats_flush_at_ns: Vec::new(),
            reclaim_batch: policy::SWAP_CLUSTER_MAX,
            time: crate::mm::clock::TimeModel::default(),
        }
    }
}

/// Largest memory a run may simulate (16 GiB of frames).
pub const MAX_MEMORY_PAGES: usize = 1 << 22;

/// Distinct anonymous pages of a trace.
pub fn anon_pages(trace: &Trace) -> usize {
    trace
        .tables
        .pages
        .iter()
        .filter(|k| k.kind == PageKind::Anon)
        .count()
}

impl ReclaimConfig {
    pub fn validate(&self) -> Result<()> {
        let check = Check("reclaim config");
        let policy = find_policy(&self.policy)?;
        check.range("memory_pages", self.memory_pages, 1..=MAX_MEMORY_PAGES)?;
        check.range("reclaim_batch", self.reclaim_batch, 1..=1024)?;
        self.time.validate()?;
        if self.reserved_pages > 0 && self.reserved_pages >= self.memory_pages / 2 {
            return check.fail(format!(
                "reserved_pages ({}) must be below half of memory_pages ({})",
                self.reserved_pages, self.memory_pages
            ));
        }
        check.range("unmovable_per_mille", self.unmovable_per_mille, 0..=200)?;
        check.range("swappiness", self.swappiness, 0..=200)?;
        check.range(
            "dirty_background_ratio",
            self.dirty_background_ratio,
            1..=100,
        )?;
        if !policy.has_priorities && self.lumpy_gating != LumpyGating::AnyOrder {
            return check.fail(format!(
                "lumpy_gating = \"{}\" gates lumpy reclaim by the reclaim priority, which {} \
does not have: use lumpy_gating = \"any-order\" with it",
                self.lumpy_gating.name(),
                self.policy
            ));
        }
        let wm = self.watermarks();
        if !(wm.min_kb <= wm.low_kb && wm.low_kb <= wm.high_kb) {
            return check.fail(format!(
                "watermarks must be min <= low <= high, got {:?}",
                self.watermarks_kb
            ));
        }
        if wm.high_pages() > 0 && wm.high_pages() >= self.usable_pages() / 2 {
            return check.fail(format!(
                "high watermark ({} pages) must be below half of the usable memory ({} pages)",
                wm.high_pages(),
                self.usable_pages()
            ));
        }
        // A minute of work per interaction and ten seconds per fault are far beyond any
        // phone; larger values would only make the clock run for simulated years.
        for (name, v, most) in [
            ("execution_ms", self.execution_ms, 60_000.0),
            ("fault_ms", self.fault_ms, 10_000.0),
        ] {
            if !(v.is_finite() && (0.0..=most).contains(&v)) {
                return check.fail(format!("{name} must be a number from 0 to {most}, got {v}"));
            }
        }
        let h = &self.high_order;
        if !h.process.is_empty() && (h.order == 0 || h.order > 6 || h.every_faults == 0) {
            return check.fail(format!(
                "high_order needs order 1..=6 and every_faults >= 1, got order {} every {}",
                h.order, h.every_faults
            ));
        }
        Ok(())
    }

    /// Frames for a memory of `fraction` of a trace's `footprint` (distinct pages):
    /// the usable frames (neither reserved nor unmovable at boot) are
    /// ceil(fraction * footprint), plus the reserved frames, plus the scattered
    /// unmovable share. An error when that leaves no more usable frames than
    /// reserved ones or exceeds [`MAX_MEMORY_PAGES`].
    pub fn memory_pages_for_fraction(&self, fraction: f64, footprint: usize) -> Result<usize> {
        let fail = |m: String| Err(Error::config("memory fraction", m));
        if !(fraction.is_finite() && fraction > 0.0 && fraction <= 16.0) {
            return fail(format!("the fraction must be in (0, 16], got {fraction}"));
        }
        let usable = (fraction * footprint as f64).ceil() as usize;
        if usable <= self.reserved_pages {
            return fail(format!(
                "{fraction} of the trace's {footprint} distinct pages gives {usable} usable frames, \
not more than reserved_pages ({}): give a larger fraction, or a smaller reserved_pages in the config",
                self.reserved_pages
            ));
        }
        let unmovable = self.unmovable_per_mille.min(999) as usize;
        let pages = self.reserved_pages + (usable * 1000).div_ceil(1000 - unmovable);
        if pages > MAX_MEMORY_PAGES {
            return fail(format!(
                "{fraction} of {footprint} pages needs {pages} frames, more than {MAX_MEMORY_PAGES}"
            ));
        }
        Ok(pages)
    }

    /// Swap for a trace with `anon_pages` distinct anonymous pages: at least
    /// `swap_pages`, and enough that those pages fit in half the usable frames plus
    /// swap (anon_pages - usable/2), so that reclaim always has something to free
    /// (this model has no low-memory killer).
    pub fn swap_pages_for(&self, anon_pages: usize) -> usize {
        self.swap_pages
            .max(anon_pages.saturating_sub(self.usable_pages() / 2))
    }

    /// Frames neither reserved nor unmovable at boot (approximately: the scattered
    /// unmovable share is taken out).
    pub fn usable_pages(&self) -> usize {
        let rest = self.memory_pages - self.reserved_pages;
        rest - rest * self.unmovable_per_mille as usize / 1000
    }

    pub fn watermarks(&self) -> Watermarks {
        match self.watermarks_kb {
            Some([min_kb, low_kb, high_kb]) => Watermarks {
                min_kb,
                low_kb,
                high_kb,
            },
            None => {
                Watermarks::for_lowmem_kb(((self.memory_pages - self.reserved_pages) * 4) as u64)
            }
        }
    }

    /// Frames that are unmovable from boot: a fixed scattered pattern (slab and
    /// page-table pages), the same in every run.
    fn boot_unmovable(&self) -> Vec<u32> {
        if self.unmovable_per_mille == 0 {
            return Vec::new();
        }
        (self.reserved_pages as u32..self.memory_pages as u32)
            .filter(|&pfn| crate::core::mix64(pfn as u64) % 1000 < self.unmovable_per_mille as u64)
            .collect()
    }
}

/// Faults of one process.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct ProcessFaults {
    pub name: String,
    /// First touches of anonymous pages and first writes of new file pages (no I/O).
    pub minor: u64,
    /// First reads of file pages.
    pub cold: u64,
    pub file_refaults: u64,
    pub swap_ins: u64,
}

impl ProcessFaults {
    pub fn major(&self) -> u64 {
        self.cold + self.file_refaults + self.swap_ins
    }
    fn count(&mut self, kind: FaultKind) {
        match kind {
            FaultKind::AnonFirst | FaultKind::FileNew => self.minor += 1,
            FaultKind::FileCold => self.cold += 1,
            FaultKind::FileRefault => self.file_refaults += 1,
            FaultKind::SwapIn => self.swap_ins += 1,
        }
    }
}

/// What a run measured. Its figures, in a fixed order (tables, CSV), are the numbers
/// listed from its fields.
#[derive(Debug, Clone, PartialEq, Serialize, Stats)]
pub struct ReclaimResult {
    pub policy: String,
    #[stats(skip)]
    pub memory_pages: usize,
    pub watermarks: Watermarks,
    #[stats(skip)]
    pub accesses: u64,
    pub interactions: usize,
    /// Faults of the interactive task during interactions.
    #[stats(then(
        interactive_major_faults = self.interactive.major(),
        interactive_refaults = self.interactive.file_refaults + self.interactive.swap_ins,
        interactive_cold_faults = self.interactive.cold,
    ))]
    pub interactive: ProcessFaults,
    pub rt_mean_ms: f64,
    pub rt_p50_ms: f64,
    pub rt_p95_ms: f64,
    #[stats(then(
        pages_scanned = self.counters.scanned,
        pages_reclaimed = self.counters.reclaimed,
        swap_outs = self.counters.swap_outs,
        file_drops = self.counters.file_drops,
        writebacks = self.counters.writebacks,
        dirty_kept = self.counters.dirty_kept,
    ))]
    pub major_faults: u64,
    pub kswapd_runs: u64,
    #[stats(skip)]
    pub kswapd_reclaimed: u64,
    pub direct_reclaims: u64,
    #[stats(skip)]
    pub direct_reclaimed: u64,
    /// Reclaim calls repeated with protection off.
    #[stats(then(
        protected_skips = self.counters.protected_skips,
        lumpy_taken = self.counters.lumpy_taken,
        lumpy_failed = self.counters.lumpy_failed,
    ))]
    pub fallbacks: u64,
    pub high_order_allocs: u64,
    pub high_order_failures: u64,
    /// Order-0 allocations that had to dip below the min watermark.
    #[stats(skip)]
    pub reserve_dips: u64,
    /// On the clock (contended accounting; none when summed): the machine's memory
    /// stall (PSI SOME), s, the time reads and writes waited in the flash's queue, ms,
    /// and kswapd's CPU time, ms.
    pub memory_stall_s: Option<f64>,
    pub flash_queue_wait_ms: Option<f64>,
    pub kswapd_cpu_ms: Option<f64>,
    pub counters: ReclaimCounters,
    pub per_process: Vec<ProcessFaults>,
}

/// Direct-reclaim calls a high-order request makes before it fails.
const HIGH_ORDER_TRIES: usize = 16;

/// The simulated machine during a run.
pub struct Machine {
    pub mem: Memory,
    policy: Box<dyn ReclaimPolicy>,
    wm: Watermarks,
    kswapd_high_order: bool,
    /// The flusher of `dirty_writeback = "flusher"`: its background ratio (it writes
    /// the pages in the order [`Memory`] lists them dirty).
    flusher: Option<u32>,
    pub tasks: TaskView,
    last_input: Option<ProcId>,
    pub kswapd_runs: u64,
    pub kswapd_reclaimed: u64,
    pub direct_reclaims: u64,
    pub direct_reclaimed: u64,
    pub fallbacks: u64,
    pub reserve_dips: u64,
    /// Pages a direct reclaim call tries to free.
    reclaim_batch: usize,
    /// Whether the low-memory killer frees memory when reclaim cannot.
    killer: bool,
    /// Processes killed, each with the pages it owned, since the last
    /// [`Machine::take_kills`].
    kills: Vec<(ProcId, Vec<PageId>)>,
    /// Processes killed, and pages dropped with their data because nothing could be
    /// swapped out and nobody killed.
    pub killed: u64,
    pub dropped_pages: u64,
    /// Who is reclaiming now, and what reclaim did in each context since the last
    /// [`Machine::take_work`]: the work a thread spends time on.
    context: Context,
    work: [ReclaimWork; 2],
}

/// Whose time a reclaim call spends: kswapd's, or that of the task whose allocation
/// reclaims directly (a memory stall of that task).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Context {
    Kswapd = 0,
    Direct = 1,
}

/// What reclaim did in one context: pages scanned, and the device operations its
/// swap-outs and writebacks issued.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ReclaimWork {
    pub scanned: u64,
    /// Dirty file pages written back.
    pub writebacks: u64,
    /// Swap device operations (compressions for zram, writes for flash and NVM).
    pub io: crate::core::swap::IoCounts,
}

impl ReclaimWork {
    pub fn is_empty(&self) -> bool {
        *self == ReclaimWork::default()
    }
}

/// A page fault: how it was served and, for a swap-in, the device read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fault {
    pub kind: FaultKind,
    pub read_from: Option<SwapDevice>,
}

impl Machine {
    /// A machine with `pages` distinct pages and `procs` processes to hold.
    pub fn new(config: &ReclaimConfig, pages: usize, procs: usize) -> Result<Self> {
        config.validate()?;
        let info = find_policy(&config.policy)?;
        let reserved: Vec<u32> = (0..config.reserved_pages as u32).collect();
        let mut mem = Memory::new(
            config.memory_pages,
            &reserved,
            pages,
            procs,
            config.swap_pages,
        );
        for pfn in config.boot_unmovable() {
            mem.allocate_unmovable(pfn, 0);
        }
        mem.set_flusher(config.dirty_writeback == DirtyWriteback::Flusher);
        Ok(Machine {
            mem,
            policy: (info.build)(config),
            wm: config.watermarks(),
            kswapd_high_order: config.kswapd_high_order,
            flusher: (config.dirty_writeback == DirtyWriteback::Flusher)
                .then_some(config.dirty_background_ratio),
            tasks: TaskView::default(),
            last_input: None,
            kswapd_runs: 0,
            kswapd_reclaimed: 0,
            direct_reclaims: 0,
            direct_reclaimed: 0,
            fallbacks: 0,
            reserve_dips: 0,
            reclaim_batch: config.reclaim_batch,
            killer: false,
            kills: Vec::new(),
            killed: 0,
            dropped_pages: 0,
            context: Context::Kswapd,
            work: [ReclaimWork::default(); 2],
        })
    }

    /// Let the low-memory killer free memory when reclaim cannot: the least important
    /// process holding memory ([`Memory::kill_candidate`]) is killed, or, with nobody to
    /// kill, the policy's next victim is dropped with its data.
    pub fn enable_killer(&mut self) {
        self.killer = true;
    }

    /// The processes killed since the last call, each with the pages it owned.
    pub fn take_kills(&mut self) -> Vec<(ProcId, Vec<PageId>)> {
        std::mem::take(&mut self.kills)
    }

    /// What reclaim did in each context ([`Context`] as index) since the last call.
    pub fn take_work(&mut self) -> [ReclaimWork; 2] {
        std::mem::take(&mut self.work)
    }

    /// The replay reached `now_ns` (for policies that act on time).
    pub fn set_time(&mut self, now_ns: u64) {
        self.mem.set_time(now_ns);
        self.policy.clock(&self.mem, now_ns);
    }

    /// `proc` ends (`killed`, or exits): every page it owns is freed, in memory and in
    /// swap. A killed process's pages in swap are marked lost (their next touch finds
    /// nothing to read back). Returns the pages it owned.
    pub fn end_process(&mut self, proc: ProcId, killed: bool) -> Vec<PageId> {
        let owned = self.mem.procs.die(proc);
        for &page in &owned {
            let lost = killed && self.mem.is_swapped(page);
            self.discard(page);
            let pages = self.mem.pages_mut();
            pages.set_flags(page, PageFlags::OWNED, false);
            if lost {
                pages.set_flags(page, PageFlags::LOST, true);
            }
        }
        owned
    }

    /// Kill the process [`Memory::kill_candidate`] names, sparing `accessor`; false when
    /// there is none.
    pub fn kill_one(&mut self, accessor: ProcId) -> bool {
        match self.mem.kill_candidate(accessor) {
            Some(victim) => {
                self.kill(victim);
                true
            }
            None => false,
        }
    }

    /// Kill `proc` (the low-memory killer).
    fn kill(&mut self, proc: ProcId) {
        let owned = self.end_process(proc, true);
        self.killed += 1;
        self.kills.push((proc, owned));
    }

    /// The killer's answer to a memory that reclaim cannot free: kill, or drop the
    /// policy's next page. False when there is nothing left to do either.
    fn free_by_force(&mut self, accessor: Option<ProcId>) -> bool {
        let candidate = self.mem.kill_candidate(accessor.unwrap_or(ProcId::MAX));
        if let Some(victim) = candidate {
            self.kill(victim);
            return true;
        }
        let Some(pfn) = self.policy.next_victim(&self.mem) else {
            return false;
        };
        let page = self.mem.page_in(pfn);
        self.discard(page);
        self.dropped_pages += 1;
        true
    }

    /// An internal error an operation of the memory met, as an error.
    fn check_errors(&mut self) -> Result<()> {
        match self.mem.take_error() {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    /// A process received input: it is the interactive task from now on.
    pub fn set_input(&mut self, proc: ProcId) {
        self.last_input = Some(proc);
        self.tasks.interactive = Some(proc);
    }

    pub fn set_foreground(&mut self, proc: ProcId) {
        self.tasks.foreground = Some(proc);
        if self.last_input.is_none() {
            self.tasks.interactive = Some(proc);
        }
    }

    /// One reclaim call with the fallback of protecting policies.
    pub fn reclaim(&mut self, goal: Goal, order: u32) -> usize {
        let (scanned, writebacks, io) = (
            self.mem.counters.scanned,
            self.mem.counters.writebacks,
            *self.mem.swap().counts(),
        );
        let reclaimed = self.reclaim_once(goal, order);
        let work = &mut self.work[self.context as usize];
        work.scanned += self.mem.counters.scanned - scanned;
        work.writebacks += self.mem.counters.writebacks - writebacks;
        work.io.add_all(&self.mem.swap().counts().since(&io));
        reclaimed
    }

    fn reclaim_once(&mut self, goal: Goal, order: u32) -> usize {
        if self.flusher.is_some() {
            for pfn in self.mem.end_kept_writeback() {
                self.policy.rotate_reclaimable(&mut self.mem, pfn);
            }
        }
        let mut req = ShrinkRequest {
            goal,
            order,
            tasks: self.tasks,
            ignore_protection: self.policy.only_protected_left(&self.mem, &self.tasks),
        };
        let mut reclaimed = self.policy.shrink(&mut self.mem, &req);
        if !req.done(&self.mem, reclaimed) && self.policy.protects() && !req.ignore_protection {
            self.fallbacks += 1;
            req.ignore_protection = true;
            if let Goal::Reclaim(n) = req.goal {
                req.goal = Goal::Reclaim(n.saturating_sub(reclaimed));
            }
            reclaimed += self.policy.shrink(&mut self.mem, &req);
        }
        reclaimed
    }

    /// Forget `page` (its process exited or was killed): the policy lets go of it and
    /// the memory frees its frame or swap slot.
    pub fn discard(&mut self, page: PageId) {
        if let Some(pfn) = self.mem.frame_of(page) {
            self.policy.remove(&self.mem, pfn);
        }
        self.mem.discard(page);
    }

    /// The list of the policy the resident `page` is on ([`lists::NO_LIST`] when it is
    /// not resident).
    pub fn list_of(&self, page: PageId) -> lists::ListId {
        self.mem
            .frame_of(page)
            .map_or(lists::NO_LIST, |pfn| self.policy.lists().list_of(pfn))
    }

    /// The policy's lists.
    pub fn lists(&self) -> &lists::LruLists {
        self.policy.lists()
    }

    /// Check the memory's invariants and that every resident page is on exactly one of
    /// the policy's lists.
    pub fn check(&self) -> std::result::Result<(), String> {
        self.mem.check()?;
        self.policy.lists().check(&self.mem)
    }

    /// Wake kswapd if free memory is below low; it reclaims up to high.
    pub fn balance(&mut self) {
        if self.mem.free() < self.wm.low_pages() {
            self.kswapd_runs += 1;
            self.kswapd_reclaimed +=
                self.reclaim(Goal::FreeAtLeast(self.wm.high_pages()), 0) as u64;
        }
    }

    /// kswapd woken by an allocation of `order` (3.4 `wakeup_kswapd`): it runs when the
    /// watermark check of that order fails against low and reclaims at that order
    /// until the check passes against high (`balance_pgdat`). When a whole reclaim
    /// pass falls short it gives the order up and balances order 0, as
    /// `balance_pgdat` does once it reclaims less than `SWAP_CLUSTER_MAX` in a pass.
    pub fn balance_for_order(&mut self, order: u32) {
        if order == 0 || !self.kswapd_high_order {
            return self.balance();
        }
        if self.mem.watermark_ok(order, self.wm.low_pages()) {
            return;
        }
        self.kswapd_runs += 1;
        let goal = Goal::Watermark(self.wm.high_pages());
        self.kswapd_reclaimed += self.reclaim(goal, order) as u64;
        if !self.mem.watermark_ok(order, self.wm.high_pages())
            && self.mem.free() < self.wm.high_pages()
        {
            self.kswapd_reclaimed +=
                self.reclaim(Goal::FreeAtLeast(self.wm.high_pages()), 0) as u64;
        }
    }

    /// `__zone_watermark_ok` against min (see [`Memory::watermark_ok`]).
    pub fn watermark_ok(&self, order: u32) -> bool {
        self.mem.watermark_ok(order, self.wm.min_pages())
    }

    /// Allocate a naturally aligned block of 2^order frames; `None` when reclaim could
    /// not make one (high orders only; order 0 dips below min as a last resort and
    /// fails only when no frame is free at all).
    pub fn allocate(&mut self, order: u32) -> Result<Option<u32>> {
        self.allocate_for(order, None)
    }

    /// [`Machine::allocate`] on behalf of `accessor` (whom the killer spares).
    pub fn allocate_for(&mut self, order: u32, accessor: Option<ProcId>) -> Result<Option<u32>> {
        let mut tries = 0;
        loop {
            if self.watermark_ok(order) {
                if let Some(pfn) = self.mem.find_free_block(order) {
                    return Ok(Some(pfn));
                }
            }
            // Slow path: kswapd, then direct reclaim.
            if tries == 0 {
                self.balance_for_order(order);
                tries += 1;
                continue;
            }
            self.direct_reclaims += 1;
            self.context = Context::Direct;
            let r = self.reclaim(Goal::Reclaim(self.reclaim_batch), order);
            self.context = Context::Kswapd;
            self.check_errors()?;
            self.direct_reclaimed += r as u64;
            tries += 1;
            if order == 0 && r == 0 {
                if let Some(pfn) = self.mem.find_free_block(0) {
                    self.reserve_dips += 1;
                    return Ok(Some(pfn));
                }
                if self.killer && self.free_by_force(accessor) {
                    continue;
                }
                return Err(Error::config(
                    "reclaim",
                    format!(
                        "out of memory: nothing reclaimable ({} frames, {} resident pages, {} swap slots free; \
this model has no low-memory killer: give more memory or swap_pages; mobmem reclaim: --memory-mib, \
--memory-fraction, or swap_pages in --config)",
                        self.mem.total(),
                        self.mem.lru_pages(),
                        self.mem.swap_free()
                    ),
                ));
            }
            if order > 0 && tries > HIGH_ORDER_TRIES {
                return Ok(None);
            }
        }
    }

    /// Fault `page` of `proc` in; returns how it was served. An anonymous page is
    /// owned by the first process to touch it.
    pub fn fault(&mut self, page: u32, proc: ProcId, anon: bool, write: bool) -> Result<Fault> {
        let kind = self.mem.fault_kind(page, anon, write);
        let Some(pfn) = self.allocate_for(0, Some(proc))? else {
            return Err(Error::config(
                "reclaim",
                "an order-0 allocation found no frame (internal error)",
            ));
        };
        if anon {
            self.mem.own(page, proc);
        }
        let read_from = self.mem.fault_in(pfn, page, proc, anon);
        self.check_errors()?;
        self.policy.add_page(&mut self.mem, pfn);
        self.balance();
        self.check_errors()?;
        Ok(Fault { kind, read_from })
    }

    /// An access to `page`: sets the referenced bits if resident, else faults it in.
    pub fn access(
        &mut self,
        page: u32,
        proc: ProcId,
        anon: bool,
        write: bool,
    ) -> Result<Option<Fault>> {
        self.mem.procs.touch(proc);
        if let Some(pfn) = self.mem.frame_of(page) {
            if write && anon {
                self.mem.mark_anon_dirty(page);
            }
            if self.mem.frame(pfn).is_young() {
                self.mem.set_frame_flags(pfn, PageFlags::REFERENCED, true);
            }
            self.mem.set_frame_flags(pfn, PageFlags::YOUNG, true);
            if write && !anon {
                self.dirtied(pfn);
            }
            self.policy.accessed(&mut self.mem, pfn);
            return Ok(None);
        }
        let fault = self.fault(page, proc, anon, write)?;
        if write {
            match (anon, self.mem.frame_of(page)) {
                (true, _) => self.mem.mark_anon_dirty(page),
                (false, Some(pfn)) => self.dirtied(pfn),
                (false, None) => {}
            }
        }
        Ok(Some(fault))
    }

    /// A write to the file page `page` in `pfn`; the flusher writes the oldest dirty
    /// pages back while more than its background ratio of free + reclaimable memory
    /// is dirty (`wb_over_bg_thresh`-style; the writer is never throttled as it stays
    /// below `dirty_ratio`).
    fn dirtied(&mut self, pfn: u32) {
        if !self.mem.mark_dirty(pfn) {
            return;
        }
        let Some(ratio) = self.flusher else {
            return;
        };
        let background = ratio as usize * (self.mem.free() + self.mem.lru_pages()) / 100;
        while self.mem.dirty() > background {
            let Some(oldest) = self.mem.oldest_dirty() else {
                break;
            };
            let page = self.mem.page_in(oldest);
            if self.mem.write_back(oldest, page) {
                self.policy.rotate_reclaimable(&mut self.mem, oldest);
            }
        }
    }
}

/// Replay `trace` under `config`. Deterministic.
pub fn run(config: &ReclaimConfig, trace: &Trace) -> Result<ReclaimResult> {
    Ok(run_detailed(config, trace)?.result)
}

/// A run's result and the state at its end that a comparison with the kernel needs.
#[derive(Debug, Clone)]
pub struct DetailedRun {
    pub result: ReclaimResult,
    /// The policy's workingset counters (`workingset` only).
    pub workingset: Option<WorkingsetStats>,
    /// The anonymous pages in swap at the end, by page id.
    pub swapped: Vec<PageId>,
    /// Pages on the four lists of a two-list policy at the end (inactive anon, active
    /// anon, inactive file, active file).
    pub lists: [usize; 4],
}

/// Replay `trace` under `config`, keeping what [`DetailedRun`] holds. Deterministic.
pub fn run_detailed(config: &ReclaimConfig, trace: &Trace) -> Result<DetailedRun> {
    let procs = trace.tables.processes.len();
    if let Some((index, e)) = trace
        .events
        .iter()
        .enumerate()
        .find(|(_, e)| e.proc() as usize >= procs)
    {
        return Err(Error::config(
            format!("reclaim, event {index}"),
            format!(
                "process id {} but the trace has {procs} processes",
                e.proc()
            ),
        ));
    }
    let mut replay = Replay::new(config, trace)?;
    events::replay(&mut replay, &trace.events).map_err(|e| e.in_run("reclaim"))?;
    let workingset = replay.m.policy.workingset_stats();
    let swapped = (0..trace.tables.pages.len() as PageId)
        .filter(|&p| replay.m.mem.is_swapped(p))
        .collect();
    let lists = [0, 1, 2, 3 as lists::ListId].map(|l| replay.m.policy.lists().len(l));
    Ok(DetailedRun {
        result: replay.finish()?,
        workingset,
        swapped,
        lists,
    })
}

/// A reclaim run in progress: the machine and what the run counts beside it.
struct Replay<'a> {
    config: &'a ReclaimConfig,
    pages: &'a [PageKey],
    m: Machine,
    /// Per process: it makes the high-order allocations (`high_order.process`).
    driver: Vec<bool>,
    per_process: Vec<ProcessFaults>,
    interactive: ProcessFaults,
    /// Major faults of the interactive task during each interaction.
    interaction_faults: Vec<u64>,
    accesses: u64,
    driver_faults: u64,
    /// High-order blocks held, oldest first.
    held: VecDeque<u32>,
    high_order_allocs: u64,
    high_order_failures: u64,
    /// The clock the processes' faults and kswapd's work run on (contended accounting).
    clock: Option<crate::mm::clock::MachineClock>,
    /// The time of the event in progress.
    now_ns: u64,
}

impl<'a> Replay<'a> {
    fn new(config: &'a ReclaimConfig, trace: &'a Trace) -> Result<Self> {
        let tables = &trace.tables;
        let procs = tables.processes.len();
        Ok(Replay {
            config,
            pages: &tables.pages,
            m: Machine::new(config, tables.pages.len(), procs)?,
            driver: tables
                .processes
                .iter()
                .map(|p| {
                    !config.high_order.process.is_empty() && p.name == config.high_order.process
                })
                .collect(),
            per_process: tables
                .processes
                .iter()
                .map(|p| ProcessFaults {
                    name: p.name.clone(),
                    ..Default::default()
                })
                .collect(),
            interactive: ProcessFaults::default(),
            interaction_faults: Vec::new(),
            accesses: 0,
            driver_faults: 0,
            held: VecDeque::new(),
            high_order_allocs: 0,
            high_order_failures: 0,
            now_ns: 0,
            clock: match config.time.accounting {
                crate::mm::clock::Accounting::Sum => None,
                crate::mm::clock::Accounting::Contended => {
                    let names: Vec<String> =
                        tables.processes.iter().map(|p| p.name.clone()).collect();
                    let devices = crate::devices::swap::SwapDevices {
                        flash: crate::devices::EMMC,
                        ..Default::default()
                    };
                    Some(crate::mm::clock::MachineClock::new(
                        &config.time,
                        &names,
                        &devices,
                    )?)
                }
            },
        })
    }

    /// The work of `proc`'s access at `now`: its direct reclaim and its major fault (a
    /// flash read of `fault_ms`, a memory stall) on its thread, kswapd's on kswapd's.
    fn clock_access(&mut self, proc: ProcId, now: u64, major: bool) -> Result<()> {
        let Some(clock) = &mut self.clock else {
            return Ok(());
        };
        let mut fault = Vec::new();
        if major {
            let read_ns = self.config.fault_ms * 1e6;
            fault.push(crate::mm::clock::MachineClock::device_read(false, read_ns));
        }
        clock.access_done(proc, now, self.m.take_work(), &mut fault)
    }

    /// Every `every_faults` faults of the driver process, one high-order allocation; the
    /// oldest block is freed once more than `held_blocks` are held.
    fn driver_fault(&mut self) -> Result<()> {
        let high_order = &self.config.high_order;
        self.driver_faults += 1;
        if !self
            .driver_faults
            .is_multiple_of(high_order.every_faults as u64)
        {
            return Ok(());
        }
        match self.m.allocate(high_order.order)? {
            Some(pfn) => {
                self.m.mem.allocate_unmovable(pfn, high_order.order);
                self.high_order_allocs += 1;
                self.held.push_back(pfn);
                if self.held.len() > high_order.held_blocks {
                    let old = self.held.pop_front().expect("non-empty");
                    self.m.mem.free_unmovable(old, high_order.order);
                }
                self.m.balance();
            }
            None => self.high_order_failures += 1,
        }
        Ok(())
    }

    fn finish(mut self) -> Result<ReclaimResult> {
        let config = self.config;
        let figures = match self.clock.take() {
            Some(clock) => Some(clock.finish()?),
            None => None,
        };
        let mut rts: Vec<f64> = match &figures {
            Some(f) => f.responses_ns.iter().map(|ns| ns / 1e6).collect(),
            None => self
                .interaction_faults
                .iter()
                .map(|&n| config.execution_ms + n as f64 * config.fault_ms)
                .collect(),
        };
        let rt_mean_ms = if rts.is_empty() {
            f64::NAN
        } else {
            rts.iter().sum::<f64>() / rts.len() as f64
        };
        rts.sort_by(f64::total_cmp);
        let m = self.m;
        let mut interactive = self.interactive;
        interactive.name = "interactive task".into();
        Ok(ReclaimResult {
            policy: config.policy.clone(),
            memory_pages: config.memory_pages,
            watermarks: config.watermarks(),
            accesses: self.accesses,
            interactions: self.interaction_faults.len(),
            interactive,
            rt_mean_ms,
            rt_p50_ms: percentile(&rts, 50.0),
            rt_p95_ms: percentile(&rts, 95.0),
            major_faults: self.per_process.iter().map(|p| p.major()).sum(),
            kswapd_runs: m.kswapd_runs,
            kswapd_reclaimed: m.kswapd_reclaimed,
            direct_reclaims: m.direct_reclaims,
            direct_reclaimed: m.direct_reclaimed,
            fallbacks: m.fallbacks,
            high_order_allocs: self.high_order_allocs,
            high_order_failures: self.high_order_failures,
            reserve_dips: m.reserve_dips,
            memory_stall_s: figures.as_ref().map(|f| f.mem_some_ns as f64 / 1e9),
            flash_queue_wait_ms: figures.as_ref().map(|f| f.flash_wait_ns as f64 / 1e6),
            kswapd_cpu_ms: figures.as_ref().map(|f| f.kswapd_cpu_ns / 1e6),
            counters: m.mem.counters,
            per_process: self.per_process,
        })
    }
}

/// Reclaim reacts to accesses (faults), input (the interactive task), the foreground
/// app and exits (an exiting process's anonymous pages are freed).
impl EventHandler for Replay<'_> {
    fn check(&self) -> std::result::Result<(), String> {
        self.m.check()
    }

    fn tick(&mut self, e: &Event) {
        self.now_ns = e.time_ns();
    }

    fn access(&mut self, e: &Event) -> Result<()> {
        let (page, proc) = (e.page(), e.proc());
        let Some(key) = self.pages.get(page as usize) else {
            return Err(Error::config(
                "trace",
                format!(
                    "page id {page} but the trace has {} pages",
                    self.pages.len()
                ),
            ));
        };
        self.accesses += 1;
        self.m.set_time(e.time_ns());
        if let Some(clock) = &mut self.clock {
            clock.advance(e.time_ns())?;
        }
        let anon = key.kind == PageKind::Anon;
        let fault = self.m.access(page, proc, anon, e.is_write())?;
        self.clock_access(proc, e.time_ns(), fault.is_some_and(|f| f.kind.is_major()))?;
        let Some(fault) = fault else {
            return Ok(());
        };
        let kind = fault.kind;
        self.per_process[proc as usize].count(kind);
        if self.m.tasks.interactive == Some(proc) {
            if let Some(n) = self.interaction_faults.last_mut() {
                self.interactive.count(kind);
                if kind.is_major() {
                    *n += 1;
                }
            }
        }
        if self.driver[proc as usize] {
            self.driver_fault()?;
        }
        Ok(())
    }

    fn input(&mut self, proc: ProcId) -> Result<()> {
        self.m.set_input(proc);
        self.interaction_faults.push(0);
        if let Some(clock) = &mut self.clock {
            let now = self.now_ns;
            clock.advance(now)?;
            clock.begin_interaction(proc, now, self.config.execution_ms * 1e6)?;
        }
        Ok(())
    }

    fn importance(&mut self, proc: ProcId, oom_score_adj: i16) -> Result<()> {
        if oom_score_adj == ADJ_FOREGROUND {
            self.m.set_foreground(proc);
        }
        Ok(())
    }

    fn exit(&mut self, proc: ProcId) -> Result<()> {
        self.m.end_process(proc, false);
        Ok(())
    }
}

#[cfg(test)]
mod tests;
