//! Every swap architecture on small traces worked by hand: after each access, the device
//! operations it caused, in order, and where the pages are. Log lines read
//! `device op page cause`, joined by "; "; "LRU" and "ring" list NVM slots in replacement
//! order (LRU from the most recent, CLOCK from the hand, with access bits).

use mobmem::core::pages::Location;
use mobmem::mm::swap::{
    IoRecord, ReclaimOrder, SlotOnSwapIn, SwapConfig, SwapDevice, SwapMetrics, SwapRun,
};
use mobmem::trace::{Event, PageId, ProcId, Tables};

use Location::{Dram, Zram};
const NOWHERE: Location = Location::Absent;
const NVM: Location = Location::SwapNvm;
const FLASH: Location = Location::SwapFlash;

struct Sim {
    machine: SwapRun,
    index: usize,
    now: u64,
}

/// Launch times here are the summed model's, worked by hand (events a nanosecond apart
/// would make every launch overlap the others on the clock; swap_workload.rs tests the
/// clock's launches).
fn config(architecture: &str, dram: usize, nvm: usize, slot: SlotOnSwapIn) -> SwapConfig {
    SwapConfig {
        architecture: architecture.into(),
        dram_pages: dram,
        nvm_pages: nvm,
        slot_on_swap_in: slot,
        time: mobmem::mm::clock::TimeModel {
            accounting: mobmem::mm::clock::Accounting::Sum,
            ..Default::default()
        },
        ..Default::default()
    }
}

fn line(r: &IoRecord) -> String {
    let device = match r.device {
        SwapDevice::Nvm => "nvm",
        SwapDevice::Flash => "flash",
        SwapDevice::Zram => "zram",
    };
    let op = format!("{:?}", r.op).to_lowercase();
    let cause = serde_json::to_value(r.cause).unwrap();
    format!("{device} {op} {} {}", r.page, cause.as_str().unwrap())
}

impl Sim {
    fn new(config: SwapConfig) -> Self {
        let mut machine = SwapRun::new(&config, 0, 0).unwrap();
        machine.enable_io_log();
        Sim {
            machine,
            index: 0,
            now: 0,
        }
    }

    /// Run one event; the device operations it caused, in order, joined by "; ".
    fn event(&mut self, event: Event) -> String {
        self.machine.step(self.index, &event).unwrap();
        self.machine.validate().unwrap();
        self.index += 1;
        self.now += 1;
        let lines: Vec<String> = self.machine.take_io_log().iter().map(line).collect();
        lines.join("; ")
    }

    fn access(&mut self, proc: ProcId, page: PageId, write: bool) -> String {
        self.event(Event::access(self.now, proc, page, write, true))
    }

    /// Page `page` read by app 0.
    fn read(&mut self, page: PageId) -> String {
        self.access(0, page, false)
    }

    fn write(&mut self, page: PageId) -> String {
        self.access(0, page, true)
    }

    fn adj(&mut self, proc: ProcId, adj: i16) {
        assert!(self
            .event(Event::importance(self.now, proc, adj))
            .is_empty());
    }

    fn at(&mut self, time_ns: u64) {
        self.now = time_ns;
    }

    fn places(&self, pages: &[PageId]) -> Vec<Location> {
        pages.iter().map(|&p| self.machine.location_of(p)).collect()
    }

    fn slot(&self, page: PageId) -> Option<SwapDevice> {
        self.machine.slot_of(page)
    }

    /// NVM slots in replacement order, each with its access bit.
    fn nvm(&self) -> Vec<(PageId, bool)> {
        let space = self.machine.swap();
        space
            .nvm_order()
            .into_iter()
            .map(|p| (p, space.is_accessed(p)))
            .collect()
    }

    fn finish(self) -> SwapMetrics {
        self.machine.finish(&Tables::default()).unwrap()
    }
}

