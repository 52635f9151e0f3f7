"""Write the ingest corpus: transcripts in the shapes real Claude Code and opencode files have.

Every record here was written for thatchlab: the shapes (record types, keys
and their order, the texts the hosts write themselves) follow the public
fixtures and source cited in README.md beside this script; the sessions,
prompts, replies and ids are made up. Run from the repository root
(byte-identical output):

    .venv/bin/python tests/data/ingest_corpus/make_corpus.py
"""

from __future__ import annotations

import json
import shutil
import sqlite3
import uuid
from pathlib import Path

HERE = Path(__file__).resolve().parent
NS = uuid.UUID("6f2b7c1e-3d4a-5b6c-8d9e-0f1a2b3c4d5e")
NUDGE = ("[thatch] User decision model\n- [0.58 conf, 1 tests] When writing retry logic: you tend to use "
         "exponential backoff with jitter")
BEHAVIOR_NUDGE = "[thatch] Situational behaviors\n- [0.50 conf, 0 tests] When touching the cache: consider run the cache tests"
SUMMARY_TASK = ("Your task is to create a detailed summary of the conversation so far, paying close attention to the "
                "user's explicit requests and your previous actions.\nThis summary should be thorough.")


def uid(*parts) -> str:
    return str(uuid.uuid5(NS, "/".join(map(str, parts))))


def toolu(*parts) -> str:
    return "toolu_01" + uuid.uuid5(NS, "/".join(map(str, parts))).hex[:22]


def ts(minute: int, second: int = 0, day: int = 12) -> str:
    return f"2026-02-{day:02d}T10:{minute:02d}:{second:02d}.000Z"


class Session:
    """One Claude Code transcript file being written, records in the version's key order."""

    def __init__(self, sid, cwd, version="2.1.39", branch="main", agent=None, sidechain=False, stem=None):
        self.sid, self.cwd, self.version, self.branch = sid, cwd, version, branch
        self.agent, self.sidechain, self.stem = agent, sidechain, stem or sid
        self.lines: list[dict] = []
        self.last = None

    def _rec(self, kind, body, at, *, uuid_=None, parent="last", extra=None):
        u = uuid_ or uid(self.stem, len(self.lines), kind)
        rec = {"parentUuid": self.last if parent == "last" else parent, "isSidechain": self.sidechain,
               "userType": "external", "cwd": self.cwd, "sessionId": self.sid, "version": self.version,
               "gitBranch": self.branch}
        if self.agent is not None:
            rec["agentId"] = self.agent
        rec.update({"type": kind, **body, "uuid": u, "timestamp": at})
        rec.update(extra or {})
        self.lines.append(rec)
        self.last = u
        return u

    def prompt(self, text, at, **kw):
        return self._rec("user", {"message": {"role": "user", "content": text}}, at, **kw)

    def meta(self, text, at):
        return self._rec("user", {"message": {"role": "user", "content": text}}, at, extra={"isMeta": True})

    def hook(self, text, at, event="UserPromptSubmit"):
        return self._rec("attachment", {"attachment": {"type": "hook_success", "hookName": event, "toolUseID": uid(
            self.stem, "hook", at), "hookEvent": event, "content": text, "stdout": text, "stderr": "", "exitCode": 0}},
            at)

    def say(self, text, at):
        return self._rec("assistant", {"message": {"model": "claude-opus-4-6", "id": "msg_" + uid(at)[:20],
                                                   "type": "message", "role": "assistant",
                                                   "content": [{"type": "text", "text": text}]}}, at)

    def call(self, name, args, at, key):
        call_id = toolu(self.stem, key)
        self._rec("assistant", {"message": {"model": "claude-opus-4-6", "id": "msg_" + uid(at)[:20],
                                            "type": "message", "role": "assistant", "content": [
                                                {"type": "tool_use", "id": call_id, "name": name, "input": args}]}},
                  at)
        return call_id

    def result(self, call_id, text, at, error=False, use=None):
        extra = {"toolUseResult": use if use is not None else [{"type": "text", "text": text}]}
        block = {"tool_use_id": call_id, "type": "tool_result", "content": [{"type": "text", "text": text}]}
        if error:
            block["is_error"] = True
        return self._rec("user", {"message": {"role": "user", "content": [block]}}, at, extra=extra)

    def raw(self, rec):
        self.lines.append(rec)

    def queue(self, op, at, content=None, reason=None):
        rec = {"type": "queue-operation", "operation": op, "timestamp": at, "sessionId": self.sid}
        if content is not None:
            rec["content"] = content
        if reason is not None:
            rec["reason"] = reason
        self.lines.append(rec)

    def queued(self, prompt, at, mode="prompt", origin="human", with_uuid=True):
        body = {"type": "queued_command", "prompt": prompt, "commandMode": mode}
        if origin is not None:
            body["origin"] = {"kind": origin}
        if with_uuid:
            self._rec("attachment", {"attachment": body}, at)
        else:
            self.lines.append({"type": "attachment", "isSidechain": False, "attachment": body, "timestamp": at,
                               "sessionId": self.sid})

    def write(self, path: Path):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("".join(json.dumps(r, separators=(",", ":"), ensure_ascii=False) + "\n" for r in self.lines))


