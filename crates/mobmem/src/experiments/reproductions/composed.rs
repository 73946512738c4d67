//! `composed`: all five techniques on one simulated phone, and what each adds or takes
//! away with the others on.
//!
//! No paper measured this. On each phone file (`experiments/phone-2012.toml`,
//! `experiments/phone.toml`) the ablation runs the same seeded workload with every slot at
//! its baseline (`all-off`), each technique alone (`only-X`), every pair (`pair-X+Y`), all
//! on (`all-on`) and all on but one (`all-but-X`). Its claims state the interactions it measures — KSM and swap
//! traffic, FMP with flash or zram as swap, the selective file system and memory
//! pressure, the buffer cache with everything else on — and whether any technique that
//! helps alone works against another or against all the others; each carries an
//! explanation computed from the run's counters.

use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use std::path::{Path, PathBuf};

use crate::config_file::Echo;
use crate::experiments::file::{at_key, bad_key, Context, Experiment, Header, KindParams};
use crate::experiments::sweep::{self, Analyzed, Grid};
use crate::mm::phone::{self, Choice, PhoneConfig, PhoneMetrics, SLOTS};
use crate::report::table::filter;
use crate::report::{Claim, ExperimentReport, Figure, Finding, Row, Table};
use crate::workload::phone::PhoneTrace;
use crate::{Error, Result};

/// The shipped phones, by name: `experiments/NAME.toml`.
pub const PHONES: [(&str, &str); 2] = [
    (
        "phone-2012",
        include_str!("../../../../../experiments/phone-2012.toml"),
    ),
    (
        "phone",
        include_str!("../../../../../experiments/phone.toml"),
    ),
];

/// The shipped phone called `name`, read.
pub fn shipped_phone(name: &str) -> Result<PhoneConfig> {
    let text = PHONES.iter().find(|(n, _)| *n == name).map(|(_, t)| *t).ok_or_else(|| {
        Error::config(
            "phones",
            format!(
                "no shipped phone '{name}' (shipped: {}; give a file of your own under `phone_files`)",
                PHONES.map(|(n, _)| n).join(", ")
            ),
        )
    })?;
    PhoneConfig::parse(text, &format!("experiments/{name}.toml"))
}

/// The `composed` kind's keys: the phones the ablation runs on.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Params {
    /// Shipped phones, by name.
    pub phones: Vec<String>,
    /// Phone files (`kind = "phone"`), relative to the experiment file.
    pub phone_files: Vec<PathBuf>,
}

impl KindParams for Params {
    fn validate(&self, origin: &str) -> Result<()> {
        if self.phones.is_empty() && self.phone_files.is_empty() {
            return bad_key(
                origin,
                "phones",
                "give at least one phone (`phones` or `phone_files`)",
            );
        }
        for name in &self.phones {
            shipped_phone(name).map_err(at_key(origin, "phones"))?;
        }
        Ok(())
    }

    fn resolve_paths(&mut self, base: &Path) {
        for path in &mut self.phone_files {
            *path = base.join(&*path);
        }
    }

    type Grid<'a> = PhoneGrid;

    fn grid(&self, header: &Header, context: &Context) -> Result<PhoneGrid> {
        let mut phones = (self.phones.iter())
            .map(|n| shipped_phone(n))
            .collect::<Result<Vec<_>>>()?;
        for path in &self.phone_files {
            let origin = path.display().to_string();
            let text = crate::config_file::read(path)?;
            let mut phone = PhoneConfig::parse_with(&text, &origin, Echo::Withhold)?;
            if let (Some(trace), Some(dir)) = (&phone.trace, path.parent()) {
                phone.trace = Some(dir.join(trace));
            }
            phones.push(phone);
        }
        let mut names: Vec<&str> = phones.iter().map(|p| p.name.as_str()).collect();
        names.sort_unstable();
        if let Some(w) = names.windows(2).find(|w| w[0] == w[1]) {
            return Err(Error::config(
                &header.name,
                format!("two phones are named '{}': their rows would mix", w[0]),
            ));
        }
        // Each phone's workload is generated before its points exist: count them first.
        let points: usize = phones.iter().map(|p| ablation(p).len()).sum();
        sweep::check_points(header, points as u128, context.runs)?;
        PhoneGrid::new(phones, ablation, context.seed)
    }
}

