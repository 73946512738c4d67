//! `mobmem reclaim`: Linux page reclaim policies (stock 3.4, FMP, memcg-low, MGLRU)
//! replayed on one trace, side by side.

use std::path::PathBuf;

use anyhow::{bail, Result};
use clap::Args;
use rayon::prelude::*;

use mobmem::reclaim::{self, policy::find_policy, ReclaimConfig, ReclaimResult, POLICIES};
use mobmem::report::short;
use mobmem::trace::{self, Format};

#[derive(Args)]
pub struct ReclaimArgs {
    /// Trace file with accesses, importance changes and input events (e.g. from
    /// `mobmem gen gallery-usb --out FILE`).
    #[arg(long, required_unless_present = "list")]
    trace: Option<PathBuf>,
    /// Trace format; default: from the file name.
    #[arg(long)]
    format: Option<Format>,
    /// Policies to compare, comma-separated (see --list).
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "stock,fmp,memcg-low,mglru"
    )]
    policy: Vec<String>,
    /// Physical memory in MiB (default 128; watermarks follow from it unless the
    /// config overrides them).
    #[arg(long)]
    memory_mib: Option<usize>,
    /// Reclaim settings as TOML (every field of ReclaimConfig, see docs/reclaim.md);
    /// --memory-mib overrides it.
    #[arg(long)]
    config: Option<PathBuf>,
    /// Print every result as JSON (an array, one object per policy).
    #[arg(long, conflicts_with = "csv")]
    json: bool,
    /// Print the metrics as CSV: a metric column, then one column per policy.
    #[arg(long)]
    csv: bool,
    /// List the policies and exit.
    #[arg(long)]
    list: bool,
}

pub fn run(args: ReclaimArgs) -> Result<()> {
    if args.list {
        for p in POLICIES {
            println!("{:<10} {}", p.name, p.summary);
        }
        return Ok(());
    }
    let Some(path) = &args.trace else {
        bail!("give --trace FILE");
    };
    let mut base = match &args.config {
        Some(path) => {
            let text = std::fs::read_to_string(path).map_err(|e| mobmem::Error::io(path, e))?;
            toml::from_str::<ReclaimConfig>(&text)
                .map_err(|e| mobmem::Error::config(path.display().to_string(), e.to_string()))?
        }
        None => ReclaimConfig::default(),
    };
    if let Some(mib) = args.memory_mib {
        if mib == 0 || mib > reclaim::MAX_MEMORY_PAGES / 256 {
            bail!(
                "--memory-mib must be 1..={}, got {mib}",
                reclaim::MAX_MEMORY_PAGES / 256
            );
        }
        base.memory_pages = mib * 256;
    }
    let policies: Vec<String> = args
        .policy
        .iter()
        .map(|p| p.trim().to_string())
        .filter(|p| !p.is_empty())
        .collect();
    if policies.is_empty() {
        bail!("give at least one --policy");
    }
    let configs: Vec<ReclaimConfig> = policies
        .iter()
        .map(|p| {
            find_policy(p)?;
            let c = ReclaimConfig {
                policy: p.clone(),
                ..base.clone()
            };
            c.validate()?;
            Ok(c)
        })
        .collect::<mobmem::Result<_>>()?;
    let t = trace::read_all(path, args.format)?;
    let results: Vec<ReclaimResult> = configs
        .par_iter()
        .map(|c| reclaim::run(c, &t))
        .collect::<mobmem::Result<_>>()?;
    if args.json {
        return print_out(&(serde_json::to_string_pretty(&results)? + "\n"));
    }
    let metrics: Vec<&str> = results[0].values().iter().map(|(k, _)| *k).collect();
    if args.csv {
        let mut out = String::from("metric");
        for r in &results {
            out.push(',');
            out.push_str(&r.policy);
        }
        out.push('\n');
        for (i, m) in metrics.iter().enumerate() {
            out.push_str(m);
            for r in &results {
                out.push(',');
                out.push_str(&mobmem::report::format_number(r.values()[i].1));
            }
            out.push('\n');
        }
        return print_out(&out);
    }
    let wm = results[0].watermarks;
    let mut out = format!(
        "trace {}: {} accesses; memory {} pages ({} MiB), watermarks min/low/high {}/{}/{} KiB\n",
        path.display(),
        results[0].accesses,
        base.memory_pages,
        base.memory_pages / 256,
        wm.min_kb,
        wm.low_kb,
        wm.high_kb
    );
    out.push_str(&format!("{:<26}", "metric"));
    for r in &results {
        out.push_str(&format!(" {:>12}", r.policy));
    }
    out.push('\n');
    for (i, m) in metrics.iter().enumerate() {
        out.push_str(&format!("{m:<26}"));
        for r in &results {
            out.push_str(&format!(" {:>12}", short(r.values()[i].1)));
        }
        out.push('\n');
    }
    print_out(&out)
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

/// `mobmem gen gallery-usb [--no-background]`: write the page-protection workload.
pub fn gen_gallery_usb(
    out: &std::path::Path,
    seed: u64,
    scale: Option<f64>,
    no_background: bool,
) -> Result<()> {
    let mut config = reclaim::workload::GalleryUsbConfig {
        background: !no_background,
        ..Default::default()
    };
    if let Some(scale) = scale {
        if !(scale.is_finite() && scale > 0.0) {
            bail!("--scale must be > 0");
        }
        config.interactions = ((config.interactions as f64 * scale).round() as u32).max(1);
    }
    let t = reclaim::workload::generate(&config, seed)?;
    trace::write(out, &t)?;
    eprintln!(
        "wrote {} ({} events, {} distinct pages)",
        out.display(),
        t.events.len(),
        t.footprint()
    );
    Ok(())
}
