"""The third pass on real logs (issue 32), rule by rule: queued prompts, sub-agents, copies, tool names, stores.

Shapes cited where they are used; the corpus test (tests/test_ingest_corpus.py) runs them together.
"""

from __future__ import annotations

import json
import sqlite3
from collections import Counter

import pytest

from tests._ingest import cli
from thatchlab.core.errors import LogValidationError, StoreSchemaError
from thatchlab.logs import ingest
from thatchlab.logs.ingest._cc_queue import QueueBook
from thatchlab.logs.ingest._cc_sessions import record_key
from thatchlab.logs.ingest._names import server_name, subagent_mode, thatch_tool
from thatchlab.replay._hook import hook_skips


def _where(rec):
    return rec.get("timestamp"), "s1", "/home/dev/app"


def _write(path, recs):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r, separators=(",", ":")) + "\n" for r in recs))
    return path


# ------------------------------------------------------------------ queued prompts
def test_queue_book_turns_each_way_a_queue_ends_into_a_row_or_a_reason():
    """The verbs: stablyai/orca PR #16121 (remove absorbed_mid_turn, no user record), anthropics/claude-code
    #86614 (a dequeue no user record follows), kenn-io/agentsview PR #406 (queued_command attachments)."""
    skipped, read = Counter(), Counter()
    q = QueueBook(skipped, read)
    for op, text in [("enqueue", "first"), ("enqueue", "second"), ("remove", "second"), ("enqueue", "third"),
                     ("dequeue", None), ("enqueue", "fourth"), ("popAll", None), ("enqueue", "fifth")]:
        rec = {"type": "queue-operation", "operation": op, "timestamp": f"t-{op}-{text}"}
        if text is not None:
            rec["content"] = text
        q.operation(rec, _where)
    q.delivered("first")  # the user record of the dequeued head
    q.attachment({"timestamp": "t-att"}, {"type": "queued_command", "prompt": "second", "commandMode": "prompt",
                                          "origin": {"kind": "human"}}, _where)
    q.attachment({"timestamp": "t-peer"}, {"type": "queued_command", "prompt": "hi", "origin": {"kind": "peer"}},
                 _where)
    rows = q.close()
    assert [(r.text, r.ts) for r in rows] == [("second", "t-att")]  # one row for the remove and its attachment
    assert dict(skipped) == {"queued prompt taken back to the input box (popAll: never sent)": 2,
                             "queued prompt still waiting at the end of the file (never sent)": 1,
                             "queued message from another agent (origin not human)": 1}
    assert read["queued prompts sent as their own user record"] == 1


def test_a_queued_prompt_row_keeps_host_context_out_and_counts_it_once(tmp_path):
    recs = [{"type": "user", "uuid": "u1", "sessionId": "s1", "timestamp": "2026-02-01T10:00:00.000Z",
             "cwd": "/home/dev/app", "message": {"role": "user", "content": "start the migration"}},
            {"type": "queue-operation", "operation": "enqueue", "timestamp": "2026-02-01T10:00:05.000Z",
             "sessionId": "s1", "content": "<system-reminder>\nbackground task started\n</system-reminder>\n\n"
                                           "skip the seed data"},
            {"type": "queue-operation", "operation": "remove", "timestamp": "2026-02-01T10:00:09.000Z",
             "sessionId": "s1", "content": "<system-reminder>\nbackground task started\n</system-reminder>\n\n"
                                           "skip the seed data", "reason": "absorbed_mid_turn"}]
    res = ingest.claude_code(_write(tmp_path / "p" / "s1.jsonl", recs), project_store="cwd")
    msgs = res.log[res.log["kind"] == "message"]
    assert msgs["text"].tolist() == ["start the migration", "skip the seed data"]
    assert msgs["ts"].dt.strftime("%H:%M:%S").tolist() == ["10:00:00", "10:00:05"]  # the time it was typed
    assert dict(res.stripped) == {"system-reminder": 1}
    assert res.read["prompts typed while the agent worked (queued)"] == 1


