//! What KSM does to apps (docs/ksm.md, "App impact").
//!
//! - **Time, on the clock** (the default, [`Accounting::Contended`]): the device's cores
//!   run ksmd and the apps' threads on [`crate::core::time`]. ksmd (nice 5) wakes when
//!   the KSM run woke it and scans for the CPU time that run's scan cost, then sleeps
//!   `sleep_millisecs`; its next scan starts after the sleep, so a scan that waited for a
//!   CPU pushes the rest later. The foreground app has a UI thread and `fg_load - 1`
//!   helper threads (a render thread and the like); each helper does its share of every
//!   vsync period (`fg_load - 1` of a frame, in order: 1.8 is one helper busy 80 % of
//!   each frame). A touch is a job on the UI thread of `touch_cpu_ms` plus a
//!   copy-on-write fault for each page the touch writes that KSM has merged
//!   (`touch_writes` pages, the merged share of the app's mergeable pages); its response
//!   runs from the touch to the job's end, so it includes every wait for a core. A
//!   launch is a job of `warm_ms` or `cold_ms` on the UI thread with `launch_load - 1`
//!   helpers doing the same work beside it.
//! - **Time, summed** ([`Accounting::Sum`], the old model): ksmd uses a share `u` of one
//!   core (from the run's samples); work that keeps `L` threads runnable on `N` cores
//!   runs `max(1, (L + u) / N)` times slower than alone (processor sharing). A touch is
//!   `touch_cpu_ms x max(1, (fg_load + u)/N)` plus the copy-on-write faults; a launch is
//!   its time stretched by `max(1, (launch_load + u) / N)`.
//! - Launch time: the apps are launched one after another, then switched round-robin
//!   (the paper's "run one after another and then used together"). A launch needs
//!   `launch_need_pages` free above the low-memory killer's `min_free_pages`, plus the
//!   app's whole footprint if it is not running; while memory is short the least
//!   recently used other app is killed. Memory used by a running app is its footprint
//!   (mergeable pages + `other_pages`) less what KSM saves in its pages at that time.
//!   A relaunch of a killed app is cold (`cold_ms`), of a running one warm (`warm_ms`);
//!   both are stretched by `max(1, (launch_load + u) / N)`. First launches are cold
//!   with and without KSM and are left out.
//!
//! - Touches: one per sample while an app is in the foreground of the together phase.
//!   On the clock, from the first sample after its launch finished (a person taps once
//!   the app is up) to the last before the next launch; summed, every sample after the
//!   launch up to and including the next launch's.
//!
//! The killed apps' pages stay in the KSM simulation (a relaunched app has the same
//! contents); the touch writes are not fed back into it. Background apps use no CPU
//! (Android 4.2 held them in the `bg_non_interactive` group at a few per cent).

use serde::{Deserialize, Serialize};

use super::pages::Population;
use super::run::{KsmRun, Wake};
use crate::core::time::CpuSharing;
use crate::core::time::{JobId, Ns, Step, ThreadId, ThreadSpec, Timeline};
use crate::mm::clock::Accounting;
use crate::{Error, Result};

/// One app's figures.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AppModel {
    pub name: String,
    /// Memory the app uses besides its mergeable pages (code, graphics, file pages).
    pub other_pages: u64,
    /// CPU time to handle one touch, alone on a core, ms.
    pub touch_cpu_ms: f64,
    /// Runnable threads while the app is in the foreground.
    pub fg_load: f64,
    /// Pages a touch writes.
    pub touch_writes: f64,
    pub warm_ms: f64,
    pub cold_ms: f64,
}

/// The device and the usage scenario.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ImpactConfig {
    pub cores: f64,
    pub memory_pages: u64,
    /// Memory of the kernel, system services and everything but the apps.
    pub system_pages: u64,
    /// The low-memory killer keeps this much free.
    pub min_free_pages: u64,
    /// Free memory a launch needs on top.
    pub launch_need_pages: u64,
    /// Runnable threads during a launch.
    pub launch_load: f64,
    /// A copy-on-write fault (fault + 4 KiB copy), us.
    pub cow_fault_us: f64,
    /// From this time on, apps are switched round-robin every `switch_ms`.
    pub together_from_ms: u64,
    pub switch_ms: u64,
    /// How work becomes time: on the clock (default) or summed (the old model).
    pub accounting: Accounting,
    /// How a core is shared on the clock: `fluid` (default) or `eevdf` slices (not
    /// written out when it is the default).
    #[serde(skip_serializing_if = "CpuSharing::is_fluid")]
    pub cpu_sharing: CpuSharing,
    /// The display's refresh period, ms: a foreground helper's work comes once a frame.
    pub vsync_ms: f64,
    pub apps: Vec<AppModel>,
}

