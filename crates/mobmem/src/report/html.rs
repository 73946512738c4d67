//! The pages: `DIR/NAME/index.html` for each experiment (it opens alone: every link is
//! relative to its folder), and `DIR/index.html` with every experiment folder under
//! `DIR`, rebuilt from the files of the folders, so that the experiments of earlier
//! commands stay in it. Each page states its provenance, and the verdict rule once.
//! Also the markdown summary of the claims that the README shows.

use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};

use super::claims::{
    ClaimResult, FigureStatus, FindingResult, PaperFigure, PaperSide, Source, Verdict, RULE,
};
use super::numbers::{interval, significant};
use super::provenance::{seeds_text, Provenance};
use super::{safe_file_name, PageInfo};
use crate::experiments::sensitivity::Sensitivity;
use crate::output::{self, Existing, Placed};
use crate::{Error, Result};

fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// Everything one experiment's page shows, as written to its folder.
#[derive(Debug, Clone, PartialEq)]
pub struct Section {
    pub info: PageInfo,
    pub claims: Vec<ClaimResult>,
    pub findings: Vec<FindingResult>,
    pub paper_figures: Vec<PaperFigure>,
    /// The command that wrote the folder (absent from folders of older versions).
    pub provenance: Option<Provenance>,
    /// The claims' sensitivity to the assumed constants (`reproduce --sensitivity`).
    pub sensitivity: Option<Sensitivity>,
}

/// The largest report file read back (`report.json`, `claims.json`...): a report of
/// the largest grid (10,000 points) writes about 100 MB.
pub const MAX_REPORT_FILE_BYTES: u64 = 256 << 20;

fn read_json<T: serde::de::DeserializeOwned>(path: &Path) -> Result<Option<T>> {
    let bytes = match crate::input::read_all(path, MAX_REPORT_FILE_BYTES, "a report file") {
        Ok(bytes) => bytes,
        Err(Error::Io { error, .. }) if error.kind() == std::io::ErrorKind::NotFound => {
            return Ok(None)
        }
        Err(e) => return Err(e),
    };
    serde_json::from_slice(&bytes)
        .map(Some)
        .map_err(|e| Error::config(path.display().to_string(), e.to_string()))
}

impl Section {
    /// The section of the experiment folder `folder` (`report.json` is required; the
    /// other files are read when present). Its name and figure ids must be plain file
    /// names, as [`safe_file_name`] checks, since the pages link them.
    pub fn load(folder: &Path) -> Result<Section> {
        let read = |name: &str| -> Result<Option<Vec<u8>>> {
            let path = folder.join(name);
            match crate::input::read_all(&path, MAX_REPORT_FILE_BYTES, "a report file") {
                Ok(bytes) => Ok(Some(bytes)),
                Err(Error::Io { error, .. }) if error.kind() == std::io::ErrorKind::NotFound => {
                    Ok(None)
                }
                Err(e) => Err(e),
            }
        };
        let info = read("report.json")?.ok_or_else(|| {
            Error::config(
                folder.display().to_string(),
                "no report.json: not an experiment folder of this version",
            )
        })?;
        let files = SectionFiles {
            claims: read("claims.json")?,
            findings: read("findings.json")?,
            paper_figures: read("paper-figures.json")?,
            provenance: read("provenance.json")?,
            sensitivity: read("sensitivity.json")?,
        };
        Section::parse(&info, &files, &|name| folder.join(name))
    }

    /// A section from the bytes of its files (`report.json` and the others, when
    /// present); `path` names a file in errors.
    pub fn parse(
        report: &[u8],
        files: &SectionFiles,
        path: &dyn Fn(&str) -> std::path::PathBuf,
    ) -> Result<Section> {
        fn json<T: serde::de::DeserializeOwned>(
            bytes: Option<&[u8]>,
            path: std::path::PathBuf,
        ) -> Result<Option<T>> {
            bytes
                .map(|b| {
                    serde_json::from_slice(b)
                        .map_err(|e| Error::config(path.display().to_string(), e.to_string()))
                })
                .transpose()
        }
        let info: PageInfo = json(Some(report), path("report.json"))?.expect("given");
        safe_file_name(&info.experiment)?;
        for f in &info.figures {
            safe_file_name(&f.id)?;
        }
        Ok(Section {
            info,
            claims: json(files.claims.as_deref(), path("claims.json"))?.unwrap_or_default(),
            findings: json(files.findings.as_deref(), path("findings.json"))?.unwrap_or_default(),
            paper_figures: json(files.paper_figures.as_deref(), path("paper-figures.json"))?
                .unwrap_or_default(),
            provenance: json(files.provenance.as_deref(), path("provenance.json"))?,
            sensitivity: json(files.sensitivity.as_deref(), path("sensitivity.json"))?,
        })
    }
}

/// The files of a report folder besides `report.json`, as read (none when absent).
#[derive(Debug, Default)]
pub struct SectionFiles {
    pub claims: Option<Vec<u8>>,
    pub findings: Option<Vec<u8>>,
    pub paper_figures: Option<Vec<u8>>,
    pub provenance: Option<Vec<u8>>,
    pub sensitivity: Option<Vec<u8>>,
}

impl SectionFiles {
    /// A report folder packed into one buffer, as the `report` fuzz target's inputs and
    /// seeds are: `report.json`, then the claims, findings, paper figures and provenance
    /// files, separated by NUL bytes; an empty or missing part is a file the folder
    /// lacks. Returns `report.json`'s bytes and the other files.
    pub fn from_nul_separated(data: &[u8]) -> (Vec<u8>, SectionFiles) {
        let mut parts = data.split(|&b| b == 0).map(|p| p.to_vec());
        let report = parts.next().unwrap_or_default();
        let mut next = || parts.next().filter(|p| !p.is_empty());
        let files = SectionFiles {
            claims: next(),
            findings: next(),
            paper_figures: next(),
            provenance: next(),
            sensitivity: None,
        };
        (report, files)
    }
}

