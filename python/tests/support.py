"""Experiments for the tests, as dicts and as TOML files."""

from __future__ import annotations

import json
import pathlib
import random
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


def _toml_key(key: str) -> str:
    return key if key.replace("_", "").replace("-", "").isalnum() else json.dumps(key)


def _toml_table(lines: list[str], prefix: str, table: dict[str, Any]) -> None:
    """Append a table's keys, then its tables and arrays of tables, as TOML."""
    def is_tables(v: Any) -> bool:
        return isinstance(v, list) and bool(v) and all(isinstance(x, dict) for x in v)

    for key, value in table.items():
        if not isinstance(value, dict) and not is_tables(value):
            lines.append(f"{_toml_key(key)} = {toml_value(value)}")
    for key, value in table.items():
        name = f"{prefix}{_toml_key(key)}"
        if isinstance(value, dict):
            lines.append(f"[{name}]")
            _toml_table(lines, name + ".", value)
        elif is_tables(value):
            for item in value:
                lines.append(f"[[{name}]]")
                _toml_table(lines, name + ".", item)


def write_toml(path: pathlib.Path, experiment: dict[str, Any]) -> pathlib.Path:
    """Write an experiment dict as a TOML file (tables, arrays of tables, and values of
    the kinds toml_value knows)."""
    lines: list[str] = []
    _toml_table(lines, "", experiment)
    path.write_text("\n".join(lines) + "\n")
    return path


def make_media(folder: pathlib.Path) -> pathlib.Path:
    """A media folder as scripts/make-media.sh leaves it, small: an incompressible
    "video" of 96 KiB and a text file."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "video-1.mp4").write_bytes(random.Random(1).randbytes(96 * 1024))
    (folder / "text-1.txt").write_text("text " * 20000)
    (folder / ".complete").write_text("")
    return folder
