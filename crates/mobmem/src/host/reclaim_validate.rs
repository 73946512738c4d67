//! The real kernel's reclaim and zram against the simulator's `workingset` policy and
//! zram pool model.
//!
//! For each memory limit, a worker process (this binary, started with `--worker`) runs
//! in a memory cgroup (v1) of that limit a workload of known accesses
//! ([`WorkloadSpec`]): it writes every page of an anonymous region with generated
//! contents, then reads file pages (one `pread` of a page each, files opened with
//! `POSIX_FADV_RANDOM` so that nothing is read ahead) and anonymous pages in a generated
//! order. The run is captured with ftrace as `mobmem capture` does; the simulator then
//! replays the captured trace at the cgroup's memory (its limit less the kernel memory
//! charged to it, measured at the end) and the counters are compared: the cgroup's
//! `workingset_refault_file`/`_anon` and `pgmajfault`, the machine's `pswpout`/`pswpin`,
//! and with zram as swap its `mm_stat` against the zram pool model on the same page
//! contents.
//!
//! A [`KernelSession`] owns what a run changes on the machine: the cgroup, the files
//! written, zram (size, algorithm, swapon) and the worker; tracing settings are put back
//! by [`Tracefs`]. Every change is written to the run's [`Journal`] before it is made
//! (for `mobmem host restore` after a SIGKILL) and undone in reverse order on every way
//! out ([`KernelSession::finish`], also called on drop); a signal handler holding an
//! [`Interrupt`] stops the worker, and the main thread then cleans up.

use std::fs::{self, File};
use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::fs::{FileExt, MetadataExt};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rustix::fs::{fadvise, Advice};

use super::capture::{self, CaptureLock};
use super::note;
use super::state::{self, Change, Journal};
use super::tracefs::Tracefs;
use crate::mm::fs::codec::Codec;
use crate::mm::reclaim::{self, DetailedRun, HighOrderConfig, ReclaimConfig};
use crate::mm::swap::zram_pool::{self, MmStat, ZramPool, ZramPoolStats, PAGE_BYTES};
use crate::trace::ftrace::{file_owner, FtraceImporter, ImportOptions, ProcessMatch};
use crate::trace::{Event, PageId, PageKind, PartialFile, Trace};
use crate::{Check, Error, Result};

/// The memory cgroup v1 hierarchy.
pub const CGROUP_V1_MEMORY: &str = "/sys/fs/cgroup/memory";
/// The zram device used as swap.
pub const ZRAM_DEVICE: &str = "zram0";
/// The event of a cgroup statistics flush: when the kernel's reclaim heuristics see new
/// statistics.
pub const FLUSH_EVENT: &str = "cgroup/cgroup_rstat_locked";
/// Most pages a workload may have of each kind (1 GiB).
pub const MAX_WORKLOAD_PAGES: u32 = 1 << 18;
/// Most accesses of a workload.
pub const MAX_ACCESSES: u32 = 10_000_000;

/// A workload of known accesses: file pages spread over `files` files, an anonymous
/// region, and the order they are accessed in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct WorkloadSpec {
    pub seed: u64,
    pub files: u32,
    pub file_pages: u32,
    pub anon_pages: u32,
    /// Accesses after the anonymous region was written.
    pub accesses: u32,
    /// Share of those accesses that read an anonymous page, percent.
    pub anon_percent: u32,
    /// The hot file pages: the first `hot_percent` % of them...
    pub hot_percent: u32,
    /// ...receive `hot_share_percent` % of the file reads.
    pub hot_share_percent: u32,
}

impl Default for WorkloadSpec {
    /// 16 MiB of files, 8 MiB of anonymous memory, 40 000 accesses.
    fn default() -> Self {
        WorkloadSpec {
            seed: 1,
            files: 4,
            file_pages: 4096,
            anon_pages: 2048,
            accesses: 40_000,
            anon_percent: 10,
            hot_percent: 25,
            hot_share_percent: 70,
        }
    }
}

/// One access of the workload.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// Write the contents of anonymous page `i` (the first touch).
    AnonWrite(u32),
    /// Read anonymous page `i`.
    AnonRead(u32),
    /// Read file page `i` (file `i / pages_per_file`, page `i % pages_per_file`).
    FileRead(u32),
}

impl WorkloadSpec {
    pub fn validate(&self) -> Result<()> {
        let check = Check("reclaim-validate workload");
        if self.files == 0 || self.file_pages < self.files {
            return check.fail(format!(
                "needs at least one file and a page per file, got {} files, {} pages",
                self.files, self.file_pages
            ));
        }
        if self.file_pages > MAX_WORKLOAD_PAGES || self.anon_pages > MAX_WORKLOAD_PAGES {
            return check.fail(format!(
                "at most {MAX_WORKLOAD_PAGES} file and anonymous pages each"
            ));
        }
        if self.accesses > MAX_ACCESSES {
            return check.fail(format!("at most {MAX_ACCESSES} accesses"));
        }
        for (name, v) in [
            ("anon_percent", self.anon_percent),
            ("hot_percent", self.hot_percent),
            ("hot_share_percent", self.hot_share_percent),
        ] {
            check.range(name, v, 0..=100)?;
        }
        if self.anon_percent > 0 && self.anon_pages == 0 {
            return check.fail("anon_percent above 0 needs anonymous pages");
        }
        Ok(())
    }

    pub fn pages_per_file(&self) -> u32 {
        self.file_pages.div_ceil(self.files)
    }

    /// (file, page in it) of file page `i`.
    pub fn file_page(&self, i: u32) -> (u32, u32) {
        (i / self.pages_per_file(), i % self.pages_per_file())
    }

    /// Pages of file `f`.
    pub fn file_len(&self, f: u32) -> u32 {
        let per = self.pages_per_file();
        self.file_pages.saturating_sub(f * per).min(per)
    }

    /// Every access, in order: the anonymous region written page by page, then the
    /// generated reads.
    pub fn steps(&self) -> impl Iterator<Item = Step> + '_ {
        let mut rng = ChaCha8Rng::seed_from_u64(self.seed);
        let hot = (self.file_pages as u64 * self.hot_percent as u64 / 100).max(1) as u32;
        (0..self.anon_pages)
            .map(Step::AnonWrite)
            .chain((0..self.accesses).map(move |_| {
                if rng.gen_range(0..100) < self.anon_percent {
                    Step::AnonRead(rng.gen_range(0..self.anon_pages))
                } else if rng.gen_range(0..100) < self.hot_share_percent {
                    Step::FileRead(rng.gen_range(0..hot))
                } else {
                    Step::FileRead(rng.gen_range(0..self.file_pages))
                }
            }))
    }

    /// The contents of anonymous page `i`: one in 16 pages is filled with one repeated
    /// word (zram's same-filled pages); the others are a random head of 256..2304
    /// bytes then a 64-byte phrase repeated, so that they compress to different sizes
    /// but never so badly that zram stores them whole.
    pub fn anon_contents(&self, i: u32, page: &mut [u8]) {
        let mut rng = ChaCha8Rng::seed_from_u64(self.seed ^ crate::core::mix64(i as u64 + 1));
        if i % 16 == 15 {
            let word: u64 = rng.gen();
            for w in page.chunks_exact_mut(8) {
                w.copy_from_slice(&word.to_le_bytes());
            }
            return;
        }
        let head = rng.gen_range(256..2304).min(page.len());
        rng.fill(&mut page[..head]);
        let mut phrase = [0u8; 64];
        for (k, b) in phrase.iter_mut().enumerate() {
            *b = b'a' + ((crate::core::mix64(self.seed + k as u64) % 26) as u8);
        }
        for (k, b) in page[head..].iter_mut().enumerate() {
            *b = phrase[k % 64];
        }
    }

    /// The contents of page `page` of file `file` (not compared: only read back).
    fn file_contents(&self, file: u32, page: u32, out: &mut [u8]) {
        let mut rng = ChaCha8Rng::seed_from_u64(
            self.seed ^ crate::core::mix64(((file as u64) << 32 | page as u64) + 7),
        );
        rng.fill(out);
    }

    /// The flags the worker command takes for this workload.
    pub fn worker_flags(&self) -> Vec<String> {
        [
            ("--seed", self.seed.to_string()),
            ("--files", self.files.to_string()),
            ("--file-pages", self.file_pages.to_string()),
            ("--anon-pages", self.anon_pages.to_string()),
            ("--accesses", self.accesses.to_string()),
            ("--anon-percent", self.anon_percent.to_string()),
            ("--hot-percent", self.hot_percent.to_string()),
            ("--hot-share-percent", self.hot_share_percent.to_string()),
        ]
        .into_iter()
        .flat_map(|(flag, value)| [flag.to_string(), value])
        .collect()
    }
}

fn file_name(dir: &Path, f: u32) -> PathBuf {
    dir.join(format!("file-{f}"))
}

/// Write the workload's files into `dir` and drop them from the page cache, so that
/// the worker's first read of each page reads it from storage.
pub fn write_files(spec: &WorkloadSpec, dir: &Path) -> Result<()> {
    let mut page = vec![0u8; PAGE_BYTES];
    for f in 0..spec.files {
        let path = file_name(dir, f);
        let mut file = File::create(&path).map_err(|e| Error::io(&path, e))?;
        let mut out = std::io::BufWriter::new(&mut file);
        for p in 0..spec.file_len(f) {
            spec.file_contents(f, p, &mut page);
            out.write_all(&page).map_err(|e| Error::io(&path, e))?;
        }
        out.flush().map_err(|e| Error::io(&path, e))?;
        drop(out);
        file.sync_all().map_err(|e| Error::io(&path, e))?;
        fadvise(&file, 0, None, Advice::DontNeed)
            .map_err(|e| Error::host(format!("fadvise DONTNEED {}: {e}", path.display())))?;
    }
    Ok(())
}

/// The worker's anonymous region: `spec.anon_pages` (at least one) of whole 4 KiB
/// pages, so that the kernel's reclaim and zram see the pages the trace has.
fn anon_region(spec: &WorkloadSpec) -> Result<memmap2::MmapMut> {
    let map = memmap2::MmapMut::map_anon(spec.anon_pages.max(1) as usize * PAGE_BYTES)
        .map_err(|e| Error::host(format!("mapping anonymous memory: {e}")))?;
    let _ = map.advise(memmap2::Advice::NoHugePage);
    Ok(map)
}

/// One line of the worker's to its parent, flushed at once.
fn say(out: &mut dyn Write, line: String) -> Result<()> {
    writeln!(out, "{line}")
        .and_then(|()| out.flush())
        .map_err(|e| Error::host(format!("worker output: {e}")))
}

