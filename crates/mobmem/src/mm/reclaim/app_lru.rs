//! Exact LRU lists reclaimed in order of process importance: the memory model of the
//! multi-swap paper (Bahn, Kim, "Design and Performance Analysis of Multi-Swap
//! Architectures for Mobile Devices", JIIBC 2023), where the apps' anonymous memory is
//! reclaimed one page at a time as a page is needed.
//!
//! ```text
//! add(p):      p to the head of its owner's list (app-lru) or of the one list (global-lru)
//! access(p):   p to the head of its list
//! shrink():    until the goal is met:
//!                app-lru:    a = the least important process with pages on its list
//!                            (highest oom_score_adj; among equals the one used least
//!                            recently; the last of those still tied), v = a's tail
//!                global-lru: v = the tail of the one list
//!                evict v; if swap refuses it: v back to the tail, stop (the low-memory
//!                killer's turn); a dirty file page kept for the flusher goes back to
//!                the head
//! ```
//! Every access moves its page, so this is the exact LRU the paper's model assumes, not
//! the kernel's approximation by reference bits. The choice of process is remembered
//! until something that could change it happens: an importance change, an access by
//! that process, a process's first page on its list, or its last page leaving.

use super::lists::{ListId, LruLists};
use super::policy::{ReclaimPolicy, ShrinkRequest};
use crate::core::memory::Memory;
use crate::trace::ProcId;

pub struct AppLru {
    /// One list for all pages instead of one per process.
    global: bool,
    lists: LruLists,
    /// The process reclaim takes from, with what it was chosen on.
    victim: Option<Victim>,
}

#[derive(Debug, Clone, Copy)]
struct Victim {
    proc: ProcId,
    importance_changes: u64,
    last_use: u64,
}

impl AppLru {
    /// Over `frames` frames; `global`: one list for all pages.
    pub fn new(frames: usize, global: bool) -> Self {
        AppLru {
            global,
            lists: LruLists::new(frames),
            victim: None,
        }
    }

    fn list_for(&self, mem: &Memory, pfn: u32) -> ListId {
        if self.global {
            0
        } else {
            mem.owner_of_frame(pfn)
        }
    }

    /// The process to reclaim from: the least important with pages on its list.
    fn victim_proc(&mut self, mem: &Memory) -> Option<ProcId> {
        let procs = &mem.procs;
        if let Some(v) = self.victim {
            if v.importance_changes == procs.importance_changes()
                && v.last_use == procs.last_use(v.proc)
                && self.lists.len(v.proc) > 0
            {
                return Some(v.proc);
            }
        }
        let lists = &self.lists;
        let best = procs.importance().least_important(
            (0..lists.count() as ProcId)
                .filter(|&p| lists.len(p) > 0)
                .map(|p| (p, procs.last_use(p))),
        );
        self.victim = best.map(|proc| Victim {
            proc,
            importance_changes: procs.importance_changes(),
            last_use: procs.last_use(proc),
        });
        best
    }
}

impl ReclaimPolicy for AppLru {
    fn add_page(&mut self, mem: &mut Memory, pfn: u32) {
        let list = self.list_for(mem, pfn);
        if self.lists.len(list) == 0 {
            // A new candidate for reclaim.
            self.victim = None;
        }
        self.lists.push_head(list, pfn);
    }

    fn accessed(&mut self, _mem: &mut Memory, pfn: u32) {
        let list = self.lists.list_of(pfn);
        self.lists.unlink(pfn);
        self.lists.push_head(list, pfn);
    }

    fn shrink(&mut self, mem: &mut Memory, req: &ShrinkRequest) -> usize {
        let mut reclaimed = 0;
        // Each page is looked at once at most per call: dirty file pages kept for the
        // flusher come round again only at the next call.
        let mut budget = self.lists.total();
        while !req.done(mem, reclaimed) && budget > 0 {
            budget -= 1;
            let Some(pfn) = self.next_victim(mem) else {
                break;
            };
            let list = self.lists.list_of(pfn);
            self.lists.unlink(pfn);
            mem.counters.scanned += 1;
            if mem.evict_or_keep(pfn) {
                reclaimed += 1;
            } else if mem.frame(pfn).is_reclaim() {
                // A dirty file page kept for the flusher: another round.
                self.lists.push_head(list, pfn);
            } else {
                self.lists.push_tail(list, pfn);
                break;
            }
        }
        reclaimed
    }

    fn rotate_reclaimable(&mut self, _mem: &mut Memory, _pfn: u32) {}

    fn next_victim(&mut self, mem: &Memory) -> Option<u32> {
        let list = if self.global {
            0
        } else {
            self.victim_proc(mem)?
        };
        self.lists.tail(list)
    }

    fn lists(&self) -> &LruLists {
        &self.lists
    }

    fn lists_mut(&mut self) -> &mut LruLists {
        &mut self.lists
    }
}
