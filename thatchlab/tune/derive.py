"""Fitting ai-memory's derive coefficients to consumption (seed 002).

Production's derive coefficients (0.5 intercept, 0.1 atom bump, 0.05
corroboration weight, 0.02 age penalty) and 30-day half-life are hand-set.
:class:`DeriveWeightsFitter` reads them as a model of the probability that a
recalled memory is consumed and fits them by maximum likelihood (scipy), with
Wald intervals from the observed information, and compares the fitted derive
on held-out time with scikit-learn style recalibrations of the hand-set value.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
from scipy import optimize, stats

from thatchlab.calibration import derive
from thatchlab.core.errors import InputError
from thatchlab.core.params.calibration import CalibrationParams
from thatchlab.metrics.calibration import brier, ece, log_loss
from thatchlab.tune._fitter import BaseFitter

__all__ = ["DeriveWeightsFitter", "recall_features", "recalibrate"]

COEFS = ("intercept", "atom_bump", "corroboration_weight", "age_penalty", "half_life_days")
_DAY_NS = 86_400 * 10**9


def recall_features(recalls: pd.DataFrame) -> pd.DataFrame:
    """``ts, age_days, is_atom, corroboration, consumed`` of the judged touches of a recall log.

    ``age_days = (ts − created_at)`` in days (or an ``age_days`` column as given).

    >>> from thatchlab.synth.recall import RecallWorld
    >>> list(recall_features(RecallWorld(n_memories=10, n_recalls=30, seed=1).log).columns)
    ['ts', 'age_days', 'is_atom', 'corroboration', 'consumed']
    """
    need = ("is_atom", "corroboration", "consumed")
    missing = [c for c in need if c not in recalls.columns]
    if missing or not ({"ts", "created_at"} <= set(recalls.columns) or "age_days" in recalls.columns):
        raise InputError(f"recalls: missing column(s) {missing or ['ts', 'created_at']}; expected a recall "
                         "log (ts, created_at, is_atom, corroboration, consumed) or an age_days column")
    judged = recalls.loc[recalls["consumed"].notna()].reset_index(drop=True)
    if "age_days" in judged.columns:
        age = judged["age_days"].to_numpy(np.float64)
    else:
        ts = pd.to_datetime(judged["ts"], utc=True).dt.as_unit("ns")
        age = (ts.array.asi8 - pd.to_datetime(judged["created_at"], utc=True).dt.as_unit("ns").array.asi8) / _DAY_NS
    out = pd.DataFrame({"age_days": age, "is_atom": judged["is_atom"].astype(bool).to_numpy(),
                        "corroboration": judged["corroboration"].to_numpy(np.float64),
                        "consumed": judged["consumed"].astype(bool).astype(np.float64).to_numpy()})
    if "ts" in judged.columns:
        out.insert(0, "ts", pd.to_datetime(judged["ts"], utc=True))
    return out


def _logit(p):
    p = np.clip(np.asarray(p, dtype=np.float64), 1e-6, 1 - 1e-6)
    return np.log(p) - np.log1p(-p)


def recalibrate(method: str, p_train, y_train, p_test):
    """Recalibrate forecasts: fit ``method`` on (p_train, y_train), apply to p_test.

    ``isotonic`` (scikit-learn ``IsotonicRegression``), ``sigmoid`` (Platt:
    logistic regression on logit p), ``temperature`` (``σ(logit p / T)``, T by
    maximum likelihood).

    >>> import numpy as np
    >>> recalibrate("isotonic", [0.2, 0.4, 0.6, 0.8], [0, 0, 1, 1], [0.3, 0.7]).tolist()
    [0.0, 1.0]
    """
    p_train, y_train, p_test = (np.asarray(a, dtype=np.float64) for a in (p_train, y_train, p_test))
    if method == "isotonic":
        from sklearn.isotonic import IsotonicRegression

        return IsotonicRegression(y_min=0.0, y_max=1.0, out_of_bounds="clip").fit(p_train, y_train).predict(p_test)
    if method == "sigmoid":
        from sklearn.linear_model import LogisticRegression

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


class DeriveWeightsFitter(BaseFitter):
    """Maximum-likelihood fit of the derive coefficients and half-life to consumption.

    Model: a recalled memory is consumed with probability
    ``derive(age, is_atom, n; intercept, atom_bump, corroboration_weight,
    age_penalty, half_life_days, baseline)`` (clipped to [eps, 1 − eps]); the
    log-likelihood is ``Σ y·ln p + (1 − y)·ln(1 − p)`` over judged touches. The
    half-life is fitted on the log scale; intervals are Wald intervals from the
    numerical Hessian (``exp`` of the log-scale interval for the half-life).

    Parameters
    ----------
    params : starting point and fixed values (``baseline`` unless ``fit_baseline``).
    fit_baseline : also fit the baseline.
    alpha : 1 − interval level.
    eps : probabilities are clipped to ``[eps, 1 − eps]`` in the likelihood.

    Attributes (after ``fit``)
    --------------------------
    coef_ (dict), summary_ (DataFrame indexed by coefficient: coef, se,
    ci_lower, ci_upper, hand_set), confidence_interval_,
    params_ (:class:`CalibrationParams` with the fitted values),
    log_likelihood_, n_ (judged recalls), converged_, covariance_.

    Examples
    --------
    >>> from thatchlab.synth.recall import RecallWorld
    >>> f = DeriveWeightsFitter().fit(RecallWorld(n_memories=200, n_recalls=3000, seed=2).log)
    >>> list(f.summary_.columns)
    ['coef', 'se', 'ci_lower', 'ci_upper', 'hand_set']
    >>> list(f.confidence_interval_.index) == list(COEFS)
    True
    """

    _estimand = "derive coefficients and half-life (Bernoulli likelihood of consumption, Wald intervals)"
    _n_noun = "judged recalls"

    def __init__(self, params: CalibrationParams | None = None, fit_baseline: bool = False,
                 alpha: float = 0.05, eps: float = 1e-6):
        self.params = params
        self.fit_baseline = fit_baseline
        self.alpha = alpha
        self.eps = eps
        self._check_params()

    def _validate_params(self):
        if self.params is not None and not isinstance(self.params, CalibrationParams):
            raise InputError(f"params: expected CalibrationParams or None, got {type(self.params).__name__}")
        if not isinstance(self.fit_baseline, (bool, np.bool_)):
            raise InputError(f"fit_baseline: expected true or false, got {self.fit_baseline!r}")
        for name, hi in (("alpha", 1.0), ("eps", 0.5)):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value < hi:
                raise InputError(f"{name}: expected 0 < {name} < {hi:g}, got {value!r}")
        return {"fit_baseline": bool(self.fit_baseline)}

    def _repr_values(self):
        return [("log_likelihood_", self.log_likelihood_), ("converged_", self.converged_)]

    def _summary_header(self):
        return [("converged", self.converged_)]

    @property
    def _names(self):
        return COEFS + (("baseline",) if self.fit_baseline else ())

    def _unpack(self, theta, base: CalibrationParams) -> dict:
        kw = base.derive_kwargs()
        for name, v in zip(self._names, theta, strict=True):
            kw[name] = math.exp(v) if name == "half_life_days" else v
        return kw

    def _nll(self, theta, x, base):
        p = np.asarray(derive(x["age_days"], x["is_atom"], x["corroboration"], **self._unpack(theta, base)))
        p = np.clip(p, self.eps, 1 - self.eps)
        y = x["consumed"]
        return -float(np.sum(y * np.log(p) + (1 - y) * np.log1p(-p)))

    def fit(self, recalls: pd.DataFrame):
        """Fit on the judged touches of a recall log (or a :func:`recall_features` frame)."""
        base = self.params if self.params is not None else CalibrationParams()
        feats = recalls if {"age_days", "consumed"} <= set(recalls.columns) else recall_features(recalls)
        feats = feats.loc[feats["consumed"].notna()]
        if len(feats) < len(self._names) + 1:
            raise InputError(f"DeriveWeightsFitter.fit: {len(feats)} judged recalls; expected more than "
                             f"{len(self._names)}")
        x = {"age_days": feats["age_days"].to_numpy(np.float64), "is_atom": feats["is_atom"].to_numpy(bool),
             "corroboration": feats["corroboration"].to_numpy(np.float64),
             "consumed": feats["consumed"].astype(np.float64).to_numpy()}
        start = np.array([math.log(getattr(base, n)) if n == "half_life_days" else getattr(base, n)
                          for n in self._names])
        res = optimize.minimize(self._nll, start, args=(x, base), method="Nelder-Mead",
                                options={"maxiter": 20000, "maxfev": 20000, "xatol": 1e-7, "fatol": 1e-9,
                                         "adaptive": True})
        res = optimize.minimize(self._nll, res.x, args=(x, base), method="BFGS", options={"gtol": 1e-6})
        theta = res.x
        hess = _hessian(lambda t: self._nll(t, x, base), theta)
        cov = np.linalg.pinv(hess)
        se = np.sqrt(np.clip(np.diag(cov), 0.0, None))
        z = stats.norm.ppf(1 - self.alpha / 2)
        rows = []
        for i, name in enumerate(self._names):
            lo, hi = theta[i] - z * se[i], theta[i] + z * se[i]
            if name == "half_life_days":
                coef, lo, hi = math.exp(theta[i]), math.exp(lo), math.exp(hi)
                se_i = coef * se[i]  # delta method
            else:
                coef, se_i = float(theta[i]), float(se[i])
            rows.append((name, coef, se_i, lo, hi, getattr(base, name)))
        summary = pd.DataFrame(rows, columns=["param", "coef", "se", "ci_lower", "ci_upper", "hand_set"]
                               ).set_index("param")
        self.coef_ = summary["coef"].to_dict()
        self.params_ = base.replace(**self.coef_)
        self.log_likelihood_ = -float(res.fun)
        self.n_ = int(len(feats))
        self.converged_ = bool(res.success) or bool(np.all(np.isfinite(se)))
        self.covariance_ = cov
        self.summary_ = summary  # last: a fitter with summary_ is fitted
        return self

    def predict_proba(self, recalls: pd.DataFrame, params: CalibrationParams | None = None) -> np.ndarray:
        """Consumption probability of each judged touch under ``params`` (default: the fitted ones)."""
        p = params if params is not None else self.params_
        f = recalls if {"age_days", "consumed"} <= set(recalls.columns) else recall_features(recalls)
        return np.asarray(derive(f["age_days"].to_numpy(np.float64), f["is_atom"].to_numpy(bool),
                                 f["corroboration"].to_numpy(np.float64), **p.derive_kwargs()), dtype=np.float64)

    def compare(self, recalls: pd.DataFrame, holdout: float = 0.2,
                methods=("isotonic", "sigmoid", "temperature")) -> pd.DataFrame:
        """Held-out-time comparison: fit on the first ``1 − holdout`` of the judged
        touches (by ``ts``), score the last ``holdout``.

        Rows: ``fitted_derive`` (this fitter refitted on the training part) and
        each recalibration of the hand-set derive; columns ``brier_before,
        brier_after, ece_before, ece_after, log_loss_before, log_loss_after``
        ("before" = the hand-set derive on the test part), ``n_train, n_test``.
        The fitter itself is not changed.
        """
        if not 0 < holdout < 1:
            raise InputError(f"holdout: expected a fraction in (0, 1), got {holdout!r}")
        feats = recall_features(recalls).sort_values("ts", kind="stable").reset_index(drop=True)
        cut = int(round(len(feats) * (1 - holdout)))
        train, test = feats.iloc[:cut], feats.iloc[cut:]
        hand = self.params if self.params is not None else CalibrationParams()
        y_tr, y_te = train["consumed"].to_numpy(), test["consumed"].to_numpy()
        p_tr, p_te = self.predict_proba(train, hand), self.predict_proba(test, hand)
        refit = DeriveWeightsFitter(**self.get_params(deep=False)).fit(train)
        after = {"fitted_derive": refit.predict_proba(test)}
        for m in methods:
            after[m] = recalibrate(m, p_tr, y_tr, p_te)
        b0, e0, l0 = brier(y_te, p_te), ece(y_te, p_te), log_loss(y_te, p_te)
        rows = [(m, b0, brier(y_te, q), e0, ece(y_te, q), l0, log_loss(y_te, q), len(train), len(test))
                for m, q in after.items()]
        return pd.DataFrame(rows, columns=["method", "brier_before", "brier_after", "ece_before", "ece_after",
                                           "log_loss_before", "log_loss_after", "n_train", "n_test"])


def _hessian(f, x, rel=1e-4):
    """Central-difference Hessian of ``f`` at ``x``."""
    x = np.asarray(x, dtype=np.float64)
    k = len(x)
    h = rel * np.maximum(np.abs(x), 1.0)
    H = np.empty((k, k))
    f0 = f(x)
    for i in range(k):
        ei = np.zeros(k)
        ei[i] = h[i]
        H[i, i] = (f(x + ei) - 2 * f0 + f(x - ei)) / h[i] ** 2
        for j in range(i + 1, k):
            ej = np.zeros(k)
            ej[j] = h[j]
            H[i, j] = H[j, i] = (f(x + ei + ej) - f(x + ei - ej) - f(x - ei + ej) + f(x - ei - ej)) / (4 * h[i] * h[j])
    return H
