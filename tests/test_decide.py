"""decide, pareto, constraints and identification: decisions a researcher can defend."""

import json
import warnings

import numpy as np
import pandas as pd
import pytest

from thatchlab.core.errors import InputError
from thatchlab.core.params import ScoringParams
from thatchlab.decide import combine_decisions, decide
from thatchlab.decide._core import EVIDENCE_COLUMNS, _holm_levels, holm, paired_difference
from thatchlab.sweep import best, identification, pareto, sweep
from thatchlab.sweep.registry import ClusterStats, cluster_resamples
from thatchlab.synth import BeliefWorld, PreferenceWorld


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
    row = ev.loc["k"]
    assert row["shipped"] and row["candidate"] == 2.0 and row["ci_upper"] < 0 and row["delta"] < 0
    assert "ships k=2.0" in row["reason"]
    assert d.params.k == 2.0 and d.params.threshold == 0.6 and d.params.strong_confidence == 0.7
    assert d.default == ScoringParams() and d.candidate.k == 2.0
    assert d.combined["ci_upper"] < 0 and d.n_configs == len(regime_sweep)
    assert list(d.evidence.columns) == list(EVIDENCE_COLUMNS)
    assert (d.evidence.loc[d.evidence["shipped"], "detectable"] > 0).all()
    assert np.isfinite(d.optimism)
    assert "ship" in repr(d) and "<table" in d._repr_html_()


def test_parameters_production_has_no_setting_for_never_ship(regime_sweep):
    """The regime classifier's bars are thatchlab's: studied in sweeps, never shipped; the
    candidate is the best configuration that keeps them at the default."""
    d = decide(regime_sweep, "interruption_rate", n_boot=300)
    row = d.evidence.set_index("parameter").loc["strong_confidence"]
    assert not row["shipped"] and row["candidate"] == 0.7
    assert row["reason"].startswith("never ships: production has no setting for strong_confidence")
    unconstrained = best(regime_sweep, "interruption_rate").params
    assert unconstrained.strong_confidence == 0.5  # the sweep's winner used the bar; the decision cannot
    with pytest.raises(InputError, match="keeping strong_confidence at production's default"):
        decide(regime_sweep, "interruption_rate", constraint={"wrong_silent_follow_rate": ("<=", 0.0)})


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
    from thatchlab.sweep import config_id

    wsf = regime_sweep.set_index("config_id")["val_wrong_silent_follow_rate"]
    bar = float(wsf[config_id("prediction", ScoringParams())])
    d = decide(regime_sweep, "interruption_rate", constraint={"wrong_silent_follow_rate": ("<=", bar)},
               n_boot=300)
    assert wsf[config_id("prediction", d.candidate)] <= bar
    assert d.n_configs == int((regime_sweep["val_wrong_silent_follow_rate"] <= bar).sum())
    recs = d.to_records()
    assert all(list(r) == list(EVIDENCE_COLUMNS) for r in recs)
    json.dumps(recs)  # JSON-safe, NaN as null
    assert [r["parameter"] for r in recs] == d.evidence["parameter"].tolist()
    combined = d.combined_record()
    assert combined["parameter"] == "combined" and combined["shipped"] == bool(d.shipped_parameters())
    assert set(combined) >= {"delta", "ci_lower", "ci_upper", "n_clusters", "params", "reason"}
    json.dumps(combined)


def test_combine_decisions_takes_each_parameter_from_the_metric_that_sees_it(regime_sweep):
    on_ll = _quiet(decide, regime_sweep, "log_loss", n_boot=300)
    on_ir = _quiet(decide, regime_sweep, "interruption_rate", n_boot=300)
    assert "strong_confidence" in on_ll.unidentified
    merged = combine_decisions([on_ll, on_ir])
    ev = merged.evidence.set_index("parameter")
    assert ev.loc["k", "metric"] == "log_loss"  # both see k: the first decision's
    assert ev.loc["strong_confidence", "metric"] == "interruption_rate"
    assert not ev.loc["strong_confidence", "shipped"]  # production has no setting for it
    assert merged.params.strong_confidence == 0.7 and merged.metric == "log_loss + interruption_rate"
    assert merged.unidentified == ["threshold"] and merged.params.threshold == 0.6
    assert not hasattr(on_ll, "merge")  # one way to join decisions: combine_decisions


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
    bres = _quiet(sweep, blog, {"episodic": [3.0, 7.0]}, "auc", engine="belief")
    with pytest.raises(InputError, match="'auc' is not a ratio of per-cluster sums.*supported metrics: brier"):
        decide(bres, "auc")


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


