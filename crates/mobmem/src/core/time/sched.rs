//! CPUs shared by weight, as the kernel's fair class shares them.
//!
//! Each CPU has a capacity (the kernel's `SCHED_CAPACITY_SCALE` units: 1024 is the
//! reference core, a LITTLE core less) and a run queue. A thread's weight comes from its
//! nice value by the kernel's `sched_prio_to_weight` table (`kernel/sched/core.c`). The
//! run queue is shared as a fluid: while `n` threads are runnable on a CPU of capacity
//! `c`, thread `i` does work at `c / 1024 * w_i / W` (W the sum of their weights), which
//! is the share CFS and EEVDF converge to over a scheduling period. That is the default;
//! with [`Sharing::Eevdf`] each CPU instead runs one thread at a time, in slices picked
//! as the kernel's EEVDF picks them ([`super::eevdf`]), with wake-up preemption. What
//! either leaves out (migration between CPUs while runnable, among others) is listed in
//! docs/time-model.md.
//!
//! Work is measured in nanoseconds of the reference core: a segment of `work` ns takes
//! `work` ns alone on a CPU of capacity 1024, and `work * 1024 / c` alone on one of
//! capacity `c`.

use super::eevdf::{Account, EevdfParams, Left, RunQueue};
use serde::{Deserialize, Serialize};

use crate::{Error, Result};

/// How a CPU is shared among its runnable threads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sharing {
    /// Every runnable thread gets its weight's share at every instant.
    Fluid,
    /// One thread at a time, in slices ended at ticks, picked as the kernel's EEVDF
    /// picks ([`super::eevdf`]).
    Eevdf(EevdfParams),
}

/// How a CPU is shared among the threads runnable on it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum CpuSharing {
    /// Each runnable thread gets its weight's share at every instant.
    #[default]
    Fluid,
    /// One thread at a time, in slices ended at ticks, as the kernel's EEVDF picks
    /// ([`super::eevdf`]), with the kernel's base slice for the CPUs.
    Eevdf,
}

impl CpuSharing {
    pub fn is_fluid(&self) -> bool {
        *self == CpuSharing::Fluid
    }

    /// The timeline's sharing on `cpus` CPUs at a tick of `hz`: EEVDF with the kernel's
    /// base slice for them.
    pub fn on(self, cpus: usize, hz: u32) -> Sharing {
        match self {
            CpuSharing::Fluid => Sharing::Fluid,
            CpuSharing::Eevdf => Sharing::Eevdf(EevdfParams::kernel_default(cpus, hz)),
        }
    }
}

impl Sharing {
    /// The name users write: `fluid` or `eevdf`.
    pub fn name(&self) -> &'static str {
        match self {
            Sharing::Fluid => "fluid",
            Sharing::Eevdf(_) => "eevdf",
        }
    }
}

/// Time on the simulated clock, ns.
pub type Ns = u64;

/// The capacity of the reference core (the kernel's `SCHED_CAPACITY_SCALE`).
pub const CAPACITY_SCALE: u32 = 1024;

/// The weight of a nice-0 thread (`NICE_0_LOAD` without the fixed-point shift).
pub const NICE_0_WEIGHT: u32 = 1024;

/// `sched_prio_to_weight` of `kernel/sched/core.c`: the weight of nice -20 to 19. Each
/// step is about 1.25x, so one nice level is about 10 % of CPU against a nice-0 thread.
pub const NICE_TO_WEIGHT: [u32; 40] = [
    88761, 71755, 56483, 46273, 36291, // -20
    29154, 23254, 18705, 14949, 11916, // -15
    9548, 7620, 6100, 4904, 3906, // -10
    3121, 2501, 1991, 1586, 1277, // -5
    1024, 820, 655, 526, 423, // 0
    335, 272, 215, 172, 137, // 5
    110, 87, 70, 56, 45, // 10
    36, 29, 23, 18, 15, // 15
];

/// The weight of a thread at `nice` (-20..=19).
pub fn weight_of_nice(nice: i32) -> Result<u32> {
    if !(-20..=19).contains(&nice) {
        return Err(Error::config(
            "thread",
            format!("nice {nice} is outside -20..=19"),
        ));
    }
    Ok(NICE_TO_WEIGHT[(nice + 20) as usize])
}