/// The worker: open the files in `dir` for random reads, map the anonymous region,
/// say `ready ADDRESS` (the region's first byte, hex), wait for `go`, run every step,
/// say `done CHECKSUM`, and return when `input` ends.
pub fn run_worker(
    spec: &WorkloadSpec,
    dir: &Path,
    input: impl Read,
    out: &mut dyn Write,
) -> Result<()> {
    spec.validate()?;
    let mut files = Vec::new();
    for f in 0..spec.files {
        let path = file_name(dir, f);
        let file = File::open(&path).map_err(|e| Error::io(&path, e))?;
        fadvise(&file, 0, None, Advice::Random)
            .map_err(|e| Error::host(format!("fadvise RANDOM {}: {e}", path.display())))?;
        files.push(file);
    }
    let mut map = anon_region(spec)?;
    let mut buf = vec![0u8; PAGE_BYTES];
    say(out, format!("ready {:x}", map.as_ptr() as usize))?;
    let mut input = BufReader::new(input);
    let mut line = String::new();
    input
        .read_line(&mut line)
        .map_err(|e| Error::host(format!("worker input: {e}")))?;
    if line.trim() != "go" {
        return Ok(());
    }
    // ftrace names a task's thread group from a cache it updates when the task is
    // switched out after an event was recorded; a reused pid shows its previous owner's
    // until then, and the capture would give the workload's first faults to that
    // process. A traced fault on a page of its own, then a sleep, makes the worker's own
    // entry before the workload starts.
    let mut warm_up = memmap2::MmapMut::map_anon(2 * PAGE_BYTES)
        .map_err(|e| Error::host(format!("mapping anonymous memory: {e}")))?;
    for k in 0..2 {
        warm_up[k * PAGE_BYTES] = 1;
        std::thread::sleep(Duration::from_millis(2));
    }
    // Unmapped at once, so that they are never swapped beside the workload's pages.
    drop(warm_up);
    let mut checksum = 0u64;
    for step in spec.steps() {
        match step {
            Step::AnonWrite(i) => {
                let at = i as usize * PAGE_BYTES;
                spec.anon_contents(i, &mut map[at..at + PAGE_BYTES]);
            }
            Step::AnonRead(i) => {
                let at = i as usize * PAGE_BYTES;
                checksum = checksum.wrapping_add(std::hint::black_box(map[at + 8]) as u64);
            }
            Step::FileRead(i) => {
                let (f, p) = spec.file_page(i);
                files[f as usize]
                    .read_exact_at(&mut buf, p as u64 * PAGE_BYTES as u64)
                    .map_err(|e| Error::host(format!("reading file {f} page {p}: {e}")))?;
                checksum = checksum.wrapping_add(buf[0] as u64);
            }
        }
    }
    say(out, format!("done {checksum}"))?;
    let mut rest = Vec::new();
    let _ = input.read_to_end(&mut rest);
    drop(map);
    Ok(())
}

/// The worker's probe of the kernel's swap path ([`KernelSession::probe_swap_path`]):
/// map the anonymous region, say `ready ADDRESS`, wait for `go`, write every page, say
/// `written`; then at each `touch` read a byte of every page and say `touched NS` (the
/// time it took); return when `input` ends.
pub fn run_swap_probe(spec: &WorkloadSpec, input: impl Read, out: &mut dyn Write) -> Result<()> {
    spec.validate()?;
    let pages = spec.anon_pages.max(1) as usize;
    let mut map = anon_region(spec)?;
    say(out, format!("ready {:x}", map.as_ptr() as usize))?;
    let mut input = BufReader::new(input);
    let mut line = String::new();
    let mut next = |line: &mut String| -> Result<bool> {
        line.clear();
        let n = input
            .read_line(line)
            .map_err(|e| Error::host(format!("worker input: {e}")))?;
        Ok(n > 0)
    };
    if !next(&mut line)? || line.trim() != "go" {
        return Ok(());
    }
    for i in 0..pages {
        spec.anon_contents(i as u32, &mut map[i * PAGE_BYTES..(i + 1) * PAGE_BYTES]);
    }
    say(out, "written".into())?;
    let mut checksum = 0u64;
    while next(&mut line)? && line.trim() == "touch" {
        let t = Instant::now();
        for i in 0..pages {
            checksum = checksum.wrapping_add(std::hint::black_box(map[i * PAGE_BYTES + 8]) as u64);
        }
        say(out, format!("touched {}", t.elapsed().as_nanos()))?;
    }
    std::hint::black_box(checksum);
    Ok(())
}

/// What the kernel's own swap path costs a page on this host, through zram: reclaim
/// of a memory cgroup (`memory.force_empty`, the same `try_to_free_mem_cgroup_pages`
/// a cgroup's limit runs) and the fault that reads a page back.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct SwapPathCosts {
    /// Reclaiming one anonymous page to zram, ns (the median of the rounds).
    pub reclaim_ns: f64,
    /// A fault that reads one page back from zram, ns (the median of the rounds).
    pub swapin_ns: f64,
    /// Pages swapped out and back in, each round.
    pub pages: u64,
}

/// zram as swap: which device, its algorithm and size.
#[derive(Debug, Clone)]
pub struct ZramOptions {
    /// The device's sysfs directory (/sys/block/zram0).
    pub sysfs: PathBuf,
    pub algorithm: String,
    pub disksize_mib: u64,
}

/// The command that runs [`run_worker`]; the workload's flags and `--dir` are appended.
#[derive(Debug, Clone)]
pub struct WorkerCommand {
    pub program: PathBuf,
    pub args: Vec<String>,
}

#[derive(Debug, Clone)]
pub struct ValidateOptions {
    pub spec: WorkloadSpec,
    /// The cgroup limits tried, MiB.
    pub limits_mib: Vec<u64>,
    /// The cgroup's `memory.swappiness`, and the simulator's.
    pub swappiness: u32,
    /// zram as swap; None: no swap.
    pub zram: Option<ZramOptions>,
    /// The memory cgroup v1 hierarchy.
    pub cgroup_root: PathBuf,
    /// Where the workload's files are written (a directory on a disk file system, not
    /// tmpfs: tmpfs pages are swap-backed, not file pages).
    pub scratch: PathBuf,
    pub worker: WorkerCommand,
    /// Also save the raw ftrace text of each limit here, as `limit-N-mib.ftrace`.
    pub raw_dir: Option<PathBuf>,
    /// The simulator's period of the cgroup statistics flush, ms (the kernel's
    /// `FLUSH_TIME`, 2 s; 0 for exact statistics).
    pub stats_flush_ms: u64,
    /// Untraced runs of the workload after the traced one at each limit, timed
    /// ([`TimedRun`]): tracing every fault slows the traced run, so its time is not the
    /// workload's. 0: none.
    pub timed_runs: u32,
    /// A cgroup v2 hierarchy where each timed run's worker also gets a group of its
    /// own, for its own `memory.pressure` ([`TimedRun::group_stall_us`]).
    pub psi_group_root: Option<PathBuf>,
}

/// Everything checked before the machine is touched.
#[derive(Debug)]
pub struct Plan {
    pub options: ValidateOptions,
    /// The codec standing for zram's algorithm, and a note if it stands for it only
    /// approximately.
    pub codec: Option<(Codec, Option<&'static str>)>,
}

fn read_trimmed(path: &Path) -> Result<String> {
    fs::read_to_string(path)
        .map(|s| s.trim().to_string())
        .map_err(|e| Error::io(path, e))
}

fn write_value(path: &Path, value: &str) -> Result<()> {
    fs::write(path, value)
        .map_err(|e| Error::host(format!("writing {value} to {}: {e}", path.display())))
}

/// The bracketed choice of a selector file (`[lz4] lzo`), or the whole text.
fn selected(text: &str) -> String {
    match (text.find('['), text.find(']')) {
        (Some(a), Some(b)) if a < b => text[a + 1..b].to_string(),
        _ => text.trim().to_string(),
    }
}

impl Plan {
    pub fn new(options: ValidateOptions) -> Result<Plan> {
        options.spec.validate()?;
        if options.limits_mib.is_empty() {
            return Err(Error::config("--limits-mib", "give at least one limit"));
        }
        for &l in &options.limits_mib {
            if !(1..=1 << 20).contains(&l) {
                return Err(Error::config(
                    "--limits-mib",
                    format!("a limit must be 1..=1048576 MiB, got {l}"),
                ));
            }
        }
        if options.swappiness > 200 {
            return Err(Error::config(
                "--swappiness",
                format!("must be 0..=200, got {}", options.swappiness),
            ));
        }
        let limit_file = options.cgroup_root.join("memory.limit_in_bytes");
        if !limit_file.exists() {
            return Err(Error::host(format!(
                "no memory cgroup v1 at {} ({} is missing): nothing was changed",
                options.cgroup_root.display(),
                limit_file.display()
            )));
        }
        if !rustix::process::geteuid().is_root() {
            return Err(Error::host(
                "reclaim-validate changes cgroups, swap and tracing: run it as root; nothing was changed",
            ));
        }
        if !options.scratch.is_dir() {
            return Err(Error::host(format!(
                "{} is not a directory",
                options.scratch.display()
            )));
        }
        // tmpfs pages are swap-backed (anonymous to reclaim), not file pages.
        const TMPFS_MAGIC: u64 = 0x0102_1994;
        if rustix::fs::statfs(&options.scratch).is_ok_and(|s| s.f_type as u64 == TMPFS_MAGIC) {
            return Err(Error::host(format!(
                "{} is on tmpfs, whose pages are not file pages to reclaim: give --scratch on a disk file system",
                options.scratch.display()
            )));
        }
        let codec = match &options.zram {
            None => None,
            Some(z) => {
                if !z.sysfs.join("disksize").exists() {
                    return Err(Error::host(format!(
                        "no zram device at {}: load the zram module, or run with --no-swap; nothing was changed",
                        z.sysfs.display()
                    )));
                }
                let offered = read_trimmed(&z.sysfs.join("comp_algorithm"))?;
                if !offered
                    .split_whitespace()
                    .any(|a| a.trim_matches(['[', ']']) == z.algorithm)
                {
                    return Err(Error::host(format!(
                        "zram offers {offered}, not {}; nothing was changed",
                        z.algorithm
                    )));
                }
                if z.disksize_mib == 0 {
                    return Err(Error::config("--zram-mib", "must be above 0"));
                }
                Some(zram_pool::codec_for(&z.algorithm)?)
            }
        };
        Ok(Plan { options, codec })
    }
}

/// The changes made, undone in reverse order exactly once; each is written to the
/// journal before it is made and dropped from it once undone.
#[derive(Clone, Default)]
struct UndoLog {
    changes: Arc<Mutex<Vec<Change>>>,
    journal: Journal,
}

impl UndoLog {
    /// Write `change` down before it is made.
    fn push(&self, change: Change) -> Result<()> {
        self.journal.record(change.clone())?;
        self.changes
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(change);
        Ok(())
    }

