//! The pages KSM scans: processes (the kernel's `mm_slot`s) in registration order, each
//! with its mergeable regions (VMAs), each a run of 4 KiB anonymous pages in address
//! order. Each page is a page of the memory ksmd merges in, named by its page id there
//! (the index of its page-table entry): by default the pages are numbered in scan
//! order, 0, 1, 2, ...; a population of a trace's pages names them by the trace's ids
//! ([`Population::push_process_at`]). A page's content is a 64-bit fingerprint (xxHash64 of its 4 KiB, or a
//! synthetic stand-in for one) that may change over time: periodically (a volatile page)
//! and once at a given time (a later write, e.g. a zero page filled by the heap).
//! Contents are functions of time, so a run needs no write events. A write puts data
//! in the page that no other page holds (its own index is mixed in), whatever the page
//! held before: pages that were zero or duplicates stop being alike once written.

use std::sync::OnceLock;

use serde::Serialize;

use crate::trace::PageId;
use crate::{Error, Result};

/// Bytes in a page.
pub const PAGE_BYTES: usize = 4096;
/// "Never" for [`PageContent::write_at_ns`].
pub const NEVER: u64 = u64::MAX;
/// What a page's rewrites mix in is derived from this plus the page's index (the
/// offset keeps the rewritten fingerprints of earlier versions).
const WRITER_BASE: u64 = 1 << 63;

/// Fingerprint of 4 KiB of page data: xxHash64, seed 0 (the kernel's KSM checksum is also
/// an xxHash of the page, `calc_checksum` in mm/ksm.c).
pub fn fingerprint(bytes: &[u8]) -> u64 {
    twox_hash::XxHash64::oneshot(0, bytes)
}

/// Fingerprint of a page of zeros.
pub fn zero_fingerprint() -> u64 {
    static ZERO: OnceLock<u64> = OnceLock::new();
    *ZERO.get_or_init(|| fingerprint(&[0u8; PAGE_BYTES]))
}

/// Synthetic fingerprints from integers ([`crate::core::mix64`]).
pub use crate::core::mix64 as mix;

/// What a page holds over time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct PageContent {
    /// Fingerprint until the first change.
    pub base: u64,
    /// The page is rewritten with new data every `period_ns` (0: never).
    pub period_ns: u64,
    /// Offset of the rewrites: they happen at times t with (t + phase) a multiple of the
    /// period.
    pub phase_ns: u64,
    /// One rewrite with new data at this time ([`NEVER`]: none).
    pub write_at_ns: u64,
    /// Mixed into every rewritten fingerprint, different for every page so that no two
    /// pages hold the same rewritten data: set from the page's index by
    /// [`Population::push_process`] (computed once rather than at every scan).
    #[serde(skip)]
    pub(super) write_salt: u64,
}

impl PageContent {
    pub fn constant(base: u64) -> Self {
        PageContent {
            base,
            period_ns: 0,
            phase_ns: 0,
            write_at_ns: NEVER,
            write_salt: 0,
        }
    }

    /// Fingerprint at time `t_ns`.
    pub fn at(&self, t_ns: u64) -> u64 {
        let mut generation = (t_ns + self.phase_ns)
            .checked_div(self.period_ns)
            .unwrap_or(0);
        if t_ns >= self.write_at_ns {
            generation += 1 << 40;
        }
        if generation == 0 {
            self.base
        } else {
            mix(self.base ^ mix(generation) ^ self.write_salt)
        }
    }
}

/// A mergeable region of one process.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Region {
    pub name: String,
    /// First page (index into [`Population::pages`], in scan order) and number of pages.
    pub first: usize,
    pub len: usize,
}

/// A process registered with KSM (an `mm_slot`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Process {
    pub name: String,
    /// Its pages exist (and are scanned) from this time on: an app's launch.
    pub start_ns: u64,
    pub regions: Vec<Region>,
}

/// Every page KSM may scan, in the kernel's scan order: process by process, region by
/// region, page by page.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Population {
    pub processes: Vec<Process>,
    /// The pages' contents, in scan order.
    pub pages: Vec<PageContent>,
    /// Process index of each page, in scan order.
    pub owner: Vec<u32>,
    /// The page id of each page in the memory, in scan order.
    #[serde(skip)]
    ids: Vec<PageId>,
    /// The scan-order index of each page id ([`NOT_SCANNED`] for a page of the memory
    /// that is not in the population).
    #[serde(skip)]
    index: Vec<u32>,
}