/// Work left below this (ns of the reference core) is done: the fluid's floating point
/// leaves crumbs of 1e-9 ns where an exact sum would reach zero.
const DONE_EPSILON: f64 = 1e-6;

/// One runnable thread on a CPU.
#[derive(Debug, Clone)]
struct Runnable {
    thread: u32,
    weight: u32,
    /// Work still to do, ns of the reference core.
    remaining: f64,
    /// The CPUs it may run on, a bit per CPU.
    allowed: u64,
}

/// One CPU: its capacity, its runnable threads and what it did.
#[derive(Debug, Clone)]
pub struct Cpu {
    capacity: u32,
    /// The fluid's runnable threads and their summed weight.
    runnable: Vec<Runnable>,
    total_weight: u64,
    busy_ns: Ns,
    /// The run queue when the CPU is shared in slices ([`Sharing::Eevdf`]).
    rq: Option<RunQueue>,
}

impl Cpu {
    pub fn capacity(&self) -> u32 {
        self.capacity
    }

    /// Time with at least one runnable thread.
    pub fn busy_ns(&self) -> Ns {
        self.busy_ns
    }

    /// Threads runnable here now.
    pub fn runnable(&self) -> usize {
        match &self.rq {
            Some(rq) => rq.runnable(),
            None => self.runnable.len(),
        }
    }

    /// The summed weight of the threads runnable here now.
    fn load(&self) -> u64 {
        match &self.rq {
            Some(rq) => rq.runnable_weight(),
            None => self.total_weight,
        }
    }

    /// Work per ns of a thread of `weight` on this CPU now.
    #[inline]
    fn rate(&self, weight: u32) -> f64 {
        self.capacity as f64 / CAPACITY_SCALE as f64 * weight as f64 / self.total_weight as f64
    }
}

/// CPUs of one machine: a thread's allowed CPUs are one 64-bit mask
/// ([`ThreadSpec::cpus`](super::ThreadSpec)).
pub const MAX_CPUS: usize = 64;

/// The CPUs of a machine and the time their shares were last brought up to.
#[derive(Debug, Clone)]
pub struct Cpus {
    cpus: Vec<Cpu>,
    now: Ns,
    /// CPU time each thread received, ns of wall time on its CPU (what `/proc/PID/stat`
    /// counts), by thread index.
    cpu_time: Vec<f64>,
    sharing: Sharing,
    /// With [`Sharing::Eevdf`], each thread's lag from when it last left a queue
    /// (`se->vlag`), by thread index.
    lags: Vec<i64>,
    /// Threads that just left a queue, for `lags`.
    left: Vec<Left>,
    /// When each thread's last CPU work first got a CPU, by thread index.
    work_began: Vec<Ns>,
}

/// A thread whose work is done.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Completion {
    pub cpu: usize,
    pub thread: u32,
}

impl Cpus {
    /// CPUs of the given capacities (each 1..=4096; 1024 is the reference core).
    pub fn new(capacities: &[u32]) -> Result<Self> {
        if capacities.is_empty() {
            return Err(Error::config("cpus", "a machine needs at least one CPU"));
        }
        if capacities.len() > MAX_CPUS {
            return Err(Error::config(
                "cpus",
                format!(
                    "{} CPUs: a machine has at most {MAX_CPUS}",
                    capacities.len()
                ),
            ));
        }
        if let Some(c) = capacities
            .iter()
            .find(|&&c| c == 0 || c > 4 * CAPACITY_SCALE)
        {
            return Err(Error::config(
                "cpus",
                format!("capacity {c} is outside 1..=4096 (1024 is the reference core)"),
            ));
        }
        Ok(Cpus {
            cpus: capacities
                .iter()
                .map(|&capacity| Cpu {
                    capacity,
                    runnable: Vec::new(),
                    total_weight: 0,
                    busy_ns: 0,
                    rq: None,
                })
                .collect(),
            now: 0,
            cpu_time: Vec::new(),
            sharing: Sharing::Fluid,
            lags: Vec::new(),
            left: Vec::new(),
            work_began: Vec::new(),
        })
    }

