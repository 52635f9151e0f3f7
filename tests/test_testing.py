"""thatchlab.decide._testing: the one-sided bound a constraint is checked on (issue 34, point 5).

Each piece of :func:`constraint_bound` is recomputed here the long way, on the rows themselves:
the intra-cluster correlation from the residuals' expectation under the working model, the
Bell–McCaffrey degrees of freedom from the ``G × G`` matrix ``Qᵀ Ω Q`` built from the row-level
residual maker, and the Wilson bound by root finding; the textbook Wilson bound is statsmodels'.
"""

import math

import numpy as np
import pytest
from scipy import optimize, stats

from thatchlab.decide._testing import constraint_bound, t_quantile, working_df, working_icc

#: six clusters of unequal size, 14 events in 140 rows (rate 0.10), clustered events
NUM = np.array([1.0, 0.0, 5.0, 1.0, 6.0, 1.0])
DEN = np.array([10.0, 15.0, 20.0, 25.0, 30.0, 40.0])


def _rows(den):
    """Row-level cluster indicators (N × G) and the residual maker of an intercept fit."""
    n = int(den.sum())
    ones = np.zeros((n, den.size))
    ones[np.arange(n), np.repeat(np.arange(den.size), den.astype(int))] = 1.0
    return ones, np.eye(n) - np.full((n, n), 1.0 / n)


def _omega(ones, rho):
    """Rows with unit variance and correlation ``rho`` within a cluster."""
    same = ones @ ones.T
    return (1 - rho) * np.eye(len(same)) + rho * same


def test_working_icc_solves_the_residuals_expectation_under_the_working_model():
    ones, resid = _rows(DEN)
    m = NUM.sum() / DEN.sum()
    e = NUM - m * DEN
    # E[Σ e_c²] / σ² = tr(Rᵀ 1 1ᵀ R Ω) with R the residual maker: linear in ρ, so two points fix it
    expect = [float(np.trace(resid.T @ ones @ ones.T @ resid @ _omega(ones, rho))) for rho in (0.0, 1.0)]
    rho = (float(np.sum(e * e)) / (m * (1 - m)) - expect[0]) / (expect[1] - expect[0])
    assert working_icc(NUM, DEN) == pytest.approx(rho, rel=1e-10)
    assert working_icc(NUM, DEN) == pytest.approx(0.0850, abs=1e-4)
    assert working_icc([4, 0, 4, 0], [10, 10, 10, 10]) == pytest.approx(7 / 27)  # (100 − 30) / 270
    assert working_icc([1, 1, 1, 1], [10, 10, 10, 10]) == 0.0  # no spread between clusters
    assert working_icc([0, 0, 0], [5, 5, 5]) == 0.0  # rate 0: no row variance to scale by


@pytest.mark.parametrize("rho", [0.0, 0.085, 0.4])
def test_working_df_is_bell_and_mccaffrey_from_the_row_level_matrices(rho):
    ones, resid = _rows(DEN)
    h = DEN / DEN.sum()
    q = resid @ ones / np.sqrt(1 - h)  # column c: (1 − h_c)^(−1/2) · M · 1_c
    g = q.T @ _omega(ones, rho) @ q
    assert working_df(DEN, rho) == pytest.approx(np.trace(g) ** 2 / np.trace(g @ g), rel=1e-10)


def test_working_df_literals():
    assert working_df([10, 10, 10, 10], 0.3) == pytest.approx(3.0)  # equal clusters: G − 1
    assert working_df(DEN, 0.0) == pytest.approx(4.1314, abs=1e-4)
    assert working_df(DEN, 0.25) == pytest.approx(3.2162, abs=1e-4)  # fewer with a cluster effect
    assert working_df([100, 10, 10, 10], 0.0) == pytest.approx(1.412, abs=1e-3)
    assert working_df([10], 0.0) == 1.0


def test_constraint_bound_on_a_tiny_fixed_dataset():
    bound = constraint_bound(NUM, DEN)
    assert bound == pytest.approx(0.3063, abs=1e-4)
    # the long way: CR2 variance, design effect (≥ 1), effective rows, t at the working df, Wilson root
    total, m = DEN.sum(), NUM.sum() / DEN.sum()
    h = DEN / total
    var = float(np.sum((NUM - m * DEN) ** 2 / (1 - h))) / total ** 2
    n_eff = total / max(var / (m * (1 - m) / total), 1.0)
    t = stats.t.ppf(0.975, working_df(DEN, working_icc(NUM, DEN)))
    root = optimize.brentq(lambda p: (p - m) ** 2 - t * t * p * (1 - p) / n_eff, m, 1.0, xtol=1e-14)
    assert bound == pytest.approx(root, rel=1e-10)
    lower = optimize.brentq(lambda p: (p - m) ** 2 - t * t * p * (1 - p) / n_eff, 1e-12, m, xtol=1e-14)
    assert constraint_bound(NUM, DEN, side="lower") == pytest.approx(max(lower, 0.0), rel=1e-8)
    assert constraint_bound(NUM, DEN, 0.10) == pytest.approx(0.2449, abs=1e-4)  # a looser level


def test_constraint_bound_is_statsmodels_wilson_when_clusters_agree():
    """Every cluster at the same rate: no design effect, ``ρ̂ = 0``, and the bound is the textbook
    Wilson bound at the t quantile (statsmodels' ``proportion_confint(method="wilson")``)."""
    sm = pytest.importorskip("statsmodels.stats.proportion")
    den = np.array([20.0, 40.0, 60.0, 80.0, 100.0, 200.0, 500.0])
    num = 0.05 * den
    t = t_quantile(0.975, working_df(den, 0.0))
    lo, hi = sm.proportion_confint(num.sum(), den.sum(), alpha=2 * stats.norm.sf(t), method="wilson")
    assert constraint_bound(num, den) == pytest.approx(hi, rel=1e-10)
    assert constraint_bound(num, den, side="lower") == pytest.approx(lo, rel=1e-10)


def test_constraint_bound_edges():
    assert math.isnan(constraint_bound([1.0], [10.0]))  # one cluster: nothing to estimate
    assert math.isnan(constraint_bound([1.0, 0.0], [10.0, 0.0]))
    # no event: the Wilson bound at the rows themselves, above 0
    assert constraint_bound([0] * 10, [10] * 10) == pytest.approx(0.0487, abs=1e-4)
    assert constraint_bound([10] * 10, [10] * 10, side="lower") == pytest.approx(1 - 0.0487, abs=1e-4)
    # a net rate outside [0, 1] takes the plain CR2 t bound (ρ = 0 working df)
    num, den = np.array([-3.0, -1.0, -2.0, -4.0]), np.full(4, 10.0)
    m, e = -0.25, num - (-0.25) * den
    se = math.sqrt(float(np.sum(e * e)) / 0.75) / 40.0
    assert constraint_bound(num, den) == pytest.approx(m + t_quantile(0.975, 3.0) * se, rel=1e-10)
