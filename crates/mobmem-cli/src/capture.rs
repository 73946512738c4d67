//! `mobmem capture`: record a live Linux workload with ftrace and import it as a trace.
//!
//! Mounts tracefs if needed, enables the page-cache, fault, importance, process and
//! reclaim events this kernel has (`Documentation/trace/ftrace.rst`, `events.rst`), turns
//! on `record-tgid` so threads map to their process, runs the command in a process group
//! of its own (or waits for a duration), streams `trace_pipe` into the ftrace importer and
//! writes the trace. Processes already running take their importance from
//! `/proc/PID/oom_score_adj`, read when tracing starts (their forks are not in the trace).
//!
//! Every tracing setting it changed is put back by [`Tracefs`]'s `Drop`, and the command's
//! process group is ended by [`Workload`]'s, also after an error or a signal (Ctrl-C,
//! SIGTERM, SIGHUP: the capture then fails and writes no trace); only the ring buffer's
//! old contents are gone (it is cleared first). The trace is written under a temporary
//! name and renamed into place, so no half-written file ever carries its name.

use std::fs::{self, OpenOptions};
use std::io::{ErrorKind, Read, Write};
use std::os::fd::AsFd;
use std::os::unix::fs::OpenOptionsExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use clap::Args;
use rustix::fs::{flock, FlockOperation};
use rustix::io::Errno;
use rustix::process::{
    kill_process_group, test_kill_process_group, waitid, Pid, Signal, WaitId, WaitIdOptions,
};

use mobmem::trace::ftrace::{FtraceImporter, ProcessMatch};
use mobmem::trace::PartialFile;

use crate::import::{check_output, write_trace, ImportFlags};

/// Where tracefs is found or mounted.
const TRACEFS: &str = "/sys/kernel/tracing";
/// The older place, under debugfs.
const DEBUGFS_TRACING: &str = "/sys/kernel/debug/tracing";

