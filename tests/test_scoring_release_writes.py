"""The write side of thatch releases: update/codify/feedback/delete/list/mark-checked per release.

Release ``07ecf87`` follows sysread/thatch ``src/tool-defs.ts`` (the stored copy that defines
``resolveStore`` and ``dedupScanStores``: the release table names @2ed97f2a) and
``src/scoring-engine.ts`` @0182ac19 (``findNearestItem`` over several stores, nearest first,
the earlier row on ties); the pair verdicts follow ``src/prediction.ts`` (the copy with
``findPredictionDuplicates`` / ``markPairChecked``, the release names @97212df2) and
``tests/qa/auto/uc-113-prediction-dedup.ts`` (the ``[marked duplicate]`` reply).
``v0.1.30`` (tag v0.1.30, 2c35704) writes into the target store only: thatchlab's replies there
are unchanged.
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.test_replay_scoring import assert_same
from thatchlab.core.errors import LogValidationError, ParamsError
from thatchlab.core.params import ScoringParams
from thatchlab.embed import LookupEmbedder
from thatchlab.logs import validate_interaction_log
from thatchlab.replay import prepare, run
from thatchlab.scoring import BehaviorEngine, PredictionEngine, deterministic_id

T0 = "2026-10-01T09:00:00Z"
T1 = "2026-10-01T09:05:00Z"
OLD, NEW = ScoringParams(release="v0.1.30"), ScoringParams(release="07ecf87")

EMB = LookupEmbedder({
    "writing tests": [1.0, 0.0, 0.0, 0.0],
    "adding unit tests": [0.98, 0.05, 0.0, 0.0],   # cosine ≈ 0.999 with "writing tests"
    "choosing a framework": [0.0, 0.0, 1.0, 0.0],
    "use pytest": [0.0, 1.0, 0.0, 0.0],
    "prefer pytest": [0.0, 0.99, 0.05, 0.0],       # a near-identical wording
    "tabs for indentation": [0.0, 0.0, 0.0, 1.0],
})


def _pred(params, project="repo"):
    return PredictionEngine(EMB, params=params, project_store=project)


# ----------------------------------------------------------------------- update / codify
def test_update_writes_where_the_item_lives_07ecf87():
    """tool-defs.ts prediction_update: existing = findNearestPrediction(dedupScanStores(store));
    home = existing.store; the matcher dedup and creation run in home; the reply tags `in home`."""
    eng = _pred(NEW)
    assert eng.update("writing tests", "use pytest", "create", store="global", now=T0).text == \
        '[created] global :: "use pytest" for "writing tests"'
    r = eng.update("adding unit tests", "prefer pytest", "confirm", now=T1)
    assert r.text == '[confirm in global] "use pytest" confidence=0.58 (1/0)'
    assert r.store == "global" and r.result.action == "applied" and not r.result.matcher_created
    # the matcher dedup ran in global: "adding unit tests" found "writing tests" there
    assert eng.tables["matchers"][["store", "description"]].values.tolist() == [["global", "writing tests"]]
    r = eng.update("choosing a framework", "prefer pytest", "create", now=T1)
    assert r.text == '[linked in global] "use pytest" for "choosing a framework" confidence=0.58 (1/0)'
    # a new matcher is created in global too, with a global id (uuid5 over the store written into)
    m = eng.tables["matchers"]
    assert m["store"].tolist() == ["global", "global"]
    assert m["id"].iloc[1] == deterministic_id("prediction_matchers", "global", "choosing a framework", 0)
    assert eng.tables["items"]["id"].tolist() == [deterministic_id("predictions", "global", "use pytest", 0)]
    assert len(eng.tables["edges"]) == 2 and eng.state.stores == ("global",)


def test_update_v0130_writes_into_the_target_store():
    """v0.1.30: the item dedup searches the target store only; replies carry no store."""
    eng = _pred(OLD)
    eng.update("writing tests", "use pytest", "create", store="global", now=T0)
    r = eng.update("adding unit tests", "prefer pytest", "confirm", now=T1)
    assert r.text == '[created + confirm] "prefer pytest" confidence=0.58 (1/0)'
    assert eng.tables["items"]["store"].tolist() == ["global", "repo"]
    assert eng.tables["matchers"]["store"].tolist() == ["global", "repo"]
    r = eng.update("writing tests", "prefer pytest", "confirm", now=T1)
    assert r.text == '[confirm] "prefer pytest" confidence=0.64 (2/0)'


def test_project_item_is_found_first_and_replies_without_a_store_07ecf87():
    eng = _pred(NEW)
    eng.update("writing tests", "use pytest", "create", now=T0)
    r = eng.update("writing tests", "prefer pytest", "soft", now=T1)
    assert r.text == '[soft] "use pytest" confidence=0.48 (0/0.25)'
    # from global, only global is searched: a project copy is not seen
    r = eng.update("writing tests", "use pytest", "create", store="global", now=T1)
    assert r.text == '[created] global :: "use pytest" for "writing tests"'
    assert eng.tables["items"]["store"].tolist() == ["repo", "global"]


def test_the_nearer_copy_wins_across_stores_07ecf87():
    """findNearestItem scans the stores' rows together: the highest cosine wins wherever it lives."""
    eng = _pred(NEW)
    eng.update("writing tests", "prefer pytest", "create", now=T0)
    eng.update("writing tests", "use pytest", "create", store="global", now=T0)
    assert eng.update("writing tests", "use pytest", "confirm", now=T1).text == \
        '[confirm in global] "use pytest" confidence=0.58 (1/0)'


