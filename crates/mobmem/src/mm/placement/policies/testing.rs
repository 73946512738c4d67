//! Helpers for policy unit tests.

use crate::mm::placement::{CachePolicy, Effect, Effects, Request, Tier};
use crate::trace::PageId;

/// A request for a clean page by process 0.
pub fn request(page: PageId, foreground: bool, write: bool) -> Request {
    Request {
        page,
        proc: 0,
        write,
        foreground,
        dirty: false,
    }
}

/// A read request by a background process.
pub fn read(page: PageId) -> Request {
    request(page, false, false)
}

/// The effects of one request.
pub fn step(policy: &mut dyn CachePolicy, req: Request) -> Vec<Effect> {
    let mut out = Effects::new();
    policy.access(&req, &mut out);
    out.as_slice().to_vec()
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
            Effect::Migrate { page, to } => format!("{page} to {}", tier(to)),
            Effect::Evict { page, from } => format!("evict {page} from {}", tier(from)),
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// Run page reads through `policy`; the effects of each request.
pub fn run_pages(policy: &mut dyn CachePolicy, pages: &[PageId]) -> Vec<Vec<Effect>> {
    let mut out = Effects::new();
    pages
        .iter()
        .map(|&p| {
            out.clear();
            policy.access(&read(p), &mut out);
            out.as_slice().to_vec()
        })
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