def created(store, statement, matcher):
    return f'[created] {store} :: "{statement}" for "{matcher}"'


def update(stmt, signal, matcher="writing retry logic"):
    return {"matcher": matcher, "prediction": stmt, "signal": signal, "rationale": "the user said so"}


# ----------------------------------------------------------------------------- Claude Code cases
def cc_queue_absorbed(root):
    """2.1.x: prompts typed while the agent worked, every way the queue ends."""
    s = Session(uid("c01"), "/home/dev/orbit")
    s.prompt("add retries to the upload client", ts(0))
    s.hook(NUDGE, ts(0, 1))
    c = s.call("mcp__thatch__prediction_update", update("use exponential backoff with jitter", "create"), ts(0, 5), 1)
    s.result(c, created("acme/orbit", "use exponential backoff with jitter", "writing retry logic"), ts(0, 6))
    s.queue("enqueue", ts(1), "also cover the retry path in the tests")
    s.queued("also cover the retry path in the tests", ts(1))  # the attachment, dated when the prompt was accepted
    s.queue("remove", ts(1, 30), "also cover the retry path in the tests", reason="absorbed_mid_turn")
    s.queue("enqueue", ts(2), "never mind the timeout")
    s.queue("popAll", ts(2, 10))
    s.queue("enqueue", ts(3), "<task-notification>\n<task-id>b1</task-id>\n<status>completed</status>\n"
                              "</task-notification>")
    s.queue("remove", ts(3, 1), "<task-notification>\n<task-id>b1</task-id>\n<status>completed</status>\n"
                                "</task-notification>")
    s.say("Done with the retries.", ts(4))
    s.queue("enqueue", ts(4, 10), "use the staging config")
    s.queue("dequeue", ts(4, 20))
    s.prompt("use the staging config", ts(4, 21))
    s.queue("enqueue", ts(5), "check the upload logs too")  # still queued when the file was copied
    s.write(root / "-home-dev-orbit" / f"{s.sid}.jsonl")


def cc_queue_attachments(root):
    """Newer 2.1: queued prompts as queued_command attachments only, some without a uuid."""
    s = Session(uid("c02"), "/home/dev/orbit", version="2.1.229")
    s.prompt("refactor the cache layer", ts(10))
    s.hook(BEHAVIOR_NUDGE, ts(10, 1))
    c = s.call("mcp__thatch__behavior_feedback", {"behavior": "run the cache tests", "relevant": True,
                                                   "context": "ran them before the refactor"}, ts(10, 5), 1)
    s.result(c, '[confirm] "run the cache tests" confidence=0.58 (1/0)', ts(10, 6))
    s.queued("keep the public API unchanged", ts(11), with_uuid=False)
    s.queue("remove", ts(11, 2), "keep the public API unchanged", reason="absorbed_mid_turn")
    s.queued("and log the evictions", ts(12))
    s.queued("agent ana-1 finished the review", ts(12, 30), origin="peer")
    s.queued("<task-notification><task-id>w1</task-id><status>completed</status></task-notification>", ts(13),
             mode="task-notification", origin=None)
    s.queued([{"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="}}],
             ts(13, 30))
    s.write(root / "-home-dev-orbit" / f"{s.sid}.jsonl")


def cc_queue_lost(root):
    """2.1.2xx: a dequeued prompt no user record follows (lost), a queued /compact never run."""
    s = Session(uid("c03"), "/home/dev/orbit", version="2.1.227")
    s.prompt("build the docker image", ts(20))
    s.call("Bash", {"command": "docker buildx build ."}, ts(20, 5), 1)
    s.queue("enqueue", ts(21), "why is this taking so long")
    s.queue("dequeue", ts(22))
    s.queue("enqueue", ts(22, 30), "/compact")
    s.queue("dequeue", ts(22, 40))
    s.result(toolu(s.stem, 1), "built", ts(23))
    c = s.call("mcp__thatch__prediction_update", update("use exponential backoff with jitter", "confirm"), ts(24), 2)
    s.result(c, '[confirm] "use exponential backoff with jitter" confidence=0.62 (2/0)', ts(24, 1))
    s.prompt("push it to the registry", ts(25))
    s.write(root / "-home-dev-orbit" / f"{s.sid}.jsonl")


