//! `mobmem ksm`, `mobmem snapshot` and `mobmem ksm-validate` end to end.

mod common;

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

use common::{
    assert_figures, assert_mentions, fails, findings_and_paper_figures, json, kill, measured,
    mobmem, ok, reproduce, temp_file, wait_until,
};

#[test]
fn ksm_on_the_android_preset_saves_memory_and_off_saves_none() {
    let on = json(&["ksm", "--duration-s", "30", "--sample-ms", "1000", "--json"]);
    let samples = on["samples"].as_array().unwrap();
    assert_eq!(
        samples.len(),
        31,
        "one sample per second, both ends included"
    );
    let last = &samples[30];
    let sharing = last["counters"]["pages_sharing"].as_u64().unwrap();
    let saved = last["memory"]["saved"].as_u64().unwrap();
    let pages = last["memory"]["pages"].as_u64().unwrap();
    let frames = last["memory"]["frames"].as_u64().unwrap();
    assert!(sharing > 0, "KSM merged nothing in 30 s");
    // Without use_zero_pages every page saved is a page sharing a KSM page; the
    // counter learns of a copy-on-write break only at ksmd's next visit, so it may lag
    // behind the truth, never run ahead of it.
    assert!(
        saved <= sharing && saved * 10 >= sharing * 9,
        "saved {saved}, sharing {sharing}"
    );
    assert_eq!(
        frames + saved,
        pages,
        "frames in use + saved = pages mapped"
    );
    // The kernel's general_profit: saved bytes less the rmap items' metadata.
    let profit = last["counters"]["general_profit"].as_i64().unwrap();
    assert!(profit < (saved * 4096) as i64);

    let off = json(&["ksm", "--duration-s", "30", "--off", "--json"]);
    let last_off = off["samples"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(last_off["memory"]["saved"], 0);
    assert_eq!(last_off["counters"]["pages_scanned"], 0);
}

#[test]
fn ksm_output_does_not_depend_on_threads_and_follows_the_seed() {
    let args = |threads: &str, seed: &str| {
        ok(&[
            "ksm",
            "--duration-s",
            "10",
            "--seed",
            seed,
            "--threads",
            threads,
            "--csv",
        ])
    };
    let one = args("1", "3");
    assert_eq!(one, args("2", "3"));
    assert_ne!(one, args("1", "4"), "another seed gives another workload");
    let header = one.lines().next().unwrap();
    assert_mentions(header, &["pages_sharing"]);
}

#[test]
fn ksm_bad_settings_are_clear_errors() {
    let (_dir, config) = temp_file("ksm.toml", "pages_to_scan = 80\nsleep_milisecs = 20\n");
    let err = fails(&["ksm", "--config", config.to_str().unwrap()]);
    assert_mentions(&err, &["ksm.toml", "sleep_milisecs"]);
    let err = fails(&["ksm", "--pages-to-scan", "0"]);
    assert_mentions(&err, &["pages_to_scan"]);
}

/// Start one hidden ksm-validate worker (it maps, fills and holds its pages until its
/// stdin closes; 16 more pages it only reads, so they map the kernel's zero page) and
/// wait until it says it is ready.
fn start_worker(index: u32) -> Child {
    let mut child = Command::new(env!("CARGO_BIN_EXE_mobmem"))
        .args([
            "ksm-validate",
            "--worker",
            &index.to_string(),
            "--workers",
            "2",
            "--duplicate",
            "50",
            "--unique",
            "20",
            "--zero",
            "30",
            "--volatile",
            "0",
            "--read-pages",
            "16",
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("start a worker");
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    assert_eq!(line.trim(), "ready");
    child
}

#[test]
fn snapshot_of_live_processes_counts_their_zero_and_duplicate_pages() {
    let mut workers = [start_worker(0), start_worker(1)];
    let pids: Vec<String> = workers.iter().map(|w| w.id().to_string()).collect();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("two.ksnap");
    let out = mobmem(&[
        "snapshot",
        "--pid",
        &pids[0],
        &pids[1],
        "--out",
        file.to_str().unwrap(),
    ]);
    for w in workers.iter_mut() {
        let _ = w.kill();
        let _ = w.wait();
    }
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        if err.contains("ermission") || err.contains("not permitted") {
            common::skip("snapshot_of_live_processes", err.trim());
            return;
        }
        panic!("snapshot failed: {err}");
    }
    let report = json(&["snapshot", "--info", file.to_str().unwrap(), "--json"]);
    let get = |k: &str| report[k].as_u64().unwrap();
    // Each worker holds 30 pages it wrote zeros to and 50 pages whose contents the
    // other worker also has; the rest of the process (its heap, stacks) adds a few.
    assert!(get("duplicate") >= 50, "{report}");
    if report["frames_known"] == true {
        // The 2 x 16 pages only read map the kernel's zero page: reported apart and not
        // counted as mergeable zero pages (they would make 'zero' at least 92).
        assert!(get("zero_page_mappings") >= 32, "{report}");
        assert!((60..92).contains(&get("zero")), "{report}");
        assert_eq!(report["upper_bound"], false);
    } else {
        assert!(get("zero") >= 92, "{report}");
        assert_eq!(report["upper_bound"], true);
        common::skip(
            "snapshot_zero_page_mappings",
            "pagemap shows frame numbers to root only",
        );
    }
    assert_eq!(
        report["zero"].as_u64().unwrap()
            + report["duplicate"].as_u64().unwrap()
            + report["unique"].as_u64().unwrap(),
        report["pages"].as_u64().unwrap()
    );
    // The simulator starts from the snapshot and, given time, merges all it can:
    // every duplicate and every zero page but one.
    let run = json(&[
        "ksm",
        "--snapshot",
        file.to_str().unwrap(),
        "--duration-s",
        "5",
        "--json",
    ]);
    let last = run["samples"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(last["memory"]["saved"], report["saveable"], "{last}");
}

#[test]
fn snapshot_info_on_a_foreign_file_is_a_clear_error() {
    let (_dir, file) = temp_file("x.ksnap", "not a snapshot\n");
    let err = fails(&["snapshot", "--info", file.to_str().unwrap()]);
    assert_mentions(&err, &["x.ksnap", "offset 0"]);
}

#[test]
fn ksm_validate_without_ksm_says_so_and_fails() {
    let err = fails(&["ksm-validate", "--sysfs", "/nonexistent/ksm"]);
    assert_mentions(&err, &["KSM is not available"]);
}

/// A fake KSM sysfs directory: every setting ksm-validate may change, zero counters;
/// `without` is left out.
fn fake_sysfs(without: &[&str]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (name, value) in [
        ("run", "0"),
        ("pages_to_scan", "100"),
        ("sleep_millisecs", "20"),
        ("use_zero_pages", "0"),
        ("smart_scan", "1"),
        ("advisor_mode", "[none] scan-time"),
        ("max_page_sharing", "256"),
        ("pages_shared", "0"),
        ("pages_sharing", "0"),
        ("pages_unshared", "0"),
        ("pages_volatile", "0"),
        ("full_scans", "0"),
        ("pages_scanned", "0"),
    ] {
        if !without.contains(&name) {
            std::fs::write(dir.path().join(name), format!("{value}\n")).unwrap();
        }
    }
    dir
}

/// Every file of a directory and its value, as the kernel would show it: trimmed, and
/// a selector ("[none] scan-time") by its choice (the kernel shows the brackets again
/// after "none" is written back; a plain file cannot).
fn dir_contents(dir: &Path) -> Vec<(String, String)> {
    let mut v: Vec<(String, String)> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            let content = std::fs::read_to_string(e.path()).unwrap_or_else(|_| "<dir>".into());
            let content = content.trim();
            let value = match (content.find('['), content.find(']')) {
                (Some(a), Some(b)) if a < b => &content[a + 1..b],
                _ => content,
            };
            (
                e.file_name().to_string_lossy().into_owned(),
                value.to_string(),
            )
        })
        .collect();
    v.sort();
    v
}

/// `mobmem ksm-validate --sysfs FAKE ARGS...` must fail (exit code 1) with a message
/// naming `expect`, and leave every file of `fake` as it was.
fn fails_leaving_sysfs_unchanged(fake: &Path, args: &[&str], expect: &str) {
    let before = dir_contents(fake);
    let state = tempfile::tempdir().unwrap();
    let state_file = state.path().join("state.json");
    let mut all = vec![
        "ksm-validate",
        "--sysfs",
        fake.to_str().unwrap(),
        "--state-file",
        state_file.to_str().unwrap(),
    ];
    all.extend_from_slice(args);
    let out = mobmem(&all);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains(expect), "{err}");
    assert_eq!(dir_contents(fake), before, "{err}");
    assert!(!state_file.exists(), "everything put back: no state file");
}

