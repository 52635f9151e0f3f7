"""Nudge rules that follow the thatch release: ties, near-duplicate items, line text.

Sources (sysread/thatch):
- ``src/scoring-engine.ts`` @0182ac19 (``07ecf87``) ``scoreItems``: the candidate rows come from
  ``SELECT … FROM edges e JOIN items p ON … WHERE e.matcher_id IN (…) ORDER BY p.statement``, a
  stable sort by rounded score, the item-id dedup, then (new in 07ecf87)
  ``SEMANTIC_DEDUP_COSINE = 0.85`` against the embeddings already kept (same length only), then
  ``scoreNudge``'s ``slice(0, limit)``; ``prediction_query`` scores through the same
  ``scoreItems``.
- ``src/vector-math.ts`` (@bc082663) ``cosineSimilarity``: three double accumulators in index order.
- ``src/prompts.ts`` ``predictionNudge`` at v0.1.30 prints ``When {matcher}: {verb} {statement}``;
  07ecf87 (``src/prompts.ts`` @2ed97f2a, tested by ``tests/plugin.test.ts`` "formatWhenLine prefix
  deduplication") does not double a leading "When" nor a statement that already starts with the
  verb; ``src/tool-defs.ts`` ``prediction_query`` keeps ``When {matcher}: {verb} {statement}``.
"""

from __future__ import annotations

import math
import sqlite3
import uuid

import numpy as np
import pandas as pd
import pytest

from thatchlab.core.jsfmt import r3, to_fixed
from thatchlab.core.params import ScoringParams
from thatchlab.core.vectors import exact_cosines, loop_cosines
from thatchlab.embed import LookupEmbedder
from thatchlab.replay import prepare, run
from thatchlab.scoring import BehaviorEngine, PredictionEngine
from thatchlab.scoring.rules import keep_flags, nudge_line, query_line, row_order_key
from thatchlab.store import export_sqlite, import_sqlite

TS = "2026-03-01T09:00:00.000Z"
RELEASES = ["v0.1.30", "07ecf87"]


def _js_cosine(a, b) -> float:
    """src/vector-math.ts cosineSimilarity, one double addition at a time."""
    dot = ma = mb = 0.0
    for x, y in zip(np.asarray(a, np.float32).tolist(), np.asarray(b, np.float32).tolist()):
        dot += x * y
        ma += x * x
        mb += y * y
    den = math.sqrt(ma) * math.sqrt(mb)
    return 0.0 if den == 0 else dot / den


# ------------------------------------------------------------------ production's cosine loop
def test_loop_cosines_are_production_s_additions_bit_for_bit():
    rng = np.random.default_rng(0)
    a = rng.normal(size=(300, 24)).astype(np.float32)
    b = (a + rng.normal(scale=0.3, size=a.shape)).astype(np.float32)
    b[0] = 0.0
    got = loop_cosines(a, b)
    want = np.array([_js_cosine(x, y) for x, y in zip(a, b)])
    assert got.tobytes() == want.tobytes() and got[0] == 0.0
    # the einsum form sums in another order: it is not always the same double
    assert (exact_cosines(a.astype(np.float64), b.astype(np.float64)) != want).any()


def test_a_cosine_of_exactly_0_85_drops_and_one_just_below_stays():
    base = np.array([1, 0, 0, 0, 0], np.float32)
    at = np.array([17, 9, 5, 2, 1], np.float32)           # 17 / 20: cosine 0.85 exactly
    below = np.array([17, 9, 5, 2, 1.001], np.float32)
    assert _js_cosine(base, at) == 0.85 and _js_cosine(base, below) < 0.85
    assert keep_flags([base, at]) == [True, False]
    assert keep_flags([base, below]) == [True, True]
    # kept vectors only: a dropped item drops nothing after it; None and other lengths never compare
    assert keep_flags([base, at, at, None, None, base[:3]]) == [True, False, False, True, True, True]


def _keep_flags_stacked(vectors) -> list:
    """The near-duplicate rule written with one ``loop_cosines`` call per item over every kept
    vector of its length (the form ``keep_flags`` had before it took norms once per vector)."""
    kept: dict = {}
    out = []
    for v in vectors:
        if v is None:
            out.append(True)
            continue
        v = np.asarray(v, dtype=np.float64)
        same = kept.setdefault(len(v), [])
        if same and (loop_cosines(np.stack(same), np.broadcast_to(v, (len(same), len(v)))) >= 0.85).any():
            out.append(False)
            continue
        same.append(v)
        out.append(True)
    return out


