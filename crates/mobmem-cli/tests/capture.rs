//! `mobmem capture` on this machine's kernel: a real capture of `cat` reading a file after
//! the page cache was dropped. Needs root and tracefs; where it cannot run it prints
//! `skipped: capture_real_tracefs (reason)` and passes.

use std::collections::BTreeMap;
use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::process::Command;

const TRACEFS: &str = "/sys/kernel/tracing";

fn skip(reason: &str) {
    println!("skipped: capture_real_tracefs ({reason})");
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
            // `7 (expanded: 1408)` before the buffer is allocated: 1408 KiB either way.
            let value = match text.split_once("(expanded: ") {
                Some((_, e)) => e.trim_end_matches(')').to_string(),
                None => text.to_string(),
            };
            out.insert(f, value);
        }
    }
    out
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
    let (_, after) = settings_as_found().expect("tracefs still mountable");
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
        println!("skipped: capture_without_privileges_fails_with_the_reason (needs root and setpriv to drop privileges)");
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
        println!("skipped: capture_without_privileges_fails_with_the_reason (nobody cannot run the binary here)");
        return;
    }
    assert!(!run.status.success(), "{err}");
    assert!(err.contains("needs root"), "{err}");
    assert!(!out.exists());
}
