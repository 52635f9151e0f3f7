"""Benchmark: false-ship rate, coverage and power of ``tune.decide`` in planted worlds.

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
import warnings

import numpy as np
import pandas as pd

from thatchlab.core.params import ScoringParams
from thatchlab.tune import ClusterStats, config_id, decide
from thatchlab.tune.decide import paired_difference
from thatchlab.tune.registry import cluster_resamples, percentile_interval

FULL = {"reps": 1000, "clusters": (5, 8, 12, 20, 40, 80), "n_boot": 400}
CI = {"reps": 40, "clusters": (5, 12), "n_boot": 200}
ALPHA = 0.05
SIGMA = 0.05


def planted(n_clusters: int, delta: float, rng) -> pd.DataFrame:
    """A two-configuration sweep frame whose change moves test log-loss by exactly ``delta``."""
    den = rng.integers(3, 60, n_clusters).astype(np.float64)
    base = rng.gamma(3.0, 0.2, n_clusters) * den
    effect = delta + SIGMA * rng.standard_normal(n_clusters)
    configs = {ScoringParams(): (0.70, base), ScoringParams(k=20.0): (0.65, base + effect * den)}
    rows, parts = [], {}
    for params, (val, num) in configs.items():
        cid = config_id("prediction", params)
        parts[cid] = {("log_loss", "test"): (num, den), ("log_loss", "val"): (base, den)}
        rows.append({"k": params.k, "config_id": cid, "engine": "prediction", "val_log_loss": val,
                     "test_log_loss": float(num.sum() / den.sum())})
    frame = pd.DataFrame(rows)
    labels = {"test": np.array([f"s{i}" for i in range(n_clusters)]),
              "val": np.array([f"v{i}" for i in range(n_clusters)])}
    frame.attrs.update(engine="prediction", metric="log_loss", metrics=["log_loss"], holdout="0.2",
                       clusters=ClusterStats.merge(parts, "session", labels), unidentified=[],
                       identification={"log_loss": []})
    return frame


def one_count(n_clusters: int, reps: int, n_boot: int, seed: int) -> dict:
    rng = np.random.default_rng([seed, n_clusters])
    shipped_null = shipped_alt = covered = pct_null = pct_cover = 0
    delta = -3 * SIGMA / np.sqrt(n_clusters)
    changed = config_id("prediction", ScoringParams(k=20.0))
    for r in range(reps):
        for truth in (0.0, delta):
            d = decide(planted(n_clusters, truth, rng), "log_loss", n_boot=n_boot, seed=r, alpha=ALPHA)
            ships = d.combined["config_id"] == changed
            gate = d.combined["gate"]
            if truth == 0.0:
                shipped_null += ships
            else:
                shipped_alt += ships
                covered += gate["ci_lower"] <= truth <= gate["ci_upper"]
        # the percentile interval of the same kind of resamples, on a fresh null world
        frame = planted(n_clusters, 0.0, rng)
        s = frame.attrs["clusters"]
        ids = frame["config_id"].tolist()
        (n0, d0), (n1, d1) = (tuple(a[0] for a in s.sums("log_loss", "test", [c])) for c in ids)
        out = paired_difference(n0, d0, n1, d1, cluster_resamples(n_clusters, n_boot, r), ALPHA)
        lo, hi = percentile_interval(out["draws"], ALPHA)
        pct_null += hi < 0
        pct_cover += lo <= 0 <= hi
    return {"clusters": n_clusters, "reps": reps, "false_ship": shipped_null / reps, "false_ships": shipped_null,
            "coverage": covered / reps, "power": shipped_alt / reps,
            "percentile_false_ship": pct_null / reps, "percentile_coverage": pct_cover / reps}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ci", action="store_true", help="run the small size CI uses (seconds)")
    ap.add_argument("--reps", type=int, default=None)
    ap.add_argument("--seed", type=int, default=20260301)
    args = ap.parse_args()
    size = dict(CI if args.ci else FULL)
    if args.reps is not None:
        size["reps"] = args.reps
    print(f"size: {size}, seed {args.seed}; nominal one-sided false-ship {ALPHA / 2:g}, coverage {1 - ALPHA:g}")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        table = pd.DataFrame([one_count(g, size["reps"], size["n_boot"], args.seed) for g in size["clusters"]])
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
