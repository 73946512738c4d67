//! The real-data findings of `reproduce selective-page-cache` on the Pixel 6a block
//! traces (`$MOBMEM_TRACES/mobile-block` or `../shared/traces/mobile-block`): one finding
//! per trace, with the page reads and writes counted here from the CSV itself. Skipped,
//! with a note, where the traces are not present.

use crate::common;

use std::io::{BufRead, BufReader};
use std::path::Path;

use mobmem::experiments::reproductions::pixel_traces::PIXEL_TRACES;
use mobmem::experiments::reproductions::selective_page_cache::real_data;
use mobmem::mm::fs::Codec;

/// Page reads and page writes of a `mobile-block` file: each request covers the 4 KiB
/// pages from `sector*512/4096` to `((sector+size)*512-1)/4096`.
fn page_accesses(path: &Path) -> (u64, u64) {
    let file = std::fs::File::open(path).unwrap();
    let lines = BufReader::new(flate2::read::GzDecoder::new(file)).lines();
    let (mut reads, mut writes) = (0, 0);
    for line in lines.skip(1) {
        let line = line.unwrap();
        let fields: Vec<&str> = line.split(',').collect();
        let sector: u64 = fields[3].parse().unwrap();
        let size: u64 = fields[4].parse().unwrap();
        let pages = ((sector + size) * 512 - 1) / 4096 - sector * 512 / 4096 + 1;
        match fields[2] {
            "R" => reads += pages,
            "W" => writes += pages,
            other => panic!("unexpected operation {other}"),
        }
    }
    (reads, writes)
}

/// Several seconds in the test profile: it reads the four traces twice.
#[test]
fn a_finding_per_pixel_trace_with_its_page_accesses() {
    let test = "a_finding_per_pixel_trace_with_its_page_accesses";
    let mut paths = Vec::new();
    for name in PIXEL_TRACES {
        let Some(path) = common::public_trace(test, &format!("mobile-block/{name}.csv.gz")) else {
            return;
        };
        paths.push((name, path));
    }
    let dir = paths[0].1.parent().unwrap().to_path_buf();
    let real = real_data(&dir, Codec::Zlib);
    assert_eq!(real.findings.len(), PIXEL_TRACES.len(), "{:?}", real.notes);
    assert!(real.notes.iter().any(|n| n.contains("MobileBlockIOTraces")));
    assert!(!real.notes.iter().any(|n| n.contains("not found")));
    for ((name, path), finding) in paths.iter().zip(&real.findings) {
        assert_eq!(finding.id, format!("pixel6a-{name}"));
        let evidence = |key: &str| {
            (finding.evidence.iter())
                .find(|(k, _)| k == key)
                .map(|(_, v)| *v)
        };
        let (reads, writes) = page_accesses(path);
        assert_eq!(evidence("writes"), Some(writes as f64), "{name}");
        if reads == 0 {
            assert_eq!(evidence("reads"), None, "{name}");
            continue;
        }
        assert_eq!(evidence("reads"), Some(reads as f64), "{name}");
        let share = |key: &str| evidence(key).unwrap();
        for key in ["re_read", "px_hit", "mp_hit"] {
            assert!((0.0..=100.0).contains(&share(key)), "{name} {key}");
        }
        // A bigger page cache serves at least as many reads, never more than re-reads.
        assert!(share("px_hit") <= share("mp_hit") && share("mp_hit") <= share("re_read"));
    }
}
