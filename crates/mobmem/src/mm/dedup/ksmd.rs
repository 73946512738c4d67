//! ksmd as mm/ksm.c runs it, on the pages of a [`Memory`] ([`super::memory`]).
//!
//! What merging changes is the memory's: a merged page is at `Location::Dram` with the
//! MERGED flag, the shared frame as its frame and the content it was merged with as its
//! fingerprint; a KSM page is a frame of the memory held as unmovable, tagged with its
//! stable node's number and freed with its last mapping. ksmd keeps only what is its
//! own: rmap items (by page id), stable nodes (content, rmap items, the frame of the KSM
//! page) and the two trees.
//!
//! - `ksm_do_scan`: a wake-up takes up to `pages_to_scan` pages from
//!   `scan_get_next_rmap_item` and gives each to `cmp_and_merge_page`; reaching the end
//!   of the last process ends the batch early and completes a full scan (`full_scans`,
//!   the kernel's `ksm_scan.seqnr`).
//! - `scan_get_next_rmap_item`: processes in order, regions in order, pages in order;
//!   pages not in memory (not faulted in yet, swapped out, freed with their process)
//!   are passed over without cost and their rmap items freed (as the kernel frees the
//!   items of addresses it no longer finds present); so is a page mapped to the zero
//!   page by KSM, which is not an anonymous page any more. Each page visited
//!   gets an rmap item (metadata) that lives as long as the page is scanned. At the
//!   start of every full scan the unstable tree is emptied.
//! - `cmp_and_merge_page`: a page already merged into the KSM page its rmap item points
//!   to is done. Otherwise its item leaves whatever tree it was in and three tests
//!   follow, in the order of [`MergeOrder`]: the stable tree search (a match merges the
//!   page into that KSM page); the checksum test (if the page's checksum differs from
//!   the last one recorded, or none was, it is recorded and the page goes no further: a
//!   volatile page) with, after it, the zero page (with `use_zero_pages` a page of
//!   zeros is merged with the zero page). Kernel 3.4 (and every kernel up to 6.10)
//!   searches the stable tree first; 6.11 and later take the checksum and zero page
//!   first. Then the unstable tree is searched: a match whose page still holds the
//!   content merges both pages into a new KSM page (a new stable node); no match
//!   inserts the page. A new KSM page is the frame of the page being scanned (as
//!   `try_to_merge_two_pages` makes it); the other page's frame is freed, as is the own
//!   frame of a page merged into an existing KSM page or the zero page.
//! - Writes: a write to a page mapped to a KSM page or the zero page gives it a private
//!   copy at once (copy-on-write), but, as in the kernel, its rmap item stays on the
//!   stable node (and counts in `pages_sharing`) until ksmd visits the page again. A KSM
//!   page whose last mapping went away (written, or its process ended) is freed, and
//!   its stable node is stale; the stable tree search drops it.
//!   Writes happen in continuous time ([`PageContent`]); they are applied when ksmd
//!   looks at a page and at every sample of a run.
//! - `max_page_sharing`: a stable node takes at most that many rmap items; a full one
//!   is passed over and the next merge of that content starts another node (a "dup";
//!   contents with more than one node are "chains"). The kernel's chain pruning and
//!   NUMA handling are left out.
//! - `smart_scan` (`should_skip_rmap_item`, kernel 6.7+): a page not mapped to a KSM
//!   page that has been scanned 3 or more times without merging is skipped 1, 2, 4 or 8
//!   scans (age up to 3, 5, 8, above) between looks; skipped pages do not count toward
//!   `pages_to_scan`. The age restarts at 0 when the page merges (a reading: the kernel
//!   never clears it, but a merged page is never skipped either).
//! - The scan-time advisor (`scan_time_advisor`, kernel 6.8+): [`super::advisor`].
//!
//! Counters follow the kernel's definitions (ksm.rst): `pages_shared` = stable nodes
//! with at least one rmap item, `pages_sharing` = rmap items on stable nodes beyond the
//! first of each, `pages_unshared` = items in the unstable tree, `pages_volatile` =
//! rmap items minus those three, `ksm_zero_pages` = pages KSM mapped to the zero page
//! that are still mapped so, `general_profit` = (pages_sharing + ksm_zero_pages) x 4096
//! - rmap items x sizeof(rmap item).

