//! Frame pools: the page frames of one memory tier (DRAM, PCM, an NVM swap device), which
//! of them are free, which frame the next page gets, and how often each frame was written
//! (its wear).
//!
//! Two allocation orders, because the mechanisms depend on them:
//! - [`AllocOrder::LastFreed`]: the most recently freed frame first (a free stack; frame 0
//!   first on a fresh pool). Cheap, and it concentrates writes on few frames, which is
//!   what a hybrid memory without wear leveling does to its PCM.
//! - [`AllocOrder::Lowest`]: the lowest free frame, and for a block of 2^k frames the
//!   lowest naturally aligned wholly free block, as the buddy allocator hands out aligned
//!   blocks and refills the holes reclaim leaves (mm/page_alloc.c). Which frames end up
//!   adjacent then depends on the order pages came and went, which is what lumpy reclaim
//!   and high-order allocations work with. Free frames are a bitmap, so finding the
//!   lowest free frame or block is a word scan.
//!
//! Frames are numbered `0..total`; a pool never hands out a frame twice before it is
//! released, and never holds more than `total` (checked by the property tests).

/// A frame number within its pool.
pub type FrameId = u32;

/// Which free frame a pool hands out next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AllocOrder {
    /// The most recently freed frame (frame 0 first on a fresh pool).
    LastFreed,
    /// The lowest-numbered free frame; blocks of 2^k frames are naturally aligned.
    Lowest,
}

/// Writes per frame, summarised.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Wear {
    /// Writes over all frames.
    pub total: u64,
    /// Writes of the most written frame.
    pub max: u64,
    /// Frames written at least once.
    pub frames_written: usize,
}

/// The frames of one tier.
#[derive(Debug, Clone)]
pub struct FramePool {
    order: AllocOrder,
    total: usize,
    free: usize,
    /// `LastFreed`: frames freed and not yet handed out again, next at the end.
    stack: Vec<FrameId>,
    /// `LastFreed`: the lowest frame never handed out; it and every frame above are free.
    /// Handing fresh frames out in order from a counter gives the same order as a stack
    /// filled with every frame, without allocating for frames a run never uses.
    fresh: FrameId,
    /// `Lowest`: one bit per frame, set when free.
    bits: Vec<u64>,
    /// `Lowest`: lowest word of `bits` that may have a free frame.
    hint: usize,
    /// `Lowest`: one bit per word of `bits`, set when that word has a free frame, so that
    /// finding the next free frame past a long run of used ones reads one word in 64.
    summary: Vec<u64>,
    /// Writes per frame, grown as frames are written; `None` when the pool does not
    /// count wear.
    writes: Option<Vec<u64>>,
}

impl FramePool {
    /// `total` free frames handed out in `order`; `count_wear` keeps a write count per
    /// frame written (8 bytes a frame). A `LastFreed` pool's memory grows with the frames
    /// it hands out, not with `total`.
    pub fn new(total: usize, order: AllocOrder, count_wear: bool) -> Self {
        assert!(
            total <= FrameId::MAX as usize,
            "a pool indexes frames with 32 bits; callers check capacities first"
        );
        let bits = match order {
            AllocOrder::LastFreed => Vec::new(),
            AllocOrder::Lowest => {
                let mut bits = vec![u64::MAX; total.div_ceil(64)];
                if !total.is_multiple_of(64) {
                    if let Some(last) = bits.last_mut() {
                        *last = (1u64 << (total % 64)) - 1;
                    }
                }
                bits
            }
        };
        let mut summary = vec![0u64; bits.len().div_ceil(64)];
        for (w, &word) in bits.iter().enumerate() {
            if word != 0 {
                summary[w / 64] |= 1 << (w % 64);
            }
        }
        FramePool {
            order,
            total,
            free: total,
            stack: Vec::new(),
            fresh: 0,
            bits,
            hint: 0,
            summary,
            writes: count_wear.then(Vec::new),
        }
    }

