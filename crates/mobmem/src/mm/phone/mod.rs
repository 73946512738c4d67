//! The composed phone: all five techniques on one memory at once.
//!
//! One event loop drives one physical memory. Reclaim ([`crate::mm::reclaim`], with the
//! slot's policy) owns the frames and decides which page leaves memory; the other slots
//! plug into what it does:
//! - **swap**: every anonymous page reclaim swaps out is handed to the slot's swap
//!   architecture ([`crate::mm::swap::architectures`]), which places it on NVM, flash or
//!   in the zram pool; a swap-in reads it from there at that device's cost. The zram
//!   pool's compressed pages take frames of the same memory (held as unmovable frames,
//!   so reclaim must make room for them). With no swap, or when the architecture has no
//!   room, the low-memory killer frees memory.
//! - **dedup**: ksmd ([`crate::mm::dedup::Ksmd`]) scans the anonymous pages of the
//!   reclaim machine's memory on its own clock (a timer of the event loop). A page it
//!   merges gives its frame back and maps the shared one; a KSM page is the frame of the
//!   page it was made from, held as unmovable until its last mapping goes. A read of a
//!   merged page is served by the shared page; a write copies it (a minor fault and a
//!   fresh frame, through reclaim).
//! - **fs**: every file access goes through the slot's read path
//!   ([`crate::mm::fs::read`]), which asks the memory holding the file pages whether
//!   the page is there, and is priced for what it did on the slot's platform: a page
//!   in memory is a hit (a page-cache lookup and a copy to the user); any other is read
//!   from flash into a frame (compressed code decompressed), a first read or a refault
//!   of a page reclaim dropped; with the selective page cache, incompressible media
//!   bypasses the page cache and takes no frame at all.
//! - **placement**: when on, file pages live in a buffer cache of DRAM + PCM run by the
//!   slot's placement policy ([`crate::mm::placement::sim`]) instead of main memory; its
//!   misses are file reads, priced as above.
//! - **low-memory killer**: whenever free memory stays below the min watermark after
//!   reclaim, or swap refuses a page, the least important app holding memory
//!   (`oom_score_adj` > 0, never the one being served) is killed; its next launch is
//!   cold.
//!
//! What it measures ([`PhoneMetrics`]): launch times (the swap model's
//! [`LaunchTracker`]: a warm launch costs its base time plus its faults' reads, a cold
//! one the cold-start time), the response time of every interaction (T_E plus the time
//! of every fault the interactive task takes until the next input), energy, flash, NVM
//! and PCM writes with the lifetimes they imply, memory saved by KSM and processes
//! killed. `docs/phone.md` lists each assumption.

pub mod config;
pub mod perfetto;
pub mod timeline;

use serde::Serialize;

use crate::core::events::{self, EventHandler};
use crate::core::stats::{percentile, Stats};
use crate::core::swap::{op_price, IoOp, SwapDevice, SwapSlots};
use crate::core::time::Step;
use crate::devices::platform::Platform;
use crate::devices::{CostModel, Devices};
use crate::mm::clock::{Accounting, ClockFigures, MachineClock};
use crate::mm::dedup::{pages::NEVER, Deduplicator, PageContent, Population, DEDUP_VARIANTS};
use crate::mm::fs::read::{FilePage, PageCache, ReadCost, ReadPath};
use crate::mm::fs::{Codec, FsVariantInfo, MachineCache, StoredPage, FS_VARIANTS};
use crate::mm::placement::sim::{RunSetup, Simulator};
use crate::mm::placement::{find_policy as find_placement, Capacity, Family};
use crate::mm::reclaim::{self, ReclaimConfig};
use crate::mm::swap::architectures::find_architecture;
use crate::mm::swap::launch::{LaunchKind, LaunchTracker};
use crate::trace::{Event, PageId, PageKind, ProcId, ADJ_FOREGROUND};
use crate::workload::phone::{content_base, AnonContent, FileClass, PhoneTrace};
use crate::{Error, Result};
pub use config::{Choice, PhoneConfig, SLOTS};
pub use timeline::{Sample, SampleEvent};
use timeline::{State, Timeline};

/// Check that every slot of `choice` names a known mechanism.
pub(crate) fn check_choice(config: &PhoneConfig, choice: &Choice) -> Result<()> {
    let fail = |m: String| Err(Error::config("phone", m));
    if choice.placement != "off" {
        let info = find_placement(&choice.placement)?;
        if info.family == Family::Hybrid
            && (config.placement.pcm_mib <= 0.0 || config.placement.dram_mib <= 0.0)
        {
            return fail(format!(
                "placement {} runs on DRAM + PCM: give placement.dram_mib and placement.pcm_mib",
                choice.placement
            ));
        }
        if info.family == Family::SingleTier && config.placement.dram_mib <= 0.0 {
            return fail(format!(
                "placement {} needs placement.dram_mib",
                choice.placement
            ));
        }
    }
    if choice.reclaim == "off" {
        return fail(
            "reclaim cannot be off: every kernel reclaims; use its baseline (stock) instead".into(),
        );
    }
    crate::mm::reclaim::policy::find_policy(&choice.reclaim)?;
    let arch = find_architecture(&choice.swap)?;
    if arch.uses_nvm && config.swap.nvm_mib <= 0.0 {
        return fail(format!("swap {} needs swap.nvm_mib", choice.swap));
    }
    if arch.uses_zram && config.swap.zram_mib <= 0.0 {
        return fail(format!("swap {} needs swap.zram_mib", choice.swap));
    }
    if choice.dedup != "off" {
        DEDUP_VARIANTS
            .find(&choice.dedup)
            .map_err(|_| DEDUP_VARIANTS.unknown(&choice.dedup, &["off"]))?;
    }
    FS_VARIANTS.find(&choice.fs)?;
    Ok(())
}

