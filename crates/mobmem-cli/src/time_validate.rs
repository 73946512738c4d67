//! `mobmem time-validate`: the time model against the real kernel: (1) CPU sharing, a
//! touch task beside ksmd on one CPU; (2) memory stalls, a worker under a memory cgroup
//! limit with zram as swap.

use std::io::Write;
use std::path::PathBuf;

use anyhow::{Context, Result};
use clap::Args;

use mobmem::host::ksm_sysfs;
use mobmem::host::ksm_validate::{Plan, ValidateOptions, WorkerCommand, DEFAULT_LAYOUT};
use mobmem::host::time_validate::{self, PinnedKsmd, ScanRate, TouchOptions};

use mobmem::host::reclaim_validate::{
    self, KernelSession as ReclaimSession, ValidateOptions as ReclaimOptions,
    WorkerCommand as ReclaimWorker, WorkloadSpec, ZramOptions, CGROUP_V1_MEMORY, ZRAM_DEVICE,
};
use mobmem::host::state::Journal;
use mobmem::host::time_validate::{Row, WorkerRun};

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
    })?;
    let (codec, _) = plan.codec.context("zram's algorithm has no codec here")?;
    let costs = time_validate::worker_costs(&spec, codec)?;
    let journal = Journal::begin(&args.state_file, "time-validate")?;
    let mut session = ReclaimSession::start(&journal);
    let interrupt = session.interrupt();
    // The touch part's handler, if it ran, is already installed; a second install fails.
    let _ = ctrlc::set_handler(move || {
        interrupt.stop();
        crate::note("interrupted: stopping the worker; every setting will be restored");
    });
    let progress = |m: &str| crate::note(&format!("time-validate: worker: {m}"));
    let outcome = session.drive(&plan, &progress);
    let failures = session.finish();
    let restored = close_journal(&journal, &failures, &WORKER_WORDING);
    let runs = after_undo(outcome, session.interrupted(), restored, &WORKER_WORDING)?;
    let mut measured = Vec::new();
    for run in &runs {
        let row = reclaim_validate::compare(&plan, run)?;
        let [some, full] = run
            .memory_stall_us
            .context("this kernel has no /proc/pressure/memory")?;
        measured.push(WorkerRun {
            limit_mib: run.limit_mib,
            wall_s: run.seconds,
            stall_some_s: some as f64 / 1e6,
            stall_full_s: full as f64 / 1e6,
            kernel_swap_outs: row.kernel.swap_outs,
            kernel_swap_ins: row.kernel.swap_ins,
            sim_swap_outs: row.sim.swap_outs,
            sim_swap_ins: row.sim.swap_ins,
        });
    }
    let accesses = spec.anon_pages as u64 + spec.accesses as u64;
    let rows = time_validate::compare_worker(&measured[0], &measured[1..], accesses, &costs)?;
    let counts: Vec<String> = measured
        .iter()
        .map(|m| {
            format!(
                "{} MiB: swap-outs {} (sim {}), swap-ins {} (sim {}), stall full {:.3} s",
                m.limit_mib,
                m.kernel_swap_outs,
                m.sim_swap_outs,
                m.kernel_swap_ins,
                m.sim_swap_ins,
                m.stall_full_s
            )
        })
        .collect();
    let text = format!(
        "worker: {} pages written then {} reads under a cgroup limit, zram lz4; this host: compress {:.0} ns, decompress {:.0} ns, fault {:.0} ns a page; {}",
        spec.anon_pages,
        spec.accesses,
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
    let rows = time_validate::compare(&measured, period_ns, duration_ns)?;
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
        "{:<28} {:<20} {:>9} {:>9}  goal",
        "case", "metric", "kernel", "sim"
    )?;
    for r in rows {
        let verdict = match r.within_goal {
            None => "calibrated (not evidence)".to_string(),
            Some(true) => format!("met: {}", r.goal),
            Some(false) => format!("MISSED: {}", r.goal),
        };
        writeln!(
            out,
            "{:<28} {:<20} {:>9.2} {:>9.2}  {verdict}",
            r.case, r.metric, r.kernel, r.sim
        )?;
    }
    Ok(())
}
