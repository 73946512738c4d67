//! `page-cache`: stock Linux and JFFS2. Every page is read through the page cache: a
//! page held is a hit; any other is read from flash into a new page-cache page (a
//! compressed one decompressed into it) and copied to the user, and stays cached until
//! reclaim evicts it.

use crate::mm::fs::read::{FilePage, FileSystem, PageCache, ReadCost};
use crate::Result;

/// The stock read path.
pub struct PageCacheRead;

impl FileSystem for PageCacheRead {
    fn read(&self, cache: &mut dyn PageCache, page: FilePage) -> Result<ReadCost> {
        let held = cache.holds(page.id);
        cache.access(page.id, false)?;
        Ok(if held {
            ReadCost::cache_hit(&page.stored)
        } else {
            ReadCost::into_page_cache(&page.stored)
        })
    }
}
