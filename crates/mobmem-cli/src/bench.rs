//! `mobmem bench`: simulator throughput (accesses per second) and resident memory per
//! distinct page, on a trace in the binary format.
//!
//! Each policy is measured in a fresh child process (`bench --one`), so the peak resident
//! memory it reports belongs to that run alone and not to memory an earlier run freed.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use anyhow::{bail, Context, Result};
use clap::Args;
use serde_json::{json, Value};

use mobmem::mm::placement::mrc;
use mobmem::mm::placement::sim::{run_source, RunSetup};
use mobmem::mm::placement::{find_policy, Capacity, Family};
use mobmem::trace::{self, Event};
use mobmem::workload;

#[derive(Args)]
pub struct BenchArgs {
    /// What to measure: nothing (the cache engine on a trace), or `phone` (a phone file's
    /// day with every technique on: simulated seconds per wall second, bytes per page).
    #[arg(value_parser = ["phone"])]
    what: Option<String>,
    /// With `phone`: the phone file to run; default: the shipped experiments/phone.toml.
    #[arg(long, value_name = "FILE")]
    phone_file: Option<PathBuf>,
    /// With `phone`: the scale to run it at (1 is full size); default: the file's own.
    #[arg(long, allow_negative_numbers = true)]
    scale: Option<f64>,
    /// With `phone`: the workload's seed.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Trace to measure on; default: the app-switching preset scaled to --accesses.
    #[arg(long)]
    trace: Option<PathBuf>,
    /// Accesses of the generated trace.
    #[arg(long, default_value_t = 10_000_000, value_parser = crate::numbers::non_negative::<u64>, allow_negative_numbers = true)]
    accesses: u64,
    /// Policies to measure, comma-separated.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "lru,clock,arc,2q,hybrid-lru,app-aware"
    )]
    policies: Vec<String>,
    /// Memory as a fraction of the footprint (hybrid policies: 5% of it DRAM).
    #[arg(long, default_value_t = 0.1, allow_negative_numbers = true)]
    memory_fraction: f64,
    /// Timed repetitions per policy; the fastest is reported.
    #[arg(long, default_value_t = 3, value_parser = crate::numbers::non_negative::<usize>, allow_negative_numbers = true)]
    repeat: usize,
    /// Requests of a second trace, in libCacheSim's oracleGeneral format: Zipf (alpha 1)
    /// over --zipf-objects objects with random 64-bit ids and each request's next access
    /// (as libCacheSim's traceConv writes it, for its Belady), on which the LRU whole
    /// process (`mobmem sim`) is timed; 0 skips it, at most 4294967294.
    #[arg(long, default_value_t = 10_000_000, value_parser = crate::numbers::non_negative::<u64>, allow_negative_numbers = true)]
    zipf_requests: u64,
    /// Objects of the Zipf trace.
    #[arg(long, default_value_t = 1_000_000, value_parser = crate::numbers::non_negative::<u64>, allow_negative_numbers = true)]
    zipf_objects: u64,
    /// libCacheSim's `cachesim` binary, to time on the same Zipf trace (objects of size
    /// 1) beside `mobmem sim`, policy by policy (--zipf-policies).
    #[arg(long, value_name = "PATH")]
    cachesim: Option<PathBuf>,
    /// Policies timed as whole `mobmem sim` processes on the Zipf trace (and by cachesim
    /// with --cachesim), comma-separated; `all`: every single-tier policy libCacheSim's
    /// cachesim runs.
    #[arg(long, value_delimiter = ',', default_value = "lru")]
    zipf_policies: Vec<String>,
    /// A text trace of your own (a CSV, a block trace) to time reading against its `.mmt`
    /// copy, written to a temporary folder: decoding alone and LRU's whole run on each,
    /// read with --format and --columns as `sim` reads it.
    #[arg(long, value_name = "FILE")]
    ingest: Option<PathBuf>,
    #[command(flatten)]
    ingest_format: crate::trace_format::TraceFormat,
    /// Distinct objects of a third trace, on which LRU's peak memory per distinct object
    /// is measured at scale (its goal: at most 32 bytes at 5 M objects): every object
    /// requested once in turn, with a Zipf request over all of them after each; 0 skips
    /// it.
    #[arg(long, default_value_t = 5_000_000, value_parser = crate::numbers::non_negative::<u64>, allow_negative_numbers = true)]
    memory_objects: u64,
    /// Simulated seconds of the time model's machine (32 threads on 8 CPUs); 0 skips it.
    #[arg(long, default_value_t = 600, value_parser = crate::numbers::non_negative::<u64>, allow_negative_numbers = true)]
    time_model_seconds: u64,
    /// Print as JSON.
    #[arg(long)]
    json: bool,
    /// Measure one policy on --trace in this process and print one JSON object (used by
    /// the parent run).
    #[arg(long, hide = true)]
    one: Option<String>,
    /// With --one: the trace's distinct pages, as the parent counted them.
    #[arg(long, hide = true)]
    pages: Option<u64>,
}

/// Peak resident set size of this process, bytes (Linux).
fn peak_rss() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

fn current_rss() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

