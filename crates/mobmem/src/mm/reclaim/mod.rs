//! Linux page reclaim and framework-assisted protection of interactive pages (FMP):
//! SPEC.md section 5 (Kim, Seoul National University, 2016), on the kernel's reclaim
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
//! starts an *interaction*; its response time is `T_E + n * T_pf` (SPEC.md), n being
//! the major faults (storage reads: first reads of file pages, file refaults, swap-ins)
//! of the interactive task until the next input.
//!
//! A driver that needs physically contiguous buffers (the USB gadget path of the
//! paper's experiment) is modelled by [`HighOrderConfig`]: every `every_faults` page
//! faults of the named process allocate one unmovable order-`order` block, and the
//! oldest block is freed once more than `held_blocks` are held.

pub mod lru;
pub mod memory;
pub mod mglru;
pub mod policy;
pub mod workload;

use std::collections::VecDeque;

use serde::{Deserialize, Serialize};

use crate::trace::{EventKind, PageKind, ProcId, Trace, ADJ_FOREGROUND};
use crate::{Error, Result};
use memory::{FaultKind, Memory};
use policy::{
    find_policy, Goal, LumpyGating, LumpyUnmovable, ReclaimPolicy, ShrinkRequest, TaskView,
};

pub use policy::POLICIES;

