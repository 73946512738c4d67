//! The real kernel's KSM against the simulator: worker processes allocate pages of known
//! content ([`ValidateLayout`]) and opt them into KSM, ksmd runs on them with the
//! settings asked for while its counters are sampled from sysfs, and the simulator runs
//! on the same content and settings, its per-page cost scaled to ksmd's measured CPU
//! time.
//!
//! A [`KernelSession`] owns what a run changes on the machine (KSM settings through a
//! [`SettingsGuard`], written to the run's [`Journal`] before they change; the workers) and puts it back on every way out; a caller's signal
//! handler stops it through an [`Interrupt`].

use std::io::{BufRead, BufReader, Read, Write};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::ksm_sysfs::{self, Restorer, SettingsGuard, Sysfs};
use super::note;
use super::state::Journal;
use crate::core::stats::Stats;
use crate::mm::dedup::presets::{ValidateLayout, MAX_WORKER_PAGES};
use crate::mm::dedup::{
    self, KsmParams, KsmRun, MergeOrder, Population, RunSpec, Sample, ScanCosts,
};
use crate::{Error, Result};

/// The content allocated by default: 3 workers of 900 pages.
pub const DEFAULT_LAYOUT: ValidateLayout = ValidateLayout {
    workers: 3,
    duplicate: 400,
    unique: 200,
    zero: 200,
    volatile: 100,
    volatile_period_ms: 50,
};

/// The counters compared, kernel against simulator.
pub const COMPARED: [&str; 7] = [
    "pages_shared",
    "pages_sharing",
    "pages_unshared",
    "pages_volatile",
    "full_scans",
    "ksm_zero_pages",
    "general_profit",
];

/// The command that runs [`run_worker`] in a process of its own; the flags of
/// [`worker_flags`] are appended to `args`.
#[derive(Debug, Clone)]
pub struct WorkerCommand {
    pub program: PathBuf,
    pub args: Vec<String>,
}

/// `--worker N` and the layout's flags, as the worker command takes them.
pub fn worker_flags(index: u32, layout: &ValidateLayout) -> Vec<String> {
    [
        ("--worker", index.to_string()),
        ("--workers", layout.workers.to_string()),
        ("--duplicate", layout.duplicate.to_string()),
        ("--unique", layout.unique.to_string()),
        ("--zero", layout.zero.to_string()),
        ("--volatile", layout.volatile.to_string()),
        (
            "--volatile-period-ms",
            layout.volatile_period_ms.to_string(),
        ),
    ]
    .into_iter()
    .flat_map(|(flag, value)| [flag.to_string(), value])
    .collect()
}

/// A validation run: the content, ksmd's settings for both sides, and how long.
#[derive(Debug, Clone)]
pub struct ValidateOptions {
    pub layout: ValidateLayout,
    pub pages_to_scan: u32,
    pub sleep_millisecs: u32,
    /// Merge zero pages with the zero page (`use_zero_pages`) on both sides.
    pub use_zero_pages: bool,
    pub duration_ms: u64,
    pub sample_ms: u64,
    /// KSM's sysfs directory.
    pub sysfs: PathBuf,
    /// The simulator's merge order; by default the running kernel's.
    pub merge_order: Option<MergeOrder>,
    pub worker: WorkerCommand,
}

