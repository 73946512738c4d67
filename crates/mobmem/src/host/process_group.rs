//! A command in a process group of its own, so that it and every process it starts can
//! be ended together (and so that the terminal's Ctrl-C reaches only the caller, which
//! then ends the group itself).

use std::os::fd::AsFd;
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use rustix::io::Errno;
use rustix::process::{
    kill_process_group, test_kill_process_group, waitid, Pid, Signal, WaitId, WaitIdOptions,
};

use super::{note, procfs};
use crate::{Error, Result};

/// How long the process group has to end after SIGTERM before SIGKILL.
const GRACE: Duration = Duration::from_secs(2);

/// The command and its process group; the group is ended on drop, or by the watcher when
/// this process dies without dropping it (SIGKILL).
pub struct ProcessGroup {
    child: Child,
    /// The process group's id: the command's pid.
    group: Pid,
    /// Set once the command is reaped.
    status: Option<ExitStatus>,
    /// A shell in a process group of its own that reads its stdin, a pipe from this
    /// process: "done" lets it go; end of file without it (this process died, whatever
    /// killed it) makes it end the command's group, SIGTERM then SIGKILL after [`GRACE`].
    /// None when it could not be started (the command then only ends with this process's
    /// help, as before).
    watcher: Option<Child>,
}

/// The watcher's script: `$1` is the process group to end when its stdin closes unsaid.
const WATCHER: &str = "if read -r word && [ \"$word\" = done ]; then exit 0; fi; \
     kill -s TERM -- \"-$1\" 2>/dev/null; sleep 2; kill -s KILL -- \"-$1\" 2>/dev/null; exit 0";

impl ProcessGroup {
    /// Start `command` (program and arguments) with stdin from /dev/null and its stdout
    /// on this process's stderr: stdout may carry a report that must stay parseable.
    pub fn spawn(command: &[String]) -> Result<ProcessGroup> {
        let Some((program, args)) = command.split_first() else {
            return Err(Error::host("no command to start"));
        };
        let stderr = std::io::stderr()
            .as_fd()
            .try_clone_to_owned()
            .map_err(|e| {
                Error::host(format!("duplicating stderr for the command's output: {e}"))
            })?;
        let child = Command::new(program)
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::from(stderr))
            .process_group(0)
            .spawn()
            .map_err(|e| Error::host(format!("starting {program}: {e}")))?;
        let group = Pid::from_child(&child);
        let watcher = Command::new("/bin/sh")
            .args(["-c", WATCHER, "mobmem-watcher"])
            .arg(group.as_raw_pid().to_string())
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .process_group(0)
            .spawn();
        let watcher = match watcher {
            Ok(w) => Some(w),
            Err(e) => {
                note(&format!(
                    "warning: no watcher for the command ({e}): if mobmem is killed with \
                     SIGKILL, the command keeps running"
                ));
                None
            }
        };
        Ok(ProcessGroup {
            group,
            child,
            status: None,
            watcher,
        })
    }

    /// The command's pid.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Whether the command itself has ended. It is not reaped here (WNOWAIT), so its pid,
    /// which names the process group, cannot be reused before [`ProcessGroup::end`].
    pub fn leader_exited(&self) -> bool {
        if self.status.is_some() {
            return true;
        }
        let options = WaitIdOptions::EXITED | WaitIdOptions::NOHANG | WaitIdOptions::NOWAIT;
        matches!(waitid(WaitId::Pid(self.group), options), Ok(Some(_)))
    }

    /// End what is left of the process group (SIGTERM, then SIGKILL after [`GRACE`]) and
    /// reap the command; returns its exit status. Processes that left the group (setsid,
    /// setpgid) are not reached. Once the command is reaped, a second call only returns
    /// its status again.
    pub fn end(&mut self) -> std::io::Result<ExitStatus> {
        if let Some(status) = self.status {
            return Ok(status);
        }
        let group = self.group;
        if group_alive(group) {
            signal_group(group, Signal::TERM);
            if !wait_gone(group, GRACE) {
                signal_group(group, Signal::KILL);
            }
        }
        let status = self.child.wait();
        // SIGKILL is delivered at once but a process takes a moment to die.
        if !wait_gone(group, GRACE) {
            note(&format!(
                "warning: processes of group {} (the command's) are still alive",
                group.as_raw_pid()
            ));
        }
        self.release_watcher();
        let status = status?;
        self.status = Some(status);
        Ok(status)
    }

    /// Tell the watcher the group was ended here, and reap it.
    fn release_watcher(&mut self) {
        use std::io::Write;
        if let Some(mut watcher) = self.watcher.take() {
            if let Some(mut stdin) = watcher.stdin.take() {
                let _ = stdin.write_all(b"done\n");
            }
            let _ = watcher.wait();
        }
    }
}

impl Drop for ProcessGroup {
    /// An error or a signal never leaves the command (or what it started) running.
    fn drop(&mut self) {
        let _ = self.end();
    }
}

fn signal_group(group: Pid, signal: Signal) {
    // ESRCH (nobody left) is fine.
    let _ = kill_process_group(group, signal);
}

/// Whether a live (not zombie) process is in process group `group`.
fn group_alive(group: Pid) -> bool {
    // Signal 0 finds the group empty (ESRCH) without looking at /proc: the usual answer
    // once the command is reaped.
    if test_kill_process_group(group) == Err(Errno::SRCH) {
        return false;
    }
    // It also counts zombies: the command before it is reaped, and orphans where init
    // (in a container, any program) does not reap them. Those have ended.
    procfs::live_member(group.as_raw_pid())
}

/// Wait up to `grace` for [`group_alive`] to turn false; returns whether it did.
fn wait_gone(group: Pid, grace: Duration) -> bool {
    let deadline = Instant::now() + grace;
    loop {
        if !group_alive(group) {
            return true;
        }
        if Instant::now() >= deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn script(text: &str) -> Vec<String> {
        vec!["sh".into(), "-c".into(), text.into()]
    }

    /// As if this process died with SIGKILL: the watcher's pipe closes without "done",
    /// and the watcher ends the whole group, the command and what it started.
    #[test]
    fn the_watcher_ends_the_group_when_its_pipe_closes_unsaid() {
        let mut g = ProcessGroup::spawn(&script("sleep 60 & sleep 61")).unwrap();
        let group = g.group;
        std::thread::sleep(Duration::from_millis(100));
        assert!(group_alive(group));
        let mut watcher = g.watcher.take().expect("a watcher");
        drop(watcher.stdin.take());
        assert!(watcher.wait().unwrap().success());
        assert!(
            wait_gone(group, Duration::from_secs(10)),
            "the group lives on"
        );
        g.end().unwrap();
    }

    /// Ended here, the group lets its watcher go at once, and the watcher leaves alone
    /// whatever runs after.
    #[test]
    fn ending_the_group_releases_its_watcher() {
        let mut g = ProcessGroup::spawn(&script("sleep 60")).unwrap();
        let watcher_pid = g.watcher.as_ref().expect("a watcher").id();
        g.end().unwrap();
        assert!(g.watcher.is_none());
        // Reaped: no process by that pid is the watcher any more.
        let cmdline = std::fs::read(format!("/proc/{watcher_pid}/cmdline")).unwrap_or_default();
        assert!(!String::from_utf8_lossy(&cmdline).contains("mobmem-watcher"));
    }
}
