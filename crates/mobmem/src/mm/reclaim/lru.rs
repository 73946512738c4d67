//! The Linux 3.4 two-list LRU (mm/vmscan.c: `shrink_zone`, `get_scan_count`,
//! `shrink_active_list`, `shrink_inactive_list`, `shrink_page_list`,
//! `page_check_references`, lumpy isolation in `isolate_lru_pages`), with the
//! protections of `fmp` and `memcg-low` as hooks in it.
//!
//! Per page type (anon, file) an inactive and an active list. A reclaim pass at
//! priority p (12 down to 0) scans `len >> p` pages of each list, split between anon
//! and file by swappiness and the recent rotated/scanned ratio of each type, in batches
//! of 32 (`SWAP_CLUSTER_MAX`). The active list of a type is scanned only while its
//! inactive list is "low" (file: inactive < active; anon: inactive * ratio < active,
//! ratio = isqrt(10 * GiB of memory), at least 1).
//!
//! `page_check_references` at the inactive tail, with the accessed bit of the page's
//! mappings and `PG_referenced`:
//! - accessed, anonymous: activate;
//! - accessed, file: set `PG_referenced`; if it was already set (a second reference)
//!   activate, else keep it another round at the inactive head;
//! - not accessed: reclaim (anonymous pages need a free swap slot, else they are
//!   activated, as when `add_to_swap` fails).
//!
//! An access to a resident page sets the accessed bit, and `PG_referenced` when the
//! accessed bit was already set since the last scan (a second reference), so "a page
//! referenced twice moves to the active list at the next scan". Under lumpy reclaim
//! references are ignored (3.4 returns `PAGEREF_RECLAIM` in lumpy mode).
//!
//! Protection (what `fmp` and `memcg-low` add):
//! - FMP's IPP: in `shrink_page_list` a candidate owned by the interactive task is
//!   skipped, `PG_referenced` set and put on the active list; lumpy reclaim leaves the
//!   interactive task's pages out of the block (a protected tag page brings no block at
//!   all). The fallback (request flag `ignore_protection`) turns it off.
//! - memcg-low: the foreground app's pages are a cgroup with `memory.low`; while its
//!   resident pages are at most `low` its pages are passed over by the list scans (put
//!   back where they would be had they not been scanned: the head of their list, bits
//!   untouched), as the kernel skips a protected cgroup's own lists. Above `low` with
//!   `proportional`, a share low/usage of its candidates is still passed over
//!   (cgroup-v2's reclaim in proportion to the overage); without it, none. This model
//!   has one global LRU rather than per-cgroup lists, so passed-over pages are counted
//!   as scanned: an upper bound on the cost.

use super::lists::{ListId, LruLists, NO_LIST};
use super::policy::{
    isolate_lumpy_block, LumpyGating, LumpyUnmovable, ReclaimPolicy, ShrinkRequest, TaskView,
    DEF_PRIORITY, SWAP_CLUSTER_MAX,
};
use super::ReclaimConfig;
use crate::core::memory::Memory;
use crate::core::pages::PageFlags;

pub const INACTIVE_ANON: ListId = 0;
pub const ACTIVE_ANON: ListId = 1;
pub const INACTIVE_FILE: ListId = 2;
pub const ACTIVE_FILE: ListId = 3;

/// Indices of the anonymous and file halves of per-type arrays (`[anon, file]`).
pub(super) const ANON: usize = 0;
pub(super) const FILE: usize = 1;

/// The inactive list of a type ([`ANON`] or [`FILE`]).
pub(super) fn inactive_of(file: usize) -> ListId {
    (file * 2) as ListId
}
/// The active list of a type.
pub(super) fn active_of(file: usize) -> ListId {
    (file * 2 + 1) as ListId
}

/// One round of the kernel's scan of the four lists (`shrink_zone` in 3.4,
/// `shrink_lruvec` since): each list with pages left to scan in `nr` gets a batch of up
/// to [`SWAP_CLUSTER_MAX`] of them, taken off `nr`: `batch(file, n, active)`, `file`
/// being [`ANON`] or [`FILE`]. Stops after a batch that returns `true` (the goal is
/// met) and says whether one did.
pub(super) fn scan_batches(
    nr: &mut [usize; 4],
    mut batch: impl FnMut(usize, usize, bool) -> bool,
) -> bool {
    for (list, left) in nr.iter_mut().enumerate() {
        let n = (*left).min(SWAP_CLUSTER_MAX);
        if n == 0 {
            continue;
        }
        *left -= n;
        if batch(list / 2, n, list % 2 == 1) {
            return true;
        }
    }
    false
}

