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

__all__ = ["opt", "time_text", "check_cells", "check_domains", "check_vectors", "check_finite_blocks",
           "check_fetched", "check_fetched_vectors", "plain_reader", "row_name"]

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
    The columns are checked in ``spec`` order and the first one holding a bad
    cell is reported at its first bad row (rowid order). One scan of the table
    tests every column at once; only when it finds a bad cell are the columns
    scanned one by one to name it.
    """
    conds = [_cell_condition(col, kind) for col, kind in spec.items()]
    if not conds:
        return
    where = " OR ".join(f"({cond})" for cond, _, _ in conds)
    args = [a for _, allowed, _ in conds for a in allowed]
    if conn.execute(f"SELECT 1 FROM {table} WHERE {where} LIMIT 1", args).fetchone() is None:
        return
    key_sql = key or "rowid"
    for col, (cond, allowed, say) in zip(spec, conds):
        row = conn.execute(f"SELECT rowid, {key_sql}, typeof({col}), substr(quote({col}), 1, 60) "
                           f"FROM {table} WHERE {cond} ORDER BY rowid LIMIT 1", allowed).fetchone()
        if row is not None:
            rowid, key_value, typ, shown = row
            raise StoreSchemaError(f"{label}: table {table!r}, {row_name(key, key_value, rowid)}, column "
                                   f"{col!r} holds {typ.upper()} {shown}; expected {say}")


_D = "[0-9]"
#: Production's timestamp texts: ``%Y-%m-%dT%H:%M:%SZ`` (SQLite's strftime defaults) and
#: JavaScript's ``toISOString()`` (milliseconds; thatchlab writes microseconds).
_TIME_GLOBS = (f"{_D * 4}-{_D * 2}-{_D * 2}T{_D * 2}:{_D * 2}:{_D * 2}Z",
               f"{_D * 4}-{_D * 2}-{_D * 2}T{_D * 2}:{_D * 2}:{_D * 2}.{_D}*Z")


def check_domains(conn, label, table, rules: dict, key=None) -> None:
    """Raise :class:`StoreSchemaError` at the first cell outside the domain production assumes.

    ``rules`` maps a column to ``("range", lo, hi)`` (a number in ``[lo, hi]``; None: no
    bound) or ``("time",)`` (production's timestamp text, a real calendar time). NULL
    cells pass (:func:`check_cells` decides whether NULL is allowed). The first bad
    column (in ``rules`` order) is reported at its first bad row.
    """
    for col, rule in rules.items():
        if rule[0] == "range":
            lo, hi = rule[1], rule[2]
            parts = ([f"{col} < {float(lo)!r}"] if lo is not None else []) + (
                [f"{col} > {float(hi)!r}"] if hi is not None else [])
            cond = " OR ".join(parts)
            bounds = (f"in [{lo:g}, {hi:g}]" if lo is not None and hi is not None else
                      f">= {lo:g}" if lo is not None else f"<= {hi:g}")
            say = f"a number {bounds}"
        else:
            globs = " OR ".join(f"{col} GLOB '{g}'" for g in _TIME_GLOBS)
            cond = (f"typeof({col}) != 'text' OR NOT ({globs}) "
                    f"OR julianday(substr({col}, 1, 19)) IS NULL "
                    f"OR strftime('%Y-%m-%dT%H:%M:%S', substr({col}, 1, 19)) != substr({col}, 1, 19)")
            say = "a UTC time as production writes it (YYYY-MM-DDTHH:MM:SSZ or with fractional seconds)"
        key_sql = key or "rowid"
        row = conn.execute(f"SELECT rowid, {key_sql}, substr(quote({col}), 1, 60) FROM {table} "
                           f"WHERE {col} IS NOT NULL AND ({cond}) ORDER BY rowid LIMIT 1").fetchone()
        if row is not None:
            rowid, key_value, shown = row
            raise StoreSchemaError(f"{label}: table {table!r}, {row_name(key, key_value, rowid)}, column "
                                   f"{col!r} holds {shown}; expected {say}")


def _cell_condition(col, kind):
    """``(SQL condition true for a bad cell of col, its parameters, what is expected)``."""
    allowed, say = _KINDS[kind.rstrip("?")]
    if kind.endswith("?"):
        allowed, say = allowed + ("null",), say + " or NULL"
    marks = ", ".join("?" for _ in allowed)
    cond = f"typeof({col}) NOT IN ({marks})"
    if kind.startswith("num"):
        cond += f" OR (typeof({col}) = 'real' AND abs({col}) > {_MAX!r})"
    return cond, allowed, say


#: Cell kinds of :func:`check_cells` → the Python types ``sqlite3`` returns for the allowed types.
_PY_TYPES = {"text": (str,), "num": (float, int), "int": (int,), "blob": (bytes,)}


def plain_reader(conn) -> bool:
    """Whether ``conn`` returns SQLite values as the ``sqlite3`` module's own Python types
    (TEXT as str, BLOB as bytes, INTEGER as int, REAL as float, NULL as None), so a
    fetched cell tells its SQLite type (see :func:`check_fetched`): its text factory is
    ``str`` (and, as for every connection thatchlab opens, no ``detect_types``)."""
    return conn.text_factory is str


def check_fetched(conn, label, table, spec: dict, columns: dict, key=None) -> None:
    """:func:`check_cells` for a table already read through a :func:`plain_reader`.

    ``columns`` maps each column of ``spec`` to its fetched cells. When every
    cell's Python type is one the column allows (and every REAL is finite)
    the table passes without another scan; otherwise :func:`check_cells`
    scans it and names the first bad cell exactly as it always does.
    """
    for col, kind in spec.items():
        allowed = _PY_TYPES[kind.rstrip("?")] + ((type(None),) if kind.endswith("?") else ())
        values = columns[col]
        types = set(map(type, values))
        fine = types.issubset(allowed)
        if fine and float in types and kind.startswith("num"):
            numbers = values if type(None) not in types else [v for v in values if v is not None]
            fine = bool(np.isfinite(np.fromiter(numbers, dtype=np.float64, count=len(numbers))).all())
        if not fine:
            check_cells(conn, label, table, spec, key=key)
            return


def check_fetched_vectors(conn, label, tables, vectors, key="id") -> None:
    """:func:`check_vectors` for embeddings already read: ``vectors`` holds per table
    ``(models, lengths)``, each row's ``model`` and its embedding's byte length (-1
    for NULL). Only when a length is wrong or a model has two are the rows scanned
    to name the first offending one."""
    dims: dict = {}
    for models, lengths in vectors:
        for model, n in set(zip(models, lengths)):
            if n < 0:
                continue
            if n == 0 or n % 4 or dims.setdefault(model, n) != n:
                _locate_bad_vector(conn, label, tables, key)
                return


def check_vectors(conn, label, tables, key="id") -> None:
    """Every non-NULL ``embedding`` of ``tables`` is little-endian float32 bytes (a
    positive multiple of 4), and all vectors of one ``model`` have one dimension.

    One scan per table finds the distinct byte lengths of each model; only when
    one is wrong or a model has two are the rows read in rowid order to name
    the first offending one.
    """
    dims: dict = {}
    for table in tables:
        rows = conn.execute(f"SELECT DISTINCT model COLLATE BINARY, length(embedding) FROM {table} "
                            "WHERE embedding IS NOT NULL").fetchall()
        for model, n in rows:
            if n == 0 or n % 4 or dims.setdefault(model, n) != n:
                _locate_bad_vector(conn, label, tables, key)
                return


def _locate_bad_vector(conn, label, tables, key) -> None:
    """Raise at the first row (tables in order, rows in rowid order) whose embedding is not
    float32 bytes or whose dimension differs from its model's first vector."""
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


def check_finite_blocks(label, table, keys, blocks, column="embedding", key="id") -> None:
    """Raise at the first vector (smallest position) holding NaN or infinity, the vectors
    held as matrices: ``blocks`` are ``(positions, matrix)`` pairs (row ``i`` of
    ``matrix`` is the vector at ``positions[i]``) and ``keys`` the ``key`` column."""
    first = None
    for positions, mat in blocks:
        if mat.size == 0 or np.isfinite(mat).all():
            continue
        bad = positions[int(np.flatnonzero(~np.isfinite(mat).all(axis=1))[0])]
        first = bad if first is None else min(first, bad)
    if first is not None:
        pos = int(first)
        _raise_nonfinite(label, table, keys[pos], pos, column, key)


def _raise_nonfinite(label, table, key_value, pos, column, key):
    raise StoreSchemaError(f"{label}: table {table!r}, row {key}={key_value!r} "
                           f"(position {pos}), column {column!r} holds NaN or infinite values")