/// The sections of every experiment folder under `dir`: first those the last command
/// wrote (`DIR/provenance.json`), in its order, then the others by name. Returns that
/// provenance, the sections, and the folders that could not be read with the reason.
pub fn load_sections(dir: &Path) -> Result<(Option<Provenance>, Vec<Section>, Vec<String>)> {
    let last: Option<Provenance> = read_json(&dir.join("provenance.json"))?;
    let mut names: Vec<String> = last
        .as_ref()
        .map(|p| p.experiments.clone())
        .unwrap_or_default();
    let mut others = Vec::new();
    let entries = fs::read_dir(dir).map_err(|e| Error::io(dir, e))?;
    for entry in entries {
        let entry = entry.map_err(|e| Error::io(dir, e))?;
        let name = entry.file_name().to_string_lossy().to_string();
        if name.starts_with('.') || !entry.path().is_dir() || names.contains(&name) {
            continue;
        }
        if entry.path().join("report.json").is_file() {
            others.push(name);
        }
    }
    others.sort();
    names.extend(others);
    let mut sections = Vec::new();
    let mut unread = Vec::new();
    for name in names {
        if safe_file_name(&name).is_err() {
            unread.push(format!("{}: not a plain name", name.escape_debug()));
            continue;
        }
        match Section::load(&dir.join(&name)) {
            Ok(s) if s.info.experiment == name => sections.push(s),
            Ok(s) => unread.push(format!(
                "{name}: its report.json names experiment {}",
                s.info.experiment
            )),
            Err(e) => unread.push(format!("{name}: {e}")),
        }
    }
    Ok((last, sections, unread))
}

const STYLE: &str = "\
body{font-family:system-ui,-apple-system,'Segoe UI',Roboto,'DejaVu Sans',sans-serif;font-size:16px;\
line-height:1.45;max-width:1180px;margin:1.5em auto;padding:0 1em;color:#1d1d1d;background:#fff}\
h1{font-size:1.8em;margin:.3em 0}h2{font-size:1.45em;margin-top:2em;border-bottom:2px solid #ddd;padding-bottom:.2em}\
h3{font-size:1.15em;margin-top:1.6em}\
table{border-collapse:collapse;margin:.8em 0}td,th{border:1px solid #ccc;padding:5px 9px;text-align:left;vertical-align:top}\
th{background:#f3f3f3}.num{white-space:nowrap;font-variant-numeric:tabular-nums}\
.verdict{font-weight:bold;white-space:nowrap}\
.reproduced{color:#176317}.direction-only{color:#8a5a00}.not-reproduced{color:#a11}.not-testable{color:#555}\
.provenance th{width:7em}.provenance code,.cmd{word-break:break-all}\
.rule{background:#f6f6f0;border-left:4px solid #bbb;padding:.6em .9em}\
nav a{margin-right:1em}\
figure{margin:1.5em 0}figure img{width:960px;max-width:100%;height:auto;border:1px solid #e5e5e5;display:block}\
figcaption{max-width:960px;color:#333;margin-top:.4em}\
.earlier{background:#fff6e0;padding:.4em .8em;border-left:4px solid #e0b000}";

fn page(title: &str, body: &str) -> String {
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
<title>{}</title>\n<style>{STYLE}</style></head><body>\n{body}</body></html>\n",
        escape(title)
    )
}

fn provenance_table(p: &Provenance) -> String {
    let mut h = String::from("<table class=\"provenance\">\n");
    let mut row = |k: &str, v: String| {
        let _ = writeln!(h, "<tr><th>{k}</th><td>{v}</td></tr>");
    };
    row("build", escape(&p.build()));
    row(
        "command",
        format!("<code class=\"cmd\">{}</code>", escape(&p.command_line())),
    );
    if !p.overrides.is_empty() {
        let keys: Vec<String> = (p.overrides.iter())
            .map(|o| format!("<code>{}</code>", escape(o)))
            .collect();
        row("changed keys", keys.join(", "));
    }
    row("seeds", escape(&p.seeds_text()));
    row("date", format!("{} (UTC)", escape(&p.date_utc)));
    row(
        "machine",
        format!(
            "{}; {} worker thread(s) (results do not depend on them)",
            escape(&p.machine.describe()),
            p.threads
        ),
    );
    h.push_str("</table>\n");
    h
}

fn rule() -> String {
    format!(
        "<p class=\"rule\" id=\"rule\"><b>How verdicts are given.</b> {}</p>\n",
        escape(RULE)
    )
}

/// The verdicts of `claims` counted: the papers' claims, then (where there are any)
/// mobmem's own apart: "46 of the papers (…), 13 of mobmem's own (…)". `papers_word`
/// names the papers' count.
fn count_by_source(claims: &[&ClaimResult], papers_word: &str) -> String {
    let (own, papers): (Vec<&ClaimResult>, Vec<&ClaimResult>) =
        claims.iter().partition(|c| c.source == Source::Mobmem);
    if own.is_empty() {
        return format!("{} {papers_word}: {}", papers.len(), count(&papers));
    }
    format!(
        "{} {papers_word} ({}) and {} of mobmem's own ({})",
        papers.len(),
        count(&papers),
        own.len(),
        count(&own)
    )
}

