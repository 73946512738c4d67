//! The swap area: which device holds each swapped page's slot, every device's slots
//! and occupancy, the zram pool, and every device operation (the ledger of swap I/O);
//! and the one interface a swap architecture plugs into ([`Architecture`]).
//!
//! Architectures decide; the space does. Each operation here moves a page between
//! places and records the reads and writes it costs, so the counters always equal the
//! operations done, whatever the architecture. The invariant the space keeps: a page holds
//! at most one slot, on exactly one device (NVM, flash or the zram pool), and each
//! device's occupancy is the number of pages whose slot is on it. An operation that would
//! break it returns an error instead.
//!
//! The slots live in the memory's page table ([`PageTable::slot`]); the state of the
//! devices (occupancy, replacement order, the pool) in [`SwapSlots`]. An architecture
//! sees both through a [`SwapSpace`], borrowed from the memory for one operation. The
//! table's location of a swapped-out page follows its slot. A slot freed leaves the
//! location to the memory, which frees slots when it swaps a page in or its process
//! dies. Each page's owner (the process charged for it) is the table's.
//!
//! NVM slots are kept in the replacement order of the architecture: an LRU list (most
//! recent read or write first) or a CLOCK ring. Each slot has an access bit, set when the
//! slot is read; with slots kept on swap-in a new slot starts with its bit clear; with
//! slots freed on swap-in the bit is the page's history and survives its slots.

use serde::Serialize;

use super::clock::ClockRing;
use super::list::{Links, List};
pub use super::pages::SwapDevice;
use super::pages::{PageTable, NO_FRAME};
use crate::devices::swap::{SwapDevices, ZramSwap};
use crate::devices::PAGE_BYTES;
use crate::trace::{PageId, ProcId};
use crate::{Error, Result};

/// A read or a write of one page (for zram: a decompression or a compression).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum IoOp {
    Read,
    Write,
}

/// Why a device operation happened.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum IoCause {
    /// A page fault brought the page back to DRAM.
    SwapIn,
    /// Reclaim wrote the page out of DRAM.
    SwapOut,
    /// A page moved from flash into NVM (its data is in DRAM, so only the NVM write).
    Promote,
    /// An NVM victim moved down to flash: an NVM read and a flash write.
    Demote,
    /// A zram pool page written to the flash backing device: a decompression and a write.
    Writeback,
}

/// One device operation, for tests and traces of a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub struct IoRecord {
    pub page: PageId,
    pub device: SwapDevice,
    pub op: IoOp,
    pub cause: IoCause,
}

/// Device operation counts.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct IoCounts {
    pub nvm_reads: u64,
    pub nvm_writes: u64,
    pub flash_reads: u64,
    pub flash_writes: u64,
    pub zram_compressions: u64,
    pub zram_decompressions: u64,
    pub promotions: u64,
    pub demotions: u64,
    pub writebacks: u64,
}

/// The kinds of swap device operation in the one order every sum of their costs takes:
/// flash, then NVM, then zram; reads before writes, except that zram's compressions come
/// before its decompressions. A fixed order makes each total the same number wherever
/// it is computed.
const PRICE_ORDER: [(SwapDevice, IoOp); 6] = [
    (SwapDevice::Flash, IoOp::Read),
    (SwapDevice::Flash, IoOp::Write),
    (SwapDevice::Nvm, IoOp::Read),
    (SwapDevice::Nvm, IoOp::Write),
    (SwapDevice::Zram, IoOp::Write),
    (SwapDevice::Zram, IoOp::Read),
];

/// What one page operation on a swap device costs: its time, ns (device time for flash
/// and NVM, CPU time for zram's compression and decompression), and its energy, nJ.
/// Every swap cost is this price times a count, so each operation is priced once.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct OpPrice {
    pub ns: f64,
    pub nj: f64,
}

/// The price of one `op` on `device` by the profiles of `devices`.
pub fn op_price(devices: &SwapDevices, device: SwapDevice, op: IoOp) -> OpPrice {
    let (ns, nj) = match (device, op) {
        (SwapDevice::Flash, IoOp::Read) => (devices.flash.read_ns, devices.flash.read_nj),
        (SwapDevice::Flash, IoOp::Write) => (devices.flash.write_ns, devices.flash.write_nj),
        (SwapDevice::Nvm, IoOp::Read) => (devices.nvm.read_ns, devices.nvm.read_nj),
        (SwapDevice::Nvm, IoOp::Write) => (devices.nvm.write_ns, devices.nvm.write_nj),
        (SwapDevice::Zram, IoOp::Read) => (devices.zram.decompress_ns, devices.zram.decompress_nj),
        (SwapDevice::Zram, IoOp::Write) => (devices.zram.compress_ns, devices.zram.compress_nj),
    };
    OpPrice { ns, nj }
}

