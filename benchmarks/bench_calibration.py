"""Benchmark: calibrate_from_shadow against a pandas groupby and DuckDB on the same data.

Random shadow observations (no model) are aggregated into the calibration
report three ways in the same run, all on the same in-memory DataFrame:

* **ours**: ``thatchlab.calibration.calibrate_from_shadow``;
* **pandas**: what a pandas user writes: filter the window, ``groupby``
  (namespace, source) for count, median and mean, a second ``groupby`` with
  the bucket for the histogram, two sums for the consumption utility;
* **DuckDB**: one SQL query (window filter, per-(namespace, source) count,
  median by row numbers, mean, 10 buckets, consumption utility) — the query
  an ai-memory operator would run on the SQLite store, in DuckDB's dialect —
  over the DataFrame registered as a table.

Rows must agree (counts, buckets and utilities exactly; medians exactly
against pandas, to 1e-12 relative against DuckDB; means to 1e-12 relative,
since the engines sum in different orders) or the script exits non-zero.
Times are the best of ``--repeat`` runs each.

Usage: ``python benchmarks/bench_calibration.py [--ci] [--rows N]``

Last line: ``RESULT bench=calibration rows=<n> ratio=<pandas_s/ours_s> duckdb_ratio=<duckdb_s/ours_s>``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import duckdb
import numpy as np
import pandas as pd

from thatchlab.calibration import calibrate_from_shadow

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _util import timed  # noqa: E402

SQL = """
WITH w AS (
    SELECT namespace, source, derived_confidence AS v, recall_outcome AS o
    FROM obs WHERE observed_at >= $cutoff
), r AS (
    SELECT namespace, source, v, o,
           ROW_NUMBER() OVER (PARTITION BY namespace, source ORDER BY v) AS rn,
           COUNT(*) OVER (PARTITION BY namespace, source) AS n,
           LEAST(CAST(FLOOR(GREATEST(LEAST(v, 1.0), 0.0) * 10) AS INTEGER), 9) AS b
    FROM w
)
SELECT namespace, source, COUNT(*) AS count,
       AVG(CASE WHEN rn IN ((n + 1) // 2, (n + 2) // 2) THEN v END) AS median,
       SUM(v) / COUNT(*) AS mean,
       COUNT(*) FILTER (b = 0), COUNT(*) FILTER (b = 1), COUNT(*) FILTER (b = 2),
       COUNT(*) FILTER (b = 3), COUNT(*) FILTER (b = 4), COUNT(*) FILTER (b = 5),
       COUNT(*) FILTER (b = 6), COUNT(*) FILTER (b = 7), COUNT(*) FILTER (b = 8),
       COUNT(*) FILTER (b = 9),
       CASE WHEN COUNT(o) > 0 THEN COUNT(*) FILTER (o = 'consumed') / COUNT(o) END AS util
FROM r GROUP BY namespace, source ORDER BY namespace, source
"""


def make_observations(n: int, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    now = pd.Timestamp("2026-06-01T00:00:00Z")
    namespaces = np.array([f"ns-{i:02d}" for i in range(24)], dtype=object)
    sources = np.array(["user", "assistant", "api", "system", "tool"], dtype=object)
    seconds = rng.integers(0, 60 * 86_400, n)
    outcome = np.array([None, "consumed", "unconsumed"], dtype=object)[rng.choice(3, n, p=[0.5, 0.3, 0.2])]
    ns_idx = rng.integers(0, len(namespaces), n)
    outcome[ns_idx == 0] = None  # one namespace never judged: utility None
    return pd.DataFrame({
        "memory_id": np.char.add("m", rng.integers(0, n // 4 + 1, n).astype(str)).astype(object),
        "namespace": namespaces[ns_idx],
        "source": sources[rng.integers(0, len(sources), n)],
        "observed_at": (now - pd.to_timedelta(seconds, unit="s")).as_unit("ns"),
        "derived_confidence": np.round(rng.beta(4, 3, n), 6),
        "recall_outcome": outcome,
    }), now


def pandas_report(obs: pd.DataFrame, cutoff) -> pd.DataFrame:
    """The report as a pandas user writes it (rows sorted by namespace, source)."""
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
    out["consumption_utility"] = (consumed / judged).where(judged > 0)
    return out.reset_index(names=["namespace", "source"])




def compare(ours: pd.DataFrame, other, label: str, median_rtol: float) -> list:
    """Differences between our rows and another engine's ``(ns, src, count, median,
    mean, buckets, util)`` tuples."""
    problems = []
    if len(ours) != len(other):
        return [f"{label}: {len(ours)} groups vs {len(other)}"]
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
    return problems


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ci", action="store_true", help="small size for CI")
    ap.add_argument("--rows", type=int, default=None)
    ap.add_argument("--repeat", type=int, default=None, help="timed runs per engine (best kept)")
    args = ap.parse_args(argv)
    n = args.rows or (20_000 if args.ci else 1_000_000)
    repeat = args.repeat or (5 if args.ci else 3)
    days = 30
    obs, now = make_observations(n)
    cutoff = now - pd.Timedelta(days=days)
    print(f"observations: {n:,}; groups: up to {obs['namespace'].nunique() * obs['source'].nunique()}; "
          f"window: {days} days")

    con = duckdb.connect()
    con.register("obs", obs)

    def run_duckdb():
        return con.execute(SQL, {"cutoff": cutoff.to_pydatetime()}).fetchall()

    run_duckdb()  # warm DuckDB's scan of the frame
    ours_s, report = timed(lambda: calibrate_from_shadow(obs, now, days=days), repeat=repeat)
    pandas_s, pd_rows = timed(lambda: pandas_report(obs, cutoff), repeat=repeat)
    duck_s, duck_rows = timed(run_duckdb, repeat=repeat)
    con.close()

    ours = report.rows
    pd_tuples = [tuple(r) for r in pd_rows[["namespace", "source", "count", "median", "mean", "buckets",
                                            "consumption_utility"]].itertuples(index=False)]
    duck_tuples = [(r[0], r[1], r[2], r[3], r[4], list(r[5:15]), r[15]) for r in duck_rows]
    problems = compare(ours, pd_tuples, "pandas", 0.0) + compare(ours, duck_tuples, "duckdb", 1e-12)
    in_window = int((obs["observed_at"] >= cutoff).sum())
    if report.total_observations != in_window:
        problems.append(f"total {report.total_observations} vs {in_window}")
    if problems:
        print("MISMATCH:", *problems[:5], sep="\n  ")
        return 1
    print(f"groups: {len(ours)}; in window: {report.total_observations:,}; rows identical across the three "
          f"(means within 1e-12 relative, DuckDB's medians too)")
    print(f"calibrate_from_shadow: {ours_s:.3f} s; pandas groupby: {pandas_s:.3f} s; "
          f"DuckDB {duckdb.__version__}: {duck_s:.3f} s (best of {repeat})")
    print(f"RESULT bench=calibration rows={n} ratio={pandas_s / ours_s:.2f} duckdb_ratio={duck_s / ours_s:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
