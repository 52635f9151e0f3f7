"""The README benchmark table is what ``scripts/bench_table.py`` makes of the saved RESULT lines."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def bench_table():
    spec = importlib.util.spec_from_file_location("bench_table", ROOT / "scripts" / "bench_table.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_readme_table_matches_the_saved_results(bench_table):
    readme = bench_table.readme_table((ROOT / "README.md").read_text())
    assert readme == bench_table.render(), "run: python scripts/bench_table.py render"


def test_saved_results_are_result_lines_of_their_benchmark(bench_table):
    files = sorted((ROOT / "benchmarks" / "results").glob("*.txt"))
    assert files, "no saved benchmark results"
    scripts = {p.stem for p in (ROOT / "benchmarks").glob("bench_*.py")}
    for path in files:
        assert path.stem in scripts, f"{path.name}: no benchmark of that name"
        lines = path.read_text().splitlines()
        runs = [x for x in lines if x.startswith("RESULT ")]
        assert 1 <= len(runs) <= bench_table.KEEP
        assert all(x.startswith("#") or x.startswith("RESULT ") for x in lines)
        for line in runs:
            assert bench_table.parse_line(line)["bench"] == path.stem.removeprefix("bench_")


def test_every_benchmark_has_a_row(bench_table):
    table = bench_table.render().splitlines()
    scripts = sorted(p.stem for p in (ROOT / "benchmarks").glob("bench_*.py"))
    assert len(table) == 2 + len(scripts)
    assert [line.split(" | ")[0] for line in table[2:]] == [f"| `{s}.py`" for s in scripts]


def test_rows_show_ranges_and_targets(bench_table, tmp_path):
    bench_table.save("bench_fit_prior", "RESULT bench=fit_prior items=200000 pairs=300 ratio=0.900 "
                     "same_reduction_ratio=1.2 unique_ratio=40 arrow_ratio=0.95", results=tmp_path)
    bench_table.save("bench_fit_prior", "RESULT bench=fit_prior items=200000 pairs=300 ratio=1.250 "
                     "same_reduction_ratio=1.5 unique_ratio=45 arrow_ratio=0.99", results=tmp_path)
    table = bench_table.render(tmp_path, scripts=["bench_fit_prior", "bench_sweep"])
    rows = table.splitlines()
    assert rows[2].endswith("| reduced scipy fit / ours 0.90–1.25×; bincount form / ours 1.20–1.50×; "
                            "`np.unique` form / ours 40.00–45.00×; arrow_ratio 0.95–0.99 (2 runs, n=200000) | "
                            "`ratio` >= 1.0: 0.90–1.25, met in some runs; `arrow_ratio` >= 0.8: 0.95–0.99, met |")
    assert rows[3].endswith("| no saved run (`python scripts/bench_table.py run bench_sweep`) | — |")
    for _ in range(3):
        bench_table.save("bench_fit_prior", "RESULT bench=fit_prior items=200000 ratio=2.0", results=tmp_path)
    kept = (tmp_path / "bench_fit_prior.txt").read_text().splitlines()
    assert len(kept) == 2 * bench_table.KEEP and kept[1] == "RESULT bench=fit_prior items=200000 ratio=2.0"
    assert "ratio >= 1.0" not in bench_table.render(tmp_path, scripts=["bench_fit_prior"])
    assert "`ratio` >= 1.0: 2.00, met |" in bench_table.render(tmp_path, scripts=["bench_fit_prior"])
    with pytest.raises(ValueError, match="not a RESULT line"):
        bench_table.save("bench_fit_prior", "ratio=2", results=tmp_path)
