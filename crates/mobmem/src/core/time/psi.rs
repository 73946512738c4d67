//! Pressure stall information as the kernel computes it (`kernel/sched/psi.c`), for
//! memory and I/O: per group (the whole machine, an app), the time in which some task
//! was stalled and in which all non-idle tasks were, as a running total and as the
//! decaying averages over 10, 60 and 300 s that `/proc/pressure/*` prints.
//!
//! The rules followed, each from psi.c:
//! - a task is counted on the CPU it last ran on, as running, waiting for I/O, stalled
//!   on memory, or stalled on memory while running (reclaiming, decompressing);
//! - per CPU and group: memory SOME while a task is stalled on memory; FULL while every
//!   running task is one stalled on memory (`NR_RUNNING == NR_MEMSTALL_RUNNING`); I/O
//!   SOME while a task waits for I/O, FULL while one does and none runs; NONIDLE while
//!   any of these;
//! - every change of a CPU's counts closes the time in the states it leaves;
//! - an aggregation adds each CPU's state times weighted by its non-idle jiffies, over
//!   the sum of those jiffies, to the group's totals; it runs from a worker armed
//!   `PSI_FREQ` (2 s and a tick) after the first change of an idle group and re-armed
//!   each period while states change; reading the pressure aggregates too;
//! - the averages are fixed point with 11 bits of fraction, decayed every period by
//!   `EXP_10s`, `EXP_60s`, `EXP_300s`, with periods missed while idle filled with zeros.
//!
//! CPU pressure is not kept: the fluid scheduler shares a CPU continuously, so it has no
//! moment in which a runnable task is off the CPU (see docs/time-model.md).

use super::sched::Ns;

/// Fixed point of the averages (`FSHIFT` of `include/linux/sched/loadavg.h`).
const FSHIFT: u32 = 11;
const FIXED_1: u64 = 1 << FSHIFT;
/// `1 / exp(2 s / 10 s)`, `/ 60 s`, `/ 300 s` in that fixed point (psi.c).
const EXP: [u64; 3] = [1677, 1981, 2034];

/// What a task is doing, for pressure.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct TaskState {
    pub running: bool,
    pub iowait: bool,
    pub memstall: bool,
}

impl TaskState {
    pub const IDLE: TaskState = TaskState {
        running: false,
        iowait: false,
        memstall: false,
    };
}

/// Task counts of one group on one CPU (`NR_IOWAIT`, `NR_MEMSTALL`, `NR_RUNNING`,
/// `NR_MEMSTALL_RUNNING`).
#[derive(Debug, Clone, Copy, Default)]
struct Tasks {
    iowait: u32,
    memstall: u32,
    running: u32,
    memstall_running: u32,
}

/// The states a group can be in on a CPU.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pressure {
    IoSome = 0,
    IoFull = 1,
    MemSome = 2,
    MemFull = 3,
}
const NONIDLE: usize = 4;
const STATES: usize = 5;
const PRESSURES: usize = 4;

impl Tasks {
    fn change(&mut self, state: TaskState, sign: i32) {
        let add = |n: &mut u32, on: bool| {
            if on {
                *n = n
                    .checked_add_signed(sign)
                    .expect("a task left a state it was not in");
            }
        };
        add(&mut self.iowait, state.iowait);
        add(&mut self.memstall, state.memstall);
        add(&mut self.running, state.running);
        add(&mut self.memstall_running, state.running && state.memstall);
    }

    /// `test_state` of psi.c.
    fn mask(&self) -> u32 {
        let mut mask = 0;
        if self.iowait > 0 {
            mask |= 1 << Pressure::IoSome as u32;
            if self.running == 0 {
                mask |= 1 << Pressure::IoFull as u32;
            }
        }
        if self.memstall > 0 {
            mask |= 1 << Pressure::MemSome as u32;
            if self.running == self.memstall_running {
                mask |= 1 << Pressure::MemFull as u32;
            }
        }
        if self.iowait > 0 || self.memstall > 0 || self.running > 0 {
            mask |= 1 << NONIDLE;
        }
        mask
    }
}

/// One group on one CPU.
#[derive(Debug, Clone, Default)]
struct GroupCpu {
    tasks: Tasks,
    state_mask: u32,
    state_start: Ns,
    /// Time spent in each state, closed at the last change.
    times: [Ns; STATES],
    /// `times` (with the open state) at the last aggregation.
    times_prev: [Ns; STATES],
}

