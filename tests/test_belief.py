"""Belief model (seed 001): currency, bands, priors, evidence events, views, admission."""

from __future__ import annotations

import datetime as dt

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import thatchlab.belief as belief
from thatchlab.belief import (
    BELIEF_PRIORS,
    BeliefParams,
    BeliefStore,
    CallableJudge,
    OracleJudge,
    SimilarityJudge,
    compute_currency,
    currency_band,
    currency_reference,
    derive_half_life_days,
)
from thatchlab.core.errors import InputError, ParamsError, TimeError
from thatchlab.embed import LookupEmbedder

T0 = pd.Timestamp("2026-01-01T00:00:00Z")
UTC = dt.timezone.utc


def at(days: float) -> pd.Timestamp:
    return T0 + pd.Timedelta(days=days)


#: The evidence, view and admission tests below pin omi's release 4d5d5c5 (BasedHardware/omi
#: backend/utils/memory/belief_evidence.py @4d5d5c53), the rules they were written for; release
#: 17fecf7 (the default) is covered in tests/test_belief_releases.py.
OLD = "4d5d5c5"


# -- currency -------------------------------------------------------------------------------

@pytest.mark.parametrize("age, hl, expected", [
    (0, 30, 1.0), (30, 30, 0.5), (60, 30, 0.25), (90, 30, 0.125), (7, 7, 0.5),
    (-5, 30, 1.0),            # negative age → treated as 0
    (1000, None, 1.0),        # no half-life → no decay
])
def test_currency_literal_values(age, hl, expected):
    assert compute_currency(T0, at(age), hl) == expected


def test_currency_valid_to_is_inclusive_and_beats_decay():
    vt = at(10)
    assert compute_currency(T0, vt, 1, valid_to=vt) == 1.0            # now == valid_to
    assert compute_currency(T0, at(9.99), 1, valid_to=vt) == 1.0      # no decay before it
    assert compute_currency(T0, vt + pd.Timedelta(microseconds=1), None, valid_to=vt) == 0.0
    assert compute_currency(None, vt + pd.Timedelta(days=1), 30, valid_to=vt) == 0.0


def test_currency_missing_clock_is_none_only_when_needed():
    assert compute_currency(None, T0, 30) is None
    assert compute_currency(None, T0, None) == 1.0


@pytest.mark.parametrize("bad", [0, -1, -0.5])
def test_currency_rejects_nonpositive_half_life(bad):
    with pytest.raises(InputError, match="half_life_days"):
        compute_currency(T0, at(1), bad)
    with pytest.raises(InputError, match="position 1"):
        compute_currency(pd.Series([T0, T0]), at(1), [30, bad])


def test_currency_rejects_naive_datetimes():
    naive = dt.datetime(2026, 1, 1)
    with pytest.raises(TimeError):
        compute_currency(naive, at(1), 30)
    with pytest.raises(TimeError):
        compute_currency(T0, naive, 30)
    with pytest.raises(TimeError):
        compute_currency(T0, at(1), 30, valid_to="2026-02-01T00:00:00")
    with pytest.raises(TimeError):
        compute_currency(np.array(["2026-01-01"], dtype="datetime64[ns]"), at(1), 30)
    with pytest.raises(TimeError):
        compute_currency(pd.Series(pd.to_datetime(["2026-01-01"])), at(1), 30)


def test_currency_columns_keep_the_index_and_nan_means_none():
    last = pd.Series([T0, T0, pd.NaT, T0], index=[10, 11, 12, 13])
    hl = pd.Series([30.0, np.nan, 30.0, 7.0], index=last.index)
    vt = pd.Series([pd.NaT, pd.NaT, pd.NaT, at(30)], index=last.index)
    out = compute_currency(last, at(30), hl, vt)
    assert list(out.index) == [10, 11, 12, 13]
    assert out.iloc[0] == 0.5 and out.iloc[1] == 1.0 and np.isnan(out.iloc[2]) and out.iloc[3] == 1.0


