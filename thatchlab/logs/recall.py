"""The recall log of the confidence calibration engine (ai-memory).

One row per (recall, memory) touch: when a memory was returned by a recall,
with the memory's author role (``source``), the caller's confidence, its
creation time and derive signals, its rank and text score, and whether the
caller consumed it (null when the ledger has no verdict for the touch).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from pandas.api.types import is_bool_dtype

from thatchlab.core.docstrings import fill_doc
from thatchlab.core.frames import plain_columns
from thatchlab.logs import _docs
from thatchlab.logs._core import read_table
from thatchlab.logs._order import read_in_time_order
from thatchlab.logs._validate import (
    LogSpec,
    RowRule,
    numbers_ok,
    text_ok,
    validate_frame,
)

__all__ = ["RECALL_LOG", "RECALL_COLUMNS", "validate_recall_log", "read_recall_log"]

#: Columns of the recall log, in order.
RECALL_COLUMNS = ("ts", "recall_id", "memory_id", "namespace", "source", "caller_confidence",
                  "created_at", "is_atom", "corroboration", "rank", "score", "consumed")
_BOOL_TEXT = {"true": True, "false": False, "1": True, "0": False, "True": True, "False": False}
#: What the reader parses each column as.
_READ_AS = {"ts": "time", "recall_id": "text", "memory_id": "text", "namespace": "text", "source": "text",
            "caller_confidence": "number", "created_at": "time", "is_atom": "bool", "corroboration": "number",
            "rank": "number", "score": "number", "consumed": "bool"}


def _schema():
    import pandera.pandas as pa  # heavy: pandera adds ~0.5 s to import; only value checks need it

    return pa.DataFrameSchema({
        "caller_confidence": pa.Column(float, pa.Check.in_range(0.0, 1.0), coerce=True, nullable=False),
        "corroboration": pa.Column(float, pa.Check.ge(0), coerce=True, nullable=False),
        "rank": pa.Column(float, pa.Check.ge(1), coerce=True, nullable=True),
        "score": pa.Column(float, coerce=True, nullable=True),
    })


def _text_ok(col):
    return lambda df: text_ok(df[col])


def _bool_ok(col, nullable):
    def test(df):
        s = df[col]
        if is_bool_dtype(s.dtype):           # booleans by dtype: only a missing cell can fail
            return np.full(len(s), True) if nullable else s.notna().to_numpy(bool)
        return s.map(lambda v: isinstance(v, (bool, np.bool_)) or (nullable and _isnull(v)))
    return test


def _int_ok(col, nullable, low):
    return lambda df: numbers_ok(df[col], whole=True, low=low, nullable=nullable)


def _not_bool(col, nullable):
    """Booleans are not numbers (pandera's float coercion would read True as 1.0)."""
    return lambda df: numbers_ok(df[col], nullable=nullable, finite=False)


def _isnull(v) -> bool:
    return v is None or (isinstance(v, float) and np.isnan(v)) or v is pd.NA


RECALL_LOG = LogSpec(
    name="recall log",
    required=RECALL_COLUMNS[:9],
    optional=("rank", "score", "consumed"),
    times=("ts", "created_at"),
    schema=None,
    rules=(
        RowRule("ts", "a timezone-aware ISO-8601 time", lambda df: df["ts"].notna()),
        RowRule("created_at", "a timezone-aware ISO-8601 time", lambda df: df["created_at"].notna()),
        RowRule("recall_id", "a non-empty text id", _text_ok("recall_id")),
        RowRule("memory_id", "a non-empty text id", _text_ok("memory_id")),
        RowRule("namespace", "a non-empty text", _text_ok("namespace")),
        RowRule("source", "a non-empty text (the author role: user, assistant, api...)", _text_ok("source")),
        RowRule("is_atom", "true or false", _bool_ok("is_atom", False)),
        RowRule("consumed", "true, false (or 1/0), or null when not judged", _bool_ok("consumed", True)),
        RowRule("corroboration", "a whole number >= 0 (a finite count that fits int64)",
                _int_ok("corroboration", False, 0)),
        RowRule("rank", "a whole number >= 1 or null", _int_ok("rank", True, 1)),
        RowRule("caller_confidence", "a number in [0, 1]", _not_bool("caller_confidence", False)),
        RowRule("score", "a number or null", _not_bool("score", True)),
    ),
)


def _pre(df: pd.DataFrame) -> pd.DataFrame:
    out = df.copy()
    for col in ("is_atom", "consumed"):
        if col in out.columns and not is_bool_dtype(out[col].dtype):   # text and 1/0 to booleans
            out[col] = out[col].map(lambda v: _BOOL_TEXT.get(v, v) if isinstance(v, str) else
                                    (bool(v) if isinstance(v, (int, float, np.integer, np.floating))
                                     and not isinstance(v, bool) and v in (0, 1) else v)).astype(object)
    return out


@fill_doc(validate=_docs.VALIDATE)
def validate_recall_log(df: pd.DataFrame, source=None, errors: str = "raise"):
    """Validate a recall log and return it typed.

    Columns: ``ts, recall_id, memory_id, namespace, source, caller_confidence,
    created_at, is_atom, corroboration`` required; ``rank, score, consumed``
    optional (null when absent). Times are aware (parsed to UTC);
    ``caller_confidence`` in [0, 1]; ``is_atom`` and ``consumed`` booleans
    (``1/0`` and ``"true"/"false"`` accepted; ``consumed`` may be null);
    ``corroboration >= 0`` and ``rank >= 1`` whole numbers.

    {validate}

    See Also
    --------
    read_recall_log : reads and validates a file.

    Examples
    --------
    >>> import pandas as pd
    >>> log = pd.DataFrame({"ts": ["2026-01-02T00:00:00Z"], "recall_id": ["r1"], "memory_id": ["m1"],
    ...     "namespace": ["ns"], "source": ["user"], "caller_confidence": [0.9],
    ...     "created_at": ["2026-01-01T00:00:00Z"], "is_atom": [0], "corroboration": [2], "consumed": [1]})
    >>> v = validate_recall_log(log)
    >>> bool(v["consumed"][0]), int(v["corroboration"][0]), str(v["ts"].dtype)
    (True, 2, 'datetime64[ns, UTC]')
    """
    spec = RECALL_LOG
    if isinstance(df, pd.DataFrame):
        spec = LogSpec(name=RECALL_LOG.name, required=RECALL_LOG.required, optional=RECALL_LOG.optional,
                       times=RECALL_LOG.times, schema=_schema(), rules=RECALL_LOG.rules)
        df_in = _pre(plain_columns(df))
    else:
        df_in = df
    res = validate_frame(df_in, spec, source=source, errors=errors)
    if errors == "raise":
        return _typed(res)
    valid, rejected = res
    return _typed(valid), rejected


def _typed(df: pd.DataFrame) -> pd.DataFrame:
    out = df.copy()
    out["caller_confidence"] = pd.to_numeric(out["caller_confidence"]).astype("float64")
    out["corroboration"] = pd.to_numeric(out["corroboration"]).astype("int64")
    out["is_atom"] = out["is_atom"].astype(bool)
    out["rank"] = pd.to_numeric(out["rank"], errors="coerce").astype("Int64")
    out["score"] = pd.to_numeric(out["score"], errors="coerce").astype("float64")
    consumed = out["consumed"]
    out["consumed"] = (consumed.astype("boolean") if is_bool_dtype(consumed.dtype) else
                       pd.array([None if _isnull(v) else bool(v) for v in consumed], dtype="boolean"))
    for col in ("recall_id", "memory_id", "namespace", "source"):
        out[col] = out[col].astype(object)
    extra = [c for c in out.columns if c not in RECALL_COLUMNS]
    return out[list(RECALL_COLUMNS) + extra]


@fill_doc(read=_docs.READ)
def read_recall_log(path, errors: str = "raise"):
    """Read a recall log (JSONL, CSV or Parquet) and validate it (see :func:`validate_recall_log`).

    {read}

    See Also
    --------
    validate_recall_log : the checks applied.
    """
    raw = read_table(path, columns=_READ_AS, required=RECALL_LOG.required)
    return read_in_time_order(validate_recall_log(raw, source=str(path), errors=errors), path, errors)
