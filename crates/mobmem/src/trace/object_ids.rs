//! Dense page ids for traces that name each page by one 64-bit number (a libCacheSim
//! object id, a block number of a `.lis` trace), interned a batch at a time.
//!
//! A general [`Interner`](super::Interner) keeps the keys in its page table and only
//! ids in its hash table, so a lookup reads two scattered places: the table's slot,
//! then the key it points to. Here each slot holds the key beside its id, so a lookup
//! reads one slot, and a batch asks for the slot of the key [`AHEAD`] places later
//! while it looks up the current one, so that the memory reads of neighbouring lookups
//! overlap instead of queuing one behind the other. On a trace of random object ids the
//! lookup is the largest cost of a cache simulation; this halves it.
//!
//! Memory is what bounds a trace of millions of objects, so the table is [`SHARDS`]
//! tables (a key's shard is its hash's top bits), each grown by [`GROWTH`] on its own
//! when it is [`GROW_AT_LOAD`] full. One table that doubles holds both copies while it
//! grows (three times what the keys need), then sits half empty; a shard that grows
//! holds a sixty-fourth of that. The shards' sizes are staggered (shard `i` starts at
//! `GROWTH^(i / SHARDS)` times the first), so that they do not all grow at the same
//! number of keys: the table's size follows the keys smoothly, at about 17.5 bytes a key
//! (12-byte slots at an average load of 0.69), whatever the count. A key is
//! rehashed about twice over the run (1 / (GROWTH - 1)), against once for doubling.
//! Within a shard a slot is found by multiplying the hash's low bits by the shard's
//! length (Lemire's "fast range"), so lengths need not be powers of two, and probing is
//! linear. The page keys of [`Tables`] are only made when asked for.

use super::{Interner, PageId, PageKey, ProcId, Tables};

/// How many keys ahead of the current one a batch touches the slot of.
const AHEAD: usize = 32;

/// Marks an empty slot: no key gets this id ([`ObjectIds::ids`] stops before it).
const EMPTY: PageId = PageId::MAX;

/// Shards of the table, by the top [`SHARD_BITS`] bits of a key's hash.
const SHARD_BITS: u32 = 6;
const SHARDS: usize = 1 << SHARD_BITS;

/// A shard grows when a new key would fill more than this share of its slots
/// (numerator, denominator). Linear probing at the fullest takes about four probes to
/// find a key and about twenty to place a new one (Knuth's estimates), mostly in the same
/// few cache lines; keys are found far more often than placed.
const GROW_AT_LOAD: (usize, usize) = (17, 20);

/// What a full shard's length is multiplied by (numerator, denominator).
const GROWTH: (usize, usize) = (3, 2);

/// Slots of the smallest shard at the start.
const FIRST_SLOTS: f64 = 16.0;

/// 12 bytes: aligned to 4 so that the table holds no padding.
#[derive(Debug, Clone, Copy)]
#[repr(C, packed(4))]
struct Slot {
    key: u64,
    id: PageId,
}

const EMPTY_SLOT: Slot = Slot { key: 0, id: EMPTY };

/// The hash of a key (fixed, so that runs are alike, and of good quality on keys that
/// are consecutive or share their low bits).
#[inline]
fn hash(key: u64) -> u64 {
    const STATE: foldhash::fast::FixedState = foldhash::fast::FixedState::with_seed(0);
    use std::hash::BuildHasher;
    STATE.hash_one(key)
}

/// The shard of hash `h`.
#[inline]
fn shard_of(h: u64) -> usize {
    (h >> (64 - SHARD_BITS)) as usize
}

/// The home slot of hash `h` in a shard of `len` slots: the bits below the shard's,
/// scaled to the length.
#[inline]
fn home(h: u64, len: usize) -> usize {
    (((h << SHARD_BITS) as u128 * len as u128) >> 64) as usize
}

/// One shard: open addressing with linear probing.
#[derive(Debug, Default)]
struct Shard {
    slots: Vec<Slot>,
    /// Keys held.
    used: usize,
    /// Keys it holds before it grows ([`GROW_AT_LOAD`] of its slots).
    room: usize,
}

impl Shard {
    /// An empty shard of `len` slots.
    fn with_len(len: usize) -> Self {
        Shard {
            slots: vec![EMPTY_SLOT; len],
            used: 0,
            room: len * GROW_AT_LOAD.0 / GROW_AT_LOAD.1,
        }
    }