#[test]
fn ksm_validate_without_use_zero_pages_changes_nothing() {
    let fake = fake_sysfs(&["use_zero_pages"]);
    fails_leaving_sysfs_unchanged(
        fake.path(),
        &["--use-zero-pages", "--duration-s", "1"],
        "use_zero_pages",
    );
}

#[test]
fn ksm_validate_restores_every_setting_when_it_fails_midway() {
    // sleep_millisecs cannot be read: the run fails after changing run, advisor_mode,
    // smart_scan, use_zero_pages and pages_to_scan.
    let fake = fake_sysfs(&["sleep_millisecs"]);
    std::fs::create_dir(fake.path().join("sleep_millisecs")).unwrap();
    fails_leaving_sysfs_unchanged(
        fake.path(),
        &["--pages-to-scan", "40", "--duration-s", "1"],
        "sleep_millisecs",
    );
}

#[test]
fn ksm_validate_checks_its_settings_before_touching_the_kernel() {
    let fake = fake_sysfs(&[]);
    let start = std::time::Instant::now();
    fails_leaving_sysfs_unchanged(fake.path(), &["--pages-to-scan", "0"], "pages_to_scan");
    assert!(start.elapsed().as_secs() < 3, "it ran before checking");
}

#[test]
fn ksm_validate_measures_the_kernel_relative_to_leftovers_of_earlier_runs() {
    // KSM already holds metadata (an earlier run's, say) that does not change here: the
    // kernel's own merging is nothing, and it must not look converged at 0 s.
    let fake = fake_sysfs(&[]);
    for (name, value) in [
        ("pages_shared", "300"),
        ("pages_sharing", "900"),
        ("pages_volatile", "40"),
    ] {
        std::fs::write(fake.path().join(name), value).unwrap();
    }
    let state = tempfile::tempdir().unwrap();
    let result = json(&[
        "ksm-validate",
        "--sysfs",
        fake.path().to_str().unwrap(),
        "--state-file",
        state.path().join("state.json").to_str().unwrap(),
        "--duration-s",
        "0.6",
        "--sample-ms",
        "200",
        "--json",
    ]);
    assert_eq!(result["final"]["pages_sharing"]["kernel"], 0.0, "{result}");
    assert_eq!(result["converge_ms"]["kernel"], serde_json::Value::Null);
    assert!(result["converge_ms"]["simulator"].is_u64(), "{result}");
}

