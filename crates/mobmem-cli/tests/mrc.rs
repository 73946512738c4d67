//! `mobmem mrc` and `mobmem sim` at several capacities, as a user runs them.

use crate::common;

use common::{assert_mentions, fails, gen, json, mrc, ok, sim};

fn small_trace(dir: &std::path::Path) -> String {
    let path = dir.join("t.mmt");
    gen("app-switching", &path, &["--scale", "0.02"]);
    path.to_str().unwrap().to_string()
}

#[test]
fn mrc_prints_the_curve_as_json_and_writes_csv_and_svg() {
    let dir = tempfile::tempdir().unwrap();
    let trace = small_trace(dir.path());
    let out = dir.path().join("curve");
    let curve = json(&mrc(
        &trace,
        &[
            "--capacities",
            "10%..100%/10",
            "--json",
            "--out",
            out.to_str().unwrap(),
        ],
    ));
    let points = curve.as_array().unwrap();
    assert_eq!(points.len(), 10);
    for p in points {
        let (hits, misses, accesses) = (
            p["hits"].as_u64().unwrap(),
            p["misses"].as_u64().unwrap(),
            p["accesses"].as_u64().unwrap(),
        );
        assert_eq!(hits + misses, accesses);
        assert!(p["capacity"].as_u64().unwrap() > 0);
    }
    // The same sizes simulated one by one with `sim` give the same hits.
    let capacities: Vec<String> = points.iter().map(|p| p["capacity"].to_string()).collect();
    let sims = json(&sim(&trace, "lru", &capacities.join(","), &["--json"]));
    let sims = sims.as_array().unwrap();
    assert_eq!(sims.len(), points.len());
    for (p, s) in points.iter().zip(sims) {
        assert_eq!(p["hits"], s["hits"]);
        assert_eq!(p["capacity"], s["dram_pages"]);
    }
    let csv = std::fs::read_to_string(out.join("mrc.csv")).unwrap();
    assert!(csv.lines().count() > 10, "{csv}");
    let svg = std::fs::read_to_string(out.join("mrc.svg")).unwrap();
    assert!(svg.starts_with("<svg") && svg.contains("miss ratio"));
    // The footprint, the largest size (100 %), is marked; the axis is linear.
    let footprint = points.last().unwrap()["capacity"].as_u64().unwrap();
    assert!(
        svg.contains(&format!("footprint: {footprint} pages")),
        "{svg}"
    );
    assert!(!svg.contains("log scale"));
    // On a log axis, 10 % to 100 % take as much width as 1 % to 10 % would: the label
    // says so, and the mark is still there.
    let logged = dir.path().join("logged");
    ok(&mrc(
        &trace,
        &[
            "--capacities",
            "1%,10%,100%",
            "--out",
            logged.to_str().unwrap(),
            "--log-x",
        ],
    ));
    let svg = std::fs::read_to_string(logged.join("mrc.svg")).unwrap();
    assert!(svg.contains("cache size (pages) (log scale)"), "{svg}");
    assert!(
        svg.contains(&format!("footprint: {footprint} pages")),
        "{svg}"
    );
    // --log-x draws the --out plot: alone it is refused.
    let e = fails(&mrc(&trace, &["--capacities", "10%", "--log-x"]));
    assert_mentions(&e, &["--out"]);
    // A second run replaces its own curve; a file of someone else's there is refused
    // and left as it was, the curve beside it too.
    let out_arg = [
        "--capacities",
        "10%..100%/5",
        "--out",
        out.to_str().unwrap(),
    ];
    ok(&mrc(&trace, &out_arg));
    let csv = std::fs::read_to_string(out.join("mrc.csv")).unwrap();
    assert!(csv.lines().count() > 5, "{csv}");
    std::fs::write(out.join("mrc.svg"), "the user's").unwrap();
    let e = fails(&mrc(&trace, &out_arg));
    assert_mentions(&e, &["mrc.svg", "not mobmem's own"]);
    assert_eq!(
        std::fs::read_to_string(out.join("mrc.svg")).unwrap(),
        "the user's"
    );
    assert_eq!(std::fs::read_to_string(out.join("mrc.csv")).unwrap(), csv);
}

