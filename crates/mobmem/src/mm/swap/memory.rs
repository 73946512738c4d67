//! DRAM, reclaim and the low-memory killer: the machine a trace runs on.
//!
//! Apps own anonymous pages (a page belongs to the app that touched it first). DRAM
//! holds at most `dram_pages` frames, less the frames the zram pool takes. Touching a page
//! that is not in DRAM is a swap-in fault when a swap device holds it, and otherwise a
//! fresh allocation (zero-fill, no I/O). Before a page enters a full DRAM, reclaim frees
//! one frame at a time:
//! 1. the victim is the coldest page (per-app LRU) of the least important app (highest
//!    `oom_score_adj`, ties broken by the app used least recently), or with `global-lru`
//!    the coldest page of all;
//! 2. with swap, the victim is swapped out: nothing is written if its slot already holds
//!    its data, otherwise the architecture writes it;
//! 3. with no swap, or when the architecture has no room (zram pool full), the low-memory
//!    killer kills the least important app holding memory: every page it owns is freed,
//!    in DRAM and in swap, and its next launch is a cold start. It never kills an app at
//!    `oom_score_adj` <= 0 (the foreground and system) nor the app whose access is being
//!    served;
//! 4. if no app can be killed, the victim is dropped (its data is lost; the next touch
//!    allocates it afresh) and counted.
//!
//! Processes that exit free their memory the same way. Accesses to file pages are not
//! simulated (they belong to the page cache) and are counted apart.
//!
//! Replay ([`Machine::for_replay`]) has no DRAM: a trace's own swap-out and swap-in events
//! drive the architecture. A swap-out writes the page out (the kernel wrote it, so it is
//! new data even if a kept slot exists); a swap-in reads it back. When the architecture
//! has no room (zram), the killer frees the least important app's pool pages, and a later
//! swap-in of one of its pages counts as a fresh allocation. A swap-in of a page that is
//! not swapped out, or a swap-out of one that already is, is an error naming the event.

use super::architectures::{find_architecture, Architecture};
use super::config::{ReclaimOrder, SwapConfig};
use super::launch::{LaunchKind, LaunchTracker};
use super::metrics::SwapMetrics;
use super::space::{IoCounts, IoRecord, SwapDevice, SwapSpace};
use crate::core::ensure_index;
use crate::core::events::{self, EventError, EventHandler};
use crate::core::list::{Links, List};
use crate::core::pages::{Location, PageFlags, NO_FRAME};
use crate::core::process::Importance;
use crate::devices::swap::SwapDevices;
use crate::trace::{Event, PageId, ProcId, Tables, ADJ_FOREGROUND};
use crate::{Error, Result};

// Each page's place, owner and flags are the core page table, kept in the swap space
// (the architectures move swapped pages between devices). A page is in DRAM
// (`Location::Dram`), swapped out (the location of its slot's device) or outside the
// model (`Location::Absent`: never touched, freed, dropped, or swapped back in by a
// replay, which has no DRAM). Flags: `DIRTY`, the DRAM copy differs from the page's slot
// (or it has none); `OWNED`, on its owner's list of owned pages; `EVER_SWAPPED`, written
// to swap at least once (the swap footprint); `LOST`, swapped out when the killer took
// its app (replay: its swap-in finds nothing).
const DIRTY: PageFlags = PageFlags::DIRTY;
const OWNED: PageFlags = PageFlags::OWNED;
const EVER_SWAPPED: PageFlags = PageFlags::EVER_SWAPPED;
const LOST: PageFlags = PageFlags::LOST;

/// Where a page is, for tests and inspection.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Place {
    /// Never touched, freed with its app, or dropped.
    Nowhere,
    /// In DRAM (it may also keep a slot in swap, see `SlotOnSwapIn::Keep`).
    Dram,
    Nvm,
    Flash,
    Zram,
}

#[derive(Debug, Clone)]
struct App {
    lru: List,
    resident: u32,
    last_use: u64,
    owned: Vec<PageId>,
    launched: bool,
    /// Killed or exited since its last launch: the next launch is cold.
    died: bool,
}