def test_hook_output_recorded_under_a_queued_prompt_is_its_nudge(tmp_path):
    nudge = "[thatch] User decision model\n- [0.58 conf, 1 tests] When naming tests: you tend to use test_ prefixes"
    recs = [{"type": "user", "uuid": "u1", "sessionId": "s1", "timestamp": "2026-02-01T10:00:00.000Z",
             "cwd": "/home/dev/app", "message": {"role": "user", "content": "rename the test helpers"}},
            {"type": "assistant", "uuid": "a1", "sessionId": "s1", "timestamp": "2026-02-01T10:00:02.000Z",
             "message": {"content": [{"type": "text", "text": "On it."}]}},
            {"type": "attachment", "uuid": "q1", "parentUuid": "a1", "sessionId": "s1",
             "timestamp": "2026-02-01T10:00:04.000Z", "attachment": {
                 "type": "queued_command", "prompt": "and the fixtures", "commandMode": "prompt"}},
            {"type": "attachment", "uuid": "h1", "parentUuid": "q1", "sessionId": "s1",
             "timestamp": "2026-02-01T10:00:04.000Z", "attachment": {
                 "type": "hook_success", "hookEvent": "UserPromptSubmit", "content": nudge}},
            {"type": "user", "uuid": "u2", "sessionId": "s1", "timestamp": "2026-02-01T10:01:00.000Z",
             "cwd": "/home/dev/app", "message": {"role": "user", "content": "thanks, now run them"}}]
    log = ingest.claude_code(_write(tmp_path / "p" / "s1.jsonl", recs), project_store="cwd").log
    assert log["text"].tolist() == ["rename the test helpers", "and the fixtures", "thanks, now run them"]
    assert log["logged_nudge"].tolist() == [None, nudge, None]  # not given to the next typed prompt


# ------------------------------------------------------------------ sub-agents and the hook rules
def test_subagent_modes_and_the_hook_rules_of_each_release(tmp_path):
    """A delegation read with subagents='all' is a task sub-agent's message: 07ecf87's hook skips it
    (sysread/thatch src/runtime.ts @07ecf879); v0.1.30 has no such rule."""
    from pathlib import Path

    corpus = Path(__file__).resolve().parent / "data" / "ingest_corpus" / "c04-subagents-2x"
    log = ingest.claude_code(corpus, subagents="all").log
    assert log["kind"].tolist() == ["message", "message", "prediction_query", "prediction_update"]
    assert hook_skips(log, "07ecf87").tolist() == [None, "subagent", None, None]
    assert all(s is None for s in hook_skips(log, "v0.1.30").tolist())
    assert subagent_mode(True) == "all" and subagent_mode(False) == "none"
    with pytest.raises(LogValidationError, match="subagents: expected one of calls, all, none"):
        ingest.claude_code(corpus, subagents="some")


def test_cli_subagents_option(tmp_path, capsys):
    from pathlib import Path

    corpus = Path(__file__).resolve().parent / "data" / "ingest_corpus" / "c04-subagents-2x"
    code, _, err = cli(["ingest", "claude-code", str(corpus), "--out", str(tmp_path / "x.jsonl"),
                        "--subagents", "some"], capsys)
    assert code == 2 and err.startswith("error: --subagents: expected one of calls, all, none")
    code, out, _ = cli(["ingest", "claude-code", str(corpus), "--out", str(tmp_path / "x.jsonl"), "--subagents",
                        "none", "--dry-run"], capsys)
    assert code == 0 and "subagent transcript file" in out


# ------------------------------------------------------------------ copies of resumed sessions
def test_record_keys_identify_records_without_a_uuid():
    enq = {"type": "queue-operation", "operation": "enqueue", "timestamp": "t1", "content": "go on"}
    assert record_key(enq) == record_key(dict(enq)) != record_key({**enq, "timestamp": "t2"})
    assert record_key({"type": "summary", "summary": "x"}) is None


