//! Importing Perfetto protobuf traces. The fixtures in tests/data/perfetto were written
//! with Perfetto's own schema (`perfetto_trace_pb2` of the `perfetto` Python package, by
//! scripts/perfetto-fixtures.py), each `.pftrace` with the same events as `traceconv
//! systrace` text beside it where the text can carry them; see their README.

use crate::common;
use common::assert_mentions;

use std::path::{Path, PathBuf};

use mobmem::trace::ftrace::{self, ImportOptions, ImportReport};
use mobmem::trace::perfetto;
use mobmem::trace::{EventKind, PageKey, Trace};
use mobmem::{Error, Position};

fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/perfetto")
        .join(name)
}

fn protobuf(name: &str) -> (Trace, ImportReport) {
    perfetto::import_file(&data(name), ImportOptions::default()).expect("import")
}

fn text(name: &str) -> (Trace, ImportReport) {
    let options = ImportOptions {
        perfetto: true,
        ..Default::default()
    };
    ftrace::import_file(&data(name), options).expect("import")
}

/// What a trace says happened, without ids: (time, pid, what, page) per event, where
/// `what` names the kind (and the write bit or the importance).
fn happenings(t: &Trace) -> Vec<(u64, u32, String, Option<PageKey>)> {
    t.events
        .iter()
        .map(|e| {
            let pid = t.tables.processes[e.proc() as usize].pid;
            let (what, page) = match e.kind() {
                EventKind::Access => (
                    format!("access write={} anon={}", e.is_write(), e.is_anon()),
                    Some(t.tables.pages[e.page() as usize]),
                ),
                EventKind::Importance => (format!("importance {}", e.oom_score_adj()), None),
                other => (format!("{other:?}"), None),
            };
            (e.time_ns(), pid, what, page)
        })
        .collect()
}

fn accesses(t: &Trace) -> Vec<(u64, u32, String, Option<PageKey>)> {
    happenings(t)
        .into_iter()
        .filter(|h| h.2.starts_with("access"))
        .collect()
}

#[test]
fn the_protobuf_and_its_text_give_the_same_trace() {
    for (pb, txt) in [
        ("all-events.pftrace", "all-events.txt"),
        ("generic-events.pftrace", "generic-events.txt"),
    ] {
        let (from_pb, pb_report) = protobuf(pb);
        let (from_text, text_report) = text(txt);
        assert!(!accesses(&from_pb).is_empty(), "{pb}");
        assert_eq!(accesses(&from_pb), accesses(&from_text), "{pb}: accesses");
        assert_eq!(
            happenings(&from_pb),
            happenings(&from_text),
            "{pb}: every event"
        );
        assert_eq!(pb_report.used, text_report.used, "{pb}: events used");
        for field in [
            (pb_report.pages_added, text_report.pages_added),
            (pb_report.pages_deleted, text_report.pages_deleted),
            (pb_report.pages_reclaimed, text_report.pages_reclaimed),
            (pb_report.inputs, text_report.inputs),
            (pb_report.reads, text_report.reads),
        ] {
            assert_eq!(field.0, field.1, "{pb}");
        }
        // The protobuf's names are whole; the text's comm is cut to 15 bytes.
        for (p, t) in from_pb
            .tables
            .processes
            .iter()
            .zip(&from_text.tables.processes)
        {
            assert_eq!(p.pid, t.pid);
            assert!(
                p.name.starts_with(&t.name) || t.name.starts_with(&p.name),
                "{p:?} {t:?}"
            );
        }
    }
}

