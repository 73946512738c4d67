//! Workload configs: presets by name, TOML round trips, and rejection of nonsense with a
//! message that names the parameter. No config, however wrong, makes the generator panic.

use mobmem::workload::{
    generate, preset, preset_names, summarize, AppConfig, BackgroundConfig, FreshConfig,
    RegionConfig, RegionKind, WorkloadConfig,
};
use mobmem::Error;
use proptest::prelude::*;

fn small_config() -> WorkloadConfig {
    let mut config = preset("app-switching").unwrap();
    config.scale = 0.01;
    config
}

/// The error message of an invalid config, which must mention every one of `words`.
fn rejected(config: &WorkloadConfig, words: &[&str]) {
    let err = config.validate().expect_err("config should be rejected");
    let message = err.to_string();
    assert!(matches!(err, Error::Config { .. }), "{message}");
    for word in words {
        assert!(
            message.contains(word),
            "'{message}' should mention '{word}'"
        );
    }
    // generate validates too.
    assert!(generate(config, 1).is_err());
}

#[test]
fn presets_are_listed_and_valid() {
    assert_eq!(preset_names(), ["chrome-push", "app-switching"]);
    for name in preset_names() {
        preset(name).unwrap().validate().unwrap();
    }
}

#[test]
fn an_unknown_preset_lists_the_known_ones() {
    let err = preset("chrome").unwrap_err();
    match &err {
        Error::Unknown { what, name, known } => {
            assert_eq!(*what, "workload preset");
            assert_eq!(name, "chrome");
            assert_eq!(known, &["chrome-push", "app-switching"]);
        }
        other => panic!("unexpected {other:?}"),
    }
    assert_eq!(
        err.to_string(),
        "unknown workload preset 'chrome' (known: chrome-push, app-switching)"
    );
}

#[test]
fn presets_survive_a_toml_round_trip() {
    for name in preset_names() {
        let config = preset(name).unwrap();
        let text = toml::to_string(&config).unwrap();
        let back: WorkloadConfig = toml::from_str(&text).unwrap();
        assert_eq!(back, config, "{name}");
    }
}

#[test]
fn a_toml_file_states_only_what_it_changes() {
    let text = r#"
        accesses = 5000
        [[apps]]
        name = "com.example.notes"
        pid = 4242
        [[apps]]
        name = "com.example.chat"
        pid = 4243
        foreground_weight = 0
        running_at_start = true
        background = { service_adj = 500, wakeup_interval_s = 2.0 }
    "#;
    let config: WorkloadConfig = toml::from_str(text).unwrap();
    assert_eq!(config.scale, 1.0);
    assert_eq!(config.apps[0].regions, AppConfig::new("x", 1).regions);
    assert_eq!(
        config.apps[1].background.burst_accesses,
        BackgroundConfig::default().burst_accesses
    );
    let summary = summarize(&generate(&config, 3).unwrap());
    assert_eq!(summary.accesses, 5000);
    assert_eq!(summary.processes[1].foreground_accesses, 0);
    assert!(summary.processes[1].accesses > 0, "the chat app wakes up");
}

#[test]
fn unknown_fields_are_errors() {
    let err = toml::from_str::<WorkloadConfig>("acesses = 10").unwrap_err();
    assert!(err.to_string().contains("acesses"), "{err}");
    let text = "[[apps]]\nname = \"a\"\npid = 1\nzipf = 1.0\n";
    assert!(toml::from_str::<WorkloadConfig>(text).is_err());
    let text = "[[apps]]\nname = \"a\"\npid = 1\n[[apps.regions]]\nname = \"r\"\nkind = \"swap\"\n";
    assert!(
        toml::from_str::<WorkloadConfig>(text).is_err(),
        "kind is file or anon"
    );
}

