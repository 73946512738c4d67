//! A swap run: a trace's app memory on the machine's memory, with one swap architecture.
//!
//! The machine is the one every run uses (`mm::reclaim::Machine` over
//! [`crate::core::memory::Memory`]): the apps' anonymous pages take its frames, its swap
//! area holds their slots through the architecture, and its low-memory killer frees
//! memory when swap cannot. What the multi-swap paper's model asks of it:
//! - DRAM of `dram_pages` frames, nothing reserved, no watermarks: a page is reclaimed
//!   exactly when a fault finds no free frame (`reclaim_batch` 1); the zram pool's
//!   compressed pages take frames of the same DRAM;
//! - reclaim takes the coldest page (exact per-app LRU) of the least important app
//!   (`app-lru`), or the coldest page of all (`global-lru`; `SwapConfig::reclaim`);
//! - a page whose slot still holds its data (slots kept on swap-in) is swapped out
//!   without a write; any other is written by the architecture;
//! - when the architecture has no room (zram pool full), or there is no swap, the killer
//!   kills the least important app holding memory (never at `oom_score_adj` <= 0 nor
//!   the app being served): its pages are freed, in DRAM and in swap, and its next
//!   launch is cold; with nobody to kill, reclaim's next page is dropped with its data.
//!
//! Processes that exit free their memory the same way. Accesses to file pages are not
//! simulated (they belong to the page cache) and are counted apart.
//!
//! Replay ([`SwapRun::for_replay`]) has no DRAM: a trace's own swap-out and swap-in events
//! drive the architecture. A swap-out writes the page out (the kernel wrote it, so it is
//! new data even if a kept slot exists); a swap-in reads it back. When the architecture
//! has no room (zram), the killer frees the least important app's pool pages, and a later
//! swap-in of one of its pages counts as a fresh allocation. A swap-in of a page that is
//! not swapped out, or a swap-out of one that already is, is an error naming the event.

use super::architectures::find_architecture;
use super::config::{ReclaimOrder, SlotOnSwapIn, SwapConfig};
use super::launch::LaunchTracker;
use super::metrics::SwapMetrics;
use crate::core::events::{self, EventError, EventHandler};
use crate::core::pages::{Location, PageFlags};
use crate::core::swap::{op_price, IoCounts, IoOp, IoRecord, SwapDevice, SwapSlots};
use crate::core::time::Step;
use crate::devices::swap::SwapDevices;
use crate::mm::clock::{Accounting, MachineClock};
use crate::mm::reclaim::{Machine, ReclaimConfig, ReclaimWork};
use crate::trace::{Event, PageId, ProcId, Tables, ADJ_FOREGROUND};
use crate::{Error, Result};

/// Swap slots of a swap run: as many as any trace may need (flash is unbounded here,
/// as the paper's model is; NVM and the zram pool bound themselves).
const UNBOUNDED_SLOTS: usize = usize::MAX / 2;

/// The state of one swap run: the machine, the launches and the counts.
pub struct SwapRun {
    m: Machine,
    devices: SwapDevices,
    swap_ins_per_page: Vec<u32>,
    launches: LaunchTracker,
    metrics: SwapMetrics,
    now_ns: u64,
    /// Driven by swap events, with no DRAM model.
    replaying: bool,
    /// The clock launches are timed on (none when times are summed).
    clock: Option<MachineClock>,
    /// Scratch for one access's fault steps on the clock.
    fault_steps: Vec<Step>,
}

impl SwapRun {
    /// A run of `config`; `pages` and `procs` size the per-page and per-app state (it
    /// grows on demand).
    pub fn new(config: &SwapConfig, pages: usize, procs: usize) -> Result<Self> {
        config.validate()?;
        let info = find_architecture(&config.architecture)?;
        let reclaim = ReclaimConfig {
            policy: match config.reclaim {
                ReclaimOrder::AppImportance => "app-lru",
                ReclaimOrder::GlobalLru => "global-lru",
            }
            .into(),
            memory_pages: config.dram_pages,
            reserved_pages: 0,
            unmovable_per_mille: 0,
            swap_pages: UNBOUNDED_SLOTS,
            watermarks_kb: Some([0, 0, 0]),
            reclaim_batch: 1,
            high_order: crate::mm::reclaim::HighOrderConfig {
                process: String::new(),
                ..Default::default()
            },
            ..ReclaimConfig::default()
        };
        let mut m = Machine::new(&reclaim, pages, procs)
            .map_err(|e| Error::config("swap run", e.to_string()))?;
        let nvm_pages = if info.uses_nvm { config.nvm_pages } else { 0 };
        let pool_pages = if info.uses_zram {
            config.zram.pool_pages
        } else {
            0
        };
        let slots = SwapSlots::new(
            nvm_pages,
            info.nvm_order,
            pool_pages,
            &config.devices.zram,
            config.slot_on_swap_in == SlotOnSwapIn::Keep,
            pages,
        );
        m.mem.set_swap(slots, (info.build)(config), UNBOUNDED_SLOTS);
        m.enable_killer();
        let clock = match config.time.accounting {
            Accounting::Sum => None,
            Accounting::Contended => {
                let names: Vec<String> = (0..procs).map(|p| format!("app{p}")).collect();
                Some(MachineClock::new(&config.time, &names, &config.devices)?)
            }
        };
        Ok(SwapRun {
            m,
            devices: config.devices.clone(),
            swap_ins_per_page: vec![0; pages],
            launches: LaunchTracker::new(config.launch.clone()),
            metrics: SwapMetrics {
                architecture: info.name.to_string(),
                ..Default::default()
            },
            now_ns: 0,
            replaying: false,
            clock,
            fault_steps: Vec::new(),
        })
    }

