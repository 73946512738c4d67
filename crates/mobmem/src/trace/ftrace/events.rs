//! What each line does to the import: lines are read, classified and, for an event the
//! trace model uses, turned into trace events by the event's name.

use std::collections::BTreeMap;
use std::io::BufRead;

use super::line::{classify, Head, Line};
use super::payload::{
    adj, begin_marker, filemap_key, filemap_page_range, filemap_pages, kernel_hex, new_task,
    number, text_between, value,
};
use super::reads::mark_page;
use super::{FtraceImporter, Origin, INPUT_GESTURE_GAP_NS, INPUT_MARKERS, PAGE_SIZE};
use crate::trace::shared::{
    line_too_long, read_line, skip_line, LineRead, EXPANSION_ALLOWANCE, EXPANSION_PER_BYTE,
    MAX_LINE_BYTES,
};
use crate::trace::{Event, PageId, PageKey, ProcId};
use crate::{Error, Position, Result};

impl FtraceImporter {
    /// Read every line of `input`. A line is at most
    /// [`MAX_LINE_BYTES`](crate::trace::MAX_LINE_BYTES) long: a longer one is an error,
    /// except in the text of a systrace page before its trace data (scripts, styles),
    /// where it is passed over.
    pub fn read(&mut self, input: &mut dyn BufRead) -> Result<()> {
        let mut buf = Vec::new();
        loop {
            let read = read_line(&mut *input, &mut buf, MAX_LINE_BYTES)
                .map_err(|e| Error::io(&self.name, e))?;
            match read {
                LineRead::End => return Ok(()),
                LineRead::Line => self.push_bytes(&buf)?,
                LineRead::TooLong if self.html == Some(true) && !self.seen_event => {
                    let rest = skip_line(&mut *input).map_err(|e| Error::io(&self.name, e))?;
                    self.line += 1;
                    self.report.lines += 1;
                    self.bytes_read += buf.len() as u64 + rest;
                    self.report
                        .skip("HTML page text (before the trace data)", self.line);
                }
                LineRead::TooLong => {
                    return Err(line_too_long(
                        &self.name,
                        self.line + 1,
                        "ftrace text, lines like `TASK-PID [CPU] FLAGS SECONDS: EVENT: FIELDS`",
                    ))
                }
            }
        }
    }

    /// One line as bytes (task names need not be UTF-8: they are read lossily).
    pub fn push_bytes(&mut self, line: &[u8]) -> Result<()> {
        match std::str::from_utf8(line) {
            Ok(text) => self.push_line(text),
            Err(_) => self.push_line(&String::from_utf8_lossy(line)),
        }
    }

