//! Per-page CPU costs measured on this machine (`mobmem host costs`): the host
//! measurements the time model's constants name as their source, beside datasheets and
//! kernel defaults.
//!
//! Every figure is in ns per page, as the median and the 10th and 90th percentiles over
//! rounds. A round times one pass over all its pages, on this thread, and divides by
//! their count, so the spread is the machine's noise from pass to pass, not the spread
//! between pages.
//!
//! - **compress, decompress**: each 4 KiB page of a corpus compressed on its own, then
//!   each result decompressed, with every codec of this build that zram has (LZ4 always,
//!   LZO1X-1 with the cargo feature `lzo`), through [`Codec::compress`] and
//!   [`Codec::decompress`]: the calls the zram and file-system models make, the output's
//!   allocation included. Every page is round-tripped and compared before any timing.
//!   Also per kind of page, with the compression ratio of the real compressed sizes.
//!   For zram's `compress_ns` and `decompress_ns`, a platform's
//!   `decompress_ns_per_byte`.
//! - **page copy**: a 4 KiB page copied from one half of a region into the other, both
//!   halves written beforehand so that no fault is timed; at the default 64 MiB larger
//!   than most last-level caches, so RAM to RAM. For a platform's
//!   `ram_copy_ns_per_byte`.
//! - **first-touch fault**: one byte written to each page of a fresh anonymous mapping of
//!   the region's size, with huge pages advised off: the minor fault that allocates,
//!   zeroes and maps a base page. For the phone's `response.minor_fault_ns`.
//!
//! The corpus is built in from a seed (a quarter each of the [`PageKind::BUILT_IN`]
//! kinds; the same bytes for the same seed) or read from the start of a file. Memory is
//! bounded by the settings, never by a file: the corpus and one compressed copy per codec
//! (about three times `pages` x 4 KiB with two codecs), and twice the region while a
//! fault round runs beside the copy buffers.

use std::hint::black_box;
use std::io::{self, Read};
use std::path::{Path, PathBuf};
use std::time::Instant;

use memmap2::{Advice, MmapMut};
use rand::{RngCore, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::Serialize;

use crate::error::Check;
use crate::mm::fs::Codec;
use crate::{Error, Result};

/// The page the codecs and the copy work on: the kernel's and zram's on Android.
pub const PAGE_BYTES: usize = 4096;
/// Most pages of a corpus (`--pages`): 256 MiB, held with a compressed copy per codec.
pub const MAX_PAGES: usize = 1 << 16;
/// Most rounds (`--rounds`): each is a pass over the corpus and the region.
pub const MAX_ROUNDS: usize = 1000;
/// Largest region of the copy and the faults (`--region-mib`), really allocated: 1 GiB.
pub const MAX_REGION_MIB: usize = 1024;

pub const DEFAULT_PAGES: usize = 4096;
/// Ten rounds give a median and percentiles and keep the default run near a second.
pub const DEFAULT_ROUNDS: usize = 10;
/// Larger than most CPUs' last-level cache, so copies and faults reach RAM.
pub const DEFAULT_REGION_MIB: usize = 64;
pub const DEFAULT_SEED: u64 = 1;

const CHECK: Check = Check("host costs");

/// Where the pages to compress come from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CorpusSource {
    /// Generated from a seed: [`Corpus::built_in`].
    BuiltIn { seed: u64 },
    /// The first pages of a file (`-`: standard input): [`Corpus::from_file`].
    File(PathBuf),
}

/// What to measure and how long.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Settings {
    pub source: CorpusSource,
    /// Pages of the corpus: all of a built-in one, at most this many of a file.
    pub pages: usize,
    pub rounds: usize,
    /// Size of the region the copy (its two halves) and each fault round work on, MiB.
    pub region_mib: usize,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            source: CorpusSource::BuiltIn { seed: DEFAULT_SEED },
            pages: DEFAULT_PAGES,
            rounds: DEFAULT_ROUNDS,
            region_mib: DEFAULT_REGION_MIB,
        }
    }
}

impl Settings {
    /// Rejects counts out of their bounds, naming the setting.
    pub fn check(&self) -> Result<()> {
        CHECK.range("pages", self.pages, 1..=MAX_PAGES)?;
        CHECK.range("rounds", self.rounds, 1..=MAX_ROUNDS)?;
        CHECK.range("region_mib", self.region_mib, 1..=MAX_REGION_MIB)
    }
}

/// What a page of the corpus holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum PageKind {
    /// Every byte zero (zram stores such pages without compressing them).
    Zero,
    /// A random record of 16 to 256 bytes repeated over the page: arrays of one struct.
    Pattern,
    /// Sentences of words from a 64-word list: text, logs, markup.
    Text,
    /// Uniformly random bytes: compressed or encrypted data, which does not compress.
    Random,
    /// A page of a file given by the user that is not all zeros.
    File,
}

