//! Deduplicators the phone's dedup slot can name, and their registry: a new variant is
//! its file (or a function here) plus one entry of [`DEDUP_VARIANTS`].
//!
//! A deduplicator is a daemon on the phone's memory: the phone wakes it on the event
//! loop's timer every [`Deduplicator::sleep_ns`], hands it a store to a page it merged
//! ([`Deduplicator::write_fault`]), and asks it for the CPU time it spent. What it
//! merges is the memory's state (`Memory::map_shared`, `unmerge`): the MERGED flag,
//! the shared frame and the merged content live in the page table, and a process's exit
//! or kill frees its mappings through `Memory::discard`.

use super::{KsmParams, Ksmd, MergeOrder, Population, ScanCosts};
use crate::core::memory::Memory;
use crate::core::registry::Registry;
use crate::mm::reclaim::Machine;
use crate::trace::PageId;
use crate::Result;

/// What the phone asks of a deduplicator.
///
/// Contract: `wake` changes only pages in memory and leaves the memory's invariants
/// whole (`Memory::check` holds after it); `write_fault` on a merged page leaves it
/// unmerged (not MERGED, with no frame of its own: the phone faults one in next);
/// `audit` says whether the deduplicator's own records agree with the memory.
pub trait Deduplicator {
    /// Time between the end of one wake-up and the next, ns.
    fn sleep_ns(&self) -> u64;

    /// Wake at `now_ns` and do one batch of work on `mem`; returns the CPU time it took,
    /// ns.
    fn wake(&mut self, mem: &mut Machine, now_ns: u64) -> Result<f64>;

    /// A store to `page`, which is merged: break the sharing (copy on write). Returns
    /// whether the page was merged.
    fn write_fault(&mut self, mem: &mut Machine, page: PageId) -> bool;

    /// CPU time spent so far, ns.
    fn cpu_ns(&self, mem: &Memory) -> f64;

    /// Check the deduplicator's records against `mem`.
    fn audit(&self, mem: &Memory) -> std::result::Result<(), String>;
}

impl Deduplicator for Ksmd<'_> {
    fn sleep_ns(&self) -> u64 {
        self.params().sleep_ns()
    }

    fn wake(&mut self, mem: &mut Machine, now_ns: u64) -> Result<f64> {
        Ksmd::wake(self, mem, now_ns)
    }

    fn write_fault(&mut self, mem: &mut Machine, page: PageId) -> bool {
        Ksmd::write_fault(self, mem, page)
    }

    fn cpu_ns(&self, _: &Memory) -> f64 {
        self.cpu_ns_so_far()
    }

    fn audit(&self, mem: &Memory) -> std::result::Result<(), String> {
        Ksmd::audit(self, mem)
    }
}

/// Builds a deduplicator over the pages of `population` with the file's KSM tunables
/// (`[dedup.ksm]`, already scaled to the phone).
pub type BuildDedup = for<'a> fn(&'a Population, &KsmParams) -> Box<dyn Deduplicator + 'a>;

crate::registry_entry! {
    /// A registered deduplicator.
    pub struct DedupInfo {
        pub build: BuildDedup,
    }
}

/// ksmd with the file's tunables as they are.
fn ksm<'a>(population: &'a Population, params: &KsmParams) -> Box<dyn Deduplicator + 'a> {
    Box::new(Ksmd::new(population, params, &ScanCosts::default()))
}

/// ksmd as Linux 6.11 and later run it: smart scan (6.7+, on by default there) skips
/// pages that failed to merge several scans running, and the checksum test comes before
/// the stable tree (6.11). The file's other tunables stand.
fn ksm_6_11<'a>(population: &'a Population, params: &KsmParams) -> Box<dyn Deduplicator + 'a> {
    let params = KsmParams {
        smart_scan: true,
        merge_order: MergeOrder::ChecksumFirst,
        ..params.clone()
    };
    Box::new(Ksmd::new(population, &params, &ScanCosts::default()))
}

/// Every deduplicator the phone can run (besides `off`).
pub static DEDUP_VARIANTS: Registry<DedupInfo> = Registry::new(
    "dedup variant",
    &[
        DedupInfo {
            name: "ksm",
            summary: "ksmd with the [dedup.ksm] tunables (kernel 3.4's scan by default, as the Android KSM paper ran)",
            build: ksm,
        },
        DedupInfo {
            name: "ksm-6.11",
            summary: "ksmd as Linux 6.11 runs it: smart scan on, the checksum test before the stable tree",
            build: ksm_6_11,
        },
    ],
);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mm::dedup::PageContent;
    use crate::mm::reclaim::ReclaimConfig;

    /// Two processes with the same 8 pages: every variant merges them on the machine's
    /// memory and keeps the contract: the memory's invariants hold, its audit passes,
    /// a write fault unmerges.
    #[test]
    fn every_variant_merges_on_the_machine_and_keeps_its_contract() {
        let mut pop = Population::default();
        for p in 0..2 {
            let pages = (0..8).map(|i| PageContent::constant(1000 + i)).collect();
            pop.push_process(&format!("p{p}"), 0, vec![("heap".into(), pages)])
                .unwrap();
        }
        for info in DEDUP_VARIANTS {
            let config = ReclaimConfig {
                memory_pages: 512,
                reserved_pages: 8,
                ..ReclaimConfig::default()
            };
            let mut m = Machine::new(&config, pop.pages.len(), 2).unwrap();
            for page in 0..pop.pages.len() as PageId {
                let proc = page / 8;
                m.access(page, proc, true, true).unwrap();
            }
            let params = KsmParams {
                pages_to_scan: 100,
                ..KsmParams::default()
            };
            let mut d = (info.build)(&pop, &params);
            let mut t = 0;
            for _ in 0..6 {
                let cpu = d.wake(&mut m, t).unwrap();
                assert!(cpu > 0.0, "{}", info.name);
                t += d.sleep_ns();
                m.check().unwrap_or_else(|e| panic!("{}: {e}", info.name));
                d.audit(&m.mem)
                    .unwrap_or_else(|e| panic!("{}: {e}", info.name));
            }
            assert_eq!(m.mem.merged_pages(), 16, "{}: every page merged", info.name);
            assert!(d.write_fault(&mut m, 3), "{}", info.name);
            assert!(!m.mem.is_merged(3), "{}", info.name);
            d.audit(&m.mem)
                .unwrap_or_else(|e| panic!("{}: {e}", info.name));
            assert!(d.cpu_ns(&m.mem) > 0.0);
        }
    }
}
