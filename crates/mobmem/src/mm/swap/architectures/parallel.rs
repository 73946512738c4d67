//! Parallel ("hybrid") swap: NVM and flash side by side at the same level; a placement
//! policy decides where each swapped page lives (Bahn, Kim, JIIBC 2023, Fig. 1b). Two
//! policies: plain CLOCK admission, the paper's baseline, and the paper's
//! single-access filter.

use super::hierarchical::{swap_out_to_nvm, write_to_nvm_or_flash};
use super::Architecture;
use crate::core::swap::{read_and_release, IoCause, SwapDevice, SwapSpace};
use crate::trace::PageId;
use crate::Result;

/// CLOCK admission: every swap-out goes to NVM; when NVM is full, CLOCK demotes a victim
/// to flash. No single-access filter.
///
/// ```text
/// swap_out(p):
///   if p has a (stale) NVM slot: write p to it             (slots kept on swap-in)
///   else: free p's stale flash slot, if any
///         if NVM is full: v = CLOCK victim (sweep, clear set bits, first clear bit)
///                         read v from NVM, write v to flash
///         write p to NVM
/// swap_in(p):
///   read p from the device that holds it (the slot's access bit is set)
///   slots freed on swap-in: free p's slot
/// ```
/// Unlike hierarchical swap, a fault served by flash leaves the page's slot in flash:
/// the two devices are peers, not a cache and its backing store. A page in flash returns
/// to NVM only when it is written out again. With slots freed on swap-in the two
/// architectures coincide (every swap-out enters NVM, nothing stays behind in flash).
pub struct ParallelClock;

impl Architecture for ParallelClock {
    fn name(&self) -> &'static str {
        "parallel-clock"
    }

    fn swap_out(&mut self, space: &mut SwapSpace<'_>, page: PageId, _: u64) -> Result<bool> {
        swap_out_to_nvm(space, page)?;
        Ok(true)
    }

    fn swap_in(&mut self, space: &mut SwapSpace<'_>, page: PageId) -> Result<SwapDevice> {
        read_and_release(space, page)
    }
}

/// The paper's single-access filter, as its Section II describes it:
///
/// ```text
/// swap_out(p):
///   if p has a (stale) slot: write p to it, NVM or flash    (slots kept on swap-in)
///   else if p is known multi-access: write p to NVM (CLOCK makes room, below)
///                                                           (slots freed on swap-in)
///   else: write p to flash            -- a page swapped out for the first time
/// swap_in(p):
///   if p in NVM: read p from NVM; bit[slot] = 1
///   else: read p from flash
///         if bit[slot] == 1:          -- swapped in before: multi-access data
///             promote p to NVM:
///               if NVM is full: sweep the NVM slots from the hand, clearing bits that
///                               are 1; the first slot whose bit is 0 is demoted
///                               (read from NVM, written to flash)
///               free p's flash slot, write p (its DRAM copy) to NVM
///         else: bit[slot] = 1
/// ```
/// With slots freed on swap-in (the default), the bit is the page's history and the
/// promotion is a decision for the page's next swap-out, when there is data to write: a
/// page read from NVM, or read from flash with its bit already set, is written to NVM
/// next time; any other page to flash. A page CLOCK demoted has its bit clear, so it
/// needs two more swap-ins from flash to come back.
///
/// With slots kept on swap-in (as Linux's swap cache keeps them after a read fault), the
/// bit belongs to the slot and the promotion happens at the swap-in: the page is in DRAM,
/// so it costs one NVM write and no flash read. A new slot starts with its bit clear.
#[derive(Default)]
pub struct ParallelFiltered {
    /// Slots freed on swap-in: where each page's next swap-out goes (true: NVM).
    next_to_nvm: Vec<bool>,
}

impl Architecture for ParallelFiltered {
    fn name(&self) -> &'static str {
        "parallel-filtered"
    }

    fn swap_out(&mut self, space: &mut SwapSpace<'_>, page: PageId, _: u64) -> Result<bool> {
        if space.slot_of(page).is_some() {
            space.rewrite(page)?;
        } else if self
            .next_to_nvm
            .get(page as usize)
            .copied()
            .unwrap_or(false)
        {
            write_to_nvm_or_flash(space, page)?;
        } else {
            space.write_flash(page, IoCause::SwapOut)?;
        }
        Ok(true)
    }

    fn swap_in(&mut self, space: &mut SwapSpace<'_>, page: PageId) -> Result<SwapDevice> {
        let seen_before = space.is_accessed(page);
        let device = space.read(page)?;
        let multi_access = device == SwapDevice::Nvm || seen_before;
        if space.keeps_slots() {
            if device == SwapDevice::Flash && seen_before {
                space.promote(page)?;
            }
        } else {
            crate::core::ensure_index(&mut self.next_to_nvm, page, false);
            self.next_to_nvm[page as usize] = multi_access;
        }
        space.release_after_swap_in(page);
        Ok(device)
    }
}
