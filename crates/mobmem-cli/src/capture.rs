//! `mobmem capture`: record a live Linux workload with ftrace and import it as a trace.
//!
//! Mounts tracefs if needed, enables the page-cache, fault, importance, process and
//! reclaim events this kernel has (`Documentation/trace/ftrace.rst`, `events.rst`), turns
//! on `record-tgid` so threads map to their process, runs the command (or waits for a
//! duration), streams `trace_pipe` into the ftrace importer and writes the trace. Every
//! tracing setting it changed is put back by [`Tracefs`]'s `Drop`, also after an error or
//! Ctrl-C; only the ring buffer's old contents are gone (it is cleared first).

use std::fs::{self, OpenOptions};
use std::io::{ErrorKind, Read, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use clap::Args;

use mobmem::trace::ftrace::{FtraceImporter, ProcessMatch};

use crate::import::{check_output, write_trace, ImportFlags};

/// Where tracefs is found or mounted.
const TRACEFS: &str = "/sys/kernel/tracing";
/// The older place, under debugfs.
const DEBUGFS_TRACING: &str = "/sys/kernel/debug/tracing";

/// Events enabled when the kernel has them (group/name under `events/`).
const EVENTS: [&str; 17] = [
    "filemap/mm_filemap_add_to_page_cache",
    "filemap/mm_filemap_delete_from_page_cache",
    "filemap/mm_filemap_get_pages",
    "filemap/mm_filemap_map_pages",
    "filemap/mm_filemap_fault",
    "oom/oom_score_adj_update",
    "task/task_newtask",
    "task/task_rename",
    "sched/sched_process_fork",
    "sched/sched_process_exit",
    "exceptions/page_fault_user",
    "vmscan/mm_vmscan_kswapd_wake",
    "vmscan/mm_vmscan_direct_reclaim_begin",
    "vmscan/mm_vmscan_direct_reclaim_end",
    "vmscan/mm_vmscan_lru_shrink_inactive",
    "vmscan/mm_vmscan_lru_shrink_active",
    "vmscan/mm_vmscan_write_folio",
];

#[derive(Args)]
pub struct CaptureArgs {
    /// Output trace, .mmt or .csv.
    #[arg(long)]
    out: PathBuf,
    /// Stop after this many seconds (without COMMAND: trace the whole system this long;
    /// with COMMAND: stop it if it runs longer).
    #[arg(long, value_name = "S")]
    duration: Option<f64>,
    #[command(flatten)]
    flags: ImportFlags,
    /// Empty the page cache first (sync, then 3 to /proc/sys/vm/drop_caches), so the
    /// workload's reads are misses the trace sees.
    #[arg(long)]
    drop_caches: bool,
    /// Ring buffer per CPU while capturing, in KiB (restored afterwards).
    #[arg(long, default_value_t = 32768, value_name = "KIB")]
    buffer_kb: u64,
    /// Leave out page_fault_user (anonymous accesses), which can be most of the volume.
    #[arg(long)]
    no_anon_faults: bool,
    /// Also save the raw ftrace text here (importable with `mobmem trace import`).
    #[arg(long, value_name = "FILE")]
    raw: Option<PathBuf>,
    /// Print the import report as JSON.
    #[arg(long)]
    json: bool,
    /// The workload to run; without --foreground marks it (with the processes it starts)
    /// is the foreground app.
    #[arg(last = true, value_name = "COMMAND")]
    command: Vec<String>,
}

/// tracefs, with every setting changed through it remembered and put back on drop, then
/// unmounted if it was mounted here.
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
                .context("running mount to mount tracefs")?;
            if !out.status.success() {
                bail!(
                    "tracefs is not mounted and `mount -t tracefs nodev {TRACEFS}` failed: {} \
                     (capturing needs root, or CAP_SYS_ADMIN, and a kernel with ftrace)",
                    String::from_utf8_lossy(&out.stderr).trim()
                );
            }
            fs.mounted_here = true;
        }
        let probe = fs.root.join("tracing_on");
        if let Err(e) = OpenOptions::new().write(true).open(&probe) {
            bail!(
                "{} is not writable ({e}): capturing needs root (or the tracefs group)",
                probe.display()
            );
        }
        Ok(fs)
    }

    pub fn has(&self, rel: &str) -> bool {
        self.root.join(rel).exists()
    }

    fn read(&self, rel: &str) -> Result<String> {
        let path = self.root.join(rel);
        let text =
            fs::read_to_string(&path).with_context(|| format!("reading {}", path.display()))?;
        Ok(text.trim().to_string())
    }

    fn write(&self, rel: &str, value: &str) -> Result<()> {
        let path = self.root.join(rel);
        fs::write(&path, value).with_context(|| format!("writing {value} to {}", path.display()))
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
    fn clear(&self) -> Result<()> {
        self.write("trace", "")
    }
}

