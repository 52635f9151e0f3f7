"""The statistics of :func:`thatchlab.decide.decide`: paired clustered comparisons and the procedure.

Every comparison is a paired cluster-bootstrap difference of two ratio
metrics studentized with ``G − 1`` degrees of freedom (``G`` the clusters
with data): the bootstrap gives the standard error, Student's t the
quantiles and p-values, so intervals and p-values hold their level with few
clusters and p-values have no ``2/(B + 1)`` floor.

The procedure is a serial gatekeeper (Dmitrienko & Tamhane 2007, "Gatekeeping
procedures with clinical trial applications"): the joint change
(candidate against production's default) is tested at ``α``; only if it is
rejected, the *reduction family* — every proper, non-empty subset of the
changes that the sweep scored, each against the default — is tested with
Holm's step-down procedure at ``α``. A true null can be rejected only
through the gate (probability ≤ ``α`` when the joint change does not help)
or inside the family (≤ ``α`` by Holm when it does), so the family-wise
error over every hypothesis tested is at most ``α``.
"""

from __future__ import annotations

import functools
import math

import numpy as np
import pandas as pd

from thatchlab.sweep.reading import OPERATORS
from thatchlab.sweep.resampling import ratio_resamples

__all__ = ["holm", "holm_levels", "bootstrap_pvalue", "paired_difference", "ratio_interval",
           "t_quantile", "improvement_pvalue", "describe_interval", "detectable", "interval_at", "span",
           "check_constraint", "constraint_bound", "working_icc", "working_df", "cluster_weights", "linearized_se", "MIN_CLUSTERS", "POWER",
           "SEQUENTIAL_TUNED_AT", "sequence_rho", "sequence_halfwidth", "sequence_pvalue"]

#: Fewest test clusters decide compares on (fewer: it refuses to ship, naming the count).
MIN_CLUSTERS = 3
#: The power at which a ``detectable`` difference would be found.
POWER = 0.8


@functools.lru_cache(maxsize=4096)
def t_quantile(q: float, df: float) -> float:
    """Student's t quantile (normal when ``df`` is infinite); remembered, as studies ask the same
    few ``(q, df)`` thousands of times.

    >>> round(t_quantile(0.975, 4), 4), round(t_quantile(0.975, math.inf), 4)
    (2.7764, 1.96)
    """
    from scipy import stats as scipy_stats  # heavy: SciPy takes about 0.5 s to import

    return float(scipy_stats.norm.ppf(q) if not math.isfinite(df) else scipy_stats.t.ppf(q, df))


def _t_sf(x: float, df: float) -> float:
    from scipy import stats as scipy_stats  # heavy: SciPy takes about 0.5 s to import

    return float(scipy_stats.norm.sf(x) if not math.isfinite(df) else scipy_stats.t.sf(x, df))


def holm(pvalues) -> np.ndarray:
    """Holm's step-down adjusted p-values (Holm 1979), in the input order.

    With the ``m`` p-values sorted ascending, ``p̃_(i) = max_{j ≤ i} min(1, (m − j + 1)·p_(j))``
    (``i, j`` 1-based). Rejecting ``p̃ ≤ α`` controls the family-wise error at ``α``.

    >>> holm([0.01, 0.04, 0.03]).tolist()
    [0.03, 0.06, 0.06]
    >>> holm([]).tolist()
    []
    """
    p = np.asarray(pvalues, dtype=np.float64)
    m = p.size
    if m == 0:
        return p
    order = np.argsort(p, kind="stable")
    adj = np.minimum(1.0, np.maximum.accumulate((m - np.arange(m)) * p[order]))
    out = np.empty(m)
    out[order] = adj
    return np.round(out, 15)


def holm_levels(pvalues, alpha: float) -> np.ndarray:
    """The level Holm tests each hypothesis at: ``α / (m − rank)`` (rank 0 = smallest p)."""
    p = np.asarray(pvalues, dtype=np.float64)
    m = p.size
    ranks = np.empty(m, dtype=np.int64)
    ranks[np.argsort(p, kind="stable")] = np.arange(m)
    return alpha / (m - ranks)


