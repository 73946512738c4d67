//! Writing outputs without losing anyone's file.
//!
//! Every output is first written under a temporary name that is created exclusively in
//! the target's own directory (`O_CREAT | O_EXCL`, `mkdir`: a link, a file or a folder
//! already standing at that name is never opened, followed or reused), then put in place
//! by a rename. So a kill at any moment leaves the target either as it was or whole and
//! new, and a link planted at any path mobmem writes is replaced at most, never written
//! through.
//!
//! A target that already exists is replaced only when it is mobmem's own ([`Owned`]): a
//! report folder with its marker file, or a file mobmem wrote there before. Anything else
//! is refused with an error that says what to do, unless the caller passes
//! [`Existing::KeepAside`] (`--force` on the command line): then the foreign target is
//! renamed to `NAME.replaced-N` beside it, kept whole, and the output takes its name.
//! mobmem removes only what it created: its own temporary names and its own earlier
//! reports.

use std::ffi::OsString;
use std::fs::{self, File, OpenOptions};
use std::io::{self, ErrorKind};
use std::path::{Path, PathBuf};

use rustix::fs::{renameat_with, RenameFlags, CWD};

use crate::{Error, Result};

/// What to do with a target that exists and is not mobmem's own.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Existing {
    /// Stop with an error; nothing is written.
    #[default]
    Refuse,
    /// Rename it to `NAME.replaced-N` beside the target (kept whole), then write.
    KeepAside,
}

/// How an output was put in place.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Placed {
    /// Nothing stood at the target.
    New,
    /// mobmem's own earlier output was replaced.
    Replaced,
    /// A foreign target was kept under this name.
    KeptAside(PathBuf),
}

/// Whether the thing at a path is mobmem's own output, which it may replace.
pub type Owned = fn(&Path) -> bool;

/// Tries a few names before giving up: only another writer racing for the same target
/// (or stale temporary names left by killed runs) can use them up.
const MAX_NAME_TRIES: u32 = 1000;

/// Set to N, mobmem kills itself with SIGKILL at the N-th step of writing its outputs
/// (a file or folder created, a file written, a rename, an exchange, a removal): how
/// the tests kill a run at every step of writing a report, rather than at times that
/// happen to fall between steps.
pub const KILL_AT_STEP_ENV: &str = "MOBMEM_TEST_KILL_AT_OUTPUT_STEP";

/// One step of writing outputs done (see [`KILL_AT_STEP_ENV`]).
fn step() {
    use std::sync::atomic::{AtomicU64, Ordering};
    use std::sync::OnceLock;
    static KILL_AT: OnceLock<Option<u64>> = OnceLock::new();
    static STEPS: AtomicU64 = AtomicU64::new(0);
    let kill_at = KILL_AT.get_or_init(|| std::env::var(KILL_AT_STEP_ENV).ok()?.parse().ok());
    if let Some(at) = *kill_at {
        if STEPS.fetch_add(1, Ordering::SeqCst) + 1 == at {
            let _ = rustix::process::kill_process(
                rustix::process::getpid(),
                rustix::process::Signal::KILL,
            );
        }
    }
}

/// The `n`th candidate temporary name for `target`: `NAME.partial`, `NAME.partial-2`...
/// for a file (kept there when an output is cut short, to be looked at); the same with a
/// leading dot for a folder, which is never kept.
fn temp_name(target: &Path, n: u32, hidden: bool) -> PathBuf {
    let mut name = OsString::from(if hidden { "." } else { "" });
    name.push(target.file_name().unwrap_or_else(|| "output".as_ref()));
    name.push(".partial");
    if n > 1 {
        name.push(format!("-{n}"));
    }
    target.with_file_name(name)
}

/// Creates a file that did not exist at `path`, without following a link there.
pub fn create_new(path: &Path) -> Result<File> {
    let file = OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(path)
        .map_err(|e| Error::io(path, e))?;
    step();
    Ok(file)
}

