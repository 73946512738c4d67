//! The end of an import: the accesses chosen by their source, the pages of the read
//! batches filled in, page and process ids renumbered in order of appearance, and the
//! report completed.

use super::{AccessSource, FtraceImporter, ImportReport, ImportedProcess, Origin};
use crate::trace::{Event, EventKind, PageId, PageKind, ProcId, ProcessInfo, Trace};

impl FtraceImporter {
    /// The trace and the report. Accesses are chosen by
    /// [`ImportOptions::accesses`](super::ImportOptions::accesses); page ids are renumbered
    /// in order of first appearance among the accesses kept, as every trace reader numbers
    /// them.
    pub fn finish(mut self) -> (Trace, ImportReport) {
        let source = match self.options.accesses {
            AccessSource::Auto if self.read_path_lines > 0 => AccessSource::ReadPath,
            AccessSource::Auto => AccessSource::Added,
            other => other,
        };
        self.report.accesses_from = source.name().to_string();
        let (batch_pages, starts) = self.batch_pages(source);
        let keys = self.interner.tables().pages.clone();
        let mut tables = self.interner.into_tables();
        let mut new_page = vec![PageId::MAX; keys.len()];
        let mut new_proc = vec![ProcId::MAX; self.procs.len()];
        let mut pages = Vec::new();
        let mut kept_procs = Vec::new();
        let mut events = Vec::with_capacity(self.events.len() + batch_pages.len());
        let mut accesses = vec![0u64; self.procs.len()];
        let report = &mut self.report;
        for (event, &origin) in self.events.iter().zip(&self.origins) {
            let keep = match origin {
                Origin::Other => true,
                Origin::ReadPath | Origin::ReadBatch(_) => source == AccessSource::ReadPath,
                Origin::Added => {
                    source == AccessSource::Added
                        || !self
                            .read_path_pages
                            .get(event.page() as usize)
                            .copied()
                            .unwrap_or(false)
                }
            };
            let old_proc = event.proc() as usize;
            if !keep || (self.options.marked_only && self.procs[old_proc].mark.is_none()) {
                continue;
            }
            if new_proc[old_proc] == ProcId::MAX {
                new_proc[old_proc] = kept_procs.len() as ProcId;
                kept_procs.push(old_proc);
            }
            let proc = new_proc[old_proc];
            let time = event.time_ns();
            if let Origin::ReadBatch(i) = origin {
                let i = i as usize;
                for &old in &batch_pages[starts[i]..starts[i + 1]] {
                    let old = old as usize;
                    if new_page[old] == PageId::MAX {
                        new_page[old] = pages.len() as PageId;
                        pages.push(keys[old]);
                    }
                    accesses[old_proc] += 1;
                    events.push(Event::access(time, proc, new_page[old], false, false));
                }
                continue;
            }
            events.push(match event.kind() {
                EventKind::Access => {
                    let old = event.page() as usize;
                    if new_page[old] == PageId::MAX {
                        new_page[old] = pages.len() as PageId;
                        pages.push(keys[old]);
                    }
                    accesses[old_proc] += 1;
                    Event::access(time, proc, new_page[old], event.is_write(), event.is_anon())
                }
                EventKind::Importance => {
                    report.importance_changes += 1;
                    Event::importance(time, proc, event.oom_score_adj())
                }
                EventKind::Start => {
                    report.starts += 1;
                    Event::start(time, proc)
                }
                EventKind::Exit => {
                    report.exits += 1;
                    Event::exit(time, proc)
                }
                // The importer makes no swap events.
                EventKind::Input | EventKind::SwapOut | EventKind::SwapIn => {
                    report.inputs += 1;
                    Event::input(time, proc)
                }
            });
        }
        report.file_accesses = events
            .iter()
            .filter(|e| e.is_access() && !e.is_anon())
            .count() as u64;
        report.anon_accesses = events
            .iter()
            .filter(|e| e.is_access() && e.is_anon())
            .count() as u64;
        tables.pages = pages;
        for (&tgid, &threads) in &self.thread_counts {
            if let Some(&proc) = self.current.get(&tgid) {
                self.procs[proc as usize].threads += threads;
            }
        }
        tables.processes = kept_procs
            .iter()
            .map(|&old| ProcessInfo {
                pid: self.procs[old].tgid,
                name: self.procs[old].name.clone(),
            })
            .collect();
        let report = &mut self.report;
        report.pages = tables.pages.len() as u64;
        report.files = {
            let mut owners: Vec<u64> = tables
                .pages
                .iter()
                .filter(|p| p.kind == PageKind::File)
                .map(|p| p.owner)
                .collect();
            owners.sort_unstable();
            owners.dedup();
            owners.len() as u64
        };
        report.time_span_ns = events.last().map_or(0, |e| e.time_ns());
        report.processes = kept_procs
            .iter()
            .map(|&old| {
                let s = &self.procs[old];
                ImportedProcess {
                    pid: s.tgid,
                    name: s.name.clone(),
                    threads: s.threads,
                    accesses: accesses[old],
                    marked: s.mark,
                }
            })
            .collect();
        (Trace { events, tables }, self.report)
    }
}
