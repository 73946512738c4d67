//! `mobmem trace import`: build a trace from another tool's output (ftrace text:
//! `trace-cmd report`, `/sys/kernel/tracing/trace`, Android atrace/systrace; Perfetto
//! traces, as the protobuf files Perfetto records or as `traceconv systrace` text).

use std::io::BufReader;
use std::path::PathBuf;

use anyhow::{Context, Result};
use clap::{Args, ValueEnum};

use mobmem::trace::{
    self,
    ftrace::{AccessSource, FtraceImporter, ImportOptions, ImportReport, ProcessMatch},
};

#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum Source {
    /// ftrace text (trace-cmd report, /sys/kernel/tracing/trace or trace_pipe, atrace).
    Ftrace,
    /// A Perfetto trace: the protobuf file Perfetto records (.perfetto-trace, .pftrace;
    /// plain, .gz or .zst), or its text from `traceconv systrace` (numbers Perfetto has no
    /// kernel format for are decimal there). Which one is told from the bytes.
    Perfetto,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum Accesses {
    /// read-path if the capture has mm_filemap_get_pages/map_pages/fault, else added.
    Auto,
    /// Every page added to the page cache (the kernel's misses) is an access.
    Added,
    /// get_pages/map_pages/fault pages (hits and misses), plus added pages they never reached.
    ReadPath,
}

impl From<Accesses> for AccessSource {
    fn from(a: Accesses) -> Self {
        match a {
            Accesses::Auto => AccessSource::Auto,
            Accesses::Added => AccessSource::Added,
            Accesses::ReadPath => AccessSource::ReadPath,
        }
    }
}

/// Options of the ftrace importer shared by `trace import` and `capture`.
#[derive(Args, Clone, Debug)]
pub struct ImportFlags {
    /// Pin a process (by PID or task name) and the processes it starts to the foreground
    /// (oom_score_adj 0); its own oom_score_adj changes are then not applied. Repeatable.
    #[arg(long, value_name = "PID|COMM")]
    pub foreground: Vec<String>,
    /// Pin a process (PID or name) and its children to the background (oom_score_adj 900).
    #[arg(long, value_name = "PID|COMM")]
    pub background: Vec<String>,
    /// Which events become page accesses.
    #[arg(long, value_enum, default_value = "auto")]
    pub accesses: Accesses,
    /// Keep only the processes marked with --foreground/--background (and the processes
    /// they start), leaving out the rest of the system.
    #[arg(long)]
    pub marked_only: bool,
    /// A malformed line is an error (naming its line) instead of being skipped and counted.
    #[arg(long)]
    pub strict: bool,
}

impl ImportFlags {
    pub fn options(&self) -> Result<ImportOptions> {
        let parse = |v: &[String]| -> Result<Vec<ProcessMatch>> {
            v.iter()
                .map(|s| s.parse::<ProcessMatch>().map_err(Into::into))
                .collect()
        };
        Ok(ImportOptions {
            strict: self.strict,
            accesses: self.accesses.into(),
            foreground: parse(&self.foreground)?,
            background: parse(&self.background)?,
            exclude_pids: Vec::new(),
            marked_only: self.marked_only,
            perfetto: false,
        })
    }
}

