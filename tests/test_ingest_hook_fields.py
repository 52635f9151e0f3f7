"""What ingest keeps for the hook rules of each thatch release, and the prediction_mark_checked call.

- ``logged_extraction``: the extraction nudge production printed before a prompt (every wording
  names the thatch-fact-extractor skill: sysread/thatch src/prompts.ts ``extractionNudge``; Claude
  Code's hook ``thatch flush-tools`` prints it, bin/thatch @03a2a713).
- ``subagent``: ``"task"`` on a sub-agent's rows, ``"extraction"`` on thatch's own extraction child
  (opencode session title ``thatch-extraction``, src/runtime.ts @07ecf879 ``triggerExtraction``).
- ``prediction_mark_checked``'s arguments ``id_a``, ``id_b``, ``status`` (src/tool-defs.ts @2ed97f2a).
"""

from __future__ import annotations

import json
import sqlite3

from tests._ingest import DATA
from thatchlab import logs
from thatchlab.logs import ingest
from thatchlab.logs.ingest._nudge import extraction_line
from thatchlab.logs.ingest._tools import THATCH_TOOLS, message_row, tool_row

EXTRACTION = ("[thatch] Spawn a background sub-agent to run the thatch-fact-extractor skill on 4 queued tool "
              "interactions. After dispatching, call mcp__thatch__extraction_done to acknowledge. Then answer the "
              "user. Use mcp__thatch__memory_remember to save durable facts from this payload:")
SHOUTED = ("[thatch] YOU ARE IGNORING EXTRACTION INSTRUCTIONS. 9 TOOL INTERACTIONS ARE QUEUED AND YOU HAVE NOT "
           "PROCESSED ANY OF THEM. SPAWN A BACKGROUND SUB-AGENT NOW TO RUN THE thatch-fact-extractor SKILL.")
NUDGE = "[thatch] User decision model\n- [0.58 conf, 1 tests] When writing tests: you tend to use pytest"


def test_extraction_line_of_every_wording():
    assert extraction_line(EXTRACTION + "\nses_abc") == EXTRACTION
    assert extraction_line(f"[thatch] thatch v0.2.1 is available\n\n{SHOUTED}\nses_abc") == SHOUTED
    assert extraction_line(f"<user-prompt-submit-hook>{EXTRACTION}</user-prompt-submit-hook>") == EXTRACTION
    assert extraction_line(NUDGE) is None and extraction_line(None) is None
    assert extraction_line("[thatch] After responding, check: did you learn new project knowledge?") is None


def test_message_rows_keep_the_extraction_nudge_beside_the_blocks():
    row = message_row("fix the flaky test", [EXTRACTION + "\nses_1"], ts="t", session="s", record_id="u1")
    assert (row["logged_extraction"], row["logged_nudge"], row["surfaced"]) == (EXTRACTION, "", [])
    row = message_row("fix the flaky test", [NUDGE], ts="t", session="s", record_id="u2")
    assert (row["logged_extraction"], row["logged_nudge"]) == (None, NUDGE)
    row = message_row("fix the flaky test", [], ts="t", session="s", record_id="u3")
    assert (row["logged_extraction"], row["logged_nudge"], row["subagent"]) == (None, None, None)


def _cc_session(path, hook_text):
    recs = [
        {"type": "user", "uuid": "u1", "sessionId": "s1", "timestamp": "2026-01-05T09:00:00Z", "cwd": "/x/app",
         "message": {"role": "user", "content": "please add tests for the parser"}},
        {"type": "attachment", "uuid": "a1", "parentUuid": "u1", "timestamp": "2026-01-05T09:00:00Z",
         "attachment": {"type": "hook_success", "hookEvent": "UserPromptSubmit", "content": hook_text}}]
    path.write_text("\n".join(json.dumps(r) for r in recs) + "\n")
    return path


def test_claude_code_keeps_the_extraction_nudge(tmp_path):
    f = _cc_session(tmp_path / "s1.jsonl", f"[thatch] thatch v0.2.1 is available\n\n{EXTRACTION}\nses_1")
    log = ingest.claude_code(f, project_store="cwd").log
    assert log[["kind", "logged_extraction", "logged_nudge", "subagent"]].values.tolist() == [
        ["message", EXTRACTION, "", None]]
    f = _cc_session(tmp_path / "s1.jsonl", NUDGE)
    log = ingest.claude_code(f, project_store="cwd").log
    assert log[["logged_extraction", "logged_nudge"]].values.tolist() == [[None, NUDGE]]


def test_sample_subagents_are_marked_task():
    main = ingest.claude_code(DATA / "claude-code").log
    assert main["subagent"].isna().all() and main["logged_extraction"].isna().all()
    sub = ingest.claude_code(DATA / "claude-code", subagents=True).log
    marked = sub[sub["subagent"].notna()]
    assert marked[["session", "kind", "subagent"]].values.tolist() == [
        ["7194b8bc-82e5-56ca-814c-67ced03e8186:a4f2c1e", "message", "task"]]
    oc = ingest.opencode(DATA / "opencode", subagents=True).log
    assert oc.loc[oc["subagent"].notna(), ["kind", "text", "subagent"]].values.tolist() == [
        ["message", "find every page that links a trailhead", "task"]]
    assert ingest.opencode(DATA / "opencode").log["subagent"].isna().all()


