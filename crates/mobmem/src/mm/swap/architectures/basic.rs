//! No swap at all, a baseline of Bahn, Kim, JIIBC 2023 (the other, flash-only swap, is
//! the memory core's default swap area, [`crate::core::swap::FlashOnly`]).

use super::Architecture;
use crate::core::swap::{SwapDevice, SwapSpace};
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

    fn swap_out(&mut self, _: &mut SwapSpace<'_>, _: PageId, _: u64) -> Result<bool> {
        Ok(false)
    }

    fn swap_in(&mut self, _: &mut SwapSpace<'_>, page: PageId) -> Result<SwapDevice> {
        Err(Error::config(
            "swap architecture none",
            format!("page {page} swapped in, but nothing is ever swapped out"),
        ))
    }
}
