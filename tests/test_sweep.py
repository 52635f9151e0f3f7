"""sweep / best: honest sweeps, amortised evaluation, cache and resume."""

import dataclasses
import json

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.model_selection import TimeSeriesSplit

from tests._sweep_logs import interaction_log
from thatchlab.core.errors import InputError, ParamsError
from thatchlab.core.params import BeliefParams, ScoringParams
from thatchlab.metrics.scoring import prequential_scores, regime_outcomes, regime_rates
from thatchlab.replay.scoring import prepare
from thatchlab.sweep import EngineSpec, best, get_engine, holdout_segments, sweep
from thatchlab.sweep._scoring_engines import (
    METRIC_SOFT_WEIGHT,
    forecast_matrix,
    forecast_scores,
    regimes_from_nudges,
)
from thatchlab.sweep._space import grid_configs, random_configs
from thatchlab.synth import BeliefWorld


@pytest.fixture(scope="module")
def world():
    return interaction_log(n_events=300, seed=1)


@pytest.fixture(scope="module")
def memory_log():
    return BeliefWorld(seed=0).log(n_memories=40, days=60)


def _sorted(log):
    log = log.copy()
    log["ts"] = pd.to_datetime(log["ts"], utc=True)
    return log.iloc[np.argsort(log["ts"].to_numpy(), kind="stable")].reset_index(drop=True)


# -- segments -------------------------------------------------------------------------------------
def test_holdout_cuts():
    segs = holdout_segments(np.arange(10) * 100, 0.2)
    assert [(s.name, s.lo, s.hi, s.t_lo, s.t_hi) for s in segs] == [("val", 6, 8, 600, 800),
                                                                     ("test", 8, 10, 800, None)]
    segs = holdout_segments(np.arange(7), 0.25)  # floor(3.5) = 3, floor(5.25) = 5
    assert [(s.lo, s.hi) for s in segs] == [(3, 5), (5, 7)]
    assert segs[0].mask(position=[2, 3, 4, 5]).tolist() == [False, True, True, False]
    assert segs[1].mask(time_ns=[4, 5, 6, 99]).tolist() == [False, True, True, True]


def test_holdout_errors_and_folds():
    for bad in (0, 0.5, 0.7, -0.1, True, "0.2"):
        with pytest.raises(InputError, match="holdout"):
            holdout_segments(np.arange(10), bad)
    with pytest.raises(InputError, match="empty"):
        holdout_segments(np.arange(3), 0.1)
    segs = holdout_segments(np.arange(12), TimeSeriesSplit(n_splits=3))
    assert [(s.name, s.lo, s.hi) for s in segs] == [("val0", 3, 6), ("val1", 6, 9), ("test", 9, 12)]

    class OneFold:
        def get_n_splits(self):
            return 1

        def split(self, x):
            yield np.arange(6), np.arange(6, 12)

    with pytest.raises(InputError, match="n_splits"):
        holdout_segments(np.arange(12), OneFold())


# -- search spaces ----------------------------------------------------------------------------------
def test_grid_and_random_configs():
    assert grid_configs({"k": [1, 2], "p0": [0.3, 0.5]}) == [
        {"k": 1, "p0": 0.3}, {"k": 1, "p0": 0.5}, {"k": 2, "p0": 0.3}, {"k": 2, "p0": 0.5}]
    with pytest.raises(InputError, match="grid needs a list"):
        grid_configs({"k": (1, 5)})
    a = random_configs({"k": (1.0, 50.0, "log"), "top_matchers": (1, 5), "p0": [0.3, 0.5]}, 50, seed=3)
    assert a == random_configs({"k": (1.0, 50.0, "log"), "top_matchers": (1, 5), "p0": [0.3, 0.5]}, 50, seed=3)
    assert a != random_configs({"k": (1.0, 50.0, "log"), "top_matchers": (1, 5), "p0": [0.3, 0.5]}, 50, seed=4)
    assert all(1.0 <= c["k"] <= 50.0 and c["top_matchers"] in range(1, 6) for c in a)
    assert {c["p0"] for c in a} == {0.3, 0.5} and {type(c["top_matchers"]) for c in a} == {int}


