//! Fuzz targets: every reader of trace files and every parser of config files, each as
//! a function of a file's bytes.
//!
//! A target MUST NOT panic, run long or allocate far beyond what its input holds;
//! refusing the input with an error is the expected outcome for most inputs. Two
//! drivers run them:
//! - `fuzz/` (cargo fuzz, libFuzzer, coverage-guided; `scripts/fuzz.sh`), with a
//!   memory limit of 1 GiB and 10 s per input;
//! - `tests/fuzz_corpus.rs`, which replays the kept corpus (`fuzz/corpus/TARGET/`) and
//!   every input that once failed (`fuzz/regressions/TARGET/`) in the ordinary suite.
//!
//! Beyond "no panic", the trace targets check the stated expansion bound: an input of n
//! bytes as stored, compressed or not, yields at most
//! [`EXPANSION_ALLOWANCE`](trace::EXPANSION_ALLOWANCE) +
//! [`EXPANSION_PER_BYTE`](trace::EXPANSION_PER_BYTE) n events (docs/trace-formats.md):
//! 2^20 + 64 n in the ordinary build, which replays the corpus, and 2^12 + 8 n in the
//! fuzz driver, so that one input that asks for a million pages does not take
//! milliseconds of the campaign.

use std::io::Cursor;
use std::path::Path;

use serde::de::DeserializeOwned;

use crate::trace::ftrace::{FtraceImporter, ImportOptions};
use crate::trace::{self, Format};
use crate::workload::{Model, PRESETS};

/// One fuzz target.
pub struct Target {
    /// Its name: the folder of its corpus and of its regressions under `fuzz/`.
    pub name: &'static str,
    /// What it reads.
    pub input: &'static str,
    pub run: fn(&[u8]),
}

/// Every target.
pub static TARGETS: &[Target] = &[
    Target {
        name: "mmt",
        input: "a .mmt trace",
        run: |data| plain_trace(data, Format::Mmt),
    },
    Target {
        name: "csv",
        input: "a .csv trace",
        run: |data| plain_trace(data, Format::Csv),
    },
    Target {
        name: "lis",
        input: "a .lis (ARC) trace",
        run: |data| plain_trace(data, Format::Lis),
    },
    Target {
        name: "oracle-general",
        input: "an oracleGeneral (libCacheSim) trace",
        run: |data| plain_trace(data, Format::OracleGeneral),
    },
    Target {
        name: "vscsi",
        input: "a vscsi trace (libCacheSim's layouts, versions 1 and 2)",
        run: |data| plain_trace(data, Format::Vscsi),
    },
    Target {
        name: "twr",
        input: "a twr and a twrNS trace (libCacheSim's Twitter layouts)",
        run: |data| {
            plain_trace(data, Format::Twr);
            plain_trace(data, Format::TwrNs);
        },
    },
    Target {
        name: "mobile-block",
        input: "a Pixel 6a block trace (--format mobile-block)",
        run: |data| plain_trace(data, preset("mobile-block")),
    },
    Target {
        name: "columns",
        input: "a column spec on the first line, then a text trace read by it",
        run: columns_trace,
    },
    Target {
        name: "zstd",
        input: "a zstd-compressed .lis and .mmt trace (the bytes after the zstd magic)",
        run: zstd_trace,
    },
    Target {
        name: "ftrace",
        input: "ftrace/atrace text for `trace import --from ftrace`",
        run: |data| ftrace_text(data, false),
    },
    Target {
        name: "perfetto-text",
        input: "`traceconv systrace` text for `trace import --from perfetto`",
        run: |data| ftrace_text(data, true),
    },
    Target {
        name: "perfetto",
        input: "a Perfetto protobuf trace for `trace import --from perfetto`",
        run: perfetto_protobuf,
    },
    Target {
        name: "ksm-snapshot",
        input: "a .ksnap snapshot of page fingerprints",
        run: ksm_snapshot,
    },
    Target {
        name: "host-state",
        input: "a host state file (`mobmem host restore` reads it)",
        run: host_state,
    },
    Target {
        name: "report",
        input: "a report folder's JSON files, NUL-separated: report, claims, findings, paper figures, provenance (`report index`, `report summary`)",
        run: report_folder,
    },
    Target {
        name: "experiment",
        input: "an experiment file of any kind (TOML)",
        run: experiment,
    },
    Target {
        name: "workload",
        input: "a workload config of every preset's model (TOML)",
        run: workload,
    },
    Target {
        name: "settings",
        input: "swap, reclaim, KSM, platform and phone settings (TOML)",
        run: settings,
    },
];

