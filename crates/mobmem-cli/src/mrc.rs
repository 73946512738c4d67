//! `mobmem mrc`: a miss-ratio curve, the misses of a policy at many cache sizes.

use std::path::PathBuf;
use std::time::Instant;

use anyhow::{bail, Context, Result};
use clap::Args;

use mobmem::devices::CostModel;
use mobmem::mm::placement::mrc::{self, CurvePoint, Sampling};
use mobmem::mm::placement::sim::RunSetup;
use mobmem::mm::placement::{Capacity, Family};
use mobmem::output::{self, Existing};
use mobmem::report::{self, Figure, LineAxis, Row, Table};
use mobmem::trace;

#[derive(Args)]
pub struct MrcArgs {
    /// Trace file (.mmt, .csv, .lis, oracleGeneral, .vscsi, .twr; optionally compressed).
    #[arg(long)]
    trace: PathBuf,
    #[command(flatten)]
    format: crate::trace_format::TraceFormat,
    /// Policy (see `mobmem policies`), or several, comma-separated (`lru,arc,s3fifo`),
    /// drawn together. lru is exact in one pass of the trace (Mattson's stack distances);
    /// any other is simulated at each size, in parallel over sizes, or estimated from
    /// miniature caches with `--sample`.
    #[arg(long, default_value = "lru", value_delimiter = ',')]
    policy: Vec<String>,
    /// Cache sizes: pages (`100,500,2000`) or shares of the trace's footprint
    /// (`1%,2%,5%`), comma-separated, or `N..M/K` for K sizes evenly spaced from N to M
    /// pages (`1%..100%/100` in shares); or sizes in bytes with a unit (`1MiB,64MiB`) on a
    /// trace with object sizes (oracleGeneral, vscsi, twr), where each object takes its
    /// size, for any single-tier policy.
    #[arg(long, required = true, value_delimiter = ',')]
    capacities: Vec<String>,
    /// Spatial sampling at a fixed rate (0 < RATE <= 1): only pages whose hash falls in
    /// that share of the hash space are followed. lru: SHARDS (sampled stack distances);
    /// any other policy: miniature simulation, a cache of RATE times each size run on the
    /// sampled requests (Waldspurger et al., USENIX ATC 2017). Capacities in pages.
    #[arg(long, value_name = "RATE", conflicts_with = "sample_size")]
    sample: Option<f64>,
    /// SHARDS sampling of fixed size (lru only): track at most N pages, the rate lowered
    /// as needed.
    #[arg(long, value_name = "N")]
    sample_size: Option<usize>,
    /// Print `[{"policy", "capacity", "hits", "misses", "accesses"}, ...]` as JSON.
    #[arg(long)]
    json: bool,
    /// Also write DIR/mrc.csv and DIR/mrc.svg (the curve; a curve in pages marks the
    /// trace's footprint, the size past which nothing more fits).
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// Draw mrc.svg's size axis on a log scale (with --out): sizes over several orders of
    /// magnitude each get their share of the width.
    #[arg(long, requires = "out")]
    log_x: bool,
    /// Policies that hash pages (w-tinylfu's sketch, hyperbolic's table) hash the trace's
    /// object ids, as libCacheSim does (see `sim --hash-object-ids`): sizes in pages or
    /// bytes, simulated at each size (not with --sample).
    #[arg(long, conflicts_with_all = ["sample", "sample_size"])]
    hash_object_ids: bool,
}

/// The most sizes one curve is computed at (`--capacities`, ranges expanded), checked
/// as the ranges expand: each is a row of the table and a point of the figure.
pub const MAX_CAPACITIES: u64 = 100_000;

