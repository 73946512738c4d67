"""The Perfetto fixtures of the Rust tests are what Perfetto's own schema writes:
scripts/perfetto-fixtures.py, run with the `perfetto` package pinned in
requirements-test.txt, writes the same bytes as the files in the repository."""

import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "crates/mobmem/tests/data/perfetto"


def test_the_perfetto_fixtures_are_regenerated_byte_for_byte(tmp_path):
    run = subprocess.run(
        [sys.executable, str(ROOT / "scripts/perfetto-fixtures.py"), str(tmp_path)],
        capture_output=True,
        text=True,
    )
    assert run.returncode == 0, run.stderr
    written = sorted(p.name for p in tmp_path.iterdir())
    kept = sorted(p.name for p in FIXTURES.iterdir() if p.name != "README.md")
    assert written == kept
    for name in written:
        assert (tmp_path / name).read_bytes() == (FIXTURES / name).read_bytes(), name