/// Processes whose command line is a ksm-validate worker with this volatile period.
fn workers_with_period(period: &str) -> Vec<u32> {
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| {
            let e = e.ok()?;
            let pid: u32 = e.file_name().to_str()?.parse().ok()?;
            let cmd = std::fs::read(e.path().join("cmdline")).ok()?;
            let args: Vec<&[u8]> = cmd.split(|&b| b == 0).collect();
            let is_worker = args.contains(&&b"--worker"[..])
                && args
                    .windows(2)
                    .any(|w| w[0] == b"--volatile-period-ms" && w[1] == period.as_bytes());
            is_worker.then_some(pid)
        })
        .collect()
}

#[test]
fn ksm_validate_cleans_up_on_sigint_sigterm_and_sighup() {
    for (signal, period) in [("INT", "71"), ("TERM", "72"), ("HUP", "73")] {
        let fake = fake_sysfs(&[]);
        let before = dir_contents(fake.path());
        let state = tempfile::tempdir().unwrap();
        let state_file = state.path().join("state.json");
        let mut child = start_mid_run(
            fake.path(),
            period,
            &state_file,
            Stdio::piped(),
            &format!("SIG{signal}: the run never started"),
        );
        assert_eq!(workers_with_period(period).len(), 2, "SIG{signal}");
        kill(child.id(), signal);
        let status = child.wait().unwrap();
        let mut err = String::new();
        std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut err).unwrap();
        assert_eq!(status.code(), Some(130), "SIG{signal}: {err}");
        assert!(err.contains("interrupted"), "SIG{signal}: {err}");
        assert_eq!(dir_contents(fake.path()), before, "SIG{signal}: {err}");
        assert!(
            workers_with_period(period).is_empty(),
            "SIG{signal}: workers left running"
        );
        assert!(!state_file.exists(), "SIG{signal}: state file left");
    }
}

