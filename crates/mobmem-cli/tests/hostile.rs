//! Hostile input to the command line: sizes far beyond the trace, thread counts, names
//! that would make paths, configs asking for more than memory holds, and inputs whose
//! errors must say where they are. Each ends quickly, in success or in a clear error;
//! the inputs are written by the tests into a temporary folder.

use crate::common;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use common::{
    assert_mentions, convert, fails, json, mobmem, mrc, ok, run_full, sim, temp_file, tree,
};

/// A CSV trace of 48 distinct pages (anonymous and file), three processes, one of them
/// in the foreground, 240 accesses.
fn tiny_trace(dir: &Path) -> PathBuf {
    let path = dir.join("tiny.csv");
    let mut text = String::from("time_ns,pid,event,page_kind,owner,index,op,value\n");
    for (i, pid) in [1000, 2000, 3000].iter().enumerate() {
        text.push_str(&format!("{i},{pid},start,,,,,app{i}\n"));
        text.push_str(&format!("{i},{pid},importance,,,,,{}\n", [0, 700, 900][i]));
    }
    for i in 0..240u64 {
        let pid = [1000, 2000, 3000][(i % 3) as usize];
        let page = i * 7 % 48;
        let (kind, owner) = if page % 2 == 0 {
            ("anon", pid)
        } else {
            ("file", 42)
        };
        let op = if i % 5 == 0 { "W" } else { "R" };
        text.push_str(&format!(
            "{},{pid},access,{kind},{owner},{page},{op},\n",
            10 + i
        ));
    }
    std::fs::write(&path, text).unwrap();
    path
}

fn s(path: &Path) -> &str {
    path.to_str().unwrap()
}

#[test]
fn every_policy_runs_at_capacities_far_beyond_the_trace() {
    let dir = tempfile::tempdir().unwrap();
    let trace = tiny_trace(dir.path());
    for policy in mobmem::mm::placement::REGISTRY.names() {
        let fitting = json(&sim(s(&trace), policy, "96", &["--json"]));
        for capacity in ["4294967296", "18446744073709551615"] {
            let started = Instant::now();
            let m = json(&sim(s(&trace), policy, capacity, &["--json"]));
            assert!(started.elapsed() < Duration::from_secs(20), "{policy}");
            assert_eq!(m["accesses"], 240, "{policy} at {capacity}");
            // A single-tier policy has no PCM, and no `pcm_pages`.
            let pcm = m["pcm_pages"].as_u64().unwrap_or(0);
            let pages = m["dram_pages"].as_u64().unwrap() + pcm;
            assert_eq!(pages.to_string(), capacity, "{policy}");
            if pcm == 0 {
                // Every page fits: the misses are the 48 first touches, as at 96 pages.
                assert_eq!(m["misses"], 48, "{policy}");
                assert_eq!(m["hits"], fitting["hits"], "{policy}");
            }
        }
    }
}

#[test]
fn swap_and_reclaim_sizes_far_beyond_the_trace_run_or_are_refused_by_their_limits() {
    let dir = tempfile::tempdir().unwrap();
    let trace = tiny_trace(dir.path());
    for architecture in [
        "flash",
        "hierarchical-lru",
        "hierarchical-clock",
        "parallel-filtered",
    ] {
        let m = json(&[
            "swap",
            "--trace",
            s(&trace),
            "--architecture",
            architecture,
            "--dram-pages",
            "16",
            "--nvm-pages",
            "18446744073709551615",
            "--json",
        ]);
        assert!(m["swap_outs"].as_u64().is_some(), "{architecture}: {m}");
    }
    // The machine models every frame of its memory: swap's DRAM and reclaim's memory
    // have a stated limit.
    let most = "18446744073709551615";
    let cases: [(&str, &[&str], &str); 3] = [
        (
            "swap",
            &["--dram-pages", most, "--nvm-pages", most],
            "dram_pages must be 1..=4194304",
        ),
        (
            "reclaim",
            &["--memory-mib", most],
            "--memory-mib must be 1..=",
        ),
        (
            "reclaim",
            &["--memory-fraction", "1e300"],
            "the fraction must be in (0, 16]",
        ),
    ];
    for (command, sizes, says) in cases {
        let args: Vec<&str> = [command, "--trace", s(&trace)]
            .iter()
            .chain(sizes)
            .copied()
            .collect();
        let e = fails(&args);
        assert!(e.contains(says), "{e}");
    }
}