# -- what ships, as a whole (planted sweep-shaped frames) -------------------------------------------
def _plant(configs, metric="log_loss", n_clusters=40, seed=0, noise=0.02, extra=None, engine="prediction"):
    """A sweep-shaped frame from exact per-session effects: the public way to plant one.

    ``configs``: ``{(("k", 20.0), ...): (val score, test effect)}``; a configuration's test sums
    are the default's plus ``effect + noise·z_c`` per session (den shared; an array ``effect``
    is the per-session effects themselves), so its true test difference to the default is
    exactly ``effect`` (its weighted mean). ``extra``: ``{metric: {config: per-session
    rate}}`` for constrained metrics.
    """
    from thatchlab.sweep import ClusterStats, config_id

    rng = np.random.default_rng(seed)
    den = rng.integers(5, 40, n_clusters).astype(float)
    base = rng.gamma(4.0, 0.15, n_clusters) * den
    rows, parts = [], {}
    for changes, (val, effect) in configs.items():
        params = ScoringParams().replace(**dict(changes))
        cid = config_id(engine, params)
        per_session = (np.asarray(effect, np.float64) if np.ndim(effect)
                       else effect + noise * rng.standard_normal(n_clusters))
        num = base + per_session * den
        part = {(metric, "test"): (num, den), (metric, "val"): (base, den)}
        row = {**params.to_dict(), "config_id": cid, "engine": engine, f"val_{metric}": val,
               f"test_{metric}": num.sum() / den.sum()}
        for m, by in (extra or {}).items():
            rate = np.full(n_clusters, by[changes])
            part[(m, "test")], part[(m, "val")] = (rate * den, den), (rate * den, den)
            row[f"val_{m}"] = row[f"test_{m}"] = float(by[changes])
        parts[cid] = part
        rows.append(row)
    frame = pd.DataFrame(rows)
    names = sorted({f for changes in configs for f, _ in changes})
    frame = frame[[*names, "config_id", "engine", *[c for c in frame.columns if c.startswith(("val_", "test_"))]]]
    labels = {"test": np.array([f"s{i}" for i in range(n_clusters)]),
              "val": np.array([f"v{i}" for i in range(n_clusters)])}
    metrics = [metric, *(extra or {})]
    frame.attrs.update(engine=engine, metric=metric, metrics=metrics, holdout="0.2",
                       clusters=ClusterStats.merge(parts, "session", labels), unidentified=[],
                       identification={m: [] for m in metrics})
    return frame


_D, _K, _P, _KP = (), (("k", 20.0),), (("p0", 0.3),), (("k", 20.0), ("p0", 0.3))


def test_the_harmful_pair_never_ships_though_each_change_alone_helps():
    # k alone and p0 alone each improve test log-loss by 0.02; together they hurt by 0.03
    frame = _plant({_D: (0.70, 0.0), _K: (0.69, -0.02), _P: (0.69, -0.02), _KP: (0.60, 0.03)})
    d = decide(frame, "log_loss", n_boot=400)
    assert d.params == ScoringParams() and d.shipped_parameters() == []
    assert d.combined["config_id"] is None and d.combined["params"] == {}
    assert not d.combined["gate"]["passed"] and d.combined["gate"]["ci_lower"] > 0  # the pair is worse
    assert all("lies entirely on the worsening side of 0" in r for r in d.evidence["reason"])
    ev = d.evidence.set_index("parameter")
    assert ev.loc["k", "ci_upper"] < 0  # alone it helps, and the evidence says so
    assert "alone, k=20.0 changes test log_loss by -0.02" in ev.loc["k", "reason"]


