"""Inputs handed to the native module: dicts as JSON, traces from paths or URLs."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from typing import Any

from ._native import MobmemError

# The same rule as the Rust side's: a scheme of two or more characters, then "://".
_URL = re.compile(r"^[A-Za-z][A-Za-z0-9+.\-]+://")


def is_url(path: str | os.PathLike[str]) -> bool:
    """Whether a trace is named by a URL (``s3://``, ``file://``, ...) rather than a
    path on this machine."""
    return bool(_URL.match(os.fspath(path)))


def fetch(url: str) -> bytes:
    """The content of the file at ``url``, read with fsspec."""
    try:
        import fsspec
    except ImportError as e:
        raise MobmemError(
            f"{url}: reading a trace from a URL needs fsspec (pip install fsspec)"
        ) from e
    try:
        with fsspec.open(url, "rb") as f:
            return f.read()
    except (OSError, ValueError, ImportError) as e:
        # fsspec says ValueError or ImportError for an unknown or unavailable protocol.
        raise MobmemError(f"{url}: {e}") from e


def trace_input(trace: str | os.PathLike[str]) -> tuple[str, bytes | None]:
    """A trace as the native functions take it: its name, and its content when it had to
    be fetched (a URL); a plain path is read by the native code itself."""
    name = os.fspath(trace)
    return (name, fetch(name)) if is_url(name) else (name, None)


def json_text(value: Mapping[str, Any]) -> str:
    """A dict as JSON for the native parsers: ``None`` means an absent key, paths become
    strings."""

    def without_none(v: Any) -> Any:
        if isinstance(v, Mapping):
            return {str(k): without_none(x) for k, x in v.items() if x is not None}
        if isinstance(v, (list, tuple)):
            return [without_none(x) for x in v]
        return v

    return json.dumps(without_none(value), default=os.fspath)
