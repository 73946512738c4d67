//! A hint to the processor to load a per-page entry into its cache ahead of use.
//!
//! Simulating a trace of scattered pages is bound by memory latency: every access reads
//! a few entries of tables larger than the cache. The event loop names the page a few
//! events ahead ([`crate::core::events::EventHandler::prefetch`]) so those reads
//! overlap with the work on the current event instead of waiting one after another.
//!
//! This is the workspace's one use of `unsafe`: the prefetch instruction has no effect
//! on memory or on program state, only on timing, and it never faults, whatever the
//! address; the address given here is moreover always an element of a live slice.

/// Ask for `slice[index]` to be brought into the cache; nothing when `index` is out of
/// bounds or the target has no prefetch instruction.
#[inline(always)]
pub fn prefetch<T>(slice: &[T], index: usize) {
    #[cfg(target_arch = "x86_64")]
    if let Some(entry) = slice.get(index) {
        let address: *const T = entry;
        // SAFETY: PREFETCHT0 only moves a cache line; it neither reads into a register
        // nor writes, and does not fault. SSE is part of the x86_64 baseline.
        #[allow(unsafe_code)]
        unsafe {
            std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(address.cast())
        };
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (slice, index);
}