#[test]
fn mrc_of_another_policy_and_sampled_lru() {
    let dir = tempfile::tempdir().unwrap();
    let trace = small_trace(dir.path());
    let arc = json(&mrc(
        &trace,
        &["--policy", "arc", "--capacities", "50,500", "--json"],
    ));
    assert_eq!(arc.as_array().unwrap().len(), 2);
    let sampled = json(&mrc(
        &trace,
        &["--capacities", "5%,50%", "--sample", "0.5", "--json"],
    ));
    assert_eq!(sampled.as_array().unwrap().len(), 2);
    let e = fails(&mrc(
        &trace,
        &[
            "--policy",
            "arc",
            "--capacities",
            "50",
            "--sample-size",
            "100",
        ],
    ));
    assert_mentions(&e, &["lru only"]);
    let e = fails(&mrc(
        &trace,
        &[
            "--policy",
            "hybrid-lru",
            "--capacities",
            "50",
            "--sample",
            "0.5",
        ],
    ));
    assert_mentions(&e, &["single-tier"]);
    for bad in ["0", "x", "150%x", "10..5/2", "1..2/0"] {
        let e = fails(&["mrc", "--trace", &trace, "--capacities", bad]);
        assert!(e.contains("capacity"), "{bad}: {e}");
    }
    let e = fails(&mrc(&trace, &["--capacities", "5", "--sample", "1.5"]));
    assert_mentions(&e, &["--sample"]);
}

/// (object id, size) of requests worked by hand: with 1 KiB of LRU, a(600) b(300)
/// c(200: evicts a) b a(600: evicts c) d(2000: too large) b c(evicts a): 6 misses, 3
/// evictions, one request too large.
const BY_HAND: [(u64, u32); 8] = [
    (1, 600),
    (2, 300),
    (3, 200),
    (2, 300),
    (1, 600),
    (4, 2000),
    (2, 300),
    (3, 200),
];

/// A small oracleGeneral file: (object id, size) per record.
fn sized_trace(dir: &std::path::Path, records: &[(u64, u32)]) -> String {
    let mut bytes = Vec::new();
    for (i, &(id, size)) in records.iter().enumerate() {
        bytes.extend_from_slice(&(i as u32).to_le_bytes());
        bytes.extend_from_slice(&id.to_le_bytes());
        bytes.extend_from_slice(&size.to_le_bytes());
        bytes.extend_from_slice(&(-1i64).to_le_bytes());
    }
    let path = dir.join("sized.oracleGeneral.bin");
    std::fs::write(&path, bytes).unwrap();
    path.to_str().unwrap().to_string()
}

#[test]
fn sim_takes_capacities_in_bytes_on_traces_with_object_sizes() {
    let dir = tempfile::tempdir().unwrap();
    let trace = sized_trace(dir.path(), &BY_HAND);
    let one = json(&sim(&trace, "lru", "1000B", &["--json"]));
    assert_eq!(one["capacity_bytes"], 1000);
    assert_eq!(one["misses"], 6);
    assert_eq!(one["evictions"], 3);
    assert_eq!(one["too_large"], 1);
    assert_eq!(one["bytes_missed"], 3900);
    // Several sizes: one row each, in order; the same run as alone.
    let all = json(&sim(&trace, "lru", "1000B,1KiB,1MB", &["--json"]));
    let all = all.as_array().unwrap();
    assert_eq!(all.len(), 3);
    assert_eq!(all[0], one);
    assert_eq!(all[1]["capacity_bytes"], 1024);
    assert_eq!(all[2]["misses"], 4, "1 MB holds everything: 4 cold misses");
    // Every single-tier policy runs by bytes, OPT too (it reads the trace whole); the
    // 1 MB capacity holds every object, so each has only the 4 cold misses.
    for policy in [
        "s3fifo",
        "arc",
        "2q",
        "lirs",
        "slru-4",
        "w-tinylfu",
        "clock",
        "opt",
    ] {
        let run = json(&sim(&trace, policy, "1000B,1MB", &["--json"]));
        let run = run.as_array().unwrap();
        assert_eq!(run[1]["misses"], 4, "{policy}");
        let m = &run[0];
        assert_eq!(m["accesses"], 8, "{policy}");
        assert!(m["misses"].as_u64().unwrap() >= 4, "{policy}");
    }
    // Hybrid policies place pages in DRAM and PCM frames: pages only, and they say so.
    let err = fails(&sim(&trace, "app-aware", "1MiB", &[]));
    assert_mentions(&err, &["capacities in pages only", "s3fifo"]);
    let err = fails(&sim(&trace, "lru", "10,1MiB", &[]));
    assert_mentions(&err, &["not both"]);
    let mmt = small_trace(dir.path());
    let err = fails(&sim(&mmt, "lru", "1MiB", &[]));
    assert_mentions(&err, &["object sizes"]);
}

