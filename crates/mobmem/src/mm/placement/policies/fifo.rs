//! FIFO: evict the page that entered memory first; a hit changes nothing.
//!
//! The oldest replacement policy; see Belady, "A study of replacement algorithms for a
//! virtual-storage computer", IBM Systems Journal 5(2), 1966, which measures it against
//! random and optimal replacement.
//!
//! ```text
//! on access(p):
//!   if p resident: hit                       (the queue is not reordered)
//!   else: while full, evict the back; insert p at the front; miss
//! ```
//! Per page: two `u32` links. With sizes in bytes, as libCacheSim's `FIFO`.

use super::queued::{OnHit, OneQueue, OneQueueRule};

/// FIFO's rule: a hit changes nothing, so the back is the first page in.
#[derive(Debug, Clone, Copy, Default)]
pub struct Arrival;

impl OneQueueRule for Arrival {
    const ON_HIT: OnHit = OnHit::Nothing;
}

/// FIFO: LRU's queue, not reordered by hits (front = newest arrival, back = next victim).
pub type Fifo = OneQueue<Arrival>;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mm::placement::policies::testing::{engine, evictions, hit_pattern, run_pages};

    #[test]
    fn evicts_first_in_even_if_recently_hit() {
        // capacity 3:
        //   1 2 3      three misses fill the queue            [3 2 1]
        //   1          hit, queue unchanged                   [3 2 1]
        //   4          miss, evicts 1 (first in) although hit [4 3 2]
        //   1          miss, evicts 2                         [1 4 3]
        //   3          hit                                    [1 4 3]
        let mut fifo = engine(Fifo::new(0), 3);
        let outcome = run_pages(&mut fifo, &[1, 2, 3, 1, 4, 1, 3]);
        assert_eq!(hit_pattern(&outcome), "mmmhmmh");
        assert_eq!(
            evictions(&outcome),
            vec![vec![], vec![], vec![], vec![], vec![1], vec![2], vec![]]
        );
        assert_eq!(fifo.policy().order(), vec![1, 4, 3]);
    }
}