@pytest.mark.parametrize("unit", ["ns", "us", "s"])
def test_currency_of_arrow_backed_columns_equals_the_numpy_backed_result(unit):
    """What read_parquet(dtype_backend="pyarrow") gives: Arrow timestamps (a null is NaT) and
    doubles (a null is no half-life), in several chunks; the numbers are the same, exactly."""
    pa = pytest.importorskip("pyarrow")
    last = pd.Series([T0, T0, pd.NaT, T0, at(-3), T0], index=[10, 11, 12, 13, 14, 15])
    hl = pd.Series([30.0, np.nan, 30.0, 7.0, 1.5, np.nan], index=last.index)
    vt = pd.Series([pd.NaT, pd.NaT, pd.NaT, at(30), pd.NaT, at(29)], index=last.index)
    want = compute_currency(last, at(30), hl, vt)
    ts = pa.timestamp(unit, tz="UTC")

    def chunked(values, typ):
        arr = pa.array(values, type=typ, from_pandas=True)
        return pd.Series(pd.arrays.ArrowExtensionArray(pa.chunked_array([arr.slice(0, 2), arr.slice(2)])),
                         index=last.index)

    got = compute_currency(chunked(last, ts), at(30), chunked(hl, pa.float64()), chunked(vt, ts))
    assert got.tolist()[:2] == [0.5, 1.0] and np.isnan(got.iloc[2]) and got.iloc[3] == 1.0
    assert got.iloc[5] == 0.0                       # named date passed: history, whatever the half-life
    pd.testing.assert_series_equal(got, want)
    assert list(currency_band(got)) == list(currency_band(want))


def test_currency_of_naive_arrow_timestamps_is_refused():
    pa = pytest.importorskip("pyarrow")
    naive = pd.Series([T0.tz_localize(None)], dtype=pd.ArrowDtype(pa.timestamp("ns")))
    with pytest.raises(TimeError, match="naive"):
        compute_currency(naive, at(1), 30)


aware = st.datetimes(min_value=dt.datetime(2020, 1, 1), max_value=dt.datetime(2030, 1, 1),
                     timezones=st.just(UTC))
half_lives = st.one_of(st.none(), st.floats(min_value=0.01, max_value=5000))


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(aware, aware, half_lives, st.one_of(st.none(), aware)), min_size=1,
                max_size=20))
def test_currency_vectorised_equals_the_row_reference(rows):
    last, now, hl, vt = zip(*rows)
    vec = compute_currency(pd.Series(last), pd.Series(now), pd.Series(hl, dtype=object),
                           pd.Series(vt, dtype=object))
    ref = [currency_reference(*r) for r in rows]
    np.testing.assert_allclose(vec.to_numpy(), ref, rtol=1e-12, atol=0)
    assert list(currency_band(vec)) == [belief.band_reference(c) for c in ref]


@settings(max_examples=60, deadline=None)
@given(st.floats(0, 3000), st.floats(0, 3000), st.floats(0.01, 1000), st.floats(0.01, 1000))
def test_currency_bounds_and_monotonicity(a1, a2, h1, h2):
    lo_age, hi_age = sorted([a1, a2])
    lo_hl, hi_hl = sorted([h1, h2])
    c = compute_currency(T0, at(lo_age), lo_hl)
    assert 0.0 <= c <= 1.0
    assert compute_currency(T0, at(hi_age), lo_hl) <= c            # older → less current
    assert compute_currency(T0, at(lo_age), hi_hl) >= c            # longer half-life → more current


@settings(max_examples=30, deadline=None)
@given(st.lists(st.tuples(st.floats(-10, 500), half_lives), min_size=2, max_size=15), st.randoms())
def test_currency_order_invariance(rows, rnd):
    ages, hls = zip(*rows)
    now = pd.Series([at(a) for a in ages])
    hl = pd.Series(hls, dtype=object)
    base = np.asarray(compute_currency(T0, now, hl), dtype=float)
    perm = list(range(len(rows)))
    rnd.shuffle(perm)
    shuffled = np.asarray(compute_currency(T0, now.iloc[perm].reset_index(drop=True),
                                           hl.iloc[perm].reset_index(drop=True)), dtype=float)
    np.testing.assert_array_equal(shuffled, base[perm])


# -- bands ----------------------------------------------------------------------------------

@pytest.mark.parametrize("c, band", [
    (1.0, "current"), (0.5000000001, "current"), (0.5, "fading"), (0.3, "fading"), (0.25, "fading"),
    (0.2499999999, "history"), (0.0, "history"), (None, None), (float("nan"), "history"),
])
def test_band_boundaries(c, band):
    assert currency_band(c) == band
    assert list(currency_band(np.array([c], dtype=object))) == [band]
    assert belief.band_reference(c) == band


