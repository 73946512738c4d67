//! The memory core: the pieces every mechanism builds on.
//!
//! - [`events`]: the one event loop that feeds a trace to a mechanism;
//! - [`list`]: doubly linked lists of pages, linked by index in one arena;
//! - [`process`]: the importance of processes (`oom_score_adj`);
//! - [`stats`]: named figures of a run, listed once per result type.

pub mod events;
pub mod list;
pub mod process;
pub mod stats;

use crate::trace::PageId;

/// Grow a per-page vector so that `page` is a valid index.
#[inline]
pub fn ensure_index<T: Clone>(v: &mut Vec<T>, page: PageId, fill: T) {
    let needed = page as usize + 1;
    if v.len() < needed {
        v.resize(needed.max(v.len() * 2), fill);
    }
}
