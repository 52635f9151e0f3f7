"""Reading what opencode stored: its SQLite database and its legacy JSON tree.

opencode keeps its data in ``~/.local/share/opencode`` (``$XDG_DATA_HOME/opencode``):

- **the database** ``opencode.db`` (``opencode-<channel>.db`` for an install
  channel other than latest/beta), in WAL mode while opencode runs. Tables
  ``session`` (one column per field: ``id``, ``parent_id``, ``directory``,
  ...), ``message`` (``id``, ``session_id``, ``time_created``, ``data``) and
  ``part`` (``id``, ``message_id``, ``session_id``, ``data``); ``data`` is
  the record's JSON without its ids, times are epoch milliseconds. Newer
  versions add columns; only those of the first migration are read. Newer
  still keep a session's history in ``session_message`` rows, read as
  messages and parts (:mod:`~thatchlab.logs.ingest._opencode_v2`); a
  database with neither table layout is an error naming its schema version.
- **the legacy tree** ``storage/``, one pretty-printed JSON file per record:
  ``session/<project>/<session>.json``, ``message/<session>/<message>.json``,
  ``part/<message>/<part>.json``. opencode copies it into the database once
  (the database's existence marks that done) and leaves the files in place,
  so a data dir may hold both.

:func:`load` reads either or both, rebuilds each record as opencode's own
loader does (``{**data, id, sessionID[, messageID]}``), and merges them by id,
the database's copy winning (a message the database holds is read with the
database's parts). Ids never become paths unchecked: every id read, from a
file name, a JSON field or a database column, must be a plain id
(:func:`plain_id`), else the read stops with a LogValidationError naming
the file. In the tree the ids are taken from the paths, as opencode's
migration does; a JSON ``id``/``sessionID``/``messageID`` that is plain but
differs from its path is counted under ``read`` and the path's id used.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import sqlite3
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from thatchlab.core.errors import LogValidationError, StoreSchemaError
from thatchlab.core.sqlite import connect_readonly, is_busy, require_tables, table_names
from thatchlab.logs.ingest._opencode_v2 import V2_COLUMNS, read_session_messages, schema_version

__all__ = ["plain_id", "locate", "load", "Stored"]

_PLAIN_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
_DB_NAME = re.compile(r"^opencode(-[A-Za-z0-9._-]+)?\.db$")
#: The columns read, all in the tables of opencode's first database migration.
_COLUMNS = {"session": ("id", "parent_id", "directory"),
            "message": ("id", "session_id", "time_created", "data"),
            "part": ("id", "message_id", "session_id", "data")}
_DUPLICATE = "{} in more than one source (the database's copy read)"
_MISMATCH = "JSON ids that disagree with their file path (the path's id used, as opencode's migration does)"


def plain_id(value, where, what: str, file=None) -> str:
    """``value`` when it is a plain id (``^[A-Za-z0-9][A-Za-z0-9_.-]*$``, no ``..``), else a LogValidationError.

    >>> plain_id("msg_b76daa864001WD25RQ4F5ZR3qa", "m.json", "message id")
    'msg_b76daa864001WD25RQ4F5ZR3qa'
    >>> plain_id("../../outside", "m.json", "message id")
    Traceback (most recent call last):
    ...
    thatchlab.core.errors.LogValidationError: m.json: message id '../../outside' is not a plain id ...
    """
    if isinstance(value, str) and _PLAIN_ID.match(value) and ".." not in value:
        return value
    raise LogValidationError(f"{where}: {what} {value!r} is not a plain id (letters, digits, '_', '.', '-'); "
                             "refused, as it could name a file outside the storage folder", file=str(file or where),
                             column=what, expected="a plain opencode id such as msg_...")


@dataclass
class Stored:
    """What :func:`load` read, merged: ``sessions`` (id → ``{"directory", "parentID"}``) and
    ``messages``, ``(message, parts)`` pairs in ``(time created, id)`` order, parts in id order."""

    sessions: dict = field(default_factory=dict)
    messages: list = field(default_factory=list)


def locate(path) -> tuple[list[Path], Path | None]:
    """``(database files, storage folder or None)`` of a data dir, a database file or a storage folder."""
    p = Path(os.path.expanduser(str(path)))
    if p.is_file():
        return [p], None
    if not p.is_dir():
        raise LogValidationError(f"{path}: no such file or folder (expected opencode's data dir "
                                 "~/.local/share/opencode, its opencode.db or its storage folder)", file=str(path),
                                 expected="an opencode data dir")
    if (p / "message").is_dir():
        return [], p
    dbs = sorted((f for f in p.iterdir() if _DB_NAME.match(f.name) and f.is_file()),
                 key=lambda f: (f.name != "opencode.db", f.name))
    storage = p / "storage" if (p / "storage" / "message").is_dir() else None
    if not dbs and storage is None:
        raise LogValidationError(f"{path}: not an opencode data dir (no opencode.db and no storage/message folder; "
                                 "expected ~/.local/share/opencode, its opencode.db or its storage folder)",
                                 file=str(path), expected="an opencode data dir")
    return dbs, storage


class _Merge:
    """Records by id from every source in turn; the first source holding an id wins (databases come first)."""

    def __init__(self, read: Counter):
        self.read = read
        self.sessions: dict = {}
        self.messages: dict = {}   # id → (sort key, message)
        self.parts: dict = {}      # message id → part id → part

    def session(self, sid, info) -> None:
        if sid in self.sessions:
            self.read[_DUPLICATE.format("sessions")] += 1
        else:
            self.sessions[sid] = info

    def message(self, mid, created, msg) -> bool:
        """Keep ``msg`` unless an earlier source had it (its parts are then that source's)."""
        if mid in self.messages:
            self.read[_DUPLICATE.format("messages")] += 1
            return False
        number = isinstance(created, (int, float)) and not isinstance(created, bool)
        self.messages[mid] = ((0, created, mid) if number else (1, 0, mid), msg)
        return True

    def part(self, mid, pid, part) -> None:
        self.parts.setdefault(mid, {})[pid] = part


def load(path, result, subagents: bool = False) -> Stored:
    """Every session, message and part under ``path`` (see the module notes); counts go to ``result``.

    Messages of sessions with a ``parentID`` (a subagent's) are left out
    unless ``subagents``, counted under ``skipped["subagent session"]``.
    """
    dbs, storage = locate(path)
    merged = _Merge(result.read)
    for db in dbs:
        _read_db(db, merged, result, subagents)
    if storage is not None:
        _read_storage(storage, merged, result, subagents)
    out = Stored(sessions=merged.sessions)
    n_sub = sum(_subagent(i) for i in out.sessions.values())
    if n_sub and not subagents:
        result.skipped["subagent session"] += n_sub
    for _, msg in sorted(merged.messages.values(), key=lambda km: km[0]):
        parts = merged.parts.get(msg["id"], {})
        out.messages.append((msg, [parts[k] for k in sorted(parts)]))
    result.read["sessions"] = len(out.sessions)
    result.read["messages"] = len(out.messages)
    result.read["parts"] = sum(len(p) for _, p in out.messages)
    return out


def _subagent(info) -> bool:
    return bool(info.get("parentID"))


def _json(text, where, result, of="", file=None):
    """A record's JSON object; broken JSON raises naming ``where`` and the line, a non-object is counted."""
    try:
        obj = json.loads(text)
    except (ValueError, TypeError, RecursionError) as exc:
        line = getattr(exc, "lineno", 1)
        raise LogValidationError(f"{where}: line {line}{of}: not valid JSON ({getattr(exc, 'msg', exc)})",
                                 file=str(file or where), row=line - 1, expected="one JSON object") from None
    if not isinstance(obj, dict):
        result.skipped["record that is not a JSON object"] += 1
        return None
    return obj


# ----------------------------------------------------------------------------- the database
def _read_db(db: Path, merged: _Merge, result, subagents: bool) -> None:
    try:
        conn = connect_readonly(db)
    except StoreSchemaError as exc:
        if "locked" in str(exc) or "busy" in str(exc):
            raise _locked(db) from None
        raise
    with contextlib.closing(conn):
        try:
            _read_tables(conn, db, merged, result, subagents)
        except sqlite3.DatabaseError as exc:
            if is_busy(exc):
                raise _locked(db) from None
            raise StoreSchemaError(f"{db}: not a readable opencode database ({exc})") from None
        except UnicodeDecodeError as exc:  # a damaged file: text columns that are not UTF-8
            raise StoreSchemaError(f"{db}: not a readable opencode database (a text value is not UTF-8: "
                                   f"{exc.reason}); expected the opencode.db opencode writes") from None
    result.read["databases"] += 1


def _locked(db) -> StoreSchemaError:
    return StoreSchemaError(f"{db}: the database is locked by another process (an opencode writing?); nothing was "
                            "read. Try again when it is free, or read a copy of the file")


def _read_tables(conn, db: Path, merged: _Merge, result, subagents: bool) -> None:
    names = table_names(conn)
    missing = [t for t in _COLUMNS if t not in names]
    v2 = "session_message" in names
    if "session" not in names:
        raise StoreSchemaError(f"{db}: not an opencode database (no table {', '.join(map(repr, missing))}; an "
                               "opencode.db has the tables session, message and part)")
    if missing and not v2:
        raise StoreSchemaError(
            f"{db}: an opencode database of a schema version ingest does not know ({schema_version(conn)}): "
            f"no table {', '.join(map(repr, missing))} and no table 'session_message' (known: session with message "
            "and part, or session with session_message)")
    require_tables(conn, str(db), {t: c for t, c in _COLUMNS.items() if t not in missing})
    if v2:
        require_tables(conn, str(db), {"session_message": V2_COLUMNS})
    dropped = set()
    titled = "title" in {r[1] for r in conn.execute("PRAGMA table_info(session)")}
    query = f"SELECT id, parent_id, directory, {'title' if titled else 'NULL'} FROM session ORDER BY id"
    for sid, parent, directory, title in conn.execute(query):
        info = {"directory": directory, "parentID": parent, "title": title}
        plain_id(sid, f"{db}: session", "session id", db)
        merged.session(sid, info)
    for sid, info in merged.sessions.items():
        if _subagent(info) and not subagents:
            dropped.add(sid)
    projected = read_session_messages(conn, db, merged, result, dropped.__contains__, plain_id, _json) if v2 else set()
    if missing:  # session_message only
        return
    rows = conn.execute("SELECT id, session_id, time_created, data FROM message ORDER BY time_created, id")
    kept = set()
    for mid, sid, created, data in rows:
        where = f"{db}: message {mid!r}"
        plain_id(mid, where, "message id", db)
        plain_id(sid, where, "session id", db)
        if sid in dropped:
            continue
        if sid in projected:
            result.read["message rows of a session also in session_message (its session_message rows read)"] += 1
            continue
        obj = _json(data, where, result, " of its data", file=db)
        if obj is not None and merged.message(mid, created, {**obj, "id": mid, "sessionID": sid}):
            kept.add(mid)
    for pid, mid, sid, data in conn.execute("SELECT id, message_id, session_id, data FROM part ORDER BY message_id, id"):
        where = f"{db}: part {pid!r}"
        plain_id(pid, where, "part id", db)
        plain_id(mid, where, "message id", db)
        plain_id(sid, where, "session id", db)
        if mid not in kept:
            continue
        obj = _json(data, where, result, " of its data", file=db)
        if obj is not None:
            merged.part(mid, pid, {**obj, "id": pid, "sessionID": sid, "messageID": mid})


# ----------------------------------------------------------------------------- the legacy tree
def _load_file(f: Path, result):
    """One JSON file as an object, or None (an empty file, a non-object: counted); broken JSON raises."""
    try:
        text = f.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as exc:
        raise LogValidationError(f"{f}: line 1: not UTF-8 text ({exc.reason})", file=str(f), row=0,
                                 expected="a UTF-8 JSON file") from None
    if not text.strip():
        result.skipped["empty file"] += 1
        return None
    return _json(text, f, result)


def _agree(obj: dict, key: str, expected: str, f: Path, result) -> None:
    """The JSON's own ``key`` must be a plain id; one that differs from the path's is counted."""
    if obj.get(key) is None:
        return
    if plain_id(obj[key], f, key) != expected:
        result.read[_MISMATCH] += 1


def _files(folder: Path) -> list[Path]:
    return sorted(f for f in folder.glob("*.json") if f.is_file()) if folder.is_dir() else []


def _read_storage(root: Path, merged: _Merge, result, subagents: bool) -> None:
    sessions = root / "session"
    for project in sorted(d for d in sessions.iterdir() if d.is_dir()) if sessions.is_dir() else ():
        plain_id(project.name, project, "project id")
        for f in _files(project):
            sid = plain_id(f.stem, f, "session id")
            info = _load_file(f, result)
            if info is None:
                continue
            _agree(info, "id", sid, f, result)
            merged.session(sid, {"directory": info.get("directory"), "parentID": info.get("parentID"),
                                 "title": info.get("title")})
    for sdir in sorted(d for d in (root / "message").iterdir() if d.is_dir()):
        sid = plain_id(sdir.name, sdir, "session id")
        if _subagent(merged.sessions.get(sid, {})) and not subagents:
            continue
        for f in _files(sdir):
            mid = plain_id(f.stem, f, "message id")
            msg = _load_file(f, result)
            if msg is None:
                continue
            _agree(msg, "id", mid, f, result)
            _agree(msg, "sessionID", sid, f, result)
            t = msg.get("time")
            created = t.get("created") if isinstance(t, dict) else None
            if not merged.message(mid, created, {**msg, "id": mid, "sessionID": sid}):
                continue
            for pf in _files(root / "part" / mid):
                pid = plain_id(pf.stem, pf, "part id")
                part = _load_file(pf, result)
                if part is None:
                    continue
                _agree(part, "id", pid, pf, result)
                _agree(part, "messageID", mid, pf, result)
                merged.part(mid, pid, {**part, "id": pid, "sessionID": sid, "messageID": mid})
    result.read["storage folders"] += 1
