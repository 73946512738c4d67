//! Keys of an experiment file changed from the command line (`--set`, `--sweep`), each
//! command's own report folder, and a summary that names the command of each claim.

use crate::common;
use common::*;

use std::path::Path;

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

const EXPERIMENTS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../experiments");

/// `--set reclaim.swappiness=60` on the shipped phone gives exactly what the same file
/// edited to say `swappiness = 60` gives, which is not what the file as shipped gives;
/// the provenance and the page list the change.
#[test]
fn set_changes_exactly_what_an_edited_file_would() {
    let dir = tempfile::tempdir().unwrap();
    let phone = format!("{EXPERIMENTS}/phone.toml");
    let shipped = std::fs::read_to_string(&phone).unwrap();
    assert!(shipped.contains("swappiness = 100\n"), "the shipped value");
    let edited = dir.path().join("phone.toml");
    std::fs::write(
        &edited,
        shipped.replace("swappiness = 100\n", "swappiness = 60\n"),
    )
    .unwrap();

    let [set, by_hand, default] = ["set", "edited", "default"].map(|d| dir.path().join(d));
    ok(&[
        "run",
        &phone,
        "--out",
        s(&set),
        "--set",
        "reclaim.swappiness=60",
    ]);
    ok(&["run", s(&edited), "--out", s(&by_hand)]);
    ok(&["run", &phone, "--out", s(&default)]);
    let results = |d: &Path| std::fs::read(d.join("phone/results.csv")).unwrap();
    assert_eq!(results(&set), results(&by_hand));
    assert_ne!(
        results(&set),
        results(&default),
        "swappiness changes the phone"
    );

    let provenance = read_json(&set.join("phone/provenance.json"));
    assert_eq!(
        provenance["overrides"],
        serde_json::json!(["reclaim.swappiness=60"])
    );
    assert!(read_json(&default.join("phone/provenance.json"))
        .get("overrides")
        .is_none());
    let page = std::fs::read_to_string(set.join("phone/index.html")).unwrap();
    assert!(
        page.contains("<code>reclaim.swappiness=60</code>"),
        "the page shows it"
    );
}

/// A change is checked like the file: an unknown key, a wrong type and a value that is
/// not TOML are refused before anything is written, naming the change.
#[test]
fn a_bad_change_is_refused_before_anything_runs() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let phone = format!("{EXPERIMENTS}/phone.toml");
    for (change, says) in [
        ("reclaim.swapiness=60", "unknown field `swapiness`"),
        ("reclaim.swappiness=lots", "expected u32"),
        ("reclaim.swappiness=[1,", "not a TOML value"),
        ("reclaim.swappiness", "no '='"),
        ("name.inner=1", "`name` is a string"),
    ] {
        let e = fails(&["run", &phone, "--out", s(&out), "--set", change]);
        assert_mentions(&e, &[change, says]);
    }
    let e = fails(&["reproduce", "ksm", "--out", s(&out), "--set", "nope=1"]);
    assert_mentions(&e, &["experiments/ksm.toml with --set nope=1", "nope"]);
    assert!(!out.exists(), "nothing written");
}

/// `--sweep` runs one report per point, named after it, and one table of all their rows,
/// each row that of the point's own results.csv after the point's values.
#[test]
fn a_sweep_runs_the_grid_and_tables_it() {
    let dir = tempfile::tempdir().unwrap();
    let exp = small_experiment(dir.path(), "small");
    let out = dir.path().join("out");
    let run = |extra: &[&str]| {
        let mut args = vec!["run", s(&exp), "--out", s(&out)];
        args.extend_from_slice(extra);
        run_full(&args)
    };
    let sweep = [
        "--sweep",
        "sweep.memory_fraction=[0.2],[0.6]",
        "--sweep",
        "sweep.policies=[\"lru\"],[\"lru\", \"app-aware\"]",
    ];
    run(&sweep);
    let names = [
        "small-memory_fraction-0p2-policies-lru",
        "small-memory_fraction-0p2-policies-lru_app-aware",
        "small-memory_fraction-0p6-policies-lru",
        "small-memory_fraction-0p6-policies-lru_app-aware",
    ];
    let table = std::fs::read_to_string(out.join("small.sweep.csv")).unwrap();
    let mut lines = table.lines();
    let header = lines.next().unwrap();
    assert!(
        header.starts_with("sweep_point,sweep.memory_fraction,sweep.policies,experiment,"),
        "{header}"
    );
    let mut rows = 0;
    for (i, name) in names.iter().enumerate() {
        let own = std::fs::read_to_string(out.join(name).join("results.csv")).unwrap();
        let provenance = read_json(&out.join(name).join("provenance.json"));
        let overrides = provenance["overrides"].as_array().unwrap();
        assert_eq!(overrides.len(), 2, "{overrides:?}");
        let fraction = ["[0.2]", "[0.6]"][i / 2];
        assert_eq!(overrides[0], format!("sweep.memory_fraction={fraction}"));
        for row in own.lines().skip(1) {
            let swept = lines.next().unwrap();
            let policies = ["\"[\"\"lru\"\"]\"", "\"[\"\"lru\"\", \"\"app-aware\"\"]\""][i % 2];
            assert_eq!(swept, format!("{name},{fraction},{policies},{row}"));
            rows += 1;
        }
        // The second value of `policies` adds app-aware's rows.
        assert_eq!(own.contains("app-aware"), i % 2 == 1, "{name}");
    }
    assert!(lines.next().is_none() && rows > 0);

    // Again over its own outputs: replaced. A foreign file at the table's name: refused.
    run(&sweep);
    let foreign = dir.path().join("foreign");
    std::fs::create_dir(&foreign).unwrap();
    std::fs::write(foreign.join("small.sweep.csv"), "mine\n").unwrap();
    let e = fails(&["run", s(&exp), "--out", s(&foreign), sweep[0], sweep[1]]);
    assert_mentions(&e, &["small.sweep.csv", "--force"]);
    assert_eq!(
        std::fs::read(foreign.join("small.sweep.csv")).unwrap(),
        b"mine\n"
    );

    let e = fails(&["run", s(&exp), "--out", s(&out), "--sweep", "seeds=1,,2"]);
    assert_mentions(&e, &["--sweep seeds=1,,2", "empty value"]);
    let big = format!("seeds={}", vec!["1"; 40].join(","));
    let e = fails(&[
        "run",
        s(&exp),
        "--out",
        s(&out),
        "--sweep",
        &big,
        "--sweep",
        &big,
    ]);
    assert_mentions(&e, &["more than 1000 points"]);
}