#[test]
fn flash_only() {
    // DRAM 2 pages, one app.
    let mut s = Sim::new(config("flash", 2, 0, SlotOnSwapIn::Free));
    assert_eq!(s.read(1), "");
    assert_eq!(s.read(2), "");
    // DRAM [2 1] is full: 3 evicts the coldest, 1, to flash.
    assert_eq!(s.read(3), "flash write 1 swap-out");
    assert_eq!(s.places(&[1, 2, 3]), vec![FLASH, Dram, Dram]);
    // 1 faults: 2 goes out first, then 1 is read back and its slot freed.
    assert_eq!(s.read(1), "flash write 2 swap-out; flash read 1 swap-in");
    assert_eq!(s.places(&[1, 2, 3]), vec![Dram, FLASH, Dram]);
    assert_eq!(s.slot(1), None);
    assert_eq!(s.machine.swap().flash_used(), 1);
    // Hits cost nothing, reads or writes.
    assert_eq!(s.write(1), "");
    let m = s.finish();
    assert_eq!((m.swap_outs, m.swap_ins, m.fresh_allocations), (2, 1, 3));
    assert_eq!((m.io.flash_reads, m.io.flash_writes), (1, 2));
    // 1 read at 100 us + 2 writes at 150 us.
    assert_eq!(m.io_time_ns, 400_000.0);
    assert_eq!(m.flash_write_bytes, 8192);
    assert_eq!((m.single_access_pages, m.single_access_share), (1, 1.0));
}

#[test]
fn hierarchical_lru_with_slots_freed() {
    // DRAM 1 page, NVM 2 slots, one app. Every swap-out enters NVM; LRU demotes.
    let mut s = Sim::new(config("hierarchical-lru", 1, 2, SlotOnSwapIn::Free));
    assert_eq!(s.read(1), "");
    assert_eq!(s.read(2), "nvm write 1 swap-out");
    assert_eq!(s.read(3), "nvm write 2 swap-out");
    // LRU [2 1]: 3 needs a slot, 1 (least recent) moves down to flash.
    assert_eq!(
        s.read(4),
        "nvm read 1 demote; flash write 1 demote; nvm write 3 swap-out"
    );
    assert_eq!(s.nvm(), vec![(3, false), (2, false)]);
    // 3 faults: 4 goes out (2 demoted to make room), then 3 is read from NVM and freed.
    assert_eq!(
        s.read(3),
        "nvm read 2 demote; flash write 2 demote; nvm write 4 swap-out; nvm read 3 swap-in"
    );
    // LRU [4]; 1 and 2 in flash.
    assert_eq!(s.nvm(), vec![(4, false)]);
    // 1 faults from flash: 3 enters NVM (room), 1 is read from flash straight to DRAM.
    assert_eq!(s.read(1), "nvm write 3 swap-out; flash read 1 swap-in");
    assert_eq!(s.places(&[1, 2, 3, 4]), vec![Dram, FLASH, NVM, NVM]);
    assert_eq!(s.nvm().iter().map(|e| e.0).collect::<Vec<_>>(), vec![3, 4]);
}

#[test]
fn hierarchical_clock_refills_nvm_when_slots_are_kept() {
    // DRAM 1, NVM 2. Ring listed from the hand as page(bit).
    let mut s = Sim::new(config("hierarchical-clock", 1, 2, SlotOnSwapIn::Keep));
    s.read(1);
    assert_eq!(s.read(2), "nvm write 1 swap-out");
    assert_eq!(s.read(3), "nvm write 2 swap-out");
    // Ring 1(0) 2(0): the hand takes 1 at once; 3 takes its frame, the hand moves past.
    assert_eq!(
        s.read(4),
        "nvm read 1 demote; flash write 1 demote; nvm write 3 swap-out"
    );
    assert_eq!(s.nvm(), vec![(2, false), (3, false)]);
    // 1 faults: 4 goes out (2 demoted), 1 is read from flash and goes back through NVM:
    // its flash slot is freed and its DRAM copy written to NVM (3 demoted for room).
    assert_eq!(
        s.read(1),
        "nvm read 2 demote; flash write 2 demote; nvm write 4 swap-out; flash read 1 swap-in; \
         nvm read 3 demote; flash write 3 demote; nvm write 1 promote"
    );
    // Ring 4(0) 1(0); 1 is in DRAM and keeps its NVM slot.
    assert_eq!(s.nvm(), vec![(4, false), (1, false)]);
    assert_eq!(s.places(&[1, 2, 3, 4]), vec![Dram, FLASH, FLASH, NVM]);
    assert_eq!(s.slot(1), Some(SwapDevice::Nvm));
    // 4 faults: 1 is clean (its slot holds its data), so it leaves DRAM with no write.
    assert_eq!(s.read(4), "nvm read 4 swap-in");
    // Ring 4(1) 1(0).
    assert_eq!(s.nvm(), vec![(4, true), (1, false)]);
    assert_eq!(s.places(&[1, 4]), vec![NVM, Dram]);
    // 4 is written, then 2 faults: 4 is dirty and rewritten in its slot; 2 comes from
    // flash into NVM: the hand spares 4 (clearing its bit) and demotes 1.
    assert_eq!(s.write(4), "");
    assert_eq!(
        s.read(2),
        "nvm write 4 swap-out; flash read 2 swap-in; nvm read 1 demote; flash write 1 demote; \
         nvm write 2 promote"
    );
    assert_eq!(s.nvm(), vec![(4, false), (2, false)]);
    let m = s.finish();
    assert_eq!((m.swap_outs, m.clean_swap_outs), (6, 1));
    assert_eq!((m.io.promotions, m.io.demotions), (2, 4));
}

