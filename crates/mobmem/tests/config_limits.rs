//! No public entry point panics on a configuration, whatever its numbers: a config its
//! own validation refuses is an error from the run too (never a panic, an overflow or an
//! allocation of a count it states), and a config it accepts runs.
//!
//! Configurations are made by taking each config's defaults as TOML and replacing one or
//! two of its numbers with values at the edges (0, 1, -1, huge, not a number, the
//! largest of each integer width); what still reads as the config type is validated and
//! run on a small trace, the run caught if it panics.

use crate::common;

use std::panic::{catch_unwind, AssertUnwindSafe};

use mobmem::mm::dedup::{self, KsmParams, RunSpec, ScanCosts};
use mobmem::mm::phone;
use mobmem::mm::reclaim::{self, ReclaimConfig};
use mobmem::mm::swap::{self, SwapConfig};
use mobmem::trace::Trace;
use mobmem::workload::app_cycling::{self, AppCyclingConfig};
use mobmem::workload::gallery_usb::{self, GalleryUsbConfig};
use proptest::prelude::*;
use serde::de::DeserializeOwned;
use serde::Serialize;

/// Values at the edges, for integer and real fields alike (a value a field's type cannot
/// hold makes the TOML unreadable as the config, and the case is passed over).
const EDGES: [f64; 10] = [
    0.0,
    1.0,
    -1.0,
    0.5,
    1e9,
    1e300,
    f64::NAN,
    f64::INFINITY,
    4294967296.0,
    9.2e18,
];

/// The paths of every number in `value`, depth first.
fn numbers(value: &toml::Value, path: &mut Vec<String>, out: &mut Vec<Vec<String>>) {
    match value {
        toml::Value::Table(t) => {
            for (k, v) in t {
                path.push(k.clone());
                numbers(v, path, out);
                path.pop();
            }
        }
        toml::Value::Array(a) => {
            for (i, v) in a.iter().enumerate() {
                path.push(i.to_string());
                numbers(v, path, out);
                path.pop();
            }
        }
        toml::Value::Integer(_) | toml::Value::Float(_) => out.push(path.clone()),
        _ => {}
    }
}

fn set(value: &mut toml::Value, path: &[String], edge: f64) {
    let mut at = value;
    for key in path {
        at = match at {
            toml::Value::Table(t) => t.get_mut(key).expect("path of the value"),
            toml::Value::Array(a) => &mut a[key.parse::<usize>().expect("an index")],
            _ => unreachable!("paths lead through tables and arrays"),
        };
    }
    *at = match at {
        toml::Value::Integer(_)
            if edge.is_finite() && edge.fract() == 0.0 && edge.abs() < 9.3e18 =>
        {
            toml::Value::Integer(edge as i64)
        }
        _ => toml::Value::Float(edge),
    };
}

/// `default` with the numbers at `picks` (indexes into its number paths, modulo their
/// count) set to the edges named, if that still reads as `C`.
fn mutated<C: Serialize + DeserializeOwned>(default: &C, picks: &[(usize, usize)]) -> Option<C> {
    let mut value = toml::Value::try_from(default).expect("a config is TOML");
    let mut paths = Vec::new();
    numbers(&value, &mut Vec::new(), &mut paths);
    if paths.is_empty() {
        return None;
    }
    for &(field, edge) in picks {
        set(
            &mut value,
            &paths[field % paths.len()],
            EDGES[edge % EDGES.len()],
        );
    }
    value.try_into().ok()
}

/// Run `f`; a panic is a failure naming `what`.
fn no_panic<T>(what: &str, f: impl FnOnce() -> T) -> Result<T, TestCaseError> {
    catch_unwind(AssertUnwindSafe(f)).map_err(|p| {
        let message = p
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_default();
        TestCaseError::fail(format!("{what} panicked: {message}"))
    })
}

/// A small trace of the reclaim workload (gallery and a USB transfer), with its tables.
fn reclaim_trace() -> Trace {
    gallery_usb::generate(&common::small_gallery_usb(), 1).expect("a small gallery-usb trace")
}

/// A small trace of the swap workload (apps launched in rounds), with its tables.
fn swap_trace() -> Trace {
    app_cycling::generate(&common::small_app_cycling(), 1).expect("a small app-cycling trace")
}

/// Stop the slowest accepted configs early: they are valid, only large.
fn small_enough(pages: u64) -> bool {
    pages <= 1 << 20
}

