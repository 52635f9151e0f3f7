"""Empirical-Bayes prior of the scoring engine (seeds 000 and 003): K and P0, fitted.

Production scores an item with the posterior mean ``(c + K·P0) / (c + d + K)``
of a Beta(K·P0, K·(1−P0)) prior. Across many items, the confirm/disconfirm
counts follow a beta-binomial law whose marginal likelihood is maximised
here over K and P0 (soft signals count ``soft_weight`` of a disconfirm), with
profile-likelihood intervals; a log without overdispersion pushes K to
infinity and is reported as a boundary fit.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from thatchlab.core.errors import InputError
from thatchlab.core.params.scoring import ScoringParams
from thatchlab.tune._fitter import BaseFitter

__all__ = ["PriorFitter", "beta_binomial_loglik", "signal_counts"]

#: Bounds of log K searched; K beyond exp(18) is indistinguishable from infinity.
_LOGK_LO, _LOGK_HI = -14.0, 18.0
_LOGIT_LIM = 25.0
#: A fitted K above this (or a log-likelihood no better than K = ∞) is a boundary fit.
_K_BOUNDARY = 1e6
_POSITIVE = ("confirm",)
_NEGATIVE = ("disconfirm",)
_IGNORED = ("create", "codify")


def beta_binomial_loglik(c, d, k, p0, weights=None):
    """Marginal log-likelihood of counts under a Beta(K·P0, K·(1−P0)) prior.

    ``Σ_i w_i [lnB(a + c_i, b + d_i) − lnB(a, b)]`` with ``a = K·P0``,
    ``b = K·(1−P0)``: for integer counts, the log-probability of each item's
    signal *sequence*, i.e. the sum of the prequential log scores of the
    posterior confidence. ``k = inf`` gives the binomial limit
    ``Σ c log P0 + d log(1−P0)``.

    >>> round(beta_binomial_loglik([1], [0], 5, 0.5), 6)   # log 0.5
    -0.693147
    >>> round(beta_binomial_loglik([2], [0], 5, 0.5), 6)   # log(0.5 · 3.5/6)
    -1.232144
    """
    from scipy.special import betaln

    c = np.asarray(c, dtype=np.float64)
    d = np.asarray(d, dtype=np.float64)
    w = np.ones_like(c) if weights is None else np.asarray(weights, dtype=np.float64)
    if math.isinf(float(k)):
        with np.errstate(divide="ignore", invalid="ignore"):
            terms = np.where(c > 0, c * np.log(p0), 0.0) + np.where(d > 0, d * np.log1p(-p0), 0.0)
        return float(np.sum(w * terms))
    a, b = float(k) * float(p0), float(k) * (1.0 - float(p0))
    return float(np.sum(w * (betaln(a + c, b + d) - betaln(a, b))))


def signal_counts(signals: pd.DataFrame, soft_weight: float = 0.25) -> pd.DataFrame:
    """Per-item counts ``c`` (confirms) and ``d`` (disconfirms + soft_weight × softs).

    ``create``/``codify`` signals change no count; other signals raise
    :class:`~thatchlab.core.errors.InputError` naming the row.

    >>> s = pd.DataFrame({"item_id": ["a", "a", "b"], "signal": ["confirm", "soft", "create"]})
    >>> signal_counts(s).to_dict("list")
    {'item_id': ['a', 'b'], 'c': [1.0, 0.0], 'd': [0.25, 0.0]}
    """
    if not isinstance(signals, pd.DataFrame):
        raise InputError(f"signals: expected a DataFrame with columns item_id, signal, "
                         f"got {type(signals).__name__}")
    missing = [col for col in ("item_id", "signal") if col not in signals.columns]
    if missing:
        raise InputError(f"signals: missing column(s) {missing}; expected item_id, signal")
    sig = signals["signal"].astype(object)
    known = sig.isin(_POSITIVE + _NEGATIVE + ("soft",) + _IGNORED)
    if not known.all():
        row = int(np.flatnonzero(~known.to_numpy())[0])
        raise InputError(f"signals row {row}, column 'signal': expected one of "
                         f"{list(_POSITIVE + _NEGATIVE + ('soft',) + _IGNORED)}, got {sig.iloc[row]!r}")
    conf = sig.isin(_POSITIVE).to_numpy(dtype=np.float64)
    dis = sig.isin(_NEGATIVE).to_numpy(dtype=np.float64) + soft_weight * (sig == "soft").to_numpy(np.float64)
    frame = pd.DataFrame({"item_id": signals["item_id"].to_numpy(), "c": conf, "d": dis})
    return frame.groupby("item_id", sort=False, as_index=False)[["c", "d"]].sum()


class PriorFitter(BaseFitter):
    """Empirical-Bayes K and P0 from the beta-binomial marginal likelihood.

    Maximises ``ℓ(K, P0) = Σ_items [lnB(a + c, b + d) − lnB(a, b)]``,
    ``a = K·P0``, ``b = K·(1−P0)``, over ``(log K, logit P0)`` with L-BFGS-B
    and analytic gradients (digamma). Intervals are profile-likelihood
    intervals: the values where ``2(ℓ̂ − ℓ_profile) = χ²₁(1 − alpha)``. When
    the data show no overdispersion the likelihood keeps rising with K:
    ``k_ = inf``, ``boundary_ = True`` and P0 is the pooled confirm share.

    Parameters
    ----------
    soft_weight : weight of a ``soft`` signal as a disconfirm (production 0.25).
    alpha : 1 − confidence level of the intervals.

    Attributes
    ----------
    k_, p0_ : the fitted prior strength and mean.
    log_likelihood_ : ``ℓ(k_, p0_)``.
    boundary_ : True when the fit is at K = ∞ (or K → 0, all items unanimous).
    summary_ : DataFrame, rows ``k``, ``p0``; columns ``coef``, ``ci_lower``, ``ci_upper``.
    confidence_interval_ : the two interval columns of ``summary_``.
    n_, n_items_ : the number of items with at least one counted signal.
    counts_ : the per-item counts used.

    The conventions (``get_params``/``set_params``, ``print_summary``, errors
    before ``fit``) are :class:`~thatchlab.tune.BaseFitter`'s.

    Examples
    --------
    >>> s = pd.DataFrame({"item_id": list("aaabbbccc"),
    ...                   "signal": ["confirm"] * 3 + ["disconfirm"] * 3 + ["confirm", "soft", "confirm"]})
    >>> f = PriorFitter().fit(s)
    >>> round(f.p0_, 3), f.boundary_, list(f.summary_.columns)
    (0.578, False, ['coef', 'ci_lower', 'ci_upper'])
    >>> f
    <PriorFitter: fitted with 3 items, k_=0.4882, p0_=0.5784>
    """

    _estimand = "empirical-Bayes prior strength K and mean P0 (beta-binomial marginal likelihood)"
    _n_noun = "items"

    def __init__(self, soft_weight: float = 0.25, alpha: float = 0.05):
        self.soft_weight = soft_weight
        self.alpha = alpha
        self._check_params()

    def _validate_params(self):
        if not (isinstance(self.soft_weight, (int, float)) and self.soft_weight >= 0):
            raise InputError(f"soft_weight: expected a number >= 0, got {self.soft_weight!r}")
        if not (isinstance(self.alpha, (int, float)) and 0 < self.alpha < 1):
            raise InputError(f"alpha: expected 0 < alpha < 1, got {self.alpha!r}")

    # -- fitting -----------------------------------------------------------------------------
    def fit(self, signals: pd.DataFrame) -> PriorFitter:
        """Fit from a signal log (columns ``item_id``, ``signal``); returns ``self``."""
        counts = signal_counts(signals, self.soft_weight)
        self.fit_counts(counts["c"].to_numpy(), counts["d"].to_numpy())
        self.counts_ = counts
        return self

    def fit_counts(self, c, d) -> PriorFitter:
        """Fit from per-item counts ``c`` (confirms) and ``d`` (disconfirm weight)."""
        from scipy.stats import chi2

        c = np.asarray(c, dtype=np.float64).ravel()
        d = np.asarray(d, dtype=np.float64).ravel()
        if c.shape != d.shape:
            raise InputError("c and d differ in length")
        if not (np.isfinite(c).all() and np.isfinite(d).all()) or (c < 0).any() or (d < 0).any():
            raise InputError("counts: expected finite counts >= 0")
        keep = (c + d) > 0
        if not keep.any():
            raise InputError("signals: no confirm, disconfirm or soft signal to fit on")
        pairs, weights = np.unique(np.stack([c[keep], d[keep]], axis=1), axis=0, return_counts=True)
        self._c, self._d, self._w = pairs[:, 0], pairs[:, 1], weights.astype(np.float64)
        self.counts_ = pd.DataFrame({"c": c, "d": d})
        self.n_items_ = self.n_ = int(keep.sum())
        C, D = float(np.sum(self._w * self._c)), float(np.sum(self._w * self._d))
        if C == 0 or D == 0:
            raise InputError("signals: every signal points the same way (no confirm or no disconfirm); "
                             "P0 is at its boundary and cannot be fitted")
        self._cut = float(chi2.ppf(1 - self.alpha, 1)) / 2.0
        theta, ll = self._maximise()
        pooled = C / (C + D)
        ll_inf = beta_binomial_loglik(self._c, self._d, math.inf, pooled, self._w)
        k_hat = math.exp(theta[0])
        if k_hat > _K_BOUNDARY or ll_inf >= ll - 1e-6:
            self.k_, self.p0_, self.log_likelihood_, self.boundary_ = math.inf, pooled, ll_inf, True
            theta = np.array([_LOGK_HI, _logit(pooled)])
            ll = max(ll, ll_inf)
        elif theta[0] <= _LOGK_LO + 1e-3:
            self.k_, self.p0_, self.log_likelihood_, self.boundary_ = 0.0, _expit(theta[1]), ll, True
        else:
            self.k_, self.p0_, self.log_likelihood_, self.boundary_ = k_hat, _expit(theta[1]), ll, False
        self._theta, self._ll = theta, ll
        self.summary_ = pd.DataFrame(
            {"coef": [self.k_, self.p0_], "ci_lower": [self._ci(0, -1), self._ci(1, -1)],
             "ci_upper": [self._ci(0, +1), self._ci(1, +1)]}, index=pd.Index(["k", "p0"], name="param"))
        return self

    def _loglik(self, theta):
        # hot path of the profile searches: the same sum as beta_binomial_loglik, without checks
        from scipy.special import betaln

        k = math.exp(theta[0])
        p = 1.0 / (1.0 + math.exp(-theta[1]))
        a, b = k * p, k - k * p
        return float(self._w @ (betaln(a + self._c, b + self._d) - betaln(a, b)))

    def _neg(self, theta):
        from scipy.special import digamma

        k, p = math.exp(theta[0]), _expit(theta[1])
        a, b = k * p, k * (1 - p)
        c, d, w = self._c, self._d, self._w
        tot = digamma(a + b) - digamma(a + b + c + d)
        ga = np.sum(w * (digamma(a + c) - digamma(a) + tot))
        gb = np.sum(w * (digamma(b + d) - digamma(b) + tot))
        grad = np.array([a * ga + b * gb, k * p * (1 - p) * (ga - gb)])
        return -self._loglik(theta), -grad

    def _maximise(self):
        from scipy.optimize import minimize

        pooled = float(np.sum(self._w * self._c) / np.sum(self._w * (self._c + self._d)))
        best = None
        for logk in (math.log(5.0), math.log(200.0)):
            res = minimize(self._neg_clipped, np.array([logk, _logit(pooled)]), jac=True, method="BFGS",
                           options={"gtol": 1e-7})
            x = self._clip(res.x)
            if best is None or -self._loglik(x) < best[1]:
                best = (x, -self._loglik(x))
        return best[0], -best[1]

    @staticmethod
    def _clip(theta):
        return np.array([np.clip(theta[0], _LOGK_LO, _LOGK_HI), np.clip(theta[1], -_LOGIT_LIM, _LOGIT_LIM)])

    def _neg_clipped(self, theta):
        # BFGS is unconstrained: outside the box the objective is the box's edge value
        clipped = self._clip(theta)
        value, grad = self._neg(clipped)
        return value, np.where(clipped == theta, grad, 0.0)

    # -- profile likelihood ------------------------------------------------------------------
    def _profile_at(self, which: int, value: float) -> float:
        """max over the other coordinate of ℓ, with coordinate ``which`` fixed at ``value``."""
        from scipy.optimize import minimize_scalar

        lo, hi = ((-_LOGIT_LIM, _LOGIT_LIM) if which == 0 else (_LOGK_LO, _LOGK_HI))

        def neg(other):
            theta = [value, other] if which == 0 else [other, value]
            return -self._loglik(theta)

        res = minimize_scalar(neg, bounds=(lo, hi), method="bounded", options={"xatol": 1e-4})
        cand = -float(res.fun)
        if which == 1:  # the binomial limit K = ∞ is part of the profile in P0
            cand = max(cand, beta_binomial_loglik(self._c, self._d, math.inf, _expit(value), self._w))
        return cand

    def profile(self, param: str, values) -> pd.DataFrame:
        """Profile log-likelihood of ``param`` ("k" or "p0") at ``values``.

        Returns columns ``value``, ``log_likelihood``, ``deviance``
        (``2(ℓ̂ − ℓ_profile)``) and ``inside`` (within the interval's cut).
        """
        if param not in ("k", "p0"):
            raise InputError(f"param: expected 'k' or 'p0', got {param!r}")
        vals = np.asarray(values, dtype=np.float64)
        which = 0 if param == "k" else 1
        coords = np.log(vals) if which == 0 else _logit(vals)
        ll = np.array([self._profile_at(which, float(x)) for x in np.atleast_1d(coords)])
        dev = 2.0 * (self._ll - ll)
        return pd.DataFrame({"value": np.atleast_1d(vals), "log_likelihood": ll, "deviance": dev,
                             "inside": dev <= 2.0 * self._cut})

    def _ci(self, which: int, side: int) -> float:
        from scipy.optimize import brentq

        lo_lim, hi_lim = (_LOGK_LO, _LOGK_HI) if which == 0 else (-_LOGIT_LIM, _LOGIT_LIM)
        start = float(np.clip(self._theta[which], lo_lim, hi_lim))
        target = self._ll - self._cut

        def gap(x):
            return self._profile_at(which, x) - target

        end = hi_lim if side > 0 else lo_lim
        if gap(end) >= 0:  # the profile never drops below the cut on this side
            if which == 0:
                return math.inf if side > 0 else 0.0
            return 1.0 if side > 0 else 0.0
        if start == end:
            root = start
        else:
            root = brentq(gap, *sorted((start, end)), xtol=1e-5)
        return math.exp(root) if which == 0 else _expit(root)

    def to_params(self, base: ScoringParams | None = None) -> ScoringParams:
        """ScoringParams with the fitted ``k`` and ``p0`` (other fields from ``base``).

        A boundary fit has no finite K to ship and raises :class:`InputError`.
        """
        if not math.isfinite(self.k_) or self.k_ <= 0:
            raise InputError(f"PriorFitter: boundary fit (k_ = {self.k_}); choose K yourself")
        return (base or ScoringParams()).replace(k=float(self.k_), p0=float(self.p0_))

    def _repr_values(self):
        return [("k_", self.k_), ("p0_", self.p0_)]

    def _summary_header(self):
        return [("soft_weight", self.soft_weight), ("boundary fit", self.boundary_)]


def _expit(x):
    x = np.asarray(x, dtype=np.float64)
    out = 1.0 / (1.0 + np.exp(-x))
    return float(out) if out.ndim == 0 else out


def _logit(p):
    p = np.asarray(p, dtype=np.float64)
    out = np.log(p) - np.log1p(-p)
    return float(out) if out.ndim == 0 else out
