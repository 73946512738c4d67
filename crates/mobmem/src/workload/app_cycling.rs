//! The `app-cycling` workload: 20 apps launched one after another in repeated rounds,
//! as the multi-swap paper's experiment did on a phone ("20 apps, launch sequences
//! repeated to cause swapping"). Deterministic by seed (ChaCha8 and the portable sampling
//! of [`super::sampling`]).
//!
//! Each app has anonymous memory in three parts (page counts drawn per app from the
//! configured ranges):
//! - a *launch set*, touched in a burst at every launch, in a new random order each time;
//! - a *heap* with Zipf popularity, drawn from during the session;
//! - *content*: pages each session allocates afresh (feeds, images, messages), touched a
//!   few times in their session; at the app's next session a share of them is looked at
//!   once more, then never again.
//!
//! A session: the app moves to the foreground (`oom_score_adj` 0; the previous app to
//! 700, the one before it to 900), its launch burst runs within `launch_burst_ns`, then
//! from `runtime_start_ns` after the launch the revisits, heap accesses and content
//! accesses follow at `access_gap_ns` apart. Each round launches every app once, in a
//! shuffled order (or by index). Apps never exit. `docs/swap.md` lists the defaults and
//! the properties measured on the output.

use rand::{Rng, RngCore, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

use super::registry::{scaled_count, Params};
use super::sampling::{unit, zipf_weights, AliasTable};
use crate::trace::{Event, Interner, PageId, PageKey, ProcId, Trace};
use crate::{Check, Error, Result};

/// The importance levels the generator assigns (Android's, in the trace model).
pub use crate::trace::{ADJ_CACHED, ADJ_PREVIOUS};

/// First pid of the apps; app `i` has pid `FIRST_PID + i`.
const FIRST_PID: u32 = 10_000;
/// Largest number of apps, rounds and pages of any part, so that a config cannot ask for
/// more events than memory can hold.
pub const MAX_APPS: u32 = 1000;
pub const MAX_ROUNDS: u32 = 1000;
pub const MAX_PAGES: u32 = 1 << 20;
/// Largest number of events a config may produce.
pub const MAX_EVENTS: u64 = 200_000_000;

/// The `app-cycling` workload. Ranges are `[min, max]`, inclusive, drawn per app (or per
/// session for `session_accesses` and `content_pages`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct AppCyclingConfig {
    pub apps: u32,
    pub rounds: u32,
    /// Launch the apps of each round in a new random order (otherwise by index).
    pub shuffle: bool,
    pub launch_pages: [u32; 2],
    pub heap_pages: [u32; 2],
    pub heap_zipf_exponent: f64,
    /// Heap accesses per session.
    pub session_accesses: [u32; 2],
    /// New content pages per session.
    pub content_pages: [u32; 2],
    /// Accesses to each content page in its session.
    pub content_touches: u32,
    /// Share of a session's content pages looked at once in the app's next session.
    pub revisit_share: f64,
    /// Share of launch-set and heap accesses that write (content is written when created).
    pub launch_write_share: f64,
    pub heap_write_share: f64,
    /// The launch burst is spread over this long after the launch, ns.
    pub launch_burst_ns: u64,
    /// The rest of the session starts this long after the launch, ns.
    pub runtime_start_ns: u64,
    /// Time between two runtime accesses, ns.
    pub access_gap_ns: u64,
    /// Time between the last access of a session and the next launch, ns.
    pub switch_gap_ns: u64,
}

impl Default for AppCyclingConfig {
    /// Tuned with the default `SwapConfig` (32768 pages of DRAM) so that memory pressure
    /// swaps most of an app out between its sessions and a little over half of the
    /// swap-ins are of pages swapped in only once, as the paper measured on Android.
    fn default() -> Self {
        AppCyclingConfig {
            apps: 20,
            rounds: 6,
            shuffle: true,
            launch_pages: [800, 2000],
            heap_pages: [3000, 8000],
            heap_zipf_exponent: 1.0,
            session_accesses: [4000, 8000],
            content_pages: [2500, 5000],
            content_touches: 3,
            revisit_share: 0.7,
            launch_write_share: 0.1,
            heap_write_share: 0.3,
            launch_burst_ns: 200_000_000,
            runtime_start_ns: 1_000_000_000,
            access_gap_ns: 1_000_000,
            switch_gap_ns: 500_000_000,
        }
    }
}

impl AppCyclingConfig {
    /// An upper bound on the trace's last time stamp.
    fn max_duration_ns(&self) -> u128 {
        let sessions = self.apps as u128 * self.rounds as u128;
        let per_session = self.runtime_start_ns as u128
            + self.switch_gap_ns as u128
            + self.max_events() as u128 * self.access_gap_ns as u128 / sessions.max(1);
        sessions * per_session
    }

    /// An upper bound on the events of the trace.
    pub fn max_events(&self) -> u64 {
        let per_session = self.launch_pages[1] as u64
            + self.session_accesses[1] as u64
            + 2 * self.content_pages[1] as u64 * self.content_touches as u64
            + 4;
        self.apps as u64 * self.rounds as u64 * per_session
    }
}

