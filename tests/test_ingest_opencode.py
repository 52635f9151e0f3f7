"""opencode's sessions in: the bundled data dir (opencode.db + a legacy storage/ tree), calls that never ran,
prompt text, store naming, stable ids and growth, and the inputs that must be refused."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

import pandas as pd
import pytest

from tests._ingest import DATA, cli, replay, sample_embedder
from thatchlab import logs
from thatchlab.core.errors import LogValidationError, StoreSchemaError
from thatchlab.logs import ingest
from thatchlab.logs.ingest._opencode_store import _MISMATCH
from thatchlab.replay import fidelity

OC = DATA / "opencode"
STORE = "acme/trail-notes"
S1, S2 = "ses_46887bbfffffB9DmBmECtHVu0Q", "ses_45c236e9ffffhpfYnWfDhn1Mhn"
#: (session, kind, record_id, skip_reason) of the sample's rows, in time order
ROWS = [(S1, "message", "msg_b977b03200004gbAbO7S7rKxJ5", None),
        (S1, "prediction_update", "toolu_01L42ZsxhUFbftazOCmvg5Sr", None),
        (S1, "behavior_codify", "toolu_01ZJtA91RcsDFI2JQdo541Or", None),
        (S1, "message", "msg_b977e5e80000g7EFCPduUWTq8q", None),
        (S1, "prediction_update", "toolu_01QBd7FZiNxhkEZHuy5R8NqB", None),
        (S1, "behavior_feedback", "toolu_01Q2JHYjOVe9cbkjrnB186Wx", None),
        (S2, "message", "msg_ba3df5080000pg1Mz7LMM1MyAh", None),
        (S2, "prediction_update", "toolu_01EBrN64TWTIm8TR0OPG7MuU", None),
        (S2, "prediction_update", "toolu_01h8F2AvUUECYNC2tLrTIfjc", "tool error"),
        (S2, "prediction_list", "toolu_01Q9lf69UtSrvm4njuDQzK4E", None),
        (S2, "behavior_feedback", "toolu_01bmcNc32UylutFOupbfW9Io", "still running")]
NUDGED = ["give distances in kilometres first, miles in brackets", "check the map link opens the right trailhead"]
RUNNING = "toolu_01bmcNc32UylutFOupbfW9Io"


@pytest.fixture(scope="module")
def emb():
    return sample_embedder()


@pytest.fixture(scope="module")
def oc():
    return ingest.opencode(OC)


# ------------------------------------------------------------------ building small sources
_DDL = """
CREATE TABLE session (id TEXT PRIMARY KEY, project_id TEXT NOT NULL, parent_id TEXT, slug TEXT NOT NULL,
    directory TEXT NOT NULL, title TEXT NOT NULL, version TEXT NOT NULL, time_created INTEGER NOT NULL,
    time_updated INTEGER NOT NULL);
CREATE TABLE message (id TEXT PRIMARY KEY, session_id TEXT NOT NULL, time_created INTEGER NOT NULL,
    time_updated INTEGER NOT NULL, data TEXT NOT NULL);
CREATE TABLE part (id TEXT PRIMARY KEY, message_id TEXT NOT NULL, session_id TEXT NOT NULL,
    time_created INTEGER NOT NULL, time_updated INTEGER NOT NULL, data TEXT NOT NULL);
