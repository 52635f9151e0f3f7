"""Claude Code session transcripts → the interaction log.

Claude Code keeps one JSON-lines file per session under
``~/.claude/projects/<project folder>/<session id>.jsonl`` (subagent runs in
``<session id>/subagents/agent-*.jsonl``). Each line is a record with a
``type``: ``user`` records hold a prompt (``message.content`` a string or a
list of ``text`` blocks) or the ``tool_result`` blocks answering tool calls;
``assistant`` records hold ``text``, ``thinking`` and ``tool_use`` blocks
(``id``, ``name``, ``input``); hook output, summaries, file-history
snapshots, queue operations and the like have record types of their own.
Records carry ``uuid``, ``parentUuid``, ``sessionId``, ``timestamp``,
``cwd``, ``isSidechain`` (subagent traffic) and ``isMeta`` (text the host
injected, not typed by the user).

thatch runs there as an MCP server, so its tools are called
``mcp__<server>__<tool>``; its prompt hook prints the nudge blocks before the
prompt reaches the model. Depending on the host's version that output is
stored as an ``attachment`` record, a ``system`` record, a meta ``user``
record or extra text in the prompt's own record, next to the prompt; this
reader takes every nudge block found in the records after a prompt and
before the assistant's reply (or just before the prompt, when the host wrote
it first).
"""

from __future__ import annotations

import json
import os
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

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

__all__ = ["claude_code"]

#: Record types that carry nothing the interaction log needs (read, not skipped).
_QUIET_TYPES = ("summary", "file-history-snapshot", "queue-operation", "progress", "permission-mode",
                "custom-title", "checkpoint", "result", "tag", "agent-name", "last-prompt")
#: Prompts the host writes itself: slash commands, their output, interruptions.
_NOT_TYPED = ("<command-name>", "<command-message>", "<command-args>", "<local-command-stdout>",
              "<local-command-stderr>", "<local-command-caveat>", "<bash-input>", "<bash-stdout>",
              "<bash-stderr>", "[Request interrupted by user")
#: Files above this many get a progress bar.
_BAR_FILES = 20


@dataclass
class _Prompt:
    ts: str
    session: str
    uuid: str
    cwd: str | None
    text: str
    hooks: list = field(default_factory=list)


def _strings(obj, out):
    """Every string inside a JSON value (hook output nests it in various fields)."""
    if isinstance(obj, str):
        out.append(obj)
    elif isinstance(obj, dict):
        for v in obj.values():
            _strings(v, out)
    elif isinstance(obj, list):
        if obj and all(isinstance(v, str) for v in obj):  # output stored one line per element
            out.append("\n".join(obj))
        else:
            for v in obj:
                _strings(v, out)
    return out


