//! A buffer cache's requests on the machine's clock (the cache kind's `[clock]`).
//!
//! Each process's requests run one after another on a thread of its own, each arriving
//! at its time in the trace: the memory operations a request caused (its own access,
//! fills, migrations, reads of dirty victims) are CPU work on that thread, priced by a
//! cost model in ns; its storage read (a miss) and the write-backs of the dirty pages it
//! evicted are operations on one storage queue, which serves them in arrival order. A
//! request's response runs from its time in the trace to its end, so it includes the
//! waits the summed accounting leaves out: for the storage behind other apps'
//! write-backs and reads, for a core, and behind the app's own earlier requests.
//!
//! A write-back is done by the request that needed the frame (synchronous eviction, as
//! the paper's cache does), before its own read; it counts as a memory stall.

use serde::{Deserialize, Serialize};
use std::collections::{HashMap, VecDeque};

use crate::core::time::{CpuSharing, DeviceQueue, Ns, Step, ThreadId, ThreadSpec, Timeline};
use crate::devices::CostModel;
use crate::trace::ProcId;
use crate::{Error, Result};

/// Processes (threads on the clock) one run may have.
pub const MAX_CLOCK_PROCESSES: usize = 1 << 16;

/// Requests submitted between two advances of the clock: how far ended requests may
/// wait to be counted and released.
const ADVANCE_EVERY: u32 = 4096;

/// The `[clock]` table of the cache kind.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ClockSpec {
    /// The cost model that prices memory operations and storage operations in ns
    /// (`mobmem policies --costs` lists them); its `unit` must be "ns".
    pub cost: String,
    /// CPU capacities in `SCHED_CAPACITY_SCALE` units (1024 for the fastest core).
    pub cpus: Vec<u32>,
    /// Operations the storage serves at once.
    pub storage_queue_depth: u32,
    /// How each CPU is shared: `fluid` (default) or `eevdf` slices at a 250 Hz tick (not
    /// written out when it is the default).
    #[serde(skip_serializing_if = "CpuSharing::is_fluid")]
    pub cpu_sharing: CpuSharing,
}

/// The Nexus 7 of the buffer-cache paper's traces: four equal cores (Tegra 3 in the
/// 2012 model, Snapdragon S4 Pro in the 2013 one; both quad-core), and eMMC storage,
/// which serves one command at a time (command queuing came with eMMC 5.1, JEDEC
/// JESD84-B51, after both).
impl Default for ClockSpec {
    fn default() -> Self {
        ClockSpec {
            cost: "table1-ns".into(),
            cpus: vec![1024; 4],
            storage_queue_depth: 1,
            cpu_sharing: CpuSharing::Fluid,
        }
    }
}

impl ClockSpec {
    /// The checked setup: the cost model resolved (and in ns), the CPUs and depth in range.
    pub fn setup(&self) -> Result<ClockSetup> {
        let context = "clock";
        let cost =
            CostModel::named(&self.cost).map_err(|e| Error::config(context, e.to_string()))?;
        if cost.unit != "ns" {
            return Err(Error::config(
                context,
                format!(
                    "cost model {:?} is in {:?} units: the clock needs one in ns (such as \"table1-ns\")",
                    self.cost, cost.unit
                ),
            ));
        }
        // The timeline checks the CPUs and depth; build one to refuse bad ones now.
        let setup = ClockSetup {
            cost,
            cpus: self.cpus.clone(),
            storage_queue_depth: self.storage_queue_depth,
            cpu_sharing: self.cpu_sharing,
        };
        setup
            .timeline()
            .map_err(|e| Error::config(context, e.to_string()))?;
        Ok(setup)
    }
}

/// What a run on the clock needs.
#[derive(Debug, Clone, PartialEq)]
pub struct ClockSetup {
    pub cost: CostModel,
    pub cpus: Vec<u32>,
    pub storage_queue_depth: u32,
    pub cpu_sharing: CpuSharing,
}

/// The tick: Android's arm64 kernels are built with `CONFIG_HZ=250` (the GKI defconfig).
/// It ends slices when CPUs are shared in them; nothing sleeps on a timer here.
const HZ: u32 = 250;

impl ClockSetup {
    fn timeline(&self) -> Result<Timeline> {
        let queue = DeviceQueue::new("storage", self.storage_queue_depth)?;
        let mut timeline = Timeline::new(&self.cpus, vec![queue], 0, HZ)?;
        timeline.set_sharing(self.cpu_sharing.on(self.cpus.len(), HZ))?;
        Ok(timeline)
    }
}

/// The operations one request caused, as the simulator counted them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RequestWork {
    /// DRAM read, DRAM write, PCM read, PCM write (fills, migrations and the access).
    pub memory_ops: [u64; 4],
    /// Dirty victims read from DRAM and from PCM on their way to storage.
    pub writeback_reads: [u64; 2],
    pub evictions: u64,
    pub storage_reads: u64,
    pub storage_writes: u64,
}

