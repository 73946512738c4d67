//! `mobmem host restore`: put back what a killed host command left changed, from its
//! state file.

use std::io::Write;
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;

use anyhow::{bail, Result};
use clap::{Args, Subcommand};

use mobmem::host::capture::CaptureLock;
use mobmem::host::state::{self, Journal, Restored};

#[derive(Subcommand)]
pub enum HostCommand {
    /// Put back what a killed `reclaim-validate`, `ksm-validate` or `capture` left
    /// changed.
    ///
    /// Those commands write each change (a setting's value before, a swap device, a zram
    /// device, a memory cgroup, a directory, a mount, a tracing setting) to a state file
    /// before making it, and remove the file once everything is put back. A run ended by
    /// SIGKILL (or the OOM killer) leaves the file behind, and the next run refuses to
    /// start until it is dealt with. This command reads it, undoes every change newest
    /// first, reporting each step, and removes the file only when every undo succeeded;
    /// what failed stays listed, to be retried. It refuses while the run that wrote the
    /// file is still alive. Without a state file there is nothing to do. Undoing a change
    /// that was recorded but never made does nothing.
    Restore(RestoreArgs),
}

#[derive(Args)]
pub struct RestoreArgs {
    /// The state file (default: /run/mobmem/host-state.json for root; otherwise under
    /// $XDG_RUNTIME_DIR/mobmem/, or the temporary directory's mobmem-UID/).
    #[arg(long, value_name = "FILE", default_value_os_t = state::default_path())]
    state_file: PathBuf,
}

pub fn run(command: HostCommand) -> Result<()> {
    match command {
        HostCommand::Restore(args) => restore(args),
    }
}

fn restore(args: RestoreArgs) -> Result<()> {
    let path = &args.state_file;
    // A capture (of an older mobmem, which keeps no state file) changing the same tracing
    // settings finishes first.
    let _lock = CaptureLock::acquire(&AtomicBool::new(false), &|m: &str| crate::note(m))?;
    // A report that cannot fail: a closed stdout must not stop the undos half way.
    let say = |line: String| {
        let _ = writeln!(std::io::stdout(), "{line}");
    };
    let (restored, failures) = state::restore(path, &mut |step| match &step.result {
        Ok(()) => say(format!("ok: {}", step.change.describe())),
        Err(e) => say(format!("FAILED: {}: {e}", step.change.describe())),
    })?;
    match restored {
        Restored::Nothing => say(format!("nothing to restore: no {}", path.display())),
        Restored::Done { command, pid } if failures == 0 => say(format!(
            "restored everything the {command} run (pid {pid}) left; removed {}",
            path.display()
        )),
        Restored::Done { command, pid } => bail!(
            "{failures} change(s) the {command} run (pid {pid}) left could not be put back; \
             they stay listed in {}: fix the cause and run `mobmem host restore` again",
            path.display()
        ),
    }
    Ok(())
}

/// How a host command names, in the messages at its end, what an interrupt stops and
/// what it changed.
pub(crate) struct Wording {
    /// What an interrupt stops ("workers").
    pub(crate) stopped: &'static str,
    /// What the command changed ("KSM settings").
    pub(crate) settings: &'static str,
    /// Said before each change that could not be undone.
    pub(crate) undo_failed: &'static str,
}

/// The end of a host command's changes: report each undo that failed and close
/// `journal`, which removes the state file only if nothing is left to put back. Whether
/// everything was put back.
pub(crate) fn close_journal(journal: &Journal, failures: &[String], wording: &Wording) -> bool {
    for f in failures {
        crate::note(&format!("error: {} {f}", wording.undo_failed));
    }
    let closed = journal.close();
    if let Err(e) = &closed {
        crate::note(&format!("error: {e}"));
    }
    failures.is_empty() && closed.is_ok()
}

/// A host command's outcome once its changes are undone (`restored`: all of them).
/// After an interrupt the process ends here (status 130), saying whether its settings
/// are back; a failed run's error says so when they are not.
pub(crate) fn after_undo<T>(
    outcome: mobmem::Result<T>,
    interrupted: bool,
    restored: bool,
    wording: &Wording,
) -> Result<T> {
    let Wording {
        stopped, settings, ..
    } = wording;
    if interrupted {
        crate::note(&format!(
            "interrupted: {stopped} stopped, {settings} {}",
            if restored {
                "restored"
            } else {
                "NOT all restored"
            }
        ));
        std::process::exit(130);
    }
    match outcome {
        Ok(o) => Ok(o),
        // The undo failures were reported already; the run's own error is the error.
        Err(e) if restored => Err(e.into()),
        Err(e) => bail!("{e}\nand some {settings} could not be restored"),
    }
}
