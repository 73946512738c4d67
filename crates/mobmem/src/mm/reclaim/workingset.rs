//! The two-list LRU of Linux 4.x to 6.x without MGLRU, with workingset detection: the
//! reclaim a memory cgroup at its limit runs on the kernels of today. It follows Linux
//! 6.18 `mm/vmscan.c` (`shrink_lruvec`, `get_scan_count`, `prepare_scan_control`,
//! `shrink_active_list`, `shrink_inactive_list`, `folio_check_references`,
//! `inactive_is_low`, `lru_note_cost`), `mm/workingset.c` (`workingset_eviction`,
//! `workingset_refault`, `workingset_test_recent`, `workingset_age_nonresident`) and
//! `mm/swap.c` (`folio_mark_accessed`).
//!
//! Lists and references:
//! - new pages, file and anonymous (since 5.9), start at the inactive head; a page
//!   whose shadow entry says it refaulted within the workingset starts active;
//! - a file page is read through `read()` (no mapping): its first access sets
//!   `PG_referenced`, a second one on the inactive list activates it at once
//!   (`folio_mark_accessed`); reclaim reclaims an unmapped inactive page whatever its
//!   `PG_referenced` (`folio_check_references` returns `PAGEREF_RECLAIM_CLEAN`);
//! - an anonymous page is mapped: when reclaim meets it young on the inactive list
//!   (its accessed bit, which the fault that brought it in sets), it gets
//!   `PG_referenced` and another round there; young again with `PG_referenced`, it is
//!   activated (`folio_check_references`, `FOLIOREF_KEEP` then `FOLIOREF_ACTIVATE`);
//! - `shrink_active_list` deactivates every page it takes, referenced or not (only
//!   executable file pages rotate, and a trace does not say which those are), and
//!   marks it `PG_workingset`; the young bits of anonymous pages are cleared,
//!   `PG_referenced` of file pages stays.
//!
//! Workingset detection: every eviction and activation ages the cgroup's
//! `nonresident_age` by one page; an evicted page leaves a shadow entry with the age at
//! its eviction and its `PG_workingset`. A page faulted back in with a shadow is a
//! refault; its refault distance (age now - age at eviction) is compared with the
//! workingset size: active file pages, plus inactive file pages for an anonymous page,
//! plus with swap free the active anonymous pages and, for a file page, the inactive
//! anonymous ones. At most that distance the page starts active (`workingset_activate`)
//! and, if it was active before its eviction, counts as restored and adds the cost of
//! one I/O to its type's reclaim cost.
//!
//! Balance (`get_scan_count`): file only without free swap or at swappiness 0 (a
//! cgroup's reclaim); both lists equally at priority 0; file only in cache-trim mode
//! (plenty of inactive file pages and no file refault activation since the last reclaim
//! call); otherwise in proportion to swappiness and the recent reclaim cost of each type
//! (I/O of 32 a page written, 1 a page put back; halved once the costs exceed a
//! quarter of the LRU pages). An active list is scanned only while its inactive list is
//! low (inactive * ratio < active, ratio = isqrt(10 * GiB of both lists), at least 1)
//! or after a refault activation of its type, else the whole reclaim is retried with
//! deactivation forced when it freed nothing.
//!
//! Statistics: the heuristics (inactive-list checks, cache-trim mode, the refault
//! test's workingset size, the activation counts) read the cgroup's statistics through
//! a rate-limited flush, so they can be up to a flush period old; `stats_flush_ms`
//! models the periodic flush, `stats_flush_at_ns` flushes observed in a capture (see
//! [`Flushed`]). The scan counts and reclaim costs read
//! exact values.
//!
//! Left out: global reclaim's tiny-file rule (`file_is_tiny`), the swap cache (a
//! swapped-in page gives its slot back at once), the shadow shrinker (shadow entries
//! are never lost), lumpy reclaim (6.x has none: compaction makes high-order blocks;
//! a high-order request reclaims order-0 pages), writeback throttling.