_DDL = """
CREATE TABLE session (id TEXT PRIMARY KEY, parent_id TEXT, directory TEXT NOT NULL, title TEXT NOT NULL);
CREATE TABLE message (id TEXT PRIMARY KEY, session_id TEXT NOT NULL, time_created INTEGER NOT NULL, data TEXT);
CREATE TABLE part (id TEXT PRIMARY KEY, message_id TEXT NOT NULL, session_id TEXT NOT NULL, data TEXT);
"""


def test_opencode_tells_extraction_children_from_task_subagents(tmp_path):
    db = tmp_path / "opencode.db"
    con = sqlite3.connect(db)
    con.executescript(_DDL)
    sessions = [("ses_main", None, "main work"), ("ses_ext", "ses_main", "thatch-extraction"),
                ("ses_task", "ses_main", "Find the config loader (@general subagent)")]
    t0 = 1767600000000
    for i, (sid, parent, title) in enumerate(sessions):
        con.execute("INSERT INTO session VALUES (?, ?, '/home/dev/app', ?)", (sid, parent, title))
        mid = f"msg_{i}"
        con.execute("INSERT INTO message VALUES (?, ?, ?, ?)",
                    (mid, sid, t0 + i, json.dumps({"role": "user", "time": {"created": t0 + i}})))
        con.execute("INSERT INTO part VALUES (?, ?, ?, ?)",
                    (f"prt_{i}", mid, sid, json.dumps({"type": "text", "text": f"prompt number {i} of the test"})))
    con.execute("INSERT INTO part VALUES ('prt_thatch_x', 'msg_0', 'ses_main', ?)",
                (json.dumps({"type": "text", "synthetic": True, "text": EXTRACTION.replace(
                    "Spawn a background sub-agent", "Dispatch a task with background: true") + "\nses_main"}),))
    con.commit()
    con.close()
    log = ingest.opencode(tmp_path, subagents=True, project_store="cwd").log
    assert log[["session", "subagent"]].values.tolist() == [["ses_main", None], ["ses_ext", "extraction"],
                                                             ["ses_task", "task"]]
    assert log["logged_extraction"].tolist()[0].startswith("[thatch] Dispatch a task with background: true")
    assert log["logged_extraction"].tolist()[1:] == [None, None]


def test_the_new_columns_survive_a_file(tmp_path):
    sub = ingest.claude_code(DATA / "claude-code", subagents=True).log
    p = tmp_path / "log.csv"
    logs.write_interaction_log(sub, p)
    back = logs.read_interaction_log(p)
    assert back["subagent"].tolist() == sub["subagent"].tolist()
    assert back["logged_extraction"].isna().all()


def test_prediction_mark_checked_is_a_thatch_tool_with_its_arguments():
    assert "prediction_mark_checked" in THATCH_TOOLS
    row = tool_row("prediction_mark_checked", {"id_a": "pred_7", "id_b": "pred_3", "status": "distinct",
                                                "store": "acme/app"},
                   ts="2026-01-05T09:00:00Z", session="s1", record_id="toolu_9", reply="[marked distinct]")
    assert (row["kind"], row["store"], row["logged_reply"]) == ("prediction_mark_checked", "acme/app",
                                                                "[marked distinct]")
    assert json.loads(row["args"]) == {"id_a": "pred_7", "id_b": "pred_3", "status": "distinct"}
    assert row["statement"] is None and row["signal"] is None


def test_a_mark_checked_call_is_a_log_row(tmp_path):
    recs = [{"type": "assistant", "uuid": "x1", "sessionId": "s1", "timestamp": "2026-01-05T09:00:05Z",
             "cwd": "/x/app", "message": {"content": [{"type": "tool_use", "id": "toolu_9",
                                                        "name": "mcp__thatch__prediction_mark_checked",
                                                        "input": {"id_a": "pred_7", "id_b": "pred_3",
                                                                  "status": "duplicate"}}]}},
            {"type": "user", "uuid": "t1", "sessionId": "s1", "timestamp": "2026-01-05T09:00:06Z",
             "message": {"content": [{"type": "tool_result", "tool_use_id": "toolu_9",
                                      "content": "[marked duplicate]"}]}}]
    f = tmp_path / "s1.jsonl"
    f.write_text("\n".join(json.dumps(r) for r in recs) + "\n")
    log = ingest.claude_code(f, project_store="cwd").log
    assert log[["kind", "args", "logged_reply"]].values.tolist() == [
        ["prediction_mark_checked", '{"id_a": "pred_7", "id_b": "pred_3", "status": "duplicate"}',
         "[marked duplicate]"]]