    pub fn total(&self) -> usize {
        self.total
    }
    pub fn free(&self) -> usize {
        self.free
    }
    pub fn used(&self) -> usize {
        self.total - self.free
    }
    pub fn order(&self) -> AllocOrder {
        self.order
    }

    /// Whether `frame` is free (`Lowest` pools only: a stack does not index its frames).
    pub fn is_free(&self, frame: FrameId) -> bool {
        debug_assert_eq!(self.order, AllocOrder::Lowest);
        self.bits[frame as usize / 64] & (1 << (frame % 64)) != 0
    }

    /// Take the next free frame, `None` when the pool is full.
    #[inline]
    pub fn alloc(&mut self) -> Option<FrameId> {
        let frame = match self.order {
            AllocOrder::LastFreed => match self.stack.pop() {
                Some(frame) => frame,
                None if (self.fresh as usize) < self.total => {
                    self.fresh += 1;
                    self.fresh - 1
                }
                None => return None,
            },
            AllocOrder::Lowest => {
                let frame = self.find_block(0)?;
                self.take(frame, 0);
                return Some(frame);
            }
        };
        self.free -= 1;
        Some(frame)
    }

    /// Give `frame` back. The caller owns it (it was allocated and not yet released).
    #[inline]
    pub fn release(&mut self, frame: FrameId) {
        debug_assert!((frame as usize) < self.total);
        match self.order {
            AllocOrder::LastFreed => self.stack.push(frame),
            AllocOrder::Lowest => {
                debug_assert!(!self.is_free(frame), "frame {frame} released twice");
                let w = frame as usize / 64;
                self.bits[w] |= 1 << (frame % 64);
                self.summary[w / 64] |= 1 << (w % 64);
                self.hint = self.hint.min(w);
            }
        }
        self.free += 1;
    }

    /// One more write on `frame` (nothing when the pool does not count wear).
    #[inline]
    pub fn record_write(&mut self, frame: FrameId) {
        if let Some(writes) = &mut self.writes {
            let i = frame as usize;
            if i >= writes.len() {
                writes.resize((i + 1).max(writes.len() * 2).min(self.total), 0);
            }
            writes[i] += 1;
        }
    }

    /// Writes of `frame` (0 when the pool does not count wear).
    pub fn writes(&self, frame: FrameId) -> u64 {
        let writes = self.writes.as_deref().unwrap_or(&[]);
        writes.get(frame as usize).copied().unwrap_or(0)
    }

    pub fn wear(&self) -> Wear {
        let writes = self.writes.as_deref().unwrap_or(&[]);
        Wear {
            total: writes.iter().sum(),
            max: writes.iter().copied().max().unwrap_or(0),
            frames_written: writes.iter().filter(|&&w| w > 0).count(),
        }
    }

    // ---- blocks (`Lowest` pools) ----

    /// Lowest free naturally aligned block of 2^order frames (order <= 6), not taken.
    pub fn find_block(&self, order: u32) -> Option<FrameId> {
        debug_assert_eq!(self.order, AllocOrder::Lowest);
        let size = 1u32 << order;
        if order == 0 {
            for w in self.hint..self.bits.len() {
                let word = self.bits[w];
                if word != 0 {
                    return Some(w as u32 * 64 + word.trailing_zeros());
                }
            }
            return None;
        }
        let mask = block_mask(size);
        for (w, &word) in self.bits.iter().enumerate().skip(self.hint) {
            if word == 0 {
                continue;
            }
            let mut off = 0;
            while off < 64 {
                if (word >> off) & mask == mask {
                    let frame = w as u32 * 64 + off;
                    if (frame + size) as usize <= self.total {
                        return Some(frame);
                    }
                }
                off += size;
            }
        }
        None
    }

    /// Free frames that lie in naturally aligned, wholly free blocks of 2^order frames
    /// (what the buddy allocator's free areas of that order and above hold).
    pub fn free_in_blocks(&self, order: u32) -> usize {
        if order == 0 {
            return self.free;
        }
        let size = 1u32 << order;
        let mask = block_mask(size);
        let mut blocks = 0;
        for &word in &self.bits[self.hint..] {
            if word == 0 {
                continue;
            }
            let mut off = 0;
            while off < 64 {
                if (word >> off) & mask == mask {
                    blocks += 1;
                }
                off += size;
            }
        }
        blocks * size as usize
    }