def test_bad_arguments(world):
    log, emb = world
    with pytest.raises(InputError, match="metric"):
        sweep(log, {"k": [1]}, "accuracy", embedder=emb)
    with pytest.raises(ParamsError, match="unknown parameter"):
        sweep(log, {"kk": [1]}, "brier", embedder=emb)
    with pytest.raises(InputError, match="n_trials"):
        sweep(log, {"k": [1]}, "brier", embedder=emb, n_trials=3)
    with pytest.raises(InputError, match="engine"):
        sweep(log, {"k": [1]}, "brier", engine="nope")
    with pytest.raises(ParamsError):
        sweep(log, {"k": [-1.0]}, "brier", embedder=emb)


# -- prediction engine: amortised evaluation equals one replay per configuration ------------------
def test_forecast_sweep_equals_single_replays(world):
    log, emb = world
    space = {"k": [1.0, 5.0, 20.0], "p0": [0.3, 0.5], "soft_weight": [0.25, 1.0]}
    res = sweep(log, space, "log_loss", embedder=emb, holdout=0.25)
    assert len(res) == 12 and res["embedder"].eq("random-48").all()
    assert res["estimator"].str.startswith("prequential").all()
    assert res[["k", "p0", "soft_weight"]].to_dict("records")[:2] == [
        {"k": 1.0, "p0": 0.3, "soft_weight": 0.25}, {"k": 1.0, "p0": 0.3, "soft_weight": 1.0}]
    slog = _sorted(log)
    plan = prepare(slog, "prediction", embedder=emb)
    n = len(slog)
    a, b = int(np.floor(0.5 * n)), int(np.floor(0.75 * n))
    for row in res.itertuples():
        p = ScoringParams(k=row.k, p0=row.p0, soft_weight=row.soft_weight)
        ev = plan.run(p, metrics=False).events
        # one metric for every configuration: soft rows weigh production's default soft weight
        # in the scores whatever soft weight made the forecasts
        val = prequential_scores(ev[(ev["position"] >= a) & (ev["position"] < b)], METRIC_SOFT_WEIGHT)
        test = prequential_scores(ev[ev["position"] >= b], METRIC_SOFT_WEIGHT)
        assert row.val_n_forecasts == val["n_forecasts"] and row.test_n_forecasts == test["n_forecasts"]
        for m in ("log_loss", "brier", "ece"):  # equal up to summation order
            assert getattr(row, f"val_{m}") == pytest.approx(val[m], rel=1e-12, abs=1e-15)
            assert getattr(row, f"test_{m}") == pytest.approx(test[m], rel=1e-12, abs=1e-15)
    b_ = best(res, "log_loss")
    assert b_.val == res["val_log_loss"].min()
    assert b_.test == res.loc[res["val_log_loss"].idxmin(), "test_log_loss"]
    assert isinstance(b_.params, ScoringParams) and b_.params.k == res.loc[res["val_log_loss"].idxmin(), "k"]


def test_broadcast_forecasts_are_bitwise_the_replay_forecasts(world):
    log, emb = world
    plan = prepare(_sorted(log), "prediction", embedder=emb)
    configs = [ScoringParams(k=k, p0=p0, soft_weight=w) for k in (0.7, 5.0) for p0 in (0.2, 0.5)
               for w in (0.0, 0.25, 2.0)]
    pos, items, sig, F = forecast_matrix(plan, configs)
    assert F.shape == (len(pos), len(configs)) and len(pos) > 50
    for j, p in enumerate(configs):
        ev = plan.run(p, metrics=False).events.set_index("position")
        assert np.array_equal(ev.loc[pos, "forecast"].to_numpy(), F[:, j])
        assert ev.loc[pos, "signal"].tolist() == sig.tolist()


def test_forecast_scores_literal():
    # confirm forecast 0.8, soft forecast 0.4 (weight 0.5), disconfirm forecast 0.3
    out = forecast_scores([1, 0, 0], [False, True, False], np.array([[0.8], [0.4], [0.3]]), [0.5])
    w = np.array([1, 0.5, 1])
    ll = -(np.log(0.8) * 1 + np.log(0.6) * 0.5 + np.log(0.7)) / w.sum()
    assert out["log_loss"][0] == pytest.approx(ll, rel=1e-14)
    assert out["brier"][0] == pytest.approx((0.04 + 0.5 * 0.16 + 0.09) / 2.5, rel=1e-14)
    # bins [0.3,0.4) [0.4,0.5) [0.8,0.9): |0-0.3|·1 + |0-0.4|·0.5 + |1-0.8|·1 over 2.5
    assert out["ece"][0] == pytest.approx((0.3 + 0.2 + 0.2) / 2.5, abs=1e-12)
    empty = forecast_scores([], [], np.zeros((0, 2)), [0.25, 0.5])
    assert empty["n_forecasts"].tolist() == [0, 0] and np.isnan(empty["log_loss"]).all()