/// Sizes in pages from the `--capacities` items, given the footprint.
pub fn parse_capacities(items: &[String], footprint: u64) -> Result<Vec<u64>> {
    let one = |text: &str| -> Result<u64> {
        let text = text.trim();
        if let Some(share) = text.strip_suffix('%') {
            let share: f64 = share
                .parse()
                .ok()
                .filter(|s: &f64| s.is_finite() && *s > 0.0)
                .with_context(|| format!("capacity `{text}`: expected a share above 0, like 5%"))?;
            Ok(((share / 100.0 * footprint as f64).round() as u64).max(1))
        } else {
            text.parse::<u64>()
                .ok()
                .filter(|&n| n > 0)
                .with_context(|| format!("capacity `{text}`: expected pages (a whole number above 0) or a share like 5%"))
        }
    };
    let mut out = Vec::new();
    for item in items {
        if let Some((range, steps)) = item.split_once('/') {
            let (from, to) = range
                .split_once("..")
                .with_context(|| format!("capacity `{item}`: expected FROM..TO/STEPS"))?;
            let (from, to) = (one(from)?, one(to)?);
            let steps: u64 = steps
                .trim()
                .parse()
                .ok()
                .filter(|&n| (1..=MAX_CAPACITIES).contains(&n))
                .with_context(|| {
                    format!("capacity `{item}`: expected 1 to {MAX_CAPACITIES} steps")
                })?;
            if to < from {
                bail!("capacity `{item}`: the range ends before it starts");
            }
            // Before the range is expanded: many ranges must not fill memory first.
            if out.len() as u64 + steps > MAX_CAPACITIES {
                bail!("capacity `{item}`: more than {MAX_CAPACITIES} capacities in all");
            }
            for i in 0..steps {
                let at = if steps == 1 {
                    to
                } else {
                    from + ((to - from) as f64 * i as f64 / (steps - 1) as f64).round() as u64
                };
                out.push(at);
            }
        } else {
            out.push(one(item)?);
        }
    }
    if out.len() as u64 > MAX_CAPACITIES {
        bail!("{} capacities: at most {MAX_CAPACITIES}", out.len());
    }
    Ok(out)
}

/// The sizes of `--capacities` if every one is in bytes (`None` if none is).
fn byte_capacities(items: &[String]) -> Result<Option<Vec<u64>>> {
    let bytes: Vec<Option<u64>> = items
        .iter()
        .map(|item| match crate::numbers::memory_size(item) {
            Ok(crate::numbers::MemorySize::Bytes(b)) => Some(b),
            _ => None,
        })
        .collect();
    match bytes.iter().filter(|b| b.is_some()).count() {
        0 => Ok(None),
        n if n == bytes.len() => Ok(Some(bytes.into_iter().flatten().collect())),
        _ => bail!(
            "--capacities: give every size in pages (or shares) or every size in bytes, not both"
        ),
    }
}

/// `mrc` with capacities in bytes: the trace decoded once, each size simulated, one row
/// per size with its miss ratio and byte miss ratio.
fn run_bytes(
    args: &MrcArgs,
    info: &'static mobmem::mm::placement::PolicyInfo,
    capacities: &[u64],
) -> Result<()> {
    use mobmem::mm::placement::bytes;
    if args.sample.is_some() || args.sample_size.is_some() {
        bail!("--sample and --sample-size apply to capacities in pages (SHARDS samples LRU stack distances)");
    }
    let started = Instant::now();
    let no_future: Option<std::sync::Arc<[u32]>> = info.offline.then(|| Vec::new().into());
    bytes::ByteCache::with_future(info, capacities[0], 0, no_future)?;
    let requests = crate::sized_requests(&args.trace, args.format.get()?, args.hash_object_ids)?;
    let all = bytes::simulate_each_bytes(&requests, info, capacities)?;
    let seconds = started.elapsed().as_secs_f64();
    let method = format!("{} (simulated at each size, in bytes)", info.name);
    if let Some(dir) = &args.out {
        let rows = all
            .iter()
            .map(|m| Row {
                keys: vec![method.clone(), m.capacity_bytes.to_string()],
                values: m.values().into_iter().map(|(n, v)| (n.into(), v)).collect(),
            })
            .collect();
        let axis = LineAxis {
            log: args.log_x,
            marks: Vec::new(),
        };
        write_table(
            dir,
            rows,
            std::slice::from_ref(&method),
            &args.trace,
            "cache size (bytes)",
            &axis,
        )?;
    }
    if args.json {
        let rows: Vec<serde_json::Value> = all
            .iter()
            .map(|m| {
                let map: serde_json::Map<String, serde_json::Value> = m
                    .values()
                    .into_iter()
                    .map(|(n, v)| (n.to_string(), crate::json_number(v)))
                    .collect();
                serde_json::Value::Object(map)
            })
            .collect();
        println!("{}", serde_json::to_string_pretty(&rows)?);
    } else {
        println!("trace      {}", args.trace.display());
        println!("method     {method}");
        println!(
            "{:>14} {:>12} {:>12} {:>12} {:>10} {:>15}",
            "capacity_bytes", "hits", "misses", "accesses", "miss_ratio", "byte_miss_ratio"
        );
        for m in &all {
            println!(
                "{:>14} {:>12} {:>12} {:>12} {:>10.4} {:>15.4}",
                m.capacity_bytes,
                m.hits,
                m.misses,
                m.accesses,
                m.miss_ratio(),
                m.byte_miss_ratio()
            );
        }
    }
    eprintln!("{} sizes in {seconds:.2} s", all.len());
    Ok(())
}