#[derive(Args)]
pub struct ImportArgs {
    /// The tool whose output the input is (ftrace, perfetto); or give --format (and
    /// --columns) for a trace file of a layout mobmem reads directly.
    #[arg(long, value_enum, required_unless_present_any = ["format", "columns"], conflicts_with_all = ["format", "columns"])]
    pub from: Option<Source>,
    #[command(flatten)]
    pub format: crate::trace_format::TraceFormat,
    /// Input file (`-` for standard input); may be zstd-compressed.
    pub file: PathBuf,
    /// Output trace, .mmt or .csv.
    #[arg(long)]
    pub out: PathBuf,
    #[command(flatten)]
    pub flags: ImportFlags,
    /// Print the import report as JSON.
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: ImportArgs) -> Result<()> {
    check_output(&args.out)?;
    let Some(from) = args.from else {
        return convert(&args);
    };
    let mut options = args.flags.options()?;
    options.perfetto = matches!(from, Source::Perfetto);
    let stdin = args.file.as_os_str() == "-";
    let (t, report) = if stdin && options.perfetto {
        let name = std::path::Path::new("<stdin>");
        trace::perfetto::import_stream(name, std::io::stdin(), options)?
    } else if stdin {
        let mut importer = FtraceImporter::new(std::path::Path::new("<stdin>"), options);
        importer.read(&mut BufReader::new(std::io::stdin().lock()))?;
        importer.finish()
    } else if options.perfetto && trace::perfetto::is_protobuf_file(&args.file)? {
        trace::perfetto::import_file(&args.file, options)?
    } else {
        trace::ftrace::import_file(&args.file, options)?
    };
    let source = if stdin {
        "<stdin>".to_string()
    } else {
        args.file.display().to_string()
    };
    write_trace(&source, &args.out, &t, &report, args.json)
}

/// A trace file of a format mobmem reads (a column spec, a preset) to `.mmt` or `.csv`,
/// then what it holds, as `trace info` says it.
fn convert(args: &ImportArgs) -> Result<()> {
    let f = &args.flags;
    if !f.foreground.is_empty() || !f.background.is_empty() || f.marked_only || f.strict {
        anyhow::bail!(
            "--foreground, --background, --marked-only and --strict go with --from ftrace or perfetto, not --format"
        );
    }
    let format = args.format.get()?;
    let t = trace::read_all(&args.file, format)?;
    trace::write(&args.out, &t).with_context(|| format!("writing {}", args.out.display()))?;
    let summary = trace::summary::summarize(&t);
    if args.json {
        println!("{}", serde_json::to_string_pretty(&summary)?);
    } else {
        println!("file                 {}", args.file.display());
        print!("{summary}");
    }
    eprintln!(
        "wrote {} ({} events, {} distinct pages, {} processes)",
        args.out.display(),
        t.events.len(),
        t.footprint(),
        t.tables.processes.len()
    );
    Ok(())
}

/// Fail early (before reading a long capture) on an output name no writer takes.
pub fn check_output(out: &std::path::Path) -> Result<()> {
    match trace::Format::from_path(out) {
        Some(trace::Format::Mmt | trace::Format::Csv) => Ok(()),
        _ => anyhow::bail!("{}: the output must end in .mmt or .csv", out.display()),
    }
}

/// Write the trace, then say what was found; `source` names the input in errors.
pub fn write_trace(
    source: &str,
    out: &std::path::Path,
    t: &trace::Trace,
    report: &ImportReport,
    json: bool,
) -> Result<()> {
    let print_report = || -> Result<()> {
        if json {
            println!("{}", serde_json::to_string_pretty(report)?);
        } else {
            print!("{report}");
        }
        Ok(())
    };
    if t.events.is_empty() {
        // What was read and why it was skipped tells the user what the input was.
        print_report()?;
        if let Some(p) = &report.perfetto {
            anyhow::bail!(
                "{source}: no memory events found in {} packets ({} ftrace events): record the events listed in experiments/perfetto/mobmem.pbtx; see what was used and ignored above; nothing written to {}",
                p.packets,
                p.ftrace_events,
                out.display()
            );
        }
        anyhow::bail!(
            "{source}: no events found in {} lines: expected ftrace text, lines like `TASK-PID [CPU] FLAGS SECONDS.MICROSECONDS: EVENT: FIELDS`, or with --from perfetto a Perfetto protobuf trace; see the skipped lines above; nothing written to {}",
            report.lines,
            out.display()
        );
    }
    trace::write(out, t).with_context(|| format!("writing {}", out.display()))?;
    print_report()?;
    eprintln!(
        "wrote {} ({} events, {} distinct pages, {} processes)",
        out.display(),
        t.events.len(),
        t.footprint(),
        t.tables.processes.len()
    );
    Ok(())
}
