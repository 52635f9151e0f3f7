"""A dump of mnemo's ``mnemo_event`` table and its recall telemetry → the anticipation streams.

mnemo records workspace events in ``mnemo_event`` (``name``,
``workspace_id``, ``occurred_at``; some deployments also store a session id
and the entities an event mentions) and logs every fact its agent recalls.
A dump of either (CSV, Parquet or JSON lines, as ``COPY ... TO`` or a
notebook would write it) becomes the event stream (``ts, workspace, session,
name, entities``) and the recall stream (``ts, workspace, session, fact_id,
entities``).

Column names are matched loosely (``workspace_id``/``workspace``,
``occurred_at``/``recalled_at``/``ts``, ``session_id``/``session``,
``fact_id``/``memory_id``/``fact``). ``entities`` may be a list, JSON text
or comma-separated text. When the dump has no session column, sessions are
inferred per workspace from the event and recall times together: a new
session starts after ``session_gap`` of silence (30 minutes by default), and
is named ``<workspace>:<first time>``.
"""

from __future__ import annotations

import json
from collections import Counter

import numpy as np
import pandas as pd

from thatchlab.logs._core import read_table
from thatchlab.logs.ingest._times import utc_text
from thatchlab.logs.ingest._tools import IngestResult
from thatchlab.logs.streams import validate_event_log, validate_recall_stream

__all__ = ["mnemo_events"]

_ALIASES = {"ts": ("occurred_at", "recalled_at", "ts", "created_at", "time"),
            "workspace": ("workspace_id", "workspace"), "session": ("session_id", "session"),
            "name": ("name", "event", "event_name"), "fact_id": ("fact_id", "memory_id", "fact", "key"),
            "entities": ("entities", "entity_names"), "record_id": ("id", "event_id", "recall_id")}


def _pick(df: pd.DataFrame, field: str):
    return next((c for c in _ALIASES[field] if c in df.columns), None)


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
            except ValueError:
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
    cols = {f: _pick(raw, f) for f in ("ts", "workspace", "session", key, "entities", "record_id")}
    missing = [f for f in ("ts", "workspace", key) if cols[f] is None]
    if missing:
        from thatchlab.core.errors import LogValidationError

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
        "record_id": raw[cols["record_id"]].map(str) if cols["record_id"] else None,
    })
    drop = out["ts"].isna() | out["workspace"].isna() | out[key].isna()
    if drop.any():
        result.skipped[f"{kind} row without a time, workspace or {key}"] += int(drop.sum())
    return out[~drop].reset_index(drop=True)


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

    Returns
    -------
    IngestResult
        ``log`` is the event stream; ``tables`` holds ``events`` and, when
        ``recalls`` is given, ``recalls``. Both keep a ``record_id`` column
        when the dump has an id column.

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
        cols = ["ts", "workspace", "session", "name" if name == "events" else "fact_id", "entities"]
        cols += ["record_id"] if f["record_id"].notna().any() else []
        check = validate_event_log if name == "events" else validate_recall_stream
        valid, rejected = check(f[cols], source=str(path if name == "events" else recalls), errors="report")
        for col in rejected.get("column", []):
            result.skipped[f"invalid {name} row ({col})"] += 1
        out[name] = valid
    result.log = out["events"]
    result.tables = out
    return result