impl IoCounts {
    /// The operations counted since `earlier` (a copy of these counts taken before).
    pub fn since(&self, earlier: &IoCounts) -> IoCounts {
        let mut d = *self;
        for (now, then) in d.fields_mut().into_iter().zip(earlier.fields()) {
            *now = now.saturating_sub(then);
        }
        d
    }

    /// Add `other`'s operations to these.
    pub fn add_all(&mut self, other: &IoCounts) {
        for (sum, more) in self.fields_mut().into_iter().zip(other.fields()) {
            *sum += more;
        }
    }

    fn fields(&self) -> [u64; 9] {
        let c = self;
        [
            c.nvm_reads,
            c.nvm_writes,
            c.flash_reads,
            c.flash_writes,
            c.zram_compressions,
            c.zram_decompressions,
            c.promotions,
            c.demotions,
            c.writebacks,
        ]
    }

    fn fields_mut(&mut self) -> [&mut u64; 9] {
        let c = self;
        [
            &mut c.nvm_reads,
            &mut c.nvm_writes,
            &mut c.flash_reads,
            &mut c.flash_writes,
            &mut c.zram_compressions,
            &mut c.zram_decompressions,
            &mut c.promotions,
            &mut c.demotions,
            &mut c.writebacks,
        ]
    }

    /// Operations of one kind.
    pub fn count(&self, device: SwapDevice, op: IoOp) -> u64 {
        let mut counts = *self;
        *counts.counter(device, op)
    }

    /// Total time, ns, of the operations whose kind `keep` accepts, priced by `devices`.
    pub fn time_ns(&self, devices: &SwapDevices, keep: impl Fn(SwapDevice, IoOp) -> bool) -> f64 {
        self.total(devices, keep, |p| p.ns)
    }

    /// Total energy, nJ, of the operations whose kind `keep` accepts.
    pub fn energy_nj(&self, devices: &SwapDevices, keep: impl Fn(SwapDevice, IoOp) -> bool) -> f64 {
        self.total(devices, keep, |p| p.nj)
    }

    fn total(
        &self,
        devices: &SwapDevices,
        keep: impl Fn(SwapDevice, IoOp) -> bool,
        figure: impl Fn(OpPrice) -> f64,
    ) -> f64 {
        PRICE_ORDER
            .iter()
            .filter(|&&(device, op)| keep(device, op))
            .map(|&(device, op)| {
                self.count(device, op) as f64 * figure(op_price(devices, device, op))
            })
            .fold(0.0, |sum, cost| sum + cost)
    }

    fn add(&mut self, device: SwapDevice, op: IoOp) {
        *self.counter(device, op) += 1;
    }

    fn counter(&mut self, device: SwapDevice, op: IoOp) -> &mut u64 {
        match (device, op) {
            (SwapDevice::Nvm, IoOp::Read) => &mut self.nvm_reads,
            (SwapDevice::Nvm, IoOp::Write) => &mut self.nvm_writes,
            (SwapDevice::Flash, IoOp::Read) => &mut self.flash_reads,
            (SwapDevice::Flash, IoOp::Write) => &mut self.flash_writes,
            (SwapDevice::Zram, IoOp::Read) => &mut self.zram_decompressions,
            (SwapDevice::Zram, IoOp::Write) => &mut self.zram_compressions,
        }
    }
}

/// How NVM slots are ordered for replacement.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NvmOrder {
    /// Least recently read or written slot first.
    Lru,
    /// A CLOCK ring over the slots with their access bits.
    Clock,
}

/// Owner of a page not yet touched.
pub use super::pages::NO_OWNER;

/// The NVM's slots in replacement order.
#[derive(Debug, Clone)]
struct NvmSlots {
    capacity: usize,
    order: NvmOrder,
    used: usize,
    /// LRU order, front = most recent.
    links: Links,
    lru: List,
    /// CLOCK order: the slots in a ring (its own reference bits unused: the access bits
    /// are the space's, as they may outlive a slot).
    ring: ClockRing,
}

impl NvmSlots {
    fn new(capacity: usize, order: NvmOrder, pages: usize) -> Self {
        let clock = order == NvmOrder::Clock;
        NvmSlots {
            capacity,
            order,
            used: 0,
            links: Links::with_pages(if clock { 0 } else { pages }),
            lru: List::new(),
            ring: ClockRing::new(capacity, if clock { pages } else { 0 }),
        }
    }

    fn is_full(&self) -> bool {
        self.used >= self.capacity
    }

    /// Put `page` in a free slot; the caller made sure there is one.
    fn insert(&mut self, page: PageId) {
        match self.order {
            NvmOrder::Lru => self.links.push_front(&mut self.lru, page),
            NvmOrder::Clock => {
                self.ring.insert(page);
            }
        }
        self.used += 1;
    }

    fn remove(&mut self, page: PageId) {
        match self.order {
            NvmOrder::Lru => self.links.remove(&mut self.lru, page),
            NvmOrder::Clock => {
                self.ring.remove_page(page);
            }
        }
        self.used -= 1;
    }