def bootstrap_pvalue(draws) -> float:
    """Two-sided percentile-bootstrap p-value of "the difference is 0" from resampled differences.

    ``p = min(1, 2·min((1 + #{δ* ≤ 0}) / (B + 1), (1 + #{δ* ≥ 0}) / (B + 1)))`` over
    the ``B`` finite draws. Its floor is ``2/(B + 1)``: with ``B = 100`` it can
    never reach a Holm level below 0.0198, which is why :func:`decide` uses
    the studentized p-value of :func:`paired_difference` instead. All draws
    exactly 0 give 1.

    >>> bootstrap_pvalue(np.full(99, -0.1))
    0.02
    >>> bootstrap_pvalue(np.r_[-np.ones(50), np.ones(50)])
    1.0
    """
    d = np.asarray(draws, dtype=np.float64)
    d = d[np.isfinite(d)]
    if d.size == 0:
        return float("nan")
    b = d.size
    lo, hi = (1 + np.count_nonzero(d <= 0)) / (b + 1), (1 + np.count_nonzero(d >= 0)) / (b + 1)
    return float(min(1.0, 2 * min(lo, hi)))


def _t_interval(center: float, se: float, df: float, level: float) -> tuple:
    if not (math.isfinite(center) and math.isfinite(se)):
        return float("nan"), float("nan")
    half = t_quantile(1 - level / 2, df) * se
    return float(center - half), float(center + half)


def cluster_weights(den_a, den_b=None) -> np.ndarray:
    """Each cluster's leverage ``h_c``: its share of the rows (the mean share over two
    configurations' denominators), so ``Σ h_c = 1``."""
    shares = [np.asarray(d, np.float64) / np.sum(d) for d in (den_a, den_b) if d is not None]
    return np.mean(shares, axis=0)


def linearized_se(resid, lever, g: int) -> tuple:
    """CR2 standard error and effective-cluster degrees of freedom of a ratio statistic.

    ``resid`` are the clusters' linearised influences (``Σ resid = 0``), ``lever`` their
    leverages ``h_c``. The variance is ``Σ resid_c² / (1 − h_c)`` (Bell and McCaffrey's bias
    reduced CR2: with equal leverages ``1/G`` it is CR1's ``G/(G − 1)·Σ resid²``), and the
    degrees of freedom ``G* − 1`` with ``G* = 1 / Σ h_c²`` the effective number of clusters
    (Carter, Schnepel and Steigerwald 2017): ``G`` when clusters are equal, about 4 when one
    cluster holds half the rows, whatever ``G``. Returns ``(se, df)``.
    """
    lever = np.minimum(np.asarray(lever, np.float64), 1 - 1e-12)
    resid = np.asarray(resid, np.float64)
    se = math.sqrt(float(np.sum(resid * resid / (1 - lever))))
    g_eff = 1.0 / float(np.sum(lever * lever)) if g else 0.0
    return se, max(min(g_eff, g) - 1.0, 1.0)


