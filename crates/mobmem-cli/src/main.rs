//! `mobmem`: the command-line front end. Every command's `--help` explains it.

mod bench;
mod capture;
mod fs;
mod host;
mod import;
mod ksm;
mod mrc;
mod numbers;
mod reclaim;
mod reclaim_validate;
mod swap;
mod time_validate;
mod trace_format;

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use anyhow::{bail, Context, Result};
use clap::{Args, Parser, Subcommand};
use indicatif::{ProgressBar, ProgressStyle};

use mobmem::config_file::Echo;
use mobmem::devices::CostModel;
use mobmem::experiments::overrides::{self, Override, SweepPoint, SweptKey};
use mobmem::experiments::reproductions::{self, REPRODUCTIONS};
use mobmem::experiments::sensitivity;
use mobmem::experiments::{ExperimentFile, RunOptions};
use mobmem::mm::placement::sim::{run_source, run_trace, RunSetup};
use mobmem::mm::placement::{find_policy, Capacity, PolicyInfo, REGISTRY};
use mobmem::output::{Existing, Placed};
use mobmem::report;
use mobmem::trace;
use mobmem::workload;

/// The largest file `report summary --write-into` reads (a README is a few tens of KB).
const MAX_SUMMARY_FILE_BYTES: u64 = 16 << 20;

#[derive(Parser)]
#[command(
    name = "mobmem",
    version,
    about = "Trace-driven simulator of memory management on mobile (Android/Linux) devices",
    long_about = "Trace-driven simulator of memory management on mobile (Android/Linux) devices.\n\n\
Start with `mobmem reproduce all --out report` to run the papers' experiments and write \
report/index.html, or `mobmem sim --trace FILE --policy lru --capacity 1000` to run one policy \
on your own trace."
)]
struct Cli {
    /// Worker threads for sweeps, 1 to 1024 (default: all cores). Results do not depend
    /// on it.
    #[arg(long, global = true, value_parser = numbers::threads, allow_negative_numbers = true)]
    threads: Option<usize>,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Simulate one policy on one trace and print what it measured.
    Sim(SimArgs),
    /// A miss-ratio curve: a policy's hits and misses at many cache sizes, LRU exactly
    /// in one pass (or sampled by SHARDS), other policies simulated at each size.
    Mrc(mrc::MrcArgs),
    /// Generate a synthetic Android workload trace from a preset.
    Gen(GenArgs),
    /// Run an experiment file (TOML, of any kind) and write its report to DIR/<name>/.
    Run(RunArgs),
    /// Reproduce a paper's experiment (or `all`): run its shipped experiment file and
    /// write the report with DIR/index.html.
    Reproduce(ReproduceArgs),
    /// Read reports written by `run` and `reproduce`.
    Report {
        #[command(subcommand)]
        command: ReportCommand,
    },
    /// Inspect or convert trace files.
    Trace {
        #[command(subcommand)]
        command: TraceCommand,
    },
    /// List the policies of the registry.
    Policies,
    /// List the built-in device profiles (memory, NVM, flash), zram profiles, cost models
    /// and file-system platforms an experiment file may name.
    Devices,
    /// Measure simulator throughput and memory per distinct page.
    Bench(bench::BenchArgs),
    /// Swap apps' memory to NVM, flash or zram: simulate an architecture on a trace (or
    /// replay a trace's swap events); `--list` shows the architectures.
    Swap(swap::SwapArgs),
    /// Capture a live Linux workload with ftrace (root): run COMMAND, write its trace.
    Capture(capture::CaptureArgs),
    /// Linux page reclaim on a trace: stock 3.4, FMP, memcg-low and MGLRU side by side
    /// (interactive faults, response time, scan work); `--list` shows the policies.
    Reclaim(reclaim::ReclaimArgs),
    /// The compressed flash file system: analyze real files, measure codecs.
    Fs {
        #[command(subcommand)]
        command: fs::FsCommand,
    },
    /// KSM (kernel samepage merging): simulate ksmd on the Android preset or a snapshot
    /// and print its counters and curve.
    Ksm(ksm::KsmArgs),
    /// Fingerprint the pages of live processes into a snapshot file and report how much
    /// deduplication could save (zero, duplicate, unique pages).
    Snapshot(ksm::SnapshotArgs),
    /// Run the real kernel's KSM on processes with known content, the simulator on the
    /// same content, and print both side by side (root; restores every KSM setting).
    KsmValidate(ksm::ValidateArgs),
    /// Run a workload of known accesses in a memory cgroup at several limits (zram as
    /// swap), capture it, replay it in the simulator's `workingset` policy and print
    /// refaults, faults, swap and zram's pool side by side (root; restores every
    /// setting).
    ReclaimValidate(reclaim_validate::ReclaimValidateArgs),
    /// Run a touch task beside the real ksmd on one CPU at several scan rates, replay
    /// them on the simulator's time model and print the touch's response inflation and
    /// ksmd's CPU share side by side (root; restores KSM's settings and ksmd's CPUs).
    TimeValidate(time_validate::TimeValidateArgs),
    /// Deal with what host commands (reclaim-validate, ksm-validate, time-validate,
    /// capture) changed
    /// on this machine: `host restore` puts back what a killed run left; `host costs`
    /// measures this CPU's per-page costs (compression, a page copy, a first-touch fault).
    Host {
        #[command(subcommand)]
        command: host::HostCommand,
    },
}

#[derive(Args)]
struct SimArgs {
    /// Trace file (.mmt, .csv, .lis, oracleGeneral, .vscsi, .twr; optionally compressed).
    #[arg(long)]
    trace: PathBuf,
    #[command(flatten)]
    format: crate::trace_format::TraceFormat,
    /// Policy name (see `mobmem policies`). Several, comma-separated (`lru,arc,s3fifo`),
    /// run side by side on one decoded copy of the trace, in parallel: a row per policy
    /// and capacity.
    #[arg(long, required = true, value_delimiter = ',')]
    policy: Vec<String>,
    /// Memory size in pages (for hybrid policies: DRAM + PCM), or in bytes with a unit
    /// (64MiB, 512KB, 4096B) on a trace with object sizes (oracleGeneral, vscsi, twr),
    /// where each object takes its size, as in libCacheSim. Several, comma-separated, are
    /// simulated on one decoded copy of the trace, in parallel.
    #[arg(long, required = true, value_delimiter = ',', value_parser = numbers::memory_size, allow_negative_numbers = true)]
    capacity: Vec<numbers::MemorySize>,
    /// Share of memory that is DRAM, for hybrid policies.
    #[arg(long, default_value_t = 0.05, allow_negative_numbers = true)]
    dram_fraction: f64,
    /// Cost model: paper-relative or table1-ns.
    #[arg(long, default_value = "paper-relative")]
    cost: String,
    /// Requests that only warm the cache up: the figures count from the request after
    /// them (capacities in pages).
    #[arg(long, default_value_t = 0, value_name = "REQUESTS")]
    warmup: u64,
    /// The miss ratio over time: print, instead of the figures, hits and misses per
    /// window of this many requests (after the warm-up) as CSV (`policy,capacity,
    /// first_request,requests,misses,miss_ratio`), or as JSON with --json (capacities
    /// in pages).
    #[arg(long, default_value_t = 0, value_name = "REQUESTS")]
    window: u64,
    /// With --window, also write DIR/windows.csv and DIR/windows.svg: the miss ratio of
    /// each window over the requests read by its end, a line a policy at each capacity.
    #[arg(long, value_name = "DIR", requires = "window")]
    out: Option<PathBuf>,
    /// Policies that hash pages (w-tinylfu's sketch, hyperbolic's table) hash the trace's
    /// object ids, as libCacheSim does, instead of mobmem's page ids (numbered in the
    /// order pages first appear): their counts are then libCacheSim's. For traces of
    /// objects (oracleGeneral, vscsi, twr, a CSV by obj-id-col), in pages or bytes; the
    /// trace is read once more for its ids, or read whole.
    #[arg(long)]
    hash_object_ids: bool,
    /// Print every metric as JSON instead of a table.
    #[arg(long)]
    json: bool,
}

