"""Write the sample production records of ``data/ingest/`` (run from the repository root).

    .venv/bin/python data/ingest/make_samples.py            # every source and lookup.jsonl
    .venv/bin/python data/ingest/make_samples.py opencode   # only the sources named

Everything here is invented for thatchlab: two small projects worked on by a
made-up developer, a handful of memories of a made-up user, and a few days of
workspace events. The thatch replies and nudges inside the transcripts are
not typed by hand: the script drives thatchlab's own prediction and behavior
engines through the sessions (with the vectors of ``lookup.jsonl``) and
writes down what they answered, exactly as a host would have recorded it.
The output is deterministic.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import sqlite3
import uuid
from pathlib import Path

import numpy as np
import pandas as pd

from thatchlab.belief import compute_currency, currency_band
from thatchlab.core.params.belief import BELIEF_PRIORS
from thatchlab.embed import LookupEmbedder
from thatchlab.scoring import BehaviorEngine, PredictionEngine

OUT = Path(__file__).resolve().parent
NS = uuid.UUID("5b0f6a2e-2d1c-4c55-9a43-7d3f0e6c1a10")

# ----------------------------------------------------------------------------- vectors
TOPICS = ("tests", "commit", "naming", "docs", "trails")
DIM = len(TOPICS) + 8


def vector(text: str, topic: str | None, noise: float = 0.5) -> list[float]:
    """A unit-free vector: one topic axis plus text-seeded noise in the spare axes."""
    seed = int(hashlib.sha256(text.encode()).hexdigest()[:12], 16)
    rng = np.random.default_rng(seed)
    v = np.zeros(DIM)
    if topic is not None:
        v[TOPICS.index(topic)] = 1.0
    v[len(TOPICS):] = rng.normal(size=DIM - len(TOPICS)) * noise / np.sqrt(DIM - len(TOPICS))
    if topic is None:
        v[: len(TOPICS)] = rng.normal(size=len(TOPICS)) * 0.2
    return [round(float(x), 6) for x in v]


TEXTS: dict[str, str | None] = {}


def t(text: str, topic: str | None) -> str:
    TEXTS[text] = topic
    return text


# ----------------------------------------------------------------------------- the sessions
# Each step is (kind, payload). Prompts nudge both engines; tool calls go to their engine.
M_TESTS = t("writing unit tests for Python code", "tests")
P_FIXTURES = t("use pytest fixtures instead of unittest classes", "tests")
M_NAMING = t("naming new modules", "naming")
P_SNAKE = t("use short snake_case module names", "naming")
S_COMMIT = t("before committing changes", "commit")
B_SUITE = t("run the full test suite and read the failures", "commit")
S_DOCS = t("writing documentation", "docs")
B_EXAMPLES = t("keep code examples runnable", "docs")

# Claude Code: project /home/dev/weather-app, whose git origin is acme/weather-app, so thatch's
# store is "acme/weather-app". A step is (kind, payload) or (kind, payload, how): ``how`` says how
# the host recorded it (IDE context blocks, a refused call, an error, a call with no result yet).
REFUSAL = ("The user doesn't want to proceed with this tool use. The tool use was rejected (eg. if it was a file "
           "edit, the new_string was NOT written to the file). STOP what you are doing and wait for the user to "
           "tell you how to proceed.")
WRITE_NUDGE = ("[thatch] After responding, check: did you learn new project knowledge, user preferences, or "
               "corrections worth persisting? If so, save to thatch.")
CLAUDE_STORE = "acme/weather-app"

CLAUDE_SESSIONS = [
    # v2.1.293: thatch's hook stdout recorded as hook_success attachments after each prompt
    ("2026-01-05T09:00:00.000Z", "2.1.293", [
        ("prompt", t("Can you add unit tests for the forecast parser module?", "tests"),
         {"ide": "<ide_opened_file>The user opened the file /home/dev/weather-app/forecast/parser.py in the IDE. "
                 "This may or may not be related to the current task.</ide_opened_file>"}),
        ("bash", "pytest -q tests/test_forecast.py"),
        ("prediction_update", {"matcher": M_TESTS, "prediction": P_FIXTURES, "signal": "create",
                               "rationale": "the existing tests in the repo use pytest"}),
        ("behavior_codify", {"situation": S_COMMIT, "behavior": B_SUITE,
                             "rationale": "a commit last week broke the nightly build"}),
        ("prompt", t("Write more tests for the radar tile loader please", "tests")),
        ("prediction_update", {"matcher": M_TESTS, "prediction": P_FIXTURES, "signal": "confirm",
                               "rationale": "user: yes, pytest fixtures please"}),
        ("prediction_update", {"matcher": M_TESTS, "prediction": P_FIXTURES, "signal": "disconfirm",
                               "rationale": "user may not want fixtures here"}, {"outcome": "rejected-2.1"}),
        ("prompt", t("ok, commit this work", "commit")),
        ("behavior_feedback", {"behavior": B_SUITE, "relevant": True, "context": "ran the suite before the commit"}),
        ("prediction_list", {}),
    ]),
    # v2.1.207: a SessionStart reminder, a compaction, an MCP validation error, an interruption, a subagent
    ("2026-01-06T14:00:00.000Z", "2.1.207", [
        ("prompt", t("add tests for the wind chart helpers", "tests"),
         {"ide": "<ide_selection>The user selected the lines 12 to 14 from /home/dev/weather-app/charts/wind.py:\n"
                 "def gust_band(speed):\n    return speed // 10\n\nThis may or may not be related to the current "
                 "task.</ide_selection>"}),
        ("prediction_update", {"matcher": M_TESTS, "prediction": P_FIXTURES, "signal": "confirm",
                               "rationale": "user kept the fixtures as written"}),
        ("prediction_update", {"matcher": M_TESTS, "prediction": P_FIXTURES, "signal": "sometimes",
                               "rationale": "mixed feelings"}, {"outcome": "error"}),
        ("prediction_update", {"matcher": M_NAMING, "prediction": P_SNAKE, "signal": "create",
                               "rationale": "user renamed WindChartHelpers.py"}),
        ("compaction", None),
        ("prediction_query", {"context": t("where should the new geocoding helpers live", "naming")}),
        ("prompt", t("yes", None)),
        ("interrupt", None),
        ("prompt", t("let's commit and push the chart changes", "commit")),
        ("behavior_feedback", {"behavior": B_SUITE, "relevant": True, "context": "caught a failing chart test"}),
        ("behavior_codify", {"situation": S_DOCS, "behavior": B_EXAMPLES,
                             "rationale": "a README example had drifted from the API"}),
        ("behavior_list", {}),
    ]),
    # v1.0.98: hook output not recorded, an inline IDE selection, a refused delete, a slash command,
    # and a session still being written (a call with no result yet, a cut-off last line)
    ("2026-01-08T10:30:00.000Z", "1.0.98", [
        ("prompt", t("write tests for the alerts module, same style as before", "tests")),
        ("prediction_update", {"matcher": M_TESTS, "prediction": P_FIXTURES, "signal": "confirm",
                               "rationale": "user approved the alerts tests"}),
        ("prompt", t("update the README docs for the radar endpoint", "docs"),
         {"inline_ide": "<ide_selection>The user selected the lines 1 to 3 from /home/dev/weather-app/README.md:\n"
                        "## Radar\n\nThis may or may not be related to the current task.</ide_selection>\n"}),
        ("behavior_feedback", {"behavior": B_EXAMPLES, "relevant": False, "context": "a one-line wording fix"}),
        ("prediction_delete", {"statement": P_SNAKE}, {"outcome": "rejected-1.0"}),
        ("command", "/model"),
        ("prompt", t("now the tests for the settings page", "tests")),
        ("prediction_update", {"matcher": M_TESTS, "prediction": P_FIXTURES, "signal": "confirm",
                               "rationale": "user: same pattern, good"}),
        ("prediction_update", {"matcher": M_TESTS, "prediction": P_FIXTURES, "signal": "soft",
                               "rationale": "user rewrote one fixture by hand"}),
        ("prompt", t("and the tests for the units converter", "tests")),
        ("prediction_list", {}),
        ("prediction_update", {"matcher": M_TESTS, "prediction": P_FIXTURES, "signal": "confirm",
                               "rationale": "user: converter tests look right"}, {"outcome": "no-result"}),
    ]),
]

# opencode: project /home/dev/trail-notes, whose git origin is acme/trail-notes, so thatch's store is
# "acme/trail-notes". A step is (kind, payload) or (kind, payload, how): how["status"] is the state a
# call was left in when it did not complete (production never ran it, so the engines do not see it).
# Kinds besides the prompts and thatch's engine tools: "remember" (thatch's memory tool, whose reply
# names the store), "task" (opencode's subagent tool: the subagent's session) and "file" (a user
# message holding only an attached file, which opencode expands into synthetic text parts).
OPENCODE_STORE = "acme/trail-notes"
M_TRAIL = t("editing trail description markdown", "trails")
P_METRIC = t("give distances in kilometres first, miles in brackets", "trails")
S_TRAIL = t("adding a new trail page", "trails")
B_MAP = t("check the map link opens the right trailhead", "trails")

OPENCODE_SESSIONS = [
    # started on an opencode that wrote the JSON tree; the first exchange was migrated into opencode.db
    ("2026-01-07T08:00:00.000Z", [
        ("prompt", t("Draft the page for the Ridge Loop trail", "trails")),
        ("prediction_update", {"matcher": M_TRAIL, "prediction": P_METRIC, "signal": "create",
                               "rationale": "user's other pages do this"}),
        ("behavior_codify", {"situation": S_TRAIL, "behavior": B_MAP, "rationale": "two pages linked the wrong lot"}),
        ("prompt", t("tidy the Ridge Loop description text", "trails")),
        ("prediction_update", {"matcher": M_TRAIL, "prediction": P_METRIC, "signal": "confirm",
                               "rationale": "user: yes km first"}),
        ("behavior_feedback", {"behavior": B_MAP, "relevant": True, "context": "the link pointed at the north lot"}),
    ]),
    # database only, still running when the data dir was copied
    ("2026-01-09T17:45:00.000Z", [
        ("prompt", t("new page for the Cedar Falls trail please", "trails")),
        ("remember", {"label": "trail page layout",
                      "content": "Trail pages: summary, distance (km first), map link, then the route"}),
        ("task", {"description": "Find trailhead links", "prompt": "find every page that links a trailhead",
                  "subagent_type": "general"}),
        ("prediction_update", {"matcher": M_TRAIL, "prediction": P_METRIC, "signal": "confirm",
                               "rationale": "kept km first unprompted"}),
        ("prediction_update", {"matcher": M_TRAIL, "prediction": P_METRIC, "signal": "confirm",
                               "rationale": "user: km first again"}, {"status": "error"}),
        ("file", "trails/cedar-falls.md"),
        ("prediction_list", {}),
        ("behavior_feedback", {"behavior": B_MAP, "relevant": True,
                               "context": "the Cedar Falls link opens the south lot"}, {"status": "running"}),
    ]),
]


def lookup() -> LookupEmbedder:
    table = pd.DataFrame({"text": list(TEXTS), "embedding": [vector(x, tp) for x, tp in TEXTS.items()]})
    return LookupEmbedder(table, name="sample-lookup")


def ms(ts: pd.Timestamp) -> str:
    return ts.strftime("%Y-%m-%dT%H:%M:%S.") + f"{ts.microsecond // 1000:03d}Z"


def run_engines(sessions, store: str, emb):
    """Drive both engines through the sessions; returns per step (ts, nudge text or reply)."""
    pred = PredictionEngine(emb, project_store=store)
    beh = BehaviorEngine(emb, project_store=store)
    out = []
    for start, *rest in sessions:
        steps = rest[-1]
        now = pd.Timestamp(start)
        done = []
        for kind, payload in steps:
            if kind == "prompt":
                now = now + pd.Timedelta(minutes=3)
                blocks = [e.nudge(payload).text for e in (pred, beh)]
                done.append((ms(now), "\n\n".join(b for b in blocks if b)))
                continue
            now = now + pd.Timedelta(seconds=20)
            at = ms(now)
            if kind == "bash":
                done.append((at, "3 passed in 0.41s"))
                continue
            a = payload
            if kind == "prediction_update":
                r = pred.update(a["matcher"], a["prediction"], a["signal"], a.get("rationale"), now=at)
            elif kind == "prediction_query":
                r = pred.query(a["context"])
            elif kind == "prediction_list":
                r = pred.list()
            elif kind == "prediction_delete":
                r = pred.delete(a["prediction"])
            elif kind == "behavior_codify":
                r = beh.codify(a["situation"], a["behavior"], a.get("rationale"), now=at)
            elif kind == "behavior_feedback":
                r = beh.feedback(a["behavior"], a["relevant"], a.get("context", ""), now=at)
            elif kind == "behavior_list":
                r = beh.list()
            else:
                raise ValueError(kind)
            done.append((at, r.text))
        out.append(done)
    return out


# ----------------------------------------------------------------------------- Claude Code
# Record shapes follow the transcripts Claude Code writes and public readers' fixtures (cited in
# README.md): one JSON object a line, compact separators, keys in each version's order.
def uid(*parts) -> str:
    return str(uuid.uuid5(NS, "/".join(map(str, parts))))


def _ran(step) -> bool:
    """Whether production ran a step (what the engines must see to write the replies)."""
    kind = step[0]
    return kind in ("prompt", "bash") or (kind.startswith(("prediction_", "behavior_")) and
                                           not (len(step) > 2 and "outcome" in step[2]))


def _cc_record(version: str, base: dict, core: dict) -> dict:
    """A record with its keys in the order the version writes them."""
    if version.startswith("1."):
        return {"parentUuid": core.pop("parentUuid"), "isSidechain": base["isSidechain"], "userType": "external",
                "cwd": base["cwd"], "sessionId": base["sessionId"], "version": version,
                "gitBranch": base["gitBranch"], **core}
    head = {"parentUuid": core.pop("parentUuid"), "isSidechain": base["isSidechain"]}
    tail = {"userType": "external", "entrypoint": "cli", "cwd": base["cwd"], "sessionId": base["sessionId"],
            "version": version, "gitBranch": base["gitBranch"]}
    return {**head, **core, **tail}


class _CcSession:
    """One Claude Code session's transcript as the host writes it: each record chained to the one before."""

    def __init__(self, start, version: str, cwd: str):
        self.sid = uid("session", start)
        self.version = version
        self.base = {"sessionId": self.sid, "cwd": cwd, "gitBranch": "main", "isSidechain": False}
        self.recs = []
        self.parent = None
        self.n = 0
        self.new = not version.startswith("1.")

    def add(self, core, ts, key):
        u = uid(self.base["sessionId"], key)
        core = {"parentUuid": self.parent, **core, "uuid": u, "timestamp": ts}
        self.recs.append(_cc_record(self.version, self.base, core))
        self.parent = u
        return u

    def hook(self, event, text, ts, key):
        self.add({"type": "attachment", "attachment": {
            "type": "hook_success", "hookName": event if event != "SessionStart" else "SessionStart:startup",
            "toolUseID": f"hook-{uid(self.sid, key, 'hook')}", "hookEvent": event, "content": text, "stdout": text,
            "stderr": "", "exitCode": 0, "command": f"/usr/local/bin/thatch {'flush-tools' if event != 'SessionStart' else 'reminder'}",
            "durationMs": 140}}, ts, key)


