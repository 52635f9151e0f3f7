"""Reading a large interaction log: thatchlab's reader against polars reading it with the log's schema.

A JSONL interaction log of messages and prediction updates (at most 10,000
distinct texts, so a lookup table of random vectors stands in for the
model) is written once. Two child processes then run, each a fresh Python:

* ``clock`` times, in one process, every side reading the same file into
  the same pandas frame:

  - **ours**: :func:`thatchlab.logs.read_interaction_log` -- parse, every
    validation rule, the typed frame, sorted by ``ts``;
  - **polars** (the peer): ``polars.read_ndjson(path, schema=...)`` with the
    interaction log's explicit schema (its 13 columns and their types),
    ``ts`` parsed to ``Datetime("ns", "UTC")``, ``.sort("ts",
    maintain_order=True)`` (our stable order), ``.to_pandas()`` and
    ``relevant`` as pandas ``boolean`` (list cells as lists): the frame and
    dtypes we return, without validation;
  - **pandas** (with ``--ci`` or ``--pandas``; too slow to repeat at a
    million rows): ``pandas.read_json(lines=True)`` and the same conversions.

  Each peer's frame must equal ours (``pandas.testing.assert_frame_equal``:
  values, dtypes, column order, index), else the script exits non-zero.
* ``memory``: one ``read_interaction_log`` and the replay of the log through
  the prediction engine (handed the log, as ``run(read_interaction_log(path))``
  is), in a process of its own so that its peak RSS is read plus replay
  alone: ``VmHWM`` from ``/proc/self/status`` (Linux's ``ru_maxrss`` would
  carry over the parent's RSS at ``fork``), ``ru_maxrss`` elsewhere.

Fair clocks: ``_util`` is imported before numpy, pyarrow and polars, so
every pool (BLAS, pyarrow, polars) has ``THATCHLAB_BENCH_THREADS`` threads
(default 1; printed); each side is imported before the clock starts, warmed
once and timed best of ``--repeat`` runs (default 5; the same N for every side), and
starts from the same file on disk, its conversions inside its timed region.

RESULT keys: ``read_s`` (ours, wall, best of N), ``polars_s``,
``polars_ratio`` = polars seconds / our seconds (above 1: we are faster),
``polars_cpu_ratio`` = the same in CPU seconds of the process (every thread;
steadier than the wall clock on a shared machine), ``ratio`` = the same
number as ``polars_ratio`` (the issue's headline), ``peak_rss_mb`` (read +
replay), and, when pandas runs, ``pandas_ratio`` = its seconds / ours.

    python benchmarks/bench_io.py          # 1,000,000 rows
    python benchmarks/bench_io.py --ci     # 20,000 rows, seconds
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _util  # noqa: E402, I001  -- before numpy, pyarrow and polars: it pins their threads

import argparse  # noqa: E402
import json  # noqa: E402
import resource  # noqa: E402
import subprocess  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

DIM = 32
TEXTS = ("session", "store", "kind", "text", "matcher", "statement", "signal", "rationale")


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


def polars_schema():
    """The interaction log's explicit schema for ``polars.read_ndjson`` (``ts`` as text, parsed after)."""
    import polars as pl

    from thatchlab.logs import INTERACTION_COLUMNS

    types = {**{c: pl.String for c in ("ts", *TEXTS)}, "relevant": pl.Boolean, "propensity": pl.Float64,
             "surfaced": pl.List(pl.String), "embedding": pl.List(pl.Float32)}
    return {c: types[c] for c in INTERACTION_COLUMNS}


def _lists(s: pd.Series) -> pd.Series:
    """List cells (arrays after ``to_pandas``) as Python lists, as we return ``surfaced``."""
    has = s.notna().to_numpy()
    if has.any():
        s = s.copy()
        s[has] = [list(v) for v in s[has]]
    return s


