"""opencode's newer message table, ``session_message``, read as ``message``/``part`` rows.

Newer opencode versions store a session's history as one row per message
in ``session_message`` (``id``, ``session_id``, ``type``, ``seq``,
``time_created``, ``time_updated``, ``data``: the message's JSON without
its ``id`` and ``type``), where older ones kept a ``message`` row and its
``part`` rows. A one-time backfill converts a session that has only the
older rows into ``session_message`` rows and leaves the older rows in place
(anomalyco/opencode ``packages/core/src/session/message.ts`` @08e3e1f9 for
the row types, ``message-backfill.ts`` @9a7198e6 for the conversion;
oxdingzg/miao ``packages/core/src/session/backfill.ts`` @480daf90 for the
"sessions with no projection yet" rule).

The message types and what ingest makes of them:

==================  ============================================================
``type``            read as
==================  ============================================================
``user``            a user message whose typed text is ``data.text`` (the
                    backfill keeps only text parts that were neither
                    synthetic nor ignored)
``synthetic``       text a plugin or the host added (``data.text``): a
                    synthetic text part of the user message before it, where
                    thatch's nudge is looked for
``assistant``       an assistant message whose ``data.content`` holds its
                    ``tool`` entries (``name``, ``callID`` or ``id``,
                    ``state``: ``status``, ``input``, ``content`` text blocks,
                    ``error.message``; ``time.ran``)
``compaction``,     counted, no row (a summary, the user's ``!`` shell
``shell``           command)
``system``,         read, no row (context the host sent, agent and model
``agent-switched``, changes)
``model-switched``
==================  ============================================================

Any other type is counted under ``skipped``. A session that holds
``session_message`` rows is read from them only: its ``message``/``part``
rows are the backfill's source, counted, not read twice.
"""

from __future__ import annotations

import sqlite3

__all__ = ["V2_COLUMNS", "V2_TYPES", "read_session_messages", "schema_version"]

#: The columns read of ``session_message``.
V2_COLUMNS = ("id", "session_id", "type", "seq", "time_created", "data")
#: Message types read (the rest counted).
V2_TYPES = ("user", "synthetic", "assistant", "compaction", "shell", "system", "agent-switched", "model-switched")
_NO_ROW = {"compaction": "compaction summary", "shell": "shell command (the user's ! command: not a prompt)"}


def _text(content) -> str | None:
    if not isinstance(content, list):
        return content if isinstance(content, str) else None
    texts = [c.get("text") for c in content if isinstance(c, dict) and c.get("type") == "text"
             and isinstance(c.get("text"), str)]
    return "\n".join(texts) if texts else None


def _tool_part(entry: dict, created) -> dict:
    """A ``tool`` content entry as the ``part`` opencode's older rows held."""
    state = entry.get("state") if isinstance(entry.get("state"), dict) else {}
    time = entry.get("time") if isinstance(entry.get("time"), dict) else {}
    out = {"status": state.get("status"), "input": state.get("input")}
    text = _text(state.get("content"))
    if state.get("status") == "completed":
        out["output"] = text if text is not None else ""
    elif state.get("status") == "error":
        err = state.get("error")
        out["error"] = err.get("message") if isinstance(err, dict) else err if isinstance(err, str) else text
    start = time.get("ran", time.get("created", created))
    if start is not None:
        out["time"] = {"start": start}
    call = entry.get("callID") if isinstance(entry.get("callID"), str) and entry["callID"] else entry.get("id")
    return {"type": "tool", "tool": entry.get("name"), "callID": call, "state": out}


def read_session_messages(conn, db, merged, result, skip_session, plain_id, load_json) -> set:
    """Read every ``session_message`` row into ``merged`` as messages and parts; the sessions read.

    ``skip_session(sid)`` says whether a session's messages are left out (a
    sub-agent's, when not read); ``plain_id`` and ``load_json`` are the
    store's own checks.
    """
    sessions: set = set()
    last_user: dict = {}  # session → the id of its latest user message (synthetic text joins it)
    rows = conn.execute("SELECT id, session_id, type, seq, time_created, data FROM session_message "
                        "ORDER BY session_id, seq, id")
    for mid, sid, mtype, seq, created, data in rows:
        where = f"{db}: session_message {mid!r}"
        plain_id(mid, where, "message id", db)
        plain_id(sid, where, "session id", db)
        sessions.add(sid)
        result.read["session_message rows"] += 1
        if skip_session(sid):
            continue
        obj = load_json(data, where, result, " of its data", file=db)
        if obj is None:
            continue
        if mtype in _NO_ROW:
            result.skipped[_NO_ROW[mtype]] += 1
            continue
        if mtype not in V2_TYPES:
            result.skipped[f"session_message of type {mtype!r}"] += 1
            continue
        t = obj.get("time") if isinstance(obj.get("time"), dict) else {}
        at = t.get("created", created)
        if mtype == "user":
            text = obj.get("text")
            msg = {"id": mid, "sessionID": sid, "role": "user", "time": {"created": at}}
            if merged.message(mid, at, msg):
                last_user[sid] = mid
                if isinstance(text, str):
                    merged.part(mid, f"{mid}_0000", {"type": "text", "text": text, "id": f"{mid}_0000",
                                                     "sessionID": sid, "messageID": mid})
        elif mtype == "synthetic":
            owner = last_user.get(sid)
            text = obj.get("text")
            if owner is None or not isinstance(text, str):
                result.skipped["synthetic message without a prompt before it"] += 1
                continue
            pid = f"{owner}_s{int(seq) if isinstance(seq, int) else 0:06d}"
            merged.part(owner, pid, {"type": "text", "synthetic": True, "text": text, "id": pid, "sessionID": sid,
                                     "messageID": owner})
        elif mtype == "assistant":
            msg = {"id": mid, "sessionID": sid, "role": "assistant", "time": {"created": at}}
            if not merged.message(mid, at, msg):
                continue
            content = obj.get("content") if isinstance(obj.get("content"), list) else []
            for i, entry in enumerate(content):
                if isinstance(entry, dict) and entry.get("type") == "tool":
                    pid = f"{mid}_{i:04d}"
                    merged.part(mid, pid, {**_tool_part(entry, at), "id": pid, "sessionID": sid, "messageID": mid})
        else:
            result.read["session_message rows that are not prompts or calls (system, agent or model switch)"] += 1
    return sessions


def schema_version(conn) -> str:
    """What a database says of its schema version: drizzle's latest applied migration, else SQLite's
    ``user_version``."""
    try:
        row = conn.execute("SELECT COUNT(*), MAX(created_at), MAX(hash) FROM __drizzle_migrations").fetchone()
        if row and row[0]:
            return f"{row[0]} migrations applied, the latest created at {row[1]}"
    except sqlite3.DatabaseError:  # no migrations table: the pragma
        pass
    return f"user_version {conn.execute('PRAGMA user_version').fetchone()[0]}"