use super::lists::{ListId, LruLists, NO_LIST};
use super::lru::{
    active_of, inactive_of, scan_batches, ACTIVE_ANON, ACTIVE_FILE, ANON, FILE, INACTIVE_ANON,
    INACTIVE_FILE,
};
use super::policy::{ReclaimPolicy, ShrinkRequest, DEF_PRIORITY, SWAP_CLUSTER_MAX};
use super::ReclaimConfig;
use crate::core::memory::Memory;
use crate::core::pages::PageFlags;
use crate::trace::PageId;

/// `MAX_SWAPPINESS`.
const MAX_SWAPPINESS: u64 = 200;

/// The workingset counters of a cgroup's `memory.stat`, by type ([anon, file]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct WorkingsetStats {
    /// `workingset_refault_anon`, `workingset_refault_file`: faults on pages with a
    /// shadow entry.
    pub refault: [u64; 2],
    /// `workingset_activate_*`: refaults within the workingset size, started active.
    pub activate: [u64; 2],
    /// `workingset_restore_*`: activated refaults of pages active before eviction.
    pub restore: [u64; 2],
    /// `pgactivate`-like: pages moved to an active list by reclaim or an access.
    pub activations: u64,
}

/// A shadow entry: the eviction age and whether the page was `PG_workingset`.
#[derive(Debug, Clone, Copy)]
struct Shadow {
    age: u64,
    workingset: bool,
}

pub struct WorkingsetLru {
    swappiness: u64,
    /// `lruvec->anon_cost`, `lruvec->file_cost`.
    cost: [u64; 2],
    /// `lruvec->nonresident_age`.
    nonresident_age: u64,
    /// Shadow entry per page id, if the page was evicted and has not come back.
    shadows: Vec<Option<Shadow>>,
    /// `workingset_activate_*` at the end of the last reclaim call
    /// (`snapshot_refaults`).
    activate_snapshot: [u64; 2],
    stats: WorkingsetStats,
    /// The cgroup statistics as the heuristics read them; see [`Flushed`].
    flushed: Flushed,
    lists: LruLists,
    /// `PG_workingset` of each frame's page: it was on the active list before it was
    /// deactivated.
    workingset: Vec<bool>,
    /// `PG_referenced` of each frame's mapped (anonymous) page, which only reclaim
    /// sets.
    mapped_referenced: Vec<bool>,
}

/// A memory cgroup's statistics as of their last flush. Reclaim's heuristics read them
/// through a rate-limited flush (`mem_cgroup_flush_stats_ratelimited` in
/// `prepare_scan_control` and `workingset_test_recent`), so between the periodic
/// flushes (every 2 s, `FLUSH_TIME` in mm/memcontrol.c) they see old list sizes and
/// activation counts; the scan counts read the exact list sizes. With no period the
/// heuristics read exact values.
#[derive(Debug, Clone, Default)]
struct Flushed {
    period_ns: u64,
    /// Flush times given instead of a period, ascending, and the next one's index.
    at_ns: Vec<u64>,
    next_at: usize,
    /// The next flush; None before the first event (the statistics are taken as
    /// exact, here empty, when the replay starts).
    next_ns: Option<u64>,
    lists: [usize; 4],
    activate: [u64; 2],
}

/// What one reclaim call decided up front (`prepare_scan_control`).
#[derive(Debug, Clone, Copy, Default)]
struct ScanControl {
    may_deactivate: [bool; 2],
    skipped_deactivate: bool,
    force_deactivate: bool,
}

