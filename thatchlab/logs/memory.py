"""The memory log of omi's belief model.

One row per event on a memory store: ``write`` inserts a row, the evidence
events (``restated``, ``contradicted``, ``resolved``, ``unrelated``,
``review``, ``delete``) touch one, and ``read`` is a reader looking at one,
optionally labelled with whether the belief still held (``still_true``).

Rows may carry omi's source-policy fields (release ``17fecf7``, see
:mod:`thatchlab.belief`): ``source_authority`` (an integer 0-5),
``evidence_families`` (a list of texts; JSON text in CSV), ``evidence_time``
(an aware time), ``eligible`` (true/false) and ``subject_entity_id``. On a
``write`` row they describe the memory; on an evidence event, its source.
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
from pandas.api.types import is_bool_dtype

from thatchlab.core.docstrings import fill_doc
from thatchlab.core.dtypes import float_values, is_text_dtype, object_text
from thatchlab.core.frames import plain_columns
from thatchlab.core.params.belief import BELIEF_CLASSES, MEMORY_LOG_KINDS
from thatchlab.logs import _docs
from thatchlab.logs._core import read_table, write_table
from thatchlab.logs._order import read_in_time_order
from thatchlab.logs._validate import (
    LogSpec,
    RowRule,
    missing_cells,
    numbers_ok,
    text_ok,
    validate_frame,
)

__all__ = ["MEMORY_LOG", "MEMORY_LOG_COLUMNS", "validate_memory_log", "read_memory_log",
           "write_memory_log"]

#: Columns of the memory log, in order. Only ``ts``, ``memory_id`` and ``kind``
#: are required; the others are added as nulls when absent.
MEMORY_LOG_COLUMNS = ("ts", "memory_id", "kind", "text", "belief_class", "tier", "memory_kind",
                      "user_asserted", "half_life_days", "valid_to", "authority",
                      "target_memory_id", "subject_scope", "confirmed", "still_true",
                      "source_authority", "evidence_families", "evidence_time", "eligible",
                      "subject_entity_id")
_POLICY_COLUMNS = MEMORY_LOG_COLUMNS[-5:]
_BOOLS = ("user_asserted", "confirmed", "still_true", "eligible")
_NUMS = ("half_life_days", "authority", "source_authority")
_BOOL_TEXT = {"true": True, "false": False, "1": True, "0": False, "True": True, "False": False}
#: What the reader parses each column as.
_READ_AS = {**{c: "text" for c in MEMORY_LOG_COLUMNS}, "ts": "time", "valid_to": "time",
            "evidence_time": "time", **{c: "bool" for c in _BOOLS}, **{c: "number" for c in _NUMS},
            "evidence_families": "texts"}


def _isnull(v) -> bool:
    return v is None or v is pd.NA or v is pd.NaT or (isinstance(v, (float, np.floating)) and np.isnan(v))


def _missing(df, col) -> np.ndarray:
    return missing_cells(df[col], _isnull)


def _text_ok(col, nullable):
    return lambda df: text_ok(df[col], nullable=nullable, isnull=_isnull)


def _bool_ok(col):
    def test(df):
        if is_bool_dtype(df[col].dtype):     # booleans or missing, by dtype
            return np.full(len(df), True)
        return df[col].map(lambda v: isinstance(v, (bool, np.bool_)) or _isnull(v))
    return test


def _num_ok(col, positive):
    def test(df):
        ok = numbers_ok(df[col])
        if positive:
            ok &= numbers_ok(df[col], low=np.nextafter(0.0, 1.0)) | _missing(df, col)
        return ok
    return test


def _kind_is(df, *kinds):
    return df["kind"].isin(kinds)


def _authority_ok(df):
    s = df["source_authority"]
    if s.dtype.kind in "iuf":           # numbers by dtype (nullable and Arrow ones too)
        v = float_values(s)
        with np.errstate(invalid="ignore"):
            return np.isnan(v) | ((v == np.floor(v)) & (v >= 0) & (v <= 5))

    def one(v):
        if _isnull(v):
            return True
        if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, float, np.integer, np.floating)):
            return False
        return bool(np.isfinite(v)) and float(v).is_integer() and 0 <= v <= 5
    return df["source_authority"].map(one)


def _families_ok(df):
    if df["evidence_families"].dtype != object and df["evidence_families"].isna().all():
        return np.full(len(df), True)   # a column of nulls (read as floats or Arrow nulls)

    def one(v):
        if isinstance(v, np.ndarray):
            v = v.tolist()
        if isinstance(v, (list, tuple)):
            return all(isinstance(x, str) and x != "" for x in v)
        return _isnull(v)
    return df["evidence_families"].map(one)


MEMORY_LOG = LogSpec(
    name="memory log",
    required=("ts", "memory_id", "kind"),
    optional=MEMORY_LOG_COLUMNS[3:],
    times=("ts", "valid_to", "evidence_time"),
    rules=(
        RowRule("ts", "a timezone-aware ISO-8601 time", lambda df: df["ts"].notna()),
        RowRule("memory_id", "a non-empty text id", _text_ok("memory_id", False)),
        RowRule("kind", f"one of {list(MEMORY_LOG_KINDS)}", lambda df: df["kind"].isin(MEMORY_LOG_KINDS)),
        RowRule("text", "a non-empty text on write rows",
                lambda df: ~_kind_is(df, "write") | _text_ok("text", False)(df)),
        RowRule("belief_class", f"one of {list(BELIEF_CLASSES)} or null",
                lambda df: df["belief_class"].isin(BELIEF_CLASSES).to_numpy(bool) | _missing(df, "belief_class")),
        RowRule("half_life_days", "a number of days > 0, or null (no decay)",
                _num_ok("half_life_days", True)),
        RowRule("authority", "a number (higher = more authoritative) or null",
                _num_ok("authority", False)),
        RowRule("target_memory_id", "a non-empty text id or null", _text_ok("target_memory_id", True)),
        RowRule("user_asserted", "true or false (or null)", _bool_ok("user_asserted")),
        RowRule("confirmed", "true or false on review rows",
                lambda df: _bool_ok("confirmed")(df) & (~_kind_is(df, "review").to_numpy(bool)
                                                        | ~_missing(df, "confirmed"))),
        RowRule("still_true", "true, false or null on read rows; null elsewhere",
                lambda df: _bool_ok("still_true")(df) & (_kind_is(df, "read").to_numpy(bool)
                                                         | _missing(df, "still_true"))),
        RowRule("source_authority", "an integer from 0 to 5 (omi's source order) or null", _authority_ok),
        RowRule("evidence_families", "a list of non-empty texts (a JSON array in CSV) or null", _families_ok),
        RowRule("eligible", "true or false (or null = true)", _bool_ok("eligible")),
        RowRule("subject_entity_id", "a non-empty text id or null", _text_ok("subject_entity_id", True)),
    ),
)


def _decode_families(v):
    if isinstance(v, str):
        try:
            return json.loads(v)
        except ValueError:
            return v
    return v.tolist() if isinstance(v, np.ndarray) else v


def _all_missing(s: pd.Series) -> bool:
    """A column of nulls by its dtype (read as floats, or as Arrow nulls): nothing to decode."""
    return s.dtype != object and bool(s.isna().all())


def _pre(df: pd.DataFrame) -> pd.DataFrame:
    out = df.copy()
    if "evidence_families" in out.columns and not _all_missing(out["evidence_families"]):
        out["evidence_families"] = out["evidence_families"].astype(object).map(_decode_families)
    if "source_authority" in out.columns and out["source_authority"].dtype.kind not in "iuf":
        out["source_authority"] = out["source_authority"].astype(object).map(
            lambda v: _to_number(v) if isinstance(v, str) else v)
    for col in _BOOLS:
        if col in out.columns and not is_bool_dtype(out[col].dtype):   # text and 1/0 to booleans
            out[col] = out[col].map(
                lambda v: _BOOL_TEXT.get(v, v) if isinstance(v, str) else
                (bool(v) if isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, bool)
                 and v in (0, 1) else v)).astype(object)
    return out


def _to_number(v):
    try:
        return float(v)
    except ValueError:
        return v


def _typed(df: pd.DataFrame) -> pd.DataFrame:
    out = df.copy()
    fam = out["evidence_families"]
    if _all_missing(fam):
        out["evidence_families"] = pd.Series([None] * len(out), index=out.index, dtype=object)
    else:
        out["evidence_families"] = fam.map(
            lambda v: None if not isinstance(v, (list, tuple)) and _isnull(v) else [str(x) for x in v]).astype(object)
    for col in _NUMS:
        s = out[col]
        out[col] = (np.array(float_values(s)) if s.dtype.kind in "iuf" else
                    pd.to_numeric(s, errors="coerce").astype("float64"))
    for col in _BOOLS:
        s = out[col]
        out[col] = s.astype("boolean") if is_bool_dtype(s.dtype) else pd.array(
            [None if _isnull(v) else bool(v) for v in s], dtype="boolean")
    out["source_authority"] = out["source_authority"].astype("Int64")
    for col in ("memory_id", "kind", "text", "belief_class", "tier", "memory_kind", "target_memory_id",
                "subject_scope", "subject_entity_id"):
        s = out[col]
        if is_text_dtype(s.dtype):      # str or missing: read through the distinct values
            out[col] = object_text(s)
            continue
        # built as object: Series.map would infer pandas 3's str dtype and turn the None back into NaN
        out[col] = pd.Series([None if _isnull(v) else str(v) for v in s.to_numpy(dtype=object)],
                             index=out.index, dtype=object)
    extra = [c for c in out.columns if c not in MEMORY_LOG_COLUMNS]
    return out[list(MEMORY_LOG_COLUMNS) + extra]


@fill_doc(validate=_docs.VALIDATE)
def validate_memory_log(df: pd.DataFrame, source=None, errors: str = "raise"):
    """Validate a memory log and return it typed (a new frame; the input is untouched).

    Required columns ``ts, memory_id, kind``; optional (null when absent)
    ``text, belief_class, tier, memory_kind, user_asserted, half_life_days,
    valid_to, authority, target_memory_id, subject_scope, confirmed,
    still_true``. Times are aware (parsed to UTC); ``kind`` one of
    ``write, restated, contradicted, resolved, unrelated, review, delete,
    read``; ``write`` rows need ``text``; ``half_life_days`` > 0 or null;
    ``review`` rows need ``confirmed``; ``still_true`` only on ``read`` rows;
    ``source_authority`` an integer 0-5 or null; ``evidence_families`` a
    list of non-empty texts or null; ``evidence_time`` aware; ``eligible``
    true, false or null.
    For evidence events ``target_memory_id`` names the row touched (then
    ``memory_id`` is the evidence source); when it is null the row touched is
    ``memory_id``.

    {validate}

    See Also
    --------
    read_memory_log : reads and validates a file.

    Examples
    --------
    >>> import pandas as pd
    >>> log = pd.DataFrame({"ts": ["2026-01-01T00:00:00Z", "2026-01-05T00:00:00Z"],
    ...     "memory_id": ["m1", "m1"], "kind": ["write", "read"], "text": ["likes tea", None],
    ...     "belief_class": ["preference", None], "still_true": [None, "true"]})
    >>> v = validate_memory_log(log)
    >>> v["still_true"].tolist(), str(v["ts"].dtype)
    ([<NA>, True], 'datetime64[ns, UTC]')
    """
    df_in = _pre(plain_columns(df)) if isinstance(df, pd.DataFrame) else df
    res = validate_frame(df_in, MEMORY_LOG, source=source, errors=errors)
    if errors == "raise":
        return _typed(res)
    valid, rejected = res
    return _typed(valid), rejected


@fill_doc(read=_docs.READ)
def read_memory_log(path, errors: str = "raise"):
    """Read a memory log (JSONL, CSV or Parquet) and validate it (see :func:`validate_memory_log`).

    {read}

    See Also
    --------
    validate_memory_log : the checks applied.
    write_memory_log : the writer.
    """
    raw = read_table(path, columns=_READ_AS, required=MEMORY_LOG.required)
    return read_in_time_order(validate_memory_log(raw, source=str(path), errors=errors), path, errors)


@fill_doc(write=_docs.WRITE)
def write_memory_log(df: pd.DataFrame, path):
    """Validate and write a memory log (format by suffix); returns the path.

    The source-policy columns (``source_authority`` ... ``subject_entity_id``) are written only
    when some row carries a value, so logs without them are written as before.

    {write}

    See Also
    --------
    read_memory_log : reads it back.
    """
    log = validate_memory_log(df)
    out = log.drop(columns=[c for c in _POLICY_COLUMNS if not log[c].map(
        lambda v: isinstance(v, list) or not _isnull(v)).any()])
    for col in _BOOLS:
        if col in out.columns:
            out[col] = out[col].astype(object).map(lambda v: None if _isnull(v) else bool(v))
    if "source_authority" in out.columns:
        out["source_authority"] = out["source_authority"].astype(object).map(
            lambda v: None if _isnull(v) else int(v))
    return write_table(out, path, json_columns=("evidence_families",))
