"""Counterfactual estimators: what a metric would have been under a policy that did not log.

Each estimator turns logged rewards, a match indicator (did the new policy pick what was logged)
and, when logged, propensities into an :class:`Estimate`: replay matching, IPS and SNIPS with a
bootstrap interval, and the doubly robust estimator with a cross-fitted reward model. Every result
carries the effective sample size of its weights and a sentence on what it assumes about the log.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from thatchlab.core.errors import InputError, warn

__all__ = ["ESTIMATOR_ASSUMPTIONS", "RATIO_NOTE", "ESS_FLOOR", "Estimate", "assumption_text",
           "effective_sample_size", "estimate", "doubly_robust"]

@dataclass(frozen=True)
class Estimate:
    """A counterfactual estimate: ``value`` with a bootstrap interval (NaN when not asked).

    ``estimator`` is ``replay`` (mean over matched rows; Li et al. 2011 — unbiased
    only when the logging policy chose uniformly at random), ``ips``
    (Σ 1[match]·v / p / n), ``snips`` (Σ 1[match]·v / p / Σ 1[match] / p;
    Swaminathan & Joachims 2015) or ``dr`` (doubly robust, :func:`doubly_robust`).
    ``assumption`` says in words what the value assumes about the logging
    policy (see :data:`ESTIMATOR_ASSUMPTIONS`). ``ess`` is the effective
    sample size of the weights (:func:`effective_sample_size`; ``n_matched``
    for replay matching); ``interval`` names how ``ci_low``/``ci_high`` were
    found (``bootstrap-t``, ``percentile`` or empty when not asked).

    Parameters
    ----------
    estimator : str
        ``replay``, ``ips``, ``snips`` or ``dr``.
    value : float
        The estimate.
    ci_low, ci_high : float
        The interval's ends (NaN when not asked).
    n : int
        Logged rows.
    n_matched : int
        Rows where the new policy takes the logged action.
    assumption : str, default=""
        What the value assumes, in words.
    ess : float, default=nan
        The effective sample size of the weights.
    interval : str, default=""
        How the interval was found.

    See Also
    --------
    estimate : Replay matching, IPS and SNIPS estimates.
    doubly_robust : The doubly robust estimate.

    Examples
    --------
    >>> Estimate("replay", 0.5, 0.25, 0.75, n=10, n_matched=4).ci_high
    0.75
    """

    estimator: str
    value: float
    ci_low: float
    ci_high: float
    n: int
    n_matched: int
    assumption: str = ""
    ess: float = math.nan
    interval: str = ""


#: What each estimator assumes about the log, in words carried by every result.
ESTIMATOR_ASSUMPTIONS = {
    "direct": ("every message counts as logged: honest only for the parameters that "
               "produced the log"),
    "replay": ("replay matching is unbiased only if the logging policy chose what to surface "
               "uniformly at random; the log has no propensities, so this estimate assumes it"),
    "ips": ("inverse-propensity weighting assumes the logged propensities are right and "
            "positive for every list the new policy surfaces"),
    "snips": ("self-normalised inverse-propensity weighting assumes the logged propensities are "
              "right and positive for every list the new policy surfaces"),
    "dr": ("doubly robust: unbiased when either the logged propensities or the reward model are "
           "right; the propensities must be positive for every list the new policy surfaces"),
}
#: Below this effective sample size of the weights an IPS/SNIPS/DR interval is not trusted: a few
#: heavily weighted rows carry the estimate, and the benchmark (``bench_ope_coverage``) finds the
#: bootstrap-t interval's coverage falling under 0.93 in worlds whose effective sample size is smaller.
ESS_FLOOR = 20.0
#: Appended for ratio metrics, whose propensity normalisers cancel.
RATIO_NOTE = "for a ratio metric IPS and SNIPS coincide (the normalisers cancel)"


def assumption_text(estimator: str, ratio: bool = False) -> str:
    """The assumption sentence of ``estimator`` (plus the ratio note for IPS/SNIPS ratios).

    Parameters
    ----------
    estimator : str
        A key of :data:`ESTIMATOR_ASSUMPTIONS`.
    ratio : bool, default=False
        The metric is a ratio of means.

    Returns
    -------
    str
        The sentence.

    Examples
    --------
    >>> assumption_text("snips", ratio=True).endswith("the normalisers cancel)")
    True
    """
    text = ESTIMATOR_ASSUMPTIONS[estimator]
    if ratio and estimator in ("ips", "snips"):
        text += "; " + RATIO_NOTE
    return text


def effective_sample_size(weights) -> float:
    """Kish's effective sample size of importance weights, ``(Σ w)² / Σ w²`` (0 when every weight is 0).

    ``n`` equal weights give ``n``; one row holding all the weight gives 1.

    Parameters
    ----------
    weights : array-like of float
        The importance weights.

    Returns
    -------
    float
        The effective sample size.

    Examples
    --------
    >>> effective_sample_size([2.0, 2.0, 0.0, 0.0]), effective_sample_size([10.0, 1.0])
    (2.0, 1.198019801980198)
    """
    w = np.asarray(weights, dtype=np.float64)
    sq = float(np.sum(w * w))
    return float(np.sum(w)) ** 2 / sq if sq > 0 else 0.0


def _point_se(values, match, prop, estimator, den=None):
    """The estimate and its linearised standard error along the last axis.

    ``ips`` without a denominator is a plain mean of ``w·v`` (its standard
    error the sample one); the others are ratios ``Σ w·v / Σ w·d`` (``d`` = 1
    without a denominator) with the delta-method influence
    ``w·(v − θ·d) / mean(w·d)``.
    """
    weight = match if estimator == "replay" else match / prop
    n = values.shape[-1]
    dd = np.ones_like(values) if den is None else den
    with np.errstate(invalid="ignore", divide="ignore"):
        if estimator == "ips" and den is None:
            theta = (values * weight).sum(axis=-1) / n
            psi = values * weight - theta[..., None]
        else:
            norm = (dd * weight).sum(axis=-1)
            theta = np.where(norm > 0, (values * weight).sum(axis=-1) / np.where(norm > 0, norm, 1.0), np.nan)
            psi = weight * (values - theta[..., None] * dd) / np.where(norm > 0, norm / n, 1.0)[..., None]
        se = np.sqrt((psi * psi).sum(axis=-1) / max(n - 1, 1) / n)
    return theta, se


def _bootstrap_t(theta, se, boot_theta, boot_se, alpha):
    """The studentized (bootstrap-t) interval ``[θ̂ − q₁₋α/₂·se, θ̂ − q_α/₂·se]``, ``q`` the quantiles
    (inverted CDF) of ``t* = (θ* − θ̂)/se*``. A resample whose ``se*`` is 0 (it drew none of the few
    rows that carry the estimate, so every weighted value is equal) is studentized by the sample's
    ``se`` instead, so it counts as a resample far from ``θ̂`` rather than as an infinite ``t*``;
    with ``se`` 0 too the interval is the point."""
    d = boot_theta - theta
    scale = np.where(boot_se > 0, boot_se, se)
    with np.errstate(invalid="ignore", divide="ignore"):
        t = np.where(scale > 0, d / np.where(scale > 0, scale, 1.0), 0.0)
    t = t[np.isfinite(t)]
    if not t.size or not np.isfinite(theta):
        return math.nan, math.nan
    hi_q = float(np.quantile(t, 1 - alpha / 2, method="inverted_cdf"))
    lo_q = float(np.quantile(t, alpha / 2, method="inverted_cdf"))
    return float(theta - hi_q * se), float(theta - lo_q * se)


def _point(values, match, prop, estimator, den=None):
    """The estimate along the last axis (rows of a bootstrap matrix at once)."""
    weight = match if estimator == "replay" else match / prop
    num = (values * weight).sum(axis=-1)
    if den is not None:
        norm = (den * weight).sum(axis=-1)
    elif estimator == "ips":
        norm = np.full(np.shape(num), float(values.shape[-1]))
    else:
        norm = weight.sum(axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(norm > 0, num / np.where(norm > 0, norm, 1.0), np.nan)


def estimate(values, match, propensity=None, estimator: str = "auto", denominator=None, n_boot: int = 0,
             seed: int = 0, alpha: float = 0.05, interval: str = "bootstrap-t") -> Estimate:
    """Estimate a per-row mean (or ratio of means) of a new policy from logged rows.

    ``ess`` is the effective sample size of the weights 1[match]/p
    (:func:`effective_sample_size`). When an interval is asked for IPS or
    SNIPS and ``ess`` is below :data:`ESS_FLOOR` (20), a UserWarning says the
    interval rests on too few effective rows to be trusted.

    Parameters
    ----------
    values : array-like of float
        Per logged row, the outcome the metric counts (e.g. 1 = wrong follow).
    match : array-like of bool
        Per row, whether the new policy takes the logged action (surfaces the same list).
    propensity : array-like of float, default=None
        Per row, the logging policy's probability of the logged action.
    estimator : {"auto", "replay", "ips", "snips"}, default="auto"
        ``auto``: snips when propensities are given, else replay.
    denominator : array-like of float, default=None
        Optional per-row denominator: the estimate is then the ratio of the
        two weighted sums (e.g. wrong follows / strong follows).
    n_boot : int, default=0
        Bootstrap resamples of rows for the interval (0 = none).
    seed : int, default=0
        Seed of the resampling.
    alpha : float, default=0.05
        1 − the interval's level.
    interval : {"bootstrap-t", "percentile"}, default="bootstrap-t"
        ``bootstrap-t``: the studentized bootstrap, each resample's estimate
        minus the estimate over its linearised standard error; it follows
        the skew a few heavily weighted rows give IPS, where the percentile
        interval falls short.

    Returns
    -------
    Estimate
        The value, its interval and what it assumes.

    Raises
    ------
    InputError
        When ``estimator`` or ``interval`` is unknown, or an estimator other
        than replay has no propensities.

    See Also
    --------
    doubly_robust : The doubly robust estimate, with a reward model.

    Examples
    --------
    >>> estimate([1, 0, 1, 1], [True, True, False, True]).value
    0.6666666666666666
    >>> e = estimate([1, 0, 1, 1], [True, True, False, True], [0.5, 1.0, 1.0, 0.5])
    >>> e.estimator, round(e.value, 4), round(e.ess, 4)
    ('snips', 0.8, 2.7778)
    """
    v = np.asarray(values, dtype=np.float64)
    m = np.asarray(match, dtype=np.float64)
    d = None if denominator is None else np.asarray(denominator, dtype=np.float64)
    if estimator == "auto":
        estimator = "replay" if propensity is None else "snips"
    if estimator not in ("replay", "ips", "snips"):
        raise InputError(f"estimator: expected 'replay', 'ips', 'snips' or 'auto', got {estimator!r}")
    if estimator != "replay" and propensity is None:
        raise InputError(f"estimator {estimator!r} needs propensities")
    if interval not in ("bootstrap-t", "percentile"):
        raise InputError(f"interval: expected 'bootstrap-t' or 'percentile', got {interval!r}")
    p = np.ones_like(v) if propensity is None else np.asarray(propensity, dtype=np.float64)
    value = float(_point(v, m, p, estimator, d))
    ess = effective_sample_size(m if estimator == "replay" else m / p)
    lo = hi = float("nan")
    if n_boot and len(v):
        lo, hi = _resampled_interval(v, m, p, d, estimator, n_boot, seed, alpha, interval)
        if estimator != "replay" and ess < ESS_FLOOR:
            warn(f"estimate: the {estimator} weights' effective sample size is {ess:.3g}, below the floor "
                 f"of {ESS_FLOOR:g}: a few heavily weighted rows carry the estimate and its interval is "
                 "not trusted", UserWarning)
    return Estimate(estimator, value, lo, hi, int(len(v)), int(m.sum()),
                    assumption_text(estimator, ratio=d is not None), ess, interval if n_boot and len(v) else "")


def _resampled_interval(v, m, p, d, estimator, n_boot, seed, alpha, interval):
    """:func:`estimate`'s interval from ``n_boot`` resamples of the rows: the percentile interval of
    the resampled estimates, or the bootstrap-t (NaN ends when no resample gives an estimate)."""
    lo = hi = float("nan")
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, len(v), size=(int(n_boot), len(v)))
    if interval == "percentile":
        boots = _point(v[idx], m[idx], p[idx], estimator, None if d is None else d[idx])
        boots = boots[np.isfinite(boots)]
        if boots.size:
            lo, hi = (float(x) for x in np.quantile(boots, [alpha / 2, 1 - alpha / 2]))
    else:
        theta, se = _point_se(v, m, p, estimator, d)
        bt, bse = _point_se(v[idx], m[idx], p[idx], estimator, None if d is None else d[idx])
        keep = np.isfinite(bt)
        lo, hi = _bootstrap_t(float(theta), float(se), bt[keep], bse[keep], alpha)
    return lo, hi


def doubly_robust(values, match, propensity, features, target_features, reward_model=None, n_folds: int = 2,
                  n_boot: int = 0, seed: int = 0, alpha: float = 0.05) -> Estimate:
    r"""The doubly robust estimate of a new policy's per-row mean, with a cross-fitted reward model.

    For logged row :math:`i` with outcome :math:`v_i`, propensity :math:`p_i`
    of the logged action and :math:`m_i = 1` when the new policy takes that
    action, a reward model :math:`\hat q` predicts the outcome from the
    features of a (context, action) pair. The estimate is the mean of

    .. math::

        \phi_i = \hat q(x_i, \pi(x_i)) + \frac{m_i}{p_i}\,(v_i - \hat q(x_i, a_i)),

    the direct method's prediction for the new policy's action corrected by
    the inverse-propensity-weighted residual of the logged one (Dudík,
    Langford & Li 2011; the form Open Bandit Pipeline's ``DoublyRobust``
    estimates). It is unbiased when either the propensities or the reward
    model are right. **Cross-fitting**: the rows are split into ``n_folds``
    folds (shuffled by ``seed``) and each fold's :math:`\hat q` is fitted on
    the other folds' logged rows only, so no row's residual is shrunk by a
    model that saw it.

    Parameters
    ----------
    values : array-like of float
        Per logged row, the outcome :math:`v_i`.
    match : array-like of bool
        Per row, :math:`m_i`: the new policy takes the logged action.
    propensity : array-like of float
        Per row, :math:`p_i`, in (0, 1] for every matched row.
    features, target_features : array-like of shape (n, k)
        Each row's logged (context, action) pair, and its (context, new
        policy's action) pair (2-d arrays or frames of the same width).
    reward_model : scikit-learn regressor or classifier, default=None
        :math:`\hat q`, cloned per fold (``None``: a ``LogisticRegression``
        when every value is 0 or 1, else a ``Ridge``).
    n_folds : int, default=2
        Cross-fitting folds, 2 to ``n``.
    n_boot : int, default=0
        Resamples for the interval (0 = none): the bootstrap-t of the mean
        of :math:`\phi`, rows resampled, the fitted models held.
    seed : int, default=0
        Seed of the folds and of the resampling.
    alpha : float, default=0.05
        1 − the interval's level.

    Returns
    -------
    Estimate
        ``estimator="dr"``, the value, its interval and ``ess``, the effective sample
        size of :math:`m_i/p_i` (a UserWarning says when an interval has < :data:`ESS_FLOOR`).

    Raises
    ------
    InputError
        When inputs differ in rows or width, a matched row has no probability,
        ``n_folds`` is out of range or a classifier gets values other than 0/1.

    See Also
    --------
    estimate : Replay matching, IPS and SNIPS.

    Examples
    --------
    >>> from sklearn.linear_model import LinearRegression
    >>> x = np.array([[0.0], [1.0], [0.0], [1.0]] * 10)  # the outcome is the feature: q̂ is exact
    >>> e = doubly_robust([0, 1, 0, 1] * 10, [1, 1, 0, 0] * 10, [0.5] * 40, x, x, LinearRegression())
    >>> e.estimator, round(e.value, 6), e.ess
    ('dr', 0.5, 20.0)
    """
    v, m, p, xl, xt = _dr_inputs(values, match, propensity, features, target_features, n_folds)
    n = len(v)
    q_logged, q_target = _cross_fitted_rewards(v, xl, xt, reward_model, n_folds, seed)
    w = np.where(m > 0, m / np.where(p > 0, p, 1.0), 0.0)
    phi = q_target + w * (v - q_logged)
    value = float(phi.mean()) if n else math.nan
    ess = effective_sample_size(w)
    lo, hi = _dr_interval(phi, value, ess, n_boot, seed, alpha) if n_boot and n > 1 else (math.nan, math.nan)
    return Estimate("dr", value, lo, hi, n, int(m.sum()), assumption_text("dr"), ess,
                    "bootstrap-t" if n_boot and n > 1 else "")


def _dr_inputs(values, match, propensity, features, target_features, n_folds):
    """:func:`doubly_robust`'s inputs as float arrays (features 2-d), checked: one row each, the
    same feature width, a probability for every matched row, and a usable number of folds."""
    v = np.asarray(values, dtype=np.float64)
    m = np.asarray(match, dtype=np.float64)
    p = np.asarray(propensity, dtype=np.float64)
    xl = np.asarray(features, dtype=np.float64)
    xt = np.asarray(target_features, dtype=np.float64)
    n = len(v)
    if xl.ndim == 1:
        xl = xl[:, None]
    if xt.ndim == 1:
        xt = xt[:, None]
    if not (len(m) == len(p) == len(xl) == len(xt) == n):
        raise InputError(f"doubly_robust: values, match, propensity, features and target_features need one "
                         f"row each; got {n}, {len(m)}, {len(p)}, {len(xl)}, {len(xt)}")
    if xl.shape[1] != xt.shape[1]:
        raise InputError(f"doubly_robust: features have {xl.shape[1]} columns, target_features "
                         f"{xt.shape[1]}; expected the same")
    bad = np.flatnonzero((m > 0) & ~((p > 0) & (p <= 1)))
    if bad.size:
        raise InputError(f"doubly_robust: propensity row {int(bad[0])}: expected a probability in (0, 1] "
                         f"for a matched row, got {p[bad[0]]!r}")
    if not 2 <= int(n_folds) <= n:
        raise InputError(f"n_folds: expected 2 ≤ n_folds ≤ {n} rows, got {n_folds!r}")
    return v, m, p, xl, xt


def _cross_fitted_rewards(v, xl, xt, reward_model, n_folds, seed):
    """The reward model's predictions for the logged and the target pairs, each row's from a model
    fitted on the other folds (a class-1 probability for a classifier)."""
    from sklearn.base import clone, is_classifier  # heavy: sklearn models
    from sklearn.linear_model import LogisticRegression, Ridge  # heavy: sklearn models

    n = len(v)
    binary = bool(np.isin(v, (0.0, 1.0)).all())
    template = reward_model if reward_model is not None else (LogisticRegression() if binary else Ridge())
    folds = np.random.default_rng(seed).permutation(n) % int(n_folds)
    q_logged, q_target = np.empty(n), np.empty(n)

    classifier = is_classifier(template)
    if classifier and not binary:
        raise InputError("reward_model: a classifier needs values of 0 or 1; give a regressor for "
                         "other outcomes")

    def predict(model, x):
        if classifier:
            return model.predict_proba(x)[:, list(model.classes_).index(1)]
        return model.predict(x)

    for k in range(int(n_folds)):
        test, train = folds == k, folds != k
        y_train = v[train]
        if classifier and np.unique(y_train).size < 2:  # one class only: the model is that constant
            q_logged[test] = q_target[test] = float(y_train[0]) if y_train.size else 0.0
            continue
        model = clone(template).fit(xl[train], y_train.astype(int) if classifier else y_train)
        q_logged[test], q_target[test] = predict(model, xl[test]), predict(model, xt[test])
    return q_logged, q_target


def _dr_interval(phi, value, ess, n_boot, seed, alpha):
    """The bootstrap-t interval of the mean of ``phi`` (rows resampled, the fitted models held), with
    a UserWarning when the weights' effective sample size ``ess`` is below the floor."""
    n = len(phi)
    se = float(phi.std(ddof=1) / math.sqrt(n))
    idx = np.random.default_rng(seed).integers(0, n, size=(int(n_boot), n))
    boot = phi[idx]
    lo, hi = _bootstrap_t(value, se, boot.mean(axis=1), boot.std(axis=1, ddof=1) / math.sqrt(n), alpha)
    if ess < ESS_FLOOR:
        warn(f"doubly_robust: the weights' effective sample size is {ess:.3g}, below the floor of "
             f"{ESS_FLOOR:g}: the correction term rests on a few rows and its interval is not trusted",
             UserWarning)
    return lo, hi
