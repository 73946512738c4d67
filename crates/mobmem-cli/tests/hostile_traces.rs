//! Hostile trace files on the command line: each fails at once with an error naming the
//! file and the position, prints nothing that looks like a result, and never panics.

mod common;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use common::{assert_mentions, fails, gen, mobmem, ok};

/// A 64-byte `.mmt` header claiming `pages` pages and no records or processes.
fn claim_mmt(pages: u64) -> Vec<u8> {
    let mut out = b"MOBMEMTR".to_vec();
    out.extend_from_slice(&2u32.to_le_bytes());
    out.extend_from_slice(&16u32.to_le_bytes());
    for value in [0, pages, 0, 64] {
        out.extend_from_slice(&value.to_le_bytes());
    }
    out.resize(64, 0);
    out
}

fn put(dir: &Path, name: &str, bytes: &[u8]) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, bytes).unwrap();
    path
}

/// `mobmem ARGS` must fail within seconds, print nothing on stdout, and say `expected` on
/// stderr.
fn fails_at_once(args: &[&str], expected: &str) {
    let started = Instant::now();
    let out = mobmem(args);
    let took = started.elapsed();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{args:?} should fail");
    assert!(took < Duration::from_secs(10), "{args:?} took {took:?}");
    assert!(out.stdout.is_empty(), "{args:?} printed {:?}", out.stdout);
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(stderr.contains(expected), "{args:?}: {stderr}");
}

#[test]
fn header_claims_and_cut_tables_fail_before_any_result() {
    let dir = tempfile::tempdir().unwrap();
    for pages in [u64::from(u32::MAX), 1 << 28] {
        let path = put(dir.path(), "claim.mmt", &claim_mmt(pages));
        let path = path.to_str().unwrap();
        for policy in ["lru", "clock"] {
            fails_at_once(
                &[
                    "sim",
                    "--trace",
                    path,
                    "--policy",
                    policy,
                    "--capacity",
                    "100",
                ],
                "claim.mmt: byte offset 64: truncated page table",
            );
        }
        fails_at_once(
            &["trace", "info", path],
            "claim.mmt: byte offset 64: truncated page table",
        );
    }
    // A whole trace, then the same cut in its process table.
    let whole = dir.path().join("whole.mmt");
    gen("app-switching", &whole, &["--scale", "0.001"]);
    let bytes = std::fs::read(&whole).unwrap();
    let cut = put(dir.path(), "cut.mmt", &bytes[..bytes.len() - 3]);
    for policy in ["lru", "clock", "arc"] {
        fails_at_once(
            &[
                "sim",
                "--trace",
                cut.to_str().unwrap(),
                "--policy",
                policy,
                "--capacity",
                "100",
                "--json",
            ],
            &format!(
                "cut.mmt: byte offset {}: truncated process table",
                bytes.len() - 3
            ),
        );
    }
}

#[test]
fn lis_counts_lines_and_empty_inputs_are_bounded_errors() {
    let dir = tempfile::tempdir().unwrap();
    let huge = put(dir.path(), "huge.lis", b"0 18446744073709551615 0 0\n");
    let huge = huge.to_str().unwrap();
    let expected = "huge.lis: line 1: block_count 18446744073709551615, expected at most";
    fails_at_once(&["trace", "info", huge], expected);
    let out = dir.path().join("out.mmt");
    fails_at_once(&["trace", "convert", huge, out.to_str().unwrap()], expected);
    assert!(!out.exists());
    for format in ["lis", "csv"] {
        fails_at_once(
            &["trace", "info", "/dev/zero", "--format", format],
            "/dev/zero: line 1: a ",
        );
    }
    for name in ["e.lis", "e.oracleGeneral.bin", "e.csv", "e.mmt"] {
        let path = put(dir.path(), name, b"");
        fails_at_once(
            &["trace", "info", path.to_str().unwrap()],
            &format!("{name}: byte offset 0: empty file: it holds no events"),
        );
    }
    for format in ["lis", "oracle-general"] {
        fails_at_once(
            &["trace", "info", "/dev/null", "--format", format],
            "/dev/null: byte offset 0: empty file: it holds no events",
        );
    }
}

#[test]
fn ftrace_page_ranges_are_bounded() {
    let dir = tempfile::tempdir().unwrap();
    let text: String = (0..400u64)
        .map(|i| {
            format!(
                "  python3-700 [001] ..... 10.{i:06}: mm_filemap_add_to_page_cache: dev 254:0 ino a0 pfn=0x1000 ofs={} order=19\n",
                i << 31
            )
        })
        .collect();
    let path = put(dir.path(), "order19.txt", text.as_bytes());
    let out = dir.path().join("out.mmt");
    fails_at_once(
        &[
            "trace",
            "import",
            "--from",
            "ftrace",
            path.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ],
        "order19.txt: line 3: mm_filemap_add_to_page_cache: 524287 more pages take the import past",
    );
    assert!(!out.exists());
}

#[test]
fn convert_blames_the_input_and_keeps_csv_output_unchanged() {
    let dir = tempfile::tempdir().unwrap();
    let whole = dir.path().join("t.mmt");
    gen("app-switching", &whole, &["--scale", "0.001"]);
    let csv = dir.path().join("t.csv");
    ok(&[
        "trace",
        "convert",
        whole.to_str().unwrap(),
        csv.to_str().unwrap(),
    ]);
    let text = std::fs::read_to_string(&csv).unwrap();
    assert!(text.starts_with("time_ns,pid,event,page_kind,owner,index,op,value\n"));
    // Flip the anonymous bit of the first access record.
    let mut bytes = std::fs::read(&whole).unwrap();
    let records = u64::from_le_bytes(bytes[16..24].try_into().unwrap()) as usize;
    let first_access = (0..records)
        .find(|&i| {
            (u32::from_le_bytes(bytes[72 + 16 * i..76 + 16 * i].try_into().unwrap()) >> 27) & 7 == 0
        })
        .unwrap();
    bytes[75 + 16 * first_access] ^= 0x80;
    let bad = put(dir.path(), "bad.mmt", &bytes);
    let err = fails(&[
        "trace",
        "convert",
        bad.to_str().unwrap(),
        dir.path().join("bad.csv").to_str().unwrap(),
    ]);
    assert_mentions(
        &err,
        &[&format!(
            "bad.mmt: record {first_access} (byte offset {}): access with the anonymous flag",
            64 + 16 * first_access
        )],
    );
    // The partial file of an unfinished writer is refused.
    let partial = put(
        dir.path(),
        "t.csv.partial",
        b"# UNFINISHED: the writer did not finish      \n0,1,exit,,,,,\n",
    );
    let err = fails(&[
        "trace",
        "info",
        partial.to_str().unwrap(),
        "--format",
        "csv",
    ]);
    assert_mentions(
        &err,
        &["line 1: incomplete trace: the writer did not finish"],
    );
}
