//! What a host command is about to change, written down before it changes it, so that
//! a run ended by SIGKILL (or a power cut of the process: OOM killer, `kill -9`) can be
//! put back by `mobmem host restore`.
//!
//! The state file ([`default_path`]; a command's `--state-file` overrides it) is JSON: the
//! command, its pid and start time, and every [`Change`] it made or was about to make,
//! in order. A [`Journal`] creates it when a run begins (refusing to start while one is
//! there: another run is in progress, or a dead one left changes behind), appends each
//! change before making it, drops each change once undone, and removes the file when
//! nothing is left. Every write is a whole new file, fsynced and renamed over the old one,
//! so a reader sees either the old list or the new one.
//!
//! Every undo is idempotent: a change is recorded before it is made, so a killed run may
//! have recorded a change it never made.

use std::fs::{self, File};
use std::io::{ErrorKind, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::{Error, Position, Result};

/// The file's format; a file of another format is refused, never guessed at.
const FORMAT: u32 = 1;

/// The test hook: a run with this variable set to N kills itself with SIGKILL right after
/// its N-th change is recorded and before it is made (tests of `mobmem host restore`).
pub const KILL_AT_ENV: &str = "MOBMEM_TEST_KILL_AT_CHANGE";

/// Where host commands keep their state file: `/run/mobmem/host-state.json` for root
/// (`/run` is cleared at boot, as are the settings it lists); otherwise
/// `$XDG_RUNTIME_DIR/mobmem/host-state.json`, or `mobmem-UID/host-state.json` in the
/// temporary directory.
pub fn default_path() -> PathBuf {
    let uid = rustix::process::geteuid();
    let run = Path::new("/run");
    if uid.is_root() && run.is_dir() {
        return run.join("mobmem").join("host-state.json");
    }
    match std::env::var_os("XDG_RUNTIME_DIR") {
        Some(dir) if !dir.is_empty() => PathBuf::from(dir).join("mobmem"),
        _ => std::env::temp_dir().join(format!("mobmem-{}", uid.as_raw())),
    }
    .join("host-state.json")
}

/// Refuse a state file's folder that someone else could write into: it must be a folder
/// (or a link to one) owned by this user or root, and, when its group or others may
/// write, have the sticky bit (as `/tmp` has), so that no one else can replace the file.
/// Otherwise a planted folder such as `/tmp/mobmem-UID` could hand `host restore` a list
/// of "changes" of someone else's choosing.
fn check_state_dir(dir: &Path) -> Result<()> {
    use std::os::unix::fs::MetadataExt;
    let me = rustix::process::geteuid().as_raw();
    let trusted = |uid: u32| uid == me || uid == 0;
    let refuse = |why: String| {
        Error::host(format!(
            "the state file's folder {} {why}; give --state-file a path in a folder of yours",
            dir.display()
        ))
    };
    let link = fs::symlink_metadata(dir).map_err(|e| Error::io(dir, e))?;
    if link.file_type().is_symlink() && !trusted(link.uid()) {
        return Err(refuse(format!("is a link owned by uid {}", link.uid())));
    }
    let meta = fs::metadata(dir).map_err(|e| Error::io(dir, e))?;
    if !meta.is_dir() {
        return Err(refuse("is not a folder".into()));
    }
    if !trusted(meta.uid()) {
        return Err(refuse(format!("is owned by uid {}", meta.uid())));
    }
    const GROUP_OR_OTHER_WRITE: u32 = 0o022;
    const STICKY: u32 = 0o1000;
    if meta.mode() & GROUP_OR_OTHER_WRITE != 0 && meta.mode() & STICKY == 0 {
        return Err(refuse(format!(
            "may be written by others (mode {:o}, no sticky bit)",
            meta.mode() & 0o7777
        )));
    }
    Ok(())
}

/// The folder of a state file at `path` ("." for a bare name).
fn state_dir(path: &Path) -> &Path {
    match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    }
}

