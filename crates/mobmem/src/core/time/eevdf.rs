//! One CPU's run queue shared in slices, as the kernel's fair class does since Linux 6.6:
//! EEVDF, earliest eligible virtual deadline first (`kernel/sched/fair.c`).
//!
//! The fluid ([`super::sched`]) gives every runnable thread its weight's share at every
//! instant. Here one thread runs at a time and the others wait, which is what a touch
//! that wakes beside a busy ksmd sees: it waits for ksmd's slice to end and may lose the
//! CPU again at a tick before its work is done. The rules kept, each as the kernel has it:
//!
//! - **Virtual time.** A thread's `vruntime` grows by its run time times
//!   `1024 / weight` (`calc_delta_fair`). The queue's average `V` is the weighted mean of
//!   its entities' vruntimes (`avg_vruntime`); an entity is *eligible* when its vruntime
//!   is not past `V` (`entity_eligible`: it has not received more than its share).
//! - **Slices and deadlines.** Each entity has a virtual deadline, its vruntime when it
//!   was placed or last renewed plus its slice in virtual time. A running entity's
//!   deadline is renewed when its vruntime reaches it (`update_deadline`), and that is
//!   checked only when the kernel updates the running entity: at a tick (no high-
//!   resolution tick, `HRTICK` is off by default) or when a thread wakes on the CPU.
//! - **The pick** (`__pick_eevdf`): the running entity while it is eligible and protected
//!   (`RUN_TO_PARITY`: its vruntime has not reached the deadline it had when picked, its
//!   `vprot`); else the eligible entity of earliest deadline, the running one only if
//!   strictly earlier than the best other.
//! - **Wake-up.** A waking thread is placed at `V` minus its lag, scaled by the queue's
//!   load as `place_entity` does (`PLACE_LAG`), with a deadline one slice on; it preempts
//!   the running thread if the pick then chooses it (`check_preempt_wakeup_fair`).
//! - **Sleep.** A thread that sleeps while not eligible stays in the queue, delayed, until
//!   the pick reaches it, and is then dequeued with its lag cut to zero (`DELAY_DEQUEUE`,
//!   `DELAY_ZERO`); one that sleeps while eligible leaves with its lag, clamped to
//!   `max(2 slices, 1 tick)` of virtual time (`update_entity_lag`).
//!
//! Left out: group scheduling, the `PREEMPT_SHORT` rule for custom slices (every thread
//! has the base slice), `sched_yield`, and placement of a new task's first deadline
//! (`PLACE_DEADLINE_INITIAL`: every thread here is placed as a waking one).

use super::sched::{Ns, CAPACITY_SCALE};

/// The slice and tick the queue is run with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EevdfParams {
    /// The base slice, ns (`sysctl_sched_base_slice`).
    pub base_slice_ns: Ns,
    /// The tick, ns (`TICK_NSEC`, 10^9 / HZ).
    pub tick_ns: Ns,
}

impl EevdfParams {
    /// The kernel's defaults for `cpus` CPUs and a tick of `hz`: a base slice of 0.75 ms
    /// times `1 + ilog2(min(cpus, 8))` (`normalized_sysctl_sched_base_slice` scaled by
    /// `get_update_sysctl_factor` under the default `SCHED_TUNABLESCALING_LOG`).
    pub fn kernel_default(cpus: usize, hz: u32) -> EevdfParams {
        let factor = 1 + (cpus.clamp(1, 8) as u64).ilog2() as u64;
        EevdfParams {
            base_slice_ns: 750_000 * factor,
            tick_ns: 1_000_000_000 / hz.max(1) as u64,
        }
    }
}

/// Work left below this (ns of the reference core) is done (as the fluid's).
const DONE_EPSILON: f64 = 1e-6;

/// `delta * 1024 / weight`: run time as virtual time (`calc_delta_fair`).
#[inline]
fn virtual_ns(delta: Ns, weight: u32) -> i64 {
    (delta as i128 * CAPACITY_SCALE as i128 / weight.max(1) as i128) as i64
}