@pytest.mark.parametrize("seed", range(6))
def test_keep_flags_equals_one_loop_cosines_call_per_item(seed):
    rng = np.random.default_rng(seed)
    base = rng.normal(size=(4, 6)).astype(np.float32)
    vectors = []
    for _ in range(40):
        kind = rng.integers(0, 7)
        if kind == 0:
            vectors.append(None)
        elif kind == 1:
            vectors.append(np.zeros(6, np.float32))
        elif kind == 2:
            vectors.append(rng.normal(size=3).astype(np.float32))      # another length
        else:                                                           # near some base vector or not
            v = base[rng.integers(0, 4)] + rng.normal(scale=[0.1, 0.45, 0.6, 2.0][kind - 3], size=6)
            vectors.append(v.astype(np.float32))
    got = keep_flags(vectors)
    assert got == _keep_flags_stacked(vectors)
    assert 0 < got.count(False) < sum(v is not None for v in vectors)   # both outcomes exercised


# ------------------------------------------------------------------ line text
def test_nudge_lines_per_release():
    # v0.1.30 (tag 2c35704) src/prompts.ts predictionNudge: "When " and the verb always added
    assert nudge_line("v0.1.30", "0.56", 1, "you tend to", "When reviewing a tiny config PR",
                      "you tend to prefer the existing pattern") == (
        "[0.56 conf, 1 tests] When When reviewing a tiny config PR: you tend to you tend to prefer "
        "the existing pattern")
    # 07ecf87 src/prompts.ts @2ed97f2a formatWhenLine (tests/plugin.test.ts, formatWhenLine prefix dedup)
    assert nudge_line("07ecf87", "0.56", 1, "you tend to", "When reviewing a tiny config PR",
                      "prefer the existing pattern") == (
        "[0.56 conf, 1 tests] When reviewing a tiny config PR: you tend to prefer the existing pattern")
    assert nudge_line("07ecf87", "0.56", 1, "you tend to", "Deciding how to show activity feedback",
                      "you tend to prefer toast notifications") == (
        "[0.56 conf, 1 tests] When Deciding how to show activity feedback: you tend to prefer toast notifications")
    assert nudge_line("07ecf87", "0.50", 0, "you may prefer", "Deciding how to show activity feedback",
                      "prefer toast notifications") == (
        "[0.50 conf, 0 tests] When Deciding how to show activity feedback: you may prefer prefer toast "
        "notifications")
    # "whenever" is not the word "When"; the test is case-blind
    assert nudge_line("07ecf87", "0.50", 0, "consider", "whenever a PR lands", "x") == (
        "[0.50 conf, 0 tests] When whenever a PR lands: consider x")
    assert nudge_line("07ecf87", "0.50", 0, "consider", "when a PR lands", "Consider y") == (
        "[0.50 conf, 0 tests] when a PR lands: Consider y")
    # the behavior verb quirk: the verb test is a plain prefix, so "do" vanishes before "document…"
    assert nudge_line("07ecf87", "0.62", 2, "do", "editing docs", "document the change") == (
        "[0.62 conf, 2 tests] When editing docs: document the change")
    assert nudge_line("07ecf87", "0.62", 2, "do", "editing docs", "run the linter") == (
        "[0.62 conf, 2 tests] When editing docs: do run the linter")
    # query replies keep the plain form (src/tool-defs.ts prediction_query) in both releases
    assert query_line("0.56", 1, "you tend to", "When x", "you tend to y") == (
        "[0.56 conf, 1 tests] When When x: you tend to you tend to y")