/// Who writes a dirty file page back before reclaim may free it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum DirtyWriteback {
    /// Reclaim writes it back and frees it in the same scan, at no cost: it stands for
    /// a flusher that keeps up with the writers (SPEC.md says nothing of dirty pages).
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
    /// Referenced pages at the active tail go back to the active head (SPEC.md's
    /// reading); if false they are deactivated as all non-executable pages in 3.4.
    pub rotate_referenced_active: bool,
    /// New anonymous pages start on the active list (3.4); SPEC.md: inactive.
    pub new_anon_active: bool,
    pub lumpy_unmovable: LumpyUnmovable,
    /// Which high-order requests reclaim lumpily: every order above 0 (SPEC.md) or as
    /// 3.4's `set_reclaim_mode` (costly orders, or small ones under pressure; refused
    /// for a policy without reclaim priorities, `mglru`).
    pub lumpy_gating: LumpyGating,
    /// Who writes dirty file pages back before reclaim frees them.
    pub dirty_writeback: DirtyWriteback,
    /// `vm.dirty_background_ratio`, for `dirty_writeback = "flusher"`.
    pub dirty_background_ratio: u32,
    /// kswapd is woken with a high-order request's order and balances for it
    /// (3.4 `wakeup_kswapd`/`balance_pgdat`, falling back to order 0 when it cannot);
    /// SPEC.md: kswapd balances free memory (order 0) only.
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
        let fail = |m: String| Err(Error::config("reclaim config", m));
        let policy = find_policy(&self.policy)?;
        if !(64..=MAX_MEMORY_PAGES).contains(&self.memory_pages) {
            return fail(format!(
                "memory_pages must be 64..={MAX_MEMORY_PAGES}, got {}",
                self.memory_pages
            ));
        }
        if self.reserved_pages >= self.memory_pages / 2 {
            return fail(format!(
                "reserved_pages ({}) must be below half of memory_pages ({})",
                self.reserved_pages, self.memory_pages
            ));
        }
        if self.unmovable_per_mille > 200 {
            return fail(format!(
                "unmovable_per_mille must be 0..=200, got {}",
                self.unmovable_per_mille
            ));
        }
        if self.swappiness > 200 {
            return fail(format!(
                "swappiness must be 0..=200, got {}",
                self.swappiness
            ));
        }
        if !(1..=100).contains(&self.dirty_background_ratio) {
            return fail(format!(
                "dirty_background_ratio must be 1..=100, got {}",
                self.dirty_background_ratio
            ));
        }
        if !policy.has_priorities && self.lumpy_gating != LumpyGating::AnyOrder {
            return fail(format!(
                "lumpy_gating = \"{}\" gates lumpy reclaim by the reclaim priority, which {} \
does not have: use lumpy_gating = \"any-order\" with it",
                self.lumpy_gating.name(),
                self.policy
            ));
        }
        let wm = self.watermarks();
        if !(wm.min_kb <= wm.low_kb && wm.low_kb <= wm.high_kb) {
            return fail(format!(
                "watermarks must be min <= low <= high, got {:?}",
                self.watermarks_kb
            ));
        }
        if wm.high_pages() >= self.usable_pages() / 2 {
            return fail(format!(
                "high watermark ({} pages) must be below half of the usable memory ({} pages)",
                wm.high_pages(),
                self.usable_pages()
            ));
        }
        for (name, v) in [
            ("execution_ms", self.execution_ms),
            ("fault_ms", self.fault_ms),
        ] {
            if !(v.is_finite() && v >= 0.0) {
                return fail(format!("{name} must be a number >= 0, got {v}"));
            }
        }
        let h = &self.high_order;
        if !h.process.is_empty() && (h.order == 0 || h.order > 6 || h.every_faults == 0) {
            return fail(format!(
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
            .filter(|&pfn| splitmix(pfn as u64) % 1000 < self.unmovable_per_mille as u64)
            .collect()
    }
}

fn splitmix(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
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

/// What a run measured.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ReclaimResult {
    pub policy: String,
    pub memory_pages: usize,
    pub watermarks: Watermarks,
    pub accesses: u64,
    pub interactions: usize,
    /// Faults of the interactive task during interactions.
    pub interactive: ProcessFaults,
    pub rt_mean_ms: f64,
    pub rt_p50_ms: f64,
    pub rt_p95_ms: f64,
    pub major_faults: u64,
    pub kswapd_runs: u64,
    pub kswapd_reclaimed: u64,
    pub direct_reclaims: u64,
    pub direct_reclaimed: u64,
    /// Reclaim calls repeated with protection off.
    pub fallbacks: u64,
    pub high_order_allocs: u64,
    pub high_order_failures: u64,
    /// Order-0 allocations that had to dip below the min watermark.
    pub reserve_dips: u64,
    pub counters: CountersOut,
    pub per_process: Vec<ProcessFaults>,
}

/// [`memory::ReclaimCounters`] as output.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CountersOut {
    pub scanned: u64,
    pub reclaimed: u64,
    pub swap_outs: u64,
    pub file_drops: u64,
    pub writebacks: u64,
    pub dirty_kept: u64,
    pub activations: u64,
    pub deactivations: u64,
    pub lumpy_taken: u64,
    pub lumpy_failed: u64,
    pub protected_skips: u64,
}