    /// Share the CPUs as `sharing` says; only before any thread was enqueued.
    pub fn set_sharing(&mut self, sharing: Sharing) -> Result<()> {
        if self.cpus.iter().any(|c| c.runnable() > 0) || !self.cpu_time.is_empty() {
            return Err(Error::config(
                "cpus",
                "the sharing of CPUs is set before any thread runs",
            ));
        }
        if let Sharing::Eevdf(p) = sharing {
            if p.tick_ns == 0 || p.base_slice_ns == 0 {
                return Err(Error::config(
                    "cpus",
                    "EEVDF needs a tick and a base slice above 0 ns",
                ));
            }
        }
        self.sharing = sharing;
        for cpu in &mut self.cpus {
            cpu.rq = match sharing {
                Sharing::Fluid => None,
                Sharing::Eevdf(_) => Some(RunQueue::default()),
            };
        }
        Ok(())
    }

    pub fn sharing(&self) -> Sharing {
        self.sharing
    }

    /// Keep the lags of the threads that just left a queue.
    fn keep_lags(&mut self) {
        for l in self.left.drain(..) {
            crate::core::ensure_index(&mut self.lags, l.thread, 0);
            self.lags[l.thread as usize] = l.lag;
        }
    }

    /// Threads whose work ended leave their queues (or stay delayed), and each CPU picks.
    fn settle(&mut self) {
        let Sharing::Eevdf(p) = self.sharing else {
            return;
        };
        for cpu in &mut self.cpus {
            if let Some(rq) = &mut cpu.rq {
                rq.settle(&p, &mut self.left);
            }
        }
        self.keep_lags();
    }

    pub fn len(&self) -> usize {
        self.cpus.len()
    }

    pub fn is_empty(&self) -> bool {
        self.cpus.is_empty()
    }

    pub fn cpu(&self, index: usize) -> &Cpu {
        &self.cpus[index]
    }

    pub fn now(&self) -> Ns {
        self.now
    }

    /// When `thread`'s last CPU work first got a CPU (its enqueue, for the fluid), ns.
    pub fn work_began(&self, thread: u32) -> Ns {
        self.work_began.get(thread as usize).copied().unwrap_or(0)
    }

    /// CPU time `thread` has received so far, ns.
    pub fn cpu_time(&self, thread: u32) -> f64 {
        self.cpu_time.get(thread as usize).copied().unwrap_or(0.0)
    }

    /// Where a thread that wakes now runs, among the CPUs `allowed` (a bit per CPU):
    /// the one whose load per unit of capacity would be lowest with the thread on it;
    /// among equals the CPU it last ran on (`prev`), as `select_task_rq_fair` keeps a
    /// waking task on its previous CPU when no other is idler, else the lowest-numbered.
    /// The fluid does not move a thread while it stays runnable.
    /// With slices, a thread still in a queue (its work just ended, or it sleeps delayed)
    /// wakes there, as `ttwu_runnable` requeues it.
    pub fn place(&self, thread: u32, weight: u32, allowed: u64, prev: usize) -> Option<usize> {
        if let Some(i) = self
            .cpus
            .iter()
            .position(|c| c.rq.as_ref().is_some_and(|rq| rq.holds(thread)))
        {
            return Some(i);
        }
        let mut best: Option<(usize, u128)> = None;
        for (i, cpu) in self.cpus.iter().enumerate() {
            if i >= 64 || allowed & (1u64 << i) == 0 {
                continue;
            }
            // (W + w) / c compared across CPUs by cross-multiplying, without division.
            let load = (cpu.load() + weight as u64) as u128;
            let better = match best {
                None => true,
                Some((b, b_load)) => {
                    let (mine, theirs) = (
                        load * (self.cpus[b].capacity as u128),
                        b_load * (cpu.capacity as u128),
                    );
                    mine < theirs || (mine == theirs && i == prev)
                }
            };
            if better {
                best = Some((i, load));
            }
        }
        best.map(|(i, _)| i)
    }