/// One policy's curve: its points and how they were made.
struct Curve {
    policy: &'static str,
    method: String,
    points: Vec<CurvePoint>,
}

pub fn run(args: MrcArgs) -> Result<()> {
    let policies = crate::find_policies(&args.policy)?;
    if let Some(capacities) = byte_capacities(&args.capacities)? {
        let [info] = policies[..] else {
            bail!("--capacities in bytes take one policy (several side by side: `mobmem sim --policy A,B --capacity 1MiB,...`)");
        };
        return run_bytes(&args, info, &capacities);
    }
    let sampling = match (args.sample, args.sample_size) {
        (Some(rate), _) if !(rate > 0.0 && rate <= 1.0) => {
            bail!("--sample {rate}: expected a rate above 0 and at most 1")
        }
        (Some(rate), _) => Some(Sampling::FixedRate(rate)),
        (None, Some(0)) => bail!("--sample-size 0: expected at least 1 page"),
        (None, Some(n)) => Some(Sampling::FixedSize(n)),
        (None, None) => None,
    };
    for info in &policies {
        if info.name != "lru" && args.sample_size.is_some() {
            bail!("--sample-size applies to lru only (SHARDS of fixed size); for {} give a rate with --sample", info.name);
        }
        if info.name != "lru" && args.sample.is_some() && info.family != Family::SingleTier {
            bail!(
                "--sample: {} is a hybrid policy; miniature simulation runs single-tier policies",
                info.name
            );
        }
    }
    let started = Instant::now();
    let mut curves = Vec::new();
    let footprint;
    if let [info] = policies[..] {
        if info.name == "lru" {
            // One pass over the streamed trace: only page ids reach the builder.
            let mut source = trace::open(&args.trace, args.format.get()?)?;
            let hint = source.page_count_hint().unwrap_or(0) as usize;
            let mut builder = match sampling {
                None => mrc::CurveBuilder::exact(hint),
                Some(s) => mrc::CurveBuilder::shards(s),
            };
            mobmem::core::events::for_each_batch(source.as_mut(), &mut |batch, _| {
                builder.access_events(batch);
                Ok(())
            })
            .map_err(|e| e.error)?;
            footprint = source.tables()?.pages.len() as u64;
            let capacities = parse_capacities(&args.capacities, footprint)?;
            curves.push(Curve {
                policy: info.name,
                method: lru_method(sampling),
                points: builder.finish().curve(&capacities),
            });
        } else {
            let t = trace::read_all(&args.trace, args.format.get()?)?;
            footprint = t.footprint() as u64;
            let capacities = parse_capacities(&args.capacities, footprint)?;
            let ids = object_ids(&args, &t)?;
            curves.push(simulated(&t, info, &capacities, args.sample, ids)?);
        }
    } else {
        // Several: the trace decoded once, each policy's curve from it.
        let t = trace::read_all(&args.trace, args.format.get()?)?;
        footprint = t.footprint() as u64;
        let capacities = parse_capacities(&args.capacities, footprint)?;
        let ids = object_ids(&args, &t)?;
        for info in &policies {
            if info.name == "lru" {
                let pages: Vec<u32> = t.accesses().map(|e| e.page()).collect();
                let histogram = match sampling {
                    None => mrc::lru_distances(&pages, footprint as usize),
                    Some(s) => mrc::shards_distances(&pages, s),
                };
                curves.push(Curve {
                    policy: info.name,
                    method: lru_method(sampling),
                    points: histogram.curve(&capacities),
                });
            } else {
                curves.push(simulated(&t, info, &capacities, args.sample, ids.clone())?);
            }
        }
    }
    let seconds = started.elapsed().as_secs_f64();
    if let Some(dir) = &args.out {
        let axis = LineAxis {
            log: args.log_x,
            marks: vec![(footprint as f64, format!("footprint: {footprint} pages"))],
        };
        write_out(dir, &curves, &args.trace, &axis)?;
    }
    if args.json {
        let rows: Vec<serde_json::Value> = curves
            .iter()
            .flat_map(|c| {
                c.points.iter().map(|p| {
                    serde_json::json!({
                        "policy": c.policy,
                        "capacity": p.capacity,
                        "hits": p.hits,
                        "misses": p.misses,
                        "accesses": p.accesses,
                    })
                })
            })
            .collect();
        println!("{}", serde_json::to_string_pretty(&rows)?);
    } else {
        println!(
            "trace      {} ({footprint} distinct pages)",
            args.trace.display()
        );
        for c in &curves {
            println!("method     {}", c.method);
        }
        println!(
            "{:>12} {:>12} {:>12} {:>12} {:>12} {:>10}",
            "policy", "capacity", "hits", "misses", "accesses", "miss_ratio"
        );
        for c in &curves {
            for p in &c.points {
                println!(
                    "{:>12} {:>12} {:>12} {:>12} {:>12} {:>10.4}",
                    c.policy,
                    p.capacity,
                    p.hits,
                    p.misses,
                    p.accesses,
                    p.miss_ratio()
                );
            }
        }
    }
    let sizes: usize = curves.iter().map(|c| c.points.len()).sum();
    eprintln!("{sizes} sizes in {seconds:.2} s");
    Ok(())
}

