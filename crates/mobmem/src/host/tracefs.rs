//! tracefs (`Documentation/trace/ftrace.rst`), with every setting changed through it
//! remembered (in the run's [`Journal`] too, before it is changed) and put back by
//! [`Tracefs::restore`] or on drop, then unmounted if it was mounted here.

use std::fs::{self, File, OpenOptions};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use super::note;
use super::state::{self, Change, Journal};
use crate::{Error, Result};

/// Where tracefs is found or mounted.
pub const TRACEFS: &str = "/sys/kernel/tracing";
/// The older place, under debugfs.
pub const DEBUGFS_TRACING: &str = "/sys/kernel/debug/tracing";

/// tracefs and the settings changed through it.
pub struct Tracefs {
    root: PathBuf,
    mounted_here: bool,
    /// (file, old value), in the order changed; restored in reverse.
    changed: Vec<(PathBuf, String)>,
    journal: Journal,
}

impl Tracefs {
    /// Find tracefs, mounting it at /sys/kernel/tracing if it is nowhere; check that it is
    /// writable. Every change is written to `journal` before it is made.
    pub fn open(journal: &Journal) -> Result<Tracefs> {
        let mut fs = Tracefs {
            root: PathBuf::from(TRACEFS),
            mounted_here: false,
            changed: Vec::new(),
            journal: journal.clone(),
        };
        if Path::new(TRACEFS).join("trace").exists() {
        } else if Path::new(DEBUGFS_TRACING).join("trace").exists() {
            fs.root = PathBuf::from(DEBUGFS_TRACING);
        } else {
            let mount = Change::Mount {
                path: PathBuf::from(TRACEFS),
            };
            journal.record(mount.clone())?;
            let args = ["-t", "tracefs", "nodev", TRACEFS].map(std::ffi::OsStr::new);
            if let Err(e) = state::tool("mount", &args) {
                // Nothing was mounted: nothing to undo.
                let _ = journal.forget(&mount);
                return Err(Error::host(format!(
                    "tracefs is not mounted and mounting it failed: {e} \
                     (capturing needs root, or CAP_SYS_ADMIN, and a kernel with ftrace)"
                )));
            }
            fs.mounted_here = true;
        }
        let probe = fs.root.join("tracing_on");
        if let Err(e) = OpenOptions::new().write(true).open(&probe) {
            return Err(Error::host(format!(
                "{} is not writable ({e}): capturing needs root (or the tracefs group)",
                probe.display()
            )));
        }
        Ok(fs)
    }

    /// Where it is.
    pub fn root(&self) -> &Path {
        &self.root
    }

    pub fn has(&self, rel: &str) -> bool {
        self.root.join(rel).exists()
    }

    fn read(&self, rel: &str) -> Result<String> {
        let path = self.root.join(rel);
        let text = fs::read_to_string(&path)
            .map_err(|e| Error::host(format!("reading {}: {e}", path.display())))?;
        Ok(text.trim().to_string())
    }

    /// Write `value` to `rel` without remembering the old value (for `tracing_on`
    /// once it is remembered, and for `trace`).
    pub fn write(&self, rel: &str, value: &str) -> Result<()> {
        let path = self.root.join(rel);
        fs::write(&path, value)
            .map_err(|e| Error::host(format!("writing {value} to {}: {e}", path.display())))
    }

    /// Set `rel` to `value`, remembering the old value.
    pub fn set(&mut self, rel: &str, value: &str) -> Result<()> {
        let mut old = self.read(rel)?;
        // `7 (expanded: 1408)`: the buffer is not allocated yet; 1408 is its size. tracefs
        // cannot free it again, so restoring leaves it allocated at that size (which the
        // kernel rounds up to whole sub-buffer pages).
        if let Some(expanded) = old.split_once("(expanded: ") {
            old = expanded.1.trim_end_matches(')').to_string();
        }
        let path = self.root.join(rel);
        self.journal.record(Change::Setting {
            path: path.clone(),
            original: old.clone(),
        })?;
        // Remembered before the write: a write that fails half way is put back too.
        self.changed.push((path, old));
        self.write(rel, value)
    }

    /// Empty the ring buffer (its contents cannot be restored).
    pub fn clear(&self) -> Result<()> {
        self.write("trace", "")
    }

    /// Ready a capture: tracing off, the ring buffer emptied and sized to `buffer_kb` KiB
    /// per CPU, and thread group ids recorded where the kernel can, so that threads map
    /// to their process.
    pub fn prepare(&mut self, buffer_kb: u64) -> Result<()> {
        self.set("tracing_on", "0")?;
        self.clear()?;
        self.set("buffer_size_kb", &buffer_kb.to_string())?;
        if self.has("options/record-tgid") {
            self.set("options/record-tgid", "1")?;
        }
        Ok(())
    }

    /// `trace_pipe`, opened without blocking (its reader also watches the clock and the
    /// workload), and its path.
    pub fn open_pipe(&self) -> Result<(File, PathBuf)> {
        let path = self.root.join("trace_pipe");
        let pipe = OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NONBLOCK)
            .open(&path)
            .map_err(|e| Error::host(format!("opening {}: {e}", path.display())))?;
        Ok((pipe, path))
    }
}

impl Tracefs {
    /// Put every setting back, newest first, then unmount tracefs if it was mounted
    /// here; what could not be put back (it stays in the journal). Once only: a second
    /// call finds nothing to do.
    pub fn restore(&mut self) -> Vec<String> {
        let mut failures = Vec::new();
        // Stop first, so restoring does not itself fill the buffer.
        if !self.changed.is_empty() {
            let _ = fs::write(self.root.join("tracing_on"), "0");
        }
        for (path, old) in self.changed.drain(..).rev() {
            let change = Change::Setting {
                path: path.clone(),
                original: old.clone(),
            };
            match change.undo().and_then(|()| self.journal.forget(&change)) {
                Ok(()) => {}
                Err(e) => failures.push(format!("restoring {} to {old}: {e}", path.display())),
            }
        }
        if self.mounted_here {
            self.mounted_here = false;
            let change = Change::Mount {
                path: self.root.clone(),
            };
            if let Err(e) = change.undo().and_then(|()| self.journal.forget(&change)) {
                failures.push(format!("unmounting {}: {e}", self.root.display()));
            }
        }
        failures
    }
}

impl Drop for Tracefs {
    /// On an error's way out; a normal end calls [`Tracefs::restore`] and reports.
    fn drop(&mut self) {
        for f in self.restore() {
            note(&format!("could not undo: {f}; it stays in the state file"));
        }
    }
}
