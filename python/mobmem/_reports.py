"""Reproductions and their paper analysis: claims and findings as DataFrames, run here
or read from a report folder written by ``mobmem run`` or ``mobmem reproduce``."""

from __future__ import annotations

import json
import math
import os
import pathlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd

from . import _native
from ._experiment import ExperimentLike, load_experiment, media_dir, results_frame
from ._inputs import is_url
from ._native import MobmemError

#: Columns of :func:`read_claims` and :attr:`Report.claims`: one row per claim. ``paper``
#: is the paper's number (NaN where it states a bound only), ``mean`` and
#: ``ci95_low``/``ci95_high`` the mean over the seeds and its 95 % interval, ``expect``
#: what the verdict compared against (``value``, ``at-least``, ``at-most`` or
#: ``not-testable``) with its ``bound`` (for a not-testable claim, the bound the paper
#: claimed, where it claimed one), ``explanation`` why a claim is not reproduced
#: (missing when it is) and ``values`` each seed's value. A ``source`` column follows
#: ``unit`` when the claims give where in the paper each one is stated.
CLAIM_COLUMNS: tuple[str, ...] = (
    "experiment",
    "id",
    "claim",
    "paper",
    "mean",
    "ci95_low",
    "ci95_high",
    "verdict",
    "unit",
    "seeds",
    "expect",
    "bound",
    "explanation",
    "values",
)

#: Columns of :func:`read_findings` and :attr:`Report.findings`: what a run shows beyond
#: the paper's claims, in words with its numbers.
FINDING_COLUMNS: tuple[str, ...] = ("experiment", "id", "text", "seeds")

_FLOATS = ("paper", "mean", "ci95_low", "ci95_high", "bound")


def _bound(expect: dict, where: str) -> float:
    """The bound a claim was judged by, or, for a claim made not testable, the one the
    paper claimed (``expect.claimed.bound``); NaN where there is none."""
    claimed = expect.get("claimed")
    if expect.get("bound") is None and isinstance(claimed, dict):
        return _number(claimed.get("bound"), f"{where}, `expect.claimed.bound`")
    return _number(expect.get("bound"), f"{where}, `expect.bound`")


@dataclass(frozen=True)
class Report:
    """What a run of an experiment gives, as ``mobmem run`` writes it into its report
    folder: ``results`` (``results.csv``), ``claims`` (``claims.json``, one row per claim
    of the paper the experiment reproduces) and ``findings`` (``findings.json``)."""

    experiment: str
    results: pd.DataFrame
    claims: pd.DataFrame
    findings: pd.DataFrame


def _number(value: Any, where: str) -> float:
    if value is None:
        return math.nan
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise MobmemError(f"{where}: expected a number, got {value!r}")
    return float(value)


