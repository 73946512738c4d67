//! A machine's mechanisms on one clock ([`crate::core::time`]): every app (process) has a
//! UI thread, kswapd and ksmd have theirs, and the work each mechanism does is a job on
//! one of them. The phone ([`super::phone`]) and reclaim's replay ([`super::reclaim`])
//! run on it. CPUs are
//! shared by weight, the flash is a queue that reads wait in behind writes, and a task
//! waiting for a swap-in or reclaiming for itself is a memory stall, counted as PSI.
//!
//! An interaction or a launch is an *episode*: one job on the app's thread, its own
//! execution (`response.execution_ms`, or the launch's base time) followed by the work
//! of every fault the app takes while the episode is open, in trace order. Its time is
//! from the episode's start to the job's end, so it includes every wait other threads
//! caused. Because an episode's job is complete only when the episode closes, the clock
//! runs behind the trace: up to the start of the oldest open episode. Other work (kswapd
//! reclaiming, ksmd scanning, faults of apps in no episode) is a job of its own given
//! at the trace time it happened.
//!
//! Work is in ns of the reference core (capacity 1024); a thread on a slower core takes
//! longer. docs/time-model.md lists the constants and their sources.

use std::collections::VecDeque;

use serde::{Deserialize, Serialize};

use crate::core::swap::{op_price, IoOp};
use crate::core::time::{
    CpuSharing, DeviceQueue, JobId, JobRecord, Pressure, Recording, Sharing, Step, ThreadId,
    ThreadSpec, Timeline, MAX_CPUS, SYSTEM_GROUP,
};
use crate::devices::swap::SwapDevices;
use crate::mm::reclaim::ReclaimWork;
use crate::trace::ProcId;
use crate::{Error, Result};

/// How a run turns work into times.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum Accounting {
    /// Threads compete for CPUs and devices on one clock (this module).
    #[default]
    Contended,
    /// A time is the sum of the latencies charged to the process that faulted: nothing
    /// waits for anything else (the accounting of the papers' own models).
    Sum,
}

/// A machine's CPUs, tick, queues and the costs of work that the sum accounting does
/// not charge.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct TimeModel {
    pub accounting: Accounting,
    /// CPU capacities in `SCHED_CAPACITY_SCALE` units (1024 for the fastest core).
    pub cpus: Vec<u32>,
    /// The kernel tick, Hz.
    pub hz: u32,
    /// How each CPU is shared (not written out when it is the default, the fluid).
    #[serde(skip_serializing_if = "CpuSharing::is_fluid")]
    pub cpu_sharing: CpuSharing,
    /// Operations the flash serves at once.
    pub flash_queue_depth: u32,
    /// CPU time reclaim spends per page it scans, ns (0: not charged).
    pub scan_ns: f64,
    /// The display's frame period, ms: frames an interaction misses are counted
    /// against it.
    pub vsync_ms: f64,
}

impl Default for TimeModel {
    fn default() -> Self {
        TimeModel {
            accounting: Accounting::Contended,
            cpus: GS101_CAPACITIES.to_vec(),
            hz: 250,
            cpu_sharing: CpuSharing::Fluid,
            flash_queue_depth: 32,
            scan_ns: 0.0,
            vsync_ms: 1000.0 / 60.0,
        }
    }
}

/// Google Tensor (gs101, the Pixel 6a's SoC): 4 Cortex-A55, 2 A76, 2 X1. The kernel's
/// capacity of a CPU is its `capacity-dmips-mhz` times its top frequency, scaled so the
/// largest is 1024 (`topology_normalize_cpu_scale`): 250 x 1.803 GHz, 620 x 2.253 GHz
/// and 1024 x 2.802 GHz (`arch/arm64/boot/dts/exynos/google/gs101.dtsi`; frequencies
/// from Google's Tensor specification).
pub const GS101_CAPACITIES: [u32; 8] = [161, 161, 161, 161, 499, 499, 1024, 1024];

impl TimeModel {
    /// The timeline's sharing of CPUs: EEVDF with the kernel's base slice for this many
    /// CPUs and tick.
    pub fn sharing(&self) -> Sharing {
        self.cpu_sharing.on(self.cpus.len(), self.hz)
    }

