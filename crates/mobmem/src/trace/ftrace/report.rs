//! What an import found: the counts of lines and events, the lines skipped and why, and
//! the processes of the trace, printed for a person by [`std::fmt::Display`].

use std::collections::BTreeMap;

use serde::Serialize;

use crate::trace::ADJ_FOREGROUND;

/// Line numbers kept per skip reason.
const FIRST_LINES_KEPT: usize = 5;

/// Distinct reasons kept in [`ImportReport::skipped`]: a reason says what was wrong with
/// a line, values included, so a hostile input can make every line's differ. Lines of
/// reasons past it are counted under [`OTHER_REASONS`].
pub const MAX_SKIP_REASONS: usize = 1 << 10;

/// Distinct event names counted in [`ImportReport::used`] and [`ImportReport::ignored`]
/// each: a kernel has about two thousand events. Events of names past it are counted
/// under [`OTHER_EVENTS`].
pub const MAX_EVENT_NAMES: usize = 1 << 12;

pub const OTHER_REASONS: &str = "(more kinds of lines than the report lists)";
pub const OTHER_EVENTS: &str = "(more event names than the report lists)";

/// Lines skipped for one reason.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Skipped {
    pub lines: u64,
    /// The first few line numbers (1-based).
    pub first_lines: Vec<u64>,
}

/// One process of the imported trace.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ImportedProcess {
    pub pid: u32,
    pub name: String,
    pub threads: u32,
    pub accesses: u64,
    /// Importance pinned by a `--foreground`/`--background` mark.
    pub marked: Option<i16>,
}

/// What an import found.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ImportReport {
    pub lines: u64,
    /// Lines used, by ftrace event name.
    pub used: BTreeMap<String, u64>,
    /// Event lines of events the trace model does not use, by name.
    pub ignored: BTreeMap<String, u64>,
    /// Lines that are not events, or malformed, by reason.
    pub skipped: BTreeMap<String, Skipped>,
    /// Events the kernel dropped (`CPU:N [LOST M EVENTS]`).
    pub lost_events: u64,
    /// Which events made the accesses (`added` or `read-path`).
    pub accesses_from: String,
    pub file_accesses: u64,
    pub anon_accesses: u64,
    pub importance_changes: u64,
    pub starts: u64,
    pub exits: u64,
    pub inputs: u64,
    /// Pages the kernel added to and deleted from the page cache (its misses and
    /// evictions, for comparison with a simulation).
    pub pages_added: u64,
    pub pages_deleted: u64,
    /// `nr_reclaimed` summed over `mm_vmscan_lru_shrink_inactive`.
    pub pages_reclaimed: u64,
    /// `read()` calls rebuilt from `mm_filemap_get_pages` events (each one or more
    /// events, one per batch of folios).
    pub reads: u64,
    /// Pages that reads asked for past the highest page their file is known to have,
    /// not counted as accesses (a read reaching past the end of its file).
    pub read_pages_past_known_end: u64,
    /// Distinct pages and files of the trace.
    pub pages: u64,
    pub files: u64,
    /// Threads folded into their process.
    pub threads: u64,
    /// Times earlier than the previous event's (merged per-CPU streams), moved up to it.
    pub reordered_times: u64,
    pub time_span_ns: u64,
    pub processes: Vec<ImportedProcess>,
    /// For a Perfetto protobuf trace: what its packets held.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub perfetto: Option<crate::trace::perfetto::PerfettoStats>,
}

impl ImportReport {
    pub(super) fn skip(&mut self, reason: &str, line: u64) {
        self.skip_lines(reason, line, 1);
    }

    /// `n` lines skipped for `reason`, from line `first` on.
    pub(super) fn skip_lines(&mut self, reason: &str, first: u64, n: u64) {
        let reason = if self.skipped.len() < MAX_SKIP_REASONS || self.skipped.contains_key(reason) {
            reason
        } else {
            OTHER_REASONS
        };
        if !self.skipped.contains_key(reason) {
            self.skipped.insert(reason.to_string(), Skipped::default());
        }
        let Some(entry) = self.skipped.get_mut(reason) else {
            return;
        };
        entry.lines += n;
        let room = FIRST_LINES_KEPT.saturating_sub(entry.first_lines.len()) as u64;
        entry.first_lines.extend(first..first + n.min(room));
    }
}

