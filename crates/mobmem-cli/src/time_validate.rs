//! `mobmem time-validate`: the time model against the real kernel: (1) CPU sharing, a
//! touch task beside ksmd on one CPU; (2) memory stalls, a worker under a memory cgroup
//! limit with zram as swap.

use std::io::Write;
use std::path::PathBuf;

use anyhow::{Context, Result};
use clap::Args;

use mobmem::core::time::{EevdfParams, Sharing};
use mobmem::host::ksm_sysfs;
use mobmem::host::ksm_validate::{Plan, ValidateOptions, WorkerCommand, DEFAULT_LAYOUT};
use mobmem::host::time_validate::{self, PinnedKsmd, ScanRate, TouchOptions};

use mobmem::host::reclaim_validate::{
    self, KernelSession as ReclaimSession, ValidateOptions as ReclaimOptions,
    WorkerCommand as ReclaimWorker, WorkloadSpec, ZramOptions, CGROUP_V1_MEMORY, ZRAM_DEVICE,
};
use mobmem::host::state::Journal;
use mobmem::host::time_validate::{Row, SwapCounts, WorkerRun};

use crate::host::{after_undo, close_journal, Wording};

const WORKER_WORDING: Wording = Wording {
    stopped: "worker",
    settings: "cgroup, zram and tracing settings",
    undo_failed: "could not undo:",
};

const WORDING: Wording = Wording {
    stopped: "workers",
    settings: "KSM settings and ksmd's CPUs",
    undo_failed: "could not restore",
};

#[derive(Args)]
pub struct TimeValidateArgs {
    /// The CPU ksmd and the touch task share (the other CPUs run the KSM workers).
    #[arg(long, default_value_t = 1)]
    cpu: usize,
    /// The touch's CPU work, ms (a loop sized to it on this CPU at the start).
    #[arg(long, default_value_t = 10.0, allow_negative_numbers = true)]
    touch_ms: f64,
    /// A touch every this many ms.
    #[arg(long, default_value_t = 47)]
    period_ms: u64,
    /// How long each measurement runs, s.
    #[arg(long, default_value_t = 3.0, allow_negative_numbers = true)]
    seconds: f64,
    /// The scan rate ksmd's CPU time per page is measured at, PAGES/SLEEP_MS.
    #[arg(long, default_value = "1000/20", value_parser = parse_rate)]
    calibrate: ScanRate,
    /// The scan rates compared, PAGES/SLEEP_MS, comma-separated.
    #[arg(long, default_value = "100/20,1000/20,4000/10,1000/0", value_delimiter = ',', value_parser = parse_rate)]
    rates: Vec<ScanRate>,
    /// How the simulator shares the CPU between the touch and ksmd: `fluid` (each
    /// runnable thread its weight's share at every instant), `eevdf` (one at a time, in
    /// slices ended at ticks, as the kernel's EEVDF picks; slice 0.75 ms x (1 + log2 of
    /// the CPUs, at most 8)), or `both`, a row for each.
    #[arg(long, default_value = "both", value_parser = ["fluid", "eevdf", "both"])]
    sharing: String,
    /// KSM's sysfs directory.
    #[arg(long, default_value = ksm_sysfs::KSM_DIR)]
    sysfs: PathBuf,
    /// Which checks to run: `touch` (ksmd beside a touch task), `worker` (a worker
    /// under a memory cgroup limit with zram swap), or `both`.
    #[arg(long, default_value = "both", value_parser = ["touch", "worker", "both"])]
    part: String,
    /// The worker's cgroup limits, MiB: the first roomy (nothing reclaimed: it
    /// calibrates the worker's own work per access), the others tight.
    #[arg(long, value_delimiter = ',', default_values_t = [96u64, 20], value_parser = crate::numbers::non_negative::<u64>, allow_negative_numbers = true)]
    worker_limits_mib: Vec<u64>,
    /// The worker's anonymous pages (4 KiB), written once each, then read.
    #[arg(long, default_value_t = 8192, value_parser = crate::numbers::non_negative::<u32>, allow_negative_numbers = true)]
    worker_pages: u32,
    /// The worker's reads after it wrote its pages.
    #[arg(long, default_value_t = 100_000, value_parser = crate::numbers::non_negative::<u32>, allow_negative_numbers = true)]
    worker_reads: u32,
    /// Untraced runs of the worker at each limit, after the traced one: their median
    /// wall time and memory stall are compared (the traced run is slowed by its
    /// tracing).
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..=20))]
    worker_timed_runs: u32,
    /// A cgroup v2 hierarchy where the worker gets a group of its own, for its own
    /// memory stall (`memory.pressure`); default: the mounted one, if any (else the
    /// machine's /proc/pressure/memory, which psi weighs by every CPU's busy time).
    #[arg(long)]
    psi_cgroup_root: Option<PathBuf>,
    /// Where the worker's (one-page) file is written.
    #[arg(long, default_value_os_t = std::env::temp_dir())]
    scratch: PathBuf,
    /// The memory cgroup v1 hierarchy.
    #[arg(long, default_value = CGROUP_V1_MEMORY)]
    cgroup_root: PathBuf,
    /// Print the comparison as JSON: a list of {case, metric, kernel, sim, goal,
    /// within_goal}.
    #[arg(long)]
    json: bool,
    /// Where each change is written down before it is made (see `mobmem host restore
    /// --help`).
    #[arg(long, value_name = "FILE", default_value_os_t = mobmem::host::state::default_path())]
    state_file: PathBuf,
}

