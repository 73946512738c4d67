//! The page table: for every page of a run, where its data is, its flags, the process
//! that owns it, the frame that holds it and, where a mechanism needs it, a fingerprint
//! of its content.
//!
//! Pages are the trace's dense ids ([`PageId`]), so the table is a vector indexed by page:
//! one 4-byte word a page holds the location, the dirty bit and the owner; the other
//! flags, frame numbers and fingerprints are vectors allocated only once some page has
//! one. Each mechanism keeps only what is its own beside it (its lists, its slot order, its generations); what every mechanism needs to
//! agree on, so that several can run on one memory, is here:
//! - **location**: which tier or device holds the page's data now ([`Location`]);
//! - **frame**: the frame of that tier's [`FramePool`](super::frames::FramePool) holding
//!   it, where the mechanism numbers frames ([`NO_FRAME`] otherwise);
//! - **owner**: the process the page is charged to; each mechanism states its rule (the
//!   first toucher, the latest accessor, the task that faulted it in);
//! - **flags**: [`PageFlags`];
//! - **fingerprint**: a 64-bit content hash, kept only by mechanisms that compare
//!   contents (deduplication); [`PageTable::fingerprint`] is `None` until one is set.
//!
//! A page merged with others (kernel samepage merging) is at [`Location::Dram`] with the
//! [`PageFlags::MERGED`] flag: its frame is the shared one (a KSM page's frame, or
//! [`ZERO_FRAME`] for the kernel's zero page), not a frame of its own, and its
//! fingerprint is the content it was merged with.

use bitflags::bitflags;

use super::frames::FrameId;
use crate::trace::{PageId, ProcId, MAX_PROC_ID};

/// The frame of a page that has none (not in a numbered frame).
pub const NO_FRAME: FrameId = FrameId::MAX;
/// The frame of the kernel's zero page, which pages of zeros share once merged.
pub const ZERO_FRAME: FrameId = FrameId::MAX - 1;
/// The owner of a page nobody owns yet.
pub const NO_OWNER: ProcId = ProcId::MAX;

/// Where a page's data is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[repr(u8)]
pub enum Location {
    /// Nowhere: never touched, or freed with its process.
    #[default]
    Absent,
    /// In a DRAM frame.
    Dram,
    /// In a PCM frame of a hybrid main memory.
    Pcm,
    /// Swapped out to a non-volatile-memory swap device.
    SwapNvm,
    /// Swapped out to a swap area on flash storage.
    SwapFlash,
    /// Swapped out, compressed, into the zram pool.
    Zram,
    /// A file page only in its file: it was in the page cache and was dropped.
    Storage,
}

impl Location {
    /// In main memory, mapped (DRAM or PCM).
    #[inline]
    pub fn is_resident(self) -> bool {
        matches!(self, Location::Dram | Location::Pcm)
    }

    /// Held by a swap device.
    #[inline]
    pub fn is_swapped(self) -> bool {
        matches!(
            self,
            Location::SwapNvm | Location::SwapFlash | Location::Zram
        )
    }
}

bitflags! {
    /// Per-page flags, one vocabulary for every mechanism. DIRTY, which every access may
    /// change, is kept in the page's hot word; the others in two bytes a page, allocated
    /// only once some page has one.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
    pub struct PageFlags: u16 {
        /// The data in memory differs from its copy below (the file, or the swap slot),
        /// so evicting the page writes it.
        const DIRTY = 1;
        /// An anonymous page (process memory), as opposed to a file page.
        const ANON = 1 << 1;
        /// On its owner's list of pages (the swap machine's per-app page lists).
        const OWNED = 1 << 2;
        /// Written to swap at least once: part of the swap footprint.
        const EVER_SWAPPED = 1 << 3;
        /// Its data was lost: it was swapped out when the low-memory killer took its
        /// process, so the next touch finds nothing to read back.
        const LOST = 1 << 4;
        /// Mapped to a frame shared by merging: a KSM page (its frame is the KSM page's)
        /// or the kernel's zero page ([`ZERO_FRAME`]). Its fingerprint is the content it
        /// was merged with; a write gives it a frame of its own (copy-on-write).
        ///
        /// A merged page is at [`Location::Dram`] (its data is in memory, mapped), but
        /// the frame is not its own: it holds no frame of its own and no swap slot, and
        /// is on no reclaim list (the core memory's `frame_of` says `None` for it).
        const MERGED = 1 << 5;
        /// The accessed ("young") bit of the page's mappings: set by every access,
        /// cleared by reclaim's scans.
        const YOUNG = 1 << 6;
        /// `PG_referenced`: a second reference since reclaim last looked.
        const REFERENCED = 1 << 7;
        /// `PG_reclaim`: reclaim met the page dirty and kept it for the flusher; when
        /// its writeback ends it goes where reclaim meets it next.
        const RECLAIM = 1 << 8;
    }
}

