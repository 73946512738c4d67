"""``python -m mobmem.sweep EXPERIMENT.toml [--scheduler ADDRESS] [--results-dir DIR]
[--out results.csv]``: run an experiment file as a sweep, on a Dask cluster when a
scheduler address is given, and write its ``results.csv``. The sweep itself is
:func:`mobmem.sweep`."""

import sys

from ._sweep import main

if __name__ == "__main__":
    sys.exit(main())
