//! `mobmem ksm`, `mobmem snapshot` and `mobmem ksm-validate`: the KSM simulator on a
//! preset or a snapshot, page fingerprints of live processes, and the simulator against
//! the real kernel's KSM.

use std::io::{BufRead, BufReader, Read, Write};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use clap::Args;

use mobmem::host::ksm_sysfs::{self, SettingsGuard, Sysfs};
use mobmem::mm::dedup::presets::{AndroidConfig, ValidateLayout};
use mobmem::mm::dedup::snapshot::{self, MappingFilter, Snapshot};
use mobmem::mm::dedup::{
    self, AdvisorMode, KsmParams, KsmRun, MergeOrder, Population, RunSpec, ScanCosts,
};
use mobmem::report::short;

/// ksmd's settings on the command line (they override --config).
#[derive(Args, Clone)]
pub struct ParamArgs {
    /// ksmd settings as TOML (fields of KsmParams: pages_to_scan, sleep_millisecs,
    /// max_page_sharing, use_zero_pages, smart_scan, advisor_mode, hz, ...; docs/ksm.md).
    #[arg(long)]
    config: Option<PathBuf>,
    /// Pages scanned per wake-up (kernel default 100).
    #[arg(long)]
    pages_to_scan: Option<u32>,
    /// Sleep between wake-ups, ms (kernel default 20).
    #[arg(long)]
    sleep_millisecs: Option<u32>,
    /// Most pages sharing one KSM page (kernel default 256).
    #[arg(long)]
    max_page_sharing: Option<u32>,
    /// Merge zero pages with the kernel's zero page.
    #[arg(long)]
    use_zero_pages: bool,
    /// Skip pages that repeatedly fail to merge (kernel 6.7+).
    #[arg(long)]
    smart_scan: bool,
    /// `none` or `scan-time` (the advisor retunes pages_to_scan after each full scan).
    #[arg(long)]
    advisor: Option<String>,
    /// The advisor's target full-scan time, s (kernel default 200).
    #[arg(long)]
    advisor_target_scan_time: Option<u64>,
    /// Timer frequency; sleeps are rounded up to whole ticks (default 1000).
    #[arg(long)]
    hz: Option<u32>,
    /// Ticks a sleep lasts beyond those asked for (default 1: kernels 4.8+; 0: older).
    #[arg(long)]
    extra_ticks: Option<u32>,
    /// cmp_and_merge_page's order: stable-tree-first (kernel 3.4 to 6.10, the default)
    /// or checksum-first (6.11+).
    #[arg(long)]
    merge_order: Option<MergeOrder>,
}

impl ParamArgs {
    fn params(&self) -> Result<KsmParams> {
        let mut p = match &self.config {
            Some(path) => crate::read_toml::<KsmParams>(path)?,
            None => KsmParams::default(),
        };
        if let Some(v) = self.pages_to_scan {
            p.pages_to_scan = v;
        }
        if let Some(v) = self.sleep_millisecs {
            p.sleep_millisecs = v;
        }
        if let Some(v) = self.max_page_sharing {
            p.max_page_sharing = v;
        }
        p.use_zero_pages |= self.use_zero_pages;
        p.smart_scan |= self.smart_scan;
        if let Some(a) = &self.advisor {
            p.advisor_mode = match a.as_str() {
                "none" => AdvisorMode::None,
                "scan-time" => AdvisorMode::ScanTime,
                _ => bail!("--advisor must be none or scan-time"),
            };
        }
        if let Some(v) = self.advisor_target_scan_time {
            p.advisor_target_scan_time = v;
        }
        if let Some(v) = self.hz {
            p.hz = v;
        }
        if let Some(v) = self.extra_ticks {
            p.extra_ticks = v;
        }
        if let Some(v) = self.merge_order {
            p.merge_order = v;
        }
        p.validate()?;
        Ok(p)
    }
}