/// What one phone run measured.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Stats)]
pub struct PhoneMetrics {
    #[stats(skip)]
    pub accesses: u64,
    /// Warm and cold relaunches (first launches are left out: a cold start anywhere).
    pub launches: u64,
    pub cold_launches: u64,
    pub launch_mean_ms: f64,
    pub warm_launch_mean_ms: f64,
    pub interactions: u64,
    /// Response times of interactions: mean, nearest-rank percentiles and the longest.
    pub rt_mean_ms: f64,
    pub rt_p10_ms: f64,
    pub rt_p25_ms: f64,
    pub rt_p50_ms: f64,
    pub rt_p75_ms: f64,
    pub rt_p90_ms: f64,
    pub rt_p95_ms: f64,
    pub rt_p99_ms: f64,
    pub rt_max_ms: f64,
    pub energy_mj: f64,
    pub fg_energy_mj: f64,
    pub file_reads: u64,
    pub file_bypass_reads: u64,
    pub swap_outs: u64,
    pub swap_ins: u64,
    pub minor_faults: u64,
    pub cow_faults: u64,
    pub flash_writes: u64,
    pub nvm_writes: u64,
    pub pcm_writes: u64,
    /// Years until the flash swap area wears out at this write rate (perfect wear
    /// levelling over the swap area); none with no writes.
    pub flash_lifetime_years: Option<f64>,
    pub nvm_lifetime_years: Option<f64>,
    pub pcm_lifetime_years: Option<f64>,
    /// Frames KSM saved, averaged over its wake-ups, in MiB of the full-size phone.
    pub ksm_saved_mib: f64,
    pub ksm_saved_peak_mib: f64,
    pub ksm_cpu_ms: f64,
    pub zram_pool_peak_mib: f64,
    pub kills: u64,
    pub swap_refused: u64,
    pub pages_scanned: u64,
    /// Pages a protecting reclaim policy (FMP, memcg-low) skipped, and its reclaim
    /// calls repeated with protection off.
    pub protected_skips: u64,
    pub protection_fallbacks: u64,
    /// Major faults (swap-ins, file reads) of the interactive task during interactions.
    #[stats(then(accesses = self.accesses))]
    pub interactive_major_faults: u64,
    /// Frames interactions missed: each one's response in vsync periods, less the
    /// periods its own execution takes.
    pub janky_frames: u64,
    /// Interactions that missed at least one frame.
    pub janky_interactions: u64,
    /// Memory and I/O stall of the whole phone as PSI counts it (`some`, `full`), s;
    /// none with the sum accounting, which has no clock to stall on.
    pub psi_memory_some_s: Option<f64>,
    pub psi_memory_full_s: Option<f64>,
    pub psi_io_some_s: Option<f64>,
    /// Memory stall (`some`) of the app that stalled most, s.
    pub psi_memory_some_worst_app_s: Option<f64>,
    /// CPU time of the apps' threads together and of kswapd, ms.
    pub app_cpu_ms: Option<f64>,
    pub kswapd_cpu_ms: Option<f64>,
    /// Time operations waited in the flash's queue, ms.
    pub flash_queue_wait_ms: Option<f64>,
    pub duration_s: f64,
}

/// The file system slot: its read path on its platform, and how each class of file
/// page is stored. Every file access goes through the read path
/// ([`FileSystem`](crate::mm::fs::FileSystem)), which asks the memory holding the file
/// pages (reclaim's, or the buffer cache of the placement slot) whether the page is
/// there, and is priced for what it did.
struct PhoneFs {
    path: ReadPath,
    platform: Platform,
    codec: Codec,
    /// A code page as stored: compressed by `code_ratio` (raw with `off`).
    code: StoredPage,
    /// A media page as stored: raw (already compressed data).
    media: StoredPage,
}

impl PhoneFs {
    /// The slot's file system `variant` on `platform` with `codec`: code compressed by
    /// `code_ratio` if the variant compresses it.
    fn new(variant: &FsVariantInfo, platform: Platform, codec: Codec, code_ratio: f64) -> Self {
        const PAGE: u32 = 4096;
        let code = if variant.compresses_code {
            StoredPage::new(true, PAGE, (PAGE as f64 / code_ratio).round() as u32)
        } else {
            StoredPage::new(false, PAGE, PAGE)
        };
        PhoneFs {
            path: variant.path,
            platform,
            codec,
            code,
            media: StoredPage::new(false, PAGE, PAGE),
        }
    }
}

/// The placement slot's buffer cache as the file system's page cache: it holds the
/// pages it has in DRAM or PCM, and an access is the trace's access stepped through the
/// placement simulator.
struct BufferCache<'a> {
    sim: &'a mut Simulator,
    event: &'a Event,
    accessed: bool,
}

impl PageCache for BufferCache<'_> {
    fn holds(&self, page: PageId) -> bool {
        self.sim.tier_of(page).is_some()
    }

    fn access(&mut self, _page: PageId, _write: bool) -> Result<()> {
        self.accessed = true;
        self.sim.step(self.event)
    }
}