def read_polars(path, schema):
    """The peer: polars' reader with the log's schema, then our order and our frame's dtypes."""
    import polars as pl

    df = pl.read_ndjson(path, schema=schema)
    df = df.with_columns(pl.col("ts").str.to_datetime(time_unit="ns", time_zone="UTC"))
    out = df.sort("ts", maintain_order=True).to_pandas()
    for c in TEXTS:  # pandas 3 makes text str (missing as NaN): ours is object with None, as on pandas 2
        if c in out.columns and out[c].dtype != object:
            out[c] = out[c].astype(object).where(out[c].notna(), None)
    out["relevant"] = out["relevant"].astype("boolean")
    out["surfaced"] = _lists(out["surfaced"])
    return out


def read_pandas(path):
    """The secondary reference: ``pandas.read_json(lines=True)``, then our columns, order and dtypes."""
    from thatchlab.logs import INTERACTION_COLUMNS

    df = pd.read_json(path, lines=True, dtype=False, convert_dates=False)
    df["ts"] = pd.to_datetime(df["ts"], utc=True, format="ISO8601").dt.as_unit("ns")
    df = df.sort_values("ts", kind="stable").reset_index(drop=True)
    out = {}
    for c in INTERACTION_COLUMNS:
        s = df[c] if c in df.columns else pd.Series(None, index=df.index, dtype=object)
        if c in TEXTS or c in ("surfaced", "embedding"):
            s = s.astype(object).where(s.notna(), None)
        out[c] = s
    out = pd.DataFrame(out)
    out["relevant"] = out["relevant"].astype("boolean")
    out["propensity"] = out["propensity"].astype("float64")
    out["surfaced"] = _lists(out["surfaced"])
    out["embedding"] = out["embedding"].map(lambda v: None if v is None else np.asarray(v, dtype=np.float32))
    return out


def same(name: str, peer: pd.DataFrame, ours: pd.DataFrame) -> bool:
    try:
        pd.testing.assert_frame_equal(peer, ours, check_exact=True)
    except AssertionError as exc:
        print(f"MISMATCH {name}: {exc}")
        return False
    return True


def child_clock(path: Path, repeat: int, with_pandas: bool) -> dict:
    import polars  # noqa: F401  -- each side's library imported before the clock
    import pyarrow.json  # noqa: F401

    from thatchlab.logs import read_interaction_log

    schema = polars_schema()
    cpu = {"ours": [], "polars": []}
    read_s, ours = _util.best_of(cpu_timed(read_interaction_log, cpu["ours"]), path, repeat=repeat)
    polars_s, peer = _util.best_of(cpu_timed(read_polars, cpu["polars"]), path, schema, repeat=repeat)
    out = {"read_s": read_s, "polars_s": polars_s, "rows": len(ours), "equal": same("polars", peer, ours),
           "threads": _util.describe_threads(), **{f"{k}_cpu_s": min(v[1:]) for k, v in cpu.items()}}
    del peer
    if with_pandas:
        out["pandas_s"], ref = _util.best_of(read_pandas, path, repeat=repeat)
        out["equal"] = same("pandas", ref, ours) and out["equal"]
    return out


def cpu_timed(fn, seconds: list):
    """``fn``, appending the CPU seconds of each call (every thread of the process) to ``seconds``:
    on a shared machine the wall clock also counts the time a side waited for a core."""
    def timed_fn(*args):
        t0 = time.process_time()
        out = fn(*args)
        seconds.append(time.process_time() - t0)
        return out
    return timed_fn


def peak_rss_mb() -> float:
    """This process's peak RSS: ``VmHWM`` where there is one (``ru_maxrss`` would carry over the RSS
    the parent had at ``fork``: it holds the million-row frame it wrote)."""
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024.0  # kB
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0  # KiB on Linux


def child_memory(path: Path, lookup: Path) -> dict:
    from thatchlab.embed import LookupEmbedder
    from thatchlab.logs import read_interaction_log, read_table
    from thatchlab.replay import run

    t0 = time.perf_counter()
    logs = [read_interaction_log(path)]
    once_s = time.perf_counter() - t0
    rss_read = peak_rss_mb()
    table = read_table(lookup, columns={"text": "text", "embedding": "numbers"})
    emb = LookupEmbedder(dict(zip(table["text"], table["embedding"])), name="random")
    del table
    t0 = time.perf_counter()
    # handed over as in run(read_interaction_log(path)): the bench keeps no second copy of the log alive
    res = run(logs.pop(), engine="prediction", embedder=emb)
    return {"once_s": once_s, "replay_s": time.perf_counter() - t0, "rss_after_read_mb": rss_read,
            "peak_rss_mb": peak_rss_mb(), "n_messages": int(res.metrics["n_messages"])}


