//! Tests of experiment files: the shipped files, errors, and each kind on a smaller grid.

use super::*;
use crate::experiments::reproductions::{
    self, ksm, multi_swap, page_protection, selective_page_cache, REPRODUCTIONS,
};
use crate::report::table::filter;
use crate::report::{Table, Verdict};

/// A shipped file with its keys edited by `edit`, read again.
fn edited(name: &str, edit: impl FnOnce(&mut toml::Table)) -> Result<ExperimentFile> {
    let text = reproductions::find(name).unwrap().file;
    let mut table: toml::Table = toml::from_str(text).unwrap();
    edit(&mut table);
    ExperimentFile::parse(
        &toml::to_string(&table).unwrap(),
        "t.toml",
        Path::new("/base"),
    )
}

fn error(name: &str, edit: impl FnOnce(&mut toml::Table)) -> String {
    edited(name, edit).unwrap_err().to_string()
}

fn set(table: &mut toml::Table, key: &str, value: toml::Value) {
    table.insert(key.into(), value);
}

/// Sets `key` of the file's `[workload]` table.
fn set_workload(table: &mut toml::Table, key: &str, value: toml::Value) {
    table["workload"]
        .as_table_mut()
        .unwrap()
        .insert(key.into(), value);
}

fn run_once(file: &ExperimentFile) -> crate::report::ExperimentReport {
    file.run(&RunOptions {
        progress: &|_, _| {},
        seeds: None,
        media_dir: None,
    })
    .unwrap()
}

/// Whether a claim of `report` is not testable because the grid lacks a point it needs.
fn lacks_a_point(report: &crate::report::ExperimentReport) -> bool {
    report.claims.iter().any(|c| {
        c.verdict == Verdict::NotTestable
            && c.explanation
                .as_deref()
                .is_some_and(|e| e.contains("grid lacks"))
    })
}

/// The (key, key) pairs of the rows of scope `scope`, in order, deduplicated.
fn pairs(table: &Table, scope_key: &str, scope: &str, a: &str, b: &str) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    for row in table.select(&filter(&[(scope_key, scope)])) {
        let pair = (
            table.key(row, a).unwrap().to_string(),
            table.key(row, b).unwrap().to_string(),
        );
        if !out.contains(&pair) {
            out.push(pair);
        }
    }
    out
}

fn strings(v: &[&str]) -> Vec<(String, String)> {
    v.iter()
        .map(|s| {
            let (a, b) = s.split_once(' ').unwrap_or((s, ""));
            (a.to_string(), b.to_string())
        })
        .collect()
}

#[test]
fn every_shipped_file_parses_round_trips_and_holds_the_papers_grid() {
    for r in REPRODUCTIONS {
        let file = r.experiment().unwrap();
        assert_eq!(file.header.name, r.name);
        assert_eq!(file.header.reproduces.as_deref(), Some(r.name));
        assert_eq!(
            file.header.seeds,
            file.kind().seeded.then_some(reproductions::DEFAULT_SEEDS),
            "{}",
            r.name
        );
        let text = file.to_toml().unwrap();
        let again = ExperimentFile::parse(&text, "again.toml", Path::new(".")).unwrap();
        assert_eq!(again.header, file.header);
        assert_eq!(again.to_toml().unwrap(), text, "{}", r.name);
    }
    // The shipped grids are the kinds' defaults, which are the papers' grids.
    let kind_keys = |name: &str| {
        reproductions::find(name)
            .unwrap()
            .experiment()
            .unwrap()
            .params
            .to_toml()
            .unwrap()
    };
    fn defaults<P: Default + serde::Serialize>() -> toml::Table {
        toml::Table::try_from(P::default()).unwrap()
    }
    for (name, default) in [
        ("multi-swap", defaults::<multi_swap::Params>()),
        ("page-protection", defaults::<page_protection::Params>()),
        (
            "selective-page-cache",
            defaults::<selective_page_cache::Params>(),
        ),
        ("ksm", defaults::<ksm::Params>()),
    ] {
        assert_eq!(kind_keys(name), default, "{name}");
    }
    // A file with only `kind` and `name` runs the paper's grid.
    let bare =
        ExperimentFile::parse("kind = \"ksm\"\nname = \"k\"\n", "k.toml", Path::new(".")).unwrap();
    assert_eq!(bare.params.to_toml().unwrap(), kind_keys("ksm"));
    assert_eq!((bare.header.seeds, &bare.header.reproduces), (None, &None));
}

