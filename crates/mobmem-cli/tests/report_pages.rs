//! The report as a reader gets it: pages that render, data files that depend on the seeds
//! alone, one index for every experiment under `--out`, and the README's summary made from
//! claims.json.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::{assert_mentions, ok, run_full, run_on_1_and_2_threads, skip, small_experiment};

/// Every `index.html` under `dir`: the index and each experiment's page.
fn pages(dir: &Path) -> Vec<PathBuf> {
    let mut out = vec![dir.join("index.html")];
    let mut folders: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.join("index.html").is_file())
        .collect();
    folders.sort();
    out.extend(folders.into_iter().map(|f| f.join("index.html")));
    out
}

/// Chromium from the PATH (Debian names it `chromium`), or `$MOBMEM_CHROMIUM`.
fn chromium() -> Option<PathBuf> {
    if let Some(path) = std::env::var_os("MOBMEM_CHROMIUM") {
        return Some(PathBuf::from(path));
    }
    let path = std::env::var_os("PATH")?;
    for dir in std::env::split_paths(&path) {
        for name in ["chromium", "chromium-browser", "google-chrome"] {
            let candidate = dir.join(name);
            if candidate.is_file() {
                return Some(candidate);
            }
        }
    }
    None
}

/// The screenshot of `page` that headless Chromium takes, 1200 x 2000 pixels, as RGBA.
fn screenshot(chromium: &Path, page: &Path, work: &Path) -> (u32, u32, Vec<u8>) {
    let png = work.join("shot.png");
    let _ = std::fs::remove_file(&png);
    let profile = tempfile::tempdir().unwrap();
    let out = Command::new(chromium)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--hide-scrollbars",
            "--window-size=1200,2000",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .arg(format!("--screenshot={}", png.display()))
        .arg(format!("file://{}", page.display()))
        .output()
        .expect("run chromium");
    assert!(
        png.is_file(),
        "chromium wrote no screenshot of {}: {}",
        page.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    let decoder = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(&png).unwrap()));
    let mut reader = decoder.read_info().unwrap();
    let mut pixels = vec![0; reader.output_buffer_size().unwrap()];
    let info = reader.next_frame(&mut pixels).unwrap();
    pixels.truncate(info.buffer_size());
    let rgba: Vec<u8> = match info.color_type {
        png::ColorType::Rgba => pixels,
        png::ColorType::Rgb => pixels
            .chunks(3)
            .flat_map(|p| [p[0], p[1], p[2], 255])
            .collect(),
        other => panic!("unexpected PNG colour type {other:?}"),
    };
    (info.width, info.height, rgba)
}

#[test]
fn every_report_page_renders_in_chromium() {
    let test = "every_report_page_renders_in_chromium";
    let Some(chromium) = chromium() else {
        skip(
            test,
            "no chromium on the PATH (Debian: apt-get install chromium; or set MOBMEM_CHROMIUM)",
        );
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("report");
    let out_s = out.to_str().unwrap();
    // A reproduction (lines and bars, claims) and a `run` (no claims) into the same folder.
    ok(&["reproduce", "ksm", "--seeds", "2", "--out", out_s]);
    let exp = small_experiment(dir.path(), "small");
    ok(&["run", exp.to_str().unwrap(), "--out", out_s]);
    let pages = pages(&out);
    assert_eq!(pages.len(), 3, "{pages:?}");
    for page in &pages {
        let (width, height, rgba) = screenshot(&chromium, page, dir.path());
        assert_eq!((width, height), (1200, 2000));
        let pixels: Vec<[u8; 4]> = rgba.chunks(4).map(|p| [p[0], p[1], p[2], p[3]]).collect();
        let first = pixels[0];
        let other = pixels.iter().filter(|p| **p != first).count();
        // Text, tables and figures: far more than a stray line of pixels differs from the
        // background.
        assert!(
            other > pixels.len() / 100,
            "{} renders blank: {other} of {} pixels differ from the first",
            page.display(),
            pixels.len()
        );
    }
}

#[test]
fn data_files_are_the_same_bytes_whatever_the_threads_and_the_date() {
    let dir = tempfile::tempdir().unwrap();
    let outs = run_on_1_and_2_threads(dir.path(), &["reproduce", "ksm", "--seeds", "2"])
        .map(|out| out.join("ksm"));
    let provenance: serde_json::Value =
        serde_json::from_slice(&std::fs::read(outs[0].join("provenance.json")).unwrap()).unwrap();
    for key in [
        "version", "commit", "command", "seeds", "date_utc", "machine",
    ] {
        assert!(provenance.get(key).is_some(), "provenance.json lacks {key}");
    }
    assert_eq!(provenance["seeds"], serde_json::json!([1, 2]));
    assert_eq!(provenance["version"], env!("CARGO_PKG_VERSION"));
    let date = provenance["date_utc"].as_str().unwrap();
    let commit = provenance["commit"].as_str().unwrap();
    let mut files: Vec<String> = std::fs::read_dir(&outs[0])
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().to_string())
        .collect();
    files.sort();
    for name in &files {
        let a = std::fs::read(outs[0].join(name)).unwrap();
        let b = std::fs::read(outs[1].join(name)).unwrap();
        if name == "index.html" || name == "provenance.json" {
            let page = String::from_utf8(a).unwrap();
            assert!(page.contains(date) && page.contains(commit), "{name}");
            continue;
        }
        assert_eq!(a, b, "{name} differs between 1 and 2 threads");
        let text = String::from_utf8_lossy(&a);
        assert!(
            !text.contains(date) && (commit == "unknown" || !text.contains(commit)),
            "{name} holds provenance"
        );
    }
    assert!(files.iter().any(|f| f == "results.csv") && files.iter().any(|f| f == "claims.json"));
}

