//! The two baselines of Bahn, Kim, JIIBC 2023: no swap at all, and flash-only swap.

use super::Architecture;
use crate::mm::swap::space::{IoCause, SwapDevice, SwapSpace};
use crate::trace::PageId;
use crate::{Error, Result};

/// No swap: Android's default. Under memory pressure the low-memory killer kills the
/// least important app (the memory model does it when `swaps()` is false).
pub struct NoSwap;

impl Architecture for NoSwap {
    fn name(&self) -> &'static str {
        "none"
    }

    fn swaps(&self) -> bool {
        false
    }

    fn swap_out(&mut self, _: &mut SwapSpace, _: PageId, _: u64) -> Result<bool> {
        Ok(false)
    }

    fn swap_in(&mut self, _: &mut SwapSpace, page: PageId) -> Result<SwapDevice> {
        Err(Error::config(
            "swap architecture none",
            format!("page {page} swapped in, but nothing is ever swapped out"),
        ))
    }
}

/// Flash-only swap.
///
/// ```text
/// swap_out(p):  if p has a (stale) flash slot: write p to it   (slots kept on swap-in)
///               else: write p to a new flash slot
/// swap_in(p):   read p from flash; free the slot unless slots are kept
/// ```
pub struct FlashOnly;

impl Architecture for FlashOnly {
    fn name(&self) -> &'static str {
        "flash"
    }

    fn swap_out(&mut self, space: &mut SwapSpace, page: PageId, _: u64) -> Result<bool> {
        match space.slot_of(page) {
            Some(_) => space.rewrite(page)?,
            None => space.write_flash(page, IoCause::SwapOut)?,
        }
        Ok(true)
    }

    fn swap_in(&mut self, space: &mut SwapSpace, page: PageId) -> Result<SwapDevice> {
        read_and_release(space, page)
    }
}

/// Read `page` back from the device holding it, then free its slot unless slots are kept.
pub(super) fn read_and_release(space: &mut SwapSpace, page: PageId) -> Result<SwapDevice> {
    let device = space.read(page)?;
    space.release_after_swap_in(page);
    Ok(device)
}