impl ReclaimResult {
    /// The headline numbers, in a fixed order (tables, CSV).
    pub fn values(&self) -> Vec<(&'static str, f64)> {
        let c = &self.counters;
        vec![
            ("interactions", self.interactions as f64),
            ("interactive_major_faults", self.interactive.major() as f64),
            (
                "interactive_refaults",
                (self.interactive.file_refaults + self.interactive.swap_ins) as f64,
            ),
            ("interactive_cold_faults", self.interactive.cold as f64),
            ("rt_mean_ms", self.rt_mean_ms),
            ("rt_p50_ms", self.rt_p50_ms),
            ("rt_p95_ms", self.rt_p95_ms),
            ("major_faults", self.major_faults as f64),
            ("pages_scanned", c.scanned as f64),
            ("pages_reclaimed", c.reclaimed as f64),
            ("swap_outs", c.swap_outs as f64),
            ("file_drops", c.file_drops as f64),
            ("writebacks", c.writebacks as f64),
            ("dirty_kept", c.dirty_kept as f64),
            ("kswapd_runs", self.kswapd_runs as f64),
            ("direct_reclaims", self.direct_reclaims as f64),
            ("fallbacks", self.fallbacks as f64),
            ("protected_skips", c.protected_skips as f64),
            ("lumpy_taken", c.lumpy_taken as f64),
            ("lumpy_failed", c.lumpy_failed as f64),
            ("high_order_allocs", self.high_order_allocs as f64),
            ("high_order_failures", self.high_order_failures as f64),
        ]
    }
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
        })
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
            let r = self.reclaim(Goal::Reclaim(policy::SWAP_CLUSTER_MAX), order);
            self.direct_reclaimed += r as u64;
            tries += 1;
            if order == 0 && r == 0 {
                if let Some(pfn) = self.mem.find_free_block(0) {
                    self.reserve_dips += 1;
                    return Ok(Some(pfn));
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

    /// Fault `page` of `proc` in; returns how it was served.
    pub fn fault(&mut self, page: u32, proc: ProcId, anon: bool, write: bool) -> Result<FaultKind> {
        let kind = self.mem.fault_kind(page, anon, write);
        let pfn = self
            .allocate(0)?
            .expect("order-0 allocation returns a frame or fails");
        self.mem.fault_in(pfn, page, proc, anon);
        self.policy.add_page(&mut self.mem, pfn);
        self.balance();
        Ok(kind)
    }

    /// An access to `page`: sets the referenced bits if resident, else faults it in.
    pub fn access(
        &mut self,
        page: u32,
        proc: ProcId,
        anon: bool,
        write: bool,
    ) -> Result<Option<FaultKind>> {
        if let Some(pfn) = self.mem.frame_of(page) {
            let f = self.mem.frame_mut(pfn);
            if f.accessed {
                f.referenced = true;
            }
            f.accessed = true;
            if write && !anon {
                self.dirtied(pfn);
            }
            return Ok(None);
        }
        let kind = self.fault(page, proc, anon, write)?;
        if write && !anon {
            if let Some(pfn) = self.mem.frame_of(page) {
                self.dirtied(pfn);
            }
        }
        Ok(Some(kind))
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
            let page = self.mem.frame(oldest).page;
            if self.mem.write_back(oldest, page) {
                self.policy.rotate_reclaimable(&mut self.mem, oldest);
            }
        }
    }
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let rank = ((p / 100.0) * sorted.len() as f64).ceil().max(1.0) as usize;
    sorted[rank.min(sorted.len()) - 1]
}

