//! What each line does to the import: lines are read, classified and, for an event the
//! trace model uses, turned into trace events by the event's name.

use std::collections::BTreeMap;
use std::io::BufRead;

use super::line::{classify, Head, Line};
use super::payload::{new_task, NewTask};
use super::reads::mark_page;
use super::record::{self, Record};
use super::report::{MAX_EVENT_NAMES, OTHER_EVENTS};
use super::{FtraceImporter, Origin, INPUT_GESTURE_GAP_NS, INPUT_MARKERS, MAX_LINES_WITHOUT_EVENT};
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
                    self.no_event()?;
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
        let classified = classify(line, self.options.perfetto);
        if matches!(classified, Ok(Line::Event(_))) {
            self.lines_without_event = 0;
            self.event_line_seen = true;
        } else {
            self.no_event()?;
        }
        if self.html.is_none() && !line.trim().is_empty() {
            let start = line.trim_start().as_bytes();
            let prefix = &start[..start.len().min(14)];
            self.html = Some(
                prefix.eq_ignore_ascii_case(b"<!doctype html")
                    || prefix.starts_with(b"<html")
                    || prefix.starts_with(b"<HTML"),
            );
        }
        match classified {
            Ok(Line::Blank) => self.report.skip("blank", self.line),
            Ok(Line::Comment) => self.report.skip("comment (# ...)", self.line),
            Ok(Line::Lost(n)) => {
                // Counts written in the text: many huge ones must not overflow.
                self.report.lost_events = self.report.lost_events.saturating_add(n);
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
                let perfetto = self.options.perfetto;
                if self.excluded(&head) {
                    // A process it starts is not excluded, and its fork is this line.
                    if head.event == "task_newtask" {
                        match new_task(head.payload, perfetto) {
                            Ok(task) => self.excluded_new_task(&task),
                            Err(expected) => {
                                return self.malformed(&format!("task_newtask: {expected}"));
                            }
                        }
                    }
                    self.report
                        .skip("excluded task (the capturing process)", self.line);
                    return Ok(());
                }
                let applied = record::parse(head.event, head.payload, perfetto)
                    .and_then(|record| self.apply(&head, record));
                if let Err(expected) = applied {
                    return self.refused(head.event, &expected);
                }
            }
            Err(expected) => {
                self.seen_event = true;
                self.malformed(&expected)?;
            }
        }
        Ok(())
    }

    /// One more line that is not an event line: past [`MAX_LINES_WITHOUT_EVENT`] in a row,
    /// the input is not ftrace text.
    fn no_event(&mut self) -> Result<()> {
        self.lines_without_event += 1;
        if self.lines_without_event <= MAX_LINES_WITHOUT_EVENT {
            return Ok(());
        }
        let what = if self.event_line_seen {
            "since the last event"
        } else {
            "from the start"
        };
        Err(Error::format(
            &self.name,
            Position::Line(self.line),
            format!(
                "{MAX_LINES_WITHOUT_EVENT} lines {what} without an ftrace event: expected ftrace text, lines like `TASK-PID [CPU] SECONDS: EVENT: FIELDS`"
            ),
        ))
    }

    /// One event of an input that is not text (a Perfetto protobuf trace), its fields
    /// read into `record`; `at` says where it is, for errors. Events must come in time
    /// order, as the lines of a text capture do.
    pub(crate) fn push_record(
        &mut self,
        head: &Head,
        record: Record<&str>,
        at: Position,
    ) -> Result<()> {
        self.begin_record(at);
        if self.excluded(head) {
            if let Record::NewTask(task) = &record {
                self.excluded_new_task(task);
            }
            self.report
                .skip("excluded task (the capturing process)", self.line);
            return Ok(());
        }
        if let Err(expected) = self.apply(head, record) {
            return self.refused(head.event, &expected);
        }
        Ok(())
    }

    /// A record of an input that is not text could not be read (`expected` says what was
    /// expected of it): malformed, like a line.
    pub(crate) fn malformed_record(
        &mut self,
        name: &str,
        expected: &str,
        at: Position,
    ) -> Result<()> {
        self.begin_record(at);
        self.malformed(&format!("{name}: {expected}"))
    }

    /// `n` records alike that could not be read, all at `at`: as many calls of
    /// [`FtraceImporter::malformed_record`], counted at once.
    pub(crate) fn malformed_records(
        &mut self,
        name: &str,
        expected: &str,
        at: Position,
        n: u64,
    ) -> Result<()> {
        if n == 0 {
            return Ok(());
        }
        self.malformed_record(name, expected, at)?;
        let rest = n - 1;
        self.report.skip_lines(
            &format!("malformed: {name}: {expected}"),
            self.line + 1,
            rest,
        );
        self.line += rest;
        self.report.lines += rest;
        Ok(())
    }

    /// One more record of an input that is not text, at `at`.
    fn begin_record(&mut self, at: Position) {
        self.line += 1;
        self.report.lines += 1;
        self.record_at = Some(at);
        self.seen_event = true;
    }

    /// Bytes of the input read so far, as the bound on pages that ranges add counts
    /// them (see [`FtraceImporter::expand`]), for an input read whole before its events.
    pub(crate) fn set_bytes_read(&mut self, bytes: u64, stored: crate::trace::shared::StoredBytes) {
        self.bytes_read = bytes;
        self.stored = stored;
    }

    /// Where the current event is in the input: its line, or for a binary input the
    /// place its reader gave.
    pub(crate) fn position(&self) -> Position {
        self.record_at.unwrap_or(Position::Line(self.line))
    }

    /// Whether the event's task is one whose events are dropped.
    pub(super) fn excluded(&self, head: &Head) -> bool {
        let excluded = |pid: u32| self.options.exclude_pids.contains(&pid);
        excluded(head.pid) || head.tgid.is_some_and(excluded)
    }

    /// A task started by an excluded one: a new process is kept.
    pub(super) fn excluded_new_task(&mut self, task: &NewTask<&str>) {
        if !task.thread {
            self.forked_process(task, None);
        }
    }

    /// Event `name` could not be applied: past a limit of the import the error is fatal,
    /// whether or not malformed events are; otherwise the event is malformed.
    pub(super) fn refused(&mut self, name: &str, expected: &str) -> Result<()> {
        if let Some(message) = self.over_limit.take() {
            return Err(Error::format(
                &self.name,
                self.position(),
                format!("{name}: {message}"),
            ));
        }
        self.malformed(&format!("{name}: {expected}"))
    }

    pub(super) fn malformed(&mut self, expected: &str) -> Result<()> {
        if self.options.strict {
            return Err(Error::format(
                &self.name,
                self.position(),
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

    /// Apply one event, its fields read into `record`, to the trace.
    pub(super) fn apply(
        &mut self,
        h: &Head,
        record: Record<&str>,
    ) -> std::result::Result<(), String> {
        let name = h.event;
        if let Some(tgid) = h.tgid {
            if tgid != 0 && tgid != h.pid {
                self.thread_of(h.pid, tgid);
            }
        }
        match record {
            Record::PageCache {
                added,
                owner,
                first,
                count,
            } => {
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
            Record::GetPages { owner, first, last } => {
                self.used(name);
                self.read_path_lines += 1;
                let time = self.time(h.time_ns);
                let proc = self.context_process(h, time)?;
                self.read_batch(h.pid, time, proc, owner, first, last)
            }
            Record::MapPages { .. } | Record::Fault { .. } => {
                let (owner, first, last) = match record {
                    Record::Fault { owner, index } => (owner, index, index),
                    Record::MapPages { owner, first, last } => (owner, first, last),
                    _ => unreachable!("matched above"),
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
            Record::UserFault { page, write } => {
                self.used(name);
                let time = self.time(h.time_ns);
                let proc = self.context_process(h, time)?;
                let tgid = self.procs[proc as usize].tgid;
                let page = self.page(PageKey::anon(u64::from(tgid), page))?;
                self.push(Event::access(time, proc, page, write, true), Origin::Other);
                Ok(())
            }
            Record::OomScoreAdj { pid, adj, comm } => {
                self.used(name);
                let time = self.time(h.time_ns);
                let tgid = self.tgid(pid);
                let proc = self.process(tgid, comm, pid == tgid, time)?;
                self.importance(time, proc, adj);
                Ok(())
            }
            Record::NewTask(task) => {
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
            Record::Fork { child, child_comm } => {
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
            Record::Exit { pid, group_dead } => {
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
            Record::Rename { pid, newcomm: new } | Record::Exec { pid, name: new } => {
                let newcomm = new;
                self.used(name);
                let time = self.time(h.time_ns);
                let tgid = self.tgid(pid);
                if pid == tgid {
                    if let Some(f) = self.forked.get_mut(&pid) {
                        f.name = Some(newcomm.to_string());
                    } else {
                        let proc = self.process(tgid, Some(newcomm), true, time)?;
                        if self.procs[proc as usize].name != newcomm {
                            self.rename(proc, newcomm, time);
                        }
                    }
                }
                Ok(())
            }
            Record::Marker(begin) => {
                self.time(h.time_ns);
                let Some((pid, slice)) = begin else {
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
            Record::Reclaim { reclaimed } => {
                self.report.pages_reclaimed += reclaimed;
                self.used(name);
                Ok(())
            }
            Record::Other => {
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

/// One more line of `name`, allocating its key only the first time; past
/// [`MAX_EVENT_NAMES`] names, a new one is counted under [`OTHER_EVENTS`].
fn count(map: &mut BTreeMap<String, u64>, name: &str) {
    if let Some(n) = map.get_mut(name) {
        *n += 1;
        return;
    }
    let name = if map.len() < MAX_EVENT_NAMES {
        name
    } else {
        OTHER_EVENTS
    };
    *map.entry(name.to_string()).or_insert(0) += 1;
}
