//! Physical memory as numbered page frames: free frames, reserved and unmovable frames,
//! and frames holding a file or anonymous page on one of the reclaim lists.
//!
//! Frame allocation is *address-ordered first fit*, the core's
//! [`AllocOrder::Lowest`] frame pool: an order-0 request takes the lowest free frame, an
//! order-k request the lowest naturally aligned block of 2^k free frames, so that which
//! frames are physically adjacent depends on the order pages came and went, which is
//! what lumpy reclaim works with.
//!
//! Where each page is (a frame, a swap slot, only its file) and which process owns it
//! are the core's page table; a [`Frame`] holds what the kernel keeps in a frame's
//! `struct page` for reclaim: its list, its reference bits, its generation.
//!
//! The reclaim lists are the core's index-linked lists ([`crate::core::list`]) over
//! frame numbers: head = most recently added, tail = the end reclaim scans from, as the
//! kernel's `lru` lists.

use crate::core::frames::{AllocOrder, FramePool};
use crate::core::list::{Links, List};
use crate::core::pages::{Location, PageTable, NO_FRAME};
use crate::trace::{PageId, ProcId};

// Where reclaim's pages are: a DRAM frame, a slot of the swap area (on flash storage),
// or, for a file page reclaim dropped, only its file.
const SWAPPED: Location = Location::SwapFlash;
const DROPPED: Location = Location::Storage;
/// Frame is on no list.
pub const NO_LIST: u8 = u8::MAX;

/// Number of lists a [`Memory`] has: 4 for the two-list LRU (inactive/active x
/// anon/file) and 8 for the multi-generational LRU (4 generations x anon/file).
pub const LIST_COUNT: usize = 12;

/// What a frame holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FrameState {
    Free,
    /// Reserved at boot (kernel image, firmware carve-outs): never allocated or moved.
    Reserved,
    /// Allocated by the kernel (slab, page tables, driver buffers): not on any LRU, so
    /// reclaim cannot free it.
    Unmovable,
    /// A page of a process or a file, on one of the reclaim lists.
    Page,
}

/// One page frame.
#[derive(Debug, Clone, Copy)]
pub struct Frame {
    pub state: FrameState,
    pub page: PageId,
    pub anon: bool,
    /// The hardware accessed ("young") bit of the page's mappings.
    pub accessed: bool,
    /// `PG_referenced`.
    pub referenced: bool,
    /// A file page written since it was read (written back before it is dropped).
    pub dirty: bool,
    /// `PG_reclaim`: reclaim met the page dirty and kept it; when its writeback ends
    /// it goes to the inactive tail (`rotate_reclaimable_page`).
    pub reclaim: bool,
    /// The list the frame is on (its links are in [`Memory`]'s arena), or `NO_LIST`.
    pub list: u8,
    /// Generation (sequence number) on the multi-generational LRU.
    pub gen: u64,
    /// `PG_workingset`: the page was on the active list before it was deactivated
    /// (the `workingset` policy only).
    pub workingset: bool,
    /// `PG_referenced` of a mapped (anonymous) page, which only reclaim sets
    /// (the `workingset` policy only).
    pub mapped_referenced: bool,
}

impl Frame {
    const EMPTY: Frame = Frame {
        state: FrameState::Free,
        page: 0,
        anon: false,
        accessed: false,
        referenced: false,
        dirty: false,
        reclaim: false,
        list: NO_LIST,
        gen: 0,
        workingset: false,
        mapped_referenced: false,
    };
}

/// How a page came into memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FaultKind {
    /// First touch of an anonymous page: a zero-filled frame, no I/O (minor fault).
    AnonFirst,
    /// First read of a file page from storage (major fault).
    FileCold,
    /// First write of a file page that was never in memory (a file being written, as
    /// the USB transfer's): the page is filled by the writer, nothing is read.
    FileNew,
    /// A file page read again after reclaim dropped it (major fault).
    FileRefault,
    /// An anonymous page read back from swap (major fault).
    SwapIn,
}

