//! The command line end to end, as a user runs it.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::{
    assert_figures, assert_mentions, assert_unreproduced_claims_explained, claim, fails,
    findings_and_paper_figures, gen, json, measured, ok, read_json, reproduce, run_full,
    run_on_1_and_2_threads, sim, small_experiment, temp_file, verdict,
};

#[test]
fn sim_json_on_the_arc_oltp_trace_matches_the_published_lru_hit_ratio() {
    let test = "sim_json_on_the_arc_oltp_trace_matches_the_published_lru_hit_ratio";
    let Some(trace) = common::public_trace(test, "arc/OLTP.lis.zst") else {
        return;
    };
    let v = json(&sim(trace.to_str().unwrap(), "lru", "1000", &["--json"]));
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

/// `--hash-object-ids`: w-tinylfu's sketch hashes the trace's object ids, and its miss
/// ratios are libCacheSim's (the oracle's table) at every size, where hashing mobmem's
/// page ids they are not; several sizes and one size alone agree.
#[test]
fn sim_hashing_object_ids_gives_libcachesims_w_tinylfu() {
    let test = "sim_hashing_object_ids_gives_libcachesims_w_tinylfu";
    let Some(oracle) = common::shared_oracle(test, "libcachesim-cloudphysics.csv") else {
        return;
    };
    let Some(trace) = common::public_trace(test, "libcachesim/cloudPhysicsIO.oracleGeneral.bin")
    else {
        return;
    };
    let trace = trace.to_str().unwrap();
    let oracle = std::fs::read_to_string(oracle).unwrap();
    // capacity -> libCacheSim's miss ratio, as it prints it (four decimals).
    let expected: Vec<(u64, String)> = oracle
        .lines()
        .filter(|l| l.starts_with("w-tinylfu,"))
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            (f[2].parse().unwrap(), f[4].to_string())
        })
        .collect();
    assert!(expected.len() >= 3, "{oracle}");
    let capacities: Vec<String> = expected.iter().map(|(c, _)| c.to_string()).collect();
    let ratios = |extra: &[&str], capacities: &str| -> Vec<String> {
        let rows = json(&sim(
            trace,
            "w-tinylfu",
            capacities,
            &[&["--json"], extra].concat(),
        ));
        // One size prints one row, several a list of them.
        let rows = rows.as_array().cloned().unwrap_or_else(|| vec![rows]);
        rows.iter()
            .map(|r| {
                let (misses, accesses) = (
                    r["misses"].as_f64().unwrap(),
                    r["accesses"].as_f64().unwrap(),
                );
                format!("{:.4}", misses / accesses)
            })
            .collect()
    };
    let hashed = ratios(&["--hash-object-ids"], &capacities.join(","));
    let want: Vec<String> = expected.iter().map(|(_, r)| r.clone()).collect();
    assert_eq!(hashed, want, "at {capacities:?}");
    assert_ne!(
        ratios(&[], &capacities.join(",")),
        want,
        "page ids hash differently"
    );
    let alone = ratios(&["--hash-object-ids"], &capacities[0]);
    assert_eq!(alone, want[..1]);
    // A curve simulated at each size hashes them too.
    let curve = json(&common::mrc(
        trace,
        &[
            "--policy",
            "w-tinylfu",
            "--capacities",
            &capacities.join(","),
            "--hash-object-ids",
            "--json",
        ],
    ));
    let curve: Vec<String> = (curve.as_array().unwrap().iter())
        .map(|p| {
            format!(
                "{:.4}",
                p["misses"].as_f64().unwrap() / p["accesses"].as_f64().unwrap()
            )
        })
        .collect();
    assert_eq!(curve, want);
}