#[derive(Args)]
pub struct KsmArgs {
    /// Workload: `android` (apps forked from Zygote: Dalvik heap, native heap, stack;
    /// docs/ksm.md) or `validate` (the content ksm-validate allocates).
    #[arg(long, default_value = "android", conflicts_with = "snapshot")]
    preset: String,
    /// Start from a snapshot file written by `mobmem snapshot` instead of a preset.
    #[arg(long)]
    snapshot: Option<PathBuf>,
    /// Seed of the android preset.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Multiply the android preset's region sizes.
    #[arg(long, default_value_t = 1.0)]
    scale: f64,
    #[command(flatten)]
    params: ParamArgs,
    /// Simulated time, s.
    #[arg(long, default_value_t = 180.0)]
    duration_s: f64,
    /// Sample interval, ms.
    #[arg(long, default_value_t = 1000)]
    sample_ms: u64,
    /// Keep KSM off (the baseline).
    #[arg(long)]
    off: bool,
    /// Print the whole run (parameters and every sample) as JSON.
    #[arg(long, conflicts_with = "csv")]
    json: bool,
    /// Print the curve as CSV, one line per sample.
    #[arg(long)]
    csv: bool,
}

fn duration_ms(s: f64) -> Result<u64> {
    let limit_s = dedup::run::MAX_DURATION_MS / 1000;
    if !(s.is_finite() && s > 0.0 && s <= limit_s as f64) {
        bail!("--duration-s must be > 0 and at most {limit_s} s, found {s}");
    }
    Ok((s * 1000.0).round().max(1.0) as u64)
}

const CSV_HEADER: &str = "time_s,pages_shared,pages_sharing,pages_unshared,pages_volatile,ksm_zero_pages,full_scans,pages_scanned,pages_skipped,general_profit,pages_to_scan,pages,frames,saved_pages,metadata_bytes,ksmd_cpu_ms,cpu_share";

fn csv_line(s: &dedup::Sample) -> String {
    let c = &s.counters;
    let m = &s.memory;
    format!(
        "{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}",
        s.time_ms as f64 / 1000.0,
        c.pages_shared,
        c.pages_sharing,
        c.pages_unshared,
        c.pages_volatile,
        c.ksm_zero_pages,
        c.full_scans,
        c.pages_scanned,
        c.pages_skipped,
        c.general_profit,
        c.pages_to_scan,
        m.pages,
        m.frames,
        m.saved,
        m.metadata_bytes,
        c.cpu_ns / 1e6,
        s.cpu_share
    )
}

fn print_summary(run: &KsmRun) {
    let s = run.last();
    let c = &s.counters;
    let m = &s.memory;
    println!(
        "after {:.1} s: pages_to_scan {}, sleep_millisecs {}",
        s.time_ms as f64 / 1000.0,
        c.pages_to_scan,
        run.params.sleep_millisecs
    );
    for (name, v) in [
        ("pages_shared", c.pages_shared as f64),
        ("pages_sharing", c.pages_sharing as f64),
        ("pages_unshared", c.pages_unshared as f64),
        ("pages_volatile", c.pages_volatile as f64),
        ("ksm_zero_pages", c.ksm_zero_pages as f64),
        ("full_scans", c.full_scans as f64),
        ("pages_scanned", c.pages_scanned as f64),
        ("pages_skipped", c.pages_skipped as f64),
        ("general_profit (bytes)", c.general_profit as f64),
        ("pages", m.pages as f64),
        ("frames", m.frames as f64),
        ("saved pages", m.saved as f64),
        ("saved MiB", m.saved as f64 * 4096.0 / (1 << 20) as f64),
        ("metadata bytes", m.metadata_bytes as f64),
        ("ksmd CPU ms", run.cpu_ms()),
        (
            "ksmd CPU share (% of a core)",
            100.0 * run.cpu_ms() / s.time_ms.max(1) as f64,
        ),
        ("wake-ups", run.wakeups as f64),
    ] {
        println!("{name:<30} {}", short(v));
    }
}

fn print_potential(pop: &Population, t_ns: u64) {
    let p = pop.potential(t_ns);
    println!(
        "{} pages: {} zero, {} duplicate, {} unique (perfect merging saves {} pages, {:.1}%)",
        p.pages,
        p.zero,
        p.duplicate,
        p.unique,
        p.saveable(),
        100.0 * p.saveable() as f64 / p.pages.max(1) as f64
    );
}

