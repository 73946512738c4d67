//! Doubly linked lists of pages, linked by index.
//!
//! All lists of one policy share one [`Links`] arena indexed by page id, so a page costs
//! two `u32` of links whatever list it is on, and moving a page between lists is a
//! relink, not an allocation. A page is on at most one list of an arena at a time; with
//! [`Links`] the owner records which, while [`TaggedLists`] tags each page with its list.

use crate::trace::PageId;

const NIL: u32 = u32::MAX;

/// The ends and length of one list in a [`Links`] arena. Front = most recent (MRU).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct List {
    head: u32,
    tail: u32,
    len: usize,
}

impl Default for List {
    fn default() -> Self {
        List {
            head: NIL,
            tail: NIL,
            len: 0,
        }
    }
}

impl List {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Most recently inserted page.
    pub fn front(&self) -> Option<PageId> {
        (self.head != NIL).then_some(self.head)
    }

    /// Least recently inserted page.
    pub fn back(&self) -> Option<PageId> {
        (self.tail != NIL).then_some(self.tail)
    }
}

/// The links of one page; both in one place so that relinking touches one cache line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Node {
    prev: u32,
    next: u32,
}

const UNLINKED: Node = Node {
    prev: NIL,
    next: NIL,
};

/// Link storage for all lists of one policy.
#[derive(Debug, Clone, Default)]
pub struct Links {
    nodes: Vec<Node>,
}

impl Links {
    pub fn with_pages(pages: usize) -> Self {
        Links {
            nodes: vec![UNLINKED; pages],
        }
    }

    #[inline]
    fn ensure(&mut self, page: PageId) {
        if page as usize >= self.nodes.len() {
            crate::core::ensure_index(&mut self.nodes, page, UNLINKED);
        }
    }

    /// Make `prev` and `next` neighbours on `list`, `next` after `prev` ([`NIL`]: that
    /// end of the list).
    #[inline]
    fn join(&mut self, list: &mut List, prev: u32, next: u32) {
        match prev {
            NIL => list.head = next,
            _ => self.nodes[prev as usize].next = next,
        }
        match next {
            NIL => list.tail = prev,
            _ => self.nodes[next as usize].prev = prev,
        }
    }

    /// Insert `page` (on no list) into `list` between `prev` and `next`, neighbours on
    /// it ([`NIL`]: that end of the list).
    #[inline]
    fn link(&mut self, list: &mut List, page: PageId, prev: u32, next: u32) {
        self.ensure(page);
        self.join(list, prev, page);
        self.join(list, page, next);
        list.len += 1;
    }

    /// Insert `page` (on no list) at the front of `list`.
    #[inline]
    pub fn push_front(&mut self, list: &mut List, page: PageId) {
        self.link(list, page, NIL, list.head);
    }

    /// Insert `page` (on no list) at the back of `list`.
    #[inline]
    pub fn push_back(&mut self, list: &mut List, page: PageId) {
        self.link(list, page, list.tail, NIL);
    }

    /// Unlink `page`, which MUST be on `list`.
    #[inline]
    pub fn remove(&mut self, list: &mut List, page: PageId) {
        let Node { prev, next } = self.nodes[page as usize];
        self.join(list, prev, next);
        self.nodes[page as usize] = UNLINKED;
        list.len -= 1;
    }

    /// Move `page`, which MUST be on `list`, to its front.
    #[inline]
    pub fn move_to_front(&mut self, list: &mut List, page: PageId) {
        if list.head != page {
            self.remove(list, page);
            self.push_front(list, page);
        }
    }

    /// Bring `page`'s links into the cache (a hint; see [`crate::core::prefetch`]).
    #[inline]
    pub fn prefetch(&self, page: PageId) {
        super::prefetch::prefetch(&self.nodes, page as usize);
    }

    /// Whether `page` is on `list`, given that it is on no other list of this arena.
    #[inline]
    pub fn is_on(&self, list: &List, page: PageId) -> bool {
        match self.nodes.get(page as usize) {
            Some(node) => node.prev != NIL || list.head == page,
            None => false,
        }
    }

    /// Remove and return the back of `list`.
    #[inline]
    pub fn pop_back(&mut self, list: &mut List) -> Option<PageId> {
        let page = list.back()?;
        self.remove(list, page);
        Some(page)
    }

    /// The page after `page` (towards the back), if any.
    #[inline]
    pub fn next_of(&self, page: PageId) -> Option<PageId> {
        let n = self.nodes[page as usize].next;
        (n != NIL).then_some(n)
    }

    /// The page before `page` (towards the front), if any.
    #[inline]
    pub fn prev_of(&self, page: PageId) -> Option<PageId> {
        let p = self.nodes[page as usize].prev;
        (p != NIL).then_some(p)
    }

