//! `docs/flashfs-read.md` stays true to the code: its profile table is the profiles'
//! values and its prediction table is what the model computes. On a deliberate change,
//! review the fresh table printed on failure and paste it into the page.

use std::fmt::Write;

use mobmem::devices::platform::Platform;
use mobmem::mm::fs::{read_twice, Codec, ReadPath, StoredFile, StoredPage};

const DOC: &str = include_str!("../../../docs/flashfs-read.md");

/// Up to four decimals, trailing zeros dropped.
fn number(value: f64) -> String {
    let text = format!("{value:.4}");
    let text = text.trim_end_matches('0').trim_end_matches('.');
    text.to_string()
}

/// A table row: field, unit and how to show the field's value.
type Row = (&'static str, &'static str, fn(&Platform) -> String);

fn profile_table() -> String {
    let platforms: Vec<Platform> = Platform::names()
        .iter()
        .map(|name| Platform::named(name).unwrap())
        .collect();
    let rows: Vec<Row> = vec![
        ("flash_read_ns_per_byte", "ns/B", |p| {
            number(p.flash_read_ns_per_byte())
        }),
        ("flash_read_nj_per_byte", "nJ/B", |p| {
            number(p.flash_read_nj_per_byte())
        }),
        ("flash_read_by_cpu", "-", |p| {
            p.flash_read_by_cpu.to_string()
        }),
        ("ram_copy_ns_per_byte", "ns/B", |p| {
            number(p.ram_copy_ns_per_byte())
        }),
        ("ram_read_nj_per_byte", "nJ/B", |p| {
            number(p.ram_read_nj_per_byte())
        }),
        ("ram_write_nj_per_byte", "nJ/B", |p| {
            number(p.ram_write_nj_per_byte())
        }),
        ("page_alloc_ns", "ns/page", |p| number(p.page_alloc_ns)),
        ("page_alloc_nj", "nJ/page", |p| number(p.page_alloc_nj)),
        ("page_lookup_ns", "ns/page", |p| number(p.page_lookup_ns)),
        ("fs_page_ns", "ns/page", |p| number(p.fs_page_ns)),
        ("decompress_ns_per_byte.zlib", "ns/B out", |p| {
            number(p.decompress_ns_per_byte.zlib)
        }),
        ("decompress_ns_per_byte.lzo", "ns/B out", |p| {
            number(p.decompress_ns_per_byte.lzo)
        }),
        ("decompress_ns_per_byte.lz4", "ns/B out", |p| {
            number(p.decompress_ns_per_byte.lz4)
        }),
        ("decompress_ns_per_byte.zstd", "ns/B out", |p| {
            number(p.decompress_ns_per_byte.zstd)
        }),
        ("cpu_active_w", "W", |p| number(p.cpu_active_w)),
        ("base_w", "W", |p| number(p.base_w)),
    ];
    let mut out = String::new();
    let names: Vec<&str> = platforms.iter().map(|p| p.name.as_str()).collect();
    writeln!(out, "| field | unit | {} |", names.join(" | ")).unwrap();
    writeln!(out, "|---|---|{}", "---|".repeat(names.len())).unwrap();
    for (field, unit, value) in rows {
        let values: Vec<String> = platforms.iter().map(value).collect();
        writeln!(out, "| `{field}` | {unit} | {} |", values.join(" | ")).unwrap();
    }
    out
}

/// 1 MiB (256 pages) with the first `compressed` pages stored compressed, 25 bytes saved.
fn one_mib(compressed: usize) -> StoredFile {
    let pages = (0..256)
        .map(|index| StoredPage {
            data_len: 4096,
            stored_len: if index < compressed { 4096 - 25 } else { 4096 },
            compressed: index < compressed,
        })
        .collect();
    StoredFile {
        name: "mpeg".into(),
        codec: Codec::Zlib,
        pages,
    }
}

fn prediction_table() -> String {
    let mut out = String::new();
    writeln!(
        out,
        "| platform | path | compressed pages | first read ms | first read mJ | re-read ms | re-read mJ |"
    )
    .unwrap();
    writeln!(out, "|---|---|---|---|---|---|---|").unwrap();
    for name in Platform::names() {
        let platform = Platform::named(name).unwrap();
        let cases = [
            (ReadPath::SELECTIVE, 0),
            (ReadPath::PAGE_CACHE, 0),
            (ReadPath::PAGE_CACHE, 26),
            (ReadPath::PAGE_CACHE, 256),
        ];
        for (path, compressed) in cases {
            let (first, again) = read_twice(&one_mib(compressed), path, &platform).unwrap();
            writeln!(
                out,
                "| {name} | {} | {compressed} of 256 | {:.3} | {:.3} | {:.3} | {:.3} |",
                path.name(),
                first.time_ns / 1e6,
                first.energy_nj / 1e6,
                again.time_ns / 1e6,
                again.energy_nj / 1e6
            )
            .unwrap();
        }
    }
    out
}

#[test]
fn the_profile_table_is_the_profiles() {
    let table = profile_table();
    assert!(DOC.contains(&table), "fresh table:\n{table}");
}

#[test]
fn the_prediction_table_is_what_the_model_computes() {
    let table = prediction_table();
    assert!(DOC.contains(&table), "fresh table:\n{table}");
}

#[test]
fn every_platform_field_is_documented() {
    let text = toml::to_string(&Platform::pxa250()).unwrap();
    let mut table = String::new();
    for line in text.lines() {
        if let Some(name) = line.strip_prefix('[') {
            table = format!("{}.", name.trim_end_matches(']'));
        } else if let Some((key, _)) = line.split_once(" = ") {
            let field = format!("{table}{key}");
            if field != "name" {
                assert!(
                    DOC.contains(&format!("`{field}`")),
                    "{field} is not in the page"
                );
            }
        }
    }
}