/// A thread in the queue.
#[derive(Debug, Clone)]
struct Entity {
    thread: u32,
    weight: u32,
    /// The CPUs it may run on, a bit per CPU.
    allowed: u64,
    /// Work still to do, ns of the reference core.
    remaining: f64,
    vruntime: i64,
    deadline: i64,
    /// Protected from the pick while its vruntime is below this (`vprot`).
    vprot: i64,
    /// Asleep, kept in the queue until the pick reaches it (`sched_delayed`).
    delayed: bool,
    /// Its CPU work ended now: it leaves the queue at the next settling unless the thread
    /// goes on with more work at once (then it never slept).
    stopped: bool,
    /// When its current work first got the CPU.
    first_run: Option<Ns>,
}

/// Where a queue's run time is credited: each thread's CPU time (by thread index) and the
/// CPU's busy time.
pub struct Account<'a> {
    pub cpu_time: &'a mut Vec<f64>,
    pub busy: &'a mut Ns,
}

/// A thread that left a queue for good (slept or moved) and its lag, for the caller to
/// keep until it is placed again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Left {
    pub thread: u32,
    pub lag: i64,
}

/// One CPU's EEVDF run queue.
#[derive(Debug, Clone, Default)]
pub struct RunQueue {
    /// Entities in the order they entered the tree (ties of deadline go to the first).
    entities: Vec<Entity>,
    /// The running entity, an index into `entities`.
    current: Option<usize>,
    /// `V` while the queue is empty: where the next thread is placed.
    idle_v: i64,
    /// The time the queue was run up to.
    now: Ns,
    /// The next tick not yet handled.
    next_tick: Ns,
    /// `next_completion`'s answer, until the queue changes.
    cached: Option<Option<(Ns, u32)>>,
}

impl RunQueue {
    /// Threads that can run (not delayed, not stopped).
    pub fn runnable(&self) -> usize {
        self.entities
            .iter()
            .filter(|e| !e.delayed && !e.stopped)
            .count()
    }

    /// The summed weight of the threads that can run.
    pub fn runnable_weight(&self) -> u64 {
        self.entities
            .iter()
            .filter(|e| !e.delayed && !e.stopped)
            .map(|e| e.weight as u64)
            .sum()
    }

    /// Whether `thread` has an entity here (delayed, stopped or runnable).
    pub fn holds(&self, thread: u32) -> bool {
        self.entities.iter().any(|e| e.thread == thread)
    }

    fn index_of(&self, thread: u32) -> Option<usize> {
        self.entities.iter().position(|e| e.thread == thread)
    }

    /// The queue's vruntimes summed by weight, relative to the first entity's: (that
    /// base, `sum w_j (v_j - base)`, `sum w_j`); what `V` and eligibility come from.
    fn weighted(&self) -> (i128, i128, i128) {
        let base = self.entities.first().map_or(0, |e| e.vruntime as i128);
        let (mut sum, mut load) = (0i128, 0i128);
        for e in &self.entities {
            sum += (e.vruntime as i128 - base) * e.weight as i128;
            load += e.weight as i128;
        }
        (base, sum, load)
    }

    /// `V`: the weighted mean vruntime of the queue, rounded down (`avg_vruntime`).
    fn avg_vruntime(&self) -> i64 {
        if self.entities.is_empty() {
            return self.idle_v;
        }
        let (base, sum, load) = self.weighted();
        (base + sum.div_euclid(load)) as i64
    }

    /// Whether entity `i` has not received more than its share, given the queue's
    /// [`RunQueue::weighted`] sums: `sum w_j (v_j - v_i) >= 0` (`vruntime_eligible`,
    /// exact).
    fn eligible_in(&self, (base, sum, load): (i128, i128, i128), i: usize) -> bool {
        sum >= (self.entities[i].vruntime as i128 - base) * load
    }

    fn eligible(&self, i: usize) -> bool {
        self.eligible_in(self.weighted(), i)
    }

    fn vslice(weight: u32, p: &EevdfParams) -> i64 {
        virtual_ns(p.base_slice_ns, weight)
    }

