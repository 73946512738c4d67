"""The tasks of a sweep, as they run on a worker (a Dask worker process, or a thread of
this process): plain functions of plain arguments, so they pickle.

A task gets the experiment as JSON (its paths already absolute) and loads the workload it
needs itself: a trace file from its path (or its URL, through fsspec), a generated
workload by generating it from its seed, which gives the same trace on every machine.
Loaded workloads are kept for the next tasks of the same process, a few at a time.
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
_loaded: OrderedDict[tuple[str, str], tuple[_native.Experiment, _native.Workload]] = (
    OrderedDict()
)


def _load(experiment_json: str, workload: str) -> tuple[_native.Experiment, _native.Workload]:
    key = (hashlib.sha256(experiment_json.encode()).hexdigest(), workload)
    # One lock for all: threads that need the same workload wait for one load of it
    # instead of each loading it.
    with _lock:
        if key in _loaded:
            _loaded.move_to_end(key)
            return _loaded[key]
        experiment = _native.Experiment.from_json(experiment_json, "experiment")
        spec = next((w for w in experiment.workloads() if w["name"] == workload), None)
        trace = None if spec is None else spec["trace"]
        data = fetch(trace) if trace is not None and is_url(trace) else None
        entry = (experiment, experiment.load_workload(workload, data))
        _loaded[key] = entry
        while len(_loaded) > _KEPT_WORKLOADS:
            _loaded.popitem(last=False)
        return entry


def workload_points(experiment_json: str, workload: str) -> list[dict[str, Any]]:
    """The points of one workload, in the order ``mobmem run`` runs them (they depend on
    the workload's footprint, so the workload is loaded)."""
    experiment, loaded = _load(experiment_json, workload)
    return experiment.points(loaded)


def run_point(experiment_json: str, point: dict[str, Any]) -> str:
    """Run one point; returns its rows as the CSV text ``mobmem run`` writes."""
    experiment, loaded = _load(experiment_json, point["workload"])
    return experiment.run_point(loaded, point)


def forget_workloads() -> None:
    """Drop the workloads kept in this process."""
    with _lock:
        _loaded.clear()