    /// Put `thread` of `weight`, which may run on the CPUs `allowed`, on `cpu` with
    /// `work` ns of the reference core to do. The caller has brought the shares up to now
    /// ([`Cpus::advance`]).
    pub fn enqueue(&mut self, cpu: usize, thread: u32, weight: u32, work: Ns, allowed: u64) {
        crate::core::ensure_index(&mut self.cpu_time, thread, 0.0);
        crate::core::ensure_index(&mut self.work_began, thread, 0);
        // The fluid runs every runnable thread at once.
        self.work_began[thread as usize] = self.now;
        if let Sharing::Eevdf(p) = self.sharing {
            crate::core::ensure_index(&mut self.lags, thread, 0);
            let lag = self.lags[thread as usize];
            let now = self.now;
            if let Some(rq) = &mut self.cpus[cpu].rq {
                rq.enqueue(now, thread, weight, work, allowed, lag, &p, &mut self.left);
            }
            self.keep_lags();
            return;
        }
        let c = &mut self.cpus[cpu];
        debug_assert!(!c.runnable.iter().any(|r| r.thread == thread));
        c.runnable.push(Runnable {
            thread,
            weight,
            remaining: work as f64,
            allowed,
        });
        c.total_weight += weight as u64;
    }

    /// The earliest time a runnable thread finishes if nothing else changes, with its CPU
    /// and thread (the lowest CPU, then the first enqueued, among equal times).
    pub fn next_completion(&mut self) -> Option<(Ns, Completion)> {
        if let Sharing::Eevdf(p) = self.sharing {
            self.settle();
            let mut best: Option<(Ns, Completion)> = None;
            for (i, cpu) in self.cpus.iter_mut().enumerate() {
                let capacity = cpu.capacity;
                let Some(rq) = &mut cpu.rq else { continue };
                if let Some((at, thread)) = rq.next_completion(capacity, &p) {
                    if best.is_none_or(|(t, _)| at < t) {
                        best = Some((at, Completion { cpu: i, thread }));
                    }
                }
            }
            return best;
        }
        let mut best: Option<(Ns, Completion)> = None;
        for (i, cpu) in self.cpus.iter().enumerate() {
            for r in &cpu.runnable {
                let ns = (r.remaining.max(0.0) / cpu.rate(r.weight)).ceil();
                let at = self.now.saturating_add(if ns >= u64::MAX as f64 {
                    u64::MAX
                } else {
                    ns as u64
                });
                if best.is_none_or(|(t, _)| at < t) {
                    best = Some((
                        at,
                        Completion {
                            cpu: i,
                            thread: r.thread,
                        },
                    ));
                }
            }
        }
        best
    }

    /// Bring every runnable thread's work and CPU time up to `to` (not before now).
    pub fn advance(&mut self, to: Ns) {
        debug_assert!(to >= self.now, "the clock runs forward");
        if let Sharing::Eevdf(p) = self.sharing {
            self.settle();
            for cpu in &mut self.cpus {
                let capacity = cpu.capacity;
                if let Some(rq) = &mut cpu.rq {
                    let account = Account {
                        cpu_time: &mut self.cpu_time,
                        busy: &mut cpu.busy_ns,
                    };
                    rq.run(to, capacity, &p, Some(account), false, &mut self.left);
                }
            }
            self.keep_lags();
            self.now = self.now.max(to);
            return;
        }
        let dt = to.saturating_sub(self.now);
        if dt == 0 {
            return;
        }
        for cpu in &mut self.cpus {
            if cpu.runnable.is_empty() {
                continue;
            }
            cpu.busy_ns += dt;
            let total = cpu.total_weight as f64;
            let scale = cpu.capacity as f64 / CAPACITY_SCALE as f64;
            for r in &mut cpu.runnable {
                let share = dt as f64 * r.weight as f64 / total;
                r.remaining -= share * scale;
                self.cpu_time[r.thread as usize] += share;
            }
        }
        self.now = to;
    }

    /// Threads whose work is done at the current time, in CPU order and then in the order
    /// they were enqueued; they leave their run queues.
    pub fn take_done(&mut self, out: &mut Vec<Completion>) {
        if self.sharing != Sharing::Fluid {
            for (i, cpu) in self.cpus.iter_mut().enumerate() {
                if let Some((thread, began)) = cpu.rq.as_mut().and_then(|rq| rq.stop_done()) {
                    self.work_began[thread as usize] = began;
                    out.push(Completion { cpu: i, thread });
                }
            }
            return;
        }
        for (i, cpu) in self.cpus.iter_mut().enumerate() {
            let mut k = 0;
            while k < cpu.runnable.len() {
                if cpu.runnable[k].remaining <= DONE_EPSILON {
                    let r = cpu.runnable.remove(k);
                    cpu.total_weight -= r.weight as u64;
                    out.push(Completion {
                        cpu: i,
                        thread: r.thread,
                    });
                } else {
                    k += 1;
                }
            }
        }
    }

