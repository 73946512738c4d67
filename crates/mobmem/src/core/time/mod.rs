//! One clock that every mechanism spends time on: threads that compete for CPUs by
//! weight ([`sched`]), devices that serve operations in order from a queue ([`queue`]),
//! and the memory and I/O pressure that follows ([`psi`]).
//!
//! A mechanism does not add a latency to a total; it gives a thread a job, a list of
//! steps (CPU work, a device operation, a sleep), and reads when the job ended. The
//! [`Timeline`] runs the steps of every thread against each other: two threads on one
//! CPU share it by weight, a read queues behind the writes before it, and a thread
//! waiting for a swap-in counts as a memory stall. So a response time includes the
//! waits that other work caused, and the pressure a person reads is computed the way
//! the kernel computes it.
//!
//! Every constant the timeline needs (CPU capacities, service times, queue depths, the
//! tick) is an input; docs/time-model.md lists the defaults and their sources.

pub mod eevdf;
pub mod psi;
pub mod queue;
pub mod record;
pub mod sched;

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

pub use eevdf::EevdfParams;
use psi::Psi;
pub use psi::{Pressure, PressureLine, TaskState};
pub use queue::{DeviceQueue, QueueStats};
pub use record::{CpuSpan, IoSpan, PsiPoint, Recording};
pub use sched::{
    weight_of_nice, CpuSharing, Cpus, Ns, Sharing, CAPACITY_SCALE, MAX_CPUS, NICE_0_WEIGHT,
};

use crate::{Error, Result};

/// A thread: its name, nice value, the pressure group it counts in besides the whole
/// machine's (an app), and the CPUs it may run on (a bit per CPU).
#[derive(Debug, Clone)]
pub struct ThreadSpec {
    pub name: String,
    pub nice: i32,
    pub group: Option<usize>,
    pub cpus: u64,
}

impl ThreadSpec {
    /// A nice-0 thread of no app group, allowed on every CPU.
    pub fn new(name: impl Into<String>) -> Self {
        ThreadSpec {
            name: name.into(),
            nice: 0,
            group: None,
            cpus: u64::MAX,
        }
    }

    pub fn nice(mut self, nice: i32) -> Self {
        self.nice = nice;
        self
    }

    pub fn group(mut self, group: usize) -> Self {
        self.group = Some(group);
        self
    }

    /// Allowed only on `cpu`.
    pub fn pinned(mut self, cpu: usize) -> Self {
        self.cpus = 1u64 << cpu.min(63);
        self
    }
}

/// One step of a job.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// CPU work, ns of the reference core; `memstall` while the work is memory
    /// management done for the thread (reclaim, decompressing a swapped page).
    Cpu { work_ns: Ns, memstall: bool },
    /// An operation on device `device` served for `service_ns`; the thread waits for it
    /// (I/O wait; a memory stall too when `memstall`, as for a swap-in).
    Io {
        device: usize,
        service_ns: Ns,
        memstall: bool,
    },
    /// An operation handed to device `device` for `service_ns` that the thread does not
    /// wait for (a write submitted for writeback): it occupies the device's queue, so
    /// later operations wait behind it, while the thread goes on at once.
    Submit { device: usize, service_ns: Ns },
    /// The thread sleeps (not a stall).
    Sleep { ns: Ns },
    /// The thread sleeps on a kernel timer of `ticks` jiffies of `tick_ns` each
    /// (`schedule_timeout`): the timer wheel rounds the expiry up by one tick so that it
    /// never fires early (`calc_index`, `kernel/time/timer.c`), so the thread wakes at
    /// the `ticks + 1`-th tick boundary from now.
    SleepTicks { ticks: u32, tick_ns: Ns },
}

/// A job's handle.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct JobId(pub u32);

/// A thread's handle.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ThreadId(pub u32);

