//! The one event loop. Every mechanism that replays a trace (the placement simulator,
//! the swap machine, Linux reclaim) is an [`EventHandler`]: it says what each kind of
//! event does to it, and [`dispatch`], [`replay`] and [`replay_source`] feed it the
//! events in order. A handler leaves out the kinds it ignores (the defaults do
//! nothing), so what a mechanism reacts to is read from its `impl`.
//!
//! Dispatch is generic, not dynamic, so the per-event cost is a `match` on the kind and
//! a direct (inlinable) call.
//!
//! **Timers.** A handler that acts on its own clock as well as on events (a kernel
//! thread that wakes periodically: ksmd; a flusher; kswapd's timeouts) sets a timer:
//! [`EventHandler::next_wake`] says when its next wake-up is due, in the trace's time.
//! Before each event, [`dispatch`] fires every wake-up due at or before the event's
//! time, in time order, by calling [`EventHandler::wake`] with that wake-up's time and
//! asking again ([`fire_due`]); then the event's tick and its method follow. The
//! contract:
//! - `next_wake` MUST NOT change state, and after `wake(at)` it MUST say a time after
//!   `at`, or `None` (a wake-up may set the next one, as a periodic timer does); a
//!   handler that does not is an error of the event, not a loop;
//! - a handler with several timers says the earliest and, woken, fires what is due at
//!   that time;
//! - wake-ups come only between events: none fires after the trace's last event,
//!   and one due at the same time as an event fires before it;
//! - the order is fixed by the times and the events alone, so runs stay deterministic.
//!
//! Handlers without timers leave both methods out; the check costs them one inlined
//! `None` per event.

use crate::trace::{Event, EventKind, EventSource, ProcId};
use crate::{Error, Result};

/// A mechanism driven by a trace's events.
pub trait EventHandler {
    /// Check the invariants of the memory the mechanism runs on: every page in exactly
    /// one place, every frame and swap slot accounted for, the mechanism's own order
    /// holding exactly its resident pages. O(pages): the loops call it only inside
    /// [`with_checks`]. The message says which invariant broke.
    fn check(&self) -> std::result::Result<(), String>;

    /// Every event, before the method of its kind: the mechanism's clock.
    #[inline]
    fn tick(&mut self, _event: &Event) {}

    /// A page access.
    fn access(&mut self, event: &Event) -> Result<()>;

    /// An access some events ahead: a hint to bring the page's entries into the cache
    /// (see [`crate::core::prefetch`]); it must not change any state.
    #[inline]
    fn prefetch(&self, _event: &Event) {}

    /// An access twice as far ahead as [`EventHandler::prefetch`]'s: a hint to bring in
    /// what `prefetch` will read to find the page's entries (a renumbering of page ids).
    #[inline]
    fn prefetch_far(&self, _event: &Event) {}

    /// A process's `oom_score_adj` changed.
    #[inline]
    fn importance(&mut self, _proc: ProcId, _oom_score_adj: i16) -> Result<()> {
        Ok(())
    }

    /// A process started.
    #[inline]
    fn start(&mut self, _proc: ProcId) -> Result<()> {
        Ok(())
    }

    /// A process exited.
    #[inline]
    fn exit(&mut self, _proc: ProcId) -> Result<()> {
        Ok(())
    }

    /// A process received user input (the interactive task).
    #[inline]
    fn input(&mut self, _proc: ProcId) -> Result<()> {
        Ok(())
    }

    /// The kernel swapped a page out (captured swap traces).
    #[inline]
    fn swap_out(&mut self, _event: &Event) -> Result<()> {
        Ok(())
    }

    /// The kernel swapped a page in (captured swap traces).
    #[inline]
    fn swap_in(&mut self, _event: &Event) -> Result<()> {
        Ok(())
    }

    /// When the handler's next timer wake-up is due, ns in the trace's time (`None`:
    /// no timer set). See the module's contract.
    #[inline]
    fn next_wake(&self) -> Option<u64> {
        None
    }

    /// The timer wake-up due at `at_ns` (what [`EventHandler::next_wake`] said) fires.
    #[inline]
    fn wake(&mut self, _at_ns: u64) -> Result<()> {
        Ok(())
    }
}

