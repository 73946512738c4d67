//! The page table: for every page of a run, where its data is, its flags, the process
//! that owns it, the frame that holds it and, where a mechanism needs it, a fingerprint
//! of its content.
//!
//! Pages are the trace's dense ids ([`PageId`]), so the table is a vector indexed by page:
//! six bytes a page, location and flags in two bytes and the owner beside them; frame
//! numbers and fingerprints are vectors allocated only once some page has one. Each mechanism keeps only what is its own
//! beside it (its lists, its slot order, its generations); what every mechanism needs to
//! agree on, so that several can run on one memory, is here:
//! - **location**: which tier or device holds the page's data now ([`Location`]);
//! - **frame**: the frame of that tier's [`FramePool`](super::frames::FramePool) holding
//!   it, where the mechanism numbers frames ([`NO_FRAME`] otherwise);
//! - **owner**: the process the page is charged to; each mechanism states its rule (the
//!   first toucher, the latest accessor, the task that faulted it in);
//! - **flags**: [`PageFlags`];
//! - **fingerprint**: a 64-bit content hash, kept only by mechanisms that compare
//!   contents (deduplication); [`PageTable::fingerprint`] is `None` until one is set.

use bitflags::bitflags;

use super::frames::FrameId;
use crate::trace::{PageId, ProcId};

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
    /// Per-page flags, one vocabulary for every mechanism (up to 13: they share two
    /// bytes with the location).
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
        const MERGED = 1 << 5;
    }
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
const LOCATION_BITS: u16 = 3;
const LOCATION_MASK: u16 = (1 << LOCATION_BITS) - 1;

/// One page's location and flags in two bytes: bits 0-2 the location, the rest flags.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
struct PageState(u16);

