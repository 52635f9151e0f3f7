"""Benchmark: how often a constraint passes on test when the true rate sits exactly at its bound.

A statistics study, not a timing. ``decide`` lets a configuration ship under a constraint
(``wrong_silent_follow_rate <= 0.10``) only when the rate's one-sided bound on test is within it
(:func:`thatchlab.decide._testing.constraint_bound`: a score-type Wilson bound at the effective
number of rows, with a CR2 design effect of at least 1 and Bell–McCaffrey degrees of freedom under
an estimated intra-cluster correlation). A configuration whose true rate *equals* the bound should
then pass in at most ``α/2 = 2.5 %`` of worlds; the point value passes in about half.

Each world is planted here, outside the code under test: ``G`` clusters (sessions or users) with
log-normal sizes (σ = 1 on the log scale, median 40 rows), each with its own true rate drawn from
a Beta with the world's mean and spread τ (0: no per-cluster effect; 0.05: strong), counts
binomial; in the "one cluster at half" worlds the first cluster holds as many rows as all the
others together. Every cell is run twice: with the mean rate at the bound (0.10: the pass rate
should be ≤ 2.5 %) and clearly below it (0.07: the pass rate is the power). Beside ours, the same
worlds are scored by the point value, a plain Wald CR1 t bound (G − 1 df), the percentile bound
of a cluster bootstrap (what a user would write first) and the former rule (``former``: a CR2 t
bound on the logit scale with ``G* − 1`` degrees of freedom, ``G* = (Σ rows)² / Σ rows²``, which
passes 3–4 % of at-bound worlds in its worst cells: balanced-ish clusters with τ = 0.05, where the
variance rests on the few largest clusters and ``G* − 1`` overstates its degrees of freedom).

Measured at full size (2026-12-05): ours passes at most 2.35 % of at-bound worlds (30 clusters,
τ = 0.05; 0–1.6 % with τ = 0) against the former rule's 3.1 %, and passes 0.07-worlds 50 % of the
time averaged over cells (the former rule 58 %). The price is in the hardest cells: with one
cluster at half and τ = 0.05 a rate of 0.07 passes 5–8 % of the time (the former rule 10–29 %),
and with 10 clusters and τ = 0 31–36 % (45–47 %); with 30 or 100 clusters and τ = 0 power is
89–100 %.

    python benchmarks/bench_constraint_bound.py          # 2,000 worlds per cell and rate
    python benchmarks/bench_constraint_bound.py --ci     # 100 worlds per cell and rate

Last line: ``RESULT bench=constraint_bound pass_rate=<worst of ours at the bound> wald=<worst>
percentile=<worst> former=<worst> power_min=<ours, worst cell at 0.07> power_mean=<ours, mean over
cells at 0.07> former_power_mean=<the former rule's> worlds=<per cell> ratio=<worst of ours / 0.025>``.
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
BELOW = 0.07  # a true rate clearly within the bound: the pass rate there is the power
FULL = {"reps": 2000, "n_boot": 400}
CI = {"reps": 100, "n_boot": 100}
CELLS = [(g, tau, half) for half in (False, True) for g in (10, 30, 100) for tau in (0.0, 0.05)]


def _rates(rng, n, tau, mean):
    if tau == 0:
        return np.full(n, mean)
    k = mean * (1 - mean) / tau ** 2 - 1
    return rng.beta(mean * k, (1 - mean) * k, n)


def world(rng, g: int, tau: float, half: bool, mean: float = BOUND):
    """Per-cluster (events, rows) with a true rate of exactly ``mean`` in expectation."""
    rows = np.maximum(1, np.round(rng.lognormal(math.log(40), 1.0, g))).astype(np.int64)
    if half:
        rows[0] = rows[1:].sum()
    events = rng.binomial(rows, _rates(rng, g, tau, mean)).astype(np.float64)
    return events, rows.astype(np.float64)


def wald_bound(num, den):
    g, total = len(den), den.sum()
    m = num.sum() / total
    se = math.sqrt(g / (g - 1) * float(np.sum((num - m * den) ** 2))) / total
    return m + t_quantile(1 - ALPHA / 2, g - 1) * se


def former_bound(num, den):
    """The rule decide used before: CR2 variance, logit scale, ``G* − 1`` degrees of freedom."""
    total = den.sum()
    m = num.sum() / total
    h = den / total
    var = float(np.sum((num - m * den) ** 2 / (1 - np.minimum(h, 1 - 1e-12)))) / total ** 2
    t = t_quantile(1 - ALPHA / 2, max(1.0 / float(np.sum(h * h)) - 1.0, 1.0))
    if 0 < m < 1:
        mm, se = m, math.sqrt(var)
    else:
        mm = (num.sum() + 0.5) / (total + 1.0)
        se = max(math.sqrt(var), math.sqrt(mm * (1 - mm) / (total + 1.0)))
    return 1.0 / (1.0 + math.exp(-(math.log(mm / (1 - mm)) + t * se / (mm * (1 - mm)))))


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
    methods = ("ours", "point", "wald", "percentile", "former")
    for g, tau, half in CELLS:
        row = {"clusters": g, "tau": tau, "one_at_half": half, "worlds": size["reps"]}
        for mean, tag in ((BOUND, ""), (BELOW, "below_")):
            passed = dict.fromkeys(methods, 0)
            for _ in range(size["reps"]):
                num, den = world(rng, g, tau, half, mean)
                m = num.sum() / den.sum()
                within = bool(m <= BOUND)
                passed["point"] += within
                passed["ours"] += within and constraint_bound(num, den, ALPHA) <= BOUND
                passed["wald"] += wald_bound(num, den) <= BOUND
                passed["percentile"] += percentile_bound(num, den, rng, size["n_boot"]) <= BOUND
                passed["former"] += within and former_bound(num, den) <= BOUND
            row.update({f"{tag}{k}": v / size["reps"] for k, v in passed.items()})
            row[f"{tag}ours_passed"] = passed["ours"]
        rows.append(row)
    table = pd.DataFrame(rows)
    with pd.option_context("display.width", 250, "display.max_columns", 40):
        print(f"pass rates with the true rate at the bound ({BOUND:g}) and below it ({BELOW:g}, prefix below_):")
        print(table.to_string(index=False))
    worst = {k: float(table[k].max()) for k in ("ours", "wald", "percentile", "former")}
    print(f"RESULT bench=constraint_bound pass_rate={worst['ours']:.4f} wald={worst['wald']:.4f} "
          f"percentile={worst['percentile']:.4f} former={worst['former']:.4f} "
          f"power_min={table['below_ours'].min():.4f} power_mean={table['below_ours'].mean():.4f} "
          f"former_power_mean={table['below_former'].mean():.4f} worlds={size['reps']} "
          f"ratio={worst['ours'] / (ALPHA / 2):.4f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