/// The dedup slot's daemon on the reclaim machine's memory, woken on the loop's timer.
struct Dedup<'a> {
    ksmd: Box<dyn Deduplicator + 'a>,
    /// ksmd's CPU time at its last wake-up, ns.
    cpu_ns: f64,
    next_wake_ns: u64,
    sleep_ns: u64,
    saved_sum: f64,
    saved_peak: u64,
    wakes: u64,
}

/// A phone run in progress.
pub struct Phone<'a> {
    config: &'a PhoneConfig,
    trace: &'a PhoneTrace,
    m: reclaim::Machine,
    min_free: usize,
    /// Processes in the trace.
    procs: usize,
    dedup: Option<Dedup<'a>>,
    cache: Option<Simulator>,
    fs: PhoneFs,
    launches: LaunchTracker,
    now_ns: u64,
    start_ns: Option<u64>,
    /// Response time of the interaction in progress, ns, and of those that ended.
    interaction: Option<(ProcId, f64)>,
    responses: Vec<f64>,
    energy_nj: f64,
    fg_energy_nj: f64,
    metrics: PhoneMetrics,
    pool_peak: usize,
    /// Samples over the run, when asked for ([`Phone::record_timeline`]).
    timeline: Option<Timeline>,
    /// The clock the work runs on (the contended accounting), and the work of the
    /// access in progress.
    clock: Option<MachineClock>,
    steps: Vec<Step>,
    /// Frames each interaction's own execution takes.
    execution_frames: u64,
}

/// The KSM population of a phone trace: one process per app in process order, its
/// anonymous pages in page order (named by their trace page ids), with their contents.
fn population(trace: &PhoneTrace, volatile_seed: u64) -> Result<Population> {
    let procs = trace.trace.tables.processes.len();
    let mut by_proc: Vec<Vec<PageId>> = vec![Vec::new(); procs];
    for (page, key) in trace.trace.tables.pages.iter().enumerate() {
        if key.kind != PageKind::Anon {
            continue;
        }
        let pid = key.owner as u32;
        if let Some(proc) = trace
            .trace
            .tables
            .processes
            .iter()
            .position(|p| p.pid == pid)
        {
            by_proc[proc].push(page as PageId);
        }
    }
    let mut pop = Population::default();
    for (proc, pages) in by_proc.into_iter().enumerate() {
        let contents = pages
            .into_iter()
            .map(|page| {
                let content =
                    trace.content[page as usize].unwrap_or(AnonContent::Own { period_ns: 0 });
                let mut c = match content_base(content, page) {
                    Some(base) => PageContent::constant(base),
                    None => PageContent::constant(crate::mm::dedup::pages::zero_fingerprint()),
                };
                if let AnonContent::Own { period_ns } = content {
                    if period_ns > 0 {
                        c.period_ns = period_ns;
                        c.phase_ns = crate::core::mix64(volatile_seed ^ page as u64) % period_ns;
                    }
                }
                c.write_at_ns = NEVER;
                (page, c)
            })
            .collect();
        let name = &trace.trace.tables.processes[proc].name;
        pop.push_process_at(
            name,
            trace.start_ns.get(proc).copied().unwrap_or(0),
            "anon",
            contents,
        )?;
    }
    Ok(pop)
}

