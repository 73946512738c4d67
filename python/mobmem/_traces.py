"""Single runs and traces: ``mobmem sim``, ``mobmem trace info`` and ``mobmem gen``."""

from __future__ import annotations

import json
import os
import pathlib
from collections.abc import Mapping
from typing import Any, Union

from . import _native
from ._inputs import json_text, trace_input

#: A trace file: a path, or a URL read with fsspec.
TraceLike = Union[str, "os.PathLike[str]"]


def simulate(
    trace: TraceLike,
    policy: str,
    capacity: int,
    dram_fraction: float = 0.05,
    cost: str = "paper-relative",
    format: str | None = None,
    columns: str | None = None,
    *,
    warmup: int = 0,
    hash_object_ids: bool = False,
) -> dict[str, float]:
    """Simulate one policy on one trace, as ``mobmem sim --json`` does.

    ``capacity`` is the memory in pages; a hybrid policy gives ``dram_fraction`` of it to
    DRAM and the rest to PCM. ``cost`` is ``paper-relative`` or ``table1-ns``; ``format``
    (``mmt``, ``csv``, ``txt``, ``lis``, ``oracle-general``, ``vscsi``, ``twr``,
    ``twr-ns`` or a layout such as ``mobile-block``, ``msr``, ``blkparse``) overrides
    detection from the name, and ``columns`` is a column spec for a CSV or text trace of
    any layout, as ``--columns`` takes it (``"obj-id-col=2, time-col=1, has-header=true"``).
    ``warmup`` requests only warm the cache up (``--warmup``): the figures count from the
    request after them. ``hash_object_ids`` makes a hashing policy (w-tinylfu's sketch)
    hash the trace's object ids instead of mobmem's page ids, as libCacheSim does
    (``--hash-object-ids``; a trace of objects only).

    Returns what the CLI's JSON holds besides the trace and policy names: ``dram_pages``,
    ``pcm_pages`` (hybrid policies), then every metric the policy's family can make, in
    the order ``mobmem sim`` lists them (a single-tier policy has no PCM or migration
    metrics). A metric that is undefined for the run (``null`` in the CLI's JSON) is NaN.
    """
    name, data = trace_input(trace)
    pairs = _native.simulate(
        name, policy, capacity, dram_fraction, cost, format, data, columns, warmup,
        hash_object_ids,
    )
    return dict(pairs)


def trace_summary(
    trace: TraceLike, format: str | None = None, columns: str | None = None
) -> dict[str, Any]:
    """What a trace holds, as ``mobmem trace info --json`` prints it: events, accesses,
    writes, distinct pages, foreground and background accesses, processes, duration.
    ``format`` and ``columns`` as for :func:`simulate`."""
    name, data = trace_input(trace)
    return json.loads(_native.trace_summary(name, format, data, columns))


def _is_config_path(text: str) -> bool:
    return text.endswith(".toml") or os.sep in text or (os.altsep or os.sep) in text


def generate(
    preset_or_config: str | os.PathLike[str] | Mapping[str, Any],
    seed: int = 1,
    out: str | os.PathLike[str] | None = None,
    scale: float | None = None,
    *,
    config: str | os.PathLike[str] | Mapping[str, Any] | None = None,
    no_background: bool = False,
) -> pathlib.Path | dict[str, Any]:
    """Generate a synthetic workload trace, as ``mobmem gen`` does.

    ``preset_or_config`` is a preset name (:func:`presets`, every one ``mobmem gen
    --list`` lists), the path of a workload config file (TOML; ``mobmem gen --show
    PRESET`` prints one) or a dict with its keys. A preset with a model of its own
    (``app-cycling``, ``gallery-usb``, ...) also takes ``config``, a file or dict of some
    of its parameters, the rest keeping the preset's (``mobmem gen NAME --config FILE``).
    ``no_background`` leaves the background load out, for the presets that have one
    (``--no-background``). The same seed gives the same trace on every machine;
    ``scale`` multiplies its length.

    With ``out`` (ending in ``.mmt`` or ``.csv``) the trace is written there, atomically,
    and the path is returned; without it, the trace's summary (as :func:`trace_summary`
    gives it) is returned and nothing is written.
    """
    source: dict[str, Any] = {}

    def add_config(value: Any) -> None:
        if isinstance(value, Mapping):
            source["config_json"] = json_text(value)
        else:
            source["config_path"] = os.fspath(value)

    if config is not None:
        if not isinstance(preset_or_config, str) or _is_config_path(preset_or_config):
            raise TypeError("config= goes with a preset's name")
        source["preset"] = preset_or_config
        add_config(config)
    elif isinstance(preset_or_config, Mapping) or isinstance(preset_or_config, os.PathLike) or (
        isinstance(preset_or_config, str) and _is_config_path(preset_or_config)
    ):
        add_config(preset_or_config)
    elif isinstance(preset_or_config, str):
        source["preset"] = preset_or_config
    else:
        raise TypeError(
            "preset_or_config is a preset name, a config file's path or a dict, not "
            f"{type(preset_or_config).__name__}"
        )
    out_path = None if out is None else os.fspath(out)
    summary = _native.generate(
        seed, scale=scale, out=out_path, no_background=no_background, **source
    )
    return json.loads(summary) if out_path is None else pathlib.Path(out_path)


def presets() -> list[str]:
    """Names of the synthetic workload presets, as ``mobmem gen --list`` lists them."""
    return list(_native.presets())


def policies() -> list[dict[str, str]]:
    """The policies of the registry, as ``mobmem policies`` lists them: name, family
    (``single-tier`` or ``hybrid``) and a summary."""
    return [
        {"name": name, "family": family, "summary": summary}
        for name, family, summary in _native.policies()
    ]