def cc_subagents_2x(root):
    """2.1.39: a sub-agent file whose thatch calls changed production's state, and a compaction agent."""
    sid = uid("c04")
    s = Session(sid, "/home/dev/orbit")
    s.prompt("find every caller of the retry helper", ts(30))
    task = s.call("Task", {"description": "find callers", "prompt": "List every caller of retry_upload",
                           "subagent_type": "Explore"}, ts(30, 5), 1)
    a = Session(sid, "/home/dev/orbit", agent="a71c0de", sidechain=True, stem="agent-a71c0de")
    a.prompt("List every caller of retry_upload", ts(30, 6), parent=None)
    q = a.call("mcp__thatch__prediction_query", {"context": "callers of the retry helper"}, ts(30, 8), 1)
    a.result(q, "No predictions match.", ts(30, 9))
    u = a.call("mcp__thatch__prediction_update", update("use exponential backoff with jitter", "confirm"),
               ts(30, 20), 2)
    a.result(u, '[confirm] "use exponential backoff with jitter" confidence=0.62 (2/0)', ts(30, 21))
    a.say("Two callers: upload.py and sync.py.", ts(30, 30))
    s.result(task, "Two callers: upload.py and sync.py.\nagentId: a71c0de", ts(30, 31))
    k = Session(sid, "/home/dev/orbit", agent="acompact-5e1f00", sidechain=True, stem="agent-acompact-5e1f00")
    k.meta("<system-reminder>\nPostToolUse:Edit hook additional context: lint passed\n</system-reminder>", ts(40))
    k.prompt(SUMMARY_TASK, ts(40, 1))
    k.say("<summary>1. Primary Request: retries in the upload client.</summary>", ts(40, 30))
    s.raw({"parentUuid": None, "logicalParentUuid": s.last, "isSidechain": False, "userType": "external",
           "cwd": "/home/dev/orbit", "sessionId": sid, "version": "2.1.39", "gitBranch": "main", "type": "system",
           "subtype": "compact_boundary", "content": "Conversation compacted", "isMeta": False,
           "timestamp": ts(40, 31), "uuid": uid(sid, "boundary"), "level": "info",
           "compactMetadata": {"trigger": "auto", "preTokens": 155000}})
    s.last = uid(sid, "boundary")
    s._rec("user", {"message": {"role": "user", "content": "This session is being continued from a previous "
                                                           "conversation that ran out of context."}}, ts(40, 32),
           extra={"isCompactSummary": True, "isVisibleInTranscriptOnly": True})
    folder = root / "-home-dev-orbit"
    s.write(folder / f"{sid}.jsonl")
    a.write(folder / sid / "subagents" / "agent-a71c0de.jsonl")
    k.write(folder / sid / "subagents" / "agent-acompact-5e1f00.jsonl")


def cc_sidechain_10x(root):
    """1.0.98: a sub-agent's records inline in the main file, marked isSidechain, without an agentId."""
    sid = uid("c05")
    s = Session(sid, "/home/dev/orbit", version="1.0.98")
    s.prompt([{"type": "text", "text": "<ide_selection>The user selected lines 3-9 of upload.py</ide_selection>"},
              {"type": "text", "text": "write down how we handle retries here"}], ts(50))
    t = s.call("Task", {"description": "codify", "prompt": "Record the retry convention"}, ts(50, 5), 1)
    main_last = s.last
    s.sidechain = True
    s.prompt("Record the retry convention", ts(50, 6), parent=None)
    c = s.call("mcp__thatch__behavior_codify", {"situation": "writing retry logic",
                                                 "behavior": "cap retries at five attempts"}, ts(50, 8), 2)
    s.result(c, created("acme/orbit", "cap retries at five attempts", "writing retry logic").replace(
        "[created]", "[codified]"), ts(50, 9))
    s.sidechain = False
    s.last = main_last
    s.result(t, "Recorded.", ts(50, 20))
    s.write(root / "-home-dev-orbit" / f"{sid}.jsonl")