impl WorkingsetLru {
    pub fn new(config: &ReclaimConfig) -> Self {
        WorkingsetLru {
            swappiness: config.swappiness as u64,
            cost: [0; 2],
            nonresident_age: 0,
            shadows: Vec::new(),
            activate_snapshot: [0; 2],
            stats: WorkingsetStats::default(),
            flushed: Flushed {
                period_ns: config.stats_flush_ms.saturating_mul(1_000_000),
                at_ns: {
                    let mut at = config.stats_flush_at_ns.clone();
                    at.sort_unstable();
                    at
                },
                ..Flushed::default()
            },
            lists: LruLists::new(config.memory_pages),
            workingset: vec![false; config.memory_pages],
            mapped_referenced: vec![false; config.memory_pages],
        }
    }

    /// Whether the heuristics read flushed statistics rather than exact ones.
    fn stale(&self) -> bool {
        self.flushed.period_ns > 0 || !self.flushed.at_ns.is_empty()
    }

    /// The list sizes the heuristics see.
    fn lists_seen(&self) -> [usize; 4] {
        if !self.stale() {
            [0, 1, 2, 3 as ListId].map(|l| self.lists.len(l))
        } else {
            self.flushed.lists
        }
    }

    /// The `workingset_activate_*` counts the heuristics see.
    fn activate_seen(&self) -> [u64; 2] {
        if !self.stale() {
            self.stats.activate
        } else {
            self.flushed.activate
        }
    }

    fn take_shadow(&mut self, page: PageId) -> Option<Shadow> {
        self.shadows.get_mut(page as usize).and_then(Option::take)
    }

    fn store_shadow(&mut self, page: PageId, shadow: Shadow) {
        let i = page as usize;
        if self.shadows.len() <= i {
            self.shadows.resize(i + 1, None);
        }
        self.shadows[i] = Some(shadow);
    }

    /// `inactive_is_low` on the list sizes `lists`.
    fn inactive_is_low(lists: &[usize; 4], file: usize) -> bool {
        let inactive = lists[inactive_of(file) as usize];
        let active = lists[active_of(file) as usize];
        let gib = (inactive + active) >> (30 - 12);
        let ratio = if gib == 0 {
            1
        } else {
            ((10 * gib) as f64).sqrt() as usize
        };
        inactive * ratio < active
    }

    /// The workingset size a refault of type `file` is measured against, from the
    /// list sizes `lists`.
    fn workingset_size(lists: &[usize; 4], swap_free: bool, file: usize) -> u64 {
        let list = |l: ListId| lists[l as usize];
        let mut size = list(ACTIVE_FILE);
        if file == ANON {
            size += list(INACTIVE_FILE);
        }
        if swap_free {
            size += list(ACTIVE_ANON);
            if file == FILE {
                size += list(INACTIVE_ANON);
            }
        }
        size as u64
    }

    /// `lru_note_cost`: `io` pages written (or read back), `rotated` put back.
    /// The decay compares with the LRU size as the statistics say (flushed, like the
    /// heuristics' reads).
    fn note_cost(&mut self, file: usize, io: u64, rotated: u64) {
        let cost = io * SWAP_CLUSTER_MAX as u64 + rotated;
        if cost == 0 {
            return;
        }
        self.cost[file] += cost;
        let lru_pages: usize = self.lists_seen().iter().sum();
        if self.cost[ANON] + self.cost[FILE] > (lru_pages / 4) as u64 {
            self.cost[ANON] /= 2;
            self.cost[FILE] /= 2;
        }
    }

    /// Move the (unlinked) page to the active head; activations age the nonresident
    /// clock (`move_folios_to_lru`, `workingset_activation`).
    fn activate(&mut self, mem: &mut Memory, pfn: u32, file: usize) {
        mem.counters.activations += 1;
        self.stats.activations += 1;
        self.nonresident_age += 1;
        self.lists.push_head(active_of(file), pfn);
    }

    /// `prepare_scan_control` at `priority`: whether each active list may be
    /// deactivated, and cache-trim mode.
    fn prepare(&self, sc: &mut ScanControl, priority: u32) -> bool {
        let lists = self.lists_seen();
        if sc.force_deactivate {
            sc.may_deactivate = [true; 2];
        } else {
            let activate = self.activate_seen();
            for t in [ANON, FILE] {
                sc.may_deactivate[t] =
                    activate[t] != self.activate_snapshot[t] || Self::inactive_is_low(&lists, t);
            }
        }
        (lists[INACTIVE_FILE as usize] >> priority) > 0 && !sc.may_deactivate[FILE]
    }

