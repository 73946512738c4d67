"""The example notebooks (examples/*.ipynb) run top to bottom, in a fresh kernel, in a
folder of their own: no cell fails, and each draws its figures."""

from __future__ import annotations

import os
import pathlib

import nbclient
import nbformat
import pytest

EXAMPLES = pathlib.Path(__file__).resolve().parents[2] / "examples"
NOTEBOOKS = sorted(EXAMPLES.glob("*.ipynb"))


def test_the_examples_are_the_three_notebooks_and_are_kept_without_outputs():
    assert [p.name for p in NOTEBOOKS] == [
        "miss-ratio-curves.ipynb", "phone-under-pressure.ipynb", "reproduction-claims.ipynb"
    ]
    for path in NOTEBOOKS:
        nb = nbformat.read(path, as_version=4)
        nbformat.validate(nb)
        for cell in nb.cells:
            if cell.cell_type == "code":
                assert cell.outputs == [] and cell.execution_count is None, path.name


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_a_notebook_runs_top_to_bottom(path, tmp_path):
    nb = nbformat.read(path, as_version=4)
    client = nbclient.NotebookClient(
        nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}
    )
    # The kernel draws as Jupyter does (inline), whatever backend this process was given.
    env = {k: v for k, v in os.environ.items() if k != "MPLBACKEND"}
    client.execute(env=env)  # a cell that fails raises CellExecutionError, with its traceback
    outputs = [o for cell in nb.cells if cell.cell_type == "code" for o in cell.outputs]
    assert not [o for o in outputs if o.output_type == "error"]
    figures = [o for o in outputs if "image/png" in o.get("data", {})]
    expected = {"miss-ratio-curves": 1, "reproduction-claims": 2, "phone-under-pressure": 2}
    assert len(figures) == expected[path.stem]
    # Every code cell ran, in order.
    counts = [cell.execution_count for cell in nb.cells if cell.cell_type == "code"]
    assert counts == list(range(1, len(counts) + 1))
    # Nothing was written beside the notebook (hidden folders, such as Jupyter's
    # checkpoints, aside).
    written = sorted(p.name for p in EXAMPLES.iterdir() if not p.name.startswith("."))
    assert written == sorted([p.name for p in NOTEBOOKS] + ["README.md"])