/// `mrc` with capacities in bytes: one row a size, each the same run as `sim`'s.
#[test]
fn mrc_takes_capacities_in_bytes_for_every_single_tier_policy() {
    let dir = tempfile::tempdir().unwrap();
    let trace = sized_trace(dir.path(), &BY_HAND);
    for policy in ["lru", "lirs", "opt"] {
        let curve = json(&mrc(
            &trace,
            &["--policy", policy, "--capacities", "1000B,1MB", "--json"],
        ));
        let alone = json(&sim(&trace, policy, "1000B,1MB", &["--json"]));
        let (curve, alone) = (curve.as_array().unwrap(), alone.as_array().unwrap());
        assert_eq!(curve.len(), 2, "{policy}");
        for (c, s) in curve.iter().zip(alone) {
            for figure in [
                "capacity_bytes",
                "misses",
                "bytes_missed",
                "byte_miss_ratio",
            ] {
                assert_eq!(c[figure], s[figure], "{policy} {figure}");
            }
        }
        assert_eq!(curve[1]["misses"], 4, "{policy}: 1 MB holds everything");
    }
    let lru = json(&mrc(
        &trace,
        &["--policy", "lru", "--capacities", "1000B", "--json"],
    ));
    assert_eq!(lru[0]["misses"], 6, "worked by hand (BY_HAND)");
    for (policy, capacities, says) in [
        ("lru", "10,1MiB", "not both"),
        ("hybrid-lru", "1MiB", "capacities in pages only"),
    ] {
        let err = fails(&mrc(
            &trace,
            &["--policy", policy, "--capacities", capacities],
        ));
        assert!(err.contains(says), "{err}");
    }
}

/// `bench` on small traces: every figure it reports is there and adds up.
/// A trace that cannot be read is named once, with the line, whichever way the curve is
/// made (LRU in one pass, another policy per size, sizes in bytes).
#[test]
fn a_bad_trace_is_named_once_with_its_line() {
    let (_dir, path) = common::temp_file(
        "bad.csv",
        "time_ns,pid,event,page_kind,owner,index,op,value\n1,2,access,anon,3,x,r,\n",
    );
    let trace = path.to_str().unwrap();
    for extra in [
        &["--capacities", "100"][..],
        &["--capacities", "100", "--policy", "arc"],
        &["--capacities", "1MiB"],
    ] {
        let mut args = vec!["mrc", "--trace", trace];
        args.extend_from_slice(extra);
        let message = common::fails(&args);
        assert_eq!(message.matches(trace).count(), 1, "{extra:?}: {message}");
        assert!(message.contains("line 2"), "{extra:?}: {message}");
    }
}

