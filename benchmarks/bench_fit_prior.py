"""Benchmark: empirical-Bayes K and P0 by PriorFitter against a scipy beta-binomial MLE.

Items (no model) get a planted confirm probability from Beta(K·P0, K·(1−P0))
and a random number of confirm/disconfirm signals. Two fits of the same
per-item counts in the same run:

* **ours**: ``PriorFitter(objective="marginal").fit_counts(c, d)`` — the
  maximum of the beta-binomial marginal likelihood by BFGS with analytic
  gradients over distinct (c, d) pairs, then profile-likelihood intervals
  for K and P0 (included in the time);
* **peer**: what a scipy user writes: ``scipy.optimize.minimize`` (L-BFGS-B,
  numerical gradient) of ``-scipy.stats.betabinom.logpmf(c, c + d, a, b).sum()``
  over ``(log a, log b)``, point estimates only.

The estimates must agree (K to 1e-3 relative, P0 to 1e-4, the maximised
log-likelihoods to 1e-8 relative) or the script exits non-zero. Times are
the best of ``--repeat`` runs.

    python benchmarks/bench_fit_prior.py          # 200,000 items
    python benchmarks/bench_fit_prior.py --ci     # 5,000 items

Last line: ``RESULT bench=fit_prior items=<n> ratio=<scipy_s / ours_s>``.
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

import numpy as np
from scipy.optimize import minimize
from scipy.special import betaln
from scipy.stats import betabinom

from thatchlab.tune import PriorFitter

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _util import timed  # noqa: E402

K, P0 = 8.0, 0.62


def make_counts(n_items: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    p = rng.beta(K * P0, K * (1 - P0), n_items)
    n = rng.integers(1, 25, n_items)
    c = rng.binomial(n, p)
    return c.astype(np.float64), (n - c).astype(np.float64)


def ours(c, d):
    return PriorFitter(objective="marginal").fit_counts(c, d)


def peer(c, d):
    n = (c + d).astype(np.int64)
    ci = c.astype(np.int64)

    def neg(theta):
        a, b = np.exp(theta)
        return -float(betabinom.logpmf(ci, n, a, b).sum())

    pooled = c.sum() / (c.sum() + d.sum())
    res = minimize(neg, np.log([5.0 * pooled, 5.0 * (1 - pooled)]), method="L-BFGS-B",
                   options={"ftol": 1e-13, "gtol": 1e-9})
    a, b = np.exp(res.x)
    return a + b, a / (a + b)


def marginal_loglik(c, d, k, p0):
    a, b = k * p0, k * (1 - p0)
    return float(np.sum(betaln(a + c, b + d) - betaln(a, b)))




def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ci", action="store_true", help="small size for CI")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args(argv)
    n_items = 5_000 if args.ci else 200_000
    c, d = make_counts(n_items)
    print(f"items={n_items:,} signals={int((c + d).sum()):,} planted K={K} P0={P0}")
    ours_s, fit = timed(lambda: ours(c, d), repeat=args.repeat)
    peer_s, (k_ref, p_ref) = timed(lambda: peer(c, d), repeat=args.repeat)
    ll_ours, ll_ref = marginal_loglik(c, d, fit.k_, fit.p0_), marginal_loglik(c, d, k_ref, p_ref)
    print(f"PriorFitter: K={fit.k_:.5f} P0={fit.p0_:.6f} (interval K {fit.summary_.loc['k', 'ci_lower']:.3f}.."
          f"{fit.summary_.loc['k', 'ci_upper']:.3f}) in {ours_s:.4f} s")
    print(f"scipy betabinom MLE: K={k_ref:.5f} P0={p_ref:.6f} in {peer_s:.4f} s")
    ok = (abs(fit.k_ - k_ref) <= 1e-3 * k_ref and abs(fit.p0_ - p_ref) <= 1e-4
          and abs(ll_ours - ll_ref) <= 1e-8 * abs(ll_ref))
    if not ok:
        print(f"MISMATCH: estimates differ (log-likelihoods {ll_ours!r} vs {ll_ref!r})", file=sys.stderr)
        return 1
    print(f"estimates equal (K to {abs(fit.k_ - k_ref) / k_ref:.1e} relative, P0 to "
          f"{abs(fit.p0_ - p_ref):.1e}; log-likelihoods {ll_ours:.6f} vs {ll_ref:.6f})")
    if not math.isfinite(fit.k_):
        return 1
    print(f"RESULT bench=fit_prior items={n_items} ratio={peer_s / ours_s:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