/// What `/proc/pressure/memory` or `io` prints for one line: averages in percent with
/// two decimals (as printed), and the total in µs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
pub struct PressureLine {
    /// avg10, avg60, avg300 in hundredths of a percent.
    pub avg_centi: [u64; 3],
    pub total_us: u64,
}

impl PressureLine {
    /// avg10, avg60, avg300 in percent.
    pub fn avg(&self) -> [f64; 3] {
        self.avg_centi.map(|a| a as f64 / 100.0)
    }
}

/// One group: its CPUs' states, its totals and averages.
#[derive(Debug, Clone)]
struct Group {
    cpus: Vec<GroupCpu>,
    total: [Ns; PRESSURES],
    avg_total: [Ns; PRESSURES],
    avg: [[u64; 3]; PRESSURES],
    avg_last_update: Ns,
    avg_next_update: Ns,
    /// When the averaging worker runs next, if it is armed.
    worker_at: Option<Ns>,
}

/// Pressure of every group.
#[derive(Debug, Clone)]
pub struct Psi {
    /// Length of a jiffy, ns (1 s / HZ).
    jiffy_ns: Ns,
    /// `PSI_FREQ` in ns: 2 s and one jiffy.
    period_ns: Ns,
    groups: Vec<Group>,
    /// The earliest `worker_at` of the groups: asked after every event of a run, so
    /// kept rather than searched for among the apps' groups.
    earliest_worker: Option<Ns>,
}

impl Psi {
    /// Pressure for `groups` groups on `cpus` CPUs of a kernel ticking at `hz`, from time
    /// `start`.
    pub fn new(groups: usize, cpus: usize, hz: u32, start: Ns) -> Self {
        let jiffy_ns = 1_000_000_000 / hz.max(1) as u64;
        let period_ns = (2 * hz as u64 + 1) * jiffy_ns;
        Psi {
            jiffy_ns,
            period_ns,
            groups: (0..groups)
                .map(|_| Group {
                    cpus: vec![GroupCpu::default(); cpus],
                    total: [0; PRESSURES],
                    avg_total: [0; PRESSURES],
                    avg: [[0; 3]; PRESSURES],
                    avg_last_update: start,
                    avg_next_update: start + period_ns,
                    worker_at: None,
                })
                .collect(),
            earliest_worker: None,
        }
    }

    pub fn period_ns(&self) -> Ns {
        self.period_ns
    }

    /// How many groups there are (the machine's is 0).
    pub fn groups(&self) -> usize {
        self.groups.len()
    }

    /// The earliest time an averaging worker runs, if any is armed.
    pub fn next_worker(&self) -> Option<Ns> {
        self.earliest_worker
    }

    /// A task of `group` on `cpu` goes from state `from` to `to` at `now`.
    pub fn change(&mut self, group: usize, cpu: usize, from: TaskState, to: TaskState, now: Ns) {
        if from == to {
            return;
        }
        let period = self.period_ns;
        let g = &mut self.groups[group];
        let c = &mut g.cpus[cpu];
        close_states(c, now);
        c.tasks.change(from, -1);
        c.tasks.change(to, 1);
        c.state_mask = c.tasks.mask();
        c.state_start = now;
        if g.worker_at.is_none() {
            g.worker_at = Some(now + period);
            self.earliest_worker = self.earliest_worker.min(g.worker_at).or(g.worker_at);
        }
    }

    /// Run every averaging worker due at or before `now` (the caller calls this at
    /// [`Psi::next_worker`] times).
    pub fn run_workers(&mut self, now: Ns) {
        if self.earliest_worker.is_none_or(|t| t > now) {
            return;
        }
        for group in 0..self.groups.len() {
            if self.groups[group].worker_at.is_some_and(|t| t <= now) {
                let changed = self.collect(group, now);
                let (jiffy, period) = (self.jiffy_ns, self.period_ns);
                let g = &mut self.groups[group];
                if now >= g.avg_next_update {
                    g.avg_next_update = update_averages(g, now, period);
                }
                g.worker_at = (changed & (1 << NONIDLE) != 0).then(|| {
                    // `nsecs_to_jiffies(avg_next_update - now) + 1` jiffies later.
                    let jiffies = g.avg_next_update.saturating_sub(now) / jiffy + 1;
                    now + jiffies * jiffy
                });
            }
        }
        self.earliest_worker = self.groups.iter().filter_map(|g| g.worker_at).min();
    }