impl<'a> Phone<'a> {
    /// A phone of `config` with the mechanisms of `choice`, for `trace` (whose KSM
    /// population is `population`, when dedup is on).
    pub fn new(
        config: &'a PhoneConfig,
        choice: &Choice,
        trace: &'a PhoneTrace,
        population: Option<&'a Population>,
    ) -> Result<Self> {
        config.validate()?;
        check_choice(config, choice)?;
        let pages = trace.trace.tables.pages.len();
        let procs = trace.trace.tables.processes.len();
        let placement_on = choice.placement != "off";
        let dram = config.scaled_pages(config.memory.dram_mib);
        let system = config.scaled_pages(config.memory.system_mib);
        let cache_dram = if placement_on {
            config.scaled_pages(config.placement.dram_mib)
        } else {
            0
        };
        let memory_pages = dram.saturating_sub(cache_dram);
        let arch_info = find_architecture(&choice.swap)?;
        let swap_config = crate::mm::swap::SwapConfig {
            architecture: choice.swap.clone(),
            dram_pages: memory_pages,
            nvm_pages: config.scaled_pages(config.swap.nvm_mib),
            zram: crate::mm::swap::ZramConfig {
                pool_pages: config.scaled_pages(config.swap.zram_mib).max(1),
                ..Default::default()
            },
            devices: config.swap.devices.clone(),
            ..Default::default()
        };
        let nvm_pages = if arch_info.uses_nvm {
            swap_config.nvm_pages
        } else {
            0
        };
        let pool_pages = if arch_info.uses_zram {
            swap_config.zram.pool_pages
        } else {
            0
        };
        // Swap slots reclaim may fill: the devices' room; zram holds its pool's pages
        // at their mean compression ratio.
        let zram_ratio = config.swap.devices.zram.compression_ratio.max(1.0);
        let arch = (arch_info.build)(&swap_config);
        let swap_pages = if !arch.swaps() {
            0
        } else if arch_info.uses_zram {
            (pool_pages as f64 * zram_ratio) as usize
                + if choice.swap == "zram-writeback" {
                    config.scaled_pages(config.swap.flash_mib)
                } else {
                    0
                }
        } else {
            nvm_pages + config.scaled_pages(config.swap.flash_mib)
        };
        let rc = ReclaimConfig {
            policy: choice.reclaim.clone(),
            memory_pages,
            reserved_pages: system.min((memory_pages / 2).saturating_sub(1)),
            unmovable_per_mille: 0,
            swap_pages,
            swappiness: config.reclaim.swappiness,
            memcg_low_pages: config.scaled_pages(config.reclaim.memcg_low_mib),
            high_order: reclaim::HighOrderConfig {
                process: String::new(),
                ..Default::default()
            },
            ..Default::default()
        };
        let mut m = reclaim::Machine::new(&rc, pages, procs)
            .map_err(|e| Error::config(format!("phone {}", config.name), e.to_string()))?;
        let slots = SwapSlots::new(
            nvm_pages,
            arch_info.nvm_order,
            pool_pages,
            &config.swap.devices.zram,
            false,
            pages,
        );
        m.mem.set_swap(slots, arch, swap_pages);
        m.enable_killer();
        let dedup = match (choice.dedup.as_str(), population) {
            ("off", _) => None,
            (name, Some(pop)) => {
                let mut params = config.dedup.ksm.clone();
                params.pages_to_scan =
                    ((params.pages_to_scan as f64 * config.scale).round() as u32).max(1);
                let ksmd = (DEDUP_VARIANTS.find(name)?.build)(pop, &params);
                let sleep_ns = ksmd.sleep_ns();
                Some(Dedup {
                    ksmd,
                    cpu_ns: 0.0,
                    next_wake_ns: sleep_ns,
                    sleep_ns,
                    saved_sum: 0.0,
                    saved_peak: 0,
                    wakes: 0,
                })
            }
            (name, None) => {
                return Err(Error::config(
                    "phone",
                    format!(
                        "dedup = {name} needs the pages' contents (the phone workload has them)"
                    ),
                ))
            }
        };
        let cache = if placement_on {
            let info = find_placement(&choice.placement)?;
            let capacity = match info.family {
                Family::Hybrid => Capacity {
                    dram: cache_dram.max(1),
                    pcm: config.scaled_pages(config.placement.pcm_mib).max(1),
                },
                Family::SingleTier => Capacity::single(cache_dram.max(1)),
            };
            let setup = RunSetup {
                policy: info,
                capacity,
                cost: CostModel::table1_ns(),
                devices: Devices::default(),
                clock: None,
                warmup: 0,
                object_ids: None,
            };
            Some(Simulator::new(&setup, pages, None)?)
        } else {
            None
        };
        let platform = Platform::named(&config.fs.platform)?;
        let clock = match config.time.accounting {
            Accounting::Sum => None,
            Accounting::Contended => {
                let names: Vec<String> = (trace.trace.tables.processes.iter())
                    .map(|p| p.name.clone())
                    .collect();
                Some(MachineClock::new(
                    &config.time,
                    &names,
                    &config.swap.devices,
                )?)
            }
        };
        let execution_frames = frames(config.response.execution_ms, config.time.vsync_ms);
        Ok(Phone {
            config,
            trace,
            min_free: rc.watermarks().min_pages(),
            m,
            procs,
            dedup,
            cache,
            fs: PhoneFs::new(
                FS_VARIANTS.find(&choice.fs)?,
                platform,
                config.fs.codec,
                config.fs.code_ratio,
            ),
            launches: LaunchTracker::new(config.launch.clone()),
            now_ns: 0,
            start_ns: None,
            interaction: None,
            responses: Vec::new(),
            energy_nj: 0.0,
            fg_energy_nj: 0.0,
            metrics: PhoneMetrics::default(),
            pool_peak: 0,
            timeline: None,
            clock,
            steps: Vec::new(),
            execution_frames,
        })
    }

    /// Take a sample of the memory at every launch and at the end
    /// ([`timeline`]); [`Phone::finish_with_timeline`] returns them.
    pub fn record_timeline(&mut self) {
        self.timeline = Some(Timeline::new(&self.trace.trace));
    }

    /// Record what a Perfetto trace of the run needs ([`perfetto`]): the timeline's
    /// samples with their [`timeline::Detail`], and what ran when on the clock. An error
    /// with the sum accounting, which has no clock.
    pub fn record_perfetto(&mut self) -> Result<()> {
        let Some(clock) = &mut self.clock else {
            return Err(Error::config(
                &self.config.name,
                "a Perfetto trace draws the phone's clock, and `[time] accounting = \"sum\"` \
                 runs without one: use `accounting = \"contended\"` (the default)",
            ));
        };
        clock.record();
        let mut timeline = Timeline::new(&self.trace.trace);
        timeline.keep_detail(&self.trace.trace);
        self.timeline = Some(timeline);
        Ok(())
    }

    /// The memory and counters a timeline sample reads, in pages and counts.
    fn state(&self, timeline: &Timeline) -> State {
        let mem = &self.m.mem;
        let (page_cache, anon) = timeline.resident(
            |page| mem.frame_of(page).is_some(),
            |page| (self.cache.as_ref()).is_some_and(|sim| sim.tier_of(page).is_some()),
        );
        State {
            free: mem.free(),
            page_cache,
            anon,
            swap_used: mem.swap_used(),
            zram_pool: mem.pool_frames_held(),
            ksm_saved: mem.merged_pages().saturating_sub(mem.ksm_pages()),
            kills: self.m.killed,
            swap_outs: mem.counters.swap_outs,
            swap_ins: self.metrics.swap_ins,
            file_reads: self.metrics.file_reads,
        }
    }