fn parse_rate(text: &str) -> std::result::Result<ScanRate, String> {
    ScanRate::parse(text).map_err(|e| e.to_string())
}

pub fn run(args: TimeValidateArgs) -> Result<()> {
    if args.worker_limits_mib.len() < 2 {
        anyhow::bail!("--worker-limits-mib needs a roomy limit and at least one tight one");
    }
    let mut rows = Vec::new();
    let mut header = Vec::new();
    if args.part != "worker" {
        let (text, touch_rows) = run_touch(&args)?;
        header.push(text);
        rows.extend(touch_rows);
    }
    if args.part != "touch" {
        let (text, worker_rows) = run_worker(&args)?;
        header.push(text);
        rows.extend(worker_rows);
    }
    print_rows(&args, &header, &rows)
}

/// Part (2): reclaim-validate's worker (anonymous pages only) at a roomy and tight
/// limits, timed, against the worker on the time model.
fn run_worker(args: &TimeValidateArgs) -> Result<(String, Vec<Row>)> {
    let spec = WorkloadSpec {
        files: 1,
        file_pages: 1,
        anon_pages: args.worker_pages,
        accesses: args.worker_reads,
        anon_percent: 100,
        ..WorkloadSpec::default()
    };
    let plan = reclaim_validate::Plan::new(ReclaimOptions {
        spec,
        limits_mib: args.worker_limits_mib.clone(),
        swappiness: 60,
        zram: Some(ZramOptions {
            sysfs: PathBuf::from("/sys/block").join(ZRAM_DEVICE),
            algorithm: "lz4".into(),
            disksize_mib: 4 * (args.worker_pages as u64 / 256 + 1),
        }),
        cgroup_root: args.cgroup_root.clone(),
        scratch: args.scratch.clone(),
        worker: ReclaimWorker {
            program: std::env::current_exe().context("finding the mobmem binary")?,
            args: vec!["reclaim-validate".into(), "--worker".into()],
        },
        raw_dir: None,
        stats_flush_ms: 2000,
        timed_runs: args.worker_timed_runs,
        psi_group_root: args
            .psi_cgroup_root
            .clone()
            .or_else(reclaim_validate::cgroup2_mount),
    })?;
    let (codec, _) = plan.codec.context("zram's algorithm has no codec here")?;
    // Replaces the touch part's action (its journal is closed) before anything changes;
    // a signal until the session exists is kept and acted on once it does.
    let early = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    {
        let early = early.clone();
        crate::host::on_interrupt(move || early.store(true, std::sync::atomic::Ordering::SeqCst))?;
    }
    let journal = Journal::begin(&args.state_file, "time-validate")?;
    let mut session = ReclaimSession::start(&journal);
    let interrupt = session.interrupt();
    if early.load(std::sync::atomic::Ordering::SeqCst) {
        interrupt.stop();
    }
    crate::host::on_interrupt(move || {
        interrupt.stop();
        crate::note("interrupted: stopping the worker; every setting will be restored");
    })?;
    let progress = |m: &str| crate::note(&format!("time-validate: worker: {m}"));
    progress("measuring the kernel's swap path (reclaim to zram and back)");
    let outcome = session
        .probe_swap_path(&plan, 5)
        .and_then(|path| Ok((path, session.drive(&plan, &progress)?)));
    let failures = session.finish();
    let restored = close_journal(&journal, &failures, &WORKER_WORDING);
    let (swap_path, runs) = after_undo(outcome, session.interrupted(), restored, &WORKER_WORDING)?;
    let costs = time_validate::worker_costs(&spec, codec, swap_path)?;
    let mut measured = Vec::new();
    for run in &runs {
        let row = reclaim_validate::compare(&plan, run)?;
        let of_group = run.timed.iter().all(|t| t.group_stall_us.is_some());
        let mut stalls = Vec::new();
        for t in &run.timed {
            let stall = if of_group {
                t.group_stall_us
            } else {
                t.system_stall_us
            };
            stalls.push(stall.context("this kernel has no /proc/pressure/memory")?);
        }
        let median_s = |v: Vec<f64>| time_validate::median(v);
        let counts = |f: &reclaim_validate::Figures| SwapCounts {
            swap_outs: f.swap_outs,
            swap_ins: f.swap_ins,
            restores: f.anon_restores,
        };
        measured.push(WorkerRun {
            limit_mib: run.limit_mib,
            wall_s: median_s(run.timed.iter().map(|t| t.seconds).collect()),
            traced_wall_s: run.seconds,
            stall_some_s: median_s(stalls.iter().map(|s| s[0] as f64 / 1e6).collect()),
            stall_full_s: median_s(stalls.iter().map(|s| s[1] as f64 / 1e6).collect()),
            stall_of_group: of_group,
            kernel: counts(&row.kernel),
            sim: counts(&row.sim),
        });
    }
    let accesses = spec.anon_pages as u64 + spec.accesses as u64;
    let rows = time_validate::compare_worker(&measured[0], &measured[1..], accesses, &costs)?;
    let counts: Vec<String> = measured
        .iter()
        .map(|m| {
            format!(
                "{} MiB: swap-outs {} (sim {}), swap-ins {} (sim {}), of them restores {} (sim {}); \
                 traced run {:.3} s; stall full {:.3} s",
                m.limit_mib,
                m.kernel.swap_outs,
                m.sim.swap_outs,
                m.kernel.swap_ins,
                m.sim.swap_ins,
                m.kernel.restores,
                m.sim.restores,
                m.traced_wall_s,
                m.stall_full_s
            )
        })
        .collect();
    let stall_of = if measured.iter().all(|m| m.stall_of_group) {
        "the worker's own cgroup v2 group"
    } else {
        "the machine's /proc/pressure/memory (no cgroup v2 group: psi weighs it by every CPU's busy time)"
    };
    let text = format!(
        "worker: {} pages written then {} reads under a cgroup limit, zram lz4; times: the median of {} untraced runs a limit, stall of {}; \
         this host: the kernel's reclaim to zram {:.0} ns and swap-in {:.0} ns a page (mobmem's codec alone: compress {:.0} ns, decompress {:.0} ns; a first-touch fault {:.0} ns); {}",
        spec.anon_pages,
        spec.accesses,
        args.worker_timed_runs,
        stall_of,
        costs.swap_path.reclaim_ns,
        costs.swap_path.swapin_ns,
        costs.compress_ns,
        costs.decompress_ns,
        costs.fault_ns,
        counts.join("; ")
    );
    Ok((text, rows))
}