impl Default for App {
    fn default() -> Self {
        App {
            lru: List::new(),
            resident: 0,
            last_use: 0,
            owned: Vec::new(),
            launched: false,
            died: false,
        }
    }
}

/// The state of one run: DRAM, apps, the swap space and the architecture.
pub struct Machine {
    arch: Box<dyn Architecture>,
    space: SwapSpace,
    dram_pages: usize,
    reclaim: ReclaimOrder,
    devices: SwapDevices,
    swap_ins_per_page: Vec<u32>,
    links: Links,
    global: List,
    resident: usize,
    apps: Vec<App>,
    importance: Importance,
    /// The app reclaim takes from next, while nothing changes the choice.
    victim_app: Option<ProcId>,
    use_counter: u64,
    launches: LaunchTracker,
    metrics: SwapMetrics,
    now_ns: u64,
    /// Driven by swap events, with no DRAM model.
    replaying: bool,
}

impl Machine {
    /// A machine for `config`; `pages` and `procs` size the per-page and per-app state (it
    /// grows on demand).
    pub fn new(config: &SwapConfig, pages: usize, procs: usize) -> Result<Self> {
        config.validate()?;
        let info = find_architecture(&config.architecture)?;
        let nvm_pages = if info.uses_nvm { config.nvm_pages } else { 0 };
        let pool_pages = if info.uses_zram {
            config.zram.pool_pages
        } else {
            0
        };
        let keep = config.slot_on_swap_in == super::config::SlotOnSwapIn::Keep;
        let space = SwapSpace::new(
            nvm_pages,
            info.nvm_order,
            pool_pages,
            &config.devices.zram,
            keep,
            pages,
        );
        Ok(Machine {
            arch: (info.build)(config),
            space,
            dram_pages: config.dram_pages,
            reclaim: config.reclaim,
            devices: config.devices.clone(),
            swap_ins_per_page: vec![0; pages],
            links: Links::with_pages(pages),
            global: List::new(),
            resident: 0,
            apps: vec![App::default(); procs],
            importance: Importance::default(),
            victim_app: None,
            use_counter: 0,
            launches: LaunchTracker::new(config.launch.clone()),
            metrics: SwapMetrics {
                architecture: info.name.to_string(),
                ..Default::default()
            },
            now_ns: 0,
            replaying: false,
        })
    }

    /// A machine that replays swap events (see the module's documentation).
    pub fn for_replay(config: &SwapConfig, pages: usize, procs: usize) -> Result<Self> {
        let mut machine = Self::new(config, pages, procs)?;
        if !machine.arch.swaps() {
            return Err(Error::config(
                "swap replay",
                format!(
                    "architecture {} has no swap to replay swap events on",
                    config.architecture
                ),
            ));
        }
        machine.replaying = true;
        Ok(machine)
    }

    /// Record every device operation (see [`Machine::take_io_log`]).
    pub fn enable_io_log(&mut self) {
        self.space.enable_log();
    }

    /// The device operations since the last call, when the log is enabled.
    pub fn take_io_log(&mut self) -> Vec<IoRecord> {
        self.space.take_log()
    }

    pub fn space(&self) -> &SwapSpace {
        &self.space
    }

    pub fn io_counts(&self) -> &IoCounts {
        self.space.counts()
    }

    /// Pages in DRAM.
    pub fn resident_pages(&self) -> usize {
        self.resident
    }

    /// DRAM frames in use: resident pages and the zram pool.
    pub fn dram_used(&self) -> usize {
        self.resident + self.space.pool_frames()
    }

    /// Where `page` is now.
    pub fn place_of(&self, page: PageId) -> Place {
        if self.is_resident(page) {
            return Place::Dram;
        }
        match self.space.slot_of(page) {
            None => Place::Nowhere,
            Some(SwapDevice::Nvm) => Place::Nvm,
            Some(SwapDevice::Flash) => Place::Flash,
            Some(SwapDevice::Zram) => Place::Zram,
        }
    }

    /// The metrics counted so far (times and launches are filled in by `finish`).
    pub fn metrics(&self) -> &SwapMetrics {
        &self.metrics
    }

