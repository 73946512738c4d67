//! The parameters of a synthetic workload, as they appear in an experiment file.
//!
//! Every field has a default, so a file states only what it changes; unknown fields are
//! errors, so a misspelt parameter is caught instead of silently ignored. `docs/workloads.md`
//! has the same parameters as a table, with their value in each preset.

use serde::{Deserialize, Serialize};

use crate::{Error, Result};

/// Most apps a workload may have (the generator scans them on every background event).
pub const MAX_APPS: usize = 256;
/// Most accesses one trace may have after scaling (16 bytes each in memory).
pub const MAX_ACCESSES: u64 = 1_000_000_000;
/// Most region pages all apps together may have after scaling.
pub const MAX_REGION_PAGES: u64 = 100_000_000;

/// A whole synthetic workload: the apps and how the user moves between them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WorkloadConfig {
    /// Page accesses to generate at `scale` 1; the trace ends after the last one.
    #[serde(default = "defaults::accesses")]
    pub accesses: u64,
    /// Multiplies `accesses`, every region's `pages` and every `fresh.revisit_window`, so the
    /// footprint grows with the trace and hit-ratio curves keep their shape. Times (rates,
    /// intervals, session lengths) are not scaled: a scaled trace lasts longer.
    #[serde(default = "defaults::scale")]
    pub scale: f64,
    /// Mean time an app stays in the foreground before the user switches to another, in
    /// seconds (exponentially distributed). Unused when only one app can be foreground.
    #[serde(default = "defaults::session_mean_s")]
    pub session_mean_s: f64,
    /// The apps. The first one with a positive `foreground_weight` is in the foreground at
    /// time 0.
    #[serde(default)]
    pub apps: Vec<AppConfig>,
}

/// One app: one process with its own pages.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AppConfig {
    /// Process name (the Android package name).
    #[serde(default)]
    pub name: String,
    /// Linux process id, at least 1 and distinct per app. Anonymous pages are keyed by it.
    #[serde(default)]
    pub pid: u32,
    /// Relative chance of being chosen as the next foreground app; 0 keeps the app in the
    /// background for the whole trace.
    #[serde(default = "defaults::foreground_weight")]
    pub foreground_weight: f64,
    /// The process exists at time 0. Otherwise it starts when first brought to the
    /// foreground (and never, if it never is).
    #[serde(default)]
    pub running_at_start: bool,
    /// Page accesses per second while in the foreground (Poisson arrivals).
    #[serde(default = "defaults::foreground_rate_per_s")]
    pub foreground_rate_per_s: f64,
    /// Popularity skew inside each region: the page of rank `r` (0-based) is accessed in
    /// proportion to `(r + 1)^-zipf_exponent`; 0 is uniform.
    #[serde(default = "defaults::zipf_exponent")]
    pub zipf_exponent: f64,
    /// The app's pages: files (code, resources, databases, caches) and anonymous memory.
    #[serde(default = "defaults::regions")]
    pub regions: Vec<RegionConfig>,
    /// A stream of new content (web pages, feed images) the app keeps adding while in the
    /// foreground; absent for apps without one.
    #[serde(default)]
    pub fresh: Option<FreshConfig>,
    /// What the app does while not in the foreground.
    #[serde(default)]
    pub background: BackgroundConfig,
}

/// Whether a region's pages cache a file or are anonymous memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RegionKind {
    /// Page-cache pages of one file of the app (`PageKey::file`).
    File,
    /// Anonymous pages of the app's process (`PageKey::anon`).
    Anon,
}

/// A set of an app's pages with one popularity ranking and one read/write mix.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RegionConfig {
    /// Label, e.g. `code` or `database`.
    #[serde(default)]
    pub name: String,
    /// File pages or anonymous pages.
    #[serde(default = "defaults::region_kind")]
    pub kind: RegionKind,
    /// Pages in the region at scale 1. Only pages that are accessed count in the footprint.
    #[serde(default = "defaults::region_pages")]
    pub pages: u64,
    /// Relative share of the app's foreground accesses (normalized over its regions).
    #[serde(default)]
    pub foreground_weight: f64,
    /// Relative share of the app's background accesses (normalized over its regions).
    #[serde(default)]
    pub background_weight: f64,
    /// Fraction of this region's accesses that write, 0..=1.
    #[serde(default)]
    pub write_fraction: f64,
}