#[test]
fn parallel_clock_leaves_flash_pages_in_flash() {
    // DRAM 1, NVM 1, slots kept: the same start as hierarchical swap, but a fault served
    // by flash does not move the page.
    let mut s = Sim::new(config("parallel-clock", 1, 1, SlotOnSwapIn::Keep));
    s.read(1);
    assert_eq!(s.read(2), "nvm write 1 swap-out");
    assert_eq!(
        s.read(3),
        "nvm read 1 demote; flash write 1 demote; nvm write 2 swap-out"
    );
    assert_eq!(
        s.read(1),
        "nvm read 2 demote; flash write 2 demote; nvm write 3 swap-out; flash read 1 swap-in"
    );
    // 1 is in DRAM, its copy stays in flash.
    assert_eq!(s.slot(1), Some(SwapDevice::Flash));
    // 2 faults: clean 1 leaves DRAM with no write, back to its flash copy.
    assert_eq!(s.read(2), "flash read 2 swap-in");
    assert_eq!(s.places(&[1, 2, 3]), vec![FLASH, Dram, NVM]);
    // 2 is written; 1 faults: dirty 2 goes to NVM (its stale flash slot freed, 3 demoted).
    s.write(2);
    assert_eq!(
        s.read(1),
        "nvm read 3 demote; flash write 3 demote; nvm write 2 swap-out; flash read 1 swap-in"
    );
    assert_eq!(s.places(&[1, 2, 3]), vec![Dram, NVM, FLASH]);
    assert_eq!(s.machine.swap().flash_used(), 2);
}

#[test]
fn parallel_filtered_with_slots_freed() {
    // DRAM 1, NVM 1. The bit is each page's history.
    let mut s = Sim::new(config("parallel-filtered", 1, 1, SlotOnSwapIn::Free));
    s.read(1);
    // First swap-outs go to flash.
    assert_eq!(s.read(2), "flash write 1 swap-out");
    // 1's first swap-in: bit 0 -> 1; single-access so far, so its next swap-out is flash.
    assert_eq!(s.read(1), "flash write 2 swap-out; flash read 1 swap-in");
    assert_eq!(s.read(2), "flash write 1 swap-out; flash read 2 swap-in");
    // 1's second swap-in from flash finds its bit set: multi-access, promoted.
    assert_eq!(s.read(1), "flash write 2 swap-out; flash read 1 swap-in");
    // The promotion takes effect at 1's next swap-out: it enters NVM.
    assert_eq!(s.read(2), "nvm write 1 swap-out; flash read 2 swap-in");
    assert_eq!(s.nvm(), vec![(1, true)]);
    // 2 is multi-access too; NVM is full: the hand clears 1's bit, comes round, demotes 1.
    assert_eq!(
        s.read(3),
        "nvm read 1 demote; flash write 1 demote; nvm write 2 swap-out"
    );
    assert_eq!(s.nvm(), vec![(2, true)]);
    // 3 was never swapped in: flash. 1 lost its bit to the hand: single-access again.
    assert_eq!(s.read(1), "flash write 3 swap-out; flash read 1 swap-in");
    assert_eq!(s.read(3), "flash write 1 swap-out; flash read 3 swap-in");
    assert_eq!(s.places(&[1, 2, 3]), vec![FLASH, NVM, Dram]);
    let m = s.finish();
    assert_eq!((m.io.nvm_writes, m.io.demotions), (2, 1));
    // Pages 1, 2, 3 swapped in 3, 2 and 1 times: 1 of 6 swap-ins is single-access.
    assert_eq!((m.swap_ins, m.single_access_pages), (6, 1));
}