def paired_difference(num_a, den_a, num_b, den_b, weights, alpha: float = 0.05) -> dict:
    """Paired difference ``m_b − m_a`` of two ratio metrics over the same clusters, with a
    cluster-robust t interval that holds when clusters are unbalanced.

    ``m = Σ_c num_c / Σ_c den_c`` over the same clusters ``c`` for both
    configurations. Linearised, cluster ``c`` contributes
    ``e_c = (num_b,c − m_b·den_b,c)/D_b − (num_a,c − m_a·den_a,c)/D_a`` (``D = Σ den``) to
    ``δ``; the standard error is CR2's over these influences and the interval
    ``δ ± t_{G*−1, 1−α/2}·SE`` with ``G*`` the effective number of clusters
    (:func:`linearized_se`). With equal clusters this is the small-sample cluster-robust t
    of Cameron and Miller (2015, "A Practitioner's Guide to Cluster-Robust Inference",
    J. Human Resources 50(2), section VI): CR1 with ``G − 1`` degrees of freedom. When one
    cluster holds most rows, CR1 with ``G − 1`` over-rejects (its residual is shrunk by its
    own weight, and ``G`` overstates the information); CR2 and ``G*`` correct both
    (``benchmarks/bench_decide_fleets.py`` measures it). ``weights`` ``(B, n_clusters)`` are
    cluster resamples (:func:`~thatchlab.sweep.resampling.cluster_resamples`) applied to
    *both* configurations: their ``δ*`` are returned as ``draws`` for percentile
    comparisons. The two-sided p-value ``2·P(T ≥ |δ|/SE)`` has no floor, so it can reach
    any Holm level.

    Returns
    -------
    dict
        ``delta``, ``ci_lower``, ``ci_upper``, ``se``, ``df`` (``G* − 1``), ``p_value``,
        ``n_clusters`` (``G``, clusters with data), ``effective_clusters`` (``G*``),
        ``draws`` (the ``δ*``).

    Examples
    --------
    >>> from thatchlab.sweep.resampling import cluster_resamples
    >>> W = cluster_resamples(3, 200, seed=0)
    >>> out = paired_difference([1.0, 1.0, 1.0], [2.0, 2.0, 2.0], [2.0, 2.0, 2.0], [2.0, 2.0, 2.0], W)
    >>> out["delta"], out["ci_lower"], out["ci_upper"], out["df"]
    (0.5, 0.5, 0.5, 2.0)
    """
    num_a, den_a, num_b, den_b = (np.asarray(x, np.float64) for x in (num_a, den_a, num_b, den_b))
    if weights is None:  # no resamples asked: the interval needs none
        weights = np.zeros((0, num_a.size))
    a = ratio_resamples(num_a, den_a, weights)[:, 0]
    b = ratio_resamples(num_b, den_b, weights)[:, 0]
    nan = float("nan")
    keep = (den_a > 0) | (den_b > 0)
    g = int(np.count_nonzero(keep))
    with np.errstate(divide="ignore", invalid="ignore"):
        ma, mb = float(np.sum(num_a) / np.sum(den_a)), float(np.sum(num_b) / np.sum(den_b))
    delta = mb - ma
    draws = b - a
    if g < 2 or not math.isfinite(delta):
        return {"delta": delta, "ci_lower": nan, "ci_upper": nan, "se": nan, "df": float(max(g - 1, 0)),
                "p_value": nan, "n_clusters": g, "effective_clusters": float(g), "draws": draws}
    na, da, nb, db = (x[keep] for x in (num_a, den_a, num_b, den_b))
    resid = (nb - mb * db) / db.sum() - (na - ma * da) / da.sum()
    lever = cluster_weights(da, db)
    se, df = linearized_se(resid, lever, g)
    if se < 1e-13 * max(1.0, abs(delta)):  # every cluster gives the same difference
        se = 0.0
    lo, hi = _t_interval(delta, se, df, alpha)
    p = (1.0 if delta == 0 else 0.0) if se == 0 else min(1.0, 2 * _t_sf(abs(delta) / se, df))
    return {"delta": delta, "ci_lower": lo, "ci_upper": hi, "se": se, "df": df, "p_value": float(p),
            "n_clusters": g, "effective_clusters": df + 1.0, "draws": draws}


# -- anytime-valid intervals for repeated looks ------------------------------------------------
#: The cluster count the confidence sequence is tightest at (its ρ is tuned for it, fixed in
#: advance: a data-chosen ρ would void the guarantee).
SEQUENTIAL_TUNED_AT = 100


def sequence_rho(alpha: float, n_star: int = SEQUENTIAL_TUNED_AT) -> float:
    """ρ of the normal-mixture boundary tuned to be tightest near ``n_star`` observations."""
    la = -2.0 * math.log(alpha)
    return math.sqrt((la + math.log(la + 1.0)) / n_star)


def sequence_halfwidth(se: float, n: int, level: float, rho: float) -> float:
    """Half-width of the two-sided ``1 − level`` asymptotic confidence sequence of a mean over ``n``
    clusters with standard error ``se`` (Waudby-Smith, Arbour, Sinha, Kennedy and Ramdas 2021,
    "Time-uniform central limit theory", the normal-mixture boundary):
    ``se·√n · √(2(nρ² + 1)/(n²ρ²) · log(√(nρ² + 1)/level))``. It covers the truth at every look
    at once, however many looks are taken and whenever one stops."""
    v = n * rho * rho + 1.0
    return se * math.sqrt(n) * math.sqrt(2.0 * v / (n * n * rho * rho) * math.log(math.sqrt(v) / level))


def sequence_pvalue(z: float, n: int, rho: float) -> float:
    """The smallest level at which the confidence sequence excludes 0, for ``z = δ / se``:
    ``min(1, √(nρ² + 1) · exp(−z² nρ² / (2(nρ² + 1))))`` (inverting :func:`sequence_halfwidth`)."""
    v = n * rho * rho + 1.0
    return float(min(1.0, math.sqrt(v) * math.exp(-z * z * n * rho * rho / (2.0 * v))))


