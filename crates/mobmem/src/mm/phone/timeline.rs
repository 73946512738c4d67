//! A phone run over time: where its memory stood at every launch, and how long each
//! launch took.
//!
//! Recorded only when asked ([`super::run_with_timeline`]): a plain run takes no sample
//! and its metrics are the same either way. A sample is taken as an app moves to the
//! foreground (before the launch touches anything: the memory as the user found it), and
//! a last one after the run's last event. Sizes are in MiB of the full-size phone, as the
//! run's metrics give them; counters count from the run's start.

use serde::Serialize;

use crate::mm::swap::launch::{LaunchKind, LaunchRecord};
use crate::trace::{PageId, PageKind, Trace};

/// What a sample was taken at.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum SampleEvent {
    /// An app moved to the foreground.
    Launch,
    /// The run's end, after its last event.
    End,
}

/// The phone at one moment of its run.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Sample {
    /// Trace time since the run's first event, s.
    pub time_s: f64,
    pub event: SampleEvent,
    /// The app launched (its process name); empty at the end.
    pub app: String,
    /// `first`, `cold` or `warm`; none at the end.
    pub launch: Option<LaunchKind>,
    /// How long that launch took, ms; none at the end.
    pub launch_ms: Option<f64>,
    /// Free frames of main memory.
    pub free_mib: f64,
    /// File pages in memory: in main memory, or in the buffer cache of the placement
    /// slot when it is on.
    pub page_cache_mib: f64,
    /// Anonymous pages in frames of their own (pages merged by KSM are left out).
    pub anon_mib: f64,
    /// Pages swapped out, on any swap device (zram's counted at their full size).
    pub swap_used_mib: f64,
    /// Frames of main memory the zram pool holds (its pages compressed).
    pub zram_pool_mib: f64,
    /// Frames KSM saves: pages merged less the KSM pages they share.
    pub ksm_saved_mib: f64,
    /// Processes the low-memory killer took so far.
    pub kills: u64,
    pub swap_outs: u64,
    pub swap_ins: u64,
    /// File pages read from flash so far.
    pub file_reads: u64,
}

/// Something that happened to an app, for a Perfetto trace ([`Detail`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MarkKind {
    /// The app moved to the foreground.
    Launch,
    /// The low-memory killer took it.
    Kill,
}

/// What a Perfetto trace of the run adds to the samples
/// ([`super::Phone::record_perfetto`]): each sample's time in ns and each app's
/// anonymous pages in memory then, and the launches and kills as they happened. Times
/// are ns since the run's first event.
#[derive(Debug, Clone, Default)]
pub struct Detail {
    /// Per page id: the process an anonymous page belongs to.
    owner: Vec<Option<u32>>,
    /// Each sample's time, in the samples' order.
    pub sample_ns: Vec<u64>,
    /// Each sample's anonymous memory of each app (its pages with a frame of their own),
    /// MiB, by process.
    pub app_anon_mib: Vec<Vec<f64>>,
    /// (time, what, process), in order.
    pub marks: Vec<(u64, MarkKind, u32)>,
}

/// The samples of a run in progress.
pub(super) struct Timeline {
    /// Per page id: whether it is anonymous.
    anon: Vec<bool>,
    pub(super) samples: Vec<Sample>,
    pub(super) detail: Option<Detail>,
}

/// What a sample reads off the phone, in pages and counts.
pub(super) struct State {
    pub free: usize,
    pub page_cache: usize,
    pub anon: usize,
    pub swap_used: usize,
    pub zram_pool: usize,
    pub ksm_saved: usize,
    pub kills: u64,
    pub swap_outs: u64,
    pub swap_ins: u64,
    pub file_reads: u64,
}

impl Timeline {
    pub(super) fn new(trace: &Trace) -> Self {
        Timeline {
            anon: (trace.tables.pages.iter())
                .map(|key| key.kind == PageKind::Anon)
                .collect(),
            samples: Vec::new(),
            detail: None,
        }
    }

    /// Keep a [`Detail`] too.
    pub(super) fn keep_detail(&mut self, trace: &Trace) {
        let procs = &trace.tables.processes;
        let owner = (trace.tables.pages.iter())
            .map(|key| {
                (key.kind == PageKind::Anon)
                    .then(|| procs.iter().position(|p| p.pid as u64 == key.owner))
                    .flatten()
                    .map(|p| p as u32)
            })
            .collect();
        self.detail = Some(Detail {
            owner,
            ..Detail::default()
        });
    }

    /// Into the detail, if kept: a sample at `time_ns` with each app's anonymous pages
    /// in memory (`in_memory`) in MiB (`mib`), out of `procs` processes.
    pub(super) fn detail_sample(
        &mut self,
        time_ns: u64,
        procs: usize,
        in_memory: impl Fn(PageId) -> bool,
        mib: impl Fn(usize) -> f64,
    ) {
        let Some(d) = &mut self.detail else {
            return;
        };
        let mut pages = vec![0usize; procs];
        for (page, owner) in d.owner.iter().enumerate() {
            if let Some(p) = owner {
                if in_memory(page as PageId) {
                    if let Some(n) = pages.get_mut(*p as usize) {
                        *n += 1;
                    }
                }
            }
        }
        d.sample_ns.push(time_ns);
        d.app_anon_mib.push(pages.into_iter().map(mib).collect());
    }

    /// Into the detail, if kept: `proc` was launched or killed at `time_ns`.
    pub(super) fn mark(&mut self, time_ns: u64, kind: MarkKind, proc: u32) {
        if let Some(d) = &mut self.detail {
            d.marks.push((time_ns, kind, proc));
        }
    }

    /// Count the pages with a frame of their own (`in_memory`) and the file pages in the
    /// buffer cache (`in_cache`): (file pages, anonymous pages).
    pub(super) fn resident(
        &self,
        in_memory: impl Fn(PageId) -> bool,
        in_cache: impl Fn(PageId) -> bool,
    ) -> (usize, usize) {
        let (mut file, mut anon) = (0, 0);
        for (page, &is_anon) in self.anon.iter().enumerate() {
            let page = page as PageId;
            if is_anon {
                anon += usize::from(in_memory(page));
            } else {
                file += usize::from(in_memory(page) || in_cache(page));
            }
        }
        (file, anon)
    }

    /// Record the phone's `state` at `time_s`; `mib` turns pages into MiB of the
    /// full-size phone.
    pub(super) fn record(
        &mut self,
        time_s: f64,
        event: SampleEvent,
        app: String,
        launch: Option<LaunchKind>,
        state: &State,
        mib: impl Fn(usize) -> f64,
    ) {
        self.samples.push(Sample {
            time_s,
            event,
            app,
            launch,
            launch_ms: None,
            free_mib: mib(state.free),
            page_cache_mib: mib(state.page_cache),
            anon_mib: mib(state.anon),
            swap_used_mib: mib(state.swap_used),
            zram_pool_mib: mib(state.zram_pool),
            ksm_saved_mib: mib(state.ksm_saved),
            kills: state.kills,
            swap_outs: state.swap_outs,
            swap_ins: state.swap_ins,
            file_reads: state.file_reads,
        });
    }

    /// Each launch's time, from the run's launch records: one per launch sample, in
    /// the same order.
    pub(super) fn set_launch_times(&mut self, records: &[LaunchRecord]) {
        let launches = self
            .samples
            .iter_mut()
            .filter(|s| s.event == SampleEvent::Launch);
        for (sample, record) in launches.zip(records) {
            debug_assert_eq!(sample.launch, Some(record.kind));
            sample.launch_ms = Some(record.launch_ns / 1e6);
        }
    }
}
