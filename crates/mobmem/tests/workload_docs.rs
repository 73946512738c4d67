//! `docs/workloads.md` stays true to the code: every parameter is documented, and the
//! preset tables are the presets' values. On a deliberate change of a preset, review the
//! fresh table printed on failure and paste it into the page.

use std::fmt::Write;

use mobmem::workload::{generate, preset, preset_names, summarize, RegionKind, WorkloadConfig};

const DOC: &str = include_str!("../../../docs/workloads.md");

fn opt<T: std::fmt::Display>(value: Option<T>) -> String {
    value.map_or_else(|| "-".to_string(), |v| v.to_string())
}

/// A row of a Markdown table: every value as it displays.
macro_rules! row {
    ($($value:expr),* $(,)?) => {
        vec![$($value.to_string()),*]
    };
}

/// A Markdown table: the header, the rule, then the rows.
fn table(header: &[&str], rows: impl IntoIterator<Item = Vec<String>>) -> String {
    let mut out = format!(
        "| {} |\n|{}\n",
        header.join(" | "),
        "---|".repeat(header.len())
    );
    for row in rows {
        writeln!(out, "| {} |", row.join(" | ")).unwrap();
    }
    out
}

fn preset_tables(config: &WorkloadConfig) -> String {
    let apps = &config.apps;
    [
        table(
            &["`accesses`", "`scale`", "`session_mean_s`"],
            [row![config.accesses, config.scale, config.session_mean_s]],
        ),
        table(
            &[
                "app",
                "`pid`",
                "`foreground_weight`",
                "`running_at_start`",
                "`foreground_rate_per_s`",
                "`zipf_exponent`",
                "`service_adj`",
                "`wakeup_interval_s`",
                "`burst_accesses`",
                "`leave_accesses`",
                "`access_gap_ms`",
            ],
            apps.iter().map(|app| {
                let b = &app.background;
                row![
                    app.name,
                    app.pid,
                    app.foreground_weight,
                    app.running_at_start,
                    app.foreground_rate_per_s,
                    app.zipf_exponent,
                    opt(b.service_adj),
                    b.wakeup_interval_s,
                    b.burst_accesses,
                    b.leave_accesses,
                    b.access_gap_ms,
                ]
            }),
        ),
        table(
            &[
                "app",
                "region",
                "`kind`",
                "`pages`",
                "`foreground_weight`",
                "`background_weight`",
                "`write_fraction`",
            ],
            apps.iter().flat_map(|app| {
                app.regions.iter().map(|r| {
                    let kind = match r.kind {
                        RegionKind::File => "file",
                        RegionKind::Anon => "anon",
                    };
                    row![
                        app.name,
                        r.name,
                        kind,
                        r.pages,
                        r.foreground_weight,
                        r.background_weight,
                        r.write_fraction,
                    ]
                })
            }),
        ),
        table(
            &[
                "app",
                "`share`",
                "`pages_per_site`",
                "`touches_per_page`",
                "`revisit_probability`",
                "`revisit_window`",
            ],
            apps.iter().filter_map(|app| {
                let f = app.fresh.as_ref()?;
                Some(row![
                    app.name,
                    f.share,
                    f.pages_per_site,
                    f.touches_per_page,
                    f.revisit_probability,
                    f.revisit_window,
                ])
            }),
        ),
    ]
    .join("\n")
}

/// The text between `<!-- begin NAME -->` and `<!-- end NAME -->`.
fn block<'a>(doc: &'a str, name: &str) -> Option<&'a str> {
    let begin = format!("<!-- begin {name} -->\n");
    let end = format!("<!-- end {name} -->");
    let start = doc.find(&begin)? + begin.len();
    let stop = start + doc[start..].find(&end)?;
    Some(&doc[start..stop])
}

#[test]
fn preset_tables_in_the_docs_are_the_presets() {
    let mut stale = String::new();
    for name in preset_names() {
        let fresh = preset_tables(&preset(name).unwrap());
        if block(DOC, name).unwrap_or_default().trim() != fresh.trim() {
            stale.push_str(&format!(
                "<!-- begin {name} -->\n{fresh}<!-- end {name} -->\n\n"
            ));
        }
    }
    assert!(
        stale.is_empty(),
        "stale preset tables in docs/workloads.md; fresh ones:\n\n{stale}"
    );
}

/// Every key of a config (at any depth) is named in backquotes in the docs.
#[test]
fn every_parameter_is_documented() {
    fn keys(value: &serde_json::Value, out: &mut Vec<String>) {
        match value {
            serde_json::Value::Object(map) => {
                for (key, inner) in map {
                    out.push(key.clone());
                    keys(inner, out);
                }
            }
            serde_json::Value::Array(items) => items.iter().for_each(|v| keys(v, out)),
            _ => {}
        }
    }
    let mut all = Vec::new();
    for name in preset_names() {
        keys(
            &serde_json::to_value(preset(name).unwrap()).unwrap(),
            &mut all,
        );
    }
    let parameters = block(DOC, "parameters").expect("a parameters block");
    for key in all {
        assert!(
            parameters.contains(&format!("| `{key}` |")),
            "parameter `{key}` is missing from the parameter table of docs/workloads.md"
        );
    }
}

/// The TOML example of the page parses, validates and generates.
#[test]
fn the_toml_example_works() {
    let start = DOC.find("```toml\n").expect("a TOML example") + "```toml\n".len();
    let end = start + DOC[start..].find("```").unwrap();
    let config: WorkloadConfig = toml::from_str(&DOC[start..end]).unwrap();
    let summary = summarize(&generate(&config, 1).unwrap());
    assert_eq!(summary.accesses, config.accesses);
    assert!(summary.background_accesses > 0);
}
