"""Dumps of mnemo's workspace events and recall telemetry → the anticipation streams.

The format is thatchlab's assumption
------------------------------------
No public source of mnemo's dump format exists: the columns below are the
ones thatchlab expects, not ones read off mnemo's code or documentation.
The events table is assumed to be called ``mnemo_event`` and to be dumped
as ``COPY ... TO`` or a notebook would write it (CSV with a header,
Parquet or JSON lines, one row a record). A dump whose columns carry other
names fails with :class:`~thatchlab.core.errors.LogValidationError` naming
the file, the missing column and every name accepted for it.

=============  ================================================================
stream column  accepted dump columns (the first one present wins)
=============  ================================================================
``ts``         required: ``occurred_at``, ``recalled_at``, ``ts``, ``created_at``
               or ``time``; ISO 8601 or Postgres text
               (``2026-01-05 09:00:00+00``); a naive time is read as UTC, counted
``workspace``  required: ``workspace_id`` or ``workspace``
``name``       events, required: ``name``, ``event`` or ``event_name``
``fact_id``    recalls, required: ``fact_id``, ``memory_id``, ``fact`` or ``key``
``session``    optional: ``session_id`` or ``session`` (empty text = none)
``entities``   optional: ``entities`` or ``entity_names``; a list, a JSON array,
               a Postgres array literal ``{a,b}`` or comma-separated text
               (unreadable: none, counted)
``record_id``  optional: events ``id`` or ``event_id``; recalls ``id`` (a
               ``recall_id`` names a recall, which may hold several facts)
=============  ================================================================

Rows without a readable time, a workspace or a name / fact are left out and
counted. When a row has no session, sessions are inferred per workspace
from the event and recall times together: a new session starts after
``session_gap`` of silence (30 minutes by default) and is named
``<workspace>:<first time>``.

Every row gets a ``record_id``: the dump's own id when it has one (a row
repeating an earlier row's id is left out, counted), else a content id
(:class:`~thatchlab.logs.ingest._tools.ContentIds`: a hash of the
workspace, the dumped session, the name or fact, the time and the
entities, with ``#2``, ``#3``... for repeats of the same content and
time). So a row's id never depends on the rows before it, and a later dump
grown into the same output (``thatchlab ingest mnemo ... --out``) keeps
every earlier row's id.
"""

from __future__ import annotations

import json
from collections import Counter

import numpy as np
import pandas as pd

from thatchlab.core.errors import LogValidationError
from thatchlab.logs._core import read_table
from thatchlab.logs.ingest._times import utc_text
from thatchlab.logs.ingest._tools import ContentIds, IngestResult
from thatchlab.logs.streams import validate_event_log, validate_recall_stream

__all__ = ["mnemo_events"]

_ALIASES = {"ts": ("occurred_at", "recalled_at", "ts", "created_at", "time"),
            "workspace": ("workspace_id", "workspace"), "session": ("session_id", "session"),
            "name": ("name", "event", "event_name"), "fact_id": ("fact_id", "memory_id", "fact", "key"),
            "entities": ("entities", "entity_names"), "record_id": ("id", "event_id")}
_RECALL_ID = ("id",)  # a recall's own id names a recall, which may hold several facts: not a row id


def _pick(df: pd.DataFrame, field: str, kind: str = "events"):
    names = _RECALL_ID if field == "record_id" and kind == "recalls" else _ALIASES[field]
    return next((c for c in names if c in df.columns), None)


def _entities(v, counter: Counter):
    if v is None or (isinstance(v, float) and np.isnan(v)):
        return []
    if isinstance(v, np.ndarray):
        v = v.tolist()
    if isinstance(v, str):
        s = v.strip()
        if s.startswith("["):
            try:
                v = json.loads(s)
            except (ValueError, RecursionError):
                counter["unreadable entities (read as none)"] += 1
                return []
        elif s.startswith("{") and s.endswith("}"):  # a Postgres array literal {a,b}
            v = [x.strip().strip('"') for x in s[1:-1].split(",")]
        else:
            v = s.split(",")
    if not isinstance(v, (list, tuple)):
        counter["unreadable entities (read as none)"] += 1
        return []
    return [str(x).strip() for x in v if str(x).strip()]


def _frame(path, kind: str, result: IngestResult) -> pd.DataFrame:
    raw = read_table(path)
    key = "name" if kind == "events" else "fact_id"
    cols = {f: _pick(raw, f, kind) for f in ("ts", "workspace", "session", key, "entities", "record_id")}
    missing = [f for f in ("ts", "workspace", key) if cols[f] is None]
    if missing:
        raise LogValidationError(f"{path}: the {kind} dump has no column for {missing}; expected one of "
                                 + "; ".join(f"{m}: {', '.join(_ALIASES[m])}" for m in missing), file=str(path),
                                 column=missing[0])
    result.read[f"{kind} rows"] += len(raw)
    out = pd.DataFrame({
        "ts": [utc_text(v, result.read, "time") for v in raw[cols["ts"]]],
        "workspace": raw[cols["workspace"]].map(lambda v: None if v is None or v != v else str(v)),
        key: raw[cols[key]].map(lambda v: None if v is None or v != v else str(v)),
        "entities": [_entities(v, result.read) for v in raw[cols["entities"]]] if cols["entities"] else
        [[] for _ in range(len(raw))],
        "session": raw[cols["session"]].map(lambda v: None if v is None or v != v or v == "" else str(v))
        if cols["session"] else None,
    })
    out["record_id"] = _record_ids(raw, cols, out, kind, key, result)
    drop = out["ts"].isna() | out["workspace"].isna() | out[key].isna()
    if drop.any():
        result.skipped[f"{kind} row without a time, workspace or {key}"] += int(drop.sum())
    dup = out["record_id"].duplicated() & ~drop
    if dup.any():
        result.skipped[f"{kind} row repeating an id (first kept)"] += int(dup.sum())
    return out[~(drop | dup)].reset_index(drop=True)



