//! `mobmem time-validate` end to end: options refused before anything changes, and, where
//! KSM can be changed (root), a real run that puts KSM's settings and ksmd's CPUs back.

mod common;

use std::path::Path;
use std::sync::{Mutex, MutexGuard};

use common::{fails, json};

/// One test at a time changes KSM, ksmd's CPUs, zram or the memory cgroups.
static TURN: Mutex<()> = Mutex::new(());

const KSM: &str = "/sys/kernel/mm/ksm";
const SETTINGS: [&str; 5] = [
    "run",
    "pages_to_scan",
    "sleep_millisecs",
    "advisor_mode",
    "smart_scan",
];

fn settings() -> Vec<(String, String)> {
    SETTINGS
        .iter()
        .filter_map(|n| {
            Some((
                n.to_string(),
                std::fs::read_to_string(Path::new(KSM).join(n)).ok()?,
            ))
        })
        .collect()
}

/// The CPUs ksmd may run on, as /proc/PID/status lists them.
fn ksmd_cpus() -> Option<String> {
    std::fs::read_dir("/proc").ok()?.flatten().find_map(|e| {
        let comm = std::fs::read_to_string(e.path().join("comm")).ok()?;
        if comm.trim() != "ksmd" {
            return None;
        }
        let status = std::fs::read_to_string(e.path().join("status")).ok()?;
        status
            .lines()
            .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
            .map(|v| v.trim().to_string())
    })
}

const ZRAM: &str = "/sys/block/zram0";
const CGROUP: &str = "/sys/fs/cgroup/memory";

/// The turn to change KSM and ksmd's CPUs, or `None` (the test listed as skipped, with
/// why) where the touch part cannot run.
fn touch_part_can_run(name: &str) -> Option<MutexGuard<'static, ()>> {
    let turn = TURN.lock().unwrap_or_else(|e| e.into_inner());
    let run = Path::new(KSM).join("run");
    match std::fs::read_to_string(&run).map(|v| std::fs::write(&run, v.trim())) {
        Err(_) => common::skip(name, "no /sys/kernel/mm/ksm/run"),
        Ok(Err(_)) => common::skip(name, "KSM settings not writable: not root"),
        Ok(Ok(())) if std::thread::available_parallelism().map_or(1, |n| n.get()) < 2 => {
            common::skip(name, "one CPU: the workers need a CPU of their own")
        }
        Ok(Ok(())) => return Some(turn),
    }
    None
}

/// The turn to change zram, swap and the memory cgroups, or `None` (the test listed as
/// skipped, with why) where the worker part cannot run.
fn worker_part_can_run(name: &str) -> Option<MutexGuard<'static, ()>> {
    let turn = TURN.lock().unwrap_or_else(|e| e.into_inner());
    match worker_part_why_not() {
        Some(why) => {
            common::skip(name, &why);
            None
        }
        None => Some(turn),
    }
}

/// Why the worker part cannot run here, if it cannot.
fn worker_part_why_not() -> Option<String> {
    let root = std::fs::read_to_string("/proc/self/status").is_ok_and(|s| {
        s.lines()
            .find(|l| l.starts_with("Uid:"))
            .is_some_and(|l| l.split_whitespace().nth(2) == Some("0"))
    });
    if !Path::new("/proc/pressure/memory").exists() {
        return Some("no /proc/pressure/memory (PSI off)".into());
    }
    if !Path::new(CGROUP).join("memory.limit_in_bytes").exists() {
        return Some(format!("no memory cgroup v1 at {CGROUP}"));
    }
    match std::fs::read_to_string(Path::new(ZRAM).join("disksize")) {
        Err(_) => Some("no zram0 (load the zram module)".into()),
        Ok(size) if size.trim() != "0" => Some("zram0 is in use".into()),
        Ok(_) if !root => Some("not root: cgroups and zram cannot be changed".into()),
        Ok(_) => None,
    }
}

