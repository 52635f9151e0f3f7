"""Benchmark: 100 closed-loop simulations in lockstep against one simulation.

A preference world (5 users, 12 situations, 4 phrasings each, drift and
answer noise; a ``LookupEmbedder`` with planted geometry, so no model) is
simulated closed loop — each configuration's simulated user answers that
configuration's own nudges — under 100 configurations (threshold × K × P0 ×
strong-evidence grid) by one ``synth.simulate_many`` call. The baseline,
measured in the same run, is one ``synth.simulate`` of the same world under
one configuration (best of three). Every configuration's log must equal
``simulate``'s for that configuration frame for frame (exit 1 otherwise);
those reference runs are not timed.

    python benchmarks/bench_closed_loop.py          # 400 sessions
    python benchmarks/bench_closed_loop.py --ci     # 40 sessions

Last line: ``RESULT bench=closed_loop configs=100 sessions=<n> ratio=<many_s / one_s>``.
"""

from __future__ import annotations

import argparse
import itertools
import sys
import time

import pandas as pd

from thatchlab.core.params import ScoringParams
from thatchlab.synth import PreferenceWorld, simulate, simulate_many


def configs() -> list:
    grid = itertools.product([0.45, 0.55, 0.6, 0.7, 0.8], [1.0, 2.0, 5.0, 10.0, 20.0], [0.4, 0.6],
                             [2, 3])
    return [ScoringParams(threshold=t, k=k, p0=p0, strong_evidence=e) for t, k, p0, e in grid]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ci", action="store_true", help="small size for CI")
    args = ap.parse_args(argv)
    n_sessions = 40 if args.ci else 400
    world = PreferenceWorld(n_users=5, n_situations=12, phrasings_per_situation=4, drift_rate=0.01,
                            noise=0.05, seed=3)
    emb = world.lookup_embedder()
    params = configs()
    simulate(world, params[0], n_sessions=5, seed=1, embedder=emb)       # warm imports

    one_s = float("inf")
    for _ in range(3):
        t = time.perf_counter()
        simulate(world, params[len(params) // 2], n_sessions=n_sessions, seed=1, embedder=emb)
        one_s = min(one_s, time.perf_counter() - t)
    t = time.perf_counter()
    logs = simulate_many(world, params, n_sessions=n_sessions, seed=1, embedder=emb)
    many_s = time.perf_counter() - t

    regimes: dict = {}
    for p, log in zip(params, logs):
        ref = simulate(world, p, n_sessions=n_sessions, seed=1, embedder=emb)
        if not log.equals(ref):
            try:
                pd.testing.assert_frame_equal(log, ref)
            except AssertionError as exc:
                print(f"MISMATCH for {p}: {exc}")
            else:
                print(f"MISMATCH for {p}: frames differ in a cell's type")
            return 1
        for r, v in log["regime"].dropna().value_counts().items():
            regimes[r] = regimes.get(r, 0) + int(v)
    print(f"sessions={n_sessions} configs={len(params)} regimes over all configs: {regimes}")
    print(f"one simulate: {one_s:.3f} s; simulate_many over {len(params)} configurations: {many_s:.3f} s "
          f"({1000 * many_s / len(params):.1f} ms per configuration); every log identical to simulate's")
    print(f"RESULT bench=closed_loop configs={len(params)} sessions={n_sessions} ratio={many_s / one_s:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