def cc_agent_file_20x(root):
    """2.0.x: a sub-agent transcript beside the session (agent-<id>.jsonl), a warmup prompt."""
    sid = uid("c06")
    s = Session(sid, "/home/dev/orbit", version="2.0.76")
    s.prompt("list what thatch knows about the cache", ts(0, 0, day=13))
    c = s.call("mcp__thatch__behavior_list", {}, ts(0, 5, day=13), 1)
    s.result(c, 'No behaviors in "acme/orbit", "global".', ts(0, 6, day=13))
    w = Session(sid, "/home/dev/orbit", version="2.0.76", agent="b2c3d4e5", sidechain=True, stem="agent-b2c3d4e5")
    w.prompt("Warmup", ts(0, 1, day=13), parent=None)
    w.say("Ready.", ts(0, 2, day=13))
    folder = root / "-home-dev-orbit"
    s.write(folder / f"{sid}.jsonl")
    w.write(folder / "agent-b2c3d4e5.jsonl")


def cc_worktrees(root):
    """A repository's main checkout and two worktrees (Claude Code's own and a git worktree folder)."""
    main = Session(uid("c07-main"), "/home/dev/lumen")
    main.prompt("start the lumen release notes", ts(10, 0, day=13))
    c = main.call("mcp__thatch__prediction_update", update("write release notes as bullet lists", "create",
                                                           "writing release notes"), ts(10, 5, day=13), 1)
    main.result(c, created("acme/lumen", "write release notes as bullet lists", "writing release notes"),
                ts(10, 6, day=13))
    wt = Session(uid("c07-wt"), "/home/dev/lumen/.claude/worktrees/fix-cache", branch="fix-cache")
    wt.prompt("fix the cache eviction bug", ts(20, 0, day=13))
    c = wt.call("mcp__thatch__prediction_update", update("write release notes as bullet lists", "confirm",
                                                         "writing release notes"), ts(20, 5, day=13), 1)
    wt.result(c, '[confirm] "write release notes as bullet lists" confidence=0.62 (2/0)', ts(20, 6, day=13))
    gw = Session(uid("c07-git"), "/home/dev/lumen/worktrees/docs-pass", branch="docs-pass")
    gw.prompt("proofread the docs folder", ts(30, 0, day=13))
    c = gw.call("mcp__thatch__behavior_list", {}, ts(30, 5, day=13), 1)
    gw.result(c, "[]", ts(30, 6, day=13))
    main.write(root / "-home-dev-lumen" / f"{main.sid}.jsonl")
    wt.write(root / "-home-dev-lumen--claude-worktrees-fix-cache" / f"{wt.sid}.jsonl")
    gw.write(root / "-home-dev-lumen-worktrees-docs-pass" / f"{gw.sid}.jsonl")


def cc_worktree_beside(root):
    """A worktree in a <repo>-worktrees folder, and no reply naming the store: the main checkout's name."""
    s = Session(uid("c08"), "/home/dev/projects/kiln-worktrees/kiln-7q2", branch="kiln-7q2")
    s.prompt("rename the firing schedule module", ts(40, 0, day=13))
    c = s.call("mcp__thatch__prediction_update", update("keep module names short", "create", "naming modules"),
               ts(40, 5, day=13), 1)
    s.result(c, '[confirm] "keep module names short" confidence=0.50 (0/0)', ts(40, 6, day=13))
    s.write(root / "-home-dev-projects-kiln-worktrees-kiln-7q2" / f"{s.sid}.jsonl")


def _resumable(sid, cwd="/home/dev/orbit"):
    s = Session(sid, cwd)
    s.prompt("add a progress bar to the upload", ts(0, 0, day=14), uuid_=uid("c09", "p1"))
    c = s.call("mcp__thatch__prediction_update", update("show progress for long uploads", "create",
                                                         "long running uploads"), ts(0, 5, day=14), "c1")
    s.result(c, created("acme/orbit", "show progress for long uploads", "long running uploads"), ts(0, 6, day=14))
    s.prompt("make it a percentage", ts(1, 0, day=14), uuid_=uid("c09", "p2"))
    s.hook(NUDGE, ts(1, 1, day=14))
    return s, c


def cc_resumed(root):
    """--resume: a new file repeats the first session's records (same uuids, its own sessionId) and goes on."""
    a_id, b_id = uid("c09-a"), uid("c09-b")
    a, c = _resumable(a_id)
    b = Session(b_id, "/home/dev/orbit")
    b.raw({"type": "summary", "summary": "Upload progress bar", "leafUuid": a.last})
    for rec in a.lines:
        b.raw({**rec, "sessionId": b_id})
    b.last = a.last
    b.prompt("now add it to the download too", ts(30, 0, day=14))
    c2 = b.call("mcp__thatch__prediction_update", update("show progress for long uploads", "confirm",
                                                         "long running uploads"), ts(30, 5, day=14), "c2")
    b.result(c2, '[confirm] "show progress for long uploads" confidence=0.62 (2/0)', ts(30, 6, day=14))
    folder = root / "-home-dev-orbit"
    a.write(folder / f"{a_id}.jsonl")
    b.write(folder / f"{b_id}.jsonl")