    /// Create the directory `change` names (a scratch folder or a cgroup), written down
    /// first. A path that already exists is refused before anything is written down,
    /// and one that cannot be created is forgotten without an undo: no undo (nor `mobmem
    /// host restore`) ever removes a folder or a cgroup this run did not create.
    fn create_dir(&self, change: Change) -> Result<()> {
        let path = match &change {
            Change::Dir { path } | Change::Cgroup { path } => path.clone(),
            other => return Err(Error::host(format!("not a folder: {}", other.describe()))),
        };
        if fs::symlink_metadata(&path).is_ok() {
            return Err(Error::host(format!(
                "{} already exists and is not this run's: it was left alone",
                path.display()
            )));
        }
        self.push(change.clone())?;
        if let Err(e) = fs::create_dir(&path) {
            self.changes.lock().unwrap_or_else(|e| e.into_inner()).pop();
            let _ = self.journal.forget(&change);
            return Err(Error::io(&path, e));
        }
        Ok(())
    }

    /// Undo every change from `from` on, newest first; what failed.
    fn undo_from(&self, from: usize) -> Vec<String> {
        let mut log = self.changes.lock().unwrap_or_else(|e| e.into_inner());
        let mut failures = Vec::new();
        while log.len() > from {
            let change = log.pop().expect("non-empty");
            if let Err(e) = change.undo().and_then(|()| self.journal.forget(&change)) {
                failures.push(format!("{}: {e}", change.describe()));
            }
        }
        failures
    }

    fn len(&self) -> usize {
        self.changes.lock().unwrap_or_else(|e| e.into_inner()).len()
    }
}

/// The worker, shared with the signal handler.
#[derive(Clone, Default)]
struct WorkerSlot(Arc<Mutex<Option<Child>>>);

impl WorkerSlot {
    fn kill(&self) {
        if let Some(mut child) = self.0.lock().unwrap_or_else(|e| e.into_inner()).take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// What a signal handler holds to stop a [`KernelSession`].
#[derive(Clone)]
pub struct Interrupt {
    interrupted: Arc<AtomicBool>,
    worker: WorkerSlot,
}

impl Interrupt {
    /// Mark the run interrupted and end the worker; the main thread then undoes every
    /// change.
    pub fn stop(&self) {
        self.interrupted.store(true, Ordering::SeqCst);
        self.worker.kill();
    }
}

/// A memory cgroup's `memory.stat` counters that are compared, and its lists.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct CgroupStat {
    pub workingset_refault_file: u64,
    pub workingset_refault_anon: u64,
    pub pgmajfault: u64,
    /// Pages on each list: inactive anon, active anon, inactive file, active file.
    pub lists: [u64; 4],
    pub unevictable: u64,
    /// `swapcached`: pages in memory whose copy in swap is kept (the swap cache).
    pub swap_cached: u64,
    /// `memory.usage_in_bytes`.
    pub usage_bytes: u64,
}

impl CgroupStat {
    fn read(cgroup: &Path) -> Result<CgroupStat> {
        let path = cgroup.join("memory.stat");
        let text = read_trimmed(&path)?;
        let get = |name: &str| -> Result<u64> {
            text.lines()
                .find_map(|l| {
                    let (k, v) = l.split_once(' ')?;
                    (k == name).then(|| v.trim().parse::<u64>().ok())?
                })
                .ok_or_else(|| {
                    Error::host(format!(
                        "{} has no {name}: this kernel's cgroup v1 lacks a counter the comparison needs",
                        path.display()
                    ))
                })
        };
        let page = PAGE_BYTES as u64;
        let usage = read_trimmed(&cgroup.join("memory.usage_in_bytes"))?;
        Ok(CgroupStat {
            workingset_refault_file: get("workingset_refault_file")?,
            workingset_refault_anon: get("workingset_refault_anon")?,
            pgmajfault: get("pgmajfault")?,
            lists: [
                get("inactive_anon")? / page,
                get("active_anon")? / page,
                get("inactive_file")? / page,
                get("active_file")? / page,
            ],
            unevictable: get("unevictable")? / page,
            swap_cached: get("swapcached")? / page,
            usage_bytes: usage
                .parse()
                .map_err(|_| Error::host(format!("memory.usage_in_bytes reads '{usage}'")))?,
        })
    }

    /// Memory charged to the cgroup that is on no LRU list (page tables, slab, the page
    /// cache's tree nodes): what the simulator's memory leaves out.
    pub fn kernel_bytes(&self) -> u64 {
        let lru: u64 = self.lists.iter().sum::<u64>() + self.unevictable;
        self.usage_bytes.saturating_sub(lru * PAGE_BYTES as u64)
    }
}

/// `pswpin` and `pswpout` of /proc/vmstat.
/// Machine-wide counters of `/proc/vmstat`, in the order asked (0 where missing).
fn vmstat<const N: usize>(names: [&str; N]) -> Result<[u64; N]> {
    let text = read_trimmed(Path::new("/proc/vmstat"))?;
    Ok(names.map(|name| {
        text.lines()
            .find_map(|l| {
                let (k, v) = l.split_once(' ')?;
                (k == name).then(|| v.parse::<u64>().ok())?
            })
            .unwrap_or(0)
    }))
}

fn swap_counts() -> Result<(u64, u64)> {
    let [ins, outs] = vmstat(["pswpin", "pswpout"])?;
    Ok((ins, outs))
}

/// An untraced run of the workload: its time, and the memory stall the kernel counted.
#[derive(Debug, Clone, Copy, serde::Serialize)]
pub struct TimedRun {
    /// From `go` to `done`, s.
    pub seconds: f64,
    /// The worker's own group's `memory.pressure` totals over the run, µs (SOME,
    /// FULL); none without a cgroup v2 hierarchy. The machine's `/proc/pressure/memory`
    /// is not the worker's: psi weighs each CPU's stall by that CPU's non-idle time, so
    /// a busy second CPU halves a single thread's stall there.
    pub group_stall_us: Option<[u64; 2]>,
    /// `/proc/pressure/memory` totals over the run, µs (SOME, FULL).
    pub system_stall_us: Option<[u64; 2]>,
    /// Machine-wide pages swapped in and out during the run.
    pub swap_ins: u64,
    pub swap_outs: u64,
}

/// What the kernel did at one limit.
#[derive(Debug)]
pub struct KernelRun {
    pub limit_mib: u64,
    /// The cgroup's counters at the end (it starts empty).
    pub stat: CgroupStat,
    /// Machine-wide pages swapped in and out during the run.
    pub swap_ins: u64,
    pub swap_outs: u64,
    /// zram's mm_stat at the end, less its value before.
    pub mm_stat: Option<MmStat>,
    /// The anonymous pages of the region in swap at the end (`/proc/PID/pagemap`).
    pub swapped_indices: Vec<u32>,
    /// The worker's other pages in swap (its heap and stack): their contents are not
    /// the workload's, so the pool model cannot size them.
    pub other_swapped_pages: u64,
    pub trace: Trace,
    pub worker_pid: u32,
    /// The region's first virtual page.
    pub region_vpn: u64,
    /// The trace's file owners of the workload's files.
    pub file_owners: Vec<u64>,
    pub seconds: f64,
    /// The machine's memory stall over the run, µs (`/proc/pressure/memory` totals,
    /// SOME and FULL); none on a kernel without PSI.
    pub memory_stall_us: Option<[u64; 2]>,
    /// When the cgroup's statistics were flushed.
    pub flushes: FlushClock,
    /// Events ftrace lost.
    pub lost_events: u64,
    /// Machine-wide `workingset_restore_anon` over the run: swap-ins of pages that were
    /// active before eviction, the ones psi counts as a stall (`swap_read_folio`).
    pub anon_restores: u64,
    /// The untraced runs ([`ValidateOptions::timed_runs`]).
    pub timed: Vec<TimedRun>,
}

/// What a run changes on the machine; see the module's description.
pub struct KernelSession {
    undo: UndoLog,
    worker: WorkerSlot,
    interrupted: Arc<AtomicBool>,
    zram_ready: bool,
}

impl KernelSession {
    /// A session writing every change to `journal` before making it.
    pub fn start(journal: &Journal) -> Self {
        KernelSession {
            undo: UndoLog {
                changes: Arc::default(),
                journal: journal.clone(),
            },
            worker: WorkerSlot::default(),
            interrupted: Arc::new(AtomicBool::new(false)),
            zram_ready: false,
        }
    }

    pub fn interrupt(&self) -> Interrupt {
        Interrupt {
            interrupted: self.interrupted.clone(),
            worker: self.worker.clone(),
        }
    }

    pub fn interrupted(&self) -> bool {
        self.interrupted.load(Ordering::SeqCst)
    }

    fn check_interrupt(&self) -> Result<()> {
        if self.interrupted() {
            Err(Error::host("interrupted"))
        } else {
            Ok(())
        }
    }

    /// End the worker and undo every change; what could not be undone.
    pub fn finish(&mut self) -> Vec<String> {
        self.worker.kill();
        self.undo.undo_from(0)
    }

    /// Set zram up as swap: only an unused device (size 0, not swap) is touched.
    fn setup_zram(&mut self, z: &ZramOptions) -> Result<()> {
        let dev = PathBuf::from("/dev").join(
            z.sysfs
                .file_name()
                .ok_or_else(|| Error::host("zram sysfs path has no device name"))?,
        );
        let swaps = read_trimmed(Path::new("/proc/swaps"))?;
        if swaps
            .lines()
            .skip(1)
            .any(|l| l.split_whitespace().next() == dev.to_str())
        {
            return Err(Error::host(format!(
                "{} is already swap; nothing was changed",
                dev.display()
            )));
        }
        if let Some(other) = swaps.lines().nth(1) {
            note(&format!(
                "warning: other swap is active ({}): the kernel may swap there too",
                other.split_whitespace().next().unwrap_or("?")
            ));
        }
        let size = read_trimmed(&z.sysfs.join("disksize"))?;
        if size != "0" {
            return Err(Error::host(format!(
                "{} is in use (disksize {size}); nothing was changed",
                dev.display()
            )));
        }
        let algorithm = selected(&read_trimmed(&z.sysfs.join("comp_algorithm"))?);
        self.undo.push(Change::Zram {
            sysfs: z.sysfs.clone(),
            algorithm,
        })?;
        write_value(&z.sysfs.join("comp_algorithm"), &z.algorithm)?;
        write_value(&z.sysfs.join("disksize"), &format!("{}M", z.disksize_mib))?;
        state::tool("mkswap", &[dev.as_os_str()])?;
        self.undo.push(Change::Swap {
            device: dev.clone(),
        })?;
        state::tool("swapon", &[dev.as_os_str()])
    }