/// A worker: map anonymous memory, opt it into KSM, fill it, write "ready" to `ready`,
/// rewrite the volatile pages every period, and return when `input` ends (the parent
/// closes it) or the process is killed. `read_pages` more pages, in a mapping of their
/// own that is not mergeable, are read and never written: they map the kernel's zero
/// page (snapshots must tell them apart).
pub fn run_worker(
    index: u32,
    layout: ValidateLayout,
    read_pages: usize,
    mut input: impl Read + Send + 'static,
    ready: &mut dyn Write,
) -> Result<()> {
    layout.validate()?;
    if read_pages as u64 > MAX_WORKER_PAGES {
        return Err(Error::config(
            "--read-pages",
            format!("at most {MAX_WORKER_PAGES}"),
        ));
    }
    let mapping = |pages: usize| {
        memmap2::MmapMut::map_anon(pages * PAGE)
            .map_err(|e| Error::host(format!("mapping anonymous memory: {e}")))
    };
    let pages = layout.pages_per_worker();
    let mut map = mapping(pages)?;
    // Whole 4 KiB pages only: KSM works on them; THP would change the picture.
    let _ = map.advise(memmap2::Advice::NoHugePage);
    map.advise(memmap2::Advice::Mergeable)
        .map_err(|e| Error::host(format!("madvise(MADV_MERGEABLE): {e}")))?;
    for i in 0..pages {
        layout.fill(&mut map[i * PAGE..(i + 1) * PAGE], index, i, 0);
    }
    let untouched = if read_pages > 0 {
        let m = mapping(read_pages)?;
        let _ = m.advise(memmap2::Advice::NoHugePage);
        // One byte of each page, folded and kept, so the reads happen.
        let folded = (0..read_pages).fold(0u8, |a, i| a ^ m[i * PAGE]);
        std::hint::black_box(folded);
        Some(m)
    } else {
        None
    };
    let stop = Arc::new(AtomicBool::new(false));
    {
        let stop = stop.clone();
        std::thread::spawn(move || {
            let mut sink = Vec::new();
            let _ = input.read_to_end(&mut sink);
            stop.store(true, Ordering::SeqCst);
        });
    }
    writeln!(ready, "ready")
        .and_then(|()| ready.flush())
        .map_err(|e| Error::host(format!("saying ready: {e}")))?;
    let start = Instant::now();
    let period = Duration::from_millis(layout.volatile_period_ms);
    let first_volatile = pages - layout.volatile as usize;
    let mut generation = 0u64;
    while !stop.load(Ordering::SeqCst) {
        generation += 1;
        let due = period.saturating_mul(generation.min(u32::MAX as u64) as u32);
        if let Some(wait) = due.checked_sub(start.elapsed()) {
            std::thread::sleep(wait);
        }
        for i in first_volatile..pages {
            layout.fill(&mut map[i * PAGE..(i + 1) * PAGE], index, i, generation);
        }
    }
    drop(untouched);
    Ok(())
}

const PAGE: usize = dedup::pages::PAGE_BYTES;

/// Everything known before the kernel is touched: the checked options, the settings
/// both sides run with, and the simulator's population.
#[derive(Debug)]
pub struct Plan {
    pub options: ValidateOptions,
    pub params: KsmParams,
    pub spec: RunSpec,
    /// CONFIG_HZ, when /proc/config.gz tells it (1000 assumed otherwise).
    pub kernel_hz: Option<u32>,
    /// The running kernel's (major, minor).
    pub kernel_version: Option<(u32, u32)>,
    pub population: Population,
}

impl Plan {
    /// Check everything that can be checked without changing the machine.
    pub fn new(options: ValidateOptions) -> Result<Plan> {
        let layout = options.layout;
        layout.validate()?;
        let spec = RunSpec {
            duration_ms: options.duration_ms,
            sample_ms: options.sample_ms,
            ksm_on: true,
        };
        spec.validate()?;
        let fs = Sysfs::new(&options.sysfs);
        if let Some(reason) = fs.unusable_reason() {
            return Err(Error::host(format!(
                "KSM is not available here, nothing was validated: {reason}"
            )));
        }
        if options.use_zero_pages && !fs.exists("use_zero_pages") {
            return Err(Error::host(
                "this kernel has no use_zero_pages; nothing was changed",
            ));
        }
        let max_page_sharing = match fs.read_i64("max_page_sharing") {
            Ok(v) => u32::try_from(v).map_err(|_| {
                Error::host(format!("max_page_sharing reads {v}, not a page count"))
            })?,
            Err(_) => KsmParams::default().max_page_sharing,
        };
        let kernel_hz = ksm_sysfs::kernel_hz();
        let kernel_version = ksm_sysfs::kernel_version();
        let merge_order = options
            .merge_order
            .unwrap_or_else(|| kernel_version.map_or(MergeOrder::default(), MergeOrder::of_kernel));
        let params = KsmParams {
            pages_to_scan: options.pages_to_scan,
            sleep_millisecs: options.sleep_millisecs,
            max_page_sharing,
            use_zero_pages: options.use_zero_pages,
            hz: kernel_hz.unwrap_or(1000),
            merge_order,
            ..KsmParams::default()
        };
        params.validate()?;
        Ok(Plan {
            population: layout.population()?,
            options,
            params,
            spec,
            kernel_hz,
            kernel_version,
        })
    }

    /// The KSM directory.
    pub fn sysfs(&self) -> Sysfs {
        Sysfs::new(&self.options.sysfs)
    }