def claude_code(emb):
    root = OUT / "claude-code" / "-home-dev-weather-app"
    shutil.rmtree(OUT / "claude-code", ignore_errors=True)
    root.mkdir(parents=True)
    ran = [(start, [s[:2] for s in steps if _ran(s)]) for start, _, steps in CLAUDE_SESSIONS]
    results = run_engines(ran, CLAUDE_STORE, emb)
    for (start, version, steps), done in zip(CLAUDE_SESSIONS, results):
        s = _CcSession(start, version, "/home/dev/weather-app")
        if version.startswith("1."):
            s.recs.append({"type": "summary", "summary": "Alerts and settings tests", "leafUuid": uid(s.sid, "leaf")})
        if version == "2.1.207":  # thatch's session-start reminder names the project store
            s.hook("SessionStart", f'[thatch] Before responding, use thatch to recall: (1) your own working habits, '
                                   f'(2) project architecture and conventions for "{CLAUDE_STORE}", (3) the user\'s '
                                   'preferences.', start, "start")
        last = _cc_steps(s, steps, iter(done), start)
        end = ms(pd.Timestamp(last) + pd.Timedelta(seconds=5))
        body = _cc_body(s, steps, end)
        if version == "2.1.207":  # a Task subagent: its records in a file of its own
            _cc_subagent(root / s.sid / "subagents", s, end)
        (root / f"{s.sid}.jsonl").write_text(body, encoding="utf-8")


