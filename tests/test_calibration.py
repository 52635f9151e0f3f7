"""thatchlab.calibration: derive, decay, tiers, shadow log, backfill, report, GC, readers, store."""

from __future__ import annotations

import json
import math
import sqlite3
import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from thatchlab.calibration import (
    EPS,
    LEDGER_ABSENT_WARNING,
    CalibrationParams,
    CalibrationReport,
    ConfidenceSource,
    backfill_recall_outcomes,
    calibrate_from_shadow,
    confidence_tier,
    decayed,
    derive,
    derive_signals,
    freshness_factor,
    gc_observations,
    recall_score,
    shadow_sample,
    signals_json,
)
from thatchlab.calibration._report import _bucket_cells, _bucket_medians, _group_medians, _tally
from thatchlab.core.errors import InputError, ParamsError, StoreSchemaError, TimeError
from thatchlab.logs.ai_memory import (
    read_ai_memory,
    read_recall_observations,
    read_shadow_observations,
)

NOW = pd.Timestamp("2026-03-01T00:00:00Z")


def _obs(rows):
    """rows: (namespace, source, days_before_now, derived, outcome)"""
    return pd.DataFrame({
        "memory_id": [f"m{i}" for i in range(len(rows))],
        "namespace": [r[0] for r in rows], "source": [r[1] for r in rows],
        "observed_at": [NOW - pd.Timedelta(days=r[2]) for r in rows],
        "caller_confidence": [0.9] * len(rows),
        "derived_confidence": [r[3] for r in rows],
        "signals": ["{}"] * len(rows),
        "recall_outcome": pd.Series([r[4] for r in rows], dtype=object),
    })


# ---------------------------------------------------------------- derive / decay


def test_derive_literal_values():
    assert derive() == 0.5
    assert derive(is_atom=True) == pytest.approx(0.6, abs=1e-15)
    assert derive(corroboration=9) == pytest.approx(0.55, abs=1e-15)
    # age == half-life: ff = 0.5, base = 0.5 − 0.02·ln2, blended half-way to 0.5
    assert derive(age_days=30.0) == pytest.approx(0.5 - 0.01 * math.log(2), abs=1e-15)
    assert derive(age_days=30.0, baseline=0.0) == pytest.approx(0.5 * (0.5 - 0.02 * math.log(2)), abs=1e-15)


def test_derive_negative_age_is_fresh_and_zero_half_life_is_eps():
    assert derive(age_days=-10.0, is_atom=True) == derive(age_days=0.0, is_atom=True)
    assert freshness_factor(-3.0) == 1.0
    # zero half-life: any positive age is infinitely stale → the baseline (clamped)
    assert derive(age_days=1.0, half_life_days=0.0, baseline=0.3) == 0.3
    assert derive(age_days=1.0, half_life_days=0.0, baseline=1.7) == 1.0
    assert derive(age_days=0.0, half_life_days=0.0) == 0.5
    assert freshness_factor(1e-20, 0.0) == pytest.approx(2 ** (-1e-20 / EPS))
    assert decayed(0.8, 5.0, 0.0) == 0.0
    assert decayed(0.8, 0.0, 0.0) == 0.8


def test_derive_clamps_and_negative_corroboration():
    assert derive(corroboration=-5) == 0.5
    assert derive(is_atom=True, corroboration=10**12, baseline=1.0) == 1.0  # base clamps at 1
    assert derive(age_days=1e6, baseline=-1.0) == 0.0


def test_derive_coefficients_are_params():
    p = CalibrationParams(intercept=0.4, atom_bump=0.3)
    assert derive(is_atom=True, **p.derive_kwargs()) == pytest.approx(0.7)
    with pytest.raises(ParamsError):
        CalibrationParams(half_life_days=0.0)
    with pytest.raises(ParamsError):
        CalibrationParams(sample_rate=1.5)
    assert CalibrationParams.from_dict(CalibrationParams().to_dict()) == CalibrationParams()


def test_derive_vectorised_matches_scalar_and_keeps_series_index():
    ages = pd.Series([0.0, 10.0, 45.0], index=[7, 8, 9])
    out = derive(ages, np.array([True, False, True]), np.array([0, 3, 10]))
    assert list(out.index) == [7, 8, 9]
    for a, t, n, v in zip(ages, [True, False, True], [0, 3, 10], out, strict=True):
        assert derive(a, t, n) == v


def test_derive_signals_names_and_json():
    s = derive_signals(age_days=-2.0, is_atom=1, corroboration=-1, baseline=1.5)
    assert list(s) == ["source_age_days", "atom_derivation", "prior_corroboration_count",
                       "freshness_factor", "baseline_per_source"]
    # the count is recorded as stored (production), even where derive clamps it to 0
    assert s == {"source_age_days": 0.0, "atom_derivation": True, "prior_corroboration_count": -1,
                 "freshness_factor": 1.0, "baseline_per_source": 1.0}
    assert json.loads(signals_json(s)) == s
    frame = derive_signals(np.array([0.0, 30.0]), False, 2)
    assert frame["freshness_factor"].tolist() == [1.0, 0.5]
    assert [json.loads(x)["prior_corroboration_count"] for x in signals_json(frame)] == [2, 2]