def test_the_joint_change_ships_when_one_change_alone_hurts():
    # planted K=20, P0=0.3: k=20 at P0=0.5 is worse, the joint change improves by 0.03
    frame = _plant({_D: (0.70, 0.0), _K: (0.72, 0.02), _P: (0.69, -0.005), _KP: (0.60, -0.03)})
    d = decide(frame, "log_loss", n_boot=400)
    from thatchlab.sweep import config_id

    assert d.params == ScoringParams(k=20.0, p0=0.3) and d.shipped_parameters() == ["k", "p0"]
    c = d.combined
    assert c["config_id"] == config_id("prediction", d.params) and c["params"] == {"k": 20.0, "p0": 0.3}
    assert c["ci_upper"] < 0 and c["delta"] == pytest.approx(-0.03, abs=0.004)
    assert set(c) >= {"delta", "ci_lower", "ci_upper", "p_value", "detectable"}
    assert "ships k=20.0 as part of (k=20.0, p0=0.3)" in d.evidence.set_index("parameter").loc["k", "reason"]


def test_a_change_that_adds_nothing_is_dropped_and_the_reduced_row_ships_with_its_interval():
    frame = _plant({_D: (0.70, 0.0), _K: (0.65, -0.03), _P: (0.70, 0.0), _KP: (0.64, -0.03)})
    d = decide(frame, "log_loss", n_boot=400)
    from thatchlab.sweep import config_id

    assert d.params == ScoringParams(k=20.0) and d.shipped_parameters() == ["k"]
    assert d.candidate == ScoringParams(k=20.0, p0=0.3)
    assert d.combined["config_id"] == config_id("prediction", ScoringParams(k=20.0))
    assert d.combined["ci_upper"] < 0
    fam = {tuple(f["changes"]): f for f in d.combined["family"]}
    assert fam[("k",)]["rejected"] and not fam[("k",)]["rest_adds"] and not fam[("p0",)]["rejected"]
    assert "without it improves test log_loss" in d.evidence.set_index("parameter").loc["p0", "reason"]


def test_seven_standard_error_effects_ship_with_a_hundred_resamples_and_three_parameters():
    n, sd = 40, 0.02
    step = 7 * sd / np.sqrt(n)  # 7 standard errors of a paired per-session difference
    fields = (("k", 20.0), ("p0", 0.3), ("soft_weight", 0.5))
    rng = np.random.default_rng(3)
    own = [-step + sd * rng.standard_normal(n) for _ in fields]  # each change's per-session effect
    configs = {}
    for mask in range(8):
        changes = tuple(f for i, f in enumerate(fields) if mask >> i & 1)
        configs[changes] = (0.7 - 0.01 * len(changes),
                            sum((own[i] for i in range(3) if mask >> i & 1), np.zeros(n)))
    d = decide(_plant(configs, n_clusters=n, seed=3), "log_loss", n_boot=100)
    assert d.shipped_parameters() == ["k", "p0", "soft_weight"]
    assert d.combined["p_value"] < 1e-6  # no 2/(B+1) floor
    for r in d.evidence.itertuples():
        # every evidence interval lies below 0, and no reason says it contains 0
        assert r.ci_upper < 0 and "contains 0" not in r.reason and "ships" in r.reason