use std::collections::HashMap;

use serde::Serialize;

use super::advisor::Advisor;
use super::config::{AdvisorMode, KsmParams, MergeOrder, ScanCosts};
use super::memory::KsmMemory;
use super::pages::{zero_fingerprint, PageContent, Population, PAGE_BYTES};
use crate::core::memory::{Memory, Shared};
use crate::core::pages::{Location, NO_FRAME, ZERO_FRAME};
use crate::trace::PageId;
use crate::Result;

/// How a page is mapped: a view of its page-table entry in the memory (the MERGED flag,
/// the frame it shares and the fingerprint it was merged with).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mapping {
    /// Not merged: its own frame, or none (not in memory).
    Own,
    /// The KSM page of stable node `node`; `fp` is the content it was merged with.
    Ksm { node: u32, fp: u64 },
    /// The kernel's zero page.
    Zero,
}

/// Which tree a page's rmap item is in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Tree {
    None,
    Unstable,
    Stable(u32),
}

#[derive(Debug, Clone, Copy)]
struct Rmap {
    exists: bool,
    checksum: Option<u64>,
    tree: Tree,
    age: u8,
    remaining_skips: u8,
}

const NO_RMAP: Rmap = Rmap {
    exists: false,
    checksum: None,
    tree: Tree::None,
    age: 0,
    remaining_skips: 0,
};

#[derive(Debug, Clone)]
struct StableNode {
    fp: u64,
    /// Pages whose rmap items hang on this node.
    items: Vec<PageId>,
    /// The frame of its KSM page ([`NO_FRAME`] for a free node). The memory frees it
    /// with its last mapping: the node's KSM page is alive while the memory holds a KSM
    /// page there tagged with the node's number.
    pfn: u32,
}

const FREE_NODE: StableNode = StableNode {
    fp: 0,
    items: Vec::new(),
    pfn: NO_FRAME,
};

/// The kernel's KSM counters (the files of `/sys/kernel/mm/ksm/`), plus ksmd's CPU time.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct Counters {
    pub pages_shared: u64,
    pub pages_sharing: u64,
    pub pages_unshared: u64,
    pub pages_volatile: u64,
    pub ksm_zero_pages: u64,
    pub full_scans: u64,
    pub pages_scanned: u64,
    pub pages_skipped: u64,
    pub rmap_items: u64,
    pub stable_nodes: u64,
    pub stable_node_chains: u64,
    pub stable_node_dups: u64,
    pub general_profit: i64,
    /// Current `pages_to_scan` (the advisor changes it).
    pub pages_to_scan: u64,
    /// ksmd's CPU time so far, ns.
    pub cpu_ns: f64,
}

/// Where memory stands: what is mapped and how many frames it takes.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct MemoryState {
    /// Pages of the population in memory (of started processes): in a frame of their
    /// own or merged.
    pub pages: u64,
    /// Frames they take: own pages plus one per live KSM page (the zero page is free).
    pub frames: u64,
    /// `pages - frames`.
    pub saved: u64,
    /// ksmd's metadata: rmap items and stable nodes, bytes.
    pub metadata_bytes: u64,
    /// Saved pages by process: each page mapped to a KSM page with m mappers saves
    /// 1 - 1/m, each zero-page mapping saves 1.
    pub saved_by_process: Vec<f64>,
    /// Pages of each process now mapped to a KSM page or the zero page.
    pub merged_by_process: Vec<u64>,
    /// Copy-on-write breaks so far, by process.
    pub cow_by_process: Vec<u64>,
}