def test_unknown_store_means_global_07ecf87():
    """tool-defs.ts resolveStore: a store called "unknown" (detectRepo's fallback) is global."""
    eng = _pred(NEW, project="unknown")
    assert eng.update("writing tests", "use pytest", "create", now=T0).text == \
        '[created] global :: "use pytest" for "writing tests"'
    assert eng.update("writing tests", "use pytest", "confirm", store="unknown", now=T1).text == \
        '[confirm] "use pytest" confidence=0.58 (1/0)'
    assert eng.delete("use pytest").text == '[deleted] "use pytest" from "global"'
    old = _pred(OLD, project="unknown")
    assert old.update("writing tests", "use pytest", "create", now=T0).text == \
        '[created] unknown :: "use pytest" for "writing tests"'


def test_codify_links_in_global_07ecf87():
    """tool-defs.ts behavior_codify: the same home rule; [linked in global] with the counts."""
    eng = BehaviorEngine(EMB, params=NEW, project_store="repo")
    eng.codify("writing tests", "use pytest", "seeded", store="global", now=T0)
    r = eng.codify("choosing a framework", "prefer pytest", "again", now=T1)
    assert r.text == '[linked in global] "use pytest" for "choosing a framework" confidence=0.50 (0/0)'
    assert eng.tables["matchers"]["store"].tolist() == ["global", "global"]
    assert eng.codify("writing tests", "tabs for indentation", "new", store="unknown", now=T1).text == \
        '[codified] global :: "tabs for indentation" for "writing tests"'
    old = BehaviorEngine(EMB, params=OLD, project_store="repo")
    old.codify("writing tests", "use pytest", "seeded", store="global", now=T0)
    assert old.codify("choosing a framework", "prefer pytest", "again", now=T1).text == \
        '[codified] repo :: "prefer pytest" for "choosing a framework"'


def test_feedback_and_delete_resolve_the_store():
    """07ecf87's feedback and delete search the resolved store (unknown → global)."""
    eng = BehaviorEngine(EMB, params=NEW, project_store="repo")
    eng.codify("writing tests", "use pytest", None, store="global", now=T0)
    assert eng.feedback("use pytest", True, "helped", store="unknown", now=T1).text == \
        '[confirm] "use pytest" confidence=0.58 (1/0)'
    assert eng.feedback("use pytest", False, "", now=T1).text == 'No behavior matching "use pytest" found in "repo".'
    assert eng.delete("use pytest", store="unknown").text == '[deleted] "use pytest" from "global"'
    old = BehaviorEngine(EMB, params=OLD, project_store="repo")
    old.codify("writing tests", "use pytest", None, store="global", now=T0)
    assert old.feedback("use pytest", True, "", store="unknown", now=T1).text == \
        'No behavior matching "use pytest" found in "unknown".'


# ----------------------------------------------------------------------- list
def test_list_defaults_to_project_and_global_07ecf87():
    """tool-defs.ts prediction_list / behavior_list: stores = [defaultStore, "global"] unless named;
    each store's items by confidence; the empty reply names every store listed."""
    eng = _pred(NEW)
    assert eng.list().text == 'No predictions in "repo", "global".'
    assert eng.list("other").text == 'No predictions in "other".'
    eng.update("writing tests", "use pytest", "confirm", store="global", now=T0)
    eng.update("choosing a framework", "tabs for indentation", "create", now=T0)
    assert eng.list().text == (
        "[0.50 conf, 0 tests] tabs for indentation\n  matchers:\n    - \"choosing a framework\" (w:1)\n"
        "  provenance:\n    - [2026-10-01] create: \n\n"
        "[0.58 conf, 1 tests] use pytest\n  matchers:\n    - \"writing tests\" (w:1)\n"
        "  provenance:\n    - [2026-10-01] confirm: ")
    assert eng.list().store is None and eng.list("repo").store == "repo"
    old = _pred(OLD)
    assert old.list().text == 'No predictions in "repo".'
    beh = BehaviorEngine(EMB, params=NEW, project_store="global")
    beh.codify("writing tests", "use pytest", None, now=T0)
    # production lists [defaultStore, "global"] as named: a project store called global twice
    assert beh.list().text.count("use pytest") == 2


