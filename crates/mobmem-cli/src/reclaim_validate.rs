//! `mobmem reclaim-validate`: the real kernel's reclaim and zram in a memory cgroup
//! against the simulator's `workingset` policy and zram pool model, over several limits.

use std::path::PathBuf;

use anyhow::{bail, Context, Result};
use clap::Args;

use mobmem::host::reclaim_validate::{
    self, explain_file_gap, inverted_pairs, relative_percent, same_order, KernelSession,
    LimitComparison, Plan, ValidateOptions, WorkerCommand, WorkloadSpec, ZramOptions,
    CGROUP_V1_MEMORY, ZRAM_DEVICE,
};
use mobmem::host::state::Journal;

use crate::host::{after_undo, close_journal, Wording};

/// How reclaim-validate names its worker and the settings it changes.
const WORDING: Wording = Wording {
    stopped: "worker",
    settings: "settings",
    undo_failed: "could not undo:",
};

/// The goals: file refaults within this share of the kernel's, percent...
pub const FILE_REFAULT_GOAL_PERCENT: f64 = 10.0;
/// ...and the zram pool's compressed size within this share.
pub const POOL_GOAL_PERCENT: f64 = 5.0;

#[derive(Args)]
pub struct ReclaimValidateArgs {
    /// Memory cgroup limits to run at, MiB, comma-separated.
    #[arg(long, value_delimiter = ',', default_values_t = [10u64, 12, 14, 16, 18], value_parser = crate::numbers::non_negative::<u64>, allow_negative_numbers = true)]
    limits_mib: Vec<u64>,
    /// The cgroup's memory.swappiness, and the simulator's.
    #[arg(long, default_value_t = 60, value_parser = crate::numbers::non_negative::<u32>, allow_negative_numbers = true)]
    swappiness: u32,
    /// No swap: anonymous pages stay in memory (they must fit in every limit).
    #[arg(long)]
    no_swap: bool,
    /// zram's algorithm: lz4 (default), or lzo / lzo-rle (with the `lzo` feature).
    #[arg(long, default_value = "lz4")]
    zram_algorithm: String,
    /// zram's size, MiB.
    #[arg(long, default_value_t = 256, value_parser = crate::numbers::non_negative::<u64>, allow_negative_numbers = true)]
    zram_mib: u64,
    /// Seed of the access order and the page contents.
    #[arg(long, default_value_t = WorkloadSpec::default().seed, value_parser = crate::numbers::non_negative::<u64>, allow_negative_numbers = true)]
    seed: u64,
    /// Files the file pages are spread over.
    #[arg(long, default_value_t = WorkloadSpec::default().files, value_parser = crate::numbers::non_negative::<u32>, allow_negative_numbers = true)]
    files: u32,
    /// File pages (4 KiB).
    #[arg(long, default_value_t = WorkloadSpec::default().file_pages, value_parser = crate::numbers::non_negative::<u32>, allow_negative_numbers = true)]
    file_pages: u32,
    /// Anonymous pages, written once each first.
    #[arg(long, default_value_t = WorkloadSpec::default().anon_pages, value_parser = crate::numbers::non_negative::<u32>, allow_negative_numbers = true)]
    anon_pages: u32,
    /// Reads after the anonymous pages were written.
    #[arg(long, default_value_t = WorkloadSpec::default().accesses, value_parser = crate::numbers::non_negative::<u32>, allow_negative_numbers = true)]
    accesses: u32,
    /// Share of the reads that go to anonymous pages, percent.
    #[arg(long, default_value_t = WorkloadSpec::default().anon_percent, value_parser = crate::numbers::non_negative::<u32>, allow_negative_numbers = true)]
    anon_percent: u32,
    /// The hot file pages, percent of them...
    #[arg(long, default_value_t = WorkloadSpec::default().hot_percent, value_parser = crate::numbers::non_negative::<u32>, allow_negative_numbers = true)]
    hot_percent: u32,
    /// ...and the share of file reads they get, percent.
    #[arg(long, default_value_t = WorkloadSpec::default().hot_share_percent, value_parser = crate::numbers::non_negative::<u32>, allow_negative_numbers = true)]
    hot_share_percent: u32,
    /// Where the workload's files are written (a disk file system, not tmpfs).
    #[arg(long, default_value_os_t = std::env::temp_dir())]
    scratch: PathBuf,
    /// The memory cgroup v1 hierarchy.
    #[arg(long, default_value = CGROUP_V1_MEMORY)]
    cgroup_root: PathBuf,
    /// The simulator's period of memory cgroup statistics flushes, ms: the kernel's
    /// reclaim heuristics read statistics flushed every 2 s (0: exact statistics).
    #[arg(long, default_value_t = 2000, value_parser = crate::numbers::non_negative::<u64>, allow_negative_numbers = true)]
    stats_flush_ms: u64,
    /// Also save the raw ftrace text of each limit in this directory.
    #[arg(long)]
    raw_dir: Option<PathBuf>,
    /// Print the comparison as JSON.
    #[arg(long)]
    json: bool,
    /// Where each change is written down before it is made (see `mobmem host restore
    /// --help`).
    #[arg(long, value_name = "FILE", default_value_os_t = mobmem::host::state::default_path())]
    state_file: PathBuf,
    /// Internal: run as the worker on the files in --dir.
    #[arg(long, hide = true)]
    worker: bool,
    /// Internal, for the worker: the directory of the files.
    #[arg(long, hide = true)]
    dir: Option<PathBuf>,
    /// Internal, for the worker: probe the kernel's swap path instead (time-validate).
    #[arg(long, hide = true)]
    probe_swap: bool,
}

