//! The simulation loop: feeds a trace's events to the placement engine and charges the
//! effects of each request to the devices, the PCM frames and the metrics.
//!
//! Accounting rules (the same for every policy):
//! - a hit is served by the tier the page is in after the request's moves (a page
//!   promoted on this access is served from DRAM): one read or write there;
//! - a miss reads the page from storage and writes it into its tier (the request itself
//!   is served by that fill); a miss the policy does not admit is served from storage;
//! - a migration reads the source tier and writes the destination tier;
//! - an eviction costs the model's `eviction`; a dirty page is also read from its tier
//!   and written back (`writeback`);
//! - every cost caused by a foreground access counts towards the foreground elapsed
//!   time; evictions count when [`EvictionCharge`] says so.
//!
//! The engine checks the policy's contracts on every access (capacity per tier, moves
//! consistent with where pages are) and the run stops with an error if one is broken.

use super::clock::{ClockSetup, RequestClock, RequestWork};
use super::engine::{Engine, Violation};
use super::{BuildContext, Capacity, Effect, PolicyInfo, Request, Tier, Unit};
use crate::core::dense_ids::renumber;
use crate::core::events::{self, EventError, EventHandler};
use crate::core::pages::PageFlags;
use crate::core::process::Importance;
use crate::devices::{CostModel, Devices, EvictionCharge};
use crate::mm::placement::metrics::Metrics;
use crate::trace::{Event, EventSource, PageId, ProcId, Trace};
use crate::{Error, Result};

/// Everything a run needs besides its events.
#[derive(Debug, Clone)]
pub struct RunSetup {
    pub policy: &'static PolicyInfo,
    pub capacity: Capacity,
    pub cost: CostModel,
    pub devices: Devices,
    /// Run the requests on the machine's clock too ([`super::clock`]).
    pub clock: Option<ClockSetup>,
    /// Requests that warm the cache up and are left out of every figure but PCM wear:
    /// the figures count from the request after them (0: every request counts). Not with
    /// the clock, whose times follow from every request before.
    pub warmup: u64,
    /// The trace's object ids, for policies that hash pages ([`BuildContext::object_ids`]).
    pub object_ids: Option<std::sync::Arc<[u64]>>,
}

impl RunSetup {
    pub fn new(policy: &'static PolicyInfo, capacity: Capacity) -> Self {
        RunSetup {
            policy,
            capacity,
            cost: CostModel::paper_relative(),
            devices: Devices::default(),
            clock: None,
            warmup: 0,
            object_ids: None,
        }
    }
}

/// The state of one run.
pub struct Simulator {
    /// The policy on memory: per page, its tier, its PCM frame while in PCM, the dirty
    /// flag and the owner (the process of the latest access, whose importance decides who
    /// an eviction is charged to).
    engine: Engine,
    policy_name: &'static str,
    capacity: Capacity,
    cost: CostModel,
    devices: Devices,
    importance: Importance,
    metrics: Metrics,
    first_time: Option<u64>,
    last_time: u64,
    events: u64,
    /// Memory operations charged to accesses: `[foreground?][op]`, op = 2 x tier + write.
    ops: [[u64; 4]; 2],
    /// Reads of dirty pages on their way back to storage, per tier (energy, not time).
    writeback_reads: [u64; 2],
    /// Dirty evictions charged to the foreground.
    fg_writebacks: u64,
    clock: Option<RequestClock>,
    /// Requests of the warm-up still to come.
    warmup_left: u64,
    /// Requests a window of [`Simulator::windows`] holds (0: none are kept).
    window: u64,
    windows: Vec<WindowPoint>,
    /// The window being filled.
    current: WindowPoint,
}

/// Hits and misses of one window of requests ([`Simulator::set_window`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct WindowPoint {
    /// Its first request, counted from 0 after the warm-up.
    pub first_request: u64,
    pub requests: u64,
    pub misses: u64,
}

impl WindowPoint {
    pub fn miss_ratio(&self) -> f64 {
        super::metrics::ratio(self.misses, self.requests)
    }
}

#[inline]
fn op_index(tier: Tier, write: bool) -> usize {
    tier.index() * 2 + write as usize
}