#[test]
fn runs_are_one_per_seed_or_one_alone() {
    let options = |seeds| RunOptions {
        progress: &|_, _| {},
        seeds,
        media_dir: None,
    };
    let runs = |file: &ExperimentFile, seeds| {
        let r = file.runs(&options(seeds));
        (r.seeds, r.by_seed)
    };
    let ksm = edited("ksm", |_| {}).unwrap();
    assert_eq!(runs(&ksm, None), (vec![1, 2, 3, 4, 5], true));
    assert_eq!(runs(&ksm, Some(2)), (vec![1, 2], true));
    let once = edited("ksm", |t| {
        t.remove("seeds");
    })
    .unwrap();
    assert_eq!(runs(&once, None), (vec![1], false));
    assert_eq!(runs(&once, Some(1)), (vec![1], true));
    // The cache kind's `seed` is its one run's; files that read real files run once.
    let cache = edited("hybrid-cache", |t| {
        t.remove("seeds");
        set(t, "seed", 9.into());
    })
    .unwrap();
    assert_eq!(runs(&cache, None), (vec![9], false));
    assert!(cache.params.cache_grid().is_some() && ksm.params.cache_grid().is_none());
    let fs = edited("selective-page-cache", |_| {}).unwrap();
    assert_eq!(runs(&fs, Some(3)), (vec![1], false));
}

#[test]
fn a_file_without_kind_is_the_cache_grid_as_before() {
    let text = include_str!("../../../../../experiments/reference.toml");
    let file = ExperimentFile::parse(text, "reference.toml", Path::new(".")).unwrap();
    assert_eq!(file.header.kind, "cache");
    assert_eq!(file.header.seeds, None);
    assert_eq!(file.params.default_seed(), 1);
    let explicit = format!("kind = \"cache\"\n{text}");
    let same = ExperimentFile::parse(&explicit, "reference.toml", Path::new(".")).unwrap();
    assert_eq!(same.to_toml().unwrap(), file.to_toml().unwrap());
}

/// A shipped file, an edit of it, and what its error must contain.
type Case = (
    &'static str,
    Box<dyn FnOnce(&mut toml::Table)>,
    &'static [&'static str],
);

#[test]
fn unknown_keys_and_bad_values_are_errors_naming_the_file_and_key() {
    let cases: Vec<Case> = vec![
        (
            "multi-swap",
            Box::new(|t| set(t, "nvm_sizes", 1.into())),
            &["t.toml", "nvm_sizes"],
        ),
        (
            "multi-swap",
            Box::new(|t| set(t, "kind", "swapp".into())),
            &["t.toml", "`kind`", "swapp", "reclaim"],
        ),
        (
            "multi-swap",
            Box::new(|t| set(t, "seeds", 0.into())),
            &["`seeds` = 0"],
        ),
        (
            "multi-swap",
            Box::new(|t| set(t, "seeds", "5".into())),
            &["`seeds`"],
        ),
        (
            "multi-swap",
            Box::new(|t| set(t, "reproduces", "ksm".into())),
            &["`reproduces` = 'ksm'", "multi-swap"],
        ),
        (
            "multi-swap",
            Box::new(|t| set(t, "nvm_percent", vec![toml::Value::from(-1)].into())),
            &["`nvm_percent`", "-1"],
        ),
        (
            "multi-swap",
            Box::new(|t| {
                set(
                    t,
                    "architectures",
                    vec![toml::Value::from("parallel-clock")].into(),
                )
            }),
            &["`architectures`", "parallel-clock", "nvm_architectures"],
        ),
        (
            "multi-swap",
            Box::new(|t| {
                set(
                    t,
                    "nvm_architectures",
                    vec![toml::Value::from("lru")].into(),
                )
            }),
            &["`nvm_architectures`", "'lru'"],
        ),
        (
            "multi-swap",
            Box::new(|t| {
                set_workload(t, "appz", 3.into());
            }),
            &["t.toml", "appz"],
        ),
        (
            "multi-swap",
            Box::new(|t| {
                set_workload(t, "apps", 0.into());
            }),
            &["t.toml", "[workload]", "apps"],
        ),
        (
            "multi-swap",
            Box::new(|t| {
                let swap = t["swap"].as_table_mut().unwrap();
                swap.insert("dram_pages".into(), 1000.into());
            }),
            &["[swap], with 'zram'", "pool_pages"],
        ),
        (
            "page-protection",
            Box::new(|t| set(t, "policies", vec![toml::Value::from("nope")].into())),
            &["`policies`", "'nope'"],
        ),
        (
            "page-protection",
            Box::new(|t| set(t, "memory_mib", vec![toml::Value::from(0)].into())),
            &["`memory_mib`", "0"],
        ),
        (
            "ksm",
            Box::new(|t| set(t, "pages_to_scan", vec![toml::Value::from(10)].into())),
            &["`pages_to_scan`", "at least two"],
        ),
        (
            "ksm",
            Box::new(|t| {
                set(
                    t,
                    "apps_memory_mb",
                    vec![toml::Value::from(900), 800.into()].into(),
                )
            }),
            &["`apps_memory_mb`"],
        ),
        ("ksm", Box::new(|t| set(t, "hz", 0.into())), &["`hz`"]),
        (
            "selective-page-cache",
            Box::new(|t| set(t, "seeds", 2.into())),
            &["`seeds`", "runs once"],
        ),
        (
            "selective-page-cache",
            Box::new(|t| set(t, "schemes", vec![toml::Value::from("zfs")].into())),
            &["`schemes`", "'zfs'", "entropy-bypass"],
        ),
        (
            "selective-page-cache",
            Box::new(|t| set(t, "codec", "gzip".into())),
            &["t.toml", "gzip"],
        ),
        (
            "selective-page-cache",
            Box::new(|t| set(t, "platforms", vec![toml::Value::from("pc")].into())),
            &["`platforms`", "'pc'"],
        ),
        (
            "hybrid-cache",
            Box::new(|t| set(t, "seed", 3.into())),
            &["`seed`", "`seeds`"],
        ),
        (
            "hybrid-cache",
            Box::new(|t| set(t, "name", "a/b".into())),
            &["`name` = 'a/b'"],
        ),
        (
            "hybrid-cache",
            Box::new(|t| {
                t.remove("name");
            }),
            &["missing key `name`"],
        ),
        (
            "hybrid-cache",
            Box::new(|t| {
                let clock = t["clock"].as_table_mut().unwrap();
                clock.insert("cost".into(), "paper-relative".into());
            }),
            &["t.toml", "clock", "\"paper-relative\"", "in ns"],
        ),
        (
            "hybrid-cache",
            Box::new(|t| {
                let clock = t["clock"].as_table_mut().unwrap();
                clock.insert("storage_queue_depth".into(), 0.into());
            }),
            &["clock", "queue depth 0"],
        ),
        (
            "hybrid-cache",
            Box::new(|t| {
                let clock = t["clock"].as_table_mut().unwrap();
                clock.insert("cpu".into(), 4.into());
            }),
            &["unknown field `cpu`"],
        ),
    ];
    for (name, edit, parts) in cases {
        let err = error(name, edit);
        for part in parts {
            assert!(err.contains(part), "{name}: '{part}' not in: {err}");
        }
    }
    let err = ExperimentFile::parse("kind = \nname", "t.toml", Path::new(".")).unwrap_err();
    assert!(err.to_string().starts_with("t.toml"), "{err}");
}

