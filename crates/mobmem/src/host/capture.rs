//! Capturing a live Linux workload with ftrace into a trace.
//!
//! Enables the page-cache, fault, importance, process and reclaim events this kernel has
//! (`Documentation/trace/ftrace.rst`, `events.rst`) through [`Tracefs`], turns on
//! `record-tgid` so threads map to their process, runs the command in a
//! [`ProcessGroup`] of its own (or waits for a duration), and streams `trace_pipe` into
//! the ftrace importer. Processes already running take their importance from
//! `/proc/PID/oom_score_adj`, read when tracing starts (their forks are not in the trace).
//!
//! Every tracing setting changed is written to the run's [`Journal`] before it is changed
//! and put back by [`Tracefs::restore`] (a failure is reported with the result), and the
//! command's process group is ended by [`ProcessGroup`]'s `Drop`, also after an error or
//! an interruption (the caller's signal handler sets a flag; the capture then fails);
//! only the ring buffer's old contents are gone (it is cleared first). Runs sharing a
//! state file never overlap (the second refuses to start); runs that do not (older
//! mobmem, another `--state-file`) take turns through a lock file, since each changes
//! and restores the same global settings.

use std::fs::{self, OpenOptions};
use std::io::{ErrorKind, Read, Write};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use rustix::fs::{flock, FlockOperation};
use rustix::io::Errno;

use super::process_group::ProcessGroup;
use super::procfs;
use super::state::Journal;
use super::tracefs::Tracefs;
use crate::trace::ftrace::{FtraceImporter, ImportOptions, ImportReport, ProcessMatch};
use crate::trace::{PartialFile, Trace};
use crate::{Error, Result};

/// Events enabled when the kernel has them (group/name under `events/`).
pub const EVENTS: [&str; 17] = [
    "filemap/mm_filemap_add_to_page_cache",
    "filemap/mm_filemap_delete_from_page_cache",
    "filemap/mm_filemap_get_pages",
    "filemap/mm_filemap_map_pages",
    "filemap/mm_filemap_fault",
    "oom/oom_score_adj_update",
    "task/task_newtask",
    "task/task_rename",
    "sched/sched_process_fork",
    "sched/sched_process_exit",
    "exceptions/page_fault_user",
    "vmscan/mm_vmscan_kswapd_wake",
    "vmscan/mm_vmscan_direct_reclaim_begin",
    "vmscan/mm_vmscan_direct_reclaim_end",
    "vmscan/mm_vmscan_lru_shrink_inactive",
    "vmscan/mm_vmscan_lru_shrink_active",
    "vmscan/mm_vmscan_write_folio",
];

/// What to capture and how.
#[derive(Debug, Clone)]
pub struct CaptureOptions {
    /// The importer's options; this process's own events are left out as well. Without
    /// a foreground process, the command is the foreground app.
    pub import: ImportOptions,
    /// Stop after this long (without a command: trace the whole system this long; with
    /// one: end it if it runs longer).
    pub duration: Option<Duration>,
    /// Empty the page cache first (sync, then 3 to /proc/sys/vm/drop_caches).
    pub drop_caches: bool,
    /// Ring buffer per CPU while capturing, KiB.
    pub buffer_kb: u64,
    /// Leave out page_fault_user (anonymous accesses).
    pub no_anon_faults: bool,
    /// Also save the raw ftrace text here (FILE.partial until the capture completes; an
    /// interrupted capture keeps FILE.partial).
    pub raw: Option<PathBuf>,
    /// The workload: program and arguments; empty to trace the whole system.
    pub command: Vec<String>,
}

/// How the command ended.
#[derive(Debug)]
pub enum CommandEnd {
    /// It exited by itself, with this status.
    Exited(ExitStatus),
    /// It was still running when the duration was over and was ended.
    EndedAtDeadline,
    /// Waiting for it failed.
    WaitFailed(std::io::Error),
}

