"""An ai-memory database → the calibration logs.

ai-memory (alphaonedev/ai-memory-mcp) keeps its memories in ``memories``
(``id``, ``namespace``, ``source`` — the author role —, ``confidence``,
``created_at``, ``atom_of``, ``metadata``...), links between them in
``memory_links``, the shadow samples of its confidence derivation in
``confidence_shadow_observations`` (an integer ``id`` each) and the
consumption ledger of its recalls in ``recall_observations`` (``recall_id``,
``memory_id``, ``retriever``, ``rank``, ``score``, ``consumed``,
``observed_at``; its primary key is ``(recall_id, memory_id)``). This
adapter turns them into:

- ``recalls``: the recall log, one row per ledger row, joined with the
  memory's signals: ``namespace``, ``source``, ``caller_confidence`` (the
  memory's stored ``confidence``, which for a decayed row is the decayed
  value), ``created_at``, ``is_atom`` (``atom_of`` set, in its column or in
  the ``metadata`` JSON) and ``corroboration`` (the memory's outbound links);
- ``observations``: the shadow observations as stored (what the calibration
  report reads);
- ``outcomes``: the ledger as stored.

Every row of the three tables has a stable ``record_id``: the ledger's key
``<recall_id>/<memory_id>`` (each part percent-escaped) for ``recalls`` and
``outcomes``, the observation's ``id`` for ``observations`` (a content hash
when a table has no such column), and a ``ts`` (``observed_at``), so
``thatchlab ingest ai-memory DB --out f.jsonl`` run again grows ``f`` by it:
rows the database no longer holds (a ledger pruned) are kept.

Values are read as stored, never changed in silence:

- ``consumed`` is 0 or 1 (``INTEGER NOT NULL DEFAULT 0`` in ai-memory's
  schema): a NULL or another value raises
  :class:`~thatchlab.core.errors.StoreSchemaError` naming the file, table,
  row and column (:func:`thatchlab.logs.read_recall_observations`);
- a memory ``confidence`` outside [0, 1] (ai-memory's triggers enforce the
  range on new writes only, so older rows may hold one) is not clipped: its
  ledger rows are left out of ``recalls``, counted, and a warning names the
  memory; a NULL confidence, a NULL time or created_at likewise; text where
  a number belongs raises;
- shadow observations are kept as stored; those with a confidence outside
  [0, 1] are counted under ``read``;
- a NULL ``namespace`` reads as ``global`` and a NULL ``source`` as
  ``unknown`` (ai-memory's schema declares both NOT NULL), each counted;
- times are parsed, not compared as text: ``...T12:00:00.123Z`` (SQLite's
  ``strftime`` default), ``+00:00`` with up to 9 fraction digits (chrono's
  RFC 3339) and plain ``Z`` all read to the nanosecond;
- a ``memories`` table without ``created_at`` raises
  :class:`~thatchlab.core.errors.StoreSchemaError` naming the file and the
  column.
"""

from __future__ import annotations

import contextlib
import functools
import json
import sqlite3
from urllib.parse import quote

import numpy as np
import pandas as pd

from thatchlab.core.errors import StoreSchemaError
from thatchlab.core.sqlite import connect_readonly, table_names
from thatchlab.logs.ai_memory import (
    LEDGER_COLUMNS,
    read_memories,
    read_recall_observations,
    read_shadow_observations,
)
from thatchlab.logs.ingest._tools import ContentIds, IngestResult
from thatchlab.logs.recall import RECALL_COLUMNS, validate_recall_log

__all__ = ["ai_memory", "ledger_record_id"]

_LINK_SOURCE = ("source_id", "from_id", "src_id", "source")


def ledger_record_id(recall_id, memory_id) -> str:
    """The record id of a ledger row: its key ``(recall_id, memory_id)``, each part percent-escaped.

    >>> ledger_record_id("r1", "m1"), ledger_record_id("a/b", "c")
    ('r1/m1', 'a%2Fb/c')
    """
    return f"{quote(str(recall_id), safe='')}/{quote(str(memory_id), safe='')}"


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
            with contextlib.suppress(ValueError, RecursionError):
                m = json.loads(v)
                return isinstance(m, dict) and m.get("atom_of") is not None
            return False
        atom |= memories["metadata"].map(from_meta).to_numpy(dtype=bool)
    return atom