    /// A run that replays swap events (see the module's documentation).
    pub fn for_replay(config: &SwapConfig, pages: usize, procs: usize) -> Result<Self> {
        let mut run = Self::new(config, pages, procs)?;
        if !run.m.mem.swaps() {
            return Err(Error::config(
                "swap replay",
                format!(
                    "architecture {} has no swap to replay swap events on",
                    config.architecture
                ),
            ));
        }
        run.replaying = true;
        Ok(run)
    }

    /// Record every device operation (see [`SwapRun::take_io_log`]).
    pub fn enable_io_log(&mut self) {
        self.m.mem.swap_mut().enable_log();
    }

    /// The device operations since the last call, when the log is enabled.
    pub fn take_io_log(&mut self) -> Vec<IoRecord> {
        self.m.mem.swap_mut().take_log()
    }

    /// The swap devices: occupancy, the zram pool, access bits.
    pub fn swap(&self) -> &SwapSlots {
        self.m.mem.swap()
    }

    /// The device holding `page`'s slot, if any.
    pub fn slot_of(&self, page: PageId) -> Option<SwapDevice> {
        self.m.mem.pages().slot(page)
    }

    pub fn io_counts(&self) -> &IoCounts {
        self.m.mem.swap().counts()
    }

    /// Pages in DRAM.
    pub fn resident_pages(&self) -> usize {
        self.m.mem.lru_pages()
    }

    /// DRAM frames in use: resident pages and the zram pool.
    pub fn dram_used(&self) -> usize {
        self.m.mem.lru_pages() + self.m.mem.pool_frames_held()
    }

    /// Where `page` is now: in DRAM, on a swap device, or nowhere (never touched, freed,
    /// dropped, or swapped back in by a replay).
    pub fn location_of(&self, page: PageId) -> Location {
        self.m.mem.pages().location(page)
    }

    /// The metrics counted so far (times and launches are filled in by `finish`).
    pub fn metrics(&self) -> &SwapMetrics {
        &self.metrics
    }

    /// Feed one event; `index` is its position in the trace, for errors.
    pub fn step(&mut self, index: usize, event: &Event) -> Result<()> {
        events::dispatch(self, event).map_err(|error| {
            EventError {
                index: index as u64,
                error,
            }
            .in_run("swap run")
        })
    }

    fn set_importance(&mut self, proc: ProcId, adj: i16) {
        let was = self.m.mem.procs.set_importance(proc, adj);
        if adj == ADJ_FOREGROUND && was != ADJ_FOREGROUND {
            let kind = self.m.mem.procs.launch(proc);
            self.launches.begin(proc, self.now_ns, kind);
        } else if adj != ADJ_FOREGROUND {
            self.launches.end_of(proc);
        }
    }

    fn ensure_page(&mut self, page: PageId) {
        if page as usize >= self.swap_ins_per_page.len() {
            crate::core::ensure_index(&mut self.swap_ins_per_page, page, 0);
        }
    }

    /// Mark `page` as lost (dropped for want of swap room: its next swap-in is a fresh
    /// allocation) or no longer lost.
    fn set_lost(&mut self, page: PageId, lost: bool) {
        self.m
            .mem
            .pages_mut()
            .set_flags(page, PageFlags::LOST, lost);
    }

