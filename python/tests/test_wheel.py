"""The wheel scripts/build-wheel.sh builds installs with pip into a fresh virtualenv whose
PATH has no Rust toolchain, and runs a simulation there: the same numbers as this
package's."""

from __future__ import annotations

import json
import os
import pathlib
import shutil
import subprocess
import sys
import zipfile

import pytest

import mobmem

REPO = pathlib.Path(__file__).resolve().parents[2]
WHEEL = os.environ.get("MOBMEM_WHEEL")


@pytest.mark.skipif(
    not WHEEL,
    reason="MOBMEM_WHEEL is not set (scripts/test.sh sets it to the wheel of "
    "scripts/build-wheel.sh)",
)
def test_the_wheel_installs_without_rust_and_simulates(tmp_path, trace_file):
    wheel = pathlib.Path(WHEEL)
    # One wheel for every CPython from 3.10 on: the stable ABI.
    assert wheel.name.startswith("mobmem-") and "-cp310-abi3-" in wheel.name
    names = zipfile.ZipFile(wheel).namelist()
    native = [n for n in names if n.startswith("mobmem/_native") and not n.endswith(".pyi")]
    assert native == ["mobmem/_native.abi3.so"], native
    assert "mobmem/plot.py" in names and "mobmem/py.typed" in names

    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    # The new environment's own folder, and the system's, without any that holds cargo
    # or rustc.
    folders = [str(venv / "bin")] + [
        d for d in os.environ.get("PATH", "").split(os.pathsep)
        if d and not (pathlib.Path(d) / "cargo").exists()
        and not (pathlib.Path(d) / "rustc").exists()
        and not pathlib.Path(d).resolve().is_relative_to(pathlib.Path(sys.prefix).resolve())
    ]
    path = os.pathsep.join(folders)
    assert shutil.which("cargo", path=path) is None and shutil.which("rustc", path=path) is None
    env = {k: v for k, v in os.environ.items()
           if k not in ("VIRTUAL_ENV", "PYTHONPATH", "PYTHONHOME", "CARGO", "RUSTC")}
    env["PATH"] = path
    python = str(venv / "bin" / "python")
    # Binary packages only: nothing is compiled. pandas and numpy at the versions the
    # tests pin (from pip's cache when it has them).
    install = subprocess.run(
        [python, "-m", "pip", "install", "--disable-pip-version-check", "--quiet",
         "--only-binary=:all:", "-c", str(REPO / "python" / "requirements-test.txt"),
         str(wheel)],
        env=env, cwd=tmp_path, capture_output=True, text=True,
    )
    assert install.returncode == 0, install.stderr

    script = (
        "import json, sys, mobmem;"
        "print(json.dumps({'file': mobmem.__file__,"
        " 'metrics': mobmem.simulate(sys.argv[1], 'arc', 200)}))"
    )
    run = subprocess.run([python, "-c", script, str(trace_file)], env=env, cwd=tmp_path,
                         capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    out = json.loads(run.stdout)
    assert pathlib.Path(out["file"]).is_relative_to(venv)
    # Every number the same (NaN too: compared as the JSON text of both).
    assert json.dumps(out["metrics"]) == json.dumps(mobmem.simulate(trace_file, "arc", 200))
    assert out["metrics"]["accesses"] > 0

    # The sweep command is installed too, and fails on bad input as the package does.
    sweep = subprocess.run([str(venv / "bin" / "mobmem-sweep"), str(tmp_path / "no.toml")],
                           env=env, cwd=tmp_path, capture_output=True, text=True)
    assert sweep.returncode == 1
    assert sweep.stderr.startswith("error: ") and "no.toml" in sweep.stderr