/// Fire every timer wake-up of `handler` due at or before `now_ns`, in time order (see
/// the module's contract).
#[inline]
pub fn fire_due<H: EventHandler + ?Sized>(handler: &mut H, now_ns: u64) -> Result<()> {
    while let Some(at) = handler.next_wake() {
        if at > now_ns {
            break;
        }
        handler.wake(at)?;
        if let Some(next) = handler.next_wake().filter(|&next| next <= at) {
            return Err(Error::config(
                "event loop",
                format!("a timer woken at {at} ns set its next wake-up at {next} ns, not later"),
            ));
        }
    }
    Ok(())
}

/// Feed one event to `handler`: first the timer wake-ups due by its time, then the
/// event.
#[inline]
pub fn dispatch<H: EventHandler + ?Sized>(handler: &mut H, event: &Event) -> Result<()> {
    fire_due(handler, event.time_ns())?;
    handler.tick(event);
    let proc = event.proc();
    match event.kind() {
        EventKind::Access => handler.access(event),
        EventKind::Importance => handler.importance(proc, event.oom_score_adj()),
        EventKind::Start => handler.start(proc),
        EventKind::Exit => handler.exit(proc),
        EventKind::Input => handler.input(proc),
        EventKind::SwapOut => handler.swap_out(event),
        EventKind::SwapIn => handler.swap_in(event),
    }
}

/// An error a handler returned, with the position of the event that caused it.
#[derive(Debug)]
pub struct EventError {
    /// The event's index in the trace.
    pub index: u64,
    pub error: Error,
}

impl EventError {
    /// The error, with `run` and the event's index as its context
    /// ("swap run, event 12: ...").
    pub fn in_run(self, run: &str) -> Error {
        Error::config(
            format!("{run}, event {}", self.index),
            self.error.to_string(),
        )
    }

    /// The handler's own error (for handlers whose errors already name the event).
    pub fn into_inner(self) -> Error {
        self.error
    }
}

/// Feed every event of a trace in memory, in order.
pub fn replay<H: EventHandler + ?Sized>(
    handler: &mut H,
    events: &[Event],
) -> std::result::Result<(), EventError> {
    // One batch of all the events: the same loop as a stream's, prefetching ahead.
    replay_batch(handler, events, 0)?;
    check_at_end(handler, checks_every(), events.len() as u64)
}