/// SIGINT with stderr closed (the terminal gone): the messages fail to print, the
/// handler still stops the workers and the run still restores everything and exits 130.
#[test]
fn ksm_validate_cleans_up_on_sigint_with_its_stderr_closed() {
    let fake = fake_sysfs(&[]);
    let before = dir_contents(fake.path());
    let state = tempfile::tempdir().unwrap();
    let state_file = state.path().join("state.json");
    let mut child = start_mid_run(
        fake.path(),
        "75",
        &state_file,
        Stdio::piped(),
        "the run never started",
    );
    drop(child.stderr.take());
    kill(child.id(), "INT");
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130), "{status}");
    assert_eq!(dir_contents(fake.path()), before);
    assert!(workers_with_period("75").is_empty(), "workers left running");
    assert!(!state_file.exists(), "state file left");
}

/// A setting that cannot be put back at the end (here `pages_to_scan`, turned into a
/// folder while the run goes on): the run says so, exits non-zero without its results,
/// and its state file keeps the change for `mobmem host restore`, which finishes the job
/// once the setting can be written again.
#[test]
fn ksm_validate_fails_when_a_setting_cannot_be_restored() {
    let fake = fake_sysfs(&[]);
    let state = tempfile::tempdir().unwrap();
    let state_file = state.path().join("state.json");
    let args = small_validate(fake.path(), "74", "3");
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let child = Command::new(env!("CARGO_BIN_EXE_mobmem"))
        .args(args_with_state(&args, &state_file))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let run = fake.path().join("run");
    wait_until(
        Duration::from_secs(20),
        Duration::from_millis(20),
        "the run never started",
        || std::fs::read_to_string(&run).unwrap().trim() == "1",
    );
    let setting = fake.path().join("pages_to_scan");
    std::fs::remove_file(&setting).unwrap();
    std::fs::create_dir(&setting).unwrap();
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("pages_to_scan"), "{err}");
    assert!(err.contains("could not be restored"), "{err}");
    assert!(out.stdout.is_empty(), "no results shown");
    let kept = std::fs::read_to_string(&state_file).unwrap();
    assert!(kept.contains("pages_to_scan"), "{kept}");
    std::fs::remove_dir(&setting).unwrap();
    std::fs::write(&setting, "100\n").unwrap();
    common::host_restore(&state_file);
    assert!(!state_file.exists());
    assert_eq!(
        dir_contents(fake.path()),
        dir_contents(fake_sysfs(&[]).path())
    );
}

/// A small ksm-validate on the fake KSM directory `fake`.
fn small_validate(fake: &Path, period: &str, duration: &str) -> Vec<String> {
    [
        "ksm-validate",
        "--sysfs",
        fake.to_str().unwrap(),
        "--workers",
        "2",
        "--duplicate",
        "20",
        "--unique",
        "5",
        "--zero",
        "5",
        "--volatile",
        "2",
        "--volatile-period-ms",
        period,
        "--duration-s",
        duration,
        "--sample-ms",
        "100",
    ]
    .map(String::from)
    .to_vec()
}