    /// Idle balancing: every CPU left without a runnable thread pulls one from a CPU
    /// that runs several, as the kernel's `newidle_balance` does when a CPU goes idle,
    /// so that the fluid never keeps two threads on one CPU beside an idle one. A thread
    /// moves only where it may run and where it would run faster alone than it does
    /// now (a LITTLE core does not pull from a shared big one unless that helps); the
    /// most loaded CPU per capacity gives first, its last-enqueued thread that may move.
    /// The caller has brought the shares up to now. Each move is pushed to `moves` as
    /// (thread, from, to).
    pub fn balance_idle(&mut self, moves: &mut Vec<(u32, usize, usize)>) {
        if let Sharing::Eevdf(p) = self.sharing {
            self.settle();
            self.balance_idle_queues(&p, moves);
            return;
        }
        // Most completions leave no CPU with two threads: nothing to pull.
        if !self.cpus.iter().any(|c| c.runnable.len() >= 2) {
            return;
        }
        for to in 0..self.cpus.len() {
            if !self.cpus[to].runnable.is_empty() || to >= 64 {
                continue;
            }
            let bit = 1u64 << to;
            let capacity = self.cpus[to].capacity as f64;
            let mut best: Option<(usize, usize, f64)> = None;
            for (from, cpu) in self.cpus.iter().enumerate() {
                if cpu.runnable.len() < 2 {
                    continue;
                }
                let load = cpu.total_weight as f64 / cpu.capacity as f64;
                if best.is_some_and(|(_, _, l)| load <= l) {
                    continue;
                }
                // Work per ns alone on `to` against its share here.
                let alone = capacity / CAPACITY_SCALE as f64;
                if let Some(k) = cpu
                    .runnable
                    .iter()
                    .rposition(|r| r.allowed & bit != 0 && alone > cpu.rate(r.weight))
                {
                    best = Some((from, k, load));
                }
            }
            if let Some((from, k, _)) = best {
                let r = self.cpus[from].runnable.remove(k);
                self.cpus[from].total_weight -= r.weight as u64;
                self.cpus[to].total_weight += r.weight as u64;
                moves.push((r.thread, from, to));
                self.cpus[to].runnable.push(r);
            }
        }
    }

    /// [`Cpus::balance_idle`] with run queues: an idle CPU pulls a thread waiting on
    /// another (never the one running there), by the same rule as the fluid's.
    fn balance_idle_queues(&mut self, p: &EevdfParams, moves: &mut Vec<(u32, usize, usize)>) {
        if !self.cpus.iter().any(|c| c.runnable() >= 2) {
            return;
        }
        for to in 0..self.cpus.len().min(64) {
            if self.cpus[to].runnable() > 0 {
                continue;
            }
            let bit = 1u64 << to;
            let alone = self.cpus[to].capacity as f64 / CAPACITY_SCALE as f64;
            let mut best: Option<(usize, u32, f64)> = None;
            for (from, cpu) in self.cpus.iter().enumerate() {
                let Some(rq) = &cpu.rq else { continue };
                if rq.runnable() < 2 {
                    continue;
                }
                let total = rq.runnable_weight();
                let load = total as f64 / cpu.capacity as f64;
                if best.is_some_and(|(_, _, l)| load <= l) {
                    continue;
                }
                let share =
                    |w: u32| cpu.capacity as f64 / CAPACITY_SCALE as f64 * w as f64 / total as f64;
                if let Some((thread, _, _)) = rq
                    .waiting()
                    .find(|&(_, w, allowed)| allowed & bit != 0 && alone > share(w))
                {
                    best = Some((from, thread, load));
                }
            }
            let Some((from, thread, _)) = best else {
                continue;
            };
            let now = self.now;
            let taken = self.cpus[from]
                .rq
                .as_mut()
                .and_then(|rq| rq.migrate_out(thread, p, &mut self.left));
            self.keep_lags();
            if let Some((weight, allowed, remaining, lag)) = taken {
                if let Some(rq) = &mut self.cpus[to].rq {
                    rq.enqueue(
                        now,
                        thread,
                        weight,
                        remaining.ceil() as Ns,
                        allowed,
                        lag,
                        p,
                        &mut self.left,
                    );
                }
                self.keep_lags();
                moves.push((thread, from, to));
            }
        }
    }