/// Writes `bytes` to a new file at `path` (see [`create_new`]).
pub fn write_new(path: &Path, bytes: &[u8]) -> Result<()> {
    use std::io::Write;
    let mut file = create_new(path)?;
    file.write_all(bytes).map_err(|e| Error::io(path, e))?;
    step();
    Ok(())
}

/// A fresh temporary file beside `target`, created exclusively; returns its name.
pub fn create_temp_file(target: &Path) -> Result<(PathBuf, File)> {
    for n in 1..=MAX_NAME_TRIES {
        let temp = temp_name(target, n, false);
        match OpenOptions::new().write(true).create_new(true).open(&temp) {
            Ok(file) => {
                step();
                return Ok((temp, file));
            }
            Err(e) if e.kind() == ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(Error::io(&temp, e)),
        }
    }
    Err(names_used_up(target, false))
}

/// The file in a temporary folder that names the process writing it, so that a later
/// run can tell a folder left by a killed run from one being written.
pub const WRITER_FILE: &str = ".mobmem-writer";

/// A fresh temporary folder beside `target`, created exclusively. Removed with everything
/// in it when the guard is dropped, unless [`TempDir::place`] put it in place. Folders
/// of `target` that killed runs of mobmem left (see [`remove_stale_temp_dirs`]) are
/// removed first.
pub fn create_temp_dir(target: &Path) -> Result<TempDir> {
    remove_stale_temp_dirs(target);
    for n in 1..=MAX_NAME_TRIES {
        let temp = temp_name(target, n, true);
        match fs::create_dir(&temp) {
            Ok(()) => {
                step();
                let dir = TempDir { path: Some(temp) };
                write_new(
                    &dir.path().join(WRITER_FILE),
                    Writer::this().line().as_bytes(),
                )?;
                return Ok(dir);
            }
            Err(e) if e.kind() == ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(Error::io(&temp, e)),
        }
    }
    Err(names_used_up(target, true))
}

/// Removes the temporary folders of `target` whose writer file names a process that no
/// longer runs: what a run of mobmem killed while writing left. A folder without that
/// file (or with a link there), or whose writer still runs, is left alone. Best effort:
/// a folder that cannot be removed stays, and takes no name from the next run but its
/// own.
pub fn remove_stale_temp_dirs(target: &Path) {
    let this_boot = Writer::boot_id();
    for n in 1..=MAX_NAME_TRIES {
        let temp = temp_name(target, n, true);
        // Every name is looked at: a folder put in place leaves a gap in the sequence.
        if !fs::symlink_metadata(&temp).is_ok_and(|m| m.is_dir()) {
            continue;
        }
        let writer_path = temp.join(WRITER_FILE);
        let is_file = fs::symlink_metadata(&writer_path).is_ok_and(|m| m.is_file());
        let writer = is_file
            .then(|| fs::read_to_string(&writer_path).ok())
            .flatten()
            .and_then(|text| Writer::parse(&text));
        if writer.is_some_and(|w| !w.is_running(&this_boot)) {
            let _ = fs::remove_dir_all(&temp);
        }
    }
}

/// The process writing a temporary folder: its pid, when it started (clock ticks after
/// boot, `/proc/PID/stat` field 22: a pid reused by another process starts later) and
/// the boot it ran in.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Writer {
    pid: u32,
    start: u64,
    boot: String,
}

impl Writer {
    fn this() -> Writer {
        let pid = std::process::id();
        Writer {
            pid,
            start: Self::start_of(pid).unwrap_or(0),
            boot: Self::boot_id(),
        }
    }

    fn line(&self) -> String {
        format!("pid {} start {} boot {}\n", self.pid, self.start, self.boot)
    }

    fn parse(text: &str) -> Option<Writer> {
        let words: Vec<&str> = text.split_whitespace().collect();
        match words[..] {
            ["pid", pid, "start", start, "boot", boot] => Some(Writer {
                pid: pid.parse().ok()?,
                start: start.parse().ok()?,
                boot: boot.to_string(),
            }),
            _ => None,
        }
    }

    /// Whether the writer still runs; one of an earlier boot does not.
    fn is_running(&self, this_boot: &str) -> bool {
        self.boot == this_boot && Self::start_of(self.pid) == Some(self.start)
    }