fn app(
    name: &str,
    other_pages: u64,
    touch_cpu_ms: f64,
    fg_load: f64,
    warm: f64,
    cold: f64,
) -> AppModel {
    AppModel {
        name: name.into(),
        other_pages,
        touch_cpu_ms,
        fg_load,
        touch_writes: 16.0,
        warm_ms: warm,
        cold_ms: cold,
    }
}

impl Default for ImpactConfig {
    /// A Nexus 10 (2 cores, 2 GiB); the rest are assumptions stated in docs/ksm.md.
    fn default() -> Self {
        ImpactConfig {
            cores: 2.0,
            memory_pages: 524_288,
            system_pages: 344_288,
            min_free_pages: 16_384,
            launch_need_pages: 12_800,
            launch_load: 2.0,
            cow_fault_us: 8.0,
            together_from_ms: 60_000,
            switch_ms: 10_000,
            accounting: Accounting::Contended,
            cpu_sharing: CpuSharing::Fluid,
            // The Nexus 10's display refreshes at 60 Hz.
            vsync_ms: 1000.0 / 60.0,
            apps: vec![
                app("browser", 30_000, 60.0, 1.8, 500.0, 1500.0),
                app("camera", 25_000, 40.0, 1.0, 700.0, 1600.0),
                app("gallery", 28_000, 50.0, 2.0, 450.0, 1300.0),
                app("youtube", 30_000, 50.0, 1.9, 550.0, 1500.0),
            ],
        }
    }
}

/// Most cores the clock gives a device, and most runnable threads an app may have.
const MAX_THREADS: f64 = 64.0;

impl ImpactConfig {
    pub fn validate(&self) -> Result<()> {
        let bad = |m: String| Err(Error::config("ksm impact", m));
        if self.switch_ms == 0 {
            return bad("switch_ms must be > 0".into());
        }
        if !(self.cores >= 1.0 && self.cores <= MAX_THREADS && self.cores.fract() == 0.0) {
            return bad(format!(
                "cores {} must be a whole number from 1 to 64",
                self.cores
            ));
        }
        if !(self.vsync_ms.is_finite() && (1.0..=1000.0).contains(&self.vsync_ms)) {
            return bad(format!("vsync_ms {} must be from 1 to 1000", self.vsync_ms));
        }
        let load_ok = |l: f64| (1.0..=MAX_THREADS).contains(&l);
        if !load_ok(self.launch_load) {
            return bad(format!(
                "launch_load {} must be from 1 (the UI thread) to 64",
                self.launch_load
            ));
        }
        if !(self.cow_fault_us.is_finite() && (0.0..=1e6).contains(&self.cow_fault_us)) {
            return bad(format!(
                "cow_fault_us {} must be from 0 to 1e6",
                self.cow_fault_us
            ));
        }
        for a in &self.apps {
            if !load_ok(a.fg_load) {
                return bad(format!(
                    "{}: fg_load {} must be from 1 (the UI thread) to 64",
                    a.name, a.fg_load
                ));
            }
            for (key, v, max) in [
                ("touch_cpu_ms", a.touch_cpu_ms, 60_000.0),
                ("touch_writes", a.touch_writes, 1e6),
                ("warm_ms", a.warm_ms, 600_000.0),
                ("cold_ms", a.cold_ms, 600_000.0),
            ] {
                if !(v.is_finite() && (0.0..=max).contains(&v)) {
                    return bad(format!("{}: {key} {v} must be from 0 to {max}", a.name));
                }
            }
        }
        Ok(())
    }
}

/// Per-app results of one run.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AppImpact {
    pub name: String,
    pub touch_ms: f64,
    /// Of a touch's time, how long it waited for a core, ms (summed: what processor
    /// sharing stretched it by).
    pub touch_wait_ms: f64,
    /// Mean relaunch time (warm and cold), ms; NaN without relaunches.
    pub launch_ms: f64,
    /// Of a relaunch's time, how long it waited for a core, ms.
    pub launch_wait_ms: f64,
    pub relaunches: u64,
    pub cold_relaunches: u64,
    pub killed: u64,
}