    /// The slot holding `key` (hash `h`), or the empty one where it would go: the first
    /// of either from its home slot on, wrapping around (a shard is never full).
    #[inline]
    fn find(&self, key: u64, h: u64) -> usize {
        let start = home(h, self.slots.len());
        let stops = |s: &Slot| s.id == EMPTY || s.key == key;
        match self.slots[start..].iter().position(stops) {
            Some(i) => start + i,
            None => self.slots[..start].iter().position(stops).unwrap_or(0),
        }
    }

    /// Rebuild at [`GROWTH`] times the length.
    fn grow(&mut self) {
        let len = (self.slots.len() * GROWTH.0 / GROWTH.1).max(self.slots.len() + 1);
        let old = std::mem::replace(self, Shard::with_len(len));
        for slot in old.slots.into_iter().filter(|s| s.id != EMPTY) {
            let at = self.find(slot.key, hash(slot.key));
            self.slots[at] = slot;
        }
        self.used = old.used;
    }
}

/// Dense ids of 64-bit keys, in the order keys are first seen.
#[derive(Debug)]
pub struct ObjectIds {
    shards: Vec<Shard>,
    /// Keys interned so far (the next id).
    len: usize,
    /// The current batch's hashes, reused.
    hashes: Vec<u64>,
    /// With [`ObjectIds::with_runs`]: the key of each id, by id.
    by_id: Option<Vec<u64>>,
}

impl Default for ObjectIds {
    fn default() -> Self {
        // Staggered first lengths: 16 slots times GROWTH^(i / SHARDS), rounded.
        let growth = GROWTH.0 as f64 / GROWTH.1 as f64;
        let shards = (0..SHARDS)
            .map(|i| {
                let len = FIRST_SLOTS * growth.powf(i as f64 / SHARDS as f64);
                Shard::with_len(len.round() as usize)
            })
            .collect();
        ObjectIds {
            shards,
            len: 0,
            hashes: Vec::new(),
            by_id: None,
        }
    }
}

impl ObjectIds {
    pub fn new() -> Self {
        Self::default()
    }

    /// Ids for keys that come in runs (`k`, `k + 1`, ...: the pages of a block
    /// request): each key's id is also kept by id (8 bytes more a key), so that a key one
    /// past the one before it, whose id is one past that one's, is found with one
    /// comparison instead of a lookup in the table (a cache miss a page of a large
    /// request, on a table of millions). The ids are the same.
    pub fn with_runs() -> Self {
        ObjectIds {
            by_id: Some(Vec::new()),
            ..Self::default()
        }
    }

    /// Distinct keys interned.
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Append the id of every key of `keys` to `out`, giving each key not seen before
    /// the next id. `Err(i)` when the ids run out at `keys[i]` (`out` then holds the ids
    /// of the keys before it).
    pub fn ids(&mut self, keys: &[u64], out: &mut Vec<PageId>) -> Result<(), usize> {
        out.reserve(keys.len());
        let mut hashes = std::mem::take(&mut self.hashes);
        hashes.clear();
        hashes.extend(keys.iter().map(|&k| hash(k)));
        let mut result = Ok(());
        let first_out = out.len();
        for (i, (&key, &h)) in keys.iter().zip(&hashes).enumerate() {
            if let Some(by_id) = &self.by_id {
                // The next key of a run whose next id holds it.
                if i > 0 && key == keys[i - 1].wrapping_add(1) {
                    let next = out[first_out + i - 1] as usize + 1;
                    if by_id.get(next) == Some(&key) {
                        out.push(next as PageId);
                        continue;
                    }
                }
            }
            if let Some(&later) = hashes.get(i + AHEAD) {
                self.touch(later);
            }
            match self.id(key, h) {
                Some(id) => out.push(id),
                None => {
                    result = Err(i);
                    break;
                }
            }
        }
        self.hashes = hashes;
        result
    }

    /// Bring the slot `h` starts at into the processor's cache before its lookup.
    #[inline]
    fn touch(&self, h: u64) {
        let slots = &self.shards[shard_of(h)].slots;
        crate::core::prefetch::prefetch(slots, home(h, slots.len()));
    }