    fn touch(&mut self, event: &Event) -> Result<()> {
        if !event.is_anon() {
            self.metrics.ignored_accesses += 1;
            return Ok(());
        }
        let (page, proc) = (event.page(), event.proc());
        self.ensure_page(page);
        self.metrics.accesses += 1;
        let writes_before = self.write_time_ns();
        match self.m.access(page, proc, true, event.is_write())? {
            None => self.metrics.dram_hits += 1,
            Some(fault) => {
                let launch_writes = self.write_time_ns() - writes_before;
                self.launches.reclaim_writes(proc, launch_writes);
                match fault.read_from {
                    Some(device) => {
                        self.metrics.swap_ins += 1;
                        self.swap_ins_per_page[page as usize] += 1;
                        self.launches.fault(proc, self.read_ns(device));
                        self.fault_steps.push(self.read_step(device));
                    }
                    None => self.metrics.fresh_allocations += 1,
                }
            }
        }
        self.m.take_kills();
        self.launches.access_done(proc);
        if let Some(clock) = &mut self.clock {
            // The allocating app's direct reclaim (its writes handed to the devices), then
            // its swap-in, on its thread: part of its launch while it launches.
            clock.access_done(proc, self.now_ns, self.m.take_work(), &mut self.fault_steps)?;
        }
        Ok(())
    }

    /// A swap-in from `device` on the clock: a device read, or decompression on the
    /// faulting thread for zram; a memory stall either way.
    fn read_step(&self, device: SwapDevice) -> Step {
        match device {
            SwapDevice::Zram => Step::Cpu {
                work_ns: self.read_ns(device).max(0.0).round() as u64,
                memstall: true,
            },
            SwapDevice::Nvm | SwapDevice::Flash => {
                MachineClock::device_read(device == SwapDevice::Nvm, self.read_ns(device))
            }
        }
    }

    /// Before an event's work: the clock runs up to the event and follows the launch in
    /// progress (a launch whose window passed has ended).
    fn clock_to_event(&mut self) -> Result<()> {
        if let Some(clock) = &mut self.clock {
            clock.advance(self.now_ns)?;
            clock.sync_launch(self.launches.active())?;
        }
        Ok(())
    }

    /// After an event's work: a launch that began or ended with it.
    fn clock_launch(&mut self) -> Result<()> {
        if let Some(clock) = &mut self.clock {
            clock.sync_launch(self.launches.active())?;
        }
        Ok(())
    }

    fn read_ns(&self, device: SwapDevice) -> f64 {
        op_price(&self.devices, device, IoOp::Read).ns
    }

    /// Time of every write so far (NVM, flash, zram compression), for launch charging.
    fn write_time_ns(&self) -> f64 {
        self.io_counts()
            .time_ns(&self.devices, |_, op| op == IoOp::Write)
    }

    /// A replayed swap-out: the architecture writes the page out.
    fn replay_swap_out(&mut self, event: &Event) -> Result<()> {
        let (page, proc) = (event.page(), event.proc());
        self.ensure_page(page);
        let mem = &mut self.m.mem;
        if mem.is_swapped(page) {
            return Err(Error::config(
                "swap replay",
                format!("page {page} swapped out again without a swap-in since"),
            ));
        }
        if !mem.pages().has_flags(page, PageFlags::OWNED) {
            mem.own(page, proc);
            mem.pages_mut().set_owner(page, proc);
        }
        let owner = mem.owner_of(page);
        let io_before = *self.io_counts();
        loop {
            if self.m.mem.swap_out_unmapped(page)? {
                if let Some(clock) = &mut self.clock {
                    // The kernel's swap-out (kswapd's, as far as the trace tells).
                    let io = self.m.mem.swap().counts().since(&io_before);
                    clock.kswapd(
                        self.now_ns,
                        &ReclaimWork {
                            io,
                            ..Default::default()
                        },
                    )?;
                }
                break;
            }
            // No room (zram): the killer frees another app's pool pages, or the page is
            // lost.
            match self.m.mem.kill_candidate(owner) {
                Some(app) => {
                    self.m.end_process(app, true);
                    self.metrics.kills += 1;
                }
                None => {
                    self.m.mem.discard(page);
                    self.set_lost(page, true);
                    self.metrics.dropped_pages += 1;
                    return Ok(());
                }
            }
        }
        self.set_lost(page, false);
        Ok(())
    }

    /// A replayed swap-in: the architecture reads the page back.
    fn replay_swap_in(&mut self, event: &Event) -> Result<()> {
        let (page, proc) = (event.page(), event.proc());
        self.ensure_page(page);
        let pages = self.m.mem.pages();
        if pages.has_flags(page, PageFlags::LOST) {
            self.set_lost(page, false);
            self.metrics.fresh_allocations += 1;
            return Ok(());
        }
        if !pages.location(page).is_swapped() {
            let why = if !pages.has_flags(page, PageFlags::EVER_SWAPPED) {
                "was never swapped out"
            } else {
                "was swapped in already and not swapped out since"
            };
            return Err(Error::config(
                "swap replay",
                format!("swap-in of page {page}, which {why}"),
            ));
        }
        let device = self.m.mem.swap_in_unmapped(page)?;
        self.metrics.swap_ins += 1;
        self.swap_ins_per_page[page as usize] += 1;
        self.launches.fault(proc, self.read_ns(device));
        let step = self.read_step(device);
        if let Some(clock) = &mut self.clock {
            clock.access_done(proc, self.now_ns, Default::default(), &mut vec![step])?;
        }
        Ok(())
    }

