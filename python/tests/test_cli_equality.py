"""The Python results are the CLI's: `mobmem run`'s results.csv, read with pandas, equals
run_experiment's DataFrame, and the sweep command writes the same file."""

from __future__ import annotations

import subprocess
import sys

import pandas as pd
import pytest

import mobmem
from support import small_experiment, write_toml


@pytest.fixture(scope="module")
def cli_results(tmp_path_factory, cli, trace_file):
    """An experiment file and the results.csv `mobmem run` wrote for it."""
    folder = tmp_path_factory.mktemp("cli")
    experiment = write_toml(folder / "small.toml", small_experiment(trace=str(trace_file)))
    code, _, stderr = cli("run", experiment, "--out", folder / "report")
    assert code == 0, stderr
    return experiment, folder / "report" / "small" / "results.csv"


def test_run_experiment_equals_the_cli_results_csv(cli_results):
    experiment, results_csv = cli_results
    ours = mobmem.run_experiment(experiment)
    # Read as anyone would, and as the package reads it: both equal, to the last bit.
    pd.testing.assert_frame_equal(ours, pd.read_csv(results_csv), check_exact=True)
    pd.testing.assert_frame_equal(ours, mobmem.read_results(results_csv), check_exact=True)
    assert tuple(pd.read_csv(results_csv).columns) == mobmem.RESULT_COLUMNS


def test_sweep_command_writes_the_cli_file(cli_results, tmp_path):
    experiment, results_csv = cli_results
    out = tmp_path / "swept.csv"
    done = subprocess.run(
        [sys.executable, "-m", "mobmem.sweep", str(experiment), "--out", str(out),
         "--results-dir", str(tmp_path / "points")],
        capture_output=True, text=True,
    )
    assert done.returncode == 0, done.stderr
    assert out.read_bytes() == results_csv.read_bytes()
    assert "0 from" in done.stderr

    again = subprocess.run(
        [sys.executable, "-m", "mobmem.sweep", str(experiment), "--out", str(out),
         "--results-dir", str(tmp_path / "points")],
        capture_output=True, text=True,
    )
    assert again.returncode == 0, again.stderr
    assert "0 run" in again.stderr
    assert out.read_bytes() == results_csv.read_bytes()


def test_sweep_command_reports_errors_like_the_cli(tmp_path, cli):
    bad = small_experiment()
    bad["sweep"]["policies"] = ["nope"]
    path = write_toml(tmp_path / "bad.toml", bad)
    done = subprocess.run([sys.executable, "-m", "mobmem.sweep", str(path),
                           "--out", str(tmp_path / "r.csv")], capture_output=True, text=True)
    _, _, cli_stderr = cli("run", path, "--out", tmp_path / "report")
    assert done.returncode == 1
    assert done.stderr == cli_stderr
    assert not (tmp_path / "r.csv").exists()