#[test]
fn media_is_relative_to_the_file_and_the_command_line_overrides_it() {
    let file = edited("selective-page-cache", |t| set(t, "media", "media".into())).unwrap();
    let keys = file.params.to_toml().unwrap();
    assert_eq!(keys["media"].as_str(), Some("/base/media"));
    // Without the folder the run says how to make it; --media is looked at first.
    let options = RunOptions {
        progress: &|_, _| {},
        seeds: None,
        media_dir: Some(PathBuf::from("/nonexistent/cli-media")),
    };
    let err = file.run(&options).unwrap_err().to_string();
    assert!(
        err.contains("/nonexistent/cli-media") && err.contains("make-media.sh"),
        "{err}"
    );
    let err = run_err(&file);
    assert!(err.contains("/base/media"), "{err}");
}

fn run_err(file: &ExperimentFile) -> String {
    file.run(&RunOptions {
        progress: &|_, _| {},
        seeds: None,
        media_dir: None,
    })
    .unwrap_err()
    .to_string()
}

#[test]
fn a_smaller_cache_grid_runs_only_its_points() {
    let file = edited("hybrid-cache", |t| {
        t.remove("seeds");
        let workloads = t["workload"].as_array_mut().unwrap();
        workloads.truncate(1);
        workloads[0]
            .as_table_mut()
            .unwrap()
            .insert("scale".into(), 0.02.into());
        let sweep = t["sweep"].as_table_mut().unwrap();
        sweep.insert(
            "policies".into(),
            vec![toml::Value::from("hybrid-lru"), "app-aware".into()].into(),
        );
        sweep.insert(
            "memory_fraction".into(),
            vec![toml::Value::from(0.5)].into(),
        );
    })
    .unwrap();
    let report = run_once(&file);
    let runs = pairs(
        &report.table,
        "workload",
        "chrome-push",
        "policy",
        "memory_fraction",
    );
    assert_eq!(runs, strings(&["hybrid-lru 0.5", "app-aware 0.5"]));
    assert!(!report.table.keys.contains(&"seed".to_string()));
    // Claims against 2Q, which did not run, say that the grid lacks it.
    assert!(!report.claims.is_empty());
    assert!(lacks_a_point(&report));
}