/// `--hash-object-ids` with hyperbolic, whose draws take the fronts of the chains of
/// libCacheSim's hash table: its miss counts in pages, and its miss ratios and byte miss
/// ratios in bytes, are libCacheSim's (`crates/mobmem/tests/data`, made by `cachesim`
/// at commit aa0fc409), streamed at one size or read whole at several, in `sim` and
/// `mrc`; hashing page ids they are not.
#[test]
fn hashing_object_ids_gives_libcachesims_hyperbolic_in_pages_and_bytes() {
    let test = "hashing_object_ids_gives_libcachesims_hyperbolic_in_pages_and_bytes";
    let Some(trace) = common::public_trace(test, "libcachesim/cloudPhysicsIO.oracleGeneral.bin")
    else {
        return;
    };
    let trace = trace.to_str().unwrap();
    let field = |row: &serde_json::Value, name: &str| row[name].as_f64().unwrap();
    let rows = |value: serde_json::Value| value.as_array().cloned().unwrap_or_else(|| vec![value]);
    // libCacheSim's exact miss counts at 500, 2000 and 20000 objects.
    let hashed = rows(json(&sim(
        trace,
        "hyperbolic",
        "500,2000,20000",
        &["--json", "--hash-object-ids"],
    )));
    let misses: Vec<f64> = hashed.iter().map(|r| field(r, "misses")).collect();
    assert_eq!(misses, [95049.0, 93649.0, 70974.0]);
    let plain = rows(json(&sim(
        trace,
        "hyperbolic",
        "500,2000,20000",
        &["--json"],
    )));
    assert_ne!(
        plain.iter().map(|r| field(r, "misses")).collect::<Vec<_>>(),
        misses
    );
    // In bytes: the byte oracle's rows, to the four decimals libCacheSim prints.
    let oracle = include_str!("../../mobmem/tests/data/libcachesim-cloudphysics-bytes.csv");
    let expected: Vec<(String, String, String)> = oracle
        .lines()
        .filter(|l| l.starts_with("hyperbolic,"))
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            (f[2].to_string(), f[4].to_string(), f[5].to_string())
        })
        .collect();
    assert_eq!(expected.len(), 6);
    let ratios = |rows: &[serde_json::Value]| -> Vec<(String, String, String)> {
        rows.iter()
            .map(|r| {
                (
                    r["capacity_bytes"].to_string(),
                    format!("{:.4}", field(r, "misses") / field(r, "accesses")),
                    format!(
                        "{:.4}",
                        field(r, "bytes_missed") / field(r, "bytes_requested")
                    ),
                )
            })
            .collect()
    };
    // A bare number is pages: bytes take a unit.
    let sizes: Vec<String> = expected.iter().map(|e| format!("{}B", e.0)).collect();
    let whole = rows(json(&sim(
        trace,
        "hyperbolic",
        &sizes.join(","),
        &["--json", "--hash-object-ids"],
    )));
    assert_eq!(ratios(&whole), expected);
    let alone = rows(json(&sim(
        trace,
        "hyperbolic",
        &sizes[0],
        &["--json", "--hash-object-ids"],
    )));
    assert_eq!(ratios(&alone), expected[..1]);
    let plain = rows(json(&sim(
        trace,
        "hyperbolic",
        &sizes.join(","),
        &["--json"],
    )));
    assert_ne!(ratios(&plain), expected);
    let curve = rows(json(&common::mrc(
        trace,
        &[
            "--policy",
            "hyperbolic",
            "--capacities",
            &sizes.join(","),
            "--hash-object-ids",
            "--json",
        ],
    )));
    let curve: Vec<String> = curve
        .iter()
        .map(|p| format!("{:.4}", field(p, "misses") / field(p, "accesses")))
        .collect();
    assert_eq!(
        curve,
        expected.iter().map(|e| e.1.clone()).collect::<Vec<_>>()
    );
}

