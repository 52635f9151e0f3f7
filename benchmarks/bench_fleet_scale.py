"""Benchmark: the driver's memory replaying a Parquet fleet of 500 users and of 2,000 users.

A partitioned Parquet dataset of 2,000 users (``user=u0000/part-0.parquet``
...), 250 sessions of a message and a prediction update each (500 events a
user, 1,000,000 in all), is written once to a temporary directory. The logs
are those of a synthetic preference world like ``bench_fleet.py``'s (one
``PreferenceWorld``'s situations, phrasings and planted preferences; rows
drawn per user with numpy, the world's own session form); its
``LookupEmbedder`` (planted geometry, no model) is pickled beside the
dataset. The 500-user fleet is the glob ``user=u0[0-4]??`` of the same
directory (its first 500 users).

For each size a FRESH driver process (this script with ``--driver``) starts a
``distributed.LocalCluster`` of 2 single-threaded worker processes
(``processes=True``: worker memory is not the driver's; their statistical
profiler off), replays the dataset with ``replay.run_fleet(path,
backend="dask")`` (metrics only, the default for a dataset), checks every
user came back with all its rows, and reports its own peak RSS
(``resource.getrusage(RUSAGE_SELF).ru_maxrss``: the driver process, which
also runs the scheduler, not the workers).

Fair clocks: both sizes run the same steps in the same kind of process:
threads pinned (``_util``, printed), the same cluster start, the same
warm-up (a replay of the 2 first users, so the workers import the replay
code and pay their first calls), then the timed replay through
``_util.best_of`` with the same ``repeat`` (1 by default) and ``warmup=0`` on
both sides: a full warm-up replay would double the run and cannot lower a
peak RSS, which is what this benchmark compares. At full size the two
drivers run one after the other; with ``--ci`` they run at the same time to
stay well under a minute on 2 shared cores (each peak RSS is its own
process's; the CI clocks are a smoke test, not a comparison).

Throughput (issue 33 point 5): after the drivers are done, this process
replays the first users' logs (100 users, 50,000 events at full size) as
ONE in-process ``replay.run`` of their stacked log (each event in its user's
store, as in the fleet): the events a second one replay gets through. The
large fleet's events per second per worker over that is
``throughput_ratio`` (target >= 0.5).

    python benchmarks/bench_fleet_scale.py          # 500 and 2,000 users, 500 events each
    python benchmarks/bench_fleet_scale.py --ci     # 20 and 80 users, 50 events each

Last line: ``RESULT bench=fleet_scale users_small=<n> users_large=<n>
driver_peak_mb_<small>=<MB> driver_peak_mb_<large>=<MB> driver_growth=<large / small>
ratio=<driver_growth> events_per_user=<n> replay_s_small=<s> replay_s_large=<s>
throughput_ratio=<events/s per worker / events/s of one in-process replay> in_process_eps=<events/s>
worker_eps=<events/s per worker>``; the targets are ``driver_growth <= 1.2`` (the script exits 1 when
it is missed) and ``throughput_ratio >= 0.5`` (printed met or NOT met).
"""

from __future__ import annotations

import json
import os
import pickle
import resource
import shutil
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _util  # noqa: E402,I001  (pins threads before numpy starts its pools)

import numpy as np  # noqa: E402

#: Most the driver's peak RSS may grow from the small fleet to the large one.
TARGET_GROWTH = 1.2
#: Worker processes of each driver's LocalCluster (one thread each).
N_WORKERS = 2
_GAP_S = 47 * 60


def _glob_first(n: int) -> str:
    """A glob of the partition directories of users ``u0000`` .. ``u{n-1}`` (n = d * 10**k, d <= 9)."""
    k = len(str(n)) - len(str(n).rstrip("0"))
    d = n // 10**k
    if not (1 <= d <= 9 and k <= 3):
        raise ValueError(f"the small fleet must be d * 10**k users (d <= 9, k <= 3), got {n}")
    return "user=u" + "0" * (3 - k) + (f"[0-{d - 1}]" if d > 1 else "0") + "?" * k


def pair(message, update):
    """Per session its message row then its update row."""
    return np.column_stack([message, update]).ravel()