impl Simulator {
    pub fn new(
        setup: &RunSetup,
        page_count_hint: usize,
        future: Option<std::sync::Arc<[PageId]>>,
    ) -> Result<Self> {
        setup.cost.validate()?;
        setup.devices.validate()?;
        if setup.warmup > 0 && setup.clock.is_some() {
            return Err(Error::config(
                "warmup",
                "a warm-up with the clock: its times follow from every request before, so none can be left out",
            ));
        }
        // Requests are renumbered in first-seen order (`serve`), so the future is too.
        let future = future.map(|f| renumber(&f).map_or(f, Into::into));
        let engine = Engine::build(
            setup.policy,
            &BuildContext {
                capacity: setup.capacity,
                page_count_hint,
                future,
                object_ids: setup.object_ids.clone(),
            },
            Unit::Pages,
        )?;
        let devices = setup.devices.clone();
        Ok(Simulator {
            engine,
            policy_name: setup.policy.name,
            capacity: setup.capacity,
            cost: setup.cost.clone(),
            importance: Importance::default(),
            metrics: Metrics::default(),
            first_time: None,
            last_time: 0,
            events: 0,
            ops: [[0; 4]; 2],
            writeback_reads: [0; 2],
            fg_writebacks: 0,
            devices,
            clock: setup.clock.as_ref().map(RequestClock::new).transpose()?,
            warmup_left: setup.warmup,
            window: 0,
            windows: Vec::new(),
            current: WindowPoint::default(),
        })
    }

    /// Where the engine has the trace's page `page` (for tests).
    pub fn tier_of(&self, page: PageId) -> Option<Tier> {
        let memory = self.engine.memory();
        memory.tier_of(memory.seen_page(page)?)
    }

    /// The policy on its memory.
    pub fn engine(&self) -> &Engine {
        &self.engine
    }

    pub fn metrics(&self) -> &Metrics {
        &self.metrics
    }

    fn foreground(&self, proc: ProcId) -> bool {
        self.importance.is_foreground(proc)
    }

    /// Feed one event.
    #[inline]
    pub fn step(&mut self, event: &Event) -> Result<()> {
        events::dispatch(self, event)
    }

    fn serve(&mut self, event: &Event) -> Result<()> {
        let write = event.is_write();
        let foreground = self.foreground(event.proc());
        let memory = self.engine.memory_mut();
        let Some(page) = memory.dense_page(event.page()) else {
            return Err(Error::config(
                format!("policy {}", self.policy_name),
                format!(
                    "event {}: page {} is past the 2^32 - 1 distinct pages a run can hold",
                    self.events - 1,
                    event.page()
                ),
            ));
        };
        let pages = memory.pages_mut();
        pages.ensure(page);
        let req = Request {
            page,
            proc: event.proc(),
            write,
            foreground,
            dirty: pages.is_dirty(page),
            size: 1,
        };
        if let Err(violation) = self.engine.access(&req) {
            return Err(self.violation(&req, violation));
        }
        let before = self.clock.is_some().then(|| self.work_so_far(&req));
        self.account(&req);
        if let Some(before) = before {
            let work = self.work_so_far(&req).since(&before);
            let clock = self.clock.as_mut().expect("checked above");
            clock.request(event.time_ns(), req.proc, req.foreground, &work)?;
        }
        self.engine
            .memory_mut()
            .pages_mut()
            .touch(page, req.proc, write);
        if self.window > 0 && self.warmup_left == 0 {
            self.count_window(matches!(self.engine.effects()[0], Effect::Hit { .. }));
        }
        if self.warmup_left > 0 {
            self.warmup_left -= 1;
            if self.warmup_left == 0 {
                self.end_warmup(event.time_ns());
            }
        }
        Ok(())
    }

    /// Keep hits and misses per window of `requests` requests (after the warm-up), for
    /// the miss ratio over time; 0 keeps none.
    pub fn set_window(&mut self, requests: u64) {
        self.window = requests;
    }

    /// The windows so far, the one being filled last if it holds a request.
    pub fn take_windows(&mut self) -> Vec<WindowPoint> {
        let mut out = std::mem::take(&mut self.windows);
        if self.current.requests > 0 {
            out.push(self.current);
        }
        out
    }

    fn count_window(&mut self, hit: bool) {
        let w = &mut self.current;
        w.requests += 1;
        w.misses += u64::from(!hit);
        if w.requests == self.window {
            let next = w.first_request + w.requests;
            self.windows.push(*w);
            self.current = WindowPoint {
                first_request: next,
                ..Default::default()
            };
        }
    }

    /// The warm-up's last request is served: every figure starts again from here (the
    /// duration from its time), the cache as the warm-up left it.
    fn end_warmup(&mut self, time_ns: u64) {
        self.metrics = Metrics::default();
        self.ops = [[0; 4]; 2];
        self.writeback_reads = [0; 2];
        self.fg_writebacks = 0;
        self.first_time = Some(time_ns);
    }

    /// The counters a request adds to, as they stand: the difference over [`Self::account`]
    /// is what the request caused. Misses are storage reads (a bypassed miss too).
    fn work_so_far(&self, req: &Request) -> RequestWork {
        RequestWork {
            memory_ops: self.ops[req.foreground as usize],
            writeback_reads: self.writeback_reads,
            evictions: self.metrics.evictions,
            storage_reads: self.metrics.misses,
            storage_writes: self.metrics.storage_writes,
        }
    }

