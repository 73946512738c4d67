use super::*;

fn shipped(name: &str) -> PhoneConfig {
    let path = format!(
        "{}/../../experiments/{name}.toml",
        env!("CARGO_MANIFEST_DIR")
    );
    let text = std::fs::read_to_string(&path).unwrap();
    PhoneConfig::parse(&text, &path).unwrap()
}

/// A phone-2012 with a short workload, small enough to check after every few events.
fn small() -> PhoneConfig {
    let mut c = shipped("phone-2012");
    c.scale = 0.0625;
    c.workload.sessions = 10;
    c.workload.inputs = [3, 6];
    c
}

/// Every combination of the slots' two settings of a phone.
fn combinations(c: &PhoneConfig) -> Vec<Choice> {
    let (on, off) = (c.mechanisms(), c.baselines());
    (0..1u32 << SLOTS.len())
        .map(|mask| {
            let mut choice = off.clone();
            for (i, slot) in SLOTS.iter().enumerate() {
                if mask & (1 << i) != 0 {
                    choice = PhoneConfig::with_slot(&choice, slot, &on);
                }
            }
            choice
        })
        .collect()
}

#[test]
fn every_page_is_in_one_place_in_every_combination() {
    let mut c = small();
    // Swaps that write NVM at once and fill a small pool, memory tight enough for
    // kills, and a ksmd fast enough to merge within the short workload.
    c.swap.mechanism = "parallel-clock".into();
    c.swap.baseline = "zram".into();
    c.swap.zram_mib = 32.0;
    c.swap.flash_mib = 128.0;
    c.memory.dram_mib = 512.0;
    c.dedup.ksm.pages_to_scan = 4000;
    let trace = workload(&c, 3).unwrap();
    let mut seen = PhoneMetrics::default();
    for choice in combinations(&c) {
        let pop = (choice.dedup == "ksm").then(|| population(&trace, 3).unwrap());
        let mut phone = Phone::new(&c, &choice, &trace, pop.as_ref()).unwrap();
        for (i, e) in trace.trace.events.iter().enumerate() {
            events::dispatch(&mut phone, e).unwrap();
            if i % 4000 == 0 {
                phone
                    .validate()
                    .unwrap_or_else(|m| panic!("{choice:?}, event {i}: {m}"));
            }
        }
        phone
            .validate()
            .unwrap_or_else(|m| panic!("{choice:?} at the end: {m}"));
        let m = phone.finish().unwrap();
        assert_eq!(
            m.accesses as usize,
            trace.trace.accesses().count(),
            "{choice:?}"
        );
        assert!(m.file_bypass_reads <= m.file_reads);
        // The response times are a distribution: percentiles in order.
        let rts = [
            m.rt_p10_ms,
            m.rt_p25_ms,
            m.rt_p50_ms,
            m.rt_p75_ms,
            m.rt_p90_ms,
            m.rt_p95_ms,
            m.rt_p99_ms,
            m.rt_max_ms,
        ];
        assert!(rts.windows(2).all(|w| w[0] <= w[1]), "{choice:?}: {rts:?}");
        assert!(rts[0] >= c.response.execution_ms, "{choice:?}");
        if choice.dedup == "off" {
            assert_eq!((m.ksm_saved_peak_mib, m.cow_faults), (0.0, 0), "{choice:?}");
        }
        if choice.swap == "flash" || choice.swap == "zram" {
            assert_eq!(m.nvm_writes, 0, "{choice:?}");
        }
        seen.swap_outs += m.swap_outs;
        seen.swap_ins += m.swap_ins;
        seen.kills += m.kills;
        seen.cow_faults += m.cow_faults;
        seen.nvm_writes += m.nvm_writes;
        seen.swap_refused += m.swap_refused;
        seen.zram_pool_peak_mib += m.zram_pool_peak_mib;
        seen.ksm_saved_peak_mib += m.ksm_saved_peak_mib;
    }
    // The combinations reach every path the checks guard.
    eprintln!("{seen:?}");
    for (what, n) in [
        ("swap-outs", seen.swap_outs as f64),
        ("swap-ins", seen.swap_ins as f64),
        ("kills", seen.kills as f64),
        ("copies on write", seen.cow_faults as f64),
        ("NVM writes", seen.nvm_writes as f64),
        ("zram pool", seen.zram_pool_peak_mib),
        ("KSM savings", seen.ksm_saved_peak_mib),
    ] {
        assert!(n > 0.0, "no {what} in any combination");
    }
}

