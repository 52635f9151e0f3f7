"""Benchmark: how often ``decide`` ships an improvement in replayed worlds with a planted prior.

Each world is a :class:`~thatchlab.synth.PreferenceWorld` whose every item's
confirm probability is drawn from the beta prior the scoring engine assumes,
``Beta(K·P0, K·(1 − P0))`` with planted ``K = 20, P0 = 0.3`` (``noise = 0``),
while production's default is ``k = 5, p0 = 0.5``. Its log is replayed by
:func:`~thatchlab.sweep.sweep` over the 2 × 2 grid ``k ∈ {5, 20}``,
``p0 ∈ {0.3, 0.5}`` on ``log_loss`` (holdout ``H``), and
:func:`~thatchlab.decide.decide` (``n_boot = 1000``, its default, seed 0)
tests the validation-best configuration against the default on the test
stretch (paired session-cluster bootstrap, studentized with ``t(G − 1)``,
one-sided level ``α/2 = 2.5 %``), then the reduced configurations with Holm.

Per world the study records the candidate, what shipped
(``d.combined["params"]``, ``d.shipped_parameters()``), the gate's delta and
95 % interval, and an *oracle* comparison that knows the truth: the planted
configuration ``θ* = (k = 20, p0 = 0.3)`` against the default on the same
test sessions and the *same* resamples ``decide`` draws
(``cluster_resamples(G, n_boot, 0, segment_stream("test"))``), through
:func:`thatchlab.decide._testing.paired_difference`:
``δ = m_test(θ*) − m_test(θ₀)`` (negative = better), its SE and
``z = δ / SE``. For context it also gives ``z`` of ``p0 = 0.3`` alone and of
``k = 20`` alone against the default.

Shipped outcomes are classified as

- *improving*: ``{k: 20, p0: 0.3}`` (the truth) or ``{p0: 0.3}`` (the
  reduction dropping ``k`` when the data cannot show it adds anything);
- *harmful*: ``{k: 20}`` alone (``k = 20`` at ``p0 = 0.5``, away from the
  truth);
- *nothing*: production's default stays.

Two oracle columns sit next to decide's ship rate:

- ``oracle_reject``: the share of worlds in which a one-sided 2.5 % t-test of
  ``θ*`` against the default, on the same data and resamples, rejects
  (``z ≤ −t_{0.975, G−1}``): what a test that was *told* the truth, with no
  selection on validation and no reduction step, would ship;
- ``oracle_power``: the mean over worlds of
  ``t.sf(t_{0.975, G−1} + z, G − 1)`` (``= t.sf(t_c − |z|)`` when ``δ < 0``,
  ``t.sf(t_c + |z|)`` when ``δ > 0``): the power a one-sided 2.5 % test would
  have *if the world's observed effect were the true one* and its SE known
  (a shifted central t, no noncentrality correction). This is "observed
  power": computed from the same test stretch it is scored on, it is pulled
  towards ½ (for ``z ~ N(μ, 1)`` its expectation is about
  ``Φ((μ − t_c)/√2)``, not the true ``Φ(μ − t_c)``), so it reads the effect
  size the worlds *show*, not a noise-free truth.

``ratio`` is decide's improving ship rate over ``oracle_power`` at the larger
size. Rates print as counts, e.g. ``5/8``.

    python benchmarks/bench_decide_planted_prior.py         # two world sizes, 100 worlds each (~3 min)
    python benchmarks/bench_decide_planted_prior.py --ci    # 2 small worlds (seconds)

Last line: ``RESULT bench=decide_planted_prior ship=<improving ship rate at the larger size>
oracle_power=<its oracle power> harmful=<harmful ship rate over all worlds> worlds=<n>
ratio=<ship / oracle_power>``.
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

import pandas as pd
from scipy import stats as sps

from thatchlab.sweep import config_id, sweep
from thatchlab.decide import decide
from thatchlab.core.params import ScoringParams
from thatchlab.synth import PreferenceWorld
from thatchlab.decide._testing import improvement_pvalue, paired_difference
from thatchlab.sweep.resampling import cluster_resamples, segment_stream

PRIOR = (20.0, 0.3)
SPACE = {"k": [5.0, 20.0], "p0": [0.3, 0.5]}
ALPHA = 0.05  # decide's two-sided level: one-sided 2.5 %
DEFAULT = ScoringParams()
TRUTH = ScoringParams(k=20.0, p0=0.3)
P0_ONLY = ScoringParams(p0=0.3)
K_ONLY = ScoringParams(k=20.0)
#: (label, users, situations, sessions, holdout)
FULL = {"sizes": [("reviewer", 6, 12, 2000, 0.2), ("larger", 30, 20, 4000, 0.4)], "worlds": 100, "n_boot": 1000}
CI = {"sizes": [("ci", 4, 6, 600, 0.3)], "worlds": 2, "n_boot": 200}


def _fmt(p: dict) -> str:
    return "{" + ", ".join(f"{k}={v:g}" for k, v in sorted(p.items())) + "}" if p else "{}"


def _kind(shipped: dict) -> str:
    if not shipped:
        return "nothing"
    if shipped in ({"k": 20.0, "p0": 0.3}, {"p0": 0.3}):
        return "improving"
    if shipped == {"k": 20.0}:
        return "harmful"
    return "other"


def one_world(label, users, situations, sessions, holdout, seed, n_boot) -> dict:
    """Replay, sweep and decide one world; the oracle comparison on the same resamples."""
    w = PreferenceWorld(n_users=users, n_situations=situations, seed=seed, prior=PRIOR, noise=0.0)
    log = w.log(sessions, seed=seed + 100_000)
    res = sweep(log, SPACE, "log_loss", embedder=w.lookup_embedder(), holdout=holdout)
    d = decide(res, "log_loss", n_boot=n_boot)  # seed 0, alpha 0.05: decide's defaults
    cs = res.attrs["clusters"]
    W = cluster_resamples(len(cs.labels["test"]), n_boot, 0, segment_stream("test"))  # decide's resamples
    ids = [config_id("prediction", p) for p in (DEFAULT, TRUTH, P0_ONLY, K_ONLY)]
    num, den = cs.sums("log_loss", "test", ids)
    vs = {name: paired_difference(num[0], den[0], num[i], den[i], W, ALPHA)
          for i, name in enumerate(("truth", "p0", "k"), start=1)}
    o = vs["truth"]
    z = o["delta"] / o["se"] if o["se"] > 0 else math.copysign(math.inf, o["delta"])
    crit = float(sps.t.ppf(1 - ALPHA / 2, o["df"]))
    cand = {f: getattr(d.candidate, f) for f in SPACE if getattr(d.candidate, f) != getattr(DEFAULT, f)}
    gate = d.combined["gate"]
    shipped = dict(d.combined["params"])
    assert sorted(shipped) == sorted(d.shipped_parameters()), (shipped, d.shipped_parameters())
    return {"size": label, "seed": seed, "test_sessions": o["n_clusters"], "candidate": _fmt(cand),
            "candidate_is_truth": d.candidate.k == TRUTH.k and d.candidate.p0 == TRUTH.p0,
            "gate_delta": gate["delta"], "gate_lo": gate["ci_lower"], "gate_hi": gate["ci_upper"],
            "gate_passed": bool(gate["passed"]), "shipped": _fmt(shipped), "kind": _kind(shipped),
            "delta": o["delta"], "se": o["se"], "z": z,
            "z_p0": vs["p0"]["delta"] / vs["p0"]["se"], "z_k": vs["k"]["delta"] / vs["k"]["se"],
            "oracle_reject": improvement_pvalue(o, True) <= ALPHA,
            "oracle_power": float(sps.t.sf(crit + z, o["df"]))}


def _rate(n: int, of: int) -> str:
    return f"{n}/{of} ({n / of:.2f})" if of else "0/0"


def summarize(worlds: pd.DataFrame, sizes) -> pd.DataFrame:
    rows = []
    for label, users, situations, sessions, holdout in sizes:
        g = worlds[worlds["size"] == label]
        n = len(g)
        kinds = g["kind"].value_counts()
        rows.append({"size": label, "U": users, "S": situations, "N": sessions, "H": holdout,
                     "test_sessions": int(round(g["test_sessions"].mean())), "worlds": n,
                     "candidate_is_truth": _rate(int(g["candidate_is_truth"].sum()), n),
                     "ships_improving": _rate(int(kinds.get("improving", 0)), n),
                     "of_which_p0_only": int((g["shipped"] == "{p0=0.3}").sum()),
                     "ships_harmful": _rate(int(kinds.get("harmful", 0)), n),
                     "ships_nothing": _rate(int(kinds.get("nothing", 0)), n),
                     "mean_z": round(float(g["z"].mean()), 2),
                     "median_z": round(float(g["z"].median()), 2),
                     "oracle_reject": _rate(int(g["oracle_reject"].sum()), n),
                     "oracle_power": round(float(g["oracle_power"].mean()), 3),
                     "ship_rate": float((g["kind"] == "improving").mean()),
                     "power_raw": float(g["oracle_power"].mean()),
                     "other": int(kinds.get("other", 0))})
    return pd.DataFrame(rows)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ci", action="store_true", help="run the small size CI uses (seconds)")
    ap.add_argument("--worlds", type=int, default=None, help="worlds per size")
    ap.add_argument("--seed", type=int, default=20260301, help="seed of the first world")
    ap.add_argument("--per-world", action="store_true", help="print every world's row")
    args = ap.parse_args(argv)
    _util.pin_threads()
    print(_util.describe_threads())
    size = dict(CI if args.ci else FULL)
    if args.worlds is not None:
        size["worlds"] = args.worlds
    print(f"planted prior K={PRIOR[0]:g}, P0={PRIOR[1]:g} (noise 0); default k=5, p0=0.5; space {SPACE}; "
          f"{size['worlds']} worlds per size, n_boot {size['n_boot']}, first seed {args.seed}; "
          f"one-sided level {ALPHA / 2:g}")
    t0 = time.perf_counter()
    recs = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        for label, users, situations, sessions, holdout in size["sizes"]:
            for i in range(size["worlds"]):
                recs.append(one_world(label, users, situations, sessions, holdout, args.seed + i,
                                      size["n_boot"]))
    worlds = pd.DataFrame(recs)
    elapsed = time.perf_counter() - t0
    cols = ["size", "seed", "test_sessions", "candidate", "gate_delta", "gate_lo", "gate_hi", "shipped",
            "kind", "z", "z_p0", "z_k", "oracle_reject", "oracle_power"]
    odd = ((~worlds["candidate_is_truth"]) | worlds["kind"].isin(["harmful", "other"])
           | ((worlds["kind"] == "improving") != worlds["oracle_reject"]))
    with pd.option_context("display.width", 250, "display.max_rows", None, "display.max_columns", None):
        if args.per_world:
            print("every world:")
            print(worlds[cols].round(4).to_string(index=False))
        print(f"worlds where the candidate is not the truth, a non-improving change ships, or decide and the "
              f"oracle test disagree ({int(odd.sum())} of {len(worlds)}):")
        print(worlds.loc[odd, cols].round(4).to_string(index=False) if odd.any() else "(none)")
        print()
        print("oracle z = delta/SE of the truth (k=20, p0=0.3) against the default on test, quantiles:")
        q = worlds.groupby("size", sort=False)["z"].quantile([0.0, 0.25, 0.5, 0.75, 1.0]).unstack().round(2)
        q.columns = ["min", "q25", "median", "q75", "max"]
        q["share_z_le_-2.5"] = worlds.groupby("size", sort=False)["z"].apply(lambda z: f"{int((z <= -2.5).sum())}"
                                                                             f"/{len(z)}")
        print(q.to_string())
        print()
        table = summarize(worlds, size["sizes"])
        print(table.drop(columns=["ship_rate", "power_raw", "other"]).to_string(index=False))
    df = float(worlds["test_sessions"].median()) - 1
    need = float(sps.t.ppf(1 - ALPHA / 2, df) + sps.t.ppf(0.7, df))
    print(f"an oracle one-sided {ALPHA / 2:g} test reaches 70 % power at a true z of about -{need:.2f}")
    print(f"{len(worlds)} worlds in {elapsed:.1f} s")
    other = int(table["other"].sum())
    if other:
        print(f"FAIL: {other} worlds shipped a configuration outside the classification")
        return 1
    last = table.iloc[-1]
    ship, power = float(last["ship_rate"]), float(last["power_raw"])
    harmful = float((worlds["kind"] == "harmful").mean())
    ratio = ship / power if power > 0 else 0.0
    print(f"RESULT bench=decide_planted_prior ship={ship:.4f} oracle_power={power:.4f} harmful={harmful:.4f} "
          f"worlds={len(worlds)} ratio={ratio:.4f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
