"""Benchmark: calibrate_from_shadow vs the same aggregation in SQL run by SQLite.

Random shadow observations (no model) are aggregated into the calibration
report two ways in the same run: ``thatchlab.calibration.calibrate_from_shadow``
on a DataFrame, and one SQL query (window filter, per-(namespace, source)
count, median by row numbers, mean, 10 buckets, consumption utility) over the
same rows in an in-memory SQLite table with RFC 3339 text times, as ai-memory
stores them. Rows must agree (counts, medians, buckets and utilities exactly;
means to 1e-12 relative, since the two sum in different orders) or the script
exits non-zero. The last line is
``RESULT bench=calibration rows=<n> ratio=<sqlite_s/ours_s>``.

Usage: ``python benchmarks/bench_calibration.py [--ci] [--rows N]``
"""

from __future__ import annotations

import argparse
import sqlite3
import sys
import time

import numpy as np
import pandas as pd

from thatchlab.calibration import calibrate_from_shadow

SQL = """
WITH w AS (
    SELECT namespace, source, derived_confidence AS v, recall_outcome AS o
    FROM confidence_shadow_observations WHERE observed_at >= :cutoff
), r AS (
    SELECT namespace, source, v, o,
           ROW_NUMBER() OVER (PARTITION BY namespace, source ORDER BY v) AS rn,
           COUNT(*) OVER (PARTITION BY namespace, source) AS n,
           MIN(CAST(MAX(MIN(v, 1.0), 0.0) * 10 AS INTEGER), 9) AS b
    FROM w
)
SELECT namespace, source, COUNT(*) AS count,
       AVG(CASE WHEN rn IN ((n + 1) / 2, (n + 2) / 2) THEN v END) AS median,
       SUM(v) / COUNT(*) AS mean,
       SUM(b = 0), SUM(b = 1), SUM(b = 2), SUM(b = 3), SUM(b = 4),
       SUM(b = 5), SUM(b = 6), SUM(b = 7), SUM(b = 8), SUM(b = 9),
       CASE WHEN SUM(o IN ('consumed', 'unconsumed')) > 0
            THEN CAST(SUM(o = 'consumed') AS REAL) / SUM(o IN ('consumed', 'unconsumed')) END AS util
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


def best_of(fn, repeats):
    best, out = float("inf"), None
    for _ in range(repeats):
        t0 = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t0)
    return best, out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ci", action="store_true", help="small size for CI")
    ap.add_argument("--rows", type=int, default=None)
    args = ap.parse_args(argv)
    n = args.rows or (20_000 if args.ci else 1_000_000)
    days = 30
    obs, now = make_observations(n)
    print(f"observations: {n:,}; groups: up to {obs['namespace'].nunique() * obs['source'].nunique()}; "
          f"window: {days} days")

    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE TABLE confidence_shadow_observations (id INTEGER PRIMARY KEY, memory_id TEXT, "
                 "namespace TEXT, source TEXT, observed_at TEXT, derived_confidence REAL, recall_outcome TEXT)")
    text_times = obs["observed_at"].dt.strftime("%Y-%m-%dT%H:%M:%S+00:00")
    conn.executemany("INSERT INTO confidence_shadow_observations(memory_id, namespace, source, observed_at, "
                     "derived_confidence, recall_outcome) VALUES (?, ?, ?, ?, ?, ?)",
                     zip(obs["memory_id"], obs["namespace"], obs["source"], text_times,
                         obs["derived_confidence"].tolist(), obs["recall_outcome"], strict=True))
    conn.commit()
    cutoff = (now - pd.Timedelta(days=days)).strftime("%Y-%m-%dT%H:%M:%S+00:00")

    ours_s, report = best_of(lambda: calibrate_from_shadow(obs, now, days=days), 5 if args.ci else 3)
    sql_s, sql_rows = best_of(lambda: conn.execute(SQL, {"cutoff": cutoff}).fetchall(), 3 if args.ci else 2)
    total_sql = conn.execute("SELECT COUNT(*) FROM confidence_shadow_observations WHERE observed_at >= ?",
                             (cutoff,)).fetchone()[0]

    ours = report.rows
    problems = []
    if report.total_observations != total_sql:
        problems.append(f"total {report.total_observations} vs {total_sql}")
    if len(ours) != len(sql_rows):
        problems.append(f"{len(ours)} groups vs {len(sql_rows)}")
    for (ns, src, c, med, mu, buckets, util), row in zip(
            ours[["namespace", "source", "count", "median", "mean", "buckets", "consumption_utility"]]
            .itertuples(index=False), sql_rows, strict=False):
        if (ns, src, int(c), float(med), list(buckets), util) != (row[0], row[1], row[2], row[3],
                                                                    list(row[5:15]), row[15]):
            problems.append(f"row {ns}/{src} differs: ours {(c, med, buckets, util)} vs sql "
                            f"{(row[2], row[3], row[5:15], row[15])}")
        if abs(mu - row[4]) > 1e-12 * abs(row[4]):
            problems.append(f"mean {ns}/{src}: {mu!r} vs {row[4]!r}")
    if problems:
        print("MISMATCH:", *problems[:5], sep="\n  ")
        return 1
    print(f"groups: {len(ours)}; in window: {report.total_observations:,}; rows identical "
          f"(means within 1e-12 relative)")
    print(f"calibrate_from_shadow: {ours_s:.3f} s; SQLite SQL: {sql_s:.3f} s")
    print(f"RESULT bench=calibration rows={n} ratio={sql_s / ours_s:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
