"""Sweeps of a cache grid: split into one task per point, run in this process or on a Dask
cluster of two worker processes, the same DataFrame as run_experiment; resumed after an
interruption."""

from __future__ import annotations

import subprocess
import sys

import pandas as pd
import pytest

import mobmem
from mobmem import _tasks
from mobmem._sweep import point_key
from support import small_experiment



@pytest.fixture(scope="module")
def experiment(trace_file):
    return small_experiment(trace=str(trace_file))


@pytest.fixture(scope="module")
def expected(experiment):
    return mobmem.run_experiment(experiment)


def test_points_follow_the_grid_order(experiment):
    native = mobmem._experiment.load_experiment(experiment)
    spec = native.to_toml()
    assert native.splits_by_point and native.runs() == ([7], False)
    points = [p for w in ("apps", "file") for p in _tasks.workload_points(spec, w, 7)]
    assert len(points) == 2 * 4 * 3
    assert [p["policy"] for p in points[:6]] == ["lru"] * 3 + ["2q"] * 3
    assert points[0]["memory_fraction"] == 0.05 and points[0]["dram_pages"] == points[0]["memory_pages"]
    hybrid = points[6]
    assert hybrid["family"] == "hybrid"
    assert hybrid["dram_pages"] + hybrid["pcm_pages"] == hybrid["memory_pages"]
    assert len({point_key(spec, p) for p in points}) == len(points)


def test_a_point_outside_the_grid_is_refused(experiment):
    native = mobmem._experiment.load_experiment(experiment)
    spec = native.to_toml()
    point = dict(_tasks.workload_points(spec, "apps", 7)[0], memory_pages=12345,
                 seed=7, by_seed=False)
    with pytest.raises(mobmem.MobmemError, match="no point \\(lru, 12345 pages"):
        _tasks.run_point(spec, point)


def test_in_process_sweep_equals_run_experiment(experiment, expected):
    pd.testing.assert_frame_equal(mobmem.sweep(experiment), expected, check_exact=True)


def test_sweep_on_a_local_cluster_equals_run_experiment(client, experiment, expected):
    swept = mobmem.sweep(experiment, client=client)
    pd.testing.assert_frame_equal(swept, expected, check_exact=True)
    # Both workers took part.
    ran_on = client.run(lambda: len(_tasks._loaded))
    assert len(ran_on) == 2 and all(n > 0 for n in ran_on.values())


def test_workers_read_a_trace_url_with_fsspec(client, trace_file, expected):
    by_url = small_experiment(trace=trace_file.as_uri())
    swept = mobmem.sweep(by_url, client=client)
    pd.testing.assert_frame_equal(swept, expected, check_exact=True)


def test_a_worker_error_arrives_as_mobmem_error(client, tmp_path):
    doomed = tmp_path / "doomed.mmt"
    mobmem.generate("app-switching", seed=1, scale=0.01, out=doomed)
    experiment = small_experiment(name="doomed", trace=str(doomed))
    doomed.unlink()  # the workers will not find it
    with pytest.raises(mobmem.MobmemError, match="doomed.mmt: No such file"):
        mobmem.sweep(experiment, client=client)


class Interrupt(Exception):
    pass


def counting_runs(monkeypatch) -> list:
    """Record every point the in-process sweep runs."""
    ran: list = []
    real = _tasks.run_point

    def run_point(spec, point):
        ran.append(point_key(spec, point))
        return real(spec, point)

    monkeypatch.setattr(_tasks, "run_point", run_point)
    return ran


def test_an_interrupted_sweep_resumes_with_what_was_missing(tmp_path, monkeypatch,
                                                            experiment, expected):
    results_dir = tmp_path / "points"
    stop_after = 5

    def interrupt(done, total):
        if done == stop_after:
            raise Interrupt

    with pytest.raises(Interrupt):
        mobmem.sweep(experiment, results_dir=results_dir, progress=interrupt)
    saved = sorted(results_dir.glob("*.csv"))
    assert len(saved) == stop_after
    assert not list(results_dir.glob(".*"))  # no temporary files left
    mtimes = {p: p.stat().st_mtime_ns for p in saved}

    ran = counting_runs(monkeypatch)
    resumed = mobmem.sweep(experiment, results_dir=results_dir)
    pd.testing.assert_frame_equal(resumed, expected, check_exact=True)
    total = len(expected) // expected["metric"].nunique()
    assert len(ran) == total - stop_after
    assert {f"small-{key}.csv" for key in ran}.isdisjoint(p.name for p in saved)
    assert all(p.stat().st_mtime_ns == t for p, t in mtimes.items())

    ran.clear()
    again = mobmem.sweep(experiment, results_dir=results_dir)
    assert ran == []
    pd.testing.assert_frame_equal(again, expected, check_exact=True)


def test_a_cluster_sweep_reruns_only_deleted_points(client, tmp_path, experiment, expected):
    results_dir = tmp_path / "points"
    first = mobmem.sweep(experiment, client=client, results_dir=results_dir)
    pd.testing.assert_frame_equal(first, expected, check_exact=True)
    saved = sorted(results_dir.glob("*.csv"))
    assert len(saved) == len(expected) // expected["metric"].nunique()
    deleted = saved[::3]
    for p in deleted:
        p.unlink()
    kept = {p: p.stat().st_mtime_ns for p in saved if p not in deleted}

    outcome = mobmem._sweep.run_sweep(experiment, client, results_dir)
    assert (outcome.ran, outcome.reused) == (len(deleted), len(kept))
    assert all(p.exists() for p in deleted)
    assert all(p.stat().st_mtime_ns == t for p, t in kept.items())
    pd.testing.assert_frame_equal(mobmem._experiment.results_frame(outcome.csv_text),
                                  expected, check_exact=True)


def test_a_changed_experiment_does_not_reuse_points(tmp_path, experiment):
    results_dir = tmp_path / "points"
    mobmem.sweep(experiment, results_dir=results_dir)
    changed = dict(experiment, seed=8)
    outcome = mobmem._sweep.run_sweep(changed, None, results_dir)
    assert outcome.reused == 0 and outcome.ran == outcome.points


def test_repeated_and_coinciding_sizes_run_once_each(tmp_path):
    experiment = small_experiment(name="repeats")
    experiment["workload"] = experiment["workload"][:1]
    # 0.00001 and 0.00002 of the footprint both round to 1 page: two points, one size.
    experiment["sweep"] = {"policies": ["lru"], "memory_fraction": [0.1, 0.1, 0.00001, 0.00002]}
    expected = mobmem.run_experiment(experiment)
    pages = expected.drop_duplicates("memory_fraction")["memory_pages"].tolist()
    assert pages[-2:] == [1, 1]
    outcome = mobmem._sweep.run_sweep(experiment, None, tmp_path / "points")
    assert (outcome.points, outcome.ran) == (4, 3)
    pd.testing.assert_frame_equal(
        mobmem._experiment.results_frame(outcome.csv_text), expected, check_exact=True
    )


def test_the_sweep_command_runs_on_a_scheduler(client, experiment, expected, tmp_path):
    from support import write_toml

    path = write_toml(tmp_path / "small.toml", experiment)
    out = tmp_path / "results.csv"
    done = subprocess.run(
        [sys.executable, "-m", "mobmem.sweep", str(path), "--scheduler",
         client.scheduler.address, "--out", str(out)],
        capture_output=True, text=True,
    )
    assert done.returncode == 0, done.stderr
    pd.testing.assert_frame_equal(mobmem.read_results(out), expected, check_exact=True)
