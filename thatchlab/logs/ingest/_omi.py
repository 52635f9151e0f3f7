"""An omi ``/v3/memories`` export → the memory log.

What an export is
-----------------
omi's ``GET /v3/memories`` answers with a bare JSON array of its
``MemoryDB`` rows (no wrapper object; the first page holds up to 5000
rows). This adapter reads that array, JSON lines (one row a line) and an
object holding the rows under ``memories`` (the shape of omi's batch
responses). Every row has ``id``, ``content``, ``category``,
``created_at`` and ``updated_at``; with omi's belief model switched on
(``MEMORY_BELIEF_MODEL_ENABLED``) it also carries the read-side overlay
``belief_class``, ``half_life_days``, ``currency``, ``currency_band``,
``as_of`` and, on newer servers, ``belief_computed_at``.

========================  ===========================================================
omi field                 memory log
========================  ===========================================================
``id``                    ``memory_id`` (and ``record_id`` of the ``write`` row)
``content``               ``text`` of the ``write`` row at ``created_at``
``category``              ``category`` (an extra column, as given)
``manually_added``        ``user_asserted``
``invalid_at``            ``valid_to`` (omi's valid-to; its store calls it ``valid_to``)
``kind``                  ``memory_kind`` (``fact``, ``document``, ``trigger``)
``memory_tier``           ``tier``
``subject_scope``         ``subject_scope``
``belief_class``          ``belief_class`` (a class omi's model does not have: null, counted)
``half_life_days``        ``half_life_days``, only when it is not the class's prior (below)
``superseded_by``         ``superseded_by`` (an extra column) and, maybe, an event (below)
``as_of``                 a ``restated`` event when later than ``created_at`` (below)
``belief_computed_at``    ``ts`` of the ``read`` row
``currency``              ``currency`` of the ``read`` row (an extra column)
``currency_band``         ``currency_band`` of the ``read`` row (an extra column)
========================  ===========================================================

What can be recovered
---------------------
An export is a snapshot: each row as it stood when it was read. From it:

- the memory itself: a ``write`` at ``created_at`` with its class,
  assertion, tier, kind and valid-to;
- omi's evidence clock: ``as_of`` is the last time the row was evidenced
  (the latest of its evidence capture times and its last corroboration).
  When it is later than ``created_at`` it becomes a ``restated`` event at
  ``as_of``, so that a replay's evidence clock equals omi's. This event
  stands for "evidenced again by then", not for one restatement;
- omi's reading: ``currency`` was computed at ``belief_computed_at`` (the
  request time), not at ``as_of``, so the ``read`` row goes at
  ``belief_computed_at``, and a belief replay of the log
  (:func:`thatchlab.replay.run_belief`) gives that row omi's currency,
  to the precision the file was written at, whenever the server uses omi's
  published half-lives and formula (compare ``run_belief(log).events``
  with the ``read`` rows' ``currency``, which are in the same order).
  ``currency_band`` is omi's (``current``, ``fading``, ``history``); a band
  outside those, or one that does not match its currency, is counted;
- ``half_life_days``: the overlay gives the half-life the row decays with.
  When it equals the prior of the row's class in omi's table (which is
  :class:`~thatchlab.core.params.belief.BeliefParams`' default) it is left
  null, so the class prior applies and a replay under other priors moves
  it; otherwise it is the row's own stored half-life;
- ``superseded_by`` names the memory that superseded this one, but not
  when. It is kept in its column, and when that memory is in the export a
  ``contradicted`` event from it on this row is *inferred* at its
  ``created_at`` (assuming omi supersedes a row when the claim that
  contradicts it is admitted; the response does not say), or at
  this row's ``created_at`` when that is later, with a null authority
  (which supersedes, as the response says it did). When it is not in the
  export no event is made (counted). Either way the currency is unchanged:
  supersession moves the row's status, not its currency. The event's time
  is a guess, and it ends the row's exposure
  (:func:`thatchlab.belief.exposure_segments`), so a half-life fitted on
  superseded rows rests on it.
- Both inferred events (``as_of`` and ``superseded_by``) carry
  ``source_authority`` 5, the top of omi's source order: the export shows
  that production applied them, and under release ``17fecf7`` an event from
  a less authoritative source writes nothing, so a replay must not let the
  unknown source of an inferred event stop it (a manually added row ranks 5).

What cannot be recovered
------------------------
- The evidence history: how many times a row was restated or contradicted
  and when. ``corroboration_count`` and ``last_corroborated_at`` live in
  omi's store, not in the response, so no events are made from counts; a
  file that carries them anyway (or ``valid_to``, ``user_asserted`` and
  other store-side fields) has them ignored and counted under ``read`` as
  fields the response does not carry.
- Whether ``invalid_at`` was a date named when the memory was written or
  the time it was later resolved or superseded: it is the ``write`` row's
  ``valid_to`` either way. Currency after it is 0.0 both ways, but the
  replay treats the row as a named-date claim (which
  :func:`~thatchlab.belief.exposure_segments` leaves out).
- The read time of a currency from a server older than
  ``belief_computed_at``: such rows get no ``read`` row (counted).
- A currency for unclassified rows: with ``belief_computed_at`` and a null
  ``currency`` omi says it does not know; the belief model would read such
  a row as 1.0, so no ``read`` row is made (counted).
- ``as_of`` earlier than ``created_at``: the replay's clock cannot be set
  before the write, so a replay does not reproduce that row's currency
  (counted).
- Deleted memories (not in the response; a row with the older field
  ``deleted: true`` is left out, counted), reviews, contradictions that did
  not supersede, other reads, and whether a belief still held
  (``still_true`` is null throughout).
- The text of locked memories: omi cuts ``content`` of ``is_locked`` rows
  to 70 characters and ``...`` (counted).

Record ids are the memory id for its ``write``, ``<id>#as_of@<time>``,
``<id>#read@<time>`` and ``<id>#superseded_by:<other>`` for the others,
so a later export grown into the same log (``thatchlab ingest omi ...
--out`` again) adds its new reads and evidence times beside the earlier
ones: successive exports build a history.

Sources of these facts (omi's public repository BasedHardware/omi):
``backend/routers/memories.py`` (the route), ``backend/models/memories.py``
(``MemoryDB``), ``backend/utils/memory/canonical_memory_adapter.py``
(``invalid_at = valid_to``, ``manually_added = user_asserted``) and
``backend/utils/memory/belief_model.py`` (the overlay, its formula and
bands); see ``data/ingest/README.md``.
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path

import pandas as pd

from thatchlab.core.errors import LogValidationError
from thatchlab.core.params.belief import BELIEF_BANDS, BELIEF_CLASSES, BELIEF_PRIORS
from thatchlab.logs.ingest._times import utc_text
from thatchlab.logs.ingest._tools import IngestResult
from thatchlab.logs.memory import MEMORY_LOG_COLUMNS, validate_memory_log

__all__ = ["omi_memories", "OMI_COLUMNS", "OMI_CATEGORIES"]

#: Extra columns of the memory log an omi export gives.
OMI_COLUMNS = ("category", "superseded_by", "currency", "currency_band", "record_id")
#: omi's memory categories: the primary ones, then the legacy ones older rows may carry.
OMI_CATEGORIES = ("interesting", "system", "manual", "workflow", "core", "hobbies", "lifestyle", "interests",
                  "habits", "work", "skills", "learnings", "other", "auto")
#: Fields of omi's store (not of the /v3/memories response): ignored when a file carries them.
NOT_IN_RESPONSE = ("corroboration_count", "last_corroborated_at", "last_evidenced_at", "valid_to", "valid_from",
                   "user_asserted", "captured_at", "confidence", "status")
#: Fields of the response this adapter reads or knowingly leaves aside.
_KNOWN = frozenset((
    "id", "uid", "content", "category", "visibility", "tags", "created_at", "updated_at", "memory_id",
    "conversation_id", "user_review", "scoring", "app_id", "data_protection_level", "reviewed", "manually_added",
    "edited", "is_locked", "kg_extracted", "is_baseline", "evidence", "memory_tier", "layer", "tier", "valid_at",
    "invalid_at", "superseded_by", "primary_capture_device", "capture_device_ids", "headline", "predicate",
    "arguments", "subject_entity_id", "subject_attribution", "object_entity_ids", "qualifiers",
    "capture_confidence", "veracity", "uncertainty_reasons", "durability", "ledger_schema_version", "kind",
    "subject_scope", "slot", "body", "curation_weight", "trigger_condition", "intent_backed", "write_reason",
    "canonical_memory_id", "ledger_status", "is_read", "is_dismissed", "deleted", "memory_category",
    "belief_class", "half_life_days", "currency", "currency_band", "as_of", "belief_computed_at"))
_ORDER = {"write": 0, "restated": 1, "contradicted": 2, "read": 3}
#: The source authority of the events the export shows production applied (the top of omi's
#: 0-5 order), so that a replay under release 17fecf7, where a weaker source writes nothing,
#: applies them as production did.
_APPLIED = 5


def _loads(text: str, path, line: int | None = None):
    """``json.loads(text)``; JSON nested too deeply to parse is a LogValidationError naming the file."""
    try:
        return json.loads(text)
    except RecursionError:
        where = f"{path}: line {line}" if line else str(path)
        raise LogValidationError(f"{where}: JSON nested too deeply to read; expected omi's /v3/memories "
                                 "(memory objects of flat fields)", file=str(path),
                                 expected="JSON of memory objects") from None


def _records(path) -> list:
    p = Path(os.path.expanduser(str(path)))
    if p.is_dir():
        raise LogValidationError(f"{path}: is a directory; expected the JSON file of omi's /v3/memories",
                                 file=str(path))
    if not p.is_file():
        raise LogValidationError(f"{path}: no such omi export", file=str(path))
    try:
        text = p.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as exc:
        raise LogValidationError(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start}); expected the "
                                 "JSON of omi's /v3/memories", file=str(path)) from None
    if not text.strip():
        return []
    try:
        data = _loads(text, path)
    except LogValidationError:
        raise
    except ValueError as exc:
        lines = text.splitlines()
        first = next((ln for ln in lines if ln.strip()), "")
        try:
            json_lines = isinstance(_loads(first, path), dict)
        except LogValidationError:
            raise
        except ValueError:
            json_lines = False
        if not json_lines:
            raise LogValidationError(f"{path}: line {exc.lineno}: not valid JSON ({exc.msg}); expected a JSON "
                                     "array of memories, JSON lines or an object with 'memories'",
                                     file=str(path), row=exc.lineno - 1, expected="JSON") from None
        out = []
        for n, ln in enumerate(lines, 1):
            if not ln.strip():
                continue
            try:
                out.append(_loads(ln, path, n))
            except LogValidationError:
                raise
            except ValueError as e:
                raise LogValidationError(f"{path}: line {n}: not valid JSON ({e.msg}); expected one memory "
                                         "object a line", file=str(path), row=n - 1, expected="JSON") from None
        return out
    if isinstance(data, dict):
        if isinstance(data.get("memories"), list):
            return data["memories"]
        if "id" in data and "content" in data:  # JSON lines holding a single memory
            return [data]
        raise LogValidationError(f"{path}: expected a JSON array of memories (what /v3/memories returns) or an "
                                 f"object with a 'memories' array; got an object with keys {sorted(data)[:6]}",
                                 file=str(path), expected="a JSON array of memories")
    if not isinstance(data, list):
        raise LogValidationError(f"{path}: expected a JSON array of memories, got {type(data).__name__}",
                                 file=str(path), expected="a JSON array of memories")
    return data



def _num(v):
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return None
    try:
        f = float(v)
    except OverflowError:  # an integer too large for a float
        return None
    return f if math.isfinite(f) else None


def _bool(v):
    if isinstance(v, bool):
        return v
    if isinstance(v, str) and v.lower() in ("true", "false"):
        return v.lower() == "true"
    return None


def _id(v):
    return str(v) if isinstance(v, (str, int)) and not isinstance(v, bool) and str(v) != "" else None


def _text(v):
    return v if isinstance(v, str) and v != "" else None


def omi_memories(path) -> IngestResult:
    """The memory log of an omi ``/v3/memories`` export (a JSON array, JSON lines or an object
    with ``memories``); what is read, inferred and lost is listed in the module's notes.

    Parameters
    ----------
    path : str or path-like
        The export file.

    Returns
    -------
    IngestResult
        ``log`` (also ``tables["memories"]``) is the memory log with the extra
        columns :data:`OMI_COLUMNS`. Rows without an id, content or a readable
        ``created_at``, repeated ids and rows marked deleted are counted in
        ``skipped``; ignored fields, inferred events and read rows not made
        are counted in ``read``.

    Raises
    ------
    LogValidationError
        The file is missing, not UTF-8, not JSON (naming the line) or not an
        array of memories.

    Examples
    --------
    >>> import json, tempfile, pathlib
    >>> f = pathlib.Path(tempfile.mkdtemp()) / "memories.json"
    >>> _ = f.write_text(json.dumps([
    ...   {"id": "a", "content": "Lives in Lisbon", "category": "system", "created_at": "2026-01-01T00:00:00Z",
    ...    "updated_at": "2026-02-01T00:00:00Z", "belief_class": "state", "half_life_days": 30.0,
    ...    "as_of": "2026-01-21T00:00:00Z", "superseded_by": "b", "invalid_at": "2026-02-01T00:00:00Z",
    ...    "belief_computed_at": "2026-02-10T00:00:00Z", "currency": 0.0, "currency_band": "history"},
    ...   {"id": "b", "content": "Lives in Porto", "category": "manual", "manually_added": True,
    ...    "created_at": "2026-02-01T00:00:00Z", "updated_at": "2026-02-01T00:00:00Z", "belief_class": "state",
    ...    "half_life_days": 30.0, "as_of": "2026-02-01T00:00:00Z",
    ...    "belief_computed_at": "2026-02-10T00:00:00Z", "currency": 0.8122523963562355,
    ...    "currency_band": "current"}]))
    >>> res = omi_memories(f)
    >>> res.log[["memory_id", "kind", "target_memory_id"]].values.tolist()
    [['a', 'write', None], ['a', 'restated', None], ['b', 'write', None], ['b', 'contradicted', 'a'], ['a', 'read', None], ['b', 'read', None]]
    >>> res.log.loc[res.log["kind"] == "read", "currency"].tolist()
    [0.0, 0.8122523963562355]
    """
    result = IngestResult(log=None)
    kept, created_of = _usable_records(_records(path), result.read, result.skipped)
    rows = []
    for mid, created, r in kept:
        result.read["memories"] += 1
        rows.extend(_memory_rows(mid, created, r, created_of, result.read))
    df = pd.DataFrame(rows, columns=list(MEMORY_LOG_COLUMNS + OMI_COLUMNS))
    if len(df):
        df["_o"] = df["kind"].map(_ORDER)
        df["_t"] = pd.to_datetime(df["ts"], utc=True, format="ISO8601")
        df = df.sort_values(["_t", "_o"], kind="stable").drop(columns=["_o", "_t"]).reset_index(drop=True)
    valid, rejected = validate_memory_log(df, source=str(path), errors="report")
    for kind, col in zip(rejected.get("kind", []), rejected.get("column", [])):
        result.skipped[f"invalid {kind} row ({col})"] += 1
    valid["currency"] = pd.to_numeric(valid["currency"], errors="coerce").astype("float64")
    result.log = valid
    result.tables = {"memories": valid}
    return result


def _usable_records(recs, read, skipped) -> tuple:
    """``(kept, created_of)``: ``(id, created_at, record)`` of each memory the log can use, and its creation times.

    Unknown fields are counted; records that are not objects, lack an id,
    repeat one, are marked deleted, lack content or a readable created_at are
    counted and left out.
    """
    created_of, seen, kept = {}, set(), []
    for r in recs:
        read["records"] += 1
        if not isinstance(r, dict):
            skipped["record that is not a JSON object"] += 1
            continue
        for key in r:
            if key in NOT_IN_RESPONSE:
                read[f"field /v3/memories does not carry (ignored): {key}"] += 1
            elif key not in _KNOWN:
                read[f"field not in omi's MemoryDB (ignored): {key}"] += 1
        mid = _id(r.get("id"))
        if mid is None:
            skipped["memory without an id"] += 1
            continue
        if mid in seen:
            skipped["repeated memory id (first kept)"] += 1
            continue
        seen.add(mid)
        if _bool(r.get("deleted")):
            skipped["memory marked deleted (older omi field 'deleted')"] += 1
            continue
        if _text(r.get("content")) is None or not r["content"].strip():
            skipped["memory without content"] += 1
            continue
        created = utc_text(r.get("created_at"), read, "time")
        if created is None:
            skipped["memory without a readable created_at"] += 1
            continue
        created_of[mid] = created
        kept.append((mid, created, r))
    return kept, created_of


def _row(ts, mid, kind, **kw) -> dict:
    out = {c: None for c in MEMORY_LOG_COLUMNS + OMI_COLUMNS}
    out.update(ts=ts, memory_id=mid, kind=kind, **kw)
    return out


def _memory_rows(mid, created, r, created_of, read) -> list:
    """The rows one memory makes, in order: its write, a restatement at ``as_of``, the
    contradiction of the memory it supersedes, and omi's read of its currency."""
    sup = _id(r.get("superseded_by"))
    sup = None if sup == mid else sup
    rows = [_write_row(mid, created, r, sup, read)]
    as_of = utc_text(r.get("as_of"), read, "time")
    if as_of is not None:
        if pd.Timestamp(as_of) > pd.Timestamp(created):
            rows.append(_row(as_of, mid, "restated", source_authority=_APPLIED, record_id=f"{mid}#as_of@{as_of}"))
            read["restated at as_of (omi's evidence clock, later than created_at)"] += 1
        elif pd.Timestamp(as_of) < pd.Timestamp(created):
            read["as_of before created_at (the evidence clock cannot precede the write)"] += 1
    if sup is not None:
        if sup in created_of:
            at = max(created_of[sup], created, key=pd.Timestamp)
            rows.append(_row(at, sup, "contradicted", target_memory_id=mid, source_authority=_APPLIED,
                             record_id=f"{mid}#superseded_by:{sup}"))
            read["supersessions (contradicted at the superseding memory's created_at, inferred)"] += 1
        else:
            read["superseded_by a memory not in the export (no event)"] += 1
    read_row = _read_row(mid, r, read)
    if read_row is not None:
        rows.append(read_row)
    return rows


