"""Claude Code session transcripts → the interaction log.

Claude Code appends one JSON record a line to
``~/.claude/projects/<project folder>/<session id>.jsonl`` while a session
runs (subagents in ``<session id>/subagents/agent-*.jsonl``, older versions
``agent-*.jsonl`` beside it). Records are read by key, never by position (the
key order changes between versions):

- ``user`` records hold a prompt (``message.content`` a string, or a list of
  blocks whose ``text`` blocks carry the typed text *and* the IDE's context:
  ``<ide_opened_file>``, ``<ide_selection>``, ``<ide_diagnostics>``,
  ``<system-reminder>``), or ``tool_result`` blocks answering tool calls
  (``tool_use_id``, ``content``, ``is_error``; the record's ``toolUseResult``
  is ``"User rejected tool use"`` when the user said no at the permission
  prompt, ``"Error: ..."`` in older versions);
- ``assistant`` records hold one content block each (``text``, ``thinking``,
  ``tool_use`` with ``id``, ``name``, ``input``);
- ``attachment`` records hold hook output (``hook_success`` with the plain
  stdout thatch's ``flush-tools`` prints, ``hook_additional_context`` for JSON
  output, with ``hookEvent``), ``system`` and ``progress`` records the host's
  own notes; ``queued_command`` attachments and ``queue-operation`` records
  hold the prompts typed while the agent worked
  (:mod:`~thatchlab.logs.ingest._cc_queue`); ``summary``,
  ``file-history-snapshot`` and other bookkeeping records carry nothing for
  the log.

Commands (``<command-name>``), their output, ``[Request interrupted by
user]`` markers and compaction summaries (``isCompactSummary``, "This
session is being continued from a previous conversation...") are written by
the host, not typed: they are not prompts. A thatch call that never ran (a
``tool_result`` with ``is_error: true``: rejected, or an error of the server;
or no result yet in a file still being written) is a row with its reason in
``skip_reason``, which a replay skips.

thatch runs as the MCP server ``thatch`` (tools ``mcp__thatch__<tool>``, or
under a plugin's prefix or plain names: :mod:`~thatchlab.logs.ingest._names`);
its ``UserPromptSubmit`` hook prints the nudge blocks, which the host records
after the prompt, before the assistant's reply. Sub-agents' records
(sidechains) are the main agent's delegations and the sub-agent's own calls;
``--resume``/``--continue`` and forks start files that repeat earlier
records (:mod:`~thatchlab.logs.ingest._cc_sessions`).

Examples
--------
>>> import json, tempfile, pathlib
>>> recs = [
...   {"type": "user", "uuid": "u1", "sessionId": "s1", "timestamp": "2026-01-05T09:00:00Z", "cwd": "/x/app",
...    "message": {"role": "user", "content": [
...      {"type": "text", "text": "<ide_opened_file>The user opened parser.py</ide_opened_file>"},
...      {"type": "text", "text": "please add tests for the parser"}]}},
...   {"type": "attachment", "uuid": "a1", "parentUuid": "u1", "timestamp": "2026-01-05T09:00:00Z",
...    "attachment": {"type": "hook_success", "hookEvent": "UserPromptSubmit", "content":
...      "[thatch] User decision model\\n- [0.58 conf, 1 tests] When writing tests: you tend to use pytest"}},
...   {"type": "assistant", "uuid": "x1", "sessionId": "s1", "timestamp": "2026-01-05T09:00:05Z",
...    "message": {"content": [{"type": "tool_use", "id": "toolu_1", "name": "mcp__thatch__prediction_update",
...      "input": {"matcher": "writing tests", "prediction": "use pytest", "signal": "disconfirm"}}]}},
...   {"type": "user", "uuid": "t1", "sessionId": "s1", "timestamp": "2026-01-05T09:00:06Z",
...    "toolUseResult": "User rejected tool use", "message": {"content": [{"type": "tool_result",
...      "tool_use_id": "toolu_1", "is_error": True, "content": "The user doesn't want to proceed with this "
...      "tool use. The tool use was rejected."}]}}]
>>> d = pathlib.Path(tempfile.mkdtemp())
>>> _ = (d / "s1.jsonl").write_text("\\n".join(json.dumps(r) for r in recs) + "\\n")
>>> res = claude_code(d, project_store="cwd")
>>> res.log[["kind", "text", "store", "skip_reason"]].values.tolist()
[['message', 'please add tests for the parser', 'app', None], ['prediction_update', None, 'app', 'rejected by the user']]
>>> res.log["surfaced"][0], dict(res.not_run), dict(res.stripped)
(['use pytest'], {'rejected by the user': 1}, {'ide_opened_file': 1})
"""

