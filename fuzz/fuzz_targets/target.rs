//! Runs the fuzz target named by the environment variable MOBMEM_FUZZ_TARGET (one of
//! `mobmem::fuzzing::TARGETS`) on every input libFuzzer makes.
//!
//! Built without a sanitizer (`cargo fuzz build -s none`, scripts/fuzz.sh): mobmem's
//! one unsafe block is a prefetch hint (core/prefetch.rs), which cannot touch memory, and
//! AddressSanitizer made inputs 4-15 times slower. What it gave
//! beyond that, libFuzzer's limit on one allocation (`-malloc_limit_mb`, which needs a
//! sanitizer's malloc hooks), is [`Limited`]: an allocation reserved but never touched
//! counts in no resident set, so `-rss_limit_mb` alone would miss it.
#![no_main]

use std::alloc::{GlobalAlloc, Layout, System};
use std::io::Write;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use mobmem::fuzzing::{target, Target};

static CHOSEN: OnceLock<&'static Target> = OnceLock::new();

fuzz_target!(|data: &[u8]| {
    let chosen = CHOSEN.get_or_init(|| {
        let name = std::env::var("MOBMEM_FUZZ_TARGET").unwrap_or_default();
        target(&name).unwrap_or_else(|| panic!("MOBMEM_FUZZ_TARGET={name:?} is no fuzz target"))
    });
    (chosen.run)(data);
});

/// Bytes one input may hold allocated at once: scripts/fuzz.sh's `-rss_limit_mb`.
const LIMIT_BYTES: usize = 1 << 30;

/// The system allocator, aborting (a crash libFuzzer keeps as a regression) once the
/// bytes held reach [`LIMIT_BYTES`].
struct Limited;

static HELD: AtomicUsize = AtomicUsize::new(0);

fn over_limit() -> ! {
    // Unbuffered and from a static string: no allocation inside the allocator.
    let _ = std::io::stderr().write_all(b"mobmem-fuzz: allocation past the 1 GiB limit\n");
    std::process::abort()
}

// SAFETY: every call goes to `System` with the caller's own layout and pointer; only
// the count of bytes held is added.
unsafe impl GlobalAlloc for Limited {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if HELD.fetch_add(layout.size(), Ordering::Relaxed) + layout.size() > LIMIT_BYTES {
            over_limit();
        }
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        if HELD.fetch_add(layout.size(), Ordering::Relaxed) + layout.size() > LIMIT_BYTES {
            over_limit();
        }
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        HELD.fetch_sub(layout.size(), Ordering::Relaxed);
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if new_size > layout.size() {
            let grown = new_size - layout.size();
            if HELD.fetch_add(grown, Ordering::Relaxed) + grown > LIMIT_BYTES {
                over_limit();
            }
        } else {
            HELD.fetch_sub(layout.size() - new_size, Ordering::Relaxed);
        }
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOCATOR: Limited = Limited;