/// What the worker part changes: swap devices, zram0's size, the memory cgroups and
/// the groups of the cgroup v2 hierarchy (one a limit, for the worker's own pressure).
fn worker_host_state() -> (String, String, Vec<std::ffi::OsString>) {
    let v2 = std::fs::read_to_string("/proc/self/mounts")
        .unwrap_or_default()
        .lines()
        .find_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            (f.get(2) == Some(&"cgroup2")).then(|| f[1].to_string())
        });
    let mut cgroups: Vec<_> = [Some(CGROUP.to_string()), v2]
        .into_iter()
        .flatten()
        .flat_map(|root| {
            std::fs::read_dir(root)
                .map(|d| d.flatten().map(|e| e.path().into_os_string()).collect())
                .unwrap_or_else(|_| Vec::new())
        })
        .collect();
    cgroups.sort();
    (
        std::fs::read_to_string("/proc/swaps").unwrap_or_default(),
        std::fs::read_to_string(Path::new(ZRAM).join("disksize")).unwrap_or_default(),
        cgroups,
    )
}

/// Killed with SIGKILL right after each of several seeded changes it records (KSM's
/// settings, then ksmd's CPUs; 7 in all): `mobmem host restore` puts every setting and
/// ksmd's CPUs back and removes the state file.
#[test]
fn host_restore_puts_back_what_a_killed_time_validate_touch_part_changed() {
    let name = "host_restore_puts_back_what_a_killed_time_validate_touch_part_changed";
    let Some(_turn) = touch_part_can_run(name) else {
        return;
    };
    let before = (settings(), ksmd_cpus());
    let state = tempfile::tempdir().unwrap();
    let state_file = state.path().join("state.json");
    let args = [
        "time-validate",
        "--part",
        "touch",
        "--seconds",
        "0.3",
        "--rates",
        "1000/20",
    ];
    // Point 8 lets it run to its end, which must also leave nothing behind.
    for point in [1, 7, 8].into_iter().chain(common::kill_points(35, 6, 2)) {
        let report = common::restored_after_kill_at(&args, &state_file, point);
        assert_eq!(report.is_some(), point <= 7, "killed at {point}");
        assert_eq!(
            (settings(), ksmd_cpus()),
            before,
            "killed at {point}: {report:?}"
        );
    }
}

/// Killed with SIGKILL right after seeded changes among the many the worker part records
/// (zram, swap, the worker's files, its cgroup, the tracefs settings; twice, for its two
/// memory limits): `mobmem host restore` puts every one back.
#[test]
fn host_restore_puts_back_what_a_killed_time_validate_worker_part_changed() {
    let name = "host_restore_puts_back_what_a_killed_time_validate_worker_part_changed";
    let Some(_turn) = worker_part_can_run(name) else {
        return;
    };
    let before = worker_host_state();
    let state = tempfile::tempdir().unwrap();
    let state_file = state.path().join("state.json");
    let args = [
        "time-validate",
        "--part",
        "worker",
        "--worker-pages",
        "1024",
        "--worker-reads",
        "2000",
        "--worker-limits-mib",
        "64,3",
    ];
    let mut killed = 0;
    for point in common::kill_points(36, 60, 5) {
        let report = common::restored_after_kill_at(&args, &state_file, point);
        killed += usize::from(report.is_some());
        assert_eq!(worker_host_state(), before, "killed at {point}: {report:?}");
    }
    assert!(killed >= 3, "only {killed} of 5 runs were killed midway");
}

