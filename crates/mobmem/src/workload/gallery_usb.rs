//! The `gallery-usb` workload: the experiment of Kim (SNU 2016). A user browses
//! images in the Gallery app (the foreground, interactive task) while a USB transfer
//! streams a large file onto the device in the background (non-interactive, I/O
//! intensive). `--no-background` (config `background = false`) leaves the transfer out.
//!
//! - Gallery: each interaction starts with an input event to it; it then reads the
//!   whole file of the image shown (file pages, sequentially), writes its decode
//!   buffer (anonymous pages, every interaction) and touches its heap (anonymous pages
//!   with Zipf popularity). The image shown moves to the next one, back to the previous
//!   one, or jumps to a random one, so images are looked at again after a while.
//! - USB transfer (process `usb-mtp`): writes new pages of one large file at a steady
//!   rate over the whole run. With the default `mm::reclaim::HighOrderConfig` its faults
//!   also drive order-3 (32 KiB) request-buffer allocations.
//! - system_server touches a small hot set every interaction; a few cached apps touched
//!   their anonymous and file pages before the run and then stay idle (reclaimable,
//!   as on a phone).
//!
//! Deterministic by seed (ChaCha8). The default sizes go with the default
//! `mm::reclaim::ReclaimConfig` (128 MiB of frames): without the transfer the Gallery's
//! pages and the idle apps' nearly fit, with it the transfer writes about 19 MiB per
//! interaction, several times what is free.

