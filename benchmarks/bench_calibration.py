"""Benchmark: calibrate_from_shadow against DuckDB's MEDIAN, polars and pandas on one frame.

Random shadow observations (no model; 1,000,000 at full size) are
aggregated into the calibration report four ways in the same run, every
side starting from the same in-memory pandas DataFrame:

* **ours**: ``thatchlab.calibration.calibrate_from_shadow``;
* **DuckDB**: the query a DuckDB user writes, over the frame registered as a
  view (registration and DuckDB's scan of the pandas columns timed): window
  filter, then per (namespace, source) ``COUNT(*)``, ``MEDIAN``, ``AVG``, ten
  ``COUNT(*) FILTER`` buckets and the consumption utility;
* **polars**: ``pl.from_pandas`` of the five columns the report reads
  (conversion timed), ``filter`` on the window, ``group_by(["namespace",
  "source"]).agg(len, median, mean, ten bucket counts, utility)``, sorted;
* **pandas**: what a pandas user writes: filter, ``groupby`` for count,
  median and mean, a second ``groupby`` with the bucket, two sums for the
  utility (for reference).

Peers on their own input (issue 33): the same query also runs on each
peer's native form of the data, made before the clock starts, as its users
would hold it: **polars** on a polars DataFrame that ``pl.read_parquet``
read from a Parquet file of the observations, and **DuckDB** on its own
table (``CREATE TABLE ... AS`` from that Parquet file). Ours runs on the
pandas frame (its native input: text in pandas' default dtype, ``str`` on
pandas 3, ``object`` on pandas 2) and, for ``arrow_ratio``, on the same data
with ``object`` text columns (each distinct string one shared object, as a
frame built from Python lists holds it) and Arrow-backed (``string[pyarrow]``
text, Arrow timestamps and floats, as ``read_parquet(dtype_backend="pyarrow")``
gives it): ``arrow_ratio`` is the object frame's time over the Arrow frame's,
whatever the pandas version. ``dictionary_ratio`` is the same with the key and
outcome text as Arrow dictionaries (Arrow's categorical, as polars'
``Categorical`` reaches pandas through ``to_pandas(use_pyarrow_extension_array=True)``).

Rows must agree with ours (counts, buckets and utilities exactly; means to
1e-12 relative, since the engines sum in different orders; medians exactly
against pandas and to 1e-12 relative against DuckDB and polars, which
interpolate ``lo + (hi − lo)/2``) or the script exits non-zero.

Fair clocks (``benchmarks/_util.py``): one thread everywhere (BLAS/OpenMP
pinned, ``POLARS_MAX_THREADS=1``, DuckDB ``SET threads = 1``; the counts in
force are printed); each side is timed with ``_util.best_of`` with the same
``--repeat`` and one warm-up, in ``--rounds`` interleaved rounds (ours,
DuckDB, polars, pandas, again), keeping each side's best, so a noisy spell on
the shared machine hits every side alike.

The object frame's text cells share their string objects, as in a frame
pandas builds from Arrow, Parquet or polars (``to_pandas`` deduplicates
objects), from a CSV file, or by indexing a few labels; ours hashes each
distinct object once. A frame with a fresh string object in every cell (rows
fetched one by one, e.g. from ``sqlite3``) is hashed value by value, and is
slower for us: the run also times ours and DuckDB on such a copy and prints
``distinct_duckdb_ratio`` (DuckDB / ours there) so the weakness is on the
record.

Usage: ``python benchmarks/bench_calibration.py [--ci] [--rows N] [--repeat N] [--rounds N]``

Last line: ``RESULT bench=calibration rows=<n> ratio=<min(duckdb_s, polars_s) / ours_s>
duckdb_ratio=<duckdb_s / ours_s> polars_ratio=<polars_s / ours_s> pandas_ratio=<pandas_s / ours_s>
distinct_duckdb_ratio=<the same on fresh string objects> native_polars_ratio=<polars on its own frame /
ours> native_duckdb_ratio=<DuckDB on its own table / ours> native_ratio=<the faster native peer / ours;
target >= 1.0> arrow_ratio=<ours on the object frame / ours on the Arrow-backed frame; target >= 0.8>
dictionary_ratio=<ours on the object frame / ours with Arrow dictionary text>``.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _util  # noqa: E402  (before numpy, polars and DuckDB: it pins their threads)
import duckdb  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import polars as pl  # noqa: E402

from thatchlab.calibration import calibrate_from_shadow  # noqa: E402

COLUMNS = ["namespace", "source", "observed_at", "derived_confidence", "recall_outcome"]
SQL = """
SELECT namespace, source, COUNT(*), MEDIAN(v), AVG(v),
       COUNT(*) FILTER (b = 0), COUNT(*) FILTER (b = 1), COUNT(*) FILTER (b = 2),
       COUNT(*) FILTER (b = 3), COUNT(*) FILTER (b = 4), COUNT(*) FILTER (b = 5),
       COUNT(*) FILTER (b = 6), COUNT(*) FILTER (b = 7), COUNT(*) FILTER (b = 8),
       COUNT(*) FILTER (b = 9),
       COUNT(*) FILTER (o = 'consumed') / NULLIF(COUNT(o), 0)