/// Replay `trace` under `config`. Deterministic.
pub fn run(config: &ReclaimConfig, trace: &Trace) -> Result<ReclaimResult> {
    let pages = trace.tables.pages.len();
    let procs = trace.tables.processes.len();
    let mut m = Machine::new(config, pages, procs)?;
    let driver: Vec<bool> = trace
        .tables
        .processes
        .iter()
        .map(|p| !config.high_order.process.is_empty() && p.name == config.high_order.process)
        .collect();
    let mut per_process: Vec<ProcessFaults> = trace
        .tables
        .processes
        .iter()
        .map(|p| ProcessFaults {
            name: p.name.clone(),
            ..Default::default()
        })
        .collect();
    let mut interactive = ProcessFaults::default();
    let mut interaction_faults: Vec<u64> = Vec::new();
    let mut accesses = 0u64;
    let mut driver_faults = 0u64;
    let mut held: VecDeque<u32> = VecDeque::new();
    let (mut high_order_allocs, mut high_order_failures) = (0u64, 0u64);
    let order = config.high_order.order;
    // Anonymous pages of each process, to free them when it exits.
    let mut anon_pages_of: Vec<Vec<u32>> = vec![Vec::new(); procs];

    for (index, e) in trace.events.iter().enumerate() {
        let proc = e.proc();
        if proc as usize >= procs {
            return Err(Error::config(
                "reclaim",
                format!("event {index}: process id {proc} but the trace has {procs} processes"),
            ));
        }
        match e.kind() {
            EventKind::Input => {
                m.set_input(proc);
                interaction_faults.push(0);
            }
            EventKind::Importance => {
                if e.oom_score_adj() == ADJ_FOREGROUND {
                    m.set_foreground(proc);
                }
            }
            EventKind::Exit => {
                for page in std::mem::take(&mut anon_pages_of[proc as usize]) {
                    if m.mem.frame_of(page).map(|f| m.mem.frame(f).owner) == Some(proc)
                        || m.mem.is_swapped(page)
                    {
                        m.mem.discard(page);
                    }
                }
            }
            EventKind::Start | EventKind::SwapOut | EventKind::SwapIn => {}
            EventKind::Access => {
                let page = e.page();
                let Some(key) = trace.tables.pages.get(page as usize) else {
                    return Err(Error::config(
                        "reclaim",
                        format!("event {index}: page id {page} but the trace has {pages} pages"),
                    ));
                };
                accesses += 1;
                let anon = key.kind == PageKind::Anon;
                let Some(kind) = m.access(page, proc, anon, e.is_write())? else {
                    continue;
                };
                if anon && kind == FaultKind::AnonFirst {
                    anon_pages_of[proc as usize].push(page);
                }
                per_process[proc as usize].count(kind);
                if m.tasks.interactive == Some(proc) {
                    if let Some(n) = interaction_faults.last_mut() {
                        interactive.count(kind);
                        if kind.is_major() {
                            *n += 1;
                        }
                    }
                }
                if driver[proc as usize] {
                    driver_faults += 1;
                    if driver_faults.is_multiple_of(config.high_order.every_faults as u64) {
                        match m.allocate(order)? {
                            Some(pfn) => {
                                m.mem.allocate_unmovable(pfn, order);
                                high_order_allocs += 1;
                                held.push_back(pfn);
                                if held.len() > config.high_order.held_blocks {
                                    let old = held.pop_front().expect("non-empty");
                                    m.mem.free_unmovable(old, order);
                                }
                                m.balance();
                            }
                            None => high_order_failures += 1,
                        }
                    }
                }
            }
        }
    }
    let mut rts: Vec<f64> = interaction_faults
        .iter()
        .map(|&n| config.execution_ms + n as f64 * config.fault_ms)
        .collect();
    let rt_mean_ms = if rts.is_empty() {
        f64::NAN
    } else {
        rts.iter().sum::<f64>() / rts.len() as f64
    };
    rts.sort_by(f64::total_cmp);
    let c = m.mem.counters.clone();
    interactive.name = "interactive task".into();
    Ok(ReclaimResult {
        policy: config.policy.clone(),
        memory_pages: config.memory_pages,
        watermarks: config.watermarks(),
        accesses,
        interactions: interaction_faults.len(),
        interactive,
        rt_mean_ms,
        rt_p50_ms: percentile(&rts, 50.0),
        rt_p95_ms: percentile(&rts, 95.0),
        major_faults: per_process.iter().map(|p| p.major()).sum(),
        kswapd_runs: m.kswapd_runs,
        kswapd_reclaimed: m.kswapd_reclaimed,
        direct_reclaims: m.direct_reclaims,
        direct_reclaimed: m.direct_reclaimed,
        fallbacks: m.fallbacks,
        high_order_allocs,
        high_order_failures,
        reserve_dips: m.reserve_dips,
        counters: CountersOut {
            scanned: c.scanned,
            reclaimed: c.reclaimed,
            swap_outs: c.swap_outs,
            file_drops: c.file_drops,
            writebacks: c.writebacks,
            dirty_kept: c.dirty_kept,
            activations: c.activations,
            deactivations: c.deactivations,
            lumpy_taken: c.lumpy_taken,
            lumpy_failed: c.lumpy_failed,
            protected_skips: c.protected_skips,
        },
        per_process,
    })
}

#[cfg(test)]
mod tests;
