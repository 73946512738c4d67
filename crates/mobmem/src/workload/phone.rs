//! The `phone` workload: one day-in-the-life stream for the composed phone, in which
//! every technique has something to act on at once.
//!
//! - *Apps* take turns in the foreground, chosen by Zipf popularity. Each app has
//!   - anonymous *framework* pages: the Zygote-preloaded classes and resources every app
//!     maps, the same content in every app (what KSM merges across apps);
//!   - anonymous *heap* pages with Zipf popularity: a share is zero-filled and never
//!     written (KSM's zero-page merges), a share is rewritten periodically (volatile:
//!     KSM cannot keep them merged), the rest holds data of its own;
//!   - *code*: its APK and libraries, a file read at launch and during use
//!     (compressible: the compressed flash file system stores it compressed);
//!   - *media*: photos and videos it opens (incompressible: already compressed), read
//!     once, sequentially, a few files per session.
//! - A *session*: the app moves to the foreground (`oom_score_adj` 0, the previous app to
//!   700, the one before to 900); its launch touches the code and the framework and part
//!   of the heap within `launch_burst_ns`; then `inputs` interactions follow, each an
//!   input event and a burst of heap and code accesses, sometimes a media file.
//! - *Services* (at `oom_score_adj` 200) wake every `service_period_ns` and touch their
//!   own heap, whatever app is in front.
//!
//! Page counts are given at full scale and multiplied by `scale`, so that a phone and
//! its workload shrink together. Deterministic by seed (ChaCha8).

use rand::{Rng, RngCore, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

use super::sampling::{unit, zipf_weights, AliasTable};
use crate::core::mix64;
use crate::trace::{Event, Interner, PageId, PageKey, ProcId, Trace};
use crate::{Check, Error, Result};

/// `oom_score_adj` of a perceptible background service.
pub const ADJ_SERVICE: i16 = 200;
const FIRST_PID: u32 = 20_000;
const SERVICE_PID: u32 = 30_000;
/// File ids: per app its code, and its media files.
const CODE_FILE_BASE: u64 = 1_000;
const MEDIA_FILE_BASE: u64 = 1_000_000;
/// Fingerprint bases of the anonymous contents (see [`PhoneTrace::content`]).
const FRAMEWORK_CONTENT: u64 = 0x4652_414d_4557_4f52;
/// Largest counts a config may ask for, so that no config asks for more than memory holds.
pub const MAX_APPS: u32 = 200;
pub const MAX_SESSIONS: u32 = 10_000;
pub const MAX_EVENTS: u64 = 100_000_000;
/// Largest number of distinct pages the apps and services may own (media aside).
pub const MAX_PAGES: u64 = 1 << 25;

/// What an anonymous page holds, for KSM.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum AnonContent {
    /// Preloaded framework data: the same bytes in every app (index `k` of the framework).
    Framework(u32),
    /// Zero-filled, never written.
    Zero,
    /// Data of its own, rewritten every `period_ns` (0: never).
    Own { period_ns: u64 },
}

/// What a file page holds, for the file system.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum FileClass {
    /// Code and resources: compressible.
    Code,
    /// Photos and video: already compressed.
    Media,
}

/// The workload's knobs. Ranges `[min, max]` are inclusive, drawn per app or per session;
/// page counts are at full scale.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct PhoneWorkload {
    /// Multiplies every page count (a phone simulated at a fraction of its size).
    pub scale: f64,
    pub apps: u32,
    /// Foreground sessions (app switches).
    pub sessions: u32,
    /// Zipf exponent of the apps' popularity (which app the user opens next).
    pub app_zipf_exponent: f64,
    pub framework_pages: u32,
    pub heap_pages: [u32; 2],
    pub heap_zipf_exponent: f64,
    /// Share of heap pages that are zero-filled and never written.
    pub zero_share: f64,
    /// Share of heap pages rewritten every `volatile_period_ns`.
    pub volatile_share: f64,
    pub volatile_period_ns: u64,
    pub code_pages: [u32; 2],
    /// Pages of each media file.
    pub media_pages: [u32; 2],
    /// Chance that an interaction opens a media file.
    pub media_share: f64,
    /// Share of the heap touched at launch.
    pub launch_heap_share: f64,
    pub launch_burst_ns: u64,
    pub inputs: [u32; 2],
    /// Heap accesses per interaction, and the share that writes.
    pub accesses_per_input: u32,
    pub write_share: f64,
    /// Code accesses per interaction.
    pub code_per_input: u32,
    pub input_gap_ns: u64,
    pub services: u32,
    pub service_pages: u32,
    pub service_period_ns: u64,
    pub service_accesses: u32,
}