/// `pages` is the trace's distinct pages as the parent counted them from its tables;
/// without it, the header's page count (bounded by the file's length) stands in.
fn measure_one(
    path: &Path,
    policy: &str,
    pages: Option<u64>,
    memory_fraction: f64,
    repeat: usize,
) -> Result<Value> {
    let info = find_policy(policy)?;
    // Opened once before the baseline, so that the reader's buffers are not counted as
    // growth of the first run.
    let hint = trace::open(path, None)?.page_count_hint().unwrap_or(0);
    let pages = pages.unwrap_or(hint);
    if pages == 0 {
        bail!("{}: the trace has no pages", path.display());
    }
    let memory = ((pages as f64 * memory_fraction).round() as usize).max(2);
    let capacity = match info.family {
        Family::SingleTier => Capacity::single(memory),
        Family::Hybrid => {
            let dram = (memory / 20).max(1);
            Capacity {
                dram,
                pcm: memory - dram,
            }
        }
    };
    let setup = RunSetup::new(info, capacity);
    let baseline = current_rss().unwrap_or(0);
    let mut best = f64::INFINITY;
    let mut accesses = 0;
    for _ in 0..repeat.max(1) {
        let started = Instant::now();
        let mut source = trace::open(path, None)?;
        let m = run_source(source.as_mut(), &setup, &mut |_| {})?;
        best = best.min(started.elapsed().as_secs_f64());
        accesses = m.accesses;
    }
    let growth = peak_rss().unwrap_or(0).saturating_sub(baseline);
    Ok(json!({
        "policy": policy,
        "accesses": accesses,
        "seconds": best,
        "accesses_per_second": accesses as f64 / best,
        "distinct_pages": pages,
        "memory_pages": memory,
        "peak_rss_growth_bytes": growth,
        "bytes_per_distinct_page": growth as f64 / pages as f64,
    }))
}

/// `t`'s accesses as libCacheSim oracleGeneral records: timestamp (s), object id (the
/// page id), size 4096, next access unknown (-1).
fn write_oracle_general(path: &Path, t: &trace::Trace) -> Result<()> {
    use std::io::Write;
    let file = std::fs::File::create(path).with_context(|| format!("{}", path.display()))?;
    let mut out = std::io::BufWriter::with_capacity(1 << 20, file);
    for e in t.accesses() {
        out.write_all(&((e.time_ns() / 1_000_000_000) as u32).to_le_bytes())?;
        out.write_all(&u64::from(e.page()).to_le_bytes())?;
        out.write_all(&4096u32.to_le_bytes())?;
        out.write_all(&(-1i64).to_le_bytes())?;
    }
    out.flush()?;
    Ok(())
}

/// The column spec of [`write_columns_csv`]'s file.
const BENCH_COLUMNS: &str = "has-header=true, time-col=1, pid-col=2, obj-id-col=3, op-col=4";

/// The accesses of `t` as a CSV of the user's own layout (`time_ns,pid,page,op`), read
/// back with [`BENCH_COLUMNS`], to measure the column-spec reader beside `.mmt`.
fn write_columns_csv(path: &Path, t: &trace::Trace) -> Result<()> {
    use std::io::Write;
    let file = std::fs::File::create(path).with_context(|| format!("{}", path.display()))?;
    let mut out = std::io::BufWriter::with_capacity(1 << 20, file);
    writeln!(out, "time_ns,pid,page,op")?;
    for e in t.accesses() {
        let pid = t.tables.processes[e.proc() as usize].pid;
        let op = if e.is_write() { 'W' } else { 'R' };
        writeln!(out, "{},{pid},{},{op}", e.time_ns(), e.page())?;
    }
    out.flush()?;
    Ok(())
}

/// Reading a text trace against reading its `.mmt` copy (best of the repeats for both,
/// so that the ratios compare like with like): decoding alone, and LRU's whole run at
/// `--memory-fraction` of the footprint (`pages`), decoding on a second thread as `sim`
/// does.
fn ingest_figures(
    text: &Path,
    format: Option<trace::Format>,
    mmt: &Path,
    pages: u64,
    args: &BenchArgs,
) -> Result<Value> {
    let memory = ((pages as f64 * args.memory_fraction).round() as usize).max(2);
    let setup = RunSetup::new(find_policy("lru")?, Capacity::single(memory));
    let mut batch: Vec<Event> = Vec::with_capacity(1 << 16);
    // One timed reading: (events, seconds).
    let mut once = |path: &Path, format: Option<trace::Format>, lru: bool| -> Result<(u64, f64)> {
        let started = Instant::now();
        let mut source = trace::open(path, format)?;
        let n = if lru {
            run_source(source.as_mut(), &setup, &mut |_| {})?.accesses
        } else {
            let mut n = 0u64;
            while source.read_batch(&mut batch, 1 << 16)? {
                n += batch.len() as u64;
            }
            n
        };
        Ok((n, started.elapsed().as_secs_f64()))
    };
    let rate = |(n, s): (u64, f64)| n as f64 / s;
    // The four readings take turns, repeat after repeat, so that a slower spell of the
    // machine falls on text and `.mmt` alike; the fastest of each is kept, and each
    // repeat's text reading over the `.mmt` one beside it gives a pair's ratio, whose
    // spread says how much the machine moved.
    let mut best = [(0u64, f64::INFINITY); 4];
    let (mut decode_pairs, mut lru_pairs) = (vec![], vec![]);
    for _ in 0..args.repeat.max(1) {
        let readings = [
            once(text, format.clone(), false)?,
            once(mmt, None, false)?,
            once(text, format.clone(), true)?,
            once(mmt, None, true)?,
        ];
        decode_pairs.push(rate(readings[0]) / rate(readings[1]));
        lru_pairs.push(rate(readings[2]) / rate(readings[3]));
        for (kept, (n, s)) in best.iter_mut().zip(readings) {
            *kept = (n, kept.1.min(s));
        }
    }
    let [text_read, mmt_read, text_run, mmt_run] = best;
    let (accesses, mmt_events) = (text_read.0, mmt_read.0);
    let (text_decode, mmt_decode) = (rate(text_read), rate(mmt_read));
    let (text_lru, mmt_lru) = (rate(text_run), rate(mmt_run));
    Ok(json!({
        "accesses": accesses,
        "mmt_events": mmt_events,
        "decode_accesses_per_second": text_decode,
        "mmt_decode_events_per_second": mmt_decode,
        "over_mmt": text_decode / mmt_decode,
        "pair_over_mmt": spread(decode_pairs),
        "lru_accesses_per_second": text_lru,
        "mmt_lru_accesses_per_second": mmt_lru,
        "lru_over_mmt": text_lru / mmt_lru,
        "pair_lru_over_mmt": spread(lru_pairs),
    }))
}