/// One change to the machine, with what undoing it needs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Change {
    /// A file (a tracefs or sysfs setting) set; its value before.
    Setting { path: PathBuf, original: String },
    /// A KSM setting in KSM's sysfs directory; its value before.
    Ksm {
        dir: PathBuf,
        name: String,
        original: String,
    },
    /// A directory created, with the files in it.
    Dir { path: PathBuf },
    /// A memory cgroup created.
    Cgroup { path: PathBuf },
    /// A zram device (its sysfs directory) sized; its algorithm before.
    Zram { sysfs: PathBuf, algorithm: String },
    /// A device made swap.
    Swap { device: PathBuf },
    /// A file system (tracefs) mounted here.
    Mount { path: PathBuf },
    /// A thread's CPU affinity set (a kernel thread such as ksmd, found by its pid and
    /// name); the CPUs it was allowed before.
    Affinity {
        pid: i32,
        comm: String,
        cpus: Vec<usize>,
    },
}

/// Run a tool (mkswap, swapon, swapoff, mount, umount) to its end. It runs in a process
/// group of its own: a second Ctrl-C at the terminal reaches only mobmem, never a cleanup
/// half done. A failure says what it wrote to stderr.
pub fn tool(program: &str, args: &[&std::ffi::OsStr]) -> Result<()> {
    use std::os::unix::process::CommandExt;
    let out = Command::new(program)
        .args(args)
        .stdin(Stdio::null())
        .process_group(0)
        .output()
        .map_err(|e| Error::host(format!("running {program}: {e}")))?;
    if out.status.success() {
        return Ok(());
    }
    let line: Vec<String> = args
        .iter()
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    Err(Error::host(format!(
        "{program} {}: {} ({})",
        line.join(" "),
        String::from_utf8_lossy(&out.stderr).trim(),
        out.status
    )))
}

fn write_value(path: &Path, value: &str) -> Result<()> {
    fs::write(path, value)
        .map_err(|e| Error::host(format!("writing {value} to {}: {e}", path.display())))
}

/// Whether `path` is a mount point (`/proc/self/mounts`).
fn mounted(path: &Path) -> bool {
    let Ok(mounts) = fs::read_to_string("/proc/self/mounts") else {
        return false;
    };
    mounts
        .lines()
        .any(|l| l.split_whitespace().nth(1) == path.to_str())
}

/// Whether `device` is in `/proc/swaps`.
fn is_swap(device: &Path) -> bool {
    fs::read_to_string("/proc/swaps").is_ok_and(|s| {
        s.lines()
            .skip(1)
            .any(|l| l.split_whitespace().next() == device.to_str())
    })
}

impl Change {
    /// Put the machine back as it was before this change; nothing to do is success.
    pub fn undo(&self) -> Result<()> {
        match self {
            Change::Setting { path, original } => write_value(path, original),
            Change::Ksm {
                dir,
                name,
                original,
            } => write_value(&dir.join(name), original),
            Change::Dir { path } => match fs::remove_dir_all(path) {
                Err(e) if e.kind() != ErrorKind::NotFound => Err(Error::io(path, e)),
                _ => Ok(()),
            },
            Change::Cgroup { path } => remove_cgroup(path),
            Change::Zram { sysfs, algorithm } => {
                write_value(&sysfs.join("reset"), "1")?;
                write_value(&sysfs.join("comp_algorithm"), algorithm)
            }
            Change::Swap { device } if is_swap(device) => tool("swapoff", &[device.as_os_str()]),
            Change::Swap { .. } => Ok(()),
            Change::Mount { path } if mounted(path) => tool("umount", &[path.as_os_str()]),
            Change::Mount { .. } => Ok(()),
            Change::Affinity { pid, comm, cpus } => set_affinity_back(*pid, comm, cpus),
        }
    }

    /// The undo, in words.
    pub fn describe(&self) -> String {
        match self {
            Change::Setting { path, original } => {
                format!("set {} back to {original}", path.display())
            }
            Change::Ksm {
                dir,
                name,
                original,
            } => format!("set KSM's {} back to {original}", dir.join(name).display()),
            Change::Dir { path } => format!("remove {}", path.display()),
            Change::Cgroup { path } => format!("remove cgroup {}", path.display()),
            Change::Zram { sysfs, algorithm } => {
                format!("reset {} (size 0, algorithm {algorithm})", sysfs.display())
            }
            Change::Swap { device } => format!("swapoff {}", device.display()),
            Change::Mount { path } => format!("unmount {}", path.display()),
            Change::Affinity { pid, comm, cpus } => {
                let list: Vec<String> = cpus.iter().map(usize::to_string).collect();
                format!("allow {comm} (pid {pid}) on CPUs {} again", list.join(","))
            }
        }
    }
}

