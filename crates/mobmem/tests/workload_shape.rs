//! The shapes the paper describes, measured with an LRU memory swept over 10%..100% of the
//! footprint, and the measurement report behind `docs/workloads.md`:
//! `cargo test --release -p mobmem --test workload_shape -- --ignored --nocapture`.

use std::time::Instant;

use mobmem::trace::Trace;
use mobmem::workload::{generate, preset, preset_names, summarize};

/// Hit ratio of an LRU memory holding `sizes[i]` pages, for each size, from one pass of LRU
/// stack distances: a Fenwick tree over access times marks each page's latest access, so
/// the distinct pages touched since a page's previous access are a range sum.
fn lru_hit_ratios(trace: &Trace, sizes: &[usize]) -> Vec<f64> {
    let pages: Vec<usize> = trace.accesses().map(|e| e.page() as usize).collect();
    let n = pages.len();
    let mut tree = vec![0i64; n + 1];
    fn add(tree: &mut [i64], at: usize, value: i64) {
        let mut i = at + 1;
        while i < tree.len() {
            tree[i] += value;
            i += i & i.wrapping_neg();
        }
    }
    fn prefix(tree: &[i64], end: usize) -> i64 {
        let (mut i, mut sum) = (end, 0);
        while i > 0 {
            sum += tree[i];
            i -= i & i.wrapping_neg();
        }
        sum
    }
    let mut last_access = vec![None; trace.footprint()];
    let mut hits_at_distance = vec![0u64; trace.footprint() + 2];
    for (t, &page) in pages.iter().enumerate() {
        if let Some(last) = last_access[page] {
            // Pages touched after the previous access to `page`, plus `page` itself.
            let distance = (prefix(&tree, t) - prefix(&tree, last + 1)) as usize + 1;
            hits_at_distance[distance] += 1;
            add(&mut tree, last, -1);
        }
        add(&mut tree, t, 1);
        last_access[page] = Some(t);
    }
    sizes
        .iter()
        .map(|&size| {
            let hits: u64 = hits_at_distance.iter().take(size + 1).sum();
            hits as f64 / n as f64
        })
        .collect()
}

/// LRU hit ratio at 10%, 20%, ..., 100% of the footprint.
fn lru_curve(trace: &Trace) -> Vec<f64> {
    let sizes: Vec<usize> = (1..=10)
        .map(|tenth| trace.footprint() * tenth / 10)
        .collect();
    lru_hit_ratios(trace, &sizes)
}

/// Share of each process's accesses that go to its hottest tenth of pages, over all
/// processes (weighted by accesses).
fn hottest_tenth_share(trace: &Trace) -> f64 {
    let processes = trace.tables.processes.len();
    let mut counts: Vec<std::collections::HashMap<u32, u64>> = vec![Default::default(); processes];
    for e in trace.accesses() {
        *counts[e.proc() as usize].entry(e.page()).or_default() += 1;
    }
    let (mut hot, mut all) = (0u64, 0u64);
    for per_page in counts {
        let mut sorted: Vec<u64> = per_page.into_values().collect();
        sorted.sort_unstable_by(|a, b| b.cmp(a));
        let tenth = sorted.len().div_ceil(10);
        hot += sorted[..tenth].iter().sum::<u64>();
        all += sorted.iter().sum::<u64>();
    }
    hot as f64 / all as f64
}

#[test]
fn lru_hit_ratios_match_a_hand_worked_trace() {
    // Pages 0 1 2 0 1 3 0: distances of the re-references 0, 1, 0 are 3, 3, 3.
    let mut config = preset("chrome-push").unwrap();
    config.scale = 0.001;
    let mut trace = generate(&config, 1).unwrap();
    let access = trace.accesses().next().copied().unwrap();
    trace.events = [0, 1, 2, 0, 1, 3, 0]
        .iter()
        .map(|&p| mobmem::trace::Event::access(access.time_ns(), access.proc(), p, false, false))
        .collect();
    trace.tables.pages.truncate(4);
    assert_eq!(
        lru_hit_ratios(&trace, &[2, 3, 4]),
        vec![0.0, 3.0 / 7.0, 3.0 / 7.0]
    );
}

/// Trace 1: "the hit ratio increases gradually as memory grows from 10% to 70%, and
/// saturates above 70%".
#[test]
fn chrome_push_hit_ratio_grows_gradually_then_saturates() {
    let curve = lru_curve(&generate(&preset("chrome-push").unwrap(), 1).unwrap());
    assert!(curve.windows(2).all(|w| w[0] <= w[1]));
    assert!(curve[6] - curve[0] >= 0.2, "10% -> 70%: {curve:.3?}");
    assert!(
        curve[2] - curve[0] >= 0.1,
        "still growing at 30%: {curve:.3?}"
    );
    assert!(curve[9] - curve[6] <= 0.03, "70% -> 100%: {curve:.3?}");
}

/// Trace 2: requests concentrate on a few hot pages per app, yet LRU keeps gaining until
/// about 80% of the footprint (it evicts pages of apps that come back).
#[test]
fn app_switching_concentrates_on_hot_pages() {
    let trace = generate(&preset("app-switching").unwrap(), 1).unwrap();
    let hot = hottest_tenth_share(&trace);
    assert!(
        hot >= 0.6,
        "hottest tenth of each app's pages gets {hot:.2} of its accesses"
    );
    let curve = lru_curve(&trace);
    assert!(curve[0] >= 0.75, "{curve:.3?}");
    assert!(curve[7] - curve[3] >= 0.02, "40% -> 80%: {curve:.3?}");
    assert!(curve[9] - curve[7] <= 0.01, "80% -> 100%: {curve:.3?}");
}

#[test]
#[ignore = "measurement report for docs/workloads.md, run on demand in release mode"]
fn report_presets() {
    for name in preset_names() {
        let config = preset(name).unwrap();
        let trace = generate(&config, 1).unwrap();
        let summary = summarize(&trace);
        println!("== {name}, seed 1");
        print!("{summary}");
        let curve: Vec<String> = lru_curve(&trace)
            .iter()
            .map(|r| format!("{r:.3}"))
            .collect();
        println!(
            "LRU hit ratio at 10..100% of the footprint: {}",
            curve.join(" ")
        );
        println!(
            "hottest tenth of each app's pages: {:.3} of accesses",
            hottest_tenth_share(&trace)
        );

        let mut big = config.clone();
        big.scale = 10_000_000.0 / config.accesses as f64;
        let started = Instant::now();
        let big_trace = generate(&big, 1).unwrap();
        let seconds = started.elapsed().as_secs_f64();
        println!(
            "10M accesses: {} events in {seconds:.2} s, {:.1} M events/s, footprint {}",
            big_trace.events.len(),
            big_trace.events.len() as f64 / seconds / 1e6,
            big_trace.footprint()
        );

        let mut ratios = Vec::new();
        let mut footprints = Vec::new();
        let mut writes = Vec::new();
        for seed in 1..=20 {
            let s = summarize(&generate(&config, seed).unwrap());
            ratios.push(s.foreground_to_background.unwrap_or(f64::NAN));
            footprints.push(s.distinct_pages as f64);
            writes.push(s.write_fraction);
        }
        for (what, values) in [
            ("fg:bg", &ratios),
            ("footprint", &footprints),
            ("write fraction", &writes),
        ] {
            let min = values.iter().copied().fold(f64::INFINITY, f64::min);
            let max = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            let mean = values.iter().sum::<f64>() / values.len() as f64;
            println!("seeds 1..=20 {what}: min {min:.3} mean {mean:.3} max {max:.3}");
        }
    }
}