#[test]
fn every_event_kind_of_the_fixture_is_read() {
    let (t, report) = protobuf("all-events.pftrace");
    let stats = report.perfetto.as_ref().expect("perfetto stats");
    for used in [
        "mm_filemap_add_to_page_cache",
        "mm_filemap_delete_from_page_cache",
        "mm_vmscan_lru_shrink_inactive",
        "oom_score_adj_update",
        "sched_process_exit",
        "sched_process_fork",
        "task_newtask",
        "task_rename",
        "tracing_mark_write (input)",
    ] {
        assert!(report.used.contains_key(used), "{used}: {:?}", report.used);
    }
    // sched_wakeup is not decoded: skipped and counted.
    assert_eq!(report.ignored.get("(an event type not decoded)"), Some(&1));
    assert_eq!(stats.events_not_decoded, 1);
    assert!(
        stats.process_tree_processes >= 4 && stats.packages >= 2,
        "{stats:?}"
    );
    assert!(stats.compact_sched_switches > 0, "{stats:?}");
    // Names: the tree's command lines, whole (the events' comm is cut to 15 bytes);
    // task_rename's new name; the render thread folded into its process.
    let name = |pid: u32| {
        t.tables
            .processes
            .iter()
            .find(|p| p.pid == pid)
            .map(|p| p.name.clone())
    };
    assert_eq!(name(1000).as_deref(), Some("com.example.gallery"));
    assert_eq!(name(2000).as_deref(), Some("com.example.music"));
    assert_eq!(name(4000).as_deref(), Some("camera"));
    assert!(report.threads >= 1);
    let gallery = report.processes.iter().find(|p| p.pid == 1000).unwrap();
    assert!(gallery.accesses > 0);
    // The input marker became one input of the gallery; the other markers were not input.
    assert_eq!(report.inputs, 1);
    assert!(report
        .ignored
        .get("trace markers (not input)")
        .is_some_and(|&n| n >= 2));
}

#[test]
fn generic_events_are_read_by_their_field_names() {
    let (t, report) = protobuf("generic-events.pftrace");
    for used in [
        "mm_filemap_get_pages",
        "mm_filemap_map_pages",
        "mm_filemap_fault",
        "page_fault_user",
        "mm_vmscan_lru_shrink_inactive",
    ] {
        assert!(report.used.contains_key(used), "{used}: {:?}", report.used);
    }
    assert_eq!(report.accesses_from, "read-path");
    assert!(report.anon_accesses > 0 && t.events.iter().any(|e| e.is_anon() && e.is_write()));
}

#[test]
fn gzip_gives_the_same_trace() {
    let (plain, _) = protobuf("all-events.pftrace");
    let (gz, report) = protobuf("all-events.pftrace.gz");
    assert_eq!(plain.events, gz.events);
    assert_eq!(plain.tables, gz.tables);
    assert!(report.perfetto.unwrap().bytes > 0);
}

#[test]
fn bundles_of_every_cpu_are_merged_in_time_order() {
    let (t, report) = protobuf("split-bundles.pftrace");
    let times: Vec<u64> = t.accesses().map(|e| e.time_ns()).collect();
    assert_eq!(times.len(), 200);
    assert!(times.windows(2).all(|w| w[0] <= w[1]));
    assert_eq!(report.reordered_times, 0, "sorted before they are applied");
    let stats = report.perfetto.unwrap();
    assert!(stats.ftrace_bundles > 4, "{stats:?}");
}

#[test]
fn a_truncated_file_is_an_error_at_the_packet_it_cuts() {
    let e = perfetto::import_file(&data("truncated.pftrace"), ImportOptions::default())
        .expect_err("truncated");
    let Error::Format {
        position: Position::Byte(at),
        message,
        ..
    } = &e
    else {
        panic!("{e}");
    };
    assert_mentions(message, &["truncated"]);
    // The packet it names starts inside the file and runs past its end.
    let len = std::fs::metadata(data("truncated.pftrace")).unwrap().len();
    assert!(*at < len, "{e}");
    // Whole, the same bytes read: it was the file's end that cut it.
    let whole = std::fs::read(data("all-events.pftrace")).unwrap();
    let cut = std::fs::read(data("truncated.pftrace")).unwrap();
    assert!(whole.starts_with(&cut) && whole.len() > cut.len());
}