/// ksmd over a page population, whose pages are pages of the memory it is given.
pub struct Ksmd<'a> {
    params: KsmParams,
    costs: ScanCosts,
    pop: &'a Population,
    zero: u64,
    /// Rmap items by page id.
    rmap: Vec<Rmap>,
    nodes: Vec<StableNode>,
    free_nodes: Vec<u32>,
    stable: HashMap<u64, Vec<u32>>,
    unstable: HashMap<u64, PageId>,
    /// The next page to look at, in scan order.
    cursor: usize,
    in_scan: bool,
    c: Counters,
    cow: Vec<u64>,
    advisor: Advisor,
    now: u64,
}

impl<'a> Ksmd<'a> {
    pub fn new(pop: &'a Population, params: &KsmParams, costs: &ScanCosts) -> Self {
        let mut k = Ksmd {
            params: params.clone(),
            costs: costs.clone(),
            pop,
            zero: zero_fingerprint(),
            rmap: vec![NO_RMAP; pop.id_space()],
            nodes: Vec::new(),
            free_nodes: Vec::new(),
            stable: HashMap::new(),
            unstable: HashMap::new(),
            cursor: 0,
            in_scan: false,
            c: Counters::default(),
            cow: vec![0; pop.processes.len()],
            advisor: Advisor::default(),
            now: 0,
        };
        k.c.pages_to_scan = match params.advisor_mode {
            AdvisorMode::None => params.pages_to_scan as u64,
            AdvisorMode::ScanTime => params.advisor_min_pages_to_scan,
        };
        k
    }

    pub fn params(&self) -> &KsmParams {
        &self.params
    }

    /// A write to the merged `page` from outside the content model (a trace's store):
    /// it is copied on write ([`Memory::unmerge`]) and [`KsmMemory::copied`] gives it a
    /// frame of its own, as [`Ksmd::apply_all_writes`] does for the model's own
    /// rewrites. Returns whether it was merged.
    pub fn write_fault<M: KsmMemory>(&mut self, mem: &mut M, page: PageId) -> bool {
        if !mem.memory_mut().unmerge(page) {
            return false;
        }
        mem.copied(page);
        if let Some(i) = self.pop.index_of(page) {
            self.cow[self.pop.owner[i] as usize] += 1;
        }
        true
    }

    /// How `page` is mapped, from its page-table entry in `mem`.
    #[inline]
    fn mapping(mem: &Memory, page: PageId) -> Mapping {
        match mem.shared_frame(page) {
            None => Mapping::Own,
            Some(ZERO_FRAME) => Mapping::Zero,
            Some(pfn) => Mapping::Ksm {
                node: mem.ksm_page(pfn).map_or(u32::MAX, |(tag, _)| tag),
                fp: mem.pages().fingerprint(page).unwrap_or_default(),
            },
        }
    }

    /// The content of population page `page` (in the population by construction).
    #[inline]
    fn content(&self, page: PageId) -> &PageContent {
        &self.pop.pages[self.pop.index_of(page).unwrap_or_default()]
    }

    /// The process index of population page `page`.
    #[inline]
    fn owner(&self, page: PageId) -> usize {
        self.pop.owner[self.pop.index_of(page).unwrap_or_default()] as usize
    }

    /// Whether the KSM page of `node` is alive in `mem`.
    #[inline]
    fn live(&self, mem: &Memory, node: u32) -> bool {
        let pfn = self.nodes[node as usize].pfn;
        pfn != NO_FRAME && mem.ksm_page(pfn).is_some_and(|(tag, _)| tag == node)
    }

    /// One wake-up at time `now_ns` (`ksm_do_scan`); returns the CPU time it took, ns.
    /// An error is an internal one (the memory refused a merge).
    pub fn wake<M: KsmMemory>(&mut self, mem: &mut M, now_ns: u64) -> Result<f64> {
        self.now = now_ns;
        let before = self.c.cpu_ns;
        for _ in 0..self.c.pages_to_scan {
            match self.next_page(mem) {
                Some(p) => {
                    self.c.pages_scanned += 1;
                    self.cmp_and_merge(mem, p)?;
                }
                None => break,
            }
        }
        Ok(self.c.cpu_ns - before)
    }