#[test]
fn threads_are_1_to_1024() {
    for bad in ["0", "1025", "18446744073709551615", "-1", "many"] {
        let e = fails(&["--threads", bad, "policies"]);
        assert!(
            e.contains("--threads") && e.contains("from 1 to 1024"),
            "{bad}: {e}"
        );
    }
    // Global: after the command too.
    let e = fails(&["policies", "--threads", "0"]);
    assert_mentions(&e, &["from 1 to 1024"]);
    for good in ["1", "1024"] {
        assert!(ok(&["--threads", good, "policies"]).contains("lru"));
    }
}

#[test]
fn negative_numbers_are_refused_as_negative() {
    let dir = tempfile::tempdir().unwrap();
    let trace = tiny_trace(dir.path());
    let cases: [&[&str]; 5] = [
        &sim(s(&trace), "lru", "-1", &[]),
        &["swap", "--trace", s(&trace), "--nvm-pages", "-5"],
        &["reclaim", "--trace", s(&trace), "--memory-mib", "-128"],
        &["gen", "chrome-push", "--seed", "-3", "--out", "x.mmt"],
        &["ksm", "--pages-to-scan", "-100"],
    ];
    for args in cases {
        let e = fails(args);
        assert!(
            e.contains("must be a non-negative integer") && e.contains("negative number"),
            "{args:?}: {e}"
        );
        assert!(!e.contains("unexpected argument"), "{args:?}: {e}");
    }
    let e = fails(&sim(s(&trace), "lru", "lots", &[]));
    assert_mentions(&e, &["must be a non-negative integer, got 'lots'"]);
    // Negative shares reach their own checks, which say what is expected.
    let e = fails(&sim(
        s(&trace),
        "app-aware",
        "10",
        &["--dram-fraction", "-0.5"],
    ));
    assert_mentions(&e, &["between 0 and 1"]);
    let e = fails(&["gen", "chrome-push", "--scale", "-2", "--out", "x.mmt"]);
    assert_mentions(&e, &["scale -2 must be > 0"]);
}

/// An experiment file with one workload named `name`, reading `trace`.
fn experiment(dir: &Path, name: &str, trace: &Path) -> PathBuf {
    let path = dir.join("exp.toml");
    std::fs::write(
        &path,
        format!(
            "name = \"exp\"\n[[workload]]\nname = {}\ntrace = {}\n[sweep]\n\
             policies = [\"lru\"]\nmemory_fraction = [0.5]\n",
            toml::Value::String(name.into()),
            toml::Value::String(trace.display().to_string())
        ),
    )
    .unwrap();
    path
}

/// The experiment of one workload `tiny` reading [`tiny_trace`], both written in `dir`.
fn tiny_experiment(dir: &Path) -> PathBuf {
    experiment(dir, "tiny", &tiny_trace(dir))
}

#[test]
fn names_from_experiment_files_never_become_paths() {
    let dir = tempfile::tempdir().unwrap();
    let trace = tiny_trace(dir.path());
    let nested = dir.path().join("a/b");
    std::fs::create_dir_all(&nested).unwrap();
    let out = nested.join("out");
    let absolute = dir.path().join("abs").display().to_string();
    for name in [
        "../../escaped",
        "../escaped",
        absolute.as_str(),
        "..",
        ".hidden",
        "a/b",
        "",
        "x\u{0}y",
        "tab\there",
    ] {
        let exp = experiment(dir.path(), name, &trace);
        let e = fails(&["run", s(&exp), "--out", s(&out)]);
        assert!(
            e.contains("exp.toml") && e.contains("workload 1, key `name`"),
            "{name:?}: {e}"
        );
        assert!(!out.exists(), "{name:?}: nothing is written");
    }
    let mut left: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    left.sort();
    assert_eq!(left, ["a", "exp.toml", "tiny.csv"], "nothing escaped");
    // A long name is refused too (file names are bounded).
    let exp = experiment(dir.path(), &"w".repeat(65), &trace);
    let e = fails(&["run", s(&exp), "--out", s(&out)]);
    assert_mentions(&e, &["key `name`", "1 to 64"]);
    // A plain name still works, and its files are inside --out (two memory sizes, so
    // that the hit ratio varies and is plotted).
    let exp = experiment(dir.path(), "plain.name-1_x+y", &trace);
    let text = std::fs::read_to_string(&exp).unwrap();
    std::fs::write(&exp, text.replace("[0.5]", "[0.1, 1.0]")).unwrap();
    ok(&["run", s(&exp), "--out", s(&out)]);
    assert!(out.join("exp/plain.name-1_x+y-hit-ratio.svg").exists());
}