    /// The simulator on the same content and settings as the kernel's samples `real`,
    /// with its per-page cost scaled to the cost ksmd was measured at.
    pub fn compare(&self, real: Vec<RealSample>, settings_restored: bool) -> Result<Validation> {
        let last = real
            .last()
            .ok_or_else(|| Error::host("no sample of the kernel's counters"))?;
        let measured_ns_per_page = last.ksmd_cpu_ms * 1e6 / last.get("pages_scanned");
        let mut costs = ScanCosts::default();
        let first = dedup::simulate(&self.population, &self.params, &costs, self.spec)?;
        let sim_ns_per_page =
            first.last().counters.cpu_ns / first.last().counters.pages_scanned.max(1) as f64;
        if measured_ns_per_page.is_finite() && measured_ns_per_page > 0.0 && sim_ns_per_page > 0.0 {
            let f = measured_ns_per_page / sim_ns_per_page;
            costs.visit_ns *= f;
            costs.checksum_ns *= f;
            costs.compare_ns *= f;
            costs.merge_ns *= f;
            costs.skip_ns *= f;
        }
        let sim = dedup::simulate(&self.population, &self.params, &costs, self.spec)?;
        Ok(Validation {
            real,
            sim,
            measured_ns_per_page,
            settings_restored,
        })
    }
}

/// Counters read from the kernel at one time, less their values before the workers
/// started (all but pages_to_scan).
#[derive(Debug, Clone)]
pub struct RealSample {
    pub time_ms: u64,
    pub counters: Vec<(&'static str, f64)>,
    pub ksmd_cpu_ms: f64,
}

impl RealSample {
    /// Counter `name`; NaN if this kernel lacks it.
    pub fn get(&self, name: &str) -> f64 {
        self.counters
            .iter()
            .find(|(m, _)| *m == name)
            .map_or(f64::NAN, |(_, v)| *v)
    }
}

/// Counter `name` (one of [`COMPARED`]) of a simulator sample; NaN for another name.
pub fn simulated(s: &Sample, name: &str) -> f64 {
    s.value(name).unwrap_or(f64::NAN)
}

/// The kernel's samples and the simulator's run side by side.
#[derive(Debug)]
pub struct Validation {
    pub real: Vec<RealSample>,
    pub sim: KsmRun,
    /// ksmd's CPU time per scanned page, ns (NaN when unknown).
    pub measured_ns_per_page: f64,
    pub settings_restored: bool,
}

impl Validation {
    /// The kernel's last sample.
    pub fn last(&self) -> &RealSample {
        self.real.last().expect("compare refuses an empty run")
    }

    /// Sample pairs (kernel, simulator) at the same times.
    pub fn pairs(&self) -> impl Iterator<Item = (&RealSample, &Sample)> {
        self.real.iter().zip(&self.sim.samples)
    }

    /// When pages_sharing (relative to before the run) first reached 95% of its final
    /// value, ms: (kernel, simulator); None if it stays at 0.
    pub fn converge_ms(&self) -> (Option<u64>, Option<u64>) {
        let converge = |values: &[(u64, f64)]| -> Option<u64> {
            let fin = values.last()?.1;
            (fin > 0.0).then(|| values.iter().find(|v| v.1 >= 0.95 * fin).map(|v| v.0))?
        };
        let real: Vec<(u64, f64)> = self
            .real
            .iter()
            .map(|s| (s.time_ms, s.get("pages_sharing")))
            .collect();
        let sim: Vec<(u64, f64)> = self
            .sim
            .samples
            .iter()
            .map(|s| (s.time_ms, simulated(s, "pages_sharing")))
            .collect();
        (converge(&real), converge(&sim))
    }
}

/// The worker processes, shared with the signal handler.
#[derive(Clone, Default)]
struct Workers(Arc<Mutex<Vec<Child>>>);

impl Workers {
    fn push(&self, child: Child) {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).push(child);
    }

    fn pids(&self) -> Vec<u32> {
        let children = self.0.lock().unwrap_or_else(|e| e.into_inner());
        children.iter().map(Child::id).collect()
    }

    /// Kill and reap every worker.
    fn kill_all(&self) {
        let mut children = self.0.lock().unwrap_or_else(|e| e.into_inner());
        for child in children.iter_mut() {
            let _ = child.kill();
            let _ = child.wait();
        }
        children.clear();
    }
}

/// The counters of KSM's metadata: rmap items are the sum of these four.
const PAGE_COUNTERS: [&str; 4] = [
    "pages_shared",
    "pages_sharing",
    "pages_unshared",
    "pages_volatile",
];

fn rmap_items(fs: &Sysfs) -> f64 {
    PAGE_COUNTERS
        .iter()
        .map(|n| fs.read_i64(n).unwrap_or(0) as f64)
        .sum()
}

