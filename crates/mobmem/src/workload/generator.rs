//! Turning a [`WorkloadConfig`] into a trace.
//!
//! The generator is a small discrete-event simulation. Event sources, each with the time of
//! its next event:
//! - the foreground app's accesses (Poisson, its `foreground_rate_per_s`);
//! - the end of the foreground session (the user switches app);
//! - per background app, its next background access (inside a burst) or its next wakeup.
//!
//! The earliest source goes next; on a tie the foreground goes first, then the session end,
//! then apps in config order, so time stamps never decrease and the trace depends on
//! nothing but the config and the seed. All randomness comes from one ChaCha8 stream.

use rand::{RngCore, SeedableRng};
use rand_chacha::ChaCha8Rng;

use super::config::{scaled, AppConfig, FreshConfig, RegionKind, WorkloadConfig};
use super::sampling::{standard_exponential, unit, zipf_weights, AliasTable};
use crate::trace::{Event, Interner, PageId, PageKey, ProcId, Trace, ADJ_FOREGROUND};
use crate::{Error, Result};

/// The importance levels the generator assigns (Android's, in the trace model).
pub use crate::trace::{ADJ_CACHED, ADJ_PREVIOUS};

/// A page drawn for an access: its id, whether the access writes, whether the page is
/// anonymous.
type Access = Result<(PageId, bool, bool)>;

/// Marks a page not accessed yet, so not interned. The interner never hands out this id.
const NOT_INTERNED: PageId = PageId::MAX;
/// First virtual page number of an app's anonymous regions (an address of 4 MiB).
const ANON_BASE_VPN: u64 = 0x400;
const NS_PER_S: f64 = 1e9;
const NS_PER_MS: f64 = 1e6;

pub fn generate(config: &WorkloadConfig, seed: u64) -> Result<Trace> {
    config.validate()?;
    let mut generator = Generator::new(config, seed)?;
    generator.run()?;
    Ok(Trace {
        events: generator.events,
        tables: generator.interner.into_tables(),
    })
}

/// A set of an app's pages with one popularity ranking.
struct Region {
    kind: RegionKind,
    /// File id, or pid for anonymous pages.
    owner: u64,
    /// Page index (or virtual page number) of rank 0.
    first_index: u64,
    popularity: AliasTable,
    /// Page id of each rank, interned on first access so the footprint counts only pages
    /// that are used.
    ids: Vec<PageId>,
    write_fraction: f64,
}

#[derive(Debug, Clone, Copy)]
struct Site {
    first: u64,
    len: u64,
}

/// New content pages of one file, in visits to sites.
struct Fresh {
    file: u64,
    /// Page id of each content page, in creation order; a page is interned during the pass
    /// that creates it, so `ids.len()` is the next new page.
    ids: Vec<PageId>,
    sites: Vec<Site>,
    visit: Site,
    /// Pages of the visit's sequential pass done so far.
    passed: u64,
    /// The pass downloads the site (writes) rather than re-reading it.
    pass_writes: bool,
    rereads_left: u64,
    mean_pages: u64,
    touches_per_page: f64,
    revisit_probability: f64,
    revisit_window: usize,
}

struct App {
    pid: u32,
    name: String,
    running_at_start: bool,
    foreground_weight: f64,
    proc: Option<ProcId>,
    /// Latest importance written to the trace.
    adj: Option<i16>,
    service_adj: Option<i16>,
    foreground_gap_ns: f64,
    regions: Vec<Region>,
    /// Picks a region for a foreground access; index `regions.len()` is the fresh content.
    foreground_mix: Option<AliasTable>,
    background_mix: Option<AliasTable>,
    fresh: Option<Fresh>,
    wakeup_mean_ns: f64,
    burst_mean: u64,
    leave_mean: u64,
    background_gap_ns: f64,
    /// Time of the next background access or wakeup; `None` while in the foreground or idle.
    background_next_ns: Option<u64>,
    burst_left: u64,
}

/// The source of the next event other than a foreground access.
#[derive(Debug, Clone, Copy)]
enum Next {
    SessionEnd,
    Background(usize),
}

struct Generator {
    rng: ChaCha8Rng,
    interner: Interner,
    events: Vec<Event>,
    apps: Vec<App>,
    foreground: usize,
    previous: Option<usize>,
    foreground_next_ns: u64,
    session_end_ns: Option<u64>,
    session_mean_ns: f64,
    accesses_left: u64,
}