def cc_forked(root):
    """A fork: the copy keeps the first session's sessionId on the repeated records, then diverges."""
    a_id, f_id = uid("c10-a"), uid("c10-f")
    a, _ = _resumable(a_id)
    f = Session(f_id, "/home/dev/orbit")
    for rec in a.lines[:3]:  # the first prompt and its call, copied as they were
        f.raw(dict(rec))
    f.last = a.lines[2]["uuid"]
    f.prompt("try a spinner instead", ts(40, 0, day=14))
    c = f.call("mcp__thatch__prediction_update", update("show progress for long uploads", "disconfirm",
                                                        "long running uploads"), ts(40, 5, day=14), "c3")
    f.result(c, '[disconfirm] "show progress for long uploads" confidence=0.42 (1/1)', ts(40, 6, day=14))
    folder = root / "-home-dev-orbit"
    a.write(folder / f"{a_id}.jsonl")
    f.write(folder / f"{f_id}.jsonl")


def cc_plugin_names(root):
    """thatch installed as a Claude Code plugin: mcp__plugin_thatch_thatch__<tool>."""
    s = Session(uid("c11"), "/home/dev/orbit")
    s.prompt("tidy the retry module", ts(0, 0, day=15))
    s.hook(NUDGE, ts(0, 1, day=15))
    c = s.call("mcp__plugin_thatch_thatch__prediction_update", update("use exponential backoff with jitter",
                                                                      "soft"), ts(0, 5, day=15), 1)
    s.result(c, '[soft] "use exponential backoff with jitter" confidence=0.60 (1.5/0)', ts(0, 6, day=15))
    c = s.call("mcp__plugin_thatch_thatch__behavior_codify", {"situation": "touching the cache",
                                                              "behavior": "run the cache tests"}, ts(0, 9, day=15), 2)
    s.result(c, '[codified] acme/orbit :: "run the cache tests" for "touching the cache"', ts(0, 10, day=15))
    s.write(root / "-home-dev-orbit" / f"{s.sid}.jsonl")


def cc_plain_names(root):
    """A host that registers thatch's tools without a prefix: plain tool names."""
    s = Session(uid("c12"), "/home/dev/orbit")
    s.prompt("note that we keep retries at five", ts(10, 0, day=15))
    c = s.call("behavior_codify", {"situation": "writing retry logic", "behavior": "cap retries at five attempts"},
               ts(10, 5, day=15), 1)
    s.result(c, '[codified] acme/orbit :: "cap retries at five attempts" for "writing retry logic"', ts(10, 6, day=15))
    c = s.call("prediction_delete", {"prediction": "use exponential backoff with jitter"}, ts(10, 9, day=15), 2)
    s.result(c, '[deleted] "use exponential backoff with jitter"', ts(10, 10, day=15))
    s.write(root / "-home-dev-orbit" / f"{s.sid}.jsonl")


def cc_other_server(root):
    """thatch registered under another name (prefs): the hook's nudge is there, the calls need --server."""
    s = Session(uid("c13"), "/home/dev/orbit")
    s.prompt("speed up the uploader", ts(20, 0, day=15))
    s.hook(NUDGE, ts(20, 1, day=15))
    c = s.call("mcp__prefs__prediction_update", update("use exponential backoff with jitter", "confirm"),
               ts(20, 5, day=15), 1)
    s.result(c, '[confirm] "use exponential backoff with jitter" confidence=0.62 (2/0)', ts(20, 6, day=15))
    s.write(root / "-home-dev-orbit" / f"{s.sid}.jsonl")