fn lru_method(sampling: Option<Sampling>) -> String {
    match sampling {
        None => "lru (exact, stack distances)".to_string(),
        Some(Sampling::FixedRate(r)) => format!("lru (SHARDS, rate {r})"),
        Some(Sampling::FixedSize(n)) => format!("lru (SHARDS, at most {n} pages)"),
    }
}

/// The trace's object ids with `--hash-object-ids`, else `None`.
fn object_ids(args: &MrcArgs, t: &trace::Trace) -> Result<Option<std::sync::Arc<[u64]>>> {
    if !args.hash_object_ids {
        return Ok(None);
    }
    Ok(Some(t.tables.object_ids_to_hash(&args.trace)?))
}

/// A policy other than lru: simulated at each size (hashing `object_ids` if given), or by
/// miniature caches at `rate`.
fn simulated(
    t: &trace::Trace,
    info: &'static mobmem::mm::placement::PolicyInfo,
    capacities: &[u64],
    rate: Option<f64>,
    object_ids: Option<std::sync::Arc<[u64]>>,
) -> Result<Curve> {
    if let Some(rate) = rate {
        return Ok(Curve {
            policy: info.name,
            method: format!("{} (miniature simulation, rate {rate})", info.name),
            points: mrc::miniature_sizes(t, info, capacities, rate)?,
        });
    }
    let setup = RunSetup {
        policy: info,
        capacity: Capacity::of_memory(info.family, 1, 0.05)?,
        cost: CostModel::paper_relative(),
        devices: Default::default(),
        clock: None,
        warmup: 0,
        object_ids,
    };
    Ok(Curve {
        policy: info.name,
        method: format!("{} (simulated at each size)", info.name),
        points: mrc::simulate_sizes(t, &setup, capacities, 0.05)?,
    })
}

/// DIR/mrc.csv (one row a policy and size) and DIR/mrc.svg (a line a policy).
fn write_out(
    dir: &std::path::Path,
    curves: &[Curve],
    trace: &std::path::Path,
    axis: &LineAxis,
) -> Result<()> {
    let rows = curves
        .iter()
        .flat_map(|c| {
            c.points.iter().map(|p| Row {
                keys: vec![c.method.clone(), p.capacity.to_string()],
                values: vec![
                    ("hits".into(), p.hits as f64),
                    ("misses".into(), p.misses as f64),
                    ("accesses".into(), p.accesses as f64),
                    ("miss_ratio".into(), p.miss_ratio()),
                ],
            })
        })
        .collect();
    let methods: Vec<String> = curves.iter().map(|c| c.method.clone()).collect();
    write_table(dir, rows, &methods, trace, "cache size (pages)", axis)
}