impl FaultKind {
    pub fn is_major(self) -> bool {
        !matches!(self, FaultKind::AnonFirst | FaultKind::FileNew)
    }
}

/// Counters of reclaim work.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct ReclaimCounters {
    /// Pages looked at by reclaim: inactive and active list scans, lumpy neighbours,
    /// generation walks. The CPU cost of a policy.
    pub scanned: u64,
    pub reclaimed: u64,
    pub swap_outs: u64,
    pub file_drops: u64,
    /// Dirty file pages written back: by reclaim before it dropped them, or by the
    /// flusher (`dirty_writeback = "flusher"`).
    pub writebacks: u64,
    /// Dirty file pages reclaim met and kept for the flusher (`"flusher"` only).
    pub dirty_kept: u64,
    /// Pages moved from an inactive to the active list (or promoted a generation).
    pub activations: u64,
    pub deactivations: u64,
    /// Neighbours lumpy reclaim took with a tag page.
    pub lumpy_taken: u64,
    /// Aligned blocks lumpy reclaim could not take whole.
    pub lumpy_failed: u64,
    /// Candidates a protecting policy skipped.
    pub protected_skips: u64,
}

/// Physical memory, the swap space, where every page of the trace is, and the lists.
#[derive(Debug, Clone)]
pub struct Memory {
    frames: Vec<Frame>,
    pool: FramePool,
    /// The LRU lists, linked by frame number; head = youngest.
    lists: [List; LIST_COUNT],
    links: Links,
    /// Where each page is and its owner: the task that brought it into memory (FMP's
    /// page identifier), kept while the page is swapped out.
    pages: PageTable,
    swap_total: usize,
    swap_used: usize,
    /// Resident pages (on lists) per owner.
    resident_by_owner: Vec<u32>,
    lru_pages: usize,
    unmovable: usize,
    /// Resident dirty file pages in the order they were dirtied (front = oldest),
    /// linked by frame number in an arena of their own.
    dirty: List,
    dirty_links: Links,
    /// Pages reclaim kept dirty since the last [`Memory::end_kept_writeback`].
    kept_dirty: Vec<(u32, PageId)>,
    /// A flusher writes dirty file pages (`dirty_writeback = "flusher"`): reclaim
    /// keeps the dirty ones it meets instead of writing them itself.
    flusher: bool,
    pub counters: ReclaimCounters,
    /// Pages swapped out, when logged (see [`Memory::log_swap_outs`]).
    swap_log: Option<Vec<PageId>>,
}

impl Memory {
    /// `total` frames with `reserved` of them (sorted frame numbers) reserved at boot,
    /// `pages` distinct pages, `procs` processes and `swap` swap slots.
    pub fn new(total: usize, reserved: &[u32], pages: usize, procs: usize, swap: usize) -> Self {
        let mut m = Memory {
            frames: vec![Frame::EMPTY; total],
            pool: FramePool::new(total, AllocOrder::Lowest, false),
            lists: [List::new(); LIST_COUNT],
            links: Links::with_pages(total),
            pages: PageTable::with_pages(pages),
            swap_total: swap,
            swap_used: 0,
            resident_by_owner: vec![0; procs],
            lru_pages: 0,
            unmovable: 0,
            dirty: List::new(),
            dirty_links: Links::with_pages(total),
            kept_dirty: Vec::new(),
            flusher: false,
            counters: ReclaimCounters::default(),
            swap_log: None,
        };
        for &pfn in reserved {
            if (pfn as usize) < total && m.frames[pfn as usize].state == FrameState::Free {
                m.pool.take(pfn, 0);
                m.frames[pfn as usize].state = FrameState::Reserved;
            }
        }
        m
    }

    pub fn total(&self) -> usize {
        self.frames.len()
    }

    /// Record every anonymous page reclaim swaps out, for a swap device model outside
    /// reclaim (the composed phone); [`Memory::take_swap_log`] hands them over.
    pub fn log_swap_outs(&mut self) {
        self.swap_log.get_or_insert_with(Vec::new);
    }