    /// Pages to scan per list at `priority` (`get_scan_count`).
    fn scan_count(&self, mem: &Memory, priority: u32, cache_trim: bool) -> [usize; 4] {
        enum Balance {
            Equal,
            Fract(u64, u64),
            FileOnly,
        }
        let balance = if mem.swap_free() == 0 || self.swappiness == 0 {
            Balance::FileOnly
        } else if priority == 0 {
            Balance::Equal
        } else if cache_trim {
            Balance::FileOnly
        } else {
            let total = self.cost[ANON] + self.cost[FILE];
            let anon_cost = total + self.cost[ANON];
            let file_cost = total + self.cost[FILE];
            let total = anon_cost + file_cost;
            let ap = self.swappiness * (total + 1) / (anon_cost + 1);
            let fp = (MAX_SWAPPINESS - self.swappiness) * (total + 1) / (file_cost + 1);
            Balance::Fract(ap, fp)
        };
        let mut nr = [0; 4];
        for list in 0..4 as ListId {
            let file = (list / 2) as usize;
            let scan = (self.lists.len(list) >> priority) as u64;
            nr[list as usize] = match balance {
                Balance::Equal => scan,
                Balance::Fract(ap, fp) => {
                    let fraction = if file == FILE { fp } else { ap };
                    scan * fraction / (ap + fp).max(1)
                }
                Balance::FileOnly => {
                    if file == FILE {
                        scan
                    } else {
                        0
                    }
                }
            } as usize;
        }
        nr
    }

    /// `shrink_active_list`: deactivate up to `nr` pages from the active tail.
    fn shrink_active(&mut self, mem: &mut Memory, nr: usize, file: usize) {
        let taken = self.lists.take_tail(active_of(file), nr);
        mem.counters.scanned += taken.len() as u64;
        for pfn in taken {
            if mem.frame(pfn).is_anon() {
                // folio_referenced clears the young bits; anonymous pages are
                // deactivated whether or not they were young.
                mem.set_frame_flags(pfn, PageFlags::YOUNG | PageFlags::REFERENCED, false);
            }
            self.workingset[pfn as usize] = true;
            mem.counters.deactivations += 1;
            self.lists.push_head(inactive_of(file), pfn);
        }
    }

    /// `shrink_inactive_list` + `shrink_folio_list`: reclaim or put back up to `nr`
    /// pages from the inactive tail. Returns the pages reclaimed.
    fn shrink_inactive(&mut self, mem: &mut Memory, nr: usize, file: usize) -> usize {
        let isolated = self.lists.take_tail(inactive_of(file), nr);
        let scanned = isolated.len() as u64;
        mem.counters.scanned += scanned;
        let (mut reclaimed, mut written) = (0u64, 0u64);
        for pfn in isolated {
            let f = mem.frame(pfn);
            if f.is_anon() {
                // A young mapping: a first time, PG_referenced and another round on the
                // inactive list; young again with it set, activation.
                let young = mem.take_frame_flag(pfn, PageFlags::YOUNG);
                mem.set_frame_flags(pfn, PageFlags::REFERENCED, false);
                let referenced =
                    std::mem::replace(&mut self.mapped_referenced[pfn as usize], young);
                if young {
                    if referenced {
                        self.activate(mem, pfn, file);
                    } else {
                        self.lists.push_head(inactive_of(file), pfn);
                    }
                    continue;
                }
                if mem.swap_free() == 0 {
                    self.activate(mem, pfn, file);
                    continue;
                }
            }
            let shadow = Shadow {
                age: self.nonresident_age,
                workingset: self.workingset[pfn as usize],
            };
            if mem.evict_or_keep(pfn) {
                self.store_shadow(f.page, shadow);
                self.nonresident_age += 1;
                reclaimed += 1;
                if f.is_anon() {
                    written += 1;
                }
            } else {
                // A dirty file page kept for the flusher: 6.x activates it (it is
                // not worth scanning again before its writeback ends).
                self.activate(mem, pfn, file);
            }
        }
        self.note_cost(file, written, scanned - reclaimed);
        reclaimed as usize
    }

