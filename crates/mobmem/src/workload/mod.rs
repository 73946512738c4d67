//! Synthetic Android workloads: the buffer-cache page requests of apps that take turns in
//! the foreground while others work in the background, deterministic by seed.
//!
//! The model (details and every parameter in `docs/workloads.md`):
//! - an *app* is one process with its own pages in *regions* (files such as code,
//!   databases and caches, and anonymous memory), each with a Zipf popularity ranking and a
//!   write fraction; a browser-like app also has a stream of *fresh* content, pages that
//!   each site visit brings and that are rarely touched once the user moves on;
//! - one app at a time is in the *foreground* (`oom_score_adj` 0) and issues requests at its
//!   rate; *sessions* end at random and the user switches to another app, chosen by weight;
//! - out of the foreground an app is at 700 (previous app), then 900 (cached), or at its
//!   service's importance (500 for push services, 200 for playback); it issues a burst of
//!   requests right after leaving the foreground and, if it has a service, bursts at
//!   random wakeups (push messages);
//! - the trace has start events for every process, an importance event at each change, and
//!   monotone nanosecond time stamps.
//!
//! [`preset`] gives the models of the two traces of the app-state-aware buffer cache paper
//! (Oh, Kang, Lee, Eom, KIISE 2015); [`generate`] turns a config and a seed into a trace, the same bytes
//! on every machine; [`summarize`] counts what any trace contains.
//!
//! Two more models have their own generators: [`app_cycling`] (the multi-swap paper's
//! apps launched in rounds) and [`gallery_usb`] (the page-protection experiment's Gallery
//! and USB transfer). [`PRESETS`] lists every preset of the three models, for `mobmem gen`.

pub mod app_cycling;
mod config;
pub mod gallery_usb;
mod generator;
pub mod phone;
mod presets;
pub mod registry;
pub(crate) mod sampling;

pub use crate::trace::summary::{summarize, ProcessSummary, WorkloadSummary};
pub use config::{
    AppConfig, BackgroundConfig, FreshConfig, RegionConfig, RegionKind, WorkloadConfig,
    MAX_ACCESSES, MAX_APPS, MAX_REGION_PAGES,
};
pub use generator::{ADJ_CACHED, ADJ_PREVIOUS};
pub use registry::{find_preset, generate_with, GenOptions, Model, Params, Preset, PRESETS};

use crate::config_file::Echo;
use crate::trace::{Event, ProcId, Trace, ADJ_FOREGROUND};
use crate::{Error, Result};

/// Names of the presets of the app model, for [`preset`].
pub fn preset_names() -> Vec<&'static str> {
    PRESETS
        .into_iter()
        .filter(|p| matches!(p.model, Model::Apps(_)))
        .map(|p| p.name)
        .collect()
}

/// The config of a named preset of the app model; an unknown name lists the known ones.
pub fn preset(name: &str) -> Result<WorkloadConfig> {
    match PRESETS.iter().find(|p| p.name == name).map(|p| &p.model) {
        Some(Model::Apps(config)) => Ok(config()),
        _ => Err(Error::Unknown {
            what: "workload preset",
            name: name.to_string(),
            known: preset_names().into_iter().map(str::to_string).collect(),
        }),
    }
}

/// Read a workload config from a TOML file (every field optional; unknown fields are
/// errors) and validate it; `echo` says whether an error may quote the file.
pub fn load_config(path: &std::path::Path, echo: Echo) -> Result<WorkloadConfig> {
    let text = crate::config_file::read(path)?;
    registry::parse(&text, &path.display().to_string(), echo)
}

/// Parse and validate a workload config's TOML text; `origin` names it in errors.
pub fn parse_config(text: &str, origin: &str) -> Result<WorkloadConfig> {
    registry::parse(text, origin, Echo::Quote)
}

/// Parse and validate a workload config given as JSON with the same keys as the TOML
/// file.
pub fn parse_config_json(text: &str, origin: &str) -> Result<WorkloadConfig> {
    crate::config_file::validated(serde_json::from_str(text), origin, WorkloadConfig::validate)
}

/// A config (of any model) as TOML, to save a preset and edit it.
pub fn config_to_toml<T: serde::Serialize>(config: &T) -> Result<String> {
    toml::to_string_pretty(config).map_err(|e| Error::config("workload config", e.to_string()))
}

/// Generate the trace of `config` for `seed`. The config is validated first; the same
/// config and seed give the same trace on every machine.
pub fn generate(config: &WorkloadConfig, seed: u64) -> Result<Trace> {
    generator::generate(config, seed)
}

/// The importance events at `now` of a switch to the app `front` among apps that take
/// turns in the foreground: the app `cached` (the one before the previous) goes to 900,
/// the app `previous` to 700, `front` to 0.
fn switch_events(
    now: u64,
    cached: Option<ProcId>,
    previous: Option<ProcId>,
    front: ProcId,
) -> impl Iterator<Item = Event> {
    [
        (cached, ADJ_CACHED),
        (previous, ADJ_PREVIOUS),
        (Some(front), ADJ_FOREGROUND),
    ]
    .into_iter()
    .filter_map(move |(proc, adj)| proc.map(|proc| Event::importance(now, proc, adj)))
}
