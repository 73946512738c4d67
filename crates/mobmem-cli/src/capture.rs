//! `mobmem capture`: record a live Linux workload with ftrace and import it as a trace
//! (the capture itself is `mobmem::host::capture`).
//!
//! Ctrl-C, SIGTERM and SIGHUP only set a flag: the capture then ends the command,
//! restores every tracing setting and fails without writing a trace. Each setting is
//! written to the state file before it is changed, for `mobmem host restore` after a
//! SIGKILL. The trace is
//! written under a temporary name and renamed into place, so no half-written file ever
//! carries its name.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use anyhow::{bail, Result};
use clap::Args;

use mobmem::host::capture::{self, CaptureOptions, CommandEnd};
use mobmem::host::state::Journal;

use crate::import::{check_output, write_trace, ImportFlags};
use crate::note;

#[derive(Args)]
pub struct CaptureArgs {
    /// Output trace, .mmt or .csv.
    #[arg(long)]
    out: PathBuf,
    /// Stop after this many seconds (without COMMAND: trace the whole system this long;
    /// with COMMAND: stop it if it runs longer).
    #[arg(long, value_name = "S", allow_negative_numbers = true)]
    duration: Option<f64>,
    #[command(flatten)]
    flags: ImportFlags,
    /// Empty the page cache first (sync, then 3 to /proc/sys/vm/drop_caches), so the
    /// workload's reads are misses the trace sees.
    #[arg(long)]
    drop_caches: bool,
    /// Ring buffer per CPU while capturing, in KiB (restored afterwards).
    #[arg(long, default_value_t = 32768, value_name = "KIB", value_parser = crate::numbers::non_negative::<u64>, allow_negative_numbers = true)]
    buffer_kb: u64,
    /// Leave out page_fault_user (anonymous accesses), which can be most of the volume.
    #[arg(long)]
    no_anon_faults: bool,
    /// Also save the raw ftrace text here (importable with `mobmem trace import`); an
    /// interrupted capture leaves what it read in FILE.partial.
    #[arg(long, value_name = "FILE")]
    raw: Option<PathBuf>,
    /// Print the import report as JSON.
    #[arg(long)]
    json: bool,
    /// Where the tracing settings are written down before they change (see `mobmem host
    /// restore --help`).
    #[arg(long, value_name = "FILE", default_value_os_t = mobmem::host::state::default_path())]
    state_file: PathBuf,
    /// The workload to run; without --foreground marks it (with the processes it starts)
    /// is the foreground app. Its stdout goes to mobmem's stderr; its process group is
    /// ended when the capture ends.
    #[arg(last = true, value_name = "COMMAND")]
    command: Vec<String>,
}

pub fn run(args: CaptureArgs) -> Result<()> {
    check_output(&args.out)?;
    if args.command.is_empty() && args.duration.is_none() {
        bail!("give a COMMAND after `--`, or --duration S to trace the whole system");
    }
    if let Some(d) = args.duration {
        if !(d.is_finite() && d > 0.0) {
            bail!("--duration must be > 0 seconds");
        }
    }
    let options = CaptureOptions {
        import: args.flags.options()?,
        duration: args.duration.map(Duration::from_secs_f64),
        drop_caches: args.drop_caches,
        buffer_kb: args.buffer_kb,
        no_anon_faults: args.no_anon_faults,
        raw: args.raw,
        command: args.command,
    };
    let name = options.command.first().cloned().unwrap_or_default();
    let interrupted = Arc::new(AtomicBool::new(false));
    {
        let flag = interrupted.clone();
        crate::host::on_interrupt(move || flag.store(true, Ordering::SeqCst))?;
    }
    let journal = Journal::begin(&args.state_file, "capture")?;
    let captured = capture::capture(options, &journal, &interrupted, &note);
    // Removes the state file only if every setting was put back.
    let closed = journal.close();
    let captured = match captured {
        Ok(c) => c,
        Err(e) => match closed {
            Ok(()) => return Err(e.into()),
            Err(left) => bail!("{e}\nand: {left}"),
        },
    };
    for f in &captured.undo_failures {
        note(&format!("error: could not undo: {f}"));
    }
    note(&format!(
        "captured {} lines in {:.1} s; tracing settings {}",
        captured.report.lines,
        captured.seconds,
        if closed.is_ok() {
            "restored"
        } else {
            "NOT all restored"
        }
    ));
    match &captured.command {
        Some(CommandEnd::WaitFailed(e)) => note(&format!("warning: waiting for {name}: {e}")),
        Some(CommandEnd::EndedAtDeadline) => note(&format!(
            "{name} was still running after --duration: ended it"
        )),
        Some(CommandEnd::Exited(s)) if !s.success() => {
            note(&format!("warning: {name} exited with {s}"))
        }
        _ => {}
    }
    write_trace(
        "trace_pipe",
        &args.out,
        &captured.trace,
        &captured.report,
        args.json,
    )?;
    // The trace is whole either way; a setting left changed still fails the command.
    Ok(closed?)
}
