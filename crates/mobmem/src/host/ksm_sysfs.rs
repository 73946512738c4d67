//! The real kernel's KSM: `/sys/kernel/mm/ksm/` (Documentation/admin-guide/mm/ksm.rst).
//! Read its counters, change its settings through a [`SettingsGuard`] that writes each
//! original value to the run's [`Journal`] before changing it and puts back every value
//! it changed exactly once (on drop, or earlier through
//! [`SettingsGuard::restore`] or a [`Restorer`] held by a signal handler), and find
//! ksmd's CPU time.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use super::state::{Change, Journal};
use crate::{Error, Result};

/// The standard location.
pub const KSM_DIR: &str = "/sys/kernel/mm/ksm";

/// Counters sampled by [`Sysfs::counters`], in this order.
pub const COUNTERS: [&str; 9] = [
    "pages_shared",
    "pages_sharing",
    "pages_unshared",
    "pages_volatile",
    "full_scans",
    "pages_scanned",
    "ksm_zero_pages",
    "general_profit",
    "pages_to_scan",
];

/// A KSM sysfs directory.
#[derive(Debug, Clone)]
pub struct Sysfs {
    pub dir: PathBuf,
}

impl Sysfs {
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        Sysfs { dir: dir.into() }
    }

    pub fn path(&self, name: &str) -> PathBuf {
        self.dir.join(name)
    }

    pub fn read(&self, name: &str) -> Result<String> {
        let p = self.path(name);
        std::fs::read_to_string(&p)
            .map(|s| s.trim().to_string())
            .map_err(|e| Error::io(&p, e))
    }

    pub fn read_i64(&self, name: &str) -> Result<i64> {
        let text = self.read(name)?;
        text.parse().map_err(|_| {
            Error::format(
                self.path(name),
                crate::Position::Line(1),
                format!("expected a number, found '{text}'"),
            )
        })
    }

    pub fn write(&self, name: &str, value: &str) -> Result<()> {
        let p = self.path(name);
        std::fs::write(&p, value).map_err(|e| Error::io(&p, e))
    }

    pub fn exists(&self, name: &str) -> bool {
        self.path(name).exists()
    }

    /// Why KSM cannot be driven here, or None if it can: the directory and `run` must
    /// exist and `run` must be writable (checked by writing back its current value).
    pub fn unusable_reason(&self) -> Option<String> {
        if !self.dir.is_dir() {
            return Some(format!(
                "{} does not exist (kernel without CONFIG_KSM?)",
                self.dir.display()
            ));
        }
        let run = match self.read("run") {
            Ok(r) => r,
            Err(e) => return Some(format!("cannot read KSM's run: {e}")),
        };
        if let Err(e) = self.write("run", &run) {
            return Some(format!("KSM settings are not writable ({e}); run as root"));
        }
        None
    }

    /// The counters of [`COUNTERS`] that this kernel has (a missing one reads as NaN).
    pub fn counters(&self) -> Vec<(&'static str, f64)> {
        COUNTERS
            .iter()
            .map(|&n| (n, self.read_i64(n).map_or(f64::NAN, |v| v as f64)))
            .collect()
    }
}

/// Changes KSM settings and puts the old values back, exactly once: on
/// [`SettingsGuard::restore`], through a [`Restorer`] (e.g. from a signal handler), or
/// on drop, whichever comes first. `run` is put back first when it was 0 (so ksmd stops
/// before anything else changes) and last otherwise; the rest in reverse order of
/// change. Once restored, the guard refuses further changes, so a change racing with a
/// restore can never be left behind.
#[derive(Debug)]
pub struct SettingsGuard {
    restorer: Restorer,
}

/// A handle that restores a [`SettingsGuard`]'s settings; it does not keep the guard
/// from restoring on drop.
#[derive(Debug, Clone)]
pub struct Restorer {
    sysfs: Sysfs,
    state: Arc<Mutex<GuardState>>,
    journal: Journal,
}

#[derive(Debug, Default)]
struct GuardState {
    /// (name, original value), in order of first change.
    saved: Vec<(String, String)>,
    restored: bool,
}

impl SettingsGuard {
    /// A guard that keeps no journal.
    pub fn new(sysfs: Sysfs) -> Self {
        Self::with_journal(sysfs, &Journal::none())
    }

