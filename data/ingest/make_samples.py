"""Write the sample production records of ``data/ingest/`` (run from the repository root).

    .venv/bin/python data/ingest/make_samples.py

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

CLAUDE_SESSIONS = [
    ("2026-01-05T09:00:00.000Z", "hook-attachment", [
        ("prompt", t("Can you add unit tests for the forecast parser module?", "tests")),
        ("bash", "pytest -q tests/test_forecast.py"),
        ("prediction_update", {"matcher": M_TESTS, "prediction": P_FIXTURES, "signal": "create",
                               "rationale": "the existing tests in the repo use pytest"}),
        ("behavior_codify", {"situation": S_COMMIT, "behavior": B_SUITE,
                             "rationale": "a commit last week broke the nightly build"}),
        ("prompt", t("Write more tests for the radar tile loader please", "tests")),
        ("prediction_update", {"matcher": M_TESTS, "prediction": P_FIXTURES, "signal": "confirm",
                               "rationale": "user: yes, pytest fixtures please"}),
        ("prompt", t("ok, commit this work", "commit")),
        ("behavior_feedback", {"behavior": B_SUITE, "relevant": True, "context": "ran the suite before the commit"}),
        ("prediction_list", {}),
    ]),
    ("2026-01-06T14:00:00.000Z", "hook-inline", [
        ("prompt", t("add tests for the wind chart helpers", "tests")),
        ("prediction_update", {"matcher": M_TESTS, "prediction": P_FIXTURES, "signal": "confirm",
                               "rationale": "user kept the fixtures as written"}),
        ("prediction_update", {"matcher": M_NAMING, "prediction": P_SNAKE, "signal": "create",
                               "rationale": "user renamed WindChartHelpers.py"}),
        ("prediction_query", {"context": t("where should the new geocoding helpers live", "naming")}),
        ("prompt", t("yes", None)),
        ("prompt", t("let's commit and push the chart changes", "commit")),
        ("behavior_feedback", {"behavior": B_SUITE, "relevant": True, "context": "caught a failing chart test"}),
        ("behavior_codify", {"situation": S_DOCS, "behavior": B_EXAMPLES,
                             "rationale": "a README example had drifted from the API"}),
        ("behavior_list", {}),
    ]),
    ("2026-01-08T10:30:00.000Z", "hook-system", [
        ("prompt", t("write tests for the alerts module, same style as before", "tests")),
        ("prediction_update", {"matcher": M_TESTS, "prediction": P_FIXTURES, "signal": "confirm",
                               "rationale": "user approved the alerts tests"}),
        ("prompt", t("update the README docs for the radar endpoint", "docs")),
        ("behavior_feedback", {"behavior": B_EXAMPLES, "relevant": False, "context": "a one-line wording fix"}),
        ("prediction_delete", {"prediction": P_SNAKE}),
        ("prompt", t("now the tests for the settings page", "tests")),
        ("prediction_update", {"matcher": M_TESTS, "prediction": P_FIXTURES, "signal": "confirm",
                               "rationale": "user: same pattern, good"}),
        ("prediction_update", {"matcher": M_TESTS, "prediction": P_FIXTURES, "signal": "soft",
                               "rationale": "user rewrote one fixture by hand"}),
        ("prompt", t("and the tests for the units converter", "tests")),
        ("prediction_list", {}),
    ]),
]

# opencode: a second project, its own store
M_TRAIL = t("editing trail description markdown", "trails")
P_METRIC = t("give distances in kilometres first, miles in brackets", "trails")
S_TRAIL = t("adding a new trail page", "trails")
B_MAP = t("check the map link opens the right trailhead", "trails")

OPENCODE_SESSIONS = [
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
    ("2026-01-09T17:45:00.000Z", [
        ("prompt", t("new page for the Cedar Falls trail please", "trails")),
        ("prediction_update", {"matcher": M_TRAIL, "prediction": P_METRIC, "signal": "confirm",
                               "rationale": "kept km first unprompted"}),
        ("prediction_list", {}),
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
def uid(*parts) -> str:
    return str(uuid.uuid5(NS, "/".join(map(str, parts))))


def claude_code(emb):
    root = OUT / "claude-code" / "-home-dev-weather-app"
    shutil.rmtree(OUT / "claude-code", ignore_errors=True)
    root.mkdir(parents=True)
    cwd = "/home/dev/weather-app"
    results = run_engines(CLAUDE_SESSIONS, "weather-app", emb)
    for (start, style, steps), done in zip(CLAUDE_SESSIONS, results):
        sid = uid("session", start)
        base = {"sessionId": sid, "cwd": cwd, "version": "2.0.31", "gitBranch": "main", "userType": "external",
                "isSidechain": False}
        recs = [{"type": "summary", "summary": "Tests and commits for the weather app", "leafUuid": uid(sid, "leaf")}]
        parent = None

        def add(rec, ts, n, sid=sid, recs=recs, base=base):  # this session's, bound now
            nonlocal parent
            u = uid(sid, n)
            recs.append({**base, "parentUuid": parent, "uuid": u, "timestamp": ts, **rec})
            parent = u
            return u

        n = 0
        for (kind, payload), (ts, text) in zip(steps, done):
            n += 1
            if kind == "prompt":
                if style == "hook-inline" and text:
                    content = [{"type": "text", "text": payload},
                               {"type": "text", "text": f"<user-prompt-submit-hook>{text}</user-prompt-submit-hook>"}]
                    u = add({"type": "user", "message": {"role": "user", "content": content}}, ts, n)
                else:
                    u = add({"type": "user", "message": {"role": "user", "content": payload}}, ts, n)
                if text and style == "hook-attachment":
                    add({"type": "attachment", "attachment": {
                        "type": "hook_additional_context", "hookName": "UserPromptSubmit",
                        "hookEvent": "UserPromptSubmit", "toolUseID": uid(sid, n, "hook"),
                        "content": text.split("\n")}}, ts, f"{n}h")
                elif text and style == "hook-system":
                    add({"type": "system", "subtype": "informational", "level": "info", "isMeta": False,
                         "content": f"UserPromptSubmit hook success: {text}"}, ts, f"{n}h")
                recs.append({"type": "file-history-snapshot", "messageId": u, "isSnapshotUpdate": False,
                             "snapshot": {"messageId": u, "trackedFileBackups": {}, "timestamp": ts}})
                continue
            call = f"toolu_{hashlib.sha256(f'{sid}/{n}'.encode()).hexdigest()[:20]}"
            name = "Bash" if kind == "bash" else f"mcp__thatch__{kind}"
            inp = {"command": payload, "description": "Run the new tests"} if kind == "bash" else payload
            add({"type": "assistant", "requestId": f"req_{n:04d}", "message": {
                "model": "claude-sonnet-4-5", "id": f"msg_{uid(sid, n)[:8]}", "type": "message", "role": "assistant",
                "content": [{"type": "tool_use", "id": call, "name": name, "input": inp}],
                "stop_reason": "tool_use", "usage": {"input_tokens": 1200, "output_tokens": 60}}}, ts, n)
            result = text if kind == "bash" else [{"type": "text", "text": text}]
            add({"type": "user", "message": {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": call, "content": result}]}}, ts, f"{n}r")
        end = ms(pd.Timestamp(done[-1][0]) + pd.Timedelta(seconds=5))
        add({"type": "assistant", "message": {"role": "assistant", "content": [
            {"type": "text", "text": "Done: the tests pass and the work is committed."}]}}, end, "end")
        # records a real transcript holds that carry nothing for the log
        recs.insert(2, {**base, "type": "user", "isMeta": True, "uuid": uid(sid, "meta"), "timestamp": start,
                        "message": {"role": "user", "content": "Caveat: the messages below were generated by the "
                                    "user while running local commands."}})
        recs.insert(3, {**base, "type": "user", "uuid": uid(sid, "cmd"), "timestamp": start,
                        "message": {"role": "user", "content": "<command-name>/clear</command-name>"}})
        recs.append({"type": "queue-operation", "operation": "enqueue", "timestamp": end, "sessionId": sid})
        recs.append({"type": "telemetry-blip", "timestamp": end, "sessionId": sid})
        if style == "hook-inline":  # a subagent's exchange inside the main file
            recs.append({**base, "isSidechain": True, "type": "user", "uuid": uid(sid, "side"), "timestamp": end,
                         "message": {"role": "user", "content": "List the chart helper files"}})
            recs.append({**base, "isSidechain": True, "type": "assistant", "uuid": uid(sid, "side2"),
                         "timestamp": end, "message": {"role": "assistant", "content": [
                             {"type": "text", "text": "charts/wind.py, charts/rain.py"}]}})
        lines = [json.dumps(r, ensure_ascii=False) for r in recs]
        body = "\n".join(lines) + "\n"
        if style == "hook-system":  # the host was still writing this session: a cut-off last line
            body += json.dumps({**base, "type": "assistant", "timestamp": end})[:40]
        (root / f"{sid}.jsonl").write_text(body, encoding="utf-8")
        if style == "hook-inline":
            sub = root / sid / "subagents"
            sub.mkdir(parents=True)
            (sub / "agent-a1.jsonl").write_text(json.dumps(
                {**base, "isSidechain": True, "agentId": "a1", "type": "user", "uuid": uid(sid, "sub"),
                 "timestamp": end, "message": {"role": "user", "content": "List the chart helper files"}}) + "\n")


# ----------------------------------------------------------------------------- opencode
def opencode(emb):
    root = OUT / "opencode" / "storage"
    shutil.rmtree(OUT / "opencode", ignore_errors=True)
    results = run_engines([(s, steps) for s, steps in OPENCODE_SESSIONS], "trail-notes", emb)

    def put(rel, obj):
        f = root / rel
        f.parent.mkdir(parents=True, exist_ok=True)
        f.write_text(json.dumps(obj, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")

    epoch = pd.Timestamp("1970-01-01", tz="UTC")

    def msec(ts):
        return int((pd.Timestamp(ts) - epoch) / pd.Timedelta(milliseconds=1))

    project = "prj_trailnotes01"
    for k, ((start, steps), done) in enumerate(zip(OPENCODE_SESSIONS, results), start=1):
        sid = f"ses_{k:02d}trailnotes"
        put(f"session/{project}/{sid}.json", {"id": sid, "projectID": project, "directory": "/home/dev/trail-notes",
                                              "title": f"Trail pages {k}", "version": "0.15.8",
                                              "time": {"created": msec(start), "updated": msec(done[-1][0])}})
        m = 0
        assistant = None
        for (kind, payload), (ts, text) in zip(steps, done):
            if kind == "prompt":
                m += 1
                mid = f"msg_{k:02d}{m:03d}u"
                put(f"message/{sid}/{mid}.json", {"id": mid, "sessionID": sid, "role": "user",
                                                  "time": {"created": msec(ts)}})
                put(f"part/{mid}/prt_{mid}a.json", {"id": f"prt_{mid}a", "sessionID": sid, "messageID": mid,
                                                    "type": "text", "text": payload})
                if text:
                    put(f"part/{mid}/prt_{mid}b.json", {"id": f"prt_{mid}b", "sessionID": sid, "messageID": mid,
                                                        "type": "text", "synthetic": True, "text": text})
                m += 1
                assistant = f"msg_{k:02d}{m:03d}a"
                put(f"message/{sid}/{assistant}.json", {"id": assistant, "sessionID": sid, "role": "assistant",
                                                        "parentID": mid, "modelID": "claude-sonnet-4-5",
                                                        "providerID": "anthropic", "time": {"created": msec(ts) + 900}})
                put(f"part/{assistant}/prt_{assistant}0.json", {"id": f"prt_{assistant}0", "sessionID": sid,
                                                                "messageID": assistant, "type": "step-start"})
                continue
            m += 1
            put(f"part/{assistant}/prt_{assistant}{m:03d}.json", {
                "id": f"prt_{assistant}{m:03d}", "sessionID": sid, "messageID": assistant, "type": "tool",
                "tool": f"thatch_{kind}", "callID": f"call_{k:02d}{m:03d}",
                "state": {"status": "completed", "input": payload, "output": text, "title": kind, "metadata": {},
                          "time": {"start": msec(ts), "end": msec(ts) + 40}}})
    # a subagent's session: read only with subagents=True
    put(f"session/{project}/ses_99subagent.json", {"id": "ses_99subagent", "projectID": project,
                                                   "parentID": "ses_01trailnotes", "directory": "/home/dev/trail-notes",
                                                   "time": {"created": msec("2026-01-07T08:05:00Z")}})
    put("message/ses_99subagent/msg_99001u.json", {"id": "msg_99001u", "sessionID": "ses_99subagent", "role": "user",
                                                   "time": {"created": msec("2026-01-07T08:05:00Z")}})
    put("part/msg_99001u/prt_msg_99001ua.json", {"id": "prt_msg_99001ua", "type": "text",
                                                 "text": "find every page that links a trailhead"})


# ----------------------------------------------------------------------------- omi
def omi():
    mem = [
        {"id": "om-01", "content": "Sam lives in Lisbon", "category": "core", "belief_class": "state",
         "created_at": "2025-11-02T08:00:00Z", "updated_at": "2026-01-10T09:00:00Z", "half_life_days": None,
         "user_asserted": False, "corroboration_count": 2, "last_corroborated_at": "2025-12-20T18:00:00Z",
         "superseded_by": "om-07", "valid_to": None, "currency": 0.31, "currency_band": "stale",
         "as_of": "2026-01-15T00:00:00Z"},
        {"id": "om-02", "content": "Sam is allergic to peanuts", "category": "core", "belief_class": "identity",
         "created_at": "2025-10-11T12:00:00Z", "updated_at": "2025-10-11T12:00:00Z", "user_asserted": True,
         "corroboration_count": 0, "currency": 1.0, "currency_band": "fresh", "as_of": "2026-01-15T00:00:00Z"},
        {"id": "om-03", "content": "Sam prefers oat milk in coffee", "category": "lifestyle",
         "belief_class": "preference", "created_at": "2025-12-01T07:30:00Z", "updated_at": "2026-01-03T07:30:00Z",
         "corroboration_count": 3, "last_corroborated_at": "2026-01-03T07:30:00Z", "currency": 0.88,
         "currency_band": "fresh", "as_of": "2026-01-15T00:00:00Z"},
        {"id": "om-04", "content": "Sam plans a trip to Porto in February", "category": "work",
         "belief_class": "plan", "created_at": "2026-01-04T20:00:00Z", "updated_at": "2026-01-04T20:00:00Z",
         "valid_to": "2026-02-28T23:59:59Z", "currency": 0.74, "currency_band": "aging",
         "as_of": "2026-01-15T00:00:00Z"},
        {"id": "om-05", "content": "Sam's sister is called Ana", "category": "core", "belief_class": "relationship",
         "created_at": "2025-09-15T10:00:00Z", "updated_at": "2025-11-20T10:00:00Z", "corroboration_count": 1,
         "last_corroborated_at": "2025-11-20T10:00:00Z", "half_life_days": 400},
        {"id": "om-06", "content": "Sam went running this morning", "category": "health",
         "belief_class": "mood", "created_at": "2026-01-12T07:00:00Z", "updated_at": "2026-01-12T07:00:00Z"},
        {"id": "om-07", "content": "Sam moved to Porto", "category": "core", "belief_class": "state",
         "created_at": "2026-01-10T09:00:00Z", "updated_at": "2026-01-10T09:00:00Z", "user_asserted": True,
         "currency": 0.97, "currency_band": "fresh", "as_of": "2026-01-15T00:00:00Z"},
        {"id": "om-08", "content": "", "category": "other", "created_at": "2026-01-13T07:00:00Z"},
        {"id": "om-03", "content": "Sam prefers oat milk in coffee", "category": "lifestyle",
         "created_at": "2025-12-01T07:30:00Z"},
        {"id": "om-09", "content": "Sam deleted the old gym membership note", "category": "other",
         "created_at": "2025-12-28T11:00:00Z", "updated_at": "2026-01-02T11:00:00Z", "deleted": True},
    ]
    (OUT / "omi_memories.json").write_text(json.dumps(mem, indent=1) + "\n", encoding="utf-8")


# ----------------------------------------------------------------------------- ai-memory
def ai_memory():
    path = OUT / "ai-memory.db"
    path.unlink(missing_ok=True)
    with sqlite3.connect(path) as c:
        c.executescript("""
        CREATE TABLE memories (id TEXT PRIMARY KEY, tier TEXT, namespace TEXT, title TEXT, content TEXT,
            confidence REAL NOT NULL DEFAULT 1.0, source TEXT, created_at TEXT NOT NULL, updated_at TEXT NOT NULL,
            atom_of TEXT, metadata TEXT, confidence_source TEXT NOT NULL DEFAULT 'caller_provided',
            confidence_signals TEXT, confidence_decayed_at TEXT);
        CREATE TABLE memory_links (source_id TEXT NOT NULL, target_id TEXT NOT NULL, relation TEXT,
            created_at TEXT);
        CREATE TABLE confidence_shadow_observations (id INTEGER PRIMARY KEY AUTOINCREMENT,
            memory_id TEXT NOT NULL, namespace TEXT NOT NULL, source TEXT, observed_at TEXT NOT NULL,
            caller_confidence REAL, derived_confidence REAL NOT NULL, signals TEXT, recall_outcome TEXT);
        CREATE TABLE recall_observations (recall_id TEXT, memory_id TEXT, retriever TEXT, rank INTEGER,
            score REAL, consumed INTEGER, observed_at TEXT);
        """)
        mems = [("am-1", "long", "ops", "Deploy window", "Deploys happen Tuesday after 14:00", 0.9, "user",
                 "2026-01-02T09:00:00Z", None, None),
                ("am-2", "long", "ops", "Deploy window (atom)", "Tuesday deploys", 0.8, "assistant",
                 "2026-01-02T09:05:00Z", "am-1", None),
                ("am-3", "long", "ops", "Runbook location", "The runbook is in docs/runbook.md", 0.95, "user",
                 "2026-01-03T10:00:00Z", None, None),
                ("am-4", "short", "work", "Standup", "Standup moved to 09:30", 0.6, "api", "2026-01-05T08:00:00Z",
                 None, json.dumps({"atom_of": "am-9"})),
                ("am-5", "long", "work", "Reviewer", "Priya reviews the billing code", 0.7, None,
                 "2026-01-06T12:00:00Z", None, None)]
        c.executemany("INSERT INTO memories (id, tier, namespace, title, content, confidence, source, created_at, "
                      "updated_at, atom_of, metadata) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
                      [m[:8] + (m[7],) + m[8:] for m in mems])
        c.executemany("INSERT INTO memory_links VALUES (?,?,?,?)", [
            ("am-1", "am-2", "derived", "2026-01-02T09:05:00Z"), ("am-1", "am-3", "related", "2026-01-03T10:00:00Z"),
            ("am-3", "am-1", "related", "2026-01-03T10:00:00Z")])
        c.executemany("INSERT INTO confidence_shadow_observations (memory_id, namespace, source, observed_at, "
                      "caller_confidence, derived_confidence, signals, recall_outcome) VALUES (?,?,?,?,?,?,?,?)", [
                          ("am-1", "ops", "user", "2026-01-08T09:00:00Z", 0.9, 0.62, "{}", None),
                          ("am-2", "ops", "assistant", "2026-01-08T09:00:00Z", 0.8, 0.71, "{}", None),
                          ("am-3", "ops", "user", "2026-01-09T15:00:00Z", 0.95, 0.64, "{}", None),
                          ("am-4", "work", "api", "2026-01-09T15:30:00Z", 0.6, 0.58, "{}", "consumed")])
        c.executemany("INSERT INTO recall_observations VALUES (?,?,?,?,?,?,?)", [
            ("rc-01", "am-1", "fts", 1, 3.1, 1, "2026-01-08T09:00:00Z"),
            ("rc-01", "am-2", "fts", 2, 2.4, 0, "2026-01-08T09:00:00Z"),
            ("rc-02", "am-3", "vector", 1, 0.82, 1, "2026-01-09T15:00:00Z"),
            ("rc-02", "am-1", "vector", 2, 0.61, 0, "2026-01-09T15:00:00Z"),
            ("rc-03", "am-4", "fts", 1, 2.0, 1, "2026-01-09T15:30:00Z"),
            ("rc-03", "am-5", "fts", 2, 1.2, 0, "2026-01-09T15:30:00Z"),
            ("rc-04", "am-5", "vector", 1, 0.7, 1, "2026-01-12T11:00:00Z"),
            ("rc-04", "am-8", "vector", 2, 0.5, 0, "2026-01-12T11:00:00Z")])


# ----------------------------------------------------------------------------- mnemo
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
    ev.insert(0, "id", [f"ev-{i:03d}" for i in range(len(ev))])
    ev["occurred_at"] = ev["occurred_at"].map(lambda x: x.strftime("%Y-%m-%d %H:%M:%S+00"))
    ev.loc[len(ev)] = ["ev-999", "pr.merged", "ws-web", "not a time", "", ""]
    ev.to_csv(OUT / "mnemo_events.csv", index=False)
    rc = []
    for day in range(4):
        d = base + pd.Timedelta(days=day)
        rc += [("deploy runbook", "ws-ops", d + pd.Timedelta(minutes=2), "" if day % 2 else f"s-ops-{day}", "prod"),
               ("weekly metrics", "ws-web", d + pd.Timedelta(hours=1, minutes=5), f"s-web-{day}", "")]
    rcd = pd.DataFrame(rc, columns=["fact_id", "workspace_id", "recalled_at", "session_id", "entities"])
    rcd.insert(0, "id", [f"rc-{i:03d}" for i in range(len(rcd))])
    rcd["recalled_at"] = rcd["recalled_at"].map(lambda x: x.strftime("%Y-%m-%d %H:%M:%S+00"))
    rcd.to_csv(OUT / "mnemo_recalls.csv", index=False)


def main():
    # the texts are registered as the sessions are defined above; vectors follow from them
    emb = lookup()
    table = pd.DataFrame({"text": list(TEXTS), "embedding": [vector(x, tp) for x, tp in TEXTS.items()]})
    with open(OUT / "lookup.jsonl", "w", encoding="utf-8") as fh:
        for rec in table.to_dict(orient="records"):
            fh.write(json.dumps(rec, ensure_ascii=False) + "\n")
    claude_code(emb)
    opencode(emb)
    omi()
    ai_memory()
    mnemo()
    print(f"wrote the samples to {OUT}")


if __name__ == "__main__":
    main()