def test_band_at_exact_half_life_multiples():
    assert currency_band(compute_currency(T0, at(30), 30)) == "fading"    # 0.5
    assert currency_band(compute_currency(T0, at(60), 30)) == "fading"    # 0.25
    assert currency_band(compute_currency(T0, at(60.001), 30)) == "history"
    assert currency_band(compute_currency(T0, at(29.999), 30)) == "current"


def test_band_of_a_series_keeps_the_index():
    s = currency_band(pd.Series([0.9, None, 0.1], index=["a", "b", "c"], dtype=object))
    assert s.to_dict() == {"a": "current", "b": None, "c": "history"}


# -- priors and derive ----------------------------------------------------------------------

def test_priors_are_the_seeds():
    assert dict(BELIEF_PRIORS) == {"identity": None, "relationship": None, "preference": 180.0,
                                   "state": 30.0, "plan": 30.0, "episodic": 7.0,
                                   "meta_residue": 1.0, "meta_standing": None}
    with pytest.raises(TypeError):
        BELIEF_PRIORS["preference"] = 1
    from thatchlab.core.params import BELIEF_PRIORS as from_params
    assert from_params is BELIEF_PRIORS


def test_params_validate_and_replace():
    p = BeliefParams()
    assert (p.contradiction_factor, p.min_score, p.k, p.supersede) == (0.0, 0.75, 5, True)
    assert p.replace(state=10).priors["state"] == 10.0
    for bad in (dict(state=0), dict(preference=-1), dict(contradiction_factor=1.5), dict(k=0),
                dict(min_score=2), dict(supersede="yes")):
        with pytest.raises(ParamsError):
            BeliefParams(**bad)
    assert BeliefParams.from_dict(p.replace(episodic=3).to_dict()).episodic == 3.0
    with pytest.raises(ParamsError):
        p.half_life_for("mood")


@pytest.mark.parametrize("kwargs, expected", [
    (dict(stored=12, user_asserted=True, belief_class="episodic"), 12.0),   # stored wins
    (dict(user_asserted=True), None),                                       # asserted, no class
    (dict(user_asserted=True, belief_class="episodic"), 7.0),               # class beats assertion
    (dict(belief_class="identity", tier="short_term"), None),               # class prior None
    (dict(belief_class="preference", kind="document"), 180.0),              # class beats kind
    (dict(kind="document", tier="short_term"), None),
    (dict(kind="trigger"), None),
    (dict(kind="fact", tier="short_term"), 30.0),
    (dict(tier="long_term"), None),
    (dict(), None),
])
def test_derive_order(kwargs, expected):
    assert derive_half_life_days(**kwargs) == expected


def test_derive_uses_params_and_rejects_bad_values():
    p = BeliefParams(state=12, episodic=2)
    assert derive_half_life_days(tier="short_term", params=p) == 30.0  # a fixed fallback, not a prior
    assert derive_half_life_days(belief_class="episodic", params=p) == 2.0
    with pytest.raises(InputError, match="belief_class"):
        derive_half_life_days(belief_class="mood")
    with pytest.raises(InputError, match="half_life_days"):
        derive_half_life_days(0)


def test_derive_columns_match_scalars():
    cases = [dict(stored=None, user_asserted=False, belief_class=None, kind=None, tier="short_term"),
             dict(stored=5.0, user_asserted=False, belief_class="identity", kind=None, tier=None),
             dict(stored=None, user_asserted=True, belief_class=None, kind=None, tier="short_term"),
             dict(stored=None, user_asserted=False, belief_class="plan", kind="trigger", tier=None),
             dict(stored=None, user_asserted=False, belief_class=None, kind="trigger", tier=None)]
    df = pd.DataFrame(cases)
    col = derive_half_life_days(df["stored"], user_asserted=df["user_asserted"],
                                belief_class=df["belief_class"], kind=df["kind"], tier=df["tier"])
    for v, case in zip(col, cases):
        s = derive_half_life_days(case.pop("stored"), **case)
        assert (np.isnan(v) and s is None) or v == s