/// A small app-cycling workload and DRAM for it.
fn small_swap(t: &mut toml::Table) {
    let w = t["workload"].as_table_mut().unwrap();
    for (key, value) in [("apps", 4), ("rounds", 2)] {
        w.insert(key.into(), value.into());
    }
    for (key, [a, b]) in [
        ("launch_pages", [40, 80]),
        ("heap_pages", [100, 200]),
        ("session_accesses", [200, 400]),
        ("content_pages", [50, 100]),
    ] {
        w.insert(key.into(), vec![toml::Value::from(a), b.into()].into());
    }
    let s = t["swap"].as_table_mut().unwrap();
    s.insert("dram_pages".into(), 400.into());
    let mut zram = toml::Table::new();
    zram.insert("pool_pages".into(), 100.into());
    s.insert("zram".into(), zram.into());
}

#[test]
fn a_smaller_swap_grid_runs_only_its_points() {
    let file = edited("multi-swap", |t| {
        small_swap(t);
        t.remove("seeds");
        set(
            t,
            "nvm_percent",
            vec![toml::Value::from(10), 50.into()].into(),
        );
        set(
            t,
            "nvm_architectures",
            vec![
                toml::Value::from("hierarchical-lru"),
                "parallel-filtered".into(),
            ]
            .into(),
        );
        set(t, "architectures", vec![toml::Value::from("zram")].into());
    })
    .unwrap();
    let report = run_once(&file);
    let runs = pairs(&report.table, "scope", "run", "architecture", "nvm_percent");
    assert_eq!(
        runs,
        strings(&[
            "zram ",
            "hierarchical-lru 10",
            "parallel-filtered 10",
            "hierarchical-lru 50",
            "parallel-filtered 50"
        ])
    );
    // Flash-only swap did not run: the claims on it say that the grid lacks a point.
    let single = report
        .claims
        .iter()
        .find(|c| c.id == "single-access-majority")
        .unwrap();
    assert_eq!(single.verdict, Verdict::NotTestable);
    assert!(single
        .explanation
        .as_deref()
        .unwrap()
        .contains("grid lacks"));
    // Without `reproduces`, the figures and no claims.
    let plain = edited("multi-swap", |t| {
        small_swap(t);
        t.remove("seeds");
        t.remove("reproduces");
        t.remove("calibrated");
        t.remove("assumed");
        set(t, "nvm_percent", vec![toml::Value::from(10)].into());
    })
    .unwrap();
    let report = run_once(&plain);
    assert!(report.claims.is_empty() && report.findings.is_empty());
    assert!(!report.figures.is_empty());
    assert_eq!(report.seeds, vec![1]);
}

#[test]
fn a_smaller_reclaim_grid_runs_only_its_points() {
    let file = edited("page-protection", |t| {
        t.remove("seeds");
        set(
            t,
            "policies",
            vec![toml::Value::from("stock"), "fmp".into()].into(),
        );
        set(t, "memory_mib", vec![toml::Value::from(96)].into());
        set(t, "stream_pages", vec![toml::Value::from(2400)].into());
        set(t, "kernel_34_policies", toml::Value::Array(Vec::new()));
        set_workload(t, "interactions", 10.into());
    })
    .unwrap();
    let report = run_once(&file);
    let t = &report.table;
    assert_eq!(
        pairs(t, "scope", "sweep", "policy", "memory_mib"),
        strings(&["stock 96", "fmp 96"])
    );
    assert_eq!(
        pairs(t, "scope", "rate", "policy", "io_mb_s"),
        strings(&["stock 9.8", "fmp 9.8"])
    );
    assert_eq!(t.rows.len(), 4 + 2 + 2);
    assert!(!report.claims.is_empty());
}

#[test]
fn a_smaller_ksm_grid_runs_only_its_points() {
    let file = edited("ksm", |t| {
        t.remove("seeds");
        set(t, "duration_ms", 50_000.into());
        set(t, "sleep_duration_ms", 50_000.into());
        set(
            t,
            "pages_to_scan",
            vec![toml::Value::from(50), 100.into()].into(),
        );
        set(t, "sleep_ms", vec![toml::Value::from(20)].into());
        set(t, "apps_memory_step_mb", 100.into());
        set_workload(t, "scale", 0.1.into());
    })
    .unwrap();
    let report = run_once(&file);
    let t = &report.table;
    let series = |sweep: &str| -> Vec<String> {
        pairs(t, "sweep", sweep, "scope", "series")
            .into_iter()
            .filter(|(scope, _)| scope == "run")
            .map(|(_, s)| s)
            .collect()
    };
    assert_eq!(
        series("pages_to_scan"),
        ["pages_to_scan 50", "pages_to_scan 100"]
    );
    assert_eq!(series("sleep_millisecs"), ["sleep 20 ms"]);
    let budgets = pairs(t, "scope", "budget", "sweep", "apps_memory_mb");
    assert_eq!(budgets.len(), 2 * 3, "{budgets:?}");
    assert!(!report.claims.is_empty());
}

