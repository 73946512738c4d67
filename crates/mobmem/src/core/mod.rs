//! The memory core: the pieces every mechanism builds on.
//!
//! - [`clock`]: a CLOCK ring of frames with a hand and reference bits;
//! - [`dense_ids`]: page ids renumbered in first-seen order, so state grows with pages seen;
//! - [`events`]: the one event loop that feeds a trace to a mechanism;
//! - [`frames`]: the frame pools of the memory tiers, with wear;
//! - [`list`]: doubly linked lists of pages, linked by index in one arena;
//! - [`memory`]: the machine's memory: page table, DRAM frames, swap area, dirty pages;
//! - [`pages`]: the page table (location, frame, owner, flags, content fingerprint);
//! - [`prefetch`]: loading a page's entries into the cache ahead of use;
//! - [`process`]: the importance of processes (`oom_score_adj`);
//! - [`registry`]: the lists of named entries (policies, architectures, presets);
//! - [`stats`]: named figures of a run, listed once per result type;
//! - [`swap`]: the swap area's devices, slots and I/O, and the swap architecture trait;
//! - [`time`]: one clock: CPUs shared by weight, device queues, pressure stall information.

pub mod clock;
pub mod dense_ids;
pub mod events;
pub mod frames;
pub mod list;
pub mod memory;
pub mod pages;
pub mod prefetch;
pub mod process;
pub mod registry;
pub mod stats;
pub mod swap;
pub mod time;

use crate::trace::PageId;

/// Grow a per-page vector so that `page` is a valid index. Only the entries up to `page`
/// are written: the vector's capacity still doubles (`Vec`'s amortised growth), but the
/// part not yet used is memory never touched, which the kernel does not back, so a run's
/// resident memory grows with the pages seen.
#[inline]
pub fn ensure_index<T: Clone>(v: &mut Vec<T>, page: PageId, fill: T) {
    let needed = page as usize + 1;
    if v.len() < needed {
        v.resize(needed, fill);
    }
}

/// A fixed mixing of an integer into 64 well-spread bits: the finalizer of splitmix64
/// (Steele, Lea and Flood, OOPSLA 2014). Synthetic fingerprints, and which pages or frames
/// have a property, are functions of their ids, the same in every run.
#[inline]
pub fn mix64(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}
