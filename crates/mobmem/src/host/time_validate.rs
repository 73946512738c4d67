//! The time model against the real kernel: a touch task sharing one CPU with ksmd.
//!
//! On the machine: ksmd and a touch task are pinned to one CPU (ksmd's affinity is
//! written to the run's journal first and put back on every way out), and KSM workers
//! give ksmd pages to scan ([`super::ksm_validate`]'s), pinned to the other CPUs. The
//! touch task does a fixed amount of CPU work (a loop of integer arithmetic) every
//! period; its response is from the time it runs after its sleep to its end.
//!
//! 1. The touch's response alone is measured with ksmd stopped: this is the touch's
//!    work, the one input the simulator takes from the touch task.
//! 2. ksmd's CPU time per page scanned is measured at one scan rate without the touch
//!    task (`/proc/PID/schedstat` over KSM's `pages_scanned`): the one input the
//!    simulator takes from ksmd. That rate's own share is therefore calibrated, not
//!    evidence.
//! 3. At every scan rate asked for, the touch task runs beside ksmd: its mean response
//!    (as inflation over 1.) and ksmd's share of the CPU are measured.
//!
//! The simulator replays each rate on [`crate::core::time`]: one reference CPU, a
//! nice-0 touch thread with one job of the measured work per period, and ksmd at nice 5
//! scanning `pages_to_scan` pages at the measured cost (fewer where a full scan of the
//! workers' pages ends) and then sleeping on a timer of
//! `msecs_to_jiffies(sleep_millisecs)` ticks, as `ksm_scan_thread` does.

use std::time::{Duration, Instant};

use serde::Serialize;

use super::ksm_validate::{KernelSession, Plan};
use super::reclaim_validate::SwapPathCosts;
use super::state::{cpu_set, Change, Journal};
use crate::core::time::{Sharing, Step, ThreadSpec, Timeline};
use crate::{Error, Result};

/// Scan rates one run compares at most.
pub const MAX_RATES: usize = 32;
/// The longest measurement at one rate, ms (a run takes the number of rates plus four of
/// them).
pub const MAX_MEASURE_MS: u64 = 600_000;

/// One of ksmd's scan rates.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct ScanRate {
    pub pages_to_scan: u32,
    pub sleep_millisecs: u32,
}

impl ScanRate {
    /// "PAGES/SLEEP_MS", e.g. "100/20".
    pub fn parse(text: &str) -> Result<ScanRate> {
        let bad = || {
            Error::config(
                "scan rate",
                format!("'{text}' is not PAGES/SLEEP_MS (e.g. 100/20)"),
            )
        };
        let (pages, sleep) = text.trim().split_once('/').ok_or_else(bad)?;
        let rate = ScanRate {
            pages_to_scan: pages.trim().parse().map_err(|_| bad())?,
            sleep_millisecs: sleep.trim().parse().map_err(|_| bad())?,
        };
        if rate.pages_to_scan == 0 {
            return Err(Error::config(
                "scan rate",
                format!("'{text}': pages_to_scan must be at least 1"),
            ));
        }
        Ok(rate)
    }

    pub fn name(&self) -> String {
        format!("{}/{}", self.pages_to_scan, self.sleep_millisecs)
    }
}

/// What a run measures and for how long.
#[derive(Debug, Clone)]
pub struct TouchOptions {
    /// The CPU ksmd and the touch task share.
    pub cpu: usize,
    /// The touch's CPU work alone, ms (the loop is sized to it on this CPU).
    pub touch_ms: f64,
    /// A touch every this many ms.
    pub period_ms: u64,
    /// How long each measurement runs, ms.
    pub measure_ms: u64,
    /// The rate ksmd's cost per page is measured at.
    pub calibrate: ScanRate,
    /// The rates compared.
    pub rates: Vec<ScanRate>,
}

impl TouchOptions {
    pub fn validate(&self) -> Result<()> {
        let bad = |m: String| Err(Error::config("time-validate", m));
        if !(self.touch_ms.is_finite() && self.touch_ms >= 0.1 && self.touch_ms <= 1000.0) {
            return bad(format!(
                "touch work {} ms is outside 0.1..=1000",
                self.touch_ms
            ));
        }
        if (self.period_ms as f64) < 2.0 * self.touch_ms || self.period_ms > 10_000 {
            return bad(format!(
                "a touch period of {} ms must be at least twice the touch ({} ms) and at most 10 s",
                self.period_ms, self.touch_ms
            ));
        }
        if self.measure_ms < 5 * self.period_ms || self.measure_ms > MAX_MEASURE_MS {
            return bad(format!(
                "measuring {} ms must cover at least 5 touch periods and at most 10 minutes",
                self.measure_ms
            ));
        }
        if self.rates.is_empty() || self.rates.len() > MAX_RATES {
            return bad(format!(
                "{} scan rates: give 1 to {MAX_RATES}",
                self.rates.len()
            ));
        }
        let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
        if self.cpu >= cpus {
            return bad(format!(
                "CPU {} is not one of this machine's {cpus}",
                self.cpu
            ));
        }
        Ok(())
    }
}