@pytest.mark.parametrize("release, block", [
    ("v0.1.30", "[thatch] Situational behaviors\n"
                "- [0.58 conf, 1 tests] When When editing docs: do document the change\n"
                "- [0.50 conf, 0 tests] When When editing docs: consider consider a changelog entry"),
    ("07ecf87", "[thatch] Situational behaviors\n"
                "- [0.58 conf, 1 tests] When editing docs: document the change\n"
                "- [0.50 conf, 0 tests] When editing docs: consider a changelog entry"),
])
def test_behavior_nudge_block_per_release(release, block):
    emb = LookupEmbedder({"When editing docs": [1, 0, 0], "document the change": [0, 1, 0],
                          "consider a changelog entry": [0, 0, 1]}, queries={"I am editing the docs": [1, 0, 0]})
    eng = BehaviorEngine(emb, params=ScoringParams(release=release))
    eng.codify("When editing docs", "document the change", "r", now=TS)
    eng.feedback("document the change", True, "it helped", now=TS)
    eng.codify("When editing docs", "consider a changelog entry", "r", now=TS)
    assert eng.nudge("I am editing the docs").text == block
    # the query reply is the same in both releases
    assert eng.query("I am editing the docs").text.splitlines()[0] == (
        "[0.58 conf, 1 tests] When When editing docs: do document the change")


# ------------------------------------------------------------------ near-duplicate items
def _near_world(release):
    """A project and a global copy of one preference (near-identical vectors), one without a
    vector and one of another length; every item reached from one matcher."""
    vec = {"writing tests": [1, 0, 0, 0], "use pytest": [0, 1, 0, 0], "use pytest!": [0, 0.99, 0.1, 0],
           "use unittest": [0, 0.5, 0.0, 0.866]}
    emb = LookupEmbedder(vec, queries={"I am writing tests": [1, 0, 0, 0]})
    eng = PredictionEngine(emb, params=ScoringParams(release=release, dedup_scope="store"))
    eng.update("writing tests", "use pytest", "confirm", now=TS)
    eng.update("writing tests", "use pytest", "confirm", now=TS)
    eng.update("writing tests", "use pytest!", "create", store="global", now=TS)
    eng.update("writing tests", "use unittest", "create", now=TS)
    return eng


@pytest.mark.parametrize("release, lines", [
    ("v0.1.30", ["- [0.64 conf, 2 tests] When writing tests: you tend to use pytest",
                 "- [0.50 conf, 0 tests] When writing tests: you may prefer use pytest!",
                 "- [0.50 conf, 0 tests] When writing tests: you may prefer use unittest"]),
    ("07ecf87", ["- [0.64 conf, 2 tests] When writing tests: you tend to use pytest",
                 "- [0.50 conf, 0 tests] When writing tests: you may prefer use unittest"]),
])
def test_a_global_copy_of_a_kept_item_drops_under_07ecf87(release, lines):
    eng = _near_world(release)
    n = eng.nudge("I am writing tests")
    assert n.text.splitlines()[1:] == lines
    q = eng.query("I am writing tests")
    assert len(q.items) == len(lines)  # the query tool scores through the same scoreItems


def test_items_without_vectors_or_of_another_length_never_drop():
    tables = _near_world("07ecf87").tables
    items = tables["items"].copy()
    items["embedding"] = [None, None, np.array([0, 1, 0], np.float32)]
    tables = {**tables, "items": items}
    eng = PredictionEngine.from_tables(tables, embedder=_near_world("07ecf87").embedder,
                                       params=ScoringParams(release="07ecf87"))
    assert len(eng.nudge("I am writing tests").items) == 3


# ------------------------------------------------------------------ ties: production's SQL order
def _uuid4(rng) -> str:
    return str(uuid.UUID(int=int(rng.integers(0, 2 ** 62)) << 66 | int(rng.integers(0, 2 ** 62)), version=4))


