//! `mobmem mrc` and `mobmem sim` at several capacities, as a user runs them.

mod common;

use common::{fails, json, ok};

fn small_trace(dir: &std::path::Path) -> String {
    let path = dir.join("t.mmt");
    ok(&[
        "gen",
        "app-switching",
        "--scale",
        "0.02",
        "--out",
        path.to_str().unwrap(),
    ]);
    path.to_str().unwrap().to_string()
}

#[test]
fn mrc_prints_the_curve_as_json_and_writes_csv_and_svg() {
    let dir = tempfile::tempdir().unwrap();
    let trace = small_trace(dir.path());
    let out = dir.path().join("curve");
    let curve = json(&[
        "mrc",
        "--trace",
        &trace,
        "--capacities",
        "10%..100%/10",
        "--json",
        "--out",
        out.to_str().unwrap(),
    ]);
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
    let sims = json(&[
        "sim",
        "--trace",
        &trace,
        "--policy",
        "lru",
        "--capacity",
        &capacities.join(","),
        "--json",
    ]);
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
}

#[test]
fn mrc_of_another_policy_and_sampled_lru() {
    let dir = tempfile::tempdir().unwrap();
    let trace = small_trace(dir.path());
    let arc = json(&[
        "mrc",
        "--trace",
        &trace,
        "--policy",
        "arc",
        "--capacities",
        "50,500",
        "--json",
    ]);
    assert_eq!(arc.as_array().unwrap().len(), 2);
    let sampled = json(&[
        "mrc",
        "--trace",
        &trace,
        "--capacities",
        "5%,50%",
        "--sample",
        "0.5",
        "--json",
    ]);
    assert_eq!(sampled.as_array().unwrap().len(), 2);
    let e = fails(&[
        "mrc",
        "--trace",
        &trace,
        "--policy",
        "arc",
        "--capacities",
        "50",
        "--sample",
        "0.1",
    ]);
    assert!(e.contains("lru only"), "{e}");
    for bad in ["0", "x", "150%x", "10..5/2", "1..2/0"] {
        let e = fails(&["mrc", "--trace", &trace, "--capacities", bad]);
        assert!(e.contains("capacity"), "{bad}: {e}");
    }
    let e = fails(&[
        "mrc",
        "--trace",
        &trace,
        "--capacities",
        "5",
        "--sample",
        "1.5",
    ]);
    assert!(e.contains("--sample"), "{e}");
}