    /// One line of text (with or without its line break).
    pub fn push_line(&mut self, line: &str) -> Result<()> {
        self.line += 1;
        self.report.lines += 1;
        self.bytes_read += line.len() as u64 + u64::from(!line.ends_with('\n'));
        let line = line.trim_end_matches(['\n', '\r']);
        if self.html.is_none() && !line.trim().is_empty() {
            let start = line.trim_start().as_bytes();
            let prefix = &start[..start.len().min(14)];
            self.html = Some(
                prefix.eq_ignore_ascii_case(b"<!doctype html")
                    || prefix.starts_with(b"<html")
                    || prefix.starts_with(b"<HTML"),
            );
        }
        match classify(line, self.options.perfetto) {
            Ok(Line::Blank) => self.report.skip("blank", self.line),
            Ok(Line::Comment) => self.report.skip("comment (# ...)", self.line),
            Ok(Line::Lost(n)) => {
                self.report.lost_events += n;
                self.report
                    .skip("lost-events marker (CPU:N [LOST M EVENTS])", self.line);
            }
            Ok(Line::Markup) => self.report.skip("HTML tag (systrace page)", self.line),
            Ok(Line::Header) if !self.seen_event => self
                .report
                .skip("header (before the first event)", self.line),
            Ok(Line::Other) if !self.seen_event && self.html == Some(true) => self
                .report
                .skip("HTML page text (before the trace data)", self.line),
            // Strict: only the header lines capture tools write may precede the events.
            Ok(Line::Other) if !self.seen_event && !self.options.strict => self
                .report
                .skip("text before the first event (not ftrace)", self.line),
            Ok(Line::Other) if !self.seen_event => self.malformed(
                "text before the first event: expected an event line `TASK-PID [CPU] SECONDS: EVENT: FIELDS` or a header line (# comment, TRACE:, version = N, cpus=N, CPU N is empty)",
            )?,
            Ok(Line::Other | Line::Header) => self.malformed(
                "not an event line: expected `TASK-PID [CPU] SECONDS: EVENT: FIELDS`",
            )?,
            Ok(Line::Event(head)) => {
                self.seen_event = true;
                let excluded = |pid: u32| self.options.exclude_pids.contains(&pid);
                if excluded(head.pid) || head.tgid.is_some_and(excluded) {
                    // A process it starts is not excluded, and its fork is this line.
                    if head.event == "task_newtask" {
                        match new_task(head.payload, self.options.perfetto) {
                            Ok(task) if !task.thread => self.forked_process(&task, None),
                            Ok(_) => {}
                            Err(expected) => {
                                return self.malformed(&format!("task_newtask: {expected}"));
                            }
                        }
                    }
                    self.report
                        .skip("excluded task (the capturing process)", self.line);
                    return Ok(());
                }
                if let Err(expected) = self.event(&head) {
                    // Past a limit of the import: fatal, whether or not malformed lines are.
                    if let Some(message) = self.over_limit.take() {
                        return Err(Error::format(
                            &self.name,
                            Position::Line(self.line),
                            format!("{}: {message}", head.event),
                        ));
                    }
                    self.malformed(&format!("{}: {expected}", head.event))?;
                }
            }
            Err(expected) => {
                self.seen_event = true;
                self.malformed(&expected)?;
            }
        }
        Ok(())
    }

    fn malformed(&mut self, expected: &str) -> Result<()> {
        if self.options.strict {
            return Err(Error::format(
                &self.name,
                Position::Line(self.line),
                expected.to_string(),
            ));
        }
        self.report
            .skip(&format!("malformed: {expected}"), self.line);
        Ok(())
    }

    /// Time of an event relative to the first, never before the previous event.
    fn time(&mut self, ts: u64) -> u64 {
        let first = *self.first_ts.get_or_insert(ts);
        let t = ts.saturating_sub(first);
        if t < self.last_time {
            self.report.reordered_times += 1;
            return self.last_time;
        }
        self.last_time = t;
        t
    }