impl RequestWork {
    /// What was added to these counters since `before` (counters never go down).
    pub fn since(&self, before: &RequestWork) -> RequestWork {
        RequestWork {
            memory_ops: std::array::from_fn(|i| self.memory_ops[i] - before.memory_ops[i]),
            writeback_reads: std::array::from_fn(|i| {
                self.writeback_reads[i] - before.writeback_reads[i]
            }),
            evictions: self.evictions - before.evictions,
            storage_reads: self.storage_reads - before.storage_reads,
            storage_writes: self.storage_writes - before.storage_writes,
        }
    }
}

/// Sums over a run's requests on the clock, ns.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct ClockTotals {
    pub fg_response_ns: f64,
    pub fg_work_ns: f64,
    /// Of the foreground response, the time spent behind the app's own earlier requests.
    pub fg_backlog_ns: f64,
    pub bg_response_ns: f64,
    pub bg_work_ns: f64,
    pub storage_busy_ns: f64,
    pub storage_wait_ns: f64,
}

/// The requests of one run on a timeline.
pub struct RequestClock {
    timeline: Timeline,
    cost: CostModel,
    threads: HashMap<ProcId, ThreadId, foldhash::fast::FixedState>,
    /// Of each request not yet released: foreground?, its own work (ns).
    open: VecDeque<(bool, Ns)>,
    since_advance: u32,
    totals: ClockTotals,
}

impl RequestClock {
    pub fn new(setup: &ClockSetup) -> Result<Self> {
        Ok(RequestClock {
            timeline: setup.timeline()?,
            cost: setup.cost.clone(),
            threads: HashMap::default(),
            open: VecDeque::new(),
            since_advance: 0,
            totals: ClockTotals::default(),
        })
    }

    fn thread(&mut self, proc: ProcId) -> Result<ThreadId> {
        if let Some(&t) = self.threads.get(&proc) {
            return Ok(t);
        }
        if self.threads.len() >= MAX_CLOCK_PROCESSES {
            return Err(Error::config(
                "clock",
                format!("more than {MAX_CLOCK_PROCESSES} processes make requests"),
            ));
        }
        let t = self
            .timeline
            .spawn(ThreadSpec::new(format!("pid {proc}")))?;
        self.threads.insert(proc, t);
        Ok(t)
    }

    /// The request of `proc` at `at_ns` (trace time) that caused `work`. A request
    /// earlier than the clock (a trace out of time order) arrives at the clock's time.
    pub fn request(
        &mut self,
        at_ns: u64,
        proc: ProcId,
        foreground: bool,
        work: &RequestWork,
    ) -> Result<()> {
        let c = &self.cost;
        let [dram_r, dram_w, pcm_r, pcm_w] = work.memory_ops.map(|n| n as f64);
        let memory_ns = dram_r * c.dram_read
            + dram_w * c.dram_write
            + pcm_r * c.pcm_read
            + pcm_w * c.pcm_write
            + work.writeback_reads[0] as f64 * c.dram_read
            + work.writeback_reads[1] as f64 * c.pcm_read
            + work.evictions as f64 * c.eviction;
        let memory_ns = memory_ns.round() as Ns;
        let (read_ns, write_ns) = (c.storage_read.round() as Ns, c.writeback.round() as Ns);
        let mut steps = self.timeline.spare_steps();
        for _ in 0..work.storage_writes {
            steps.push(Step::Io {
                device: 0,
                service_ns: write_ns,
                memstall: true,
            });
        }
        for _ in 0..work.storage_reads {
            steps.push(Step::Io {
                device: 0,
                service_ns: read_ns,
                memstall: false,
            });
        }
        steps.push(Step::Cpu {
            work_ns: memory_ns,
            memstall: false,
        });
        let own = memory_ns + work.storage_writes * write_ns + work.storage_reads * read_ns;
        let thread = self.thread(proc)?;
        let at = at_ns.max(self.timeline.now());
        self.timeline.submit(thread, at, steps)?;
        self.open.push_back((foreground, own));
        self.since_advance += 1;
        if self.since_advance >= ADVANCE_EVERY {
            self.since_advance = 0;
            self.timeline.run_until(at)?;
            self.release();
        }
        Ok(())
    }

    fn release(&mut self) {
        let (open, totals) = (&mut self.open, &mut self.totals);
        self.timeline.release_ended(|_, job| {
            let (foreground, own) = open.pop_front().expect("one entry a submitted job");
            let response = job.response_ns().expect("released jobs have ended") as f64;
            if foreground {
                let started = job.started.expect("an ended job has started");
                totals.fg_backlog_ns += (started - job.submitted) as f64;
                totals.fg_response_ns += response;
                totals.fg_work_ns += own as f64;
            } else {
                totals.bg_response_ns += response;
                totals.bg_work_ns += own as f64;
            }
        });
    }

    /// Run every request to its end: the sums.
    pub fn finish(mut self) -> Result<ClockTotals> {
        self.timeline.run_to_end()?;
        self.release();
        let storage = self.timeline.device(0).stats();
        self.totals.storage_busy_ns = storage.busy_ns as f64;
        self.totals.storage_wait_ns = storage.wait_ns as f64;
        Ok(self.totals)
    }
}
