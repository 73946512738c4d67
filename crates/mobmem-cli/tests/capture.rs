//! `mobmem capture` on this machine's kernel: a real capture of `cat` reading a file after
//! the page cache was dropped. Needs root and tracefs; where it cannot run it prints
//! `skipped: capture_real_tracefs (reason)` (see `common::skip`) and passes.

mod common;

use std::collections::BTreeMap;
use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::process::Command;

const TRACEFS: &str = "/sys/kernel/tracing";

fn skip(reason: &str) {
    common::skip("capture_real_tracefs", reason);
}

fn mounted() -> bool {
    Path::new(TRACEFS).join("trace").exists()
}

/// Every setting the capture may change, by file, as its effective value.
fn settings() -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let mut files = vec![
        "tracing_on".to_string(),
        "buffer_size_kb".to_string(),
        "options/record-tgid".to_string(),
        "current_tracer".to_string(),
    ];
    for group in ["filemap", "oom", "task", "sched", "exceptions", "vmscan"] {
        let dir = Path::new(TRACEFS).join("events").join(group);
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for e in entries.flatten() {
            if e.path().join("enable").exists() {
                files.push(format!(
                    "events/{group}/{}/enable",
                    e.file_name().to_string_lossy()
                ));
            }
        }
    }
    for f in files {
        if let Ok(text) = std::fs::read_to_string(Path::new(TRACEFS).join(&f)) {
            let text = text.trim();
            out.insert(f, text.to_string());
        }
    }
    out
}

/// Whether `buffer_size_kb` reads as restored. Before its first use the ring buffer is
/// not allocated and the file reads `7 (expanded: 1408)`; tracefs cannot free it again,
/// so the capture restores the expanded size, which the kernel rounds up to whole
/// sub-buffer pages (1408 reads back as 1410 with 4080-byte pages).
fn buffer_size_restored(before: Option<&str>, after: Option<&str>) -> bool {
    match (before, after) {
        (Some(b), Some(a)) if a == b => true,
        (Some(b), Some(a)) => match b.split_once("(expanded: ") {
            None => false,
            Some((_, e)) => {
                let parse = |t: &str| t.trim_end_matches(')').trim().parse::<u64>().ok();
                match (parse(e), parse(a)) {
                    (Some(expanded), Some(now)) => (expanded..expanded + 4).contains(&now),
                    _ => false,
                }
            }
        },
        (b, a) => b == a,
    }
}

#[test]
fn buffer_size_restored_accepts_only_the_kernels_rounding() {
    assert!(buffer_size_restored(Some("1410"), Some("1410")));
    assert!(!buffer_size_restored(Some("1410"), Some("4096")));
    assert!(buffer_size_restored(
        Some("7 (expanded: 1408)"),
        Some("1410")
    ));
    assert!(buffer_size_restored(
        Some("7 (expanded: 1408)"),
        Some("7 (expanded: 1408)")
    ));
    assert!(!buffer_size_restored(
        Some("7 (expanded: 1408)"),
        Some("32768")
    ));
    assert!(!buffer_size_restored(Some("7 (expanded: 1408)"), None));
}

/// The settings, mounting tracefs for the look if needed (and unmounting it again).
fn settings_as_found() -> Result<(bool, BTreeMap<String, String>), String> {
    if mounted() {
        return Ok((true, settings()));
    }
    let ok = Command::new("mount")
        .args(["-t", "tracefs", "nodev", TRACEFS])
        .status()
        .map(|s| s.success())
        .unwrap_or(false);
    if !ok {
        return Err("tracefs is not mounted and cannot be mounted here".into());
    }
    let s = settings();
    let _ = Command::new("umount").arg(TRACEFS).status();
    Ok((false, s))
}

fn is_root() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("Uid:"))
                .map(|l| l.split_whitespace().nth(2) == Some("0"))
        })
        .unwrap_or(false)
}

