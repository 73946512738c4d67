//! `DIR/index.html`: every experiment of the run, its claims and its figures.

use std::fmt::Write as _;
use std::fs;
use std::path::Path;

use super::claims::{Expect, Verdict, RULE};
use super::{short, ExperimentReport};
use crate::{Error, Result};

fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// Write `DIR/index.html` linking the given experiments' folders.
pub fn write_index(dir: &Path, reports: &[ExperimentReport]) -> Result<()> {
    // The links name files `write_experiment` wrote: the same names, the same checks.
    for r in reports {
        super::safe_file_name(&r.table.experiment)?;
        for f in &r.figures {
            super::safe_file_name(&f.id)?;
        }
    }
    let mut h = String::new();
    h.push_str(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>mobmem report</title>\n<style>\
body{font-family:sans-serif;max-width:1100px;margin:2em auto;padding:0 1em;color:#222}\
table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #ccc;padding:4px 8px;text-align:left}\
.reproduced{color:#176317;font-weight:bold}.direction-only{color:#8a5a00;font-weight:bold}\
.not-reproduced{color:#a11;font-weight:bold}.not-testable{color:#555;font-weight:bold}img{max-width:100%;border:1px solid #eee}\
.figs{display:grid;grid-template-columns:1fr 1fr;gap:8px}</style></head><body>\n<h1>mobmem report</h1>\n",
    );
    let total: usize = reports.iter().map(|r| r.claims.len()).sum();
    let _ = write!(h, "<p>{} experiment(s)", reports.len());
    if total > 0 {
        let count = |v: Verdict| {
            reports
                .iter()
                .flat_map(|r| &r.claims)
                .filter(|c| c.verdict == v)
                .count()
        };
        let _ = write!(
            h,
            "; {total} paper claims: {} reproduced, {} direction-only, {} not reproduced, {} not testable",
            count(Verdict::Reproduced),
            count(Verdict::DirectionOnly),
            count(Verdict::NotReproduced),
            count(Verdict::NotTestable)
        );
    }
    h.push_str(".</p>\n");
    if total > 0 {
        let _ = writeln!(h, "<p class=\"rule\"><b>Verdicts.</b> {}</p>", escape(RULE));
    }
    h.push_str("<ul>\n");
    for r in reports {
        let name = escape(&r.table.experiment);
        let _ = writeln!(
            h,
            "<li><a href=\"#{name}\">{name}</a>: {}</li>",
            escape(&r.table.title)
        );
    }
    h.push_str("</ul>\n");
    for r in reports {
        let name = escape(&r.table.experiment);
        let _ = writeln!(
            h,
            "<h2 id=\"{name}\">{name}: {}</h2>",
            escape(&r.table.title)
        );
        for note in &r.notes {
            let _ = writeln!(h, "<p>{}</p>", escape(note));
        }
        let _ = writeln!(
            h,
            "<p>Data: <a href=\"{name}/results.csv\">results.csv</a> (long format), \
<a href=\"{name}/results.json\">results.json</a>, <a href=\"{name}/claims.json\">claims.json</a>.</p>"
        );
        if let Some((header, rows)) = r.facts.split_first() {
            h.push_str("<table><tr>");
            for cell in header {
                let _ = write!(h, "<th>{}</th>", escape(cell));
            }
            h.push_str("</tr>\n");
            for row in rows {
                h.push_str("<tr>");
                for cell in row {
                    let _ = write!(h, "<td>{}</td>", escape(cell));
                }
                h.push_str("</tr>\n");
            }
            h.push_str("</table>\n");
        }
        if !r.claims.is_empty() {
            h.push_str(
                "<table><tr><th>claim</th><th>paper</th><th>measured: mean [95% interval]</th>\
<th>seeds</th><th>verdict</th><th>why</th></tr>\n",
            );
            for c in &r.claims {
                let paper = match (&c.expect, c.paper) {
                    (Expect::AtLeast { bound }, _) => format!("&ge; {}", short(*bound)),
                    (Expect::AtMost { bound }, _) => format!("&le; {}", short(*bound)),
                    (_, Some(p)) => short(p),
                    (_, None) => "-".into(),
                };
                let _ = writeln!(
                    h,
                    "<tr id=\"{name}-{}\"><td>{}</td><td>{paper} {}</td><td>{} [{}, {}] {}</td><td>{}</td>\
<td class=\"{}\">{}</td><td>{}</td></tr>",
                    escape(&c.id),
                    escape(&c.claim),
                    escape(&c.unit),
                    short(c.mean),
                    short(c.ci95[0]),
                    short(c.ci95[1]),
                    escape(&c.unit),
                    c.seeds,
                    c.verdict.name(),
                    c.verdict.name(),
                    escape(c.explanation.as_deref().unwrap_or("")),
                );
            }
            h.push_str("</table>\n");
        }
        h.push_str("<div class=\"figs\">\n");
        for f in &r.figures {
            let _ = writeln!(
                h,
                "<a href=\"{name}/{0}.svg\"><img src=\"{name}/{0}.svg\" alt=\"{1}\"></a>",
                escape(&f.id),
                escape(&f.title)
            );
        }
        h.push_str("</div>\n");
    }
    h.push_str("</body></html>\n");
    fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
    let tmp = dir.join(".index.html.partial");
    fs::write(&tmp, h).map_err(|e| Error::io(&tmp, e))?;
    let path = dir.join("index.html");
    fs::rename(&tmp, &path).map_err(|e| Error::io(&path, e))
}