impl Generator {
    fn new(config: &WorkloadConfig, seed: u64) -> Result<Self> {
        let total = config.total_accesses();
        let mut events = Vec::new();
        // Room for every access plus a few importance events per session; more is grown.
        let reserve = total.saturating_add(total / 256).saturating_add(64);
        events
            .try_reserve(usize::try_from(reserve).unwrap_or(usize::MAX))
            .map_err(|e| {
                Error::config("workload", format!("cannot allocate {total} events: {e}"))
            })?;
        let mut next_file_id = 1;
        let apps = config
            .apps
            .iter()
            .map(|app| App::new(app, config.scale, &mut next_file_id))
            .collect::<Result<Vec<_>>>()?;
        let foreground = apps
            .iter()
            .position(|a| a.foreground_weight > 0.0)
            .ok_or_else(|| Error::config("workload", "needs an app with foreground_weight > 0"))?;
        Ok(Generator {
            rng: ChaCha8Rng::seed_from_u64(seed),
            interner: Interner::new(),
            events,
            apps,
            foreground,
            previous: None,
            foreground_next_ns: 0,
            session_end_ns: None,
            session_mean_ns: config.session_mean_s * NS_PER_S,
            accesses_left: total,
        })
    }

    fn run(&mut self) -> Result<()> {
        self.begin(0)?;
        while self.accesses_left > 0 {
            let next = self.next_other();
            // Foreground accesses are most events: run them until the next other event.
            while self.accesses_left > 0 && next.is_none_or(|(at, _)| self.foreground_next_ns <= at)
            {
                self.foreground_access()?;
            }
            match next {
                _ if self.accesses_left == 0 => break,
                Some((at, Next::SessionEnd)) => self.switch(at)?,
                Some((at, Next::Background(app))) => self.background_access(app, at)?,
                None => {}
            }
        }
        Ok(())
    }

    /// Time 0: start the first foreground app and the apps running from the start.
    fn begin(&mut self, now: u64) -> Result<()> {
        for i in 0..self.apps.len() {
            if i == self.foreground || self.apps[i].running_at_start {
                self.start(i, now)?;
            }
        }
        for i in 0..self.apps.len() {
            if self.apps[i].proc.is_none() {
                continue;
            }
            if i == self.foreground {
                self.set_adj(i, ADJ_FOREGROUND, now);
            } else {
                self.set_adj(i, self.background_adj(i, false), now);
                self.schedule_wakeup(i, now);
            }
        }
        self.begin_session(now);
        Ok(())
    }

    fn start(&mut self, app: usize, now: u64) -> Result<()> {
        let App { pid, name, .. } = &self.apps[app];
        let proc = self
            .interner
            .start_process(*pid, name)
            .ok_or_else(|| Error::config("workload", "too many processes for one trace"))?;
        self.apps[app].proc = Some(proc);
        self.events.push(Event::start(now, proc));
        Ok(())
    }

    /// Record a change of importance; nothing if the app already has it.
    fn set_adj(&mut self, app: usize, adj: i16, now: u64) {
        let state = &mut self.apps[app];
        if state.adj == Some(adj) {
            return;
        }
        if let Some(proc) = state.proc {
            state.adj = Some(adj);
            self.events.push(Event::importance(now, proc, adj));
        }
    }

    /// Importance of an app out of the foreground: its service's, or that of the previous
    /// or a cached app, whichever is more important (lower), as Android's `OomAdjuster`.
    fn background_adj(&self, app: usize, is_previous: bool) -> i16 {
        let state_adj = if is_previous {
            ADJ_PREVIOUS
        } else {
            ADJ_CACHED
        };
        self.apps[app]
            .service_adj
            .map_or(state_adj, |service| service.min(state_adj))
    }

    /// The new foreground app's first access and the end of its session.
    fn begin_session(&mut self, now: u64) {
        let gap = exponential_ns(&mut self.rng, self.apps[self.foreground].foreground_gap_ns);
        self.foreground_next_ns = now.saturating_add(gap);
        self.session_end_ns = if self.has_other_candidate() {
            let length = exponential_ns(&mut self.rng, self.session_mean_ns);
            // A session holds at least one access, so switches cannot outnumber accesses.
            Some(now.saturating_add(length).max(self.foreground_next_ns))
        } else {
            None
        };
    }

