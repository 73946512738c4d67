//! `mobmem reclaim`: Linux page reclaim policies (stock 3.4, FMP, memcg-low, MGLRU)
//! replayed on one trace, side by side.

use std::path::PathBuf;

use anyhow::{bail, Result};
use clap::Args;
use rayon::prelude::*;

use mobmem::core::stats::Stats;
use mobmem::mm::reclaim::{self, policy::find_policy, ReclaimConfig, ReclaimResult, POLICIES};
use mobmem::report::short;
use mobmem::trace::{self, EventKind, ADJ_FOREGROUND};

#[derive(Args)]
pub struct ReclaimArgs {
    /// Trace file with accesses, importance changes and input events (e.g. from
    /// `mobmem gen gallery-usb --out FILE`). Repeat it to run several traces side by
    /// side, each on its own machine (sized per trace with --memory-fraction).
    #[arg(long, required_unless_present = "list")]
    trace: Vec<PathBuf>,
    #[command(flatten)]
    format: crate::trace_format::TraceFormat,
    /// Policies to compare, comma-separated (see --list). Default: `policy` of the
    /// --config file when it sets one, else stock,fmp,memcg-low,mglru.
    #[arg(long, value_delimiter = ',')]
    policy: Option<Vec<String>>,
    /// Physical memory in MiB (default 128; watermarks follow from it unless the
    /// config overrides them).
    #[arg(
        long,
        conflicts_with = "memory_fraction",
        value_parser = crate::numbers::non_negative::<usize>,
        allow_negative_numbers = true
    )]
    memory_mib: Option<usize>,
    /// Physical memory as a fraction of each trace's footprint (distinct pages): that
    /// many usable frames, plus the reserved and unmovable ones (docs/reclaim.md).
    #[arg(long, allow_negative_numbers = true)]
    memory_fraction: Option<f64>,
    /// Reclaim settings as TOML (every field of ReclaimConfig, see docs/reclaim.md);
    /// --memory-mib, --memory-fraction and --policy override it. Unless it sets
    /// swap_pages, swap is sized to each trace (docs/reclaim.md).
    #[arg(long)]
    config: Option<PathBuf>,
    /// Print every result as JSON (an array, one object per trace and policy).
    #[arg(long, conflicts_with = "csv")]
    json: bool,
    /// Print the metrics as CSV: a metric column, then one column per policy (per
    /// trace/policy with several traces).
    #[arg(long)]
    csv: bool,
    /// List the policies and exit.
    #[arg(long)]
    list: bool,
}

const DEFAULT_POLICIES: [&str; 4] = ["stock", "fmp", "memcg-low", "mglru"];

/// One trace and what the policies measured on it.
struct TraceRun {
    path: PathBuf,
    label: String,
    base: ReclaimConfig,
    results: Vec<ReclaimResult>,
}

