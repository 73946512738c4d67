//! Workloads for KSM.
//!
//! [`AndroidConfig`]: the paper's case (Kim, Hong, Shin, SKKU). Apps forked from Zygote
//! register their Dalvik heap, native heap and stack as mergeable; the pages Zygote
//! shares at fork time are already shared and are not modeled, only the anonymous pages
//! the apps write at run time. Each region's pages are a mix of zero pages, pages whose
//! content other apps' same region also holds (cross-app duplicates: the i-th duplicate
//! page of a region kind has the same content in every app that has one), unique pages
//! and volatile pages rewritten periodically. Zero and duplicate pages are written once,
//! later (the heap fills them): at an exponentially distributed time. Every number is an
//! assumption stated in docs/ksm.md; the paper gives none of them.
//!
//! [`ValidateLayout`]: the content `mobmem ksm-validate` makes real processes allocate,
//! byte for byte, and the same content as a [`Population`] for the simulator.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

use super::pages::{
    fingerprint, mix, zero_fingerprint, PageContent, Population, NEVER, PAGE_BYTES,
};
use crate::{Error, Result};

/// One mergeable region of an app.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RegionSpec {
    /// Region kind: regions of the same kind in different apps share duplicate contents.
    pub kind: String,
    pub pages: usize,
    /// Shares of the pages (the rest are unique).
    pub zero: f64,
    pub duplicate: f64,
    pub volatile: f64,
}

/// One app.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AppSpec {
    pub name: String,
    /// Launch time: its pages exist from then on, ms.
    pub start_ms: u64,
    pub regions: Vec<RegionSpec>,
}

/// The Android preset.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct AndroidConfig {
    pub apps: Vec<AppSpec>,
    /// Volatile pages are rewritten every period, drawn log-uniformly from this range, ms.
    pub volatile_period_ms: (u64, u64),
    /// Mean time until a zero or duplicate page is written (once), s (0: never).
    pub fill_mean_s: f64,
    /// Multiply every region's size.
    pub scale: f64,
}

fn region(kind: &str, pages: usize, zero: f64, duplicate: f64, volatile: f64) -> RegionSpec {
    RegionSpec {
        kind: kind.into(),
        pages,
        zero,
        duplicate,
        volatile,
    }
}

fn app(name: &str, start_ms: u64, dalvik: usize, native: usize, stack: usize) -> AppSpec {
    AppSpec {
        name: name.into(),
        start_ms,
        regions: vec![
            region("dalvik-heap", dalvik, 0.15, 0.25, 0.10),
            region("native-heap", native, 0.20, 0.15, 0.10),
            region("stack", stack, 0.50, 0.05, 0.30),
        ],
    }
}

/// The four apps of the paper, launched 15 s apart.
pub const ANDROID_APPS: [&str; 4] = ["browser", "camera", "gallery", "youtube"];

impl Default for AndroidConfig {
    fn default() -> Self {
        AndroidConfig {
            apps: vec![
                app("browser", 0, 6144, 8192, 256),
                app("camera", 15_000, 3072, 5120, 192),
                app("gallery", 30_000, 5120, 6144, 192),
                app("youtube", 45_000, 5120, 7168, 256),
            ],
            volatile_period_ms: (50, 5_000),
            fill_mean_s: 600.0,
            scale: 1.0,
        }
    }
}

/// Most pages a workload may have (32 GiB of 4 KiB pages): the simulator keeps tens of
/// bytes per page.
pub const MAX_PAGES: u64 = 1 << 23;