/// Longest wait for ksmd to free the metadata of exited workers.
const CLEANUP_LIMIT: Duration = Duration::from_secs(10);

/// What a validation run changes on the machine: KSM settings and worker processes.
/// [`KernelSession::finish`] puts everything back on every way out (a normal end, an
/// error, an interruption); drop calls it too, for a panic.
pub struct KernelSession {
    fs: Sysfs,
    guard: SettingsGuard,
    workers: Workers,
    interrupted: Arc<AtomicBool>,
    /// KSM's rmap items (the four page counters) before the workers started; `None`
    /// until then.
    baseline_items: Option<f64>,
}

/// What a signal handler holds to stop a [`KernelSession`]. A first signal should
/// [`Interrupt::mark`] the run and [`Interrupt::stop_workers`], so that the main thread
/// cleans up as on a normal end; a second one [`Interrupt::restore_now`].
#[derive(Clone)]
pub struct Interrupt {
    interrupted: Arc<AtomicBool>,
    workers: Workers,
    restorer: Restorer,
}

impl Interrupt {
    /// Mark the run interrupted; whether it already was (a second signal).
    pub fn mark(&self) -> bool {
        self.interrupted.swap(true, Ordering::SeqCst)
    }

    /// Kill and reap the workers.
    pub fn stop_workers(&self) {
        self.workers.kill_all();
    }

    /// Restore every KSM setting now, without waiting for ksmd; returns what could not
    /// be restored.
    pub fn restore_now(&self) -> Vec<String> {
        self.restorer.restore()
    }
}

impl KernelSession {
    /// A session writing each original setting to `journal` before changing it.
    pub fn start(fs: Sysfs, journal: &Journal) -> Self {
        KernelSession {
            guard: SettingsGuard::with_journal(fs.clone(), journal),
            fs,
            workers: Workers::default(),
            interrupted: Arc::new(AtomicBool::new(false)),
            baseline_items: None,
        }
    }

    /// A handle for a signal handler.
    pub fn interrupt(&self) -> Interrupt {
        Interrupt {
            interrupted: self.interrupted.clone(),
            workers: self.workers.clone(),
            restorer: self.guard.restorer(),
        }
    }

    pub fn interrupted(&self) -> bool {
        self.interrupted.load(Ordering::SeqCst)
    }