#[test]
fn parallel_filtered_with_slots_kept() {
    // DRAM 1, NVM 1. The bit belongs to the slot; promotion happens at the swap-in.
    let mut s = Sim::new(config("parallel-filtered", 1, 1, SlotOnSwapIn::Keep));
    s.read(1);
    assert_eq!(s.read(2), "flash write 1 swap-out");
    // 1 swapped in, its flash slot kept with the bit set.
    assert_eq!(s.read(1), "flash write 2 swap-out; flash read 1 swap-in");
    assert_eq!(
        (s.slot(1), s.machine.swap().is_accessed(1)),
        (Some(SwapDevice::Flash), true)
    );
    // Clean 1 leaves DRAM with no write; 2 read, bit set.
    assert_eq!(s.read(2), "flash read 2 swap-in");
    // 1's slot bit is set: promoted to NVM at this swap-in (clean 2 leaves for free).
    assert_eq!(s.read(1), "flash read 1 swap-in; nvm write 1 promote");
    assert_eq!(s.nvm(), vec![(1, false)]);
    // 2 is promoted too; the new slot of 1 has a clear bit, so the hand demotes it.
    assert_eq!(
        s.read(2),
        "flash read 2 swap-in; nvm read 1 demote; flash write 1 demote; nvm write 2 promote"
    );
    assert_eq!(s.places(&[1, 2]), vec![FLASH, Dram]);
    let m = s.finish();
    assert_eq!((m.swap_outs, m.clean_swap_outs), (5, 3));
    assert_eq!(m.io.promotions, 2);
}

#[test]
fn nvm_of_zero_pages_is_flash_only_swap() {
    for architecture in [
        "hierarchical-lru",
        "hierarchical-clock",
        "parallel-clock",
        "parallel-filtered",
    ] {
        for slot in [SlotOnSwapIn::Free, SlotOnSwapIn::Keep] {
            let mut s = Sim::new(config(architecture, 1, 0, slot));
            s.read(1);
            s.write(2);
            assert_eq!(
                s.read(1),
                "flash write 2 swap-out; flash read 1 swap-in",
                "{architecture} {slot:?}"
            );
            assert_eq!(s.machine.swap().nvm_used(), 0);
        }
    }
}

#[test]
fn no_swap_kills_the_least_important_app_and_never_the_foreground() {
    // DRAM 3; apps 0 (launched, then adj 900), 1 (700) and 2 in the foreground.
    let mut s = Sim::new(config("none", 3, 0, SlotOnSwapIn::Free));
    s.adj(0, 0);
    s.adj(0, 900);
    s.adj(1, 700);
    s.adj(2, 0);
    s.access(0, 10, false);
    s.access(1, 20, false);
    s.access(2, 30, false);
    // DRAM full: the killer takes app 0, the least important.
    assert_eq!(s.access(2, 31, false), "");
    assert_eq!(s.places(&[10, 20, 30, 31]), vec![NOWHERE, Dram, Dram, Dram]);
    // Then app 1.
    s.access(2, 32, false);
    assert_eq!(s.places(&[20]), vec![NOWHERE]);
    // Only the foreground app is left: its coldest page, 30, is dropped.
    s.access(2, 33, false);
    assert_eq!(s.places(&[30, 31, 32, 33]), vec![NOWHERE, Dram, Dram, Dram]);
    // Touching 30 again allocates it afresh (and drops 31).
    s.access(2, 30, false);
    // App 0 comes back to the foreground: a cold start, since it was killed.
    s.adj(2, 700);
    s.adj(0, 0);
    // An app never kills itself to serve its own access: app 2 (700) touches a page while
    // app 0 is in the foreground and DRAM is full of app 2's pages: one of them is dropped.
    s.access(2, 34, false);
    let m = s.finish();
    assert_eq!((m.kills, m.dropped_pages), (2, 3));
    assert_eq!(
        (m.first_launches, m.cold_starts, m.warm_launches),
        (2, 1, 0)
    );
    assert_eq!(m.launch_mean_ms, 1500.0);
    assert_eq!(m.fresh_allocations, 8);
}

