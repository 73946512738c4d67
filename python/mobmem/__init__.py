"""mobmem: a trace-driven simulator of memory management on mobile devices.

The simulator is the Rust crate behind the ``mobmem`` CLI; this package calls the same
code, so results equal the CLI's to the last digit.

- :func:`run_experiment` runs an experiment file of any kind (a TOML file or a dict with
  its keys: a cache grid, swap, reclaim, fs, ksm, ...) and returns the rows of the CLI's
  ``results.csv`` as a DataFrame;
- :func:`sweep` runs the same experiment as independent tasks (one per seed; a cache
  grid one per configuration point), in this process or on a Dask cluster, and can
  resume;
- :func:`simulate`, :func:`trace_summary` and :func:`generate` are ``mobmem sim``,
  ``mobmem trace info`` and ``mobmem gen``.

Every error the simulator reports arrives as :class:`MobmemError`, with the message the
CLI prints.
"""

from ._native import MobmemError
from ._experiment import RESULT_COLUMNS, read_results, run_experiment
from ._sweep import sweep
from ._traces import generate, policies, presets, simulate, trace_summary

__all__ = [
    "MobmemError",
    "RESULT_COLUMNS",
    "generate",
    "policies",
    "presets",
    "read_results",
    "run_experiment",
    "simulate",
    "sweep",
    "trace_summary",
]

__version__ = "0.1.0"