    /// Run the workload at every limit of `plan`; `notes` hears of progress.
    pub fn drive(&mut self, plan: &Plan, notes: &dyn Fn(&str)) -> Result<Vec<KernelRun>> {
        let _lock = CaptureLock::acquire(&self.interrupted, notes)?;
        if let Some(z) = &plan.options.zram {
            if !self.zram_ready {
                self.setup_zram(z)?;
                self.zram_ready = true;
            }
        }
        let mut runs = Vec::new();
        for (k, &limit) in plan.options.limits_mib.iter().enumerate() {
            self.check_interrupt()?;
            notes(&format!("limit {limit} MiB: running the workload"));
            let mark = self.undo.len();
            let run = self.run_limit(plan, k, limit);
            // Files and cgroup of this limit go now, whatever happened.
            self.worker.kill();
            let failures = self.undo.undo_from(mark);
            // Both are reported when the run failed and so did its undo.
            let undo = || format!("could not undo: {}", failures.join("; "));
            match run {
                Ok(run) if failures.is_empty() => runs.push(run),
                Ok(_) => return Err(Error::host(undo())),
                Err(e) if failures.is_empty() => return Err(e),
                Err(e) => return Err(Error::host(format!("{e}; and {}", undo()))),
            }
        }
        Ok(runs)
    }

    fn run_limit(&mut self, plan: &Plan, k: usize, limit_mib: u64) -> Result<KernelRun> {
        let options = &plan.options;
        let spec = &options.spec;
        let tag = format!("mobmem-reclaim-{}-{k}", std::process::id());
        let dir = options.scratch.join(&tag);
        self.undo.create_dir(Change::Dir { path: dir.clone() })?;
        write_files(spec, &dir)?;
        let mut file_owners = Vec::new();
        for f in 0..spec.files {
            let path = file_name(&dir, f);
            let meta = fs::metadata(&path).map_err(|e| Error::io(&path, e))?;
            let dev = meta.dev();
            file_owners.extend(file_owner(
                rustix::fs::major(dev),
                rustix::fs::minor(dev),
                meta.ino(),
            ));
        }
        let cgroup = options.cgroup_root.join(&tag);
        self.undo.create_dir(Change::Cgroup {
            path: cgroup.clone(),
        })?;
        write_value(
            &cgroup.join("memory.limit_in_bytes"),
            &(limit_mib << 20).to_string(),
        )?;
        write_value(
            &cgroup.join("memory.swappiness"),
            &options.swappiness.to_string(),
        )?;

        let StartedWorker {
            pid,
            mut stdin,
            mut lines,
            address,
        } = self.start_worker(options, &dir, &[])?;
        // Into the cgroup before it touches anything: what it allocated so far stays
        // charged to where it was.
        write_value(&cgroup.join("cgroup.procs"), &pid.to_string())?;
        let stat0 = CgroupStat::read(&cgroup)?;
        let (in0, out0) = swap_counts()?;
        let [restores0] = vmstat(["workingset_restore_anon"])?;
        let mm0 = match &options.zram {
            Some(z) => Some(MmStat::parse(&read_trimmed(&z.sysfs.join("mm_stat"))?)?),
            None => None,
        };

        let mut tracefs = Tracefs::open(&self.undo.journal)?;
        tracefs.prepare(32768)?;
        for event in capture::EVENTS.iter().chain(&[FLUSH_EVENT]) {
            let rel = format!("events/{event}/enable");
            if tracefs.has(&rel) {
                tracefs.set(&rel, "1")?;
            }
        }
        for needed in ["filemap/mm_filemap_get_pages", "exceptions/page_fault_user"] {
            if !tracefs.has(&format!("events/{needed}/enable")) {
                return Err(Error::host(format!(
                    "this kernel has no {needed} event: the workload's accesses cannot be captured"
                )));
            }
        }
        let (mut pipe, pipe_path) = tracefs.open_pipe()?;
        let mut importer = FtraceImporter::new(
            &pipe_path,
            ImportOptions {
                foreground: vec![ProcessMatch::Pid(pid)],
                marked_only: true,
                exclude_pids: vec![std::process::id()],
                ..ImportOptions::default()
            },
        );
        importer.running_process(pid, "mobmem-worker", 0);
        let mut raw = match &options.raw_dir {
            Some(d) => Some(PartialFile::create(
                &d.join(format!("limit-{limit_mib}-mib.ftrace")),
            )?),
            None => None,
        };
        tracefs.set("tracing_on", "1")?;
        let stall0 = memory_stall_us();
        let started = Instant::now();
        let done = Arc::new(AtomicBool::new(false));
        let said = Arc::new(Mutex::new(String::new()));
        {
            let (done, said) = (done.clone(), said.clone());
            std::thread::spawn(move || {
                let line = lines.next().and_then(|l| l.ok()).unwrap_or_default();
                *said.lock().unwrap_or_else(|e| e.into_inner()) = line;
                done.store(true, Ordering::SeqCst);
            });
        }
        writeln!(stdin, "go")
            .and_then(|()| stdin.flush())
            .map_err(|e| Error::host(format!("starting the workload: {e}")))?;
        let interrupted = self.interrupted.clone();
        let memory_hierarchy = memory_hierarchy_id();
        let cgroup_id = fs::metadata(&cgroup)
            .map_err(|e| Error::io(&cgroup, e))?
            .ino();
        let region = address..address + spec.anon_pages as u64 * PAGE_BYTES as u64;
        let mut clock = FlushClock::default();
        let mut observe = |line: &[u8]| {
            clock.observe(line, memory_hierarchy, cgroup_id, &region);
        };
        capture::stream(
            &mut pipe,
            &pipe_path,
            &tracefs,
            &mut importer,
            raw.as_mut(),
            Some(&mut observe),
            &|| done.load(Ordering::SeqCst) || interrupted.load(Ordering::SeqCst),
        )?;
        let seconds = started.elapsed().as_secs_f64();
        let memory_stall_us = match (stall0, memory_stall_us()) {
            (Some(a), Some(b)) => Some([b[0].saturating_sub(a[0]), b[1].saturating_sub(a[1])]),
            _ => None,
        };
        drop(pipe);
        let failures = tracefs.restore();
        if !failures.is_empty() {
            return Err(Error::host(format!(
                "could not undo: {}",
                failures.join("; ")
            )));
        }
        self.check_interrupt()?;
        if let Some(r) = raw {
            r.commit()?;
        }
        let said = said.lock().unwrap_or_else(|e| e.into_inner()).clone();
        if !said.starts_with("done") {
            return Err(Error::host(format!(
                "the worker ended before its workload did (said '{said}'; killed by the OOM killer? \
                 without swap, the anonymous pages must fit in the limit)"
            )));
        }
        // Read while the worker still holds its pages.
        let stat1 = CgroupStat::read(&cgroup)?;
        let (in1, out1) = swap_counts()?;
        let [restores1] = vmstat(["workingset_restore_anon"])?;
        let mm_stat = match (&options.zram, mm0) {
            (Some(z), Some(m0)) => {
                let m1 = MmStat::parse(&read_trimmed(&z.sysfs.join("mm_stat"))?)?;
                Some(MmStat {
                    orig_data_size: m1.orig_data_size.saturating_sub(m0.orig_data_size),
                    compr_data_size: m1.compr_data_size.saturating_sub(m0.compr_data_size),
                    mem_used_total: m1.mem_used_total.saturating_sub(m0.mem_used_total),
                    same_pages: m1.same_pages.saturating_sub(m0.same_pages),
                    huge_pages: m1.huge_pages.saturating_sub(m0.huge_pages),
                })
            }
            _ => None,
        };
        let swapped_indices = swapped_pages(pid, address, spec.anon_pages)?;
        let other_swapped_pages = swapped_total(pid)?.saturating_sub(swapped_indices.len() as u64);
        drop(stdin);
        self.worker.kill();
        let (trace, report) = importer.finish();
        let stat = CgroupStat {
            workingset_refault_file: stat1.workingset_refault_file
                - stat0
                    .workingset_refault_file
                    .min(stat1.workingset_refault_file),
            workingset_refault_anon: stat1.workingset_refault_anon
                - stat0
                    .workingset_refault_anon
                    .min(stat1.workingset_refault_anon),
            pgmajfault: stat1.pgmajfault - stat0.pgmajfault.min(stat1.pgmajfault),
            ..stat1
        };
        let mut timed = Vec::new();
        if options.timed_runs > 0 {
            let group = match &options.psi_group_root {
                Some(root) => {
                    let group = root.join(&tag);
                    self.undo.create_dir(Change::Cgroup {
                        path: group.clone(),
                    })?;
                    Some(group)
                }
                None => None,
            };
            for _ in 0..options.timed_runs {
                self.check_interrupt()?;
                timed.push(self.timed_run(options, &dir, &cgroup, group.as_deref())?);
            }
        }
        Ok(KernelRun {
            limit_mib,
            stat,
            swap_ins: in1.saturating_sub(in0),
            swap_outs: out1.saturating_sub(out0),
            mm_stat,
            swapped_indices,
            other_swapped_pages,
            trace,
            worker_pid: pid,
            region_vpn: address / PAGE_BYTES as u64,
            file_owners,
            seconds,
            memory_stall_us,
            flushes: clock,
            lost_events: report.lost_events,
            anon_restores: restores1.saturating_sub(restores0),
            timed,
        })
    }

    /// Measure [`SwapPathCosts`]: a worker in a memory cgroup of its own (no limit)
    /// writes the workload's anonymous pages; each of `rounds` rounds reclaims the
    /// cgroup (every page goes to zram, which is set up first) and times the worker
    /// reading a byte of every page back.
    pub fn probe_swap_path(&mut self, plan: &Plan, rounds: u32) -> Result<SwapPathCosts> {
        let options = &plan.options;
        let Some(z) = &options.zram else {
            return Err(Error::host("the swap path needs zram as swap"));
        };
        if !self.zram_ready {
            self.setup_zram(z)?;
            self.zram_ready = true;
        }
        let mark = self.undo.len();
        let outcome = self.probe_rounds(options, rounds.max(1));
        self.worker.kill();
        let failures = self.undo.undo_from(mark);
        match outcome {
            Ok(costs) if failures.is_empty() => Ok(costs),
            Ok(_) => Err(Error::host(format!(
                "could not undo: {}",
                failures.join("; ")
            ))),
            Err(e) if failures.is_empty() => Err(e),
            Err(e) => Err(Error::host(format!(
                "{e}; and could not undo: {}",
                failures.join("; ")
            ))),
        }
    }

