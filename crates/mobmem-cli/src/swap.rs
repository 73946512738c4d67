//! `mobmem swap`: the multi-swap simulator on one trace.

use std::path::PathBuf;

use anyhow::{bail, Result};
use clap::Args;

use mobmem::core::stats::Stats;
use mobmem::mm::swap::{self, workload::AppCyclingConfig, SwapConfig, ARCHITECTURES};
use mobmem::report::short;
use mobmem::trace;

#[derive(Args)]
pub struct SwapArgs {
    /// Trace file (accesses and importance changes, or swap events with --replay);
    /// default: the app-cycling preset.
    #[arg(long)]
    trace: Option<PathBuf>,
    #[command(flatten)]
    format: crate::trace_format::TraceFormat,
    /// Seed of the app-cycling preset when no --trace is given.
    #[arg(long, default_value_t = 1, value_parser = crate::numbers::non_negative::<u64>, allow_negative_numbers = true)]
    seed: u64,
    /// Swap settings as TOML (every field of SwapConfig, see docs/swap.md); the flags
    /// below override it.
    #[arg(long)]
    config: Option<PathBuf>,
    /// Architecture (see --list).
    #[arg(long)]
    architecture: Option<String>,
    /// DRAM for app pages, in pages.
    #[arg(long, value_parser = crate::numbers::non_negative::<usize>, allow_negative_numbers = true)]
    dram_pages: Option<usize>,
    /// NVM swap size, in pages.
    #[arg(long, value_parser = crate::numbers::non_negative::<usize>, allow_negative_numbers = true)]
    nvm_pages: Option<usize>,
    /// Replay the trace's swap_out/swap_in events through the architecture instead of
    /// simulating memory pressure from its accesses.
    #[arg(long)]
    replay: bool,
    /// List the architectures and exit.
    #[arg(long)]
    list: bool,
    /// Print every metric as JSON.
    #[arg(long)]
    json: bool,
}

pub fn run(args: SwapArgs) -> Result<()> {
    if args.list {
        for a in ARCHITECTURES {
            println!("{:<20} {}", a.name, a.summary);
        }
        return Ok(());
    }
    let mut config: SwapConfig = crate::config_or_default(args.config.as_deref())?;
    config.architecture = args.architecture.unwrap_or(config.architecture);
    config.dram_pages = args.dram_pages.unwrap_or(config.dram_pages);
    config.nvm_pages = args.nvm_pages.unwrap_or(config.nvm_pages);
    config.validate()?;
    let trace = match &args.trace {
        Some(path) => trace::read_all(path, args.format.get()?)?,
        None if args.replay => bail!("--replay needs a --trace with swap events"),
        None => swap::workload::generate(&AppCyclingConfig::default(), args.seed)?,
    };
    let metrics = if args.replay {
        swap::replay(&trace, &config)?
    } else {
        swap::run(&trace, &config)?
    };
    if args.json {
        let mut map = serde_json::Map::new();
        map.insert("architecture".into(), config.architecture.clone().into());
        for (name, value) in metrics.values() {
            map.insert(name.into(), crate::json_number(value));
        }
        map.insert("per_app".into(), serde_json::to_value(&metrics.per_app)?);
        println!(
            "{}",
            serde_json::to_string_pretty(&serde_json::Value::Object(map))?
        );
        return Ok(());
    }
    println!(
        "architecture {}, DRAM {} pages, NVM {} pages{}",
        config.architecture,
        config.dram_pages,
        config.nvm_pages,
        if args.replay { " (replay)" } else { "" }
    );
    for (name, value) in metrics.values() {
        println!("{name:<28} {}", short(value));
    }
    Ok(())
}