impl Default for PhoneWorkload {
    /// A current phone's day, compressed: 24 apps of 150-450 MiB of heap beside 50 MiB
    /// of framework each, 60 switches. Assumed sizes, in line with Android's reported
    /// per-app PSS of popular apps (100-500 MB).
    fn default() -> Self {
        PhoneWorkload {
            scale: 1.0,
            apps: 24,
            sessions: 60,
            app_zipf_exponent: 0.8,
            framework_pages: 12_800,
            heap_pages: [64_000, 192_000],
            heap_zipf_exponent: 0.9,
            zero_share: 0.08,
            volatile_share: 0.2,
            volatile_period_ns: 2_000_000_000,
            code_pages: [12_800, 38_400],
            media_pages: [800, 2_400],
            media_share: 0.15,
            launch_heap_share: 0.8,
            launch_burst_ns: 400_000_000,
            inputs: [8, 20],
            accesses_per_input: 300,
            write_share: 0.25,
            code_per_input: 40,
            input_gap_ns: 600_000_000,
            services: 3,
            service_pages: 25_600,
            service_period_ns: 5_000_000_000,
            service_accesses: 200,
        }
    }
}

impl PhoneWorkload {
    fn pages(&self, n: u32) -> u32 {
        ((n as f64 * self.scale).round() as u32).max(1)
    }

    pub fn validate(&self) -> Result<()> {
        let check = Check("phone workload");
        if !(self.scale.is_finite() && self.scale > 0.0 && self.scale <= 1.0) {
            return check.fail(format!("scale must be in (0, 1], got {}", self.scale));
        }
        check.range("apps", self.apps, 1..=MAX_APPS)?;
        check.range("sessions", self.sessions, 1..=MAX_SESSIONS)?;
        for (name, range) in crate::fields!(self; heap_pages, code_pages, media_pages, inputs) {
            check.min_max(name, range, 1, 1 << 22)?;
        }
        for (name, v) in crate::fields!(
            self; zero_share, volatile_share, media_share, launch_heap_share, write_share
        ) {
            check.share(name, v)?;
        }
        if self.zero_share + self.volatile_share > 1.0 {
            return check.fail("zero_share + volatile_share must be at most 1");
        }
        for (name, v) in crate::fields!(self; app_zipf_exponent, heap_zipf_exponent) {
            if !(v.is_finite() && v >= 0.0) {
                return check.fail(format!("{name} must be >= 0, got {v}"));
            }
        }
        if self.input_gap_ns == 0 || self.service_period_ns == 0 {
            return check.fail("input_gap_ns and service_period_ns must be at least 1");
        }
        let most_pages = self.apps as u64
            * (self.pages(self.framework_pages) as u64
                + self.pages(self.heap_pages[1]) as u64
                + self.pages(self.code_pages[1]) as u64)
            + self.services as u64 * self.pages(self.service_pages) as u64;
        if most_pages > MAX_PAGES {
            return check.fail(format!(
                "this config may make up to {most_pages} distinct pages before any media, more than {MAX_PAGES}: fewer apps or services, or smaller page counts"
            ));
        }
        check.range("services", self.services, 0..=MAX_APPS)?;
        let per_session = self.pages(self.code_pages[1]) as u64
            + self.pages(self.framework_pages) as u64
            + self.pages(self.heap_pages[1]) as u64
            + self.inputs[1] as u64
                * (self.accesses_per_input as u64
                    + self.code_per_input as u64
                    + self.pages(self.media_pages[1]) as u64
                    + 1);
        if per_session.saturating_mul(self.sessions as u64) > MAX_EVENTS {
            return check.fail(format!(
                "this config may make more than {MAX_EVENTS} events: fewer sessions, inputs or pages"
            ));
        }
        Ok(())
    }
}

/// `mobmem gen phone`: the trace alone (the composed phone also uses what its pages
/// hold, [`generate`]).
impl super::registry::Params for PhoneWorkload {
    fn validate(&self) -> Result<()> {
        PhoneWorkload::validate(self)
    }

    fn scale(&mut self, factor: f64) {
        self.sessions = super::registry::scaled_count(self.sessions, factor);
    }

    fn drop_background(&mut self) -> bool {
        self.services = 0;
        true
    }

    fn generate(&self, seed: u64) -> Result<crate::trace::Trace> {
        Ok(generate(self, seed)?.trace)
    }
}

/// A generated phone trace and what its pages hold.
#[derive(Debug, Clone)]
pub struct PhoneTrace {
    pub trace: Trace,
    /// Per page id: the anonymous content (None for file pages).
    pub content: Vec<Option<AnonContent>>,
    /// Per page id: the class of a file page (None for anonymous pages).
    pub file_class: Vec<Option<FileClass>>,
    /// Per process id: when it started, ns (its pages exist from then on).
    pub start_ns: Vec<u64>,
}

