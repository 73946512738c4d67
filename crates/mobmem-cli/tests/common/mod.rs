//! Helpers shared by the CLI's integration tests: running `mobmem`, reading what a
//! reproduction wrote, reporting a skipped test. Each test binary uses some of them.
#![allow(dead_code)]

#[path = "../../../mobmem/tests/common/mod.rs"]
mod public;
#[allow(unused_imports)]
pub use public::{assert_mentions, public_trace, shared_oracle, skip, test_files_left_out, tree};

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

/// Run `mobmem ARGS...` to its end.
pub fn mobmem(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_mobmem"))
        .args(args)
        .output()
        .expect("run mobmem")
}

/// Stdout and stderr of a run that must succeed.
pub fn run_full(args: &[&str]) -> (String, String) {
    let out = mobmem(args);
    assert!(
        out.status.success(),
        "mobmem {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    (
        String::from_utf8(out.stdout).expect("utf-8 output"),
        String::from_utf8(out.stderr).expect("utf-8 output"),
    )
}

/// Stdout of a run that must succeed.
pub fn ok(args: &[&str]) -> String {
    run_full(args).0
}

/// `head` followed by `extra`: a command line.
fn args<'a>(head: &[&'a str], extra: &[&'a str]) -> Vec<&'a str> {
    head.iter().chain(extra).copied().collect()
}

/// `sim --trace TRACE --policy POLICY --capacity CAPACITY`, then `extra`.
pub fn sim<'a>(
    trace: &'a str,
    policy: &'a str,
    capacity: &'a str,
    extra: &[&'a str],
) -> Vec<&'a str> {
    args(
        &[
            "sim",
            "--trace",
            trace,
            "--policy",
            policy,
            "--capacity",
            capacity,
        ],
        extra,
    )
}

/// `mrc --trace TRACE`, then `extra`.
pub fn mrc<'a>(trace: &'a str, extra: &[&'a str]) -> Vec<&'a str> {
    args(&["mrc", "--trace", trace], extra)
}

/// `trace convert FROM TO`, then `extra`.
pub fn convert<'a>(from: &'a Path, to: &'a Path, extra: &[&'a str]) -> Vec<&'a str> {
    args(
        &[
            "trace",
            "convert",
            from.to_str().unwrap(),
            to.to_str().unwrap(),
        ],
        extra,
    )
}

/// `mobmem gen PRESET --out OUT` with the options `extra`, which must succeed.
pub fn gen(preset: &str, out: &Path, extra: &[&str]) {
    ok(&args(
        &["gen", preset, "--out", out.to_str().unwrap()],
        extra,
    ));
}

/// `mobmem --threads N ARGS... --out DIR/outN` for N of 1 and 2, each of which must
/// succeed: the two output folders.
pub fn run_on_1_and_2_threads(dir: &Path, args: &[&str]) -> [PathBuf; 2] {
    ["1", "2"].map(|threads| {
        let out = dir.join(format!("out{threads}"));
        let mut line = vec!["--threads", threads];
        line.extend_from_slice(args);
        line.extend(["--out", out.to_str().unwrap()]);
        ok(&line);
        out
    })
}

/// A new temporary folder holding one file, `name` with `contents`, and the file's path.
pub fn temp_file(name: &str, contents: impl AsRef<[u8]>) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(name);
    std::fs::write(&path, contents).unwrap();
    (dir, path)
}

/// An experiment file DIR/NAME.toml for `mobmem run`: three policies on a small
/// app-switching workload at two memory sizes.
pub fn small_experiment(dir: &Path, name: &str) -> PathBuf {
    let path = dir.join(format!("{name}.toml"));
    std::fs::write(
        &path,
        format!(
            r#"
name = "{name}"
title = "A small sweep"
[[workload]]
name = "switching"
preset = "app-switching"
scale = 0.02
[sweep]
policies = ["lru", "hybrid-lru", "app-aware"]
memory_fraction = [0.2, 0.6]
"#
        ),
    )
    .unwrap();
    path
}

/// Stdout of a run that must succeed, as JSON.
pub fn json(args: &[&str]) -> serde_json::Value {
    serde_json::from_str(&ok(args)).expect("valid JSON")
}

/// Stderr of a run that must fail, and fail cleanly (no panic).
pub fn fails(args: &[&str]) -> String {
    let out = mobmem(args);
    assert!(!out.status.success(), "mobmem {args:?} should fail");
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(!stderr.contains("panicked"), "{stderr}");
    stderr
}

/// The JSON file at `path`.
pub fn read_json(path: &Path) -> serde_json::Value {
    serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
}

/// `mobmem reproduce NAME --out DIR EXTRA...`, which must succeed and name the
/// reproduction: the claims it wrote to DIR/NAME/claims.json.
pub fn reproduce(name: &str, dir: &Path, extra: &[&str]) -> Vec<serde_json::Value> {
    let mut args = vec!["reproduce", name, "--out", dir.to_str().unwrap()];
    args.extend_from_slice(extra);
    // Two seeds keep the debug-build tests quick and still give every claim an interval.
    if !extra.contains(&"--seeds") {
        args.extend_from_slice(&["--seeds", "2"]);
    }
    let out = ok(&args);
    assert!(out.contains(name), "{out}");
    let claims = read_json(&dir.join(name).join("claims.json"));
    claims.as_array().unwrap().clone()
}

/// Claim `id` of `claims`, which must have it.
pub fn claim<'a>(claims: &'a [serde_json::Value], id: &str) -> &'a serde_json::Value {
    claims
        .iter()
        .find(|c| c["id"] == id)
        .unwrap_or_else(|| panic!("claim {id}"))
}

