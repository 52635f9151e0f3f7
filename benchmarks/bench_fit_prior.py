"""Benchmark: empirical-Bayes K and P0 by PriorFitter against scipy's beta-binomial MLE over distinct pairs.

Items (no model) get a planted confirm probability from Beta(K·P0, K·(1−P0))
and a random number (1–24) of confirm/disconfirm signals. Every side starts
from the same two float arrays of per-item counts ``c`` (confirms) and ``d``
(disconfirms) and does its own conversions inside its timed region:

* **ours**: ``PriorFitter().fit_counts(c, d)``: the checks (finite counts
  >= 0, naming the bad row), the reduction to the distinct (c, d) pairs
  (integer counts keyed and bincounted), the maximum of the beta-binomial
  marginal likelihood (Newton's method on its closed-form derivatives, from
  two starts), the boundary checks, and the **profile-likelihood intervals**
  of K and P0 (four profile crossings), all timed;
* **peer**: the strongest natural scipy fit: the ~300 distinct ``(c, n)``
  pairs with their counts (``np.unique(..., axis=0, return_counts=True)``),
  then ``scipy.optimize.minimize`` (L-BFGS-B, numerical gradient) of the
  count-weighted ``-scipy.stats.betabinom.logpmf(c, n, a, b)`` over
  ``(log a, log b)`` from the pooled share at K = 5: **point estimates only**;
* **peer, our reduction** (for the record): the same scipy optimiser over
  the pairs our bincount finds, so ``same_reduction_ratio`` compares the
  optimisers alone (theirs points only, ours points and intervals).

Checks (exit 1 otherwise): K agrees to 1e-4 relative and P0 to 1e-6
absolute with the peer's (whose optimiser stops at ``ftol`` 1e-13, ``gtol``
1e-9), and our log-likelihood (one ``betaln`` sum over all items at each
point) is at least the peer's less 1e-9 relative; our intervals hold the
estimates.

Fair clocks (``benchmarks/_util.py``): one thread (BLAS/OpenMP pinned; the
counts in force are printed); each side timed with ``_util.best_of`` with the
same ``--repeat`` and one warm-up, in ``--rounds`` interleaved rounds
(ours, peer, peer with our reduction, again), keeping each side's best.

    python benchmarks/bench_fit_prior.py          # 200,000 items
    python benchmarks/bench_fit_prior.py --ci     # 5,000 items

Last line: ``RESULT bench=fit_prior items=<n> pairs=<distinct pairs> ratio=<peer_s / ours_s>
same_reduction_ratio=<peer_with_our_reduction_s / ours_s>``.
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _util  # noqa: E402  (before numpy and scipy: it pins their threads)
import numpy as np  # noqa: E402
from scipy.optimize import minimize  # noqa: E402
from scipy.special import betaln  # noqa: E402
from scipy.stats import betabinom  # noqa: E402

from thatchlab.tune import PriorFitter  # noqa: E402

K, P0 = 8.0, 0.62


def make_counts(n_items: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    p = rng.beta(K * P0, K * (1 - P0), n_items)
    n = rng.integers(1, 25, n_items)
    c = rng.binomial(n, p)
    return c.astype(np.float64), (n - c).astype(np.float64)


def ours(c, d):
    return PriorFitter().fit_counts(c, d)


def _scipy_mle(pc, pn, w):
    """scipy's weighted beta-binomial MLE over distinct (c, n) pairs: (K, P0)."""

    def neg(theta):
        a, b = np.exp(theta)
        return -float(w @ betabinom.logpmf(pc, pn, a, b))

    pooled = float(w @ pc) / float(w @ pn)
    res = minimize(neg, np.log([5.0 * pooled, 5.0 * (1 - pooled)]), method="L-BFGS-B",
                   options={"ftol": 1e-13, "gtol": 1e-9})
    a, b = np.exp(res.x)
    return a + b, a / (a + b)


def peer(c, d):
    pairs, w = np.unique(np.stack([c, c + d], axis=1).astype(np.int64), axis=0, return_counts=True)
    return _scipy_mle(pairs[:, 0], pairs[:, 1], w.astype(np.float64))