    #[inline]
    fn flag(&self, page: PageId, flag: PageFlags) -> bool {
        self.space.pages().has_flags(page, flag)
    }

    #[inline]
    fn set_flag(&mut self, page: PageId, flag: PageFlags, on: bool) {
        self.space.pages_mut(page).set_flags(page, flag, on);
    }

    #[inline]
    fn is_resident(&self, page: PageId) -> bool {
        self.space.pages().location(page) == Location::Dram
    }

    #[inline]
    fn is_swapped_out(&self, page: PageId) -> bool {
        self.space.pages().location(page).is_swapped()
    }

    fn set_location(&mut self, page: PageId, location: Location) {
        self.space.pages_mut(page).place(page, location, NO_FRAME);
    }

    /// Swapped out: the page is where its slot is.
    fn set_swapped_out(&mut self, page: PageId) -> Result<()> {
        let Some(device) = self.space.slot_of(page) else {
            return Err(Error::config(
                "swap memory",
                format!("page {page} swapped out without a slot (internal error)"),
            ));
        };
        self.set_location(page, device.location());
        Ok(())
    }

    fn ensure_page(&mut self, page: PageId) {
        self.space.pages_mut(page);
        if page as usize >= self.swap_ins_per_page.len() {
            ensure_index(&mut self.swap_ins_per_page, page, 0);
        }
    }

    fn ensure_app(&mut self, proc: ProcId) {
        if proc as usize >= self.apps.len() {
            ensure_index(&mut self.apps, proc, App::default());
        }
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
        let app = &mut self.apps[proc as usize];
        let was = self.importance.set(proc, adj);
        self.victim_app = None;
        if adj == ADJ_FOREGROUND && was != ADJ_FOREGROUND {
            let kind = LaunchKind::of(app.launched, app.died);
            app.launched = true;
            app.died = false;
            self.launches.begin(proc, self.now_ns, kind);
        } else if adj != ADJ_FOREGROUND {
            self.launches.end_of(proc);
        }
    }

    fn touch(&mut self, event: &Event) -> Result<()> {
        if !event.is_anon() {
            self.metrics.ignored_accesses += 1;
            return Ok(());
        }
        let (page, proc) = (event.page(), event.proc());
        self.ensure_page(page);
        self.metrics.accesses += 1;
        self.use_counter += 1;
        self.apps[proc as usize].last_use = self.use_counter;
        if self.victim_app == Some(proc) {
            self.victim_app = None;
        }
        if self.is_resident(page) {
            self.metrics.dram_hits += 1;
            let (links, list) = self.reclaim_list(self.space.owner(page));
            links.move_to_front(list, page);
        } else {
            let writes_before = self.write_time_ns();
            self.make_room(proc)?;
            let launch_writes = self.write_time_ns() - writes_before;
            self.launches.reclaim_writes(proc, launch_writes);
            self.own(page, proc);
            let mut dirty = false;
            if self.space.slot_of(page).is_some() {
                let device = self.arch.swap_in(&mut self.space, page)?;
                self.metrics.swap_ins += 1;
                self.swap_ins_per_page[page as usize] += 1;
                self.launches.fault(proc, self.read_ns(device));
                // A kept slot holds the page's data: the page is clean until written.
                if self.space.slot_of(page).is_none() {
                    dirty = true;
                }
            } else {
                self.metrics.fresh_allocations += 1;
                dirty = true;
            }
            self.set_flag(page, LOST, false);
            self.set_flag(page, DIRTY, dirty);
            self.insert_resident(page);
        }
        if event.is_write() {
            self.set_flag(page, DIRTY, true);
        }
        self.launches.access_done(proc);
        Ok(())
    }

    fn read_ns(&self, device: SwapDevice) -> f64 {
        match device {
            SwapDevice::Nvm => self.devices.nvm.read_ns,
            SwapDevice::Flash => self.devices.flash.read_ns,
            SwapDevice::Zram => self.devices.zram.decompress_ns,
        }
    }

    /// Time of every write so far (NVM, flash, zram compression), for launch charging.
    fn write_time_ns(&self) -> f64 {
        let io = self.space.counts();
        let d = &self.devices;
        io.nvm_writes as f64 * d.nvm.write_ns
            + io.flash_writes as f64 * d.flash.write_ns
            + io.zram_compressions as f64 * d.zram.compress_ns
    }