/// What happened to a job.
#[derive(Debug, Clone, PartialEq)]
pub struct JobRecord {
    pub thread: ThreadId,
    /// When it was given.
    pub submitted: Ns,
    /// When its first step began (after the thread's earlier jobs).
    pub started: Option<Ns>,
    pub ended: Option<Ns>,
    /// When its first CPU work first got a CPU (with CPUs shared in slices, after any
    /// wait for the thread running there), once that work ended.
    pub on_cpu: Option<Ns>,
    steps: Vec<Step>,
    next_step: usize,
}

impl JobRecord {
    /// From submission to end: what a person waiting for it sees.
    pub fn response_ns(&self) -> Option<Ns> {
        self.ended.map(|e| e - self.submitted)
    }
}

#[derive(Debug, Clone)]
struct Thread {
    spec: ThreadSpec,
    weight: u32,
    /// The CPU it last ran on: where its waits count for pressure.
    cpu: usize,
    state: TaskState,
    pending: VecDeque<JobId>,
    current: Option<JobId>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Timer {
    /// A job is given to its thread.
    Arrive(JobId),
    /// A thread's device operation or sleep is over.
    Resume(ThreadId),
}

/// The machine's clock: CPUs, device queues, pressure, and the threads' jobs.
#[derive(Debug, Clone)]
pub struct Timeline {
    now: Ns,
    cpus: Cpus,
    devices: Vec<DeviceQueue>,
    psi: Psi,
    threads: Vec<Thread>,
    /// Jobs from the first not yet released ([`Timeline::release_ended`]) on.
    jobs: VecDeque<JobRecord>,
    /// Jobs released from the front of `jobs`: job `id` is at `id - released`.
    released: u32,
    /// Timers that fire in another order than they were set (device operations, sleeps).
    timers: BinaryHeap<Reverse<(Ns, u64, Timer)>>,
    /// Jobs' arrivals set in time order, as a trace's requests are: a queue, each taken
    /// off the front in O(1). Together with `timers`, the timers fire in (time, seq)
    /// order, whichever of the two holds them.
    arrivals: VecDeque<(Ns, u64, JobId)>,
    timer_seq: u64,
    /// Step lists of released jobs, emptied, for [`Timeline::spare_steps`].
    spare_steps: Vec<Vec<Step>>,
    done: Vec<sched::Completion>,
    steps_begun: u64,
    /// Jobs submitted that have not ended.
    open_jobs: usize,
    /// What ran when, if asked for ([`Timeline::record`]).
    recorder: Option<Box<record::Recorder>>,
}

/// Step lists of released jobs kept for reuse: enough for the jobs released at once.
const MAX_SPARE_STEP_LISTS: usize = 1 << 12;
/// The longest step list kept for reuse.
const MAX_SPARE_STEPS: usize = 64;

/// Pressure group of the whole machine.
pub const SYSTEM_GROUP: usize = 0;

impl Timeline {
    /// A machine of CPUs of `capacities`, with `devices`, app pressure groups
    /// `1..=app_groups` beside the machine's (group 0), and a kernel tick of `hz`.
    pub fn new(
        capacities: &[u32],
        devices: Vec<DeviceQueue>,
        app_groups: usize,
        hz: u32,
    ) -> Result<Self> {
        if !(100..=1000).contains(&hz) {
            return Err(Error::config(
                "timeline",
                format!("HZ {hz} is outside 100..=1000"),
            ));
        }
        let cpus = Cpus::new(capacities)?;
        Ok(Timeline {
            now: 0,
            psi: Psi::new(app_groups + 1, cpus.len(), hz, 0),
            cpus,
            devices,
            threads: Vec::new(),
            jobs: VecDeque::new(),
            released: 0,
            timers: BinaryHeap::new(),
            arrivals: VecDeque::new(),
            timer_seq: 0,
            spare_steps: Vec::new(),
            done: Vec::new(),
            steps_begun: 0,
            open_jobs: 0,
            recorder: None,
        })
    }

    pub fn now(&self) -> Ns {
        self.now
    }

    /// Share the CPUs as `sharing` says (the fluid by default); before any job runs.
    pub fn set_sharing(&mut self, sharing: Sharing) -> Result<()> {
        self.cpus.set_sharing(sharing)
    }