def test_decay_halves_at_half_life_and_touches_compound():
    assert decayed(0.8, 30.0) == pytest.approx(0.4)
    assert decayed(0.8, -1.0) == 0.8
    assert decayed(1.5, 0.0) == 1.0
    assert decayed(decayed(0.9, 12.0, 20.0), 8.0, 20.0) == pytest.approx(decayed(0.9, 20.0, 20.0), rel=1e-15)


@settings(max_examples=150, deadline=None)
@given(age=st.floats(-100, 1000), atom=st.booleans(), n=st.integers(-3, 10**6),
       baseline=st.floats(-1, 2), hl=st.floats(0, 400))
def test_derive_bounded(age, atom, n, baseline, hl):
    v = derive(age, atom, n, baseline, hl)
    assert 0.0 <= v <= 1.0
    assert 0.0 <= freshness_factor(age, hl) <= 1.0


@settings(max_examples=100, deadline=None)
@given(age=st.floats(0, 500), extra=st.floats(0.001, 100), n=st.integers(0, 1000), hl=st.floats(0.1, 200))
def test_derive_monotone(age, extra, n, hl):
    # older is never more confident than fresher content when the baseline is below the base
    assert derive(age + extra, False, n, 0.0, hl) <= derive(age, False, n, 0.0, hl) + 1e-12
    assert derive(age, True, n, 0.5, hl) >= derive(age, False, n, 0.5, hl)
    assert derive(age, False, n + 1, 0.5, hl) >= derive(age, False, n, 0.5, hl)
    assert decayed(0.7, age + extra, hl) <= decayed(0.7, age, hl)


# ---------------------------------------------------------------- tiers, sources, score


def test_confidence_tier_boundaries_and_nan():
    assert confidence_tier(0.95) == "confirmed"
    assert confidence_tier(0.9499999) == "likely"
    assert confidence_tier(0.7) == "likely"
    assert confidence_tier(0.6999) == "ambiguous"
    assert confidence_tier(float("nan")) == "ambiguous"
    assert confidence_tier(None) == "ambiguous"
    s = confidence_tier(pd.Series([1.0, np.nan, 0.75], index=["a", "b", "c"]))
    assert s.to_dict() == {"a": "confirmed", "b": "ambiguous", "c": "likely"}
    assert list(confidence_tier(np.array([0.0, 0.96]))) == ["ambiguous", "confirmed"]


def test_confidence_sources_and_recall_score():
    assert [s.value for s in ConfidenceSource] == ["caller_provided", "auto_derived", "calibrated",
                                                   "decayed", "curator_derived"]
    assert ConfidenceSource("decayed") == "decayed"
    assert recall_score(1.25, 0.5) == 2.25
    assert recall_score(1.0, 0.5, confidence_weight=0.0, other=0.5) == 1.5
    assert list(recall_score(np.array([0.0, 1.0]), np.array([1.0, 0.0]))) == [2.0, 1.0]


# ---------------------------------------------------------------- shadow sampling


@pytest.fixture
def recalls():
    n = 50
    return pd.DataFrame({
        "memory_id": [f"m{i % 7}" for i in range(n)], "namespace": "ns", "source": "user",
        "ts": pd.date_range("2026-02-01", periods=n, freq="h", tz="UTC"),
        "caller_confidence": np.linspace(0.1, 0.9, n),
        "created_at": pd.Timestamp("2026-01-02T00:00:00Z"),
        "is_atom": [i % 2 == 0 for i in range(n)], "corroboration": [i % 4 for i in range(n)],
    })


def test_shadow_sample_draws_one_per_row_and_keeps_caller(recalls):
    rate = 0.4
    obs = shadow_sample(recalls, rate, np.random.default_rng(11))
    keep = np.random.default_rng(11).random(len(recalls)) < rate
    assert obs["memory_id"].tolist() == recalls["memory_id"][keep].tolist()
    assert obs["caller_confidence"].tolist() == recalls["caller_confidence"][keep].tolist()
    assert obs["recall_outcome"].isna().all()
    row = recalls[keep].iloc[0]
    age = (row["ts"] - row["created_at"]) / pd.Timedelta(days=1)
    assert obs["derived_confidence"].iloc[0] == derive(age, row["is_atom"], row["corroboration"])
    sig = json.loads(obs["signals"].iloc[0])
    assert sig["source_age_days"] == pytest.approx(age) and sig["baseline_per_source"] == 0.5
    assert list(obs.columns) == ["memory_id", "namespace", "source", "observed_at", "caller_confidence",
                                 "derived_confidence", "signals", "recall_outcome"]