# ------------------------------------------------------------------ tool names
@pytest.mark.parametrize("name, server, expected", [
    ("mcp__thatch__prediction_update", "thatch", ("prediction_update", "mcp")),
    ("mcp__plugin_thatch_thatch__behavior_codify", "thatch", ("behavior_codify", "plugin")),
    ("mcp__plugin_tools_thatch__behavior_list", "thatch", ("behavior_list", "plugin")),
    ("mcp__plugin_thatch_thatch__behavior_list", "plugin_thatch_thatch", ("behavior_list", "mcp")),
    ("thatch_prediction_query", "thatch", ("prediction_query", "host")),
    ("prediction_mark_checked", "thatch", ("prediction_mark_checked", "plain")),
    ("mcp__prefs__prediction_update", "prefs", ("prediction_update", "mcp")),
    ("mcp__prefs__prediction_update", "thatch", None),
    ("memory_save", "thatch", None),
    ("Bash", "thatch", None),
])
def test_thatchs_tools_under_every_name(name, server, expected):
    assert thatch_tool(name, server) == expected


def test_server_names_as_users_pass_them():
    assert [server_name(s) for s in ("thatch", "mcp__thatch__", "mcp__plugin_thatch_thatch__",
                                     "plugin_thatch_thatch")] == ["thatch", "thatch", "plugin_thatch_thatch",
                                                                  "plugin_thatch_thatch"]


# ------------------------------------------------------------------ worktrees
@pytest.mark.parametrize("path, branch, main", [
    ("/home/dev/app/.claude/worktrees/fix-login", None, "/home/dev/app"),
    ("/home/dev/app/.worktrees/fix-login/src", None, "/home/dev/app"),
    ("/home/USER/projects/spotter-worktrees/spotter-dov", "spotter-dov", "/home/USER/projects/spotter"),
    ("/home/dev/app/worktrees/feat-x", "feat-x", "/home/dev/app"),
    ("/home/dev/app/worktrees/feat-x", "main", None),
    ("/home/dev/worktrees", None, None),
])
def test_the_main_checkout_a_worktree_path_shows(path, branch, main):
    assert ingest.worktree_main(path, branch) == main


# ------------------------------------------------------------------ opencode
def test_opencode_refusals_are_rejections_and_other_errors_are_errors(tmp_path):
    db = tmp_path / "opencode.db"
    con = sqlite3.connect(db)
    con.executescript("CREATE TABLE session (id TEXT PRIMARY KEY, parent_id TEXT, directory TEXT NOT NULL);"
                      "CREATE TABLE message (id TEXT PRIMARY KEY, session_id TEXT, time_created INTEGER, data TEXT);"
                      "CREATE TABLE part (id TEXT PRIMARY KEY, message_id TEXT, session_id TEXT, data TEXT);"
                      "INSERT INTO session VALUES ('ses_1', NULL, '/home/dev/app')")
    at = 1771236000000
    con.execute("INSERT INTO message VALUES ('msg_1', 'ses_1', ?, ?)",
                (at, json.dumps({"role": "assistant", "time": {"created": at}})))
    texts = ["The user rejected permission to use this specific tool call.",
             "The user rejected permission to use this specific tool call with the following feedback: not now",
             "The user has specified a rule which prevents you from using this specific tool call. Here are some of "
             "the relevant rules []", "Tool execution aborted"]
    for i, text in enumerate(texts):
        state = {"status": "error", "input": {"behavior": "b", "relevant": True}, "error": text,
                 "time": {"start": at + i, "end": at + i + 1}}
        con.execute("INSERT INTO part VALUES (?, 'msg_1', 'ses_1', ?)",
                    (f"prt_{i}", json.dumps({"type": "tool", "tool": "thatch_behavior_feedback", "callID": f"c{i}",
                                             "state": state})))
    con.commit()
    con.close()
    res = ingest.opencode(tmp_path, project_store="cwd")
    assert res.log["skip_reason"].tolist() == ["rejected by the user"] * 3 + ["tool error"]


def test_opencode_without_either_table_layout_names_its_schema_version(tmp_path):
    con = sqlite3.connect(tmp_path / "opencode.db")
    con.executescript("CREATE TABLE session (id TEXT PRIMARY KEY, directory TEXT); PRAGMA user_version = 7;")
    con.close()
    with pytest.raises(StoreSchemaError, match=r"schema version ingest does not know \(user_version 7\)"):
        ingest.opencode(tmp_path)