    fn violation(&self, req: &Request, violation: Violation) -> Error {
        Error::config(
            format!("policy {}", self.policy_name),
            format!(
                "broke its contract at event {} (page {}): {violation}",
                self.events - 1,
                self.engine.memory().trace_page(req.page)
            ),
        )
    }

    /// Count the request's effects ([`Engine::effects`]), which the engine has applied.
    fn account(&mut self, req: &Request) {
        let fg = req.foreground as usize;
        let m = &mut self.metrics;
        m.accesses += 1;
        if req.write {
            m.writes += 1;
        } else {
            m.reads += 1;
        }
        if req.foreground {
            m.fg_accesses += 1;
        }
        let effects = self.engine.effects();
        let first = effects[0];
        match first {
            Effect::Hit { tier } => {
                m.hits += 1;
                match tier {
                    Tier::Dram => m.dram_hits += 1,
                    Tier::Pcm => m.pcm_hits += 1,
                }
                if req.foreground {
                    m.fg_hits += 1;
                }
            }
            _ => {
                m.misses += 1;
                if req.foreground {
                    m.fg_misses += 1;
                }
            }
        }
        let moves = effects.len() - 1;
        for i in 0..moves {
            match self.engine.effects()[1 + i] {
                Effect::Evict { page, from } => self.evicted(req, page, from),
                Effect::Migrate { to, .. } => {
                    let from = to.other();
                    self.ops[fg][op_index(from, false)] += 1;
                    self.ops[fg][op_index(to, true)] += 1;
                    match to {
                        Tier::Dram => self.metrics.migrations_to_dram += 1,
                        Tier::Pcm => self.metrics.migrations_to_pcm += 1,
                    }
                }
                Effect::Hit { .. } | Effect::Fill { .. } | Effect::Bypass => {}
            }
        }
        match first {
            // The fill writes the page into its tier (the engine counts the PCM frame's
            // write).
            Effect::Fill { tier } => self.ops[fg][op_index(tier, true)] += 1,
            Effect::Hit { .. } => {
                // The access itself, served where the page is now.
                let served = self.engine.memory().tier_of(req.page).unwrap_or(Tier::Dram);
                self.ops[fg][op_index(served, req.write)] += 1;
                if req.write && served == Tier::Pcm {
                    self.engine.memory_mut().record_pcm_write(req.page);
                }
            }
            _ => {}
        }
    }

    /// `page` left `from`: charge its eviction and, if dirty, its write back.
    fn evicted(&mut self, req: &Request, page: PageId, from: Tier) {
        let pages = self.engine.memory_mut().pages_mut();
        let dirty = pages.is_dirty(page);
        let owner = pages.owner(page);
        if dirty {
            pages.set_flags(page, PageFlags::DIRTY, false);
            self.writeback_reads[from.index()] += 1;
            self.metrics.storage_writes += 1;
        }
        self.metrics.evictions += 1;
        let owner_foreground = self.foreground(owner);
        let charged = match self.cost.eviction_charge {
            EvictionCharge::ForegroundPages => owner_foreground,
            EvictionCharge::ForegroundCausedOrOwned => owner_foreground || req.foreground,
        };
        if charged {
            self.metrics.fg_evictions += 1;
            self.fg_writebacks += dirty as u64;
        }
    }

    /// Check that the policy and the engine agree on every page (tests only: O(pages)).
    pub fn check_agreement(&self) -> Result<()> {
        self.engine.check_agreement().map_err(|violation| {
            Error::config(
                format!("policy {}", self.policy_name),
                violation.to_string(),
            )
        })
    }

    /// Device operation counts, time and energy from the integer counters.
    fn derive_costs(&mut self) {
        let c = &self.cost;
        let op_cost = [c.dram_read, c.dram_write, c.pcm_read, c.pcm_write];
        let d = &self.devices;
        let op_energy = [
            d.dram.read_energy_nj(),
            d.dram.write_energy_nj(),
            d.pcm.read_energy_nj(),
            d.pcm.write_energy_nj(),
        ];
        let mut totals = [0u64; 4];
        for (i, total) in totals.iter_mut().enumerate() {
            *total = self.ops[0][i] + self.ops[1][i];
        }
        totals[0] += self.writeback_reads[0];
        totals[2] += self.writeback_reads[1];
        let m = &mut self.metrics;
        [m.dram_reads, m.dram_writes, m.pcm_reads, m.pcm_writes] = totals;
        m.storage_reads = m.misses;
        let time = |ops: &[u64; 4]| {
            ops.iter()
                .zip(op_cost)
                .map(|(&n, cost)| n as f64 * cost)
                .sum::<f64>()
        };
        m.fg_time = time(&self.ops[1])
            + m.fg_misses as f64 * c.storage_read
            + m.fg_evictions as f64 * c.eviction
            + self.fg_writebacks as f64 * c.writeback;
        m.total_time = time(&self.ops[0])
            + time(&self.ops[1])
            + m.misses as f64 * c.storage_read
            + m.evictions as f64 * c.eviction
            + m.storage_writes as f64 * c.writeback;
        m.energy_nj = totals
            .iter()
            .zip(op_energy)
            .map(|(&n, e)| n as f64 * e)
            .sum();
    }