    /// A sample of the timeline, if one is recorded, taken now.
    fn sample(&mut self, event: SampleEvent, app: String, launch: Option<LaunchKind>) {
        let Some(mut timeline) = self.timeline.take() else {
            return;
        };
        let state = self.state(&timeline);
        let time_ns = self.now_ns.saturating_sub(self.start_ns.unwrap_or(0));
        let time_s = time_ns as f64 / 1e9;
        let c = self.config;
        let mib = |pages: usize| pages as f64 / 256.0 / c.scale;
        timeline.record(time_s, event, app, launch, &state, mib);
        let mem = &self.m.mem;
        timeline.detail_sample(
            time_ns,
            self.procs,
            |page| mem.frame_of(page).is_some(),
            mib,
        );
        self.timeline = Some(timeline);
    }

    /// Charge a fault of `proc` taking `ns` and `nj`: to its interaction, its launch and
    /// the energy counts (the sum accounting). Its steps on the clock are in `steps`.
    fn charge(&mut self, proc: ProcId, ns: f64, nj: f64, major: bool) {
        self.energy_nj += nj;
        if self.m.mem.procs.importance().is_foreground(proc) {
            self.fg_energy_nj += nj;
        }
        if let Some((p, t)) = &mut self.interaction {
            if *p == proc {
                *t += ns;
                self.metrics.interactive_major_faults += major as u64;
            }
        }
        if major {
            self.launches.fault(proc, ns);
        }
    }

    fn swap_read(&self, device: SwapDevice) -> (f64, f64) {
        let price = op_price(&self.config.swap.devices, device, IoOp::Read);
        (price.ns, price.nj)
    }

    /// Processes the machine's killer took: their launches end. (Their pages left
    /// memory with them, merged ones their shared frames: `Memory::discard`.)
    fn settle_kills(&mut self) {
        let time_ns = self.now_ns.saturating_sub(self.start_ns.unwrap_or(0));
        for (proc, _) in self.m.take_kills() {
            self.launches.end_of(proc);
            if let Some(timeline) = &mut self.timeline {
                timeline.mark(time_ns, timeline::MarkKind::Kill, proc);
            }
        }
    }

    /// A file access, read or written through the slot's read path on the page's own
    /// state: a page in memory is a hit; one read from flash is a file read (a major
    /// fault), which the selective path serves around the page cache for raw media.
    fn file_access(&mut self, event: &Event) -> Result<()> {
        let (page, proc, write) = (event.page(), event.proc(), event.is_write());
        let class = self.trace.file_class.get(page as usize).copied().flatten();
        let stored = if class == Some(FileClass::Media) {
            self.fs.media
        } else {
            self.fs.code
        };
        let at = FilePage { id: page, stored };
        let fs = self.fs.path.fs();
        let verb = |cache: &mut dyn PageCache| -> Result<ReadCost> {
            if write {
                fs.write(cache, at)
            } else {
                fs.read(cache, at)
            }
        };
        let (cost, through_cache) = match &mut self.cache {
            Some(sim) => {
                let mut cache = BufferCache {
                    sim,
                    event,
                    accessed: false,
                };
                (verb(&mut cache)?, cache.accessed)
            }
            None => {
                let mut cache = MachineCache::new(&mut self.m, proc);
                (verb(&mut cache)?, cache.accessed)
            }
        };
        let from_flash = cost.flash_pages() > 0;
        if from_flash {
            self.metrics.file_reads += 1;
            self.metrics.file_bypass_reads += u64::from(!through_cache);
        }
        let priced = cost.priced(&self.fs.platform, self.fs.codec);
        if self.clock.is_some() {
            let flash_ns = priced.time_ns - priced.cpu_busy_ns;
            MachineClock::file_read(flash_ns, priced.cpu_busy_ns, &mut self.steps);
        }
        self.charge(proc, priced.time_ns, priced.energy_nj, from_flash);
        Ok(())
    }

    fn anon_access(&mut self, event: &Event) -> Result<()> {
        let (page, proc) = (event.page(), event.proc());
        if self.m.mem.is_merged(page) {
            if !event.is_write() {
                return Ok(());
            }
            // Copy on write: the page leaves the shared frame and faults a frame of its
            // own in (below).
            if let Some(d) = &mut self.dedup {
                d.ksmd.write_fault(&mut self.m, page);
            }
            self.metrics.cow_faults += 1;
        }
        if let Some(fault) = self.m.access(page, proc, true, event.is_write())? {
            match fault.read_from {
                Some(device) => {
                    self.metrics.swap_ins += 1;
                    let (ns, nj) = self.swap_read(device);
                    if self.clock.is_some() {
                        self.steps.push(match device {
                            SwapDevice::Zram => Step::Cpu {
                                work_ns: ns.round() as u64,
                                memstall: true,
                            },
                            d => MachineClock::device_read(d == SwapDevice::Nvm, ns),
                        });
                    }
                    self.charge(proc, ns, nj, true);
                }
                None => {
                    self.metrics.minor_faults += 1;
                    let ns = self.config.response.minor_fault_ns;
                    if self.clock.is_some() {
                        self.steps.push(Step::Cpu {
                            work_ns: ns.round() as u64,
                            memstall: false,
                        });
                    }
                    self.charge(proc, ns, 0.0, false);
                }
            }
        }
        Ok(())
    }