#[test]
fn run_plots_every_metric_and_keeps_earlier_experiments_in_the_index() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("report");
    let out_s = out.to_str().unwrap();
    let (first, second) = (
        small_experiment(dir.path(), "first"),
        small_experiment(dir.path(), "second"),
    );
    ok(&["run", first.to_str().unwrap(), "--out", out_s]);
    let (table, _) = run_full(&["run", second.to_str().unwrap(), "--out", out_s]);
    let index = std::fs::read_to_string(out.join("index.html")).unwrap();
    assert!(index.contains("id=\"first\"") && index.contains("id=\"second\""));
    assert!(index.contains("Written by another command"));
    for said in [
        "paper claims",
        "How verdicts are given",
        "-claims\"",
        "0 of 0",
    ] {
        assert!(
            !index.contains(said),
            "no claims, nothing said of them: {said}"
        );
    }
    let svgs: Vec<String> = std::fs::read_dir(out.join("second"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().to_string())
        .filter(|n| n.ends_with(".svg"))
        .collect();
    for metric in [
        "hit-ratio",
        "fg-hit-ratio",
        "fg-time",
        "energy-nj",
        "pcm-writes",
    ] {
        assert!(
            svgs.contains(&format!("switching-{metric}.svg")),
            "{metric} in {svgs:?}"
        );
    }
    // The same trace for every policy: its access count is flat, so not drawn.
    assert!(!svgs.contains(&"switching-accesses.svg".to_string()));
    // No float noise in what people read.
    // The git commit is hex, which may hold a long run of decimal digits: left out.
    let provenance: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("provenance.json")).unwrap()).unwrap();
    let commit = provenance["commit"].as_str().unwrap();
    for text in [table, index.replace(commit, "")] {
        let long = text
            .split(|c: char| !c.is_ascii_digit() && c != '.')
            .find(|n| n.len() > 12);
        assert!(long.is_none(), "a number with too many digits: {long:?}");
    }
}

/// A report folder as `reproduce` writes it, by hand: one experiment, two claims.
fn fixture_report(dir: &Path) {
    let exp = dir.join("paper-x");
    std::fs::create_dir_all(&exp).unwrap();
    std::fs::write(
        exp.join("report.json"),
        r#"{"experiment": "paper-x", "title": "Paper X", "seeds": [1, 2, 3],
            "notes": [], "facts": [], "figures": []}"#,
    )
    .unwrap();
    std::fs::write(
        exp.join("claims.json"),
        r#"[
  {"id": "gain", "claim": "X cuts time by 10% | on average", "paper": 10.0, "unit": "%",
   "seeds": 3, "mean": 9.123, "ci95": [8.5, 9.75], "verdict": "reproduced",
   "explanation": null, "expect": {"kind": "value"}, "values": [8.9, 9.1, 9.369]},
  {"id": "never-worse", "claim": "X is never worse", "paper": null, "unit": "points",
   "seeds": 3, "mean": -0.5, "ci95": [-0.9, -0.1], "verdict": "not-reproduced",
   "explanation": "worse at 10% memory", "expect": {"kind": "at-least", "bound": 0.0},
   "values": [-0.4, -0.5, -0.6]}
]"#,
    )
    .unwrap();
}

const FIXTURE_SUMMARY: &str = "\
2 claims of 1 reproductions: 1 reproduced, 0 direction-only, 1 not-reproduced, 0 not-testable. \
Seeds: 1-3 (3 seeds). The rule: see any report page.

| reproduction | claim | paper | measured: mean [95% interval] | verdict |
|---|---|---|---|---|
| paper-x | X cuts time by 10% \\| on average (`gain`) | 10 % | 9.12 [8.50, 9.75] % | reproduced |
| paper-x | X is never worse (`never-worse`) | ≥ 0 points | -0.50 [-0.90, -0.10] points | not-reproduced |
";