@pytest.mark.parametrize("form", ["object", "string[pyarrow]", "str", "category", "arrow-dictionary"])
def test_derive_columns_give_the_same_half_lives_from_every_backing(form):
    """Each rule, literal values per row, whatever backs the text and flag columns."""
    pa = pytest.importorskip("pyarrow")
    rows = [  # stored, user_asserted, class, kind, tier -> half-life (NaN: none)
        (None, False, None, None, "short_term", 30.0),
        (5.0, False, "nonsense", None, None, 5.0),          # stored wins over an unknown class
        (None, True, None, None, "short_term", np.nan),     # asserted, no class
        (None, True, "", None, "short_term", np.nan),       # "" is no class
        (None, None, "", "fact", "short_term", 30.0),       # a missing flag is False
        (None, True, "episodic", "document", None, 7.0),    # class beats assertion and kind
        (None, False, "plan", "trigger", None, 30.0),
        (None, False, "identity", None, "short_term", np.nan),   # the class's prior is None
        (None, False, None, "trigger", "short_term", np.nan),
        (None, False, None, "document", None, np.nan),
        (None, False, None, None, "long_term", np.nan),
    ]
    stored, flag, cls, kind, tier, want = (list(c) for c in zip(*rows))
    dtype = {"str": pd.StringDtype("pyarrow", na_value=np.nan) if pd.__version__ >= "3" else "string[pyarrow]",
             "arrow-dictionary": pd.ArrowDtype(pa.dictionary(pa.int32(), pa.string()))}.get(form, form)
    text = [pd.Series(c, dtype=object).astype(dtype) for c in (cls, kind, tier)]
    flags = pd.Series(flag, dtype=object if form == "object" else "boolean")
    got = derive_half_life_days(pd.Series(stored, dtype=float), user_asserted=flags, belief_class=text[0],
                                kind=text[1], tier=text[2])
    np.testing.assert_array_equal(got, want)
    arrow_flags = pd.Series(flag, dtype="bool[pyarrow]")
    np.testing.assert_array_equal(derive_half_life_days(pd.Series(stored, dtype="double[pyarrow]"),
                                                        user_asserted=arrow_flags, belief_class=text[0],
                                                        kind=text[1], tier=text[2]), want)
    category_flags = pd.Series(flag, dtype=object).astype("category")     # booleans as categories, NaN missing
    np.testing.assert_array_equal(derive_half_life_days(pd.Series(stored, dtype=float), user_asserted=category_flags,
                                                        belief_class=text[0], kind=text[1], tier=text[2]), want)
    with pytest.raises(InputError, match=r"got 'mood' at position 1"):
        derive_half_life_days(belief_class=pd.Series(["plan", "mood"], dtype=object).astype(dtype))


# -- store: evidence events -------------------------------------------------------------------

def make_store(**params) -> BeliefStore:
    st_ = BeliefStore(params=BeliefParams(**{"release": OLD, **params}))
    st_.write(dict(id="m1", text="prefers green tea", belief_class="preference", authority=1,
                   captured_at=T0, confidence=0.9))
    st_.write(dict(id="m2", text="plans a trip to Oslo", belief_class="plan", authority=2,
                   captured_at=T0))
    return st_


def test_restated_refreshes_the_clock_and_appends_evidence():
    s = make_store()
    out = s.apply(dict(ts=at(5), kind="restated", memory_id="c9", target_memory_id="m1"))
    r = s.row("m1")
    assert out["action"].tolist() == ["restated"]
    assert (r["corroboration_count"], r["last_corroborated_at"], r["evidence"]) == (1, at(5), ["c9"])
    s.apply(dict(ts=at(6), kind="restated", memory_id="m1"))
    assert s.row("m1")["evidence"] == ["c9", "restated:2026-01-07T00:00:00.000Z"]
    assert s.row("m1")["corroboration_count"] == 2


def test_contradiction_supersedes_only_when_authoritative():
    s = make_store()
    before = s.row("m2")
    weak = s.apply(dict(ts=at(1), kind="contradicted", memory_id="c1", target_memory_id="m2",
                        authority=1))
    # production: a weaker source still lowers truth, it only cannot supersede
    assert weak["action"].tolist() == ["contradicted"]
    assert s.row("m2") == {**before, "confidence": 0.0, "status": "contradicted"}
    equal = s.apply(dict(ts=at(2), kind="contradicted", memory_id="c2", target_memory_id="m2",
                         authority=2))
    r = s.row("m2")
    assert equal["action"].tolist() == ["superseded"]
    assert (r["status"], r["superseded_by"], r["confidence"]) == ("superseded", "c2", 0.0)


