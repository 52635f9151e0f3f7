"""Benchmark: belief currency and band, thatchlab against the bare numpy formula.

Random memories (evidence clock over a year, half-lives drawn from the seed's
class priors including "no decay", a tenth with a named valid_to) are scored
at one ``now`` two ways in the same run:

* **ours**: ``compute_currency`` + ``currency_band`` on the table's columns
  (validation, the NaN / no-decay / valid_to cases in production's order, a
  Series back);
* **floor**: the formula written as bare numpy on the same columns (their
  int64 nanoseconds and float half-lives): age in days, ``exp2(-age / hl)``,
  1 without a half-life, the named date's 0/1, then the two band cut-offs —
  no checks, no cases beyond these.

Ours also runs on the same columns Arrow-backed, as ``read_parquet(dtype_backend="pyarrow")``
gives them (``timestamp[ns, tz=UTC][pyarrow]`` times, ``double[pyarrow]`` half-lives with a
null for "no decay"): ``arrow_ratio`` is ours on the NumPy-backed columns over ours on the
Arrow-backed ones, and its results must be identical.

Bands must be identical and currencies equal to 1e-12 relative; both are
also checked against the plain-Python reference (``currency_reference`` +
``band_reference``) on a 20,000-row sample. Exit 1 otherwise. Times are the
best of five runs each, interleaved, after one untimed run of each; threads
are pinned the same for both (``_util``, printed).

    python benchmarks/bench_belief.py          # 1,000,000 rows
    python benchmarks/bench_belief.py --ci     # 20,000 rows

Last line: ``RESULT bench=belief rows=<n> floor_ratio=<ours_s / floor_s>
arrow_ratio=<ours_s / ours on Arrow-backed columns_s; target >= 0.8>``.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _util  # noqa: E402,I001  (pins threads before numpy starts its pools)

import numpy as np
import pandas as pd

from thatchlab.belief import (
    BELIEF_PRIORS,
    band_reference,
    compute_currency,
    currency_band,
    currency_reference,
)

NS_PER_DAY = 86_400 * 10**9
LABELS = np.array(["current", "fading", "history"], dtype=object)


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


def arrow_columns(last, hl, valid_to):
    """The same columns Arrow-backed (a missing half-life or ``valid_to`` is an Arrow null)."""
    import pyarrow as pa

    ts = pd.ArrowDtype(pa.timestamp("ns", tz="UTC"))
    return last.astype(ts), pd.Series(hl, dtype="double[pyarrow]"), valid_to.astype(ts)


def ours(last, now, hl, valid_to):
    c = compute_currency(last, now, hl, valid_to)
    return c.to_numpy(), currency_band(c.to_numpy())


def floor(last, now, hl, valid_to):
    """The formula as bare numpy on the same columns."""
    last_ns, vt_ns, now_ns = last.array.asi8, valid_to.array.asi8, now.value
    c = (now_ns - last_ns).astype(np.float64)       # age in ns, then in place
    c /= NS_PER_DAY
    np.maximum(c, 0.0, out=c)
    np.divide(c, hl, out=c)
    np.negative(c, out=c)
    np.exp2(c, out=c)
    c[np.isnan(hl)] = 1.0
    named = vt_ns != np.iinfo(np.int64).min
    c[named] = now_ns <= vt_ns[named]
    code = (c <= 0.5).astype(np.intp)
    code += c < 0.25                                 # NaN fails both tests: history
    code[np.isnan(c)] = 2
    return c, LABELS[code]


def reference(last, now, hl, valid_to, rows):
    """The plain-Python reference on some rows."""
    now_py = now.to_pydatetime()
    cur, band = [], []
    for i in rows:
        v = valid_to.iloc[i]
        c = currency_reference(last.iloc[i].to_pydatetime(), now_py, None if np.isnan(hl[i]) else float(hl[i]),
                               None if pd.isna(v) else v.to_pydatetime())
        cur.append(c)
        band.append(band_reference(c))
    return np.array(cur, dtype=np.float64), band


def same(cur_a, band_a, cur_b, band_b) -> bool:
    return list(band_a) == list(band_b) and np.allclose(cur_a, cur_b, rtol=1e-12, atol=0.0, equal_nan=True)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ci", action="store_true", help="small size for CI (20,000 rows)")
    ap.add_argument("--rows", type=int, default=None)
    args = ap.parse_args(argv)
    n = args.rows or (20_000 if args.ci else 1_000_000)
    last, now, hl, valid_to = make_rows(n)
    print(f"rows={n}")
    _util.pin_threads()
    print(_util.describe_threads())
    last_a, hl_a, valid_to_a = arrow_columns(last, hl, valid_to)
    ours(last, now, hl, valid_to)  # one untimed run of each side
    floor(last, now, hl, valid_to)
    ours(last_a, now, hl_a, valid_to_a)

    ours_s = floor_s = arrow_s = float("inf")
    for _ in range(5):
        t = time.perf_counter()
        cur_o, band_o = ours(last, now, hl, valid_to)
        ours_s = min(ours_s, time.perf_counter() - t)
        t = time.perf_counter()
        cur_f, band_f = floor(last, now, hl, valid_to)
        floor_s = min(floor_s, time.perf_counter() - t)
        t = time.perf_counter()
        cur_a, band_a = ours(last_a, now, hl_a, valid_to_a)
        arrow_s = min(arrow_s, time.perf_counter() - t)

    sample = np.random.default_rng(1).choice(n, size=min(n, 20_000), replace=False)
    cur_r, band_r = reference(last, now, hl, valid_to, sample)
    ok_floor = same(cur_o, band_o, cur_f, band_f)
    ok_arrow = list(band_a) == list(band_o) and np.array_equal(cur_a, cur_o, equal_nan=True)
    ok_ref = same(cur_o[sample], band_o[sample], cur_r, band_r) and same(cur_f[sample], band_f[sample],
                                                                         cur_r, band_r)
    print(f"thatchlab compute_currency + currency_band (best of 5): {ours_s:.4f} s")
    print(f"bare numpy formula on the same columns (best of 5): {floor_s:.4f} s")
    print(f"ours on the Arrow-backed columns (best of 5): {arrow_s:.4f} s; "
          f"arrow_ratio = {ours_s / arrow_s:.3f} (>= 0.8: {'met' if ours_s / arrow_s >= 0.8 else 'NOT met'})")
    print(f"outputs equal (bands exact, currency rtol 1e-12): ours vs floor {ok_floor}, "
          f"both vs the Python reference on {len(sample):,} rows {ok_ref}; "
          f"Arrow-backed vs NumPy-backed identical {ok_arrow}")
    counts = pd.Series(band_o).value_counts().to_dict()
    print("bands: " + ", ".join(f"{k}={counts.get(k, 0)}" for k in ("current", "fading", "history")))
    if not (ok_floor and ok_ref and ok_arrow):
        print("MISMATCH between thatchlab, the floor, the reference and the Arrow-backed run", file=sys.stderr)
        return 1
    print(_util.result("belief", rows=n, floor_ratio=ours_s / floor_s, arrow_ratio=ours_s / arrow_s))
    return 0


if __name__ == "__main__":
    sys.exit(main())