pub fn run(args: KsmArgs) -> Result<()> {
    let params = args.params.params()?;
    let pop = match &args.snapshot {
        Some(path) => Snapshot::read(path)?.population()?.0,
        None => match args.preset.as_str() {
            "android" => AndroidConfig {
                scale: args.scale,
                ..AndroidConfig::default()
            }
            .generate(args.seed)?,
            "validate" => DEFAULT_LAYOUT.population()?,
            other => bail!("unknown preset '{other}' (known: android, validate)"),
        },
    };
    let spec = RunSpec {
        duration_ms: duration_ms(args.duration_s)?,
        sample_ms: args.sample_ms,
        ksm_on: !args.off,
    };
    let run = dedup::simulate(&pop, &params, &ScanCosts::default(), spec)?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&run)?);
    } else if args.csv {
        println!("{CSV_HEADER}");
        for s in &run.samples {
            println!("{}", csv_line(s));
        }
    } else {
        print_potential(&pop, spec.duration_ms * 1_000_000);
        print_summary(&run);
    }
    Ok(())
}

#[derive(Args)]
pub struct SnapshotArgs {
    /// Processes to capture (needs root, or ptrace rights over them).
    #[arg(long = "pid", required_unless_present = "info", num_args = 1..)]
    pids: Vec<u32>,
    /// Which mappings: anon (private anonymous, incl. [heap], [stack], [anon:...]),
    /// heap ([heap] and named heaps such as Android's [anon:dalvik-*]), stack, all.
    #[arg(long, default_value = "anon")]
    mappings: MappingFilter,
    /// Snapshot file to write (.ksnap).
    #[arg(long, required_unless_present = "info")]
    out: Option<PathBuf>,
    /// Read a snapshot file and report its dedup potential instead of capturing.
    #[arg(long, conflicts_with_all = ["pids", "out"])]
    info: Option<PathBuf>,
    /// Print the report as JSON.
    #[arg(long)]
    json: bool,
}

pub fn snapshot(args: SnapshotArgs) -> Result<()> {
    let (snap, written) = match &args.info {
        Some(path) => (Snapshot::read(path)?, None),
        None => {
            let snap = snapshot::capture(&args.pids, args.mappings)?;
            let out = args.out.clone().expect("clap requires --out");
            snap.write(&out)?;
            (snap, Some(out))
        }
    };
    let (pop, frames) = snap.population()?;
    let total = pop.potential(0);
    if args.json {
        let processes: Vec<serde_json::Value> = snap
            .processes
            .iter()
            .map(|p| {
                serde_json::json!({"pid": p.pid, "name": p.name, "regions": p.regions.len(),
                    "pages": p.regions.iter().map(|r| r.pages).sum::<u64>()})
            })
            .collect();
        println!(
            "{}",
            serde_json::to_string_pretty(&serde_json::json!({
                "file": written.as_ref().or(args.info.as_ref()).map(|p| p.display().to_string()),
                "processes": processes,
                "present_pages": frames.pages,
                "frames_known": frames.frames_known,
                "zero_page_mappings": frames.zero_page,
                "shared_frame_mappings": frames.shared_frame,
                "not_exclusive_frames": frames.not_exclusive,
                "upper_bound": !frames.frames_known,
                "pages": total.pages, "zero": total.zero, "duplicate": total.duplicate,
                "unique": total.unique, "saveable": total.saveable(),
            }))?
        );
    } else {
        for p in &snap.processes {
            println!(
                "pid {:<8} {:<16} {} regions, {} pages",
                p.pid,
                p.name,
                p.regions.len(),
                p.regions.iter().map(|r| r.pages).sum::<u64>()
            );
        }
        if frames.frames_known {
            println!(
                "{} present pages: {} map the kernel's zero page and {} a frame another page here maps too (left out); {} distinct frames, {} of them also mapped elsewhere",
                frames.pages, frames.zero_page, frames.shared_frame, frames.frames, frames.not_exclusive
            );
        } else {
            println!(
                "{} present pages; frame numbers unknown (pagemap shows them to root only): zero-page mappings and frames shared after fork are counted, so the potential below is an upper bound",
                frames.pages
            );
        }
        print_potential(&pop, 0);
        if let Some(out) = written {
            eprintln!("wrote {}", out.display());
        }
    }
    Ok(())
}