impl PageKind {
    /// The kinds of the built-in corpus, in its order, a quarter of its pages each (the
    /// first kinds take one more page when the count does not divide by four). Equal
    /// shares claim nothing about any device's memory: the per-kind figures are what a
    /// time model can weigh by its own mix.
    pub const BUILT_IN: [PageKind; 4] = [
        PageKind::Zero,
        PageKind::Pattern,
        PageKind::Text,
        PageKind::Random,
    ];

    pub fn name(self) -> &'static str {
        match self {
            PageKind::Zero => "zero",
            PageKind::Pattern => "pattern",
            PageKind::Text => "text",
            PageKind::Random => "random",
            PageKind::File => "file",
        }
    }
}

/// How many pages of each kind a corpus holds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct KindCount {
    pub kind: PageKind,
    pub pages: usize,
}

/// What a corpus is, for the report.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CorpusSummary {
    /// `built-in` or `file`.
    pub source: &'static str,
    /// The seed of a built-in corpus.
    pub seed: Option<u64>,
    /// The file a corpus was read from.
    pub file: Option<PathBuf>,
    pub pages: usize,
    /// One sentence: what the pages are and where they come from.
    pub description: String,
    /// Kinds with at least one page, in [`PageKind`] order.
    pub kinds: Vec<KindCount>,
}

/// The pages the codecs are timed on: whole 4 KiB pages in one buffer, each of a kind.
#[derive(Debug, Clone)]
pub struct Corpus {
    bytes: Vec<u8>,
    kinds: Vec<PageKind>,
    summary: CorpusSummary,
}

/// Words of the built-in text pages: common English and the vocabulary of this domain.
const WORDS: [&str; 64] = [
    "the", "of", "and", "to", "a", "in", "is", "it", "that", "for", "on", "was", "with", "as",
    "at", "by", "this", "from", "or", "an", "be", "are", "which", "not", "page", "memory", "cache",
    "swap", "file", "process", "kernel", "app", "user", "screen", "time", "data", "list", "read",
    "write", "open", "close", "error", "value", "count", "first", "last", "next", "new", "old",
    "small", "large", "free", "used", "frame", "device", "phone", "image", "message", "network",
    "request", "window", "button", "state", "service",
];

impl Corpus {
    /// `pages` pages generated from `seed`, a quarter of each [`PageKind::BUILT_IN`]
    /// kind, in that order: the same bytes for the same seed on every machine (ChaCha8,
    /// integer draws only).
    pub fn built_in(seed: u64, pages: usize) -> Result<Corpus> {
        CHECK.range("pages", pages, 1..=MAX_PAGES)?;
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let mut bytes = vec![0u8; pages * PAGE_BYTES];
        let mut kinds = Vec::with_capacity(pages);
        let share = |i: usize| pages / 4 + usize::from(i < pages % 4);
        for (i, kind) in PageKind::BUILT_IN.into_iter().enumerate() {
            kinds.extend(std::iter::repeat_n(kind, share(i)));
        }
        for (page, &kind) in bytes.chunks_exact_mut(PAGE_BYTES).zip(&kinds) {
            match kind {
                PageKind::Pattern => fill_pattern(page, &mut rng),
                PageKind::Text => fill_text(page, &mut rng),
                PageKind::Random => rng.fill_bytes(page),
                PageKind::Zero | PageKind::File => {}
            }
        }
        let description = format!(
            "built-in, seed {seed}: {pages} pages, a quarter each of zero pages, pages \
             repeating a random 16-256-byte record, text-like pages (sentences of a \
             64-word list) and random bytes"
        );
        Ok(Corpus::new(
            bytes,
            kinds,
            "built-in",
            Some(seed),
            None,
            description,
        ))
    }