def test_shadow_sample_rate_is_clamped(recalls):
    assert len(shadow_sample(recalls, 7.0, np.random.default_rng(0))) == len(recalls)
    assert len(shadow_sample(recalls, -1.0, np.random.default_rng(0))) == 0
    assert len(shadow_sample(recalls, 1.0, 3)) == len(recalls)
    with pytest.raises(InputError):
        shadow_sample(recalls.drop(columns="created_at"), 1.0, 0)


def test_shadow_sample_rejects_naive_times(recalls):
    bad = recalls.assign(ts=recalls["ts"].dt.tz_localize(None))
    with pytest.raises(TimeError):
        shadow_sample(bad, 1.0, 0)


# ---------------------------------------------------------------- backfill


def test_backfill_consumed_unconsumed_null_and_existing_kept():
    obs = pd.DataFrame({"memory_id": ["a", "b", "c", "d"],
                        "recall_outcome": [None, None, None, "unconsumed"]})
    ledger = pd.DataFrame({"recall_id": ["r1", "r2", "r3", "r4"], "memory_id": ["a", "a", "b", "d"],
                           "consumed": [False, True, False, True]})
    before = obs.copy()  # object on pandas 2, str (NULL as NaN) on pandas 3: the output is the same
    out, n = backfill_recall_outcomes(obs, ledger)
    assert out["recall_outcome"].tolist() == ["consumed", "unconsumed", None, "unconsumed"]
    assert n == 2
    pd.testing.assert_frame_equal(obs, before)  # input untouched


def test_backfill_missing_ledger_warns_and_updates_nothing():
    obs = pd.DataFrame({"memory_id": ["a"], "recall_outcome": [None]})
    with pytest.warns(UserWarning, match="recall_observations ledger absent"):
        out, n = backfill_recall_outcomes(obs, None)
    assert n == 0 and out["recall_outcome"].tolist() == [None]
    assert "skipping consumption utility backfill" in LEDGER_ABSENT_WARNING


# ---------------------------------------------------------------- report


def test_report_groups_sorted_medians_buckets_and_utility():
    obs = _obs([("work", "user", 1, 0.2, "consumed"), ("work", "user", 2, 0.4, "unconsumed"),
                ("work", "user", 3, 0.6, None), ("work", "user", 4, 0.95, "consumed"),
                ("alpha", "api", 0, 1.0, None), ("work", "assistant", 5, 0.0, None)])
    rep = calibrate_from_shadow(obs, NOW, days=30)
    assert rep.total_observations == 6 and rep.window_days == 30
    rows = rep.rows
    assert rows[["namespace", "source"]].values.tolist() == [["alpha", "api"], ["work", "assistant"],
                                                             ["work", "user"]]
    user = rows.iloc[2]
    assert user["count"] == 4
    assert user["median"] == pytest.approx(0.5)  # even count: mean of 0.4 and 0.6
    assert user["mean"] == pytest.approx(0.5375)
    assert user["buckets"] == [0, 0, 1, 0, 1, 0, 1, 0, 0, 1]
    assert user["consumption_utility"] == pytest.approx(2 / 3)
    assert rows.iloc[0]["buckets"] == [0] * 9 + [1]  # 1.0 goes to the last bucket
    assert rows.iloc[1]["buckets"] == [1] + [0] * 9
    assert rows.iloc[0]["consumption_utility"] is None  # nothing judged: None, never 0.0


def test_report_utility_zero_only_when_judged():
    rep = calibrate_from_shadow(_obs([("a", "u", 1, 0.5, "unconsumed")]), NOW, 30)
    assert rep.rows.iloc[0]["consumption_utility"] == 0.0


def test_report_window_is_inclusive_without_upper_bound():
    obs = _obs([("a", "u", 30, 0.5, None), ("a", "u", 30.000001, 0.5, None), ("a", "u", -5, 0.5, None)])
    rep = calibrate_from_shadow(obs, NOW, days=30)
    assert rep.total_observations == 2  # exactly now−30d is in; a future observation is in too


def test_report_days_zero_keeps_now_and_negative_raises():
    obs = _obs([("a", "u", 0, 0.5, None)])
    rep = calibrate_from_shadow(obs, NOW, days=0)
    # production: the window is observed_at >= now - 0, so a row at now is in it
    assert rep.total_observations == 1 and len(rep.rows) == 1 and rep.window_days == 0
    with pytest.raises(InputError):
        calibrate_from_shadow(obs, NOW, days=-1)
    with pytest.raises(TimeError):
        calibrate_from_shadow(obs, "2026-03-01 00:00:00", days=1)


def test_report_odd_median_and_string_times():
    obs = _obs([("a", "u", 1, 0.9, None), ("a", "u", 1, 0.1, None), ("a", "u", 1, 0.3, None)])
    obs["observed_at"] = obs["observed_at"].map(lambda t: t.isoformat())
    rep = calibrate_from_shadow(obs, NOW, days=2)
    assert rep.rows.iloc[0]["median"] == 0.3