def test_contradiction_factor_and_supersede_switch():
    s = make_store(contradiction_factor=0.5, supersede=False)
    s.apply(dict(ts=at(1), kind="contradicted", memory_id="c1", target_memory_id="m1", authority=5))
    r = s.row("m1")
    assert (r["status"], r["superseded_by"], r["confidence"]) == ("contradicted", None, 0.45)
    s2 = make_store()
    s2.apply(dict(ts=at(1), kind="contradicted", memory_id="m1", authority=1))   # no new source named
    assert s2.row("m1")["status"] == "contradicted"


def test_resolved_review_unrelated_delete():
    s = make_store()
    s.apply(dict(ts=at(3), kind="resolved", memory_id="m2"))
    assert s.row("m2")["valid_to"] == at(3) and s.row("m2")["status"] == "active"
    v = s.view(at(4), which="all").set_index("id")
    assert v.loc["m2", "currency"] == 0.0 and v.loc["m2", "band"] == "history"
    assert "m2" in set(s.view(at(4), which="history")["id"])
    before = s.memories
    assert s.apply(dict(ts=at(4), kind="unrelated", memory_id="c5"))["action"].tolist() == ["nothing"]
    pd.testing.assert_frame_equal(s.memories, before)
    s.apply(dict(ts=at(5), kind="review", memory_id="m1", confirmed=True))
    assert s.row("m1")["corroboration_count"] == 1
    s.apply(dict(ts=at(6), kind="review", memory_id="m1", confirmed=False))
    assert (s.row("m1")["status"], s.row("m1")["superseded_by"]) == ("contradicted", None)
    s.apply(dict(ts=at(7), kind="delete", memory_id="m1"))
    assert "m1" not in s and len(s) == 1


def test_apply_errors_are_specific():
    s = make_store()
    with pytest.raises(InputError, match="no memory 'zz'"):
        s.apply(dict(ts=at(1), kind="restated", memory_id="zz"))
    with pytest.raises(InputError, match="kind"):
        s.apply(dict(ts=at(1), kind="forgotten", memory_id="m1"))
    with pytest.raises(TimeError):
        s.apply(dict(ts="2026-01-02T00:00:00", kind="restated", memory_id="m1"))
    with pytest.raises(InputError, match="confirmed"):
        s.apply(dict(ts=at(1), kind="review", memory_id="m1"))
    with pytest.raises(InputError, match="already exists"):
        s.write(dict(id="m1", text="x", captured_at=T0))


def test_reads_never_write_and_time_alone_changes_nothing():
    s = make_store()
    before, journal = s.memories, list(s.journal)
    for days in (0, 10, 100, 10_000):
        for which in ("useful_now", "history", "all"):
            s.view(at(days), which=which)
    pd.testing.assert_frame_equal(s.memories, before)
    assert s.journal == journal


# -- views ----------------------------------------------------------------------------------

def test_views_follow_production():
    rows = [
        dict(id="cur", text="a", belief_class="preference", captured_at=at(0)),
        dict(id="fad", text="b", belief_class="episodic", captured_at=at(-10)),
        dict(id="his", text="c", belief_class="episodic", captured_at=at(-30)),
        dict(id="uncl", text="d", captured_at=at(0)),                          # no class: history
        dict(id="stored", text="e", half_life_days=100, captured_at=at(0)),     # stored half-life
        dict(id="sup", text="f", belief_class="identity", status="superseded", captured_at=at(0)),
        dict(id="con", text="g", belief_class="identity", status="contradicted", captured_at=at(0)),
        dict(id="old_id", text="h", belief_class="identity", captured_at=at(-9999)),
    ]
    s = BeliefStore(pd.DataFrame(rows), params=BeliefParams(release=OLD))
    useful = set(s.view(T0, "useful_now")["id"])
    history = set(s.view(T0, "history")["id"])
    assert useful == {"cur", "fad", "stored", "old_id"}
    assert history == {"fad", "his", "uncl", "sup", "con"}
    v = s.view(T0, "all").set_index("id")
    assert len(v) == 8 and v.loc["fad", "band"] == "fading" and v.loc["old_id", "currency"] == 1.0
    assert v.loc["cur", "as_of"] == at(0)
    with pytest.raises(InputError, match="which"):
        s.view(T0, "recent")


def test_as_of_is_the_evidence_clock():
    s = make_store()
    s.apply(dict(ts=at(40), kind="restated", memory_id="m1"))
    v = s.view(at(220), "all").set_index("id")
    assert v.loc["m1", "as_of"] == at(40) and v.loc["m1", "currency"] == 0.5
    assert v.loc["m2", "as_of"] == T0