/// The index of a page id that is not in the population.
const NOT_SCANNED: u32 = u32::MAX;

impl Population {
    /// Append a process with its regions, each given as its name and page contents; its
    /// pages are numbered in scan order (the first page of the population is page 0).
    pub fn push_process(
        &mut self,
        name: &str,
        start_ns: u64,
        regions: Vec<(String, Vec<PageContent>)>,
    ) -> Result<()> {
        self.push(name, start_ns, regions, None)
    }

    /// Append a process with one region of pages of a memory, given as their page ids
    /// (distinct, and not in the population already) with their contents, in scan order.
    pub fn push_process_at(
        &mut self,
        name: &str,
        start_ns: u64,
        region: &str,
        pages: Vec<(PageId, PageContent)>,
    ) -> Result<()> {
        let (ids, contents): (Vec<PageId>, Vec<PageContent>) = pages.into_iter().unzip();
        self.push(
            name,
            start_ns,
            vec![(region.to_string(), contents)],
            Some(&ids),
        )
    }

    fn push(
        &mut self,
        name: &str,
        start_ns: u64,
        regions: Vec<(String, Vec<PageContent>)>,
        ids: Option<&[PageId]>,
    ) -> Result<()> {
        // Process indices are page-table owners: process ids (27 bits).
        if self.processes.len() > crate::trace::MAX_PROC_ID as usize {
            return Err(Error::config("ksm population", "too many processes"));
        }
        let pages: usize = regions.iter().map(|(_, contents)| contents.len()).sum();
        // Pages are page-table ids (u32), and the last two frame numbers are reserved.
        if self.pages.len() + pages > crate::core::pages::ZERO_FRAME as usize {
            return Err(Error::config(
                "ksm population",
                format!("more than {} pages", crate::core::pages::ZERO_FRAME),
            ));
        }
        let first = self.pages.len();
        let ids: Vec<PageId> = match ids {
            Some(ids) => ids.to_vec(),
            None => (first as PageId..(first + pages) as PageId).collect(),
        };
        debug_assert_eq!(ids.len(), pages);
        for (i, &id) in ids.iter().enumerate() {
            if id >= crate::core::pages::ZERO_FRAME {
                return Err(Error::config(
                    "ksm population",
                    format!("page id {id} is too large"),
                ));
            }
            if self.index.len() <= id as usize {
                self.index.resize(id as usize + 1, NOT_SCANNED);
            }
            if self.index[id as usize] != NOT_SCANNED {
                // Undo this process's pages so far: the population stays as it was.
                for &earlier in &ids[..i] {
                    self.index[earlier as usize] = NOT_SCANNED;
                }
                return Err(Error::config(
                    "ksm population",
                    format!("page {id} is in the population twice"),
                ));
            }
            self.index[id as usize] = (first + i) as u32;
        }
        self.ids.extend(ids);
        let index = self.processes.len() as u32;
        let mut out = Vec::new();
        for (region_name, contents) in regions {
            out.push(Region {
                name: region_name,
                first: self.pages.len(),
                len: contents.len(),
            });
            self.owner
                .extend(std::iter::repeat_n(index, contents.len()));
            for mut c in contents {
                c.write_salt = mix((WRITER_BASE + self.pages.len() as u64) ^ 0x5752_4954_4552);
                self.pages.push(c);
            }
        }
        self.processes.push(Process {
            name: name.to_string(),
            start_ns,
            regions: out,
        });
        Ok(())
    }

    /// The page id in the memory of the page at `i` in scan order.
    #[inline]
    pub fn id(&self, i: usize) -> PageId {
        self.ids[i]
    }

    /// The scan-order index of page `page`, if it is in the population.
    #[inline]
    pub fn index_of(&self, page: PageId) -> Option<usize> {
        match self.index.get(page as usize) {
            Some(&i) if i != NOT_SCANNED => Some(i as usize),
            _ => None,
        }
    }

    /// One more than the largest page id of the population (0 if empty): the size of
    /// a vector indexed by its page ids.
    pub fn id_space(&self) -> usize {
        self.index.len()
    }

