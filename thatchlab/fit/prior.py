"""Empirical-Bayes prior of thatch's scoring engines: K and P0, fitted.

Production scores an item with the posterior mean ``(c + K·P0) / (c + d + K)``
of a Beta(K·P0, K·(1−P0)) prior. Two objectives are offered over K and P0,
both with profile-likelihood intervals:

- ``"marginal"``: the beta-binomial marginal likelihood of each item's
  confirm/disconfirm totals. For integer counts it is the log-probability of
  the signal sequence; with fractional counts it is only a pseudo-likelihood.
- ``"prequential"``: the weighted prequential log score the sweep uses, each
  signal scored by the confidence the item had just before it. It needs the
  signal order.

How a ``soft`` signal enters is the fitter's ``soft`` parameter:
``"refusal"`` (default: a full disconfirm, the exact likelihood when a soft
signal is a refusal voiced softly), ``"fractional"`` (a disconfirm of weight
``soft_weight``, production's scoring rule: a pseudo-likelihood) or
``"exclude"`` (dropped). With integer counts the two objectives are the same
function of (K, P0). A log without overdispersion pushes K to infinity and
is reported as a boundary fit.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from thatchlab.core.errors import InputError
from thatchlab.core.params.scoring import ScoringParams
from thatchlab.fit._base import BaseFitter
from thatchlab.fit._prior_likelihood import (
    BetaPairs,
    LogTerms,
    Profile,
    distinct_pairs,
    newton_max,
)
from thatchlab.fit._prior_signals import (
    _counts,
    _sequence,
    _signal_flags,
    signal_counts,
    signal_sequence,
)

__all__ = ["PriorFitter", "beta_binomial_loglik", "prequential_loglik", "signal_counts",
           "signal_sequence"]

#: Bounds of log K searched; K beyond exp(18) is indistinguishable from infinity.
_LOGK_LO, _LOGK_HI = -14.0, 18.0
_LOGIT_LIM = 25.0
#: A fitted K above this (or a log-likelihood no better than K = ∞) is a boundary fit.
_K_BOUNDARY = 1e6
_OBJECTIVES = ("prequential", "marginal", "auto")
_SOFT = ("refusal", "fractional", "exclude")


def beta_binomial_loglik(c, d, k, p0, weights=None):
    """Marginal log-likelihood of counts under a Beta(K·P0, K·(1−P0)) prior.

    ``Σ_i w_i [lnB(a + c_i, b + d_i) − lnB(a, b)]`` with ``a = K·P0``,
    ``b = K·(1−P0)``: for integer counts, the log-probability of each item's
    signal *sequence*, i.e. the sum of the prequential log scores of the
    posterior confidence. ``k = inf`` gives the binomial limit
    ``Σ c log P0 + d log(1−P0)``.

    Parameters
    ----------
    c : array-like of float
        Each item's confirm count.
    d : array-like of float
        Each item's disconfirm count (or weight; fractional counts give a
        pseudo-likelihood).
    k : float
        The prior strength K (``inf`` for the binomial limit).
    p0 : float
        The prior mean P0, in (0, 1).
    weights : array-like of float, default=None
        Per-item weights ``w_i`` (``None``: all 1).

    Returns
    -------
    float
        The weighted log-likelihood.

    See Also
    --------
    prequential_loglik : The same for integer counts, one term per signal.

    Examples
    --------
    >>> round(beta_binomial_loglik([1], [0], 5, 0.5), 6)   # log 0.5
    -0.693147
    >>> round(beta_binomial_loglik([2], [0], 5, 0.5), 6)   # log(0.5 · 3.5/6)
    -1.232144
    """
    from scipy.special import betaln  # heavy: SciPy takes about 0.5 s to import

    c = np.asarray(c, dtype=np.float64)
    d = np.asarray(d, dtype=np.float64)
    w = np.ones_like(c) if weights is None else np.asarray(weights, dtype=np.float64)
    if math.isinf(float(k)):
        with np.errstate(divide="ignore", invalid="ignore"):
            terms = np.where(c > 0, c * np.log(p0), 0.0) + np.where(d > 0, d * np.log1p(-p0), 0.0)
        return float(np.sum(w * terms))
    a, b = float(k) * float(p0), float(k) * (1.0 - float(p0))
    return float(np.sum(w * (betaln(a + c, b + d) - betaln(a, b))))


def prequential_loglik(c, d, y, k, p0, weights=None):
    """Weighted prequential log score of the posterior confidence.

    ``Σ_j w_j [y_j log f_j + (1 − y_j) log(1 − f_j)]`` with the one-step
    forecast ``f_j = (c_j + K·P0) / (c_j + d_j + K)`` made from the counts
    ``c_j``, ``d_j`` the item had before signal ``j`` (see
    :func:`signal_sequence`). ``k = inf`` forecasts ``P0`` throughout. With
    ``log f = log(c + a) − log(c + d + K)`` and ``log(1 − f) = log(d + b) −
    log(c + d + K)``, ``a = K·P0``, ``b = K·(1−P0)``. For integer counts and
    unit weights the per-item sums are :func:`beta_binomial_loglik`.

    Parameters
    ----------
    c : array-like of float
        Per signal, the item's confirm count before it.
    d : array-like of float
        Per signal, the item's disconfirm weight before it.
    y : array-like of float
        Per signal, 1 for a confirm, 0 otherwise.
    k : float
        The prior strength K (``inf``: forecast P0 throughout).
    p0 : float
        The prior mean P0, in (0, 1).
    weights : array-like of float, default=None
        Per-signal weights ``w_j`` (``None``: all 1).

    Returns
    -------
    float
        The weighted log score.

    See Also
    --------
    beta_binomial_loglik : The marginal likelihood of each item's totals.
    signal_sequence : The ``c``, ``d``, ``y`` and weights from a signal log.

    Examples
    --------
    >>> round(prequential_loglik([0, 1], [0, 0], [1, 1], 5, 0.5), 6)   # log(0.5 · 3.5/6)
    -1.232144
    >>> round(prequential_loglik([0], [0], [0], 5, 0.5, weights=[0.25]), 6)   # 0.25 · log 0.5
    -0.173287
    """
    c = np.asarray(c, dtype=np.float64)
    d = np.asarray(d, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    w = np.ones_like(c) if weights is None else np.asarray(weights, dtype=np.float64)
    p0 = float(p0)
    if math.isinf(float(k)):
        f = np.full_like(c, p0)
    else:
        k = float(k)
        f = (c + k * p0) / (c + d + k)
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(y > 0, y * np.log(f), 0.0) + np.where(y < 1, (1 - y) * np.log1p(-f), 0.0)
    return float(np.sum(np.where(w > 0, w * terms, 0.0)))


class PriorFitter(BaseFitter):
    """Empirical-Bayes K and P0: the marginal likelihood or the prequential log score.

    Both objectives are maximised over ``(log K, logit P0)``, writing
    ``a = K·P0``, ``b = K·(1−P0)``, after reducing the data to distinct
    pairs or offsets (``thatchlab.fit._prior_likelihood``): by Newton's
    method on closed-form second derivatives from two starts (K = 5 and
    200), BFGS where that does not apply (fractional counts under the
    marginal objective):

    - ``"marginal"``: ``ℓ(K, P0) = Σ_items [lnB(a + c, b + d) − lnB(a, b)]``
      over each item's totals (``c`` confirms, ``d`` disconfirms plus the
      softs as ``soft`` says). A pseudo-likelihood when ``d`` is fractional.
    - ``"prequential"``: ``ℓ(K, P0) = Σ_signals w [y log f + (1−y) log(1−f)]``,
      ``f = (c + a)/(c + d + K)`` from the item's counts before the signal,
      ``y`` = 1 for confirm, 0 for disconfirm or soft, ``w`` = 1 except for
      a soft, whose ``w`` and step in ``d`` are 1 (``soft="refusal"``) or
      ``soft_weight`` (``"fractional"``; an excluded soft is not scored).
      With ``soft="fractional"`` it is exactly the weighted log score whose
      mean is the sweep's ``log_loss`` (``log_loss = −ℓ / Σw``).
    - ``"auto"`` (default): ``"prequential"`` when the counts are fractional
      (``soft="fractional"`` and the log holds a soft signal), else
      ``"marginal"`` — with integer counts the two are the same function of
      (K, P0), and the marginal one is cheaper.

    **Soft signals** (``soft``). Production's scoring rule adds
    ``soft_weight`` (0.25) to ``d`` for a soft signal; the likelihood has to
    say what a soft signal *is*:

    - ``"refusal"`` (default): a full disconfirm (``d += 1``, ``w = 1``). The
      likelihood assumes a soft signal is a refusal the user happened to
      voice softly: the item's confirm probability decides confirm versus
      refusal, and softness carries no further information about it (how
      :class:`~thatchlab.synth.PreferenceWorld` writes softs). Then the
      beta-binomial likelihood is exact and the intervals cover at about the
      nominal rate (table below).
    - ``"fractional"``: a disconfirm of weight ``soft_weight`` in ``d`` and in
      the prequential weight, production's own rule. No model of the signals
      produces fractional counts, so this is a **pseudo-likelihood** (a
      weighted scoring rule): its maximum is the (K, P0) that forecasts best
      under production's soft rule — the sweep's objective — not an estimate
      of the planted prior, and its χ² profile intervals are not calibrated.
      When softs are refusals it pulls P0 up (a refusal counts 0.25).
    - ``"exclude"``: soft signals are dropped. Exact for the remaining
      signals when softs are uninformative noise (arise whatever the item's
      confirm probability); biased up like ``"fractional"`` when they are
      refusals (a quarter of the refusals go missing).

    Why ``"refusal"`` is the default: it is the only treatment that is
    unbiased when softs are refusals, as in PreferenceWorld and as the
    engine's own rule (a soft lowers the confidence) reads them. Planted K = 6,
    P0 = 0.7, a quarter of the refusals soft; counts of planted values inside
    the 95 % intervals, and the mean ``p0_ − P0``. Left: the independent
    generator of ``thatchlab.fit._prior_sim`` (200 logs of 150 items with
    2–13 signals each); right: ``PreferenceWorld(prior=(6, 0.7), noise=0)``
    logs of 3000 sessions replayed through the prediction engine (100 worlds,
    about 400 items and 2700 signals each):

    ===========================  =======  =======  =======  =======  =======  =======
    soft, objective              K /200   P0 /200  P0 bias  K /100   P0 /100  P0 bias
    ===========================  =======  =======  =======  =======  =======  =======
    refusal, auto (= marginal)   187      187      +0.001   94       95       +0.001
    fractional, prequential      188      96       +0.041   94       7        +0.040
    fractional, marginal         174      102      +0.039   83       9        +0.038
    exclude, auto (= marginal)   179      39       +0.054   85       0        +0.053
    ===========================  =======  =======  =======  =======  =======  =======

    (``"fractional"`` with the prequential score was the default before:
    P0 too high by 0.04, covered 7 times in 100.) If your soft signals are
    noise unrelated to the item's confirm rate (``meaning="noise"`` there:
    25 % of all signals soft whatever the rate), ``"exclude"`` is the exact
    treatment: K 189/200, P0 193/200, bias +0.001, against K 21/200, P0
    0/200, bias −0.175 for ``"refusal"`` and K 180/200, P0 48/200, bias
    −0.051 for ``"fractional"`` (prequential). To tune K for production's
    forecasts rather than estimate the prior, fit ``soft="fractional"``: its
    prequential score is the sweep's. The treatment used and its assumption
    are in ``summary_.attrs`` and in :meth:`print_summary`.

    Intervals are profile-likelihood intervals of the chosen objective: the
    values where ``2(ℓ̂ − ℓ_profile) = χ²₁(1 − alpha)``, found between the
    estimate and the search box's edge (Newton's method on the profile, or
    ``brentq``; the inner maximum by Newton's method, or a bounded scalar
    search). When the data show no
    overdispersion ℓ keeps rising with K: ``k_ = inf``, ``boundary_ = True``
    and P0 is the pooled (weighted) confirm share.

    Parameters
    ----------
    soft_weight : float, default=0.25
        Weight of a ``soft`` signal as a disconfirm under
        ``soft="fractional"`` (production 0.25); unused by the other treatments.
    alpha : float, default=0.05
        1 − confidence level of the intervals.
    objective : {"auto", "prequential", "marginal"}, default="auto"
        The objective maximised (above).
    soft : {"refusal", "fractional", "exclude"}, default="refusal"
        How a ``soft`` signal enters the likelihood (above).

    Attributes
    ----------
    k_, p0_ : float
        The fitted prior strength and mean.
    objective_ : str
        The objective used (``"prequential"`` or ``"marginal"``).
    log_likelihood_ : float
        ``ℓ(k_, p0_)`` of that objective.
    boundary_ : bool
        True when the fit is at K = ∞ (or K → 0, all items unanimous).
    summary_ : DataFrame
        Rows ``k``, ``p0``; columns ``SUMMARY_COLUMNS`` (``coef``,
        ``ci_lower``, ``ci_upper``); ``summary_.attrs`` holds ``soft`` (the
        treatment, or ``"counts"`` after :meth:`fit_counts`),
        ``soft_weight`` (what a soft added to ``d``), ``n_soft`` (soft
        signals in the log), ``likelihood`` (``"exact"`` or ``"pseudo"``)
        and ``assumption`` (one sentence).
    soft_, n_soft_, likelihood_, assumption_ : str, int, str, str
        The same four as attributes.
    confidence_interval_ : DataFrame
        The two interval columns of ``summary_``.
    n_, n_items_ : int
        The number of items with at least one counted signal.
    counts_ : DataFrame
        The per-item counts.
    sequence_ : DataFrame or None
        The scored signals of :func:`signal_sequence` (``None`` after
        :meth:`fit_counts`, which has no order to score).

    The conventions (``get_params``/``set_params``, ``print_summary``, errors
    before ``fit``) are :class:`~thatchlab.fit.BaseFitter`'s.

    Examples
    --------
    >>> s = pd.DataFrame({"item_id": list("aaabbbccc"),
    ...                   "signal": ["confirm"] * 3 + ["disconfirm"] * 3 + ["confirm", "soft", "confirm"]})
    >>> f = PriorFitter().fit(s)          # the soft signal as a refusal: exact, the marginal likelihood
    >>> f.objective_, f.likelihood_, f.boundary_, list(f.summary_.columns)
    ('marginal', 'exact', False, ['coef', 'ci_lower', 'ci_upper'])
    >>> f
    <PriorFitter: fitted with 3 items, k_=0.8226, p0_=0.5337>
    >>> g = PriorFitter(soft="fractional").fit(s)   # production's weight 0.25: the sweep's score
    >>> g.objective_, g.summary_.attrs["likelihood"], g
    ('prequential', 'pseudo', <PriorFitter: fitted with 3 items, k_=0.1549, p0_=0.6251>)
    >>> PriorFitter(soft="fractional", objective="marginal").fit(s)
    <PriorFitter: fitted with 3 items, k_=0.4882, p0_=0.5784>
    """

    _n_noun = "items"
    SUMMARY_COLUMNS = ("coef", "ci_lower", "ci_upper")

    @classmethod
    def _check_data(cls) -> pd.DataFrame:
        """Nine signals on three items, one soft (the class example's log)."""
        return pd.DataFrame({"item_id": list("aaabbbccc"),
                             "signal": ["confirm"] * 3 + ["disconfirm"] * 3 + ["confirm", "soft", "confirm"]})

    def __init__(self, soft_weight: float = 0.25, alpha: float = 0.05, objective: str = "auto",
                 soft: str = "refusal"):
        self.soft_weight = soft_weight
        self.alpha = alpha
        self.objective = objective
        self.soft = soft
        self._check_params()

    def _validate_params(self):
        if not (isinstance(self.soft_weight, (int, float)) and self.soft_weight >= 0):
            raise InputError(f"soft_weight: expected a number >= 0, got {self.soft_weight!r}")
        if not (isinstance(self.alpha, (int, float)) and 0 < self.alpha < 1):
            raise InputError(f"alpha: expected 0 < alpha < 1, got {self.alpha!r}")
        if not (isinstance(self.objective, str) and self.objective in _OBJECTIVES):
            raise InputError(f"objective: expected one of {list(_OBJECTIVES)}, got {self.objective!r}")
        if not (isinstance(self.soft, str) and self.soft in _SOFT):
            raise InputError(f"soft: expected one of {list(_SOFT)}, got {self.soft!r}")

    @property
    def _estimand(self) -> str:
        how = ("weighted prequential log score" if self.__dict__.get("objective_") == "prequential"
               else "beta-binomial marginal likelihood")
        return f"empirical-Bayes prior strength K and mean P0 ({how})"

    # -- fitting -----------------------------------------------------------------------------
    def fit(self, signals: pd.DataFrame) -> PriorFitter:
        """Fit from a signal log (columns ``item_id``, ``signal``, rows in signal order); returns ``self``.

        Soft signals enter as ``self.soft`` says. The objective is
        ``self.objective``; ``"auto"`` takes ``"prequential"`` when the counts
        are fractional (``soft="fractional"`` and any row is a ``soft``
        signal), else ``"marginal"``.

        Parameters
        ----------
        signals : DataFrame
            The signal log: ``item_id`` and ``signal`` (``confirm``,
            ``disconfirm``, ``soft``, ``create``, ``codify``), one row per
            signal in the order they happened.

        Returns
        -------
        PriorFitter
            ``self``, fitted.

        Raises
        ------
        InputError
            When the log is malformed (as :func:`signal_counts` says), holds
            no signal to fit on, or every signal points the same way.

        See Also
        --------
        fit_counts : Fit the marginal objective from per-item totals.
        """
        flags = _signal_flags(signals)
        is_soft = flags["soft"]
        n_soft = int(is_soft.sum())
        if self.soft == "exclude":
            if n_soft:
                flags = _signal_flags(signals[~is_soft])
            weight = 0.0
        else:
            weight = 1.0 if self.soft == "refusal" else float(self.soft_weight)
        seq, counts = _sequence(flags, weight), _counts(flags, weight)
        objective = self.objective
        if objective == "auto":
            objective = "prequential" if self.soft == "fractional" and n_soft else "marginal"
        pseudo = self.soft == "fractional" and n_soft > 0 and weight not in (0.0, 1.0)
        self._soft_state = (self.soft, weight, n_soft, pseudo)
        if objective == "marginal":
            self._fit_marginal(counts["c"].to_numpy(), counts["d"].to_numpy())
        else:
            self._fit_prequential(seq, counts)
        self.counts_, self.sequence_ = counts, seq
        return self

    def fit_counts(self, c, d) -> PriorFitter:
        """Fit the marginal objective from per-item counts ``c`` (confirms) and ``d`` (disconfirm weight).

        Totals carry no signal order, so the prequential objective cannot be
        fitted from them: ``objective="prequential"`` raises
        :class:`InputError` (call :meth:`fit` with the signal log); ``"auto"``
        fits ``"marginal"``.

        Parameters
        ----------
        c : array-like of float
            Each item's confirm count.
        d : array-like of float
            Each item's disconfirm weight (fractional: a pseudo-likelihood).

        Returns
        -------
        PriorFitter
            ``self``, fitted.

        Raises
        ------
        InputError
            When ``objective="prequential"``, the counts are not valid, or
            every count points the same way.

        See Also
        --------
        fit : Fit from the signal log.
        """
        if self.objective == "prequential":
            raise InputError("objective='prequential' scores each signal with the counts before it and "
                             "needs the signal sequence: call fit(signals) with item_id and signal in "
                             "order, or use objective='marginal' for per-item totals")
        self._soft_state = ("counts", None, 0, None)  # pseudo or not: decided on the checked counts
        self._fit_marginal(c, d)
        self.sequence_ = None
        return self

    def _fit_marginal(self, c, d):
        c, d, pc, pd_, w, n_items, integer = distinct_pairs(c, d)
        self._c, self._d, self._w = pc, pd_, w
        self._kind = "marginal"
        self.counts_ = pd.DataFrame({"c": c, "d": d})
        # integer counts: the same likelihood as one log per count value (LogTerms), unless a few
        # huge counts would make that longer than a betaln per distinct pair
        terms = 2.0 * (pc.max() + pd_.max())
        cheap = integer and terms <= 32 * pc.size + 4096
        self._obj = LogTerms.from_pairs(pc, pd_, w) if cheap else BetaPairs(pc, pd_, w)
        self._finish(float(np.sum(w * pc)), float(np.sum(w * pd_)), n_items)

    def _fit_prequential(self, seq: pd.DataFrame, counts: pd.DataFrame):
        live = seq[seq["weight"] > 0]
        if live.empty:
            raise InputError("signals: no confirm, disconfirm or soft signal to fit on")
        # ℓ = Σ w [y log(c + a) + (1 − y) log(d + b) − log(c + d + K)]: one term per distinct offset
        c, d, w = (live[name].to_numpy(np.float64) for name in ("c", "d", "weight"))
        pos = live["y"].to_numpy(np.float64) > 0
        self._obj = LogTerms(c[pos], w[pos], d[~pos], w[~pos], c + d, w)
        self._kind = "prequential"
        n_items = int(((counts["c"] + counts["d"]) > 0).sum())
        self._finish(float(w[pos].sum()), float(w[~pos].sum()), n_items)

    def _finish(self, C: float, D: float, n_items: int):
        """Maximise the chosen objective, detect the boundary, compute the intervals."""
        from scipy.stats import chi2  # heavy: SciPy takes about 0.5 s to import

        self.__dict__.pop("summary_", None)  # unfitted until the fit succeeds
        if C == 0 or D == 0:
            raise InputError("signals: every signal points the same way (no confirm or no disconfirm); "
                             "P0 is at its boundary and cannot be fitted")
        self._C, self._D = C, D
        self.n_items_ = self.n_ = n_items
        self._cut = float(chi2.ppf(1 - self.alpha, 1)) / 2.0
        theta, ll = self._maximise()
        pooled = C / (C + D)
        ll_inf = self._ll_inf(pooled)
        k_hat = math.exp(theta[0])
        if k_hat > _K_BOUNDARY or ll_inf >= ll - 1e-6:
            self.k_, self.p0_, self.log_likelihood_, self.boundary_ = math.inf, pooled, ll_inf, True
            theta = np.array([_LOGK_HI, _logit(pooled)])
            ll = max(ll, ll_inf)
        elif theta[0] <= _LOGK_LO + 1e-3:
            self.k_, self.p0_, self.log_likelihood_, self.boundary_ = 0.0, _expit(theta[1]), ll, True
        else:
            self.k_, self.p0_, self.log_likelihood_, self.boundary_ = k_hat, _expit(theta[1]), ll, False
        self.objective_ = self._kind
        self._theta, self._ll = theta, ll
        summary = pd.DataFrame(
            {"coef": [self.k_, self.p0_], "ci_lower": [self._ci(0, -1), self._ci(1, -1)],
             "ci_upper": [self._ci(0, +1), self._ci(1, +1)]}, index=pd.Index(["k", "p0"], name="param"))
        soft, weight, n_soft, pseudo = self._soft_state
        if pseudo is None:
            pseudo = bool(np.any(self._c % 1) or np.any(self._d % 1))
        self.soft_, self.n_soft_ = soft, n_soft
        self.likelihood_ = "pseudo" if pseudo else "exact"
        self.assumption_ = _assumption(soft, weight, n_soft, self._kind, pseudo)
        summary.attrs.update({"soft": soft, "soft_weight": weight, "n_soft": n_soft,
                              "likelihood": self.likelihood_, "assumption": self.assumption_})
        self.summary_ = summary

    def _ll_inf(self, p: float) -> float:
        """The objective at K = ∞ (every forecast is P0): ``C log P0 + D log(1 − P0)``."""
        return self._C * math.log(p) + self._D * math.log1p(-p)

    def _loglik(self, theta):
        return self._obj.value(theta)

    def _neg(self, theta):
        value, grad = self._obj.value_grad(theta)
        return -value, -grad

    def _maximise(self):
        from scipy.optimize import minimize  # heavy: SciPy takes about 0.5 s to import

        pooled = self._C / (self._C + self._D)
        box = np.array([_LOGK_LO, -_LOGIT_LIM]), np.array([_LOGK_HI, _LOGIT_LIM])
        best = None
        for logk in (math.log(5.0), math.log(200.0)):
            start = np.array([logk, _logit(pooled)])
            reached = newton_max(self._obj, start, *box) if self._obj.has_curvature else None
            if reached is None:  # no curvature, or not concave on the way: BFGS
                res = minimize(self._neg_clipped, start, jac=True, method="BFGS", options={"gtol": 1e-7})
                x = self._clip(res.x)
                reached = x, self._loglik(x)
            if best is None or reached[1] > best[1]:
                best = reached
        return best

    @staticmethod
    def _clip(theta):
        return np.array([np.clip(theta[0], _LOGK_LO, _LOGK_HI), np.clip(theta[1], -_LOGIT_LIM, _LOGIT_LIM)])

    def _neg_clipped(self, theta):
        # BFGS is unconstrained: outside the box the objective is the box's edge value
        clipped = self._clip(theta)
        value, grad = self._neg(clipped)
        return value, np.where(clipped == theta, grad, 0.0)

    # -- profile likelihood ------------------------------------------------------------------
    def _profile(self, which: int) -> Profile:
        """The profile of coordinate ``which`` (0: log K, 1: logit P0; the latter includes K = ∞)."""
        C, D = self._C, self._D

        def at_infinity(u):  # C log P0 + D log(1 − P0) and its derivative in u = logit P0
            p, q = _expit(u), _expit(-u)
            return C * math.log(p) + D * math.log(q), C * q - D * p

        bounds = (-_LOGIT_LIM, _LOGIT_LIM) if which == 0 else (_LOGK_LO, _LOGK_HI)
        return Profile(self._obj, which, self._theta, bounds, at_infinity if which == 1 else None)

    def profile(self, param: str, values) -> pd.DataFrame:
        """Profile log-likelihood of ``param`` ("k" or "p0") at ``values``.

        Parameters
        ----------
        param : {"k", "p0"}
            The parameter profiled (the other one is maximised out).
        values : array-like of float
            Where to evaluate the profile (values of K or of P0).

        Returns
        -------
        DataFrame
            Columns ``value``, ``log_likelihood``, ``deviance``
            (``2(ℓ̂ − ℓ_profile)``) and ``inside`` (within the interval's cut).

        Raises
        ------
        InputError
            When ``param`` is neither ``"k"`` nor ``"p0"``.
        """
        if param not in ("k", "p0"):
            raise InputError(f"param: expected 'k' or 'p0', got {param!r}")
        vals = np.asarray(values, dtype=np.float64)
        which = 0 if param == "k" else 1
        coords = np.log(vals) if which == 0 else _logit(vals)
        profile_at = self._profile(which)
        ll = np.array([profile_at(x) for x in np.atleast_1d(coords)])
        dev = 2.0 * (self._ll - ll)
        return pd.DataFrame({"value": np.atleast_1d(vals), "log_likelihood": ll, "deviance": dev,
                             "inside": dev <= 2.0 * self._cut})

    def _ci(self, which: int, side: int) -> float:
        """The interval's end on ``side``: where the profile falls to ``ℓ̂ − χ²₁(1 − alpha) / 2``."""
        lo_lim, hi_lim = (_LOGK_LO, _LOGK_HI) if which == 0 else (-_LOGIT_LIM, _LOGIT_LIM)
        start = float(np.clip(self._theta[which], lo_lim, hi_lim))
        target = self._ll - self._cut
        profile_at = self._profile(which)
        end = hi_lim if side > 0 else lo_lim
        if profile_at(end) >= target:  # the profile never drops below the cut on this side
            if which == 0:
                return math.inf if side > 0 else 0.0
            return 1.0 if side > 0 else 0.0
        root = start if start == end else profile_at.crossing(target, start, end, self._cut)
        return math.exp(root) if which == 0 else _expit(root)

    def to_params(self, base: ScoringParams | None = None) -> ScoringParams:
        """ScoringParams with the fitted ``k`` and ``p0`` (other fields from ``base``).

        Parameters
        ----------
        base : ScoringParams, default=None
            Where the other fields come from (``None``: the defaults).

        Returns
        -------
        ScoringParams
            ``base`` with ``k`` and ``p0`` replaced.

        Raises
        ------
        InputError
            For a boundary fit, which has no finite K to ship.
        """
        if not math.isfinite(self.k_) or self.k_ <= 0:
            raise InputError(f"PriorFitter: boundary fit (k_ = {self.k_}); choose K yourself")
        return (base or ScoringParams()).replace(k=float(self.k_), p0=float(self.p0_))

    def _repr_values(self):
        return [("k_", self.k_), ("p0_", self.p0_)]

    def _summary_header(self):
        return [("objective", self.objective_), ("soft_weight", self.soft_weight),
                ("soft signals", f"{self.soft_} ({self.n_soft_} in the log)"),
                ("likelihood", "pseudo-likelihood" if self.likelihood_ == "pseudo" else "exact"),
                ("assumption", self.assumption_), ("boundary fit", self.boundary_)]


def _assumption(soft: str, weight, n_soft: int, kind: str, pseudo: bool) -> str:
    """One sentence: what the likelihood treated a soft signal as, and what that assumes."""
    if soft == "counts":
        return ("counts given directly: d taken as it is"
                + (" (fractional: a pseudo-likelihood)" if pseudo else " (integer: exact)"))
    if n_soft == 0:
        return "no soft signal in the log: the likelihood of the confirm/disconfirm signals is exact"
    if soft == "refusal":
        return ("each soft signal counted as a refusal (a full disconfirm): exact if a soft signal is a "
                "refusal voiced softly, carrying nothing else about the item's confirm rate")
    if soft == "exclude":
        return ("soft signals dropped: exact for the remaining signals if softs are uninformative about the "
                "item's confirm rate; P0 biased up if they are refusals")
    score = "the weighted prequential log score" if kind == "prequential" else "the beta-binomial likelihood"
    return (f"each soft signal counted as a disconfirm of weight {weight:g} in {score}: a pseudo-likelihood "
            "(production's scoring rule, not a model of the signals); its intervals are not calibrated and "
            "P0 is biased up if softs are refusals" if pseudo else
            f"each soft signal counted as {weight:g} disconfirm(s): integer counts, exact for that reading")


def _expit(x):
    x = np.asarray(x, dtype=np.float64)
    out = 1.0 / (1.0 + np.exp(-x))
    return float(out) if out.ndim == 0 else out


def _logit(p):
    p = np.asarray(p, dtype=np.float64)
    out = np.log(p) - np.log1p(-p)
    return float(out) if out.ndim == 0 else out