def _cc_steps(s: _CcSession, steps, done_iter, last):
    """Write each step's records; the engines' replies come from ``done_iter``. Returns the last step's time."""
    for step in steps:
        kind, payload = step[0], step[1]
        how = step[2] if len(step) > 2 else {}
        key = s.n = s.n + 1
        if _ran(step):
            ts, text = next(done_iter)
        else:
            ts, text = ms(pd.Timestamp(last) + pd.Timedelta(seconds=7)), None
        last = ts
        if kind == "prompt":
            _cc_prompt(s, key, ts, payload, how, text)
        elif kind == "compaction":
            _cc_compaction(s, key, ts)
        elif kind == "interrupt":
            _cc_interrupt(s, key, ts)
        elif kind == "command":
            _cc_command(s, key, ts, payload)
        else:
            _cc_tool_call(s, kind, key, ts, payload, how, text)
    return last


def _cc_prompt(s: _CcSession, key, ts, payload, how, text):
    typed = how.get("inline_ide", "") + payload
    content = [{"type": "text", "text": how["ide"]}, {"type": "text", "text": typed}] if "ide" in how \
        else typed if "inline_ide" not in how else [{"type": "text", "text": typed}]
    core = {"type": "user", "message": {"role": "user", "content": content}}
    if s.new:
        core["promptId"] = uid(s.sid, key, "prompt")
    u = s.add(core, ts, key)
    if s.new:  # 1.0.x kept no record of hook output
        s.hook("UserPromptSubmit", text or WRITE_NUDGE, ts, f"{key}h")
        s.recs.append({"type": "file-history-snapshot", "messageId": u, "isSnapshotUpdate": False,
                       "snapshot": {"messageId": u, "trackedFileBackups": {}, "timestamp": ts}})


def _cc_compaction(s: _CcSession, key, ts):
    s.parent = None
    s.add({"type": "system", "subtype": "compact_boundary", "content": "Conversation compacted",
           "isMeta": False, "level": "info", "logicalParentUuid": uid(s.sid, key - 1),
           "compactMetadata": {"trigger": "auto", "preTokens": 156910}}, ts, key)
    s.add({"type": "user", "message": {"role": "user", "content":
           "This session is being continued from a previous conversation that ran out of context. The "
           "summary below covers the earlier portion of the conversation.\n\nThe user asked for wind "
           "chart tests."}, "isVisibleInTranscriptOnly": True, "isCompactSummary": True}, ts, f"{key}s")
    # the compaction wrote the session's first prompt again, with its uuid and time
    s.recs.append(next(r for r in s.recs if r.get("type") == "user" and r.get("promptId")))


def _cc_interrupt(s: _CcSession, key, ts):
    s.add({"type": "assistant", "requestId": f"req_{key:04d}", "message": {
        "model": "claude-sonnet-4-5", "id": f"msg_{uid(s.sid, key)[:8]}", "type": "message",
        "role": "assistant", "content": [{"type": "text", "text": "I will look at the chart module"}],
        "stop_reason": None, "usage": {"input_tokens": 900, "output_tokens": 12}}}, ts, f"{key}a")
    s.add({"type": "user", "message": {"role": "user", "content": [
        {"type": "text", "text": "[Request interrupted by user]"}]}}, ts, key)


def _cc_command(s: _CcSession, key, ts, payload):
    s.add({"type": "user", "message": {"role": "user", "content":
           "Caveat: The messages below were generated by the user while running local commands. DO NOT "
           "respond to these messages or otherwise consider them in your response unless the user "
           "explicitly asks you to."}, "isMeta": True}, ts, f"{key}c")
    s.add({"type": "user", "message": {"role": "user", "content":
           f"<command-message>{payload[1:]}</command-message>\n<command-name>{payload}</command-name>\n"
           "<command-args></command-args>"}}, ts, key)
    s.add({"type": "user", "message": {"role": "user", "content":
           "<local-command-stdout>Set model to opus</local-command-stdout>"}}, ts, f"{key}o")


def _cc_tool_call(s: _CcSession, kind, key, ts, payload, how, text):
    call = f"toolu_{hashlib.sha256(f'{s.sid}/{key}'.encode()).hexdigest()[:24]}"
    name = "Bash" if kind == "bash" else f"mcp__thatch__{kind}"
    inp = {"command": payload, "description": "Run the new tests"} if kind == "bash" else payload
    s.add({"type": "assistant", "requestId": f"req_{key:04d}", "message": {
        "model": "claude-sonnet-4-5", "id": f"msg_{uid(s.sid, key)[:8]}", "type": "message", "role": "assistant",
        "content": [{"type": "tool_use", "id": call, "name": name, "input": inp}],
        "stop_reason": "tool_use", "usage": {"input_tokens": 1200, "output_tokens": 60}}}, ts, key)
    outcome = how.get("outcome")
    if outcome == "no-result":
        return
    _cc_tool_result(s, kind, key, call, outcome, ms(pd.Timestamp(ts) + pd.Timedelta(milliseconds=400)), text)