    pub fn validate(&self) -> Result<()> {
        let fail = |m: String| Err(Error::config("phone time", m));
        if self.cpus.is_empty() || self.cpus.len() > MAX_CPUS {
            return fail(format!(
                "cpus lists {} CPUs: give 1 to {MAX_CPUS}",
                self.cpus.len()
            ));
        }
        if let Some(c) = self.cpus.iter().find(|&&c| c == 0 || c > 1024) {
            return fail(format!("a CPU capacity of {c}: capacities are 1 to 1024"));
        }
        if !(100..=1000).contains(&self.hz) {
            return fail(format!("hz {} is outside 100..=1000", self.hz));
        }
        if self.flash_queue_depth == 0 || self.flash_queue_depth > 1024 {
            return fail(format!(
                "flash_queue_depth {} is outside 1..=1024",
                self.flash_queue_depth
            ));
        }
        for (name, v, least) in [
            ("scan_ns", self.scan_ns, 0.0),
            ("vsync_ms", self.vsync_ms, 1.0),
        ] {
            if !(v.is_finite() && v >= least) {
                return fail(format!("{name} must be a number >= {least}, got {v}"));
            }
        }
        Ok(())
    }
}

/// Devices of the phone's timeline.
const FLASH: usize = 0;
const NVM: usize = 1;

/// An interaction or a launch in progress.
#[derive(Debug, Clone)]
struct Episode {
    proc: ProcId,
    start: u64,
    steps: Vec<Step>,
}

/// What the clock measured, for the run's metrics.
#[derive(Debug, Clone, Default)]
pub struct ClockFigures {
    /// Response of each interaction, ns, in order.
    pub responses_ns: Vec<f64>,
    /// Each launch's time, ns, in order.
    pub launches_ns: Vec<f64>,
    /// Total memory stall (some, full) of the whole phone, ns.
    pub mem_some_ns: u64,
    pub mem_full_ns: u64,
    pub io_some_ns: u64,
    /// Memory stall (some) of the app that stalled most, ns.
    pub mem_some_worst_app_ns: u64,
    /// CPU time of the apps' threads together, of kswapd and of ksmd, ns.
    pub app_cpu_ns: f64,
    pub kswapd_cpu_ns: f64,
    pub ksmd_cpu_ns: f64,
    /// Time the flash had an operation in service, and time operations waited in its
    /// queue, ns.
    pub flash_busy_ns: u64,
    pub flash_wait_ns: u64,
    /// What ran when, if [`MachineClock::record`] was called.
    pub recording: Option<ClockRecording>,
}

/// What ran when on the phone's clock, and whose threads and devices the recording's
/// ids name.
#[derive(Debug, Clone)]
pub struct ClockRecording {
    pub recording: Recording,
    /// Each app's thread, by process.
    pub apps: Vec<ThreadId>,
    pub kswapd: ThreadId,
    pub ksmd: ThreadId,
    /// The devices' names, by index.
    pub devices: Vec<String>,
}

/// The response times of one kind of job (interactions, launches), in submission order,
/// taken as the timeline releases them.
#[derive(Debug, Default)]
struct Responses {
    /// Jobs submitted and not yet released, oldest first.
    open: VecDeque<JobId>,
    times_ns: Vec<f64>,
}

impl Responses {
    fn submitted(&mut self, job: JobId) {
        self.open.push_back(job);
    }

    /// The timeline released `id`: its response, if it is the oldest open job of this
    /// kind (jobs are released in submission order, so it is, when it is one of them).
    fn ended(&mut self, id: JobId, job: &JobRecord) {
        if self.open.front() == Some(&id) {
            self.open.pop_front();
            let response = job.response_ns().expect("a released job has ended");
            self.times_ns.push(response as f64);
        }
    }

    fn into_times(self) -> Result<Vec<f64>> {
        if !self.open.is_empty() {
            return Err(Error::config("phone clock", "a job never ended"));
        }
        Ok(self.times_ns)
    }
}

/// A machine's timeline and the threads on it.
pub struct MachineClock {
    timeline: Timeline,
    apps: Vec<ThreadId>,
    /// Apps named at the start, each with its pressure group (1..=named_apps).
    named_apps: usize,
    kswapd: ThreadId,
    ksmd: ThreadId,
    interaction: Option<Episode>,
    launch: Option<Episode>,
    interactions: Responses,
    launches: Responses,
    /// Prices of reclaim's work.
    scan_ns: f64,
    compress_ns: f64,
    flash_write_ns: f64,
    nvm_write_ns: f64,
}

