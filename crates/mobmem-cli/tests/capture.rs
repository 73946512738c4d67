//! `mobmem capture` on this machine's kernel: real captures (a file read after the page
//! cache was dropped, attaching for a duration, a signal, a malformed line, a command that
//! outlives the duration), each checking that every tracing setting and the mount state
//! are put back. They need root and tracefs; where they cannot run each prints
//! `skipped: NAME (reason)` (see `common::skip`) and passes. They take turns: each
//! capture changes the same global settings.

mod common;
use common::assert_mentions;

use std::collections::BTreeMap;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

use mobmem::trace::{EventKind, Trace};

const TRACEFS: &str = mobmem::host::tracefs::TRACEFS;

/// Where the capture finds tracefs: its own mount point, else debugfs's `tracing`
/// (as `host::tracefs` looks), so that a host with tracefs only under debugfs is read
/// and written where the capture does.
fn tracefs_dir() -> &'static Path {
    [TRACEFS, mobmem::host::tracefs::DEBUGFS_TRACING]
        .into_iter()
        .map(Path::new)
        .find(|p| p.join("trace").exists())
        .unwrap_or(Path::new(TRACEFS))
}

/// One real capture at a time in this test binary.
static TRACEFS_TURN: Mutex<()> = Mutex::new(());

/// Whether tracefs's own mount point is mounted (the one a capture mounts when tracefs
/// is nowhere, and must unmount again).
fn mounted() -> bool {
    Path::new(TRACEFS).join("trace").exists()
}

/// Every setting the capture may change, by file, as its effective value.
fn settings() -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let mut files = vec![
        "tracing_on".to_string(),
        "buffer_size_kb".to_string(),
        "options/record-tgid".to_string(),
        "current_tracer".to_string(),
    ];
    for group in ["filemap", "oom", "task", "sched", "exceptions", "vmscan"] {
        let dir = tracefs_dir().join("events").join(group);
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for e in entries.flatten() {
            if e.path().join("enable").exists() {
                files.push(format!(
                    "events/{group}/{}/enable",
                    e.file_name().to_string_lossy()
                ));
            }
        }
    }
    for f in files {
        if let Ok(text) = std::fs::read_to_string(tracefs_dir().join(&f)) {
            let text = text.trim();
            out.insert(f, text.to_string());
        }
    }
    out
}

/// Whether `buffer_size_kb` reads as restored. Before its first use the ring buffer is
/// not allocated and the file reads `7 (expanded: 1408)`; tracefs cannot free it again,
/// so the capture restores the expanded size, which the kernel rounds up to whole
/// sub-buffer pages (1408 reads back as 1410 with 4080-byte pages).
fn buffer_size_restored(before: Option<&str>, after: Option<&str>) -> bool {
    match (before, after) {
        (Some(b), Some(a)) if a == b => true,
        (Some(b), Some(a)) => match b.split_once("(expanded: ") {
            None => false,
            Some((_, e)) => {
                let parse = |t: &str| t.trim_end_matches(')').trim().parse::<u64>().ok();
                match (parse(e), parse(a)) {
                    (Some(expanded), Some(now)) => (expanded..expanded + 4).contains(&now),
                    _ => false,
                }
            }
        },
        (b, a) => b == a,
    }
}

#[test]
fn buffer_size_restored_accepts_only_the_kernels_rounding() {
    assert!(buffer_size_restored(Some("1410"), Some("1410")));
    assert!(!buffer_size_restored(Some("1410"), Some("4096")));
    assert!(buffer_size_restored(
        Some("7 (expanded: 1408)"),
        Some("1410")
    ));
    assert!(buffer_size_restored(
        Some("7 (expanded: 1408)"),
        Some("7 (expanded: 1408)")
    ));
    assert!(!buffer_size_restored(
        Some("7 (expanded: 1408)"),
        Some("32768")
    ));
    assert!(!buffer_size_restored(Some("7 (expanded: 1408)"), None));
}

/// The settings, mounting tracefs for the look if needed (and unmounting it again).
fn settings_as_found() -> Result<(bool, BTreeMap<String, String>), String> {
    if mounted() {
        return Ok((true, settings()));
    }
    let ok = Command::new("mount")
        .args(["-t", "tracefs", "nodev", TRACEFS])
        .status()
        .map(|s| s.success())
        .unwrap_or(false);
    if !ok {
        return Err("tracefs is not mounted and cannot be mounted here".into());
    }
    let s = settings();
    let _ = Command::new("umount").arg(TRACEFS).status();
    Ok((false, s))
}

