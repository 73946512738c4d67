//! `read()` calls rebuilt from their `mm_filemap_get_pages` batches (see the module
//! documentation of `ftrace`): each batch is linked to the one it continues, and the pages
//! of the last batch of a read are bounded at the end by what the capture shows of the
//! file's size.

use super::{AccessSource, FtraceImporter, Origin, READ_BATCH_FOLIOS};
use crate::trace::{Event, PageId, PageKey, ProcId};

/// What the capture shows of a file's size.
#[derive(Debug, Clone, Copy)]
pub(super) struct FileExtent {
    /// The highest page index seen in the file.
    pub(super) highest: u64,
    /// Pages of the file entered or left the page cache during the capture: it was read
    /// from storage, and readahead adds the pages a read needs up to the file's end.
    pub(super) cache_events: bool,
}

/// One `mm_filemap_get_pages` event: the pages `first..=last` asked for from this batch on.
#[derive(Debug, Clone, Copy)]
pub(super) struct ReadBatch {
    pub(super) owner: u64,
    pub(super) first: u64,
    pub(super) last: u64,
    /// The last page this batch read, when the next batch of the same read says it.
    pub(super) end: Option<u64>,
}

impl FtraceImporter {
    /// The capture shows that file `owner` has page `index`, by a page entering or
    /// leaving the page cache (`cache`) or by a read.
    pub(super) fn file_has(&mut self, owner: u64, index: u64, cache: bool) {
        let extent = self.file_extent.entry(owner).or_insert(FileExtent {
            highest: index,
            cache_events: cache,
        });
        extent.highest = extent.highest.max(index);
        extent.cache_events |= cache;
    }

    /// One `mm_filemap_get_pages` event of task `pid`: pages `first..=last` asked for.
    /// Its pages are decided in [`FtraceImporter::finish`]; here it is linked to the
    /// task's previous batch when it continues the same read.
    pub(super) fn read_batch(
        &mut self,
        pid: u32,
        time: u64,
        proc: ProcId,
        owner: u64,
        first: u64,
        last: u64,
    ) -> std::result::Result<(), String> {
        let id = u32::try_from(self.batches.len())
            .map_err(|_| "more than 2^32 mm_filemap_get_pages events".to_string())?;
        let continued = self.open_read.get(&pid).and_then(|&prev| {
            let p = self.batches[prev as usize];
            (p.owner == owner && p.last == last && p.first < first && first <= p.last)
                .then_some(prev)
        });
        // A continued batch now ends before this one's first page.
        let room = match continued {
            Some(prev) => self.batch_room - (self.batches[prev as usize].last - (first - 1)),
            None => self.batch_room,
        } + (last - first);
        // Stands for the batch's accesses until they are known. Taken before anything is
        // recorded: finish() reads every recorded batch's pages in the room kept here.
        let page = self.page_with_room(PageKey::file(owner, first), room)?;
        self.expand(room.saturating_sub(self.batch_room))?;
        self.batch_room = room;
        match continued {
            Some(prev) => self.batches[prev as usize].end = Some(first - 1),
            None => self.report.reads += 1,
        }
        // filemap_read() asks for pages only below the file's size: the first one exists.
        self.file_has(owner, first, false);
        self.open_read.insert(pid, id);
        self.batches.push(ReadBatch {
            owner,
            first,
            last,
            end: None,
        });
        self.push(
            Event::access(time, proc, page, false, false),
            Origin::ReadBatch(id),
        );
        Ok(())
    }

    /// The pages of every read batch, flat: batch i read `pages[starts[i]..starts[i + 1]]`,
    /// returned as `(pages, starts)`. The pages are listed, and marked as reached by the
    /// read path, only when the read path gives the accesses (`source`); the pages asked
    /// for past their file's known end are counted in the report either way.
    pub(super) fn batch_pages(&mut self, source: AccessSource) -> (Vec<PageId>, Vec<usize>) {
        let mut batch_pages: Vec<PageId> = Vec::new();
        let mut starts: Vec<usize> = Vec::with_capacity(self.batches.len() + 1);
        for b in &self.batches {
            starts.push(batch_pages.len());
            let end = match b.end {
                Some(end) => end,
                // The last batch of a read: up to the request's end or the file's known
                // end, whichever is lower (the first page is known to exist).
                None => {
                    let bound = match self.file_extent.get(&b.owner) {
                        Some(e) if e.cache_events => e.highest.max(b.first),
                        Some(e) => e.highest.max(b.first + READ_BATCH_FOLIOS - 1),
                        None => b.first + READ_BATCH_FOLIOS - 1,
                    };
                    let end = b.last.min(bound);
                    self.report.read_pages_past_known_end += b.last - end;
                    end
                }
            };
            if source != AccessSource::ReadPath {
                continue;
            }
            for index in b.first..=end {
                let page = self
                    .interner
                    .page(PageKey::file(b.owner, index))
                    .expect("read_batch() recorded the batch only with room kept for its pages");
                mark_page(&mut self.read_path_pages, page);
                batch_pages.push(page);
            }
        }
        starts.push(batch_pages.len());
        (batch_pages, starts)
    }
}

/// Set `page`'s flag, growing `flags` to reach it.
pub(super) fn mark_page(flags: &mut Vec<bool>, page: PageId) {
    let i = page as usize;
    if flags.len() <= i {
        flags.resize(i + 1, false);
    }
    flags[i] = true;
}