    #[inline]
    fn id(&mut self, key: u64, h: u64) -> Option<PageId> {
        let shard = &mut self.shards[shard_of(h)];
        let mut at = shard.find(key, h);
        if shard.slots[at].id != EMPTY {
            return Some(shard.slots[at].id);
        }
        let id = PageId::try_from(self.len).ok().filter(|&id| id != EMPTY)?;
        if shard.used == shard.room {
            shard.grow();
            at = shard.find(key, h);
        }
        shard.slots[at] = Slot { key, id };
        shard.used += 1;
        self.len += 1;
        if let Some(by_id) = &mut self.by_id {
            by_id.push(key);
        }
        Some(id)
    }

    /// The keys by id.
    pub fn keys(&self) -> Vec<u64> {
        if let Some(by_id) = &self.by_id {
            return by_id.clone();
        }
        let mut keys = vec![0; self.len];
        for shard in &self.shards {
            for slot in shard.slots.iter().filter(|s| s.id != EMPTY) {
                keys[slot.id as usize] = slot.key;
            }
        }
        keys
    }

    /// Bytes held: the slots, and the keys by id when kept.
    pub fn bytes(&self) -> usize {
        let slots: usize = self.shards.iter().map(|s| s.slots.capacity()).sum();
        slots * std::mem::size_of::<Slot>() + self.by_id.as_ref().map_or(0, |k| k.capacity() * 8)
    }
}

/// What a trace of objects requested by one process (pid 0, no name) interns, as the
/// cache traces do (`.lis`, oracleGeneral): the page ids of its object ids, each page
/// `PageKey::file(0, key)`, and the process, at its first request.
#[derive(Debug, Default)]
pub struct ObjectTrace {
    ids: ObjectIds,
    /// The one process.
    interner: Interner,
    proc: Option<ProcId>,
}

impl ObjectTrace {
    /// The process, interned at the first call (`None`: it cannot be).
    pub fn process(&mut self) -> Option<ProcId> {
        if self.proc.is_none() {
            self.proc = self.interner.process(0);
        }
        self.proc
    }

    /// [`ObjectIds::ids`] of `keys`.
    pub fn page_ids(&mut self, keys: &[u64], out: &mut Vec<PageId>) -> Result<(), usize> {
        self.ids.ids(keys, out)
    }

    /// Whether the process was interned: some object was requested.
    pub fn started(&self) -> bool {
        self.proc.is_some()
    }

    /// The tables of the requests interned so far.
    pub fn tables(&self) -> Tables {
        Tables {
            pages: self
                .ids
                .keys()
                .into_iter()
                .map(|k| PageKey::file(0, k))
                .collect(),
            processes: self.interner.tables().processes.clone(),
        }
    }
}

/// What one fixed-size record of an object trace says.
#[derive(Debug, Clone, Copy)]
pub struct ObjectRecord {
    pub id: u64,
    pub size: u32,
    pub time_ns: u64,
    pub write: bool,
}

/// Why a batch of records could not become events.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum DecodeError {
    /// The trace's one process could not be interned.
    NoProcess,
    /// The record at this index of the batch names one object more than the page ids hold.
    IdsExhausted(usize),
}

impl DecodeError {
    /// The index in the file of the record at fault, given the index of the batch's
    /// first record.
    pub(crate) fn record(self, first: u64) -> u64 {
        match self {
            DecodeError::NoProcess => 0,
            DecodeError::IdsExhausted(i) => first + i as u64,
        }
    }

    /// What went wrong; `what` names a record's object (`objects`, `blocks`).
    pub(crate) fn message(self, what: &str) -> String {
        match self {
            DecodeError::NoProcess => "cannot allocate the trace's process".into(),
            DecodeError::IdsExhausted(_) => {
                format!("more distinct {what} than the 2^32 - 1 page ids")
            }
        }
    }
}

/// The binary object traces' common step (oracleGeneral, vscsi, twr): a batch of
/// fixed-size records becomes one access event each, by one process, with the objects'
/// sizes, ids interned a batch at a time ([`ObjectIds::ids`]).
#[derive(Debug, Default)]
pub(crate) struct ObjectRecords {
    interned: ObjectTrace,
    /// Scratch of the current batch: object ids, their page ids, their sizes.
    objects: Vec<u64>,
    pages: Vec<PageId>,
    sizes: Vec<u32>,
}