#[test]
fn exit_frees_memory_and_swap() {
    // DRAM 1, flash swap; app 1 exits with a page in DRAM and one in flash.
    let mut s = Sim::new(config("flash", 1, 0, SlotOnSwapIn::Free));
    s.adj(1, 0);
    s.access(1, 1, true);
    assert_eq!(s.access(1, 2, true), "flash write 1 swap-out");
    assert_eq!(s.event(Event::exit(s.now, 1)), "");
    assert_eq!(s.places(&[1, 2]), vec![NOWHERE, NOWHERE]);
    assert_eq!(s.machine.swap().flash_used(), 0);
    assert_eq!(s.machine.resident_pages(), 0);
    // It is launched again: cold; its pages are fresh allocations.
    s.adj(1, 900);
    s.adj(1, 0);
    assert_eq!(s.access(1, 1, false), "");
    let m = s.finish();
    assert_eq!((m.exits, m.cold_starts, m.swap_ins), (1, 1, 0));
}

#[test]
fn zram_pool_shrinks_dram_and_fills_up_to_the_killer() {
    // DRAM 4 frames, pool of 2 pages (8192 bytes), every page compresses to 1639 bytes.
    let mut config = config("zram", 4, 0, SlotOnSwapIn::Free);
    config.zram.pool_pages = 2;
    config.devices.zram.incompressible_share = 0.0;
    let mut s = Sim::new(config);
    s.adj(0, 900);
    s.adj(1, 0);
    s.access(0, 10, false);
    s.access(0, 11, false);
    s.access(1, 1, false);
    s.access(1, 2, false);
    // DRAM full. App 0's pages go first; after 10 the pool takes 1 frame, so 3 pages + 1
    // frame are still 4: 11 goes too (2 pages in 3278 bytes, still 1 frame).
    assert_eq!(
        s.access(1, 3, false),
        "zram write 10 swap-out; zram write 11 swap-out"
    );
    assert_eq!((s.machine.resident_pages(), s.machine.dram_used()), (3, 4));
    // App 0 has nothing left in DRAM: the foreground's coldest pages go; 4917 bytes take
    // 2 frames, so 2 must go.
    assert_eq!(
        s.access(1, 4, false),
        "zram write 1 swap-out; zram write 2 swap-out"
    );
    assert_eq!(s.machine.swap().pool_bytes(), 4 * 1639);
    // 3 does not fit (8195 > 8192 bytes): the killer takes app 0, freeing 10 and 11 from
    // the pool, which leaves room.
    assert_eq!(s.access(1, 5, false), "");
    assert_eq!(
        s.places(&[10, 11, 1, 2, 3]),
        vec![NOWHERE, NOWHERE, Zram, Zram, Dram]
    );
    // 1 faults: DRAM holds 3 and 5 plus 1 pool frame, full: 3 and then 4 are compressed
    // (the pool grows to 2 frames), then 1 is decompressed and its pool bytes freed.
    assert_eq!(
        s.access(1, 1, false),
        "zram write 3 swap-out; zram write 4 swap-out; zram read 1 swap-in"
    );
    assert_eq!(
        s.places(&[1, 2, 3, 4, 5]),
        vec![Dram, Zram, Zram, Zram, Dram]
    );
    assert_eq!(s.machine.dram_used(), 4);
    let m = s.finish();
    assert_eq!((m.kills, m.swap_ins), (1, 1));
    assert_eq!((m.io.zram_compressions, m.io.zram_decompressions), (6, 1));
    // 6 compressions at 10 us + 1 decompression at 3 us.
    assert_eq!(m.zram_cpu_ns, 63_000.0);
}

