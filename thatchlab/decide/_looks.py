"""The looks ledger: every time ``decide`` looked at a growing log, so repeated looks are on record.

Running a fixed-sample test again as the log grows inflates its error: five looks at a change
that does nothing ship it at some look about three times as often as one look does. A ledger
file (JSON, beside the sweep or the export) records each look; a plain ``decide`` given a ledger
that already holds looks at the same engine and metric says so, and ``decide(...,
sequential=True)`` uses confidence sequences (:func:`~thatchlab.decide._testing.sequence_halfwidth`)
whose error holds over any number of looks.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

from thatchlab.core.errors import InputError

__all__ = ["read_looks", "append_look"]


def read_looks(path) -> list:
    """The looks recorded in ``path`` (none when the file does not exist yet)."""
    path = Path(path)
    if not path.exists():
        return []
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError, RecursionError) as exc:
        raise InputError(f"looks ledger {path}: not readable ({type(exc).__name__}); expected the JSON list "
                         "decide(..., looks=) writes") from None
    if not isinstance(data, list) or not all(isinstance(r, dict) for r in data):
        raise InputError(f"looks ledger {path}: expected a JSON list of looks, got {type(data).__name__}")
    return data


def append_look(path, record: dict) -> int:
    """Add ``record`` to the ledger at ``path`` (atomically) and return how many looks it holds."""
    path = Path(path)
    looks = read_looks(path)
    looks.append({"look": len(looks) + 1, **record})
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(looks, fh, indent=1, default=str)
            fh.write("\n")
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return len(looks)