def _id_text(v):
    """An id cell as text: None for a missing or empty one, whole floats without ``.0``."""
    if v is None or v is pd.NA or (isinstance(v, float) and v != v):
        return None
    if isinstance(v, (float, np.floating)) and float(v).is_integer():
        return str(int(v))
    s = str(v).strip()
    return s or None


def _record_ids(raw, cols, out, kind, key, result) -> list:
    """The dump's own id where it has one, else a content id (what, where, when and how many
    such rows came before), so a row's id never depends on the rows around it."""
    own = [_id_text(v) for v in raw[cols["record_id"]]] if cols["record_id"] else [None] * len(out)
    made = ContentIds(f"mnemo-{kind}")
    raw_session = out["session"] if cols["session"] else [None] * len(out)
    ids = []
    for rid, ts, ws, name, sess, ents in zip(own, out["ts"], out["workspace"], out[key], raw_session,
                                             out["entities"]):
        ids.append(rid if rid is not None else made(ws, sess, name, ts, "\x1e".join(ents)))
    n = sum(r is None for r in own)
    if n:
        result.read[f"{kind} rows without an id (content ids made)"] += n
    return ids


def _naive_utc(ts: pd.Series) -> pd.Series:
    return pd.to_datetime(ts, utc=True, format="ISO8601").dt.tz_convert(None)


def _sessions(frames, gap: pd.Timedelta) -> None:
    """Fill missing sessions per workspace by the silence rule, over all frames' times together."""
    need = [f for f in frames if f["session"].isna().any()]
    if not need:
        return
    times = pd.concat([pd.DataFrame({"ws": f["workspace"], "t": _naive_utc(f["ts"])})
                       for f in frames], ignore_index=True).sort_values(["ws", "t"], kind="stable")
    starts = {}
    for ws, g in times.groupby("ws", sort=False):
        t = g["t"].to_numpy()
        new = np.r_[True, np.diff(t) > gap.to_timedelta64()]
        starts[ws] = t[new]
    for f in need:
        t = _naive_utc(f["ts"]).to_numpy()
        names = []
        for ws, ti in zip(f["workspace"], t):
            s = starts[ws][np.searchsorted(starts[ws], ti, side="right") - 1]
            names.append(f"{ws}:{pd.Timestamp(s).strftime('%Y-%m-%dT%H:%M:%SZ')}")
        f["session"] = f["session"].where(f["session"].notna(), pd.Series(names, index=f.index))


def mnemo_events(path, recalls=None, *, session_gap="30min") -> IngestResult:
    """The event stream of a ``mnemo_event`` dump and, with ``recalls``, the recall stream.

    Parameters
    ----------
    path : str or path-like
        The ``mnemo_event`` dump (CSV, Parquet or JSON lines).
    recalls : str or path-like, optional
        The recall telemetry dump.
    session_gap : str or pandas.Timedelta, default="30min"
        The silence after which an inferred session ends (rows without a
        session only; sessions are inferred per workspace from both dumps' times).

    Returns
    -------
    IngestResult
        ``log`` is the event stream; ``tables`` holds ``events`` and, when
        ``recalls`` is given, ``recalls``. Both have a ``record_id`` on every
        row (the dump's id, else a content id: see the module's notes).

    Raises
    ------
    LogValidationError
        A dump is missing, unreadable, or lacks a required column (the
        message names the file, the column and the names accepted for it).

    Examples
    --------
    >>> import tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (d / "ev.csv").write_text("name,workspace_id,occurred_at,entities\\n"
    ...     "deploy.success,w1,2026-01-05 09:00:00+00,\\"prod,billing\\"\\n"
    ...     "incident.opened,w1,2026-01-05 13:00:00+00,\\n")
    >>> _ = (d / "rc.csv").write_text("fact_id,workspace_id,recalled_at\\nrunbook,w1,2026-01-05 09:10:00+00\\n")
    >>> res = mnemo_events(d / "ev.csv", d / "rc.csv")
    >>> res.tables["events"][["session", "entities"]].values.tolist()
    [['w1:2026-01-05T09:00:00Z', ['prod', 'billing']], ['w1:2026-01-05T13:00:00Z', []]]
    >>> res.tables["recalls"]["session"].tolist()
    ['w1:2026-01-05T09:00:00Z']
    >>> bool(res.tables["events"]["record_id"].str.startswith("mnemo-events:").all())
    True
    """
    result = IngestResult(log=None)
    gap = pd.Timedelta(session_gap)
    frames = {"events": _frame(path, "events", result)}
    if recalls is not None:
        frames["recalls"] = _frame(recalls, "recalls", result)
    inferred = sum(int(f["session"].isna().sum()) for f in frames.values())
    _sessions(list(frames.values()), gap)
    if inferred:
        result.read["rows with an inferred session"] += inferred
    out = {}
    for name, f in frames.items():
        f = f.sort_values("ts", kind="stable").reset_index(drop=True)
        cols = ["ts", "workspace", "session", "name" if name == "events" else "fact_id", "entities", "record_id"]
        check = validate_event_log if name == "events" else validate_recall_stream
        valid, rejected = check(f[cols], source=str(path if name == "events" else recalls), errors="report")
        for col in rejected.get("column", []):
            result.skipped[f"invalid {name} row ({col})"] += 1
        out[name] = valid
    result.log = out["events"]
    result.tables = out
    return result
