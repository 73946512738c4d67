//! `selective`: the paper's selective page cache (Song, Cha, KIISE, section 2 and its
//! Figure 2). A page stored raw that the page cache does not hold is read from flash
//! straight into the user buffer (`nocmpr_copy_to_user`) and is not cached, so it takes
//! no frame; a re-read goes to flash again. Compressed pages, and pages the page cache
//! holds whatever path brought them in, are read as on the stock path.

use super::page_cache::PageCacheRead;
use crate::mm::fs::read::{FilePage, FileSystem, PageCache, ReadCost};
use crate::Result;

/// The selective read path.
pub struct Selective;

impl FileSystem for Selective {
    fn read(&self, cache: &mut dyn PageCache, page: FilePage) -> Result<ReadCost> {
        if !page.stored.compressed && !cache.holds(page.id) {
            return Ok(ReadCost::to_user(&page.stored));
        }
        PageCacheRead.read(cache, page)
    }
}