    /// The reclaim list holding `owner`'s resident pages (its own, or the global one),
    /// with the links that chain it.
    fn reclaim_list(&mut self, owner: ProcId) -> (&mut Links, &mut List) {
        let list = match self.reclaim {
            ReclaimOrder::AppImportance => &mut self.apps[owner as usize].lru,
            ReclaimOrder::GlobalLru => &mut self.global,
        };
        (&mut self.links, list)
    }

    fn insert_resident(&mut self, page: PageId) {
        let owner = self.space.owner(page);
        self.ensure_app(owner);
        let (links, list) = self.reclaim_list(owner);
        links.push_front(list, page);
        let app = &mut self.apps[owner as usize];
        app.resident += 1;
        if app.resident == 1 {
            // A new candidate for reclaim.
            self.victim_app = None;
        }
        self.resident += 1;
        self.set_location(page, Location::Dram);
    }

    fn remove_resident(&mut self, page: PageId) {
        let owner = self.space.owner(page);
        let (links, list) = self.reclaim_list(owner);
        links.remove(list, page);
        let app = &mut self.apps[owner as usize];
        app.resident -= 1;
        if app.resident == 0 && self.victim_app == Some(owner) {
            self.victim_app = None;
        }
        self.resident -= 1;
        self.set_location(page, Location::Absent);
    }

    /// Reclaim until one more page fits in DRAM.
    fn make_room(&mut self, accessor: ProcId) -> Result<()> {
        while self.dram_used() >= self.dram_pages {
            let before = (self.resident, self.space.pool_bytes());
            self.reclaim_one(accessor)?;
            if (self.resident, self.space.pool_bytes()) == before {
                return Err(Error::config(
                    "swap memory",
                    "reclaim freed nothing (internal error)",
                ));
            }
        }
        Ok(())
    }

    /// The app reclaim takes from: the least important app with pages in DRAM, the one
    /// used least recently among equals.
    fn victim_app(&mut self) -> Option<ProcId> {
        if let Some(app) = self.victim_app {
            return Some(app);
        }
        let best = self.importance.least_important(
            (self.apps.iter().enumerate())
                .filter(|(_, a)| a.resident > 0)
                .map(|(i, a)| (i as ProcId, a.last_use)),
        );
        self.victim_app = best;
        best
    }

    fn victim_page(&mut self) -> Option<PageId> {
        match self.reclaim {
            ReclaimOrder::GlobalLru => self.global.back(),
            ReclaimOrder::AppImportance => {
                let app = self.victim_app()?;
                self.apps[app as usize].lru.back()
            }
        }
    }

    /// The app the low-memory killer takes: the least important killable app holding
    /// memory in DRAM (pages or zram pool), the one used least recently among equals.
    fn kill_candidate(&self, accessor: ProcId) -> Option<ProcId> {
        self.importance.least_important(
            (self.apps.iter().enumerate())
                .map(|(i, a)| (i as ProcId, a))
                .filter(|&(proc, a)| {
                    self.importance.of(proc) > ADJ_FOREGROUND
                        && proc != accessor
                        && (a.resident > 0 || self.space.pool_pages_of(proc) > 0)
                })
                .map(|(proc, a)| (proc, a.last_use)),
        )
    }

    fn reclaim_one(&mut self, accessor: ProcId) -> Result<()> {
        let victim = self.victim_page();
        if let (true, Some(page)) = (self.arch.swaps(), victim) {
            let clean = !self.flag(page, DIRTY) && self.space.slot_of(page).is_some();
            let stored = clean || self.arch.swap_out(&mut self.space, page, self.now_ns)?;
            if stored {
                self.remove_resident(page);
                self.metrics.swap_outs += 1;
                self.metrics.clean_swap_outs += clean as u64;
                self.set_flag(page, DIRTY, false);
                self.set_swapped_out(page)?;
                self.count_swapped(page);
                return Ok(());
            }
        }
        if let Some(app) = self.kill_candidate(accessor) {
            self.free_app(app, true);
            self.metrics.kills += 1;
            return Ok(());
        }
        match victim {
            Some(page) => {
                self.remove_resident(page);
                self.space.discard(page);
                self.set_flag(page, DIRTY, false);
                self.metrics.dropped_pages += 1;
                Ok(())
            }
            None => Err(Error::config(
                "swap memory",
                "DRAM is full but holds no page to reclaim (internal error)",
            )),
        }
    }