/// Give thread `pid` the CPUs `cpus` again, if it is still the thread named `comm` (a
/// pid reused by another thread is left alone; a thread gone needs nothing).
fn set_affinity_back(pid: i32, comm: &str, cpus: &[usize]) -> Result<()> {
    let now = fs::read_to_string(format!("/proc/{pid}/comm")).unwrap_or_default();
    if now.trim() != comm {
        return Ok(());
    }
    let Some(raw) = rustix::process::Pid::from_raw(pid) else {
        return Ok(());
    };
    rustix::thread::sched_setaffinity(Some(raw), &cpu_set(cpus))
        .map_err(|e| Error::host(format!("setting the CPUs of {comm} (pid {pid}) back: {e}")))
}

/// The CPUs listed, as the kernel's affinity mask (numbers past its size left out).
pub(crate) fn cpu_set(cpus: &[usize]) -> rustix::thread::CpuSet {
    let mut set = rustix::thread::CpuSet::new();
    for &cpu in cpus
        .iter()
        .filter(|&&c| c < rustix::thread::CpuSet::MAX_CPU)
    {
        set.set(cpu);
    }
    set
}

/// Empty and remove a memory cgroup of a run; a process still in it is a worker of that
/// run (the cgroup's name is the run's own) and is killed.
fn remove_cgroup(dir: &Path) -> Result<()> {
    if !dir.exists() {
        return Ok(());
    }
    let mut last = None;
    for _ in 0..50 {
        for pid in fs::read_to_string(dir.join("cgroup.procs"))
            .unwrap_or_default()
            .split_whitespace()
            .filter_map(|p| p.parse::<i32>().ok())
        {
            if let Some(pid) = rustix::process::Pid::from_raw(pid) {
                let _ = rustix::process::kill_process(pid, rustix::process::Signal::KILL);
            }
        }
        // Reclaim what the cgroup still holds, so that removing it frees it.
        let _ = fs::write(dir.join("memory.force_empty"), "0");
        match fs::remove_dir(dir) {
            Ok(()) => return Ok(()),
            Err(e) if e.kind() == ErrorKind::NotFound => return Ok(()),
            Err(e) => last = Some(e),
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    Err(Error::host(format!(
        "removing cgroup {}: {}",
        dir.display(),
        last.map_or("unknown".into(), |e| e.to_string())
    )))
}

/// The order changes are undone in: newest first, except that KSM's `run` goes first when
/// it was 0, so that ksmd stops before anything else is put back.
pub fn undo_order(changes: &[Change]) -> Vec<usize> {
    let stops_ksmd = |c: &Change| matches!(c, Change::Ksm { name, original, .. } if name == "run" && original == "0");
    let mut order: Vec<usize> = (0..changes.len())
        .rev()
        .filter(|&i| stops_ksmd(&changes[i]))
        .collect();
    order.extend(
        (0..changes.len())
            .rev()
            .filter(|&i| !stops_ksmd(&changes[i])),
    );
    order
}

/// The state file's contents.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HostState {
    pub format: u32,
    /// The command that made the changes (`reclaim-validate`...).
    pub command: String,
    pub pid: u32,
    /// The process's start time (clock ticks after boot): a pid reused by another
    /// process is not taken for the run.
    pub started: Option<u64>,
    /// In the order made; see [`undo_order`].
    pub changes: Vec<Change>,
}

/// Start time of process `pid` (field 22 of `/proc/PID/stat`), and whether it is a zombie.
fn process_start(pid: u32) -> Option<(u64, bool)> {
    let stat = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let rest = stat.rsplit_once(')')?.1;
    let mut fields = rest.split_whitespace();
    let zombie = fields.next()? == "Z";
    Some((fields.nth(18)?.parse().ok()?, zombie))
}

/// The largest state file read: a run records a few hundred changes of a few hundred
/// bytes each.
pub const MAX_STATE_FILE_BYTES: u64 = 16 << 20;

impl HostState {
    /// A new, empty state of this process.
    pub fn new(command: &str) -> HostState {
        let pid = std::process::id();
        HostState {
            format: FORMAT,
            command: command.to_string(),
            pid,
            started: process_start(pid).map(|s| s.0),
            changes: Vec::new(),
        }
    }

    /// The state file at `path`; None when there is none. A file that is not one is an
    /// error naming it (and it is left alone).
    pub fn read(path: &Path) -> Result<Option<HostState>> {
        match check_state_dir(state_dir(path)) {
            Err(Error::Io { error, .. }) if error.kind() == ErrorKind::NotFound => return Ok(None),
            checked => checked?,
        }
        let text = match crate::input::read_all(path, MAX_STATE_FILE_BYTES, "a host state file") {
            Ok(t) => t,
            Err(Error::Io { error, .. }) if error.kind() == ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(e),
        };
        Self::parse(&text, path).map(Some)
    }

    /// The state file's bytes, read from `path` (which names it in errors).
    pub fn parse(text: &[u8], path: &Path) -> Result<HostState> {
        let corrupt = |position, why: String| {
            Error::format(
                path,
                position,
                format!(
                    "not a mobmem host state file ({why}); it was left as it is: it may list \
                     changes a killed run made, to put back by hand before deleting it"
                ),
            )
        };
        let state: HostState = serde_json::from_slice(text)
            .map_err(|e| corrupt(Position::Line(e.line() as u64), e.to_string()))?;
        if state.format != FORMAT {
            return Err(corrupt(
                Position::Line(1),
                format!("format {}, this mobmem reads {FORMAT}", state.format),
            ));
        }
        Ok(state)
    }

    /// Whether the process that wrote it still runs.
    pub fn owner_alive(&self) -> bool {
        match process_start(self.pid) {
            None | Some((_, true)) => false,
            Some((started, false)) => self.started.is_none_or(|s| s == started),
        }
    }

    fn bytes(&self) -> Vec<u8> {
        let mut text = serde_json::to_vec_pretty(self).expect("plain data serializes");
        text.push(b'\n');
        text
    }

    /// Replace the file at `path` with this state: written whole under a temporary name,
    /// fsynced, renamed over it, and the directory fsynced.
    pub fn write(&self, path: &Path) -> Result<()> {
        let temp = write_temp(path, &self.bytes())?;
        if let Err(e) = fs::rename(&temp, path) {
            let _ = fs::remove_file(&temp);
            return Err(Error::io(path, e));
        }
        sync_dir(path)
    }
}

/// `bytes` written and fsynced to a fresh temporary file beside `path`, created
/// exclusively (a link planted there is never written through); returns its name.
fn write_temp(path: &Path, bytes: &[u8]) -> Result<PathBuf> {
    let (temp, mut file) = crate::output::create_temp_file(path)?;
    let written = file.write_all(bytes).and_then(|()| file.sync_all());
    if let Err(e) = written {
        let _ = fs::remove_file(&temp);
        return Err(Error::io(&temp, e));
    }
    Ok(temp)
}

/// Make a rename or removal in `path`'s directory durable.
fn sync_dir(path: &Path) -> Result<()> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(|e| Error::io(dir, e))
}