    /// When process `pid` started, if it runs.
    fn start_of(pid: u32) -> Option<u64> {
        let stat = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
        // The command name (field 2) may hold spaces and parentheses: count from its end.
        let after_name = &stat[stat.rfind(')')? + 1..];
        after_name.split_whitespace().nth(19)?.parse().ok()
    }

    fn boot_id() -> String {
        fs::read_to_string("/proc/sys/kernel/random/boot_id")
            .map(|s| s.trim().to_string())
            .unwrap_or_default()
    }
}

fn names_used_up(target: &Path, hidden: bool) -> Error {
    Error::config(
        target.display().to_string(),
        format!(
            "no free temporary name beside it ({} of them exist, left by runs that were \
             killed: remove them)",
            temp_name(target, 1, hidden).display()
        ),
    )
}

/// A folder this process created, removed unless put in place.
#[derive(Debug)]
pub struct TempDir {
    path: Option<PathBuf>,
}

impl TempDir {
    pub fn path(&self) -> &Path {
        self.path.as_deref().unwrap_or_else(|| Path::new(""))
    }

    /// Puts the folder at `target` (see [`put_in_place`]).
    pub fn place(mut self, target: &Path, owned: Owned, existing: Existing) -> Result<Placed> {
        // Not part of the output. A kill between this and the rename leaves a folder no
        // later run removes: a rare leftover, never a removal of another run's folder.
        let writer = self.path().join(WRITER_FILE);
        fs::remove_file(&writer).map_err(|e| Error::io(&writer, e))?;
        step();
        let temp = self.path.take().unwrap_or_default();
        let placed = put_in_place(&temp, target, owned, existing);
        if placed.is_err() {
            // Still ours and not in place: the guard removes it.
            self.path = Some(temp);
        }
        placed
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        if let Some(path) = self.path.take() {
            // Best effort: drop cannot report, and the folder is only a temporary one.
            let _ = fs::remove_dir_all(path);
        }
    }
}

/// Renames `temp` (a file or folder this process created) to `target`. A target that
/// does not exist is taken; mobmem's own (`owned`) is replaced by an atomic exchange (a
/// folder) or rename (a file), then removed; a foreign one is refused or kept aside, as
/// `existing` says.
pub fn put_in_place(
    temp: &Path,
    target: &Path,
    owned: Owned,
    existing: Existing,
) -> Result<Placed> {
    match fs::symlink_metadata(target) {
        Err(e) if e.kind() == ErrorKind::NotFound => {
            rename_no_replace(temp, target)?;
            Ok(Placed::New)
        }
        Err(e) => Err(Error::io(target, e)),
        Ok(meta) if !meta.file_type().is_symlink() && owned(target) => {
            if meta.is_dir() {
                replace_dir(temp, target)?;
            } else {
                fs::rename(temp, target).map_err(|e| Error::io(target, e))?;
                step();
            }
            Ok(Placed::Replaced)
        }
        Ok(meta) => match existing {
            Existing::Refuse => Err(refusal(target, &meta, "")),
            Existing::KeepAside => {
                let aside = keep_aside(target)?;
                rename_no_replace(temp, target)?;
                Ok(Placed::KeptAside(aside))
            }
        },
    }
}

/// Fails, as [`put_in_place`] would, when something that is not mobmem's own stands at
/// `target`; `hint` ends the message (how this command can go on). For checking every
/// output of a command before it writes or runs anything.
pub fn check_replaceable(target: &Path, owned: Owned, hint: &str) -> Result<()> {
    match fs::symlink_metadata(target) {
        Err(e) if e.kind() == ErrorKind::NotFound => Ok(()),
        Err(e) => Err(Error::io(target, e)),
        Ok(meta) if !meta.file_type().is_symlink() && owned(target) => Ok(()),
        Ok(meta) => Err(refusal(target, &meta, hint)),
    }
}

