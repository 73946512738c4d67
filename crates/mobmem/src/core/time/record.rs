//! What ran when, kept only when asked ([`super::Timeline::record`]): every stretch of
//! CPU work and every device wait of every thread, and the machine's pressure each time
//! its averaging worker ran. A timeline that does not record keeps none of this and
//! behaves the same either way: recording only reads the clock, it never reads
//! pressure the way `/proc/pressure` does (which aggregates).
//!
//! The recording is what `mobmem run --perfetto` draws (docs/time-model.md, "Looking at
//! it in Perfetto").

use super::sched::Ns;
use super::ThreadId;

/// A stretch of CPU work: one `Cpu` step of `thread`, on `cpu`, from `start` to `end`.
/// With other threads on the same CPU the stretch is longer than the CPU time the
/// thread got in it (`cpu_ns`): the fluid shares the CPU by weight.
#[derive(Debug, Clone, PartialEq)]
pub struct CpuSpan {
    pub thread: ThreadId,
    pub cpu: usize,
    pub start: Ns,
    pub end: Ns,
    /// Memory management done for the thread (a memory stall).
    pub memstall: bool,
    /// CPU time the thread received in the stretch, ns.
    pub cpu_ns: f64,
}

/// A wait of `thread` for one operation of `device` (an `Io` step), queueing included.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IoSpan {
    pub thread: ThreadId,
    pub device: usize,
    pub start: Ns,
    pub end: Ns,
    /// A swap-in: a memory stall as well as an I/O wait.
    pub memstall: bool,
}

/// The machine's pressure (group 0) when its averaging worker ran at `at`: the totals
/// and averages as that worker left them.
#[derive(Debug, Clone, PartialEq)]
pub struct PsiPoint {
    pub at: Ns,
    pub mem_some_total_ns: Ns,
    pub mem_full_total_ns: Ns,
    pub io_some_total_ns: Ns,
    /// avg10 of memory SOME, percent.
    pub mem_some_avg10: f64,
}

/// Everything recorded, each list in the order things ended (CPU and I/O) or happened
/// (pressure).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Recording {
    pub cpu: Vec<CpuSpan>,
    pub io: Vec<IoSpan>,
    pub psi: Vec<PsiPoint>,
}

/// A step in progress.
#[derive(Debug, Clone, Copy)]
enum Open {
    Cpu {
        cpu: usize,
        start: Ns,
        memstall: bool,
        /// The thread's CPU time when the step began.
        cpu_before: f64,
    },
    Io {
        device: usize,
        start: Ns,
        memstall: bool,
    },
}

/// The recording in progress: the finished spans and each thread's open one.
#[derive(Debug, Clone, Default)]
pub(super) struct Recorder {
    pub(super) done: Recording,
    open: Vec<Option<Open>>,
}

impl Recorder {
    fn slot(&mut self, thread: ThreadId) -> &mut Option<Open> {
        crate::core::ensure_index(&mut self.open, thread.0, None);
        &mut self.open[thread.0 as usize]
    }

    pub(super) fn begin_cpu(
        &mut self,
        thread: ThreadId,
        cpu: usize,
        start: Ns,
        memstall: bool,
        cpu_before: f64,
    ) {
        *self.slot(thread) = Some(Open::Cpu {
            cpu,
            start,
            memstall,
            cpu_before,
        });
    }

    pub(super) fn begin_io(&mut self, thread: ThreadId, device: usize, start: Ns, memstall: bool) {
        *self.slot(thread) = Some(Open::Io {
            device,
            start,
            memstall,
        });
    }

    /// `thread`'s step is over at `end`, when it has had `cpu_after` of CPU time.
    pub(super) fn end(&mut self, thread: ThreadId, end: Ns, cpu_after: f64) {
        match self.slot(thread).take() {
            None => {}
            Some(Open::Cpu {
                cpu,
                start,
                memstall,
                cpu_before,
            }) => self.done.cpu.push(CpuSpan {
                thread,
                cpu,
                start,
                end,
                memstall,
                cpu_ns: cpu_after - cpu_before,
            }),
            Some(Open::Io {
                device,
                start,
                memstall,
            }) => self.done.io.push(IoSpan {
                thread,
                device,
                start,
                end,
                memstall,
            }),
        }
    }
}