FROM (SELECT namespace, source, derived_confidence AS v, recall_outcome AS o,
             LEAST(CAST(FLOOR(GREATEST(LEAST(derived_confidence, 1.0), 0.0) * 10) AS INTEGER), 9) AS b
      FROM obs WHERE observed_at >= $cutoff)
GROUP BY namespace, source ORDER BY namespace, source
"""


def make_observations(n: int, seed: int = 0, text_dtype=None):
    """``n`` shadow observations over 60 days before ``now`` (24 namespaces × 5 sources), and ``now``.

    Text columns get pandas' default dtype for an object array of strings (``str`` on pandas 3,
    ``object`` on pandas 2), or ``text_dtype`` when given (``object``: the same string objects
    shared across rows, as a frame built from Python lists holds them)."""
    rng = np.random.default_rng(seed)
    now = pd.Timestamp("2026-06-01T00:00:00Z")
    namespaces = np.array([f"ns-{i:02d}" for i in range(24)], dtype=object)
    sources = np.array(["user", "assistant", "api", "system", "tool"], dtype=object)
    seconds = rng.integers(0, 60 * 86_400, n)
    outcome = np.array([None, "consumed", "unconsumed"], dtype=object)[rng.choice(3, n, p=[0.5, 0.3, 0.2])]
    ns_idx = rng.integers(0, len(namespaces), n)
    outcome[ns_idx == 0] = None  # one namespace never judged: utility None
    cols = {
        "memory_id": np.char.add("m", rng.integers(0, n // 4 + 1, n).astype(str)).astype(object),
        "namespace": namespaces[ns_idx],
        "source": sources[rng.integers(0, len(sources), n)],
        "observed_at": (now - pd.to_timedelta(seconds, unit="s")).as_unit("ns"),
        "derived_confidence": np.round(rng.beta(4, 3, n), 6),
        "recall_outcome": outcome,
    }
    if text_dtype is not None:
        cols = {k: pd.Series(v, dtype=text_dtype) if getattr(getattr(v, "dtype", None), "kind", "") == "O" else v
                for k, v in cols.items()}
    return pd.DataFrame(cols), now


def pandas_report(obs: pd.DataFrame, cutoff) -> list:
    """The report as a pandas user writes it: ``(ns, src, count, median, mean, buckets, util)`` rows."""
    w = obs[obs["observed_at"] >= cutoff]
    keys = [w["namespace"], w["source"]]
    v = w["derived_confidence"]
    g = v.groupby(keys, sort=True)
    out = pd.DataFrame({"count": g.size(), "median": g.median(), "mean": g.mean()})
    bucket = np.minimum((v.clip(0.0, 1.0) * 10).astype(np.int64), 9)
    hist = v.groupby(keys + [bucket]).size().unstack(fill_value=0).reindex(columns=range(10), fill_value=0)
    outcome = w["recall_outcome"]
    judged = outcome.notna().groupby(keys).sum()
    consumed = (outcome == "consumed").groupby(keys).sum()
    out["buckets"] = hist.to_numpy().tolist()
    out["util"] = (consumed / judged).where(judged > 0)
    out = out.reset_index(names=["namespace", "source"])
    return [tuple(r) for r in out[["namespace", "source", "count", "median", "mean", "buckets", "util"]]
            .itertuples(index=False)]


def duckdb_report(con, obs: pd.DataFrame, cutoff) -> list:
    """DuckDB's ``MEDIAN`` query over the frame registered as ``obs`` (registration included)."""
    con.register("obs", obs)
    try:
        rows = con.execute(SQL, {"cutoff": cutoff.to_pydatetime()}).fetchall()
    finally:
        con.unregister("obs")
    return [(r[0], r[1], r[2], r[3], r[4], list(r[5:15]), r[15]) for r in rows]


