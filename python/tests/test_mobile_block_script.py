"""The Pixel 6a block traces as mobmem reads them equal what a small independent script
counts (scripts/mobile-block-counts.py: Python's csv and gzip, an OrderedDict per LRU
size): `mobmem trace import --format mobile-block` into .mmt, then `trace info` and
`sim --policy lru` at three sizes on that file. Skipped, with the reason, where the
traces are not on this machine."""

from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
SCRIPT = REPO / "scripts" / "mobile-block-counts.py"
SIZES = [1_000, 10_000, 50_000]
TRACES = ["pubg_exec", "pubg_precond", "telegram_exec", "you_cut_exec"]


def traces_folder() -> pathlib.Path | None:
    """Where the public traces are, as the Rust tests look: $MOBMEM_TRACES, else
    ../shared/traces beside the repository."""
    given = os.environ.get("MOBMEM_TRACES")
    folder = pathlib.Path(given) if given else REPO.parent / "shared" / "traces"
    return folder if folder.is_dir() else None


def skip(reason: str):
    log = os.environ.get("MOBMEM_SKIP_LOG")
    if log:
        with open(log, "a", encoding="utf-8") as f:
            f.write(f"test_mobile_block_script: {reason}\n")
    pytest.skip(reason)


_counting: dict[str, subprocess.Popen] = {}


def start_counting(folder: pathlib.Path) -> None:
    """Start the script on every trace at hand, once, each in a process of its own, so
    that the slowest (8 M accesses in pure Python) runs beside the others and beside
    mobmem."""
    if _counting:
        return
    for name in TRACES:
        path = folder / "mobile-block" / f"{name}.csv.gz"
        if path.is_file():
            _counting[name] = subprocess.Popen(
                [sys.executable, SCRIPT, path, *map(str, SIZES)],
                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def script_counts(name: str) -> dict:
    """What the script printed for trace `name` (started by `start_counting`)."""
    out, err = _counting[name].communicate()
    assert _counting[name].returncode == 0, err
    return json.loads(out)


@pytest.mark.parametrize("name", TRACES)
def test_mobmem_counts_a_pixel_trace_as_the_script_does(name, cli, tmp_path):
    folder = traces_folder()
    path = folder / "mobile-block" / f"{name}.csv.gz" if folder else None
    if path is None or not path.is_file():
        skip(f"{name}.csv.gz: the Pixel 6a block traces are not here "
             "(set MOBMEM_TRACES or put ../shared/traces beside the repository)")
    start_counting(folder)
    mmt = tmp_path / f"{name}.mmt"
    code, _, err = cli("trace", "import", "--format", "mobile-block", path, "--out", mmt)
    assert code == 0, err
    code, out, err = cli("trace", "info", "--json", mmt)
    assert code == 0, err
    info = json.loads(out)
    code, out, err = cli("sim", "--trace", mmt, "--policy", "lru", "--capacity",
                         ",".join(map(str, SIZES)), "--json")
    assert code == 0, err
    rows = json.loads(out)
    mobmem = {
        "accesses": info["accesses"],
        "distinct_pages": info["distinct_pages"],
        "reads": info["accesses"] - info["writes"],
        "writes": info["writes"],
        "lru_misses": {str(r["dram_pages"]): r["misses"] for r in rows},
    }
    assert mobmem == script_counts(name)