/// What the kernel did at one rate.
#[derive(Debug, Clone, Serialize)]
pub struct KernelRate {
    pub rate: ScanRate,
    pub touches: u64,
    pub mean_response_ns: f64,
    /// The touch task's own CPU time per touch (`CLOCK_THREAD_CPUTIME_ID`).
    pub mean_cpu_ns: f64,
    pub ksmd_cpu_ns: u64,
    pub pages_scanned: u64,
    pub wall_ns: u64,
}

impl KernelRate {
    /// How much longer a touch took than its own CPU time, %: the time it waited while
    /// other work had its CPU.
    pub fn inflation_pct(&self) -> f64 {
        100.0 * (self.mean_response_ns / self.mean_cpu_ns.max(1.0) - 1.0)
    }

    pub fn ksmd_share(&self) -> f64 {
        self.ksmd_cpu_ns as f64 / self.wall_ns.max(1) as f64
    }
}

/// Touches measured together: how many, and their mean response and own CPU time, ns.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct Touches {
    pub count: u64,
    pub mean_response_ns: f64,
    pub mean_cpu_ns: f64,
}

impl Touches {
    fn of(samples: &[(u64, u64)]) -> Touches {
        let n = samples.len().max(1) as f64;
        Touches {
            count: samples.len() as u64,
            mean_response_ns: samples.iter().map(|s| s.0 as f64).sum::<f64>() / n,
            mean_cpu_ns: samples.iter().map(|s| s.1 as f64).sum::<f64>() / n,
        }
    }
}

/// Everything measured on the machine.
#[derive(Debug, Clone, Serialize)]
pub struct KernelMeasure {
    /// Iterations of the touch loop.
    pub touch_iterations: u64,
    /// The touch with ksmd stopped, before and after the rates: its mean response and
    /// CPU time.
    pub alone: Touches,
    pub alone_after: Touches,
    /// ksmd's CPU time per page scanned, at the calibration rate.
    pub ksmd_ns_per_page: f64,
    /// Pages in one full scan (the workers' mergeable pages).
    pub scan_pages: u64,
    pub calibration: KernelRate,
    pub rates: Vec<KernelRate>,
    pub hz: u32,
}

/// What the simulator gives at one rate.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct SimRate {
    pub mean_response_ns: f64,
    pub ksmd_share: f64,
    pub touches: u64,
}

/// `msecs_to_jiffies`: whole ticks, rounded up.
pub fn msecs_to_jiffies(ms: u32, hz: u32) -> u64 {
    (ms as u64 * hz as u64).div_ceil(1000)
}

/// ksmd's batches over one full scan of `scan_pages` pages at `pages_to_scan` a
/// wake-up: a batch ends early where the full scan ends (`ksm_do_scan` returns when
/// `scan_get_next_rmap_item` finds no next page).
pub fn batches(scan_pages: u64, pages_to_scan: u32) -> Vec<u64> {
    let per = pages_to_scan.max(1) as u64;
    let mut out = vec![per; (scan_pages / per) as usize];
    if !scan_pages.is_multiple_of(per) || scan_pages == 0 {
        out.push(scan_pages % per);
    }
    out
}

/// Phases of the touches against the kernel's ticks the replay averages over.
pub const TOUCH_PHASES: u64 = 8;

/// Replay one rate on the time model: a touch of `work_ns` every `period_ns` for
/// `duration_ns`, beside ksmd at `rate` over `scan_pages` pages costing `ns_per_page`
/// a page, with the CPU shared as `sharing` says.
///
/// Where the touch wakes between two ticks decides how long it waits with CPUs shared
/// in slices, and the kernel's touches start at a phase nobody chose (the moment the
/// measurement began); so the replay runs [`TOUCH_PHASES`] phases spread evenly over a
/// tick (the middles of equal parts, never on a tick) and gives their mean.
pub fn simulate(
    work_ns: f64,
    period_ns: u64,
    duration_ns: u64,
    rate: ScanRate,
    scan: (u64, f64),
    hz: u32,
    sharing: Sharing,
) -> Result<SimRate> {
    let tick_ns = 1_000_000_000 / hz.max(1) as u64;
    let (mut responses, mut ksmd_share) = (Vec::new(), 0.0);
    for k in 0..TOUCH_PHASES {
        let phase = (2 * k + 1) * tick_ns / (2 * TOUCH_PHASES);
        let (mut r, share) = simulate_phase(
            work_ns,
            (period_ns, phase),
            duration_ns,
            rate,
            scan,
            hz,
            sharing,
        )?;
        responses.append(&mut r);
        ksmd_share += share / TOUCH_PHASES as f64;
    }
    let n = responses.len().max(1);
    Ok(SimRate {
        mean_response_ns: responses.iter().sum::<u64>() as f64 / n as f64,
        ksmd_share,
        touches: responses.len() as u64,
    })
}