def test_regime_sweep_equals_single_replays(world):
    log, emb = world
    space = {"threshold": [0.5, 0.7], "strong_confidence": [0.55, 0.7], "conflict_margin": [0.0, 0.1],
             "k": [2.0, 8.0]}
    res = sweep(log, space, "wrong_silent_follow_rate", embedder=emb)
    assert res["estimator"].str.startswith("direct").all()
    plan = prepare(_sorted(log), "prediction", embedder=emb)
    n = len(log)
    a, b = int(np.floor(0.6 * n)), int(np.floor(0.8 * n))
    for row in res.itertuples():
        p = ScoringParams(threshold=row.threshold, strong_confidence=row.strong_confidence,
                          conflict_margin=row.conflict_margin, k=row.k)
        r = plan.run(p, metrics=False)
        oc = regime_outcomes(r.events, r.nudges)
        rates = regime_rates(oc[(oc["position"] >= a) & (oc["position"] < b)])
        assert row.val_interruption_rate == rates["interruption_rate"]
        assert row.val_coverage == rates["coverage"]
        assert row.val_wrong_silent_follow_rate == rates["wrong_silent_follow_rate"] or (
            np.isnan(row.val_wrong_silent_follow_rate) and np.isnan(rates["wrong_silent_follow_rate"]))
        assert row.test_n_messages == regime_rates(oc[oc["position"] >= b])["n_messages"]
    assert res["val_interruption_rate"].nunique() > 2


def test_dedup_rule_gets_its_own_plan(world):
    log, emb = world
    res = sweep(log, {"dedup_cosine": [-1.0, 0.85], "k": [5.0]}, "brier", embedder=emb)
    assert res["dedup_cosine"].tolist() == [-1.0, 0.85]
    # dedup at cosine -1 merges every statement into one item: other forecasts
    assert res.loc[0, "val_brier"] != res.loc[1, "val_brier"]


def test_intervals_opt_in(world):
    log, emb = world
    plain = sweep(log, {"k": [5.0]}, "brier", embedder=emb)
    assert not any(c.endswith("_lo") for c in plain.columns)
    res = sweep(log, {"k": [2.0, 5.0]}, "brier", embedder=emb, intervals=25, seed=1)
    for seg in ("val", "test"):
        lo, hi, v = res[f"{seg}_brier_lo"], res[f"{seg}_brier_hi"], res[f"{seg}_brier"]
        assert (lo <= hi).all() and (lo < v + 0.05).all() and (hi > v - 0.05).all()
    again = sweep(log, {"k": [2.0, 5.0]}, "brier", embedder=emb, intervals=25, seed=1)
    pd.testing.assert_frame_equal(res, again)


def test_optuna_search(world):
    log, emb = world
    res = sweep(log, {"k": (0.5, 50.0, "log"), "p0": (0.2, 0.8)}, "log_loss", embedder=emb,
                search="optuna", n_trials=8, seed=0)
    assert 1 <= len(res) <= 8
    assert res["k"].between(0.5, 50.0).all() and res["p0"].between(0.2, 0.8).all()
    again = sweep(log, {"k": (0.5, 50.0, "log"), "p0": (0.2, 0.8)}, "log_loss", embedder=emb,
                  search="optuna", n_trials=8, seed=0)
    pd.testing.assert_frame_equal(res, again)