    /// `shrink_lruvec` at `priority`; `reclaimed` so far by this call.
    fn shrink_lruvec(
        &mut self,
        mem: &mut Memory,
        priority: u32,
        sc: &mut ScanControl,
        req: &ShrinkRequest,
        reclaimed_before: usize,
    ) -> usize {
        let cache_trim = self.prepare(sc, priority);
        let targets = self.scan_count(mem, priority, cache_trim);
        let mut nr = targets;
        let mut reclaimed = 0;
        let (ia, aa, inf, af) = (
            INACTIVE_ANON as usize,
            ACTIVE_ANON as usize,
            INACTIVE_FILE as usize,
            ACTIVE_FILE as usize,
        );
        while nr[ia] + nr[af] + nr[inf] > 0 {
            scan_batches(&mut nr, |file, n, active| {
                if !active {
                    reclaimed += self.shrink_inactive(mem, n, file);
                } else if sc.may_deactivate[file] {
                    self.shrink_active(mem, n, file);
                } else {
                    sc.skipped_deactivate = true;
                }
                false
            });
            if !req.done(mem, reclaimed_before + reclaimed) {
                continue;
            }
            // Enough: stop scanning the type with less left, and scan the other only
            // as far as keeps the proportion asked for.
            let nr_file = nr[inf] + nr[af];
            let nr_anon = nr[ia] + nr[aa];
            if nr_file == 0 || nr_anon == 0 {
                break;
            }
            let (stop, other, percentage) = if nr_file > nr_anon {
                (ANON, FILE, nr_anon * 100 / (targets[ia] + targets[aa] + 1))
            } else {
                (FILE, ANON, nr_file * 100 / (targets[inf] + targets[af] + 1))
            };
            nr[inactive_of(stop) as usize] = 0;
            nr[active_of(stop) as usize] = 0;
            for list in [inactive_of(other), active_of(other)] {
                let l = list as usize;
                let scanned = targets[l] - nr[l];
                nr[l] = targets[l] * (100 - percentage) / 100;
                nr[l] -= nr[l].min(scanned);
            }
        }
        if mem.swap_free() > 0 && Self::inactive_is_low(&self.lists_seen(), ANON) {
            self.shrink_active(mem, SWAP_CLUSTER_MAX, ANON);
        }
        reclaimed
    }
}

impl ReclaimPolicy for WorkingsetLru {
    fn lists(&self) -> &LruLists {
        &self.lists
    }

    fn lists_mut(&mut self) -> &mut LruLists {
        &mut self.lists
    }

    /// A page faulted in: a refault if it left a shadow entry (`workingset_refault`).
    fn add_page(&mut self, mem: &mut Memory, pfn: u32) {
        debug_assert_eq!(self.lists.list_of(pfn), NO_LIST);
        // The fault is an access: a young mapping, or PG_referenced from the read.
        mem.set_frame_flags(pfn, PageFlags::YOUNG, true);
        self.workingset[pfn as usize] = false;
        self.mapped_referenced[pfn as usize] = false;
        let f = mem.frame(pfn);
        let (page, anon) = (f.page, f.is_anon());
        let file = if anon { ANON } else { FILE };
        let Some(shadow) = self.take_shadow(page) else {
            self.lists.push_head(inactive_of(file), pfn);
            return;
        };
        self.stats.refault[file] += 1;
        let distance = self.nonresident_age - shadow.age;
        let lists = self.lists_seen();
        if distance > Self::workingset_size(&lists, mem.swap_free() > 0, file) {
            self.lists.push_head(inactive_of(file), pfn);
            return;
        }
        self.stats.activate[file] += 1;
        self.nonresident_age += 1;
        if shadow.workingset {
            self.workingset[pfn as usize] = true;
            self.stats.restore[file] += 1;
            self.note_cost(file, 1, 0);
        }
        self.lists.push_head(active_of(file), pfn);
    }