struct App {
    proc: ProcId,
    code: Vec<PageId>,
    framework: Vec<PageId>,
    heap: Vec<PageId>,
    heap_popularity: AliasTable,
    media_count: u64,
    started: bool,
}

struct Builder {
    rng: ChaCha8Rng,
    interner: Interner,
    events: Vec<Event>,
    content: Vec<Option<AnonContent>>,
    file_class: Vec<Option<FileClass>>,
    start_ns: Vec<u64>,
    now: u64,
}

impl Builder {
    fn page(&mut self, key: PageKey) -> Result<PageId> {
        let id = self
            .interner
            .page(key)
            .ok_or_else(|| Error::config("phone workload", "too many pages"))?;
        let need = id as usize + 1;
        if self.content.len() < need {
            self.content.resize(need, None);
            self.file_class.resize(need, None);
        }
        Ok(id)
    }

    fn anon(&mut self, pid: u32, vpn: u64, content: AnonContent) -> Result<PageId> {
        let id = self.page(PageKey::anon(pid as u64, vpn))?;
        self.content[id as usize] = Some(content);
        Ok(id)
    }

    fn file(&mut self, file: u64, index: u64, class: FileClass) -> Result<PageId> {
        let id = self.page(PageKey::file(file, index))?;
        self.file_class[id as usize] = Some(class);
        Ok(id)
    }

    fn process(&mut self, pid: u32, name: &str) -> Result<ProcId> {
        let proc = self
            .interner
            .start_process(pid, name)
            .ok_or_else(|| Error::config("phone workload", "too many processes"))?;
        if self.start_ns.len() <= proc as usize {
            self.start_ns.resize(proc as usize + 1, 0);
        }
        Ok(proc)
    }

    fn range(&mut self, [lo, hi]: [u32; 2]) -> u32 {
        self.rng.gen_range(lo..=hi)
    }

    fn chance(&mut self, p: f64) -> bool {
        unit(&mut self.rng) < p
    }

    fn access(&mut self, proc: ProcId, page: PageId, write: bool, anon: bool) {
        self.events
            .push(Event::access(self.now, proc, page, write, anon));
    }
}

/// Generate the phone workload for `seed`: the same config and seed give the same trace
/// on every machine.
pub fn generate(config: &PhoneWorkload, seed: u64) -> Result<PhoneTrace> {
    config.validate()?;
    let c = config;
    let mut b = Builder {
        rng: ChaCha8Rng::seed_from_u64(seed),
        interner: Interner::new(),
        events: Vec::new(),
        content: Vec::new(),
        file_class: Vec::new(),
        start_ns: Vec::new(),
        now: 0,
    };
    let framework_len = c.pages(c.framework_pages);
    let mut apps = Vec::with_capacity(c.apps as usize);
    for i in 0..c.apps {
        let pid = FIRST_PID + i;
        let proc = b.process(pid, &format!("com.example.phone{:02}", i + 1))?;
        let code_len = c.pages(b.range(c.code_pages));
        let heap_len = c.pages(b.range(c.heap_pages));
        let code = (0..code_len as u64)
            .map(|k| b.file(CODE_FILE_BASE + i as u64, k, FileClass::Code))
            .collect::<Result<Vec<_>>>()?;
        let framework = (0..framework_len)
            .map(|k| b.anon(pid, k as u64, AnonContent::Framework(k)))
            .collect::<Result<Vec<_>>>()?;
        let mut heap = Vec::with_capacity(heap_len as usize);
        for k in 0..heap_len as u64 {
            let draw = unit(&mut b.rng);
            let content = if draw < c.zero_share {
                AnonContent::Zero
            } else if draw < c.zero_share + c.volatile_share {
                AnonContent::Own {
                    period_ns: c.volatile_period_ns,
                }
            } else {
                AnonContent::Own { period_ns: 0 }
            };
            heap.push(b.anon(pid, framework_len as u64 + k, content)?);
        }
        let heap_popularity = AliasTable::new(&zipf_weights(heap.len(), c.heap_zipf_exponent))
            .ok_or_else(|| Error::config("phone workload", "bad heap popularity"))?;
        apps.push(App {
            proc,
            code,
            framework,
            heap,
            heap_popularity,
            media_count: 0,
            started: false,
        });
    }
    let mut services = Vec::new();
    for s in 0..c.services {
        let pid = SERVICE_PID + s;
        let proc = b.process(pid, &format!("com.example.service{:02}", s + 1))?;
        let pages = (0..c.pages(c.service_pages) as u64)
            .map(|k| {
                b.anon(
                    pid,
                    k,
                    AnonContent::Own {
                        period_ns: c.volatile_period_ns,
                    },
                )
            })
            .collect::<Result<Vec<_>>>()?;
        b.events.push(Event::start(0, proc));
        b.events.push(Event::importance(0, proc, ADJ_SERVICE));
        services.push((proc, pages));
    }
    let popularity = AliasTable::new(&zipf_weights(apps.len(), c.app_zipf_exponent))
        .ok_or_else(|| Error::config("phone workload", "bad app popularity"))?;
    let mut next_service_wake = c.service_period_ns;
    let (mut previous, mut before): (Option<usize>, Option<usize>) = (None, None);
    for _ in 0..c.sessions {
        let mut i = popularity.sample(b.rng.next_u64());
        if previous == Some(i) && apps.len() > 1 {
            i = (i + 1) % apps.len();
        }
        if !apps[i].started {
            apps[i].started = true;
            b.events.push(Event::start(b.now, apps[i].proc));
            b.start_ns[apps[i].proc as usize] = b.now;
        }
        b.events.extend(super::switch_events(
            b.now,
            before.filter(|&o| o != i).map(|old| apps[old].proc),
            previous.map(|prev| apps[prev].proc),
            apps[i].proc,
        ));
        session(&mut b, &mut apps[i], c)?;
        // Services that were due during the session wake at its end, in order.
        while next_service_wake <= b.now {
            for (proc, pages) in &services {
                for _ in 0..c.service_accesses {
                    let page = pages[b.rng.gen_range(0..pages.len())];
                    let write = b.chance(c.write_share);
                    b.access(*proc, page, write, true);
                }
            }
            next_service_wake += c.service_period_ns;
        }
        before = previous.filter(|&p| p != i);
        previous = Some(i);
    }
    let tables = b.interner.into_tables();
    let pages = tables.pages.len();
    b.content.resize(pages, None);
    b.file_class.resize(pages, None);
    b.start_ns.resize(tables.processes.len(), 0);
    Ok(PhoneTrace {
        trace: Trace {
            events: b.events,
            tables,
        },
        content: b.content,
        file_class: b.file_class,
        start_ns: b.start_ns,
    })
}

