//! Dense page ids: a trace's page ids renumbered in the order they are first seen, so
//! that per-page state is sized by the pages a run has seen, never by the largest id a
//! file names.
//!
//! A `.mmt` file's page ids are indices into its page table, which comes after the
//! records: a stream's records are used before the table that would bound them is read,
//! so one record naming page 134,000,000 would otherwise make every per-page vector
//! 134 million entries long. Traces that mobmem interns (CSV, `.lis`, oracleGeneral, and
//! `.mmt` files it wrote from them) already number pages in first-seen order; for them
//! the renumbering is the identity, and the fast path is one comparison.
//!
//! Ids below [`DenseIds::prefix`] came in order and map to themselves. Past the first id
//! out of order, ids are looked up in a vector indexed by id while the ids stay within
//! [`NEAR_PER_PAGE`] times the pages seen (plus [`NEAR_ALLOWANCE`]), so that a trace
//! whose ids are merely shuffled costs one load; ids beyond that go to a hash map. Either
//! way the memory is a small multiple of the distinct pages seen.

use hashbrown::HashMap;

use crate::trace::PageId;

/// Most entries of the vector of ids out of order, per distinct page seen: past it, ids
/// go to the map, so that a few huge ids cannot make the vector huge.
pub const NEAR_PER_PAGE: usize = 8;
/// Entries of that vector allowed whatever the pages seen (256 KiB of ids).
pub const NEAR_ALLOWANCE: usize = 1 << 16;

const NONE: PageId = PageId::MAX;

/// A renumbering of page ids in first-seen order (module documentation).
#[derive(Debug, Clone, Default)]
pub struct DenseIds {
    /// Ids below this were first seen in order: each maps to itself.
    prefix: PageId,
    /// Distinct ids seen: the next dense id.
    count: PageId,
    /// Per id (from 0, those below `prefix` unused): its dense id, or [`NONE`].
    near: Vec<PageId>,
    /// Dense ids of the ids past `near`.
    far: HashMap<PageId, PageId, foldhash::fast::FixedState>,
    /// The trace id of each dense id from `prefix` on.
    original: Vec<PageId>,
}

impl DenseIds {
    pub fn new() -> Self {
        Self::default()
    }

    /// Distinct ids seen.
    #[inline]
    pub fn len(&self) -> usize {
        self.count as usize
    }

    #[inline]
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// Whether every id so far was first seen in order, so that dense ids are trace ids.
    #[inline]
    pub fn is_identity(&self) -> bool {
        self.prefix == self.count
    }

    /// The dense id of trace id `id`, numbering it if it is new. `None` only when 2^32 - 1
    /// distinct ids were seen already (the last id, [`PageId::MAX`], is never handed out).
    #[inline]
    pub fn dense(&mut self, id: PageId) -> Option<PageId> {
        if id < self.prefix {
            return Some(id);
        }
        if id == self.prefix && self.is_identity() && id != NONE {
            self.prefix += 1;
            self.count += 1;
            return Some(id);
        }
        // Shuffled ids seen before: one load, inlined, as they are most requests then.
        if let Some(&dense) = self.near.get(id as usize) {
            if dense != NONE {
                return Some(dense);
            }
        }
        self.dense_out_of_order(id)
    }

    /// The dense id of `id` if it was seen (never numbers it: for prefetch hints).
    #[inline]
    pub fn get(&self, id: PageId) -> Option<PageId> {
        if id < self.prefix {
            return Some(id);
        }
        match self.near.get(id as usize) {
            Some(&dense) if dense != NONE => Some(dense),
            Some(_) => None,
            None => self.far.get(&id).copied(),
        }
    }

    /// Bring the entry that numbers `id` into the cache, ahead of [`DenseIds::get`] or
    /// [`DenseIds::dense`] (a hint; see [`crate::core::prefetch`]).
    #[inline]
    pub fn prefetch(&self, id: PageId) {
        if id >= self.prefix {
            crate::core::prefetch::prefetch(&self.near, id as usize);
        }
    }

    /// The trace id of dense id `dense`; an id never handed out is its own.
    #[inline]
    pub fn original(&self, dense: PageId) -> PageId {
        if dense < self.prefix {
            return dense;
        }
        self.original
            .get((dense - self.prefix) as usize)
            .copied()
            .unwrap_or(dense)
    }

    /// A new id out of order, or one past `near`.
    #[inline(never)]
    fn dense_out_of_order(&mut self, id: PageId) -> Option<PageId> {
        if let Some(dense) = self.get(id) {
            return Some(dense);
        }
        if self.count == NONE {
            return None;
        }
        let dense = self.count;
        self.count += 1;
        self.original.push(id);
        let index = id as usize;
        if index >= self.near.len() && index < self.near_limit() {
            self.grow_near(index + 1);
        }
        match self.near.get_mut(index) {
            Some(slot) => *slot = dense,
            None => {
                self.far.insert(id, dense);
            }
        }
        Some(dense)
    }