def test_report_ascii_layout_byte_exact():
    obs = _obs([("work", "user", 1, 0.2, "consumed"), ("work", "user", 2, 0.4, "unconsumed"),
                ("personal", "assistant", 1, 0.75, None)])
    text = calibrate_from_shadow(obs, NOW, days=7).to_ascii()
    expected = (
        "CONFIDENCE CALIBRATION REPORT (window: 7 days, observations: 3)\n"
        "\n"
        "NAMESPACE                 SOURCE         COUNT  MEDIAN    MEAN    UTIL  HISTOGRAM (0.0..1.0)\n"
        "personal                  assistant          1    0.75    0.75     n/a  .......#..\n"
        "work                      user               2    0.30    0.30    0.50  ..#.#.....\n"
    )
    assert text == expected


def test_report_ascii_empty_layout():
    text = calibrate_from_shadow(_obs([]), NOW, days=0).to_ascii()
    assert text == (
        "CONFIDENCE CALIBRATION REPORT (window: 0 days, observations: 0)\n"
        "\n"
        "NAMESPACE                 SOURCE         COUNT  MEDIAN    MEAN    UTIL  HISTOGRAM (0.0..1.0)\n"
        "(no observations in window)\n"
    )
    assert all(line == line.rstrip() for line in text.splitlines())


def test_report_json_keys_and_frame():
    rep = calibrate_from_shadow(_obs([("a", "u", 1, 0.5, None)]), NOW, days=3)
    doc = json.loads(rep.to_json())
    assert list(doc) == ["window_days", "total_observations", "rows"]
    # the newest release's JSON carries the divergence too (calibrate.rs @a78a2284 / @0a5770af)
    assert list(doc["rows"][0]) == ["namespace", "source", "count", "median", "mean", "buckets",
                                    "consumption_utility", "consume_access_divergence"]
    assert doc["rows"][0]["consumption_utility"] is None and doc["rows"][0]["buckets"][5] == 1
    assert doc["rows"][0]["consume_access_divergence"] is None          # nothing judged
    wide = rep.to_frame(wide=True)
    assert wide["bucket_5"].tolist() == [1] and wide.attrs["total_observations"] == 1
    assert json.loads(CalibrationReport().to_json())["rows"] == []


@settings(max_examples=25, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["a", "b"]), st.sampled_from(["u", "v"]),
                          st.floats(0, 40), st.floats(0, 1), st.sampled_from([None, "consumed", "unconsumed"])),
                min_size=1, max_size=30), st.randoms(use_true_random=False))
def test_report_order_invariant_and_counts_add_up(rows, rnd):
    obs = _obs(rows)
    shuffled = obs.sample(frac=1.0, random_state=rnd.randint(0, 10**6))
    a, b = calibrate_from_shadow(obs, NOW, 30), calibrate_from_shadow(shuffled, NOW, 30)
    cols = ["namespace", "source", "count", "median", "buckets", "consumption_utility"]
    assert a.rows[cols].to_dict("records") == b.rows[cols].to_dict("records")
    np.testing.assert_allclose(a.rows["mean"], b.rows["mean"], rtol=1e-12)  # summation order
    assert a.rows["count"].sum() == a.total_observations
    assert all(sum(x) == c for x, c in zip(a.rows["buckets"], a.rows["count"], strict=True))
    for med in a.rows["median"]:
        assert 0.0 <= med <= 1.0


_EDGE_VALUES = [0.0, -0.0, 0.1, 0.1000001, 0.5, 0.95, 1.0, 2.0, -1.0, float("inf"), float("-inf")]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 3), st.one_of(st.sampled_from(_EDGE_VALUES), st.floats(-0.5, 1.5)),
                          st.integers(0, 2)), min_size=1, max_size=60))
def test_bucket_medians_equal_whole_group_medians(cells):
    # the medians read from the median's buckets alone are bit for bit those of sorting whole groups:
    # signed zeros (row order decides), values outside [0, 1], infinities, ties across bucket edges
    g = np.array([c[0] for c in cells])
    g = np.unique(g, return_inverse=True)[1]             # groups numbered 0.. as the report numbers them
    v = np.array([c[1] for c in cells], dtype=np.float64)
    counts = np.bincount(g)
    cell = _bucket_cells(v, g) + np.array([c[2] for c in cells])     # + an outcome state
    hist = _tally(cell, len(counts))[0]
    with np.errstate(invalid="ignore"):                 # inf + -inf in one group: NaN both ways
        want, got = _group_medians(v, g, counts), _bucket_medians(v, g, counts, hist, cell)
    assert got.tobytes() == want.tobytes()


def test_bucket_medians_literal_and_nan_falls_back():
    g = np.array([0, 0, 0, 0, 1, 1, 1])
    v = np.array([0.05, 0.95, 0.31, 0.38, -0.0, 0.0, 0.7])
    cell = _bucket_cells(v, g)
    hist = _tally(cell, 2)[0]
    # group 0 sorted: 0.05 0.31 0.38 0.95 -> (0.31 + 0.38) / 2, both in bucket 3; group 1: -0.0 first
    got = _bucket_medians(v, g, np.array([4, 3]), hist, cell)
    assert got.tolist() == [(0.31 + 0.38) / 2, 0.0] and not np.signbit(got[1])      # the +0.0 is the middle
    assert _bucket_medians(np.append(v[:-1], np.nan), g, np.array([4, 3]), hist, cell) is None


