"""Benchmark: false-ship rate, coverage and power of ``decide`` in planted worlds.

The study itself is :func:`thatchlab.decide.calibration_study.decide_calibration`.
Each world is a sweep-shaped frame built directly (no replay): production's
default and one changed configuration (``k = 20``) scored on ``G`` test
sessions of unequal size. The changed configuration's per-session log-loss
sums are the default's plus ``(δ + σ·z_c)·n_c`` (``z_c`` standard normal), so
its true test difference to the default is exactly ``δ`` — a truth that lives
outside ``decide``. Validation always prefers the change, so ``decide`` tests
it on every world.

- null worlds (``δ = 0``): ``false_ship`` is the share that ship the change
  (nominal: ``α/2 = 0.025``, the one-sided level of a two-sided 95 % interval);
- non-null worlds (``δ = −3·σ/√G``): ``power`` is the share that ship it and
  ``coverage`` the share whose 95 % interval of the change covers ``δ``.

For comparison the script also scores the plain percentile interval of the
same resamples (what ``decide`` used before), and reports the fewest clusters
at which it reaches nominal coverage (0.95 within two binomial standard
errors); ``decide`` uses Student's t with ``G − 1`` degrees of freedom on the
cluster-bootstrap SE at every cluster count.

    python benchmarks/bench_decide_calibration.py          # 1000 worlds per cluster count
    python benchmarks/bench_decide_calibration.py --ci     # 40 worlds, two cluster counts

Last line: ``RESULT bench=decide_calibration false_ship=<worst rate> coverage=<lowest>
power=<at the largest G> clusters=<smallest G> ratio=<worst false_ship / 0.025>``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _util  # noqa: E402,I001  (pins BLAS/OpenMP threads before numpy starts its pools)
import warnings

import numpy as np
import pandas as pd

from thatchlab.decide.calibration_study import decide_calibration

FULL = {"reps": 1000, "clusters": (5, 8, 12, 20, 40, 80), "n_boot": 400}
CI = {"reps": 40, "clusters": (5, 12), "n_boot": 200}
ALPHA = 0.05


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ci", action="store_true", help="run the small size CI uses (seconds)")
    ap.add_argument("--reps", type=int, default=None)
    ap.add_argument("--seed", type=int, default=20260301)
    args = ap.parse_args()
    _util.pin_threads()
    print(_util.describe_threads())
    size = dict(CI if args.ci else FULL)
    if args.reps is not None:
        size["reps"] = args.reps
    print(f"size: {size}, seed {args.seed}; nominal one-sided false-ship {ALPHA / 2:g}, coverage {1 - ALPHA:g}")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        table = decide_calibration(size["clusters"], size["reps"], size["n_boot"], args.seed, ALPHA)
    with pd.option_context("display.width", 200):
        print(table.to_string(index=False))
    se = np.sqrt(0.95 * 0.05 / size["reps"])
    ok = table.loc[table["percentile_coverage"] >= 0.95 - 2 * se, "clusters"]
    print("percentile interval reaches nominal coverage at "
          + (f"{int(ok.min())} clusters" if len(ok) else f"none of {list(size['clusters'])} clusters"))
    worst = float(table["false_ship"].max())
    print(f"RESULT bench=decide_calibration false_ship={worst:.4f} coverage={table['coverage'].min():.4f} "
          f"power={table['power'].iloc[-1]:.4f} clusters={int(table['clusters'].min())} "
          f"ratio={worst / (ALPHA / 2):.4f}")
    if not args.ci and worst > 0.05:
        print("FAIL: a false-ship rate above 5 %")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
