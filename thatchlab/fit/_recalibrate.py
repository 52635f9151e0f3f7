"""Recalibration of probability forecasts, the yardstick a fitted derive is compared against.

A recalibration learns a monotone map from forecasts to outcomes on training data and applies it
to new forecasts: isotonic regression, Platt's sigmoid on the logit, or a single temperature
fitted by maximum likelihood. :meth:`~thatchlab.fit.DeriveWeightsFitter.compare` scores these against a refit.
"""

from __future__ import annotations

import math

import numpy as np

from thatchlab.core.errors import InputError

__all__ = ["recalibrate"]


def _logit(p):
    p = np.clip(np.asarray(p, dtype=np.float64), 1e-6, 1 - 1e-6)
    return np.log(p) - np.log1p(-p)


def recalibrate(method: str, p_train, y_train, p_test):
    """Recalibrate forecasts: fit ``method`` on (p_train, y_train), apply to p_test.

    ``isotonic`` (scikit-learn ``IsotonicRegression``), ``sigmoid`` (Platt:
    logistic regression on logit p), ``temperature`` (``σ(logit p / T)``, T by
    maximum likelihood).

    Parameters
    ----------
    method : {"isotonic", "sigmoid", "temperature"}
        The recalibration.
    p_train : array-like of float
        Forecasts the recalibration is fitted on.
    y_train : array-like of float
        Their 0/1 outcomes.
    p_test : array-like of float
        Forecasts to recalibrate.

    Returns
    -------
    ndarray
        The recalibrated ``p_test``.

    Raises
    ------
    InputError
        When ``method`` is none of the three.

    See Also
    --------
    DeriveWeightsFitter.compare : These recalibrations against a fitted derive.

    Examples
    --------
    >>> import numpy as np
    >>> recalibrate("isotonic", [0.2, 0.4, 0.6, 0.8], [0, 0, 1, 1], [0.3, 0.7]).tolist()
    [0.0, 1.0]
    """
    from scipy import optimize  # heavy: SciPy takes about 0.5 s to import

    p_train, y_train, p_test = (np.asarray(a, dtype=np.float64) for a in (p_train, y_train, p_test))
    if method == "isotonic":
        from sklearn.isotonic import IsotonicRegression  # heavy: sklearn, isotonic only

        return IsotonicRegression(y_min=0.0, y_max=1.0, out_of_bounds="clip").fit(p_train, y_train).predict(p_test)
    if method == "sigmoid":
        from sklearn.linear_model import LogisticRegression  # heavy: sklearn, Platt only

        lr = LogisticRegression(C=1e6).fit(_logit(p_train)[:, None], y_train.astype(int))
        return lr.predict_proba(_logit(p_test)[:, None])[:, 1]
    if method == "temperature":
        z = _logit(p_train)

        def nll(log_t):
            q = np.clip(1.0 / (1.0 + np.exp(-z / math.exp(log_t))), 1e-12, 1 - 1e-12)
            return -np.mean(y_train * np.log(q) + (1 - y_train) * np.log1p(-q))

        t = math.exp(optimize.minimize_scalar(nll, bounds=(-5, 5), method="bounded").x)
        return 1.0 / (1.0 + np.exp(-_logit(p_test) / t))
    raise InputError(f"method: expected 'isotonic', 'sigmoid' or 'temperature', got {method!r}")