def _tie_world(seed: int, release: str):
    """Matchers and items with production-like random ids inserted in shuffled order; many rows
    share a statement and a rounded score (weights 1, confidence 0.5, cosines equal)."""
    rng = np.random.default_rng(seed)
    dim = 6
    q = np.eye(dim)[0]
    n_m, n_i = 7, 12
    mvec = [q + (0 if rng.random() < 0.7 else 0.6) * np.eye(dim)[1] for _ in range(n_m)]
    statements = [f"rule {c}" for c in rng.choice(["a", "b", "c"], n_i)]
    ivec = [np.eye(dim)[2 + int(s[-1] == "b") + 2 * int(s[-1] == "c")] + rng.normal(scale=0.02, size=dim)
            for s in statements]
    for j in rng.choice(n_i, 2, replace=False):  # a few far apart: they survive 07ecf87's rule
        ivec[j] = np.eye(dim)[5] * (1 + j)
    mids, iids = [_uuid4(rng) for _ in range(n_m)], [_uuid4(rng) for _ in range(n_i)]
    stores_m = rng.choice(["repo", "global"], n_m)
    stores_i = rng.choice(["repo", "global"], n_i)
    edges = [(mids[a], iids[b]) for a in range(n_m) for b in range(n_i) if rng.random() < 0.5]
    mo, io, eo = rng.permutation(n_m), rng.permutation(n_i), rng.permutation(len(edges))
    tables = {
        "stores": pd.DataFrame({"name": ["global", "repo"]}),
        "matchers": pd.DataFrame({"id": [mids[j] for j in mo], "store": stores_m[mo],
                                  "description": [f"situation {j}" for j in mo],
                                  "embedding": [mvec[j].astype(np.float32) for j in mo], "model": "toy",
                                  "created_at": TS, "updated_at": TS}),
        "items": pd.DataFrame({"id": [iids[j] for j in io], "store": stores_i[io],
                               "statement": [statements[j] for j in io], "rationale": None,
                               "embedding": [ivec[j].astype(np.float32) for j in io], "model": "toy",
                               "confidence": 0.5, "confirm_count": 0.0, "disconfirm_count": 0.0,
                               "created_at": TS, "updated_at": TS}),
        "edges": pd.DataFrame({"matcher_id": [edges[j][0] for j in eo], "prediction_id": [edges[j][1] for j in eo],
                               "weight": 1.0, "created_at": TS}),
        "provenance": pd.DataFrame(columns=["id", "prediction_id", "signal", "detail", "created_at"]),
    }
    emb = LookupEmbedder({"unused": np.ones(dim)}, queries={"what now": q}, name="toy")
    eng = PredictionEngine.from_tables(tables, embedder=emb, params=ScoringParams(release=release, threshold=0.5),
                                       project_store="repo")
    return eng, q


def _production_nudge(path, stores, q, threshold, release, limit=5):
    """production's scoreNudge on the file: findMatchers, scoreItems' SQL as written, the stable
    score sort, the item-id dedup, 07ecf87's near-duplicate dedup, the top-``limit`` cut
    (sysread/thatch src/scoring-engine.ts @0182ac19; v0.1.30 without the near-duplicate step)."""
    con = sqlite3.connect(path)
    try:
        ph = ", ".join("?" * len(stores))
        found = []
        for mid, desc, blob in con.execute(f"SELECT id, description, embedding FROM prediction_matchers "
                                           f"WHERE store IN ({ph}) AND embedding IS NOT NULL", stores):
            v = np.frombuffer(blob, dtype=np.float32)
            if len(v) == len(q):
                s = _js_cosine(q, v)
                if s >= 0.01:
                    found.append((mid, desc, float(r3(s))))
        found.sort(key=lambda m: -m[2])
        matchers = [m for m in found[:limit] if m[2] >= threshold]
        if not matchers:
            return []
        by_id = {m[0]: m for m in matchers}
        sql = f"""SELECT p.id, p.statement, p.rationale, p.confidence, p.confirm_count, p.disconfirm_count,
                p.embedding, e.matcher_id, e.weight
         FROM prediction_edges e
         JOIN predictions p ON e.prediction_id = p.id
         WHERE e.matcher_id IN ({', '.join('?' * len(matchers))})
         ORDER BY p.statement"""
        scored = []
        for iid, stmt, _, conf, c, d, blob, mid, w in con.execute(sql, [m[0] for m in matchers]):
            m = by_id[mid]
            scored.append(dict(item_id=iid, matcher_id=mid, statement=stmt, desc=m[1], conf=float(r3(conf)),
                               n=int(np.floor(c + d + 0.5)), score=float(r3(m[2] * w * conf)),
                               emb=None if blob is None else np.frombuffer(blob, dtype=np.float32)))
        scored.sort(key=lambda s: -s["score"])
        seen, kept_emb, out = set(), [], []
        for s in scored:
            if s["item_id"] in seen:
                continue
            seen.add(s["item_id"])
            if release == "07ecf87" and s["emb"] is not None:
                if any(len(o) == len(s["emb"]) and _js_cosine(o, s["emb"]) >= 0.85 for o in kept_emb):
                    continue
                kept_emb.append(s["emb"])
            out.append(s)
        return out[:limit]
    finally:
        con.close()


