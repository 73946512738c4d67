//! `mobmem fs`: the compressed flash file system model on real files.

use std::path::PathBuf;

use anyhow::{bail, Context, Result};
use clap::{Args, Subcommand};
use serde_json::{json, Value};

use mobmem::devices::platform::Platform;
use mobmem::mm::fs::{
    analyze_paths, bench_codecs, read_twice_in, Codec, FsMemory, ReadCost, ReadPath, WritePolicy,
};
use mobmem::report::short;

#[derive(Subcommand)]
pub enum FsCommand {
    /// Store real files or folders page by page under each write policy and report, per
    /// file and in total, pages kept raw and compressed, space used, and read time and
    /// energy on each read path for a first read and a second one.
    Analyze(AnalyzeArgs),
    /// Measure each codec's compress and decompress speed on this machine, page by page,
    /// to calibrate a platform profile (`decompress_ns_per_byte`).
    BenchCodecs(BenchCodecsArgs),
}

#[derive(Args)]
pub struct AnalyzeArgs {
    /// Files or folders (read recursively).
    #[arg(required = true)]
    paths: Vec<PathBuf>,
    /// Codec: zlib (JFFS2's), lzo, lz4, zstd.
    #[arg(long, default_value = "zlib")]
    codec: Codec,
    /// Write policies: stock, threshold[:BYTES], ubifs, f2fs[:CLUSTER_PAGES], entropy[:BITS].
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "stock,threshold:50,ubifs,f2fs:4,entropy"
    )]
    policies: Vec<String>,
    /// Platform profile for read time and energy: pxa250 or modern-phone.
    #[arg(long, default_value = "pxa250")]
    platform: String,
    /// Print every file as JSON.
    #[arg(long)]
    json: bool,
}

#[derive(Args)]
pub struct BenchCodecsArgs {
    /// Sample files (default: Debian's license texts in /usr/share/common-licenses).
    files: Vec<PathBuf>,
    /// Minimum measuring time per codec and direction, seconds.
    #[arg(long, default_value_t = 0.5, allow_negative_numbers = true)]
    seconds: f64,
    /// Print as JSON.
    #[arg(long)]
    json: bool,
}

pub fn run(command: FsCommand) -> Result<()> {
    match command {
        FsCommand::Analyze(args) => analyze(args),
        FsCommand::BenchCodecs(args) => bench(args),
    }
}

fn reads_json(first: &ReadCost, again: &ReadCost) -> Value {
    json!({ "first": first, "again": again })
}