use rand::{Rng, RngCore, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

use super::registry::{scaled_count, Params};
use super::sampling::{unit, zipf_weights, AliasTable};
use crate::trace::{Event, Interner, PageKey, Trace, ADJ_FOREGROUND};
use crate::{Check, Error, Result};

/// Name of the background transfer's process.
pub const USB_PROCESS: &str = "usb-mtp";
pub const GALLERY_PROCESS: &str = "com.android.gallery3d";
/// Largest number of events a config may produce.
pub const MAX_EVENTS: u64 = 50_000_000;
/// Largest page count of any key (`image_pages`, `heap_pages`, `bitmap_pages`,
/// `system_pages`, `cached_anon_pages`, `cached_file_pages`,
/// `stream_pages_per_interaction`), and largest number of accesses per interaction of
/// `heap_accesses` and `system_accesses`: 4 GiB of pages each.
pub const MAX_PAGES: u32 = 1 << 20;
/// Largest number of images (the generator keeps each one's size).
pub const MAX_IMAGES: u32 = 1 << 20;
/// Largest number of idle cached apps (each a process of the trace).
pub const MAX_CACHED_APPS: u32 = 1000;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct GalleryUsbConfig {
    pub interactions: u32,
    /// Run the USB transfer.
    pub background: bool,
    pub images: u32,
    /// Pages of each image file, drawn per image in [min, max].
    pub image_pages: [u32; 2],
    /// Chance that the next image shown is the next one, or the previous one (else a
    /// random one).
    pub p_next: f64,
    pub p_previous: f64,
    pub heap_pages: u32,
    pub heap_accesses: u32,
    pub heap_zipf_exponent: f64,
    /// Decode buffer, written every interaction.
    pub bitmap_pages: u32,
    pub system_pages: u32,
    pub system_accesses: u32,
    pub cached_apps: u32,
    pub cached_anon_pages: u32,
    pub cached_file_pages: u32,
    /// Pages the transfer writes per interaction (its rate times the think time).
    pub stream_pages_per_interaction: u32,
    /// Time between two inputs, ms.
    pub think_ms: u64,
    /// The Gallery's work after an input is spread over this long, ms.
    pub busy_ms: u64,
}

impl Default for GalleryUsbConfig {
    fn default() -> Self {
        GalleryUsbConfig {
            interactions: 150,
            background: true,
            images: 80,
            image_pages: [64, 384],
            p_next: 0.55,
            p_previous: 0.35,
            heap_pages: 4000,
            heap_accesses: 400,
            heap_zipf_exponent: 0.9,
            bitmap_pages: 1500,
            system_pages: 800,
            system_accesses: 100,
            cached_apps: 4,
            cached_anon_pages: 1500,
            cached_file_pages: 1000,
            // 20 MB/s (USB 2.0 MTP) over 1 s of think time.
            stream_pages_per_interaction: 4800,
            think_ms: 1000,
            busy_ms: 300,
        }
    }
}

impl Params for GalleryUsbConfig {
    fn validate(&self) -> Result<()> {
        let check = Check("gallery-usb workload");
        if self.interactions == 0 || self.images == 0 {
            return check.fail("interactions and images must be at least 1");
        }
        check.at_most("images", self.images, MAX_IMAGES)?;
        check.at_most("cached_apps", self.cached_apps, MAX_CACHED_APPS)?;
        check.min_max("image_pages", self.image_pages, 1, MAX_PAGES)?;
        for (key, count) in crate::fields!(
            self; heap_pages, heap_accesses, bitmap_pages, system_pages, system_accesses,
            cached_anon_pages, cached_file_pages, stream_pages_per_interaction
        ) {
            check.at_most(key, count, MAX_PAGES)?;
        }
        if !(0.0..=1.0).contains(&self.p_next)
            || !(0.0..=1.0).contains(&self.p_previous)
            || self.p_next + self.p_previous > 1.0
        {
            return check.fail(format!(
                "p_next and p_previous must be shares summing to at most 1, got {} and {}",
                self.p_next, self.p_previous
            ));
        }
        if self.heap_pages == 0 || self.system_pages == 0 {
            return check.fail("heap_pages and system_pages must be at least 1");
        }
        if !(self.heap_zipf_exponent.is_finite() && self.heap_zipf_exponent >= 0.0) {
            return check.fail("heap_zipf_exponent must be >= 0");
        }
        if self.think_ms == 0 || self.busy_ms > self.think_ms {
            return check.fail("think_ms must be >= 1 and busy_ms at most think_ms");
        }
        if self.max_events() > MAX_EVENTS {
            return check.fail(format!(
                "would make up to {} events (interactions x their accesses, and the \
                 warm-up's cached_apps x (cached_anon_pages + cached_file_pages) + \
                 system_pages), more than {MAX_EVENTS}",
                self.max_events()
            ));
        }
        if self.max_duration_ns() > u64::MAX as u128 {
            return check.fail(format!(
                "interactions x think_ms = {} x {} ms overflows 64-bit nanosecond time stamps",
                self.interactions, self.think_ms
            ));
        }
        Ok(())
    }
    fn scale(&mut self, factor: f64) {
        self.interactions = scaled_count(self.interactions, factor);
    }

    fn drop_background(&mut self) -> bool {
        self.background = false;
        true
    }

    fn generate(&self, seed: u64) -> Result<Trace> {
        generate(self, seed)
    }
}

const MS: u64 = 1_000_000;

impl GalleryUsbConfig {
    /// An upper bound on the events of the trace (the fields are bounded first, so this
    /// does not overflow).
    pub fn max_events(&self) -> u64 {
        let per = 1
            + self.image_pages[1] as u64
            + self.bitmap_pages as u64
            + self.heap_accesses as u64
            + self.system_accesses as u64
            + if self.background {
                self.stream_pages_per_interaction as u64
            } else {
                0
            };
        let processes = 3 + self.cached_apps as u64;
        let warm_up = self.cached_apps as u64
            * (self.cached_anon_pages as u64 + self.cached_file_pages as u64)
            + self.system_pages as u64;
        per * self.interactions as u64 + 2 * processes + warm_up
    }

    /// An upper bound on the trace's last time stamp: the warm-up (1 us per page), 100 ms,
    /// then one think time per interaction.
    fn max_duration_ns(&self) -> u128 {
        let warm_up = MS as u128 + self.max_events() as u128 * 1000 + 100 * MS as u128;
        warm_up + (self.interactions as u128 + 1) * self.think_ms as u128 * MS as u128
    }
}

/// Generate the trace.
pub fn generate(config: &GalleryUsbConfig, seed: u64) -> Result<Trace> {
    config.validate()?;
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut interner = Interner::new();
    let oom = || Error::config("gallery-usb workload", "too many pages or processes");
    let mut events: Vec<Event> = Vec::new();
    let system = interner
        .start_process(1000, "system_server")
        .ok_or_else(oom)?;
    let gallery = interner
        .start_process(2000, GALLERY_PROCESS)
        .ok_or_else(oom)?;
    let usb = interner.start_process(1500, USB_PROCESS).ok_or_else(oom)?;
    let cached: Vec<u32> = (0..config.cached_apps)
        .map(|i| {
            interner
                .start_process(3000 + i, &format!("cached.app{i}"))
                .ok_or_else(oom)
        })
        .collect::<Result<_>>()?;
    events.push(Event::start(0, system));
    events.push(Event::importance(0, system, -900));
    for &c in &cached {
        events.push(Event::start(0, c));
        events.push(Event::importance(0, c, 900));
    }
    events.push(Event::start(0, usb));
    events.push(Event::importance(0, usb, 500));
    events.push(Event::start(0, gallery));
    events.push(Event::importance(0, gallery, ADJ_FOREGROUND));

    // Warm-up: the idle apps and system_server touch their memory once, 1 us apart,
    // writing their anonymous pages and reading their file pages.
    let mut t = MS;
    let mut warm_up = |events: &mut Vec<Event>, proc, anon: bool, owner: u64, pages: u32| {
        let key = if anon { PageKey::anon } else { PageKey::file };
        for index in 0..pages as u64 {
            let page = interner.page(key(owner, index)).ok_or_else(oom)?;
            events.push(Event::access(t, proc, page, anon, anon));
            t += 1000;
        }
        Ok::<_, Error>(())
    };
    for (i, &c) in cached.iter().enumerate() {
        let i = i as u64;
        warm_up(&mut events, c, true, 3000 + i, config.cached_anon_pages)?;
        warm_up(&mut events, c, false, 10_000 + i, config.cached_file_pages)?;
    }
    warm_up(&mut events, system, true, 1000, config.system_pages)?;
    let start = t + 100 * MS;

    let [lo, hi] = config.image_pages;
    let image_sizes: Vec<u32> = (0..config.images).map(|_| rng.gen_range(lo..=hi)).collect();
    let heap = AliasTable::new(&zipf_weights(
        config.heap_pages as usize,
        config.heap_zipf_exponent,
    ))
    .ok_or_else(|| Error::config("gallery-usb workload", "empty heap"))?;
    let mut current = 0u32;
    let mut stream_index = 0u64;
    for i in 0..config.interactions as u64 {
        let t0 = start + i * config.think_ms * MS;
        let mut batch: Vec<Event> = vec![Event::input(t0, gallery)];
        // The Gallery's work after the input.
        let mut work: Vec<(u32, bool, bool)> = Vec::new(); // (page, write, anon)
        for idx in 0..image_sizes[current as usize] {
            let page = interner
                .page(PageKey::file(100 + current as u64, idx as u64))
                .ok_or_else(oom)?;
            work.push((page, false, false));
        }
        for vpn in 0..config.bitmap_pages {
            let page = interner
                .page(PageKey::anon(2000, vpn as u64))
                .ok_or_else(oom)?;
            work.push((page, true, true));
        }
        for _ in 0..config.heap_accesses {
            let vpn = config.bitmap_pages as u64 + heap.sample(rng.next_u64()) as u64;
            let page = interner.page(PageKey::anon(2000, vpn)).ok_or_else(oom)?;
            work.push((page, unit(&mut rng) < 0.3, true));
        }
        let busy = config.busy_ms * MS;
        let n = work.len() as u64;
        for (k, &(page, write, anon)) in work.iter().enumerate() {
            let at = t0 + 1 + (k as u64 * busy) / n.max(1);
            batch.push(Event::access(at, gallery, page, write, anon));
        }
        let think = config.think_ms * MS;
        for _ in 0..config.system_accesses {
            let vpn = rng.gen_range(0..config.system_pages) as u64;
            let page = interner.page(PageKey::anon(1000, vpn)).ok_or_else(oom)?;
            let at = t0 + 1 + rng.gen_range(0..think - 1);
            batch.push(Event::access(at, system, page, false, true));
        }
        if config.background {
            let s = config.stream_pages_per_interaction as u64;
            for k in 0..s {
                let page = interner
                    .page(PageKey::file(99, stream_index))
                    .ok_or_else(oom)?;
                stream_index += 1;
                let at = t0 + 1 + k * (think - 1) / s.max(1);
                batch.push(Event::access(at, usb, page, true, false));
            }
        }
        batch.sort_by_key(|e| e.time_ns());
        events.extend(batch);
        // The next image.
        let r = unit(&mut rng);
        current = if r < config.p_next {
            (current + 1) % config.images
        } else if r < config.p_next + config.p_previous {
            (current + config.images - 1) % config.images
        } else {
            rng.gen_range(0..config.images)
        };
    }
    Ok(Trace {
        events,
        tables: interner.into_tables(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config_file::Echo;
    use crate::workload::registry::parse;

    /// Every count that sizes memory or time is bounded when the file is read; the error
    /// names the file and the key, at once.
    #[test]
    fn counts_are_bounded_when_read() {
        let cases = [
            ("cached_file_pages = 100000000", "cached_file_pages"),
            ("cached_anon_pages = 4294967295", "cached_anon_pages"),
            ("heap_pages = 4294967295", "heap_pages"),
            ("heap_accesses = 4294967295", "heap_accesses"),
            ("bitmap_pages = 4294967295", "bitmap_pages"),
            ("system_pages = 4294967295", "system_pages"),
            ("system_accesses = 4294967295", "system_accesses"),
            (
                "stream_pages_per_interaction = 4294967295",
                "stream_pages_per_interaction",
            ),
            ("image_pages = [1, 4294967295]", "image_pages"),
            ("images = 4294967295", "images"),
            ("cached_apps = 4294967295", "cached_apps"),
            ("cached_apps = 1000\ncached_anon_pages = 1048576", "events"),
            ("interactions = 4294967295", "events"),
            ("think_ms = 9223372036854775807", "think_ms"),
        ];
        for (text, key) in cases {
            let e = parse::<GalleryUsbConfig>(text, "g.toml", Echo::Quote)
                .unwrap_err()
                .to_string();
            assert!(
                e.starts_with("g.toml: gallery-usb workload: "),
                "{text}: {e}"
            );
            assert!(e.contains(key), "{text}: {e}");
        }
        // The defaults and the largest counts that fit still pass.
        parse::<GalleryUsbConfig>("", "g.toml", Echo::Quote).unwrap();
        let big = GalleryUsbConfig {
            interactions: 10,
            images: MAX_IMAGES,
            heap_pages: MAX_PAGES,
            ..Default::default()
        };
        big.validate().unwrap();
        assert!(big.max_events() <= MAX_EVENTS);
    }
}
