//! Named workloads modelling the two traces of the app-state-aware buffer cache paper
//! (Oh, Kang, Lee, Eom, KIISE 2015, section 4). The real traces, taken on a Nexus 7, were
//! never published; these are synthetic stand-ins built from the paper's description.
//! `docs/workloads.md` lists every value and the properties measured on the output.

use super::config::{
    AppConfig, BackgroundConfig, FreshConfig, RegionConfig, RegionKind, WorkloadConfig,
};

use RegionKind::{Anon, File};

/// One region: name, kind, pages, foreground and background weight, write fraction.
type Region = (&'static str, RegionKind, u64, f64, f64, f64);

fn regions(table: &[Region]) -> Vec<RegionConfig> {
    table
        .iter()
        .map(|&(name, kind, pages, foreground, background, writes)| {
            RegionConfig::new(name, kind, pages)
                .weights(foreground, background)
                .writes(writes)
        })
        .collect()
}

/// A push app: a service (adj 500) keeps it alive; pushes wake it to update its database.
fn push_background(
    wakeup_interval_s: f64,
    burst_accesses: u32,
    leave_accesses: u32,
) -> BackgroundConfig {
    BackgroundConfig {
        service_adj: Some(500),
        wakeup_interval_s,
        burst_accesses,
        leave_accesses,
        access_gap_ms: 0.5,
    }
}

/// An app that does nothing in the background except finish its work after leaving the
/// foreground.
fn leave_only(leave_accesses: u32) -> BackgroundConfig {
    BackgroundConfig {
        leave_accesses,
        access_gap_ms: 2.0,
        ..BackgroundConfig::default()
    }
}

/// Trace 1: Chrome in the foreground for the whole trace, browsing site after site;
/// Hangouts and Gmail in the background, woken by pushes. About 15 foreground requests per
/// background request; the hit ratio climbs slowly with memory because each site brings
/// new pages, some of which come back when a recent site is revisited.
pub(super) fn chrome_push() -> WorkloadConfig {
    let chrome = AppConfig {
        running_at_start: true,
        foreground_rate_per_s: 2000.0,
        zipf_exponent: 0.8,
        regions: regions(&[
            ("code", File, 5000, 0.30, 0.0, 0.0),
            ("resources", File, 1500, 0.08, 0.0, 0.0),
            ("history-db", File, 600, 0.10, 0.0, 0.35),
            ("cache-index", File, 300, 0.07, 0.0, 0.5),
            ("heap", Anon, 6000, 0.45, 0.0, 0.45),
        ]),
        fresh: Some(FreshConfig {
            share: 0.35,
            pages_per_site: 32,
            touches_per_page: 2.0,
            revisit_probability: 0.8,
            revisit_window: 1500,
        }),
        ..AppConfig::new("com.android.chrome", 2310)
    };
    let [hangouts, gmail] = messengers(1.0, [0.0, 0.0], [(1.0, 67, 0), (2.0, 133, 0)]);
    WorkloadConfig {
        accesses: 1_500_000,
        scale: 1.0,
        session_mean_s: 20.0,
        apps: vec![chrome, hangouts, gmail],
    }
}

/// Hangouts and Gmail: messengers kept running by their push services, each with code,
/// a message store written by pushes, and a heap. Per app: the foreground weight and the
/// pushes (`push_background`'s wakeup interval, burst and leave accesses).
fn messengers(
    zipf_exponent: f64,
    foreground_weights: [f64; 2],
    pushes: [(f64, u32, u32); 2],
) -> [AppConfig; 2] {
    let apps = [
        ("com.google.android.talk", 2501, [1500, 400, 1200]),
        ("com.google.android.gm", 2544, [1800, 800, 1500]),
    ];
    std::array::from_fn(|i| {
        let (name, pid, [code, database, heap]) = apps[i];
        let (every_s, burst, leave) = pushes[i];
        AppConfig {
            foreground_weight: foreground_weights[i],
            running_at_start: true,
            zipf_exponent,
            regions: regions(&[
                ("code", File, code, 0.30, 0.10, 0.0),
                ("database", File, database, 0.20, 0.60, 0.40),
                ("heap", Anon, heap, 0.50, 0.30, 0.40),
            ]),
            background: push_background(every_s, burst, leave),
            ..AppConfig::new(name, pid)
        }
    })
}

/// An app of trace 2 with steep popularity (Zipf 1.1) that does nothing in the
/// background but finish its work after leaving the foreground.
fn switching_app(
    name: &str,
    pid: u32,
    foreground_weight: f64,
    leave_accesses: u32,
    table: &[Region],
) -> AppConfig {
    AppConfig {
        foreground_weight,
        zipf_exponent: 1.1,
        regions: regions(table),
        background: leave_only(leave_accesses),
        ..AppConfig::new(name, pid)
    }
}

/// Trace 2: ten apps used in turn for short sessions (8 s on average). Each app's requests
/// are concentrated on a few hot pages (steep Zipf); background traffic comes from the apps
/// just left (finishing their work), three push apps, and music playing in the background
/// from the start. About 3 foreground requests per background request.
pub(super) fn app_switching() -> WorkloadConfig {
    let chrome = AppConfig {
        fresh: Some(FreshConfig {
            share: 0.10,
            pages_per_site: 24,
            touches_per_page: 5.0,
            revisit_probability: 0.4,
            revisit_window: 20,
        }),
        ..switching_app(
            "com.android.chrome",
            2310,
            3.0,
            3000,
            &[
                ("code", File, 3000, 0.30, 0.10, 0.0),
                ("resources", File, 800, 0.08, 0.0, 0.0),
                ("history-db", File, 400, 0.10, 0.30, 0.35),
                ("cache-index", File, 200, 0.07, 0.20, 0.5),
                ("heap", Anon, 3000, 0.45, 0.40, 0.45),
            ],
        )
    };
    let [hangouts, gmail] = messengers(1.1, [2.5, 2.0], [(1.4, 200, 800), (2.0, 300, 800)]);
    let maps = switching_app(
        "com.google.android.apps.maps",
        2620,
        1.5,
        4000,
        &[
            ("code", File, 2500, 0.30, 0.10, 0.0),
            ("tile-cache", File, 2500, 0.30, 0.60, 0.30),
            ("heap", Anon, 2000, 0.40, 0.30, 0.40),
        ],
    );
    let camera = switching_app(
        "com.google.android.GoogleCamera",
        2711,
        1.0,
        4000,
        &[
            ("code", File, 1500, 0.30, 0.10, 0.0),
            ("photos", File, 2000, 0.20, 0.60, 0.80),
            ("buffers", Anon, 2500, 0.50, 0.30, 0.60),
        ],
    );
    let gallery = switching_app(
        "com.android.gallery3d",
        2735,
        1.0,
        2000,
        &[
            ("code", File, 1200, 0.25, 0.10, 0.0),
            ("thumbnails", File, 2000, 0.45, 0.60, 0.20),
            ("heap", Anon, 1500, 0.30, 0.30, 0.40),
        ],
    );
    let music = AppConfig {
        foreground_weight: 1.0,
        running_at_start: true,
        zipf_exponent: 1.0,
        regions: regions(&[
            ("code", File, 1200, 0.30, 0.05, 0.0),
            ("media", File, 3000, 0.30, 0.85, 0.0),
            ("library-db", File, 300, 0.10, 0.0, 0.20),
            ("heap", Anon, 1000, 0.30, 0.10, 0.40),
        ]),
        // Playing from the start: playback keeps it perceptible (adj 200) and reading the
        // song in the background.
        background: BackgroundConfig {
            service_adj: Some(200),
            wakeup_interval_s: 0.4,
            burst_accesses: 60,
            leave_accesses: 0,
            access_gap_ms: 1.0,
        },
        ..AppConfig::new("com.google.android.music", 2802)
    };
    let facebook = AppConfig {
        foreground_weight: 2.0,
        running_at_start: true,
        zipf_exponent: 1.1,
        regions: regions(&[
            ("code", File, 3000, 0.30, 0.10, 0.0),
            ("feed-db", File, 600, 0.15, 0.60, 0.40),
            ("image-cache", File, 1500, 0.15, 0.0, 0.30),
            ("heap", Anon, 2000, 0.40, 0.30, 0.40),
        ]),
        background: push_background(4.0, 300, 1500),
        ..AppConfig::new("com.facebook.katana", 2890)
    };
    let game = AppConfig {
        foreground_rate_per_s: 2500.0,
        zipf_exponent: 1.2,
        ..switching_app(
            "com.king.candycrushsaga",
            2955,
            1.0,
            1500,
            &[
                ("code", File, 1500, 0.20, 0.10, 0.0),
                ("assets", File, 3000, 0.30, 0.0, 0.0),
                ("save-db", File, 100, 0.02, 0.60, 0.70),
                ("heap", Anon, 3000, 0.48, 0.30, 0.50),
            ],
        )
    };
    let youtube = switching_app(
        "com.google.android.youtube",
        3010,
        1.0,
        3000,
        &[
            ("code", File, 2500, 0.30, 0.10, 0.0),
            ("video-cache", File, 3000, 0.30, 0.60, 0.30),
            ("heap", Anon, 2000, 0.40, 0.30, 0.40),
        ],
    );
    WorkloadConfig {
        accesses: 1_500_000,
        scale: 1.0,
        session_mean_s: 8.0,
        apps: vec![
            chrome, hangouts, gmail, maps, camera, gallery, music, facebook, game, youtube,
        ],
    }
}