# ----------------------------------------------------------------------- pair verdicts
def test_mark_checked_07ecf87():
    """prediction.ts markPairChecked: ids sorted, upsert on (store, id_a, id_b), checked_at to the
    second; uc-113 pins the reply's [marked duplicate]."""
    eng = _pred(NEW)
    r = eng.mark_checked("p-b", "p-a", "duplicate", now="2026-10-02T08:00:00.900Z")
    assert (r.text, r.action, r.store, r.result.action) == ("[marked duplicate]", "marked", "repo", "marked")
    eng.mark_checked("p-c", "p-a", "distinct", store="unknown", now="2026-10-02T08:00:01Z")
    eng.mark_checked("p-a", "p-b", "distinct", now="2026-10-02T09:00:00Z")
    assert eng.dedup_pairs.values.tolist() == [["repo", "p-a", "p-b", "distinct", "2026-10-02T09:00:00Z"],
                                               ["global", "p-a", "p-c", "distinct", "2026-10-02T08:00:01Z"]]
    back = PredictionEngine.from_tables({**eng.tables, "dedup_pairs": eng.dedup_pairs}, embedder=EMB, params=NEW)
    pd.testing.assert_frame_equal(back.dedup_pairs, eng.dedup_pairs)
    with pytest.raises(ParamsError, match="v0.1.30"):
        _pred(OLD).mark_checked("p-a", "p-b", "duplicate", now=T0)


# ----------------------------------------------------------------------- replay
def _log(rows):
    return pd.DataFrame([{"ts": pd.Timestamp(T0) + pd.Timedelta(seconds=j), "session": "s1", **r}
                         for j, r in enumerate(rows)])


def test_replay_records_writes_into_global_and_verdicts():
    rows = [{"kind": "prediction_update", "store": "global", "matcher": "writing tests",
             "statement": "use pytest", "signal": "create"},
            {"kind": "prediction_update", "matcher": "choosing a framework", "statement": "prefer pytest",
             "signal": "confirm"},
            {"kind": "prediction_mark_checked", "args": json.dumps({"id_a": "x", "id_b": "y", "status": "distinct"})},
            {"kind": "message", "text": "choosing a framework"},
            {"kind": "prediction_update", "store": "unknown", "matcher": "writing tests",
             "statement": "use pytest", "signal": "disconfirm"}]
    for params, replies, actions in (
            (NEW, ['[created] global :: "use pytest" for "writing tests"',
                   '[confirm in global] "use pytest" confidence=0.58 (1/0)', "[marked distinct]", None,
                   '[disconfirm] "use pytest" confidence=0.50 (1/1)'],
             ["created", "confirm", "marked", None, "disconfirm"]),
            (OLD, ['[created] global :: "use pytest" for "writing tests"',
                   '[created + confirm] "prefer pytest" confidence=0.58 (1/0)', None, None,
                   '[created + disconfirm] "use pytest" confidence=0.42 (0/1)'],
             ["created", "created+confirm", "ignored", None, "created+disconfirm"])):
        a = run(_log(rows), params=params, embedder=EMB, path="events")
        b = run(_log(rows), params=params, embedder=EMB, path="vectorised")
        assert_same(a, b)
        assert a.events["reply"].tolist()[:3] + a.events["reply"].tolist()[4:] == replies[:3] + replies[4:]
        assert a.events["action"].tolist() == actions
    plan = prepare(_log(rows), embedder=EMB, release="07ecf87")
    # the matcher created by the project-store event lives in global, with the event's log position
    assert plan.matchers.store.tolist() == ["global", "global"]
    assert plan.matchers.created_at.tolist() == [0, 1]
    assert plan.items.store.tolist() == ["global"]
    assert plan.history.position.tolist() == [0, 1, 4]