    /// `__pick_eevdf(cfs_rq, protect)`.
    fn pick(&self, protect: bool) -> Option<usize> {
        if self.entities.is_empty() {
            return None;
        }
        let totals = self.weighted();
        let curr = self
            .current
            .filter(|&c| !self.entities[c].stopped && self.eligible_in(totals, c));
        if let Some(c) = curr {
            let e = &self.entities[c];
            if protect && e.vruntime < e.vprot {
                return Some(c);
            }
        }
        let mut best: Option<usize> = None;
        for i in 0..self.entities.len() {
            if Some(i) == self.current || self.entities[i].stopped || !self.eligible_in(totals, i) {
                continue;
            }
            if best.is_none_or(|b| self.entities[i].deadline < self.entities[b].deadline) {
                best = Some(i);
            }
        }
        if let Some(c) = curr {
            if best.is_none_or(|b| self.entities[c].deadline < self.entities[b].deadline) {
                best = Some(c);
            }
        }
        // No entity eligible cannot happen (the lowest vruntime always is); the earliest
        // deadline then, as the kernel falls back to the leftmost.
        best.or_else(|| {
            (0..self.entities.len())
                .filter(|&i| !self.entities[i].stopped)
                .min_by_key(|&i| self.entities[i].deadline)
        })
    }

    /// Remove entity `i`, keeping `current` pointing at the same entity.
    fn remove(&mut self, i: usize) -> Entity {
        let v = self.avg_vruntime();
        let e = self.entities.remove(i);
        self.current = match self.current {
            Some(c) if c == i => None,
            Some(c) if c > i => Some(c - 1),
            other => other,
        };
        if self.entities.is_empty() {
            self.idle_v = v;
        }
        e
    }

    /// Entity `i`'s lag, `V - v`, clamped to `max(2 slices, 1 tick)` of its virtual time
    /// (`update_entity_lag`).
    fn lag_of(&self, i: usize, p: &EevdfParams) -> i64 {
        let e = &self.entities[i];
        let limit = virtual_ns((2 * p.base_slice_ns).max(p.tick_ns), e.weight);
        (self.avg_vruntime() - e.vruntime).clamp(-limit, limit)
    }

    /// `schedule()`: pick the next entity to run, dequeuing the delayed ones the pick
    /// reaches (`pick_next_entity`); the one picked is protected up to its deadline
    /// (`set_protect_slice`).
    fn schedule(&mut self, left: &mut Vec<Left>) {
        loop {
            let Some(i) = self.pick(true) else {
                self.current = None;
                return;
            };
            if self.entities[i].delayed {
                // Picked only when eligible, so its lag is not negative: DELAY_ZERO.
                let thread = self.entities[i].thread;
                self.remove(i);
                left.push(Left { thread, lag: 0 });
                continue;
            }
            self.current = Some(i);
            let now = self.now;
            let e = &mut self.entities[i];
            e.vprot = e.deadline;
            e.first_run.get_or_insert(now);
            return;
        }
    }

    /// `update_curr` for the running entity at a tick or a wake-up: renew its deadline if
    /// its vruntime reached it; whether the CPU should reschedule.
    fn update_curr(&mut self, p: &EevdfParams) -> bool {
        let Some(c) = self.current else {
            return false;
        };
        let vslice = Self::vslice(self.entities[c].weight, p);
        let e = &mut self.entities[c];
        let mut resched = false;
        if e.vruntime >= e.deadline {
            e.deadline = e.vruntime + vslice;
            resched = true;
        }
        let unprotected = e.vruntime >= e.vprot;
        self.entities.len() > 1 && (resched || unprotected)
    }

    /// Bring the queue to `now` if it was idle (its ticks start again from there).
    fn wake_clock(&mut self, now: Ns, p: &EevdfParams) {
        if self.current.is_none() {
            self.now = self.now.max(now);
            let tick = p.tick_ns.max(1);
            self.next_tick = (self.now / tick + 1) * tick;
        }
    }

