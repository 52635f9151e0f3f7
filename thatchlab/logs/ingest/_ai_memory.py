"""An ai-memory database → the calibration logs.

ai-memory keeps its memories in ``memories`` (``id``, ``namespace``,
``source`` — the author role —, ``confidence``, ``created_at``, optionally
``atom_of``), links between them in ``memory_links``, the shadow samples of
its confidence derivation in ``confidence_shadow_observations`` and the
consumption ledger of its recalls in ``recall_observations`` (``recall_id``,
``memory_id``, ``retriever``, ``rank``, ``score``, ``consumed``,
``observed_at``). This adapter turns them into:

- ``observations``: the shadow observations (what the calibration report reads);
- ``outcomes``: the ledger, one row per recalled memory with ``consumed``;
- ``recalls``: the recall log, one row per ledger row, joined with the
  memory's signals: ``namespace``, ``source`` (``unknown`` when null),
  ``caller_confidence`` (the memory's stored ``confidence``, which for a
  decayed row is the decayed value), ``created_at``, ``is_atom``
  (``atom_of`` set, in its column or in the ``metadata`` JSON) and
  ``corroboration`` (the memory's outbound links).
"""

from __future__ import annotations

import contextlib
import json

import numpy as np
import pandas as pd

from thatchlab.core.errors import StoreSchemaError
from thatchlab.core.sqlite import connect_readonly, table_names
from thatchlab.logs.ai_memory import (
    read_memories,
    read_recall_observations,
    read_shadow_observations,
)
from thatchlab.logs.ingest._tools import IngestResult
from thatchlab.logs.recall import RECALL_COLUMNS, validate_recall_log

__all__ = ["ai_memory"]

_LINK_SOURCE = ("source_id", "from_id", "src_id", "source")


def _outbound_links(path) -> dict:
    with contextlib.closing(connect_readonly(path)) as conn:
        if "memory_links" not in table_names(conn):
            return {}
        cols = [r[1] for r in conn.execute("PRAGMA table_info(memory_links)")]
        src = next((c for c in _LINK_SOURCE if c in cols), None)
        if src is None:
            raise StoreSchemaError(f"{path}: table 'memory_links' has none of the columns {list(_LINK_SOURCE)}")
        return dict(conn.execute(f'SELECT "{src}", COUNT(*) FROM memory_links GROUP BY "{src}"').fetchall())


def _atom(memories: pd.DataFrame) -> np.ndarray:
    atom = np.zeros(len(memories), dtype=bool)
    if "atom_of" in memories.columns:
        atom |= memories["atom_of"].notna().to_numpy()
    if "metadata" in memories.columns:
        def from_meta(v):
            if not isinstance(v, str):
                return False
            with contextlib.suppress(ValueError):
                m = json.loads(v)
                return isinstance(m, dict) and m.get("atom_of") is not None
            return False
        atom |= memories["metadata"].map(from_meta).to_numpy(dtype=bool)
    return atom