impl Params for AppCyclingConfig {
    /// Check every field; the error names the first one that is out of range.
    fn validate(&self) -> Result<()> {
        let check = Check("app-cycling workload");
        check.range("apps", self.apps, 1..=MAX_APPS)?;
        check.range("rounds", self.rounds, 1..=MAX_ROUNDS)?;
        for (name, range, least) in [
            ("launch_pages", self.launch_pages, 0),
            ("heap_pages", self.heap_pages, 1),
            ("session_accesses", self.session_accesses, 0),
            ("content_pages", self.content_pages, 0),
        ] {
            check.min_max(name, range, least, MAX_PAGES)?;
        }
        check.range("content_touches", self.content_touches, 1..=1000)?;
        let zipf = self.heap_zipf_exponent;
        if !(zipf.is_finite() && zipf >= 0.0) {
            return check.fail(format!(
                "heap_zipf_exponent must be a finite number >= 0, got {zipf}"
            ));
        }
        for (name, share) in
            crate::fields!(self; revisit_share, launch_write_share, heap_write_share)
        {
            check.share(name, share)?;
        }
        if self.runtime_start_ns < self.launch_burst_ns {
            return check.fail(format!(
                "runtime_start_ns ({}) must not be before the end of the launch burst ({})",
                self.runtime_start_ns, self.launch_burst_ns
            ));
        }
        if self.max_events() > MAX_EVENTS {
            return check.fail(format!(
                "would make up to {} events, more than {MAX_EVENTS}",
                self.max_events()
            ));
        }
        if self.max_duration_ns() > u64::MAX as u128 {
            return check.fail(
                "gaps so long that time stamps would overflow 64-bit nanoseconds".to_string(),
            );
        }
        Ok(())
    }
    fn scale(&mut self, factor: f64) {
        self.rounds = scaled_count(self.rounds, factor);
    }

    fn generate(&self, seed: u64) -> Result<Trace> {
        generate(self, seed)
    }
}

struct App {
    proc: ProcId,
    pid: u32,
    launch: Vec<PageId>,
    heap: Vec<PageId>,
    heap_popularity: AliasTable,
    /// Virtual page number of the next content page.
    next_content_vpn: u64,
    /// Content pages of the last session, to revisit in the next.
    last_content: Vec<PageId>,
}

struct Builder {
    rng: ChaCha8Rng,
    interner: Interner,
    events: Vec<Event>,
    now: u64,
}

impl Builder {
    fn page(&mut self, pid: u32, vpn: u64) -> Result<PageId> {
        self.interner
            .page(PageKey::anon(pid as u64, vpn))
            .ok_or_else(|| Error::config("app-cycling workload", "too many pages"))
    }

    fn range(&mut self, [min, max]: [u32; 2]) -> u32 {
        self.rng.gen_range(min..=max)
    }

    fn chance(&mut self, p: f64) -> bool {
        unit(&mut self.rng) < p
    }

    fn access(&mut self, proc: ProcId, page: PageId, write: bool) {
        self.events
            .push(Event::access(self.now, proc, page, write, true));
    }
}

/// Generate the trace of `config` for `seed`: the same config and seed give the same
/// trace on every machine.
pub fn generate(config: &AppCyclingConfig, seed: u64) -> Result<Trace> {
    config.validate()?;
    let mut b = Builder {
        rng: ChaCha8Rng::seed_from_u64(seed),
        interner: Interner::new(),
        events: Vec::new(),
        now: 0,
    };
    let mut apps = Vec::with_capacity(config.apps as usize);
    for i in 0..config.apps {
        let pid = FIRST_PID + i;
        let proc = b
            .interner
            .start_process(pid, &format!("com.example.app{:02}", i + 1))
            .ok_or_else(|| Error::config("app-cycling workload", "too many processes"))?;
        let launch_len = b.range(config.launch_pages);
        let heap_len = b.range(config.heap_pages);
        // Interned in address order so page ids group by app and part.
        let launch = (0..launch_len as u64)
            .map(|vpn| b.page(pid, vpn))
            .collect::<Result<Vec<_>>>()?;
        let heap = (0..heap_len as u64)
            .map(|k| b.page(pid, launch_len as u64 + k))
            .collect::<Result<Vec<_>>>()?;
        let weights = zipf_weights(heap.len(), config.heap_zipf_exponent);
        let heap_popularity = AliasTable::new(&weights)
            .ok_or_else(|| Error::config("app-cycling workload", "bad heap popularity"))?;
        apps.push(App {
            proc,
            pid,
            launch,
            heap,
            heap_popularity,
            next_content_vpn: launch_len as u64 + heap_len as u64,
            last_content: Vec::new(),
        });
    }

    let mut order: Vec<usize> = (0..apps.len()).collect();
    let mut started = vec![false; apps.len()];
    let (mut previous, mut before_previous): (Option<usize>, Option<usize>) = (None, None);
    for _ in 0..config.rounds {
        if config.shuffle {
            shuffle(&mut order, &mut b.rng);
            // Never launch the app that is already in the foreground.
            if order.len() > 1 && previous == Some(order[0]) {
                order.swap(0, 1);
            }
        }
        for &i in &order {
            if !started[i] {
                started[i] = true;
                b.events.push(Event::start(b.now, apps[i].proc));
            }
            b.events.extend(super::switch_events(
                b.now,
                before_previous.map(|old| apps[old].proc),
                previous.map(|prev| apps[prev].proc),
                apps[i].proc,
            ));
            session(&mut b, &mut apps[i], config)?;
            before_previous = previous.filter(|&p| p != i);
            previous = Some(i);
        }
    }
    Ok(Trace {
        events: b.events,
        tables: b.interner.into_tables(),
    })
}

