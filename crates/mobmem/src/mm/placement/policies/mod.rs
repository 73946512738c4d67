//! One file a policy. Each policy's doc comment names its source and keeps its
//! pseudocode beside the code.

pub mod app_aware;
pub mod arc;
pub mod cacheus;
pub mod clock;
pub mod clock_counter;
pub mod clock_dwf;
pub mod cr_lfu;
pub mod fifo;
pub mod fifo_merge;
pub mod gdsf;
pub mod hyperbolic;
pub mod lecar;
pub mod lfu;
pub mod lfuda;
pub mod lhd;
pub mod lirs;
pub mod lru;
pub mod lru_k;
pub mod mq;
pub mod mru;
pub mod opt;
pub mod qdlp;
pub mod queued;
pub mod queues;
pub mod rand;
pub mod s3fifo;
pub mod sieve;
pub mod slru;
pub mod tiered;
pub mod two_q;
pub mod w_tinylfu;

#[cfg(test)]
pub(crate) mod testing;

use super::Tier;
use crate::trace::PageId;

/// [`super::CachePolicy::holds`] for a single-tier policy that marks a page not
/// resident by `absent` in a per-page vector (a page past its end is not resident).
pub(crate) fn held_unless<T: PartialEq>(per_page: &[T], page: PageId, absent: T) -> Option<Tier> {
    per_page
        .get(page as usize)
        .is_some_and(|entry| *entry != absent)
        .then_some(Tier::Dram)
}