/// The `phone` kind: one phone, run with every slot at its baseline (`all-off`) and at
/// its mechanism (`all-on`).
#[derive(Debug)]
pub struct PhoneKind(pub PhoneConfig);

/// Read a phone file's keys (the file less its header, whose name and title it takes).
pub fn parse_phone(
    header: &Header,
    mut table: toml::Table,
    base: &Path,
    origin: &str,
) -> Result<Box<dyn Experiment>> {
    table.insert("name".into(), header.name.clone().into());
    table.insert("title".into(), header.title.clone().into());
    let mut phone: PhoneConfig = toml::Value::Table(table)
        .try_into()
        .map_err(|e: toml::de::Error| Error::config(origin, e.to_string().trim_end()))?;
    phone
        .validate()
        .map_err(|e| Error::config(origin, e.to_string()))?;
    if let Some(trace) = &phone.trace {
        phone.trace = Some(base.join(trace));
    }
    Ok(Box::new(PhoneKind(phone)))
}

impl Experiment for PhoneKind {
    fn run_once(&self, header: &Header, context: &Context) -> Result<ExperimentReport> {
        let sweep = PhoneGrid::new(vec![self.0.clone()], ends, context.seed)?;
        sweep::run(&sweep, header, context)
    }

    fn default_seed(&self) -> u64 {
        1
    }

    fn phone(&self) -> Option<&PhoneConfig> {
        Some(&self.0)
    }

    fn to_toml(&self) -> Result<toml::Table> {
        let mut table = toml::Table::try_from(&self.0)
            .map_err(|e| Error::config(&self.0.name, e.to_string()))?;
        for key in ["name", "title", "kind"] {
            table.remove(key);
        }
        Ok(table)
    }
}

/// A phone with every slot at its baseline, then at its mechanism: the configurations
/// a file of kind `phone` runs, by name.
pub fn ends(p: &PhoneConfig) -> Vec<(String, Choice)> {
    vec![
        ("all-off".to_string(), p.baselines()),
        ("all-on".to_string(), p.mechanisms()),
    ]
}

/// The ablation's configurations of one phone, in order: (name, choice).
pub fn ablation(phone: &PhoneConfig) -> Vec<(String, Choice)> {
    let (on, off) = (phone.mechanisms(), phone.baselines());
    let techniques = phone.techniques();
    let mut out = vec![("all-off".to_string(), off.clone())];
    for t in &techniques {
        out.push((format!("only-{t}"), PhoneConfig::with_slot(&off, t, &on)));
    }
    out.push(("all-on".to_string(), on.clone()));
    for t in &techniques {
        out.push((format!("all-but-{t}"), PhoneConfig::with_slot(&on, t, &off)));
    }
    for (i, a) in techniques.iter().enumerate() {
        for b in &techniques[i + 1..] {
            let both = PhoneConfig::with_slot(&PhoneConfig::with_slot(&off, a, &on), b, &on);
            out.push((pair_name(a, b), both));
        }
    }
    out
}

/// The configuration with techniques `a` and `b` on and the rest at their baselines
/// (`a` before `b` in slot order).
fn pair_name(a: &str, b: &str) -> String {
    let (first, second) = if SLOTS.iter().position(|s| *s == a) < SLOTS.iter().position(|s| *s == b)
    {
        (a, b)
    } else {
        (b, a)
    };
    format!("pair-{first}+{second}")
}

/// The configurations a phone runs in: (name, choice), in order.
pub type Configs = fn(&PhoneConfig) -> Vec<(String, Choice)>;

/// One run of phone files: the phones, the workload of one seed on each, and the
/// configurations each runs in.
pub struct PhoneGrid {
    phones: Vec<PhoneConfig>,
    traces: Vec<PhoneTrace>,
    configs: Configs,
    seed: u64,
}

/// A point: (phone index, configuration index, configuration name, choice).
pub type PhonePoint = (usize, usize, String, Choice);

impl PhoneGrid {
    /// The phones with their workloads of `seed`, each run in the configurations
    /// `configs` gives.
    pub fn new(phones: Vec<PhoneConfig>, configs: Configs, seed: u64) -> Result<Self> {
        let traces = (phones.par_iter())
            .map(|p| phone::workload(p, seed))
            .collect::<Result<Vec<_>>>()?;
        Ok(PhoneGrid {
            phones,
            traces,
            configs,
            seed,
        })
    }
}