#[test]
fn the_summary_of_a_report_is_markdown_from_its_claims() {
    let dir = tempfile::tempdir().unwrap();
    fixture_report(dir.path());
    let printed = ok(&["report", "summary", dir.path().to_str().unwrap()]);
    assert_eq!(printed, FIXTURE_SUMMARY);
    // Into a README, between the markers, twice over: the same file.
    let readme = dir.path().join("README.md");
    std::fs::write(
        &readme,
        format!(
            "# title\n\n{}\nstale\n{}\n\nmore\n",
            mobmem::report::SUMMARY_BEGIN,
            mobmem::report::SUMMARY_END
        ),
    )
    .unwrap();
    for _ in 0..2 {
        ok(&[
            "report",
            "summary",
            dir.path().to_str().unwrap(),
            "--write-into",
            readme.to_str().unwrap(),
        ]);
        let text = std::fs::read_to_string(&readme).unwrap();
        assert_eq!(
            text,
            format!(
                "# title\n\n{}\n{}{}\n\nmore\n",
                mobmem::report::SUMMARY_BEGIN,
                FIXTURE_SUMMARY,
                mobmem::report::SUMMARY_END
            )
        );
    }
    let empty = tempfile::tempdir().unwrap();
    let err = common::fails(&["report", "summary", empty.path().to_str().unwrap()]);
    assert_mentions(&err, &["no claims"]);
}

/// What `text` (the file `name`) holds between its markers `begin` and `end`, which it
/// MUST hold in that order.
fn between<'a>(text: &'a str, name: &str, begin: &str, end: &str) -> &'a str {
    let from = text
        .find(begin)
        .unwrap_or_else(|| panic!("{name} has the marker {begin}"));
    let to = text
        .find(end)
        .unwrap_or_else(|| panic!("{name} has the marker {end}"));
    assert!(from < to, "{name}: {begin} before {end}");
    &text[from + begin.len()..to]
}

#[test]
fn the_readme_summary_block_has_its_markers_and_parses() {
    let readme =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../README.md"))
            .unwrap();
    let block = between(
        &readme,
        "README.md",
        mobmem::report::SUMMARY_BEGIN,
        mobmem::report::SUMMARY_END,
    );
    let mut lines = block.lines().filter(|l| l.starts_with('|'));
    // The README is written from a run with --sensitivity: a robust column closes it.
    assert_eq!(
        lines.next(),
        Some("| reproduction | claim | paper | measured: mean [95% interval] | verdict | robust |")
    );
    assert_eq!(lines.next(), Some("|---|---|---|---|---|---|"));
    let mut rows = 0;
    for line in lines {
        // Cells split on '|' that is not escaped.
        let cells: Vec<&str> = line.trim_matches('|').split(" | ").map(str::trim).collect();
        assert_eq!(cells.len(), 6, "{line}");
        assert!(
            cells[5] == "yes" || cells[5] == "-" || cells[5].starts_with("no ("),
            "{line}"
        );
        assert!(
            [
                "reproduced",
                "direction-only",
                "not-reproduced",
                "not-testable"
            ]
            .contains(&cells[4]),
            "{line}"
        );
        assert!(cells[1].ends_with("`)"), "the claim's id: {line}");
        rows += 1;
    }
    assert!(rows > 0, "the summary lists no claim");
    let counts = block
        .lines()
        .find(|l| l.contains(" claims of "))
        .expect("the summary counts the verdicts");
    let total: usize = counts.split(' ').next().unwrap().parse().unwrap();
    assert_eq!(total, rows, "{counts}");
}

/// docs/results.md holds the findings between their markers, each under the name of a
/// reproduction the README's table lists; the README's block holds none.
#[test]
fn the_findings_block_of_docs_results_md_parses() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let results = std::fs::read_to_string(root.join("docs/results.md")).unwrap();
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    let block = between(
        &results,
        "docs/results.md",
        mobmem::report::FINDINGS_BEGIN,
        mobmem::report::FINDINGS_END,
    );
    let mut findings = 0;
    for line in block.lines().filter(|l| !l.is_empty()) {
        if let Some(name) = line.strip_prefix("Findings of `") {
            let name = name.strip_suffix("`:").expect(line);
            assert!(
                readme.contains(&format!("\n| {name} | ")),
                "{name} has claims"
            );
        } else {
            assert!(line.starts_with("- ") && line.ends_with("`)"), "{line}");
            findings += 1;
        }
    }
    assert!(findings > 0);
    assert!(
        !readme.contains("Findings of `"),
        "the README keeps only the claims"
    );
}
