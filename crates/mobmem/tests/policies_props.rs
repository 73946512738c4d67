//! Property tests of the single-tier policies on random traces: the effects contract of
//! `CachePolicy` for every policy (each run by the placement engine, which checks the
//! policy's answers against its index, and the policy's order checked against the
//! engine's index after every request), exact agreement of LRU and FIFO with naive
//! reference implementations, and OPT as a lower bound on misses.

use std::collections::BTreeSet;
use std::sync::Arc as Shared;

use mobmem::mm::placement::engine::{Engine, Memory};
use mobmem::mm::placement::policies::fifo::Fifo;
use mobmem::mm::placement::policies::lru::Lru;
use mobmem::mm::placement::policies::opt::Opt;
use mobmem::mm::placement::policies::two_q::TwoQ;
use mobmem::mm::placement::{
    BuildContext, CachePolicy, Capacity, Effect, Family, Request, Tier, Unit, REGISTRY,
};
use mobmem::trace::PageId;
use proptest::prelude::*;

fn read(page: PageId) -> Request {
    Request::read(page)
}

/// Policies whose hits may evict other pages (never the page hit), as libCacheSim's
/// versions of them do: LIRS demotes an LIR page into a full HIR queue on a hit to a
/// resident HIR page outside its stack, and W-TinyLFU's segmented main cache evicts when a
/// promotion out of probation overfills it (see their modules).
const HITS_MAY_EVICT: [&str; 2] = ["lirs", "w-tinylfu"];

/// What one access did, as seen from its effects.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Outcome {
    hit: bool,
    evicted: Vec<PageId>,
}

/// `policy` on an empty memory of `capacity` pages.
fn on_memory<P: CachePolicy + ?Sized>(policy: Box<P>, capacity: usize) -> Engine<P> {
    Engine::new(
        policy,
        Memory::new(Unit::Pages, Capacity::single(capacity), 0),
    )
}