    /// `scan_get_next_rmap_item`: the next page to look at, or None at the end of a
    /// full scan.
    fn next_page<M: KsmMemory>(&mut self, mem: &mut M) -> Option<PageId> {
        loop {
            if !self.in_scan {
                self.in_scan = true;
                self.cursor = 0;
                self.unstable.clear();
                self.advisor.start_scan(self.now, self.c.cpu_ns);
            }
            if self.cursor >= self.pop.pages.len() {
                self.in_scan = false;
                self.c.full_scans += 1;
                if self.params.advisor_mode == AdvisorMode::ScanTime {
                    self.c.pages_to_scan = self.advisor.stop_scan(
                        self.now,
                        self.c.cpu_ns,
                        self.c.pages_to_scan,
                        &self.params,
                    );
                }
                return None;
            }
            let p = self.pop.id(self.cursor);
            self.cursor += 1;
            self.apply_writes(mem, p);
            let present = match Self::mapping(mem.memory(), p) {
                Mapping::Zero => false,
                Mapping::Own => mem.memory().frame_of(p).is_some(),
                Mapping::Ksm { .. } => true,
            };
            if !present {
                if self.rmap[p as usize].exists {
                    self.free_rmap(p);
                }
                continue;
            }
            if !self.rmap[p as usize].exists {
                self.rmap[p as usize] = Rmap {
                    exists: true,
                    ..NO_RMAP
                };
                self.c.rmap_items += 1;
            }
            if self.params.smart_scan && self.should_skip(mem.memory(), p) {
                self.c.pages_skipped += 1;
                self.c.cpu_ns += self.costs.skip_ns;
                continue;
            }
            return Some(p);
        }
    }

    /// `should_skip_rmap_item`.
    fn should_skip(&mut self, mem: &Memory, p: PageId) -> bool {
        if matches!(Self::mapping(mem, p), Mapping::Ksm { .. }) {
            return false;
        }
        let r = &mut self.rmap[p as usize];
        let age = r.age;
        if age != u8::MAX {
            r.age += 1;
        }
        if age < 3 {
            return false;
        }
        if r.remaining_skips == 0 {
            r.remaining_skips = match age {
                0..=3 => 1,
                4..=5 => 2,
                6..=8 => 4,
                _ => 8,
            };
            return false;
        }
        r.remaining_skips -= 1;
        self.remove_from_tree(p);
        true
    }

    /// Copy-on-write: a page mapped to a KSM page or the zero page whose content has
    /// changed since leaves it ([`Memory::unmerge`]; the KSM page goes with its last
    /// mapping) and gets a frame of its own ([`KsmMemory::copied`]).
    fn apply_writes<M: KsmMemory>(&mut self, mem: &mut M, p: PageId) {
        let written = match Self::mapping(mem.memory(), p) {
            Mapping::Own => false,
            Mapping::Ksm { fp, .. } => self.content(p).at(self.now) != fp,
            Mapping::Zero => self.content(p).at(self.now) != self.zero,
        };
        if written {
            mem.memory_mut().unmerge(p);
            mem.copied(p);
            let owner = self.owner(p);
            self.cow[owner] += 1;
        }
    }

    fn free_rmap(&mut self, p: PageId) {
        self.remove_from_tree(p);
        self.rmap[p as usize] = NO_RMAP;
        self.c.rmap_items -= 1;
    }