/// A finished capture: every setting already restored.
#[derive(Debug)]
pub struct Captured {
    pub trace: Trace,
    pub report: ImportReport,
    /// From tracing on to the command's end (or the deadline).
    pub seconds: f64,
    /// The command's end; None without a command.
    pub command: Option<CommandEnd>,
    /// Tracing settings that could not be put back (they stay in the journal).
    pub undo_failures: Vec<String>,
}

/// Where concurrent captures wait for each other.
fn lock_path() -> PathBuf {
    let run = Path::new("/run");
    if run.is_dir() {
        run.join("mobmem-capture.lock")
    } else {
        std::env::temp_dir().join("mobmem-capture.lock")
    }
}

/// Capture as `options` say, writing every change to `journal` before making it.
/// `interrupted` is set by the caller's signal handler: the capture then ends the command,
/// restores the settings and fails without a trace. `notes` receives progress messages
/// (waiting for the lock, the events traced).
pub fn capture(
    mut options: CaptureOptions,
    journal: &Journal,
    interrupted: &AtomicBool,
    notes: &dyn Fn(&str),
) -> Result<Captured> {
    if options.command.is_empty() && options.duration.is_none() {
        return Err(Error::host(
            "nothing to capture: neither a command nor a duration",
        ));
    }
    // This process's events are left out; the command's fork (task_newtask) still gives
    // it its name and the oom_score_adj it inherits.
    options.import.exclude_pids.push(std::process::id());
    let _lock = CaptureLock::acquire(interrupted, notes)?;

    let mut tracefs = Tracefs::open(journal)?;
    let captured = capture_with(&mut tracefs, options, interrupted, notes);
    // Empty unless an error cut the capture short before it restored.
    let late = tracefs.restore();
    match captured {
        Ok(mut c) => {
            c.undo_failures.extend(late);
            Ok(c)
        }
        Err(e) if late.is_empty() => Err(e),
        Err(e) => Err(Error::host(format!(
            "{e}; and could not undo: {}",
            late.join("; ")
        ))),
    }
}

