//! The multi-generational LRU (Linux 6.1+, `Documentation/mm/multigen_lru.rst` and
//! `Documentation/admin-guide/mm/multigen_lru.rst`), kept to its core.
//!
//! Pages are in generations numbered by a sequence: `max_seq` is the youngest (shared by
//! both types), `min_seq[anon]` and `min_seq[file]` the oldest of each type; between 2
//! (`MIN_NR_GENS`) and 4 (`MAX_NR_GENS`) generations exist. New file pages join the
//! oldest generation of their type and new anonymous pages the second oldest (as
//! `lru_gen_add_folio` places pages that are neither active nor in the swap cache).
//!
//! *Eviction* scans the oldest generation of a type from its tail: a page whose
//! accessed bit is set is promoted to the youngest generation (bit cleared), any other
//! page is reclaimed. The type evicted from is the one whose oldest generation is older
//! (file on a tie, and file only when swap is full). An empty oldest generation is
//! retired (`min_seq` + 1) while at least `MIN_NR_GENS` generations remain.
//! *Aging* runs when eviction would leave fewer than `MIN_NR_GENS` generations: it opens
//! a new youngest generation (folding the oldest into the next one first when
//! `MAX_NR_GENS` exist) and walks every resident page, moving accessed ones into it
//! (the page-table walk; each page walked counts as scanned).
//!
//! Left out: tiers and the refault PID controller (file pages accessed through file
//! descriptors), Bloom filters that make the walk sparse, `min_ttl_ms` thrashing
//! prevention. There is no lumpy reclaim in kernels with MGLRU (compaction serves
//! high-order requests); for a like-for-like comparison this model isolates the same
//! aligned blocks around its tag pages as the two-list policies, at every request of
//! order above 0 (no priorities: `lumpy_gating = "costly-or-pressure"` is refused).
//! With `dirty_writeback = "flusher"` a dirty file page eviction meets waits one
//! generation up with `PG_reclaim` (`sort_folio`); when its writeback ends it goes to
//! the tail of the oldest file generation (`folio_rotate_reclaimable`).

use super::lists::{ListId, LruLists, NO_LIST};
use super::policy::{
    isolate_lumpy_block, LumpyUnmovable, ReclaimPolicy, ShrinkRequest, SWAP_CLUSTER_MAX,
};
use super::ReclaimConfig;
use crate::core::memory::{FrameState, Memory};
use crate::core::pages::PageFlags;

pub const MIN_NR_GENS: u64 = 2;
pub const MAX_NR_GENS: u64 = 4;
/// First list id of the generation lists in [`LruLists`].
const FIRST_LIST: ListId = 4;
const ANON: usize = 0;
const FILE: usize = 1;

fn list_of(file: usize, seq: u64) -> ListId {
    FIRST_LIST + (file as ListId) * MAX_NR_GENS as ListId + (seq % MAX_NR_GENS) as ListId
}

pub struct MgLru {
    max_seq: u64,
    min_seq: [u64; 2],
    lumpy_unmovable: LumpyUnmovable,
    swappiness: u32,
    pub agings: u64,
    lists: LruLists,
    /// The generation (sequence number) of each frame's page.
    gen: Vec<u64>,
}

impl MgLru {
    /// Over `frames` frames, with [`ReclaimConfig::default`]'s `swappiness` and
    /// `lumpy_unmovable`.
    pub fn new(frames: usize) -> Self {
        Self::with_config(&ReclaimConfig {
            memory_pages: frames,
            ..ReclaimConfig::default()
        })
    }

    /// With the config's frames, `swappiness` and `lumpy_unmovable`.
    pub fn with_config(config: &ReclaimConfig) -> Self {
        MgLru {
            max_seq: MIN_NR_GENS + 1,
            min_seq: [0, 0],
            lumpy_unmovable: config.lumpy_unmovable,
            swappiness: config.swappiness,
            agings: 0,
            lists: LruLists::new(config.memory_pages),
            gen: vec![0; config.memory_pages],
        }
    }

    /// The generation of the page in frame `pfn`.
    pub fn gen_of(&self, pfn: u32) -> u64 {
        self.gen[pfn as usize]
    }

    pub fn max_seq(&self) -> u64 {
        self.max_seq
    }
    pub fn min_seq(&self) -> [u64; 2] {
        self.min_seq
    }

    fn place(&mut self, pfn: u32, file: usize, seq: u64) {
        self.gen[pfn as usize] = seq;
        self.lists.push_head(list_of(file, seq), pfn);
    }

    /// Retire empty oldest generations of `file` while more than `MIN_NR_GENS` remain.
    fn try_inc_min_seq(&mut self, file: usize) {
        while self.min_seq[file] + MIN_NR_GENS <= self.max_seq
            && self.lists.len(list_of(file, self.min_seq[file])) == 0
        {
            self.min_seq[file] += 1;
        }
    }