/// A 30-second [`small_validate`] (`period` tells its workers apart) with its state in
/// `state` and its messages to `stderr`, once its workers are up and ksmd (the fake
/// `run` file) is on; `never` is the failure if that takes 20 s.
fn start_mid_run(fake: &Path, period: &str, state: &Path, stderr: Stdio, never: &str) -> Child {
    let args = small_validate(fake, period, "30");
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let child = Command::new(env!("CARGO_BIN_EXE_mobmem"))
        .args(args_with_state(&args, state))
        .stdout(Stdio::null())
        .stderr(stderr)
        .spawn()
        .unwrap();
    let run = fake.join("run");
    wait_until(
        Duration::from_secs(20),
        Duration::from_millis(20),
        never,
        || std::fs::read_to_string(&run).unwrap().trim() == "1",
    );
    child
}

/// Killed with SIGKILL at seeded points (each change it records, and once while its
/// workers run): the next run refuses to start, `mobmem host restore` puts every setting
/// back and removes the state file. On a fake KSM directory: no root needed.
#[test]
fn host_restore_puts_back_what_a_killed_ksm_validate_changed() {
    let fake = fake_sysfs(&[]);
    let before = dir_contents(fake.path());
    let state = tempfile::tempdir().unwrap();
    let state_file = state.path().join("state.json");
    let args = small_validate(fake.path(), "74", "0.3");
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    // 6 settings are recorded; 7 lets it finish.
    for point in common::kill_points(32, 7, 5) {
        let killed = common::run_killed_at(&args, &state_file, point);
        assert_eq!(killed, point <= 6, "at {point}");
        if !killed {
            continue;
        }
        let again = mobmem(&[
            "ksm-validate",
            "--state-file",
            state_file.to_str().unwrap(),
            "--sysfs",
            fake.path().to_str().unwrap(),
        ]);
        let err = String::from_utf8_lossy(&again.stderr);
        assert_eq!(again.status.code(), Some(1), "{err}");
        assert_mentions(&err, &["mobmem host restore", "nothing was changed"]);
        let report = common::host_restore(&state_file);
        assert!(report.contains("ok: set KSM's"), "{report}");
        assert_eq!(
            dir_contents(fake.path()),
            before,
            "killed at {point}: {report}"
        );
    }

    // Killed from outside while the workers run and ksmd (the fake `run`) is on.
    let mut child = start_mid_run(
        fake.path(),
        "74",
        &state_file,
        Stdio::null(),
        "the run never started",
    );
    kill(child.id(), "KILL");
    child.wait().unwrap();
    let report = common::host_restore(&state_file);
    assert_eq!(dir_contents(fake.path()), before, "{report}");
    // The workers end when their input (the killed parent's pipe) closes.
    wait_until(
        Duration::from_secs(10),
        Duration::from_millis(20),
        "workers left running",
        || workers_with_period("74").is_empty(),
    );

    // A state file whose run is alive (this test): another run is in progress.
    std::fs::write(
        &state_file,
        format!(
            r#"{{"format": 1, "command": "capture", "pid": {}, "started": null, "changes": []}}"#,
            std::process::id()
        ),
    )
    .unwrap();
    let err = fails(&args_with_state(&args, &state_file));
    assert_mentions(&err, &["another mobmem capture", "in progress"]);
    let err = fails(&[
        "host",
        "restore",
        "--state-file",
        state_file.to_str().unwrap(),
    ]);
    assert_mentions(&err, &["still running"]);
    assert!(state_file.exists());
    // Not a state file: named, and kept.
    std::fs::write(&state_file, "{").unwrap();
    let err = fails(&[
        "host",
        "restore",
        "--state-file",
        state_file.to_str().unwrap(),
    ]);
    assert_mentions(
        &err,
        &[state_file.to_str().unwrap(), "not a mobmem host state"],
    );
    assert_eq!(std::fs::read_to_string(&state_file).unwrap(), "{");
    assert_eq!(dir_contents(fake.path()), before);

    // A dead run's change that cannot be undone: reported, the command fails, and the
    // file keeps it for another try; the one that could be undone is gone from it.
    let knob = state.path().join("knob");
    let change = |path: &Path| {
        format!(
            r#"{{"kind": "setting", "path": "{}", "original": "7"}}"#,
            path.display()
        )
    };
    let lost = state.path().join("gone").join("knob");
    std::fs::write(
        &state_file,
        format!(
            r#"{{"format": 1, "command": "reclaim-validate", "pid": 4294967295, "started": 1,
                "changes": [{}, {}]}}"#,
            change(&lost),
            change(&knob)
        ),
    )
    .unwrap();
    let out = mobmem(&[
        "host",
        "restore",
        "--state-file",
        state_file.to_str().unwrap(),
    ]);
    let (report, err) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert_eq!(out.status.code(), Some(1), "{report}{err}");
    assert_mentions(&report, &["ok: set", "FAILED: set"]);
    assert_mentions(&err, &["could not be put back", "host restore"]);
    assert_eq!(std::fs::read_to_string(&knob).unwrap(), "7");
    let left = common::read_json(&state_file);
    assert_eq!(left["changes"].as_array().unwrap().len(), 1, "{left}");
    assert_eq!(left["changes"][0]["path"], lost.to_str().unwrap());
}

