//! The machine's memory: the one page table, the numbered DRAM frames, the swap area's
//! slots, the resident pages of every process, the page cache's dirty pages in the
//! order they were dirtied, and the counters of what was done to them (the kernel's
//! vmstat).
//!
//! Mechanisms plug into it: a reclaim policy keeps its own lists and per-page state
//! beside it and asks it to evict the pages it chose; the phone's other slots (swap
//! architectures, ksmd, the file system) read and change the same page table. What
//! every mechanism must agree on is here, once:
//! - where each page is (a DRAM frame, a swap slot, only its file) and who owns it:
//!   the page table ([`PageTable`]), including the bits the kernel keeps in a frame's
//!   `struct page` for reclaim ([`PageFlags::FRAME_BITS`], `DIRTY`, `ANON`);
//! - which page each frame holds, and which frames are free, reserved at boot or
//!   allocated by the kernel for itself (unmovable);
//! - the pages shared by merging (kernel samepage merging): a merged page is at
//!   [`Location::Dram`] with [`PageFlags::MERGED`] and the shared frame as its frame, a
//!   KSM page or the kernel's zero page ([`ZERO_FRAME`]). A KSM page is a frame of this
//!   memory held as unmovable, like the zram pool's, tagged with its merger's number
//!   (ksmd's stable node, as the kernel's `page->mapping` points at it) and counting
//!   the pages that map it; it is freed with its last mapping. A merged page holds no
//!   frame of its own and no swap slot, is on no reclaim list and is not resident for
//!   reclaim: [`Memory::frame_of`] is `None` for it. A write to it is a copy-on-write
//!   ([`Memory::unmerge`], or [`Memory::fault_in`], which unmaps it first): it leaves
//!   the shared frame and faults a frame of its own in.
//!
//! Frame allocation is *address-ordered first fit*, the core's [`AllocOrder::Lowest`]
//! frame pool: an order-0 request takes the lowest free frame, an order-k request the
//! lowest naturally aligned block of 2^k free frames, so that which frames are
//! physically adjacent depends on the order pages came and went, which is what lumpy
//! reclaim works with.

use super::frames::{AllocOrder, FramePool};
use super::list::{Links, List};
use super::pages::{Location, PageFlags, PageTable, SwapDevice, NO_FRAME, ZERO_FRAME};
use super::process::Processes;
use super::swap::{Architecture, FlashOnly, SwapSlots, SwapSpace};
use crate::trace::{PageId, ProcId, ADJ_FOREGROUND};
use crate::Error;

// Where a file page goes when it leaves memory: only its file.
const DROPPED: Location = Location::Storage;

/// What a frame holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FrameState {
    Free,
    /// Reserved at boot (kernel image, firmware carve-outs): never allocated or moved.
    Reserved,
    /// Allocated by the kernel (slab, page tables, driver buffers, the zram pool, KSM
    /// pages): on no LRU, so reclaim cannot free it.
    Unmovable,
    /// A page of a process or a file, which reclaim may take.
    Page,
}

/// What one frame holds, as read from the memory: its state, its page and the page's
/// flags (meaningful for [`FrameState::Page`] only).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Frame {
    pub state: FrameState,
    pub page: PageId,
    pub flags: PageFlags,
}

