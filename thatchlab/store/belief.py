"""Store section "beliefs": omi's belief model's memory rows as ``belief_memories``.

Production keeps these rows in Firestore; the SQLite table is for analysis
(no production system reads it). Times are ISO-8601 UTC text with
microseconds and ``Z``; ``evidence`` is a JSON array; rows keep insertion
order. Currency is never stored: it is computed when a row is read.
"""

from __future__ import annotations

import json

import pandas as pd

from thatchlab.belief import EVIDENCE_COLUMNS, MEMORY_COLUMNS, BeliefParams, BeliefStore
from thatchlab.core.docstrings import fill_doc
from thatchlab.core.errors import StoreSchemaError, StoreWriteError
from thatchlab.core.params.belief import BELIEF_STATUSES
from thatchlab.core.sqlite import require_tables, table_columns
from thatchlab.store._cells import check_cells, opt, time_text
from thatchlab.store._section_docs import PRESENT_PARAMS, READ_PARAMS, section_docs

# the docstring sections this module shares with the other store sections (see _section_docs)
_DOCS = section_docs(
    "BeliefStore or BeliefReplayResult or pandas.DataFrame",
    "A belief store, a :func:`~thatchlab.replay.run_belief` result or a memories frame.",
    "BeliefParams",
    "``obj`` is none of the accepted kinds.")

__all__ = ["KEY", "ENGINE", "TABLES", "DDL", "COLUMNS", "create", "write", "present", "read", "check_equal",
           "default_params", "model"]

KEY = "beliefs"
ENGINE = "belief"
TABLES = ("belief_memories",)
_STATUSES = ", ".join(f"'{s}'" for s in BELIEF_STATUSES)
DDL = [
    f"""CREATE TABLE IF NOT EXISTS belief_memories (
    id TEXT PRIMARY KEY,
    text TEXT NOT NULL,
    belief_class TEXT,
    half_life_days REAL CHECK (half_life_days IS NULL OR half_life_days > 0),
    user_asserted INTEGER NOT NULL DEFAULT 0,
    kind TEXT,
    tier TEXT,
    subject_scope TEXT,
    authority REAL,
    captured_at TEXT NOT NULL,
    last_corroborated_at TEXT,
    valid_to TEXT,
    confidence REAL,
    corroboration_count INTEGER NOT NULL DEFAULT 0,
    superseded_by TEXT,
    evidence TEXT NOT NULL DEFAULT '[]',
    status TEXT NOT NULL DEFAULT 'active' CHECK (status IN ({_STATUSES})),
    source_authority INTEGER CHECK (source_authority IS NULL OR source_authority BETWEEN 0 AND 5),
    evidence_families TEXT NOT NULL DEFAULT '[]',
    evidence_time TEXT,
    eligible INTEGER NOT NULL DEFAULT 1,
    subject_entity_id TEXT
)""",
]
#: Every column written: the memory row, then omi's source-policy fields (``17fecf7``); files
#: written before those fields existed are read without them.
COLUMNS = (*MEMORY_COLUMNS, *EVIDENCE_COLUMNS)
_TIMES = ("captured_at", "last_corroborated_at", "valid_to")
#: The SQLite type of every column as written (see ``_cells.check_cells``).
_KINDS = {"id": "text", "text": "text", "belief_class": "text?", "half_life_days": "num?",
          "user_asserted": "int", "kind": "text?", "tier": "text?", "subject_scope": "text?",
          "authority": "num?", "captured_at": "text", "last_corroborated_at": "text?", "valid_to": "text?",
          "confidence": "num?", "corroboration_count": "int", "superseded_by": "text?", "evidence": "text",
          "status": "text", "source_authority": "int?", "evidence_families": "text", "evidence_time": "text?",
          "eligible": "int", "subject_entity_id": "text?"}


def _store(obj) -> BeliefStore:
    if isinstance(obj, BeliefStore):
        return obj
    if hasattr(obj, "state") and isinstance(obj.state, BeliefStore):
        return obj.state
    if isinstance(obj, pd.DataFrame):
        return BeliefStore(obj)
    raise StoreWriteError(f"beliefs: expected a BeliefStore, a run_belief result or a memories "
                          f"DataFrame, got {type(obj).__name__}")