/// The least, median and greatest of some pairs' ratios (at least one), as JSON.
fn spread(mut ratios: Vec<f64>) -> Value {
    ratios.sort_by(f64::total_cmp);
    let n = ratios.len();
    let median = (ratios[(n - 1) / 2] + ratios[n / 2]) / 2.0;
    json!({ "min": ratios[0], "median": median, "max": ratios[n - 1] })
}

fn print_ingest(what: &str, c: &serde_json::Map<String, Value>) {
    let m = |key: &str| c[key].as_f64().unwrap_or(0.0) / 1e6;
    let x = |key: &str| c[key].as_f64().unwrap_or(0.0);
    let pairs = |key: &str| {
        let p = |k: &str| c[key][k].as_f64().unwrap_or(0.0);
        format!(
            "pairs {:.2}..{:.2}, median {:.2}",
            p("min"),
            p("max"),
            p("median")
        )
    };
    println!(
        "{what}: decode only {:.1} M accesses/s, {:.2}x .mmt's {:.1} M events/s ({}); \
         lru whole run {:.1} M accesses/s, {:.2}x .mmt's {:.1} ({})",
        m("decode_accesses_per_second"),
        x("over_mmt"),
        m("mmt_decode_events_per_second"),
        pairs("pair_over_mmt"),
        m("lru_accesses_per_second"),
        x("lru_over_mmt"),
        m("mmt_lru_accesses_per_second"),
        pairs("pair_lru_over_mmt"),
    );
}

/// A Zipf (alpha 1) trace of `requests` requests over `objects` objects in oracleGeneral
/// format: random 64-bit object ids (so that a reader must hash them), sizes 512 B to
/// 64 KiB, one second per 1000 requests, and each request's next access to the same
/// object as libCacheSim's `traceConv` writes it (the 1-based number of that request, -1
/// for none), so that `cachesim`'s Belady, which reads its future from that field, runs
/// Belady. Returns its distinct objects.
fn write_zipf_oracle_general(path: &Path, requests: u64, objects: u64) -> Result<u64> {
    use rand::{Rng, SeedableRng};
    use std::io::Write;
    let requests = u32::try_from(requests)
        .ok()
        .filter(|&r| r < u32::MAX)
        .context("--zipf-requests: at most 4294967294")?;
    let objects = objects.max(1) as usize;
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
    let mut cdf = Vec::with_capacity(objects);
    let mut total = 0.0;
    for rank in 1..=objects {
        total += 1.0 / rank as f64;
        cdf.push(total);
    }
    let ids: Vec<u64> = (0..objects).map(|_| rng.gen()).collect();
    let sizes: Vec<u32> = (0..objects).map(|_| rng.gen_range(512..65536)).collect();
    let ranks: Vec<u32> = (0..requests)
        .map(|_| {
            let u = rng.gen::<f64>() * total;
            cdf.partition_point(|&c| c < u).min(objects - 1) as u32
        })
        .collect();
    // Backward: each request's next one of the same object (u32::MAX: none).
    let mut next = vec![u32::MAX; ranks.len()];
    let mut seen_at = vec![u32::MAX; objects];
    for (i, &rank) in ranks.iter().enumerate().rev() {
        next[i] = seen_at[rank as usize];
        seen_at[rank as usize] = i as u32;
    }
    let distinct = seen_at.iter().filter(|&&s| s != u32::MAX).count() as u64;
    let file = std::fs::File::create(path).with_context(|| format!("{}", path.display()))?;
    let mut out = std::io::BufWriter::with_capacity(1 << 20, file);
    for (i, (&rank, &next)) in ranks.iter().zip(&next).enumerate() {
        let next_vtime = if next == u32::MAX {
            -1
        } else {
            next as i64 + 1
        };
        out.write_all(&((i / 1000) as u32).to_le_bytes())?;
        out.write_all(&ids[rank as usize].to_le_bytes())?;
        out.write_all(&sizes[rank as usize].to_le_bytes())?;
        out.write_all(&next_vtime.to_le_bytes())?;
    }
    out.flush()?;
    Ok(distinct)
}

/// LRU's peak memory per distinct object, the goal it is held to at 5 M objects.
pub const GOAL_BYTES_PER_OBJECT: f64 = 32.0;

/// A trace of exactly `objects` distinct objects in oracleGeneral format (random 64-bit
/// ids, size 4096, no next access): request `2k` is object `k`, its first, and request
/// `2k + 1` an object drawn by Zipf (alpha 1) over all of them, so that a cache of a tenth
/// of them also hits.
fn write_objects_trace(path: &Path, objects: u64) -> Result<()> {
    use rand::{Rng, SeedableRng};
    use std::io::Write;
    let objects = usize::try_from(objects)
        .ok()
        .filter(|&n| n < u32::MAX as usize / 2)
        .context("--memory-objects: at most 2147483646")?;
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(11);
    let ids: Vec<u64> = (0..objects).map(|_| rng.gen()).collect();
    let mut cdf = Vec::with_capacity(objects);
    let mut total = 0.0;
    for rank in 1..=objects {
        total += 1.0 / rank as f64;
        cdf.push(total);
    }
    let file = std::fs::File::create(path).with_context(|| format!("{}", path.display()))?;
    let mut out = std::io::BufWriter::with_capacity(1 << 20, file);
    let mut record = |i: usize, id: u64| -> std::io::Result<()> {
        out.write_all(&((i / 1000) as u32).to_le_bytes())?;
        out.write_all(&id.to_le_bytes())?;
        out.write_all(&4096u32.to_le_bytes())?;
        out.write_all(&(-1i64).to_le_bytes())
    };
    for (k, &id) in ids.iter().enumerate() {
        record(2 * k, id)?;
        let u = rng.gen::<f64>() * total;
        let rank = cdf.partition_point(|&c| c < u).min(objects - 1);
        record(2 * k + 1, ids[rank])?;
    }
    out.flush()?;
    Ok(())
}

