"""The tasks of a sweep, as they run on a worker (a Dask worker process, or a thread of
this process): plain functions of plain arguments, so they pickle.

A task gets the experiment as the TOML text of ``Experiment.to_toml`` (its paths
already absolute) and one of its runs (a seed) or, for a cache grid, one point of a run.
A point's task loads the workload it needs itself: a trace file from its path (or its
URL, through fsspec), a generated workload by generating it from its seed, which gives
the same trace on every machine. Loaded workloads are kept for the next tasks of the
same process, a few at a time.
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from typing import Any

from . import _native
from ._inputs import fetch, is_url

# Points of one workload usually run back to back; a few traces cover the workloads a
# process is between, without holding every trace of a large experiment.
_KEPT_WORKLOADS = 4

_lock = threading.Lock()
_loaded: OrderedDict[tuple[str, str, int | None], _native.Workload] = OrderedDict()
_experiments: OrderedDict[str, _native.Experiment] = OrderedDict()


def _experiment(experiment_toml: str) -> tuple[str, _native.Experiment]:
    """The experiment of a task, parsed once per process (the last few kept)."""
    key = hashlib.sha256(experiment_toml.encode()).hexdigest()
    with _lock:
        if key not in _experiments:
            _experiments[key] = _native.Experiment.from_toml(experiment_toml, "experiment")
            while len(_experiments) > _KEPT_WORKLOADS:
                _experiments.popitem(last=False)
        _experiments.move_to_end(key)
        return key, _experiments[key]


def _load(
    experiment_toml: str, workload: str, seed: int
) -> tuple[_native.Experiment, _native.Workload]:
    key, experiment = _experiment(experiment_toml)
    spec = next((w for w in experiment.workloads() if w["name"] == workload), None)
    # A trace file, or a workload with a seed of its own, is the same in every run.
    same_in_every_run = spec is not None and (
        spec["trace"] is not None or spec["seed"] is not None
    )
    entry_key = (key, workload, None if same_in_every_run else seed)
    # One lock for all: threads that need the same workload wait for one load of it
    # instead of each loading it.
    with _lock:
        if entry_key in _loaded:
            _loaded.move_to_end(entry_key)
            return experiment, _loaded[entry_key]
        trace = None if spec is None else spec["trace"]
        data = fetch(trace) if trace is not None and is_url(trace) else None
        loaded = experiment.load_workload(workload, seed, data)
        _loaded[entry_key] = loaded
        while len(_loaded) > _KEPT_WORKLOADS:
            _loaded.popitem(last=False)
        return experiment, loaded


def workload_points(experiment_toml: str, workload: str, seed: int) -> list[dict[str, Any]]:
    """The points of one workload of a cache grid in the run with ``seed``, in the order
    ``mobmem run`` runs them (they depend on the workload's footprint, so the workload
    is loaded)."""
    experiment, loaded = _load(experiment_toml, workload, seed)
    return experiment.points(loaded)


def run_point(experiment_toml: str, point: dict[str, Any]) -> str:
    """Run one point of a cache grid (a dict of :func:`workload_points` with the run's
    ``seed`` and ``by_seed``); returns its rows as the CSV text ``mobmem run`` writes."""
    experiment, loaded = _load(experiment_toml, point["workload"], point["seed"])
    return experiment.run_point(loaded, point, point["seed"] if point["by_seed"] else None)


def run_seed(experiment_toml: str, run: dict[str, Any]) -> str:
    """Run the experiment with one seed (``run``: ``seed``, ``by_seed`` and ``media``),
    whatever its kind; returns its rows as the CSV text ``mobmem run`` writes."""
    _, experiment = _experiment(experiment_toml)
    return experiment.run_seed(run["seed"], run["by_seed"], run.get("media"))


def forget_workloads() -> None:
    """Drop the experiments and workloads kept in this process."""
    with _lock:
        _loaded.clear()
        _experiments.clear()
