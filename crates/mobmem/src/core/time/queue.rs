//! A storage device as a queue: operations are served in the order they arrive, up to
//! `depth` at once, each for its own service time, so that a read issued behind a burst
//! of writes waits for them.
//!
//! Operations must be submitted in the order of their arrival times (the event loop
//! does). Because the queue is first-come first-served, an operation's start and end are
//! known when it arrives: it starts when it arrives or when the earliest of the `depth`
//! servers frees, whichever is later.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use super::sched::Ns;
use crate::{Error, Result};

/// What a device did: operations, the time they spent waiting and in service, and the
/// time the device had at least one operation in service (what its active power is
/// charged for).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct QueueStats {
    pub ops: u64,
    pub wait_ns: u64,
    pub service_ns: u64,
    pub busy_ns: u64,
}

/// One device's queue.
#[derive(Debug, Clone)]
pub struct DeviceQueue {
    name: String,
    /// When each server is free next, earliest on top: which server serves an operation
    /// changes nothing but these times, so they are kept without the servers' numbers.
    free_at: BinaryHeap<Reverse<Ns>>,
    /// The last arrival, to refuse submissions out of order.
    last_arrival: Ns,
    /// The end of the busy time counted so far (starts never go back, so busy time is
    /// the union of [start, end) intervals counted once).
    busy_until: Ns,
    stats: QueueStats,
}

/// When an operation runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Served {
    pub start: Ns,
    pub end: Ns,
}

impl DeviceQueue {
    /// A queue serving up to `depth` operations at once (1..=256).
    pub fn new(name: impl Into<String>, depth: u32) -> Result<Self> {
        let name = name.into();
        if !(1..=256).contains(&depth) {
            return Err(Error::config(
                format!("device {name}"),
                format!("queue depth {depth} is outside 1..=256"),
            ));
        }
        Ok(DeviceQueue {
            name,
            free_at: std::iter::repeat_n(Reverse(0), depth as usize).collect(),
            last_arrival: 0,
            busy_until: 0,
            stats: QueueStats::default(),
        })
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    pub fn stats(&self) -> QueueStats {
        self.stats
    }

    /// An operation of `service_ns` arriving at `arrival`: when it starts and ends. An
    /// arrival before the previous one is an error of the caller.
    pub fn submit(&mut self, arrival: Ns, service_ns: Ns) -> Result<Served> {
        if arrival < self.last_arrival {
            return Err(Error::Invariant(format!(
                "device {}: an operation arrived at {arrival} ns, before the previous one at {} ns",
                self.name, self.last_arrival
            )));
        }
        self.last_arrival = arrival;
        // The server that frees first serves it.
        let mut first = self.free_at.peek_mut().expect("depth is at least 1");
        let start = arrival.max(first.0);
        let end = start.saturating_add(service_ns);
        *first = Reverse(end);
        drop(first);
        self.stats.ops += 1;
        self.stats.wait_ns += start - arrival;
        self.stats.service_ns += service_ns;
        if end > self.busy_until {
            self.stats.busy_ns += end - start.max(self.busy_until);
            self.busy_until = end;
        }
        Ok(Served { start, end })
    }

    /// Operations in service or waiting at `t`.
    pub fn in_flight(&self, t: Ns) -> usize {
        self.free_at.iter().filter(|&&Reverse(f)| f > t).count()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_read_waits_behind_the_writes_ahead_of_it() {
        // Worked by hand: three 1 ms writes at 0, then a 0.1 ms read at 0.5 ms, depth 1.
        let mut q = DeviceQueue::new("flash", 1).unwrap();
        for _ in 0..3 {
            q.submit(0, 1_000_000).unwrap();
        }
        let read = q.submit(500_000, 100_000).unwrap();
        assert_eq!(
            read,
            Served {
                start: 3_000_000,
                end: 3_100_000
            }
        );
        let s = q.stats();
        assert_eq!(s.ops, 4);
        // Writes wait 0, 1 and 2 ms; the read 2.5 ms.
        assert_eq!(s.wait_ns, 1_000_000 + 2_000_000 + 2_500_000);
        assert_eq!(s.busy_ns, 3_100_000);
        assert_eq!(s.service_ns, 3_100_000);
    }

    #[test]
    fn depth_serves_several_at_once_and_busy_time_is_their_union() {
        let mut q = DeviceQueue::new("ufs", 2).unwrap();
        assert_eq!(q.submit(0, 10).unwrap(), Served { start: 0, end: 10 });
        assert_eq!(q.submit(0, 4).unwrap(), Served { start: 0, end: 4 });
        // The second server frees first.
        assert_eq!(q.submit(1, 5).unwrap(), Served { start: 4, end: 9 });
        assert_eq!(q.in_flight(5), 2);
        // Idle from 10 to 20.
        assert_eq!(q.submit(20, 5).unwrap(), Served { start: 20, end: 25 });
        assert_eq!(q.stats().busy_ns, 15);
        assert_eq!(q.stats().wait_ns, 3);
    }

    #[test]
    fn out_of_order_arrivals_and_bad_depths_are_errors() {
        let mut q = DeviceQueue::new("nvm", 1).unwrap();
        q.submit(10, 1).unwrap();
        assert!(q.submit(9, 1).is_err());
        assert!(DeviceQueue::new("x", 0).is_err());
        assert!(DeviceQueue::new("x", 257).is_err());
    }

    /// Property: against a second implementation that simulates the queue one arrival
    /// at a time with an explicit list of operations in service.
    #[test]
    fn matches_a_list_of_operations_in_service() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(11);
        for _ in 0..200 {
            let depth = rng.gen_range(1..4usize);
            let mut q = DeviceQueue::new("d", depth as u32).unwrap();
            let mut t = 0;
            let mut ends: Vec<Ns> = Vec::new();
            for _ in 0..rng.gen_range(1..30) {
                t += rng.gen_range(0..50);
                let service = rng.gen_range(1..100);
                // Reference: the operation starts at the first time at or after its
                // arrival when fewer than `depth` earlier operations are unfinished.
                let mut start = t;
                loop {
                    let busy = ends.iter().filter(|&&e| e > start).count();
                    if busy < depth {
                        break;
                    }
                    start = ends.iter().copied().filter(|&e| e > start).min().unwrap();
                }
                ends.push(start + service);
                let got = q.submit(t, service).unwrap();
                assert_eq!(
                    got,
                    Served {
                        start,
                        end: start + service
                    }
                );
            }
        }
    }
}
