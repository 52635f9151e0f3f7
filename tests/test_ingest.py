"""Real logs in: the host and system adapters on the bundled samples, fidelity, redaction, growth and the verb."""

from __future__ import annotations

import pytest

from tests._ingest import DATA, cli, replay, sample_embedder
from thatchlab import logs
from thatchlab.embed import LookupEmbedder
from thatchlab.logs import ingest
from thatchlab.replay import fidelity

CC = DATA / "claude-code"
OC = DATA / "opencode"


@pytest.fixture(scope="module")
def emb():
    return sample_embedder()


@pytest.fixture(scope="module")
def oc():  # the opencode sample (its own tests: tests/test_ingest_opencode.py)
    return ingest.opencode(OC)


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


SOURCES = [("claude-code", [str(CC)], {"c": 30}), ("opencode", [str(OC)], {"c": 11}),
           ("omi", [str(DATA / "omi_memories.json")], {"c": 24}),
           ("ai-memory", [str(DATA / "ai-memory.db")], {"c": 7, "c.observations": 4, "c.outcomes": 9}),
           ("mnemo", [str(DATA / "mnemo_events.csv"), "--recalls", str(DATA / "mnemo_recalls.csv")],
            {"c.events": 16, "c.recalls": 8})]


@pytest.mark.parametrize("suffix", ["jsonl", "csv", "parquet"])
@pytest.mark.parametrize("source, args, files", SOURCES, ids=[s[0] for s in SOURCES])
def test_cli_reingest_of_an_unchanged_source_changes_nothing(tmp_path, capsys, source, args, files, suffix):
    out = tmp_path / f"c.{suffix}"
    argv = ["ingest", source, *args, "--out", str(out)]
    assert cli(argv, capsys)[0] == 0
    first = {name: (tmp_path / f"{name}.{suffix}").read_bytes() for name in files}
    code, text, _ = cli(argv, capsys)
    assert code == 0
    for name, n in files.items():  # every row matched by its record_id, in every format
        assert f"{tmp_path / f'{name}.{suffix}'}: unchanged ({n} rows, as the source holds them)" in text
        assert (tmp_path / f"{name}.{suffix}").read_bytes() == first[name]


def test_cli_dry_run_writes_nothing_for_any_source(tmp_path, capsys):
    for source, args, files in SOURCES:
        code, text, _ = cli(["ingest", source, *args, "--out", str(tmp_path / "c.jsonl"), "--dry-run"], capsys)
        assert code == 0 and "dry run: nothing written" in text, source
        for name, n in files.items():
            assert f"would write {n} rows to {tmp_path / f'{name}.jsonl'}" in text
    assert list(tmp_path.iterdir()) == []


# ------------------------------------------------------------------ never a log of no rows (issue 36 point 3)
@pytest.mark.parametrize("source, content, found", [
    ("claude-code", b"", "(read: files 1)"),
    ("claude-code", b'{"type":"summary","summary":"x"}\n{"type":"file-history-snapshot"}\n',
     "(read: files 1, records 2, other records 2; records by kind: file-history-snapshot 1, summary 1)"),
    ("omi", b"[]", "(no record read)"),
])
def test_cli_ingest_of_nothing_writes_nothing_and_says_what_it_found(tmp_path, capsys, source, content, found):
    src = tmp_path / ("s.jsonl" if source == "claude-code" else "m.json")
    src.write_bytes(content)
    out = tmp_path / "log.jsonl"
    code, _, err = cli(["ingest", source, str(src), "--out", str(out)], capsys)
    what = "prompt or thatch tool call" if source == "claude-code" else "memory"
    assert code == 2 and err.splitlines() == [f"error: {src}: no {what} found to ingest {found}; expected "
                                              f"{'interaction' if source == 'claude-code' else 'memory'} log "
                                              f"records of {source}; nothing written"]
    assert not out.exists()


@pytest.mark.parametrize("existing", ["", "\n\n", "half"])
def test_cli_ingest_into_an_existing_empty_or_partial_log(tmp_path, capsys, existing):
    """An empty --out (0 bytes, blank lines: what an ingest of nothing once wrote) or one holding part of
    the source's rows is grown to the whole source."""
    out = tmp_path / "log.jsonl"
    if existing == "half":
        assert cli(["ingest", "omi", str(DATA / "omi_memories.json"), "--out", str(out)], capsys)[0] == 0
        lines = out.read_text().splitlines(keepends=True)
        out.write_text("".join(lines[:10]))
    else:
        out.write_text(existing)
    code, text, err = cli(["ingest", "omi", str(DATA / "omi_memories.json"), "--out", str(out)], capsys)
    assert code == 0 and err == "", err
    assert f"wrote 24 rows to {out}" in text
    assert len(logs.read_memory_log(out)) == 24
    code, text, _ = cli(["ingest", "omi", str(DATA / "omi_memories.json"), "--out", str(out)], capsys)
    assert code == 0 and f"{out}: unchanged (24 rows, as the source holds them)" in text


def test_cli_ingest_of_nothing_leaves_an_existing_log_as_it_was(tmp_path, capsys):
    out = tmp_path / "log.jsonl"
    assert cli(["ingest", "omi", str(DATA / "omi_memories.json"), "--out", str(out)], capsys)[0] == 0
    before = out.read_bytes()
    (tmp_path / "none.json").write_text("[]")
    code, _, err = cli(["ingest", "omi", str(tmp_path / "none.json"), "--out", str(out)], capsys)
    assert code == 2 and err.rstrip().endswith(f"{out} left as it was") and out.read_bytes() == before
