"""Benchmark: coverage of the counterfactual estimators' 95% intervals at n = 200 logged rows.

A statistics study, not a timing. Each world is planted here, outside the code under test: 200
logged rows, each a context ``x ~ N(0, I₃)``; a logging policy picks one of 5 actions from a
softmax of linear scores mixed with the uniform policy so every propensity is at least 0.05; the
outcome is Bernoulli with mean ``σ(x·b + c_a·(1 + x₀))``. The new (target) policy is
deterministic, ``argmax_a x·T_a``; its true value ``E[σ(x·b + c_π(x)·(1 + x₀))]`` is computed here
from 1,000,000 fresh contexts. Two logging policies: ``aligned`` (scores unrelated to the target's)
and ``adverse`` (scores that disfavour the target's choice, so matched rows carry weights near 20).

Each world is scored by ``metrics.estimate`` (IPS and SNIPS, the bootstrap-t interval, and the
percentile interval the package used before for comparison) and ``metrics.doubly_robust`` (a
cross-fitted scikit-learn ``LogisticRegression`` on ``[x, one-hot action, x₀·one-hot action]``,
bootstrap-t). The script counts the worlds whose interval covers the true value, per estimator
and logging policy, and the effective sample sizes of the weights against ``ESS_FLOOR``.

Below ``ESS_FLOOR`` (20) effective rows the estimators warn that their interval is not trusted
(the ``adverse_rare`` worlds, where the few matched rows rarely hold a positive outcome, mostly
fall there). At full size (300 worlds per logging world) the bootstrap-t intervals of IPS and
SNIPS must cover in at least 93% of the worlds at or above the floor, or the script exits 1; the
coverage over every world, DR's and the old percentile interval's are reported beside it. At CI
size (``--ci``: 20 worlds each) it only checks that every interval is finite.

    python benchmarks/bench_ope_coverage.py          # 3 x 300 worlds
    python benchmarks/bench_ope_coverage.py --ci     # 3 x 20 worlds

Last line: ``RESULT bench=ope_coverage worlds=<n> ips=<coverage> ips_covered=<count>
snips=<…> snips_covered=<…> dr=<…> dr_covered=<…> ips_percentile=<…> ips_percentile_covered=<…>
ess_below_floor=<worlds> worlds_ess_ok=<worlds> ips_ess_ok=<coverage there> ips_ess_ok_covered=<…>
snips_ess_ok=<…> … dr_ess_ok=<…> … ratio=<smaller of ips_ess_ok, snips_ess_ok>``.
"""

from __future__ import annotations

import argparse
import sys
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _util  # noqa: E402,I001  (pins BLAS/OpenMP threads before numpy starts its pools)

import numpy as np
import pandas as pd

from thatchlab.metrics import ESS_FLOOR, doubly_robust, estimate

K, N, FLOOR, TARGET = 5, 200, 0.05, 0.93
FULL = {"reps": 300, "n_boot": 999}
CI = {"reps": 20, "n_boot": 199}
B = np.array([0.5, -0.3, 0.2])
C = np.linspace(-1.0, 1.0, K)
T = np.array([[0.3, -0.2, 0.1], [0.0, 0.5, 0.2], [-0.5, 0.1, 0.4], [0.2, 0.2, 0.2], [-0.1, -0.4, 0.3]])
#: Logging worlds: the logging policy's scores and the shift of the outcome's log-odds.
LOGGING = {"aligned": (1.5 * np.array([[1.0, -0.5, 0.3], [-0.4, 0.8, 0.0], [0.2, 0.2, -0.9],
                                       [0.0, -1.0, 0.5], [0.6, 0.0, 0.6]]), 0.0),
           "adverse": (-1.5 * T, 0.0),
           "adverse_rare": (-3.0 * T, -2.0)}


def _mean_reward(x, shift=0.0):
    """Every action's true outcome probability, one row per context."""
    return 1.0 / (1.0 + np.exp(-(shift + (x @ B)[:, None] + C[None, :] * (1.0 + x[:, :1]))))


def _target(x):
    return np.argmax(x @ T.T, axis=1)


def _features(x, a):
    onehot = np.eye(K)[a]
    return np.hstack([x, onehot, x[:, :1] * onehot])