fn ns(x: f64) -> u64 {
    x.max(0.0).round() as u64
}

impl MachineClock {
    /// A clock for `procs` apps (named `names`) on `model`'s CPUs, pricing swap work by
    /// `devices`.
    pub fn new(model: &TimeModel, names: &[String], devices: &SwapDevices) -> Result<Self> {
        model.validate()?;
        let queues = vec![
            DeviceQueue::new("flash", model.flash_queue_depth)?,
            // A byte-addressable memory device: one page at a time.
            DeviceQueue::new("nvm", 1)?,
        ];
        let mut timeline = Timeline::new(&model.cpus, queues, names.len(), model.hz)?;
        timeline.set_sharing(model.sharing())?;
        let mut apps = Vec::with_capacity(names.len());
        for (i, name) in names.iter().enumerate() {
            apps.push(timeline.spawn(ThreadSpec::new(name.clone()).group(i + 1))?);
        }
        let kswapd = timeline.spawn(ThreadSpec::new("kswapd0"))?;
        // mm/ksm.c: `set_user_nice(current, 5)`.
        let ksmd = timeline.spawn(ThreadSpec::new("ksmd").nice(5))?;
        Ok(MachineClock {
            timeline,
            named_apps: apps.len(),
            apps,
            kswapd,
            ksmd,
            interaction: None,
            launch: None,
            interactions: Responses::default(),
            launches: Responses::default(),
            scan_ns: model.scan_ns,
            compress_ns: op_price(devices, crate::core::pages::SwapDevice::Zram, IoOp::Write).ns,
            flash_write_ns: devices.flash.write_ns,
            nvm_write_ns: devices.nvm.write_ns,
        })
    }

    /// Record what runs when from now on ([`Timeline::record`]); [`MachineClock::finish`]
    /// returns it.
    pub fn record(&mut self) {
        self.timeline.record();
    }

    /// The trace reached `now`: run the clock up to it, or to the start of the oldest
    /// open episode if that is earlier.
    pub fn advance(&mut self, now: u64) -> Result<()> {
        let open = [&self.interaction, &self.launch]
            .into_iter()
            .flatten()
            .map(|e| e.start)
            .min();
        let to = open.map_or(now, |s| s.min(now));
        if to > self.timeline.now() {
            self.timeline.run_until(to)?;
            self.release();
        }
        Ok(())
    }

    /// Forget the jobs that have ended, oldest first, keeping the response times of
    /// interactions and launches: a day's run holds only the jobs still open.
    fn release(&mut self) {
        let (interactions, launches) = (&mut self.interactions, &mut self.launches);
        self.timeline.release_ended(|id, job| {
            interactions.ended(id, job);
            launches.ended(id, job);
        });
    }

    /// `proc` received input at `now`: an interaction of `execution_ns` of CPU work
    /// begins (the previous one, if any, ends).
    pub fn begin_interaction(&mut self, proc: ProcId, now: u64, execution_ns: f64) -> Result<()> {
        self.end_interaction()?;
        self.interaction = Some(Episode {
            proc,
            start: now,
            steps: vec![cpu(execution_ns, false)],
        });
        Ok(())
    }

    pub fn end_interaction(&mut self) -> Result<()> {
        if let Some(e) = self.interaction.take() {
            let job = self.submit_episode(e)?;
            self.interactions.submitted(job);
        }
        Ok(())
    }

    /// The launch in progress is now `active` (proc, start, base ns), or none: a launch
    /// that ended is given to its thread.
    pub fn sync_launch(&mut self, active: Option<(ProcId, u64, f64)>) -> Result<()> {
        let same = match (&self.launch, active) {
            (Some(e), Some((p, s, _))) => e.proc == p && e.start == s,
            (None, None) => true,
            _ => false,
        };
        if same {
            return Ok(());
        }
        if let Some(e) = self.launch.take() {
            let job = self.submit_episode(e)?;
            self.launches.submitted(job);
        }
        if let Some((proc, start, base)) = active {
            self.launch = Some(Episode {
                proc,
                start,
                steps: vec![cpu(base, false)],
            });
        }
        Ok(())
    }

