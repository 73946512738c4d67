//! Processes as memory management sees them: how important each one is, when it last
//! ran, the pages it owns, and whether it was launched and died since.
//!
//! Importance is Android's `oom_score_adj` (-1000..1000, lower is more important; 0 the
//! foreground app), set by the trace's importance events. A process never given one is
//! [`ADJ_UNKNOWN`]: as unimportant as a process can be.

use crate::trace::{PageId, ProcId, ADJ_FOREGROUND, ADJ_UNKNOWN};

/// The current `oom_score_adj` of every process, by process id.
#[derive(Debug, Clone, Default)]
pub struct Importance {
    adj: Vec<i16>,
}

impl Importance {
    /// Record `proc`'s new `oom_score_adj`; returns the one it had.
    pub fn set(&mut self, proc: ProcId, oom_score_adj: i16) -> i16 {
        let i = proc as usize;
        if i >= self.adj.len() {
            self.adj.resize(i + 1, ADJ_UNKNOWN);
        }
        std::mem::replace(&mut self.adj[i], oom_score_adj)
    }

    /// `proc`'s `oom_score_adj` ([`ADJ_UNKNOWN`] if never set).
    #[inline]
    pub fn of(&self, proc: ProcId) -> i16 {
        self.adj.get(proc as usize).copied().unwrap_or(ADJ_UNKNOWN)
    }

    /// Whether `proc` is the foreground app now.
    #[inline]
    pub fn is_foreground(&self, proc: ProcId) -> bool {
        self.of(proc) == ADJ_FOREGROUND
    }

    /// Of `candidates` (process, time of last use), the one the low-memory killer and
    /// app-ordered reclaim take first: the least important, and among equals the one
    /// used least recently (the last such candidate if several tie on both).
    pub fn least_important(
        &self,
        candidates: impl Iterator<Item = (ProcId, u64)>,
    ) -> Option<ProcId> {
        candidates
            .max_by(|&(a, a_use), &(b, b_use)| self.of(a).cmp(&self.of(b)).then(b_use.cmp(&a_use)))
            .map(|(proc, _)| proc)
    }
}

/// What state an app is launched from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum LaunchKind {
    /// The app had never been launched: a cold start anywhere.
    First,
    /// Relaunch of an app killed (or exited) since its last launch.
    Cold,
    /// Relaunch of an app whose process survived; its swapped-out pages fault back in.
    Warm,
}

impl LaunchKind {
    /// The launch of an app that was `launched` before, and `died` (killed or exited)
    /// since its last launch.
    pub fn of(launched: bool, died: bool) -> Self {
        match (launched, died) {
            (false, _) => LaunchKind::First,
            (true, true) => LaunchKind::Cold,
            (true, false) => LaunchKind::Warm,
        }
    }
}

/// Every process of a run: its importance, when it last touched memory, the pages it
/// owns (the first to touch a page owns it, until it dies), and its life cycle.
#[derive(Debug, Clone, Default)]
pub struct Processes {
    importance: Importance,
    /// Importance changes so far: a policy that caches an order of processes by
    /// importance knows when to redo it.
    importance_changes: u64,
    /// The time of each process's latest access, in accesses.
    last_use: Vec<u64>,
    uses: u64,
    owned: Vec<Vec<PageId>>,
    launched: Vec<bool>,
    died: Vec<bool>,
}

impl Processes {
    fn ensure(&mut self, proc: ProcId) {
        let n = proc as usize + 1;
        if self.last_use.len() < n {
            self.last_use.resize(n, 0);
            self.owned.resize(n, Vec::new());
            self.launched.resize(n, false);
            self.died.resize(n, false);
        }
    }

    /// Processes known (the largest id seen, plus one).
    pub fn len(&self) -> usize {
        self.last_use.len()
    }

    pub fn is_empty(&self) -> bool {
        self.last_use.is_empty()
    }

    pub fn importance(&self) -> &Importance {
        &self.importance
    }

    /// Importance changes so far.
    pub fn importance_changes(&self) -> u64 {
        self.importance_changes
    }

    /// Record `proc`'s new `oom_score_adj`; returns the one it had.
    pub fn set_importance(&mut self, proc: ProcId, oom_score_adj: i16) -> i16 {
        self.ensure(proc);
        self.importance_changes += 1;
        self.importance.set(proc, oom_score_adj)
    }

    /// `proc`'s `oom_score_adj`.
    #[inline]
    pub fn adj(&self, proc: ProcId) -> i16 {
        self.importance.of(proc)
    }

    /// `proc` touched memory now.
    #[inline]
    pub fn touch(&mut self, proc: ProcId) {
        self.ensure(proc);
        self.uses += 1;
        self.last_use[proc as usize] = self.uses;
    }

    /// When `proc` last touched memory (0: never).
    #[inline]
    pub fn last_use(&self, proc: ProcId) -> u64 {
        self.last_use.get(proc as usize).copied().unwrap_or(0)
    }

    /// `proc` owns `page` from now on (the caller checks that nobody owns it).
    pub fn own(&mut self, proc: ProcId, page: PageId) {
        self.ensure(proc);
        self.owned[proc as usize].push(page);
    }

    /// The pages `proc` owns.
    pub fn owned(&self, proc: ProcId) -> &[PageId] {
        self.owned.get(proc as usize).map_or(&[], Vec::as_slice)
    }

    /// `proc` died (killed, or exited): it owns nothing any more, and its next launch
    /// is cold. Returns the pages it owned.
    pub fn die(&mut self, proc: ProcId) -> Vec<PageId> {
        self.ensure(proc);
        self.died[proc as usize] = true;
        std::mem::take(&mut self.owned[proc as usize])
    }

    /// `proc` comes to the foreground: what kind of launch that is. It counts as
    /// launched and alive from now on.
    pub fn launch(&mut self, proc: ProcId) -> LaunchKind {
        self.ensure(proc);
        let i = proc as usize;
        let kind = LaunchKind::of(self.launched[i], self.died[i]);
        self.launched[i] = true;
        self.died[i] = false;
        kind
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_processes_are_least_important() {
        let mut importance = Importance::default();
        assert_eq!(importance.set(3, ADJ_FOREGROUND), ADJ_UNKNOWN);
        assert!(importance.is_foreground(3));
        assert!(!importance.is_foreground(2));
        assert_eq!(importance.set(3, 900), ADJ_FOREGROUND);
        importance.set(1, 900);
        importance.set(2, 700);
        // 1 and 3 tie at 900: 1 was used longer ago. 5 was never set: unknown wins.
        let pick = |c: &[(ProcId, u64)]| importance.least_important(c.iter().copied());
        assert_eq!(pick(&[(2, 0), (1, 10), (3, 20)]), Some(1));
        assert_eq!(pick(&[(2, 0), (3, 20), (1, 20)]), Some(1));
        assert_eq!(pick(&[(2, 0), (5, 99), (1, 10)]), Some(5));
        assert_eq!(pick(&[]), None);
    }
}