def test_best_rules():
    res = pd.DataFrame({"k": [1.0, 2.0, 3.0, 4.0], "val_auc": [np.nan, 0.7, 0.9, 0.9],
                        "test_auc": [0.99, 0.6, 0.5, 0.8], "engine": "prediction"})
    with pytest.warns(UserWarning, match="2 configurations tie on val_auc"):
        b = best(res, "auc", minimize=False)
    assert (b.params.k, b.val, b.test) == (3.0, 0.9, 0.5)  # first of the tied, NaN never picked
    assert b.ties["k"].tolist() == [3.0, 4.0]
    with pytest.warns(UserWarning, match="tie"):  # AUC is maximised by its registered direction
        assert best(res, "auc").params.k == 3.0
    assert best(res, "auc", minimize=True).params.k == 2.0  # an explicit override still wins
    with pytest.warns(UserWarning, match="tie"):
        params, row = best(res, "auc", minimize=False)
    assert row["k"] == 3.0
    with pytest.raises(InputError, match="val_brier"):
        best(res, "brier")
    with pytest.raises(InputError, match="NaN"):
        best(res.assign(val_auc=np.nan), "auc")


# -- other engines ----------------------------------------------------------------------------------
def test_belief_sweep_rescores_priors(memory_log):
    res = sweep(memory_log, {"episodic": [2.0, 7.0, 20.0]}, "brier", engine="belief")
    from thatchlab.replay.belief import run_belief

    slog = memory_log.iloc[np.argsort(pd.to_datetime(memory_log["ts"], utc=True).to_numpy(), kind="stable")]
    n = len(slog)
    a, b = int(np.floor(0.6 * n)), int(np.floor(0.8 * n))
    for row in res.itertuples():
        ev = run_belief(memory_log, BeliefParams(episodic=row.episodic)).events
        lab = ev[(ev["position"] >= b) & ev["still_true"].notna() & ev["currency"].notna()]
        from thatchlab.metrics.calibration import brier

        assert row.test_brier == brier(lab["still_true"].astype(bool), lab["currency"])
        assert a < b
    b_ = best(res, "brier")
    assert isinstance(b_.params, BeliefParams) and b_.params.identity is None
    folds = sweep(memory_log, {"episodic": [7.0]}, "auc", engine="belief", holdout=TimeSeriesSplit(3))
    assert folds.loc[0, "val_auc"] == pytest.approx(np.nanmean([folds.loc[0, "val0_auc"], folds.loc[0, "val1_auc"]]))


def test_calibration_and_anticipation_engines():
    from thatchlab.synth import PatternWorld, RecallWorld

    rlog = RecallWorld(n_memories=20, n_recalls=300, seed=1).log
    res = sweep(rlog, {"half_life_days": [7.0, 30.0]}, "caller_brier", engine="calibration")
    assert res["val_caller_brier"].notna().all() and res["val_n_judged"].gt(0).all()
    ev, rc = PatternWorld(n_workspaces=1, days=21, seed=0).generate()
    res = sweep((ev, rc), {"k": [1, 3]}, "hit_rate_at_k", engine="anticipation")
    assert res["k"].tolist() == [1, 3] and res["test_sessions"].gt(0).all()


# -- cache and resume ---------------------------------------------------------------------------------
def _crashing_belief(counter, crash_after=None):
    base = get_engine("belief")

    def evaluate(prepared, params_list, segments, metric=None, boot=None):
        if crash_after is not None and counter["chunks"] >= crash_after:
            raise RuntimeError("worker lost")
        counter["chunks"] += 1
        counter["configs"] += len(params_list)
        return base.evaluate(prepared, params_list, segments, metric, boot)

    return dataclasses.replace(base, evaluate=evaluate)


def test_cache_resumes_after_crash(memory_log, tmp_path):
    space = {"episodic": [2.0, 5.0, 7.0], "state": [10.0, 30.0]}
    full = sweep(memory_log, space, "brier", engine="belief")
    cache = tmp_path / "sweep.parquet"
    first = {"chunks": 0, "configs": 0}
    with pytest.raises(RuntimeError, match="worker lost"):
        sweep(memory_log, space, "brier", engine=_crashing_belief(first, crash_after=2), cache=cache,
              chunk_size=2)
    assert first == {"chunks": 2, "configs": 4}
    assert len(pd.read_parquet(cache)) == 4
    second = {"chunks": 0, "configs": 0}
    resumed = sweep(memory_log, space, "brier", engine=_crashing_belief(second), cache=cache, chunk_size=2)
    assert second == {"chunks": 1, "configs": 2}  # only the two missing configurations
    pd.testing.assert_frame_equal(resumed, full)
    third = {"chunks": 0, "configs": 0}
    again = sweep(memory_log, space, "brier", engine=_crashing_belief(third), cache=cache)
    assert third["configs"] == 0
    pd.testing.assert_frame_equal(again, full)
    # another holdout is another sweep: nothing reused
    other = {"chunks": 0, "configs": 0}
    sweep(memory_log, {"episodic": [2.0]}, "brier", engine=_crashing_belief(other), cache=cache, holdout=0.3)
    assert other["configs"] == 1


