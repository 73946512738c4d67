//! `mobmem ksm`, `mobmem snapshot` and `mobmem ksm-validate`: the KSM simulator on a
//! preset or a snapshot, page fingerprints of live processes, and the simulator against
//! the real kernel's KSM.

use std::path::PathBuf;

use anyhow::{bail, Context, Result};
use clap::Args;

use mobmem::core::stats::Stats;
use mobmem::host::ksm_sysfs;
use mobmem::host::ksm_validate::{
    self, simulated, KernelSession, Plan, ValidateOptions, WorkerCommand, COMPARED, DEFAULT_LAYOUT,
};
use mobmem::host::snapshot::{self, MappingFilter};
use mobmem::host::state::Journal;
use mobmem::mm::dedup::presets::{AndroidConfig, ValidateLayout};
use mobmem::mm::dedup::snapshot::Snapshot;
use mobmem::mm::dedup::{
    self, AdvisorMode, KsmParams, KsmRun, MergeOrder, Population, RunSpec, ScanCosts,
};
use mobmem::report::short;

use crate::host::{after_undo, close_journal, Wording};

/// How ksm-validate names its workers and the settings it changes.
const WORDING: Wording = Wording {
    stopped: "workers",
    settings: "KSM settings",
    undo_failed: "could not restore KSM setting",
};

/// ksmd's settings on the command line (they override --config).
#[derive(Args, Clone)]
pub struct ParamArgs {
    /// ksmd settings as TOML (fields of KsmParams: pages_to_scan, sleep_millisecs,
    /// max_page_sharing, use_zero_pages, smart_scan, advisor_mode, hz, ...; docs/ksm.md).
    #[arg(long)]
    config: Option<PathBuf>,
    /// Pages scanned per wake-up (kernel default 100).
    #[arg(long, value_parser = crate::numbers::non_negative::<u32>, allow_negative_numbers = true)]
    pages_to_scan: Option<u32>,
    /// Sleep between wake-ups, ms (kernel default 20).
    #[arg(long, value_parser = crate::numbers::non_negative::<u32>, allow_negative_numbers = true)]
    sleep_millisecs: Option<u32>,
    /// Most pages sharing one KSM page (kernel default 256).
    #[arg(long, value_parser = crate::numbers::non_negative::<u32>, allow_negative_numbers = true)]
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
    #[arg(long, value_parser = crate::numbers::non_negative::<u64>, allow_negative_numbers = true)]
    advisor_target_scan_time: Option<u64>,
    /// Timer frequency; sleeps are rounded up to whole ticks (default 1000).
    #[arg(long, value_parser = crate::numbers::non_negative::<u32>, allow_negative_numbers = true)]
    hz: Option<u32>,
    /// Ticks a sleep lasts beyond those asked for (default 1: kernels 4.8+; 0: older).
    #[arg(long, value_parser = crate::numbers::non_negative::<u32>, allow_negative_numbers = true)]
    extra_ticks: Option<u32>,
    /// cmp_and_merge_page's order: stable-tree-first (kernel 3.4 to 6.10, the default)
    /// or checksum-first (6.11+).
    #[arg(long)]
    merge_order: Option<MergeOrder>,
}

