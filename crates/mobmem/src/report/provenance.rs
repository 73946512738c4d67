//! Where a report comes from: the program's version and commit, the command line, the
//! seeds, the date and the machine. Written to `provenance.json` and shown on every page;
//! never in `results.csv` or `claims.json`, which depend on the seeds alone.

use serde::{Deserialize, Serialize};

/// The build, the command, the date and the machine that made a report.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Provenance {
    /// The program's version (`CARGO_PKG_VERSION` of the binary).
    pub version: String,
    /// The git commit the binary was built from, or "unknown" (built outside a checkout).
    pub commit: String,
    /// Whether the checkout had uncommitted changes to tracked files when the binary was
    /// built (null: unknown).
    pub dirty: Option<bool>,
    /// The command line, one argument an entry.
    pub command: Vec<String>,
    /// The keys changed in the experiment file before it ran (`--set`, and a point's of
    /// `--sweep`), as given: `reclaim.swappiness=60`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub overrides: Vec<String>,
    /// The seeds the synthetic workloads ran with (empty: none is synthetic).
    pub seeds: Vec<u64>,
    /// When the command started, UTC, RFC 3339.
    pub date_utc: String,
    /// Worker threads (the results do not depend on them).
    pub threads: usize,
    pub machine: Machine,
    /// The experiments this command wrote, in order (in `DIR/provenance.json`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub experiments: Vec<String>,
}

/// The machine a report was made on.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Machine {
    /// Operating system and kernel, as uname gives them: "Linux 6.1.0-18-amd64 (#1 SMP ...)".
    pub os: String,
    pub arch: String,
    /// The CPU's model name (/proc/cpuinfo), or "unknown".
    pub cpu: String,
    /// Logical CPUs the system has.
    pub cores: usize,
    /// Total memory in bytes (/proc/meminfo), when known.
    pub memory_bytes: Option<u64>,
}

impl Machine {
    /// This machine.
    pub fn this() -> Machine {
        let uname = rustix::system::uname();
        let text = |s: &std::ffi::CStr| s.to_string_lossy().trim().to_string();
        let os = format!(
            "{} {} ({})",
            text(uname.sysname()),
            text(uname.release()),
            text(uname.version())
        );
        let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
        let meminfo = std::fs::read_to_string("/proc/meminfo").unwrap_or_default();
        let (cpu, listed) = crate::host::procfs::parse_cpuinfo(&cpuinfo);
        let cpu = cpu.unwrap_or_else(|| "unknown CPU".into());
        let cores = if listed > 0 {
            listed
        } else {
            std::thread::available_parallelism().map_or(0, |n| n.get())
        };
        Machine {
            os,
            arch: text(uname.machine()),
            cpu,
            cores,
            memory_bytes: parse_meminfo(&meminfo),
        }
    }

    /// One line: "Linux 6.1.0 (...), x86_64; AMD EPYC 7B13, 2 cores; 23.5 GiB memory".
    pub fn describe(&self) -> String {
        let memory = self.memory_bytes.map_or("memory unknown".to_string(), |b| {
            format!("{:.1} GiB memory", b as f64 / (1u64 << 30) as f64)
        });
        format!(
            "{}, {}; {}, {} cores; {memory}",
            self.os, self.arch, self.cpu, self.cores
        )
    }
}

/// `MemTotal` of /proc/meminfo, in bytes.
fn parse_meminfo(text: &str) -> Option<u64> {
    let line = text.lines().find(|l| l.starts_with("MemTotal:"))?;
    let mut words = line["MemTotal:".len()..].split_whitespace();
    let kib: u64 = words.next()?.parse().ok()?;
    Some(kib * 1024)
}

impl Provenance {
    /// The provenance of a command that starts now on this machine.
    pub fn now(
        version: &str,
        commit: &str,
        dirty: Option<bool>,
        command: Vec<String>,
        seeds: Vec<u64>,
    ) -> Provenance {
        Provenance {
            version: version.into(),
            commit: commit.into(),
            dirty,
            command,
            overrides: Vec::new(),
            seeds,
            date_utc: now_utc(),
            threads: rayon::current_num_threads(),
            machine: Machine::this(),
            experiments: Vec::new(),
        }
    }