def test_loky_equals_inline(memory_log):
    space = {"episodic": [2.0, 7.0], "k": [3, 5]}
    one = sweep(memory_log, space, "auc", engine="belief")
    two = sweep(memory_log, space, "auc", engine="belief", n_jobs=2, chunk_size=1)
    pd.testing.assert_frame_equal(one, two)


def test_custom_engine_spec_passes_through(memory_log):
    spec = get_engine("belief")
    assert isinstance(spec, EngineSpec)
    res = sweep(memory_log, {"episodic": [7.0]}, "auc", engine=spec)
    assert res["engine"].tolist() == ["belief"]


# -- export of the winner ----------------------------------------------------------------------------
def test_an_exported_sweep_winner_is_unreviewed_until_decided(world, tmp_path):
    from thatchlab.replay.scoring import run
    from thatchlab.scoring import PredictionEngine
    from thatchlab.store import export_sqlite

    log, emb = world
    res = sweep(log, {"k": [2.0, 10.0], "p0": [0.4, 0.6], "threshold": [0.55]}, "brier", embedder=emb)
    winner = best(res, "brier").params
    replay = run(_sorted(log), "prediction", winner, embedder=emb)
    engine = PredictionEngine.from_tables(replay.tables, embedder=emb, params=winner)
    out = export_sqlite(tmp_path / "winner.db", prediction=engine, params={"prediction": winner})
    manifest = json.loads(out.manifest_path.read_text())
    # a winner on validation is a candidate: without a decision, nothing of it ships
    assert manifest["environment"] == [] and manifest["recommended_production_changes"] == {}
    assert manifest["unreviewed"]["prediction"]["threshold"] == 0.55
    import sqlite3

    with sqlite3.connect(out.path) as conn:
        meta = dict(conn.execute("SELECT key, value FROM thatchlab_meta").fetchall())
    assert json.loads(meta["params"])["prediction"] == winner.to_dict()


def test_behavior_engine_forecasts_match_replay():
    from thatchlab.synth.behavior import BehaviorWorld

    w = BehaviorWorld(seed=0)
    log, emb = w.log(150), w.lookup_embedder()
    res = sweep(log, {"k": [1.0, 5.0]}, "brier", engine="behavior", embedder=emb)
    assert res["engine"].tolist() == ["behavior", "behavior"] and res["val_n_forecasts"].gt(0).all()
    plan = prepare(_sorted(log), "behavior", embedder=emb)
    n = len(log)
    b = int(np.floor(0.8 * n))
    for row in res.itertuples():
        p = ScoringParams(k=row.k)
        ev = plan.run(p, metrics=False).events
        ref = prequential_scores(ev[ev["position"] >= b], METRIC_SOFT_WEIGHT)
        assert row.test_brier == pytest.approx(ref["brier"], rel=1e-12, abs=1e-15)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 2), st.floats(0.0, 1.0)), min_size=1, max_size=30),
       st.lists(st.floats(0.0, 2.0), min_size=1, max_size=4), st.randoms())
def test_forecast_scores_bounds_and_order_invariance(rows, weights, rnd):
    kind = np.array([k for k, _ in rows])
    y, soft = kind == 0, kind == 2
    F = np.array([[f * (j + 1) / (len(weights) + 1) for j in range(len(weights))] for _, f in rows])
    out = forecast_scores(y, soft, F, weights)
    perm = list(range(len(rows)))
    rnd.shuffle(perm)
    again = forecast_scores(y[perm], soft[perm], F[perm], weights)
    for m in ("log_loss", "brier", "ece"):
        ok = np.isfinite(out[m])
        assert np.allclose(out[m][ok], again[m][ok], rtol=1e-9, atol=1e-12)
        assert np.array_equal(ok, np.isfinite(again[m]))
    ok = np.isfinite(out["brier"])
    assert (out["log_loss"][ok] >= 0).all()
    assert ((out["brier"][ok] >= 0) & (out["brier"][ok] <= 1)).all()
    assert ((out["ece"][ok] >= 0) & (out["ece"][ok] <= 1 + 1e-12)).all()


