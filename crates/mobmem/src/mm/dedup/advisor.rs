//! The scan-time advisor (`advisor_mode = scan-time`, kernel 6.8+, `scan_time_advisor`
//! in mm/ksm.c): after every full scan, `pages_to_scan` is rescaled toward the value
//! that would make a full scan take `advisor_target_scan_time` seconds, smoothed by the
//! change of the scan time (an exponentially weighted average, weight 30%), capped by
//! ksmd's CPU use (at most `advisor_max_cpu` %, at least 10 % of one core's worth of
//! pages) and by `advisor_max_pages_to_scan`. The kernel's integer arithmetic is kept,
//! including scan times in whole seconds (at least 1).

use super::config::KsmParams;

/// Weight of the newest scan-time change, % (`EWMA_WEIGHT`).
const EWMA_WEIGHT: u64 = 30;
/// The advisor's CPU floor, % (`KSM_ADVISOR_MIN_CPU`).
const MIN_CPU: u64 = 10;

/// The kernel's `advisor_ctx`.
#[derive(Debug, Clone, Default)]
pub struct Advisor {
    start_ns: u64,
    /// ksmd CPU time at the last advice, ms.
    cpu_ms: u64,
    /// Last full scan's time, s (0: none yet).
    scan_time_s: u64,
    /// Smoothed change of the scan time, %.
    change: u64,
}

impl Advisor {
    pub fn start_scan(&mut self, now_ns: u64, _cpu_ns: f64) {
        self.start_ns = now_ns;
    }

    /// Called at the end of a full scan; returns the new `pages_to_scan`.
    pub fn stop_scan(
        &mut self,
        now_ns: u64,
        cpu_ns: f64,
        pages_to_scan: u64,
        params: &KsmParams,
    ) -> u64 {
        let scan_time = ((now_ns - self.start_ns) / 1_000_000_000).max(1);
        let cpu_ms = (cpu_ns / 1e6) as u64;
        let cpu_diff_ms = cpu_ms.saturating_sub(self.cpu_ms);
        let cpu_percent = (cpu_diff_ms * 100 / (scan_time * 1000)).max(1);
        let last_scan_time = if self.scan_time_s > 0 {
            self.scan_time_s
        } else {
            scan_time
        };
        let factor = (params.advisor_target_scan_time * 100 / scan_time).max(1);
        let change = (scan_time * 100 / last_scan_time).max(1);
        let change = ((100 - EWMA_WEIGHT) * self.change + EWMA_WEIGHT * change) / 100;
        let mut pages = pages_to_scan * 100 / factor;
        pages = pages * change / 100;
        let per_page_cost = (pages_to_scan / cpu_percent).max(1);
        pages = pages.min(per_page_cost * params.advisor_max_cpu);
        pages = pages.max(per_page_cost * MIN_CPU);
        pages = pages.min(params.advisor_max_pages_to_scan);
        self.change = change;
        self.scan_time_s = scan_time;
        self.cpu_ms = cpu_ms;
        pages
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Worked by hand from the kernel's formula: first advice after a 2 s scan that used
    /// 400 ms of CPU with pages_to_scan 500, target 200 s.
    #[test]
    fn first_advice_follows_the_kernel_arithmetic() {
        let params = KsmParams::default();
        let mut a = Advisor::default();
        a.start_scan(0, 0.0);
        // scan_time 2 s; cpu 400 ms -> 400*100/2000 = 20 %; factor 200*100/2 = 10000;
        // change = 2*100/2 = 100, ewma(0, 100) = 30; pages = 500*100/10000 = 5,
        // 5*30/100 = 1; per_page_cost = 500/20 = 25; min(1, 25*70) = 1;
        // max(1, 25*10) = 250; min(250, 30000) = 250.
        let pages = a.stop_scan(2_500_000_000, 400e6, 500, &params);
        assert_eq!(pages, 250);
        // Second scan: 1 s, 100 ms more CPU: cpu% = 100*100/1000 = 10; factor 20000;
        // change = 1*100/2 = 50 -> ewma(30, 50) = (70*30 + 30*50)/100 = 36;
        // pages = 250*100/20000 = 1 -> 0; per_page_cost = 25; max(0, 250) = 250.
        a.start_scan(3_000_000_000, 400e6);
        let pages = a.stop_scan(4_000_000_000, 500e6, 250, &params);
        assert_eq!(pages, 250);
    }

    #[test]
    fn a_short_target_raises_pages_to_scan_up_to_the_cpu_cap() {
        let params = KsmParams {
            advisor_target_scan_time: 1,
            ..KsmParams::default()
        };
        let mut a = Advisor::default();
        a.start_scan(0, 0.0);
        // 10 s scan, 1 s CPU: cpu% = 10; factor = 100*1/10 = 10; change ewma(0,100) = 30;
        // pages = 500*100/10 = 5000 -> 5000*30/100 = 1500; per_page_cost = 50;
        // min(1500, 3500) = 1500; max(1500, 500) = 1500.
        assert_eq!(a.stop_scan(10_000_000_000, 1e9, 500, &params), 1500);
    }
}