# ---------------------------------------------------------------- GC


def test_gc_strictly_older_and_nonpositive_retention():
    obs = _obs([("a", "u", 10, 0.5, None), ("a", "u", 10.5, 0.5, None), ("a", "u", 1, 0.5, None)])
    kept, n = gc_observations(obs, NOW, 10)
    assert n == 1 and len(kept) == 2  # exactly now−10d stays
    assert gc_observations(obs, NOW, 0)[1] == 0
    assert gc_observations(obs, NOW, -3)[1] == 0
    assert len(obs) == 3


# ---------------------------------------------------------------- ai-memory readers


@pytest.fixture
def ai_memory_db(tmp_path):
    """A small ai-memory-like database: memories, shadow observations and the ledger."""
    path = tmp_path / "ai-memory.db"
    with sqlite3.connect(path) as c:
        c.executescript("""
        CREATE TABLE memories (id TEXT PRIMARY KEY, tier TEXT, namespace TEXT, title TEXT, content TEXT,
            confidence REAL NOT NULL DEFAULT 1.0, source TEXT, created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL, confidence_source TEXT NOT NULL DEFAULT 'caller_provided',
            confidence_signals TEXT, confidence_decayed_at TEXT);
        CREATE TABLE confidence_shadow_observations (id INTEGER PRIMARY KEY AUTOINCREMENT,
            memory_id TEXT NOT NULL, namespace TEXT NOT NULL, source TEXT, observed_at TEXT NOT NULL,
            caller_confidence REAL, derived_confidence REAL NOT NULL, signals TEXT, recall_outcome TEXT);
        CREATE TABLE recall_observations (recall_id TEXT, memory_id TEXT, retriever TEXT, rank INTEGER,
            score REAL, consumed INTEGER, observed_at TEXT);
        """)
        c.executemany("INSERT INTO memories VALUES (?,?,?,?,?,?,?,?,?,?,?,?)", [
            ("m1", "long", "work", "t", "c", 0.9, "user", "2026-02-01T00:00:00+00:00",
             "2026-02-01T00:00:00+00:00", "caller_provided", None, None),
            ("m2", "long", "work", "t", "c", 0.4, "assistant", "2026-02-02T00:00:00Z",
             "2026-02-02T00:00:00Z", "decayed", None, "2026-02-20T10:00:00.5+00:00"),
        ])
        c.executemany("INSERT INTO confidence_shadow_observations(memory_id, namespace, source, observed_at, "
                      "caller_confidence, derived_confidence, signals, recall_outcome) VALUES (?,?,?,?,?,?,?,?)", [
                          ("m1", "work", "user", "2026-02-25T00:00:00+00:00", 0.9, 0.6, "{}", None),
                          ("m2", "work", "assistant", "2026-02-26T00:00:00+00:00", 0.4, 0.3, "{}", None),
                          ("m1", "work", "user", "2026-01-01T00:00:00+00:00", 0.9, 0.7, "{}", None),
                      ])
        c.executemany("INSERT INTO recall_observations VALUES (?,?,?,?,?,?,?)", [
            ("r1", "m1", "fts", 1, 3.2, 1, "2026-02-25T00:00:00+00:00"),
            ("r2", "m2", "fts", 2, 1.1, 0, "2026-02-26T00:00:00+00:00"),
        ])
    return path


def test_ai_memory_reads_straight_into_the_report(ai_memory_db):
    t = read_ai_memory(ai_memory_db)
    assert t.memories["confidence_source"].tolist() == ["caller_provided", "decayed"]
    assert t.memories["confidence_decayed_at"].iloc[1] == pd.Timestamp("2026-02-20T10:00:00.5Z")
    obs, n = backfill_recall_outcomes(t.observations, t.ledger)
    assert n == 3
    rep = calibrate_from_shadow(obs, NOW, days=30)
    assert rep.total_observations == 2
    assert rep.rows["consumption_utility"].tolist() == [0.0, 1.0]
    assert rep.rows["source"].tolist() == ["assistant", "user"]


def test_ai_memory_without_ledger_warns(tmp_path, ai_memory_db):
    path = tmp_path / "old.db"
    with sqlite3.connect(ai_memory_db) as src, sqlite3.connect(path) as dst:
        src.backup(dst)
        dst.execute("DROP TABLE recall_observations")
    assert read_recall_observations(path) is None
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        _, n = backfill_recall_outcomes(read_shadow_observations(path), read_recall_observations(path))
    assert n == 0 and any(LEDGER_ABSENT_WARNING in str(x.message) for x in w)