    /// After an access: the processes the killer took, and the killer again when free
    /// memory stayed below min after kswapd.
    fn settle(&mut self, accessor: ProcId) -> Result<()> {
        self.settle_kills();
        let mut guard = 0;
        while self.m.mem.free() < self.min_free && guard < 4 {
            self.m.balance();
            if self.m.mem.free() >= self.min_free || !self.m.kill_one(accessor) {
                break;
            }
            self.settle_kills();
            guard += 1;
        }
        self.pool_peak = self.pool_peak.max(self.m.mem.pool_frames_held());
        Ok(())
    }

    fn end_interaction(&mut self) -> Result<()> {
        if let Some((_, t)) = self.interaction.take() {
            self.responses.push(t / 1e6);
        }
        if let Some(clock) = &mut self.clock {
            clock.end_interaction()?;
        }
        Ok(())
    }

    /// The trace reached `now_ns` (after [`EventHandler::tick`]): the clock follows the
    /// launch tracker and runs up to the trace.
    fn ticked(&mut self) -> Result<()> {
        self.sync_launch()?;
        match &mut self.clock {
            Some(clock) => clock.advance(self.now_ns),
            None => Ok(()),
        }
    }

    /// The clock follows the launch tracker: a launch that ended is given to its thread.
    fn sync_launch(&mut self) -> Result<()> {
        match &mut self.clock {
            Some(clock) => clock.sync_launch(self.launches.active()),
            None => Ok(()),
        }
    }

    /// The work of the access of `proc` just done: its direct reclaim, then its fault
    /// (in `steps`), on its thread; kswapd's reclaim on kswapd's.
    fn clock_access(&mut self, proc: ProcId) -> Result<()> {
        match &mut self.clock {
            Some(clock) => {
                clock.access_done(proc, self.now_ns, self.m.take_work(), &mut self.steps)
            }
            None => Ok(()),
        }
    }

    /// Check that every page is in exactly one place and every held frame is accounted
    /// for: reclaim's memory is consistent (a merged page holds no frame of its own and
    /// no swap slot and maps a live KSM page or the zero page; a swapped page has a slot
    /// on a swap device and the other way round; the frames held for the zram pool and
    /// for KSM pages match their counts) and every resident page is on one of its
    /// policy's lists; ksmd's trees and counters agree with the memory's merged pages.
    pub fn validate(&self) -> std::result::Result<(), String> {
        self.m.check()?;
        if let Some(d) = &self.dedup {
            d.ksmd.audit(&self.m.mem)?;
        }
        Ok(())
    }

    /// The run's figures.
    pub fn finish(self) -> Result<PhoneMetrics> {
        Ok(self.finish_with_timeline()?.0)
    }

    /// The run's figures and its timeline: empty unless [`Phone::record_timeline`] was
    /// called, else a sample at every launch, with the launch's time, and a last one.
    pub fn finish_with_timeline(self) -> Result<(PhoneMetrics, Vec<Sample>)> {
        let (m, timeline, _) = self.finish_all()?;
        Ok((m, timeline.map(|t| t.samples).unwrap_or_default()))
    }

