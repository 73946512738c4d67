//! One file a policy. Each policy's doc comment names its source and keeps its
//! pseudocode beside the code.

pub mod app_aware;
pub mod arc;
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