fn is_root() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("Uid:"))
                .map(|l| l.split_whitespace().nth(2) == Some("0"))
        })
        .unwrap_or(false)
}

/// The tracing settings and mount state as a real capture found them, and this test's
/// turn to capture.
struct RealTracefs {
    was_mounted: bool,
    before: BTreeMap<String, String>,
    _turn: MutexGuard<'static, ()>,
}

/// Whether real captures can run here; if not, the test `name` is reported as skipped.
fn real_tracefs(name: &str) -> Option<RealTracefs> {
    if !is_root() {
        common::skip(name, "not root");
        return None;
    }
    if !Path::new("/proc/sys/vm/drop_caches").exists() {
        common::skip(name, "no /proc/sys/vm/drop_caches");
        return None;
    }
    // A failed test elsewhere must not stop the others from running.
    let turn = TRACEFS_TURN.lock().unwrap_or_else(|e| e.into_inner());
    let (was_mounted, before) = match settings_as_found() {
        Ok(x) => x,
        Err(reason) => {
            common::skip(name, &reason);
            return None;
        }
    };
    if !before.contains_key("events/filemap/mm_filemap_add_to_page_cache/enable") {
        common::skip(name, "this kernel has no filemap trace events");
        return None;
    }
    Some(RealTracefs {
        was_mounted,
        before,
        _turn: turn,
    })
}

impl RealTracefs {
    /// Every setting as it was, tracefs mounted or not as it was.
    fn assert_restored(&self) {
        assert_eq!(
            mounted(),
            self.was_mounted,
            "tracefs mount state not restored"
        );
        let (_, mut after) = settings_as_found().expect("tracefs still mountable");
        let mut before = self.before.clone();
        let (size_before, size_after) = (
            before.remove("buffer_size_kb"),
            after.remove("buffer_size_kb"),
        );
        assert!(
            buffer_size_restored(size_before.as_deref(), size_after.as_deref()),
            "buffer_size_kb was {size_before:?}, is {size_after:?}"
        );
        assert_eq!(after, before, "tracing settings not restored");
    }
}

/// The mobmem binary under test.
fn mobmem() -> Command {
    Command::new(env!("CARGO_BIN_EXE_mobmem"))
}

/// Whether `pid` is a live process (a zombie has ended).
fn alive(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => false,
        Ok(stat) => stat
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().next())
            .is_some_and(|state| state != "Z" && state != "X"),
    }
}