    fn submit_episode(&mut self, e: Episode) -> Result<JobId> {
        check_steps(&e.steps)?;
        let thread = self.app(e.proc)?;
        self.timeline.submit(thread, e.start, e.steps)
    }

    /// `proc`'s thread. A process past the names given at the start (a run that learns
    /// its processes as it goes) gets a thread when it first works, in no app pressure
    /// group; ids are bounded so that a stray one cannot make millions of threads.
    fn app(&mut self, proc: ProcId) -> Result<ThreadId> {
        if let Some(&t) = self.apps.get(proc as usize) {
            return Ok(t);
        }
        if proc as usize >= MAX_LATE_APPS {
            return Err(Error::config(
                "clock",
                format!("process {proc} has no thread: ids past {MAX_LATE_APPS} are refused"),
            ));
        }
        while self.apps.len() <= proc as usize {
            let name = format!("process {}", self.apps.len());
            let thread = self.timeline.spawn(ThreadSpec::new(name))?;
            self.apps.push(thread);
        }
        Ok(self.apps[proc as usize])
    }

    /// Work `proc` did at `now` for an access (its fault, its direct reclaim): part of its
    /// open episode (the launch before the interaction), else a job of its own.
    pub fn work(&mut self, proc: ProcId, now: u64, steps: &[Step]) -> Result<()> {
        if steps.is_empty() {
            return Ok(());
        }
        check_steps(steps)?;
        for e in [&mut self.launch, &mut self.interaction]
            .into_iter()
            .flatten()
        {
            if e.proc == proc {
                e.steps.extend_from_slice(steps);
                return Ok(());
            }
        }
        let thread = self.app(proc)?;
        let mut list = self.timeline.spare_steps();
        list.extend_from_slice(steps);
        self.timeline.submit(thread, now, list)?;
        Ok(())
    }

    /// The steps of reclaim's `work`; `direct` when the task that allocates does it (a
    /// memory stall), else kswapd's. Writes are handed to the devices without waiting.
    pub fn reclaim_steps(&self, work: &ReclaimWork, direct: bool, out: &mut Vec<Step>) {
        let cpu_ns = work.scanned as f64 * self.scan_ns
            + work.io.zram_compressions as f64 * self.compress_ns;
        if cpu_ns > 0.0 {
            out.push(cpu(cpu_ns, direct));
        }
        let writes = [
            (
                FLASH,
                work.io.flash_writes + work.writebacks,
                self.flash_write_ns,
            ),
            (NVM, work.io.nvm_writes, self.nvm_write_ns),
        ];
        for (device, count, each) in writes {
            for _ in 0..count {
                out.push(Step::Submit {
                    device,
                    service_ns: ns(each),
                });
            }
        }
    }

    /// An access of `proc` at `now` is done: reclaim's `work` since the last one
    /// ([`crate::mm::reclaim::Machine::take_work`], kswapd's then direct) and the access's
    /// own `fault` steps. The direct reclaim (a memory stall) and then the fault are
    /// `proc`'s work; kswapd's is a job of kswapd's. `fault` is left empty.
    pub fn access_done(
        &mut self,
        proc: ProcId,
        now: u64,
        [kswapd, direct]: [ReclaimWork; 2],
        fault: &mut Vec<Step>,
    ) -> Result<()> {
        let mut steps = Vec::new();
        if !direct.is_empty() {
            self.reclaim_steps(&direct, true, &mut steps);
        }
        steps.append(fault);
        self.work(proc, now, &steps)?;
        if !kswapd.is_empty() {
            self.kswapd(now, &kswapd)?;
        }
        Ok(())
    }

    /// kswapd did `work` at `now`.
    pub fn kswapd(&mut self, now: u64, work: &ReclaimWork) -> Result<()> {
        let mut steps = Vec::new();
        self.reclaim_steps(work, false, &mut steps);
        check_steps(&steps)?;
        if !steps.is_empty() {
            self.timeline.submit(self.kswapd, now, steps)?;
        }
        Ok(())
    }

    /// ksmd woke at `now` and spent `cpu_ns` scanning.
    pub fn ksmd(&mut self, now: u64, cpu_ns: f64) -> Result<()> {
        if cpu_ns > 0.0 {
            let steps = vec![cpu(cpu_ns, false)];
            check_steps(&steps)?;
            self.timeline.submit(self.ksmd, now, steps)?;
        }
        Ok(())
    }

