//! Processes as memory management sees them: how important each one is.
//!
//! Importance is Android's `oom_score_adj` (-1000..1000, lower is more important; 0 the
//! foreground app), set by the trace's importance events. A process never given one is
//! [`ADJ_UNKNOWN`]: as unimportant as a process can be.

use crate::trace::{ProcId, ADJ_FOREGROUND, ADJ_UNKNOWN};

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