/// Events enabled when the kernel has them (group/name under `events/`).
const EVENTS: [&str; 17] = [
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

#[derive(Args)]
pub struct CaptureArgs {
    /// Output trace, .mmt or .csv.
    #[arg(long)]
    out: PathBuf,
    /// Stop after this many seconds (without COMMAND: trace the whole system this long;
    /// with COMMAND: stop it if it runs longer).
    #[arg(long, value_name = "S")]
    duration: Option<f64>,
    #[command(flatten)]
    flags: ImportFlags,
    /// Empty the page cache first (sync, then 3 to /proc/sys/vm/drop_caches), so the
    /// workload's reads are misses the trace sees.
    #[arg(long)]
    drop_caches: bool,
    /// Ring buffer per CPU while capturing, in KiB (restored afterwards).
    #[arg(long, default_value_t = 32768, value_name = "KIB")]
    buffer_kb: u64,
    /// Leave out page_fault_user (anonymous accesses), which can be most of the volume.
    #[arg(long)]
    no_anon_faults: bool,
    /// Also save the raw ftrace text here (importable with `mobmem trace import`); an
    /// interrupted capture leaves what it read in FILE.partial.
    #[arg(long, value_name = "FILE")]
    raw: Option<PathBuf>,
    /// Print the import report as JSON.
    #[arg(long)]
    json: bool,
    /// The workload to run; without --foreground marks it (with the processes it starts)
    /// is the foreground app. Its stdout goes to mobmem's stderr; its process group is
    /// ended when the capture ends.
    #[arg(last = true, value_name = "COMMAND")]
    command: Vec<String>,
}

/// tracefs, with every setting changed through it remembered and put back on drop, then
/// unmounted if it was mounted here.
pub struct Tracefs {
    root: PathBuf,
    mounted_here: bool,
    /// (file, old value), in the order changed; restored in reverse.
    changed: Vec<(PathBuf, String)>,
}

impl Tracefs {
    /// Find tracefs, mounting it at /sys/kernel/tracing if it is nowhere; check that it is
    /// writable.
    pub fn open() -> Result<Tracefs> {
        let mut fs = Tracefs {
            root: PathBuf::from(TRACEFS),
            mounted_here: false,
            changed: Vec::new(),
        };
        if Path::new(TRACEFS).join("trace").exists() {
        } else if Path::new(DEBUGFS_TRACING).join("trace").exists() {
            fs.root = PathBuf::from(DEBUGFS_TRACING);
        } else {
            let out = Command::new("mount")
                .args(["-t", "tracefs", "nodev", TRACEFS])
                .output()
                .context("running mount to mount tracefs")?;
            if !out.status.success() {
                bail!(
                    "tracefs is not mounted and `mount -t tracefs nodev {TRACEFS}` failed: {} \
                     (capturing needs root, or CAP_SYS_ADMIN, and a kernel with ftrace)",
                    String::from_utf8_lossy(&out.stderr).trim()
                );
            }
            fs.mounted_here = true;
        }
        let probe = fs.root.join("tracing_on");
        if let Err(e) = OpenOptions::new().write(true).open(&probe) {
            bail!(
                "{} is not writable ({e}): capturing needs root (or the tracefs group)",
                probe.display()
            );
        }
        Ok(fs)
    }

    pub fn has(&self, rel: &str) -> bool {
        self.root.join(rel).exists()
    }

    fn read(&self, rel: &str) -> Result<String> {
        let path = self.root.join(rel);
        let text =
            fs::read_to_string(&path).with_context(|| format!("reading {}", path.display()))?;
        Ok(text.trim().to_string())
    }

    fn write(&self, rel: &str, value: &str) -> Result<()> {
        let path = self.root.join(rel);
        fs::write(&path, value).with_context(|| format!("writing {value} to {}", path.display()))
    }

    /// Set `rel` to `value`, remembering the old value.
    pub fn set(&mut self, rel: &str, value: &str) -> Result<()> {
        let mut old = self.read(rel)?;
        // `7 (expanded: 1408)`: the buffer is not allocated yet; 1408 is its size. tracefs
        // cannot free it again, so restoring leaves it allocated at that size (which the
        // kernel rounds up to whole sub-buffer pages).
        if let Some(expanded) = old.split_once("(expanded: ") {
            old = expanded.1.trim_end_matches(')').to_string();
        }
        self.write(rel, value)?;
        self.changed.push((self.root.join(rel), old));
        Ok(())
    }

    /// Empty the ring buffer (its contents cannot be restored).
    fn clear(&self) -> Result<()> {
        self.write("trace", "")
    }
}

impl Drop for Tracefs {
    fn drop(&mut self) {
        // Stop first, so restoring does not itself fill the buffer.
        let _ = fs::write(self.root.join("tracing_on"), "0");
        for (path, old) in self.changed.drain(..).rev() {
            if let Err(e) = fs::write(&path, &old) {
                note(&format!(
                    "warning: could not restore {} to {old}: {e}",
                    path.display()
                ));
            }
        }
        if self.mounted_here {
            match Command::new("umount").arg(&self.root).status() {
                Ok(s) if s.success() => {}
                _ => note(&format!(
                    "warning: could not unmount {}",
                    self.root.display()
                )),
            }
        }
    }
}

/// How long the command's process group has to end after SIGTERM before SIGKILL.
const GRACE: Duration = Duration::from_secs(2);

/// Where concurrent captures wait for each other: each changes and restores the same
/// global tracing settings, so two at once would restore each other's values.
fn lock_path() -> PathBuf {
    let run = Path::new("/run");
    if run.is_dir() {
        run.join("mobmem-capture.lock")
    } else {
        std::env::temp_dir().join("mobmem-capture.lock")
    }
}

/// A message on stderr that cannot fail: after SIGHUP the terminal may be gone, and a
/// failed write must not stop the settings from being restored.
fn note(message: &str) {
    let _ = writeln!(std::io::stderr(), "{message}");
}

pub fn run(args: CaptureArgs) -> Result<()> {
    check_output(&args.out)?;
    if args.command.is_empty() && args.duration.is_none() {
        bail!("give a COMMAND after `--`, or --duration S to trace the whole system");
    }
    if let Some(d) = args.duration {
        if !(d.is_finite() && d > 0.0) {
            bail!("--duration must be > 0 seconds");
        }
    }
    let mut options = args.flags.options()?;
    // This process's events are left out; the command's fork (task_newtask) still gives
    // it its name and the oom_score_adj it inherits.
    options.exclude_pids.push(std::process::id());

    // Ctrl-C, SIGTERM and SIGHUP only set this flag; the loop below then ends the
    // command, restores the settings and fails without writing a trace.
    let interrupted = Arc::new(AtomicBool::new(false));
    {
        let flag = interrupted.clone();
        ctrlc::set_handler(move || flag.store(true, Ordering::SeqCst))
            .context("installing the signal handler")?;
    }
    let _lock = CaptureLock::acquire(&interrupted)?;

    let mut tracefs = Tracefs::open()?;
    tracefs.set("tracing_on", "0")?;
    tracefs.clear()?;
    tracefs.set("buffer_size_kb", &args.buffer_kb.to_string())?;
    if tracefs.has("options/record-tgid") {
        tracefs.set("options/record-tgid", "1")?;
    }
    let mut enabled = Vec::new();
    let mut missing = Vec::new();
    for event in EVENTS {
        if args.no_anon_faults && event.ends_with("page_fault_user") {
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
    note(&format!(
        "tracing {} events at {}{}",
        enabled.len(),
        tracefs.root.display(),
        if missing.is_empty() {
            String::new()
        } else {
            format!(" (this kernel lacks {})", missing.join(", "))
        }
    ));
    if !enabled.iter().any(|e| e.starts_with("filemap/")) {
        bail!("this kernel has no filemap trace events: nothing to capture");
    }
    if args.drop_caches {
        let _ = Command::new("sync").status();
        fs::write("/proc/sys/vm/drop_caches", "3")
            .context("writing 3 to /proc/sys/vm/drop_caches")?;
    }
    if interrupted.load(Ordering::SeqCst) {
        bail!("interrupted before the capture started; tracing settings restored");
    }

    let pipe_path = tracefs.root.join("trace_pipe");
    let mut pipe = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(&pipe_path)
        .with_context(|| format!("opening {}", pipe_path.display()))?;
    let mut raw = match &args.raw {
        // FILE.partial, renamed to FILE only when the capture completes: an interrupted
        // capture keeps FILE.partial, an error leaves nothing.
        Some(path) => Some(PartialFile::create(path)?),
        None => None,
    };
    tracefs.set("tracing_on", "1")?;
    let started = Instant::now();
    // Read after tracing is on: a process started later has its fork in the trace, which
    // takes precedence (see FtraceImporter::running_process).
    let running = running_processes();
    let mut workload = None;
    if !args.command.is_empty() {
        let w = Workload::spawn(&args.command)?;
        if options.foreground.is_empty() {
            options.foreground.push(ProcessMatch::Pid(w.child.id()));
        }
        workload = Some(w);
    }
    let mut importer = FtraceImporter::new(&pipe_path, options);
    for p in &running {
        importer.running_process(p.pid, &p.name, p.adj);
    }

    let deadline = args.duration.map(|d| started + Duration::from_secs_f64(d));
    stream(
        &mut pipe,
        &pipe_path,
        &tracefs,
        &mut importer,
        raw.as_mut(),
        Stop {
            interrupted: &interrupted,
            deadline,
            workload: workload.as_ref(),
        },
    )?;
    let ended_early = workload.as_ref().is_some_and(|w| !w.leader_exited());
    let status = workload.as_mut().map(Workload::end);
    // The pipe is closed first, or tracefs would be busy and stay mounted.
    drop(pipe);
    drop(tracefs);
    let seconds = started.elapsed().as_secs_f64();
    if interrupted.load(Ordering::SeqCst) {
        let kept = match raw {
            Some(r) => format!(" (the raw text so far is in {})", r.keep()?.display()),
            None => String::new(),
        };
        bail!(
            "interrupted after {seconds:.1} s: the capture is incomplete and no trace was \
             written{kept}; tracing settings restored"
        );
    }
    if let Some(r) = raw {
        r.commit()?;
    }
    let (t, report) = importer.finish();
    note(&format!(
        "captured {} lines in {seconds:.1} s; tracing settings restored",
        report.lines
    ));
    if let Some(status) = status {
        let name = &args.command[0];
        match status {
            Err(e) => note(&format!("warning: waiting for {name}: {e}")),
            Ok(_) if ended_early => note(&format!(
                "{name} was still running after --duration: ended it"
            )),
            Ok(s) if !s.success() => note(&format!("warning: {name} exited with {s}")),
            Ok(_) => {}
        }
    }
    write_trace(&args.out, &t, &report, args.json)
}

/// What ends the capture.
struct Stop<'a> {
    interrupted: &'a AtomicBool,
    deadline: Option<Instant>,
    workload: Option<&'a Workload>,
}

impl Stop<'_> {
    /// A signal, the deadline, or the command's end.
    fn now(&self) -> bool {
        self.interrupted.load(Ordering::SeqCst)
            || self.deadline.is_some_and(|d| Instant::now() >= d)
            || self.workload.is_some_and(Workload::leader_exited)
    }
}

/// Feed `trace_pipe` to the importer (and the raw copy) until `stop`, then what is left.
fn stream(
    pipe: &mut fs::File,
    pipe_path: &Path,
    tracefs: &Tracefs,
    importer: &mut FtraceImporter,
    mut raw: Option<&mut PartialFile>,
    stop: Stop<'_>,
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
            if stop.now() {
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
                                .with_context(|| {
                                    format!("writing {}", out.temp_path().display())
                                })?;
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
                if stop.now() {
                    // Drain what is left, then stop.
                    tracefs.write("tracing_on", "0")?;
                    stopping = true;
                } else {
                    std::thread::sleep(Duration::from_millis(50));
                }
            }
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(e) => return Err(e).with_context(|| format!("reading {}", pipe_path.display())),
        }
    }
}