    /// `folio_mark_accessed` on a file page: the second access on the inactive list
    /// activates it. (A first access set `accessed`, standing for `PG_referenced`; the
    /// second set `referenced`.)
    fn accessed(&mut self, mem: &mut Memory, pfn: u32) {
        let f = mem.frame(pfn);
        if f.is_anon() || self.lists.list_of(pfn) != INACTIVE_FILE || !f.is_referenced() {
            return;
        }
        self.lists.unlink(pfn);
        mem.set_frame_flags(pfn, PageFlags::YOUNG | PageFlags::REFERENCED, false);
        self.activate(mem, pfn, FILE);
    }

    /// `do_try_to_free_pages` for one cgroup: priorities 12 down to 0 until the goal is
    /// met, retried once with deactivation forced when it freed nothing because active
    /// lists were left alone.
    fn shrink(&mut self, mem: &mut Memory, req: &ShrinkRequest) -> usize {
        let mut sc = ScanControl::default();
        let mut reclaimed = 0;
        loop {
            for priority in (0..=DEF_PRIORITY).rev() {
                reclaimed += self.shrink_lruvec(mem, priority, &mut sc, req, reclaimed);
                if req.done(mem, reclaimed) {
                    break;
                }
            }
            if reclaimed > 0 || !sc.skipped_deactivate || sc.force_deactivate {
                break;
            }
            sc.force_deactivate = true;
            sc.skipped_deactivate = false;
        }
        self.activate_snapshot = self.activate_seen();
        reclaimed
    }

    /// The flushes of the cgroup's statistics: at the times given, else periodic.
    fn clock(&mut self, _mem: &Memory, now_ns: u64) {
        let f = &mut self.flushed;
        if !f.at_ns.is_empty() {
            let mut due = false;
            while f.at_ns.get(f.next_at).is_some_and(|&t| t <= now_ns) {
                f.next_at += 1;
                due = true;
            }
            if due {
                f.lists = [0, 1, 2, 3 as ListId].map(|l| self.lists.len(l));
                f.activate = self.stats.activate;
            }
            return;
        }
        if f.period_ns == 0 {
            return;
        }
        let next = *f.next_ns.get_or_insert(now_ns.saturating_add(f.period_ns));
        if now_ns >= next {
            f.lists = [0, 1, 2, 3 as ListId].map(|l| self.lists.len(l));
            f.activate = self.stats.activate;
            let periods = (now_ns - next) / f.period_ns + 1;
            f.next_ns = Some(next.saturating_add(periods.saturating_mul(f.period_ns)));
        }
    }

    /// `folio_rotate_reclaimable`: to the inactive tail, unless activated since.
    fn rotate_reclaimable(&mut self, _mem: &mut Memory, pfn: u32) {
        if self.lists.list_of(pfn) == INACTIVE_FILE {
            self.lists.move_to_tail(pfn, INACTIVE_FILE);
        }
    }

    fn workingset_stats(&self) -> Option<WorkingsetStats> {
        Some(self.stats)
    }
}

#[cfg(test)]
mod tests {
    use super::super::policy::ShrinkRequest;
    use super::*;
    use crate::core::memory::Memory;

    fn config(swappiness: u32) -> ReclaimConfig {
        ReclaimConfig {
            swappiness,
            ..ReclaimConfig::default()
        }
    }

