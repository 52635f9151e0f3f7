"""Resumed and forked Claude Code sessions: one record, one session.

``claude --resume`` / ``--continue`` (and a fork) start a new transcript file
that first repeats the earlier session's records, same ``uuid`` and all
(public readers' notes, cited in ``data/ingest/README.md``), then goes on.
Read naively, each repeated prompt and call would count once per file, and
which file's copy counted (and so which session a row carries) would depend
on the order the files were read in.

:func:`scan` reads every file once beforehand and gives each record that
appears in more than one file a single owner, by a rule that does not
depend on the order files are read in:

1. a file whose name is the session id the record itself carries (the
   session that wrote it, when the copy kept its ``sessionId``);
2. else the file whose last record is earliest (the session the others
   resumed ended before they went on);
3. else the file's path, as text.

Every other copy is left out and counted once. :func:`scan` also gives the
order files are read in, by their first record's time, then their last
(a copy begins where its original began, and ends later), then path, so
that the files' names and the order a folder lists them change nothing.
"""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from pathlib import Path

__all__ = ["scan", "COPIED", "record_key"]

#: The skip reason of a record another file holds too.
COPIED = "record repeated from another session's transcript (resumed or forked: counted where first written)"


def record_key(rec: dict):
    """What identifies a record across files: its ``uuid``; for the records that carry none (queue
    operations, some attachments) their type, time and content together. None when neither exists.

    >>> record_key({"uuid": "u1"}), record_key({"type": "queue-operation", "timestamp": "t", "operation": "enqueue",
    ...                                          "content": "go"})
    ('u1', 'queue-operation|t|enqueue|"go"')
    """
    u = rec.get("uuid")
    if isinstance(u, str) and u:
        return u
    t, ts = rec.get("type"), rec.get("timestamp")
    if t in ("queue-operation", "attachment") and isinstance(ts, str) and ts:
        body = rec.get("content") if t == "queue-operation" else rec.get("attachment")
        return f"{t}|{ts}|{rec.get('operation', '')}|{json.dumps(body, sort_keys=True, ensure_ascii=False)}"
    return None


def scan(files: list[Path], lines) -> tuple[list[Path], dict]:
    """``(files in reading order, uuid → owning file)`` (only uuids that more than one file holds).

    ``lines(path, skipped)`` yields ``(line number, record)`` of a file as the
    reader does.
    """
    first: dict = {}
    last: dict = {}
    holders: dict = defaultdict(list)  # uuid → [(file, the record's sessionId)]
    for f in files:
        lo = hi = None
        seen = set()
        for _, rec in lines(f, Counter()):
            ts = rec.get("timestamp")
            if isinstance(ts, str) and ts:
                lo = ts if lo is None or ts < lo else lo
                hi = ts if hi is None or ts > hi else hi
            u = record_key(rec)
            if u is not None and u not in seen:
                seen.add(u)
                holders[u].append((f, rec.get("sessionId")))
        first[f], last[f] = lo, hi
    owners = {}
    for u, held in holders.items():
        if len({f for f, _ in held}) < 2:
            continue
        best = min(held, key=lambda fs: (fs[0].stem != fs[1], last[fs[0]] or "\uffff", str(fs[0])))
        owners[u] = best[0]
    order = sorted(files, key=lambda f: (first[f] or "\uffff", last[f] or "\uffff", str(f)))
    return order, owners