    /// `remove_rmap_item_from_tree`.
    fn remove_from_tree(&mut self, p: PageId) {
        match self.rmap[p as usize].tree {
            Tree::None => {}
            Tree::Unstable => {
                self.c.pages_unshared -= 1;
                if let Some(fp) = self.rmap[p as usize].checksum {
                    if self.unstable.get(&fp) == Some(&p) {
                        self.unstable.remove(&fp);
                    }
                }
            }
            Tree::Stable(node) => {
                let n = &mut self.nodes[node as usize];
                if let Some(i) = n.items.iter().position(|&q| q == p) {
                    n.items.swap_remove(i);
                }
                if n.items.is_empty() {
                    self.c.pages_shared -= 1;
                    self.free_node(node);
                } else {
                    self.c.pages_sharing -= 1;
                }
            }
        }
        self.rmap[p as usize].tree = Tree::None;
    }

    fn free_node(&mut self, node: u32) {
        let fp = self.nodes[node as usize].fp;
        if let Some(chain) = self.stable.get_mut(&fp) {
            chain.retain(|&n| n != node);
            if chain.is_empty() {
                self.stable.remove(&fp);
            }
        }
        self.nodes[node as usize] = FREE_NODE;
        self.free_nodes.push(node);
        self.c.stable_nodes -= 1;
    }

    fn new_node(&mut self, fp: u64) -> u32 {
        let node = StableNode { fp, ..FREE_NODE };
        let id = match self.free_nodes.pop() {
            Some(id) => {
                self.nodes[id as usize] = node;
                id
            }
            None => {
                self.nodes.push(node);
                (self.nodes.len() - 1) as u32
            }
        };
        self.stable.entry(fp).or_default().push(id);
        self.c.stable_nodes += 1;
        id
    }

    /// `stable_tree_append`.
    fn stable_append(&mut self, p: PageId, node: u32) {
        let n = &mut self.nodes[node as usize];
        n.items.push(p);
        if n.items.len() == 1 {
            self.c.pages_shared += 1;
        } else {
            self.c.pages_sharing += 1;
        }
        let r = &mut self.rmap[p as usize];
        r.tree = Tree::Stable(node);
        r.age = 0;
        r.remaining_skips = 0;
    }

    /// Merge the resident page `p` (holding `fp`) into the shared frame `to`: its own
    /// frame is freed and it maps `to`. Returns the frame it maps.
    fn merge<M: KsmMemory>(&mut self, mem: &mut M, p: PageId, to: Shared, fp: u64) -> Result<u32> {
        mem.drop_own_frame(p);
        let frame = mem.memory_mut().map_shared(p, to, fp)?;
        self.c.cpu_ns += self.costs.merge_ns;
        Ok(frame)
    }

    /// Map page `p` (holding `fp`) to the live KSM page of `node`.
    fn map_to<M: KsmMemory>(&mut self, mem: &mut M, p: PageId, node: u32, fp: u64) -> Result<()> {
        let pfn = self.nodes[node as usize].pfn;
        self.merge(mem, p, Shared::Ksm(pfn), fp)?;
        self.stable_append(p, node);
        Ok(())
    }

    fn depth(entries: usize) -> f64 {
        ((entries + 1) as f64).log2().ceil().max(1.0)
    }

    /// `stable_tree_search`: a live stable node of content `fp` with room for one more
    /// rmap item; stale nodes met on the way are dropped.
    fn stable_search<M: KsmMemory>(&mut self, mem: &mut M, fp: u64) -> Option<u32> {
        self.c.cpu_ns += self.costs.compare_ns * Self::depth(self.stable.len());
        let chain = self.stable.get(&fp)?.clone();
        for node in chain {
            if self.nodes[node as usize].items.len() as u32 >= self.params.max_page_sharing {
                continue;
            }
            // Writes not yet applied to the node's pages may have left it without mappers.
            let items = self.nodes[node as usize].items.clone();
            for q in items {
                self.apply_writes(mem, q);
            }
            if !self.live(mem.memory(), node) {
                self.drop_stale(node);
                continue;
            }
            return Some(node);
        }
        None
    }

