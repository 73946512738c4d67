//! ksmd's tunables (the files of `/sys/kernel/mm/ksm/`, Documentation/admin-guide/mm/ksm.rst)
//! and the cost model of a scan. Every field has a default; a TOML file states only what
//! it changes, unknown fields are errors.

use serde::{Deserialize, Serialize};

use crate::{Error, Result};

/// `advisor_mode`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum AdvisorMode {
    /// `pages_to_scan` is what the user set.
    #[default]
    None,
    /// `pages_to_scan` is retuned after every full scan toward a target scan time.
    ScanTime,
}

/// What `cmp_and_merge_page` (mm/ksm.c) tries first for a page not yet merged.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum MergeOrder {
    /// Kernels up to 6.10, the paper's 3.4 among them: the stable tree is searched
    /// first, so a page like a KSM page merges the first time ksmd sees it; only then
    /// the checksum test, the zero page (`use_zero_pages`) and the unstable tree.
    #[default]
    StableTreeFirst,
    /// Kernels 6.11 and later ("mm/ksm: don't waste time searching stable tree for fast
    /// changing page", 2024): the checksum test and the zero page come first, then the
    /// stable tree, then the unstable tree. A page is merged at its second look at the
    /// earliest, into a KSM page as into a new one.
    ChecksumFirst,
}

impl MergeOrder {
    pub const ALL: [MergeOrder; 2] = [MergeOrder::StableTreeFirst, MergeOrder::ChecksumFirst];

    /// The order of a kernel version (major, minor).
    pub fn of_kernel(version: (u32, u32)) -> Self {
        if version >= (6, 11) {
            MergeOrder::ChecksumFirst
        } else {
            MergeOrder::StableTreeFirst
        }
    }

    pub fn name(&self) -> &'static str {
        match self {
            MergeOrder::StableTreeFirst => "stable-tree-first",
            MergeOrder::ChecksumFirst => "checksum-first",
        }
    }
}

impl std::str::FromStr for MergeOrder {
    type Err = String;
    fn from_str(s: &str) -> std::result::Result<Self, String> {
        Error::find_named("merge order", s, &Self::ALL, Self::name).map_err(|e| e.to_string())
    }
}

/// The tunables of ksmd, with the kernel's defaults (mm/ksm.c, 6.x).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct KsmParams {
    /// Pages scanned per wake-up (default 100).
    pub pages_to_scan: u32,
    /// Sleep between wake-ups, ms (default 20).
    pub sleep_millisecs: u32,
    /// Most pages that may share one KSM page (default 256); more copies of one content
    /// get a further KSM page (a "dup" of a "stable node chain").
    pub max_page_sharing: u32,
    /// Merge pages of zeros with the kernel's zero page (counted in `ksm_zero_pages`).
    pub use_zero_pages: bool,
    /// Skip pages that failed to merge several scans running (kernel 6.7+; on by default
    /// there, off here: the paper's kernel 3.4 had no such thing).
    pub smart_scan: bool,
    pub advisor_mode: AdvisorMode,
    /// Target time of a full scan for the scan-time advisor, seconds (default 200).
    pub advisor_target_scan_time: u64,
    /// The advisor's bounds on `pages_to_scan` (defaults 500 and 30000).
    pub advisor_min_pages_to_scan: u64,
    pub advisor_max_pages_to_scan: u64,
    /// The advisor's CPU cap, % of one core (default 70).
    pub advisor_max_cpu: u64,
    /// Timer frequency: a sleep is rounded up to whole ticks of 1/hz s, as
    /// `msecs_to_jiffies` does.
    pub hz: u32,
    /// Ticks a sleep lasts beyond the ticks asked for: the timer wheel of kernels 4.8+
    /// queues a timer one tick of granularity later so that it never fires early (1);
    /// older kernels' wheel fired at the tick asked for (0).
    pub extra_ticks: u32,
    /// The order of the tests of `cmp_and_merge_page`: kernel 3.4's by default (the
    /// paper's), 6.11's as an option.
    pub merge_order: MergeOrder,
}

