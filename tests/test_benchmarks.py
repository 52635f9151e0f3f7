"""Every benchmark runs at CI size, checks its own outputs and ends with a RESULT line."""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

BENCH = sorted((Path(__file__).resolve().parents[1] / "benchmarks").glob("bench_*.py"))
#: a plain decimal: no sign, exponent, ``inf`` or ``nan`` (the issue's "fair clocks" rule)
_NUM = r"[0-9]+(\.[0-9]+)?"
#: ``RESULT bench=<name>`` then fields; at least one ratio (``ratio`` or ``<what>_ratio``).
RESULT = re.compile(rf"^RESULT bench=(\w+)( \w+=\S+)* (\w+_)?ratio={_NUM}( \w+=\S+)*$")
#: Fields each benchmark's RESULT line must carry, by script name (numbers unless given).
RESULT_KEYS = {
    "bench_nudge": ("matchers", "floor_ratio", "peer_ratio", "p50_ms", "p95_ms", "floor_ratio_2k", "p50_ms_2k",
                    "p95_ms_2k", "numpy_ratio", "numpy_ratio_2k"),
    "bench_belief": ("rows", "floor_ratio"),
    "bench_calibration": ("rows", "ratio", "duckdb_ratio", "polars_ratio", "pandas_ratio",
                          "distinct_duckdb_ratio", "native_polars_ratio", "native_duckdb_ratio", "native_ratio",
                          "arrow_ratio"),
    "bench_anticipation": ("events", "ratio", "duckdb_ratio", "duckdb_lateral_ratio", "duckdb_cte_ratio",
                           "polars_ratio", "sqlite_ratio", "cpu_ratio", "ours_s", "native_polars_ratio",
                           "native_duckdb_ratio", "native_ratio", "arrow_ratio"),
    # lifelines (the peer's ``ratio``) is an optional extra: it caps pandas below 3
    "bench_fit_halflife": ("classes", "segments", "floor_ratio")
    + (("ratio",) if importlib.util.find_spec("lifelines") else ()),
    "bench_fit_prior": ("items", "pairs", "ratio", "same_reduction_ratio", "value_counts_ratio", "unique_ratio",
                        "arrow_ratio"),
    "bench_io": ("rows", "read_s", "polars_s", "polars_ratio", "polars_cpu_ratio", "peak_rss_mb", "ratio"),
    "bench_closed_loop": ("configs", "ratio"),
    "bench_fleet": ("users", "events", "ratio", "repeat"),
    "bench_fleet_scale": ("users_small", "users_large", "driver_growth", "ratio", "events_per_user",
                          "replay_s_small", "replay_s_large", "throughput_ratio", "in_process_eps", "worker_eps"),
    "bench_replay": ("events", "ratio", "floor_ratio", "write_ms", "load_s", "arrow_ratio"),
    "bench_sweep": ("configs", "ratio", "arrow_ratio"),
    "bench_sweep_regime": ("configs", "ratio"),
    "bench_decide_calibration": ("false_ship", "coverage", "power", "clusters", "ratio"),
    "bench_constraint_bound": ("pass_rate", "wald", "percentile", "former", "power_min", "power_mean",
                               "former_power_mean", "worlds", "ratio"),
    "bench_decide_fleets": ("nested", "by_session", "unbalanced", "cr1", "harm_ship", "harm_allowed",
                            "split_shown", "split_flagged", "hurt_shown", "by_sign_worse", "looks_sequential",
                            "looks_plain", "worlds", "ratio"),
    "bench_decide_planted_prior": ("ship", "oracle_power", "harmful", "worlds", "ratio"),
    "bench_derive_coverage": ("worlds", "pooled", "pooled_covered", "intercept", "intercept_covered", "atom",
                              "atom_covered", "corroboration", "corroboration_covered", "age_penalty",
                              "age_penalty_covered", "half_life", "half_life_covered", "multimodal",
                              "equal_age_worlds", "equal_age_two_sided", "ratio"),
    "bench_ope_coverage": ("worlds", "ips", "ips_covered", "snips", "snips_covered", "dr", "dr_covered",
                           "ips_percentile", "ips_percentile_covered", "ess_below_floor", "worlds_ess_ok",
                           "ips_ess_ok", "ips_ess_ok_covered", "snips_ess_ok", "snips_ess_ok_covered", "dr_ess_ok",
                           "dr_ess_ok_covered", "ratio"),
}
#: Extra checks of a benchmark's RESULT line at CI size, by script name.
RESULT_FIELDS = {
    # 4 small worlds planted in the script; coverage is a fraction, the ratio the pooled coverage, and
    # no equal-age world gives the half-life a finite two-sided interval
    "bench_derive_coverage": re.compile(r" worlds=4 pooled=(?P<pooled>[01]\.\d{4}) .* equal_age_worlds=2 "
                                        r"equal_age_two_sided=0 coverage_min=(?P<lo>[01]\.\d{4}) "
                                        r"coverage_max=(?P<hi>[01]\.\d{4}) ratio=(?P=pooled)$"),
}


def _fields(line: str) -> dict:
    return dict(part.split("=", 1) for part in line.split()[1:])


@pytest.mark.parametrize("script", BENCH, ids=[p.stem for p in BENCH])
def test_benchmark_ci_size(script):
    env = dict(os.environ, TQDM_DISABLE="1")
    proc = subprocess.run([sys.executable, str(script), "--ci"], capture_output=True, text=True,
                          env=env, timeout=300)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    last = proc.stdout.strip().splitlines()[-1]
    assert RESULT.match(last), last
    assert f"bench={script.stem.removeprefix('bench_')}" in last
    fields = _fields(last)
    for key, value in fields.items():  # every value a plain decimal or a word, never inf/nan/1e-05
        assert re.fullmatch(_NUM, value) or not re.search(r"\d|inf|nan", value), f"{key}={value} in {last}"
    for key in RESULT_KEYS.get(script.stem, ()):
        assert key in fields, f"{key} missing from {last}"
        assert re.fullmatch(_NUM, fields[key]), last
    if script.stem in RESULT_FIELDS:
        m = RESULT_FIELDS[script.stem].search(last)
        assert m, last
        assert 0.0 <= float(m["lo"]) <= float(m["hi"]) <= 1.0, last


def test_result_pattern():
    assert RESULT.match("RESULT bench=nudge matchers=100000 floor_ratio=1.16 peer_ratio=41.1")
    assert RESULT.match("RESULT bench=sweep configs=1000 ratio=1.2")
    assert not RESULT.match("RESULT bench=nudge matchers=100000")
    assert _fields("RESULT bench=x a=1 ratio=2") == {"bench": "x", "a": "1", "ratio": "2"}


def test_result_values_are_plain_decimals():
    sys.path.insert(0, str(BENCH[0].parent))
    try:
        import _util
    finally:
        sys.path.pop(0)
    line = _util.result("x", rows=1_000_000, ratio=1.23456, tiny=1e-7)
    assert line == "RESULT bench=x rows=1000000 ratio=1.235 tiny=0.000"
    assert RESULT.match(line)
    for bad in (float("inf"), float("nan")):
        with pytest.raises(ValueError, match="finite"):
            _util.result("x", ratio=bad)
    seconds, out = _util.best_of(lambda: 7, repeat=2, warmup=1)
    assert out == 7 and seconds >= 0.0
