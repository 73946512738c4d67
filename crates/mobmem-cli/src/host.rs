//! `mobmem host restore`: put back what a killed host command left changed, from its
//! state file. `mobmem host costs`: this CPU's per-page costs, for the time model.

use std::io::Write;
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

use anyhow::{bail, Result};
use clap::{Args, Subcommand};
use indicatif::ProgressDrawTarget;

use mobmem::host::capture::CaptureLock;
use mobmem::host::costs::{self, CorpusSource, Figure, HostCosts};
use mobmem::host::state::{self, Journal, Restored};

use crate::numbers::non_negative;

/// What SIGINT, SIGTERM and SIGHUP do now. A process has one handler, installed on the
/// first call; each later call replaces the action, so that a command of two parts
/// (`time-validate --part both`) never leaves the first part's action (and its
/// journal) in charge of the second.
pub(crate) fn on_interrupt(action: impl Fn() + Send + 'static) -> Result<()> {
    use std::sync::{Mutex, OnceLock};
    type Action = Box<dyn Fn() + Send>;
    static ACTION: Mutex<Option<Action>> = Mutex::new(None);
    static INSTALLED: OnceLock<std::result::Result<(), String>> = OnceLock::new();
    *ACTION.lock().unwrap_or_else(|e| e.into_inner()) = Some(Box::new(action));
    INSTALLED
        .get_or_init(|| {
            ctrlc::set_handler(|| {
                // ctrlc runs this on a thread of its own, never inside the signal.
                if let Some(act) = ACTION.lock().unwrap_or_else(|e| e.into_inner()).as_ref() {
                    act();
                }
            })
            .map_err(|e| e.to_string())
        })
        .clone()
        .map_err(|e| anyhow::anyhow!("installing the signal handler: {e}"))
}

#[derive(Subcommand)]
pub enum HostCommand {
    /// Put back what a killed `reclaim-validate`, `ksm-validate` or `capture` left
    /// changed.
    ///
    /// Those commands write each change (a setting's value before, a swap device, a zram
    /// device, a memory cgroup, a directory, a mount, a tracing setting) to a state file
    /// before making it, and remove the file once everything is put back. A run ended by
    /// SIGKILL (or the OOM killer) leaves the file behind, and the next run refuses to
    /// start until it is dealt with. This command reads it, undoes every change newest
    /// first, reporting each step, and removes the file only when every undo succeeded;
    /// what failed stays listed, to be retried. It refuses while the run that wrote the
    /// file is still alive. Without a state file there is nothing to do. Undoing a change
    /// that was recorded but never made does nothing.
    Restore(RestoreArgs),
    /// Measure this CPU's per-page costs: compressing and decompressing a page, copying
    /// a page, a first-touch page fault.
    ///
    /// These are the host measurements the time model names as the source of its CPU
    /// constants: zram's compress_ns and decompress_ns (and a platform's lz4 and lzo
    /// decompress_ns_per_byte), a platform's ram_copy_ns_per_byte, the phone's
    /// response.minor_fault_ns. Each figure is in ns per page, given as the median and
    /// the 10th and 90th percentiles (p10, p90) over --rounds rounds; a round times one
    /// pass over all its pages on one thread and divides by their count, so the spread
    /// is the machine's noise from pass to pass.
    ///
    /// lz4 compress, lz4 decompress: each 4 KiB page of the corpus compressed on its own
    /// with LZ4 (block format, as zram and F2FS use it), then each result decompressed,
    /// through the same lz4_flex calls as the simulator's zram and file-system models
    /// (the output's allocation included). Every page is decompressed and compared with
    /// the original before any timing; a mismatch is an error.
    ///
    /// lzo compress, lzo decompress: the same with LZO1X-1, in builds with the cargo
    /// feature `lzo` (GPL-2.0); other builds list LZO as not measured.
    ///
    /// page copy: a 4 KiB copy from one half of a --region-mib region to the other, both
    /// halves written beforehand so that no fault is timed; 64 MiB is beyond most CPUs'
    /// last-level cache, so the copy is RAM to RAM.
    ///
    /// first-touch fault: one byte written to each page of a fresh anonymous mapping of
    /// --region-mib, huge pages advised off: the minor fault that allocates, zeroes and
    /// maps one page (of the system's page size).
    ///
    /// Compression depends on the bytes, so its times are also given per kind of page,
    /// with each kind's compression ratio (original over compressed bytes, from the real
    /// compressed sizes). The built-in corpus (--seed; the same pages for the same seed)
    /// is a quarter each of zero pages, pages repeating a random 16-256-byte record,
    /// text-like pages and random bytes; --from FILE measures on a file's pages instead
    /// (a memory dump, a binary).
    ///
    /// Prints a table, or with --json one JSON object (the CPU model, kernel release,
    /// rounds, corpus, and each figure with its unit). Writes no file. With the defaults
    /// it takes about a second; memory is about three times --pages x 4 KiB plus twice
    /// --region-mib.
    Costs(CostsArgs),
}

