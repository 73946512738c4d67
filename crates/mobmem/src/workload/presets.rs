//! Named workloads modelling the two traces of the app-state-aware buffer cache paper
//! (Oh, Kang, Lee, Eom, KIISE 2015, section 4). The real traces, taken on a Nexus 7, were
//! never published; these are synthetic stand-ins built from the paper's description.
//! `docs/workloads.md` lists every value and the properties measured on the output.

use super::config::{
    AppConfig, BackgroundConfig, FreshConfig, RegionConfig, RegionKind, WorkloadConfig,
};
use crate::{Error, Result};

use RegionKind::{Anon, File};

/// Names accepted by [`preset`], in the order of the paper's traces.
pub const PRESET_NAMES: &[&str] = &["chrome-push", "app-switching"];

pub fn preset(name: &str) -> Result<WorkloadConfig> {
    match name {
        "chrome-push" => Ok(chrome_push()),
        "app-switching" => Ok(app_switching()),
        _ => Err(Error::Unknown {
            what: "workload preset",
            name: name.to_string(),
            known: PRESET_NAMES.iter().map(|n| n.to_string()).collect(),
        }),
    }
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
fn chrome_push() -> WorkloadConfig {
    let chrome = AppConfig {
        running_at_start: true,
        foreground_rate_per_s: 2000.0,
        zipf_exponent: 0.8,
        regions: vec![
            RegionConfig::new("code", File, 5000).weights(0.30, 0.0),
            RegionConfig::new("resources", File, 1500).weights(0.08, 0.0),
            RegionConfig::new("history-db", File, 600)
                .weights(0.10, 0.0)
                .writes(0.35),
            RegionConfig::new("cache-index", File, 300)
                .weights(0.07, 0.0)
                .writes(0.5),
            RegionConfig::new("heap", Anon, 6000)
                .weights(0.45, 0.0)
                .writes(0.45),
        ],
        fresh: Some(FreshConfig {
            share: 0.35,
            pages_per_site: 32,
            touches_per_page: 2.0,
            revisit_probability: 0.8,
            revisit_window: 1500,
        }),
        ..AppConfig::new("com.android.chrome", 2310)
    };
    let hangouts = AppConfig {
        foreground_weight: 0.0,
        running_at_start: true,
        zipf_exponent: 1.0,
        regions: messenger_regions(1500, 400, 1200),
        background: push_background(1.0, 67, 0),
        ..AppConfig::new("com.google.android.talk", 2501)
    };
    let gmail = AppConfig {
        foreground_weight: 0.0,
        running_at_start: true,
        zipf_exponent: 1.0,
        regions: messenger_regions(1800, 800, 1500),
        background: push_background(2.0, 133, 0),
        ..AppConfig::new("com.google.android.gm", 2544)
    };
    WorkloadConfig {
        accesses: 1_500_000,
        scale: 1.0,
        session_mean_s: 20.0,
        apps: vec![chrome, hangouts, gmail],
    }
}

/// Code, a message store written by pushes, and a heap.
fn messenger_regions(code: u64, database: u64, heap: u64) -> Vec<RegionConfig> {
    vec![
        RegionConfig::new("code", File, code).weights(0.30, 0.10),
        RegionConfig::new("database", File, database)
            .weights(0.20, 0.60)
            .writes(0.40),
        RegionConfig::new("heap", Anon, heap)
            .weights(0.50, 0.30)
            .writes(0.40),
    ]
}

/// Trace 2: ten apps used in turn for short sessions (8 s on average). Each app's requests
/// are concentrated on a few hot pages (steep Zipf); background traffic comes from the apps
/// just left (finishing their work), three push apps, and music playing in the background
/// from the start. About 3 foreground requests per background request.
fn app_switching() -> WorkloadConfig {
    let chrome = AppConfig {
        foreground_weight: 3.0,
        zipf_exponent: 1.1,
        regions: vec![
            RegionConfig::new("code", File, 3000).weights(0.30, 0.10),
            RegionConfig::new("resources", File, 800).weights(0.08, 0.0),
            RegionConfig::new("history-db", File, 400)
                .weights(0.10, 0.30)
                .writes(0.35),
            RegionConfig::new("cache-index", File, 200)
                .weights(0.07, 0.20)
                .writes(0.5),
            RegionConfig::new("heap", Anon, 3000)
                .weights(0.45, 0.40)
                .writes(0.45),
        ],
        fresh: Some(FreshConfig {
            share: 0.10,
            pages_per_site: 24,
            touches_per_page: 5.0,
            revisit_probability: 0.4,
            revisit_window: 20,
        }),
        background: leave_only(3000),
        ..AppConfig::new("com.android.chrome", 2310)
    };
    let hangouts = AppConfig {
        foreground_weight: 2.5,
        running_at_start: true,
        zipf_exponent: 1.1,
        regions: messenger_regions(1500, 400, 1200),
        background: push_background(1.4, 200, 800),
        ..AppConfig::new("com.google.android.talk", 2501)
    };
    let gmail = AppConfig {
        foreground_weight: 2.0,
        running_at_start: true,
        zipf_exponent: 1.1,
        regions: messenger_regions(1800, 800, 1500),
        background: push_background(2.0, 300, 800),
        ..AppConfig::new("com.google.android.gm", 2544)
    };
    let maps = AppConfig {
        foreground_weight: 1.5,
        zipf_exponent: 1.1,
        regions: vec![
            RegionConfig::new("code", File, 2500).weights(0.30, 0.10),
            RegionConfig::new("tile-cache", File, 2500)
                .weights(0.30, 0.60)
                .writes(0.30),
            RegionConfig::new("heap", Anon, 2000)
                .weights(0.40, 0.30)
                .writes(0.40),
        ],
        background: leave_only(4000),
        ..AppConfig::new("com.google.android.apps.maps", 2620)
    };
    let camera = AppConfig {
        foreground_weight: 1.0,
        zipf_exponent: 1.1,
        regions: vec![
            RegionConfig::new("code", File, 1500).weights(0.30, 0.10),
            RegionConfig::new("photos", File, 2000)
                .weights(0.20, 0.60)
                .writes(0.80),
            RegionConfig::new("buffers", Anon, 2500)
                .weights(0.50, 0.30)
                .writes(0.60),
        ],
        background: leave_only(4000),
        ..AppConfig::new("com.google.android.GoogleCamera", 2711)
    };
    let gallery = AppConfig {
        foreground_weight: 1.0,
        zipf_exponent: 1.1,
        regions: vec![
            RegionConfig::new("code", File, 1200).weights(0.25, 0.10),
            RegionConfig::new("thumbnails", File, 2000)
                .weights(0.45, 0.60)
                .writes(0.20),
            RegionConfig::new("heap", Anon, 1500)
                .weights(0.30, 0.30)
                .writes(0.40),
        ],
        background: leave_only(2000),
        ..AppConfig::new("com.android.gallery3d", 2735)
    };
    let music = AppConfig {
        foreground_weight: 1.0,
        running_at_start: true,
        zipf_exponent: 1.0,
        regions: vec![
            RegionConfig::new("code", File, 1200).weights(0.30, 0.05),
            RegionConfig::new("media", File, 3000).weights(0.30, 0.85),
            RegionConfig::new("library-db", File, 300)
                .weights(0.10, 0.0)
                .writes(0.20),
            RegionConfig::new("heap", Anon, 1000)
                .weights(0.30, 0.10)
                .writes(0.40),
        ],
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
        regions: vec![
            RegionConfig::new("code", File, 3000).weights(0.30, 0.10),
            RegionConfig::new("feed-db", File, 600)
                .weights(0.15, 0.60)
                .writes(0.40),
            RegionConfig::new("image-cache", File, 1500)
                .weights(0.15, 0.0)
                .writes(0.30),
            RegionConfig::new("heap", Anon, 2000)
                .weights(0.40, 0.30)
                .writes(0.40),
        ],
        background: push_background(4.0, 300, 1500),
        ..AppConfig::new("com.facebook.katana", 2890)
    };
    let game = AppConfig {
        foreground_weight: 1.0,
        foreground_rate_per_s: 2500.0,
        zipf_exponent: 1.2,
        regions: vec![
            RegionConfig::new("code", File, 1500).weights(0.20, 0.10),
            RegionConfig::new("assets", File, 3000).weights(0.30, 0.0),
            RegionConfig::new("save-db", File, 100)
                .weights(0.02, 0.60)
                .writes(0.70),
            RegionConfig::new("heap", Anon, 3000)
                .weights(0.48, 0.30)
                .writes(0.50),
        ],
        background: leave_only(1500),
        ..AppConfig::new("com.king.candycrushsaga", 2955)
    };
    let youtube = AppConfig {
        foreground_weight: 1.0,
        zipf_exponent: 1.1,
        regions: vec![
            RegionConfig::new("code", File, 2500).weights(0.30, 0.10),
            RegionConfig::new("video-cache", File, 3000)
                .weights(0.30, 0.60)
                .writes(0.30),
            RegionConfig::new("heap", Anon, 2000)
                .weights(0.40, 0.30)
                .writes(0.40),
        ],
        background: leave_only(3000),
        ..AppConfig::new("com.google.android.youtube", 3010)
    };
    WorkloadConfig {
        accesses: 1_500_000,
        scale: 1.0,
        session_mean_s: 8.0,
        apps: vec![
            chrome, hangouts, gmail, maps, camera, gallery, music, facebook, game, youtube,
        ],
    }
}