    /// Sleep `d` in short steps; false if interrupted meanwhile.
    fn sleep(&self, d: Duration) -> bool {
        let until = Instant::now() + d;
        while !self.interrupted() {
            let left = until.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return true;
            }
            std::thread::sleep(left.min(Duration::from_millis(20)));
        }
        false
    }

    /// Kill the workers; while ksmd runs, let it free their metadata (their rmap items
    /// and stable nodes stay until ksmd scans the exited processes away), at most
    /// [`CLEANUP_LIMIT`]; then restore every setting. Until the settings are restored
    /// only; returns what could not be restored. `notes` hears of metadata left behind.
    pub fn finish(&mut self, notes: &dyn Fn(&str)) -> Vec<String> {
        if self.guard.restored() {
            return Vec::new();
        }
        self.workers.kill_all();
        // ksmd frees the exited workers' metadata only while it runs: a run that ended
        // with ksmd stopped (time-validate's last step, an error) starts it for this.
        // No baseline: the run ended before any worker started.
        if let Some(baseline) = self.baseline_items {
            if rmap_items(&self.fs) > baseline && self.fs.read("run").is_ok_and(|r| r != "1") {
                let _ = self.guard.set("run", "1");
            }
        }
        let ksmd_runs = self.fs.read("run").is_ok_and(|r| r == "1");
        if let Some(baseline) = self.baseline_items.filter(|_| ksmd_runs) {
            let start = Instant::now();
            while rmap_items(&self.fs) > baseline && start.elapsed() < CLEANUP_LIMIT {
                std::thread::sleep(Duration::from_millis(50));
            }
            let left = rmap_items(&self.fs) - baseline;
            if left > 0.0 {
                notes(&format!(
                    "warning: ksmd had not freed the workers' KSM metadata after {} s ({left} rmap items more than before)",
                    CLEANUP_LIMIT.as_secs()
                ));
            }
        }
        self.guard.restore()
    }

    /// Set KSM up as `plan` says, start the workers, run ksmd and sample it. `notes`
    /// hears of KSM metadata other processes already hold.
    pub fn drive(&mut self, plan: &Plan, notes: &dyn Fn(&str)) -> Result<Vec<RealSample>> {
        let baseline = self.prepare(plan, notes)?;
        self.sample(plan, &baseline)
    }

    /// Set a KSM setting (its value before is restored at the end, as every other's).
    pub fn set(&self, name: &str, value: &str) -> Result<()> {
        self.guard.set(name, value)
    }

    /// The workers' process ids, in the order they started.
    pub fn worker_pids(&self) -> Vec<u32> {
        self.workers.pids()
    }

    /// With ksmd stopped, set KSM up as `plan` says (the advisor and smart scan off, the
    /// plan's scan rate) and start the workers; returns KSM's counters before them.
    /// `notes` hears of KSM metadata other processes already hold.
    pub fn prepare(
        &mut self,
        plan: &Plan,
        notes: &dyn Fn(&str),
    ) -> Result<Vec<(&'static str, f64)>> {
        let interrupted = || Error::host("interrupted");
        let options = &plan.options;
        let layout = options.layout;
        let fs = self.fs.clone();
        let guard = &self.guard;
        // Settings: ksmd stopped while we set up; the advisor and smart_scan off (the
        // simulator runs the same way), then our scan rate.
        guard.set("run", "0")?;
        if fs.exists("advisor_mode") {
            guard.set("advisor_mode", "none")?;
        }
        if fs.exists("smart_scan") {
            guard.set("smart_scan", "0")?;
        }
        if fs.exists("use_zero_pages") {
            guard.set(
                "use_zero_pages",
                if options.use_zero_pages { "1" } else { "0" },
            )?;
        }
        guard.set("pages_to_scan", &options.pages_to_scan.to_string())?;
        guard.set("sleep_millisecs", &options.sleep_millisecs.to_string())?;
        let baseline = fs.counters();
        let baseline_items = rmap_items(&fs);
        self.baseline_items = Some(baseline_items);
        if baseline_items > 0.0 {
            notes(&format!(
                "warning: KSM already holds {baseline_items} rmap items of other processes; the counters shown are relative to them"
            ));
        }
        // Start the workers one by one: they register with KSM in this order, the order
        // ksmd scans them (and the simulator's process order).
        for w in 0..layout.workers {
            let mut child = Command::new(&options.worker.program)
                .args(&options.worker.args)
                .args(worker_flags(w, &layout))
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .spawn()
                .map_err(|e| Error::host(format!("starting a worker: {e}")))?;
            let stdout = child.stdout.take().expect("piped");
            self.workers.push(child);
            let mut line = String::new();
            BufReader::new(stdout)
                .read_line(&mut line)
                .map_err(|e| Error::host(format!("reading worker {w}: {e}")))?;
            if self.interrupted() {
                return Err(interrupted());
            }
            if line.trim() != "ready" {
                return Err(Error::host(format!(
                    "worker {w} did not start (said '{}')",
                    line.trim()
                )));
            }
        }
        Ok(baseline)
    }

    /// Run ksmd for the plan's duration, sampling its counters (relative to `baseline`)
    /// and CPU time.
    fn sample(&mut self, plan: &Plan, baseline: &[(&'static str, f64)]) -> Result<Vec<RealSample>> {
        let interrupted = || Error::host("interrupted");
        let options = &plan.options;
        let fs = self.fs.clone();
        let cpu0 = ksm_sysfs::ksmd_cpu_ns();
        self.guard.set("run", "1")?;
        let start = Instant::now();
        let mut real = Vec::new();
        let mut k = 0u64;
        loop {
            let due = Duration::from_millis(k * options.sample_ms);
            if due > Duration::from_millis(options.duration_ms) {
                break;
            }
            if !self.sleep(due.saturating_sub(start.elapsed())) {
                return Err(interrupted());
            }
            let mut counters = fs.counters();
            for ((name, v), (_, before)) in counters.iter_mut().zip(baseline) {
                if *name != "pages_to_scan" {
                    *v -= before;
                }
            }
            let cpu = match (cpu0, ksm_sysfs::ksmd_cpu_ns()) {
                (Some(a), Some(b)) => b.saturating_sub(a) as f64 / 1e6,
                _ => f64::NAN,
            };
            real.push(RealSample {
                time_ms: k * options.sample_ms,
                counters,
                ksmd_cpu_ms: cpu,
            });
            k += 1;
        }
        Ok(real)
    }
}

impl Drop for KernelSession {
    fn drop(&mut self) {
        for f in self.finish(&note) {
            note(&format!("warning: could not restore KSM setting {f}"));
        }
    }
}
