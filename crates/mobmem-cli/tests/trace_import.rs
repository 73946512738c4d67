//! `mobmem trace import --from ftrace` as a user runs it.

use crate::common;
use common::{assert_mentions, convert, ok, sim, temp_file};

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// `mobmem trace import --from FROM INPUT --out OUT EXTRA...`.
fn import(from: &str, input: &Path, out: &Path, extra: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_mobmem"))
        .args(["trace", "import", "--from", from])
        .arg(input)
        .arg("--out")
        .arg(out)
        .args(extra)
        .output()
        .expect("run mobmem")
}

/// An import from `input` that must fail and write nothing into a folder of its own: what
/// it printed on stdout and on stderr.
fn refused_import(from: &str, input: &Path, extra: &[&str]) -> (String, String) {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out.mmt");
    let run = import(from, input, &out, extra);
    assert!(!run.status.success());
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    (
        String::from_utf8_lossy(&run.stdout).into_owned(),
        String::from_utf8_lossy(&run.stderr).into_owned(),
    )
}

/// An import from `input` that must succeed, run with `extra` and `--json`, into a file
/// `name` in a folder of its own: the folder, the file and the JSON report.
fn imported(
    from: &str,
    input: &Path,
    name: &str,
    extra: &[&str],
) -> (tempfile::TempDir, PathBuf, serde_json::Value) {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join(name);
    let run = import(from, input, &out, &[extra, &["--json"]].concat());
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let report = serde_json::from_slice(&run.stdout).unwrap();
    (dir, out, report)
}

/// A file of the library's tests, by its path below `crates/mobmem/tests`.
fn library_test_file(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../mobmem/tests")
        .join(path)
}

/// An ftrace text fixture.
fn fixture(name: &str) -> PathBuf {
    library_test_file("fixtures/ftrace").join(name)
}

/// A Perfetto trace of the library's tests.
fn perfetto_fixture(name: &str) -> PathBuf {
    library_test_file("data/perfetto").join(name)
}

#[test]
fn import_writes_the_trace_and_reports_skipped_lines() {
    let input = fixture("linux.txt");
    let (dir, out, report) = imported("ftrace", &input, "linux.mmt", &[]);
    assert_eq!(report["lost_events"], 7);
    assert_eq!(report["accesses_from"], "read-path");
    let trace = mobmem::trace::read_all(&out, None).unwrap();
    assert_eq!(trace.events.len(), 13);

    // The same trace as CSV, then `trace info` reads it back.
    let csv = dir.path().join("linux.csv");
    let run = import("ftrace", &input, &csv, &[]);
    assert!(run.status.success());
    assert_eq!(mobmem::trace::read_all(&csv, None).unwrap(), trace);
}

#[test]
fn strict_import_fails_on_the_first_malformed_line_and_writes_nothing() {
    let (_, err) = refused_import("ftrace", &fixture("malformed.txt"), &["--strict"]);
    assert_mentions(&err, &["malformed.txt: line 3:", "expected ino"]);
}

/// `trace import --from FROM - --out OUT` fed `bytes` on standard input: the trace written.
fn imported_from_stdin(from: &str, bytes: &[u8]) -> mobmem::trace::Trace {
    use std::io::Write;
    use std::process::Stdio;
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("a.csv");
    let mut child = Command::new(env!("CARGO_BIN_EXE_mobmem"))
        .args(["trace", "import", "--from", from, "-", "--out"])
        .arg(&out)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(bytes).unwrap();
    let done = child.wait_with_output().unwrap();
    assert!(
        done.status.success(),
        "{}",
        String::from_utf8_lossy(&done.stderr)
    );
    mobmem::trace::read_all(&out, None).unwrap()
}

#[test]
fn import_reads_standard_input() {
    let text = std::fs::read(fixture("android.txt")).unwrap();
    let from_stdin = imported_from_stdin("ftrace", &text);
    let (from_file, _) = mobmem::trace::ftrace::import_file(
        &fixture("android.txt"),
        mobmem::trace::ftrace::ImportOptions::default(),
    )
    .unwrap();
    assert_eq!(from_stdin, from_file);
}

