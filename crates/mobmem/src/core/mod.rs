//! The memory core: the pieces every mechanism builds on.
//!
//! - [`list`]: doubly linked lists of pages, linked by index in one arena.
//! - [`clock`]: a CLOCK ring of frames with a hand and reference bits.

pub mod clock;
pub mod list;

use crate::trace::PageId;

/// Grow a per-page vector so that `page` is a valid index.
#[inline]
pub fn ensure_index<T: Clone>(v: &mut Vec<T>, page: PageId, fill: T) {
    let needed = page as usize + 1;
    if v.len() < needed {
        v.resize(needed.max(v.len() * 2), fill);
    }
}