#[derive(Args)]
pub struct CostsArgs {
    /// Pages of the corpus: the built-in one's, or at most this many whole pages of
    /// --from (1 to 65536).
    #[arg(long, default_value_t = costs::DEFAULT_PAGES,
          value_parser = non_negative::<usize>, allow_negative_numbers = true)]
    pages: usize,
    /// Measure on the pages of FILE instead of the built-in corpus: its first --pages
    /// whole pages (a last partial page is left out; a file of less than one page is an
    /// error), its all-zero pages counted as the kind zero, the others as file. `-`
    /// reads standard input.
    #[arg(long, value_name = "FILE", conflicts_with = "seed")]
    from: Option<PathBuf>,
    /// Seed of the built-in corpus.
    #[arg(long, default_value_t = costs::DEFAULT_SEED,
          value_parser = non_negative::<u64>, allow_negative_numbers = true)]
    seed: u64,
    /// Rounds of every measurement (1 to 1000).
    #[arg(long, default_value_t = costs::DEFAULT_ROUNDS,
          value_parser = non_negative::<usize>, allow_negative_numbers = true)]
    rounds: usize,
    /// Region of the page copy (its two halves) and of each round's first touches, MiB
    /// (1 to 1024; really allocated).
    #[arg(long, default_value_t = costs::DEFAULT_REGION_MIB,
          value_parser = non_negative::<usize>, allow_negative_numbers = true)]
    region_mib: usize,
    /// Print one JSON object instead of the table.
    #[arg(long)]
    json: bool,
}

#[derive(Args)]
pub struct RestoreArgs {
    /// The state file (default: /run/mobmem/host-state.json for root; otherwise under
    /// $XDG_RUNTIME_DIR/mobmem/, or the temporary directory's mobmem-UID/).
    #[arg(long, value_name = "FILE", default_value_os_t = state::default_path())]
    state_file: PathBuf,
}

pub fn run(command: HostCommand) -> Result<()> {
    match command {
        HostCommand::Restore(args) => restore(args),
        HostCommand::Costs(args) => measure_costs(args),
    }
}

/// A run longer than this shows its progress (on a terminal).
const QUIET_FOR: Duration = Duration::from_secs(2);

fn measure_costs(args: CostsArgs) -> Result<()> {
    let settings = costs::Settings {
        source: match args.from {
            Some(path) => CorpusSource::File(path),
            None => CorpusSource::BuiltIn { seed: args.seed },
        },
        pages: args.pages,
        rounds: args.rounds,
        region_mib: args.region_mib,
    };
    let pb = crate::bar(0, "measuring");
    pb.set_draw_target(ProgressDrawTarget::hidden());
    let started = Instant::now();
    let mut shown = false;
    let measured = costs::measure(&settings, &mut |done, total| {
        if !shown && started.elapsed() > QUIET_FOR {
            pb.set_draw_target(ProgressDrawTarget::stderr());
            shown = true;
        }
        pb.set_length(total as u64);
        pb.set_position(done as u64);
    });
    pb.finish_and_clear();
    let measured = measured?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&measured)?);
    } else {
        print!("{}", costs_table(&measured));
    }
    Ok(())
}