    fn probe_rounds(&mut self, options: &ValidateOptions, rounds: u32) -> Result<SwapPathCosts> {
        let cgroup = options
            .cgroup_root
            .join(format!("mobmem-probe-{}", std::process::id()));
        self.undo.create_dir(Change::Cgroup {
            path: cgroup.clone(),
        })?;
        let mut w = self.start_worker(options, &options.scratch, &["--probe-swap"])?;
        write_value(&cgroup.join("cgroup.procs"), &w.pid.to_string())?;
        let tell = |what: &str, w: &mut StartedWorker| -> Result<String> {
            writeln!(w.stdin, "{what}")
                .and_then(|()| w.stdin.flush())
                .map_err(|e| Error::host(format!("the swap probe's worker: {e}")))?;
            Ok(w.lines.next().and_then(|l| l.ok()).unwrap_or_default())
        };
        let said = tell("go", &mut w)?;
        if said != "written" {
            return Err(Error::host(format!(
                "the swap probe's worker did not write its pages (said '{said}')"
            )));
        }
        let pages = options.spec.anon_pages as u64;
        let (mut reclaim, mut swapin) = (Vec::new(), Vec::new());
        for _ in 0..rounds {
            self.check_interrupt()?;
            let (_, out0) = swap_counts()?;
            let t = Instant::now();
            write_value(&cgroup.join("memory.force_empty"), "0")?;
            let reclaim_ns = t.elapsed().as_nanos() as f64;
            let (in0, out1) = swap_counts()?;
            let outs = out1.saturating_sub(out0);
            if outs == 0 || outs < pages / 2 {
                return Err(Error::host(format!(
                    "reclaiming the swap probe's cgroup swapped out {outs} of its {pages} pages"
                )));
            }
            let said = tell("touch", &mut w)?;
            let touch_ns: f64 = said
                .strip_prefix("touched ")
                .and_then(|n| n.parse().ok())
                .ok_or_else(|| {
                    Error::host(format!(
                        "the swap probe's worker said '{said}', not 'touched NS'"
                    ))
                })?;
            let (in1, _) = swap_counts()?;
            let ins = in1.saturating_sub(in0);
            if ins == 0 || ins < pages / 2 {
                return Err(Error::host(format!(
                    "the swap probe read back {ins} of its {pages} pages from swap"
                )));
            }
            reclaim.push(reclaim_ns / outs as f64);
            swapin.push(touch_ns / ins as f64);
        }
        let median = |mut v: Vec<f64>| {
            v.sort_by(f64::total_cmp);
            v[v.len() / 2]
        };
        Ok(SwapPathCosts {
            reclaim_ns: median(reclaim),
            swapin_ns: median(swapin),
            pages,
        })
    }

    /// Start the worker on the files in `dir` (with `extra` flags) and wait for its
    /// `ready`; it is killed with the session's other workers.
    fn start_worker(
        &mut self,
        options: &ValidateOptions,
        dir: &Path,
        extra: &[&str],
    ) -> Result<StartedWorker> {
        self.worker.kill();
        let mut child = Command::new(&options.worker.program)
            .args(&options.worker.args)
            .args(options.spec.worker_flags())
            .args(extra)
            .arg("--dir")
            .arg(dir)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .map_err(|e| Error::host(format!("starting the worker: {e}")))?;
        let pid = child.id();
        let stdin: ChildStdin = child.stdin.take().expect("piped");
        let stdout = child.stdout.take().expect("piped");
        *self.worker.0.lock().unwrap_or_else(|e| e.into_inner()) = Some(child);
        let mut lines = BufReader::new(stdout).lines();
        let ready = lines.next().and_then(|l| l.ok()).unwrap_or_default();
        self.check_interrupt()?;
        let address = ready
            .strip_prefix("ready ")
            .and_then(|a| u64::from_str_radix(a, 16).ok())
            .ok_or_else(|| Error::host(format!("the worker did not start (said '{ready}')")))?;
        Ok(StartedWorker {
            pid,
            stdin,
            lines,
            address,
        })
    }

    /// One untraced run of the workload in `cgroup` (and in `group`, a cgroup v2 group
    /// of its own, for its pressure), timed from `go` to `done`.
    fn timed_run(
        &mut self,
        options: &ValidateOptions,
        dir: &Path,
        cgroup: &Path,
        group: Option<&Path>,
    ) -> Result<TimedRun> {
        let mut w = self.start_worker(options, dir, &[])?;
        write_value(&cgroup.join("cgroup.procs"), &w.pid.to_string())?;
        if let Some(g) = group {
            write_value(&g.join("cgroup.procs"), &w.pid.to_string())?;
        }
        let group_pressure = || -> Option<[u64; 2]> {
            parse_pressure(&fs::read_to_string(group?.join("memory.pressure")).ok()?)
        };
        let (in0, out0) = swap_counts()?;
        let (group0, system0) = (group_pressure(), memory_stall_us());
        let started = Instant::now();
        writeln!(w.stdin, "go")
            .and_then(|()| w.stdin.flush())
            .map_err(|e| Error::host(format!("starting the workload: {e}")))?;
        let said = w.lines.next().and_then(|l| l.ok()).unwrap_or_default();
        let seconds = started.elapsed().as_secs_f64();
        let (group1, system1) = (group_pressure(), memory_stall_us());
        let (in1, out1) = swap_counts()?;
        self.worker.kill();
        self.check_interrupt()?;
        if !said.starts_with("done") {
            return Err(Error::host(format!(
                "the worker's untraced run ended before its workload did (said '{said}'; killed \
                 by the OOM killer? a limit far below the workload's pages can leave reclaim \
                 nothing to take)"
            )));
        }
        let delta = |a: Option<[u64; 2]>, b: Option<[u64; 2]>| {
            let (a, b) = (a?, b?);
            Some([b[0].saturating_sub(a[0]), b[1].saturating_sub(a[1])])
        };
        Ok(TimedRun {
            seconds,
            group_stall_us: delta(group0, group1),
            system_stall_us: delta(system0, system1),
            swap_ins: in1.saturating_sub(in0),
            swap_outs: out1.saturating_sub(out0),
        })
    }
}

/// A worker that said `ready`.
struct StartedWorker {
    pid: u32,
    stdin: ChildStdin,
    lines: std::io::Lines<BufReader<std::process::ChildStdout>>,
    /// Its anonymous region's first byte.
    address: u64,
}

/// Where a cgroup v2 hierarchy is mounted (the first in `/proc/self/mounts`); none
/// without one, or without psi (its groups have no `memory.pressure`).
pub fn cgroup2_mount() -> Option<PathBuf> {
    let mounts = fs::read_to_string("/proc/self/mounts").ok()?;
    mounts.lines().find_map(|l| {
        let mut f = l.split_whitespace();
        let (path, kind) = (f.nth(1)?, f.next()?);
        let path = PathBuf::from(path);
        (kind == "cgroup2" && path.join("memory.pressure").exists()).then_some(path)
    })
}

/// The machine's memory stall totals, µs: SOME and FULL of `/proc/pressure/memory`.
pub fn memory_stall_us() -> Option<[u64; 2]> {
    parse_pressure(&fs::read_to_string("/proc/pressure/memory").ok()?)
}

/// The `total=` of the `some` and `full` lines of a pressure file.
pub fn parse_pressure(text: &str) -> Option<[u64; 2]> {
    let total = |kind: &str| {
        let line = text.lines().find(|l| l.starts_with(kind))?;
        line.split_whitespace()
            .find_map(|w| w.strip_prefix("total="))?
            .parse()
            .ok()
    };
    Some([total("some ")?, total("full ")?])
}

/// The memory controller's hierarchy id (/proc/cgroups), as `cgroup_rstat_locked`
/// prints it in `root=`.
fn memory_hierarchy_id() -> Option<u64> {
    let text = fs::read_to_string("/proc/cgroups").ok()?;
    text.lines().find_map(|l| {
        let mut f = l.split_whitespace();
        (f.next()? == "memory").then(|| f.next()?.parse().ok())?
    })
}

/// The flushes of the workload cgroup's statistics a capture saw, and the time of the
/// workload's first fault in its anonymous region (to put both on the trace's clock).
#[derive(Debug, Clone, Default)]
pub struct FlushClock {
    /// Flushes covering the cgroup (of the hierarchy's root or of the cgroup itself),
    /// absolute ns, one per flush (the per-CPU lines of one flush are merged).
    pub flushes_abs_ns: Vec<u64>,
    /// The first fault in the region, absolute ns.
    pub first_region_fault_abs_ns: Option<u64>,
}

/// The timestamp (ns) of an ftrace line and its payload after `event: `.
fn timestamp_and_payload<'a>(line: &'a str, event: &str) -> Option<(u64, &'a str)> {
    let at = line.find(&format!(" {event}: "))?;
    let head = line[..at].trim_end().strip_suffix(':')?;
    let ts = head.rsplit(' ').next()?;
    let (secs, frac) = ts.split_once('.')?;
    let frac_ns: u64 = format!("{frac:0<9}")[..9].parse().ok()?;
    let ns = secs
        .parse::<u64>()
        .ok()?
        .checked_mul(1_000_000_000)?
        .checked_add(frac_ns)?;
    Some((ns, &line[at + event.len() + 3..]))
}

fn field(payload: &str, name: &str) -> Option<u64> {
    payload.split_whitespace().find_map(|w| {
        let v = w.strip_prefix(name)?.strip_prefix('=')?;
        match v.strip_prefix("0x") {
            Some(hex) => u64::from_str_radix(hex, 16).ok(),
            None => v.parse().ok(),
        }
    })
}

/// Lines of one flush (one per CPU) lie within this of each other.
const SAME_FLUSH_NS: u64 = 1_000_000;

impl FlushClock {
    fn observe(
        &mut self,
        line: &[u8],
        hierarchy: Option<u64>,
        cgroup_id: u64,
        region: &std::ops::Range<u64>,
    ) {
        let Ok(line) = std::str::from_utf8(line) else {
            return;
        };
        if let Some((ns, p)) = timestamp_and_payload(line, "cgroup_rstat_locked") {
            let ours = field(p, "root") == hierarchy
                && (field(p, "level") == Some(0) || field(p, "id") == Some(cgroup_id));
            let new = self
                .flushes_abs_ns
                .last()
                .is_none_or(|&last| ns > last + SAME_FLUSH_NS);
            if ours && new {
                self.flushes_abs_ns.push(ns);
            }
        } else if self.first_region_fault_abs_ns.is_none() {
            if let Some((ns, p)) = timestamp_and_payload(line, "page_fault_user") {
                if field(p, "address").is_some_and(|a| region.contains(&a)) {
                    self.first_region_fault_abs_ns = Some(ns);
                }
            }
        }
    }

