"""thatchlab.fit.derive (DeriveWeightsFitter) on thatchlab.synth.recall (RecallWorld)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from thatchlab.calibration import CalibrationParams, derive
from thatchlab.core.errors import InputError
from thatchlab.fit.derive import COEFS, DeriveWeightsFitter, recalibrate, recall_features
from thatchlab.synth.recall import PLANTED, RecallWorld


@pytest.fixture(scope="module")
def world():
    return RecallWorld(n_memories=400, n_recalls=6000, seed=0)


@pytest.fixture(scope="module")
def fitted(world):
    return DeriveWeightsFitter().fit(world.log)


def test_world_plants_derive_odds(world):
    f = recall_features(world.log)
    p = derive(f["age_days"], f["is_atom"], f["corroboration"], **PLANTED.derive_kwargs())
    np.testing.assert_allclose(p.to_numpy(), world.truth.to_numpy())
    assert world.log["ts"].is_monotonic_increasing
    assert (world.log["ts"] >= world.log["created_at"]).all()
    assert world.ledger["consumed"].isin([0, 1]).all() and len(world.ledger) == 6000
    same = RecallWorld(n_memories=400, n_recalls=6000, seed=0)
    pd.testing.assert_frame_equal(same.log, world.log)


def test_fitter_recovers_planted_coefficients(fitted):
    s = fitted.summary_
    assert list(s.index) == list(COEFS)
    for name in COEFS:
        planted = getattr(PLANTED, name)
        assert s.loc[name, "ci_lower"] <= planted <= s.loc[name, "ci_upper"], name
    assert s.loc["atom_bump", "ci_lower"] > 0.1  # the hand-set atom bump is rejected
    assert s.loc["half_life_days", "coef"] == pytest.approx(20.0, rel=0.5)
    assert fitted.params_.atom_bump == s.loc["atom_bump", "coef"]
    assert fitted.n_ == 6000 and fitted.converged_


def test_fitted_likelihood_beats_hand_set_and_planted(world, fitted):
    f = recall_features(world.log)
    y = f["consumed"].to_numpy()

    def ll(params):
        p = np.clip(DeriveWeightsFitter().predict_proba(f, params), 1e-6, 1 - 1e-6)
        return float(np.sum(y * np.log(p) + (1 - y) * np.log1p(-p)))

    assert fitted.log_likelihood_ == pytest.approx(ll(fitted.params_), rel=1e-9)
    assert fitted.log_likelihood_ >= ll(PLANTED) - 1e-6
    assert fitted.log_likelihood_ > ll(CalibrationParams())


def test_compare_on_held_out_time(world, fitted):
    table = fitted.compare(world.log, holdout=0.25)
    assert table["method"].tolist() == ["fitted_derive", "isotonic", "sigmoid", "temperature"]
    assert (table["n_test"] == 1500).all() and (table["n_train"] == 4500).all()
    fit_row = table.iloc[0]
    assert fit_row["brier_after"] < fit_row["brier_before"]
    assert fit_row["log_loss_after"] < fit_row["log_loss_before"]
    assert table["brier_before"].nunique() == 1


def test_recalibrate_methods():
    rng = np.random.default_rng(0)
    p = rng.uniform(0.05, 0.95, 4000)
    y = (rng.random(4000) < p ** 2).astype(float)  # over-confident forecasts
    for m in ("isotonic", "sigmoid", "temperature"):
        q = recalibrate(m, p, y, p)
        assert q.shape == p.shape and np.all((q >= 0) & (q <= 1))
        assert np.mean((q - y) ** 2) <= np.mean((p - y) ** 2)
    with pytest.raises(InputError):
        recalibrate("magic", p, y, p)


def test_fitter_params_and_errors(world):
    f = DeriveWeightsFitter(alpha=0.1).set_params(fit_baseline=True)
    assert f.get_params()["fit_baseline"] is True
    with pytest.raises(InputError):
        f.set_params(bogus=1)
    with pytest.raises(InputError):
        DeriveWeightsFitter().fit(world.log.iloc[:3])
    with pytest.raises(InputError):
        DeriveWeightsFitter().fit(world.log.drop(columns="consumed"))


# -- the BaseFitter conventions ---------------------------------------------------------------

def test_fit_returns_self_and_the_repr_says_what_was_fitted(world, fitted):
    f = DeriveWeightsFitter()
    assert repr(f) == "<DeriveWeightsFitter: not fitted>"
    small = world.log.iloc[:600]
    assert f.fit(small) is f and f.n_ == len(recall_features(small))
    assert repr(fitted) == (f"<DeriveWeightsFitter: fitted with 6000 judged recalls, "
                            f"log_likelihood_={fitted.log_likelihood_:.1f}, converged_=True>")
    pd.testing.assert_frame_equal(fitted.confidence_interval_, fitted.summary_[["ci_lower", "ci_upper"]])
    # the identification flag (issue 12, item 6), and the interval and why in words beside it
    assert list(fitted.summary_.columns) == ["coef", "se", "ci_lower", "ci_upper", "identified", "bound", "note",
                                             "hand_set"]


def test_print_summary_shows_the_fit_and_every_coefficient(fitted, capsys):
    fitted.print_summary()
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert lines[0] == repr(fitted)
    assert "fitted = derive coefficients and half-life" in out and "n = 6000 judged recalls" in out
    assert f"log-likelihood = {fitted.log_likelihood_:.1f}" in out and "converged = True" in out
    rows = {line.split()[0]: line.split()[1:] for line in lines if line.strip()}
    numeric = ["coef", "se", "ci_lower", "ci_upper", "identified"]
    for name in COEFS:
        assert rows[name][:5] == [str(v) if isinstance(v, (bool, np.bool_)) else f"{v:.4g}"  # the identified flag
                                  for v in fitted.summary_.loc[name, numeric]], name
        assert " ".join(rows[name]).find(fitted.summary_.loc[name, "bound"]) > 0, name
    assert rows["atom_bump"][-1] == "0.1"  # the hand-set value beside the fitted one


def test_learned_state_before_fit_raises_not_fitted(world):
    from thatchlab.fit import NotFittedError

    f = DeriveWeightsFitter()
    for name in ("summary_", "confidence_interval_", "log_likelihood_", "params_", "coef_", "n_"):
        with pytest.raises(NotFittedError, match=f"DeriveWeightsFitter is not fitted.*{name}"):
            getattr(f, name)
    with pytest.raises(NotFittedError):
        f.predict_proba(world.log)  # no params given and none fitted


def test_compare_refits_a_copy_with_the_same_params(world):
    f = DeriveWeightsFitter(alpha=0.1, eps=1e-5)
    table = f.compare(world.log.iloc[:1500], holdout=0.2)
    assert table["method"].iloc[0] == "fitted_derive" and repr(f) == "<DeriveWeightsFitter: not fitted>"


# -- intervals, identification and convergence (issue 12, item 6) --------------------------------

def _fresh_touches(n=3000, seed=0, planted=PLANTED):
    """Judged touches that are all age 0: derive is then intercept + atom + corroboration only.

    (A 95% interval misses in one draw of twenty: over seeds 0-19 each of the three identified
    intervals covered 19; seed 5 is a miss for the intercept.)
    """
    rng = np.random.default_rng(seed)
    atom = rng.random(n) < 0.3
    corr = np.minimum(rng.geometric(0.25, n) - 1, 40).astype(float)
    p = derive(np.zeros(n), atom, corr, **planted.derive_kwargs())
    return pd.DataFrame({"age_days": 0.0, "is_atom": atom, "corroboration": corr,
                         "consumed": (rng.random(n) < p).astype(float)})


def test_all_ages_zero_leaves_age_penalty_and_half_life_unidentified():
    with pytest.warns(UserWarning, match="do not inform age_penalty, half_life_days"):
        f = DeriveWeightsFitter().fit(_fresh_touches())
    s = f.summary_
    assert s["identified"].tolist() == [True, True, True, False, False]
    assert not f.identified_
    # never se 0 and never a finite interval: the likelihood does not contain these two at all
    for name in ("age_penalty", "half_life_days"):
        assert s.loc[name, "se"] == np.inf and np.isnan(s.loc[name, ["ci_lower", "ci_upper"]].astype(float)).all()
        assert s.loc[name, "bound"] == "none"
        assert s.loc[name, "note"] == ("flat: every age is 0, so derive does not depend on the age penalty or "
                                       "the half-life; the likelihood does not depend on it")
    # the three the data do see get finite intervals that cover the planted values
    for name in ("intercept", "atom_bump", "corroboration_weight"):
        lo, hi = s.loc[name, "ci_lower"], s.loc[name, "ci_upper"]
        assert np.isfinite([lo, hi]).all() and 0 < s.loc[name, "se"] < hi - lo, name
        assert lo <= getattr(PLANTED, name) <= hi, name
        assert s.loc[name, "bound"] == f"{lo:.4g} to {hi:.4g}" and s.loc[name, "note"] == ""
    # honest convergence: the optimisers stopped on their tolerances at a point with no gradient left
    # on the identified parameters, so this fit did converge (on those three)
    assert f.converged_ is True and f.gradient_norm_ < 1e-2
    assert np.isnan(f.covariance_[3]).all() and np.isnan(f.covariance_[:, 4]).all()


# -- identification from the profile's shape: worlds drawn here, not by thatchlab.synth ------------

_TRUTH = {"intercept": 0.6, "atom_bump": 0.2, "corroboration_weight": 0.15, "age_penalty": 0.05,
          "half_life_days": 20.0, "baseline": 0.5}


def _touches(age, seed, **truth):
    """Judged touches with the given ages; consumed ~ Bernoulli(derive(truth)), written out here."""
    t = {**_TRUTH, **truth}
    rng = np.random.default_rng(seed)
    n = len(age)
    atom = rng.random(n) < 0.3
    corr = np.minimum(rng.geometric(0.25, n) - 1, 40).astype(float)
    z = age * np.log(2) / t["half_life_days"]
    base = np.clip(t["intercept"] + t["atom_bump"] * atom + t["corroboration_weight"] * np.log10(1 + corr)
                   - t["age_penalty"] * z, 0, 1)
    p = base * np.exp(-z) + t["baseline"] * (1 - np.exp(-z))
    return pd.DataFrame({"age_days": age, "is_atom": atom, "corroboration": corr,
                         "consumed": (rng.random(n) < p).astype(float)})


def _loglik(frame, **coefs):
    p = np.clip(derive(frame["age_days"], frame["is_atom"], frame["corroboration"],
                       **CalibrationParams().replace(**coefs).derive_kwargs()).to_numpy(), 1e-6, 1 - 1e-6)
    y = frame["consumed"].to_numpy()
    return float(np.sum(y * np.log(p) + (1 - y) * np.log1p(-p)))


def _honest(s):
    """No unidentified coefficient has a finite two-sided interval: NaN, or exactly one end infinite."""
    for name, row in s.loc[~s["identified"]].iterrows():
        lo, hi = row["ci_lower"], row["ci_upper"]
        assert (np.isnan(lo) and np.isnan(hi)) or (np.isinf(lo) != np.isinf(hi)), (name, lo, hi)
        assert row["note"].startswith("flat: "), name


@pytest.mark.parametrize("seed", [0, 1])
def test_equal_ages_ridge_is_flat_and_reported_unidentified(seed):
    """Every age 10 days: the data see only a − δz and f·(β, γ), so the half-life trades off with the
    age penalty (and the intercept) along an exactly flat ridge from some 40 days up."""
    frame = _touches(np.full(3000, 10.0), seed)
    with pytest.warns(UserWarning, match="do not inform .*age_penalty, half_life_days"):
        f = DeriveWeightsFitter().fit(frame)
    s = f.summary_
    assert not s.loc[["intercept", "age_penalty", "half_life_days"], "identified"].any()
    assert not f.identified_ and f.converged_
    # the intercept and age penalty are free along the ridge: no interval at all
    for name in ("intercept", "age_penalty"):
        assert np.isnan(s.loc[name, ["ci_lower", "ci_upper"]].astype(float)).all() and s.loc[name, "bound"] == "none"
        assert s.loc[name, "se"] == np.inf
    # the half-life: short half-lives are ruled out, long ones are not, so a finite one-sided bound
    hl = s.loc["half_life_days"]
    assert 5.0 < hl["ci_lower"] < 15.0 and hl["ci_upper"] == np.inf and hl["se"] == np.inf
    assert hl["bound"] == f"≥ {hl['ci_lower']:.4g} days"
    assert hl["note"].startswith("flat: ages all equal (10 days), so the half-life and the age penalty "
                                 "trade off; the log-likelihood is within 0.01 of its maximum from ")
    assert "age penalty" in hl["note"].split("; trades off with ")[1]
    _honest(s)
    # the likelihood is flat: move along the ridge exactly (f·β, f·γ and f·(a − δz) + B(1 − f) held)
    # and the log-likelihood, computed by derive itself, does not change from 40 to 1000 days
    c = s["coef"]
    f0 = np.exp(-10 * np.log(2) / c["half_life_days"])
    eta = f0 * (c["intercept"] - c["age_penalty"] * 10 * np.log(2) / c["half_life_days"]) + 0.5 * (1 - f0)
    values = []
    for h in (40.0, 70.0, 150.0, 300.0, 600.0, 1000.0):
        fh, zh = np.exp(-10 * np.log(2) / h), 10 * np.log(2) / h
        values.append(_loglik(frame, intercept=c["intercept"], atom_bump=c["atom_bump"] * f0 / fh,
                              corroboration_weight=c["corroboration_weight"] * f0 / fh, half_life_days=h,
                              age_penalty=(c["intercept"] - (eta - 0.5 * (1 - fh)) / fh) / zh))
    np.testing.assert_allclose(values, f.log_likelihood_, rtol=0, atol=1e-6)
    # ...and the profile the fitter computes agrees: re-optimised at each half-life, within 0.01
    from thatchlab.fit.derive import _Likelihood, _maximise

    x = {k: frame[k].to_numpy(np.float64) for k in frame}
    lik = _Likelihood(x, COEFS, CalibrationParams().derive_kwargs(), 1e-6)
    theta = np.array([c[n] for n in COEFS])
    theta[4] = np.log(theta[4])
    for h in (40.0, 150.0, 1000.0):
        t = theta.copy()
        t[4] = np.log(h)
        assert _maximise(lik, t, np.arange(4), tol=1e-9)[0] == pytest.approx(f.log_likelihood_, abs=0.01)


def test_no_age_effect_gives_the_half_life_a_finite_one_sided_bound():
    """No age effect (age penalty 0, half-life 1e12 days, ages 0-100): the fit runs the half-life far
    past the oldest touch; short half-lives are still ruled out, so it is "≥ X days", not [0, ∞]."""
    frame = _touches(np.random.default_rng(100).uniform(0, 100, 3000), 7, age_penalty=0.0,
                     half_life_days=1e12)
    with pytest.warns(UserWarning, match="do not inform age_penalty, half_life_days"):
        f = DeriveWeightsFitter().fit(frame)
    s = f.summary_
    hl = s.loc["half_life_days"]
    assert hl["coef"] > 1e5 and not hl["identified"]
    assert 100.0 < hl["ci_lower"] < 2000.0 and hl["ci_upper"] == np.inf
    assert hl["bound"] == f"≥ {hl['ci_lower']:.4g} days"
    assert hl["note"].startswith("flat: no age effect: the half-life runs to ")
    assert not s.loc["age_penalty", "identified"] and s.loc["age_penalty", "bound"] == "none"
    # the coefficients the data do see are identified, with finite intervals covering the truth
    for name in ("intercept", "atom_bump", "corroboration_weight"):
        row = s.loc[name]
        assert row["identified"] and row["ci_lower"] <= _TRUTH[name] <= row["ci_upper"], name
        assert np.isfinite(row[["ci_lower", "ci_upper", "se"]].astype(float)).all(), name
    _honest(s)


@pytest.mark.parametrize("seed", [2, 4])
def test_a_normal_world_is_identified_with_finite_intervals(seed):
    frame = _touches(np.random.default_rng(100 + seed).uniform(0, 100, 3000), seed)
    f = DeriveWeightsFitter().fit(frame)
    s = f.summary_
    assert f.converged_ and f.identified_ and s["identified"].all()
    assert np.isfinite(s[["ci_lower", "ci_upper", "se"]].astype(float)).all().all()
    assert (s["note"] == "").all()
    assert (s["ci_lower"] < s["coef"]).all() and (s["coef"] < s["ci_upper"]).all()
    assert s.loc["half_life_days", "bound"] == (f"{s.loc['half_life_days', 'ci_lower']:.4g} days to "
                                                f"{s.loc['half_life_days', 'ci_upper']:.4g} days")


def test_a_fit_cut_short_says_it_did_not_converge(monkeypatch, world):
    import thatchlab.fit.derive as derive_module

    monkeypatch.setattr(derive_module, "_SIMPLEX_OPTIONS", {"maxiter": 5})
    monkeypatch.setattr(derive_module, "_BFGS_OPTIONS", {"maxiter": 1})
    with pytest.warns(UserWarning, match="did not converge .*optimiser stopped early"):
        f = DeriveWeightsFitter().fit(world.log.iloc[:1500])
    assert f.converged_ is False and "converged_=False" in repr(f)


def test_profile_interval_ends_are_where_the_deviance_reaches_the_calibrated_cut(world, fitted):
    from thatchlab.fit.derive import _Likelihood, _maximise

    f = recall_features(world.log)
    x = {k: f[k].to_numpy(np.float64) for k in ("age_days", "is_atom", "corroboration", "consumed")}
    lik = _Likelihood(x, COEFS, CalibrationParams().derive_kwargs(), fitted.eps)
    s = fitted.summary_
    theta = np.array([s.loc[n, "coef"] for n in COEFS])
    theta[4] = np.log(theta[4])
    ll_hat = lik.loglik(theta)
    assert ll_hat == pytest.approx(fitted.log_likelihood_, abs=1e-6)
    for j, name in enumerate(COEFS):
        for end in ("ci_lower", "ci_upper"):
            t = theta.copy()
            t[j] = np.log(s.loc[name, end]) if name == "half_life_days" else s.loc[name, end]
            llp, _ = _maximise(lik, t, np.array([i for i in range(5) if i != j]), tol=1e-9)
            # the cut is χ²₁,₀.₉₅ = 3.8415 scaled by the fit's parametric-bootstrap Bartlett factor
            assert 2 * (ll_hat - llp) == pytest.approx(fitted.deviance_cut_[name], abs=0.01), (name, end)
    assert all(3.8415 - 1e-3 <= c < 2 * 3.8415 for c in fitted.deviance_cut_.values())
    # profile intervals are not symmetric where the likelihood is not quadratic: the half-life's
    # interval reaches further up than down, as a log-scale interval does
    hl = s.loc["half_life_days"]
    assert hl["ci_upper"] - hl["coef"] > 1.3 * (hl["coef"] - hl["ci_lower"])
    assert fitted.identified_ and s["identified"].all() and fitted.gradient_norm_ < 1e-2
    assert (s["se"] > 0).all() and np.isfinite(s["se"]).all()


def test_interval_coverage_at_ci_size_is_near_nominal():
    """20 small worlds (1000 judged recalls each) with the planted truth away from the hand-set
    values: the nominal 95% profile intervals cover. 100 intervals pooled over the five parameters
    must cover in [0.85, 1.0] (a binomial sd is about 0.02 there); each parameter's 20 at least
    0.75, a loose floor, since 20 draws give coverage only to about ±0.05. The full-size check
    (200 worlds of 6000, coverage in [0.90, 0.98] per parameter) is benchmarks/bench_derive_coverage.py.
    """
    from thatchlab.fit.derive import interval_coverage

    cov = interval_coverage(replications=20, n_memories=100, n_recalls=1000, seed=12)
    assert len(cov) == 100 and set(cov["param"]) == set(COEFS)
    assert (cov["planted"] == cov["param"].map(lambda n: getattr(PLANTED, n))).all()
    ident = cov.loc[cov["identified"]]
    assert len(ident) >= 95
    assert 0.85 <= ident["covered"].mean() <= 1.0
    per = ident.groupby("param")["covered"].mean()
    assert (per >= 0.75).all(), per.to_dict()
    # the covered flag is the interval test itself
    assert (ident["covered"] == ((ident["ci_lower"] <= ident["planted"])
                                 & (ident["planted"] <= ident["ci_upper"]))).all()


# -- issue 34 point 7: several modes, calibrated cuts, equal ages -----------------------------------

def _recorded_at_one_age(seed, age=10.0, n=3000):
    """Consumption drawn with ages spread out (exponential, mean 35 days), then every touch recorded
    at one age: the log holds one age, as a log that only keeps a coarse age would."""
    rng = np.random.default_rng(seed)
    t = {"intercept": rng.uniform(0.45, 0.7), "atom_bump": rng.uniform(0.05, 0.25),
         "corroboration_weight": rng.uniform(0.05, 0.2), "age_penalty": rng.uniform(0.01, 0.08),
         "half_life_days": rng.uniform(10, 45)}
    ages = np.minimum(rng.exponential(35.0, n), 150.0)
    atom = rng.random(n) < 0.3
    corr = np.minimum(rng.geometric(0.3, n) - 1, 30).astype(float)
    z = ages * np.log(2) / t["half_life_days"]
    b = np.clip(t["intercept"] + t["atom_bump"] * atom + t["corroboration_weight"] * np.log10(1 + corr)
                - t["age_penalty"] * z, 0, 1)
    p = b * np.exp(-z) + 0.5 * (1 - np.exp(-z))
    return pd.DataFrame({"age_days": age, "is_atom": atom, "corroboration": corr,
                         "consumed": (rng.random(n) < p).astype(float)})


@pytest.mark.parametrize("seed", [103, 105])
def test_one_recorded_age_never_gives_the_half_life_a_two_sided_interval(seed):
    """Seed 103 used to give "3.091 days to 4.805 days", identified (the profile read a bound off
    where derive's clips bind); at one age the half-life only moves the freshness at that age, so
    it is unidentified with no upper bound, and the intercept and age penalty have no interval."""
    with pytest.warns(UserWarning, match="do not inform"):
        f = DeriveWeightsFitter(calibrate=0).fit(_recorded_at_one_age(seed))
    s = f.summary_
    hl = s.loc["half_life_days"]
    assert not hl["identified"] and not f.identified_
    assert not (np.isfinite(hl["ci_lower"]) and np.isfinite(hl["ci_upper"]))
    assert hl["ci_upper"] == np.inf or np.isnan(hl["ci_upper"])
    assert hl["bound"] == "none" or hl["bound"].startswith("≥ ")
    assert hl["note"].startswith("flat: ages all equal (10 days), so the half-life and the age penalty "
                                 "trade off")
    for name in ("intercept", "age_penalty"):
        assert not s.loc[name, "identified"] and s.loc[name, "bound"] == "none"
        assert np.isnan(s.loc[name, ["ci_lower", "ci_upper"]].astype(float)).all()
    _honest(s)


def test_union_of_two_modes_literal():
    """The interval of a parameter with a second mode inside the joint cut: the hull of both modes'
    intervals in ci_lower/ci_upper, the pieces in words when they do not overlap."""
    from thatchlab.fit.derive import _union

    extra = [{"mode": 3, "deviance": 2.5, "theta": np.array([0.6, 0.1, 0.1, -0.15, np.log(9.0)]),
              "intervals": [(0.5, 0.7), (0.0, 0.2), (0.0, 0.2), (-0.21, -0.09), (np.log(7.0), np.log(12.0))]}]
    lo, hi, bound, note = _union("age_penalty", 3, 0.01, 0.08, "0.01 to 0.08", "", extra)
    assert (lo, hi) == (-0.21, 0.08)
    assert bound == "-0.21 to -0.09 or 0.01 to 0.08"
    assert note == ("2 modes the data do not rule out: the estimate and mode 3 (-0.15, deviance 2.5); "
                    "the interval is the union of their profile intervals")
    # overlapping pieces merge; the half-life is reported in days
    lo, hi, bound, _ = _union("half_life_days", 4, 10.0, 30.0, "10 days to 30 days", "", extra)
    assert (lo, hi) == pytest.approx((7.0, 30.0)) and bound == "7 days to 30 days"


def test_multi_start_reaches_both_signs_of_the_age_penalty():
    """An age curve that a positive age penalty with a long half-life and a negative one with a short
    half-life fit about equally: the multi-start lists both maxima (the estimate's and the other)."""
    from thatchlab.fit._derive_profile import _Likelihood, _local_maxima

    frame = _touches(np.random.default_rng(100).uniform(0, 100, 3000), 0)
    x = {k: frame[k].to_numpy(np.float64) for k in frame}
    lik = _Likelihood(x, COEFS, CalibrationParams().derive_kwargs(), 1e-6)
    start = np.array([0.5, 0.1, 0.05, 0.02, np.log(30.0)])
    ends = _local_maxima(lik, start)
    lls = [e[0] for e in ends]
    assert lls == sorted(lls, reverse=True) and len(ends) >= 1
    # every end is a maximum: Fisher scoring from it gains nothing
    from thatchlab.fit.derive import _maximise

    for ll, t in ends:
        assert _maximise(lik, t, np.arange(5), tol=1e-9)[0] == pytest.approx(ll, abs=1e-4)
    f = DeriveWeightsFitter(calibrate=0).fit(frame)
    assert f.log_likelihood_ >= lls[0] - 1e-6
    assert list(f.modes_.columns[:3]) == ["log_likelihood", "deviance", "reported"]
    assert f.modes_.loc[0, "deviance"] == 0.0 and (f.modes_["deviance"] >= 0).all()


def test_calibrated_cuts_are_bartlett_factors_never_below_chi2(world):
    f = DeriveWeightsFitter(calibrate=12, random_state=3).fit(world.log)
    cuts = f.deviance_cut_
    assert list(cuts) == list(COEFS) and f.chi2_cut_ == pytest.approx(3.8415, abs=1e-4)
    assert all(c >= f.chi2_cut_ for c in cuts.values())
    # the same seed gives the same cuts; calibrate=0 gives the plain χ² cut
    again = DeriveWeightsFitter(calibrate=12, random_state=3).fit(world.log).deviance_cut_
    assert again == cuts
    plain = DeriveWeightsFitter(calibrate=0).fit(world.log)
    assert set(plain.deviance_cut_.values()) == {plain.chi2_cut_}
    with pytest.raises(InputError, match="calibrate: expected a whole number ≥ 0"):
        DeriveWeightsFitter(calibrate=-1)