#[test]
fn bench_reports_the_mmt_oracle_general_and_curve_figures() {
    // A block trace of the user's, timed against its .mmt copy.
    let dir = tempfile::tempdir().unwrap();
    let blocks = dir.path().join("blocks.csv");
    let mut text = String::from("proces,device,rw_flag,sector,size,timestamp\n");
    for i in 0..3000u64 {
        text.push_str(&format!(
            "app-{},8388608,R,{},16,{}.5\n",
            i % 3,
            (i * 7919) % 4000 * 8,
            i
        ));
    }
    std::fs::write(&blocks, text).unwrap();
    let report = json(&[
        "bench",
        "--ingest",
        blocks.to_str().unwrap(),
        "--format",
        "mobile-block",
        "--accesses",
        "20000",
        "--zipf-requests",
        "20000",
        "--zipf-objects",
        "1000",
        "--policies",
        "lru,clock",
        "--zipf-policies",
        "gdsf,lru",
        "--repeat",
        "1",
        "--time-model-seconds",
        "5",
        "--memory-objects",
        "3000",
        "--json",
    ]);
    let runs = report["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 2);
    for r in runs {
        assert_eq!(r["accesses"], 20000);
        assert!(r["accesses_per_second"].as_f64().unwrap() > 0.0);
    }
    assert!(
        report["oracle_general"]["lru_accesses_per_second"]
            .as_f64()
            .unwrap()
            > 0.0
    );
    assert!(report["lru_curve_over_one_lru_run"].as_f64().unwrap() > 0.0);
    // The CSV copy holds the generated trace's accesses (its .mmt also the starts and
    // importance changes); the --ingest file's copy, its 6000 accesses (16 sectors, two
    // pages, a line). Each has its four rates.
    for (key, accesses, mmt_events) in [
        ("csv_columns", 20000, 20000..20100),
        ("ingest", 6000, 6000..6001),
    ] {
        let c = &report[key];
        assert_eq!(c["accesses"], accesses, "{key}: {c}");
        assert!(
            mmt_events.contains(&c["mmt_events"].as_u64().unwrap()),
            "{key}: {c}"
        );
        for rate in [
            "decode_accesses_per_second",
            "mmt_decode_events_per_second",
            "lru_accesses_per_second",
            "mmt_lru_accesses_per_second",
        ] {
            assert!(c[rate].as_f64().unwrap() > 0.0, "{key} {rate}: {c}");
        }
        // Each repeat's pair of readings gives a ratio; their spread is ordered.
        for pairs in ["pair_over_mmt", "pair_lru_over_mmt"] {
            let p = |k: &str| c[pairs][k].as_f64().unwrap();
            assert!(
                0.0 < p("min") && p("min") <= p("median") && p("median") <= p("max"),
                "{key} {pairs}: {c}"
            );
        }
    }
    assert!(report["ingest"]["trace"]
        .as_str()
        .unwrap()
        .ends_with("blocks.csv"));
    // How to read a file goes with the file.
    let message = common::fails(&["bench", "--format", "mobile-block"]);
    assert!(message.contains("--ingest"), "{message}");
    let zipf = &report["zipf_oracle_general"];
    assert_eq!(zipf["requests"], 20000);
    let distinct = zipf["distinct_objects"].as_u64().unwrap();
    assert!(distinct > 100 && distinct <= 1000, "{distinct}");
    assert!(
        zipf["lru_whole_process_requests_per_second"]
            .as_f64()
            .unwrap()
            > 0.0
    );
    assert!(zipf["cachesim"].is_null());
    let timed: Vec<&str> = zipf["policies"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["policy"].as_str().unwrap())
        .collect();
    assert_eq!(timed, ["gdsf", "lru"]);
    // LRU's memory at scale says whether it meets its goal by its own figure.
    let memory = &report["memory_at_scale"];
    assert_eq!(memory["distinct_objects"], 3000);
    let bytes = memory["lru_bytes_per_distinct_object"].as_f64().unwrap();
    assert!(bytes >= 0.0, "{memory}");
    assert_eq!(memory["meets_goal"], bytes <= 32.0);
    // The time model's machine ran its 5 simulated seconds: every thread began steps.
    let time = &report["time_model"];
    assert_eq!(time["simulated_seconds"], 5.0);
    assert!(time["steps"].as_u64().unwrap() > 32 * 3, "{time}");
    assert!(time["simulated_seconds_per_second"].as_f64().unwrap() > 0.0);
}

/// `bench --cachesim`: each repetition times mobmem and the other simulator one after
/// the other, and the figures are the best of each and the spread of the pairs' ratios.
/// The other simulator here is a script that checks the arguments it is given, prints
/// what `cachesim` prints and takes a known time.
#[test]
fn bench_times_cachesim_in_pairs_with_mobmem() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("fake-cachesim");
    std::fs::write(
        &script,
        "#!/bin/sh\n\
         case \"$2 $3 $5 $6\" in \"oracleGeneral lru --ignore-obj-size 1\") ;; *) exit 3 ;; esac\n\
         sleep 0.3\n\
         echo \"$1 LRU cache size $4, miss ratio 0.5000\"\n",
    )
    .unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    // A small bench of LRU alone, timed against the script.
    let args = |requests: &'static str, repeat: &'static str| -> Vec<String> {
        let script = script.to_str().unwrap().to_string();
        [
            "bench",
            "--accesses",
            "2000",
            "--policies",
            "lru",
            "--zipf-requests",
            requests,
            "--zipf-objects",
            "1000",
            "--zipf-policies",
            "lru",
            "--repeat",
            repeat,
            "--time-model-seconds",
            "0",
            "--memory-objects",
            "0",
            "--cachesim",
        ]
        .map(String::from)
        .into_iter()
        .chain([script])
        .collect()
    };
    let run = args("20000", "3");
    let report = json(
        &[
            run.iter().map(String::as_str).collect::<Vec<_>>(),
            vec!["--json"],
        ]
        .concat(),
    );
    let lru = &report["zipf_oracle_general"]["policies"][0];
    let ours = lru["whole_process_seconds"].as_f64().unwrap();
    let theirs = lru["cachesim"]["seconds"].as_f64().unwrap();
    assert!(theirs >= 0.3, "{lru}");
    let speedup = lru["cachesim"]["mobmem_speedup"].as_f64().unwrap();
    assert!((speedup - theirs / ours).abs() < 1e-9, "{lru}");
    let pairs = &lru["cachesim"]["pair_speedups"];
    let (min, median, max) = (
        pairs["min"].as_f64().unwrap(),
        pairs["median"].as_f64().unwrap(),
        pairs["max"].as_f64().unwrap(),
    );
    assert!(0.0 < min && min <= median && median <= max, "{pairs}");
    // A cachesim that fails is an error that says so.
    std::fs::write(&script, "#!/bin/sh\necho broken >&2\nexit 1\n").unwrap();
    let run = args("2000", "1");
    let message = common::fails(&run.iter().map(String::as_str).collect::<Vec<_>>());
    assert!(message.contains("broken"), "{message}");
}