    fn has_other_candidate(&self) -> bool {
        self.apps
            .iter()
            .enumerate()
            .any(|(i, a)| i != self.foreground && a.foreground_weight > 0.0)
    }

    /// Earliest event other than a foreground access.
    fn next_other(&self) -> Option<(u64, Next)> {
        let mut best = self.session_end_ns.map(|at| (at, Next::SessionEnd));
        for (i, app) in self.apps.iter().enumerate() {
            if let Some(at) = app.background_next_ns {
                if best.is_none_or(|(t, _)| at < t) {
                    best = Some((at, Next::Background(i)));
                }
            }
        }
        best
    }

    fn foreground_access(&mut self) -> Result<()> {
        let now = self.foreground_next_ns;
        let app = &mut self.apps[self.foreground];
        let (page, write, anon) = app.page(false, &mut self.rng, &mut self.interner)?;
        let proc = app.proc.ok_or_else(not_started)?;
        self.events
            .push(Event::access(now, proc, page, write, anon));
        self.accesses_left -= 1;
        let gap = exponential_ns(&mut self.rng, app.foreground_gap_ns);
        self.foreground_next_ns = now.saturating_add(gap);
        Ok(())
    }

    /// One access of a background burst; a wakeup when no burst is under way.
    fn background_access(&mut self, index: usize, now: u64) -> Result<()> {
        let app = &mut self.apps[index];
        if app.burst_left == 0 {
            app.burst_left = around_mean(&mut self.rng, app.burst_mean).max(1);
        }
        let (page, write, anon) = app.page(true, &mut self.rng, &mut self.interner)?;
        let proc = app.proc.ok_or_else(not_started)?;
        self.events
            .push(Event::access(now, proc, page, write, anon));
        self.accesses_left -= 1;
        app.burst_left -= 1;
        if app.burst_left > 0 {
            let gap = exponential_ns(&mut self.rng, app.background_gap_ns);
            app.background_next_ns = Some(now.saturating_add(gap));
        } else {
            self.schedule_wakeup(index, now);
        }
        Ok(())
    }

    fn schedule_wakeup(&mut self, index: usize, now: u64) {
        let app = &mut self.apps[index];
        app.background_next_ns = if app.wakeup_mean_ns > 0.0 {
            Some(now.saturating_add(exponential_ns(&mut self.rng, app.wakeup_mean_ns)))
        } else {
            None
        };
    }

    /// The user brings another app to the foreground.
    fn switch(&mut self, now: u64) -> Result<()> {
        let old = self.foreground;
        let new = self.pick_next_foreground();
        let old_previous = self.previous.replace(old);
        if self.apps[new].proc.is_none() {
            self.start(new, now)?;
        }
        // Demote first, so at no point two apps are at the foreground importance.
        self.set_adj(old, self.background_adj(old, true), now);
        if let Some(p) = old_previous.filter(|&p| p != old && p != new) {
            self.set_adj(p, self.background_adj(p, false), now);
        }
        self.set_adj(new, ADJ_FOREGROUND, now);
        self.foreground = new;
        // The new foreground app's background work is absorbed by its foreground use.
        self.apps[new].background_next_ns = None;
        self.apps[new].burst_left = 0;
        let leaving = &mut self.apps[old];
        leaving.burst_left = around_mean(&mut self.rng, leaving.leave_mean);
        if leaving.burst_left > 0 {
            let gap = exponential_ns(&mut self.rng, leaving.background_gap_ns);
            leaving.background_next_ns = Some(now.saturating_add(gap));
        } else {
            self.schedule_wakeup(old, now);
        }
        self.begin_session(now);
        Ok(())
    }

    /// Draw the next foreground app by `foreground_weight`, never the current one.
    fn pick_next_foreground(&mut self) -> usize {
        let current = self.foreground;
        let candidates = || {
            self.apps
                .iter()
                .enumerate()
                .filter(move |(i, a)| *i != current && a.foreground_weight > 0.0)
        };
        let total: f64 = candidates().map(|(_, a)| a.foreground_weight).sum();
        let target = unit(&mut self.rng) * total;
        let mut sum = 0.0;
        let mut last = current;
        for (i, app) in candidates() {
            sum += app.foreground_weight;
            last = i;
            if target < sum {
                return i;
            }
        }
        last
    }
}