def _null(v) -> bool:
    return v is None or v is pd.NA or v is pd.NaT or (isinstance(v, float) and v != v)


def _ledger_ids(ledger: pd.DataFrame) -> list:
    other = ContentIds("ai-memory-ledger")
    out = []
    for rec in ledger[list(LEDGER_COLUMNS)].astype(object).itertuples(index=False):
        if _null(rec.recall_id) or _null(rec.memory_id):
            out.append(other(*("" if _null(v) else v for v in rec)))
        else:
            out.append(ledger_record_id(rec.recall_id, rec.memory_id))
    return out


def _observation_ids(obs: pd.DataFrame) -> list:
    other = ContentIds("ai-memory-shadow")
    has_id = "id" in obs.columns
    cols = [c for c in ("memory_id", "namespace", "source", "observed_at_text", "caller_confidence",
                        "derived_confidence", "signals") if c in obs.columns]
    out = []
    for i, rec in enumerate(obs[cols].astype(object).itertuples(index=False)):
        v = obs["id"].iloc[i] if has_id else None
        if not _null(v):
            out.append(str(int(v)) if isinstance(v, (int, float, np.integer, np.floating)) and float(v).is_integer()
                       else str(v))
        else:
            out.append(other(*("" if _null(x) else x for x in rec)))
    return out


def _unique(df: pd.DataFrame, what: str, result: IngestResult) -> pd.DataFrame:
    dup = df["record_id"].duplicated()
    if dup.any():
        result.skipped[f"repeated {what} (first kept)"] += int(dup.sum())
        df = df[~dup.to_numpy()]
    return df.reset_index(drop=True)


def _sqlite_errors_named(fn):
    """``fn`` with SQLite's own errors (a damaged file) raised as a StoreSchemaError naming the database."""
    @functools.wraps(fn)
    def run(db, *args, **kwargs):
        try:
            return fn(db, *args, **kwargs)
        except (sqlite3.DatabaseError, UnicodeDecodeError) as exc:  # text that is not UTF-8 among others
            raise StoreSchemaError(f"{db}: not a readable ai-memory database ({type(exc).__name__}: "
                                   f"{' '.join(str(exc).split())[:200]})") from None
    return run