/// Declares `pub fn name(&self) -> bool` for each `name => FLAG`: whether the frame's
/// page has that flag.
macro_rules! flag_tests {
    ($($(#[$doc:meta])* $name:ident => $flag:ident;)+) => {
        $(
            $(#[$doc])*
            #[inline]
            pub fn $name(&self) -> bool {
                self.flags.contains(PageFlags::$flag)
            }
        )+
    };
}

impl Frame {
    flag_tests! {
        is_anon => ANON;
        /// The accessed ("young") bit of the page's mappings.
        is_young => YOUNG;
        /// `PG_referenced`.
        is_referenced => REFERENCED;
        /// A file page written since it was read (written back before it is dropped).
        is_dirty => DIRTY;
        /// `PG_reclaim`.
        is_reclaim => RECLAIM;
    }
}

/// A frame's state and page, 8 bytes.
#[derive(Debug, Clone, Copy)]
struct Slot {
    state: FrameState,
    page: PageId,
}

const FREE_SLOT: Slot = Slot {
    state: FrameState::Free,
    page: 0,
};

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

/// Counters of reclaim work (the kernel's vmstat events).
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
    /// Swap-outs of pages whose slot already held their data (nothing written).
    pub clean_swap_outs: u64,
    /// Pages written to swap for the first time (the swap footprint).
    pub swapped_pages: u64,
    /// Swap-outs the swap architecture had no room for (the page stayed).
    pub swap_refused: u64,
}

/// Physical memory, the swap area, where every page of the trace is, the processes, and
/// what was done.
pub struct Memory {
    slots: Vec<Slot>,
    pool: FramePool,
    /// Where each page is, its owner (the task that brought it into memory: FMP's page
    /// identifier, kept while the page is swapped out) and its flags.
    pages: PageTable,
    /// Swap slots in all (what the kernel's `nr_swap_pages` starts from; for zram the
    /// nominal disk size), and pages swapped out now.
    swap_total: usize,
    swap_used: usize,
    /// The swap devices and what they did; which page holds which slot is the page
    /// table's.
    swap: SwapSlots,
    /// The swap architecture: where swapped pages go.
    arch: Box<dyn Architecture>,
    /// Frames held for the zram pool's compressed data (unmovable), in the order taken.
    pool_held: Vec<u32>,
    /// The swap architecture refused a page since a slot was last freed: swap counts as
    /// full (no free slots) until something leaves it, so that reclaim does not scan
    /// anonymous pages it cannot swap out (as with a full swap device).
    swap_full: bool,
    /// Every process: importance, last use, the pages it owns, its life cycle.
    pub procs: Processes,
    now_ns: u64,
    /// Pages were swapped in without frames (a replay): such a page is outside the
    /// model, and may keep its slot as a page in memory does.
    frameless_swap_ins: bool,
    /// The first broken rule an operation met (an internal error), for the machine to
    /// report.
    error: Option<Error>,
    /// Resident pages per owner.
    resident_by_owner: Vec<u32>,
    lru_pages: usize,
    unmovable: usize,
    /// Resident dirty file pages in the order they were dirtied (front = oldest),
    /// linked by frame number.
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
    /// The pages mapping each KSM page, by frame (0: the frame is not a KSM page);
    /// empty until the first KSM page.
    ksm_mappers: Vec<u32>,
    /// KSM pages held.
    ksm_pages: usize,
    /// Pages mapped to a KSM page or the zero page, and those mapped to the zero page.
    merged: usize,
    zero_mapped: usize,
}

/// The shared frame a page is merged into ([`Memory::map_shared`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shared {
    /// A new KSM page tagged `tag`, in frame `pfn` if it is free (the frame the page
    /// held: the kernel makes the page it merges the KSM page), else in the lowest free
    /// frame.
    NewKsm { pfn: u32, tag: u32 },
    /// The KSM page in frame `pfn`.
    Ksm(u32),
    /// The kernel's zero page.
    Zero,
}

impl Memory {
    /// `total` frames with `reserved` of them (sorted frame numbers) reserved at boot,
    /// `pages` distinct pages, `procs` processes and a swap area of `swap` slots on flash
    /// ([`Memory::set_swap`] plugs in another architecture).
    pub fn new(total: usize, reserved: &[u32], pages: usize, procs: usize, swap: usize) -> Self {
        let mut m = Memory {
            slots: vec![FREE_SLOT; total],
            pool: FramePool::new(total, AllocOrder::Lowest, false),
            pages: PageTable::with_pages(pages),
            swap_total: swap,
            swap_used: 0,
            swap: SwapSlots::flash_only(pages),
            arch: Box::new(FlashOnly),
            pool_held: Vec::new(),
            swap_full: false,
            procs: Processes::default(),
            now_ns: 0,
            frameless_swap_ins: false,
            error: None,
            resident_by_owner: vec![0; procs],
            lru_pages: 0,
            unmovable: 0,
            dirty: List::new(),
            dirty_links: Links::with_pages(total),
            kept_dirty: Vec::new(),
            flusher: false,
            counters: ReclaimCounters::default(),
            swap_log: None,
            ksm_mappers: Vec::new(),
            ksm_pages: 0,
            merged: 0,
            zero_mapped: 0,
        };
        for &pfn in reserved {
            if (pfn as usize) < total && m.slots[pfn as usize].state == FrameState::Free {
                m.pool.take(pfn, 0);
                m.slots[pfn as usize].state = FrameState::Reserved;
            }
        }
        m
    }

    pub fn total(&self) -> usize {
        self.slots.len()
    }

    /// Swap with `arch` on the devices `swap`, `slots` swap slots in all; before any
    /// page is swapped out.
    pub fn set_swap(&mut self, swap: SwapSlots, arch: Box<dyn Architecture>, slots: usize) {
        debug_assert_eq!(self.swap_used, 0);
        self.swap = swap;
        self.arch = arch;
        self.swap_total = slots;
    }

    /// The swap devices: occupancy, the zram pool, every operation.
    pub fn swap(&self) -> &SwapSlots {
        &self.swap
    }

    pub fn swap_mut(&mut self) -> &mut SwapSlots {
        &mut self.swap
    }

    /// The swap architecture's name.
    pub fn swap_architecture(&self) -> &'static str {
        self.arch.name()
    }

    /// Whether there is swap at all (an architecture other than `none`).
    pub fn swaps(&self) -> bool {
        self.arch.swaps()
    }

    /// The devices with the page table's slots, for driving the architecture from
    /// outside (a replay of a trace's own swap events), and the architecture.
    pub fn swap_parts(&mut self) -> (SwapSpace<'_>, &mut dyn Architecture) {
        (self.swap.space(&mut self.pages), self.arch.as_mut())
    }

    /// The page table, to change directly (a replay that models no frames).
    pub fn pages_mut(&mut self) -> &mut PageTable {
        &mut self.pages
    }

    /// The time now, ns (the architectures' zram writeback ages pages by it).
    pub fn set_time(&mut self, now_ns: u64) {
        self.now_ns = now_ns;
    }

    /// The first broken rule met since the last call (an internal error).
    pub fn take_error(&mut self) -> Option<Error> {
        self.error.take()
    }

    fn note(&mut self, result: crate::Result<bool>) -> bool {
        match result {
            Ok(done) => done,
            Err(e) => {
                self.error.get_or_insert(e);
                false
            }
        }
    }

    /// Frames held for the zram pool.
    pub fn pool_frames_held(&self) -> usize {
        self.pool_held.len()
    }

    /// Hold as many unmovable frames as the zram pool's data takes (the pool grows by
    /// a frame at most per page stored, after that page's frame was freed).
    fn sync_pool(&mut self) {
        let want = self.swap.pool_frames();
        while self.pool_held.len() > want {
            let pfn = self.pool_held.pop().expect("non-empty");
            self.free_unmovable(pfn, 0);
        }
        while self.pool_held.len() < want {
            let Some(pfn) = self.find_free_block(0) else {
                self.error.get_or_insert(Error::config(
                    "memory",
                    "the zram pool grew with no frame free (internal error)",
                ));
                return;
            };
            self.allocate_unmovable(pfn, 0);
            self.pool_held.push(pfn);
        }
    }

    /// `page` is `proc`'s from now on, unless a living process owns it already: it is
    /// charged to `proc` and freed when `proc` dies.
    pub fn own(&mut self, page: PageId, proc: ProcId) {
        self.pages.ensure(page);
        if !self.pages.has_flags(page, PageFlags::OWNED) {
            self.pages.set_flags(page, PageFlags::OWNED, true);
            self.pages.set_owner(page, proc);
            self.procs.own(proc, page);
        }
    }

    /// The process the low-memory killer takes: the least important one holding memory
    /// (resident pages or zram pool pages) other than `accessor`, never at
    /// `oom_score_adj` <= 0 (the foreground and the system), the one used least
    /// recently among equals.
    pub fn kill_candidate(&self, accessor: ProcId) -> Option<ProcId> {
        let procs = &self.procs;
        procs.importance().least_important(
            (0..procs.len() as ProcId)
                .filter(|&p| {
                    p != accessor
                        && procs.adj(p) > ADJ_FOREGROUND
                        && (self.resident_of(p) > 0 || self.swap.pool_pages_of(p) > 0)
                })
                .map(|p| (p, procs.last_use(p))),
        )
    }

    /// The page table, for reading (mechanisms change it through the memory's verbs).
    pub fn pages(&self) -> &PageTable {
        &self.pages
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
    /// Frames holding pages reclaim may take.
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

    /// What frame `pfn` holds.
    #[inline]
    pub fn frame(&self, pfn: u32) -> Frame {
        let slot = self.slots[pfn as usize];
        let flags = match slot.state {
            FrameState::Page => self.pages.flags(slot.page),
            _ => PageFlags::empty(),
        };
        Frame {
            state: slot.state,
            page: slot.page,
            flags,
        }
    }

    /// The page in frame `pfn` (which MUST hold one).
    #[inline]
    pub fn page_in(&self, pfn: u32) -> PageId {
        debug_assert_eq!(self.slots[pfn as usize].state, FrameState::Page);
        self.slots[pfn as usize].page
    }

    /// Set or clear `flags` of the page in frame `pfn` (which MUST hold one).
    #[inline]
    pub fn set_frame_flags(&mut self, pfn: u32, flags: PageFlags, on: bool) {
        let page = self.page_in(pfn);
        self.pages.set_flags(page, flags, on);
    }

    /// Clear `flag` of the page in frame `pfn`; whether it was set.
    #[inline]
    pub fn take_frame_flag(&mut self, pfn: u32, flag: PageFlags) -> bool {
        let page = self.page_in(pfn);
        let was = self.pages.has_flags(page, flag);
        if was {
            self.pages.set_flags(page, flag, false);
        }
        was
    }

    /// The task that brought the page in `pfn` into memory.
    pub fn owner_of_frame(&self, pfn: u32) -> ProcId {
        self.pages.owner(self.slots[pfn as usize].page)
    }
    /// The task that brought `page` into memory (also while it is swapped out).
    pub fn owner_of(&self, page: PageId) -> ProcId {
        self.pages.owner(page)
    }
    /// Swap slots free (none when there is no swap).
    pub fn swap_free(&self) -> usize {
        if self.arch.swaps() && !self.swap_full {
            self.swap_total.saturating_sub(self.swap_used)
        } else {
            0
        }
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
    /// The frame of a resident page, its own: `None` for a page in no frame and for a
    /// merged page (whose frame is shared: [`Memory::shared_frame`]).
    #[inline]
    pub fn frame_of(&self, page: PageId) -> Option<u32> {
        (self.pages.location(page) == Location::Dram && !(self.merged > 0 && self.is_merged(page)))
            .then(|| self.pages.frame(page))
    }
    /// Whether `page` is swapped out (its data is on a swap device).
    pub fn is_swapped(&self, page: PageId) -> bool {
        self.pages.location(page).is_swapped()
    }

    /// How a fault on `page` (a `write` or a read) would be served.
    pub fn fault_kind(&self, page: PageId, anon: bool, write: bool) -> FaultKind {
        match (self.pages.location(page), anon) {
            (at, _) if at.is_swapped() => FaultKind::SwapIn,
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
            debug_assert_eq!(self.slots[f as usize].state, FrameState::Free);
        }
        self.pool.take(pfn, order);
    }

    /// Give frame `pfn` back; the page it held loses the bits of its frame.
    fn release_frame(&mut self, pfn: u32) {
        let slot = std::mem::replace(&mut self.slots[pfn as usize], FREE_SLOT);
        if slot.state == FrameState::Page {
            self.pages
                .set_flags(slot.page, PageFlags::FRAME_BITS | PageFlags::DIRTY, false);
        }
        self.pool.release(pfn);
    }

    /// Allocate a block of unmovable kernel memory at `pfn` (found free).
    pub fn allocate_unmovable(&mut self, pfn: u32, order: u32) {
        self.take_block(pfn, order);
        for f in pfn..pfn + (1 << order) {
            self.slots[f as usize].state = FrameState::Unmovable;
        }
        self.unmovable += 1 << order;
    }

    /// Free an unmovable block allocated by [`Memory::allocate_unmovable`].
    pub fn free_unmovable(&mut self, pfn: u32, order: u32) {
        for f in pfn..pfn + (1 << order) {
            debug_assert_eq!(self.slots[f as usize].state, FrameState::Unmovable);
            self.release_frame(f);
        }
        self.unmovable -= 1 << order;
    }

    /// Put `page` of `owner` into the free frame `pfn` (the caller's reclaim policy
    /// adds it to its lists). A swapped-out page is read back by the swap architecture
    /// (which may keep its slot); returns the device it was read from.
    ///
    /// An anonymous page is dirty (its data differs from any copy in swap) unless it
    /// was read from a slot that keeps its data; a file page is clean.
    pub fn fault_in(
        &mut self,
        pfn: u32,
        page: PageId,
        owner: ProcId,
        anon: bool,
    ) -> Option<SwapDevice> {
        self.take_block(pfn, 0);
        self.pages.ensure(page);
        if self.merged > 0 && self.is_merged(page) {
            self.unmap_shared(page);
        }
        let mut read = None;
        if self.pages.location(page).is_swapped() {
            self.swap_used -= 1;
            self.swap_full = false;
            let mut space = self.swap.space(&mut self.pages);
            match self.arch.swap_in(&mut space, page) {
                Ok(device) => read = Some(device),
                Err(e) => {
                    self.error.get_or_insert(e);
                }
            }
        }
        self.pages.place(page, Location::Dram, pfn);
        // An owned page stays charged to its owner; any other to the task that faulted
        // it in (FMP's page identifier).
        if !self.pages.has_flags(page, PageFlags::OWNED) {
            self.pages.set_owner(page, owner);
        }
        self.pages
            .set_flags(page, PageFlags::FRAME_BITS | PageFlags::LOST, false);
        let dirty = anon && self.pages.slot(page).is_none();
        self.pages.set_flags(page, PageFlags::DIRTY, dirty);
        self.pages.set_flags(page, PageFlags::ANON, anon);
        self.slots[pfn as usize] = Slot {
            state: FrameState::Page,
            page,
        };
        let owner = self.pages.owner(page);
        if owner as usize >= self.resident_by_owner.len() {
            self.resident_by_owner.resize(owner as usize + 1, 0);
        }
        self.resident_by_owner[owner as usize] += 1;
        self.lru_pages += 1;
        self.sync_pool();
        read
    }

    /// A write to the resident anonymous page `page`: its data now differs from any
    /// copy in swap.
    pub fn mark_anon_dirty(&mut self, page: PageId) {
        self.pages.set_flags(page, PageFlags::DIRTY, true);
    }

    /// Reclaim the page in `pfn`, which its policy has taken off its lists: anonymous
    /// pages go to swap (a page whose slot still holds its data costs no write), file
    /// pages are dropped (written back first when dirty). Returns false, and changes
    /// nothing, when the swap architecture has no room for an anonymous page: the
    /// policy keeps it.
    pub fn evict(&mut self, pfn: u32) -> bool {
        let f = self.frame(pfn);
        debug_assert_eq!(f.state, FrameState::Page);
        if f.is_anon() {
            let page = f.page;
            let clean = !f.is_dirty() && self.pages.slot(page).is_some();
            if !clean {
                let mut space = self.swap.space(&mut self.pages);
                let stored = self.arch.swap_out(&mut space, page, self.now_ns);
                if !self.note(stored) {
                    self.counters.swap_refused += 1;
                    self.swap_full = true;
                    return false;
                }
            }
            let Some(device) = self.pages.slot(page) else {
                self.error.get_or_insert(Error::config(
                    "memory",
                    format!("page {page} swapped out without a slot (internal error)"),
                ));
                return false;
            };
            self.swap_used += 1;
            if let Some(log) = &mut self.swap_log {
                log.push(page);
            }
            self.pages.place(page, device.location(), NO_FRAME);
            self.counters.swap_outs += 1;
            self.counters.clean_swap_outs += clean as u64;
            if !self.pages.has_flags(page, PageFlags::EVER_SWAPPED) {
                self.pages.set_flags(page, PageFlags::EVER_SWAPPED, true);
                self.counters.swapped_pages += 1;
            }
        } else {
            if f.is_dirty() {
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
        self.sync_pool();
        true
    }

    /// Swap out `page`, which holds no frame (a replay of a trace's own swap events,
    /// which models no frames): the architecture writes it. False when it has no room.
    pub fn swap_out_unmapped(&mut self, page: PageId) -> crate::Result<bool> {
        self.pages.ensure(page);
        let mut space = self.swap.space(&mut self.pages);
        if !self.arch.swap_out(&mut space, page, self.now_ns)? {
            return Ok(false);
        }
        let Some(device) = self.pages.slot(page) else {
            return Err(Error::config(
                "memory",
                format!("page {page} swapped out without a slot (internal error)"),
            ));
        };
        self.pages.place(page, device.location(), NO_FRAME);
        self.swap_used += 1;
        self.counters.swap_outs += 1;
        if !self.pages.has_flags(page, PageFlags::EVER_SWAPPED) {
            self.pages.set_flags(page, PageFlags::EVER_SWAPPED, true);
            self.counters.swapped_pages += 1;
        }
        self.sync_pool();
        self.take_error().map_or(Ok(true), Err)
    }

    /// Swap in the swapped-out `page` without giving it a frame (a replay): the
    /// architecture reads it back; it is then outside the model. Returns the device.
    pub fn swap_in_unmapped(&mut self, page: PageId) -> crate::Result<SwapDevice> {
        let mut space = self.swap.space(&mut self.pages);
        let device = self.arch.swap_in(&mut space, page)?;
        self.frameless_swap_ins = true;
        self.swap_used -= 1;
        self.swap_full = false;
        self.pages.place(page, Location::Absent, NO_FRAME);
        self.sync_pool();
        self.take_error().map_or(Ok(device), Err)
    }

    /// Forget `page` (its process exited or was killed, or reclaim dropped its data):
    /// free its frame and its swap slot; a merged page leaves its shared frame (a KSM
    /// page goes with its last mapping). A resident page MUST be off its policy's lists
    /// already.
    pub fn discard(&mut self, page: PageId) {
        match self.pages.location(page) {
            at if at.is_swapped() => {
                self.swap_used -= 1;
                self.swap_full = false;
            }
            Location::Dram if self.is_merged(page) => self.unmap_shared(page),
            Location::Dram => {
                let pfn = self.pages.frame(page);
                let f = self.frame(pfn);
                if f.is_dirty() && !f.is_anon() {
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
            self.swap.space(&mut self.pages).discard(page);
            self.pages.place(page, Location::Absent, NO_FRAME);
            self.pages.set_flags(page, PageFlags::DIRTY, false);
        }
        self.sync_pool();
    }

    // ---- pages shared by merging ----

    /// Whether `page` is merged: mapped to a KSM page or the zero page.
    #[inline]
    pub fn is_merged(&self, page: PageId) -> bool {
        self.pages.has_flags(page, PageFlags::MERGED)
    }

    /// The shared frame the merged `page` maps: a KSM page's frame or [`ZERO_FRAME`];
    /// `None` for a page not merged.
    #[inline]
    pub fn shared_frame(&self, page: PageId) -> Option<u32> {
        self.is_merged(page).then(|| self.pages.frame(page))
    }

    /// The KSM page in frame `pfn`, if it holds one: its tag and the pages mapping it.
    #[inline]
    pub fn ksm_page(&self, pfn: u32) -> Option<(u32, u32)> {
        match self.ksm_mappers.get(pfn as usize) {
            Some(&mappers) if mappers > 0 => Some((self.slots[pfn as usize].page, mappers)),
            _ => None,
        }
    }

    /// KSM pages held (each a frame).
    pub fn ksm_pages(&self) -> usize {
        self.ksm_pages
    }

    /// Pages mapped to a KSM page or the zero page.
    pub fn merged_pages(&self) -> usize {
        self.merged
    }

    /// Pages mapped to the zero page by merging (the kernel's `ksm_zero_pages`).
    pub fn zero_mapped(&self) -> usize {
        self.zero_mapped
    }

    /// Map `page`, which holds no frame (its own was freed with [`Memory::discard`],
    /// its data being the same as the shared frame's), to the shared frame `to`, with
    /// content `fingerprint`. Returns the frame it maps ([`ZERO_FRAME`] for the zero
    /// page). An error, and nothing changed, when `page` is somewhere or `to` is not a
    /// KSM page, or no frame is free for a new one.
    pub fn map_shared(&mut self, page: PageId, to: Shared, fingerprint: u64) -> crate::Result<u32> {
        let broken = |m: String| Err(Error::config("memory", format!("{m} (internal error)")));
        if self.pages.location(page) != Location::Absent || self.is_merged(page) {
            return broken(format!(
                "page {page} is merged while at {:?}",
                self.pages.location(page)
            ));
        }
        let frame = match to {
            Shared::Zero => {
                self.zero_mapped += 1;
                ZERO_FRAME
            }
            Shared::Ksm(pfn) => {
                if self.ksm_page(pfn).is_none() {
                    return broken(format!(
                        "page {page} is merged into frame {pfn}, no KSM page"
                    ));
                }
                self.ksm_mappers[pfn as usize] += 1;
                pfn
            }
            Shared::NewKsm { pfn, tag } => {
                let free = (pfn as usize) < self.total() && self.pool.is_free(pfn);
                let Some(pfn) = (if free {
                    Some(pfn)
                } else {
                    self.find_free_block(0)
                }) else {
                    return broken(format!("no frame free for a KSM page of page {page}"));
                };
                self.allocate_unmovable(pfn, 0);
                self.slots[pfn as usize].page = tag;
                if self.ksm_mappers.is_empty() {
                    self.ksm_mappers = vec![0; self.total()];
                }
                self.ksm_mappers[pfn as usize] = 1;
                self.ksm_pages += 1;
                pfn
            }
        };
        self.merged += 1;
        self.pages.place(page, Location::Dram, frame);
        self.pages.set_flags(page, PageFlags::MERGED, true);
        self.pages.set_fingerprint(page, fingerprint);
        Ok(frame)
    }

    /// `page` leaves the shared frame it maps (copy-on-write: it was written, or its
    /// content changed): a KSM page is freed with its last mapping. The page holds no
    /// frame afterwards ([`Location::Absent`]): its next touch faults one in. False,
    /// and nothing changed, when it was not merged.
    pub fn unmerge(&mut self, page: PageId) -> bool {
        if !self.is_merged(page) {
            return false;
        }
        self.unmap_shared(page);
        self.pages.place(page, Location::Absent, NO_FRAME);
        true
    }

    /// Unmap the merged `page` from its shared frame (left in place: the caller places
    /// the page).
    fn unmap_shared(&mut self, page: PageId) {
        let frame = self.pages.frame(page);
        self.pages.set_flags(page, PageFlags::MERGED, false);
        self.merged -= 1;
        if frame == ZERO_FRAME {
            self.zero_mapped -= 1;
            return;
        }
        let mappers = &mut self.ksm_mappers[frame as usize];
        *mappers -= 1;
        if *mappers == 0 {
            self.ksm_pages -= 1;
            self.free_unmovable(frame, 0);
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
        let f = self.frame(pfn);
        if self.flusher && f.is_dirty() && !f.is_anon() {
            self.keep_dirty(pfn);
            return false;
        }
        self.evict(pfn)
    }

    /// A write to the resident file page in `pfn`; true when it was clean before.
    pub fn mark_dirty(&mut self, pfn: u32) -> bool {
        let f = self.frame(pfn);
        debug_assert!(f.state == FrameState::Page && !f.is_anon());
        if f.is_dirty() {
            return false;
        }
        self.pages.set_flags(f.page, PageFlags::DIRTY, true);
        self.dirty_links.push_back(&mut self.dirty, pfn);
        true
    }

    /// The dirty page in `pfn` is clean: off the dirty list.
    fn set_clean(&mut self, pfn: u32) {
        debug_assert!(self.frame(pfn).is_dirty());
        self.set_frame_flags(pfn, PageFlags::DIRTY, false);
        self.dirty_links.remove(&mut self.dirty, pfn);
    }

    /// Write back the page in `pfn` if it is still `page` and dirty (the flusher): it
    /// is clean afterwards and its `PG_reclaim` cleared. Returns whether reclaim had
    /// kept it (`PG_reclaim` was set): then its policy moves it to where reclaim meets
    /// it next (`ReclaimPolicy::rotate_reclaimable` in `mm::reclaim`).
    pub fn write_back(&mut self, pfn: u32, page: PageId) -> bool {
        let f = self.frame(pfn);
        if f.state != FrameState::Page || f.page != page || !f.is_dirty() {
            return false;
        }
        let kept = self.take_frame_flag(pfn, PageFlags::RECLAIM);
        self.set_clean(pfn);
        self.counters.writebacks += 1;
        kept
    }

    /// Reclaim met the dirty file page in `pfn` (isolated) and keeps it: `PG_reclaim`
    /// is set and the page is remembered for [`Memory::end_kept_writeback`]. The
    /// caller puts it back on a list.
    fn keep_dirty(&mut self, pfn: u32) {
        let f = self.frame(pfn);
        debug_assert!(f.is_dirty() && !f.is_anon());
        self.counters.dirty_kept += 1;
        if !f.is_reclaim() {
            self.set_frame_flags(pfn, PageFlags::RECLAIM, true);
            self.kept_dirty.push((pfn, f.page));
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

    /// Check every accounting invariant; the message says which one broke.
    pub fn check(&self) -> Result<(), String> {
        let mut free = 0;
        let mut pages = 0;
        let mut unmovable = 0;
        let mut by_owner = vec![0u32; self.resident_by_owner.len()];
        let mut dirty = 0;
        for pfn in 0..self.total() as u32 {
            let f = self.frame(pfn);
            let bit = self.pool.is_free(pfn);
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
                    dirty += usize::from(f.is_dirty() && !f.is_anon());
                    if f.is_anon() && f.is_reclaim() {
                        return Err(format!("frame {pfn}: anonymous page kept for writeback"));
                    }
                    let owner = self.pages.owner(f.page) as usize;
                    match by_owner.get_mut(owner) {
                        Some(n) => *n += 1,
                        None => return Err(format!("frame {pfn}: owner {owner} unknown")),
                    }
                    let at = self.pages.location(f.page);
                    if at != Location::Dram || self.pages.frame(f.page) != pfn {
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
            let f = self.frame(at);
            !f.is_dirty() || f.state != FrameState::Page
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
        let mut swapped = 0;
        let mut mappers = vec![0u32; self.ksm_mappers.len()];
        let (mut merged, mut zero) = (0, 0);
        for (page, entry) in self.pages.iter() {
            let slot = self.pages.slot(page);
            if entry.flags.contains(PageFlags::MERGED) {
                merged += 1;
                let frame = self.pages.frame(page);
                if entry.location != Location::Dram || slot.is_some() {
                    return Err(format!(
                        "merged page {page} is at {:?} with a slot on {slot:?}",
                        entry.location
                    ));
                }
                if self.pages.fingerprint(page).is_none() {
                    return Err(format!("merged page {page} has no content"));
                }
                if frame == ZERO_FRAME {
                    zero += 1;
                } else if let Some(n) = mappers.get_mut(frame as usize) {
                    *n += 1;
                } else {
                    return Err(format!(
                        "merged page {page} maps frame {frame}, no KSM page"
                    ));
                }
                continue;
            }
            if entry.location == Location::Dram {
                let pfn = self.pages.frame(page);
                let holds = (pfn as usize) < self.total()
                    && self.slots[pfn as usize].state == FrameState::Page
                    && self.slots[pfn as usize].page == page;
                if !holds {
                    return Err(format!(
                        "page {page} is in frame {pfn}, which holds another"
                    ));
                }
            }
            if entry.location.is_swapped() {
                swapped += 1;
                if slot.map(SwapDevice::location) != Some(entry.location) {
                    return Err(format!(
                        "page {page} is in {:?}, but its slot is on {slot:?}",
                        entry.location
                    ));
                }
            } else if slot.is_some()
                && !(self.swap.keeps_slots()
                    && (entry.location == Location::Dram
                        || (self.frameless_swap_ins && entry.location == Location::Absent))
                    && slot != Some(SwapDevice::Zram))
            {
                return Err(format!(
                    "page {page} is at {:?} but keeps a slot on {slot:?}",
                    entry.location
                ));
            }
        }
        let mut owners = vec![0u32; self.pages.len()];
        for proc in 0..self.procs.len() as ProcId {
            for &page in self.procs.owned(proc) {
                match owners.get_mut(page as usize) {
                    Some(n) => *n += 1,
                    None => return Err(format!("process {proc} owns page {page}, unknown")),
                }
            }
        }
        if let Some(page) = (0..self.pages.len() as PageId)
            .find(|&p| owners[p as usize] != self.pages.has_flags(p, PageFlags::OWNED) as u32)
        {
            return Err(format!(
                "page {page} is owned by {} processes",
                owners[page as usize]
            ));
        }
        let mut ksm_pages = 0;
        for (pfn, (&counted, &found)) in self.ksm_mappers.iter().zip(&mappers).enumerate() {
            if counted != found {
                return Err(format!(
                    "frame {pfn}: {counted} pages counted mapping it, {found} merged into it"
                ));
            }
            if counted > 0 {
                ksm_pages += 1;
                if self.slots[pfn].state != FrameState::Unmovable {
                    return Err(format!(
                        "frame {pfn} is a KSM page but {:?}",
                        self.slots[pfn].state
                    ));
                }
            }
        }
        if (ksm_pages, merged, zero) != (self.ksm_pages, self.merged, self.zero_mapped) {
            return Err(format!(
                "(KSM pages, merged pages, zero-page mappings): {:?} counted, {:?} found",
                (self.ksm_pages, self.merged, self.zero_mapped),
                (ksm_pages, merged, zero)
            ));
        }
        if ksm_pages + self.pool_held.len() > self.unmovable {
            return Err(format!(
                "{ksm_pages} KSM pages and {} zram pool frames, {} frames unmovable",
                self.pool_held.len(),
                self.unmovable
            ));
        }
        if swapped != self.swap_used {
            return Err(format!(
                "swap: {swapped} swapped pages, {} counted",
                self.swap_used
            ));
        }
        if self.pool_held.len() != self.swap.pool_frames() {
            return Err(format!(
                "{} frames held for a zram pool of {} frames",
                self.pool_held.len(),
                self.swap.pool_frames()
            ));
        }
        self.swap.validate(&self.pages).map_err(|e| e.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A memory of 8 frames with anonymous pages 0..n of process 0 faulted in.
    fn with_pages(n: PageId) -> Memory {
        let mut m = Memory::new(8, &[], 16, 1, 0);
        for page in 0..n {
            let pfn = m.find_free_block(0).unwrap();
            m.own(page, 0);
            m.fault_in(pfn, page, 0, true);
        }
        m.check().unwrap();
        m
    }

    /// Make the resident `page` a KSM page tagged `tag` with content `fp`, in its own
    /// frame (which is checked).
    fn make_ksm_page(m: &mut Memory, page: PageId, tag: u32, fp: u64) -> u32 {
        let own = m.frame_of(page).unwrap();
        m.discard(page);
        let ksm = m
            .map_shared(page, Shared::NewKsm { pfn: own, tag }, fp)
            .unwrap();
        assert_eq!(ksm, own, "the first page's frame is the KSM page");
        ksm
    }

    #[test]
    fn merged_pages_share_a_ksm_frame_freed_with_its_last_mapping() {
        let mut m = with_pages(4);
        // Page 1 becomes a KSM page in its own frame; pages 2 and 3 map it too.
        let ksm = make_ksm_page(&mut m, 1, 7, 0xab);
        for page in [2, 3] {
            m.discard(page);
            assert_eq!(m.map_shared(page, Shared::Ksm(ksm), 0xab).unwrap(), ksm);
        }
        m.check().unwrap();
        assert_eq!(m.ksm_page(ksm), Some((7, 3)));
        assert_eq!((m.ksm_pages(), m.merged_pages(), m.lru_pages()), (1, 3, 1));
        assert_eq!(m.free(), 8 - 2, "page 0 and the KSM page take a frame each");
        for page in 1..4 {
            assert_eq!(
                m.frame_of(page),
                None,
                "a merged page holds no frame of its own"
            );
            assert_eq!(m.shared_frame(page), Some(ksm));
            assert_eq!(m.pages().location(page), Location::Dram);
            assert_eq!(m.pages().fingerprint(page), Some(0xab));
        }
        assert_eq!(m.resident_of(0), 1);
        // A write copies page 2: it has no frame until it faults one in.
        assert!(m.unmerge(2));
        assert!(!m.unmerge(2), "not merged any more");
        assert_eq!(m.pages().location(2), Location::Absent);
        assert_eq!(m.fault_kind(2, true, true), FaultKind::AnonFirst);
        let pfn = m.find_free_block(0).unwrap();
        m.fault_in(pfn, 2, 0, true);
        assert_eq!(m.frame_of(2), Some(pfn));
        // Page 3 faulted in while merged (a copy-on-write through the fault path)
        // leaves the KSM page first; page 1's exit unmaps the last mapping.
        let pfn = m.find_free_block(0).unwrap();
        m.fault_in(pfn, 3, 0, true);
        assert_eq!(m.ksm_page(ksm), Some((7, 1)));
        m.check().unwrap();
        m.discard(1);
        assert_eq!(m.ksm_page(ksm), None);
        assert_eq!((m.ksm_pages(), m.merged_pages(), m.unmovable()), (0, 0, 0));
        assert_eq!(m.frame(ksm).state, FrameState::Free);
        m.check().unwrap();
    }

    #[test]
    fn the_zero_page_takes_no_frame_and_bad_merges_are_refused() {
        let mut m = with_pages(2);
        m.discard(0);
        assert_eq!(m.map_shared(0, Shared::Zero, 0).unwrap(), ZERO_FRAME);
        assert_eq!(
            (m.zero_mapped(), m.merged_pages(), m.ksm_pages()),
            (1, 1, 0)
        );
        m.check().unwrap();
        // A page with a frame, a merged page, a frame that is no KSM page: refused,
        // nothing changed.
        assert!(m.map_shared(1, Shared::Zero, 0).is_err());
        assert!(m.map_shared(0, Shared::Zero, 0).is_err());
        m.discard(1);
        assert!(m.map_shared(1, Shared::Ksm(5), 0).is_err());
        assert_eq!((m.zero_mapped(), m.merged_pages()), (1, 1));
        m.check().unwrap();
        // A new KSM page whose frame was taken goes to the lowest free frame.
        let taken = m.find_free_block(0).unwrap();
        m.allocate_unmovable(taken, 0);
        let ksm = m
            .map_shared(1, Shared::NewKsm { pfn: taken, tag: 0 }, 9)
            .unwrap();
        assert_ne!(ksm, taken);
        m.check().unwrap();
        m.discard(0);
        assert_eq!(m.zero_mapped(), 0);
        m.check().unwrap();
    }

    #[test]
    fn check_finds_a_merged_page_out_of_step() {
        let mut m = with_pages(2);
        let ksm = make_ksm_page(&mut m, 0, 1, 5);
        m.check().unwrap();
        // A merged page given a swap slot behind the memory's back.
        m.pages_mut().set_slot(0, Some(SwapDevice::Flash));
        assert!(m.check().unwrap_err().contains("merged page 0"));
        m.pages_mut().set_slot(0, None);
        // A merged page that lost its flag: it claims the KSM page's frame as its own.
        m.pages_mut().set_flags(0, PageFlags::MERGED, false);
        let e = m.check().unwrap_err();
        assert!(e.contains("holds another") || e.contains("KSM"), "{e}");
        m.pages_mut().set_flags(0, PageFlags::MERGED, true);
        m.check().unwrap();
        assert_eq!(m.shared_frame(0), Some(ksm));
    }
}
