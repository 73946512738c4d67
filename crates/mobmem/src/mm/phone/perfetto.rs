//! A phone run as a Perfetto trace (`mobmem run FILE --perfetto OUT.pftrace`): what ran
//! when on the phone's clock, the memory at every launch, the machine's pressure, and
//! the launches and kills, in a file ui.perfetto.dev opens. docs/time-model.md ("Looking
//! at it in Perfetto") says what the trace holds and what it leaves out.
//!
//! Tracks:
//! - a process per app (its process name, its trace pid), with its thread (same name):
//!   a slice for each stretch of CPU work (`cpu N`, `(memory stall)` for reclaim and
//!   decompression done for it) and each device wait (`flash read`, `nvm read`); a
//!   counter of its anonymous memory in frames of its own (MiB) at every sample; and a
//!   track of its launches and kills (instant events);
//! - a process `kernel` with the threads `kswapd0` and `ksmd`, sliced the same way;
//! - a track of the phone, holding the counters of the machine: free memory, zram pool,
//!   anonymous memory, page cache, swap used and KSM's savings (MiB, at every launch
//!   and at the end), and memory pressure (avg10 of SOME in percent, SOME and FULL
//!   totals in ms, each time the averaging worker ran) and I/O SOME's total.
//!
//! Times are ns since the run's first event. The same run writes the same bytes.

use std::path::{Path, PathBuf};

use super::timeline::{Detail, MarkKind};
use super::{population, Choice, Phone, PhoneConfig, PhoneMetrics, Sample, SampleEvent};
use crate::core::events;
use crate::mm::clock::ClockRecording;
use crate::trace::perfetto::write::{TraceWriter, Track};
use crate::workload::phone::PhoneTrace;
use crate::{Error, Result};

/// Stands in the first packet of every trace mobmem writes (the description of its
/// first track): how [`is_own_trace`] knows a file it may replace.
pub const MARKER: &str = "Simulated by mobmem (mobmem run --perfetto)";

/// The pid of the `kernel` process, and the tids of kswapd0 and ksmd in it.
const KERNEL_PID: i32 = 2;
const KSWAPD_TID: i64 = 3;
const KSMD_TID: i64 = 4;

/// Run `trace` on `config`'s phone with `choice`, recording it, and return the metrics
/// (the same as [`super::run`]'s) and the run as a Perfetto trace named `title` (shown
/// on its first track). An error with `[time] accounting = "sum"`, which has no clock.
pub fn run_with_perfetto(
    config: &PhoneConfig,
    choice: &Choice,
    trace: &PhoneTrace,
    seed: u64,
    title: &str,
) -> Result<(PhoneMetrics, Vec<u8>)> {
    let pop = if choice.dedup != "off" {
        Some(population(trace, seed)?)
    } else {
        None
    };
    let mut phone = Phone::new(config, choice, trace, pop.as_ref())?;
    phone.record_perfetto()?;
    events::replay(&mut phone, &trace.trace.events).map_err(|e| e.in_run("phone"))?;
    let start_ns = phone.start_ns.unwrap_or(0);
    let (metrics, timeline, figures) = phone.finish_all()?;
    let (Some(timeline), Some(clock)) = (timeline, figures.and_then(|f| f.recording)) else {
        return Err(Error::config(&config.name, "the run was not recorded"));
    };
    let detail = timeline.detail.unwrap_or_default();
    let names: Vec<&str> = (trace.trace.tables.processes.iter())
        .map(|p| p.name.as_str())
        .collect();
    let pids: Vec<u32> = trace.trace.tables.processes.iter().map(|p| p.pid).collect();
    let bytes = write(&Run {
        title,
        names: &names,
        pids: &pids,
        samples: &timeline.samples,
        detail: &detail,
        clock: &clock,
        start_ns,
    });
    Ok((metrics, bytes))
}

/// What a trace is drawn from.
struct Run<'a> {
    title: &'a str,
    /// Each app's process name and pid, by process.
    names: &'a [&'a str],
    pids: &'a [u32],
    samples: &'a [Sample],
    detail: &'a Detail,
    clock: &'a ClockRecording,
    /// The trace time of the run's first event: the clock's times are since 0.
    start_ns: u64,
}

/// The apps' pids: the trace's own when they are distinct and clear of the kernel's,
/// else 1000, 1001... in process order.
fn app_pids(pids: &[u32]) -> Vec<i32> {
    let mut sorted: Vec<u32> = pids.to_vec();
    sorted.sort_unstable();
    sorted.dedup();
    let usable = sorted.len() == pids.len()
        && pids
            .iter()
            .all(|&p| p > KSMD_TID as u32 && p <= i32::MAX as u32);
    if usable {
        pids.iter().map(|&p| p as i32).collect()
    } else {
        (0..pids.len()).map(|i| 1000 + i as i32).collect()
    }
}