    fn event(&mut self, h: &Head) -> std::result::Result<(), String> {
        let name = h.event;
        let payload = h.payload;
        if let Some(tgid) = h.tgid {
            if tgid != 0 && tgid != h.pid {
                self.thread_of(h.pid, tgid);
            }
        }
        match name {
            "mm_filemap_add_to_page_cache" | "mm_filemap_delete_from_page_cache" => {
                let (owner, first, count) = filemap_pages(payload)?;
                let added = name == "mm_filemap_add_to_page_cache";
                self.used(name);
                self.file_has(owner, first + count - 1, true);
                if !added {
                    self.report.pages_deleted += count;
                    return Ok(());
                }
                self.report.pages_added += count;
                let time = self.time(h.time_ns);
                let proc = self.context_process(h, time)?;
                self.accesses(time, proc, owner, first, count, Origin::Added)
            }
            "mm_filemap_get_pages" => {
                let (owner, first, last) = filemap_page_range(payload)?;
                self.used(name);
                self.read_path_lines += 1;
                let time = self.time(h.time_ns);
                let proc = self.context_process(h, time)?;
                self.read_batch(h.pid, time, proc, owner, first, last)
            }
            "mm_filemap_map_pages" | "mm_filemap_fault" => {
                let (owner, first, last) = if name == "mm_filemap_fault" {
                    let (owner, index) = filemap_key(payload)?;
                    (owner, index, index)
                } else {
                    filemap_page_range(payload)?
                };
                self.used(name);
                self.read_path_lines += 1;
                // Both stay inside the file: filemap_fault() returns SIGBUS past its end
                // and filemap_map_pages() stops its range at the file's last page.
                self.file_has(owner, last, false);
                let time = self.time(h.time_ns);
                let proc = self.context_process(h, time)?;
                self.accesses(time, proc, owner, first, last - first + 1, Origin::ReadPath)
            }
            "page_fault_user" => {
                let perfetto = self.options.perfetto;
                let address = value(payload, "address").ok_or("expected address=0x...")?;
                let address = kernel_hex(address, perfetto)
                    .ok_or_else(|| format!("address={address}, expected an address"))?;
                let code = value(payload, "error_code").ok_or("expected error_code=0x...")?;
                let code = kernel_hex(code, perfetto)
                    .ok_or_else(|| format!("error_code={code}, expected a number"))?;
                self.used(name);
                let time = self.time(h.time_ns);
                let proc = self.context_process(h, time)?;
                let tgid = self.procs[proc as usize].tgid;
                let page = self.page(PageKey::anon(u64::from(tgid), address / PAGE_SIZE))?;
                self.push(
                    Event::access(time, proc, page, code & 2 != 0, true),
                    Origin::Other,
                );
                Ok(())
            }
            "oom_score_adj_update" => {
                let pid = number(value(payload, "pid"), "pid=PID")?;
                let adj = adj(value(payload, "oom_score_adj"))?;
                let comm = text_between(payload, "comm=", " oom_score_adj=");
                self.used(name);
                let time = self.time(h.time_ns);
                let tgid = self.tgid(pid);
                let proc = self.process(tgid, comm, pid == tgid, time)?;
                self.importance(time, proc, adj);
                Ok(())
            }
            "task_newtask" => {
                let task = new_task(payload, self.options.perfetto)?;
                self.used(name);
                let time = self.time(h.time_ns);
                let parent_proc = self.context_process(h, time)?;
                let parent = self.procs[parent_proc as usize].tgid;
                if task.thread {
                    self.thread_of(task.pid, parent);
                    self.forked.remove(&task.pid);
                } else {
                    let mark = self.procs[parent_proc as usize].mark;
                    self.forked_process(&task, mark);
                }
                Ok(())
            }
            "sched_process_fork" => {
                let child = number(value(payload, "child_pid"), "child_pid=PID")?;
                let child_comm = text_between(payload, "child_comm=", " child_pid=");
                self.used(name);
                let time = self.time(h.time_ns);
                let parent_proc = self.context_process(h, time)?;
                // A thread (known from task_newtask) stays one.
                if self.tgid_of.contains_key(&child) {
                    return Ok(());
                }
                let mark = self.procs[parent_proc as usize].mark;
                let f = self.forked.entry(child).or_default();
                if f.name.is_none() {
                    f.name = child_comm.map(str::to_string);
                }
                f.mark = f.mark.or(mark);
                Ok(())
            }
            "sched_process_exit" => {
                let pid = number(value(payload, "pid"), "pid=PID")?;
                let group_dead = match value(payload, "group_dead") {
                    Some("true") | Some("1") => Some(true),
                    Some("false") | Some("0") => Some(false),
                    Some(other) => {
                        return Err(format!("group_dead={other}, expected true or false"))
                    }
                    None => None,
                };
                self.used(name);
                let time = self.time(h.time_ns);
                let tgid = self.tgid(pid);
                self.tgid_of.remove(&pid);
                self.forked.remove(&pid);
                let whole = group_dead.unwrap_or(pid == tgid);
                if whole {
                    if let Some(&proc) = self.current.get(&tgid) {
                        if !self.procs[proc as usize].exited {
                            self.procs[proc as usize].exited = true;
                            self.push(Event::exit(time, proc), Origin::Other);
                        }
                    }
                }
                Ok(())
            }
            "task_rename" => {
                let pid = number(value(payload, "pid"), "pid=PID")?;
                let new = text_between(payload, "newcomm=", " oom_score_adj=")
                    .ok_or("expected newcomm=NAME")?;
                self.used(name);
                let time = self.time(h.time_ns);
                let tgid = self.tgid(pid);
                if pid == tgid {
                    if let Some(f) = self.forked.get_mut(&pid) {
                        f.name = Some(new.to_string());
                    } else {
                        let proc = self.process(tgid, Some(new), true, time)?;
                        if self.procs[proc as usize].name != new {
                            self.rename(proc, new, time);
                        }
                    }
                }
                Ok(())
            }
            "tracing_mark_write" | "print" => {
                self.time(h.time_ns);
                let Some((pid, slice)) = begin_marker(payload) else {
                    self.ignored("trace markers (not input)");
                    return Ok(());
                };
                if !INPUT_MARKERS.iter().any(|m| slice.starts_with(m)) {
                    self.ignored("trace markers (not input)");
                    return Ok(());
                }
                self.used("tracing_mark_write (input)");
                let time = self.last_time;
                let tgid = self.tgid(pid);
                let proc = self.process(tgid, None, false, time)?;
                let state = &mut self.procs[proc as usize];
                let same_gesture = state
                    .last_input_ns
                    .is_some_and(|last| time.saturating_sub(last) < INPUT_GESTURE_GAP_NS);
                state.last_input_ns = Some(time);
                if !same_gesture {
                    self.push(Event::input(time, proc), Origin::Other);
                }
                Ok(())
            }
            _ if name.starts_with("mm_vmscan_") => {
                if name == "mm_vmscan_lru_shrink_inactive" {
                    if let Some(n) =
                        value(payload, "nr_reclaimed").and_then(|v| v.parse::<u64>().ok())
                    {
                        self.report.pages_reclaimed += n;
                    }
                }
                self.used(name);
                Ok(())
            }
            _ => {
                self.ignored(name);
                Ok(())
            }
        }
    }

