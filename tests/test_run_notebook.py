"""The main job's run.ipynb: it runs under nbval from its own folder, and the results it loads are the job's."""

import json
import math
import os
import shutil
import subprocess
import sys

import pandas as pd
import pytest

from tests._main_job import main_job


@pytest.fixture(scope="module")
def result(tmp_path_factory, real_embedder):
    """The main job on the bundled samples, run once per session (shared with test_run.py)."""
    return main_job(tmp_path_factory, real_embedder)


def _same(a, b) -> bool:
    """Equal, with NaN saved as JSON null."""
    if isinstance(a, float) and math.isnan(a):
        return b is None
    if isinstance(a, (int, float)) and not isinstance(a, bool) and isinstance(b, (int, float)):
        return a == pytest.approx(b, rel=1e-12)
    return a == b


def test_the_notebook_stores_no_outputs_and_reads_paths_relative_to_its_folder(result):
    import nbformat

    nb = nbformat.read(result.notebook_path, as_version=4)
    nbformat.validate(nb)
    assert result.notebook_path == result.out_dir / "run.ipynb"
    assert nb.cells[0].cell_type == "markdown" and nb.cells[0].source.startswith("# thatchlab run")
    assert nb.cells[-1].cell_type == "markdown" and "thatch.manifest.json" in nb.cells[-1].source
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert code and all(c.outputs == [] and c.execution_count is None for c in code)
    source = "\n".join(c.source for c in code)
    assert str(result.out_dir) not in source and "/tmp" not in source
    for name in ("decisions.json", "sweep.parquet", "fits.json", "metrics.json"):
        assert f'"{name}"' in source
    for figure in ("decision_forest", "metric_heatmap", "pareto_plot", "currency_curves", "reliability_diagram"):
        assert f"plots.{figure}(" in source


def test_the_saved_results_reload_to_the_run_result(result):
    from thatchlab.decide import Decision

    folder = result.out_dir / "results"
    assert set(result.results) == {"job", "metrics", "decisions", "sweep", "fits", "calibration_reliability"}
    assert all(p.parent == folder and p.is_file() for p in result.results.values())
    saved = json.loads((folder / "decisions.json").read_text())
    assert set(saved) == set(result.decisions) == {"prediction", "beliefs", "calibration"}
    for key, decision in result.decisions.items():
        back = Decision.from_dict(saved[key])
        assert back.params == decision.params and back.default == decision.default
        assert back.shipped_parameters() == decision.shipped_parameters()
        assert back.to_records() == decision.to_records()
    assert result.decisions["prediction"].shipped_parameters() == ["p0"]  # the sample world's planted change
    metrics = json.loads((folder / "metrics.json").read_text())
    assert set(metrics) == set(result.metrics)
    for step, values in result.metrics.items():
        assert set(metrics[step]) == set(values)
        assert all(_same(v, metrics[step][k]) for k, v in values.items()), step
    rows = pd.read_parquet(folder / "sweep.parquet")
    assert len(rows) == result.metrics["prediction sweep"]["n_configs"]
    job = json.loads((folder / "job.json").read_text())
    assert job["policy"]["level"] == pytest.approx(0.05 / 4) and len(job["policy"]["rules"]) == 4
    fits = json.loads((folder / "fits.json").read_text())
    assert fits["prior"]["k"] == pytest.approx(result.metrics["prior fit"]["k"])
    assert fits["prior_candidate"]["p0"] == result.decisions["prediction"].params.p0


def test_run_notebook_passes_under_nbval_in_a_moved_folder(result, tmp_path):
    """The folder moved elsewhere, the notebook still finds its results (relative paths)."""
    moved = shutil.copytree(result.out_dir, tmp_path / "moved", ignore=shutil.ignore_patterns("*.db"))
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TQDM_DISABLE": "1"}
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--nbval",
                           "--nbval-current-env", "run.ipynb"], cwd=moved, env=env, capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    assert " passed" in proc.stdout and "failed" not in proc.stdout
    assert not any(moved.rglob(".pytest_cache")) and (moved / "run.ipynb").read_text() == \
        result.notebook_path.read_text()  # nbval leaves the notebook as written