    /// Check the invariants (tests: O(pages)): the memory's and its swap area's, and
    /// DRAM within its size.
    pub fn validate(&self) -> Result<()> {
        let fail = |message: String| Err(Error::config("swap memory", message));
        if self.dram_used() > self.m.mem.total() {
            return fail(format!(
                "DRAM holds {} frames, more than its {}",
                self.dram_used(),
                self.m.mem.total()
            ));
        }
        self.m.check().map_err(|e| Error::config("swap memory", e))
    }

    /// Each page's stored size in zram from its real contents (see
    /// [`SwapSlots::set_zram_sizes`]); before the first event.
    pub fn set_zram_sizes(&mut self, sizes: Vec<u32>) {
        self.m.mem.swap_mut().set_zram_sizes(sizes);
    }

    /// End the run: launches closed (on the clock, each one's time is the clock's),
    /// costs and shares derived.
    pub fn finish(mut self, tables: &Tables) -> Result<SwapMetrics> {
        let c = &self.m.mem.counters;
        self.metrics.swap_outs = c.swap_outs;
        self.metrics.kills += self.m.killed;
        self.metrics.dropped_pages += self.m.dropped_pages;
        self.metrics.clean_swap_outs = c.clean_swap_outs;
        self.metrics.swapped_pages = c.swapped_pages;
        self.metrics.io = *self.io_counts();
        self.metrics.derive_costs(&self.devices);
        self.metrics.set_swap_in_counts(&self.swap_ins_per_page);
        let mut launches = self.launches.finish();
        (
            self.metrics.memory_stall_ms,
            self.metrics.flash_queue_wait_ms,
        ) = (f64::NAN, f64::NAN);
        if let Some(clock) = self.clock.take() {
            let figures = clock.finish()?;
            if figures.launches_ns.len() != launches.len() {
                return Err(Error::config(
                    "swap run",
                    format!(
                        "the clock timed {} launches of the run's {}",
                        figures.launches_ns.len(),
                        launches.len()
                    ),
                ));
            }
            for (record, ns) in launches.iter_mut().zip(&figures.launches_ns) {
                record.launch_ns = *ns;
            }
            self.metrics.memory_stall_ms = figures.mem_some_ns as f64 / 1e6;
            self.metrics.flash_queue_wait_ms = figures.flash_wait_ns as f64 / 1e6;
        }
        self.metrics.set_launches(launches, |proc| {
            tables
                .processes
                .get(proc as usize)
                .map(|p| (p.pid, p.name.clone()))
                .unwrap_or((proc, String::new()))
        });
        Ok(self.metrics)
    }
}

/// Simulating, the run serves anonymous accesses and refuses a trace's own swap events;
/// replaying, it is driven by those swap events and ignores accesses. Both time
/// launches by importance and free an app's memory when it exits.
impl EventHandler for SwapRun {
    fn check(&self) -> std::result::Result<(), String> {
        self.validate().map_err(|e| e.to_string())
    }

    fn tick(&mut self, event: &Event) {
        self.now_ns = event.time_ns();
        self.m.set_time(self.now_ns);
        self.launches.advance(self.now_ns);
        self.metrics.events += 1;
    }

    fn access(&mut self, event: &Event) -> Result<()> {
        if self.replaying {
            self.metrics.ignored_accesses += 1;
            return Ok(());
        }
        self.clock_to_event()?;
        self.touch(event)?;
        self.clock_launch()
    }

    fn importance(&mut self, proc: ProcId, oom_score_adj: i16) -> Result<()> {
        self.clock_to_event()?;
        self.set_importance(proc, oom_score_adj);
        self.clock_launch()
    }

    fn exit(&mut self, proc: ProcId) -> Result<()> {
        self.clock_to_event()?;
        self.launches.end_of(proc);
        self.m.end_process(proc, false);
        self.metrics.exits += 1;
        self.clock_launch()
    }

    fn swap_out(&mut self, event: &Event) -> Result<()> {
        match self.replaying {
            true => {
                self.clock_to_event()?;
                self.replay_swap_out(event)
            }
            false => Err(not_replaying()),
        }
    }

    fn swap_in(&mut self, event: &Event) -> Result<()> {
        match self.replaying {
            true => {
                self.clock_to_event()?;
                self.replay_swap_in(event)?;
                self.clock_launch()
            }
            false => Err(not_replaying()),
        }
    }
}

fn not_replaying() -> Error {
    Error::config(
        "swap run",
        "the trace has swap events: replay it (swap::replay) instead of simulating its accesses",
    )
}