/// The content ksm-validate allocates by default: 3 workers of 900 pages.
pub const DEFAULT_LAYOUT: ValidateLayout = ValidateLayout {
    workers: 3,
    duplicate: 400,
    unique: 200,
    zero: 200,
    volatile: 100,
    volatile_period_ms: 50,
};

#[derive(Args)]
pub struct ValidateArgs {
    /// Worker processes.
    #[arg(long, default_value_t = DEFAULT_LAYOUT.workers)]
    workers: u32,
    /// Pages per worker with content every worker has.
    #[arg(long, default_value_t = DEFAULT_LAYOUT.duplicate)]
    duplicate: u32,
    /// Pages per worker with content no other page has.
    #[arg(long, default_value_t = DEFAULT_LAYOUT.unique)]
    unique: u32,
    /// Pages per worker of zeros.
    #[arg(long, default_value_t = DEFAULT_LAYOUT.zero)]
    zero: u32,
    /// Pages per worker rewritten every --volatile-period-ms.
    #[arg(long, default_value_t = DEFAULT_LAYOUT.volatile)]
    volatile: u32,
    #[arg(long, default_value_t = DEFAULT_LAYOUT.volatile_period_ms)]
    volatile_period_ms: u64,
    /// pages_to_scan for both the kernel and the simulator.
    #[arg(long, default_value_t = 100)]
    pages_to_scan: u32,
    /// sleep_millisecs for both.
    #[arg(long, default_value_t = 10)]
    sleep_millisecs: u32,
    /// Merge zero pages with the zero page (use_zero_pages) in both.
    #[arg(long)]
    use_zero_pages: bool,
    /// How long KSM runs, s.
    #[arg(long, default_value_t = 6.0)]
    duration_s: f64,
    /// Sample interval, ms.
    #[arg(long, default_value_t = 100)]
    sample_ms: u64,
    /// KSM's sysfs directory.
    #[arg(long, default_value = ksm_sysfs::KSM_DIR)]
    sysfs: PathBuf,
    /// Print the result as JSON.
    #[arg(long, conflicts_with = "csv")]
    json: bool,
    /// Print both curves as CSV.
    #[arg(long)]
    csv: bool,
    /// cmp_and_merge_page's order for the simulator: stable-tree-first (kernels up to
    /// 6.10) or checksum-first (6.11+); by default the running kernel's.
    #[arg(long)]
    merge_order: Option<MergeOrder>,
    /// Internal: run as worker N (allocate, fill, report ready, wait).
    #[arg(long, hide = true)]
    worker: Option<u32>,
    /// Internal, for a worker: this many more pages read and never written.
    #[arg(long, hide = true, default_value_t = 0)]
    read_pages: usize,
}

impl ValidateArgs {
    fn layout(&self) -> ValidateLayout {
        ValidateLayout {
            workers: self.workers,
            duplicate: self.duplicate,
            unique: self.unique,
            zero: self.zero,
            volatile: self.volatile,
            volatile_period_ms: self.volatile_period_ms.max(1),
        }
    }
}

