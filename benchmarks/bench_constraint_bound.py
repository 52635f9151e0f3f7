"""Benchmark: how often a constraint passes on test when the true rate sits exactly at its bound.

A statistics study, not a timing. ``decide`` lets a configuration ship under a constraint
(``wrong_silent_follow_rate <= 0.10``) only when the rate's one-sided bound on test is within it
(:func:`thatchlab.decide._testing.constraint_bound`: CR2 cluster-robust t on the logit scale,
effective-cluster degrees of freedom). A configuration whose true rate *equals* the bound should
then pass in at most ``α/2 = 2.5 %`` of worlds; the point value passes in about half.

Each world is planted here, outside the code under test: ``G`` clusters (sessions or users) with
log-normal sizes (σ = 1 on the log scale, median 40 rows), each with its own true rate drawn from
a Beta with mean 0.10 and spread τ (0: no per-cluster effect; 0.05: strong), counts binomial; in
the "one cluster at half" worlds the first cluster holds as many rows as all the others together.
Beside ours, the same worlds are scored by the point value, a plain Wald CR1 t bound (G − 1 df)
and the percentile bound of a cluster bootstrap (what a user would write first).

    python benchmarks/bench_constraint_bound.py          # 2,000 worlds per cell
    python benchmarks/bench_constraint_bound.py --ci     # 100 worlds per cell

Last line: ``RESULT bench=constraint_bound pass_rate=<worst of ours> wald=<worst> percentile=<worst>
worlds=<per cell> ratio=<worst of ours / 0.025>``.
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _util  # noqa: E402,I001  (pins BLAS/OpenMP threads before numpy starts its pools)

import numpy as np
import pandas as pd

from thatchlab.decide._testing import constraint_bound, t_quantile

BOUND, ALPHA = 0.10, 0.05
FULL = {"reps": 2000, "n_boot": 400}
CI = {"reps": 100, "n_boot": 100}
CELLS = [(g, tau, half) for half in (False, True) for g in (10, 30, 100) for tau in (0.0, 0.05)]


def _rates(rng, n, tau):
    if tau == 0:
        return np.full(n, BOUND)
    k = BOUND * (1 - BOUND) / tau ** 2 - 1
    return rng.beta(BOUND * k, (1 - BOUND) * k, n)


def world(rng, g: int, tau: float, half: bool):
    """Per-cluster (events, rows) with a true rate of exactly ``BOUND`` in expectation."""
    rows = np.maximum(1, np.round(rng.lognormal(math.log(40), 1.0, g))).astype(np.int64)
    if half:
        rows[0] = rows[1:].sum()
    events = rng.binomial(rows, _rates(rng, g, tau)).astype(np.float64)
    return events, rows.astype(np.float64)


def wald_bound(num, den):
    g, total = len(den), den.sum()
    m = num.sum() / total
    se = math.sqrt(g / (g - 1) * float(np.sum((num - m * den) ** 2))) / total
    return m + t_quantile(1 - ALPHA / 2, g - 1) * se


def percentile_bound(num, den, rng, n_boot):
    draws = rng.multinomial(len(den), np.full(len(den), 1 / len(den)), size=n_boot).astype(np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        ratios = (draws @ num) / (draws @ den)
    return float(np.nanquantile(ratios, 1 - ALPHA / 2))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ci", action="store_true", help="run the small size CI uses (seconds)")
    ap.add_argument("--seed", type=int, default=20261205)
    args = ap.parse_args()
    _util.pin_threads()
    print(_util.describe_threads())
    size = CI if args.ci else FULL
    print(f"size: {size}; true rate = bound = {BOUND}; nominal pass rate {ALPHA / 2:g}")
    rng = np.random.default_rng(args.seed)
    rows = []
    for g, tau, half in CELLS:
        passed = {"ours": 0, "point": 0, "wald": 0, "percentile": 0}
        for _ in range(size["reps"]):
            num, den = world(rng, g, tau, half)
            m = num.sum() / den.sum()
            passed["point"] += m <= BOUND
            passed["ours"] += (m <= BOUND) and constraint_bound(num, den, ALPHA) <= BOUND
            passed["wald"] += wald_bound(num, den) <= BOUND
            passed["percentile"] += percentile_bound(num, den, rng, size["n_boot"]) <= BOUND
        rows.append({"clusters": g, "tau": tau, "one_at_half": half, "worlds": size["reps"],
                     **{f"{k}_passed": v for k, v in passed.items()},
                     **{f"{k}_rate": v / size["reps"] for k, v in passed.items()}})
    table = pd.DataFrame(rows)
    with pd.option_context("display.width", 220):
        print(table.to_string(index=False))
    worst = {k: float(table[f"{k}_rate"].max()) for k in ("ours", "wald", "percentile")}
    print(f"RESULT bench=constraint_bound pass_rate={worst['ours']:.4f} wald={worst['wald']:.4f} "
          f"percentile={worst['percentile']:.4f} worlds={size['reps']} ratio={worst['ours'] / (ALPHA / 2):.4f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