    /// A read or write of the slot: the most recent for LRU (CLOCK only looks at bits).
    fn touch(&mut self, page: PageId) {
        if self.order == NvmOrder::Lru {
            self.links.move_to_front(&mut self.lru, page);
        }
    }

    /// The slot to empty when NVM is full. CLOCK: sweep from the hand, clearing access
    /// bits that are set, and take the first page whose bit is clear; the hand moves past
    /// it, so the page that takes its frame gets a whole revolution. `None` only if NVM
    /// is empty.
    fn victim(&mut self, accessed: &mut [bool]) -> Option<PageId> {
        match self.order {
            NvmOrder::Lru => self.lru.back(),
            NvmOrder::Clock => {
                let frame = self
                    .ring
                    .sweep(|page, _| std::mem::replace(&mut accessed[page as usize], false))?;
                self.ring.page(frame)
            }
        }
    }

    /// The pages in replacement order: LRU from the most recent, CLOCK from the hand.
    fn order_view(&self) -> Vec<PageId> {
        match self.order {
            NvmOrder::Lru => self.links.iter(&self.lru).collect(),
            NvmOrder::Clock => self.ring.from_hand().map(|(page, _)| page).collect(),
        }
    }
}

/// The zram pool: compressed pages in DRAM, oldest first for writeback.
#[derive(Debug, Clone)]
struct ZramPool {
    capacity_bytes: u64,
    used_bytes: u64,
    compressed_bytes: u64,
    /// A page is incompressible when its hash falls below this.
    huge_threshold: u64,
    links: Links,
    /// Compressible and incompressible pages, each front = newest.
    normal: List,
    huge: List,
    stored_at: Vec<u64>,
    /// Pool pages of each owner, for the low-memory killer.
    owner_pages: Vec<u32>,
    /// Bytes each page takes in the pool, from its real contents
    /// ([`SwapSpace::set_zram_sizes`]); [`UNKNOWN_SIZE`] (or no entry) for a page whose
    /// contents are not known, which takes the fixed compressed size.
    real_sizes: Vec<u32>,
}

/// A page whose stored size in zram is not known from its contents.
pub const UNKNOWN_SIZE: u32 = u32::MAX;

/// A fixed mixing of a page id: which pages compress is a property of the page, the same
/// in every run.
fn page_hash(page: PageId) -> u64 {
    crate::core::mix64(page as u64)
}

impl ZramPool {
    fn new(pool_pages: usize, zram: &ZramSwap) -> Self {
        let share = zram.incompressible_share.clamp(0.0, 1.0);
        ZramPool {
            // Saturating: a pool far larger than any trace never fills.
            capacity_bytes: (pool_pages as u64).saturating_mul(PAGE_BYTES),
            used_bytes: 0,
            compressed_bytes: zram.compressed_bytes(),
            huge_threshold: if share >= 1.0 {
                u64::MAX
            } else {
                (share * 2f64.powi(64)) as u64
            },
            links: Links::with_pages(0),
            normal: List::new(),
            huge: List::new(),
            stored_at: Vec::new(),
            owner_pages: Vec::new(),
            real_sizes: Vec::new(),
        }
    }

    fn real_size(&self, page: PageId) -> Option<u64> {
        match self.real_sizes.get(page as usize) {
            Some(&s) if s != UNKNOWN_SIZE => Some(s as u64),
            _ => None,
        }
    }

    fn is_huge(&self, page: PageId) -> bool {
        match self.real_size(page) {
            Some(s) => s >= PAGE_BYTES,
            None => page_hash(page) < self.huge_threshold,
        }
    }

    fn size_of(&self, page: PageId) -> u64 {
        if let Some(s) = self.real_size(page) {
            return s;
        }
        if self.is_huge(page) {
            PAGE_BYTES
        } else {
            self.compressed_bytes
        }
    }
}

/// The swap devices' state: NVM slots in replacement order, flash occupancy, the zram
/// pool, the slots' access bits, and the count of every device operation. Which page
/// holds which slot is the page table's.
#[derive(Debug, Clone)]
pub struct SwapSlots {
    keep_slots: bool,
    accessed: Vec<bool>,
    nvm: NvmSlots,
    flash_used: usize,
    pool: ZramPool,
    counts: IoCounts,
    log: Option<Vec<IoRecord>>,
}

impl SwapSlots {
    /// Empty devices: NVM of `nvm_pages` slots in `nvm_order`, flash unbounded, a zram
    /// pool of `pool_pages` pages of compressed data priced by `zram`. `pages` sizes the
    /// per-page state (it grows on demand).
    pub fn new(
        nvm_pages: usize,
        nvm_order: NvmOrder,
        pool_pages: usize,
        zram: &ZramSwap,
        keep_slots: bool,
        pages: usize,
    ) -> Self {
        SwapSlots {
            keep_slots,
            accessed: vec![false; pages],
            nvm: NvmSlots::new(nvm_pages, nvm_order, pages),
            flash_used: 0,
            pool: ZramPool::new(pool_pages, zram),
            counts: IoCounts::default(),
            log: None,
        }
    }