/// New content: each visit to a site brings pages that are written once (downloaded),
/// re-read a few times during the visit and then rarely again, unless the site is revisited.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FreshConfig {
    /// Fraction of the app's foreground accesses that go to this content, 0..=1; the rest
    /// go to its regions.
    #[serde(default = "defaults::fresh_share")]
    pub share: f64,
    /// Mean pages a site brings (uniform between half and one and a half times this).
    #[serde(default = "defaults::fresh_pages_per_site")]
    pub pages_per_site: u32,
    /// Mean accesses per page during one visit, at least 1: one in the sequential pass over
    /// the site, the others random re-reads of the site's pages.
    #[serde(default = "defaults::fresh_touches_per_page")]
    pub touches_per_page: f64,
    /// Probability that a visit returns to an earlier site (reads only) instead of a new one.
    #[serde(default = "defaults::fresh_revisit_probability")]
    pub revisit_probability: f64,
    /// A revisit picks uniformly among this many most recent sites (scaled by `scale`).
    #[serde(default = "defaults::fresh_revisit_window")]
    pub revisit_window: u32,
}

/// Background behaviour: bursts after leaving the foreground and periodic wakeups (push
/// messages, sync, playback).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BackgroundConfig {
    /// `oom_score_adj` while in the background because the app keeps a service (500 for a
    /// push or sync service, 200 for audible playback), 1..=1000. Absent: 700 while it is
    /// the previous app (the last one to leave the foreground), 900 (cached) after.
    #[serde(default)]
    pub service_adj: Option<i16>,
    /// Mean time between wakeups while in the background, in seconds (Poisson arrivals,
    /// counted from the end of the previous burst); 0: never wakes up.
    #[serde(default)]
    pub wakeup_interval_s: f64,
    /// Mean accesses per wakeup burst (uniform between half and one and a half times this).
    #[serde(default = "defaults::burst_accesses")]
    pub burst_accesses: u32,
    /// Mean accesses of the burst right after the app leaves the foreground (saving state,
    /// finishing loads); 0: none.
    #[serde(default)]
    pub leave_accesses: u32,
    /// Mean time between two accesses of a background burst, in milliseconds (exponential).
    #[serde(default = "defaults::access_gap_ms")]
    pub access_gap_ms: f64,
}

impl Default for BackgroundConfig {
    fn default() -> Self {
        BackgroundConfig {
            service_adj: None,
            wakeup_interval_s: 0.0,
            burst_accesses: defaults::burst_accesses(),
            leave_accesses: 0,
            access_gap_ms: defaults::access_gap_ms(),
        }
    }
}

impl Default for FreshConfig {
    fn default() -> Self {
        FreshConfig {
            share: defaults::fresh_share(),
            pages_per_site: defaults::fresh_pages_per_site(),
            touches_per_page: defaults::fresh_touches_per_page(),
            revisit_probability: defaults::fresh_revisit_probability(),
            revisit_window: defaults::fresh_revisit_window(),
        }
    }
}

impl RegionConfig {
    pub fn new(name: &str, kind: RegionKind, pages: u64) -> Self {
        RegionConfig {
            name: name.to_string(),
            kind,
            pages,
            foreground_weight: 0.0,
            background_weight: 0.0,
            write_fraction: 0.0,
        }
    }

    /// Builder-style setters, so presets read as one line per region.
    pub fn weights(mut self, foreground: f64, background: f64) -> Self {
        self.foreground_weight = foreground;
        self.background_weight = background;
        self
    }

    pub fn writes(mut self, write_fraction: f64) -> Self {
        self.write_fraction = write_fraction;
        self
    }
}

impl AppConfig {
    /// An app with the default parameters and regions.
    pub fn new(name: &str, pid: u32) -> Self {
        AppConfig {
            name: name.to_string(),
            pid,
            foreground_weight: defaults::foreground_weight(),
            running_at_start: false,
            foreground_rate_per_s: defaults::foreground_rate_per_s(),
            zipf_exponent: defaults::zipf_exponent(),
            regions: defaults::regions(),
            fresh: None,
            background: BackgroundConfig::default(),
        }
    }
}

pub(crate) mod defaults {
    use super::{RegionConfig, RegionKind};

    pub fn accesses() -> u64 {
        1_500_000
    }
    pub fn scale() -> f64 {
        1.0
    }
    pub fn session_mean_s() -> f64 {
        20.0
    }
    pub fn foreground_weight() -> f64 {
        1.0
    }
    pub fn foreground_rate_per_s() -> f64 {
        2000.0
    }
    pub fn zipf_exponent() -> f64 {
        0.9
    }
    pub fn region_kind() -> RegionKind {
        RegionKind::File
    }
    pub fn region_pages() -> u64 {
        1000
    }
    /// A generic app: code and resources read in the foreground, a database written in
    /// both states, a heap.
    pub fn regions() -> Vec<RegionConfig> {
        vec![
            RegionConfig::new("code", RegionKind::File, 2000).weights(0.35, 0.1),
            RegionConfig::new("database", RegionKind::File, 300)
                .weights(0.15, 0.6)
                .writes(0.35),
            RegionConfig::new("heap", RegionKind::Anon, 2000)
                .weights(0.5, 0.3)
                .writes(0.4),
        ]
    }
    pub fn fresh_share() -> f64 {
        0.25
    }
    pub fn fresh_pages_per_site() -> u32 {
        50
    }
    pub fn fresh_touches_per_page() -> f64 {
        4.0
    }
    pub fn fresh_revisit_probability() -> f64 {
        0.3
    }
    pub fn fresh_revisit_window() -> u32 {
        50
    }
    pub fn burst_accesses() -> u32 {
        100
    }
    pub fn access_gap_ms() -> f64 {
        0.5
    }
}