pub fn run(args: ReclaimArgs) -> Result<()> {
    if args.list {
        for p in POLICIES {
            println!("{:<10} {}", p.name, p.summary);
        }
        return Ok(());
    }
    if args.trace.is_empty() {
        bail!("give --trace FILE");
    }
    // The config, and which keys it set (a key left out keeps its default, which
    // cannot be told apart from the same value given explicitly otherwise).
    let (base, config_keys) = match &args.config {
        Some(path) => {
            let text = mobmem::config_file::read(path)?;
            let keys: toml::Table = crate::parse_toml(path, &text)?;
            let config: ReclaimConfig = crate::parse_toml(path, &text)?;
            (config, keys)
        }
        None => (ReclaimConfig::default(), toml::Table::new()),
    };
    let policies: Vec<String> = match &args.policy {
        Some(list) => list
            .iter()
            .map(|p| p.trim().to_string())
            .filter(|p| !p.is_empty())
            .collect(),
        None if config_keys.contains_key("policy") => vec![base.policy.clone()],
        None => DEFAULT_POLICIES.iter().map(|p| p.to_string()).collect(),
    };
    if policies.is_empty() {
        bail!("give at least one --policy");
    }
    for p in &policies {
        find_policy(p)?;
    }
    let mut base = base;
    if let Some(mib) = args.memory_mib {
        if mib == 0 || mib > reclaim::MAX_MEMORY_PAGES / 256 {
            bail!(
                "--memory-mib must be 1..={}, got {mib}",
                reclaim::MAX_MEMORY_PAGES / 256
            );
        }
        base.memory_pages = mib * 256;
    }
    if args.memory_fraction.is_none() {
        base.validate()?;
    }
    let mut runs = Vec::new();
    for path in &args.trace {
        let t = trace::read_all(path, args.format.get()?)?;
        let mut config = base.clone();
        if let Some(fraction) = args.memory_fraction {
            config.memory_pages = config
                .memory_pages_for_fraction(fraction, t.footprint())
                .map_err(|e| anyhow::anyhow!("--memory-fraction on {}: {e}", path.display()))?;
        }
        if !config_keys.contains_key("swap_pages") {
            config.swap_pages = config.swap_pages_for(reclaim::anon_pages(&t));
        }
        let configs: Vec<ReclaimConfig> = policies
            .iter()
            .map(|p| {
                let c = ReclaimConfig {
                    policy: p.clone(),
                    ..config.clone()
                };
                c.validate()?;
                Ok(c)
            })
            .collect::<mobmem::Result<_>>()?;
        let results: Vec<ReclaimResult> = configs
            .par_iter()
            .map(|c| reclaim::run(c, &t))
            .collect::<mobmem::Result<_>>()
            .map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
        // An interaction per input event, whatever the policy.
        if results[0].interactions == 0 {
            eprintln!("{}", no_input_note(path, &t));
        }
        let label = path
            .file_name()
            .map(|n| n.to_string_lossy().to_string())
            .unwrap_or_else(|| path.display().to_string());
        runs.push(TraceRun {
            path: path.clone(),
            label,
            base: config,
            results,
        });
    }
    let several = runs.len() > 1;
    if args.json {
        let mut all = Vec::new();
        for r in &runs {
            for result in &r.results {
                let mut value = serde_json::to_value(result)?;
                value["trace"] = r.path.display().to_string().into();
                all.push(value);
            }
        }
        return print_out(&(serde_json::to_string_pretty(&all)? + "\n"));
    }
    // Columns: (trace label, result).
    let columns: Vec<(&str, &ReclaimResult)> = runs
        .iter()
        .flat_map(|r| r.results.iter().map(move |x| (r.label.as_str(), x)))
        .collect();
    let metrics: Vec<&str> = columns[0].1.values().iter().map(|(k, _)| *k).collect();
    if args.csv {
        let mut out = String::from("metric");
        for (label, r) in &columns {
            out.push(',');
            if several {
                out.push_str(&format!("{label}/"));
            }
            out.push_str(&r.policy);
        }
        out.push('\n');
        for (i, m) in metrics.iter().enumerate() {
            out.push_str(m);
            for (_, r) in &columns {
                out.push(',');
                out.push_str(&mobmem::report::format_number(r.values()[i].1));
            }
            out.push('\n');
        }
        return print_out(&out);
    }
    let mut out = String::new();
    for r in &runs {
        let wm = r.results[0].watermarks;
        out.push_str(&format!(
            "trace {}: {} accesses, {} interactions; memory {} pages ({} MiB), swap {} pages, \
watermarks min/low/high {}/{}/{} KiB\n",
            r.path.display(),
            r.results[0].accesses,
            r.results[0].interactions,
            r.base.memory_pages,
            r.base.memory_pages / 256,
            r.base.swap_pages,
            wm.min_kb,
            wm.low_kb,
            wm.high_kb
        ));
    }
    let width = |label: &str| label.chars().count().max(12);
    if several {
        out.push_str(&format!("{:<26}", "trace"));
        for (label, _) in &columns {
            out.push_str(&format!(" {label:>w$}", w = width(label)));
        }
        out.push('\n');
    }
    out.push_str(&format!("{:<26}", "metric"));
    for (label, r) in &columns {
        let w = if several { width(label) } else { 12 };
        out.push_str(&format!(" {:>w$}", r.policy));
    }
    out.push('\n');
    for (i, m) in metrics.iter().enumerate() {
        out.push_str(&format!("{m:<26}"));
        for (label, r) in &columns {
            let w = if several { width(label) } else { 12 };
            out.push_str(&format!(" {:>w$}", short(r.values()[i].1)));
        }
        out.push('\n');
    }
    print_out(&out)
}

/// What a run of a trace without input events measures, for stderr.
fn no_input_note(path: &std::path::Path, t: &trace::Trace) -> String {
    let mut foreground: Vec<&str> = Vec::new();
    for e in &t.events {
        if e.kind() == EventKind::Importance && e.oom_score_adj() == ADJ_FOREGROUND {
            if let Some(p) = t.tables.processes.get(e.proc() as usize) {
                if !foreground.contains(&p.name.as_str()) {
                    foreground.push(&p.name);
                }
            }
        }
    }
    let who = if foreground.is_empty() {
        "no process is ever foreground (oom_score_adj 0) either, so fmp and memcg-low protect nothing \
and behave as stock"
            .to_string()
    } else {
        format!(
            "fmp and memcg-low treat the foreground app (oom_score_adj 0) as the interactive task: {}",
            foreground.join(", ")
        )
    };
    format!(
        "note: {} has no input events, so there are no interactions: interactive faults are 0 and \
response times \"-\"; {who}. Faults per process are in --json (per_process), major_faults counts all.",
        path.display()
    )
}

/// Write to stdout; a reader that stopped early (`| head`) is not an error.
fn print_out(text: &str) -> Result<()> {
    use std::io::Write;
    let mut stdout = std::io::stdout().lock();
    match stdout
        .write_all(text.as_bytes())
        .and_then(|()| stdout.flush())
    {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(e.into()),
        _ => Ok(()),
    }
}