    /// A KSM page nobody maps any more (the memory freed it): unlink its rmap items and
    /// free the node.
    fn drop_stale(&mut self, node: u32) {
        let items = std::mem::take(&mut self.nodes[node as usize].items);
        self.c.pages_shared -= 1;
        self.c.pages_sharing -= items.len() as u64 - 1;
        for q in items {
            self.rmap[q as usize].tree = Tree::None;
        }
        self.free_node(node);
    }

    /// `cmp_and_merge_page`.
    fn cmp_and_merge<M: KsmMemory>(&mut self, mem: &mut M, p: PageId) -> Result<()> {
        self.c.cpu_ns += self.costs.visit_ns;
        if let Mapping::Ksm { node, .. } = Self::mapping(mem.memory(), p) {
            if self.rmap[p as usize].tree == Tree::Stable(node) {
                return Ok(());
            }
        }
        self.remove_from_tree(p);
        let fp = self.content(p).at(self.now);
        match self.params.merge_order {
            MergeOrder::StableTreeFirst => {
                if self.merge_into_stable(mem, p, fp)? || self.volatile_or_zero(mem, p, fp)? {
                    return Ok(());
                }
            }
            MergeOrder::ChecksumFirst => {
                if self.volatile_or_zero(mem, p, fp)? || self.merge_into_stable(mem, p, fp)? {
                    return Ok(());
                }
            }
        }
        self.c.cpu_ns += self.costs.compare_ns * Self::depth(self.unstable.len());
        match self.unstable.get(&fp).copied() {
            Some(q) if q != p => {
                self.apply_writes(mem, q);
                let still = self.content(q).at(self.now) == fp
                    && mem.memory().frame_of(q).is_some()
                    && self.rmap[q as usize].tree == Tree::Unstable;
                self.remove_from_tree(q);
                if still {
                    self.merge_two(mem, q, p, fp)?;
                } else {
                    self.insert_unstable(p, fp);
                }
            }
            _ => self.insert_unstable(p, fp),
        }
        Ok(())
    }

    /// `try_to_merge_two_pages`: `p`'s frame becomes a new KSM page of content `fp`
    /// and `q` (from the unstable tree) maps it too, its own frame freed. Their rmap
    /// items join the new stable node, `q`'s first.
    fn merge_two<M: KsmMemory>(
        &mut self,
        mem: &mut M,
        q: PageId,
        p: PageId,
        fp: u64,
    ) -> Result<()> {
        let node = self.new_node(fp);
        let own = mem.memory().frame_of(p).unwrap_or(NO_FRAME);
        let pfn = self.merge(
            mem,
            p,
            Shared::NewKsm {
                pfn: own,
                tag: node,
            },
            fp,
        )?;
        self.nodes[node as usize].pfn = pfn;
        self.merge(mem, q, Shared::Ksm(pfn), fp)?;
        self.stable_append(q, node);
        self.stable_append(p, node);
        Ok(())
    }

    /// The stable tree search; true if the page merged into a KSM page.
    fn merge_into_stable<M: KsmMemory>(&mut self, mem: &mut M, p: PageId, fp: u64) -> Result<bool> {
        match self.stable_search(mem, fp) {
            Some(node) => {
                self.map_to(mem, p, node, fp)?;
                Ok(true)
            }
            None => Ok(false),
        }
    }

    /// The checksum test and the zero page; true if the page goes no further (its
    /// checksum changed, or it was mapped to the zero page).
    fn volatile_or_zero<M: KsmMemory>(&mut self, mem: &mut M, p: PageId, fp: u64) -> Result<bool> {
        self.c.cpu_ns += self.costs.checksum_ns;
        let r = &mut self.rmap[p as usize];
        if r.checksum != Some(fp) {
            r.checksum = Some(fp);
            return Ok(true);
        }
        if self.params.use_zero_pages && fp == self.zero {
            self.merge(mem, p, Shared::Zero, fp)?;
            return Ok(true);
        }
        Ok(false)
    }

    fn insert_unstable(&mut self, p: PageId, fp: u64) {
        self.unstable.insert(fp, p);
        self.rmap[p as usize].tree = Tree::Unstable;
        self.c.pages_unshared += 1;
    }