    /// `n` file pages 0..n in frames 0..n, added in order (frame 0 at the tail).
    fn file_pages(lru: &mut WorkingsetLru, n: u32, frames: usize) -> Memory {
        let mut mem = Memory::new(frames, &[], 4 * frames, 1, 0);
        for pfn in 0..n {
            mem.fault_in(pfn, pfn, 0, false);
            lru.add_page(&mut mem, pfn);
        }
        mem
    }

    #[test]
    fn a_second_access_activates_a_file_page_at_once() {
        let mut lru = WorkingsetLru::new(&config(60));
        let mut mem = file_pages(&mut lru, 2, 8);
        // The fault's read set PG_referenced (accessed); an access as Machine::access
        // makes it: accessed already set, so referenced.
        mem.set_frame_flags(0, PageFlags::REFERENCED, true);
        lru.accessed(&mut mem, 0);
        assert_eq!(lru.lists.list_of(0), ACTIVE_FILE);
        assert_eq!(lru.lists.frames(INACTIVE_FILE), vec![1]);
        assert_eq!(lru.nonresident_age, 1, "an activation ages the clock");
    }

    #[test]
    fn refault_within_the_workingset_starts_active_and_beyond_it_inactive() {
        let mut lru = WorkingsetLru::new(&config(60));
        let mut mem = file_pages(&mut lru, 6, 8);
        // Pages 4 and 5 active (2 pages of workingset).
        for pfn in [4, 5] {
            mem.set_frame_flags(pfn, PageFlags::REFERENCED, true);
            lru.accessed(&mut mem, pfn);
        }
        assert_eq!(lru.nonresident_age, 2);
        // Reclaim 3 from the inactive tail: pages 0, 1, 2 at ages 2, 3, 4.
        let got = lru.shrink_inactive(&mut mem, 3, FILE);
        assert_eq!(got, 3);
        assert_eq!(lru.nonresident_age, 5);
        // `page` faulted back into frame `pfn`: the list it joins, then the file refaults
        // and activations so far.
        let refault = |mem: &mut Memory, lru: &mut WorkingsetLru, pfn: u32, page: u32| {
            mem.fault_in(pfn, page, 0, false);
            lru.add_page(mem, pfn);
            let stats = &lru.stats;
            (
                lru.lists.list_of(pfn),
                stats.refault[FILE],
                stats.activate[FILE],
            )
        };
        // Page 2 comes back: distance 5 - 4 = 1 <= 2 active file pages: active.
        assert_eq!(refault(&mut mem, &mut lru, 0, 2), (ACTIVE_FILE, 1, 1));
        assert_eq!(lru.stats.restore[FILE], 0, "it was never active");
        assert_eq!(lru.nonresident_age, 6);
        // Page 0: distance 6 - 2 = 4 > 3 active file pages: inactive, refault only.
        assert_eq!(refault(&mut mem, &mut lru, 1, 0), (INACTIVE_FILE, 2, 1));
    }

    #[test]
    fn active_pages_are_deactivated_referenced_or_not_and_marked_workingset() {
        let mut lru = WorkingsetLru::new(&config(60));
        let mut mem = file_pages(&mut lru, 3, 8);
        for pfn in 0..3 {
            mem.set_frame_flags(pfn, PageFlags::REFERENCED, true);
            lru.accessed(&mut mem, pfn);
        }
        mem.set_frame_flags(1, PageFlags::YOUNG, true);
        lru.shrink_active(&mut mem, 2, FILE);
        assert_eq!(lru.lists.frames(INACTIVE_FILE), vec![1, 0]);
        assert_eq!(lru.lists.frames(ACTIVE_FILE), vec![2]);
        assert!(lru.workingset[0] && lru.workingset[1]);
        assert!(!lru.workingset[2]);
        assert!(
            mem.frame(1).is_young(),
            "PG_referenced survives deactivation"
        );
        // Evicted and refaulted soon, a workingset page is restored.
        let got = lru.shrink_inactive(&mut mem, 1, FILE);
        assert_eq!(got, 1);
        mem.fault_in(0, 0, 0, false);
        lru.add_page(&mut mem, 0);
        assert_eq!(lru.stats.restore[FILE], 1);
        // One I/O (32), halved at once: the costs exceed a quarter of the 3 LRU pages.
        assert_eq!(lru.cost[FILE], SWAP_CLUSTER_MAX as u64 / 2);
    }

