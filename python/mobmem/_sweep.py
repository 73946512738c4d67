"""Sweeps: an experiment run as independent tasks, in this process or on a Dask cluster.

An experiment of any kind is a list of runs, one per seed (one run without seeds), which
do not depend on one another: a task each. A cache grid splits further: first one task
per run and workload loads the workload and lists its points (a point's memory size
depends on the workload's footprint), then one task per point (workload x policy x
memory size x DRAM share) runs it. Each task returns its rows as the CSV text ``mobmem
run`` writes; they are put back in the order of the runs and the grid, so the results
are those of :func:`mobmem.run_experiment`, row for row.

With ``results_dir``, every finished task is saved there at once, in a file named by a
hash of the experiment and the task, written under a temporary name and renamed; a later
sweep of the same experiment reads the saved tasks instead of running them.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import contextlib
import hashlib
import json
import os
import pathlib
import sys
from collections.abc import Callable, Generator, Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd

from . import _native, _tasks
from ._experiment import (
    ExperimentLike,
    join_results,
    load_experiment,
    media_dir,
    results_frame,
)
from ._native import MobmemError

#: Called after each task that was run and saved, with the tasks done (saved ones from an
#: earlier sweep included) and the tasks in all. An exception it raises stops the sweep;
#: the tasks saved so far stay saved.
Progress = Callable[[int, int], None]

# Part of every task's hash, so results saved by another version are not reused.
_FORMAT_VERSION = "mobmem-task-2"


def point_key(experiment_toml: str, point: dict[str, Any]) -> str:
    """A stable name for one task (a run or a point) of one experiment: the same on every
    machine and in every run, different when anything in the experiment or the task
    differs."""
    identity = {
        "format": _FORMAT_VERSION,
        "experiment": experiment_toml,
        "task": point,
    }
    canonical = json.dumps(identity, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()[:32]


class _SavedPoints:
    """The folder of finished tasks: one CSV file per task."""

    def __init__(self, folder: str | os.PathLike[str], experiment: str, experiment_toml: str):
        self.folder = pathlib.Path(folder)
        self.folder.mkdir(parents=True, exist_ok=True)
        self.experiment = experiment
        self.experiment_toml = experiment_toml

    def path(self, point: dict[str, Any]) -> pathlib.Path:
        return self.folder / f"{self.experiment}-{point_key(self.experiment_toml, point)}.csv"

    def read(self, point: dict[str, Any]) -> str | None:
        try:
            return self.path(point).read_text(encoding="utf-8")
        except FileNotFoundError:
            return None

    def write(self, point: dict[str, Any], csv_text: str) -> None:
        path = self.path(point)
        # A file under its final name is always complete: an interrupted write leaves
        # only a temporary file, which no sweep reads.
        partial = path.with_name(f".{path.name}.{os.getpid()}.partial")
        partial.write_text(csv_text, encoding="utf-8")
        os.replace(partial, path)


@dataclass
class SweepOutcome:
    """What a sweep produced: its results as CSV text and where they came from (counts
    of tasks: runs, or points of a cache grid)."""

    csv_text: str
    points: int
    ran: int
    reused: int


def _in_process(
    function: Callable[..., Any], calls: Sequence[tuple[Any, ...]]
) -> Generator[tuple[int, Any], None, None]:
    """Run calls in threads of this process (the native code releases the interpreter);
    yields (call index, result) as they finish."""
    if not calls:
        return
    pool = concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 1)
    try:
        futures = {pool.submit(function, *args): i for i, args in enumerate(calls)}
        for future in concurrent.futures.as_completed(futures):
            yield futures[future], future.result()
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


def _on_dask(
    client: Any,
    function: Callable[..., Any],
    calls: Sequence[tuple[Any, ...]],
    keys: Sequence[str],
) -> Generator[tuple[int, Any], None, None]:
    """Run calls as tasks of a Dask cluster; yields (call index, result) as they finish."""
    from distributed import as_completed

    if not calls:
        return
    futures = client.map(function, *zip(*calls), key=list(keys), pure=False)
    index = {future.key: i for i, future in enumerate(futures)}
    finished = False
    try:
        for future, result in as_completed(futures, with_results=True):
            yield index[future.key], result
        finished = True
    finally:
        if not finished:
            # Stopped early (a task failed, or the caller gave up): the rest is not needed.
            client.cancel(futures)


def _run_all(
    client: Any,
    function: Callable[..., Any],
    calls: Sequence[tuple[Any, ...]],
    keys: Sequence[str],
) -> Generator[tuple[int, Any], None, None]:
    if client is None:
        return _in_process(function, calls)
    return _on_dask(client, function, calls, keys)


def _tasks_of(
    native: _native.Experiment,
    spec: str,
    client: Any,
    seeds: int | None,
    media: str | None,
) -> tuple[Callable[..., Any], list[dict[str, Any]]]:
    """The tasks of an experiment, in the order their rows are written, and the function
    that runs one: a run per seed, or for a cache grid a point per run, workload and
    grid point (listed by a first round of tasks)."""
    run_seeds, by_seed = native.runs(seeds)
    if not native.splits_by_point:
        runs = [{"seed": seed, "by_seed": by_seed} for seed in run_seeds]
        if media is not None:
            for run in runs:
                run["media"] = media
        return _tasks.run_seed, runs
    names = [w["name"] for w in native.workloads()]
    spec_hash = hashlib.sha256(spec.encode()).hexdigest()[:16]
    listings = [(seed, name) for seed in run_seeds for name in names]
    point_lists: list[list[dict[str, Any]]] = [[] for _ in listings]
    listing = _run_all(
        client,
        _tasks.workload_points,
        [(spec, name, seed) for seed, name in listings],
        [f"mobmem-points-{spec_hash}-{seed}-{i}" for i, (seed, _) in enumerate(listings)],
    )
    with contextlib.closing(listing):
        for i, points_of_workload in listing:
            seed = listings[i][0]
            point_lists[i] = [dict(p, seed=seed, by_seed=by_seed) for p in points_of_workload]
    return _tasks.run_point, [p for points in point_lists for p in points]


def run_sweep(
    experiment: ExperimentLike,
    client: Any = None,
    results_dir: str | os.PathLike[str] | None = None,
    progress: Progress | None = None,
    *,
    seeds: int | None = None,
    media: str | os.PathLike[str] | None = None,
) -> SweepOutcome:
    """Run a sweep (see :func:`sweep`) and return its results as the CSV text ``mobmem
    run`` would write, with counts of the tasks run and reused."""
    native = load_experiment(experiment)
    spec = native.to_toml()
    function, tasks = _tasks_of(native, spec, client, seeds, media_dir(media))

    saved = None if results_dir is None else _SavedPoints(results_dir, native.name, spec)
    texts: list[str | None] = [None if saved is None else saved.read(t) for t in tasks]
    reused = sum(text is not None for text in texts)
    # A task listed twice (the same size given twice, say) runs once.
    where: dict[str, list[int]] = {}
    for i, text in enumerate(texts):
        if text is None:
            where.setdefault(point_key(spec, tasks[i]), []).append(i)
    todo = list(where.items())
    done = reused
    runs = _run_all(
        client,
        function,
        [(spec, tasks[indices[0]]) for _, indices in todo],
        [f"mobmem-task-{key}" for key, _ in todo],
    )
    # Closing the runs when the loop stops early cancels the tasks not started.
    with contextlib.closing(runs):
        for j, text in runs:
            indices = todo[j][1]
            for i in indices:
                texts[i] = text
            if saved is not None:
                saved.write(tasks[indices[0]], text)
            done += len(indices)
            if progress is not None:
                progress(done, len(tasks))
    return SweepOutcome(
        csv_text=join_results([t for t in texts if t is not None]),
        points=len(tasks),
        ran=len(todo),
        reused=reused,
    )


def sweep(
    experiment: ExperimentLike,
    client: Any = None,
    results_dir: str | os.PathLike[str] | None = None,
    *,
    progress: Progress | None = None,
    seeds: int | None = None,
    media: str | os.PathLike[str] | None = None,
) -> pd.DataFrame:
    """Run an experiment file of any kind as independent tasks.

    ``experiment``, ``seeds`` and ``media`` are what :func:`mobmem.run_experiment` takes.
    The tasks are the experiment's runs, one per seed; a cache grid splits further, into
    one task per run, workload and configuration point. With ``client`` (a
    ``dask.distributed.Client``) the tasks run on its cluster: each worker reads the
    files it needs from their paths (which it must reach; trace URLs such as ``s3://``
    are read with fsspec) or generates the workloads from their seed. Without it they run
    in threads of this process.

    With ``results_dir``, each finished task is saved there as it completes, and tasks
    already saved by an earlier sweep of the same experiment are not run again: an
    interrupted sweep loses nothing it finished. ``progress(done, total)`` is called after
    each task that was run.

    Returns the same DataFrame as :func:`mobmem.run_experiment`.
    """
    outcome = run_sweep(experiment, client, results_dir, progress, seeds=seeds, media=media)
    return results_frame(outcome.csv_text)


def _terminal_progress(done: int, total: int) -> None:
    print(f"\r{done}/{total} tasks", end="" if done < total else "\n", file=sys.stderr)


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m mobmem.sweep`` (also installed as ``mobmem-sweep``)."""
    parser = argparse.ArgumentParser(
        prog="python -m mobmem.sweep",
        description="Run a mobmem experiment file as independent tasks on a Dask cluster "
        "(or in this process) and write its results.csv, the same as `mobmem run` writes.",
    )
    parser.add_argument("experiment", help="experiment file (TOML)")
    parser.add_argument(
        "--scheduler",
        metavar="ADDRESS",
        help="address of the Dask scheduler (e.g. tcp://10.0.0.5:8786); "
        "without it the sweep runs in this process",
    )
    parser.add_argument(
        "--results-dir",
        metavar="DIR",
        help="save each finished task here; a rerun skips the tasks saved",
    )
    parser.add_argument(
        "--seeds",
        type=int,
        metavar="N",
        help="run seeds 1..=N instead of the file's `seeds` (as `mobmem run --seeds`)",
    )
    parser.add_argument(
        "--media",
        metavar="DIR",
        help="folder of real media and text files, for files of kind `fs` "
        "(as `mobmem run --media`)",
    )
    parser.add_argument(
        "--out", default="results.csv", help="results file (default: results.csv)"
    )
    args = parser.parse_args(argv)

    client = None
    try:
        if args.scheduler:
            try:
                from distributed import Client
            except ImportError:
                raise MobmemError(
                    "--scheduler needs Dask's distributed package (pip install distributed)"
                ) from None
            client = Client(args.scheduler)
        outcome = run_sweep(
            args.experiment,
            client,
            args.results_dir,
            _terminal_progress if sys.stderr.isatty() else None,
            seeds=args.seeds,
            media=args.media,
        )
    except MobmemError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    finally:
        if client is not None:
            client.close()

    out = pathlib.Path(args.out)
    partial = out.with_name(f".{out.name}.partial")
    try:
        partial.write_text(outcome.csv_text, encoding="utf-8")
        os.replace(partial, out)
    except OSError as e:
        print(f"error: {out}: {e}", file=sys.stderr)
        return 1
    print(
        f"wrote {out} ({outcome.points} tasks: {outcome.ran} run, "
        f"{outcome.reused} from {args.results_dir})"
        if args.results_dir
        else f"wrote {out} ({outcome.points} tasks)",
        file=sys.stderr,
    )
    return 0
