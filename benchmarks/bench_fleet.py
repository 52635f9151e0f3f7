"""Benchmark: replays of 1,000 users' logs on a local Dask cluster against one process.

A synthetic preference world with 1,000 users (a ``LookupEmbedder`` with
planted geometry, so no model) writes an open-loop log; each user's rows are
that user's log, replayed against that user's own (empty) store by
``replay.run_fleet``. Two runs of the same fleet in the same run:

* **sequential**: ``run_fleet(..., backend="loky", n_jobs=1)``, one user after
  another in this process;
* **dask**: ``run_fleet(..., backend="dask", client=...)`` on a
  ``distributed.LocalCluster`` of 2 single-threaded worker processes, their
  statistical profiler off (the cluster is started before the clock starts).

Fair clocks: threads are pinned the same for both sides (``_util``, printed),
and both sides are timed by ``_util.best_of`` with the same ``repeat`` and
one untimed warm-up run of the whole fleet each, so both pay their imports
and first-call costs outside the clock: the sequential side in this process,
the Dask side in its worker processes (before, the sequential side ran cold
against workers that had imported the replay code before the clock). The
default ``repeat`` is 1 (a full-size run replays 50,000 events; ``--ci``
must stay well under a minute on 2 shared cores); ``--repeat N`` sets it
for both sides.

The per-user metrics, pooled metrics, forecasts and signal frames must be
identical (exit 1 otherwise); a population prior is fitted from the pooled
signals. On this 2-core machine the best possible ratio is about 2.

    python benchmarks/bench_fleet.py          # 1,000 users
    python benchmarks/bench_fleet.py --ci     # 20 users

Last line: ``RESULT bench=fleet users=<n> events=<rows> ratio=<sequential_s / dask_s> repeat=<n>``.
"""

from __future__ import annotations

import math
import sys
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _util  # noqa: E402,I001  (pins threads before numpy starts its pools)

import pandas as pd  # noqa: E402

from thatchlab.replay import run_fleet  # noqa: E402
from thatchlab.synth import PreferenceWorld  # noqa: E402
from thatchlab.fit import PriorFitter  # noqa: E402


def make_fleet(n_users: int, sessions_per_user: int = 25, seed: int = 0):
    world = PreferenceWorld(n_users=n_users, n_situations=12, phrasings_per_situation=4, drift_rate=0.01,
                            noise=0.05, seed=seed)
    log = world.log(n_users * sessions_per_user)
    logs = {store: part.reset_index(drop=True) for store, part in log.groupby("store", sort=True)}
    return logs, world.lookup_embedder(), len(log)


def same(a, b) -> bool:
    try:
        pd.testing.assert_frame_equal(a.per_user, b.per_user)
        pd.testing.assert_frame_equal(a.signals, b.signals)
        pd.testing.assert_frame_equal(a.forecasts, b.forecasts)
    except AssertionError as exc:
        print(f"MISMATCH: {exc}")
        return False
    for k, v in a.pooled.items():
        w = b.pooled.get(k)
        if not (v == w or (isinstance(v, float) and math.isnan(v) and math.isnan(w))):
            print(f"MISMATCH pooled {k}: {v!r} vs {w!r}")
            return False
    return True


def main() -> int:
    args = _util.parse(__doc__.splitlines()[0])
    _util.pin_threads()
    print(_util.describe_threads())
    n_users = 20 if args.ci else 1_000
    repeat = args.repeat or 1
    logs, emb, n_rows = make_fleet(n_users)
    print(f"users={len(logs)} log rows={n_rows:,}; each side: 1 warm-up run, best of {repeat}")
    warnings.simplefilter("ignore", UserWarning)

    seq_s, seq = _util.best_of(run_fleet, logs, embedder=emb, backend="loky", n_jobs=1,
                               repeat=repeat, warmup=1)

    import dask
    from distributed import Client, LocalCluster

    # the workers' statistical profiler samples every task's stack; on 2 shared cores it costs
    # a visible share of each ~50 ms replay, so this benchmark turns it off
    with dask.config.set({"distributed.worker.profile.enabled": False}), \
            LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                         silence_logs=40) as cluster, Client(cluster) as client:
        dask_s, remote = _util.best_of(run_fleet, logs, embedder=emb, backend="dask", client=client,
                                       repeat=repeat, warmup=1)
    if not same(seq, remote):
        return 1
    fit = PriorFitter().fit(remote.signals)
    p = remote.pooled
    print(f"pooled: events={p['n_events']:,} forecasts={p['n_forecasts']:,} log_loss={p['log_loss']:.4f} "
          f"interruption_rate={p['interruption_rate']:.3f}; population prior K={fit.k_:.3g} P0={fit.p0_:.3f} "
          f"({fit.objective_})")
    print(f"sequential: {seq_s:.2f} s; dask (2 workers): {dask_s:.2f} s (best of {repeat}, both warmed); "
          "results identical")
    print(_util.result("fleet", users=len(logs), events=n_rows, ratio=seq_s / dask_s, repeat=repeat))
    return 0


if __name__ == "__main__":
    sys.exit(main())
