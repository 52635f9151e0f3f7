"""Which thatch release wrote a log: thatchlab.replay.fidelity_by_release and ``thatchlab fidelity``.

The releases differ (thatchlab.core.params.RELEASES) in rules these logs exercise:
item dedup in the target store only (v0.1.30) or store+global (07ecf87, sysread/thatch
src/prediction.ts @97212df2), and the prompt hook (src/runtime.ts @07ecf879: chat echoes and task
sub-agent sessions get no nudge; v0.1.30's hook returned after an extraction nudge).
"""

from __future__ import annotations

import json
import math
import warnings

import pandas as pd
import pytest

from tests._ingest import DATA, cli, sample_embedder
from thatchlab import logs
from thatchlab.core.errors import InputError
from thatchlab.core.params import ReleaseError, ScoringParams
from thatchlab.embed import LookupEmbedder
from thatchlab.logs import ingest
from thatchlab.logs.ingest import parse_nudges
from thatchlab.replay import run
from thatchlab.replay.fidelity import MATCH_BAR, RELEASE_COLUMNS, fidelity_by_release

VECTORS = {"writing tests": [1, 0, 0], "adding tests": [0.95, 0.05, 0], "use pytest": [0, 1, 0],
           "I am writing tests now": [1, 0.1, 0], "[chat] mo-ss-1 asked about writing tests": [1, 0.12, 0],
           "naming a helper": [0, 0, 1], "short names": [0, 0.2, 1], "rename the test helper": [0.1, 0, 1]}
EMB = LookupEmbedder(VECTORS, name="built")
EXTRACTION = "[thatch] Spawn a background sub-agent to run the thatch-fact-extractor skill on 2 queued tool interactions."


def built_log():
    """Writes in global and in the project (the same statement: one item under 07ecf87, two under
    v0.1.30), a plain prompt, a chat echo, a task sub-agent's prompt, another write and prompt."""
    return pd.DataFrame({
        "ts": [f"2026-02-01T09:0{m}:00Z" for m in range(7)],
        "session": ["s1", "s1", "s1", "s1", "s1:agent-7", "s1", "s1"],
        "store": ["global", "acme/app", None, None, None, None, None],
        "kind": ["prediction_update", "prediction_update", "message", "message", "message", "prediction_update",
                 "message"],
        "matcher": ["writing tests", "adding tests", None, None, None, "naming a helper", None],
        "statement": ["use pytest", "use pytest", None, None, None, "short names", None],
        "signal": ["confirm", "confirm", None, None, None, "create", None],
        "text": [None, None, "I am writing tests now", "[chat] mo-ss-1 asked about writing tests",
                 "I am writing tests now", None, "rename the test helper"],
        "subagent": [None, None, None, None, "task", None, None]})


def logged_as(log, release):
    """``log`` with the replies and nudges a replay under ``release`` gives, as production would have logged them."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        ev = run(log, embedder=EMB, params=ScoringParams(release=release), path="events").events
    msg = log["kind"].eq("message").to_numpy()
    out = log.copy()
    out["logged_reply"] = [None if m else r for m, r in zip(msg, ev["reply"])]
    out["logged_nudge"] = [r if m else None for m, r in zip(msg, ev["reply"])]
    out["logged_items"] = [[it.as_dict() for b in parse_nudges(r) for it in b.items] if m else None
                           for m, r in zip(msg, ev["reply"])]
    return out


def test_a_log_made_by_07ecf87_says_07ecf87():
    res = fidelity_by_release(logged_as(built_log(), "07ecf87"), EMB)
    assert list(res.table.columns) == RELEASE_COLUMNS
    assert res.table.drop(columns="agreement").values.tolist() == [
        # v0.1.30: the project write makes a second item ("[created + confirm]" instead of "[confirm]"),
        # and it nudges the chat echo and the sub-agent's prompt, with other confidences
        ["v0.1.30", 3, 2 / 3, 4, 0.25, 0.5, 0.5, 7],
        ["07ecf87", 3, 1.0, 4, 1.0, 1.0, 1.0, 7]]
    assert res.table["agreement"].tolist() == [3 / 7, 1.0]
    assert (res.verdict, res.best, res.tied, res.exact_model) == ("match", "07ecf87", ("07ecf87",), False)
    assert res.statement.startswith("The log matches thatch 07ecf87: 100% of its replies and nudges agree "
                                    "(v0.1.30 43%).")
    assert "not production's model" in res.statement
    assert set(res.reports) == {("v0.1.30", "prediction"), ("07ecf87", "prediction")}


def test_a_log_made_by_v0130_says_v0130_and_its_extraction_gate_counts():
    log = built_log()
    log["logged_extraction"] = [None, None, EXTRACTION, None, None, None, None]
    made = logged_as(log, "v0.1.30")
    assert made["logged_nudge"][2] == ""  # production printed the extraction nudge and nothing else
    res = fidelity_by_release(made, EMB)
    # 07ecf87 nudges the gated prompt, skips the echo and the sub-agent's prompt: only the last prompt agrees
    assert res.table[["release", "reply_agreement", "nudge_agreement"]].values.tolist() == [
        ["v0.1.30", 1.0, 1.0], ["07ecf87", 2 / 3, 0.25]]
    assert (res.verdict, res.best) == ("match", "v0.1.30")


def test_ties_weak_matches_and_nothing_to_compare():
    made = logged_as(built_log(), "07ecf87").iloc[[0, 5, 6]].reset_index(drop=True)  # nothing the releases differ on
    res = fidelity_by_release(made, EMB)
    assert (res.verdict, res.best, res.tied) == ("tie", None, ("v0.1.30", "07ecf87"))
    assert res.statement.startswith("Releases v0.1.30 and 07ecf87 agree equally with the log (100% of 3 replies "
                                    "and nudges): it does not tell them apart.")
    wrong = made.copy()
    wrong.loc[0, "logged_reply"] = "[created + confirm] something else"
    res = fidelity_by_release(wrong, EMB, releases=["07ecf87"], match_bar=0.9)
    assert (res.verdict, res.best, res.table["agreement"].tolist()) == ("weak", "07ecf87", [2 / 3])
    assert res.statement.startswith("No known release matches the log well: the closest, 07ecf87, agrees on 67% "
                                    "of its replies and nudges (below 90%).")
    bare = built_log()
    res = fidelity_by_release(bare, EMB)
    assert (res.verdict, res.best, res.tied) == ("unknown", None, ())
    assert res.table["n_compared"].tolist() == [0, 0] and all(math.isnan(a) for a in res.table["agreement"])
    assert MATCH_BAR == 0.95


def test_release_names_engines_and_bad_arguments():
    made = logged_as(built_log(), "07ecf87")
    res = fidelity_by_release(made, EMB, releases=["07ecf8794e4d", "v0.1.30", "latest"])
    assert res.table["release"].tolist() == ["v0.1.30", "07ecf87"]  # resolved, once each, oldest first
    assert set(fidelity_by_release(made, EMB, engines="behavior").reports) == {("v0.1.30", "behavior"),
                                                                             ("07ecf87", "behavior")}
    with pytest.raises(ReleaseError, match="no release 'v0.2'.*v0.1.30, 07ecf87"):
        fidelity_by_release(made, EMB, releases=["v0.2"])
    with pytest.raises(InputError, match="engines: expected 'prediction' and/or 'behavior', got 'belief'"):
        fidelity_by_release(made, EMB, engines="belief")
    with pytest.raises(InputError, match="match_bar"):
        fidelity_by_release(made, EMB, match_bar=2)
    with pytest.raises(InputError, match="at least one thatch release"):
        fidelity_by_release(made, EMB, releases=[])


@pytest.fixture(scope="module")
def emb():
    return sample_embedder()


@pytest.mark.parametrize("host, n", [("claude-code", 28), ("opencode", 10)])
def test_the_bundled_samples_agree_fully_with_v0130(emb, host, n):
    """The samples were written by thatchlab's v0.1.30 engines (data/ingest/make_samples.py)."""
    log = ingest.claude_code(DATA / host).log if host == "claude-code" else ingest.opencode(DATA / host).log
    res = fidelity_by_release(log, emb)
    row = res.table.set_index("release").loc["v0.1.30"]
    assert (row["n_compared"], row["agreement"], row["regime_agreement"]) == (n, 1.0, 1.0)
    assert "v0.1.30" in res.tied