    /// The flushes on the clock of `trace`, whose first access to the region's first
    /// page is the fault seen first; None when that fault is missing.
    pub fn on_trace_clock(&self, first_region_access_ns: Option<u64>) -> Option<Vec<u64>> {
        let offset = self
            .first_region_fault_abs_ns?
            .checked_sub(first_region_access_ns?)?;
        Some(
            self.flushes_abs_ns
                .iter()
                .filter_map(|t| t.checked_sub(offset))
                .collect(),
        )
    }
}

#[cfg(test)]
impl KernelRun {
    fn clone_for_test(&self) -> KernelRun {
        KernelRun {
            trace: self.trace.clone(),
            file_owners: self.file_owners.clone(),
            swapped_indices: self.swapped_indices.clone(),
            flushes: self.flushes.clone(),
            timed: self.timed.clone(),
            ..*self
        }
    }
}

impl Drop for KernelSession {
    fn drop(&mut self) {
        for f in self.finish() {
            note(&format!("could not undo: {f}; it stays in the state file"));
        }
    }
}

/// Pages of process `pid` in swap (`VmSwap` of /proc/PID/status).
fn swapped_total(pid: u32) -> Result<u64> {
    let path = PathBuf::from(format!("/proc/{pid}/status"));
    let text = read_trimmed(&path)?;
    let kb = text
        .lines()
        .find_map(|l| l.strip_prefix("VmSwap:"))
        .and_then(|v| v.split_whitespace().next()?.parse::<u64>().ok())
        .ok_or_else(|| Error::host(format!("{} has no VmSwap", path.display())))?;
    Ok(kb * 1024 / PAGE_BYTES as u64)
}

/// Which of the `pages` pages from `address` of process `pid` are in swap
/// (`/proc/PID/pagemap`, bit 62; Documentation/admin-guide/mm/pagemap.rst).
fn swapped_pages(pid: u32, address: u64, pages: u32) -> Result<Vec<u32>> {
    let path = PathBuf::from(format!("/proc/{pid}/pagemap"));
    let file = File::open(&path).map_err(|e| Error::io(&path, e))?;
    let mut entries = vec![0u8; pages as usize * 8];
    file.read_exact_at(&mut entries, address / PAGE_BYTES as u64 * 8)
        .map_err(|e| Error::io(&path, e))?;
    Ok(entries
        .chunks_exact(8)
        .enumerate()
        .filter(|(_, e)| {
            let v = u64::from_le_bytes((*e).try_into().expect("8 bytes"));
            v >> 62 & 1 == 1
        })
        .map(|(i, _)| i as u32)
        .collect())
}

/// The simulator at one limit, beside the kernel.
#[derive(Debug, Clone, serde::Serialize)]
pub struct LimitComparison {
    pub limit_mib: u64,
    /// The simulator's memory: the limit less the kernel memory charged to the cgroup.
    pub sim_pages: usize,
    pub kernel_bytes: u64,
    pub kernel: Figures,
    pub sim: Figures,
    /// The zram pool model on the pages the kernel had in swap at the end (the codec
    /// alone, without the simulator's choice of pages).
    pub pool_of_kernel_pages: Option<ZramPoolStats>,
    /// Accesses the workload made and the trace holds (file reads; anonymous: the
    /// trace sees faults only).
    pub file_reads_made: u64,
    pub file_reads_traced: u64,
    pub anon_accesses_made: u64,
    pub anon_faults_traced: u64,
    /// Pages of the trace outside the workload's files and region.
    pub other_pages: u64,
    /// Anonymous reads the capture could not see, added from the known order.
    pub anon_reads_added: u64,
    /// Traced accesses to the workload's pages that matched no step of it.
    pub unmatched_accesses: u64,
    /// Anonymous reads left out: their page's first fault was lost by the capture.
    pub unseen_reads: u64,
    /// Steps of the workload that take an event the trace lacks.
    pub missing_steps: u64,
    /// The first traced access that matched no step (see [`Completed::first_stray`]).
    pub first_unmatched: Option<String>,
    /// The first step whose event the trace lacks.
    pub first_missing_step: Option<usize>,
    /// Events ftrace lost (its reader fell behind).
    pub lost_events: u64,
    /// The worker's pages in zram outside the workload's region (see
    /// [`KernelRun::other_swapped_pages`]).
    pub other_swapped_pages: u64,
    /// Pages back in memory whose copy the kernel's zram still holds (its swap cache,
    /// `swapcached`); this model frees a page's copy when it is swapped in.
    pub swap_cached_pages: u64,
    /// Flushes of the cgroup's statistics seen during the run and given to the
    /// simulator (None: none could be placed on the trace's clock; the simulator then
    /// flushed periodically).
    pub stats_flushes: Option<usize>,
    pub seconds: f64,
}

/// The compared counters of one side.
#[derive(Debug, Clone, Copy, Default, PartialEq, serde::Serialize)]
pub struct Figures {
    pub file_refaults: u64,
    pub anon_refaults: u64,
    /// Page faults that read a page (the workload's file reads are `read()` calls,
    /// not faults: these are its swap-ins).
    pub major_faults: u64,
    pub swap_outs: u64,
    pub swap_ins: u64,
    /// Swap-ins of pages active before their eviction (`workingset_restore_anon`; the
    /// kernel's is machine-wide).
    pub anon_restores: u64,
    /// Pages on the lists at the end: inactive anon, active anon, inactive file,
    /// active file.
    pub lists: [u64; 4],
    /// zram's `mm_stat` (kernel) or the pool model on the simulator's swapped pages.
    pub pool: Option<ZramPoolStats>,
}

/// The captured trace with the accesses ftrace cannot see put back: a read of a mapped
/// anonymous page that is resident takes no fault, so the trace has only the reads that
/// faulted (swap-ins). The workload's order is known ([`WorkloadSpec::steps`]): the
/// trace's accesses to the workload's pages are matched to it in order, and every read
/// of an anonymous page the trace lacks is added at the time of the next traced one.
#[derive(Debug, Clone)]
pub struct Completed {
    pub trace: Trace,
    /// Anonymous reads added.
    pub added: u64,
    /// Traced accesses to the workload's pages that match no step (kept as they are).
    pub unmatched: u64,
    /// Anonymous reads of pages the trace never saw (their first fault was lost): left
    /// out.
    pub unseen: u64,
    /// Steps that take an event (file reads, first touches) the trace lacks.
    pub missing: u64,
    /// The first traced access that matched no step, and the step then due.
    pub first_stray: Option<String>,
    /// The first step whose event the trace lacks.
    pub first_missing: Option<usize>,
}

/// A traced access is taken for a step past steps whose events were lost only if this
/// many traced accesses from it on follow the steps from there.
const CONFIRM: usize = 8;
/// Most steps with events a traced access is looked for past (further, it is a stray).
const MAX_LOST: usize = 4096;

/// What one of the workload's trace pages is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum OwnPage {
    File(u32),
    Anon(u32),
}

/// Complete `run`'s trace as [`Completed`] says.
pub fn complete_trace(spec: &WorkloadSpec, run: &KernelRun) -> Result<Completed> {
    let pages = &run.trace.tables.pages;
    let region = run.region_vpn..run.region_vpn + spec.anon_pages as u64;
    let per_file = spec.pages_per_file();
    let own = |id: PageId| -> Option<OwnPage> {
        let key = pages.get(id as usize)?;
        match key.kind {
            PageKind::Anon => (key.owner == run.worker_pid as u64 && region.contains(&key.index))
                .then(|| OwnPage::Anon((key.index - run.region_vpn) as u32)),
            PageKind::File => {
                let f = run.file_owners.iter().position(|&o| o == key.owner)? as u32;
                (key.index < per_file as u64)
                    .then(|| OwnPage::File(f * per_file + key.index as u32))
            }
        }
    };
    let mut anon_id = vec![None::<(PageId, u32)>; spec.anon_pages as usize];
    for e in run.trace.events.iter().filter(|e| e.is_access()) {
        if let Some(OwnPage::Anon(i)) = own(e.page()) {
            anon_id[i as usize].get_or_insert((e.page(), e.proc()));
        }
    }
    let steps: Vec<Step> = spec.steps().collect();
    let expected = |step: Step| match step {
        Step::FileRead(i) => OwnPage::File(i),
        Step::AnonRead(i) | Step::AnonWrite(i) => OwnPage::Anon(i),
    };
    // The workload's accesses in the trace, in order.
    let traced: Vec<Option<OwnPage>> = run
        .trace
        .events
        .iter()
        .map(|e| e.is_access().then(|| own(e.page())).flatten())
        .collect();
    let own_events: Vec<(usize, OwnPage)> = traced
        .iter()
        .enumerate()
        .filter_map(|(i, p)| p.map(|p| (i, p)))
        .collect();
    // Whether the traced accesses from own_events[k] on follow the steps from `j` on,
    // skipping only reads of resident anonymous pages, for CONFIRM accesses.
    let follows = |k: usize, mut j: usize| -> bool {
        for &(_, page) in own_events.iter().skip(k).take(CONFIRM) {
            loop {
                match steps.get(j) {
                    None => return false,
                    Some(&step) if expected(step) == page => break,
                    Some(Step::AnonRead(_)) => j += 1,
                    Some(_) => return false,
                }
            }
            j += 1;
        }
        true
    };
    let mut next = 0;
    let mut events = Vec::with_capacity(run.trace.events.len() + steps.len() / 8);
    let (mut added, mut unmatched, mut missing) = (0, 0, 0);
    let mut first_stray = None;
    let mut first_missing = None;
    // A read of a page whose first fault the capture lost (ftrace drops events when
    // its reader falls behind) cannot be put back: it is counted instead.
    let mut unseen = 0;
    let mut push_read = |events: &mut Vec<Event>, i: u32, time: u64| match anon_id[i as usize] {
        Some((page, proc)) => events.push(Event::access(time, proc, page, false, true)),
        None => unseen += 1,
    };
    let mut k = 0;
    for (index, e) in run.trace.events.iter().enumerate() {
        let Some(page) = traced[index] else {
            events.push(*e);
            continue;
        };
        // The step this access is: the next one, past reads of resident anonymous pages
        // (they take no event); or, when that does not fit, a later one past steps whose
        // events the capture lost, if the accesses after it follow the steps after it.
        let mut found = None;
        let mut lost = 0;
        for (j, &step) in steps.iter().enumerate().skip(next) {
            if expected(step) == page && (lost == 0 || follows(k, j)) {
                found = Some(j);
                break;
            }
            if !matches!(step, Step::AnonRead(_)) {
                lost += 1;
                if lost > MAX_LOST {
                    break;
                }
            }
        }
        k += 1;
        let Some(at) = found else {
            if unmatched == 0 {
                first_stray = Some(format!(
                    "{:?} at {} ns, where step {} ({:?}) was due",
                    page,
                    e.time_ns(),
                    next,
                    steps.get(next)
                ));
            }
            unmatched += 1;
            events.push(*e);
            continue;
        };
        for (j, &step) in steps.iter().enumerate().take(at).skip(next) {
            match step {
                Step::AnonRead(i) => {
                    push_read(&mut events, i, e.time_ns());
                    added += 1;
                }
                // A step that takes an event (a file read, a first touch) the capture
                // does not have.
                Step::FileRead(_) | Step::AnonWrite(_) => {
                    missing += 1;
                    first_missing.get_or_insert(j);
                }
            }
        }
        events.push(*e);
        next = at + 1;
    }
    let end = run.trace.events.last().map_or(0, |e| e.time_ns());
    for (j, &step) in steps.iter().enumerate().skip(next) {
        match step {
            Step::AnonRead(i) => {
                push_read(&mut events, i, end);
                added += 1;
            }
            Step::FileRead(_) | Step::AnonWrite(_) => {
                missing += 1;
                first_missing.get_or_insert(j);
            }
        }
    }
    Ok(Completed {
        trace: Trace {
            events,
            tables: run.trace.tables.clone(),
        },
        added,
        unmatched,
        missing,
        unseen,
        first_stray,
        first_missing,
    })
}

