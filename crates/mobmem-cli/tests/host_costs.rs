//! `mobmem host costs` end to end: its JSON object, its table, a corpus read from a
//! file, and clear errors on bad input. No test asserts a time: the machine is shared.

mod common;

use serde_json::Value;

use common::{fails, json, ok, temp_file};

/// `host costs` with small settings and `extra`.
fn costs_args<'a>(extra: &[&'a str]) -> Vec<&'a str> {
    let mut args = vec!["host", "costs", "--rounds", "3", "--region-mib", "2"];
    args.extend_from_slice(extra);
    args
}

/// Check one figure: its unit, finite positive values in order, its counts.
fn assert_figure(figure: &Value, rounds: u64, what: &str) {
    assert!(
        figure["unit"].as_str().unwrap().starts_with("ns per "),
        "{what}: {figure}"
    );
    let value = |key: &str| {
        figure[key]
            .as_f64()
            .unwrap_or_else(|| panic!("{what}.{key}"))
    };
    let (p10, median, p90) = (value("p10"), value("median"), value("p90"));
    assert!(
        p10.is_finite() && p90.is_finite() && p10 > 0.0,
        "{what}: {figure}"
    );
    assert!(p10 <= median && median <= p90, "{what}: {figure}");
    assert_eq!(figure["rounds"], rounds, "{what}");
    assert!(figure["pages_per_round"].as_u64().unwrap() > 0, "{what}");
}

#[test]
fn json_has_the_machine_the_corpus_and_every_figure_with_its_unit() {
    let c = json(&costs_args(&["--json", "--pages", "64"]));
    let keys: Vec<&str> = c.as_object().unwrap().keys().map(String::as_str).collect();
    for key in [
        "host",
        "rounds",
        "corpus",
        "compression",
        "not_measured",
        "page_copy",
        "first_touch_fault",
        "region",
    ] {
        assert!(keys.contains(&key), "no {key} in {keys:?}");
    }
    let host = &c["host"];
    assert!(host["cpu_model"].is_string() || host["cpu_model"].is_null());
    assert!(!host["kernel_release"].as_str().unwrap().is_empty());
    let page_bytes = host["page_bytes"].as_u64().unwrap();
    assert!(page_bytes >= 4096 && page_bytes.is_power_of_two());
    assert_eq!(c["rounds"], 3);

    let corpus = &c["corpus"];
    assert_eq!(corpus["source"], "built-in");
    assert_eq!(corpus["seed"], 1);
    assert_eq!(corpus["pages"], 64);
    let kinds: Vec<(&str, u64)> = corpus["kinds"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| (k["kind"].as_str().unwrap(), k["pages"].as_u64().unwrap()))
        .collect();
    assert_eq!(
        kinds,
        [("zero", 16), ("pattern", 16), ("text", 16), ("random", 16)]
    );

    let codecs = c["compression"].as_array().unwrap();
    assert_eq!(codecs[0]["codec"], "lz4");
    let lzo_measured = codecs.iter().any(|codec| codec["codec"] == "lzo");
    let not_measured = c["not_measured"].as_array().unwrap();
    assert_eq!(
        not_measured.iter().any(|n| n["figure"] == "lzo"),
        !lzo_measured,
        "LZO is either measured or listed as not measured: {not_measured:?}"
    );
    for codec in codecs {
        let name = codec["codec"].as_str().unwrap();
        assert_figure(&codec["compress"], 3, &format!("{name} compress"));
        assert_figure(&codec["decompress"], 3, &format!("{name} decompress"));
        let original = codec["original_bytes"].as_u64().unwrap();
        let compressed = codec["compressed_bytes"].as_u64().unwrap();
        assert_eq!(original, 64 * 4096);
        let ratio = codec["ratio"].as_f64().unwrap();
        assert!((ratio - original as f64 / compressed as f64).abs() < 1e-9);
        let by_kind = codec["kinds"].as_array().unwrap();
        assert_eq!(by_kind.len(), 4);
        let kind_bytes: u64 = by_kind
            .iter()
            .map(|k| k["compressed_bytes"].as_u64().unwrap())
            .sum();
        assert_eq!(kind_bytes, compressed, "{name}: the kinds add up");
        for kind in by_kind {
            let what = format!("{name} {}", kind["kind"]);
            assert_figure(&kind["compress"], 3, &what);
            assert_figure(&kind["decompress"], 3, &what);
        }
        let ratio_of = |k: &str| {
            let kind = by_kind.iter().find(|x| x["kind"] == k).unwrap();
            kind["ratio"].as_f64().unwrap()
        };
        assert!(
            ratio_of("zero") > ratio_of("pattern")
                && ratio_of("pattern") > ratio_of("text")
                && ratio_of("text") > ratio_of("random"),
            "{name}: zero pages compress best and random bytes worst"
        );
    }
    assert_figure(&c["page_copy"], 3, "page copy");
    assert_eq!(
        c["page_copy"]["pages_per_round"], 256,
        "1 MiB of 4 KiB pages"
    );
    assert_figure(&c["first_touch_fault"], 3, "first-touch fault");
    assert_eq!(
        c["first_touch_fault"]["pages_per_round"],
        (2 << 20) / page_bytes
    );
    assert_eq!(c["region"]["bytes"], 2 << 20);
}