    /// The pages of `list`, front to back, after checking its links: every page's back
    /// link names the one before it, the back and the length are right, and there is no
    /// cycle. For invariant checks in tests; the message says what broke.
    pub fn checked_members(&self, list: &List) -> Result<Vec<PageId>, String> {
        let mut members = Vec::with_capacity(list.len);
        let mut prev = NIL;
        let mut at = list.head;
        while at != NIL {
            let Some(node) = self.nodes.get(at as usize) else {
                return Err(format!("page {at} is past the arena"));
            };
            if node.prev != prev {
                return Err(format!("page {at} badly linked"));
            }
            members.push(at);
            if members.len() > self.nodes.len() {
                return Err("cycle".into());
            }
            prev = at;
            at = node.next;
        }
        if members.len() != list.len || list.tail != prev {
            return Err(format!("length {} recorded {}", members.len(), list.len));
        }
        Ok(members)
    }

    /// The pages of `list`, front to back (for tests and checks).
    pub fn iter<'a>(&'a self, list: &List) -> impl Iterator<Item = PageId> + 'a {
        let mut cursor = list.head;
        std::iter::from_fn(move || {
            if cursor == NIL {
                return None;
            }
            let page = cursor;
            cursor = self.nodes[page as usize].next;
            Some(page)
        })
    }
}

/// A page on no list of a [`TaggedLists`].
pub const NO_LIST: u8 = u8::MAX;

/// Several lists of pages in one arena, each page tagged with the list it is on: the
/// queues of a policy that moves pages between lists (S3-FIFO's small, main and ghost
/// queues; 2Q's; ARC's four; the segments of a segmented LRU). A page is on at most one
/// list; moving it to another is a relink and a tag, and "which list is it on" is one
/// byte read. Per page: two `u32` links and one byte.
#[derive(Debug, Clone, Default)]
pub struct TaggedLists {
    links: Links,
    lists: Vec<List>,
    tags: Vec<u8>,
}

impl TaggedLists {
    /// `lists` empty lists (at most 255), sized for `pages` pages (they grow on demand).
    pub fn new(lists: usize, pages: usize) -> Self {
        assert!(lists < NO_LIST as usize, "at most 254 lists");
        TaggedLists {
            links: Links::with_pages(pages),
            lists: vec![List::new(); lists],
            tags: vec![NO_LIST; pages],
        }
    }

    /// The list `page` is on.
    #[inline]
    pub fn list_of(&self, page: PageId) -> Option<usize> {
        match self.tags.get(page as usize) {
            Some(&tag) if tag != NO_LIST => Some(tag as usize),
            _ => None,
        }
    }

    #[inline]
    pub fn len(&self, list: usize) -> usize {
        self.lists[list].len()
    }

    #[inline]
    pub fn is_empty(&self, list: usize) -> bool {
        self.lists[list].is_empty()
    }

    #[inline]
    pub fn front(&self, list: usize) -> Option<PageId> {
        self.lists[list].front()
    }

    #[inline]
    pub fn back(&self, list: usize) -> Option<PageId> {
        self.lists[list].back()
    }

    #[inline]
    fn tag(&mut self, page: PageId, list: u8) {
        if page as usize >= self.tags.len() {
            crate::core::ensure_index(&mut self.tags, page, NO_LIST);
        }
        self.tags[page as usize] = list;
    }

    /// Put `page`, which MUST be on no list, at the front of `list`.
    #[inline]
    pub fn push_front(&mut self, list: usize, page: PageId) {
        self.links.push_front(&mut self.lists[list], page);
        self.tag(page, list as u8);
    }

    /// Put `page`, which MUST be on no list, at the back of `list`.
    #[inline]
    pub fn push_back(&mut self, list: usize, page: PageId) {
        self.links.push_back(&mut self.lists[list], page);
        self.tag(page, list as u8);
    }

    /// Take `page` off the list it is on; returns that list (`None`: it was on none).
    #[inline]
    pub fn remove(&mut self, page: PageId) -> Option<usize> {
        let list = self.list_of(page)?;
        self.links.remove(&mut self.lists[list], page);
        self.tags[page as usize] = NO_LIST;
        Some(list)
    }

    /// Move `page`, on any list or none, to the front of `list`.
    #[inline]
    pub fn move_to_front(&mut self, list: usize, page: PageId) {
        if self.list_of(page) == Some(list) {
            self.links.move_to_front(&mut self.lists[list], page);
        } else {
            self.remove(page);
            self.push_front(list, page);
        }
    }

    /// Take the back of `list` off it.
    #[inline]
    pub fn pop_back(&mut self, list: usize) -> Option<PageId> {
        let page = self.links.pop_back(&mut self.lists[list])?;
        self.tags[page as usize] = NO_LIST;
        Some(page)
    }