def write_fleet(root: Path, n_users: int, n_sessions: int, seed: int = 0) -> int:
    """Write ``n_users`` users' logs, ``2 * n_sessions`` rows each; returns the rows written."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from thatchlab.synth import PreferenceWorld

    world = PreferenceWorld(n_users=n_users, n_situations=12, phrasings_per_situation=4, drift_rate=0.0,
                            noise=0.05, seed=seed)
    n_sit, n_phr = world.n_situations, world.phrasings_per_situation
    prompts = np.array([world.prompts[s] for s in range(n_sit)], dtype=object)
    matchers = np.array([world.matchers[s] for s in range(n_sit)], dtype=object)
    options = world.situations[["option_a", "option_b"]].to_numpy(object)
    p_ab = world.preference[["p_a", "p_b"]].to_numpy(np.float64).reshape(n_users, n_sit, 2)
    start = np.datetime64(world.start.tz_convert(None).to_datetime64(), "s")
    kinds = np.tile(np.array(["message", "prediction_update"], dtype=object), n_sessions)
    null = np.full(n_sessions, None, dtype=object)
    for u in range(n_users):
        rng = np.random.default_rng([seed, u])
        s = rng.integers(n_sit, size=n_sessions)
        which = (rng.random(n_sessions) >= 0.5).astype(int)            # option a or b
        p = p_ab[u, s, which]
        p_obs = p * (1 - world.noise) + (1 - p) * world.noise
        create, yes, soft = (rng.random(n_sessions) < q for q in (0.1, p_obs, 0.25))
        signal = np.where(create, "create", np.where(yes, "confirm", np.where(soft, "soft", "disconfirm")))
        t = start + (np.arange(n_sessions) * _GAP_S + rng.integers(0, 600, n_sessions)).astype("timedelta64[s]")
        user = f"u{u:04d}"
        session = np.char.add(f"{user}-s", np.arange(n_sessions).astype(str)).astype(object)
        table = pa.table({
            "ts": pa.array(pair(t, t + np.timedelta64(45, "s")).astype("datetime64[ns]"),
                           pa.timestamp("ns", tz="UTC")),
            "session": pair(session, session),
            "store": np.full(2 * n_sessions, user, dtype=object),
            "kind": kinds,
            "text": pair(prompts[s, rng.integers(n_phr, size=n_sessions)], null),
            "matcher": pair(null, matchers[s, rng.integers(n_phr, size=n_sessions)]),
            "statement": pair(null, options[s, which]),
            "signal": pair(null, signal.astype(object)),
        })
        part = root / f"user={user}"
        part.mkdir(parents=True)
        pq.write_table(table, part / "part-0.parquet")
    with open(root.parent / "embedder.pkl", "wb") as fh:
        pickle.dump(world.lookup_embedder(), fh)
    return n_users * 2 * n_sessions


def drive(source: str, warm: str, embedder_path: str, expect_users: int, rows_per_user: int,
          repeat: int) -> dict:
    """One driver: cluster up, warm-up, the timed replay, checks, own peak RSS."""
    _util.pin_threads()
    import dask
    from distributed import Client, LocalCluster

    from thatchlab.replay import run_fleet

    warnings.simplefilter("ignore", UserWarning)
    with open(embedder_path, "rb") as fh:
        emb = pickle.load(fh)
    with dask.config.set({"distributed.worker.profile.enabled": False}), \
            LocalCluster(n_workers=N_WORKERS, threads_per_worker=1, processes=True, dashboard_address=None,
                         silence_logs=40) as cluster, Client(cluster) as client:
        run_fleet(warm, embedder=emb, backend="dask", client=client)
        before_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        seconds, res = _util.best_of(run_fleet, source, embedder=emb, backend="dask", client=client,
                                     repeat=repeat, warmup=0)
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024   # KiB on Linux
    rows = res.per_user["n_log_rows"]
    ok = (len(res.per_user) == expect_users and bool((rows == rows_per_user).all())
          and res.pooled["n_events"] == expect_users * rows_per_user and res.forecasts.empty)
    return {"users": int(len(res.per_user)), "events": int(res.pooled["n_events"]), "seconds": seconds,
            "workers": N_WORKERS,
            "peak_mb": peak_mb, "peak_before_replay_mb": before_mb, "ok": ok, "log_loss": res.pooled["log_loss"],
            "interruption_rate": res.pooled["interruption_rate"]}


def in_process_rate(root: Path, embedder_path: str, n_users: int) -> tuple:
    """(events, seconds) of one in-process replay of the first ``n_users`` users' logs stacked
    (their rows in time order, each in its user's store), after a warm-up on the first user."""
    import pandas as pd

    from thatchlab.replay import run
    from thatchlab.replay._fleet_dataset import list_users, read_user_log

    _util.pin_threads()
    warnings.simplefilter("ignore", UserWarning)
    with open(embedder_path, "rb") as fh:
        emb = pickle.load(fh)
    listing = list_users(str(root))
    logs = [read_user_log(listing.location, "user", u, f)
            for u, f in list(zip(listing.users, listing.files))[:n_users]]
    log = pd.concat(logs, ignore_index=True).sort_values("ts", kind="stable", ignore_index=True)
    run(logs[0], embedder=emb)
    seconds, _ = _util.best_of(run, log, embedder=emb, repeat=1, warmup=0)
    return len(log), seconds


def _start_driver(source, warm, embedder_path, users, rows_per_user, repeat) -> subprocess.Popen:
    """A fresh driver process (this script with ``--driver``)."""
    cmd = [sys.executable, __file__, "--driver", source, "--warm", warm, "--embedder", embedder_path,
           "--expect", str(users), "--rows", str(rows_per_user), "--repeat", str(repeat)]
    return subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=dict(os.environ, TQDM_DISABLE="1"))