/// [`simulate`] at one phase: after a warm-up of ksmd alone (as long as the kernel's side
/// waits after setting a rate: 20 ms, the sleep, 50 ms), the touches at
/// `phase + k period` for `duration_ns`. Returns each touch's response and ksmd's share
/// of the CPU over that time.
fn simulate_phase(
    work_ns: f64,
    (period_ns, phase_ns): (u64, u64),
    duration_ns: u64,
    rate: ScanRate,
    scan: (u64, f64),
    hz: u32,
    sharing: Sharing,
) -> Result<(Vec<u64>, f64)> {
    let (scan_pages, ns_per_page) = scan;
    let mut t = Timeline::new(&[1024], vec![], 0, hz)?;
    t.set_sharing(sharing)?;
    let touch = t.spawn(ThreadSpec::new("touch").pinned(0))?;
    let ksmd = t.spawn(ThreadSpec::new("ksmd").nice(5).pinned(0))?;
    let bursts: Vec<u64> = batches(scan_pages, rate.pages_to_scan)
        .into_iter()
        .map(|pages| (pages as f64 * ns_per_page).round().max(1.0) as u64)
        .collect();
    let tick_ns = 1_000_000_000 / hz as u64;
    let ticks = msecs_to_jiffies(rate.sleep_millisecs, hz);
    let warmup = (70 + rate.sleep_millisecs.min(1000) as u64) * 1_000_000;
    let span = warmup + duration_ns;
    let steps = if ticks == 0 {
        vec![Step::Cpu {
            work_ns: span,
            memstall: false,
        }]
    } else {
        let shortest = bursts.iter().min().copied().unwrap_or(1);
        let cycles = span / (shortest + ticks * tick_ns) + 1;
        if cycles > 10_000_000 {
            return Err(Error::config(
                "time-validate",
                format!(
                    "rate {} makes {cycles} ksmd wake-ups: measure for less time",
                    rate.name()
                ),
            ));
        }
        bursts
            .iter()
            .cycle()
            .take(cycles as usize)
            .flat_map(|&burst| {
                [
                    Step::Cpu {
                        work_ns: burst,
                        memstall: false,
                    },
                    Step::SleepTicks {
                        ticks: ticks.min(u32::MAX as u64) as u32,
                        tick_ns,
                    },
                ]
            })
            .collect()
    };
    t.submit(ksmd, 0, steps)?;
    let work = work_ns.round().max(1.0) as u64;
    let jobs: Vec<_> = (0..duration_ns.saturating_sub(phase_ns) / period_ns)
        .map(|k| {
            t.submit(
                touch,
                warmup + phase_ns + k * period_ns,
                vec![Step::Cpu {
                    work_ns: work,
                    memstall: false,
                }],
            )
        })
        .collect::<Result<_>>()?;
    t.run_until(warmup)?;
    let ksmd_before = t.cpu_time_ns(ksmd);
    t.run_until(warmup + duration_ns)?;
    // From when the touch first ran, as the kernel's side measures it.
    let responses: Vec<u64> = jobs
        .iter()
        .filter_map(|&j| {
            let job = t.job(j);
            Some(job.ended? - job.on_cpu?)
        })
        .collect();
    Ok((
        responses,
        (t.cpu_time_ns(ksmd) - ksmd_before) / duration_ns as f64,
    ))
}

/// One comparison, kernel against simulator.
#[derive(Debug, Clone, Serialize)]
pub struct Row {
    pub case: String,
    pub metric: &'static str,
    /// How the simulator shared the CPU: `fluid` or `eevdf` ([`Sharing`]).
    pub sharing: &'static str,
    pub kernel: f64,
    pub sim: f64,
    /// The goal, in words; empty for a figure the simulator was calibrated to.
    pub goal: &'static str,
    /// Whether the simulator meets the goal; none for a calibrated figure.
    pub within_goal: Option<bool>,
}

const INFLATION_GOAL: &str = "within 15 % of the kernel's, or 2 points where it is small";
const SHARE_GOAL: &str = "within 10 % of the kernel's";

/// Kernel against simulator at every rate: the touch's response inflation over its
/// response alone, %, and ksmd's share of the CPU, %.
pub fn compare(
    measure: &KernelMeasure,
    period_ns: u64,
    duration_ns: u64,
    sharing: Sharing,
) -> Result<Vec<Row>> {
    let mut rows = Vec::new();
    // The touch's work is its own CPU time alone; the kernel's inflation at a rate is its
    // wait over its own CPU time there, which a slower or faster CPU stretches alike.
    let alone = measure.alone.mean_cpu_ns;
    rows.push(Row {
        case: format!("{} alone (calibration)", measure.calibration.rate.name()),
        metric: "ksmd_cpu_share_pct",
        sharing: sharing.name(),
        kernel: 100.0 * measure.calibration.ksmd_share(),
        // Without the touch task: ksmd's share alone is its burst over burst + sleep.
        sim: 100.0
            * simulate(
                0.0,
                period_ns,
                duration_ns,
                measure.calibration.rate,
                (measure.scan_pages, measure.ksmd_ns_per_page),
                measure.hz,
                sharing,
            )?
            .ksmd_share,
        goal: "",
        within_goal: None,
    });
    for k in &measure.rates {
        let s = simulate(
            alone,
            period_ns,
            duration_ns,
            k.rate,
            (measure.scan_pages, measure.ksmd_ns_per_page),
            measure.hz,
            sharing,
        )?;
        let (ki, si) = (
            k.inflation_pct(),
            100.0 * (s.mean_response_ns / alone - 1.0),
        );
        rows.push(Row {
            case: k.rate.name(),
            metric: "touch_inflation_pct",
            sharing: sharing.name(),
            kernel: ki,
            sim: si,
            goal: INFLATION_GOAL,
            within_goal: Some((si - ki).abs() <= (0.15 * ki.abs()).max(2.0)),
        });
        let (ks, ss) = (100.0 * k.ksmd_share(), 100.0 * s.ksmd_share);
        rows.push(Row {
            case: k.rate.name(),
            metric: "ksmd_cpu_share_pct",
            sharing: sharing.name(),
            kernel: ks,
            sim: ss,
            goal: SHARE_GOAL,
            within_goal: Some((ss - ks).abs() <= 0.10 * ks.abs()),
        });
    }
    Ok(rows)
}

