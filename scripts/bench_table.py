"""The README's benchmark table, made from the RESULT lines the benchmarks saved (never copied by hand).

Each benchmark ends its output with one ``RESULT bench=<name> k=v ...`` line.
This script keeps the latest runs of each in ``benchmarks/results/<script>.txt``
(a ``#`` line saying when, where and with which library versions, then the
RESULT line; the last :data:`KEEP` runs) and renders the table between the
README's ``bench-table`` markers from them: one row per benchmark, each
figure the range over the kept runs, each target with the measured figure
and ``met`` / ``NOT met``.

    python scripts/bench_table.py run bench_nudge bench_fit_prior   # run at full size, save, render
    python scripts/bench_table.py add bench_calibration out.txt      # save the RESULT line of a saved output
    python scripts/bench_table.py render                             # rewrite the README table
    python scripts/bench_table.py render --check                     # exit 1 when the README differs

``tests/test_bench_table.py`` checks that the README table is what ``render``
makes of the saved results.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import platform
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"
README = ROOT / "README.md"
START, END = "<!-- bench-table:start -->", "<!-- bench-table:end -->"
#: Runs kept per benchmark (the table shows the range over them).
KEEP = 3
_RESULT = re.compile(r"^RESULT bench=(\w+)(?: \w+=\S+)+$")

#: Per benchmark script: what it compares, the fields shown (field, label, unit) and its targets
#: (field, "<=" or ">=", bound). Fields a saved line lacks are left out of its row.
BENCHES: dict = {
    "bench_nudge": (
        "one nudge end to end (lookup embedding, scan, exact cosines, ranking, regime, text, reading `.items`) "
        "over 2k and 100k matchers vs one NumPy `M @ q` + `argpartition` top-k + the same post-processing "
        "(`numpy_ratio` = ours / NumPy), one float32 `M @ q` alone (floor) and a per-matcher `np.dot` loop (peer)",
        [("numpy_ratio_2k", "ours / NumPy at 2k", "×"), ("numpy_ratio", "ours / NumPy at 100k", "×"),
         ("floor_ratio_2k", "ours / floor at 2k", "×"), ("floor_ratio", "ours / floor at 100k", "×"),
         ("p50_ms_2k", "p50 at 2k", " ms"), ("p50_ms", "p50 at 100k", " ms"), ("peer_ratio", "loop / ours", "×")],
        [("numpy_ratio_2k", "<=", 2.0), ("numpy_ratio", "<=", 1.1)]),
    "bench_calibration": (
        "calibration report over 1M observations vs DuckDB and polars on their own input (DuckDB's table, a "
        "polars frame read by polars), the same peers handed the pandas frame, and pandas; ours on an "
        "Arrow-backed frame (`arrow_ratio` = object-frame time / Arrow-frame time)",
        [("native_ratio", "faster native peer / ours", "×"), ("native_duckdb_ratio", "DuckDB table / ours", "×"),
         ("native_polars_ratio", "polars frame / ours", "×"), ("ratio", "faster peer on the pandas frame / ours",
                                                                "×"),
         ("arrow_ratio", "arrow_ratio", ""), ("dictionary_ratio", "the same with Arrow dictionary text", ""),
         ("distinct_duckdb_ratio", "DuckDB / ours, fresh strings", "×")],
        [("native_ratio", ">=", 1.0), ("arrow_ratio", ">=", 0.8)]),
    "bench_anticipation": (
        "seed-mode mining of 1M events vs polars and DuckDB (mnemo's `LATERAL` query and a CTE form) on their "
        "own input (a polars frame read by polars, DuckDB's table) and handed the pandas frame, and SQLite on "
        "a slice; ours on an Arrow-backed frame",
        [("native_ratio", "faster native peer / ours", "×"), ("native_polars_ratio", "polars frame / ours", "×"),
         ("native_duckdb_ratio", "DuckDB table / ours", "×"), ("ratio", "faster peer on the pandas frame / ours",
                                                               "×"),
         ("arrow_ratio", "arrow_ratio", ""), ("ours_s", "ours", " s")],
        [("native_ratio", ">=", 1.5), ("arrow_ratio", ">=", 0.8)]),
    "bench_fit_prior": (
        "K and P0 from 200k items (profile intervals included) vs scipy's `betabinom` MLE over the distinct "
        "(c, n) pairs reduced by `bincount` or `value_counts` (points only); the old `np.unique(axis=0)` "
        "reduction for the record; ours on Arrow-backed counts",
        [("ratio", "reduced scipy fit / ours", "×"), ("same_reduction_ratio", "bincount form / ours", "×"),
         ("unique_ratio", "`np.unique` form / ours", "×"), ("arrow_ratio", "arrow_ratio", "")],
        [("ratio", ">=", 1.0)]),
    "bench_fleet_scale": (
        "a fleet from a partitioned Parquet dataset (500 events a user) on a 2-worker LocalCluster, 500 vs "
        "2,000 users, each in a fresh driver process; events/s per worker vs one in-process replay",
        [("throughput_ratio", "per-worker events/s / in-process", "×"), ("driver_growth", "driver growth", "×"),
         ("replay_s_large", "2,000 users", " s")],
        [("throughput_ratio", ">=", 0.5), ("driver_growth", "<=", 1.2)]),
}


#: What the other benchmarks compare (their figures: ``ratio`` and the fields named in their docstrings).
DESCRIPTIONS = {
    'bench_constraint_bound': 'how often a constraint passes on test when the true rate sits exactly at its bound '
                              '(worst of 12 cells) and, as power, when it is 0.07 against a bound of 0.10 (mean '
                              'over cells), vs the former logit rule, Wald and percentile bounds; a statistics '
                              'study, not a timing',
    'bench_decide_fleets': '`decide` on fleet-shaped planted worlds (nested users, sessions, unbalanced '
                           'users, CR1, harm, repeated looks); a statistics study, not a timing',
    'bench_ope_coverage': 'coverage of the IPS, SNIPS and doubly robust 95% intervals at n = 200 with propensities down to '
                          '0.05 (900 planted worlds; worlds where IPS warns of a low effective sample size counted '
                          'apart); a statistics study',
    'bench_derive_coverage': "empirical coverage of DeriveWeightsFitter's nominal 95% intervals on synthetic "
                             'recall worlds; a statistics study',
    'bench_replay': 'vectorised replay of 50k messages × 2k matchers vs its floor (one float32 GEMM of every message vector × the final matcher matrix, plus one dedup mat-vec per write) and vs the event-by-event path; loading a 100k-matcher state (`from_tables`)',
    'bench_sweep': '1,000-configuration sweep vs one replay, 50k events',
    'bench_sweep_regime': '1,000 configurations over threshold, strong bar (confidence, evidence) and conflict margin vs one replay, 50k messages',
    'bench_closed_loop': '100 closed-loop simulations in lockstep vs one simulation, 400 sessions',
    'bench_fleet': "1,000 users' replays on a 2-worker LocalCluster (users packed into a few tasks per worker) vs one process, both warmed",
    'bench_belief': 'currency + band for 1M memories vs the bare numpy formula (floor); ours on Arrow-backed columns',
    'bench_fit_halflife': 'half-lives of 8 classes, 6.4M segments (exact Poisson intervals included) vs the closed-form floor (`factorize` + `bincount`, points only) and lifelines `ExponentialFitter` per class; ours on Arrow-backed columns',
    'bench_decide_calibration': '`decide` in planted worlds (1,000 null and 1,000 non-null per session count, 5–80 test sessions) vs the plain percentile interval of the same resamples; a statistics study, not a timing',
    'bench_decide_planted_prior': '`decide` on replayed worlds with a planted prior (K = 20, P0 = 0.3; 100 worlds per size) vs an oracle test of the planted truth on the same sessions and resamples; a statistics study',
    'bench_io': 'reading and validating a 1M-row JSONL interaction log vs `polars.read_ndjson(schema=)` + sort + `to_pandas` (same frame and dtypes, no validation); peak RSS of read + replay',
}


#: Fields shown for those benchmarks (``ratio`` when not listed).
FIELDS = {
    "bench_replay": [("floor_ratio", "ours / floor", "×"), ("ratio", "events path / ours", "×"),
                     ("write_ms", "a write", " ms"), ("load_s", "load", " s"), ("arrow_ratio", "arrow_ratio", "")],
    "bench_sweep": [("ratio", "sweep / one replay", "×"), ("arrow_ratio", "arrow_ratio", "")],
    "bench_sweep_regime": [("ratio", "sweep / one replay", "×"), ("arrow_ratio", "arrow_ratio", "")],
    "bench_closed_loop": [("ratio", "ratio", "×")],
    "bench_fleet": [("ratio", "one process / cluster", "×")],
    "bench_belief": [("floor_ratio", "ours / floor", "×"), ("arrow_ratio", "arrow_ratio", "")],
    "bench_fit_halflife": [("floor_ratio", "ours / floor", "×"), ("ratio", "lifelines / ours", "×"),
                           ("arrow_ratio", "arrow_ratio", "")],
    "bench_io": [("polars_ratio", "polars / ours", "×"), ("peak_rss_mb", "peak RSS", " MB"),
                 ("arrow_ratio", "arrow_ratio", "")],
    "bench_decide_calibration": [("false_ship", "false ship", ""), ("coverage", "coverage", ""),
                                 ("power", "power", "")],
    "bench_decide_planted_prior": [("ship", "ships", ""), ("oracle_power", "oracle", ""),
                                   ("harmful", "harmful shipped", "")],
    "bench_decide_fleets": [("nested", "nested null ships (by user)", ""), ("by_session", "by session", ""),
                            ("unbalanced", "unbalanced null ships (worst)", ""), ("cr1", "CR1", ""),
                            ("harm_ship", "harm ships", ""), ("harm_allowed", "with allow_harm", ""),
                            ("split_shown", "split shown", ""), ("looks_sequential", "5 looks, sequential", ""),
                            ("looks_plain", "5 looks, plain", "")],
    "bench_ope_coverage": [("ips_ess_ok", "IPS coverage (ESS ok)", ""), ("snips_ess_ok", "SNIPS", ""),
                           ("dr_ess_ok", "DR", ""), ("ips", "IPS, every world", ""),
                           ("ess_below_floor", "worlds warned (ESS)", "")],
    "bench_constraint_bound": [("pass_rate", "pass rate", ""), ("power_mean", "power at 0.07", ""),
                               ("former", "former rule", ""), ("wald", "Wald", ""),
                               ("percentile", "percentile", "")],
    "bench_derive_coverage": [("pooled", "pooled coverage", ""), ("coverage_min", "per coefficient min", ""),
                              ("coverage_max", "max", ""), ("equal_age_two_sided", "equal-age two-sided", "")],
}


#: Issue 33's bar for every benchmark that also runs ours on Arrow-backed input.
ARROW_TARGET = ("arrow_ratio", ">=", 0.8)


def _default(stem: str):
    return (DESCRIPTIONS.get(stem, f"`{stem}.py` (see its docstring)"), FIELDS.get(stem, [("ratio", "ratio", "")]),
            [])


def parse_line(line: str) -> dict:
    """A RESULT line's fields (``bench`` included), values as text."""
    if not _RESULT.match(line.strip()):
        raise ValueError(f"not a RESULT line: {line!r}")
    return dict(part.split("=", 1) for part in line.split()[1:])


