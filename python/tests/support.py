"""Experiments for the tests, as dicts and as TOML files."""

from __future__ import annotations

import json
import pathlib
from typing import Any


def small_experiment(name: str = "small", trace: str | None = None) -> dict[str, Any]:
    """A small experiment as a dict: a preset workload (and a trace file's, if given),
    single-tier and hybrid policies, three memory sizes."""
    workloads: list[dict[str, Any]] = [
        {"name": "apps", "preset": "app-switching", "scale": 0.02}
    ]
    if trace is not None:
        workloads.append({"name": "file", "trace": trace})
    return {
        "name": name,
        "title": "A small experiment",
        "seed": 7,
        "workload": workloads,
        "sweep": {
            "policies": ["lru", "2q", "hybrid-lru", "app-aware"],
            "memory_fraction": [0.05, 0.1, 0.25],
        },
    }


def toml_value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return repr(v)
    if isinstance(v, str):
        return json.dumps(v)
    if isinstance(v, list):
        return "[" + ", ".join(toml_value(x) for x in v) + "]"
    raise TypeError(v)


def write_toml(path: pathlib.Path, experiment: dict[str, Any]) -> pathlib.Path:
    """Write an experiment dict as a TOML file (the few shapes small_experiment uses)."""
    lines = []
    for key, value in experiment.items():
        if not isinstance(value, (dict, list)):
            lines.append(f"{key} = {toml_value(value)}")
    for workload in experiment["workload"]:
        lines.append("[[workload]]")
        lines += [f"{k} = {toml_value(v)}" for k, v in workload.items()]
    for table in ("sweep", "cost", "devices"):
        if table in experiment:
            lines.append(f"[{table}]")
            lines += [f"{k} = {toml_value(v)}" for k, v in experiment[table].items()]
    path.write_text("\n".join(lines) + "\n")
    return path
