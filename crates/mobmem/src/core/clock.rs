//! A CLOCK ring: pages in a circle of frames swept by a hand, each frame with a reference
//! bit (Corbató, "A paging experiment with the Multics system", MIT Project MAC
//! MAC-M-384, 1968).
//!
//! The ring holds at most `capacity` pages, each in one frame. Frames are created in
//! order 0, 1, 2, ... as pages arrive; a frame emptied by [`ClockRing::remove`] is reused
//! by the next [`ClockRing::insert`] before a new frame is created (the most recently
//! emptied first). The ring also maps each page to its frame.
//!
//! Contract of the sweep ([`ClockRing::sweep`], [`ClockRing::victim`]): starting at the
//! hand, the hand examines frames in order, wrapping at the last frame, and skips empty
//! ones; for each page it asks whether to spare it. The first page not spared is the
//! victim: the hand stops just past its frame, and the victim stays in the ring until the
//! caller removes or replaces it. So the page that takes the victim's frame gets a whole
//! revolution before the hand comes back to it. With second chance on the reference bits
//! ([`ClockRing::victim`]) a spared page has its bit cleared, and the sweep ends within
//! one revolution and one frame.

use crate::core::ensure_index;
use crate::trace::PageId;

/// Frame content of a frame with no page.
const EMPTY: PageId = PageId::MAX;
/// `frame_of` value of a page not in the ring.
const NO_FRAME: u32 = u32::MAX;

/// Frames of one memory in a circle, with a hand and a reference bit per frame.
#[derive(Debug, Clone)]
pub struct ClockRing {
    capacity: usize,
    /// The page in each frame (`EMPTY` when free); grows up to `capacity` frames.
    pages: Vec<PageId>,
    referenced: Vec<bool>,
    /// Emptied frames, the most recently emptied last.
    free: Vec<u32>,
    /// The next frame the hand examines; always below `pages.len()` once a sweep ran.
    hand: usize,
    used: usize,
    /// Frame of each page (`NO_FRAME` when not in the ring); grows on demand.
    frame_of: Vec<u32>,
}

impl ClockRing {
    /// An empty ring of `capacity` frames; `page_count_hint` sizes the page-to-frame map,
    /// which grows on demand.
    pub fn new(capacity: usize, page_count_hint: usize) -> Self {
        // Never reserve more frames than the pages that can come in.
        let reserve = capacity.min(page_count_hint.max(1));
        ClockRing {
            capacity,
            pages: Vec::with_capacity(reserve),
            referenced: Vec::with_capacity(reserve),
            free: Vec::new(),
            hand: 0,
            used: 0,
            frame_of: vec![NO_FRAME; page_count_hint],
        }
    }

    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// Pages in the ring.
    pub fn len(&self) -> usize {
        self.used
    }

    pub fn is_empty(&self) -> bool {
        self.used == 0
    }

    pub fn is_full(&self) -> bool {
        self.used >= self.capacity
    }

    /// The frame holding `page`, if it is in the ring.
    #[inline]
    pub fn frame_of(&self, page: PageId) -> Option<u32> {
        match self.frame_of.get(page as usize) {
            Some(&frame) if frame != NO_FRAME => Some(frame),
            _ => None,
        }
    }

    pub fn contains(&self, page: PageId) -> bool {
        self.frame_of(page).is_some()
    }

    /// The page in `frame`, if any.
    pub fn page(&self, frame: u32) -> Option<PageId> {
        self.pages
            .get(frame as usize)
            .copied()
            .filter(|&p| p != EMPTY)
    }

    /// Set the reference bit of `frame`.
    #[inline]
    pub fn reference(&mut self, frame: u32) {
        self.referenced[frame as usize] = true;
    }

    pub fn is_referenced(&self, frame: u32) -> bool {
        self.referenced[frame as usize]
    }

    /// Put `page`, which is not in the ring, in a free frame with its bit clear: the
    /// most recently emptied frame, else a new one. `None` (nothing done) when full.
    pub fn insert(&mut self, page: PageId) -> Option<u32> {
        if self.is_full() {
            return None;
        }
        let frame = match self.free.pop() {
            Some(frame) => frame,
            None => {
                self.pages.push(EMPTY);
                self.referenced.push(false);
                // Frame numbers fit in u32: each frame holds a distinct page id.
                (self.pages.len() - 1) as u32
            }
        };
        self.put(frame, page);
        self.used += 1;
        Some(frame)
    }

    /// Replace the page in the occupied `frame` with `page` (not in the ring), its bit
    /// clear; returns the page that was there.
    pub fn replace(&mut self, frame: u32, page: PageId) -> PageId {
        let old = self.pages[frame as usize];
        self.frame_of[old as usize] = NO_FRAME;
        self.put(frame, page);
        old
    }

    /// Empty the occupied `frame`; returns its page.
    pub fn remove(&mut self, frame: u32) -> PageId {
        let page = std::mem::replace(&mut self.pages[frame as usize], EMPTY);
        self.frame_of[page as usize] = NO_FRAME;
        self.free.push(frame);
        self.used -= 1;
        page
    }

    /// Remove `page` if it is in the ring; returns its frame.
    pub fn remove_page(&mut self, page: PageId) -> Option<u32> {
        let frame = self.frame_of(page)?;
        self.remove(frame);
        Some(frame)
    }