/// A worker: map anonymous memory, opt it into KSM, fill it, say "ready", rewrite the
/// volatile pages every period, and exit when the parent closes stdin or kills it.
/// `read_pages` more pages, in a mapping of their own that is not mergeable, are read
/// and never written: they map the kernel's zero page (snapshots must tell them apart).
fn worker(index: u32, layout: ValidateLayout, read_pages: usize) -> Result<()> {
    layout.validate()?;
    if read_pages as u64 > dedup::presets::MAX_WORKER_PAGES {
        bail!("--read-pages: at most {}", dedup::presets::MAX_WORKER_PAGES);
    }
    let pages = layout.pages_per_worker();
    let page = dedup::pages::PAGE_BYTES;
    let mut map = memmap2::MmapMut::map_anon(pages * page).context("mapping anonymous memory")?;
    // Whole 4 KiB pages only: KSM works on them; THP would change the picture.
    let _ = map.advise(memmap2::Advice::NoHugePage);
    map.advise(memmap2::Advice::Mergeable)
        .context("madvise(MADV_MERGEABLE)")?;
    for i in 0..pages {
        layout.fill(&mut map[i * page..(i + 1) * page], index, i, 0);
    }
    let untouched = if read_pages > 0 {
        let m =
            memmap2::MmapMut::map_anon(read_pages * page).context("mapping anonymous memory")?;
        let _ = m.advise(memmap2::Advice::NoHugePage);
        // One byte of each page, folded and kept, so the reads happen.
        let folded = (0..read_pages).fold(0u8, |a, i| a ^ m[i * page]);
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
            let _ = std::io::stdin().read_to_end(&mut sink);
            stop.store(true, Ordering::SeqCst);
        });
    }
    println!("ready");
    std::io::stdout().flush()?;
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
            layout.fill(&mut map[i * page..(i + 1) * page], index, i, generation);
        }
    }
    drop(untouched);
    Ok(())
}

/// The worker processes, shared with the signal handler.
#[derive(Clone, Default)]
struct Workers(Arc<Mutex<Vec<Child>>>);

impl Workers {
    fn push(&self, child: Child) {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).push(child);
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
/// error, a signal); drop calls it too, for a panic. A first SIGINT, SIGTERM or SIGHUP
/// only kills the workers and marks the run interrupted, so that the main thread
/// cleans up as on a normal end; a second one restores the settings at once and exits.
struct KernelSession {
    fs: Sysfs,
    guard: SettingsGuard,
    workers: Workers,
    interrupted: Arc<AtomicBool>,
    /// KSM's rmap items (the four page counters) before the workers started; `None`
    /// until then.
    baseline_items: Option<f64>,
}

impl KernelSession {
    fn start(fs: Sysfs) -> Result<Self> {
        let session = KernelSession {
            guard: SettingsGuard::new(fs.clone()),
            fs,
            workers: Workers::default(),
            interrupted: Arc::new(AtomicBool::new(false)),
            baseline_items: None,
        };
        let interrupted = session.interrupted.clone();
        let workers = session.workers.clone();
        let restorer = session.guard.restorer();
        ctrlc::set_handler(move || {
            if interrupted.swap(true, Ordering::SeqCst) {
                for f in restorer.restore() {
                    eprintln!("warning: could not restore KSM setting {f}");
                }
                eprintln!("interrupted again: KSM settings restored without waiting for ksmd");
                std::process::exit(130);
            }
            eprintln!("interrupted: stopping the workers; KSM settings will be restored");
            workers.kill_all();
        })
        .context("installing the signal handler")?;
        Ok(session)
    }