/// SIGINT while `--part both` runs its second part (the worker): the worker part's
/// action answers it, not the touch part's (whose journal is closed), so its zram, swap
/// and cgroups are put back, the state file goes, and the exit is 130.
#[test]
fn an_interrupt_in_the_second_part_restores_the_second_parts_changes() {
    let name = "an_interrupt_in_the_second_part_restores_the_second_parts_changes";
    let Some(_turn) = touch_part_can_run(name) else {
        return;
    };
    if let Some(why) = worker_part_why_not() {
        common::skip(name, &why);
        return;
    }
    let before = (settings(), ksmd_cpus(), worker_host_state());
    let state = tempfile::tempdir().unwrap();
    let state_file = state.path().join("state.json");
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_mobmem"))
        .args([
            "time-validate",
            "--part",
            "both",
            "--seconds",
            "0.3",
            "--rates",
            "1000/20",
            "--worker-timed-runs",
            "20",
            "--state-file",
        ])
        .arg(&state_file)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = child.stderr.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    let reader = std::thread::spawn(move || {
        use std::io::BufRead;
        let mut all = String::new();
        for line in std::io::BufReader::new(stderr)
            .lines()
            .map_while(Result::ok)
        {
            if line.contains("worker: limit") {
                let _ = tx.send(());
            }
            all.push_str(&line);
            all.push('\n');
        }
        all
    });
    let started = rx.recv_timeout(std::time::Duration::from_secs(120));
    common::kill(child.id(), "INT");
    let status = child.wait().unwrap();
    let err = reader.join().unwrap();
    assert!(started.is_ok(), "the worker part never started: {err}");
    assert_eq!(status.code(), Some(130), "{err}");
    assert_eq!(
        (settings(), ksmd_cpus(), worker_host_state()),
        before,
        "{err}"
    );
    assert!(!state_file.exists(), "state file left: {err}");
}

#[test]
fn bad_options_are_refused_before_anything_changes() {
    let state = tempfile::tempdir().unwrap();
    let file = state.path().join("state.json");
    let file = file.to_str().unwrap();
    for (args, expected) in [
        (vec!["--rates", "100"], "PAGES/SLEEP_MS"),
        (vec!["--rates", "0/20"], "at least 1"),
        (vec!["--cpu", "4096"], "not one of this machine's"),
        (vec!["--seconds", "0"], "--seconds"),
        (
            vec!["--touch-ms", "30", "--period-ms", "47"],
            "at least twice the touch",
        ),
        (vec!["--sysfs", "/nonexistent/ksm"], "KSM is not available"),
    ] {
        let mut all = vec!["time-validate", "--state-file", file];
        all.extend(args.iter().copied());
        let err = fails(&all);
        assert!(err.contains(expected), "{args:?}: {err}");
        assert!(!Path::new(file).exists(), "{args:?} left a state file");
    }
}