def test_ai_memory_reader_errors(tmp_path):
    with pytest.raises(StoreSchemaError):
        read_ai_memory(tmp_path / "missing.db")
    path = tmp_path / "foreign.db"
    with sqlite3.connect(path) as c:
        c.execute("CREATE TABLE other (x)")
    with pytest.raises(StoreSchemaError, match="memories"):
        read_ai_memory(path)


@pytest.mark.parametrize("module", [
    "thatchlab.calibration._derive", "thatchlab.calibration._shadow", "thatchlab.calibration._window",
    "thatchlab.calibration._report",
    "thatchlab.logs.ai_memory", "thatchlab.core.params.calibration", "thatchlab.logs.recall",
    "thatchlab.replay.calibration", "thatchlab.synth.recall", "thatchlab.fit.derive",
    "thatchlab.plots.calibration",
])
def test_docstring_examples_run(module):
    import doctest
    import importlib

    result = doctest.testmod(importlib.import_module(module), optionflags=doctest.ELLIPSIS)
    assert result.failed == 0 and result.attempted > 0


def test_import_sqlite_reads_an_ai_memory_database(ai_memory_db):
    from thatchlab.store import import_sqlite

    state = import_sqlite(ai_memory_db).calibration
    assert state.memories["id"].tolist() == ["m1", "m2"]
    assert list(state.memories.columns) == ["id", "confidence", "confidence_source", "confidence_signals",
                                            "confidence_decayed_at"]
    assert len(state.observations) == 3
    rep = calibrate_from_shadow(state.observations, NOW, days=30)
    assert rep.total_observations == 2


# ---------------------------------------------------------------- production edge cases (issue 14)


def test_report_utility_counts_every_non_null_outcome_as_judged():
    one = calibrate_from_shadow(_obs([("a", "u", 1, 0.5, "recalled")]), NOW, 30)
    assert one.rows.iloc[0]["consumption_utility"] == 0.0          # production: 0.0, not None
    rows = [("a", "u", 1, 0.5, "consumed"), ("a", "u", 1, 0.5, "recalled"), ("a", "u", 1, 0.5, "skipped"),
            ("a", "u", 1, 0.5, "unconsumed"), ("a", "u", 1, 0.5, None), ("b", "u", 1, 0.5, None)]
    rep = calibrate_from_shadow(_obs(rows), NOW, 30)
    assert rep.rows["consumption_utility"].tolist() == [0.25, None]   # 1 consumed of 4 judged
    assert json.loads(rep.to_json())["rows"][1]["consumption_utility"] is None
    assert "     n/a  " in rep.to_ascii().splitlines()[4]


def test_report_ascii_prints_na_and_negative_zero_as_production():
    rep = calibrate_from_shadow(_obs([("a", "u", 1, -0.0, None)]), NOW, 30)
    assert math.copysign(1.0, rep.rows.iloc[0]["median"]) == -1.0   # the value keeps its sign
    line = rep.to_ascii().splitlines()[3]
    assert line == f"{'a':<24}  {'u':<12}  {1:>6}  {'0.00':>6}  {'0.00':>6}  {'n/a':>6}  #........."
    rows = pd.DataFrame({"namespace": ["a"], "source": ["u"], "count": [2], "median": [-0.0], "mean": [-0.0],
                         "buckets": [[2] + [0] * 9], "consumption_utility": pd.Series([-0.0], dtype=object)})
    text = CalibrationReport(window_days=30, total_observations=2, rows=rows).to_ascii()
    assert text.splitlines()[3].endswith("     2    0.00    0.00    0.00  #.........")
    assert "-0.00" not in text


def test_window_has_no_upper_bound_and_days_is_range_checked():
    from thatchlab.core.errors import ThatchlabError

    obs = _obs([("a", "u", -1 / 24, 0.5, None), ("a", "u", 1 / 86_400, 0.5, None)])  # now+1h, now−1s
    rep = calibrate_from_shadow(obs, NOW, days=0)
    assert rep.total_observations == 1 and rep.window_days == 0
    assert calibrate_from_shadow(obs, NOW, days=36_500).total_observations == 2
    for bad in (-1, 36_501, 36_500.5, float("nan"), float("inf"), True, "30"):
        with pytest.raises(ThatchlabError, match=r"0\.\.=36500") as exc:
            calibrate_from_shadow(obs, NOW, days=bad)
        assert isinstance(exc.value, InputError) and repr(bad) in str(exc.value)


