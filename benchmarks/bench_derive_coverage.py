"""Benchmark: empirical coverage of DeriveWeightsFitter's nominal 95% intervals.

Synthetic recall worlds (``thatchlab.synth.recall.RecallWorld``) are drawn
with planted derive coefficients and half-life away from production's
hand-set values (intercept 0.6, atom bump 0.2, corroboration weight 0.15,
age penalty 0.05, half-life 20 days, against 0.5 / 0.1 / 0.05 / 0.02 / 30),
one world per replication with its own seed from ``SeedSequence(seed)``.
Each is fitted by ``DeriveWeightsFitter`` (profile-likelihood intervals) and
the script counts, per parameter, how often the interval covers the planted
value (over the replications where the parameter was identified), with a
binomial standard error, the share of fits that converged and the coverage
among those.

At full size (200 replications of 6000 judged recalls) every identified
parameter's coverage must lie in [0.90, 0.98], or the script exits 1. At CI
size (``--ci``: 10 small worlds, seconds) it only checks that every
replication produced an interval for every identified parameter (one whose
profile likelihood is flat has ``identified`` False and may have none).

    python benchmarks/bench_derive_coverage.py          # 200 worlds x 6000 recalls
    python benchmarks/bench_derive_coverage.py --ci     # 10 worlds x 1000 recalls

Last line: ``RESULT bench=derive_coverage replications=<n> coverage_min=<x>
coverage_max=<y> ratio=<coverage_min>``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _util  # noqa: E402,I001  (pins BLAS/OpenMP threads before numpy starts its pools)
import time

import numpy as np

from thatchlab.calibration import CalibrationParams
from thatchlab.synth.recall import PLANTED
from thatchlab.tune.derive import COEFS, interval_coverage

FULL = {"replications": 200, "n_memories": 400, "n_recalls": 6000}
CI = {"replications": 10, "n_memories": 100, "n_recalls": 1000}
BAND = (0.90, 0.98)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ci", action="store_true", help="run the small size CI uses (seconds)")
    ap.add_argument("--replications", type=int, default=None)
    ap.add_argument("--seed", type=int, default=20261201)
    args = ap.parse_args()
    _util.pin_threads()
    print(_util.describe_threads())
    size = dict(CI if args.ci else FULL)
    if args.replications is not None:
        size["replications"] = args.replications
    hand = CalibrationParams()
    print("planted:  " + ", ".join(f"{n}={getattr(PLANTED, n):g}" for n in COEFS))
    print("hand-set: " + ", ".join(f"{n}={getattr(hand, n):g}" for n in COEFS))
    print(f"size: {size}, seed {args.seed}, nominal level 0.95")

    t0 = time.perf_counter()
    cov = interval_coverage(PLANTED, size["replications"], n_memories=size["n_memories"],
                            n_recalls=size["n_recalls"], seed=args.seed)
    elapsed = time.perf_counter() - t0
    n = size["replications"]
    # a parameter whose profile is flat (identified False) may have no interval (NaN); every
    # identified one must have one
    if len(cov) != n * len(COEFS) or cov.loc[cov["identified"], ["ci_lower", "ci_upper"]].isna().any().any():
        print("FAIL: a replication is missing an interval")
        return 1

    ident = cov.loc[cov["identified"]]
    table = ident.groupby("param", sort=False).agg(
        n=("covered", "size"), coverage=("covered", "mean"),
        below=("ci_upper", lambda s: float(np.mean(s < cov.loc[s.index, "planted"]))),
        above=("ci_lower", lambda s: float(np.mean(s > cov.loc[s.index, "planted"]))))
    table["se"] = np.sqrt(table["coverage"] * (1 - table["coverage"]) / table["n"])
    conv = ident.loc[ident["converged"]]
    table["coverage_converged"] = conv.groupby("param", sort=False)["covered"].mean()
    table["median_width"] = ident.assign(w=ident["ci_upper"] - ident["ci_lower"]).groupby(
        "param", sort=False)["w"].median()
    print(f"\n{n} replications in {elapsed:.1f} s ({elapsed / n:.2f} s each); "
          f"converged {cov.groupby('replication')['converged'].first().mean():.3f}; "
          f"identified {cov['identified'].mean():.3f}")
    print("coverage of the nominal 95% intervals per identified parameter "
          "(below/above: share of intervals entirely below/above the planted value)")
    print(table.to_string(float_format=lambda x: f"{x:.4g}"))

    lo, hi = float(table["coverage"].min()), float(table["coverage"].max())
    if not args.ci:
        bad = table.index[(table["coverage"] < BAND[0]) | (table["coverage"] > BAND[1])].tolist()
        if bad:
            print(f"FAIL: coverage outside [{BAND[0]}, {BAND[1]}] for {bad}")
            return 1
    print(f"RESULT bench=derive_coverage replications={n} coverage_min={lo:.4f} coverage_max={hi:.4f} "
          f"ratio={lo:.4f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