/// Which pages a two-list policy protects.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Protection {
    None,
    /// FMP: the interactive task's pages.
    Interactive,
    /// `memory.low` of the foreground app.
    CgroupLow {
        low_pages: usize,
        proportional: bool,
    },
}

/// What a scan does with a protected candidate.
enum Verdict {
    Normal,
    /// FMP: set `PG_referenced`, put on the active list.
    Activate,
    /// memcg-low: put back unscanned.
    PassOver,
}

pub struct TwoListLru {
    protection: Protection,
    swappiness: u64,
    inactive_anon_ratio: usize,
    rotate_referenced_active: bool,
    new_anon_active: bool,
    lumpy_unmovable: LumpyUnmovable,
    lumpy_gating: LumpyGating,
    recent_scanned: [u64; 2],
    recent_rotated: [u64; 2],
    /// Bresenham accumulator of proportional memcg protection.
    pass_over_credit: f64,
    high_wmark: usize,
    lists: LruLists,
}

impl TwoListLru {
    pub fn new(config: &ReclaimConfig, protection: Protection) -> Self {
        let gib = (config.memory_pages * 4096) >> 30;
        TwoListLru {
            protection,
            swappiness: config.swappiness as u64,
            inactive_anon_ratio: if gib == 0 {
                1
            } else {
                ((10 * gib) as f64).sqrt() as usize
            },
            rotate_referenced_active: config.rotate_referenced_active,
            new_anon_active: config.new_anon_active,
            lumpy_unmovable: config.lumpy_unmovable,
            lumpy_gating: config.lumpy_gating,
            recent_scanned: [0; 2],
            recent_rotated: [0; 2],
            pass_over_credit: 0.0,
            high_wmark: config.watermarks().high_pages(),
            lists: LruLists::new(config.memory_pages),
        }
    }

    fn verdict(&mut self, mem: &Memory, pfn: u32, req: &ShrinkRequest) -> Verdict {
        if req.ignore_protection {
            return Verdict::Normal;
        }
        let owner = mem.owner_of_frame(pfn);
        match self.protection {
            Protection::None => Verdict::Normal,
            Protection::Interactive => {
                if req.tasks.interactive == Some(owner) {
                    Verdict::Activate
                } else {
                    Verdict::Normal
                }
            }
            Protection::CgroupLow {
                low_pages,
                proportional,
            } => {
                if req.tasks.foreground != Some(owner) {
                    return Verdict::Normal;
                }
                let usage = mem.resident_of(owner);
                if usage <= low_pages {
                    return Verdict::PassOver;
                }
                if !proportional {
                    return Verdict::Normal;
                }
                self.pass_over_credit += low_pages as f64 / usage as f64;
                if self.pass_over_credit >= 1.0 {
                    self.pass_over_credit -= 1.0;
                    Verdict::PassOver
                } else {
                    Verdict::Normal
                }
            }
        }
    }

    fn inactive_is_low(&self, file: usize) -> bool {
        let inactive = self.lists.len(inactive_of(file));
        let active = self.lists.len(active_of(file));
        if file == FILE {
            inactive < active
        } else {
            inactive * self.inactive_anon_ratio < active
        }
    }

    /// Pages to scan per list at `priority` (`get_scan_count`).
    fn scan_count(&mut self, mem: &Memory, priority: u32) -> [usize; 4] {
        let anon = self.lists.len(INACTIVE_ANON) + self.lists.len(ACTIVE_ANON);
        let file = self.lists.len(INACTIVE_FILE) + self.lists.len(ACTIVE_FILE);
        let (fa, ff) = if mem.swap_free() == 0 || anon == 0 {
            (0, 1)
        } else if file + mem.free() <= self.high_wmark {
            (1, 0)
        } else {
            // Halve the history once it is large, as the kernel ages it.
            for (t, len) in [(ANON, anon), (FILE, file)] {
                if self.recent_scanned[t] > (len / 4) as u64 {
                    self.recent_scanned[t] /= 2;
                    self.recent_rotated[t] /= 2;
                }
            }
            let ap = (self.swappiness + 1) * (self.recent_scanned[ANON] + 1)
                / (self.recent_rotated[ANON] + 1);
            let fp = (200 - self.swappiness + 1) * (self.recent_scanned[FILE] + 1)
                / (self.recent_rotated[FILE] + 1);
            (ap, fp)
        };
        let denominator = (fa + ff).max(1);
        let mut nr = [0; 4];
        for list in 0..4 as ListId {
            let fraction = if list < INACTIVE_FILE { fa } else { ff };
            // At priority 0 every list is scanned whole, unless swap is out (3.4).
            nr[list as usize] = if priority == 0 && mem.swap_free() > 0 {
                self.lists.len(list)
            } else {
                let scan = (self.lists.len(list) >> priority) as u64;
                (scan * fraction / denominator) as usize
            };
        }
        nr
    }