fn refusal(target: &Path, meta: &fs::Metadata, hint: &str) -> Error {
    Error::config(
        target.display().to_string(),
        format!(
            "{} that is not mobmem's own output stands there: nothing was written. Choose \
             another output or move it away{hint}",
            what_stands(meta)
        ),
    )
}

/// What an existing target is, for an error message.
fn what_stands(meta: &fs::Metadata) -> &'static str {
    let kind = meta.file_type();
    if kind.is_symlink() {
        "a symbolic link (never written through)"
    } else if kind.is_dir() {
        "a folder"
    } else if kind.is_file() {
        "a file"
    } else {
        "a special file"
    }
}

/// Replaces mobmem's own folder `target` with `temp`: one atomic exchange, so the target
/// is always either the old folder or the new one; the old one, now at `temp`, is then
/// removed.
fn replace_dir(temp: &Path, target: &Path) -> Result<()> {
    match renameat_with(CWD, temp, CWD, target, RenameFlags::EXCHANGE) {
        Ok(()) => step(),
        // File systems without the exchange: the old folder is moved aside first, so a
        // kill between the two renames leaves it whole under its temporary name.
        Err(e) if e == rustix::io::Errno::INVAL || e == rustix::io::Errno::NOSYS => {
            return replace_dir_by_renames(temp, target);
        }
        Err(e) => return Err(Error::io(target, io::Error::from(e))),
    }
    fs::remove_dir_all(temp).map_err(|e| Error::io(temp, e))?;
    step();
    Ok(())
}

/// [`replace_dir`] on file systems without the exchange: the old folder is moved to a
/// free hidden name first, so a kill between the two renames leaves it whole there.
fn replace_dir_by_renames(temp: &Path, target: &Path) -> Result<()> {
    // A free name: a rename cannot go onto a folder that holds anything.
    let old_path = (2..=MAX_NAME_TRIES)
        .map(|n| temp_name(target, n, true))
        .find(|p| fs::symlink_metadata(p).is_err())
        .ok_or_else(|| names_used_up(target, true))?;
    rename_no_replace(target, &old_path)?;
    fs::rename(temp, target).map_err(|e| Error::io(target, e))?;
    step();
    fs::remove_dir_all(&old_path).map_err(|e| Error::io(&old_path, e))?;
    step();
    Ok(())
}

/// Renames `from` to `to`, failing if anything stands at `to` (no race can make it
/// replace a file that appeared meanwhile).
fn rename_no_replace(from: &Path, to: &Path) -> Result<()> {
    match renameat_with(CWD, from, CWD, to, RenameFlags::NOREPLACE) {
        Ok(()) => {
            step();
            Ok(())
        }
        Err(e) if e == rustix::io::Errno::INVAL || e == rustix::io::Errno::NOSYS => {
            // Without the flag: checked just before, which leaves a window only for a
            // racing writer.
            if fs::symlink_metadata(to).is_ok() {
                return Err(Error::io(to, io::Error::from(ErrorKind::AlreadyExists)));
            }
            fs::rename(from, to).map_err(|e| Error::io(to, e))?;
            step();
            Ok(())
        }
        Err(e) => Err(Error::io(to, io::Error::from(e))),
    }
}