fn slowdown(load: f64, cores: f64) -> f64 {
    (load / cores).max(1.0)
}

/// A launch the memory model decided: when, which app, whether it is a relaunch (counted)
/// and cold, and until when the app stays in the foreground.
struct Launch {
    at_ms: u64,
    app: usize,
    relaunch: bool,
    cold: bool,
    until_ms: u64,
}

/// Evaluate the app impact of a run (KSM on or off) of a population whose processes are
/// the apps of `config`, in the same order. `wakes` are the run's ksmd wake-ups
/// ([`super::run::simulate_with_wakes`]); the summed accounting does not read them.
pub fn evaluate(
    run: &KsmRun,
    wakes: &[Wake],
    pop: &Population,
    config: &ImpactConfig,
) -> Result<Vec<AppImpact>> {
    let n = config.apps.len();
    if n == 0 || n != pop.processes.len() {
        return Err(Error::config(
            "ksm impact",
            format!(
                "{} apps in the impact model but {} processes in the population",
                n,
                pop.processes.len()
            ),
        ));
    }
    config.validate()?;
    let (launches, killed) = launches(run, pop, config);
    let times = match config.accounting {
        Accounting::Sum => summed(run, pop, config, &launches),
        Accounting::Contended => on_clock(run, wakes, pop, config, &launches)?,
    };
    // Relaunches and cold ones, per app.
    let mut relaunches = vec![(0u64, 0u64); n];
    for l in launches.iter().filter(|l| l.relaunch) {
        relaunches[l.app].0 += 1;
        relaunches[l.app].1 += l.cold as u64;
    }
    let mean = |v: &[f64]| crate::core::stats::mean(v.iter().copied());
    Ok((config.apps.iter().zip(killed).zip(times).zip(relaunches))
        .map(
            |(((a, killed), t), (relaunches, cold_relaunches))| AppImpact {
                name: a.name.clone(),
                touch_ms: mean(&t.touch_ms),
                touch_wait_ms: mean(&t.touch_wait_ms),
                launch_ms: mean(&t.launch_ms),
                launch_wait_ms: mean(&t.launch_wait_ms),
                relaunches,
                cold_relaunches,
                killed,
            },
        )
        .collect())
}

/// The sample in force at `t_ms`.
fn sample_at(run: &KsmRun, t_ms: u64) -> &super::run::Sample {
    let i = run.samples.partition_point(|s| s.time_ms <= t_ms);
    &run.samples[i.saturating_sub(1)]
}

/// The launch schedule and who is killed to make room: first launches at the apps' start
/// times, then round-robin from `together_from_ms`. Returns the launches in time order
/// and each app's kills.
fn launches(run: &KsmRun, pop: &Population, config: &ImpactConfig) -> (Vec<Launch>, Vec<u64>) {
    let n = config.apps.len();
    let end_ms = run.last().time_ms;
    let mut schedule: Vec<(u64, usize)> = pop
        .processes
        .iter()
        .enumerate()
        .map(|(i, p)| (p.start_ns / 1_000_000, i))
        .collect();
    let mut t = config.together_from_ms;
    let mut k = 0;
    while t < end_ms {
        schedule.push((t, k % n));
        k += 1;
        t += config.switch_ms;
    }
    schedule.sort_by_key(|l| l.0);
    let footprint: Vec<f64> = (0..n)
        .map(|a| (pop.pages_of(a) as u64 + config.apps[a].other_pages) as f64)
        .collect();
    let mut alive = vec![false; n];
    let mut launched = vec![false; n];
    let mut last_used = vec![0u64; n];
    let mut killed = vec![0u64; n];
    let mut out = Vec::with_capacity(schedule.len());
    for (i, &(t_ms, a)) in schedule.iter().enumerate() {
        let s = sample_at(run, t_ms);
        let used = |alive: &[bool]| -> f64 {
            (0..n)
                .filter(|&b| alive[b])
                .map(|b| footprint[b] - s.memory.saved_by_process[b])
                .sum()
        };
        let need = (config.min_free_pages + config.launch_need_pages) as f64
            + if alive[a] {
                0.0
            } else {
                footprint[a] - s.memory.saved_by_process[a]
            };
        loop {
            let free = config.memory_pages as f64 - config.system_pages as f64 - used(&alive);
            if free >= need {
                break;
            }
            let victim = (0..n)
                .filter(|&b| b != a && alive[b])
                .min_by_key(|&b| last_used[b]);
            match victim {
                Some(b) => {
                    alive[b] = false;
                    killed[b] += 1;
                }
                None => break,
            }
        }
        out.push(Launch {
            at_ms: t_ms,
            app: a,
            relaunch: launched[a],
            cold: !alive[a],
            until_ms: schedule.get(i + 1).map_or(end_ms, |l| l.0),
        });
        launched[a] = true;
        alive[a] = true;
        last_used[a] = t_ms;
    }
    (out, killed)
}