/// The pids a command wrote to `file`, one a line, once there are `count` of them.
fn wait_for_pids(file: &Path, count: usize, within: Duration) -> Vec<u32> {
    let start = Instant::now();
    loop {
        let pids: Vec<u32> = std::fs::read_to_string(file)
            .unwrap_or_default()
            .lines()
            .filter_map(|l| l.trim().parse().ok())
            .collect();
        if pids.len() >= count {
            return pids;
        }
        assert!(
            start.elapsed() < within,
            "the command wrote {} of {count} pids to {} within {within:?}",
            pids.len(),
            file.display()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Start `command` with its stdout and stderr in files of `dir` (not pipes, which any
/// process left running would hold open, so that waiting for the output would wait for
/// it too).
fn spawn_logged(command: &mut Command, dir: &Path) -> Child {
    let file = |name: &str| Stdio::from(std::fs::File::create(dir.join(name)).unwrap());
    command
        .stdout(file("stdout"))
        .stderr(file("stderr"))
        .spawn()
        .unwrap()
}

/// `mobmem capture --out OUT ARGS... -- sh -c SCRIPT`, started by [`spawn_logged`] in
/// `dir`, with no input.
fn spawn_capture(dir: &Path, out: &Path, args: &[&str], script: &str) -> Child {
    let mut capture = mobmem();
    capture
        .args(["capture", "--out"])
        .arg(out)
        .args(args)
        .args(["--", "sh", "-c", script])
        .stdin(Stdio::null());
    spawn_logged(&mut capture, dir)
}

/// Wait for a child of [`spawn_logged`], killing it (and failing) if it takes longer
/// than `within`.
fn wait_within(mut child: Child, dir: &Path, within: Duration) -> Output {
    let start = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > within {
            let _ = child.kill();
            let _ = child.wait();
            panic!("mobmem capture did not end within {within:?}");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    Output {
        status: child.wait().unwrap(),
        stdout: std::fs::read(dir.join("stdout")).unwrap(),
        stderr: std::fs::read(dir.join("stderr")).unwrap(),
    }
}

/// The processes of a trace with this pid.
fn procs_with_pid(t: &Trace, pid: u32) -> Vec<u32> {
    t.tables
        .processes
        .iter()
        .enumerate()
        .filter(|(_, p)| p.pid == pid)
        .map(|(i, _)| i as u32)
        .collect()
}

/// The importance events of process `proc`, as (time, oom_score_adj), and its start time.
fn importance_of(t: &Trace, proc: u32) -> (Option<u64>, Vec<(u64, i16)>) {
    let start = t
        .events
        .iter()
        .find(|e| e.proc() == proc && e.kind() == EventKind::Start)
        .map(|e| e.time_ns());
    let adj = t
        .events
        .iter()
        .filter(|e| e.proc() == proc && e.kind() == EventKind::Importance)
        .map(|e| (e.time_ns(), e.oom_score_adj()))
        .collect();
    (start, adj)
}

/// A file on a disk file system (not tmpfs, whose pages these events do not show).
fn disk_dir() -> tempfile::TempDir {
    tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap()
}

/// `mobmem capture --out OUT ARGS...` run to its end, then every setting checked
/// restored.
fn capture(tracefs: &RealTracefs, out: &Path, args: &[&str]) -> Output {
    let run = mobmem()
        .args(["capture", "--out"])
        .arg(out)
        .args(args)
        .output()
        .expect("run mobmem capture");
    tracefs.assert_restored();
    run
}

/// A capture's folder on disk, its trace and the file its command writes pids to.
struct Scratch {
    dir: tempfile::TempDir,
    out: PathBuf,
    pids: PathBuf,
}

fn scratch(trace: &str) -> Scratch {
    let dir = disk_dir();
    Scratch {
        out: dir.path().join(trace),
        pids: dir.path().join("pids"),
        dir,
    }
}

impl Scratch {
    /// [`spawn_capture`] in this folder, waited for (30 s at most), then every setting
    /// checked restored.
    fn capture_script(&self, tracefs: &RealTracefs, args: &[&str], script: &str) -> Output {
        let capture = spawn_capture(self.dir.path(), &self.out, args, script);
        let run = wait_within(capture, self.dir.path(), Duration::from_secs(30));
        tracefs.assert_restored();
        run
    }

    /// The pids the command wrote (at least `count`): every one must have ended.
    fn assert_all_ended(&self, count: usize) {
        assert_ended(wait_for_pids(&self.pids, count, Duration::ZERO));
    }
}

fn assert_ended(pids: Vec<u32>) {
    for pid in pids {
        assert!(!alive(pid), "process {pid} of the command survived");
    }
}

/// Stderr of a capture, which must have succeeded (or failed, as `success` says).
fn stderr_of(run: &Output, success: bool) -> String {
    let stderr = String::from_utf8_lossy(&run.stderr).to_string();
    assert_eq!(run.status.success(), success, "{stderr}");
    stderr
}

#[test]
fn capture_real_tracefs() {
    let Some(tracefs) = real_tracefs("capture_real_tracefs") else {
        return;
    };

    let dir = disk_dir();
    let data = dir.path().join("data.bin");
    let bytes: Vec<u8> = (0..1_048_576u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect();
    std::fs::write(&data, &bytes).unwrap();
    let meta = std::fs::metadata(&data).unwrap();
    let out = dir.path().join("cat.mmt");
    // The command prints on stdout: that goes to mobmem's stderr, and mobmem's stdout
    // is the JSON report alone.
    let script = format!(
        "echo the command speaks; cat '{}' > /dev/null; echo done",
        data.display()
    );
    let run = capture(
        &tracefs,
        &out,
        &["--drop-caches", "--json", "--", "sh", "-c", &script],
    );
    let stderr = stderr_of(&run, true);
    let report: serde_json::Value = serde_json::from_slice(&run.stdout).unwrap_or_else(|e| {
        panic!(
            "stdout is not the JSON report ({e}): {}",
            String::from_utf8_lossy(&run.stdout)
        )
    });
    assert_mentions(&stderr, &["the command speaks\n"]);
    assert!(
        report["used"]["mm_filemap_add_to_page_cache"]
            .as_u64()
            .unwrap_or(0)
            > 0
    );

    // cat read the whole file through the page cache: its 256 pages, as accesses of a
    // process named cat, keyed by the file's device and inode.
    let t = mobmem::trace::read_all(&out, None).unwrap();
    let dev = meta.dev();
    let major = ((dev >> 8) & 0xfff) as u32 | ((dev >> 32) as u32 & !0xfff);
    let minor = (dev & 0xff) as u32 | ((dev >> 12) as u32 & !0xff);
    let owner = mobmem::trace::ftrace::file_owner(major, minor, meta.ino()).unwrap();
    let cat: Vec<u32> = t
        .tables
        .processes
        .iter()
        .enumerate()
        .filter(|(_, p)| p.name == "cat")
        .map(|(i, _)| i as u32)
        .collect();
    assert!(
        !cat.is_empty(),
        "no process named cat in {:?}",
        t.tables.processes
    );
    let mut pages: Vec<u64> = t
        .accesses()
        .filter(|e| cat.contains(&e.proc()))
        .map(|e| t.tables.pages[e.page() as usize])
        .filter(|k| k.owner == owner)
        .map(|k| k.index)
        .collect();
    pages.sort_unstable();
    pages.dedup();
    assert!(
        (0..256).all(|i| pages.binary_search(&i).is_ok()),
        "cat's pages of the file: {} of 256 (dev {major}:{minor} ino {})",
        pages.len(),
        meta.ino()
    );
}

/// Without privileges (run as `nobody` through setpriv) the capture says why and fails,
/// whether tracefs is mounted (not writable) or not (cannot be mounted).
#[test]
fn capture_without_privileges_fails_with_the_reason() {
    if !is_root() || !Path::new("/usr/bin/setpriv").exists() {
        common::skip(
            "capture_without_privileges_fails_with_the_reason",
            "needs root and setpriv to drop privileges",
        );
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("x.mmt");
    // A state file in a folder of nobody's own (its default would stay in the temporary
    // directory; a folder others may write is refused), so that the capture gets as far
    // as tracefs.
    let state = dir.path().join("state");
    std::fs::create_dir(&state).unwrap();
    std::os::unix::fs::chown(&state, Some(65534), Some(65534)).unwrap();
    for (path, mode) in [(dir.path(), 0o711), (state.as_path(), 0o700)] {
        std::fs::set_permissions(path, std::os::unix::fs::PermissionsExt::from_mode(mode)).unwrap();
    }
    let run = Command::new("/usr/bin/setpriv")
        .args(["--reuid=65534", "--regid=65534", "--clear-groups"])
        .arg(env!("CARGO_BIN_EXE_mobmem"))
        .args(["capture", "--out"])
        .arg(&out)
        .arg("--state-file")
        .arg(state.join("state.json"))
        .args(["--", "true"])
        .output()
        .expect("run setpriv");
    let err = String::from_utf8_lossy(&run.stderr);
    if err.contains("Permission denied") && err.contains("mobmem") && !err.contains("tracefs") {
        common::skip(
            "capture_without_privileges_fails_with_the_reason",
            "nobody cannot run the binary here",
        );
        return;
    }
    assert!(!run.status.success(), "{err}");
    assert_mentions(&err, &["needs root"]);
    assert!(!out.exists());
}

/// Attaching to the running system for a duration: a process that set its oom_score_adj
/// to 500 before the capture has importance 500 from its first event on.
#[test]
fn attach_takes_importance_from_oom_score_adj() {
    let Some(tracefs) = real_tracefs("attach_takes_importance_from_oom_score_adj") else {
        return;
    };
    // It forks a sleep every 50 ms, so it has events in any second of trace.
    let mut busy = Command::new("sh")
        .args([
            "-c",
            "echo 500 > /proc/self/oom_score_adj; while :; do sleep 0.05; done",
        ])
        .spawn()
        .unwrap();
    let pid = busy.id();
    let adj_file = format!("/proc/{pid}/oom_score_adj");
    let start = Instant::now();
    while std::fs::read_to_string(&adj_file)
        .unwrap_or_default()
        .trim()
        != "500"
    {
        assert!(start.elapsed() < Duration::from_secs(10), "adj not set");
        std::thread::sleep(Duration::from_millis(20));
    }
    let dir = disk_dir();
    let out = dir.path().join("attach.mmt");
    let run = capture(&tracefs, &out, &["--duration", "1", "--no-anon-faults"]);
    let _ = busy.kill();
    let _ = busy.wait();
    stderr_of(&run, true);
    let t = mobmem::trace::read_all(&out, None).unwrap();
    let procs = procs_with_pid(&t, pid);
    assert_eq!(procs.len(), 1, "process {pid} in {:?}", t.tables.processes);
    let (started, adj) = importance_of(&t, procs[0]);
    assert!(started.is_some());
    assert_eq!(adj.first(), Some(&(started.unwrap(), 500)), "{adj:?}");
}

/// The command starts with mobmem's own oom_score_adj (here 300): unmarked (another
/// process is marked foreground), it has that importance from its start.
#[test]
fn the_command_has_the_importance_it_started_with() {
    let Some(tracefs) = real_tracefs("the_command_has_the_importance_it_started_with") else {
        return;
    };
    let scratch = scratch("own.mmt");
    let run = Command::new("sh")
        .args([
            "-c",
            "echo 300 > /proc/self/oom_score_adj && exec \"$0\" \"$@\"",
            env!("CARGO_BIN_EXE_mobmem"),
            "capture",
            "--out",
        ])
        .arg(&scratch.out)
        .args(["--foreground", "no-such-process", "--", "sh", "-c"])
        .arg(format!(
            "echo $$ > '{}'; sleep 0.1; sleep 0.1",
            scratch.pids.display()
        ))
        .output()
        .expect("run mobmem capture");
    tracefs.assert_restored();
    stderr_of(&run, true);
    let pid: u32 = std::fs::read_to_string(&scratch.pids)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    let t = mobmem::trace::read_all(&scratch.out, None).unwrap();
    let procs = procs_with_pid(&t, pid);
    assert_eq!(procs.len(), 1, "process {pid} in {:?}", t.tables.processes);
    let (started, adj) = importance_of(&t, procs[0]);
    assert!(started.is_some());
    assert_eq!(adj, vec![(started.unwrap(), 300)]);
}

/// A capture of a shell that starts a second `sleep` and sleeps itself, with `args`,
/// sent `signal` once both run: its output and the two pids.
fn signalled_mid_run(scratch: &Scratch, args: &[&str], signal: &str) -> (Output, Vec<u32>) {
    let capture = spawn_capture(
        scratch.dir.path(),
        &scratch.out,
        args,
        &format!(
            "sleep 60 & echo $! >> '{0}'; echo $$ >> '{0}'; sleep 61",
            scratch.pids.display()
        ),
    );
    let started = wait_for_pids(&scratch.pids, 2, Duration::from_secs(30));
    std::thread::sleep(Duration::from_millis(300));
    common::kill(capture.id(), signal);
    let run = wait_within(capture, scratch.dir.path(), Duration::from_secs(30));
    (run, started)
}

/// SIGTERM in the middle of a capture: the command and everything it started end, the
/// settings are put back, mobmem fails, and no trace (nor a raw text that looks whole)
/// is left.
#[test]
fn sigterm_ends_the_capture_without_a_trace() {
    let Some(tracefs) = real_tracefs("sigterm_ends_the_capture_without_a_trace") else {
        return;
    };
    let scratch = scratch("term.mmt");
    let (dir, out) = (&scratch.dir, &scratch.out);
    let raw = dir.path().join("term.txt");
    let args = [
        "--raw",
        raw.to_str().unwrap(),
        "--duration",
        "60",
        "--no-anon-faults",
    ];
    let (run, started) = signalled_mid_run(&scratch, &args, "TERM");
    tracefs.assert_restored();
    assert_ended(started);
    let stderr = stderr_of(&run, false);
    assert_mentions(&stderr, &["interrupted"]);
    let left: Vec<PathBuf> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert!(!out.exists(), "{left:?}");
    assert!(!raw.exists(), "{left:?}");
    let mut partial = raw.into_os_string();
    partial.push(".partial");
    assert!(Path::new(&partial).exists(), "{left:?}");
    // pids, term.txt.partial and the two logs.
    assert_eq!(left.len(), 4, "{left:?}");
}

/// SIGKILL in the middle of a capture: nothing of mobmem runs any more, yet the command
/// and what it started end (its watcher sees mobmem's pipe close), and `host restore`
/// puts the settings back.
#[test]
fn sigkill_ends_the_command_too() {
    let Some(tracefs) = real_tracefs("sigkill_ends_the_command_too") else {
        return;
    };
    let scratch = scratch("killed.mmt");
    let state_file = scratch.dir.path().join("state.json");
    let args = [
        "--state-file",
        state_file.to_str().unwrap(),
        "--duration",
        "60",
        "--no-anon-faults",
    ];
    let (run, started) = signalled_mid_run(&scratch, &args, "KILL");
    assert!(!run.status.success());
    // The watcher sends SIGTERM at once, SIGKILL 2 s later.
    common::wait_until(
        Duration::from_secs(10),
        Duration::from_millis(50),
        "the command outlived mobmem",
        || !started.iter().any(|&pid| alive(pid)),
    );
    assert_ended(started);
    common::host_restore(&state_file);
    tracefs.assert_restored();
    assert!(!scratch.out.exists());
}

/// --duration stops a command that runs longer, and the processes it started with it.
#[test]
fn duration_ends_the_command_and_its_descendants() {
    let Some(tracefs) = real_tracefs("duration_ends_the_command_and_its_descendants") else {
        return;
    };
    let scratch = scratch("long.mmt");
    let run = scratch.capture_script(
        &tracefs,
        &["--duration", "1", "--no-anon-faults"],
        &format!(
            "sleep 60 & echo $! >> '{0}'; (sleep 60; true) & echo $! >> '{0}'; echo $$ >> '{0}'; sleep 61",
            scratch.pids.display()
        ),
    );
    scratch.assert_all_ended(3);
    let stderr = stderr_of(&run, true);
    assert_mentions(&stderr, &["still running after --duration"]);
    assert!(scratch.out.exists());
}

/// With --strict a malformed line is fatal; the command and what it started end too.
/// A line written to trace_marker after a line break is not an event line.
#[test]
fn strict_error_ends_the_command() {
    let Some(tracefs) = real_tracefs("strict_error_ends_the_command") else {
        return;
    };
    let scratch = scratch("strict.mmt");
    let run = scratch.capture_script(
        &tracefs,
        &["--strict", "--no-anon-faults"],
        &format!(
            "echo $$ >> '{0}'; sleep 60 & echo $! >> '{0}'; sleep 0.2; \
             printf 'marker\\nnot an event line\\n' > {1}/trace_marker; wait",
            scratch.pids.display(),
            tracefs_dir().display()
        ),
    );
    let stderr = stderr_of(&run, false);
    assert_mentions(&stderr, &["trace_pipe: line ", "not an event line"]);
    assert!(!scratch.out.exists());
    scratch.assert_all_ended(2);
}

/// A capture that keeps no event (the only marked process never runs) fails, says so,
/// and writes nothing.
#[test]
fn capture_without_events_fails() {
    let Some(tracefs) = real_tracefs("capture_without_events_fails") else {
        return;
    };
    let scratch = scratch("empty.mmt");
    let run = capture(
        &tracefs,
        &scratch.out,
        &[
            "--marked-only",
            "--foreground",
            "no-such-process",
            "--no-anon-faults",
            "--",
            "true",
        ],
    );
    let stderr = stderr_of(&run, false);
    assert_mentions(&stderr, &["no events found"]);
    assert!(!scratch.out.exists());
}

/// Killed with SIGKILL at seeded points among the changes it records (the tracefs mount
/// when it mounts it, then about 22 tracing settings): `mobmem host restore` puts every
/// one back, and unmounts tracefs if the capture mounted it.
#[test]
fn host_restore_puts_back_what_a_killed_capture_changed() {
    let name = "host_restore_puts_back_what_a_killed_capture_changed";
    let Some(tracefs) = real_tracefs(name) else {
        return;
    };
    let scratch = scratch("killed.mmt");
    let out = &scratch.out;
    let state_file = scratch.dir.path().join("state.json");
    let args = ["capture", "--out", out.to_str().unwrap(), "--", "true"];
    for point in common::kill_points(35, 24, 5) {
        let report = common::restored_after_kill_at(&args, &state_file, point);
        if report.is_some() {
            assert!(!out.exists(), "killed at {point}: a trace was written");
        }
        eprintln!("killed at {point}: {}", report.unwrap_or_default());
        tracefs.assert_restored();
        let _ = std::fs::remove_file(out);
    }
}
