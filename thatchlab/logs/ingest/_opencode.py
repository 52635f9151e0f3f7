"""opencode's sessions → the interaction log.

opencode keeps its sessions in ``~/.local/share/opencode``: the SQLite
database ``opencode.db`` today, a tree of JSON files under ``storage/`` in
older versions (read by :mod:`~thatchlab.logs.ingest._opencode_store`, both
at once when both are there). A session has a ``directory`` (the project it
ran in) and, for a subagent's, a ``parentID``. A message has a ``role``
(``user`` or ``assistant``) and ``time.created`` (epoch milliseconds); its
parts carry the content:

- ``text`` parts: what the user typed, or, with ``synthetic: true``, what
  the host or a plugin added (opencode's expansion of an attached file,
  thatch's nudges); ``ignored: true`` text is never sent to the model;
- ``tool`` parts: one call (``tool``, ``callID``, ``state``), rewritten in
  place as it goes ``pending`` → ``running`` → ``completed`` (``output``) or
  ``error`` (``error``, also an aborted call's ``Tool execution aborted``);
- the rest (reasoning, step boundaries, files, patches...) carry nothing the log needs.

thatch's opencode plugin registers its tools as ``thatch_<tool>`` and pushes
each nudge block into the user's message as a synthetic text part (id
``prt_thatch_...``) before the message is stored. Its store is the one
thatch's ``detectRepo`` names for the session's directory, which the
plugin's own replies spell out (``[created] acme/app :: ...``).

Examples
--------
>>> import json, sqlite3, tempfile, pathlib
>>> d = pathlib.Path(tempfile.mkdtemp())
>>> db = sqlite3.connect(d / "opencode.db")
>>> _ = db.executescript(
...     "CREATE TABLE session (id TEXT PRIMARY KEY, parent_id TEXT, directory TEXT NOT NULL);"
...     "CREATE TABLE message (id TEXT PRIMARY KEY, session_id TEXT, time_created INTEGER, data TEXT);"
...     "CREATE TABLE part (id TEXT PRIMARY KEY, message_id TEXT, session_id TEXT, data TEXT);"
...     "INSERT INTO session VALUES ('ses_1', NULL, '/home/dev/app')")
>>> def msg(mid, at, role):
...     db.execute("INSERT INTO message VALUES (?, 'ses_1', ?, ?)",
...                (mid, at, json.dumps({"role": role, "time": {"created": at}})))
>>> def part(pid, mid, **data):
...     db.execute("INSERT INTO part VALUES (?, ?, 'ses_1', ?)", (pid, mid, json.dumps(data)))
>>> msg("msg_1", 1767600000000, "user")
>>> part("prt_1", "msg_1", type="text", text="rename the config loader")
>>> part("prt_thatch_k2", "msg_1", type="text", synthetic=True, text="[thatch] Situational behaviors\\n"
...      "- [0.50 conf, 0 tests] When renaming code: consider grep for callers")
>>> msg("msg_2", 1767600005000, "assistant")
>>> part("prt_2", "msg_2", type="tool", tool="thatch_behavior_list", callID="call_1", state={
...      "status": "completed", "input": {}, "output": 'No behaviors in "acme/app", "global".'})
>>> part("prt_3", "msg_2", type="tool", tool="thatch_behavior_feedback", callID="call_2", state={
...      "status": "running", "time": {"start": 1767600006000},
...      "input": {"behavior": "grep for callers", "relevant": True, "context": "three files"}})
>>> db.commit(); db.close()
>>> res = opencode(d)
>>> res.log[["kind", "text", "store", "record_id", "skip_reason"]].values.tolist()
[['message', 'rename the config loader', 'acme/app', 'msg_1', None], \
['behavior_list', None, 'acme/app', 'call_1', None], \
['behavior_feedback', 'three files', 'acme/app', 'call_2', 'still running']]
>>> res.log["surfaced"][0], dict(res.stripped), dict(res.not_run)
(['grep for callers'], {'thatch nudge part': 1}, {'still running': 1})
"""

from __future__ import annotations

import pandas as pd

