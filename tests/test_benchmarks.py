"""Every benchmark runs at CI size, checks its own outputs and ends with a RESULT line."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

BENCH = sorted((Path(__file__).resolve().parents[1] / "benchmarks").glob("bench_*.py"))
RESULT = re.compile(r"^RESULT bench=(\w+)( \w+=\S+)* ratio=[0-9.]+(e[+-]?\d+)?( \w+=\S+)*$")
#: Extra checks of a benchmark's RESULT line at CI size, by script name.
RESULT_FIELDS = {
    # 10 small worlds; coverage is a fraction and the ratio is the smallest coverage
    "bench_derive_coverage": re.compile(r" replications=10 coverage_min=(?P<lo>[01]\.\d{4}) "
                                        r"coverage_max=(?P<hi>[01]\.\d{4}) ratio=(?P=lo)$"),
}


@pytest.mark.parametrize("script", BENCH, ids=[p.stem for p in BENCH])
def test_benchmark_ci_size(script):
    env = dict(os.environ, TQDM_DISABLE="1")
    proc = subprocess.run([sys.executable, str(script), "--ci"], capture_output=True, text=True,
                          env=env, timeout=300)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    last = proc.stdout.strip().splitlines()[-1]
    assert RESULT.match(last), last
    assert f"bench={script.stem.removeprefix('bench_')}" in last
    if script.stem in RESULT_FIELDS:
        m = RESULT_FIELDS[script.stem].search(last)
        assert m, last
        assert 0.0 <= float(m["lo"]) <= float(m["hi"]) <= 1.0, last
