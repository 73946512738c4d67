//! The foreground app of a trace that never says which app is in the foreground (block
//! I/O traces such as the Pixel 6a ones of the `mobile-block` preset carry no importance
//! events, so every process reads as background).
//!
//! The rule ([`derive_foreground`]): of the processes that are not kernel threads
//! ([`is_kernel_thread`]) and have a name, the one with the most accesses is the
//! foreground app (ties: the one seen first). [`mark_foreground`] then states it as the
//! trace would have: an importance event at time 0 with `oom_score_adj` 0 for it and
//! [`ADJ_CACHED`] (900) for every other process.
//!
//! Block traces name threads (`comm` of the thread that issued the request), not apps,
//! and do not say which threads share an app, so the foreground is one such thread: the
//! app's busiest one.

use super::{Event, ProcId, Trace, ADJ_CACHED, ADJ_FOREGROUND};

/// Name prefixes of the kernel's threads that issue block I/O: writeback and work queues
/// (`kworker/u16:2`, `kworker/3:1H`), loop devices (`loop40`), the journal (`jbd2/sda1-8`),
/// f2fs's checkpoint, discard and garbage collection (`f2fs_ckpt-254:4`), device mapper
/// (`dm-0`, `kcryptd`), and reclaim (`kswapd0`).
const KERNEL_THREAD_PREFIXES: &[&str] = &[
    "kworker/",
    "jbd2/",
    "f2fs_",
    "dm-",
    "kcryptd",
    "kswapd",
    "kcompactd",
    "ksoftirqd/",
    "irq/",
    "writeback",
];

/// Whether `name` is a kernel thread's (see [`KERNEL_THREAD_PREFIXES`]; `loop` followed by
/// a digit is a loop device's thread).
pub fn is_kernel_thread(name: &str) -> bool {
    KERNEL_THREAD_PREFIXES.iter().any(|p| name.starts_with(p))
        || name
            .strip_prefix("loop")
            .is_some_and(|rest| rest.starts_with(|c: char| c.is_ascii_digit()))
}

/// The foreground app by the module's rule: of the named processes that are not kernel
/// threads, the one with the most accesses (ties: the lowest id, the first seen). `None`
/// when no access is by such a process.
pub fn derive_foreground(trace: &Trace) -> Option<ProcId> {
    let processes = &trace.tables.processes;
    let mut accesses = vec![0u64; processes.len()];
    for e in trace.accesses() {
        if let Some(n) = accesses.get_mut(e.proc() as usize) {
            *n += 1;
        }
    }
    let candidate = |id: usize| {
        let name = processes[id].name.trim();
        !name.is_empty() && !is_kernel_thread(name) && accesses[id] > 0
    };
    (0..processes.len())
        .filter(|&id| candidate(id))
        // `max_by_key` keeps the last of equals; reversed, the first seen wins ties.
        .rev()
        .max_by_key(|&id| accesses[id])
        .and_then(|id| ProcId::try_from(id).ok())
}

/// Mark the foreground app [`derive_foreground`] picks: an importance event at time 0 for
/// every process, `oom_score_adj` 0 for it and [`ADJ_CACHED`] for the others, put before
/// every event (so the events stay in time order). Returns the app picked; the trace is
/// left unchanged when there is none.
pub fn mark_foreground(trace: &mut Trace) -> Option<ProcId> {
    let foreground = derive_foreground(trace)?;
    let marks: Vec<Event> = (0..trace.tables.processes.len())
        .filter_map(|id| ProcId::try_from(id).ok())
        .map(|id| {
            let adj = if id == foreground {
                ADJ_FOREGROUND
            } else {
                ADJ_CACHED
            };
            Event::importance(0, id, adj)
        })
        .collect();
    trace.events.splice(0..0, marks);
    Some(foreground)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::{EventKind, PageKey, ProcessInfo, Tables};

    fn trace(names: &[&str], accesses: &[(u64, ProcId)]) -> Trace {
        Trace {
            events: accesses
                .iter()
                .enumerate()
                .map(|(i, &(t, p))| Event::access(t, p, i as u32, false, false))
                .collect(),
            tables: Tables {
                pages: (0..accesses.len() as u64)
                    .map(|i| PageKey::file(0, i))
                    .collect(),
                processes: names
                    .iter()
                    .enumerate()
                    .map(|(i, n)| ProcessInfo {
                        pid: i as u32 + 100,
                        name: n.to_string(),
                    })
                    .collect(),
            },
        }
    }

    #[test]
    fn kernel_threads_are_told_by_name() {
        for name in [
            "kworker/u16:2",
            "kworker/3:1H",
            "loop40",
            "jbd2/sda1-8",
            "f2fs_ckpt-254:4",
            "f2fs_discard-25",
            "dm-0",
            "kswapd0",
        ] {
            assert!(is_kernel_thread(name), "{name}");
        }
        for name in [
            "loopy",
            "PoolThread",
            "Thread-124",
            "dmd",
            "egram.messenger",
        ] {
            assert!(!is_kernel_thread(name), "{name}");
        }
    }

    #[test]
    fn the_busiest_named_user_process_is_the_foreground() {
        // kworker and the unnamed `<...>` thread access most but are passed over; the app's
        // two threads tie at 2 (the first seen wins) and beat the daemon's 1.
        let names = [
            "kworker/u16:0",
            "",
            "Thread-7",
            "RenderThread",
            "dmd",
            "loop6",
        ];
        let mut t = trace(
            &names,
            &[
                (5, 0),
                (6, 0),
                (7, 0),
                (8, 1),
                (9, 1),
                (10, 1),
                (11, 3),
                (12, 2),
                (13, 3),
                (14, 2),
                (15, 4),
                (16, 5),
            ],
        );
        let before = t.events.clone();
        assert_eq!(derive_foreground(&t), Some(2));
        assert_eq!(mark_foreground(&mut t), Some(2));
        // One importance event per process at time 0, in front; the accesses unchanged.
        let (marks, rest) = t.events.split_at(names.len());
        assert_eq!(rest, &before[..]);
        for (id, e) in marks.iter().enumerate() {
            assert_eq!(
                (e.kind(), e.time_ns(), e.proc()),
                (EventKind::Importance, 0, id as u32)
            );
            let adj = if id == 2 { ADJ_FOREGROUND } else { ADJ_CACHED };
            assert_eq!(e.oom_score_adj(), adj);
        }
        assert!(t
            .events
            .windows(2)
            .all(|w| w[0].time_ns() <= w[1].time_ns()));
    }

    #[test]
    fn a_trace_of_kernel_threads_alone_has_no_foreground() {
        let mut t = trace(&["kworker/u16:0", "", "loop1"], &[(1, 0), (2, 1), (3, 2)]);
        let before = t.clone();
        assert_eq!(mark_foreground(&mut t), None);
        assert_eq!(t, before);
    }
}