def test_sqlite_returns_equal_statements_by_matcher_id_then_item_id(tmp_path):
    # the rule itself, read from SQLite: the plan probes the edges' primary key index per matcher id
    # and sorts on the statement keeping equal keys in the order they came
    eng, _ = _tie_world(3, "v0.1.30")
    path = export_sqlite(tmp_path / "t.db", prediction=eng).path
    con = sqlite3.connect(path)
    mids = con.execute("SELECT id FROM prediction_matchers").fetchall()
    mids = [m[0] for m in mids][:5][::-1]
    sql = ("SELECT p.id, p.statement, e.matcher_id FROM prediction_edges e JOIN predictions p "
           f"ON e.prediction_id = p.id WHERE e.matcher_id IN ({', '.join('?' * 5)}) ORDER BY p.statement")
    plan = " | ".join(r[-1] for r in con.execute("EXPLAIN QUERY PLAN " + sql, mids))
    assert "sqlite_autoindex_prediction_edges_1 (matcher_id=?)" in plan and "TEMP B-TREE FOR ORDER BY" in plan
    rows = [(s, m, i) for i, s, m in con.execute(sql, mids)]
    con.close()
    assert len(rows) > 10 and rows == sorted(rows, key=lambda r: row_order_key(*r))


@pytest.mark.parametrize("release", RELEASES)
@pytest.mark.parametrize("seed", range(6))
def test_nudges_tie_as_production_s_query_and_reimport_nudges_the_same(tmp_path, release, seed):
    eng, q = _tie_world(seed, release)
    path = export_sqlite(tmp_path / "t.db", prediction=eng).path
    back = import_sqlite(path, embedder=eng.embedder).prediction
    back.params = ScoringParams(release=release, threshold=0.5)
    n_ties = 0
    for stores in (["repo", "global"], ["global"], ["repo"]):
        want = _production_nudge(path, stores, q, 0.5, release)
        got = eng.nudge_vector(q, stores=stores)
        assert [(r["item_id"], r["matcher_id"]) for r in want] == list(zip(got.items["item_id"],
                                                                           got.items["matcher_id"]))
        lines = [nudge_line(release, to_fixed(r["conf"], 2), r["n"], "you may prefer" if r["n"] == 0
                            else "you tend to", r["desc"], r["statement"]) for r in want]
        assert got.text == "\n".join(["[thatch] User decision model"] + ["- " + s for s in lines]) or not want
        again = back.nudge_vector(q, stores=stores)
        assert again.text == got.text
        pd.testing.assert_frame_equal(again.items, got.items)
        keys = [(r["statement"], r["score"]) for r in want]
        n_ties += len(keys) - len(set(keys))
    if release == "v0.1.30":
        assert n_ties > 0  # rows with one statement and one rounded score were surfaced


def test_the_worked_tie():
    """Two items with one statement and one score, reached from two matchers of equal cosine: the row
    of the smaller matcher id shows, then the smaller item id, whatever the insertion order."""
    emb = LookupEmbedder({"unused": [1, 0, 0]}, queries={"q": [1, 0, 0]})

    def engine(order):
        m = pd.DataFrame({"id": ["m-b", "m-a"], "store": "repo", "description": ["second", "first"],
                          "embedding": [np.array([1, 0, 0], np.float32)] * 2, "model": "x",
                          "created_at": TS, "updated_at": TS}).iloc[order]
        i = pd.DataFrame({"id": ["i-2", "i-1"], "store": ["repo", "global"], "statement": "use tox",
                          "rationale": None, "embedding": [np.array([0, 1, 0], np.float32),
                                                           np.array([0, 0, 1], np.float32)],
                          "model": "x", "confidence": 0.5, "confirm_count": 0.0, "disconfirm_count": 0.0,
                          "created_at": TS, "updated_at": TS}).iloc[order]
        e = pd.DataFrame({"matcher_id": ["m-b", "m-b", "m-a", "m-a"], "prediction_id": ["i-2", "i-1", "i-2", "i-1"],
                          "weight": 1.0, "created_at": TS})
        tables = {"stores": pd.DataFrame({"name": ["global", "repo"]}), "matchers": m, "items": i, "edges": e,
                  "provenance": pd.DataFrame(columns=["id", "prediction_id", "signal", "detail", "created_at"])}
        return PredictionEngine.from_tables(tables, embedder=emb, params=ScoringParams(release="v0.1.30"))

    for order in ([0, 1], [1, 0]):
        n = engine(order).nudge_vector([1, 0, 0])
        assert list(zip(n.items["matcher_id"], n.items["item_id"])) == [("m-a", "i-1"), ("m-a", "i-2")]
        assert n.text.splitlines()[1] == "- [0.50 conf, 0 tests] When first: you may prefer use tox"