def test_a_constrained_decision_ships_only_if_the_constraint_holds_on_test():
    wsf = {_D: 0.10, (("threshold", 0.55),): 0.14}
    sc = (("threshold", 0.55),)
    frame = _plant({_D: (0.50, 0.0), sc: (0.40, -0.05)}, metric="interruption_rate",
                   extra={"wrong_silent_follow_rate": wsf})
    frame.loc[frame["threshold"] == 0.55, "val_wrong_silent_follow_rate"] = 0.09  # fine on validation
    d = decide(frame, "interruption_rate", constraint={"wrong_silent_follow_rate": ("<=", 0.12)}, n_boot=300)
    assert d.candidate.threshold == 0.55 and d.shipped_parameters() == []
    c = d.combined["constraint"]["wrong_silent_follow_rate"]
    assert c["value"] == pytest.approx(0.14) and not c["holds"] and c["rule"] == "<= 0.12"
    assert c["ci_lower"] == pytest.approx(0.14) and c["ci_upper"] == pytest.approx(0.14)
    assert "wrong_silent_follow_rate = 0.14" in d.evidence["reason"].iloc[0]
    ok = decide(frame, "interruption_rate", constraint={"wrong_silent_follow_rate": ("<=", 0.15)}, n_boot=300)
    assert ok.shipped_parameters() == ["threshold"]
    assert ok.combined["constraint"]["wrong_silent_follow_rate"]["holds"]


def test_too_few_clusters_refuse_with_the_count():
    d = decide(_plant({_D: (0.7, 0.0), _K: (0.6, -0.5)}, n_clusters=2), "log_loss", n_boot=200)
    assert d.shipped_parameters() == []
    assert "only 2 test sessions hold data" in d.evidence["reason"].iloc[0]


@pytest.mark.parametrize("n_clusters", [5, 8, 12])
def test_false_ship_rate_under_null_effects_stays_below_five_percent(n_clusters):
    from thatchlab.sweep import config_id

    reps, shipped = 200, 0
    rng = np.random.default_rng(n_clusters)
    for r in range(reps):
        frame = _plant({_D: (0.7, 0.0), _K: (0.6, 0.0)}, n_clusters=n_clusters, seed=int(rng.integers(2**31)))
        d = decide(frame, "log_loss", n_boot=200, seed=r)
        shipped += d.combined["config_id"] == config_id("prediction", ScoringParams(k=20.0))
    assert shipped / reps <= 0.05, shipped


# -- one metric for every configuration -------------------------------------------------------------
def test_soft_weight_is_scored_under_production_s_fixed_weights():
    from thatchlab.metrics.scoring import prequential_scores
    from thatchlab.replay.scoring import prepare
    from thatchlab.sweep._scoring_engines import METRIC_SOFT_WEIGHT

    assert METRIC_SOFT_WEIGHT == ScoringParams().soft_weight == 0.25
    w = PreferenceWorld(5, 12, seed=301, noise=0.05)
    log, emb = w.log(1000, seed=1, soft_share=0.5), w.lookup_embedder()
    res = _quiet(sweep, log, {"soft_weight": [0.0, 0.25, 1.0]}, "log_loss", embedder=emb)
    from thatchlab.logs import sort_by_time

    plan = prepare(sort_by_time(log), "prediction", embedder=emb)
    b = int(np.floor(0.8 * len(log)))
    for row in res.itertuples():
        ev = plan.run(ScoringParams(soft_weight=row.soft_weight), metrics=False).events
        fixed = prequential_scores(ev[ev["position"] >= b], 0.25)  # the same weights for everyone
        assert row.test_log_loss == pytest.approx(fixed["log_loss"], rel=1e-12)
    by = res.set_index("soft_weight")["test_log_loss"]
    assert by[0.0] > by[0.25]  # under one metric, ignoring soft signals forecasts worse
    d = _quiet(decide, res, "log_loss", n_boot=300)
    assert d.params.soft_weight != 0.0


def test_log_loss_clips_at_machine_epsilon_like_scikit_learn():
    from sklearn.metrics import log_loss as sk_log_loss

    from thatchlab.metrics.calibration import log_loss
    from thatchlab.sweep._scoring_engines import forecast_cluster_sums, forecast_scores

    y, p = np.array([1.0, 0.0, 1.0, 0.0]), np.array([0.0, 1.0, 1e-17, 0.3])
    ours = log_loss(y, p)
    assert ours == pytest.approx(sk_log_loss(y, p, labels=[0, 1]), rel=1e-12)
    assert ours == pytest.approx((3 * -np.log(np.finfo(float).eps) - np.log(0.7)) / 4, rel=1e-12)
    soft = np.zeros(4, dtype=bool)
    assert forecast_scores(y, soft, p[:, None], [0.25])["log_loss"][0] == pytest.approx(ours, rel=1e-12)
    num, den = forecast_cluster_sums(y, soft, p[:, None], [0.25], [0, 0, 1, 1], 2)["log_loss"]
    assert num.sum() / den.sum() == pytest.approx(ours, rel=1e-12)


