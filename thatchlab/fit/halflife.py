"""Half-life fitting for omi's belief model: the priors, estimated.

Currency assumes a belief stops holding at a constant rate since it was last
evidenced, i.e. an exponential lifetime whose half-life is the class prior.
:class:`HalfLifeFitter` estimates that half-life per class by maximum
likelihood from right-censored exposure segments (lifelines style), with exact
Poisson intervals and an optional Weibull check of the constant-rate
assumption; :meth:`HalfLifeFitter.fit_from_log` builds the segments from a
memory log.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from thatchlab.belief import exposure_segments
from thatchlab.core.errors import InputError, ThatchlabError
from thatchlab.core.params.belief import BELIEF_CLASSES, BeliefParams
from thatchlab.fit._base import BaseFitter

__all__ = ["HalfLifeFitter", "NoExposureError", "exposure_segments", "weibull_mle"]

_LN2 = math.log(2.0)


class NoExposureError(ThatchlabError, ValueError):
    """A fitted class has events but no exposure (half-life 0), which no belief prior can express."""


class HalfLifeFitter(BaseFitter):
    """Right-censored exponential maximum likelihood of half-lives, per group.

    For a group with ``d`` observed ends over total exposure ``T`` days the
    MLE of the rate is ``λ = d / T`` and the half-life ``ln 2 / λ`` (infinite
    when ``d = 0``). The ``1 − alpha`` interval is the exact Poisson
    (Garwood) interval of the rate, ``[χ²(α/2; 2d) / 2T, χ²(1−α/2; 2d+2) / 2T]``,
    mapped to half-lives. The log-likelihood is ``d ln λ − λ T``.

    Zero-length segments that end in an event (a belief contradicted at the
    very time it was written) are events with no exposure. They add to ``d``
    and nothing to ``T``. A group whose exposure is all zero but which has
    events has ``λ = ∞``: as far as the data can tell it decays at once, so
    the half-life is 0 with the interval ``[0, 0]``, and ``d ln λ − λ T``
    has no finite maximum, so the log-likelihood is ``+∞``. A group with
    neither exposure nor events has learned nothing, so its half-life and
    interval are NaN.

    Parameters
    ----------
    alpha : float, default=0.05
        1 − the interval's coverage.
    weibull : bool, default=False
        Also fit a Weibull per group (:func:`weibull_mle`, SciPy; the
        values of lifelines' ``WeibullFitter``, which is not needed) and report
        whether its shape ``rho`` is consistent with 1 (constant rate).

    Attributes
    ----------
    half_life_ : Series
        Half-lives (days) per group.
    rate_ : Series
        Rates (per day) per group.
    summary_ : DataFrame
        Indexed by group, columns ``SUMMARY_COLUMNS``: ``coef`` (half-life,
        days), ``ci_lower``, ``ci_upper``, ``n``, ``events``,
        ``exposure_days``, ``rate``, ``log_likelihood``.
    confidence_interval_ : DataFrame
        The two interval columns of ``summary_``.
    log_likelihood_ : float
        The sum over groups.
    n_ : int
        The number of segments.
    weibull_ : DataFrame or None
        ``rho``, ``rho_ci_lower``, ``rho_ci_upper``, ``lambda_``,
        ``exponential_ok`` per group when ``weibull=True``, else ``None``.
    segments_ : DataFrame
        The exposure segments, after :meth:`fit_from_log`.

    Examples
    --------
    >>> f = HalfLifeFitter().fit([10, 10, 10, 10], [True, False, True, False])
    >>> round(float(f.half_life_["all"]), 4)
    13.8629
    >>> int(f.summary_.loc["all", "n"]), int(f.summary_.loc["all", "events"])
    (4, 2)
    >>> f
    <HalfLifeFitter: fitted with 4 exposure segments, groups=1, log_likelihood_=-7.991>
    """

    _estimand = "half-life (days) per group: right-censored exponential MLE, exact Poisson intervals"
    _n_noun = "exposure segments"
    SUMMARY_COLUMNS = ("coef", "ci_lower", "ci_upper", "n", "events", "exposure_days", "rate",
                       "log_likelihood")

    @classmethod
    def _check_data(cls) -> tuple:
        """Eight exposure segments of two belief classes: ``(durations_days, event_observed, groups)``."""
        return ([3.0, 10.0, 4.5, 20.0, 1.0, 7.0, 12.0, 30.0],
                [True, False, True, False, True, True, False, False],
                ["state", "state", "state", "state", "plan", "plan", "plan", "plan"])

    def __init__(self, alpha: float = 0.05, weibull: bool = False):
        self.alpha = alpha
        self.weibull = weibull
        self._check_params()

    def _validate_params(self):
        if isinstance(self.alpha, bool) or not isinstance(self.alpha, (int, float)) or not 0 < self.alpha < 1:
            raise InputError(f"alpha: expected 0 < alpha < 1, got {self.alpha!r}")
        return {"alpha": float(self.alpha), "weibull": bool(self.weibull)}

    def _repr_values(self):
        return [("groups", len(self.summary_)), ("log_likelihood_", self.log_likelihood_)]

    def _summary_header(self):
        return [("events", int(self.summary_["events"].sum()))]

    def fit(self, durations_days, event_observed, groups=None) -> HalfLifeFitter:
        """Fit per group; returns ``self``.

        The segments are first reduced to per-group totals (``pd.factorize``
        of the groups, ``np.bincount`` of segments, events and exposure); the
        estimates, intervals and log-likelihoods are closed-form in them.

        Parameters
        ----------
        durations_days : array-like of float
            Each segment's exposure, in days (finite, ≥ 0).
        event_observed : array-like of bool
            Whether the segment ended in an event (else it is censored).
        groups : array-like, default=None
            Each segment's group (a missing one is ``unclassified``);
            ``None`` fits one group, ``all``.

        Returns
        -------
        HalfLifeFitter
            ``self``, fitted.

        Raises
        ------
        InputError
            When the three differ in length, there is no segment, or a
            duration is negative or not finite.

        See Also
        --------
        fit_from_log : Build the segments from a memory log, then fit.
        """
        t = np.asarray(durations_days, dtype=np.float64).ravel()
        e = np.asarray(event_observed).astype(bool, copy=False).ravel()
        if groups is not None and not isinstance(groups, (np.ndarray, pd.Series, pd.Index,
                                                          pd.api.extensions.ExtensionArray)):
            groups = np.asarray(groups, dtype=object)
        if t.size != e.size or (groups is not None and (groups.ndim != 1 or len(groups) != t.size)):
            raise InputError("durations_days, event_observed and groups differ in length")
        if t.size == 0:
            raise InputError("durations_days: expected at least one duration")
        if not (t.min() >= 0 and t.max() < math.inf):  # NaN propagates through min and max
            row = int(np.flatnonzero(~(np.isfinite(t) & (t >= 0)))[0])
            raise InputError(f"durations_days row {row}: expected a finite duration >= 0 (days), "
                             f"got {float(t[row])!r}")
        summary = self._summarise(*_group_totals(t, e, groups))
        self.half_life_ = summary["coef"].rename("half_life_days")
        self.rate_ = summary["rate"].rename("rate_per_day")
        self.log_likelihood_ = float(summary["log_likelihood"].sum())
        self.n_ = int(t.size)
        if self.weibull:
            g = np.full(t.size, "all", dtype=object) if groups is None else _labels(groups)
            self.weibull_ = self._weibull(pd.DataFrame({"t": t, "e": e, "g": g}))
        else:
            self.weibull_ = None
        self.summary_ = summary  # last: a fitter with summary_ is fitted
        return self

    def _summarise(self, names, n, d, T) -> pd.DataFrame:
        """``summary_`` from the per-group totals: estimates, exact intervals, log-likelihoods."""
        from scipy.stats import chi2  # heavy: SciPy takes about 0.5 s to import

        with np.errstate(divide="ignore", invalid="ignore"):
            # T = 0: events → rate ∞ (half-life 0, interval [0, 0]); no events → nothing learned (NaN)
            rate = np.where(T > 0, d / T, np.where(d > 0, np.inf, np.nan))
            lo_rate = np.where(d > 0, chi2.ppf(self.alpha / 2, 2 * d) / (2 * T), 0.0)
            hi_rate = chi2.ppf(1 - self.alpha / 2, 2 * d + 2) / (2 * T)
            half = np.where(np.isnan(rate), np.nan, np.where(rate > 0, _LN2 / rate, np.inf))
            ll = np.where(T > 0, np.where(d > 0, d * np.log(rate), 0.0) - rate * T,
                          np.where(d > 0, np.inf, 0.0))
            ci_lo = np.where(np.isnan(rate), np.nan, _LN2 / hi_rate)
            ci_hi = np.where(np.isnan(rate), np.nan, np.where(lo_rate > 0, _LN2 / lo_rate, np.inf))
        return pd.DataFrame({"coef": half, "ci_lower": ci_lo, "ci_upper": ci_hi, "n": n,
                             "events": d.astype(np.int64), "exposure_days": T, "rate": rate,
                             "log_likelihood": ll}, index=pd.Index(names, dtype=object, name="group"))

    def _weibull(self, df: pd.DataFrame) -> pd.DataFrame:
        rows = []
        for name, part in df.groupby("g", sort=True):
            rho = lam = lo = hi = np.nan
            if part["e"].sum() >= 2:
                rho, lam, lo, hi = weibull_mle(part["t"].to_numpy(), part["e"].to_numpy(), self.alpha)
            rows.append(dict(group=name, rho=rho, rho_ci_lower=lo, rho_ci_upper=hi, lambda_=lam,
                             exponential_ok=bool(lo <= 1 <= hi) if not np.isnan(rho) else None))
        return pd.DataFrame(rows).set_index("group")

    def fit_from_log(self, log: pd.DataFrame, end=None) -> HalfLifeFitter:
        """Build :func:`exposure_segments` from a memory log and fit per class.

        Parameters
        ----------
        log : DataFrame
            A memory log, as :func:`exposure_segments` reads it.
        end : timestamp, default=None
            Where open segments are censored (as :func:`exposure_segments`
            takes it).

        Returns
        -------
        HalfLifeFitter
            ``self``, fitted; the segments are in ``segments_``.

        See Also
        --------
        fit : Fit from segments directly.
        """
        seg = exposure_segments(log, end=end)
        self.segments_ = seg
        return self.fit(seg["duration_days"], seg["event"], seg["group"])

    def to_params(self, base: BeliefParams | None = None) -> BeliefParams:
        """``base`` with each fitted belief class's prior replaced by its half-life.

        An infinite half-life (exposure but no observed end) becomes ``None``,
        which means "never decays". A class with no exposure and no events
        (NaN) keeps ``base``'s prior. A class with events but no exposure has
        half-life 0: its beliefs ended the moment they were written. No
        positive half-life can stand for that, and ``None`` would say the
        opposite, so this raises :class:`NoExposureError` naming the classes.
        A class with events never becomes ``None``.

        Parameters
        ----------
        base : BeliefParams, default=None
            The parameters whose priors are replaced (``None``: the defaults).

        Returns
        -------
        BeliefParams
            ``base`` with the fitted classes' half-lives.

        Raises
        ------
        NoExposureError
            When a belief class has events but no exposure.

        Examples
        --------
        >>> f = HalfLifeFitter().fit([0.0, 0.0, 3.0], [True, True, False], ["state", "state", "plan"])
        >>> f.half_life_.to_dict()
        {'plan': inf, 'state': 0.0}
        >>> f.to_params()  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        thatchlab.fit.halflife.NoExposureError: HalfLifeFitter: class(es) ['state'] show 2 event(s) with zero exposure...
        """
        base = base if base is not None else BeliefParams()
        changes, zero = {}, []
        for g, hl in self.half_life_.items():
            if g not in BELIEF_CLASSES or np.isnan(hl):
                continue
            if hl == 0:
                zero.append(g)
                continue
            changes[g] = None if np.isinf(hl) else float(hl)
        if zero:
            events = int(self.summary_.loc[zero, "events"].sum())
            raise NoExposureError(
                f"HalfLifeFitter: class(es) {zero} show {events} event(s) with zero exposure (ended at the "
                "very time of their evidence, e.g. contradicted at the write's own timestamp): the data say "
                "they decay at once and no positive half-life can be exported; check those rows' timestamps "
                "or set the prior yourself")
        return base.replace(**changes)


def weibull_mle(durations, events, alpha: float = 0.05) -> tuple[float, float, float, float]:
    """Right-censored Weibull maximum likelihood: ``(rho, lambda_, rho_ci_lower, rho_ci_upper)``.

    The model is lifelines' parametrisation, survival ``S(t) = exp(-(t/λ)^ρ)``
    and hazard ``(ρ/λ)(t/λ)^(ρ-1)``; durations below 1e-6 are read as 1e-6.
    With ``d`` events the likelihood's ``λ`` given ``ρ`` is
    ``(Σ t^ρ / d)^(1/ρ)``; putting it back leaves a score in ``ρ`` alone,
    ``1/ρ + mean over events of ln t − (Σ t^ρ ln t)/(Σ t^ρ)``, which falls
    from +∞ as ``ρ`` grows, so ``scipy.optimize.brentq`` finds its one root
    (on ``ln ρ``, with the durations divided by their maximum so that no power
    overflows). The interval is the Wald interval ``ρ ± z·se`` whose ``se``
    comes from the inverse observed information in ``(λ, ρ)``, as lifelines
    reports it. Fewer than two events, or every event at the longest
    duration (``ρ`` unbounded), give NaN throughout.

    Parameters
    ----------
    durations : array-like of float
        Each segment's duration.
    events : array-like of bool
        Whether each segment ended in an event.
    alpha : float, default=0.05
        1 − the Wald interval's coverage.

    Returns
    -------
    tuple of float
        ``(rho, lambda_, rho_ci_lower, rho_ci_upper)``.

    Examples
    --------
    >>> rho, lam, lo, hi = weibull_mle([1.0, 2.0, 3.0, 4.0, 5.0], [True] * 5)
    >>> round(rho, 4), round(lam, 4), round(lo, 4), round(hi, 4)
    (2.2938, 3.3943, 0.633, 3.9546)
    """
    from scipy.optimize import brentq  # heavy: SciPy takes about 0.5 s to import
    from scipy.stats import norm  # heavy: SciPy takes about 0.5 s to import

    t = np.maximum(np.asarray(durations, dtype=np.float64).ravel(), 1e-6)
    e = np.asarray(events).astype(bool, copy=False).ravel()
    d = int(np.count_nonzero(e))
    nan = (math.nan,) * 4
    if d < 2:
        return nan
    scale = float(t.max())
    x = np.log(t / scale)  # <= 0, so exp(rho * x) <= 1 at any rho
    x_events = float(x[e].mean())

    def score(log_rho: float) -> float:
        rho = math.exp(log_rho)
        w = np.exp(rho * x)
        return 1.0 / rho + x_events - float(w @ x) / float(w.sum())

    lo_b, hi_b = math.log(1e-8), math.log(1e8)
    if not score(hi_b) < 0:  # every event at the longest duration: no finite maximum
        return nan
    rho = math.exp(brentq(score, lo_b, hi_b, xtol=1e-14, rtol=4 * np.finfo(float).eps, maxiter=500))
    lam = scale * (float(np.exp(rho * x).sum()) / d) ** (1.0 / rho)
    z = np.log(t / lam)
    u = np.exp(rho * z)  # (t/λ)^ρ; Σu = d at the maximum
    s = float(u.sum())
    uz = float(u @ z)
    info = np.array([[rho / lam**2 * (s - d + rho * s), -((s - d) / lam + rho / lam * uz)],
                     [-((s - d) / lam + rho / lam * uz), d / rho**2 + float(u @ (z * z))]])
    var = np.linalg.inv(info)
    half = float(norm.ppf(1 - alpha / 2)) * math.sqrt(var[1, 1])
    return rho, lam, rho - half, rho + half


def _labels(groups) -> np.ndarray:
    """``groups`` as an object array, a missing group named ``unclassified``."""
    return np.asarray(pd.Series(groups, dtype=object).fillna("unclassified"), dtype=object)


def _group_totals(t: np.ndarray, e: np.ndarray, groups):
    """Sorted group names and, per group, segments, events and exposure (days).

    One ``pd.factorize`` of the groups (a missing group is ``unclassified``),
    then two bincounts over the codes: of ``2·code + event`` (segments
    without and with an event, in integers) and of the durations. Merging
    the missing groups with one already named ``unclassified``, and sorting
    (``groupby(sort=True)``'s order), happen on the few per-code totals.
    """
    if groups is None:
        return (np.array(["all"], dtype=object), np.array([t.size]), np.array([float(np.count_nonzero(e))]),
                np.array([float(t.sum())]))
    codes, names = pd.factorize(groups)
    names = np.asarray(names, dtype=object)
    m = names.size
    if codes.min() < 0:  # missing groups: one more code, named "unclassified"
        codes = np.where(codes < 0, m, codes)
        names, m = np.append(names, "unclassified"), m + 1
    key = codes << 1
    key |= e
    tally = np.bincount(key, minlength=2 * m).reshape(m, 2)  # per code: segments without, with an event
    exposure = np.bincount(codes, weights=t, minlength=m)
    rank, ordered = pd.factorize(names, sort=True)  # rank[i]: place of code i's name among the sorted names
    k = len(ordered)
    n = np.bincount(rank, weights=tally.sum(axis=1), minlength=k).astype(np.int64)
    d = np.bincount(rank, weights=tally[:, 1], minlength=k)
    return np.asarray(ordered, dtype=object), n, d, np.bincount(rank, weights=exposure, minlength=k)