    /// Finish the run: costs, wear and duration figures, and the clock's sums.
    pub fn finish(mut self) -> Result<Metrics> {
        self.derive_costs();
        if let Some(clock) = self.clock.take() {
            let t = clock.finish()?;
            let m = &mut self.metrics;
            m.fg_response_ns = Some(t.fg_response_ns);
            m.fg_work_ns = Some(t.fg_work_ns);
            m.fg_backlog_ns = Some(t.fg_backlog_ns);
            m.bg_response_ns = Some(t.bg_response_ns);
            m.bg_work_ns = Some(t.bg_work_ns);
            m.storage_busy_ns = Some(t.storage_busy_ns);
            m.storage_wait_ns = Some(t.storage_wait_ns);
        }
        self.metrics.duration_ns = self.last_time - self.first_time.unwrap_or(0);
        // In floating point: a capacity far beyond any trace (up to 2^64 - 1 pages) must not
        // overflow; exact, as the integer product was, wherever that did not overflow.
        let gib =
            |pages: usize| pages as f64 * crate::devices::PAGE_BYTES as f64 / (1u64 << 30) as f64;
        let watts = gib(self.capacity.dram) * self.devices.dram.static_w_per_gib
            + gib(self.capacity.pcm) * self.devices.pcm.static_w_per_gib;
        // W x ns = nJ.
        self.metrics.static_energy_nj = watts * self.metrics.duration_ns as f64;
        let endurance = self.devices.pcm.endurance_writes;
        let wear = self.engine.memory().pcm_frames().wear();
        self.metrics.set_wear(wear, self.capacity.pcm, endurance);
        Ok(self.metrics)
    }
}

/// A buffer cache reacts to accesses and to importance (which pages are the foreground
/// app's). Pages outlive their process in the page cache, so starts and exits change
/// nothing; swap I/O of a captured trace is the kernel's, not a buffer-cache request;
/// input matters to reclaim (the interactive task), not to buffer caches.
impl EventHandler for Simulator {
    fn check(&self) -> std::result::Result<(), String> {
        self.engine
            .check_agreement()
            .map_err(|v| format!("policy {}: {v}", self.policy_name))
    }

    #[inline]
    fn tick(&mut self, event: &Event) {
        let time = event.time_ns();
        self.first_time.get_or_insert(time);
        self.last_time = self.last_time.max(time);
        self.events += 1;
    }

    #[inline]
    fn access(&mut self, event: &Event) -> Result<()> {
        self.serve(event)
    }

    #[inline]
    fn prefetch_far(&self, event: &Event) {
        self.engine.memory().prefetch_id(event.page());
    }

    #[inline]
    fn prefetch(&self, event: &Event) {
        // A page not seen yet has no state to bring in.
        if let Some(page) = self.engine.memory().seen_page(event.page()) {
            self.engine.prefetch(page);
        }
    }

    fn importance(&mut self, proc: ProcId, oom_score_adj: i16) -> Result<()> {
        self.importance.set(proc, oom_score_adj);
        Ok(())
    }
}

/// Pages accessed, in order: the future an offline policy needs.
pub fn access_sequence(trace: &Trace) -> std::sync::Arc<[PageId]> {
    // Counted first: a sequence of known length is collected straight into its one
    // allocation, where a filter's would grow a vector and then copy it.
    let len = trace.accesses().count();
    let mut pages = trace.accesses().map(|e| e.page());
    (0..len).map(|_| pages.next().unwrap_or_default()).collect()
}

/// Run one policy over a trace in memory.
pub fn run_trace(trace: &Trace, setup: &RunSetup) -> Result<Metrics> {
    let future = setup.policy.offline.then(|| access_sequence(trace));
    // A hint: the events name no more pages than there are events.
    let hint = trace.footprint().min(trace.events.len());
    let mut sim = Simulator::new(setup, hint, future)?;
    // The simulator's errors name the event already.
    events::replay(&mut sim, &trace.events).map_err(EventError::into_inner)?;
    sim.finish()
}

/// [`run_trace`], with hits and misses per window of `window` requests (after the
/// warm-up): the miss ratio over time.
pub fn run_trace_windows(
    trace: &Trace,
    setup: &RunSetup,
    window: u64,
) -> Result<(Metrics, Vec<WindowPoint>)> {
    let future = setup.policy.offline.then(|| access_sequence(trace));
    let hint = trace.footprint().min(trace.events.len());
    let mut sim = Simulator::new(setup, hint, future)?;
    sim.set_window(window);
    events::replay(&mut sim, &trace.events).map_err(EventError::into_inner)?;
    let windows = sim.take_windows();
    Ok((sim.finish()?, windows))
}