#[test]
fn a_users_folder_at_the_reports_name_is_never_removed() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let theirs = out.join("exp");
    std::fs::create_dir_all(&theirs).unwrap();
    // The experiment's own input trace lives in the folder the report would take.
    let trace = tiny_trace(&theirs);
    std::fs::write(theirs.join("notes.txt"), "the user's").unwrap();
    std::fs::create_dir(out.join(".exp.partial")).unwrap();
    std::fs::write(out.join(".exp.partial/keep.txt"), "also the user's").unwrap();
    let exp = experiment(dir.path(), "tiny", &trace);
    let before = tree(dir.path());
    let e = fails(&["run", s(&exp), "--out", s(&out)]);
    assert_mentions(&e, &["out/exp", "a folder", "not mobmem's own", "--force"]);
    assert_eq!(tree(dir.path()), before, "nothing written, nothing removed");
    // --force keeps the folder whole beside the report.
    let (_, printed) = run_full(&["run", s(&exp), "--out", s(&out), "--force"]);
    assert!(printed.contains("exp.replaced-1"), "{printed}");
    let kept = out.join("exp.replaced-1");
    assert_eq!(
        std::fs::read(kept.join("notes.txt")).unwrap(),
        b"the user's"
    );
    assert!(kept.join("tiny.csv").is_file());
    assert!(out.join("exp/results.csv").is_file());
    // The report is mobmem's own now: a second run replaces it, without --force, and
    // leaves every other file as it was.
    let trace_moved = kept.join("tiny.csv");
    let exp = experiment(dir.path(), "tiny", &trace_moved);
    let outside = |t: Vec<(PathBuf, Vec<u8>)>| -> Vec<_> {
        t.into_iter()
            .filter(|(p, _)| !p.starts_with(out.join("exp")) && !p.ends_with("index.html"))
            .filter(|(p, _)| !p.ends_with("out/provenance.json"))
            .collect()
    };
    let before = outside(tree(dir.path()));
    ok(&["run", s(&exp), "--out", s(&out)]);
    assert_eq!(outside(tree(dir.path())), before);
    assert_eq!(
        std::fs::read(out.join(".exp.partial/keep.txt")).unwrap(),
        b"also the user's"
    );
}