impl Drop for Tracefs {
    fn drop(&mut self) {
        // Stop first, so restoring does not itself fill the buffer.
        let _ = fs::write(self.root.join("tracing_on"), "0");
        for (path, old) in self.changed.drain(..).rev() {
            if let Err(e) = fs::write(&path, &old) {
                eprintln!(
                    "warning: could not restore {} to {old}: {e}",
                    path.display()
                );
            }
        }
        if self.mounted_here {
            match Command::new("umount").arg(&self.root).status() {
                Ok(s) if s.success() => {}
                _ => eprintln!("warning: could not unmount {}", self.root.display()),
            }
        }
    }
}

pub fn run(args: CaptureArgs) -> Result<()> {
    check_output(&args.out)?;
    if args.command.is_empty() && args.duration.is_none() {
        bail!("give a COMMAND after `--`, or --duration S to trace the whole system");
    }
    if let Some(d) = args.duration {
        if !(d.is_finite() && d > 0.0) {
            bail!("--duration must be > 0 seconds");
        }
    }
    let mut options = args.flags.options()?;
    options.exclude_pids.push(std::process::id());

    let interrupted = Arc::new(AtomicBool::new(false));
    {
        let flag = interrupted.clone();
        ctrlc::set_handler(move || flag.store(true, Ordering::SeqCst))
            .context("installing the Ctrl-C handler")?;
    }

    let mut tracefs = Tracefs::open()?;
    tracefs.set("tracing_on", "0")?;
    tracefs.clear()?;
    tracefs.set("buffer_size_kb", &args.buffer_kb.to_string())?;
    if tracefs.has("options/record-tgid") {
        tracefs.set("options/record-tgid", "1")?;
    }
    let mut enabled = Vec::new();
    let mut missing = Vec::new();
    for event in EVENTS {
        if args.no_anon_faults && event.ends_with("page_fault_user") {
            continue;
        }
        let rel = format!("events/{event}/enable");
        if tracefs.has(&rel) {
            tracefs.set(&rel, "1")?;
            enabled.push(event);
        } else {
            missing.push(event);
        }
    }
    eprintln!(
        "tracing {} events at {}{}",
        enabled.len(),
        tracefs.root.display(),
        if missing.is_empty() {
            String::new()
        } else {
            format!(" (this kernel lacks {})", missing.join(", "))
        }
    );
    if !enabled.iter().any(|e| e.starts_with("filemap/")) {
        bail!("this kernel has no filemap trace events: nothing to capture");
    }
    if args.drop_caches {
        let _ = Command::new("sync").status();
        fs::write("/proc/sys/vm/drop_caches", "3")
            .context("writing 3 to /proc/sys/vm/drop_caches")?;
    }

    let pipe_path = tracefs.root.join("trace_pipe");
    let mut pipe = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(&pipe_path)
        .with_context(|| format!("opening {}", pipe_path.display()))?;
    let mut raw = match &args.raw {
        Some(path) => Some(std::io::BufWriter::new(
            fs::File::create(path).with_context(|| format!("creating {}", path.display()))?,
        )),
        None => None,
    };
    tracefs.set("tracing_on", "1")?;
    let started = Instant::now();
    let mut child: Option<Child> = None;
    if !args.command.is_empty() {
        let spawned = Command::new(&args.command[0])
            .args(&args.command[1..])
            .stdin(Stdio::null())
            .spawn()
            .with_context(|| format!("starting {}", args.command[0]))?;
        if options.foreground.is_empty() {
            options.foreground.push(ProcessMatch::Pid(spawned.id()));
        }
        child = Some(spawned);
    }
    let mut importer = FtraceImporter::new(&pipe_path, options);

    let deadline = args.duration.map(|d| started + Duration::from_secs_f64(d));
    let mut chunk = vec![0u8; 1 << 20];
    let mut pending: Vec<u8> = Vec::new();
    let mut stopping = false;
    let mut status = None;
    let mut last_check = Instant::now();
    loop {
        // The pipe may never run dry under a busy workload: look at the clock, the child
        // and Ctrl-C every 100 ms whatever it does.
        if !stopping && last_check.elapsed() >= Duration::from_millis(100) {
            last_check = Instant::now();
            if should_stop(&interrupted, deadline, child.as_mut(), &mut status)? {
                tracefs.write("tracing_on", "0")?;
                stopping = true;
            }
        }
        match pipe.read(&mut chunk) {
            Ok(0) => std::thread::sleep(Duration::from_millis(20)),
            Ok(n) => {
                pending.extend_from_slice(&chunk[..n]);
                if let Some(last) = pending.iter().rposition(|&b| b == b'\n') {
                    for line in pending[..=last].split(|&b| b == b'\n') {
                        if line.is_empty() {
                            continue;
                        }
                        if let Some(out) = raw.as_mut() {
                            out.write_all(line)?;
                            out.write_all(b"\n")?;
                        }
                        importer.push_bytes(line)?;
                    }
                    pending.drain(..=last);
                }
            }
            Err(e) if e.kind() == ErrorKind::WouldBlock => {
                if stopping {
                    break;
                }
                if should_stop(&interrupted, deadline, child.as_mut(), &mut status)? {
                    // Drain what is left, then stop.
                    tracefs.write("tracing_on", "0")?;
                    stopping = true;
                } else {
                    std::thread::sleep(Duration::from_millis(50));
                }
            }
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(e) => return Err(e).with_context(|| format!("reading {}", pipe_path.display())),
        }
    }
    if let Some(mut c) = child {
        if status.is_none() {
            let _ = c.kill();
            status = c.wait().ok();
        }
    }
    // The pipe is closed first, or tracefs would be busy and stay mounted.
    drop(pipe);
    drop(tracefs);
    if let Some(mut out) = raw {
        out.flush()?;
    }
    let seconds = started.elapsed().as_secs_f64();
    if interrupted.load(Ordering::SeqCst) {
        eprintln!("interrupted: writing what was captured");
    }
    let (t, report) = importer.finish();
    eprintln!(
        "captured {} lines in {seconds:.1} s; tracing settings restored",
        report.lines
    );
    write_trace(&args.out, &t, &report, args.json)?;
    if let Some(s) = status {
        if !s.success() {
            eprintln!("warning: {} exited with {s}", args.command[0]);
        }
    }
    Ok(())
}

/// Ctrl-C, the deadline, or the command's end (its status kept).
fn should_stop(
    interrupted: &AtomicBool,
    deadline: Option<Instant>,
    child: Option<&mut Child>,
    status: &mut Option<std::process::ExitStatus>,
) -> Result<bool> {
    if let Some(c) = child {
        if let Some(s) = c.try_wait()? {
            *status = Some(s);
            return Ok(true);
        }
    }
    Ok(interrupted.load(Ordering::SeqCst) || deadline.is_some_and(|d| Instant::now() >= d))
}