def _result_text(content) -> str:
    """A tool result's text: a string, or the ``text`` blocks of a list joined by newlines."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(b.get("text", "") for b in content if isinstance(b, dict) and b.get("type") == "text")
    return "" if content is None else str(content)


def _transcripts(path, subagents: bool, skipped: Counter) -> list[Path]:
    p = Path(os.path.expanduser(str(path)))
    if p.is_file():
        return [p]
    if not p.is_dir():
        raise LogValidationError(f"{path}: no such transcript file or folder", file=str(path),
                                 expected="a .jsonl transcript, a project folder or ~/.claude/projects")
    out = []
    for f in sorted(p.rglob("*.jsonl")):
        parts = f.relative_to(p).parts[:-1]
        if "workflows" in parts and f.name == "journal.jsonl":
            skipped["workflow journal file"] += 1
        elif "subagents" in parts and not subagents:
            skipped["subagent transcript file"] += 1
        else:
            out.append(f)
    return out


class _Session:
    """The state of one transcript file while its records are read."""

    def __init__(self, path: Path, prefix: str, subagents: bool, result: IngestResult, seen: set, rows: list):
        self.path, self.prefix, self.subagents = path, prefix, subagents
        self.read, self.skipped = result.read, result.skipped
        self.seen, self.rows = seen, rows
        self.prompts: list[_Prompt] = []
        self.by_uuid: dict[str, _Prompt] = {}
        self.open: _Prompt | None = None     # the prompt whose reply has not started yet
        self.loose: list[str] = []           # hook text seen before its prompt
        self.pending: dict[str, dict] = {}   # tool_use id → row

    # ------------------------------------------------------------------ records
    def record(self, rec: dict, lineno: int):
        t = rec.get("type")
        if rec.get("isSidechain") and not self.subagents and t in ("user", "assistant", "attachment", "system"):
            self.skipped["sidechain record"] += 1
            return
        if t == "user":
            self.user(rec)
        elif t == "assistant":
            self.assistant(rec)
        elif t in ("attachment", "system"):
            texts = [s for s in _strings(rec.get("attachment") if t == "attachment" else rec, []) if has_nudge(s)]
            if texts:
                self.hook(texts, rec.get("parentUuid"))
            else:
                self.read[f"{t} records"] += 1
        elif t in _QUIET_TYPES:
            self.read["other records"] += 1
        else:
            self.skipped[f"record type {t!r}" if isinstance(t, str) else "record without a type"] += 1

    def _where(self, rec):
        ts = rec.get("timestamp")
        if not isinstance(ts, str) or not ts:
            self.skipped["record without a timestamp"] += 1
            return None
        session = rec.get("sessionId") if isinstance(rec.get("sessionId"), str) else self.path.stem
        if rec.get("isSidechain") and isinstance(rec.get("agentId"), str):
            session = f"{session}:{rec['agentId']}"
        cwd = rec.get("cwd") if isinstance(rec.get("cwd"), str) else None
        return ts, session, cwd

    def hook(self, texts, parent=None):
        target = self.by_uuid.get(parent) if isinstance(parent, str) else None
        target = target or self.open
        if target is None:
            self.loose.extend(texts)
        else:
            target.hooks.extend(texts)

    def user(self, rec):
        content = (rec.get("message") or {}).get("content") if isinstance(rec.get("message"), dict) else None
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
        if not isinstance(blocks, list):
            self.skipped["user record without content"] += 1
            return
        texts = []
        for b in blocks:
            if not isinstance(b, dict):
                self.skipped["content block that is not an object"] += 1
            elif b.get("type") == "tool_result":
                self.tool_result(b)
            elif b.get("type") == "text" and isinstance(b.get("text"), str):
                texts.append(b["text"])
            else:
                self.read["other content blocks"] += 1
        if not texts:
            return
        prompt_parts, hooks = [], []
        for text in texts:
            head, hook = split_prompt(text)
            if hook:
                hooks.append(hook)
            if head.strip() or not hook:
                prompt_parts.append(head)
        prompt = "\n".join(prompt_parts)
        if rec.get("isMeta") or rec.get("isCompactSummary") or not prompt.strip() \
                or prompt.lstrip().startswith(_NOT_TYPED):
            if hooks:
                self.hook(hooks, rec.get("parentUuid"))
            reason = ("meta record" if rec.get("isMeta") else "compaction summary" if rec.get("isCompactSummary")
                      else "empty prompt" if not prompt.strip() else "command or interruption record")
            self.skipped[reason] += 1
            return
        where = self._where(rec)
        if where is None:
            return
        uuid = rec.get("uuid") if isinstance(rec.get("uuid"), str) else f"{self.path.stem}:{len(self.prompts)}"
        if uuid in self.seen:
            self.skipped["duplicate record"] += 1
            return
        self.seen.add(uuid)
        p = _Prompt(*where[:2], uuid, where[2], prompt, hooks=self.loose + hooks)
        self.loose = []
        self.prompts.append(p)
        self.by_uuid[uuid] = p
        self.open = p

    def assistant(self, rec):
        self.open, self.loose = None, []
        content = rec.get("message", {}).get("content") if isinstance(rec.get("message"), dict) else None
        if not isinstance(content, list):
            return
        where = None
        for b in content:
            if not isinstance(b, dict) or b.get("type") != "tool_use":
                continue
            name = b.get("name")
            if not isinstance(name, str) or not name.startswith(self.prefix):
                self.read["other tool calls"] += 1
                continue
            kind = name[len(self.prefix):]
            if kind not in THATCH_TOOLS:
                self.skipped[f"unknown thatch tool {kind!r}"] += 1
                continue
            call_id = b.get("id") if isinstance(b.get("id"), str) else None
            if call_id is None:
                self.skipped["thatch tool call without an id"] += 1
                continue
            if call_id in self.seen:
                self.skipped["duplicate record"] += 1
                continue
            where = where or self._where(rec)
            if where is None:
                return
            self.seen.add(call_id)
            row = tool_row(kind, b.get("input"), ts=where[0], session=where[1], record_id=call_id, cwd=where[2])
            self.pending[call_id] = row
            self.rows.append(row)
            self.read["thatch tool calls"] += 1

    def tool_result(self, b):
        row = self.pending.pop(b.get("tool_use_id"), None)
        if row is None:
            return
        row["logged_reply"] = _result_text(b.get("content"))
        if b.get("is_error"):
            self.read["thatch tool errors"] += 1

    def finish(self, engine):
        for p in self.prompts:
            row = message_row(p.text, p.hooks, ts=p.ts, session=p.session, record_id=p.uuid, cwd=p.cwd,
                              engine=engine)
            self.read["prompts"] += 1
            self.read["nudges"] += row["logged_nudge"] is not None
            self.rows.append(row)
        self.read["thatch tool calls without a result"] += len(self.pending)
        if self.loose:
            self.skipped["nudge without a prompt"] += 1


def _matters(raw: bytes, prefix: str) -> bool:
    """Whether a broken line may hold a prompt, a thatch tool call or a nudge (unsafe to skip)."""
    if prefix.encode() in raw or b"[thatch] " in raw:
        return True
    return (b'"type":"user"' in raw or b'"type": "user"' in raw) and b"tool_result" not in raw


def _lines(path: Path, prefix: str, skipped: Counter):
    """``(line number, record)`` of a transcript, skipping what can be skipped safely."""
    with open(path, "rb") as fh:
        data = fh.read()
    lines = data.split(b"\n")
    last = len(lines) - (1 if data.endswith(b"\n") else 0)
    for n, raw in enumerate(lines, start=1):
        if n == 1 and raw.startswith(b"\xef\xbb\xbf"):
            raw = raw[3:]
        if not raw.strip():
            continue
        try:
            rec = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, ValueError, RecursionError) as exc:
            if n == last and not data.endswith(b"\n"):
                skipped["incomplete last line"] += 1  # a session still being written
                continue
            if _matters(raw, prefix):
                why = exc.reason if isinstance(exc, UnicodeDecodeError) else getattr(exc, "msg", type(exc).__name__)
                raise LogValidationError(
                    f"{path}: line {n}: not a valid JSON record ({why}); the line may hold a prompt, a thatch "
                    "tool call or a nudge, so it cannot be skipped safely", file=str(path), row=n - 1,
                    expected="one JSON object per line") from None
            skipped["malformed line"] += 1
            continue
        if not isinstance(rec, dict):
            skipped["line that is not a JSON object"] += 1
            continue
        yield n, rec


def claude_code(path, server: str = "thatch", subagents: bool = False, *, engine: str | None = None,
                project_store: str | None = None) -> IngestResult:
    """The interaction log of Claude Code transcripts.

    Parameters
    ----------
    path : a ``.jsonl`` transcript, a project folder, or ``~/.claude/projects`` whole.
    server : the name thatch's MCP server is registered under (its tools are
        ``mcp__<server>__<tool>``).
    subagents : also read subagent transcripts and sidechain records (their
        prompts are the main agent's delegations, in sessions named
        ``<session>:<agent id>``).
    engine : ``"prediction"`` or ``"behavior"`` to keep only that engine's
        statements in ``surfaced`` (the replay of one engine compares its own
        items); None keeps both blocks' statements.
    project_store : the store to write on rows that name none: a name, or
        ``"cwd"`` for the last part of each record's working directory (what
        the thatch server calls the project); None leaves them null (the
        replay's project store).

    Returns
    -------
    IngestResult
        ``log`` is the interaction log: one ``message`` row per typed prompt
        (``record_id`` its record's uuid; ``surfaced``, ``logged_nudge`` and
        ``logged_items`` from the nudge blocks next to it), one row per thatch
        tool call (``kind`` the tool's name, its arguments in the log's
        columns and the others as JSON in ``args``, ``record_id`` the call's
        id, ``logged_reply`` the text of its ``tool_result``); a ``cwd``
        column. Rows follow time order. ``read`` and ``skipped`` count what
        was read and what was left out, by reason.

    Raises
    ------
    LogValidationError
        For a missing path, or a broken line in the middle of a file that may
        hold a prompt, a thatch call or a nudge (a broken last line is a
        session being written and is counted; other broken lines are
        counted too).

    Examples
    --------
    >>> import json, tempfile, pathlib
    >>> recs = [
    ...   {"type": "user", "uuid": "u1", "sessionId": "s1", "timestamp": "2026-01-05T09:00:00Z",
    ...    "message": {"role": "user", "content": "please add tests for the parser"}},
    ...   {"type": "attachment", "uuid": "a1", "parentUuid": "u1", "timestamp": "2026-01-05T09:00:00Z",
    ...    "attachment": {"type": "hook_additional_context", "hookEvent": "UserPromptSubmit", "content": [
    ...      "[thatch] User decision model\\n- [0.58 conf, 1 tests] When writing tests: you tend to use pytest"]}},
    ...   {"type": "assistant", "uuid": "x1", "sessionId": "s1", "timestamp": "2026-01-05T09:00:05Z",
    ...    "message": {"content": [{"type": "tool_use", "id": "toolu_1", "name": "mcp__thatch__prediction_update",
    ...      "input": {"matcher": "writing tests", "prediction": "use pytest", "signal": "confirm"}}]}},
    ...   {"type": "user", "uuid": "t1", "sessionId": "s1", "timestamp": "2026-01-05T09:00:06Z",
    ...    "message": {"content": [{"type": "tool_result", "tool_use_id": "toolu_1",
    ...      "content": [{"type": "text", "text": "[confirm] \\"use pytest\\" confidence=0.67 (2/0)"}]}]}},
    ...   {"type": "mystery"}]
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (d / "s1.jsonl").write_text("\\n".join(json.dumps(r) for r in recs) + "\\n")
    >>> res = claude_code(d)
    >>> res.log[["kind", "text", "statement"]].values.tolist()
    [['message', 'please add tests for the parser', None], ['prediction_update', None, 'use pytest']]
    >>> res.log["surfaced"][0], res.log["logged_reply"][1]
    (['use pytest'], '[confirm] "use pytest" confidence=0.67 (2/0)')
    >>> dict(res.skipped)
    {"record type 'mystery'": 1}
    """
    if not isinstance(server, str) or not server:
        raise LogValidationError(f"server: expected the MCP server's name, got {server!r}")
    if engine not in (None, "prediction", "behavior"):
        raise LogValidationError(f"engine: expected None, 'prediction' or 'behavior', got {engine!r}")
    prefix = f"mcp__{server}__"
    result = IngestResult(log=None)
    files = _transcripts(path, subagents, result.skipped)
    rows, seen = [], set()
    bar = progress(files, total=len(files), desc="transcripts", enabled=None if len(files) > _BAR_FILES else False)
    for f in bar:
        result.read["files"] += 1
        s = _Session(f, prefix, subagents, result, seen, rows)
        for n, rec in _lines(f, prefix, result.skipped):
            result.read["records"] += 1
            s.record(rec, n)
        s.finish(engine)
    fill_store(rows, project_store)
    result.log = finish_log(rows, result.skipped, source=str(path))
    result.tables = {"interactions": result.log}
    return result