    #[test]
    fn young_anonymous_pages_get_a_second_round_then_are_activated_or_swapped() {
        let mut lru = WorkingsetLru::new(&config(60));
        let mut mem = Memory::new(8, &[], 8, 1, 8);
        for pfn in 0..2 {
            mem.fault_in(pfn, pfn, 0, true);
            lru.add_page(&mut mem, pfn);
        }
        // Young from their faults: kept, with PG_referenced.
        assert_eq!(lru.shrink_inactive(&mut mem, 2, ANON), 0);
        assert_eq!(lru.lists.len(INACTIVE_ANON), 2);
        assert!(lru.mapped_referenced[0] && !mem.frame(0).is_young());
        // Page 1 touched again: activated; page 0 not: swapped out.
        mem.set_frame_flags(1, PageFlags::YOUNG, true);
        assert_eq!(lru.shrink_inactive(&mut mem, 2, ANON), 1);
        assert!(mem.is_swapped(0));
        assert_eq!(lru.lists.frames(ACTIVE_ANON), vec![1]);
        assert_eq!(mem.counters.swap_outs, 1);
    }

    #[test]
    fn heuristics_read_the_statistics_of_the_last_flush() {
        let mut lru = WorkingsetLru::new(&ReclaimConfig {
            stats_flush_ms: 2000,
            ..config(60)
        });
        let mut mem = file_pages(&mut lru, 4, 8);
        lru.clock(&mem, 5);
        for pfn in [2, 3] {
            mem.set_frame_flags(pfn, PageFlags::REFERENCED, true);
            lru.accessed(&mut mem, pfn);
        }
        // Two active, two inactive, but the statistics still say empty lists.
        let mut sc = ScanControl::default();
        lru.prepare(&mut sc, 0);
        assert_eq!(sc.may_deactivate, [false, false]);
        assert_eq!(lru.lists_seen(), [0; 4]);
        // A flush 2 s after the first event; one active page more since the flush.
        lru.clock(&mem, 2_000_000_005);
        mem.set_frame_flags(1, PageFlags::REFERENCED, true);
        lru.accessed(&mut mem, 1);
        assert_eq!(lru.lists_seen(), [0, 0, 2, 2]);
        lru.prepare(&mut sc, 0);
        assert_eq!(
            sc.may_deactivate,
            [false, false],
            "2 inactive, 2 active as flushed"
        );
        lru.clock(&mem, 4_000_000_005);
        lru.prepare(&mut sc, 0);
        assert_eq!(sc.may_deactivate, [false, true]);
    }

    #[test]
    fn without_swap_only_file_pages_are_scanned() {
        let mut lru = WorkingsetLru::new(&config(100));
        let mut mem = Memory::new(64, &[], 64, 1, 0);
        for pfn in 0..32 {
            mem.fault_in(pfn, pfn, 0, pfn % 2 == 0);
            lru.lists.push_head(
                if pfn % 2 == 0 {
                    INACTIVE_ANON
                } else {
                    INACTIVE_FILE
                },
                pfn,
            );
        }
        let nr = lru.scan_count(&mem, 0, false);
        assert_eq!(nr[INACTIVE_ANON as usize], 0);
        assert_eq!(nr[INACTIVE_FILE as usize], 16);
    }

    #[test]
    fn shrink_meets_a_reclaim_goal_on_file_pages() {
        let mut lru = WorkingsetLru::new(&config(60));
        let mut mem = file_pages(&mut lru, 64, 64);
        let got = lru.shrink(&mut mem, &ShrinkRequest::reclaim(32));
        assert!(got >= 32, "reclaimed {got}");
        mem.check().unwrap();
    }
}
