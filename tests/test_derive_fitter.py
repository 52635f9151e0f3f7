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