/// The touch's CPU work: `iterations` steps of a xorshift generator, kept from being
/// optimised away.
fn touch_work(iterations: u64) -> u64 {
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    for _ in 0..iterations {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
    }
    std::hint::black_box(x)
}

/// Loop iterations that take `ms` on this CPU now (the median of a few tries).
fn size_touch(ms: f64) -> u64 {
    let mut n = 1_000u64;
    loop {
        let start = Instant::now();
        touch_work(n);
        let took = start.elapsed().as_secs_f64() * 1e3;
        if took >= 2.0 || n > 1 << 40 {
            let mut tries: Vec<f64> = (0..5)
                .map(|_| {
                    let s = Instant::now();
                    touch_work(n);
                    s.elapsed().as_secs_f64() * 1e3
                })
                .collect();
            tries.sort_by(f64::total_cmp);
            return ((n as f64) * ms / tries[2]).round().max(1.0) as u64;
        }
        n *= 2;
    }
}

/// Touches every `period` for `duration`: each one's response, from when the touch task
/// runs again after its sleep to the end of its work, and its own CPU time meanwhile, ns. Stops early (returning what it
/// has) when `stop` says so.
///
/// The response starts when the task runs, not when the touch was due: waking a CPU from
/// idle takes this machine a fraction of a ms that the time model has no part for, and
/// that fraction shrinks when ksmd keeps the CPU out of deep idle, which would read as a
/// touch made faster by ksmd.
fn touches(
    iterations: u64,
    period: Duration,
    duration: Duration,
    stop: &dyn Fn() -> bool,
) -> Vec<(u64, u64)> {
    let thread_cpu = || {
        let t = rustix::time::clock_gettime(rustix::time::ClockId::ThreadCPUTime);
        t.tv_sec as u64 * 1_000_000_000 + t.tv_nsec as u64
    };
    let start = Instant::now();
    let mut out = Vec::new();
    for k in 0u32.. {
        let due = period * k;
        if due + period > duration || stop() {
            break;
        }
        if let Some(wait) = due.checked_sub(start.elapsed()) {
            std::thread::sleep(wait);
        }
        let (began, cpu) = (Instant::now(), thread_cpu());
        touch_work(iterations);
        out.push((began.elapsed().as_nanos() as u64, thread_cpu() - cpu));
    }
    out
}

/// ksmd's pid, or an error saying it is not there.
pub fn ksmd_pid() -> Result<i32> {
    super::ksm_sysfs::ksmd_dir()
        .map(|(pid, _)| pid as i32)
        .ok_or_else(|| Error::host("no ksmd thread in /proc: this kernel has no KSM"))
}

fn cpu_list(set: &rustix::thread::CpuSet) -> Vec<usize> {
    (0..rustix::thread::CpuSet::MAX_CPU)
        .filter(|&c| set.is_set(c))
        .collect()
}

fn set_affinity(pid: Option<i32>, cpus: &[usize], what: &str) -> Result<()> {
    let pid = pid.and_then(rustix::process::Pid::from_raw);
    rustix::thread::sched_setaffinity(pid, &cpu_set(cpus))
        .map_err(|e| Error::host(format!("pinning {what} to CPUs {cpus:?}: {e}")))
}

/// ksmd pinned to one CPU; its CPUs before are in the journal from before the change
/// until they are put back ([`PinnedKsmd::restore`], or on drop).
pub struct PinnedKsmd {
    change: Option<Change>,
    journal: Journal,
}

impl PinnedKsmd {
    pub fn pin(cpu: usize, journal: &Journal) -> Result<PinnedKsmd> {
        let pid = ksmd_pid()?;
        let raw = rustix::process::Pid::from_raw(pid)
            .ok_or_else(|| Error::host(format!("ksmd has pid {pid}")))?;
        let before = rustix::thread::sched_getaffinity(Some(raw))
            .map_err(|e| Error::host(format!("reading ksmd's CPUs: {e}")))?;
        let change = Change::Affinity {
            pid,
            comm: "ksmd".into(),
            cpus: cpu_list(&before),
        };
        journal.record(change.clone())?;
        let pinned = PinnedKsmd {
            change: Some(change),
            journal: journal.clone(),
        };
        set_affinity(Some(pid), &[cpu], "ksmd")?;
        Ok(pinned)
    }

    /// Put ksmd's CPUs back; what failed, in words.
    pub fn restore(&mut self) -> Option<String> {
        let change = self.change.take()?;
        match change.undo() {
            Ok(()) => {
                let _ = self.journal.forget(&change);
                None
            }
            Err(e) => Some(format!("{}: {e}", change.describe())),
        }
    }
}

impl Drop for PinnedKsmd {
    fn drop(&mut self) {
        if let Some(failure) = self.restore() {
            super::note(&format!("warning: could not {failure}"));
        }
    }
}