    /// Keep a [`Recording`] from now on: every stretch of CPU work and device wait of
    /// every thread, and the machine's pressure at each run of its averaging worker.
    /// Off by default; what the timeline computes is the same either way.
    pub fn record(&mut self) {
        self.recorder.get_or_insert_with(Default::default);
    }

    /// What was recorded so far, if [`Timeline::record`] was called: the steps that have
    /// ended (one still in progress is not in it).
    pub fn recording(&self) -> Option<&Recording> {
        self.recorder.as_deref().map(|r| &r.done)
    }

    /// The recording so far (as [`Timeline::recording`]), taken out: recording stops.
    pub fn take_recording(&mut self) -> Option<Recording> {
        self.recorder.take().map(|r| r.done)
    }

    /// Add a thread, idle.
    pub fn spawn(&mut self, spec: ThreadSpec) -> Result<ThreadId> {
        let weight = weight_of_nice(spec.nice)?;
        let allowed = spec.cpus & mask_of(self.cpus.len());
        if allowed == 0 {
            return Err(Error::config(
                format!("thread {}", spec.name),
                format!("may run on no CPU of the {}", self.cpus.len()),
            ));
        }
        if let Some(g) = spec.group {
            if g == SYSTEM_GROUP || g >= self.psi_groups() {
                return Err(Error::config(
                    format!("thread {}", spec.name),
                    format!(
                        "group {g} is not an app group (1..={})",
                        self.psi_groups() - 1
                    ),
                ));
            }
        }
        let id = ThreadId(self.threads.len() as u32);
        self.threads.push(Thread {
            cpu: allowed.trailing_zeros() as usize,
            spec,
            weight,
            state: TaskState::IDLE,
            pending: VecDeque::new(),
            current: None,
        });
        Ok(id)
    }

    fn psi_groups(&self) -> usize {
        self.psi.groups()
    }

    /// Give `thread` a job of `steps`, arriving at `at` (not before now). A thread runs its
    /// jobs one after another, in the order they arrive.
    pub fn submit(&mut self, thread: ThreadId, at: Ns, steps: Vec<Step>) -> Result<JobId> {
        if thread.0 as usize >= self.threads.len() {
            return Err(Error::config("timeline", format!("no thread {}", thread.0)));
        }
        if at < self.now {
            return Err(Error::config(
                "timeline",
                format!("a job for {} ns submitted at {} ns", at, self.now),
            ));
        }
        if let Some(d) = steps.iter().find_map(|s| match s {
            Step::Io { device, .. } | Step::Submit { device, .. }
                if *device >= self.devices.len() =>
            {
                Some(*device)
            }
            _ => None,
        }) {
            return Err(Error::config("timeline", format!("no device {d}")));
        }
        let Some(id) = u32::try_from(self.jobs.len())
            .ok()
            .and_then(|n| n.checked_add(self.released))
            .map(JobId)
        else {
            return Err(Error::config(
                "timeline",
                "more than 2^32 - 1 jobs in one run",
            ));
        };
        self.jobs.push_back(JobRecord {
            thread,
            submitted: at,
            started: None,
            ended: None,
            on_cpu: None,
            steps,
            next_step: 0,
        });
        self.open_jobs += 1;
        self.schedule(at, Timer::Arrive(id));
        Ok(id)
    }

    fn schedule(&mut self, at: Ns, timer: Timer) {
        self.timer_seq += 1;
        match timer {
            Timer::Arrive(job) if self.arrivals.back().is_none_or(|&(last, _, _)| last <= at) => {
                self.arrivals.push_back((at, self.timer_seq, job));
            }
            _ => self.timers.push(Reverse((at, self.timer_seq, timer))),
        }
    }

    /// The timer that fires next: the earliest, the first set among equals.
    fn next_timer(&self) -> Option<(Ns, u64, Timer)> {
        let heap = self.timers.peek().map(|&Reverse(t)| t);
        let queued = self
            .arrivals
            .front()
            .map(|&(at, seq, job)| (at, seq, Timer::Arrive(job)));
        match (heap, queued) {
            (Some(h), Some(q)) => Some(if (q.0, q.1) < (h.0, h.1) { q } else { h }),
            (h, q) => h.or(q),
        }
    }