    /// `thread` of `weight` with `work` to do enters the queue at `now` (the queue was run
    /// up to `now`): it goes on at once if its last work just ended here; a delayed entity
    /// comes back (`requeue_delayed_entity`); else it is placed with `lag` (the caller's
    /// record of it) and may preempt the running thread.
    #[allow(clippy::too_many_arguments)]
    pub fn enqueue(
        &mut self,
        now: Ns,
        thread: u32,
        weight: u32,
        work: Ns,
        allowed: u64,
        lag: i64,
        p: &EevdfParams,
        left: &mut Vec<Left>,
    ) {
        self.cached = None;
        if let Some(i) = self.index_of(thread) {
            let e = &mut self.entities[i];
            if e.stopped {
                e.stopped = false;
                e.remaining = work as f64;
                e.first_run = Some(now);
                return;
            }
            // Delayed: back in the queue where it was, unless its lag turned positive
            // while it waited, which DELAY_ZERO gives up (placed at V).
            e.delayed = false;
            e.remaining = work as f64;
            e.first_run = None;
            if self.lag_of(i, p) > 0 {
                let e = self.remove(i);
                self.place(e, 0, p);
            }
        } else {
            self.wake_clock(now, p);
            let e = Entity {
                thread,
                weight,
                allowed,
                remaining: work as f64,
                vruntime: 0,
                deadline: 0,
                vprot: 0,
                delayed: false,
                stopped: false,
                first_run: None,
            };
            self.place(e, lag, p);
        }
        let resched = self.update_curr(p);
        let woken = self.index_of(thread);
        if self.current.is_none() || resched || self.pick(true) == woken {
            self.schedule(left);
        }
    }

    /// `place_entity`: at `V - lag`, the lag scaled by `(W + w) / W` with `W` the queue's
    /// load (`PLACE_LAG`; no lag on an empty queue), its deadline one slice on.
    fn place(&mut self, mut e: Entity, lag: i64, p: &EevdfParams) {
        let v = self.avg_vruntime();
        let load: i128 = self.entities.iter().map(|x| x.weight as i128).sum();
        let lag = if load > 0 && lag != 0 {
            (lag as i128 * (load + e.weight as i128) / load) as i64
        } else {
            0
        };
        e.vruntime = v - lag;
        e.deadline = e.vruntime + Self::vslice(e.weight, p);
        self.entities.push(e);
    }

    /// The running thread's work ended now: it stops, and leaves at the next settling
    /// unless it goes on at once. Returns it and when its work first got the CPU.
    pub fn stop_done(&mut self) -> Option<(u32, Ns)> {
        let c = self.current?;
        let now = self.now;
        let e = &mut self.entities[c];
        if e.stopped || e.remaining > DONE_EPSILON {
            return None;
        }
        e.stopped = true;
        self.cached = None;
        Some((e.thread, e.first_run.unwrap_or(now)))
    }

    /// Stop `thread`'s work now, whatever is left of it; when its work first got the CPU.
    pub fn stop(&mut self, thread: u32) -> Option<Ns> {
        let i = self.index_of(thread)?;
        let now = self.now;
        let e = &mut self.entities[i];
        e.stopped = true;
        e.remaining = 0.0;
        self.cached = None;
        Some(e.first_run.unwrap_or(now))
    }

    /// Stopped entities go to sleep (`dequeue_entity` with `DEQUEUE_SLEEP`): one not
    /// eligible stays, delayed; the others leave with their lag; the CPU then picks.
    pub fn settle(&mut self, p: &EevdfParams, left: &mut Vec<Left>) {
        if !self.entities.iter().any(|e| e.stopped) {
            return;
        }
        self.cached = None;
        let mut i = 0;
        while i < self.entities.len() {
            if !self.entities[i].stopped {
                i += 1;
                continue;
            }
            if Some(i) == self.current {
                self.current = None;
            }
            if !self.eligible(i) {
                let e = &mut self.entities[i];
                e.stopped = false;
                e.delayed = true;
                i += 1;
            } else {
                let lag = self.lag_of(i, p);
                let thread = self.entities[i].thread;
                self.remove(i);
                left.push(Left { thread, lag });
            }
        }
        if self.current.is_none() {
            self.schedule(left);
        }
    }

