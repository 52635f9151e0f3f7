"""Benchmark: 100 closed-loop simulations in lockstep against one simulation.

A preference world (5 users, 12 situations, 4 phrasings each, drift and
answer noise; a ``LookupEmbedder`` with planted geometry, so no model) is
simulated closed loop — each configuration's simulated user answers that
configuration's own nudges — under 100 configurations (threshold × K × P0 ×
strong-evidence grid) by one ``synth.simulate_many`` call. The baseline,
measured in the same run, is one ``synth.simulate`` of the same world under
one configuration. Fair clocks: threads pinned the same for both sides
(``_util``, printed); both sides warmed once on 5 sessions, then timed best
of ``--repeat`` (the same N, default 3). Every configuration's log must equal
``simulate``'s for that configuration frame for frame (exit 1 otherwise);
those reference runs are not timed.

    python benchmarks/bench_closed_loop.py          # 400 sessions
    python benchmarks/bench_closed_loop.py --ci     # 40 sessions

Last line: ``RESULT bench=closed_loop configs=100 sessions=<n> ratio=<many_s / one_s>``.
"""

from __future__ import annotations

import itertools
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _util  # noqa: E402,I001  (pins threads before numpy starts its pools)

import pandas as pd

from thatchlab.core.params import ScoringParams
from thatchlab.synth import PreferenceWorld, simulate, simulate_many


def configs() -> list:
    grid = itertools.product([0.45, 0.55, 0.6, 0.7, 0.8], [1.0, 2.0, 5.0, 10.0, 20.0], [0.4, 0.6],
                             [2, 3])
    return [ScoringParams(threshold=t, k=k, p0=p0, strong_evidence=e) for t, k, p0, e in grid]


def main(argv=None) -> int:
    args = _util.parse(__doc__.splitlines()[0])
    _util.pin_threads()
    print(_util.describe_threads())
    repeat = args.repeat or 3
    n_sessions = 40 if args.ci else 400
    world = PreferenceWorld(n_users=5, n_situations=12, phrasings_per_situation=4, drift_rate=0.01,
                            noise=0.05, seed=3)
    emb = world.lookup_embedder()
    params = configs()
    simulate(world, params[0], n_sessions=5, seed=1, embedder=emb)       # warm both the same way
    simulate_many(world, params, n_sessions=5, seed=1, embedder=emb)

    one_s, _ = _util.best_of(simulate, world, params[len(params) // 2], n_sessions=n_sessions, seed=1,
                             embedder=emb, repeat=repeat, warmup=0)
    many_s, logs = _util.best_of(simulate_many, world, params, n_sessions=n_sessions, seed=1, embedder=emb,
                                 repeat=repeat, warmup=0)

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
          f"({1000 * many_s / len(params):.1f} ms per configuration), best of {repeat} each; "
          "every log identical to simulate's")
    print(_util.result("closed_loop", configs=len(params), sessions=n_sessions, ratio=many_s / one_s))
    return 0


if __name__ == "__main__":
    sys.exit(main())