    /// Apply every write up to `now_ns` (copy-on-write of merged pages).
    pub fn apply_all_writes<M: KsmMemory>(&mut self, mem: &mut M, now_ns: u64) {
        self.now = self.now.max(now_ns);
        for i in 0..self.pop.pages.len() {
            let p = self.pop.id(i);
            if mem.memory().is_merged(p) {
                self.apply_writes(mem, p);
            }
        }
    }

    /// ksmd's CPU time so far, ns (the `cpu_ns` of [`Ksmd::counters`], without walking
    /// the stable tree for the other counters).
    pub fn cpu_ns_so_far(&self) -> f64 {
        self.c.cpu_ns
    }

    /// The counters now, as the kernel would show them (`ksm_zero_pages` is the
    /// memory's count of pages mapped to the zero page).
    pub fn counters(&self, mem: &Memory) -> Counters {
        let mut c = self.c;
        c.ksm_zero_pages = mem.zero_mapped() as u64;
        c.pages_volatile = c
            .rmap_items
            .saturating_sub(c.pages_shared + c.pages_sharing + c.pages_unshared);
        c.general_profit = ((c.pages_sharing + c.ksm_zero_pages) * PAGE_BYTES as u64) as i64
            - (c.rmap_items * self.costs.rmap_item_bytes) as i64;
        let mut chains = 0;
        let mut dups = 0;
        for chain in self.stable.values() {
            if chain.len() > 1 {
                chains += 1;
                dups += chain.len() as u64;
            }
        }
        c.stable_node_chains = chains;
        c.stable_node_dups = dups;
        c
    }

    /// Memory now (call [`Ksmd::apply_all_writes`] first for an up-to-date picture):
    /// the population's pages in `mem` and the KSM pages it holds.
    pub fn memory(&self, mem: &Memory) -> MemoryState {
        let procs = self.pop.processes.len();
        let mut m = MemoryState {
            saved_by_process: vec![0.0; procs],
            merged_by_process: vec![0; procs],
            cow_by_process: self.cow.clone(),
            ..Default::default()
        };
        for i in 0..self.pop.pages.len() {
            let p = self.pop.id(i);
            if mem.pages().location(p) != Location::Dram {
                continue;
            }
            let owner = self.pop.owner[i] as usize;
            m.pages += 1;
            match mem.shared_frame(p) {
                None => m.frames += 1,
                Some(ZERO_FRAME) => {
                    m.saved_by_process[owner] += 1.0;
                    m.merged_by_process[owner] += 1;
                }
                Some(pfn) => {
                    let mappers = mem.ksm_page(pfn).map_or(1, |(_, n)| n) as f64;
                    m.saved_by_process[owner] += 1.0 - 1.0 / mappers;
                    m.merged_by_process[owner] += 1;
                }
            }
        }
        m.frames += mem.ksm_pages() as u64;
        m.saved = m.pages - m.frames;
        m.metadata_bytes = self.c.rmap_items * self.costs.rmap_item_bytes
            + self.c.stable_nodes * self.costs.stable_node_bytes;
        m
    }