fn not_started() -> Error {
    Error::config(
        "workload",
        "an app accessed memory before its process started",
    )
}

impl App {
    fn new(config: &AppConfig, scale: f64, next_file_id: &mut u64) -> Result<Self> {
        let ctx = || format!("workload app '{}'", config.name);
        let mut next_vpn = ANON_BASE_VPN;
        let mut regions = Vec::with_capacity(config.regions.len());
        for region in &config.regions {
            let pages = scaled(region.pages, scale);
            let (owner, first_index) = match region.kind {
                RegionKind::File => {
                    *next_file_id += 1;
                    (*next_file_id - 1, 0)
                }
                RegionKind::Anon => {
                    let first = next_vpn;
                    next_vpn = next_vpn.saturating_add(pages);
                    (u64::from(config.pid), first)
                }
            };
            let len =
                usize::try_from(pages).map_err(|_| Error::config(ctx(), "region too large"))?;
            let popularity =
                AliasTable::new(&zipf_weights(len, config.zipf_exponent)).ok_or_else(|| {
                    Error::config(
                        format!("{}: region '{}'", ctx(), region.name),
                        "cannot rank its pages (check pages and zipf_exponent)",
                    )
                })?;
            regions.push(Region {
                kind: region.kind,
                owner,
                first_index,
                popularity,
                ids: vec![NOT_INTERNED; len],
                write_fraction: region.write_fraction,
            });
        }
        let fresh = config.fresh.as_ref().map(|f| {
            *next_file_id += 1;
            Fresh::new(f, *next_file_id - 1, scale)
        });
        // Foreground mix: the regions share `1 - fresh.share` by weight, the content the rest.
        let fresh_share = config.fresh.as_ref().map_or(0.0, |f| f.share);
        let region_total: f64 = config.regions.iter().map(|r| r.foreground_weight).sum();
        let mut weights: Vec<f64> = config
            .regions
            .iter()
            .map(|r| {
                if region_total > 0.0 {
                    r.foreground_weight / region_total * (1.0 - fresh_share)
                } else {
                    0.0
                }
            })
            .collect();
        weights.push(fresh_share);
        let foreground_mix = AliasTable::new(&weights);
        let background_weights: Vec<f64> =
            config.regions.iter().map(|r| r.background_weight).collect();
        let background_mix = AliasTable::new(&background_weights);
        let background = &config.background;
        Ok(App {
            pid: config.pid,
            name: config.name.clone(),
            running_at_start: config.running_at_start,
            foreground_weight: config.foreground_weight,
            proc: None,
            adj: None,
            service_adj: background.service_adj,
            foreground_gap_ns: NS_PER_S / config.foreground_rate_per_s,
            regions,
            foreground_mix,
            background_mix,
            fresh,
            wakeup_mean_ns: background.wakeup_interval_s * NS_PER_S,
            burst_mean: u64::from(background.burst_accesses),
            leave_mean: u64::from(background.leave_accesses),
            background_gap_ns: background.access_gap_ms * NS_PER_MS,
            background_next_ns: None,
            burst_left: 0,
        })
    }

    /// Page, write flag and anonymous flag of a foreground access (from a region or the
    /// fresh content) or of a background access (from a region).
    #[inline]
    fn page(&mut self, background: bool, rng: &mut ChaCha8Rng, interner: &mut Interner) -> Access {
        let (mix, state) = if background {
            (&self.background_mix, "background")
        } else {
            (&self.foreground_mix, "foreground")
        };
        let slot = mix
            .as_ref()
            .ok_or_else(|| self.no_pages(state))?
            .sample(rng.next_u64());
        match self.regions.get_mut(slot) {
            Some(region) => region.access(rng, interner),
            None => match &mut self.fresh {
                Some(fresh) => fresh.access(rng, interner),
                None => Err(self.no_pages(state)),
            },
        }
    }

    fn no_pages(&self, state: &str) -> Error {
        Error::config(
            format!("workload app '{}'", self.name),
            format!("has no pages to access in the {state}"),
        )
    }
}

