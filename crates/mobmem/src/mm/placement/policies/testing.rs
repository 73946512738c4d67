//! Helpers for policy unit tests: a policy on an engine of its own, requests one by one.

use crate::mm::placement::engine::{Engine, Memory};
use crate::mm::placement::{CachePolicy, Capacity, Effect, Request, Tier, Unit};
use crate::trace::PageId;

/// `policy` on an empty single-tier memory of `pages` pages.
pub fn engine<P: CachePolicy>(policy: P, pages: usize) -> Engine<P> {
    Engine::new(
        Box::new(policy),
        Memory::new(Unit::Pages, Capacity::single(pages), 0),
    )
}

/// `policy` on an empty DRAM + PCM memory of `capacity` pages.
pub fn hybrid<P: CachePolicy>(policy: P, capacity: Capacity) -> Engine<P> {
    Engine::new(Box::new(policy), Memory::new(Unit::Pages, capacity, 0))
}

/// `policy` on an empty single-tier memory of `bytes` bytes.
pub fn bytes<P: CachePolicy>(policy: P, bytes: usize) -> Engine<P> {
    Engine::new(
        Box::new(policy),
        Memory::new(Unit::Bytes, Capacity::single(bytes), 0),
    )
}

/// A request for a clean page by process 0.
pub fn request(page: PageId, foreground: bool, write: bool) -> Request {
    Request {
        foreground,
        write,
        ..Request::read(page)
    }
}

/// A read request by a background process.
pub fn read(page: PageId) -> Request {
    Request::read(page)
}

/// The effects of one request, after checking that the policy and the engine agree.
pub fn step<P: CachePolicy>(engine: &mut Engine<P>, req: Request) -> Vec<Effect> {
    engine
        .access(&req)
        .unwrap_or_else(|v| panic!("request for page {}: {v}", req.page));
    engine
        .check_agreement()
        .unwrap_or_else(|v| panic!("after page {}: {v}", req.page));
    engine.effects().to_vec()
}

/// Effects written short, for tests to compare with the expected text: "fill dram,
/// evict 2 from pcm, 1 to pcm" (a hit or a fill, evictions, migrations).
pub fn describe(effects: &[Effect]) -> String {
    let tier = |t: Tier| match t {
        Tier::Dram => "dram",
        Tier::Pcm => "pcm",
    };
    effects
        .iter()
        .map(|e| match *e {
            Effect::Hit { tier: t } => format!("hit {}", tier(t)),
            Effect::Fill { tier: t } => format!("fill {}", tier(t)),
            Effect::Bypass => "bypass".to_string(),
            Effect::Migrate { page, to } => format!("{page} to {}", tier(to)),
            Effect::Evict { page, from } => format!("evict {page} from {}", tier(from)),
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// Page reads, one after another; the effects of each.
pub fn run_pages<P: CachePolicy>(engine: &mut Engine<P>, pages: &[PageId]) -> Vec<Vec<Effect>> {
    pages.iter().map(|&p| step(engine, read(p))).collect()
}

/// Reads of `(page, size)`, one after another; the effects of each.
pub fn run_sized<P: CachePolicy>(
    engine: &mut Engine<P>,
    requests: &[(PageId, u64)],
) -> Vec<Vec<Effect>> {
    requests
        .iter()
        .map(|&(p, size)| step(engine, Request::sized(p, size)))
        .collect()
}

/// Whether each request hit.
pub fn hits(outcome: &[Vec<Effect>]) -> Vec<bool> {
    outcome
        .iter()
        .map(|e| matches!(e[0], Effect::Hit { .. }))
        .collect()
}

/// Whether each request hit, one letter a request: `h` a hit, `m` a miss ("mmh").
pub fn hit_pattern(outcome: &[Vec<Effect>]) -> String {
    hits(outcome)
        .into_iter()
        .map(|hit| if hit { 'h' } else { 'm' })
        .collect()
}

/// The pages each request evicted, in order.
pub fn evictions(outcome: &[Vec<Effect>]) -> Vec<Vec<PageId>> {
    outcome
        .iter()
        .map(|effects| {
            effects
                .iter()
                .filter_map(|e| match *e {
                    Effect::Evict { page, .. } => Some(page),
                    _ => None,
                })
                .collect()
        })
        .collect()
}

/// Every eviction as (the index of the request that made it, the page evicted), in order:
/// the requests that evicted nothing are left out.
pub fn eviction_steps(outcome: &[Vec<Effect>]) -> Vec<(usize, PageId)> {
    evictions(outcome)
        .into_iter()
        .enumerate()
        .flat_map(|(step, pages)| pages.into_iter().map(move |page| (step, page)))
        .collect()
}

/// Check an outcome: which requests hit (as [`hit_pattern`] writes them) and which pages
/// were evicted, in order.
#[track_caller]
pub fn check_outcome(outcome: &[Vec<Effect>], hits: &str, evicted: &[PageId]) {
    assert_eq!(hit_pattern(outcome), hits, "hits");
    assert_eq!(evictions(outcome).concat(), evicted, "evictions");
}

/// Traces of up to 1500 reads, skewed enough for pages to be reused often (ids below 4),
/// sometimes (below 30) and rarely (below 300): for property tests that hold a policy to
/// a plain implementation of it.
pub fn skewed_pages() -> impl proptest::strategy::Strategy<Value = Vec<PageId>> {
    use proptest::prelude::*;
    proptest::collection::vec(prop_oneof![0u32..4, 0u32..30, 0u32..300], 1..1500)
}

/// A skewed mix of `n` page requests drawn from `seed`: a third from the `hot` pages
/// below `hot`, the rest from the `cold` pages below `cold`.
pub fn hot_and_cold(seed: u64, n: u64, hot: PageId, cold: PageId) -> Vec<PageId> {
    (0..n)
        .map(|i| {
            let x = crate::core::mix64(seed * 1_000_003 + i);
            let pages = if x.is_multiple_of(3) { hot } else { cold };
            (x >> 8) as PageId % pages
        })
        .collect()
}

/// The hit patterns of `policy` on an engine of `capacity` pages and of `plain` (a plain
/// implementation's access: true for a hit), on the reads of `pages`.
pub fn hit_patterns<P: CachePolicy>(
    policy: P,
    capacity: usize,
    pages: &[PageId],
    mut plain: impl FnMut(PageId) -> bool,
) -> (String, String) {
    let mut engine = engine(policy, capacity);
    let ours = hit_pattern(&run_pages(&mut engine, pages));
    let expected = pages
        .iter()
        .map(|&p| if plain(p) { 'h' } else { 'm' })
        .collect();
    (ours, expected)
}
