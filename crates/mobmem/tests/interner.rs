//! The page interner: ids in order of first appearance, and its memory per distinct page.

use mobmem::trace::{Interner, PageKey};

#[test]
fn the_interner_numbers_pages_in_order_of_first_appearance() {
    // Against a map of keys to ids, on keys that repeat and collide in their low bits.
    let mut interner = Interner::new();
    let mut reference = std::collections::HashMap::new();
    let mut x = 12345u64;
    for _ in 0..300_000 {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let key = if x >> 63 == 0 {
            PageKey::file((x >> 40) & 7, ((x >> 8) & 0xffff) << 20)
        } else {
            PageKey::anon((x >> 40) & 7, (x >> 8) & 0xffff)
        };
        let next = reference.len() as u32;
        let expected = *reference.entry(key).or_insert(next);
        assert_eq!(interner.page(key), Some(expected));
    }
    let pages = &interner.tables().pages;
    assert_eq!(pages.len(), reference.len());
    for (key, &id) in &reference {
        assert_eq!(pages[id as usize], *key);
    }
}

/// `page_after` gives `page`'s id whatever `previous` is: the page after it in a run
/// seen before, a run seen in another order, or an id unrelated or past the end.
#[test]
fn page_after_gives_the_ids_page_gives() {
    let mut fast = Interner::new();
    let mut plain = Interner::new();
    let mut x = 99u64;
    let mut step = || {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        x >> 33
    };
    for _ in 0..20_000 {
        // A block request: a run of pages from a start that repeats often.
        let (device, first, pages) = (step() % 3, step() % 500, 1 + step() % 9);
        let mut previous = match step() % 4 {
            0 => None,
            1 => Some(step() as u32),
            _ => Some(u32::MAX),
        };
        for page in first..first + pages {
            let key = PageKey::file(device, page);
            let id = match previous {
                Some(p) => fast.page_after(p, key),
                None => fast.page(key),
            };
            assert_eq!(id, plain.page(key), "{key:?} after {previous:?}");
            previous = id;
        }
    }
    assert_eq!(fast.tables().pages, plain.tables().pages);
}

/// Bytes per distinct page the interner holds at 50 million pages: at most 32 (it was
/// 87 with a map of keys to ids). Counted from capacities, the lookup table's allocation
/// included, and checked at the peak: when the lookup table grows, its old and new
/// allocations are held at once.
#[test]
fn the_interner_holds_at_most_32_bytes_a_page_at_50_million_pages() {
    const PAGES: u64 = 50_000_000;
    let mut interner = Interner::new();
    // (keys, lookup) bytes; a growing page table is reallocated (moved in place by the
    // system allocator at this size), a growing lookup table holds both allocations.
    let split = |interner: &Interner| {
        let keys = interner.tables().pages.capacity() * std::mem::size_of::<PageKey>();
        (keys, interner.page_bytes() - keys)
    };
    let (mut keys, mut lookup) = split(&interner);
    let mut peak = keys + lookup;
    for i in 0..PAGES {
        let id = interner.page(PageKey::file(i >> 16, (i & 0xffff) * 8));
        assert_eq!(id, Some(i as u32));
        let (now_keys, now_lookup) = split(&interner);
        if now_lookup != lookup {
            peak = peak.max(now_keys + now_lookup + lookup);
        }
        (keys, lookup) = (now_keys, now_lookup);
        peak = peak.max(keys + lookup);
    }
    let per_page = interner.page_bytes() as f64 / PAGES as f64;
    let peak_per_page = peak as f64 / PAGES as f64;
    eprintln!("interner at {PAGES} pages: {per_page:.2} bytes a page, peak {peak_per_page:.2}");
    assert!(per_page <= 32.0, "{per_page}");
    assert!(peak_per_page <= 32.0, "{peak_per_page}");
    // Looking up pages already seen gives their ids.
    assert_eq!(interner.page(PageKey::file(3, 8)), Some((3 << 16) + 1));
}