def test_window_and_gc_compare_observed_at_as_production_text():
    from thatchlab.calibration import cutoff_text

    now = "2025-12-12T19:19:39.890849474Z"
    assert cutoff_text(pd.Timestamp(now) - pd.Timedelta(days=1)) == "2025-12-11T19:19:39.890849474+00:00"
    assert cutoff_text("2025-12-11T19:19:39.5Z") == "2025-12-11T19:19:39.500+00:00"
    assert cutoff_text("2025-12-11T19:19:39.000001Z") == "2025-12-11T19:19:39.000001+00:00"
    assert cutoff_text("2025-12-11T19:19:39Z") == "2025-12-11T19:19:39+00:00"
    texts = ["2025-12-11T19:19:39Z",          # 0.89 s before the cutoff, but 'Z' > '.': inside
             "2025-12-11T19:19:39+00:00",     # the same instant, '+' < '.': outside
             "2025-12-11T20:19:39+01:00"]     # the same instant again, '20' > '19': inside
    obs = pd.DataFrame({"namespace": ["a"] * 3, "source": ["u"] * 3, "observed_at": texts,
                        "derived_confidence": [0.5] * 3, "recall_outcome": [None] * 3})
    for i, inside in enumerate([True, False, True]):
        one = obs.iloc[[i]].reset_index(drop=True)
        assert calibrate_from_shadow(one, now, days=1).total_observations == int(inside)
        kept, n = gc_observations(one, now, 1)
        assert (len(kept), n) == ((1, 0) if inside else (0, 1))
    # the same instant as a timestamp is compared like the text thatchlab writes: outside, deleted
    ts = obs.iloc[[0]].assign(observed_at=pd.to_datetime(["2025-12-11T19:19:39Z"], utc=True))
    assert calibrate_from_shadow(ts, now, days=1).total_observations == 0
    assert gc_observations(ts, now, 1)[1] == 1


def test_stored_text_column_wins_and_timestamps_compare_like_their_text():
    from thatchlab.calibration import OBSERVED_AT_TEXT, observed_at_text

    now = pd.Timestamp("2025-12-12T19:19:39.890849474Z")
    obs = pd.DataFrame({"namespace": ["a"] * 2, "source": ["u"] * 2,
                        "observed_at": pd.to_datetime(["2025-12-11T19:19:39Z"] * 2, utc=True),
                        OBSERVED_AT_TEXT: ["2025-12-11T19:19:39Z", None],
                        "derived_confidence": [0.5] * 2, "recall_outcome": [None] * 2})
    assert calibrate_from_shadow(obs, now, days=1).total_observations == 1   # only the stored 'Z' row
    kept, n = gc_observations(obs, now, 1)
    assert n == 1 and kept[OBSERVED_AT_TEXT].tolist() == ["2025-12-11T19:19:39Z"]
    # thatchlab's own text orders like the instants: the text path equals the timestamp path
    rng = np.random.default_rng(3)
    base = pd.Timestamp("2026-01-01T00:00:00Z").value
    step = rng.choice([1, 1_000, 1_000_000, 1_000_000_000], 400)
    t = pd.Series(pd.to_datetime(base + rng.integers(-3, 4, 400) * step, utc=True))
    as_text = pd.DataFrame({"namespace": "a", "source": "u", "observed_at": observed_at_text(t),
                            "derived_confidence": 0.5})
    as_time = as_text.assign(observed_at=t)
    for cut in (base, base + 1, base + 1_000, base - 1_000_000, base + 2_000_000_000):
        now_ = pd.Timestamp(cut, tz="UTC") + pd.Timedelta(days=1)
        a, b = gc_observations(as_text, now_, 1), gc_observations(as_time, now_, 1)
        assert a[1] == b[1] == int((t.array.asi8 < cut).sum())
        assert (calibrate_from_shadow(as_text, now_, 1).total_observations
                == calibrate_from_shadow(as_time, now_, 1).total_observations == int((t.array.asi8 >= cut).sum()))


def test_ai_memory_reader_keeps_the_stored_text(tmp_path):
    from thatchlab.calibration import OBSERVED_AT_TEXT

    path = tmp_path / "z.db"
    with sqlite3.connect(path) as c:
        c.execute("CREATE TABLE memories (id TEXT PRIMARY KEY, confidence REAL)")
        c.execute("CREATE TABLE confidence_shadow_observations (id INTEGER PRIMARY KEY, memory_id TEXT, "
                  "namespace TEXT, source TEXT, observed_at TEXT, caller_confidence REAL, "
                  "derived_confidence REAL, signals TEXT, recall_outcome TEXT)")
        c.executemany("INSERT INTO confidence_shadow_observations(memory_id, namespace, source, observed_at, "
                      "derived_confidence, recall_outcome) VALUES (?,?,?,?,?,?)",
                      [("m1", "w", "user", "2025-12-11T19:19:39Z", 0.6, "recalled"),
                       ("m2", "w", "user", "2025-12-11T19:19:39+00:00", 0.4, None)])
    obs = read_shadow_observations(path)
    assert obs[OBSERVED_AT_TEXT].tolist() == ["2025-12-11T19:19:39Z", "2025-12-11T19:19:39+00:00"]
    assert str(obs["observed_at"].dtype) == "datetime64[ns, UTC]"
    rep = calibrate_from_shadow(obs, "2025-12-12T19:19:39.890849474Z", days=1)
    assert rep.total_observations == 1 and rep.rows.iloc[0]["consumption_utility"] == 0.0
    assert calibrate_from_shadow(obs.drop(columns=OBSERVED_AT_TEXT), "2025-12-12T19:19:39.890849474Z",
                                 days=1).total_observations == 0