# -- admission ------------------------------------------------------------------------------

@pytest.fixture
def embedder():
    vecs = {"prefers green tea": [1.0, 0.0, 0.0], "plans a trip to Oslo": [0.0, 1.0, 0.0],
            "likes green tea a lot": [0.96, 0.28, 0.0], "no longer drinks tea": [0.8, 0.0, 0.6],
            "owns a bicycle": [0.0, 0.0, 1.0]}
    return LookupEmbedder(vecs)


class CountingJudge:
    def __init__(self, verdict):
        self.verdict, self.calls = verdict, []

    def __call__(self, claim, neighbours):
        self.calls.append((claim["text"], list(neighbours["id"]), list(neighbours["score"])))
        return self.verdict


def test_admit_consults_judge_only_at_or_above_min_score(embedder):
    s = make_store()
    score = float(embedder.embed_passages(["no longer drinks tea"])[0].astype(np.float64)
                  @ embedder.embed_passages(["prefers green tea"])[0].astype(np.float64))
    judge = CountingJudge(("unrelated", None))
    out = s.admit(pd.DataFrame({"id": ["c1"], "text": ["no longer drinks tea"]}), judge, embedder,
                  min_score=score, at=at(1), apply=False)
    assert out["consulted"].tolist() == [True] and judge.calls[0][1] == ["m1"]
    out = s.admit(pd.DataFrame({"id": ["c1"], "text": ["no longer drinks tea"]}), judge, embedder,
                  min_score=float(np.nextafter(score, 2)), at=at(1), apply=False)
    assert out["consulted"].tolist() == [False] and out["event"].tolist() == ["unrelated"]
    assert len(judge.calls) == 1 and len(s) == 2


def test_admit_similarity_alone_never_writes(embedder):
    s = make_store()
    before = s.row("m1")
    out = s.admit(["likes green tea a lot"], CountingJudge(("unrelated", None)), embedder, at=at(2))
    assert out["action"].tolist() == ["inserted"] and s.row("m1") == before
    assert s.row("claim-0")["captured_at"] == at(2)


def test_admit_applies_judged_events(embedder):
    s = make_store()
    claims = pd.DataFrame({"id": ["c1", "c2"], "text": ["likes green tea a lot", "no longer drinks tea"],
                           "ts": [at(3), at(4)], "authority": [1, 1], "belief_class": ["preference"] * 2})
    out = s.admit(claims, SimilarityJudge(0.95), embedder)
    assert out["event"].tolist() == ["restated", "unrelated"]
    assert s.row("m1")["evidence"] == ["c1"] and s.row("m1")["last_corroborated_at"] == at(3)
    s2 = make_store()
    out = s2.admit(claims.iloc[[1]], OracleJudge({"c2": ("contradicted", "m1")}), embedder)
    assert out["action"].tolist() == ["superseded"]
    assert s2.row("m1")["superseded_by"] == "c2" and s2.row("c2")["status"] == "active"


def test_admit_k_limits_neighbours_and_bad_judges_raise(embedder):
    rows = [dict(id=f"t{i}", text="prefers green tea", captured_at=T0) for i in range(7)]
    s = BeliefStore(pd.DataFrame(rows), params=BeliefParams(release=OLD))
    judge = CountingJudge(("unrelated", None))
    s.admit(["likes green tea a lot"], judge, embedder, at=at(1), apply=False)
    assert judge.calls[0][1] == ["t0", "t1", "t2", "t3", "t4"]                 # ties keep order
    with pytest.raises(InputError, match="not among the neighbours"):
        s.admit(["likes green tea a lot"], CallableJudge(lambda t, nb: ("restated", "m9")),
                embedder, at=at(1))
    with pytest.raises(InputError, match="expected one of"):
        s.admit(["likes green tea a lot"], CallableJudge(lambda t, nb: "maybe"), embedder, at=at(1))
    with pytest.raises(InputError, match="at="):
        s.admit(["owns a bicycle"], judge, embedder)


def test_oracle_judge_cannot_pick_a_row_it_was_not_shown(embedder):
    s = make_store()
    out = s.admit(pd.DataFrame({"id": ["c1"], "text": ["owns a bicycle"]}),
                  OracleJudge({"c1": ("restated", "m1")}), embedder, at=at(1))
    assert out["event"].tolist() == ["unrelated"] and s.row("m1")["corroboration_count"] == 0