def cc_never_ran(root):
    """2.1.x: calls that did not run (rejected, server error, blocked by a hook), a duplicate, parallel calls."""
    s = Session(uid("c14"), "/home/dev/orbit")
    s.prompt("<ide_opened_file>The user opened upload.py in the IDE.</ide_opened_file>\nrecord my upload habits",
             ts(30, 0, day=15))
    s.hook(NUDGE, ts(30, 1, day=15))
    c1 = s.call("mcp__thatch__prediction_update", update("retry only idempotent requests", "create"),
                ts(30, 5, day=15), 1)
    s.result(c1, "The user doesn't want to proceed with this tool use. The tool use was rejected (eg. if it was a "
                 "file edit, the new_string was NOT written to the file). STOP what you are doing and wait for the "
                 "user to tell you how to proceed.", ts(30, 6, day=15), error=True, use="User rejected tool use")
    s.prompt("[Request interrupted by user for tool use]", ts(30, 7, day=15))
    c2 = s.call("mcp__thatch__prediction_update", {"matcher": "writing retry logic", "prediction": "x",
                                                   "signal": "maybe"}, ts(31, 0, day=15), 2)
    s.result(c2, "Invalid arguments: signal: expected one of confirm, disconfirm, soft, create", ts(31, 1, day=15),
             error=True, use="Error: Invalid arguments")
    c3 = s.call("mcp__thatch__prediction_delete", {"prediction": "retry only idempotent requests"}, ts(31, 5, day=15),
                3)
    s.result(c3, "PreToolUse:mcp__thatch__prediction_delete hook error: blocked by policy", ts(31, 6, day=15),
             error=True, use="Error: blocked by policy")
    first = s.lines[0]
    s.raw(dict(first))  # the same prompt record written twice
    par = [toolu(s.stem, "p1"), toolu(s.stem, "p2")]
    s._rec("assistant", {"message": {"model": "claude-opus-4-6", "id": "msg_par", "type": "message",
                                     "role": "assistant", "content": [
        {"type": "tool_use", "id": par[0], "name": "mcp__thatch__prediction_list", "input": {}},
        {"type": "tool_use", "id": par[1], "name": "mcp__thatch__behavior_list", "input": {}}]}}, ts(32, 0, day=15))
    s._rec("user", {"message": {"role": "user", "content": [
        {"tool_use_id": par[0], "type": "tool_result", "content": 'No predictions in "acme/orbit", "global".'},
        {"tool_use_id": par[1], "type": "tool_result", "content": 'No behaviors in "acme/orbit", "global".'}]}},
        ts(32, 1, day=15))
    s.prompt("<command-name>/clear</command-name>\n<command-message>clear</command-message>\n<command-args></command-args>",
             ts(33, 0, day=15))
    s.write(root / "-home-dev-orbit" / f"{s.sid}.jsonl")


# ----------------------------------------------------------------------------- opencode cases
_V1 = """
CREATE TABLE session (id TEXT PRIMARY KEY, project_id TEXT NOT NULL, parent_id TEXT, slug TEXT NOT NULL,
  directory TEXT NOT NULL, title TEXT NOT NULL, version TEXT NOT NULL, time_created INTEGER NOT NULL,
  time_updated INTEGER NOT NULL);
CREATE TABLE message (id TEXT PRIMARY KEY, session_id TEXT NOT NULL, time_created INTEGER NOT NULL,
  time_updated INTEGER NOT NULL, data TEXT NOT NULL);
CREATE TABLE part (id TEXT PRIMARY KEY, message_id TEXT NOT NULL, session_id TEXT NOT NULL,
  time_created INTEGER NOT NULL, time_updated INTEGER NOT NULL, data TEXT NOT NULL);
"""
_V2 = """
CREATE TABLE session_message (id TEXT PRIMARY KEY, session_id TEXT NOT NULL, type TEXT NOT NULL, seq INTEGER NOT NULL,
  time_created INTEGER NOT NULL, time_updated INTEGER NOT NULL, data TEXT NOT NULL);
"""
_MIGRATIONS = """
CREATE TABLE __drizzle_migrations (id INTEGER PRIMARY KEY, hash TEXT NOT NULL, created_at NUMERIC);
"""
T0 = 1771236000000  # 2026-02-16T10:00:00Z
REJECTED = "The user rejected permission to use this specific tool call."


def _db(path: Path, ddl: str, migrations=()):
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.exists():
        path.unlink()
    con = sqlite3.connect(path)
    con.executescript(ddl + _MIGRATIONS)
    for i, (h, at) in enumerate(migrations, start=1):
        con.execute("INSERT INTO __drizzle_migrations VALUES (?, ?, ?)", (i, h, at))
    return con


def _session(con, sid, directory, title, parent=None, at=T0):
    con.execute("INSERT INTO session VALUES (?, 'prj_orbit', ?, ?, ?, ?, '1.2.27', ?, ?)",
                (sid, parent, sid[-6:], directory, title, at, at))