/// Run the simulator on `run`'s trace at its limit and put both sides together.
pub fn compare(plan: &Plan, run: &KernelRun) -> Result<LimitComparison> {
    let spec = &plan.options.spec;
    let kernel_bytes = run.stat.kernel_bytes();
    let limit_bytes = run.limit_mib << 20;
    let sim_pages = (limit_bytes.saturating_sub(kernel_bytes) / PAGE_BYTES as u64) as usize;
    let swap_pages = plan
        .options
        .zram
        .as_ref()
        .map_or(0, |z| (z.disksize_mib << 20) as usize / PAGE_BYTES);
    let completed = complete_trace(spec, run)?;
    let first_region_access = run
        .trace
        .events
        .iter()
        .find(|e| {
            e.is_access()
                && run
                    .trace
                    .tables
                    .pages
                    .get(e.page() as usize)
                    .is_some_and(|k| {
                        k.kind == PageKind::Anon
                            && k.owner == run.worker_pid as u64
                            && k.index == run.region_vpn
                    })
        })
        .map(|e| e.time_ns());
    let observed_flushes = run.flushes.on_trace_clock(first_region_access);
    let config = ReclaimConfig {
        policy: "workingset".into(),
        memory_pages: sim_pages,
        reserved_pages: 0,
        unmovable_per_mille: 0,
        swap_pages,
        // A cgroup at its limit reclaims directly, 32 pages a charge that fails: no
        // watermarks, no kswapd.
        watermarks_kb: Some([0, 0, 0]),
        swappiness: plan.options.swappiness,
        high_order: HighOrderConfig {
            process: String::new(),
            ..HighOrderConfig::default()
        },
        // The flushes the capture saw; a flush before the first event stands for the
        // statistics being exact then. Without them, the period asked for.
        stats_flush_ms: plan.options.stats_flush_ms,
        stats_flush_at_ns: match &observed_flushes {
            Some(at) if plan.options.stats_flush_ms > 0 => {
                // Never reached: it keeps the list non-empty when no flush was seen.
                let mut at = at.clone();
                at.push(u64::MAX);
                at
            }
            _ => Vec::new(),
        },
        ..ReclaimConfig::default()
    };
    let detailed: DetailedRun = reclaim::run_detailed(&config, &completed.trace)
        .map_err(|e| Error::host(format!("simulating the {} MiB run: {e}", run.limit_mib)))?;
    let ws = detailed
        .workingset
        .ok_or_else(|| Error::host("the workingset policy gave no refault counters"))?;
    let r = &detailed.result;
    let swap_ins: u64 = r.per_process.iter().map(|p| p.swap_ins).sum();

    // Which trace pages are the workload's.
    let pages = &run.trace.tables.pages;
    let region = run.region_vpn..run.region_vpn + spec.anon_pages as u64;
    let index_of_anon = |id: u32| -> Option<u32> {
        let key = pages.get(id as usize)?;
        (key.kind == PageKind::Anon
            && key.owner == run.worker_pid as u64
            && region.contains(&key.index))
        .then(|| (key.index - run.region_vpn) as u32)
    };
    let ours = |id: u32| -> bool {
        let key = &pages[id as usize];
        match key.kind {
            PageKind::File => run.file_owners.contains(&key.owner),
            PageKind::Anon => index_of_anon(id).is_some(),
        }
    };
    let mut file_reads_traced = 0;
    let mut anon_faults_traced = 0;
    for e in run.trace.events.iter().filter(|e| e.is_access()) {
        let key = &pages[e.page() as usize];
        if key.kind == PageKind::File && run.file_owners.contains(&key.owner) {
            file_reads_traced += 1;
        } else if index_of_anon(e.page()).is_some() {
            anon_faults_traced += 1;
        }
    }
    let other_pages = (0..pages.len() as u32).filter(|&id| !ours(id)).count() as u64;
    let (mut file_reads_made, mut anon_accesses_made) = (0, 0);
    for step in spec.steps() {
        match step {
            Step::FileRead(_) => file_reads_made += 1,
            _ => anon_accesses_made += 1,
        }
    }

    let mut page = vec![0u8; PAGE_BYTES];
    let mut pool_of = |indices: &mut dyn Iterator<Item = u32>| -> Result<Option<ZramPoolStats>> {
        let Some((codec, _)) = plan.codec else {
            return Ok(None);
        };
        let mut pool = ZramPool::new(codec);
        for i in indices {
            spec.anon_contents(i, &mut page);
            pool.store(&page)?;
        }
        Ok(Some(pool.stats))
    };
    let sim_pool = pool_of(&mut detailed.swapped.iter().filter_map(|&id| index_of_anon(id)))?;
    let pool_of_kernel_pages = pool_of(&mut run.swapped_indices.iter().copied())?;
    let kernel_pool = run.mm_stat.map(|m| ZramPoolStats {
        pages: m.orig_data_size / PAGE_BYTES as u64,
        orig_data_size: m.orig_data_size,
        compr_data_size: m.compr_data_size,
        same_pages: m.same_pages,
        huge_pages: m.huge_pages,
    });
    Ok(LimitComparison {
        limit_mib: run.limit_mib,
        sim_pages,
        kernel_bytes,
        kernel: Figures {
            file_refaults: run.stat.workingset_refault_file,
            anon_refaults: run.stat.workingset_refault_anon,
            major_faults: run.stat.pgmajfault,
            swap_outs: run.swap_outs,
            swap_ins: run.swap_ins,
            anon_restores: run.anon_restores,
            lists: run.stat.lists,
            pool: kernel_pool,
        },
        sim: Figures {
            file_refaults: ws.refault[1],
            anon_refaults: ws.refault[0],
            major_faults: swap_ins,
            swap_outs: r.counters.swap_outs,
            swap_ins,
            anon_restores: ws.restore[0],
            lists: detailed.lists.map(|n| n as u64),
            pool: sim_pool,
        },
        pool_of_kernel_pages,
        file_reads_made,
        file_reads_traced,
        anon_accesses_made,
        anon_faults_traced,
        other_pages,
        anon_reads_added: completed.added,
        unmatched_accesses: completed.unmatched,
        unseen_reads: completed.unseen,
        missing_steps: completed.missing,
        first_unmatched: completed.first_stray.clone(),
        first_missing_step: completed.first_missing,
        lost_events: run.lost_events,
        stats_flushes: observed_flushes.as_ref().map(Vec::len),
        other_swapped_pages: run.other_swapped_pages,
        swap_cached_pages: run.stat.swap_cached,
        seconds: run.seconds,
    })
}

/// Relative difference of `sim` from `kernel`, percent (NaN when the kernel's is 0 and
/// the simulator's is not; 0 when both are).
pub fn relative_percent(kernel: u64, sim: u64) -> f64 {
    if kernel == 0 {
        return if sim == 0 { 0.0 } else { f64::NAN };
    }
    100.0 * (sim as f64 - kernel as f64) / kernel as f64
}

/// The pairs of limits (in MiB) the simulator orders differently from the kernel by
/// `value`, with the kernel's values: a pair is inverted when the two sides order it
/// strictly and oppositely.
pub fn inverted_pairs(
    rows: &[LimitComparison],
    value: impl Fn(&Figures) -> u64,
) -> Vec<(u64, u64, u64, u64)> {
    let mut out = Vec::new();
    for (i, a) in rows.iter().enumerate() {
        for b in &rows[i + 1..] {
            let k = value(&a.kernel).cmp(&value(&b.kernel));
            let s = value(&a.sim).cmp(&value(&b.sim));
            if k != s && !k.is_eq() && !s.is_eq() {
                out.push((a.limit_mib, b.limit_mib, value(&a.kernel), value(&b.kernel)));
            }
        }
    }
    out
}

/// Whether the simulator orders the limits as the kernel does, leaving out pairs whose
/// kernel values lie within `tolerance_percent` of each other (their order is within
/// the noise the goal allows).
pub fn same_order(
    rows: &[LimitComparison],
    value: impl Fn(&Figures) -> u64,
    tolerance_percent: f64,
) -> bool {
    inverted_pairs(rows, value).iter().all(|&(_, _, ka, kb)| {
        let (lo, hi) = (ka.min(kb) as f64, ka.max(kb) as f64);
        hi <= lo * (1.0 + tolerance_percent / 100.0)
    })
}

