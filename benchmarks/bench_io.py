"""Reading a large interaction log: thatchlab's pyarrow reader against ``pandas.read_json(lines=True)``.

A JSONL interaction log of messages and prediction updates (at most 10,000
distinct texts, so a lookup table of random vectors stands in for the
model) is written once. Three child processes then run, each alone so its
peak memory is its own:

* ``read``: :func:`thatchlab.logs.read_interaction_log` (timed), then a
  replay of the log through the prediction engine (handed the log, as
  ``run(read_interaction_log(path))`` is, so the bench holds no copy of its
  own); prints the read time, the peak RSS of the process (read + replay)
  and per-column digests;
* ``baseline``: ``pandas.read_json(path, lines=True)`` (timed) and the same
  digests, which must equal the reader's, else the script exits non-zero;
* ``polars``: ``polars.read_ndjson`` (timed; multi-threaded and without
  validation, the fastest reader a user would pick), the same digests, and
  ``polars_ratio`` = its time over ours beside the issue's ``ratio``.

Each child imports its parsing library (pyarrow, pandas) before the clock starts.

    python benchmarks/bench_io.py          # 1,000,000 rows
    python benchmarks/bench_io.py --ci     # 20,000 rows, seconds
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))

DIM = 32
#: Columns compared between the reader and the baseline.
COMPARED = ("ts", "session", "kind", "text", "matcher", "statement", "signal")


def build(path: Path, lookup: Path, n_rows: int, seed: int = 0) -> None:
    """Write the log (JSONL) and the lookup table (Parquet of text, embedding)."""
    rng = np.random.default_rng(seed)
    n_matchers, n_messages = 1_000, 8_000
    matchers = np.array([f"when working on area {i}" for i in range(n_matchers)], dtype=object)
    statements = np.array([f"prefer approach {i} for area {i}" for i in range(n_matchers)], dtype=object)
    messages = np.array([f"please help me with task {i} in area {i % n_matchers}" for i in range(n_messages)],
                        dtype=object)
    is_update = rng.random(n_rows) < 0.1
    m_idx = rng.integers(0, n_matchers, n_rows)
    ts = (pd.Timestamp("2026-01-01T00:00:00Z") + pd.to_timedelta(np.arange(n_rows) * 7, unit="s"))
    signals = np.array(["confirm", "disconfirm", "soft", "create"], dtype=object)
    log = pd.DataFrame({
        "ts": ts.strftime("%Y-%m-%dT%H:%M:%S.%fZ"),
        "session": [f"s{j // 50:06d}" for j in range(n_rows)],
        "store": None,
        "kind": np.where(is_update, "prediction_update", "message"),
        "text": np.where(is_update, None, messages[rng.integers(0, n_messages, n_rows)]),
        "matcher": np.where(is_update, matchers[m_idx], None),
        "statement": np.where(is_update, statements[m_idx], None),
        "signal": np.where(is_update, signals[rng.integers(0, 4, n_rows)], None),
    })
    log.to_json(path, orient="records", lines=True, force_ascii=False)
    texts = np.concatenate([matchers, statements, messages])
    vecs = rng.normal(size=(len(texts), DIM)).astype(np.float32)
    pd.DataFrame({"text": texts, "embedding": list(vecs)}).to_parquet(lookup, index=False)


def digests(df: pd.DataFrame) -> dict:
    """One number per compared column (times as UTC nanoseconds, nulls as one marker)."""
    out = {}
    for col in COMPARED:
        s = df[col]
        if col == "ts":  # hashed as integers: a million str objects would inflate the reader's peak RSS
            s = pd.Series(pd.to_datetime(s, utc=True, format="ISO8601").astype("int64").to_numpy())
        else:
            s = s.astype(object).where(s.notna(), "\x00null").astype(str)
        out[col] = int(pd.util.hash_pandas_object(s, index=False).sum() % (2 ** 61))
    out["rows"] = len(df)
    return out


def peak_rss_mb() -> float:
    """This process's peak RSS. Linux's ``ru_maxrss`` carries over the RSS of the parent at
    ``fork`` through ``exec`` (the parent holds the million-row frame it wrote), so the peak
    of the process's own memory is read from ``VmHWM`` where there is one."""
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024.0  # kB
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0  # KiB on Linux