    /// Free every page `proc` owns, in DRAM and in swap; its next launch is cold.
    /// `killed`: its swapped-out pages are marked lost (an exit leaves nothing to swap in).
    fn free_app(&mut self, proc: ProcId, killed: bool) {
        let owned = std::mem::take(&mut self.apps[proc as usize].owned);
        for &page in &owned {
            if self.is_resident(page) {
                self.remove_resident(page);
            }
            let lost = killed && self.is_swapped_out(page);
            self.space.discard(page);
            self.set_location(page, Location::Absent);
            self.set_flag(page, DIRTY | OWNED, false);
            if lost {
                self.set_flag(page, LOST, true);
            }
        }
        let app = &mut self.apps[proc as usize];
        app.died = true;
        // Keep the allocation for the app's next life.
        app.owned = owned;
        app.owned.clear();
        self.victim_app = None;
    }

    /// Own `page` for `proc` if no app owns it.
    fn own(&mut self, page: PageId, proc: ProcId) {
        if !self.flag(page, OWNED) {
            self.space.set_owner(page, proc);
            self.ensure_app(proc);
            self.apps[proc as usize].owned.push(page);
            self.set_flag(page, OWNED, true);
        }
    }

    /// Count `page` in the swap footprint the first time it is swapped out.
    fn count_swapped(&mut self, page: PageId) {
        if !self.flag(page, EVER_SWAPPED) {
            self.set_flag(page, EVER_SWAPPED, true);
            self.metrics.swapped_pages += 1;
        }
    }

    /// A replayed swap-out: the architecture writes the page out.
    fn replay_swap_out(&mut self, event: &Event) -> Result<()> {
        let (page, proc) = (event.page(), event.proc());
        self.ensure_page(page);
        if self.is_swapped_out(page) {
            return Err(Error::config(
                "swap replay",
                format!("page {page} swapped out again without a swap-in since"),
            ));
        }
        self.own(page, proc);
        let owner = self.space.owner(page);
        loop {
            if self.arch.swap_out(&mut self.space, page, self.now_ns)? {
                break;
            }
            // No room (zram): the killer frees another app's pool pages, or the page is
            // lost.
            match self.kill_candidate(owner) {
                Some(app) => {
                    self.free_app(app, true);
                    self.metrics.kills += 1;
                }
                None => {
                    self.space.discard(page);
                    self.set_flag(page, LOST, true);
                    self.metrics.dropped_pages += 1;
                    return Ok(());
                }
            }
        }
        self.metrics.swap_outs += 1;
        self.set_flag(page, LOST, false);
        self.set_swapped_out(page)?;
        self.count_swapped(page);
        Ok(())
    }

    /// A replayed swap-in: the architecture reads the page back.
    fn replay_swap_in(&mut self, event: &Event) -> Result<()> {
        let (page, proc) = (event.page(), event.proc());
        self.ensure_page(page);
        if self.flag(page, LOST) {
            self.set_flag(page, LOST, false);
            self.metrics.fresh_allocations += 1;
            return Ok(());
        }
        if !self.is_swapped_out(page) {
            let why = if !self.flag(page, EVER_SWAPPED) {
                "was never swapped out"
            } else {
                "was swapped in already and not swapped out since"
            };
            return Err(Error::config(
                "swap replay",
                format!("swap-in of page {page}, which {why}"),
            ));
        }
        let device = self.arch.swap_in(&mut self.space, page)?;
        self.metrics.swap_ins += 1;
        self.swap_ins_per_page[page as usize] += 1;
        self.launches.fault(proc, self.read_ns(device));
        // Replay has no DRAM: the page swapped back in is outside the model.
        self.set_location(page, Location::Absent);
        Ok(())
    }