/// Several policies in one `sim`: each row is what that policy gives alone, in pages and
/// in bytes, policies in the order given.
#[test]
fn sim_with_several_policies_gives_each_ones_own_rows() {
    let test = "sim_with_several_policies_gives_each_ones_own_rows";
    let Some(trace) = common::public_trace(test, "libcachesim/cloudPhysicsIO.oracleGeneral.bin")
    else {
        return;
    };
    let trace = trace.to_str().unwrap();
    for capacities in ["300,3000", "1MiB,64MiB"] {
        let together = json(&sim(trace, "gdsf,lru,2q", capacities, &["--json"]));
        let rows = together.as_array().unwrap();
        assert_eq!(rows.len(), 6, "{capacities}");
        for (k, policy) in ["gdsf", "lru", "2q"].into_iter().enumerate() {
            let alone = json(&sim(trace, policy, capacities, &["--json"]));
            let alone = alone.as_array().unwrap();
            for (c, row) in alone.iter().enumerate() {
                assert_eq!(&rows[2 * k + c], row, "{policy} at {capacities}");
            }
        }
    }
    let err = fails(&sim(trace, "lru,lru", "300", &[]));
    assert_mentions(&err, &["lru is given twice"]);
    let err = fails(&sim(trace, "lru,hybrid-lru", "1MiB", &[]));
    assert_mentions(&err, &["hybrid-lru", "capacities in pages only"]);
    // A warm-up leaves its requests out of every row.
    let warm = json(&sim(
        trace,
        "lru,arc",
        "300",
        &["--warmup", "10000", "--json"],
    ));
    for row in warm.as_array().unwrap() {
        assert_eq!(row["accesses"], 113_872 - 10_000, "{row}");
    }
    let err = fails(&sim(trace, "lru", "1MiB", &["--warmup", "10"]));
    assert_mentions(&err, &["--warmup", "pages"]);
    // The miss ratio over time: windows that add up to the warmed run.
    let windows = json(&sim(
        trace,
        "lru,arc",
        "300",
        &["--warmup", "10000", "--window", "25000", "--json"],
    ));
    let windows = windows.as_array().unwrap();
    // 103,872 requests after the warm-up: four of 25,000 and one of 3,872, per policy.
    assert_eq!(windows.len(), 10);
    for (k, row) in warm.as_array().unwrap().iter().enumerate() {
        let mine = &windows[5 * k..5 * (k + 1)];
        assert!(mine.iter().all(|w| w["policy"] == row["policy"]));
        let sum = |key: &str| mine.iter().map(|w| w[key].as_u64().unwrap()).sum::<u64>();
        assert_eq!(sum("requests"), row["accesses"].as_u64().unwrap());
        assert_eq!(sum("misses"), row["misses"].as_u64().unwrap());
    }
    let csv = ok(&sim(trace, "lru", "300", &["--window", "50000"]));
    assert!(
        csv.starts_with(
            "policy,capacity,first_request,requests,misses,miss_ratio\nlru,300,0,50000,"
        ),
        "{csv}"
    );
}

#[test]
fn bad_inputs_are_clear_errors() {
    let err = fails(&sim("/nonexistent/t.mmt", "lru", "10", &[]));
    assert_mentions(&err, &["/nonexistent/t.mmt"]);

    let err = fails(&sim("x.mmt", "nope", "10", &[]));
    assert_mentions(&err, &["unknown policy 'nope'"]);

    let err = fails(&["reproduce", "nope"]);
    assert_mentions(&err, &["hybrid-cache"]);

    let (dir, bad) = temp_file("bad.toml", "name = \"x\"\ncolour = 3\n");
    let err = fails(&[
        "run",
        bad.to_str().unwrap(),
        "--out",
        dir.path().to_str().unwrap(),
    ]);
    assert_mentions(&err, &["bad.toml", "colour"]);
}