    /// The pages swapped out since the last call, in order.
    pub fn take_swap_log(&mut self) -> Vec<PageId> {
        self.swap_log
            .as_mut()
            .map(std::mem::take)
            .unwrap_or_default()
    }

    /// Swap slots in all.
    pub fn swap_total(&self) -> usize {
        self.swap_total
    }
    pub fn free(&self) -> usize {
        self.pool.free()
    }
    pub fn lru_pages(&self) -> usize {
        self.lru_pages
    }
    pub fn unmovable(&self) -> usize {
        self.unmovable
    }
    /// Resident dirty file pages.
    pub fn dirty(&self) -> usize {
        self.dirty.len()
    }
    /// The frame of the page dirtied longest ago and still dirty (the flusher's next).
    pub fn oldest_dirty(&self) -> Option<u32> {
        self.dirty.front()
    }
    /// Frames of the dirty pages, oldest dirtied first.
    pub fn dirty_frames(&self) -> Vec<u32> {
        self.dirty_links.iter(&self.dirty).collect()
    }
    pub fn reserved(&self) -> usize {
        self.total() - self.free() - self.lru_pages - self.unmovable
    }
    pub fn frame(&self, pfn: u32) -> &Frame {
        &self.frames[pfn as usize]
    }
    pub fn frame_mut(&mut self, pfn: u32) -> &mut Frame {
        &mut self.frames[pfn as usize]
    }
    /// The task that brought the page in `pfn` into memory.
    pub fn owner_of_frame(&self, pfn: u32) -> ProcId {
        self.pages.owner(self.frames[pfn as usize].page)
    }
    /// The task that brought `page` into memory (also while it is swapped out).
    pub fn owner_of(&self, page: PageId) -> ProcId {
        self.pages.owner(page)
    }
    pub fn list_len(&self, list: u8) -> usize {
        self.lists[list as usize].len()
    }
    pub fn list_tail(&self, list: u8) -> Option<u32> {
        self.lists[list as usize].back()
    }
    /// Frames of a list from head (youngest) to tail.
    pub fn list_frames(&self, list: u8) -> Vec<u32> {
        self.links.iter(&self.lists[list as usize]).collect()
    }
    pub fn swap_free(&self) -> usize {
        self.swap_total - self.swap_used
    }
    pub fn swap_used(&self) -> usize {
        self.swap_used
    }
    pub fn resident_of(&self, owner: ProcId) -> usize {
        self.resident_by_owner
            .get(owner as usize)
            .copied()
            .unwrap_or(0) as usize
    }
    /// Frame of a resident page.
    pub fn frame_of(&self, page: PageId) -> Option<u32> {
        (self.pages.location(page) == Location::Dram).then(|| self.pages.frame(page))
    }
    pub fn is_swapped(&self, page: PageId) -> bool {
        self.pages.location(page) == SWAPPED
    }

    /// How a fault on `page` (a `write` or a read) would be served.
    pub fn fault_kind(&self, page: PageId, anon: bool, write: bool) -> FaultKind {
        match (self.pages.location(page), anon) {
            (SWAPPED, _) => FaultKind::SwapIn,
            (DROPPED, false) => FaultKind::FileRefault,
            (_, true) => FaultKind::AnonFirst,
            (_, false) if write => FaultKind::FileNew,
            (_, false) => FaultKind::FileCold,
        }
    }

    // ---- free frames ----

    /// Lowest free naturally aligned block of 2^order frames (order <= 6), not taken.
    pub fn find_free_block(&self, order: u32) -> Option<u32> {
        self.pool.find_block(order)
    }

    /// Free frames that lie in naturally aligned, wholly free blocks of 2^order frames
    /// (what the buddy allocator's free areas of that order and above hold).
    pub fn free_in_blocks(&self, order: u32) -> usize {
        self.pool.free_in_blocks(order)
    }

