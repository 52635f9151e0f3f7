"""Real logs in: the host and system adapters on the bundled samples, fidelity, redaction, growth and the verb."""

from __future__ import annotations

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

DATA = Path(__file__).resolve().parents[1] / "data" / "ingest"
CC = DATA / "claude-code"
OC = DATA / "opencode"


@pytest.fixture(scope="module")
def emb():
    return LookupEmbedder(logs.read_table(DATA / "lookup.jsonl", json_columns=["embedding"]), name="sample-lookup")


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


def test_cli_ingest_ctrl_c(tmp_path, capsys, monkeypatch):
    def boom(*a, **k):
        raise KeyboardInterrupt
    monkeypatch.setattr("thatchlab.logs.ingest.omi_memories", boom)
    code, _, err = cli(["ingest", "omi", str(DATA / "omi_memories.json"), "--out", str(tmp_path / "o.jsonl")], capsys)
    assert code == 130 and err == "interrupted\n" and not (tmp_path / "o.jsonl").exists()


