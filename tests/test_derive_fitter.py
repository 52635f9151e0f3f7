"""thatchlab.tune.derive (DeriveWeightsFitter) on thatchlab.synth.recall (RecallWorld)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from thatchlab.calibration import CalibrationParams, derive
from thatchlab.core.errors import InputError
from thatchlab.synth.recall import PLANTED, RecallWorld
from thatchlab.tune.derive import COEFS, DeriveWeightsFitter, recalibrate, recall_features


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
    # the identification flag is new (issue 12, item 6); the other columns are as before
    assert list(fitted.summary_.columns) == ["coef", "se", "ci_lower", "ci_upper", "identified", "hand_set"]


def test_print_summary_shows_the_fit_and_every_coefficient(fitted, capsys):
    fitted.print_summary()
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert lines[0] == repr(fitted)
    assert "fitted = derive coefficients and half-life" in out and "n = 6000 judged recalls" in out
    assert f"log-likelihood = {fitted.log_likelihood_:.1f}" in out and "converged = True" in out
    rows = {line.split()[0]: line.split()[1:] for line in lines if line.strip()}
    for name in COEFS:
        assert rows[name] == [str(v) if isinstance(v, (bool, np.bool_)) else f"{v:.4g}"  # the identified flag
                              for v in fitted.summary_.loc[name]], name
    assert rows["atom_bump"][-1] == "0.1"  # the hand-set value beside the fitted one


def test_learned_state_before_fit_raises_not_fitted(world):
    from thatchlab.tune import NotFittedError

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
    # never se 0: the parameters the likelihood does not contain have no finite se or interval
    assert s.loc["age_penalty", ["se", "ci_lower", "ci_upper"]].tolist() == [np.inf, -np.inf, np.inf]
    assert s.loc["half_life_days", ["se", "ci_lower", "ci_upper"]].tolist() == [np.inf, 0.0, np.inf]
    # the three the data do see get finite intervals that cover the planted values
    for name in ("intercept", "atom_bump", "corroboration_weight"):
        lo, hi = s.loc[name, "ci_lower"], s.loc[name, "ci_upper"]
        assert np.isfinite([lo, hi]).all() and 0 < s.loc[name, "se"] < hi - lo, name
        assert lo <= getattr(PLANTED, name) <= hi, name
    # honest convergence: the optimisers stopped on their tolerances at a point with no gradient left
    # on the identified parameters, so this fit did converge (on those three)
    assert f.converged_ is True and f.gradient_norm_ < 1e-2
    assert np.isnan(f.covariance_[3]).all() and np.isnan(f.covariance_[:, 4]).all()


def test_a_fit_cut_short_says_it_did_not_converge(monkeypatch, world):
    import thatchlab.tune.derive as derive_module

    monkeypatch.setattr(derive_module, "_SIMPLEX_OPTIONS", {"maxiter": 5})
    monkeypatch.setattr(derive_module, "_BFGS_OPTIONS", {"maxiter": 1})
    with pytest.warns(UserWarning, match="did not converge .*optimiser stopped early"):
        f = DeriveWeightsFitter().fit(world.log.iloc[:1500])
    assert f.converged_ is False and "converged_=False" in repr(f)


def test_profile_interval_ends_are_where_the_deviance_reaches_the_chi2_quantile(world, fitted):
    from thatchlab.tune.derive import _Likelihood, _maximise

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
            assert 2 * (ll_hat - llp) == pytest.approx(3.8415, abs=0.01), (name, end)
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
    from thatchlab.tune.derive import interval_coverage

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