/// The scaled value of a count: `count * scale` rounded, at least 1 when `count` is not 0.
pub(crate) fn scaled(count: u64, scale: f64) -> u64 {
    if count == 0 {
        return 0;
    }
    let value = (count as f64 * scale).round();
    // `as` saturates, so absurd scales give u64::MAX, which validation rejects.
    (value as u64).max(1)
}

impl WorkloadConfig {
    /// Accesses the trace will have: `accesses * scale`, rounded.
    pub fn total_accesses(&self) -> u64 {
        scaled(self.accesses, self.scale)
    }

    /// Check that the workload can be generated; the error names the app, region and
    /// parameter at fault.
    pub fn validate(&self) -> Result<()> {
        let ctx = "workload";
        if self.accesses == 0 {
            return Err(Error::config(ctx, "accesses must be at least 1"));
        }
        positive(ctx, "scale", self.scale)?;
        let total = self.total_accesses();
        if total > MAX_ACCESSES {
            return Err(Error::config(
                ctx,
                format!("accesses * scale = {total} is more than the limit of {MAX_ACCESSES}"),
            ));
        }
        positive(ctx, "session_mean_s", self.session_mean_s)?;
        if self.apps.is_empty() {
            return Err(Error::config(ctx, "needs at least one app"));
        }
        if self.apps.len() > MAX_APPS {
            return Err(Error::config(
                ctx,
                format!(
                    "has {} apps, more than the limit of {MAX_APPS}",
                    self.apps.len()
                ),
            ));
        }
        for (i, app) in self.apps.iter().enumerate() {
            app.validate(&app_context(i, app))?;
            if let Some(other) = self.apps[..i].iter().find(|a| a.name == app.name) {
                return Err(Error::config(
                    ctx,
                    format!("two apps are named '{}'", other.name),
                ));
            }
            if let Some(other) = self.apps[..i].iter().find(|a| a.pid == app.pid) {
                return Err(Error::config(
                    ctx,
                    format!(
                        "apps '{}' and '{}' have the same pid {}",
                        other.name, app.name, app.pid
                    ),
                ));
            }
        }
        if !self.apps.iter().any(|a| a.foreground_weight > 0.0) {
            return Err(Error::config(
                ctx,
                "needs an app with foreground_weight > 0",
            ));
        }
        let region_pages: u64 = self
            .apps
            .iter()
            .flat_map(|a| &a.regions)
            .map(|r| scaled(r.pages, self.scale))
            .fold(0u64, u64::saturating_add);
        if region_pages > MAX_REGION_PAGES {
            return Err(Error::config(
                ctx,
                format!("regions have {region_pages} pages after scaling, more than the limit of {MAX_REGION_PAGES}"),
            ));
        }
        for (i, app) in self.apps.iter().enumerate() {
            if let Some(fresh) = &app.fresh {
                if scaled(u64::from(fresh.revisit_window), self.scale) > u64::from(u32::MAX) {
                    return Err(Error::config(
                        format!("{}: fresh", app_context(i, app)),
                        "revisit_window * scale does not fit in 32 bits",
                    ));
                }
            }
        }
        Ok(())
    }
}

fn app_context(index: usize, app: &AppConfig) -> String {
    if app.name.is_empty() {
        format!("workload app #{}", index + 1)
    } else {
        format!("workload app '{}'", app.name)
    }
}