    /// `shrink_active_list`: move up to `nr` pages from the active tail to the inactive
    /// list; referenced ones rotate back when `rotate_referenced_active`.
    fn shrink_active(&mut self, mem: &mut Memory, nr: usize, file: usize, req: &ShrinkRequest) {
        let taken = self.lists.take_tail(active_of(file), nr);
        mem.counters.scanned += taken.len() as u64;
        self.recent_scanned[file] += taken.len() as u64;
        for pfn in taken {
            if matches!(self.protection, Protection::CgroupLow { .. })
                && matches!(self.verdict(mem, pfn, req), Verdict::PassOver)
            {
                mem.counters.protected_skips += 1;
                self.lists.push_head(active_of(file), pfn);
                continue;
            }
            if mem.take_frame_flag(pfn, PageFlags::YOUNG) {
                self.recent_rotated[file] += 1;
                if self.rotate_referenced_active {
                    self.lists.push_head(active_of(file), pfn);
                    continue;
                }
            }
            mem.counters.deactivations += 1;
            self.lists.push_head(inactive_of(file), pfn);
        }
    }

    /// `shrink_inactive_list` + `shrink_page_list`: isolate up to `nr` pages from the
    /// inactive tail (with their lumpy neighbours when the request is lumpy at this
    /// priority, see [`LumpyGating`]) and reclaim or put back each. Returns the pages
    /// reclaimed.
    fn shrink_inactive(
        &mut self,
        mem: &mut Memory,
        nr: usize,
        file: usize,
        priority: u32,
        req: &ShrinkRequest,
    ) -> usize {
        let lumpy = self.lumpy_gating.is_lumpy(req.order, priority);
        let mut isolated = Vec::with_capacity(nr);
        let mut tags = 0;
        while tags < nr {
            let Some(tag) = self.lists.tail(inactive_of(file)) else {
                break;
            };
            tags += 1;
            self.lists.unlink(tag);
            // Protection is decided for the tag before lumpy reclaim builds a block
            // around it: a protected tag is put back and brings no neighbours.
            let t = if mem.frame(tag).is_anon() { ANON } else { FILE };
            match self.verdict(mem, tag, req) {
                Verdict::Activate => {
                    mem.counters.protected_skips += 1;
                    mem.set_frame_flags(tag, PageFlags::REFERENCED, true);
                    self.activate(mem, tag, t);
                    continue;
                }
                Verdict::PassOver => {
                    mem.counters.protected_skips += 1;
                    self.lists.push_head(inactive_of(t), tag);
                    continue;
                }
                Verdict::Normal => {}
            }
            isolated.push(tag);
            if lumpy {
                let fmp = self.protection == Protection::Interactive && !req.ignore_protection;
                let interactive = req.tasks.interactive;
                let mut may_take =
                    |m: &Memory, pfn: u32| !(fmp && interactive == Some(m.owner_of_frame(pfn)));
                isolate_lumpy_block(
                    mem,
                    &mut self.lists,
                    tag,
                    req.order,
                    self.lumpy_unmovable,
                    &mut may_take,
                    &mut isolated,
                );
            }
        }
        mem.counters.scanned += tags as u64;
        self.recent_scanned[file] += tags as u64;
        let mut reclaimed = 0;
        for pfn in isolated {
            let f = mem.frame(pfn);
            let t = if f.is_anon() { ANON } else { FILE };
            let accessed = mem.take_frame_flag(pfn, PageFlags::YOUNG);
            let was_referenced = mem.take_frame_flag(pfn, PageFlags::REFERENCED);
            if !lumpy && accessed {
                if f.is_anon() || was_referenced {
                    self.activate(mem, pfn, t);
                } else {
                    mem.set_frame_flags(pfn, PageFlags::REFERENCED, true);
                    self.lists.push_head(inactive_of(t), pfn);
                }
                continue;
            }
            if f.is_anon() && mem.swap_free() == 0 {
                self.activate(mem, pfn, t);
                continue;
            }
            if mem.evict_or_keep(pfn) {
                reclaimed += 1;
            } else {
                // 3.4: `SetPageReclaim` and back to the inactive list; the flusher
                // writes it.
                self.lists.push_head(inactive_of(t), pfn);
            }
        }
        reclaimed
    }