    /// Take the frames `first..first+2^order`, all free, out of the pool.
    pub fn take(&mut self, first: FrameId, order: u32) {
        debug_assert_eq!(self.order, AllocOrder::Lowest);
        for f in first..first + (1 << order) {
            debug_assert!(self.is_free(f), "frame {f} taken while in use");
            let w = f as usize / 64;
            self.bits[w] &= !(1 << (f % 64));
            if self.bits[w] == 0 {
                self.summary[w / 64] &= !(1 << (w % 64));
            }
        }
        self.free -= 1 << order;
        // A full memory has no free word to look for: a run that keeps memory full (a
        // fault takes the frame reclaim just freed) would otherwise scan every word.
        if self.free == 0 {
            self.hint = self.bits.len();
            return;
        }
        if self.bits[self.hint] == 0 {
            self.hint = self.next_free_word(self.hint);
        }
    }

    /// The lowest word of `bits` at or after `from` with a free frame (`bits.len()` if
    /// none), found through the summary.
    fn next_free_word(&self, from: usize) -> usize {
        let mut s = from / 64;
        if s >= self.summary.len() {
            return self.bits.len();
        }
        let mut word = self.summary[s] & (u64::MAX << (from % 64));
        loop {
            if word != 0 {
                return s * 64 + word.trailing_zeros() as usize;
            }
            s += 1;
            if s == self.summary.len() {
                return self.bits.len();
            }
            word = self.summary[s];
        }
    }
}

