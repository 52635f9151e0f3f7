"""An omi memories export → the memory log.

omi's ``/v3/memories`` returns one record per memory: ``id``, ``content``,
``category``, ``created_at``, ``updated_at`` and, with the belief model on,
``belief_class``, ``half_life_days``, ``user_asserted``, ``valid_to``,
``last_corroborated_at``, ``corroboration_count``, ``superseded_by`` and the
server's own reading ``currency`` / ``currency_band`` as of ``as_of``.

An export is a snapshot, not a history, so the evidence events are
*inferred*:

- each memory is a ``write`` at ``created_at``;
- ``corroboration_count = n`` becomes ``n`` ``restated`` events: the last at
  ``last_corroborated_at`` (``updated_at`` when absent), the others spread
  evenly between ``created_at`` and it (the export keeps only the count and
  the last time); their evidence source ids are ``<id>#restated<k>``;
- ``superseded_by = other`` becomes a ``contradicted`` event from ``other``
  on this memory, at ``other``'s ``created_at`` when ``other`` is in the
  export (else at ``valid_to``, else ``updated_at``), with authority 2 when
  ``other`` was user-asserted, else 1;
- ``deleted: true`` becomes a ``delete`` at ``updated_at``;
- ``currency`` / ``currency_band`` become a ``read`` at ``as_of`` (else
  ``updated_at``) carrying omi's values in columns of their own, so a
  belief replay's currency at that read can be compared with omi's.

``category`` and ``record_id`` (the memory id, plus the event for inferred
rows) are kept as extra columns.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from pathlib import Path

import pandas as pd

from thatchlab.core.errors import LogValidationError
from thatchlab.core.params.belief import BELIEF_CLASSES
from thatchlab.logs.ingest._times import utc_text
from thatchlab.logs.ingest._tools import IngestResult
from thatchlab.logs.memory import MEMORY_LOG_COLUMNS, validate_memory_log

__all__ = ["omi_memories", "OMI_COLUMNS"]

#: Extra columns of the memory log an omi export gives.
OMI_COLUMNS = ("category", "currency", "currency_band", "record_id")
_ORDER = {"write": 0, "restated": 1, "contradicted": 2, "delete": 3, "read": 4}


def _records(path) -> list:
    p = Path(os.path.expanduser(str(path)))
    if not p.is_file():
        raise LogValidationError(f"{path}: no such omi export", file=str(path))
    try:
        text = p.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as exc:
        raise LogValidationError(f"{path}: line 1: not UTF-8 text ({exc.reason})", file=str(path), row=0) from None
    try:
        data = json.loads(text) if text.strip() else []
    except ValueError as exc:
        lines = [ln for ln in text.splitlines() if ln.strip()]
        try:  # JSON lines, one memory a line
            return [json.loads(ln) for ln in lines]
        except ValueError:
            raise LogValidationError(f"{path}: line {getattr(exc, 'lineno', 1)}: not valid JSON "
                                     f"({getattr(exc, 'msg', exc)}); expected a JSON array of memories",
                                     file=str(path), row=getattr(exc, "lineno", 1) - 1) from None
    if isinstance(data, dict):
        for key in ("memories", "items", "data", "results"):
            if isinstance(data.get(key), list):
                return data[key]
        raise LogValidationError(f"{path}: expected a JSON array of memories (or an object with 'memories')",
                                 file=str(path))
    if not isinstance(data, list):
        raise LogValidationError(f"{path}: expected a JSON array of memories", file=str(path))
    return data


def _num(v):
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) and v == v else None


def _bool(v):
    if isinstance(v, bool):
        return v
    if isinstance(v, str) and v.lower() in ("true", "false"):
        return v.lower() == "true"
    return None


def omi_memories(path) -> IngestResult:
    """The memory log of an omi ``/v3/memories`` export (a JSON array, an object with
    ``memories``, or JSON lines); what is inferred is listed in the module's notes.

    Examples
    --------
    >>> import json, tempfile, pathlib
    >>> f = pathlib.Path(tempfile.mkdtemp()) / "memories.json"
    >>> _ = f.write_text(json.dumps([
    ...   {"id": "a", "content": "Lives in Lisbon", "category": "core", "created_at": "2026-01-01T00:00:00Z",
    ...    "updated_at": "2026-02-01T00:00:00Z", "belief_class": "state", "corroboration_count": 2,
    ...    "last_corroborated_at": "2026-01-21T00:00:00Z", "superseded_by": "b"},
    ...   {"id": "b", "content": "Lives in Porto", "created_at": "2026-02-01T00:00:00Z",
    ...    "updated_at": "2026-02-01T00:00:00Z", "currency": 0.93, "currency_band": "fresh",
    ...    "as_of": "2026-02-10T00:00:00Z"}]))
    >>> res = omi_memories(f)
    >>> res.log[["memory_id", "kind", "target_memory_id"]].values.tolist()
    [['a', 'write', None], ['a#restated1', 'restated', 'a'], ['a#restated2', 'restated', 'a'], ['b', 'write', None], ['b', 'contradicted', 'a'], ['b', 'read', None]]
    >>> str(res.log["ts"][1].date()), res.log["currency_band"].iloc[-1]
    ('2026-01-11', 'fresh')
    """
    recs = _records(path)
    result = IngestResult(log=None)
    read, skipped = result.read, result.skipped
    by_id = {}
    for r in recs:
        if isinstance(r, dict) and isinstance(r.get("id"), (str, int)) and not isinstance(r.get("id"), bool):
            by_id.setdefault(str(r["id"]), r)
    rows = []

    def row(ts, mid, kind, **kw):
        out = {c: None for c in MEMORY_LOG_COLUMNS + OMI_COLUMNS}
        out.update(ts=ts, memory_id=mid, kind=kind, **kw)
        rows.append(out)

    seen = set()
    for r in recs:
        read["records"] += 1
        if not isinstance(r, dict):
            skipped["record that is not an object"] += 1
            continue
        mid = str(r["id"]) if isinstance(r.get("id"), (str, int)) and not isinstance(r.get("id"), bool) else None
        content = r.get("content")
        created = utc_text(r.get("created_at"), read, "time")
        if mid is None:
            skipped["memory without an id"] += 1
            continue
        if mid in seen:
            skipped["duplicate memory id"] += 1
            continue
        seen.add(mid)
        if not isinstance(content, str) or not content.strip():
            skipped["memory without content"] += 1
            continue
        if created is None:
            skipped["memory without a readable created_at"] += 1
            continue
        updated = utc_text(r.get("updated_at"), read, "time") or created
        cls = r.get("belief_class")
        if cls is not None and cls not in BELIEF_CLASSES:
            read[f"belief_class {cls!r} read as unclassified"] += 1
            cls = None
        hl = _num(r.get("half_life_days"))
        asserted = _bool(r.get("user_asserted"))
        row(created, mid, "write", text=content, belief_class=cls, user_asserted=asserted,
            half_life_days=hl if hl is not None and hl > 0 else None,
            valid_to=utc_text(r.get("valid_to"), read, "time"),
            category=r.get("category") if isinstance(r.get("category"), str) else None, record_id=mid)
        read["memories"] += 1
        n = r.get("corroboration_count")
        n = int(n) if isinstance(n, (int, float)) and not isinstance(n, bool) and n == n and n > 0 else 0
        if n:
            last = pd.Timestamp(utc_text(r.get("last_corroborated_at"), read, "time") or updated)
            first = pd.Timestamp(created)
            if last < first:
                read["last_corroborated_at before created_at (placed at created_at)"] += 1
                last = first
            for k in range(1, n + 1):
                t = first + (last - first) * k / n
                row(t.strftime("%Y-%m-%dT%H:%M:%S.%fZ"), f"{mid}#restated{k}", "restated", target_memory_id=mid,
                    record_id=f"{mid}#restated{k}")
            read["inferred restatements"] += n
        sup = r.get("superseded_by")
        if isinstance(sup, (str, int)) and not isinstance(sup, bool) and str(sup) != mid:
            other = by_id.get(str(sup))
            ts = utc_text(other.get("created_at"), Counter(), "time") if other else None
            ts = ts or utc_text(r.get("valid_to"), Counter(), "time") or updated
            auth = 2.0 if other is not None and _bool(other.get("user_asserted")) else 1.0
            row(ts, str(sup), "contradicted", target_memory_id=mid, authority=auth,
                record_id=f"{mid}#superseded")
            read["inferred supersessions"] += 1
        if _bool(r.get("deleted")):
            row(updated, mid, "delete", record_id=f"{mid}#deleted")
        cur = _num(r.get("currency"))
        band = r.get("currency_band") if isinstance(r.get("currency_band"), str) else None
        if cur is not None or band is not None:
            row(utc_text(r.get("as_of"), read, "time") or updated, mid, "read", currency=cur, currency_band=band,
                record_id=f"{mid}#as_of")
            read["omi currency readings"] += 1
    df = pd.DataFrame(rows, columns=list(MEMORY_LOG_COLUMNS + OMI_COLUMNS))
    if len(df):
        df["_o"] = df["kind"].map(_ORDER)
        df["_t"] = pd.to_datetime(df["ts"], utc=True, format="ISO8601")
        df = df.sort_values(["_t", "_o"], kind="stable").drop(columns=["_o", "_t"]).reset_index(drop=True)
    valid, rejected = validate_memory_log(df, source=str(path), errors="report")
    for kind, col in zip(rejected.get("kind", []), rejected.get("column", [])):
        skipped[f"invalid {kind} row ({col})"] += 1
    valid["currency"] = pd.to_numeric(valid["currency"], errors="coerce").astype("float64")
    result.log = valid
    result.tables = {"memories": valid}
    return result