def _cc_tool_result(s: _CcSession, kind, key, call, outcome, result_ts, text):
    """The record answering a tool call: the user's refusal (2.1 or 1.0 wording), a server error, or the reply."""
    if outcome == "rejected-2.1":
        s.add({"type": "user", "message": {"role": "user", "content": [
            {"type": "tool_result", "content": REFUSAL, "is_error": True, "tool_use_id": call}]},
               "toolUseResult": "User rejected tool use", "toolDenialKind": "user-rejected"}, result_ts, f"{key}r")
        s.add({"type": "user", "message": {"role": "user", "content": [
            {"type": "text", "text": "[Request interrupted by user for tool use]"}]}},
              ms(pd.Timestamp(result_ts) + pd.Timedelta(milliseconds=3)), f"{key}i")
    elif outcome == "rejected-1.0":
        s.add({"type": "user", "message": {"role": "user", "content": [
            {"type": "tool_result", "content": REFUSAL, "is_error": True, "tool_use_id": call}]},
               "toolUseResult": f"Error: {REFUSAL}"}, result_ts, f"{key}r")
    elif outcome == "error":  # thatch's MCP server refused the arguments (isError true)
        err = ('Invalid arguments: signal: Invalid option: expected one of '
               '"confirm"|"disconfirm"|"soft"|"create"')
        s.add({"type": "user", "message": {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": call, "content": [{"type": "text", "text": err}],
             "is_error": True}]}, "toolUseResult": f"Error: {err}"}, result_ts, f"{key}r")
    else:
        result = text if kind == "bash" else [{"type": "text", "text": text}]
        use = {"stdout": text, "stderr": "", "interrupted": False, "isImage": False} if kind == "bash" \
            else [{"type": "text", "text": text}]
        s.add({"type": "user", "message": {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": call, "content": result}]}, "toolUseResult": use},
              result_ts, f"{key}r")


def _cc_body(s: _CcSession, steps, end) -> str:
    """The file's text: the records and a closing reply, or, for a session still being written, a cut-off line."""
    if steps[-1][2:] and steps[-1][2].get("outcome") == "no-result":
        # the host was still writing: the call's result is not there yet, the last line is cut off
        body = "\n".join(json.dumps(r, ensure_ascii=False, separators=(",", ":")) for r in s.recs) + "\n"
        return body + json.dumps({"parentUuid": s.parent, "isSidechain": False, "type": "user"})[:44]
    s.add({"type": "assistant", "message": {"role": "assistant", "content": [
        {"type": "text", "text": "Done: the tests pass and the work is committed."}]}}, end, "end")
    s.recs.append({"type": "queue-operation", "operation": "dequeue", "timestamp": end, "sessionId": s.sid})
    return "\n".join(json.dumps(r, ensure_ascii=False, separators=(",", ":")) for r in s.recs) + "\n"


def _cc_subagent(sub: Path, s: _CcSession, end):
    sub.mkdir(parents=True)
    side = {**s.base, "isSidechain": True}
    lines = [_cc_record(s.version, side, {"parentUuid": None, "agentId": "a4f2c1e", "type": "user",
                                          "message": {"role": "user", "content": "List the chart helper files"},
                                          "uuid": uid(s.sid, "sub"), "timestamp": end}),
             _cc_record(s.version, side, {"parentUuid": uid(s.sid, "sub"), "agentId": "a4f2c1e",
                                          "type": "assistant", "message": {"role": "assistant", "content": [
                                              {"type": "text", "text": "charts/wind.py, charts/rain.py"}]},
                                          "uuid": uid(s.sid, "sub2"), "timestamp": end})]
    (sub / "agent-a4f2c1e.jsonl").write_text(
        "\n".join(json.dumps(r, separators=(",", ":")) for r in lines) + "\n", encoding="utf-8")


# ----------------------------------------------------------------------------- opencode
# The layout and record shapes follow opencode's source and thatch's plugin (cited in README.md):
# opencode.db holds session, message and part rows whose ``data`` is the record's JSON without its
# ids; the legacy storage/ tree holds one pretty-printed JSON file per record, ids included.
OC_DDL = """
CREATE TABLE project (id TEXT PRIMARY KEY, worktree TEXT NOT NULL, vcs TEXT, name TEXT, icon_url TEXT,
    icon_color TEXT, time_created INTEGER NOT NULL, time_updated INTEGER NOT NULL, time_initialized INTEGER,
    sandboxes TEXT NOT NULL);
CREATE TABLE session (id TEXT PRIMARY KEY, project_id TEXT NOT NULL REFERENCES project(id) ON DELETE CASCADE,
    parent_id TEXT, slug TEXT NOT NULL, directory TEXT NOT NULL, title TEXT NOT NULL, version TEXT NOT NULL,
    share_url TEXT, summary_additions INTEGER, summary_deletions INTEGER, summary_files INTEGER, summary_diffs TEXT,
    revert TEXT, permission TEXT, time_created INTEGER NOT NULL, time_updated INTEGER NOT NULL,
    time_compacting INTEGER, time_archived INTEGER);
CREATE TABLE message (id TEXT PRIMARY KEY, session_id TEXT NOT NULL REFERENCES session(id) ON DELETE CASCADE,
    time_created INTEGER NOT NULL, time_updated INTEGER NOT NULL, data TEXT NOT NULL);
CREATE TABLE part (id TEXT PRIMARY KEY, message_id TEXT NOT NULL REFERENCES message(id) ON DELETE CASCADE,
    session_id TEXT NOT NULL, time_created INTEGER NOT NULL, time_updated INTEGER NOT NULL, data TEXT NOT NULL);
CREATE INDEX message_session_idx ON message (session_id);
CREATE INDEX part_message_idx ON part (message_id);
CREATE INDEX part_session_idx ON part (session_id);
CREATE INDEX session_project_idx ON session (project_id);
CREATE INDEX session_parent_idx ON session (parent_id);
ALTER TABLE session ADD COLUMN workspace_id TEXT;
"""
OC_DIR = "/home/dev/trail-notes"
OC_VERSION, OC_LEGACY_VERSION = "1.1.12", "0.15.8"  # made up: the db's writer, the JSON tree's
_B62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"


def _oc_token(*parts) -> str:
    return hashlib.sha256("/".join(map(str, parts)).encode()).hexdigest()


def _oc_digits(token: str, alphabet: str, n: int) -> str:
    """``n`` characters of ``alphabet`` drawn from a hex token (a stand-in for a random source)."""
    v = int(token, 16)
    return "".join(alphabet[(v // len(alphabet) ** i) % len(alphabet)] for i in range(n))


class _OcIds:
    """opencode's ids: a prefix, 12 hex digits of (ms * 0x1000 + a counter within the ms), bitwise
    inverted for sessions (newest sort first), then 14 random base62 characters."""

    def __init__(self):
        self.last, self.n = None, 0

    def __call__(self, prefix: str, at: int, descending: bool = False) -> str:
        self.n = self.n + 1 if at == self.last else 0
        self.last = at
        v = at * 0x1000 + self.n
        v = (~v if descending else v) & (2 ** 48 - 1)
        return f"{prefix}_{v:012x}{_oc_digits(_oc_token(prefix, at, self.n), _B62, 14)}"


def _oc_ran(step) -> bool:
    """Whether production ran a step (what the engines must see to write the replies)."""
    return step[0] == "prompt" or (step[0].startswith(("prediction_", "behavior_")) and not step[2:])


_OC_EPOCH = pd.Timestamp("1970-01-01", tz="UTC")


def _msec(ts) -> int:
    return int((pd.Timestamp(ts) - _OC_EPOCH) / pd.Timedelta(milliseconds=1))


class _OcWriter:
    """The rows opencode writes, in write order, and the ids of those its legacy JSON tree also holds."""

    def __init__(self):
        self.ids = _OcIds()
        self.project = hashlib.sha1(b"acme/trail-notes root commit").hexdigest()  # the repository's first commit
        self.migrated = _msec("2026-01-07T08:05:00.000Z")  # opencode upgraded mid-session: its JSON copied into the db
        self.sessions, self.messages, self.parts = [], [], []  # db rows, in write order
        self.legacy = set()  # ids of the records the JSON tree also holds

    def session(self, sid, start, title, parent=None, migrated_from=None):
        # a session migrated from the JSON tree keeps its version and gets an empty slug
        self.sessions.append({"id": sid, "project_id": self.project, "parent_id": parent,
                              "slug": "" if migrated_from else _oc_token(sid)[:8], "directory": OC_DIR,
                              "title": title, "version": migrated_from or OC_VERSION, "time_created": start,
                              "time_updated": start})

    def message(self, sid, at, info):
        mid = self.ids("msg", at)
        self.messages.append({"id": mid, "session_id": sid, "time_created": at, "time_updated": at, "data": info})
        return mid

    def part(self, mid, sid, at, body, pid=None, updated=None):
        pid = pid or self.ids("prt", at)
        self.parts.append({"id": pid, "message_id": mid, "session_id": sid, "time_created": at,
                           "time_updated": updated or at, "data": body})
        return pid

    def user(self, sid, at):
        return self.message(sid, at, {"role": "user", "time": {"created": at}, "agent": "build",
                                      "model": {"providerID": "anthropic", "modelID": "claude-sonnet-4-5"}})

    def assistant(self, sid, parent, at, done=None, finish=None, error=None):
        info = {"role": "assistant", "parentID": parent, "mode": "build", "agent": "build",
                "path": {"cwd": OC_DIR, "root": OC_DIR}, "cost": 0.0042 if done else 0,
                "tokens": {"input": 1850, "output": 64, "reasoning": 0, "cache": {"read": 0, "write": 0}},
                "modelID": "claude-sonnet-4-5", "providerID": "anthropic",
                "time": {"created": at, **({"completed": done} if done else {})}}
        if error is not None:
            info["error"] = error
        if finish is not None:
            info["finish"] = finish
        return self.message(sid, at, info)

    def call(self, sid, parent, at, tool, args, state_of):
        """One assistant step calling one tool: step-start, the tool part, step-finish."""
        status = state_of.get("status", "completed")
        aborted = {"name": "MessageAbortedError", "data": {"message": "The operation was aborted."}}
        mid = self.assistant(sid, parent, at - 1200, done={"completed": at + 80, "error": at + 900}.get(status),
                             finish="tool-calls" if status == "completed" else None,
                             error=aborted if status == "error" else None)
        self.part(mid, sid, at - 1150, {"type": "step-start", "snapshot": _oc_token(mid, "snap")[:40]})
        if status == "completed":
            state = {"status": status, "input": args, "output": state_of["output"], "title": "",
                     "metadata": {"truncated": False},
                     "time": {"start": at, "end": at + 40}}
        elif status == "error":  # an aborted call: its running state plus the error
            state = {"status": status, "input": args, "time": {"start": at, "end": at + 900},
                     "error": "Tool execution aborted"}
        else:  # still running
            state = {"status": status, "input": args, "time": {"start": at}}
        call_id = "toolu_01" + _oc_digits(_oc_token(sid, at, tool), _B62, 22)
        self.part(mid, sid, at - 800, {"type": "tool", "callID": call_id, "tool": tool, "state": state},
                  updated=state["time"].get("end", at))
        if status == "completed":
            self.part(mid, sid, at + 60, {"type": "step-finish", "reason": "tool-calls", "cost": 0.0042,
                                          "tokens": {"input": 1850, "output": 64, "reasoning": 0,
                                                     "cache": {"read": 0, "write": 0}}})
        return mid

    def also_legacy(self, mid):
        """The message ``mid`` and its parts are in the JSON tree too."""
        self.legacy.update(p["id"] for p in self.parts if p["message_id"] == mid)
        self.legacy.add(mid)


def opencode(emb):
    data = OUT / "opencode"
    shutil.rmtree(data, ignore_errors=True)
    (data / "storage").mkdir(parents=True)
    ran = [(start, [s[:2] for s in steps if _oc_ran(s)]) for start, steps in OPENCODE_SESSIONS]
    results = run_engines(ran, OPENCODE_STORE, emb)
    w = _OcWriter()
    for k, ((start, steps), done) in enumerate(zip(OPENCODE_SESSIONS, results), start=1):
        _oc_session(w, k, start, steps, done)
    _oc_database(w, data / "opencode.db")
    _oc_storage(w, data / "storage")


def _oc_session(w: _OcWriter, k: int, start, steps, done):
    """Write session ``k``: its prompts, calls and closing replies (the first one migrated from the JSON tree)."""
    t0 = _msec(start)
    sid = w.ids("ses", t0, descending=True)
    w.session(sid, t0, "Ridge Loop trail page" if k == 1 else "Cedar Falls trail page",
              migrated_from=OC_LEGACY_VERSION if k == 1 else None)
    if k == 1:
        w.legacy.add(sid)
    done_iter, last, prompt_msg = iter(done), start, None
    for i, step in enumerate(steps):
        kind, payload = step[0], step[1]
        how = step[2] if step[2:] else {}
        ts, text = next(done_iter) if _oc_ran(step) else (ms(pd.Timestamp(last) + pd.Timedelta(seconds=7)), None)
        last, at = ts, _msec(ts)
        if kind in ("prompt", "file"):
            prompt_msg = _oc_prompt(w, sid, at, kind, payload, text)
            if k == 1 and i == 0:
                w.also_legacy(prompt_msg)
            continue
        mid = _oc_tool_step(w, sid, prompt_msg, at, step, how, text)
        if k == 1 and _msec(ts) < w.migrated:
            w.also_legacy(mid)
        nxt = steps[i + 1][0] if i + 1 < len(steps) else None
        if nxt in (None, "prompt") and _oc_ran(step):  # the step that answers the prompt in words
            end = at + 2000
            mid = w.assistant(sid, prompt_msg, end, done=end + 1500, finish="stop")
            w.part(mid, sid, end + 50, {"type": "text", "text": "Done: the page is written."})
            if k == 1 and end < w.migrated:
                w.also_legacy(mid)
    w.sessions[[s["id"] for s in w.sessions].index(sid)]["time_updated"] = _msec(last)


def _oc_prompt(w: _OcWriter, sid, at, kind, payload, text):
    """A user message: typed text with thatch's nudge parts, or an attached file as opencode expands it."""
    prompt_msg = w.user(sid, at)
    if kind == "prompt":
        w.part(prompt_msg, sid, at, {"type": "text", "text": payload})
        # thatch's plugin: one synthetic part per nudge block, pushed in chat.message
        for b, block in enumerate(text.split("\n\n") if text else []):
            tag = _oc_digits(_oc_token(prompt_msg, b), "0123456789abcdefghijklmnopqrstuvwxyz", 11)
            w.part(prompt_msg, sid, at, {"type": "text", "text": block, "synthetic": True},
                   pid=f"prt_thatch_{tag}")
    else:  # opencode reads an attached file for the model: synthetic text, then the file
        path = f"{OC_DIR}/{payload}"
        w.part(prompt_msg, sid, at, {"type": "text", "synthetic": True, "text":
                                     "Called the Read tool with the following input: "
                                     + json.dumps({"filePath": path}, separators=(",", ":"))})
        w.part(prompt_msg, sid, at, {"type": "text", "synthetic": True, "text":
                                     "<file>\n00001| # Cedar Falls\n00002| \n00003| 4.2 km (2.6 mi) "
                                     "out and back.\n\n(End of file - total 3 lines)\n</file>"})
        w.part(prompt_msg, sid, at, {"type": "file", "mime": "text/markdown",
                                     "filename": payload.rsplit("/", 1)[-1], "url": f"file://{path}"})
    return prompt_msg


def _oc_tool_step(w: _OcWriter, sid, prompt_msg, at, step, how, text):
    """One tool call: thatch's memory tool, a Task with its child session, or a thatch engine tool."""
    kind, payload = step[0], step[1]
    if kind == "remember":
        out = f"[saved] {OPENCODE_STORE} :: {payload['label']}"
        return w.call(sid, prompt_msg, at, "thatch_memory_remember", payload, {"output": out})
    if kind == "task":
        child_at = at + 300
        child = w.ids("ses", child_at, descending=True)
        mid = w.call(sid, prompt_msg, at, "task", payload, {
            "output": "Three pages link a trailhead: ridge-loop.md, cedar-falls.md, index.md."})
        w.session(child, child_at, f"Child session - {ms(pd.Timestamp(child_at, unit='ms', tz='UTC'))}",
                  parent=sid)
        cu = w.user(child, child_at)
        w.part(cu, child, child_at, {"type": "text", "text": payload["prompt"]})
        ca = w.assistant(child, cu, child_at + 900, done=child_at + 4000, finish="stop")
        w.part(ca, child, child_at + 950, {"type": "text", "text":
                                           "ridge-loop.md, cedar-falls.md and index.md link a trailhead."})
        return mid
    state_of = {"output": text} if _oc_ran(step) else {"status": how["status"]}
    return w.call(sid, prompt_msg, at, f"thatch_{kind}", payload, state_of)


def _oc_database(w: _OcWriter, path: Path):
    """``opencode.db``: the rows in write order; a migrated part carries the migration's time."""
    con = sqlite3.connect(path)
    con.executescript(OC_DDL)
    con.execute("INSERT INTO project (id, worktree, vcs, time_created, time_updated, sandboxes) VALUES (?,?,?,?,?,?)",
                (w.project, OC_DIR, "git", w.sessions[0]["time_created"], w.sessions[-1]["time_updated"], "[]"))
    for s in w.sessions:
        con.execute(f"INSERT INTO session ({', '.join(s)}) VALUES ({', '.join('?' * len(s))})", tuple(s.values()))
    compact = {"separators": (",", ":"), "ensure_ascii": False}
    for m in w.messages:
        con.execute("INSERT INTO message VALUES (?,?,?,?,?)", (m["id"], m["session_id"], m["time_created"],
                                                              m["time_updated"], json.dumps(m["data"], **compact)))
    for p in w.parts:
        created = w.migrated if p["id"] in w.legacy else p["time_created"]  # migrated parts: the migration's time
        con.execute("INSERT INTO part VALUES (?,?,?,?,?,?)", (p["id"], p["message_id"], p["session_id"], created,
                                                              max(created, p["time_updated"]),
                                                              json.dumps(p["data"], **compact)))
    con.commit()
    con.close()


def _oc_storage(w: _OcWriter, root: Path):
    """The legacy ``storage/`` tree: the first session and the records written before the migration."""
    def put(rel, obj):  # opencode's Storage.write: JSON.stringify(content, null, 2)
        f = root / rel
        f.parent.mkdir(parents=True, exist_ok=True)
        f.write_text(json.dumps(obj, indent=2, ensure_ascii=False), encoding="utf-8")

    first, project = w.sessions[0], w.project
    put(f"project/{project}.json", {"id": project, "worktree": OC_DIR, "vcs": "git",
                                    "time": {"created": first["time_created"]}})
    put(f"session/{project}/{first['id']}.json", {
        "id": first["id"], "version": first["version"], "projectID": project, "directory": OC_DIR, "title": first["title"],
        "time": {"created": first["time_created"], "updated": w.migrated}})
    for m in w.messages:
        if m["id"] in w.legacy:
            put(f"message/{m['session_id']}/{m['id']}.json", {"id": m["id"], "sessionID": m["session_id"],
                                                               **m["data"]})
    for p in w.parts:
        if p["id"] in w.legacy:
            put(f"part/{p['message_id']}/{p['id']}.json", {"id": p["id"], "sessionID": p["session_id"],
                                                            "messageID": p["message_id"], **p["data"]})
# ----------------------------------------------------------------------------- omi
# The shapes follow omi's MemoryDB (BasedHardware/omi backend/models/memories.py) and the belief overlay
# of backend/utils/memory/belief_model.py; see README.md. One response, read at one request time.
OMI_READ_AT = "2026-01-15T09:30:12.345678+00:00"
OMI_LOCKED = "Sam keeps the spare house key with the neighbour in flat 3B, behind the blue door on the left"


def _omi_row(mid, content, category, created, *, updated=None, manual=False, cls=None, half_life="prior",
             as_of=None, invalid_at=None, superseded_by=None, locked=False, canonical=False):
    """One /v3/memories row; currency and band computed by omi's formula with thatchlab's belief code."""
    epoch = int(pd.Timestamp(created).timestamp())
    row = {"id": mid, "uid": "u-sam", "content": content, "category": category, "visibility": "private",
           "tags": [], "created_at": created, "updated_at": updated or created, "memory_id": mid,
           "conversation_id": f"conv-{mid[3:]}" if not manual else None, "reviewed": manual,
           "user_review": True if manual else None, "manually_added": manual, "edited": False,
           "scoring": f"{int(manual):02d}_999_{epoch:010d}", "app_id": None, "data_protection_level": None,
           "is_locked": locked, "kg_extracted": False, "is_baseline": False, "evidence": [],
           "valid_at": created, "invalid_at": invalid_at, "superseded_by": superseded_by}
    if canonical:  # a row the canonical store projected (legacy exposure drops memory_tier)
        row.update(ledger_schema_version="knowledge_ledger.v1", kind="fact", subject_scope="primary_user")
    hl = (BELIEF_PRIORS[cls] if cls is not None else None) if half_life == "prior" else half_life
    clock = as_of or created
    cur = None if cls is None and hl is None else compute_currency(clock, OMI_READ_AT, hl, invalid_at)
    row.update(belief_class=cls, half_life_days=hl, as_of=clock, belief_computed_at=OMI_READ_AT, currency=cur,
               currency_band=currency_band(cur))
    return row


def omi():
    mem = [
        _omi_row("om-01", "Sam lives in Lisbon", "system", "2025-11-02T08:00:00+00:00",
                 updated="2026-01-10T09:00:00+00:00", cls="state", as_of="2025-12-20T18:00:00+00:00",
                 invalid_at="2026-01-10T09:00:00+00:00", superseded_by="om-07", canonical=True),
        _omi_row("om-02", "Sam is allergic to peanuts", "manual", "2025-10-11T12:00:00+00:00", manual=True,
                 cls="identity"),
        _omi_row("om-03", "Sam prefers oat milk in coffee", "interesting", "2025-12-01T07:30:00+00:00",
                 updated="2026-01-03T07:30:00.250000+00:00", cls="preference",
                 as_of="2026-01-03T07:30:00.250000+00:00"),
        _omi_row("om-04", "Sam plans a trip to Porto in February", "system", "2026-01-04T20:00:00+00:00",
                 cls="plan", invalid_at="2026-02-28T23:59:59+00:00", canonical=True),
        _omi_row("om-05", "Sam's sister is called Ana", "system", "2025-09-15T10:00:00+00:00",
                 updated="2025-11-20T10:00:00+00:00", cls="relationship", half_life=400.0,
                 as_of="2025-11-20T10:00:00+00:00"),
        _omi_row("om-06", "Sam went running along the river this morning", "interesting",
                 "2026-01-05T07:00:00+00:00", cls="episodic"),
        _omi_row("om-07", "Sam moved to Porto", "manual", "2026-01-10T09:00:00+00:00", manual=True, cls="state"),
        _omi_row("om-08", "Sam mentioned a podcast about sourdough baking", "interesting",
                 "2026-01-13T21:15:00+00:00"),
        _omi_row("om-09", OMI_LOCKED[:70] + "...", "system", "2025-12-28T11:00:00+00:00", cls="preference",
                 locked=True),  # omi cuts a locked memory's content to 70 characters
        _omi_row("om-10", "Sam works night shifts at the hospital on weekends", "workflow",
                 "2025-12-15T06:00:00+00:00", updated="2026-01-12T06:00:00+00:00", cls="state",
                 as_of="2026-01-12T06:00:00+00:00", canonical=True),
    ]
    (OUT / "omi_memories.json").write_text(json.dumps(mem, indent=1) + "\n", encoding="utf-8")


# ----------------------------------------------------------------------------- ai-memory
# The tables are ai-memory's own DDL (alphaonedev/claude-memory src/storage/migrations.rs bootstrap SCHEMA,
# migrations/sqlite/0038_v07_recall_observations.sql, 0033/0035 for the shadow table, alphaonedev/ai-memory-mcp
# migrations/sqlite/0061_v77_recall_observations_folded.sql); see README.md.
AI_MEMORY_DDL = """
CREATE TABLE memories (
    id TEXT PRIMARY KEY, tier TEXT NOT NULL, namespace TEXT NOT NULL DEFAULT 'global',
    title TEXT NOT NULL, content TEXT NOT NULL, tags TEXT NOT NULL DEFAULT '[]',
    priority INTEGER NOT NULL DEFAULT 5, confidence REAL NOT NULL DEFAULT 1.0,
    source TEXT NOT NULL DEFAULT 'api', access_count INTEGER NOT NULL DEFAULT 0,
    created_at TEXT NOT NULL, updated_at TEXT NOT NULL, last_accessed_at TEXT, expires_at TEXT,
    metadata TEXT NOT NULL DEFAULT '{}', reflection_depth INTEGER NOT NULL DEFAULT 0,
    memory_kind TEXT NOT NULL DEFAULT 'observation', atomised_into INTEGER,
    atom_of TEXT REFERENCES memories(id), entity_id TEXT, persona_version INTEGER,
    citations TEXT NOT NULL DEFAULT '[]', source_uri TEXT, source_span TEXT,
    confidence_source TEXT NOT NULL DEFAULT 'caller_provided', confidence_signals TEXT,
    confidence_decayed_at TEXT, mentioned_entity_id TEXT);
CREATE UNIQUE INDEX idx_memories_title_ns ON memories(title, namespace);
CREATE TABLE memory_links (
    source_id TEXT NOT NULL REFERENCES memories(id) ON DELETE CASCADE,
    target_id TEXT NOT NULL REFERENCES memories(id) ON DELETE CASCADE,
    relation TEXT NOT NULL DEFAULT 'related_to', created_at TEXT NOT NULL,
    valid_from TEXT, valid_until TEXT, observed_by TEXT, signature BLOB, attest_level TEXT,
    PRIMARY KEY (source_id, target_id, relation),
    CHECK (relation IN ('related_to','supersedes','contradicts','derived_from','reflects_on','derives_from')));
CREATE TABLE confidence_shadow_observations (
    id INTEGER PRIMARY KEY AUTOINCREMENT, memory_id TEXT NOT NULL, namespace TEXT NOT NULL,
    source TEXT NOT NULL DEFAULT 'unknown', caller_confidence REAL NOT NULL,
    derived_confidence REAL NOT NULL, signals TEXT NOT NULL, recall_outcome TEXT,
    observed_at TEXT NOT NULL,
    FOREIGN KEY(memory_id) REFERENCES memories(id) ON DELETE CASCADE);
CREATE TABLE recall_observations (
    recall_id TEXT NOT NULL,
    memory_id TEXT NOT NULL REFERENCES memories(id) ON DELETE CASCADE,
    retriever TEXT NOT NULL, rank INTEGER NOT NULL, score REAL NOT NULL,
    consumed INTEGER NOT NULL DEFAULT 0,
    observed_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
    consumed_at TEXT NULL,
    consumed_by_memory_id TEXT NULL REFERENCES memories(id) ON DELETE CASCADE,
    folded INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (recall_id, memory_id));
"""


def _signals(age, atom, prior, fresh) -> str:
    return json.dumps({"source_age_days": age, "atom_derivation": atom, "prior_corroboration_count": prior,
                       "freshness_factor": fresh, "baseline_per_source": 0.5})


def ai_memory():
    path = OUT / "ai-memory.db"
    path.unlink(missing_ok=True)
    with sqlite3.connect(path) as c:
        c.executescript(AI_MEMORY_DDL)
        # id, tier, namespace, title, content, confidence, source, created_at, atom_of, metadata,
        # confidence_source, confidence_decayed_at
        mems = [
            ("am-1", "long", "ops", "Deploy window", "Deploys happen Tuesday after 14:00", 0.9, "user",
             "2026-01-02T09:00:00Z", None, "{}", "caller_provided", None),
            ("am-2", "long", "ops", "Deploy window (atom)", "Tuesday deploys", 0.8, "claude",
             "2026-01-02T09:05:00.250Z", "am-1", "{}", "caller_provided", None),
            ("am-3", "long", "ops", "Runbook location", "The runbook is in docs/runbook.md", 0.95, "user",
             "2026-01-03T10:00:00+00:00", None, "{}", "caller_provided", None),
            ("am-4", "short", "work", "Standup", "Standup moved to 09:30", 0.6, "api",
             "2026-01-05T08:00:00Z", None, json.dumps({"atom_of": "am-9"}), "caller_provided", None),
            ("am-5", "mid", "work", "Reviewer", "Priya reviews the billing code", 0.55, "import",
             "2026-01-06T12:00:00Z", None, "{}", "decayed", "2026-01-10T00:00:00.123456789+00:00"),
            # written before the range triggers existed: ai-memory checks new writes only
            ("am-6", "long", "work", "Release train", "Releases ship every second Thursday", 1.3, "cli",
             "2025-12-20T16:00:00Z", None, "{}", "caller_provided", None)]
        c.executemany("INSERT INTO memories (id, tier, namespace, title, content, confidence, source, created_at, "
                      "updated_at, atom_of, metadata, confidence_source, confidence_decayed_at) "
                      "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)", [m[:8] + (m[7],) + m[8:] for m in mems])
        c.executemany("INSERT INTO memory_links (source_id, target_id, relation, created_at, attest_level) "
                      "VALUES (?,?,?,?,?)", [
                          ("am-2", "am-1", "derives_from", "2026-01-02T09:05:00Z", "unsigned"),
                          ("am-1", "am-3", "related_to", "2026-01-03T10:00:00Z", "unsigned"),
                          ("am-3", "am-1", "related_to", "2026-01-03T10:00:00Z", "unsigned")])
        c.executemany("INSERT INTO confidence_shadow_observations (memory_id, namespace, source, caller_confidence, "
                      "derived_confidence, signals, recall_outcome, observed_at) VALUES (?,?,?,?,?,?,?,?)", [
                          ("am-1", "ops", "user", 0.9, 0.62, _signals(6.0, False, 1, 0.87), None,
                           "2026-01-08T09:00:00.500+00:00"),
                          ("am-2", "ops", "claude", 0.8, 0.71, _signals(6.0, True, 0, 0.87), None,
                           "2026-01-08T09:00:00.500+00:00"),
                          ("am-3", "ops", "user", 0.95, 0.64, _signals(6.2, False, 1, 0.86), "recalled",
                           "2026-01-09T15:00:00.123456+00:00"),
                          ("am-4", "work", "api", 0.6, 0.58, _signals(4.3, False, 0, 0.9), "skipped",
                           "2026-01-09T15:30:00.123456789+00:00")])
        # recall_id, memory_id, retriever, rank, score, consumed, observed_at, consumed_at, consumed_by, folded
        c.executemany("INSERT INTO recall_observations VALUES (?,?,?,?,?,?,?,?,?,?)", [
            ("rc-01", "am-1", "fts5", 1, 3.1, 1, "2026-01-08T09:00:00.000Z", "2026-01-08T09:00:05.123456789+00:00",
             None, 0),
            ("rc-01", "am-2", "fts5", 2, 2.4, 0, "2026-01-08T09:00:00.000Z", None, None, 0),
            ("rc-02", "am-3", "hnsw", 1, 0.82, 1, "2026-01-09T15:00:00.250Z", "2026-01-09T15:00:04.5+00:00",
             None, 0),
            ("rc-02", "am-1", "hnsw", 2, 0.61, 0, "2026-01-09T15:00:00.250Z", None, None, 0),
            ("rc-03", "am-4", "hybrid", 1, 0.9, 1, "2026-01-09T15:30:00.000Z", "2026-01-09T15:31:00+00:00",
             "am-5", 0),
            ("rc-03", "am-5", "hybrid", 2, 0.7, 0, "2026-01-09T15:30:00.000Z", None, None, 0),
            ("rc-04", "am-5", "hnsw", 1, 0.7, 1, "2026-01-12T11:00:00.000Z", "2026-01-12T11:00:02+00:00", None, 0),
            ("rc-04", "am-6", "hnsw", 2, 0.66, 0, "2026-01-12T11:00:00.000Z", None, None, 0),
            ("rc-04", "am-8", "hnsw", 3, 0.5, 0, "2026-01-12T11:00:00.000Z", None, None, 0)])


# ----------------------------------------------------------------------------- mnemo
# No public source of mnemo's dump format exists: these columns are thatchlab's assumption (see README.md).
def mnemo():
    rows = []
    base = pd.Timestamp("2026-01-05T08:50:00Z")
    for day in range(4):
        d = base + pd.Timedelta(days=day)
        rows += [("deploy.started", "ws-ops", d, "" if day % 2 else f"s-ops-{day}", '["prod", "billing"]'),
                 ("deploy.success", "ws-ops", d + pd.Timedelta(minutes=12), "" if day % 2 else f"s-ops-{day}",
                  '["prod"]'),
                 ("incident.opened", "ws-ops", d + pd.Timedelta(hours=5), "", "prod,pager"),
                 ("pr.merged", "ws-web", d + pd.Timedelta(hours=1), f"s-web-{day}", "")]
    ev = pd.DataFrame(rows, columns=["name", "workspace_id", "occurred_at", "session_id", "entities"])
    # the incidents were copied in from another tool without an id
    ev.insert(0, "id", [None if n == "incident.opened" else f"ev-{i:03d}" for i, n in enumerate(ev["name"])])
    ev["occurred_at"] = ev["occurred_at"].map(lambda x: x.strftime("%Y-%m-%d %H:%M:%S+00"))
    ev.loc[len(ev)] = ["ev-999", "pr.merged", "ws-web", "not a time", "", ""]
    ev.to_csv(OUT / "mnemo_events.csv", index=False)
    rc = []
    for day in range(4):
        d = base + pd.Timedelta(days=day)
        rc += [("deploy runbook", "ws-ops", d + pd.Timedelta(minutes=2), "" if day % 2 else f"s-ops-{day}", "prod"),
               ("weekly metrics", "ws-web", d + pd.Timedelta(hours=1, minutes=5), f"s-web-{day}", "")]
    rcd = pd.DataFrame(rc, columns=["fact_id", "workspace_id", "recalled_at", "session_id", "entities"])
    rcd["recalled_at"] = rcd["recalled_at"].map(lambda x: x.strftime("%Y-%m-%d %H:%M:%S+00"))
    rcd.to_csv(OUT / "mnemo_recalls.csv", index=False)  # the recall telemetry has no id column


def main(only=()):
    """Write every sample, or only the sources named in ``only`` (then ``lookup.jsonl`` is left as it is)."""
    # the texts are registered as the sessions are defined above; vectors follow from them
    emb = lookup()
    sources = {"claude-code": lambda: claude_code(emb), "opencode": lambda: opencode(emb), "omi": omi,
               "ai-memory": ai_memory, "mnemo": mnemo}
    unknown = [s for s in only if s not in sources]
    if unknown:
        raise SystemExit(f"unknown source(s) {unknown}; expected some of {list(sources)}")
    if not only:
        table = pd.DataFrame({"text": list(TEXTS), "embedding": [vector(x, tp) for x, tp in TEXTS.items()]})
        with open(OUT / "lookup.jsonl", "w", encoding="utf-8") as fh:
            for rec in table.to_dict(orient="records"):
                fh.write(json.dumps(rec, ensure_ascii=False) + "\n")
    for name, make in sources.items():
        if not only or name in only:
            make()
    print(f"wrote the samples to {OUT}" + (f" ({', '.join(only)})" if only else ""))


if __name__ == "__main__":
    import sys

    main(tuple(sys.argv[1:]))