    /// Remove the timer [`Timeline::next_timer`] gave.
    fn pop_timer(&mut self, (at, seq, _): (Ns, u64, Timer)) {
        if self
            .arrivals
            .front()
            .is_some_and(|&(t, s, _)| (t, s) == (at, seq))
        {
            self.arrivals.pop_front();
        } else {
            self.timers.pop();
        }
    }

    /// An empty step list to fill and [`Timeline::submit`], reusing the memory of a
    /// released job's: a run of millions of short jobs then allocates a few lists.
    pub fn spare_steps(&mut self) -> Vec<Step> {
        self.spare_steps.pop().unwrap_or_default()
    }

    /// Steps begun so far, over every thread (a measure of the work the clock did).
    pub fn steps_begun(&self) -> u64 {
        self.steps_begun
    }

    /// Jobs submitted that have not ended.
    pub fn open_jobs(&self) -> usize {
        self.open_jobs
    }

    /// Jobs the timeline holds: those not released ([`Timeline::release_ended`]).
    pub fn held_jobs(&self) -> usize {
        self.jobs.len()
    }

    /// Threads spawned so far.
    pub fn threads(&self) -> usize {
        self.threads.len()
    }

    pub fn thread_spec(&self, thread: ThreadId) -> &ThreadSpec {
        &self.threads[thread.0 as usize].spec
    }

    /// Devices, in the order given.
    pub fn devices(&self) -> &[DeviceQueue] {
        &self.devices
    }

    /// The total stall time of `group` so far, ns, as last aggregated.
    pub fn stall_total_ns(&self, group: usize, pressure: Pressure) -> Ns {
        self.psi.total_ns(group, pressure)
    }

    /// Job `id`, which must not have been released.
    pub fn job(&self, id: JobId) -> &JobRecord {
        let index =
            id.0.checked_sub(self.released)
                .unwrap_or_else(|| panic!("job {} was released from the timeline", id.0));
        &self.jobs[index as usize]
    }

    fn job_mut(&mut self, id: JobId) -> &mut JobRecord {
        &mut self.jobs[(id.0 - self.released) as usize]
    }

    /// Hand every ended job at the front of the submission order to `each`, oldest
    /// first, and forget it: a run of millions of jobs then holds only those not yet
    /// ended and the ones after them. A released job's id is not asked for again.
    pub fn release_ended(&mut self, mut each: impl FnMut(JobId, &JobRecord)) {
        while let Some(front) = self.jobs.front() {
            if front.ended.is_none() {
                break;
            }
            each(JobId(self.released), front);
            if let Some(mut job) = self.jobs.pop_front() {
                // Short lists only: a long one is rare, and kept it would hold its memory.
                if self.spare_steps.len() < MAX_SPARE_STEP_LISTS
                    && job.steps.capacity() <= MAX_SPARE_STEPS
                {
                    job.steps.clear();
                    self.spare_steps.push(job.steps);
                }
            }
            self.released += 1;
        }
    }

    /// CPU time `thread` received so far, ns.
    pub fn cpu_time_ns(&self, thread: ThreadId) -> f64 {
        self.cpus.cpu_time(thread.0)
    }

    pub fn cpus(&self) -> &Cpus {
        &self.cpus
    }

    pub fn device(&self, device: usize) -> &DeviceQueue {
        &self.devices[device]
    }

    /// What `/proc/pressure/memory` or `io` would show for `group` now.
    pub fn pressure(&mut self, group: usize, pressure: Pressure) -> PressureLine {
        self.psi.read(group, pressure, self.now)
    }

    /// Run every thread up to `until`.
    pub fn run_until(&mut self, until: Ns) -> Result<()> {
        self.run(until)?;
        self.cpus.advance(until.max(self.now));
        self.now = until.max(self.now);
        Ok(())
    }