impl AndroidConfig {
    pub fn validate(&self) -> Result<()> {
        let bad = |m: String| Err(Error::config("ksm android preset", m));
        if !(self.scale.is_finite() && self.scale > 0.0) {
            return bad("scale must be > 0".into());
        }
        let pages: f64 = self
            .apps
            .iter()
            .flat_map(|a| &a.regions)
            .map(|r| (r.pages as f64 * self.scale).round())
            .sum();
        if pages > MAX_PAGES as f64 {
            return bad(format!(
                "scale {} makes {pages:.0} pages, more than the {MAX_PAGES} allowed",
                self.scale
            ));
        }
        let (lo, hi) = self.volatile_period_ms;
        if lo == 0 || hi < lo {
            return bad("volatile_period_ms must be (low, high) with 0 < low <= high".into());
        }
        if !(self.fill_mean_s.is_finite() && self.fill_mean_s >= 0.0) {
            return bad("fill_mean_s must be >= 0".into());
        }
        for a in &self.apps {
            for r in &a.regions {
                let shares = [r.zero, r.duplicate, r.volatile];
                if shares.iter().any(|s| !(0.0..=1.0).contains(s))
                    || shares.iter().sum::<f64>() > 1.0 + 1e-9
                {
                    return bad(format!(
                        "app {} region {}: zero, duplicate and volatile shares must be in 0..1 and sum to at most 1",
                        a.name, r.kind
                    ));
                }
            }
        }
        Ok(())
    }

    /// The page population, deterministic by seed.
    pub fn generate(&self, seed: u64) -> Result<Population> {
        self.validate()?;
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let zero = zero_fingerprint();
        let mut pop = Population::default();
        let fill_at = |rng: &mut ChaCha8Rng, start_ns: u64| {
            if self.fill_mean_s > 0.0 {
                let u: f64 = rng.gen_range(f64::EPSILON..1.0);
                start_ns + (-u.ln() * self.fill_mean_s * 1e9) as u64
            } else {
                NEVER
            }
        };
        for (a, spec) in self.apps.iter().enumerate() {
            let start_ns = spec.start_ms * 1_000_000;
            let mut regions = Vec::new();
            for r in &spec.regions {
                let pages = ((r.pages as f64) * self.scale).round() as usize;
                let n_zero = (pages as f64 * r.zero).round() as usize;
                let n_dup = (pages as f64 * r.duplicate).round() as usize;
                let n_vol = ((pages as f64 * r.volatile).round() as usize)
                    .min(pages - n_zero.min(pages) - n_dup.min(pages - n_zero.min(pages)));
                let kind_tag = fingerprint(r.kind.as_bytes());
                // Classes in address order would make runs of one class; shuffle them.
                let mut classes: Vec<u8> = Vec::with_capacity(pages);
                classes.extend(std::iter::repeat_n(0u8, n_zero));
                classes.extend(std::iter::repeat_n(1u8, n_dup));
                classes.extend(std::iter::repeat_n(2u8, n_vol));
                classes.resize(pages, 3);
                for i in (1..classes.len()).rev() {
                    let j = rng.gen_range(0..=i);
                    classes.swap(i, j);
                }
                let mut dup_index = 0u64;
                let mut contents = Vec::with_capacity(pages);
                for (i, class) in classes.into_iter().enumerate() {
                    let unique = mix(mix(seed ^ kind_tag) ^ ((a as u64) << 32 | i as u64));
                    let c = match class {
                        0 => PageContent {
                            write_at_ns: fill_at(&mut rng, start_ns),
                            ..PageContent::constant(zero)
                        },
                        1 => {
                            dup_index += 1;
                            PageContent {
                                write_at_ns: fill_at(&mut rng, start_ns),
                                ..PageContent::constant(mix(kind_tag ^ mix(dup_index)))
                            }
                        }
                        2 => {
                            let (lo, hi) = self.volatile_period_ms;
                            let period_ms = if hi > lo {
                                ((lo as f64).ln()
                                    + rng.gen::<f64>() * ((hi as f64).ln() - (lo as f64).ln()))
                                .exp()
                            } else {
                                lo as f64
                            };
                            let period_ns = (period_ms * 1e6) as u64;
                            PageContent {
                                base: unique,
                                period_ns,
                                phase_ns: rng.gen_range(0..period_ns.max(1)),
                                ..PageContent::constant(unique)
                            }
                        }
                        _ => PageContent::constant(unique),
                    };
                    contents.push(c);
                }
                regions.push((r.kind.clone(), contents));
            }
            pop.push_process(&spec.name, start_ns, regions)?;
        }
        Ok(pop)
    }
}

/// What each `ksm-validate` worker process allocates, in this order in one anonymous
/// mapping: duplicate pages (the same contents in every worker), unique pages, zero
/// pages (written with zeros, so present), volatile pages (rewritten every
/// `volatile_period_ms` with new data).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ValidateLayout {
    pub workers: u32,
    pub duplicate: u32,
    pub unique: u32,
    pub zero: u32,
    pub volatile: u32,
    pub volatile_period_ms: u64,
}