def interval_at(r: dict, level: float) -> tuple:
    """The interval of a :func:`paired_difference` result at two-sided ``level``: the studentized
    t interval, or the confidence sequence when ``r["sequential"]`` holds its ``rho``."""
    seq = r.get("sequential")
    if seq and math.isfinite(r["se"]) and math.isfinite(r["delta"]):
        half = sequence_halfwidth(r["se"], r["n_clusters"], level, seq["rho"])
        return float(r["delta"] - half), float(r["delta"] + half)
    return _t_interval(r["delta"], r["se"], r["df"], level)


def improvement_pvalue(r: dict, lower: bool) -> float:
    """Directional p-value of "no improvement": ``min(1, 2·P(T ≥ gain/SE))``, ``gain`` the
    improvement (``−δ`` for a minimised metric); under ``r["sequential"]`` the anytime-valid
    one of :func:`sequence_pvalue` (1 when there is no gain). Below ``a`` exactly when the
    ``1 − a`` interval lies on the improving side of 0; NaN when the SE is undefined."""
    d, se, df = r["delta"], r["se"], r["df"]
    if not (math.isfinite(d) and math.isfinite(se)):
        return float("nan")
    gain = -d if lower else d
    if se == 0:
        return 0.0 if gain > 0 else 1.0
    if r.get("sequential"):
        return sequence_pvalue(gain / se, r["n_clusters"], r["sequential"]["rho"]) if gain > 0 else 1.0
    return float(min(1.0, 2 * _t_sf(gain / se, df)))