#[derive(Args)]
struct GenArgs {
    /// Preset name (see --list, which names the page describing each).
    #[arg(required_unless_present_any = ["list", "config", "show"])]
    preset: Option<String>,
    /// Generate from a config file (TOML; --show PRESET prints one). Alone: a config of
    /// the app model (docs/workloads.md) instead of a preset; after a preset with a model
    /// of its own (app-cycling, gallery-usb): that preset's parameters.
    #[arg(long)]
    config: Option<PathBuf>,
    /// Print the named preset's full config as TOML (to save, edit and pass to --config).
    #[arg(long, value_name = "PRESET", conflicts_with_all = ["preset", "config", "out"])]
    show: Option<String>,
    /// Random seed: the same seed gives a byte-identical trace.
    #[arg(long, default_value_t = 1, value_parser = numbers::non_negative::<u64>, allow_negative_numbers = true)]
    seed: u64,
    /// Multiply the preset's length.
    #[arg(long, allow_negative_numbers = true)]
    scale: Option<f64>,
    /// Output file; .mmt (binary) or .csv (text), by extension.
    #[arg(long, required_unless_present_any = ["list", "show"])]
    out: Option<PathBuf>,
    /// List the presets and exit.
    #[arg(long)]
    list: bool,
    /// gallery-usb only: leave the background USB transfer out.
    #[arg(long)]
    no_background: bool,
}

#[derive(Args)]
struct RunArgs {
    /// Experiment file (docs/experiment-files.md lists every key of every kind;
    /// experiments/reference.toml those of the default kind, `cache`).
    experiment: PathBuf,
    /// Report folder: the report goes to OUT/NAME/ (NAME: the experiment's name), the
    /// page of every report in OUT to OUT/index.html. (`reproduce` writes to `report`.)
    #[arg(long, default_value = "runs")]
    out: PathBuf,
    /// Write even where the report folder `OUT/NAME`, `OUT/index.html` or
    /// `OUT/provenance.json` exists and is not mobmem's own (an earlier report of mobmem's
    /// is always replaced): the foreign one is kept whole, renamed to NAME.replaced-N
    /// beside it. Without it, such a target stops the command before anything runs.
    #[arg(long)]
    force: bool,
    /// Run seeds 1..=N instead of the file's `seeds`. 1 to 100.
    #[arg(long, value_parser = numbers::seeds, allow_negative_numbers = true)]
    seeds: Option<u64>,
    /// Folder of real media and text files, for files of kind `fs` (instead of the file's
    /// `media`; default target/media).
    #[arg(long)]
    media: Option<PathBuf>,
    /// Files of kind `phone`: also write the run of each configuration (the first seed)
    /// as a Perfetto trace, OUT-<config>.pftrace for OUT.pftrace (runs/x.pftrace gives
    /// runs/x-all-off.pftrace and runs/x-all-on.pftrace), to open in ui.perfetto.dev:
    /// what each thread ran when, memory, pressure, launches and kills
    /// (docs/time-model.md, "Looking at it in Perfetto"). A trace mobmem wrote before is
    /// replaced; any other file there stops the command unless --force.
    #[arg(long, value_name = "OUT.pftrace")]
    perfetto: Option<PathBuf>,
    #[command(flatten)]
    changes: KeyChanges,
}

/// Keys of the experiment file changed from the command line.
#[derive(Args)]
struct KeyChanges {
    /// Change one key of the experiment file before it runs: a dotted path into its
    /// tables, a number for a list's element (`workloads.0.seed=3`), and a TOML value
    /// (`60`, `0.5`, `true`, `[0.05, 0.2]`; a bare word is a string). The file is then
    /// checked as if written so, and the report's provenance lists the change.
    /// Repeatable.
    #[arg(long = "set", value_name = "KEY=VALUE")]
    set: Vec<String>,
    /// A parameter study: run the experiment once for each value of KEY (commas inside
    /// [...] do not split), each point reported as NAME-KEY-VALUE, and write the results
    /// of every point into OUT/NAME.sweep.csv. Repeatable: the grid of every key, the
    /// first varying slowest (at most 1000 points).
    #[arg(long = "sweep", value_name = "KEY=V1,V2,...")]
    sweep: Vec<String>,
}

impl KeyChanges {
    /// The `--set` changes and the points of the `--sweep` grid (one empty point when
    /// there is no sweep), parsed and counted.
    fn parse(&self) -> Result<(Vec<Override>, Vec<SweepPoint>)> {
        let sets = (self.set.iter())
            .map(|t| Override::parse("--set", t))
            .collect::<mobmem::Result<Vec<_>>>()?;
        let swept = (self.sweep.iter())
            .map(|t| SweptKey::parse(t))
            .collect::<mobmem::Result<Vec<_>>>()?;
        overrides::check_count(sets.len(), swept.len())?;
        let points = overrides::sweep_points(&swept)?;
        Ok((sets, points))
    }

    fn swept_keys(&self) -> Vec<String> {
        (self.sweep.iter())
            .filter_map(|t| t.split_once('=').map(|(k, _)| k.trim().to_string()))
            .collect()
    }
}

#[derive(Args)]
struct ReproduceArgs {
    /// Reproduction name (a file shipped in experiments/, listed below), or `all`.
    name: String,
    /// Folder of real media and text files for the file-system reproduction
    /// (made by scripts/make-media.sh).
    #[arg(long, default_value = "target/media")]
    media: PathBuf,
    /// Report folder: each reproduction's report goes to OUT/NAME/, the page of every
    /// report in OUT to OUT/index.html.
    #[arg(long, default_value = "report")]
    out: PathBuf,
    /// Write even where the report folder `OUT/NAME`, `OUT/index.html` or
    /// `OUT/provenance.json` exists and is not mobmem's own (an earlier report of mobmem's
    /// is always replaced): the foreign one is kept whole, renamed to NAME.replaced-N
    /// beside it. Without it, such a target stops the command before anything runs.
    #[arg(long)]
    force: bool,
    /// Run every synthetic workload with seeds 1..=N; each claim reports the mean over
    /// the seeds with a 95% interval (Student t). 1 to 100.
    #[arg(long, default_value_t = reproductions::DEFAULT_SEEDS, value_parser = numbers::seeds, allow_negative_numbers = true)]
    seeds: u64,
    /// Also rerun the experiment with each constant it assumes (its file's `[[assumed]]`:
    /// a key, the low and high ends of a plausible range, the range's source) at each end
    /// of its range, all else as shipped and the same seeds, and compare every claim's
    /// verdict: a claim is robust when no single end changes it. Writes
    /// OUT/NAME/sensitivity.json, a tornado plot per claim (sensitivity-CLAIM.svg) and a
    /// section of the page; `report summary` then adds a robust column. Costs two more
    /// runs of the experiment per constant.
    #[arg(long)]
    sensitivity: bool,
    #[command(flatten)]
    changes: KeyChanges,
}

#[derive(Subcommand)]
enum ReportCommand {
    /// Print the claims of every experiment under DIR as a markdown table (reproduction,
    /// claim, paper, mean [95% interval], verdict), from their claims.json, with the
    /// command that made each (its provenance.json); then their findings.
    Summary {
        /// A report folder (`--out` of `reproduce` or `run`).
        dir: PathBuf,
        /// Instead of printing them, write the claims into FILE between the lines
        /// `<!-- summary:begin ... -->` and `<!-- summary:end -->` (the README's) and the
        /// findings between `<!-- findings:begin ... -->` and `<!-- findings:end -->`
        /// (docs/results.md's), whichever of the two FILE has.
        #[arg(long, value_name = "FILE")]
        write_into: Option<PathBuf>,
    },
}