/// Why a run cannot start while the state file at `path` is there.
fn refusal(path: &Path) -> Error {
    match HostState::read(path) {
        Err(e) => e,
        Ok(None) => Error::host(format!(
            "{} appeared and went while starting: another mobmem run is starting; try again",
            path.display()
        )),
        Ok(Some(s)) if s.owner_alive() => Error::host(format!(
            "another mobmem {} run (pid {}) is in progress, changing this machine (it holds \
             {}): wait for it to end; nothing was changed",
            s.command,
            s.pid,
            path.display()
        )),
        Ok(Some(s)) => Error::host(format!(
            "a mobmem {} run (pid {}) ended before putting back the {} change(s) it listed \
             in {}: run `mobmem host restore` first; nothing was changed",
            s.command,
            s.pid,
            s.changes.len(),
            path.display()
        )),
    }
}

/// The state file of a run: changes are recorded before they are made and dropped once
/// undone. Shared with signal handlers; [`Journal::none`] records nothing.
#[derive(Clone, Default)]
pub struct Journal(Option<Arc<Mutex<Open>>>);

impl std::fmt::Debug for Journal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Journal({:?})", self.path())
    }
}

struct Open {
    path: PathBuf,
    state: HostState,
    /// Changes recorded so far (for [`KILL_AT_ENV`]).
    recorded: usize,
    kill_at: Option<usize>,
}

impl Journal {
    /// A journal that keeps nothing (library callers and unit tests).
    pub fn none() -> Journal {
        Journal(None)
    }