def polars_report(obs: pd.DataFrame, cutoff) -> list:
    """polars from the pandas frame: convert (inside the clock), then the same query as on its own frame."""
    return polars_native(pl.from_pandas(obs[COLUMNS]), cutoff)


def arrow_frame(obs: pd.DataFrame) -> pd.DataFrame:
    """The observations as ``read_parquet(dtype_backend="pyarrow")`` holds them: every column Arrow-backed."""
    import pyarrow as pa

    out = pd.DataFrame({c: obs[c].astype("string[pyarrow]") for c in ("memory_id", "namespace", "source",
                                                                         "recall_outcome")})
    out["observed_at"] = obs["observed_at"].astype(pd.ArrowDtype(pa.timestamp("ns", tz="UTC")))
    out["derived_confidence"] = obs["derived_confidence"].astype(pd.ArrowDtype(pa.float64()))
    return out[list(obs.columns)]


def dictionary_frame(arrow_obs: pd.DataFrame) -> pd.DataFrame:
    """The Arrow-backed frame with its few-valued text as Arrow dictionaries (Arrow's categorical)."""
    import pyarrow as pa

    out = arrow_obs.copy()
    for c in ("namespace", "source", "recall_outcome"):
        out[c] = out[c].astype(pd.ArrowDtype(pa.dictionary(pa.int32(), pa.large_string())))
    return out


def native_inputs(obs: pd.DataFrame, con, tmp: Path):
    """Each peer's own form of the data, made before any clock: a polars DataFrame read by polars from
    a Parquet file, and a DuckDB table created from it (``obs_native``)."""
    path = tmp / "observations.parquet"
    obs[COLUMNS].to_parquet(path, index=False)
    frame = pl.read_parquet(path)
    con.execute(f"CREATE OR REPLACE TABLE obs_native AS SELECT * FROM read_parquet('{path}')")
    return frame


def polars_native(df: "pl.DataFrame", cutoff) -> list:
    """The polars query on a polars frame (no conversion)."""
    v, o = pl.col("derived_confidence"), pl.col("recall_outcome")
    bucket = (v.clip(0.0, 1.0) * 10).floor().cast(pl.Int64).clip(upper_bound=9)
    judged = o.count()
    out = (df.filter(pl.col("observed_at") >= cutoff.to_pydatetime())
             .with_columns(bucket.alias("b"))
             .group_by(["namespace", "source"])
             .agg(pl.len().alias("count"), v.median().alias("median"), v.mean().alias("mean"),
                  *[(pl.col("b") == i).sum().alias(f"b{i}") for i in range(10)],
                  pl.when(judged > 0).then((o == "consumed").sum() / judged).alias("util"))
             .sort(["namespace", "source"], nulls_last=True))
    return [(r[0], r[1], r[2], r[3], r[4], list(r[5:15]), r[15]) for r in out.iter_rows()]