fn count(claims: &[&ClaimResult]) -> String {
    let parts: Vec<String> = Verdict::ALL
        .iter()
        .map(|v| {
            let n = claims.iter().filter(|c| c.verdict == *v).count();
            format!("{n} {}", v.name())
        })
        .collect();
    parts.join(", ")
}

/// The paper's side of a claim: its number, or the bound (that of a claim the model
/// cannot test too, see [`ClaimResult::paper_side`]); mobmem's own bound says so.
fn paper_text(c: &ClaimResult) -> String {
    let text = match c.paper_side() {
        PaperSide::AtLeast(bound) => format!("≥ {}", significant(bound, 4)),
        PaperSide::AtMost(bound) => format!("≤ {}", significant(bound, 4)),
        PaperSide::Number(p) => significant(p, 4),
        PaperSide::Nothing => "-".into(),
    };
    match c.source {
        Source::Paper => text,
        Source::Mobmem => format!("mobmem's own: {text}"),
    }
}

fn measured_text(c: &ClaimResult) -> String {
    let [mean, lo, hi] = interval(c.mean, c.ci95[0], c.ci95[1]);
    if c.seeds > 1 {
        format!("{mean} [{lo}, {hi}]")
    } else {
        mean
    }
}

/// The sensitivity section: the rule, the constants with their ranges and sources, and
/// per claim its verdict at each end of each constant with a tornado plot of its value.
fn sensitivity_html(sensitivity: &Sensitivity, name: &str, prefix: &str) -> String {
    let mut h = String::new();
    let _ = writeln!(
        h,
        "<h3 id=\"{name}-sensitivity\">Sensitivity to the assumed constants</h3>\n<p>{}</p>",
        escape(&sensitivity.rule)
    );
    if sensitivity.constants.is_empty() {
        h.push_str("<p>The experiment declares no assumed constant.</p>\n");
        return h;
    }
    h.push_str(
        "<table><tr><th>constant</th><th>low</th><th>high</th><th>the range's source</th></tr>\n",
    );
    for c in &sensitivity.constants {
        let _ = writeln!(
            h,
            "<tr><td><code>{}</code></td><td>{}</td><td>{}</td><td>{}</td></tr>",
            escape(&c.key),
            escape(&c.low.to_string()),
            escape(&c.high.to_string()),
            escape(&c.source)
        );
    }
    h.push_str("</table>\n<table><tr><th>claim</th><th>verdict as shipped</th>");
    for c in &sensitivity.constants {
        for end in ["low", "high"] {
            let _ = write!(h, "<th><code>{}</code> {end}</th>", escape(&c.key));
        }
    }
    h.push_str("<th>robust</th></tr>\n");
    for claim in &sensitivity.claims {
        let _ = write!(
            h,
            "<tr><td>{} (<code>{}</code>)</td><td class=\"verdict {verdict}\">{verdict}</td>",
            escape(&claim.claim),
            escape(&claim.id),
            verdict = claim.base.verdict.name()
        );
        for end in &claim.ends {
            match &end.outcome {
                Some(o) => {
                    let _ = write!(
                        h,
                        "<td class=\"verdict {0}\">{0} ({1})</td>",
                        o.verdict.name(),
                        significant(o.mean, 4)
                    );
                }
                None => h.push_str("<td>no such claim</td>"),
            }
        }
        let robust = if claim.robust { "yes" } else { "no" };
        let _ = writeln!(h, "<td>{robust}</td></tr>");
    }
    h.push_str("</table>\n");
    for claim in &sensitivity.claims {
        let Ok(id) = safe_file_name(&claim.id) else {
            continue;
        };
        let _ = writeln!(
            h,
            "<figure><img src=\"{prefix}sensitivity-{id}.svg\" alt=\"{}\" width=\"960\">\
<figcaption>{}: its value as shipped (the line) and at each end of each constant.</figcaption></figure>",
            escape(&claim.id),
            escape(&claim.id)
        );
    }
    h
}

