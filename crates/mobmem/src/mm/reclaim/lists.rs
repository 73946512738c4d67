//! A reclaim policy's LRU lists: which list each frame is on, and the lists themselves,
//! linked by frame number (the kernel's `lruvec`). Head = most recently added, tail =
//! the end reclaim scans from, as the kernel's `lru` lists.
//!
//! The lists belong to the policy, not to the memory: the memory knows which page each
//! frame holds; the policy knows in which order it will look at them.

use crate::core::list::{Links, List};
use crate::core::memory::{FrameState, Memory};

/// A list's number within a policy's lists: the two-list LRU numbers its four lists
/// (inactive/active x anon/file) 0..4, MGLRU its eight (4 generations x anon/file)
/// 4..12, per-process LRUs one list per process id.
pub type ListId = u32;

/// Frame is on no list.
pub const NO_LIST: ListId = ListId::MAX;

/// The lists of one policy over the frames of one memory.
#[derive(Debug, Clone)]
pub struct LruLists {
    /// The lists, by number; more are added as a list is first used.
    lists: Vec<List>,
    links: Links,
    /// The list each frame is on, or [`NO_LIST`].
    list_of: Vec<ListId>,
}

impl LruLists {
    /// Lists over `frames` frames, all empty.
    pub fn new(frames: usize) -> Self {
        LruLists {
            lists: Vec::new(),
            links: Links::with_pages(frames),
            list_of: vec![NO_LIST; frames],
        }
    }

    /// The list frame `pfn` is on ([`NO_LIST`] when isolated or not a page).
    #[inline]
    pub fn list_of(&self, pfn: u32) -> ListId {
        self.list_of.get(pfn as usize).copied().unwrap_or(NO_LIST)
    }

    pub fn len(&self, list: ListId) -> usize {
        self.lists.get(list as usize).map_or(0, List::len)
    }

    /// The lists, by number, for adding to one (created empty if new).
    fn list_mut(&mut self, list: ListId) -> &mut List {
        let i = list as usize;
        if i >= self.lists.len() {
            self.lists.resize(i + 1, List::new());
        }
        &mut self.lists[i]
    }

    /// Lists numbered so far (the highest used, plus one).
    pub fn count(&self) -> usize {
        self.lists.len()
    }

    /// Pages on every list.
    pub fn total(&self) -> usize {
        self.lists.iter().map(List::len).sum()
    }

    pub fn tail(&self, list: ListId) -> Option<u32> {
        self.lists.get(list as usize).and_then(List::back)
    }

    /// Frames of a list from head (youngest) to tail.
    pub fn frames(&self, list: ListId) -> Vec<u32> {
        match self.lists.get(list as usize) {
            Some(l) => self.links.iter(l).collect(),
            None => Vec::new(),
        }
    }

    /// Record the frame, on no list, as on `list` (made if new), before linking it in.
    fn enter(&mut self, list: ListId, pfn: u32) -> usize {
        let on = &mut self.list_of[pfn as usize];
        debug_assert_eq!(*on, NO_LIST);
        *on = list;
        self.list_mut(list);
        list as usize
    }

    /// Add the frame, on no list, at the head of `list`.
    pub fn push_head(&mut self, list: ListId, pfn: u32) {
        let i = self.enter(list, pfn);
        self.links.push_front(&mut self.lists[i], pfn);
    }

    /// Add the frame, on no list, at the tail of `list` (the end reclaim scans next).
    pub fn push_tail(&mut self, list: ListId, pfn: u32) {
        let i = self.enter(list, pfn);
        self.links.push_back(&mut self.lists[i], pfn);
    }

    /// Take the frame off its list (no-op when on none).
    pub fn unlink(&mut self, pfn: u32) {
        let list = std::mem::replace(&mut self.list_of[pfn as usize], NO_LIST);
        if list != NO_LIST {
            self.links.remove(&mut self.lists[list as usize], pfn);
        }
    }

    /// Take up to `nr` frames off the tail of `list`, tail first (the kernel's
    /// `isolate_lru_folios`, for a policy that checks each page after isolating it).
    pub fn take_tail(&mut self, list: ListId, nr: usize) -> Vec<u32> {
        let mut taken = Vec::with_capacity(nr);
        while taken.len() < nr {
            let Some(pfn) = self.tail(list) else {
                break;
            };
            self.unlink(pfn);
            taken.push(pfn);
        }
        taken
    }

    /// Move the frame to the tail of `list` (the end reclaim scans next).
    pub fn move_to_tail(&mut self, pfn: u32, list: ListId) {
        self.unlink(pfn);
        self.push_tail(list, pfn);
    }

    /// Check the lists against `mem`: each list is well linked, holds only pages that
    /// say they are on it, and every page in memory is on exactly one list.
    pub fn check(&self, mem: &Memory) -> Result<(), String> {
        let mut on_lists = 0;
        for (i, l) in self.lists.iter().enumerate() {
            let members = self
                .links
                .checked_members(l)
                .map_err(|e| format!("list {i}: {e}"))?;
            if let Some(at) = members.iter().find(|&&at| {
                self.list_of(at) as usize != i || mem.frame(at).state != FrameState::Page
            }) {
                return Err(format!("list {i}: frame {at} badly linked"));
            }
            on_lists += members.len();
        }
        if let Some(pfn) = (0..mem.total() as u32)
            .find(|&pfn| mem.frame(pfn).state == FrameState::Page && self.list_of(pfn) == NO_LIST)
        {
            return Err(format!("frame {pfn}: page on no list"));
        }
        if on_lists != mem.lru_pages() {
            return Err(format!(
                "{on_lists} pages on lists, {} resident",
                mem.lru_pages()
            ));
        }
        Ok(())
    }
}
