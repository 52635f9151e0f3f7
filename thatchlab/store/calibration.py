"""Store section "calibration": ai-memory's confidence columns and shadow observations.

Exports a :class:`~thatchlab.calibration.CalibrationState` as two tables: a
``memories`` patch table keyed by memory id holding ai-memory's confidence
columns (``confidence``, ``confidence_source``, ``confidence_signals`` JSON,
``confidence_decayed_at`` RFC 3339) — rows to apply to a live database, not
a database ai-memory opens — and ``confidence_shadow_observations``.

Times are written in one UTC format (``…+00:00``) and read back as
timestamps, so an import of a database whose rows were stored with ``Z`` or
another offset no longer carries that text; production's text comparison of
``observed_at`` needs it (:func:`thatchlab.logs.read_shadow_observations`
keeps it).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from thatchlab.calibration import (
    MEMORY_COLUMNS,
    OBSERVATION_COLUMNS,
    CalibrationState,
    observed_at_text,
)
from thatchlab.core.docstrings import fill_doc
from thatchlab.core.errors import StoreSchemaError, StoreWriteError
from thatchlab.core.params.calibration import CONFIDENCE_SOURCES, CalibrationParams
from thatchlab.core.params.production import production_params
from thatchlab.core.sqlite import require_tables, table_columns
from thatchlab.core.time import utc_column
from thatchlab.store._cells import check_cells, opt
from thatchlab.store._section_docs import PRESENT_PARAMS, READ_PARAMS, section_docs

# the docstring sections this module shares with the other store sections (see _section_docs)
_DOCS = section_docs(
    "CalibrationState or CalibrationResult or dict",
    "A calibration state, a :func:`~thatchlab.replay.run_calibration` result or a dict of ``memories``/``observations``.",
    "CalibrationParams",
    "``obj`` is none of the accepted kinds, or lacks a column.")

__all__ = ["KEY", "ENGINE", "TABLES", "DDL", "create", "write", "present", "read", "check_equal",
           "default_params", "model"]

KEY = "calibration"
ENGINE = "calibration"
TABLES = ("memories", "confidence_shadow_observations")
_SOURCES = ", ".join(f"'{s}'" for s in CONFIDENCE_SOURCES)
#: Outcomes a shadow row may hold: the backfill's two and the legacy values older
#: databases still carry (production counts them as judged).
_OUTCOMES = ", ".join(f"'{s}'" for s in ("consumed", "unconsumed", "recalled", "skipped"))
DDL = [
    f"""CREATE TABLE IF NOT EXISTS memories (
    id TEXT PRIMARY KEY,
    confidence REAL NOT NULL DEFAULT 1.0,
    confidence_source TEXT NOT NULL DEFAULT 'caller_provided' CHECK (confidence_source IN ({_SOURCES})),
    confidence_signals TEXT,
    confidence_decayed_at TEXT
)""",
    f"""CREATE TABLE IF NOT EXISTS confidence_shadow_observations (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    memory_id TEXT NOT NULL,
    namespace TEXT NOT NULL,
    source TEXT,
    observed_at TEXT NOT NULL,
    caller_confidence REAL,
    derived_confidence REAL NOT NULL,
    signals TEXT,
    recall_outcome TEXT CHECK (recall_outcome IS NULL OR recall_outcome IN ({_OUTCOMES}))
)""",
    "CREATE INDEX IF NOT EXISTS idx_confidence_shadow_observed_at ON confidence_shadow_observations(observed_at)",
    "CREATE INDEX IF NOT EXISTS idx_confidence_shadow_memory ON confidence_shadow_observations(memory_id)",
]


#: The SQLite type of every column as written (see ``_cells.check_cells``).
_MEMORY_KINDS = {"id": "text", "confidence": "num", "confidence_source": "text", "confidence_signals": "text?",
                 "confidence_decayed_at": "text?"}
_OBSERVATION_KINDS = {"memory_id": "text", "namespace": "text", "source": "text?", "observed_at": "text",
                      "caller_confidence": "num?", "derived_confidence": "num", "signals": "text?",
                      "recall_outcome": "text?"}


def _state(obj) -> CalibrationState:
    if isinstance(obj, CalibrationState):
        return obj
    if hasattr(obj, "state") and isinstance(obj.state, CalibrationState):
        return obj.state
    if isinstance(obj, dict):
        return CalibrationState(memories=obj.get("memories", CalibrationState().memories),
                                observations=obj.get("observations", CalibrationState().observations))
    raise StoreWriteError(f"calibration: expected a CalibrationState, a run_calibration result or a dict "
                          f"of memories/observations, got {type(obj).__name__}")


def _time_text(values) -> list:
    """RFC 3339 text of each time, normalised to UTC in the one format thatchlab writes
    (:func:`~thatchlab.calibration.observed_at_text` of the parsed times), so a re-read
    compares in the window exactly like the rows written."""
    s = pd.to_datetime(pd.Series(values, dtype=object), utc=True) if len(values) else pd.Series([], dtype=object)
    return observed_at_text(s)


def _memory_rows(df: pd.DataFrame) -> list:
    missing = [c for c in MEMORY_COLUMNS if c not in df.columns]
    if missing:
        raise StoreWriteError(f"calibration.memories: missing column(s) {missing}")
    return list(zip(df["id"].astype(str), df["confidence"].astype(np.float64).tolist(),
                    df["confidence_source"].map(str).tolist(), [opt(v) for v in df["confidence_signals"]],
                    _time_text(df["confidence_decayed_at"].tolist()), strict=True))


def _obs_rows(df: pd.DataFrame) -> list:
    missing = [c for c in OBSERVATION_COLUMNS if c not in df.columns]
    if missing:
        raise StoreWriteError(f"calibration.observations: missing column(s) {missing}")
    return list(zip(df["memory_id"].astype(str), df["namespace"].astype(str), [opt(v) for v in df["source"]],
                    _time_text(df["observed_at"].tolist()), [opt(v) for v in df["caller_confidence"]],
                    df["derived_confidence"].astype(np.float64).tolist(), [opt(v) for v in df["signals"]],
                    [opt(v) for v in df["recall_outcome"]], strict=True))


def create(conn) -> None:
    """Create the section's tables (``memories`` (confidence columns) and ``confidence_shadow_observations``) in ``conn``.

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
    st = _state(obj)
    mem, obs = _memory_rows(st.memories), _obs_rows(st.observations)
    conn.executemany("INSERT INTO memories(id, confidence, confidence_source, confidence_signals, "
                     "confidence_decayed_at) VALUES (?, ?, ?, ?, ?)", mem)
    conn.executemany("INSERT INTO confidence_shadow_observations(memory_id, namespace, source, observed_at, "
                     "caller_confidence, derived_confidence, signals, recall_outcome) "
                     "VALUES (?, ?, ?, ?, ?, ?, ?, ?)", obs)
    return {"memories": len(mem), "confidence_shadow_observations": len(obs)}