from thatchlab.core.errors import LogValidationError
from thatchlab.core.progress import progress
from thatchlab.logs.ingest._names import looks_like_thatch, server_name, subagent_mode, thatch_tool
from thatchlab.logs.ingest._nudge import has_nudge
from thatchlab.logs.ingest._opencode_store import load
from thatchlab.logs.ingest._stores import StoreEvidence, name_stores
from thatchlab.logs.ingest._tools import (
    SKIP_REASONS,
    THATCH_TOOLS,
    IngestResult,
    finish_log,
    mark_not_run,
    message_row,
    tool_row,
)

__all__ = ["opencode"]

_BAR_MESSAGES = 200
#: thatch's tools that are not interaction-log kinds (memories, chat, watchers, the host's own):
#: counted, and read for the stores their replies name.
_OTHER_THATCH = ("memory_", "store_list", "find_duplicates", "dedup_mark_checked", "extraction_done",
                 "get_extraction_payload", "config_", "notify_user", "chat_", "get_session_info", "session_",
                 "watch_")
#: The title of thatch's own extraction child session.
_EXTRACTION_TITLE = "thatch-extraction"
#: ``state.status`` of a call that did not complete → its ``skip_reason``.
_NOT_RUN = {"error": SKIP_REASONS["error"], "running": SKIP_REASONS["running"],
            "pending": SKIP_REASONS["pending"]}
#: The error texts of a call the user refused at the permission prompt, or that a permission rule
#: the user set refused (anomalyco/opencode packages/opencode/src/permission/next.ts @0fab91b7:
#: ``RejectedError``, ``CorrectedError``, ``DeniedError``).
_REFUSED = ("The user rejected permission to use this specific tool call",
            "The user has specified a rule which prevents you from using this specific tool call")
_SUBAGENT_PROMPT = "sub-agent prompt (a delegation from the main agent, not typed by the user)"


