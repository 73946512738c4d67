//! The processes of `/proc` (proc(5)): their `stat` lines, their importance
//! (`oom_score_adj`), and whether a process group still has a live member; and the
//! CPU's model from `/proc/cpuinfo`.

use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};

/// `PF_KTHREAD` of `include/linux/sched.h`, in field 9 of /proc/PID/stat.
const PF_KTHREAD: u64 = 0x0020_0000;

/// Every process now in `/proc`: its pid and its directory. A process may be gone by
/// the time its files are read; callers skip it then.
pub fn pids() -> impl Iterator<Item = (u32, PathBuf)> {
    fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|entry| {
            let pid = entry.file_name().to_str()?.parse::<u32>().ok()?;
            Some((pid, entry.path()))
        })
}

/// One process of /proc/PID/stat.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProcStat {
    pub pid: u32,
    pub name: String,
    /// `R`, `S`, `D`, `Z` (zombie), ...
    pub state: u8,
    pub kernel_thread: bool,
}

/// Every process (thread group) now in /proc; those gone while reading are left out.
pub fn processes() -> Vec<ProcStat> {
    pids()
        .filter_map(|(pid, dir)| parse_stat(pid, &fs::read_to_string(dir.join("stat")).ok()?))
        .collect()
}

/// The fields of a /proc/PID/stat line after COMM, STATE first: `PID (COMM) STATE PPID
/// PGRP SESSION TTY TPGID FLAGS ...` (proc(5)). COMM may hold spaces and parentheses, so
/// it ends at the last `)`.
fn fields_after_comm(text: &str) -> Option<std::str::SplitWhitespace<'_>> {
    Some(text.get(text.rfind(')')? + 1..)?.split_whitespace())
}

/// A /proc/PID/stat line, or `None` if it is cut short.
pub fn parse_stat(pid: u32, text: &str) -> Option<ProcStat> {
    let open = text.find('(')?;
    let close = text.rfind(')')?;
    let name = text.get(open + 1..close)?.to_string();
    let fields: Vec<&str> = fields_after_comm(text)?.collect();
    Some(ProcStat {
        pid,
        name,
        state: *fields.first()?.as_bytes().first()?,
        kernel_thread: fields.get(6)?.parse::<u64>().ok()? & PF_KTHREAD != 0,
    })
}

/// STATE and PGRP of a /proc/PID/stat line.
pub fn state_and_group(text: &str) -> Option<(u8, i32)> {
    let mut fields = fields_after_comm(text)?;
    let state = *fields.next()?.as_bytes().first()?;
    let pgrp = fields.nth(1)?.parse().ok()?;
    Some((state, pgrp))
}

/// Whether /proc shows a process of group `group` that is not a zombie; only STATE and
/// PGRP of each /proc/PID/stat are read, into one buffer.
pub fn live_member(group: i32) -> bool {
    let mut text = String::new();
    for (_, dir) in pids() {
        text.clear();
        let read = fs::File::open(dir.join("stat")).and_then(|mut f| f.read_to_string(&mut text));
        // A process gone while reading has ended.
        if read.is_err() {
            continue;
        }
        if let Some((state, pgrp)) = state_and_group(&text) {
            if pgrp == group && !matches!(state, b'Z' | b'X') {
                return true;
            }
        }
    }
    false
}

/// A running process with its importance.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Running {
    pub pid: u32,
    pub name: String,
    pub adj: i16,
}

/// The user processes now running and their oom_score_adj (kernel threads have none
/// that means anything: they are never killed for memory).
pub fn running_processes() -> Vec<Running> {
    processes()
        .into_iter()
        .filter(|p| !p.kernel_thread && p.state != b'Z')
        .filter_map(|p| {
            let adj = read_adj(
                &Path::new("/proc")
                    .join(p.pid.to_string())
                    .join("oom_score_adj"),
            )?;
            Some(Running {
                pid: p.pid,
                name: p.name,
                adj,
            })
        })
        .collect()
}

fn read_adj(path: &Path) -> Option<i16> {
    fs::read_to_string(path)
        .ok()?
        .trim()
        .parse::<i16>()
        .ok()
        .filter(|a| (-1000..=1000).contains(a))
}

/// The CPU model of /proc/cpuinfo's text (the first `model name`, else `Hardware`,
/// `Processor` or `cpu model` as ARM and MIPS kernels write it), if it names one, and
/// the number of `processor` entries.
pub fn parse_cpuinfo(text: &str) -> (Option<String>, usize) {
    let mut model = None;
    let mut fallback = None;
    let mut processors = 0;
    for line in text.lines() {
        let Some((name, value)) = line.split_once(':') else {
            continue;
        };
        let (name, value) = (name.trim(), value.trim());
        match name {
            "processor" => processors += 1,
            "model name" if model.is_none() && !value.is_empty() => model = Some(value.to_string()),
            "Hardware" | "Processor" | "cpu model" if fallback.is_none() && !value.is_empty() => {
                fallback = Some(value.to_string())
            }
            _ => {}
        }
    }
    (model.or(fallback), processors)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpuinfo_names_the_model_on_x86_and_arm() {
        let x86 = "processor\t: 0\nmodel name\t: AMD EPYC 7B13\nprocessor\t: 1\nmodel name\t: AMD EPYC 7B13\n";
        assert_eq!(parse_cpuinfo(x86), (Some("AMD EPYC 7B13".into()), 2));
        let arm =
            "processor\t: 0\nBogoMIPS\t: 38.40\n\nHardware\t: Qualcomm Technologies, Inc SM8150\n";
        assert_eq!(
            parse_cpuinfo(arm),
            (Some("Qualcomm Technologies, Inc SM8150".into()), 1)
        );
        assert_eq!(parse_cpuinfo(""), (None, 0));
    }

    #[test]
    fn stat_lines_with_odd_names() {
        let odd = "42 (a) b (c)) S 1 40 40 0 -1 4194560 0 0";
        let p = parse_stat(42, odd).unwrap();
        assert_eq!(
            (p.name.as_str(), p.state, p.kernel_thread),
            ("a) b (c)", b'S', false)
        );
        assert_eq!(state_and_group(odd), Some((b'S', 40)));
        let k = parse_stat(2, "2 (kthreadd) S 0 0 0 0 -1 2129984 0 0").unwrap();
        assert!(k.kernel_thread);
        assert!(parse_stat(3, "3 (x) S 1").is_none());
        assert_eq!(
            state_and_group("42 (a) b (c)) Z 1 40 40 0 -1 4194560 0 0"),
            Some((b'Z', 40))
        );
        assert_eq!(state_and_group("3 (x) S 1"), None);
    }
}