#[test]
fn gen_is_deterministic_and_trace_info_reads_it() {
    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("a.mmt");
    let b = dir.path().join("b.mmt");
    for p in [&a, &b] {
        gen("chrome-push", p, &["--seed", "7", "--scale", "0.05"]);
    }
    assert_eq!(std::fs::read(&a).unwrap(), std::fs::read(&b).unwrap());
    let info = json(&["trace", "info", a.to_str().unwrap(), "--json"]);
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
    let exp = small_experiment(dir.path(), "small");
    let mut csvs = Vec::new();
    for out in run_on_1_and_2_threads(dir.path(), &["run", exp.to_str().unwrap()]) {
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
    // Four of the shipped ten memory sizes, the smallest and the largest among them: the
    // test is of what the command writes, and the full grid took three minutes here.
    let claims = reproduce(
        "hybrid-cache",
        dir.path(),
        &["--set", "sweep.memory_fraction=[0.1, 0.4, 0.7, 1.0]"],
    );
    // Six claims on each trace, and a seventh the paper makes of trace 1 only.
    assert_eq!(claims.len(), 13);
    for c in &claims {
        // Every field is written: read back and written again, the claim is the same.
        let read: mobmem::report::claims::ClaimResult = serde_json::from_value(c.clone()).unwrap();
        assert_eq!(&serde_json::to_value(read).unwrap(), c);
        assert!(c["mean"].as_f64().unwrap().is_finite());
        assert_eq!(c["seeds"], 2);
        let ci = c["ci95"].as_array().unwrap();
        let (lo, hi) = (ci[0].as_f64().unwrap(), ci[1].as_f64().unwrap());
        assert!(lo <= c["mean"].as_f64().unwrap() && c["mean"].as_f64().unwrap() <= hi);
    }
    // The paper's direction: app-aware reduces foreground time and energy versus LRU.
    for id in [
        "chrome-push-fg-time",
        "app-switching-fg-time",
        "chrome-push-energy",
        "app-switching-energy",
    ] {
        let c = claim(&claims, id);
        assert!(c["mean"].as_f64().unwrap() > 0.0, "{id}: {c}");
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
    // Every claim short of reproduced says why, from the run's counters.
    assert_unreproduced_claims_explained(&claims);
    // The literature's clock-dwf against app-aware, on both traces, in words with numbers.
    let findings = read_json(&dir.path().join("hybrid-cache/findings.json"));
    for w in ["chrome-push", "app-switching"] {
        let id = format!("{w}-clock-dwf-vs-app-aware-foreground-time");
        let f = findings
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["id"] == id.as_str())
            .unwrap_or_else(|| panic!("finding {id}"));
        let text = f["text"].as_str().unwrap();
        assert!(
            text.contains("clock-dwf") && text.contains('%') && !text.contains('{'),
            "{text}"
        );
    }
    // The paper's figures, each reproduced, a proxy or missing.
    let figures = read_json(&dir.path().join("hybrid-cache/paper-figures.json"));
    let listed: Vec<&str> = figures
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["paper"].as_str().unwrap())
        .collect();
    assert_eq!(
        listed,
        ["Table 1", "Fig. 1", "Fig. 2", "Fig. 3", "Fig. 4", "Fig. 5", "Fig. 6", "Fig. 7"]
    );
    let index = std::fs::read_to_string(dir.path().join("index.html")).unwrap();
    assert!(
        index.contains("hybrid-cache/claims.json") && index.contains("chrome-push-fg-time.svg")
    );
    // Nothing half-written is left behind.
    assert!(!dir.path().join(".hybrid-cache.partial").exists());
}

#[test]
fn a_preset_saved_as_toml_generates_the_same_trace() {
    let (dir, toml) = temp_file("switching.toml", ok(&["gen", "--show", "app-switching"]));
    let (a, b) = (dir.path().join("a.mmt"), dir.path().join("b.mmt"));
    gen("app-switching", &a, &["--scale", "0.02", "--seed", "4"]);
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
    let err = fails(&[
        "gen",
        "--config",
        toml.to_str().unwrap(),
        "--out",
        b.to_str().unwrap(),
    ]);
    assert_mentions(&err, &["switching.toml", "acesses"]);
}

/// The media folder made by scripts/make-media.sh (scripts/test.sh makes it first).
fn media_dir() -> PathBuf {
    let dir = std::env::var_os("MOBMEM_MEDIA")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/media"));
    assert!(
        dir.join(".complete").exists(),
        "{} has no media: run scripts/make-media.sh (scripts/test.sh does)",
        dir.display()
    );
    dir
}