#[test]
fn bytes_that_are_not_a_packet_stream_are_errors_not_panics() {
    let dir = tempfile::tempdir().unwrap();
    let cases: [(&str, &[u8]); 5] = [
        // A packet claiming 2^40 bytes: refused before anything is read.
        ("huge", &[0x0a, 0x80, 0x80, 0x80, 0x80, 0x80, 0x20]),
        // Wire type 7 does not exist.
        ("wire", &[0x0f, 0x00]),
        // A varint that never ends.
        (
            "varint",
            &[
                0x0a, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
            ],
        ),
        // A packet whose bundle holds an event that is not a message.
        ("event", &[0x0a, 0x04, 0x0a, 0x02, 0x12, 0x05]),
        // Ends inside a tag.
        ("tag", &[0x0a, 0x02, 0x08, 0x01, 0x80]),
    ];
    for (name, bytes) in cases {
        let path = dir.path().join(name);
        std::fs::write(&path, bytes).unwrap();
        let strict = ImportOptions {
            strict: true,
            ..Default::default()
        };
        match perfetto::import_file(&path, strict) {
            Err(Error::Format { position, .. }) => {
                assert!(
                    matches!(position, Position::Byte(_)),
                    "{name}: {position:?}"
                )
            }
            other => panic!("{name}: {other:?}"),
        }
    }
}

#[test]
fn a_trace_without_memory_events_gives_no_events_and_says_what_it_held() {
    let (t, report) = protobuf("no-memory-events.pftrace");
    assert!(t.events.is_empty());
    let stats = report.perfetto.unwrap();
    assert!(stats.packets > 0 && stats.ftrace_events > 0);
    assert!(report.used.is_empty(), "{:?}", report.used);
    assert!(!report.ignored.is_empty());
}

#[test]
fn protobuf_is_told_from_text_by_parsing() {
    for (name, protobuf) in [
        ("all-events.pftrace", true),
        ("all-events.pftrace.gz", true),
        ("compressed-packets.pftrace", true),
        // Its first 64 bytes are all printable: only parsing tells.
        ("leading-unknown-fields.pftrace", true),
        ("truncated.pftrace", true),
        ("all-events.txt", false),
        ("generic-events.txt", false),
    ] {
        assert_eq!(
            perfetto::is_protobuf_file(&data(name)).unwrap(),
            protobuf,
            "{name}"
        );
    }
    // A whole input that is one frame cut short is text; a head cut by its size is not.
    assert!(!perfetto::is_packet_stream(b"\n# tracer: nop\n", true));
    assert!(perfetto::is_packet_stream(b"\n# tracer: nop\n", false));
}

/// Deflated batches of packets (`compressed_packets`, as the tracing service writes them
/// when asked to compress), and a first packet of unknown fields nested 20 deep, give
/// exactly the events of the plain trace, event by event.
#[test]
fn compressed_batches_and_unknown_fields_give_the_plain_trace() {
    let (plain, plain_report) = protobuf("all-events.pftrace");
    let plain_stats = plain_report.perfetto.unwrap();
    for name in [
        "compressed-packets.pftrace",
        "leading-unknown-fields.pftrace",
    ] {
        let (t, report) = protobuf(name);
        assert_eq!(t.events.len(), plain.events.len(), "{name}");
        for (i, (a, b)) in plain.events.iter().zip(&t.events).enumerate() {
            assert_eq!(a, b, "{name}: event {i}");
        }
        assert_eq!(t.tables, plain.tables, "{name}");
        let stats = report.perfetto.unwrap();
        assert_eq!(stats.ftrace_events, plain_stats.ftrace_events, "{name}");
        assert_eq!(stats.packets_used, plain_stats.packets_used, "{name}");
        if name == "compressed-packets.pftrace" {
            // 9 packets in batches of 3: 3 batches, 3 outer and 9 inner packets.
            assert_eq!(stats.compressed_batches, 3);
            assert_eq!(stats.packets, plain_stats.packets + 3);
            assert_eq!(stats.compressed_bytes, plain_stats.bytes);
        } else {
            assert_eq!(stats.packets_other, plain_stats.packets_other + 1);
        }
    }
    // The same from a stream, which is told protobuf by parsing too.
    let bytes = std::fs::read(data("leading-unknown-fields.pftrace")).unwrap();
    let (t, _) = perfetto::import_stream(
        Path::new("<stdin>"),
        std::io::Cursor::new(bytes),
        ImportOptions::default(),
    )
    .unwrap();
    assert_eq!(t.events, plain.events);
    // And compressed, as `zcat`-less pipes give it: gzip and zstd.
    let plain_bytes = std::fs::read(data("all-events.pftrace")).unwrap();
    let gz = std::fs::read(data("all-events.pftrace.gz")).unwrap();
    let zst = zstd::encode_all(plain_bytes.as_slice(), 3).unwrap();
    for (what, bytes) in [("gzip", gz), ("zstd", zst)] {
        let (t, _) = perfetto::import_stream(
            Path::new("<stdin>"),
            std::io::Cursor::new(bytes),
            ImportOptions::default(),
        )
        .unwrap();
        assert_eq!(t.events, plain.events, "{what}");
    }
}

