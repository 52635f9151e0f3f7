"""Memory rows of the belief store: their columns, how a row handed in is checked and cleaned,
and the frame of the stored rows (the ``belief_memories`` table)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from thatchlab.belief._policy import EVIDENCE_COLUMNS, is_null, json_list, norm_evidence_fields
from thatchlab.core.errors import InputError
from thatchlab.core.frames import number_cell
from thatchlab.core.params.belief import BELIEF_CLASSES, BELIEF_STATUSES
from thatchlab.core.time import as_utc

__all__ = ["MEMORY_COLUMNS", "norm_row", "memories_frame"]

#: Columns of a memory row, in order (the ``belief_memories`` table).
MEMORY_COLUMNS = ("id", "text", "belief_class", "half_life_days", "user_asserted", "kind", "tier",
                  "subject_scope", "authority", "captured_at", "last_corroborated_at", "valid_to",
                  "confidence", "corroboration_count", "superseded_by", "evidence", "status")
_TIMES = ("captured_at", "last_corroborated_at", "valid_to")
_FLOATS = ("half_life_days", "authority", "confidence")
_TEXTS = ("id", "text", "belief_class", "kind", "tier", "subject_scope", "superseded_by", "status")
_DEFAULTS = dict(belief_class=None, half_life_days=None, user_asserted=False, kind=None, tier=None,
                 subject_scope=None, authority=None, last_corroborated_at=None, valid_to=None,
                 confidence=1.0, corroboration_count=0, superseded_by=None, evidence=(),
                 status="active")


def _count(v, where: str) -> int:
    """A whole number >= 0 (a whole float or its text included), or InputError."""
    n = number_cell(v, whole=True, nonnegative=True)
    if n is None:
        raise InputError(f"{where}: expected a whole number >= 0, got {v!r}")
    return n


def _evidence(v, where: str) -> list:
    """The evidence ids: a list (or its JSON text) of ids; null is none; anything else InputError."""
    return [str(x) for x in json_list(v, where, "evidence ids") or []]


def norm_row(raw: dict, where: str) -> dict:
    """A clean row dict (aware Timestamps, floats, None for missing)."""
    row = {}
    for col in MEMORY_COLUMNS:
        v = raw.get(col, _DEFAULTS.get(col))
        if col == "status" and is_null(v):
            v = "active"
        if col in _TIMES:
            row[col] = None if is_null(v) else as_utc(v, what=f"{where}, column {col!r}").as_unit("ns")
        elif col in _FLOATS:
            if is_null(v):
                row[col] = _DEFAULTS.get(col) if col == "confidence" else None
            else:
                try:
                    row[col] = float(v)
                except (TypeError, ValueError):
                    raise InputError(f"{where}, column {col!r}: expected a number, got {v!r}") from None
        elif col == "user_asserted":
            row[col] = False if is_null(v) else bool(v)
        elif col == "corroboration_count":
            row[col] = 0 if is_null(v) else _count(v, f"{where}, column {col!r}")
        elif col == "evidence":
            row[col] = _evidence(v, f"{where}, column {col!r}")
        else:
            row[col] = None if is_null(v) else str(v)
    if row["id"] is None or row["text"] is None:
        raise InputError(f"{where}: a memory row needs 'id' and 'text'")
    if row["captured_at"] is None:
        raise InputError(f"{where}, column 'captured_at': expected an aware time, got null")
    if row["belief_class"] == "":
        row["belief_class"] = None          # an empty class is no class (production)
    if (row["belief_class"] is not None and row["belief_class"] not in BELIEF_CLASSES
            and row["half_life_days"] is None):
        # a stored half-life wins over the class, so an unknown class only matters without one
        raise InputError(f"{where}, column 'belief_class': expected one of {list(BELIEF_CLASSES)} "
                         f"or null (any class when half_life_days is stored), "
                         f"got {row['belief_class']!r}")
    if row["half_life_days"] is not None and not row["half_life_days"] > 0:
        raise InputError(f"{where}, column 'half_life_days': expected > 0 or null, "
                         f"got {row['half_life_days']!r}")
    if row["status"] not in BELIEF_STATUSES:
        raise InputError(f"{where}, column 'status': expected one of {list(BELIEF_STATUSES)}, "
                         f"got {row['status']!r}")
    row.update(norm_evidence_fields(raw, where))
    return row


def memories_frame(rows) -> pd.DataFrame:
    """Rows (dicts) → a DataFrame with the memory dtypes."""
    rows = list(rows)
    df = pd.DataFrame.from_records(rows, columns=list(MEMORY_COLUMNS) + list(EVIDENCE_COLUMNS))
    for col in _TIMES:
        df[col] = pd.to_datetime(pd.Series([r[col] for r in rows], dtype=object), utc=True
                                 ).dt.as_unit("ns") if rows else pd.Series(dtype="datetime64[ns, UTC]")
    for col in _FLOATS:
        df[col] = pd.to_numeric(df[col]).astype(np.float64)
    df["user_asserted"] = df["user_asserted"].astype(bool)
    df["corroboration_count"] = df["corroboration_count"].astype(np.int64)
    df["evidence"] = pd.Series([list(r["evidence"]) for r in rows], dtype=object)
    for col in _TEXTS + ("subject_entity_id",):
        df[col] = df[col].astype(object)
    df["source_authority"] = pd.array([r.get("source_authority") for r in rows], dtype="Int64")
    df["evidence_families"] = pd.Series([list(r.get("evidence_families", ())) for r in rows], dtype=object)
    df["evidence_time"] = pd.to_datetime(pd.Series([r.get("evidence_time") for r in rows], dtype=object),
                                         utc=True).dt.as_unit("ns") if rows else pd.Series(
                                             dtype="datetime64[ns, UTC]")
    df["eligible"] = pd.Series([bool(r.get("eligible", True)) for r in rows], dtype=bool)
    return df