def _ms(value, result):
    """Epoch milliseconds (opencode's times) as ISO text in UTC, else None (an unreadable one counted)."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value != value:
        result.skipped["unreadable time"] += 1
        return None
    try:
        return pd.Timestamp(int(value), unit="ms", tz="UTC").strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    except (ValueError, OverflowError, OSError):
        result.skipped["unreadable time"] += 1
        return None


def _time(obj, key, result):
    t = obj.get("time") if isinstance(obj, dict) else None
    return _ms(t.get(key), result) if isinstance(t, dict) else None


def _subagent_kind(info) -> str | None:
    """``"extraction"`` for the child session thatch's plugin creates to extract facts (its title is
    ``thatch-extraction``: sysread/thatch src/chat.ts ``EXTRACTION_CHILD_TITLE``, used by
    src/runtime.ts @07ecf879), ``"task"`` for another child session (a sub-agent the model
    dispatched), None for a top-level session."""
    if not isinstance(info, dict) or not info.get("parentID"):
        return None
    return "extraction" if info.get("title") == _EXTRACTION_TITLE else "task"


def _synthetic_kind(part, text) -> str:
    if has_nudge(text):
        return "thatch nudge part"
    if str(part.get("id", "")).startswith("prt_thatch_") or text.startswith("[thatch] "):
        return "other thatch part (recall, extraction or version notice)"
    return "other synthetic part"


class _Rows:
    """The log rows of one ingest, built message by message."""

    def __init__(self, result, engine, server="thatch", prompts_of_subagents=False):
        self.result, self.engine, self.server = result, engine, server
        self.prompts_of_subagents = prompts_of_subagents
        self.rows: list[dict] = []
        self.evidence = StoreEvidence()
        self.calls: set = set()
        self.nudged: set = set()       # sessions with thatch's hook output
        self.called: set = set()       # sessions with a recognised thatch call
        self.candidates: dict = {}     # session → tool names that look like thatch's under another server

    def user(self, msg, parts, session, ts, cwd, subagent=None) -> None:
        result = self.result
        if subagent is not None and not self.prompts_of_subagents:
            result.skipped[_SUBAGENT_PROMPT] += 1
            return
        typed, synthetic = [], []
        for p in parts:
            text = p.get("text")
            if p.get("type") != "text" or not isinstance(text, str):
                continue
            if p.get("ignored"):
                result.stripped["ignored part"] += 1
            elif p.get("synthetic"):
                result.stripped[_synthetic_kind(p, text)] += 1
                synthetic.append(text)
                self.evidence.see(session, text)
            elif text.strip():
                typed.append(text)
        if not typed:
            result.skipped["user message without typed text"] += 1
            return
        if ts is None:
            result.skipped["message without a time"] += 1
            return
        result.read["prompts"] += 1
        # thatch's plugin scores the non-synthetic text parts joined by a space: the same prompt
        row = message_row(" ".join(typed), synthetic, ts=ts, session=session, record_id=msg["id"], cwd=cwd,
                          engine=self.engine)
        result.read["nudges"] += row["logged_nudge"] is not None
        if row["logged_nudge"] is not None:
            self.nudged.add(session)
        self.rows.append(row)

    def assistant(self, parts, session, ts, cwd) -> None:
        result = self.result
        for p in parts:
            if p.get("type") != "tool":
                continue
            found = thatch_tool(p.get("tool"), self.server)
            if found is None:
                result.read["other tool calls"] += 1
                if looks_like_thatch(p.get("tool")):
                    self.candidates.setdefault(session, set()).add(p.get("tool"))
                continue
            self.called.add(session)
            kind = found[0]
            state = p.get("state") if isinstance(p.get("state"), dict) else {}
            args = state.get("input") if isinstance(state.get("input"), dict) else {}
            status = state.get("status")
            reply = state.get("output") if status == "completed" else state.get("error") if status == "error" else None
            reply = reply if isinstance(reply, str) else None
            store = args.get("store") if isinstance(args.get("store"), str) and args.get("store") else None
            self.evidence.see(session, reply, explicit_store=store)
            if kind not in THATCH_TOOLS:
                if kind.startswith(_OTHER_THATCH):
                    result.read["other thatch tool calls (memory, chat...: not log rows)"] += 1
                else:
                    result.skipped[f"unknown thatch tool {kind!r}"] += 1
                continue
            at = _time(state, "start", result) or ts
            if at is None:
                result.skipped["tool call without a time"] += 1
                continue
            call = p.get("callID")
            if not isinstance(call, str) or not call:
                call = p["id"]
            elif call in self.calls:  # a provider that reuses call ids: the part's own id is unique
                result.read["tool calls whose callID repeats (the part id used)"] += 1
                call = p["id"]
            self.calls.add(call)
            row = tool_row(kind, args, ts=at, session=session, record_id=call, cwd=cwd, reply=reply)
            if status == "error" and isinstance(reply, str) and reply.startswith(_REFUSED):
                mark_not_run(row, SKIP_REASONS["rejected"], result)
            elif status != "completed":
                mark_not_run(row, _NOT_RUN.get(status, SKIP_REASONS["no_result"]), result)
            result.read["thatch tool calls"] += 1
            self.rows.append(row)


def opencode(path, *, subagents="calls", engine: str | None = None,
             project_store: str | None = "auto", server: str = "thatch") -> IngestResult:
    """The interaction log of opencode's sessions.

    Parameters
    ----------
    path : str or path-like
        opencode's data dir (``~/.local/share/opencode``: its ``opencode.db``
        and ``opencode-<channel>.db``, and its legacy ``storage/`` folder, all
        read and merged by id, a database's copy winning), one database file,
        or a ``storage/`` folder. Databases are opened read-only, safely while
        opencode writes them.
    subagents : {"calls", "all", "none"} or bool, default="calls"
        What is read of sessions with a ``parentID`` (a sub-agent's
        run, or thatch's own extraction child): ``"calls"`` (the default:
        what production experienced) their thatch calls, as rows with
        ``subagent`` set, their prompts (the parent's delegation, thatch's
        extraction request) counted, not rows; ``"all"`` (or True) their
        prompts too, as message rows; ``"none"`` (or False) nothing of them.
    engine : {"prediction", "behavior"}, optional
        Keep only this engine's statements in ``surfaced`` (None: both).
    project_store : str or None, default="auto"
        The store of rows whose call named none: ``"auto"`` names
        it as thatch does (the store the session's own thatch replies name,
        also those of its memory tools; else another session's of the same
        directory; else :func:`~thatchlab.logs.ingest.detect_repo` on the
        directory when it exists here; else its folder name, with a warning),
        ``"cwd"`` the directory's folder name, other text that store, None
        leaves them null.
    server : str, default="thatch"
        The name thatch's tools are registered under (``thatch``: the
        plugin's ``thatch_<tool>``); plain tool names are read too
        (:mod:`~thatchlab.logs.ingest._names`).

    Returns
    -------
    IngestResult
        ``log``: one ``message`` row per user message with typed text
        (``text`` its non-synthetic, non-ignored text parts joined by a
        space, ``record_id`` the message id, the nudge parsed from its
        synthetic parts) and one row per ``thatch_<tool>`` part
        (``record_id`` its ``callID``, else the part id; ``logged_reply`` its
        output or error text), in time order. A call that did not complete
        (``error``, ``running``, ``pending``) has its reason in
        ``skip_reason``, so a replay skips it (counted in ``not_run``): a
        permission the user rejected (or a rule the user set refused) is
        ``rejected by the user``, other errors ``tool error``;
        synthetic and ignored parts are counted in ``stripped``.

    Raises
    ------
    LogValidationError
        ``path`` is none of the above; a JSON file or a ``data`` cell is not
        valid JSON (naming the file, or the database and the record, and
        the line); an id is not a plain id (it could name a path).
    StoreSchemaError
        A database without opencode's tables, or one locked by another process.

    See Also
    --------
    claude_code : the same log from Claude Code's transcripts.
    """
    if engine not in (None, "prediction", "behavior"):
        raise LogValidationError(f"engine: expected None, 'prediction' or 'behavior', got {engine!r}")
    subagents = subagent_mode(subagents)
    result = IngestResult(log=None)
    stored = load(path, result, subagents=subagents != "none")
    out = _read_messages(stored, result, engine, server, subagents)
    _warn_unread(out, server, result)
    name_stores(out.rows, out.evidence, project_store, result)
    result.log = finish_log(out.rows, result.skipped, source=str(path))
    result.tables = {"interactions": result.log}
    return result


def _read_messages(stored, result: IngestResult, engine, server: str, subagents: str) -> _Rows:
    """Every stored message through one row maker, in the store's order; each row then knows its sub-agent kind."""
    out = _Rows(result, engine, server_name(server), prompts_of_subagents=subagents == "all")
    bar = progress(stored.messages, total=len(stored.messages), desc="opencode messages",
                   enabled=None if len(stored.messages) > _BAR_MESSAGES else False)
    for msg, parts in bar:
        session = msg["sessionID"]
        directory = stored.sessions.get(session, {}).get("directory")
        cwd = directory if isinstance(directory, str) and directory else None
        out.evidence.project_dir(session, cwd)
        ts = _time(msg, "created", result)
        role = msg.get("role")
        if role == "user":
            out.user(msg, parts, session, ts, cwd, _subagent_kind(stored.sessions.get(session, {})))
        elif role == "assistant":
            out.assistant(parts, session, ts, cwd)
        else:
            result.skipped[f"message role {role!r}"] += 1
    for row in out.rows:
        row["subagent"] = _subagent_kind(stored.sessions.get(row["session"], {}))
    return out


def _warn_unread(out: _Rows, server: str, result: IngestResult) -> None:
    """Warn of sessions holding thatch's nudges but no call recognised under ``server`` (a wrong ``--server``)."""
    unread = sorted(s for s in out.nudged - out.called if s in out.candidates)
    if unread:
        names = sorted({n for s in unread for n in out.candidates[s]})
        result.read["sessions with thatch's hook output and no recognised call"] += len(unread)
        result.warnings.append(
            f"{len(unread)} session(s) hold thatch's nudges but no call to thatch's tools under --server {server!r} "
            f"({', '.join(unread[:3])}); tool names that look like thatch's: {', '.join(names[:5])}: pass --server "
            "with the name the host registered thatch under")