from __future__ import annotations

import json
import os
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from thatchlab.core.errors import LogValidationError
from thatchlab.core.progress import progress
from thatchlab.logs.ingest._cc_queue import QueueBook
from thatchlab.logs.ingest._cc_sessions import COPIED, record_key, scan
from thatchlab.logs.ingest._names import looks_like_thatch, server_name, subagent_mode, thatch_tool
from thatchlab.logs.ingest._nudge import split_prompt
from thatchlab.logs.ingest._stores import StoreEvidence, name_stores
from thatchlab.logs.ingest._tools import (
    SKIP_REASONS,
    THATCH_TOOLS,
    ContentIds,
    IngestResult,
    finish_log,
    mark_not_run,
    message_row,
    tool_row,
)

__all__ = ["claude_code", "strip_host_context", "not_run_reason"]

#: Record types that carry nothing the interaction log needs (read, not skipped).
_QUIET_TYPES = ("summary", "file-history-snapshot", "progress", "permission-mode",
                "custom-title", "ai-title", "checkpoint", "result", "tag", "agent-name", "last-prompt",
                "pr-link", "agent-setting", "mode", "turn_end")
#: Prompt texts the host writes itself: slash commands, their output, bash mode, notices.
_NOT_TYPED = ("<command-name>", "<command-message>", "<command-args>", "<local-command-stdout>",
              "<local-command-stderr>", "<local-command-caveat>", "<bash-input>", "<bash-stdout>",
              "<bash-stderr>", "<task-notification>",
              "Caveat: The messages below were generated by the user while running local commands")
_INTERRUPTED = ("[Request interrupted by user", "[Interrupted by the user")
_COMPACTED = "This session is being continued from a previous conversation"
#: Context the host (IDE, harness, hooks) puts in the prompt's own content; cut out and counted.
_CONTEXT = re.compile(r"<(ide_opened_file|ide_selection|ide_diagnostics|system-reminder|post-tool-use-hook|"
                      r"user-prompt-submit-hook)>(.*?)</\1>", re.DOTALL)
#: The tool_result texts of a call the user (or a permission rule) refused.
_REFUSED = ("The user doesn't want to proceed with this tool use", "Permission for this tool use was denied",
            "The user doesn't want to take this action right now")
_PROMPT_HOOKS = (None, "UserPromptSubmit")
_SUBAGENT_PROMPT = "sub-agent prompt (a delegation from the main agent, not typed by the user)"
_COMPACT_PROMPT = "compaction agent prompt (Claude Code's own summary writer)"
#: How the compaction agent's prompt begins (marot/spotter test/fixtures/transcripts/…/agent-acompact-e1f845.jsonl).
_SUMMARY_TASK = "Your task is to create a detailed summary of the conversation so far"
_FORMS = {"mcp": "mcp__<server>__<tool>", "plugin": "mcp__plugin_<plugin>_<server>__<tool>",
          "host": "<server>_<tool>", "plain": "<tool> (no prefix)"}
#: Files above this many get a progress bar.
_BAR_FILES = 20


def strip_host_context(text: str, stripped: Counter) -> tuple[str, list[str]]:
    """``(typed text, hook texts)`` of one text block: host context cut out and counted by tag.

    >>> c = Counter()
    >>> strip_host_context("<ide_selection>lines 3-4 of a.py</ide_selection>\\nrename this", c), dict(c)
    (('rename this', []), {'ide_selection': 1})
    """
    hooks: list[str] = []

    def cut(m):
        stripped[m.group(1)] += 1
        if m.group(1) == "user-prompt-submit-hook":
            hooks.append(m.group(2))
        return ""

    out = _CONTEXT.sub(cut, text)
    return (out.strip() if out != text else out), hooks


