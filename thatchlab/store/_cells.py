"""Cell converters and cell checks shared by the store sections.

The converters turn Python values into ones SQLite accepts; the checks run
on a file being read and reject a value whose SQLite type is not what the
section writes (SQLite itself stores text in a REAL column without
complaint), naming the table, the row and the column.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from thatchlab.core.errors import StoreSchemaError

__all__ = ["opt", "time_text", "check_cells", "check_vectors", "check_finite", "row_name"]

#: Cell kinds of :func:`check_cells` → the ``typeof()`` values allowed and how to say so.
_KINDS = {
    "text": (("text",), "text"),
    "num": (("real", "integer"), "a number (REAL or INTEGER)"),
    "int": (("integer",), "an INTEGER"),
    "blob": (("blob",), "a BLOB"),
}
_MAX = 1.7976931348623157e308


def opt(v):
    """None for every flavour of missing (None, NA, NaT, NaN); numpy scalars as Python values."""
    if v is None or v is pd.NA or v is pd.NaT or (isinstance(v, float) and math.isnan(v)):
        return None
    if isinstance(v, np.generic):
        return v.item()
    return v


def time_text(v):
    """An aware time as full-precision ISO text with ``Z`` (None when missing)."""
    v = opt(v)
    return None if v is None else pd.Timestamp(v).tz_convert("UTC").strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def row_name(key, key_value, rowid) -> str:
    """How an error names a row: its key when the table has one, and its rowid."""
    if key is None or key == "rowid":
        return f"row {rowid}"
    return f"row {key}={key_value!r} (rowid {rowid})"


def check_cells(conn, label, table, spec: dict, key=None) -> None:
    """Raise :class:`StoreSchemaError` at the first cell of ``table`` whose type is not allowed.

    ``spec`` maps each column to a kind: ``"text"``, ``"num"`` (REAL or
    INTEGER, finite), ``"int"`` or ``"blob"``, with a trailing ``"?"`` when
    NULL is allowed. ``key`` is the column that names a row in the message.
    """
    key_sql = key or "rowid"
    for col, kind in spec.items():
        allowed, say = _KINDS[kind.rstrip("?")]
        if kind.endswith("?"):
            allowed, say = allowed + ("null",), say + " or NULL"
        marks = ", ".join("?" for _ in allowed)
        cond = f"typeof({col}) NOT IN ({marks})"
        if kind.startswith("num"):
            cond += f" OR (typeof({col}) = 'real' AND abs({col}) > {_MAX!r})"
        row = conn.execute(f"SELECT rowid, {key_sql}, typeof({col}), substr(quote({col}), 1, 60) "
                           f"FROM {table} WHERE {cond} ORDER BY rowid LIMIT 1", allowed).fetchone()
        if row is not None:
            rowid, key_value, typ, shown = row
            raise StoreSchemaError(f"{label}: table {table!r}, {row_name(key, key_value, rowid)}, column "
                                   f"{col!r} holds {typ.upper()} {shown}; expected {say}")


def check_vectors(conn, label, tables, key="id") -> None:
    """Every non-NULL ``embedding`` of ``tables`` is little-endian float32 bytes (a
    positive multiple of 4), and all vectors of one ``model`` have one dimension."""
    dims: dict = {}
    for table in tables:
        rows = conn.execute(f"SELECT rowid, {key}, model, length(embedding) FROM {table} "
                            "WHERE embedding IS NOT NULL ORDER BY rowid")
        for rowid, key_value, model, n in rows:
            where = f"{label}: table {table!r}, {row_name(key, key_value, rowid)}, column 'embedding'"
            if n == 0 or n % 4:
                raise StoreSchemaError(f"{where} holds {n} bytes; expected float32 values "
                                       "(dimension × 4 bytes)")
            first = dims.setdefault(model, (n, table, key_value))
            if first[0] != n:
                raise StoreSchemaError(f"{where} holds {n // 4} float32 values ({n} bytes) but the vectors "
                                       f"of model {model!r} have dimension {first[0] // 4} (e.g. table "
                                       f"{first[1]!r}, {key}={first[2]!r})")


def check_finite(label, table, frame, column, key="id") -> None:
    """Raise at the first row of ``frame`` whose ``column`` vector holds NaN or infinity."""
    for pos, v in enumerate(frame[column]):
        if v is not None and not np.isfinite(v).all():
            raise StoreSchemaError(f"{label}: table {table!r}, row {key}={frame[key].iloc[pos]!r} "
                                   f"(position {pos}), column {column!r} holds NaN or infinite values")