#[derive(Subcommand)]
enum TraceCommand {
    /// Describe a trace: events, pages, processes, foreground/background split.
    Info {
        file: PathBuf,
        #[command(flatten)]
        format: trace_format::TraceFormat,
        /// Print as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Convert a trace to .mmt or .csv (by the output's extension).
    Convert {
        input: PathBuf,
        output: PathBuf,
        #[command(flatten)]
        format: trace_format::TraceFormat,
    },
    /// Build a trace from another tool's output (`--from ftrace`: trace-cmd report,
    /// /sys/kernel/tracing/trace, Android atrace) and say what was found and skipped.
    Import(import::ImportArgs),
}

fn main() -> ExitCode {
    let cli = parse_command_line();
    // Die quietly when the reader of our output goes away (`mobmem ... | head`), as
    // other Unix tools do, instead of failing on the next write. Not a command that
    // changes the machine: a write to a closed pipe (a killed worker's input, a gone
    // terminal's stderr) must fail as an error, never kill it before it puts things back.
    let changes_host = matches!(
        cli.command,
        Command::Capture(_)
            | Command::KsmValidate(_)
            | Command::ReclaimValidate(_)
            | Command::TimeValidate(_)
            | Command::Host {
                command: host::HostCommand::Restore(_)
            }
    );
    if !changes_host {
        sigpipe::reset();
    }
    if let Some(threads) = cli.threads {
        if let Err(e) = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build_global()
        {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    }
    let result = match cli.command {
        Command::Sim(args) => sim(args),
        Command::Mrc(args) => mrc::run(args),
        Command::Gen(args) => gen(args),
        Command::Run(args) => run(args),
        Command::Reproduce(args) => reproduce(args),
        Command::Report { command } => report_command(command),
        Command::Trace { command } => trace_command(command),
        Command::Policies => {
            for p in REGISTRY {
                println!("{:<12} {:<12} {}", p.name, p.family.name(), p.summary);
            }
            Ok(())
        }
        Command::Devices => {
            use mobmem::devices::registry::{COST_MODELS, DEVICES, PLATFORMS, ZRAM_PROFILES};
            for d in DEVICES {
                println!("{:<15} {:<9} {}", d.name, d.role.name(), d.summary);
            }
            for z in ZRAM_PROFILES {
                println!("{:<15} {:<9} {}", z.name, "zram", z.summary);
            }
            for m in COST_MODELS {
                println!("{:<15} {:<9} {}", m.name, "cost", m.summary);
            }
            for p in PLATFORMS {
                println!("{:<15} {:<9} {}", p.name, "platform", p.summary);
            }
            Ok(())
        }
        Command::Bench(args) => bench::bench(args),
        Command::Fs { command } => fs::run(command),
        Command::Swap(args) => swap::run(args),
        Command::Ksm(args) => ksm::run(args),
        Command::Snapshot(args) => ksm::snapshot(args),
        Command::KsmValidate(args) => ksm::validate(args),
        Command::ReclaimValidate(args) => reclaim_validate::run(args),
        Command::TimeValidate(args) => time_validate::run(args),
        Command::Capture(args) => capture::run(args),
        Command::Host { command } => host::run(command),
        Command::Reclaim(args) => reclaim::run(args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

/// A message on stderr that cannot fail: after SIGHUP the terminal may be gone, and a
/// failed write must neither stop settings from being restored nor panic a signal
/// handler.
pub(crate) fn note(message: &str) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr(), "{message}");
}

fn bar(len: u64, what: &str) -> ProgressBar {
    let pb = ProgressBar::new(len);
    pb.set_style(
        ProgressStyle::with_template("{msg:>12} [{bar:40}] {pos}/{len} ({eta})")
            .expect("valid template")
            .progress_chars("=> "),
    );
    pb.set_message(what.to_string());
    pb
}

/// The sizes of `--capacity`, all in pages or all in bytes.
enum Capacities {
    Pages(Vec<u64>),
    Bytes(Vec<u64>),
}

fn capacities(sizes: &[numbers::MemorySize]) -> Result<Capacities> {
    use numbers::MemorySize;
    let (mut pages, mut bytes) = (Vec::new(), Vec::new());
    for size in sizes {
        match *size {
            MemorySize::Pages(p) => pages.push(p),
            MemorySize::Bytes(b) => bytes.push(b),
        }
    }
    match (pages.is_empty(), bytes.is_empty()) {
        (_, true) => Ok(Capacities::Pages(pages)),
        (true, false) => Ok(Capacities::Bytes(bytes)),
        (false, false) => {
            bail!("--capacity: give every size in pages or every size in bytes, not both")
        }
    }
}

/// The policies of a `--policy` list, in its order; a name given twice is refused.
pub(crate) fn find_policies(names: &[String]) -> Result<Vec<&'static PolicyInfo>> {
    let mut policies: Vec<&'static PolicyInfo> = Vec::new();
    for name in names {
        let info = find_policy(name.trim())?;
        if policies.iter().any(|p| p.name == info.name) {
            bail!("--policy: {} is given twice", info.name);
        }
        policies.push(info);
    }
    Ok(policies)
}

fn sim(args: SimArgs) -> Result<()> {
    if args.warmup > 0 && matches!(capacities(&args.capacity)?, Capacities::Bytes(_)) {
        bail!("--warmup applies to capacities in pages");
    }
    let policies = find_policies(&args.policy)?;
    if args.window > 0 {
        return sim_windows(&args, &policies);
    }
    let info = match policies.as_slice() {
        [one] => *one,
        _ => return sim_policies(&args, &policies),
    };
    let pages = match capacities(&args.capacity)? {
        Capacities::Bytes(bytes) => return sim_bytes(&args, info, &bytes),
        Capacities::Pages(pages) => pages,
    };
    if pages.len() > 1 {
        return sim_sizes(&args, info, &pages);
    }
    let setup = RunSetup {
        policy: info,
        capacity: Capacity::of_memory(info.family, pages[0], args.dram_fraction)?,
        cost: CostModel::named(&args.cost)?,
        devices: Default::default(),
        clock: None,
        warmup: args.warmup,
        object_ids: object_ids(&args, None)?,
    };
    let started = Instant::now();
    let metrics = if info.offline {
        let t = trace::read_all(&args.trace, args.format.get()?)?;
        run_trace(&t, &setup)?
    } else {
        let mut source = trace::open(&args.trace, args.format.get()?)?;
        let pb = ProgressBar::new_spinner();
        pb.set_message("simulating");
        let m = run_source(source.as_mut(), &setup, &mut |done| pb.set_position(done))?;
        pb.finish_and_clear();
        m
    };
    let seconds = started.elapsed().as_secs_f64();
    warn_if_blind(info, &[&metrics]);
    if args.json {
        let row = sim_json(
            &args,
            info.family,
            info.name,
            Some(&setup.capacity),
            info.shown_values(&metrics),
        );
        println!("{}", serde_json::to_string_pretty(&row)?);
    } else {
        println!("trace      {}", args.trace.display());
        println!(
            "policy     {} ({}), DRAM {} pages, PCM {} pages",
            info.name,
            info.family.name(),
            setup.capacity.dram,
            setup.capacity.pcm
        );
        for (name, value) in info.shown_values(&metrics) {
            println!("{name:<28} {}", report::short(value));
        }
        eprintln!(
            "{} accesses in {:.2} s ({:.1} M accesses/s)",
            metrics.accesses,
            seconds,
            metrics.accesses as f64 / seconds / 1e6
        );
    }
    Ok(())
}

/// `sim` with several policies: the trace decoded once, every policy at every capacity,
/// in parallel; a row (or a JSON object) per policy and capacity, policies in the order
/// given. With capacities in pages the table shows the figures every policy can make
/// (a hybrid policy's PCM figures only when every policy given is hybrid).
fn sim_policies(args: &SimArgs, policies: &[&'static PolicyInfo]) -> Result<()> {
    use mobmem::core::stats::Stats;
    use mobmem::mm::placement::{bytes, Family};
    use rayon::prelude::*;
    let started = Instant::now();
    let (rows, accesses): (Vec<SimRow>, u64) = match capacities(&args.capacity)? {
        Capacities::Pages(pages) => {
            let cost = CostModel::named(&args.cost)?;
            for info in policies {
                Capacity::of_memory(info.family, pages[0], args.dram_fraction)?;
            }
            let t = trace::read_all(&args.trace, args.format.get()?)?;
            let ids = object_ids(args, Some(&t.tables))?;
            let all: Vec<Vec<mobmem::mm::placement::metrics::Metrics>> = policies
                .par_iter()
                .map(|info| {
                    let base = RunSetup {
                        policy: info,
                        capacity: Capacity::of_memory(info.family, pages[0], args.dram_fraction)?,
                        cost: cost.clone(),
                        devices: Default::default(),
                        clock: None,
                        warmup: args.warmup,
                        object_ids: ids.clone(),
                    };
                    mobmem::mm::placement::mrc::simulate_each(&t, &base, &pages, args.dram_fraction)
                })
                .collect::<mobmem::Result<_>>()?;
            let all_hybrid = policies.iter().all(|p| p.family == Family::Hybrid);
            let mut rows = Vec::new();
            let mut accesses = 0;
            for (info, metrics) in policies.iter().zip(&all) {
                warn_if_blind(info, &metrics.iter().collect::<Vec<_>>());
                for (&capacity, m) in pages.iter().zip(metrics) {
                    let mut values = m.values();
                    values.retain(|(name, _)| {
                        (if all_hybrid {
                            Family::Hybrid
                        } else {
                            Family::SingleTier
                        })
                        .has_metric(name)
                    });
                    accesses += m.accesses;
                    rows.push(SimRow {
                        policy: info,
                        capacity,
                        tiers: Some(Capacity::of_memory(
                            info.family,
                            capacity,
                            args.dram_fraction,
                        )?),
                        values,
                    });
                }
            }
            (rows, accesses)
        }
        Capacities::Bytes(sizes) => {
            for info in policies {
                let no_future: Option<std::sync::Arc<[u32]>> =
                    info.offline.then(|| Vec::new().into());
                bytes::ByteCache::with_future(info, sizes[0], 0, no_future)?;
            }
            let requests = sized_requests(&args.trace, args.format.get()?, args.hash_object_ids)?;
            let all: Vec<Vec<bytes::ByteMetrics>> = policies
                .par_iter()
                .map(|info| bytes::simulate_each_bytes(&requests, info, &sizes))
                .collect::<mobmem::Result<_>>()?;
            let mut rows = Vec::new();
            let mut accesses = 0;
            for (info, metrics) in policies.iter().zip(&all) {
                for (&capacity, m) in sizes.iter().zip(metrics) {
                    accesses += m.accesses;
                    let mut values = m.values();
                    values.retain(|(name, _)| *name != "capacity_bytes");
                    rows.push(SimRow {
                        policy: info,
                        capacity,
                        tiers: None,
                        values,
                    });
                }
            }
            (rows, accesses)
        }
    };
    let seconds = started.elapsed().as_secs_f64();
    if args.json {
        let json: Vec<serde_json::Value> = rows
            .iter()
            .map(|r| {
                let mut row = sim_json(
                    args,
                    r.policy.family,
                    r.policy.name,
                    r.tiers.as_ref(),
                    r.values.clone(),
                );
                if r.tiers.is_none() {
                    row["capacity_bytes"] = r.capacity.into();
                }
                row
            })
            .collect();
        println!("{}", serde_json::to_string_pretty(&json)?);
    } else {
        println!("trace      {}", args.trace.display());
        let unit = if rows[0].tiers.is_some() {
            "pages"
        } else {
            "bytes"
        };
        print!("{:>12} {:>14}", "policy", format!("capacity_{unit}"));
        for (name, _) in &rows[0].values {
            print!(" {name:>14}");
        }
        println!();
        for r in &rows {
            print!("{:>12} {:>14}", r.policy.name, r.capacity);
            for &(_, v) in &r.values {
                // In bytes, counts and bytes in full and ratios to four decimals, as
                // libCacheSim prints them.
                match (r.tiers.is_none(), v.fract() == 0.0) {
                    (true, true) => print!(" {v:>14}"),
                    (true, false) => print!(" {v:>14.4}"),
                    (false, _) => print!(" {:>14}", report::short(v)),
                }
            }
            println!();
        }
        eprintln!(
            "{} policies x {} capacities, {} requests in {:.2} s",
            policies.len(),
            rows.len() / policies.len(),
            accesses,
            seconds
        );
    }
    Ok(())
}

/// `sim --window`: hits and misses per window of requests, for every policy at every
/// capacity (in pages), the trace decoded once and the runs in parallel.
fn sim_windows(args: &SimArgs, policies: &[&'static PolicyInfo]) -> Result<()> {
    use rayon::prelude::*;
    let Capacities::Pages(pages) = capacities(&args.capacity)? else {
        bail!("--window applies to capacities in pages");
    };
    for info in policies {
        Capacity::of_memory(info.family, pages[0], args.dram_fraction)?;
    }
    let cost = CostModel::named(&args.cost)?;
    let t = trace::read_all(&args.trace, args.format.get()?)?;
    let ids = object_ids(args, Some(&t.tables))?;
    let runs: Vec<(&'static PolicyInfo, u64)> = policies
        .iter()
        .flat_map(|&p| pages.iter().map(move |&c| (p, c)))
        .collect();
    let all: Vec<Vec<mobmem::mm::placement::sim::WindowPoint>> = runs
        .par_iter()
        .map(|&(info, capacity)| {
            let setup = RunSetup {
                policy: info,
                capacity: Capacity::of_memory(info.family, capacity, args.dram_fraction)?,
                cost: cost.clone(),
                devices: Default::default(),
                clock: None,
                warmup: args.warmup,
                object_ids: ids.clone(),
            };
            mobmem::mm::placement::sim::run_trace_windows(&t, &setup, args.window)
                .map(|(_, windows)| windows)
        })
        .collect::<mobmem::Result<_>>()?;
    if let Some(dir) = &args.out {
        write_windows(dir, &args.trace, &runs, &all)?;
    }
    if args.json {
        let rows: Vec<serde_json::Value> = runs
            .iter()
            .zip(&all)
            .flat_map(|(&(info, capacity), windows)| {
                windows.iter().map(move |w| {
                    serde_json::json!({
                        "policy": info.name,
                        "capacity": capacity,
                        "first_request": w.first_request,
                        "requests": w.requests,
                        "misses": w.misses,
                        "miss_ratio": w.miss_ratio(),
                    })
                })
            })
            .collect();
        println!("{}", serde_json::to_string_pretty(&rows)?);
    } else {
        println!("policy,capacity,first_request,requests,misses,miss_ratio");
        for (&(info, capacity), windows) in runs.iter().zip(&all) {
            for w in windows {
                println!(
                    "{},{capacity},{},{},{},{:.6}",
                    info.name,
                    w.first_request,
                    w.requests,
                    w.misses,
                    w.miss_ratio()
                );
            }
        }
    }
    Ok(())
}

/// DIR/windows.csv and DIR/windows.svg: each window's miss ratio at the count of requests
/// read by its end, a line a policy at each capacity (`lru 1000`).
fn write_windows(
    dir: &std::path::Path,
    trace: &std::path::Path,
    runs: &[(&'static PolicyInfo, u64)],
    all: &[Vec<mobmem::mm::placement::sim::WindowPoint>],
) -> Result<()> {
    let methods: Vec<String> = runs
        .iter()
        .map(|(info, capacity)| format!("{} {capacity}", info.name))
        .collect();
    let rows = methods
        .iter()
        .zip(all)
        .flat_map(|(method, windows)| {
            windows.iter().map(move |w| report::Row {
                keys: vec![method.clone(), (w.first_request + w.requests).to_string()],
                values: vec![
                    ("requests".into(), w.requests as f64),
                    ("misses".into(), w.misses as f64),
                    ("miss_ratio".into(), w.miss_ratio()),
                ],
            })
        })
        .collect();
    let plot = mrc::LinePlot {
        stem: "windows",
        title: "miss ratio over time",
        x: "requests_read",
        x_label: "requests read by the end of the window",
        own_csv: own_windows_csv,
        own_svg: own_windows_svg,
    };
    let axis = report::LineAxis {
        log: false,
        marks: Vec::new(),
    };
    mrc::write_line_plot(dir, &plot, rows, &methods, trace, &axis)
}

/// A table of windows mobmem wrote before (`DIR/windows.csv`), by its header.
fn own_windows_csv(path: &std::path::Path) -> bool {
    mobmem::output::file_head_is(path, |head| {
        head.starts_with("experiment,method,requests_read,metric,value\n")
    })
}

/// A plot of windows mobmem wrote before (`DIR/windows.svg`).
fn own_windows_svg(path: &std::path::Path) -> bool {
    mobmem::output::file_head_is(path, |head| {
        head.starts_with("<svg") && head.contains("miss ratio over time")
    })
}

/// The trace's object ids by page id, with `--hash-object-ids` (else `None`): from
/// `tables` when the trace was read whole, else from a reading of the trace (a reader has
/// its whole page table only at the end).
fn object_ids(
    args: &SimArgs,
    tables: Option<&trace::Tables>,
) -> Result<Option<std::sync::Arc<[u64]>>> {
    if !args.hash_object_ids {
        return Ok(None);
    }
    let ids = match tables {
        Some(tables) => tables.object_ids_to_hash(&args.trace)?,
        None => trace::object_ids_to_hash(&args.trace, args.format.get()?)?,
    };
    Ok(Some(ids))
}

/// The requests of the trace at `path` with their sizes, read whole, and its object ids
/// with `--hash-object-ids` (`hash_object_ids`): what `sim` and `mrc` run byte
/// capacities on.
pub(crate) fn sized_requests(
    path: &std::path::Path,
    format: Option<trace::Format>,
    hash_object_ids: bool,
) -> Result<mobmem::mm::placement::bytes::SizedRequests> {
    let mut source = trace::open(path, format)?;
    let mut requests = mobmem::mm::placement::bytes::read_sized(source.as_mut())?;
    if hash_object_ids {
        requests.object_ids = Some(source.tables()?.object_ids_to_hash(path)?);
    }
    Ok(requests)
}

/// One row of `sim` with several policies.
struct SimRow {
    policy: &'static PolicyInfo,
    /// In pages, or in bytes when `tiers` is `None`.
    capacity: u64,
    tiers: Option<Capacity>,
    values: Vec<(&'static str, f64)>,
}

/// Warns when the policy needs what the trace does not say: a policy that places pages
/// by foreground on a trace that marks no access as foreground.
fn warn_if_blind(
    info: &mobmem::mm::placement::PolicyInfo,
    metrics: &[&mobmem::mm::placement::metrics::Metrics],
) {
    if info.reads_foreground && metrics.iter().all(|m| m.fg_accesses == 0 && m.accesses > 0) {
        eprintln!(
            "warning: {} places pages by whether their app is in the foreground, and this \
             trace marks no access as foreground: every page was treated as background. \
             Give a trace that marks the foreground app (docs/trace-formats.md)",
            info.name
        );
    }
}

/// The JSON object of one run of `sim`: its trace and policy, the pages of each tier when
/// the capacity is in pages (`None` when it is in bytes), then every metric.
fn sim_json(
    args: &SimArgs,
    family: mobmem::mm::placement::Family,
    policy: &str,
    capacity: Option<&Capacity>,
    metrics: Vec<(&'static str, f64)>,
) -> serde_json::Value {
    let mut map = serde_json::Map::new();
    map.insert("trace".into(), args.trace.display().to_string().into());
    map.insert("policy".into(), policy.into());
    if let Some(capacity) = capacity {
        map.insert("dram_pages".into(), capacity.dram.into());
        if family.has_metric("pcm_pages") {
            map.insert("pcm_pages".into(), capacity.pcm.into());
        }
    }
    for (name, value) in metrics {
        map.insert(name.into(), json_number(value));
    }
    serde_json::Value::Object(map)
}

/// `sim` at several capacities: the trace decoded once, the sizes in parallel; a row (or
/// a JSON object) per capacity, in the order given.
fn sim_sizes(
    args: &SimArgs,
    info: &'static mobmem::mm::placement::PolicyInfo,
    capacities: &[u64],
) -> Result<()> {
    let started = Instant::now();
    let t = trace::read_all(&args.trace, args.format.get()?)?;
    let ids = object_ids(args, Some(&t.tables))?;
    let base = RunSetup {
        policy: info,
        capacity: Capacity::of_memory(info.family, capacities[0], args.dram_fraction)?,
        cost: CostModel::named(&args.cost)?,
        devices: Default::default(),
        clock: None,
        warmup: args.warmup,
        object_ids: ids.clone(),
    };
    let all = mobmem::mm::placement::mrc::simulate_each(&t, &base, capacities, args.dram_fraction)?;
    let seconds = started.elapsed().as_secs_f64();
    warn_if_blind(info, &all.iter().collect::<Vec<_>>());
    if args.json {
        let mut rows = Vec::new();
        for (&capacity, metrics) in capacities.iter().zip(&all) {
            let capacity = Capacity::of_memory(info.family, capacity, args.dram_fraction)?;
            rows.push(sim_json(
                args,
                info.family,
                info.name,
                Some(&capacity),
                info.shown_values(metrics),
            ));
        }
        println!("{}", serde_json::to_string_pretty(&rows)?);
    } else {
        println!("trace      {}", args.trace.display());
        println!("policy     {} ({})", info.name, info.family.name());
        let names: Vec<&str> = info
            .shown_values(&all[0])
            .into_iter()
            .map(|(n, _)| n)
            .collect();
        print!("{:>12}", "capacity");
        for n in &names {
            print!(" {:>14}", n);
        }
        println!();
        for (&capacity, metrics) in capacities.iter().zip(&all) {
            print!("{capacity:>12}");
            for (_, v) in info.shown_values(metrics) {
                print!(" {:>14}", report::short(v));
            }
            println!();
        }
        eprintln!("{} capacities in {:.2} s", capacities.len(), seconds);
    }
    Ok(())
}

/// `sim` with capacities in bytes ([`mobmem::mm::placement::bytes`]), for any single-tier
/// policy: one streamed run, or the trace decoded once and the sizes run in parallel (and
/// always for an offline policy, which needs the whole trace); a row (or a JSON object)
/// per capacity, in the order given.
fn sim_bytes(
    args: &SimArgs,
    info: &'static mobmem::mm::placement::PolicyInfo,
    capacities: &[u64],
) -> Result<()> {
    use mobmem::mm::placement::bytes;
    let started = Instant::now();
    // Checks the policy before reading the trace.
    let no_future: Option<std::sync::Arc<[u32]>> = info.offline.then(|| Vec::new().into());
    bytes::ByteCache::with_future(info, capacities[0], 0, no_future)?;
    let all = match capacities {
        // Hashing object ids needs the trace's whole page table, known only at its end.
        [capacity] if !info.offline && !args.hash_object_ids => {
            let mut source = trace::open(&args.trace, args.format.get()?)?;
            let pb = ProgressBar::new_spinner();
            pb.set_message("simulating");
            let m = bytes::run_source_bytes(source.as_mut(), info, *capacity, &mut |done| {
                pb.set_position(done)
            })?;
            pb.finish_and_clear();
            vec![m]
        }
        _ => {
            // Several sizes, or an offline policy: the trace decoded once, in memory.
            bytes::simulate_each_bytes(
                &sized_requests(&args.trace, args.format.get()?, args.hash_object_ids)?,
                info,
                capacities,
            )?
        }
    };
    let seconds = started.elapsed().as_secs_f64();
    if args.json {
        let rows: Vec<serde_json::Value> = all
            .iter()
            .map(|m| sim_json(args, info.family, info.name, None, m.values()))
            .collect();
        let value = match rows.as_slice() {
            [one] => one.clone(),
            _ => serde_json::Value::Array(rows),
        };
        println!("{}", serde_json::to_string_pretty(&value)?);
    } else {
        println!("trace      {}", args.trace.display());
        println!(
            "policy     {} (capacity in bytes; objects take their sizes)",
            info.name
        );
        let names: Vec<&str> = all[0].values().into_iter().map(|(n, _)| n).collect();
        for n in &names {
            print!("{n:>16}");
        }
        println!();
        for m in &all {
            for (_, v) in m.values() {
                // Counts and bytes in full; ratios to four decimals, as libCacheSim prints.
                if v.fract() == 0.0 {
                    print!("{v:>16}");
                } else {
                    print!("{v:>16.4}");
                }
            }
            println!();
        }
        let accesses: u64 = all.iter().map(|m| m.accesses).sum();
        eprintln!(
            "{} capacities, {} requests in {:.2} s ({:.1} M requests/s)",
            all.len(),
            accesses,
            seconds,
            accesses as f64 / seconds / 1e6
        );
    }
    Ok(())
}

pub(crate) fn json_number(v: f64) -> serde_json::Value {
    if v.is_finite() && v.fract() == 0.0 && v.abs() < 9.0e15 {
        serde_json::Value::from(v as i64)
    } else {
        serde_json::Number::from_f64(v)
            .map(Into::into)
            .unwrap_or(serde_json::Value::Null)
    }
}

fn gen(args: GenArgs) -> Result<()> {
    if args.list {
        for p in workload::PRESETS {
            println!("{:<14} {} ({})", p.name, p.summary, p.doc);
        }
        return Ok(());
    }
    if let Some(name) = args.show {
        print!("{}", workload::find_preset(&name)?.show()?);
        return Ok(());
    }
    let Some(out) = args.out else {
        bail!("give --out");
    };
    let preset = args
        .preset
        .as_deref()
        .map(workload::find_preset)
        .transpose()?;
    let mut params = match (preset, &args.config) {
        (Some(preset), None) => preset.params(),
        (Some(preset), Some(path)) => preset.load(path)?,
        (None, Some(path)) => Box::new(workload::load_config(path, Echo::Quote)?),
        (None, None) => bail!("give a preset or --config"),
    };
    let options = workload::GenOptions {
        seed: args.seed,
        scale: args.scale,
        no_background: args.no_background,
    };
    let t = workload::generate_with(params.as_mut(), &options)?;
    trace::write(&out, &t)?;
    eprintln!(
        "wrote {} ({} events, {} distinct pages)",
        out.display(),
        t.events.len(),
        t.footprint()
    );
    Ok(())
}

/// The config in the TOML file `path` given with --config (see [`parse_toml`]), or the
/// default config without one.
pub(crate) fn config_or_default<T>(path: Option<&std::path::Path>) -> Result<T>
where
    T: serde::de::DeserializeOwned + Default,
{
    match path {
        Some(path) => parse_toml(path, &mobmem::config_file::read(path)?),
        None => Ok(T::default()),
    }
}

/// Parse `text`, the content of the config file `path`. An error names the file, and
/// the line and column (the configs refuse unknown keys).
pub(crate) fn parse_toml<T: serde::de::DeserializeOwned>(
    path: &std::path::Path,
    text: &str,
) -> Result<T> {
    Ok(toml::from_str(text)
        .map_err(|e| mobmem::Error::config(path.display().to_string(), e.to_string().trim_end()))?)
}

fn progress_of(pb: &ProgressBar) -> impl Fn(usize, usize) + Sync + '_ {
    move |done, total| {
        pb.set_length(total as u64);
        pb.set_position(done as u64);
    }
}

/// The provenance of this command: this build, its command line, `seeds`, now, here.
fn provenance(seeds: Vec<u64>) -> report::Provenance {
    let dirty = match env!("MOBMEM_GIT_DIRTY") {
        "true" => Some(true),
        "false" => Some(false),
        _ => None,
    };
    report::Provenance::now(
        env!("CARGO_PKG_VERSION"),
        env!("MOBMEM_GIT_COMMIT"),
        dirty,
        std::env::args_os()
            .map(|a| a.to_string_lossy().into_owned())
            .collect(),
        seeds,
    )
}

/// The command line, parsed; `reproduce --help` lists the shipped experiment files.
fn parse_command_line() -> Cli {
    use clap::{CommandFactory, FromArgMatches};
    let mut list =
        String::from("Reproductions (each runs experiments/NAME.toml, shipped with mobmem):\n");
    for r in REPRODUCTIONS {
        list.push_str(&format!("  {:<22} {}\n", r.name, r.summary));
    }
    let command = Cli::command().mut_subcommand("reproduce", |c| c.after_help(list));
    let matches = command.get_matches();
    Cli::from_arg_matches(&matches).unwrap_or_else(|e| e.exit())
}

/// One experiment a command runs: a file with the command line's key changes (and a
/// sweep point's), under the point's name.
struct ChangedFile {
    file: ExperimentFile,
    /// Every change, as given (`--set` ones, then the point's): the provenance's.
    overrides: Vec<String>,
    /// The point's value of each swept key, as given (empty without a sweep).
    values: Vec<String>,
}

/// The experiments of a command: `load` (a file read with changes) once per point of
/// the sweep, with the `--set` changes and the point's; a point is named after the file
/// and its values ([`SweepPoint::name`]). Every one is read and checked before any runs.
fn changed_files(
    load: &dyn Fn(&[Override]) -> mobmem::Result<ExperimentFile>,
    sets: &[Override],
    points: &[SweepPoint],
) -> Result<Vec<ChangedFile>> {
    let texts = |o: &[Override]| o.iter().map(|o| o.text.clone()).collect::<Vec<_>>();
    if let [point] = points {
        if point.assignments.is_empty() {
            return Ok(vec![ChangedFile {
                file: load(sets)?,
                overrides: texts(sets),
                values: Vec::new(),
            }]);
        }
    }
    let base = load(sets)?.header.name;
    let mut files = Vec::with_capacity(points.len());
    for point in points {
        let changes: Vec<Override> = sets.iter().chain(&point.assignments).cloned().collect();
        let mut file = load(&changes)?;
        let name = point.name(&base);
        mobmem::experiments::config::check_name(&name, "--sweep").with_context(|| {
            format!("the sweep's point {name}: shorten the experiment's name with --set name=...")
        })?;
        file.header.name = name;
        let values = (point.assignments.iter())
            .map(|a| {
                a.text
                    .split_once('=')
                    .map_or("", |(_, v)| v.trim())
                    .to_string()
            })
            .collect();
        files.push(ChangedFile {
            file,
            overrides: texts(&changes),
            values,
        });
    }
    let mut names: Vec<&str> = files.iter().map(|f| f.file.header.name.as_str()).collect();
    names.sort_unstable();
    if let Some(w) = names.windows(2).find(|w| w[0] == w[1]) {
        bail!(
            "--sweep: two points are both named {} (values that differ only in characters a \
             folder name cannot hold); give them other values",
            w[0]
        );
    }
    Ok(files)
}

/// The metrics `run` prints of an experiment of `kind` without claims.
fn headline(kind: &str) -> &'static [&'static str] {
    match kind {
        "cache" => &["hit_ratio", "fg_hit_ratio", "fg_time", "energy_nj"],
        "phone" => &[
            "launch_mean_ms",
            "rt_p95_ms",
            "energy_mj",
            "swap_outs",
            "kills",
            "ksm_saved_mib",
        ],
        _ => &[],
    }
}

/// Runs `files` (of one command) under `out` with their key changes in the provenance,
/// then the index; with a sweep (`swept` keys), also the sweep's table of every point,
/// named after `sweep_name`. Returns the reports in order.
#[allow(clippy::too_many_arguments)]
fn run_changed(
    files: &[ChangedFile],
    options: &RunOptions,
    out: &std::path::Path,
    mut provenance: report::Provenance,
    existing: Existing,
    swept: &[String],
    sweep_name: Option<&str>,
    context: &dyn Fn(&ChangedFile) -> String,
    sensitivity: Option<&SensitivityOf<'_>>,
) -> Result<Vec<report::ExperimentReport>> {
    let names: Vec<&str> = files.iter().map(|f| f.file.header.name.as_str()).collect();
    report::check_outputs(out, &names, existing)?;
    if let Some(name) = sweep_name {
        report::check_sweep_table(out, name, existing)?;
    }
    let sets = files
        .first()
        .map(|f| f.overrides.len() - f.values.len())
        .unwrap_or(0);
    let mut reports = Vec::with_capacity(files.len());
    for f in files {
        provenance.overrides = f.overrides.clone();
        let with = sensitivity.map(|s| move |base: &report::ExperimentReport| s(f, base));
        let report = run_experiment(
            &f.file,
            options,
            out,
            &mut provenance,
            existing,
            with.as_ref().map(|w| w as &SensitivityOfRun<'_>),
        )
        .with_context(|| context(f))?;
        let headline = headline(f.file.header.kind);
        if !headline.is_empty() && report.claims.is_empty() {
            if files.len() > 1 {
                println!("{}:", report.table.experiment);
            }
            print!("{}", report::text_table(&report.table, headline));
        }
        reports.push(report);
    }
    // The index's provenance: the command's own changes, not a point's.
    provenance.overrides = files
        .first()
        .map(|f| f.overrides[..sets].to_vec())
        .unwrap_or_default();
    provenance.experiments = reports.iter().map(|r| r.table.experiment.clone()).collect();
    tell_kept(report::write_index(out, &provenance, existing)?);
    if let Some(name) = sweep_name {
        let rows: Vec<report::SweepRow> = (files.iter().zip(&reports))
            .map(|(f, r)| report::SweepRow {
                experiment: &r.table.experiment,
                values: f.values.clone(),
                table: &r.table,
            })
            .collect();
        let (path, placed) = report::write_sweep_table(out, name, swept, &rows, existing)?;
        if let Placed::KeptAside(kept) = placed {
            tell_kept(vec![kept]);
        }
        eprintln!("wrote {} ({} points)", path.display(), rows.len());
    }
    Ok(reports)
}

fn run(args: RunArgs) -> Result<()> {
    let (sets, points) = args.changes.parse()?;
    let load = |o: &[Override]| ExperimentFile::load_with(&args.experiment, o);
    let files = changed_files(&load, &sets, &points)?;
    let options = RunOptions {
        progress: &|_, _| {},
        seeds: args.seeds,
        media_dir: args.media.clone(),
    };
    let sweep_name = match args.changes.sweep.is_empty() {
        true => None,
        false => Some(load(&sets)?.header.name),
    };
    let existing = existing_outputs(args.force);
    let traces = match &args.perfetto {
        Some(out) => Some(perfetto_plan(&files, out, &args.experiment, existing)?),
        None => None,
    };
    let provenance = provenance(files[0].file.seeds(&options));
    let reports = run_changed(
        &files,
        &options,
        &args.out,
        provenance,
        existing,
        &args.changes.swept_keys(),
        sweep_name.as_deref(),
        &|_| args.experiment.display().to_string(),
        None,
    )?;
    for report in &reports {
        eprintln!(
            "wrote {} ({} figures)",
            args.out.join(&report.table.experiment).display(),
            report.figures.len(),
        );
    }
    eprintln!("wrote {}", args.out.join("index.html").display());
    if let Some(plan) = traces {
        let seed = files[0].file.runs(&options).seeds[0];
        write_perfetto(&plan, seed, existing)?;
    }
    Ok(())
}

/// The Perfetto traces of `run --perfetto`: the phone and, per configuration, its name,
/// its mechanisms and where its trace goes.
struct PerfettoPlan {
    phone: mobmem::mm::phone::PhoneConfig,
    traces: Vec<(String, mobmem::mm::phone::Choice, PathBuf)>,
}

/// Checks before anything runs that `run --perfetto OUT` can write its traces: one file
/// of kind `phone` (no sweep), on the clock, and nothing foreign where the traces go
/// (unless `existing` keeps it aside).
fn perfetto_plan(
    files: &[ChangedFile],
    out: &std::path::Path,
    experiment: &std::path::Path,
    existing: Existing,
) -> Result<PerfettoPlan> {
    use mobmem::mm::{clock::Accounting, phone::perfetto};
    if files.len() != 1 {
        bail!("--perfetto traces one run of a phone: leave --sweep out");
    }
    let file = &files[0].file;
    let Some(phone) = file.params.phone() else {
        bail!(
            "--perfetto draws the run of a phone, and {} is of kind '{}': give a file of kind 'phone' (such as experiments/phone.toml)",
            experiment.display(),
            file.header.kind
        );
    };
    if phone.time.accounting == Accounting::Sum {
        bail!(
            "--perfetto draws the phone's clock, and {} sets `[time] accounting = \"sum\"`, which runs without one: leave it out or add --set time.accounting=contended",
            experiment.display()
        );
    }
    let mut traces = Vec::new();
    for (name, choice) in mobmem::experiments::reproductions::composed::ends(phone) {
        let path = perfetto::trace_path(out, &name);
        mobmem::output::check_not_input(&path, &[experiment])?;
        if existing == Existing::Refuse {
            mobmem::output::check_replaceable(
                &path,
                perfetto::is_own_trace,
                ", or add --force to keep it aside",
            )?;
        }
        traces.push((name, choice, path));
    }
    Ok(PerfettoPlan {
        phone: phone.clone(),
        traces,
    })
}

/// Runs each configuration of `plan` with `seed`, recording it, and writes its trace.
fn write_perfetto(plan: &PerfettoPlan, seed: u64, existing: Existing) -> Result<()> {
    use mobmem::mm::phone::{self, perfetto};
    let trace = phone::workload(&plan.phone, seed)?;
    for (name, choice, path) in &plan.traces {
        let title = format!("{} {name} (seed {seed})", plan.phone.name);
        let (_, bytes) = perfetto::run_with_perfetto(&plan.phone, choice, &trace, seed, &title)
            .with_context(|| format!("the Perfetto trace of {name}"))?;
        let placed = mobmem::output::write_file(path, &bytes, perfetto::is_own_trace, existing)?;
        if let Placed::KeptAside(kept) = placed {
            tell_kept(vec![kept]);
        }
        eprintln!("wrote {}", path.display());
    }
    Ok(())
}

/// `--force`: foreign outputs are kept aside instead of stopping the command.
fn existing_outputs(force: bool) -> Existing {
    if force {
        Existing::KeepAside
    } else {
        Existing::Refuse
    }
}

/// Says where the foreign files or folders that `--force` moved aside now are.
fn tell_kept(kept: Vec<std::path::PathBuf>) {
    for path in kept {
        eprintln!("  kept what stood there as {}", path.display());
    }
}

/// What `reproduce --sensitivity` adds to a file's report: its claims rerun at each end
/// of each assumed constant, given the file and the report as shipped.
type SensitivityOf<'a> =
    dyn Fn(&ChangedFile, &report::ExperimentReport) -> Result<sensitivity::Sensitivity> + 'a;

/// [`SensitivityOf`] for one file: given its report as shipped.
type SensitivityOfRun<'a> =
    dyn Fn(&report::ExperimentReport) -> Result<sensitivity::Sensitivity> + 'a;

/// Run an experiment file (`run` and `reproduce` alike) with a progress bar, write its
/// report under `out` and print its claims. The provenance's seeds are the run's. With
/// `sensitivity`, the report carries the claims' sensitivity, made after the run.
fn run_experiment(
    file: &ExperimentFile,
    options: &RunOptions,
    out: &std::path::Path,
    provenance: &mut report::Provenance,
    existing: Existing,
    sensitivity: Option<&SensitivityOfRun<'_>>,
) -> Result<report::ExperimentReport> {
    let pb = bar(0, &file.header.name);
    let progress = progress_of(&pb);
    let options = RunOptions {
        progress: &progress,
        seeds: options.seeds,
        media_dir: options.media_dir.clone(),
    };
    let mut report = file.run(&options)?;
    pb.finish_and_clear();
    if let Some(of) = sensitivity {
        report.sensitivity = Some(of(&report)?);
    }
    if provenance.seeds.is_empty() {
        provenance.seeds = report.seeds.clone();
    }
    let (dir, placed) = report::write_experiment(out, &report, provenance, existing)?;
    if let Placed::KeptAside(kept) = placed {
        tell_kept(vec![kept]);
    }
    for c in &report.claims {
        let paper = match c.paper_side() {
            report::PaperSide::AtLeast(bound) => {
                format!("at least {}", report::numbers::significant(bound, 4))
            }
            report::PaperSide::AtMost(bound) => {
                format!("at most {}", report::numbers::significant(bound, 4))
            }
            report::PaperSide::Number(p) => report::numbers::significant(p, 4),
            report::PaperSide::Nothing => "-".into(),
        };
        let [mean, lo, hi] = report::numbers::interval(c.mean, c.ci95[0], c.ci95[1]);
        let who = match c.source {
            report::Source::Paper => "paper",
            report::Source::Mobmem => "mobmem's own",
        };
        println!(
            "  [{}] {} ({who} {paper} {unit}; measured {mean} [{lo}, {hi}] {unit} over {} seed(s))",
            c.verdict.name(),
            c.claim,
            c.seeds,
            unit = c.unit,
        );
    }
    eprintln!("  wrote {}", dir.display());
    Ok(report)
}

fn reproduce(args: ReproduceArgs) -> Result<()> {
    let chosen: Vec<_> = if args.name == "all" {
        REPRODUCTIONS.iter().collect()
    } else {
        vec![reproductions::find(&args.name)?]
    };
    let (sets, points) = args.changes.parse()?;
    if !args.changes.sweep.is_empty() && chosen.len() > 1 {
        bail!("--sweep studies one reproduction at a time: name it instead of `all`");
    }
    let seeds: Vec<u64> = (1..=args.seeds).collect();
    let options = RunOptions {
        progress: &|_, _| {},
        seeds: Some(args.seeds),
        media_dir: Some(args.media.clone()),
    };
    // Every file, with its changes, is read and checked before anything runs.
    let mut files = Vec::new();
    let mut of = Vec::new();
    for r in &chosen {
        let load = |o: &[Override]| r.experiment_with(o);
        let changed = changed_files(&load, &sets, &points)
            .with_context(|| format!("reproduction {}", r.name))?;
        of.extend(std::iter::repeat_n(*r, changed.len()));
        files.extend(changed);
    }
    let sweep_name = match args.changes.sweep.is_empty() {
        true => None,
        false => Some(chosen[0].experiment_with(&sets)?.header.name),
    };
    let announce = |f: &ChangedFile| {
        let i = files.iter().position(|g| std::ptr::eq(g, f)).unwrap_or(0);
        format!("reproduction {}", of[i].name)
    };
    if args.sensitivity && !args.changes.sweep.is_empty() {
        bail!("--sensitivity and --sweep are separate studies: give one of them");
    }
    // Each file's changes, parsed again, and each end of each assumed constant checked
    // (the file read with it) before anything runs.
    let changes_of = |f: &ChangedFile| -> Result<Vec<Override>> {
        (f.overrides.iter())
            .map(|t| Ok(Override::parse("--set", t)?))
            .collect()
    };
    let of_file = |f: &ChangedFile| {
        let i = files.iter().position(|g| std::ptr::eq(g, f)).unwrap_or(0);
        of[i]
    };
    let variant = |f: &ChangedFile, a: &sensitivity::Assumption, end: sensitivity::End| {
        let mut changes = changes_of(f)?;
        changes.push(a.change(end)?);
        of_file(f)
            .experiment_with(&changes)
            .with_context(|| format!("[[assumed]] {} at its {} end", a.key, end.name()))
    };
    if args.sensitivity {
        for f in &files {
            for a in &f.file.header.assumed {
                for end in [sensitivity::End::Low, sensitivity::End::High] {
                    variant(f, a, end).with_context(|| announce(f))?;
                }
            }
        }
    }
    let sensitivity_of = |f: &ChangedFile, base: &report::ExperimentReport| {
        let assumed = &f.file.header.assumed;
        let mut runs = Vec::with_capacity(assumed.len());
        for (i, a) in assumed.iter().enumerate() {
            let at = |end: sensitivity::End| -> Result<report::ExperimentReport> {
                eprintln!(
                    "  sensitivity {}/{}: {} = {} ({} end)",
                    2 * i + usize::from(end == sensitivity::End::High) + 1,
                    2 * assumed.len(),
                    a.key,
                    a.value(end),
                    end.name()
                );
                let file = variant(f, a, end)?;
                let pb = bar(0, &file.header.name);
                let progress = progress_of(&pb);
                let report = file.run(&RunOptions {
                    progress: &progress,
                    seeds: options.seeds,
                    media_dir: options.media_dir.clone(),
                })?;
                pb.finish_and_clear();
                Ok(report)
            };
            runs.push((at(sensitivity::End::Low)?, at(sensitivity::End::High)?));
        }
        Ok(sensitivity::analyze(base, assumed, &runs))
    };
    for r in &chosen {
        println!("{}: {}", r.name, r.summary);
    }
    run_changed(
        &files,
        &options,
        &args.out,
        provenance(seeds),
        existing_outputs(args.force),
        &args.changes.swept_keys(),
        sweep_name.as_deref(),
        &announce,
        args.sensitivity
            .then_some(&sensitivity_of as &SensitivityOf<'_>),
    )?;
    println!("report: {}", args.out.join("index.html").display());
    Ok(())
}

fn report_command(command: ReportCommand) -> Result<()> {
    match command {
        ReportCommand::Summary { dir, write_into } => {
            let (last, sections, unread) = report::load_sections(&dir)
                .with_context(|| format!("report folder {}", dir.display()))?;
            for u in &unread {
                eprintln!("warning: not summarized: {u}");
            }
            if sections.iter().all(|s| s.claims.is_empty()) {
                bail!("{} holds no claims (reproduce writes them)", dir.display());
            }
            match write_into {
                None => print!("{}", report::summary_markdown(&sections, last.as_ref())),
                Some(path) => {
                    let text = mobmem::input::read_text(
                        &path,
                        MAX_SUMMARY_FILE_BYTES,
                        "a file a summary is written into",
                    )?;
                    let claims = report::claims_markdown(&sections, last.as_ref());
                    let findings = report::findings_markdown(&sections);
                    let new = report::replace_summary(&text, &claims, &findings)
                        .with_context(|| format!("{}", path.display()))?;
                    // Through a temporary file and a rename: a kill never leaves it half
                    // written.
                    mobmem::output::write_file(
                        &path,
                        new.as_bytes(),
                        mobmem::output::any_file,
                        Existing::Refuse,
                    )?;
                    eprintln!("wrote the summary into {}", path.display());
                }
            }
            Ok(())
        }
    }
}

fn trace_command(command: TraceCommand) -> Result<()> {
    match command {
        TraceCommand::Info { file, format, json } => {
            let mut source = trace::open(&file, format.get()?)?;
            let summary = trace::summary::summarize_source(source.as_mut())?;
            if json {
                println!("{}", serde_json::to_string_pretty(&summary)?);
            } else {
                println!("file                 {}", file.display());
                print!("{summary}");
            }
            Ok(())
        }
        TraceCommand::Convert {
            input,
            output,
            format,
        } => {
            mobmem::output::check_not_input(&output, &[&input])?;
            let t = trace::read_all(&input, format.get()?)?;
            trace::write(&output, &t)?;
            eprintln!("wrote {} ({} events)", output.display(), t.events.len());
            Ok(())
        }
        TraceCommand::Import(args) => {
            mobmem::output::check_not_input(&args.out, &[&args.file])?;
            import::run(args)
        }
    }
}