/// Every measured time of one app, ms.
#[derive(Default)]
struct Times {
    touch_ms: Vec<f64>,
    touch_wait_ms: Vec<f64>,
    launch_ms: Vec<f64>,
    launch_wait_ms: Vec<f64>,
}

fn touch_work_ms(model: &AppModel, merged_share: f64, config: &ImpactConfig) -> (f64, f64) {
    (
        model.touch_cpu_ms,
        model.touch_writes * merged_share * config.cow_fault_us / 1000.0,
    )
}

fn merged_share(sample: &super::run::Sample, pop: &Population, app: usize) -> f64 {
    sample.memory.merged_by_process[app] as f64 / pop.pages_of(app).max(1) as f64
}

/// The old model: processor sharing at ksmd's share of each sample.
fn summed(
    run: &KsmRun,
    pop: &Population,
    config: &ImpactConfig,
    launches: &[Launch],
) -> Vec<Times> {
    let mut times: Vec<Times> = (0..config.apps.len()).map(|_| Times::default()).collect();
    for l in launches {
        let (a, model) = (l.app, &config.apps[l.app]);
        if l.relaunch {
            let base = if l.cold { model.cold_ms } else { model.warm_ms };
            let s = sample_at(run, l.at_ms);
            let stretched = base * slowdown(config.launch_load + s.cpu_share, config.cores);
            times[a].launch_ms.push(stretched);
            times[a].launch_wait_ms.push(stretched - base);
        }
        if l.at_ms < config.together_from_ms {
            continue;
        }
        for sample in run
            .samples
            .iter()
            .filter(|x| x.time_ms > l.at_ms && x.time_ms <= l.until_ms)
        {
            let (cpu, cow) = touch_work_ms(model, merged_share(sample, pop, a), config);
            let stretched = cpu * slowdown(model.fg_load + sample.cpu_share, config.cores);
            times[a].touch_ms.push(stretched + cow);
            times[a].touch_wait_ms.push(stretched - cpu);
        }
    }
    times
}

fn ns(ms: f64) -> Ns {
    (ms * 1e6).round() as Ns
}

fn cpu(work_ns: Ns) -> Step {
    Step::Cpu {
        work_ns: work_ns.max(1),
        memstall: false,
    }
}

/// The threads of one app: its UI thread, then its helpers.
struct AppThreads {
    ui: ThreadId,
    helpers: Vec<ThreadId>,
}

/// The helpers' work beside a UI thread's: `load - 1` threads, each a whole one but the
/// last, which has what is left (0.8 of one for a load of 1.8).
fn helper_shares(load: f64) -> impl Iterator<Item = f64> {
    let extra = load - 1.0;
    (0..extra.ceil() as usize).map(move |i| (extra - i as f64).min(1.0))
}

/// The foreground app's frames: once its launch has finished, each helper starts a
/// frame's work every vsync until the app leaves the foreground, unless its last frame is
/// still being drawn (that frame is dropped, as a render thread drops it: work never
/// piles up behind a slow frame).
struct Drawing<'a> {
    /// The next frame's start; none before the app draws.
    next: Option<Ns>,
    frames: Vec<Option<JobId>>,
    shares: Vec<f64>,
    helpers: &'a [ThreadId],
    vsync: Ns,
}