    /// `__zone_watermark_ok` of `order` against `mark_pages`: after taking 2^order
    /// frames free memory stays at or above the mark, and for an order above 0 the
    /// free pages in blocks of that order or larger exceed mark / 2^order.
    pub fn watermark_ok(&self, order: u32, mark_pages: usize) -> bool {
        let need = 1usize << order;
        if self.free() < need + mark_pages {
            return false;
        }
        order == 0 || self.free_in_blocks(order) > (mark_pages >> order) + need - 1
    }

    /// Take the frames `pfn..pfn+2^order` (all free) out of the free pool.
    fn take_block(&mut self, pfn: u32, order: u32) {
        for f in pfn..pfn + (1 << order) {
            debug_assert_eq!(self.frames[f as usize].state, FrameState::Free);
        }
        self.pool.take(pfn, order);
    }

    fn release_frame(&mut self, pfn: u32) {
        self.frames[pfn as usize] = Frame::EMPTY;
        self.pool.release(pfn);
    }

    /// Allocate a block of unmovable kernel memory at `pfn` (found free).
    pub fn allocate_unmovable(&mut self, pfn: u32, order: u32) {
        self.take_block(pfn, order);
        for f in pfn..pfn + (1 << order) {
            self.frames[f as usize].state = FrameState::Unmovable;
        }
        self.unmovable += 1 << order;
    }

    /// Free an unmovable block allocated by [`Memory::allocate_unmovable`].
    pub fn free_unmovable(&mut self, pfn: u32, order: u32) {
        for f in pfn..pfn + (1 << order) {
            debug_assert_eq!(self.frames[f as usize].state, FrameState::Unmovable);
            self.release_frame(f);
        }
        self.unmovable -= 1 << order;
    }

    /// Put `page` of `owner` into the free frame `pfn` (the caller adds it to a list).
    /// A swapped-in page gives its swap slot back.
    pub fn fault_in(&mut self, pfn: u32, page: PageId, owner: ProcId, anon: bool) {
        self.take_block(pfn, 0);
        self.pages.ensure(page);
        if self.pages.location(page) == SWAPPED {
            self.swap_used -= 1;
        }
        self.pages.place(page, Location::Dram, pfn);
        self.pages.set_owner(page, owner);
        self.frames[pfn as usize] = Frame {
            state: FrameState::Page,
            page,
            anon,
            ..Frame::EMPTY
        };
        self.resident_by_owner[owner as usize] += 1;
        self.lru_pages += 1;
    }

    /// Reclaim the (unlinked) page in `pfn`: anonymous pages go to swap, file pages are
    /// dropped (written back first when dirty). The caller checked swap space.
    pub fn evict(&mut self, pfn: u32) {
        let f = self.frames[pfn as usize];
        debug_assert_eq!(f.state, FrameState::Page);
        debug_assert_eq!(f.list, NO_LIST);
        if f.anon {
            debug_assert!(self.swap_used < self.swap_total);
            self.swap_used += 1;
            if let Some(log) = &mut self.swap_log {
                log.push(f.page);
            }
            self.pages.place(f.page, SWAPPED, NO_FRAME);
            self.counters.swap_outs += 1;
        } else {
            if f.dirty {
                self.counters.writebacks += 1;
                self.set_clean(pfn);
            }
            self.pages.place(f.page, DROPPED, NO_FRAME);
            self.counters.file_drops += 1;
        }
        let owner = self.pages.owner(f.page);
        self.resident_by_owner[owner as usize] -= 1;
        self.lru_pages -= 1;
        self.counters.reclaimed += 1;
        self.release_frame(pfn);
    }

    /// Forget `page` (its process exited): free its frame or swap slot.
    pub fn discard(&mut self, page: PageId) {
        match self.pages.location(page) {
            SWAPPED => self.swap_used -= 1,
            Location::Dram => {
                let pfn = self.pages.frame(page);
                self.unlink(pfn);
                if self.frames[pfn as usize].dirty {
                    self.set_clean(pfn);
                }
                let owner = self.pages.owner(page);
                self.resident_by_owner[owner as usize] -= 1;
                self.lru_pages -= 1;
                self.release_frame(pfn);
            }
            _ => {}
        }
        if (page as usize) < self.pages.len() {
            self.pages.place(page, Location::Absent, NO_FRAME);
        }
    }

