"""Figures of mobmem's results with matplotlib: miss-ratio curves of a cache grid, claims
against the papers' values, and a phone's timeline.

matplotlib is imported when a figure is drawn, not before: ``import mobmem`` works
without it, and drawing without it says to install the ``plot`` extra
(``pip install "mobmem[plot]"``). Each function returns the matplotlib ``Figure`` it drew
on (a new one, or that of the ``ax`` given).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from ._native import MobmemError
from ._phone import MEMORY_COLUMNS

#: The memory figures of a phone's timeline :func:`timeline` draws by default.
TIMELINE_MEMORY: tuple[str, ...] = MEMORY_COLUMNS

# Key columns of a cache grid's point that depend on the seed's workload.
_PAGE_COUNTS = ("memory_pages", "dram_pages", "pcm_pages")

# Colours of the verdicts, the same in every figure.
_VERDICT_COLOURS = {
    "reproduced": "tab:green",
    "direction-only": "tab:orange",
    "not-reproduced": "tab:red",
    "not-testable": "tab:gray",
}


def _pyplot() -> Any:
    try:
        import matplotlib.pyplot as plt
    except ImportError as e:
        raise ImportError(
            "mobmem.plot draws with matplotlib, which is not installed here: "
            'pip install "mobmem[plot]" (the plot extra) or pip install matplotlib'
        ) from e
    return plt


def _need_columns(frame: pd.DataFrame, columns: Sequence[str], what: str) -> None:
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise MobmemError(f"{what}: the frame lacks the columns {', '.join(missing)}")


def _figure_and_axes(ax: Any, panels: int = 1) -> tuple[Any, list[Any]]:
    plt = _pyplot()
    if ax is not None:
        axes = list(ax) if isinstance(ax, (list, tuple)) else [ax]
        if len(axes) != panels:
            raise MobmemError(f"this figure has {panels} panels; ax gives {len(axes)}")
        return axes[0].figure, axes
    fig, made = plt.subplots(1, panels, figsize=(5.5 * panels, 4), squeeze=False)
    return fig, list(made[0])


def miss_ratios(results: pd.DataFrame, *, foreground: bool = False) -> pd.DataFrame:
    """The miss ratio of every point of a cache grid's results (:func:`mobmem.run_experiment`
    or :func:`mobmem.read_results` of a cache experiment): the key columns and
    ``miss_ratio``, misses over accesses (``fg_misses`` over ``fg_accesses`` with
    ``foreground``), the mean over the seeds when the results have several (with the
    mean of the point's sizes in pages, which follow each seed's footprint)."""
    misses, accesses = ("fg_misses", "fg_accesses") if foreground else ("misses", "accesses")
    _need_columns(results, ("metric", "value"), "miss ratios")
    keys = [c for c in results.columns if c not in ("metric", "value", "seed")]
    wanted = results[results["metric"].isin([misses, accesses])]
    if wanted["metric"].nunique() < 2:
        raise MobmemError(
            f"miss ratios need the metrics {misses} and {accesses}: results of a cache "
            "experiment have them"
        )
    seeded = "seed" in results.columns
    # One row of each metric per point (and seed), in the order of the results.
    of_misses = wanted[wanted["metric"] == misses].reset_index(drop=True)
    of_accesses = wanted[wanted["metric"] == accesses].reset_index(drop=True)
    by = keys + ["seed"] * seeded
    if not of_misses[by].equals(of_accesses[by]):
        raise MobmemError(f"the results do not give {misses} and {accesses} once per point")
    wide = of_misses[by].copy()
    wide["miss_ratio"] = of_misses["value"] / of_accesses["value"]
    if not seeded:
        return wide[keys + ["miss_ratio"]]
    # A point is the same in every seed but its sizes in pages: each seed's workload has
    # a footprint of its own. Those are averaged too.
    sizes = [k for k in keys if k in _PAGE_COUNTS]
    point = [k for k in keys if k not in _PAGE_COUNTS]
    means = dict.fromkeys(["miss_ratio", *sizes], "mean")
    table = wide.groupby(point, sort=False, dropna=False).agg(means).reset_index()
    return table[keys + ["miss_ratio"]]


def miss_ratio_curves(
    results: pd.DataFrame,
    *,
    x: str = "memory_fraction",
    workload: str | None = None,
    foreground: bool = False,
    ax: Any = None,
) -> Any:
    """Each policy's miss ratio against memory (``x``: ``memory_fraction`` of the
    workload's footprint, or ``memory_pages``), one line per policy, one panel per
    workload (or only ``workload``). With several seeds each point is their mean; a
    hybrid policy's points at several DRAM shares are averaged too (filter the results
    by ``dram_fraction`` first to draw one share)."""
    table = miss_ratios(results, foreground=foreground)
    _need_columns(table, (x, "workload", "policy"), "miss-ratio curves")
    workloads = list(dict.fromkeys(table["workload"]))
    if workload is not None:
        if workload not in workloads:
            raise MobmemError(
                f"no workload '{workload}' in the results (they have: {', '.join(workloads)})"
            )
        workloads = [workload]
    fig, axes = _figure_and_axes(ax, len(workloads))
    label = "foreground miss ratio" if foreground else "miss ratio"
    for axis, name in zip(axes, workloads):
        of_workload = table[table["workload"] == name]
        for policy, points in of_workload.groupby("policy", sort=False):
            curve = points.groupby(x, sort=True)["miss_ratio"].mean()
            axis.plot(curve.index, curve.to_numpy(), marker="o", label=str(policy))
        axis.set_title(str(name))
        axis.set_xlabel(x.replace("_", " "))
        axis.set_ylabel(label)
        axis.set_ylim(bottom=0)
        axis.grid(True, alpha=0.3)
        axis.legend(fontsize="small")
    return fig


def claims_vs_paper(claims: pd.DataFrame, *, ax: Any = None) -> Any:
    """Each claim's measured mean over the paper's value, with its 95 % interval, one row
    per claim that has a paper value (not zero); the band of ±25 % around 1 is where a
    claim of a number counts as reproduced whatever its interval. Colours are the
    verdicts. ``claims`` is :func:`mobmem.read_claims` or a :class:`mobmem.Report`'s."""
    _need_columns(
        claims, ("id", "paper", "mean", "ci95_low", "ci95_high", "verdict"), "claims vs paper"
    )
    with_paper = claims[claims["paper"].notna() & (claims["paper"] != 0)]
    if with_paper.empty:
        raise MobmemError("none of the claims has a paper value to compare with")
    fig, (axis,) = _figure_and_axes(ax)
    several = "experiment" in claims.columns and claims["experiment"].nunique() > 1
    labels = [
        f"{row.experiment}: {row.id}" if several else str(row.id)
        for row in with_paper.itertuples()
    ]
    paper = with_paper["paper"].to_numpy(dtype=float)
    ratio = with_paper["mean"].to_numpy(dtype=float) / paper
    ends = (
        with_paper["ci95_low"].to_numpy(dtype=float) / paper,
        with_paper["ci95_high"].to_numpy(dtype=float) / paper,
    )
    # A negative paper value flips the interval's ends.
    low, high = np.fmin(*ends), np.fmax(*ends)
    rows = np.arange(len(with_paper))[::-1]
    axis.axvspan(0.75, 1.25, color="tab:green", alpha=0.1, lw=0)
    axis.axvline(1.0, color="black", lw=0.8)
    for verdict in dict.fromkeys(with_paper["verdict"]):
        at = (with_paper["verdict"] == verdict).to_numpy()
        xs = ratio[at]
        err = np.maximum(0.0, np.vstack([xs - low[at], high[at] - xs]))
        axis.errorbar(
            xs,
            rows[at],
            xerr=np.nan_to_num(err),
            fmt="o",
            color=_VERDICT_COLOURS.get(str(verdict), "tab:blue"),
            label=str(verdict),
            capsize=3,
        )
    axis.set_yticks(list(rows))
    axis.set_yticklabels(labels, fontsize="small")
    axis.set_xlabel("measured mean / paper's value")
    finite = [v for v in [*ratio, *low, *high] if math.isfinite(v) and v > 0]
    if finite and max(finite) / min(finite) > 100:
        axis.set_xscale("log")
    axis.legend(fontsize="small")
    axis.grid(True, axis="x", alpha=0.3)
    fig.tight_layout()
    return fig