def _msg(con, mid, sid, at, role, parts):
    con.execute("INSERT INTO message VALUES (?, ?, ?, ?, ?)",
                (mid, sid, at, at, json.dumps({"role": role, "time": {"created": at}}, separators=(",", ":"))))
    for i, p in enumerate(parts):
        con.execute("INSERT INTO part VALUES (?, ?, ?, ?, ?, ?)",
                    (f"prt_{mid[4:]}_{i}", mid, sid, at, at, json.dumps(p, separators=(",", ":"))))


def _tool(name, args, status, text, at, call):
    state = {"status": status, "input": args, "time": {"start": at, "end": at + 40}}
    state["output" if status == "completed" else "error"] = text
    return {"type": "tool", "callID": call, "tool": name, "state": state}


def oc_v1_rejected(root):
    """opencode message/part rows: a permission the user rejected, a plain-named call, a sub-agent's call."""
    con = _db(root / "opencode.db", _V1, [("a1", 1767000000000)])
    _session(con, "ses_v1main", "/home/dev/orbit", "retry work")
    _session(con, "ses_v1task", "/home/dev/orbit", "Find callers (@general subagent)", parent="ses_v1main")
    _msg(con, "msg_v1a", "ses_v1main", T0, "user", [{"type": "text", "text": "make the retries configurable"},
                                                    {"type": "text", "synthetic": True, "text": NUDGE}])
    _msg(con, "msg_v1b", "ses_v1main", T0 + 5000, "assistant", [
        _tool("thatch_prediction_update", update("read retry counts from the config", "create"), "error",
              REJECTED, T0 + 5000, "call_v1a"),
        _tool("prediction_query", {"context": "config loading"}, "completed", "No predictions match.", T0 + 6000,
              "call_v1b"),
        _tool("thatch_behavior_codify", {"situation": "adding settings", "behavior": "document every new setting"},
              "completed", '[codified] acme/orbit :: "document every new setting" for "adding settings"',
              T0 + 7000, "call_v1c")])
    _msg(con, "msg_v1c", "ses_v1task", T0 + 8000, "user", [{"type": "text", "text": "List callers of load_config"}])
    _msg(con, "msg_v1d", "ses_v1task", T0 + 9000, "assistant", [
        _tool("thatch_prediction_update", update("read retry counts from the config", "soft"), "completed",
              '[soft] "read retry counts from the config" confidence=0.55 (0.5/0)', T0 + 9000, "call_v1d")])
    con.commit()
    con.close()


def _v2(con, mid, sid, mtype, seq, at, data):
    con.execute("INSERT INTO session_message VALUES (?, ?, ?, ?, ?, ?, ?)",
                (mid, sid, mtype, seq, at, at, json.dumps(data, separators=(",", ":"))))


def _v2_tool(name, args, status, text, at, call):
    state = {"status": status, "input": args, "structured": {}, "content": []}
    if status == "completed":
        state["content"] = [{"type": "text", "text": text}]
    else:
        state["error"] = {"type": "unknown", "message": text}
    return {"type": "tool", "id": f"tc_{call}", "callID": call, "name": name, "state": state,
            "time": {"created": at, "ran": at + 10, "completed": at + 50}}


def oc_v2(root):
    """opencode session_message rows only: user, synthetic nudge, tool calls, compaction, shell, system."""
    con = _db(root / "opencode.db", """
CREATE TABLE session (id TEXT PRIMARY KEY, project_id TEXT NOT NULL, parent_id TEXT, slug TEXT NOT NULL,
  directory TEXT NOT NULL, title TEXT NOT NULL, version TEXT NOT NULL, time_created INTEGER NOT NULL,
  time_updated INTEGER NOT NULL);""" + _V2, [("a1", 1767000000000), ("b7", 1779000000000)])
    _session(con, "ses_v2main", "/home/dev/orbit", "config work")
    at = T0 + 3600000
    _v2(con, "msg_v2a", "ses_v2main", "user", 0, at, {"text": "move the retry settings to orbit.toml", "files": [],
                                                      "agents": [], "references": [], "time": {"created": at}})
    _v2(con, "msg_v2b", "ses_v2main", "synthetic", 1, at + 1, {"sessionID": "ses_v2main", "text": NUDGE,
                                                               "time": {"created": at + 1}})
    _v2(con, "msg_v2c", "ses_v2main", "assistant", 2, at + 5000, {
        "agent": "build", "model": {"providerID": "anthropic", "id": "claude-sonnet-4-5"},
        "time": {"created": at + 5000, "completed": at + 9000}, "content": [
            {"type": "text", "id": "tx_1", "text": "Moving them now."},
            _v2_tool("thatch_prediction_update", update("keep settings in orbit.toml", "create", "adding settings"),
                     "completed", created("acme/orbit", "keep settings in orbit.toml", "adding settings"), at + 6000,
                     "call_v2a"),
            _v2_tool("thatch_behavior_feedback", {"behavior": "document every new setting", "relevant": False,
                                                  "context": "not a setting"}, "error", REJECTED, at + 7000,
                     "call_v2b")]})
    _v2(con, "msg_v2d", "ses_v2main", "shell", 3, at + 10000, {"callID": "sh_1", "command": "ls", "output": "a b",
                                                               "time": {"created": at + 10000}})
    _v2(con, "msg_v2e", "ses_v2main", "compaction", 4, at + 20000, {"reason": "auto", "summary": "retry settings",
                                                                    "recent": "", "time": {"created": at + 20000}})
    _v2(con, "msg_v2f", "ses_v2main", "system", 5, at + 20001, {"text": "context", "time": {"created": at + 20001}})
    _v2(con, "msg_v2g", "ses_v2main", "user", 6, at + 30000, {"text": "now the timeouts", "files": [], "agents": [],
                                                              "references": [], "time": {"created": at + 30000}})
    con.commit()
    con.close()