/// Renames a foreign `target` to the first free `NAME.replaced-N` beside it.
fn keep_aside(target: &Path) -> Result<PathBuf> {
    let name = target.file_name().unwrap_or_else(|| "output".as_ref());
    for n in 1..=MAX_NAME_TRIES {
        let mut aside = name.to_os_string();
        aside.push(format!(".replaced-{n}"));
        let aside = target.with_file_name(aside);
        match rename_no_replace(target, &aside) {
            Ok(()) => return Ok(aside),
            Err(Error::Io { error, .. }) if error.kind() == ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
    Err(Error::config(
        target.display().to_string(),
        "no free NAME.replaced-N name beside it",
    ))
}

/// Writes `bytes` to `target` through a temporary file and a rename (see
/// [`put_in_place`]).
pub fn write_file(target: &Path, bytes: &[u8], owned: Owned, existing: Existing) -> Result<Placed> {
    use std::io::Write;
    let (temp, mut file) = create_temp_file(target)?;
    let written = file
        .write_all(bytes)
        .map_err(|e| Error::io(&temp, e))
        .and_then(|()| {
            step();
            put_in_place(&temp, target, owned, existing)
        });
    if written.is_err() {
        let _ = fs::remove_file(&temp);
    }
    written
}

/// Whether `path` is a regular file (not a link) whose first 4 KiB pass `test`: how an
/// earlier output of mobmem's is recognised by its content.
pub fn file_head_is(path: &Path, test: impl Fn(&str) -> bool) -> bool {
    use std::io::Read;
    let mut head = Vec::new();
    any_file(path)
        && crate::input::open(path).is_ok_and(|f| f.take(4096).read_to_end(&mut head).is_ok())
        && test(&String::from_utf8_lossy(&head))
}

/// Fails if `target` is one of `inputs` (the same file, by any name): a command that
/// wrote it would replace what it reads, and the input would be lost if the output
/// came out different (a lossy conversion, a failed run).
pub fn check_not_input(target: &Path, inputs: &[&Path]) -> Result<()> {
    use std::os::unix::fs::MetadataExt;
    let Ok(out) = fs::metadata(target) else {
        return Ok(());
    };
    for input in inputs {
        if fs::metadata(input).is_ok_and(|i| (i.dev(), i.ino()) == (out.dev(), out.ino())) {
            return Err(Error::config(
                target.display().to_string(),
                format!(
                    "is the input {} itself: writing it would replace what is read. Choose \
                     another output",
                    input.display()
                ),
            ));
        }
    }
    Ok(())
}

/// Any regular file: for outputs the user named on the command line, which they expect
/// to be replaced (a link or a folder there is still refused).
pub fn any_file(path: &Path) -> bool {
    fs::symlink_metadata(path).is_ok_and(|m| m.is_file())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn never(_: &Path) -> bool {
        false
    }

    fn always(_: &Path) -> bool {
        true
    }

    #[test]
    fn only_folders_of_killed_writers_are_removed() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("report");
        let dead = {
            let mut child = std::process::Command::new("true").spawn().unwrap();
            child.wait().unwrap();
            Writer {
                pid: child.id(),
                start: 1,
                boot: Writer::boot_id(),
            }
        };
        let earlier_boot = Writer {
            boot: "another-boot".into(),
            ..Writer::this()
        };
        let cases = [
            ("killed", Some(dead.line())),
            ("earlier boot", Some(earlier_boot.line())),
            ("running", Some(Writer::this().line())),
            ("no writer file", None),
            ("unreadable writer", Some("pid x".to_string())),
        ];
        for (n, (_, writer)) in cases.iter().enumerate() {
            let temp = temp_name(&target, n as u32 + 1, true);
            fs::create_dir(&temp).unwrap();
            fs::write(temp.join("user-file"), "kept").unwrap();
            if let Some(line) = writer {
                fs::write(temp.join(WRITER_FILE), line).unwrap();
            }
        }
        // A link at the writer file's name is not read through.
        let linked = temp_name(&target, 6, true);
        fs::create_dir(&linked).unwrap();
        let elsewhere = dir.path().join("elsewhere");
        fs::write(&elsewhere, dead.line()).unwrap();
        std::os::unix::fs::symlink(&elsewhere, linked.join(WRITER_FILE)).unwrap();

        let fresh = create_temp_dir(&target).unwrap();
        let left: Vec<bool> = (1..=6)
            .map(|n| temp_name(&target, n, true).exists())
            .collect();
        // The killed writers' folders are gone, and the new one took the first name.
        assert_eq!(left, [true, false, true, true, true, true], "{cases:?}");
        assert_eq!(fresh.path(), temp_name(&target, 1, true));
        assert!(!fresh.path().join("user-file").exists());
        let line = fs::read_to_string(fresh.path().join(WRITER_FILE)).unwrap();
        assert!(Writer::parse(&line).unwrap().is_running(&Writer::boot_id()));
        // Put in place, the folder no longer holds the writer file.
        fresh.place(&target, never, Existing::Refuse).unwrap();
        assert!(target.is_dir() && !target.join(WRITER_FILE).exists());
    }

    #[test]
    fn a_new_target_is_taken_and_no_temporary_name_is_left() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("out.txt");
        let placed = write_file(&target, b"new", never, Existing::Refuse).unwrap();
        assert_eq!(placed, Placed::New);
        assert_eq!(fs::read(&target).unwrap(), b"new");
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    #[test]
    fn a_foreign_file_is_refused_whole_and_kept_aside_with_force() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("out.txt");
        fs::write(&target, b"theirs").unwrap();
        let e = write_file(&target, b"new", never, Existing::Refuse).unwrap_err();
        assert!(e.to_string().contains("not mobmem's own"), "{e}");
        assert_eq!(fs::read(&target).unwrap(), b"theirs");
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 1);
        let placed = write_file(&target, b"new", never, Existing::KeepAside).unwrap();
        let aside = dir.path().join("out.txt.replaced-1");
        assert_eq!(placed, Placed::KeptAside(aside.clone()));
        assert_eq!(fs::read(&aside).unwrap(), b"theirs");
        assert_eq!(fs::read(&target).unwrap(), b"new");
    }

    #[test]
    fn links_at_the_target_and_the_temporary_name_are_never_written_through() {
        let dir = tempfile::tempdir().unwrap();
        let victim = dir.path().join("victim");
        fs::write(&victim, b"precious").unwrap();
        let target = dir.path().join("out.txt");
        std::os::unix::fs::symlink(&victim, temp_name(&target, 1, false)).unwrap();
        std::os::unix::fs::symlink(&victim, &target).unwrap();
        // A link is never "owned", even where every file would be.
        assert!(write_file(&target, b"new", always, Existing::Refuse).is_err());
        write_file(&target, b"new", always, Existing::KeepAside).unwrap();
        assert_eq!(fs::read(&victim).unwrap(), b"precious");
        assert_eq!(fs::read(&target).unwrap(), b"new");
        assert!(fs::symlink_metadata(&target).unwrap().is_file());
    }

    /// A folder `report` holding the file `name`, and a temporary folder beside it.
    fn folder_and_temp(name: &str, bytes: &[u8]) -> (tempfile::TempDir, PathBuf, TempDir) {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("report");
        fs::create_dir(&target).unwrap();
        fs::write(target.join(name), bytes).unwrap();
        let temp = create_temp_dir(&target).unwrap();
        (dir, target, temp)
    }

    #[test]
    fn without_the_exchange_an_own_folder_is_replaced_by_two_renames() {
        let (dir, target, temp) = folder_and_temp("file", b"old");
        fs::write(temp.path().join("file"), b"new").unwrap();
        fs::remove_file(temp.path().join(WRITER_FILE)).unwrap();
        replace_dir_by_renames(temp.path(), &target).unwrap();
        assert_eq!(fs::read(target.join("file")).unwrap(), b"new");
        let left: Vec<_> = fs::read_dir(dir.path())
            .unwrap()
            .flatten()
            .map(|e| e.file_name())
            .collect();
        assert_eq!(
            left,
            [target.file_name().unwrap()],
            "the old folder is removed"
        );
    }

    #[test]
    fn an_own_folder_is_exchanged_whole_and_the_old_one_removed() {
        let (dir, target, temp) = folder_and_temp("a", b"old");
        fs::write(temp.path().join("a"), b"new").unwrap();
        let placed = temp.place(&target, always, Existing::Refuse).unwrap();
        assert_eq!(placed, Placed::Replaced);
        assert_eq!(fs::read(target.join("a")).unwrap(), b"new");
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    #[test]
    fn a_refused_folder_leaves_no_temporary_folder() {
        let (dir, target, temp) = folder_and_temp("mine.txt", b"user");
        assert!(temp.place(&target, never, Existing::Refuse).is_err());
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 1);
        assert_eq!(fs::read(target.join("mine.txt")).unwrap(), b"user");
    }
}