impl Grid for PhoneGrid {
    type Point = PhonePoint;
    type Output = PhoneMetrics;

    const KEYS: &'static [&'static str] = &[
        "phone",
        "config",
        "config_index",
        "placement",
        "reclaim",
        "swap",
        "dedup",
        "fs",
    ];
    /// A claim may be NaN on a phone whose baseline does nothing to measure.
    const GRID_CLAIMS: bool = false;

    fn points(&self) -> Result<Vec<PhonePoint>> {
        let mut points = Vec::new();
        for (i, p) in self.phones.iter().enumerate() {
            for (k, (name, choice)) in (self.configs)(p).into_iter().enumerate() {
                points.push((i, k, name, choice));
            }
        }
        Ok(points)
    }

    fn run_point(&self, (i, _, _, choice): &PhonePoint) -> Result<PhoneMetrics> {
        phone::run(&self.phones[*i], choice, &self.traces[*i], self.seed)
    }

    fn point_rows(&self, (i, k, name, choice): &PhonePoint, m: &PhoneMetrics) -> Vec<Row> {
        let mut keys = vec![
            self.phones[*i].name.clone(),
            name.to_string(),
            k.to_string(),
        ];
        keys.extend(SLOTS.iter().map(|s| choice.get(s).to_string()));
        vec![Row::of_stats(keys, m)]
    }

    fn facts(&self, _: &Table, _: &[(PhonePoint, PhoneMetrics)]) -> Vec<Vec<String>> {
        let mut facts = vec![vec![
            "phone".to_string(),
            "scale".into(),
            "memory".into(),
            "slots (mechanism / baseline)".into(),
            "workload".into(),
            "configurations (index: name)".into(),
        ]];
        for (p, t) in self.phones.iter().zip(&self.traces) {
            let (on, off) = (p.mechanisms(), p.baselines());
            facts.push(vec![
                p.name.clone(),
                format!("1/{}", (1.0 / p.scale).round()),
                format!(
                    "{} MiB DRAM ({} MiB system){}",
                    p.memory.dram_mib,
                    p.memory.system_mib,
                    if on.placement != "off" {
                        format!(
                            ", buffer cache {} MiB DRAM + {} MiB PCM",
                            p.placement.dram_mib, p.placement.pcm_mib
                        )
                    } else {
                        String::new()
                    }
                ),
                SLOTS
                    .iter()
                    .map(|s| format!("{s}: {} / {}", on.get(s), off.get(s)))
                    .collect::<Vec<_>>()
                    .join("; "),
                format!(
                    "phone, seed {}: {} events, {} pages",
                    self.seed,
                    t.trace.events.len(),
                    t.trace.tables.pages.len()
                ),
                (self.configs)(p)
                    .iter()
                    .enumerate()
                    .map(|(k, (n, _))| format!("{k}: {n}"))
                    .collect::<Vec<_>>()
                    .join(", "),
            ]);
        }
        facts
    }

    fn analyze(
        &self,
        table: &Table,
        _: &[(PhonePoint, PhoneMetrics)],
        paper: bool,
    ) -> Result<Analyzed> {
        let names: Vec<String> = self.phones.iter().map(|p| p.name.clone()).collect();
        let figure = |id: &str, title: &str, metric: &str, y: &str| Figure {
            id: id.into(),
            title: title.into(),
            // A configuration is a name, not a position on an axis: bars, not lines.
            x: "config".into(),
            x_label: "configuration".into(),
            x_scale: 1.0,
            series: "phone".into(),
            lines: names.clone(),
            filter: filter(&[]),
            metric: metric.into(),
            y_label: y.into(),
            normalize_to: None,
        };
        let figures = vec![
            figure(
                "launch",
                "mean relaunch time by configuration",
                "launch_mean_ms",
                "ms",
            ),
            figure(
                "response-p95",
                "95th percentile response time by configuration",
                "rt_p95_ms",
                "ms",
            ),
            figure("energy", "energy by configuration", "energy_mj", "mJ"),
            figure(
                "swap-outs",
                "swap-outs by configuration",
                "swap_outs",
                "pages",
            ),
            figure(
                "kills",
                "processes killed by configuration",
                "kills",
                "kills",
            ),
        ];
        let notes = vec![
            "Each phone is simulated at the scale its file gives: memory, devices and the workload's pages shrink together, so ratios hold but absolute frames do not.".into(),
        ];
        let (claims, findings) = if paper {
            analyze(table, &self.phones)
        } else {
            (Vec::new(), Vec::new())
        };
        Ok(Analyzed {
            figures,
            notes,
            claims,
            findings,
            paper_figures: Vec::new(),
        })
    }

    fn seeds(&self, _: &[(PhonePoint, PhoneMetrics)]) -> Vec<u64> {
        vec![self.seed]
    }
}