/// Every registered single-tier policy, built for `capacity` pages and (for OPT)
/// `future`, and 2Q with other queue fractions, each on a memory of its own.
fn all_policies(capacity: usize, future: &[PageId]) -> Vec<(&'static str, Engine)> {
    let context = BuildContext {
        capacity: Capacity::single(capacity),
        page_count_hint: 0,
        future: Some(Shared::from(future)),
        object_ids: None,
    };
    let mut policies: Vec<(&'static str, Engine)> = REGISTRY
        .iter()
        .filter(|info| info.family == Family::SingleTier)
        .map(|info| {
            (
                info.name,
                Engine::build(info, &context, Unit::Pages).expect("a single-tier policy builds"),
            )
        })
        .collect();
    let two_q: Box<dyn CachePolicy> =
        Box::new(TwoQ::with_fractions(capacity, 0, 0.1, 1.5).expect("valid fractions"));
    policies.push(("2q with Kin 10%, Kout 150%", on_memory(two_q, capacity)));
    policies
}

/// Run `trace` through `engine`, checking the effects contract at every access against a
/// resident set kept from the effects alone. Returns the outcome of each access.
fn run_checked<P: CachePolicy + ?Sized>(
    name: &str,
    engine: &mut Engine<P>,
    capacity: usize,
    trace: &[PageId],
) -> Result<Vec<Outcome>, TestCaseError> {
    let mut resident: BTreeSet<PageId> = BTreeSet::new();
    let mut outcomes = Vec::with_capacity(trace.len());
    for (i, &page) in trace.iter().enumerate() {
        engine
            .access(&read(page))
            .map_err(|v| TestCaseError::fail(format!("{name} access {i}: {v}")))?;
        // The whole index, where it is small (sparse ids make it large: the pages
        // requested and evicted are checked below, and every page seen at the end).
        if engine.memory().pages().len() <= 4096 {
            engine
                .check_agreement()
                .map_err(|v| TestCaseError::fail(format!("{name} access {i}: {v}")))?;
        }
        let effects = engine.effects();
        let hit = match effects.first() {
            Some(Effect::Hit { tier: Tier::Dram }) => true,
            Some(Effect::Fill { tier: Tier::Dram }) => false,
            other => {
                return Err(TestCaseError::fail(format!(
                    "{name} access {i}: first effect {other:?}"
                )))
            }
        };
        prop_assert_eq!(
            hit,
            resident.contains(&page),
            "{} access {}: hit disagrees with residency",
            name,
            i
        );
        let mut evicted = Vec::new();
        for effect in &effects[1..] {
            match *effect {
                Effect::Evict {
                    page: victim,
                    from: Tier::Dram,
                } => {
                    prop_assert!(
                        resident.remove(&victim),
                        "{} access {}: evicted {} was not resident",
                        name,
                        i,
                        victim
                    );
                    prop_assert_ne!(
                        victim,
                        page,
                        "{} access {}: evicted the requested page",
                        name,
                        i
                    );
                    evicted.push(victim);
                }
                other => {
                    return Err(TestCaseError::fail(format!(
                        "{name} access {i}: unexpected {other:?}"
                    )))
                }
            }
        }
        prop_assert!(
            !hit || evicted.is_empty() || HITS_MAY_EVICT.contains(&name),
            "{} access {}: a hit evicted pages",
            name,
            i
        );
        resident.insert(page);

        prop_assert_eq!(
            engine.memory().used_total(),
            resident.len() as u64,
            "{} access {}: occupancy",
            name,
            i
        );
        prop_assert!(
            resident.len() <= capacity,
            "{} access {}: over capacity",
            name,
            i
        );
        prop_assert_eq!(
            engine.policy().holds(page),
            Some(Tier::Dram),
            "{} access {}: requested page not resident",
            name,
            i
        );
        for &victim in &evicted {
            prop_assert_eq!(
                engine.policy().holds(victim),
                None,
                "{} access {}: evicted page still resident",
                name,
                i
            );
        }
        outcomes.push(Outcome { hit, evicted });
    }
    // Full sweep at the end: `tier_of` agrees with the effects for every page seen.
    for &page in trace {
        let expected = resident.contains(&page).then_some(Tier::Dram);
        prop_assert_eq!(
            engine.policy().holds(page),
            expected,
            "{}: tier_of({}) at the end",
            name,
            page
        );
    }
    let hits = outcomes.iter().filter(|o| o.hit).count();
    let misses = outcomes.iter().filter(|o| !o.hit).count();
    prop_assert_eq!(hits + misses, trace.len());
    Ok(outcomes)
}

/// LRU (`hit_moves_to_back`) or FIFO as a vector scanned linearly, oldest (or least
/// recently used) first.
fn reference(capacity: usize, trace: &[PageId], hit_moves_to_back: bool) -> Vec<Outcome> {
    let mut queue: Vec<PageId> = Vec::new();
    trace
        .iter()
        .map(|&page| {
            if let Some(pos) = queue.iter().position(|&p| p == page) {
                if hit_moves_to_back {
                    queue.remove(pos);
                    queue.push(page);
                }
                return Outcome {
                    hit: true,
                    evicted: vec![],
                };
            }
            let evicted = if queue.len() >= capacity {
                vec![queue.remove(0)]
            } else {
                vec![]
            };
            queue.push(page);
            Outcome {
                hit: false,
                evicted,
            }
        })
        .collect()
}

/// A capacity and a trace of up to 2,000 accesses over up to 200 pages.
fn capacity_and_trace() -> impl Strategy<Value = (usize, Vec<PageId>)> {
    (1usize..=64, 1u32..=200).prop_flat_map(|(capacity, pages)| {
        (
            Just(capacity),
            proptest::collection::vec(0..pages, 0..=2000),
        )
    })
}

fn misses(outcomes: &[Outcome]) -> usize {
    outcomes.iter().filter(|o| !o.hit).count()
}

proptest! {
    #[test]
    fn every_policy_keeps_the_effects_contract((capacity, trace) in capacity_and_trace()) {
        for (name, mut engine) in all_policies(capacity, &trace) {
            run_checked(name, &mut engine, capacity, &trace)?;
        }
    }

    #[test]
    fn lru_agrees_with_a_linear_scan_lru((capacity, trace) in capacity_and_trace()) {
        let outcomes = run_checked("lru", &mut on_memory(Box::new(Lru::new(0)), capacity), capacity, &trace)?;
        prop_assert_eq!(outcomes, reference(capacity, &trace, true));
    }

    #[test]
    fn fifo_agrees_with_a_linear_scan_fifo((capacity, trace) in capacity_and_trace()) {
        let outcomes = run_checked("fifo", &mut on_memory(Box::new(Fifo::new(0)), capacity), capacity, &trace)?;
        prop_assert_eq!(outcomes, reference(capacity, &trace, false));
    }

    #[test]
    fn opt_misses_no_more_than_any_policy((capacity, trace) in capacity_and_trace()) {
        let opt = misses(&run_checked("opt", &mut on_memory(Box::new(Opt::new(Shared::from(trace.as_slice()))), capacity), capacity, &trace)?);
        for (name, mut engine) in all_policies(capacity, &trace) {
            let other = misses(&run_checked(name, &mut engine, capacity, &trace)?);
            prop_assert!(opt <= other, "OPT {} misses > {} {} misses", opt, name, other);
        }
    }

    /// LIRS and W-TinyLFU past 200 pages, where LIRS's HIR queue holds two pages or
    /// more and W-TinyLFU's window more than one: the contract still holds.
    #[test]
    fn lirs_and_w_tinylfu_keep_the_contract_past_200_pages(
        capacity in 190usize..=420,
        trace in proptest::collection::vec(0u32..1200, 0..4000),
    ) {
        let context = BuildContext {
            capacity: Capacity::single(capacity),
            page_count_hint: 0,
            future: None,
            object_ids: None,
        };
        for info in REGISTRY.iter().filter(|info| HITS_MAY_EVICT.contains(&info.name)) {
            let mut engine = Engine::build(info, &context, Unit::Pages).expect("a single-tier policy builds");
            run_checked(info.name, &mut engine, capacity, &trace)?;
        }
    }

    /// Sparse page ids (far apart, never seen before) and, for OPT, calls that do not
    /// follow its future: nothing panics and the contract still holds.
    #[test]
    fn sparse_ids_and_a_wrong_future_are_handled(
        capacity in 1usize..=16,
        trace in proptest::collection::vec(0u32..1 << 20, 0..300),
        future in proptest::collection::vec(0u32..1 << 20, 0..300),
    ) {
        for (name, mut engine) in all_policies(capacity, &future) {
            run_checked(name, &mut engine, capacity, &trace)?;
        }
    }
}