fn write(run: &Run) -> Vec<u8> {
    let mut w = TraceWriter::new();
    let phone = w.track(run.title, None, Some(MARKER));
    let mib = |w: &mut TraceWriter, name: &str| w.counter(name, "MiB", Some(phone));
    let free = mib(&mut w, "free memory");
    let zram = mib(&mut w, "zram pool");
    let anon = mib(&mut w, "anonymous memory");
    let cache = mib(&mut w, "page cache");
    let swap = mib(&mut w, "swap used");
    let ksm = mib(&mut w, "KSM saved");
    let avg10 = w.counter("memory pressure some avg10", "%", Some(phone));
    let some = w.counter("memory pressure some total", "ms", Some(phone));
    let full = w.counter("memory pressure full total", "ms", Some(phone));
    let io = w.counter("I/O pressure some total", "ms", Some(phone));

    w.process(KERNEL_PID, "kernel");
    let kswapd = w.thread(KERNEL_PID, KSWAPD_TID, "kswapd0");
    let ksmd = w.thread(KERNEL_PID, KSMD_TID, "ksmd");
    let pids = app_pids(run.pids);
    let mut app_threads = Vec::with_capacity(run.names.len());
    let mut app_rss = Vec::with_capacity(run.names.len());
    let mut app_marks = Vec::with_capacity(run.names.len());
    for (&name, &pid) in run.names.iter().zip(&pids) {
        let process = w.process(pid, name);
        app_threads.push(w.thread(pid, pid as i64, name));
        app_rss.push(w.counter("anonymous memory", "MiB", Some(process)));
        app_marks.push(w.track("launches and kills", Some(process), None));
    }

    // Thread ids of the clock to their tracks.
    let c = run.clock;
    let mut tracks: Vec<Option<Track>> = Vec::new();
    let mut put = |id: u32, track: Track| {
        if tracks.len() <= id as usize {
            tracks.resize(id as usize + 1, None);
        }
        tracks[id as usize] = Some(track);
    };
    for (thread, &track) in c.apps.iter().zip(&app_threads) {
        put(thread.0, track);
    }
    put(c.kswapd.0, kswapd);
    put(c.ksmd.0, ksmd);
    let since = |t: u64| t.saturating_sub(run.start_ns);
    let stall = |memstall: bool| if memstall { " (memory stall)" } else { "" };
    for s in &c.recording.cpu {
        if let Some(Some(track)) = tracks.get(s.thread.0 as usize) {
            let name = format!("cpu {}{}", s.cpu, stall(s.memstall));
            w.slice(*track, &name, since(s.start), since(s.end));
        }
    }
    for s in &c.recording.io {
        if let Some(Some(track)) = tracks.get(s.thread.0 as usize) {
            let device = c.devices.get(s.device).map_or("device", String::as_str);
            let name = format!("{device} read{}", stall(s.memstall));
            w.slice(*track, &name, since(s.start), since(s.end));
        }
    }
    let ms = |ns: u64| ns as f64 / 1e6;
    for p in &c.recording.psi {
        let at = since(p.at);
        w.counter_value(avg10, at, p.mem_some_avg10);
        w.counter_value(some, at, ms(p.mem_some_total_ns));
        w.counter_value(full, at, ms(p.mem_full_total_ns));
        w.counter_value(io, at, ms(p.io_some_total_ns));
    }

    // Samples: the detail has their times in ns and each app's memory.
    for (k, s) in run.samples.iter().enumerate() {
        let at = (run.detail.sample_ns.get(k).copied()).unwrap_or((s.time_s * 1e9) as u64);
        for (track, v) in [
            (free, s.free_mib),
            (zram, s.zram_pool_mib),
            (anon, s.anon_mib),
            (cache, s.page_cache_mib),
            (swap, s.swap_used_mib),
            (ksm, s.ksm_saved_mib),
        ] {
            w.counter_value(track, at, v);
        }
        if let Some(apps) = run.detail.app_anon_mib.get(k) {
            for (track, &v) in app_rss.iter().zip(apps) {
                w.counter_value(*track, at, v);
            }
        }
    }
    let mut launches = run
        .samples
        .iter()
        .filter(|s| s.event == SampleEvent::Launch);
    for &(at, kind, proc) in &run.detail.marks {
        let Some(&track) = app_marks.get(proc as usize) else {
            continue;
        };
        let name = match kind {
            MarkKind::Kill => "killed".to_string(),
            MarkKind::Launch => match launches.next() {
                Some(Sample {
                    launch: Some(kind),
                    launch_ms: Some(ms),
                    ..
                }) => format!("launch ({}, {ms:.1} ms)", kind_name(*kind)),
                _ => "launch".to_string(),
            },
        };
        w.instant(track, &name, at);
    }
    w.finish()
}

fn kind_name(kind: crate::mm::swap::launch::LaunchKind) -> &'static str {
    use crate::mm::swap::launch::LaunchKind;
    match kind {
        LaunchKind::First => "first",
        LaunchKind::Cold => "cold",
        LaunchKind::Warm => "warm",
    }
}

/// Where the trace of configuration `config` goes when the user asked for `out`:
/// `runs/x.pftrace` and `all-on` give `runs/x-all-on.pftrace` (the extension kept, if
/// any).
pub fn trace_path(out: &Path, config: &str) -> PathBuf {
    let stem = out.file_stem().map(|s| s.to_string_lossy().into_owned());
    let name = match (stem, out.extension()) {
        (Some(stem), Some(ext)) => format!("{stem}-{config}.{}", ext.to_string_lossy()),
        (Some(stem), None) => format!("{stem}-{config}"),
        (None, _) => format!("{config}.pftrace"),
    };
    out.with_file_name(name)
}

/// Whether `path` is a trace mobmem wrote (its first packet carries [`MARKER`]), which a
/// later run may replace.
pub fn is_own_trace(path: &Path) -> bool {
    crate::output::file_head_is(path, |head| head.contains(MARKER))
}