/// The target called `name`.
pub fn target(name: &str) -> Option<&'static Target> {
    TARGETS.iter().find(|t| t.name == name)
}

/// Read every event and the tables, stopping once more than `cap` were read.
/// Returns the events read. An input of an odd length is read as a stream of
/// unknown length (a FIFO's), the others as bytes of a known length, so that both
/// bounds are exercised; either may be gzip- or zstd-compressed.
fn drain(name: &str, data: Vec<u8>, format: Format, cap: u64) -> u64 {
    let name = Path::new(name);
    let opened = if data.len() % 2 == 1 {
        trace::open_stream(name, Cursor::new(data), Some(format))
    } else {
        trace::open_data(name, data, Some(format))
    };
    let Ok(mut source) = opened else {
        return 0;
    };
    let mut batch = Vec::new();
    let mut events = 0u64;
    loop {
        match source.read_batch(&mut batch, 1 << 12) {
            Ok(true) => events += batch.len() as u64,
            Ok(false) => break,
            Err(_) => return events,
        }
        if events >= cap {
            return events;
        }
    }
    let _ = source.tables();
    events
}

/// The most events `bytes` of input (as stored) may yield.
fn expansion_bound(bytes: usize) -> u64 {
    trace::EXPANSION_ALLOWANCE + trace::EXPANSION_PER_BYTE * bytes as u64
}

fn plain_trace(data: &[u8], format: Format) {
    // The zstd magic would make this the zstd target's input.
    if data.starts_with(&[0x28, 0xb5, 0x2f, 0xfd]) {
        return;
    }
    let bound = expansion_bound(data.len());
    let events = drain("fuzz-input", data.to_vec(), format.clone(), bound + 1);
    assert!(
        events <= bound,
        "{} bytes of {} gave more than {bound} events",
        data.len(),
        format
    );
}

fn preset(name: &str) -> Format {
    name.parse()
        .unwrap_or_else(|e| unreachable!("{name} is a preset: {e}"))
}

/// The first line a column spec (any text), the rest the trace it reads.
fn columns_trace(data: &[u8]) {
    let split = data.iter().position(|&b| b == b'\n').unwrap_or(data.len());
    let spec = String::from_utf8_lossy(&data[..split]);
    let Ok(Some(format)) = Format::with_columns(None, Some(&spec)) else {
        return;
    };
    plain_trace(data.get(split + 1..).unwrap_or_default(), format);
}

fn zstd_trace(data: &[u8]) {
    let mut bytes = vec![0x28, 0xb5, 0x2f, 0xfd];
    bytes.extend_from_slice(data);
    // The events of a trace are bounded by its bytes as stored, compressed or not.
    let bound = expansion_bound(bytes.len());
    for (name, format) in [
        ("fuzz-input.lis.zst", Format::Lis),
        ("fuzz-input.mmt.zst", Format::Mmt),
    ] {
        let events = drain(name, bytes.clone(), format, bound + 1);
        assert!(
            events <= bound,
            "{} zstd bytes gave {events} events of {name}",
            data.len() + 4
        );
    }
}

fn ftrace_text(data: &[u8], perfetto: bool) {
    let options = ImportOptions {
        perfetto,
        ..ImportOptions::default()
    };
    let mut importer = FtraceImporter::new(Path::new("fuzz-input.txt"), options);
    if importer.read(&mut Cursor::new(data)).is_ok() {
        let _ = importer.finish();
    }
}