def ai_memory(db) -> IngestResult:
    """The calibration logs of an ai-memory database (opened read-only).

    Returns
    -------
    IngestResult
        ``log`` is the recall log; ``tables`` holds ``recalls``,
        ``observations`` and ``outcomes`` (the ledger; empty when the
        database has none). Ledger rows whose memory is gone, or whose
        recall id, time or memory confidence is missing, are counted in
        ``skipped``.

    Examples
    --------
    >>> import sqlite3, tempfile, os
    >>> p = os.path.join(tempfile.mkdtemp(), "ai.db")
    >>> with sqlite3.connect(p) as c:
    ...     _ = c.executescript('''
    ...     CREATE TABLE memories (id TEXT PRIMARY KEY, namespace TEXT, source TEXT, confidence REAL,
    ...                            created_at TEXT, atom_of TEXT);
    ...     CREATE TABLE memory_links (source_id TEXT, target_id TEXT);
    ...     CREATE TABLE recall_observations (recall_id TEXT, memory_id TEXT, retriever TEXT, rank INTEGER,
    ...                                       score REAL, consumed INTEGER, observed_at TEXT);
    ...     INSERT INTO memories VALUES ('m1', 'work', 'user', 0.9, '2026-01-01T00:00:00Z', NULL),
    ...                                 ('m2', 'work', NULL, 0.6, '2026-01-02T00:00:00Z', 'm1');
    ...     INSERT INTO memory_links VALUES ('m1', 'm2'), ('m1', 'm3');
    ...     INSERT INTO recall_observations VALUES ('r1', 'm1', 'fts', 1, 2.5, 1, '2026-01-03T00:00:00Z'),
    ...         ('r1', 'm2', 'fts', 2, 1.5, 0, '2026-01-03T00:00:00Z'), ('r2', 'gone', 'fts', 1, 1.0, 0,
    ...         '2026-01-04T00:00:00Z');''')
    >>> res = ai_memory(p)
    >>> res.log[["memory_id", "source", "is_atom", "corroboration", "consumed"]].values.tolist()
    [['m1', 'user', False, 2, True], ['m2', 'unknown', True, 0, False]]
    >>> dict(res.skipped)
    {'ledger row of an unknown memory': 1}
    """
    result = IngestResult(log=None)
    read, skipped = result.read, result.skipped
    memories = read_memories(db)
    with contextlib.closing(connect_readonly(db)) as conn:
        has_shadow = "confidence_shadow_observations" in table_names(conn)
    obs = read_shadow_observations(db) if has_shadow else pd.DataFrame()
    ledger = read_recall_observations(db)
    links = _outbound_links(db)
    read["memories"], read["shadow observations"] = len(memories), len(obs)
    read["ledger rows"] = 0 if ledger is None else len(ledger)
    if ledger is None:
        skipped["no recall_observations ledger (older schema)"] += 1
        ledger = pd.DataFrame({c: pd.Series(dtype=object) for c in
                               ("recall_id", "memory_id", "retriever", "rank", "score", "consumed", "observed_at")})
    mem = memories.assign(is_atom=_atom(memories),
                          corroboration=memories["id"].map(lambda i: int(links.get(i, 0))).astype("int64"))
    keep = [c for c in ("id", "namespace", "source", "confidence", "created_at", "is_atom", "corroboration")
            if c in mem.columns]
    joined = ledger.merge(mem[keep].rename(columns={"id": "memory_id"}), on="memory_id", how="left",
                          suffixes=("", "_memory"), indicator=True)
    unknown = joined["_merge"] == "left_only"
    skipped["ledger row of an unknown memory"] += int(unknown.sum())
    joined = joined[~unknown]
    bad = joined["recall_id"].isna() | joined["observed_at"].isna() | joined["confidence"].isna() \
        | joined["created_at"].isna() if len(joined) else pd.Series(dtype=bool)
    for what, mask in (("recall id", joined["recall_id"].isna()), ("time", joined["observed_at"].isna()),
                       ("memory confidence", joined["confidence"].isna()),
                       ("memory created_at", joined["created_at"].isna())):
        n = int(mask.sum()) if len(joined) else 0
        if n:
            skipped[f"ledger row without a {what}"] += n
    joined = joined[~bad] if len(joined) else joined
    source = joined["source"] if "source" in joined.columns else pd.Series(None, index=joined.index)
    ns = joined["namespace"] if "namespace" in joined.columns else pd.Series(None, index=joined.index)
    recalls = pd.DataFrame({
        "ts": joined["observed_at"], "recall_id": joined["recall_id"].astype(object).map(str),
        "memory_id": joined["memory_id"].astype(object).map(str),
        "namespace": ns.astype(object).where(ns.notna(), "default"),
        "source": source.astype(object).where(source.notna() & (source.astype(str) != ""), "unknown"),
        "caller_confidence": pd.to_numeric(joined["confidence"], errors="coerce").clip(0.0, 1.0),
        "created_at": joined["created_at"], "is_atom": joined["is_atom"].astype(bool),
        "corroboration": joined["corroboration"].astype("int64"),
        "rank": pd.to_numeric(joined["rank"], errors="coerce"),
        "score": pd.to_numeric(joined["score"], errors="coerce"),
        "consumed": joined["consumed"].map(lambda v: None if v is None or v != v else bool(v)),
    }, columns=list(RECALL_COLUMNS))
    valid, rejected = validate_recall_log(recalls.reset_index(drop=True), source=str(db), errors="report")
    for col in rejected.get("column", []):
        skipped[f"invalid recall row ({col})"] += 1
    valid = valid.sort_values(["ts", "recall_id"], kind="stable").reset_index(drop=True)
    result.log = valid
    result.tables = {"recalls": valid, "observations": obs, "outcomes": ledger.reset_index(drop=True)}
    return result