#[test]
fn time_validate_real_kernel() {
    let Some(_turn) = touch_part_can_run("time_validate_real_kernel") else {
        return;
    };
    let metadata = || -> Vec<String> {
        [
            "pages_shared",
            "pages_sharing",
            "pages_unshared",
            "pages_volatile",
        ]
        .iter()
        .map(|n| std::fs::read_to_string(Path::new(KSM).join(n)).unwrap_or_default())
        .collect()
    };
    let (before, cpus_before, metadata_before) = (settings(), ksmd_cpus(), metadata());
    let state = tempfile::tempdir().unwrap();
    let file = state.path().join("state.json");
    let rows = json(&[
        "time-validate",
        "--part",
        "touch",
        "--seconds",
        "1.5",
        "--rates",
        "1000/20,1000/0",
        "--state-file",
        file.to_str().unwrap(),
        "--json",
    ]);
    assert_eq!(settings(), before, "every KSM setting is put back");
    assert_eq!(ksmd_cpus(), cpus_before, "ksmd's CPUs are put back");
    assert!(
        !file.exists(),
        "the state file is removed once all is undone"
    );
    // The run ends with ksmd stopped; it is started again until the workers' KSM
    // metadata is freed, so that the next KSM run starts where this one did.
    assert_eq!(metadata(), metadata_before, "KSM metadata left behind");
    let rows = rows.as_array().unwrap();
    // For each sharing (the fluid, then EEVDF's slices): the calibration row, then
    // inflation and share for each rate.
    assert_eq!(rows.len(), 10, "{rows:?}");
    assert!(rows[0]["within_goal"].is_null() && rows[5]["within_goal"].is_null());
    let find = |case: &str, metric: &str, side: &str, sharing: &str| {
        rows.iter()
            .find(|r| r["case"] == case && r["metric"] == metric && r["sharing"] == sharing)
            .and_then(|r| r[side].as_f64())
            .unwrap_or_else(|| panic!("{case} {metric} {side} {sharing} in {rows:?}"))
    };
    let get = |case: &str, metric: &str, side: &str| find(case, metric, side, "fluid");
    // A ksmd that never sleeps (nice 5) beside a nice-0 touch: the fluid gives the touch
    // 1024 parts in 1359, 32.7 % slower.
    let sim = get("1000/0", "touch_inflation_pct", "sim");
    assert!((sim - 100.0 * 335.0 / 1024.0).abs() < 0.5, "{sim}");
    // In slices, a touch loses whole ticks to ksmd or none: at most one 4-ms tick in a
    // 10-ms touch here, 40 %, and in most phases that one.
    let slices = find("1000/0", "touch_inflation_pct", "sim", "eevdf");
    assert!((20.0..=40.5).contains(&slices), "{slices}");
    // The real kernel's touch is clearly slowed too, and ksmd takes a real share of the
    // CPU, far more than at 20 ms sleeps.
    let kernel = get("1000/0", "touch_inflation_pct", "kernel");
    assert!(
        kernel > 10.0,
        "kernel inflation with ksmd never sleeping: {kernel} %"
    );
    assert!(
        get("1000/0", "ksmd_cpu_share_pct", "kernel")
            > 5.0 * get("1000/20", "ksmd_cpu_share_pct", "kernel")
    );
    for r in rows
        .iter()
        .filter(|r| !r["case"].as_str().unwrap().contains("calibration"))
    {
        assert!(r["within_goal"].is_boolean(), "{r}");
        assert!(r["kernel"].as_f64().unwrap().is_finite(), "{r}");
    }
}

#[test]
fn time_validate_worker_real_kernel() {
    let Some(_turn) = worker_part_can_run("time_validate_worker_real_kernel") else {
        return;
    };
    let before = worker_host_state();
    let state = tempfile::tempdir().unwrap();
    let file = state.path().join("state.json");
    let rows = json(&[
        "time-validate",
        "--part",
        "worker",
        "--worker-pages",
        "4096",
        "--worker-reads",
        "40000",
        "--worker-limits-mib",
        "64,13",
        "--state-file",
        file.to_str().unwrap(),
        "--json",
    ]);
    assert_eq!(
        worker_host_state(),
        before,
        "zram is no longer swap and is reset, the cgroup is removed"
    );
    assert!(
        !file.exists(),
        "the state file is removed once all is undone"
    );
    let rows = rows.as_array().unwrap();
    // The roomy run calibrates; the tight one compares wall time and stall.
    assert_eq!(rows.len(), 3, "{rows:?}");
    assert!(rows[0]["within_goal"].is_null());
    assert_eq!(rows[1]["metric"], "wall_s");
    assert_eq!(rows[2]["metric"], "memory_stall_some_s");
    let f = |r: usize, side: &str| rows[r][side].as_f64().unwrap();
    // At 13 MiB for 16 MiB of pages the worker swaps: the kernel stalls, the simulator
    // too, and both take longer than the roomy run. (At 10 MiB the kernel's memcg OOM
    // killer ended an untraced run now and then: nearly all of the worker's pages were
    // active, and reclaim gave up.)
    assert!(f(2, "kernel") > 0.0 && f(2, "sim") > 0.0, "{rows:?}");
    assert!(
        f(1, "kernel") > f(0, "kernel") && f(1, "sim") > f(0, "sim"),
        "{rows:?}"
    );
}