/// A Perfetto trace piped in, plain, gzip or zstd, as protobuf or as traceconv's text:
/// the trace of the file.
#[test]
fn perfetto_reads_standard_input_in_every_form() {
    let perfetto = |name: &str| {
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../mobmem/tests/data/perfetto")
            .join(name)
    };
    let plain = std::fs::read(perfetto("all-events.pftrace")).unwrap();
    let (from_file, _) = mobmem::trace::perfetto::import_file(
        &perfetto("all-events.pftrace"),
        mobmem::trace::ftrace::ImportOptions::default(),
    )
    .unwrap();
    for (what, bytes) in [
        ("plain", plain.clone()),
        (
            "gzip",
            std::fs::read(perfetto("all-events.pftrace.gz")).unwrap(),
        ),
        ("zstd", zstd::encode_all(plain.as_slice(), 3).unwrap()),
        (
            "deflated packets",
            std::fs::read(perfetto("compressed-packets.pftrace")).unwrap(),
        ),
        ("text", std::fs::read(perfetto("all-events.txt")).unwrap()),
    ] {
        let t = imported_from_stdin("perfetto", &bytes);
        assert_eq!(t.events, from_file.events, "{what}");
    }
}

/// Inputs with no event: the report says what was skipped and why, then the import fails
/// saying what was expected, and writes nothing.
#[test]
fn an_import_without_events_reports_what_it_read_and_fails() {
    let dir = tempfile::tempdir().unwrap();
    let cases: [(&str, &str, &str); 4] = [
        ("empty.txt", "", "lines                0"),
        (
            "header.txt",
            "# tracer: nop\n#\nTRACE:\n",
            "header (before the first event) (line 3)",
        ),
        (
            "perfetto.textproto",
            "packet {\n  timestamp: 100\n  ftrace_events {\n    cpu: 0\n  }\n}\n",
            "text before the first event (not ftrace) (lines 1, 2, 3, 4, 5, ...)",
        ),
        (
            "counter.txt",
            "            cat-1     [000] .....           2: mm_filemap_fault: dev=8:1 ino=1a ofs=0\n            cat-1     [000] .....           3: mm_filemap_fault: dev=8:1 ino=1a ofs=0\n",
            "`2` without a fraction",
        ),
    ];
    for (name, text, reported) in cases {
        let input = dir.path().join(name);
        std::fs::write(&input, text).unwrap();
        let out = dir.path().join("out.mmt");
        let run = import("ftrace", &input, &out, &[]);
        let stdout = String::from_utf8_lossy(&run.stdout);
        let stderr = String::from_utf8_lossy(&run.stderr);
        assert!(!run.status.success(), "{name}: {stdout}");
        assert!(stdout.contains(reported), "{name}: {stdout}");
        assert!(
            stderr.contains(&format!("{}: no events found", input.display()))
                && stderr.contains("expected ftrace text"),
            "{name}: {stderr}"
        );
        assert!(!out.exists(), "{name}");
    }
}

#[test]
fn perfetto_text_imports_with_from_perfetto() {
    let (_dir, out, report) =
        imported("perfetto", &fixture("perfetto.txt"), "p.csv", &["--strict"]);
    assert_eq!(report["threads"], 2);
    assert_eq!(report["pages_deleted"], 1);
    let trace = mobmem::trace::read_all(&out, None).unwrap();
    let pids: Vec<u32> = trace.tables.processes.iter().map(|p| p.pid).collect();
    assert_eq!(pids, vec![3493, 4100]);
}

#[test]
fn a_perfetto_protobuf_trace_imports_and_simulates() {
    let input = perfetto_fixture("all-events.pftrace.gz");
    let (_dir, out, report) = imported("perfetto", &input, "phone.mmt", &[]);
    assert_eq!(report["file_accesses"], 8);
    assert!(report["perfetto"]["packets"].as_u64().unwrap() > 0);
    ok(&sim(out.to_str().unwrap(), "lru", "4", &[]));
}

#[test]
fn a_truncated_perfetto_trace_names_the_byte_offset_and_writes_nothing() {
    let (_, err) = refused_import("perfetto", &perfetto_fixture("truncated.pftrace"), &[]);
    assert_mentions(&err, &["byte offset", "truncated"]);
}

#[test]
fn a_perfetto_trace_without_memory_events_is_reported_then_refused() {
    let (report, err) = refused_import(
        "perfetto",
        &perfetto_fixture("no-memory-events.pftrace"),
        &[],
    );
    assert_mentions(&report, &["ignored events"]);
    assert_mentions(&err, &["no memory events"]);
}