def load(results: Path = RESULTS) -> dict:
    """``{script stem: [fields of each kept run, oldest first]}`` from the results directory."""
    out = {}
    for path in sorted(results.glob("bench_*.txt")):
        runs = [parse_line(x) for x in path.read_text().splitlines() if x.startswith("RESULT ")]
        if runs:
            out[path.stem] = runs[-KEEP:]
    return out


def _fmt(values: list, unit: str) -> str:
    lo, hi = min(values), max(values)
    digits = 2 if max(abs(lo), abs(hi)) < 100 else 0
    text = f"{lo:.{digits}f}" if f"{lo:.{digits}f}" == f"{hi:.{digits}f}" else f"{lo:.{digits}f}–{hi:.{digits}f}"
    return text + unit


def row(stem: str, runs: list) -> str:
    """One table row: benchmark, what against what, figures (ranges over runs), targets."""
    what, fields, targets = BENCHES.get(stem, _default(stem))
    if any("arrow_ratio" in r for r in runs) and ARROW_TARGET[0] not in {t[0] for t in targets}:
        targets = [*targets, ARROW_TARGET]
    shown = []
    for field, label, unit in fields:
        values = [float(r[field]) for r in runs if field in r]
        if values:
            shown.append(f"{label} {_fmt(values, unit)}")
    verdicts = []
    for field, op, bound in targets:
        values = [float(r[field]) for r in runs if field in r]
        if not values:
            verdicts.append(f"`{field}` {op} {bound}: not measured")
            continue
        met = [v <= bound if op == "<=" else v >= bound for v in values]
        word = "met" if all(met) else "NOT met" if not any(met) else "met in some runs"
        verdicts.append(f"`{field}` {op} {bound}: {_fmt(values, '')}, {word}")
    size = runs[-1].get("rows") or runs[-1].get("events") or runs[-1].get("items") or runs[-1].get("matchers")
    runs_text = f"{len(runs)} run{'s' if len(runs) > 1 else ''}" + (f", n={size}" if size else "")
    return (f"| `{stem}.py` | {what} | {'; '.join(shown)} ({runs_text}) | "
            f"{'; '.join(verdicts) if verdicts else '—'} |")