fn capture_with(
    tracefs: &mut Tracefs,
    options: CaptureOptions,
    interrupted: &AtomicBool,
    notes: &dyn Fn(&str),
) -> Result<Captured> {
    tracefs.prepare(options.buffer_kb)?;
    let mut enabled = Vec::new();
    let mut missing = Vec::new();
    for event in EVENTS {
        if options.no_anon_faults && event.ends_with("page_fault_user") {
            continue;
        }
        let rel = format!("events/{event}/enable");
        if tracefs.has(&rel) {
            tracefs.set(&rel, "1")?;
            enabled.push(event);
        } else {
            missing.push(event);
        }
    }
    notes(&format!(
        "tracing {} events at {}{}",
        enabled.len(),
        tracefs.root().display(),
        if missing.is_empty() {
            String::new()
        } else {
            format!(" (this kernel lacks {})", missing.join(", "))
        }
    ));
    if !enabled.iter().any(|e| e.starts_with("filemap/")) {
        return Err(Error::host(
            "this kernel has no filemap trace events: nothing to capture",
        ));
    }
    if options.drop_caches {
        let _ = Command::new("sync").process_group(0).status();
        fs::write("/proc/sys/vm/drop_caches", "3")
            .map_err(|e| Error::host(format!("writing 3 to /proc/sys/vm/drop_caches: {e}")))?;
    }
    if interrupted.load(Ordering::SeqCst) {
        return Err(Error::host(
            "interrupted before the capture started; tracing settings restored",
        ));
    }

    let (mut pipe, pipe_path) = tracefs.open_pipe()?;
    let mut raw = match &options.raw {
        // FILE.partial, renamed to FILE only when the capture completes: an interrupted
        // capture keeps FILE.partial, an error leaves nothing.
        Some(path) => Some(PartialFile::create(path)?),
        None => None,
    };
    tracefs.set("tracing_on", "1")?;
    let started = Instant::now();
    // Read after tracing is on: a process started later has its fork in the trace, which
    // takes precedence (see FtraceImporter::running_process).
    let running = procfs::running_processes();
    let mut workload = None;
    let mut import = options.import;
    if !options.command.is_empty() {
        let w = ProcessGroup::spawn(&options.command)?;
        if import.foreground.is_empty() {
            import.foreground.push(ProcessMatch::Pid(w.pid()));
        }
        workload = Some(w);
    }
    let mut importer = FtraceImporter::new(&pipe_path, import);
    for p in &running {
        importer.running_process(p.pid, &p.name, p.adj);
    }

    let deadline = options.duration.map(|d| started + d);
    stream(
        &mut pipe,
        &pipe_path,
        tracefs,
        &mut importer,
        raw.as_mut(),
        None,
        &|| {
            Stop {
                interrupted,
                deadline,
                workload: workload.as_ref(),
            }
            .now()
        },
    )?;
    let ended_early = workload.as_ref().is_some_and(|w| !w.leader_exited());
    let status = workload.as_mut().map(ProcessGroup::end);
    // The pipe is closed first, or tracefs would be busy and stay mounted.
    drop(pipe);
    let undo_failures = tracefs.restore();
    let seconds = started.elapsed().as_secs_f64();
    if interrupted.load(Ordering::SeqCst) {
        let kept = match raw {
            Some(r) => format!(" (the raw text so far is in {})", r.keep()?.display()),
            None => String::new(),
        };
        let restored = if undo_failures.is_empty() {
            "tracing settings restored".to_string()
        } else {
            format!("could not undo: {}", undo_failures.join("; "))
        };
        return Err(Error::host(format!(
            "interrupted after {seconds:.1} s: the capture is incomplete and no trace was \
             written{kept}; {restored}"
        )));
    }
    if let Some(r) = raw {
        r.commit()?;
    }
    let (trace, report) = importer.finish();
    Ok(Captured {
        trace,
        report,
        seconds,
        command: status.map(|s| match s {
            Err(e) => CommandEnd::WaitFailed(e),
            Ok(_) if ended_early => CommandEnd::EndedAtDeadline,
            Ok(s) => CommandEnd::Exited(s),
        }),
        undo_failures,
    })
}

/// What ends the capture.
struct Stop<'a> {
    interrupted: &'a AtomicBool,
    deadline: Option<Instant>,
    workload: Option<&'a ProcessGroup>,
}

impl Stop<'_> {
    /// A signal, the deadline, or the command's end.
    fn now(&self) -> bool {
        self.interrupted.load(Ordering::SeqCst)
            || self.deadline.is_some_and(|d| Instant::now() >= d)
            || self.workload.is_some_and(ProcessGroup::leader_exited)
    }
}

/// Sees every line of `trace_pipe` as it is read.
pub(crate) type LineObserver<'a> = &'a mut dyn FnMut(&[u8]);