/// The body of one experiment's section. `prefix` leads every link to its files ("NAME/"
/// on the index, "" on its own page); ids are prefixed with the experiment's name so that
/// they are unique on the index.
fn section_body(s: &Section, prefix: &str) -> String {
    let name = escape(&s.info.experiment);
    let mut h = String::new();
    let figure_ids: Vec<&str> = s.info.figures.iter().map(|f| f.id.as_str()).collect();
    let mut nav = Vec::new();
    if !s.claims.is_empty() {
        nav.push(("claims", "Claims"));
    }
    if !s.findings.is_empty() {
        nav.push(("findings", "Findings"));
    }
    if !s.paper_figures.is_empty() {
        nav.push(("paper-figures", "The paper's figures"));
    }
    if s.sensitivity.is_some() {
        nav.push(("sensitivity", "Sensitivity"));
    }
    if !s.info.notes.is_empty() || s.info.facts.len() > 1 {
        nav.push(("notes", "Notes"));
    }
    if !s.info.figures.is_empty() {
        nav.push(("figures", "Figures"));
    }
    nav.push(("data", "Data"));
    h.push_str("<nav>");
    for (id, label) in &nav {
        let _ = write!(h, "<a href=\"#{name}-{id}\">{label}</a>");
    }
    h.push_str("</nav>\n");

    if !s.claims.is_empty() {
        let refs: Vec<&ClaimResult> = s.claims.iter().collect();
        let _ = writeln!(
            h,
            "<h3 id=\"{name}-claims\">Claims</h3>\n<p>{} claims: {}. Seeds: {}.</p>",
            s.claims.len(),
            count(&refs),
            escape(&seeds_text(&s.info.seeds))
        );
        h.push_str(
            "<table><tr><th>claim</th><th>paper</th><th>measured: mean [95% interval]</th>\
<th>seeds</th><th>verdict</th><th>explanation</th></tr>\n",
        );
        for c in &s.claims {
            let unit = escape(&c.unit);
            let _ = writeln!(
                h,
                "<tr id=\"{name}-claim-{id}\"><td>{claim}</td><td><span class=\"num\">{paper}</span> {unit}</td>\
<td><span class=\"num\">{measured}</span> {unit}</td><td>{seeds}</td>\
<td class=\"verdict {verdict}\">{verdict}</td><td>{explanation}</td></tr>",
                id = escape(&c.id),
                claim = escape(&c.claim),
                paper = escape(&paper_text(c)),
                measured = escape(&measured_text(c)),
                seeds = c.seeds,
                verdict = c.verdict.name(),
                explanation = escape(c.explanation.as_deref().unwrap_or("")),
            );
        }
        h.push_str("</table>\n");
    }
    if !s.findings.is_empty() {
        let _ = writeln!(
            h,
            "<h3 id=\"{name}-findings\">Findings beyond the paper's claims</h3>\n<ul>"
        );
        for f in &s.findings {
            let _ = writeln!(
                h,
                "<li id=\"{name}-finding-{}\">{} <small>({} seed(s))</small></li>",
                escape(&f.id),
                escape(&f.text),
                f.seeds
            );
        }
        h.push_str("</ul>\n");
    }
    if !s.paper_figures.is_empty() {
        let _ = writeln!(
            h,
            "<h3 id=\"{name}-paper-figures\">The paper's figures and tables</h3>\n\
<table><tr><th>paper</th><th>shows</th><th>here</th><th>figures</th><th>shape, or why not</th></tr>"
        );
        let links = |ids: &[String]| -> String {
            let parts: Vec<String> = ids
                .iter()
                .map(|id| {
                    if figure_ids.contains(&id.as_str()) {
                        format!("<a href=\"#{name}-fig-{0}\">{0}</a>", escape(id))
                    } else {
                        format!("{} (not in this report)", escape(id))
                    }
                })
                .collect();
            parts.join(", ")
        };
        for f in &s.paper_figures {
            let (status, figures, why) = match &f.status {
                FigureStatus::Reproduced {
                    figures,
                    shape,
                    measured,
                } => (
                    "reproduced",
                    links(figures),
                    format!("the paper's shape: {shape}. Here: {measured}"),
                ),
                FigureStatus::ShapeDiffers {
                    figures,
                    shape,
                    measured,
                } => (
                    "drawn, shape differs",
                    links(figures),
                    format!("the paper's shape: {shape}. Here: {measured}"),
                ),
                FigureStatus::Proxy { figures, why } => ("proxy", links(figures), why.clone()),
                FigureStatus::Missing { why } => ("missing", String::new(), why.clone()),
            };
            let class = match status {
                "reproduced" => "reproduced",
                "proxy" | "drawn, shape differs" => "direction-only",
                _ => "not-reproduced",
            };
            let _ = writeln!(
                h,
                "<tr><td>{}</td><td>{}</td><td class=\"verdict {class}\">{status}</td><td>{figures}</td><td>{}</td></tr>",
                escape(&f.paper),
                escape(&f.shows),
                escape(&why)
            );
        }
        h.push_str("</table>\n");
    }
    if let Some(sensitivity) = &s.sensitivity {
        h.push_str(&sensitivity_html(sensitivity, &name, prefix));
    }
    if !s.info.notes.is_empty() || s.info.facts.len() > 1 {
        let _ = writeln!(h, "<h3 id=\"{name}-notes\">Notes</h3>");
        for note in &s.info.notes {
            let _ = writeln!(h, "<p>{}</p>", escape(note));
        }
        if let Some((header, rows)) = s.info.facts.split_first() {
            h.push_str("<table><tr>");
            for cell in header {
                let _ = write!(h, "<th>{}</th>", escape(cell));
            }
            h.push_str("</tr>\n");
            for row in rows {
                h.push_str("<tr>");
                for cell in row {
                    let _ = write!(h, "<td>{}</td>", escape(&super::numbers::key(cell)));
                }
                h.push_str("</tr>\n");
            }
            h.push_str("</table>\n");
        }
    }
    if !s.info.figures.is_empty() {
        let _ = writeln!(h, "<h3 id=\"{name}-figures\">Figures</h3>");
        for f in &s.info.figures {
            let id = escape(&f.id);
            let _ = writeln!(
                h,
                "<figure id=\"{name}-fig-{id}\"><a href=\"{prefix}{id}.svg\">\
<img src=\"{prefix}{id}.svg\" alt=\"{}\" width=\"960\"></a>\
<figcaption><b>{}</b> ({id}). {}</figcaption></figure>",
                escape(&f.title),
                escape(&f.title),
                escape(&f.caption)
            );
        }
    }
    let _ = writeln!(
        h,
        "<h3 id=\"{name}-data\">Data</h3>\n<p><a href=\"{prefix}results.csv\">results.csv</a> (long format, \
every digit), <a href=\"{prefix}results.json\">results.json</a>, <a href=\"{prefix}claims.json\">claims.json</a>, \
<a href=\"{prefix}findings.json\">findings.json</a>, <a href=\"{prefix}paper-figures.json\">paper-figures.json</a>, \
<a href=\"{prefix}provenance.json\">provenance.json</a>. These files, but for provenance.json, depend on the \
seeds alone: the same seeds give the same bytes.</p>"
    );
    h
}

