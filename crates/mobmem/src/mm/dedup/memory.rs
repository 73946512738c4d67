//! The memory ksmd merges pages in: a [`core::memory::Memory`](Memory), whose page table
//! holds what merging changes (the MERGED flag, the shared frame, the content merged)
//! and whose frames hold the KSM pages.
//!
//! ksmd reads the memory and changes it through [`KsmMemory`]: a bare [`Memory`] (the
//! standalone run's, [`Standalone`], and tests), or the reclaim machine of the composed
//! phone, whose policy keeps lists of the resident pages. Merging a page frees its own
//! frame (off those lists first); a page copied on write gets a frame of its own again,
//! at once (a bare memory) or at its next touch (the reclaim machine, so that reclaim
//! sees it again).

use super::pages::Population;
use crate::core::memory::Memory;
use crate::core::pages::Location;
use crate::mm::reclaim::Machine;
use crate::trace::{PageId, ProcId};

/// The memory ksmd works on.
pub trait KsmMemory {
    fn memory(&self) -> &Memory;
    fn memory_mut(&mut self) -> &mut Memory;
    /// Free the own frame of the resident page `page`, whose data is about to be
    /// shared: off every list that holds it, then [`Memory::discard`]. The page is then
    /// in no frame, for [`Memory::map_shared`].
    fn drop_own_frame(&mut self, page: PageId);
    /// `page` left its shared frame (copy-on-write) and holds no frame: give it one
    /// now, or leave its next touch to fault one in.
    fn copied(&mut self, page: PageId);
}

impl KsmMemory for Memory {
    fn memory(&self) -> &Memory {
        self
    }

    fn memory_mut(&mut self) -> &mut Memory {
        self
    }

    fn drop_own_frame(&mut self, page: PageId) {
        self.discard(page);
    }

    /// A bare memory copies at once, into the lowest free frame (none free: the page
    /// stays without one until it is faulted in).
    fn copied(&mut self, page: PageId) {
        if let Some(pfn) = self.find_free_block(0) {
            let owner = self.owner_of(page);
            self.fault_in(pfn, page, owner, true);
        }
    }
}

impl KsmMemory for Machine {
    fn memory(&self) -> &Memory {
        &self.mem
    }

    fn memory_mut(&mut self) -> &mut Memory {
        &mut self.mem
    }

    /// Off the reclaim policy's lists, then out of memory.
    fn drop_own_frame(&mut self, page: PageId) {
        self.discard(page);
    }

    /// The page faults a frame in at its next touch, through reclaim (a minor fault).
    fn copied(&mut self, _page: PageId) {}
}

/// The memory of a standalone KSM run: a frame for every page of the population, so
/// nothing is ever reclaimed; each process's pages are faulted in (owned by it: the
/// memory's owner is the process's index) when it starts.
pub struct Standalone {
    pub mem: Memory,
    /// Process indices by start time (ties in process order), and how many started.
    order: Vec<usize>,
    started: usize,
}

impl Standalone {
    pub fn new(pop: &Population) -> Self {
        let frames = pop.pages.len().max(1);
        let mem = Memory::new(frames, &[], pop.id_space(), pop.processes.len(), 0);
        let mut order: Vec<usize> = (0..pop.processes.len()).collect();
        order.sort_by_key(|&p| pop.processes[p].start_ns);
        Standalone {
            mem,
            order,
            started: 0,
        }
    }

    /// Start every process whose start time is `now_ns` or earlier and that has not
    /// started yet.
    pub fn start_until(&mut self, pop: &Population, now_ns: u64) {
        while let Some(&proc) = self.order.get(self.started) {
            if pop.processes[proc].start_ns > now_ns {
                break;
            }
            self.started += 1;
            self.start(pop, proc);
        }
    }

    /// Fault every page of process `proc` that is not in memory in (a process
    /// starting, or starting again after it ended).
    pub fn start(&mut self, pop: &Population, proc: usize) {
        let regions = &pop.processes[proc].regions;
        for i in regions.iter().flat_map(|r| r.first..r.first + r.len) {
            let page = pop.id(i);
            if self.mem.pages().location(page) != Location::Absent {
                continue;
            }
            let Some(pfn) = self.mem.find_free_block(0) else {
                return;
            };
            self.mem.own(page, proc as ProcId);
            self.mem.fault_in(pfn, page, proc as ProcId, true);
        }
    }

    /// Process `proc` ends (exits, or is killed): every page it owns is discarded, and
    /// merged pages leave their shared frames.
    pub fn end(&mut self, proc: usize) {
        for page in self.mem.procs.die(proc as ProcId) {
            self.mem.discard(page);
            self.mem
                .pages_mut()
                .set_flags(page, crate::core::pages::PageFlags::OWNED, false);
        }
    }
}
