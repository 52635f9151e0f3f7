"""Benchmark: seed-mode sequential mining against DuckDB running production's SQL and polars.

A generated stream of W workspaces × N events over 30 days (1,000 × 1,000 at
full size) is mined three ways in the same run:

* **ours**: ``mine_sequential(mode="seed")``;
* **DuckDB**: mnemo's production SQL (``LATERAL`` count; workspace added to
  SELECT and GROUP BY) over the events loaded into a DuckDB table;
* **polars**: the query as a polars user writes it: a forward ``rolling``
  window of (t, t + 24 h) per workspace collecting the followers, exploded
  into pairs, grouped by (workspace, trigger, target), joined to the
  triggers' counts, filtered (events converted to a polars frame, sorted,
  beforehand).

SQLite, which has no LATERAL, runs the equivalent join to per-workspace
counts on a 100,000-event slice, for reference. Every engine must return
identical rows (observations exactly, confidence and delay to 1e-9
relative), otherwise the script exits non-zero. Ratios are baseline seconds
/ our seconds (best of ``--repeat`` runs each); ``ratio`` is against the
faster of DuckDB and polars.

    python benchmarks/bench_anticipation.py          # full size
    python benchmarks/bench_anticipation.py --ci     # a few seconds

Last line: ``RESULT bench=anticipation events=<n> ratio=<min(duckdb, polars)_s / ours_s>
duckdb_ratio=<..> polars_ratio=<..> sqlite_ratio=<..>``.
"""

from __future__ import annotations

import argparse
import sqlite3
import sys
from pathlib import Path

import duckdb
import numpy as np
import pandas as pd
import polars as pl

from thatchlab.anticipation import mine_sequential
from thatchlab.anticipation._reference_sql import SEED_SEQUENTIAL_DUCKDB, SEED_SEQUENTIAL_SQLITE

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _util import timed  # noqa: E402


def generate(n_ws: int, per_ws: int, seed: int = 0) -> pd.DataFrame:
    """Events of ``n_ws`` workspaces, ``per_ws`` each over 30 days, 40 Zipf-weighted names."""
    rng = np.random.default_rng(seed)
    names = np.array([f"event.{i:02d}" for i in range(40)])
    p = 1.0 / np.arange(1, 41)
    p /= p.sum()
    n = n_ws * per_ws
    start_us = pd.Timestamp("2026-01-01T00:00:00Z").value // 1000
    us = start_us + rng.integers(0, 30 * 86400 * 10**6, n)
    return pd.DataFrame({
        "ts": pd.to_datetime(us, unit="us", utc=True).as_unit("ns"),
        "workspace": np.repeat([f"ws{i:04d}" for i in range(n_ws)], per_ws),
        "name": names[rng.choice(40, n, p=p)],
    })




def ours(events):
    return mine_sequential(events, window="24h", min_obs=3, min_conf=0.5, mode="seed")


def run_duckdb(events, repeat):
    con = duckdb.connect()
    con.register("src", pd.DataFrame({"workspace_id": events["workspace"], "name": events["name"],
                                      "occurred_at": events["ts"].dt.tz_convert(None)}))
    con.execute("CREATE TABLE mnemo_event AS SELECT * FROM src")
    con.unregister("src")
    seconds, out = timed(lambda: con.execute(SEED_SEQUENTIAL_DUCKDB).df(), repeat=repeat)
    con.close()
    return seconds, out


def polars_seed(df: pl.DataFrame) -> pl.DataFrame:
    """Seed-mode mining in polars; ``df`` (workspace, name, ts) sorted by workspace, ts."""
    followers = df.rolling(index_column="ts", period="24h", offset="0h", closed="none",
                           group_by="workspace").agg(pl.col("name").alias("target"), pl.col("ts").alias("t2"))
    pairs = (followers.with_columns(trigger=df["name"], t1=df["ts"])      # rolling keeps the row order
             .explode(["target", "t2"]).drop_nulls("target"))
    agg = pairs.group_by("workspace", "trigger", "target").agg(
        observations=pl.len(), avg_delay_s=((pl.col("t2") - pl.col("t1")).dt.total_microseconds() / 1e6).mean())
    totals = df.group_by("workspace", "name").agg(cnt=pl.len()).rename({"name": "trigger"})
    return (agg.join(totals, on=["workspace", "trigger"])
            .with_columns(confidence=pl.col("observations") / pl.col("cnt"))
            .filter((pl.col("observations") >= 3) & (pl.col("confidence") > 0.5))
            .select("workspace", "trigger", "target", "observations", "confidence", "avg_delay_s"))