/// The page `DIR/NAME/index.html` of one experiment.
pub fn experiment_page(s: &Section) -> String {
    let name = escape(&s.info.experiment);
    let mut h = String::new();
    let _ = writeln!(
        h,
        "<p><a href=\"../index.html\">All experiments</a> · <a href=\"../index.html#{name}\">this one in the index</a></p>\n\
<h1>{}</h1>",
        heading(s)
    );
    if let Some(p) = &s.provenance {
        h.push_str("<h3>Provenance</h3>\n");
        h.push_str(&provenance_table(p));
    }
    if !s.claims.is_empty() {
        h.push_str(&rule());
    }
    h.push_str(&section_body(s, ""));
    page(&format!("{} (mobmem)", s.info.experiment), &h)
}

/// "NAME: title", or the name alone when there is no title.
fn heading(s: &Section) -> String {
    let name = escape(&s.info.experiment);
    if s.info.title.is_empty() {
        name
    } else {
        format!("{name}: {}", escape(&s.info.title))
    }
}

/// The index page of sections, the last command's provenance first.
fn index_page(last: &Provenance, sections: &[Section], unread: &[String]) -> String {
    let mut h = String::from("<h1>mobmem report</h1>\n");
    let all: Vec<&ClaimResult> = sections.iter().flat_map(|s| &s.claims).collect();
    let _ = write!(h, "<p>{} experiment(s)", sections.len());
    if !all.is_empty() {
        let _ = write!(h, "; {}", count_by_source(&all, "paper claims"));
    }
    h.push_str(".</p>\n<h3>Provenance</h3>\n");
    if sections
        .iter()
        .any(|s| s.provenance.as_ref().is_none_or(|p| !p.same_command(last)))
    {
        h.push_str(
            "<p>The last command into this folder; experiments that other commands wrote say so \
in their section.</p>\n",
        );
    }
    h.push_str(&provenance_table(last));
    if !all.is_empty() {
        h.push_str(&rule());
    }
    h.push_str("<table><tr><th>experiment</th><th>title</th><th>claims</th><th>page</th></tr>\n");
    for s in sections {
        let name = escape(&s.info.experiment);
        let refs: Vec<&ClaimResult> = s.claims.iter().collect();
        let claims = if refs.is_empty() {
            String::new()
        } else {
            format!("<a href=\"#{name}-claims\">{}</a>", count(&refs))
        };
        let _ = writeln!(
            h,
            "<tr><td><a href=\"#{name}\">{name}</a></td><td>{}</td><td>{claims}</td>\
<td><a href=\"{name}/index.html\">{name}/index.html</a></td></tr>",
            escape(&s.info.title)
        );
    }
    h.push_str("</table>\n");
    if !unread.is_empty() {
        h.push_str("<p>Folders not shown:</p><ul>\n");
        for u in unread {
            let _ = writeln!(h, "<li>{}</li>", escape(u));
        }
        h.push_str("</ul>\n");
    }
    for s in sections {
        let name = escape(&s.info.experiment);
        let _ = writeln!(
            h,
            "<section id=\"{name}\">\n<h2>{}</h2>\n<p>Its own page: <a href=\"{name}/index.html\">{name}/index.html</a>.</p>",
            heading(s)
        );
        match &s.provenance {
            Some(p) if p.same_command(last) => {}
            Some(p) => {
                let _ = writeln!(
                    h,
                    "<p class=\"earlier\">Written by another command: <code class=\"cmd\">{}</code> at {} (UTC), {}.</p>",
                    escape(&p.command_line()),
                    escape(&p.date_utc),
                    escape(&p.build())
                );
            }
            None => h.push_str(
                "<p class=\"earlier\">Written by a version that kept no provenance.</p>\n",
            ),
        }
        h.push_str(&section_body(s, &format!("{name}/")));
        h.push_str("</section>\n");
    }
    page("mobmem report", &h)
}

/// Write `DIR/provenance.json` (`provenance`, naming the experiments this command wrote)
/// and `DIR/index.html`, with every experiment folder under `DIR` (see [`load_sections`]).
/// Each replaces mobmem's own earlier file; a foreign one is refused or kept aside, as
/// `existing` says: the names it was kept under are returned.
pub fn write_index(
    dir: &Path,
    provenance: &Provenance,
    existing: Existing,
) -> Result<Vec<PathBuf>> {
    fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
    for name in &provenance.experiments {
        safe_file_name(name)?;
    }
    let mut kept = Vec::new();
    let mut keep = |placed: Placed| {
        if let Placed::KeptAside(path) = placed {
            kept.push(path);
        }
    };
    let path = dir.join("provenance.json");
    let json = super::json_bytes(&path, provenance)?;
    keep(output::write_file(
        &path,
        &json,
        super::is_own_provenance,
        existing,
    )?);
    let (_, sections, unread) = load_sections(dir)?;
    let html = index_page(provenance, &sections, &unread);
    let path = dir.join("index.html");
    keep(output::write_file(
        &path,
        html.as_bytes(),
        super::is_own_index,
        existing,
    )?);
    Ok(kept)
}

/// The line before the README's summary of the reproductions' claims.
pub const SUMMARY_BEGIN: &str =
    "<!-- summary:begin (written by scripts/update-readme.sh from claims.json; do not edit) -->";
/// The line after it.
pub const SUMMARY_END: &str = "<!-- summary:end -->";

/// A markdown cell: no line breaks, `|` escaped.
fn cell(text: &str) -> String {
    text.replace('\n', " ").replace('|', "\\|")
}