    /// What `/proc/pressure/memory` (or `io`) shows for `group` at `now`: reading
    /// aggregates, as the kernel's `psi_show` does. `pressure` is `MemSome`/`MemFull`
    /// or `IoSome`/`IoFull`.
    pub fn read(&mut self, group: usize, pressure: Pressure, now: Ns) -> PressureLine {
        self.collect(group, now);
        let period = self.period_ns;
        let g = &mut self.groups[group];
        if now >= g.avg_next_update {
            g.avg_next_update = update_averages(g, now, period);
        }
        let s = pressure as usize;
        PressureLine {
            avg_centi: g.avg[s]
                .map(|a| (a >> FSHIFT) * 100 + (((a & (FIXED_1 - 1)) * 100) >> FSHIFT)),
            total_us: g.total[s] / 1000,
        }
    }

    /// Whether `group`'s averaging worker is due at `now` ([`Psi::run_workers`] runs it).
    pub fn worker_due(&self, group: usize, now: Ns) -> bool {
        self.groups[group].worker_at.is_some_and(|t| t <= now)
    }

    /// The 10-second average of `pressure` in `group`, percent, as the averaging worker
    /// last left it (without reading, which would aggregate first).
    pub fn avg10(&self, group: usize, pressure: Pressure) -> f64 {
        let a = self.groups[group].avg[pressure as usize][0];
        a as f64 / FIXED_1 as f64
    }

    /// The total stall time of `group` so far, ns, as aggregated (without reading).
    pub fn total_ns(&self, group: usize, pressure: Pressure) -> Ns {
        self.groups[group].total[pressure as usize]
    }

    /// `collect_percpu_times`: fold each CPU's state times since the last aggregation
    /// into the totals, weighted by non-idle jiffies. Returns the states that changed.
    fn collect(&mut self, group: usize, now: Ns) -> u32 {
        let jiffy = self.jiffy_ns;
        let g = &mut self.groups[group];
        let mut deltas = [0u128; PRESSURES];
        let mut nonidle_total: u128 = 0;
        let mut changed = 0;
        for c in &mut g.cpus {
            let mut times = c.times;
            for (s, t) in times.iter_mut().enumerate() {
                if c.state_mask & (1 << s) != 0 {
                    *t += now - c.state_start;
                }
            }
            let mut delta = [0; STATES];
            for s in 0..STATES {
                delta[s] = times[s] - c.times_prev[s];
                c.times_prev[s] = times[s];
                if delta[s] != 0 {
                    changed |= 1 << s;
                }
            }
            let nonidle = (delta[NONIDLE] / jiffy) as u128;
            nonidle_total += nonidle;
            for s in 0..PRESSURES {
                deltas[s] += delta[s] as u128 * nonidle;
            }
        }
        for (total, delta) in g.total.iter_mut().zip(deltas) {
            *total += (delta / nonidle_total.max(1)) as Ns;
        }
        changed
    }
}

fn close_states(c: &mut GroupCpu, now: Ns) {
    let elapsed = now - c.state_start;
    for s in 0..STATES {
        if c.state_mask & (1 << s) != 0 {
            c.times[s] += elapsed;
        }
    }
}

/// `update_averages` of psi.c: returns the next update's time.
fn update_averages(g: &mut Group, now: Ns, period_ns: Ns) -> Ns {
    let expires = g.avg_next_update;
    let missed = if now - expires >= period_ns {
        (now - expires) / period_ns
    } else {
        0
    };
    let next = expires + (1 + missed) * period_ns;
    let period = now - (g.avg_last_update + missed * period_ns);
    g.avg_last_update = now;
    for s in 0..PRESSURES {
        let sample = (g.total[s] - g.avg_total[s]).min(period);
        g.avg_total[s] += sample;
        calc_avgs(&mut g.avg[s], missed, sample, period);
    }
    next
}

