"""mobmem.plot: the figures draw the numbers of the results (the miss ratio of every
point, each claim's mean over the paper's value), and drawing without matplotlib says
which extra to install."""

from __future__ import annotations

import json
import math
import sys

import matplotlib
import numpy as np
import pytest

import mobmem
from mobmem import plot
from support import small_experiment

# Figures drawn in memory, not shown.
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


@pytest.fixture(autouse=True)
def close_figures():
    yield
    plt.close("all")


@pytest.fixture(scope="module")
def results(trace_file):
    experiment = small_experiment(trace=str(trace_file))
    del experiment["seed"]
    experiment["seeds"] = 2
    return mobmem.run_experiment(experiment)


def test_miss_ratios_are_misses_over_accesses_averaged_over_seeds(results):
    table = plot.miss_ratios(results)
    assert "seed" not in table.columns and "metric" not in table.columns
    points = results.drop_duplicates(["workload", "policy", "memory_fraction", "dram_fraction"])
    assert len(table) == len(points)
    value = results.set_index(["seed", "workload", "policy", "memory_fraction", "metric"])["value"]
    for row in table.itertuples():
        per_seed = [value[(s, row.workload, row.policy, row.memory_fraction, "misses")]
                    / value[(s, row.workload, row.policy, row.memory_fraction, "accesses")]
                    for s in (1, 2)]
        assert row.miss_ratio == pytest.approx(sum(per_seed) / 2, rel=1e-12)
        hit = [value[(s, row.workload, row.policy, row.memory_fraction, "hit_ratio")]
               for s in (1, 2)]
        assert row.miss_ratio == pytest.approx(1 - sum(hit) / 2, abs=1e-12)
    # LRU is a stack policy: fewer misses with more memory.
    for _, curve in table[table["policy"] == "lru"].groupby("workload"):
        assert curve.sort_values("memory_fraction")["miss_ratio"].is_monotonic_decreasing
    foreground = plot.miss_ratios(results, foreground=True)
    assert not np.allclose(foreground["miss_ratio"], table["miss_ratio"])


def test_miss_ratio_curves_draw_one_line_per_policy_and_a_panel_per_workload(results):
    fig = plot.miss_ratio_curves(results)
    axes = fig.get_axes()
    assert [a.get_title() for a in axes] == ["apps", "file"]
    table = plot.miss_ratios(results)
    for axis in axes:
        lines = {line.get_label(): line for line in axis.get_lines()}
        assert list(lines) == ["lru", "2q", "hybrid-lru", "app-aware"]
        for policy, line in lines.items():
            want = table[(table["workload"] == axis.get_title()) & (table["policy"] == policy)]
            want = want.sort_values("memory_fraction")
            assert list(line.get_xdata()) == want["memory_fraction"].tolist()
            assert list(line.get_ydata()) == pytest.approx(want["miss_ratio"].tolist())
    one = plot.miss_ratio_curves(results, workload="file", x="memory_pages")
    assert [a.get_title() for a in one.get_axes()] == ["file"]
    with pytest.raises(mobmem.MobmemError, match="no workload 'nope' in the results \\(they "
                       "have: apps, file\\)"):
        plot.miss_ratio_curves(results, workload="nope")
    _, ax = plt.subplots()
    with pytest.raises(mobmem.MobmemError, match="this figure has 2 panels; ax gives 1"):
        plot.miss_ratio_curves(results, ax=ax)


def test_miss_ratios_need_a_cache_grids_results():
    from test_kinds import KSM

    with pytest.raises(mobmem.MobmemError, match="need the metrics misses and accesses"):
        plot.miss_ratios(mobmem.run_experiment(dict(KSM, seeds=1)))


def claims_frame(tmp_path, claims):
    (tmp_path / "claims.json").write_text(json.dumps(claims))
    return mobmem.read_claims(tmp_path)


def test_claims_are_drawn_as_their_mean_over_the_papers_value(tmp_path):
    def claim(id, paper, mean, low, high, verdict):
        return {"id": id, "claim": id, "paper": paper, "mean": mean, "ci95": [low, high],
                "verdict": verdict, "unit": "x", "seeds": 2, "expect": {"kind": "value"},
                "values": [low, high]}

    claims = claims_frame(tmp_path, [
        claim("half", 4.0, 2.0, 1.0, 3.0, "direction-only"),
        claim("bound", None, 5.0, 4.0, 6.0, "reproduced"),
        claim("close", 10.0, 11.0, 10.5, 11.5, "reproduced"),
        claim("negative", -2.0, -3.0, -4.0, -2.0, "not-reproduced"),
    ])
    fig = plot.claims_vs_paper(claims)
    (axis,) = fig.get_axes()
    labels = [t.get_text() for t in axis.get_yticklabels()]
    # Top to bottom in the frame's order; the claim without a paper value left out.
    ticks = dict(zip(labels, axis.get_yticks()))
    assert sorted(labels) == ["close", "half", "negative"]
    assert ticks["half"] > ticks["close"] > ticks["negative"]
    drawn = {}
    for container in axis.containers:
        xs, ys = container.lines[0].get_data()
        for x, y in zip(xs, ys):
            drawn[labels[list(axis.get_yticks()).index(y)]] = (x, container.get_label())
    assert drawn == {"half": (0.5, "direction-only"), "close": (1.1, "reproduced"),
                     "negative": (1.5, "not-reproduced")}
    with pytest.raises(mobmem.MobmemError, match="none of the claims has a paper value"):
        plot.claims_vs_paper(claims[claims["id"] == "bound"])


def test_a_timeline_draws_memory_and_launches():
    frame = mobmem.phone_timeline("phone")
    with pytest.raises(mobmem.MobmemError, match="configurations all-off, all-on: pick one"):
        plot.timeline(frame)
    fig = plot.timeline(frame, config="all-on")
    memory, launches = fig.get_axes()
    run = frame[frame["config"] == "all-on"]
    lines = {line.get_label(): line for line in memory.get_lines() if line.get_label()[0] != "_"}
    assert list(lines) == ["free", "page cache", "anon", "swap used", "zram pool", "ksm saved"]
    assert list(lines["anon"].get_ydata()) == run["anon_mib"].tolist()
    drawn = sum(len(c.get_offsets()) for c in launches.collections)
    assert drawn == (run["event"] == "launch").sum()


def test_without_matplotlib_the_error_names_the_plot_extra(monkeypatch, results):
    for name in list(sys.modules):
        if name == "matplotlib" or name.startswith("matplotlib."):
            monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    with pytest.raises(ImportError, match=r'pip install "mobmem\[plot\]"'):
        plot.miss_ratio_curves(results)
    # The numbers need no matplotlib.
    assert not plot.miss_ratios(results).empty
    assert not math.isnan(plot.miss_ratios(results)["miss_ratio"].iloc[0])