/// The lines around the findings of the reproductions (docs/results.md).
pub const FINDINGS_BEGIN: &str =
    "<!-- findings:begin (written by scripts/update-readme.sh from findings.json; do not edit) -->";
/// The line after them.
pub const FINDINGS_END: &str = "<!-- findings:end -->";

/// The claims of `sections` as markdown ([`claims_markdown`]), then their findings
/// ([`findings_markdown`]): what `report summary` prints.
pub fn summary_markdown(sections: &[Section], last: Option<&Provenance>) -> String {
    let mut out = claims_markdown(sections, last);
    out.push_str(&findings_markdown(sections));
    out
}

/// The claims of `sections` as a markdown table (reproduction, claim, paper, mean [95 %
/// interval], verdict), after a line that counts the verdicts and the commands that
/// made them: each experiment's own (its folder's provenance.json), else `last` (the
/// folder's, which names the experiments its command wrote).
pub fn claims_markdown(sections: &[Section], last: Option<&Provenance>) -> String {
    let all: Vec<&ClaimResult> = sections.iter().flat_map(|s| &s.claims).collect();
    let mut out = String::new();
    let seeds: Vec<u64> = {
        let mut seeds: Vec<u64> = sections.iter().flat_map(|s| s.info.seeds.clone()).collect();
        seeds.sort_unstable();
        seeds.dedup();
        seeds
    };
    let counted = if all.iter().any(|c| c.source == Source::Mobmem) {
        count_by_source(&all, "of the papers")
    } else {
        count(&all)
    };
    let _ = writeln!(
        out,
        "{} claims of {} reproductions: {counted}. Seeds: {}. The rule: see any report page.",
        all.len(),
        sections.iter().filter(|s| !s.claims.is_empty()).count(),
        seeds_text(&seeds)
    );
    out.push_str(&made_by(sections, last));
    // The robust column only where a sensitivity analysis ran.
    let analysed = sections.iter().any(|s| s.sensitivity.is_some());
    if analysed {
        out.push_str(
            "\nRobust: no single assumed constant at either end of its plausible range \
             changes the verdict (`reproduce --sensitivity`; each report's sensitivity.json \
             lists the constants, their ranges and sources); `-`: the experiment declares no \
             assumed constant.\n",
        );
    }
    out.push_str(if analysed {
        "\n| reproduction | claim | paper | measured: mean [95% interval] | verdict | robust |\n|---|---|---|---|---|---|\n"
    } else {
        "\n| reproduction | claim | paper | measured: mean [95% interval] | verdict |\n|---|---|---|---|---|\n"
    });
    for s in sections {
        for c in &s.claims {
            let unit = if c.unit.is_empty() {
                String::new()
            } else {
                format!(" {}", c.unit)
            };
            let robust = if analysed {
                format!(" {} |", cell(&robust_text(s.sensitivity.as_ref(), &c.id)))
            } else {
                String::new()
            };
            let _ = writeln!(
                out,
                "| {} | {} (`{}`) | {}{unit} | {}{unit} | {} |{robust}",
                cell(&s.info.experiment),
                cell(&c.claim),
                cell(&c.id),
                cell(&paper_text(c)),
                cell(&measured_text(c)),
                c.verdict.name()
            );
        }
    }
    out
}

/// A claim's robust cell: `yes`, `no (KEY=VALUE, ...)` naming the ends that change its
/// verdict, or `-` where no constant was varied.
fn robust_text(sensitivity: Option<&Sensitivity>, id: &str) -> String {
    let Some(s) = sensitivity.filter(|s| !s.constants.is_empty()) else {
        return "-".into();
    };
    match s.claims.iter().find(|c| c.id == id) {
        None => "-".into(),
        Some(c) if c.robust => "yes".into(),
        Some(c) => format!("no ({})", c.flipped_by.join(", ")),
    }
}

/// "Made by `COMMAND` (BUILD) at DATE UTC." for the experiments with claims: one line
/// when one command made them all, else a list naming which command made which.
fn made_by(sections: &[Section], last: Option<&Provenance>) -> String {
    let describe = |p: &Provenance| {
        format!(
            "`{}` ({}) at {} UTC",
            p.command_line().replace('`', "'"),
            p.build(),
            p.date_utc
        )
    };
    // In order of appearance: each command and the experiments it made.
    let mut groups: Vec<(Option<String>, Vec<&str>)> = Vec::new();
    for s in sections.iter().filter(|s| !s.claims.is_empty()) {
        let name = s.info.experiment.as_str();
        let made = s
            .provenance
            .as_ref()
            .or_else(|| last.filter(|p| p.experiments.iter().any(|e| e == name)));
        let key = made.map(describe);
        match groups.iter_mut().find(|(k, _)| *k == key) {
            Some((_, names)) => names.push(name),
            None => groups.push((key, vec![name])),
        }
    }
    match groups.as_slice() {
        [] | [(None, _)] => String::new(),
        [(Some(one), _)] => format!("\nMade by {one}.\n"),
        _ => {
            let mut out = String::from("\nMade by:\n");
            for (key, names) in &groups {
                let made = key
                    .as_deref()
                    .unwrap_or("a command that left no provenance.json");
                let _ = writeln!(out, "- {made}: {}", names.join(", "));
            }
            out
        }
    }
}