thread_local! {
    /// Check the memory every this many events (0: never); see [`with_checks`].
    static CHECK_EVERY: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

/// Run `f` with every event loop on this thread calling its handler's
/// [`EventHandler::check`] after every `every` events and after the last one (0: not
/// at all), as the property tests do; a broken invariant ends the run with
/// [`Error::Invariant`](crate::Error::Invariant) at the event after which it was found.
/// Runs that are not event loops (ksmd's own clock, the file system's reads) consult
/// [`checks_every`] themselves.
pub fn with_checks<T>(every: u64, f: impl FnOnce() -> T) -> T {
    let before = CHECK_EVERY.with(|c| c.replace(every));
    // Restored even if `f` unwinds, so that a caught panic leaves no checking behind.
    struct Restore(u64);
    impl Drop for Restore {
        fn drop(&mut self) {
            CHECK_EVERY.with(|c| c.set(self.0));
        }
    }
    let _restore = Restore(before);
    f()
}

/// For a run that is not an event loop: `check` after its `done`-th step, when checks
/// are on and one is due (every [`checks_every`] steps).
pub fn check_step(
    done: u64,
    check: impl FnOnce() -> std::result::Result<(), String>,
) -> crate::Result<()> {
    let every = checks_every();
    if every != 0 && done.is_multiple_of(every) {
        check().map_err(crate::Error::Invariant)?;
    }
    Ok(())
}

/// How often the loops on this thread check the memory, in events (0: never).
pub fn checks_every() -> u64 {
    CHECK_EVERY.with(|c| c.get())
}

/// After the last of `events` events: the handler's check, when checking.
fn check_at_end<H: EventHandler + ?Sized>(
    handler: &H,
    every: u64,
    events: u64,
) -> std::result::Result<(), EventError> {
    if every == 0 || events == 0 || events.is_multiple_of(every) {
        return Ok(()); // not checking, nothing done, or just checked
    }
    check_if_due(handler, 1, events - 1)
}

/// After event `index`: the handler's check, when one is due every `every` events.
#[inline]
fn check_if_due<H: EventHandler + ?Sized>(
    handler: &H,
    every: u64,
    index: u64,
) -> std::result::Result<(), EventError> {
    if every != 0 && (index + 1).is_multiple_of(every) {
        handler.check().map_err(|m| EventError {
            index,
            error: crate::Error::Invariant(m),
        })?;
    }
    Ok(())
}

/// Events read from a source per batch.
const BATCH: usize = 1 << 14;

/// How many events ahead the loop names an access to [`EventHandler::prefetch`]: far
/// enough for a memory read to complete, near enough for it to stay in the cache.
const PREFETCH_AHEAD: usize = 8;

/// Batches the reading thread may have ready ahead of the simulation.
const BATCHES_AHEAD: usize = 2;

/// Feed every event of a streamed source, in order, in batches; `progress` is called
/// after each batch with the number of events done. The source is read as
/// [`for_each_batch`] says.
pub fn replay_source<H: EventHandler + ?Sized>(
    handler: &mut H,
    source: &mut (dyn EventSource + Send),
    progress: &mut dyn FnMut(u64),
) -> std::result::Result<(), EventError> {
    let mut done = 0;
    for_each_batch(source, &mut |batch, first| {
        replay_batch(handler, batch, first)?;
        done = first + batch.len() as u64;
        progress(done);
        Ok(())
    })?;
    check_at_end(handler, checks_every(), done)
}

/// What [`for_each_batch`] calls on a batch: its events and the index of the first.
pub type BatchFn<'a> = dyn FnMut(&[Event], u64) -> std::result::Result<(), EventError> + 'a;

/// Call `each` on every batch of a streamed source, in order, with the index of the
/// batch's first event; the first error stops the reading.
///
/// With two threads or more allowed (rayon's pool, which `--threads` sets), the source
/// is read on a thread of its own, a few batches ahead, so that decoding (parsing text,
/// interning page keys) and the work on the events run at the same time on two cores;
/// `each` still sees every batch in the trace's order, so the results are the same
/// either way. Memory stays a few batches. When `each` fails, the reader stops at its
/// next batch. A source that reads ahead on a thread of its own
/// ([`EventSource::reads_ahead`]: text traces by a column spec) is read on the caller's.
pub fn for_each_batch(
    source: &mut (dyn EventSource + Send),
    each: &mut BatchFn<'_>,
) -> std::result::Result<(), EventError> {
    let mut done = 0u64;
    if rayon::current_num_threads() < 2 || source.reads_ahead() {
        let mut batch = Vec::with_capacity(BATCH);
        while source
            .read_batch(&mut batch, BATCH)
            .map_err(|error| EventError { index: done, error })?
        {
            each(&batch, done)?;
            done += batch.len() as u64;
        }
        return Ok(());
    }
    use std::sync::mpsc;
    std::thread::scope(|scope| {
        let (ready, batches) = mpsc::sync_channel::<crate::Result<Vec<Event>>>(BATCHES_AHEAD);
        let (give_back, returned) = mpsc::channel::<Vec<Event>>();
        scope.spawn(move || loop {
            let mut batch = returned
                .try_recv()
                .unwrap_or_else(|_| Vec::with_capacity(BATCH));
            match source.read_batch(&mut batch, BATCH) {
                Ok(true) => {
                    if ready.send(Ok(batch)).is_err() {
                        return; // The consumer stopped.
                    }
                }
                Ok(false) => return,
                Err(error) => {
                    let _ = ready.send(Err(error));
                    return;
                }
            }
        });
        for batch in batches {
            let batch = batch.map_err(|error| EventError { index: done, error })?;
            each(&batch, done)?;
            done += batch.len() as u64;
            // The reader may be gone already; the batch is then simply dropped.
            let _ = give_back.send(batch);
        }
        Ok(())
    })
}

/// The events of one batch, the first being event `first` of the trace, with the access
/// [`PREFETCH_AHEAD`] events on named to the handler's prefetch.
fn replay_batch<H: EventHandler + ?Sized>(
    handler: &mut H,
    batch: &[Event],
    first: u64,
) -> std::result::Result<(), EventError> {
    // Chosen once a batch, so that the loop of an unchecked run has no check in it.
    match checks_every() {
        0 => replay_batch_checking::<H, false>(handler, batch, first, 0),
        every => replay_batch_checking::<H, true>(handler, batch, first, every),
    }
}

/// [`replay_batch`], checking the memory every `every` events when `CHECKING`.
#[inline(always)]
fn replay_batch_checking<H: EventHandler + ?Sized, const CHECKING: bool>(
    handler: &mut H,
    batch: &[Event],
    first: u64,
    every: u64,
) -> std::result::Result<(), EventError> {
    for (i, event) in batch.iter().enumerate() {
        if let Some(far) = batch.get(i + 2 * PREFETCH_AHEAD) {
            if far.is_access() {
                handler.prefetch_far(far);
            }
        }
        if let Some(ahead) = batch.get(i + PREFETCH_AHEAD) {
            if ahead.is_access() {
                handler.prefetch(ahead);
            }
        }
        dispatch(handler, event).map_err(|error| EventError {
            index: first + i as u64,
            error,
        })?;
        if CHECKING {
            check_if_due(handler, every, first + i as u64)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Records what it was told, in order; fails on the access to page 9; its check
    /// finds a broken invariant once page 7 was accessed.
    #[derive(Default)]
    struct Log(Vec<String>);

    impl EventHandler for Log {
        fn check(&self) -> std::result::Result<(), String> {
            if self.0.iter().any(|e| e == "a7") {
                return Err("page 7 in two places".into());
            }
            Ok(())
        }

        fn tick(&mut self, event: &Event) {
            self.0.push(format!("t{}", event.time_ns()));
        }
        fn access(&mut self, event: &Event) -> Result<()> {
            if event.page() == 9 {
                return Err(Error::config("log", "page 9"));
            }
            self.0.push(format!("a{}", event.page()));
            Ok(())
        }
        fn importance(&mut self, proc: ProcId, adj: i16) -> Result<()> {
            self.0.push(format!("i{proc}={adj}"));
            Ok(())
        }
    }

    #[test]
    fn each_kind_reaches_its_method_and_errors_name_the_event() {
        let events = [
            Event::start(1, 4),
            Event::importance(2, 4, 0),
            Event::access(3, 4, 7, false, true),
            Event::input(4, 4),
            Event::access(5, 4, 9, true, true),
            Event::access(6, 4, 8, false, true),
        ];
        let mut log = Log::default();
        let error = replay(&mut log, &events).unwrap_err();
        // Start and input are ignored by default; the clock sees every event.
        assert_eq!(log.0, ["t1", "t2", "i4=0", "t3", "a7", "t4", "t5"]);
        assert_eq!(error.index, 4);
        let message = error.in_run("log run").to_string();
        assert!(message.contains("log run, event 4"), "{message}");
        assert!(message.contains("page 9"), "{message}");
    }

    /// Reads by process 0 of the pages at the times given, as `(time, page)`.
    fn reads(at: &[(u64, crate::trace::PageId)]) -> Vec<Event> {
        (at.iter())
            .map(|&(t, page)| Event::access(t, 0, page, false, true))
            .collect()
    }

    #[test]
    fn checks_run_when_due_and_at_the_end_only_inside_with_checks() {
        let events = reads(&[(1, 1), (2, 7), (3, 2), (4, 3)]);
        let broken_at = |every: u64| {
            let mut log = Log::default();
            match with_checks(every, || replay(&mut log, &events)) {
                Ok(()) => None,
                Err(e) => {
                    assert!(matches!(e.error, Error::Invariant(_)), "{e:?}");
                    Some(e.index)
                }
            }
        };
        assert_eq!(broken_at(0), None, "no checks outside with_checks");
        assert_eq!(broken_at(1), Some(1), "checked after every event");
        assert_eq!(broken_at(3), Some(2), "checked after the third");
        assert_eq!(broken_at(10), Some(3), "checked after the last");
        assert_eq!(checks_every(), 0, "with_checks leaves no checking behind");
        let mut log = Log::default();
        assert!(replay(&mut log, &events).is_ok());
    }

    /// A timer every `period` ns from `period` on, logging its wake-ups and the events
    /// it sees; `stuck` makes a wake-up leave the timer where it was; a wake-up at
    /// `fail_at` fails.
    struct Periodic {
        log: Vec<String>,
        next: Option<u64>,
        period: u64,
        stuck: bool,
        fail_at: u64,
    }

    impl Periodic {
        fn new(period: u64) -> Self {
            Periodic {
                log: Vec::new(),
                next: Some(period),
                period,
                stuck: false,
                fail_at: u64::MAX,
            }
        }
    }

    impl EventHandler for Periodic {
        fn check(&self) -> std::result::Result<(), String> {
            Ok(())
        }

        fn tick(&mut self, event: &Event) {
            self.log.push(format!("t{}", event.time_ns()));
        }
        fn access(&mut self, event: &Event) -> Result<()> {
            self.log.push(format!("a{}", event.page()));
            Ok(())
        }
        fn next_wake(&self) -> Option<u64> {
            self.next
        }
        fn wake(&mut self, at_ns: u64) -> Result<()> {
            if at_ns == self.fail_at {
                return Err(Error::config("timer", "wake-up failed"));
            }
            self.log.push(format!("w{at_ns}"));
            if !self.stuck {
                // Stops after 40 ns.
                self.next = Some(at_ns + self.period).filter(|&t| t <= 40);
            }
            Ok(())
        }
    }

    #[test]
    fn timers_fire_in_time_order_before_the_events_they_precede() {
        let events = reads(&[(5, 1), (25, 2), (30, 3), (100, 4)]);
        let mut h = Periodic::new(10);
        replay(&mut h, &events).unwrap();
        // 10 and 20 before the event at 25; 30 before the event at 30 (due at its
        // time); 40 before 100, then the timer stops; nothing after the last event.
        assert_eq!(
            h.log,
            ["t5", "a1", "w10", "w20", "t25", "a2", "w30", "t30", "a3", "w40", "t100", "a4"]
        );
        // Fired by hand up to a time, as the loop does.
        let mut h = Periodic::new(10);
        fire_due(&mut h, 25).unwrap();
        assert_eq!(h.log, ["w10", "w20"]);
        assert_eq!(h.next_wake(), Some(30));
    }

    #[test]
    fn a_timer_that_does_not_move_on_or_fails_is_an_error_of_its_event() {
        let events = [
            Event::access(5, 0, 1, false, true),
            Event::access(15, 0, 2, false, true),
        ];
        let mut h = Periodic::new(10);
        h.stuck = true;
        let error = replay(&mut h, &events).unwrap_err();
        assert_eq!(error.index, 1);
        let message = error.error.to_string();
        assert!(message.contains("not later"), "{message}");
        assert_eq!(
            h.log,
            ["t5", "a1", "w10"],
            "it fired once, then stopped the loop"
        );

        let mut h = Periodic::new(10);
        h.fail_at = 20;
        let error = replay(&mut h, &[Event::access(35, 0, 1, false, true)]).unwrap_err();
        assert_eq!(error.index, 0);
        assert!(error.error.to_string().contains("wake-up failed"));
        assert_eq!(
            h.log,
            ["w10"],
            "the event after a failed wake-up is not served"
        );
    }

    /// Batches of 3 accesses to pages 0, 1, 2, ... up to `pages`, then a read error
    /// if `fails`.
    struct Batches {
        next: u32,
        pages: u32,
        fails: bool,
    }

    impl Batches {
        fn new(pages: u32, fails: bool) -> Self {
            Batches {
                next: 0,
                pages,
                fails,
            }
        }
    }

    impl EventSource for Batches {
        fn read_batch(&mut self, buf: &mut Vec<Event>, _max: usize) -> Result<bool> {
            buf.clear();
            if self.next >= self.pages {
                if self.fails {
                    return Err(Error::config("source", "bad record"));
                }
                return Ok(false);
            }
            for _ in 0..3 {
                buf.push(Event::access(
                    u64::from(self.next),
                    0,
                    self.next,
                    false,
                    false,
                ));
                self.next += 1;
            }
            Ok(true)
        }

        fn tables(&mut self) -> Result<crate::trace::Tables> {
            Ok(Default::default())
        }
    }

    /// The streamed replay, on one thread or with the reader on its own: every event in
    /// order, progress after each batch, and errors of the handler and of the source at
    /// their event, the reader stopping when the handler fails.
    #[test]
    fn streamed_replay_in_order_and_errors_at_their_event() {
        for threads in [1, 2] {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap();
            pool.install(|| {
                let mut log = Log::default();
                let mut progress = Vec::new();
                let mut source = Batches::new(9, false);
                replay_source(&mut log, &mut source, &mut |d| progress.push(d)).unwrap();
                assert_eq!(log.0.len(), 18, "a tick and an access each");
                assert_eq!(log.0[17], "a8");
                assert_eq!(progress, [3, 6, 9]);

                let mut source = Batches::new(30, false);
                let err = replay_source(&mut Log::default(), &mut source, &mut |_| {}).unwrap_err();
                assert_eq!(err.index, 9, "the access to page 9 fails");
                assert!(
                    source.next < 30,
                    "the reader stopped early ({})",
                    source.next
                );

                let mut source = Batches::new(6, true);
                let err = replay_source(&mut Log::default(), &mut source, &mut |_| {}).unwrap_err();
                assert_eq!(err.index, 6, "the read after 6 events fails");
            });
        }
    }
}