/// Part (1): the touch task beside ksmd.
fn run_touch(args: &TimeValidateArgs) -> Result<(String, Vec<Row>)> {
    if !(args.seconds.is_finite() && args.seconds > 0.0 && args.seconds <= 600.0) {
        anyhow::bail!(
            "--seconds must be > 0 and at most 600, found {}",
            args.seconds
        );
    }
    let options = TouchOptions {
        cpu: args.cpu,
        touch_ms: args.touch_ms,
        period_ms: args.period_ms,
        measure_ms: (args.seconds * 1000.0).round() as u64,
        calibrate: args.calibrate,
        rates: args.rates.clone(),
    };
    options.validate()?;
    // KSM's availability, HZ and the workers' content, checked before anything changes.
    let plan = Plan::new(ValidateOptions {
        layout: DEFAULT_LAYOUT,
        pages_to_scan: args.calibrate.pages_to_scan,
        sleep_millisecs: args.calibrate.sleep_millisecs,
        use_zero_pages: false,
        duration_ms: options.measure_ms,
        sample_ms: options.measure_ms,
        sysfs: args.sysfs.clone(),
        merge_order: None,
        worker: WorkerCommand {
            program: std::env::current_exe().context("finding the mobmem binary")?,
            args: vec!["ksm-validate".into()],
        },
    })?;
    time_validate::ksmd_pid()?;
    let (journal, mut session) = crate::ksm::start_session(
        &plan,
        &args.state_file,
        "time-validate",
        &WORDING,
        "interrupted again: KSM settings restored; `mobmem host restore` puts ksmd's CPUs back",
        "interrupted: stopping; KSM settings and ksmd's CPUs will be restored",
    )?;
    let notes = |m: &str| crate::note(m);
    let progress = |m: &str| crate::note(&format!("time-validate: {m}"));
    let outcome = (|| {
        session.prepare(&plan, &notes)?;
        let mut pinned = PinnedKsmd::pin(options.cpu, &journal)?;
        let measured = time_validate::measure(&mut session, &plan, &options, &progress);
        let failure = pinned.restore();
        let measured = measured?;
        match failure {
            Some(f) => Err(mobmem::Error::host(format!("could not {f}"))),
            None => Ok(measured),
        }
    })();
    let failures = session.finish(&notes);
    let restored = close_journal(&journal, &failures, &WORDING);
    let measured = after_undo(outcome, session.interrupted(), restored, &WORDING)?;
    let period_ns = options.period_ms * 1_000_000;
    let duration_ns = options.measure_ms * 1_000_000;
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    let slices = Sharing::Eevdf(EevdfParams::kernel_default(cpus, measured.hz));
    let sharings: Vec<Sharing> = match args.sharing.as_str() {
        "fluid" => vec![Sharing::Fluid],
        "eevdf" => vec![slices],
        _ => vec![Sharing::Fluid, slices],
    };
    let mut rows = Vec::new();
    for sharing in sharings {
        rows.extend(time_validate::compare(
            &measured,
            period_ns,
            duration_ns,
            sharing,
        )?);
    }
    let text = format!(
        "touch: {:.3} ms of CPU alone, waiting {:.2} % more (after the rates: {:.3} ms, {:.2} %), every {} ms, on CPU {}; ksmd: {:.0} ns a page at {}; HZ {}",
        measured.alone.mean_cpu_ns / 1e6,
        100.0 * (measured.alone.mean_response_ns / measured.alone.mean_cpu_ns - 1.0),
        measured.alone_after.mean_cpu_ns / 1e6,
        100.0 * (measured.alone_after.mean_response_ns / measured.alone_after.mean_cpu_ns - 1.0),
        options.period_ms,
        options.cpu,
        measured.ksmd_ns_per_page,
        measured.calibration.rate.name(),
        measured.hz
    );
    Ok((text, rows))
}

fn print_rows(args: &TimeValidateArgs, header: &[String], rows: &[Row]) -> Result<()> {
    let mut out = std::io::stdout().lock();
    if args.json {
        serde_json::to_writer_pretty(&mut out, rows)?;
        writeln!(out)?;
        return Ok(());
    }
    for h in header {
        writeln!(out, "{h}")?;
    }
    writeln!(
        out,
        "{:<28} {:<20} {:<7} {:>9} {:>9}  goal",
        "case", "metric", "sharing", "kernel", "sim"
    )?;
    for r in rows {
        let verdict = match r.within_goal {
            None => "calibrated (not evidence)".to_string(),
            Some(true) => format!("met: {}", r.goal),
            Some(false) => format!("MISSED: {}", r.goal),
        };
        writeln!(
            out,
            "{:<28} {:<20} {:<7} {:>9.2} {:>9.2}  {verdict}",
            r.case, r.metric, r.sharing, r.kernel, r.sim
        )?;
    }
    Ok(())
}