    /// The whole pages among the first `max_pages` x 4 KiB bytes of `path` (opened with
    /// [`crate::input::open`]; `-` is standard input). A last partial page is left out;
    /// a file of less than one page is an error. Pages that are all zeros are of kind
    /// [`PageKind::Zero`], the others [`PageKind::File`]. At most `max_pages` pages
    /// and one byte are read, whatever the file's size.
    pub fn from_file(path: &Path, max_pages: usize) -> Result<Corpus> {
        CHECK.range("pages", max_pages, 1..=MAX_PAGES)?;
        let limit = max_pages * PAGE_BYTES;
        let file = crate::input::open(path)?;
        let mut bytes = Vec::new();
        // The byte past the limit only tells whether the file goes on.
        file.take(limit as u64 + 1)
            .read_to_end(&mut bytes)
            .map_err(|e| Error::io(path, e))?;
        let more_follows = bytes.len() > limit;
        let read = bytes.len().min(limit);
        let pages = read / PAGE_BYTES;
        if pages == 0 {
            return Err(Error::io(
                path,
                io::Error::new(
                    io::ErrorKind::InvalidData,
                    format!(
                        "holds {read} bytes, less than one {PAGE_BYTES}-byte page: \
                         nothing to compress"
                    ),
                ),
            ));
        }
        bytes.truncate(pages * PAGE_BYTES);
        let kinds = bytes
            .chunks_exact(PAGE_BYTES)
            .map(|page| {
                if page.iter().all(|&b| b == 0) {
                    PageKind::Zero
                } else {
                    PageKind::File
                }
            })
            .collect();
        let name = path.display();
        let description = if more_follows {
            format!("the first {pages} pages of {name}")
        } else if read % PAGE_BYTES != 0 {
            format!(
                "the {pages} whole pages of {name} (its last {} bytes left out)",
                read % PAGE_BYTES
            )
        } else {
            format!("all {pages} pages of {name}")
        };
        Ok(Corpus::new(
            bytes,
            kinds,
            "file",
            None,
            Some(path.to_path_buf()),
            description + "; all-zero pages are counted as zero, the others as file",
        ))
    }

    fn new(
        bytes: Vec<u8>,
        kinds: Vec<PageKind>,
        source: &'static str,
        seed: Option<u64>,
        file: Option<PathBuf>,
        description: String,
    ) -> Corpus {
        let mut counts: Vec<KindCount> = Vec::new();
        for &kind in &kinds {
            match counts.iter_mut().find(|c| c.kind == kind) {
                Some(count) => count.pages += 1,
                None => counts.push(KindCount { kind, pages: 1 }),
            }
        }
        counts.sort_by_key(|c| c.kind);
        let summary = CorpusSummary {
            source,
            seed,
            file,
            pages: kinds.len(),
            description,
            kinds: counts,
        };
        Corpus {
            bytes,
            kinds,
            summary,
        }
    }

    /// The corpus for `settings`: built in or read from its file.
    pub fn of(settings: &Settings) -> Result<Corpus> {
        match &settings.source {
            CorpusSource::BuiltIn { seed } => Corpus::built_in(*seed, settings.pages),
            CorpusSource::File(path) => Corpus::from_file(path, settings.pages),
        }
    }

    pub fn pages(&self) -> usize {
        self.kinds.len()
    }

    /// Page `index`, 4 KiB.
    pub fn page(&self, index: usize) -> &[u8] {
        &self.bytes[index * PAGE_BYTES..(index + 1) * PAGE_BYTES]
    }

    pub fn kind(&self, index: usize) -> PageKind {
        self.kinds[index]
    }

    pub fn summary(&self) -> &CorpusSummary {
        &self.summary
    }

    /// The pages of each kind present, kinds in [`PageKind`] order.
    fn groups(&self) -> Vec<(PageKind, Vec<usize>)> {
        self.summary
            .kinds
            .iter()
            .map(|count| {
                let pages = (0..self.pages())
                    .filter(|&i| self.kinds[i] == count.kind)
                    .collect();
                (count.kind, pages)
            })
            .collect()
    }
}

/// A number below `n` from `rng` (widening multiply: integer arithmetic only, so the
/// same on every machine).
fn below(rng: &mut impl RngCore, n: usize) -> usize {
    ((u64::from(rng.next_u32()) * n as u64) >> 32) as usize
}

fn fill_pattern(page: &mut [u8], rng: &mut impl RngCore) {
    let len = 16 + below(rng, 256 - 16 + 1);
    let mut record = [0u8; 256];
    rng.fill_bytes(&mut record[..len]);
    for (i, byte) in page.iter_mut().enumerate() {
        *byte = record[i % len];
    }
}

/// Sentences of 4 to 15 words, capitalized, ending in a period and a space or, one in
/// four, a line break.
fn fill_text(page: &mut [u8], rng: &mut impl RngCore) {
    let mut text = Vec::with_capacity(page.len() + 16);
    while text.len() < page.len() {
        let words = 4 + below(rng, 12);
        for w in 0..words {
            let word = WORDS[below(rng, WORDS.len())].as_bytes();
            let start = text.len();
            text.extend_from_slice(word);
            if w == 0 {
                text[start] = text[start].to_ascii_uppercase();
            }
            text.push(if w + 1 < words { b' ' } else { b'.' });
        }
        text.push(if below(rng, 4) == 0 { b'\n' } else { b' ' });
    }
    page.copy_from_slice(&text[..page.len()]);
}