def render(results: Path = RESULTS, scripts=None) -> str:
    """The table (header and one row per benchmark script; a script without a saved run says so)."""
    saved = load(results)
    scripts = scripts if scripts is not None else sorted(p.stem for p in (ROOT / "benchmarks").glob("bench_*.py"))
    lines = ["| benchmark | what against what | figures (range over the saved runs) | targets |",
             "|---|---|---|---|"]
    for stem in scripts:
        if stem in saved:
            lines.append(row(stem, saved[stem]))
        else:
            what = BENCHES.get(stem, _default(stem))[0]
            lines.append(f"| `{stem}.py` | {what} | no saved run (`python scripts/bench_table.py run {stem}`) | — |")
    return "\n".join(lines)


def readme_table(text: str) -> str:
    """The README's table between the markers."""
    if START not in text or END not in text:
        raise ValueError(f"README.md has no {START} ... {END} block")
    return text.split(START, 1)[1].split(END, 1)[0].strip("\n")


def write_readme(table: str, path: Path = README) -> bool:
    """Put ``table`` between the README's markers; returns whether the file changed."""
    text = path.read_text()
    new = text.split(START, 1)[0] + START + "\n" + table + "\n" + END + text.split(END, 1)[1]
    if new != text:
        path.write_text(new)
    return new != text