/// LRU's peak memory per distinct object on [`write_objects_trace`]'s trace, measured in
/// a fresh process.
fn bench_memory(args: &BenchArgs, dir: &Path, exe: &Path) -> Result<Value> {
    let path = dir.join("objects.oracleGeneral.bin");
    write_objects_trace(&path, args.memory_objects)?;
    let one = measure_in_child(
        exe,
        args,
        "lru",
        &path,
        args.memory_objects,
        1,
        "lru's memory at scale",
    )?;
    std::fs::remove_file(&path).with_context(|| format!("{}", path.display()))?;
    let bytes = one["bytes_per_distinct_page"].as_f64().unwrap_or(f64::NAN);
    Ok(json!({
        "distinct_objects": args.memory_objects,
        "requests": 2 * args.memory_objects,
        "lru_peak_rss_growth_bytes": one["peak_rss_growth_bytes"],
        "lru_bytes_per_distinct_object": bytes,
        "goal_bytes_per_object": GOAL_BYTES_PER_OBJECT,
        "meets_goal": bytes <= GOAL_BYTES_PER_OBJECT,
    }))
}

/// The fastest of `repeat` whole runs of `program args` in the folder `cwd`, seconds; its
/// stdout must contain `expect`. (cachesim writes a result file into its working folder:
/// run in the benchmark's own temporary folder, it never lands in the user's.)
fn time_process(
    program: &Path,
    args: &[String],
    cwd: &Path,
    repeat: usize,
    expect: &str,
) -> Result<f64> {
    let mut best = f64::INFINITY;
    for _ in 0..repeat.max(1) {
        best = best.min(time_once(program, args, cwd, expect)?);
    }
    Ok(best)
}