/// One measured figure: the median and the 10th and 90th percentiles over the rounds,
/// each round's value being its time divided by its pages.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Figure {
    /// "ns per 4096-byte page".
    pub unit: String,
    pub median: f64,
    pub p10: f64,
    pub p90: f64,
    pub rounds: usize,
    pub pages_per_round: usize,
}

impl Figure {
    /// The figure of the rounds' `totals` (ns, not empty), each over `pages_per_round`
    /// pages of `page_bytes`.
    fn of_totals(totals: &[f64], pages_per_round: usize, page_bytes: usize) -> Figure {
        let mut sorted: Vec<f64> = totals
            .iter()
            .map(|ns| ns / pages_per_round as f64)
            .collect();
        sorted.sort_by(f64::total_cmp);
        Figure {
            unit: format!("ns per {page_bytes}-byte page"),
            median: quantile(&sorted, 0.5),
            p10: quantile(&sorted, 0.1),
            p90: quantile(&sorted, 0.9),
            rounds: totals.len(),
            pages_per_round,
        }
    }
}

/// The value at quantile `q` of `sorted` (not empty), interpolated between the two
/// nearest values (and kept between them, so quantiles never cross).
fn quantile(sorted: &[f64], q: f64) -> f64 {
    let at = q * (sorted.len() - 1) as f64;
    let (low, high) = (sorted[at.floor() as usize], sorted[at.ceil() as usize]);
    (low + (high - low) * at.fract()).clamp(low, high)
}

/// A codec on the pages of one kind.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct KindCompression {
    pub kind: PageKind,
    pub pages: usize,
    pub original_bytes: u64,
    pub compressed_bytes: u64,
    /// Original over compressed bytes, the codec's output as it is (no zram rule).
    pub ratio: f64,
    pub compress: Figure,
    pub decompress: Figure,
}

/// A codec on the whole corpus and on each kind of page.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CodecCosts {
    pub codec: Codec,
    pub original_bytes: u64,
    pub compressed_bytes: u64,
    pub ratio: f64,
    pub compress: Figure,
    pub decompress: Figure,
    pub kinds: Vec<KindCompression>,
}

/// A figure this run could not measure, and why (not an error).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct NotMeasured {
    pub figure: String,
    pub reason: String,
}

/// The machine the figures were measured on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct HostInfo {
    /// From /proc/cpuinfo, when it names one.
    pub cpu_model: Option<String>,
    /// CPUs this process may run on.
    pub cpus: usize,
    /// uname's release ("6.1.0-18-amd64").
    pub kernel_release: String,
    pub arch: String,
    /// The system's page size: the size of a first-touch fault.
    pub page_bytes: usize,
    /// Whether this mobmem was built with optimizations (a debug build's codecs are many
    /// times slower and measure nothing worth naming).
    pub optimized_build: bool,
    pub mobmem_version: &'static str,
}

impl HostInfo {
    pub fn this() -> HostInfo {
        let uname = rustix::system::uname();
        let text = |s: &std::ffi::CStr| s.to_string_lossy().trim().to_string();
        let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
        HostInfo {
            cpu_model: crate::host::procfs::parse_cpuinfo(&cpuinfo).0,
            cpus: std::thread::available_parallelism().map_or(1, |n| n.get()),
            kernel_release: text(uname.release()),
            arch: text(uname.machine()),
            page_bytes: rustix::param::page_size(),
            optimized_build: !cfg!(debug_assertions),
            mobmem_version: env!("CARGO_PKG_VERSION"),
        }
    }
}

/// The region of the copy and the faults.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RegionInfo {
    pub bytes: u64,
    /// Whether the kernel took `MADV_NOHUGEPAGE` on the fault mappings; if not, a touch
    /// may fault in a huge page and the fault figure is not a base page's.
    pub huge_pages_advised_off: bool,
}

/// Everything one run measured.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct HostCosts {
    pub host: HostInfo,
    pub rounds: usize,
    pub corpus: CorpusSummary,
    /// One entry per codec measured: LZ4, then LZO1X-1 with the `lzo` feature.
    pub compression: Vec<CodecCosts>,
    /// Figures left out of this run (LZO in a build without the feature).
    pub not_measured: Vec<NotMeasured>,
    pub page_copy: Figure,
    pub first_touch_fault: Figure,
    pub region: RegionInfo,
}

/// The time `work` takes, ns.
fn timed(work: impl FnOnce() -> Result<()>) -> Result<f64> {
    let start = Instant::now();
    work()?;
    Ok(start.elapsed().as_nanos() as f64)
}