    /// Create the state file at `path` for `command`; an error if one is there (see
    /// [`refusal`]).
    pub fn begin(path: &Path, command: &str) -> Result<Journal> {
        let dir = state_dir(path);
        fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
        check_state_dir(dir)?;
        let state = HostState::new(command);
        // Written whole under a temporary name, then linked to `path`: linking fails
        // when `path` exists, so two runs can never both own it, and no reader sees it
        // half written.
        let temp = write_temp(path, &state.bytes())?;
        let linked = fs::hard_link(&temp, path);
        let _ = fs::remove_file(&temp);
        match linked {
            Ok(()) => sync_dir(path)?,
            Err(e) if e.kind() == ErrorKind::AlreadyExists => return Err(refusal(path)),
            Err(e) => return Err(Error::io(path, e)),
        }
        let kill_at = std::env::var(KILL_AT_ENV).ok().and_then(|v| v.parse().ok());
        Ok(Journal(Some(Arc::new(Mutex::new(Open {
            path: path.to_path_buf(),
            state,
            recorded: 0,
            kill_at,
        })))))
    }

    fn lock(&self) -> Option<MutexGuard<'_, Open>> {
        self.0
            .as_ref()
            .map(|m| m.lock().unwrap_or_else(|e| e.into_inner()))
    }

    /// Where the state file is.
    pub fn path(&self) -> Option<PathBuf> {
        self.lock().map(|o| o.path.clone())
    }

    /// Write `change` down before it is made; an error means it must not be made.
    pub fn record(&self, change: Change) -> Result<()> {
        let Some(mut open) = self.lock() else {
            return Ok(());
        };
        open.state.changes.push(change);
        if let Err(e) = open.state.write(&open.path) {
            open.state.changes.pop();
            return Err(e);
        }
        open.recorded += 1;
        if open.kill_at == Some(open.recorded) {
            let _ = rustix::process::kill_process(
                rustix::process::getpid(),
                rustix::process::Signal::KILL,
            );
        }
        Ok(())
    }

    /// Drop `change` (the newest equal one) once it is undone.
    pub fn forget(&self, change: &Change) -> Result<()> {
        let Some(mut open) = self.lock() else {
            return Ok(());
        };
        let Some(at) = open.state.changes.iter().rposition(|c| c == change) else {
            return Ok(());
        };
        let removed = open.state.changes.remove(at);
        if let Err(e) = open.state.write(&open.path) {
            open.state.changes.insert(at, removed);
            return Err(e);
        }
        Ok(())
    }

    /// The end of the run: the state file is removed when every change was undone;
    /// otherwise it stays, and the error says what is left and how to put it back.
    pub fn close(&self) -> Result<()> {
        let Some(open) = self.lock() else {
            return Ok(());
        };
        if open.state.changes.is_empty() {
            match fs::remove_file(&open.path) {
                Err(e) if e.kind() != ErrorKind::NotFound => return Err(Error::io(&open.path, e)),
                _ => return sync_dir(&open.path),
            }
        }
        Err(Error::host(format!(
            "{} change(s) are not put back ({}); they stay listed in {}: run `mobmem host \
             restore` once the cause is fixed",
            open.state.changes.len(),
            open.state
                .changes
                .iter()
                .map(Change::describe)
                .collect::<Vec<_>>()
                .join("; "),
            open.path.display()
        )))
    }
}

/// One undo of [`restore`]: what it did and how it went.
#[derive(Debug)]
pub struct Step {
    pub change: Change,
    pub result: Result<()>,
}

/// What [`restore`] found and did.
#[derive(Debug)]
pub enum Restored {
    /// No state file: nothing to put back.
    Nothing,
    /// The run that wrote the file; the file is gone only if every undo succeeded.
    Done { command: String, pid: u32 },
}