impl ReclaimValidateArgs {
    fn spec(&self) -> WorkloadSpec {
        WorkloadSpec {
            seed: self.seed,
            files: self.files,
            file_pages: self.file_pages,
            anon_pages: self.anon_pages,
            accesses: self.accesses,
            anon_percent: self.anon_percent,
            hot_percent: self.hot_percent,
            hot_share_percent: self.hot_share_percent,
        }
    }
}

fn percent(v: f64) -> String {
    if v.is_nan() {
        "n/a".into()
    } else {
        format!("{v:+.1}%")
    }
}

fn pool_text(p: Option<mobmem::mm::swap::zram_pool::ZramPoolStats>) -> String {
    p.map_or("-".into(), |p| {
        format!("{:.0}", p.compr_data_size as f64 / 1024.0)
    })
}

pub fn run(args: ReclaimValidateArgs) -> Result<()> {
    let spec = args.spec();
    if args.worker && args.probe_swap {
        let mut stdout = std::io::stdout();
        return Ok(reclaim_validate::run_swap_probe(
            &spec,
            std::io::stdin(),
            &mut stdout,
        )?);
    }
    if args.worker {
        let dir = args.dir.as_ref().context("the worker needs --dir")?;
        let mut stdout = std::io::stdout();
        return Ok(reclaim_validate::run_worker(
            &spec,
            dir,
            std::io::stdin(),
            &mut stdout,
        )?);
    }
    let zram = (!args.no_swap).then(|| ZramOptions {
        sysfs: PathBuf::from("/sys/block").join(ZRAM_DEVICE),
        algorithm: args.zram_algorithm.clone(),
        disksize_mib: args.zram_mib,
    });
    let plan = Plan::new(ValidateOptions {
        spec,
        limits_mib: args.limits_mib.clone(),
        swappiness: args.swappiness,
        zram,
        cgroup_root: args.cgroup_root.clone(),
        scratch: args.scratch.clone(),
        worker: WorkerCommand {
            program: std::env::current_exe().context("finding the mobmem binary")?,
            args: vec!["reclaim-validate".into(), "--worker".into()],
        },
        raw_dir: args.raw_dir.clone(),
        stats_flush_ms: args.stats_flush_ms,
        timed_runs: 0,
        psi_group_root: None,
    })?;

    let journal = Journal::begin(&args.state_file, "reclaim-validate")?;
    let mut session = KernelSession::start(&journal);
    let interrupt = session.interrupt();
    crate::host::on_interrupt(move || {
        // Stop first; the message may fail (a closed terminal) and must not panic.
        interrupt.stop();
        crate::note("interrupted: stopping the worker; every setting will be restored");
    })?;
    let notes = |m: &str| crate::note(m);
    let outcome = session.drive(&plan, &notes);
    let failures = session.finish();
    let restored = close_journal(&journal, &failures, &WORDING);
    let runs = after_undo(outcome, session.interrupted(), restored, &WORDING)?;
    let rows = runs
        .iter()
        .map(|r| reclaim_validate::compare(&plan, r))
        .collect::<mobmem::Result<Vec<LimitComparison>>>()?;

    let file_ok: Vec<bool> = rows
        .iter()
        .map(|r| {
            relative_percent(r.kernel.file_refaults, r.sim.file_refaults).abs()
                <= FILE_REFAULT_GOAL_PERCENT
        })
        .collect();
    let order_ok = same_order(&rows, |f| f.file_refaults, FILE_REFAULT_GOAL_PERCENT);
    let inverted = inverted_pairs(&rows, |f| f.file_refaults);
    let pool_gap = |r: &LimitComparison| match (r.kernel.pool, r.sim.pool) {
        (Some(k), Some(s)) => Some(relative_percent(k.compr_data_size, s.compr_data_size)),
        _ => None,
    };
    let codec_gap = |r: &LimitComparison| match (r.kernel.pool, r.pool_of_kernel_pages) {
        (Some(k), Some(s)) => Some(relative_percent(k.compr_data_size, s.compr_data_size)),
        _ => None,
    };
    if args.json {
        let out = serde_json::json!({
            "workload": spec,
            "swappiness": args.swappiness,
            "zram": plan.options.zram.as_ref().map(|z| serde_json::json!({
                "algorithm": z.algorithm, "disksize_mib": z.disksize_mib,
                "codec": plan.codec.map(|c| c.0.name()),
                "codec_note": plan.codec.and_then(|c| c.1)})),
            "limits": rows,
            "goals": {
                "file_refaults_within_percent": FILE_REFAULT_GOAL_PERCENT,
                "file_refaults_met": file_ok,
                "file_refault_order_met": order_ok,
                "file_refault_inverted_pairs_mib": inverted.iter().map(|p| [p.0, p.1]).collect::<Vec<_>>(),
                "pool_within_percent": POOL_GOAL_PERCENT,
                "pool_gap_percent": rows.iter().map(|r| pool_gap(r).map(crate::json_number)).collect::<Vec<_>>(),
                "codec_gap_percent": rows.iter().map(|r| codec_gap(r).map(crate::json_number)).collect::<Vec<_>>(),
            },
            "settings_restored": restored,
        });
        println!("{}", serde_json::to_string_pretty(&out)?);
    } else {
        println!(
            "workload: {} file pages in {} files, {} anonymous pages, {} reads ({}% anonymous; {}% of file reads to the hottest {}%), seed {}; swappiness {}; swap: {}",
            spec.file_pages, spec.files, spec.anon_pages, spec.accesses, spec.anon_percent,
            spec.hot_share_percent, spec.hot_percent, spec.seed, args.swappiness,
            plan.options.zram.as_ref().map_or("none".into(), |z| format!(
                "zram {} MiB, {}{}", z.disksize_mib, z.algorithm,
                plan.codec.and_then(|c| c.1).map_or(String::new(), |n| format!(" ({n})")))),
        );
        println!("k = kernel (cgroup memory.stat; pswpin/pswpout of /proc/vmstat; zram mm_stat), sim = simulator (policy workingset) on the captured trace; Δ = (sim - k) / k");
        println!(
            "{:>6} | {:>8} | {:>24} | {:>13} | {:>13} | {:>13} | {:>13} | {:>26}",
            "limit",
            "sim mem",
            "file refaults k/sim/Δ",
            "anon refaults",
            "major faults",
            "swap out",
            "swap in",
            "zram compr KiB k/sim/Δ"
        );
        for r in &rows {
            let (k, s) = (&r.kernel, &r.sim);
            println!(
                "{:>4}Mi | {:>6}Mi | {:>7}/{:>7}/{:>8} | {:>6}/{:>6} | {:>6}/{:>6} | {:>6}/{:>6} | {:>6}/{:>6} | {:>7}/{:>7}/{:>8}",
                r.limit_mib,
                (r.sim_pages * 4096) >> 20,
                k.file_refaults, s.file_refaults, percent(relative_percent(k.file_refaults, s.file_refaults)),
                k.anon_refaults, s.anon_refaults,
                k.major_faults, s.major_faults,
                k.swap_outs, s.swap_outs,
                k.swap_ins, s.swap_ins,
                pool_text(k.pool), pool_text(s.pool),
                pool_gap(r).map_or("-".into(), percent),
            );
        }
        println!();
        for r in &rows {
            println!(
                "{} MiB: {:.1} s; {} KiB of kernel memory charged (left out of the simulator's memory); trace: {}/{} file reads, {} anonymous faults for {} anonymous accesses, {} reads of resident anonymous pages (no fault, not traced) added from the known order, {} traced accesses matching no step, {} steps missing from the trace, {} pages outside the workload; {} events lost by ftrace{}",
                r.limit_mib, r.seconds, r.kernel_bytes / 1024, r.file_reads_traced, r.file_reads_made,
                r.anon_faults_traced, r.anon_accesses_made, r.anon_reads_added, r.unmatched_accesses, r.missing_steps, r.other_pages,
                r.lost_events,
                if r.unseen_reads > 0 {
                    format!(" ({} reads of anonymous pages whose first fault was lost are left out)", r.unseen_reads)
                } else {
                    String::new()
                }
            );
            if let Some(first) = &r.first_unmatched {
                println!("  first traced access matching no step: {first}");
            }
            if let (Some(k), Some(own)) = (r.kernel.pool, r.pool_of_kernel_pages) {
                println!(
                    "  zram: kernel {} pages stored ({} same-filled, {} huge; {} of the worker's own heap and stack, not the workload's), compr_data_size {} B; the model on the workload's {} pages among them: {} B ({}); on the simulator's {} pages: {} B",
                    k.pages, k.same_pages, k.huge_pages, r.other_swapped_pages, k.compr_data_size, own.pages,
                    own.compr_data_size, percent(relative_percent(k.compr_data_size, own.compr_data_size)),
                    r.sim.pool.map_or(0, |p| p.pages), r.sim.pool.map_or(0, |p| p.compr_data_size)
                );
            }
        }
        println!();
        let missed: Vec<&LimitComparison> = rows
            .iter()
            .zip(&file_ok)
            .filter(|(_, ok)| !**ok)
            .map(|(r, _)| r)
            .collect();
        if missed.is_empty() {
            println!("goal met: file refaults within {FILE_REFAULT_GOAL_PERCENT}% of the kernel's at every limit");
        } else {
            for r in missed {
                println!(
                    "goal missed at {} MiB: file refaults {} against the kernel's {} ({}): {}",
                    r.limit_mib,
                    r.sim.file_refaults,
                    r.kernel.file_refaults,
                    percent(relative_percent(
                        r.kernel.file_refaults,
                        r.sim.file_refaults
                    )),
                    explain_file_gap(r)
                );
            }
        }
        println!(
            "file refaults across limits: {}",
            if order_ok {
                "the same order on both sides"
            } else {
                "NOT in the same order"
            }
        );
        for r in &rows {
            if let Some(gap) = pool_gap(r) {
                let codec = codec_gap(r).unwrap_or(f64::NAN);
                let verdict = if gap.abs() <= POOL_GOAL_PERCENT {
                    "met"
                } else {
                    "missed"
                };
                println!(
                    "zram pool at {} MiB: {verdict} ({} against {POOL_GOAL_PERCENT}%): the codec alone, on the kernel's own swapped pages, is {} off; the rest is the simulator swapping {} pages where the kernel held {}",
                    r.limit_mib, percent(gap), percent(codec),
                    r.sim.pool.map_or(0, |p| p.pages), r.kernel.pool.map_or(0, |p| p.pages)
                );
            }
        }
        println!(
            "settings {}",
            if restored {
                "restored"
            } else {
                "NOT all restored"
            }
        );
    }
    if !restored {
        bail!("some settings could not be restored");
    }
    Ok(())
}
