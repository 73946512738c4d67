//! Helpers shared by the CLI's integration tests.

use std::io::Write;

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
