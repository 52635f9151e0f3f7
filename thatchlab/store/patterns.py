"""Store section "patterns": mined temporal patterns as ``temporal_patterns`` (mnemo).

mnemo keeps its sequential patterns in a materialised view; thatchlab
exports all four pattern types in one table, one row per pattern in the
order :func:`~thatchlab.anticipation.mine` returned them. ``trigger`` and
``target`` are stored as ``trigger_name``/``target_name`` and ``group`` as
``group_id`` (SQL keywords); times are ISO-8601 UTC text with microseconds
and ``Z``; ``mined_at`` records the mining time when known.
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd

from thatchlab.anticipation import PATTERN_COLUMNS, PATTERN_TYPES
from thatchlab.core.docstrings import fill_doc
from thatchlab.core.errors import StoreSchemaError, StoreWriteError
from thatchlab.core.frames import number_cell
from thatchlab.core.params.anticipation import AnticipationParams
from thatchlab.core.sqlite import require_tables, table_columns
from thatchlab.store._cells import check_cells, opt, time_text
from thatchlab.store._section_docs import PRESENT_PARAMS, READ_PARAMS, section_docs

# the docstring sections this module shares with the other store sections (see _section_docs)
_DOCS = section_docs(
    "pandas.DataFrame or AnticipationReplayResult",
    "The patterns :func:`~thatchlab.anticipation.mine` returns (or a replay result holding them).",
    "AnticipationParams",
    "``obj`` is none of the accepted kinds, lacks a column, or holds a cell the table cannot hold (its row "
    "and column named).")

__all__ = ["KEY", "ENGINE", "TABLES", "DDL", "create", "write", "present", "read", "check_equal",
           "default_params", "model"]

KEY = "patterns"
ENGINE = "anticipation"
TABLES = ("temporal_patterns",)
_TYPES = ", ".join(f"'{t}'" for t in PATTERN_TYPES)
DDL = [
    f"""CREATE TABLE IF NOT EXISTS temporal_patterns (
    id INTEGER PRIMARY KEY,
    type TEXT NOT NULL CHECK (type IN ({_TYPES})),
    workspace TEXT NOT NULL,
    trigger_name TEXT NOT NULL,
    target_name TEXT NOT NULL,
    confidence REAL NOT NULL CHECK (confidence >= 0),
    observations INTEGER NOT NULL CHECK (observations >= 0),
    last_seen TEXT,
    trigger_kind TEXT,
    target_kind TEXT,
    avg_delay_s REAL,
    slot TEXT,
    weeks INTEGER,
    group_id TEXT,
    mined_at TEXT
)""",
    "CREATE INDEX IF NOT EXISTS temporal_patterns_lookup ON temporal_patterns(workspace, trigger_name)",
]
#: DataFrame column → table column.
_COLS = {c: {"trigger": "trigger_name", "target": "target_name", "group": "group_id"}.get(c, c)
         for c in PATTERN_COLUMNS}
#: The SQLite type of every column as written (see ``_cells.check_cells``).
_KINDS = {"id": "int", "type": "text", "workspace": "text", "trigger_name": "text", "target_name": "text",
          "confidence": "num", "observations": "int", "last_seen": "text?", "trigger_kind": "text?",
          "target_kind": "text?", "avg_delay_s": "num?", "slot": "text?", "weeks": "int?", "group_id": "text?",
          "mined_at": "text?"}


def _frame(obj) -> pd.DataFrame:
    if hasattr(obj, "patterns") and isinstance(obj.patterns, pd.DataFrame):
        obj = obj.patterns
    if not isinstance(obj, pd.DataFrame):
        raise StoreWriteError(f"patterns: expected the DataFrame of anticipation.mine() (or a replay "
                              f"result), got {type(obj).__name__}")
    missing = [c for c in ("type", "workspace", "trigger", "target", "confidence", "observations")
               if c not in obj.columns]
    if missing:
        raise StoreWriteError(f"patterns: missing column(s) {missing}; expected the output of mine()")
    return obj



def _rows(df: pd.DataFrame) -> list:
    """The table's rows of a pattern frame, each cell checked against what the table holds
    (:class:`StoreWriteError` naming the row and column of the first cell it cannot hold)."""
    mined_at = time_text(df.attrs.get("now")) if df.attrs.get("now") else None
    out = []
    for i, rec in enumerate(df.reindex(columns=PATTERN_COLUMNS).itertuples(index=False)):
        out.append((i, *(_cell(i, col, opt(v)) for col, v in zip(PATTERN_COLUMNS, rec)), mined_at))
    return out


#: Columns that must hold a value (NOT NULL in the table).
_REQUIRED = ("type", "workspace", "trigger", "target", "confidence", "observations")


def _cell(i: int, col: str, v):
    """Cell ``v`` (missing already None) of row ``i`` as the table stores it, or StoreWriteError."""
    if v is None:
        if col in _REQUIRED:
            _refuse(i, col, "a value", v)
        return None
    if col == "type" and v not in PATTERN_TYPES:
        _refuse(i, col, f"one of {list(PATTERN_TYPES)}", v)
    if col == "last_seen":
        try:
            return time_text(v)
        except (ValueError, TypeError, AttributeError):            # not a time, or a naive one
            _refuse(i, col, "an aware time", v)
    if col in ("confidence", "avg_delay_s", "observations", "weeks"):
        return _number(i, col, v)
    return str(v)


def _number(i: int, col: str, v):
    whole, nonnegative = col in ("observations", "weeks"), col != "avg_delay_s"
    n = None if isinstance(v, str) else number_cell(v, whole=whole, nonnegative=nonnegative)   # no text here
    if n is None:
        _refuse(i, col, "a whole number >= 0" if whole else
                "a finite number >= 0" if nonnegative else "a finite number", v)
    return n


def _refuse(i: int, col: str, expected: str, v):
    raise StoreWriteError(f"patterns row {i}, column {col!r}: expected {expected}, got {v!r}")


def create(conn) -> None:
    """Create the section's tables (``temporal_patterns``) in ``conn``.

    Parameters
    ----------
    conn : sqlite3.Connection
        The export being built.
    """
    for stmt in DDL:
        conn.execute(stmt)


@fill_doc(write_sections=_DOCS["write_sections"])
def write(conn, obj, params) -> dict:
    """Insert ``obj``'s rows into the section's tables.

    {write_sections}
    """
    rows = _rows(_frame(obj))
    cols = ["id"] + [_COLS[c] for c in PATTERN_COLUMNS] + ["mined_at"]
    conn.executemany(f"INSERT INTO temporal_patterns({', '.join(cols)}) VALUES "
                     f"({', '.join('?' for _ in cols)})", rows)
    return {"temporal_patterns": len(rows)}


@fill_doc(present_params=PRESENT_PARAMS)
def present(conn) -> bool:
    """Whether a file holds this section's tables.

    {present_params}

    Returns
    -------
    bool
        True when ``temporal_patterns`` are there.
    """
    return bool(table_columns(conn, "temporal_patterns"))


def _params_from_meta(conn):
    try:
        row = conn.execute("SELECT value FROM thatchlab_meta WHERE key = 'params'").fetchone()
        data = json.loads(row[0]).get(KEY) if row else None
        return AnticipationParams.from_dict(data).to_dict() if data else None
    except Exception:  # a foreign or older meta table
        return None


@fill_doc(read_params=READ_PARAMS)
def read(conn) -> pd.DataFrame:
    """The patterns in a file as :func:`mine` returns them (``attrs`` keep params and mining time).

    {read_params}

    Returns
    -------
    pandas.DataFrame
        The patterns as :func:`~thatchlab.anticipation.mine` returns them.

    Raises
    ------
    StoreSchemaError
        A table is missing or a cell is not of its column's type (naming table, row and column).
    """
    cols = [_COLS[c] for c in PATTERN_COLUMNS]
    require_tables(conn, "patterns", {"temporal_patterns": cols + ["id", "mined_at"]})
    check_cells(conn, "patterns", "temporal_patterns", _KINDS, key="id")
    raw = pd.read_sql_query(f"SELECT {', '.join(cols)}, mined_at FROM temporal_patterns ORDER BY id", conn)
    bad = raw[~raw["type"].isin(PATTERN_TYPES)]
    if len(bad):
        raise StoreSchemaError(f"patterns: row {int(bad.index[0])} of 'temporal_patterns' has type "
                               f"{bad['type'].iloc[0]!r}; expected one of {list(PATTERN_TYPES)}")
    df = raw.rename(columns={v: k for k, v in _COLS.items()})
    out = df[PATTERN_COLUMNS].astype(object).where(df[PATTERN_COLUMNS].notna(), None)
    out["confidence"] = df["confidence"].astype(np.float64)
    out["observations"] = df["observations"].astype(np.int64)
    out["avg_delay_s"] = pd.to_numeric(df["avg_delay_s"], errors="coerce").astype(np.float64)
    out["weeks"] = pd.array(df["weeks"], dtype="Int64")
    out["last_seen"] = pd.to_datetime(df["last_seen"], utc=True, format="ISO8601").dt.as_unit("ns")
    params = _params_from_meta(conn)
    if params is not None:
        out.attrs["params"] = params
    mined = df["mined_at"].dropna()
    if len(mined):
        out.attrs["now"] = pd.Timestamp(mined.iloc[0]).isoformat()
    return out


@fill_doc(check_equal_sections=_DOCS["check_equal_sections"])
def check_equal(a, b, params) -> None:
    """Compare what was given with what was read back from the export.

    {check_equal_sections}
    """
    ra, rb = _rows(_frame(a)), _rows(_frame(b))
    if ra != rb:
        n = next((i for i, (x, y) in enumerate(zip(ra, rb)) if x != y), min(len(ra), len(rb)))
        raise AssertionError(f"temporal_patterns rows differ after the round trip (first at row {n})")


@fill_doc(obj_params=_DOCS["obj_params"])
def default_params(obj):
    """The parameters to record for ``obj`` when none are given.

    {obj_params}

    Returns
    -------
    AnticipationParams
        The parameters recorded in the frame's ``attrs`` (defaults otherwise).
    """
    data = _frame(obj).attrs.get("params")
    return AnticipationParams.from_dict(data) if data else AnticipationParams()


@fill_doc(model_sections=_DOCS["model_sections"])
def model(obj):
    """The embedding model of ``obj``'s vectors: None, this section holds no vectors.

    {model_sections}
    """
    return None  # patterns carry no vectors