impl Drawing<'_> {
    /// Start every frame due before `to`.
    fn until(&mut self, t: &mut Timeline, to: Ns) -> Result<()> {
        let Some(mut f) = self.next else {
            return Ok(());
        };
        while f < to {
            t.run_until(f)?;
            for ((&h, &share), last) in self.helpers.iter().zip(&self.shares).zip(&mut self.frames)
            {
                if last.is_none_or(|j| t.job(j).ended.is_some()) {
                    let work = (self.vsync as f64 * share).round() as Ns;
                    *last = Some(t.submit(h, f, vec![cpu(work)])?);
                }
            }
            f += self.vsync;
        }
        self.next = Some(f);
        Ok(())
    }
}

/// Most jobs and steps the app-impact model puts on the clock (frames, ksmd's scans and
/// sleeps): the timeline keeps a record of each, about 100 bytes.
pub const MAX_CLOCK_JOBS: u64 = 4_000_000;

/// The clock: ksmd and the apps' threads on the device's cores.
fn on_clock(
    run: &KsmRun,
    wakes: &[Wake],
    pop: &Population,
    config: &ImpactConfig,
    launches: &[Launch],
) -> Result<Vec<Times>> {
    let end_ms = run.last().time_ms;
    let frames = end_ms.saturating_sub(config.together_from_ms) as f64 / config.vsync_ms;
    let helpers = (config.apps.iter())
        .map(|a| helper_shares(a.fg_load).count())
        .max()
        .unwrap_or(0);
    let jobs = frames * helpers as f64 + 2.0 * wakes.len() as f64;
    if jobs > MAX_CLOCK_JOBS as f64 {
        return Err(Error::config(
            "ksm impact",
            format!(
                "on the clock this run makes about {jobs:.0} frames and ksmd steps, more than \
                 the {MAX_CLOCK_JOBS} allowed: run for less time, or set [impact] \
                 accounting = \"sum\""
            ),
        ));
    }
    let cores = vec![crate::core::time::CAPACITY_SCALE; config.cores as usize];
    // The tick only paces the pressure averaging, which this model does not read.
    let hz = run.params.hz.clamp(100, 1000);
    let mut t = Timeline::new(&cores, Vec::new(), 0, hz)?;
    t.set_sharing(config.cpu_sharing.on(cores.len(), hz))?;
    if let Some(first) = wakes.first() {
        // ksmd runs at nice 5 (`set_user_nice(current, 5)` in ksm_scan_thread).
        let ksmd = t.spawn(ThreadSpec::new("ksmd").nice(5))?;
        let sleep = run.params.sleep_ns();
        let mut steps = Vec::with_capacity(2 * wakes.len());
        for w in wakes {
            steps.push(cpu(w.cpu_ns.round() as Ns));
            steps.push(Step::Sleep { ns: sleep });
        }
        t.submit(ksmd, first.at_ns, steps)?;
    }
    let threads = config
        .apps
        .iter()
        .map(|a| {
            let ui = t.spawn(ThreadSpec::new(a.name.clone()))?;
            let helpers = (0..helper_shares(a.fg_load.max(config.launch_load)).count())
                .map(|i| t.spawn(ThreadSpec::new(format!("{}:{}", a.name, i + 1))))
                .collect::<Result<Vec<_>>>()?;
            Ok(AppThreads { ui, helpers })
        })
        .collect::<Result<Vec<_>>>()?;
    let vsync = ns(config.vsync_ms);
    // Relaunches and touches: (app, job, its CPU work in ns).
    let mut launch_jobs: Vec<(usize, JobId, Ns)> = Vec::new();
    let mut touches: Vec<(usize, JobId, Ns)> = Vec::new();
    for l in launches {
        let (a, model, th) = (l.app, &config.apps[l.app], &threads[l.app]);
        let at = l.at_ms * 1_000_000;
        t.run_until(at)?;
        let base = if l.cold { model.cold_ms } else { model.warm_ms };
        let launch = t.submit(th.ui, at, vec![cpu(ns(base))])?;
        for (&h, share) in th.helpers.iter().zip(helper_shares(config.launch_load)) {
            t.submit(h, at, vec![cpu(ns(base * share))])?;
        }
        if l.relaunch {
            launch_jobs.push((a, launch, ns(base).max(1)));
        }
        if l.at_ms < config.together_from_ms {
            continue;
        }
        let mut drawing = Drawing {
            next: None,
            frames: vec![None; th.helpers.len()],
            shares: helper_shares(model.fg_load).collect(),
            helpers: &th.helpers,
            vsync,
        };
        // Not at the instant the app leaves the foreground: the next launch starts then.
        for sample in run
            .samples
            .iter()
            .filter(|x| x.time_ms > l.at_ms && x.time_ms < l.until_ms)
        {
            let now = sample.time_ms * 1_000_000;
            drawing.until(&mut t, now)?;
            t.run_until(now)?;
            if t.job(launch).ended.is_none() {
                continue;
            }
            if drawing.next.is_none() {
                drawing.next = Some(now);
                drawing.until(&mut t, now + 1)?;
            }
            let (work, cow) = touch_work_ms(model, merged_share(sample, pop, a), config);
            let work = ns(work + cow).max(1);
            let job = t.submit(th.ui, now, vec![cpu(work)])?;
            touches.push((a, job, work));
        }
        drawing.until(&mut t, l.until_ms * 1_000_000)?;
    }
    t.run_to_end()?;
    // A job's response and what it waited beyond its own work (a core of capacity 1024
    // does its work in exactly that many ns), ms.
    let timed = |id: JobId, work: Ns| -> Result<(f64, f64)> {
        let r = t.job(id).response_ns().ok_or_else(|| {
            Error::config("ksm impact", "a touch or launch never ended on the clock")
        })?;
        Ok((r as f64 / 1e6, r.saturating_sub(work) as f64 / 1e6))
    };
    let mut times: Vec<Times> = (0..config.apps.len()).map(|_| Times::default()).collect();
    for (a, job, work) in launch_jobs {
        let (r, wait) = timed(job, work)?;
        times[a].launch_ms.push(r);
        times[a].launch_wait_ms.push(wait);
    }
    for (a, job, work) in touches {
        let (r, wait) = timed(job, work)?;
        times[a].touch_ms.push(r);
        times[a].touch_wait_ms.push(wait);
    }
    Ok(times)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mm::dedup::presets::AndroidConfig;
    use crate::mm::dedup::{simulate_with_wakes, KsmParams, RunSpec, ScanCosts};

    /// The four apps at a twentieth of their size, over 120 s (together from 60 s).
    fn runs(ksm_on: bool) -> (Population, KsmRun, Vec<Wake>) {
        let pop = AndroidConfig {
            scale: 0.05,
            ..Default::default()
        }
        .generate(1)
        .unwrap();
        let spec = RunSpec {
            duration_ms: 120_000,
            sample_ms: 1_000,
            ksm_on,
        };
        let (run, wakes) =
            simulate_with_wakes(&pop, &KsmParams::default(), &ScanCosts::default(), spec).unwrap();
        (pop, run, wakes)
    }

    #[test]
    fn without_ksmd_a_touch_takes_its_own_work_and_a_launch_at_most_a_frame_more() {
        // Two cores, at most two runnable threads of the foreground app: nothing waits,
        // except a launch behind the last frame of the app it replaces.
        let (pop, run, wakes) = runs(false);
        assert!(wakes.is_empty());
        let config = ImpactConfig::default();
        let apps = evaluate(&run, &wakes, &pop, &config).unwrap();
        for (a, model) in apps.iter().zip(&config.apps) {
            assert_eq!(a.touch_ms, model.touch_cpu_ms, "{}", a.name);
            assert_eq!(a.touch_wait_ms, 0.0, "{}", a.name);
            assert!(a.relaunches > 0, "{}", a.name);
            assert!(
                a.launch_wait_ms <= config.vsync_ms,
                "{}: {}",
                a.name,
                a.launch_wait_ms
            );
        }
        // The summed accounting agrees where nothing competes.
        let summed = evaluate(
            &run,
            &wakes,
            &pop,
            &ImpactConfig {
                accounting: Accounting::Sum,
                ..config.clone()
            },
        )
        .unwrap();
        for (s, c) in summed.iter().zip(&apps) {
            assert_eq!(s.touch_ms, c.touch_ms);
            assert_eq!(
                (s.relaunches, s.cold_relaunches, s.killed),
                (c.relaunches, c.cold_relaunches, c.killed)
            );
            assert!((s.launch_ms - c.launch_ms).abs() <= config.vsync_ms);
        }
    }

    #[test]
    fn a_ksmd_that_never_sleeps_stretches_every_touch_by_1359_over_1024() {
        // One core, one runnable thread per app, and a ksmd (nice 5) that scans for the
        // whole run: every touch and launch shares the core 1024 : 335.
        let (pop, run, _) = runs(false);
        let wakes = [Wake {
            at_ns: 0,
            cpu_ns: 1e12,
        }];
        let mut config = ImpactConfig {
            cores: 1.0,
            launch_load: 1.0,
            ..ImpactConfig::default()
        };
        for a in &mut config.apps {
            a.fg_load = 1.0;
        }
        let apps = evaluate(&run, &wakes, &pop, &config).unwrap();
        for (a, model) in apps.iter().zip(&config.apps) {
            let expected = model.touch_cpu_ms * 1359.0 / 1024.0;
            assert!(
                (a.touch_ms - expected).abs() < 1e-5,
                "{}: {}",
                a.name,
                a.touch_ms
            );
            assert!((a.touch_wait_ms - (expected - model.touch_cpu_ms)).abs() < 1e-5);
            assert!(a.launch_wait_ms > 0.3 * 335.0 / 1024.0 * model.warm_ms);
        }
    }

    #[test]
    fn ksmd_at_80_20_slows_touches_only_where_it_shares_a_core_and_runs_are_repeatable() {
        let (pop, off_run, off_wakes) = runs(false);
        let (_, on_run, on_wakes) = runs(true);
        let on_params = KsmParams {
            pages_to_scan: 80,
            ..KsmParams::default()
        };
        let (on_run_80, on_wakes_80) = simulate_with_wakes(
            &pop,
            &on_params,
            &ScanCosts::default(),
            RunSpec {
                duration_ms: 120_000,
                sample_ms: 1_000,
                ksm_on: true,
            },
        )
        .unwrap();
        let config = ImpactConfig::default();
        let off = evaluate(&off_run, &off_wakes, &pop, &config).unwrap();
        for (run, wakes) in [(&on_run, &on_wakes), (&on_run_80, &on_wakes_80)] {
            let on = evaluate(run, wakes, &pop, &config).unwrap();
            assert_eq!(on, evaluate(run, wakes, &pop, &config).unwrap());
            for (o, f) in on.iter().zip(&off) {
                assert!(o.touch_ms >= f.touch_ms, "{}", o.name);
            }
            // The apps with a helper beside the UI thread wait for a core; the camera,
            // alone on two cores with ksmd, never does.
            assert_eq!(on[1].touch_wait_ms, 0.0);
            assert!(on[0].touch_wait_ms > 0.0 && on[2].touch_wait_ms > 0.0);
        }
        let _ = on_run;
    }

    #[test]
    fn configurations_the_clock_cannot_run_are_refused() {
        let (pop, run, wakes) = runs(false);
        let base = ImpactConfig::default();
        let mut bad = vec![
            ImpactConfig {
                cores: 1.5,
                ..base.clone()
            },
            ImpactConfig {
                cores: 0.0,
                ..base.clone()
            },
            ImpactConfig {
                vsync_ms: 0.0,
                ..base.clone()
            },
            ImpactConfig {
                launch_load: 0.5,
                ..base.clone()
            },
            ImpactConfig {
                cow_fault_us: f64::NAN,
                ..base.clone()
            },
        ];
        let mut tiny = base.clone();
        tiny.apps[0].fg_load = 100.0;
        bad.push(tiny);
        let mut negative = base.clone();
        negative.apps[3].cold_ms = -1.0;
        bad.push(negative);
        for config in bad {
            let err = evaluate(&run, &wakes, &pop, &config)
                .unwrap_err()
                .to_string();
            assert!(err.contains("ksm impact"), "{err}");
        }
        // More ksmd steps than the clock keeps records of: refused before anything runs,
        // and the summed accounting still runs.
        let many = vec![
            Wake {
                at_ns: 0,
                cpu_ns: 1.0
            };
            (MAX_CLOCK_JOBS / 2 + 1) as usize
        ];
        let err = evaluate(&run, &many, &pop, &base).unwrap_err().to_string();
        assert!(err.contains("accounting = \"sum\""), "{err}");
        let summed = ImpactConfig {
            accounting: Accounting::Sum,
            ..base
        };
        assert!(evaluate(&run, &many, &pop, &summed).is_ok());
    }
}
