"""Experiment files of every kind: run_experiment and sweep give the rows of `mobmem run`'s
results.csv, the seeds' runs gathered as the CLI gathers them, in this process and on a
Dask cluster; the fs kind reads the media folder given to it."""

from __future__ import annotations

import copy
import pathlib
import subprocess
import sys

import pandas as pd
import pytest

import mobmem
from mobmem import _tasks
from mobmem._experiment import results_frame
from mobmem._sweep import run_sweep
from support import make_media, small_experiment, write_toml

REPO = pathlib.Path(__file__).resolve().parents[2]

# Small grids of each kind, so that the debug CLI runs them in seconds.
SWAP = {
    "kind": "swap",
    "name": "swap-small",
    "seeds": 2,
    "reproduces": "multi-swap",
    "nvm_percent": [10, 50],
    "nvm_architectures": ["hierarchical-lru", "parallel-filtered"],
    "architectures": ["flash", "zram"],
    "workload": {
        "apps": 4,
        "rounds": 2,
        "launch_pages": [40, 80],
        "heap_pages": [100, 200],
        "session_accesses": [200, 400],
        "content_pages": [50, 100],
    },
    "swap": {"dram_pages": 400, "zram": {"pool_pages": 100}},
}

KSM = {
    "kind": "ksm",
    "name": "ksm-small",
    "seeds": 2,
    "reproduces": "ksm",
    "duration_ms": 20000,
    "sleep_duration_ms": 20000,
    "pages_to_scan": [50, 100],
    "sleep_ms": [20],
    "apps_memory_step_mb": 100,
    "workload": {"scale": 0.05},
}

# Without `seeds`: one run, no seed column.
RECLAIM = {
    "kind": "reclaim",
    "name": "reclaim-small",
    "policies": ["stock", "fmp"],
    "memory_mib": [96],
    "stream_pages": [2400],
    "kernel_34_policies": [],
    "workload": {"interactions": 10},
}


def cache_with_seeds() -> dict:
    experiment = small_experiment(name="cache-seeds")
    del experiment["seed"]
    experiment["seeds"] = 2
    # The paper's analysis runs on the CLI's side; the table it leaves is the grid's.
    experiment["reproduces"] = "hybrid-cache"
    experiment["sweep"]["memory_fraction"] = [0.1, 0.25]
    return experiment


GRIDS = {"swap": SWAP, "ksm": KSM, "reclaim": RECLAIM, "cache-seeds": cache_with_seeds()}


def cli_csv(cli, path: pathlib.Path, out: pathlib.Path, *args: str) -> str:
    code, _, stderr = cli("run", path, "--out", out, *args)
    assert code == 0, stderr
    name = path.read_text().split('name = "', 1)[1].split('"', 1)[0]
    return (out / name / "results.csv").read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def cli_results(tmp_path_factory, cli):
    """Each grid as a TOML file and the results.csv text `mobmem run` wrote for it."""
    folder = tmp_path_factory.mktemp("kinds")
    out = {}
    for name, grid in GRIDS.items():
        path = write_toml(folder / f"{name}.toml", grid)
        out[name] = (path, cli_csv(cli, path, folder / "report"))
    return out


@pytest.mark.parametrize("name", GRIDS)
def test_every_kind_equals_the_cli_results_csv(cli_results, name):
    path, expected_csv = cli_results[name]
    expected = results_frame(expected_csv)
    from_file = mobmem.run_experiment(path)
    from_dict = mobmem.run_experiment(GRIDS[name])
    pd.testing.assert_frame_equal(from_file, expected, check_exact=True)
    pd.testing.assert_frame_equal(from_dict, expected, check_exact=True)
    # The sweep's tasks (a run per seed, or a point per run of the cache grid), gathered:
    # the CLI's file byte for byte.
    assert run_sweep(GRIDS[name]).csv_text == expected_csv
    seeded = "seeds" in GRIDS[name]
    assert ("seed" in from_file.columns) == seeded
    if seeded:
        assert from_file["seed"].drop_duplicates().tolist() == [1, 2]
        assert list(from_file.columns[:2]) == ["experiment", "seed"]
    assert from_file["experiment"].unique().tolist() == [GRIDS[name]["name"]]
    assert from_file["value"].notna().any()


