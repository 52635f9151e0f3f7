"""HalfLifeFitter: censored exponential MLE, exposure segments, recovery of planted half-lives."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from thatchlab.core.errors import InputError
from thatchlab.core.params import BeliefParams
from thatchlab.fit import HalfLifeFitter, exposure_segments
from thatchlab.fit.halflife import NoExposureError, weibull_mle
from thatchlab.synth import BeliefWorld

LN2 = math.log(2)


def test_literal_fit_and_interval():
    f = HalfLifeFitter().fit([10, 10, 10, 10], [True, False, True, False])
    s = f.summary_.loc["all"]
    assert f.half_life_["all"] == pytest.approx(20 * LN2)
    assert (int(s["n"]), int(s["events"]), s["exposure_days"], s["rate"]) == (4, 2, 40.0, 0.05)
    # exact Poisson interval of the rate: chi2(0.025; 4)/80 and chi2(0.975; 6)/80
    assert s["ci_lower"] == pytest.approx(LN2 / (14.449375335447922 / 80))
    assert s["ci_upper"] == pytest.approx(LN2 / (0.4844185570879305 / 80))
    assert s["log_likelihood"] == pytest.approx(2 * math.log(0.05) - 2)
    assert f.fit([1, 2], [1, 0]) is f


def test_no_events_means_infinite_half_life():
    f = HalfLifeFitter().fit([5, 7], [False, False], groups=["identity", "identity"])
    s = f.summary_.loc["identity"]
    assert math.isinf(s["coef"]) and math.isinf(s["ci_upper"]) and s["ci_lower"] == pytest.approx(
        LN2 / (-math.log(0.025) / 12))
    assert f.to_params().identity is None


def test_groups_are_sorted_and_counted():
    f = HalfLifeFitter().fit([1, 2, 3, 4], [1, 1, 0, 1], groups=["state", "plan", "state", None])
    assert list(f.summary_.index) == ["plan", "state", "unclassified"]
    assert f.summary_["events"].tolist() == [1, 1, 1] and f.summary_["n"].tolist() == [1, 2, 1]
    p = f.to_params(BeliefParams(preference=50))
    assert p.state == pytest.approx(4 * LN2) and p.plan == pytest.approx(2 * LN2) and p.preference == 50


@pytest.mark.parametrize("durations, events, groups", [
    ([-1, 2], [1, 0], None), ([np.nan], [1], None), ([1, 2], [1], None), ([], [], None),
    ([1, 2], [1, 0], ["a"]),
])
def test_bad_input_raises(durations, events, groups):
    with pytest.raises(InputError):
        HalfLifeFitter().fit(durations, events, groups)
    with pytest.raises(InputError):
        HalfLifeFitter(alpha=1.5)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.floats(0.01, 500), st.booleans()), min_size=1, max_size=30),
       st.floats(0.1, 10), st.randoms())
def test_scaling_and_order_invariance(rows, scale, rnd):
    t, e = (np.array(x) for x in zip(*rows))
    base = HalfLifeFitter().fit(t, e).summary_
    scaled = HalfLifeFitter().fit(t * scale, e).summary_
    if e.any():
        assert scaled.loc["all", "coef"] == pytest.approx(base.loc["all", "coef"] * scale, rel=1e-9)
        assert base.loc["all", "ci_lower"] <= base.loc["all", "coef"] <= base.loc["all", "ci_upper"]
    perm = list(range(len(t)))
    rnd.shuffle(perm)
    shuffled = HalfLifeFitter().fit(t[perm], e[perm]).summary_
    pd.testing.assert_frame_equal(shuffled, base, rtol=1e-12)


def _log(rows):
    cols = ["ts", "memory_id", "kind", "text", "belief_class", "target_memory_id", "authority",
            "valid_to", "confirmed"]
    return pd.DataFrame([dict(zip(cols, r)) for r in rows], columns=cols)


def d(n):
    return (pd.Timestamp("2026-01-01T00:00:00Z") + pd.Timedelta(days=n)).isoformat()


def test_exposure_segments_follow_the_evidence():
    log = _log([
        (d(0), "a", "write", "a", "state", None, 2, None, None),
        (d(2), "a-r", "restated", None, None, "a", 2, None, None),
        (d(3), "a-w", "contradicted", None, None, "a", 1, None, None),    # weaker: ignored
        (d(5), "a-c", "contradicted", None, None, "a", 2, None, None),    # the end
        (d(6), "a-r2", "restated", None, None, "a", 2, None, None),       # after the end: ignored
        (d(1), "b", "write", "b", "plan", None, None, None, None),
        (d(4), "b", "review", None, None, None, None, None, True),
        (d(7), "b", "delete", None, None, None, None, None, None),        # censors
        (d(1), "c", "write", "c", "plan", None, None, d(3), None),        # named date: left out
        (d(2), "e", "write", "e", None, None, None, None, None),
        (d(9), "e", "review", None, None, None, None, None, False),       # refuting review ends it
        (d(3), "f", "write", "f", "episodic", None, None, None, None),    # censored at end of log
    ])
    seg = exposure_segments(log).sort_values(["memory_id", "start"]).reset_index(drop=True)
    assert seg["memory_id"].tolist() == ["a", "a", "b", "b", "e", "f"]
    assert seg["group"].tolist() == ["state", "state", "plan", "plan", "unclassified", "episodic"]
    assert seg["duration_days"].tolist() == [2.0, 3.0, 3.0, 3.0, 7.0, 6.0]
    assert seg["event"].tolist() == [False, True, False, False, True, False]
    f = HalfLifeFitter().fit_from_log(log)
    assert f.summary_.loc["state", "coef"] == pytest.approx(5 * LN2)
    assert f.segments_.shape[0] == 6


def test_fitter_recovers_planted_half_lives():
    world = BeliefWorld(read_rate=0.0, seed=11)
    log = world.log(n_memories=2500, days=150)
    f = HalfLifeFitter(alpha=0.01).fit_from_log(log)
    checked = 0
    for cls, planted in world.half_lives.items():
        s = f.summary_.loc[cls]
        if planted is None:
            assert s["events"] == 0 and math.isinf(s["coef"])
            continue
        assert s["ci_lower"] <= planted <= s["ci_upper"], (cls, planted, s.to_dict())
        checked += 1
    assert checked == 7
    # the fitted half-lives are far from the seed's priors where the world differs
    assert f.summary_.loc["preference", "ci_upper"] < BeliefParams().preference


def test_weibull_check_flags_non_constant_hazards():
    rng = np.random.default_rng(0)
    expo = rng.exponential(10, 400)
    wear = 10 * rng.weibull(3.0, 400)
    t = np.concatenate([expo, wear])
    g = ["expo"] * 400 + ["wear"] * 400
    f = HalfLifeFitter(weibull=True).fit(t, np.ones(800, dtype=bool), g)
    w = f.weibull_
    assert bool(w.loc["expo", "exponential_ok"]) is True
    assert bool(w.loc["wear", "exponential_ok"]) is False and w.loc["wear", "rho"] > 2
    assert HalfLifeFitter().fit([1], [1]).weibull_ is None


# The Weibull check is SciPy's (lifelines caps pandas below 3, so it is an optional extra only).
# lifelines' parametrisation: S(t) = exp(-(t/λ)^ρ), Wald interval on ρ from the inverse observed
# information (CamDavidsonPilon/lifelines, lifelines/fitters/weibull_fitter.py and
# fitters/__init__.py _compute_confidence_bounds_of_parameters, v0.30.3).
_WEIBULL_T = [0.5, 1.5, 2.0, 7.0, 9.0, 12.0, 3.0, 3.5]
_WEIBULL_E = [True, False, True, True, False, True, True, False]


def test_weibull_mle_values_without_lifelines():
    rho, lam, lo, hi = weibull_mle([1.0, 2.0, 3.0, 4.0, 5.0], [True] * 5)
    assert (rho, lam, lo, hi) == pytest.approx((2.2938066707, 3.3942907181, 0.6330194897, 3.9545938517),
                                               rel=1e-9)
    rho, lam, lo, hi = weibull_mle(_WEIBULL_T, _WEIBULL_E, alpha=0.1)
    assert (rho, lam, lo, hi) == pytest.approx((1.1726984264, 7.5664581685, 0.4789665751, 1.8664302777),
                                               rel=1e-9)
    # the estimate is the likelihood's stationary point: both scores vanish
    t, e = np.array(_WEIBULL_T), np.array(_WEIBULL_E)
    u, z = (t / lam) ** rho, np.log(t / lam)
    assert rho / lam * (u.sum() - e.sum()) == pytest.approx(0, abs=1e-9)
    assert e.sum() / rho + (e * z).sum() - (u * z).sum() == pytest.approx(0, abs=1e-9)
    # fewer than two events, or every event at the longest duration: nothing to estimate
    assert all(math.isnan(v) for v in weibull_mle([1.0, 2.0], [True, False]))
    assert all(math.isnan(v) for v in weibull_mle([2.0, 2.0, 2.0], [True, True, True]))
    # the fitter's table holds the same numbers, with the group's verdict
    w = HalfLifeFitter(alpha=0.1, weibull=True).fit(_WEIBULL_T, _WEIBULL_E).weibull_
    assert w.loc["all", ["rho", "lambda_", "rho_ci_lower", "rho_ci_upper"]].tolist() == pytest.approx(
        [1.1726984264, 7.5664581685, 0.4789665751, 1.8664302777], rel=1e-9)
    assert bool(w.loc["all", "exponential_ok"]) is True


def test_weibull_mle_agrees_with_lifelines_when_installed():
    lifelines = pytest.importorskip("lifelines")  # a cross-check only: the optional extra
    rng = np.random.default_rng(3)
    t = np.concatenate([10 * rng.weibull(1.7, 300), rng.exponential(4.0, 200)])
    e = rng.random(t.size) < 0.8
    for alpha in (0.05, 0.2):
        wf = lifelines.WeibullFitter(alpha=alpha).fit(np.maximum(t, 1e-6), e)
        lo_col = [c for c in wf.summary.columns if c.startswith("coef lower")][0]
        hi_col = [c for c in wf.summary.columns if c.startswith("coef upper")][0]
        ours = weibull_mle(t, e, alpha)
        theirs = (wf.rho_, wf.lambda_, wf.summary.loc["rho_", lo_col], wf.summary.loc["rho_", hi_col])
        assert ours == pytest.approx(theirs, rel=1e-4)  # lifelines stops its optimiser near 1e-6


# -- the BaseFitter conventions ---------------------------------------------------------------

def test_fit_returns_self_and_the_repr_says_what_was_fitted():
    f = HalfLifeFitter()
    assert repr(f) == "<HalfLifeFitter: not fitted>"
    assert f.fit([1, 2, 3, 4], [1, 1, 0, 1], groups=["state", "plan", "state", None]) is f
    assert f.n_ == 4
    # ℓ = Σ_groups d ln λ − λT: plan (1 event, 2 days), state (1, 4), unclassified (1, 4)
    ll = (math.log(0.5) - 1) + 2 * (math.log(0.25) - 1)
    assert f.log_likelihood_ == pytest.approx(ll)
    assert repr(f) == f"<HalfLifeFitter: fitted with 4 exposure segments, groups=3, log_likelihood_={ll:.4g}>"
    pd.testing.assert_frame_equal(f.confidence_interval_, f.summary_[["ci_lower", "ci_upper"]])


def test_print_summary_shows_the_fit_and_every_group(capsys):
    f = HalfLifeFitter(alpha=0.1).fit([1, 2, 3, 4], [1, 1, 0, 1], groups=["state", "plan", "state", None])
    f.print_summary(precision=3)
    out = capsys.readouterr().out
    assert out.splitlines()[0] == repr(f)
    assert "fitted = half-life (days) per group" in out and "n = 4 exposure segments" in out
    assert f"log-likelihood = {f.log_likelihood_:.3g}" in out
    assert "intervals = 90% (alpha = 0.1)" in out and "events = 3" in out
    rows = {line.split()[0]: line.split()[1:4] for line in out.splitlines() if line.strip()}
    for group in ("plan", "state", "unclassified"):
        assert rows[group] == [f"{v:.3g}" for v in f.summary_.loc[group, ["coef", "ci_lower", "ci_upper"]]]
    assert rows["plan"][0] == f"{2 * LN2:.3g}"


def test_learned_state_before_fit_raises_not_fitted():
    from thatchlab.fit import NotFittedError

    f = HalfLifeFitter()
    for name in ("summary_", "confidence_interval_", "log_likelihood_", "half_life_", "n_"):
        with pytest.raises(NotFittedError, match=f"HalfLifeFitter is not fitted.*{name}"):
            getattr(f, name)
    with pytest.raises(NotFittedError):
        f.to_params()
    with pytest.raises(InputError):  # a failed fit leaves the fitter unfitted
        f.fit([], [])
    assert repr(f) == "<HalfLifeFitter: not fitted>"


# -- zero-length exposures (issue 12, item 10) --------------------------------------------------

def test_contradiction_at_the_writes_own_timestamp_is_counted():
    log = _log([
        (d(0), "a", "write", "a", "state", None, 1, None, None),
        (d(0), "a-c", "contradicted", None, None, "a", 1, None, None),   # same instant: a zero-length end
        (d(0), "a-r", "restated", None, None, "a", 1, None, None),       # after the end: ignored
        (d(0), "b", "write", "b", "state", None, 1, None, None),
        (d(4), "b-c", "contradicted", None, None, "b", 1, None, None),
        (d(1), "c", "write", "c", "plan", None, 1, None, None),
        (d(2), "e", "write", "e", "plan", None, 1, None, None),
        (d(2), "e", "delete", None, None, None, None, None, None),       # zero-length, censored: left out
        (d(6), "z", "write", "z", "episodic", None, None, None, None),   # written at the log's end: left out
    ])
    seg = exposure_segments(log).sort_values(["memory_id", "start"]).reset_index(drop=True)
    assert seg["memory_id"].tolist() == ["a", "b", "c"]
    assert seg["duration_days"].tolist() == [0.0, 4.0, 5.0]
    assert seg["event"].tolist() == [True, True, False]
    f = HalfLifeFitter().fit_from_log(log)
    s = f.summary_.loc["state"]
    assert (int(s["n"]), int(s["events"]), s["exposure_days"], s["rate"]) == (2, 2, 4.0, 0.5)
    assert s["coef"] == pytest.approx(2 * LN2)   # today's 4 ln 2 dropped the same-instant contradiction
    assert f.to_params().state == pytest.approx(2 * LN2)
    assert math.isinf(f.summary_.loc["plan", "coef"]) and f.to_params().plan is None


def test_zero_total_exposure_with_events_decays_at_once():
    f = HalfLifeFitter().fit([0.0, 0.0], [True, True], groups=["state", "state"])
    s = f.summary_.loc["state"]
    assert (int(s["n"]), int(s["events"]), s["exposure_days"]) == (2, 2, 0.0)
    assert math.isinf(s["rate"]) and s["coef"] == 0.0
    assert (s["ci_lower"], s["ci_upper"]) == (0.0, 0.0)
    assert s["log_likelihood"] == math.inf and f.log_likelihood_ == math.inf
    from thatchlab.core.errors import ThatchlabError

    with pytest.raises(NoExposureError, match=r"\['state'\] show 2 event\(s\) with zero exposure") as err:
        f.to_params()
    assert isinstance(err.value, ThatchlabError)
    # from a log: every state belief contradicted at its write's own timestamp
    log = _log([
        (d(0), "a", "write", "a", "state", None, 1, None, None),
        (d(0), "a-c", "contradicted", None, None, "a", 1, None, None),
        (d(3), "b", "write", "b", "state", None, 1, None, None),
        (d(3), "b-c", "contradicted", None, None, "b", 1, None, None),
        (d(5), "p", "write", "p", "plan", None, 1, None, None),
        (d(9), "x", "write", "x", "episodic", None, 1, None, None),
    ])
    g = HalfLifeFitter().fit_from_log(log)
    assert g.summary_.loc["state", "coef"] == 0.0 and int(g.summary_.loc["state", "events"]) == 2
    with pytest.raises(NoExposureError, match="state"):
        g.to_params()


def test_no_exposure_and_no_events_learns_nothing():
    f = HalfLifeFitter().fit([0.0, 2.0], [False, False], groups=["state", "identity"])
    s = f.summary_.loc["state"]
    assert np.isnan(s["coef"]) and np.isnan(s["ci_lower"]) and np.isnan(s["ci_upper"]) and np.isnan(s["rate"])
    assert s["log_likelihood"] == 0.0
    p = f.to_params(BeliefParams(state=12.0, identity=40.0))
    assert p.state == 12.0 and p.identity is None   # positive exposure, no event: never decays (as before)


def test_mixed_zero_and_positive_exposures():
    f = HalfLifeFitter().fit([0.0, 0.0, 5.0, 3.0], [True, True, True, False], groups=["state"] * 4)
    s = f.summary_.loc["state"]
    assert (int(s["n"]), int(s["events"]), s["exposure_days"], s["rate"]) == (4, 3, 8.0, 0.375)
    assert s["coef"] == pytest.approx(8 * LN2 / 3)
    # exact Poisson interval of the rate: chi2(0.025; 6)/16 and chi2(0.975; 8)/16
    assert s["ci_lower"] == pytest.approx(LN2 / (17.534546139484647 / 16))
    assert s["ci_upper"] == pytest.approx(LN2 / (1.2373442457912027 / 16))
    assert s["log_likelihood"] == pytest.approx(3 * math.log(0.375) - 3)
    assert f.to_params().state == pytest.approx(8 * LN2 / 3)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.sampled_from([0.0, 0.0, 0.5, 3.0, 40.0]), st.booleans()), min_size=1, max_size=12))
def test_a_class_with_events_never_exports_never_decays(rows):
    t, e = (np.array(x) for x in zip(*rows))
    f = HalfLifeFitter().fit(t, e, groups=["state"] * len(t))
    hl = f.half_life_["state"]
    if e.any():
        assert np.isfinite(hl) and hl >= 0
        if hl == 0:
            with pytest.raises(NoExposureError):
                f.to_params()
        else:
            assert f.to_params().state == pytest.approx(hl) and f.to_params().state > 0
    elif t.sum() > 0:
        assert math.isinf(hl) and f.to_params().state is None
    else:
        assert np.isnan(hl) and f.to_params().state == BeliefParams().state