/// A figure of one configuration of one phone.
fn value(table: &Table, phone: &str, config: &str, metric: &str) -> f64 {
    table.first_value(&filter(&[("phone", phone), ("config", config)]), metric)
}

/// Reduction from `before` to `after`, % of `before` (NaN when `before` is 0).
fn reduction(before: f64, after: f64) -> f64 {
    if before > 0.0 {
        100.0 * (before - after) / before
    } else {
        f64::NAN
    }
}

/// The improvement a technique brings on `metric` (lower is better), % of the value
/// without it: alone (from all-off) and in context (from all-but-it to all-on).
fn effects(table: &Table, phone: &str, slot: &str, metric: &str) -> (f64, f64) {
    let alone = reduction(
        value(table, phone, "all-off", metric),
        value(table, phone, &format!("only-{slot}"), metric),
    );
    let context = reduction(
        value(table, phone, &format!("all-but-{slot}"), metric),
        value(table, phone, "all-on", metric),
    );
    (alone, context)
}

/// Whether a technique works against its target: it improves it by more than 1 % alone
/// (`alone`) and worsens it by more than 1 % with other techniques on (`with_others`);
/// changes within 1 % either way are noise.
fn works_against(alone: f64, with_others: f64) -> bool {
    alone > 1.0 && with_others < -1.0
}

/// The claim that no case works against its target, measured as the `count` cases (in
/// `unit`) that do; `explain` cites every case's improvements in `evidence`.
fn none_against(
    id: String,
    claim: String,
    count: f64,
    unit: &str,
    explain: String,
    evidence: &[(String, f64)],
) -> Claim {
    let evidence = evidence
        .iter()
        .map(|(name, value)| (name.as_str(), *value))
        .collect();
    Claim::at_most(id, claim, 0.0, count, unit)
        .mobmems_own()
        .explained(explain, evidence)
}

/// The metric each technique sets out to improve (lower is better).
const TARGETS: [(&str, &str); 5] = [
    ("placement", "pcm_writes"),
    ("reclaim", "rt_mean_ms"),
    ("swap", "launch_mean_ms"),
    ("dedup", "pages_scanned"),
    ("fs", "energy_mj"),
];

/// A claim that a technique, with everything else on, cuts a measure from `without` it
/// to `with` it by at least `bound` %; `explain` cites `with`, `without` and `evidence`.
fn cut_claim(
    id: String,
    claim: String,
    bound: f64,
    (without, with): (f64, f64),
    explain: &str,
    evidence: Vec<(&str, f64)>,
) -> Claim {
    let mut cited = vec![("with", with), ("without", without)];
    cited.extend(evidence);
    Claim::at_least(id, claim, bound, reduction(without, with), "%")
        .mobmems_own()
        .explained(explain, cited)
}

/// Where the time of configurations `with` and `without` went, when the phone runs on
/// the contended clock: the text to add to an explanation and its evidence.
fn where_time_went(
    p: &PhoneConfig,
    v: &dyn Fn(&str, &str) -> f64,
    with: &str,
    without: &str,
) -> (&'static str, Vec<(&'static str, f64)>) {
    if p.time.accounting == crate::mm::clock::Accounting::Sum {
        return ("", Vec::new());
    }
    (
        "; on the clock, memory stall (PSI some) {stall_with} s against {stall_without} s, the worst app's {app_stall_with} s against {app_stall_without} s, I/O stall {io_with} s against {io_without} s, flash queue waits {qw_with} ms against {qw_without} ms, kswapd's CPU {kswapd_with} ms against {kswapd_without} ms",
        vec![
            ("stall_with", v(with, "psi_memory_some_s")),
            ("stall_without", v(without, "psi_memory_some_s")),
            ("app_stall_with", v(with, "psi_memory_some_worst_app_s")),
            ("app_stall_without", v(without, "psi_memory_some_worst_app_s")),
            ("io_with", v(with, "psi_io_some_s")),
            ("io_without", v(without, "psi_io_some_s")),
            ("qw_with", v(with, "flash_queue_wait_ms")),
            ("qw_without", v(without, "flash_queue_wait_ms")),
            ("kswapd_with", v(with, "kswapd_cpu_ms")),
            ("kswapd_without", v(without, "kswapd_cpu_ms")),
        ],
    )
}