    fn put(&mut self, frame: u32, page: PageId) {
        ensure_index(&mut self.frame_of, page, NO_FRAME);
        self.pages[frame as usize] = page;
        self.referenced[frame as usize] = false;
        self.frame_of[page as usize] = frame;
    }

    /// Sweep from the hand for a victim: `spare(page, bit)` is asked for each page met,
    /// with its frame's reference bit, and returns whether to pass over it. The victim's
    /// frame is returned with the hand just past it; `None` when the ring is empty.
    /// `spare` must eventually refuse some page, or the sweep does not end.
    #[inline]
    pub fn sweep(&mut self, mut spare: impl FnMut(PageId, &mut bool) -> bool) -> Option<u32> {
        if self.used == 0 {
            return None;
        }
        let n = self.pages.len();
        loop {
            let frame = self.hand;
            self.hand = if frame + 1 == n { 0 } else { frame + 1 };
            let page = self.pages[frame];
            if page != EMPTY && !spare(page, &mut self.referenced[frame]) {
                return Some(frame as u32);
            }
        }
    }

    /// Second chance: sweep, clearing set bits, to the first page whose bit is clear.
    #[inline]
    pub fn victim(&mut self) -> Option<u32> {
        self.sweep(|_, bit| std::mem::replace(bit, false))
    }

    /// The pages in the order the hand examines them, each with its reference bit.
    pub fn from_hand(&self) -> impl Iterator<Item = (PageId, bool)> + '_ {
        let n = self.pages.len();
        (0..n)
            .map(move |i| (self.hand + i) % n)
            .filter(move |&f| self.pages[f] != EMPTY)
            .map(move |f| (self.pages[f], self.referenced[f]))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn view(ring: &ClockRing) -> Vec<(PageId, bool)> {
        ring.from_hand().collect()
    }

    #[test]
    fn second_chance_by_hand() {
        // Capacity 3; the ring listed from the hand as page(bit).
        let mut ring = ClockRing::new(3, 0);
        //   insert 10 11 12 into frames 0 1 2         10(0) 11(0) 12(0)
        assert_eq!(ring.insert(10), Some(0));
        assert_eq!(ring.insert(11), Some(1));
        assert_eq!(ring.insert(12), Some(2));
        assert!(ring.is_full());
        assert_eq!(ring.insert(13), None);
        //   reference 10                               10(1) 11(0) 12(0)
        ring.reference(ring.frame_of(10).unwrap());
        assert_eq!(view(&ring), vec![(10, true), (11, false), (12, false)]);
        //   victim: clears 10, picks 11 in frame 1, hand past it
        assert_eq!(ring.victim(), Some(1));
        assert_eq!(view(&ring), vec![(12, false), (10, false), (11, false)]);
        //   replace 11 by 13                           12(0) 10(0) 13(0)
        assert_eq!(ring.replace(1, 13), 11);
        assert!(!ring.contains(11));
        assert_eq!(ring.frame_of(13), Some(1));
        //   all bits set: the victim is the page at the hand after a full revolution
        for page in [10, 12, 13] {
            ring.reference(ring.frame_of(page).unwrap());
        }
        assert_eq!(ring.victim(), Some(2));
        assert_eq!(ring.page(2), Some(12));
        assert_eq!(view(&ring), vec![(10, false), (13, false), (12, false)]);
    }

    #[test]
    fn emptied_frames_are_reused_and_skipped_by_the_hand() {
        let mut ring = ClockRing::new(4, 0);
        for page in 0..3 {
            ring.insert(page);
        }
        // Frames 0 and 2 emptied: the next insert takes 2 (emptied last), then 0, then 3.
        assert_eq!(ring.remove_page(0), Some(0));
        assert_eq!(ring.remove(2), 2);
        assert_eq!(ring.remove_page(0), None);
        assert_eq!(ring.len(), 1);
        // The sweep skips empty frames: page 1 in frame 1 is the only candidate.
        assert_eq!(ring.victim(), Some(1));
        assert_eq!(view(&ring), vec![(1, false)]);
        assert_eq!(ring.insert(7), Some(2));
        assert_eq!(ring.insert(8), Some(0));
        assert_eq!(ring.insert(9), Some(3));
        assert_eq!(ring.len(), 4);
        // Hand at frame 2 (just past 1): 7, 9, 8, 1.
        assert_eq!(
            view(&ring).iter().map(|&(p, _)| p).collect::<Vec<_>>(),
            vec![7, 9, 8, 1]
        );
    }

    #[test]
    fn a_custom_sweep_sees_every_page_from_the_hand() {
        let mut ring = ClockRing::new(3, 0);
        for page in [5, 6, 7] {
            ring.insert(page);
        }
        // Spare each page twice before giving one up: two full revolutions.
        let mut seen = Vec::new();
        let mut passes = [0u8; 8];
        let victim = ring.sweep(|page, _| {
            seen.push(page);
            passes[page as usize] += 1;
            passes[page as usize] <= 2
        });
        assert_eq!(victim, Some(0));
        assert_eq!(seen, vec![5, 6, 7, 5, 6, 7, 5]);
        assert_eq!(ClockRing::new(2, 0).victim(), None);
        assert_eq!(ClockRing::new(0, 0).insert(1), None);
    }
}