    fn interrupted(&self) -> bool {
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
    /// only; returns what could not be restored.
    fn finish(&mut self) -> Vec<String> {
        if self.guard.restored() {
            return Vec::new();
        }
        self.workers.kill_all();
        let ksmd_runs = self.fs.read("run").is_ok_and(|r| r == "1");
        // No baseline: the run ended before any worker started.
        if let Some(baseline) = self.baseline_items.filter(|_| ksmd_runs) {
            let start = Instant::now();
            while rmap_items(&self.fs) > baseline && start.elapsed() < CLEANUP_LIMIT {
                std::thread::sleep(Duration::from_millis(50));
            }
            let left = rmap_items(&self.fs) - baseline;
            if left > 0.0 {
                eprintln!(
                    "warning: ksmd had not freed the workers' KSM metadata after {} s ({left} rmap items more than before)",
                    CLEANUP_LIMIT.as_secs()
                );
            }
        }
        self.guard.restore()
    }
}

impl Drop for KernelSession {
    fn drop(&mut self) {
        for f in self.finish() {
            eprintln!("warning: could not restore KSM setting {f}");
        }
    }
}

/// Counters read from the kernel at one time, less their values before the workers
/// started (all but pages_to_scan).
struct RealSample {
    time_ms: u64,
    counters: Vec<(&'static str, f64)>,
    ksmd_cpu_ms: f64,
}

/// Set KSM up, start the workers, run ksmd and sample it.
fn drive_kernel(
    session: &mut KernelSession,
    args: &ValidateArgs,
    layout: ValidateLayout,
    duration_ms: u64,
) -> Result<Vec<RealSample>> {
    let interrupted = || anyhow::anyhow!("interrupted");
    let fs = session.fs.clone();
    let guard = &session.guard;
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
            if args.use_zero_pages { "1" } else { "0" },
        )?;
    }
    guard.set("pages_to_scan", &args.pages_to_scan.to_string())?;
    guard.set("sleep_millisecs", &args.sleep_millisecs.to_string())?;
    let baseline = fs.counters();
    let baseline_items = rmap_items(&fs);
    session.baseline_items = Some(baseline_items);
    if baseline_items > 0.0 {
        eprintln!(
            "warning: KSM already holds {baseline_items} rmap items of other processes; the counters shown are relative to them"
        );
    }
    // Start the workers one by one: they register with KSM in this order, the order
    // ksmd scans them (and the simulator's process order).
    let exe = std::env::current_exe().context("finding the mobmem binary")?;
    for w in 0..layout.workers {
        let mut child = Command::new(&exe)
            .args([
                "ksm-validate",
                "--worker",
                &w.to_string(),
                "--workers",
                &layout.workers.to_string(),
                "--duplicate",
                &layout.duplicate.to_string(),
                "--unique",
                &layout.unique.to_string(),
                "--zero",
                &layout.zero.to_string(),
                "--volatile",
                &layout.volatile.to_string(),
                "--volatile-period-ms",
                &layout.volatile_period_ms.to_string(),
            ])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .context("starting a worker")?;
        let stdout = child.stdout.take().expect("piped");
        session.workers.push(child);
        let mut line = String::new();
        BufReader::new(stdout).read_line(&mut line)?;
        if session.interrupted() {
            return Err(interrupted());
        }
        if line.trim() != "ready" {
            bail!("worker {w} did not start (said '{}')", line.trim());
        }
    }
    let cpu0 = ksm_sysfs::ksmd_cpu_ns();
    session.guard.set("run", "1")?;
    let start = Instant::now();
    let mut real = Vec::new();
    let mut k = 0u64;
    loop {
        let due = Duration::from_millis(k * args.sample_ms);
        if due > Duration::from_millis(duration_ms) {
            break;
        }
        if !session.sleep(due.saturating_sub(start.elapsed())) {
            return Err(interrupted());
        }
        let mut counters = fs.counters();
        for ((name, v), (_, before)) in counters.iter_mut().zip(&baseline) {
            if *name != "pages_to_scan" {
                *v -= before;
            }
        }
        let cpu = match (cpu0, ksm_sysfs::ksmd_cpu_ns()) {
            (Some(a), Some(b)) => b.saturating_sub(a) as f64 / 1e6,
            _ => f64::NAN,
        };
        real.push(RealSample {
            time_ms: k * args.sample_ms,
            counters,
            ksmd_cpu_ms: cpu,
        });
        k += 1;
    }
    Ok(real)
}

pub fn validate(args: ValidateArgs) -> Result<()> {
    let layout = args.layout();
    if let Some(index) = args.worker {
        return worker(index, layout, args.read_pages);
    }
    // Everything that can be checked is checked before the kernel is touched.
    layout.validate()?;
    let duration = duration_ms(args.duration_s)?;
    let spec = RunSpec {
        duration_ms: duration,
        sample_ms: args.sample_ms,
        ksm_on: true,
    };
    spec.validate()?;
    let fs = Sysfs::new(&args.sysfs);
    if let Some(reason) = fs.unusable_reason() {
        bail!("KSM is not available here, nothing was validated: {reason}");
    }
    if args.use_zero_pages && !fs.exists("use_zero_pages") {
        bail!("this kernel has no use_zero_pages; nothing was changed");
    }
    let max_page_sharing = match fs.read_i64("max_page_sharing") {
        Ok(v) => u32::try_from(v)
            .map_err(|_| anyhow::anyhow!("max_page_sharing reads {v}, not a page count"))?,
        Err(_) => KsmParams::default().max_page_sharing,
    };
    let hz = ksm_sysfs::kernel_hz();
    let kernel = ksm_sysfs::kernel_version();
    let merge_order = args
        .merge_order
        .unwrap_or_else(|| kernel.map_or(MergeOrder::default(), MergeOrder::of_kernel));
    let params = KsmParams {
        pages_to_scan: args.pages_to_scan,
        sleep_millisecs: args.sleep_millisecs,
        max_page_sharing,
        use_zero_pages: args.use_zero_pages,
        hz: hz.unwrap_or(1000),
        merge_order,
        ..KsmParams::default()
    };
    params.validate()?;
    let pop = layout.population()?;

    let mut session = KernelSession::start(fs)?;
    let outcome = drive_kernel(&mut session, &args, layout, duration);
    let failures = session.finish();
    for f in &failures {
        eprintln!("warning: could not restore KSM setting {f}");
    }
    if session.interrupted() {
        eprintln!(
            "interrupted: workers stopped, KSM settings {}",
            if failures.is_empty() {
                "restored"
            } else {
                "NOT all restored"
            }
        );
        std::process::exit(130);
    }
    let real = outcome?;

    // The simulator on the same content and settings, with the per-page cost measured.
    let last = real.last().expect("at least one sample");
    let get = |s: &RealSample, n: &str| {
        s.counters
            .iter()
            .find(|(m, _)| *m == n)
            .map_or(f64::NAN, |(_, v)| *v)
    };
    let scanned = get(last, "pages_scanned");
    let measured_ns_per_page = last.ksmd_cpu_ms * 1e6 / scanned;
    let mut costs = ScanCosts::default();
    let first = dedup::simulate(&pop, &params, &costs, spec)?;
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
    let sim = dedup::simulate(&pop, &params, &costs, spec)?;

    let names = [
        "pages_shared",
        "pages_sharing",
        "pages_unshared",
        "pages_volatile",
        "full_scans",
        "ksm_zero_pages",
        "general_profit",
    ];
    let sim_value = |s: &dedup::Sample, n: &str| -> f64 {
        let c = &s.counters;
        match n {
            "pages_shared" => c.pages_shared as f64,
            "pages_sharing" => c.pages_sharing as f64,
            "pages_unshared" => c.pages_unshared as f64,
            "pages_volatile" => c.pages_volatile as f64,
            "full_scans" => c.full_scans as f64,
            "ksm_zero_pages" => c.ksm_zero_pages as f64,
            "general_profit" => c.general_profit as f64,
            _ => f64::NAN,
        }
    };
    // Convergence: first sample with pages_sharing (relative to before the run) at 95%
    // of its final value.
    let converge = |values: &[(u64, f64)]| -> Option<u64> {
        let fin = values.last()?.1;
        (fin > 0.0).then(|| values.iter().find(|v| v.1 >= 0.95 * fin).map(|v| v.0))?
    };
    let real_sharing: Vec<(u64, f64)> = real
        .iter()
        .map(|s| (s.time_ms, get(s, "pages_sharing")))
        .collect();
    let sim_sharing: Vec<(u64, f64)> = sim
        .samples
        .iter()
        .map(|s| (s.time_ms, sim_value(s, "pages_sharing")))
        .collect();
    let summary = serde_json::json!({
        "layout": layout,
        "params": params,
        "kernel_hz": hz,
        "kernel_version": kernel.map(|(a, b)| format!("{a}.{b}")),
        "measured_ksmd_ns_per_page": crate::json_number(measured_ns_per_page),
        "final": names.iter().map(|n| (n.to_string(), serde_json::json!({
            "kernel": crate::json_number(get(last, n)),
            "simulator": sim_value(sim.last(), n)}))).collect::<serde_json::Map<_,_>>(),
        "converge_ms": {"kernel": converge(&real_sharing), "simulator": converge(&sim_sharing)},
        "settings_restored": failures.is_empty(),
    });
    if args.json {
        let samples: Vec<serde_json::Value> = real
            .iter()
            .zip(&sim.samples)
            .map(|(r, s)| {
                let mut o = serde_json::Map::new();
                o.insert("time_ms".into(), r.time_ms.into());
                for n in names {
                    o.insert(format!("kernel_{n}"), crate::json_number(get(r, n)));
                    o.insert(format!("sim_{n}"), crate::json_number(sim_value(s, n)));
                }
                o.into()
            })
            .collect();
        let mut out = summary.clone();
        out["samples"] = samples.into();
        println!("{}", serde_json::to_string_pretty(&out)?);
    } else if args.csv {
        let mut header = vec!["time_s".to_string()];
        for n in names {
            header.push(format!("kernel_{n}"));
            header.push(format!("sim_{n}"));
        }
        println!("{}", header.join(","));
        for (r, s) in real.iter().zip(&sim.samples) {
            let mut line = vec![format!("{}", r.time_ms as f64 / 1000.0)];
            for n in names {
                line.push(format!("{}", get(r, n)));
                line.push(format!("{}", sim_value(s, n)));
            }
            println!("{}", line.join(","));
        }
    } else {
        println!(
            "{} workers x {} pages ({} duplicate, {} unique, {} zero, {} volatile every {} ms); pages_to_scan {}, sleep_millisecs {}, HZ {}, kernel {}, merge order {}",
            layout.workers,
            layout.pages_per_worker(),
            layout.duplicate,
            layout.unique,
            layout.zero,
            layout.volatile,
            layout.volatile_period_ms,
            params.pages_to_scan,
            params.sleep_millisecs,
            hz.map_or("unknown (1000 assumed)".to_string(), |h| h.to_string()),
            kernel.map_or("unknown".to_string(), |(a, b)| format!("{a}.{b}")),
            params.merge_order.name(),
        );
        println!("kernel counters are relative to their values before the workers started; k = kernel, sim = simulator, Δ = sim - k");
        println!(
            "{:>7} | {:>15} | {:>15} | {:>15} | {:>15} | {:>11} | {:>11} | {:>13}",
            "time s",
            "sharing k/sim/Δ",
            "shared k/sim/Δ",
            "unshared k/sim",
            "volatile k/sim",
            "scans k/sim",
            "zero k/sim",
            "profit KiB k/sim"
        );
        for (r, s) in real.iter().zip(&sim.samples) {
            let pair = |n: &str| (get(r, n), sim_value(s, n));
            let (a, b) = pair("pages_sharing");
            let (c, d) = pair("pages_shared");
            let (e, f) = pair("pages_unshared");
            let (g, h) = pair("pages_volatile");
            let (i, j) = pair("full_scans");
            let (z, zs) = pair("ksm_zero_pages");
            let (p, ps) = pair("general_profit");
            println!(
                "{:>7.2} | {:>5}/{:>4}/{:>+5} | {:>5}/{:>4}/{:>+5} | {:>7}/{:>7} | {:>7}/{:>7} | {:>5}/{:>5} | {:>5}/{:>5} | {:>6}/{:>6}",
                r.time_ms as f64 / 1000.0,
                a, b, b - a, c, d, d - c, e, f, g, h, i, j,
                short(z), zs,
                short((p / 1024.0).round()), (ps / 1024.0).round()
            );
        }
        println!(
            "final pages_sharing: kernel {}, simulator {}; 95% of it reached at: kernel {}, simulator {}",
            get(last, "pages_sharing"),
            sim_value(sim.last(), "pages_sharing"),
            converge(&real_sharing).map_or("never".into(), |t| format!("{:.2} s", t as f64 / 1000.0)),
            converge(&sim_sharing).map_or("never".into(), |t| format!("{:.2} s", t as f64 / 1000.0)),
        );
        println!(
            "ksmd CPU per scanned page (measured): {:.0} ns; KSM settings {}",
            measured_ns_per_page,
            if failures.is_empty() {
                "restored"
            } else {
                "NOT all restored"
            }
        );
    }
    if !failures.is_empty() {
        bail!("some KSM settings could not be restored");
    }
    Ok(())
}