fn calc_avgs(avg: &mut [u64; 3], missed: u64, time: Ns, period: Ns) {
    if missed > 0 {
        for (a, &e) in avg.iter_mut().zip(&EXP) {
            *a = calc_load(*a, fixed_power(e, missed), 0);
        }
    }
    let pct = (time as u128 * 100 / period.max(1) as u128) as u64 * FIXED_1;
    for (a, &e) in avg.iter_mut().zip(&EXP) {
        *a = calc_load(*a, e, pct);
    }
}

/// `calc_load`: `load * exp + active * (1 - exp)`, rounded up while rising.
fn calc_load(load: u64, exp: u64, active: u64) -> u64 {
    let mut new = load * exp + active * (FIXED_1 - exp);
    if active >= load {
        new += FIXED_1 - 1;
    }
    new / FIXED_1
}

/// `fixed_power_int`: `x^n` in the fixed point, rounding each product.
fn fixed_power(mut x: u64, mut n: u64) -> u64 {
    let mut result = FIXED_1;
    let half = 1 << (FSHIFT - 1);
    while n > 0 {
        if n & 1 == 1 {
            result = (result * x + half) >> FSHIFT;
        }
        n >>= 1;
        if n > 0 {
            x = (x * x + half) >> FSHIFT;
        }
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    const HZ: u32 = 250;
    const STALL: TaskState = TaskState {
        running: false,
        iowait: true,
        memstall: true,
    };
    const RUN: TaskState = TaskState {
        running: true,
        iowait: false,
        memstall: false,
    };
    const RECLAIM: TaskState = TaskState {
        running: true,
        iowait: false,
        memstall: true,
    };

    #[test]
    fn the_averages_decay_as_the_kernels_fixed_point_does() {
        // Worked by hand: a full period at 100 % from 0: 100 * 2048 = 204800;
        // avg10 = (204800 * 371 + 2047) / 2048 = 37100 (18.11 %).
        let mut avg = [0; 3];
        calc_avgs(&mut avg, 0, 10, 10);
        assert_eq!(avg[0], 37100);
        // Rising: rounded up.
        assert_eq!(avg[1], (204800u64 * (2048 - 1981)).div_ceil(2048));
        // x^0 is 1.0; x^1 is x; x^2 rounds.
        assert_eq!(fixed_power(1677, 0), 2048);
        assert_eq!(fixed_power(1677, 1), 1677);
        assert_eq!(fixed_power(1677, 2), (1677 * 1677 + 1024) >> 11);
        // A falling average rounds down: 2048 decayed by half with nothing active.
        assert_eq!(calc_load(2048, 1024, 0), 1024);
    }

    #[test]
    fn a_task_stalled_alone_is_some_and_full() {
        // One task, one CPU: stalled on a swap-in for the first second of a period.
        let mut psi = Psi::new(1, 1, HZ, 0);
        psi.change(0, 0, TaskState::IDLE, RUN, 0);
        psi.change(0, 0, RUN, STALL, 0);
        psi.change(0, 0, STALL, RUN, 1_000_000_000);
        let period = psi.period_ns();
        assert_eq!(period, 2_004_000_000);
        assert_eq!(psi.next_worker(), Some(period));
        psi.run_workers(period);
        assert_eq!(psi.total_ns(0, Pressure::MemSome), 1_000_000_000);
        assert_eq!(psi.total_ns(0, Pressure::MemFull), 1_000_000_000);
        assert_eq!(psi.total_ns(0, Pressure::IoFull), 1_000_000_000);
        let line = psi.read(0, Pressure::MemSome, period);
        assert_eq!(line.total_us, 1_000_000);
        // 1 s of 2.004 s: pct = 49; avg10 = (49 * 2048 * 371 + 2047) / 2048 = 18179,
        // printed 8.87.
        assert_eq!(line.avg_centi[0], 887);
    }

    /// The totals (io some, io full, mem some, mem full) after `changes` (cpu, from, to,
    /// time) on `cpus` CPUs, aggregated at the end of the first period.
    fn totals(cpus: usize, changes: &[(usize, TaskState, TaskState, Ns)]) -> [Ns; 4] {
        let mut psi = Psi::new(1, cpus, HZ, 0);
        for &(cpu, from, to, t) in changes {
            psi.change(0, cpu, from, to, t);
        }
        psi.run_workers(psi.period_ns());
        [
            Pressure::IoSome,
            Pressure::IoFull,
            Pressure::MemSome,
            Pressure::MemFull,
        ]
        .map(|p| psi.total_ns(0, p))
    }

    const IDLE: TaskState = TaskState::IDLE;

    #[test]
    fn another_task_running_makes_the_stall_some_but_not_full() {
        let t = totals(
            1,
            &[
                (0, IDLE, RUN, 0),
                (0, IDLE, STALL, 0),
                (0, STALL, IDLE, 500_000_000),
            ],
        );
        assert_eq!(t, [500_000_000, 0, 500_000_000, 0]);
    }

    #[test]
    fn reclaiming_while_running_is_full_when_it_is_all_that_runs() {
        // A task in direct reclaim (running and stalled): full, since every running task
        // is stalled; a second running task makes it some only.
        let t = totals(
            1,
            &[
                (0, IDLE, RECLAIM, 0),
                (0, IDLE, RUN, 300_000_000),
                (0, RUN, IDLE, 400_000_000),
                (0, RECLAIM, IDLE, 1_000_000_000),
            ],
        );
        assert_eq!(t, [0, 0, 1_000_000_000, 900_000_000]);
    }

    #[test]
    fn cpus_are_weighted_by_their_non_idle_time() {
        // CPU 0 non-idle for 1 s with a stall of 1 s; CPU 1 non-idle for 1 s without
        // stall: total = (1 s * 250 + 0 * 250) / 500 = 0.5 s.
        let t = totals(
            2,
            &[
                (0, IDLE, STALL, 0),
                (0, STALL, IDLE, 1_000_000_000),
                (1, IDLE, RUN, 0),
                (1, RUN, IDLE, 1_000_000_000),
            ],
        );
        assert_eq!(t[2], 500_000_000);
    }

    #[test]
    fn the_worker_stops_when_idle_and_missed_periods_decay_to_zero() {
        let mut psi = Psi::new(1, 1, HZ, 0);
        psi.change(0, 0, TaskState::IDLE, STALL, 0);
        psi.change(0, 0, STALL, TaskState::IDLE, 2_000_000_000);
        let p = psi.period_ns();
        psi.run_workers(p);
        let first = psi.read(0, Pressure::MemSome, p);
        assert!(first.avg_centi[0] > 0);
        // Re-armed once (the states changed), then it finds nothing and stops.
        let next = psi.next_worker().unwrap();
        psi.run_workers(next);
        assert_eq!(psi.next_worker(), None);
        // A minute later, a read folds the missed periods in as zeros.
        let later = psi.read(0, Pressure::MemSome, 60 * 1_000_000_000);
        assert!(later.avg_centi[0] < first.avg_centi[0] / 100, "{later:?}");
        assert!(later.avg_centi[2] > 0 && later.avg_centi[2] < first.avg_centi[2]);
        assert_eq!(later.total_us, first.total_us);
    }

    /// Property: over random task histories on one CPU, the total memory SOME time equals
    /// the measure of the union of stall intervals, computed independently.
    #[test]
    fn some_time_is_the_union_of_stall_intervals() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(3);
        for _ in 0..100 {
            let mut psi = Psi::new(1, 1, HZ, 0);
            let mut intervals = Vec::new();
            // Each task: stalled over [a, b), in order of changes sorted by time.
            let mut changes = Vec::new();
            for _ in 0..rng.gen_range(1..5) {
                let a = rng.gen_range(0..1_000_000_000u64);
                // At least a jiffy of non-idle time, or the CPU's weight would be zero.
                let b = a + rng.gen_range(10_000_000..500_000_000u64);
                intervals.push((a, b));
                changes.push((a, true));
                changes.push((b, false));
            }
            changes.sort();
            for &(t, on) in &changes {
                let (from, to) = if on {
                    (TaskState::IDLE, STALL)
                } else {
                    (STALL, TaskState::IDLE)
                };
                psi.change(0, 0, from, to, t);
            }
            // The worker runs a period after the first change, after every stall ended.
            psi.run_workers(psi.next_worker().unwrap());
            intervals.sort();
            let mut union = 0;
            let mut end = 0;
            for (a, b) in intervals {
                if b > end {
                    union += b - a.max(end);
                    end = b;
                }
            }
            assert_eq!(psi.total_ns(0, Pressure::MemSome), union);
        }
    }
}