/// Feed `trace_pipe` to the importer (and the raw copy, and `observe`) until `stop`
/// says so, then what is left; tracing is off when it returns.
pub(crate) fn stream(
    pipe: &mut fs::File,
    pipe_path: &Path,
    tracefs: &Tracefs,
    importer: &mut FtraceImporter,
    mut raw: Option<&mut PartialFile>,
    mut observe: Option<LineObserver<'_>>,
    stop: &dyn Fn() -> bool,
) -> Result<()> {
    let mut chunk = vec![0u8; 1 << 20];
    let mut pending: Vec<u8> = Vec::new();
    let mut stopping = false;
    let mut last_check = Instant::now();
    loop {
        // The pipe may never run dry under a busy workload: look at the clock, the
        // command and the signals every 100 ms whatever it does.
        if !stopping && last_check.elapsed() >= Duration::from_millis(100) {
            last_check = Instant::now();
            if stop() {
                tracefs.write("tracing_on", "0")?;
                stopping = true;
            }
        }
        match pipe.read(&mut chunk) {
            Ok(0) => std::thread::sleep(Duration::from_millis(20)),
            Ok(n) => {
                pending.extend_from_slice(&chunk[..n]);
                if let Some(last) = pending.iter().rposition(|&b| b == b'\n') {
                    for line in pending[..=last].split(|&b| b == b'\n') {
                        if line.is_empty() {
                            continue;
                        }
                        if let Some(out) = raw.as_deref_mut() {
                            out.write_all(line)
                                .and_then(|()| out.write_all(b"\n"))
                                .map_err(|e| {
                                    Error::host(format!(
                                        "writing {}: {e}",
                                        out.temp_path().display()
                                    ))
                                })?;
                        }
                        if let Some(f) = observe.as_deref_mut() {
                            f(line);
                        }
                        importer.push_bytes(line)?;
                    }
                    pending.drain(..=last);
                }
            }
            Err(e) if e.kind() == ErrorKind::WouldBlock => {
                if stopping {
                    return Ok(());
                }
                if stop() {
                    // Drain what is left, then stop.
                    tracefs.write("tracing_on", "0")?;
                    stopping = true;
                } else {
                    std::thread::sleep(Duration::from_millis(50));
                }
            }
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(e) => return Err(Error::host(format!("reading {}: {e}", pipe_path.display()))),
        }
    }
}

/// The lock file at `path`, created if missing; none without the right to create it.
/// Never opened through a link: in a shared /tmp anyone could put one at this name.
fn open_lock(path: &Path) -> Result<Option<fs::File>> {
    use std::os::unix::fs::OpenOptionsExt;
    match OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .custom_flags(rustix::fs::OFlags::NOFOLLOW.bits() as i32)
        .open(path)
    {
        Ok(file) => Ok(Some(file)),
        Err(e) if e.raw_os_error() == Some(Errno::LOOP.raw_os_error()) => {
            Err(Error::host(format!(
                "{} is a symbolic link, not mobmem's lock file: remove it",
                path.display()
            )))
        }
        Err(_) => Ok(None),
    }
}

/// An exclusive lock held for the whole capture (see [`lock_path`]); `mobmem host
/// restore` takes it too, so that it never puts back settings under a running capture.
pub struct CaptureLock {
    _file: Option<fs::File>,
}

impl CaptureLock {
    /// Wait for another capture to finish; give up on a signal. Without the right to
    /// create the lock file no capture can run anyway: tracefs then says why.
    pub fn acquire(interrupted: &AtomicBool, notes: &dyn Fn(&str)) -> Result<CaptureLock> {
        let path = lock_path();
        let Some(file) = open_lock(&path)? else {
            return Ok(CaptureLock { _file: None });
        };
        let mut told = false;
        loop {
            match flock(&file, FlockOperation::NonBlockingLockExclusive) {
                Ok(()) => return Ok(CaptureLock { _file: Some(file) }),
                Err(Errno::WOULDBLOCK) => {}
                Err(e) => {
                    return Err(Error::host(format!(
                        "locking {}: {}",
                        path.display(),
                        std::io::Error::from(e)
                    )))
                }
            }
            if !told {
                notes(&format!(
                    "waiting for another mobmem capture to finish (lock {})",
                    path.display()
                ));
                told = true;
            }
            if interrupted.load(Ordering::SeqCst) {
                return Err(Error::host(
                    "interrupted while waiting for another capture; nothing changed",
                ));
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_lock_is_never_opened_through_a_link() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("target");
        let link = dir.path().join("lock");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        let e = open_lock(&link).unwrap_err().to_string();
        assert!(e.contains("symbolic link"), "{e}");
        assert!(!target.exists(), "nothing created through the link");
        let plain = dir.path().join("plain");
        assert!(open_lock(&plain).unwrap().is_some());
        assert!(
            open_lock(&plain).unwrap().is_some(),
            "an existing lock file opens"
        );
    }
}