def test_signals_keep_the_stored_corroboration_count_exactly():
    big = 2**53 + 1
    assert derive_signals(corroboration=-5)["prior_corroboration_count"] == -5
    assert '"prior_corroboration_count": -5,' in signals_json(derive_signals(corroboration=-5))
    assert derive_signals(corroboration=big)["prior_corroboration_count"] == big
    assert '"prior_corroboration_count": 9007199254740993,' in signals_json(derive_signals(corroboration=big))
    frame = derive_signals(np.array([0.0, 30.0]), False, np.array([-5, big]))
    assert [json.loads(x)["prior_corroboration_count"] for x in signals_json(frame)] == [-5, big]
    # derived values are unchanged: derive still uses max(n, 0) in floats
    assert derive(corroboration=-5) == derive(corroboration=0) == 0.5
    recalls = pd.DataFrame({"memory_id": ["m1", "m2"], "namespace": "ns", "source": "user",
                            "ts": ["2026-01-31T00:00:00Z"] * 2, "caller_confidence": 0.9,
                            "created_at": ["2026-01-01T00:00:00Z"] * 2, "is_atom": [False, True],
                            "corroboration": np.array([-5, big], dtype=np.int64)})
    obs = shadow_sample(recalls, 1.0, 0)
    assert [json.loads(x)["prior_corroboration_count"] for x in obs["signals"]] == [-5, big]
    assert obs["derived_confidence"].tolist() == [derive(30.0, False, 0), derive(30.0, True, float(big))]


LN2_PY = math.log(2)


def _ref_derive(age, atom, n, baseline, hl):
    """ai-memory's derive written out in plain Python floats (no fused multiply-add)."""
    age, hl = max(age, 0.0), max(hl, EPS)
    ff = min(max(math.exp(-age * LN2_PY / hl), 0.0), 1.0)
    base = min(max(0.5 + 0.1 * float(atom) + 0.05 * max(math.log10(1.0 + max(n, 0)), 0.0)
                   - 0.02 * age * LN2_PY / hl, 0.0), 1.0)
    return min(max(base * ff + min(max(baseline, 0.0), 1.0) * (1.0 - ff), 0.0), 1.0)


AGES = [0.0, 0.25, 0.5, 1.0, 2.0, 3.7, 7.0, 12.25, 29.999, 30.0, 31.5, 45.5, 90.0, 123.456, 365.0, 1000.0]
HALF_LIVES = [0.5, 1.0, 7.0, 15.0, 30.0, 45.0, 180.0]


def test_derive_and_decay_are_bit_identical_to_the_production_formula():
    cases = [(a, atom, n, b, h) for a in AGES for h in HALF_LIVES
             for atom, n, b in ((False, 0, 0.5), (True, 3, 0.2), (False, 1000, 0.9))]
    for a, atom, n, b, h in cases:
        assert derive(a, atom, n, b, h) == _ref_derive(a, atom, n, b, h), (a, atom, n, b, h)
        assert freshness_factor(a, h) == math.exp(-a * LN2_PY / h)
        assert decayed(0.8, a, h) == min(max(0.8 * math.exp(-a * LN2_PY / h), 0.0), 1.0)
    age, atom, n, b, h = (np.array(x) for x in zip(*cases))
    assert derive(age, atom, n, b, h).tolist() == [_ref_derive(*c) for c in cases]
    assert freshness_factor(age, h).tolist() == [math.exp(-c[0] * LN2_PY / c[4]) for c in cases]
    assert decayed(np.full(len(cases), 0.7), age, h).tolist() == [
        min(max(0.7 * math.exp(-c[0] * LN2_PY / c[4]), 0.0), 1.0) for c in cases]
    sig = derive_signals(age, atom, n, b, h)
    assert sig["freshness_factor"].tolist() == [math.exp(-c[0] * LN2_PY / c[4]) for c in cases]
    # the shape matters: 2 ** (−age / hl) rounds differently for some of these inputs
    assert any(2.0 ** (-a / h) != math.exp(-a * LN2_PY / h) for a in AGES for h in HALF_LIVES)


def test_store_round_trips_legacy_outcomes(tmp_path, ai_memory_db):
    from thatchlab.store import export_sqlite, import_sqlite

    with sqlite3.connect(ai_memory_db) as c:
        c.execute("UPDATE confidence_shadow_observations SET recall_outcome = 'recalled' WHERE id = 1")
        c.execute("UPDATE confidence_shadow_observations SET recall_outcome = 'skipped' WHERE id = 2")
    state = import_sqlite(ai_memory_db).calibration
    back = import_sqlite(export_sqlite(tmp_path / "out.db", calibration=state).path).calibration
    assert back.observations["recall_outcome"].tolist() == ["recalled", "skipped", None]
    rep = calibrate_from_shadow(back.observations, NOW, days=30)
    assert rep.rows["consumption_utility"].tolist() == [0.0, 0.0]          # judged, none consumed