def _write_row(mid, created, r, sup, read) -> dict:
    """The memory's write row; a belief class, half-life or category omi would not hold is counted."""
    cls = r.get("belief_class")
    if cls == "":
        cls = None
    if cls is not None and cls not in BELIEF_CLASSES:
        read[f"belief_class {cls!r} omi does not have (read as unclassified)"] += 1
        cls = None
    hl = r.get("half_life_days")
    hl_num = _num(hl)
    if hl is not None and (hl_num is None or hl_num <= 0):
        read["half_life_days that is not a number of days > 0 (read as none)"] += 1
        hl_num = None
    if hl_num is not None and cls is not None and BELIEF_PRIORS[cls] == hl_num:
        hl_num = None  # the class's prior: left to the prior, so other priors can move it
    category = r.get("category")
    if category is not None and category not in OMI_CATEGORIES:
        read[f"category not in omi's enum (kept as given): {category!r}"] += 1
    if _bool(r.get("is_locked")):
        read["locked memories (content cut to 70 characters by omi)"] += 1
    return _row(created, mid, "write", text=r["content"], belief_class=cls, user_asserted=_bool(r.get("manually_added")),
                half_life_days=hl_num, valid_to=utc_text(r.get("invalid_at"), read, "time"),
                tier=_text(r.get("memory_tier")), memory_kind=_text(r.get("kind")),
                subject_scope=_text(r.get("subject_scope")), category=_text(category), superseded_by=sup,
                record_id=mid)


def _read_row(mid, r, read):
    """The row of omi's currency at ``belief_computed_at``, or None when the export lacks either."""
    cur = _num(r.get("currency"))
    if r.get("currency") is not None and cur is None:
        read["currency that is not a finite number (read as null)"] += 1
    band = r.get("currency_band")
    computed = utc_text(r.get("belief_computed_at"), read, "time")
    if cur is None:
        if computed is not None:
            read["memories omi read without a currency (unclassified: no read row)"] += 1
        return None
    if computed is None:
        read["currency without belief_computed_at (older server, read time unknown: no read row)"] += 1
        return None
    if band is not None and band not in BELIEF_BANDS:
        read[f"currency_band omi does not use (kept as given): {band!r}"] += 1
    elif band is not None and band != _band(cur):
        read["currency_band that is not omi's band of its currency (kept as given)"] += 1
    read["read rows (omi's currency at belief_computed_at)"] += 1
    return _row(computed, mid, "read", currency=cur, currency_band=_text(band) if isinstance(band, str) else None,
                record_id=f"{mid}#read@{computed}")


def _band(c: float) -> str:
    return "current" if c > 0.5 else ("fading" if c >= 0.25 else "history")