/// Each page of `corpus` compressed by `codec`, each checked to decompress to the page.
fn compress_and_check(codec: Codec, corpus: &Corpus) -> Result<Vec<Vec<u8>>> {
    (0..corpus.pages())
        .map(|i| {
            let page = corpus.page(i);
            let stored = codec.compress(page)?;
            let back = codec.decompress(&stored, page.len())?;
            same_page(codec, i, corpus.kind(i), page, &back)?;
            Ok(stored)
        })
        .collect()
}

/// An error unless page `index` (of `kind`) came `back` from `codec` as it was.
fn same_page(codec: Codec, index: usize, kind: PageKind, page: &[u8], back: &[u8]) -> Result<()> {
    if back == page {
        return Ok(());
    }
    Err(Error::config(
        format!("{codec} round trip"),
        format!(
            "page {index} ({}) of the corpus decompressed to other bytes",
            kind.name()
        ),
    ))
}

/// Two halves of the region: the source, filled with the corpus's pages over and over,
/// and the target, written once so its pages are mapped before any copy is timed.
struct CopyBuffers {
    source: Vec<u8>,
    target: Vec<u8>,
}

impl CopyBuffers {
    fn new(region_bytes: usize, corpus: &Corpus) -> CopyBuffers {
        let half = region_bytes / 2 / PAGE_BYTES * PAGE_BYTES;
        let mut source = vec![0u8; half];
        for (i, page) in source.chunks_exact_mut(PAGE_BYTES).enumerate() {
            page.copy_from_slice(corpus.page(i % corpus.pages()));
        }
        CopyBuffers {
            source,
            target: vec![0x5a; half],
        }
    }

    fn pages(&self) -> usize {
        self.source.len() / PAGE_BYTES
    }

    /// Every page of the source copied to the target, one page at a time.
    fn copy_all(&mut self) {
        let pages = self.target.chunks_exact_mut(PAGE_BYTES);
        for (to, from) in pages.zip(self.source.chunks_exact(PAGE_BYTES)) {
            to.copy_from_slice(from);
            // One copy of 4 KiB each, not merged into one large copy.
            black_box(to);
        }
    }
}

/// Time the first touch of every page of a fresh anonymous mapping of `bytes`: ns, and
/// whether huge pages could be advised off.
pub(crate) fn first_touches(bytes: usize, page_bytes: usize) -> Result<(f64, bool)> {
    let mut map = MmapMut::map_anon(bytes).map_err(|e| {
        Error::host(format!(
            "mapping {} MiB of anonymous memory to time first touches: {e}",
            bytes >> 20
        ))
    })?;
    let huge_pages_off = map.advise(Advice::NoHugePage).is_ok();
    let pages: &mut [u8] = &mut map;
    let ns = timed(|| {
        for at in (0..pages.len()).step_by(page_bytes) {
            pages[at] = 1;
        }
        black_box(&mut *pages);
        Ok(())
    })?;
    // Unmapping is not part of a fault: it happens here, after the timing.
    drop(map);
    Ok((ns, huge_pages_off))
}

/// Times of one codec: per kind of page, one total a round, ns.
struct CodecTimes {
    codec: Codec,
    stored: Vec<Vec<u8>>,
    compress_ns: Vec<Vec<f64>>,
    decompress_ns: Vec<Vec<f64>>,
}

