"""Replay of interaction logs: the event-by-event and vectorised paths agree exactly."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests._vectors import assert_same_metrics
from thatchlab.core.errors import InputError, ParamsError
from thatchlab.core.params import ScoringParams
from thatchlab.embed import LookupEmbedder
from thatchlab.replay import ReplayResult, prepare, run
from thatchlab.scoring import PredictionEngine

# Few low-dimensional integer vectors: many exact ties and dedup collisions.
VECS = [[1, 0, 0], [1, 0, 0], [2, 1, 0], [1, 1, 0], [0, 1, 0], [0, 1, 1], [1, 1, 1], [0, 0, 1],
        [3, 1, 1], [1, 2, 0], [2, 2, 1], [0, 2, 1]]
TEXTS = [f"text number {j:02d}" for j in range(len(VECS))]
SHORT = ["short", "tiny msg"]
EMB = LookupEmbedder({**dict(zip(TEXTS, VECS)), SHORT[0]: [1, 0, 0], SHORT[1]: [0, 1, 0]})


def assert_same(a: ReplayResult, b: ReplayResult):
    pd.testing.assert_frame_equal(a.events, b.events)
    pd.testing.assert_frame_equal(a.nudges, b.nudges)
    assert set(a.tables) == set(b.tables)
    for name in a.tables:
        x, y = a.tables[name], b.tables[name]
        assert list(x.columns) == list(y.columns), name
        assert len(x) == len(y), name
        for col in x.columns:
            for u, v in zip(x[col].tolist(), y[col].tolist()):
                if isinstance(u, np.ndarray) or isinstance(v, np.ndarray):
                    assert np.array_equal(u, v), (name, col)
                else:
                    assert (u == v) or (u is None and v is None) or (u != u and v != v), (name, col, u, v)


T0 = pd.Timestamp("2026-03-01T09:00:00Z")


@st.composite
def logs(draw, engine="prediction"):
    n = draw(st.integers(1, 40))
    text = st.sampled_from(TEXTS)
    rows = []
    kinds = (["message", "prediction_update", "prediction_update", "prediction_query", "prediction_delete"]
             if engine == "prediction" else
             ["message", "behavior_codify", "behavior_feedback", "behavior_feedback", "behavior_delete"])
    for j in range(n):
        kind = draw(st.sampled_from(kinds))
        row = {"ts": (T0 + pd.Timedelta(seconds=j)).isoformat(), "session": f"s{draw(st.integers(0, 3))}",
               "store": draw(st.sampled_from([None, "global", "other"])), "kind": kind}
        if kind == "message":
            row["text"] = draw(st.one_of(text, st.sampled_from(SHORT)))
        elif kind == "prediction_query":
            row["text"] = draw(text)
        elif kind in ("prediction_update", "behavior_codify"):
            row["matcher"], row["statement"] = draw(text), draw(text)
            row["rationale"] = draw(st.sampled_from([None, "said so"]))
            if kind == "prediction_update":
                row["signal"] = draw(st.sampled_from(["confirm", "disconfirm", "soft", "create"]))
        elif kind == "behavior_feedback":
            row["statement"], row["relevant"] = draw(text), draw(st.booleans())
            row["text"] = draw(st.sampled_from([None, "it helped"]))
        else:
            row["statement"] = draw(text)
        rows.append(row)
    return pd.DataFrame(rows)


PARAMS = st.builds(ScoringParams, k=st.sampled_from([1.0, 5.0, 3.0]), p0=st.sampled_from([0.5, 0.3, 0.9]),
                   soft_weight=st.sampled_from([0.25, 0.3]), threshold=st.sampled_from([0.6, 0.5, 0.9]),
                   query_threshold=st.sampled_from([0.6, 0.2]), top_matchers=st.sampled_from([5, 1, 2]),
                   max_items=st.sampled_from([5, 1]), dedup_scope=st.sampled_from(["store+global", "store"]),
                   strong_evidence=st.sampled_from([3, 1]), strong_confidence=st.sampled_from([0.7, 0.5]),
                   min_confidence=st.sampled_from([0.0, 0.5]), release=st.sampled_from(["07ecf87", "v0.1.30"]))


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(log=logs(), params=PARAMS)
def test_paths_identical_prediction(log, params):
    a = run(log, "prediction", params, embedder=EMB, path="events")
    b = run(log, "prediction", params, embedder=EMB, path="vectorised")
    assert_same(a, b)
    assert a.metrics.keys() == b.metrics.keys()


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(log=logs("behavior"), params=PARAMS)
def test_paths_identical_behavior(log, params):
    a = run(log, "behavior", params, embedder=EMB, path="events")
    b = run(log, "behavior", params, embedder=EMB, path="vectorised")
    assert_same(a, b)


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(log=logs(), params=PARAMS)
def test_paths_identical_from_initial_state(log, params):
    eng = PredictionEngine(EMB, params=ScoringParams(k=2.0))
    eng.update(TEXTS[0], TEXTS[4], "confirm", now=T0 - pd.Timedelta(days=1))
    eng.update(TEXTS[3], TEXTS[7], "soft", store="global", now=T0 - pd.Timedelta(days=1))
    a = run(log, "prediction", params, embedder=EMB, initial=eng, path="events")
    b = run(log, "prediction", params, embedder=EMB, initial=eng, path="vectorised")
    assert_same(a, b)
    assert len(eng.tables["items"]) == 2  # the initial engine is untouched


def _tagged_initial(matcher_tags, item_tags):
    """Initial tables (two rules, project and global) whose rows carry the given model tags."""
    eng = PredictionEngine(EMB)  # the embedder's name is "lookup"
    eng.update(TEXTS[0], TEXTS[4], "confirm", now=T0 - pd.Timedelta(days=1))
    eng.update(TEXTS[3], TEXTS[7], "soft", store="global", now=T0 - pd.Timedelta(days=1))
    tables = eng.tables
    tables["matchers"]["model"] = pd.Series(list(matcher_tags), dtype=object)
    tables["items"]["model"] = pd.Series(list(item_tags), dtype=object)
    return tables


TAGS = st.sampled_from([None, "lookup", "model-a"])


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(log=logs(), params=PARAMS, tags=st.lists(TAGS, min_size=4, max_size=4), strict=st.booleans())
def test_paths_identical_with_mixed_model_tags(log, params, tags, strict):
    initial = _tagged_initial(tags[:2], tags[2:])
    a = run(log, "prediction", params, embedder=EMB, initial=initial, path="events", strict_model=strict)
    b = run(log, "prediction", params, embedder=EMB, initial=initial, path="vectorised", strict_model=strict)
    assert_same(a, b)
    keys = ("n_foreign_model_reads", "n_foreign_model_rows")
    assert [a.metrics[k] for k in keys] == [b.metrics[k] for k in keys]
    assert a.strict_model is b.strict_model is strict


def test_replay_scores_rows_of_another_model_tag():
    log = _log([{"kind": "message", "text": TEXTS[1]},
                {"kind": "message", "text": SHORT[0]},
                {"kind": "prediction_query", "store": "other", "text": TEXTS[1]},
                {"kind": "prediction_update", "matcher": TEXTS[0], "statement": TEXTS[4], "signal": "confirm"},
                {"kind": "message", "text": TEXTS[1]}])
    own = _tagged_initial(["lookup"] * 2, ["lookup"] * 2)
    foreign = _tagged_initial(["model-a"] * 2, ["model-a"] * 2)
    ref = run(log, embedder=EMB, initial=own, path="events")
    for path in ("events", "vectorised"):
        res = run(log, embedder=EMB, initial=foreign, path=path)
        # the same nudges, replies and writes as with the embedder's own tag...
        pd.testing.assert_frame_equal(res.nudges, ref.nudges)
        pd.testing.assert_frame_equal(res.events.drop(columns="n_foreign_model"),
                                      ref.events.drop(columns="n_foreign_model"))
        assert res.nudges.loc[res.nudges["position"] == 0, "statement"].tolist() == [TEXTS[4], TEXTS[7]]
        assert res.events["action"].tolist()[2:4] == ["query", "confirm"]  # the model-a item was found
        # ...and the count of scored rows tagged model-a: project + global, none when skipped,
        # global only from the "other" store
        assert res.events["n_foreign_model"].tolist() == [2.0, 0.0, 1.0, pytest.approx(np.nan, nan_ok=True),
                                                          2.0]
        assert (res.metrics["n_foreign_model_reads"], res.metrics["n_foreign_model_rows"]) == (3, 2)
        assert ref.events["n_foreign_model"].fillna(0).tolist() == [0.0] * 5
        strict = run(log, embedder=EMB, initial=foreign, path=path, strict_model=True)
        # strict: the model-a rows are skipped, so the update creates its own rule
        assert strict.nudges["position"].tolist() == [4]
        assert strict.events["action"].tolist()[3] == "created+confirm"
        assert strict.events["n_foreign_model"].fillna(0).tolist() == [0.0] * 5
        assert strict.tables["matchers"]["model"].tolist() == ["model-a", "model-a", "lookup"]


def _log(rows):
    return pd.DataFrame([{"ts": (T0 + pd.Timedelta(minutes=j)).isoformat(), "session": "s1", **r}
                         for j, r in enumerate(rows)])


def test_plan_reuses_writes_across_params():
    log = _log([{"kind": "prediction_update", "matcher": TEXTS[0], "statement": TEXTS[4], "signal": "confirm"},
                {"kind": "prediction_update", "matcher": TEXTS[0], "statement": TEXTS[4], "signal": "soft"},
                {"kind": "message", "text": TEXTS[1]},
                {"kind": "prediction_update", "matcher": TEXTS[0], "statement": TEXTS[4], "signal": "confirm"}])
    plan = prepare(log, embedder=EMB)
    res = plan.run(ScoringParams())
    # (1 + 2.5) / (1 + 0.25 + 5) = 0.56; the reply prints confidence then counts
    assert res.nudges["stored_confidence"].iloc[0] == pytest.approx(3.5 / 6.25)
    assert res.events["reply"].iloc[1] == '[soft] "text number 04" confidence=0.56 (1/0.25)'
    assert res.events["forecast"].tolist()[:2] == [0.5, pytest.approx(3.5 / 6)]
    res2 = plan.run(ScoringParams(k=1.0, p0=0.2, soft_weight=1.0))
    assert res2.events["reply"].iloc[1] == '[soft] "text number 04" confidence=0.40 (1/1)'
    assert res2.tables["items"]["disconfirm_count"].tolist() == [1.0]
    with pytest.raises(ParamsError, match="dedup_cosine"):
        plan.run(ScoringParams(dedup_cosine=0.9))


def test_regimes_and_texts_literal():
    rows = [{"kind": "prediction_update", "matcher": TEXTS[0], "statement": TEXTS[4], "signal": "confirm"}] * 3
    rows += [{"kind": "message", "text": TEXTS[0]}, {"kind": "message", "text": "short"},
             {"kind": "message", "text": TEXTS[7]}, {"kind": "prediction_query", "text": TEXTS[7]}]
    res = run(_log(rows), embedder=EMB)
    ev = res.events
    # c = 3: (3 + 2.5) / 8 = 0.6875 < 0.70 → not strong
    assert ev["regime"].tolist()[3:6] == ["ambiguous", "skipped", "none"]
    assert ev["reply"].iloc[3] == ("[thatch] User decision model\n"
                                   "- [0.69 conf, 3 tests] When text number 00: you tend to text number 04")
    assert ev["reply"].iloc[6] == "No matching predictions found."
    strong = run(_log(rows), params=ScoringParams(strong_confidence=0.68), embedder=EMB)
    assert strong.events["regime"].iloc[3] == "strong"


def test_other_engine_rows_are_ignored_and_bad_args():
    log = _log([{"kind": "behavior_codify", "matcher": TEXTS[0], "statement": TEXTS[4]},
                {"kind": "message", "text": TEXTS[0]}])
    res = run(log, "prediction", embedder=EMB)
    assert res.events["action"].tolist() == ["ignored", None]
    assert res.events["regime"].iloc[1] == "none"
    with pytest.raises(InputError):
        run(log, "memory", embedder=EMB)
    with pytest.raises(InputError):
        run(log, embedder=EMB, path="fast")


def test_logged_embedding_is_used():
    log = _log([{"kind": "prediction_update", "matcher": TEXTS[0], "statement": TEXTS[4], "signal": "create"},
                {"kind": "message", "text": "not in the lookup table", "embedding": [1.0, 0.0, 0.0]}])
    for path in ("events", "vectorised"):
        res = run(log, embedder=EMB, path=path)
        assert res.nudges["statement"].tolist() == [TEXTS[4]]
        assert res.nudges["score"].tolist() == [0.5]


def test_initial_state_from_an_exported_store(tmp_path):
    from thatchlab.store import export_sqlite, import_sqlite

    eng = PredictionEngine(EMB, params=ScoringParams(k=2.0))
    eng.update(TEXTS[0], TEXTS[4], "confirm", now=T0 - pd.Timedelta(days=1))
    export_sqlite(tmp_path / "t.db", prediction=eng)
    contents = import_sqlite(tmp_path / "t.db", embedder=EMB)
    log = _log([{"kind": "message", "text": TEXTS[1]},
                {"kind": "prediction_update", "matcher": TEXTS[1], "statement": TEXTS[4], "signal": "soft"},
                {"kind": "message", "text": TEXTS[1]}])
    a = run(log, initial=contents, embedder=EMB, path="events")
    b = run(log, initial=contents, embedder=EMB, path="vectorised")
    assert_same(a, b)
    # the export stores production's confidence (K=5, P0=0.5), not the K=2 it was written under;
    # the soft signal then moves it under the replay's K=5
    assert b.nudges["stored_confidence"].tolist() == [pytest.approx(3.5 / 6), pytest.approx(3.5 / 6.25)]


def test_same_texts_in_many_stores_and_dedup_scopes():
    rows = []
    for store in (None, "global", "other", "third", "fourth"):
        rows.append({"kind": "prediction_update", "store": store, "matcher": TEXTS[0], "statement": TEXTS[4],
                     "signal": "confirm"})
        rows.append({"kind": "message", "store": store, "text": TEXTS[1]})
    rows.append({"kind": "prediction_delete", "store": "other", "statement": TEXTS[4]})
    rows.append({"kind": "message", "store": "other", "text": TEXTS[1]})
    for scope in ("store", "store+global"):
        params = ScoringParams(dedup_scope=scope)
        a = run(_log(rows), params=params, embedder=EMB, path="events")
        b = run(_log(rows), params=params, embedder=EMB, path="vectorised")
        assert_same(a, b)
        n_items = len(b.tables["items"])
        # store scope: one item per store, one deleted; store+global: "global" absorbs later stores
        assert n_items == (4 if scope == "store" else 2)


def test_write_pass_without_lookups_is_identical(monkeypatch):
    import thatchlab.replay._dedup_lookup as lookup

    rows = [{"kind": "prediction_update", "store": s, "matcher": TEXTS[j], "statement": TEXTS[(j * 5) % 12],
             "signal": "confirm"} for j, s in enumerate([None, "global", "other"] * 4)]
    rows += [{"kind": "message", "store": "other", "text": TEXTS[1]},
             {"kind": "prediction_delete", "store": "global", "statement": TEXTS[5]}]
    fast = run(_log(rows), embedder=EMB)
    monkeypatch.setattr(lookup, "MAX_LOOKUP", 0)
    slow = run(_log(rows), embedder=EMB)
    assert_same(fast, slow)
    assert_same(fast, run(_log(rows), embedder=EMB, path="events"))


def test_sample_log_with_the_real_model(real_embedder, repo_root):
    from thatchlab.logs import read_interaction_log

    log = read_interaction_log(repo_root / "data" / "interactions.jsonl")
    params = ScoringParams(k=2.0, soft_weight=0.3)
    a = run(log, "prediction", params, embedder=real_embedder, path="events")
    b = run(log, "prediction", params, embedder=real_embedder, path="vectorised")
    assert_same(a, b)
    assert_same_metrics(a.metrics, b.metrics)
    assert b.metrics["n_messages"] == 3000 and b.metrics["estimator"] == "direct"