/// A media folder of a 96 KiB incompressible "video" and a text file.
fn small_media() -> tempfile::TempDir {
    let media = tempfile::tempdir().unwrap();
    let mut x: u64 = 1;
    let bytes: Vec<u8> = (0..96 * 1024)
        .map(|_| {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (x >> 56) as u8
        })
        .collect();
    std::fs::write(media.path().join("video-1.mp4"), &bytes).unwrap();
    std::fs::write(media.path().join("text-1.txt"), "text ".repeat(20_000)).unwrap();
    std::fs::write(media.path().join(".complete"), "").unwrap();
    media
}

#[test]
fn grids_without_the_papers_points_still_give_a_report() {
    let swap = edited("multi-swap", |t| {
        small_swap(t);
        t.remove("seeds");
        set(t, "nvm_architectures", toml::Value::Array(Vec::new()));
        set(t, "architectures", vec![toml::Value::from("flash")].into());
    })
    .unwrap();
    let reclaim = edited("page-protection", |t| {
        t.remove("seeds");
        set(t, "policies", vec![toml::Value::from("mglru")].into());
        for key in ["memory_mib", "stream_pages", "kernel_34_policies"] {
            set(t, key, toml::Value::Array(Vec::new()));
        }
        set_workload(t, "interactions", 5.into());
    })
    .unwrap();
    let media = small_media();
    let dir = media.path().to_str().unwrap().to_string();
    let fs = edited("selective-page-cache", |t| {
        set(t, "media", dir.into());
        set(t, "platforms", vec![toml::Value::from("pxa250")].into());
        set(t, "schemes", vec![toml::Value::from("ubifs")].into());
    })
    .unwrap();
    for file in [swap, reclaim, fs] {
        let report = run_once(&file);
        assert!(!report.table.rows.is_empty(), "{}", file.header.name);
        assert!(!report.claims.is_empty(), "{}", file.header.name);
        assert!(lacks_a_point(&report), "{}", file.header.name);
    }
}

#[test]
fn a_smaller_fs_grid_runs_only_its_points() {
    let media = small_media();
    let dir = media.path().to_str().unwrap().to_string();
    let file = edited("selective-page-cache", |t| {
        set(t, "media", dir.into());
        set(
            t,
            "platforms",
            vec![toml::Value::from("modern-phone")].into(),
        );
        set(
            t,
            "schemes",
            vec![toml::Value::from("stock"), "selective".into()].into(),
        );
    })
    .unwrap();
    let report = run_once(&file);
    let t = &report.table;
    assert_eq!(t.distinct("platform"), ["modern-phone"]);
    assert_eq!(t.distinct("scheme"), ["stock", "selective"]);
    // Two files x two schemes x two reads, and no power over time off the paper's board.
    assert_eq!(t.rows.len(), 8);
    assert!(report
        .claims
        .iter()
        .any(|c| c.verdict == Verdict::NotTestable));
    assert!(report.seeds.is_empty());
}

/// A claim the file declares calibrated is not testable, naming the calibration; without
/// the declaration the same run judges it; a declaration of a claim the reproduction does
/// not have, or in a file without claims, is an error.
#[test]
fn calibrated_claims_are_not_testable_naming_the_calibration() {
    let small = |t: &mut toml::Table| {
        small_swap(t);
        t.remove("seeds");
        set(t, "nvm_percent", vec![toml::Value::from(10)].into());
        set(t, "architectures", vec![toml::Value::from("flash")].into());
    };
    let single = |report: &crate::report::ExperimentReport| {
        let c = report
            .claims
            .iter()
            .find(|c| c.id == "single-access-majority");
        c.cloned().unwrap()
    };
    let declared = run_once(&edited("multi-swap", small).unwrap());
    let claim = single(&declared);
    assert_eq!(claim.verdict, Verdict::NotTestable);
    let why = claim.explanation.unwrap();
    assert!(
        why.starts_with("calibrated: the app-cycling workload's sizes")
            && why.contains("single-access"),
        "{why}"
    );
    let undeclared = run_once(
        &edited("multi-swap", |t| {
            small(t);
            t.remove("calibrated");
        })
        .unwrap(),
    );
    let claim = single(&undeclared);
    assert_ne!(claim.verdict, Verdict::NotTestable);
    assert!(claim.mean.is_finite());
    // Every other claim is the same either way (compared as text: NaN is not NaN).
    let others = |r: &crate::report::ExperimentReport| -> String {
        let kept: Vec<_> = (r.claims.iter())
            .filter(|c| c.id != "single-access-majority")
            .collect();
        format!("{kept:?}")
    };
    assert_eq!(others(&declared), others(&undeclared));

    let unknown = edited("multi-swap", |t| {
        small(t);
        let c = t["calibrated"].as_array_mut().unwrap()[0]
            .as_table_mut()
            .unwrap();
        c.insert(
            "claims".into(),
            vec![toml::Value::from("no-such-claim")].into(),
        );
    })
    .unwrap();
    let e = run_err(&unknown);
    assert!(e.contains("'no-such-claim' is not a claim"), "{e}");
    let e = error("multi-swap", |t| {
        t.remove("reproduces");
        t.remove("calibrated");
    });
    assert!(
        e.contains("key `assumed`") && e.contains("reproduces"),
        "{e}"
    );
    let e = error("multi-swap", |t| {
        t.remove("reproduces");
    });
    assert!(
        e.contains("key `calibrated`") && e.contains("reproduces"),
        "{e}"
    );
    let e = error("multi-swap", |t| {
        let c = t["calibrated"].as_array_mut().unwrap()[0]
            .as_table_mut()
            .unwrap();
        c.insert("colour".into(), 1.into());
    });
    assert!(
        e.contains("key `calibrated`") && e.contains("colour"),
        "{e}"
    );
}