/// A frame of `packet` as Trace's field 1.
fn frame(packet: &[u8]) -> Vec<u8> {
    let mut out = vec![0x0a];
    prost::encoding::encode_varint(packet.len() as u64, &mut out);
    out.extend_from_slice(packet);
    out
}

/// A packet whose compressed_packets (field 50) hold `batch` deflated.
fn deflated_packet(batch: &[u8]) -> Vec<u8> {
    use std::io::Write;
    let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::best());
    z.write_all(batch).unwrap();
    let deflated = z.finish().unwrap();
    let mut packet = vec![0x92, 0x03]; // field 50, length-delimited
    prost::encoding::encode_varint(deflated.len() as u64, &mut packet);
    packet.extend_from_slice(&deflated);
    packet
}

/// A deflate bomb in compressed_packets (64 KiB standing for 64 MiB of packets, and
/// batches nested to multiply it) is an error naming the packet's byte, found before
/// the bytes are held; a batch that does not inflate is a malformed packet, counted.
#[test]
fn deflate_bombs_in_compressed_packets_are_errors() {
    // One batch: 64 MiB + 1 of one unknown field's bytes, past what a batch may hold.
    let big = frame(&vec![0u8; (perfetto::MAX_INFLATED_BATCH + 1) as usize][..]);
    let bomb = [frame(&[0x40, 1]), frame(&deflated_packet(&big))].concat();
    drop(big);
    assert!(bomb.len() < 200 << 10, "{} bytes", bomb.len());
    let message = perfetto::import_stream(
        Path::new("bomb"),
        std::io::Cursor::new(bomb.clone()),
        ImportOptions::default(),
    )
    .unwrap_err()
    .to_string();
    assert!(
        message.contains("bomb: byte offset 4:") && message.contains("more than a batch may hold"),
        "{message}"
    );

    // Nested: each level small, together past what the file's bytes may stand for.
    let mut inner = frame(&vec![0u8; 8 << 20][..]);
    for _ in 0..3 {
        inner = frame(&deflated_packet(&inner));
    }
    let message = perfetto::import_stream(
        Path::new("nested"),
        std::io::Cursor::new(inner),
        ImportOptions::default(),
    )
    .map(|_| ())
    .unwrap_err()
    .to_string();
    assert!(message.contains("passes what"), "{message}");

    // Not zlib at all: a malformed packet, reported as such.
    let junk = [frame(&[0x92, 0x03, 4, 1, 2, 3, 4])].concat();
    let (_, report) = perfetto::import_stream(
        Path::new("junk"),
        std::io::Cursor::new(junk),
        ImportOptions::default(),
    )
    .unwrap();
    let stats = report.perfetto.clone().unwrap();
    assert_eq!(stats.compressed_batches, 1);
    assert!(
        format!("{report:?}").contains("compressed_packets that inflate"),
        "{report:?}"
    );
}