    fn activate(&mut self, mem: &mut Memory, pfn: u32, t: usize) {
        self.recent_rotated[t] += 1;
        mem.counters.activations += 1;
        self.lists.push_head(active_of(t), pfn);
    }

    /// One `shrink_zone` pass at `priority`; stops early when the goal is met.
    fn shrink_zone(&mut self, mem: &mut Memory, priority: u32, req: &ShrinkRequest) -> usize {
        let mut nr = self.scan_count(mem, priority);
        let mut reclaimed = 0;
        while nr[INACTIVE_ANON as usize] + nr[ACTIVE_FILE as usize] + nr[INACTIVE_FILE as usize] > 0
        {
            let done = scan_batches(&mut nr, |file, n, active| {
                if active {
                    if self.inactive_is_low(file) {
                        self.shrink_active(mem, n, file, req);
                    }
                } else {
                    reclaimed += self.shrink_inactive(mem, n, file, priority, req);
                }
                req.done(mem, reclaimed)
            });
            if done {
                return reclaimed;
            }
        }
        if mem.swap_free() > 0 && self.inactive_is_low(ANON) {
            self.shrink_active(mem, SWAP_CLUSTER_MAX, ANON, req);
        }
        reclaimed
    }
}

impl ReclaimPolicy for TwoListLru {
    fn add_page(&mut self, mem: &mut Memory, pfn: u32) {
        let anon = mem.frame(pfn).is_anon();
        debug_assert_eq!(self.lists.list_of(pfn), NO_LIST);
        let list = match (anon, self.new_anon_active) {
            (true, true) => ACTIVE_ANON,
            (true, false) => INACTIVE_ANON,
            (false, _) => INACTIVE_FILE,
        };
        self.lists.push_head(list, pfn);
    }

    fn shrink(&mut self, mem: &mut Memory, req: &ShrinkRequest) -> usize {
        let mut reclaimed = 0;
        for priority in (0..=DEF_PRIORITY).rev() {
            reclaimed += self.shrink_zone(mem, priority, req);
            if req.done(mem, reclaimed) {
                break;
            }
        }
        reclaimed
    }

    /// 3.4 `rotate_reclaimable_page`: to the inactive tail, unless activated since.
    fn rotate_reclaimable(&mut self, _mem: &mut Memory, pfn: u32) {
        if self.lists.list_of(pfn) == INACTIVE_FILE {
            self.lists.move_to_tail(pfn, INACTIVE_FILE);
        }
    }

    fn protects(&self) -> bool {
        self.protection != Protection::None
    }

    fn lists(&self) -> &LruLists {
        &self.lists
    }

    fn lists_mut(&mut self) -> &mut LruLists {
        &mut self.lists
    }