/// The hybrid-cache analysis of one DRAM share never depends on another's points: a grid
/// with shares 0.05 and 0.2 gives, for 0.05, exactly the claims, findings and figures of
/// the grid with 0.05 alone (their ids and texts naming the share).
#[test]
fn adding_a_dram_share_leaves_the_claims_of_the_others_unchanged() {
    let with_shares = |shares: &[f64]| {
        let file = edited("hybrid-cache", |t| {
            t.remove("seeds");
            let workloads = t["workload"].as_array_mut().unwrap();
            for w in workloads.iter_mut() {
                w.as_table_mut()
                    .unwrap()
                    .insert("scale".into(), 0.02.into());
            }
            let sweep = t["sweep"].as_table_mut().unwrap();
            // Without clock-dwf, so that the real Pixel traces are not read.
            let policies = ["hybrid-lru", "hybrid-2q", "app-aware", "lru"];
            sweep.insert(
                "policies".into(),
                policies.map(toml::Value::from).to_vec().into(),
            );
            let sizes = [0.2, 0.5, 0.8].map(toml::Value::from).to_vec();
            sweep.insert("memory_fraction".into(), sizes.into());
            let shares: Vec<toml::Value> = shares.iter().map(|&s| s.into()).collect();
            sweep.insert("dram_fraction".into(), shares.into());
        })
        .unwrap();
        run_once(&file)
    };
    let alone = with_shares(&[0.05]);
    let both = with_shares(&[0.05, 0.2]);
    assert!(alone.claims.len() >= 10, "{}", alone.claims.len());
    assert_eq!(both.claims.len(), 2 * alone.claims.len());
    for c in &alone.claims {
        let faceted = both
            .claims
            .iter()
            .find(|b| b.id == format!("{}-dram-0.05", c.id))
            .unwrap_or_else(|| panic!("{} has its DRAM share 0.05 twin", c.id));
        assert_eq!(faceted.claim, format!("DRAM share 0.05: {}", c.claim));
        assert_same_outcome(faceted, c);
    }
    // The other share's claims differ: it is another memory.
    let other = |id: &str| {
        both.claims
            .iter()
            .find(|b| b.id == format!("{id}-dram-0.2"))
            .unwrap()
    };
    assert!(alone
        .claims
        .iter()
        .any(|c| format!("{:?}", other(&c.id).values) != format!("{:?}", c.values)));
    for f in &alone.findings {
        let twin = both
            .findings
            .iter()
            .find(|b| b.id == format!("{}-dram-0.05", f.id));
        assert_eq!(twin.unwrap().text, format!("DRAM share 0.05: {}", f.text));
    }
    // Each share's figures show that share's hybrid points only.
    let figure = both
        .figures
        .iter()
        .find(|f| f.id == "chrome-push-fg-time-dram-0.2")
        .unwrap();
    assert!(figure
        .filter
        .contains(&("dram_fraction".to_string(), "0.2".to_string())));
    assert!(!figure.lines.contains(&"lru".to_string()));
}

/// Asserts that each claim of `before` that `kept` accepts is in `after` under the same
/// id and text, with the same values, verdict and explanation; returns how many it
/// compared.
fn assert_claims_kept(
    before: &crate::report::ExperimentReport,
    after: &crate::report::ExperimentReport,
    kept: impl Fn(&str) -> bool,
) -> usize {
    let mut compared = 0;
    for c in before.claims.iter().filter(|c| kept(&c.id)) {
        let twin = (after.claims.iter())
            .find(|a| a.id == c.id)
            .unwrap_or_else(|| panic!("{} is still a claim", c.id));
        assert_eq!(twin.claim, c.claim, "{}", c.id);
        assert_same_outcome(twin, c);
        compared += 1;
    }
    compared
}