impl PageState {
    #[inline]
    fn location(self) -> Location {
        LOCATIONS[(self.0 & LOCATION_MASK) as usize]
    }
    #[inline]
    fn flags(self) -> PageFlags {
        PageFlags::from_bits_retain(self.0 >> LOCATION_BITS)
    }
    #[inline]
    fn new(location: Location, flags: PageFlags) -> Self {
        PageState(location as u16 | flags.bits() << LOCATION_BITS)
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

/// What every mechanism reads on an access: the state and the owner, packed into six
/// bytes so that both come with one cache line (an eviction reads the victim's
/// owner right after its location).
#[derive(Debug, Clone, Copy)]
#[repr(C, packed)]
struct PackedEntry {
    state: PageState,
    owner: ProcId,
}

impl PackedEntry {
    const ABSENT: PackedEntry = PackedEntry {
        state: PageState(0),
        owner: NO_OWNER,
    };
}

/// Every page's entry, indexed by page id; it grows as pages appear. Frames and
/// fingerprints are vectors of their own, allocated only by the mechanisms that number
/// frames or compare contents.
#[derive(Debug, Clone, Default)]
pub struct PageTable {
    entries: Vec<PackedEntry>,
    /// Frame of each page, empty until a page is placed in a numbered frame.
    frames: Vec<FrameId>,
    /// Content fingerprints, empty until the first is set.
    fingerprints: Vec<Option<u64>>,
}

impl PageTable {
    /// A table sized for `pages` pages (it grows on demand).
    pub fn with_pages(pages: usize) -> Self {
        PageTable {
            entries: vec![PackedEntry::ABSENT; pages],
            frames: Vec::new(),
            fingerprints: Vec::new(),
        }
    }

    /// Pages the table has entries for.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Make `page` a valid index (doubling, so growth is amortised).
    #[inline]
    pub fn ensure(&mut self, page: PageId) {
        if page as usize >= self.entries.len() {
            super::ensure_index(&mut self.entries, page, PackedEntry::ABSENT);
        }
    }

    /// The entry of `page`; pages past the table are absent.
    #[inline]
    pub fn entry(&self, page: PageId) -> PageEntry {
        match self.entries.get(page as usize).copied() {
            Some(PackedEntry { state, owner }) => PageEntry {
                owner,
                flags: state.flags(),
                location: state.location(),
            },
            None => PageEntry::ABSENT,
        }
    }

    /// Where `page` is; pages past the table are absent.
    #[inline]
    pub fn location(&self, page: PageId) -> Location {
        self.entries
            .get(page as usize)
            .map_or(Location::Absent, |e| e.state.location())
    }

    /// The flags of `page`; pages past the table have none.
    #[inline]
    pub fn flags(&self, page: PageId) -> PageFlags {
        self.entries
            .get(page as usize)
            .map_or(PageFlags::empty(), |e| e.state.flags())
    }

    #[inline]
    pub fn has_flags(&self, page: PageId, flags: PageFlags) -> bool {
        self.flags(page).contains(flags)
    }

    #[inline]
    pub fn is_dirty(&self, page: PageId) -> bool {
        self.has_flags(page, PageFlags::DIRTY)
    }

    /// The process `page` is charged to ([`NO_OWNER`] for none).
    #[inline]
    pub fn owner(&self, page: PageId) -> ProcId {
        self.entries
            .get(page as usize)
            .map_or(NO_OWNER, |e| e.owner)
    }

    /// Charge `page`, which MUST be within the table ([`PageTable::ensure`]), to `owner`.
    #[inline]
    pub fn set_owner(&mut self, page: PageId, owner: ProcId) {
        self.entries[page as usize].owner = owner;
    }

    /// Charge `page`, which MUST be within the table, to `owner`, and mark it dirty if
    /// `write` (one store: what a mechanism that charges pages to their latest accessor
    /// does on every access).
    #[inline]
    pub fn touch(&mut self, page: PageId, owner: ProcId, write: bool) {
        let entry = &mut self.entries[page as usize];
        entry.owner = owner;
        entry.state.0 |= (write as u16 * PageFlags::DIRTY.bits()) << LOCATION_BITS;
    }

    /// Move `page`, which MUST be within the table, to `location`, into `frame`
    /// ([`NO_FRAME`] where frames are not numbered).
    #[inline]
    pub fn place(&mut self, page: PageId, location: Location, frame: FrameId) {
        let entry = &mut self.entries[page as usize];
        entry.state = PageState::new(location, entry.state.flags());
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
        let entry = &mut self.entries[page as usize];
        let mut now = entry.state.flags();
        now.set(flags, on);
        entry.state = PageState::new(entry.state.location(), now);
    }

    /// The content fingerprint of `page`, if one was set.
    pub fn fingerprint(&self, page: PageId) -> Option<u64> {
        self.fingerprints.get(page as usize).copied().flatten()
    }

    pub fn set_fingerprint(&mut self, page: PageId, fingerprint: u64) {
        super::ensure_index(&mut self.fingerprints, page, None);
        self.fingerprints[page as usize] = Some(fingerprint);
    }

    /// Every page with its entry, in page order.
    pub fn iter(&self) -> impl Iterator<Item = (PageId, PageEntry)> + '_ {
        (0..self.entries.len() as PageId).map(|page| (page, self.entry(page)))
    }

    /// Pages at `location` (O(pages): for checks and reports).
    pub fn count_at(&self, location: Location) -> usize {
        self.entries
            .iter()
            .filter(|e| e.state.location() == location)
            .count()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_page_costs_six_bytes() {
        // Memory per distinct page is a benchmark figure: two state bytes and an owner.
        assert_eq!(std::mem::size_of::<PackedEntry>(), 6);
    }

    #[test]
    fn every_location_and_flag_survives_the_packing() {
        for location in LOCATIONS {
            for bits in 0..1u16 << (16 - LOCATION_BITS) {
                let flags = PageFlags::from_bits_retain(bits);
                let state = PageState::new(location, flags);
                assert_eq!((state.location(), state.flags()), (location, flags));
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