def _count(value: Any, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise MobmemError(f"{where}: expected a count, got {value!r}")
    return value


def _field(item: Any, key: str, where: str) -> Any:
    if not isinstance(item, dict):
        raise MobmemError(f"{where}: expected an object, got {type(item).__name__}")
    if key not in item:
        raise MobmemError(f"{where}: no `{key}`")
    return item[key]


def _list_of(parsed: Any, origin: str) -> list[Any]:
    if not isinstance(parsed, list):
        raise MobmemError(f"{origin}: expected a list, got {type(parsed).__name__}")
    return parsed


def claims_frame(claims: Sequence[Any], experiment: str, origin: str = "claims") -> pd.DataFrame:
    """The claims of ``claims.json`` (parsed) as a DataFrame of :data:`CLAIM_COLUMNS`."""
    has_source = any(isinstance(c, dict) and "source" in c for c in claims)
    rows = []
    for i, c in enumerate(claims):
        where = f"{origin}: claim {i + 1}"
        ci95 = _field(c, "ci95", where)
        if not isinstance(ci95, list) or len(ci95) != 2:
            raise MobmemError(f"{where}: `ci95` is not a pair of numbers")
        expect = c.get("expect") or {}
        if not isinstance(expect, dict):
            raise MobmemError(f"{where}: `expect` is not an object")
        values = c.get("values") or []
        if not isinstance(values, list):
            raise MobmemError(f"{where}: `values` is not a list")
        row = {
            "experiment": experiment,
            "id": str(_field(c, "id", where)),
            "claim": str(_field(c, "claim", where)),
            "paper": _number(c.get("paper"), f"{where}, `paper`"),
            "mean": _number(_field(c, "mean", where), f"{where}, `mean`"),
            "ci95_low": _number(ci95[0], f"{where}, `ci95`"),
            "ci95_high": _number(ci95[1], f"{where}, `ci95`"),
            "verdict": str(_field(c, "verdict", where)),
            "unit": str(c.get("unit", "")),
            "seeds": _count(c.get("seeds", len(values)), f"{where}, `seeds`"),
            "expect": str(expect.get("kind", "")),
            "bound": _bound(expect, where),
            "explanation": c.get("explanation"),
            "values": tuple(_number(v, f"{where}, `values`") for v in values),
        }
        if has_source:
            row["source"] = c.get("source")
        rows.append(row)
    columns = list(CLAIM_COLUMNS)
    if has_source:
        columns.insert(columns.index("unit") + 1, "source")
    frame = pd.DataFrame(rows, columns=columns)
    return frame.astype({c: "float64" for c in _FLOATS} | {"seeds": "int64"})


def findings_frame(
    findings: Sequence[Any], experiment: str, origin: str = "findings"
) -> pd.DataFrame:
    """The findings of ``findings.json`` (parsed) as a DataFrame of
    :data:`FINDING_COLUMNS`."""
    rows = []
    for i, f in enumerate(findings):
        where = f"{origin}: finding {i + 1}"
        rows.append(
            {
                "experiment": experiment,
                "id": str(_field(f, "id", where)),
                "text": str(_field(f, "text", where)),
                "seeds": _count(f.get("seeds", 1), f"{where}, `seeds`"),
            }
        )
    return pd.DataFrame(rows, columns=list(FINDING_COLUMNS)).astype({"seeds": "int64"})


def _read_json(path: pathlib.Path) -> Any:
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except json.JSONDecodeError as e:
        raise MobmemError(f"{path}: not JSON ({e})") from None
    except OSError as e:
        raise MobmemError(f"{path}: {e.strerror or e}") from None


def _experiment_folders(
    report_dir: str | os.PathLike[str], file: str
) -> list[tuple[str, pathlib.Path]]:
    """The experiments of a report folder that hold ``file``, with their names: the
    folder itself when it is one experiment's, else each experiment's folder in it (in
    the order its ``provenance.json`` lists them, then by name)."""
    folder = pathlib.Path(report_dir)

    def name_of(experiment_dir: pathlib.Path) -> str:
        info = experiment_dir / "report.json"
        if info.is_file():
            parsed = _read_json(info)
            name = parsed.get("experiment") if isinstance(parsed, dict) else None
            if isinstance(name, str) and name:
                return name
        return experiment_dir.name

    if (folder / file).is_file():
        return [(name_of(folder), folder)]
    if not folder.is_dir():
        raise MobmemError(f"{folder}: no such report folder")
    inside = sorted(p for p in folder.iterdir() if (p / file).is_file())
    listed: list[str] = []
    provenance = folder / "provenance.json"
    if provenance.is_file():
        names = _read_json(provenance)
        if isinstance(names, dict) and isinstance(names.get("experiments"), list):
            listed = [n for n in names["experiments"] if isinstance(n, str)]
    order = {name: i for i, name in enumerate(listed)}
    inside.sort(key=lambda p: (order.get(p.name, len(order)), p.name))
    if not inside:
        raise MobmemError(
            f"{folder}: no {file} in it or in its folders "
            "(mobmem run and mobmem reproduce write one per experiment)"
        )
    return [(name_of(p), p) for p in inside]


def read_claims(report_dir: str | os.PathLike[str]) -> pd.DataFrame:
    """Read the claims of a report folder written by ``mobmem run`` or ``mobmem
    reproduce``: one experiment's folder (``report/ksm``, holding ``claims.json``) or the
    ``--out`` folder of several (``report``), their claims one after another. Returns one
    row per claim, :data:`CLAIM_COLUMNS`; an experiment without ``reproduces`` has none."""
    frames = []
    for name, folder in _experiment_folders(report_dir, "claims.json"):
        path = str(folder / "claims.json")
        frames.append(claims_frame(_list_of(_read_json(folder / "claims.json"), path), name, path))
    return _concat(frames)


def read_findings(report_dir: str | os.PathLike[str]) -> pd.DataFrame:
    """Read the findings of a report folder (as :func:`read_claims` reads claims): one
    row per finding, :data:`FINDING_COLUMNS`."""
    frames = []
    for name, folder in _experiment_folders(report_dir, "findings.json"):
        path = str(folder / "findings.json")
        frames.append(findings_frame(_list_of(_read_json(folder / "findings.json"), path), name, path))
    return _concat(frames)


def _concat(frames: list[pd.DataFrame]) -> pd.DataFrame:
    non_empty = [f for f in frames if len(f)]
    if not non_empty:
        return frames[0]
    if len(non_empty) == 1:
        return non_empty[0].reset_index(drop=True)
    joined = pd.concat(non_empty, ignore_index=True)
    if "source" in joined.columns:
        # Where the claims of one experiment give it: after `unit`, as in each frame.
        columns = [c for c in joined.columns if c != "source"]
        columns.insert(columns.index("unit") + 1, "source")
        joined = joined[columns]
    return joined


def is_shipped_name(text: str) -> bool:
    """Whether a string names an experiment shipped with mobmem rather than a file: no
    ``.toml`` at its end and no folder in it."""
    return not (text.endswith(".toml") or os.sep in text or (os.altsep or os.sep) in text)


def experiment_or_shipped(experiment: ExperimentLike | _native.Experiment) -> _native.Experiment:
    """An experiment as :func:`mobmem.run_experiment` takes it, or the name of one shipped
    with mobmem (:func:`shipped_experiment`)."""
    if isinstance(experiment, str) and is_shipped_name(experiment):
        return _native.Experiment.shipped(experiment)
    return load_experiment(experiment)


def reproduce(
    experiment: ExperimentLike,
    *,
    seeds: int | None = None,
    media: str | os.PathLike[str] | None = None,
) -> Report:
    """Run a reproduction as ``mobmem reproduce NAME`` does and return its results,
    claims and findings as DataFrames (:class:`Report`).

    ``experiment`` is a reproduction's name (:func:`reproductions`: ``ksm``,
    ``multi-swap``, ...), run from the file mobmem ships, or an experiment as
    :func:`run_experiment` takes it (a TOML file or a dict; an edited copy of a shipped
    file, :func:`shipped_experiment`, for one), whose ``reproduces`` key names the
    paper analysis applied to its results.

    ``seeds`` runs seeds 1 to N: for a name the default is ``mobmem reproduce``'s (5),
    for a file or dict its ``seeds`` key. ``media`` is the folder of real files the
    ``selective-page-cache`` reproduction reads (``--media``; default ``target/media``
    of the current folder, which ``scripts/make-media.sh`` makes).

    Every claim's mean, interval and verdict are those ``claims.json`` holds after the
    same run of the CLI (:func:`read_claims` reads them back).
    """
    native = experiment_or_shipped(experiment)
    if isinstance(experiment, str) and is_shipped_name(experiment) and seeds is None:
        seeds = _native.reproductions()[1]
    urls = [
        w["name"] for w in native.workloads() if w["trace"] is not None and is_url(w["trace"])
    ]
    if urls:
        raise MobmemError(
            f"experiment {native.name}: its claims are computed from traces on this machine; "
            f"workload {urls[0]} is read from a URL (copy the trace here, or use "
            "run_experiment or sweep, which read URLs, for the results alone)"
        )
    csv_text, claims_json, findings_json = native.report(seeds, media_dir(media))
    name = native.name
    return Report(
        experiment=name,
        results=results_frame(csv_text),
        claims=claims_frame(json.loads(claims_json), name),
        findings=findings_frame(json.loads(findings_json), name),
    )


def shipped_experiment(name: str) -> dict[str, Any]:
    """The keys of an experiment file shipped with mobmem (``experiments/NAME.toml``) as a
    dict: a reproduction's (:func:`reproductions`) or a phone's (``phone``,
    ``phone-2012``). Edit it and run it with :func:`run_experiment`, :func:`reproduce`,
    :func:`sweep` or :func:`phone_timeline`."""
    return json.loads(_native.shipped_json(name))


def reproductions() -> pd.DataFrame:
    """The reproductions ``mobmem reproduce`` runs, in the order ``reproduce all`` runs
    them: ``name`` and ``summary`` (the paper it reproduces)."""
    listed, _ = _native.reproductions()
    return pd.DataFrame(listed, columns=["name", "summary"])