/// The figures as a table, then the compression of each kind of page.
fn costs_table(c: &HostCosts) -> String {
    let h = &c.host;
    let mut out = String::new();
    let mut line = |text: String| {
        out.push_str(&text);
        out.push('\n');
    };
    line(format!(
        "cpu     {} ({} CPUs), {}; kernel {}; {}-byte pages; mobmem {}",
        h.cpu_model.as_deref().unwrap_or("model unknown"),
        h.cpus,
        h.arch,
        h.kernel_release,
        h.page_bytes,
        h.mobmem_version,
    ));
    line(format!("corpus  {}", c.corpus.description));
    line(format!(
        "rounds  {}: ns per page, median and the 10th and 90th percentiles over the rounds",
        c.rounds
    ));
    if !h.optimized_build {
        line("warning: a debug build; its figures are no measure of this CPU".into());
    }
    if !c.region.huge_pages_advised_off {
        line("warning: huge pages could not be advised off: a touch may fault a huge page".into());
    }
    line(String::new());
    line(format!(
        "{:<20} {:>10} {:>10} {:>10} {:>15}",
        "figure", "median", "p10", "p90", "pages a round"
    ));
    let mut row = |name: &str, f: &Figure| {
        line(format!(
            "{name:<20} {:>10.1} {:>10.1} {:>10.1} {:>15}",
            f.median, f.p10, f.p90, f.pages_per_round
        ))
    };
    for codec in &c.compression {
        row(&format!("{} compress", codec.codec), &codec.compress);
        row(&format!("{} decompress", codec.codec), &codec.decompress);
    }
    row("page copy", &c.page_copy);
    row("first-touch fault", &c.first_touch_fault);
    for n in &c.not_measured {
        line(format!("{}: not measured: {}", n.figure, n.reason));
    }
    line(String::new());
    let mut header = format!("{:<8} {:>6}", "kind", "pages");
    for codec in &c.compression {
        let name = codec.codec.name();
        header += &format!(
            " {:>10} {:>13} {:>15}",
            format!("{name} ratio"),
            format!("{name} compress"),
            format!("{name} decompress")
        );
    }
    line(header);
    for (k, count) in c.corpus.kinds.iter().enumerate() {
        let mut text = format!("{:<8} {:>6}", count.kind.name(), count.pages);
        for codec in &c.compression {
            let kind = &codec.kinds[k];
            text += &format!(
                " {:>10.2} {:>13.1} {:>15.1}",
                kind.ratio, kind.compress.median, kind.decompress.median
            );
        }
        line(text);
    }
    let mut all = format!("{:<8} {:>6}", "all", c.corpus.pages);
    for codec in &c.compression {
        all += &format!(
            " {:>10.2} {:>13.1} {:>15.1}",
            codec.ratio, codec.compress.median, codec.decompress.median
        );
    }
    line(all);
    out
}

fn restore(args: RestoreArgs) -> Result<()> {
    let path = &args.state_file;
    // A capture (of an older mobmem, which keeps no state file) changing the same tracing
    // settings finishes first.
    let _lock = CaptureLock::acquire(&AtomicBool::new(false), &|m: &str| crate::note(m))?;
    // A report that cannot fail: a closed stdout must not stop the undos half way.
    let say = |line: String| {
        let _ = writeln!(std::io::stdout(), "{line}");
    };
    let (restored, failures) = state::restore(path, &mut |step| match &step.result {
        Ok(()) => say(format!("ok: {}", step.change.describe())),
        Err(e) => say(format!("FAILED: {}: {e}", step.change.describe())),
    })?;
    match restored {
        Restored::Nothing => say(format!("nothing to restore: no {}", path.display())),
        Restored::Done { command, pid } if failures == 0 => say(format!(
            "restored everything the {command} run (pid {pid}) left; removed {}",
            path.display()
        )),
        Restored::Done { command, pid } => bail!(
            "{failures} change(s) the {command} run (pid {pid}) left could not be put back; \
             they stay listed in {}: fix the cause and run `mobmem host restore` again",
            path.display()
        ),
    }
    Ok(())
}

/// How a host command names, in the messages at its end, what an interrupt stops and
/// what it changed.
pub(crate) struct Wording {
    /// What an interrupt stops ("workers").
    pub(crate) stopped: &'static str,
    /// What the command changed ("KSM settings").
    pub(crate) settings: &'static str,
    /// Said before each change that could not be undone.
    pub(crate) undo_failed: &'static str,
}

/// The end of a host command's changes: report each undo that failed and close
/// `journal`, which removes the state file only if nothing is left to put back. Whether
/// everything was put back.
pub(crate) fn close_journal(journal: &Journal, failures: &[String], wording: &Wording) -> bool {
    for f in failures {
        crate::note(&format!("error: {} {f}", wording.undo_failed));
    }
    let closed = journal.close();
    if let Err(e) = &closed {
        crate::note(&format!("error: {e}"));
    }
    failures.is_empty() && closed.is_ok()
}

/// A host command's outcome once its changes are undone (`restored`: all of them).
/// After an interrupt the process ends here (status 130), saying whether its settings
/// are back; a failed run's error says so when they are not.
pub(crate) fn after_undo<T>(
    outcome: mobmem::Result<T>,
    interrupted: bool,
    restored: bool,
    wording: &Wording,
) -> Result<T> {
    let Wording {
        stopped, settings, ..
    } = wording;
    if interrupted {
        crate::note(&format!(
            "interrupted: {stopped} stopped, {settings} {}",
            if restored {
                "restored"
            } else {
                "NOT all restored"
            }
        ));
        std::process::exit(130);
    }
    match outcome {
        Ok(o) if restored => Ok(o),
        // The run's results are not shown: a machine left changed is the news.
        Ok(_) => bail!(
            "some {settings} could not be restored (each is listed above); the state \
             file keeps them for `mobmem host restore`"
        ),
        // The undo failures were reported already; the run's own error is the error.
        Err(e) if restored => Err(e.into()),
        Err(e) => bail!("{e}\nand some {settings} could not be restored"),
    }
}