def test_results_of_a_kind_read_as_pandas_reads_them(cli_results, tmp_path):
    path, expected_csv = cli_results["swap"]
    (tmp_path / "results.csv").write_text(expected_csv)
    ours = mobmem.run_experiment(path)
    pd.testing.assert_frame_equal(ours, pd.read_csv(tmp_path / "results.csv"), check_exact=True)
    # Keys that do not apply to a row (the NVM size of an architecture without NVM) are
    # missing, numbers are numbers.
    assert ours["nvm_percent"].isna().any() and ours["nvm_percent"].dtype == "float64"


def test_seeds_stand_for_the_command_lines_seeds(cli, tmp_path):
    once = dict(KSM, name="ksm-once")
    del once["seeds"]
    path = write_toml(tmp_path / "once.toml", once)
    expected = cli_csv(cli, path, tmp_path / "report", "--seeds", "2")
    pd.testing.assert_frame_equal(
        mobmem.run_experiment(once, seeds=2), results_frame(expected), check_exact=True
    )
    assert run_sweep(path, seeds=2).csv_text == expected
    single = mobmem.run_experiment(once)
    assert "seed" not in single.columns
    seed_one = mobmem.run_experiment(once, seeds=2)
    pd.testing.assert_frame_equal(
        seed_one[seed_one["seed"] == 1].drop(columns="seed").reset_index(drop=True),
        single,
        check_exact=True,
    )
    for bad in (0, 101):
        with pytest.raises(mobmem.MobmemError, match="from 1 to 100"):
            mobmem.run_experiment(once, seeds=bad)
        with pytest.raises(mobmem.MobmemError, match="from 1 to 100"):
            mobmem.sweep(once, seeds=bad)


@pytest.fixture(scope="module")
def media(tmp_path_factory) -> pathlib.Path:
    return make_media(tmp_path_factory.mktemp("media"))


FS = {"kind": "fs", "name": "fs-small", "platforms": ["pxa250"], "schemes": ["stock", "selective"]}


def test_the_fs_kind_reads_the_media_given(cli, tmp_path, media):
    path = write_toml(tmp_path / "fs.toml", FS)
    expected_csv = cli_csv(cli, path, tmp_path / "report", "--media", str(media))
    expected = results_frame(expected_csv)
    pd.testing.assert_frame_equal(
        mobmem.run_experiment(FS, media=media), expected, check_exact=True
    )
    assert run_sweep(path, media=media).csv_text == expected_csv
    # The file's key, relative to the file, as the CLI reads it.
    folder = tmp_path / "exp"
    folder.mkdir()
    (folder / "media").symlink_to(media)
    keyed = write_toml(folder / "fs.toml", dict(FS, media="media"))
    pd.testing.assert_frame_equal(mobmem.run_experiment(keyed), expected, check_exact=True)
    assert run_sweep(keyed).csv_text == expected_csv
    # It runs once whatever the seeds.
    pd.testing.assert_frame_equal(
        mobmem.run_experiment(FS, media=media, seeds=3), expected, check_exact=True
    )
    # Without the folder: the CLI's message, which says how to make it.
    missing = tmp_path / "no-media"
    with pytest.raises(mobmem.MobmemError) as e:
        mobmem.run_experiment(FS, media=missing)
    assert str(missing) in str(e.value) and "make-media.sh" in str(e.value)
    with pytest.raises(mobmem.MobmemError, match="make-media.sh"):
        mobmem.sweep(dict(FS, media=str(missing)))