def test_regimes_from_nudges_equal_plan_run(world):
    log, emb = world
    plan = prepare(_sorted(log), "prediction", embedder=emb)
    base = ScoringParams(threshold=0.45, k=2.0)
    res = plan.run(base, metrics=False)
    for sc in (0.5, 0.6, 0.7, 0.9):
        for se in (0, 1, 3, 8):
            for margin in (0.0, 0.05, 0.1, 1.0):
                p = base.replace(strong_confidence=sc, strong_evidence=se, conflict_margin=margin)
                ref = plan.run(p, metrics=False).events["regime"].to_numpy(object)
                got = regimes_from_nudges(res.events, res.nudges, p)
                assert got.tolist() == ref.tolist()
    assert {"strong", "ambiguous", "none"} <= set(ref.tolist()) | set(
        regimes_from_nudges(res.events, res.nudges, base.replace(strong_confidence=0.5, strong_evidence=0)))


# -- the per-cluster bookkeeping ---------------------------------------------------------------------
def test_cluster_bookkeeping_leaves_rows_unchanged_and_survives_the_cache(world, tmp_path):
    from thatchlab.sweep.registry import CLUSTERS_KEY

    log, emb = world
    base = get_engine("prediction")

    def without(prepared, params_list, segments, metric=None, boot=None):
        rows = base.evaluate(prepared, params_list, segments, metric, boot)
        return [{k: v for k, v in r.items() if k != CLUSTERS_KEY} for r in rows]

    space = {"k": [2.0, 5.0], "strong_confidence": [0.6, 0.7]}
    full = sweep(log, space, "interruption_rate", embedder=emb, cache=tmp_path / "c.parquet", chunk_size=1)
    plain = sweep(log, space, "interruption_rate", embedder=emb,
                  engine=dataclasses.replace(base, evaluate=without))
    pd.testing.assert_frame_equal(full.drop(columns="sweep_id"), plain.drop(columns="sweep_id"))
    assert "clusters" in full.attrs and "clusters" not in plain.attrs
    again = sweep(log, space, "interruption_rate", embedder=emb, cache=tmp_path / "c.parquet")
    a, b = full.attrs["clusters"], again.attrs["clusters"]
    assert a.config_ids == b.config_ids and sorted(a.num) == sorted(b.num)
    for key in a.num:
        assert np.array_equal(a.num[key], b.num[key]) and np.array_equal(a.den[key], b.den[key])