    /// The command line as a shell would take it back.
    pub fn command_line(&self) -> String {
        self.command
            .iter()
            .map(|a| shell_quote(a))
            .collect::<Vec<_>>()
            .join(" ")
    }

    /// "0.1.0, commit 1234abcd... (with uncommitted changes)".
    pub fn build(&self) -> String {
        let state = match self.dirty {
            Some(true) => " (with uncommitted changes)",
            Some(false) => "",
            None => " (working tree state unknown)",
        };
        format!("mobmem {}, commit {}{state}", self.version, self.commit)
    }

    /// The seeds, "1-5" for a run of consecutive ones, "none" for none.
    pub fn seeds_text(&self) -> String {
        seeds_text(&self.seeds)
    }

    /// Whether `other` comes from the same command (the same line at the same time).
    pub fn same_command(&self, other: &Provenance) -> bool {
        self.command == other.command && self.date_utc == other.date_utc
    }
}

/// Seeds for people: "1-5", "1, 3, 7", "none".
pub fn seeds_text(seeds: &[u64]) -> String {
    match seeds {
        [] => "none (no synthetic workload)".into(),
        [one] => one.to_string(),
        _ if seeds.windows(2).all(|w| w[1] == w[0] + 1) => {
            format!(
                "{}-{} ({} seeds)",
                seeds[0],
                seeds[seeds.len() - 1],
                seeds.len()
            )
        }
        _ => seeds
            .iter()
            .map(u64::to_string)
            .collect::<Vec<_>>()
            .join(", "),
    }
}

/// The present time, UTC, RFC 3339 to the second.
pub fn now_utc() -> String {
    let now = time::OffsetDateTime::now_utc();
    let now = now.replace_nanosecond(0).unwrap_or(now);
    now.format(&time::format_description::well_known::Rfc3339)
        .unwrap_or_else(|_| "unknown".into())
}

/// `arg` quoted for a POSIX shell when it needs to be.
fn shell_quote(arg: &str) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "-_./=:,+@%".contains(c);
    if !arg.is_empty() && arg.chars().all(plain) {
        arg.to_string()
    } else {
        format!("'{}'", arg.replace('\'', r"'\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn meminfo_is_read() {
        assert_eq!(
            parse_meminfo("MemTotal:       24596012 kB\nMemFree: 1 kB\n"),
            Some(24596012 * 1024)
        );
        assert_eq!(parse_meminfo("nothing"), None);
    }

    #[test]
    fn this_machine_and_the_date_are_described() {
        let m = Machine::this();
        assert!(!m.os.is_empty() && !m.arch.is_empty());
        assert!(m.cores >= 1);
        let date = now_utc();
        // 2025-11-25T11:52:34Z
        assert_eq!(date.len(), 20, "{date}");
        assert!(date.ends_with('Z') && date.as_bytes()[10] == b'T', "{date}");
    }

    #[test]
    fn commands_and_seeds_read_back() {
        let p = Provenance {
            command: vec![
                "mobmem".into(),
                "run".into(),
                "my exp.toml".into(),
                "it's".into(),
            ],
            seeds: vec![1, 2, 3, 4, 5],
            ..Provenance::now("0.1.0", "abc", Some(true), vec![], vec![])
        };
        assert_eq!(p.command_line(), r"mobmem run 'my exp.toml' 'it'\''s'");
        assert_eq!(p.seeds_text(), "1-5 (5 seeds)");
        assert_eq!(seeds_text(&[3, 7]), "3, 7");
        assert_eq!(seeds_text(&[2]), "2");
        assert!(p.build().contains("abc (with uncommitted changes)"));
        let json = serde_json::to_string(&p).unwrap();
        assert_eq!(serde_json::from_str::<Provenance>(&json).unwrap(), p);
    }
}