/// Each section's findings (findings.json: the comparisons with the modern and the
/// literature's baselines, as measured) as a list under its name.
pub fn findings_markdown(sections: &[Section]) -> String {
    let mut out = String::new();
    for s in sections.iter().filter(|s| !s.findings.is_empty()) {
        let _ = writeln!(out, "\nFindings of `{}`:\n", s.info.experiment);
        for f in &s.findings {
            let _ = writeln!(out, "- {} (`{}`)", f.text.replace('\n', " "), f.id);
        }
    }
    out
}

/// `text` with the lines between `begin` and `end` replaced by `block`; `None` when
/// `text` has no `begin` line, an error when it has one without an `end` after it.
fn replace_between(text: &str, begin: &str, end: &str, block: &str) -> Result<Option<String>> {
    let Some(start) = text.find(begin) else {
        return Ok(None);
    };
    let after_begin = start + begin.len();
    let stop = text[after_begin..]
        .find(end)
        .map(|i| after_begin + i)
        .ok_or_else(|| Error::config("README", format!("no `{end}` after `{begin}`")))?;
    let block = block.trim();
    let block = if block.is_empty() {
        String::new()
    } else {
        format!("{block}\n")
    };
    Ok(Some(format!(
        "{}\n{block}{}",
        &text[..after_begin],
        &text[stop..]
    )))
}