def test_currency_broadcasts_scalars_against_columns():
    out = compute_currency(T0, at(30), [30, 60, None])
    np.testing.assert_allclose(out, [0.5, 2 ** -0.5, 1.0])
    vt = compute_currency(T0, at(30), 30, valid_to=pd.Series([pd.NaT, at(30), at(29)]))
    assert vt.tolist() == [0.5, 1.0, 0.0]
    with pytest.raises(InputError, match="length"):
        compute_currency(pd.Series([T0, T0]), pd.Series([at(1), at(2), at(3)]), 30)


# -- production edge cases (issue 14) ---------------------------------------------------------

def test_weaker_contradiction_lowers_truth_without_superseding():
    s = make_store()                                   # m1: authority 1, confidence 0.9
    out = s.apply(dict(ts=at(1), kind="contradicted", memory_id="c1", target_memory_id="m1",
                       authority=0.5))
    r = s.row("m1")
    assert out["action"].tolist() == ["contradicted"]
    assert out["changed"].tolist() == [["confidence", "status"]]
    assert (r["confidence"], r["status"], r["superseded_by"]) == (0.0, "contradicted", None)
    assert "m1" not in set(s.view(at(1), "useful_now")["id"])
    s2 = make_store(contradiction_factor=0.5)
    s2.apply(dict(ts=at(1), kind="contradicted", memory_id="c1", target_memory_id="m1"))  # null = 0
    assert (s2.row("m1")["confidence"], s2.row("m1")["status"]) == (0.45, "contradicted")


def test_weaker_contradicting_claim_is_admitted_beside_the_lowered_row(embedder):
    s = make_store()
    out = s.admit(pd.DataFrame({"id": ["c2"], "text": ["no longer drinks tea"], "authority": [0]}),
                  OracleJudge({"c2": ("contradicted", "m1")}), embedder, at=at(4))
    assert out["action"].tolist() == ["inserted"]
    assert (s.row("m1")["confidence"], s.row("m1")["status"]) == (0.0, "contradicted")
    assert s.row("c2")["status"] == "active"


def test_judgment_without_target_applies_to_the_top_neighbour(embedder):
    s = BeliefStore(params=BeliefParams(release=OLD))
    s.write(dict(id="m0", text="no longer drinks tea", captured_at=T0))    # 0.768: inserted first
    s.write(dict(id="m1", text="prefers green tea", captured_at=T0))       # 0.96: the top score
    judge = CountingJudge("restated")
    out = s.admit(pd.DataFrame({"id": ["c1"], "text": ["likes green tea a lot"]}), judge, embedder,
                  at=at(3))
    assert judge.calls[0][1] == ["m1", "m0"]
    assert out[["event", "target_memory_id", "action"]].values.tolist() == [["restated", "m1", "restated"]]
    assert (s.row("m1")["corroboration_count"], s.row("m1")["evidence"]) == (1, ["c1"])
    assert s.row("m0")["corroboration_count"] == 0 and "c1" not in s
    s.admit(pd.DataFrame({"id": ["c2"], "text": ["likes green tea a lot"]}),
            CallableJudge(lambda text, nb: {"event": "resolved", "target_memory_id": None}), embedder,
            at=at(5))
    assert s.row("m1")["valid_to"] == at(5) and s.row("m0")["valid_to"] is None
    s.admit(pd.DataFrame({"id": ["c3"], "text": ["likes green tea a lot"]}),
            OracleJudge({"c3": "restated"}), embedder, at=at(6))
    assert s.row("m1")["corroboration_count"] == 2


def test_stored_half_life_wins_over_any_class_and_empty_class_is_none():
    assert derive_half_life_days(stored=7.0, belief_class="nonsense") == 7.0
    assert derive_half_life_days(belief_class="") is None
    assert derive_half_life_days(belief_class="", tier="short_term") == 30.0
    assert derive_half_life_days(belief_class="", user_asserted=True) is None
    with pytest.raises(InputError, match="nonsense"):
        derive_half_life_days(belief_class="nonsense")
    with pytest.raises(InputError, match="position 1"):
        derive_half_life_days(pd.Series([7.0, np.nan]), belief_class=pd.Series(["nonsense", "nonsense"]))
    col = derive_half_life_days(pd.Series([7.0, np.nan, np.nan]),
                                belief_class=pd.Series(["nonsense", "", "episodic"]),
                                tier=pd.Series([None, "short_term", None]))
    assert col.tolist() == [7.0, 30.0, 7.0]
    s = BeliefStore()
    s.write(dict(id="a", text="x", belief_class="nonsense", half_life_days=7.0, captured_at=T0))
    s.write(dict(id="b", text="y", belief_class="", tier="short_term", captured_at=T0))
    v = s.view(at(7), "all").set_index("id")
    assert v.loc["a", "currency"] == 0.5 and v.loc["b", "effective_half_life_days"] == 30.0
    assert s.row("b")["belief_class"] is None
    with pytest.raises(InputError, match="belief_class"):
        s.write(dict(id="c", text="z", belief_class="nonsense", captured_at=T0))