impl std::fmt::Display for ImportReport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.perfetto {
            None => writeln!(f, "lines                {}", self.lines)?,
            Some(p) => {
                writeln!(
                    f,
                    "perfetto             {} bytes, {} packets ({} used, {} of other kinds), {} ftrace bundles ({} with lost events)",
                    p.bytes, p.packets, p.packets_used, p.packets_other, p.ftrace_bundles, p.bundles_with_lost_events
                )?;
                writeln!(
                    f,
                    "ftrace events        {} ({} of types not decoded), {} compact_sched switches",
                    p.ftrace_events, p.events_not_decoded, p.compact_sched_switches
                )?;
                writeln!(
                    f,
                    "process tree         {} processes, {} threads; {} packages; names from the tree {}, the packages {}, the scheduler {}",
                    p.process_tree_processes,
                    p.process_tree_threads,
                    p.packages,
                    p.named_by_process_tree,
                    p.named_by_packages,
                    p.named_by_sched
                )?;
            }
        }
        writeln!(
            f,
            "time span            {:.3} s",
            self.time_span_ns as f64 / 1e9
        )?;
        writeln!(f, "accesses from        {}", self.accesses_from)?;
        writeln!(
            f,
            "events               {} file accesses, {} anonymous accesses, {} importance changes, {} starts, {} exits, {} inputs",
            self.file_accesses, self.anon_accesses, self.importance_changes, self.starts, self.exits, self.inputs
        )?;
        writeln!(
            f,
            "pages                {} distinct in {} files; in the whole capture the kernel added {}, deleted {}, reclaimed {}",
            self.pages, self.files, self.pages_added, self.pages_deleted, self.pages_reclaimed
        )?;
        if self.reads > 0 {
            writeln!(
                f,
                "reads                {} read() calls from mm_filemap_get_pages; {} pages asked for past the known end of their file left out",
                self.reads, self.read_pages_past_known_end
            )?;
        }
        writeln!(
            f,
            "processes            {} ({} threads folded into them)",
            self.processes.len(),
            self.threads
        )?;
        let mut by_accesses: Vec<&ImportedProcess> = self.processes.iter().collect();
        by_accesses.sort_by(|a, b| b.accesses.cmp(&a.accesses).then(a.pid.cmp(&b.pid)));
        for p in by_accesses.iter().take(10) {
            let mark = match p.marked {
                Some(ADJ_FOREGROUND) => " [foreground]",
                Some(_) => " [background]",
                None => "",
            };
            writeln!(
                f,
                "  {:>7} {:<16} {:>10} accesses{}",
                p.pid, p.name, p.accesses, mark
            )?;
        }
        if self.processes.len() > 10 {
            writeln!(f, "  ... and {} more", self.processes.len() - 10)?;
        }
        let unit = if self.perfetto.is_some() {
            "events"
        } else {
            "lines"
        };
        writeln!(f, "used                 (ftrace event: {unit})")?;
        for (name, n) in &self.used {
            writeln!(f, "  {name:<40} {n}")?;
        }
        if !self.ignored.is_empty() {
            writeln!(f, "ignored events       (not in the trace model)")?;
            for (name, n) in &self.ignored {
                writeln!(f, "  {name:<40} {n}")?;
            }
        }
        if self.lost_events > 0 {
            writeln!(
                f,
                "LOST                 {} events dropped by the kernel (ring buffer full)",
                self.lost_events
            )?;
        }
        if self.reordered_times > 0 {
            writeln!(
                f,
                "reordered times      {} events earlier than the one before",
                self.reordered_times
            )?;
        }
        if !self.skipped.is_empty() {
            writeln!(f, "skipped {unit}")?;
            for (reason, s) in &self.skipped {
                let lines: Vec<String> = s.first_lines.iter().map(|l| l.to_string()).collect();
                writeln!(
                    f,
                    "  {:>8}  {} ({} {}{})",
                    s.lines,
                    reason,
                    match (self.perfetto.is_some(), s.lines == 1) {
                        (false, true) => "line",
                        (false, false) => "lines",
                        (true, true) => "event",
                        (true, false) => "events",
                    },
                    lines.join(", "),
                    if s.lines as usize > s.first_lines.len() {
                        ", ..."
                    } else {
                        ""
                    }
                )?;
            }
        }
        Ok(())
    }
}