@pytest.mark.filterwarnings("ignore:sweep.*cannot see threshold:UserWarning")
def test_cluster_sums_are_stored_once_per_distinct_array(world, tmp_path):
    """A K × threshold × strong-bar grid: each K group shares its forecast sums, each threshold its
    coverage, so far fewer rows than configurations are stored, yet every accessor gives the
    matrices of the engine's arrays stacked per configuration, bit for bit."""
    from thatchlab.sweep._runner import Cache
    from thatchlab.sweep.registry import CLUSTERS_KEY, ClusterStats

    log, emb = world
    base = get_engine("prediction")
    seen = {}

    def copying(prepared, params_list, segments, metric=None, boot=None):
        """The engine, every per-cluster array a fresh copy (nothing shared by identity)."""
        rows = base.evaluate(prepared, params_list, segments, metric, boot)
        for p, r in zip(params_list, rows):
            r[CLUSTERS_KEY] = {k: (np.array(n), np.array(d)) for k, (n, d) in r[CLUSTERS_KEY].items()}
            seen[p] = r[CLUSTERS_KEY]
        return rows

    space = {"k": [2.0, 5.0], "threshold": [0.55, 0.6], "strong_confidence": [0.6, 0.7, 0.8]}
    metrics = ["interruption_rate", "log_loss"]
    cache = tmp_path / "c.parquet"
    res = sweep(log, space, metrics, embedder=emb, cache=cache, chunk_size=5)
    ref = sweep(log, space, metrics, embedder=emb, engine=dataclasses.replace(base, evaluate=copying))
    pd.testing.assert_frame_equal(res.drop(columns="sweep_id"), ref.drop(columns="sweep_id"))
    stats, other = res.attrs["clusters"], ref.attrs["clusters"]
    n, cids = len(res), list(res["config_id"])
    assert n == 12 and stats.config_ids == cids and other.config_ids == cids
    by_cid = {c: seen[p] for c, p in zip(cids, [ScoringParams(**{f: r[f] for f in space})
                                                for r in res[list(space)].to_dict("records")])}
    for seg in ("val", "test"):
        assert len(np.unique(stats.num_index[("log_loss", seg)])) <= 2  # one per K
        assert len(np.unique(stats.num_index[("coverage", seg)])) <= 4  # one per (K, threshold)
        assert stats.den_index[("log_loss", seg)] is stats.den_index[("brier", seg)]
    full_rows = 2 * len(stats.keys()) * n
    assert stats.n_rows() < full_rows / 3
    full_bytes = sum(a.nbytes for m in (stats.num, stats.den) for a in m.values())
    assert stats.nbytes() < full_bytes / 3
    # copies of equal arrays are stored once too (matched by their bits)
    assert other.n_rows() == stats.n_rows() and other.nbytes() == stats.nbytes()
    for key in stats.keys():
        metric, seg = key
        want_num = np.stack([by_cid[c][key][0] for c in cids])
        want_den = np.stack([by_cid[c][key][1] for c in cids])
        for got in (stats, other):
            assert got.num[key].tobytes() == want_num.tobytes() and got.den[key].tobytes() == want_den.tobytes()
            num, den = got.sums(metric, seg, cids[::-1])
            assert num.tobytes() == want_num[::-1].tobytes() and den.tobytes() == want_den[::-1].tobytes()
            with np.errstate(divide="ignore", invalid="ignore"):
                value = want_num.sum(axis=1) / want_den.sum(axis=1)
            assert got.value(metric, seg, cids).tobytes() == value.tobytes()
    # the sidecar keeps the compact form, and a resumed sweep reads the same sums back
    with np.load(Cache(cache, res["sweep_id"].iloc[0]).sidecar) as z:
        assert int(z["format"]) == 2 and "num0" not in z.files
        assert sum(len(z[f]) for f in z.files if f.startswith("rows")) == stats.n_rows()
    again = sweep(log, space, metrics, embedder=emb, cache=cache).attrs["clusters"]
    assert isinstance(again, ClusterStats) and again.n_rows() == stats.n_rows()
    for key in stats.keys():
        assert again.num[key].tobytes() == stats.num[key].tobytes()
        assert again.den[key].tobytes() == stats.den[key].tobytes()


@pytest.mark.filterwarnings("ignore:sweep.*cannot see threshold:UserWarning")
def test_old_cluster_sidecars_still_resume(world, tmp_path):
    """A sidecar of full matrices (format 1, before the compact form) is still read."""
    import os

    from thatchlab.sweep._runner import Cache

    log, emb = world
    space = {"k": [2.0, 5.0], "threshold": [0.55, 0.6]}
    cache = tmp_path / "c.parquet"
    res = sweep(log, space, "interruption_rate", embedder=emb, cache=cache)
    stats = res.attrs["clusters"]
    sidecar = Cache(cache, res["sweep_id"].iloc[0]).sidecar
    keys = stats.keys()
    old = {"config_ids": np.array(stats.config_ids, dtype=str),
           "keys": np.array(json.dumps([list(k) for k in keys]))}
    for j, k in enumerate(keys):
        old[f"num{j}"], old[f"den{j}"] = np.array(stats.num[k]), np.array(stats.den[k])
    os.remove(sidecar)
    np.savez(sidecar, **old)
    again = sweep(log, space, "interruption_rate", embedder=emb, cache=cache)
    pd.testing.assert_frame_equal(again, res)
    got = again.attrs["clusters"]
    assert got.keys() == keys and got.n_rows() == stats.n_rows()
    for k in keys:
        assert got.num[k].tobytes() == stats.num[k].tobytes() and got.den[k].tobytes() == stats.den[k].tobytes()


def test_unidentified_parameters_are_named(world):
    log, emb = world
    with pytest.warns(UserWarning, match="brier cannot see threshold"):
        res = sweep(log, {"k": [2.0, 5.0], "threshold": [0.55, 0.6]}, "brier", embedder=emb)
    assert res.attrs["unidentified"] == ["threshold"]
    assert res.attrs["identification"] == {"brier": ["threshold"]}
