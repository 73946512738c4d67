//! The public traces (`$MOBMEM_TRACES` or `../shared/traces`, see its README) read with
//! the counts their publishers state. Skipped, with a note, where they are not present.

use crate::common;

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

/// libCacheSim's CloudPhysics trace as vscsi (`data/cloudPhysicsIO.vscsi`): in the
/// folder `$MOBMEM_LIBCACHESIM_DATA`, else beside the oracleGeneral copy among the public
/// traces (`scripts/fetch-traces.sh` fetches it); `None` after reporting `test` as
/// skipped.
fn cloudphysics_vscsi(test: &str) -> Option<std::path::PathBuf> {
    const NAME: &str = "cloudPhysicsIO.vscsi";
    let dirs: Vec<std::path::PathBuf> = match std::env::var_os("MOBMEM_LIBCACHESIM_DATA") {
        Some(dir) => vec![dir.into()],
        None => common::public_traces_dir()
            .map(|d| d.join("libcachesim"))
            .into_iter()
            .collect(),
    };
    let found = dirs.iter().map(|d| d.join(NAME)).find(|p| p.is_file());
    if found.is_none() {
        let looked: Vec<String> = dirs.iter().map(|d| d.display().to_string()).collect();
        common::skip(
            test,
            &format!(
                "no {NAME} in {}: set MOBMEM_LIBCACHESIM_DATA to a folder holding \
                 libCacheSim's data/{NAME}",
                match looked.is_empty() {
                    true => "the public traces (none found)".to_string(),
                    false => looked.join(", "),
                }
            ),
        );
    }
    found
}

/// Every event of a trace, with the object size of each when the format has them.
fn events_and_sizes(
    source: &mut dyn trace::EventSource,
) -> (Vec<trace::Event>, Vec<u32>, trace::Tables) {
    let (mut events, mut sizes, mut batch) = (Vec::new(), Vec::new(), Vec::new());
    while source.read_batch(&mut batch, 1 << 12).unwrap() {
        events.extend_from_slice(&batch);
        sizes.extend_from_slice(source.batch_sizes().unwrap());
    }
    (events, sizes, source.tables().unwrap())
}