    // ---- dirty file pages ----

    /// Whether a flusher writes dirty file pages, so that reclaim keeps them (see
    /// [`Memory::evict_or_keep`]); off by default.
    pub fn set_flusher(&mut self, on: bool) {
        self.flusher = on;
    }

    /// What reclaim does with the isolated page in `pfn` once it decided to free it:
    /// [`Memory::evict`] it, or with a flusher, when it is a dirty file page, keep it
    /// for the flusher ([`Memory::keep_dirty`]; 3.4 `shrink_page_list`, 6.x
    /// `sort_folio`). Returns whether it was evicted; a kept page is for the caller
    /// to put back on a list.
    pub fn evict_or_keep(&mut self, pfn: u32) -> bool {
        let f = &self.frames[pfn as usize];
        if self.flusher && f.dirty && !f.anon {
            self.keep_dirty(pfn);
            return false;
        }
        self.evict(pfn);
        true
    }

    /// A write to the resident file page in `pfn`; true when it was clean before.
    pub fn mark_dirty(&mut self, pfn: u32) -> bool {
        let f = &mut self.frames[pfn as usize];
        debug_assert!(f.state == FrameState::Page && !f.anon);
        if f.dirty {
            return false;
        }
        f.dirty = true;
        self.dirty_links.push_back(&mut self.dirty, pfn);
        true
    }

    /// The dirty page in `pfn` is clean: off the dirty list.
    fn set_clean(&mut self, pfn: u32) {
        let f = &mut self.frames[pfn as usize];
        debug_assert!(f.dirty);
        f.dirty = false;
        self.dirty_links.remove(&mut self.dirty, pfn);
    }

    /// Write back the page in `pfn` if it is still `page` and dirty (the flusher): it
    /// is clean afterwards and its `PG_reclaim` cleared. Returns whether reclaim had
    /// kept it (`PG_reclaim` was set): then its policy moves it to where reclaim meets
    /// it next ([`super::policy::ReclaimPolicy::rotate_reclaimable`]).
    pub fn write_back(&mut self, pfn: u32, page: PageId) -> bool {
        let f = &mut self.frames[pfn as usize];
        if f.state != FrameState::Page || f.page != page || !f.dirty {
            return false;
        }
        let kept = std::mem::take(&mut f.reclaim);
        self.set_clean(pfn);
        self.counters.writebacks += 1;
        kept
    }

    /// Reclaim met the dirty file page in `pfn` (isolated) and keeps it: `PG_reclaim`
    /// is set and the page is remembered for [`Memory::end_kept_writeback`]. The
    /// caller puts it back on a list.
    fn keep_dirty(&mut self, pfn: u32) {
        let f = &mut self.frames[pfn as usize];
        debug_assert!(f.dirty && !f.anon);
        self.counters.dirty_kept += 1;
        if !f.reclaim {
            f.reclaim = true;
            let page = f.page;
            self.kept_dirty.push((pfn, page));
        }
    }

    /// The writeback of every page reclaim kept has ended (the flusher wrote them
    /// since): they are clean. Returns the frames of those still holding the kept
    /// page, oldest kept first, for their policy to rotate.
    pub fn end_kept_writeback(&mut self) -> Vec<u32> {
        let kept = std::mem::take(&mut self.kept_dirty);
        kept.into_iter()
            .filter(|&(pfn, page)| self.write_back(pfn, page))
            .map(|(pfn, _)| pfn)
            .collect()
    }

    /// Move the page in `pfn` to the tail of `list` (the end reclaim scans next).
    pub fn move_to_tail(&mut self, pfn: u32, list: u8) {
        self.unlink(pfn);
        self.push_tail(list, pfn);
    }

    // ---- lists ----

    /// Add the frame at the head of `list`.
    pub fn push_head(&mut self, list: u8, pfn: u32) {
        let f = &mut self.frames[pfn as usize];
        debug_assert_eq!(f.list, NO_LIST);
        f.list = list;
        self.links.push_front(&mut self.lists[list as usize], pfn);
    }