/// Fisher-Yates with the builder's generator.
fn shuffle<T>(items: &mut [T], rng: &mut ChaCha8Rng) {
    for i in (1..items.len()).rev() {
        let j = rng.gen_range(0..=i);
        items.swap(i, j);
    }
}

/// One foreground session of `app`, starting at the builder's current time.
fn session(b: &mut Builder, app: &mut App, config: &AppCyclingConfig) -> Result<()> {
    let launch_time = b.now;
    // The launch burst.
    let mut launch = app.launch.clone();
    shuffle(&mut launch, &mut b.rng);
    let gap = config.launch_burst_ns / (launch.len() as u64).max(1);
    for (k, &page) in launch.iter().enumerate() {
        b.now = launch_time + k as u64 * gap;
        let write = b.chance(config.launch_write_share);
        b.access(app.proc, page, write);
    }

    // The runtime: revisits first, then heap accesses with content bursts among them.
    b.now = launch_time + config.runtime_start_ns;
    let revisits: Vec<PageId> = std::mem::take(&mut app.last_content)
        .into_iter()
        .filter(|_| b.chance(config.revisit_share))
        .collect();
    for page in revisits {
        b.access(app.proc, page, false);
        b.now += config.access_gap_ns;
    }
    let heap_accesses = b.range(config.session_accesses) as usize;
    let content = b.range(config.content_pages) as usize;
    // Where each content burst goes among the heap accesses.
    let mut slots: Vec<usize> = (0..content)
        .map(|_| b.rng.gen_range(0..=heap_accesses))
        .collect();
    slots.sort_unstable();
    let mut next_slot = 0;
    for step in 0..=heap_accesses {
        while next_slot < slots.len() && slots[next_slot] == step {
            let vpn = app.next_content_vpn;
            app.next_content_vpn += 1;
            let page = b.page(app.pid, vpn)?;
            for touch in 0..config.content_touches {
                b.access(app.proc, page, touch == 0);
                b.now += config.access_gap_ns;
            }
            app.last_content.push(page);
            next_slot += 1;
        }
        if step < heap_accesses {
            let rank = app.heap_popularity.sample(b.rng.next_u64());
            let write = b.chance(config.heap_write_share);
            b.access(app.proc, app.heap[rank], write);
            b.now += config.access_gap_ns;
        }
    }
    b.now += config.switch_gap_ns;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::ADJ_FOREGROUND;

    #[test]
    fn small_configs_are_deterministic_and_well_formed() {
        let config = AppCyclingConfig {
            apps: 3,
            rounds: 2,
            launch_pages: [5, 10],
            heap_pages: [20, 40],
            session_accesses: [30, 60],
            content_pages: [2, 5],
            ..Default::default()
        };
        let a = generate(&config, 7).unwrap();
        assert_eq!(a, generate(&config, 7).unwrap());
        assert_ne!(a, generate(&config, 8).unwrap());
        assert!(a
            .events
            .windows(2)
            .all(|w| w[0].time_ns() <= w[1].time_ns()));
        assert_eq!(a.tables.processes.len(), 3);
        // 3 apps x 2 rounds = 6 launches.
        let launches = a
            .events
            .iter()
            .filter(|e| {
                e.kind() == crate::trace::EventKind::Importance
                    && e.oom_score_adj() == ADJ_FOREGROUND
            })
            .count();
        assert_eq!(launches, 6);
        assert!(a.accesses().all(|e| e.is_anon()));
        assert!(a.events.len() as u64 <= config.max_events());
    }

    #[test]
    fn bad_configs_name_the_field() {
        type Change = fn(&mut AppCyclingConfig);
        let cases: [(Change, &str); 6] = [
            (|c| c.apps = 0, "apps"),
            (|c| c.heap_pages = [10, 5], "heap_pages"),
            (|c| c.revisit_share = 1.5, "revisit_share"),
            (|c| c.heap_zipf_exponent = f64::NAN, "heap_zipf_exponent"),
            (
                |c| {
                    c.apps = MAX_APPS;
                    c.rounds = MAX_ROUNDS;
                },
                "events",
            ),
            (|c| c.access_gap_ns = u64::MAX / 2, "overflow"),
        ];
        for (change, word) in cases {
            let mut config = AppCyclingConfig::default();
            change(&mut config);
            let err = generate(&config, 1).unwrap_err().to_string();
            assert!(err.contains(word), "'{err}' should name {word}");
        }
    }
}