// The facet is the phone (the ablation's configurations are compared): each phone's
// claims and findings read its own rows only and their ids name it, so adding a phone
// leaves another's unchanged.
fn analyze(table: &Table, phones: &[PhoneConfig]) -> (Vec<Claim>, Vec<Finding>) {
    let mut claims = Vec::new();
    let mut findings = Vec::new();
    let has = |p: &PhoneConfig, slot: &str| p.techniques().contains(&slot);
    for p in phones {
        let n = p.name.as_str();
        let v = |config: &str, metric: &str| value(table, n, config, metric);
        if has(p, "dedup") {
            let (without, with) = (v("all-but-dedup", "swap_outs"), v("all-on", "swap_outs"));
            let claim = cut_claim(
                format!("{n}-ksm-cuts-swap"),
                format!("{n}: with everything else on, KSM cuts swap-outs by at least 10%"),
                10.0,
                (without, with),
                "with KSM {with} swap-outs against {without} without it; KSM saved {saved} MiB on average ({peak} MiB at most), and killed {kills_with} apps against {kills_without}",
                vec![
                    ("saved", v("all-on", "ksm_saved_mib")),
                    ("peak", v("all-on", "ksm_saved_peak_mib")),
                    ("kills_with", v("all-on", "kills")),
                    ("kills_without", v("all-but-dedup", "kills")),
                ],
            );
            claims.push(if without > 0.0 {
                claim
            } else {
                claim.not_testable("nothing is swapped out without KSM on this phone")
            });
        }
        if has(p, "reclaim") {
            let (without, with) = (
                v("all-but-reclaim", "rt_mean_ms"),
                v("all-on", "rt_mean_ms"),
            );
            let (time_text, time_evidence) = where_time_went(p, &v, "all-on", "all-but-reclaim");
            claims.push(
                cut_claim(
                    format!("{n}-fmp-response"),
                    format!(
                        "{n}: with {} as swap and everything else on, FMP cuts the mean response time by at least 5% against {}",
                        p.swap.mechanism, p.reclaim.baseline
                    ),
                    5.0,
                    (without, with),
                    &format!("mean {{with}} ms with FMP against {{without}} ms: the interactive task took {{fg_with}} major faults with it against {{fg_without}}; FMP skipped {{skips}} of its pages in reclaim and fell back {{fallbacks}} times; in all, swap-ins {{si_with}} against {{si_without}}, file reads {{fr_with}} against {{fr_without}}, beside {{te}} ms of work per interaction{time_text}"),
                    [vec![
                        ("fg_with", v("all-on", "interactive_major_faults")),
                        ("fg_without", v("all-but-reclaim", "interactive_major_faults")),
                        ("skips", v("all-on", "protected_skips")),
                        ("fallbacks", v("all-on", "protection_fallbacks")),
                        ("si_with", v("all-on", "swap_ins")),
                        ("si_without", v("all-but-reclaim", "swap_ins")),
                        ("fr_with", v("all-on", "file_reads")),
                        ("fr_without", v("all-but-reclaim", "file_reads")),
                        ("te", p.response.execution_ms),
                    ], time_evidence].concat(),
                ),
            );
        }
        if has(p, "fs") {
            let metric =
                |c: &str| v(c, "swap_outs") + v(c, "file_reads") - v(c, "file_bypass_reads");
            let (without, with) = (metric("all-but-fs"), metric("all-on"));
            claims.push(
                cut_claim(
                    format!("{n}-selective-fs-pressure"),
                    format!("{n}: the selective page cache relieves memory: page-cache reads plus swap-outs fall by at least 5% with everything else on"),
                    5.0,
                    (without, with),
                    "{with} page-cache reads and swap-outs with it against {without}; {bypass} media pages bypassed the page cache",
                    vec![
                        ("bypass", v("all-on", "file_bypass_reads")),
                    ],
                ),
            );
        }
        if has(p, "placement") {
            let (without, with) = (
                v("all-but-placement", "pcm_writes"),
                v("all-on", "pcm_writes"),
            );
            claims.push(
                cut_claim(
                    format!("{n}-app-aware-pcm-writes"),
                    format!("{n}: with everything else on, the app-aware buffer cache cuts PCM writes by at least 20% against {}", p.placement.baseline),
                    20.0,
                    (without, with),
                    "{with} PCM writes with it against {without}",
                    vec![],
                ),
            );
        }
        if has(p, "swap") {
            let (without, with) = (
                v("all-but-swap", "launch_mean_ms"),
                v("all-on", "launch_mean_ms"),
            );
            let (time_text, time_evidence) = where_time_went(p, &v, "all-on", "all-but-swap");
            claims.push(
                cut_claim(
                    format!("{n}-swap-launch"),
                    format!("{n}: with everything else on, {} cuts the mean relaunch time by at least 5% against {}", p.swap.mechanism, p.swap.baseline),
                    5.0,
                    (without, with),
                    &format!("{{with}} ms with it against {{without}} ms; cold relaunches {{cold_with}} against {{cold_without}}, kills {{kills_with}} against {{kills_without}}; {{nvm}} pages were written to NVM and {{si}} swapped in{time_text}"),
                    [vec![
                        ("nvm", v("all-on", "nvm_writes")),
                        ("si", v("all-on", "swap_ins")),
                        ("cold_with", v("all-on", "cold_launches")),
                        ("cold_without", v("all-but-swap", "cold_launches")),
                        ("kills_with", v("all-on", "kills")),
                        ("kills_without", v("all-but-swap", "kills")),
                    ], time_evidence].concat(),
                ),
            );
        }
        // Does any pair work against each other? Technique a helps its target alone
        // (from all-off to only-a) but harms it once b is on (from only-b to a and b).
        let techniques: Vec<&str> = TARGETS.iter().map(|t| t.0).filter(|t| has(p, t)).collect();
        let mut conflicts = 0.0;
        let mut pair_evidence: Vec<(String, f64)> = Vec::new();
        for &a in &techniques {
            let metric = TARGETS.iter().find(|t| t.0 == a).expect("listed").1;
            let alone = reduction(v("all-off", metric), v(&format!("only-{a}"), metric));
            for &b in techniques.iter().filter(|&&b| b != a) {
                let given = reduction(v(&format!("only-{b}"), metric), v(&pair_name(a, b), metric));
                pair_evidence.push((format!("{a}_with_{b}"), given));
                if works_against(alone, given) {
                    conflicts += 1.0;
                }
                findings.push(Finding::new(
                    format!("{n}-{a}-with-{b}"),
                    format!("{n}: {a} changes {metric} by {{alone}}% alone and by {{with}}% when {b} is on too (positive: lower is better)"),
                    vec![("alone", alone), ("with", given)],
                ));
            }
        }
        let explain = pair_evidence
            .iter()
            .map(|(name, _)| {
                let (a, b) = name.split_once("_with_").expect("named so");
                format!("{a} with {b} {{{name}}}%")
            })
            .collect::<Vec<_>>()
            .join("; ");
        claims.push(none_against(
            format!("{n}-no-pair-against"),
            format!("{n}: no pair of techniques works against each other: none that improves its own target alone makes it worse with one other technique on (count of such ordered pairs)"),
            conflicts,
            "pairs",
            format!("improvement of each technique's target metric with one other technique on: {explain}"),
            &pair_evidence,
        ));
        // Does any technique that helps alone work against the others?
        let mut against = 0.0;
        let mut evidence: Vec<(String, f64)> = Vec::new();
        for (slot, metric) in TARGETS {
            if !has(p, slot) {
                continue;
            }
            let (alone, context) = effects(table, n, slot, metric);
            evidence.push((format!("{slot}_alone"), alone));
            evidence.push((format!("{slot}_context"), context));
            if works_against(alone, context) {
                against += 1.0;
            }
            findings.push(Finding::new(
                format!("{n}-{slot}-alone-vs-context"),
                format!("{n}: {slot} changes {metric} by {{alone}}% alone and by {{context}}% with everything else on (positive: lower is better)"),
                vec![("alone", alone), ("context", context)],
            ));
        }
        let explain = evidence
            .iter()
            .step_by(2)
            .map(|(name, _)| {
                let slot = name.trim_end_matches("_alone");
                format!("{slot} {{{slot}_alone}}% alone, {{{slot}_context}}% in context")
            })
            .collect::<Vec<_>>()
            .join("; ");
        claims.push(none_against(
            format!("{n}-no-technique-against"),
            format!("{n}: no technique that improves its own target alone makes it worse with the others on (count of such techniques)"),
            against,
            "techniques",
            format!("improvement of each technique's target metric: {explain}"),
            &evidence,
        ));
    }
    (claims, findings)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The shipped phones with shorter workloads, smaller.
    fn small() -> (Header, Vec<PhoneConfig>) {
        let mut phones: Vec<PhoneConfig> = PHONES
            .iter()
            .map(|(n, _)| shipped_phone(n).unwrap())
            .collect();
        for p in &mut phones {
            p.scale /= 4.0;
            p.workload.sessions = 16;
        }
        let header = Header {
            kind: "composed",
            name: "composed".into(),
            title: String::new(),
            seeds: None,
            reproduces: Some("composed".into()),
            calibrated: Vec::new(),
            assumed: Vec::new(),
        };
        (header, phones)
    }

    #[test]
    fn the_report_has_the_claims_of_every_phone_and_names_only_its_evidence() {
        let (header, phones) = small();
        let report = crate::experiments::kinds::with_seed(1, |c| {
            sweep::run(&PhoneGrid::new(phones.clone(), ablation, 1)?, &header, c)
        })
        .unwrap();
        super::super::check_report(&report);
        let ids: Vec<&str> = report.claims.iter().map(|c| c.id.as_str()).collect();
        assert!(ids.len() >= 5, "{ids:?}");
        let mut unique = ids.clone();
        unique.sort_unstable();
        unique.dedup();
        assert_eq!(unique.len(), ids.len(), "{ids:?}");
        for p in &phones {
            assert!(ids.iter().any(|id| id.starts_with(&format!("{}-", p.name))));
            let rows = report
                .table
                .rows
                .iter()
                .filter(|r| r.keys[0] == p.name)
                .count();
            assert_eq!(rows, ablation(p).len());
        }
        // A claim's number is computed from the rows: the KSM claim of the 2012 phone
        // is the cut in swap-outs from all-but-dedup to all-on.
        let v = |c: &str, m: &str| value(&report.table, "phone-2012", c, m);
        let claim = report.seed_claims[0]
            .iter()
            .find(|c| c.id == "phone-2012-ksm-cuts-swap")
            .unwrap();
        let expected = reduction(v("all-but-dedup", "swap_outs"), v("all-on", "swap_outs"));
        assert!(
            claim.measured == expected || (claim.measured.is_nan() && expected.is_nan()),
            "{} vs {expected}",
            claim.measured
        );
    }

    #[test]
    fn ablation_switches_one_slot_at_a_time() {
        for (name, _) in PHONES {
            let p = &shipped_phone(name).unwrap();
            let configs = ablation(p);
            let t = p.techniques().len();
            assert_eq!(configs.len(), 2 + 2 * t + t * (t - 1) / 2);
            let (on, off) = (p.mechanisms(), p.baselines());
            for (name, choice) in &configs {
                let differs = SLOTS.iter().filter(|s| choice.get(s) != off.get(s)).count();
                let same_as_on = SLOTS.iter().filter(|s| choice.get(s) == on.get(s)).count();
                match name.as_str() {
                    "all-off" => assert_eq!(differs, 0),
                    "all-on" => assert_eq!(same_as_on, 5),
                    n if n.starts_with("only-") => assert_eq!(differs, 1, "{n}"),
                    n if n.starts_with("pair-") => assert_eq!(differs, 2, "{n}"),
                    n => assert_eq!(same_as_on, 4, "{n}"),
                }
            }
        }
    }
}