/// The default config of type `C` with the numbers at `picks` set to edges, validated
/// and (unless it is valid but holds more than `small_enough` pages) run: a config its
/// validation refuses must fail to run too, and neither may panic.
fn refused_or_run<C: Default + Serialize + DeserializeOwned>(
    picks: &[(usize, usize)],
    validate: impl FnOnce(&C) -> mobmem::Result<()>,
    pages: impl FnOnce(&C) -> u64,
    run: impl FnOnce(&C) -> mobmem::Result<()>,
) -> Result<(), TestCaseError> {
    let Some(config) = mutated(&C::default(), picks) else {
        return Ok(());
    };
    let name = std::any::type_name::<C>();
    let valid = no_panic(&format!("{name}::validate"), || validate(&config))?;
    if valid.is_ok() && !small_enough(pages(&config)) {
        return Ok(());
    }
    let run = no_panic(&format!("a run of {name}"), || run(&config))?;
    if valid.is_err() {
        prop_assert!(run.is_err(), "a refused config ran: {:?}", valid);
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn reclaim_configs_are_refused_or_run(picks in proptest::collection::vec((0usize..64, 0usize..10), 1..3)) {
        refused_or_run(&picks, ReclaimConfig::validate, |c| c.memory_pages as u64, |c| reclaim::run(c, &reclaim_trace()).map(drop))?;
    }

    #[test]
    fn swap_configs_are_refused_or_run(picks in proptest::collection::vec((0usize..64, 0usize..10), 1..3)) {
        refused_or_run(&picks, SwapConfig::validate, |c| c.dram_pages as u64, |c| swap::run(&swap_trace(), c).map(drop))?;
    }

    #[test]
    fn workload_configs_are_refused_or_generate(picks in proptest::collection::vec((0usize..64, 0usize..10), 1..3), which in 0usize..2) {
        use mobmem::workload::Params;
        match which {
            0 => {
                let Some(mut config) = mutated(&AppCyclingConfig::default(), &picks) else { return Ok(()) };
                if no_panic("AppCyclingConfig::validate", || Params::validate(&config))?.is_ok() {
                    return Ok(()); // valid ones may be large; generating them is another test's
                }
                config.rounds = config.rounds.min(2);
                let _generated = no_panic("app_cycling::generate", || app_cycling::generate(&config, 1))?;
            }
            _ => {
                let Some(config) = mutated(&GalleryUsbConfig::default(), &picks) else { return Ok(()) };
                if no_panic("GalleryUsbConfig::validate", || Params::validate(&config))?.is_ok() {
                    return Ok(());
                }
                let out = no_panic("gallery_usb::generate", || gallery_usb::generate(&config, 1))?;
                prop_assert!(out.is_err(), "a refused config generated");
            }
        }
    }

    #[test]
    fn phone_configs_are_refused_or_run(picks in proptest::collection::vec((0usize..128, 0usize..10), 1..3)) {
        // The workload is the unchanged phone's: the mutated one may ask for any size.
        let base = common::small_phone(4);
        let Some(config) = mutated(&base, &picks) else { return Ok(()) };
        if no_panic("PhoneConfig::validate", || config.validate())?.is_ok() {
            return Ok(()); // valid ones may be large; running them is the phone tests'
        }
        let trace = phone::workload(&base, 1).expect("the small phone's workload");
        for choice in [config.baselines(), config.mechanisms()] {
            let run = no_panic("phone::run", || phone::run(&config, &choice, &trace, 1))?;
            prop_assert!(run.is_err(), "a refused phone ran with {:?}", choice);
        }
    }

    #[test]
    fn ksm_settings_are_refused_or_run(picks in proptest::collection::vec((0usize..64, 0usize..10), 1..3), which in 0usize..2) {
        let pop = dedup::presets::AndroidConfig { scale: 0.02, ..Default::default() }
            .generate(1)
            .expect("a small population");
        let spec = RunSpec { duration_ms: 2_000, sample_ms: 1_000, ksm_on: true };
        let (params, costs) = if which == 0 {
            let Some(p) = mutated(&KsmParams::default(), &picks) else { return Ok(()) };
            (p, ScanCosts::default())
        } else {
            let Some(c) = mutated(&ScanCosts::default(), &picks) else { return Ok(()) };
            (KsmParams::default(), c)
        };
        let valid = no_panic("validate", || params.validate().and_then(|_| costs.validate()))?;
        if valid.is_ok() {
            return Ok(()); // valid ones may run for days of simulated time
        }
        let run = no_panic("dedup::simulate", || dedup::simulate(&pop, &params, &costs, spec))?;
        prop_assert!(run.is_err(), "refused KSM settings or costs ran");
    }
}