/// The low `size` bits set (all 64 from 64 up).
fn block_mask(size: u32) -> u64 {
    if size >= 64 {
        u64::MAX
    } else {
        (1u64 << size) - 1
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn last_freed_hands_out_frame_zero_first_then_the_latest_freed() {
        let mut pool = FramePool::new(3, AllocOrder::LastFreed, true);
        assert_eq!(pool.alloc(), Some(0));
        assert_eq!(pool.alloc(), Some(1));
        pool.release(0);
        assert_eq!(pool.alloc(), Some(0));
        assert_eq!(pool.alloc(), Some(2));
        assert_eq!(pool.alloc(), None);
        assert_eq!(pool.free(), 0);
    }

    #[test]
    fn lowest_refills_the_lowest_hole_and_finds_aligned_blocks() {
        let mut pool = FramePool::new(70, AllocOrder::Lowest, false);
        for expect in 0..5 {
            assert_eq!(pool.alloc(), Some(expect));
        }
        pool.release(1);
        assert_eq!(pool.find_block(0), Some(1));
        // Frames 5.. are free: the first aligned block of 4 starts at 8, of 2 at 6.
        assert_eq!(pool.find_block(2), Some(8));
        assert_eq!(pool.find_block(1), Some(6));
        // Blocks past the end do not count: 64..70 holds one block of 4 (64..68).
        pool.take(8, 2);
        assert_eq!(pool.free(), 70 - 5 + 1 - 4);
        assert_eq!(pool.free_in_blocks(2), 4 * (1 + 12 + 1));
        assert_eq!(pool.find_block(6), None);
    }

    #[test]
    fn a_full_pool_hands_out_the_lowest_frame_released_again() {
        let mut pool = FramePool::new(200, AllocOrder::Lowest, false);
        for expect in 0..200 {
            assert_eq!(pool.alloc(), Some(expect));
        }
        pool.release(150);
        pool.take(150, 0);
        assert_eq!((pool.free(), pool.alloc()), (0, None));
        pool.release(130);
        pool.release(7);
        assert_eq!(pool.find_block(0), Some(7));
        assert_eq!(pool.alloc(), Some(7));
        assert_eq!(pool.alloc(), Some(130));
        assert_eq!(pool.alloc(), None);
    }

    #[test]
    fn wear_counts_writes_per_frame() {
        let mut pool = FramePool::new(4, AllocOrder::LastFreed, true);
        let f = pool.alloc().unwrap();
        pool.record_write(f);
        pool.record_write(f);
        pool.record_write(3);
        assert_eq!(
            pool.wear(),
            Wear {
                total: 3,
                max: 2,
                frames_written: 2
            }
        );
        let mut untracked = FramePool::new(4, AllocOrder::Lowest, false);
        untracked.record_write(1);
        assert_eq!(untracked.wear(), Wear::default());
    }

    #[test]
    fn a_huge_last_freed_pool_allocates_for_the_frames_it_hands_out() {
        let mut pool = FramePool::new(FrameId::MAX as usize, AllocOrder::LastFreed, true);
        let f = pool.alloc().unwrap();
        pool.record_write(f);
        assert_eq!(
            (f, pool.writes(f), pool.free()),
            (0, 1, FrameId::MAX as usize - 1)
        );
        assert!(pool.writes.as_ref().unwrap().len() <= 2);
    }

    proptest! {
        /// Whatever the order of allocations and releases: a frame is never handed out
        /// twice while in use, the pool never exceeds its frames, and free + used = total.
        #[test]
        fn frames_are_never_handed_out_twice(
            lowest in any::<bool>(),
            total in 0usize..200,
            ops in proptest::collection::vec(any::<(bool, u8)>(), 0..400),
        ) {
            let order = if lowest { AllocOrder::Lowest } else { AllocOrder::LastFreed };
            let mut pool = FramePool::new(total, order, false);
            let mut in_use: Vec<FrameId> = Vec::new();
            // The plain reading of "last freed first": a stack holding every frame.
            let mut reference: Vec<FrameId> = (0..total as FrameId).rev().collect();
            for (allocate, pick) in ops {
                if allocate || in_use.is_empty() {
                    let got = pool.alloc();
                    if !lowest {
                        prop_assert_eq!(got, reference.pop());
                    }
                    match got {
                        Some(f) => {
                            prop_assert!((f as usize) < total);
                            prop_assert!(!in_use.contains(&f), "frame {} handed out twice", f);
                            if lowest {
                                // The lowest free frame: every lower frame is in use.
                                for lower in 0..f {
                                    prop_assert!(in_use.contains(&lower));
                                }
                            }
                            in_use.push(f);
                        }
                        None => prop_assert_eq!(in_use.len(), total),
                    }
                } else {
                    let f = in_use.swap_remove(pick as usize % in_use.len());
                    pool.release(f);
                    reference.push(f);
                }
                prop_assert_eq!(pool.used(), in_use.len());
                prop_assert_eq!(pool.free() + pool.used(), total);
            }
        }

        /// A pool of thousands of words (the summary spans several words): after any run
        /// of taking blocks and releasing frames, the next frame is the lowest free one of
        /// a plain ordered set.
        #[test]
        fn the_lowest_free_frame_is_found_across_a_large_pool(
            total in 1usize..300_000,
            ops in proptest::collection::vec((0u8..4, any::<u32>()), 0..300),
        ) {
            let mut pool = FramePool::new(total, AllocOrder::Lowest, false);
            let mut free: std::collections::BTreeSet<FrameId> = (0..total as FrameId).collect();
            for (what, pick) in ops {
                match what {
                    // Take a long run, as a memory filling up does.
                    0 => {
                        for _ in 0..(pick % 5000) {
                            let got = pool.alloc();
                            prop_assert_eq!(got, free.pop_first());
                        }
                    }
                    1 => {
                        let got = pool.alloc();
                        prop_assert_eq!(got, free.pop_first());
                    }
                    // Release one frame in use, anywhere.
                    _ => {
                        let f = pick % total as FrameId;
                        if !free.contains(&f) {
                            pool.release(f);
                            free.insert(f);
                        }
                    }
                }
                prop_assert_eq!(pool.free(), free.len());
                prop_assert_eq!(pool.find_block(0), free.first().copied());
            }
        }
    }
}
