//! Oracle: the hit ratios of LRU and ARC on the OLTP trace published in the ARC paper
//! (N. Megiddo and D. S. Modha, "ARC: A Self-Tuning, Low Overhead Replacement Cache",
//! USENIX FAST 2003, Table III).
//!
//! The trace is read here with its own few lines of parsing rather than with the crate's
//! readers, so this test is also a second, independent parser of the `.lis` format.

use crate::common;

use std::collections::HashMap;
use std::io::{BufRead, BufReader};

use mobmem::mm::placement::engine::{Engine, Memory};
use mobmem::mm::placement::policies::arc::Arc;
use mobmem::mm::placement::policies::lru::Lru;
use mobmem::mm::placement::{CachePolicy, Capacity, Effect, Request, Unit};
use mobmem::trace::PageId;

/// Table III, OLTP rows: cache size in pages, LRU hit ratio (%), ARC hit ratio (%).
const PUBLISHED: [(usize, f64, f64); 5] = [
    (1000, 32.83, 38.93),
    (2000, 42.47, 46.08),
    (5000, 53.65, 55.25),
    (10000, 60.70, 61.87),
    (15000, 64.63, 65.40),
];

/// The page requests of a `.lis` trace: each line `start count ignored request_id` stands
/// for `count` requests of the consecutive blocks from `start`; blocks are interned into
/// dense page ids in order of first use.
fn read_lis(path: &std::path::Path) -> Vec<PageId> {
    let file = std::fs::File::open(path).expect("open the OLTP trace");
    let decoder = zstd::Decoder::new(file).expect("zstd stream");
    let mut ids: HashMap<u64, PageId> = HashMap::new();
    let mut pages = Vec::new();
    for (n, line) in BufReader::new(decoder).lines().enumerate() {
        let line = line.unwrap_or_else(|e| panic!("{}: line {}: {e}", path.display(), n + 1));
        let mut fields = line.split_whitespace();
        let mut number = |what: &str| -> u64 {
            fields
                .next()
                .and_then(|f| f.parse().ok())
                .unwrap_or_else(|| {
                    panic!(
                        "{}: line {}: bad or missing {what}: {line:?}",
                        path.display(),
                        n + 1
                    )
                })
        };
        let (start, count) = (number("start block"), number("block count"));
        for block in start..start + count {
            let next_id = ids.len() as PageId;
            pages.push(*ids.entry(block).or_insert(next_id));
        }
    }
    pages
}

/// Hit ratio in percent of `policy` on a memory of `capacity` pages over `pages`.
fn hit_ratio<P: CachePolicy>(policy: P, capacity: usize, pages: &[PageId]) -> f64 {
    let distinct = pages.iter().max().map_or(0, |&p| p as usize + 1);
    let memory = Memory::new(Unit::Pages, Capacity::single(capacity), distinct);
    let mut engine = Engine::new(Box::new(policy), memory);
    let mut hits = 0u64;
    for &page in pages {
        engine
            .access(&Request::read(page))
            .expect("the contract holds");
        if matches!(engine.effects()[0], Effect::Hit { .. }) {
            hits += 1;
        }
    }
    100.0 * hits as f64 / pages.len() as f64
}

/// A percentage in hundredths of a percent, rounded as the paper prints it.
fn hundredths(percent: f64) -> i64 {
    (percent * 100.0).round() as i64
}

#[test]
fn lru_and_arc_match_the_arc_paper_on_oltp() {
    let test = "lru_and_arc_match_the_arc_paper_on_oltp";
    let Some(oltp) = common::public_trace(test, "arc/OLTP.lis.zst") else {
        return;
    };
    let pages = read_lis(&oltp);
    let distinct = pages.iter().max().map_or(0, |&p| p as usize + 1);
    assert_eq!(
        (pages.len(), distinct),
        (914_145, 186_880),
        "OLTP trace size"
    );

    for &(capacity, lru_paper, arc_paper) in &PUBLISHED {
        let lru = hit_ratio(Lru::new(distinct), capacity, &pages);
        let arc = hit_ratio(Arc::new(capacity, distinct), capacity, &pages);
        eprintln!("c={capacity}: LRU {lru:.4} (paper {lru_paper:.2}), ARC {arc:.4} (paper {arc_paper:.2})");
        // LRU has nothing to interpret: it must match exactly, which also checks that
        // the trace is expanded and counted as the paper did.
        assert_eq!(
            hundredths(lru),
            hundredths(lru_paper),
            "LRU at c={capacity}"
        );
        // ARC matches exactly at every size but 1000 pages, where it gives 38.9451%
        // against the published 38.93 (about 140 hits of 914,145). Every other reading
        // of the adaptation rounding tried (integer p rounded down, up or to nearest;
        // single-precision p; the ghost lists counted without x; p updated after REPLACE)
        // is farther from the table overall, so the gap is left at 0.02 there.
        let tolerance = if capacity == 1000 { 2 } else { 0 };
        let gap = (hundredths(arc) - hundredths(arc_paper)).abs();
        assert!(
            gap <= tolerance,
            "ARC at c={capacity}: {arc:.4}% vs published {arc_paper:.2}%"
        );
    }
}
