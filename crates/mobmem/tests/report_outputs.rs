//! Report outputs never cost a user a file: a foreign folder at the report's name, links at
//! every path a report writes, and earlier reports of mobmem's own.

use crate::common;

use std::fs;
use std::path::{Path, PathBuf};

use common::tree;
use mobmem::output::{Existing, Placed};
use mobmem::report::{
    self, check_outputs, is_own_index, is_own_provenance, is_own_report, ExperimentReport,
    Provenance, Row, Table, REPORT_MARKER,
};

fn provenance() -> Provenance {
    Provenance::now("0.0.0", "unknown", None, vec!["mobmem".into()], vec![1])
}

/// A one-row report named `name`.
fn report(name: &str) -> ExperimentReport {
    let table = Table {
        experiment: name.into(),
        title: "A small experiment".into(),
        keys: vec!["policy".into()],
        rows: vec![Row {
            keys: vec!["lru".into()],
            values: vec![("hit_ratio".into(), 0.5)],
        }],
    };
    ExperimentReport::of_table(table, vec![], (vec![], vec![], vec![]))
}

/// The report as the command line writes it without `--force`.
fn write_experiment(
    dir: &Path,
    report: &ExperimentReport,
    provenance: &Provenance,
) -> mobmem::Result<PathBuf> {
    report::write_experiment(dir, report, provenance, Existing::Refuse).map(|(p, _)| p)
}

fn write_index(dir: &Path, provenance: &Provenance) -> mobmem::Result<Vec<PathBuf>> {
    report::write_index(dir, provenance, Existing::Refuse)
}

#[test]
fn a_folder_of_the_users_at_the_reports_name_is_refused_then_kept_aside_with_force() {
    let dir = tempfile::tempdir().unwrap();
    let theirs = dir.path().join("exp");
    fs::create_dir(&theirs).unwrap();
    fs::write(theirs.join("trace.csv"), "precious").unwrap();
    fs::write(theirs.join("results.csv"), "also theirs").unwrap();
    let before = tree(dir.path());
    let report = report("exp");
    let e = check_outputs(dir.path(), &["exp"], Existing::Refuse).unwrap_err();
    assert!(e.to_string().contains("pass --force"), "{e}");
    let e = write_experiment(dir.path(), &report, &provenance()).unwrap_err();
    assert!(
        e.to_string().contains("a folder that is not mobmem's own"),
        "{e}"
    );
    assert!(!e.to_string().contains("--force"), "{e}");
    assert_eq!(tree(dir.path()), before, "nothing changed, nothing left");
    let (folder, placed) =
        report::write_experiment(dir.path(), &report, &provenance(), Existing::KeepAside).unwrap();
    let aside = dir.path().join("exp.replaced-1");
    assert_eq!(placed, Placed::KeptAside(aside.clone()));
    assert_eq!(fs::read(aside.join("trace.csv")).unwrap(), b"precious");
    assert_eq!(fs::read(aside.join("results.csv")).unwrap(), b"also theirs");
    assert!(is_own_report(&folder));
}

#[test]
fn an_earlier_report_is_replaced_whole_and_one_without_its_marker_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let folder = write_experiment(dir.path(), &report("exp"), &provenance()).unwrap();
    assert!(folder.join(REPORT_MARKER).is_file());
    fs::write(folder.join("stale.svg"), "from an earlier run").unwrap();
    write_experiment(dir.path(), &report("exp"), &provenance()).unwrap();
    assert!(
        !folder.join("stale.svg").exists(),
        "the old folder went whole"
    );
    assert_eq!(
        fs::read_dir(dir.path()).unwrap().count(),
        1,
        "no temporary left"
    );
    // Report files alone, without the marker, may be a person's: refused, untouched.
    fs::remove_file(folder.join(REPORT_MARKER)).unwrap();
    fs::write(folder.join("figure.svg"), "a figure of theirs").unwrap();
    assert!(!is_own_report(&folder));
    let before = tree(dir.path());
    let e = write_experiment(dir.path(), &report("exp"), &provenance()).unwrap_err();
    assert!(e.to_string().contains("not mobmem's own"), "{e}");
    assert_eq!(tree(dir.path()), before);
}

#[test]
fn links_at_every_output_path_are_never_written_through() {
    let dir = tempfile::tempdir().unwrap();
    let victim_dir = dir.path().join("victim");
    fs::create_dir(&victim_dir).unwrap();
    fs::write(victim_dir.join("file"), "precious").unwrap();
    let out = dir.path().join("out");
    fs::create_dir(&out).unwrap();
    let victim = victim_dir.join("file");
    // The outputs and every temporary name they are written under first.
    for name in [
        "index.html",
        "provenance.json",
        "index.html.partial",
        "provenance.json.partial",
        ".exp.partial",
        "exp.partial",
        ".index.html.partial",
    ] {
        std::os::unix::fs::symlink(&victim, out.join(name)).unwrap();
    }
    std::os::unix::fs::symlink(&victim_dir, out.join("exp")).unwrap();
    let before = tree(dir.path());
    assert!(write_experiment(&out, &report("exp"), &provenance()).is_err());
    assert!(write_index(&out, &provenance()).is_err());
    assert_eq!(tree(dir.path()), before);
    // With --force the links are moved aside, their targets untouched.
    report::write_experiment(&out, &report("exp"), &provenance(), Existing::KeepAside).unwrap();
    let kept = report::write_index(&out, &provenance(), Existing::KeepAside).unwrap();
    assert_eq!(kept.len(), 2);
    assert_eq!(fs::read(&victim).unwrap(), b"precious");
    assert_eq!(fs::read_dir(&victim_dir).unwrap().count(), 1);
    assert!(is_own_index(&out.join("index.html")));
    assert!(is_own_provenance(&out.join("provenance.json")));
}