def not_run_reason(block: dict, rec: dict):
    """Why the call a ``tool_result`` block answers never ran (None when it ran).

    ``is_error`` results are calls that did not run: refused by the user
    (``toolUseResult`` ``"User rejected tool use"``, a denial kind, or the
    refusal text) or failed (an MCP error, a validation error).

    >>> not_run_reason({"is_error": True, "content": "x"}, {"toolUseResult": "User rejected tool use"})
    'rejected by the user'
    >>> not_run_reason({"is_error": True, "content": "Invalid arguments: signal"}, {}), not_run_reason({}, {})
    ('tool error', None)
    """
    if block.get("is_error") is not True:
        return None
    text = _result_text(block.get("content"))
    use = rec.get("toolUseResult")
    if rec.get("toolDenialKind") or use == "User rejected tool use" or text.startswith(_REFUSED) \
            or (isinstance(use, str) and use.startswith(tuple(f"Error: {r}" for r in _REFUSED))):
        return SKIP_REASONS["rejected"]
    return SKIP_REASONS["error"]


@dataclass
class _Prompt:
    ts: str
    session: str
    record_id: str
    cwd: str | None
    text: str
    hooks: list = field(default_factory=list)


def _hook_texts(rec: dict) -> tuple[str | None, list[str]]:
    """``(hook event, thatch texts)`` of an attachment or system record (each distinct text once)."""
    body = rec.get("attachment") if rec.get("type") == "attachment" else rec
    if not isinstance(body, dict):
        return None, []
    event = body.get("hookEvent") if isinstance(body.get("hookEvent"), str) else None
    texts = [s for s in _strings({k: v for k, v in body.items() if k != "command"}, []) if "[thatch] " in s]
    return event, list(dict.fromkeys(texts))


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
        elif ("subagents" in parts or f.name.startswith("agent-")) and not subagents:
            skipped["subagent transcript file"] += 1
        else:
            out.append(f)
    return out


def _slim(block: dict, rec: dict) -> tuple[dict, dict]:
    """What pairing a ``tool_result`` with its call reads of the block and its record (nothing else kept)."""
    return ({"tool_use_id": block.get("tool_use_id"), "is_error": block.get("is_error"),
             "content": _result_text(block.get("content"))},
            {k: rec[k] for k in ("toolUseResult", "toolDenialKind") if k in rec and not isinstance(rec[k], dict)})


