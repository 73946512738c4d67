"""Shared fixtures: the mobmem CLI to compare against, a small trace file, and a Dask
cluster of two worker processes."""

from __future__ import annotations

import os
import pathlib
import subprocess

import distributed
import pytest

import mobmem

REPO = pathlib.Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def mobmem_bin() -> pathlib.Path:
    """The mobmem CLI of this source tree: ``$MOBMEM_BIN`` if set, else built (or found
    up to date) by cargo."""
    given = os.environ.get("MOBMEM_BIN")
    if given:
        return pathlib.Path(given)
    subprocess.run(
        ["cargo", "build", "--quiet", "--locked", "-p", "mobmem-cli"],
        cwd=REPO,
        check=True,
    )
    return REPO / "target" / "debug" / "mobmem"


@pytest.fixture(scope="session")
def cli(mobmem_bin):
    """Run the CLI; returns (exit code, stdout, stderr)."""

    def run(*args: str | os.PathLike[str]) -> tuple[int, str, str]:
        done = subprocess.run(
            [mobmem_bin, *map(os.fspath, args)], capture_output=True, text=True
        )
        return done.returncode, done.stdout, done.stderr

    return run


@pytest.fixture(scope="session")
def trace_file(tmp_path_factory) -> pathlib.Path:
    """A small generated trace on disk."""
    path = tmp_path_factory.mktemp("traces") / "small.mmt"
    mobmem.generate("app-switching", seed=3, out=path, scale=0.01)
    return path


@pytest.fixture(scope="session")
def client():
    """A client of a local Dask cluster of two worker processes, one thread each."""
    with distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
    ) as cluster, distributed.Client(cluster) as c:
        yield c