/// Run one online policy over a streamed trace in constant memory (besides per-page
/// state). `progress` is called after each batch with the number of events done.
pub fn run_source(
    source: &mut (dyn EventSource + Send),
    setup: &RunSetup,
    progress: &mut dyn FnMut(u64),
) -> Result<Metrics> {
    if setup.policy.offline {
        return Err(Error::config(
            format!("policy {}", setup.policy.name),
            "is offline: read the trace into memory and use run_trace",
        ));
    }
    let hint = source.page_count_hint().unwrap_or(0) as usize;
    let mut sim = Simulator::new(setup, hint, None)?;
    events::replay_source(&mut sim, source, progress).map_err(EventError::into_inner)?;
    // A result only for a whole, valid input (a `.mmt` file's tables included).
    source.finish()?;
    sim.finish()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mm::placement::clock::ClockSpec;
    use crate::mm::placement::find_policy;
    use crate::trace::{Event, Tables};

    const PAGE_NJ: f64 = 0.1 * 32768.0;

    /// After a warm-up of N requests the figures are those of the whole run less those
    /// of its first N requests run alone: the warm-up leaves the cache as it would be,
    /// and counts nothing.
    #[test]
    fn a_warmup_counts_nothing_and_leaves_the_cache_warm() {
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let events: Vec<Event> = (0..20_000u64)
            .map(|i| {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                let u = state % 1_000;
                Event::access(
                    i * 10,
                    0,
                    (u * u / 1_000) as PageId,
                    state.is_multiple_of(3),
                    false,
                )
            })
            .collect();
        for name in ["lru", "arc", "s3fifo", "gdsf", "hybrid-lru"] {
            let info = find_policy(name).unwrap();
            let capacity = Capacity::of_memory(info.family, 150, 0.1).unwrap();
            let setup = RunSetup::new(info, capacity);
            let warm = 7_000;
            let full = run_trace(&trace(events.clone()), &setup).unwrap();
            let prefix = run_trace(&trace(events[..warm].to_vec()), &setup).unwrap();
            let after = run_trace(
                &trace(events.clone()),
                &RunSetup {
                    warmup: warm as u64,
                    ..setup.clone()
                },
            )
            .unwrap();
            assert_eq!(after.accesses, full.accesses - prefix.accesses, "{name}");
            assert_eq!(after.hits, full.hits - prefix.hits, "{name}");
            assert_eq!(after.misses, full.misses - prefix.misses, "{name}");
            assert_eq!(after.evictions, full.evictions - prefix.evictions, "{name}");
            assert_eq!(
                after.storage_writes,
                full.storage_writes - prefix.storage_writes,
                "{name}"
            );
            assert_eq!(
                after.dram_writes,
                full.dram_writes - prefix.dram_writes,
                "{name}"
            );
            assert_eq!(after.duration_ns, (20_000 - warm as u64) * 10, "{name}");
        }
        // Windows after the warm-up add up to the warmed run's figures.
        let info = find_policy("arc").unwrap();
        let setup = RunSetup {
            warmup: 7_000,
            ..RunSetup::new(info, Capacity::single(150))
        };
        let (metrics, windows) = run_trace_windows(&trace(events.clone()), &setup, 3_000).unwrap();
        assert_eq!(
            windows.len(),
            5,
            "13,000 requests: four windows of 3,000 and one of 1,000"
        );
        assert_eq!(windows[4].requests, 1_000);
        assert_eq!(windows[2].first_request, 6_000);
        assert_eq!(
            windows.iter().map(|w| w.requests).sum::<u64>(),
            metrics.accesses
        );
        assert_eq!(
            windows.iter().map(|w| w.misses).sum::<u64>(),
            metrics.misses
        );
        // With the clock, nothing can be left out.
        let mut setup = RunSetup::new(find_policy("lru").unwrap(), Capacity::single(10));
        setup.clock = Some(ClockSpec::default().setup().unwrap());
        setup.warmup = 5;
        assert!(Simulator::new(&setup, 0, None).is_err());
    }

    fn trace(events: Vec<Event>) -> Trace {
        Trace {
            events,
            tables: Tables::default(),
        }
    }

    /// Worked by hand with the paper's relative cost model; DRAM 1 page, PCM 1 page.
    #[test]
    fn hybrid_lru_accounting_by_hand() {
        let (fg, bg) = (0, 1);
        let t = trace(vec![
            Event::importance(0, fg, 0),
            Event::importance(0, bg, 900),
            // fg reads p0: miss, filled in DRAM (1).
            Event::access(1, fg, 0, false, false),
            // bg writes p1: miss, fill DRAM (1), p0 demoted to PCM (DRAM read 1 + PCM write 50).
            Event::access(2, bg, 1, true, false),
            // fg reads p0: PCM hit; p1 demoted (51), p0 promoted (PCM read 2 + DRAM write 1),
            // served from DRAM (1): 55 for the foreground.
            Event::access(3, fg, 0, false, false),
            // bg reads p2: LRU evicts dirty p1 from PCM (1000, written back, bg-owned), p0
            // demoted (51), fill (1).
            Event::access(4, bg, 2, false, false),
            // bg reads p3: evicts clean p0 from PCM: fg-owned, so its 1000 is charged to the
            // foreground; p2 demoted (51), fill (1).
            Event::access(5, bg, 3, false, false),
        ]);
        let setup = RunSetup::new(
            find_policy("hybrid-lru").unwrap(),
            Capacity { dram: 1, pcm: 1 },
        );
        let m = run_trace(&t, &setup).unwrap();
        assert_eq!(
            (m.accesses, m.hits, m.misses, m.fg_accesses, m.fg_hits),
            (5, 1, 4, 2, 1)
        );
        assert_eq!(
            (m.pcm_hits, m.evictions, m.storage_writes, m.fg_evictions),
            (1, 2, 1, 1)
        );
        assert_eq!((m.migrations_to_pcm, m.migrations_to_dram), (4, 1));
        assert_eq!(
            (m.dram_reads, m.dram_writes, m.pcm_reads, m.pcm_writes),
            (5, 5, 2, 4)
        );
        assert_eq!(m.fg_time, 1.0 + 55.0 + 1000.0);
        assert_eq!(m.total_time, 1.0 + 52.0 + 55.0 + 1052.0 + 1052.0);
        let energy = (5.0 + 5.0 + 2.0) * PAGE_NJ + 4.0 * 10.0 * PAGE_NJ;
        assert!(
            (m.energy_nj - energy).abs() < 1e-6,
            "{} vs {energy}",
            m.energy_nj
        );
        // One PCM frame, written by each of the four demotions.
        assert_eq!((m.pcm_frames, m.pcm_max_frame_writes), (1, 4));
        assert_eq!(m.duration_ns, 5);
        // 1 DRAM page at 1 W/GiB + 1 PCM page at 0.01 W/GiB for 5 ns.
        let page_gib = 4096.0 / (1u64 << 30) as f64;
        assert!((m.static_energy_nj - page_gib * 1.01 * 5.0).abs() < 1e-15);
    }

    /// Worked by hand on the clock: Table 1's memory latencies, an eMMC read of 100 us and
    /// write of 300 us on one queue serving one at a time; DRAM 1 page, PCM 1 page.
    #[test]
    fn requests_on_the_clock_by_hand() {
        let (fg, bg) = (0, 1);
        const US: u64 = 1000;
        let t = trace(vec![
            Event::importance(0, fg, 0),
            Event::importance(0, bg, 900),
            // bg writes p1: miss, read 0..100 us, then filled in DRAM.
            Event::access(0, bg, 1, true, false),
            // fg reads p0 at 10 us: miss; its read waits for bg's until 100 us and ends at
            // 200 us; p1 demoted to PCM, p0 filled in DRAM.
            Event::access(10 * US, fg, 0, false, false),
            // bg reads p2 at 1 ms: dirty p1 leaves PCM (read, written back 1.0..1.3 ms), p0
            // demoted, p2 read 1.3..1.4 ms and filled.
            Event::access(1000 * US, bg, 2, false, false),
            // fg reads p0 at 1.05 ms: a PCM hit, promoted (p2 demoted) and served from
            // DRAM; no storage, so no wait although bg's write-back is in progress.
            Event::access(1050 * US, fg, 0, false, false),
        ]);
        let mut setup = RunSetup::new(
            find_policy("hybrid-lru").unwrap(),
            Capacity { dram: 1, pcm: 1 },
        );
        let clock = ClockSpec::default().setup().unwrap();
        let c = clock.cost.clone();
        assert_eq!((c.storage_read, c.writeback), (100_000.0, 300_000.0));
        setup.clock = Some(clock);
        let m = run_trace(&t, &setup).unwrap();
        let ns = |x: f64| x.round();
        let (dr, dw, pr, pw) = (c.dram_read, c.dram_write, c.pcm_read, c.pcm_write);
        let fg1 = ns(dr + pw + dw);
        let fg2 = ns(pr + dw + dr + pw + dr);
        let (bg1, bg2) = (ns(dw), ns(pr + dr + pw + dw));
        assert_eq!(m.fg_work_ns, Some(100_000.0 + fg1 + fg2));
        assert_eq!(m.fg_response_ns, Some(190_000.0 + fg1 + fg2));
        // Each fg request found its thread idle: its wait was all for the storage.
        assert_eq!(m.fg_backlog_ns, Some(0.0));
        assert_eq!(m.bg_work_ns, Some(100_000.0 + bg1 + 400_000.0 + bg2));
        assert_eq!(m.bg_response_ns, m.bg_work_ns);
        assert_eq!(m.storage_busy_ns, Some(600_000.0));
        assert_eq!(m.storage_wait_ns, Some(90_000.0));
        // Without a clock the figures are absent, and the rest is the same.
        setup.clock = None;
        let plain = run_trace(&t, &setup).unwrap();
        assert_eq!(plain.fg_response_ns, None);
        let cleared = Metrics {
            fg_response_ns: None,
            fg_work_ns: None,
            fg_backlog_ns: None,
            bg_response_ns: None,
            bg_work_ns: None,
            storage_busy_ns: None,
            storage_wait_ns: None,
            ..m
        };
        assert_eq!(cleared, plain);
    }

    /// Two misses of one app at the same instant: the second waits for the first to end
    /// (its backlog) and then for nothing, the storage being free again.
    #[test]
    fn an_apps_requests_queue_behind_each_other_on_the_clock() {
        let fg = 0;
        let t = trace(vec![
            Event::importance(0, fg, 0),
            Event::access(5, fg, 0, false, false),
            Event::access(5, fg, 1, false, false),
        ]);
        let mut setup = RunSetup::new(find_policy("lru").unwrap(), Capacity::single(4));
        let clock = ClockSpec::default().setup().unwrap();
        let fill = clock.cost.dram_write.round();
        setup.clock = Some(clock);
        let m = run_trace(&t, &setup).unwrap();
        let one = 100_000.0 + fill;
        assert_eq!(m.fg_work_ns, Some(2.0 * one));
        assert_eq!(m.fg_backlog_ns, Some(one));
        assert_eq!(m.fg_response_ns, Some(3.0 * one));
        assert_eq!(m.storage_wait_ns, Some(0.0));
    }

    #[test]
    fn a_clock_refuses_a_cost_model_not_in_ns() {
        let spec = ClockSpec {
            cost: "paper-relative".into(),
            ..ClockSpec::default()
        };
        let err = spec.setup().unwrap_err().to_string();
        assert!(err.contains("needs one in ns"), "{err}");
        let spec = ClockSpec {
            storage_queue_depth: 0,
            ..ClockSpec::default()
        };
        assert!(spec
            .setup()
            .unwrap_err()
            .to_string()
            .contains("queue depth"));
        for cpus in [vec![], vec![1024; 65]] {
            let spec = ClockSpec {
                cpus,
                ..ClockSpec::default()
            };
            assert!(spec.setup().unwrap_err().to_string().contains("CPU"));
        }
    }

    #[test]
    fn eviction_charge_reading_caused_by_foreground() {
        // fg fills DRAM 1 + PCM 1 with bg-owned pages evicted by its own misses.
        let (fg, bg) = (0, 1);
        let t = trace(vec![
            Event::importance(0, fg, 0),
            Event::access(1, bg, 0, false, false),
            Event::access(2, bg, 1, false, false),
            Event::access(3, fg, 2, false, false), // evicts bg's p0
        ]);
        let policy = find_policy("hybrid-lru").unwrap();
        let mut setup = RunSetup::new(policy, Capacity { dram: 1, pcm: 1 });
        let spec_reading = run_trace(&t, &setup).unwrap();
        assert_eq!(spec_reading.fg_evictions, 0);
        setup.cost.eviction_charge = EvictionCharge::ForegroundCausedOrOwned;
        let literal = run_trace(&t, &setup).unwrap();
        assert_eq!(literal.fg_evictions, 1);
        assert_eq!(literal.fg_time - spec_reading.fg_time, 1000.0);
    }

    #[test]
    fn single_tier_policy_rejects_pcm_and_hybrid_needs_both() {
        let t = trace(vec![Event::access(0, 0, 0, false, false)]);
        let err = run_trace(
            &t,
            &RunSetup::new(find_policy("lru").unwrap(), Capacity { dram: 2, pcm: 2 }),
        );
        assert!(err.unwrap_err().to_string().contains("single-tier"));
        let err = run_trace(
            &t,
            &RunSetup::new(find_policy("app-aware").unwrap(), Capacity::single(4)),
        );
        assert!(err.unwrap_err().to_string().contains("hybrid"));
    }

    /// A capacity far beyond the trace (up to 2^64 - 1 pages) runs every policy and
    /// allocates for the pages seen, not the capacity (an allocation of the capacity
    /// would abort); a single-tier policy then keeps every page, as it does with a
    /// capacity of the footprint.
    #[test]
    fn every_policy_runs_at_capacities_far_beyond_the_trace() {
        use crate::mm::placement::{Family, REGISTRY};
        let events = (0..200)
            .map(|i| Event::access(i, (i % 3) as u32, (i * 7 % 48) as u32, i % 5 == 0, false))
            .collect();
        let t = trace(events);
        for info in REGISTRY {
            let at = |pages: u64| {
                let capacity = Capacity::of_memory(info.family, pages, 0.05).unwrap();
                run_trace(&t, &RunSetup::new(info, capacity))
                    .unwrap_or_else(|e| panic!("{} at {pages} pages: {e}", info.name))
            };
            let fitting = at(48 * 2);
            for pages in [1 << 32, (1 << 32) + 1, 1 << 40, u64::MAX / 2, u64::MAX] {
                let m = at(pages);
                assert_eq!(m.accesses, 200, "{}", info.name);
                if info.family == Family::SingleTier {
                    assert_eq!((m.hits, m.misses), (fitting.hits, fitting.misses));
                    assert_eq!(m.misses, 48, "{} at {pages}", info.name);
                } else {
                    let pcm = Capacity::of_memory(info.family, pages, 0.05).unwrap().pcm;
                    assert_eq!(m.pcm_frames, pcm as u64, "{}", info.name);
                    assert!(m.static_energy_nj.is_finite() && m.static_energy_nj > 0.0);
                }
            }
        }
    }

    mod properties {
        use super::*;
        use crate::mm::placement::{Family, REGISTRY};
        use proptest::prelude::*;

        #[derive(Debug, Clone)]
        enum Op {
            Access { proc: u32, page: u32, write: bool },
            Importance { proc: u32, adj: i16 },
        }

        fn ops() -> impl Strategy<Value = Vec<Op>> {
            let op = prop_oneof![
                8 => (0u32..3, 0u32..40, any::<bool>()).prop_map(|(proc, page, write)| Op::Access { proc, page, write }),
                1 => (0u32..3, prop_oneof![Just(0i16), Just(500), Just(900)]).prop_map(|(proc, adj)| Op::Importance { proc, adj }),
            ];
            proptest::collection::vec(op, 1..400)
        }

        fn to_trace(ops: &[Op]) -> Trace {
            let events = ops
                .iter()
                .enumerate()
                .map(|(i, op)| match *op {
                    Op::Access { proc, page, write } => {
                        Event::access(i as u64, proc, page, write, false)
                    }
                    Op::Importance { proc, adj } => Event::importance(i as u64, proc, adj),
                })
                .collect();
            trace(events)
        }

        proptest! {
            #![proptest_config(ProptestConfig::with_cases(64))]

            /// Every policy, step by step: the policy and the simulator agree on where every
            /// page is, capacities hold (checked inside the simulator), and counters
            /// conserve at the end.
            #[test]
            fn every_policy_keeps_every_page_in_exactly_one_place(
                ops in ops(), dram in 1usize..8, pcm in 1usize..16
            ) {
                let t = to_trace(&ops);
                for info in REGISTRY {
                    let capacity = match info.family {
                        Family::SingleTier => Capacity::single(dram + pcm),
                        Family::Hybrid => Capacity { dram, pcm },
                    };
                    let setup = RunSetup::new(info, capacity);
                    let future = info.offline.then(|| access_sequence(&t));
                    let mut sim = Simulator::new(&setup, 0, future).unwrap();
                    for event in &t.events {
                        sim.step(event).map_err(|e| TestCaseError::fail(e.to_string()))?;
                        sim.check_agreement().map_err(|e| TestCaseError::fail(e.to_string()))?;
                    }
                    let resident = sim.engine().memory().used_total() as usize;
                    let m = sim.finish().unwrap();
                    prop_assert_eq!(m.hits + m.misses, m.accesses, "{}", info.name);
                    prop_assert_eq!(m.fg_hits + m.fg_misses, m.fg_accesses, "{}", info.name);
                    prop_assert_eq!(m.dram_hits + m.pcm_hits, m.hits, "{}", info.name);
                    prop_assert_eq!(m.reads + m.writes, m.accesses, "{}", info.name);
                    // Pages brought in minus pages gone = pages still resident.
                    prop_assert_eq!(m.misses - m.evictions, resident as u64, "{}", info.name);
                    prop_assert!(resident <= capacity.total());
                    // Every PCM write landed on a frame.
                    let frame_total = m.pcm_mean_frame_writes * m.pcm_frames as f64;
                    prop_assert!((frame_total - m.pcm_writes as f64).abs() < 1e-6, "{}", info.name);
                    prop_assert!(m.fg_time <= m.total_time + 1e-9);
                }
            }

            /// hybrid-lru has exactly the hits of single-tier LRU with the same total memory.
            #[test]
            fn hybrid_lru_hits_equal_lru_of_total_size(ops in ops(), dram in 1usize..8, pcm in 1usize..16) {
                let t = to_trace(&ops);
                let lru = run_trace(&t, &RunSetup::new(find_policy("lru").unwrap(), Capacity::single(dram + pcm))).unwrap();
                let hybrid = run_trace(&t, &RunSetup::new(find_policy("hybrid-lru").unwrap(), Capacity { dram, pcm })).unwrap();
                prop_assert_eq!(lru.hits, hybrid.hits);
            }
        }
    }
}