/// Measure every figure on this machine with `settings`, calling `progress(done, total)`
/// after each step of each round (each codec's compression and decompression, the
/// copy, the faults). Errors: settings out of bounds, a corpus file that cannot be read
/// or holds less than a page, a page that does not round-trip, a mapping refused.
pub fn measure(settings: &Settings, progress: &mut dyn FnMut(usize, usize)) -> Result<HostCosts> {
    settings.check()?;
    let host = HostInfo::this();
    let corpus = Corpus::of(settings)?;
    let groups = corpus.groups();
    let mut not_measured = Vec::new();
    if !Codec::Lzo.is_available() {
        not_measured.push(NotMeasured {
            figure: "lzo".into(),
            reason: "this build lacks the cargo feature `lzo` (the lzo1x crate is GPL-2.0)".into(),
        });
    }
    // The codecs zram has, as its `comp_algorithm` names them.
    let mut codecs = Vec::new();
    for codec in [Codec::Lz4, Codec::Lzo]
        .into_iter()
        .filter(Codec::is_available)
    {
        codecs.push(CodecTimes {
            codec,
            stored: compress_and_check(codec, &corpus)?,
            compress_ns: vec![Vec::with_capacity(settings.rounds); groups.len()],
            decompress_ns: vec![Vec::with_capacity(settings.rounds); groups.len()],
        });
    }
    let region_bytes = settings.region_mib << 20;
    let mut copy = CopyBuffers::new(region_bytes, &corpus);
    let (mut copy_ns, mut fault_ns) = (Vec::new(), Vec::new());
    let mut huge_pages_off = true;

    let total = settings.rounds * (2 * codecs.len() + 2);
    let mut done = 0;
    let mut step = |progress: &mut dyn FnMut(usize, usize)| {
        done += 1;
        progress(done, total);
    };
    // Each round measures every figure once, so that a slow spell of a shared machine
    // touches all figures alike rather than the rounds of one.
    for _ in 0..settings.rounds {
        for times in &mut codecs {
            let codec = times.codec;
            for (g, (_, pages)) in groups.iter().enumerate() {
                let ns = timed(|| {
                    for &i in pages {
                        black_box(codec.compress(black_box(corpus.page(i)))?);
                    }
                    Ok(())
                })?;
                times.compress_ns[g].push(ns);
            }
            step(progress);
            for (g, (_, pages)) in groups.iter().enumerate() {
                let stored = &times.stored;
                let ns = timed(|| {
                    for &i in pages {
                        black_box(codec.decompress(black_box(&stored[i]), PAGE_BYTES)?);
                    }
                    Ok(())
                })?;
                times.decompress_ns[g].push(ns);
            }
            step(progress);
        }
        copy_ns.push(timed(|| {
            copy.copy_all();
            Ok(())
        })?);
        step(progress);
        let (ns, advised) = first_touches(region_bytes, host.page_bytes)?;
        fault_ns.push(ns);
        huge_pages_off &= advised;
        step(progress);
    }

    let compression = codecs
        .iter()
        .map(|times| codec_costs(times, &groups, settings.rounds))
        .collect();
    let fault_pages = region_bytes / host.page_bytes;
    Ok(HostCosts {
        rounds: settings.rounds,
        corpus: corpus.summary().clone(),
        compression,
        not_measured,
        page_copy: Figure::of_totals(&copy_ns, copy.pages(), PAGE_BYTES),
        first_touch_fault: Figure::of_totals(&fault_ns, fault_pages, host.page_bytes),
        region: RegionInfo {
            bytes: region_bytes as u64,
            huge_pages_advised_off: huge_pages_off,
        },
        host,
    })
}