/// Put back what a dead run listed in the state file at `path`, telling `step` of each
/// undo as it is done. An undone change leaves the file at once; the file is removed when
/// none is left, and kept (with the failed ones only) otherwise. An error, before
/// anything is touched, when the file is not a state file or its run still runs.
pub fn restore(path: &Path, step: &mut dyn FnMut(&Step)) -> Result<(Restored, usize)> {
    let Some(mut state) = HostState::read(path)? else {
        return Ok((Restored::Nothing, 0));
    };
    if state.owner_alive() {
        return Err(Error::host(format!(
            "the mobmem {} run that holds {} (pid {}) is still running: it puts back what it \
             changes when it ends (Ctrl-C ends it early); nothing was touched",
            state.command,
            path.display(),
            state.pid
        )));
    }
    let order = undo_order(&state.changes);
    let changes = state.changes.clone();
    let mut done = vec![false; changes.len()];
    let mut failures = 0;
    for i in order {
        let result = changes[i].undo();
        if result.is_ok() {
            done[i] = true;
            state.changes = changes
                .iter()
                .zip(&done)
                .filter(|(_, d)| !**d)
                .map(|(c, _)| c.clone())
                .collect();
        }
        let kept = match &result {
            Ok(()) => state.write(path),
            Err(_) => Ok(()),
        };
        let result = result.and(kept);
        if result.is_err() {
            failures += 1;
        }
        step(&Step {
            change: changes[i].clone(),
            result,
        });
    }
    if failures == 0 {
        fs::remove_file(path).map_err(|e| Error::io(path, e))?;
        sync_dir(path)?;
    }
    Ok((
        Restored::Done {
            command: state.command,
            pid: state.pid,
        },
        failures,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cleanup_tools_run_in_a_process_group_of_their_own() {
        // A tool that writes its pid and its process group (field 5 of /proc/PID/stat):
        // it leads a group of its own, so a Ctrl-C at the terminal (sent to the
        // terminal's group, this process's) never reaches it.
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("groups");
        let script = format!(
            "echo $$ > {0}; cut -d' ' -f5 /proc/$$/stat >> {0}",
            out.display()
        );
        tool(
            "sh",
            &[std::ffi::OsStr::new("-c"), std::ffi::OsStr::new(&script)],
        )
        .unwrap();
        let text = fs::read_to_string(&out).unwrap();
        let ids: Vec<&str> = text.split_whitespace().collect();
        assert_eq!(ids.len(), 2, "{text}");
        assert_eq!(ids[0], ids[1], "the tool leads its own group: {text}");
        let ours = rustix::process::getpgrp()
            .as_raw_nonzero()
            .get()
            .to_string();
        assert_ne!(ids[1], ours, "the tool shares this process's group");
    }

    #[test]
    fn the_fuzz_seeds_of_state_files_are_state_files() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/corpus/host-state");
        let mut read = 0;
        for entry in fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if let Ok(state) = HostState::parse(&fs::read(&path).unwrap(), &path) {
                read += 1;
                let again = HostState::parse(&state.bytes(), &path).unwrap();
                assert_eq!(again, state);
            }
        }
        assert!(read >= 1, "none of the seeds in {} parses", dir.display());
    }

    fn dead_state(changes: Vec<Change>) -> HostState {
        HostState {
            format: FORMAT,
            command: "reclaim-validate".into(),
            // Above pid_max: never a live process.
            pid: u32::MAX,
            started: Some(1),
            changes,
        }
    }

    /// A folder others may write into, or someone else's, never holds a state file:
    /// neither a new one nor one to restore from.
    #[test]
    fn state_folders_others_could_write_are_refused() {
        use std::os::unix::fs::PermissionsExt;
        let root = tempfile::tempdir().unwrap();
        let open_dir = root.path().join("open");
        fs::create_dir(&open_dir).unwrap();
        fs::set_permissions(&open_dir, fs::Permissions::from_mode(0o777)).unwrap();
        let path = open_dir.join("host-state.json");
        let message = Journal::begin(&path, "test").unwrap_err().to_string();
        assert!(message.contains("may be written by others"), "{message}");
        assert!(!path.exists());
        // With the sticky bit, as /tmp has, others cannot replace the file.
        fs::set_permissions(&open_dir, fs::Permissions::from_mode(0o1777)).unwrap();
        let journal = Journal::begin(&path, "test").unwrap();
        journal.close().unwrap();

        if !rustix::process::geteuid().is_root() {
            return; // making folders and links of another user needs root
        }
        let theirs = root.path().join("theirs");
        fs::create_dir(&theirs).unwrap();
        let planted = theirs.join("host-state.json");
        dead_state(Vec::new()).write(&planted).unwrap();
        std::os::unix::fs::chown(&theirs, Some(12345), None).unwrap();
        for message in [
            Journal::begin(&theirs.join("new.json"), "test")
                .unwrap_err()
                .to_string(),
            HostState::read(&planted).unwrap_err().to_string(),
        ] {
            assert!(message.contains("owned by uid 12345"), "{message}");
        }
        let mine = root.path().join("mine");
        fs::create_dir(&mine).unwrap();
        let link = root.path().join("link");
        std::os::unix::fs::symlink(&mine, &link).unwrap();
        std::os::unix::fs::lchown(&link, Some(12345), None).unwrap();
        let message = HostState::read(&link.join("host-state.json"))
            .unwrap_err()
            .to_string();
        assert!(message.contains("a link owned by uid 12345"), "{message}");
        // No folder at all: no state file, nothing to refuse.
        assert!(HostState::read(&root.path().join("none/host-state.json"))
            .unwrap()
            .is_none());
    }

    /// An affinity change put back on a thread of this process, found by its name; a
    /// thread of another name at that pid is left alone.
    #[test]
    fn an_affinity_change_is_undone_only_on_the_thread_it_names() {
        let handle = std::thread::Builder::new()
            .name("affinity-test".into())
            .spawn(|| {
                let tid = rustix::thread::gettid();
                let cpus_of = || {
                    let set = rustix::thread::sched_getaffinity(None).unwrap();
                    (0..rustix::thread::CpuSet::MAX_CPU)
                        .filter(|&c| set.is_set(c))
                        .collect::<Vec<usize>>()
                };
                let before = cpus_of();
                let mut one = rustix::thread::CpuSet::new();
                one.set(before[0]);
                rustix::thread::sched_setaffinity(None, &one).unwrap();
                let change = |comm: &str| Change::Affinity {
                    pid: tid.as_raw_nonzero().get(),
                    comm: comm.into(),
                    cpus: before.clone(),
                };
                change("someone-else").undo().unwrap();
                assert_eq!(cpus_of(), vec![before[0]]);
                change("affinity-test").undo().unwrap();
                assert_eq!(cpus_of(), before);
                assert!(change("affinity-test").describe().contains("affinity-test"));
            })
            .unwrap();
        handle.join().unwrap();
    }

    #[test]
    fn a_state_file_reads_back_as_written() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("state.json");
        let state = dead_state(vec![
            Change::Ksm {
                dir: "/sys/kernel/mm/ksm".into(),
                name: "run".into(),
                original: "0".into(),
            },
            Change::Setting {
                path: "/sys/kernel/tracing/buffer_size_kb".into(),
                original: "1410".into(),
            },
            Change::Dir {
                path: "/tmp/x".into(),
            },
            Change::Cgroup {
                path: "/sys/fs/cgroup/memory/x".into(),
            },
            Change::Zram {
                sysfs: "/sys/block/zram0".into(),
                algorithm: "lzo-rle".into(),
            },
            Change::Swap {
                device: "/dev/zram0".into(),
            },
            Change::Mount {
                path: "/sys/kernel/tracing".into(),
            },
            Change::Affinity {
                pid: 37,
                comm: "ksmd".into(),
                cpus: vec![0, 1],
            },
        ]);
        state.write(&path).unwrap();
        assert_eq!(HostState::read(&path).unwrap(), Some(state.clone()));
        assert_eq!(HostState::read(&dir.path().join("none")).unwrap(), None);
        // Only the file itself is left: the temporary one was renamed.
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 1);
        // A link planted at the temporary name is never written through.
        let victim = dir.path().join("victim");
        fs::write(&victim, "kept").unwrap();
        std::os::unix::fs::symlink(&victim, dir.path().join("state.json.partial")).unwrap();
        state.write(&path).unwrap();
        assert_eq!(fs::read_to_string(&victim).unwrap(), "kept");
        assert_eq!(HostState::read(&path).unwrap(), Some(state));
    }

    #[test]
    fn a_corrupt_file_is_an_error_naming_it_and_is_kept() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("state.json");
        for bad in [
            &b"{\"format\": 1, \"command\": "[..],
            b"",
            b"{\"format\": 9, \"command\": \"x\", \"pid\": 1, \"started\": null, \"changes\": []}",
        ] {
            fs::write(&path, bad).unwrap();
            let e = HostState::read(&path).unwrap_err().to_string();
            assert!(
                e.contains(&path.display().to_string()) && e.contains("not a mobmem host state"),
                "{e}"
            );
            let e = restore(&path, &mut |_| {}).unwrap_err().to_string();
            assert!(e.contains(&path.display().to_string()), "{e}");
            let e = Journal::begin(&path, "capture").err().unwrap().to_string();
            assert!(e.contains("not a mobmem host state"), "{e}");
            assert_eq!(fs::read(&path).unwrap(), bad, "left as it was");
        }
    }

    #[test]
    fn a_journal_records_before_and_forgets_after_and_refuses_a_second_run() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sub").join("state.json");
        let journal = Journal::begin(&path, "ksm-validate").unwrap();
        let setting = Change::Setting {
            path: dir.path().join("knob"),
            original: "5".into(),
        };
        journal.record(setting.clone()).unwrap();
        let on_disk = HostState::read(&path).unwrap().unwrap();
        assert_eq!(on_disk.changes, std::slice::from_ref(&setting));
        assert!(on_disk.owner_alive());
        // This process is alive: a second run is told another is in progress.
        let e = Journal::begin(&path, "capture").err().unwrap().to_string();
        assert!(e.contains("another mobmem ksm-validate"), "{e}");
        let e = restore(&path, &mut |_| {}).unwrap_err().to_string();
        assert!(e.contains("still running"), "{e}");
        // Not all undone: the file stays and the error says what to do.
        let e = journal.close().unwrap_err().to_string();
        assert!(e.contains("mobmem host restore"), "{e}");
        assert!(path.exists());
        journal.forget(&setting).unwrap();
        journal.close().unwrap();
        assert!(!path.exists());
        // A dead run's file: refused, pointing at `host restore`.
        dead_state(vec![setting]).write(&path).unwrap();
        let e = Journal::begin(&path, "capture").err().unwrap().to_string();
        assert!(e.contains("run `mobmem host restore`"), "{e}");
        assert!(path.exists());
    }

    #[test]
    fn restore_undoes_in_order_and_keeps_what_failed() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("state.json");
        let knob = dir.path().join("knob");
        let made = dir.path().join("made");
        fs::create_dir(&made).unwrap();
        fs::write(made.join("f"), "x").unwrap();
        fs::write(&knob, "changed twice").unwrap();
        let bad = Change::Setting {
            // In a directory that does not exist: writing it fails.
            path: dir.path().join("nope").join("knob"),
            original: "1".into(),
        };
        let changes = vec![
            Change::Setting {
                path: knob.clone(),
                original: "original".into(),
            },
            Change::Setting {
                path: knob.clone(),
                original: "changed once".into(),
            },
            Change::Dir { path: made.clone() },
            // Recorded but never made: nothing to do.
            Change::Dir {
                path: dir.path().join("never"),
            },
        ];
        dead_state(changes).write(&path).unwrap();
        let mut seen = Vec::new();
        let (_, failures) = restore(&path, &mut |s| seen.push(s.result.is_ok())).unwrap();
        assert_eq!(seen, [true; 4]);
        assert!(!made.exists());
        assert_eq!(failures, 0);
        // Newest first: the second change's original, then the first's.
        assert_eq!(fs::read_to_string(&knob).unwrap(), "original");
        assert!(!path.exists());

        dead_state(vec![
            bad.clone(),
            Change::Setting {
                path: knob.clone(),
                original: "again".into(),
            },
        ])
        .write(&path)
        .unwrap();
        let (_, failures) = restore(&path, &mut |_| {}).unwrap();
        assert_eq!(failures, 1);
        assert_eq!(fs::read_to_string(&knob).unwrap(), "again");
        assert_eq!(HostState::read(&path).unwrap().unwrap().changes, [bad]);
    }

    #[test]
    fn ksmd_is_stopped_first_when_it_was_off() {
        let ksm = |name: &str, original: &str| Change::Ksm {
            dir: "/k".into(),
            name: name.into(),
            original: original.into(),
        };
        let changes = [
            ksm("run", "0"),
            ksm("pages_to_scan", "100"),
            ksm("smart_scan", "1"),
        ];
        assert_eq!(undo_order(&changes), [0, 2, 1]);
        let changes = [ksm("run", "1"), ksm("pages_to_scan", "100")];
        assert_eq!(undo_order(&changes), [1, 0]);
    }
}