def test_kind_errors_are_the_files_errors(tmp_path, cli):
    bad = dict(KSM, pages_to_scan=[10])
    path = write_toml(tmp_path / "bad.toml", bad)
    code, _, stderr = cli("run", path, "--out", tmp_path / "report")
    assert code != 0
    with pytest.raises(mobmem.MobmemError) as from_file:
        mobmem.run_experiment(path)
    assert stderr.strip() == f"error: {from_file.value}"
    with pytest.raises(mobmem.MobmemError, match="`pages_to_scan`.*at least two"):
        mobmem.run_experiment(bad)
    with pytest.raises(mobmem.MobmemError, match="unknown field `pages_to_scann`"):
        mobmem.run_experiment(dict(KSM, pages_to_scann=[10, 20]))
    with pytest.raises(mobmem.MobmemError, match="key `kind`: unknown experiment kind 'nope'"):
        mobmem.run_experiment(dict(KSM, kind="nope"))


def test_the_sweep_command_runs_every_kind(cli_results, tmp_path):
    path, expected_csv = cli_results["ksm"]
    out = tmp_path / "results.csv"
    command = [sys.executable, "-m", "mobmem.sweep", str(path), "--out", str(out),
               "--results-dir", str(tmp_path / "runs")]
    done = subprocess.run(command, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert out.read_text() == expected_csv
    assert "2 tasks: 2 run, 0 from" in done.stderr
    again = subprocess.run(command, capture_output=True, text=True)
    assert again.returncode == 0, again.stderr
    assert "2 tasks: 0 run, 2 from" in again.stderr
    assert out.read_text() == expected_csv


# On a Dask cluster (the session's two worker processes).


@pytest.mark.parametrize("name", ["swap", "ksm"])
def test_a_kind_on_a_local_cluster_equals_run_experiment(client, name):
    expected = mobmem.run_experiment(GRIDS[name])
    _tasks.forget_workloads()
    client.run(_tasks.forget_workloads)
    swept = mobmem.sweep(GRIDS[name], client=client)
    pd.testing.assert_frame_equal(swept, expected, check_exact=True)
    # One task per seed, on both workers.
    parsed = client.run(lambda: len(_tasks._experiments))
    assert len(parsed) == 2 and all(n > 0 for n in parsed.values())


def test_a_composed_experiment_on_a_local_cluster_equals_run_experiment(client):
    # The shipped file, one seed: its phone files are read by the workers from the
    # absolute paths the client made of them.
    composed = REPO / "experiments" / "composed.toml"
    expected = mobmem.run_experiment(composed, seeds=1)
    swept = mobmem.sweep(composed, client=client, seeds=1)
    pd.testing.assert_frame_equal(swept, expected, check_exact=True)
    assert len(expected) > 0 and expected["value"].notna().any()


def test_a_cluster_sweep_of_a_kind_reruns_only_deleted_runs(client, tmp_path):
    expected = mobmem.run_experiment(KSM)
    results_dir = tmp_path / "runs"
    first = mobmem.sweep(KSM, client=client, results_dir=results_dir)
    pd.testing.assert_frame_equal(first, expected, check_exact=True)
    saved = sorted(results_dir.glob("*.csv"))
    assert len(saved) == 2
    saved[1].unlink()
    kept = saved[0].stat().st_mtime_ns
    outcome = run_sweep(KSM, client, results_dir)
    assert (outcome.points, outcome.ran, outcome.reused) == (2, 1, 1)
    assert saved[0].stat().st_mtime_ns == kept
    pd.testing.assert_frame_equal(results_frame(outcome.csv_text), expected, check_exact=True)
    # With a third seed only the third seed's run is new.
    more = run_sweep(KSM, None, results_dir, seeds=3)
    assert (more.points, more.ran, more.reused) == (3, 1, 2)
    changed = copy.deepcopy(KSM)
    changed["pages_to_scan"] = [50, 150]
    assert run_sweep(changed, None, results_dir).reused == 0