#[test]
fn fs_analyze_reports_space_and_both_read_paths() {
    let dir = tempfile::tempdir().unwrap();
    // 3 pages of incompressible bytes (a simple generator, no crate needed) and 2 of text.
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    let noise: Vec<u8> = (0..3 * 4096)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 24) as u8
        })
        .collect();
    std::fs::write(dir.path().join("noise.bin"), &noise).unwrap();
    std::fs::write(
        dir.path().join("text.txt"),
        "the quick brown fox jumps over the lazy dog\n".repeat(186),
    )
    .unwrap();
    let v = json(&[
        "fs",
        "analyze",
        dir.path().to_str().unwrap(),
        "--json",
        "--policies",
        "stock,threshold:50",
    ]);
    let files = v["files"].as_array().unwrap();
    assert_eq!(files.len(), 2);
    let noise = files
        .iter()
        .find(|f| f["path"].as_str().unwrap().ends_with("noise.bin"))
        .unwrap();
    for p in noise["policies"].as_array().unwrap() {
        assert_eq!(p["storage"]["raw_pages"], 3, "random bytes never shrink");
        let pc = &p["reads"]["page-cache"];
        let sel = &p["reads"]["selective"];
        // Raw pages: the bypass saves the page-cache copy on a first read, and loses on a
        // second one, when the page cache would serve them from RAM.
        assert!(sel["first"]["time_ns"].as_f64() < pc["first"]["time_ns"].as_f64());
        assert!(sel["again"]["time_ns"].as_f64() > pc["again"]["time_ns"].as_f64());
        assert_eq!(pc["again"]["cache_hits"], 3);
        assert_eq!(sel["again"]["cache_hits"], 0);
    }
    let text = files
        .iter()
        .find(|f| f["path"].as_str().unwrap().ends_with("text.txt"))
        .unwrap();
    assert_eq!(text["policies"][0]["storage"]["compressed_pages"], 2);
}

#[test]
fn reproduce_selective_page_cache_on_real_media() {
    let media = media_dir();
    let dir = tempfile::tempdir().unwrap();
    let claims = reproduce(
        "selective-page-cache",
        dir.path(),
        &["--media", media.to_str().unwrap()],
    );
    let ids: Vec<&str> = claims.iter().map(|c| c["id"].as_str().unwrap()).collect();
    assert_eq!(
        ids,
        [
            "faster-at-1mb",
            "gap-grows-with-size",
            "relative-gap-grows-with-size",
            "less-energy-at-1mb",
            "small-space-loss",
            "proposed-read-time-at-1mb"
        ]
    );
    // Real files, not seeded: one run whatever --seeds says, and the report says so.
    assert!(claims.iter().all(|c| c["seeds"] == 1), "{claims:?}");
    assert_eq!(
        verdict(&claims, "proposed-read-time-at-1mb"),
        "not-testable"
    );
    assert_unreproduced_claims_explained(&claims);
    // The paper's direction on real MPEG-4: the proposal reads faster and costs some space.
    assert!(measured(&claims, "faster-at-1mb") > 0.0);
    assert!(measured(&claims, "small-space-loss") >= 0.0);
    let csv = std::fs::read_to_string(dir.path().join("selective-page-cache/results.csv")).unwrap();
    assert!(csv.starts_with(
        "experiment,file,kind,size_mib,platform,scheme,write_policy,read_path,read,at_ms,metric,value"
    ));
    // The paper's Fig. 5: power over time while reading the smallest video.
    assert!(csv.contains(",pxa250,selective,threshold,selective,first,5,power_w,"));
    for figure in ["pxa250-read-time", "pxa250-power-over-time"] {
        assert!(dir
            .path()
            .join(format!("selective-page-cache/{figure}.svg"))
            .exists());
    }
    let figures = read_json(&dir.path().join("selective-page-cache/paper-figures.json"));
    let fig5 = figures
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["paper"] == "Fig. 5")
        .unwrap();
    assert_eq!(fig5["status"], "reproduced");
    assert_eq!(fig5["figures"][0], "pxa250-power-over-time");
    let findings =
        std::fs::read_to_string(dir.path().join("selective-page-cache/findings.json")).unwrap();
    assert!(findings.contains("entropy-bypass") && findings.contains("modern-phone"));
}

#[test]
fn reproduce_without_media_says_how_to_make_it() {
    let dir = tempfile::tempdir().unwrap();
    let err = fails(&[
        "reproduce",
        "selective-page-cache",
        "--out",
        dir.path().to_str().unwrap(),
        "--media",
        dir.path().join("none").to_str().unwrap(),
    ]);
    assert_mentions(&err, &["scripts/make-media.sh"]);
    assert!(!dir.path().join("selective-page-cache").exists());
}

