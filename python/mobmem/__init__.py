"""mobmem: a trace-driven simulator of memory management on mobile devices.

The simulator is the Rust crate behind the ``mobmem`` CLI; this package calls the same
code, so results equal the CLI's to the last digit.

- :func:`run_experiment` runs an experiment file of any kind (a TOML file or a dict with
  its keys: a cache grid, swap, reclaim, fs, ksm, ...) and returns the rows of the CLI's
  ``results.csv`` as a DataFrame;
- :func:`reproduce` runs a paper's reproduction (or an edited copy of one,
  :func:`shipped_experiment`) and returns its results, claims and findings as
  DataFrames; :func:`read_claims` and :func:`read_findings` read them from a report
  folder of the CLI's;
- :func:`phone_timeline` samples a phone's memory at every app launch;
- :func:`sweep` runs the same experiment as independent tasks (one per seed; a cache
  grid one per configuration point), in this process or on a Dask cluster, and can
  resume;
- :func:`simulate`, :func:`trace_summary` and :func:`generate` are ``mobmem sim``,
  ``mobmem trace info`` and ``mobmem gen``;
- :mod:`mobmem.plot` draws miss-ratio curves, claims against the papers' values and
  timelines with matplotlib (the ``plot`` extra).

Every error the simulator reports arrives as :class:`MobmemError`, with the message the
CLI prints.
"""

from ._native import MobmemError
from ._experiment import RESULT_COLUMNS, read_results, run_experiment
from ._phone import TIMELINE_COLUMNS, phone_timeline
from ._reports import (
    CLAIM_COLUMNS,
    FINDING_COLUMNS,
    Report,
    read_claims,
    read_findings,
    reproduce,
    reproductions,
    shipped_experiment,
)
from ._sweep import sweep
from ._traces import generate, policies, presets, simulate, trace_summary
from . import plot

__all__ = [
    "CLAIM_COLUMNS",
    "FINDING_COLUMNS",
    "MobmemError",
    "RESULT_COLUMNS",
    "Report",
    "TIMELINE_COLUMNS",
    "generate",
    "phone_timeline",
    "plot",
    "policies",
    "presets",
    "read_claims",
    "read_findings",
    "read_results",
    "reproduce",
    "reproductions",
    "run_experiment",
    "shipped_experiment",
    "simulate",
    "sweep",
    "trace_summary",
]

__version__ = "0.1.0"