    /// Check the invariants (tests: O(pages)): DRAM within its size, the resident count
    /// right, every page out of DRAM in exactly one swap place or nowhere, the swap
    /// space consistent with itself.
    pub fn validate(&self) -> Result<()> {
        let fail = |message: String| Err(Error::config("swap memory", message));
        if self.dram_used() > self.dram_pages {
            return fail(format!(
                "DRAM holds {} frames, more than its {}",
                self.dram_used(),
                self.dram_pages
            ));
        }
        let pages = self.space.pages();
        let resident = pages.count_at(Location::Dram);
        if resident != self.resident {
            return fail(format!(
                "{resident} pages flagged resident, {} counted",
                self.resident
            ));
        }
        let listed: usize = match self.reclaim {
            ReclaimOrder::AppImportance => self.apps.iter().map(|a| a.lru.len()).sum(),
            ReclaimOrder::GlobalLru => self.global.len(),
        };
        if listed != self.resident {
            return fail(format!("{listed} pages on LRU lists, {resident} resident"));
        }
        let kept_slots = self.space.keeps_slots();
        for (page, entry) in pages.iter() {
            let slot = self.space.slot_of(page);
            let swapped = entry.location.is_swapped();
            let resident = entry.location == Location::Dram;
            if swapped && slot.map(SwapDevice::location) != Some(entry.location) {
                return fail(format!(
                    "page {page} is in {:?}, but its slot is on {slot:?}",
                    entry.location
                ));
            }
            // Only a page back from swap may keep a slot: in DRAM, or swapped in by a
            // replay; and never in zram.
            let back = resident || self.replaying;
            if !swapped && slot.is_some() && !(kept_slots && back && slot != Some(SwapDevice::Zram))
            {
                return fail(format!(
                    "page {page} is not swapped out but has a slot on {slot:?} (resident {resident})"
                ));
            }
        }
        self.space.validate()
    }

    /// End the run: launches closed, costs and shares derived.
    /// Each page's stored size in zram from its real contents (see
    /// [`SwapSpace::set_zram_sizes`]); before the first event.
    pub fn set_zram_sizes(&mut self, sizes: Vec<u32>) {
        self.space.set_zram_sizes(sizes);
    }

    pub fn finish(mut self, tables: &Tables) -> SwapMetrics {
        self.metrics.io = *self.space.counts();
        self.metrics.derive_costs(&self.devices);
        self.metrics.set_swap_in_counts(&self.swap_ins_per_page);
        let launches = self.launches.finish();
        self.metrics.set_launches(launches, |proc| {
            tables
                .processes
                .get(proc as usize)
                .map(|p| (p.pid, p.name.clone()))
                .unwrap_or((proc, String::new()))
        });
        self.metrics
    }
}

/// Simulating, the machine serves anonymous accesses and refuses a trace's own swap
/// events; replaying, it is driven by those swap events and ignores accesses. Both
/// time launches by importance and free an app's memory when it exits.
impl EventHandler for Machine {
    fn tick(&mut self, event: &Event) {
        self.now_ns = event.time_ns();
        self.launches.advance(self.now_ns);
        self.metrics.events += 1;
        self.ensure_app(event.proc());
    }

    fn access(&mut self, event: &Event) -> Result<()> {
        if self.replaying {
            self.metrics.ignored_accesses += 1;
            return Ok(());
        }
        self.touch(event)
    }

    fn importance(&mut self, proc: ProcId, oom_score_adj: i16) -> Result<()> {
        self.set_importance(proc, oom_score_adj);
        Ok(())
    }

    fn exit(&mut self, proc: ProcId) -> Result<()> {
        self.launches.end_of(proc);
        self.free_app(proc, false);
        self.metrics.exits += 1;
        Ok(())
    }

    fn swap_out(&mut self, event: &Event) -> Result<()> {
        match self.replaying {
            true => self.replay_swap_out(event),
            false => Err(not_replaying()),
        }
    }

    fn swap_in(&mut self, event: &Event) -> Result<()> {
        match self.replaying {
            true => self.replay_swap_in(event),
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