#[test]
fn reproduce_multi_swap_writes_its_claims_and_figures() {
    let dir = tempfile::tempdir().unwrap();
    // Three of the shipped ten NVM sizes, the smallest and the largest among them: the
    // test is of what the command writes, and the full grid took three minutes here.
    let claims = reproduce(
        "multi-swap",
        dir.path(),
        &["--set", "nvm_percent=[1, 10, 100]"],
    );
    assert_eq!(claims.len(), 10);
    // What the model must show whatever the device defaults: the filter keeps most
    // single-access data out of NVM, so it writes NVM far less than plain CLOCK.
    assert!(measured(&claims, "filter-cuts-nvm-writes-average") > 0.0);
    assert!(measured(&claims, "single-access-majority") > 50.0);
    // Hierarchical swap wins at the largest NVM (a ratio of I/O times above 1), and no
    // swap, the killer's cold starts, is no fair test of "close to no swap".
    assert!(measured(&claims, "hierarchical-wins-at-large-nvm") > 1.0);
    assert_eq!(verdict(&claims, "launch-close-to-no-swap"), "not-testable");
    let findings = findings_and_paper_figures(dir.path(), "multi-swap");
    let ids: Vec<&str> = findings.iter().map(|f| f["id"].as_str().unwrap()).collect();
    assert!(ids.contains(&"zram-vs-nvm-swap"), "{ids:?}");
    assert_figures(
        dir.path(),
        "multi-swap",
        &[
            "io-time",
            "flash-accesses",
            "nvm-writes",
            "launch-mean",
            "launch-per-app",
        ],
    );
}

#[test]
fn swap_simulates_a_trace_and_replays_swap_events() {
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("cycling.mmt");
    gen("app-cycling", &trace, &["--seed", "2", "--scale", "0.2"]);
    let run = |arch: &str| {
        json(&[
            "swap",
            "--trace",
            trace.to_str().unwrap(),
            "--architecture",
            arch,
            "--nvm-pages",
            "4000",
            "--json",
        ])
    };
    let flash = run("flash");
    assert_eq!(flash["nvm_writes"], 0);
    assert_eq!(flash["flash_writes"], flash["swap_outs"]);
    let clock = run("parallel-clock");
    assert!(clock["nvm_writes"].as_f64().unwrap() > 0.0);

    // A captured swap trace: page 1 goes out and comes back; page 2 comes in unseen.
    let csv = dir.path().join("swap.csv");
    let header = "time_ns,pid,event,page_kind,owner,index,op,value\n";
    let replay = [
        "swap",
        "--trace",
        csv.to_str().unwrap(),
        "--replay",
        "--architecture",
        "flash",
    ];
    std::fs::write(
        &csv,
        format!("{header}0,7,swap_out,anon,7,1,,\n5,7,swap_in,anon,7,1,,\n"),
    )
    .unwrap();
    let replayed = json(&[&replay[..], &["--json"]].concat());
    assert_eq!(
        (
            replayed["flash_writes"].as_u64(),
            replayed["flash_reads"].as_u64()
        ),
        (Some(1), Some(1))
    );
    std::fs::write(&csv, format!("{header}0,7,swap_in,anon,7,2,,\n")).unwrap();
    let err = fails(&replay);
    assert_mentions(&err, &["event 0", "never swapped out"]);
}

#[test]
fn a_reader_that_stops_early_ends_mobmem_quietly() {
    use std::io::{BufRead, BufReader};
    use std::process::Stdio;
    let mut child = Command::new(env!("CARGO_BIN_EXE_mobmem"))
        .args(["ksm", "--duration-s", "600", "--sample-ms", "100", "--csv"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut first)
        .unwrap();
    assert!(first.starts_with("time_s"), "{first}");
    // The reader is gone (like `| head -1`): mobmem must not panic on its next write.
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!err.contains("panicked"), "{err}");
}