/// The wall time of one run of `program`, which must succeed and print `expect`.
fn time_once(program: &Path, args: &[String], cwd: &Path, expect: &str) -> Result<f64> {
    let started = Instant::now();
    let out = Command::new(program)
        .args(args)
        .current_dir(cwd)
        .output()
        .with_context(|| format!("running {}", program.display()))?;
    let seconds = started.elapsed().as_secs_f64();
    if !out.status.success() || !String::from_utf8_lossy(&out.stdout).contains(expect) {
        bail!(
            "{} {} failed: {}",
            program.display(),
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    Ok(seconds)
}

/// `bench --one POLICY` on `trace` of `pages` distinct pages, `repeat` times, in a child
/// process of its own (so that the memory it reports is the run's alone): its figures, as
/// JSON. `what` names the run in an error.
fn measure_in_child(
    exe: &Path,
    args: &BenchArgs,
    policy: &str,
    trace: &Path,
    pages: u64,
    repeat: usize,
    what: &str,
) -> Result<Value> {
    let out = Command::new(exe)
        .args(["bench", "--one", policy, "--trace"])
        .arg(trace)
        .arg("--pages")
        .arg(pages.to_string())
        .args([
            "--memory-fraction",
            &args.memory_fraction.to_string(),
            "--repeat",
            &repeat.to_string(),
        ])
        .output()
        .context("running the measuring child process")?;
    if !out.status.success() {
        bail!(
            "measuring {what} failed: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    serde_json::from_slice(&out.stdout).context("reading the child's result")
}

/// mobmem's single-tier policies and how libCacheSim's `cachesim` names them (with the
/// parameters that make its variant mobmem's): the same policy on the same file.
pub const LIBCACHESIM_NAMES: &[(&str, &[&str])] = &[
    ("lru", &["lru"]),
    ("fifo", &["fifo"]),
    ("clock", &["clock"]),
    ("sieve", &["sieve"]),
    ("s3fifo", &["s3fifo"]),
    ("lfu", &["lfu"]),
    ("fifo-merge", &["fifo-merge"]),
    ("lecar", &["lecar"]),
    ("cacheus", &["cacheus"]),
    ("lhd", &["lhd"]),
    ("hyperbolic", &["hyperbolic"]),
    ("clock-2", &["clock", "-e", "n-bit-counter=2"]),
    ("lfuda", &["lfuda"]),
    ("gdsf", &["gdsf"]),
    ("qdlp", &["qdlp"]),
    ("slru-4", &["slru"]),
    ("2q", &["twoq"]),
    ("arc", &["arc"]),
    ("lirs", &["lirs"]),
    ("w-tinylfu", &["wtinylfu"]),
    ("opt", &["belady"]),
];

/// The Zipf oracleGeneral trace: each policy of --zipf-policies as a whole `mobmem sim`
/// process, LRU's run alone with its memory per distinct object (`bench --one`), and
/// libCacheSim's `cachesim` on the same file for each policy when given.
fn bench_zipf(args: &BenchArgs, dir: &Path, exe: &Path) -> Result<Value> {
    let policies: Vec<&str> = if args.zipf_policies.iter().any(|p| p.trim() == "all") {
        LIBCACHESIM_NAMES.iter().map(|(p, _)| *p).collect()
    } else {
        let mut out = Vec::new();
        for p in &args.zipf_policies {
            let info = mobmem::mm::placement::find_policy(p.trim())?;
            if info.family != mobmem::mm::placement::Family::SingleTier {
                bail!(
                    "--zipf-policies: {} is a hybrid policy; the Zipf trace is a cache trace",
                    info.name
                );
            }
            out.push(info.name);
        }
        out
    };
    let path = dir.join("zipf.oracleGeneral.bin");
    let distinct = write_zipf_oracle_general(&path, args.zipf_requests, args.zipf_objects)?;
    let capacity = ((distinct as f64 * args.memory_fraction).round() as u64).max(2);
    let trace = path.display().to_string();
    let one = measure_in_child(
        exe,
        args,
        "lru",
        &path,
        distinct,
        1,
        "lru on the Zipf trace",
    )?;
    let program = match &args.cachesim {
        None => None,
        // It runs in the temporary folder: a relative path is taken from here first (a
        // bare name is still looked up on the PATH).
        Some(program) if program.components().count() > 1 => Some(
            std::path::absolute(program)
                .with_context(|| format!("--cachesim {}", program.display()))?,
        ),
        Some(program) => Some(program.clone()),
    };
    let mut rows = Vec::new();
    for policy in policies {
        let sim_args: Vec<String> = ["sim", "--trace", &trace, "--policy", policy, "--capacity"]
            .iter()
            .map(|s| s.to_string())
            .chain([capacity.to_string()])
            .collect();
        let (whole, cachesim) = match (
            &program,
            LIBCACHESIM_NAMES.iter().find(|(p, _)| *p == policy),
        ) {
            (Some(program), Some((_, name))) => {
                let cs_args: Vec<String> = [trace.as_str(), "oracleGeneral", name[0]]
                    .iter()
                    .map(|s| s.to_string())
                    .chain([capacity.to_string(), "--ignore-obj-size".into(), "1".into()])
                    .chain(name[1..].iter().map(|s| s.to_string()))
                    .collect();
                // Each repetition runs one of each, one after the other, so that both see
                // the machine as it is then; the spread of the pairs' ratios says how much
                // the machine moved.
                let (mut ours, mut theirs, mut ratios) = (f64::INFINITY, f64::INFINITY, vec![]);
                for _ in 0..args.repeat.max(1) {
                    let m = time_once(exe, &sim_args, dir, "misses")?;
                    let c = time_once(program, &cs_args, dir, "miss ratio")?;
                    (ours, theirs) = (ours.min(m), theirs.min(c));
                    ratios.push(c / m);
                }
                (
                    ours,
                    json!({
                        "seconds": theirs,
                        "mobmem_speedup": theirs / ours,
                        "pair_speedups": spread(ratios),
                    }),
                )
            }
            _ => (
                time_process(exe, &sim_args, dir, args.repeat, "misses")?,
                Value::Null,
            ),
        };
        rows.push(json!({
            "policy": policy,
            "whole_process_seconds": whole,
            "requests_per_second": args.zipf_requests as f64 / whole,
            "cachesim": cachesim,
        }));
    }
    let lru = rows.iter().find(|r| r["policy"] == "lru");
    Ok(json!({
        "requests": args.zipf_requests,
        "distinct_objects": distinct,
        "capacity_objects": capacity,
        "lru_whole_process_seconds": lru.map(|r| r["whole_process_seconds"].clone()),
        "lru_whole_process_requests_per_second": lru.map(|r| r["requests_per_second"].clone()),
        "lru_bytes_per_distinct_object": one["bytes_per_distinct_page"],
        "cachesim": lru.map(|r| r["cachesim"].clone()),
        "policies": rows,
    }))
}

/// The time model's throughput: a phone-like machine (four big and four LITTLE CPUs, a
/// flash queue of depth 8 and a zram-like queue of depth 1) with 32 threads, each
/// repeating CPU work, a device operation and a timer sleep, from a fixed seed.
fn bench_time_model(simulated_s: u64) -> Result<Value> {
    use mobmem::core::time::{DeviceQueue, Step, ThreadSpec, Timeline};
    use rand::{Rng, SeedableRng};
    const MS: u64 = 1_000_000;
    let capacities = [1024, 1024, 1024, 1024, 512, 512, 512, 512];
    let simulated_ns = simulated_s.min(86_400) * 1000 * MS;
    let devices = vec![DeviceQueue::new("flash", 8)?, DeviceQueue::new("zram", 1)?];
    let mut timeline = Timeline::new(&capacities, devices, 8, 250)?;
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(1);
    let threads = 32;
    for i in 0..threads {
        let spec = ThreadSpec::new(format!("t{i}"))
            .nice(rng.gen_range(-2..6))
            .group(1 + i % 8);
        let thread = timeline.spawn(spec)?;
        let mut job = Vec::new();
        // One job a thread, long enough to outlast the run.
        let mut planned = 0u64;
        while planned < simulated_ns {
            let work = rng.gen_range(100..4000) * 1000;
            let service = rng.gen_range(50..800) * 1000;
            let ticks = rng.gen_range(1..8);
            job.push(Step::Cpu {
                work_ns: work,
                memstall: false,
            });
            job.push(Step::Io {
                device: rng.gen_range(0..2),
                service_ns: service,
                memstall: rng.gen_bool(0.3),
            });
            job.push(Step::SleepTicks {
                ticks,
                tick_ns: 4 * MS,
            });
            planned += work + service + (ticks as u64 + 1) * 4 * MS;
        }
        timeline.submit(thread, 0, job)?;
    }
    let started = Instant::now();
    timeline.run_until(simulated_ns)?;
    let seconds = started.elapsed().as_secs_f64();
    let steps = timeline.steps_begun();
    Ok(json!({
        "threads": threads,
        "cpus": capacities.len(),
        "steps": steps,
        "simulated_seconds": simulated_ns as f64 / 1e9,
        "seconds": seconds,
        "steps_per_second": steps as f64 / seconds,
        "simulated_seconds_per_second": simulated_ns as f64 / 1e9 / seconds,
    }))
}

/// A simulated day in under a minute: the full-scale goal of `bench phone`.
const PHONE_GOAL_SIM_S_PER_WALL_S: f64 = 86_400.0 / 60.0;

/// `bench phone`: generate the phone's workload, then run it once with every slot at its
/// mechanism, timing each part; peak resident memory over the trace's distinct pages.
fn bench_phone(args: &BenchArgs) -> Result<()> {
    use mobmem::config_file::Echo;
    use mobmem::experiments::reproductions::composed::shipped_phone;
    use mobmem::mm::phone::{self, PhoneConfig};
    let (mut config, origin) = match &args.phone_file {
        Some(path) => {
            let origin = path.display().to_string();
            let text = mobmem::config_file::read(path)?;
            let mut config = PhoneConfig::parse_with(&text, &origin, Echo::Withhold)?;
            if let (Some(trace), Some(dir)) = (&config.trace, path.parent()) {
                config.trace = Some(dir.join(trace));
            }
            (config, origin)
        }
        None => (
            shipped_phone("phone")?,
            "experiments/phone.toml".to_string(),
        ),
    };
    if let Some(scale) = args.scale {
        config.scale = scale;
    }
    config
        .validate()
        .with_context(|| format!("{origin} at scale {}", config.scale))?;
    let baseline = current_rss().unwrap_or(0);
    let started = Instant::now();
    let trace = phone::workload(&config, args.seed)?;
    let generate_s = started.elapsed().as_secs_f64();
    let choice = config.mechanisms();
    let started = Instant::now();
    let m = phone::run(&config, &choice, &trace, args.seed)?;
    let run_s = started.elapsed().as_secs_f64();
    let events = &trace.trace.events;
    let simulated_s = match (events.first(), events.last()) {
        (Some(a), Some(b)) => (b.time_ns() - a.time_ns()) as f64 / 1e9,
        _ => 0.0,
    };
    let pages = trace.trace.tables.pages.len().max(1) as u64;
    let growth = peak_rss().unwrap_or(0).saturating_sub(baseline);
    let rate = simulated_s / run_s.max(1e-9);
    let value = json!({
        "phone": origin,
        "scale": config.scale,
        "seed": args.seed,
        "configuration": "all-on",
        "events": events.len(),
        "distinct_pages": pages,
        "simulated_seconds": simulated_s,
        "generate_seconds": generate_s,
        "run_seconds": run_s,
        "simulated_seconds_per_wall_second": rate,
        "goal_simulated_seconds_per_wall_second": PHONE_GOAL_SIM_S_PER_WALL_S,
        "meets_goal": rate >= PHONE_GOAL_SIM_S_PER_WALL_S,
        "peak_rss_growth_bytes": growth,
        "bytes_per_distinct_page": growth as f64 / pages as f64,
        "time_model": format!("{:?}", config.time.accounting).to_lowercase(),
        "launches": m.launches,
    });
    if args.json {
        println!("{value}");
        return Ok(());
    }
    println!(
        "phone bench: {origin} at scale {}, seed {}, every technique on",
        config.scale, args.seed
    );
    println!(
        "  workload: {} events over {:.0} simulated s, {} distinct pages (generated in {:.2} s)",
        events.len(),
        simulated_s,
        pages,
        generate_s
    );
    println!(
        "  run: {run_s:.2} s wall, {rate:.0} simulated s per wall s (goal at full scale: a day in a minute, {:.0})",
        PHONE_GOAL_SIM_S_PER_WALL_S
    );
    println!(
        "  memory: peak resident growth {:.1} MiB, {:.0} bytes per distinct page",
        growth as f64 / (1 << 20) as f64,
        growth as f64 / pages as f64
    );
    Ok(())
}

pub fn bench(args: BenchArgs) -> Result<()> {
    if args.what.as_deref() == Some("phone") {
        return bench_phone(&args);
    }
    if args.phone_file.is_some() || args.scale.is_some() {
        bail!("--phone-file and --scale belong to `bench phone`");
    }
    if args.ingest.is_none()
        && (args.ingest_format.format.is_some() || args.ingest_format.columns.is_some())
    {
        bail!("--format and --columns say how to read the --ingest file: give --ingest FILE");
    }
    if let Some(policy) = &args.one {
        let Some(path) = &args.trace else {
            bail!("--one needs --trace")
        };
        println!(
            "{}",
            measure_one(path, policy, args.pages, args.memory_fraction, args.repeat)?
        );
        return Ok(());
    }
    let dir = tempfile::tempdir().context("temporary folder")?;
    // The generated trace is also written in libCacheSim's oracleGeneral format, to
    // measure reading a foreign format beside .mmt.
    let mut oracle_path = None;
    let mut columns_path = None;
    let path = match &args.trace {
        Some(p) => p.clone(),
        None => {
            let mut config = workload::preset("app-switching")?;
            config.scale = args.accesses as f64 / config.accesses.max(1) as f64;
            let t = workload::generate(&config, 1)?;
            let p = dir.path().join("bench.mmt");
            trace::mmt::write(&p, &t)?;
            let o = dir.path().join("bench.oracleGeneral.bin");
            write_oracle_general(&o, &t)?;
            oracle_path = Some(o);
            let c = dir.path().join("bench.columns.csv");
            write_columns_csv(&c, &t)?;
            columns_path = Some(c);
            p
        }
    };
    // Decoding alone, for reference.
    let started = Instant::now();
    let mut source = trace::open(&path, None)?;
    let mut batch: Vec<Event> = Vec::with_capacity(1 << 16);
    let mut events = 0u64;
    while source.read_batch(&mut batch, 1 << 16)? {
        events += batch.len() as u64;
    }
    let decode_s = started.elapsed().as_secs_f64();
    // Counted from the tables, not taken from a header's claim.
    let pages = source.tables()?.pages.len() as u64;
    drop(source);

    let exe = std::env::current_exe().context("locating the mobmem executable")?;
    let mut runs = Vec::new();
    for policy in &args.policies {
        find_policy(policy)?;
        runs.push(measure_in_child(
            &exe,
            &args,
            policy,
            &path,
            pages,
            args.repeat,
            policy,
        )?);
    }
    // Reading and LRU on the oracleGeneral copy (whole run, in this process).
    let oracle = match &oracle_path {
        None => Value::Null,
        Some(o) => {
            let started = Instant::now();
            let mut source = trace::open(o, None)?;
            let mut n = 0u64;
            while source.read_batch(&mut batch, 1 << 16)? {
                n += batch.len() as u64;
            }
            let decode = started.elapsed().as_secs_f64();
            let info = find_policy("lru")?;
            let memory = ((pages as f64 * args.memory_fraction).round() as usize).max(2);
            let setup = RunSetup::new(info, Capacity::single(memory));
            let mut best = f64::INFINITY;
            for _ in 0..args.repeat.max(1) {
                let started = Instant::now();
                let mut source = trace::open(o, None)?;
                run_source(source.as_mut(), &setup, &mut |_| {})?;
                best = best.min(started.elapsed().as_secs_f64());
            }
            json!({
                "decode_records_per_second": n as f64 / decode,
                "lru_accesses_per_second": n as f64 / best,
            })
        }
    };
    // Reading the CSV copy by its column spec, against reading the .mmt.
    let columns = match &columns_path {
        None => Value::Null,
        Some(c) => {
            let format = trace::Format::with_columns(None, Some(BENCH_COLUMNS))?;
            let mut figures = ingest_figures(c, format, &path, pages, &args)?;
            figures["spec"] = json!(BENCH_COLUMNS);
            figures
        }
    };
    // A text trace of the user's, against its .mmt copy.
    let ingest = match &args.ingest {
        None => Value::Null,
        Some(text) => {
            let format = args.ingest_format.get()?;
            let t = trace::read_all(text, format.clone())?;
            let copy = dir.path().join("ingest.mmt");
            trace::mmt::write(&copy, &t)?;
            let mut figures = ingest_figures(text, format, &copy, t.footprint() as u64, &args)?;
            figures["trace"] = json!(text.display().to_string());
            figures
        }
    };
    // An exact 100-size LRU miss-ratio curve (one pass, stack distances), whole run.
    let curve_s = {
        let mut best = f64::INFINITY;
        for _ in 0..args.repeat.max(1) {
            let started = Instant::now();
            let mut source = trace::open(&path, None)?;
            let mut builder = mrc::CurveBuilder::exact(pages as usize);
            mobmem::core::events::for_each_batch(source.as_mut(), &mut |batch, _| {
                builder.access_events(batch);
                Ok(())
            })
            .map_err(|e| e.error)?;
            let sizes: Vec<u64> = (1..=100).map(|i| (i * pages / 100).max(1)).collect();
            let curve = builder.finish().curve(&sizes);
            assert_eq!(curve.len(), 100);
            best = best.min(started.elapsed().as_secs_f64());
        }
        best
    };
    let zipf = if args.zipf_requests > 0 {
        bench_zipf(&args, dir.path(), &exe)?
    } else {
        Value::Null
    };
    let memory = if args.memory_objects > 0 {
        bench_memory(&args, dir.path(), &exe)?
    } else {
        Value::Null
    };
    let time_model = if args.time_model_seconds > 0 {
        bench_time_model(args.time_model_seconds)?
    } else {
        Value::Null
    };
    let lru_s = runs
        .iter()
        .find(|r| r["policy"] == "lru")
        .and_then(|r| r["seconds"].as_f64());
    let report = json!({
        "trace": path.display().to_string(),
        "events": events,
        "distinct_pages": pages,
        "decode_events_per_second": events as f64 / decode_s,
        "oracle_general": oracle,
        "csv_columns": columns,
        "ingest": ingest,
        "lru_curve_100_sizes_seconds": curve_s,
        "lru_curve_over_one_lru_run": lru_s.map(|l| curve_s / l),
        "runs": runs,
        "zipf_oracle_general": zipf,
        "memory_at_scale": memory,
        "time_model": time_model,
    });
    if args.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
        return Ok(());
    }
    println!(
        "trace {}: {} events, {} distinct pages",
        path.display(),
        events,
        pages
    );
    println!(
        "decode only: {:.1} M events/s",
        events as f64 / decode_s / 1e6
    );
    println!(
        "{:<12} {:>12} {:>10} {:>14} {:>12}",
        "policy", "accesses", "seconds", "M accesses/s", "bytes/page"
    );
    for r in &runs {
        println!(
            "{:<12} {:>12} {:>10.3} {:>14.1} {:>12.1}",
            r["policy"].as_str().unwrap_or(""),
            // As a number: a JSON value's Display ignores the column width.
            r["accesses"].as_u64().unwrap_or(0),
            r["seconds"].as_f64().unwrap_or(0.0),
            r["accesses_per_second"].as_f64().unwrap_or(0.0) / 1e6,
            r["bytes_per_distinct_page"].as_f64().unwrap_or(0.0)
        );
    }
    println!("(whole run: decoding, on a second thread unless --threads 1, + simulation; bytes/page = growth of peak resident memory per distinct page)");
    if let Some(o) = report["oracle_general"].as_object() {
        println!(
            "oracleGeneral copy: decode only {:.1} M records/s, lru {:.1} M accesses/s",
            o["decode_records_per_second"].as_f64().unwrap_or(0.0) / 1e6,
            o["lru_accesses_per_second"].as_f64().unwrap_or(0.0) / 1e6
        );
    }
    if let Some(c) = report["csv_columns"].as_object() {
        print_ingest("CSV copy read by --columns", c);
    }
    if let Some(c) = report["ingest"].as_object() {
        print_ingest(
            &format!("{} (--ingest)", c["trace"].as_str().unwrap_or("")),
            c,
        );
    }
    if let Some(z) = report["zipf_oracle_general"].as_object() {
        println!(
            "Zipf oracleGeneral trace, {} requests over {} objects: lru whole process {:.3} s ({:.1} M requests/s), {:.1} bytes/object",
            z["requests"],
            z["distinct_objects"],
            z["lru_whole_process_seconds"].as_f64().unwrap_or(0.0),
            z["lru_whole_process_requests_per_second"].as_f64().unwrap_or(0.0) / 1e6,
            z["lru_bytes_per_distinct_object"].as_f64().unwrap_or(0.0)
        );
        for row in z["policies"].as_array().into_iter().flatten() {
            let cachesim = match row["cachesim"].as_object() {
                Some(c) => format!(
                    "; libCacheSim cachesim {:.3} s, mobmem {:.2}x as fast (run by run: {:.2}x to {:.2}x, median {:.2}x)",
                    c["seconds"].as_f64().unwrap_or(0.0),
                    c["mobmem_speedup"].as_f64().unwrap_or(0.0),
                    c["pair_speedups"]["min"].as_f64().unwrap_or(0.0),
                    c["pair_speedups"]["max"].as_f64().unwrap_or(0.0),
                    c["pair_speedups"]["median"].as_f64().unwrap_or(0.0)
                ),
                None => String::new(),
            };
            println!(
                "  {:>10}: mobmem sim {:.3} s ({:.1} M requests/s){cachesim}",
                row["policy"].as_str().unwrap_or(""),
                row["whole_process_seconds"].as_f64().unwrap_or(0.0),
                row["requests_per_second"].as_f64().unwrap_or(0.0) / 1e6
            );
        }
    }
    if let Some(m) = report["memory_at_scale"].as_object() {
        let bytes = m["lru_bytes_per_distinct_object"]
            .as_f64()
            .unwrap_or(f64::NAN);
        println!(
            "memory at scale: lru over {} distinct objects ({} requests) peaks at {bytes:.1} bytes/object ({} the goal of at most {GOAL_BYTES_PER_OBJECT})",
            m["distinct_objects"],
            m["requests"],
            if bytes <= GOAL_BYTES_PER_OBJECT { "meets" } else { "misses" },
        );
    }
    if !time_model.is_null() {
        println!(
        "time model: {} threads on {} CPUs and 2 device queues, {} steps over {:.0} simulated s in {:.3} s ({:.2} M steps/s, {:.0} simulated s per s)",
        time_model["threads"],
        time_model["cpus"],
        time_model["steps"],
        time_model["simulated_seconds"].as_f64().unwrap_or(0.0),
        time_model["seconds"].as_f64().unwrap_or(0.0),
        time_model["steps_per_second"].as_f64().unwrap_or(0.0) / 1e6,
        time_model["simulated_seconds_per_second"].as_f64().unwrap_or(0.0)
    );
    }
    match lru_s {
        Some(l) => println!(
            "exact LRU miss-ratio curve, 100 sizes, one pass: {curve_s:.3} s ({:.2}x one lru run)",
            curve_s / l
        ),
        None => println!("exact LRU miss-ratio curve, 100 sizes, one pass: {curve_s:.3} s"),
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each record's next access names the next record of the same object (1-based, as
    /// libCacheSim's traceConv writes it), checked against a scan of the records.
    #[test]
    fn zipf_trace_names_each_next_access() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("z.oracleGeneral.bin");
        let distinct = write_zipf_oracle_general(&path, 3000, 200).unwrap();
        let bytes = std::fs::read(&path).unwrap();
        let records: Vec<(u64, i64)> = bytes
            .chunks_exact(24)
            .map(|r| {
                let id = u64::from_le_bytes(r[4..12].try_into().unwrap());
                (id, i64::from_le_bytes(r[16..24].try_into().unwrap()))
            })
            .collect();
        assert_eq!(records.len(), 3000);
        let mut ids: Vec<u64> = records.iter().map(|r| r.0).collect();
        for (i, &(id, next)) in records.iter().enumerate() {
            let expected = records[i + 1..]
                .iter()
                .position(|r| r.0 == id)
                .map_or(-1, |j| (i + 1 + j) as i64 + 1);
            assert_eq!(next, expected, "record {i}");
        }
        ids.sort_unstable();
        ids.dedup();
        assert_eq!(ids.len() as u64, distinct);
        assert!(write_zipf_oracle_general(&path, u64::from(u32::MAX), 2).is_err());
    }

    /// The memory trace names exactly its objects: each new one in turn at the even
    /// requests, an object already named or still to come at the odd ones.
    #[test]
    fn objects_trace_has_exactly_its_objects() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("o.oracleGeneral.bin");
        write_objects_trace(&path, 500).unwrap();
        let bytes = std::fs::read(&path).unwrap();
        let ids: Vec<u64> = bytes
            .chunks_exact(24)
            .map(|r| u64::from_le_bytes(r[4..12].try_into().unwrap()))
            .collect();
        assert_eq!(ids.len(), 1000);
        let firsts: Vec<u64> = ids.iter().step_by(2).copied().collect();
        let mut distinct = firsts.clone();
        distinct.sort_unstable();
        distinct.dedup();
        assert_eq!(distinct.len(), 500);
        assert!(ids.iter().skip(1).step_by(2).all(|id| firsts.contains(id)));
    }
}
