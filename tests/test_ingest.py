"""Real logs in: the host and system adapters on the bundled samples, fidelity, redaction, growth and the verb."""

from __future__ import annotations

import json
import shutil
import warnings
from pathlib import Path

import pandas as pd
import pytest

from thatchlab import logs
from thatchlab.cli import main
from thatchlab.core.errors import LogValidationError
from thatchlab.embed import LookupEmbedder
from thatchlab.logs import ingest
from thatchlab.replay import fidelity, run
from thatchlab.replay.fidelity import PRODUCTION_MODEL, same_model

DATA = Path(__file__).resolve().parents[1] / "data" / "ingest"
CC = DATA / "claude-code"
OC = DATA / "opencode"


@pytest.fixture(scope="module")
def emb():
    return LookupEmbedder(logs.read_table(DATA / "lookup.jsonl", json_columns=["embedding"]), name="sample-lookup")


@pytest.fixture(scope="module")
def cc():
    return ingest.claude_code(CC, project_store="cwd")


@pytest.fixture(scope="module")
def oc():
    return ingest.opencode(OC, project_store="cwd")


def replay(log, engine, emb, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return run(log, engine, embedder=emb, **kw)


def cli(argv, capsys):
    with pytest.raises(SystemExit) as exc:
        main(argv)
        raise SystemExit(0)
    out = capsys.readouterr()
    return exc.value.code or 0, out.out, out.err


# ------------------------------------------------------------------ Claude Code
def test_claude_code_rows_kinds_and_skips(cc):
    log = cc.log
    assert len(log) == 27
    assert log["kind"].value_counts().to_dict() == {
        "message": 10, "prediction_update": 7, "behavior_feedback": 3, "behavior_codify": 2, "prediction_list": 2,
        "prediction_query": 1, "behavior_list": 1, "prediction_delete": 1}
    assert dict(cc.skipped) == {"subagent transcript file": 1, "meta record": 3, "command or interruption record": 3,
                                "record type 'telemetry-blip'": 3, "incomplete last line": 1, "sidechain record": 2}
    assert cc.read["files"] == 3 and cc.read["prompts"] == 10 and cc.read["nudges"] == 8
    assert cc.read["other tool calls"] == 1  # the Bash call is not a thatch row
    assert log["ts"].is_monotonic_increasing and log["store"].eq("weather-app").all()
    assert log["record_id"].is_unique and log["cwd"].eq("/home/dev/weather-app").all()
    assert log["logged_reply"][log["kind"] != "message"].notna().all()


def test_claude_code_tool_arguments_land_in_their_columns(cc):
    log = cc.log
    fb = log[log["kind"] == "behavior_feedback"].iloc[0]
    assert (fb["statement"], bool(fb["relevant"]), fb["text"]) == (
        "run the full test suite and read the failures", True, "ran the suite before the commit")
    up = log[log["kind"] == "prediction_update"].iloc[0]
    assert (up["matcher"], up["statement"], up["signal"], up["rationale"]) == (
        "writing unit tests for Python code", "use pytest fixtures instead of unittest classes", "create",
        "the existing tests in the repo use pytest")
    assert up["logged_reply"] == ('[created] weather-app :: "use pytest fixtures instead of unittest classes" '
                                  'for "writing unit tests for Python code"')
    q = log[log["kind"] == "prediction_query"].iloc[0]
    assert q["text"] == "where should the new geocoding helpers live"
    assert log[log["kind"] == "prediction_delete"]["statement"].tolist() == ["use short snake_case module names"]


def test_claude_code_nudges_in_every_hook_style(cc):
    msgs = cc.log[cc.log["kind"] == "message"].reset_index(drop=True)
    # session 1: attachment records; session 2: text inside the prompt's record; session 3: system records
    assert msgs["text"][1] == "Write more tests for the radar tile loader please"
    assert msgs["surfaced"][1] == ["use pytest fixtures instead of unittest classes"]
    assert msgs["logged_items"][1] == [{"engine": "prediction", "statement": "use pytest fixtures instead of unittest "
                                        "classes", "matcher": "writing unit tests for Python code",
                                        "confidence": 0.5, "tests": 0}]
    assert msgs["text"][3] == "add tests for the wind chart helpers"  # the hook text is not part of the prompt
    assert msgs["logged_nudge"][3] == ("[thatch] User decision model\n- [0.58 conf, 1 tests] When writing unit tests "
                                       "for Python code: you tend to use pytest fixtures instead of unittest classes")
    assert msgs["surfaced"][7] == ["keep code examples runnable"]
    assert msgs["logged_items"][9][0]["confidence"] == 0.7 and msgs["logged_items"][9][0]["tests"] == 4
    assert msgs["surfaced"].map(lambda v: v is None).sum() == 2
    assert msgs["text"][4] == "yes" and msgs["logged_nudge"][4] is None


def test_claude_code_engine_filter_and_subagents():
    beh = ingest.claude_code(CC, engine="behavior").log
    surfaced = beh.loc[beh["kind"] == "message", "surfaced"].dropna().tolist()
    assert ["run the full test suite and read the failures"] in surfaced and all(
        "use pytest fixtures instead of unittest classes" not in s for s in surfaced)
    sub = ingest.claude_code(CC, subagents=True)
    assert len(sub.log) == 29 and "sidechain record" not in sub.skipped
    assert sub.log["session"].str.contains(":a1").sum() == 1  # the subagent file's prompt, in its own session


def test_claude_code_broken_lines(tmp_path):
    src = next(f for f in sorted(CC.glob("*/*.jsonl")) if "radar tile loader" in f.read_text())  # complete file
    lines = src.read_text().splitlines()
    f = tmp_path / "s.jsonl"
    # a broken Bash-like line in the middle is counted; a broken prompt line cannot be skipped safely
    f.write_text("\n".join(lines[:3] + ['{"type": "assistant", "message": {"content": [{"name": "Bash"'] + lines[3:])
                 + "\n")
    res = ingest.claude_code(f)
    assert res.skipped["malformed line"] == 1
    f.write_text("\n".join(lines[:3] + ['{"type":"user","message":{"content":"half a pro'] + lines[3:]) + "\n")
    with pytest.raises(LogValidationError, match=r"s\.jsonl: line 4: not a valid JSON record") as exc:
        ingest.claude_code(f)
    assert exc.value.file == str(f) and exc.value.row == 3
    with pytest.raises(LogValidationError, match="no such transcript"):
        ingest.claude_code(tmp_path / "absent")


def test_claude_code_invalid_tool_arguments_are_counted(tmp_path):
    rec = {"type": "assistant", "uuid": "a", "sessionId": "s", "timestamp": "2026-01-01T00:00:00Z",
           "message": {"content": [{"type": "tool_use", "id": "t1", "name": "mcp__mem__prediction_update",
                                    "input": {"matcher": "x", "prediction": "y", "signal": "maybe"}},
                                   {"type": "tool_use", "id": "t2", "name": "mcp__mem__prediction_forget",
                                    "input": {}}]}}
    (tmp_path / "s.jsonl").write_text(json.dumps(rec) + "\n")
    res = ingest.claude_code(tmp_path, server="mem")
    assert len(res.log) == 0
    assert dict(res.skipped) == {"invalid prediction_update row (signal)": 1, "unknown thatch tool 'prediction_forget'": 1}


# ------------------------------------------------------------------ fidelity
@pytest.mark.parametrize("engine, n_replies", [("prediction", 11), ("behavior", 6)])
def test_replayed_replies_and_nudges_agree_with_the_logged_ones(cc, emb, engine, n_replies):
    res = replay(cc.log, engine, emb)
    assert res.path == "events"  # list rows fall back to the events path
    rep = fidelity(res, cc.log)
    assert rep.metrics["n_replies"] == n_replies and rep.metrics["n_nudges"] == 10
    for key in ("reply_agreement", "nudge_agreement", "nudge_item_agreement", "item_jaccard", "regime_agreement"):
        assert rep.metrics[key] == 1.0, key
    assert not rep.exact_model and PRODUCTION_MODEL in rep.note and rep.metrics["headline"] == 1.0


def test_list_rows_replay_the_engines_list_reply(cc, emb):
    res = replay(cc.log, "prediction", emb)
    lists = res.events[res.events["kind"] == "prediction_list"]
    assert lists["action"].tolist() == ["list", "list"]
    assert lists["reply"].iloc[0].startswith("[0.58 conf, 1 tests] use pytest fixtures instead of unittest classes\n"
                                             "  rationale: the existing tests in the repo use pytest")
    no_lists = cc.log[~cc.log["kind"].str.endswith("_list")]
    assert replay(no_lists, "prediction", emb).path == "vectorised"
    from thatchlab.replay import prepare

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        planned = prepare(cc.log, "prediction", embedder=emb).run().events
    assert planned.loc[planned["kind"] == "prediction_list", "action"].tolist() == ["list", "list"]
    others = planned["kind"] != "prediction_list"
    assert planned.loc[others, "reply"].tolist() == res.events.loc[others, "reply"].tolist()


def test_regimes_of_the_samples(cc, emb):
    rep = fidelity(replay(cc.log, "prediction", emb), cc.log)
    assert rep.nudges["logged_regime"].value_counts().to_dict() == {"none": 5, "ambiguous": 4, "strong": 1}


def test_fidelity_with_another_model_reads_regimes_first(cc, emb):
    other = LookupEmbedder({t: v for t, v in zip(emb.texts, emb.embed_passages(emb.texts) + 1.0)},
                           name="some-other-model")
    rep = fidelity(replay(cc.log, "prediction", other), cc.log)
    assert rep.metrics["headline"] == rep.metrics["regime_agreement"]
    assert "exact comparison needs the production model" in rep.note
    assert rep.metrics["nudge_agreement"] < 1.0
    assert same_model("BAAI/bge-small-en-v1.5") and not same_model("sample-lookup")


def test_fidelity_needs_the_replayed_log(cc, emb):
    res = replay(cc.log, "behavior", emb)
    with pytest.raises(Exception, match="pass the log that was replayed"):
        fidelity(res, cc.log.iloc[:5])


# ------------------------------------------------------------------ opencode
def test_opencode_rows_and_fidelity(oc, emb):
    log = oc.log
    assert len(log) == 9 and dict(oc.skipped) == {"subagent session": 1}
    assert log["kind"].value_counts().to_dict() == {"message": 3, "prediction_update": 3, "behavior_codify": 1,
                                                    "behavior_feedback": 1, "prediction_list": 1}
    assert log.loc[log["kind"] == "message", "surfaced"].tolist() == [
        None, ["give distances in kilometres first, miles in brackets", "check the map link opens the right trailhead"],
        ["give distances in kilometres first, miles in brackets", "check the map link opens the right trailhead"]]
    assert log["store"].eq("trail-notes").all() and log["record_id"].is_unique
    for engine in ("prediction", "behavior"):
        m = fidelity(replay(log, engine, emb), log).metrics
        assert (m["reply_agreement"], m["nudge_agreement"], m["regime_agreement"]) == (1.0, 1.0, 1.0)
    assert len(ingest.opencode(OC / "storage", subagents=True).log) == 10


def test_opencode_broken_file_names_it(tmp_path):
    shutil.copytree(OC, tmp_path / "oc")
    bad = next((tmp_path / "oc" / "storage" / "part").rglob("*.json"))
    bad.write_text('{"id": "prt", "type": ')
    with pytest.raises(LogValidationError, match=rf"{bad.name}: line 1: not valid JSON"):
        ingest.opencode(tmp_path / "oc")


# ------------------------------------------------------------------ omi, ai-memory, mnemo
def test_omi_export_to_memory_log():
    res = ingest.omi_memories(DATA / "omi_memories.json")
    log = res.log
    assert len(log) == 21 and dict(res.skipped) == {"duplicate memory id": 1, "memory without content": 1}
    assert log["kind"].value_counts().to_dict() == {"write": 8, "restated": 6, "read": 5, "delete": 1,
                                                    "contradicted": 1}
    sup = log[log["kind"] == "contradicted"].iloc[0]
    assert (sup["memory_id"], sup["target_memory_id"], sup["authority"]) == ("om-07", "om-01", 2.0)
    assert sup["ts"] == pd.Timestamp("2026-01-10T09:00:00Z")
    rest = log[log["target_memory_id"].eq("om-01") & log["kind"].eq("restated")]["ts"].tolist()
    assert rest == [pd.Timestamp("2025-11-26T13:00:00Z"), pd.Timestamp("2025-12-20T18:00:00Z")]
    reads = log[log["kind"] == "read"]
    assert reads["currency_band"].tolist() == ["stale", "fresh", "fresh", "aging", "fresh"]
    assert reads["currency"].tolist() == [0.31, 1.0, 0.88, 0.74, 0.97]
    assert log.loc[log["memory_id"] == "om-06", "belief_class"].tolist() == [None]  # 'mood' is not a class
    assert log.loc[log["kind"] == "write", "category"].notna().all()


def test_ai_memory_database_to_recall_log():
    res = ingest.ai_memory(DATA / "ai-memory.db")
    log = res.log
    assert len(log) == 7 and dict(res.skipped) == {"ledger row of an unknown memory": 1}
    by = log.drop_duplicates("memory_id").set_index("memory_id")
    assert by["is_atom"].to_dict() == {"am-1": False, "am-2": True, "am-3": False, "am-4": True, "am-5": False}
    assert by["corroboration"].to_dict() == {"am-1": 2, "am-2": 0, "am-3": 1, "am-4": 0, "am-5": 0}
    assert by.loc["am-5", "source"] == "unknown"
    assert log["consumed"].tolist() == [True, False, True, False, True, False, True]
    assert len(res.tables["observations"]) == 4 and len(res.tables["outcomes"]) == 8


def test_mnemo_dumps_to_streams():
    res = ingest.mnemo_events(DATA / "mnemo_events.csv", DATA / "mnemo_recalls.csv")
    ev, rc = res.tables["events"], res.tables["recalls"]
    assert (len(ev), len(rc)) == (16, 8)
    assert dict(res.skipped) == {"events row without a time, workspace or name": 1}
    assert res.read["rows with an inferred session"] == 10
    first = ev[ev["workspace"] == "ws-ops"].iloc[:3]
    assert first["session"].tolist() == ["s-ops-0", "s-ops-0", "ws-ops:2026-01-05T13:50:00Z"]
    assert first["entities"].tolist() == [["prod", "billing"], ["prod"], ["prod", "pager"]]
    day1 = rc[(rc["workspace"] == "ws-ops") & (rc["ts"].dt.day == 6)]
    assert day1["session"].tolist() == ["ws-ops:2026-01-06T08:50:00Z"]  # shares the events' inferred session


# ------------------------------------------------------------------ sharing and growing
def test_redacted_log_replays_exactly_from_its_lookup(oc, emb):
    red, lookup = ingest.redact(oc.log, emb)
    msgs = red["kind"] == "message"
    assert not red.loc[msgs, "text"].isin(oc.log["text"]).any()
    assert red.loc[msgs, "text"].str.len().tolist() == oc.log.loc[msgs, "text"].str.len().tolist()
    assert red["rationale"].dropna().map(len).gt(0).all() and not red["rationale"].isin(
        oc.log["rationale"].dropna()).any()
    assert red["matcher"].equals(oc.log["matcher"]) and red["logged_nudge"].equals(oc.log["logged_nudge"])
    listed = red.loc[red["kind"] == "prediction_list", "logged_reply"].iloc[0]
    assert "user's other pages do this" not in listed and ingest.redact_text("user's other pages do this") in listed
    again = LookupEmbedder(lookup, name="redacted")
    for engine in ("prediction", "behavior"):
        m = fidelity(replay(red, engine, again), red).metrics
        assert m["reply_agreement"] == 1.0 and m["nudge_agreement"] == 1.0


def test_cli_ingest_grows_a_log_with_unseen_records_only(tmp_path, capsys):
    folder = tmp_path / "projects" / "p"
    folder.mkdir(parents=True)
    files = sorted(CC.glob("*/*.jsonl"))
    for f in files[:2]:
        shutil.copy(f, folder / f.name)
    out = tmp_path / "log.jsonl"
    code, text, _ = cli(["ingest", "claude-code", str(tmp_path / "projects"), "--out", str(out),
                         "--project-store", "cwd"], capsys)
    first = len(logs.read_interaction_log(out))
    assert code == 0 and f"wrote {first} rows to {out}" in text and "skipped:" in text
    shutil.copy(files[2], folder / files[2].name)
    code, text, _ = cli(["ingest", "claude-code", str(tmp_path / "projects"), "--out", str(out),
                         "--project-store", "cwd"], capsys)
    grown = logs.read_interaction_log(out)
    assert code == 0 and len(grown) == 27 and f"wrote 27 rows to {out} ({27 - first} new)" in text
    assert grown["record_id"].is_unique and grown["ts"].is_monotonic_increasing
    code, text, _ = cli(["ingest", "claude-code", str(tmp_path / "projects"), "--out", str(out)], capsys)
    assert code == 0 and "nothing new (27 rows kept)" in text


def test_cli_ingest_redact_and_the_other_sources(tmp_path, capsys):
    out = tmp_path / "oc.parquet"
    code, text, _ = cli(["ingest", "opencode", str(OC), "--out", str(out), "--project-store", "cwd", "--redact",
                         "--lookup", str(DATA / "lookup.jsonl")], capsys)
    assert code == 0 and (tmp_path / "oc.lookup.parquet").exists() and "wrote 9 rows" in text
    code, text, _ = cli(["replay", str(out), "--engine", "prediction", "--lookup",
                         str(tmp_path / "oc.lookup.parquet")], capsys)
    assert code == 0 and "n_events                      9" in text
    code, text, _ = cli(["ingest", "ai-memory", str(DATA / "ai-memory.db"), "--out", str(tmp_path / "a.csv")], capsys)
    assert code == 0 and (tmp_path / "a.observations.csv").exists() and (tmp_path / "a.outcomes.csv").exists()
    assert len(logs.read_recall_log(tmp_path / "a.csv")) == 7
    code, _, _ = cli(["ingest", "mnemo", str(DATA / "mnemo_events.csv"), "--recalls", str(DATA / "mnemo_recalls.csv"),
                      "--out", str(tmp_path / "m.jsonl")], capsys)
    assert code == 0 and len(logs.read_event_log(tmp_path / "m.events.jsonl")) == 16
    assert len(logs.read_recall_stream(tmp_path / "m.recalls.jsonl")) == 8
    code, _, _ = cli(["ingest", "omi", str(DATA / "omi_memories.json"), "--out", str(tmp_path / "o.jsonl")], capsys)
    assert code == 0 and len(logs.read_memory_log(tmp_path / "o.jsonl")) == 21


@pytest.mark.parametrize("argv, needle", [
    (["ingest", "slack", "x", "--out", "o.jsonl"], "SOURCE: expected one of"),
    (["ingest", "claude-code", "/nonexistent/projects", "--out", "o.jsonl"], "no such transcript"),
    (["ingest", "omi", "x.json", "--out", "o.txt"], "cannot tell the format"),
    (["ingest", "omi", "x.json", "--out", "o.jsonl", "--redact"], "--redact: only transcripts"),
])
def test_cli_ingest_bad_input_is_one_error_line(argv, needle, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code, _, err = cli(argv, capsys)
    lines = [ln for ln in err.splitlines() if ln]
    assert code == 2 and len(lines) == 1 and lines[0].startswith("error: ") and needle in lines[0]


def test_cli_ingest_names_the_file_and_line_of_a_broken_transcript(tmp_path, capsys):
    f = tmp_path / "s.jsonl"
    f.write_text('{"type":"user","message":{"content":"cut\n{"type": "summary"}\n')
    code, _, err = cli(["ingest", "claude-code", str(f), "--out", str(tmp_path / "o.jsonl")], capsys)
    assert code == 2 and err.startswith(f"error: {f}: line 1: not a valid JSON record")
    assert not (tmp_path / "o.jsonl").exists()


def test_cli_ingest_ctrl_c(tmp_path, capsys, monkeypatch):
    def boom(*a, **k):
        raise KeyboardInterrupt
    monkeypatch.setattr("thatchlab.logs.ingest.omi_memories", boom)
    code, _, err = cli(["ingest", "omi", str(DATA / "omi_memories.json"), "--out", str(tmp_path / "o.jsonl")], capsys)
    assert code == 130 and err == "interrupted\n" and not (tmp_path / "o.jsonl").exists()


def test_list_kinds_round_trip_through_the_reader(tmp_path, cc):
    for suffix in ("jsonl", "csv", "parquet"):
        p = tmp_path / f"log.{suffix}"
        logs.write_interaction_log(cc.log, p)
        back = logs.read_interaction_log(p)
        assert back["kind"].tolist() == cc.log["kind"].tolist()
        assert back["logged_items"].tolist() == cc.log["logged_items"].tolist()
        assert back["logged_reply"].tolist() == cc.log["logged_reply"].tolist()
