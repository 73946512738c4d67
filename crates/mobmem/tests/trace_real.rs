//! The public traces (`$MOBMEM_TRACES` or `../shared/traces`, see its README) read with
//! the counts their publishers state. Skipped, with a note, where they are not present.

mod common;

use std::path::Path;

use mobmem::trace;

/// Requests, distinct pages, and whether time never decreases, streaming in batches.
fn count(path: &Path) -> (u64, usize, bool) {
    let mut source = trace::open(path, None).unwrap();
    let mut batch = Vec::new();
    let (mut requests, mut last_time, mut monotone) = (0u64, 0u64, true);
    while source.read_batch(&mut batch, 1 << 16).unwrap() {
        for event in &batch {
            assert!(event.is_access() && !event.is_write() && !event.is_anon());
            monotone &= event.time_ns() >= last_time;
            last_time = event.time_ns();
        }
        requests += batch.len() as u64;
    }
    let tables = source.tables().unwrap();
    assert_eq!(tables.processes.len(), 1);
    (requests, tables.pages.len(), monotone)
}

#[test]
fn arc_oltp() {
    let Some(path) = common::public_trace("arc_oltp", "arc/OLTP.lis.zst") else {
        return;
    };
    assert_eq!(count(&path), (914_145, 186_880, true));
}

/// About a second in the test profile.
#[test]
fn arc_p3() {
    let Some(path) = common::public_trace("arc_p3", "arc/P3.lis.zst") else {
        return;
    };
    assert_eq!(count(&path), (3_912_296, 762_543, true));
}

#[test]
fn libcachesim_cloudphysics() {
    let Some(path) = common::public_trace(
        "libcachesim_cloudphysics",
        "libcachesim/cloudPhysicsIO.oracleGeneral.bin",
    ) else {
        return;
    };
    let (requests, objects, _) = count(&path);
    assert_eq!((requests, objects), (113_872, 48_974));
}

/// A real trace survives conversion to `.mmt` and back.
#[test]
fn oltp_through_mmt() {
    let Some(path) = common::public_trace("oltp_through_mmt", "arc/OLTP.lis.zst") else {
        return;
    };
    let original = trace::read_all(&path, None).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let converted = dir.path().join("oltp.mmt");
    trace::mmt::write(&converted, &original).unwrap();
    assert_eq!(trace::read_all(&converted, None).unwrap(), original);
}

/// Decoding speed of `.mmt` from a file in the page cache, plain and zstd-compressed.
/// Run with `cargo test --release -p mobmem --test trace_real -- --ignored --nocapture`.
#[test]
#[ignore = "a measurement, not a check"]
fn mmt_read_throughput() {
    use mobmem::trace::{Event, Tables};
    use std::time::Instant;

    let events = 1u64 << 24;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("big.mmt");
    let mut writer = trace::mmt::Writer::create(&path).unwrap();
    for i in 0..events {
        writer
            .write(&Event::access(
                i,
                (i % 7) as u32,
                (i % 100_003) as u32,
                i % 3 == 0,
                false,
            ))
            .unwrap();
    }
    let tables = Tables {
        pages: (0..100_003).map(|i| trace::PageKey::file(1, i)).collect(),
        processes: (0..7)
            .map(|pid| trace::ProcessInfo {
                pid,
                name: String::new(),
            })
            .collect(),
    };
    writer.finish(&tables).unwrap();
    let compressed = dir.path().join("big.mmt.zst");
    let bytes = std::fs::read(&path).unwrap();
    std::fs::write(&compressed, zstd::encode_all(bytes.as_slice(), 3).unwrap()).unwrap();

    for file in [&path, &compressed] {
        let started = Instant::now();
        let mut source = trace::open(file, None).unwrap();
        let mut batch = Vec::new();
        let mut read = 0u64;
        while source.read_batch(&mut batch, 1 << 16).unwrap() {
            read += batch.len() as u64;
        }
        source.tables().unwrap();
        let seconds = started.elapsed().as_secs_f64();
        assert_eq!(read, events);
        eprintln!(
            "{}: {read} events in {seconds:.3} s: {:.0} MB/s of records, {:.0} M events/s",
            file.file_name().unwrap().to_string_lossy(),
            (read * 16) as f64 / seconds / 1e6,
            read as f64 / seconds / 1e6
        );
    }
}