/// DIR/mrc.csv of `rows` (keyed by method and capacity) and DIR/mrc.svg, the miss ratio
/// over the capacity.
fn write_table(
    dir: &std::path::Path,
    rows: Vec<Row>,
    methods: &[String],
    trace: &std::path::Path,
    x_label: &str,
    axis: &LineAxis,
) -> Result<()> {
    let plot = LinePlot {
        stem: "mrc",
        title: "miss-ratio curve",
        x: "capacity",
        x_label,
        own_csv,
        own_svg,
    };
    write_line_plot(dir, &plot, rows, methods, trace, axis)
}

/// A table of miss ratios, a line a method, as `write_line_plot` writes it.
pub(crate) struct LinePlot<'a> {
    /// The files' name: DIR/STEM.csv and DIR/STEM.svg.
    pub stem: &'a str,
    /// The figure's title, which also marks the SVG as mobmem's own.
    pub title: &'a str,
    /// The key of the x values, after `method`.
    pub x: &'a str,
    pub x_label: &'a str,
    /// Whether a file at DIR/STEM.csv or DIR/STEM.svg is one mobmem wrote (by its head),
    /// which may be replaced.
    pub own_csv: fn(&std::path::Path) -> bool,
    pub own_svg: fn(&std::path::Path) -> bool,
}

/// DIR/STEM.csv of `rows` (keyed by method and `plot.x`) and DIR/STEM.svg, the miss
/// ratio over x, a line a method; neither is written unless both may be (a file there
/// that is not mobmem's own is refused).
pub(crate) fn write_line_plot(
    dir: &std::path::Path,
    plot: &LinePlot,
    rows: Vec<Row>,
    methods: &[String],
    trace: &std::path::Path,
    axis: &LineAxis,
) -> Result<()> {
    std::fs::create_dir_all(dir).with_context(|| format!("{}", dir.display()))?;
    let table = Table {
        experiment: plot.stem.into(),
        title: format!("{} of {}", plot.title, trace.display()),
        keys: vec!["method".into(), plot.x.into()],
        rows,
    };
    let csv_path = dir.join(format!("{}.csv", plot.stem));
    let mut csv = Vec::new();
    report::write_results_csv(&mut csv, &table)?;
    let figure = Figure {
        id: plot.stem.into(),
        title: plot.title.into(),
        x: plot.x.into(),
        x_label: plot.x_label.into(),
        x_scale: 1.0,
        series: "method".into(),
        lines: methods.to_vec(),
        filter: Vec::new(),
        metric: "miss_ratio".into(),
        y_label: "miss ratio".into(),
        normalize_to: None,
    };
    let svg = report::render_figure_with(&table, &figure, axis)?;
    let svg_path = dir.join(format!("{}.svg", plot.stem));
    let (own_csv, own_svg) = (plot.own_csv, plot.own_svg);
    // Both are checked before either is written: a refusal leaves the folder as it was.
    output::check_replaceable(&csv_path, own_csv, "")?;
    output::check_replaceable(&svg_path, own_svg, "")?;
    output::write_file(&csv_path, &csv, own_csv, Existing::Refuse)?;
    output::write_file(&svg_path, svg.as_bytes(), own_svg, Existing::Refuse)?;
    eprintln!("wrote {} and {}", csv_path.display(), svg_path.display());
    Ok(())
}

/// A curve mobmem wrote before (`DIR/mrc.csv`): a regular file with this table's header.
fn own_csv(path: &std::path::Path) -> bool {
    output::file_head_is(path, |head| {
        head.starts_with("experiment,method,capacity,metric,value\n")
    })
}

/// A plot mobmem wrote before (`DIR/mrc.svg`).
fn own_svg(path: &std::path::Path) -> bool {
    output::file_head_is(path, |head| {
        head.starts_with("<svg") && head.contains("miss-ratio curve")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_past_the_limit_are_refused_before_they_expand() {
        let items = |n: usize| vec!["1..1000/60000".to_string(); n];
        assert_eq!(parse_capacities(&items(1), 1000).unwrap().len(), 60_000);
        // The second range would make 120,000: refused before it is expanded.
        let e = parse_capacities(&items(2), 1000).unwrap_err();
        assert!(e.to_string().contains("more than 100000"), "{e}");
        assert!(e.to_string().contains("1..1000/60000"), "{e}");
        let shares = ["5%".to_string(), "1..50%/10".to_string()];
        // A range from 1 page to 50 % of 200 pages starts at 1.
        assert_eq!(parse_capacities(&shares, 200).unwrap()[..2], [10, 1]);
    }
}