@pytest.mark.parametrize("names", [("a-first", "b-second"), ("b-second", "a-first")])
def test_a_call_cut_off_in_the_first_file_gets_its_result_from_the_resumed_copy(tmp_path, names):
    """The original ends before the call's result; the --resume copy repeats the call and holds the result
    (Lewik/gromozeka docs/session-management.md: a resume copies the history into a new file)."""
    base = {"sessionId": "s-a", "cwd": "/home/dev/app"}
    first = [{**base, "type": "user", "uuid": "u1", "timestamp": "2026-02-01T10:00:00.000Z",
              "message": {"role": "user", "content": "track my naming habits"}},
             {**base, "type": "assistant", "uuid": "x1", "timestamp": "2026-02-01T10:00:05.000Z",
              "message": {"content": [{"type": "tool_use", "id": "toolu_1", "name": "mcp__thatch__prediction_update",
                                       "input": {"matcher": "naming", "prediction": "short names",
                                                 "signal": "create"}}]}}]
    copy = [{**r, "sessionId": "s-b"} for r in first] + [
        {"type": "user", "uuid": "t1", "sessionId": "s-b", "cwd": "/home/dev/app",
         "timestamp": "2026-02-01T10:03:00.000Z", "message": {"content": [
             {"type": "tool_result", "tool_use_id": "toolu_1", "content": '[created] acme/app :: "short names" for '
                                                                          '"naming"'}]}}]
    folder = tmp_path / names[0]
    _write(folder / "p" / f"{names[0]}.jsonl", first)
    _write(folder / "p" / f"{names[1]}.jsonl", copy)
    log = ingest.claude_code(folder).log
    assert log[["kind", "session", "skip_reason", "store"]].values.tolist() == [
        ["message", "s-a", None, "acme/app"], ["prediction_update", "s-a", None, "acme/app"]]


def test_opencode_session_with_nudges_but_calls_under_another_name_says_so(tmp_path):
    db = tmp_path / "opencode.db"
    con = sqlite3.connect(db)
    con.executescript("CREATE TABLE session (id TEXT PRIMARY KEY, parent_id TEXT, directory TEXT NOT NULL);"
                      "CREATE TABLE message (id TEXT PRIMARY KEY, session_id TEXT, time_created INTEGER, data TEXT);"
                      "CREATE TABLE part (id TEXT PRIMARY KEY, message_id TEXT, session_id TEXT, data TEXT);"
                      "INSERT INTO session VALUES ('ses_1', NULL, '/home/dev/app')")
    at = 1771236000000
    nudge = "[thatch] Situational behaviors\n- [0.50 conf, 0 tests] When committing: consider run the tests"
    for mid, role, t in (("msg_1", "user", at), ("msg_2", "assistant", at + 5000)):
        con.execute("INSERT INTO message VALUES (?, 'ses_1', ?, ?)", (mid, t, json.dumps({"role": role,
                                                                                         "time": {"created": t}})))
    con.execute("INSERT INTO part VALUES ('prt_1', 'msg_1', 'ses_1', ?)",
                (json.dumps({"type": "text", "text": "commit the fix"}),))
    con.execute("INSERT INTO part VALUES ('prt_2', 'msg_1', 'ses_1', ?)",
                (json.dumps({"type": "text", "synthetic": True, "text": nudge}),))
    con.execute("INSERT INTO part VALUES ('prt_3', 'msg_2', 'ses_1', ?)", (json.dumps(
        {"type": "tool", "tool": "prefs_behavior_feedback", "callID": "c1", "state": {
            "status": "completed", "input": {"behavior": "run the tests", "relevant": True}, "output": "ok",
            "time": {"start": at + 5000}}}),))
    con.commit()
    con.close()
    res = ingest.opencode(tmp_path, project_store="cwd")
    assert res.log["kind"].tolist() == ["message"]
    assert "prefs_behavior_feedback" in res.warnings[0] and "--server" in res.warnings[0]
    fixed = ingest.opencode(tmp_path, project_store="cwd", server="prefs")
    assert fixed.log["kind"].tolist() == ["message", "behavior_feedback"] and fixed.warnings == []
