//! `mobmem reclaim`, `mobmem gen gallery-usb` and `mobmem reproduce page-protection`
//! end to end, as a user runs them.

use crate::common;

use std::collections::HashMap;
use std::path::Path;

use common::{
    assert_figures, assert_mentions, fails, findings_and_paper_figures, gen, measured, ok,
    read_json, reproduce, run_full, temp_file, verdict,
};

/// A gallery-usb trace at scale 0.2 in `dir`: its path.
fn gallery_trace(dir: &Path, name: &str, extra: &[&str]) -> String {
    let path = dir.join(name);
    gen("gallery-usb", &path, &[&["--scale", "0.2"], extra].concat());
    path.to_str().unwrap().to_string()
}

/// CSV output as metric -> policy -> value.
fn csv(out: &str) -> HashMap<String, HashMap<String, f64>> {
    let mut lines = out.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    assert_eq!(header[0], "metric");
    lines
        .map(|l| {
            let cells: Vec<&str> = l.split(',').collect();
            let values = header[1..]
                .iter()
                .zip(&cells[1..])
                .map(|(p, v)| (p.to_string(), v.parse::<f64>().unwrap_or(f64::NAN)))
                .collect();
            (cells[0].to_string(), values)
        })
        .collect()
}

#[test]
fn gallery_usb_with_and_without_background_on_every_policy() {
    let dir = tempfile::tempdir().unwrap();
    let with_io = gallery_trace(dir.path(), "io.mmt", &[]);
    let without_io = gallery_trace(dir.path(), "quiet.mmt", &["--no-background"]);

    // The default table: every policy side by side.
    let table = ok(&["reclaim", "--trace", &with_io]);
    for name in [
        "stock",
        "fmp",
        "memcg-low",
        "mglru",
        "interactive_major_faults",
    ] {
        assert!(table.contains(name), "{name} in\n{table}");
    }

    let io = csv(&ok(&["reclaim", "--trace", &with_io, "--csv"]));
    let quiet = csv(&ok(&[
        "reclaim",
        "--trace",
        &without_io,
        "--policy",
        "stock,fmp",
        "--csv",
    ]));
    let faults =
        |t: &HashMap<String, HashMap<String, f64>>, p: &str| t["interactive_major_faults"][p];
    // The background transfer raises the Gallery's faults on the stock kernel, and FMP
    // takes the rise away (only first reads are left, as without the transfer).
    assert!(faults(&io, "stock") > faults(&quiet, "stock"));
    assert!(faults(&io, "fmp") < faults(&io, "stock"));
    assert_eq!(faults(&io, "fmp"), io["interactive_cold_faults"]["fmp"]);
    assert_eq!(io["interactive_refaults"]["fmp"], 0.0);
    assert!(io["pages_scanned"]["stock"] > 0.0);
    assert_eq!(quiet["pages_scanned"]["stock"], 0.0);
    // Same inputs, same output.
    assert_eq!(
        ok(&["reclaim", "--trace", &with_io, "--csv"]),
        ok(&["reclaim", "--trace", &with_io, "--csv"])
    );

    // JSON: one object per policy, in the order asked; memory from --memory-mib.
    let json: serde_json::Value = serde_json::from_str(&ok(&[
        "reclaim",
        "--trace",
        &with_io,
        "--policy",
        "mglru,stock",
        "--memory-mib",
        "96",
        "--json",
    ]))
    .unwrap();
    let runs = json.as_array().unwrap();
    assert_eq!(runs.len(), 2);
    assert_eq!(runs[0]["policy"], "mglru");
    assert_eq!(runs[1]["policy"], "stock");
    assert_eq!(runs[1]["memory_pages"], 96 * 256);
    assert!(runs[1]["rt_p95_ms"].as_f64().unwrap() >= runs[1]["rt_p50_ms"].as_f64().unwrap());
}