class _Reader:
    """The records of all transcript files, read in turn; state kept per file where it is per file."""

    def __init__(self, server: str, subagents: str, result: IngestResult, owners=None):
        self.server, self.subagents, self.result = server, subagents, result
        self.owners = owners or {}
        self.unrecognised: dict = {}   # file → tool names that look like thatch's under another server
        self.read, self.skipped = result.read, result.skipped
        self.seen: set = set()
        self.rows: list = []
        self.prompts: list[_Prompt] = []
        self.evidence = StoreEvidence()
        self.prompt_ids = ContentIds("claude-code-prompt")
        self.queued_ids = ContentIds("claude-code-queued")
        self.pending: dict = {}        # tool_use id → row awaiting its result
        self.calls: set = set()        # every tool_use id read (any tool's)
        self.order: list = []          # prompts and call rows in file order (the tie-break of equal times)
        self.other_calls: dict = {}    # tool_use id → (session, explicit store) of thatch's other tools
        self.new_file(None)

    def new_file(self, path):
        self.path = path
        self.owner: dict = {}          # record uuid → the prompt it (or its hook output) belongs to
        self.open: _Prompt | None = None
        self.loose: list[str] = []     # prompt-hook text seen before its prompt
        self.queue = QueueBook(self.skipped, self.read)
        self.chain: dict = {}          # a 1.0 sidechain record's uuid → the uuid its sub-agent began with
        self.file_hooks = self.file_calls = 0
        self.file_candidates: list = []
        self.early: dict = {}          # tool_use id → (block, record) of a result read before its call

    def end_file(self):
        """The file has ended: its queued prompts become rows, and a file with thatch's hook output but
        no call under a recognised name is remembered (the tools may be registered under another name)."""
        for q in self.queue.close():
            self.queued_prompt(q)
        if self.path is not None and self.file_hooks and not self.file_calls and self.file_candidates:
            self.unrecognised[self.path] = sorted(set(self.file_candidates))

    # ------------------------------------------------------------------ records
    def record(self, rec: dict):
        t = rec.get("type")
        self.result.found[t if isinstance(t, str) else "(no type)"] += 1
        u = record_key(rec) if self.owners else None
        if u is not None and self.owners.get(u, self.path) != self.path:
            self.skipped[COPIED] += 1
            return
        if rec.get("isSidechain") and self.subagents == "none" and t in ("user", "assistant", "attachment", "system"):
            self.skipped["sidechain record"] += 1
            return
        if rec.get("isSidechain"):
            self._chain(rec)
        body = rec.get("attachment") if t == "attachment" else None
        if t == "queue-operation":
            self.read["queue operations"] += 1
            self.queue.operation(rec, self._loose_where)
        elif isinstance(body, dict) and body.get("type") == "queued_command":
            self.read["queued_command attachments"] += 1
            self.queue.attachment(rec, body, self._loose_where)
            if isinstance(rec.get("uuid"), str) and rec["uuid"]:  # hook output recorded for it joins it
                self.owner[rec["uuid"]] = _Prompt(None, None, rec["uuid"], None, "")
        elif t == "user":
            self.user(rec)
        elif t == "assistant":
            self.assistant(rec)
        elif t in ("attachment", "system"):
            event, texts = _hook_texts(rec)
            if texts:
                self.read["thatch hook outputs"] += 1
                self.file_hooks += 1
                session = self._session(rec)
                for text in texts:
                    self.evidence.see(session, text)
                if event in _PROMPT_HOOKS:
                    self.hook(texts, rec)
            else:
                self.read[f"{t} records"] += 1
        elif t in _QUIET_TYPES:
            self.read["other records"] += 1
        else:
            self.skipped[f"record type {t!r}" if isinstance(t, str) else "record without a type"] += 1

    def _session(self, rec):
        session = rec.get("sessionId") if isinstance(rec.get("sessionId"), str) and rec["sessionId"] else \
            self.path.stem
        cwd = rec.get("cwd") if isinstance(rec.get("cwd"), str) and rec["cwd"] else None
        self.evidence.project_dir(session, cwd)
        self.evidence.branch(session, rec.get("gitBranch"))
        agent = self._agent(rec)
        if agent is not None:
            sub = f"{session}:{agent}"
            self.evidence.alias(sub, session)  # the same server, so the same project store
            return sub
        return session

    def _chain(self, rec):
        """Remember which sub-agent a 1.0 sidechain record belongs to: the uuid its chain began with
        (1.0 wrote sub-agents' records into the main file without an ``agentId``)."""
        u, parent = rec.get("uuid"), rec.get("parentUuid")
        if isinstance(u, str) and u and u not in self.chain:
            self.chain[u] = self.chain.get(parent, u) if isinstance(parent, str) else u

    def _agent(self, rec):
        """The sub-agent a record belongs to (its ``agentId``, or ``sidechain-<first uuid>``), or None."""
        if not rec.get("isSidechain"):
            return None
        if isinstance(rec.get("agentId"), str) and rec["agentId"]:
            return rec["agentId"]
        root = self.chain.get(rec.get("uuid"))
        return f"sidechain-{root[:8]}" if isinstance(root, str) else "sidechain"

    def _loose_where(self, rec):
        """``(ts, session, cwd)`` of a record that may lack a time (counted when the row needs one)."""
        ts = rec.get("timestamp") if isinstance(rec.get("timestamp"), str) and rec["timestamp"] else None
        cwd = rec.get("cwd") if isinstance(rec.get("cwd"), str) else None
        return ts, self._session(rec), cwd

    def queued_prompt(self, q):
        """A prompt typed while the agent worked, sent into a running turn: a row of its own. What
        thatch's hook printed for it is known only when the host recorded hook output under its
        attachment; else ``logged_nudge`` is null (unknown)."""
        local = Counter()
        head, _ = strip_host_context(q.text, local)
        first = head.strip()
        reason = ("interruption record" if first.startswith(_INTERRUPTED) else
                  "command or local-command record" if first.startswith(_NOT_TYPED) else
                  "queued prompt without typed text (host context only)" if not first else None)
        if reason is not None:
            self.skipped[reason] += 1
            return
        if q.ts is None:
            self.skipped["record without a timestamp"] += 1
            return
        uuid = q.uuid or self.queued_ids(q.session, q.ts, head)
        if uuid in self.seen:
            self.skipped["duplicate record"] += 1
            return
        self.seen.add(uuid)
        self.result.stripped.update(local)
        sink = self.owner.get(q.uuid) if q.uuid is not None else None
        p = _Prompt(q.ts, q.session, uuid, q.cwd, head, hooks=list(sink.hooks) if sink is not None else [])
        self.prompts.append(p)
        self.order.append(p)  # its own time places it; file order only breaks ties
        self.read["prompts typed while the agent worked (queued)"] += 1
        if q.uuid is not None:
            self.owner[q.uuid] = p

    def _where(self, rec):
        ts = rec.get("timestamp")
        if not isinstance(ts, str) or not ts:
            self.skipped["record without a timestamp"] += 1
            return None
        cwd = rec.get("cwd") if isinstance(rec.get("cwd"), str) else None
        return ts, self._session(rec), cwd

    def hook(self, texts, rec):
        parent = rec.get("parentUuid")
        target = self.owner.get(parent) if isinstance(parent, str) else None
        target = target or self.open
        if target is None:
            self.loose.extend(texts)
            return
        target.hooks.extend(texts)
        if isinstance(rec.get("uuid"), str):
            self.owner[rec["uuid"]] = target

    def user(self, rec):
        content = rec["message"].get("content") if isinstance(rec.get("message"), dict) else None
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
        if not isinstance(blocks, list):
            self.skipped["user record without content"] += 1
            return
        texts = []
        for b in blocks:
            if not isinstance(b, dict):
                self.skipped["content block that is not an object"] += 1
            elif b.get("type") == "tool_result":
                self.tool_result(b, rec)
            elif b.get("type") == "text" and isinstance(b.get("text"), str):
                texts.append(b["text"])
            else:
                self.read["other content blocks"] += 1
        if texts:
            self.prompt(rec, texts)

    def prompt(self, rec, texts):
        if not rec.get("isSidechain"):
            self.queue.delivered("\n".join(texts))
        parts, hooks = [], []
        local = Counter()  # what is cut out, counted once the record is kept
        for text in texts:
            head, hook = split_prompt(text)  # hosts that appended the hook output to the prompt
            if hook:
                hooks.append(hook)
            head, inline = strip_host_context(head, local)
            hooks.extend(inline)
            if head.strip():
                parts.append(head)
        prompt = "\n".join(parts)
        first = prompt.lstrip()
        reason = ("meta record" if rec.get("isMeta") else
                  "compaction summary" if rec.get("isCompactSummary") or first.startswith(_COMPACTED) else
                  "interruption record" if first.startswith(_INTERRUPTED) else
                  "command or local-command record" if first.startswith(_NOT_TYPED) else
                  "prompt without typed text (host context only)" if not first else None)
        agent = self._agent(rec)
        if reason is None and agent is not None and (agent.startswith("acompact") or first.startswith(_SUMMARY_TASK)):
            reason = _COMPACT_PROMPT
        elif reason is None and agent is not None and self.subagents != "all":
            reason = _SUBAGENT_PROMPT
        if reason is not None:
            if hooks:
                self.hook(hooks, rec)
            self.skipped[reason] += 1
            return
        where = self._where(rec)
        if where is None:
            return
        ts, session, cwd = where
        uuid = rec.get("uuid") if isinstance(rec.get("uuid"), str) and rec["uuid"] else None
        if uuid is None:
            self.read["prompts without a uuid (content id given)"] += 1
            uuid = self.prompt_ids(session, ts, prompt)
        if uuid in self.seen:
            self.skipped["duplicate record"] += 1
            return
        self.seen.add(uuid)
        self.result.stripped.update(local)
        p = _Prompt(ts, session, uuid, cwd, prompt, hooks=self.loose + hooks)
        self.loose = []
        self.prompts.append(p)
        self.order.append(p)
        self.owner[uuid] = p
        self.open = p

    def assistant(self, rec):
        self.open, self.loose = None, []
        content = rec["message"].get("content") if isinstance(rec.get("message"), dict) else None
        if not isinstance(content, list):
            return
        for b in content:
            if not isinstance(b, dict) or b.get("type") != "tool_use":
                continue
            if isinstance(b.get("id"), str):
                self.calls.add(b["id"])
            name = b.get("name")
            found = thatch_tool(name, self.server)
            if found is None:
                self.read["other tool calls"] += 1
                if looks_like_thatch(name):
                    self.file_candidates.append(name)
                continue
            call_id = b.get("id") if isinstance(b.get("id"), str) and b["id"] else None
            if call_id is None:
                self.skipped["thatch tool call without an id"] += 1
                continue
            if call_id in self.seen:
                self.skipped["duplicate record"] += 1
                continue
            where = self._where(rec)
            if where is None:
                continue
            self.seen.add(call_id)
            kind = found[0]
            self.file_calls += 1
            self.read[f"thatch tool calls named {_FORMS[found[1]]}"] += 1
            args = b.get("input") if isinstance(b.get("input"), dict) else {}
            if kind not in THATCH_TOOLS:  # the memory, chat... tools: not log rows, but their replies name stores
                self.other_calls[call_id] = (where[1], args.get("store"))
                self.read["other thatch tool calls"] += 1
            else:
                row = tool_row(kind, args, ts=where[0], session=where[1], record_id=call_id, cwd=where[2])
                self.pending[call_id] = row
                self.rows.append(row)
                self.order.append(row)
                self.read["thatch tool calls"] += 1
            if call_id in self.early:  # its result came first in the file (hosts write results out of order)
                self.tool_result(*self.early.pop(call_id))

    def tool_result(self, b, rec):
        call_id = b.get("tool_use_id")
        if isinstance(call_id, str) and call_id not in self.calls:
            self.early.setdefault(call_id, _slim(b, rec))  # kept (what pairing needs) until its call is read
            return
        text = _result_text(b.get("content"))
        if call_id in self.other_calls:
            session, store = self.other_calls.pop(call_id)
            if b.get("is_error") is not True:
                self.evidence.see(session, text, explicit_store=store)
            return
        row = self.pending.pop(call_id, None)
        if row is None:
            return
        row["logged_reply"] = text
        reason = not_run_reason(b, rec)
        if reason is not None:
            mark_not_run(row, reason, self.result)
        else:
            self.evidence.see(row["session"], text, explicit_store=row["store"])

    def finish(self, engine):
        rows = []  # in file order: a stable sort by time keeps it where times are equal
        for item in self.order:
            if not isinstance(item, _Prompt):
                rows.append(item)
                continue
            p = item
            row = message_row(p.text, p.hooks, ts=p.ts, session=p.session, record_id=p.record_id, cwd=p.cwd,
                              engine=engine)
            self.read["prompts"] += 1
            self.read["prompts with thatch's hook output"] += row["logged_nudge"] is not None
            rows.append(row)
        self.rows = rows
        for row in self.pending.values():  # a session still being written, or a call cut off
            mark_not_run(row, SKIP_REASONS["no_result"], self.result)
        for row in self.rows:  # a sidechain's rows: a sub-agent the model dispatched (Task)
            if row["session"] in self.evidence.aliases:
                row["subagent"] = "task"
        if self.loose:
            self.skipped["hook output without a prompt"] += 1


