//! ksmd as mm/ksm.c runs it.
//!
//! - `ksm_do_scan`: a wake-up takes up to `pages_to_scan` pages from
//!   `scan_get_next_rmap_item` and gives each to `cmp_and_merge_page`; reaching the end
//!   of the last process ends the batch early and completes a full scan (`full_scans`,
//!   the kernel's `ksm_scan.seqnr`).
//! - `scan_get_next_rmap_item`: processes in order, regions in order, pages in order;
//!   pages that do not exist yet are passed over; a page mapped to the zero page by KSM
//!   is not an anonymous page any more, so it is passed over and its rmap item freed
//!   (as the kernel frees the items of addresses it no longer finds). Each page visited
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
//!   inserts the page.
//! - Writes: a write to a page mapped to a KSM page or the zero page gives it a private
//!   copy at once (copy-on-write), but, as in the kernel, its rmap item stays on the
//!   stable node (and counts in `pages_sharing`) until ksmd visits the page again. A KSM
//!   page whose last mapping went away is stale; the stable tree search drops it.
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
use super::pages::{zero_fingerprint, Population, PAGE_BYTES};
use crate::core::pages::{Location, PageFlags, PageTable, NO_FRAME, ZERO_FRAME};
use crate::trace::PageId;

/// How a page is mapped: a view of its page-table entry (the MERGED flag, the frame it
/// shares and the fingerprint it was merged with).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mapping {
    /// Its own frame.
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

#[derive(Debug, Clone, Default)]
struct StableNode {
    fp: u64,
    /// Pages whose rmap items hang on this node.
    items: Vec<u32>,
    /// Pages mapped to this node's KSM page right now.
    mappers: u32,
}

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
    /// Pages that exist (of started processes).
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

/// ksmd over a page population.
pub struct Ksmd<'a> {
    params: KsmParams,
    costs: ScanCosts,
    pop: &'a Population,
    zero: u64,
    /// The pages in scan order: owner (process index), where they are mapped (a frame of
    /// their own, a KSM page numbered by its stable node, or the zero page) and the
    /// content they were merged with.
    pages: PageTable,
    rmap: Vec<Rmap>,
    nodes: Vec<StableNode>,
    free_nodes: Vec<u32>,
    stable: HashMap<u64, Vec<u32>>,
    unstable: HashMap<u64, u32>,
    cursor: usize,
    in_scan: bool,
    c: Counters,
    cow: Vec<u64>,
    advisor: Advisor,
    now: u64,
    /// Pages whose mapping changed (merged or given their own frame again), in order,
    /// when a caller follows them (see [`Ksmd::follow_mappings`]).
    changes: Option<Vec<(u32, bool)>>,
}