/// The figures of one codec: each kind's, and the whole corpus's from the sum of the
/// kinds' times in each round.
fn codec_costs(times: &CodecTimes, groups: &[(PageKind, Vec<usize>)], rounds: usize) -> CodecCosts {
    let stored_bytes =
        |pages: &[usize]| -> u64 { pages.iter().map(|&i| times.stored[i].len() as u64).sum() };
    let figure = |totals: &[f64], pages: usize| Figure::of_totals(totals, pages, PAGE_BYTES);
    let kinds: Vec<KindCompression> = groups
        .iter()
        .enumerate()
        .map(|(g, (kind, pages))| {
            let original = (pages.len() * PAGE_BYTES) as u64;
            let compressed = stored_bytes(pages);
            KindCompression {
                kind: *kind,
                pages: pages.len(),
                original_bytes: original,
                compressed_bytes: compressed,
                ratio: original as f64 / compressed.max(1) as f64,
                compress: figure(&times.compress_ns[g], pages.len()),
                decompress: figure(&times.decompress_ns[g], pages.len()),
            }
        })
        .collect();
    let sum_over_kinds = |by_kind: &[Vec<f64>]| -> Vec<f64> {
        (0..rounds)
            .map(|r| by_kind.iter().map(|round| round[r]).sum())
            .collect()
    };
    let pages = times.stored.len();
    let original = (pages * PAGE_BYTES) as u64;
    let compressed: u64 = times.stored.iter().map(|s| s.len() as u64).sum();
    CodecCosts {
        codec: times.codec,
        original_bytes: original,
        compressed_bytes: compressed,
        ratio: original as f64 / compressed.max(1) as f64,
        compress: figure(&sum_over_kinds(&times.compress_ns), pages),
        decompress: figure(&sum_over_kinds(&times.decompress_ns), pages),
        kinds,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A short run: few pages, two rounds, a 2 MiB region.
    fn short(source: CorpusSource, pages: usize) -> Settings {
        Settings {
            source,
            pages,
            rounds: 3,
            region_mib: 2,
        }
    }

    #[test]
    fn the_built_in_corpus_follows_its_seed_and_mixes_four_kinds_evenly() {
        let a = Corpus::built_in(7, 10).unwrap();
        let b = Corpus::built_in(7, 10).unwrap();
        let other = Corpus::built_in(8, 10).unwrap();
        assert_eq!(a.bytes, b.bytes);
        assert_ne!(a.bytes, other.bytes);
        // 10 pages: the first two kinds take the two left over.
        let counts: Vec<(PageKind, usize)> = a
            .summary()
            .kinds
            .iter()
            .map(|c| (c.kind, c.pages))
            .collect();
        assert_eq!(
            counts,
            [
                (PageKind::Zero, 3),
                (PageKind::Pattern, 3),
                (PageKind::Text, 2),
                (PageKind::Random, 2)
            ]
        );
        for i in 0..a.pages() {
            let page = a.page(i);
            let zeros = page.iter().filter(|&&b| b == 0).count();
            match a.kind(i) {
                PageKind::Zero => assert_eq!(zeros, PAGE_BYTES),
                PageKind::Text => assert!(page
                    .iter()
                    .all(|b| b.is_ascii_alphabetic() || b" .\n".contains(b))),
                PageKind::Pattern => {
                    let period = (16..=256)
                        .find(|&p| page[p..] == page[..PAGE_BYTES - p])
                        .expect("a repeated record of 16 to 256 bytes");
                    assert!(page[..period].iter().any(|&b| b != 0));
                }
                PageKind::Random => assert!(zeros < 64, "{zeros} zero bytes"),
                PageKind::File => panic!("no file pages in the built-in corpus"),
            }
        }
        assert!(Corpus::built_in(1, 0).is_err());
        assert!(Corpus::built_in(1, MAX_PAGES + 1).is_err());
    }

    #[test]
    fn a_short_measurement_gives_finite_positive_ordered_figures() {
        let mut calls = Vec::new();
        let costs = measure(
            &short(CorpusSource::BuiltIn { seed: 3 }, 16),
            &mut |done, total| calls.push((done, total)),
        )
        .unwrap();
        let steps = 3 * (2 * costs.compression.len() + 2);
        assert_eq!(calls.last(), Some(&(steps, steps)));
        assert_eq!(calls.len(), steps);
        let mut figures = vec![&costs.page_copy, &costs.first_touch_fault];
        for codec in &costs.compression {
            figures.extend([&codec.compress, &codec.decompress]);
            for kind in &codec.kinds {
                figures.extend([&kind.compress, &kind.decompress]);
            }
        }
        for f in figures {
            assert!(f.p10.is_finite() && f.p10 > 0.0, "{f:?}");
            assert!(f.p10 <= f.median && f.median <= f.p90, "{f:?}");
            assert_eq!(f.rounds, 3);
        }
        assert_eq!(costs.page_copy.pages_per_round, (1 << 20) / PAGE_BYTES);
        assert_eq!(
            costs.first_touch_fault.pages_per_round,
            (2 << 20) / costs.host.page_bytes
        );
        let codecs: Vec<Codec> = costs.compression.iter().map(|c| c.codec).collect();
        let lzo = [Codec::Lzo].into_iter().filter(Codec::is_available);
        assert_eq!(
            codecs,
            [Codec::Lz4].into_iter().chain(lzo).collect::<Vec<_>>()
        );
        assert_eq!(costs.not_measured.is_empty(), Codec::Lzo.is_available());
        assert!(!costs.host.kernel_release.is_empty());
    }

    #[test]
    fn ratios_come_from_the_real_compressed_sizes() {
        let costs = measure(&short(CorpusSource::BuiltIn { seed: 5 }, 8), &mut |_, _| {}).unwrap();
        let lz4 = &costs.compression[0];
        assert_eq!(lz4.codec, Codec::Lz4);
        let zero = &lz4.kinds[0];
        assert_eq!(zero.kind, PageKind::Zero);
        let one_zero_page = lz4_flex::block::compress(&[0; PAGE_BYTES]).len();
        assert_eq!(zero.compressed_bytes, 2 * one_zero_page as u64);
        assert_eq!(zero.ratio, PAGE_BYTES as f64 / one_zero_page as f64);
        let random = lz4
            .kinds
            .iter()
            .find(|k| k.kind == PageKind::Random)
            .unwrap();
        assert!(
            random.ratio < 1.0,
            "random bytes grow a little: {}",
            random.ratio
        );
        let kinds_sum: u64 = lz4.kinds.iter().map(|k| k.compressed_bytes).sum();
        assert_eq!(lz4.compressed_bytes, kinds_sum);
        assert_eq!(lz4.original_bytes, 8 * PAGE_BYTES as u64);
    }

    #[test]
    fn every_page_round_trips_and_a_mismatch_would_be_an_error() {
        let corpus = Corpus::built_in(9, 12).unwrap();
        for codec in Codec::available() {
            let stored = compress_and_check(codec, &corpus).unwrap();
            assert_eq!(stored.len(), 12);
        }
        // Other bytes back are an error naming the page, and so is a corrupt stored page.
        let page = corpus.page(3);
        let mut other = page.to_vec();
        other[100] ^= 1;
        let e = same_page(Codec::Lz4, 3, corpus.kind(3), page, &other).unwrap_err();
        assert_eq!(
            e.to_string(),
            "lz4 round trip: page 3 (pattern) of the corpus decompressed to other bytes"
        );
        assert!(same_page(Codec::Lz4, 3, corpus.kind(3), page, page).is_ok());
        let mut stored = compress_and_check(Codec::Lz4, &corpus).unwrap();
        let text = (0..12).find(|&i| corpus.kind(i) == PageKind::Text).unwrap();
        let half = stored[text].len() / 2;
        stored[text].truncate(half);
        assert!(Codec::Lz4.decompress(&stored[text], PAGE_BYTES).is_err());
    }

    #[test]
    fn a_file_is_read_up_to_the_pages_asked_for_and_a_short_one_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("dump");
        let mut bytes = vec![0u8; PAGE_BYTES];
        bytes.extend((0..2 * PAGE_BYTES + 100).map(|i| (i % 251) as u8));
        std::fs::write(&path, &bytes).unwrap();

        let all = Corpus::from_file(&path, 10).unwrap();
        assert_eq!(all.pages(), 3);
        assert_eq!(all.kind(0), PageKind::Zero);
        assert_eq!(all.kind(2), PageKind::File);
        assert_eq!(all.page(2), &bytes[2 * PAGE_BYTES..3 * PAGE_BYTES]);
        assert!(
            all.summary()
                .description
                .contains("last 100 bytes left out"),
            "{}",
            all.summary().description
        );
        let first = Corpus::from_file(&path, 2).unwrap();
        assert_eq!(first.pages(), 2);
        assert!(first.summary().description.starts_with("the first 2 pages"));

        let small = dir.path().join("small");
        std::fs::write(&small, vec![1u8; PAGE_BYTES - 1]).unwrap();
        let e = Corpus::from_file(&small, 10).unwrap_err().to_string();
        assert!(
            e.contains("small") && e.contains("4095 bytes, less than one"),
            "{e}"
        );
        let empty = dir.path().join("empty");
        std::fs::write(&empty, b"").unwrap();
        let e = Corpus::from_file(&empty, 10).unwrap_err().to_string();
        assert!(e.contains("holds 0 bytes"), "{e}");
        let e = Corpus::from_file(dir.path(), 10).unwrap_err().to_string();
        assert!(e.contains("is a folder"), "{e}");
        let e = Corpus::from_file(&dir.path().join("missing"), 10).unwrap_err();
        assert!(e.to_string().contains("missing"), "{e}");
    }

    #[test]
    fn a_measurement_on_a_file_names_it_and_settings_out_of_bounds_are_errors() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("text");
        std::fs::write(&path, "a line of a file\n".repeat(1000)).unwrap();
        let costs = measure(&short(CorpusSource::File(path.clone()), 64), &mut |_, _| {}).unwrap();
        assert_eq!(costs.corpus.source, "file");
        assert_eq!(costs.corpus.file.as_deref(), Some(path.as_path()));
        assert_eq!(costs.corpus.pages, 17000 / PAGE_BYTES);
        assert!(costs.compression[0].ratio > 10.0);

        let built_in = CorpusSource::BuiltIn { seed: 1 };
        for (settings, name) in [
            (
                Settings {
                    rounds: 0,
                    ..short(built_in.clone(), 4)
                },
                "rounds",
            ),
            (
                Settings {
                    region_mib: MAX_REGION_MIB + 1,
                    ..short(built_in.clone(), 4)
                },
                "region_mib",
            ),
            (short(built_in.clone(), MAX_PAGES + 1), "pages"),
        ] {
            let e = measure(&settings, &mut |_, _| {}).unwrap_err().to_string();
            assert!(e.contains(name), "{e}");
        }
    }

    #[test]
    fn quantiles_interpolate_and_keep_their_order() {
        let sorted = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0];
        assert_eq!(quantile(&sorted, 0.5), 6.0);
        assert_eq!(quantile(&sorted, 0.1), 2.0);
        assert_eq!(quantile(&sorted, 0.9), 10.0);
        assert_eq!(quantile(&[4.0, 8.0], 0.5), 6.0);
        assert_eq!(quantile(&[3.0], 0.1), 3.0);
        // Totals of three rounds over two pages each.
        let f = Figure::of_totals(&[10.0, 2.0, 6.0], 2, 4096);
        let near = |a: f64, b: f64| (a - b).abs() < 1e-9;
        assert!(
            near(f.p10, 1.4) && f.median == 3.0 && near(f.p90, 4.6),
            "{f:?}"
        );
        assert_eq!(f.unit, "ns per 4096-byte page");
    }
}
