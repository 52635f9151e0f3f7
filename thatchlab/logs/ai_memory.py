"""Read-only readers for an ai-memory SQLite database.

ai-memory keeps each memory's confidence columns in ``memories``, shadow
samples in ``confidence_shadow_observations`` and the consumption ledger in
``recall_observations``. These readers open the file read-only and return
DataFrames in the shapes :func:`~thatchlab.calibration.calibrate_from_shadow`
(observations, ``memories=`` and ``ledger=``)
and :func:`~thatchlab.calibration.backfill_recall_outcomes` take, with RFC 3339
times parsed to UTC. Shadow observations also keep the stored ``observed_at``
text, which production's window compares as text.
"""

from __future__ import annotations

import contextlib
import sqlite3
from dataclasses import dataclass

import numpy as np
import pandas as pd

from thatchlab.core.docstrings import fill_doc
from thatchlab.core.errors import StoreSchemaError, ThatchlabError
from thatchlab.core.schema import OBSERVATION_COLUMNS, OBSERVED_AT_TEXT
from thatchlab.core.sqlite import connect_readonly, table_names
from thatchlab.core.time import utc_column

__all__ = ["AiMemoryTables", "read_ai_memory", "read_memories", "read_shadow_observations",
           "read_recall_observations", "LEDGER_COLUMNS"]

# the one parameter of every reader here, written once (filled in by fill_doc)
_DB_PARAMS = """
Parameters
----------
path : str or path-like
    The ai-memory database (opened read-only).
"""

#: Columns of ai-memory's ``recall_observations`` ledger that thatchlab reads.
LEDGER_COLUMNS = ("recall_id", "memory_id", "retriever", "rank", "score", "consumed", "observed_at")
_MEMORY_TIMES = ("created_at", "updated_at", "last_accessed_at", "expires_at", "confidence_decayed_at")


def _select(conn, path, table, required) -> pd.DataFrame:
    try:
        names = table_names(conn)
    except (sqlite3.DatabaseError, UnicodeDecodeError) as exc:  # a damaged schema (text that is not UTF-8)
        raise StoreSchemaError(f"{path}: not a readable SQLite database ({type(exc).__name__}: {exc})") from None
    if table not in names:
        raise StoreSchemaError(f"{path}: missing table {table!r}; expected an ai-memory database")
    try:
        df = pd.read_sql_query(f"SELECT * FROM {table}", conn)
    except (sqlite3.DatabaseError, pd.errors.DatabaseError, UnicodeDecodeError) as exc:
        raise StoreSchemaError(f"{path}: cannot read table {table!r} ({exc})") from None
    missing = [c for c in required if c not in df.columns]
    if missing:
        raise StoreSchemaError(f"{path}: table {table!r} lacks column(s) {missing}")
    return df


def _times(df, cols, path, table):
    for col in cols:
        if col not in df.columns:
            continue
        try:
            df[col] = utc_column(df[col].astype(object).where(df[col].notna(), None), f"{table}.{col}")
        except ThatchlabError as exc:
            raise StoreSchemaError(f"{path}: table {table!r}, column {col!r}: {exc}") from None
    return df


def _where(df, i, keys) -> str:
    """How a message names row ``i`` of a table: its position and its key columns."""
    named = ", ".join(f"{k}={df[k].iloc[i]!r}" for k in keys if k in df.columns)
    return f"row {i}" + (f" ({named})" if named else "")


def _numbers(df, col, path, table, *keys) -> pd.Series:
    """``df[col]`` as float64; NULL stays NaN, any text or blob that is not a number raises."""
    values = df[col].astype(object)
    num = pd.to_numeric(values, errors="coerce")
    bad = num.isna() & values.notna()
    if bad.any():
        i = int(np.flatnonzero(bad.to_numpy())[0])
        raise StoreSchemaError(f"{path}: table {table!r}, {_where(df, i, keys)}, column {col!r}: expected a "
                               f"number, got {values.iloc[i]!r} ({int(bad.sum())} such row(s))")
    return num.astype(np.float64)