def ratio_interval(num, den, weights, alpha: float = 0.05) -> dict:
    """One configuration's ratio metric with its studentized cluster-bootstrap interval.

    >>> from thatchlab.sweep.resampling import cluster_resamples
    >>> out = ratio_interval([1.0, 1.0], [2.0, 2.0], cluster_resamples(2, 50))
    >>> out["value"], out["ci_lower"], out["ci_upper"]
    (0.5, 0.5, 0.5)
    """
    num, den = np.asarray(num, np.float64), np.asarray(den, np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        value = float(num.sum() / den.sum())
    draws = ratio_resamples(num, den, weights)[:, 0]
    finite = draws[np.isfinite(draws)]
    g = int(np.count_nonzero(den > 0))
    if finite.size < 2 or g < 2 or not math.isfinite(value):
        return {"value": value, "ci_lower": float("nan"), "ci_upper": float("nan"), "n_clusters": g}
    se = float(np.std(finite, ddof=1)) * math.sqrt(g / (g - 1))
    lo, hi = _t_interval(value, se if se > 1e-13 * max(1.0, abs(value)) else 0.0, g - 1, alpha)
    return {"value": value, "ci_lower": lo, "ci_upper": hi, "n_clusters": g}


def detectable(se: float, df: float, level: float) -> float:
    """Smallest true difference found with probability :data:`POWER` at two-sided ``level``."""
    if not math.isfinite(se):
        return float("nan")
    return float((t_quantile(1 - level / 2, df) + t_quantile(POWER, df)) * se)


def describe_interval(lo: float, hi: float, lower: bool) -> str:
    """What an interval of ``m_changed − m_default`` says, in words that are true of its numbers."""
    if not (math.isfinite(lo) and math.isfinite(hi)):
        return "is undefined (too few clusters with data)"
    better, worse = (hi < 0, lo > 0) if lower else (lo > 0, hi < 0)
    if better:
        return "lies entirely on the improving side of 0"
    if worse:
        return "lies entirely on the worsening side of 0"
    return "contains 0"


def span(r: dict, level: float) -> str:
    """``"95 % interval [lo, hi]"``: the studentized interval of ``r`` at two-sided ``level``, in words."""
    lo, hi = interval_at(r, level)
    return f"{(1 - level) * 100:.4g} % interval [{lo:.4g}, {hi:.4g}]"


def working_icc(num, den) -> float:
    """Intra-cluster correlation ``ρ`` of a rate's rows, estimated from its cluster residuals.

    The working model (Imbens and Kolesár 2016): rows are 0/1 with variance ``σ² = m(1 − m)``
    and correlation ``ρ`` within a cluster, so cluster ``c``'s sum has variance
    ``s_c = σ²·n_c·(1 + ρ(n_c − 1))``. The residual ``e_c = num_c − m·n_c`` (``m`` the pooled rate,
    ``h_c = n_c / Σn``) has expectation ``E[e_c²] = (1 − 2h_c)·s_c + h_c²·Σs`` under it, so
    ``Σ e_c²`` is linear in ``ρ`` and solving gives a moment estimate unbiased for the fitted
    residuals (a large cluster's residual is shrunk towards the pooled rate it dominates).
    Clipped to [0, 1]; 0 when the rate is 0 or 1 or outside [0, 1].

    >>> round(working_icc([4, 0, 4, 0], [10, 10, 10, 10]), 4), working_icc([1, 1, 1, 1], [10, 10, 10, 10])
    (0.2593, 0.0)
    """
    num, den = np.asarray(num, np.float64), np.asarray(den, np.float64)
    total = float(den.sum())
    m = float(num.sum()) / total if total > 0 else float("nan")
    var = m * (1.0 - m)
    if not (math.isfinite(var) and var > 0):
        return 0.0
    h = den / total
    pairs = den * (den - 1.0)
    e = num - m * den
    base = float(np.sum((1 - 2 * h) * den) + np.sum(h * h) * total)
    slope = float(np.sum((1 - 2 * h) * pairs) + np.sum(h * h) * pairs.sum())
    if slope <= 0:
        return 0.0
    return float(min(max((float(np.sum(e * e)) / var - base) / slope, 0.0), 1.0))


def working_df(den, rho: float = 0.0) -> float:
    """Bell and McCaffrey's degrees of freedom of the CR2 variance of a ratio ``Σ num / Σ den``.

    The ratio is the intercept of a row-level fit; its CR2 variance is ``Σ_c (q_cᵀ y)²`` with
    ``q_c = (1 − h_c)^(−1/2)·M·1_c`` (``M`` removes the mean, ``1_c`` marks cluster ``c``'s rows).
    Under a working covariance where cluster ``c``'s sum has variance ``s_c ∝ n_c(1 + ρ(n_c − 1))``
    (rows independent across clusters), the ``G × G`` matrix ``Q_cd = q_cᵀ Ω q_d`` is
    ``w_c w_d (δ_cd s_c − h_c s_d − h_d s_c + h_c h_d Σs)`` with ``w_c = (1 − h_c)^(−1/2)``, and the
    Satterthwaite degrees of freedom are ``(tr Q)² / tr(Q²)`` (computed in ``O(G)``: ``Q`` is a
    diagonal plus a rank-two term). Equal clusters give ``G − 1`` whatever ``ρ``; a few large
    clusters, or ``ρ > 0`` with unequal sizes, give fewer (Imbens and Kolesár 2016 take ``ρ``
    from the data: :func:`working_icc`). At least 1.

    >>> round(working_df([10, 10, 10, 10], 0.3), 6), round(working_df([100, 10, 10, 10], 0.0), 3)
    (3.0, 1.412)
    """
    den = np.asarray(den, np.float64)
    den = den[den > 0]
    if den.size < 2:
        return 1.0
    total = float(den.sum())
    h = np.minimum(den / total, 1 - 1e-12)
    w = 1.0 / np.sqrt(1.0 - h)
    s = den * (1.0 + rho * (den - 1.0))
    d = w * w * s
    u = np.stack([w * h, w * s], axis=1)
    c = np.array([[float(s.sum()), -1.0], [-1.0, 0.0]])
    cuu = c @ (u.T @ u)
    trace = float(d.sum() + np.trace(cuu))
    trace2 = float(np.sum(d * d) + 2.0 * np.trace(c @ (u.T @ (d[:, None] * u))) + np.trace(cuu @ cuu))
    return max(trace * trace / trace2, 1.0) if trace2 > 0 else 1.0


def constraint_bound(num, den, alpha: float = 0.05, side: str = "upper") -> float:
    """One-sided ``1 − α/2`` bound of a ratio metric ``m = Σ num / Σ den`` over clusters: a
    score-type (Wilson) bound with a cluster-robust design effect and Bell–McCaffrey degrees of
    freedom, so a rate exactly at a constraint's bound passes at most about ``α/2`` of the time.

    - **Variance.** The linearised residual of cluster ``c`` is ``e_c = num_c − m·den_c`` with
      leverage ``h_c = den_c / Σ den``; CR2's variance of ``m`` is ``v = Σ e_c² / (1 − h_c) / (Σ den)²``
      (Bell and McCaffrey). Its design effect against independent rows is
      ``deff = v / (m(1 − m) / Σ den)``, never below 1 (rows of a cluster are not negatively
      correlated: a smaller ratio is noise, and it is what makes few clusters pass too often), and
      ``n* = Σ den / deff`` is the effective number of rows.
    - **Score form.** The bound is the Wilson bound at ``n*``: the ``p`` solving
      ``(m − p)² = t²·p(1 − p)/n*``, i.e. a test of ``rate = p`` that takes the rate's spread *at
      p* rather than at the observed ``m`` (with few events ``m``'s own spread is small exactly
      when ``m`` came out low, and a Wald bound at ``m`` passes too often). It stays inside [0, 1],
      is skewed as a rate's sampling distribution is, and needs no pseudo-event at 0 or 1
      (``deff = 1`` there: nothing to estimate it from).
    - **Degrees of freedom.** ``t`` is Student's at ``1 − α/2`` with :func:`working_df`'s degrees of
      freedom under a random-effects working model whose intra-cluster correlation is estimated
      (:func:`working_icc`; Imbens and Kolesár 2016). With unequal cluster sizes and a per-cluster
      rate effect the variance estimate rests on the few largest clusters, and the effective-
      cluster count ``(Σ den)² / Σ den²`` overstates its degrees of freedom.

    Values outside [0, 1] (a net rate) take the plain CR2 bound ``m ± t·√v`` with ``ρ = 0``.
    NaN with fewer than two clusters with rows. It assumes clusters are independent.
    ``benchmarks/bench_constraint_bound.py`` measures how often a rate exactly at the bound
    passes (the target is ``α/2``) and how often one clearly below it does.

    >>> round(constraint_bound([1, 0, 2, 1, 0, 1, 3, 0, 1, 1], [10] * 10), 4)
    0.1885
    >>> round(constraint_bound([0] * 10, [10] * 10), 4)  # no event: the binomial spread at n* = 100
    0.0487
    """
    num, den = np.asarray(num, np.float64), np.asarray(den, np.float64)
    keep = den > 0
    g = int(np.count_nonzero(keep))
    if g < 2:
        return float("nan")
    num, den = num[keep], den[keep]
    total = float(den.sum())
    m = float(num.sum()) / total
    sign = 1.0 if side == "upper" else -1.0
    se, _ = linearized_se((num - m * den) / total, cluster_weights(den), g)
    if not 0.0 <= m <= 1.0:
        return m + sign * t_quantile(1 - alpha / 2, working_df(den, 0.0)) * se
    t = t_quantile(1 - alpha / 2, working_df(den, working_icc(num, den)))
    binomial = m * (1.0 - m) / total
    deff = max(se * se / binomial, 1.0) if binomial > 0 else 1.0
    z2 = t * t * deff / total  # t² / n*
    centre = m + z2 / 2.0
    half = math.sqrt(z2 * m * (1.0 - m) + z2 * z2 / 4.0)
    return float(min(max((centre + sign * half) / (1.0 + z2), 0.0), 1.0))


def check_constraint(stats, results, constraint, cid, W, alpha) -> dict:
    """Each constrained metric's *test* value for configuration ``cid``, its ``1 − α`` interval
    (:func:`ratio_interval`, when the sweep has its sums), its one-sided bound
    (:func:`constraint_bound`) and whether the rule holds on test: when the sweep has the
    metric's cluster sums, the one-sided bound on the rule's side must satisfy it (``<=``: the
    upper bound is within; ``>=``: the lower one), so a configuration whose true rate sits at the
    bound ships with probability at most ``α/2``; without sums, the point value (said in
    ``basis``). NaN fails."""
    out = {}
    row = results.set_index("config_id").loc[cid]
    for m, (op, bound) in (constraint or {}).items():
        value = float(pd.to_numeric(row.get(f"test_{m}", np.nan), errors="coerce"))
        lo = hi = one_sided = float("nan")
        basis = "the test value"
        if (m, "test") in stats.num_index:
            num, den = stats.sums(m, "test", [cid])
            got = ratio_interval(num[0], den[0], W, alpha)
            lo, hi = got["ci_lower"], got["ci_upper"]
            side = "upper" if op in ("<=", "<") else "lower"
            one_sided = constraint_bound(num[0], den[0], alpha, side)
            basis = f"the one-sided {100 * (1 - alpha / 2):g}% {side} bound"
        checked = one_sided if basis != "the test value" else value
        holds = bool(math.isfinite(value) and math.isfinite(checked)
                     and OPERATORS[op](value, float(bound)) and OPERATORS[op](checked, float(bound)))
        out[m] = {"rule": f"{op} {float(bound):g}", "value": value, "ci_lower": lo, "ci_upper": hi,
                  "bound": one_sided, "basis": basis, "holds": holds}
    return out