    fn only_protected_left(&self, mem: &Memory, tasks: &TaskView) -> bool {
        let protected = match self.protection {
            Protection::None => return false,
            Protection::Interactive => tasks.interactive,
            Protection::CgroupLow { .. } => tasks.foreground,
        };
        match protected {
            Some(p) => mem.resident_of(p) == mem.lru_pages() && mem.lru_pages() > 0,
            None => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::policy::{Goal, ShrinkRequest, TaskView};
    use super::*;
    use crate::core::memory::Memory;

    fn request() -> ShrinkRequest {
        ShrinkRequest::reclaim(SWAP_CLUSTER_MAX)
    }

    /// Frames 0..4 on `lru`'s active file list (frame 0 at the tail); frames 0 and 2
    /// referenced since the last scan.
    fn active_file_pages(lru: &mut TwoListLru) -> Memory {
        let mut mem = Memory::new(8, &[], 8, 1, 8);
        for pfn in 0..4u32 {
            mem.fault_in(pfn, pfn, 0, false);
            lru.lists.push_head(ACTIVE_FILE, pfn);
        }
        for pfn in [0, 2] {
            mem.set_frame_flags(pfn, PageFlags::YOUNG, true);
        }
        mem
    }

    #[test]
    fn active_pages_are_demoted_and_referenced_ones_rotate_or_not() {
        // The paper: referenced active pages go back to the active head, the others to
        // the inactive head, in the order scanned (tail first).
        let config = ReclaimConfig::default();
        let mut lru = TwoListLru::new(&config, Protection::None);
        let mut mem = active_file_pages(&mut lru);
        lru.shrink_active(&mut mem, 4, FILE, &request());
        assert_eq!(lru.lists.frames(ACTIVE_FILE), vec![2, 0]);
        assert_eq!(lru.lists.frames(INACTIVE_FILE), vec![3, 1]);
        assert_eq!(mem.counters.deactivations, 2);
        assert!(!mem.frame(0).is_young() && !mem.frame(2).is_young());
        assert_eq!(lru.recent_rotated[FILE], 2);
        // 3.4: every non-executable page is deactivated; the references still count
        // as rotated for get_scan_count.
        let config = ReclaimConfig {
            rotate_referenced_active: false,
            ..Default::default()
        };
        let mut lru = TwoListLru::new(&config, Protection::None);
        let mut mem = active_file_pages(&mut lru);
        lru.shrink_active(&mut mem, 4, FILE, &request());
        assert!(lru.lists.frames(ACTIVE_FILE).is_empty());
        assert_eq!(lru.lists.frames(INACTIVE_FILE), vec![3, 2, 1, 0]);
        assert_eq!(mem.counters.deactivations, 4);
        assert_eq!(lru.recent_rotated[FILE], 2);
        // Only as many as asked, from the tail.
        let mut lru = TwoListLru::new(&config, Protection::None);
        let mut mem = active_file_pages(&mut lru);
        lru.shrink_active(&mut mem, 1, FILE, &request());
        assert_eq!(lru.lists.frames(INACTIVE_FILE), vec![0]);
        assert_eq!(lru.lists.frames(ACTIVE_FILE), vec![3, 2, 1]);
    }

    #[test]
    fn new_pages_start_on_the_configured_list() {
        for new_anon_active in [false, true] {
            let config = ReclaimConfig {
                new_anon_active,
                ..Default::default()
            };
            let mut lru = TwoListLru::new(&config, Protection::None);
            let mut mem = Memory::new(4, &[], 4, 1, 4);
            mem.fault_in(0, 0, 0, true);
            lru.add_page(&mut mem, 0);
            mem.fault_in(1, 1, 0, false);
            lru.add_page(&mut mem, 1);
            let anon_list = if new_anon_active {
                ACTIVE_ANON
            } else {
                INACTIVE_ANON
            };
            assert_eq!(lru.lists.list_of(0), anon_list);
            assert_eq!(
                lru.lists.list_of(1),
                INACTIVE_FILE,
                "file pages start inactive"
            );
        }
    }

    /// Frame 0: a page of the interactive task 0 at the inactive tail; frames 1..8
    /// pages of task 1, all on the inactive file list.
    fn interactive_tag(protection: Protection) -> (Memory, TwoListLru, usize) {
        let config = ReclaimConfig::default();
        let mut mem = Memory::new(8, &[], 8, 2, 8);
        let mut lru = TwoListLru::new(&config, protection);
        for pfn in 0..8u32 {
            mem.fault_in(pfn, pfn, u32::from(pfn > 0), false);
            lru.lists.push_head(INACTIVE_FILE, pfn);
        }
        let req = ShrinkRequest {
            goal: Goal::Reclaim(1),
            order: 2,
            tasks: TaskView {
                interactive: Some(0),
                foreground: Some(0),
            },
            ignore_protection: false,
        };
        let reclaimed = lru.shrink(&mut mem, &req);
        (mem, lru, reclaimed)
    }

    #[test]
    fn a_protected_tag_page_brings_no_lumpy_block() {
        // Stock: the first tag (frame 0) brings its block 0..4.
        let (mem, _, reclaimed) = interactive_tag(Protection::None);
        assert_eq!(reclaimed, 4);
        assert!((0..4).all(|p| mem.frame_of(p).is_none()));
        assert_eq!(mem.counters.lumpy_taken, 3);
        // FMP: the interactive tag is skipped, referenced and activated, and brings
        // no neighbours; the next tag (frame 1) brings the same block without the
        // interactive frame 0.
        let (mem, lru, reclaimed) = interactive_tag(Protection::Interactive);
        assert_eq!(reclaimed, 3);
        let pfn0 = mem.frame_of(0).expect("interactive page kept");
        assert!(mem.frame(pfn0).is_referenced() && lru.lists.list_of(pfn0) == ACTIVE_FILE);
        assert!((1..4).all(|p| mem.frame_of(p).is_none()));
        assert!((4..8).all(|p| mem.frame_of(p).is_some()));
        assert_eq!(mem.counters.protected_skips, 1);
        // Neighbours 2 and 3 came with tag 1 (the block is not whole: frame 0 stays);
        // had the protected tag brought its block, 1..4 would have come with it.
        assert_eq!(
            (mem.counters.lumpy_taken, mem.counters.lumpy_failed),
            (2, 1)
        );
        mem.check().unwrap();
        lru.lists.check(&mem).unwrap();
    }
}