/// Killed (SIGKILL) at every step of writing its report in turn (each file or folder
/// made, written, renamed or removed; the test hook of `mobmem::output`): the user's file
/// and every file of the report stay byte-identical to the report before (a run is
/// deterministic, so the new one has the same bytes; only the provenance's clock may
/// differ), and no report folder is ever missing or partial.
#[test]
fn a_run_killed_at_every_step_of_writing_leaves_the_old_report_or_the_new_one_whole() {
    let dir = tempfile::tempdir().unwrap();
    let exp = tiny_experiment(dir.path());
    let out = dir.path().join("out");
    std::fs::create_dir(&out).unwrap();
    std::fs::write(out.join("users-file.txt"), "the user's").unwrap();
    ok(&["run", s(&exp), "--out", s(&out)]);
    // The report's files, each with its bytes; the pages and provenance files, which
    // carry the run's date, with whether they are whole instead. Temporary names of
    // killed runs are not the report.
    let report = |out: &Path| -> Vec<(PathBuf, Vec<u8>)> {
        tree(out)
            .into_iter()
            .filter(|(p, _)| {
                !p.strip_prefix(out)
                    .unwrap()
                    .iter()
                    .any(|part| part.to_string_lossy().contains(".partial"))
            })
            .map(|(p, bytes)| {
                let name = p.file_name().unwrap().to_string_lossy().into_owned();
                let bytes = if name == "index.html" {
                    vec![u8::from(bytes.ends_with(b"</html>\n"))]
                } else if name == "provenance.json" {
                    vec![u8::from(
                        serde_json::from_slice::<serde_json::Value>(&bytes).is_ok(),
                    )]
                } else {
                    bytes
                };
                (p, bytes)
            })
            .collect()
    };
    let before = report(&out);
    assert!(before.len() > 5, "{before:?}");
    let mut killed = 0;
    for step in 1.. {
        let status = std::process::Command::new(env!("CARGO_BIN_EXE_mobmem"))
            .args(["run", s(&exp), "--out", s(&out)])
            .env("MOBMEM_TEST_KILL_AT_OUTPUT_STEP", step.to_string())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .status()
            .unwrap();
        let was_killed = std::os::unix::process::ExitStatusExt::signal(&status) == Some(9);
        let after = report(&out);
        let names = |r: &[(PathBuf, Vec<u8>)]| r.iter().map(|(p, _)| p.clone()).collect::<Vec<_>>();
        assert_eq!(names(&after), names(&before), "after a kill at step {step}");
        for ((path, now), (_, then)) in after.iter().zip(&before) {
            assert!(
                now == then,
                "{} changed after a kill at step {step}",
                path.display()
            );
        }
        if !was_killed {
            assert!(status.success(), "step {step}: {status}");
            break;
        }
        killed += 1;
    }
    assert!(killed >= 10, "only {killed} steps: the hook is not reached");
    // Killed runs leave only their own hidden temporary folders and files beside the
    // report.
    for entry in std::fs::read_dir(&out).unwrap() {
        let name = entry.unwrap().file_name().into_string().unwrap();
        assert!(
            ["exp", "index.html", "provenance.json", "users-file.txt"].contains(&name.as_str())
                || name.starts_with(".exp.partial")
                || name.starts_with("index.html.partial")
                || name.starts_with("provenance.json.partial"),
            "{name}"
        );
    }
}

#[test]
fn links_at_the_reports_paths_are_never_written_through() {
    let dir = tempfile::tempdir().unwrap();
    let exp = tiny_experiment(dir.path());
    let victim = dir.path().join("victim.txt");
    std::fs::write(&victim, "precious").unwrap();
    for link in ["index.html", "provenance.json"] {
        let out = dir.path().join(format!("out-{link}"));
        std::fs::create_dir(&out).unwrap();
        std::os::unix::fs::symlink(&victim, out.join(link)).unwrap();
        let before = tree(dir.path());
        let e = fails(&["run", s(&exp), "--out", s(&out)]);
        assert_mentions(&e, &[link, "symbolic link"]);
        assert_eq!(tree(dir.path()), before, "{link}");
    }
    assert_eq!(std::fs::read(&victim).unwrap(), b"precious");
}

/// Links at the temporary names outputs are first written under, and at `mrc --out`'s
/// files: the run writes beside them (or refuses), never through them.
#[test]
fn links_at_temporary_names_and_curve_files_are_never_written_through() {
    let dir = tempfile::tempdir().unwrap();
    let exp = tiny_experiment(dir.path());
    let trace = tiny_trace(dir.path());
    let victim = dir.path().join("victim.txt");
    std::fs::write(&victim, "precious").unwrap();
    let out = dir.path().join("out");
    std::fs::create_dir(&out).unwrap();
    for name in [
        "index.html.partial",
        "provenance.json.partial",
        "exp.partial",
        ".exp.partial",
    ] {
        std::os::unix::fs::symlink(&victim, out.join(name)).unwrap();
    }
    ok(&["run", s(&exp), "--out", s(&out)]);
    assert!(out.join("exp").join("results.csv").is_file());
    assert!(out.join("index.html").is_file());
    for link in ["mrc.csv", "mrc.svg"] {
        let curve = dir.path().join(format!("curve-{link}"));
        std::fs::create_dir(&curve).unwrap();
        std::os::unix::fs::symlink(&victim, curve.join(link)).unwrap();
        let before = tree(dir.path());
        let e = fails(&mrc(
            s(&trace),
            &["--capacities", "8,16", "--out", s(&curve)],
        ));
        assert_mentions(&e, &[link]);
        assert_eq!(tree(dir.path()), before, "{link}");
        // Links at the temporary names are passed by.
        let fresh = dir.path().join(format!("fresh-{link}"));
        std::fs::create_dir(&fresh).unwrap();
        std::os::unix::fs::symlink(&victim, fresh.join(format!("{link}.partial"))).unwrap();
        ok(&mrc(
            s(&trace),
            &["--capacities", "8,16", "--out", s(&fresh)],
        ));
        assert!(std::fs::symlink_metadata(fresh.join(link))
            .unwrap()
            .is_file());
    }
    assert_eq!(std::fs::read(&victim).unwrap(), b"precious");
}