/// `args` (a command and its options) with `--state-file STATE`.
fn args_with_state<'a>(args: &[&'a str], state: &'a Path) -> Vec<&'a str> {
    let mut line = args.to_vec();
    line.splice(1..1, ["--state-file", state.to_str().unwrap()]);
    line
}

#[test]
fn ksm_absurd_sizes_are_clear_errors_not_panics() {
    for (args, expect) in [
        (
            &["ksm-validate", "--duplicate", "4294967295", "--unique", "1"][..],
            "pages per worker",
        ),
        (&["ksm", "--duration-s", "1e15"][..], "--duration-s"),
        (&["ksm", "--scale", "1e9"][..], "scale"),
        (
            &["ksm", "--sample-ms", "1", "--duration-s", "500000"][..],
            "samples",
        ),
    ] {
        let out = mobmem(args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {err}");
        assert!(
            err.contains(expect) && !err.contains("panicked"),
            "{args:?}: {err}"
        );
    }
}

/// The KSM settings a run may change (of [`dir_contents`]; the counters change on their
/// own).
fn ksm_settings(dir: &Path) -> Vec<(String, String)> {
    const SETTINGS: [&str; 7] = [
        "run",
        "pages_to_scan",
        "sleep_millisecs",
        "use_zero_pages",
        "smart_scan",
        "advisor_mode",
        "max_page_sharing",
    ];
    dir_contents(dir)
        .into_iter()
        .filter(|(name, _)| SETTINGS.contains(&name.as_str()))
        .collect()
}

/// The real KSM settings: one test at a time changes them.
static REAL_KSM: Mutex<()> = Mutex::new(());

/// KSM's sysfs directory and this test's turn to change it, if it can be changed here;
/// if not, the test `name` is reported as skipped.
fn real_ksm(name: &str) -> Option<(&'static Path, MutexGuard<'static, ()>)> {
    let sysfs = Path::new("/sys/kernel/mm/ksm");
    let run = sysfs.join("run");
    let writable = std::fs::read_to_string(&run)
        .ok()
        .map(|v| std::fs::write(&run, v.trim()).is_ok());
    match writable {
        None => {
            common::skip(name, &format!("no {}", run.display()));
            None
        }
        Some(false) => {
            common::skip(name, "KSM settings not writable: not root");
            None
        }
        Some(true) => Some((sysfs, REAL_KSM.lock().unwrap_or_else(|e| e.into_inner()))),
    }
}

/// Killed with SIGKILL at seeded points among the changes it records, on the real
/// kernel: `mobmem host restore` puts every KSM setting back.
#[test]
fn host_restore_puts_back_what_a_killed_ksm_validate_changed_in_the_kernel() {
    let name = "host_restore_puts_back_what_a_killed_ksm_validate_changed_in_the_kernel";
    let Some((sysfs, _turn)) = real_ksm(name) else {
        return;
    };
    let before = ksm_settings(sysfs);
    let state = tempfile::tempdir().unwrap();
    let state_file = state.path().join("state.json");
    let args = small_validate(sysfs, "75", "0.3");
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    for point in common::kill_points(33, 6, 3) {
        if let Some(report) = common::restored_after_kill_at(&args, &state_file, point) {
            assert_eq!(ksm_settings(sysfs), before, "killed at {point}: {report}");
        }
        assert_eq!(
            ksm_settings(sysfs),
            before,
            "after the run killed at {point}"
        );
    }
}

#[test]
fn ksm_validate_real_kernel() {
    let Some((sysfs, _turn)) = real_ksm("ksm_validate_real_kernel") else {
        return;
    };
    let before = ksm_settings(sysfs);
    let result = json(&[
        "ksm-validate",
        "--duration-s",
        "4",
        "--sample-ms",
        "200",
        "--json",
    ]);
    assert_eq!(ksm_settings(sysfs), before, "every KSM setting is put back");
    assert_eq!(result["settings_restored"], true);
    let fin = &result["final"]["pages_sharing"];
    let (kernel, sim) = (
        fin["kernel"].as_f64().unwrap(),
        fin["simulator"].as_f64().unwrap(),
    );
    // 3 workers with the same 400 pages: 400 KSM pages, 2 x 400 sites sharing them.
    // 3 x 200 zero pages: max_page_sharing 256 splits them over 3 KSM pages, so
    // 600 - 3 sites sharing. Unique and volatile pages never merge.
    assert_eq!(
        sim,
        (2 * 400 + 600 - 3) as f64,
        "simulator's final pages_sharing"
    );
    assert_eq!(result["final"]["pages_shared"]["simulator"], 403.0);
    // The real kernel, on a machine doing other work, should agree within 2%.
    assert!(
        (kernel - sim).abs() <= 0.02 * sim,
        "kernel {kernel} vs simulator {sim}"
    );
}

#[test]
fn reproduce_ksm_writes_claims_and_figures() {
    let dir = tempfile::tempdir().unwrap();
    let claims = reproduce("ksm", dir.path(), &[]);
    let measured = |id: &str| measured(&claims, id);
    // Where the model says the saving saturates. A page merges once ksmd has looked at
    // it in two passes (its checksum, then a tree), so a pages_to_scan saturates when
    // the run leaves two full passes after the last app starts (45 s of 180 s). A pass
    // over the preset's N pages takes ceil(N / pages_to_scan) wake-ups 20 ms apart (2
    // ticks at HZ 100; the CPU time of a batch is well under a tick).
    // The potential printed at the end of a 180-s run covers every app's pages.
    let first = ok(&["ksm", "--duration-s", "180"]);
    let n: f64 = first
        .split_whitespace()
        .next()
        .and_then(|w| w.parse().ok())
        .unwrap_or_else(|| panic!("page count in '{first}'"));
    let pass_s = |p: f64| (n / p).ceil() * 0.020;
    let expected = [10.0, 20.0, 40.0, 60.0, 80.0, 100.0, 150.0, 200.0]
        .into_iter()
        .find(|&p| 45.0 + 2.0 * pass_s(p) <= 180.0)
        .unwrap();
    let saturation = measured("saturation-pages-to-scan");
    assert_eq!(saturation, expected, "{n} pages");
    // And a slower ksmd (200 ms sleeps) takes longer to save the same share, and
    // scanning costs the foreground app something, never nothing or a gain.
    assert!(measured("sleep-changes-speed") > 1.0);
    for app in ["browser", "gallery", "youtube"] {
        assert!(measured(&format!("touch-{app}")) > 0.0, "{app}");
    }
    assert_figures(
        dir.path(),
        "ksm",
        &[
            "saved-vs-pages-to-scan",
            "saved-vs-time-sleep",
            "free-vs-time-sleep",
            "touch-response",
            "launch-time",
        ],
    );
    // The modern settings are compared with the paper's 80/20.
    let findings = findings_and_paper_figures(dir.path(), "ksm");
    let ids: Vec<&str> = findings.iter().map(|f| f["id"].as_str().unwrap()).collect();
    for id in [
        "smart-scan-vs-chosen",
        "advisor-vs-chosen",
        "checksum-first-vs-chosen",
    ] {
        assert!(ids.contains(&id), "{ids:?}");
    }
}