@fill_doc(present_params=PRESENT_PARAMS)
def present(conn) -> bool:
    """Whether a file holds this section's tables.

    {present_params}

    Returns
    -------
    bool
        True when ``memories`` has the confidence columns or ``confidence_shadow_observations``
        is there.
    """
    return ("confidence_source" in table_columns(conn, "memories")
            or bool(table_columns(conn, "confidence_shadow_observations")))


@fill_doc(read_params=READ_PARAMS)
def read(conn) -> CalibrationState:
    """The calibration state in a file (read-only connection), rows in insertion order.

    {read_params}

    Returns
    -------
    CalibrationState
        The memories and observations, rows in insertion order.

    Raises
    ------
    StoreSchemaError
        A table is missing or a cell is not of its column's type (naming table, row and column).
    """

    have_mem = bool(table_columns(conn, "memories"))
    have_obs = bool(table_columns(conn, "confidence_shadow_observations"))
    if not (have_mem or have_obs):
        raise StoreSchemaError("calibration: missing tables 'memories' and 'confidence_shadow_observations'")
    state = CalibrationState()
    if have_mem:
        require_tables(conn, "calibration", {"memories": MEMORY_COLUMNS})
        check_cells(conn, "calibration", "memories", _MEMORY_KINDS, key="id")
        mem = pd.read_sql_query(f"SELECT {', '.join(MEMORY_COLUMNS)} FROM memories ORDER BY rowid", conn)
        mem["confidence"] = mem["confidence"].astype(np.float64)
        mem["confidence_signals"] = mem["confidence_signals"].astype(object).where(
            mem["confidence_signals"].notna(), None)
        mem["confidence_decayed_at"] = utc_column(
            mem["confidence_decayed_at"].astype(object).where(mem["confidence_decayed_at"].notna(), None),
            "memories.confidence_decayed_at")
        state.memories = mem
    if have_obs:
        require_tables(conn, "calibration", {"confidence_shadow_observations": OBSERVATION_COLUMNS})
        check_cells(conn, "calibration", "confidence_shadow_observations", _OBSERVATION_KINDS,
                    key="id" if "id" in table_columns(conn, "confidence_shadow_observations") else None)
        obs = pd.read_sql_query(f"SELECT {', '.join(OBSERVATION_COLUMNS)} FROM confidence_shadow_observations "
                                "ORDER BY id", conn)
        for col in ("source", "signals", "recall_outcome"):
            obs[col] = obs[col].astype(object).where(obs[col].notna(), None)
        obs["caller_confidence"] = obs["caller_confidence"].astype(np.float64)
        obs["derived_confidence"] = obs["derived_confidence"].astype(np.float64)
        obs["observed_at"] = utc_column(obs["observed_at"], "confidence_shadow_observations.observed_at")
        state.observations = obs
    return state


@fill_doc(check_equal_sections=_DOCS["check_equal_sections"])
def check_equal(a, b, params) -> None:
    """Compare what was given with what was read back from the export.

    {check_equal_sections}
    """
    sa, sb = _state(a), _state(b)
    if _memory_rows(sa.memories) != _memory_rows(sb.memories):
        raise AssertionError("memories rows differ after the round trip")
    ra, rb = _obs_rows(sa.observations), _obs_rows(sb.observations)
    if ra != rb:
        raise AssertionError("confidence_shadow_observations rows differ after the round trip")


@fill_doc(obj_params=_DOCS["obj_params"])
def default_params(obj):
    """The parameters to record for ``obj`` when none are given.

    {obj_params}

    Returns
    -------
    CalibrationParams
        The state's own parameters, else production's.
    """
    st = _state(obj)
    if isinstance(st.params, CalibrationParams):
        return st.params
    return production_params("calibration")


@fill_doc(model_sections=_DOCS["model_sections"])
def model(obj):
    """The embedding model of ``obj``'s vectors: None, this section holds no vectors.

    {model_sections}
    """
    return None