#[test]
fn ksmd_wakes_on_the_loop_timer_and_merges_the_memorys_pages() {
    let mut c = small();
    c.dedup.ksm.pages_to_scan = 4000;
    let trace = workload(&c, 2).unwrap();
    let choice = c.mechanisms();
    assert_eq!(choice.dedup, "ksm");
    let pop = population(&trace, 2).unwrap();
    let mut phone = Phone::new(&c, &choice, &trace, Some(&pop)).unwrap();
    events::replay(&mut phone, &trace.trace.events).unwrap();
    phone.validate().unwrap();
    // One wake-up every sleep from the first sleep on, each due by the last event.
    let last = trace.trace.events.last().unwrap().time_ns();
    let d = phone.dedup.as_ref().unwrap();
    assert!(d.sleep_ns > 0);
    assert_eq!(d.wakes, last / d.sleep_ns);
    assert!(d.next_wake_ns > last && d.next_wake_ns - d.sleep_ns <= last);
    // The pages ksmd merged are the memory's, named by the trace's page ids: anonymous
    // pages of the population, in no frame of their own.
    let mem = &phone.m.mem;
    assert!(mem.merged_pages() > 0 && mem.ksm_pages() > 0);
    for page in (0..mem.pages().len() as PageId).filter(|&p| mem.is_merged(p)) {
        assert!(pop.index_of(page).is_some(), "page {page}");
        assert_eq!(trace.trace.tables.pages[page as usize].kind, PageKind::Anon);
        assert_eq!(mem.frame_of(page), None);
    }
}

#[test]
fn runs_are_deterministic_and_seeds_differ() {
    let c = small();
    let (a, b) = (workload(&c, 1).unwrap(), workload(&c, 1).unwrap());
    assert_eq!(a.trace.events, b.trace.events);
    let on = c.mechanisms();
    let (x, y) = (run(&c, &on, &a, 1).unwrap(), run(&c, &on, &b, 1).unwrap());
    assert_eq!(format!("{x:?}"), format!("{y:?}"));
    let other = workload(&c, 2).unwrap();
    assert_ne!(a.trace.events, other.trace.events);
}

/// zram's work is priced once, at its device profile: with ksmd off, the CPU power
/// (which prices only ksmd's time) leaves the energy alone, and zram's profile energies
/// are in it.
#[test]
fn zram_energy_is_its_profiles_alone() {
    let mut c = small();
    c.memory.dram_mib = 512.0;
    c.swap.zram_mib = 64.0;
    let trace = workload(&c, 1).unwrap();
    let choice = Choice {
        swap: "zram".into(),
        dedup: "off".into(),
        ..c.mechanisms()
    };
    let energy = |c: &PhoneConfig| run(c, &choice, &trace, 1).unwrap();
    let base = energy(&c);
    assert!(base.swap_outs > 0 && base.swap_ins > 0, "{base:?}");
    let mut hot = c.clone();
    hot.response.cpu_w = 50.0;
    assert_eq!(energy(&hot).energy_mj, base.energy_mj);
    let mut free = c.clone();
    free.swap.devices.zram.compress_nj = 0.0;
    free.swap.devices.zram.decompress_nj = 0.0;
    let saved_mj = base.energy_mj - energy(&free).energy_mj;
    let zram = &c.swap.devices.zram;
    let expected_mj = (base.swap_outs as f64 * zram.compress_nj
        + base.swap_ins as f64 * zram.decompress_nj)
        / 1e6;
    assert!(
        (saved_mj - expected_mj).abs() <= 1e-9 * base.energy_mj.max(1.0),
        "{saved_mj} mJ saved, {expected_mj} mJ expected"
    );
}

