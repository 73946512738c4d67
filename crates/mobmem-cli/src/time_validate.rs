//! `mobmem time-validate`: the time model's CPU sharing against the real kernel, with a
//! touch task beside ksmd on one CPU.

use std::io::Write;
use std::path::PathBuf;

use anyhow::{Context, Result};
use clap::Args;

use mobmem::host::ksm_sysfs;
use mobmem::host::ksm_validate::{Plan, ValidateOptions, WorkerCommand, DEFAULT_LAYOUT};
use mobmem::host::time_validate::{self, PinnedKsmd, ScanRate, TouchOptions};

use crate::host::{after_undo, close_journal, Wording};

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
    let mut out = std::io::stdout().lock();
    if args.json {
        serde_json::to_writer_pretty(&mut out, &rows)?;
        writeln!(out)?;
        return Ok(());
    }
    writeln!(
        out,
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
    )?;
    writeln!(
        out,
        "{:<28} {:<20} {:>9} {:>9}  goal",
        "case", "metric", "kernel", "sim"
    )?;
    for r in &rows {
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
