"""Shared helpers of the benchmark scripts: fair clocks, argument parsing, RESULT lines.

Fair clocks, the same for every benchmark and for both sides of each:

* **Threads are pinned before any pool starts.** Importing this module sets
  ``OMP_NUM_THREADS``, ``OPENBLAS_NUM_THREADS``, ``MKL_NUM_THREADS`` and
  ``POLARS_MAX_THREADS`` to ``THATCHLAB_BENCH_THREADS`` (default 1) unless
  they are already set, so it must be imported before numpy, polars or
  DuckDB. :func:`pin_threads` then limits BLAS and OpenMP with threadpoolctl
  and :func:`duckdb_connect` opens DuckDB with the same count; the counts in
  force are printed (:func:`describe_threads`).
* **Both sides are warmed the same way and timed best-of-N with the same N**
  (:func:`best_of`).
* **RESULT values are plain decimals** (``%.3f``; :func:`result` refuses
  ``inf``, ``nan`` and never prints exponents).
"""

from __future__ import annotations

import argparse
import math
import os
import time

THREADS = int(os.environ.get("THATCHLAB_BENCH_THREADS", "1"))
for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "POLARS_MAX_THREADS"):
    os.environ.setdefault(_var, str(THREADS))

_LIMITER = None


def pin_threads(threads: int = THREADS):
    """Limit BLAS and OpenMP pools to ``threads`` for the rest of the process; returns the limiter."""
    global _LIMITER
    from threadpoolctl import threadpool_limits

    _LIMITER = threadpool_limits(limits=threads)
    return _LIMITER


def duckdb_connect(threads: int = THREADS):
    """A DuckDB in-memory connection whose pool has ``threads`` threads."""
    import duckdb

    con = duckdb.connect()
    con.execute(f"SET threads = {int(threads)}")
    return con


def describe_threads(con=None) -> str:
    """One line naming the thread counts in force (BLAS/OpenMP, polars, DuckDB), printed by each benchmark."""
    from threadpoolctl import threadpool_info

    pools = sorted({f"{p['user_api']}={p['num_threads']}" for p in threadpool_info()})
    parts = [f"threads pinned: {THREADS}"] + pools
    try:
        import polars

        parts.append(f"polars={polars.thread_pool_size()}")
    except ImportError:  # pragma: no cover - polars is a dev dependency
        pass
    if con is not None:
        (threads,), = con.execute("SELECT current_setting('threads')").fetchall()  # no result left open
        parts.append(f"duckdb={threads}")
    return ", ".join(parts)


def parse(description: str, **extra):
    """Parse ``--ci`` (and ``--repeat``); ``extra`` maps further option names to their defaults."""
    ap = argparse.ArgumentParser(description=description)
    ap.add_argument("--ci", action="store_true", help="run the small size CI uses (seconds)")
    ap.add_argument("--repeat", type=int, default=None, help="timed runs per side (best kept; same N both sides)")
    for name, default in extra.items():
        ap.add_argument(f"--{name.replace('_', '-')}", type=type(default) if default is not None else int,
                        default=default)
    return ap.parse_args()


def best_of(fn, *args, repeat: int = 3, warmup: int = 1, **kw):
    """Best wall time of ``repeat`` runs after ``warmup`` untimed runs, and the last result.

    Every side of a benchmark is timed through this with the same
    ``repeat`` and ``warmup``, so caches, imports and JIT work are paid the
    same way on both sides.
    """
    out = None
    for _ in range(warmup):
        out = fn(*args, **kw)
    best = float("inf")
    for _ in range(max(1, repeat)):
        t0 = time.perf_counter()
        out = fn(*args, **kw)
        best = min(best, time.perf_counter() - t0)
    return best, out


def timed(fn, *args, repeat: int = 1, **kw):
    """Best wall time of ``repeat`` runs (no warm-up) and the last result."""
    return best_of(fn, *args, repeat=repeat, warmup=0, **kw)


def number(x) -> str:
    """``x`` as a plain decimal with three places; refuses ``inf`` and ``nan``."""
    x = float(x)
    if not math.isfinite(x):
        raise ValueError(f"a RESULT value must be finite, got {x}")
    return f"{x:.3f}"


def result(bench: str, **fields) -> str:
    """The ``RESULT bench=<name> k=v ...`` line: ints as ints, other numbers through :func:`number`."""
    parts = [f"RESULT bench={bench}"]
    for key, value in fields.items():
        if isinstance(value, bool) or isinstance(value, str):
            parts.append(f"{key}={value}")
        elif isinstance(value, int):
            parts.append(f"{key}={value}")
        else:
            parts.append(f"{key}={number(value)}")
    return " ".join(parts)


def arrow_backed(df):
    """``df`` as ``read_parquet(dtype_backend="pyarrow")`` or pandas 3 would hold it: text columns
    (only ``str`` or missing cells) as ``string[pyarrow]``, aware times as Arrow timestamps, the rest
    as they are. ``arrow_ratio`` = our time on ``df`` / our time on this frame (target >= 0.8)."""
    import pandas as pd
    import pyarrow as pa

    out = df.copy()
    for col in df.columns:
        s = df[col]
        if isinstance(s.dtype, pd.DatetimeTZDtype):
            out[col] = s.astype(pd.ArrowDtype(pa.timestamp(s.dtype.unit, tz=str(s.dtype.tz))))
        elif s.dtype == object and pd.api.types.infer_dtype(s, skipna=True) in ("string", "empty"):
            out[col] = s.astype("string[pyarrow]")
    return out


def arrow_run(fn, log, want, *args, repeat: int, warmup: int = 1, **kw):
    """Best time of ``fn(arrow_backed(log), *args, **kw)`` (timed as :func:`best_of` does), or None
    with the difference printed when its frame is not ``want``."""
    import pandas as pd

    seconds, got = best_of(fn, arrow_backed(log), *args, repeat=repeat, warmup=warmup, **kw)
    try:
        pd.testing.assert_frame_equal(got, want)
    except AssertionError as exc:
        print(f"MISMATCH: the run on the Arrow-backed log differs: {exc}")
        return None
    return seconds