impl ObjectRecords {
    /// The events of `records` (each `size` bytes, as `read` reads one) appended to
    /// `events`; their sizes replace [`ObjectRecords::sizes`].
    pub(crate) fn decode(
        &mut self,
        records: &[u8],
        size: usize,
        read: impl Fn(&[u8]) -> ObjectRecord,
        events: &mut Vec<crate::trace::Event>,
    ) -> Result<(), DecodeError> {
        let proc = self.interned.process().ok_or(DecodeError::NoProcess)?;
        self.objects.clear();
        self.sizes.clear();
        for record in records.chunks_exact(size) {
            let r = read(record);
            self.objects.push(r.id);
            self.sizes.push(r.size);
        }
        self.pages.clear();
        self.interned
            .page_ids(&self.objects, &mut self.pages)
            .map_err(DecodeError::IdsExhausted)?;
        events.reserve(self.pages.len());
        for (record, &page) in records.chunks_exact(size).zip(&self.pages) {
            let r = read(record);
            events.push(crate::trace::Event::access(
                r.time_ns, proc, page, r.write, false,
            ));
        }
        Ok(())
    }

    /// The sizes of the last batch's objects.
    pub(crate) fn sizes(&self) -> &[u32] {
        &self.sizes
    }

    /// The tables of the requests interned so far.
    pub(crate) fn tables(&self) -> Tables {
        self.interned.tables()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn ids_are_dense_in_order_of_first_sight() {
        let mut ids = ObjectIds::new();
        let mut out = Vec::new();
        ids.ids(&[7, 9, 7, u64::MAX, 0, 9], &mut out).unwrap();
        assert_eq!(out, [0, 1, 0, 2, 3, 1]);
        assert_eq!(ids.keys(), [7, 9, u64::MAX, 0]);
    }

    /// The table's bytes follow the keys: past the first shards' growth, never more than
    /// 20 bytes a key at any count (12-byte slots at a load of 0.6 or more), where one
    /// table that doubled would reach 32 right after it grew (and 48 while it grew).
    #[test]
    fn memory_follows_the_keys_smoothly() {
        let mut ids = ObjectIds::new();
        let mut out = Vec::new();
        let mut key = 0x9e37_79b9_7f4a_7c15u64;
        let mut worst: f64 = 0.0;
        for _ in 0..200 {
            let batch: Vec<u64> = (0..2_000)
                .map(|_| {
                    key = key.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
                    key
                })
                .collect();
            out.clear();
            ids.ids(&batch, &mut out).unwrap();
            if ids.len() >= 50_000 {
                worst = worst.max(ids.bytes() as f64 / ids.len() as f64);
            }
        }
        assert_eq!(ids.len(), 400_000);
        assert!(worst <= 20.0, "{worst:.2} bytes a key");
    }

    proptest! {
        /// Against a map: the same ids, across batches and table growth, with and
        /// without the keys kept by id; keys come in runs (`k`, `k + 1`, ...) as the pages
        /// of block requests do, runs seen before and runs that overlap them.
        #[test]
        fn agrees_with_a_map(
            runs in prop::collection::vec(
                prop::collection::vec(
                    (prop_oneof![0u64..300, any::<u64>()], 1u64..6), 0..60),
                1..6),
            kept in any::<bool>(),
        ) {
            let batches: Vec<Vec<u64>> = runs
                .iter()
                .map(|b| b.iter().flat_map(|&(k, n)| (0..n).map(move |i| k.wrapping_add(i))).collect())
                .collect();
            let mut ids = if kept { ObjectIds::with_runs() } else { ObjectIds::new() };
            let mut model = std::collections::HashMap::new();
            for batch in &batches {
                let mut out = Vec::new();
                ids.ids(batch, &mut out).unwrap();
                let expected: Vec<PageId> = batch.iter().map(|&k| {
                    let next = model.len() as PageId;
                    *model.entry(k).or_insert(next)
                }).collect();
                prop_assert_eq!(out, expected);
            }
            prop_assert_eq!(ids.len(), model.len());
            let keys = ids.keys();
            for (k, id) in model {
                prop_assert_eq!(keys[id as usize], k);
            }
        }
    }
}
