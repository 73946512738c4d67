"""The timeline of a phone experiment: where its memory stood at every launch."""

from __future__ import annotations

import json
from typing import Any

import pandas as pd

from . import _native
from ._experiment import ExperimentLike
from ._native import MobmemError
from ._reports import experiment_or_shipped

#: Where a timeline's memory stood at a sample, in MiB (what :func:`mobmem.plot.timeline`
#: draws by default).
MEMORY_COLUMNS: tuple[str, ...] = (
    "free_mib",
    "page_cache_mib",
    "anon_mib",
    "swap_used_mib",
    "zram_pool_mib",
    "ksm_saved_mib",
)

#: Columns of :func:`phone_timeline`: the phone and its configuration (``all-off``: every
#: slot at its baseline; ``all-on``: at its mechanism), then one sample a row.
TIMELINE_COLUMNS: tuple[str, ...] = (
    "phone",
    "config",
    "time_s",
    "event",
    "app",
    "launch",
    "launch_ms",
    *MEMORY_COLUMNS,
    "kills",
    "swap_outs",
    "swap_ins",
    "file_reads",
)

_DTYPES: dict[str, Any] = {
    "time_s": "float64",
    "launch_ms": "float64",
    **{column: "float64" for column in MEMORY_COLUMNS},
    "kills": "int64",
    "swap_outs": "int64",
    "swap_ins": "int64",
    "file_reads": "int64",
}


def phone_timeline(
    experiment: ExperimentLike | str,
    seed: int = 1,
    config: str | None = None,
) -> pd.DataFrame:
    """The timeline of a phone (an experiment of kind ``phone``) in the run with
    ``seed``: a sample of its memory as each app moves to the foreground, and a last one
    at the end of the run.

    ``experiment`` is a phone file (TOML), a dict with its keys (an edited
    ``shipped_experiment("phone")``, say) or the name of a shipped phone (``phone``,
    ``phone-2012``). The phone runs in both of its configurations, ``all-off`` then
    ``all-on``, as ``mobmem run`` runs it; ``config`` picks one.

    Each row is a sample: ``time_s`` since the run's first event; ``event`` ``launch``
    (the memory as the launched ``app`` found it; ``launch`` is ``first``, ``cold`` or
    ``warm`` and ``launch_ms`` how long that launch took) or ``end``; free memory, file
    pages in memory (``page_cache_mib``), anonymous pages in frames of their own
    (``anon_mib``), pages swapped out (``swap_used_mib``), the frames the zram pool holds
    and those KSM saves, all in MiB of the full-size phone; then counts since the start:
    processes killed, swap-outs, swap-ins and file pages read from flash. The last row of
    a configuration holds its run's totals (``kills``, ``swap_outs``, ... equal the
    metrics ``run_experiment`` gives for the same seed).
    """
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise MobmemError(f"seed must be a whole number from 0 up, got {seed!r}")
    native = experiment_or_shipped(experiment)
    rows: list[dict[str, Any]] = []
    for phone, name, samples in native.timeline(seed, config):
        for sample in json.loads(samples):
            rows.append({"phone": phone, "config": name, **sample})
    frame = pd.DataFrame(rows, columns=list(TIMELINE_COLUMNS))
    return frame.astype(_DTYPES)