#[test]
fn the_corpus_follows_the_seed() {
    let compressed = |seed: &str| {
        let c = json(&costs_args(&["--json", "--pages", "16", "--seed", seed]));
        // Each kind's, as two seeds' totals may happen to agree.
        let kinds = c["compression"][0]["kinds"].as_array().unwrap().clone();
        kinds
            .iter()
            .map(|k| k["compressed_bytes"].as_u64().unwrap())
            .collect::<Vec<_>>()
    };
    assert_eq!(compressed("5"), compressed("5"));
    assert_ne!(compressed("5"), compressed("6"));
}

#[test]
fn the_table_names_each_figure_and_each_kind() {
    let table = ok(&costs_args(&["--pages", "16"]));
    for expected in [
        "cpu ",
        "kernel ",
        "corpus  built-in, seed 1: 16 pages",
        "rounds  3",
        "lz4 compress",
        "lz4 decompress",
        "page copy",
        "first-touch fault",
        "lz4 ratio",
        "\nzero ",
        "\nrandom ",
        "\nall ",
    ] {
        assert!(table.contains(expected), "no {expected:?} in\n{table}");
    }
}

#[test]
fn from_reads_whole_pages_of_a_file_and_at_most_the_pages_asked_for() {
    let mut bytes = vec![0u8; 4096];
    bytes.extend((0..3 * 4096 + 10).map(|i| (i % 7) as u8 + b'a'));
    let (_dir, path) = temp_file("dump.bin", &bytes);
    let path = path.to_str().unwrap();
    let c = json(&costs_args(&["--json", "--from", path]));
    let corpus = &c["corpus"];
    assert_eq!(corpus["source"], "file");
    assert_eq!(corpus["file"], path);
    assert_eq!(corpus["pages"], 4, "the last 10 bytes are left out");
    assert_eq!(corpus["kinds"][0]["kind"], "zero");
    assert_eq!(corpus["kinds"][0]["pages"], 1);
    assert_eq!(corpus["kinds"][1]["kind"], "file");
    let c = json(&costs_args(&["--json", "--from", path, "--pages", "2"]));
    assert_eq!(c["corpus"]["pages"], 2);
    assert!(c["corpus"]["description"]
        .as_str()
        .unwrap()
        .starts_with("the first 2 pages"));
}

#[test]
fn bad_input_is_a_clear_error() {
    let (dir, small) = temp_file("small.bin", [7u8; 100]);
    let small = small.to_str().unwrap();
    let e = fails(&costs_args(&["--from", small]));
    assert!(
        e.contains("small.bin") && e.contains("holds 100 bytes, less than one 4096-byte page"),
        "{e}"
    );
    let empty = dir.path().join("empty");
    std::fs::write(&empty, b"").unwrap();
    let e = fails(&costs_args(&["--from", empty.to_str().unwrap()]));
    assert!(e.contains("holds 0 bytes"), "{e}");
    let e = fails(&costs_args(&["--from", dir.path().to_str().unwrap()]));
    assert!(e.contains("is a folder"), "{e}");
    // A FIFO nobody writes to reads as empty at once.
    let fifo = dir.path().join("fifo");
    let made = std::process::Command::new("mkfifo").arg(&fifo).status();
    if made.is_ok_and(|s| s.success()) {
        let e = fails(&costs_args(&["--from", fifo.to_str().unwrap()]));
        assert!(e.contains("holds 0 bytes"), "{e}");
    }
    let e = fails(&costs_args(&["--pages", "0"]));
    assert!(e.contains("pages must be 1..=65536, got 0"), "{e}");
    let e = fails(&["host", "costs", "--rounds", "-1"]);
    assert!(e.contains("negative"), "{e}");
    let e = fails(&["host", "costs", "--region-mib", "2000"]);
    assert!(e.contains("region_mib must be 1..=1024"), "{e}");
    let e = fails(&costs_args(&["--from", small, "--seed", "3"]));
    assert!(e.contains("cannot be used with"), "{e}");
}