/// Kind of a validation page.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ValidateKind {
    Duplicate,
    Unique,
    Zero,
    Volatile,
}

/// Most pages one validation worker may allocate (4 GiB).
pub const MAX_WORKER_PAGES: u64 = 1 << 20;
/// Most pages all validation workers together may allocate (16 GiB).
pub const MAX_VALIDATE_PAGES: u64 = 1 << 22;

impl ValidateLayout {
    pub fn pages_per_worker(&self) -> usize {
        (self.duplicate as u64 + self.unique as u64 + self.zero as u64 + self.volatile as u64)
            as usize
    }

    /// At least one worker with one page; within [`MAX_WORKER_PAGES`] per worker and
    /// [`MAX_VALIDATE_PAGES`] in all.
    pub fn validate(&self) -> Result<()> {
        let bad = |m: String| Err(Error::config("ksm-validate layout", m));
        let per_worker = self.pages_per_worker() as u64;
        if self.workers == 0 || per_worker == 0 {
            return bad("need at least one worker with at least one page".into());
        }
        if per_worker > MAX_WORKER_PAGES {
            return bad(format!(
                "{per_worker} pages per worker (duplicate {} + unique {} + zero {} + volatile {}) are more than the {MAX_WORKER_PAGES} allowed",
                self.duplicate, self.unique, self.zero, self.volatile
            ));
        }
        let total = per_worker * self.workers as u64;
        if total > MAX_VALIDATE_PAGES {
            return bad(format!(
                "{} workers x {per_worker} pages are more than the {MAX_VALIDATE_PAGES} pages allowed",
                self.workers
            ));
        }
        Ok(())
    }

    pub fn kind_of(&self, index: usize) -> ValidateKind {
        let i = index as u64;
        let unique_from = self.duplicate as u64;
        let zero_from = unique_from + self.unique as u64;
        let volatile_from = zero_from + self.zero as u64;
        if i < unique_from {
            ValidateKind::Duplicate
        } else if i < zero_from {
            ValidateKind::Unique
        } else if i < volatile_from {
            ValidateKind::Zero
        } else {
            ValidateKind::Volatile
        }
    }

    /// Fill `page` (4 KiB) with the content of page `index` of `worker` at volatile
    /// generation `generation` (only volatile pages change with it).
    pub fn fill(&self, page: &mut [u8], worker: u32, index: usize, generation: u64) {
        let seed = match self.kind_of(index) {
            ValidateKind::Zero => {
                page.fill(0);
                return;
            }
            ValidateKind::Duplicate => mix(0xd0_d0 ^ mix(index as u64)),
            ValidateKind::Unique => mix(0x0e_0e ^ mix((worker as u64) << 32 | index as u64)),
            ValidateKind::Volatile => {
                mix(0x7a_7a ^ mix((worker as u64) << 32 | index as u64) ^ mix(generation))
            }
        };
        for (j, word) in page.chunks_exact_mut(8).enumerate() {
            word.copy_from_slice(&mix(seed ^ j as u64).to_le_bytes());
        }
    }

    /// The same content as a population (one process per worker, one region each, all
    /// present from time 0); volatile pages change every period from time 0.
    pub fn population(&self) -> Result<Population> {
        self.validate()?;
        let mut pop = Population::default();
        let mut buf = vec![0u8; PAGE_BYTES];
        for w in 0..self.workers {
            let mut contents = Vec::with_capacity(self.pages_per_worker());
            for i in 0..self.pages_per_worker() {
                self.fill(&mut buf, w, i, 0);
                let base = fingerprint(&buf);
                contents.push(match self.kind_of(i) {
                    ValidateKind::Volatile => PageContent {
                        period_ns: self.volatile_period_ms * 1_000_000,
                        ..PageContent::constant(base)
                    },
                    _ => PageContent::constant(base),
                });
            }
            pop.push_process(&format!("worker-{w}"), 0, vec![("anon".into(), contents)])?;
        }
        Ok(pop)
    }
}
