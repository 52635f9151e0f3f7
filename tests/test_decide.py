"""tune.decide, pareto, constraints and identification: decisions a researcher can defend."""

import json
import warnings

import numpy as np
import pandas as pd
import pytest

from thatchlab.core.errors import InputError
from thatchlab.core.params import ScoringParams
from thatchlab.synth import BeliefWorld, PreferenceWorld
from thatchlab.tune import best, combine_decisions, decide, identification, pareto, sweep
from thatchlab.tune.decide import EVIDENCE_COLUMNS, _holm_levels, holm, paired_difference
from thatchlab.tune.registry import ClusterStats, cluster_resamples


@pytest.fixture(scope="module")
def world():
    w = PreferenceWorld(seed=0)
    return w.log(600), w.lookup_embedder()


def _quiet(fn, *args, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return fn(*args, **kw)


@pytest.fixture(scope="module")
def regime_sweep(world):
    log, emb = world
    space = {"k": [2.0, 5.0], "threshold": [0.45, 0.6], "strong_confidence": [0.5, 0.7]}
    return _quiet(sweep, log, space, ["interruption_rate", "wrong_silent_follow_rate", "log_loss"], embedder=emb)


# -- identification -------------------------------------------------------------------------------
def test_threshold_under_log_loss_is_unidentified_and_never_shipped(world):
    log, emb = world
    with pytest.warns(UserWarning, match="log_loss cannot see threshold"):
        res = sweep(log, {"k": [2.0, 5.0], "threshold": [0.55, 0.6, 0.65]}, "log_loss", embedder=emb)
    assert res.attrs["unidentified"] == ["threshold"]
    with pytest.warns(UserWarning, match="3 configurations tie on val_log_loss"):
        b = best(res, "log_loss")
    assert len(b.ties) == 3 and sorted(b.ties["threshold"]) == [0.55, 0.6, 0.65]
    assert b.params.threshold == 0.60 and b.row["threshold"] == 0.60  # production's, not the first tied 0.55
    with pytest.warns(UserWarning, match="tie"):
        d = decide(res, "log_loss", n_boot=300)
    row = d.evidence.set_index("parameter").loc["threshold"]
    assert not row["shipped"] and "cannot see threshold" in row["reason"]
    assert d.params.threshold == 0.60 and d.unidentified == ["threshold"]
    assert "threshold" not in d.shipped_parameters()


def test_probe_finds_a_declared_parameter_that_does_not_move_the_metric():
    # k can move interruption_rate, but here every confidence falls in the same regime
    res = pd.DataFrame({"k": [2.0, 2.0, 5.0, 5.0], "strong_confidence": [0.5, 0.7, 0.5, 0.7],
                        "val_interruption_rate": [0.2, 0.4, 0.2, 0.4],
                        "test_interruption_rate": [0.25, 0.5, 0.25, 0.5], "engine": "prediction"})
    out = identification(res, "interruption_rate")
    assert out["swept"] == ["k", "strong_confidence"] and out["unidentified"] == ["k"]
    assert identification(res.assign(test_interruption_rate=[0.25, 0.5, 0.3, 0.5]),
                          "interruption_rate")["unidentified"] == []


# -- directions, ties, constraints, Pareto --------------------------------------------------------
def test_best_takes_the_registered_direction_and_constraints():
    res = pd.DataFrame({"episodic": [1.0, 2.0, 3.0], "val_auc": [0.6, 0.8, 0.7], "test_auc": [0.6, 0.7, 0.7],
                        "val_brier": [0.3, 0.1, 0.2], "engine": "belief"})
    assert best(res, "auc").params.episodic == 2.0  # maximised
    assert best(res, "brier").params.episodic == 2.0  # minimised
    assert best(res, "auc", constraint={"brier": (">=", 0.2)}).params.episodic == 3.0
    assert best(res, "auc", constraint={"brier": (">", 0.2)}).params.episodic == 1.0
    assert best(res, "auc", constraint={"brier": ("<", 0.15)}).val == 0.8
    with pytest.raises(InputError, match="no configuration"):
        best(res, "auc", constraint={"brier": ("<=", 0.0)})
    with pytest.raises(InputError, match="op in"):
        best(res, "auc", constraint={"brier": ("==", 0.1)})
    with pytest.raises(InputError, match="val_coverage"):
        best(res, "auc", constraint={"coverage": ("<=", 0.1)})


def test_pareto_literal():
    res = pd.DataFrame({"k": [1.0, 2.0, 3.0, 4.0, 5.0, 6.0],
                        "val_interruption_rate": [0.2, 0.3, 0.1, 0.3, np.nan, 0.2],
                        "val_wrong_silent_follow_rate": [0.05, 0.01, 0.09, 0.02, 0.0, 0.05],
                        "engine": "prediction"})
    # both minimised: k=4 is beaten by k=2, k=6 equals k=1 (kept), k=5 has a NaN
    front = pareto(res, ["interruption_rate", "wrong_silent_follow_rate"])
    assert front["k"].tolist() == [1.0, 2.0, 3.0, 6.0]
    res["val_coverage"] = [0.5, 0.4, 0.4, 0.6, 0.5, 0.5]  # maximised
    assert pareto(res, ["interruption_rate", "coverage"])["k"].tolist() == [1.0, 3.0, 4.0, 6.0]
    front = pareto(res, ["interruption_rate", "coverage"], constraint={"wrong_silent_follow_rate": ("<=", 0.05)})
    assert front["k"].tolist() == [1.0, 4.0, 6.0]


def test_several_metrics_in_one_sweep(regime_sweep):
    res = regime_sweep
    assert res.attrs["metric"] == "interruption_rate"
    assert res.attrs["metrics"] == ["interruption_rate", "wrong_silent_follow_rate", "log_loss"]
    # the optimised metric is identified by attrs, never by reordering columns
    assert res.columns[res.columns.str.startswith("val_")][0] == "val_log_loss"
    for m in ("interruption_rate", "wrong_silent_follow_rate", "log_loss", "coverage"):
        assert res[f"test_{m}"].notna().all()
    # log_loss cannot see the strong bar; the regime metrics can
    assert "strong_confidence" in res.attrs["identification"]["log_loss"]
    assert "strong_confidence" not in res.attrs["identification"]["interruption_rate"]


# -- the per-cluster sums -------------------------------------------------------------------------
def test_cluster_sums_reproduce_every_ratio_score(regime_sweep, world):
    res = regime_sweep
    stats = res.attrs["clusters"]
    assert isinstance(stats, ClusterStats) and stats.unit == "session"
    log, _ = world
    assert len(stats.labels["val"]) + len(stats.labels["test"]) <= log["session"].nunique() + 1
    for m in ("log_loss", "brier", "interruption_rate", "wrong_silent_follow_rate", "coverage"):
        for seg in ("val", "test"):
            got = stats.value(m, seg, res["config_id"])
            np.testing.assert_allclose(got, res[f"{seg}_{m}"].to_numpy(np.float64), rtol=1e-12, atol=1e-15)
            num, den = stats.sums(m, seg, res["config_id"])
            assert num.dtype == np.float64 and num.shape == (len(res), len(stats.labels[seg]))
    # a copied frame shares the sums (bounded memory), never copies them
    assert res.copy().attrs["clusters"] is stats


def test_sweep_intervals_share_one_set_of_resamples(world):
    log, emb = world
    res = _quiet(sweep, log, {"threshold": [0.55, 0.6]}, "log_loss", embedder=emb, intervals=50, seed=3)
    # threshold cannot move log_loss: identical scores get identical intervals (same resamples)
    for seg in ("val", "test"):
        assert res[f"{seg}_log_loss_lo"].nunique() == 1 and res[f"{seg}_log_loss_hi"].nunique() == 1
        assert (res[f"{seg}_log_loss_lo"] < res[f"{seg}_log_loss"]).all()


# -- decide -----------------------------------------------------------------------------------------
def test_a_planted_improvement_is_shipped_with_an_interval_excluding_zero(regime_sweep):
    d = decide(regime_sweep, "interruption_rate", n_boot=500)
    ev = d.evidence.set_index("parameter")
    row = ev.loc["strong_confidence"]
    assert row["shipped"] and row["candidate"] == 0.5 and row["ci_upper"] < 0 and row["delta"] < 0
    assert "ships strong_confidence=0.5" in row["reason"]
    assert d.params.strong_confidence == 0.5 and d.params.threshold == 0.6
    assert d.default == ScoringParams() and d.candidate.strong_confidence == 0.5
    assert d.combined["ci_upper"] < 0 and d.n_configs == len(regime_sweep)
    assert list(d.evidence.columns) == list(EVIDENCE_COLUMNS)
    assert (d.evidence.loc[d.evidence["shipped"], "detectable"] > 0).all()
    assert np.isfinite(d.optimism)
    assert "ship" in repr(d) and "<table" in d._repr_html_()


def test_no_real_difference_keeps_the_default(world):
    log, emb = world
    res = _quiet(sweep, log, {"k": [4.8, 5.0, 5.2], "threshold": [0.55, 0.6]}, "log_loss", embedder=emb)
    d = _quiet(decide, res, "log_loss", n_boot=500)
    row = d.evidence.set_index("parameter").loc["k"]
    assert row["candidate"] != 5.0 and not row["shipped"]
    assert row["ci_lower"] < 0 < row["ci_upper"] and "contains 0" in row["reason"]
    assert d.shipped_parameters() == [] and d.params == ScoringParams()
    assert row["detectable"] > abs(row["delta"])


def test_constraint_and_records(regime_sweep):
    d = decide(regime_sweep, "interruption_rate", constraint={"wrong_silent_follow_rate": ("<=", 0.12)},
               n_boot=300)
    wsf = regime_sweep.set_index("config_id")["val_wrong_silent_follow_rate"]
    from thatchlab.tune import config_id

    assert wsf[config_id("prediction", d.candidate)] <= 0.12
    assert d.n_configs == int((regime_sweep["val_wrong_silent_follow_rate"] <= 0.12).sum())
    recs = d.to_records()
    assert all(list(r) == list(EVIDENCE_COLUMNS) for r in recs)
    json.dumps(recs)  # JSON-safe, NaN as null
    assert [r["parameter"] for r in recs] == d.evidence["parameter"].tolist()


def test_combine_decisions_takes_each_parameter_from_the_metric_that_sees_it(regime_sweep):
    on_ll = _quiet(decide, regime_sweep, "log_loss", n_boot=300)
    on_ir = _quiet(decide, regime_sweep, "interruption_rate", n_boot=300)
    assert "strong_confidence" in on_ll.unidentified
    merged = combine_decisions([on_ll, on_ir])
    ev = merged.evidence.set_index("parameter")
    assert ev.loc["k", "metric"] == "log_loss"  # both see k: the first decision's
    assert ev.loc["strong_confidence", "metric"] == "interruption_rate" and ev.loc["strong_confidence", "shipped"]
    assert merged.params.strong_confidence == 0.5 and merged.metric == "log_loss + interruption_rate"
    assert merged.unidentified == ["threshold"] and merged.params.threshold == 0.6
    assert on_ll.merge(on_ir).evidence.equals(merged.evidence)


def test_decide_refuses_what_it_cannot_do_honestly(world, regime_sweep):
    log, emb = world
    res = _quiet(sweep, log, {"k": [2.0, 10.0]}, "log_loss", embedder=emb)
    with pytest.raises(InputError, match=r"production's default configuration.*include production's default"):
        decide(res, "log_loss")
    with pytest.raises(InputError, match="ece.*supported metrics: log_loss, brier"):
        decide(regime_sweep, "ece")
    with pytest.raises(InputError, match="clusters are 'session'"):
        decide(regime_sweep, "interruption_rate", cluster="item")
    blog = BeliefWorld(seed=0).log(n_memories=20, days=40)
    bres = _quiet(sweep, blog, {"episodic": [3.0, 7.0]}, "brier", engine="belief")
    with pytest.raises(InputError, match="not supported for engine 'belief' yet"):
        decide(bres, "brier")


# -- the statistics ----------------------------------------------------------------------------------
def test_holm_literal():
    assert holm([0.01, 0.04, 0.03]).tolist() == [0.03, 0.06, 0.06]
    assert holm([0.005, 0.5]).tolist() == [0.01, 0.5]
    assert holm([0.2, 0.9, 0.01, 0.04]).tolist() == [0.4, 0.9, 0.04, 0.12]
    assert _holm_levels([0.01, 0.04, 0.03], 0.05).tolist() == pytest.approx([0.05 / 3, 0.05, 0.025])


def _clustered(rng, n_clusters, delta):
    """Two configurations scored on the same clustered rows; E[m_B − m_A] = delta exactly."""
    sizes = rng.integers(1, 12, n_clusters)
    cl = np.repeat(np.arange(n_clusters), sizes)
    u = rng.standard_normal(n_clusters)[cl]
    v = rng.standard_normal(n_clusters)[cl]  # the configurations differ more in some sessions
    a = u + 0.3 * rng.standard_normal(cl.size)
    b = a + delta + v + 0.3 * rng.standard_normal(cl.size)
    return cl, a, b


def test_paired_cluster_bootstrap_covers_at_the_nominal_rate():
    rng = np.random.default_rng(2024)
    n_clusters, delta, reps, n_boot = 60, 0.25, 200, 400
    W = cluster_resamples(n_clusters, n_boot, seed=0)
    cover_cl = cover_row = 0
    for r in range(reps):
        cl, a, b = _clustered(rng, n_clusters, delta)
        ones = np.ones(cl.size)
        sa, sb = np.bincount(cl, a, n_clusters), np.bincount(cl, b, n_clusters)
        den = np.bincount(cl, ones, n_clusters)
        out = paired_difference(sa, den, sb, den, W)
        cover_cl += out["ci_lower"] <= delta <= out["ci_upper"]
        rows = paired_difference(a, ones, b, ones, cluster_resamples(cl.size, n_boot, seed=r))
        cover_row += rows["ci_lower"] <= delta <= rows["ci_upper"]
    assert 0.90 <= cover_cl / reps <= 0.98
    assert cover_row / reps < 0.85  # resampling rows ignores the sessions: too narrow
