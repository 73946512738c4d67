//! `mobmem bench`: simulator throughput (accesses per second) and resident memory per
//! distinct page, on a generated trace in the binary format.

use std::path::PathBuf;
use std::time::Instant;

use anyhow::{bail, Context, Result};
use clap::Args;

use mobmem::engine::sim::{run_source, RunSetup};
use mobmem::engine::{find_policy, Capacity};
use mobmem::trace::{self, Event};
use mobmem::workload;

#[derive(Args)]
pub struct BenchArgs {
    /// Trace to measure on; default: the app-switching preset scaled to about --accesses.
    #[arg(long)]
    trace: Option<PathBuf>,
    /// Accesses of the generated trace.
    #[arg(long, default_value_t = 10_000_000)]
    accesses: u64,
    /// Policies to measure.
    #[arg(long, value_delimiter = ',', default_value = "lru")]
    policies: Vec<String>,
    /// Memory as a fraction of the footprint.
    #[arg(long, default_value_t = 0.1)]
    memory_fraction: f64,
    /// Timed repetitions per policy (the best is reported).
    #[arg(long, default_value_t = 3)]
    repeat: usize,
    /// Print as JSON.
    #[arg(long)]
    json: bool,
}

/// Current and peak resident set size of this process, bytes (Linux).
fn rss() -> Option<(u64, u64)> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let field = |name: &str| -> Option<u64> {
        let line = status.lines().find(|l| l.starts_with(name))?;
        let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
        Some(kb * 1024)
    };
    Some((field("VmRSS:")?, field("VmHWM:")?))
}

/// Reset the peak RSS counter so the next peak is this run's alone.
fn reset_peak() -> bool {
    std::fs::write("/proc/self/clear_refs", "5").is_ok()
}

pub fn bench(args: BenchArgs) -> Result<()> {
    let dir = tempfile::tempdir().context("temporary folder")?;
    let path = match &args.trace {
        Some(p) => p.clone(),
        None => {
            let mut config = workload::preset("app-switching")?;
            config.scale = args.accesses as f64 / config.accesses.max(1) as f64;
            let t = workload::generate(&config, 1)?;
            let p = dir.path().join("bench.mmt");
            trace::mmt::write(&p, &t)?;
            p
        }
    };
    // Decode speed alone.
    let started = Instant::now();
    let mut source = trace::open(&path, None)?;
    let pages = source.page_count_hint().unwrap_or(0);
    let mut batch: Vec<Event> = Vec::with_capacity(1 << 16);
    let mut events = 0u64;
    while source.read_batch(&mut batch, 1 << 16)? {
        events += batch.len() as u64;
    }
    let decode_s = started.elapsed().as_secs_f64();
    if pages == 0 {
        bail!(
            "{}: the trace records no page count (use an .mmt trace)",
            path.display()
        );
    }
    let capacity = ((pages as f64 * args.memory_fraction).round() as usize).max(1);
    let mut rows = Vec::new();
    for name in &args.policies {
        let info = find_policy(name)?;
        let cap = match info.family {
            mobmem::engine::Family::SingleTier => Capacity::single(capacity),
            mobmem::engine::Family::Hybrid => Capacity {
                dram: (capacity / 20).max(1),
                pcm: capacity - (capacity / 20).max(1),
            },
        };
        let setup = RunSetup::new(info, cap);
        let mut best = f64::INFINITY;
        let mut peak_delta = 0u64;
        let mut accesses = 0;
        for _ in 0..args.repeat.max(1) {
            let measured_peak = reset_peak();
            let before = rss().map(|r| r.0).unwrap_or(0);
            let started = Instant::now();
            let mut source = trace::open(&path, None)?;
            let m = run_source(source.as_mut(), &setup, &mut |_| {})?;
            best = best.min(started.elapsed().as_secs_f64());
            accesses = m.accesses;
            if measured_peak {
                let peak = rss().map(|r| r.1).unwrap_or(0);
                peak_delta = peak_delta.max(peak.saturating_sub(before));
            }
        }
        rows.push(serde_json::json!({
            "policy": name,
            "accesses": accesses,
            "seconds": best,
            "accesses_per_second": accesses as f64 / best,
            "distinct_pages": pages,
            "capacity_pages": capacity,
            "peak_rss_growth_bytes": peak_delta,
            "bytes_per_distinct_page": peak_delta as f64 / pages as f64,
        }));
    }
    let out = serde_json::json!({
        "trace": path.display().to_string(),
        "events": events,
        "decode_events_per_second": events as f64 / decode_s,
        "runs": rows,
    });
    if args.json {
        println!("{}", serde_json::to_string_pretty(&out)?);
    } else {
        println!(
            "trace {} : {} events, {} distinct pages",
            path.display(),
            events,
            pages
        );
        println!(
            "decode only: {:.1} M events/s",
            events as f64 / decode_s / 1e6
        );
        println!(
            "{:<12} {:>12} {:>10} {:>14} {:>16}",
            "policy", "accesses", "seconds", "M accesses/s", "bytes/page"
        );
        for r in out["runs"].as_array().into_iter().flatten() {
            println!(
                "{:<12} {:>12} {:>10.3} {:>14.1} {:>16.1}",
                r["policy"].as_str().unwrap_or(""),
                r["accesses"],
                r["seconds"].as_f64().unwrap_or(0.0),
                r["accesses_per_second"].as_f64().unwrap_or(0.0) / 1e6,
                r["bytes_per_distinct_page"].as_f64().unwrap_or(0.0)
            );
        }
        println!("(bytes/page: growth of peak resident memory during the run, per distinct page of the trace)");
    }
    Ok(())
}
