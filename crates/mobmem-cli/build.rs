//! Records the git commit the binary is built from, and whether the checkout had
//! uncommitted changes to tracked files, for the provenance of the reports
//! (`MOBMEM_GIT_COMMIT`, `MOBMEM_GIT_DIRTY`: "true", "false" or "unknown"). Outside a git
//! checkout (a source archive, a vendored copy) both are "unknown".
//!
//! It runs again when HEAD moves (a commit, a checkout: `.git/HEAD` and the branch's
//! ref file), when the index changes, and when a file of the workspace's crates or
//! manifests changes, so that the state it records is the build's.

use std::path::{Path, PathBuf};
use std::process::Command;

fn git(dir: &Path, args: &[&str]) -> Option<String> {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .output()
        .ok()?;
    if !out.status.success() {
        return None;
    }
    Some(String::from_utf8_lossy(&out.stdout).trim().to_string())
}

fn main() {
    let manifest = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").unwrap_or_default());
    let workspace = manifest.join("../..");
    for path in ["crates", "Cargo.toml", "Cargo.lock"] {
        println!("cargo:rerun-if-changed={}", workspace.join(path).display());
    }
    println!("cargo:rerun-if-env-changed=MOBMEM_GIT_COMMIT");

    let commit = git(&workspace, &["rev-parse", "HEAD"]);
    if commit.is_some() {
        // HEAD, the ref it names and the index, wherever this checkout keeps them (a
        // worktree keeps HEAD apart from the refs).
        let mut watched = vec!["HEAD".to_string(), "index".to_string()];
        watched.push("packed-refs".to_string());
        if let Some(reference) = git(&workspace, &["symbolic-ref", "-q", "HEAD"]) {
            watched.push(reference);
        }
        for name in watched {
            if let Some(path) = git(&workspace, &["rev-parse", "--git-path", &name]) {
                let path = if Path::new(&path).is_absolute() {
                    PathBuf::from(path)
                } else {
                    workspace.join(path)
                };
                if path.exists() {
                    println!("cargo:rerun-if-changed={}", path.display());
                }
            }
        }
    }
    let dirty = commit.as_ref().and_then(|_| {
        git(
            &workspace,
            &["status", "--porcelain", "--untracked-files=no"],
        )
        .map(|s| (!s.is_empty()).to_string())
    });
    // A packager building from a tarball can say which commit it is.
    let commit = std::env::var("MOBMEM_GIT_COMMIT")
        .ok()
        .filter(|c| !c.is_empty())
        .or(commit)
        .unwrap_or_else(|| "unknown".into());
    println!("cargo:rustc-env=MOBMEM_GIT_COMMIT={commit}");
    println!(
        "cargo:rustc-env=MOBMEM_GIT_DIRTY={}",
        dirty.unwrap_or_else(|| "unknown".into())
    );
}