#[test]
fn nonsense_is_rejected_with_a_clear_message() {
    let mut c = small_config();
    c.apps.clear();
    rejected(&c, &["at least one app"]);

    let mut c = small_config();
    c.accesses = 0;
    rejected(&c, &["accesses"]);

    let mut c = small_config();
    c.scale = -1.0;
    rejected(&c, &["scale", "-1"]);

    let mut c = small_config();
    c.scale = f64::NAN;
    rejected(&c, &["scale", "NaN"]);

    let mut c = small_config();
    c.scale = 1e6;
    rejected(&c, &["limit"]);

    let mut c = small_config();
    c.session_mean_s = 0.0;
    rejected(&c, &["session_mean_s"]);

    let mut c = small_config();
    c.apps[0].foreground_rate_per_s = -5.0;
    rejected(&c, &["com.android.chrome", "foreground_rate_per_s", "-5"]);

    let mut c = small_config();
    c.apps[1].regions[1].write_fraction = 1.5;
    rejected(
        &c,
        &[
            "com.google.android.talk",
            "database",
            "write_fraction",
            "1.5",
        ],
    );

    let mut c = small_config();
    c.apps[0].fresh.as_mut().unwrap().revisit_probability = -0.1;
    rejected(&c, &["fresh", "revisit_probability"]);

    let mut c = small_config();
    c.apps[0].fresh.as_mut().unwrap().touches_per_page = 0.5;
    rejected(&c, &["touches_per_page"]);

    let mut c = small_config();
    c.apps[2].pid = c.apps[1].pid;
    rejected(&c, &["same pid", "2501"]);

    let mut c = small_config();
    c.apps[2].name = c.apps[1].name.clone();
    rejected(&c, &["two apps are named"]);

    let mut c = small_config();
    c.apps[3].pid = 0;
    rejected(&c, &["pid"]);

    let mut c = small_config();
    c.apps[3].name.clear();
    rejected(&c, &["app #4", "name"]);

    let mut c = small_config();
    for app in &mut c.apps {
        app.foreground_weight = 0.0;
        app.running_at_start = true;
    }
    rejected(&c, &["foreground_weight > 0"]);

    let mut c = small_config();
    c.apps[3].foreground_weight = 0.0;
    rejected(&c, &["never runs"]);

    let mut c = small_config();
    c.apps[3].regions[0].pages = 0;
    rejected(&c, &["region 'code'", "1 page"]);

    let mut c = small_config();
    c.apps[3].regions.clear();
    rejected(&c, &["region"]);

    let mut c = small_config();
    c.apps[1].background.service_adj = Some(0);
    rejected(&c, &["service_adj"]);

    let mut c = small_config();
    for region in &mut c.apps[1].regions {
        region.background_weight = 0.0;
    }
    rejected(&c, &["com.google.android.talk", "background_weight"]);

    let mut c = small_config();
    for region in &mut c.apps[3].regions {
        region.foreground_weight = 0.0;
    }
    rejected(&c, &["com.google.android.apps.maps", "foreground_weight"]);

    let mut c = small_config();
    c.apps[1].background.burst_accesses = 0;
    rejected(&c, &["burst_accesses"]);

    let mut c = small_config();
    c.apps[1].zipf_exponent = f64::INFINITY;
    rejected(&c, &["zipf_exponent"]);

    let mut c = small_config();
    c.apps[3].regions[0].pages = 200_000_000;
    c.scale = 1.0;
    rejected(&c, &["pages", "limit"]);
}

/// Values that break a careless generator without being invalid: tiny and huge.
const EXTREMES: &[f64] = &[
    0.0,
    5e-324,
    f64::MIN_POSITIVE,
    1e-9,
    1.0,
    1e9,
    1e300,
    f64::MAX,
];
/// Values no parameter accepts, or only some do.
const NONSENSE: &[f64] = &[-0.0, -1.0, 1.5, f64::NAN, f64::INFINITY, f64::NEG_INFINITY];

/// Mostly a value from `usual`; sometimes an extreme; with `wild`, sometimes nonsense.
fn number(usual: std::ops::Range<f64>, wild: bool) -> BoxedStrategy<f64> {
    let odd = if wild {
        prop::sample::select([EXTREMES, NONSENSE].concat()).boxed()
    } else {
        prop::sample::select(EXTREMES.to_vec()).boxed()
    };
    prop_oneof![if wild { 30 } else { 8 } => usual, 1 => odd].boxed()
}

/// A fraction: from 0..=1 unless wild.
fn fraction(wild: bool) -> BoxedStrategy<f64> {
    if wild {
        number(0.0..1.0, true)
    } else {
        prop_oneof![4 => 0.0..1.0, 1 => Just(0.0), 1 => Just(1.0)].boxed()
    }
}