def _consumed(df, path) -> pd.Series:
    """The ledger's ``consumed`` as 0/1; NULL or any other value raises, never read as 0.

    ai-memory declares it ``INTEGER NOT NULL DEFAULT 0`` and only ever sets it
    to 1, so another value means the file is not ai-memory's as written.
    """
    values = df["consumed"].astype(object)
    ok = values.map(lambda v: not isinstance(v, (str, bytes)) and v is not None and v == v and v in (0, 1))
    if not ok.all():
        i = int(np.flatnonzero(~ok.to_numpy())[0])
        v = values.iloc[i]
        got = "NULL" if v is None or v != v else repr(v)
        raise StoreSchemaError(
            f"{path}: table 'recall_observations', {_where(df, i, ('recall_id', 'memory_id'))}, column "
            f"'consumed': expected 0 or 1 (ai-memory declares it INTEGER NOT NULL DEFAULT 0), got {got} "
            f"({int((~ok).sum())} such row(s)); the ledger was not written by ai-memory as it is")
    return values.astype(np.int64)


@fill_doc(db_params=_DB_PARAMS)
def read_memories(path) -> pd.DataFrame:
    """ai-memory's ``memories`` table (every column), times parsed to UTC.

    Every column comes along, so the calibration report finds what its releases read
    (:func:`~thatchlab.calibration.calibrate_from_shadow`): ``access_count`` for the
    consume/access divergence (``a78a228`` on), and for a caller-scoped sweep
    (``0a5770a``) ``namespace``, ``metadata`` (scope, owner and inbox target as JSON),
    ``lifecycle_state`` and, where the file has them, the generated ``scope_idx``,
    ``agent_id_idx`` and ``target_agent_id_idx`` columns production's query reads.

    A ``confidence`` or ``access_count`` that is not a number (text, a blob) raises
    :class:`~thatchlab.core.errors.StoreSchemaError` naming the row; NULL
    reads as NaN. Databases older than the confidence-source migration get
    ``confidence_source = 'caller_provided'`` and null ``confidence_signals`` /
    ``confidence_decayed_at``.

    {db_params}

    Returns
    -------
    pandas.DataFrame
        One row per memory.

    See Also
    --------
    read_ai_memory : the three tables at once.
    """
    with contextlib.closing(connect_readonly(path)) as conn:
        df = _select(conn, path, "memories", ("id", "confidence"))
    if "confidence_source" not in df.columns:
        df["confidence_source"] = "caller_provided"
    for col in ("confidence_signals", "confidence_decayed_at"):
        if col not in df.columns:
            df[col] = None
    df["confidence"] = _numbers(df, "confidence", path, "memories", "id")
    if "access_count" in df.columns:
        df["access_count"] = _numbers(df, "access_count", path, "memories", "id")
    return _times(df, _MEMORY_TIMES, path, "memories")


@fill_doc(db_params=_DB_PARAMS)
def read_shadow_observations(path) -> pd.DataFrame:
    """``confidence_shadow_observations`` with ``observed_at`` parsed, ready for
    :func:`~thatchlab.calibration.calibrate_from_shadow`.

    The text each row stored is kept in an extra ``observed_at_text`` column,
    because production's window and GC compare that text, not the instant:
    a row stored as ``2025-12-11T19:19:39Z`` is inside a 1-day window ending
    ``2025-12-12T19:19:39.890849474Z`` (see
    :func:`~thatchlab.calibration.calibrate_from_shadow`). Drop the column to
    compare instants. A confidence that is not a number (text, a blob)
    raises :class:`~thatchlab.core.errors.StoreSchemaError` naming the row.

    {db_params}

    Returns
    -------
    pandas.DataFrame
        One row per stored observation.

    See Also
    --------
    read_ai_memory : the three tables at once.
    """
    with contextlib.closing(connect_readonly(path)) as conn:
        df = _select(conn, path, "confidence_shadow_observations",
                     ("memory_id", "namespace", "observed_at", "derived_confidence"))
    for col in OBSERVATION_COLUMNS:
        if col not in df.columns:
            df[col] = None
    for col in ("caller_confidence", "derived_confidence"):
        df[col] = _numbers(df, col, path, "confidence_shadow_observations", "id", "memory_id")
    df["recall_outcome"] = df["recall_outcome"].astype(object).where(df["recall_outcome"].notna(), None)
    # production compares the stored text, not the instant: keep it beside the parsed time
    df[OBSERVED_AT_TEXT] = [v if isinstance(v, str) else None for v in df["observed_at"].tolist()]
    df = _times(df, ("observed_at",), path, "confidence_shadow_observations")
    extra = [c for c in df.columns if c not in OBSERVATION_COLUMNS]
    return df[extra + list(OBSERVATION_COLUMNS)]