#[test]
fn the_selective_file_system_reads_media_around_the_page_cache() {
    let c = small();
    let trace = workload(&c, 1).unwrap();
    let mut choice = c.baselines();
    choice.placement = "off".into();
    let stock = run(&c, &choice, &trace, 1).unwrap();
    choice.fs = "selective".into();
    let selective = run(&c, &choice, &trace, 1).unwrap();
    let media: usize = (trace.trace.accesses())
        .filter(|e| trace.file_class[e.page() as usize] == Some(FileClass::Media))
        .count();
    assert!(media > 0);
    // Every media read bypasses: media is read once, so each access is one read.
    assert_eq!(selective.file_bypass_reads as usize, media);
    assert_eq!(stock.file_bypass_reads, 0);
    // A media page read straight to the user costs less than through the page cache
    // (pxa250: no allocation, no copy), a compressed code page more than a raw one.
    let platform = Platform::named("pxa250").unwrap();
    let (s, p, o) = (
        PhoneFs::new(
            FS_VARIANTS.find("selective").unwrap(),
            platform.clone(),
            Codec::Zlib,
            2.5,
        ),
        PhoneFs::new(
            FS_VARIANTS.find("stock").unwrap(),
            platform.clone(),
            Codec::Zlib,
            2.5,
        ),
        PhoneFs::new(FS_VARIANTS.find("off").unwrap(), platform, Codec::Zlib, 2.5),
    );
    let (s_media, s_kept) = cold_read(&s, s.media);
    let (p_media, p_kept) = cold_read(&p, p.media);
    assert!(s_media < p_media && !s_kept && p_kept);
    assert_eq!(p_media, cold_read(&o, o.media).0);
    assert_eq!(cold_read(&s, s.code), cold_read(&p, p.code));
    assert!(cold_read(&p, p.code).0 != cold_read(&o, o.code).0);
}

/// A page cache that holds nothing: it records whether a page was handed to it.
struct Empty(bool);

impl PageCache for Empty {
    fn holds(&self, _: PageId) -> bool {
        false
    }
    fn access(&mut self, _: PageId, _: bool) -> Result<()> {
        self.0 = true;
        Ok(())
    }
}

/// The time of reading `stored` from flash along `fs`'s path, and whether it was kept.
fn cold_read(fs: &PhoneFs, stored: StoredPage) -> (f64, bool) {
    let mut cache = Empty(false);
    let cost = (fs.path.fs())
        .read(&mut cache, FilePage { id: 0, stored })
        .unwrap();
    (cost.priced(&fs.platform, fs.codec).time_ns, cache.0)
}

#[test]
fn file_pages_reclaim_evicts_are_read_from_flash_again_and_the_rest_are_hits() {
    let mut c = small();
    // Tight: half the memory is the system's.
    c.memory.dram_mib = 256.0;
    c.memory.system_mib = 120.0;
    let trace = workload(&c, 1).unwrap();
    let mut choice = c.baselines();
    choice.placement = "off".into();
    choice.dedup = "off".into();
    let mut phone = Phone::new(&c, &choice, &trace, None).unwrap();
    let mut read_pages = std::collections::HashSet::new();
    let mut hits = 0u64;
    for e in &trace.trace.events {
        if e.is_access() && !e.is_anon() {
            let page = e.page();
            hits += u64::from(phone.m.mem.frame_of(page).is_some());
            read_pages.insert(page);
        }
        events::dispatch(&mut phone, e).unwrap();
    }
    phone.validate().unwrap();
    let drops = phone.m.mem.counters.file_drops;
    let accesses = (trace.trace.accesses()).filter(|e| !e.is_anon()).count() as u64;
    let m = phone.finish().unwrap();
    // Reclaim dropped file pages, and reading them again went to flash: more flash
    // reads than pages, every access a flash read or a hit.
    assert!(drops > 0);
    assert!(
        m.file_reads > read_pages.len() as u64,
        "{} reads of {} pages",
        m.file_reads,
        read_pages.len()
    );
    assert_eq!(m.file_reads + hits, accesses);
    assert!(hits > 0);
}