/// One foreground session of `app` from the builder's current time.
fn session(b: &mut Builder, app: &mut App, c: &PhoneWorkload) -> Result<()> {
    let start = b.now;
    let launch: Vec<(PageId, bool)> = (app.code.iter().map(|&p| (p, false)))
        .chain(app.framework.iter().map(|&p| (p, true)))
        .chain(
            app.heap
                .iter()
                .take((app.heap.len() as f64 * c.launch_heap_share) as usize)
                .map(|&p| (p, true)),
        )
        .collect();
    let gap = c.launch_burst_ns / (launch.len() as u64).max(1);
    for (k, &(page, anon)) in launch.iter().enumerate() {
        b.now = start + k as u64 * gap;
        let write = anon && b.chance(c.write_share);
        b.access(app.proc, page, write, anon);
    }
    b.now = start + c.launch_burst_ns;
    for _ in 0..b.range(c.inputs) {
        b.now += c.input_gap_ns;
        b.events.push(Event::input(b.now, app.proc));
        let step = c.input_gap_ns / 4 / (c.accesses_per_input + c.code_per_input).max(1) as u64;
        for _ in 0..c.code_per_input {
            let page = app.code[b.rng.gen_range(0..app.code.len())];
            b.access(app.proc, page, false, false);
            b.now += step;
        }
        for _ in 0..c.accesses_per_input {
            let page = app.heap[app.heap_popularity.sample(b.rng.next_u64())];
            let write = b.chance(c.write_share);
            b.access(app.proc, page, write, true);
            b.now += step;
        }
        if b.chance(c.media_share) {
            let file = MEDIA_FILE_BASE + ((app.proc as u64) << 20) + app.media_count;
            app.media_count += 1;
            for k in 0..c.pages(b.range(c.media_pages)) as u64 {
                let page = b.file(file, k, FileClass::Media)?;
                b.access(app.proc, page, false, false);
            }
        }
    }
    Ok(())
}

/// The KSM fingerprint of an anonymous page's content: framework pages share theirs
/// across apps; zero pages are the zero page; own data is unique to the page.
pub fn content_base(content: AnonContent, page: PageId) -> Option<u64> {
    match content {
        AnonContent::Framework(k) => Some(mix64(FRAMEWORK_CONTENT ^ k as u64)),
        AnonContent::Zero => None,
        AnonContent::Own { .. } => Some(mix64(0x4f57_4e00_0000_0000 ^ page as u64)),
    }
}