fn analyze(args: AnalyzeArgs) -> Result<()> {
    let platform = Platform::named(&args.platform)?;
    let policies: Vec<(String, WritePolicy)> = args
        .policies
        .iter()
        .map(|p| Ok((p.clone(), p.parse::<WritePolicy>()?)))
        .collect::<Result<_>>()?;
    let analysis = analyze_paths(&args.paths, args.codec, &policies)?;
    if analysis.files.is_empty() {
        bail!("no regular files under the given paths");
    }
    // Per file, policy and read path: the cost of a first read and of reading again,
    // each from an empty page cache in a memory of the platform's RAM.
    let read_paths = ReadPath::all();
    let mut memory = FsMemory::for_platform(&platform)?;
    let mut totals: Vec<Vec<(ReadCost, ReadCost)>> =
        vec![vec![Default::default(); read_paths.len()]; policies.len()];
    let mut files_json = Vec::new();
    let mut lines = Vec::new();
    for file in &analysis.files {
        let mut per_policy = Vec::new();
        for (i, (label, _)) in policies.iter().enumerate() {
            let stored = &file.stored[i];
            let summary = &file.summaries[i];
            let mut reads = serde_json::Map::new();
            let mut cells = Vec::new();
            for (j, path) in read_paths.iter().enumerate() {
                let (first, again) = read_twice_in(stored, *path, &platform, &mut memory)?;
                cells.push(format!(
                    "{:>10} {:>10}",
                    short(first.time_ns / 1e6),
                    short(again.time_ns / 1e6)
                ));
                reads.insert(path.name().into(), reads_json(&first, &again));
                totals[i][j].0 += first;
                totals[i][j].1 += again;
            }
            lines.push(format!(
                "{:<40} {:<14} {:>7} {:>7} {:>12} {}",
                truncate(&file.path.display().to_string(), 40),
                label,
                summary.raw_pages,
                summary.compressed_pages,
                summary.stored_bytes,
                cells.join(" ")
            ));
            per_policy.push(json!({ "policy": label, "storage": summary, "reads": reads }));
        }
        files_json.push(json!({ "path": file.path.display().to_string(), "policies": per_policy }));
    }
    let totals_json: Vec<Value> = policies
        .iter()
        .enumerate()
        .map(|(i, (label, _))| {
            let reads: serde_json::Map<String, Value> = read_paths
                .iter()
                .enumerate()
                .map(|(j, path)| {
                    (
                        path.name().to_string(),
                        reads_json(&totals[i][j].0, &totals[i][j].1),
                    )
                })
                .collect();
            json!({ "policy": label, "storage": analysis.totals[i], "reads": reads })
        })
        .collect();
    if args.json {
        let out = json!({
            "codec": args.codec.name(),
            "platform": platform.name,
            "files": files_json,
            "totals": totals_json,
        });
        println!("{}", serde_json::to_string_pretty(&out)?);
        return Ok(());
    }
    let paths: Vec<&str> = read_paths.iter().map(|p| p.name()).collect();
    println!(
        "codec {}, platform {}; read times in ms (first read, read again)",
        args.codec.name(),
        platform.name
    );
    println!(
        "{:<40} {:<14} {:>7} {:>7} {:>12} {}",
        "file",
        "policy",
        "raw",
        "compr",
        "stored B",
        paths
            .iter()
            .map(|p| format!("{:>21}", p))
            .collect::<Vec<_>>()
            .join(" ")
    );
    for line in &lines {
        println!("{line}");
    }
    println!("totals:");
    for (i, (label, _)) in policies.iter().enumerate() {
        let t = &analysis.totals[i];
        let cells: Vec<String> = (0..read_paths.len())
            .map(|j| {
                format!(
                    "{:>10} {:>10}",
                    short(totals[i][j].0.time_ns / 1e6),
                    short(totals[i][j].1.time_ns / 1e6)
                )
            })
            .collect();
        println!(
            "{:<40} {:<14} {:>7} {:>7} {:>12} {}   ({} data bytes, energy of a first read {} mJ / {} mJ)",
            "(all files)",
            label,
            t.raw_pages,
            t.compressed_pages,
            t.stored_bytes,
            cells.join(" "),
            t.data_bytes,
            short(totals[i][0].0.energy_nj / 1e6),
            short(totals[i][1].0.energy_nj / 1e6)
        );
    }
    Ok(())
}

fn truncate(s: &str, width: usize) -> String {
    let chars: Vec<char> = s.chars().collect();
    if chars.len() <= width {
        s.to_string()
    } else {
        format!(
            "...{}",
            chars[chars.len() - (width - 3)..]
                .iter()
                .collect::<String>()
        )
    }
}

fn bench(args: BenchCodecsArgs) -> Result<()> {
    let files = if args.files.is_empty() {
        let dir = PathBuf::from("/usr/share/common-licenses");
        let mut found: Vec<PathBuf> = std::fs::read_dir(&dir)
            .with_context(|| {
                format!(
                    "{}: no sample files given and none found here",
                    dir.display()
                )
            })?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.is_file())
            .collect();
        found.sort();
        found
    } else {
        args.files.clone()
    };
    let mut sample = Vec::new();
    for f in &files {
        std::io::Read::read_to_end(&mut mobmem::input::open(f)?, &mut sample)
            .with_context(|| format!("reading {}", f.display()))?;
    }
    if sample.is_empty() {
        bail!("the sample is empty");
    }
    let speeds = bench_codecs(&sample, args.seconds)?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&speeds)?);
        return Ok(());
    }
    println!(
        "sample: {} bytes from {} file(s); single thread, 4 KiB pages",
        sample.len(),
        files.len()
    );
    println!(
        "{:<6} {:>14} {:>16} {:>8} {:>24}",
        "codec", "compress MB/s", "decompress MB/s", "ratio", "decompress ns per byte"
    );
    for s in &speeds {
        println!(
            "{:<6} {:>14.1} {:>16.1} {:>8.2} {:>24.3}",
            s.codec.name(),
            s.compress_mb_s,
            s.decompress_mb_s,
            s.ratio,
            1e3 / s.decompress_mb_s
        );
    }
    Ok(())
}
