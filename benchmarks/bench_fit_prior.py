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
* **peer** (``ratio``, target >= 1.0): the scipy fit as a user writes it
  with a fast reduction: the ~300 distinct ``(c, n)`` pairs with their
  counts, reduced either by one ``np.bincount`` of the integer key ``c *
  (max n + 1) + n`` or by pandas' ``value_counts`` of that key (the faster of
  the two counts), then ``scipy.optimize.minimize`` (L-BFGS-B, numerical
  gradient) of the count-weighted ``-scipy.stats.betabinom.logpmf(c, n, a,
  b)`` over ``(log a, log b)`` from the pooled share at K = 5: **point
  estimates only**; ``same_reduction_ratio`` is the bincount form alone;
* **peer with ``np.unique(axis=0)``** (for the record, ``unique_ratio``): the
  same optimiser over pairs from ``np.unique(..., axis=0,
  return_counts=True)``, whose row sort dominated the old peer's time;
* **ours on Arrow-backed counts** (``arrow_ratio``): ``fit_counts`` of the
  same counts held in ``double[pyarrow]`` Series.

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

Last line: ``RESULT bench=fit_prior items=<n> pairs=<distinct pairs> ratio=<reduced peer_s / ours_s>
same_reduction_ratio=<bincount peer_s / ours_s> value_counts_ratio=<value_counts peer_s / ours_s>
unique_ratio=<np.unique peer_s / ours_s> arrow_ratio=<ours_s / ours on Arrow counts_s>``.
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _util  # noqa: E402  (before numpy and scipy: it pins their threads)
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from scipy.optimize import minimize  # noqa: E402
from scipy.special import betaln  # noqa: E402
from scipy.stats import betabinom  # noqa: E402

from thatchlab.fit import PriorFitter  # noqa: E402

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


def peer_unique(c, d):
    pairs, w = np.unique(np.stack([c, c + d], axis=1).astype(np.int64), axis=0, return_counts=True)
    return _scipy_mle(pairs[:, 0], pairs[:, 1], w.astype(np.float64))


def peer_value_counts(c, d):
    """The pairs reduced by pandas' ``value_counts`` of the integer key ``c * span + n``."""
    ci, ni = c.astype(np.int64), (c + d).astype(np.int64)
    span = int(ni.max()) + 1
    held = pd.Series(ci * span + ni).value_counts(sort=False)
    pc, pn = np.divmod(held.index.to_numpy(), span)
    return _scipy_mle(pc, pn, held.to_numpy(np.float64))


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
    c_arrow, d_arrow = (pd.Series(x, dtype="double[pyarrow]") for x in (c, d))
    sides = {"ours": lambda: ours(c, d), "ours_arrow": lambda: ours(c_arrow, d_arrow),
             "bincount": lambda: peer_our_reduction(c, d), "value_counts": lambda: peer_value_counts(c, d),
             "unique": lambda: peer_unique(c, d)}
    best, out = dict.fromkeys(sides, math.inf), {}
    for r in range(rounds):
        for name, fn in sides.items():
            seconds, out[name] = _util.best_of(fn, repeat=repeat)
            best[name] = min(best[name], seconds)
        print(f"  round {r + 1}: " + ", ".join(f"{k} {best[k] * 1e3:.2f} ms" for k in sides))
    fit = out["ours"]
    k_ref, p_ref = out["unique"]
    k_same, p_same = out["bincount"]
    k_vc, p_vc = out["value_counts"]
    best["peer"] = min(best["bincount"], best["value_counts"])
    best["peer_ours"] = best["bincount"]

    s = fit.summary_
    ll_ours, ll_ref = marginal_loglik(c, d, fit.k_, fit.p0_), marginal_loglik(c, d, k_ref, p_ref)
    print(f"PriorFitter: K={fit.k_:.6f} [{s.loc['k', 'ci_lower']:.4f}, {s.loc['k', 'ci_upper']:.4f}] "
          f"P0={fit.p0_:.7f} [{s.loc['p0', 'ci_lower']:.5f}, {s.loc['p0', 'ci_upper']:.5f}]")
    print(f"scipy betabinom MLE: K={k_ref:.6f} P0={p_ref:.7f} (with our reduction: K={k_same:.6f} "
          f"P0={p_same:.7f})")
    ok = (math.isfinite(fit.k_) and not fit.boundary_
          and abs(fit.k_ - k_ref) <= 1e-4 * k_ref and abs(fit.p0_ - p_ref) <= 1e-6
          and abs(fit.k_ - k_same) <= 1e-4 * k_same and abs(fit.p0_ - p_same) <= 1e-6
          and abs(fit.k_ - k_vc) <= 1e-4 * k_vc and abs(fit.p0_ - p_vc) <= 1e-6
          and (out["ours_arrow"].k_, out["ours_arrow"].p0_) == (fit.k_, fit.p0_)
          and ll_ours >= ll_ref - 1e-9 * abs(ll_ref))
    inside = all(s.loc[row, "ci_lower"] < s.loc[row, "coef"] < s.loc[row, "ci_upper"] for row in ("k", "p0"))
    if not ok or not inside:
        print(f"MISMATCH: estimates differ or intervals miss them (log-likelihoods {ll_ours!r} vs {ll_ref!r})",
              file=sys.stderr)
        return 1
    print(f"estimates equal (K to {abs(fit.k_ - k_ref) / k_ref:.1e} relative, P0 to {abs(fit.p0_ - p_ref):.1e}; "
          f"log-likelihood ours - peer = {ll_ours - ll_ref:.2e}); best: ours {best['ours'] * 1e3:.2f} ms "
          f"(intervals included), reduced peer {best['peer'] * 1e3:.2f} ms (bincount {best['bincount'] * 1e3:.2f}, "
          f"value_counts {best['value_counts'] * 1e3:.2f}; points only), np.unique peer "
          f"{best['unique'] * 1e3:.2f} ms, ours on Arrow counts {best['ours_arrow'] * 1e3:.2f} ms")
    ratio = best["peer"] / best["ours"]
    print(f"target: reduced scipy fit / ours = {ratio:.3f} (>= 1.0: {'met' if ratio >= 1.0 else 'NOT met'})")
    print(_util.result("fit_prior", items=n_items, pairs=n_pairs, ratio=ratio,
                       same_reduction_ratio=best["bincount"] / best["ours"],
                       value_counts_ratio=best["value_counts"] / best["ours"],
                       unique_ratio=best["unique"] / best["ours"], arrow_ratio=best["ours"] / best["ours_arrow"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
