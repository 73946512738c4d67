"""Experiments: loading them (file or dict) and their results as DataFrames."""

from __future__ import annotations

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

#: Columns of the results, as in the CLI's ``results.csv``: the experiment, the key
#: columns of a point, then one metric and its value a row.
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

# Fixed types, so a frame does not depend on what the values happen to look like (a
# column of whole numbers would otherwise be read as integers).
_DTYPES: dict[str, Any] = {
    "experiment": str,
    "workload": str,
    "policy": str,
    "family": str,
    "memory_pages": "int64",
    "memory_fraction": "float64",
    "dram_fraction": "float64",
    "dram_pages": "int64",
    "pcm_pages": "int64",
    "metric": str,
    "value": "float64",
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
    """Parse and validate an experiment with the CLI's parser.

    Relative trace and config paths are made absolute: those of a file are relative to its
    folder (as ``mobmem run`` reads them), those of a dict to the current folder. Workers
    on other machines are then sent paths that do not depend on their own folder.
    """
    if isinstance(experiment, _native.Experiment):
        return experiment
    if isinstance(experiment, Mapping):
        parsed = _native.Experiment.from_json(json_text(experiment), "experiment")
    elif isinstance(experiment, (str, os.PathLike)):
        parsed = _native.Experiment.load(os.fspath(experiment))
    else:
        raise TypeError(
            f"an experiment is a TOML file's path or a dict, not {type(experiment).__name__}"
        )
    return parsed.resolved(os.getcwd())


def results_frame(csv_text: str) -> pd.DataFrame:
    """Parse results in the CSV format of ``mobmem run`` into a DataFrame.

    Numbers are read back exactly, empty values (undefined metrics) are NaN, and names
    stay text even when they look like numbers or ``NA``.
    """
    return pd.read_csv(
        io.StringIO(csv_text),
        dtype=_DTYPES,
        keep_default_na=False,
        na_values={"value": [""]},
        **_EXACT_FLOATS,
    )


def join_results(csv_texts: Sequence[str]) -> str:
    """One CSV text from several, each with the header, in the given order."""
    parts = [_HEADER + "\n"]
    for text in csv_texts:
        header, _, body = text.partition("\n")
        if header != _HEADER:
            raise _native.MobmemError(f"results with unexpected columns: {header}")
        parts.append(body)
    return "".join(parts)


def read_results(path: str | os.PathLike[str]) -> pd.DataFrame:
    """Read a ``results.csv`` written by ``mobmem run`` or ``python -m mobmem.sweep``
    into the DataFrame :func:`run_experiment` returns for the same experiment."""
    with open(path, encoding="utf-8") as f:
        return results_frame(f.read())


def _fetched_traces(experiment: _native.Experiment) -> dict[str, bytes]:
    """Content of the experiment's traces that are URLs, by workload name."""
    return {
        w["name"]: fetch(w["trace"])
        for w in experiment.workloads()
        if w["trace"] is not None and is_url(w["trace"])
    }


def run_experiment(experiment: ExperimentLike) -> pd.DataFrame:
    """Run an experiment as ``mobmem run`` does, in parallel threads of this process.

    ``experiment`` is the path of a TOML experiment file (``experiments/reference.toml``
    lists every key) or a dict with the same keys, e.g.
    ``{"name": "x", "workload": [{"name": "w", "preset": "app-switching"}],
    "sweep": {"policies": ["lru"], "memory_fraction": [0.1]}}``. A dict is validated by
    the same parser as a file. Traces given as URLs are read with fsspec.

    Returns the rows of the CLI's ``results.csv`` (columns :data:`RESULT_COLUMNS`, one
    row per point and metric, in the same order) with the same values.
    """
    native = load_experiment(experiment)
    return results_frame(native.run(_fetched_traces(native) or None))