impl AppConfig {
    fn validate(&self, ctx: &str) -> Result<()> {
        if self.name.is_empty() {
            return Err(Error::config(ctx, "needs a name"));
        }
        if self.pid == 0 {
            return Err(Error::config(ctx, "needs a pid of at least 1"));
        }
        non_negative(ctx, "foreground_weight", self.foreground_weight)?;
        non_negative(ctx, "zipf_exponent", self.zipf_exponent)?;
        let can_be_foreground = self.foreground_weight > 0.0;
        if !can_be_foreground && !self.running_at_start {
            return Err(Error::config(
                ctx,
                "never runs: give it foreground_weight > 0 or running_at_start = true",
            ));
        }
        if self.regions.is_empty() {
            return Err(Error::config(ctx, "needs at least one region"));
        }
        for region in &self.regions {
            let region_ctx = format!("{ctx}: region '{}'", region.name);
            if region.pages == 0 {
                return Err(Error::config(region_ctx, "needs at least 1 page"));
            }
            non_negative(&region_ctx, "foreground_weight", region.foreground_weight)?;
            non_negative(&region_ctx, "background_weight", region.background_weight)?;
            fraction(&region_ctx, "write_fraction", region.write_fraction)?;
        }
        let fresh_share = match &self.fresh {
            Some(fresh) => {
                fresh.validate(&format!("{ctx}: fresh"))?;
                fresh.share
            }
            None => 0.0,
        };
        let foreground_weights: f64 = self.regions.iter().map(|r| r.foreground_weight).sum();
        if can_be_foreground {
            positive(ctx, "foreground_rate_per_s", self.foreground_rate_per_s)?;
            if !foreground_weights.is_finite() {
                return Err(Error::config(
                    ctx,
                    "region foreground weights sum to infinity",
                ));
            }
            if foreground_weights == 0.0 && fresh_share < 1.0 {
                return Err(Error::config(
                    ctx,
                    "can be foreground but no region has foreground_weight > 0 (and fresh.share < 1)",
                ));
            }
        }
        self.background
            .validate(&format!("{ctx}: background"), &self.regions)
    }
}

impl FreshConfig {
    fn validate(&self, ctx: &str) -> Result<()> {
        fraction(ctx, "share", self.share)?;
        if self.pages_per_site == 0 {
            return Err(Error::config(ctx, "pages_per_site must be at least 1"));
        }
        if !(self.touches_per_page >= 1.0 && self.touches_per_page <= 1e6) {
            return Err(Error::config(
                ctx,
                format!(
                    "touches_per_page must be in 1..=1e6, got {}",
                    self.touches_per_page
                ),
            ));
        }
        fraction(ctx, "revisit_probability", self.revisit_probability)?;
        if self.revisit_window == 0 {
            return Err(Error::config(ctx, "revisit_window must be at least 1"));
        }
        Ok(())
    }
}

impl BackgroundConfig {
    fn validate(&self, ctx: &str, regions: &[RegionConfig]) -> Result<()> {
        if let Some(adj) = self.service_adj {
            if !(1..=1000).contains(&adj) {
                return Err(Error::config(
                    ctx,
                    format!("service_adj must be in 1..=1000 (0 is the foreground), got {adj}"),
                ));
            }
        }
        non_negative(ctx, "wakeup_interval_s", self.wakeup_interval_s)?;
        non_negative(ctx, "access_gap_ms", self.access_gap_ms)?;
        let wakes_up = self.wakeup_interval_s > 0.0;
        if wakes_up && self.burst_accesses == 0 {
            return Err(Error::config(
                ctx,
                "wakes up (wakeup_interval_s > 0) but burst_accesses is 0",
            ));
        }
        let background_weights: f64 = regions.iter().map(|r| r.background_weight).sum();
        if (wakes_up || self.leave_accesses > 0)
            && !(background_weights > 0.0 && background_weights.is_finite())
        {
            return Err(Error::config(
                ctx,
                "has background accesses but no region has a finite background_weight > 0",
            ));
        }
        Ok(())
    }
}

/// `Ok` when `holds`, else an error saying `name` must be `rule` and what it was.
fn check(ctx: &str, name: &str, value: f64, holds: bool, rule: &str) -> Result<()> {
    if holds {
        Ok(())
    } else {
        Err(Error::config(
            ctx,
            format!("{name} must be {rule}, got {value}"),
        ))
    }
}

fn positive(ctx: &str, name: &str, value: f64) -> Result<()> {
    let holds = value > 0.0 && value.is_finite();
    check(ctx, name, value, holds, "positive and finite")
}

fn non_negative(ctx: &str, name: &str, value: f64) -> Result<()> {
    let holds = value >= 0.0 && value.is_finite();
    check(ctx, name, value, holds, "non-negative and finite")
}

fn fraction(ctx: &str, name: &str, value: f64) -> Result<()> {
    check(
        ctx,
        name,
        value,
        (0.0..=1.0).contains(&value),
        "within 0..=1",
    )
}

impl super::Params for WorkloadConfig {
    fn validate(&self) -> Result<()> {
        WorkloadConfig::validate(self)
    }
    fn scale(&mut self, factor: f64) {
        self.scale *= factor;
    }
    fn generate(&self, seed: u64) -> Result<crate::trace::Trace> {
        super::generate(self, seed)
    }
}
