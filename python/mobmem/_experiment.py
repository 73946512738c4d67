"""Experiments: loading them (file or dict) and their results as DataFrames."""

from __future__ import annotations

import csv
import io
import os
import re
from collections.abc import Mapping, Sequence
from typing import Any, Union

import pandas as pd

from . import _native
from ._inputs import fetch, is_url, json_text

#: An experiment: the path of a TOML experiment file, or a dict with the file's keys.
ExperimentLike = Union[str, "os.PathLike[str]", Mapping[str, Any]]

#: Columns of a cache experiment's results, as in the CLI's ``results.csv``: the
#: experiment, the key columns of a point, then one metric and its value a row. Other
#: kinds have key columns of their own between ``experiment`` and ``metric``; an
#: experiment run with seeds has a ``seed`` column after ``experiment``.
RESULT_COLUMNS: tuple[str, ...] = (
    "experiment",
    "workload",
    "policy",
    "family",
    "memory_pages",
    "memory_fraction",
    "dram_fraction",
    "dram_pages",
    "pcm_pages",
    "metric",
    "value",
)

# The columns every kind's results have, at fixed types.
_COMMON_DTYPES: dict[str, Any] = {
    "experiment": str,
    "seed": "int64",
    "metric": str,
    "value": "float64",
}

# The cache kind's key columns at fixed types, so a frame does not depend on what the
# values happen to look like (a column of whole numbers would otherwise be read as
# integers, a workload named "NA" as missing).
_CACHE_DTYPES: dict[str, Any] = {
    "workload": str,
    "policy": str,
    "family": str,
    "memory_pages": "int64",
    "memory_fraction": "float64",
    "dram_fraction": "float64",
    "dram_pages": "int64",
    "pcm_pages": "int64",
}

_HEADER = ",".join(RESULT_COLUMNS)


def _pandas_version() -> tuple[int, int]:
    major, minor = re.match(r"(\d+)\.(\d+)", pd.__version__).groups()  # type: ignore[union-attr]
    return int(major), int(minor)


# The CSV holds the shortest text of each number that reads back to it. pandas 3.1 reads
# every float exactly (and deprecates the option); before, only "round_trip" promises to.
_EXACT_FLOATS: dict[str, Any] = (
    {} if _pandas_version() >= (3, 1) else {"float_precision": "round_trip"}
)


def load_experiment(experiment: ExperimentLike | _native.Experiment) -> _native.Experiment:
    """Parse and validate an experiment file of any kind with the CLI's parser.

    Relative paths (traces, workload configs, phone files, media) are made absolute:
    those of a file are relative to its folder (as ``mobmem run`` reads them), those of a
    dict to the current folder. Workers on other machines are then sent paths that do
    not depend on their own folder.
    """
    if isinstance(experiment, _native.Experiment):
        return experiment
    if isinstance(experiment, Mapping):
        return _native.Experiment.from_json(json_text(experiment), "experiment", os.getcwd())
    if isinstance(experiment, (str, os.PathLike)):
        return _native.Experiment.load(os.fspath(experiment))
    raise TypeError(
        f"an experiment is a TOML file's path or a dict, not {type(experiment).__name__}"
    )


def results_frame(csv_text: str) -> pd.DataFrame:
    """Parse results in the CSV format of ``mobmem run`` into a DataFrame.

    Numbers are read back exactly and empty values (undefined metrics, keys that do not
    apply to a row) are NaN. The cache kind's key columns have fixed types (names stay
    text even when they look like numbers or ``NA``); other kinds' key columns are
    numbers when every value in them is one, text otherwise.
    """
    header = next(csv.reader(io.StringIO(csv_text)), [])
    keys = [c for c in header if c not in _COMMON_DTYPES]
    dtypes = {c: t for c, t in _COMMON_DTYPES.items() if c in header}
    if tuple(keys) == tuple(_CACHE_DTYPES):
        dtypes.update(_CACHE_DTYPES)
    return pd.read_csv(
        io.StringIO(csv_text),
        dtype=dtypes,
        keep_default_na=False,
        na_values=[""],
        **_EXACT_FLOATS,
    )


def join_results(csv_texts: Sequence[str]) -> str:
    """One CSV text from several with the same header (each run's or point's rows), in
    the given order."""
    if not csv_texts:
        return _HEADER + "\n"
    header = csv_texts[0].partition("\n")[0]
    parts = [header + "\n"]
    for text in csv_texts:
        own, _, body = text.partition("\n")
        if own != header:
            raise _native.MobmemError(
                f"results with different columns: {own} after {header}"
            )
        parts.append(body)
    return "".join(parts)


def read_results(path: str | os.PathLike[str]) -> pd.DataFrame:
    """Read a ``results.csv`` written by ``mobmem run`` or ``python -m mobmem.sweep``
    into the DataFrame :func:`run_experiment` returns for the same experiment."""
    with open(path, encoding="utf-8") as f:
        return results_frame(f.read())


def fetched_traces(experiment: _native.Experiment) -> dict[str, bytes]:
    """Content of the experiment's traces that are URLs, by workload name."""
    return {
        w["name"]: fetch(w["trace"])
        for w in experiment.workloads()
        if w["trace"] is not None and is_url(w["trace"])
    }


def media_dir(media: str | os.PathLike[str] | None) -> str | None:
    """The media folder as the native code takes it: absolute, so that workers in other
    folders find the same one."""
    return None if media is None else os.path.abspath(os.fspath(media))


def run_experiment(
    experiment: ExperimentLike,
    *,
    seeds: int | None = None,
    media: str | os.PathLike[str] | None = None,
) -> pd.DataFrame:
    """Run an experiment file of any kind as ``mobmem run`` does, in parallel threads of
    this process.

    ``experiment`` is the path of a TOML experiment file (docs/experiment-files.md lists
    every kind and key; ``experiments/`` holds the papers' files) or a dict with the same
    keys, e.g. ``{"name": "x", "workload": [{"name": "w", "preset": "app-switching"}],
    "sweep": {"policies": ["lru"], "memory_fraction": [0.1]}}`` (a cache grid, the
    default kind) or ``{"kind": "ksm", "name": "k", "pages_to_scan": [50, 100]}``. A dict
    is validated by the same parser as a file. Traces given as URLs are read with fsspec.

    ``seeds`` runs seeds 1 to N instead of the file's ``seeds`` (``--seeds``); ``media``
    is the folder of real files that ``fs`` experiments read (``--media``; else the
    file's ``media`` key, else ``target/media`` of the current folder).

    Returns the rows of the CLI's ``results.csv`` (one row per run and metric, in the
    same order: the columns of the kind, :data:`RESULT_COLUMNS` for a cache grid, and
    ``seed`` after ``experiment`` when run with seeds) with the same values.
    """
    native = load_experiment(experiment)
    data = fetched_traces(native) or None
    return results_frame(native.run(seeds, media_dir(media), data))