#[test]
fn bench_phone_times_a_phone_day_and_refuses_what_it_cannot_run() {
    let report = json(&["bench", "phone", "--scale", "0.01", "--json"]);
    assert_eq!(report["configuration"], "all-on");
    assert_eq!(report["scale"], 0.01);
    let simulated = report["simulated_seconds"].as_f64().unwrap();
    let run = report["run_seconds"].as_f64().unwrap();
    assert!(simulated > 60.0 && run > 0.0, "{report}");
    let rate = report["simulated_seconds_per_wall_second"]
        .as_f64()
        .unwrap();
    assert!((rate - simulated / run).abs() <= 1e-6 * rate, "{report}");
    assert_eq!(report["goal_simulated_seconds_per_wall_second"], 1440.0);
    assert_eq!(report["meets_goal"].as_bool().unwrap(), rate >= 1440.0);
    assert!(report["distinct_pages"].as_u64().unwrap() > 1000);
    assert!(report["launches"].as_u64().unwrap() > 0);
    // A scale the phone refuses, and the phone's options on the cache bench, are errors.
    let message = common::fails(&["bench", "phone", "--scale", "2"]);
    assert!(message.contains("scale"), "{message}");
    let message = common::fails(&["bench", "--scale", "0.5"]);
    assert!(message.contains("bench phone"), "{message}");
}

/// Miniature simulation (`--sample` with a policy other than lru) on the ARC paper's P3
/// trace: ARC, S3-FIFO and SIEVE from mini caches of 1 % of each size, against full
/// simulations at the same ten sizes: a mean absolute error of the miss ratio under 0.01
/// for each, every row naming its policy.
#[test]
fn miniature_curves_come_within_a_hundredth_of_full_simulation_on_p3() {
    let test = "miniature_curves_come_within_a_hundredth_of_full_simulation_on_p3";
    let Some(p3) = common::public_trace(test, "arc/P3.lis.zst") else {
        return;
    };
    let p3 = p3.to_str().unwrap();
    let base = [
        "--policy",
        "arc,s3fifo,sieve",
        "--capacities",
        "1%..100%/10",
        "--json",
    ];
    let mini = json(&mrc(p3, &[&base[..], &["--sample", "0.01"]].concat()));
    let full = json(&mrc(p3, &base));
    let (mini, full) = (mini.as_array().unwrap(), full.as_array().unwrap());
    assert_eq!(mini.len(), 30);
    assert_eq!(full.len(), 30);
    let ratio = |row: &serde_json::Value| {
        row["misses"].as_f64().unwrap() / row["accesses"].as_f64().unwrap()
    };
    for (k, policy) in ["arc", "s3fifo", "sieve"].into_iter().enumerate() {
        let rows = k * 10..(k + 1) * 10;
        let mut error = 0.0;
        for i in rows {
            assert_eq!(mini[i]["policy"], policy);
            assert_eq!(full[i]["policy"], policy);
            assert_eq!(mini[i]["capacity"], full[i]["capacity"]);
            error += (ratio(&mini[i]) - ratio(&full[i])).abs() / 10.0;
        }
        assert!(error < 0.01, "{policy}: mean absolute error {error:.4}");
    }
}

