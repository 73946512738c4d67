//! Helpers shared by the integration tests of both crates (the CLI's tests include this
//! file by path): finding the public traces, and reporting a test that cannot run.
#![allow(dead_code)]

use std::io::Write;
use std::path::{Path, PathBuf};

/// Where the public traces are looked for, in order: `$MOBMEM_TRACES`, then
/// `../shared/traces` beside the repository. `scripts/test.sh` fetches them into
/// `target/traces` (`scripts/fetch-traces.sh`) and sets `MOBMEM_TRACES` when neither
/// is there.
pub fn public_traces_dir() -> Result<PathBuf, String> {
    if let Some(dir) = std::env::var_os("MOBMEM_TRACES") {
        let dir = PathBuf::from(dir);
        return match dir.is_dir() {
            true => Ok(dir),
            false => Err(format!("MOBMEM_TRACES={} is not a folder", dir.display())),
        };
    }
    let beside = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/traces");
    match beside.is_dir() {
        true => Ok(beside),
        false => Err(
            "no public traces: set MOBMEM_TRACES, put ../shared/traces beside \
                      the repository, or run scripts/fetch-traces.sh"
                .into(),
        ),
    }
}

/// The public trace at `relative` (for example `arc/OLTP.lis.zst`), or `None` after
/// reporting `test` as skipped with the reason.
pub fn public_trace(test: &str, relative: &str) -> Option<PathBuf> {
    match public_traces_dir() {
        Ok(dir) if dir.join(relative).is_file() => Some(dir.join(relative)),
        Ok(dir) => {
            skip(
                test,
                &format!("{} is missing", dir.join(relative).display()),
            );
            None
        }
        Err(reason) => {
            skip(test, &reason);
            None
        }
    }
}

/// The outside oracle file `name` of `../shared/oracles` (results other programs computed
/// on the public traces, see its README), or `None` after reporting `test` as skipped.
pub fn shared_oracle(test: &str, name: &str) -> Option<PathBuf> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/oracles")
        .join(name);
    if path.is_file() {
        Some(path)
    } else {
        skip(test, &format!("no oracle file {}", path.display()));
        None
    }
}

/// A small app-cycling workload (three apps launched in two rounds, tens of pages each):
/// quick to generate and to swap.
pub fn small_app_cycling() -> mobmem::workload::app_cycling::AppCyclingConfig {
    mobmem::workload::app_cycling::AppCyclingConfig {
        apps: 3,
        rounds: 2,
        launch_pages: [20, 40],
        heap_pages: [30, 60],
        session_accesses: [40, 80],
        content_pages: [20, 40],
        ..Default::default()
    }
}

/// A small gallery-and-USB workload (six interactions over eight images, two cached
/// apps): quick to generate and to reclaim.
pub fn small_gallery_usb() -> mobmem::workload::gallery_usb::GalleryUsbConfig {
    mobmem::workload::gallery_usb::GalleryUsbConfig {
        interactions: 6,
        images: 8,
        cached_apps: 2,
        ..Default::default()
    }
}

/// The shipped 2012 phone (`experiments/phone-2012.toml`) at 1/16 of its size, with
/// `sessions` sessions of three to six inputs: a run of a second or so.
pub fn small_phone(sessions: u32) -> mobmem::mm::phone::PhoneConfig {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../experiments/phone-2012.toml"
    );
    let text = std::fs::read_to_string(path).expect("experiments/phone-2012.toml");
    let mut c = mobmem::mm::phone::PhoneConfig::parse(&text, path).expect("the shipped phone");
    c.scale = 0.0625;
    c.workload.sessions = sessions;
    c.workload.inputs = [3, 6];
    c
}

/// Checks that `message` (an error, a command's output) mentions every one of `parts`.
pub fn assert_mentions(message: &str, parts: &[&str]) {
    for part in parts {
        assert!(
            message.contains(part),
            "`{message}` does not mention `{part}`"
        );
    }
}

/// Reports a test that cannot run on this machine, by name and reason.
///
/// libtest has no "skipped" outcome and hides the output of passing tests, so the
/// line also goes to the file named by `MOBMEM_SKIP_LOG` when it is set;
/// `scripts/test.sh` sets it and prints the file at the end of the run.
pub fn skip(test: &str, reason: &str) {
    let line = format!("skipped: {test} ({reason})");
    eprintln!("{line}");
    if let Some(path) = std::env::var_os("MOBMEM_SKIP_LOG") {
        let appended = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
            .and_then(|mut f| writeln!(f, "{line}"));
        if let Err(err) = appended {
            eprintln!("cannot append to MOBMEM_SKIP_LOG: {err}");
        }
    }
}

/// libCacheSim's CloudPhysics trace, read whole, and the text of the oracle of
/// libCacheSim's miss ratios on it; `None` after reporting `test` as skipped when either
/// is missing.
pub fn cloudphysics_with_oracle(test: &str) -> Option<(mobmem::trace::Trace, String)> {
    let oracle = shared_oracle(test, "libcachesim-cloudphysics.csv")?;
    let path = public_trace(test, "libcachesim/cloudPhysicsIO.oracleGeneral.bin")?;
    let trace = mobmem::trace::read_all(&path, None).unwrap();
    Some((trace, std::fs::read_to_string(oracle).unwrap()))
}

/// Every file and link under `dir` with its bytes (a link: the path it points to),
/// sorted: two calls compare equal when nothing under `dir` changed.
pub fn tree(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let path = entry.unwrap().path();
            let meta = std::fs::symlink_metadata(&path).unwrap();
            if meta.file_type().is_symlink() {
                let to = std::fs::read_link(&path).unwrap();
                out.push((path, to.into_os_string().into_encoded_bytes()));
            } else if meta.is_dir() {
                stack.push(path);
            } else {
                let bytes = std::fs::read(&path).unwrap();
                out.push((path, bytes));
            }
        }
    }
    out.sort();
    out
}

/// The test files beside `root` (`tests/NAME.rs` of the crate at `manifest_dir`) that
/// are neither a module of `root` (`mod NAME;`) nor a test program of the crate's
/// Cargo.toml (`path = "tests/NAME.rs"`). Cargo builds only the test programs Cargo.toml
/// names (`autotests = false`), so such a file would never build or run.
pub fn test_files_left_out(manifest_dir: &Path, root: &str) -> Vec<String> {
    let tests = manifest_dir.join("tests");
    let root_source = std::fs::read_to_string(tests.join(format!("{root}.rs"))).unwrap();
    let manifest = std::fs::read_to_string(manifest_dir.join("Cargo.toml")).unwrap();
    let mut left_out: Vec<String> = std::fs::read_dir(&tests)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.is_file() && path.extension().is_some_and(|e| e == "rs"))
        .map(|path| path.file_stem().unwrap().to_string_lossy().into_owned())
        .filter(|name| {
            name != root
                && !root_source
                    .lines()
                    .any(|l| l.trim() == format!("mod {name};"))
                && !manifest.contains(&format!("path = \"tests/{name}.rs\""))
        })
        .collect();
    left_out.sort();
    left_out
}