@_sqlite_errors_named
def ai_memory(db) -> IngestResult:
    """The calibration logs of an ai-memory database (opened read-only).

    Parameters
    ----------
    db : str or path-like
        The database file.

    Returns
    -------
    IngestResult
        ``log`` is the recall log; ``tables`` holds ``recalls``,
        ``observations`` and ``outcomes`` (the ledger; empty when the
        database has none), each with ``record_id`` and ``ts``. Ledger rows
        whose memory is gone, or whose recall id, time, memory confidence or
        created_at is missing, or whose confidence is outside [0, 1], are
        counted in ``skipped``.

    Raises
    ------
    StoreSchemaError
        The file is not an SQLite database, lacks ``memories`` or its
        ``created_at`` column, holds a ``consumed`` other than 0/1, text
        where a number belongs, or an unreadable time.

    Examples
    --------
    >>> import sqlite3, tempfile, os
    >>> p = os.path.join(tempfile.mkdtemp(), "ai.db")
    >>> with sqlite3.connect(p) as c:
    ...     _ = c.executescript('''
    ...     CREATE TABLE memories (id TEXT PRIMARY KEY, namespace TEXT NOT NULL DEFAULT 'global',
    ...         source TEXT NOT NULL DEFAULT 'api', confidence REAL NOT NULL DEFAULT 1.0,
    ...         created_at TEXT NOT NULL, atom_of TEXT);
    ...     CREATE TABLE memory_links (source_id TEXT, target_id TEXT);
    ...     CREATE TABLE recall_observations (recall_id TEXT NOT NULL, memory_id TEXT NOT NULL,
    ...         retriever TEXT NOT NULL, rank INTEGER NOT NULL, score REAL NOT NULL,
    ...         consumed INTEGER NOT NULL DEFAULT 0, observed_at TEXT NOT NULL, PRIMARY KEY (recall_id, memory_id));
    ...     INSERT INTO memories VALUES ('m1', 'work', 'user', 0.9, '2026-01-01T00:00:00Z', NULL),
    ...                                 ('m2', 'work', 'claude', 0.6, '2026-01-02T00:00:00+00:00', 'm1'),
    ...                                 ('m3', 'work', 'user', 5.0, '2026-01-02T00:00:00Z', NULL);
    ...     INSERT INTO memory_links VALUES ('m1', 'm2'), ('m1', 'm3');
    ...     INSERT INTO recall_observations VALUES ('r1', 'm1', 'fts5', 1, 2.5, 1, '2026-01-03T00:00:00.123Z'),
    ...         ('r1', 'm2', 'fts5', 2, 1.5, 0, '2026-01-03T00:00:00.123Z'),
    ...         ('r1', 'm3', 'fts5', 3, 1.0, 0, '2026-01-03T00:00:00.123Z'),
    ...         ('r2', 'gone', 'hnsw', 1, 1.0, 0, '2026-01-04T00:00:00Z');''')
    >>> res = ai_memory(p)
    >>> res.log[["record_id", "source", "is_atom", "corroboration", "consumed"]].values.tolist()
    [['r1/m1', 'user', False, 2, True], ['r1/m2', 'claude', True, 0, False]]
    >>> sorted(res.skipped.items())
    [('ledger row of an unknown memory', 1), ('ledger row whose memory confidence is outside [0, 1] (refused, not clipped)', 1)]
    """
    result = IngestResult(log=None)
    memories, obs, ledger, links = _read_database(db, result.read)
    if ledger is None:
        result.skipped["no recall_observations ledger (older schema)"] += 1
        ledger = pd.DataFrame({c: pd.Series(dtype=object) for c in LEDGER_COLUMNS})
    ledger, obs = _keyed(ledger, obs, result)
    joined = _with_memories(ledger, memories, links, result.skipped)
    joined = _without_unusable(joined, db, result)
    recalls = _recall_frame(joined, result.read)
    valid, rejected = validate_recall_log(recalls.reset_index(drop=True), source=str(db), errors="report")
    for col in rejected.get("column", []):
        result.skipped[f"invalid recall row ({col})"] += 1
    valid = valid.sort_values(["ts", "recall_id"], kind="stable").reset_index(drop=True)
    result.log = valid
    result.tables = {"recalls": valid, "observations": obs, "outcomes": ledger}
    return result


def _read_database(db, read) -> tuple:
    """``(memories, shadow observations, ledger or None, outbound links)`` of the database, counted in ``read``."""
    memories = read_memories(db)
    if "created_at" not in memories.columns:
        raise StoreSchemaError(f"{db}: table 'memories' lacks column 'created_at' (ai-memory's schema declares it "
                               "TEXT NOT NULL); the recall log needs each memory's creation time")
    with contextlib.closing(connect_readonly(db)) as conn:
        has_shadow = "confidence_shadow_observations" in table_names(conn)
    obs = read_shadow_observations(db) if has_shadow else pd.DataFrame(
        {c: pd.Series(dtype=object) for c in ("memory_id", "observed_at")})
    ledger = read_recall_observations(db)
    links = _outbound_links(db)
    read["memories"], read["shadow observations"] = len(memories), len(obs)
    read["ledger rows"] = 0 if ledger is None else len(ledger)
    return memories, obs, ledger, links


def _keyed(ledger: pd.DataFrame, obs: pd.DataFrame, result: IngestResult) -> tuple:
    """The ledger and the observations with ``record_id`` and ``ts``, each id once; out-of-range confidences counted."""
    read = result.read
    ledger = ledger.assign(record_id=_ledger_ids(ledger), ts=ledger["observed_at"])
    ledger = _unique(ledger, "ledger row (same recall_id and memory_id)", result)
    obs = obs.assign(record_id=_observation_ids(obs), ts=obs["observed_at"])
    obs = _unique(obs, "shadow observation id", result)
    for col in ("caller_confidence", "derived_confidence"):
        if col in obs.columns:
            c = pd.to_numeric(obs[col], errors="coerce")
            n = int((c.notna() & ~c.between(0.0, 1.0)).sum())
            if n:
                read[f"shadow observations with {col} outside [0, 1] (kept as stored)"] += n
    return ledger, obs