#[test]
fn sim_window_out_writes_the_windows_as_a_table_and_a_plot() {
    let dir = tempfile::tempdir().unwrap();
    let trace = small_trace(dir.path());
    let out = dir.path().join("windows");
    let out_arg = out.to_str().unwrap();
    let windows = json(&sim(
        &trace,
        "lru,fifo",
        "100,400",
        &["--window", "2000", "--json", "--out", out_arg],
    ));
    let windows = windows.as_array().unwrap();
    let csv = std::fs::read_to_string(out.join("windows.csv")).unwrap();
    // Every window is in the table under its method, at the requests read by its end,
    // with the miss ratio printed.
    for w in windows {
        let method = format!("{} {}", w["policy"].as_str().unwrap(), w["capacity"]);
        let end = w["first_request"].as_u64().unwrap() + w["requests"].as_u64().unwrap();
        let row = format!("windows,{method},{end},misses,{}\n", w["misses"]);
        assert!(csv.contains(&row), "{row} not in\n{csv}");
    }
    assert_eq!(
        csv.lines().count(),
        1 + 3 * windows.len(),
        "a header, then requests, misses and miss ratio of each window"
    );
    let svg = std::fs::read_to_string(out.join("windows.svg")).unwrap();
    assert!(svg.starts_with("<svg") && svg.contains("miss ratio over time"));
    for line in ["lru 100", "lru 400", "fifo 100", "fifo 400"] {
        assert!(svg.contains(line), "{line} is not in the legend");
    }
    // A second run replaces mobmem's own files; a file of the user's there is refused
    // and left as it was, and so is the table beside it.
    ok(&sim(
        &trace,
        "lru",
        "100",
        &["--window", "2000", "--out", out_arg],
    ));
    let csv = std::fs::read_to_string(out.join("windows.csv")).unwrap();
    std::fs::write(out.join("windows.svg"), "the user's").unwrap();
    let e = fails(&sim(
        &trace,
        "lru",
        "100",
        &["--window", "500", "--out", out_arg],
    ));
    assert_mentions(&e, &["windows.svg", "not mobmem's own"]);
    assert_eq!(
        std::fs::read_to_string(out.join("windows.svg")).unwrap(),
        "the user's"
    );
    assert_eq!(
        std::fs::read_to_string(out.join("windows.csv")).unwrap(),
        csv
    );
    // --out is for the windows: without --window it is refused.
    let e = fails(&sim(&trace, "lru", "100", &["--out", out_arg]));
    assert_mentions(&e, &["--window"]);
}

#[test]
fn hashing_object_ids_needs_a_trace_of_objects() {
    let dir = tempfile::tempdir().unwrap();
    // The generated workload keys its pages by file and by process: no object ids.
    let trace = small_trace(dir.path());
    let e = fails(&sim(&trace, "w-tinylfu", "100", &["--hash-object-ids"]));
    assert_mentions(&e, &["--hash-object-ids", "not objects", "t.mmt"]);
    // In bytes the trace must have sizes first.
    let e = fails(&sim(&trace, "w-tinylfu", "1MiB", &["--hash-object-ids"]));
    assert_mentions(&e, &["bytes", "object sizes"]);
    let e = fails(&mrc(
        &trace,
        &[
            "--policy",
            "arc",
            "--capacities",
            "100",
            "--hash-object-ids",
        ],
    ));
    assert_mentions(&e, &["--hash-object-ids", "not objects"]);
    let e = fails(&mrc(
        &trace,
        &[
            "--policy",
            "arc",
            "--capacities",
            "1MiB",
            "--hash-object-ids",
        ],
    ));
    assert_mentions(&e, &["bytes", "object sizes"]);
    // A CSV of objects has them: the flag is taken, and a policy that hashes nothing
    // gives what it gives without it.
    let csv = dir.path().join("objects.csv");
    let lines: String = (0..3000u64)
        .map(|i| format!("{},{}\n", i, (i * 7919) % 701))
        .collect();
    std::fs::write(&csv, format!("time,obj\n{lines}")).unwrap();
    let csv = csv.to_str().unwrap();
    let spec = ["--columns", "has-header=true, time-col=1, obj-id-col=2"];
    let with = json(&sim(
        csv,
        "lru",
        "50",
        &[&spec[..], &["--json", "--hash-object-ids"]].concat(),
    ));
    let without = json(&sim(csv, "lru", "50", &[&spec[..], &["--json"]].concat()));
    assert_eq!(with, without);
    ok(&sim(
        csv,
        "w-tinylfu",
        "50,100",
        &[&spec[..], &["--hash-object-ids"]].concat(),
    ));
}