#[test]
fn reclaim_errors_are_clear() {
    let dir = tempfile::tempdir().unwrap();
    let trace = gallery_trace(dir.path(), "t.mmt", &["--no-background"]);
    let e = fails(&["reclaim", "--trace", &trace, "--policy", "stock,lru-9"]);
    assert_mentions(&e, &["unknown reclaim policy 'lru-9'", "fmp"]);
    let e = fails(&["reclaim", "--trace", "no/such/file.mmt"]);
    assert_mentions(&e, &["no/such/file.mmt"]);
    let e = fails(&["reclaim", "--trace", &trace, "--memory-mib", "0"]);
    assert_mentions(&e, &["--memory-mib"]);
    let junk = dir.path().join("junk.mmt");
    std::fs::write(&junk, b"not a trace at all").unwrap();
    let e = fails(&["reclaim", "--trace", junk.to_str().unwrap()]);
    assert_mentions(&e, &["junk.mmt"]);
    let config = dir.path().join("bad.toml");
    std::fs::write(&config, "swappiness = 500\n").unwrap();
    let e = fails(&[
        "reclaim",
        "--trace",
        &trace,
        "--config",
        config.to_str().unwrap(),
    ]);
    assert_mentions(&e, &["swappiness"]);
    let out = dir.path().join("x.mmt");
    let e = fails(&[
        "gen",
        "app-cycling",
        "--no-background",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_mentions(&e, &["gallery-usb"]);
    assert!(ok(&["reclaim", "--list"]).contains("memcg-low"));
    assert!(ok(&["gen", "--list"]).contains("gallery-usb"));
}

#[test]
fn reproduce_page_protection_writes_its_claims_and_figures() {
    let dir = tempfile::tempdir().unwrap();
    // Five seeds, as the docs' table was made.
    let claims = reproduce("page-protection", dir.path(), &["--seeds", "5"]);
    assert_eq!(claims.len(), 5);
    let measured = |id: &str| measured(&claims, id);
    // What the model must show whatever its defaults: the I/O raises the interactive
    // faults and FMP lowers them.
    assert!(measured("background-io-raises-faults") > 0.0);
    assert!(measured("fmp-cuts-faults") > 0.0);
    assert!(measured("fmp-cuts-response-time") > 0.0);
    // The paper's overheads are benchmark scores, which the model cannot run.
    assert_eq!(verdict(&claims, "fmp-overhead-with-io"), "not-testable");
    assert_eq!(
        verdict(&claims, "fmp-no-overhead-without-io"),
        "not-testable"
    );
    assert_eq!(
        findings_and_paper_figures(dir.path(), "page-protection").len(),
        3
    );
    // The measured table of docs/reclaim.md is what the reproduction measures: each cell
    // is the mean over the five seeds, rounded.
    let results: serde_json::Value = serde_json::from_slice(
        &std::fs::read(dir.path().join("page-protection/results.json")).unwrap(),
    )
    .unwrap();
    let runs = results["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 5);
    let mean = |series: &str, metric: &str| -> f64 {
        let values: Vec<f64> = runs
            .iter()
            .map(|run| {
                run["results"]["rows"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .find(|r| r["scope"] == "run" && r["series"] == series)
                    .and_then(|r| r["metrics"][metric].as_f64())
                    .unwrap_or_else(|| panic!("{series} {metric}"))
            })
            .collect();
        values.iter().sum::<f64>() / values.len() as f64
    };
    let docs = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/reclaim.md"),
    )
    .unwrap();
    let series = [
        "stock, no I/O",
        "stock + I/O",
        "fmp + I/O",
        "memcg-low + I/O",
        "mglru + I/O",
    ];
    for (label, metric) in [
        ("Gallery major faults", "interactive_major_faults"),
        ("of which refaults/swap-ins", "interactive_refaults"),
        ("pages scanned", "pages_scanned"),
        ("direct reclaims (lumpy)", "direct_reclaims"),
    ] {
        let line = docs
            .lines()
            .find(|l| l.starts_with(&format!("| {label} |")))
            .unwrap_or_else(|| panic!("docs row {label}"));
        let cells: Vec<f64> = line
            .split('|')
            .skip(2)
            .filter(|c| !c.trim().is_empty())
            .map(|c| c.trim().replace(',', "").parse().unwrap())
            .collect();
        let measured: Vec<f64> = series.iter().map(|s| mean(s, metric).round()).collect();
        assert_eq!(cells, measured, "docs/reclaim.md row '{label}'");
    }
    assert_figures(
        dir.path(),
        "page-protection",
        &[
            "interactive-faults",
            "response-time",
            "scan-work",
            "faults-vs-memory",
            "rt-p95-vs-memory",
        ],
    );
}

/// `reproduce --sensitivity` reruns the claims at both ends of each assumed constant: the
/// fault counts do not depend on the time constants, the response time does, and the
/// summary gains a robust column.
#[test]
fn sensitivity_reruns_the_claims_at_each_end_of_each_assumed_constant() {
    let dir = tempfile::tempdir().unwrap();
    let small = [
        "--set",
        "workload.interactions=40",
        "--set",
        "memory_mib=[128]",
        "--set",
        "stream_pages=[0, 4800]",
        "--set",
        r#"policies=["stock", "fmp"]"#,
    ];
    let mut args = vec!["--sensitivity", "--seeds", "1"];
    args.extend_from_slice(&small);
    let claims = reproduce("page-protection", dir.path(), &args);
    let folder = dir.path().join("page-protection");
    let s = read_json(&folder.join("sensitivity.json"));
    let keys: Vec<&str> = (s["constants"].as_array().unwrap().iter())
        .map(|c| c["key"].as_str().unwrap())
        .collect();
    assert_eq!(keys, ["reclaim.execution_ms", "reclaim.fault_ms"]);
    let of = |id: &str| {
        let all = s["claims"].as_array().unwrap();
        all.iter().find(|c| c["id"] == id).unwrap().clone()
    };
    assert_eq!(s["claims"].as_array().unwrap().len(), claims.len());
    let mean_at = |c: &serde_json::Value, i: usize| c["ends"][i]["outcome"]["mean"].as_f64();
    // Faults are counted, not timed: every end gives the base's count.
    let faults = of("background-io-raises-faults");
    assert_eq!(faults["ends"].as_array().unwrap().len(), 4);
    for i in 0..4 {
        assert_eq!(mean_at(&faults, i), faults["base"]["mean"].as_f64());
    }
    assert_eq!(faults["robust"], true);
    // The response time's cut shrinks as T_E grows (the saving is a smaller share).
    let rt = of("fmp-cuts-response-time");
    assert!(mean_at(&rt, 0).unwrap() > mean_at(&rt, 1).unwrap(), "{rt}");
    assert!(mean_at(&rt, 2).unwrap() < mean_at(&rt, 3).unwrap(), "{rt}");
    for c in &claims {
        let id = c["id"].as_str().unwrap();
        assert!(
            folder.join(format!("sensitivity-{id}.svg")).exists(),
            "{id}"
        );
    }
    let page = std::fs::read_to_string(folder.join("index.html")).unwrap();
    assert!(page.contains("Sensitivity to the assumed constants"));
    let summary = ok(&["report", "summary", dir.path().to_str().unwrap()]);
    assert!(summary.contains("| verdict | robust |"), "{summary}");
    // An end that is no range is refused before anything runs.
    let mut bad = vec!["reproduce", "page-protection", "--sensitivity", "--out"];
    let out = dir.path().join("bad");
    bad.push(out.to_str().unwrap());
    bad.extend_from_slice(&["--set", "assumed.0.low=500"]);
    let e = fails(&bad);
    assert!(e.contains("low (500) must be below high (200)"), "{e}");
    assert!(!out.exists());
}

#[test]
fn gallery_usb_parameters_can_be_shown_edited_and_passed_back() {
    let dir = tempfile::tempdir().unwrap();
    let shown = ok(&["gen", "--show", "gallery-usb"]);
    assert_mentions(&shown, &["interactions = 150"]);
    let config = dir.path().join("gallery.toml");
    std::fs::write(
        &config,
        shown.replace("interactions = 150", "interactions = 7"),
    )
    .unwrap();
    let trace = dir.path().join("g.mmt");
    let (config_s, trace_s) = (config.to_str().unwrap(), trace.to_str().unwrap());
    ok(&["gen", "gallery-usb", "--config", config_s, "--out", trace_s]);
    let table = csv(&ok(&[
        "reclaim", "--trace", trace_s, "--policy", "stock", "--csv",
    ]));
    assert_eq!(table["interactions"]["stock"], 7.0);
    // Unknown keys are errors naming the file, the line and the key.
    std::fs::write(&config, "interactions = 3\nimage_count = 5\n").unwrap();
    let e = fails(&["gen", "gallery-usb", "--config", config_s, "--out", trace_s]);
    assert_mentions(&e, &["gallery.toml", "line 2", "image_count"]);
    // Out-of-range values are refused by the workload's validation.
    std::fs::write(&config, "p_next = 0.9\np_previous = 0.9\n").unwrap();
    let e = fails(&["gen", "gallery-usb", "--config", config_s, "--out", trace_s]);
    assert_mentions(&e, &["p_next"]);
    // The Android presets take a config alone, not beside a preset name.
    let e = fails(&["gen", "chrome-push", "--config", config_s, "--out", trace_s]);
    assert_mentions(&e, &["--config"]);
    assert!(ok(&["gen", "--show", "app-cycling"]).contains("apps = "));
}

#[test]
fn policy_in_the_reclaim_config_is_used_unless_policy_is_given() {
    let dir = tempfile::tempdir().unwrap();
    let trace = gallery_trace(dir.path(), "t.mmt", &["--no-background"]);
    let config = dir.path().join("c.toml");
    std::fs::write(&config, "policy = \"memcg-low\"\n").unwrap();
    let config = config.to_str().unwrap();
    let header = |out: String| out.lines().next().unwrap().to_string();
    assert_eq!(
        header(ok(&[
            "reclaim", "--trace", &trace, "--config", config, "--csv"
        ])),
        "metric,memcg-low"
    );
    assert_eq!(
        header(ok(&[
            "reclaim", "--trace", &trace, "--config", config, "--policy", "fmp", "--csv"
        ])),
        "metric,fmp"
    );
    assert_eq!(
        header(ok(&["reclaim", "--trace", &trace, "--csv"])),
        "metric,stock,fmp,memcg-low,mglru"
    );
}

#[test]
fn trace_without_input_events_runs_with_a_note() {
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("chrome.mmt");
    let trace = trace.to_str().unwrap();
    ok(&["gen", "chrome-push", "--scale", "0.05", "--out", trace]);
    let (out, err) = run_full(&[
        "reclaim",
        "--trace",
        trace,
        "--memory-fraction",
        "0.3",
        "--csv",
    ]);
    assert_mentions(&err, &["no input events", "com.android.chrome"]);
    let table = csv(&out);
    assert_eq!(table["interactions"]["stock"], 0.0);
    assert!(table["rt_mean_ms"]["stock"].is_nan());
    assert!(table["major_faults"]["stock"] > 0.0);
    // A trace with inputs gets no note.
    let gallery = gallery_trace(dir.path(), "g.mmt", &["--no-background"]);
    let (_, err) = run_full(&["reclaim", "--trace", &gallery, "--policy", "stock"]);
    assert!(!err.contains("no input events"), "{err}");
}

#[test]
fn memory_fraction_and_swap_fit_the_trace() {
    // 10 idle apps of 6,000 anonymous pages each: 60,000+ anonymous pages, more than
    // the default 128 MiB (about 30,300 usable frames) plus 8,192 swap slots hold.
    let (dir, config) = temp_file(
        "anon.toml",
        "interactions = 3\nbackground = false\ncached_apps = 10\ncached_anon_pages = 6000\n",
    );
    let trace = dir.path().join("anon.mmt");
    let trace = trace.to_str().unwrap();
    ok(&[
        "gen",
        "gallery-usb",
        "--config",
        config.to_str().unwrap(),
        "--out",
        trace,
    ]);
    // Swap is sized to the trace, so the default machine runs it ...
    let runs: serde_json::Value = serde_json::from_str(&ok(&[
        "reclaim", "--trace", trace, "--policy", "stock", "--json",
    ]))
    .unwrap();
    assert!(runs[0]["counters"]["swap_outs"].as_u64().unwrap() > 8192);
    assert_eq!(runs[0]["trace"], trace);
    // ... which a config that fixes swap_pages at the old size cannot.
    let fixed = dir.path().join("swap.toml");
    std::fs::write(&fixed, "swap_pages = 8192\n").unwrap();
    let e = fails(&[
        "reclaim",
        "--trace",
        trace,
        "--policy",
        "stock",
        "--config",
        fixed.to_str().unwrap(),
    ]);
    assert_mentions(&e, &["out of memory", "--memory-fraction"]);
    // --memory-fraction: usable frames = ceil(F * footprint), plus reserved (512) and
    // the unmovable share (6%).
    let info: serde_json::Value =
        serde_json::from_str(&ok(&["trace", "info", trace, "--json"])).unwrap();
    let footprint = info["distinct_pages"].as_u64().unwrap() as usize;
    let runs: serde_json::Value = serde_json::from_str(&ok(&[
        "reclaim",
        "--trace",
        trace,
        "--policy",
        "stock",
        "--memory-fraction",
        "0.5",
        "--json",
    ]))
    .unwrap();
    let usable = (footprint as f64 * 0.5).ceil() as usize;
    assert_eq!(
        runs[0]["memory_pages"].as_u64().unwrap() as usize,
        512 + (usable * 1000).div_ceil(940)
    );
    let e = fails(&[
        "reclaim",
        "--trace",
        trace,
        "--memory-fraction",
        "0.5",
        "--memory-mib",
        "64",
    ]);
    assert!(
        e.contains("--memory-fraction") || e.contains("memory-mib"),
        "{e}"
    );
    let e = fails(&["reclaim", "--trace", trace, "--memory-fraction", "0.001"]);
    assert_mentions(&e, &["reserved_pages"]);
}

#[test]
fn capture_script_reclaim_step_runs_on_generated_traces() {
    // The invocation of scripts/capture-chromium.sh, with a generated trace standing
    // for the captured one (the capture has an input per page opened; this one has
    // none, so the note for such traces is exercised too).
    let script = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/capture-chromium.sh"),
    )
    .unwrap();
    let step = script
        .split("\"$MOBMEM\" reclaim")
        .nth(1)
        .expect("the script runs mobmem reclaim");
    for flag in [
        "--trace \"$TRACE\" --trace \"$OUT/gallery-usb.mmt\"",
        "--policy stock,fmp,memcg-low,mglru",
        "--memory-fraction \"$RECLAIM_FRACTION\"",
    ] {
        assert!(step.contains(flag), "{flag} in the script's reclaim step");
    }
    assert!(script.contains("RECLAIM_FRACTION=${RECLAIM_FRACTION:-0.15}"));
    let dir = tempfile::tempdir().unwrap();
    let captured = dir.path().join("chromium.mmt");
    let captured = captured.to_str().unwrap();
    ok(&["gen", "chrome-push", "--scale", "0.05", "--out", captured]);
    let gallery = gallery_trace(dir.path(), "gallery-usb.mmt", &[]);
    let args = [
        "reclaim",
        "--trace",
        captured,
        "--trace",
        &gallery,
        "--policy",
        "stock,fmp,memcg-low,mglru",
        "--memory-fraction",
        "0.15",
    ];
    let (table, err) = run_full(&args);
    assert_mentions(&err, &["chromium.mmt has no input events"]);
    let header: Vec<&str> = table
        .lines()
        .find(|l| l.starts_with(&format!("{:<26}", "trace")))
        .unwrap()
        .split_whitespace()
        .collect();
    assert_eq!(header.len(), 9, "{table}");
    assert_eq!(header[1..5], ["chromium.mmt"; 4]);
    assert_eq!(header[5..], ["gallery-usb.mmt"; 4]);
    // Both machines are under pressure: reclaim runs on every trace and policy.
    let mut with_csv = args.to_vec();
    with_csv.push("--csv");
    let columns = csv(&ok(&with_csv));
    for (column, scanned) in &columns["pages_scanned"] {
        assert!(*scanned > 0.0, "{column}: no reclaim");
    }
    assert_eq!(columns["pages_scanned"].len(), 8);
    assert!(columns["pages_scanned"].contains_key("gallery-usb.mmt/fmp"));
}