# ------------------------------------------------------------------ vectorised == events
def _random_log(seed: int):
    """A log over a LookupEmbedder world whose statements come in near-identical pairs, written to
    the project and to global."""
    rng = np.random.default_rng(seed)
    dim = 6
    base = rng.normal(size=(5, dim))
    texts, vectors = [], {}
    for j in range(5):
        for k, scale in enumerate((0.0, 0.05, 0.3)):
            t = f"statement {j}{'abc'[k]}"
            texts.append(t)
            vectors[t] = base[j] + rng.normal(scale=scale, size=dim) if scale else base[j]
    situations = [f"situation {j}" for j in range(4)]
    for s in situations:
        vectors[s] = rng.normal(size=dim)
    queries = {f"message {j} about things": vectors[situations[j % 4]] + rng.normal(scale=0.4, size=dim)
               for j in range(8)}
    emb = LookupEmbedder(vectors, queries=queries, name="toy")
    t0 = pd.Timestamp("2026-03-01T09:00:00Z")
    rows = []
    for j in range(60):
        row = {"ts": (t0 + pd.Timedelta(seconds=j)).isoformat(), "session": f"s{j % 3}"}
        u = rng.random()
        if u < 0.45:
            row.update(kind="prediction_update", store=rng.choice([None, "global"]),
                       matcher=situations[int(rng.integers(4))], statement=texts[int(rng.integers(len(texts)))],
                       signal=rng.choice(["create", "confirm", "disconfirm", "soft"]), rationale=None)
        elif u < 0.85:
            row.update(kind="message", text=list(queries)[int(rng.integers(8))])
        else:
            row.update(kind="prediction_query", text=list(queries)[int(rng.integers(8))])
        rows.append(row)
    return pd.DataFrame(rows), emb


@pytest.mark.parametrize("release", RELEASES)
@pytest.mark.parametrize("seed", range(4))
def test_vectorised_replay_equals_the_events_with_near_duplicates(release, seed):
    log, emb = _random_log(seed)
    for params in (ScoringParams(release=release, threshold=0.3, query_threshold=0.2, dedup_scope="store"),
                   ScoringParams(release=release, threshold=0.5, max_items=2)):
        a = run(log, "prediction", params, embedder=emb, path="events")
        b = run(log, "prediction", params, embedder=emb, path="vectorised")
        pd.testing.assert_frame_equal(a.events, b.events)
        pd.testing.assert_frame_equal(a.nudges, b.nudges)


def test_the_near_duplicate_rule_changes_replays():
    log, emb = _random_log(1)
    old, new = (run(log, "prediction", ScoringParams(release=r, threshold=0.3, dedup_scope="store"),
                    embedder=emb, path="vectorised") for r in RELEASES)
    assert len(new.nudges) < len(old.nudges)


@pytest.mark.parametrize("seed", range(3))
def test_regime_table_equals_one_replay_per_threshold_under_07ecf87(seed):
    log, emb = _random_log(seed)
    p = ScoringParams(release="07ecf87", threshold=0.2, dedup_scope="store")
    plan = prepare(log, "prediction", embedder=emb, dedup_scope="store", release="07ecf87")
    values = plan.history.replay(p)
    table = plan.regime_table(p, 0.2, values)
    for threshold in (0.2, 0.35, 0.5, 0.7):
        q = ScoringParams(**{**p.to_dict(), "threshold": threshold})
        res = plan.run(q, metrics=False)
        nud = res.nudges
        msgs = set(np.flatnonzero((log["kind"] == "message").to_numpy()).tolist())
        top = nud[(nud["rank"] == 0) & nud["position"].isin(msgs)]
        tops = table.tops(threshold, q.max_items)
        assert plan.reads.position[tops.read].tolist() == top["position"].tolist()
        assert tops.confidence.tolist() == top["stored_confidence"].tolist()
        assert tops.evidence.tolist() == top["evidence_count"].tolist()
