//! `mobmem reclaim`, `mobmem gen gallery-usb` and `mobmem reproduce page-protection`
//! end to end, as a user runs them.

use std::collections::HashMap;
use std::path::Path;
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

fn fails(args: &[&str]) -> String {
    let out = mobmem(args);
    assert!(!out.status.success(), "mobmem {args:?} should fail");
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(!stderr.contains("panicked"), "{stderr}");
    stderr
}

fn gen(dir: &Path, name: &str, extra: &[&str]) -> String {
    let path = dir.join(name);
    let path = path.to_str().unwrap().to_string();
    let mut args = vec!["gen", "gallery-usb", "--scale", "0.2", "--out", &path];
    args.extend_from_slice(extra);
    ok(&args);
    path
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
    let with_io = gen(dir.path(), "io.mmt", &[]);
    let without_io = gen(dir.path(), "quiet.mmt", &["--no-background"]);

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
    let trace = gen(dir.path(), "t.mmt", &["--no-background"]);
    let e = fails(&["reclaim", "--trace", &trace, "--policy", "stock,lru-9"]);
    assert!(e.contains("unknown reclaim policy 'lru-9'"), "{e}");
    assert!(e.contains("fmp"), "{e}");
    let e = fails(&["reclaim", "--trace", "no/such/file.mmt"]);
    assert!(e.contains("no/such/file.mmt"), "{e}");
    let e = fails(&["reclaim", "--trace", &trace, "--memory-mib", "0"]);
    assert!(e.contains("--memory-mib"), "{e}");
    let junk = dir.path().join("junk.mmt");
    std::fs::write(&junk, b"not a trace at all").unwrap();
    let e = fails(&["reclaim", "--trace", junk.to_str().unwrap()]);
    assert!(e.contains("junk.mmt"), "{e}");
    let config = dir.path().join("bad.toml");
    std::fs::write(&config, "swappiness = 500\n").unwrap();
    let e = fails(&[
        "reclaim",
        "--trace",
        &trace,
        "--config",
        config.to_str().unwrap(),
    ]);
    assert!(e.contains("swappiness"), "{e}");
    let out = dir.path().join("x.mmt");
    let e = fails(&[
        "gen",
        "app-cycling",
        "--no-background",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(e.contains("gallery-usb"), "{e}");
    assert!(ok(&["reclaim", "--list"]).contains("memcg-low"));
    assert!(ok(&["gen", "--list"]).contains("gallery-usb"));
}

#[test]
fn reproduce_page_protection_writes_its_claims_and_figures() {
    let dir = tempfile::tempdir().unwrap();
    let out = ok(&[
        "reproduce",
        "page-protection",
        "--out",
        dir.path().to_str().unwrap(),
    ]);
    assert!(out.contains("page-protection"));
    let claims: serde_json::Value = serde_json::from_slice(
        &std::fs::read(dir.path().join("page-protection/claims.json")).unwrap(),
    )
    .unwrap();
    let claims = claims.as_array().unwrap();
    assert_eq!(claims.len(), 5);
    let measured = |id: &str| {
        claims.iter().find(|c| c["id"] == id).unwrap()["measured"]
            .as_f64()
            .unwrap()
    };
    // What the model must show whatever its defaults: the I/O raises the interactive
    // faults and FMP lowers them.
    assert!(measured("background-io-raises-faults") > 0.0);
    assert!(measured("fmp-cuts-faults") > 0.0);
    assert!(measured("fmp-cuts-response-time") > 0.0);
    // The measured table of docs/reclaim.md is what the reproduction measures.
    let results = std::fs::read_to_string(dir.path().join("page-protection/results.csv")).unwrap();
    let value = |series: &str, metric: &str| -> f64 {
        // CSV quotes the series names that hold a comma.
        let series = if series.contains(',') {
            format!("\"{series}\"")
        } else {
            series.to_string()
        };
        results
            .lines()
            .find(|l| {
                l.starts_with(&format!("page-protection,run,{series},"))
                    && l.contains(&format!(",{metric},"))
            })
            .and_then(|l| l.rsplit(',').next())
            .and_then(|v| v.parse().ok())
            .unwrap_or_else(|| panic!("{series} {metric}"))
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
        let measured: Vec<f64> = series.iter().map(|s| value(s, metric)).collect();
        assert_eq!(cells, measured, "docs/reclaim.md row '{label}'");
    }
    for f in [
        "interactive-faults",
        "response-time",
        "scan-work",
        "faults-vs-memory",
        "rt-p95-vs-memory",
    ] {
        assert!(
            dir.path().join(format!("page-protection/{f}.svg")).exists(),
            "{f}.svg"
        );
    }
}