/// Run the measurements on the machine: `session` has its workers (from `plan`), ksmd
/// is stopped and pinned to `options.cpu`. `progress` hears of each step.
pub fn measure(
    session: &mut KernelSession,
    plan: &Plan,
    options: &TouchOptions,
    progress: &dyn Fn(&str),
) -> Result<KernelMeasure> {
    let interrupted = || Error::host("interrupted");
    let fs = plan.sysfs();
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    // The workers rewrite their volatile pages; they run on the other CPUs.
    let others: Vec<usize> = (0..cpus).filter(|&c| c != options.cpu).collect();
    if !others.is_empty() {
        for pid in session.worker_pids() {
            set_affinity(Some(pid as i32), &others, "a KSM worker")?;
        }
    }
    let own = rustix::thread::sched_getaffinity(None)
        .map_err(|e| Error::host(format!("reading this thread's CPUs: {e}")))?;
    set_affinity(None, &[options.cpu], "the touch task")?;
    let result = (|| {
        let period = Duration::from_millis(options.period_ms);
        let duration = Duration::from_millis(options.measure_ms);
        let stop = || session.interrupted();
        session.set("run", "0")?;
        progress("sizing the touch task");
        let iterations = size_touch(options.touch_ms);
        progress("the touch task alone (ksmd stopped)");
        let alone = touches(iterations, period, duration, &stop);
        if stop() {
            return Err(interrupted());
        }
        let counter = |name: &str| fs.read_i64(name).map(|v| v.max(0) as u64);
        let ksmd_ns = || {
            super::ksm_sysfs::ksmd_cpu_ns()
                .ok_or_else(|| Error::host("ksmd's schedstat is unreadable"))
        };
        let set_rate = |rate: ScanRate| -> Result<()> {
            session.set("pages_to_scan", &rate.pages_to_scan.to_string())?;
            session.set("sleep_millisecs", &rate.sleep_millisecs.to_string())
        };
        // Let ksmd merge what it will first: the cost per page is the steady scan's.
        set_rate(options.calibrate)?;
        session.set("run", "1")?;
        progress("ksmd merging the workers' pages");
        let scans0 = counter("full_scans")?;
        let settle_until = Instant::now() + Duration::from_secs(20);
        while counter("full_scans")? < scans0 + 3 && Instant::now() < settle_until {
            if stop() {
                return Err(interrupted());
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let at_rate = |rate: ScanRate, with_touches: bool| -> Result<KernelRate> {
            set_rate(rate)?;
            // A sleep already begun ends at the old rate's time.
            std::thread::sleep(Duration::from_millis(
                rate.sleep_millisecs.min(1000) as u64 + 50,
            ));
            let (cpu0, pages0, t0) = (ksmd_ns()?, counter("pages_scanned")?, Instant::now());
            let responses = if with_touches {
                touches(iterations, period, duration, &stop)
            } else {
                std::thread::sleep(duration);
                Vec::new()
            };
            let wall = t0.elapsed().as_nanos() as u64;
            let (cpu1, pages1) = (ksmd_ns()?, counter("pages_scanned")?);
            if stop() {
                return Err(interrupted());
            }
            let touched = Touches::of(&responses);
            Ok(KernelRate {
                rate,
                touches: touched.count,
                mean_response_ns: touched.mean_response_ns,
                mean_cpu_ns: touched.mean_cpu_ns,
                ksmd_cpu_ns: cpu1.saturating_sub(cpu0),
                pages_scanned: pages1.saturating_sub(pages0),
                wall_ns: wall,
            })
        };
        progress(&format!("ksmd alone at {}", options.calibrate.name()));
        let calibration = at_rate(options.calibrate, false)?;
        if calibration.pages_scanned == 0 {
            return Err(Error::host(format!(
                "ksmd scanned no pages in {} ms at {}",
                options.measure_ms,
                options.calibrate.name()
            )));
        }
        let mut rates = Vec::new();
        for &rate in &options.rates {
            progress(&format!("the touch task beside ksmd at {}", rate.name()));
            rates.push(at_rate(rate, true)?);
        }
        session.set("run", "0")?;
        progress("the touch task alone again");
        let after = touches(iterations, period, duration, &stop);
        if stop() {
            return Err(interrupted());
        }
        Ok(KernelMeasure {
            touch_iterations: iterations,
            alone: Touches::of(&alone),
            alone_after: Touches::of(&after),
            ksmd_ns_per_page: calibration.ksmd_cpu_ns as f64 / calibration.pages_scanned as f64,
            scan_pages: plan.options.layout.workers as u64
                * plan.options.layout.pages_per_worker() as u64,
            calibration,
            rates,
            hz: plan.params.hz,
        })
    })();
    let _ = set_affinity(None, &cpu_list(&own), "the touch task back");
    result
}

/// Part (2): a worker under a memory cgroup limit with zram as swap
/// ([`super::reclaim_validate`]'s workload, session and simulator replay), timed.
///
/// The kernel side is reclaim-validate's run at two limits: one roomy enough that
/// nothing is reclaimed, whose wall time per access is the worker's own work (the one
/// input taken from the worker, so that row is calibrated, not evidence), and a tight
/// one. Each limit's captured run gives the counts; untraced runs after it give the
/// times ([`super::reclaim_validate::TimedRun`]), since recording every fault slows
/// the workload itself.
///
/// The simulator's side of the tight run: the swap-outs and swap-ins its own replay of
/// the captured trace makes (reclaim-validate's `workingset` machine), priced by the
/// kernel's own swap path on this host ([`super::reclaim_validate::SwapPathCosts`],
/// measured on the worker's page contents, not on its run). A swap-out is reclaim in
/// the worker's context (a cgroup's limit is enforced by the task that charges the
/// page), which psi counts as a stall (`try_charge_memcg`); a swap-in is a stall only
/// for a page that was active before its eviction (`swap_read_folio` checks
/// `folio_test_workingset`), the replay's `workingset_restore_anon`. The worker's
/// thread runs on the timeline, which gives its wall time and its memory stall.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct WorkerCosts {
    /// Compressing one of the worker's pages, ns (this host, mobmem's codec standing
    /// for zram's algorithm): shown beside the kernel's reclaim, not used.
    pub compress_ns: f64,
    pub decompress_ns: f64,
    /// A first-touch fault of a base page, ns (this host): shown, not used.
    pub fault_ns: f64,
    /// The kernel's reclaim of a page to zram and its fault that reads one back, ns.
    pub swap_path: SwapPathCosts,
}

/// Measure the codec's and the fault's part of [`WorkerCosts`] on this host: `codec`
/// on the worker's own page contents (the median of 5 rounds), and first touches of
/// 64 MiB. `swap_path` is the kernel's, measured in a session
/// ([`super::reclaim_validate::KernelSession::probe_swap_path`]).
pub fn worker_costs(
    spec: &super::reclaim_validate::WorkloadSpec,
    codec: crate::mm::fs::codec::Codec,
    swap_path: SwapPathCosts,
) -> Result<WorkerCosts> {
    const PAGE: usize = 4096;
    let pages = spec.anon_pages.clamp(1, 4096);
    let mut contents = vec![vec![0u8; PAGE]; pages as usize];
    for (i, page) in contents.iter_mut().enumerate() {
        spec.anon_contents(i as u32, page);
    }
    let (mut comp, mut decomp) = (Vec::new(), Vec::new());
    for _ in 0..5 {
        let t = Instant::now();
        let stored = contents
            .iter()
            .map(|p| codec.compress(p))
            .collect::<Result<Vec<_>>>()?;
        comp.push(t.elapsed().as_nanos() as f64 / pages as f64);
        let t = Instant::now();
        for s in &stored {
            std::hint::black_box(codec.decompress(s, PAGE)?);
        }
        decomp.push(t.elapsed().as_nanos() as f64 / pages as f64);
    }
    let mut faults = Vec::new();
    for _ in 0..5 {
        let (ns, _) = super::costs::first_touches(64 << 20, PAGE)?;
        faults.push(ns / (16384.0));
    }
    Ok(WorkerCosts {
        compress_ns: median(comp),
        decompress_ns: median(decomp),
        fault_ns: median(faults),
        swap_path,
    })
}

/// The middle value (the upper one of an even count); NaN for none.
pub fn median(mut v: Vec<f64>) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// What the worker did, counted by the replay: its swap-outs, its swap-ins and how
/// many of those were restores (pages active before eviction).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct SwapCounts {
    pub swap_outs: u64,
    pub swap_ins: u64,
    pub restores: u64,
}