    /// Take `thread` out to run elsewhere (not a sleep): its lag goes with it.
    pub fn migrate_out(
        &mut self,
        thread: u32,
        p: &EevdfParams,
        left: &mut Vec<Left>,
    ) -> Option<(u32, u64, f64, i64)> {
        let i = self.index_of(thread)?;
        self.cached = None;
        let lag = self.lag_of(i, p);
        let e = self.remove(i);
        if self.current.is_none() {
            self.schedule(left);
        }
        Some((e.weight, e.allowed, e.remaining, lag))
    }

    /// Runnable threads that are not running, last entered first, with their weights and
    /// CPUs: what idle balancing may pull.
    pub fn waiting(&self) -> impl Iterator<Item = (u32, u32, u64)> + '_ {
        self.entities
            .iter()
            .enumerate()
            .rev()
            .filter(move |(i, e)| Some(*i) != self.current && !e.delayed && !e.stopped)
            .map(|(_, e)| (e.thread, e.weight, e.allowed))
    }

    /// Run the queue from its time to `to` on a CPU of `capacity`, crediting run time to
    /// `account` (none for a look ahead). With `stop_at_done`, stop at the first end of a
    /// thread's work and return it; else the queue must not pass one (the caller runs up
    /// to the next completion at most).
    pub fn run(
        &mut self,
        to: Ns,
        capacity: u32,
        p: &EevdfParams,
        mut account: Option<Account<'_>>,
        stop_at_done: bool,
        left: &mut Vec<Left>,
    ) -> Option<(Ns, u32)> {
        let tick = p.tick_ns.max(1);
        let scale = capacity as f64 / CAPACITY_SCALE as f64;
        loop {
            let Some(c) = self.current else {
                self.now = self.now.max(to);
                return None;
            };
            if self.entities[c].stopped {
                self.now = self.now.max(to);
                return None;
            }
            while self.next_tick <= self.now {
                self.next_tick += tick;
                if self.update_curr(p) {
                    self.schedule(left);
                }
            }
            let Some(c) = self.current else {
                continue;
            };
            let e = &self.entities[c];
            if e.remaining <= DONE_EPSILON {
                if stop_at_done {
                    return Some((self.now, e.thread));
                }
                // Its end is the caller's to take; nothing else runs meanwhile.
                self.now = self.now.max(to);
                return None;
            }
            let need = (e.remaining / scale).ceil();
            let done_at = if need >= (Ns::MAX - self.now) as f64 {
                Ns::MAX
            } else {
                self.now + need as Ns
            };
            let next = done_at.min(self.next_tick).min(to);
            let dt = next - self.now;
            if dt > 0 {
                let e = &mut self.entities[c];
                e.remaining = if next == done_at {
                    0.0
                } else {
                    e.remaining - dt as f64 * scale
                };
                e.vruntime += virtual_ns(dt, e.weight);
                if let Some(acc) = account.as_mut() {
                    *acc.busy += dt;
                    crate::core::ensure_index(acc.cpu_time, e.thread, 0.0);
                    acc.cpu_time[e.thread as usize] += dt as f64;
                }
                self.now = next;
            }
            if next == done_at {
                if stop_at_done {
                    return Some((next, self.entities[c].thread));
                }
                if next >= to {
                    return None;
                }
            }
            if next >= to && self.next_tick > to {
                return None;
            }
        }
    }

    /// The first end of a thread's work if nothing else changes: the queue run ahead on
    /// a copy (kept until the queue changes).
    pub fn next_completion(&mut self, capacity: u32, p: &EevdfParams) -> Option<(Ns, u32)> {
        if let Some(cached) = self.cached {
            return cached;
        }
        let answer = if self.runnable() == 1 && self.entities.len() == 1 {
            // Alone: the ticks change only its deadline.
            let e = &self.entities[0];
            let scale = capacity as f64 / CAPACITY_SCALE as f64;
            let need = (e.remaining.max(0.0) / scale).ceil();
            let at = if need >= (Ns::MAX - self.now) as f64 {
                Ns::MAX
            } else {
                self.now + need as Ns
            };
            Some((at, e.thread))
        } else {
            let mut ahead = self.clone();
            ahead.run(Ns::MAX, capacity, p, None, true, &mut Vec::new())
        };
        self.cached = Some(answer);
        answer
    }
}