/// A Pixel 6a block trace, gzipped, converts the same from a file and from a pipe (`-`),
/// and `sim` reads it with `--format mobile-block`; without the format, the error says
/// which to give.
#[test]
fn mobile_block_traces_read_from_files_and_pipes() {
    use std::io::Write;
    use std::process::Stdio;
    let dir = tempfile::tempdir().unwrap();
    let text = "proces,device,rw_flag,sector,size,timestamp\n\
                loop40-2757,8388608,R,206567552,8,653406.907265\n\
                <...>-21515,8388608,W,206567552,16,653406.908974\n\
                PoolThread,8388608,R,200612232,9,653406.913868\n";
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(text.as_bytes()).unwrap();
    let gz = gz.finish().unwrap();
    let path = dir.path().join("app_exec.csv.gz");
    std::fs::write(&path, &gz).unwrap();
    let from_file = dir.path().join("file.mmt");
    let convert = |input: &str, out: &std::path::Path| {
        let mut child = Command::new(env!("CARGO_BIN_EXE_mobmem"))
            .args(["trace", "convert", input])
            .arg(out)
            .args(["--format", "mobile-block"])
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut stdin = child.stdin.take().unwrap();
        // Read from a file, the command may end before taking its input: only `-` reads it.
        if input == "-" {
            stdin.write_all(&gz).unwrap();
        }
        drop(stdin);
        let done = child.wait_with_output().unwrap();
        assert!(
            done.status.success(),
            "{}",
            String::from_utf8_lossy(&done.stderr)
        );
    };
    convert(path.to_str().unwrap(), &from_file);
    let from_pipe = dir.path().join("pipe.mmt");
    convert("-", &from_pipe);
    let t = mobmem::trace::read_all(&from_file, None).unwrap();
    assert_eq!(t, mobmem::trace::read_all(&from_pipe, None).unwrap());
    // 1 + 2 + 2 pages (sectors 200612232..+9 reach into a second page).
    assert_eq!(t.events.len(), 5);
    assert_eq!(t.footprint(), 4);
    let trace = path.to_str().unwrap();
    let err = common::fails(&sim(trace, "lru", "2", &[]));
    assert!(err.contains("give --format mobile-block"), "{err}");
    let out = common::ok(&sim(trace, "lru", "2", &["--format", "mobile-block"]));
    assert!(out.contains("accesses                     5"), "{out}");
}

/// `trace import --format csv --columns SPEC` reads a CSV of the user's own layout, and
/// the same spec on a preset changes it; its errors name the line and the column, and a
/// spec given with a format it cannot apply to is refused before anything is read.
#[test]
fn column_specs_import_a_csv_of_any_layout() {
    let (dir, input) = temp_file(
        "requests.csv",
        "when;key;bytes;kind\n0.5;7;512;get\n0.75;8;4096;set\n1.0;7;512;get\n",
    );
    let out = dir.path().join("requests.mmt");
    let spec = "delimiter=;, has-header=true, time-col=when, time-unit=s, obj-id-col=key, \
                obj-size-col=bytes, op-col=kind, read=get, write=set";
    let run = |spec: &str, format: &str, out: &Path| {
        Command::new(env!("CARGO_BIN_EXE_mobmem"))
            .args([
                "trace",
                "import",
                "--format",
                format,
                "--columns",
                spec,
                "--json",
            ])
            .arg(&input)
            .arg("--out")
            .arg(out)
            .output()
            .unwrap()
    };
    let done = run(spec, "csv", &out);
    assert!(
        done.status.success(),
        "{}",
        String::from_utf8_lossy(&done.stderr)
    );
    let summary: serde_json::Value = serde_json::from_slice(&done.stdout).unwrap();
    assert_eq!(summary["accesses"], 3, "{summary}");
    assert_eq!(summary["distinct_pages"], 2, "{summary}");
    let t = mobmem::trace::read_all(&out, None).unwrap();
    let writes: Vec<bool> = t.events.iter().map(|e| e.is_write()).collect();
    assert_eq!(writes, vec![false, true, false]);
    let times: Vec<u64> = t.events.iter().map(|e| e.time_ns()).collect();
    assert_eq!(times, vec![0, 250_000_000, 500_000_000]);
    // A spelling the spec does not know: the line, the column and what was expected.
    std::fs::write(&input, "when;key;bytes;kind\n0.5;7;512;put\n").unwrap();
    let failed = run(spec, "csv", &dir.path().join("bad.mmt"));
    assert!(!failed.status.success());
    assert_mentions(
        &String::from_utf8_lossy(&failed.stderr),
        &["requests.csv: line 2: column 4 (`kind`, op-col): `put`, expected a read (get) or a write (set)"],
    );
    assert!(!dir.path().join("bad.mmt").exists());
    // A spec on a format that has fixed columns.
    let failed = run("obj-id-col=1", "lis", &dir.path().join("bad.mmt"));
    assert_mentions(
        &String::from_utf8_lossy(&failed.stderr),
        &["a column spec goes with --format csv, txt or a preset"],
    );
    // An unknown key lists the keys.
    let failed = run(
        "obj-id-col=1, colour=red",
        "csv",
        &dir.path().join("bad.mmt"),
    );
    assert_mentions(
        &String::from_utf8_lossy(&failed.stderr),
        &["column spec `obj-id-col=1, colour=red`: `colour=red`: unknown key; the keys are delimiter"],
    );
}