    /// The run's figures, its timeline as recorded and what its clock measured.
    fn finish_all(mut self) -> Result<(PhoneMetrics, Option<Timeline>, Option<ClockFigures>)> {
        self.end_interaction()?;
        let c = self.config;
        let mut m = std::mem::take(&mut self.metrics);
        let duration_ns = self
            .now_ns
            .saturating_sub(self.start_ns.unwrap_or(0))
            .max(1);
        m.duration_s = duration_ns as f64 / 1e9;
        let mut records =
            std::mem::replace(&mut self.launches, LaunchTracker::new(c.launch.clone())).finish();
        let clock = match self.clock.take() {
            Some(clock) => Some(clock.finish()?),
            None => None,
        };
        if let Some(figures) = &clock {
            if figures.launches_ns.len() != records.len()
                || figures.responses_ns.len() != self.responses.len()
            {
                return Err(Error::config(
                    "phone clock",
                    format!(
                        "{} launches and {} interactions on the clock, {} and {} counted",
                        figures.launches_ns.len(),
                        figures.responses_ns.len(),
                        records.len(),
                        self.responses.len()
                    ),
                ));
            }
            for (r, &t) in records.iter_mut().zip(&figures.launches_ns) {
                r.launch_ns = t;
            }
            for (r, &t) in self.responses.iter_mut().zip(&figures.responses_ns) {
                *r = t / 1e6;
            }
        }
        if let Some(timeline) = &mut self.timeline {
            timeline.set_launch_times(&records);
        }
        let relaunch: Vec<_> = records
            .iter()
            .filter(|r| r.kind != LaunchKind::First)
            .collect();
        m.launches = relaunch.len() as u64;
        m.cold_launches = relaunch
            .iter()
            .filter(|r| r.kind == LaunchKind::Cold)
            .count() as u64;
        let mean = |v: &[f64]| crate::core::stats::mean(v.iter().copied());
        m.launch_mean_ms = mean(
            &relaunch
                .iter()
                .map(|r| r.launch_ns / 1e6)
                .collect::<Vec<_>>(),
        );
        m.warm_launch_mean_ms = mean(
            &relaunch
                .iter()
                .filter(|r| r.kind == LaunchKind::Warm)
                .map(|r| r.launch_ns / 1e6)
                .collect::<Vec<_>>(),
        );
        let mut rts = std::mem::take(&mut self.responses);
        m.interactions = rts.len() as u64;
        for &rt in &rts {
            let missed = frames(rt, c.time.vsync_ms).saturating_sub(self.execution_frames);
            m.janky_frames += missed;
            m.janky_interactions += u64::from(missed > 0);
        }
        if let Some(f) = &clock {
            set_clock_figures(&mut m, f);
        }
        m.rt_mean_ms = mean(&rts);
        rts.sort_by(f64::total_cmp);
        m.rt_p10_ms = percentile(&rts, 10.0);
        m.rt_p25_ms = percentile(&rts, 25.0);
        m.rt_p50_ms = percentile(&rts, 50.0);
        m.rt_p75_ms = percentile(&rts, 75.0);
        m.rt_p90_ms = percentile(&rts, 90.0);
        m.rt_p95_ms = percentile(&rts, 95.0);
        m.rt_p99_ms = percentile(&rts, 99.0);
        m.rt_max_ms = percentile(&rts, 100.0);
        // Device writes and their energy (reads were charged as they happened).
        let io = *self.m.mem.swap().counts();
        let d = &c.swap.devices;
        let write_nj = io.energy_nj(d, |_, op| op == IoOp::Write);
        // zram's compressions are among the writes and its decompressions among the reads,
        // each at its profile's energy: its CPU time is not priced a second time.
        let mut energy = self.energy_nj + write_nj;
        m.swap_outs = self.m.mem.counters.swap_outs;
        m.swap_refused = self.m.mem.counters.swap_refused;
        m.kills = self.m.killed;
        m.flash_writes = io.flash_writes;
        m.nvm_writes = io.nvm_writes;
        let duration_s = m.duration_s;
        let years = |writes: u64, slots: usize, endurance: Option<f64>| -> Option<f64> {
            let endurance = endurance?;
            if writes == 0 || slots == 0 {
                return None;
            }
            let per_s = writes as f64 / duration_s;
            Some(slots as f64 * endurance / per_s / (365.25 * 86_400.0))
        };
        m.flash_lifetime_years = years(
            m.flash_writes,
            c.scaled_pages(c.swap.flash_mib),
            d.flash.endurance_writes,
        );
        m.nvm_lifetime_years = years(
            m.nvm_writes,
            c.scaled_pages(c.swap.nvm_mib),
            d.nvm.endurance_writes,
        );
        if let Some(cache) = self.cache.take() {
            let pm = cache.finish()?;
            m.pcm_writes = pm.pcm_writes;
            m.pcm_lifetime_years = pm.pcm_lifetime_years_leveled;
            energy += pm.energy_nj;
        }
        let mib = |pages: f64| pages / 256.0 / c.scale;
        if let Some(dd) = &self.dedup {
            let cpu = dd.ksmd.cpu_ns(&self.m.mem);
            m.ksm_cpu_ms = cpu / 1e6;
            energy += cpu * c.response.cpu_w;
            m.ksm_saved_mib = if dd.wakes > 0 {
                mib(dd.saved_sum / dd.wakes as f64)
            } else {
                0.0
            };
            m.ksm_saved_peak_mib = mib(dd.saved_peak as f64);
        }
        m.zram_pool_peak_mib = mib(self.pool_peak as f64);
        m.pages_scanned = self.m.mem.counters.scanned;
        m.protected_skips = self.m.mem.counters.protected_skips;
        m.protection_fallbacks = self.m.fallbacks;
        m.energy_mj = energy / 1e6;
        m.fg_energy_mj = self.fg_energy_nj / 1e6;
        self.metrics = m;
        self.sample(SampleEvent::End, String::new(), None);
        let m = std::mem::take(&mut self.metrics);
        Ok((m, self.timeline.take(), clock))
    }
}

/// Frames of `vsync_ms` a piece of `ms` spans (a partial frame counts whole).
fn frames(ms: f64, vsync_ms: f64) -> u64 {
    // A hair under a whole frame is that frame: responses are sums of rounded ns.
    ((ms / vsync_ms) - 1e-9).ceil().max(0.0) as u64
}

fn set_clock_figures(m: &mut PhoneMetrics, f: &ClockFigures) {
    let s = |ns: u64| Some(ns as f64 / 1e9);
    m.psi_memory_some_s = s(f.mem_some_ns);
    m.psi_memory_full_s = s(f.mem_full_ns);
    m.psi_io_some_s = s(f.io_some_ns);
    m.psi_memory_some_worst_app_s = s(f.mem_some_worst_app_ns);
    m.app_cpu_ms = Some(f.app_cpu_ns / 1e6);
    m.kswapd_cpu_ms = Some(f.kswapd_cpu_ns / 1e6);
    m.flash_queue_wait_ms = Some(f.flash_wait_ns as f64 / 1e6);
}