def test_replay_lists_the_release_default():
    rows = [{"kind": "prediction_update", "store": "global", "matcher": "writing tests",
             "statement": "use pytest", "signal": "create"},
            {"kind": "prediction_list"}, {"kind": "prediction_list", "store": "repo"}]
    new = run(_log(rows), params=NEW, embedder=EMB, initial=_pred(NEW))
    assert new.path == "events"
    assert new.events["reply"].tolist()[1:] == [
        '[0.50 conf, 0 tests] use pytest\n  matchers:\n    - "writing tests" (w:1)\n'
        '  provenance:\n    - [2026-10-01] create: ', 'No predictions in "repo".']
    old = run(_log(rows), params=OLD, embedder=EMB, initial=_pred(OLD))
    assert old.events["reply"].tolist()[1:] == ['No predictions in "repo".'] * 2


def test_mark_checked_rows_need_their_args():
    bad = _log([{"kind": "prediction_mark_checked", "args": json.dumps({"id_a": "x", "status": "distinct"})}])
    with pytest.raises(LogValidationError, match="id_a, id_b and status"):
        validate_interaction_log(bad)
    with pytest.raises(LogValidationError, match="args"):
        validate_interaction_log(_log([{"kind": "prediction_mark_checked"}]))


# Random worlds: few 3-d integer vectors (exact ties, dedup collisions), four stores.
VECS = [[1, 0, 0], [1, 0, 0], [2, 1, 0], [1, 1, 0], [0, 1, 0], [0, 1, 1], [1, 1, 1], [0, 0, 1],
        [3, 1, 1], [1, 2, 0]]
TEXTS = [f"world text {j}" for j in range(len(VECS))]
WORLD = LookupEmbedder(dict(zip(TEXTS, VECS)))
STORES = [None, "global", "other", "unknown"]


@st.composite
def world_logs(draw, engine):
    rows = []
    kinds = (["message", "prediction_update", "prediction_update", "prediction_query", "prediction_delete",
              "prediction_mark_checked"] if engine == "prediction" else
             ["message", "behavior_codify", "behavior_codify", "behavior_feedback", "behavior_delete"])
    text = st.sampled_from(TEXTS)
    for _ in range(draw(st.integers(1, 30))):
        kind = draw(st.sampled_from(kinds))
        row = {"kind": kind, "store": draw(st.sampled_from(STORES))}
        if kind in ("message", "prediction_query"):
            row["text"] = draw(text)
        elif kind in ("prediction_update", "behavior_codify"):
            row["matcher"], row["statement"] = draw(text), draw(text)
            if kind == "prediction_update":
                row["signal"] = draw(st.sampled_from(["confirm", "disconfirm", "soft", "create"]))
        elif kind == "prediction_mark_checked":
            row["args"] = json.dumps({"id_a": draw(text), "id_b": draw(text), "status": "distinct"})
        elif kind == "behavior_feedback":
            row["statement"], row["relevant"] = draw(text), draw(st.booleans())
        else:
            row["statement"] = draw(text)
        rows.append(row)
    return _log(rows)


def _initial(engine, params):
    eng = (PredictionEngine if engine == "prediction" else BehaviorEngine)(WORLD, params=params)
    writes = eng.update if engine == "prediction" else eng.codify
    extra = ("confirm",) if engine == "prediction" else ()
    writes(TEXTS[0], TEXTS[4], *extra, store="global", now="2026-09-30T00:00:00Z")
    writes(TEXTS[3], TEXTS[7], *extra, now="2026-09-30T00:00:00Z")
    return eng


@pytest.mark.parametrize("engine", ["prediction", "behavior"])
@pytest.mark.parametrize("release", ["v0.1.30", "07ecf87"])
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                 HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_paths_identical_under_both_releases(engine, release, data):
    log = data.draw(world_logs(engine))
    params = ScoringParams(release=release, k=data.draw(st.sampled_from([5.0, 2.0])),
                           threshold=data.draw(st.sampled_from([0.6, 0.9])))
    initial = _initial(engine, params) if data.draw(st.booleans()) else None
    a = run(log, engine, params, embedder=WORLD, initial=initial, path="events")
    b = run(log, engine, params, embedder=WORLD, initial=initial, path="vectorised")
    assert_same(a, b)
    stores = set(b.tables["items"]["store"]) | set(b.tables["matchers"]["store"])
    if release == "07ecf87":
        assert "unknown" not in stores   # an "unknown" store writes into global
    kinds = log["kind"].to_numpy(object)
    marked = b.events["action"].to_numpy(object)[kinds == "prediction_mark_checked"]
    assert set(marked) <= ({"marked"} if release == "07ecf87" else {"ignored"})
    assert np.isin(b.events["action"].dropna().unique(),
                   ["created", "created+confirm", "created+disconfirm", "created+soft", "codified", "linked",
                    "confirm", "disconfirm", "soft", "deleted", "not_found", "query", "marked", "ignored"]).all()