    /// Flash only: no NVM, no pool.
    pub fn flash_only(pages: usize) -> Self {
        Self::new(0, NvmOrder::Clock, 0, &ZramSwap::default(), false, pages)
    }

    /// The devices with the page table's slots, for one operation.
    pub fn space<'a>(&'a mut self, pages: &'a mut PageTable) -> SwapSpace<'a> {
        SwapSpace { slots: self, pages }
    }

    /// Record every device operation from now on (see [`SwapSlots::take_log`]).
    pub fn enable_log(&mut self) {
        self.log.get_or_insert_with(Vec::new);
    }

    /// The operations recorded since the last call.
    pub fn take_log(&mut self) -> Vec<IoRecord> {
        self.log.as_mut().map(std::mem::take).unwrap_or_default()
    }

    fn record(&mut self, page: PageId, device: SwapDevice, op: IoOp, cause: IoCause) {
        self.counts.add(device, op);
        if let Some(log) = &mut self.log {
            log.push(IoRecord {
                page,
                device,
                op,
                cause,
            });
        }
    }

    /// Whether NVM and flash slots survive a swap-in.
    pub fn keeps_slots(&self) -> bool {
        self.keep_slots
    }

    pub fn counts(&self) -> &IoCounts {
        &self.counts
    }

    /// The access bit of `page`'s slot (or, with slots freed on swap-in, of the page).
    pub fn is_accessed(&self, page: PageId) -> bool {
        self.accessed.get(page as usize).copied().unwrap_or(false)
    }

    pub fn nvm_capacity(&self) -> usize {
        self.nvm.capacity
    }

    pub fn nvm_used(&self) -> usize {
        self.nvm.used
    }

    pub fn flash_used(&self) -> usize {
        self.flash_used
    }

    /// NVM pages in replacement order (LRU from the most recent, CLOCK from the hand).
    pub fn nvm_order(&self) -> Vec<PageId> {
        self.nvm.order_view()
    }

    /// Give the pool each page's stored size from its real contents (see
    /// [`crate::mm::swap::zram_pool`]), by page id; [`UNKNOWN_SIZE`] keeps the fixed
    /// compressed size for a page. Call before anything is stored.
    pub fn set_zram_sizes(&mut self, sizes: Vec<u32>) {
        debug_assert_eq!(self.pool.used_bytes, 0);
        self.pool.real_sizes = sizes;
    }

    /// Compressed bytes in the zram pool.
    pub fn pool_bytes(&self) -> u64 {
        self.pool.used_bytes
    }

    /// DRAM frames the zram pool occupies.
    pub fn pool_frames(&self) -> usize {
        self.pool.used_bytes.div_ceil(PAGE_BYTES) as usize
    }

    /// Pages of `owner` in the zram pool.
    pub fn pool_pages_of(&self, owner: ProcId) -> u32 {
        self.pool
            .owner_pages
            .get(owner as usize)
            .copied()
            .unwrap_or(0)
    }

    /// Pages in the zram pool.
    pub fn pool_pages(&self) -> usize {
        self.pool.normal.len() + self.pool.huge.len()
    }

    /// Whether `page` is stored uncompressed in zram.
    pub fn is_incompressible(&self, page: PageId) -> bool {
        self.pool.is_huge(page)
    }

    /// The next zram page to write back: the oldest incompressible page, else the oldest
    /// page if it has been in the pool at least `idle_age_ns`.
    pub fn writeback_candidate(&self, now_ns: u64, idle_age_ns: u64) -> Option<PageId> {
        if let Some(page) = self.pool.huge.back() {
            return Some(page);
        }
        let page = self.pool.normal.back()?;
        let stored = self.pool.stored_at[page as usize];
        (now_ns.saturating_sub(stored) >= idle_age_ns).then_some(page)
    }

    /// Check that the devices' occupancies equal the pages whose slots are on them (in
    /// `pages`) and that none is over capacity (tests: O(pages)).
    pub fn validate(&self, pages: &PageTable) -> Result<()> {
        let mut pool_bytes = 0;
        let mut in_zram = 0;
        for page in 0..pages.len() as PageId {
            if pages.slot(page) == Some(SwapDevice::Zram) {
                pool_bytes += self.pool.size_of(page);
                in_zram += 1;
            }
        }
        let problems = [
            (
                pages.count_slots(SwapDevice::Nvm) != self.nvm.used,
                "NVM occupancy differs from its pages",
            ),
            (
                self.nvm.used > self.nvm.capacity,
                "NVM holds more than its capacity",
            ),
            (
                pages.count_slots(SwapDevice::Flash) != self.flash_used,
                "flash occupancy differs from its pages",
            ),
            (
                in_zram != self.pool_pages(),
                "zram pool differs from its pages",
            ),
            (
                pool_bytes != self.pool.used_bytes,
                "zram pool bytes differ from its pages",
            ),
            (
                self.pool.used_bytes > self.pool.capacity_bytes,
                "zram pool holds more than its capacity",
            ),
            (
                self.nvm.order_view().len() != self.nvm.used,
                "NVM replacement order misses pages",
            ),
        ];
        match problems.iter().find(|(broken, _)| *broken) {
            Some((_, message)) => Err(Error::config("swap space", *message)),
            None => Ok(()),
        }
    }
}

