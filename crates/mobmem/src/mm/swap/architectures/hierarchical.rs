//! Hierarchical swap: NVM caches swap data in front of flash (Bahn, Kim, "Design and
//! Performance Analysis of Multi-Swap Architectures for Mobile Devices", JIIBC 2023,
//! Fig. 1a).
//!
//! The paper: "when a page fault occurs, NVM is searched first, and flash is accessed when
//! the data is not in NVM"; "when NVM runs out of space, LRU or CLOCK evicts data not used
//! recently". Every swap-out enters NVM.
//!
//! ```text
//! swap_out(p):
//!   if p has a (stale) NVM slot: write p to it            (slots kept on swap-in)
//!   else: free p's stale flash slot, if any
//!         if NVM is full: v = victim (LRU: least recently read or written;
//!                                     CLOCK: sweep, clear set bits, first clear bit)
//!                         read v from NVM, write v to flash
//!         write p to NVM
//! swap_in(p):
//!   if p in NVM: read p from NVM
//!   else: read p from flash
//!         slots kept: the page goes back through NVM, as a cache fill: free its flash
//!                     slot, write its DRAM copy to NVM (demoting a victim if full)
//!   slots freed on swap-in: free p's slot (its next swap-out enters NVM anyway)
//! ```
//! Our reading of "a page fault looks in NVM first, then flash": NVM is a cache of swap
//! data, so data read from flash is filled into it, as any cache fills on a miss. With
//! slots freed on swap-in there is nothing to fill: the page's next swap-out writes it to
//! NVM, which is the same data movement one swap-out later. The fill is off the fault's
//! critical path (the page is already in DRAM), so a launch is not charged for it.

use super::Architecture;
use crate::core::swap::{IoCause, SwapDevice, SwapSpace};
use crate::trace::PageId;
use crate::Result;

pub struct Hierarchical {
    name: &'static str,
}

impl Hierarchical {
    pub fn new(name: &'static str) -> Self {
        Hierarchical { name }
    }
}

/// Write `page` (no slot) to NVM, or to flash when the NVM has no slots at all.
pub(super) fn write_to_nvm_or_flash(space: &mut SwapSpace<'_>, page: PageId) -> Result<()> {
    if !space.admit_nvm(page, IoCause::SwapOut)? {
        space.write_flash(page, IoCause::SwapOut)?;
    }
    Ok(())
}

/// Swap `page` out with NVM first: rewrite its NVM slot in place (or its flash slot when
/// the NVM has no slots); otherwise free any stale flash slot and write it to NVM.
pub(super) fn swap_out_to_nvm(space: &mut SwapSpace<'_>, page: PageId) -> Result<()> {
    match space.slot_of(page) {
        Some(SwapDevice::Nvm) => space.rewrite(page),
        Some(SwapDevice::Flash) if space.nvm_capacity() == 0 => space.rewrite(page),
        _ => {
            space.free(page);
            write_to_nvm_or_flash(space, page)
        }
    }
}

impl Architecture for Hierarchical {
    fn name(&self) -> &'static str {
        self.name
    }

    fn swap_out(&mut self, space: &mut SwapSpace<'_>, page: PageId, _: u64) -> Result<bool> {
        swap_out_to_nvm(space, page)?;
        Ok(true)
    }

    fn swap_in(&mut self, space: &mut SwapSpace<'_>, page: PageId) -> Result<SwapDevice> {
        let device = space.read(page)?;
        if device == SwapDevice::Flash && space.keeps_slots() {
            space.promote(page)?;
        }
        space.release_after_swap_in(page);
        Ok(device)
    }
}