    fn used(&mut self, name: &str) {
        count(&mut self.report.used, name);
    }

    fn ignored(&mut self, name: &str) {
        count(&mut self.report.ignored, name);
    }

    pub(super) fn push(&mut self, event: Event, origin: Origin) {
        self.events.push(event);
        self.origins.push(origin);
    }

    fn page(&mut self, key: PageKey) -> std::result::Result<PageId, String> {
        self.page_with_room(key, self.batch_room)
    }

    /// The id of `key`, keeping `room` ids free for the pages read batches may still add
    /// at the end.
    pub(super) fn page_with_room(
        &mut self,
        key: PageKey,
        room: u64,
    ) -> std::result::Result<PageId, String> {
        let ids = self.interner.tables().pages.len() as u64 + room;
        if ids >= u64::from(PageId::MAX) {
            return Err("more distinct pages than the 2^32 - 1 page ids".to_string());
        }
        self.interner
            .page(key)
            .ok_or_else(|| "more distinct pages than the 2^32 - 1 page ids".to_string())
    }

    /// Count `pages` more pages that an event's range adds beyond its first, against the
    /// bound the text read so far allows; past it, the import stops (see
    /// [`FtraceImporter::over_limit`]).
    pub(super) fn expand(&mut self, pages: u64) -> std::result::Result<(), String> {
        let stored = self.stored.of(self.bytes_read);
        self.expansion.take(pages, stored).map_err(|bound| {
            let message = format!(
                "{pages} more pages take the import past {bound} pages added by ranges, \
                     the most its first {stored} bytes (as stored) may add \
                     ({EXPANSION_ALLOWANCE} plus {EXPANSION_PER_BYTE} a byte): expected the \
                     events of a real capture"
            );
            self.over_limit = Some(message.clone());
            message
        })
    }

    fn accesses(
        &mut self,
        time: u64,
        proc: ProcId,
        owner: u64,
        first: u64,
        count: u64,
        origin: Origin,
    ) -> std::result::Result<(), String> {
        self.expand(count.saturating_sub(1))?;
        for index in first..first.saturating_add(count) {
            let page = self.page(PageKey::file(owner, index))?;
            if origin == Origin::ReadPath {
                mark_page(&mut self.read_path_pages, page);
            }
            self.push(Event::access(time, proc, page, false, false), origin);
        }
        Ok(())
    }
}

/// One more line of `name`, allocating its key only the first time.
fn count(map: &mut BTreeMap<String, u64>, name: &str) {
    match map.get_mut(name) {
        Some(n) => *n += 1,
        None => {
            map.insert(name.to_string(), 1);
        }
    }
}