/// `mobmem run FILE --seeds N` and `mobmem reproduce NAME --seeds N` write the same
/// results, claims and findings, byte for byte; returns what `reproduce` printed.
fn run_writes_what_reproduce_writes(name: &str, seeds: &str) -> String {
    let file = format!(
        "{}/../../experiments/{name}.toml",
        env!("CARGO_MANIFEST_DIR")
    );
    let dir = tempfile::tempdir().unwrap();
    let (run, reproduced) = (dir.path().join("run"), dir.path().join("reproduce"));
    ok(&[
        "run",
        &file,
        "--seeds",
        seeds,
        "--out",
        run.to_str().unwrap(),
    ]);
    let printed = ok(&[
        "reproduce",
        name,
        "--seeds",
        seeds,
        "--out",
        reproduced.to_str().unwrap(),
    ]);
    for f in [
        "results.csv",
        "results.json",
        "claims.json",
        "findings.json",
    ] {
        let read = |d: &std::path::Path| std::fs::read(d.join(name).join(f)).unwrap();
        assert_eq!(read(&run), read(&reproduced), "{name}: {f} differs");
    }
    let csv = std::fs::read_to_string(run.join(name).join("results.csv")).unwrap();
    assert!(csv.starts_with("experiment,seed,"), "{}", &csv[..80]);
    printed
}

#[test]
fn run_of_a_shipped_file_writes_what_reproduce_writes() {
    // ksm: the quickest of the shipped files (the composed phone's test runs another).
    run_writes_what_reproduce_writes("ksm", "1");
    // `reproduce --help` lists the shipped files with their summaries.
    let help = ok(&["reproduce", "--help"]);
    for name in [
        "hybrid-cache",
        "multi-swap",
        "page-protection",
        "selective-page-cache",
        "ksm",
        "composed",
    ] {
        assert_mentions(&help, &[&format!(" {name} ")]);
    }
    assert_mentions(&help, &["Bahn, Kim, JIIBC 2023"]);
}

/// The composed phone: `run` of its file and `reproduce composed` write the same bytes,
/// with at least five claims; `run` of a phone file prints all on against all off; a
/// composed file of one's own runs on a phone file of one's own, edited.
#[test]
fn the_composed_phone_runs_from_its_files() {
    let experiments = concat!(env!("CARGO_MANIFEST_DIR"), "/../../experiments");
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("run");
    let out = run_writes_what_reproduce_writes("composed", "1");
    assert!(out.matches("\n  [").count() >= 5, "{out}");

    let phone = format!("{experiments}/phone.toml");
    let printed = ok(&["run", &phone, "--out", run.to_str().unwrap()]);
    let lines: Vec<&str> = printed.lines().collect();
    assert!(
        lines[0].contains("launch_mean_ms") && lines[0].contains("kills"),
        "{printed}"
    );
    assert!(
        lines[1].contains("all-off") && lines[1].contains("mglru"),
        "{printed}"
    );
    assert!(
        lines[2].contains("all-on") && lines[2].contains("zram"),
        "{printed}"
    );

    // A phone of one's own: the 2012 phone without its buffer cache, half the sessions.
    let own = std::fs::read_to_string(format!("{experiments}/phone-2012.toml"))
        .unwrap()
        .replace("name = \"phone-2012\"", "name = \"mine\"")
        .replace("mechanism = \"app-aware\"", "mechanism = \"off\"")
        .replace("baseline = \"hybrid-lru\"", "baseline = \"off\"")
        .replace("sessions = 96", "sessions = 24");
    std::fs::write(dir.path().join("mine.toml"), own).unwrap();
    let ablation = dir.path().join("ablation.toml");
    let run_ablation = [
        "run",
        ablation.to_str().unwrap(),
        "--out",
        run.to_str().unwrap(),
    ];
    std::fs::write(
        &ablation,
        "kind = \"composed\"\nname = \"ablation\"\nreproduces = \"composed\"\nphone_files = [\"mine.toml\"]\n",
    )
    .unwrap();
    ok(&run_ablation);
    let csv = std::fs::read_to_string(run.join("ablation/results.csv")).unwrap();
    assert!(csv.contains(",mine,all-but-dedup,"), "{}", &csv[..200]);
    assert!(
        !csv.contains("only-placement"),
        "the placement slot is not ablated"
    );
    // A shipped phone that does not exist is an error naming the key.
    std::fs::write(
        &ablation,
        "kind = \"composed\"\nname = \"ablation\"\nphones = [\"phone-1999\"]\n",
    )
    .unwrap();
    let e = fails(&run_ablation);
    assert_mentions(&e, &["phones", "phone-1999"]);
}