/// An exclusive lock held for the whole capture (see [`lock_path`]).
struct CaptureLock {
    _file: Option<fs::File>,
}

impl CaptureLock {
    /// Wait for another capture to finish; give up on a signal. Without the right to
    /// create the lock file no capture can run anyway: tracefs then says why.
    fn acquire(interrupted: &AtomicBool) -> Result<CaptureLock> {
        let path = lock_path();
        let Ok(file) = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
        else {
            return Ok(CaptureLock { _file: None });
        };
        let mut told = false;
        loop {
            match flock(&file, FlockOperation::NonBlockingLockExclusive) {
                Ok(()) => return Ok(CaptureLock { _file: Some(file) }),
                Err(Errno::WOULDBLOCK) => {}
                Err(e) => {
                    return Err(std::io::Error::from(e))
                        .with_context(|| format!("locking {}", path.display()))
                }
            }
            if !told {
                note(&format!(
                    "waiting for another mobmem capture to finish (lock {})",
                    path.display()
                ));
                told = true;
            }
            if interrupted.load(Ordering::SeqCst) {
                bail!("interrupted while waiting for another capture; nothing changed");
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

/// The command, in a process group of its own so that it and every process it starts
/// can be ended together (and so that the terminal's Ctrl-C reaches only mobmem, which
/// then ends the group itself).
struct Workload {
    child: Child,
    /// The process group's id: the command's pid.
    group: Pid,
    /// Set once the command is reaped.
    status: Option<ExitStatus>,
}

impl Workload {
    fn spawn(command: &[String]) -> Result<Workload> {
        // The command's output goes to mobmem's stderr: stdout carries the report
        // (--json), which must stay parseable.
        let stderr = std::io::stderr()
            .as_fd()
            .try_clone_to_owned()
            .context("duplicating stderr for the command's output")?;
        let child = Command::new(&command[0])
            .args(&command[1..])
            .stdin(Stdio::null())
            .stdout(Stdio::from(stderr))
            .process_group(0)
            .spawn()
            .with_context(|| format!("starting {}", command[0]))?;
        Ok(Workload {
            group: Pid::from_child(&child),
            child,
            status: None,
        })
    }

    /// Whether the command itself has ended. It is not reaped here (WNOWAIT), so its pid,
    /// which names the process group, cannot be reused before [`Workload::end`].
    fn leader_exited(&self) -> bool {
        if self.status.is_some() {
            return true;
        }
        let options = WaitIdOptions::EXITED | WaitIdOptions::NOHANG | WaitIdOptions::NOWAIT;
        matches!(waitid(WaitId::Pid(self.group), options), Ok(Some(_)))
    }

    /// End what is left of the process group (SIGTERM, then SIGKILL after [`GRACE`]) and
    /// reap the command; returns its exit status. Processes that left the group (setsid,
    /// setpgid) are not reached. Once the command is reaped, a second call only returns
    /// its status again.
    fn end(&mut self) -> std::io::Result<ExitStatus> {
        if let Some(status) = self.status {
            return Ok(status);
        }
        let group = self.group;
        if group_alive(group) {
            signal_group(group, Signal::TERM);
            if !wait_gone(group, GRACE) {
                signal_group(group, Signal::KILL);
            }
        }
        let status = self.child.wait();
        // SIGKILL is delivered at once but a process takes a moment to die.
        if !wait_gone(group, GRACE) {
            note(&format!(
                "warning: processes of group {} (the command's) are still alive",
                group.as_raw_pid()
            ));
        }
        let status = status?;
        self.status = Some(status);
        Ok(status)
    }
}

impl Drop for Workload {
    /// An error or a signal never leaves the command (or what it started) running.
    fn drop(&mut self) {
        let _ = self.end();
    }
}

fn signal_group(group: Pid, signal: Signal) {
    // ESRCH (nobody left) is fine.
    let _ = kill_process_group(group, signal);
}

/// One process of /proc/PID/stat.
struct ProcStat {
    pid: u32,
    name: String,
    /// `R`, `S`, `D`, `Z` (zombie), ...
    state: u8,
    kernel_thread: bool,
}

/// `PF_KTHREAD` of `include/linux/sched.h`, in field 9 of /proc/PID/stat.
const PF_KTHREAD: u64 = 0x0020_0000;

/// Every process (thread group) now in /proc; those gone while reading are left out.
fn processes() -> Vec<ProcStat> {
    let Ok(entries) = fs::read_dir("/proc") else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for entry in entries.flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<u32>().ok())
        else {
            continue;
        };
        let Ok(text) = fs::read_to_string(entry.path().join("stat")) else {
            continue;
        };
        if let Some(p) = parse_stat(pid, &text) {
            out.push(p);
        }
    }
    out
}

/// The fields of a /proc/PID/stat line after COMM, STATE first: `PID (COMM) STATE PPID
/// PGRP SESSION TTY TPGID FLAGS ...` (proc(5)). COMM may hold spaces and parentheses, so
/// it ends at the last `)`.
fn fields_after_comm(text: &str) -> Option<std::str::SplitWhitespace<'_>> {
    Some(text.get(text.rfind(')')? + 1..)?.split_whitespace())
}

/// A /proc/PID/stat line, or `None` if it is cut short.
fn parse_stat(pid: u32, text: &str) -> Option<ProcStat> {
    let open = text.find('(')?;
    let close = text.rfind(')')?;
    let name = text.get(open + 1..close)?.to_string();
    let fields: Vec<&str> = fields_after_comm(text)?.collect();
    Some(ProcStat {
        pid,
        name,
        state: *fields.first()?.as_bytes().first()?,
        kernel_thread: fields.get(6)?.parse::<u64>().ok()? & PF_KTHREAD != 0,
    })
}

/// Whether a live (not zombie) process is in process group `group`.
fn group_alive(group: Pid) -> bool {
    // Signal 0 finds the group empty (ESRCH) without looking at /proc: the usual answer
    // once the command is reaped.
    if test_kill_process_group(group) == Err(Errno::SRCH) {
        return false;
    }
    // It also counts zombies: the command before it is reaped, and orphans where init
    // (in a container, any program) does not reap them. Those have ended.
    live_member(group)
}

/// Wait up to `grace` for [`group_alive`] to turn false; returns whether it did.
fn wait_gone(group: Pid, grace: Duration) -> bool {
    let deadline = Instant::now() + grace;
    loop {
        if !group_alive(group) {
            return true;
        }
        if Instant::now() >= deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Whether /proc shows a process of group `group` that is not a zombie; only STATE and
/// PGRP of each /proc/PID/stat are read, into one buffer.
fn live_member(group: Pid) -> bool {
    let Ok(entries) = fs::read_dir("/proc") else {
        return false;
    };
    let mut text = String::new();
    for entry in entries.flatten() {
        let name = entry.file_name();
        let digits = name.as_encoded_bytes();
        if digits.is_empty() || !digits.iter().all(u8::is_ascii_digit) {
            continue;
        }
        text.clear();
        let read = fs::File::open(entry.path().join("stat"))
            .and_then(|mut file| file.read_to_string(&mut text));
        // A process gone while reading has ended.
        if read.is_err() {
            continue;
        }
        if let Some((state, pgrp)) = state_and_group(&text) {
            if pgrp == group.as_raw_pid() && !matches!(state, b'Z' | b'X') {
                return true;
            }
        }
    }
    false
}

/// STATE and PGRP of a /proc/PID/stat line.
fn state_and_group(text: &str) -> Option<(u8, i32)> {
    let mut fields = fields_after_comm(text)?;
    let state = *fields.next()?.as_bytes().first()?;
    let pgrp = fields.nth(1)?.parse().ok()?;
    Some((state, pgrp))
}

/// A process running when the capture began, with its importance.
struct Running {
    pid: u32,
    name: String,
    adj: i16,
}

/// The user processes now running and their oom_score_adj (kernel threads have none
/// that means anything: they are never killed for memory).
fn running_processes() -> Vec<Running> {
    processes()
        .into_iter()
        .filter(|p| !p.kernel_thread && p.state != b'Z')
        .filter_map(|p| {
            let adj = read_adj(
                &Path::new("/proc")
                    .join(p.pid.to_string())
                    .join("oom_score_adj"),
            )?;
            Some(Running {
                pid: p.pid,
                name: p.name,
                adj,
            })
        })
        .collect()
}

fn read_adj(path: &Path) -> Option<i16> {
    fs::read_to_string(path)
        .ok()?
        .trim()
        .parse::<i16>()
        .ok()
        .filter(|a| (-1000..=1000).contains(a))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_lines_with_odd_names() {
        let odd = "42 (a) b (c)) S 1 40 40 0 -1 4194560 0 0";
        let p = parse_stat(42, odd).unwrap();
        assert_eq!(
            (p.name.as_str(), p.state, p.kernel_thread),
            ("a) b (c)", b'S', false)
        );
        assert_eq!(state_and_group(odd), Some((b'S', 40)));
        let k = parse_stat(2, "2 (kthreadd) S 0 0 0 0 -1 2129984 0 0").unwrap();
        assert!(k.kernel_thread);
        assert!(parse_stat(3, "3 (x) S 1").is_none());
        assert_eq!(
            state_and_group("42 (a) b (c)) Z 1 40 40 0 -1 4194560 0 0"),
            Some((b'Z', 40))
        );
        assert_eq!(state_and_group("3 (x) S 1"), None);
    }
}