@pytest.mark.parametrize("engine, log_name, space, metrics", [
    ("belief", "memory_log.jsonl", {"state": [30.0, 20.0], "plan": [30.0, 12.0]}, ["brier"]),
    ("calibration", "recall_log.jsonl", {"intercept": [0.5, 0.6], "age_penalty": [0.02, 0.05]},
     ["derived_log_loss", "derived_brier", "caller_log_loss", "caller_brier"]),
    ("anticipation", "events.jsonl", {"min_conf": [0.5, 0.3], "k": [3, 5]},
     ["hit_rate_at_k", "prefetch_precision", "recall_at_k", "round_trips_saved_per_session",
      "false_prefetches_per_session"]),
])
def test_belief_calibration_and_anticipation_sweeps_record_cluster_sums_and_decide_on_them(engine, log_name, space, metrics,
                                                                                 repo_root):
    from thatchlab import logs
    from thatchlab.core.params.production import production_params

    data = repo_root / "data"
    if engine == "anticipation":
        log = (logs.read_event_log(data / log_name), logs.read_recall_stream(data / "recalls.jsonl"))
    else:
        log = (logs.read_memory_log if engine == "belief" else logs.read_recall_log)(data / log_name)
    res = _quiet(sweep, log, space, metrics, engine=engine, base=production_params(engine))
    stats = res.attrs["clusters"]
    unit = "session" if engine == "anticipation" else "memory"
    assert stats.unit == unit
    for m in metrics:
        for seg in ("val", "test"):
            num, den = stats.sums(m, seg, res["config_id"].tolist())
            np.testing.assert_allclose(num.sum(axis=1) / den.sum(axis=1), res[f"{seg}_{m}"], rtol=1e-12)
    d = _quiet(decide, res, metrics[0], n_boot=200)
    assert 0 < d.combined["n_clusters"] <= len(stats.labels["test"]) and d.cluster == unit
    assert d.combined_record()["parameter"] == "combined"


# -- denominators (issue 34 point 6) ---------------------------------------------------------------
def test_a_parameter_that_changes_the_metrics_rows_is_never_identified_nor_shipped(world):
    """``min_prompt_chars`` decides which messages count in ``interruption_rate``: a rate over other
    rows is no evidence, whatever it shows (a long bar drops the hard, short prompts)."""
    log, emb = world
    with pytest.warns(UserWarning, match="min_prompt_chars changes which rows interruption_rate counts"):
        res = sweep(log, {"min_prompt_chars": [10, 40, 80]}, "interruption_rate", embedder=emb)
    assert res.attrs["unidentified"] == ["min_prompt_chars"]
    assert res["test_n_messages"].nunique() == 1  # the same test messages, other live ones
    d = _quiet(decide, res, "interruption_rate", n_boot=200)
    row = d.evidence.set_index("parameter").loc["min_prompt_chars"]
    assert d.shipped_parameters() == [] and d.params.min_prompt_chars == 10 and not row["shipped"]
    assert row["reason"].startswith("not identified: min_prompt_chars changes which rows interruption_rate "
                                    "counts (its denominator)")
    assert "min_prompt_chars" in d.unidentified


def test_summary_counts_agree_in_number():
    """Issue 36 point 4: "1 configurations compared"."""
    import dataclasses

    from thatchlab.decide import decide, planted_sweep

    d = decide(planted_sweep(12, -0.05, np.random.default_rng(1)), "log_loss", n_boot=200)
    assert "  1 configuration compared" in dataclasses.replace(d, n_configs=1).summary()
    assert f"  {d.n_configs} configurations compared" in d.summary() and d.n_configs > 1