def _warn_unrecognised(found: dict, server: str, result) -> None:
    """One warning for the transcripts that hold thatch's hook output but no call to a recognised name."""
    if not found:
        return
    files = sorted(found, key=str)
    names = sorted({n for f in files for n in found[f]})
    result.read["transcripts with thatch's hook output and no recognised call"] += len(files)
    shown = ", ".join(Path(f).name for f in files[:3]) + (f" and {len(files) - 3} more" if len(files) > 3 else "")
    result.warnings.append(
        f"{len(files)} transcript(s) hold thatch's hook output but no call to thatch's tools under --server "
        f"{server!r} ({shown}); tool names that look like thatch's: {', '.join(names[:5])}: pass --server with "
        "the name the host registered thatch under")


def _matters(raw: bytes, prefix: str) -> bool:
    """Whether a broken line may hold a prompt, a thatch tool call or a nudge (unsafe to skip)."""
    if prefix.encode() in raw or b"[thatch] " in raw or b"prediction_" in raw or b"behavior_" in raw:
        return True
    if b"queue-operation" in raw or b"queued_command" in raw:
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


def claude_code(path, server: str = "thatch", subagents="calls", *, engine: str | None = None,
                project_store: str | None = "auto") -> IngestResult:
    """The interaction log of Claude Code transcripts.

    Parameters
    ----------
    path : str or path-like
        A ``.jsonl`` transcript, a project folder, or ``~/.claude/projects`` whole.
    server : str, default="thatch"
        The name thatch's MCP server is registered under, bare
        (``thatch``) or as a prefix (``mcp__plugin_thatch_thatch__``). Its
        tools are read under every name a host gives them
        (:mod:`~thatchlab.logs.ingest._names`: ``mcp__<server>__<tool>``,
        ``mcp__plugin_<plugin>_<server>__<tool>``, ``<server>_<tool>`` and the
        plain tool name); a file with thatch's hook output where no call is
        recognised gets a warning naming the tool names that look like
        thatch's.
    subagents : {"calls", "all", "none"} or bool, default="calls"
        What is read of sub-agents (``subagents/agent-*.jsonl`` files
        of 2.x, ``agent-*.jsonl`` beside the session in 2.0, sidechain records
        in the main file in 1.0), whose rows are in sessions named
        ``<session>:<agent id>`` (``<session>:sidechain-<uuid prefix>`` in 1.0)
        with ``subagent`` ``"task"``. ``"calls"`` (the default: what
        production experienced): thatch calls made inside a sub-agent are
        rows, since they changed production's state; the prompts a sub-agent
        receives are the main agent's delegations, not the user's, and are
        counted, not rows. ``"all"`` (or True): the delegation prompts too, as
        message rows (thatch's prompt hook never ran on them). ``"none"`` (or
        False): nothing of sub-agents (files and records counted). Claude
        Code's own compaction agents (``agent-acompact-*``) never give a
        prompt row.
    engine : {"prediction", "behavior"}, optional
        Keep only that engine's statements in ``surfaced`` (the replay of one
        engine compares its own items); None keeps both blocks' statements.
    project_store : str or None, default="auto"
        The store of rows whose call named none. ``"auto"`` names
        it as thatch did (:mod:`thatchlab.logs.ingest._stores`: the store
        production's own replies name in the session, else ``owner/repo`` of
        the project directory's git origin when it exists here, else the
        folder name with a warning); ``"cwd"`` the folder name; another text
        that store; None leaves them null (the replay's project store).

    Returns
    -------
    IngestResult
        ``log`` is the interaction log: one ``message`` row per typed prompt
        (``record_id`` its record's uuid; ``text`` what the user typed, the
        host's context cut out and counted in ``stripped``; ``surfaced``,
        ``logged_nudge`` and ``logged_items`` from thatch's hook output after
        it, empty when it surfaced nothing, null when none was recorded), one
        row per thatch tool call (``kind`` the tool's name, its arguments in
        the log's columns and the others as JSON in ``args``, ``record_id``
        the call's id, ``logged_reply`` the text of its ``tool_result``,
        ``skip_reason`` set when it never ran, counted in ``not_run``); a
        ``cwd`` column. Rows follow time order. A prompt typed while the
        agent worked (queued: ``queue-operation`` records, ``queued_command``
        attachments, :mod:`~thatchlab.logs.ingest._cc_queue`) is a message row
        of its own when it was sent into a running turn; its nudge is unknown
        (null). A record that several files repeat (a resumed or forked
        session) counts once, in the session that wrote it first
        (:mod:`~thatchlab.logs.ingest._cc_sessions`).

    Raises
    ------
    LogValidationError
        For a missing path, or a broken line in the middle of a file that may
        hold a prompt, a thatch call or a nudge (a broken last line is a
        session being written and is counted; other broken lines are
        counted too).
    """
    _check_options(server, engine)
    subagents = subagent_mode(subagents)
    result = IngestResult(log=None)
    reader = _read_transcripts(path, server, subagents, result)
    reader.finish(engine)
    _warn_unrecognised(reader.unrecognised, server, result)
    name_stores(reader.rows, reader.evidence, project_store, result)
    result.log = finish_log(reader.rows, result.skipped, source=str(path))
    result.tables = {"interactions": result.log}
    return result


def _check_options(server, engine) -> None:
    if not isinstance(server, str) or not server:
        raise LogValidationError(f"server: expected the MCP server's name, got {server!r}")
    if engine not in (None, "prediction", "behavior"):
        raise LogValidationError(f"engine: expected None, 'prediction' or 'behavior', got {engine!r}")


def _read_transcripts(path, server: str, subagents: str, result: IngestResult) -> _Reader:
    """Every transcript under ``path`` through one reader, file by file; a record several files repeat counts once."""
    prefix = server_name(server)
    files = _transcripts(path, subagents != "none", result.skipped)
    if len(files) > 1:
        files, owners = scan(files, lambda f, c: _lines(f, prefix, c))
    else:
        owners = {}
    reader = _Reader(server, subagents, result, owners)
    bar = progress(files, total=len(files), desc="transcripts", enabled=None if len(files) > _BAR_FILES else False)
    for f in bar:
        result.read["files"] += 1
        reader.new_file(f)
        for _, rec in _lines(f, prefix, result.skipped):
            result.read["records"] += 1
            reader.record(rec)
        reader.end_file()
        if reader.loose:
            result.skipped["hook output without a prompt"] += 1
            reader.loose = []
    return reader