    /// Recount everything from the memory's pages and ksmd's trees and check it against
    /// the counters and the merge invariants; the first difference, in words. Every
    /// merged page maps a live KSM page or the zero page, with its rmap item on that
    /// page's stable node; the memory holds exactly the KSM pages of live nodes, each
    /// mapped by the pages that say so. Tests and the composed phone's check call it (a
    /// second, simple implementation of the bookkeeping).
    pub fn audit(&self, mem: &Memory) -> std::result::Result<(), String> {
        let mut shared = 0u64;
        let mut sharing = 0u64;
        for (id, node) in self.nodes.iter().enumerate() {
            if node.items.is_empty() {
                if node.pfn != NO_FRAME || self.live(mem, id as u32) {
                    return Err(format!("free node {id} holds a KSM page"));
                }
                continue;
            }
            shared += 1;
            sharing += node.items.len() as u64 - 1;
            if node.items.len() as u32 > self.params.max_page_sharing {
                return Err(format!("node {id} has more than max_page_sharing items"));
            }
            for &q in &node.items {
                if self.rmap[q as usize].tree != Tree::Stable(id as u32) {
                    return Err(format!(
                        "page {q} is listed on node {id} but its item is not"
                    ));
                }
            }
        }
        let mut mappers = vec![0u32; self.nodes.len()];
        let (mut unshared, mut items, mut zero) = (0u64, 0u64, 0u64);
        for i in 0..self.pop.pages.len() {
            let p = self.pop.id(i);
            let r = &self.rmap[p as usize];
            if r.exists {
                items += 1;
            } else if r.tree != Tree::None {
                return Err(format!("page {p} has no rmap item but is in a tree"));
            }
            match r.tree {
                Tree::Unstable => unshared += 1,
                Tree::Stable(n) if !self.nodes[n as usize].items.contains(&p) => {
                    return Err(format!(
                        "page {p} points at node {n}, which does not list it"
                    ))
                }
                _ => {}
            }
            match Self::mapping(mem, p) {
                Mapping::Own => {}
                Mapping::Zero => zero += 1,
                Mapping::Ksm { node, fp } => {
                    let Some(n) = self.nodes.get(node as usize) else {
                        return Err(format!("page {p} maps a KSM page of no stable node"));
                    };
                    mappers[node as usize] += 1;
                    if n.pfn != mem.pages().frame(p) {
                        return Err(format!(
                            "page {p} maps a KSM page node {node} does not hold"
                        ));
                    }
                    if r.tree != Tree::Stable(node) {
                        return Err(format!("page {p} maps node {node} without its item on it"));
                    }
                    if n.fp != fp {
                        return Err(format!(
                            "page {p} was merged into a KSM page of other content"
                        ));
                    }
                }
            }
        }
        let mut alive = 0;
        for (id, node) in self.nodes.iter().enumerate() {
            let held = if self.live(mem, id as u32) {
                alive += 1;
                mem.ksm_page(node.pfn).map_or(0, |(_, n)| n)
            } else {
                0
            };
            if held != mappers[id] {
                return Err(format!(
                    "node {id}: {held} mappers in memory, {} pages map it",
                    mappers[id]
                ));
            }
        }
        if alive != mem.ksm_pages() {
            return Err(format!(
                "{} KSM pages held, {alive} stable nodes' KSM pages alive",
                mem.ksm_pages()
            ));
        }
        let c = &self.c;
        let got = (
            c.pages_shared,
            c.pages_sharing,
            c.pages_unshared,
            c.rmap_items,
            mem.zero_mapped() as u64,
        );
        let want = (shared, sharing, unshared, items, zero);
        if got != want {
            return Err(format!(
                "counters (shared, sharing, unshared, rmap_items, zero_pages) = {got:?}, recounted {want:?}"
            ));
        }
        if c.stable_nodes != shared {
            return Err(format!(
                "{} stable nodes counted, {shared} in use",
                c.stable_nodes
            ));
        }
        Ok(())
    }

    /// After [`Ksmd::apply_all_writes`]: every page mapped to a KSM page or the zero page
    /// holds that content now (merging never made a page show other data).
    pub fn audit_contents(&self, mem: &Memory, now_ns: u64) -> std::result::Result<(), String> {
        for (i, content) in self.pop.pages.iter().enumerate() {
            let p = self.pop.id(i);
            let now = content.at(now_ns);
            match Self::mapping(mem, p) {
                Mapping::Ksm { node, .. } if self.nodes[node as usize].fp != now => {
                    return Err(format!("page {p} maps KSM content it does not hold"))
                }
                Mapping::Zero if now != self.zero => {
                    return Err(format!("page {p} maps the zero page but holds data"))
                }
                _ => {}
            }
        }
        Ok(())
    }
}