/// `text` (a README) with the lines between [`SUMMARY_BEGIN`] and [`SUMMARY_END`]
/// replaced by `claims` and those between [`FINDINGS_BEGIN`] and [`FINDINGS_END`] by
/// `findings`; a file with neither pair of markers is refused.
pub fn replace_summary(text: &str, claims: &str, findings: &str) -> Result<String> {
    let after_claims = replace_between(text, SUMMARY_BEGIN, SUMMARY_END, claims)?;
    let had_claims = after_claims.is_some();
    let text = after_claims.unwrap_or_else(|| text.to_string());
    match replace_between(&text, FINDINGS_BEGIN, FINDINGS_END, findings)? {
        Some(new) => Ok(new),
        None if had_claims => Ok(text),
        None => Err(Error::config(
            "README",
            "neither a summary:begin nor a findings:begin marker (the lines \
             `<!-- summary:begin ... -->`, `<!-- findings:begin ... -->` and their ends)",
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::super::claims::{Claim, Expect};
    use super::*;

    #[test]
    fn the_fuzz_seeds_of_report_folders_read_as_sections() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/corpus/report");
        let mut read = 0;
        for entry in fs::read_dir(&dir).unwrap() {
            let data = fs::read(entry.unwrap().path()).unwrap();
            let (report, files) = SectionFiles::from_nul_separated(&data);
            if let Ok(s) = Section::parse(&report, &files, &|n| Path::new("seed").join(n)) {
                read += 1;
                assert!(experiment_page(&s).contains(&s.info.experiment));
            }
        }
        assert!(read >= 1, "none of the seeds in {} reads", dir.display());
    }

    fn claim(id: &str, source: Source, verdict: Verdict) -> ClaimResult {
        ClaimResult {
            id: id.into(),
            claim: format!("claim {id}"),
            source,
            paper: None,
            unit: "%".into(),
            seeds: 1,
            mean: 12.0,
            ci95: [12.0, 12.0],
            verdict,
            explanation: None,
            expect: Expect::AtLeast { bound: 10.0 },
            values: vec![12.0],
        }
    }

    /// A claim of a bound made not testable (an input calibrated on it, or one the
    /// model cannot reach) still shows the paper's bound, not "-"; one with a number of
    /// the paper's shows that number.
    #[test]
    fn a_claim_not_testable_keeps_the_papers_bound_in_the_paper_column() {
        let table = super::super::Table::default();
        let claims = vec![
            Claim::at_least("majority", "more than half", 50.0, 54.0, "%"),
            Claim::at_most("close", "at most 25% slower", 25.0, -75.0, "%")
                .not_testable("no swap is the low-memory killer"),
            Claim::at_most("idle", "no overhead", 1.0, 0.0, "%")
                .with_paper(0.0)
                .not_testable("by construction"),
            Claim::value("time", "about 330 ms", 330.0, 338.0, "ms").not_testable("calibrated"),
        ];
        let mut report =
            super::super::ExperimentReport::of_table(table, vec![], (vec![], claims, vec![]));
        report
            .mark_not_testable(&["majority".to_string()], "calibrated")
            .unwrap();
        assert!(report
            .claims
            .iter()
            .all(|c| c.verdict == Verdict::NotTestable));
        let sides: Vec<PaperSide> = report.claims.iter().map(|c| c.paper_side()).collect();
        assert_eq!(
            sides,
            [
                PaperSide::AtLeast(50.0),
                PaperSide::AtMost(25.0),
                PaperSide::Number(0.0),
                PaperSide::Number(330.0)
            ]
        );
        let section = section_of(report.claims.clone(), None);
        let text = claims_markdown(std::slice::from_ref(&section), None);
        for row in [
            "| more than half (`majority`) | ≥ 50 % |",
            "| at most 25% slower (`close`) | ≤ 25 % |",
            "| no overhead (`idle`) | 0 % |",
            "| about 330 ms (`time`) | 330 ms |",
        ] {
            assert!(text.contains(row), "{row}\n{text}");
        }
        let page = experiment_page(&section);
        assert!(page.contains("≥ 50"), "{page}");
        // The bound kept reads back from claims.json.
        let json = serde_json::to_string(&report.claims).unwrap();
        let back: Vec<ClaimResult> = serde_json::from_str(&json).unwrap();
        assert_eq!(back[0].paper_side(), PaperSide::AtLeast(50.0));
        assert_eq!(
            back[0].expect,
            Expect::NotTestable {
                why: "calibrated".into(),
                claimed: Some(Box::new(Expect::AtLeast { bound: 50.0 })),
            }
        );
    }

    /// A page section of experiment `x` (seed 1) holding `claims`.
    fn section_of(claims: Vec<ClaimResult>, sensitivity: Option<Sensitivity>) -> Section {
        Section {
            info: PageInfo {
                experiment: "x".into(),
                title: String::new(),
                seeds: vec![1],
                notes: vec![],
                facts: vec![],
                figures: vec![],
            },
            claims,
            findings: vec![],
            paper_figures: vec![],
            provenance: None,
            sensitivity,
        }
    }

    #[test]
    fn the_papers_claims_and_mobmems_own_are_counted_apart() {
        let section = section_of(
            vec![
                claim("a", Source::Paper, Verdict::Reproduced),
                claim("b", Source::Mobmem, Verdict::NotReproduced),
                claim("c", Source::Mobmem, Verdict::Reproduced),
            ],
            None,
        );
        let text = claims_markdown(std::slice::from_ref(&section), None);
        assert!(
            text.starts_with(
                "3 claims of 1 reproductions: 1 of the papers (1 reproduced, 0 direction-only, \
                 0 not-reproduced, 0 not-testable) and 2 of mobmem's own (1 reproduced, 0 \
                 direction-only, 1 not-reproduced, 0 not-testable)."
            ),
            "{text}"
        );
        assert!(text.contains("| x | claim a (`a`) | ≥ 10 % |"), "{text}");
        assert!(
            text.contains("| x | claim b (`b`) | mobmem's own: ≥ 10 % |"),
            "{text}"
        );
        // Only the papers': counted as before.
        let mut papers = section.clone();
        papers.claims.truncate(1);
        let text = claims_markdown(&[papers], None);
        assert!(text.starts_with("1 claims of 1 reproductions: 1 reproduced, 0 direction-only"));
        assert!(!text.contains("robust"));
    }

    #[test]
    fn the_robust_column_names_the_ends_that_change_a_verdict() {
        use crate::experiments::sensitivity::{
            Assumption, AtEnd, ClaimSensitivity, End, Outcome, Sensitivity,
        };
        let outcome = |verdict| Some(Outcome { mean: 1.0, verdict });
        let of = |id: &str, high: Verdict| ClaimSensitivity {
            id: id.into(),
            claim: String::new(),
            unit: String::new(),
            base: Outcome {
                mean: 1.0,
                verdict: Verdict::Reproduced,
            },
            ends: vec![
                AtEnd {
                    key: "k".into(),
                    end: End::Low,
                    value: "1".into(),
                    outcome: outcome(Verdict::Reproduced),
                },
                AtEnd {
                    key: "k".into(),
                    end: End::High,
                    value: "2".into(),
                    outcome: outcome(high),
                },
            ],
            robust: high == Verdict::Reproduced,
            flipped_by: if high == Verdict::Reproduced {
                vec![]
            } else {
                vec!["k=2".into()]
            },
        };
        let section = |with: Option<Sensitivity>| {
            let claims = vec![
                claim("a", Source::Paper, Verdict::Reproduced),
                claim("b", Source::Paper, Verdict::Reproduced),
            ];
            section_of(claims, with)
        };
        let sensitivity = Sensitivity {
            rule: String::new(),
            constants: vec![Assumption {
                key: "k".into(),
                low: 1.into(),
                high: 2.into(),
                source: "s".into(),
            }],
            claims: vec![
                of("a", Verdict::Reproduced),
                of("b", Verdict::DirectionOnly),
            ],
        };
        let text = claims_markdown(&[section(Some(sensitivity.clone()))], None);
        assert!(text.contains("| verdict | robust |"), "{text}");
        assert!(text.contains("| reproduced | yes |"), "{text}");
        assert!(text.contains("| reproduced | no (k=2) |"), "{text}");
        // Run, but with no constant declared: nothing to be robust against.
        let none = Sensitivity {
            constants: vec![],
            ..sensitivity
        };
        let text = claims_markdown(&[section(Some(none))], None);
        assert!(text.contains("| reproduced | - |"), "{text}");
        let page = experiment_page(&section(None));
        assert!(!page.contains("Sensitivity"));
    }
}

#[cfg(test)]
mod replace_tests {
    use super::*;

    #[test]
    fn the_summary_block_is_replaced_between_its_markers() {
        let readme = format!("# x\n\n{SUMMARY_BEGIN}\nold\nlines\n{SUMMARY_END}\n\nafter\n");
        let new = replace_summary(&readme, "| a |\n", "- f").unwrap();
        assert_eq!(
            new,
            format!("# x\n\n{SUMMARY_BEGIN}\n| a |\n{SUMMARY_END}\n\nafter\n")
        );
        assert_eq!(replace_summary(&new, "| a |", "- f").unwrap(), new);
        assert!(replace_summary("no markers", "x", "y").is_err());
        assert!(replace_summary(&format!("{SUMMARY_END}\n{SUMMARY_BEGIN}"), "x", "y").is_err());
        // The findings alone, in a file that has only their markers.
        let results = format!("# r\n{FINDINGS_BEGIN}\nold\n{FINDINGS_END}\n");
        assert_eq!(
            replace_summary(&results, "| a |", "\nFindings of `x`:\n\n- f\n").unwrap(),
            format!("# r\n{FINDINGS_BEGIN}\nFindings of `x`:\n\n- f\n{FINDINGS_END}\n")
        );
        assert!(replace_summary(&format!("{FINDINGS_BEGIN}\n"), "x", "y").is_err());
    }
}