def child_read(path: Path, lookup: Path) -> dict:
    import pyarrow.json  # noqa: F401  -- imported before the clock, as pandas is for the baseline

    from thatchlab.embed import LookupEmbedder
    from thatchlab.logs import read_interaction_log, read_table
    from thatchlab.replay import run

    t0 = time.perf_counter()
    logs = [read_interaction_log(path)]
    read_s = time.perf_counter() - t0
    rss_read = peak_rss_mb()
    d = digests(logs[0])
    table = read_table(lookup, columns={"text": "text", "embedding": "numbers"})
    emb = LookupEmbedder(dict(zip(table["text"], table["embedding"])), name="random")
    del table
    t0 = time.perf_counter()
    # handed over as in run(read_interaction_log(path)): the bench keeps no second copy of the log alive
    res = run(logs.pop(), engine="prediction", embedder=emb)
    replay_s = time.perf_counter() - t0
    return {"read_s": read_s, "replay_s": replay_s, "rss_after_read_mb": rss_read, "peak_rss_mb": peak_rss_mb(),
            "n_messages": int(res.metrics["n_messages"]), "digests": d}


def child_baseline(path: Path) -> dict:
    t0 = time.perf_counter()
    df = pd.read_json(path, lines=True, dtype=False, convert_dates=False)
    read_s = time.perf_counter() - t0
    return {"read_s": read_s, "peak_rss_mb": peak_rss_mb(), "digests": digests(df)}


def child_polars(path: Path) -> dict:
    import polars as pl

    t0 = time.perf_counter()
    df = pl.read_ndjson(path, infer_schema_length=None)
    read_s = time.perf_counter() - t0
    return {"read_s": read_s, "peak_rss_mb": peak_rss_mb(), "digests": digests(df.to_pandas())}


def spawn(role: str, *paths) -> dict:
    proc = subprocess.run([sys.executable, __file__, "--child", role, *map(str, paths)],
                          capture_output=True, text=True)
    if proc.returncode != 0:
        print(proc.stdout[-3000:], proc.stderr[-3000:], sep="\n")
        sys.exit(f"the {role} child failed")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ci", action="store_true", help="run the small size CI uses (seconds)")
    ap.add_argument("--rows", type=int, default=None, help="rows of the log (default 1,000,000; 20,000 with --ci)")
    ap.add_argument("--child", nargs="+", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        role, *paths = args.child
        children = {"read": lambda: child_read(Path(paths[0]), Path(paths[1])),
                    "baseline": lambda: child_baseline(Path(paths[0])), "polars": lambda: child_polars(Path(paths[0]))}
        res = children[role]()
        print(json.dumps(res))
        return
    n = args.rows or (20_000 if args.ci else 1_000_000)
    with tempfile.TemporaryDirectory() as tmp:
        path, lookup = Path(tmp) / "interactions.jsonl", Path(tmp) / "lookup.parquet"
        t0 = time.perf_counter()
        build(path, lookup, n)
        print(f"wrote {n} rows ({path.stat().st_size / 1e6:.0f} MB) in {time.perf_counter() - t0:.1f} s")
        ours = spawn("read", path, lookup)
        base = spawn("baseline", path)
        fast = spawn("polars", path)
    same = ours["digests"] == base["digests"] == fast["digests"]
    print(f"thatchlab reader: {ours['read_s']:.2f} s (peak RSS after read {ours['rss_after_read_mb']:.0f} MB); "
          f"replay {ours['replay_s']:.1f} s; read + replay peak RSS {ours['peak_rss_mb']:.0f} MB; "
          f"messages {ours['n_messages']}")
    print(f"pandas.read_json(lines=True): {base['read_s']:.2f} s (peak RSS {base['peak_rss_mb']:.0f} MB); "
          f"columns {', '.join(COMPARED)} equal: {same}")
    print(f"polars.read_ndjson (multi-threaded, no validation): {fast['read_s']:.2f} s "
          f"(peak RSS {fast['peak_rss_mb']:.0f} MB); thatchlab is {fast['read_s'] / ours['read_s']:.2f}x its speed")
    if not same:
        print(f"MISMATCH: {ours['digests']} != {base['digests']} / {fast['digests']}")
        sys.exit(1)
    print(f"RESULT bench=io rows={n} read_s={ours['read_s']:.3f} peak_rss_mb={ours['peak_rss_mb']:.0f} "
          f"ratio={base['read_s'] / ours['read_s']:.2f} polars_ratio={fast['read_s'] / ours['read_s']:.2f}")


if __name__ == "__main__":
    main()