    /// A swap-in from `device` (flash or NVM) of `read_ns`: the task waits, stalled.
    pub fn device_read(nvm: bool, read_ns: f64) -> Step {
        Step::Io {
            device: if nvm { NVM } else { FLASH },
            service_ns: ns(read_ns),
            memstall: true,
        }
    }

    /// A file read from flash of `flash_ns` then `cpu_ns` of work (decompression,
    /// copies); not a memory stall.
    pub fn file_read(flash_ns: f64, cpu_ns: f64, out: &mut Vec<Step>) {
        if flash_ns > 0.0 {
            out.push(Step::Io {
                device: FLASH,
                service_ns: ns(flash_ns),
                memstall: false,
            });
        }
        if cpu_ns > 0.0 {
            out.push(cpu(cpu_ns, false));
        }
    }

    /// End every episode, run the clock until all work is done, and read it.
    pub fn finish(mut self) -> Result<ClockFigures> {
        self.end_interaction()?;
        self.sync_launch(None)?;
        self.timeline.run_to_end()?;
        self.release();
        let responses_ns = std::mem::take(&mut self.interactions).into_times()?;
        let launches_ns = std::mem::take(&mut self.launches).into_times()?;
        let t = &mut self.timeline;
        // Reading aggregates the last state times into the totals.
        let mut worst = 0;
        for g in 1..=self.named_apps {
            worst = worst.max(t.pressure(g, Pressure::MemSome).total_us * 1000);
        }
        let line = |t: &mut Timeline, p| t.pressure(SYSTEM_GROUP, p).total_us * 1000;
        let flash = t.device(FLASH).stats();
        let recording = t.take_recording().map(|recording| ClockRecording {
            recording,
            apps: self.apps.clone(),
            kswapd: self.kswapd,
            ksmd: self.ksmd,
            devices: t.devices().iter().map(|d| d.name().to_string()).collect(),
        });
        Ok(ClockFigures {
            recording,
            responses_ns,
            launches_ns,
            mem_some_ns: line(t, Pressure::MemSome),
            mem_full_ns: line(t, Pressure::MemFull),
            io_some_ns: line(t, Pressure::IoSome),
            mem_some_worst_app_ns: worst,
            app_cpu_ns: self.apps.iter().map(|&a| t.cpu_time_ns(a)).sum(),
            kswapd_cpu_ns: t.cpu_time_ns(self.kswapd),
            ksmd_cpu_ns: t.cpu_time_ns(self.ksmd),
            flash_busy_ns: flash.busy_ns,
            flash_wait_ns: flash.wait_ns,
        })
    }
}

/// Most processes a clock gives threads to when they first work (see `MachineClock::app`).
pub const MAX_LATE_APPS: usize = 1 << 16;

/// The longest step the clock takes, ns: an hour. A longer one comes from a time
/// constant no device has, and would keep the pressure averaging (every 2 s while
/// anything runs) going for simulated years.
pub const MAX_STEP_NS: u64 = 3_600_000_000_000;

fn check_steps(steps: &[Step]) -> Result<()> {
    for step in steps {
        let ns = match *step {
            Step::Cpu { work_ns, .. } => work_ns,
            Step::Io { service_ns, .. } | Step::Submit { service_ns, .. } => service_ns,
            Step::Sleep { ns } => ns,
            Step::SleepTicks { .. } => 0,
        };
        if ns > MAX_STEP_NS {
            return Err(Error::config(
                "clock",
                format!(
                    "a step of {:.0} s: at most an hour (check the time constants: T_E, fault and device times)",
                    ns as f64 / 1e9
                ),
            ));
        }
    }
    Ok(())
}