def _driver_report(proc: subprocess.Popen, source: str) -> dict:
    out, err = proc.communicate()
    line = next((x for x in out.splitlines() if x.startswith("DRIVER ")), None)
    if proc.returncode != 0 or line is None:
        raise SystemExit(f"driver for {source} failed ({proc.returncode}):\n{out[-2000:]}\n{err[-3000:]}")
    return json.loads(line.removeprefix("DRIVER "))


def main() -> int:
    args = _util.parse(__doc__.splitlines()[0], driver="", warm="", embedder="", expect=0, rows=0)
    repeat = args.repeat or 1
    if args.driver:
        print("DRIVER " + json.dumps(drive(args.driver, args.warm, args.embedder, args.expect, args.rows,
                                           repeat)))
        return 0
    _util.pin_threads()
    print(_util.describe_threads())
    n_small, n_large, n_sessions = (20, 80, 25) if args.ci else (500, 2_000, 250)
    tmp = Path(tempfile.mkdtemp(prefix="thatchlab-fleet-scale-"))
    try:
        root = tmp / "fleet"
        t0 = time.perf_counter()
        n_rows = write_fleet(root, n_large, n_sessions)
        print(f"dataset: {n_large:,} users x {2 * n_sessions} events = {n_rows:,} rows, "
              f"{sum(f.stat().st_size for f in root.rglob('*.parquet')) / 2**20:.1f} MiB, "
              f"written in {time.perf_counter() - t0:.1f} s", flush=True)
        runs, procs = {}, {}
        t0 = time.perf_counter()

        def report(n):
            source, proc = procs[n]
            r = runs[n] = _driver_report(proc, source)
            print(f"{n:>5} users ({source}): replay {r['seconds']:.1f} s, driver peak RSS "
                  f"{r['peak_mb']:.1f} MB ({r['peak_before_replay_mb']:.1f} MB before the replay), checks {'ok' if r['ok'] else 'FAILED'} "
                  f"(pooled log_loss={r['log_loss']:.4f}; {time.perf_counter() - t0:.1f} s so far)", flush=True)

        for n, source in ((n_small, str(root / _glob_first(n_small))), (n_large, str(root))):
            procs[n] = source, _start_driver(source, str(root / "user=u000[01]"), str(tmp / "embedder.pkl"),
                                             n, 2 * n_sessions, repeat)
            if not args.ci:                     # full size: one driver at a time
                report(n)
        for n in procs if args.ci else ():
            report(n)
        # after the drivers: a driver forked from a parent that replayed in memory would inherit
        # that parent's peak RSS (Linux carries ru_maxrss across fork and exec)
        ref_users = 10 if args.ci else 100
        ref_events, ref_s = in_process_rate(root, str(tmp / "embedder.pkl"), ref_users)
        print(f"one in-process replay of {ref_users} users' stacked logs: {ref_events:,} events in {ref_s:.1f} s "
              f"({ref_events / ref_s:,.0f} events/s)", flush=True)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if not all(r["ok"] for r in runs.values()):
        print("a driver's fleet came back incomplete")
        return 1
    small, large = runs[n_small], runs[n_large]
    growth = large["peak_mb"] / small["peak_mb"]
    met = growth <= TARGET_GROWTH
    print(f"driver growth {n_large} / {n_small} users: {growth:.3f} "
          f"(target <= {TARGET_GROWTH}: {'met' if met else 'NOT met'})")
    in_process_eps = ref_events / ref_s
    worker_eps = large["events"] / large["seconds"] / large["workers"]
    throughput = worker_eps / in_process_eps
    print(f"throughput: {worker_eps:,.0f} events/s per worker ({large['workers']} workers) vs {in_process_eps:,.0f} "
          f"in one in-process replay: {throughput:.3f} (target >= 0.5: {'met' if throughput >= 0.5 else 'NOT met'})")
    print(_util.result("fleet_scale", users_small=n_small, users_large=n_large,
                       **{f"driver_peak_mb_{n_small}": small["peak_mb"], f"driver_peak_mb_{n_large}": large["peak_mb"]},
                       driver_growth=growth, ratio=growth, events_per_user=2 * n_sessions,
                       replay_s_small=small["seconds"], replay_s_large=large["seconds"],
                       throughput_ratio=throughput, in_process_eps=in_process_eps, worker_eps=worker_eps))
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
