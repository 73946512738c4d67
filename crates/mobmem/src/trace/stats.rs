//! What a trace holds, computed in one streaming pass (`mobmem trace info`).

use serde::Serialize;

use super::{EventKind, EventSource, ADJ_FOREGROUND, ADJ_UNKNOWN};
use crate::Result;

#[derive(Debug, Clone, Default, Serialize)]
pub struct TraceStats {
    pub events: u64,
    pub accesses: u64,
    pub reads: u64,
    pub writes: u64,
    pub file_accesses: u64,
    pub anon_accesses: u64,
    pub importance_events: u64,
    pub starts: u64,
    pub exits: u64,
    /// Accesses by a process whose latest importance is foreground (`oom_score_adj` 0);
    /// processes with no importance event count as background.
    pub fg_accesses: u64,
    pub bg_accesses: u64,
    pub distinct_pages: u64,
    pub processes: Vec<ProcessStats>,
    pub first_time_ns: u64,
    pub last_time_ns: u64,
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct ProcessStats {
    pub pid: u32,
    pub name: String,
    pub accesses: u64,
    pub fg_accesses: u64,
}

impl TraceStats {
    /// Foreground accesses per background access.
    pub fn fg_bg_ratio(&self) -> f64 {
        if self.bg_accesses == 0 {
            f64::INFINITY
        } else {
            self.fg_accesses as f64 / self.bg_accesses as f64
        }
    }
}

/// Read a whole trace and describe it.
pub fn stats(source: &mut dyn EventSource) -> Result<TraceStats> {
    let mut s = TraceStats::default();
    let mut adj: Vec<i16> = Vec::new();
    let mut per_proc: Vec<(u64, u64)> = Vec::new();
    let mut batch = Vec::with_capacity(1 << 16);
    let mut first = None;
    while source.read_batch(&mut batch, 1 << 16)? {
        for e in &batch {
            s.events += 1;
            first.get_or_insert(e.time_ns());
            s.last_time_ns = s.last_time_ns.max(e.time_ns());
            let proc = e.proc() as usize;
            if proc >= adj.len() {
                adj.resize(proc + 1, ADJ_UNKNOWN);
                per_proc.resize(proc + 1, (0, 0));
            }
            match e.kind() {
                EventKind::Access => {
                    s.accesses += 1;
                    if e.is_write() {
                        s.writes += 1;
                    } else {
                        s.reads += 1;
                    }
                    if e.is_anon() {
                        s.anon_accesses += 1;
                    } else {
                        s.file_accesses += 1;
                    }
                    per_proc[proc].0 += 1;
                    if adj[proc] == ADJ_FOREGROUND {
                        s.fg_accesses += 1;
                        per_proc[proc].1 += 1;
                    } else {
                        s.bg_accesses += 1;
                    }
                }
                EventKind::Importance => {
                    s.importance_events += 1;
                    adj[proc] = e.oom_score_adj();
                }
                EventKind::Start => s.starts += 1,
                EventKind::Exit => s.exits += 1,
            }
        }
    }
    s.first_time_ns = first.unwrap_or(0);
    let tables = source.tables()?;
    s.distinct_pages = tables.pages.len() as u64;
    s.processes = tables
        .processes
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let (accesses, fg) = per_proc.get(i).copied().unwrap_or((0, 0));
            ProcessStats {
                pid: p.pid,
                name: p.name.clone(),
                accesses,
                fg_accesses: fg,
            }
        })
        .collect();
    Ok(s)
}
