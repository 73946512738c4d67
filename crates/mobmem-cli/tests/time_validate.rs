//! `mobmem time-validate` end to end: options refused before anything changes, and, where
//! KSM can be changed (root), a real run that puts KSM's settings and ksmd's CPUs back.

mod common;

use std::path::Path;

use common::{fails, json};

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
    let name = "time_validate_real_kernel";
    let run = Path::new(KSM).join("run");
    match std::fs::read_to_string(&run).map(|v| std::fs::write(&run, v.trim())) {
        Err(_) => return common::skip(name, "no /sys/kernel/mm/ksm/run"),
        Ok(Err(_)) => return common::skip(name, "KSM settings not writable: not root"),
        Ok(Ok(())) => {}
    }
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    if cpus < 2 {
        return common::skip(name, "one CPU: the workers need a CPU of their own");
    }
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
    // The calibration row, then inflation and share for each rate.
    assert_eq!(rows.len(), 5, "{rows:?}");
    assert!(rows[0]["within_goal"].is_null());
    let get = |case: &str, metric: &str, side: &str| {
        rows.iter()
            .find(|r| r["case"] == case && r["metric"] == metric)
            .and_then(|r| r[side].as_f64())
            .unwrap_or_else(|| panic!("{case} {metric} {side} in {rows:?}"))
    };
    // A ksmd that never sleeps (nice 5) beside a nice-0 touch: the fluid gives the touch
    // 1024 parts in 1359, 32.7 % slower.
    let sim = get("1000/0", "touch_inflation_pct", "sim");
    assert!((sim - 100.0 * 335.0 / 1024.0).abs() < 0.5, "{sim}");
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
    for r in rows.iter().skip(1) {
        assert!(r["within_goal"].is_boolean(), "{r}");
        assert!(r["kernel"].as_f64().unwrap().is_finite(), "{r}");
    }
}
