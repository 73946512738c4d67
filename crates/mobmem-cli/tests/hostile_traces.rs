//! Hostile trace files on the command line: each fails at once with an error naming the
//! file and the position, prints nothing that looks like a result, and never panics.

use crate::common;

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{ChildStdin, Command, Output, Stdio};
use std::time::{Duration, Instant};

use common::{assert_mentions, convert, fails, gen, mobmem, mrc, ok, sim};

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

/// `mobmem trace import --from FROM INPUT --out OUT`.
fn import_args<'a>(from: &'a str, input: &'a str, out: &'a Path) -> [&'a str; 7] {
    let out = out.to_str().unwrap();
    ["trace", "import", "--from", from, input, "--out", out]
}

#[test]
fn header_claims_and_cut_tables_fail_before_any_result() {
    let dir = tempfile::tempdir().unwrap();
    for pages in [u64::from(u32::MAX), 1 << 28] {
        let path = put(dir.path(), "claim.mmt", &claim_mmt(pages));
        let path = path.to_str().unwrap();
        for policy in ["lru", "clock"] {
            fails_at_once(
                &sim(path, policy, "100", &[]),
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
            &sim(cut.to_str().unwrap(), policy, "100", &["--json"]),
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
        &import_args("ftrace", path.to_str().unwrap(), &out),
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
    ok(&convert(&whole, &csv, &[]));
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
    let err = fails(&convert(&bad, &dir.path().join("bad.csv"), &[]));
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

/// Peak resident memory a run on a hostile input may take.
const MAX_PEAK_BYTES: u64 = 1 << 30;

/// Run `mobmem ARGS`, its standard input written by `feed` (if any), under a 4 GiB
/// address-space limit (so that a regression fails instead of taking the machine): its
/// output, its peak resident memory in bytes (the kernel's count for that child alone)
/// and how long it took.
// The child is reaped by wait4, which gives its peak memory.
#[allow(unsafe_code, clippy::zombie_processes)]
fn measured(args: &[&str], feed: Option<fn(ChildStdin)>) -> (Output, u64, Duration) {
    use std::os::unix::process::{CommandExt, ExitStatusExt};
    let mut command = Command::new(env!("CARGO_BIN_EXE_mobmem"));
    command
        .args(args)
        .stdin(if feed.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    // SAFETY: setrlimit is async-signal-safe and touches no memory of the parent.
    unsafe {
        command.pre_exec(|| {
            let limit = libc::rlimit {
                rlim_cur: 4 << 30,
                rlim_max: 4 << 30,
            };
            if libc::setrlimit(libc::RLIMIT_AS, &limit) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let started = Instant::now();
    let mut child = command.spawn().expect("run mobmem");
    let writer = feed
        .zip(child.stdin.take())
        .map(|(feed, stdin)| std::thread::spawn(move || feed(stdin)));
    let drain = |mut from: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut bytes = Vec::new();
            from.read_to_end(&mut bytes)
                .expect("read the child's output");
            bytes
        })
    };
    let stdout = drain(Box::new(child.stdout.take().unwrap()));
    let stderr = drain(Box::new(child.stderr.take().unwrap()));
    let pid = child.id() as libc::pid_t;
    let mut status = 0;
    // SAFETY: rusage is plain data, filled in by wait4.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: waits for our own child, writing only into the two locals.
    let waited = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    assert_eq!(waited, pid, "wait4: {}", std::io::Error::last_os_error());
    let took = started.elapsed();
    if let Some(writer) = writer {
        writer.join().unwrap();
    }
    let output = Output {
        status: std::process::ExitStatus::from_raw(status),
        stdout: stdout.join().unwrap(),
        stderr: stderr.join().unwrap(),
    };
    (output, usage.ru_maxrss as u64 * 1024, took)
}

/// `measured` that must end within `seconds` and under [`MAX_PEAK_BYTES`], failing
/// (without a panic) and saying `expected` on stderr.
fn fails_small_and_soon(args: &[&str], feed: Option<fn(ChildStdin)>, seconds: u64, expected: &str) {
    let (out, peak, took) = measured(args, feed);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{args:?} should fail");
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(stderr.contains(expected), "{args:?}: {stderr}");
    assert!(
        took < Duration::from_secs(seconds),
        "{args:?} took {took:?}"
    );
    assert!(peak < MAX_PEAK_BYTES, "{args:?} took {} MiB", peak >> 20);
}

fn varint(mut n: u64, out: &mut Vec<u8>) {
    while n >= 0x80 {
        out.push(n as u8 | 0x80);
        n >>= 7;
    }
    out.push(n as u8);
}

/// `payload` as field `number` (length-delimited) of its message.
fn field(number: u64, payload: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    varint(number << 3 | 2, &mut out);
    varint(payload.len() as u64, &mut out);
    out.extend_from_slice(payload);
    out
}

/// A gzipped Perfetto trace of one packet: `element` repeated to about `bytes` bytes,
/// wrapped in the length-delimited fields `fields` (innermost first; the packet, field 1
/// of `Trace`, last).
fn perfetto_bomb(element: &[u8], fields: &[u64], bytes: usize) -> Vec<u8> {
    let mut message = element.repeat(bytes / element.len());
    for &number in fields {
        message = field(number, &message);
    }
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    gz.write_all(&message).unwrap();
    gz.finish().unwrap()
}

#[test]
fn small_perfetto_files_decode_in_bounded_memory() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out.mmt");
    // Each about 32 KiB of gzip for 32 MiB of packet: every event, process, thread or
    // name is a few bytes, and used to cost a vector or a string of its own (1.5 GB and
    // more for these).
    let bytes = 32 << 20;
    let ts = [0x08, 0x01];
    // sched_process_exit (field 238) of pid 7, and one without a pid (malformed).
    let exit = [0x12, 0x07, 0x08, 0x01, 0xf2, 0x0e, 0x02, 0x10, 0x07];
    let no_pid = [0x12, 0x07, 0x08, 0x01, 0xf2, 0x0e, 0x02, 0x0a, 0x00];
    let cases: [(&str, Vec<u8>, &[u64]); 7] = [
        ("events-without-time", vec![0x12, 0x00], &[1, 1]),
        (
            "events-not-decoded",
            [&[0x12, 0x02][..], &ts].concat(),
            &[1, 1],
        ),
        ("exits", exit.to_vec(), &[1, 1]),
        ("malformed-exits", no_pid.to_vec(), &[1, 1]),
        ("processes", vec![0x0a, 0x02, 0x08, 0x01], &[2, 1]),
        ("threads", vec![0x12, 0x04, 0x08, 0x05, 0x18, 0x07], &[2, 1]),
        ("interned-names", vec![0x2a, 0x00], &[4, 1, 1]),
    ];
    for (name, element, fields) in cases {
        let path = put(
            dir.path(),
            &format!("{name}.pftrace.gz"),
            &perfetto_bomb(&element, fields, bytes),
        );
        let (run, peak, took) =
            measured(&import_args("perfetto", path.to_str().unwrap(), &out), None);
        let stderr = String::from_utf8_lossy(&run.stderr);
        assert!(!stderr.contains("panicked"), "{name}: {stderr}");
        assert!(took < Duration::from_secs(20), "{name} took {took:?}");
        assert!(peak < MAX_PEAK_BYTES, "{name} took {} MiB", peak >> 20);
        eprintln!("{name}: {} MiB, {took:?}", peak >> 20);
    }
}

/// A Perfetto trace of a packet with a timestamp, then one whose `compressed_packets`
/// (field 50) inflate to one frame of 64 MiB + 1 zero bytes: about 64 KiB in all.
fn compressed_packet_bomb() -> Vec<u8> {
    let batch = field(1, &vec![0u8; (64 << 20) + 1]);
    let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::best());
    z.write_all(&batch).unwrap();
    [
        field(1, &[0x40, 0x01]),
        field(1, &field(50, &z.finish().unwrap())),
    ]
    .concat()
}

/// A deflate bomb inside `compressed_packets` (a packet's batch of deflated packets,
/// 64 MiB and more of them in about 64 KiB): a clear error naming the packet, in the
/// same memory as the gzip bombs, from a file and from standard input.
#[test]
fn compressed_packet_bombs_are_errors_in_bounded_memory() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out.mmt");
    let path = put(dir.path(), "bomb.pftrace", &compressed_packet_bomb());
    fails_small_and_soon(
        &import_args("perfetto", path.to_str().unwrap(), &out),
        None,
        20,
        "bomb.pftrace: byte offset 4: the compressed_packets of this packet inflate to more than",
    );
    fails_small_and_soon(
        &import_args("perfetto", "-", &out),
        Some(|mut stdin| {
            let _ = stdin.write_all(&compressed_packet_bomb());
        }),
        20,
        "<stdin>: byte offset 4: the compressed_packets",
    );
    assert!(!out.exists());
}

#[test]
fn endless_inputs_end_with_an_error_naming_the_place() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out.mmt");
    // ftrace text: lines that are no events, without end.
    fails_small_and_soon(
        &import_args("ftrace", "-", &out),
        Some(|mut stdin| {
            let lines = b"not ftrace\n".repeat(1 << 12);
            while stdin.write_all(&lines).is_ok() {}
        }),
        30,
        "<stdin>: line 1048577: 1048576 lines from the start without an ftrace event",
    );
    // Random bytes: a few MiB are reported as no ftrace at all, naming the file.
    let mut random = Vec::new();
    std::fs::File::open("/dev/urandom")
        .unwrap()
        .take(8 << 20)
        .read_to_end(&mut random)
        .unwrap();
    let path = put(dir.path(), "random.txt", &random);
    fails_small_and_soon(
        &import_args("ftrace", path.to_str().unwrap(), &out),
        None,
        30,
        "random.txt: no events found in",
    );
    // The endless device itself, as the issue was found. (A random line now and then
    // looks like an event line, malformed; the count still runs from the start.)
    fails_small_and_soon(
        &import_args("ftrace", "/dev/urandom", &out),
        None,
        60,
        "/dev/urandom: line 1048577: 1048576 lines from the start without an ftrace event",
    );
    assert!(!out.exists(), "no output from a failed import");
    // oracleGeneral, vscsi, twr and twrNS: random records are refused at the first that
    // cannot be one.
    for format in ["oracle-general", "vscsi", "twr", "twr-ns"] {
        fails_small_and_soon(
            &["trace", "info", "/dev/urandom", "--format", format],
            None,
            30,
            "/dev/urandom: record ",
        );
    }
}
/// `payload` as a zstd frame of raw (stored) blocks: as large compressed as it is, so
/// that the file's length admits the page count a header claims (see
/// `trace::zstd_bound`), whatever a compressor would make of it.
fn zstd_stored(payload: &[u8]) -> Vec<u8> {
    const BLOCK: usize = 1 << 17;
    // Magic, a header with no content size and a window of 128 KiB (exponent 7).
    let mut out = vec![0x28, 0xB5, 0x2F, 0xFD, 0x00, 7 << 3];
    let blocks: Vec<&[u8]> = payload.chunks(BLOCK).collect();
    for (i, block) in blocks.iter().enumerate() {
        let last = u32::from(i + 1 == blocks.len());
        // Bit 0: last block; bits 1-2: type 0 (raw); bits 3-23: size.
        let header = last | ((block.len() as u32) << 3);
        out.extend_from_slice(&header.to_le_bytes()[..3]);
        out.extend_from_slice(block);
    }
    out
}

/// A `.mmt` trace of `accesses` records naming pages 0..10 and page `big`, whose header
/// claims `big + 1` pages; no table follows the records.
fn sparse_mmt(accesses: u64, big: u32) -> Vec<u8> {
    let records = accesses + 1;
    let mut out = b"MOBMEMTR".to_vec();
    out.extend_from_slice(&2u32.to_le_bytes());
    out.extend_from_slice(&16u32.to_le_bytes());
    for value in [records, u64::from(big) + 1, 1, 64 + 16 * records] {
        out.extend_from_slice(&value.to_le_bytes());
    }
    out.resize(64, 0);
    let record = |time: u64, word: u32, arg: u32| {
        let mut r = time.to_le_bytes().to_vec();
        r.extend_from_slice(&word.to_le_bytes());
        r.extend_from_slice(&arg.to_le_bytes());
        r
    };
    out.extend(record(0, 2 << 27, 0));
    for i in 0..accesses {
        let page = if i % 2 == 1 { big } else { (i % 10) as u32 };
        out.extend(record(i + 1, 0, page));
    }
    out
}

/// `mobmem ARGS` with its address space limited to `mib` MiB (by the shell's `ulimit`,
/// so that no unsafe code is needed to set the limit in the child).
fn mobmem_within(mib: u64, args: &[&str]) -> std::process::Output {
    std::process::Command::new("sh")
        .arg("-c")
        .arg(format!("ulimit -v {}; exec \"$0\" \"$@\"", mib * 1024))
        .arg(env!("CARGO_BIN_EXE_mobmem"))
        .args(args)
        .output()
        .expect("run sh")
}

/// Issue 32: a 3 MB `.mmt.zst` naming page 134,000,000 made per-page state of about a
/// gigabyte before its page table was found missing. Pages are renumbered as they are
/// first seen, so every policy and the LRU curve run in a small fraction of that, and
/// the missing table is reported with the file and the byte where the data ends.
#[test]
fn a_huge_page_id_costs_no_more_than_a_small_one() {
    let dir = tempfile::tempdir().unwrap();
    let accesses = 200_000;
    let bytes = sparse_mmt(accesses, 134_000_000);
    let tables_at = bytes.len();
    let packed = zstd_stored(&bytes);
    assert!(packed.len() > 3_000_000, "{}", packed.len());
    let path = put(dir.path(), "sparse.mmt.zst", &packed);
    let path = path.to_str().unwrap();
    let expected = format!(
        "sparse.mmt.zst: byte offset {tables_at}: truncated page table: the file ends in entry 0 of 134000001"
    );
    let policies = ok(&["policies"]);
    let mut runs: Vec<Vec<&str>> = policies
        .lines()
        .filter_map(|line| line.split_whitespace().next())
        .map(|policy| sim(path, policy, "100", &[]))
        .collect();
    assert!(runs.len() >= 16, "{policies}");
    runs.push(mrc(path, &["--capacities", "10,100"]));
    runs.push(mrc(path, &["--capacities", "10", "--sample", "0.5"]));
    for args in &runs {
        // Before the renumbering these needed 0.5 to 2.7 GiB.
        let out = mobmem_within(256, args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{args:?} should fail");
        assert!(out.stdout.is_empty(), "{args:?} printed {:?}", out.stdout);
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
        assert!(!stderr.contains("memory allocation"), "{args:?}: {stderr}");
        assert!(stderr.contains(&expected), "{args:?}: {stderr}");
    }
}

/// A plain `.mmt` whose page table is really there (so the trace is valid) but names
/// ten million pages, of which the events use a few: what was read bounds the table,
/// the pages used bound the policy's state.
#[test]
fn a_large_table_of_unused_pages_sizes_no_policy() {
    let dir = tempfile::tempdir().unwrap();
    let pages: u32 = 10_000_000;
    let mut bytes = sparse_mmt(1000, pages - 1);
    // The page table: every page a file page (kind 0, zero padding), then one process.
    bytes.resize(bytes.len() + 24 * pages as usize, 0);
    bytes.extend_from_slice(&1u32.to_le_bytes());
    bytes.extend_from_slice(&0u32.to_le_bytes());
    let path = put(dir.path(), "table.mmt", &bytes);
    let path = path.to_str().unwrap();
    for policy in [
        "lru",
        "lfu",
        "lirs",
        "w-tinylfu",
        "hybrid-lru",
        "clock-dwf",
        "app-aware",
    ] {
        // The 240 MB file is streamed: only its pages used are held (before, 125 to 290 MB).
        let out = mobmem_within(160, &sim(path, policy, "4", &["--json"]));
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{policy}: {stderr}");
        let row: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(row["accesses"], 1000, "{policy}");
    }
}