    /// Most entries `near` may have now.
    fn near_limit(&self) -> usize {
        NEAR_PER_PAGE
            .saturating_mul(self.count as usize)
            .saturating_add(NEAR_ALLOWANCE)
    }

    /// Grow `near` to at least `needed` entries (doubling, within the limit), moving the
    /// ids it now covers out of `far`.
    fn grow_near(&mut self, needed: usize) {
        let len = needed.max(self.near.len() * 2).min(self.near_limit());
        self.near.resize(len, NONE);
        let near = &mut self.near;
        self.far
            .retain(|&id, &mut dense| match near.get_mut(id as usize) {
                Some(slot) => {
                    *slot = dense;
                    false
                }
                None => true,
            });
    }

    /// Bytes held (for tests of memory bounds).
    pub fn bytes(&self) -> usize {
        let id = std::mem::size_of::<PageId>();
        (self.near.capacity() + self.original.capacity()) * id + self.far.capacity() * 2 * id
    }
}

/// `pages` with their ids renumbered as [`DenseIds`] numbers them in this order, or
/// `None` if that is the identity (every id first seen in order): the future an offline
/// policy is given, numbered as the requests that follow it will be.
pub fn renumber(pages: &[PageId]) -> Option<Vec<PageId>> {
    let mut ids = DenseIds::new();
    let in_order = pages
        .iter()
        .take_while(|&&page| ids.dense(page).is_some() && ids.is_identity())
        .count();
    if in_order == pages.len() {
        return None;
    }
    let mut ids = DenseIds::new();
    // An id past 2^32 - 1 distinct ones (which no trace of u32 ids can number) matches
    // no request.
    Some(
        pages
            .iter()
            .map(|&page| ids.dense(page).unwrap_or(PageId::MAX))
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_in_first_seen_order_map_to_themselves() {
        let mut ids = DenseIds::new();
        for id in [0, 1, 0, 2, 1, 3] {
            assert_eq!(ids.dense(id), Some(id));
        }
        assert!(ids.is_identity());
        assert_eq!(ids.len(), 4);
        assert_eq!(ids.bytes(), 0);
        assert_eq!(ids.original(2), 2);
    }

    #[test]
    fn ids_out_of_order_are_numbered_as_first_seen() {
        let mut ids = DenseIds::new();
        let seen: Vec<_> = [0, 1, 7, 1, 134_000_000, 2, 7, 134_000_000]
            .into_iter()
            .map(|id| ids.dense(id).unwrap())
            .collect();
        assert_eq!(seen, [0, 1, 2, 1, 3, 4, 2, 3]);
        assert!(!ids.is_identity());
        assert_eq!(ids.get(134_000_000), Some(3));
        assert_eq!(ids.get(5), None);
        assert_eq!(
            (0..5).map(|d| ids.original(d)).collect::<Vec<_>>(),
            [0, 1, 7, 134_000_000, 2]
        );
        // The huge id went to the map: the vector stays within its allowance.
        assert!(ids.bytes() < 4 * (NEAR_ALLOWANCE + 1024), "{}", ids.bytes());
    }

    #[test]
    fn ids_the_vector_grows_over_leave_the_map() {
        let mut ids = DenseIds::new();
        // Beyond the allowance at first, then within it once enough pages are seen.
        let big = (NEAR_ALLOWANCE + 100) as PageId;
        assert_eq!(ids.dense(big), Some(0));
        for id in 1..=(NEAR_ALLOWANCE as PageId / 4) {
            ids.dense(big + id);
        }
        assert!(ids.far.is_empty(), "{} ids left in the map", ids.far.len());
        assert_eq!(ids.get(big), Some(0));
        assert_eq!(ids.original(0), big);
    }

    #[test]
    fn a_future_in_order_is_kept() {
        assert_eq!(renumber(&[0, 1, 0, 2]), None);
        assert_eq!(renumber(&[]), None);
        assert_eq!(renumber(&[5, 1, 5, 0]), Some(vec![0, 1, 0, 2]));
    }

    #[test]
    fn the_last_id_is_numbered_like_any_other() {
        let mut ids = DenseIds::new();
        assert_eq!(ids.dense(PageId::MAX), Some(0));
        assert_eq!(ids.dense(0), Some(1));
        assert_eq!(ids.get(PageId::MAX), Some(0));
    }
}