def _rows(store: BeliefStore) -> list:
    out = []
    for r in store.row_views():
        row = []
        for col in COLUMNS:
            v = r.get(col)
            if col in _TIMES or col == "evidence_time":
                v = time_text(v)
            elif col in ("evidence", "evidence_families"):
                v = json.dumps(list(v or ()))
            elif col in ("user_asserted", "eligible"):
                v = int(bool(True if v is None and col == "eligible" else v))
            elif col == "source_authority":
                v = None if v is None or v != v else int(v)
            else:
                v = opt(v)
            row.append(v)
        out.append(tuple(row))
    return out


def create(conn) -> None:
    """Create the section's tables (``belief_memories``) in ``conn``.

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
    rows = _rows(_store(obj))
    cols = ", ".join(COLUMNS)
    marks = ", ".join("?" for _ in COLUMNS)
    conn.executemany(f"INSERT INTO belief_memories({cols}) VALUES ({marks})", rows)
    return {"belief_memories": len(rows)}


@fill_doc(present_params=PRESENT_PARAMS)
def present(conn) -> bool:
    """Whether a file holds this section's tables.

    {present_params}

    Returns
    -------
    bool
        True when ``belief_memories`` are there.
    """
    return bool(table_columns(conn, "belief_memories"))


def _params_from_meta(conn) -> BeliefParams:
    try:
        row = conn.execute("SELECT value FROM thatchlab_meta WHERE key = 'params'").fetchone()
        data = json.loads(row[0]).get("beliefs") if row else None
        return BeliefParams.from_dict(data) if data else BeliefParams()
    except Exception:  # a foreign or older meta table: fall back to the defaults
        return BeliefParams()


@fill_doc(read_params=READ_PARAMS)
def read(conn) -> BeliefStore:
    """The belief store in a file (read-only connection), rows in insertion order,
    with the parameters recorded in ``thatchlab_meta`` (defaults otherwise).

    {read_params}

    Returns
    -------
    BeliefStore
        The store, rows in insertion order, with the recorded parameters.

    Raises
    ------
    StoreSchemaError
        A table is missing or a cell is not of its column's type (naming table, row and column).
    """
    if not present(conn):
        raise StoreSchemaError("beliefs: missing table 'belief_memories'")
    require_tables(conn, "beliefs", {"belief_memories": MEMORY_COLUMNS})
    have = set(table_columns(conn, "belief_memories"))
    cols = [c for c in COLUMNS if c in MEMORY_COLUMNS or c in have]  # older files: no policy fields
    check_cells(conn, "beliefs", "belief_memories", {c: _KINDS[c] for c in cols}, key="id")
    df = pd.read_sql_query(f"SELECT {', '.join(cols)} FROM belief_memories ORDER BY rowid", conn)
    df = df.astype(object).where(df.notna(), None)
    for col in ("evidence", "evidence_families"):
        if col not in df.columns:
            continue
        try:
            df[col] = [json.loads(v) if v is not None else [] for v in df[col]]
        except (TypeError, json.JSONDecodeError) as exc:
            raise StoreSchemaError(f"beliefs: column {col!r} is not JSON ({exc})") from None
    df["user_asserted"] = [bool(v) for v in df["user_asserted"]]
    if "eligible" in df.columns:
        df["eligible"] = [bool(v) for v in df["eligible"]]
    try:
        return BeliefStore(df, params=_params_from_meta(conn))
    except Exception as exc:
        raise StoreSchemaError(f"beliefs: invalid rows in 'belief_memories' ({exc})") from None


@fill_doc(check_equal_sections=_DOCS["check_equal_sections"])
def check_equal(a, b, params) -> None:
    """Compare what was given with what was read back from the export.

    {check_equal_sections}
    """
    ra, rb = _rows(_store(a)), _rows(_store(b))
    if ra != rb:
        n = next((i for i, (x, y) in enumerate(zip(ra, rb)) if x != y), min(len(ra), len(rb)))
        raise AssertionError(f"belief_memories rows differ after the round trip (first at row {n})")


@fill_doc(obj_params=_DOCS["obj_params"])
def default_params(obj):
    """The parameters to record for ``obj`` when none are given.

    {obj_params}

    Returns
    -------
    BeliefParams
        The store's own parameters.
    """
    return _store(obj).params


@fill_doc(model_sections=_DOCS["model_sections"])
def model(obj):
    """The embedding model of ``obj``'s vectors: None, this section holds no vectors.

    {model_sections}
    """
    return None
