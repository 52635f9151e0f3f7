"""Benchmark: belief currency and band, vectorised vs a per-row Python loop.

Random memories (evidence clock over a year, half-lives drawn from the seed's
class priors including "no decay", a tenth with a named valid_to) are scored
at one ``now`` by ``compute_currency`` + ``currency_band`` over whole columns
(vectorised) and by a Python loop over the table's rows applying the
reference formula (``currency_reference`` + ``band_reference``) to each row's
pandas Timestamps (the baseline of the RESULT line). For reference the run
also times the same functions over plain lists of ``datetime`` objects
prepared beforehand (the leanest Python loop) and prints that ratio too.
Bands must be identical and currencies equal to 1e-12 relative (exit 1
otherwise).

    python benchmarks/bench_belief.py          # 1,000,000 rows
    python benchmarks/bench_belief.py --ci     # 20,000 rows

Last line: ``RESULT bench=belief rows=<n> ratio=<loop_s / vectorised_s>``.
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np
import pandas as pd

from thatchlab.belief import (
    BELIEF_PRIORS,
    band_reference,
    compute_currency,
    currency_band,
    currency_reference,
)
from thatchlab.core.progress import progress


def make_rows(n: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    t0 = pd.Timestamp("2026-01-01T00:00:00Z")
    us = rng.integers(0, 365 * 86_400 * 10**6, n)
    last = pd.Series(t0 + pd.to_timedelta(us, unit="us")).dt.as_unit("ns")
    priors = np.array([np.nan if v is None else v for v in BELIEF_PRIORS.values()])
    hl = priors[rng.integers(0, priors.size, n)]
    named = rng.random(n) < 0.1
    vt_us = rng.integers(0, 420 * 86_400 * 10**6, n)
    valid_to = pd.Series(t0 + pd.to_timedelta(vt_us, unit="us")).dt.as_unit("ns").where(named)
    now = t0 + pd.Timedelta(days=400)
    return last, now, hl, valid_to


def vectorised(last, now, hl, valid_to):
    c = compute_currency(last, now, hl, valid_to)
    return c.to_numpy(), currency_band(c.to_numpy())


def row_loop(rows, now):
    """The baseline: a Python loop over the table's rows (pandas Timestamps, as
    ``itertuples`` yields them) applying the reference formula and band."""
    cur, band = [], []
    for r in progress(rows, total=len(rows), desc="per-row loop"):
        c = currency_reference(r.last, now, r.hl, r.valid_to)
        cur.append(c)
        band.append(band_reference(c))
    return cur, band


def lean_loop(last_py, now_py, hl_py, vt_py):
    """Plain-Python reference functions on datetime objects (no validation)."""
    cur, band = [], []
    for a, h, v in zip(last_py, hl_py, vt_py):
        c = currency_reference(a, now_py, h, v)
        cur.append(c)
        band.append(band_reference(c))
    return cur, band


def _same(cur_v, band_v, cur, band):
    cur = np.array([np.nan if c is None else c for c in cur])
    return list(band_v) == list(band) and np.allclose(cur_v, cur, rtol=1e-12, atol=0.0,
                                                      equal_nan=True)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ci", action="store_true", help="small size for CI (20,000 rows)")
    ap.add_argument("--rows", type=int, default=None)
    args = ap.parse_args(argv)
    n = args.rows or (20_000 if args.ci else 1_000_000)
    last, now, hl, valid_to = make_rows(n)
    print(f"rows={n}")

    vec_times = []
    for _ in range(3):
        t = time.perf_counter()
        cur_v, band_v = vectorised(last, now, hl, valid_to)
        vec_times.append(time.perf_counter() - t)
    vec_s = min(vec_times)

    # per-row inputs as a loop over the table's rows would see them (prepared untimed)
    table = pd.DataFrame({"last": last, "hl": pd.Series(hl, dtype=object),
                          "valid_to": valid_to.astype(object)})
    table = table.astype(object).where(table.notna(), None)
    rows = list(table.itertuples(index=False))
    t = time.perf_counter()
    cur_r, band_r = row_loop(rows, now)
    loop_s = time.perf_counter() - t

    last_py = list(pd.DatetimeIndex(last).to_pydatetime())
    vt_py = [None if pd.isna(v) else v.to_pydatetime() for v in valid_to]
    hl_py = [None if np.isnan(h) else float(h) for h in hl]
    t = time.perf_counter()
    cur_l, band_l = lean_loop(last_py, now.to_pydatetime(), hl_py, vt_py)
    lean_s = time.perf_counter() - t

    ok_row, ok_lean = _same(cur_v, band_v, cur_r, band_r), _same(cur_v, band_v, cur_l, band_l)
    print(f"vectorised (best of 3): {vec_s:.4f} s")
    print(f"per-row loop over the table rows: {loop_s:.3f} s")
    print(f"lean pure-Python reference loop: {lean_s:.3f} s (ratio {lean_s / vec_s:.1f})")
    print(f"outputs identical (bands exact, currency rtol 1e-12): per-row {ok_row}, lean {ok_lean}")
    counts = pd.Series(band_l).value_counts().to_dict()
    print("bands: " + ", ".join(f"{k}={counts.get(k, 0)}" for k in ("current", "fading", "history")))
    if not (ok_row and ok_lean):
        print("MISMATCH between vectorised and loop outputs", file=sys.stderr)
        return 1
    print(f"RESULT bench=belief rows={n} ratio={loop_s / vec_s:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