/// `run` and `reproduce` write to folders of their own by default, and a summary of a
/// folder both wrote into names the command of each claim's experiment.
#[test]
fn each_command_has_its_folder_and_the_summary_names_each_command() {
    let dir = tempfile::tempdir().unwrap();
    let exp = small_experiment(dir.path(), "small");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_mobmem"))
        .args(["run", s(&exp)])
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(dir.path().join("runs/small/results.csv").is_file());
    assert!(!dir.path().join("report").exists());

    let shared = dir.path().join("shared");
    reproduce("ksm", &shared, &["--seeds", "1"]);
    ok(&["run", s(&exp), "--out", s(&shared)]);
    let summary = ok(&["report", "summary", s(&shared)]);
    let made = summary
        .lines()
        .find(|l| l.starts_with("Made by"))
        .unwrap_or_else(|| panic!("{summary}"));
    assert!(made.contains("reproduce ksm"), "{summary}");
    assert!(
        !summary.contains("small.toml"),
        "a run without claims is not named: {summary}"
    );
}

/// `time.cpu_sharing = "eevdf"` shares the phone's CPUs in slices: what takes time
/// changes, what happens to memory does not (the phone decides on the trace's time).
#[test]
fn cpu_sharing_in_slices_changes_the_phones_times_not_its_counts() {
    let dir = tempfile::tempdir().unwrap();
    let phone = format!("{EXPERIMENTS}/phone.toml");
    let [fluid, slices] = ["fluid", "slices"].map(|d| dir.path().join(d));
    ok(&["run", &phone, "--out", s(&fluid)]);
    ok(&[
        "run",
        &phone,
        "--out",
        s(&slices),
        "--set",
        "time.cpu_sharing=\"eevdf\"",
    ]);
    let rows = |d: &Path| -> Vec<(String, String)> {
        std::fs::read_to_string(d.join("phone/results.csv"))
            .unwrap()
            .lines()
            .skip(1)
            .map(|l| {
                let (key, value) = l.rsplit_once(',').unwrap();
                (key.to_string(), value.to_string())
            })
            .collect()
    };
    let (a, b) = (rows(&fluid), rows(&slices));
    assert_eq!(a.len(), b.len());
    // The metric is the key's last column: times, stalls, jank and energy (from busy
    // time) may move.
    let timed = |key: &str| {
        let metric = key.rsplit(',').next().unwrap();
        metric.ends_with("_ms")
            || metric.ends_with("_s")
            || metric.starts_with("psi_")
            || metric.starts_with("janky")
            || metric.contains("energy")
    };
    let mut changed = 0;
    for ((ka, va), (kb, vb)) in a.iter().zip(&b) {
        assert_eq!(ka, kb);
        if timed(ka) {
            changed += usize::from(va != vb);
        } else {
            assert_eq!(va, vb, "{ka}: a count moved with the CPU sharing");
        }
    }
    assert!(changed > 0, "slices changed no time");
    let e = fails(&[
        "run",
        &phone,
        "--out",
        s(&dir.path().join("bad")),
        "--set",
        "time.cpu_sharing=\"round-robin\"",
    ]);
    assert_mentions(&e, &["round-robin", "fluid", "eevdf"]);
}
