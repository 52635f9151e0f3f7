"""Metric inputs are validated as scikit-learn validates them, and scores equal scikit-learn's.

Issue 34 point 9: float32 forecasts clip at float32's epsilon, labels outside {0, 1}, forecasts
outside [0, 1] and NaN are typed errors instead of silently wrong scores.
"""

import warnings

import numpy as np
import pytest
from sklearn.metrics import brier_score_loss
from sklearn.metrics import log_loss as sk_log_loss

from thatchlab.core.errors import InputError, MetricInputError
from thatchlab.metrics.calibration import (
    brier,
    calibration_summary,
    ece,
    log_loss,
    reliability_curve,
)


def _sk_log_loss(y, p, w=None):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return float(sk_log_loss(y, p, sample_weight=w, labels=[0, 1]))


@pytest.mark.parametrize("dtype, expected", [(np.float64, 18.368400284838), (np.float32, 8.317766166719)])
def test_log_loss_clips_at_the_forecasts_own_epsilon_as_scikit_learn(dtype, expected):
    y, p = [1, 0], np.array([0.0, 0.5], dtype=dtype)
    assert log_loss(y, p) == pytest.approx(expected, rel=1e-9)
    assert log_loss(y, p) == pytest.approx(_sk_log_loss(y, p), rel=1e-6)


def test_scores_equal_scikit_learn_on_valid_input():
    rng = np.random.default_rng(3)
    y = rng.integers(0, 2, 200)
    p = rng.random(200)
    w = rng.random(200)
    assert log_loss(y, p, w) == pytest.approx(_sk_log_loss(y, p, w), rel=1e-12)
    assert brier(y, p, w) == pytest.approx(float(brier_score_loss(y, p, sample_weight=w)), rel=1e-12)
    assert log_loss(y.astype(bool), p) == pytest.approx(_sk_log_loss(y, p), rel=1e-12)


@pytest.mark.parametrize("fn", [log_loss, brier, ece, reliability_curve, calibration_summary])
@pytest.mark.parametrize("y, p, words", [
    ([1, -1], [0.2, 0.5], "outcomes: expected labels in {0, 1}; position 1 holds -1"),
    ([1, 0.5], [0.2, 0.5], "outcomes: expected labels in {0, 1}; position 1 holds 0.5"),
    ([1, np.nan], [0.2, 0.5], "outcomes: expected labels in {0, 1}; position 1 holds nan"),
    ([1, 0], [1.2, 0.5], "forecasts: expected probabilities in [0, 1]; position 0 holds 1.2"),
    ([1, 0], [0.2, -0.1], "forecasts: expected probabilities in [0, 1]; position 1 holds -0.1"),
    ([1, 0], [np.nan, 0.5], "forecasts: expected probabilities (no NaN); position 0 holds nan"),
    ([1, 0, 1], [0.2, 0.5], "differ in length (3 vs 2)"),
])
def test_invalid_input_is_a_typed_error_naming_the_position(fn, y, p, words):
    with pytest.raises(MetricInputError) as err:
        fn(y, p)
    assert words in str(err.value)
    assert isinstance(err.value, InputError)


def test_scikit_learn_refuses_the_same_forecasts():
    for bad in ([1.2, 0.5], [np.nan, 0.5], [-0.1, 0.5]):
        with pytest.raises(ValueError):
            sk_log_loss([1, 0], bad)


def test_negative_or_nan_weights_are_refused():
    with pytest.raises(MetricInputError, match="weights: expected finite non-negative numbers; position 1"):
        log_loss([1, 0], [0.2, 0.5], [1.0, -1.0])
    with pytest.raises(MetricInputError, match="weights"):
        brier([1, 0], [0.2, 0.5], [1.0, np.nan])


def test_empty_input_scores_nan():
    assert np.isnan(log_loss([], [])) and np.isnan(brier([], [])) and np.isnan(ece([], []))