/// A vscsi trace converts to `.mmt` by its name alone, a twr trace with `--format twr`:
/// one access a record, writes from the SCSI opcode or the op.
#[test]
fn vscsi_and_twr_traces_convert_to_mmt() {
    let dir = tempfile::tempdir().unwrap();
    // Version 2 records: cmd, ver, sn, len, nSG, lbn, ts (us), rt.
    let vscsi: Vec<u8> = [(0x28u16, 7u64), (0x2a, 8), (0x28, 7), (0x8a, 9)]
        .iter()
        .enumerate()
        .flat_map(|(i, &(cmd, lbn))| {
            let mut r = Vec::new();
            r.extend_from_slice(&cmd.to_le_bytes());
            r.extend_from_slice(&0x0200u16.to_le_bytes());
            r.extend_from_slice(&(i as u32).to_le_bytes());
            r.extend_from_slice(&4096u32.to_le_bytes());
            r.extend_from_slice(&1u32.to_le_bytes());
            r.extend_from_slice(&lbn.to_le_bytes());
            r.extend_from_slice(&(1_000_000 * i as u64).to_le_bytes());
            r.extend_from_slice(&100u64.to_le_bytes());
            r
        })
        .collect();
    let path = dir.path().join("small.vscsi");
    std::fs::write(&path, vscsi).unwrap();
    let out = dir.path().join("vscsi.mmt");
    ok(&convert(&path, &out, &[]));
    let t = mobmem::trace::read_all(&out, None).unwrap();
    assert_eq!(t.events.len(), 4);
    assert_eq!(t.footprint(), 3);
    let writes: Vec<bool> = t.events.iter().map(|e| e.is_write()).collect();
    assert_eq!(writes, [false, true, false, true]);
    assert_eq!(t.events[3].time_ns(), 3_000_000_000);

    // twr records: time, obj_id, key size << 22 | value size, op << 24 | ttl.
    let twr: Vec<u8> = [(1u32, 5u64), (3, 5), (9, 6), (2, 5), (1, 6)]
        .iter()
        .enumerate()
        .flat_map(|(i, &(op, id))| {
            let mut r = Vec::new();
            r.extend_from_slice(&(i as u32).to_le_bytes());
            r.extend_from_slice(&id.to_le_bytes());
            r.extend_from_slice(&((10u32 << 22) | 90).to_le_bytes());
            r.extend_from_slice(&((op << 24) | 60).to_le_bytes());
            r
        })
        .collect();
    let path = dir.path().join("cluster.bin");
    std::fs::write(&path, twr).unwrap();
    let out = dir.path().join("twr.mmt");
    let err = common::fails(&convert(&path, &out, &[]));
    assert!(err.contains("pass --format"), "{err}");
    ok(&convert(&path, &out, &["--format", "twr"]));
    let t = mobmem::trace::read_all(&out, None).unwrap();
    assert_eq!(t.events.len(), 5);
    assert_eq!(t.footprint(), 2);
    let writes = t.events.iter().filter(|e| e.is_write()).count();
    assert_eq!(writes, 2, "set and delete");
    // Objects of 10 + 90 bytes: 150 bytes hold one, so only the get after the set hits.
    let trace = path.to_str().unwrap();
    let run = common::json(&sim(trace, "lru", "150B", &["--format", "twr", "--json"]));
    assert_eq!((&run["accesses"], &run["misses"]), (&5.into(), &4.into()));
}
