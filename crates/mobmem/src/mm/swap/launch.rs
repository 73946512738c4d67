//! App launches and how long they take.
//!
//! A launch is an app's importance becoming 0 (foreground) from anything else. It covers
//! the app's accesses from then until `window_ns` of trace time has passed, the app has
//! made `window_accesses` accesses (when set), the app leaves the foreground or exits, or
//! another app launches, whichever comes first. Its time is:
//! - warm (the app's process survived since its last launch): `warm_base_ns` + the read
//!   cost of every swap-in fault the app takes in the window (NVM read, flash read or zram
//!   decompression);
//! - cold (the app was killed or exited since its last launch) and first (never launched
//!   before): `cold_start_ns` + the same fault reads (normally none: a new process
//!   allocates fresh pages);
//! - with `charge_reclaim_writes`, plus the swap-out writes the app's own faults cause in
//!   the window through direct reclaim.

use serde::Serialize;

use super::config::LaunchModel;
use crate::trace::ProcId;

pub use crate::core::process::LaunchKind;

/// One launch.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LaunchRecord {
    pub proc: ProcId,
    pub start_ns: u64,
    pub kind: LaunchKind,
    /// Swap-in faults the app took during the launch.
    pub faults: u64,
    /// The launch time, ns.
    pub launch_ns: f64,
}

#[derive(Debug, Clone)]
struct Active {
    proc: ProcId,
    start_ns: u64,
    kind: LaunchKind,
    accesses: u64,
    faults: u64,
    charged_ns: f64,
}

/// Follows the launch in progress and records each one as it ends.
#[derive(Debug, Clone)]
pub struct LaunchTracker {
    model: LaunchModel,
    active: Option<Active>,
    records: Vec<LaunchRecord>,
}

impl LaunchTracker {
    pub fn new(model: LaunchModel) -> Self {
        LaunchTracker {
            model,
            active: None,
            records: Vec::new(),
        }
    }

    /// Trace time moved to `now_ns`: end the launch whose window has passed.
    #[inline]
    pub fn advance(&mut self, now_ns: u64) {
        if let Some(active) = &self.active {
            if now_ns >= active.start_ns.saturating_add(self.model.window_ns) {
                self.close();
            }
        }
    }

    /// `proc` moved to the foreground at `now_ns`.
    pub fn begin(&mut self, proc: ProcId, now_ns: u64, kind: LaunchKind) {
        self.close();
        self.active = Some(Active {
            proc,
            start_ns: now_ns,
            kind,
            accesses: 0,
            faults: 0,
            charged_ns: 0.0,
        });
    }

    /// `proc` left the foreground or exited: its launch, if any, is over.
    pub fn end_of(&mut self, proc: ProcId) {
        if self.launching(proc) {
            self.close();
        }
    }

    /// The launch in progress: its process, start and base time (ns).
    pub fn active(&self) -> Option<(ProcId, u64, f64)> {
        self.active.as_ref().map(|a| {
            let base = match a.kind {
                LaunchKind::Warm => self.model.warm_base_ns,
                LaunchKind::Cold | LaunchKind::First => self.model.cold_start_ns,
            };
            (a.proc, a.start_ns, base)
        })
    }

    /// Whether `proc` is launching now.
    #[inline]
    pub fn launching(&self, proc: ProcId) -> bool {
        matches!(&self.active, Some(a) if a.proc == proc)
    }

    /// `proc` took a swap-in fault costing `read_ns`.
    #[inline]
    pub fn fault(&mut self, proc: ProcId, read_ns: f64) {
        if let Some(active) = &mut self.active {
            if active.proc == proc {
                active.faults += 1;
                active.charged_ns += read_ns;
            }
        }
    }

    /// Reclaim writes caused by `proc`'s fault, charged when the model says so.
    #[inline]
    pub fn reclaim_writes(&mut self, proc: ProcId, write_ns: f64) {
        if !self.model.charge_reclaim_writes {
            return;
        }
        if let Some(active) = &mut self.active {
            if active.proc == proc {
                active.charged_ns += write_ns;
            }
        }
    }

    /// `proc` made an access (after its fault, if any, was charged).
    #[inline]
    pub fn access_done(&mut self, proc: ProcId) {
        let Some(active) = &mut self.active else {
            return;
        };
        if active.proc != proc {
            return;
        }
        active.accesses += 1;
        if self
            .model
            .window_accesses
            .is_some_and(|limit| active.accesses >= limit)
        {
            self.close();
        }
    }

    fn close(&mut self) {
        let Some(active) = self.active.take() else {
            return;
        };
        let base = match active.kind {
            LaunchKind::Warm => self.model.warm_base_ns,
            LaunchKind::Cold | LaunchKind::First => self.model.cold_start_ns,
        };
        self.records.push(LaunchRecord {
            proc: active.proc,
            start_ns: active.start_ns,
            kind: active.kind,
            faults: active.faults,
            launch_ns: base + active.charged_ns,
        });
    }

    /// End the launch in progress and return every launch, in order.
    pub fn finish(mut self) -> Vec<LaunchRecord> {
        self.close();
        self.records
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn model() -> LaunchModel {
        LaunchModel {
            window_ns: 100,
            window_accesses: Some(3),
            warm_base_ns: 1000.0,
            cold_start_ns: 5000.0,
            charge_reclaim_writes: false,
        }
    }

    #[test]
    fn a_window_ends_by_time_accesses_or_leaving() {
        let mut t = LaunchTracker::new(model());
        // App 1 launches warm at 0, faults twice (10 + 20 ns), the window ends at 100.
        t.begin(1, 0, LaunchKind::Warm);
        t.fault(1, 10.0);
        t.fault(2, 99.0); // another app: not charged
        t.fault(1, 20.0);
        t.advance(99);
        assert!(t.launching(1));
        t.advance(100);
        assert!(!t.launching(1));
        t.fault(1, 1e6); // after the window: not charged
                         // App 2 launches cold; its third access ends the window.
        t.begin(2, 200, LaunchKind::Cold);
        t.access_done(2);
        t.access_done(2);
        t.fault(2, 7.0);
        t.access_done(2);
        assert!(!t.launching(2));
        // App 3 launches and leaves the foreground at once.
        t.begin(3, 300, LaunchKind::First);
        t.end_of(3);
        let records = t.finish();
        let times: Vec<f64> = records.iter().map(|r| r.launch_ns).collect();
        assert_eq!(times, vec![1030.0, 5007.0, 5000.0]);
        let faults: Vec<u64> = records.iter().map(|r| r.faults).collect();
        assert_eq!(faults, vec![2, 1, 0]);
    }

    #[test]
    fn reclaim_writes_count_only_when_asked() {
        let mut t = LaunchTracker::new(model());
        t.begin(1, 0, LaunchKind::Warm);
        t.reclaim_writes(1, 500.0);
        let mut charged = LaunchTracker::new(LaunchModel {
            charge_reclaim_writes: true,
            ..model()
        });
        charged.begin(1, 0, LaunchKind::Warm);
        charged.reclaim_writes(1, 500.0);
        assert_eq!(t.finish()[0].launch_ns, 1000.0);
        assert_eq!(charged.finish()[0].launch_ns, 1500.0);
    }
}