#[test]
fn bad_phone_files_are_clear_errors() {
    let text = std::fs::read_to_string(format!(
        "{}/../../experiments/phone.toml",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap();
    let cases = [
        (
            "mechanism = \"fmp\"",
            "mechanism = \"off\"",
            "reclaim cannot be off",
        ),
        ("mechanism = \"zram\"", "mechanism = \"zswap\"", "zswap"),
        ("scale = 0.03125", "scale = 2", "scale must be in (0, 1]"),
        (
            "system_mib = 2048",
            "system_mib = 9000",
            "must be below memory.dram_mib",
        ),
        ("[workload]", "[workload]\nbogus = 1", "bogus"),
        (
            "mechanism = \"ksm\"",
            "mechanism = \"uksm\"",
            "unknown dedup variant 'uksm' (known: ksm, ksm-6.11, off)",
        ),
        ("scale = 0.03125", "scale = 0.000001", "gives 2 frames"),
        (
            "[workload]",
            "[workload]\nframework_pages = 4000000000",
            "distinct pages",
        ),
    ];
    for (from, to, expect) in cases {
        assert!(text.contains(from), "{from}");
        let bad = text.replacen(from, to, 1);
        let e = PhoneConfig::parse(&bad, "phone.toml")
            .unwrap_err()
            .to_string();
        assert!(e.contains(expect), "{to}: {e}");
        assert!(e.contains("phone.toml"), "{e}");
    }
}

#[test]
#[ignore]
fn print_runs() {
    for name in ["phone-2012", "phone"] {
        let c = shipped(name);
        let trace = workload(&c, 1).unwrap();
        for choice in [c.baselines(), c.mechanisms()] {
            let t0 = std::time::Instant::now();
            let m = run(&c, &choice, &trace, 1).unwrap();
            eprintln!("{choice:?} {:?}\n{m:?}", t0.elapsed());
        }
    }
}

#[test]
fn a_trace_file_drives_the_phone_with_its_processes_and_importance() {
    // The page-protection workload (file and anonymous pages, inputs, importance)
    // written as a trace file and read back.
    let gallery = crate::workload::gallery_usb::GalleryUsbConfig {
        interactions: 20,
        ..Default::default()
    };
    let trace = crate::workload::gallery_usb::generate(&gallery, 1).unwrap();
    let dir = std::env::temp_dir().join(format!("mobmem-phone-trace-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("gallery.mmt");
    crate::trace::write(&path, &trace).unwrap();
    let mut c = small();
    c.dedup.mechanism = "off".into();
    c.trace = Some(path.clone());
    c.validate().unwrap();
    let from_file = workload(&c, 1).unwrap();
    assert_eq!(from_file.trace.events.len(), trace.events.len());
    let mut choice = c.mechanisms();
    choice.placement = "off".into();
    let m = run(&c, &choice, &from_file, 1).unwrap();
    assert_eq!(m.accesses as usize, trace.accesses().count());
    assert_eq!(m.interactions, 20);
    assert!(m.file_reads > 0 && m.minor_faults > 0);
    // Without contents there is nothing for KSM to merge: the file says so.
    c.dedup.mechanism = "ksm".into();
    let e = c.validate().unwrap_err().to_string();
    assert!(e.contains("contents"), "{e}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn the_timeline_samples_every_launch_and_ends_at_the_runs_metrics() {
    let mut c = small();
    // Memory tight enough for swapping and kills, zram as swap (its pool takes frames)
    // and a ksmd fast enough to merge within the short workload.
    c.memory.dram_mib = 512.0;
    c.swap.mechanism = "zram".into();
    c.swap.zram_mib = 32.0;
    c.dedup.ksm.pages_to_scan = 4000;
    let trace = workload(&c, 3).unwrap();
    for choice in [c.mechanisms(), c.baselines()] {
        let plain = run(&c, &choice, &trace, 3).unwrap();
        let (m, samples) = run_with_timeline(&c, &choice, &trace, 3).unwrap();
        // Recording it changes nothing the run measures.
        assert_eq!(format!("{m:?}"), format!("{plain:?}"), "{choice:?}");

        let (end, launches) = samples.split_last().unwrap();
        assert_eq!(end.event, SampleEvent::End);
        assert!(launches.iter().all(|s| s.event == SampleEvent::Launch));
        // One sample per launch: the relaunches are the run's, with their times.
        let relaunches: Vec<&Sample> = (launches.iter())
            .filter(|s| s.launch != Some(LaunchKind::First))
            .collect();
        assert_eq!(relaunches.len() as u64, m.launches, "{choice:?}");
        let cold = relaunches
            .iter()
            .filter(|s| s.launch == Some(LaunchKind::Cold));
        assert_eq!(cold.count() as u64, m.cold_launches, "{choice:?}");
        let times: Vec<f64> = relaunches.iter().map(|s| s.launch_ms.unwrap()).collect();
        assert_eq!(
            times.iter().sum::<f64>() / times.len() as f64,
            m.launch_mean_ms
        );
        assert!(launches.iter().all(|s| !s.app.is_empty()));
        assert!(launches.iter().all(|s| s.launch_ms.unwrap() > 0.0));

        // The last sample is the run's end: its counters are the run's totals.
        assert_eq!(end.time_s, m.duration_s);
        assert_eq!(
            (end.kills, end.swap_outs, end.swap_ins, end.file_reads),
            (m.kills, m.swap_outs, m.swap_ins, m.file_reads),
            "{choice:?}"
        );
        assert_eq!((end.launch, end.launch_ms), (None, None));
        // Counters and time never go back; sizes stay within the run's peaks and the
        // phone's memory.
        for w in samples.windows(2) {
            let (a, b) = (&w[0], &w[1]);
            assert!(a.time_s <= b.time_s, "{a:?} then {b:?}");
            assert!(
                a.kills <= b.kills && a.swap_outs <= b.swap_outs,
                "{a:?} then {b:?}"
            );
            assert!(a.swap_ins <= b.swap_ins && a.file_reads <= b.file_reads);
        }
        for s in &samples {
            assert!(s.zram_pool_mib <= m.zram_pool_peak_mib, "{s:?}");
            assert!(s.ksm_saved_mib <= m.ksm_saved_peak_mib, "{s:?}");
            // The buffer cache of the placement slot is memory of its own.
            let cached = if choice.placement == "off" {
                s.page_cache_mib
            } else {
                0.0
            };
            let held = s.free_mib + cached + s.anon_mib + s.zram_pool_mib;
            assert!(held <= c.memory.dram_mib, "{s:?}");
            assert!(s.anon_mib > 0.0 || s.time_s == 0.0, "{s:?}");
        }
        if choice == c.mechanisms() {
            // The pressure this test is for: swapping, kills and KSM all happened, so
            // the counters above were seen moving.
            assert!(
                m.swap_outs > 0 && m.kills > 0 && m.ksm_saved_peak_mib > 0.0,
                "{m:?}"
            );
            assert!(samples
                .iter()
                .any(|s| s.zram_pool_mib > 0.0 && s.swap_used_mib > 0.0));
            assert!(samples.iter().any(|s| s.ksm_saved_mib > 0.0));
        }
    }
}

#[test]
fn the_clock_changes_times_and_never_what_the_memory_does() {
    // The same run with the latencies summed and on the clock: every count is the
    // same (the clock only watches), the times differ, and only the clock has PSI.
    let mut c = small();
    c.memory.dram_mib = 512.0;
    let trace = workload(&c, 5).unwrap();
    let on = c.mechanisms();
    let mut sum = c.clone();
    sum.time.accounting = crate::mm::clock::Accounting::Sum;
    let timed = run(&c, &on, &trace, 5).unwrap();
    let summed = run(&sum, &on, &trace, 5).unwrap();
    for (name, a, b) in [
        ("swap_outs", timed.swap_outs, summed.swap_outs),
        ("swap_ins", timed.swap_ins, summed.swap_ins),
        ("file_reads", timed.file_reads, summed.file_reads),
        ("kills", timed.kills, summed.kills),
        ("interactions", timed.interactions, summed.interactions),
        ("launches", timed.launches, summed.launches),
        ("pages_scanned", timed.pages_scanned, summed.pages_scanned),
    ] {
        assert_eq!(a, b, "{name}");
    }
    assert!(summed.psi_memory_some_s.is_none() && summed.app_cpu_ms.is_none());
    let stall = timed.psi_memory_some_s.unwrap();
    assert!(stall > 0.0 && stall <= timed.duration_s, "{stall}");
    assert!(timed.psi_memory_full_s.unwrap() <= stall);
    // Two equal cores: an interaction runs its 100 ms of work at full speed at best.
    assert!(timed.rt_p10_ms >= c.response.execution_ms - 1e-6);
    assert_ne!(timed.rt_mean_ms, summed.rt_mean_ms);
    // The apps' threads ran every interaction's execution at least.
    let executions = timed.interactions as f64 * c.response.execution_ms;
    assert!(timed.app_cpu_ms.unwrap() >= executions - 1e-3);
}

#[test]
fn a_perfetto_trace_of_a_run_leaves_its_metrics_alone_and_draws_every_thread() {
    use crate::trace::perfetto::write::{EventType, Trace};
    use prost::Message;
    let mut c = small();
    // Tight memory, zram and a fast ksmd, as above: kswapd and ksmd have work, and the
    // killer takes apps.
    c.memory.dram_mib = 512.0;
    c.swap.mechanism = "zram".into();
    c.swap.zram_mib = 32.0;
    c.dedup.ksm.pages_to_scan = 4000;
    let trace = workload(&c, 3).unwrap();
    let choice = c.mechanisms();
    let plain = run(&c, &choice, &trace, 3).unwrap();
    let (m, bytes) = perfetto::run_with_perfetto(&c, &choice, &trace, 3, "t").unwrap();
    assert_eq!(format!("{m:?}"), format!("{plain:?}"));
    let again = perfetto::run_with_perfetto(&c, &choice, &trace, 3, "t")
        .unwrap()
        .1;
    assert_eq!(bytes, again, "the same run, the same bytes");

    let packets = Trace::decode(bytes.as_slice()).unwrap().packet;
    let d: Vec<_> = packets
        .iter()
        .filter_map(|p| p.track_descriptor.as_ref())
        .collect();
    assert_eq!(d[0].description.as_deref(), Some(perfetto::MARKER));
    let thread_of = |name: &str| {
        d.iter()
            .find(|d| d.thread.as_ref().and_then(|t| t.thread_name.as_deref()) == Some(name))
            .and_then(|d| d.uuid)
            .unwrap_or_else(|| panic!("no thread {name}"))
    };
    let events: Vec<_> = packets
        .iter()
        .filter_map(|p| p.track_event.as_ref())
        .collect();
    let slices_on = |uuid: u64| {
        (events.iter())
            .filter(|e| {
                e.track_uuid == Some(uuid) && e.r#type == Some(EventType::SliceBegin as i32)
            })
            .count()
    };
    for name in ["kswapd0", "ksmd"] {
        assert!(slices_on(thread_of(name)) > 0, "{name}");
    }
    for p in &trace.trace.tables.processes {
        thread_of(&p.name);
    }
    let instants: Vec<&str> = (events.iter())
        .filter(|e| e.r#type == Some(EventType::Instant as i32))
        .filter_map(|e| e.name.as_deref())
        .collect();
    assert_eq!(
        instants.iter().filter(|n| n.starts_with("launch")).count() as u64,
        m.launches + instants.iter().filter(|n| n.contains("first")).count() as u64
    );
    assert_eq!(
        instants.iter().filter(|n| **n == "killed").count() as u64,
        m.kills
    );

    // With the sum accounting there is no clock to draw.
    c.time.accounting = crate::mm::clock::Accounting::Sum;
    let e = perfetto::run_with_perfetto(&c, &choice, &trace, 3, "t").unwrap_err();
    assert!(e.to_string().contains("accounting"), "{e}");
}