fn cpu(work_ns: f64, memstall: bool) -> Step {
    Step::Cpu {
        work_ns: ns(work_ns),
        memstall,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one_cpu() -> TimeModel {
        TimeModel {
            cpus: vec![1024],
            ..TimeModel::default()
        }
    }

    fn clock(model: &TimeModel, apps: usize) -> MachineClock {
        let names: Vec<String> = (0..apps).map(|i| format!("app{i}")).collect();
        MachineClock::new(model, &names, &SwapDevices::default()).unwrap()
    }

    const MS: u64 = 1_000_000;

    #[test]
    fn an_interaction_beside_ksmd_on_one_cpu_includes_its_share_of_the_wait() {
        // One CPU. At 0 the app gets input (100 ms of work) and ksmd wakes with 10 ms
        // of scanning; the interaction then takes a zram swap-in (1 ms of
        // decompression). Worked by hand: both run from 0, ksmd at 335/1359 of the
        // CPU, so it is done at 10 * 1359/335 = 40.57 ms, the app having done 30.57 ms;
        // the app's other 70.43 ms run alone. The CPU never idles, so the interaction
        // ends when all 111 ms of work are done. The decompression is its last
        // millisecond, alone on the CPU: a memory stall of 1 ms, SOME and FULL.
        let mut c = clock(&one_cpu(), 1);
        c.begin_interaction(0, 0, 100.0e6).unwrap();
        c.ksmd(0, 10.0e6).unwrap();
        let decompress = Step::Cpu {
            work_ns: MS,
            memstall: true,
        };
        c.work(0, 5 * MS, &[decompress]).unwrap();
        c.advance(500 * MS).unwrap();
        let f = c.finish().unwrap();
        // (the fluid rounds each completion up to the next ns)
        assert!(
            (f.responses_ns[0] - 111.0e6).abs() <= 2.0,
            "{:?}",
            f.responses_ns
        );
        assert_eq!(f.ksmd_cpu_ns.round(), 10.0e6);
        assert!((f.app_cpu_ns - 101.0e6).abs() <= 2.0, "{}", f.app_cpu_ns);
        assert_eq!(f.mem_some_ns, MS);
        assert_eq!(f.mem_full_ns, MS);
        // Without ksmd, the same interaction is its own work.
        let mut alone = clock(&one_cpu(), 1);
        alone.begin_interaction(0, 0, 100.0e6).unwrap();
        alone.work(0, 5 * MS, &[decompress]).unwrap();
        let r = alone.finish().unwrap().responses_ns[0];
        assert!((r - 101.0e6).abs() <= 2.0, "{r}");
    }

    #[test]
    fn ended_jobs_are_released_and_their_responses_kept_in_order() {
        // An interaction a second, 10 ms of work each, and a fault of another app's
        // between them: as the clock follows the trace, the ended jobs are let go, and
        // the responses come out in the order of the interactions.
        let mut c = clock(&one_cpu(), 2);
        for i in 0..1000u64 {
            c.begin_interaction(0, i * 1000 * MS, (10 + i % 3) as f64 * 1e6)
                .unwrap();
            c.work(1, i * 1000 * MS + 500 * MS, &[cpu(MS as f64, false)])
                .unwrap();
            c.advance(i * 1000 * MS + 600 * MS).unwrap();
            assert!(c.timeline.held_jobs() <= 3, "{}", c.timeline.held_jobs());
        }
        let f = c.finish().unwrap();
        let expected: Vec<f64> = (0..1000u64).map(|i| (10 + i % 3) as f64 * 1e6).collect();
        assert_eq!(f.responses_ns, expected);
    }

    #[test]
    fn faults_in_a_launch_belong_to_it_and_an_input_waits_for_the_launch() {
        // Two CPUs. App 0 launches at 0 (300 ms of base work); at 100 ms it gets input
        // (100 ms of work) and at 150 ms takes a flash swap-in of 2 ms, which belongs
        // to the launch. Launch: 300 + 2 = 302 ms. The interaction waits on the app's
        // thread until 302 ms, then runs 100 ms: 402 - 100 = 302 ms.
        let model = TimeModel {
            cpus: vec![1024, 1024],
            ..TimeModel::default()
        };
        let mut c = clock(&model, 2);
        c.sync_launch(Some((0, 0, 300.0e6))).unwrap();
        c.advance(100 * MS).unwrap();
        c.begin_interaction(0, 100 * MS, 100.0e6).unwrap();
        c.advance(150 * MS).unwrap();
        c.work(0, 150 * MS, &[MachineClock::device_read(false, 2.0e6)])
            .unwrap();
        // Another app's fault outside any episode runs on its own thread at once.
        c.work(1, 150 * MS, &[MachineClock::device_read(false, 2.0e6)])
            .unwrap();
        c.sync_launch(None).unwrap();
        let f = c.finish().unwrap();
        assert_eq!(f.launches_ns, vec![302.0e6]);
        assert_eq!(f.responses_ns, vec![302.0e6]);
        // Both reads were memory stalls of 2 ms each, overlapping at no time (the
        // launch's runs at 300-302 ms, app 1's at 150-152 ms).
        assert_eq!(f.mem_some_ns, 4 * MS);
        assert_eq!(f.mem_some_worst_app_ns, 2 * MS);
    }

    #[test]
    fn a_read_waits_behind_kswapds_writes_in_the_flash_queue() {
        // A flash of depth 1: kswapd hands it 3 writes at 0 (a write each of the
        // profile's write time); an app's swap-in at 0 waits for all three.
        let model = TimeModel {
            flash_queue_depth: 1,
            ..one_cpu()
        };
        let devices = SwapDevices::default();
        let (w, r) = (devices.flash.write_ns, devices.flash.read_ns);
        let mut c = clock(&model, 1);
        let work = ReclaimWork {
            io: crate::core::swap::IoCounts {
                flash_writes: 3,
                ..Default::default()
            },
            ..Default::default()
        };
        c.kswapd(0, &work).unwrap();
        c.begin_interaction(0, 0, 0.0).unwrap();
        c.work(0, 0, &[MachineClock::device_read(false, r)])
            .unwrap();
        let f = c.finish().unwrap();
        assert_eq!(f.responses_ns, vec![(3 * ns(w) + ns(r)) as f64]);
        // Waits: the writes 0, w and 2w; the read 3w.
        assert_eq!(f.flash_wait_ns, 6 * ns(w));
        // kswapd did no CPU work: writes are handed over, not waited for.
        assert_eq!(f.kswapd_cpu_ns, 0.0);
    }

    #[test]
    fn direct_reclaim_is_a_stall_of_the_allocating_task_and_kswapds_is_not() {
        let model = TimeModel {
            scan_ns: 100.0,
            ..one_cpu()
        };
        let devices = SwapDevices::default();
        let c = clock(&model, 1);
        let work = ReclaimWork {
            scanned: 10,
            writebacks: 1,
            io: crate::core::swap::IoCounts {
                zram_compressions: 2,
                nvm_writes: 1,
                ..Default::default()
            },
        };
        let cpu = 10.0 * 100.0 + 2.0 * devices.zram.compress_ns;
        for direct in [true, false] {
            let mut steps = Vec::new();
            c.reclaim_steps(&work, direct, &mut steps);
            assert_eq!(
                steps,
                vec![
                    Step::Cpu {
                        work_ns: ns(cpu),
                        memstall: direct
                    },
                    Step::Submit {
                        device: FLASH,
                        service_ns: ns(devices.flash.write_ns)
                    },
                    Step::Submit {
                        device: NVM,
                        service_ns: ns(devices.nvm.write_ns)
                    },
                ]
            );
        }
    }

    #[test]
    fn bad_time_tables_are_clear_errors() {
        for (model, needle) in [
            (
                TimeModel {
                    cpus: vec![],
                    ..TimeModel::default()
                },
                "cpus",
            ),
            (
                TimeModel {
                    cpus: vec![2048],
                    ..TimeModel::default()
                },
                "capacity",
            ),
            (
                TimeModel {
                    hz: 99,
                    ..TimeModel::default()
                },
                "hz",
            ),
            (
                TimeModel {
                    flash_queue_depth: 0,
                    ..TimeModel::default()
                },
                "flash_queue_depth",
            ),
            (
                TimeModel {
                    scan_ns: f64::NAN,
                    ..TimeModel::default()
                },
                "scan_ns",
            ),
            (
                TimeModel {
                    vsync_ms: 0.0,
                    ..TimeModel::default()
                },
                "vsync_ms",
            ),
        ] {
            let e = model.validate().unwrap_err().to_string();
            assert!(e.contains(needle), "{e}");
        }
        TimeModel::default().validate().unwrap();
        // A step longer than an hour is refused, with what to check.
        let mut c = clock(&one_cpu(), 1);
        let long = Step::Cpu {
            work_ns: MAX_STEP_NS + 1,
            memstall: false,
        };
        let e = c.work(0, 0, &[long]).unwrap_err().to_string();
        assert!(e.contains("at most an hour"), "{e}");
        c.begin_interaction(0, 0, (MAX_STEP_NS + 1) as f64).unwrap();
        let e = c.finish().unwrap_err().to_string();
        assert!(e.contains("at most an hour"), "{e}");
    }
}