    /// Run until every job has ended and the pressure averaging has stopped; the clock
    /// stays at the last thing that happened.
    pub fn run_to_end(&mut self) -> Result<()> {
        self.run(Ns::MAX)
    }

    fn run(&mut self, until: Ns) -> Result<()> {
        loop {
            let cpu_next = self.cpus.next_completion();
            let timer_next = self.next_timer().map(|(t, _, _)| t);
            let psi_next = self.psi.next_worker();
            let next = earliest(earliest(cpu_next.map(|c| c.0), timer_next), psi_next);
            let Some(next) = next.filter(|&t| t <= until) else {
                break;
            };
            self.cpus.advance(next);
            self.now = next;
            let mut completed = false;
            if let Some((at, first)) = cpu_next {
                if at == next {
                    completed = true;
                    self.cpus.finish(first);
                    let mut done = std::mem::take(&mut self.done);
                    done.clear();
                    done.push(first);
                    self.cpus.take_done(&mut done);
                    for d in &done {
                        self.next_step(ThreadId(d.thread))?;
                    }
                    self.done = done;
                }
            }
            while let Some(first) = self.next_timer() {
                let (t, _, timer) = first;
                if t != next {
                    break;
                }
                self.pop_timer(first);
                match timer {
                    Timer::Arrive(job) => {
                        let thread = self.job(job).thread;
                        let th = &mut self.threads[thread.0 as usize];
                        th.pending.push_back(job);
                        if th.current.is_none() {
                            self.next_step(thread)?;
                        }
                    }
                    Timer::Resume(thread) => self.next_step(thread)?,
                }
            }
            if completed {
                self.balance_idle();
            }
            let psi_due = self.recorder.is_some() && self.psi.worker_due(SYSTEM_GROUP, next);
            self.psi.run_workers(next);
            if psi_due {
                self.record_psi();
            }
        }
        Ok(())
    }

    /// The machine's pressure as its averaging worker just left it, into the recording.
    fn record_psi(&mut self) {
        let point = PsiPoint {
            at: self.now,
            mem_some_total_ns: self.psi.total_ns(SYSTEM_GROUP, Pressure::MemSome),
            mem_full_total_ns: self.psi.total_ns(SYSTEM_GROUP, Pressure::MemFull),
            io_some_total_ns: self.psi.total_ns(SYSTEM_GROUP, Pressure::IoSome),
            mem_some_avg10: self.psi.avg10(SYSTEM_GROUP, Pressure::MemSome),
        };
        if let Some(r) = &mut self.recorder {
            r.done.psi.push(point);
        }
    }