impl ParamArgs {
    fn params(&self) -> Result<KsmParams> {
        let mut p: KsmParams = crate::config_or_default(self.config.as_deref())?;
        p.pages_to_scan = self.pages_to_scan.unwrap_or(p.pages_to_scan);
        p.sleep_millisecs = self.sleep_millisecs.unwrap_or(p.sleep_millisecs);
        p.max_page_sharing = self.max_page_sharing.unwrap_or(p.max_page_sharing);
        p.use_zero_pages |= self.use_zero_pages;
        p.smart_scan |= self.smart_scan;
        if let Some(a) = &self.advisor {
            p.advisor_mode = match a.as_str() {
                "none" => AdvisorMode::None,
                "scan-time" => AdvisorMode::ScanTime,
                _ => bail!("--advisor must be none or scan-time"),
            };
        }
        p.advisor_target_scan_time = self
            .advisor_target_scan_time
            .unwrap_or(p.advisor_target_scan_time);
        p.hz = self.hz.unwrap_or(p.hz);
        p.extra_ticks = self.extra_ticks.unwrap_or(p.extra_ticks);
        p.merge_order = self.merge_order.unwrap_or(p.merge_order);
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
    #[arg(long, default_value_t = 1, value_parser = crate::numbers::non_negative::<u64>, allow_negative_numbers = true)]
    seed: u64,
    /// Multiply the android preset's region sizes.
    #[arg(long, default_value_t = 1.0, allow_negative_numbers = true)]
    scale: f64,
    #[command(flatten)]
    params: ParamArgs,
    /// Simulated time, s.
    #[arg(long, default_value_t = 180.0, allow_negative_numbers = true)]
    duration_s: f64,
    /// Sample interval, ms.
    #[arg(long, default_value_t = 1000, value_parser = crate::numbers::non_negative::<u64>, allow_negative_numbers = true)]
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

fn csv_header() -> String {
    dedup::Sample::names().join(",")
}

fn csv_line(s: &dedup::Sample) -> String {
    let values: Vec<String> = s.values().iter().map(|(_, v)| v.to_string()).collect();
    values.join(",")
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
    // The kernel's counters first, as the sample names them (after /sys/kernel/mm/ksm/).
    let kernel = [
        "pages_shared",
        "pages_sharing",
        "pages_unshared",
        "pages_volatile",
        "ksm_zero_pages",
        "full_scans",
        "pages_scanned",
        "pages_skipped",
    ]
    .map(|name| (name, s.value(name).expect("a figure of every sample")));
    for (name, v) in kernel.into_iter().chain([
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
    ]) {
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
        println!("{}", csv_header());
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
    #[arg(
        long = "pid",
        required_unless_present = "info",
        num_args = 1..,
        value_parser = crate::numbers::non_negative::<u32>,
        allow_negative_numbers = true
    )]
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

#[derive(Args)]
pub struct ValidateArgs {
    /// Worker processes.
    #[arg(long, default_value_t = DEFAULT_LAYOUT.workers, value_parser = crate::numbers::non_negative::<u32>, allow_negative_numbers = true)]
    workers: u32,
    /// Pages per worker with content every worker has.
    #[arg(long, default_value_t = DEFAULT_LAYOUT.duplicate, value_parser = crate::numbers::non_negative::<u32>, allow_negative_numbers = true)]
    duplicate: u32,
    /// Pages per worker with content no other page has.
    #[arg(long, default_value_t = DEFAULT_LAYOUT.unique, value_parser = crate::numbers::non_negative::<u32>, allow_negative_numbers = true)]
    unique: u32,
    /// Pages per worker of zeros.
    #[arg(long, default_value_t = DEFAULT_LAYOUT.zero, value_parser = crate::numbers::non_negative::<u32>, allow_negative_numbers = true)]
    zero: u32,
    /// Pages per worker rewritten every --volatile-period-ms.
    #[arg(long, default_value_t = DEFAULT_LAYOUT.volatile, value_parser = crate::numbers::non_negative::<u32>, allow_negative_numbers = true)]
    volatile: u32,
    #[arg(long, default_value_t = DEFAULT_LAYOUT.volatile_period_ms, value_parser = crate::numbers::non_negative::<u64>, allow_negative_numbers = true)]
    volatile_period_ms: u64,
    /// pages_to_scan for both the kernel and the simulator.
    #[arg(long, default_value_t = 100, value_parser = crate::numbers::non_negative::<u32>, allow_negative_numbers = true)]
    pages_to_scan: u32,
    /// sleep_millisecs for both.
    #[arg(long, default_value_t = 10, value_parser = crate::numbers::non_negative::<u32>, allow_negative_numbers = true)]
    sleep_millisecs: u32,
    /// Merge zero pages with the zero page (use_zero_pages) in both.
    #[arg(long)]
    use_zero_pages: bool,
    /// How long KSM runs, s.
    #[arg(long, default_value_t = 6.0, allow_negative_numbers = true)]
    duration_s: f64,
    /// Sample interval, ms.
    #[arg(long, default_value_t = 100, value_parser = crate::numbers::non_negative::<u64>, allow_negative_numbers = true)]
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
    /// Where each setting's value is written down before it changes (see `mobmem host
    /// restore --help`).
    #[arg(long, value_name = "FILE", default_value_os_t = mobmem::host::state::default_path())]
    state_file: PathBuf,
    /// Internal: run as worker N (allocate, fill, report ready, wait).
    #[arg(long, hide = true, value_parser = crate::numbers::non_negative::<u32>, allow_negative_numbers = true)]
    worker: Option<u32>,
    /// Internal, for a worker: this many more pages read and never written.
    #[arg(long, hide = true, default_value_t = 0, value_parser = crate::numbers::non_negative::<usize>, allow_negative_numbers = true)]
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

/// Begin `command`'s journal in `state_file` and a KSM session on `plan`'s directory,
/// with a signal handler: a first signal stops the workers (`first` says so) and the
/// command then restores as on a normal end; a second restores the KSM settings at once
/// (`again` says so) and exits.
pub(crate) fn start_session(
    plan: &Plan,
    state_file: &std::path::Path,
    command: &str,
    wording: &'static Wording,
    again: &'static str,
    first: &'static str,
) -> Result<(Journal, KernelSession)> {
    let journal = Journal::begin(state_file, command)?;
    let session = KernelSession::start(plan.sysfs(), &journal);
    let interrupt = session.interrupt();
    let handler_journal = journal.clone();
    crate::host::on_interrupt(move || {
        // Act first, then say so: a message to a closed terminal must not stop anything.
        if interrupt.mark() {
            let failures = interrupt.restore_now();
            let restored = close_journal(&handler_journal, &failures, wording);
            crate::note(again);
            std::process::exit(if restored { 130 } else { 1 });
        }
        interrupt.stop_workers();
        crate::note(first);
    })?;
    Ok((journal, session))
}

pub fn validate(args: ValidateArgs) -> Result<()> {
    let layout = args.layout();
    if let Some(index) = args.worker {
        let mut stdout = std::io::stdout();
        return Ok(ksm_validate::run_worker(
            index,
            layout,
            args.read_pages,
            std::io::stdin(),
            &mut stdout,
        )?);
    }
    // Everything that can be checked is checked before the kernel is touched.
    let plan = Plan::new(ValidateOptions {
        layout,
        pages_to_scan: args.pages_to_scan,
        sleep_millisecs: args.sleep_millisecs,
        use_zero_pages: args.use_zero_pages,
        duration_ms: duration_ms(args.duration_s)?,
        sample_ms: args.sample_ms,
        sysfs: args.sysfs.clone(),
        merge_order: args.merge_order,
        worker: WorkerCommand {
            program: std::env::current_exe().context("finding the mobmem binary")?,
            args: vec!["ksm-validate".into()],
        },
    })?;

    let (journal, mut session) = start_session(
        &plan,
        &args.state_file,
        "ksm-validate",
        &WORDING,
        "interrupted again: KSM settings restored without waiting for ksmd",
        "interrupted: stopping the workers; KSM settings will be restored",
    )?;
    let notes = |m: &str| crate::note(m);
    let outcome = session.drive(&plan, &notes);
    let failures = session.finish(&notes);
    let restored = close_journal(&journal, &failures, &WORDING);
    let outcome = after_undo(outcome, session.interrupted(), restored, &WORDING)?;
    let v = plan.compare(outcome, restored)?;
    let params = &plan.params;
    let (hz, kernel) = (plan.kernel_hz, plan.kernel_version);
    let last = v.last();
    let (converge_k, converge_s) = v.converge_ms();
    let summary = serde_json::json!({
        "layout": layout,
        "params": params,
        "kernel_hz": hz,
        "kernel_version": kernel.map(|(a, b)| format!("{a}.{b}")),
        "measured_ksmd_ns_per_page": crate::json_number(v.measured_ns_per_page),
        "final": COMPARED.iter().map(|n| (n.to_string(), serde_json::json!({
            "kernel": crate::json_number(last.get(n)),
            "simulator": simulated(v.sim.last(), n)}))).collect::<serde_json::Map<_,_>>(),
        "converge_ms": {"kernel": converge_k, "simulator": converge_s},
        "settings_restored": v.settings_restored,
    });
    if args.json {
        let samples: Vec<serde_json::Value> = v
            .pairs()
            .map(|(r, s)| {
                let mut o = serde_json::Map::new();
                o.insert("time_ms".into(), r.time_ms.into());
                for n in COMPARED {
                    o.insert(format!("kernel_{n}"), crate::json_number(r.get(n)));
                    o.insert(format!("sim_{n}"), crate::json_number(simulated(s, n)));
                }
                o.into()
            })
            .collect();
        let mut out = summary.clone();
        out["samples"] = samples.into();
        println!("{}", serde_json::to_string_pretty(&out)?);
    } else if args.csv {
        let mut header = vec!["time_s".to_string()];
        for n in COMPARED {
            header.push(format!("kernel_{n}"));
            header.push(format!("sim_{n}"));
        }
        println!("{}", header.join(","));
        for (r, s) in v.pairs() {
            let mut line = vec![format!("{}", r.time_ms as f64 / 1000.0)];
            for n in COMPARED {
                line.push(format!("{}", r.get(n)));
                line.push(format!("{}", simulated(s, n)));
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
        for (r, s) in v.pairs() {
            let pair = |n: &str| (r.get(n), simulated(s, n));
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
        let seconds =
            |t: Option<u64>| t.map_or("never".into(), |t| format!("{:.2} s", t as f64 / 1000.0));
        println!(
            "final pages_sharing: kernel {}, simulator {}; 95% of it reached at: kernel {}, simulator {}",
            last.get("pages_sharing"),
            simulated(v.sim.last(), "pages_sharing"),
            seconds(converge_k),
            seconds(converge_s),
        );
        println!(
            "ksmd CPU per scanned page (measured): {:.0} ns; KSM settings {restored}",
            v.measured_ns_per_page,
        );
    }
    if !failures.is_empty() {
        bail!("some KSM settings could not be restored");
    }
    Ok(())
}