impl PageFlags {
    /// The bits that live only while the page holds a frame: a page freed or evicted
    /// loses them, as its frame's `struct page` is reused.
    pub const FRAME_BITS: PageFlags = PageFlags::YOUNG
        .union(PageFlags::REFERENCED)
        .union(PageFlags::RECLAIM);
}

const LOCATIONS: [Location; 7] = [
    Location::Absent,
    Location::Dram,
    Location::Pcm,
    Location::SwapNvm,
    Location::SwapFlash,
    Location::Zram,
    Location::Storage,
];

// The hot word of a page: bits 0-2 its location, bit 3 DIRTY, bits 4-31 its owner.
// Process ids have 27 bits (MAX_PROC_ID), so the 28-bit owner field also holds "no
// owner". One 4-byte word a page: an access reads one, and so does an eviction, which
// needs the victim's location and owner together.
const LOCATION_MASK: u32 = 0b111;
const DIRTY_BIT: u32 = 1 << 3;
const OWNER_SHIFT: u32 = 4;
const OWNER_NONE: u32 = (1 << (32 - OWNER_SHIFT)) - 1;
const _: () = assert!(MAX_PROC_ID < OWNER_NONE);
const ABSENT_WORD: u32 = OWNER_NONE << OWNER_SHIFT;

#[inline]
fn location_of(word: u32) -> Location {
    LOCATIONS[(word & LOCATION_MASK) as usize]
}

#[inline]
fn owner_of(word: u32) -> ProcId {
    match word >> OWNER_SHIFT {
        OWNER_NONE => NO_OWNER,
        owner => owner,
    }
}

#[inline]
fn owner_bits(owner: ProcId) -> u32 {
    if owner == NO_OWNER {
        OWNER_NONE << OWNER_SHIFT
    } else {
        debug_assert!(owner <= MAX_PROC_ID, "owner {owner} has more than 27 bits");
        owner << OWNER_SHIFT
    }
}

/// One page's entry, as read from the table (its frame is kept apart:
/// [`PageTable::frame`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PageEntry {
    pub owner: ProcId,
    pub flags: PageFlags,
    pub location: Location,
}

impl PageEntry {
    /// A page never touched.
    pub const ABSENT: PageEntry = PageEntry {
        owner: NO_OWNER,
        flags: PageFlags::empty(),
        location: Location::Absent,
    };

    #[inline]
    pub fn is_dirty(&self) -> bool {
        self.flags.contains(PageFlags::DIRTY)
    }
}

/// Every page's entry, indexed by page id; it grows as pages appear. Owners are process
/// ids ([`MAX_PROC_ID`] at most) or [`NO_OWNER`]. The flags other than DIRTY, frames
/// and fingerprints are vectors of their own, allocated only by the mechanisms that use
/// them.
#[derive(Debug, Clone, Default)]
pub struct PageTable {
    words: Vec<u32>,
    /// Flags other than DIRTY, empty until one is set.
    cold_flags: Vec<PageFlags>,
    /// Frame of each page, empty until a page is placed in a numbered frame.
    frames: Vec<FrameId>,
    /// Content fingerprints, empty until the first is set.
    fingerprints: Vec<Option<u64>>,
    /// The swap device holding a copy of each page (the location of a swapped-out
    /// page; a page back in memory may keep its slot, as in the kernel's swap cache),
    /// empty until the first slot is taken: 0 for none, else a [`SwapDevice`].
    slots: Vec<u8>,
}

/// A device that holds swapped pages.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
#[repr(u8)]
pub enum SwapDevice {
    Nvm = 1,
    Flash = 2,
    /// The compressed pool in DRAM.
    Zram = 3,
}

impl SwapDevice {
    /// The page-table location of a page swapped out to this device.
    pub fn location(self) -> Location {
        match self {
            SwapDevice::Nvm => Location::SwapNvm,
            SwapDevice::Flash => Location::SwapFlash,
            SwapDevice::Zram => Location::Zram,
        }
    }

    fn from_code(code: u8) -> Option<SwapDevice> {
        match code {
            1 => Some(SwapDevice::Nvm),
            2 => Some(SwapDevice::Flash),
            3 => Some(SwapDevice::Zram),
            _ => None,
        }
    }
}

impl PageTable {
    /// A table sized for `pages` pages (it grows on demand).
    pub fn with_pages(pages: usize) -> Self {
        PageTable {
            words: vec![ABSENT_WORD; pages],
            cold_flags: Vec::new(),
            frames: Vec::new(),
            fingerprints: Vec::new(),
            slots: Vec::new(),
        }
    }

    /// Pages the table has entries for.
    pub fn len(&self) -> usize {
        self.words.len()
    }

