//! Page ids reach the placement engine renumbered in the order pages are first seen: a
//! trace whose ids are spread over the whole 32-bit range gives the same counts as the
//! same trace with small ids, and per-page state is sized by the pages seen, not by the
//! largest id.

use mobmem::core::stats::Stats;
use mobmem::mm::placement::mrc::lru_distances;
use mobmem::mm::placement::sim::{run_trace, RunSetup, Simulator};
use mobmem::mm::placement::{Capacity, Family, REGISTRY};
use mobmem::trace::{Event, PageId, Tables, Trace};
use proptest::prelude::*;

/// The policies whose results depend on the ids themselves: w-tinylfu's sketch and
/// hyperbolic's hash table hash them.
const HASHES_IDS: [&str; 2] = ["w-tinylfu", "hyperbolic"];
/// The policy that breaks ties by id: among pages never used again it evicts the largest
/// id, which changes what an eviction costs but not the misses.
const TIES_BY_ID: &str = "opt";

fn trace(events: Vec<Event>) -> Trace {
    Trace {
        events,
        tables: Tables::default(),
    }
}

/// A foreground, a previous and a background process, then `accesses` (page, write,
/// process).
fn events(accesses: &[(PageId, bool, u32)]) -> Vec<Event> {
    let mut out = vec![
        Event::importance(0, 0, 0),
        Event::importance(0, 1, 700),
        Event::importance(0, 2, 900),
    ];
    for (i, &(page, write, proc)) in accesses.iter().enumerate() {
        out.push(Event::access(i as u64 + 1, proc, page, write, false));
    }
    out
}

fn capacity(family: Family, pages: usize) -> Capacity {
    match family {
        Family::SingleTier => Capacity::single(pages),
        Family::Hybrid => Capacity {
            dram: (pages / 3).max(1),
            pcm: pages - (pages / 3).max(1),
        },
    }
}

/// Accesses to up to 24 pages, and an injective map of those pages to ids anywhere in
/// 0..=u32::MAX.
fn accesses_and_relabelling() -> impl Strategy<Value = (Vec<(PageId, bool, u32)>, Vec<PageId>)> {
    (
        prop::collection::vec((0..24u32, any::<bool>(), 0..3u32), 1..300),
        prop::collection::hash_set(any::<u32>(), 24),
    )
        .prop_map(|(accesses, ids)| (accesses, ids.into_iter().collect()))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn relabelled_pages_give_the_same_counts(
        (accesses, ids) in accesses_and_relabelling(),
        pages in 2usize..12,
    ) {
        let original = trace(events(&accesses));
        let spread: Vec<_> = accesses
            .iter()
            .map(|&(page, write, proc)| (ids[page as usize], write, proc))
            .collect();
        let relabelled = trace(events(&spread));
        for info in REGISTRY.iter().filter(|info| !HASHES_IDS.contains(&info.name)) {
            let setup = RunSetup::new(info, capacity(info.family, pages));
            let a = run_trace(&original, &setup).unwrap();
            let b = run_trace(&relabelled, &setup).unwrap();
            if info.name == TIES_BY_ID {
                prop_assert_eq!((a.hits, a.misses), (b.hits, b.misses));
            } else {
                // As printed: NaN (no PCM, no lifetime) equals itself there.
                let (a, b) = (format!("{:?}", a.values()), format!("{:?}", b.values()));
                prop_assert_eq!(a, b, "{}", info.name);
            }
        }
        let dense: Vec<PageId> = accesses.iter().map(|a| a.0).collect();
        let sparse: Vec<PageId> = spread.iter().map(|a| a.0).collect();
        prop_assert_eq!(lru_distances(&dense, 0), lru_distances(&sparse, 0));
    }
}

#[test]
fn per_page_state_is_sized_by_the_pages_seen() {
    // Ten pages, among them the largest ids there are.
    let ids: Vec<PageId> = (0..10)
        .map(|i| u32::MAX - 7 * i)
        .chain([0, 134_000_000])
        .collect();
    let accesses: Vec<_> = (0..1000)
        .map(|i| (ids[(i * 7) % ids.len()], i % 3 == 0, (i % 3) as u32))
        .collect();
    let t = trace(events(&accesses));
    for info in REGISTRY.iter() {
        let setup = RunSetup::new(info, capacity(info.family, 4));
        let future = info
            .offline
            .then(|| mobmem::mm::placement::sim::access_sequence(&t));
        let mut sim = Simulator::new(&setup, 0, future).unwrap();
        for event in &t.events {
            sim.step(event).unwrap();
        }
        sim.check_agreement().unwrap();
        let entries = sim.engine().memory().pages().len();
        assert!(entries <= 64, "{}: {entries} page table entries", info.name);
        // The trace's ids still name the pages: as many resident as memory holds.
        let resident = ids.iter().filter(|&&id| sim.tier_of(id).is_some()).count();
        assert!(
            (1..=4).contains(&resident),
            "{}: {resident} resident",
            info.name
        );
        let m = sim.finish().unwrap();
        assert_eq!(m.accesses, 1000, "{}", info.name);
    }
}
