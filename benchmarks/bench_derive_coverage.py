"""Benchmark: empirical coverage of DeriveWeightsFitter's nominal 95% intervals.

A statistics study, not a timing. Each world is planted here, outside the code under test (not by
``thatchlab.synth``): the truth is drawn per world (intercept U(0.45, 0.70), atom bump
U(0.05, 0.25), corroboration weight U(0.05, 0.20), age penalty U(0.01, 0.08), half-life
U(10, 45) days, baseline 0.5), and each judged touch gets an age (exponential, mean 35 days,
capped at 150), an atom flag (30%), a corroboration count (geometric, capped at 30) and a
consumption drawn from ai-memory's derive formula, written out below in numpy. Every world is
fitted by ``DeriveWeightsFitter``; an interval covers when ``ci_lower ≤ truth ≤ ci_upper``, counted
over every world (an unidentified parameter with no interval does not cover).

A second set of worlds gives every touch the same age (U(5, 30) days per world): there the data
see the half-life only through the freshness at that one age, and it must never be called
identified with a finite two-sided interval.

At full size (60 worlds of 4000 judged touches, 12 equal-age worlds) the pooled coverage must be at
least 0.93 and each parameter's at least 0.85, and no equal-age world may give the half-life a
finite two-sided interval, or the script exits 1. At CI size (``--ci``: 4 worlds of 1000 and 2
equal-age worlds) only the last rule is checked.

    python benchmarks/bench_derive_coverage.py          # 60 worlds x 4000 touches
    python benchmarks/bench_derive_coverage.py --ci     # 4 worlds x 1000 touches

Last line: ``RESULT bench=derive_coverage worlds=<n> pooled=<coverage> pooled_covered=<count>
<param>=<coverage> <param>_covered=<count> (each parameter) multimodal=<worlds with two modes
reported> equal_age_worlds=<n> equal_age_two_sided=<count> coverage_min=<x> coverage_max=<y>
ratio=<pooled>``.
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _util  # noqa: E402,I001  (pins BLAS/OpenMP threads before numpy starts its pools)
import time
import warnings

import numpy as np
import pandas as pd

from thatchlab.fit.derive import COEFS, DeriveWeightsFitter

FULL = {"worlds": 60, "n": 4000, "equal_age_worlds": 12}
CI = {"worlds": 4, "n": 1000, "equal_age_worlds": 2}
POOLED, EACH = 0.93, 0.85
SHORT = {"intercept": "intercept", "atom_bump": "atom", "corroboration_weight": "corroboration",
         "age_penalty": "age_penalty", "half_life_days": "half_life"}


def _truth(rng) -> dict:
    return {"intercept": rng.uniform(0.45, 0.70), "atom_bump": rng.uniform(0.05, 0.25),
            "corroboration_weight": rng.uniform(0.05, 0.20), "age_penalty": rng.uniform(0.01, 0.08),
            "half_life_days": rng.uniform(10.0, 45.0)}


def _touches(rng, truth: dict, n: int, age=None) -> pd.DataFrame:
    """Judged touches: ``z = age·ln2/h``, ``b = clip(a + β·atom + γ·log10(1 + n) − δ·z, 0, 1)``,
    ``P(consumed) = b·e^(−z) + 0.5·(1 − e^(−z))``."""
    ages = np.minimum(rng.exponential(35.0, n), 150.0) if age is None else np.full(n, float(age))
    atom = rng.random(n) < 0.3
    corr = np.minimum(rng.geometric(0.3, n) - 1, 30).astype(float)
    z = ages * math.log(2.0) / truth["half_life_days"]
    fresh = np.exp(-z)
    b = np.clip(truth["intercept"] + truth["atom_bump"] * atom
                + truth["corroboration_weight"] * np.log10(1.0 + corr) - truth["age_penalty"] * z, 0.0, 1.0)
    p = b * fresh + 0.5 * (1.0 - fresh)
    return pd.DataFrame({"age_days": ages, "is_atom": atom, "corroboration": corr,
                         "consumed": (rng.random(n) < p).astype(float)})


def _fit(frame):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # convergence and identification are recorded
        return DeriveWeightsFitter().fit(frame)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ci", action="store_true", help="run the small size CI uses (seconds)")
    ap.add_argument("--worlds", type=int, default=None)
    ap.add_argument("--seed", type=int, default=20261205)
    args = ap.parse_args()
    _util.pin_threads()
    print(_util.describe_threads())
    size = dict(CI if args.ci else FULL)
    if args.worlds is not None:
        size["worlds"] = args.worlds
    print(f"size: {size}, seed {args.seed}, nominal level 0.95")

    t0 = time.perf_counter()
    rows, multimodal = [], 0
    for w, ss in enumerate(np.random.SeedSequence([args.seed, 1]).spawn(size["worlds"])):
        rng = np.random.default_rng(ss)
        truth = _truth(rng)
        f = _fit(_touches(rng, truth, size["n"]))
        multimodal += bool(f.multimodal_)
        s = f.summary_
        for name in COEFS:
            lo, hi = float(s.loc[name, "ci_lower"]), float(s.loc[name, "ci_upper"])
            rows.append({"world": w, "param": name, "truth": truth[name], "coef": float(s.loc[name, "coef"]),
                         "ci_lower": lo, "ci_upper": hi, "identified": bool(s.loc[name, "identified"]),
                         "converged": f.converged_, "covered": bool(lo <= truth[name] <= hi)})
    cov = pd.DataFrame(rows)
    equal_rows = []
    for w, ss in enumerate(np.random.SeedSequence([args.seed, 2]).spawn(size["equal_age_worlds"])):
        rng = np.random.default_rng(ss)
        truth = _truth(rng)
        age = rng.uniform(5.0, 30.0)
        hl = _fit(_touches(rng, truth, size["n"], age=age)).summary_.loc["half_life_days"]
        lo, hi = float(hl["ci_lower"]), float(hl["ci_upper"])
        equal_rows.append({"world": w, "age": age, "identified": bool(hl["identified"]), "ci_lower": lo,
                           "ci_upper": hi, "bound": hl["bound"],
                           "two_sided": bool(np.isfinite(lo) and np.isfinite(hi))})
    equal = pd.DataFrame(equal_rows)
    elapsed = time.perf_counter() - t0

    n = size["worlds"]
    table = cov.groupby("param", sort=False).agg(
        worlds=("covered", "size"), covered=("covered", "sum"), coverage=("covered", "mean"),
        identified=("identified", "sum"),
        below=("ci_upper", lambda s: int((s < cov.loc[s.index, "truth"]).sum())),
        above=("ci_lower", lambda s: int((s > cov.loc[s.index, "truth"]).sum())),
        median_width=("ci_upper", lambda s: float((s - cov.loc[s.index, "ci_lower"]).median())))
    print(f"\n{n} worlds in {elapsed:.1f} s; converged {cov.groupby('world')['converged'].first().mean():.3f}; "
          f"two modes reported in {multimodal}")
    print("coverage of the nominal 95% intervals over every world (below/above: intervals entirely "
          "below/above the truth)")
    print(table.to_string(float_format=lambda x: f"{x:.4g}"))
    pooled_n, pooled = int(cov["covered"].sum()), float(cov["covered"].mean())
    print(f"pooled: {pooled_n}/{len(cov)} = {pooled:.4f}")
    print("\nequal ages (the half-life):")
    print(equal.to_string(float_format=lambda x: f"{x:.4g}"))
    two_sided = int(equal["two_sided"].sum()) if len(equal) else 0

    lo, hi = float(table["coverage"].min()), float(table["coverage"].max())
    if two_sided:
        print(f"FAIL: {two_sided} equal-age worlds give the half-life a finite two-sided interval")
        return 1
    if not args.ci and (pooled < POOLED or lo < EACH):
        print(f"FAIL: pooled coverage {pooled:.4f} (needs {POOLED}) or a parameter's {lo:.4f} (needs {EACH})")
        return 1
    each = " ".join(f"{SHORT[p]}={table.loc[p, 'coverage']:.4f} {SHORT[p]}_covered={int(table.loc[p, 'covered'])}"
                    for p in COEFS)
    print(f"RESULT bench=derive_coverage worlds={n} pooled={pooled:.4f} pooled_covered={pooled_n} {each} "
          f"multimodal={multimodal} equal_age_worlds={len(equal)} equal_age_two_sided={two_sided} "
          f"coverage_min={lo:.4f} coverage_max={hi:.4f} ratio={pooled:.4f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