@pytest.mark.parametrize("host", ["claude-code", "opencode"])
def test_the_bundled_samples_cannot_tell_the_releases_apart_and_say_so(emb, host):
    """The samples hold no write that lands in another store, no matcher starting with "When" and no
    chat echo, sub-agent prompt or extraction nudge: both releases reproduce every reply and nudge,
    and the verdict says it is a tie rather than naming one."""
    log = ingest.claude_code(DATA / host).log if host == "claude-code" else ingest.opencode(DATA / host).log
    res = fidelity_by_release(log, emb)
    assert res.verdict == "tie" and set(res.tied) == {"v0.1.30", "07ecf87"}


# ------------------------------------------------------------------ the verb
def test_the_verb_prints_the_table_and_the_verdict(tmp_path, capsys):
    p = tmp_path / "log.jsonl"
    logs.write_interaction_log(logged_as(built_log(), "07ecf87"), p)
    look = tmp_path / "lookup.jsonl"
    look.write_text("".join(json.dumps({"text": t, "embedding": v}) + "\n" for t, v in VECTORS.items()))
    out = tmp_path / "table.csv"
    code, text, err = cli(["fidelity", str(p), "--lookup", str(look), "--out", str(out)], capsys)
    assert code == 0, err
    assert text.splitlines()[:3] == [
        "release         replies       nudges  items  regimes  agreement",
        "v0.1.30      67% of 3     25% of 4      50%      50%        43%",
        "07ecf87     100% of 3    100% of 4     100%     100%       100%"]
    assert "The log matches thatch 07ecf87" in text
    assert pd.read_csv(out)["release"].tolist() == ["v0.1.30", "07ecf87"]
    code, text, err = cli(["fidelity", str(p), "--lookup", str(look), "--release", "v0.1.30"], capsys)
    assert code == 0 and len(text.splitlines()) == 3 and "The log matches thatch v0.1.30" not in text
    assert "No known release matches the log well: the closest, v0.1.30" in text


def test_the_verb_refuses_bad_input_in_one_line(tmp_path, capsys):
    p = tmp_path / "log.jsonl"
    logs.write_interaction_log(logged_as(built_log(), "07ecf87"), p)
    code, _, err = cli(["fidelity", str(p), "--release", "v9"], capsys)
    assert code == 2 and err.startswith("error: release: thatch has no release 'v9'") and len(err.splitlines()) == 1
    code, _, err = cli(["fidelity", str(p), "--engine", "belief"], capsys)
    assert code == 2 and err.startswith("error: --engine") and len(err.splitlines()) == 1
    code, _, err = cli(["fidelity", str(tmp_path / "absent.jsonl")], capsys)
    assert code == 2 and err.startswith("error: ") and len(err.splitlines()) == 1
    code, _, err = cli(["fidelity", str(p), "--out", str(tmp_path / "t.txt")], capsys)
    assert code == 2 and "unknown output format" in err
