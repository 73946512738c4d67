//! Processes and threads: a process of the trace is a thread group, started at its first
//! sight with the name, importance and mark its fork or the running processes gave it;
//! threads are folded into their group, and marks pin a process's importance.

use super::line::Head;
use super::payload::NewTask;
use super::{FtraceImporter, Origin, ADJ_MARKED_BACKGROUND};
use crate::trace::{Event, ProcId, ADJ_FOREGROUND};

/// The importer's view of one process.
#[derive(Debug, Clone)]
pub(super) struct ProcState {
    pub(super) tgid: u32,
    pub(super) name: String,
    pub(super) mark: Option<i16>,
    pub(super) exited: bool,
    pub(super) threads: u32,
    pub(super) last_input_ns: Option<u64>,
}

/// A process known before its first event: from its fork, or running when the trace
/// began.
#[derive(Debug, Clone, Default)]
pub(super) struct Forked {
    pub(super) name: Option<String>,
    pub(super) adj: Option<i16>,
    pub(super) mark: Option<i16>,
}

impl FtraceImporter {
    /// Process `tgid` was already running, named `name` (empty if unknown) with
    /// `oom_score_adj` `adj`, when the trace began: the process of `tgid` first seen without
    /// a fork in the trace takes this importance (unless a mark pins it) and, where its
    /// lines give none, this name.
    pub fn running_process(&mut self, tgid: u32, name: &str, adj: i16) {
        let name = (!name.is_empty()).then(|| name.to_string());
        let entry = Forked {
            name,
            adj: Some(adj),
            mark: None,
        };
        self.running.insert(tgid, entry);
    }

    /// Process `tgid` was running when the trace began, named `name`, its importance
    /// unknown: as [`FtraceImporter::running_process`] without an `oom_score_adj`.
    pub(crate) fn named_process(&mut self, tgid: u32, name: &str) {
        self.running.insert(
            tgid,
            Forked {
                name: Some(name.to_string()),
                adj: None,
                mark: None,
            },
        );
    }

    /// `task` is a new process (not a thread) started with the parent's mark `mark`:
    /// remembered until its first event makes it a process.
    pub(super) fn forked_process(&mut self, task: &NewTask<&str>, mark: Option<i16>) {
        self.tgid_of.remove(&task.pid);
        let f = self.forked.entry(task.pid).or_default();
        f.name = task.comm.map(str::to_string);
        f.adj = Some(task.adj);
        f.mark = mark;
    }

    /// `pid` is a thread of group `tgid`.
    pub(crate) fn thread_of(&mut self, pid: u32, tgid: u32) {
        if self.tgid_of.insert(pid, tgid) != Some(tgid) {
            self.report.threads += 1;
            *self.thread_counts.entry(tgid).or_default() += 1;
        }
    }

    /// Thread group of `pid` as known so far.
    pub(super) fn tgid(&self, pid: u32) -> u32 {
        self.tgid_of.get(&pid).copied().unwrap_or(pid)
    }

    /// The process running the line's task.
    pub(super) fn context_process(
        &mut self,
        h: &Head,
        time: u64,
    ) -> std::result::Result<ProcId, String> {
        let tgid = h
            .tgid
            .filter(|&t| t != 0)
            .unwrap_or_else(|| self.tgid(h.pid));
        self.process(tgid, h.comm, h.pid == tgid, time)
    }

    /// The current process of `tgid`, started (with a start event) at its first sight.
    pub(super) fn process(
        &mut self,
        tgid: u32,
        comm: Option<&str>,
        leader: bool,
        time: u64,
    ) -> std::result::Result<ProcId, String> {
        let fresh = self.forked.remove(&tgid);
        if let Some(&proc) = self.current.get(&tgid) {
            let state = &self.procs[proc as usize];
            if !state.exited && fresh.is_none() {
                if let Some(comm) = comm {
                    // The kernel's comm is the name cut to 15 bytes: a full name known
                    // from elsewhere (a process tree) is kept.
                    let cut_name = comm.len() == 15 && state.name.starts_with(comm);
                    if leader && state.name != comm && !cut_name {
                        self.rename(proc, comm, time);
                    } else if state.name.is_empty() {
                        self.procs[proc as usize].name = comm.to_string();
                    }
                }
                return Ok(proc);
            }
            if !state.exited {
                // The pid was reused: its old process ended unseen.
                self.procs[proc as usize].exited = true;
                self.push(Event::exit(time, proc), Origin::Other);
            }
        }
        // Only the first process of a pid can be the one that was running.
        let running = self.running.remove(&tgid);
        let fresh = fresh.or(running).unwrap_or_default();
        // The line's comm names a leader, unless it is the known name cut to 15 bytes.
        let known = fresh.name;
        let cut = |c: &str| c.len() == 15 && known.as_deref().is_some_and(|k| k.starts_with(c));
        let name = comm
            .filter(|&c| leader && !cut(c))
            .map(str::to_string)
            .or(known)
            .or(comm.map(str::to_string))
            .unwrap_or_default();
        let proc = self
            .interner
            .start_process(tgid, &name)
            .ok_or_else(|| "more processes than the 2^27 process ids".to_string())?;
        debug_assert_eq!(proc as usize, self.procs.len());
        self.current.insert(tgid, proc);
        let mark = self.user_mark(tgid, &name).or(fresh.mark);
        self.procs.push(ProcState {
            tgid,
            name,
            mark,
            exited: false,
            threads: 0,
            last_input_ns: None,
        });
        self.push(Event::start(time, proc), Origin::Other);
        if let Some(adj) = mark {
            self.push(Event::importance(time, proc, adj), Origin::Other);
        } else if let Some(adj) = fresh.adj {
            self.importance(time, proc, adj);
        }
        Ok(proc)
    }

    fn user_mark(&self, pid: u32, name: &str) -> Option<i16> {
        if self.options.foreground.iter().any(|m| m.matches(pid, name)) {
            Some(ADJ_FOREGROUND)
        } else if self.options.background.iter().any(|m| m.matches(pid, name)) {
            Some(ADJ_MARKED_BACKGROUND)
        } else {
            None
        }
    }

    /// A process takes a new name (exec, prctl); a name mark may now apply.
    pub(super) fn rename(&mut self, proc: ProcId, name: &str, time: u64) {
        let state = &mut self.procs[proc as usize];
        state.name = name.to_string();
        let tgid = state.tgid;
        if self.procs[proc as usize].mark.is_none() {
            if let Some(adj) = self.user_mark(tgid, name) {
                self.procs[proc as usize].mark = Some(adj);
                self.push(Event::importance(time, proc, adj), Origin::Other);
            }
        }
    }

    /// An `oom_score_adj` change, unless a mark pins the process's importance.
    pub(super) fn importance(&mut self, time: u64, proc: ProcId, adj: i16) {
        if self.procs[proc as usize].mark.is_none() {
            self.push(Event::importance(time, proc, adj), Origin::Other);
        }
    }
}
