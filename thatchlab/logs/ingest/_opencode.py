"""opencode session storage → the interaction log.

opencode (before its SQLite storage) keeps a tree of JSON files under
``~/.local/share/opencode/storage``: ``session/<project id>/<session id>.json``
(``id``, ``title``, ``directory``, ``parentID`` for a subagent's session,
``time.created``), ``message/<session id>/<message id>.json`` (``id``,
``sessionID``, ``role`` ``user``/``assistant``, ``time.created`` in epoch
milliseconds) and ``part/<message id>/<part id>.json`` (some versions nest
``part/<session id>/<message id>/``). A part has a ``type``: ``text`` parts
hold text (``synthetic: true`` when the host, not the user, wrote it),
``tool`` parts a call (``tool``, ``callID``, ``state`` with ``status``,
``input``, ``output`` or ``error`` and ``time.start``); others (reasoning,
step boundaries, snapshots, patches, files) carry nothing the log needs.

thatch's opencode plugin names its tools ``thatch_<tool>`` and injects the
nudge blocks as synthetic text parts of the user message they precede.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from pathlib import Path

import pandas as pd

from thatchlab.core.errors import LogValidationError
from thatchlab.core.progress import progress
from thatchlab.logs.ingest._nudge import has_nudge, split_prompt
from thatchlab.logs.ingest._tools import (
    THATCH_TOOLS,
    IngestResult,
    fill_store,
    finish_log,
    message_row,
    tool_row,
)

__all__ = ["opencode"]

_BAR_MESSAGES = 200


def _load(path: Path, skipped: Counter):
    """One JSON file as an object; a broken file raises, naming it (its records cannot be guessed)."""
    try:
        text = path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as exc:
        raise LogValidationError(f"{path}: line 1: not UTF-8 text ({exc.reason})", file=str(path), row=0,
                                 expected="a UTF-8 JSON file") from None
    if not text.strip():
        skipped["empty file"] += 1
        return None
    try:
        obj = json.loads(text)
    except (ValueError, RecursionError) as exc:
        line = getattr(exc, "lineno", 1)
        raise LogValidationError(f"{path}: line {line}: not valid JSON ({getattr(exc, 'msg', exc)})",
                                 file=str(path), row=line - 1, expected="one JSON object") from None
    if not isinstance(obj, dict):
        skipped["file that is not a JSON object"] += 1
        return None
    return obj


def _ms(value):
    """Epoch milliseconds (opencode's times) as ISO text, else None."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    try:
        return pd.Timestamp(int(value), unit="ms", tz="UTC").strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    except (ValueError, OverflowError, OSError):
        return None


def _storage(path) -> Path:
    p = Path(os.path.expanduser(str(path)))
    for cand in (p, p / "storage"):
        if (cand / "message").is_dir():
            return cand
    raise LogValidationError(f"{path}: not an opencode storage folder (expected message/ and part/ in it, "
                             "as in ~/.local/share/opencode/storage)", file=str(path),
                             expected="an opencode storage folder")


def _parts(root: Path, session: str, message: str) -> list[Path]:
    for d in (root / "part" / message, root / "part" / session / message):
        if d.is_dir():
            return sorted(d.glob("*.json"))
    return []


def opencode(path, *, subagents: bool = False, engine: str | None = None,
             project_store: str | None = None) -> IngestResult:
    """The interaction log of an opencode storage folder.

    Parameters
    ----------
    path : the storage folder (``~/.local/share/opencode/storage``) or the folder holding it.
    subagents : also read sessions with a ``parentID`` (subagent runs).
    engine, project_store : as for :func:`~thatchlab.logs.ingest.claude_code`
        (``"cwd"`` takes the session's ``directory``).

    Returns
    -------
    IngestResult
        ``log``: one ``message`` row per user message with typed text (the
        non-synthetic text parts joined by newlines; ``record_id`` the
        message id; the nudge from its synthetic parts), one row per
        ``thatch_<tool>`` part (``record_id`` its ``callID``,
        ``logged_reply`` its output, or its error text), in time order.

    Examples
    --------
    >>> import json, tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> def put(rel, obj):
    ...     f = d / rel; f.parent.mkdir(parents=True, exist_ok=True); f.write_text(json.dumps(obj))
    >>> put("session/p1/ses_1.json", {"id": "ses_1", "directory": "/home/dev/app", "time": {"created": 0}})
    >>> put("message/ses_1/msg_1.json", {"id": "msg_1", "sessionID": "ses_1", "role": "user",
    ...     "time": {"created": 1767600000000}})
    >>> put("part/msg_1/prt_1.json", {"id": "prt_1", "type": "text", "text": "rename the config loader"})
    >>> put("part/msg_1/prt_2.json", {"id": "prt_2", "type": "text", "synthetic": True,
    ...     "text": "[thatch] Situational behaviors\\n- [0.50 conf, 0 tests] When renaming code: consider grep for callers"})
    >>> put("message/ses_1/msg_2.json", {"id": "msg_2", "sessionID": "ses_1", "role": "assistant",
    ...     "time": {"created": 1767600005000}})
    >>> put("part/msg_2/prt_3.json", {"id": "prt_3", "type": "tool", "tool": "thatch_behavior_list",
    ...     "callID": "call_1", "state": {"status": "completed", "input": {}, "output": 'No behaviors in "app".'}})
    >>> res = opencode(d)
    >>> res.log[["kind", "text", "logged_reply"]].values.tolist()
    [['message', 'rename the config loader', None], ['behavior_list', None, 'No behaviors in "app".']]
    >>> res.log["surfaced"][0]
    ['grep for callers']
    """
    if engine not in (None, "prediction", "behavior"):
        raise LogValidationError(f"engine: expected None, 'prediction' or 'behavior', got {engine!r}")
    root = _storage(path)
    result = IngestResult(log=None)
    read, skipped = result.read, result.skipped
    sessions = {}
    for f in sorted((root / "session").rglob("*.json")) if (root / "session").is_dir() else ():
        info = _load(f, skipped)
        if info is not None:
            sessions[str(info.get("id") or f.stem)] = info
    read["sessions"] = len(sessions)
    messages = []
    for sdir in sorted(d for d in (root / "message").iterdir() if d.is_dir()):
        info = sessions.get(sdir.name, {})
        if info.get("parentID") and not subagents:
            skipped["subagent session"] += 1
            continue
        for f in sorted(sdir.glob("*.json")):
            msg = _load(f, skipped)
            if msg is not None:
                messages.append((sdir.name, f, msg))
    rows = []
    bar = progress(messages, total=len(messages), desc="opencode messages",
                   enabled=None if len(messages) > _BAR_MESSAGES else False)
    for session, f, msg in bar:
        read["messages"] += 1
        mid = str(msg.get("id") or f.stem)
        created = _ms((msg.get("time") or {}).get("created")) if isinstance(msg.get("time"), dict) else None
        directory = sessions.get(session, {}).get("directory")
        cwd = directory if isinstance(directory, str) else None
        parts = [p for p in (_load(pf, skipped) for pf in _parts(root, session, mid)) if p is not None]
        read["parts"] += len(parts)
        role = msg.get("role")
        if role == "user":
            typed, hooks = [], []
            for p in parts:
                if p.get("type") != "text" or not isinstance(p.get("text"), str):
                    continue
                head, hook = split_prompt(p["text"]) if not p.get("synthetic") else ("", p["text"])
                if hook and has_nudge(hook):
                    hooks.append(hook)
                if not p.get("synthetic") and head.strip():
                    typed.append(head)
            if not typed:
                skipped["user message without typed text"] += 1
                continue
            if created is None:
                skipped["message without a time"] += 1
                continue
            read["prompts"] += 1
            row = message_row("\n".join(typed), hooks, ts=created, session=session, record_id=mid, cwd=cwd,
                              engine=engine)
            read["nudges"] += row["logged_nudge"] is not None
            rows.append(row)
        elif role == "assistant":
            for p in parts:
                if p.get("type") != "tool":
                    continue
                name = p.get("tool")
                if not isinstance(name, str) or not name.startswith("thatch_"):
                    read["other tool calls"] += 1
                    continue
                kind = name[len("thatch_"):]
                if kind not in THATCH_TOOLS:
                    skipped[f"unknown thatch tool {kind!r}"] += 1
                    continue
                state = p.get("state") if isinstance(p.get("state"), dict) else {}
                ts = _ms((state.get("time") or {}).get("start")) if isinstance(state.get("time"), dict) else None
                ts = ts or created
                if ts is None:
                    skipped["tool call without a time"] += 1
                    continue
                status = state.get("status")
                reply = state.get("output") if status == "completed" else state.get("error")
                if status not in ("completed", "error"):
                    read["thatch tool calls without a result"] += 1
                read["thatch tool calls"] += 1
                rows.append(tool_row(kind, state.get("input"), ts=ts, session=session,
                                     record_id=str(p.get("callID") or p.get("id")), cwd=cwd,
                                     reply=reply if isinstance(reply, str) else None))
        else:
            skipped[f"message role {role!r}"] += 1
    fill_store(rows, project_store)
    result.log = finish_log(rows, skipped, source=str(path))
    result.tables = {"interactions": result.log}
    return result