impl Region {
    #[inline]
    fn access(&mut self, rng: &mut ChaCha8Rng, interner: &mut Interner) -> Access {
        let rank = self.popularity.sample(rng.next_u64());
        let mut id = self.ids[rank];
        if id == NOT_INTERNED {
            let index = self.first_index + rank as u64;
            let key = match self.kind {
                RegionKind::File => PageKey::file(self.owner, index),
                RegionKind::Anon => PageKey::anon(self.owner, index),
            };
            id = intern(interner, key)?;
            self.ids[rank] = id;
        }
        // Draw only for a real mix, which also saves time for read-only regions.
        let write = self.write_fraction >= 1.0
            || (self.write_fraction > 0.0 && unit(rng) < self.write_fraction);
        Ok((id, write, self.kind == RegionKind::Anon))
    }
}

impl Fresh {
    fn new(config: &FreshConfig, file: u64, scale: f64) -> Self {
        let window = scaled(u64::from(config.revisit_window), scale);
        Fresh {
            file,
            ids: Vec::new(),
            sites: Vec::new(),
            visit: Site { first: 0, len: 0 },
            passed: 0,
            pass_writes: false,
            rereads_left: 0,
            mean_pages: u64::from(config.pages_per_site),
            touches_per_page: config.touches_per_page,
            revisit_probability: config.revisit_probability,
            revisit_window: usize::try_from(window).unwrap_or(usize::MAX),
        }
    }

    #[inline]
    fn access(&mut self, rng: &mut ChaCha8Rng, interner: &mut Interner) -> Access {
        if self.passed >= self.visit.len && self.rereads_left == 0 {
            self.begin_visit(rng);
        }
        let (index, write) = if self.passed < self.visit.len {
            self.passed += 1;
            (self.visit.first + self.passed - 1, self.pass_writes)
        } else {
            self.rereads_left -= 1;
            (self.visit.first + uniform_below(rng, self.visit.len), false)
        };
        let id = match usize::try_from(index).ok().and_then(|i| self.ids.get(i)) {
            Some(&id) => id,
            None => {
                // Only the pass of a new site reaches beyond the pages made so far, one page
                // at a time, so `index == ids.len()` here.
                let id = intern(interner, PageKey::file(self.file, index))?;
                self.ids.push(id);
                id
            }
        };
        Ok((id, write, false))
    }

    /// A visit: an earlier site among the most recent ones, or a new site.
    fn begin_visit(&mut self, rng: &mut ChaCha8Rng) {
        let window = self.revisit_window.min(self.sites.len());
        if window > 0 && unit(rng) < self.revisit_probability {
            let back = uniform_below(rng, window as u64) as usize;
            self.visit = self.sites[self.sites.len() - 1 - back];
            self.pass_writes = false;
        } else {
            let len = around_mean(rng, self.mean_pages).max(1);
            self.visit = Site {
                first: self.ids.len() as u64,
                len,
            };
            self.sites.push(self.visit);
            self.pass_writes = true;
        }
        self.passed = 0;
        // `as` saturates, and validation bounds touches_per_page.
        self.rereads_left = (self.visit.len as f64 * (self.touches_per_page - 1.0)).round() as u64;
    }
}

fn intern(interner: &mut Interner, key: PageKey) -> Result<PageId> {
    interner
        .page(key)
        .ok_or_else(|| Error::config("workload", "more distinct pages than page ids"))
}

/// An exponential gap with the given mean, in whole nanoseconds.
#[inline]
fn exponential_ns(rng: &mut ChaCha8Rng, mean_ns: f64) -> u64 {
    // `as` saturates at u64::MAX and maps NaN to 0, so no mean can make this panic.
    (standard_exponential(rng) * mean_ns) as u64
}

/// A uniform integer in `0..n` (0 when `n` is 0).
#[inline]
fn uniform_below(rng: &mut ChaCha8Rng, n: u64) -> u64 {
    ((u128::from(rng.next_u64()) * u128::from(n)) >> 64) as u64
}

/// A uniform integer between `mean - mean/2` and `mean + mean/2`.
fn around_mean(rng: &mut ChaCha8Rng, mean: u64) -> u64 {
    let low = mean - mean / 2;
    let high = mean.saturating_add(mean / 2);
    low + uniform_below(rng, high - low + 1)
}