/// The worker on the timeline: one thread, `accesses` of `ns_per_access` of work,
/// each swap-out a reclaim (a memory stall), each swap-in a fault that reads the page
/// back (a memory stall only for a restore). Its wall time and its memory stall (SOME),
/// ns.
pub fn simulate_worker(
    accesses: u64,
    ns_per_access: f64,
    counts: SwapCounts,
    costs: &WorkerCosts,
) -> Result<(f64, f64)> {
    let mut t = Timeline::new(&[1024], Vec::new(), 0, 250)?;
    let worker = t.spawn(ThreadSpec::new("worker"))?;
    let ns = |x: f64| x.max(0.0).round() as u64;
    let restores = counts.restores.min(counts.swap_ins);
    let path = &costs.swap_path;
    let steps = vec![
        Step::Cpu {
            work_ns: ns(accesses as f64 * ns_per_access),
            memstall: false,
        },
        Step::Cpu {
            work_ns: ns(counts.swap_outs as f64 * path.reclaim_ns),
            memstall: true,
        },
        Step::Cpu {
            work_ns: ns(restores as f64 * path.swapin_ns),
            memstall: true,
        },
        Step::Cpu {
            work_ns: ns((counts.swap_ins - restores) as f64 * path.swapin_ns),
            memstall: false,
        },
    ];
    let job = t.submit(worker, 0, steps)?;
    t.run_to_end()?;
    let wall = t.job(job).response_ns().unwrap_or(0) as f64;
    let stall = t
        .pressure(
            crate::core::time::SYSTEM_GROUP,
            crate::core::time::Pressure::MemSome,
        )
        .total_us as f64
        * 1000.0;
    Ok((wall, stall))
}