def duckdb_native(con, cutoff) -> list:
    """DuckDB's query on its own table."""
    rows = con.execute(SQL.replace("FROM obs WHERE", "FROM obs_native WHERE"),
                       {"cutoff": cutoff.to_pydatetime()}).fetchall()
    return [(r[0], r[1], r[2], r[3], r[4], list(r[5:15]), r[15]) for r in rows]


def compare(ours: pd.DataFrame, other: list, label: str, median_rtol: float) -> tuple:
    """(problems, exact medians) of another engine's ``(ns, src, count, median, mean, buckets, util)``
    rows against ours."""
    if len(ours) != len(other):
        return [f"{label}: {len(ours)} groups vs {len(other)}"], 0
    problems, exact = [], 0
    for (ns, src, c, med, mu, buckets, util), row in zip(
            ours[["namespace", "source", "count", "median", "mean", "buckets", "consumption_utility"]]
            .itertuples(index=False), other, strict=True):
        o_util = None if row[6] is None or row[6] != row[6] else float(row[6])
        if (ns, src, int(c), list(buckets), util) != (row[0], row[1], int(row[2]), list(row[5]), o_util):
            problems.append(f"{label} row {ns}/{src} differs: ours {(c, buckets, util)} vs {row[2], row[5], o_util}")
        if abs(med - row[3]) > median_rtol * abs(row[3]):
            problems.append(f"{label} median {ns}/{src}: {med!r} vs {row[3]!r}")
        if abs(mu - row[4]) > 1e-12 * abs(row[4]):
            problems.append(f"{label} mean {ns}/{src}: {mu!r} vs {row[4]!r}")
        exact += med == row[3]
    return problems, exact


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ci", action="store_true", help="small size for CI (seconds)")
    ap.add_argument("--rows", type=int, default=None)
    ap.add_argument("--repeat", type=int, default=None, help="timed runs per side per round (same N all sides)")
    ap.add_argument("--rounds", type=int, default=None, help="interleaved rounds; each side keeps its best")
    args = ap.parse_args(argv)
    _util.pin_threads()
    n = args.rows or (20_000 if args.ci else 1_000_000)
    repeat = args.repeat or (3 if args.ci else 5)
    rounds = args.rounds or (1 if args.ci else 3)
    days = 30
    obs, now = make_observations(n)
    cutoff = now - pd.Timedelta(days=days)
    print(f"observations: {n:,}; groups: up to {obs['namespace'].nunique() * obs['source'].nunique()}; "
          f"window: {days} days")
    con = _util.duckdb_connect()
    print(_util.describe_threads(con))

    tmp = Path(tempfile.mkdtemp(prefix="thatchlab-bench-calibration-"))
    pl_frame = native_inputs(obs, con, tmp)
    arrow_obs = arrow_frame(obs)
    dictionary_obs = dictionary_frame(arrow_obs)
    object_obs = make_observations(n, text_dtype=object)[0]
    sides = {
        "ours": lambda: calibrate_from_shadow(obs, now, days=days),
        "ours_object": lambda: calibrate_from_shadow(object_obs, now, days=days),
        "ours_arrow": lambda: calibrate_from_shadow(arrow_obs, now, days=days),
        "ours_dictionary": lambda: calibrate_from_shadow(dictionary_obs, now, days=days),
        "duckdb": lambda: duckdb_report(con, obs, cutoff),
        "polars": lambda: polars_report(obs, cutoff),
        "pandas": lambda: pandas_report(obs, cutoff),
        "duckdb_native": lambda: duckdb_native(con, cutoff),
        "polars_native": lambda: polars_native(pl_frame, cutoff),
    }
    best, out = dict.fromkeys(sides, float("inf")), {}
    for _ in range(rounds):
        for name, fn in sides.items():
            seconds, out[name] = _util.best_of(fn, repeat=repeat, warmup=1)
            best[name] = min(best[name], seconds)
    shutil.rmtree(tmp, ignore_errors=True)
    # the same frame with a fresh object in every text cell (rows as sqlite3 returns them)
    fresh = obs.copy()
    for col in ("namespace", "source", "recall_outcome"):
        fresh[col] = pd.Series([None if not isinstance(v, str) else "".join(v) for v in obs[col]],  # object
                               index=obs.index, dtype=object)  # whatever obs's text dtype (str on pandas 3)
    distinct = {name: _util.best_of(fn, repeat=repeat, warmup=1)[0] for name, fn in (
        ("ours", lambda: calibrate_from_shadow(fresh, now, days=days)),
        ("duckdb", lambda: duckdb_report(con, fresh, cutoff)))}
    con.close()

    report = out["ours"]
    ours = report.rows
    problems, exact = [], {}
    if out["ours_arrow"].to_json() != report.to_json():
        problems.append("ours on the Arrow-backed frame differs from ours on the default frame")
    if out["ours_object"].to_json() != report.to_json():
        problems.append("ours on the object frame differs from ours on the default frame")
    if out["ours_dictionary"].to_json() != report.to_json():
        problems.append("ours on the Arrow dictionary frame differs from ours on the default frame")
    for name, rtol in (("pandas", 0.0), ("duckdb", 1e-12), ("polars", 1e-12), ("duckdb_native", 1e-12),
                       ("polars_native", 1e-12)):
        found, exact[name] = compare(ours, out[name], name, rtol)
        problems += found
    in_window = int((obs["observed_at"] >= cutoff).sum())
    if report.total_observations != in_window:
        problems.append(f"total {report.total_observations} vs {in_window}")
    if problems:
        print("MISMATCH:", *problems[:5], sep="\n  ")
        return 1
    print(f"groups: {len(ours)}; in window: {report.total_observations:,}; counts, buckets and utilities "
          f"identical across the four; means within 1e-12 relative; medians bit-identical in "
          + ", ".join(f"{exact[k]}/{len(ours)} ({k})" for k in exact) + " (any other within 1e-12 relative)")
    print(f"calibrate_from_shadow: {best['ours']:.4f} s; DuckDB {duckdb.__version__} MEDIAN: "
          f"{best['duckdb']:.4f} s; polars {pl.__version__}: {best['polars']:.4f} s; pandas "
          f"{pd.__version__}: {best['pandas']:.4f} s (best of {repeat} × {rounds} rounds, 1 warm-up each)")
    print(f"a fresh string object in every cell: ours {distinct['ours']:.4f} s, DuckDB {distinct['duckdb']:.4f} s")
    print(f"peers on their own input: DuckDB on its own table {best['duckdb_native']:.4f} s, polars on a polars "
          f"frame read by polars {best['polars_native']:.4f} s; ours on the Arrow-backed frame "
          f"{best['ours_arrow']:.4f} s, with Arrow dictionaries {best['ours_dictionary']:.4f} s, on object text "
          f"columns {best['ours_object']:.4f} s (the default frame's text: {obs['namespace'].dtype})")
    ratios = {k: best[k] / best["ours"] for k in ("duckdb", "polars", "pandas", "duckdb_native", "polars_native")}
    native = min(ratios["duckdb_native"], ratios["polars_native"])
    arrow = best["ours_object"] / best["ours_arrow"]
    print(f"targets: faster native peer / ours = {native:.3f} (>= 1.0: {'met' if native >= 1.0 else 'NOT met'}); "
          f"arrow_ratio = {arrow:.3f} (>= 0.8: {'met' if arrow >= 0.8 else 'NOT met'})")
    print(_util.result("calibration", rows=n, ratio=min(ratios["duckdb"], ratios["polars"]),
                       duckdb_ratio=ratios["duckdb"], polars_ratio=ratios["polars"],
                       pandas_ratio=ratios["pandas"], distinct_duckdb_ratio=distinct["duckdb"] / distinct["ours"],
                       native_polars_ratio=ratios["polars_native"], native_duckdb_ratio=ratios["duckdb_native"],
                       native_ratio=native, arrow_ratio=arrow,
                       dictionary_ratio=best["ours_object"] / best["ours_dictionary"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