/// The measured value of claim `id`: its mean over the seeds.
pub fn measured(claims: &[serde_json::Value], id: &str) -> f64 {
    claim(claims, id)["mean"].as_f64().unwrap()
}

/// The findings a reproduction wrote to DIR/NAME/findings.json, after checking that
/// DIR/NAME/paper-figures.json names only figures it drew (as SVGs), each drawn one with
/// its shape checked, and that every claim that is not reproduced says why.
pub fn findings_and_paper_figures(dir: &Path, name: &str) -> Vec<serde_json::Value> {
    let read = |file: &str| read_json(&dir.join(name).join(file));
    for figure in read("paper-figures.json").as_array().unwrap() {
        for id in figure["figures"].as_array().into_iter().flatten() {
            let svg = dir.join(name).join(format!("{}.svg", id.as_str().unwrap()));
            assert!(svg.exists(), "{}: {}", figure["paper"], svg.display());
        }
        // A drawn figure is judged by its shape, checked on the written data.
        if figure["status"] == "reproduced" || figure["status"] == "drawn-shape-differs" {
            let (shape, measured) = (figure["shape"].as_str(), figure["measured"].as_str());
            assert!(shape.is_some_and(|s| !s.is_empty()), "{figure}");
            assert!(
                measured.is_some_and(|m| !m.is_empty() && m != "not checked"),
                "{figure}"
            );
        }
    }
    assert_unreproduced_claims_explained(read("claims.json").as_array().unwrap());
    let findings = read("findings.json").as_array().unwrap().clone();
    for f in &findings {
        assert!(!f["text"].as_str().unwrap().contains('{'), "{f}");
    }
    findings
}

/// Check that every claim short of reproduced says why, in words with no placeholder
/// left unfilled.
pub fn assert_unreproduced_claims_explained(claims: &[serde_json::Value]) {
    for claim in claims {
        if claim["verdict"] != "reproduced" {
            let why = claim["explanation"].as_str().unwrap_or("");
            assert!(
                !why.is_empty() && !why.contains('{'),
                "{}: {why}",
                claim["id"]
            );
        }
    }
}

/// The verdict of claim `id`.
pub fn verdict(claims: &[serde_json::Value], id: &str) -> String {
    claim(claims, id)["verdict"].as_str().unwrap().to_string()
}

/// Check that a reproduction drew each of `figures` as DIR/NAME/FIGURE.svg.
pub fn assert_figures(dir: &Path, name: &str, figures: &[&str]) {
    for f in figures {
        assert!(dir.join(name).join(format!("{f}.svg")).exists(), "{f}.svg");
    }
}

/// Wait until `ready` holds, asking every `every`; after `limit` fail, saying `what`.
pub fn wait_until(limit: Duration, every: Duration, what: &str, mut ready: impl FnMut() -> bool) {
    let start = Instant::now();
    while !ready() {
        assert!(start.elapsed() < limit, "{what}");
        std::thread::sleep(every);
    }
}

/// Send process `pid` the signal `signal` (`TERM`, `INT`...) with kill(1).
pub fn kill(pid: u32, signal: &str) {
    let sent = Command::new("kill")
        .args([&format!("-{signal}"), &pid.to_string()])
        .status()
        .unwrap();
    assert!(sent.success(), "kill -{signal} {pid}");
}

/// `count` distinct points among 1..=`max` (the N-th change a run records), drawn from
/// `seed`: the same list on every run of the tests.
pub fn kill_points(seed: u64, max: usize, count: usize) -> Vec<usize> {
    let mut x = seed;
    let mut next = || {
        // splitmix64
        x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = x;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    };
    let mut points = Vec::new();
    while points.len() < count.min(max) {
        let p = 1 + (next() % max as u64) as usize;
        if !points.contains(&p) {
            points.push(p);
        }
    }
    points.sort_unstable();
    points
}

/// `mobmem ARGS...` with `--state-file STATE` after the command's name, killed by
/// SIGKILL right after it records its `point`-th change (the test hook of
/// `mobmem::host::state`): whether it was killed. One that records fewer changes runs to
/// its end, and must leave no state file behind.
pub fn run_killed_at(args: &[&str], state: &Path, point: usize) -> bool {
    use std::os::unix::process::ExitStatusExt;
    let out = Command::new(env!("CARGO_BIN_EXE_mobmem"))
        .arg(args[0])
        .arg("--state-file")
        .arg(state)
        .args(&args[1..])
        .env("MOBMEM_TEST_KILL_AT_CHANGE", point.to_string())
        .stdin(std::process::Stdio::null())
        .output()
        .expect("run mobmem");
    let err = String::from_utf8_lossy(&out.stderr);
    if out.status.signal() == Some(9) {
        assert!(state.exists(), "killed at {point} with no state file");
        return true;
    }
    assert!(!err.contains("panicked"), "{err}");
    assert!(
        !state.exists(),
        "{args:?} ended by itself ({}) and left {}: {err}",
        out.status,
        state.display()
    );
    false
}

/// [`run_killed_at`], then [`host_restore`] if it was killed: the restore's report, or
/// `None` when the run ended by itself.
pub fn restored_after_kill_at(args: &[&str], state: &Path, point: usize) -> Option<String> {
    run_killed_at(args, state, point).then(|| host_restore(state))
}

/// `mobmem host restore --state-file STATE`, which must succeed and remove the file: its
/// report.
pub fn host_restore(state: &Path) -> String {
    let out = ok(&["host", "restore", "--state-file", state.to_str().unwrap()]);
    assert!(!state.exists(), "{out}");
    out
}
