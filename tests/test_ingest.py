"""Real logs in: the host and system adapters on the bundled samples, fidelity, redaction, growth and the verb."""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest

from thatchlab import logs
from thatchlab.cli import main
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
def oc():  # the opencode sample (its own tests: tests/test_ingest_opencode.py)
    return ingest.opencode(OC)


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
    code, text, _ = cli(["ingest", "opencode", str(OC), "--out", str(out), "--redact",
                         "--lookup", str(DATA / "lookup.jsonl")], capsys)
    assert code == 0 and (tmp_path / "oc.lookup.parquet").exists() and "wrote 11 rows" in text
    code, text, _ = cli(["replay", str(out), "--engine", "prediction", "--lookup",
                         str(tmp_path / "oc.lookup.parquet")], capsys)
    assert code == 0 and "n_events                      11" in text


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