/// Asserts that `twin` has `c`'s values (NaNs as equal), verdict and explanation.
fn assert_same_outcome(twin: &crate::report::ClaimResult, c: &crate::report::ClaimResult) {
    assert_eq!(
        format!("{:?}", twin.values),
        format!("{:?}", c.values),
        "{}",
        c.id
    );
    assert_eq!(twin.verdict, c.verdict, "{}", c.id);
    assert_eq!(twin.explanation, c.explanation, "{}", c.id);
}

/// Whether some claim of `report` has a finite value: a comparison of NaNs alone would
/// show nothing.
fn some_claim_measured(report: &crate::report::ExperimentReport) -> bool {
    report.claims.iter().any(|c| c.mean.is_finite())
}

fn values<T: Into<toml::Value> + Copy>(v: &[T]) -> toml::Value {
    v.iter().map(|&x| x.into()).collect::<Vec<_>>().into()
}

/// The reclaim kind has no facet key: its claims compare policies at the default memory
/// and transfer rate (`[reclaim] memory_pages` and the workload's
/// `stream_pages_per_interaction`, one value each), and `memory_mib` and `stream_pages`
/// are the x axes of the sweep figures. So adding a policy no claim reads (memcg-low), a
/// memory size and a transfer rate leaves every claim unchanged. The rate is added inside
/// the swept range: the explanation of background-io-raises-faults cites the rise at the
/// sweep's lowest and highest rates, which describe the sweep itself.
#[test]
fn adding_a_policy_memory_size_or_rate_leaves_the_reclaim_claims_unchanged() {
    let with = |policies: &[&str], mib: &[i64], rates: &[i64]| {
        let file = edited("page-protection", |t| {
            t.remove("seeds");
            set(t, "policies", values(policies));
            set(t, "memory_mib", values(mib));
            set(t, "stream_pages", values(rates));
            set(t, "kernel_34_policies", toml::Value::Array(Vec::new()));
            set_workload(t, "interactions", 20.into());
        })
        .unwrap();
        run_once(&file)
    };
    let alone = with(&["stock", "fmp"], &[96], &[0, 1200, 4800]);
    let more = with(
        &["stock", "fmp", "memcg-low"],
        &[96, 160],
        &[0, 1200, 2400, 4800],
    );
    assert!(some_claim_measured(&alone));
    let n = assert_claims_kept(&alone, &more, |_| true);
    assert_eq!((n, more.claims.len()), (alone.claims.len(), n));
    // The added points ran.
    let t = &more.table;
    assert!(
        pairs(t, "scope", "sweep", "policy", "memory_mib").contains(&("fmp".into(), "160".into()))
    );
    assert!(pairs(t, "scope", "rate", "policy", "io_mb_s")
        .contains(&("memcg-low".into(), "9.8".into())));
}

/// The swap kind has no facet key: its architectures are compared, and `nvm_percent` is
/// the axis its claims range over (on average and at most over the NVM sizes, at the
/// largest, where hierarchical swap first wins). So adding an architecture no claim
/// reads (zram) leaves every claim unchanged, and adding an NVM size leaves unchanged the
/// claims of one point: launch time at `launch_nvm_percent` and flash-only swap's
/// single-access share.
#[test]
fn adding_an_architecture_or_nvm_size_leaves_the_swap_claims_of_other_points_unchanged() {
    let with = |sizes: &[i64], architectures: &[&str]| {
        let file = edited("multi-swap", |t| {
            small_swap(t);
            t.remove("seeds");
            set(t, "nvm_percent", values(sizes));
            set(t, "architectures", values(architectures));
        })
        .unwrap();
        run_once(&file)
    };
    let alone = with(&[10, 50], &["flash", "none"]);
    assert!(some_claim_measured(&alone));
    let zram = with(&[10, 50], &["flash", "none", "zram"]);
    let n = assert_claims_kept(&alone, &zram, |_| true);
    assert_eq!((n, zram.claims.len()), (alone.claims.len(), n));
    assert!(zram
        .table
        .distinct("architecture")
        .contains(&"zram".to_string()));
    let one_point = [
        "launch-faster-than-flash-swap",
        "launch-close-to-no-swap",
        "single-access-majority",
    ];
    let sized = with(&[10, 30, 50], &["flash", "none"]);
    let n = assert_claims_kept(&alone, &sized, |id| one_point.contains(&id));
    assert_eq!(n, one_point.len());
    assert!(sized
        .table
        .distinct("nvm_percent")
        .contains(&"30".to_string()));
}