    /// Move `thread` to its next step (its current one is over, or it was idle).
    fn next_step(&mut self, thread: ThreadId) -> Result<()> {
        if let Some(r) = &mut self.recorder {
            r.end(thread, self.now, self.cpus.cpu_time(thread.0));
        }
        if let Some(job) = self.threads[thread.0 as usize].current {
            let began = self.cpus.work_began(thread.0);
            let record = self.job_mut(job);
            let ended_cpu = record
                .next_step
                .checked_sub(1)
                .and_then(|k| record.steps.get(k))
                .is_some_and(|s| matches!(s, Step::Cpu { .. }));
            if ended_cpu && record.on_cpu.is_none() {
                record.on_cpu = Some(began);
            }
        }
        loop {
            let now = self.now;
            let th = &mut self.threads[thread.0 as usize];
            let job = match th.current {
                Some(job) => job,
                None => match th.pending.pop_front() {
                    Some(job) => {
                        th.current = Some(job);
                        self.job_mut(job).started = Some(now);
                        job
                    }
                    None => {
                        self.set_state(thread, None, TaskState::IDLE);
                        return Ok(());
                    }
                },
            };
            let record = self.job_mut(job);
            let Some(&step) = record.steps.get(record.next_step) else {
                record.ended = Some(now);
                self.open_jobs -= 1;
                self.threads[thread.0 as usize].current = None;
                continue;
            };
            record.next_step += 1;
            self.steps_begun += 1;
            match step {
                Step::Cpu { work_ns: 0, .. } | Step::Sleep { ns: 0 } => continue,
                Step::Cpu { work_ns, memstall } => {
                    let th = &self.threads[thread.0 as usize];
                    let cpu = self
                        .cpus
                        .place(thread.0, th.weight, th.spec.cpus, th.cpu)
                        .expect("a thread's CPUs were checked at spawn");
                    let (weight, th_cpus) = (th.weight, th.spec.cpus);
                    self.set_state(
                        thread,
                        Some(cpu),
                        TaskState {
                            running: true,
                            iowait: false,
                            memstall,
                        },
                    );
                    self.cpus.enqueue(cpu, thread.0, weight, work_ns, th_cpus);
                    if let Some(r) = &mut self.recorder {
                        r.begin_cpu(thread, cpu, now, memstall, self.cpus.cpu_time(thread.0));
                    }
                }
                Step::Io {
                    device,
                    service_ns,
                    memstall,
                } => {
                    let served = self.devices[device].submit(now, service_ns)?;
                    self.set_state(
                        thread,
                        None,
                        TaskState {
                            running: false,
                            iowait: true,
                            memstall,
                        },
                    );
                    self.schedule(served.end, Timer::Resume(thread));
                    if let Some(r) = &mut self.recorder {
                        r.begin_io(thread, device, now, memstall);
                    }
                }
                Step::Submit { device, service_ns } => {
                    self.devices[device].submit(now, service_ns)?;
                    continue;
                }
                Step::Sleep { ns } => {
                    self.set_state(thread, None, TaskState::IDLE);
                    self.schedule(now.saturating_add(ns), Timer::Resume(thread));
                }
                Step::SleepTicks { ticks, tick_ns } => {
                    self.set_state(thread, None, TaskState::IDLE);
                    let tick = tick_ns.max(1);
                    let wake = (now / tick)
                        .saturating_add(ticks as u64 + 1)
                        .saturating_mul(tick);
                    self.schedule(wake, Timer::Resume(thread));
                }
            }
            return Ok(());
        }
    }

    /// CPUs that went idle pull threads from shared ones ([`Cpus::balance_idle`]); a
    /// moved thread's pressure and recorded slice follow it.
    fn balance_idle(&mut self) {
        let mut moves = Vec::new();
        self.cpus.balance_idle(&mut moves);
        for (thread, _, to) in moves {
            let id = ThreadId(thread);
            let state = self.threads[thread as usize].state;
            self.set_state(id, Some(to), state);
            if let Some(r) = &mut self.recorder {
                let cpu_time = self.cpus.cpu_time(thread);
                r.end(id, self.now, cpu_time);
                r.begin_cpu(id, to, self.now, state.memstall, cpu_time);
            }
        }
    }

    /// `thread` is now in `state`, on `cpu` if it moves (else where it was).
    fn set_state(&mut self, thread: ThreadId, cpu: Option<usize>, state: TaskState) {
        let now = self.now;
        let th = &mut self.threads[thread.0 as usize];
        let (old_cpu, old) = (th.cpu, th.state);
        let new_cpu = cpu.unwrap_or(old_cpu);
        th.cpu = new_cpu;
        th.state = state;
        let groups = [Some(SYSTEM_GROUP), th.spec.group];
        for g in groups.into_iter().flatten() {
            if new_cpu == old_cpu {
                self.psi.change(g, new_cpu, old, state, now);
            } else {
                self.psi.change(g, old_cpu, old, TaskState::IDLE, now);
                self.psi.change(g, new_cpu, TaskState::IDLE, state, now);
            }
        }
    }
}

/// The earlier of two times, either of which may be absent.
#[inline]
fn earliest(a: Option<Ns>, b: Option<Ns>) -> Option<Ns> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

fn mask_of(cpus: usize) -> u64 {
    if cpus >= 64 {
        u64::MAX
    } else {
        (1u64 << cpus) - 1
    }
}

#[cfg(test)]
mod tests;