#[test]
fn zram_writeback_spends_a_daily_budget() {
    // DRAM 4, pool 2 pages, everything idle at once, one writeback a day.
    let mut config = config("zram-writeback", 4, 0, SlotOnSwapIn::Free);
    config.zram.pool_pages = 2;
    config.zram.idle_age_ns = 0;
    config.zram.writeback_limit_pages_per_day = 1;
    config.devices.zram.incompressible_share = 0.0;
    let mut s = Sim::new(config);
    s.adj(0, 0);
    for page in 1..=4 {
        s.read(page);
    }
    assert_eq!(s.read(5), "zram write 1 swap-out; zram write 2 swap-out");
    assert_eq!(s.read(6), "zram write 3 swap-out; zram write 4 swap-out");
    // Pool 6556 bytes: 5 does not fit. The oldest pool page, 1, is written back.
    assert_eq!(
        s.read(7),
        "zram read 1 writeback; flash write 1 writeback; zram write 5 swap-out"
    );
    assert_eq!(s.places(&[1, 5]), vec![FLASH, Zram]);
    // The budget is spent: 6 cannot go anywhere, and app 0 is the foreground: dropped.
    assert_eq!(s.read(8), "");
    assert_eq!(s.places(&[6]), vec![NOWHERE]);
    // A day later the budget is back: 2 goes to flash so 7 fits; 1 is read from flash.
    s.at(86_400_000_000_000);
    assert_eq!(
        s.read(1),
        "zram read 2 writeback; flash write 2 writeback; zram write 7 swap-out; \
         flash read 1 swap-in"
    );
    assert_eq!(s.places(&[1, 2, 7]), vec![Dram, FLASH, Zram]);
    let m = s.finish();
    assert_eq!((m.io.writebacks, m.dropped_pages), (2, 1));
}

#[test]
fn warm_launch_time_adds_fault_reads() {
    // DRAM 2, flash swap. App 0 runs, app 1 pushes it out, app 0 comes back warm.
    let run = |charge: bool| {
        let mut config = config("flash", 2, 0, SlotOnSwapIn::Free);
        config.launch.charge_reclaim_writes = charge;
        let mut s = Sim::new(config);
        s.adj(0, 0);
        s.access(0, 1, true);
        s.access(0, 2, true);
        s.at(10_000_000_000);
        s.adj(0, 700);
        s.adj(1, 0);
        s.access(1, 3, true);
        s.access(1, 4, true);
        // Launch of app 0 at 20 s: two faults from flash, each evicting a page of app 1.
        s.at(20_000_000_000);
        s.adj(1, 700);
        s.adj(0, 0);
        s.access(0, 1, false);
        s.access(0, 2, false);
        // After the 1 s window: not part of the launch.
        s.at(22_000_000_000);
        s.access(0, 3, false);
        s.finish()
    };
    let m = run(false);
    assert_eq!((m.first_launches, m.warm_launches), (2, 1));
    // 300 ms + 2 x 100 us.
    assert_eq!(m.launch_mean_ms, 300.2);
    assert_eq!(m.launch_faults, 2);
    assert_eq!(m.per_app.len(), 2);
    assert_eq!(
        (m.per_app[0].warm_launches, m.per_app[0].mean_ms),
        (1, 300.2)
    );
    assert!(
        m.per_app[1].mean_ms.is_nan(),
        "app 1 was only launched once"
    );
    // Charging direct reclaim adds the two 150 us writes.
    assert!((run(true).launch_mean_ms - 300.5).abs() < 1e-9);
}

#[test]
fn reclaim_order_by_importance_or_global_lru() {
    // DRAM 2. App 0 (900) touches 1; the foreground app 1 touches 2; app 0 touches 1
    // again, so 2 is the coldest page of all, but 1 belongs to the less important app.
    let victim = |order: ReclaimOrder| {
        let mut config = config("flash", 2, 0, SlotOnSwapIn::Free);
        config.reclaim = order;
        let mut s = Sim::new(config);
        s.adj(0, 900);
        s.adj(1, 0);
        s.access(0, 1, false);
        s.access(1, 2, false);
        s.access(0, 1, false);
        s.access(1, 3, false)
    };
    assert_eq!(
        victim(ReclaimOrder::AppImportance),
        "flash write 1 swap-out"
    );
    assert_eq!(victim(ReclaimOrder::GlobalLru), "flash write 2 swap-out");
}

#[test]
fn file_accesses_are_left_to_the_page_cache() {
    let mut s = Sim::new(config("flash", 1, 0, SlotOnSwapIn::Free));
    s.event(Event::access(0, 0, 1, false, false));
    s.event(Event::access(0, 0, 2, true, false));
    assert_eq!(s.machine.resident_pages(), 0);
    let m = s.finish();
    assert_eq!((m.accesses, m.ignored_accesses), (0, 2));
}
