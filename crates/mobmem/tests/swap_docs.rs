//! `docs/swap.md` stays true to the code: its tables of defaults are the code's
//! defaults. On a deliberate change, review the fresh table printed on failure and paste
//! it into the page.

use std::fmt::Write;

use mobmem::mm::swap::workload::AppCyclingConfig;
use mobmem::mm::swap::{SwapConfig, ARCHITECTURES};

const DOC: &str = include_str!("../../../docs/swap.md");

/// A number as people write it: no trailing zeros, thousands unseparated.
fn number(value: f64) -> String {
    let text = format!("{value:.4}");
    text.trim_end_matches('0').trim_end_matches('.').to_string()
}

fn table(header: &str, rows: &[(String, String)]) -> String {
    let mut out = format!("| {header} | default |\n|---|---|\n");
    for (name, value) in rows {
        writeln!(out, "| `{name}` | {value} |").unwrap();
    }
    out
}

fn devices_table() -> String {
    let d = SwapConfig::default().devices;
    let rows = [
        ("flash.read_ns", d.flash.read_ns),
        ("flash.write_ns", d.flash.write_ns),
        ("flash.read_nj", d.flash.read_nj),
        ("flash.write_nj", d.flash.write_nj),
        (
            "flash.endurance_pe_cycles",
            d.flash.endurance_writes.unwrap(),
        ),
        ("flash.capacity_gib", d.flash.capacity_gib.unwrap()),
        ("nvm.read_ns", d.nvm.read_ns),
        ("nvm.write_ns", d.nvm.write_ns),
        ("nvm.read_nj", d.nvm.read_nj),
        ("nvm.write_nj", d.nvm.write_nj),
        ("zram.compression_ratio", d.zram.compression_ratio),
        ("zram.incompressible_share", d.zram.incompressible_share),
        ("zram.compress_ns", d.zram.compress_ns),
        ("zram.decompress_ns", d.zram.decompress_ns),
        ("zram.compress_nj", d.zram.compress_nj),
        ("zram.decompress_nj", d.zram.decompress_nj),
    ];
    let rows: Vec<(String, String)> = rows
        .iter()
        .map(|(n, v)| (format!("devices.{n}"), number(*v)))
        .collect();
    table("device figure", &rows)
}

fn run_table() -> String {
    let c = SwapConfig::default();
    let rows = vec![
        ("architecture", c.architecture.clone()),
        ("dram_pages", c.dram_pages.to_string()),
        ("nvm_pages", c.nvm_pages.to_string()),
        ("zram.pool_pages", c.zram.pool_pages.to_string()),
        (
            "zram.writeback_limit_pages_per_day",
            c.zram.writeback_limit_pages_per_day.to_string(),
        ),
        ("zram.idle_age_ns", c.zram.idle_age_ns.to_string()),
        ("launch.window_ns", c.launch.window_ns.to_string()),
        (
            "launch.window_accesses",
            c.launch
                .window_accesses
                .map_or("none".into(), |n| n.to_string()),
        ),
        ("launch.warm_base_ns", number(c.launch.warm_base_ns)),
        ("launch.cold_start_ns", number(c.launch.cold_start_ns)),
        (
            "launch.charge_reclaim_writes",
            c.launch.charge_reclaim_writes.to_string(),
        ),
        (
            "reclaim",
            serde_json::to_value(c.reclaim)
                .unwrap()
                .as_str()
                .unwrap()
                .into(),
        ),
        (
            "slot_on_swap_in",
            serde_json::to_value(c.slot_on_swap_in)
                .unwrap()
                .as_str()
                .unwrap()
                .into(),
        ),
    ];
    let rows: Vec<(String, String)> = rows.into_iter().map(|(n, v)| (n.into(), v)).collect();
    table("setting", &rows)
}

fn workload_table() -> String {
    let value = serde_json::to_value(AppCyclingConfig::default()).unwrap();
    let rows: Vec<(String, String)> = value
        .as_object()
        .unwrap()
        .iter()
        .map(|(k, v)| (k.clone(), v.to_string().replace(',', ", ")))
        .collect();
    table("app-cycling field", &rows)
}

fn architecture_table() -> String {
    let mut out = String::from("| name | what it is |\n|---|---|\n");
    for a in ARCHITECTURES {
        writeln!(out, "| `{}` | {} |", a.name, a.summary).unwrap();
    }
    out
}

#[test]
fn the_page_lists_the_code_defaults() {
    let stale: Vec<String> = [
        ("devices", devices_table()),
        ("run settings", run_table()),
        ("workload", workload_table()),
        ("architectures", architecture_table()),
    ]
    .into_iter()
    .filter(|(_, fresh)| !DOC.contains(fresh.as_str()))
    .map(|(what, fresh)| format!("the {what} table differs from the code; the code's:\n{fresh}"))
    .collect();
    assert!(stale.is_empty(), "docs/swap.md: {}", stale.join("\n"));
}
