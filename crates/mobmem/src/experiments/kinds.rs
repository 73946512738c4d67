//! The kinds of experiment file: what a file's `kind` key may name. A kind is one entry
//! here plus one module whose parameters implement [`super::file::KindParams`]; see
//! `docs/experiment-files.md` for every kind's keys.

use std::path::Path;

use super::file::{parse_params, Experiment, Header};
use super::reproductions::{composed, ksm, multi_swap, page_protection, selective_page_cache};
use crate::core::registry::Registry;
use crate::Result;

#[cfg(test)]
use super::file::Context;

/// How a kind reads its keys: the file less its [`Header`], the folder relative paths
/// are relative to, and the file's name for errors.
pub type ParseFn = fn(&Header, toml::Table, &Path, &str) -> Result<Box<dyn Experiment>>;

crate::registry_entry! {
    /// A kind of experiment file, named by the file's `kind` key.
    pub struct Kind {
        /// Whether it runs synthetic workloads, so once per seed. A kind that reads only real
        /// files runs once and refuses the `seeds` key.
        pub seeded: bool,
        /// The reproductions whose paper analysis its files may apply (`reproduces`).
        pub analyses: &'static [&'static str],
        /// Read the kind's keys: the file less its [`Header`]; relative paths in them become
        /// relative to the folder given. Most kinds use [`parse_params`] of their struct.
        pub parse: ParseFn,
    }
}

/// Every kind; the first is the default (a file without `kind`).
pub static KINDS: Registry<Kind> = Registry::new(
    "experiment kind",
    &[
        Kind {
            name: "cache",
            summary: "buffer-cache policies x workloads x memory sizes x DRAM shares (experiments/reference.toml)",
            seeded: true,
            analyses: &["hybrid-cache"],
            parse: super::cache::parse,
        },
        Kind {
            name: "swap",
            summary: "swap architectures x NVM sizes on the app-cycling workload",
            seeded: true,
            analyses: &["multi-swap"],
            parse: parse_params::<multi_swap::Params>,
        },
        Kind {
            name: "reclaim",
            summary: "reclaim policies x memory sizes x background transfer rates on the gallery-usb workload",
            seeded: true,
            analyses: &["page-protection"],
            parse: parse_params::<page_protection::Params>,
        },
        Kind {
            name: "fs",
            summary: "write policies and read paths of a compressed flash file system on real media files",
            seeded: false,
            analyses: &["selective-page-cache"],
            parse: parse_params::<selective_page_cache::Params>,
        },
        Kind {
            name: "ksm",
            summary: "KSM pages_to_scan and sleep_millisecs sweeps and app impact on the android population",
            seeded: true,
            analyses: &["ksm"],
            parse: parse_params::<ksm::Params>,
        },
        Kind {
            name: "phone",
            summary: "one simulated phone with all five techniques (experiments/phone.toml): every slot at its mechanism and at its baseline",
            seeded: true,
            analyses: &[],
            parse: composed::parse_phone,
        },
        Kind {
            name: "composed",
            summary: "the ablation on phones: each technique alone, all on, and all on but one",
            seeded: true,
            analyses: &["composed"],
            parse: parse_params::<composed::Params>,
        },
    ],
);

/// For kinds' tests: a context of `seed`, no progress shown, no media folder.
#[cfg(test)]
pub(crate) fn with_seed<T>(seed: u64, f: impl FnOnce(&Context) -> T) -> T {
    let progress = |_: usize, _: usize| {};
    f(&Context {
        seed,
        progress: &progress,
        media_dir: None,
        runs: 1,
    })
}
