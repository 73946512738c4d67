//! What a trace contains: accesses, footprint, foreground and background shares.
//!
//! Works on any trace, generated or read from a file: a process counts as foreground at an
//! access when its latest importance event says `oom_score_adj` 0, and as background when
//! it has none. Ids beyond the trace's tables (a damaged file) are counted, not rejected.

use std::fmt;

use serde::Serialize;

use super::{Event, EventKind, EventSource, ProcId, Tables, Trace, ADJ_FOREGROUND};

/// Counts of one trace.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct WorkloadSummary {
    /// All events (accesses, importance changes, starts, exits).
    pub events: u64,
    pub accesses: u64,
    pub writes: u64,
    /// `writes / accesses` (0 for a trace without accesses).
    pub write_fraction: f64,
    /// Accesses to anonymous pages.
    pub anon_accesses: u64,
    /// Distinct pages accessed: the footprint.
    pub distinct_pages: u64,
    /// Accesses by a process whose latest `oom_score_adj` is 0.
    pub foreground_accesses: u64,
    pub background_accesses: u64,
    /// `foreground_accesses / background_accesses`; `None` without background accesses.
    pub foreground_to_background: Option<f64>,
    /// Swap events (replayed swap I/O traces).
    pub swap_outs: u64,
    pub swap_ins: u64,
    /// User input events (the interactive task's interactions).
    pub inputs: u64,
    /// Times a process came to the foreground (importance set to 0 from anything else).
    pub foreground_entries: u64,
    /// Time from the first event to the last, in nanoseconds.
    pub duration_ns: u64,
    /// One entry per process of the tables, then any other process id seen, by id.
    pub processes: Vec<ProcessSummary>,
}

/// Counts of one process.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ProcessSummary {
    pub proc: ProcId,
    /// `None` for a process id missing from the trace's tables.
    pub pid: Option<u32>,
    pub name: String,
    pub accesses: u64,
    pub foreground_accesses: u64,
    pub writes: u64,
}

#[derive(Debug, Clone, Copy, Default)]
struct ProcState {
    foreground: bool,
    accesses: u64,
    foreground_accesses: u64,
    writes: u64,
}

/// Counts a trace event by event, in memory that grows with its pages and processes, not
/// its length: `mobmem trace info` streams files of any size through it.
#[derive(Debug, Default)]
pub struct Summarizer {
    summary: WorkloadSummary,
    processes: Vec<ProcState>,
    seen: Vec<bool>,
    first_time: Option<u64>,
    last_time: u64,
}

impl Summarizer {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn add(&mut self, event: &Event) {
        let summary = &mut self.summary;
        summary.events += 1;
        self.first_time.get_or_insert(event.time_ns());
        self.last_time = event.time_ns();
        let proc = event.proc() as usize;
        if proc >= self.processes.len() {
            self.processes.resize(proc + 1, ProcState::default());
        }
        let state = &mut self.processes[proc];
        match event.kind() {
            EventKind::Access => {
                state.accesses += 1;
                summary.accesses += 1;
                if state.foreground {
                    state.foreground_accesses += 1;
                    summary.foreground_accesses += 1;
                }
                if event.is_write() {
                    state.writes += 1;
                    summary.writes += 1;
                }
                if event.is_anon() {
                    summary.anon_accesses += 1;
                }
                let page = event.page() as usize;
                if page >= self.seen.len() {
                    self.seen.resize((page + 1).max(self.seen.len() * 2), false);
                }
                if !std::mem::replace(&mut self.seen[page], true) {
                    summary.distinct_pages += 1;
                }
            }
            EventKind::Importance => {
                let foreground = event.oom_score_adj() == ADJ_FOREGROUND;
                if foreground && !state.foreground {
                    summary.foreground_entries += 1;
                }
                state.foreground = foreground;
            }
            EventKind::Start => {}
            EventKind::Exit => state.foreground = false,
            EventKind::SwapOut => summary.swap_outs += 1,
            EventKind::SwapIn => summary.swap_ins += 1,
            EventKind::Input => summary.inputs += 1,
        }
    }