    /// A guard writing each original value to `journal` before the first change.
    pub fn with_journal(sysfs: Sysfs, journal: &Journal) -> Self {
        SettingsGuard {
            restorer: Restorer {
                sysfs,
                state: Arc::new(Mutex::new(GuardState::default())),
                journal: journal.clone(),
            },
        }
    }

    /// Set `name` to `value`, remembering its value before the first change. Selector
    /// files such as `advisor_mode` ("[none] scan-time") are remembered by their
    /// bracketed choice. An error once the settings have been restored.
    pub fn set(&self, name: &str, value: &str) -> Result<()> {
        let sysfs = &self.restorer.sysfs;
        // Held across the write: a restore waits for it, or it sees the restore.
        let mut state = self.restorer.lock();
        if state.restored {
            return Err(Error::config(
                sysfs.dir.display().to_string(),
                format!("not setting {name}: the KSM settings have already been restored"),
            ));
        }
        let old = sysfs.read(name)?;
        let old = match (old.find('['), old.find(']')) {
            (Some(a), Some(b)) if a < b => old[a + 1..b].to_string(),
            _ => old,
        };
        if !state.saved.iter().any(|(n, _)| n == name) {
            self.restorer
                .journal
                .record(self.restorer.change(name, &old))?;
            state.saved.push((name.to_string(), old));
        }
        sysfs.write(name, value)
    }

    /// Put every changed setting back (the first call only); returns what could not be
    /// restored.
    pub fn restore(&self) -> Vec<String> {
        self.restorer.restore()
    }

    /// A handle for restoring from elsewhere (a signal handler).
    pub fn restorer(&self) -> Restorer {
        self.restorer.clone()
    }

    /// Whether the settings have been restored already (by this guard or a
    /// [`Restorer`]).
    pub fn restored(&self) -> bool {
        self.restorer.restored()
    }

    /// What has been changed and will be restored: (name, original value).
    pub fn changed(&self) -> Vec<(String, String)> {
        self.restorer.lock().saved.clone()
    }
}