"""
T0 = 1767600000000  # 2026-01-05T08:00:00Z


def make_db(path: Path, messages, directory="/home/dev/app", session="ses_1"):
    """An opencode.db with one session; ``messages`` is a list of (id, role, [(part id, part data)])."""
    path.parent.mkdir(parents=True, exist_ok=True)
    con = sqlite3.connect(path)
    con.executescript(_DDL)
    con.execute("INSERT INTO session VALUES (?, 'p', NULL, '', ?, 't', '1', ?, ?)", (session, directory, T0, T0))
    for i, (mid, role, parts) in enumerate(messages):
        at = T0 + 1000 * i
        con.execute("INSERT INTO message VALUES (?, ?, ?, ?, ?)",
                    (mid, session, at, at, json.dumps({"role": role, "time": {"created": at}})))
        for pid, data in parts:
            con.execute("INSERT INTO part VALUES (?, ?, ?, ?, ?, ?)", (pid, mid, session, at, at, json.dumps(data)))
    con.commit()
    con.close()
    return path


def tool(name, status="completed", callID="call_1", **state):  # noqa: N803 - opencode's own key
    part = {"type": "tool", "tool": name, "state": {"status": status, **state}}
    if callID is not None:
        part["callID"] = callID
    return part


def put(root: Path, rel: str, obj) -> Path:
    f = root / rel
    f.parent.mkdir(parents=True, exist_ok=True)
    f.write_text(json.dumps(obj, indent=2))
    return f


# ------------------------------------------------------------------ the bundled data dir
def test_sample_rows_kinds_ids_and_skip_reasons(oc):
    log = oc.log
    assert list(zip(log["session"], log["kind"], log["record_id"], log["skip_reason"])) == ROWS
    assert log["ts"].is_monotonic_increasing and log["store"].eq(STORE).all()
    assert log["cwd"].eq("/home/dev/trail-notes").all() and log["record_id"].is_unique
    assert log.loc[log["kind"] == "message", "text"].tolist() == [
        "Draft the page for the Ridge Loop trail", "tidy the Ridge Loop description text",
        "new page for the Cedar Falls trail please"]
    assert log.loc[log["kind"] == "message", "surfaced"].tolist() == [None, NUDGED, NUDGED]
    assert log["logged_nudge"][3] == (
        "[thatch] User decision model\n- [0.50 conf, 0 tests] When editing trail description markdown: you may "
        "prefer give distances in kilometres first, miles in brackets\n\n[thatch] Situational behaviors\n- [0.50 "
        "conf, 0 tests] When adding a new trail page: consider check the map link opens the right trailhead")
    assert log["logged_reply"][1] == (f'[created] {STORE} :: "give distances in kilometres first, miles in '
                                      'brackets" for "editing trail description markdown"')
    err, running = log.iloc[8], log.iloc[10]
    assert (err["logged_reply"], err["signal"], err["rationale"]) == ("Tool execution aborted", "confirm",
                                                                      "user: km first again")
    assert running["logged_reply"] is None and running["text"] == "the Cedar Falls link opens the south lot"
    assert dict(oc.not_run) == {"tool error": 1, "still running": 1}
    assert dict(oc.stripped) == {"thatch nudge part": 4, "other synthetic part": 2}
    # the sub-agent's session is read by default (issue 32): its delegation prompt is counted, not a row
    assert dict(oc.skipped) == {"sub-agent prompt (a delegation from the main agent, not typed by the user)": 1,
                                "user message without typed text": 1}
    assert oc.warnings == []
    read = oc.read
    assert (read["databases"], read["storage folders"], read["sessions"], read["messages"], read["parts"]) == (
        1, 1, 3, 18, 42)  # the sub-agent's 2 messages and their parts are read by default (issue 32)
    assert read["prompts"] == 3 and read["nudges"] == 2 and read["thatch tool calls"] == 8
    assert read["other tool calls"] == 1  # opencode's task tool (the subagent)
    assert read["other thatch tool calls (memory, chat...: not log rows)"] == 1  # thatch_memory_remember
    # the session begun in the JSON tree: its session and first four messages are in both sources
    assert read["sessions in more than one source (the database's copy read)"] == 1
    assert read["messages in more than one source (the database's copy read)"] == 4
    assert read["sessions whose store is: named by production's replies in the session"] == 2


def test_sample_replays_exactly_and_skipped_rows_change_no_confidence(oc, emb):
    log = oc.log
    applied = log[log["skip_reason"].isna()].reset_index(drop=True)
    for engine in ("prediction", "behavior"):
        res = replay(log, engine, emb)
        m = fidelity(res, log).metrics
        assert (m["reply_agreement"], m["nudge_agreement"], m["regime_agreement"]) == (1.0, 1.0, 1.0)
        assert res.events.loc[log["skip_reason"].notna(), "action"].tolist() == ["skipped", "skipped"]
        assert res.events.loc[log["skip_reason"].notna(), "confidence"].isna().all()
        alone = replay(applied, engine, emb)
        kept = res.events[log["skip_reason"].isna().to_numpy()].reset_index(drop=True)
        pd.testing.assert_series_equal(kept["confidence"], alone.events["confidence"])
        assert res.tables["items"]["confidence"].tolist() == alone.tables["items"]["confidence"].tolist()
    # had the aborted update and the running feedback been applied, the confidences would have moved
    ran = log.assign(skip_reason=None)
    final = {e: replay(ran, e, emb).tables["items"]["confidence"].round(4).tolist() for e in ("prediction", "behavior")}
    assert final == {"prediction": [0.6875], "behavior": [0.6429]}
    assert replay(log, "prediction", emb).tables["items"]["confidence"].round(4).tolist() == [0.6429]


def test_db_only_storage_only_and_channel_databases(oc, tmp_path):
    db = ingest.opencode(OC / "opencode.db")
    assert db.log.drop(columns=["embedding"]).equals(oc.log.drop(columns=["embedding"]))
    assert db.read["storage folders"] == 0 and not any("more than one source" in k for k in db.read)
    legacy = ingest.opencode(OC / "storage")
    assert list(zip(legacy.log["kind"], legacy.log["record_id"])) == [(k, r) for _, k, r, _ in ROWS[:3]]
    assert legacy.log["store"].eq(STORE).all() and legacy.read["databases"] == 0
    shutil.copytree(OC / "storage", tmp_path / "only-storage" / "storage")
    assert len(ingest.opencode(tmp_path / "only-storage").log) == 3
    chan = tmp_path / "chan"
    chan.mkdir()
    shutil.copy(OC / "opencode.db", chan / "opencode-dev.db")
    assert ingest.opencode(chan).log["record_id"].tolist() == oc.log["record_id"].tolist()
    shutil.copy(OC / "opencode.db", chan / "opencode.db")
    both = ingest.opencode(chan)
    assert len(both.log) == 11 and both.read["databases"] == 2
    assert both.read["messages in more than one source (the database's copy read)"] == 18


def test_subagents_engine_filter_and_project_store_choices():
    sub = ingest.opencode(OC, subagents=True)
    assert len(sub.log) == 12 and "subagent session" not in sub.skipped
    child = sub.log[~sub.log["session"].isin([S1, S2])]
    assert child["kind"].tolist() == ["message"] and child["text"].tolist() == ["find every page that links a trailhead"]
    beh = ingest.opencode(OC, engine="behavior").log
    assert beh.loc[beh["kind"] == "message", "surfaced"].tolist() == [None, NUDGED[1:], NUDGED[1:]]
    assert ingest.opencode(OC, project_store="cwd").log["store"].eq("trail-notes").all()
    assert ingest.opencode(OC, project_store="acme/other").log["store"].eq("acme/other").all()
    assert ingest.opencode(OC, project_store=None).log["store"].isna().all()


# ------------------------------------------------------------------ parts and states
def test_states_prompt_parts_and_call_ids(tmp_path):
    db = make_db(tmp_path / "d" / "opencode.db", [
        ("msg_1", "user", [("prt_1", {"type": "text", "text": "rename the"}),
                           ("prt_2", {"type": "text", "text": "config loader"}),
                           ("prt_3", {"type": "text", "text": "old draft", "ignored": True}),
                           ("prt_4", {"type": "text", "synthetic": True, "text": "<system-reminder>plan mode"}),
                           ("prt_thatch_v", {"type": "text", "synthetic": True,
                                             "text": "[thatch] update available. This is a system nudge, not user input."})]),
        ("msg_2", "user", [("prt_5", {"type": "text", "text": "   "}),
                           ("prt_6", {"type": "text", "synthetic": True, "text": "Called the Read tool"})]),
        ("msg_3", "assistant", [
            ("prt_7", tool("thatch_prediction_update", "pending", input={}, raw="")),
            ("prt_8", tool("thatch_behavior_list", callID="call_1", input={"store": "acme/elsewhere"},
                           output='No behaviors in "acme/elsewhere".')),
            ("prt_9", tool("thatch_behavior_list", callID=None, input={}, output='No behaviors in "acme/app".')),
            ("prt_a", tool("thatch_prediction_forget", input={})),
            ("prt_b", tool("bash", input={"command": "ls"}, output="a b")),
            ("prt_c", {"type": "step-finish", "reason": "stop"})])])
    res = ingest.opencode(db)
    log = res.log
    assert log["kind"].tolist() == ["message", "prediction_update", "behavior_list", "behavior_list"]
    assert log["text"][0] == "rename the config loader"  # thatch scores the typed parts joined by a space
    assert log["record_id"].tolist() == ["msg_1", "call_1", "prt_8", "prt_9"]
    assert res.read["tool calls whose callID repeats (the part id used)"] == 1
    assert log["skip_reason"].tolist() == [None, "pending (never started)", None, None]
    assert log["ts"][1] == pd.Timestamp(T0 + 2000, unit="ms", tz="UTC")  # no start time: the message's
    # a call that passed its own store says nothing of the project store; the other reply names it
    assert log["store"].tolist() == ["acme/app", "acme/app", "acme/elsewhere", "acme/app"]
    assert dict(res.stripped) == {"ignored part": 1, "other synthetic part": 2,
                                  "other thatch part (recall, extraction or version notice)": 1}
    assert dict(res.skipped) == {"user message without typed text": 1, "unknown thatch tool 'prediction_forget'": 1}
    assert dict(res.not_run) == {"pending (never started)": 1} and res.read["other tool calls"] == 1


def test_store_guessed_from_the_folder_warns(tmp_path):
    db = make_db(tmp_path / "opencode.db", [("msg_1", "assistant", [("prt_1", tool(
        "thatch_prediction_update", input={"matcher": "m", "prediction": "p", "signal": "confirm"},
        output='[confirm] "p" confidence=0.58 (1/0)'))])], directory="/nowhere/here/app")
    res = ingest.opencode(db)
    assert res.log["store"].tolist() == ["app"] and len(res.warnings) == 1 and "'app' (1 session)" in res.warnings[0]


# ------------------------------------------------------------------ growth through the command line
def test_cli_growth_completes_a_running_call_in_place(tmp_path, capsys):
    shutil.copytree(OC, tmp_path / "oc")
    out = tmp_path / "log.jsonl"
    code, text, _ = cli(["ingest", "opencode", str(tmp_path / "oc"), "--out", str(out)], capsys)
    assert code == 0 and f"wrote 11 rows to {out}" in text and "still running" in text and "tool error" in text
    before = logs.read_interaction_log(out)
    assert before.set_index("record_id").loc[RUNNING, "skip_reason"] == "still running"
    reply = '[confirm] "check the map link opens the right trailhead" confidence=0.64 (2/0)'
    con = sqlite3.connect(tmp_path / "oc" / "opencode.db")
    (data,) = con.execute("SELECT data FROM part WHERE json_extract(data, '$.callID') = ?", (RUNNING,)).fetchone()
    part = json.loads(data)
    part["state"] = {"status": "completed", "input": part["state"]["input"], "output": reply, "title": "",
                     "metadata": {"truncated": False}, "time": {**part["state"]["time"],
                                                                "end": part["state"]["time"]["start"] + 40}}
    con.execute("UPDATE part SET data = ? WHERE json_extract(data, '$.callID') = ?", (json.dumps(part), RUNNING))
    con.commit()
    con.close()
    code, text, _ = cli(["ingest", "opencode", str(tmp_path / "oc"), "--out", str(out)], capsys)
    assert code == 0 and f"wrote 11 rows to {out} (1 completed (a reply, nudge or result arrived), 10 unchanged)" in text
    grown = logs.read_interaction_log(out)
    assert grown["record_id"].tolist() == before["record_id"].tolist()  # in place: no new row, none lost
    row = grown.set_index("record_id").loc[RUNNING]
    assert row["skip_reason"] is None and row["logged_reply"] == reply
    fresh = tmp_path / "fresh.jsonl"
    assert cli(["ingest", "opencode", str(tmp_path / "oc"), "--out", str(fresh)], capsys)[0] == 0
    pd.testing.assert_frame_equal(grown, logs.read_interaction_log(fresh))


# ------------------------------------------------------------------ inputs refused
def test_ids_never_become_paths(tmp_path):
    root = tmp_path / "storage"
    put(root, "session/p/ses_1.json", {"id": "ses_1", "directory": "/home/dev/app"})
    f = put(root, "message/ses_1/msg_1.json", {"id": "../../outside", "sessionID": "ses_1", "role": "user",
                                               "time": {"created": T0}})
    put(tmp_path, "outside/p.json", {"id": "p", "type": "text", "text": "a secret outside the storage folder"})
    with pytest.raises(LogValidationError, match=r"msg_1\.json: id '\.\./\.\./outside' is not a plain id") as exc:
        ingest.opencode(root)
    assert exc.value.file == str(f)
    f.unlink()
    bad_dir = put(root, "message/ses..1/msg_1.json", {"role": "user"}).parent
    with pytest.raises(LogValidationError, match=r"session id 'ses\.\.1' is not a plain id"):
        ingest.opencode(tmp_path)
    shutil.rmtree(bad_dir)
    put(root, "message/ses_1/.hidden.json", {"role": "user"})
    with pytest.raises(LogValidationError, match=r"message id '\.hidden' is not a plain id"):
        ingest.opencode(root)
    db = make_db(tmp_path / "db" / "opencode.db", [("../x", "user", [])])
    with pytest.raises(LogValidationError, match=r"opencode\.db: message '\.\./x': message id") as exc:
        ingest.opencode(db)
    assert exc.value.file == str(db)


def test_json_ids_that_disagree_with_their_path_are_counted(tmp_path):
    root = tmp_path / "storage"
    put(root, "message/ses_1/msg_1.json", {"id": "msg_other", "sessionID": "ses_1", "role": "user",
                                           "time": {"created": T0}})
    put(root, "part/msg_1/prt_1.json", {"id": "prt_1", "messageID": "msg_1", "type": "text", "text": "hello there"})
    res = ingest.opencode(root)
    assert res.log["record_id"].tolist() == ["msg_1"] and res.read[_MISMATCH] == 1


def test_broken_json_names_the_file_and_line(tmp_path, capsys):
    shutil.copytree(OC / "storage", tmp_path / "storage")
    bad = sorted((tmp_path / "storage" / "part").rglob("*.json"))[0]
    bad.write_text('{\n  "id": "prt",\n  "type": ')
    with pytest.raises(LogValidationError, match=rf"{bad.name}: line 3: not valid JSON") as exc:
        ingest.opencode(tmp_path / "storage")
    assert exc.value.file == str(bad)
    db = make_db(tmp_path / "db" / "opencode.db", [("msg_1", "user", [("prt_1", {"type": "text", "text": "x"})])])
    con = sqlite3.connect(db)
    con.execute("UPDATE part SET data = '{\"type\": \"te'")
    con.commit()
    con.close()
    out = tmp_path / "o.jsonl"
    code, _, err = cli(["ingest", "opencode", str(db), "--out", str(out)], capsys)
    assert code == 2 and err.startswith(f"error: {db}: part 'prt_1': line 1 of its data: not valid JSON")
    assert not out.exists()


def test_a_database_of_another_schema_is_refused(tmp_path):
    other = tmp_path / "data" / "opencode.db"
    other.parent.mkdir()
    con = sqlite3.connect(other)
    con.execute("CREATE TABLE memories (id TEXT PRIMARY KEY, content TEXT)")
    con.commit()
    con.close()
    for path in (other, other.parent):
        with pytest.raises(StoreSchemaError, match=rf"{other}: not an opencode database \(no table 'session', "
                                                   "'message', 'part'"):
            ingest.opencode(path)
    (tmp_path / "empty").mkdir()
    with pytest.raises(LogValidationError, match="not an opencode data dir"):
        ingest.opencode(tmp_path / "empty")
    with pytest.raises(LogValidationError, match="no such file or folder"):
        ingest.opencode(tmp_path / "absent")


def test_a_live_wal_database_is_read_and_a_locked_one_refused(tmp_path, capsys, monkeypatch):
    db = tmp_path / "opencode.db"
    shutil.copy(OC / "opencode.db", db)
    writer = sqlite3.connect(db, isolation_level=None)
    writer.execute("PRAGMA journal_mode = WAL")  # as opencode runs it
    writer.execute("BEGIN IMMEDIATE")
    writer.execute("UPDATE part SET data = '{}'")  # not committed: a reader sees the rows as they were
    try:
        assert ingest.opencode(db).log["record_id"].tolist() == [r for _, _, r, _ in ROWS]
    finally:
        writer.execute("ROLLBACK")
    writer.execute("PRAGMA journal_mode = DELETE")
    real = sqlite3.connect
    monkeypatch.setattr(sqlite3, "connect", lambda *a, **k: real(*a, **{**k, "timeout": 0.2}))  # wait less
    writer.execute("BEGIN EXCLUSIVE")
    writer.execute("UPDATE session SET title = title || '!'")  # a write in progress: its journal exists
    out = tmp_path / "o.jsonl"
    try:
        code, _, err = cli(["ingest", "opencode", str(db), "--out", str(out)], capsys)
    finally:
        writer.execute("ROLLBACK")
        writer.close()
    assert code == 2 and err.startswith(f"error: {db}: the database is locked by another process")
    assert not out.exists()