/// One operation's view of the swap area: the devices' state and the page table that
/// holds each page's slot. What architectures work on.
pub struct SwapSpace<'a> {
    slots: &'a mut SwapSlots,
    pages: &'a mut PageTable,
}

impl std::ops::Deref for SwapSpace<'_> {
    type Target = SwapSlots;
    fn deref(&self) -> &SwapSlots {
        self.slots
    }
}

impl std::ops::DerefMut for SwapSpace<'_> {
    fn deref_mut(&mut self) -> &mut SwapSlots {
        self.slots
    }
}

impl SwapSpace<'_> {
    /// Check the devices against the page table's slots ([`SwapSlots::validate`]).
    pub fn validate(&self) -> Result<()> {
        self.slots.validate(self.pages)
    }

    fn ensure(&mut self, page: PageId) {
        if page as usize >= self.slots.accessed.len() {
            crate::core::ensure_index(&mut self.slots.accessed, page, false);
        }
        self.pages.ensure(page);
    }

    fn violation(&self, page: PageId, message: &str) -> Error {
        Error::config("swap space", format!("page {page}: {message}"))
    }

    /// The device holding `page`'s slot, if it has one.
    pub fn slot_of(&self, page: PageId) -> Option<SwapDevice> {
        self.pages.slot(page)
    }

    pub fn owner(&self, page: PageId) -> ProcId {
        self.pages.owner(page)
    }

    fn set_new_slot(&mut self, page: PageId, device: SwapDevice) {
        self.pages.set_slot(page, Some(device));
        // A swapped-out page moved by the architecture (demoted, written back) is where
        // its new slot is; a page in memory or outside the model stays where it is.
        if self.pages.location(page).is_swapped() {
            self.pages.place(page, device.location(), NO_FRAME);
        }
        // A new slot has not been read yet; with slots freed on swap-in, the bit is the
        // page's history instead and stays.
        if self.slots.keep_slots {
            self.slots.accessed[page as usize] = false;
        }
    }

    fn check_no_slot(&mut self, page: PageId) -> Result<()> {
        self.ensure(page);
        match self.slot_of(page) {
            None => Ok(()),
            Some(device) => Err(self.violation(
                page,
                &format!("would live in two places: it already has a slot on {device:?}"),
            )),
        }
    }

    /// Write `page`, which has no slot, to a new flash slot.
    pub fn write_flash(&mut self, page: PageId, cause: IoCause) -> Result<()> {
        self.check_no_slot(page)?;
        self.slots.flash_used += 1;
        self.set_new_slot(page, SwapDevice::Flash);
        self.slots
            .record(page, SwapDevice::Flash, IoOp::Write, cause);
        Ok(())
    }

    /// Write `page`, which has no slot, to a new NVM slot, first moving the replacement
    /// victim down to flash if NVM is full. `false` (and nothing done) when the NVM has no
    /// slots at all.
    pub fn admit_nvm(&mut self, page: PageId, cause: IoCause) -> Result<bool> {
        self.check_no_slot(page)?;
        if self.slots.nvm.capacity == 0 {
            return Ok(false);
        }
        if self.slots.nvm.is_full() {
            let slots = &mut *self.slots;
            let Some(victim) = slots.nvm.victim(&mut slots.accessed) else {
                return Err(self.violation(page, "NVM is full but has no victim"));
            };
            self.demote(victim)?;
        }
        self.slots.nvm.insert(page);
        self.set_new_slot(page, SwapDevice::Nvm);
        self.slots.record(page, SwapDevice::Nvm, IoOp::Write, cause);
        Ok(true)
    }

    /// Move `page` from its NVM slot down to a new flash slot: an NVM read and a flash
    /// write.
    pub fn demote(&mut self, page: PageId) -> Result<()> {
        if self.slot_of(page) != Some(SwapDevice::Nvm) {
            return Err(self.violation(page, "demoted from NVM but not in NVM"));
        }
        self.slots
            .record(page, SwapDevice::Nvm, IoOp::Read, IoCause::Demote);
        self.slots.nvm.remove(page);
        self.pages.set_slot(page, None);
        self.write_flash(page, IoCause::Demote)?;
        self.slots.counts.demotions += 1;
        Ok(())
    }

    /// Move `page`, which is in DRAM and has a flash slot, into NVM: the flash slot is
    /// freed and the DRAM copy written to NVM (making room by demotion). `false` (and
    /// nothing done) when the NVM has no slots.
    pub fn promote(&mut self, page: PageId) -> Result<bool> {
        if self.slot_of(page) != Some(SwapDevice::Flash) {
            return Err(self.violation(page, "promoted to NVM but not in flash"));
        }
        if self.slots.nvm.capacity == 0 {
            return Ok(false);
        }
        self.free(page);
        self.admit_nvm(page, IoCause::Promote)?;
        self.slots.counts.promotions += 1;
        Ok(true)
    }

    /// Write `page` again to the slot it holds on NVM or flash (its data changed).
    pub fn rewrite(&mut self, page: PageId) -> Result<()> {
        match self.slot_of(page) {
            Some(SwapDevice::Nvm) => {
                self.slots.nvm.touch(page);
                self.slots
                    .record(page, SwapDevice::Nvm, IoOp::Write, IoCause::SwapOut);
            }
            Some(SwapDevice::Flash) => {
                self.slots
                    .record(page, SwapDevice::Flash, IoOp::Write, IoCause::SwapOut)
            }
            _ => {
                return Err(self.violation(page, "rewritten in place but has no NVM or flash slot"))
            }
        }
        Ok(())
    }

    /// Read `page` from the device holding it for a swap-in (zram: decompress). Sets the
    /// slot's access bit. The slot stays; see [`SwapSpace::release_after_swap_in`].
    pub fn read(&mut self, page: PageId) -> Result<SwapDevice> {
        let Some(device) = self.slot_of(page) else {
            return Err(self.violation(page, "swapped in but held by no device"));
        };
        if device == SwapDevice::Nvm {
            self.slots.nvm.touch(page);
        }
        self.ensure(page);
        self.slots.accessed[page as usize] = true;
        self.slots.record(page, device, IoOp::Read, IoCause::SwapIn);
        Ok(device)
    }

    /// After a swap-in from NVM or flash: free the slot unless slots are kept.
    pub fn release_after_swap_in(&mut self, page: PageId) {
        if !self.slots.keep_slots {
            self.free(page);
        }
    }

    /// Release `page`'s slot, if any, without I/O (the page was swapped in and its copy
    /// is dropped, or its process died).
    pub fn free(&mut self, page: PageId) {
        match self.slot_of(page) {
            None => return,
            Some(SwapDevice::Nvm) => self.slots.nvm.remove(page),
            Some(SwapDevice::Flash) => self.slots.flash_used -= 1,
            Some(SwapDevice::Zram) => self.pool_remove(page),
        }
        self.pages.set_slot(page, None);
    }

    /// Forget everything about `page` (its process died): slot freed, access history
    /// cleared.
    pub fn discard(&mut self, page: PageId) {
        self.free(page);
        if let Some(bit) = self.slots.accessed.get_mut(page as usize) {
            *bit = false;
        }
    }

    /// Compress `page`, which has no slot, into the zram pool. `false` (and nothing done)
    /// when it does not fit.
    pub fn zram_store(&mut self, page: PageId, now_ns: u64) -> Result<bool> {
        self.check_no_slot(page)?;
        let owner = self.pages.owner(page);
        let pool = &mut self.slots.pool;
        let size = pool.size_of(page);
        if pool.used_bytes + size > pool.capacity_bytes {
            return Ok(false);
        }
        pool.used_bytes += size;
        let list = if pool.is_huge(page) {
            &mut pool.huge
        } else {
            &mut pool.normal
        };
        pool.links.push_front(list, page);
        crate::core::ensure_index(&mut pool.stored_at, page, 0);
        pool.stored_at[page as usize] = now_ns;
        if owner != NO_OWNER {
            crate::core::ensure_index(&mut pool.owner_pages, owner, 0);
            pool.owner_pages[owner as usize] += 1;
        }
        self.set_new_slot(page, SwapDevice::Zram);
        self.slots
            .record(page, SwapDevice::Zram, IoOp::Write, IoCause::SwapOut);
        Ok(true)
    }

    fn pool_remove(&mut self, page: PageId) {
        let owner = self.pages.owner(page);
        let pool = &mut self.slots.pool;
        pool.used_bytes -= pool.size_of(page);
        let list = if pool.is_huge(page) {
            &mut pool.huge
        } else {
            &mut pool.normal
        };
        pool.links.remove(list, page);
        if let Some(count) = pool.owner_pages.get_mut(owner as usize) {
            *count = count.saturating_sub(1);
        }
    }

    /// Write a zram pool page back to a new flash slot: decompress it, write the page.
    pub fn writeback(&mut self, page: PageId) -> Result<()> {
        if self.slot_of(page) != Some(SwapDevice::Zram) {
            return Err(self.violation(page, "written back but not in the zram pool"));
        }
        self.slots
            .record(page, SwapDevice::Zram, IoOp::Read, IoCause::Writeback);
        self.free(page);
        self.write_flash(page, IoCause::Writeback)?;
        self.slots.counts.writebacks += 1;
        Ok(())
    }
}