def _with_memories(ledger: pd.DataFrame, memories: pd.DataFrame, links: dict, skipped) -> pd.DataFrame:
    """The ledger joined with its memories' signals; rows of an unknown memory are counted and dropped."""
    mem = memories.assign(is_atom=_atom(memories),
                          corroboration=memories["id"].map(lambda i: int(links.get(i, 0))).astype("int64"))
    keep = [c for c in ("id", "namespace", "source", "confidence", "created_at", "is_atom", "corroboration")
            if c in mem.columns]
    joined = ledger.merge(mem[keep].rename(columns={"id": "memory_id"}), on="memory_id", how="left",
                          suffixes=("", "_memory"), indicator=True)
    unknown = (joined["_merge"] == "left_only").to_numpy()
    if unknown.any():
        skipped["ledger row of an unknown memory"] += int(unknown.sum())
    return joined[~unknown]


def _without_unusable(joined: pd.DataFrame, db, result: IngestResult) -> pd.DataFrame:
    """The joined rows minus those lacking a field or with a confidence outside [0, 1], each counted once."""
    conf = pd.to_numeric(joined["confidence"], errors="coerce").astype("float64")
    out_of_range = (conf.notna() & ~conf.between(0.0, 1.0)).to_numpy()
    checks = (("ledger row without a recall id", joined["recall_id"].isna().to_numpy()),
              ("ledger row without a time", joined["observed_at"].isna().to_numpy()),
              ("ledger row whose memory has no confidence (NULL)", conf.isna().to_numpy()),
              ("ledger row whose memory confidence is outside [0, 1] (refused, not clipped)", out_of_range),
              ("ledger row whose memory has no created_at", joined["created_at"].isna().to_numpy()))
    bad = np.zeros(len(joined), dtype=bool)
    for what, mask in checks:
        mask = mask & ~bad  # each row counted once, under its first reason
        if mask.any():
            result.skipped[what] += int(mask.sum())
        bad |= mask
    if out_of_range.any():
        worst = joined.loc[out_of_range, ["memory_id", "confidence"]].drop_duplicates("memory_id")
        names = ", ".join(f"{m!r} ({c!r})" for m, c in worst.head(5).itertuples(index=False))
        result.warnings.append(
            f"{db}: {len(worst)} memory(ies) store a confidence outside [0, 1] ({names}"
            f"{', ...' if len(worst) > 5 else ''}); their {int(out_of_range.sum())} ledger row(s) were left out "
            "of the recall log, not clipped (ai-memory's range triggers check new writes only)")
    return joined[~bad]


def _recall_frame(joined: pd.DataFrame, read) -> pd.DataFrame:
    """The recall log's columns from the usable joined rows; a missing source or namespace is defaulted and counted."""
    source = joined["source"] if "source" in joined.columns else pd.Series(None, index=joined.index, dtype=object)
    ns = joined["namespace"] if "namespace" in joined.columns else pd.Series(None, index=joined.index, dtype=object)
    no_source = (source.isna() | (source.astype(str) == "")).to_numpy()
    if no_source.any():
        read["ledger rows whose memory has no source (read as 'unknown')"] += int(no_source.sum())
    no_ns = (ns.isna() | (ns.astype(str) == "")).to_numpy()
    if no_ns.any():
        read["ledger rows whose memory has no namespace (read as 'global', ai-memory's default)"] += int(no_ns.sum())
    return pd.DataFrame({
        "ts": joined["observed_at"], "recall_id": joined["recall_id"].astype(object).map(str),
        "memory_id": joined["memory_id"].astype(object).map(str),
        "namespace": ns.astype(object).where(~no_ns, "global"),
        "source": source.astype(object).where(~no_source, "unknown"),
        "caller_confidence": pd.to_numeric(joined["confidence"]).astype("float64"),
        "created_at": joined["created_at"], "is_atom": joined["is_atom"].astype(bool),
        "corroboration": joined["corroboration"].astype("int64"),
        "rank": pd.to_numeric(joined["rank"], errors="coerce"),
        "score": pd.to_numeric(joined["score"], errors="coerce"),
        "consumed": joined["consumed"].map(bool),
        "record_id": joined["record_id"],
    }, columns=list(RECALL_COLUMNS) + ["record_id"])