def _world(rng, scores, shift=0.0):
    x = rng.normal(size=(N, 3))
    logits = x @ scores.T
    pl = np.exp(logits - logits.max(axis=1, keepdims=True))
    pl = FLOOR + (1.0 - FLOOR * K) * pl / pl.sum(axis=1, keepdims=True)
    a = np.minimum((rng.random((N, 1)) > np.cumsum(pl, axis=1)).sum(axis=1), K - 1)
    prop = pl[np.arange(N), a]
    y = (rng.random(N) < _mean_reward(x, shift)[np.arange(N), a]).astype(float)
    pi = _target(x)
    return x, a, prop, y, pi


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ci", action="store_true", help="run the small size CI uses (seconds)")
    ap.add_argument("--reps", type=int, default=None)
    ap.add_argument("--seed", type=int, default=20261205)
    args = ap.parse_args()
    _util.pin_threads()
    print(_util.describe_threads())
    size = dict(CI if args.ci else FULL)
    if args.reps is not None:
        size["reps"] = args.reps
    xs = np.random.default_rng(1).normal(size=(1_000_000, 3))
    truths = {policy: float(_mean_reward(xs, shift)[np.arange(len(xs)), _target(xs)].mean())
              for policy, (_, shift) in LOGGING.items()}
    print(f"size: {size}, n = {N} rows per world, propensities >= {FLOOR}, ESS floor {ESS_FLOOR:g}, "
          "true values " + ", ".join(f"{k} {v:.5f}" for k, v in truths.items()))

    rows = []
    for policy, (scores, shift) in LOGGING.items():
        truth = truths[policy]
        seeds = np.random.SeedSequence([args.seed, len(rows)]).spawn(size["reps"])
        for r, ss in enumerate(seeds):
            rng = np.random.default_rng(ss)
            x, a, prop, y, pi = _world(rng, scores, shift)
            match = a == pi
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", UserWarning)  # the ESS warning is counted, not shown
                ests = {"ips": estimate(y, match, prop, "ips", n_boot=size["n_boot"], seed=r),
                        "snips": estimate(y, match, prop, "snips", n_boot=size["n_boot"], seed=r),
                        "ips_percentile": estimate(y, match, prop, "ips", n_boot=size["n_boot"], seed=r,
                                                   interval="percentile"),
                        "dr": doubly_robust(y, match, prop, _features(x, a), _features(x, pi),
                                            n_boot=size["n_boot"], seed=r)}
            for name, e in ests.items():
                rows.append({"policy": policy, "world": r, "estimator": name, "truth": truth, "value": e.value,
                             "ci_low": e.ci_low, "ci_high": e.ci_high, "ess": e.ess,
                             "covered": bool(e.ci_low <= truth <= e.ci_high)})
    frame = pd.DataFrame(rows)
    if not np.isfinite(frame[["value", "ci_low", "ci_high"]].to_numpy()).all():
        print("FAIL: an estimate or interval is not finite")
        return 1
    frame["low_ess"] = frame["ess"] < ESS_FLOOR
    table = frame.groupby(["estimator", "policy"], sort=False).agg(
        worlds=("covered", "size"), covered=("covered", "sum"), coverage=("covered", "mean"),
        below=("ci_high", lambda s: int((s < frame.loc[s.index, "truth"]).sum())),
        above=("ci_low", lambda s: int((s > frame.loc[s.index, "truth"]).sum())),
        median_width=("ci_high", lambda s: float((s - frame.loc[s.index, "ci_low"]).median())),
        bias=("value", lambda s: float((s - frame.loc[s.index, "truth"]).mean())),
        ess_median=("ess", "median"), low_ess=("low_ess", "sum"))
    print("\ncoverage of the nominal 95% intervals (below/above: intervals entirely below/above the truth)")
    print(table.to_string(float_format=lambda v: f"{v:.4g}"))
    pooled = frame.groupby("estimator", sort=False)["covered"].agg(["sum", "size", "mean"])
    ok_ess = frame.loc[~frame["low_ess"]].groupby("estimator", sort=False)["covered"].agg(["sum", "size", "mean"])
    print("\npooled over both logging policies:")
    print(pooled.to_string(float_format=lambda v: f"{v:.4f}"))
    print(f"\nworlds with ESS >= {ESS_FLOOR:g} only:")
    print(ok_ess.to_string(float_format=lambda v: f"{v:.4f}"))

    worlds = int(pooled.loc["ips", "size"])
    cov = {k: float(pooled.loc[k, "mean"]) for k in pooled.index}
    cov_ok = {k: float(ok_ess.loc[k, "mean"]) for k in ok_ess.index}
    low = int(frame.loc[frame["estimator"] == "ips", "low_ess"].sum())
    worst = min(cov_ok["ips"], cov_ok["snips"])
    if not args.ci and worst < TARGET:
        bad = [k for k in ("ips", "snips") if cov_ok[k] < TARGET]
        print(f"FAIL: coverage below {TARGET} for {bad} in the worlds at or above the ESS floor")
        return 1
    counts = " ".join(f"{k}={cov[k]:.4f} {k}_covered={int(pooled.loc[k, 'sum'])}"
                      for k in ("ips", "snips", "dr", "ips_percentile"))
    counts_ok = " ".join(f"{k}_ess_ok={cov_ok[k]:.4f} {k}_ess_ok_covered={int(ok_ess.loc[k, 'sum'])}"
                         for k in ("ips", "snips", "dr"))
    print(f"RESULT bench=ope_coverage worlds={worlds} {counts} ess_below_floor={low} "
          f"worlds_ess_ok={worlds - low} {counts_ok} ratio={worst:.4f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