/// libCacheSim ships the CloudPhysics trace twice: as the vscsi trace it was recorded in
/// and converted to oracleGeneral. The vscsi reading gives the requests of the
/// oracleGeneral one: the same objects in the same order, the same times to the second
/// (vscsi has microseconds), and as size the size of each object's first request, which
/// the conversion kept for all its requests (13,671 requests have another length in the
/// vscsi file). Reads and writes come from the SCSI opcodes: READ(10) and WRITE(10) are
/// the only two in the file.
#[test]
fn libcachesim_cloudphysics_vscsi_is_the_oracle_general_trace() {
    let test = "libcachesim_cloudphysics_vscsi_is_the_oracle_general_trace";
    let Some(vscsi_path) = cloudphysics_vscsi(test) else {
        return;
    };
    let Some(oracle_path) =
        common::public_trace(test, "libcachesim/cloudPhysicsIO.oracleGeneral.bin")
    else {
        return;
    };
    let file = std::fs::File::open(&vscsi_path).unwrap();
    let mut reader = trace::vscsi::Reader::new(&vscsi_path, Box::new(file));
    let (events, sizes, tables) = events_and_sizes(&mut reader);
    assert_eq!(reader.version(), Some(trace::vscsi::Version::V1));
    let (oracle_events, oracle_sizes, oracle_tables) =
        events_and_sizes(trace::open(&oracle_path, None).unwrap().as_mut());

    assert_eq!(events.len(), 113_872);
    assert_eq!(oracle_events.len(), events.len());
    assert_eq!(tables.pages.len(), 48_974);
    assert_eq!(tables, oracle_tables);
    let pages = |e: &[trace::Event]| e.iter().map(|e| e.page()).collect::<Vec<_>>();
    assert_eq!(pages(&events), pages(&oracle_events));

    let seconds = |e: &[trace::Event]| {
        e.iter()
            .map(|e| e.time_ns() / 1_000_000_000)
            .collect::<Vec<_>>()
    };
    assert_eq!(seconds(&events), seconds(&oracle_events));
    assert_eq!(events[0].time_ns(), 5_633_898_368_802_000);
    assert!(events.windows(2).all(|w| w[0].time_ns() <= w[1].time_ns()));

    let mut first_size = vec![None; tables.pages.len()];
    for (event, &size) in events.iter().zip(&sizes) {
        first_size[event.page() as usize].get_or_insert(size);
    }
    let kept: Vec<u32> = events
        .iter()
        .map(|e| first_size[e.page() as usize].unwrap())
        .collect();
    assert_eq!(kept, oracle_sizes);
    let other = sizes
        .iter()
        .zip(&oracle_sizes)
        .filter(|(a, b)| a != b)
        .count();
    assert_eq!(other, 13_671);

    let writes = events.iter().filter(|e| e.is_write()).count();
    assert_eq!((writes, events.len() - writes), (66_898, 46_974));
    assert!(oracle_events.iter().all(|e| !e.is_write()));
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

/// What a second, plain reading of a Pixel 6a block trace counts: page accesses,
/// distinct pages, reads and writes, and LRU misses at each of `sizes` pages. It reads the
/// gzip CSV line by line and finds LRU's misses from each access's reuse distance (the
/// distinct pages used since the page's last use, counted with a Fenwick tree over
/// time: an access hits in `size` pages when fewer than `size` were), sharing nothing
/// with mobmem's reader or cache engine.
fn mobile_block_by_hand(path: &Path, sizes: &[usize]) -> (u64, usize, u64, u64, Vec<u64>) {
    use std::collections::HashMap;
    use std::io::BufRead;
    let file = std::fs::File::open(path).unwrap();
    let lines = std::io::BufReader::new(flate2::read::GzDecoder::new(file)).lines();
    let mut pages: Vec<(u64, u64)> = Vec::new();
    let (mut reads, mut writes) = (0u64, 0u64);
    for line in lines.skip(1) {
        let line = line.unwrap();
        let f: Vec<&str> = line.split(',').collect();
        let (device, rw, sector, size) = (
            f[1].parse::<u64>().unwrap(),
            f[2],
            f[3].parse::<u64>().unwrap(),
            f[4].parse::<u64>().unwrap(),
        );
        let first = sector * 512 / 4096;
        let last = ((sector + size) * 512 - 1) / 4096;
        for page in first..=last {
            pages.push((device, page));
            if rw == "W" {
                writes += 1;
            } else {
                reads += 1;
            }
        }
    }
    let distinct = pages.iter().collect::<std::collections::HashSet<_>>().len();
    // A 1 at each page's last use; the sum over (last, now) is the reuse distance.
    let mut tree = vec![0i64; pages.len() + 1];
    let add = |tree: &mut Vec<i64>, at: usize, delta: i64| {
        let mut i = at + 1;
        while i < tree.len() {
            tree[i] += delta;
            i += i & i.wrapping_neg();
        }
    };
    let prefix = |tree: &Vec<i64>, end: usize| {
        let (mut i, mut sum) = (end, 0);
        while i > 0 {
            sum += tree[i];
            i -= i & i.wrapping_neg();
        }
        sum
    };
    let mut last_use: HashMap<(u64, u64), usize> = HashMap::new();
    let mut misses = vec![0u64; sizes.len()];
    for (now, key) in pages.iter().enumerate() {
        match last_use.insert(*key, now) {
            None => misses.iter_mut().for_each(|m| *m += 1),
            Some(last) => {
                let distance = (prefix(&tree, now) - prefix(&tree, last + 1)) as usize;
                for (m, &size) in misses.iter_mut().zip(sizes) {
                    *m += u64::from(distance >= size);
                }
                add(&mut tree, last, -1);
            }
        }
        add(&mut tree, now, 1);
    }
    (pages.len() as u64, distinct, reads, writes, misses)
}

/// Every Pixel 6a block trace reads with `--format mobile-block` to the counts a plain
/// second reading gives, and LRU misses as many pages at three sizes.
#[test]
fn mobile_block_traces_read_as_a_plain_reading_counts_them() {
    use mobmem::mm::placement::sim::{run_trace, RunSetup};
    use mobmem::mm::placement::{find_policy, Capacity};
    let sizes = [1_000, 10_000, 50_000];
    for name in [
        "pubg_exec.csv.gz",
        "pubg_precond.csv.gz",
        "telegram_exec.csv.gz",
        "you_cut_exec.csv.gz",
    ] {
        let test = format!("mobile_block_traces ({name})");
        let Some(path) = common::public_trace(&test, &format!("mobile-block/{name}")) else {
            continue;
        };
        let t = trace::read_all(&path, Some("mobile-block".parse().unwrap())).unwrap();
        let writes = t.events.iter().filter(|e| e.is_write()).count() as u64;
        let misses: Vec<u64> = sizes
            .iter()
            .map(|&size| {
                let setup = RunSetup::new(find_policy("lru").unwrap(), Capacity::single(size));
                run_trace(&t, &setup).unwrap().misses
            })
            .collect();
        let mobmem = (
            t.events.len() as u64,
            t.footprint(),
            t.events.len() as u64 - writes,
            writes,
            misses,
        );
        assert_eq!(mobmem, mobile_block_by_hand(&path, &sizes), "{name}");
        eprintln!("{name}: {mobmem:?}");
    }
}
