"""omi's belief releases: 17fecf7 (the default) against 4d5d5c5, rule by rule.

Sources (BasedHardware/omi):
- 4d5d5c5: backend/utils/memory/belief_evidence.py @4d5d5c534f7a7cef9cdcfe9217d407ed3891c3fd
- 17fecf7: backend/utils/memory/belief_evidence.py (git blob 17fecf7a), which imports
  backend/utils/memory/belief_source_policy.py @d3bbcc947d39b02c49b75b99171055af3120baf4
  (AUTHORITY, eligible_record, evidence_families, same_subject,
  independent_authoritative_evidence, original_evidence_time)
- views and proactive bar: backend/utils/memory/belief_model.py (git blob 275b9e2f:
  TEMPORAL_READ_VIEWS, temporal_view_allows_record, record_passes_proactive_bar)
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

from thatchlab.belief import (
    RELEASE_VIEWS,
    SOURCE_AUTHORITY,
    BeliefParams,
    BeliefStore,
    CallableJudge,
    OracleJudge,
    independent_evidence,
    original_evidence_time,
    same_subject,
    source_authority,
)
from thatchlab.core.errors import InputError, LogValidationError, ParamsError
from thatchlab.embed import LookupEmbedder
from thatchlab.logs import read_memory_log, validate_memory_log, write_memory_log
from thatchlab.replay import run_belief

T0 = pd.Timestamp("2026-01-01T00:00:00Z")
NEW = BeliefParams()                       # 17fecf7
OLD = BeliefParams(release="4d5d5c5")


def at(days: float) -> pd.Timestamp:
    return T0 + pd.Timedelta(days=days)


@pytest.fixture
def embedder():
    return LookupEmbedder({"prefers green tea": [1.0, 0.0, 0.0], "plans a trip to Oslo": [0.0, 1.0, 0.0],
                           "likes green tea a lot": [0.96, 0.28, 0.0],
                           "no longer drinks tea": [0.8, 0.0, 0.6]})


class Recorder:
    """A judge that records the rows it was shown and answers ``verdict``."""

    def __init__(self, verdict):
        self.verdict, self.calls = verdict, []

    def __call__(self, claim, neighbours):
        self.calls.append(list(neighbours["id"]))
        return self.verdict


def tea(params=NEW, **row):
    """One stored row about the user: 'prefers green tea', user_spoken (3), conversation c1."""
    s = BeliefStore(params=params)
    s.write({**dict(id="m1", text="prefers green tea", belief_class="preference", subject_scope="primary_user",
                    source_authority=3, evidence_families=["conversation:c1"], captured_at=T0,
                    confidence=0.9), **row})
    return s


def claim(cid="c1", text="likes green tea a lot", **kw):
    return pd.DataFrame([{**dict(id=cid, text=text, ts=at(30), subject_scope="primary_user",
                                 source_authority=3, evidence_families=["conversation:c2"]), **kw}])


# -- releases ---------------------------------------------------------------------------------

def test_release_names_views_and_the_pause_flag():
    assert (NEW.release, OLD.release, BeliefParams(release="latest").release) == ("17fecf7", "4d5d5c5", "17fecf7")
    assert RELEASE_VIEWS["17fecf7"] == ("released", "useful_now", "history", "all")
    assert OLD.views == ("useful_now", "history", "all")
    assert dict(SOURCE_AUTHORITY) == {"unknown": 0, "assistant": 0, "inferred": 1, "third_party": 1,
                                      "screen": 2, "user_spoken": 3, "user_written": 4, "user_direct": 5}
    with pytest.raises(ParamsError, match="no automation pause"):
        BeliefParams(release="4d5d5c5", automation_paused=True)
    with pytest.raises(ParamsError, match="automation_paused"):
        BeliefParams(automation_paused="yes")


# -- the source policy ------------------------------------------------------------------------

def test_authority_is_read_or_derived_by_the_policy_rule():
    # belief_source_policy.source_authority: user asserted -> user_direct (5)
    assert source_authority(dict(source_authority=2, user_asserted=True)) == 2   # stated wins
    assert source_authority(dict(user_asserted=True, authority=1)) == 5
    assert [source_authority(dict(authority=a)) for a in (2.7, 9, -1, None)] == [2, 5, 0, 0]
    assert source_authority(dict(user_asserted=pd.NA, authority=np.nan)) == 0


def test_independence_needs_subject_families_authority_and_eligibility():
    old = dict(subject_scope="primary_user", evidence_families=("conversation:c1",), source_authority=3)
    new = dict(old, evidence_families=("conversation:c2",))
    assert independent_evidence(new, old) == (True, "")
    assert independent_evidence(dict(new, evidence_families=("conversation:c1", "x")), old) == (
        False, "shared evidence family")
    assert independent_evidence(dict(new, evidence_families=()), old) == (False, "no evidence family")
    assert independent_evidence(new, dict(old, evidence_families=())) == (False, "no evidence family")
    assert independent_evidence(dict(new, source_authority=0), dict(old, source_authority=0)) == (
        False, "source authority 0")
    assert independent_evidence(dict(new, source_authority=2), old) == (False, "less authoritative (2 < 3)")
    assert independent_evidence(dict(new, source_authority=4), old) == (True, "")
    assert independent_evidence(dict(new, eligible=False), old) == (False, "not eligible")
    assert independent_evidence(new, dict(old, eligible=False)) == (False, "not eligible")
    # same_subject: two anonymous third parties are not one subject; entity ids decide when given
    third = dict(subject_scope="third_party")
    assert not same_subject(third, third)
    assert same_subject(dict(third, subject_entity_id="ana"), dict(third, subject_entity_id="ana"))
    assert not same_subject(dict(third, subject_entity_id="ana"), third)
    assert not same_subject(dict(subject_scope="primary_user"), third)


def test_original_evidence_time_is_the_evidence_then_the_last_corroboration():
    row = dict(captured_at=at(5), evidence_time=at(2), last_corroborated_at=None)
    assert original_evidence_time(row) == at(2)
    assert original_evidence_time(dict(row, last_corroborated_at=at(9))) == at(9)
    assert original_evidence_time(dict(row, evidence_time=None)) == at(5)


# -- admission: eligibility and candidates ------------------------------------------------------

def test_only_eligible_rows_reach_the_judge_and_they_take_their_top_k_place(embedder):
    s = tea()
    s.write(dict(id="m0", text="prefers green tea", belief_class="preference", subject_scope="primary_user",
                 source_authority=3, evidence_families=["conversation:c0"], captured_at=T0, eligible=False))
    judge = Recorder(("restated", "m1"))
    out = s.admit(claim(), judge, embedder, apply=False)
    assert judge.calls == [["m1"]]                        # m0 is ineligible: never shown
    assert out[["n_neighbours", "n_candidates", "consulted"]].values.tolist() == [[1, 1, True]]
    # the vector query's k nearest come first, then ineligible ones are dropped (k=1: m1 is 2nd)
    s2 = BeliefStore(params=NEW)
    s2.write(dict(s.row("m0")))
    s2.write(dict(s.row("m1")))
    out = s2.admit(claim(), judge, embedder, k=1, apply=False)
    assert out[["n_neighbours", "consulted", "event"]].values.tolist() == [[0, False, "unrelated"]]
    # an ineligible claim is a source production cannot use
    out = s.admit(claim(eligible=False), judge, embedder, apply=False)
    assert out[["consulted", "rationale"]].values.tolist() == [[False, "source unavailable (claim not eligible)"]]
    assert len(judge.calls) == 1
    # 4d5d5c5 knows no eligibility: both rows are shown
    old = BeliefStore(s.memories, params=OLD)
    judge_old = Recorder(("unrelated", None))
    old.admit(claim(), judge_old, embedder, apply=False)
    assert judge_old.calls == [["m1", "m0"]]


@pytest.mark.parametrize("families, consulted, reason", [
    (["conversation:c2"], True, None),                                         # disjoint
    (["conversation:c1", "conversation:c2"], False, "m1: shared evidence family"),
    ([], False, "m1: no evidence family"),                                     # empty
    (None, False, "m1: no evidence family"),                                   # absent = none
])
def test_candidates_need_disjoint_non_empty_families(embedder, families, consulted, reason):
    s = tea()
    judge = Recorder(("restated", "m1"))
    out = s.admit(claim(evidence_families=families), judge, embedder)
    assert out["consulted"].tolist() == [consulted]
    if consulted:
        assert out["action"].tolist() == ["restated"] and s.row("m1")["corroboration_count"] == 1
    else:
        assert judge.calls == [] and out["action"].tolist() == ["inserted"]
        assert out["rationale"].tolist() == [f"no independent authoritative evidence ({reason})"]
        assert s.row("m1")["corroboration_count"] == 0 and "c1" in s


def test_authority_order_decides_who_may_write(embedder):
    # 0 -> never a candidate; lower -> nothing written on the row (the claim is its own record);
    # equal -> applied
    for auth, consulted in ((0, False), (2, False), (3, True), (5, True)):
        s = tea()
        out = s.admit(claim(text="no longer drinks tea", source_authority=auth),
                      OracleJudge({"c1": ("contradicted", "m1")}), embedder)
        r = s.row("m1")
        if consulted:
            assert out["action"].tolist() == ["superseded"]
            assert (r["status"], r["superseded_by"], r["confidence"]) == ("superseded", "c1", 0.0)
        else:
            assert out["action"].tolist() == ["inserted"] and out["consulted"].tolist() == [False]
            assert (r["status"], r["confidence"]) == ("active", 0.9)             # nothing written
    # 4d5d5c5: the weaker contradiction still lowers truth (confidence 0, contradicted)
    s = tea(OLD, authority=3)
    s.admit(claim(text="no longer drinks tea", authority=2), OracleJudge({"c1": ("contradicted", "m1")}),
            embedder)
    assert (s.row("m1")["confidence"], s.row("m1")["status"]) == (0.0, "contradicted")


def test_judge_must_name_a_candidate(embedder):
    # 17fecf7: no target, or a target not among the candidates, is unrelated: the claim is stored
    for verdict in ("restated", ("restated", "m9")):
        s = tea()
        out = s.admit(claim(), CallableJudge(lambda text, nb, v=verdict: v), embedder)
        assert out[["event", "target_memory_id", "rationale", "action"]].values.tolist() == [
            ["unrelated", None, "no target", "inserted"]]
        assert s.row("m1")["corroboration_count"] == 0 and "c1" in s
    # 4d5d5c5: the top neighbour gets it; a row not shown is an error
    s = tea(OLD)
    out = s.admit(claim(), CallableJudge(lambda text, nb: "restated"), embedder)
    assert out[["event", "target_memory_id", "action"]].values.tolist() == [["restated", "m1", "restated"]]
    with pytest.raises(InputError, match="not among the neighbours"):
        tea(OLD).admit(claim(), CallableJudge(lambda text, nb: ("restated", "m9")), embedder)


def test_judge_sees_candidates_with_authority_and_original_time(embedder):
    seen = []

    def judge(text, nb):
        seen.append({k: nb[0][k] for k in ("id", "source_authority", "evidence_families", "as_of")})
        return "unrelated"

    s = tea(source_authority=None, authority=2.5, evidence_time=at(-3))
    with pytest.warns(UserWarning, match=r"1 row\(s\) carry no source_authority \('m1'\)"):
        s.admit(claim(), CallableJudge(judge), embedder)
    assert seen == [dict(id="m1", source_authority=2, evidence_families=["conversation:c1"], as_of=at(-3))]


def test_event_time_is_the_later_original_evidence_time(embedder):
    # delayed evidence: the claim arrives on day 30 but was captured on day 12
    s = tea(evidence_time=at(10))
    s.admit(claim(evidence_time=at(12)), OracleJudge({"c1": ("restated", "m1")}), embedder)
    assert s.row("m1")["last_corroborated_at"] == at(12)
    # older evidence than the row's: the row's time (day 10) wins
    s = tea(evidence_time=at(10))
    s.admit(claim(evidence_time=at(4)), OracleJudge({"c1": ("restated", "m1")}), embedder)
    assert s.row("m1")["last_corroborated_at"] == at(10)
    # no evidence_time: the claim's ts; resolved sets valid_to the same way
    s = tea()
    s.admit(claim(), OracleJudge({"c1": ("resolved", "m1")}), embedder)
    assert s.row("m1")["valid_to"] == at(30)
    # 4d5d5c5: the claim's ts, whatever the evidence says
    s = tea(OLD, evidence_time=at(10))
    s.admit(claim(evidence_time=at(12)), OracleJudge({"c1": ("restated", "m1")}), embedder)
    assert s.row("m1")["last_corroborated_at"] == at(30)


def test_automation_pause_keeps_the_claim_and_asks_no_judge(embedder):
    s = tea(BeliefParams(automation_paused=True))
    judge = Recorder(("restated", "m1"))
    out = s.admit(claim(), judge, embedder)
    assert judge.calls == []
    assert out[["consulted", "event", "rationale", "action"]].values.tolist() == [
        [False, "unrelated", "automation paused", "inserted"]]
    # judged events write nothing while paused; the owner's review and delete go on
    res = s.apply([dict(ts=at(31), kind="restated", memory_id="x", target_memory_id="m1", source_authority=5),
                   dict(ts=at(32), kind="review", memory_id="m1", confirmed=True)])
    assert res["action"].tolist() == ["nothing", "restated"]
    assert s.row("m1")["last_corroborated_at"] == at(32)


# -- the store's logged events --------------------------------------------------------------------

def test_logged_events_from_weaker_sources_write_nothing():
    s = tea(authority=2)
    before = s.row("m1")
    with pytest.warns(UserWarning, match="derived by omi's source policy"):
        out = s.apply([dict(ts=at(1), kind="contradicted", memory_id="w", target_memory_id="m1", authority=1),
                       dict(ts=at(2), kind="restated", memory_id="w2", target_memory_id="m1", authority=2),
                       dict(ts=at(3), kind="resolved", memory_id="w3", target_memory_id="m1")])
    assert out["action"].tolist() == ["nothing", "nothing", "nothing"] and s.row("m1") == before
    out = s.apply(dict(ts=at(4), kind="restated", memory_id="e", target_memory_id="m1", source_authority=3,
                       evidence_time=at(-1)))
    assert out["action"].tolist() == ["restated"]
    assert s.row("m1")["last_corroborated_at"] == T0        # the row's own evidence time is later
    out = s.apply(dict(ts=at(5), kind="contradicted", memory_id="e2", target_memory_id="m1",
                       source_authority=4))
    assert out["action"].tolist() == ["superseded"] and s.row("m1")["superseded_by"] == "e2"


def test_rows_and_claims_are_checked(embedder):
    s = BeliefStore(params=NEW)
    for bad, match in ((dict(source_authority=6), "source_authority"),
                       (dict(source_authority=2.5), "source_authority"),
                       (dict(evidence_families="conv"), "evidence_families"),
                       (dict(evidence_families=["a", ""]), "evidence_families"),
                       (dict(eligible="maybe"), "eligible"),
                       (dict(evidence_time="2026-01-01T00:00:00"), "evidence_time")):
        with pytest.raises(Exception, match=match):
            s.write(dict(id="x", text="t", captured_at=T0, **bad))
    s.write(dict(id="x", text="t", captured_at=T0, evidence_families='["b", "a", "a"]', source_authority=4.0))
    assert (s.row("x")["evidence_families"], s.row("x")["source_authority"]) == (("a", "b"), 4)
    with pytest.raises(InputError, match=r"claims row 0, column 'source_authority'"):
        tea().admit(claim(source_authority=7), Recorder("unrelated"), embedder)


# -- views and the proactive bar ------------------------------------------------------------------

def view_store(params=NEW):
    rows = [
        dict(id="cur", text="a", belief_class="preference", captured_at=at(0)),
        dict(id="fad", text="b", belief_class="episodic", captured_at=at(-10)),
        dict(id="his", text="c", belief_class="episodic", captured_at=at(-30)),
        dict(id="uncl", text="d", captured_at=at(0)),
        dict(id="sup", text="f", belief_class="identity", status="superseded", superseded_by="cur",
             captured_at=at(0)),
        dict(id="con", text="g", belief_class="identity", status="contradicted", captured_at=at(0)),
        dict(id="arc", text="h", belief_class="identity", tier="archive", captured_at=at(0)),
        dict(id="late", text="i", belief_class="episodic", captured_at=at(-30), evidence_time=at(-1)),
    ]
    return BeliefStore(pd.DataFrame(rows), params=params)


def test_views_of_17fecf7():
    s = view_store()
    ids = {w: set(s.view(T0, w)["id"]) for w in ("released", "useful_now", "history", "all")}
    # superseded rows stay in useful_now while current (production's rule does not look at it)
    assert ids["useful_now"] == {"cur", "fad", "sup", "late"}
    assert ids["history"] == {"fad", "his", "uncl", "sup", "con"}
    assert ids["released"] == ids["all"] == {"cur", "fad", "his", "uncl", "sup", "con", "late"}
    assert "arc" in set(s.view(T0, "all", include_archive=True)["id"])
    assert "arc" not in set(s.view(T0, "useful_now", include_archive=True)["id"])
    # the clock: the original evidence time (day -1) when never corroborated
    v = s.view(T0, "all").set_index("id")
    assert v.loc["late", "as_of"] == at(-1) and v.loc["late", "band"] == "current"
    old = view_store(OLD)
    assert set(old.view(T0, "useful_now")["id"]) == {"cur", "fad", "arc"}
    assert old.view(T0, "all").set_index("id").loc["late", "as_of"] == at(-30)
    with pytest.raises(InputError, match="released"):
        old.view(T0, "released")


def test_proactive_bar_needs_owner_authorship_user_subject_and_truth():
    rows = [dict(id="ok", text="a", belief_class="preference", subject_scope="primary_user",
                 source_authority=3, captured_at=T0),
            dict(id="screen", text="b", belief_class="preference", subject_scope="primary_user",
                 source_authority=2, captured_at=T0),
            dict(id="other", text="c", belief_class="preference", subject_scope="third_party",
                 source_authority=5, captured_at=T0),
            dict(id="zero", text="d", belief_class="preference", subject_scope="primary_user",
                 source_authority=5, confidence=0.0, captured_at=T0),
            dict(id="uncl", text="e", subject_scope="primary_user", source_authority=5, captured_at=T0),
            dict(id="fading", text="f", belief_class="episodic", subject_scope="primary_user",
                 source_authority=5, captured_at=at(-7)),
            dict(id="mine", text="g", belief_class="state", subject_scope="primary_user",
                 user_asserted=True, captured_at=T0)]
    s = BeliefStore(pd.DataFrame(rows))
    with pytest.warns(UserWarning, match=r"\('mine'\)"):
        bar = s.proactive(T0)
    assert bar.to_dict() == {"ok": True, "screen": False, "other": False, "zero": False, "uncl": False,
                             "fading": False, "mine": True}
    with pytest.raises(InputError, match="17fecf7"):
        BeliefStore(params=OLD).proactive(T0)


# -- the memory log and replays --------------------------------------------------------------------

def policy_log():
    return pd.DataFrame({
        "ts": [at(0), at(5), at(6), at(20)], "memory_id": ["m1", "c1", "c2", "m1"],
        "kind": ["write", "restated", "contradicted", "read"], "text": ["likes tea", None, None, None],
        "belief_class": ["preference", None, None, None], "subject_scope": ["primary_user"] + [None] * 3,
        "target_memory_id": [None, "m1", "m1", None], "source_authority": [4, 4, 3, None],
        "evidence_families": [["conversation:a"], ["conversation:b"], None, None],
        "evidence_time": [None, at(3), None, None], "eligible": [True, None, None, None],
        "still_true": [None, None, None, True]})


def test_memory_log_carries_the_policy_columns(tmp_path):
    log = validate_memory_log(policy_log())
    assert log["source_authority"].tolist() == [4, 4, 3, pd.NA]
    assert log["evidence_families"].tolist() == [["conversation:a"], ["conversation:b"], None, None]
    for suffix in (".jsonl", ".csv", ".parquet"):
        back = read_memory_log(write_memory_log(log, tmp_path / f"p{suffix}"))
        pd.testing.assert_frame_equal(back, log, check_dtype=False)
    bad = policy_log()
    bad.loc[1, "source_authority"] = 6
    with pytest.raises(LogValidationError, match=r"row 1, column 'source_authority'.*0 to 5"):
        validate_memory_log(bad)
    bad = policy_log()
    bad.loc[0, "evidence_families"] = "conversation:a"
    with pytest.raises(LogValidationError, match="column 'evidence_families'"):
        validate_memory_log(bad)


def test_logs_without_the_policy_columns_are_written_as_before(tmp_path):
    log = policy_log().drop(columns=["source_authority", "evidence_families", "evidence_time", "eligible"])
    text = write_memory_log(log, tmp_path / "l.jsonl").read_text()
    assert "source_authority" not in text and "evidence_families" not in text


def test_replay_follows_the_release():
    r = run_belief(policy_log())
    # restated at the source's evidence time (day 3); the weaker contradiction (3 < 4) writes nothing
    assert r.actions["action"].tolist() == ["restated", "nothing"]
    row = r.state.row("m1")
    assert (row["last_corroborated_at"], row["status"], row["evidence_families"]) == (
        at(3), "active", ("conversation:a",))
    assert r.events["as_of"].tolist() == [at(3)]
    old = run_belief(policy_log(), OLD)
    assert old.actions["action"].tolist() == ["restated", "superseded"]
    assert old.events["as_of"].tolist() == [at(5)]


def test_replay_warns_once_when_authority_is_derived():
    log = policy_log().drop(columns=["source_authority"])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        r = run_belief(log)
    msgs = [str(w.message) for w in caught if "source_authority" in str(w.message)]
    assert len(msgs) == 1 and msgs[0].startswith("run_belief: 3 row(s) carry no source_authority")
    assert r.actions["action"].tolist() == ["restated", "superseded"]     # 0 >= 0: equal applies


def test_a_top_authority_source_needs_no_derived_comparison(repo_root):
    # 5 (user_direct) is at least any row, so the row's own authority is not derived (no warning):
    # the omi adapter's inferred events (source_authority 5) replay as production applied them
    from thatchlab.logs import ingest

    omi = ingest.omi_memories(f"{repo_root}/data/ingest/omi_memories.json").log
    assert set(omi.loc[omi["kind"].isin(["restated", "contradicted"]), "source_authority"]) == {5}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        new = run_belief(omi)
    old = run_belief(omi, OLD)
    assert new.actions["action"].tolist() == old.actions["action"].tolist() == [
        "restated", "restated", "restated", "superseded", "restated"]
    assert new.events["currency"].tolist() == old.events["currency"].tolist()
    with pytest.raises(InputError, match="archive"):
        BeliefStore(params=OLD).view(T0, "all", include_archive=True)