/// The ksm kind has no facet key: KSM off and the chosen setting are compared, and
/// `pages_to_scan` and `sleep_ms` are the sweeps two of its claims range over (where the
/// saving saturates; the spread of the final saving over the sleeps). So adding a
/// pages_to_scan setting and a sleep inside the swept range leaves every other claim
/// unchanged: the app impact at the chosen setting, and the times to the saving at the
/// first, 20-ms and last sleeps.
#[test]
fn adding_a_ksm_setting_leaves_the_claims_of_the_other_settings_unchanged() {
    let with = |pages: &[i64], sleeps: &[i64]| {
        let file = edited("ksm", |t| {
            t.remove("seeds");
            set(t, "duration_ms", 50_000.into());
            set(t, "sleep_duration_ms", 50_000.into());
            set(t, "pages_to_scan", values(pages));
            set(t, "sleep_ms", values(sleeps));
            set(t, "apps_memory_step_mb", 100.into());
            set_workload(t, "scale", 0.1.into());
        })
        .unwrap();
        run_once(&file)
    };
    let alone = with(&[50, 100], &[10, 20, 200]);
    let more = with(&[50, 100, 150], &[10, 20, 50, 200]);
    assert!(some_claim_measured(&alone));
    let swept = ["saturation-pages-to-scan", "sleep-changes-amount-little"];
    let n = assert_claims_kept(&alone, &more, |id| !swept.contains(&id));
    assert_eq!(n, alone.claims.len() - swept.len());
    let series = more.table.distinct("series");
    assert!(
        series.contains(&"pages_to_scan 150".to_string()),
        "{series:?}"
    );
    assert!(series.contains(&"sleep 50 ms".to_string()), "{series:?}");
}

/// The fs kind's facet is the platform (the compared axis is the scheme): its claims are
/// the paper's, on the paper's board (pxa250), and stay so, unnamed, when the grid prices
/// the reads on another platform too; that platform gets its own figures.
#[test]
fn adding_a_platform_leaves_the_claims_of_the_papers_board_unchanged() {
    let media = small_media();
    let dir = media.path().to_str().unwrap().to_string();
    let with = |platforms: &[&str]| {
        let file = edited("selective-page-cache", |t| {
            set(t, "media", dir.clone().into());
            set(t, "platforms", values(platforms));
        })
        .unwrap();
        run_once(&file)
    };
    let alone = with(&["pxa250"]);
    let both = with(&["pxa250", "modern-phone"]);
    assert!(some_claim_measured(&alone));
    let n = assert_claims_kept(&alone, &both, |_| true);
    assert_eq!((n, both.claims.len()), (alone.claims.len(), n));
    // The added platform's figures have its rows.
    let figure = (both.figures.iter())
        .find(|f| f.id == "modern-phone-read-time-vs-stock")
        .unwrap();
    assert!(figure
        .filter
        .contains(&("platform".to_string(), "modern-phone".to_string())));
    assert_eq!(both.table.distinct("platform"), ["pxa250", "modern-phone"]);
}

/// The composed kind's facet is the phone (the compared axis is the configuration of the
/// ablation): each phone's claims are its own, their ids and texts naming it whatever the
/// grid, so adding a phone leaves another's claims unchanged and adds its own.
#[test]
fn adding_a_phone_leaves_the_claims_of_the_other_phone_unchanged() {
    let dir = tempfile::tempdir().unwrap();
    // The shipped phones, smaller and with shorter workloads.
    let small = |name: &str| {
        let (_, text) = (reproductions::composed::PHONES.iter())
            .find(|(n, _)| *n == name)
            .unwrap();
        let mut phone: toml::Table = toml::from_str(text).unwrap();
        let scale = phone["scale"].as_float().unwrap();
        set(&mut phone, "scale", (scale / 8.0).into());
        set_workload(&mut phone, "sessions", 8.into());
        let path = dir.path().join(format!("{name}.toml"));
        std::fs::write(&path, toml::to_string(&phone).unwrap()).unwrap();
        toml::Value::from(path.to_str().unwrap())
    };
    let (old, new) = (small("phone-2012"), small("phone"));
    let with = |files: Vec<toml::Value>| {
        let file = edited("composed", |t| {
            t.remove("seeds");
            set(t, "phones", toml::Value::Array(Vec::new()));
            set(t, "phone_files", files.into());
        })
        .unwrap();
        run_once(&file)
    };
    let alone = with(vec![old.clone()]);
    let both = with(vec![old, new]);
    assert!(some_claim_measured(&alone));
    assert!(alone.claims.iter().all(|c| c.id.starts_with("phone-2012-")));
    let n = assert_claims_kept(&alone, &both, |_| true);
    assert_eq!(n, alone.claims.len());
    let added = (both.claims.iter())
        .filter(|c| c.id.starts_with("phone-") && !c.id.starts_with("phone-2012-"))
        .count();
    assert_eq!(added + n, both.claims.len());
    assert!(added > 0);
    // So are its findings.
    assert!(!alone.findings.is_empty());
    for f in &alone.findings {
        let twin = both.findings.iter().find(|b| b.id == f.id);
        assert_eq!(twin.map(|t| &t.text), Some(&f.text), "{}", f.id);
    }
}