#[test]
fn an_input_is_never_its_own_output() {
    let dir = tempfile::tempdir().unwrap();
    let trace = tiny_trace(dir.path());
    let before = std::fs::read(&trace).unwrap();
    let twin = dir.path().join("twin.csv");
    std::fs::hard_link(&trace, &twin).unwrap();
    for out in [&trace, &twin] {
        let e = fails(&["trace", "convert", s(&trace), s(out)]);
        assert_mentions(&e, &[s(out), "is the input", "Choose another output"]);
        let e = fails(&[
            "trace",
            "import",
            "--from",
            "ftrace",
            s(&trace),
            "--out",
            s(out),
        ]);
        assert_mentions(&e, &["is the input"]);
    }
    assert_eq!(std::fs::read(&trace).unwrap(), before);
    // Another output is written as before.
    ok(&convert(&trace, &dir.path().join("copy.csv"), &[]));
}

#[test]
fn special_files_as_inputs_end_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("fifo.csv");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success());
    let started = Instant::now();
    let e = fails(&["trace", "info", s(&fifo)]);
    assert_mentions(&e, &["fifo.csv", "empty"]);
    let e = fails(&["trace", "info", s(dir.path()), "--format", "csv"]);
    assert_mentions(&e, &["is a folder"]);
    let exp = dir.path().join("exp.toml");
    let e = fails(&["run", s(&fifo), "--out", s(&dir.path().join("out"))]);
    assert!(e.contains("fifo.csv"), "{e}");
    // A sweep whose plot axis could not be laid out is refused before it runs.
    let exp_text = std::fs::read_to_string(tiny_experiment(dir.path())).unwrap();
    std::fs::write(&exp, exp_text.replace("[0.5]", "[0.5, 1e308]")).unwrap();
    let e = fails(&["run", s(&exp), "--out", s(&dir.path().join("out"))]);
    assert_mentions(&e, &["sweep.memory_fraction", "at most 1000"]);
    assert!(started.elapsed() < Duration::from_secs(20));
}

#[test]
fn a_missing_trace_names_the_workload_and_the_key() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("none.mmt");
    let exp = experiment(dir.path(), "oltp", &missing);
    let out = dir.path().join("out");
    let e = fails(&["run", s(&exp), "--out", s(&out)]);
    assert_mentions(
        &e,
        &["exp.toml", "workload 'oltp', key `trace`", "none.mmt"],
    );
    assert!(!out.join("exp").exists());
}

#[test]
fn config_files_that_are_not_utf8_name_the_line_and_byte() {
    let (dir, bad) = temp_file("bad.toml", b"# fine\nname = \"caf\xe9\"\n");
    let trace = tiny_trace(dir.path());
    let (out, generated) = (dir.path().join("out"), dir.path().join("g.mmt"));
    let runs: [&[&str]; 5] = [
        &["run", s(&bad), "--out", s(&out)],
        &["gen", "--config", s(&bad), "--out", s(&generated)],
        &[
            "gen",
            "gallery-usb",
            "--config",
            s(&bad),
            "--out",
            s(&generated),
        ],
        &["swap", "--trace", s(&trace), "--config", s(&bad)],
        &["reclaim", "--trace", s(&trace), "--config", s(&bad)],
    ];
    for args in runs {
        let e = fails(args);
        assert!(
            e.contains("bad.toml: line 2: byte offset 18 (column 12)")
                && e.contains("invalid UTF-8"),
            "{args:?}: {e}"
        );
    }
    // A config without end stops at the bound.
    let e = fails(&[
        "gen",
        "gallery-usb",
        "--config",
        "/dev/zero",
        "--out",
        "x.mmt",
    ]);
    assert_mentions(&e, &["/dev/zero", "at most 16 MiB"]);
}