    /// Force `done` off its CPU now (its completion time has come, whatever crumbs of
    /// floating point are left).
    pub fn finish(&mut self, done: Completion) {
        if let Some(rq) = &mut self.cpus[done.cpu].rq {
            if let Some(began) = rq.stop(done.thread) {
                self.work_began[done.thread as usize] = began;
            }
            return;
        }
        let cpu = &mut self.cpus[done.cpu];
        if let Some(k) = cpu.runnable.iter().position(|r| r.thread == done.thread) {
            let r = cpu.runnable.remove(k);
            cpu.total_weight -= r.weight as u64;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run_all(cpus: &mut Cpus) -> Vec<(Ns, u32)> {
        let mut out = Vec::new();
        let mut done = Vec::new();
        while let Some((at, first)) = cpus.next_completion() {
            cpus.advance(at);
            cpus.finish(first);
            done.clear();
            done.push(first);
            cpus.take_done(&mut done);
            out.extend(done.iter().map(|d| (at, d.thread)));
        }
        out
    }

    #[test]
    fn the_weight_table_is_the_kernels_at_its_landmarks() {
        assert_eq!(weight_of_nice(0).unwrap(), NICE_0_WEIGHT);
        assert_eq!(weight_of_nice(-20).unwrap(), 88761);
        assert_eq!(weight_of_nice(5).unwrap(), 335);
        assert_eq!(weight_of_nice(19).unwrap(), 15);
        assert!(weight_of_nice(20).is_err() && weight_of_nice(-21).is_err());
        // Every step is about 1.25x (1.22 to 1.28 in the table), which is what makes a
        // nice level about 10 % of CPU.
        for w in NICE_TO_WEIGHT.windows(2) {
            let ratio = w[0] as f64 / w[1] as f64;
            assert!((1.2..1.3).contains(&ratio), "{w:?}: {ratio}");
        }
    }

    #[test]
    fn one_thread_alone_takes_its_work_scaled_by_capacity() {
        let mut cpus = Cpus::new(&[1024, 512]).unwrap();
        cpus.enqueue(1, 0, NICE_0_WEIGHT, 1_000_000, 1 << 1);
        assert_eq!(run_all(&mut cpus), vec![(2_000_000, 0)]);
        assert_eq!(cpus.cpu(1).busy_ns(), 2_000_000);
        assert_eq!(cpus.cpu(0).busy_ns(), 0);
        assert!((cpus.cpu_time(0) - 2e6).abs() < 1e-6);
    }

    #[test]
    fn two_equal_threads_share_a_cpu_half_and_half() {
        // 4 ms and 10 ms of work, both nice 0: the short one ends at 8 ms (half the CPU),
        // having left the long one 6 ms of work, done alone by 14 ms.
        let mut cpus = Cpus::new(&[1024]).unwrap();
        cpus.enqueue(0, 0, NICE_0_WEIGHT, 4_000_000, 1 << 0);
        cpus.enqueue(0, 1, NICE_0_WEIGHT, 10_000_000, 1 << 0);
        assert_eq!(run_all(&mut cpus), vec![(8_000_000, 0), (14_000_000, 1)]);
        assert!((cpus.cpu_time(0) - 4e6).abs() < 1e-3);
        assert!((cpus.cpu_time(1) - 10e6).abs() < 1e-3);
    }

    #[test]
    fn nice_5_gets_335_parts_in_1359_beside_nice_0() {
        // ksmd (nice 5) beside an app thread (nice 0), both with long work: over 1.359 s
        // the app thread gets 1.024 s and ksmd 0.335 s.
        let mut cpus = Cpus::new(&[1024]).unwrap();
        cpus.enqueue(0, 0, NICE_0_WEIGHT, 10_000_000_000, 1 << 0);
        cpus.enqueue(0, 1, weight_of_nice(5).unwrap(), 10_000_000_000, 1 << 0);
        cpus.advance(1_359_000_000);
        assert!((cpus.cpu_time(0) - 1_024_000_000.0).abs() < 1.0);
        assert!((cpus.cpu_time(1) - 335_000_000.0).abs() < 1.0);
    }

    #[test]
    fn placement_takes_the_idlest_cpu_per_capacity() {
        let mut cpus = Cpus::new(&[512, 1024]).unwrap();
        // Both idle: the big core, where one more thread is half the load per capacity.
        assert_eq!(cpus.place(9, NICE_0_WEIGHT, 0b11, 0), Some(1));
        cpus.enqueue(1, 0, NICE_0_WEIGHT, 1, 1 << 1);
        // Big with one thread: 2048/1024 = 2 against little 1024/512 = 2: the CPU the
        // thread last ran on, either one.
        assert_eq!(cpus.place(9, NICE_0_WEIGHT, 0b11, 0), Some(0));
        assert_eq!(cpus.place(9, NICE_0_WEIGHT, 0b11, 1), Some(1));
        // Pinned to the big core, it goes there anyway; no allowed CPU, nowhere.
        assert_eq!(cpus.place(9, NICE_0_WEIGHT, 0b10, 0), Some(1));
        assert_eq!(cpus.place(9, NICE_0_WEIGHT, 0b100, 0), None);
    }

    #[test]
    fn bad_capacities_are_refused() {
        assert!(Cpus::new(&[]).is_err());
        assert!(Cpus::new(&[0]).is_err());
        assert!(Cpus::new(&[5000]).is_err());
    }

    /// A second implementation: time-stepped at 1 µs with the same fluid rule, against
    /// the event-driven one, for random thread mixes. The event-driven times must agree
    /// within a step.
    #[test]
    fn event_driven_times_match_a_time_stepped_fluid() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
        for _ in 0..20 {
            let caps: Vec<u32> = (0..rng.gen_range(1..3))
                .map(|_| rng.gen_range(256..=1024))
                .collect();
            let n = rng.gen_range(1..6u32);
            let jobs: Vec<(usize, u32, Ns)> = (0..n)
                .map(|_| {
                    (
                        rng.gen_range(0..caps.len()),
                        NICE_TO_WEIGHT[rng.gen_range(10..30)],
                        rng.gen_range(1..200) * 1000,
                    )
                })
                .collect();
            let mut cpus = Cpus::new(&caps).unwrap();
            for (t, &(cpu, w, work)) in jobs.iter().enumerate() {
                cpus.enqueue(cpu, t as u32, w, work, 1 << cpu);
            }
            let mut fluid = run_all(&mut cpus);
            fluid.sort_by_key(|&(_, t)| t);
            // Stepped: every µs each CPU's runnable share their capacity by weight.
            let mut left: Vec<f64> = jobs.iter().map(|j| j.2 as f64).collect();
            let mut end = vec![0u64; jobs.len()];
            let mut t = 0u64;
            while left.iter().any(|&l| l > 0.0) {
                t += 1000;
                for (c, &cap) in caps.iter().enumerate() {
                    let on: Vec<usize> = (0..jobs.len())
                        .filter(|&k| jobs[k].0 == c && left[k] > 0.0)
                        .collect();
                    let total: f64 = on.iter().map(|&k| jobs[k].1 as f64).sum();
                    for &k in &on {
                        left[k] -= 1000.0 * cap as f64 / 1024.0 * jobs[k].1 as f64 / total;
                        if left[k] <= 1e-6 {
                            end[k] = t;
                        }
                    }
                }
            }
            for (k, &(at, _)) in fluid.iter().enumerate() {
                // The stepped end is the first µs boundary at or after the true end; a
                // thread finishing inside a step hands its rest to the others only at the
                // next boundary, which delays them by under a step per finish before them.
                let slack = 1000 * (jobs.len() as u64 + 1);
                assert!(
                    at <= end[k] + 1 && end[k] + 1 - at <= slack,
                    "thread {k}: event-driven {at}, stepped {}",
                    end[k]
                );
            }
        }
    }
}