def spawn(*args) -> dict:
    proc = subprocess.run([sys.executable, __file__, "--child", *map(str, args)], capture_output=True, text=True)
    if proc.returncode != 0:
        print(proc.stdout[-3000:], proc.stderr[-3000:], sep="\n")
        sys.exit(f"the {args[0]} child failed")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ci", action="store_true", help="run the small size CI uses (seconds)")
    ap.add_argument("--rows", type=int, default=None, help="rows of the log (default 1,000,000; 20,000 with --ci)")
    ap.add_argument("--repeat", type=int, default=5, help="timed runs per side, best kept (same N every side)")
    ap.add_argument("--pandas", action="store_true", help="time pandas.read_json too (always with --ci)")
    ap.add_argument("--child", nargs="+", help=argparse.SUPPRESS)
    args = ap.parse_args()
    _util.pin_threads()
    if args.child:
        role, *rest = args.child
        if role == "clock":
            res = child_clock(Path(rest[0]), int(rest[1]), rest[2] == "1")
        else:
            res = child_memory(Path(rest[0]), Path(rest[1]))
        print(json.dumps(res))
        return
    n = args.rows or (20_000 if args.ci else 1_000_000)
    with_pandas = args.ci or args.pandas
    with tempfile.TemporaryDirectory() as tmp:
        path, lookup = Path(tmp) / "interactions.jsonl", Path(tmp) / "lookup.parquet"
        t0 = time.perf_counter()
        build(path, lookup, n)
        print(f"wrote {n} rows ({path.stat().st_size / 1e6:.0f} MB) in {time.perf_counter() - t0:.1f} s")
        clock = spawn("clock", path, args.repeat, int(with_pandas))
        print(f"clock child: {clock['threads']}")
        mem = spawn("memory", path, lookup)
    ratio = clock["polars_s"] / clock["read_s"]
    print(f"thatchlab read_interaction_log: {clock['read_s']:.3f} s (best of {args.repeat}; parse, validation, "
          f"typed frame, sorted)")
    print(f"polars read_ndjson(schema=) + sort + to_pandas: {clock['polars_s']:.3f} s; polars/ours {ratio:.2f}")
    cpu_ratio = clock["polars_cpu_s"] / clock["ours_cpu_s"]
    print(f"CPU seconds (best of {args.repeat}): ours {clock['ours_cpu_s']:.3f}, polars {clock['polars_cpu_s']:.3f}; "
          f"polars/ours {cpu_ratio:.2f}")
    fields = {"rows": n, "read_s": clock["read_s"], "polars_s": clock["polars_s"], "polars_ratio": ratio,
              "polars_cpu_ratio": cpu_ratio}
    if with_pandas:
        fields["pandas_ratio"] = clock["pandas_s"] / clock["read_s"]
        print(f"pandas read_json(lines=True) + the same conversions: {clock['pandas_s']:.3f} s; "
              f"pandas/ours {fields['pandas_ratio']:.2f}")
    else:
        print("pandas read_json: not timed at this size (--pandas to time it)")
    print(f"frames equal to ours: {clock['equal']}")
    print(f"memory child: one read {mem['once_s']:.2f} s (peak RSS after it {mem['rss_after_read_mb']:.0f} MB), "
          f"replay {mem['replay_s']:.1f} s of {mem['n_messages']} messages; read + replay peak RSS "
          f"{mem['peak_rss_mb']:.0f} MB")
    if not clock["equal"] or clock["rows"] != n:
        sys.exit("a peer's frame differs from ours")
    fields.update(peak_rss_mb=mem["peak_rss_mb"], ratio=ratio)
    print(_util.result("io", **fields))


if __name__ == "__main__":
    main()