def test_nan_half_life_gives_nan_currency_and_history():
    nan = float("nan")
    c = compute_currency(T0, at(1), nan)
    assert isinstance(c, float) and np.isnan(c) and currency_band(c) == "history"
    assert np.isnan(derive_half_life_days(stored=nan, belief_class="preference"))
    assert np.isnan(currency_reference(T0.to_pydatetime(), at(1).to_pydatetime(), nan))
    assert np.isnan(compute_currency(None, at(1), nan))                   # NaN before the clock
    col = compute_currency(T0, at(30), pd.Series([nan, None, 30.0], dtype=object))
    assert np.isnan(col.iloc[0]) and col.iloc[1:].tolist() == [1.0, 0.5]
    assert currency_band(col).tolist() == ["history", "current", "fading"]
    assert compute_currency(T0, at(1), nan, valid_to=at(2)) == 1.0       # valid_to still first


def test_valid_to_is_checked_before_the_half_life():
    now = at(10)
    vt = now - pd.Timedelta(seconds=1)
    c = compute_currency(T0, now, 0, valid_to=vt)
    assert c == 0.0 and currency_band(c) == "history"
    assert compute_currency(T0, now, -3, valid_to=now) == 1.0
    assert currency_reference(T0.to_pydatetime(), now.to_pydatetime(), 0, vt.to_pydatetime()) == 0.0
    col = compute_currency(T0, now, pd.Series([0.0, 30.0]), valid_to=pd.Series([vt, pd.NaT]))
    assert col.tolist() == [0.0, 2 ** (-1 / 3)]
    with pytest.raises(InputError, match="position 1"):
        compute_currency(T0, now, pd.Series([0.0, 0.0]), valid_to=pd.Series([vt, pd.NaT]))
    with pytest.raises(InputError, match="half_life_days"):
        currency_reference(T0.to_pydatetime(), now.to_pydatetime(), 0)


def test_currency_age_is_an_absolute_time_difference():
    from zoneinfo import ZoneInfo

    assert compute_currency("2026-10-24T02:07:33+01:00", "2026-10-25T01:07:33+00:00", 1) == 0.5
    london = ZoneInfo("Europe/London")
    last = dt.datetime(2026, 10, 24, 2, 7, 33, tzinfo=london)                # BST, +01:00
    now = dt.datetime(2026, 10, 25, 1, 7, 33, fold=1, tzinfo=london)         # GMT, +00:00
    assert now - last == dt.timedelta(hours=23)                 # Python's wall-clock subtraction
    assert last.utcoffset() == dt.timedelta(hours=1) and now.utcoffset() == dt.timedelta(0)
    assert compute_currency(last, now, 1) == 0.5
    assert currency_reference(last, now, 1) == 0.5
    assert compute_currency(pd.Series([last], dtype=object), pd.Series([now], dtype=object), 1).tolist() == [0.5]
    fixed = dt.datetime(2026, 10, 24, 2, 7, 33, tzinfo=dt.timezone(dt.timedelta(hours=1)))
    assert currency_reference(fixed, dt.datetime(2026, 10, 25, 1, 7, 33, tzinfo=UTC), 1) == 0.5
    # valid_to compares instants too: 01:30 GMT (fold=1) is after 01:10 BST of the same day
    vt = dt.datetime(2026, 10, 25, 1, 10, tzinfo=london)                     # fold=0: BST
    late = dt.datetime(2026, 10, 25, 1, 5, fold=1, tzinfo=london)            # 01:05 GMT
    assert compute_currency(last, late, 1, valid_to=vt) == 0.0
    assert currency_reference(last, late, 1, vt) == 0.0