impl<'a> Ksmd<'a> {
    pub fn new(pop: &'a Population, params: &KsmParams, costs: &ScanCosts) -> Self {
        let n = pop.pages.len();
        let mut pages = PageTable::with_pages(n);
        for (p, &owner) in pop.owner.iter().enumerate() {
            pages.set_owner(p as PageId, owner);
            pages.place(p as PageId, Location::Dram, NO_FRAME);
            pages.set_flags(p as PageId, PageFlags::ANON, true);
        }
        let mut k = Ksmd {
            params: params.clone(),
            costs: costs.clone(),
            pop,
            zero: zero_fingerprint(),
            pages,
            rmap: vec![NO_RMAP; n],
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
            changes: None,
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

    /// Record every change of a page between its own frame and a shared one (a KSM
    /// page or the zero page), for a memory model that keeps frames beside ksmd (the
    /// composed phone); [`Ksmd::take_changes`] hands them over.
    pub fn follow_mappings(&mut self) {
        self.changes.get_or_insert_with(Vec::new);
    }

    /// The changes since the last call: (page, now merged), in the order they happened.
    pub fn take_changes(&mut self) -> Vec<(u32, bool)> {
        self.changes
            .as_mut()
            .map(std::mem::take)
            .unwrap_or_default()
    }

    /// Whether page `p` is mapped to a KSM page or the zero page.
    pub fn is_merged(&self, p: usize) -> bool {
        self.mapping(p) != Mapping::Own
    }

    /// A write to page `p` from outside the content model (a trace's store): a merged
    /// page is copied on write and gets its own frame, as [`Ksmd::apply_all_writes`]
    /// does for the model's own rewrites. Returns whether it was merged.
    pub fn write_fault(&mut self, p: usize) -> bool {
        let owner = self.owner(p);
        match self.mapping(p) {
            Mapping::Own => return false,
            Mapping::Ksm { node, .. } => self.nodes[node as usize].mappers -= 1,
            Mapping::Zero => self.c.ksm_zero_pages -= 1,
        }
        self.set_mapping(p, Mapping::Own);
        self.cow[owner] += 1;
        true
    }

    /// How page `p` is mapped, from its page-table entry.
    #[inline]
    fn mapping(&self, p: usize) -> Mapping {
        let page = p as PageId;
        if !self.pages.has_flags(page, PageFlags::MERGED) {
            return Mapping::Own;
        }
        match self.pages.frame(page) {
            ZERO_FRAME => Mapping::Zero,
            node => Mapping::Ksm {
                node,
                fp: self.pages.fingerprint(page).unwrap_or_default(),
            },
        }
    }

    /// Map page `p` as `mapping` says, in its page-table entry.
    fn set_mapping(&mut self, p: usize, mapping: Mapping) {
        let page = p as PageId;
        let (frame, fp) = match mapping {
            Mapping::Own => (NO_FRAME, None),
            Mapping::Ksm { node, fp } => (node, Some(fp)),
            Mapping::Zero => (ZERO_FRAME, Some(self.zero)),
        };
        self.pages.place(page, Location::Dram, frame);
        if let Some(changes) = &mut self.changes {
            if self.pages.has_flags(page, PageFlags::MERGED) != fp.is_some() {
                changes.push((page, fp.is_some()));
            }
        }
        self.pages.set_flags(page, PageFlags::MERGED, fp.is_some());
        if let Some(fp) = fp {
            self.pages.set_fingerprint(page, fp);
        }
    }

    /// The process index of page `p`.
    #[inline]
    fn owner(&self, p: usize) -> usize {
        self.pages.owner(p as PageId) as usize
    }

    /// One wake-up at time `now_ns` (`ksm_do_scan`); returns the CPU time it took, ns.
    pub fn wake(&mut self, now_ns: u64) -> f64 {
        self.now = now_ns;
        let before = self.c.cpu_ns;
        for _ in 0..self.c.pages_to_scan {
            match self.next_page() {
                Some(p) => {
                    self.c.pages_scanned += 1;
                    self.cmp_and_merge(p);
                }
                None => break,
            }
        }
        self.c.cpu_ns - before
    }

    /// `scan_get_next_rmap_item`: the next page to look at, or None at the end of a
    /// full scan.
    fn next_page(&mut self) -> Option<usize> {
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
            let p = self.cursor;
            self.cursor += 1;
            if self.pop.processes[self.owner(p)].start_ns > self.now {
                continue;
            }
            self.apply_writes(p);
            if self.mapping(p) == Mapping::Zero {
                if self.rmap[p].exists {
                    self.free_rmap(p);
                }
                continue;
            }
            if !self.rmap[p].exists {
                self.rmap[p] = Rmap {
                    exists: true,
                    ..NO_RMAP
                };
                self.c.rmap_items += 1;
            }
            if self.params.smart_scan && self.should_skip(p) {
                self.c.pages_skipped += 1;
                self.c.cpu_ns += self.costs.skip_ns;
                continue;
            }
            return Some(p);
        }
    }

    /// `should_skip_rmap_item`.
    fn should_skip(&mut self, p: usize) -> bool {
        if matches!(self.mapping(p), Mapping::Ksm { .. }) {
            return false;
        }
        let r = &mut self.rmap[p];
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
    /// changed since gets its own frame.
    fn apply_writes(&mut self, p: usize) {
        match self.mapping(p) {
            Mapping::Own => {}
            Mapping::Ksm { node, fp } => {
                if self.pop.pages[p].at(self.now) != fp {
                    self.set_mapping(p, Mapping::Own);
                    self.nodes[node as usize].mappers -= 1;
                    let owner = self.owner(p);
                    self.cow[owner] += 1;
                }
            }
            Mapping::Zero => {
                if self.pop.pages[p].at(self.now) != self.zero {
                    self.set_mapping(p, Mapping::Own);
                    self.c.ksm_zero_pages -= 1;
                    let owner = self.owner(p);
                    self.cow[owner] += 1;
                }
            }
        }
    }

    fn free_rmap(&mut self, p: usize) {
        self.remove_from_tree(p);
        self.rmap[p] = NO_RMAP;
        self.c.rmap_items -= 1;
    }

    /// `remove_rmap_item_from_tree`.
    fn remove_from_tree(&mut self, p: usize) {
        match self.rmap[p].tree {
            Tree::None => {}
            Tree::Unstable => {
                self.c.pages_unshared -= 1;
                if let Some(fp) = self.rmap[p].checksum {
                    if self.unstable.get(&fp) == Some(&(p as u32)) {
                        self.unstable.remove(&fp);
                    }
                }
            }
            Tree::Stable(node) => {
                let n = &mut self.nodes[node as usize];
                if let Some(i) = n.items.iter().position(|&q| q as usize == p) {
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
        self.rmap[p].tree = Tree::None;
    }

    fn free_node(&mut self, node: u32) {
        let fp = self.nodes[node as usize].fp;
        if let Some(chain) = self.stable.get_mut(&fp) {
            chain.retain(|&n| n != node);
            if chain.is_empty() {
                self.stable.remove(&fp);
            }
        }
        self.nodes[node as usize] = StableNode::default();
        self.free_nodes.push(node);
        self.c.stable_nodes -= 1;
    }

    fn new_node(&mut self, fp: u64) -> u32 {
        let node = StableNode {
            fp,
            items: Vec::new(),
            mappers: 0,
        };
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
    fn stable_append(&mut self, p: usize, node: u32) {
        let n = &mut self.nodes[node as usize];
        n.items.push(p as u32);
        if n.items.len() == 1 {
            self.c.pages_shared += 1;
        } else {
            self.c.pages_sharing += 1;
        }
        self.rmap[p].tree = Tree::Stable(node);
        self.rmap[p].age = 0;
        self.rmap[p].remaining_skips = 0;
    }

    /// Map page `p` (holding `fp`) to the KSM page of `node`.
    fn map_to(&mut self, p: usize, node: u32, fp: u64) {
        self.set_mapping(p, Mapping::Ksm { node, fp });
        self.nodes[node as usize].mappers += 1;
        self.stable_append(p, node);
        self.c.cpu_ns += self.costs.merge_ns;
    }

    fn depth(entries: usize) -> f64 {
        ((entries + 1) as f64).log2().ceil().max(1.0)
    }

    /// `stable_tree_search`: a live stable node of content `fp` with room for one more
    /// rmap item; stale nodes met on the way are dropped.
    fn stable_search(&mut self, fp: u64) -> Option<u32> {
        self.c.cpu_ns += self.costs.compare_ns * Self::depth(self.stable.len());
        let chain = self.stable.get(&fp)?.clone();
        for node in chain {
            if self.nodes[node as usize].items.len() as u32 >= self.params.max_page_sharing {
                continue;
            }
            // Writes not yet applied to the node's pages may have left it without mappers.
            let items = self.nodes[node as usize].items.clone();
            for q in items {
                self.apply_writes(q as usize);
            }
            if self.nodes[node as usize].mappers == 0 {
                self.drop_stale(node);
                continue;
            }
            return Some(node);
        }
        None
    }

    /// A KSM page nobody maps any more: unlink its rmap items and free the node.
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
    fn cmp_and_merge(&mut self, p: usize) {
        self.c.cpu_ns += self.costs.visit_ns;
        if let Mapping::Ksm { node, .. } = self.mapping(p) {
            if self.rmap[p].tree == Tree::Stable(node) {
                return;
            }
        }
        self.remove_from_tree(p);
        let fp = self.pop.pages[p].at(self.now);
        match self.params.merge_order {
            MergeOrder::StableTreeFirst => {
                if self.merge_into_stable(p, fp) || self.volatile_or_zero(p, fp) {
                    return;
                }
            }
            MergeOrder::ChecksumFirst => {
                if self.volatile_or_zero(p, fp) || self.merge_into_stable(p, fp) {
                    return;
                }
            }
        }
        self.c.cpu_ns += self.costs.compare_ns * Self::depth(self.unstable.len());
        match self.unstable.get(&fp).copied() {
            Some(q) if q as usize != p => {
                let q = q as usize;
                self.apply_writes(q);
                let still = self.pop.pages[q].at(self.now) == fp
                    && self.mapping(q) == Mapping::Own
                    && self.rmap[q].tree == Tree::Unstable;
                self.remove_from_tree(q);
                if still {
                    let node = self.new_node(fp);
                    self.map_to(q, node, fp);
                    self.map_to(p, node, fp);
                } else {
                    self.insert_unstable(p, fp);
                }
            }
            _ => self.insert_unstable(p, fp),
        }
    }

    /// The stable tree search; true if the page merged into a KSM page.
    fn merge_into_stable(&mut self, p: usize, fp: u64) -> bool {
        match self.stable_search(fp) {
            Some(node) => {
                self.map_to(p, node, fp);
                true
            }
            None => false,
        }
    }

    /// The checksum test and the zero page; true if the page goes no further (its
    /// checksum changed, or it was mapped to the zero page).
    fn volatile_or_zero(&mut self, p: usize, fp: u64) -> bool {
        self.c.cpu_ns += self.costs.checksum_ns;
        if self.rmap[p].checksum != Some(fp) {
            self.rmap[p].checksum = Some(fp);
            return true;
        }
        if self.params.use_zero_pages && fp == self.zero {
            self.set_mapping(p, Mapping::Zero);
            self.c.ksm_zero_pages += 1;
            self.c.cpu_ns += self.costs.merge_ns;
            return true;
        }
        false
    }

    fn insert_unstable(&mut self, p: usize, fp: u64) {
        self.unstable.insert(fp, p as u32);
        self.rmap[p].tree = Tree::Unstable;
        self.c.pages_unshared += 1;
    }

    /// Apply every write up to `now_ns` (copy-on-write of merged pages).
    pub fn apply_all_writes(&mut self, now_ns: u64) {
        self.now = self.now.max(now_ns);
        for p in 0..self.pop.pages.len() {
            if self.mapping(p) != Mapping::Own {
                self.apply_writes(p);
            }
        }
    }

    /// The counters now, as the kernel would show them.
    pub fn counters(&self) -> Counters {
        let mut c = self.c;
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

    /// Memory now (call [`Ksmd::apply_all_writes`] first for an up-to-date picture).
    pub fn memory(&self, now_ns: u64) -> MemoryState {
        let procs = self.pop.processes.len();
        let mut m = MemoryState {
            saved_by_process: vec![0.0; procs],
            merged_by_process: vec![0; procs],
            cow_by_process: self.cow.clone(),
            ..Default::default()
        };
        for p in 0..self.pop.pages.len() {
            let owner = self.owner(p);
            if self.pop.processes[owner].start_ns > now_ns {
                continue;
            }
            m.pages += 1;
            match self.mapping(p) {
                Mapping::Own => m.frames += 1,
                Mapping::Ksm { node, .. } => {
                    let mappers = self.nodes[node as usize].mappers.max(1) as f64;
                    m.saved_by_process[owner] += 1.0 - 1.0 / mappers;
                    m.merged_by_process[owner] += 1;
                }
                Mapping::Zero => {
                    m.saved_by_process[owner] += 1.0;
                    m.merged_by_process[owner] += 1;
                }
            }
        }
        let live_nodes = self.nodes.iter().filter(|n| n.mappers > 0).count() as u64;
        m.frames += live_nodes;
        m.saved = m.pages - m.frames;
        m.metadata_bytes = self.c.rmap_items * self.costs.rmap_item_bytes
            + self.c.stable_nodes * self.costs.stable_node_bytes;
        m
    }

    /// Recount everything from the pages' state and check it against the counters and
    /// the merge invariants; the first difference, in words. Tests call it after every
    /// step (a second, simple implementation of the bookkeeping).
    pub fn audit(&self) -> std::result::Result<(), String> {
        let mut shared = 0u64;
        let mut sharing = 0u64;
        for (id, node) in self.nodes.iter().enumerate() {
            if node.items.is_empty() {
                if node.mappers != 0 {
                    return Err(format!("free node {id} has mappers"));
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
        for p in 0..self.pop.pages.len() {
            let r = &self.rmap[p];
            if r.exists {
                items += 1;
            } else if r.tree != Tree::None {
                return Err(format!("page {p} has no rmap item but is in a tree"));
            }
            match r.tree {
                Tree::Unstable => unshared += 1,
                Tree::Stable(n) if !self.nodes[n as usize].items.contains(&(p as u32)) => {
                    return Err(format!(
                        "page {p} points at node {n}, which does not list it"
                    ))
                }
                _ => {}
            }
            match self.mapping(p) {
                Mapping::Own => {}
                Mapping::Zero => zero += 1,
                Mapping::Ksm { node, fp } => {
                    mappers[node as usize] += 1;
                    if r.tree != Tree::Stable(node) {
                        return Err(format!("page {p} maps node {node} without its item on it"));
                    }
                    if self.nodes[node as usize].fp != fp {
                        return Err(format!(
                            "page {p} was merged into a KSM page of other content"
                        ));
                    }
                }
            }
        }
        for (id, node) in self.nodes.iter().enumerate() {
            if node.mappers != mappers[id] {
                return Err(format!(
                    "node {id}: {} mappers counted, {} mapped",
                    node.mappers, mappers[id]
                ));
            }
        }
        let c = &self.c;
        let got = (
            c.pages_shared,
            c.pages_sharing,
            c.pages_unshared,
            c.rmap_items,
            c.ksm_zero_pages,
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
    pub fn audit_contents(&self, now_ns: u64) -> std::result::Result<(), String> {
        for p in 0..self.pop.pages.len() {
            let now = self.pop.pages[p].at(now_ns);
            match self.mapping(p) {
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