def run_polars(events, repeat):
    df = pl.from_pandas(events[["workspace", "name", "ts"]]).sort("workspace", "ts")
    seconds, out = timed(lambda: polars_seed(df), repeat=repeat)
    return seconds, out.to_pandas()


def run_sqlite(events, repeat):
    con = sqlite3.connect(":memory:")
    con.execute("CREATE TABLE mnemo_event (workspace_id TEXT, name TEXT, occurred_us INTEGER)")
    con.executemany("INSERT INTO mnemo_event VALUES (?, ?, ?)", zip(
        events["workspace"].tolist(), events["name"].tolist(),
        (events["ts"].astype("int64") // 1000).tolist()))
    con.execute("CREATE INDEX ev_ws_time ON mnemo_event(workspace_id, occurred_us)")
    con.execute("CREATE INDEX ev_ws_name ON mnemo_event(workspace_id, name)")
    con.execute("ANALYZE")
    seconds, rows = timed(lambda: con.execute(SEED_SEQUENTIAL_SQLITE).fetchall(), repeat=repeat)
    con.close()
    return seconds, pd.DataFrame(rows, columns=["workspace", "trigger", "target", "observations",
                                                "confidence", "avg_delay_s"])


def same_rows(a: pd.DataFrame, b: pd.DataFrame, label: str) -> bool:
    keys = ["workspace", "trigger", "target"]
    a = a.sort_values(keys).reset_index(drop=True)
    b = b.sort_values(keys).reset_index(drop=True)
    if len(a) != len(b) or a[keys].values.tolist() != b[keys].values.tolist():
        print(f"MISMATCH {label}: {len(a)} vs {len(b)} rows or different keys")
        return False
    if a["observations"].astype(np.int64).tolist() != b["observations"].astype(np.int64).tolist():
        print(f"MISMATCH {label}: observations differ")
        return False
    for col in ("confidence", "avg_delay_s"):
        x, y = a[col].to_numpy(np.float64), b[col].to_numpy(np.float64)
        if not np.all(np.abs(x - y) <= 1e-9 * np.abs(y)):
            print(f"MISMATCH {label}: {col} differs beyond 1e-9 relative")
            return False
    return True


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ci", action="store_true", help="small sizes for CI (seconds)")
    ap.add_argument("--repeat", type=int, default=None, help="timed runs per engine (best kept)")
    args = ap.parse_args(argv)
    n_ws, per_ws, sqlite_ws = (40, 250, 8) if args.ci else (1000, 1000, 100)
    repeat = args.repeat or (2 if args.ci else 3)

    events = generate(n_ws, per_ws)
    n = len(events)
    print(f"events: {n:,} ({n_ws} workspaces x {per_ws} events over 30 days)")
    ours(events.head(1000))  # warm imports
    t_ours, got = timed(lambda: ours(events), repeat=repeat)
    print(f"thatchlab mine_sequential(mode='seed'): {t_ours:.3f} s, {len(got):,} patterns")
    t_duck, ref = run_duckdb(events, repeat)
    print(f"duckdb {duckdb.__version__} on mnemo's production SQL: {t_duck:.3f} s, {len(ref):,} rows")
    ok = same_rows(got, ref, "duckdb")
    t_pl, ref_pl = run_polars(events, repeat)
    print(f"polars {pl.__version__} rolling windows: {t_pl:.3f} s, {len(ref_pl):,} rows")
    ok = same_rows(got, ref_pl, "polars") and ok

    sl = events[events["workspace"] < f"ws{sqlite_ws:04d}"].reset_index(drop=True)
    t_ours_sl, got_sl = timed(lambda: ours(sl), repeat=repeat)
    t_sq, ref_sl = run_sqlite(sl, 1)
    print(f"sqlite {sqlite3.sqlite_version} slice: {len(sl):,} events ({sqlite_ws} workspaces); "
          f"sqlite {t_sq:.3f} s, thatchlab {t_ours_sl:.4f} s, {len(ref_sl):,} rows")
    ok = same_rows(got_sl, ref_sl, "sqlite") and ok
    if not ok:
        return 1
    print("rows identical: yes (observations exact, confidence and delay within 1e-9 relative)")
    print(f"RESULT bench=anticipation events={n} ratio={min(t_duck, t_pl) / t_ours:.2f} "
          f"duckdb_ratio={t_duck / t_ours:.2f} polars_ratio={t_pl / t_ours:.2f} "
          f"sqlite_ratio={t_sq / t_ours_sl:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