    /// Add the frame at the tail of `list` (the end reclaim scans next).
    fn push_tail(&mut self, list: u8, pfn: u32) {
        let f = &mut self.frames[pfn as usize];
        debug_assert_eq!(f.list, NO_LIST);
        f.list = list;
        self.links.push_back(&mut self.lists[list as usize], pfn);
    }

    /// Take the frame off its list (no-op when on none).
    pub fn unlink(&mut self, pfn: u32) {
        let list = std::mem::replace(&mut self.frames[pfn as usize].list, NO_LIST);
        if list != NO_LIST {
            self.links.remove(&mut self.lists[list as usize], pfn);
        }
    }

    /// Check every accounting invariant; the message says which one broke.
    pub fn check(&self) -> Result<(), String> {
        let mut free = 0;
        let mut pages = 0;
        let mut unmovable = 0;
        let mut by_owner = vec![0u32; self.resident_by_owner.len()];
        let mut dirty = 0;
        for (pfn, f) in self.frames.iter().enumerate() {
            let bit = self.pool.is_free(pfn as u32);
            if bit != (f.state == FrameState::Free) {
                return Err(format!(
                    "frame {pfn}: free bit {bit} but state {:?}",
                    f.state
                ));
            }
            match f.state {
                FrameState::Free => free += 1,
                FrameState::Unmovable => unmovable += 1,
                FrameState::Reserved => {}
                FrameState::Page => {
                    pages += 1;
                    dirty += usize::from(f.dirty);
                    if f.anon && (f.dirty || f.reclaim) {
                        return Err(format!("frame {pfn}: anonymous page marked dirty"));
                    }
                    by_owner[self.pages.owner(f.page) as usize] += 1;
                    if f.list == NO_LIST {
                        return Err(format!("frame {pfn}: page on no list"));
                    }
                    let at = self.pages.location(f.page);
                    if at != Location::Dram || self.pages.frame(f.page) != pfn as u32 {
                        return Err(format!("frame {pfn}: page {} located elsewhere", f.page));
                    }
                }
            }
        }
        if free != self.free() || pages != self.lru_pages || unmovable != self.unmovable {
            return Err(format!(
                "counts: free {free}/{} pages {pages}/{} unmovable {unmovable}/{}",
                self.free(),
                self.lru_pages,
                self.unmovable
            ));
        }
        let on_dirty_list = self
            .dirty_links
            .checked_members(&self.dirty)
            .map_err(|e| format!("dirty list: {e}"))?;
        if let Some(at) = on_dirty_list.iter().find(|&&at| {
            let f = &self.frames[at as usize];
            !f.dirty || f.state != FrameState::Page
        }) {
            return Err(format!("dirty list: frame {at} is not a dirty page"));
        }
        if on_dirty_list.len() != dirty {
            return Err(format!(
                "{dirty} dirty pages, {} on the dirty list",
                on_dirty_list.len()
            ));
        }
        if by_owner != self.resident_by_owner {
            return Err("resident pages per owner disagree".into());
        }
        let mut on_lists = 0;
        for (i, l) in self.lists.iter().enumerate() {
            let members = self
                .links
                .checked_members(l)
                .map_err(|e| format!("list {i}: {e}"))?;
            if let Some(at) = members.iter().find(|&&at| {
                let f = &self.frames[at as usize];
                f.list as usize != i || f.state != FrameState::Page
            }) {
                return Err(format!("list {i}: frame {at} badly linked"));
            }
            on_lists += members.len();
        }
        if on_lists != self.lru_pages {
            return Err(format!(
                "{on_lists} pages on lists, {} resident",
                self.lru_pages
            ));
        }
        let swapped = self.pages.count_at(SWAPPED);
        if swapped != self.swap_used || self.swap_used > self.swap_total {
            return Err(format!(
                "swap: {swapped} swapped pages, {} slots used of {}",
                self.swap_used, self.swap_total
            ));
        }
        Ok(())
    }
}