fn perfetto_protobuf(data: &[u8]) {
    let name = Path::new("fuzz-input.pftrace");
    // How `--from perfetto` tells packets from text, on the same bytes.
    let _ = trace::perfetto::is_packet_stream(data, true);
    let _ = trace::perfetto::import_reader(name, Cursor::new(data), ImportOptions::default());
}

fn ksm_snapshot(data: &[u8]) {
    if let Ok(snapshot) = crate::mm::dedup::snapshot::Snapshot::parse(data, Path::new("f.ksnap")) {
        let _ = snapshot.population();
    }
}

fn report_folder(data: &[u8]) {
    use crate::report::{experiment_page, summary_markdown, Section, SectionFiles};
    let (report, files) = SectionFiles::from_nul_separated(data);
    // Read as `report index` reads a folder, then drawn as its pages are.
    if let Ok(section) = Section::parse(&report, &files, &|name| Path::new("fuzz").join(name)) {
        let _ = experiment_page(&section);
        let last = section.provenance.clone();
        let _ = summary_markdown(std::slice::from_ref(&section), last.as_ref());
    }
}

fn host_state(data: &[u8]) {
    // Read and described, as `host restore` lists what it will undo (never undone here).
    if let Ok(state) = crate::host::state::HostState::parse(data, Path::new("state.json")) {
        for change in &state.changes {
            let _ = change.describe();
        }
        let _ = state.owner_alive();
    }
}

/// The input as config text, as `config_file::read` takes it (`None` if it refuses).
fn config_text(data: &[u8]) -> Option<String> {
    crate::config_file::text(Path::new("fuzz-input.toml"), data.to_vec()).ok()
}

fn experiment(data: &[u8]) {
    let Some(text) = config_text(data) else {
        return;
    };
    // Every kind: the file's `kind` picks the parser of its keys. What parses must
    // write back as TOML.
    let base = Path::new("fuzz-folder");
    let Ok(file) = crate::experiments::ExperimentFile::parse(&text, "fuzz", base) else {
        return;
    };
    // What parses writes back as TOML that parses again, to the same file. (Its paths
    // are written resolved, so read back from the current folder.)
    let written = file
        .to_toml()
        .unwrap_or_else(|e| panic!("a file that parses does not write back: {e}"));
    let again = crate::experiments::ExperimentFile::parse(&written, "fuzz", Path::new(""))
        .unwrap_or_else(|e| panic!("a file written back does not parse: {e}\n{written}"));
    let rewritten = again.to_toml().expect("it wrote once");
    assert_eq!(written, rewritten, "writing back is not stable");
}

fn workload(data: &[u8]) {
    let Some(text) = config_text(data) else {
        return;
    };
    let _ = crate::workload::parse_config(&text, "fuzz");
    for preset in PRESETS.iter() {
        if let Model::Own { parse, .. } = preset.model {
            let _ = parse(&text, "fuzz");
        }
    }
}

/// Deserialize `text` as a `T` and validate it.
fn parse_and<T: DeserializeOwned>(text: &str, validate: fn(&T) -> crate::Result<()>) {
    if let Ok(value) = toml::from_str::<T>(text) {
        let _ = validate(&value);
    }
}

fn settings(data: &[u8]) {
    let Some(text) = config_text(data) else {
        return;
    };
    parse_and(&text, crate::mm::swap::SwapConfig::validate);
    parse_and(&text, crate::mm::reclaim::ReclaimConfig::validate);
    parse_and(&text, crate::mm::dedup::KsmParams::validate);
    parse_and(&text, crate::devices::platform::Platform::validate);
    let _ = crate::mm::phone::PhoneConfig::parse_with(
        &text,
        "fuzz",
        crate::config_file::Echo::Withhold,
    );
}