    /// The summary, with process names from `tables`.
    pub fn finish(mut self, tables: &Tables) -> WorkloadSummary {
        let mut summary = std::mem::take(&mut self.summary);
        summary.background_accesses = summary.accesses - summary.foreground_accesses;
        if summary.accesses > 0 {
            summary.write_fraction = summary.writes as f64 / summary.accesses as f64;
        }
        if summary.background_accesses > 0 {
            summary.foreground_to_background =
                Some(summary.foreground_accesses as f64 / summary.background_accesses as f64);
        }
        summary.duration_ns = self.last_time.saturating_sub(self.first_time.unwrap_or(0));
        let known = tables.processes.len();
        self.processes
            .resize(self.processes.len().max(known), ProcState::default());
        summary.processes = self
            .processes
            .iter()
            .enumerate()
            .filter(|&(i, state)| i < known || state.accesses > 0 || state.foreground)
            .map(|(i, state)| {
                let info = tables.processes.get(i);
                process_summary(
                    i as ProcId,
                    info.map(|p| p.pid),
                    info.map_or("", |p| &p.name),
                    state,
                )
            })
            .collect();
        summary
    }
}

/// Count what `trace` contains.
pub fn summarize(trace: &Trace) -> WorkloadSummary {
    let mut summarizer = Summarizer::new();
    for event in &trace.events {
        summarizer.add(event);
    }
    summarizer.finish(&trace.tables)
}

/// Count what a streamed trace contains.
pub fn summarize_source(source: &mut dyn EventSource) -> crate::Result<WorkloadSummary> {
    let mut summarizer = Summarizer::new();
    let mut batch = Vec::with_capacity(1 << 16);
    while source.read_batch(&mut batch, 1 << 16)? {
        for event in &batch {
            summarizer.add(event);
        }
    }
    Ok(summarizer.finish(&source.tables()?))
}

fn process_summary(
    proc: ProcId,
    pid: Option<u32>,
    name: &str,
    state: &ProcState,
) -> ProcessSummary {
    ProcessSummary {
        proc,
        pid,
        name: name.to_string(),
        accesses: state.accesses,
        foreground_accesses: state.foreground_accesses,
        writes: state.writes,
    }
}

impl fmt::Display for WorkloadSummary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ratio = match self.foreground_to_background {
            Some(r) => format!("{r:.2}:1"),
            None => "no background accesses".to_string(),
        };
        writeln!(f, "events               {}", self.events)?;
        writeln!(f, "accesses             {}", self.accesses)?;
        writeln!(f, "distinct pages       {}", self.distinct_pages)?;
        writeln!(f, "write fraction       {:.3}", self.write_fraction)?;
        writeln!(
            f,
            "anonymous accesses   {} ({:.1}%)",
            self.anon_accesses,
            percent(self.anon_accesses, self.accesses)
        )?;
        writeln!(
            f,
            "foreground:background {} : {} ({ratio})",
            self.foreground_accesses, self.background_accesses
        )?;
        writeln!(f, "foreground entries   {}", self.foreground_entries)?;
        if self.swap_outs + self.swap_ins > 0 {
            writeln!(
                f,
                "swap-outs, swap-ins  {}, {}",
                self.swap_outs, self.swap_ins
            )?;
        }
        if self.inputs > 0 {
            writeln!(f, "input events         {}", self.inputs)?;
        }
        writeln!(
            f,
            "duration             {:.3} s",
            self.duration_ns as f64 / 1e9
        )?;
        writeln!(f, "processes:")?;
        for p in &self.processes {
            let pid = p.pid.map_or_else(|| "?".to_string(), |pid| pid.to_string());
            writeln!(
                f,
                "  {:>5} {:<36} {:>10} accesses, {:>5.1}% foreground, {:>5.1}% writes",
                pid,
                p.name,
                p.accesses,
                percent(p.foreground_accesses, p.accesses),
                percent(p.writes, p.accesses)
            )?;
        }
        Ok(())
    }
}

fn percent(part: u64, whole: u64) -> f64 {
    if whole == 0 {
        0.0
    } else {
        100.0 * part as f64 / whole as f64
    }
}