@fill_doc(db_params=_DB_PARAMS)
def read_recall_observations(path) -> pd.DataFrame | None:
    """The ``recall_observations`` consumption ledger, or ``None`` when the table is
    absent (older schemas); :func:`~thatchlab.calibration.backfill_recall_outcomes`
    then warns and skips the backfill, as production does.

    ``consumed`` is 0 or 1 on every row: a NULL (the schema declares it
    ``NOT NULL DEFAULT 0``) or any other value raises
    :class:`~thatchlab.core.errors.StoreSchemaError` naming the row by its
    ``recall_id`` and ``memory_id``; it is never read as 0. So does text in
    ``rank`` or ``score``.

    {db_params}

    Returns
    -------
    pandas.DataFrame or None
        One row per ledger row, or None without the table.

    See Also
    --------
    read_ai_memory : the three tables at once.
    """
    with contextlib.closing(connect_readonly(path)) as conn:
        if "recall_observations" not in table_names(conn):
            return None
        df = _select(conn, path, "recall_observations", ("memory_id", "consumed"))
    for col in LEDGER_COLUMNS:
        if col not in df.columns:
            df[col] = None
    df["consumed"] = _consumed(df, path)
    for col in ("rank", "score"):
        df[col] = _numbers(df, col, path, "recall_observations", "recall_id", "memory_id")
    return _times(df, ("observed_at",), path, "recall_observations")


@dataclass
class AiMemoryTables:
    """The three calibration tables of an ai-memory database.

    Parameters
    ----------
    memories : pandas.DataFrame
        The ``memories`` table (:func:`read_memories`).
    observations : pandas.DataFrame
        The shadow observations (:func:`read_shadow_observations`).
    ledger : pandas.DataFrame or None
        The recall ledger (:func:`read_recall_observations`); None on older schemas.
    """

    memories: pd.DataFrame
    observations: pd.DataFrame
    ledger: pd.DataFrame | None


@fill_doc(db_params=_DB_PARAMS)
def read_ai_memory(path) -> AiMemoryTables:
    """All three tables at once; a missing shadow table reads as an empty one.

    {db_params}

    Returns
    -------
    AiMemoryTables
        The memories, the shadow observations and the ledger.

    See Also
    --------
    read_memories, read_shadow_observations, read_recall_observations : one table each.

    Examples
    --------
    >>> import tempfile, sqlite3, os
    >>> p = os.path.join(tempfile.mkdtemp(), "m.db")
    >>> with sqlite3.connect(p) as c:
    ...     _ = c.execute("CREATE TABLE memories (id TEXT PRIMARY KEY, confidence REAL)")
    >>> t = read_ai_memory(p)
    >>> len(t.memories), len(t.observations), t.ledger is None
    (0, 0, True)
    """
    memories = read_memories(path)
    with contextlib.closing(connect_readonly(path)) as conn:
        has_shadow = "confidence_shadow_observations" in table_names(conn)
    if has_shadow:
        obs = read_shadow_observations(path)
    else:
        obs = pd.DataFrame({c: pd.Series(dtype=object) for c in OBSERVATION_COLUMNS})
        obs["observed_at"] = pd.Series(dtype="datetime64[ns, UTC]")
    return AiMemoryTables(memories=memories, observations=obs, ledger=read_recall_observations(path))