    /// Open a new youngest generation and promote every accessed page into it.
    fn age(&mut self, mem: &mut Memory) {
        for file in [ANON, FILE] {
            if self.max_seq - self.min_seq[file] + 1 >= MAX_NR_GENS {
                // Fold the oldest generation into the next one.
                let oldest = self.min_seq[file];
                for pfn in self.lists.frames(list_of(file, oldest)).into_iter().rev() {
                    self.lists.unlink(pfn);
                    self.place(pfn, file, oldest + 1);
                }
                self.min_seq[file] += 1;
            }
        }
        self.max_seq += 1;
        self.agings += 1;
        let young = self.max_seq;
        let mut walked = 0u64;
        for pfn in 0..mem.total() as u32 {
            let f = mem.frame(pfn);
            if f.state != FrameState::Page {
                continue;
            }
            walked += 1;
            if f.is_young() {
                let file = usize::from(!f.is_anon());
                self.lists.unlink(pfn);
                mem.set_frame_flags(pfn, PageFlags::YOUNG, false);
                mem.counters.activations += 1;
                self.place(pfn, file, young);
            }
        }
        mem.counters.scanned += walked;
    }

    /// The type to evict from (`isolate_folios`, Linux 6.6): file only at swappiness
    /// 0; else the type whose oldest generation is older; on a tie file at swappiness
    /// 1, anon at 200, and otherwise file (what `get_type_to_scan` answers while
    /// neither type refaults, the refault controller being left out). A type with
    /// nothing to evict (anon with swap full) gives way to the other.
    fn type_to_evict(&self, mem: &Memory) -> Option<usize> {
        let has = |file: usize| {
            (self.min_seq[file]..=self.max_seq).any(|s| self.lists.len(list_of(file, s)) > 0)
        };
        let can = [mem.swap_free() > 0 && has(ANON), has(FILE)];
        let first = if self.swappiness == 0 {
            return can[FILE].then_some(FILE);
        } else if self.min_seq[ANON] < self.min_seq[FILE] || self.swappiness == 200 {
            ANON
        } else {
            FILE
        };
        if can[first] {
            Some(first)
        } else {
            can[1 - first].then_some(1 - first)
        }
    }
}

impl ReclaimPolicy for MgLru {
    fn lists(&self) -> &LruLists {
        &self.lists
    }

    fn lists_mut(&mut self) -> &mut LruLists {
        &mut self.lists
    }

    fn add_page(&mut self, mem: &mut Memory, pfn: u32) {
        debug_assert_eq!(self.lists.list_of(pfn), NO_LIST);
        let file = usize::from(!mem.frame(pfn).is_anon());
        let seq = if file == ANON {
            (self.min_seq[ANON] + 1).min(self.max_seq)
        } else {
            self.min_seq[FILE]
        };
        self.place(pfn, file, seq);
    }

    /// 6.x `folio_rotate_reclaimable` -> `lru_gen_add_folio(.., reclaiming)`: to the
    /// tail of the oldest file generation.
    fn rotate_reclaimable(&mut self, _mem: &mut Memory, pfn: u32) {
        let oldest = self.min_seq[FILE];
        self.gen[pfn as usize] = oldest;
        self.lists.move_to_tail(pfn, list_of(FILE, oldest));
    }

    fn shrink(&mut self, mem: &mut Memory, req: &ShrinkRequest) -> usize {
        let mut reclaimed = 0;
        // Give up after scanning the resident pages several times without meeting the
        // goal (everything accessed or unswappable).
        let budget = 4 * mem.lru_pages() as u64 + 64;
        let start = mem.counters.scanned;
        while !req.done(mem, reclaimed) && mem.counters.scanned - start < budget {
            let Some(file) = self.type_to_evict(mem) else {
                break;
            };
            self.try_inc_min_seq(file);
            if self.min_seq[file] + MIN_NR_GENS > self.max_seq {
                self.age(mem);
                continue;
            }
            let list = list_of(file, self.min_seq[file]);
            let mut isolated = Vec::with_capacity(SWAP_CLUSTER_MAX);
            let mut tags = 0;
            while tags < SWAP_CLUSTER_MAX {
                let Some(tag) = self.lists.tail(list) else {
                    break;
                };
                tags += 1;
                self.lists.unlink(tag);
                isolated.push(tag);
                if req.order > 0 {
                    isolate_lumpy_block(
                        mem,
                        &mut self.lists,
                        tag,
                        req.order,
                        self.lumpy_unmovable,
                        &mut |_, _| true,
                        &mut isolated,
                    );
                }
            }
            mem.counters.scanned += tags as u64;
            if tags == 0 {
                // The oldest generation is empty but cannot be retired: age.
                self.age(mem);
                continue;
            }
            let young = self.max_seq;
            for pfn in isolated {
                let f = mem.frame(pfn);
                let t = usize::from(!f.is_anon());
                if (f.is_young() && req.order == 0) || (f.is_anon() && mem.swap_free() == 0) {
                    mem.set_frame_flags(pfn, PageFlags::YOUNG, false);
                    mem.counters.activations += 1;
                    self.place(pfn, t, young);
                } else if mem.evict_or_keep(pfn) {
                    reclaimed += 1;
                } else {
                    // A dirty file page kept for the flusher waits one generation up,
                    // `PG_reclaim` set (6.x `sort_folio`, `folio_inc_gen`); so does an
                    // anonymous page swap had no room for.
                    let seq = (self.min_seq[t] + 1).min(self.max_seq);
                    self.place(pfn, t, seq);
                }
            }
        }
        reclaimed
    }
}