def oc_v2_backfill(root):
    """Both tables: a session the backfill copied into session_message (read once), one still legacy-only."""
    con = _db(root / "opencode.db", _V1 + _V2, [("a1", 1767000000000), ("b7", 1779000000000)])
    _session(con, "ses_bfdone", "/home/dev/orbit", "backfilled")
    _session(con, "ses_bfold", "/home/dev/orbit", "not yet backfilled")
    at = T0 + 7200000
    _msg(con, "msg_bf1", "ses_bfdone", at, "user", [{"type": "text", "text": "rename the uploader class"}])
    _msg(con, "msg_bf2", "ses_bfdone", at + 4000, "assistant", [
        _tool("thatch_prediction_update", update("name classes after their role", "create", "naming classes"),
              "completed", created("acme/orbit", "name classes after their role", "naming classes"), at + 4000,
              "call_bf1")])
    _v2(con, "msg_bf1", "ses_bfdone", "user", 0, at, {"text": "rename the uploader class", "files": [], "agents": [],
                                                      "references": [], "time": {"created": at}})
    _v2(con, "msg_bf2", "ses_bfdone", "assistant", 1, at + 4000, {
        "agent": "build", "model": {"providerID": "anthropic", "id": "claude-sonnet-4-5"},
        "time": {"created": at + 4000}, "content": [
            _v2_tool("thatch_prediction_update", update("name classes after their role", "create", "naming classes"),
                     "completed", created("acme/orbit", "name classes after their role", "naming classes"),
                     at + 4000, "call_bf1")]})
    _msg(con, "msg_bf3", "ses_bfold", at + 60000, "user", [{"type": "text", "text": "and the downloader class"}])
    con.commit()
    con.close()


def oc_unknown_schema(root):
    """A database of a layout ingest does not know: neither message/part nor session_message."""
    con = _db(root / "opencode.db", """
CREATE TABLE session (id TEXT PRIMARY KEY, directory TEXT NOT NULL, parent_id TEXT);
CREATE TABLE session_entry (id TEXT PRIMARY KEY, session_id TEXT NOT NULL, body TEXT NOT NULL);""",
              [("a1", 1767000000000), ("z9", 1799000000000)])
    con.commit()
    con.close()


CASES = {
    "c01-queue-absorbed": cc_queue_absorbed, "c02-queue-attachments": cc_queue_attachments,
    "c03-queue-lost": cc_queue_lost, "c04-subagents-2x": cc_subagents_2x, "c05-sidechain-1x": cc_sidechain_10x,
    "c06-agent-file-20x": cc_agent_file_20x, "c07-worktrees": cc_worktrees, "c08-worktree-beside": cc_worktree_beside,
    "c09-resumed": cc_resumed, "c10-forked": cc_forked, "c11-plugin-names": cc_plugin_names,
    "c12-plain-names": cc_plain_names, "c13-other-server": cc_other_server, "c14-never-ran": cc_never_ran,
    "o01-v1-rejected": oc_v1_rejected, "o02-v2": oc_v2, "o03-v2-backfill": oc_v2_backfill,
    "o04-unknown-schema": oc_unknown_schema,
}


def main():
    for name, build in CASES.items():
        root = HERE / name
        shutil.rmtree(root, ignore_errors=True)
        build(root)


if __name__ == "__main__":
    main()
