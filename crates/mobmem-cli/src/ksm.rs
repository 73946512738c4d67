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

use mobmem::ksm::presets::{AndroidConfig, ValidateLayout};
use mobmem::ksm::snapshot::{self, MappingFilter, Snapshot};
use mobmem::ksm::sysfs::{self, SettingsGuard, Sysfs};
use mobmem::ksm::{self, AdvisorMode, KsmParams, KsmRun, Population, RunSpec, ScanCosts};
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
}

impl ParamArgs {
    fn params(&self) -> Result<KsmParams> {
        let mut p = match &self.config {
            Some(path) => {
                let text = std::fs::read_to_string(path).map_err(|e| mobmem::Error::io(path, e))?;
                toml::from_str::<KsmParams>(&text)
                    .map_err(|e| mobmem::Error::config(path.display().to_string(), e.to_string()))?
            }
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
    if !(s.is_finite() && s > 0.0) {
        bail!("--duration-s must be > 0");
    }
    Ok((s * 1000.0).round() as u64)
}

const CSV_HEADER: &str = "time_s,pages_shared,pages_sharing,pages_unshared,pages_volatile,ksm_zero_pages,full_scans,pages_scanned,pages_skipped,general_profit,pages_to_scan,pages,frames,saved_pages,metadata_bytes,ksmd_cpu_ms,cpu_share";

fn csv_line(s: &ksm::Sample) -> String {
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
        Some(path) => Snapshot::read(path)?.population()?,
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
    let run = ksm::simulate(&pop, &params, &ScanCosts::default(), spec)?;
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
    let pop = snap.population()?;
    let total = pop.potential(0);
    if args.json {
        let processes: Vec<serde_json::Value> = pop
            .processes
            .iter()
            .zip(&snap.processes)
            .map(|(_, p)| {
                serde_json::json!({"pid": p.pid, "name": p.name, "regions": p.regions.len(),
                    "pages": p.regions.iter().map(|r| r.pages).sum::<u64>()})
            })
            .collect();
        println!(
            "{}",
            serde_json::to_string_pretty(&serde_json::json!({
                "file": written.as_ref().or(args.info.as_ref()).map(|p| p.display().to_string()),
                "processes": processes,
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
    #[arg(long, default_value = sysfs::KSM_DIR)]
    sysfs: PathBuf,
    /// Print the result as JSON.
    #[arg(long, conflicts_with = "csv")]
    json: bool,
    /// Print both curves as CSV.
    #[arg(long)]
    csv: bool,
    /// Internal: run as worker N (allocate, fill, report ready, wait).
    #[arg(long, hide = true)]
    worker: Option<u32>,
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
fn worker(index: u32, layout: ValidateLayout) -> Result<()> {
    let pages = layout.pages_per_worker();
    let mut map = memmap2::MmapMut::map_anon(pages * ksm::pages::PAGE_BYTES)
        .context("mapping anonymous memory")?;
    // Whole 4 KiB pages only: KSM works on them; THP would change the picture.
    let _ = map.advise(memmap2::Advice::NoHugePage);
    map.advise(memmap2::Advice::Mergeable)
        .context("madvise(MADV_MERGEABLE)")?;
    let page = ksm::pages::PAGE_BYTES;
    for i in 0..pages {
        layout.fill(&mut map[i * page..(i + 1) * page], index, i, 0);
    }
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
    let first_volatile = (layout.duplicate + layout.unique + layout.zero) as usize;
    let mut generation = 0u64;
    while !stop.load(Ordering::SeqCst) {
        generation += 1;
        let due = period * generation as u32;
        if let Some(wait) = due.checked_sub(start.elapsed()) {
            std::thread::sleep(wait);
        }
        for i in first_volatile..pages {
            layout.fill(&mut map[i * page..(i + 1) * page], index, i, generation);
        }
    }
    Ok(())
}

struct Workers(Arc<Mutex<Vec<Child>>>);

impl Workers {
    fn kill_all(list: &Mutex<Vec<Child>>) {
        let mut children = list.lock().unwrap_or_else(|e| e.into_inner());
        for child in children.iter_mut() {
            let _ = child.kill();
            let _ = child.wait();
        }
        children.clear();
    }
}

impl Drop for Workers {
    fn drop(&mut self) {
        Workers::kill_all(&self.0);
    }
}

/// Counters read from the kernel at one time.
struct RealSample {
    time_ms: u64,
    counters: Vec<(&'static str, f64)>,
    ksmd_cpu_ms: f64,
}

pub fn validate(args: ValidateArgs) -> Result<()> {
    let layout = args.layout();
    if let Some(index) = args.worker {
        return worker(index, layout);
    }
    if layout.workers == 0 || layout.pages_per_worker() == 0 {
        bail!("need at least one worker with at least one page");
    }
    let duration = duration_ms(args.duration_s)?;
    if args.sample_ms == 0 {
        bail!("--sample-ms must be at least 1");
    }
    let fs = Sysfs::new(&args.sysfs);
    if let Some(reason) = fs.unusable_reason() {
        bail!("KSM is not available here, nothing was validated: {reason}");
    }
    let guard = SettingsGuard::new(fs.clone());
    let workers = Workers(Arc::new(Mutex::new(Vec::new())));
    {
        let guard = guard.clone();
        let list = workers.0.clone();
        let _ = ctrlc::set_handler(move || {
            Workers::kill_all(&list);
            for f in guard.restore() {
                eprintln!("warning: could not restore KSM setting {f}");
            }
            eprintln!("interrupted: KSM settings restored");
            std::process::exit(130);
        });
    }
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
    } else if args.use_zero_pages {
        bail!("this kernel has no use_zero_pages");
    }
    guard.set("pages_to_scan", &args.pages_to_scan.to_string())?;
    guard.set("sleep_millisecs", &args.sleep_millisecs.to_string())?;
    let max_page_sharing = fs.read_i64("max_page_sharing").unwrap_or(256) as u32;
    let hz = sysfs::kernel_hz();
    let before: Vec<(&str, f64)> = fs.counters();
    let already = before
        .iter()
        .filter(|(n, _)| matches!(*n, "pages_shared" | "pages_sharing" | "pages_unshared"))
        .map(|(_, v)| *v)
        .sum::<f64>();
    if already > 0.0 {
        eprintln!("warning: KSM already holds pages of other processes; the counters include them");
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
        workers
            .0
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(child);
        let mut line = String::new();
        BufReader::new(stdout).read_line(&mut line)?;
        if line.trim() != "ready" {
            bail!("worker {w} did not start (said '{}')", line.trim());
        }
    }
    let cpu0 = sysfs::ksmd_cpu_ns();
    let base_scanned = fs.read_i64("pages_scanned").unwrap_or(0) as f64;
    let base_full = fs.read_i64("full_scans").unwrap_or(0) as f64;
    guard.set("run", "1")?;
    let start = Instant::now();
    let mut real = Vec::new();
    let mut k = 0u64;
    loop {
        let due = Duration::from_millis(k * args.sample_ms);
        if due > Duration::from_millis(duration) {
            break;
        }
        if let Some(wait) = due.checked_sub(start.elapsed()) {
            std::thread::sleep(wait);
        }
        let mut counters = fs.counters();
        for (name, v) in counters.iter_mut() {
            match *name {
                "pages_scanned" => *v -= base_scanned,
                "full_scans" => *v -= base_full,
                _ => {}
            }
        }
        let cpu = match (cpu0, sysfs::ksmd_cpu_ns()) {
            (Some(a), Some(b)) => (b - a) as f64 / 1e6,
            _ => f64::NAN,
        };
        real.push(RealSample {
            time_ms: k * args.sample_ms,
            counters,
            ksmd_cpu_ms: cpu,
        });
        k += 1;
    }
    // Stop the workers. Their exited processes keep KSM's rmap items and stable nodes
    // until ksmd scans them away, so let it run until the counters are back where they
    // were (a few seconds at most), then put every setting back.
    drop(workers);
    let leftover = |fs: &Sysfs| -> f64 {
        [
            "pages_shared",
            "pages_sharing",
            "pages_unshared",
            "pages_volatile",
        ]
        .iter()
        .map(|n| fs.read_i64(n).unwrap_or(0) as f64)
        .sum()
    };
    let before_items: f64 = before
        .iter()
        .filter(|(n, _)| {
            matches!(
                *n,
                "pages_shared" | "pages_sharing" | "pages_unshared" | "pages_volatile"
            )
        })
        .map(|(_, v)| *v)
        .sum();
    let cleanup = Instant::now();
    while leftover(&fs) > before_items && cleanup.elapsed() < Duration::from_secs(10) {
        std::thread::sleep(Duration::from_millis(50));
    }
    if leftover(&fs) > before_items {
        eprintln!("warning: ksmd had not freed the workers' KSM metadata after 10 s");
    }
    let failures = guard.restore();
    for f in &failures {
        eprintln!("warning: could not restore KSM setting {f}");
    }

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
    let params = KsmParams {
        pages_to_scan: args.pages_to_scan,
        sleep_millisecs: args.sleep_millisecs,
        max_page_sharing,
        use_zero_pages: args.use_zero_pages,
        hz: hz.unwrap_or(1000),
        ..KsmParams::default()
    };
    let pop = layout.population()?;
    let spec = RunSpec {
        duration_ms: duration,
        sample_ms: args.sample_ms,
        ksm_on: true,
    };
    let mut costs = ScanCosts::default();
    let first = ksm::simulate(&pop, &params, &costs, spec)?;
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
    let sim = ksm::simulate(&pop, &params, &costs, spec)?;

    let names = [
        "pages_shared",
        "pages_sharing",
        "pages_unshared",
        "pages_volatile",
        "full_scans",
    ];
    let sim_value = |s: &ksm::Sample, n: &str| -> f64 {
        let c = &s.counters;
        match n {
            "pages_shared" => c.pages_shared as f64,
            "pages_sharing" => c.pages_sharing as f64,
            "pages_unshared" => c.pages_unshared as f64,
            "pages_volatile" => c.pages_volatile as f64,
            "full_scans" => c.full_scans as f64,
            "ksm_zero_pages" => c.ksm_zero_pages as f64,
            _ => f64::NAN,
        }
    };
    // Convergence: first sample with pages_sharing at 95% of its final value.
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
        "measured_ksmd_ns_per_page": measured_ns_per_page,
        "final": names.iter().map(|n| (n.to_string(), serde_json::json!({
            "kernel": get(last, n), "simulator": sim_value(sim.last(), n)}))).collect::<serde_json::Map<_,_>>(),
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
            "{} workers x {} pages ({} duplicate, {} unique, {} zero, {} volatile every {} ms); pages_to_scan {}, sleep_millisecs {}, HZ {}",
            layout.workers,
            layout.pages_per_worker(),
            layout.duplicate,
            layout.unique,
            layout.zero,
            layout.volatile,
            layout.volatile_period_ms,
            params.pages_to_scan,
            params.sleep_millisecs,
            hz.map_or("unknown (1000 assumed)".to_string(), |h| h.to_string())
        );
        println!(
            "{:>7} | {:>15} | {:>15} | {:>15} | {:>15} | {:>11}",
            "time s",
            "sharing k/sim/Δ",
            "shared k/sim/Δ",
            "unshared k/sim",
            "volatile k/sim",
            "scans k/sim"
        );
        for (r, s) in real.iter().zip(&sim.samples) {
            let pair = |n: &str| (get(r, n), sim_value(s, n));
            let (a, b) = pair("pages_sharing");
            let (c, d) = pair("pages_shared");
            let (e, f) = pair("pages_unshared");
            let (g, h) = pair("pages_volatile");
            let (i, j) = pair("full_scans");
            println!(
                "{:>7.2} | {:>5}/{:>4}/{:>+5} | {:>5}/{:>4}/{:>+5} | {:>7}/{:>7} | {:>7}/{:>7} | {:>5}/{:>5}",
                r.time_ms as f64 / 1000.0,
                a, b, b - a, c, d, d - c, e, f, g, h, i, j
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