#[test]
fn capture_real_tracefs() {
    if !is_root() {
        return skip("not root");
    }
    if !Path::new("/proc/sys/vm/drop_caches").exists() {
        return skip("no /proc/sys/vm/drop_caches");
    }
    let (was_mounted, before) = match settings_as_found() {
        Ok(x) => x,
        Err(reason) => return skip(&reason),
    };
    if !before.contains_key("events/filemap/mm_filemap_add_to_page_cache/enable") {
        return skip("this kernel has no filemap trace events");
    }

    // A file on a disk file system (not tmpfs, whose pages these events do not show).
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let data = dir.path().join("data.bin");
    let bytes: Vec<u8> = (0..1_048_576u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect();
    std::fs::write(&data, &bytes).unwrap();
    let meta = std::fs::metadata(&data).unwrap();
    let out = dir.path().join("cat.mmt");
    let run = Command::new(env!("CARGO_BIN_EXE_mobmem"))
        .args(["capture", "--out"])
        .arg(&out)
        .args(["--drop-caches", "--json", "--", "sh", "-c"])
        .arg(format!("cat '{}' > /dev/null", data.display()))
        .output()
        .expect("run mobmem capture");
    assert!(
        run.status.success(),
        "capture failed: {}",
        String::from_utf8_lossy(&run.stderr)
    );
    let report: serde_json::Value = serde_json::from_slice(&run.stdout).expect("JSON report");
    assert!(
        report["used"]["mm_filemap_add_to_page_cache"]
            .as_u64()
            .unwrap_or(0)
            > 0
    );

    // Every setting as it was, tracefs mounted or not as it was.
    assert_eq!(mounted(), was_mounted, "tracefs mount state not restored");
    let (_, mut after) = settings_as_found().expect("tracefs still mountable");
    let mut before = before;
    let (size_before, size_after) = (
        before.remove("buffer_size_kb"),
        after.remove("buffer_size_kb"),
    );
    assert!(
        buffer_size_restored(size_before.as_deref(), size_after.as_deref()),
        "buffer_size_kb was {size_before:?}, is {size_after:?}"
    );
    assert_eq!(after, before, "tracing settings not restored");

    // cat read the whole file through the page cache: its 256 pages, as accesses of a
    // process named cat, keyed by the file's device and inode.
    let t = mobmem::trace::read_all(&out, None).unwrap();
    let dev = meta.dev();
    let major = ((dev >> 8) & 0xfff) as u32 | ((dev >> 32) as u32 & !0xfff);
    let minor = (dev & 0xff) as u32 | ((dev >> 12) as u32 & !0xff);
    let owner = mobmem::trace::ftrace::file_owner(major, minor, meta.ino()).unwrap();
    let cat: Vec<u32> = t
        .tables
        .processes
        .iter()
        .enumerate()
        .filter(|(_, p)| p.name == "cat")
        .map(|(i, _)| i as u32)
        .collect();
    assert!(
        !cat.is_empty(),
        "no process named cat in {:?}",
        t.tables.processes
    );
    let mut pages: Vec<u64> = t
        .accesses()
        .filter(|e| cat.contains(&e.proc()))
        .map(|e| t.tables.pages[e.page() as usize])
        .filter(|k| k.owner == owner)
        .map(|k| k.index)
        .collect();
    pages.sort_unstable();
    pages.dedup();
    assert!(
        (0..256).all(|i| pages.binary_search(&i).is_ok()),
        "cat's pages of the file: {} of 256 (dev {major}:{minor} ino {})",
        pages.len(),
        meta.ino()
    );
}

/// Without privileges (run as `nobody` through setpriv) the capture says why and fails,
/// whether tracefs is mounted (not writable) or not (cannot be mounted).
#[test]
fn capture_without_privileges_fails_with_the_reason() {
    if !is_root() || !Path::new("/usr/bin/setpriv").exists() {
        common::skip(
            "capture_without_privileges_fails_with_the_reason",
            "needs root and setpriv to drop privileges",
        );
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("x.mmt");
    let run = Command::new("/usr/bin/setpriv")
        .args(["--reuid=65534", "--regid=65534", "--clear-groups"])
        .arg(env!("CARGO_BIN_EXE_mobmem"))
        .args(["capture", "--out"])
        .arg(&out)
        .args(["--", "true"])
        .output()
        .expect("run setpriv");
    let err = String::from_utf8_lossy(&run.stderr);
    if err.contains("Permission denied") && err.contains("mobmem") && !err.contains("tracefs") {
        common::skip(
            "capture_without_privileges_fails_with_the_reason",
            "nobody cannot run the binary here",
        );
        return;
    }
    assert!(!run.status.success(), "{err}");
    assert!(err.contains("needs root"), "{err}");
    assert!(!out.exists());
}