    /// Pages of process `p`.
    pub fn pages_of(&self, p: usize) -> usize {
        self.processes[p].regions.iter().map(|r| r.len).sum()
    }

    /// Dedup potential at time `t_ns`: (zero, duplicate, unique) pages among the pages that
    /// exist then. A duplicate is every copy of a content beyond its first (the pages
    /// perfect merging would save, besides zero pages); zero pages are counted apart.
    pub fn potential(&self, t_ns: u64) -> Potential {
        let zero = zero_fingerprint();
        let mut fps: Vec<u64> = Vec::with_capacity(self.pages.len());
        let mut potential = Potential::default();
        for (i, c) in self.pages.iter().enumerate() {
            if self.processes[self.owner[i] as usize].start_ns > t_ns {
                continue;
            }
            let fp = c.at(t_ns);
            if fp == zero {
                potential.zero += 1;
            } else {
                fps.push(fp);
            }
        }
        fps.sort_unstable();
        let distinct = {
            let mut d = fps.clone();
            d.dedup();
            d.len() as u64
        };
        potential.pages = potential.zero + fps.len() as u64;
        potential.duplicate = fps.len() as u64 - distinct;
        potential.unique = distinct;
        potential
    }
}

/// What perfect deduplication could save in a set of pages.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Potential {
    pub pages: u64,
    /// Pages of zeros.
    pub zero: u64,
    /// Non-zero pages whose content another page already has (each saveable).
    pub duplicate: u64,
    /// Distinct non-zero contents (one page each must stay).
    pub unique: u64,
}

impl Potential {
    /// Pages that merging could free: every duplicate, and every zero page but one.
    pub fn saveable(&self) -> u64 {
        self.duplicate + self.zero.saturating_sub(1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn contents_change_at_their_period_and_write_time() {
        let c = PageContent {
            period_ns: 100,
            ..PageContent::constant(7)
        };
        assert_eq!(c.at(0), 7);
        assert_eq!(c.at(99), 7);
        assert_ne!(c.at(100), 7);
        assert_eq!(c.at(100), c.at(199));
        assert_ne!(c.at(200), c.at(100));
        let w = PageContent {
            write_at_ns: 50,
            ..PageContent::constant(9)
        };
        assert_eq!(w.at(49), 9);
        assert_ne!(w.at(50), 9);
        assert_eq!(w.at(50), w.at(10_000));
    }

    #[test]
    fn a_write_gives_each_page_data_of_its_own() {
        // Three zero pages and two copies of one content, all written at 10 ns.
        let z = zero_fingerprint();
        let written = |base| PageContent {
            write_at_ns: 10,
            ..PageContent::constant(base)
        };
        let mut p = Population::default();
        p.push_process(
            "a",
            0,
            vec![("heap".into(), vec![written(z), written(z), written(42)])],
        )
        .unwrap();
        p.push_process("b", 0, vec![("heap".into(), vec![written(z), written(42)])])
            .unwrap();
        // Before the writes: 3 zero pages, one duplicate of 42.
        let before = p.potential(0);
        assert_eq!((before.zero, before.duplicate, before.unique), (3, 1, 1));
        // After: every written page is unique.
        let after = p.potential(10);
        assert_eq!(
            (after.zero, after.duplicate, after.unique),
            (0, 0, 5),
            "{after:?}"
        );
        let fps: Vec<u64> = p.pages.iter().map(|c| c.at(10)).collect();
        assert_ne!(fps[0], fps[1]);
        assert_ne!(fps[2], fps[4]);
    }

    #[test]
    fn potential_counts_zero_duplicate_and_unique_pages() {
        let z = zero_fingerprint();
        let mut p = Population::default();
        let c = PageContent::constant;
        p.push_process("a", 0, vec![("heap".into(), vec![c(z), c(z), c(1), c(2)])])
            .unwrap();
        p.push_process("b", 0, vec![("heap".into(), vec![c(1), c(1), c(3)])])
            .unwrap();
        let got = p.potential(0);
        assert_eq!(
            got,
            Potential {
                pages: 7,
                zero: 2,
                duplicate: 2,
                unique: 3
            }
        );
        assert_eq!(got.saveable(), 3);
        assert_eq!(fingerprint(&[0u8; PAGE_BYTES]), z);
    }
}
