//! zram: swap into a compressed pool in DRAM, as Android does by default, optionally with
//! writeback of pool pages to a flash backing device (Linux's `CONFIG_ZRAM_WRITEBACK`,
//! enabled on recent Android devices).
//!
//! ```text
//! swap_out(p):
//!   while p's compressed size does not fit in the pool:
//!       writeback only: w = oldest incompressible page in the pool,
//!                           else the oldest page if idle (in the pool >= idle_age)
//!                       if w exists and today's budget is not spent:
//!                           decompress w, write it to flash, free its pool bytes
//!                       else: fail (the low-memory killer takes over)
//!       zram only: fail
//!   compress p into the pool
//! swap_in(p):
//!   p in the pool: decompress p; free its pool bytes
//!   p in flash (written back): read p from flash; free its flash slot
//! ```
//! zram frees a page's copy at every swap-in, whatever `slot_on_swap_in` says: Linux
//! marks zram `SWP_SYNCHRONOUS_IO` and faults on such devices skip the swap cache, so
//! the copy in the pool (or in the backing device) is dropped once the page is back, and
//! keeping compressed copies of pages already in DRAM would only waste the DRAM.
//!
//! Android triggers writeback from a daily maintenance job (mark all pages idle, write
//! back what is still idle hours later, within `writeback_limit`). Traces last minutes, so
//! here writeback runs when the pool is full, pages count as idle after `idle_age_ns`
//! (scaled down from hours) and the limit is a budget per day of trace time.

use super::Architecture;
use crate::core::swap::{SwapDevice, SwapSpace};
use crate::mm::swap::config::ZramConfig;
use crate::trace::PageId;
use crate::Result;

const NS_PER_DAY: u64 = 86_400 * 1_000_000_000;

struct Writeback {
    limit_per_day: u64,
    idle_age_ns: u64,
    day: u64,
    used_today: u64,
}

pub struct Zram {
    writeback: Option<Writeback>,
}

impl Zram {
    pub fn without_writeback() -> Self {
        Zram { writeback: None }
    }

    pub fn with_writeback(config: &ZramConfig) -> Self {
        Zram {
            writeback: Some(Writeback {
                limit_per_day: config.writeback_limit_pages_per_day,
                idle_age_ns: config.idle_age_ns,
                day: 0,
                used_today: 0,
            }),
        }
    }
}

impl Architecture for Zram {
    fn name(&self) -> &'static str {
        match self.writeback {
            None => "zram",
            Some(_) => "zram-writeback",
        }
    }

    fn swap_out(&mut self, space: &mut SwapSpace<'_>, page: PageId, now_ns: u64) -> Result<bool> {
        loop {
            if space.zram_store(page, now_ns)? {
                return Ok(true);
            }
            let Some(writeback) = &mut self.writeback else {
                return Ok(false);
            };
            let day = now_ns / NS_PER_DAY;
            if day != writeback.day {
                writeback.day = day;
                writeback.used_today = 0;
            }
            if writeback.used_today >= writeback.limit_per_day {
                return Ok(false);
            }
            let Some(victim) = space.writeback_candidate(now_ns, writeback.idle_age_ns) else {
                return Ok(false);
            };
            space.writeback(victim)?;
            writeback.used_today += 1;
        }
    }

    fn swap_in(&mut self, space: &mut SwapSpace<'_>, page: PageId) -> Result<SwapDevice> {
        let device = space.read(page)?;
        space.free(page);
        Ok(device)
    }
}