fn region(wild: bool) -> impl Strategy<Value = RegionConfig> {
    (
        prop_oneof![Just(RegionKind::File), Just(RegionKind::Anon)],
        prop_oneof![20 => 1u64..300, 1 => Just(0u64)],
        number(0.0..2.0, wild),
        number(0.0..2.0, wild),
        fraction(wild),
    )
        .prop_map(|(kind, pages, fg, bg, writes)| {
            RegionConfig::new("r", kind, pages)
                .weights(fg, bg)
                .writes(writes)
        })
}

fn app(index: u32, wild: bool) -> impl Strategy<Value = AppConfig> {
    (
        (
            number(0.0..3.0, wild),
            any::<bool>(),
            number(1.0..1e5, wild),
            number(0.0..2.0, wild),
        ),
        prop::collection::vec(region(wild), 1..4),
        prop::option::of((
            fraction(wild),
            0u32..100,
            number(1.0..10.0, wild),
            fraction(wild),
            0u32..50,
        )),
        (
            prop::option::of(prop_oneof![10 => 1i16..1000, 1 => -1200i16..1200]),
            number(0.0..2.0, wild),
            0u32..200,
            0u32..200,
            number(0.0..5.0, wild),
        ),
    )
        .prop_map(
            move |((weight, running, rate, zipf), regions, fresh, background)| {
                let mut app = AppConfig::new(&format!("app{index}"), 100 + index);
                app.foreground_weight = weight;
                app.running_at_start = running;
                app.foreground_rate_per_s = rate;
                app.zipf_exponent = zipf;
                app.regions = regions;
                app.fresh = fresh.map(|(share, pages, touches, revisit, window)| FreshConfig {
                    share,
                    pages_per_site: pages,
                    touches_per_page: touches,
                    revisit_probability: revisit,
                    revisit_window: window,
                });
                let (service_adj, wakeup, burst, leave, gap) = background;
                app.background = BackgroundConfig {
                    service_adj,
                    wakeup_interval_s: wakeup,
                    burst_accesses: burst,
                    leave_accesses: leave,
                    access_gap_ms: gap,
                };
                app
            },
        )
}

fn config(wild: bool) -> impl Strategy<Value = WorkloadConfig> {
    (
        (app(0, wild), app(1, wild), app(2, wild)),
        prop_oneof![20 => 1u64..3000, 1 => Just(0u64)],
        number(0.001..30.0, wild),
    )
        .prop_map(|(apps, accesses, session_mean_s)| WorkloadConfig {
            accesses,
            scale: 1.0,
            session_mean_s,
            apps: vec![apps.0, apps.1, apps.2],
        })
}

/// A generated trace has exactly the requested accesses, monotone time and processes that
/// start before they act.
fn check_trace(config: &WorkloadConfig, trace: &mobmem::trace::Trace) -> Result<(), TestCaseError> {
    prop_assert_eq!(summarize(trace).accesses, config.total_accesses());
    let mut started = vec![false; trace.tables.processes.len()];
    let mut last = 0;
    for e in &trace.events {
        prop_assert!(e.time_ns() >= last);
        last = e.time_ns();
        if e.kind() == mobmem::trace::EventKind::Start {
            started[e.proc() as usize] = true;
        }
        prop_assert!(started[e.proc() as usize]);
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 200,
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    /// Anything at all: rejected with an error, or generated; never a panic.
    #[test]
    fn any_config_gives_a_trace_or_an_error(config in config(true), seed in any::<u64>()) {
        match generate(&config, seed) {
            Ok(trace) => check_trace(&config, &trace)?,
            Err(e) => prop_assert!(config.validate().is_err(), "valid config failed: {e}"),
        }
    }

    /// Valid but extreme values (tiny rates, huge intervals) still give proper traces.
    #[test]
    fn extreme_valid_configs_generate(config in config(false), seed in any::<u64>()) {
        if config.validate().is_ok() {
            let trace = generate(&config, seed);
            prop_assert!(trace.is_ok(), "{:?}", trace.err());
            check_trace(&config, &trace.unwrap())?;
        }
    }
}
