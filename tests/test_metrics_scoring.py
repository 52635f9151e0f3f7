"""Metrics of scoring replays: prequential scores, attribution, regimes, estimators."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from thatchlab.core.errors import InputError
from thatchlab.metrics import (
    attribute,
    estimate,
    prequential,
    prequential_scores,
    regime_outcomes,
    regime_rates,
    weighted_reliability,
)
from thatchlab.replay.scoring import EVENT_COLUMNS, NUDGE_COLUMNS


def _events(rows):
    base = {c: None for c in EVENT_COLUMNS}
    out = pd.DataFrame([{**base, "position": j, **r} for j, r in enumerate(rows)], columns=EVENT_COLUMNS)
    for c in ("forecast", "confidence", "n_items"):
        out[c] = out[c].astype("float64")
    return out


def _nudges(rows):
    base = {c: None for c in NUDGE_COLUMNS}
    return pd.DataFrame([{**base, **r} for r in rows], columns=NUDGE_COLUMNS)


@pytest.fixture
def session_log():
    ev = _events([
        {"session": "s1", "kind": "message", "regime": "strong"},                               # 0
        {"session": "s1", "kind": "prediction_update", "item_id": "A", "signal": "create"},     # 1: not an outcome
        {"session": "s1", "kind": "prediction_update", "item_id": "A", "signal": "disconfirm",
         "forecast": 0.75},                                                                      # 2
        {"session": "s2", "kind": "message", "regime": "ambiguous"},                            # 3
        {"session": "s1", "kind": "prediction_update", "item_id": "B", "signal": "soft",
         "forecast": 0.5},                                                                       # 4: still s1's window
        {"session": "s1", "kind": "message", "regime": "none"},                                 # 5
        {"session": "s1", "kind": "prediction_update", "item_id": "B", "signal": "confirm",
         "forecast": 0.45},                                                                      # 6: no surfaced B at 5
        {"session": "s2", "kind": "message", "regime": "skipped"},                              # 7
        {"session": "s2", "kind": "prediction_update", "item_id": "C", "signal": "confirm",
         "forecast": 0.6},                                                                       # 8: after s2's next message
    ])
    nu = _nudges([{"position": 0, "rank": 0, "item_id": "A", "matcher_id": "m"},
                  {"position": 0, "rank": 1, "item_id": "B", "matcher_id": "m"},
                  {"position": 3, "rank": 0, "item_id": "C", "matcher_id": "m"}])
    return ev, nu


def test_attribution_rules(session_log):
    ev, nu = session_log
    att = attribute(ev, nu)
    assert att[["position", "item_id", "outcome"]].values.tolist() == [
        [0, "A", "disconfirm"], [0, "B", "soft"], [3, "C", None]]
    assert att["outcome_position"].tolist()[:2] == [2.0, 4.0]
    assert att["resolved"].tolist() == [True, True, False]


def test_regime_outcomes_and_rates(session_log):
    ev, nu = session_log
    oc = regime_outcomes(ev, nu)
    assert oc["outcome"].tolist() == ["follow_wrong", "interruption", "ask", "skipped"]
    r = regime_rates(oc)
    assert r["interruption_rate"] == pytest.approx(2 / 3)
    assert r["wrong_silent_follow_rate"] == 1.0
    assert r["coverage"] == pytest.approx(2 / 3)
    assert (r["n_messages"], r["n_skipped"], r["n_follow_wrong"]) == (4, 1, 1)


def test_prequential_scores_literal(session_log):
    ev, _ = session_log
    pq = prequential(ev, soft_weight=0.25)
    assert pq["signal"].tolist() == ["disconfirm", "soft", "confirm", "confirm"]
    assert pq["weight"].tolist() == [1.0, 0.25, 1.0, 1.0]
    s = prequential_scores(ev, 0.25)
    y, p, w = np.array([0, 0, 1, 1.0]), np.array([0.75, 0.5, 0.45, 0.6]), np.array([1, 0.25, 1, 1])
    assert s["n_forecasts"] == 4
    assert s["brier"] == pytest.approx(np.average((y - p) ** 2, weights=w))
    assert s["log_loss"] == pytest.approx(np.average(-(y * np.log(p) + (1 - y) * np.log(1 - p)), weights=w))
    empty = prequential_scores(ev.iloc[:1], 0.25)
    assert empty["n_forecasts"] == 0 and np.isnan(empty["ece"])


def test_weighted_reliability_bins():
    # 0.1 sits on the first inner edge, so scikit-learn's bins put it in bin 0, below 0.15
    curve = weighted_reliability([1, 0, 1], [0.1, 0.15, 1.0], [1, 3, 1], n_bins=10)
    assert curve["bin"].tolist() == [0, 1, 9]
    assert curve["observed"].tolist() == [1.0, 0.0, 1.0]
    assert curve["count"].tolist() == [1, 1, 1]
    assert curve["weight"].tolist() == [1.0, 3.0, 1.0]
    curve = weighted_reliability([1, 0, 1], [0.11, 0.15, 1.0], [1, 3, 1], n_bins=10)
    assert curve["bin"].tolist() == [1, 9]
    assert curve["observed"].tolist() == [0.25, 1.0]
    assert curve["mean_forecast"].iloc[0] == pytest.approx((0.11 + 0.45) / 4)


@pytest.mark.parametrize("strategy", ["uniform", "quantile"])
def test_reliability_bins_equal_scikit_learn_on_edges(strategy):
    from sklearn.calibration import calibration_curve

    from thatchlab.metrics import reliability_curve

    p = np.array([0.2, 0.3, 0.5, 0.6, 0.2, 0.3, 0.5, 0.6, 0.0, 1.0, 0.45, 0.1])
    y = np.array([1, 0, 0, 1, 0, 0, 1, 1, 0, 1, 0, 1])
    prob_true, prob_pred = calibration_curve(y, p, n_bins=10, strategy=strategy)
    curve = reliability_curve(y, p, n_bins=10, strategy=strategy)
    np.testing.assert_array_equal(curve["observed"].to_numpy(), prob_true)
    np.testing.assert_allclose(curve["mean_forecast"].to_numpy(), prob_pred, rtol=0, atol=1e-15)


def test_ece_separates_forecasts_on_bin_edges():
    from thatchlab.metrics import ece

    # crossed miscalibration: 0.2 always happens, 0.3 never; 0.5 never, 0.6 always.
    # Bins that merged 0.2 with 0.3 and 0.5 with 0.6 hid most of it.
    p = np.repeat([0.2, 0.3, 0.5, 0.6], 25)
    y = np.repeat([1, 0, 0, 1], 25)
    assert ece(y, p) == pytest.approx((0.8 + 0.3 + 0.5 + 0.4) / 4)
    pq = weighted_reliability(y, p)
    assert pq["bin"].tolist() == [1, 2, 4, 5]


def test_estimates_say_what_they_assume():
    rep = estimate([1, 0, 1, 1], [True, True, False, True])
    assert "uniformly at random" in rep.assumption and "assumes it" in rep.assumption
    p = [0.5, 1.0, 1.0, 0.5]
    ratio = estimate([1, 0, 1, 0], [True, True, False, True], p, "ips", denominator=[1, 1, 1, 0])
    plain = estimate([1, 0, 1, 0], [True, True, False, True], p, "snips", denominator=[1, 1, 1, 0])
    assert ratio.value == plain.value
    assert "IPS and SNIPS coincide" in ratio.assumption
    assert "coincide" not in estimate([1, 0, 1, 1], [True] * 4, p, "snips").assumption


def test_estimators_literal():
    v, m = [1, 0, 1, 1], [True, True, False, True]
    assert estimate(v, m).estimator == "replay"
    assert estimate(v, m).value == pytest.approx(2 / 3)
    p = [0.5, 1.0, 1.0, 0.5]
    assert estimate(v, m, p, "ips").value == pytest.approx((2 + 0 + 2) / 4)
    assert estimate(v, m, p, "snips").value == pytest.approx(4 / 5)
    assert estimate([1, 0, 1, 0], m, p, denominator=[1, 1, 1, 0]).value == pytest.approx(2 / 3)
    assert np.isnan(estimate([1], [False]).value)
    with pytest.raises(InputError):
        estimate(v, m, estimator="ips")
    with pytest.raises(InputError):
        estimate(v, m, estimator="dm")


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.floats(0, 1), st.booleans(), st.floats(0.05, 1)), min_size=1, max_size=30),
       st.randoms(use_true_random=False))
def test_snips_bounded_and_order_invariant(rows, rnd):
    v, m, p = (np.array(x) for x in zip(*rows))
    e = estimate(v, m, p, "snips")
    if m.any():
        assert v[m].min() - 1e-12 <= e.value <= v[m].max() + 1e-12
        perm = list(range(len(v)))
        rnd.shuffle(perm)
        assert estimate(v[perm], m[perm], p[perm], "snips").value == pytest.approx(e.value)
    else:
        assert np.isnan(e.value)


def test_bootstrap_interval_coverage():
    """~95% percentile intervals of the replay estimator cover the true mean (200 replications)."""
    rng = np.random.default_rng(11)
    covered = 0
    for r in range(200):
        v = rng.random(120) < 0.3
        m = rng.random(120) < 0.7
        e = estimate(v, m, n_boot=300, seed=r)
        covered += e.ci_low <= 0.3 <= e.ci_high
    assert 0.88 <= covered / 200 <= 0.99