impl Default for KsmParams {
    fn default() -> Self {
        KsmParams {
            pages_to_scan: 100,
            sleep_millisecs: 20,
            max_page_sharing: 256,
            use_zero_pages: false,
            smart_scan: false,
            advisor_mode: AdvisorMode::None,
            advisor_target_scan_time: 200,
            advisor_min_pages_to_scan: 500,
            advisor_max_pages_to_scan: 30_000,
            advisor_max_cpu: 70,
            hz: 1000,
            extra_ticks: 1,
            merge_order: MergeOrder::StableTreeFirst,
        }
    }
}

impl KsmParams {
    pub fn validate(&self) -> Result<()> {
        let bad = |m: &str| Err(Error::config("ksm parameters", m.to_string()));
        if self.pages_to_scan == 0 && self.advisor_mode == AdvisorMode::None {
            return bad("pages_to_scan must be at least 1");
        }
        if self.max_page_sharing < 2 {
            return bad("max_page_sharing must be at least 2 (as in the kernel)");
        }
        if self.hz == 0 {
            return bad("hz must be at least 1");
        }
        if self.advisor_mode == AdvisorMode::ScanTime
            && (self.advisor_min_pages_to_scan == 0
                || self.advisor_min_pages_to_scan > self.advisor_max_pages_to_scan
                || self.advisor_max_cpu == 0
                || self.advisor_target_scan_time == 0)
        {
            return bad("advisor: need 0 < min_pages_to_scan <= max_pages_to_scan, max_cpu > 0, target_scan_time > 0");
        }
        Ok(())
    }

    /// The sleep between wake-ups, ns, rounded up to whole timer ticks.
    pub fn sleep_ns(&self) -> u64 {
        let tick_ns = 1_000_000_000u64 / self.hz as u64;
        let ns = self.sleep_millisecs as u64 * 1_000_000;
        (ns.div_ceil(tick_ns) + self.extra_ticks as u64) * tick_ns
    }
}

/// CPU time of ksmd's work per page and the size of its metadata.
///
/// Defaults model a Cortex-A15 at 1.7 GHz (the paper's Nexus 10) and are assumptions,
/// stated in docs/ksm.md: a 4 KiB checksum at about 1 byte per cycle (jhash2 in kernel
/// 3.4, xxhash now), a tree step as a `memcmp` that usually stops in the first cache
/// lines, a merge as write-protecting two PTEs with a TLB flush and rmap work; a page
/// that is only visited and checksummed costs 3.5 us. On this project's x86 test machine
/// (kernel 6.18) `mobmem ksm-validate` measured the real ksmd at 1.3-1.4 us per scanned
/// page (docs/ksm.md), and calibrates its own simulation to that measurement.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ScanCosts {
    /// Walking to a page and looking it up (follow_page, rmap item), ns.
    pub visit_ns: f64,
    /// Checksum of one page, ns.
    pub checksum_ns: f64,
    /// One step down the stable or unstable tree (a page compare), ns.
    pub compare_ns: f64,
    /// Merging a page into a KSM page, ns.
    pub merge_ns: f64,
    /// Passing over a page smart_scan skips, ns.
    pub skip_ns: f64,
    /// sizeof(struct ksm_rmap_item) on 64-bit kernels.
    pub rmap_item_bytes: u64,
    /// sizeof(struct ksm_stable_node) on 64-bit kernels.
    pub stable_node_bytes: u64,
}

impl Default for ScanCosts {
    fn default() -> Self {
        ScanCosts {
            visit_ns: 1_000.0,
            checksum_ns: 2_500.0,
            compare_ns: 300.0,
            merge_ns: 8_000.0,
            skip_ns: 200.0,
            rmap_item_bytes: 64,
            stable_node_bytes: 64,
        }
    }
}

impl ScanCosts {
    pub fn validate(&self) -> Result<()> {
        for (name, v) in crate::fields!(self; visit_ns, checksum_ns, compare_ns, merge_ns, skip_ns)
        {
            if !(v.is_finite() && v >= 0.0) {
                return Err(Error::config(
                    "ksm costs",
                    format!("{name} must be a number >= 0"),
                ));
            }
        }
        Ok(())
    }
}
