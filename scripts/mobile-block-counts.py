#!/usr/bin/env python3
"""Count a Pixel 6a block trace (MobileBlockIOTraces CSV, plain or gzip) the plain way:
each request `proces,device,rw_flag,sector,size,timestamp` covers the 4 KiB pages
`sector*512//4096` through `((sector+size)*512-1)//4096` of its device, in file order.
Prints page accesses, distinct pages, reads, writes and the misses of an LRU cache of
each size given, as JSON. Shares no code with mobmem: it is the check its reader and
cache engine are tested against."""

from __future__ import annotations

import collections
import csv
import gzip
import json
import sys


def pages(path: str):
    """(device, page, is_write) of each page access, in order."""
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt", newline="") as f:
        rows = csv.reader(f)
        next(rows)  # the header
        for row in rows:
            device, rw, sector, size = int(row[1]), row[2], int(row[3]), int(row[4])
            if size == 0:
                continue
            first = sector * 512 // 4096
            last = ((sector + size) * 512 - 1) // 4096
            for page in range(first, last + 1):
                yield device, page, rw == "W"


def counts(path: str, sizes: list[int]) -> dict:
    caches = [collections.OrderedDict() for _ in sizes]
    misses = [0] * len(sizes)
    seen = set()
    accesses = writes = 0
    for device, page, write in pages(path):
        key = (device, page)
        accesses += 1
        writes += write
        seen.add(key)
        for i, (cache, size) in enumerate(zip(caches, sizes)):
            if key in cache:
                cache.move_to_end(key)
            else:
                misses[i] += 1
                cache[key] = None
                if len(cache) > size:
                    cache.popitem(last=False)
    return {
        "accesses": accesses,
        "distinct_pages": len(seen),
        "reads": accesses - writes,
        "writes": writes,
        "lru_misses": dict(zip(map(str, sizes), misses)),
    }


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit("usage: mobile-block-counts.py TRACE.csv[.gz] [SIZE ...]")
    print(json.dumps(counts(sys.argv[1], [int(s) for s in sys.argv[2:]]), indent=1))
