"""A Dask cluster as a lab runs one: `dask scheduler` and two `dask worker` processes,
started apart (here on localhost, on a free port), and `mobmem-sweep --scheduler` run
against them for an experiment file of every kind. Each results.csv is `mobmem run`'s,
byte for byte, and both workers took tasks."""

from __future__ import annotations

import json
import os
import pathlib
import re
import signal
import subprocess
import sys
import time

import distributed
import pytest

import mobmem
from mobmem import _tasks
from support import make_media, write_toml
from test_kinds import FS, GRIDS

BIN = pathlib.Path(sys.executable).parent


def small_phone() -> dict:
    """The shipped 2012 phone at a sixteenth of its size, with a short workload."""
    phone = mobmem.shipped_experiment("phone-2012")
    phone.update(name="phone-small", scale=0.0625)
    phone["workload"]["sessions"] = 10
    return phone


def experiment_files(folder: pathlib.Path) -> dict[str, pathlib.Path]:
    """A small file of every kind, by kind."""
    files = {
        "cache": write_toml(folder / "cache.toml", GRIDS["cache-seeds"]),
        "swap": write_toml(folder / "swap.toml", GRIDS["swap"]),
        "reclaim": write_toml(folder / "reclaim.toml", GRIDS["reclaim"]),
        "ksm": write_toml(folder / "ksm.toml", GRIDS["ksm"]),
        "fs": write_toml(folder / "fs.toml", dict(FS, media="media")),
        "phone": write_toml(folder / "phone-small.toml", small_phone()),
    }
    files["composed"] = write_toml(
        folder / "composed.toml",
        {"kind": "composed", "name": "composed-small", "seeds": 2,
         "phone_files": ["phone-small.toml"]},
    )
    return files


def every_kind() -> list[str]:
    """The kinds of experiment file mobmem knows, as its error for an unknown one lists
    them."""
    with pytest.raises(mobmem.MobmemError) as e:
        mobmem.run_experiment({"kind": "no-such-kind", "name": "x"})
    known = re.search(r"known: ([^)]*)\)", str(e.value))
    assert known, str(e.value)
    return known.group(1).split(", ")


def stop(processes: list[subprocess.Popen]) -> None:
    """End the processes (each the leader of its own process group: a worker's nanny
    and the worker it started go together), the workers before the scheduler."""
    for process in reversed(processes):
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGTERM)
    deadline = time.monotonic() + 20
    for process in reversed(processes):
        try:
            process.wait(timeout=max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()


def logs(folder: pathlib.Path) -> str:
    return "\n".join(f"--- {p.name}\n{p.read_text()[-3000:]}" for p in sorted(folder.glob("*.log")))


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    """A scheduler and two workers, separate processes started with the `dask` command;
    yields the scheduler's address. Stopped at the end, also when a test failed."""
    folder = tmp_path_factory.mktemp("cluster")
    scheduler_file = folder / "scheduler.json"
    processes: list[subprocess.Popen] = []

    def start(name: str, *args: str) -> subprocess.Popen:
        log = open(folder / f"{name}.log", "w")
        process = subprocess.Popen(
            [str(BIN / "dask"), *args], cwd=folder, stdout=log, stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        log.close()
        processes.append(process)
        return process

    try:
        # Port 0: a free port the system picks; the scheduler file says which. Idle for
        # two minutes (if this process died without stopping it), it ends itself.
        scheduler = start("scheduler", "scheduler", "--host", "127.0.0.1", "--port", "0",
                          "--no-dashboard", "--scheduler-file", str(scheduler_file),
                          "--idle-timeout", "120s")
        deadline = time.monotonic() + 60
        while not scheduler_file.exists():
            assert scheduler.poll() is None, logs(folder)
            assert time.monotonic() < deadline, "no scheduler file\n" + logs(folder)
            time.sleep(0.1)
        time.sleep(0.2)  # the file is written whole before the scheduler listens
        address = json.loads(scheduler_file.read_text())["address"]
        assert address.startswith("tcp://127.0.0.1:")
        for name in ("worker-1", "worker-2"):
            start(name, "worker", address, "--name", name, "--nthreads", "1",
                  "--no-dashboard", "--local-directory", str(folder / name),
                  "--death-timeout", "60s")
        with distributed.Client(address, timeout=30) as client:
            client.wait_for_workers(2, timeout=60)
            assert len(client.scheduler_info()["workers"]) == 2
        yield address
    finally:
        stop(processes)


def test_a_sweep_of_every_kind_on_separate_processes_is_mobmem_runs(cluster, cli, tmp_path):
    files = experiment_files(tmp_path)
    assert sorted(files) == sorted(every_kind())
    make_media(tmp_path / "media")
    expected = {}
    for kind, path in files.items():
        code, _, stderr = cli("run", path, "--out", tmp_path / "report")
        assert code == 0, f"{kind}: {stderr}"
        name = re.search(r'^name = "([^"]+)"', path.read_text(), re.M).group(1)
        expected[kind] = (tmp_path / "report" / name / "results.csv").read_bytes()

    # The sweeps at once, as a lab would submit them: each a client of the scheduler.
    sweeps = {
        kind: subprocess.Popen(
            [str(BIN / "mobmem-sweep"), str(path), "--scheduler", cluster,
             "--out", str(tmp_path / f"{kind}.csv")],
            cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )
        for kind, path in files.items()
    }
    for kind, sweep in sweeps.items():
        _, stderr = sweep.communicate(timeout=300)
        assert sweep.returncode == 0, f"{kind}: {stderr}"
        assert (tmp_path / f"{kind}.csv").read_bytes() == expected[kind], kind

    # The tasks ran in the worker processes, on both.
    with distributed.Client(cluster, timeout=30) as client:
        parsed = client.run(lambda: len(_tasks._experiments))
        pids = client.run(os.getpid)
    assert len(parsed) == 2 and all(n > 0 for n in parsed.values()), parsed
    assert os.getpid() not in pids.values()


def test_a_worker_error_reaches_the_sweep_command(cluster, tmp_path):
    bad = dict(FS, name="fs-no-media", media=str(tmp_path / "no-media"))
    path = write_toml(tmp_path / "bad.toml", bad)
    done = subprocess.run(
        [str(BIN / "mobmem-sweep"), str(path), "--scheduler", cluster,
         "--out", str(tmp_path / "out.csv")],
        cwd=tmp_path, capture_output=True, text=True, timeout=300,
    )
    assert done.returncode == 1
    assert done.stderr.startswith("error: ") and "make-media.sh" in done.stderr
    assert not (tmp_path / "out.csv").exists()
