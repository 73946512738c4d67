//! tracefs (`Documentation/trace/ftrace.rst`), with every setting changed through it
//! remembered and put back on drop, then unmounted if it was mounted here.

use std::fs::{self, File, OpenOptions};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use super::note;
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
}

impl Tracefs {
    /// Find tracefs, mounting it at /sys/kernel/tracing if it is nowhere; check that it is
    /// writable.
    pub fn open() -> Result<Tracefs> {
        let mut fs = Tracefs {
            root: PathBuf::from(TRACEFS),
            mounted_here: false,
            changed: Vec::new(),
        };
        if Path::new(TRACEFS).join("trace").exists() {
        } else if Path::new(DEBUGFS_TRACING).join("trace").exists() {
            fs.root = PathBuf::from(DEBUGFS_TRACING);
        } else {
            let out = Command::new("mount")
                .args(["-t", "tracefs", "nodev", TRACEFS])
                .output()
                .map_err(|e| Error::host(format!("running mount to mount tracefs: {e}")))?;
            if !out.status.success() {
                return Err(Error::host(format!(
                    "tracefs is not mounted and `mount -t tracefs nodev {TRACEFS}` failed: {} \
                     (capturing needs root, or CAP_SYS_ADMIN, and a kernel with ftrace)",
                    String::from_utf8_lossy(&out.stderr).trim()
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
        self.write(rel, value)?;
        self.changed.push((self.root.join(rel), old));
        Ok(())
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

impl Drop for Tracefs {
    fn drop(&mut self) {
        // Stop first, so restoring does not itself fill the buffer.
        let _ = fs::write(self.root.join("tracing_on"), "0");
        for (path, old) in self.changed.drain(..).rev() {
            if let Err(e) = fs::write(&path, &old) {
                note(&format!(
                    "warning: could not restore {} to {old}: {e}",
                    path.display()
                ));
            }
        }
        if self.mounted_here {
            match Command::new("umount").arg(&self.root).status() {
                Ok(s) if s.success() => {}
                _ => note(&format!(
                    "warning: could not unmount {}",
                    self.root.display()
                )),
            }
        }
    }
}