def _versions() -> str:
    parts = []
    for name in ("pandas", "numpy", "pyarrow", "polars", "duckdb"):
        try:
            mod = __import__(name)
            parts.append(f"{name}={mod.__version__}")
        except ImportError:
            pass
    return " ".join(parts)


def save(stem: str, line: str, note: str = "", results: Path = RESULTS) -> Path:
    """Append one run (a ``#`` line, then the RESULT line) to ``<stem>.txt``, keeping the last :data:`KEEP`."""
    parse_line(line)
    results.mkdir(parents=True, exist_ok=True)
    path = results / f"{stem}.txt"
    old = path.read_text().splitlines() if path.exists() else []
    runs, head = [], None
    for x in old:
        if x.startswith("#"):
            head = x
        elif x.startswith("RESULT "):
            runs.append((head or "# (no note)", x))
            head = None
    stamp = dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%dT%H:%MZ")
    meta = (f"# {stamp} {platform.machine()} {os.cpu_count()} cores python={platform.python_version()} "
            f"{_versions()}" + (f" {note}" if note else ""))
    runs.append((meta, line.strip()))
    path.write_text("".join(f"{h}\n{r}\n" for h, r in runs[-KEEP:]))
    return path


def last_result(output: str) -> str:
    lines = [x for x in output.splitlines() if x.startswith("RESULT ")]
    if not lines:
        raise SystemExit("no RESULT line in the output")
    return lines[-1]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run", help="run benchmarks at full size, save their RESULT lines, render the table")
    r.add_argument("scripts", nargs="+")
    r.add_argument("--note", default="", help="appended to the run's # line (e.g. 'machine shared, noisy')")
    a = sub.add_parser("add", help="save the last RESULT line of a benchmark's saved output")
    a.add_argument("script")
    a.add_argument("output")
    a.add_argument("--note", default="")
    c = sub.add_parser("render", help="rewrite the README table from the saved results")
    c.add_argument("--check", action="store_true", help="exit 1 when the README table differs")
    args = ap.parse_args(argv)
    if args.cmd == "run":
        for stem in args.scripts:
            stem = Path(stem).stem
            proc = subprocess.run([sys.executable, str(ROOT / "benchmarks" / f"{stem}.py")], capture_output=True,
                                  text=True, env=dict(os.environ, TQDM_DISABLE="1"))
            sys.stdout.write(proc.stdout)
            if proc.returncode != 0:
                sys.stderr.write(proc.stderr[-3000:])
                print(f"{stem} exited {proc.returncode}; not saved", file=sys.stderr)
                continue
            print(f"saved to {save(stem, last_result(proc.stdout), args.note)}")
    elif args.cmd == "add":
        stem = Path(args.script).stem
        print(f"saved to {save(stem, last_result(Path(args.output).read_text()), args.note)}")
    if args.cmd == "render" and args.check:
        same = readme_table(README.read_text()) == render()
        print("README table matches the saved results" if same else "README table differs: run render")
        return 0 if same else 1
    changed = write_readme(render())
    print("README table rewritten" if changed else "README table already up to date")
    return 0


if __name__ == "__main__":
    sys.exit(main())
