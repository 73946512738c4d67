//! The file system's read paths, each a [`FileSystem`] in a file of its own, and their
//! registry. A new path is its file here and one entry of [`READ_PATHS`]; the contract
//! tests below run over every entry.

mod page_cache;
mod selective;

use crate::core::registry::Registry;
use crate::mm::fs::read::FileSystem;

crate::registry_entry! {
    /// A registered read path.
    pub struct ReadPathInfo {
        pub fs: &'static dyn FileSystem,
    }
}

/// Stock Linux and JFFS2.
pub const PAGE_CACHE: ReadPathInfo = ReadPathInfo {
    name: "page-cache",
    summary: "stock Linux and JFFS2: every page read through the page cache",
    fs: &page_cache::PageCacheRead,
};

/// The paper's selective page cache.
pub const SELECTIVE: ReadPathInfo = ReadPathInfo {
    name: "selective",
    summary:
        "raw pages bypass the page cache, read from flash straight to the user (Song, Cha, KIISE)",
    fs: &selective::Selective,
};

/// Every read path.
pub static READ_PATHS: Registry<ReadPathInfo> =
    Registry::new("read path", &[PAGE_CACHE, SELECTIVE]);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mm::fs::read::{FilePage, PageCache, ReadCost, ReadPath};
    use crate::mm::fs::StoredPage;
    use crate::trace::PageId;
    use crate::{Error, Result};

    /// What a path asked of the page cache, in order.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    enum Call {
        Holds(PageId),
        Access(PageId, bool),
    }

    /// A page cache that holds the pages it is told to, records every call and keeps
    /// what it is handed; it fails every access when `full`.
    #[derive(Default)]
    struct Recorder {
        held: Vec<PageId>,
        calls: std::cell::RefCell<Vec<Call>>,
        full: bool,
    }

    impl PageCache for Recorder {
        fn holds(&self, page: PageId) -> bool {
            self.calls.borrow_mut().push(Call::Holds(page));
            self.held.contains(&page)
        }

        fn access(&mut self, page: PageId, write: bool) -> Result<()> {
            self.calls.get_mut().push(Call::Access(page, write));
            if self.full {
                return Err(Error::config("memory", "full"));
            }
            if !self.held.contains(&page) {
                self.held.push(page);
            }
            Ok(())
        }
    }

    fn pages() -> [StoredPage; 4] {
        [
            StoredPage::new(false, 4096, 4096),
            StoredPage::new(true, 4096, 1200),
            StoredPage::new(false, 100, 100),
            StoredPage::new(true, 0, 0),
        ]
    }

    #[test]
    fn the_registry_names_the_paths_and_refuses_others() {
        assert_eq!(
            READ_PATHS.names().collect::<Vec<_>>(),
            ["page-cache", "selective"]
        );
        assert_eq!(ReadPath::PAGE_CACHE.name(), "page-cache");
        assert_eq!(ReadPath::SELECTIVE.name(), "selective");
        for path in ReadPath::all() {
            assert_eq!(ReadPath::named(path.name()).unwrap(), path);
        }
        assert_ne!(ReadPath::PAGE_CACHE, ReadPath::SELECTIVE);
        assert_eq!(
            ReadPath::named("direct").unwrap_err().to_string(),
            "unknown read path 'direct' (known: page-cache, selective)"
        );
    }

    /// Every path, every kind of page, held by the page cache or not: `check` gets the
    /// path, the page (id 7) and a recorder that holds it or not.
    fn every_case(mut check: impl FnMut(ReadPath, FilePage, Recorder, bool)) {
        for path in ReadPath::all() {
            for stored in pages() {
                for held in [false, true] {
                    let cache = Recorder {
                        held: if held { vec![7] } else { vec![] },
                        ..Recorder::default()
                    };
                    check(path, FilePage { id: 7, stored }, cache, held);
                }
            }
        }
    }

    #[test]
    fn every_path_keeps_the_contracts_of_a_read() {
        every_case(|path, page, mut cache, held| {
            let stored = page.stored;
            let cost = path.fs().read(&mut cache, page).unwrap();
            let calls = cache.calls.take();
            let what = format!("{} {stored:?} held {held}", path.name());
            // Asked first; one page counted, not priced.
            assert_eq!(calls.first(), Some(&Call::Holds(7)), "{what}");
            assert_eq!(cost.pages, 1, "{what}");
            assert_eq!(cost.cache_hits, u64::from(held), "{what}");
            assert_eq!((cost.time_ns, cost.energy_nj), (0.0, 0.0), "{what}");
            let accessed = calls.contains(&Call::Access(7, false));
            assert!(!calls.contains(&Call::Access(7, true)), "{what}");
            if held {
                // A hit, whatever cached it, and the memory sees the reference.
                assert_eq!(cost, ReadCost::cache_hit(&stored), "{what}");
                assert!(accessed, "{what}");
            } else if accessed {
                // Kept: read into a page-cache page of its own.
                assert_eq!(cost, ReadCost::into_page_cache(&stored), "{what}");
            } else {
                // Not kept: nothing allocated, nothing left in memory.
                assert_eq!(cost.pages_allocated, 0, "{what}");
                assert_eq!(cost.flash_bytes, u64::from(stored.data_len), "{what}");
                assert!(cache.held.is_empty(), "{what}");
            }
            // A compressed page needs a page-cache page to decompress into.
            if stored.compressed && !held {
                assert!(accessed, "{what}");
            }
        });
    }

    #[test]
    fn the_shipped_paths_keep_what_the_paper_says() {
        let raw = FilePage {
            id: 1,
            stored: pages()[0],
        };
        let mut cache = Recorder::default();
        ReadPath::SELECTIVE.fs().read(&mut cache, raw).unwrap();
        assert!(cache.held.is_empty());
        ReadPath::PAGE_CACHE.fs().read(&mut cache, raw).unwrap();
        assert_eq!(cache.held, [1]);
        // Cached by the stock path, a hit on the selective one.
        let again = ReadPath::SELECTIVE.fs().read(&mut cache, raw).unwrap();
        assert_eq!(again.cache_hits, 1);
    }

    #[test]
    fn every_path_writes_through_the_page_cache_and_passes_its_errors_on() {
        every_case(|path, page, mut cache, held| {
            let cost = path.fs().write(&mut cache, page).unwrap();
            assert!(cache.calls.take().contains(&Call::Access(7, true)));
            assert_eq!(cache.held, [7]);
            assert_eq!((cost.pages, cost.flash_bytes), (0, 0));
            assert_eq!(cost.pages_allocated, u64::from(!held));
            assert_eq!(cost.ram_copy_bytes, u64::from(page.stored.data_len));
        });
        for path in ReadPath::all() {
            // The memory's errors come back as they are, from either verb.
            let mut full = Recorder {
                full: true,
                ..Recorder::default()
            };
            let compressed = FilePage {
                id: 4,
                stored: pages()[1],
            };
            for result in [
                path.fs().read(&mut full, compressed),
                path.fs().write(&mut full, compressed),
            ] {
                assert_eq!(
                    result.unwrap_err().to_string(),
                    Error::config("memory", "full").to_string()
                );
            }
        }
    }
}