/// One limit as the kernel did it, and the simulator's counts on its trace.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct WorkerRun {
    pub limit_mib: u64,
    /// The untraced runs' median wall time, s.
    pub wall_s: f64,
    /// The traced run's wall time, s (shown, not compared).
    pub traced_wall_s: f64,
    /// The untraced runs' median memory stall, s: SOME and FULL of the worker's own
    /// group where there is one, else of the machine.
    pub stall_some_s: f64,
    pub stall_full_s: f64,
    /// Whether the stall is the worker's own group's.
    pub stall_of_group: bool,
    pub kernel: SwapCounts,
    pub sim: SwapCounts,
}

const WALL_GOAL: &str = "within 20 % of the kernel's";
const STALL_GOAL: &str = "within 20 % of the kernel's";

/// Kernel against simulator for the worker: the roomy run calibrates the work per
/// access; at every tight run, wall time and memory stall (SOME), s.
pub fn compare_worker(
    roomy: &WorkerRun,
    tight: &[WorkerRun],
    accesses: u64,
    costs: &WorkerCosts,
) -> Result<Vec<Row>> {
    let per_access = roomy.wall_s * 1e9 / accesses.max(1) as f64;
    let (roomy_wall, _) = simulate_worker(accesses, per_access, roomy.sim, costs)?;
    let mut rows = vec![Row {
        case: format!("worker {} MiB (calibration)", roomy.limit_mib),
        metric: "wall_s",
        sharing: "fluid",
        kernel: roomy.wall_s,
        sim: roomy_wall / 1e9,
        goal: "",
        within_goal: None,
    }];
    let within = |k: f64, s: f64| (s - k).abs() <= 0.20 * k.abs();
    for run in tight {
        let (wall, stall) = simulate_worker(accesses, per_access, run.sim, costs)?;
        let case = format!("worker {} MiB", run.limit_mib);
        rows.push(Row {
            case: case.clone(),
            metric: "wall_s",
            sharing: "fluid",
            kernel: run.wall_s,
            sim: wall / 1e9,
            goal: WALL_GOAL,
            within_goal: Some(within(run.wall_s, wall / 1e9)),
        });
        rows.push(Row {
            case,
            metric: "memory_stall_some_s",
            sharing: "fluid",
            kernel: run.stall_some_s,
            sim: stall / 1e9,
            goal: STALL_GOAL,
            within_goal: Some(within(run.stall_some_s, stall / 1e9)),
        });
    }
    Ok(rows)
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_worker_stalls_for_its_swap_work_alone() {
        // 1000 accesses of 1 ms, 10 swap-outs of 4 ms and 20 swap-ins of 1 + 2 ms:
        // wall 1000 + 40 + 60 ms, of which 100 ms are a memory stall. (PSI weighs each
        // CPU's times by its non-idle jiffies since the last aggregation: a run shorter
        // than a jiffy would count no stall, as in the kernel.)
        let costs = WorkerCosts {
            compress_ns: 1.0,
            decompress_ns: 1.0,
            fault_ns: 1.0,
            swap_path: SwapPathCosts {
                reclaim_ns: 4e6,
                swapin_ns: 3e6,
                pages: 1,
            },
        };
        let counts = |swap_outs, swap_ins, restores| SwapCounts {
            swap_outs,
            swap_ins,
            restores,
        };
        let (wall, stall) = simulate_worker(1000, 1e6, counts(10, 20, 5), &costs).unwrap();
        assert_eq!(wall, 1.1e9);
        // The 10 reclaims and the 5 restores stall; the other 15 swap-ins do not.
        assert_eq!(stall, 0.055e9);
        let run = |limit_mib, wall_s, stall_some_s, c| WorkerRun {
            limit_mib,
            wall_s,
            traced_wall_s: 2.0 * wall_s,
            stall_some_s,
            stall_full_s: stall_some_s,
            stall_of_group: true,
            kernel: c,
            sim: c,
        };
        // Roomy: 1000 accesses in 1 s, nothing swapped. Tight: the kernel took 1.2 s
        // and stalled 0.1 s; the simulator gives 1.1 s (within 20 %) and 0.055 s (not).
        let rows = compare_worker(
            &run(64, 1.0, 0.0, counts(0, 0, 0)),
            &[run(8, 1.2, 0.1, counts(10, 20, 5))],
            1000,
            &costs,
        )
        .unwrap();
        assert_eq!(rows.len(), 3);
        assert_eq!(rows[0].within_goal, None);
        assert!((rows[1].sim - 1.1).abs() < 1e-9 && rows[1].within_goal == Some(true));
        assert!((rows[2].sim - 0.055).abs() < 1e-9 && rows[2].within_goal == Some(false));
    }

    use super::*;

    const MS: u64 = 1_000_000;

    #[test]
    fn rates_parse_and_bad_ones_say_what_was_expected() {
        assert_eq!(
            ScanRate::parse(" 100/20").unwrap(),
            ScanRate {
                pages_to_scan: 100,
                sleep_millisecs: 20
            }
        );
        for bad in ["100", "a/20", "100/-1", "0/20", ""] {
            let e = ScanRate::parse(bad).unwrap_err().to_string();
            assert!(
                e.contains("PAGES/SLEEP_MS") || e.contains("at least 1"),
                "{bad}: {e}"
            );
        }
    }

    #[test]
    fn a_full_scan_ends_its_last_batch_early() {
        assert_eq!(batches(2700, 1000), vec![1000, 1000, 700]);
        assert_eq!(batches(2700, 100).len(), 27);
        assert_eq!(batches(2700, 4000), vec![2700]);
        assert_eq!(batches(0, 100), vec![0]);
    }

    #[test]
    fn jiffies_round_up() {
        assert_eq!(msecs_to_jiffies(20, 250), 5);
        assert_eq!(msecs_to_jiffies(21, 250), 6);
        assert_eq!(msecs_to_jiffies(0, 250), 0);
        assert_eq!(msecs_to_jiffies(1, 1000), 1);
    }

    #[test]
    fn a_ksmd_that_never_sleeps_inflates_a_touch_by_335_over_1024() {
        let s = simulate(
            10.0 * MS as f64,
            47 * MS,
            2_000 * MS,
            ScanRate {
                pages_to_scan: 100,
                sleep_millisecs: 0,
            },
            (1000, 1000.0),
            250,
            Sharing::Fluid,
        )
        .unwrap();
        let inflation = s.mean_response_ns / (10.0 * MS as f64) - 1.0;
        assert!((inflation - 335.0 / 1024.0).abs() < 1e-3, "{inflation}");
        // ksmd has the CPU alone between touches: 37 ms of 47 at full speed and 10 x
        // 1359/1024 ms at 335/1359.
        assert_eq!(s.touches, 42 * TOUCH_PHASES);
        let busy_touch = 10.0 * 1359.0 / 1024.0;
        let expected = ((47.0 - busy_touch) + busy_touch * 335.0 / 1359.0) / 47.0;
        assert!(
            (s.ksmd_share - expected).abs() < 0.01,
            "{} vs {expected}",
            s.ksmd_share
        );
    }

    #[test]
    fn ksmd_alone_takes_its_burst_over_burst_and_sleep() {
        // 100 pages at 2 µs = 0.2 ms from a tick boundary, then a 5-tick timer at 250 Hz
        // that fires at the 6th boundary: a cycle of 24 ms.
        let s = simulate(
            0.0,
            47 * MS,
            4_800 * MS,
            ScanRate {
                pages_to_scan: 100,
                sleep_millisecs: 20,
            },
            (1000, 2000.0),
            250,
            Sharing::Fluid,
        )
        .unwrap();
        let expected = 0.2 / 24.0;
        // A touch of 1 ns each period changes nothing measurable.
        assert!(
            (s.ksmd_share - expected).abs() < 1e-4,
            "{} vs {expected}",
            s.ksmd_share
        );
    }

    #[test]
    fn the_comparison_marks_calibrated_rows_and_judges_the_rest() {
        let rate = ScanRate {
            pages_to_scan: 1000,
            sleep_millisecs: 20,
        };
        let kernel_rate = |mean_response_ns: f64, ksmd_cpu_ns: u64| KernelRate {
            rate,
            touches: 40,
            mean_response_ns,
            mean_cpu_ns: 10.0 * MS as f64,
            ksmd_cpu_ns,
            pages_scanned: 100_000,
            wall_ns: 2_000 * MS,
        };
        let measure = KernelMeasure {
            touch_iterations: 1,
            alone: Touches {
                count: 40,
                mean_response_ns: 10.0 * MS as f64,
                mean_cpu_ns: 10.0 * MS as f64,
            },
            alone_after: Touches {
                count: 40,
                mean_response_ns: 10.2 * MS as f64,
                mean_cpu_ns: 10.0 * MS as f64,
            },
            ksmd_ns_per_page: 1000.0,
            scan_pages: 1000,
            calibration: kernel_rate(0.0, 95 * MS),
            // The simulator gives ksmd 1 ms per 21 ms; a kernel at twice that share
            // is far from it.
            rates: vec![kernel_rate(10.5 * MS as f64, 190 * MS)],
            hz: 250,
        };
        let rows = compare(&measure, 47 * MS, 2_000 * MS, Sharing::Fluid).unwrap();
        assert_eq!(rows.len(), 3);
        assert_eq!(rows[0].within_goal, None);
        assert!(rows[0].case.contains("calibration"));
        assert_eq!(rows[1].metric, "touch_inflation_pct");
        assert!((rows[1].kernel - 5.0).abs() < 1e-9);
        assert_eq!(rows[2].metric, "ksmd_cpu_share_pct");
        assert!((rows[2].kernel - 9.5).abs() < 1e-9);
        assert_eq!(rows[2].within_goal, Some(false), "{rows:?}");
    }

    #[test]
    fn options_out_of_range_are_refused() {
        let ok = TouchOptions {
            cpu: 0,
            touch_ms: 10.0,
            period_ms: 47,
            measure_ms: 2000,
            calibrate: ScanRate {
                pages_to_scan: 1000,
                sleep_millisecs: 20,
            },
            rates: vec![ScanRate {
                pages_to_scan: 100,
                sleep_millisecs: 20,
            }],
        };
        ok.validate().unwrap();
        let with = |f: &dyn Fn(&mut TouchOptions)| {
            let mut o = ok.clone();
            f(&mut o);
            o.validate().is_err()
        };
        assert!(with(&|o| o.touch_ms = f64::NAN));
        assert!(with(&|o| o.period_ms = 15));
        assert!(with(&|o| o.measure_ms = 100));
        assert!(with(&|o| o.rates.clear()));
        assert!(with(&|o| o.cpu = 4096));
    }
}