#[test]
fn devices_lists_every_built_in_profile_and_files_may_name_them() {
    use mobmem::devices::registry::{COST_MODELS, DEVICES, PLATFORMS, ZRAM_PROFILES};
    let out = ok(&["devices"]);
    let names: Vec<&str> = DEVICES
        .names()
        .chain(ZRAM_PROFILES.names())
        .chain(COST_MODELS.names())
        .chain(PLATFORMS.names())
        .collect();
    let listed: Vec<&str> = out
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    assert_eq!(listed, names);
    // A swap experiment's devices by name: the same run as with their figures.
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("t.mmt");
    gen("app-cycling", &trace, &["--scale", "0.2"]);
    let trace = trace.to_str().unwrap().to_string();
    let config = dir.path().join("swap.toml");
    let config_path = config.to_str().unwrap().to_string();
    let swap = ["swap", "--trace", &trace, "--config", &config_path];
    let swap_json = || ok(&[&swap[..], &["--json"]].concat());
    std::fs::write(&config, "[devices]\nflash = \"emmc\"\n").unwrap();
    let named = swap_json();
    let figures = toml::to_string(&mobmem::mm::swap::SwapConfig {
        devices: mobmem::devices::swap::SwapDevices {
            flash: mobmem::devices::EMMC,
            ..Default::default()
        },
        ..Default::default()
    })
    .unwrap();
    std::fs::write(&config, figures).unwrap();
    assert_eq!(named, swap_json());
    std::fs::write(&config, "[devices]\nflash = \"PCM\"\n").unwrap();
    let e = fails(&swap);
    assert_mentions(&e, &["not a flash one"]);
}

/// `sim` shows the metrics a policy's family can make: no PCM or migration columns for
/// a single tier, all of them for a hybrid; and it warns when a policy that places by
/// foreground runs on a trace that marks none.
#[test]
fn sim_shows_its_familys_metrics_and_warns_a_policy_the_trace_leaves_blind() {
    let data = concat!(env!("CARGO_MANIFEST_DIR"), "/../mobmem/tests/data");
    let mmt = format!("{data}/small.mmt");
    let names = |policy: &str| -> Vec<String> {
        let v = json(&sim(&mmt, policy, "100", &["--json"]));
        v.as_object().unwrap().keys().cloned().collect()
    };
    let single = names("lru");
    let hybrid = names("hybrid-lru");
    assert!(single
        .iter()
        .all(|n| !n.starts_with("pcm_") && !n.starts_with("migrations_")));
    assert!(single.contains(&"dram_hits".to_string()) && single.contains(&"fg_time".to_string()));
    let extra: Vec<&String> = hybrid.iter().filter(|n| !single.contains(n)).collect();
    assert_eq!(
        extra.len(),
        11,
        "PCM pages, and the PCM and migration metrics: {extra:?}"
    );
    let text = ok(&sim(&mmt, "lru", "100", &[]));
    assert!(
        !text.contains("pcm_writes") && text.contains("dram_writes"),
        "{text}"
    );

    // small.lis has no foreground marks, small.mmt has them.
    let lis = format!("{data}/small.lis");
    let (_, blind) = run_full(&sim(&lis, "app-aware", "100", &[]));
    assert_mentions(
        &blind,
        &["warning: app-aware", "marks no access as foreground"],
    );
    let (_, seeing) = run_full(&sim(&mmt, "app-aware", "100", &[]));
    assert!(!seeing.contains("warning"), "{seeing}");
    let (_, other) = run_full(&sim(&lis, "hybrid-lru", "100", &[]));
    assert!(!other.contains("warning"), "{other}");
}