/// Why the simulator's file refaults differ from the kernel's at `row`, read from the
/// counters: where the two sides kept their pages at the end.
pub fn explain_file_gap(row: &LimitComparison) -> String {
    let (k, s) = (&row.kernel.lists, &row.sim.lists);
    let file = |l: &[u64; 4]| l[2] + l[3];
    let anon = |l: &[u64; 4]| l[0] + l[1];
    let mut why = format!(
        "at the end the kernel held {} file pages ({} active) and {} anonymous, the simulator {} ({} active) and {}",
        file(k),
        k[3],
        anon(k),
        file(s),
        s[3],
        anon(s)
    );
    if row.kernel.swap_outs != row.sim.swap_outs {
        why += &format!(
            "; it swapped out {} pages against the kernel's {}",
            row.sim.swap_outs, row.kernel.swap_outs
        );
    }
    if row.file_reads_traced != row.file_reads_made {
        why += &format!(
            "; the trace holds {} of the {} file reads made",
            row.file_reads_traced, row.file_reads_made
        );
    }
    why
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_folder_that_already_exists_is_never_recorded_nor_removed() {
        let home = tempfile::tempdir().unwrap();
        let state_dir = tempfile::tempdir().unwrap();
        let state_file = state_dir.path().join("state.json");
        let journal = Journal::begin(&state_file, "test").unwrap();
        let undo = UndoLog {
            changes: Arc::default(),
            journal: journal.clone(),
        };
        let theirs = home.path().join("theirs");
        fs::create_dir(&theirs).unwrap();
        fs::write(theirs.join("keep"), "a user's file").unwrap();
        for change in [
            Change::Dir {
                path: theirs.clone(),
            },
            Change::Cgroup {
                path: theirs.clone(),
            },
        ] {
            let e = undo.create_dir(change).unwrap_err().to_string();
            assert!(e.contains("already exists"), "{e}");
        }
        // One that cannot be made (its parent is missing) is forgotten, not undone.
        let orphan = home.path().join("missing").join("ours");
        assert!(undo.create_dir(Change::Dir { path: orphan }).is_err());
        assert_eq!(undo.len(), 0);
        let recorded = state::HostState::read(&state_file).unwrap().unwrap();
        assert!(recorded.changes.is_empty(), "{:?}", recorded.changes);
        let ours = home.path().join("ours");
        undo.create_dir(Change::Dir { path: ours.clone() }).unwrap();
        assert!(ours.is_dir());
        assert!(undo.undo_from(0).is_empty());
        assert!(!ours.exists());
        assert_eq!(
            fs::read_to_string(theirs.join("keep")).unwrap(),
            "a user's file"
        );
        journal.close().unwrap();
    }

    #[test]
    fn steps_follow_the_seed_and_the_shares() {
        let spec = WorkloadSpec {
            accesses: 10_000,
            ..WorkloadSpec::default()
        };
        let a: Vec<Step> = spec.steps().collect();
        assert_eq!(a, spec.steps().collect::<Vec<_>>());
        let other: Vec<Step> = WorkloadSpec { seed: 2, ..spec }.steps().collect();
        assert_ne!(a, other);
        let writes = a.iter().filter(|s| matches!(s, Step::AnonWrite(_))).count();
        assert_eq!(writes, spec.anon_pages as usize);
        let reads = &a[writes..];
        let anon = reads
            .iter()
            .filter(|s| matches!(s, Step::AnonRead(_)))
            .count();
        assert!((800..1200).contains(&anon), "{anon} anonymous reads");
        let hot = spec.file_pages * spec.hot_percent / 100;
        let file: Vec<u32> = reads
            .iter()
            .filter_map(|s| match s {
                Step::FileRead(i) => Some(*i),
                _ => None,
            })
            .collect();
        let in_hot = file.iter().filter(|&&i| i < hot).count() as f64 / file.len() as f64;
        // 70% to the hot quarter, plus the quarter of the other 30%.
        assert!((0.74..0.80).contains(&in_hot), "{in_hot}");
        assert!(file.iter().all(|&i| i < spec.file_pages));
    }

    #[test]
    fn anonymous_contents_are_fixed_by_seed_and_page_and_compress_to_varied_sizes() {
        let spec = WorkloadSpec::default();
        let mut a = vec![0u8; PAGE_BYTES];
        let mut b = vec![0u8; PAGE_BYTES];
        spec.anon_contents(3, &mut a);
        spec.anon_contents(3, &mut b);
        assert_eq!(a, b);
        spec.anon_contents(4, &mut b);
        assert_ne!(a, b);
        let mut pool = ZramPool::new(Codec::Lz4);
        for i in 0..64 {
            spec.anon_contents(i, &mut a);
            pool.store(&a).unwrap();
        }
        assert_eq!(pool.stats.same_pages, 4);
        assert_eq!(pool.stats.huge_pages, 0);
        let mean = pool.stats.compr_data_size / 60;
        assert!((300..2400).contains(&mean), "{mean}");
    }

    #[test]
    fn files_split_the_pages() {
        let spec = WorkloadSpec {
            files: 3,
            file_pages: 10,
            ..WorkloadSpec::default()
        };
        assert_eq!(spec.pages_per_file(), 4);
        assert_eq!(
            (0..3).map(|f| spec.file_len(f)).collect::<Vec<_>>(),
            [4, 4, 2]
        );
        assert_eq!(spec.file_page(9), (2, 1));
    }

    #[test]
    fn bad_workloads_are_errors() {
        for bad in [
            WorkloadSpec {
                files: 0,
                ..WorkloadSpec::default()
            },
            WorkloadSpec {
                anon_percent: 101,
                ..WorkloadSpec::default()
            },
            WorkloadSpec {
                anon_pages: 0,
                ..WorkloadSpec::default()
            },
            WorkloadSpec {
                file_pages: MAX_WORKLOAD_PAGES + 1,
                ..WorkloadSpec::default()
            },
        ] {
            assert!(bad.validate().is_err(), "{bad:?}");
        }
    }

    /// A capture of `spec` as the kernel would show it: every first touch and file
    /// read, and the anonymous reads in `faulting` (the others hit resident pages).
    fn capture_of(spec: &WorkloadSpec, faulting: impl Fn(usize) -> bool) -> KernelRun {
        let (pid, region_vpn, file) = (77u32, 0x1000u64, 9u64);
        let mut pages = Vec::new();
        let mut id_of = std::collections::HashMap::new();
        let mut events = Vec::new();
        for (n, step) in spec.steps().enumerate() {
            let key = match step {
                Step::AnonWrite(i) => {
                    crate::trace::PageKey::anon(pid as u64, region_vpn + i as u64)
                }
                Step::AnonRead(i) if faulting(n) => {
                    crate::trace::PageKey::anon(pid as u64, region_vpn + i as u64)
                }
                Step::AnonRead(_) => continue,
                Step::FileRead(i) => crate::trace::PageKey::file(file, i as u64),
            };
            let id = *id_of.entry(key).or_insert_with(|| {
                pages.push(key);
                pages.len() as u32 - 1
            });
            let anon = key.kind == PageKind::Anon;
            events.push(Event::access(
                n as u64,
                0,
                id,
                matches!(step, Step::AnonWrite(_)),
                anon,
            ));
        }
        KernelRun {
            limit_mib: 1,
            stat: CgroupStat::default(),
            swap_ins: 0,
            swap_outs: 0,
            mm_stat: None,
            swapped_indices: Vec::new(),
            other_swapped_pages: 0,
            trace: Trace {
                events,
                tables: crate::trace::Tables {
                    pages,
                    processes: vec![crate::trace::ProcessInfo {
                        pid,
                        name: "worker".into(),
                    }],
                },
            },
            worker_pid: pid,
            region_vpn,
            file_owners: vec![file],
            seconds: 0.0,
            memory_stall_us: None,
            flushes: FlushClock::default(),
            lost_events: 0,
            anon_restores: 0,
            timed: Vec::new(),
        }
    }

    #[test]
    fn the_reads_ftrace_cannot_see_are_put_back_in_order() {
        let spec = WorkloadSpec {
            files: 1,
            file_pages: 8,
            anon_pages: 4,
            accesses: 200,
            anon_percent: 40,
            ..WorkloadSpec::default()
        };
        let steps: Vec<Step> = spec.steps().collect();
        let reads = steps
            .iter()
            .filter(|s| matches!(s, Step::AnonRead(_)))
            .count() as u64;
        // Every third anonymous read faulted (a swap-in); the others hit.
        let run = capture_of(&spec, |n| n % 3 == 0);
        let traced = run.trace.events.len() as u64;
        let done = complete_trace(&spec, &run).unwrap();
        assert_eq!((done.unmatched, done.missing, done.unseen), (0, 0, 0));
        assert_eq!(done.trace.events.len() as u64, steps.len() as u64);
        assert_eq!(done.added, steps.len() as u64 - traced);
        assert!(done.added > 0 && done.added < reads);
        // The completed trace is the workload, step by step.
        let page_of = |e: &Event| run.trace.tables.pages[e.page() as usize];
        for (e, step) in done.trace.events.iter().zip(&steps) {
            let key = page_of(e);
            match *step {
                Step::FileRead(i) => assert_eq!((key.kind, key.index), (PageKind::File, i as u64)),
                Step::AnonRead(i) | Step::AnonWrite(i) => {
                    assert_eq!((key.kind, key.index), (PageKind::Anon, 0x1000 + i as u64))
                }
            }
        }
        // A lost file read and a stray access: counted, and the rest still lines up.
        let mut lossy = run.clone_for_test();
        let lost = lossy
            .trace
            .events
            .iter()
            .enumerate()
            .filter(|(_, e)| page_of(e).kind == PageKind::File)
            .nth(20)
            .unwrap()
            .0;
        lossy.trace.events.remove(lost);
        let stray = lossy.trace.events[3];
        lossy.trace.events.insert(10, stray);
        let done = complete_trace(&spec, &lossy).unwrap();
        assert_eq!((done.unmatched, done.missing), (1, 1));
        assert_eq!(done.trace.events.len(), steps.len());
        assert!(done.first_stray.is_some());
        // The first 20 events lost: the order is found again at once.
        let mut late = run.clone_for_test();
        late.trace.events.drain(..20);
        let done = complete_trace(&spec, &late).unwrap();
        assert_eq!(done.unmatched, 0);
        assert!(done.missing > 0 && done.missing <= 20);
        assert_eq!(
            done.trace.events.len() as u64 + done.missing,
            steps.len() as u64
        );
    }

    #[test]
    fn selector_files_are_read_by_their_choice() {
        assert_eq!(selected("[lzo-rle] lzo lz4"), "lzo-rle");
        assert_eq!(selected("lzo [lz4]"), "lz4");
        assert_eq!(selected("none"), "none");
    }

    fn row(limit_mib: u64, kernel: u64, sim: u64) -> LimitComparison {
        LimitComparison {
            limit_mib,
            sim_pages: 0,
            kernel_bytes: 0,
            kernel: Figures {
                file_refaults: kernel,
                ..Figures::default()
            },
            sim: Figures {
                file_refaults: sim,
                ..Figures::default()
            },
            pool_of_kernel_pages: None,
            file_reads_made: 0,
            file_reads_traced: 0,
            anon_accesses_made: 0,
            anon_faults_traced: 0,
            other_pages: 0,
            anon_reads_added: 0,
            unmatched_accesses: 0,
            unseen_reads: 0,
            missing_steps: 0,
            first_unmatched: None,
            first_missing_step: None,
            lost_events: 0,
            other_swapped_pages: 0,
            swap_cached_pages: 0,
            stats_flushes: None,
            seconds: 0.0,
        }
    }

    #[test]
    fn relative_differences_and_orders() {
        assert_eq!(relative_percent(100, 110), 10.0);
        assert_eq!(relative_percent(0, 0), 0.0);
        assert!(relative_percent(0, 1).is_nan());
        let refaults = |f: &Figures| f.file_refaults;
        // 10 and 12 inverted but 1% apart in the kernel; 12 and 14 in order.
        let rows = [
            row(10, 5531, 5623),
            row(12, 5570, 5521),
            row(14, 3440, 3490),
        ];
        assert_eq!(inverted_pairs(&rows, refaults), vec![(10, 12, 5531, 5570)]);
        assert!(same_order(&rows, refaults, 10.0));
        assert!(!same_order(&rows, refaults, 0.5));
        let rows = [row(10, 5000, 3000), row(12, 4000, 4500)];
        assert!(!same_order(&rows, refaults, 10.0));
    }
}