impl EventHandler for Phone<'_> {
    fn check(&self) -> std::result::Result<(), String> {
        self.validate()
    }

    fn tick(&mut self, event: &Event) {
        self.now_ns = event.time_ns();
        self.start_ns.get_or_insert(self.now_ns);
        self.launches.advance(self.now_ns);
        self.m.set_time(self.now_ns);
    }

    fn access(&mut self, event: &Event) -> Result<()> {
        let proc = event.proc();
        if proc as usize >= self.procs {
            return Err(Error::config(
                "phone",
                format!(
                    "process id {proc} but the trace has {} processes",
                    self.procs
                ),
            ));
        }
        self.ticked()?;
        self.metrics.accesses += 1;
        if event.is_anon() {
            self.anon_access(event)?;
        } else {
            self.file_access(event)?;
        }
        self.settle(proc)?;
        self.clock_access(proc)?;
        self.launches.access_done(proc);
        self.sync_launch()
    }

    fn importance(&mut self, proc: ProcId, oom_score_adj: i16) -> Result<()> {
        if proc as usize >= self.procs {
            return Ok(());
        }
        self.ticked()?;
        let was = self.m.mem.procs.set_importance(proc, oom_score_adj);
        if let Some(cache) = &mut self.cache {
            cache.step(&Event::importance(self.now_ns, proc, oom_score_adj))?;
        }
        if oom_score_adj == ADJ_FOREGROUND && was != ADJ_FOREGROUND {
            self.m.set_foreground(proc);
            let kind = self.m.mem.procs.launch(proc);
            let time_ns = self.now_ns.saturating_sub(self.start_ns.unwrap_or(0));
            if let Some(timeline) = &mut self.timeline {
                timeline.mark(time_ns, timeline::MarkKind::Launch, proc);
                let app = self.trace.trace.tables.processes[proc as usize]
                    .name
                    .clone();
                self.sample(SampleEvent::Launch, app, Some(kind));
            }
            self.launches.begin(proc, self.now_ns, kind);
        } else if oom_score_adj != ADJ_FOREGROUND {
            self.launches.end_of(proc);
        }
        self.sync_launch()
    }

    fn input(&mut self, proc: ProcId) -> Result<()> {
        self.ticked()?;
        self.end_interaction()?;
        self.m.set_input(proc);
        let execution_ns = self.config.response.execution_ms * 1e6;
        self.interaction = Some((proc, execution_ns));
        if let Some(clock) = &mut self.clock {
            clock.begin_interaction(proc, self.now_ns, execution_ns)?;
        }
        Ok(())
    }

    fn exit(&mut self, proc: ProcId) -> Result<()> {
        if (proc as usize) < self.procs {
            self.ticked()?;
            self.m.end_process(proc, false);
            self.launches.end_of(proc);
            self.sync_launch()?;
        }
        Ok(())
    }

    /// ksmd's next wake-up.
    fn next_wake(&self) -> Option<u64> {
        self.dedup.as_ref().map(|d| d.next_wake_ns)
    }

    /// ksmd wakes and scans a batch of the memory's pages; the memory KSM saves (pages
    /// merged less the KSM pages they share) is sampled.
    fn wake(&mut self, at_ns: u64) -> Result<()> {
        let Some(d) = &mut self.dedup else {
            return Ok(());
        };
        d.ksmd.wake(&mut self.m, at_ns)?;
        d.next_wake_ns = at_ns + d.sleep_ns;
        if let Some(clock) = &mut self.clock {
            let cpu_ns = d.ksmd.cpu_ns(&self.m.mem);
            clock.ksmd(at_ns, cpu_ns - d.cpu_ns)?;
            d.cpu_ns = cpu_ns;
        }
        d.wakes += 1;
        let mem = &self.m.mem;
        let saved = mem.merged_pages().saturating_sub(mem.ksm_pages()) as u64;
        d.saved_sum += saved as f64;
        d.saved_peak = d.saved_peak.max(saved);
        Ok(())
    }
}

/// Run `trace` on `config`'s phone with the mechanisms of `choice`. Deterministic.
pub fn run(
    config: &PhoneConfig,
    choice: &Choice,
    trace: &PhoneTrace,
    seed: u64,
) -> Result<PhoneMetrics> {
    let pop = if choice.dedup != "off" {
        Some(population(trace, seed)?)
    } else {
        None
    };
    let mut phone = Phone::new(config, choice, trace, pop.as_ref())?;
    events::replay(&mut phone, &trace.trace.events).map_err(|e| e.in_run("phone"))?;
    phone.finish()
}

/// [`run`], recording the run's [`timeline`] as well: the same metrics, and a sample at
/// every launch and at the end.
pub fn run_with_timeline(
    config: &PhoneConfig,
    choice: &Choice,
    trace: &PhoneTrace,
    seed: u64,
) -> Result<(PhoneMetrics, Vec<Sample>)> {
    let pop = if choice.dedup != "off" {
        Some(population(trace, seed)?)
    } else {
        None
    };
    let mut phone = Phone::new(config, choice, trace, pop.as_ref())?;
    phone.record_timeline();
    events::replay(&mut phone, &trace.trace.events).map_err(|e| e.in_run("phone"))?;
    phone.finish_with_timeline()
}

/// The workload of `config` for `seed`: its trace file, or generated.
pub fn workload(config: &PhoneConfig, seed: u64) -> Result<PhoneTrace> {
    if let Some(path) = &config.trace {
        let trace = crate::trace::read_all(path, None)?;
        let pages = trace.tables.pages.len();
        let procs = trace.tables.processes.len();
        return Ok(PhoneTrace {
            trace,
            content: vec![None; pages],
            file_class: vec![None; pages],
            start_ns: vec![0; procs],
        });
    }
    let mut w = config.workload.clone();
    w.scale = config.scale;
    crate::workload::phone::generate(&w, seed)
}

#[cfg(test)]
mod tests;