#[test]
fn grids_beyond_the_point_limit_are_refused_before_anything_runs() {
    let dir = tempfile::tempdir().unwrap();
    let trace = tiny_trace(dir.path());
    let out = dir.path().join("out");
    let write = |name: &str, text: String| {
        let path = dir.path().join(name);
        std::fs::write(&path, text).unwrap();
        path
    };
    let fractions = |n: usize| vec!["0.5"; n].join(", ");
    // A cache grid of a million points, refused before its trace is read: the trace
    // named does not exist.
    let cache = write(
        "cache.toml",
        format!(
            "name = \"c\"\n[[workload]]\nname = \"w\"\ntrace = \"none.csv\"\n[sweep]\n\
             policies = [\"lru\", \"lfu\", \"arc\", \"fifo\"]\n\
             memory_fraction = [{}]\n",
            fractions(250_000)
        ),
    );
    // 200 points, under the limit alone, but not with 100 seeds.
    let seeded = write(
        "seeded.toml",
        format!(
            "name = \"s\"\n[[workload]]\nname = \"w\"\ntrace = {}\n[sweep]\n\
             policies = [\"lru\", \"lfu\"]\nmemory_fraction = [{}]\n",
            toml::Value::String(trace.display().to_string()),
            fractions(100)
        ),
    );
    // A reproduction kind's own list: 3000 NVM sizes for each of 4 architectures.
    let swap = write(
        "swap.toml",
        format!(
            "kind = \"swap\"\nname = \"m\"\nnvm_percent = [{}]\n",
            (1..=3000)
                .map(|i| format!("{}", f64::from(i) / 100.0))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    );
    // The KSM kind's lists: 100,000 pages_to_scan settings.
    let ksm = write(
        "ksm.toml",
        format!(
            "kind = \"ksm\"\nname = \"k\"\npages_to_scan = [{}]\n",
            (1..=100_000)
                .map(|i| i.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    );
    // The composed kind: 1000 phones, each a dozen configurations, refused before any
    // phone's workload is generated.
    let phone_text = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../experiments/phone.toml"),
    )
    .unwrap();
    let phones: Vec<String> = (0..1000)
        .map(|i| {
            let file = format!("phone-{i}.toml");
            write(
                &file,
                phone_text.replace("name = \"phone\"", &format!("name = \"p{i}\"")),
            );
            toml::Value::String(file).to_string()
        })
        .collect();
    let composed = write(
        "composed.toml",
        format!(
            "kind = \"composed\"\nname = \"c\"\nphone_files = [{}]\n",
            phones.join(", ")
        ),
    );
    let runs: [(&[&str], &str); 5] = [
        (&["run", s(&cache), "--out", s(&out)], "1000000 points"),
        (
            &["run", s(&composed), "--out", s(&out)],
            "more than the 10000",
        ),
        (&["run", s(&ksm), "--out", s(&out)], "100012 points"),
        (
            &["run", s(&seeded), "--out", s(&out), "--seeds", "100"],
            "200 points x 100 seeds = 20000",
        ),
        (&["run", s(&swap), "--out", s(&out)], "more than the 10000"),
    ];
    for (args, says) in runs {
        let start = Instant::now();
        let e = fails(args);
        assert_mentions(&e, &[says, "more than the 10000 an experiment may run"]);
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "{args:?} took long"
        );
        assert!(!out.exists(), "{args:?}");
    }
    // The same file with one seed runs.
    ok(&["run", s(&seeded), "--out", s(&out)]);
}

#[test]
fn files_named_by_an_experiment_are_never_quoted_in_its_errors() {
    // Any file at all may be named where a phone or workload config is expected; a
    // parse error gives its name and the position, never its text.
    let (dir, secret) = temp_file(
        "shadow",
        b"root:$6$SeCrEt-HaSh:19000:0:99999:7:::\nuser:$6$OtHeR:19000:0:99999:7:::\n",
    );
    let out = dir.path().join("out");
    let composed = dir.path().join("composed.toml");
    std::fs::write(
        &composed,
        format!(
            "kind = \"composed\"\nname = \"c\"\nphone_files = [{}]\n",
            toml::Value::String(secret.display().to_string())
        ),
    )
    .unwrap();
    let workload = dir.path().join("w.toml");
    std::fs::write(
        &workload,
        format!(
            "name = \"w\"\n[[workload]]\nname = \"gen\"\nconfig = {}\n[sweep]\n\
             policies = [\"lru\"]\nmemory_fraction = [0.5]\n",
            toml::Value::String(secret.display().to_string())
        ),
    )
    .unwrap();
    for exp in [&composed, &workload] {
        let e = fails(&["run", s(exp), "--out", s(&out)]);
        assert_mentions(&e, &[s(&secret), "line 1, column", "its text is not shown"]);
        for leak in ["root", "SeCrEt", "OtHeR", "19000", "99999"] {
            assert!(!e.contains(leak), "{exp:?} quoted `{leak}`: {e}");
        }
    }
    assert!(!out.exists());
    // The same file named on the command line as a config is quoted: the user chose it.
    let e = fails(&[
        "gen",
        "--config",
        s(&secret),
        "--out",
        s(&dir.path().join("g.mmt")),
    ]);
    assert!(e.contains("SeCrEt"), "{e}");
}

#[test]
fn workload_configs_bound_their_counts_when_read() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("w.toml");
    let out = dir.path().join("w.mmt");
    let gallery: [(&str, &str); 9] = [
        ("cached_file_pages = 100000000", "cached_file_pages"),
        ("cached_anon_pages = 4000000000", "cached_anon_pages"),
        ("heap_pages = 4000000000", "heap_pages"),
        ("system_pages = 4000000000", "system_pages"),
        ("images = 4000000000", "images"),
        ("cached_apps = 4000000000", "cached_apps"),
        ("cached_apps = 1000\ncached_file_pages = 1000000", "events"),
        ("think_ms = 9223372036854775807", "think_ms"),
        ("interactions = 4000000000", "events"),
    ];
    for (line, key) in gallery {
        std::fs::write(&config, format!("{line}\n")).unwrap();
        let started = Instant::now();
        let e = fails(&[
            "gen",
            "gallery-usb",
            "--config",
            s(&config),
            "--out",
            s(&out),
        ]);
        assert!(started.elapsed() < Duration::from_secs(10), "{line}");
        assert!(e.contains("w.toml") && e.contains(key), "{line}: {e}");
        assert!(!out.exists());
    }
    let cycling: [(&str, &str); 3] = [
        ("apps = 4000000000", "apps"),
        ("heap_pages = [1, 4000000000]", "heap_pages"),
        ("rounds = 1000\napps = 1000", "events"),
    ];
    for (line, key) in cycling {
        std::fs::write(&config, format!("{line}\n")).unwrap();
        let e = fails(&[
            "gen",
            "app-cycling",
            "--config",
            s(&config),
            "--out",
            s(&out),
        ]);
        assert!(e.contains("w.toml") && e.contains(key), "{line}: {e}");
    }
    let apps: [(&str, &str); 2] = [
        ("accesses = 9223372036854775807", "accesses"),
        ("[[apps]]\nname = \"a\"\npid = 1\n[[apps.regions]]\npages = 9223372036854775807\nforeground_weight = 1.0", "pages"),
    ];
    for (text, key) in apps {
        std::fs::write(&config, format!("{text}\n")).unwrap();
        let e = fails(&["gen", "--config", s(&config), "--out", s(&out)]);
        assert!(e.contains("w.toml") && e.contains(key), "{text}: {e}");
    }
}

#[test]
fn a_failed_run_leaves_no_report_that_looks_complete() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let exp = experiment(dir.path(), "w", &dir.path().join("none.csv"));
    let status = mobmem(&["run", s(&exp), "--out", s(&out)]).status;
    assert!(!status.success());
    assert!(!out.join("index.html").exists() && !out.join("exp").exists());
}