impl Restorer {
    fn change(&self, name: &str, original: &str) -> Change {
        Change::Ksm {
            dir: self.sysfs.dir.clone(),
            name: name.to_string(),
            original: original.to_string(),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, GuardState> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Whether the settings have been restored already.
    pub fn restored(&self) -> bool {
        self.lock().restored
    }

    /// Put every changed setting back, if no one has yet; returns what could not be
    /// restored.
    pub fn restore(&self) -> Vec<String> {
        let mut state = self.lock();
        if state.restored {
            return Vec::new();
        }
        state.restored = true;
        let saved = std::mem::take(&mut state.saved);
        let mut order: Vec<&(String, String)> = Vec::new();
        let run = saved.iter().find(|(n, _)| n == "run");
        if let Some(r) = run.filter(|(_, v)| v == "0") {
            order.push(r);
        }
        order.extend(saved.iter().rev().filter(|(n, _)| n != "run"));
        if let Some(r) = run.filter(|(_, v)| v != "0") {
            order.push(r);
        }
        let mut failures = Vec::new();
        for (name, value) in order {
            let written = self.sysfs.write(name, value);
            let forgotten = written.and_then(|()| self.journal.forget(&self.change(name, value)));
            if let Err(e) = forgotten {
                failures.push(format!("{name}={value}: {e}"));
            }
        }
        failures
    }
}

impl Drop for SettingsGuard {
    fn drop(&mut self) {
        for f in self.restore() {
            super::note(&format!("warning: could not restore KSM setting {f}"));
        }
    }
}

/// ksmd's pid and `/proc` directory, or None if no thread is named ksmd.
pub fn ksmd_dir() -> Option<(u32, std::path::PathBuf)> {
    super::procfs::pids().find(|(_, dir)| {
        std::fs::read_to_string(dir.join("comm")).is_ok_and(|c| c.trim() == "ksmd")
    })
}

/// ksmd's CPU time so far, ns (`/proc/PID/schedstat`), or None if ksmd is not found.
pub fn ksmd_cpu_ns() -> Option<u64> {
    let (_, dir) = ksmd_dir()?;
    let text = std::fs::read_to_string(dir.join("schedstat")).ok()?;
    text.split_whitespace().next()?.parse().ok()
}

/// The running kernel's version (major, minor), from `/proc/sys/kernel/osrelease`
/// (what `uname -r` prints).
pub fn kernel_version() -> Option<(u32, u32)> {
    let release = std::fs::read_to_string("/proc/sys/kernel/osrelease").ok()?;
    parse_kernel_version(&release)
}

/// "6.18.44-fc-v669" -> (6, 18).
pub fn parse_kernel_version(release: &str) -> Option<(u32, u32)> {
    let mut parts = release.trim().split(['.', '-']);
    let major = parts.next()?.parse().ok()?;
    let minor = parts.next()?.parse().ok()?;
    Some((major, minor))
}

/// The kernel's timer frequency (CONFIG_HZ) from `/proc/config.gz`, when it is there.
pub fn kernel_hz() -> Option<u32> {
    use std::io::Read as _;
    let file = std::fs::File::open("/proc/config.gz").ok()?;
    let mut text = String::new();
    flate2::read::GzDecoder::new(file)
        .read_to_string(&mut text)
        .ok()?;
    text.lines()
        .find_map(|l| l.strip_prefix("CONFIG_HZ="))
        .and_then(|v| v.trim().parse().ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A KSM directory in a temporary folder, holding `settings`.
    fn fake(settings: &[(&str, &str)]) -> (tempfile::TempDir, Sysfs) {
        let dir = tempfile::tempdir().unwrap();
        let fs = Sysfs::new(dir.path());
        for (name, value) in settings {
            fs.write(name, value).unwrap();
        }
        (dir, fs)
    }

    /// What `names` read now.
    fn values(fs: &Sysfs, names: &[&str]) -> Vec<String> {
        names.iter().map(|n| fs.read(n).unwrap()).collect()
    }

    #[test]
    fn the_guard_restores_every_setting_run_first_when_it_was_off() {
        let (dir, fs) = fake(&[
            ("run", "0"),
            ("pages_to_scan", "100"),
            ("advisor_mode", "[none] scan-time"),
        ]);
        assert!(fs.unusable_reason().is_none());
        {
            let g = SettingsGuard::new(fs.clone());
            for (name, value) in [
                ("pages_to_scan", "40"),
                ("advisor_mode", "scan-time"),
                ("run", "1"),
                ("pages_to_scan", "50"),
            ] {
                g.set(name, value).unwrap();
            }
            assert_eq!(fs.read("pages_to_scan").unwrap(), "50");
            assert_eq!(g.changed().len(), 3);
        }
        assert_eq!(
            values(&fs, &["run", "pages_to_scan", "advisor_mode"]),
            ["0", "100", "none"]
        );
        let missing = Sysfs::new(dir.path().join("nope"));
        assert_eq!(parse_kernel_version("6.18.44-fc-v669\n"), Some((6, 18)));
        assert_eq!(parse_kernel_version("3.4.5"), Some((3, 4)));
        assert_eq!(parse_kernel_version("6"), None);
        assert!(missing
            .unusable_reason()
            .unwrap()
            .contains("does not exist"));
    }

    #[test]
    fn a_restorer_handle_does_not_keep_the_guard_from_restoring_and_restores_once() {
        let (_dir, fs) = fake(&[("run", "0"), ("smart_scan", "1")]);
        let restorer;
        {
            let g = SettingsGuard::new(fs.clone());
            // A signal handler holds one of these for the life of the process.
            restorer = g.restorer();
            g.set("run", "1").unwrap();
            g.set("smart_scan", "0").unwrap();
        }
        // The guard's drop restored although the handle is still alive.
        assert_eq!(values(&fs, &["run", "smart_scan"]), ["0", "1"]);
        assert!(restorer.restored());
        // Someone changes run afterwards: a second restore must not touch it.
        fs.write("run", "1").unwrap();
        assert!(restorer.restore().is_empty());
        assert_eq!(fs.read("run").unwrap(), "1");

        // After an early restore (a signal), the guard refuses to change anything.
        fs.write("run", "0").unwrap();
        let g = SettingsGuard::new(fs.clone());
        g.set("run", "1").unwrap();
        let handler = g.restorer();
        assert!(handler.restore().is_empty());
        assert_eq!(fs.read("run").unwrap(), "0");
        let e = g.set("run", "1").unwrap_err().to_string();
        assert!(e.contains("already been restored"), "{e}");
        assert_eq!(fs.read("run").unwrap(), "0");
    }
}