    pub fn is_empty(&self) -> bool {
        self.words.is_empty()
    }

    /// Make `page` a valid index (doubling, so growth is amortised).
    #[inline]
    pub fn ensure(&mut self, page: PageId) {
        if page as usize >= self.words.len() {
            super::ensure_index(&mut self.words, page, ABSENT_WORD);
        }
    }

    /// Bring `page`'s entry into the cache (a hint; see [`crate::core::prefetch`]).
    #[inline]
    pub fn prefetch(&self, page: PageId) {
        super::prefetch::prefetch(&self.words, page as usize);
    }

    /// The entry of `page`; pages past the table are absent.
    #[inline]
    pub fn entry(&self, page: PageId) -> PageEntry {
        match self.words.get(page as usize) {
            Some(&word) => PageEntry {
                owner: owner_of(word),
                flags: self.flags(page),
                location: location_of(word),
            },
            None => PageEntry::ABSENT,
        }
    }

    /// Where `page` is; pages past the table are absent.
    #[inline]
    pub fn location(&self, page: PageId) -> Location {
        self.words
            .get(page as usize)
            .map_or(Location::Absent, |&w| location_of(w))
    }

    /// The flags of `page`; pages past the table have none.
    #[inline]
    pub fn flags(&self, page: PageId) -> PageFlags {
        let dirty = self.is_dirty(page);
        let cold = self
            .cold_flags
            .get(page as usize)
            .copied()
            .unwrap_or_default();
        if dirty {
            cold | PageFlags::DIRTY
        } else {
            cold
        }
    }

    #[inline]
    pub fn has_flags(&self, page: PageId, flags: PageFlags) -> bool {
        self.flags(page).contains(flags)
    }

    #[inline]
    pub fn is_dirty(&self, page: PageId) -> bool {
        self.words
            .get(page as usize)
            .is_some_and(|&w| w & DIRTY_BIT != 0)
    }

    /// The process `page` is charged to ([`NO_OWNER`] for none).
    #[inline]
    pub fn owner(&self, page: PageId) -> ProcId {
        self.words
            .get(page as usize)
            .map_or(NO_OWNER, |&w| owner_of(w))
    }

    /// Charge `page`, which MUST be within the table ([`PageTable::ensure`]), to `owner`
    /// (a process id or [`NO_OWNER`]).
    #[inline]
    pub fn set_owner(&mut self, page: PageId, owner: ProcId) {
        let word = &mut self.words[page as usize];
        *word = (*word & (LOCATION_MASK | DIRTY_BIT)) | owner_bits(owner);
    }

    /// Charge `page`, which MUST be within the table, to `owner`, and mark it dirty if
    /// `write` (one store: what a mechanism that charges pages to their latest accessor
    /// does on every access).
    #[inline]
    pub fn touch(&mut self, page: PageId, owner: ProcId, write: bool) {
        let word = &mut self.words[page as usize];
        *word =
            (*word & (LOCATION_MASK | DIRTY_BIT)) | (write as u32 * DIRTY_BIT) | owner_bits(owner);
    }

    /// Move `page`, which MUST be within the table, to `location`, into `frame`
    /// ([`NO_FRAME`] where frames are not numbered).
    #[inline]
    pub fn place(&mut self, page: PageId, location: Location, frame: FrameId) {
        let word = &mut self.words[page as usize];
        *word = (*word & !LOCATION_MASK) | location as u32;
        if frame != NO_FRAME {
            super::ensure_index(&mut self.frames, page, NO_FRAME);
            self.frames[page as usize] = frame;
        } else if let Some(f) = self.frames.get_mut(page as usize) {
            *f = NO_FRAME;
        }
    }

    /// The frame holding `page`, [`NO_FRAME`] when it is in none.
    #[inline]
    pub fn frame(&self, page: PageId) -> FrameId {
        self.frames.get(page as usize).copied().unwrap_or(NO_FRAME)
    }

    /// Set or clear `flags` of `page`, which MUST be within the table.
    #[inline]
    pub fn set_flags(&mut self, page: PageId, flags: PageFlags, on: bool) {
        if flags.contains(PageFlags::DIRTY) {
            let word = &mut self.words[page as usize];
            *word = (*word & !DIRTY_BIT) | (on as u32 * DIRTY_BIT);
        }
        let cold = flags - PageFlags::DIRTY;
        if cold.is_empty() {
            return;
        }
        if on {
            super::ensure_index(&mut self.cold_flags, page, PageFlags::empty());
        }
        if let Some(now) = self.cold_flags.get_mut(page as usize) {
            now.set(cold, on);
        }
    }

    /// The content fingerprint of `page`, if one was set.
    pub fn fingerprint(&self, page: PageId) -> Option<u64> {
        self.fingerprints.get(page as usize).copied().flatten()
    }