def peer_our_reduction(c, d):
    ci, ni = c.astype(np.int64), (c + d).astype(np.int64)
    span = int(ni.max()) + 1
    held = np.bincount(ci * span + ni, minlength=span * span)
    keys = np.flatnonzero(held)
    pc, pn = np.divmod(keys, span)
    return _scipy_mle(pc, pn, held[keys].astype(np.float64))


def marginal_loglik(c, d, k, p0):
    a, b = k * p0, k * (1 - p0)
    return float(np.sum(betaln(a + c, b + d) - betaln(a, b)))


def main() -> int:
    args = _util.parse(__doc__.splitlines()[0], rounds=None)
    _util.pin_threads()
    print(_util.describe_threads())
    n_items = 5_000 if args.ci else 200_000
    repeat = args.repeat or (3 if args.ci else 5)
    rounds = args.rounds or (1 if args.ci else 3)
    c, d = make_counts(n_items)
    n_pairs = len(np.unique(np.stack([c, d], axis=1), axis=0))
    print(f"items={n_items:,} signals={int((c + d).sum()):,} distinct pairs={n_pairs} planted K={K} P0={P0}; "
          f"best of {repeat} after 1 warm-up, {rounds} round(s)")
    best = {"ours": math.inf, "peer": math.inf, "peer_ours": math.inf}
    for r in range(rounds):
        ours_s, fit = _util.best_of(ours, c, d, repeat=repeat)
        peer_s, (k_ref, p_ref) = _util.best_of(peer, c, d, repeat=repeat)
        same_s, (k_same, p_same) = _util.best_of(peer_our_reduction, c, d, repeat=repeat)
        for key, value in (("ours", ours_s), ("peer", peer_s), ("peer_ours", same_s)):
            best[key] = min(best[key], value)
        print(f"  round {r + 1}: ours {ours_s * 1e3:.2f} ms, peer {peer_s * 1e3:.2f} ms, "
              f"peer with our reduction {same_s * 1e3:.2f} ms")

    s = fit.summary_
    ll_ours, ll_ref = marginal_loglik(c, d, fit.k_, fit.p0_), marginal_loglik(c, d, k_ref, p_ref)
    print(f"PriorFitter: K={fit.k_:.6f} [{s.loc['k', 'ci_lower']:.4f}, {s.loc['k', 'ci_upper']:.4f}] "
          f"P0={fit.p0_:.7f} [{s.loc['p0', 'ci_lower']:.5f}, {s.loc['p0', 'ci_upper']:.5f}]")
    print(f"scipy betabinom MLE: K={k_ref:.6f} P0={p_ref:.7f} (with our reduction: K={k_same:.6f} "
          f"P0={p_same:.7f})")
    ok = (math.isfinite(fit.k_) and not fit.boundary_
          and abs(fit.k_ - k_ref) <= 1e-4 * k_ref and abs(fit.p0_ - p_ref) <= 1e-6
          and abs(fit.k_ - k_same) <= 1e-4 * k_same and abs(fit.p0_ - p_same) <= 1e-6
          and ll_ours >= ll_ref - 1e-9 * abs(ll_ref))
    inside = all(s.loc[row, "ci_lower"] < s.loc[row, "coef"] < s.loc[row, "ci_upper"] for row in ("k", "p0"))
    if not ok or not inside:
        print(f"MISMATCH: estimates differ or intervals miss them (log-likelihoods {ll_ours!r} vs {ll_ref!r})",
              file=sys.stderr)
        return 1
    print(f"estimates equal (K to {abs(fit.k_ - k_ref) / k_ref:.1e} relative, P0 to {abs(fit.p0_ - p_ref):.1e}; "
          f"log-likelihood ours - peer = {ll_ours - ll_ref:.2e}); best: ours {best['ours'] * 1e3:.2f} ms "
          f"(intervals included), peer {best['peer'] * 1e3:.2f} ms, peer with our reduction "
          f"{best['peer_ours'] * 1e3:.2f} ms (points only)")
    print(_util.result("fit_prior", items=n_items, pairs=n_pairs, ratio=best["peer"] / best["ours"],
                       same_reduction_ratio=best["peer_ours"] / best["ours"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