/// Where swapped pages go and how they move between devices: the swap mechanism, one
/// implementation per architecture (`mm::swap::ARCHITECTURES`).
///
/// Contracts:
/// - [`Architecture::swap_out`] is called for a page leaving DRAM whose data is not in
///   swap: it has no slot, or (with slots kept on swap-in) a stale slot on NVM or flash.
///   It MUST either leave the page with exactly one slot holding its data and return
///   `true`, or change nothing about the page and return `false` (no room: the memory
///   keeps the page and the machine falls back to the low-memory killer). It may move
///   other pages (demotions, writebacks).
/// - [`Architecture::swap_in`] is called for a page that has a slot. It MUST read the
///   page from the device holding it (once, with [`SwapSpace::read`]) and return that
///   device; it may then move or free the page's slot.
/// - Neither may panic, whatever the sequence of calls.
pub trait Architecture: Send {
    /// Registry name.
    fn name(&self) -> &'static str;

    /// `false` when there is no swap at all: memory pressure goes to the low-memory
    /// killer.
    fn swaps(&self) -> bool {
        true
    }

    fn swap_out(&mut self, space: &mut SwapSpace<'_>, page: PageId, now_ns: u64) -> Result<bool>;

    fn swap_in(&mut self, space: &mut SwapSpace<'_>, page: PageId) -> Result<SwapDevice>;
}

/// Flash-only swap: a swap area on the phone's storage, what a kernel with one swap
/// partition or file has.
///
/// ```text
/// swap_out(p):  if p has a (stale) flash slot: write p to it   (slots kept on swap-in)
///               else: write p to a new flash slot
/// swap_in(p):   read p from flash; free the slot unless slots are kept
/// ```
pub struct FlashOnly;

impl Architecture for FlashOnly {
    fn name(&self) -> &'static str {
        "flash"
    }

    fn swap_out(&mut self, space: &mut SwapSpace<'_>, page: PageId, _: u64) -> Result<bool> {
        match space.slot_of(page) {
            Some(_) => space.rewrite(page)?,
            None => space.write_flash(page, IoCause::SwapOut)?,
        }
        Ok(true)
    }

    fn swap_in(&mut self, space: &mut SwapSpace<'_>, page: PageId) -> Result<SwapDevice> {
        read_and_release(space, page)
    }
}

/// Read `page` back from the device holding it, then free its slot unless slots are kept.
pub fn read_and_release(space: &mut SwapSpace<'_>, page: PageId) -> Result<SwapDevice> {
    let device = space.read(page)?;
    space.release_after_swap_in(page);
    Ok(device)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Devices with NVM of `nvm` slots and a pool of 4 pages, slots kept on swap-in,
    /// with their page table.
    fn devices(nvm: usize, order: NvmOrder) -> (SwapSlots, PageTable) {
        let mut s = SwapSlots::new(nvm, order, 4, &ZramSwap::default(), true, 0);
        s.enable_log();
        (s, PageTable::default())
    }

    /// Each kind of operation is priced once, at its own profile's figures: counts of
    /// distinct primes per kind make every total a sum that names which kinds it took.
    #[test]
    fn swap_io_is_priced_once_per_operation_by_its_device() {
        let io = IoCounts {
            flash_reads: 2,
            flash_writes: 3,
            nvm_reads: 5,
            nvm_writes: 7,
            zram_decompressions: 11,
            zram_compressions: 13,
            promotions: 100,
            demotions: 100,
            writebacks: 100,
        };
        let d = SwapDevices::default();
        let (f, n, z) = (&d.flash, &d.nvm, &d.zram);
        let all = io.time_ns(&d, |_, _| true);
        assert_eq!(
            all,
            2.0 * f.read_ns
                + 3.0 * f.write_ns
                + 5.0 * n.read_ns
                + 7.0 * n.write_ns
                + 13.0 * z.compress_ns
                + 11.0 * z.decompress_ns
        );
        let writes = io.energy_nj(&d, |_, op| op == IoOp::Write);
        assert_eq!(
            writes,
            3.0 * f.write_nj + 7.0 * n.write_nj + 13.0 * z.compress_nj
        );
        let zram_cpu = io.time_ns(&d, |device, _| device == SwapDevice::Zram);
        assert_eq!(zram_cpu, 13.0 * z.compress_ns + 11.0 * z.decompress_ns);
        assert_eq!(io.time_ns(&d, |_, _| false), 0.0);
        // A read's price is the device's read; zram's is a decompression.
        let read = op_price(&d, SwapDevice::Zram, IoOp::Read);
        assert_eq!((read.ns, read.nj), (z.decompress_ns, z.decompress_nj));
        assert_eq!(io.count(SwapDevice::Zram, IoOp::Write), 13);
    }

    #[test]
    fn real_sizes_replace_the_fixed_ratio_for_the_pages_they_know() {
        // Pool of 4 pages (16 KiB). Page 0: same-filled (0 bytes), page 1: 1000 bytes,
        // page 2: huge (a whole page), page 3 unknown (the fixed compressed size).
        let (mut d, mut pages) = devices(0, NvmOrder::Lru);
        let mut s = d.space(&mut pages);
        s.set_zram_sizes(vec![0, 1000, PAGE_BYTES as u32, UNKNOWN_SIZE]);
        for page in 0..4 {
            assert!(s.zram_store(page, 0).unwrap());
        }
        let fixed = ZramSwap::default().compressed_bytes();
        assert_eq!(s.pool_bytes(), 1000 + PAGE_BYTES + fixed);
        assert!(s.is_incompressible(2) && !s.is_incompressible(1));
        s.validate().unwrap();
        s.free(2);
        assert_eq!(s.pool_bytes(), 1000 + fixed);
        s.validate().unwrap();
    }

    /// NVM of 2 slots in `order`: pages 1 and 2 enter, 1 is read, then 3 needs room and
    /// pushes one of them down. `check` looks at the space after, whose log holds only
    /// what admitting 3 did.
    fn admit_a_third_page(order: NvmOrder, check: impl FnOnce(&mut SwapSpace<'_>)) {
        let (mut d, mut pages) = devices(2, order);
        let mut s = d.space(&mut pages);
        for page in [1, 2] {
            assert!(s.admit_nvm(page, IoCause::SwapOut).unwrap());
        }
        assert_eq!(s.read(1).unwrap(), SwapDevice::Nvm);
        s.take_log();
        assert!(s.admit_nvm(3, IoCause::SwapOut).unwrap());
        check(&mut s);
        s.validate().unwrap();
    }

    #[test]
    fn clock_demotes_the_first_clear_bit_from_the_hand() {
        // 1 and 2 enter with clear bits; reading 1 sets its bit; for 3 the hand clears
        // 1's bit and demotes 2; 3 takes 2's frame, the hand moves past it.
        admit_a_third_page(NvmOrder::Clock, |s| {
            use {IoCause::*, IoOp::*, SwapDevice::*};
            let log: Vec<_> = s
                .take_log()
                .iter()
                .map(|r| (r.page, r.device, r.op, r.cause))
                .collect();
            assert_eq!(
                log,
                [
                    (2, Nvm, Read, Demote),
                    (2, Flash, Write, Demote),
                    (3, Nvm, Write, SwapOut)
                ]
            );
            // Frames from the hand: 1 (bit cleared), then 3.
            assert_eq!(s.nvm_order(), vec![1, 3]);
            assert!(!s.is_accessed(1));
            assert_eq!(s.slot_of(2), Some(SwapDevice::Flash));
            assert_eq!((s.nvm_used(), s.flash_used()), (2, 1));
        });
    }

    #[test]
    fn lru_demotes_the_least_recently_used_slot() {
        // Reading 1 makes 2 the least recent: 3 pushes 2 down.
        admit_a_third_page(NvmOrder::Lru, |s| {
            assert_eq!(s.nvm_order(), vec![3, 1]);
            assert_eq!(s.slot_of(2), Some(SwapDevice::Flash));
            assert_eq!(s.counts().demotions, 1);
        });
    }

    #[test]
    fn a_page_never_takes_a_second_slot() {
        let (mut d, mut pages) = devices(2, NvmOrder::Clock);
        let mut s = d.space(&mut pages);
        s.write_flash(5, IoCause::SwapOut).unwrap();
        let err = s.admit_nvm(5, IoCause::SwapOut).unwrap_err();
        assert!(err.to_string().contains("two places"), "{err}");
        assert!(s.read(6).is_err());
        assert!(s.demote(5).is_err());
        s.validate().unwrap();
    }

    #[test]
    fn zero_nvm_admits_nothing() {
        let (mut d, mut pages) = devices(0, NvmOrder::Clock);
        let mut s = d.space(&mut pages);
        assert!(!s.admit_nvm(1, IoCause::SwapOut).unwrap());
        assert_eq!(s.slot_of(1), None);
        assert!(s.take_log().is_empty());
    }

    #[test]
    fn zram_pool_counts_compressed_bytes() {
        // Pool of 4 pages = 16384 bytes; compressible pages take 1639 bytes, incompressible
        // ones 4096.
        let (mut d, mut pages) = devices(0, NvmOrder::Clock);
        let mut s = d.space(&mut pages);
        let mut stored = 0;
        let mut page = 0;
        while s.zram_store(page, 0).unwrap() {
            stored += s.pool.size_of(page);
            page += 1;
        }
        assert_eq!(s.pool_bytes(), stored);
        assert!(stored <= 4 * 4096 && stored + 4096 > 4 * 4096 - 1639);
        assert_eq!(s.pool_frames(), stored.div_ceil(4096) as usize);
        assert_eq!(
            s.slot_of(page),
            None,
            "the page that did not fit is nowhere"
        );
        s.validate().unwrap();
        // About 10% of pages are incompressible.
        let huge = (0..10_000).filter(|&p| s.is_incompressible(p)).count();
        assert!((800..1200).contains(&huge), "{huge}");
    }
}
