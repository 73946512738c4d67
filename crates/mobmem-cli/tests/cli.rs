//! The command line end to end, as a user runs it.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn mobmem(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_mobmem"))
        .args(args)
        .output()
        .expect("run mobmem")
}

fn ok(args: &[&str]) -> String {
    let out = mobmem(args);
    assert!(
        out.status.success(),
        "mobmem {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("utf-8 output")
}

fn shared_trace(rel: &str) -> PathBuf {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/traces")
        .join(rel);
    assert!(
        path.exists(),
        "{} is missing: the tests need ../shared beside the repository",
        path.display()
    );
    path
}

#[test]
fn sim_json_on_the_arc_oltp_trace_matches_the_published_lru_hit_ratio() {
    let trace = shared_trace("arc/OLTP.lis.zst");
    let out = ok(&[
        "sim",
        "--trace",
        trace.to_str().unwrap(),
        "--policy",
        "lru",
        "--capacity",
        "1000",
        "--json",
    ]);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let (accesses, hits, misses) = (
        v["accesses"].as_u64().unwrap(),
        v["hits"].as_u64().unwrap(),
        v["misses"].as_u64().unwrap(),
    );
    assert_eq!(accesses, 914_145);
    assert_eq!(hits + misses, accesses);
    // ARC paper (Megiddo and Modha, FAST 2003), Table III: LRU at 1000 pages, 32.83%.
    assert_eq!(
        format!("{:.2}", 100.0 * hits as f64 / accesses as f64),
        "32.83"
    );
}

#[test]
fn bad_inputs_are_clear_errors() {
    let out = mobmem(&[
        "sim",
        "--trace",
        "/nonexistent/t.mmt",
        "--policy",
        "lru",
        "--capacity",
        "10",
    ]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("/nonexistent/t.mmt"));

    let out = mobmem(&[
        "sim",
        "--trace",
        "x.mmt",
        "--policy",
        "nope",
        "--capacity",
        "10",
    ]);
    assert!(String::from_utf8_lossy(&out.stderr).contains("unknown policy 'nope'"));

    let out = mobmem(&["reproduce", "nope"]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("hybrid-cache"));

    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.toml");
    std::fs::write(&bad, "name = \"x\"\ncolour = 3\n").unwrap();
    let out = mobmem(&[
        "run",
        bad.to_str().unwrap(),
        "--out",
        dir.path().to_str().unwrap(),
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && err.contains("bad.toml") && err.contains("colour"),
        "{err}"
    );
}

#[test]
fn gen_is_deterministic_and_trace_info_reads_it() {
    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("a.mmt");
    let b = dir.path().join("b.mmt");
    for p in [&a, &b] {
        ok(&[
            "gen",
            "chrome-push",
            "--seed",
            "7",
            "--scale",
            "0.05",
            "--out",
            p.to_str().unwrap(),
        ]);
    }
    assert_eq!(std::fs::read(&a).unwrap(), std::fs::read(&b).unwrap());
    let info: serde_json::Value =
        serde_json::from_str(&ok(&["trace", "info", a.to_str().unwrap(), "--json"])).unwrap();
    assert!(info["accesses"].as_u64().unwrap() > 0);
    assert_eq!(
        info["foreground_accesses"].as_u64().unwrap()
            + info["background_accesses"].as_u64().unwrap(),
        info["accesses"].as_u64().unwrap()
    );
}

#[test]
fn run_writes_a_complete_report_identical_for_any_thread_count() {
    let dir = tempfile::tempdir().unwrap();
    let exp = dir.path().join("small.toml");
    std::fs::write(
        &exp,
        r#"
name = "small"
[[workload]]
name = "switching"
preset = "app-switching"
scale = 0.02
[sweep]
policies = ["lru", "hybrid-lru", "app-aware"]
memory_fraction = [0.2, 0.6]
"#,
    )
    .unwrap();
    let mut csvs = Vec::new();
    for threads in ["1", "2"] {
        let out = dir.path().join(format!("out{threads}"));
        ok(&[
            "--threads",
            threads,
            "run",
            exp.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ]);
        for f in [
            "small/results.csv",
            "small/results.json",
            "small/claims.json",
            "index.html",
        ] {
            assert!(out.join(f).exists(), "{f} missing");
        }
        assert!(out.join("small/switching-hit-ratio.svg").exists());
        csvs.push(std::fs::read(out.join("small/results.csv")).unwrap());
    }
    assert_eq!(csvs[0], csvs[1]);
    let text = String::from_utf8(csvs.remove(0)).unwrap();
    assert!(text.starts_with("experiment,workload,policy,family,memory_pages,memory_fraction,dram_fraction,dram_pages,pcm_pages,metric,value"));
    // 3 policies x 2 sizes x every metric.
    let metrics = text.lines().filter(|l| l.contains(",hit_ratio,")).count();
    assert_eq!(metrics, 6);
}

#[test]
fn reproduce_hybrid_cache_writes_claims_figures_and_index() {
    let dir = tempfile::tempdir().unwrap();
    let out = ok(&[
        "reproduce",
        "hybrid-cache",
        "--out",
        dir.path().to_str().unwrap(),
    ]);
    assert!(out.contains("hybrid-cache"));
    let claims: serde_json::Value = serde_json::from_slice(
        &std::fs::read(dir.path().join("hybrid-cache/claims.json")).unwrap(),
    )
    .unwrap();
    let claims = claims.as_array().unwrap();
    assert_eq!(claims.len(), 10, "five claims for each of the two traces");
    for c in claims {
        for key in ["id", "claim", "paper", "measured", "holds"] {
            assert!(c.get(key).is_some(), "claim without {key}: {c}");
        }
        assert!(c["measured"].as_f64().unwrap().is_finite());
    }
    // The paper's direction: app-aware reduces foreground time and energy versus LRU.
    for id in [
        "chrome-push-fg-time",
        "app-switching-fg-time",
        "chrome-push-energy",
        "app-switching-energy",
    ] {
        let c = claims.iter().find(|c| c["id"] == id).unwrap();
        assert!(c["measured"].as_f64().unwrap() > 0.0, "{id}: {c}");
    }
    for w in ["chrome-push", "app-switching"] {
        for f in [
            "hit-ratio",
            "fg-hit-ratio",
            "fg-time",
            "energy",
            "pcm-writes",
        ] {
            let svg = std::fs::read_to_string(dir.path().join(format!("hybrid-cache/{w}-{f}.svg")))
                .unwrap();
            assert!(
                svg.contains("<svg") && svg.contains("app-aware"),
                "{w}-{f}.svg"
            );
        }
    }
    let index = std::fs::read_to_string(dir.path().join("index.html")).unwrap();
    assert!(
        index.contains("hybrid-cache/claims.json") && index.contains("chrome-push-fg-time.svg")
    );
    // Nothing half-written is left behind.
    assert!(!dir.path().join(".hybrid-cache.partial").exists());
}

#[test]
fn a_preset_saved_as_toml_generates_the_same_trace() {
    let dir = tempfile::tempdir().unwrap();
    let toml = dir.path().join("switching.toml");
    std::fs::write(&toml, ok(&["gen", "--show", "app-switching"])).unwrap();
    let (a, b) = (dir.path().join("a.mmt"), dir.path().join("b.mmt"));
    ok(&[
        "gen",
        "app-switching",
        "--scale",
        "0.02",
        "--seed",
        "4",
        "--out",
        a.to_str().unwrap(),
    ]);
    ok(&[
        "gen",
        "--config",
        toml.to_str().unwrap(),
        "--scale",
        "0.02",
        "--seed",
        "4",
        "--out",
        b.to_str().unwrap(),
    ]);
    assert_eq!(std::fs::read(&a).unwrap(), std::fs::read(&b).unwrap());
    // A typo in a workload file is an error that names the file and the key.
    std::fs::write(&toml, "acesses = 10\n").unwrap();
    let out = mobmem(&[
        "gen",
        "--config",
        toml.to_str().unwrap(),
        "--out",
        b.to_str().unwrap(),
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && err.contains("switching.toml") && err.contains("acesses"),
        "{err}"
    );
}
