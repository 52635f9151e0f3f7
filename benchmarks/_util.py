"""Shared helpers of the benchmark scripts (timing, argument parsing)."""

from __future__ import annotations

import argparse
import time


def parse(description: str):
    ap = argparse.ArgumentParser(description=description)
    ap.add_argument("--ci", action="store_true", help="run the small size CI uses (seconds)")
    return ap.parse_args()


def timed(fn, *args, repeat: int = 1, **kw):
    """Best wall time of ``repeat`` runs and the last result."""
    best, out = float("inf"), None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn(*args, **kw)
        best = min(best, time.perf_counter() - t0)
    return best, out
