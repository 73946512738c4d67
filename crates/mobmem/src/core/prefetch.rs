//! A hint to the processor to load a per-page entry into its cache ahead of use.
//!
//! Simulating a trace of scattered pages is bound by memory latency: every access reads
//! a few entries of tables larger than the cache. The event loop names the page a few
//! events ahead ([`crate::core::events::EventHandler::prefetch`]) so those reads
//! overlap with the work on the current event instead of waiting one after another.
//!
//! This module holds the library's only `unsafe`: the prefetch instruction has no effect
//! on memory or on program state, only on timing, and it never faults, whatever the
//! address; the address given here is moreover always an element of a live slice.

/// Ask for `slice[index]` to be brought into the cache; nothing when `index` is out of
/// bounds or the target has no prefetch instruction.
#[inline(always)]
pub fn prefetch<T>(slice: &[T], index: usize) {
    prefetch_to::<T, { Level::First as u8 }>(slice, index);
}

/// [`prefetch`] into the second level of the cache, not the first: for state read in
/// bursts of many lines a request (a sketch's counters), where fetches into the first
/// level would wait for its few buffers of outstanding misses.
#[inline(always)]
pub fn prefetch_l2<T>(slice: &[T], index: usize) {
    prefetch_to::<T, { Level::Second as u8 }>(slice, index);
}

/// The cache level a prefetch fills.
#[repr(u8)]
enum Level {
    First,
    Second,
}

#[inline(always)]
fn prefetch_to<T, const LEVEL: u8>(slice: &[T], index: usize) {
    #[cfg(target_arch = "x86_64")]
    if let Some(entry) = slice.get(index) {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0, _MM_HINT_T1};
        let address: *const i8 = (entry as *const T).cast();
        // SAFETY: PREFETCHT0 and PREFETCHT1 only move a cache line; they neither read
        // into a register nor write, and do not fault. SSE is part of the x86_64
        // baseline.
        #[allow(unsafe_code)]
        unsafe {
            if LEVEL == Level::First as u8 {
                _mm_prefetch::<_MM_HINT_T0>(address)
            } else {
                _mm_prefetch::<_MM_HINT_T1>(address)
            }
        };
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (slice, index);
}