    pub fn set_fingerprint(&mut self, page: PageId, fingerprint: u64) {
        super::ensure_index(&mut self.fingerprints, page, None);
        self.fingerprints[page as usize] = Some(fingerprint);
    }

    /// The device holding `page`'s swap slot, if it has one.
    #[inline]
    pub fn slot(&self, page: PageId) -> Option<SwapDevice> {
        SwapDevice::from_code(self.slots.get(page as usize).copied().unwrap_or(0))
    }

    /// Give `page`, which MUST be within the table, a swap slot on `device` (or none).
    #[inline]
    pub fn set_slot(&mut self, page: PageId, device: Option<SwapDevice>) {
        let code = device.map_or(0, |d| d as u8);
        if code != 0 {
            super::ensure_index(&mut self.slots, page, 0);
        }
        if let Some(s) = self.slots.get_mut(page as usize) {
            *s = code;
        }
    }

    /// Pages holding a swap slot on `device` (O(pages): for checks).
    pub fn count_slots(&self, device: SwapDevice) -> usize {
        self.slots.iter().filter(|&&c| c == device as u8).count()
    }

    /// Every page with its entry, in page order.
    pub fn iter(&self) -> impl Iterator<Item = (PageId, PageEntry)> + '_ {
        (0..self.words.len() as PageId).map(|page| (page, self.entry(page)))
    }

    /// Pages at `location` (O(pages): for checks and reports).
    pub fn count_at(&self, location: Location) -> usize {
        self.words
            .iter()
            .filter(|&&w| location_of(w) == location)
            .count()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_placed_page_costs_four_bytes() {
        // Memory per distinct page is a benchmark figure: a mechanism that only places
        // pages, marks them dirty and charges them allocates one word a page.
        let mut table = PageTable::with_pages(0);
        for page in 0..1000 {
            table.ensure(page);
            table.place(page, Location::Dram, NO_FRAME);
            table.touch(page, page % 7, page % 3 == 0);
        }
        assert!(table.cold_flags.is_empty() && table.frames.is_empty());
        assert_eq!(std::mem::size_of_val(&table.words[0]), 4);
    }

    #[test]
    fn every_location_owner_and_flag_survives_the_packing() {
        let mut table = PageTable::with_pages(1);
        for location in LOCATIONS {
            for owner in [0, 1, 12345, MAX_PROC_ID, NO_OWNER] {
                for bits in 0..512u16 {
                    let flags = PageFlags::from_bits_retain(bits);
                    table.place(0, location, NO_FRAME);
                    table.set_owner(0, owner);
                    table.set_flags(0, PageFlags::all(), false);
                    table.set_flags(0, flags, true);
                    let want = PageEntry {
                        owner,
                        flags,
                        location,
                    };
                    assert_eq!(table.entry(0), want);
                    table.touch(0, owner, false);
                    assert_eq!(table.entry(0), want, "a read keeps the dirty bit");
                }
            }
        }
    }

    #[test]
    fn pages_past_the_table_are_absent_and_ensure_grows_it() {
        let mut table = PageTable::with_pages(2);
        assert_eq!(table.entry(10), PageEntry::ABSENT);
        table.ensure(10);
        assert!(table.len() >= 11);
        table.place(10, Location::Pcm, 3);
        table.set_flags(10, PageFlags::DIRTY | PageFlags::ANON, true);
        table.set_owner(10, 7);
        let e = table.entry(10);
        assert_eq!(
            (e.location, table.frame(10), e.owner),
            (Location::Pcm, 3, 7)
        );
        assert_eq!(table.frame(9), NO_FRAME);
        table.place(10, Location::Dram, NO_FRAME);
        assert_eq!(table.frame(10), NO_FRAME);
        table.place(10, Location::Pcm, 3);
        assert!(e.is_dirty() && table.has_flags(10, PageFlags::ANON));
        table.set_flags(10, PageFlags::DIRTY, false);
        assert!(!table.entry(10).is_dirty());
        assert_eq!(table.count_at(Location::Pcm), 1);
        assert_eq!(table.count_at(Location::Absent), table.len() - 1);
    }

    #[test]
    fn fingerprints_are_none_until_set() {
        let mut table = PageTable::with_pages(4);
        assert_eq!(table.fingerprint(2), None);
        table.set_fingerprint(2, 0xfeed);
        assert_eq!(table.fingerprint(2), Some(0xfeed));
        assert_eq!(table.fingerprint(1), None);
        assert_eq!(table.fingerprint(100), None);
    }

    #[test]
    fn locations_classify() {
        assert!(Location::Dram.is_resident() && Location::Pcm.is_resident());
        assert!(!Location::Zram.is_resident() && Location::Zram.is_swapped());
        assert!(!Location::Storage.is_swapped() && !Location::Absent.is_resident());
    }
}