def timeline(
    frame: pd.DataFrame,
    *,
    config: str | None = None,
    columns: Sequence[str] = TIMELINE_MEMORY,
    ax: Any = None,
) -> Any:
    """A phone's timeline (:func:`mobmem.phone_timeline`): its memory over time (left:
    ``columns``, MiB) and each launch's time (right, by kind: first, cold, warm), the
    kills marked where they happened. ``config`` picks one configuration (``all-on``,
    ``all-off``) when the frame has both."""
    _need_columns(frame, ("config", "time_s", "event", "launch", "launch_ms", "kills", *columns),
                  "a timeline")
    configs = list(dict.fromkeys(frame["config"]))
    if config is None:
        if len(configs) != 1:
            raise MobmemError(
                f"the timeline has the configurations {', '.join(configs)}: pick one with config="
            )
        config = configs[0]
    elif config not in configs:
        raise MobmemError(f"no configuration '{config}' in the timeline (it has: {', '.join(configs)})")
    run = frame[frame["config"] == config]
    fig, (memory, launches) = _figure_and_axes(ax, 2)
    for column in columns:
        memory.plot(run["time_s"], run[column], label=column.removesuffix("_mib").replace("_", " "))
    memory.set_xlabel("time (s)")
    memory.set_ylabel("MiB")
    memory.set_title(f"memory ({config})")
    memory.legend(fontsize="small")
    memory.grid(True, alpha=0.3)
    launched = run[run["event"] == "launch"]
    for kind in ("first", "cold", "warm"):
        of_kind = launched[launched["launch"] == kind]
        if len(of_kind):
            launches.scatter(of_kind["time_s"], of_kind["launch_ms"], label=kind, s=14)
    kills = run["kills"].diff().fillna(run["kills"]).to_numpy() > 0
    for i, t in enumerate(run["time_s"]):
        if kills[i]:
            for axis in (memory, launches):
                axis.axvline(t, color="tab:red", lw=0.6, alpha=0.5)
    launches.set_xlabel("time (s)")
    launches.set_ylabel("launch time (ms)")
    launches.set_title("launches (red: kills before them)")
    launches.legend(fontsize="small")
    launches.grid(True, alpha=0.3)
    fig.tight_layout()
    return fig