    /// The page after `page` on its list (towards the back).
    #[inline]
    pub fn next_of(&self, page: PageId) -> Option<PageId> {
        self.links.next_of(page)
    }

    /// The page before `page` on its list (towards the front).
    #[inline]
    pub fn prev_of(&self, page: PageId) -> Option<PageId> {
        self.links.prev_of(page)
    }

    /// Bring `page`'s tag and links into the cache (a hint; see [`crate::core::prefetch`]).
    #[inline]
    pub fn prefetch(&self, page: PageId) {
        super::prefetch::prefetch(&self.tags, page as usize);
        self.links.prefetch(page);
    }

    /// The pages of `list`, front to back.
    pub fn iter(&self, list: usize) -> impl Iterator<Item = PageId> + '_ {
        self.links.iter(&self.lists[list])
    }

    /// Check every list's links and that each page's tag names the list it is on, and
    /// only pages on a list have a tag (for invariant checks in tests; the message says
    /// what broke).
    pub fn check(&self) -> Result<(), String> {
        let mut on_lists = 0;
        for (number, list) in self.lists.iter().enumerate() {
            for page in self.links.checked_members(list)? {
                if self.list_of(page) != Some(number) {
                    return Err(format!(
                        "page {page} is on list {number} but tagged {:?}",
                        self.list_of(page)
                    ));
                }
                on_lists += 1;
            }
        }
        let tagged = self.tags.iter().filter(|&&t| t != NO_LIST).count();
        if tagged != on_lists {
            return Err(format!("{tagged} pages tagged, {on_lists} on lists"));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_share_one_arena() {
        let mut links = Links::default();
        let (mut a, mut b) = (List::new(), List::new());
        links.push_front(&mut a, 3);
        links.push_front(&mut a, 1);
        links.push_back(&mut b, 7);
        links.push_front(&mut a, 9);
        assert_eq!(links.iter(&a).collect::<Vec<_>>(), vec![9, 1, 3]);
        links.move_to_front(&mut a, 3);
        assert_eq!(links.iter(&a).collect::<Vec<_>>(), vec![3, 9, 1]);
        assert_eq!(links.pop_back(&mut a), Some(1));
        links.remove(&mut a, 3);
        links.push_back(&mut b, 3);
        assert_eq!(links.iter(&a).collect::<Vec<_>>(), vec![9]);
        assert_eq!(links.iter(&b).collect::<Vec<_>>(), vec![7, 3]);
        assert_eq!((a.len(), b.len()), (1, 2));
        assert_eq!(b.back(), Some(3));
        assert_eq!(links.checked_members(&b), Ok(vec![7, 3]));
    }

    #[test]
    fn broken_links_are_found() {
        let mut links = Links::default();
        let mut a = List::new();
        for page in [1, 2, 3] {
            links.push_back(&mut a, page);
        }
        assert_eq!(links.checked_members(&a), Ok(vec![1, 2, 3]));
        let mut short = a;
        short.len = 2;
        assert!(links
            .checked_members(&short)
            .unwrap_err()
            .contains("length 3"));
        links.nodes[2].prev = 3;
        assert!(links
            .checked_members(&a)
            .unwrap_err()
            .contains("page 2 badly linked"));
    }

    #[test]
    fn tagged_lists_know_where_each_page_is() {
        let mut lists = TaggedLists::new(3, 0);
        lists.push_front(0, 5);
        lists.push_front(0, 6);
        lists.push_back(2, 9);
        // [6 5] [] [9]
        assert_eq!((lists.list_of(5), lists.list_of(9)), (Some(0), Some(2)));
        assert_eq!(lists.list_of(7), None);
        assert_eq!(lists.list_of(1000), None);
        // 5 moves to list 1; 9 to the front of list 0.
        lists.move_to_front(1, 5);
        lists.move_to_front(0, 9);
        assert_eq!(lists.iter(0).collect::<Vec<_>>(), vec![9, 6]);
        assert_eq!(lists.iter(1).collect::<Vec<_>>(), vec![5]);
        assert!(lists.is_empty(2));
        // Within its own list, a move reorders.
        lists.move_to_front(0, 6);
        assert_eq!(lists.iter(0).collect::<Vec<_>>(), vec![6, 9]);
        assert_eq!(lists.pop_back(0), Some(9));
        assert_eq!(lists.list_of(9), None);
        assert_eq!(lists.remove(5), Some(1));
        assert_eq!(lists.remove(5), None);
        assert_eq!((lists.len(0), lists.len(1)), (1, 0));
        assert_eq!(lists.check(), Ok(()));
        // A tag that names the wrong list is found.
        lists.tags[6] = 2;
        assert!(lists.check().unwrap_err().contains("page 6"));
    }
}
