"""The main job's results saved under ``out_dir/results/`` for ``run.ipynb`` (and anyone) to reload.

``job.json`` (what ran: each engine's parameters, the policy, the sweep's
split), ``metrics.json`` (:attr:`RunResult.metrics`), ``decisions.json``
(``{key: Decision.to_dict()}``, keys as in the manifest), ``sweep.parquet``
(the prediction sweep's rows), ``fits.json`` (the prior, half-life and derive
fits) and ``calibration_reliability.parquet``. Nothing holds a wall clock.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd

from thatchlab.decide import policy as pol
from thatchlab.report import RESULT_FILES, write_run_notebook
from thatchlab.run._common import _PARAMS, _params, release_of
from thatchlab.run._steps import _policy


def _jsonable(v):
    """``v`` with numpy scalars as Python ones and NaN/inf as None (strict JSON)."""
    if isinstance(v, dict):
        return {str(k): _jsonable(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_jsonable(x) for x in v]
    if isinstance(v, np.generic):
        v = v.item()
    if isinstance(v, float) and not math.isfinite(v):
        return None
    if v is None or isinstance(v, (bool, int, float, str)):
        return v
    return str(v)


def _frame(df: pd.DataFrame) -> dict:
    """A fit's summary table as ``{row: {column: value}}``."""
    return _jsonable(df.to_dict(orient="index"))


def _write_json(path: Path, data) -> None:
    path.write_text(json.dumps(_jsonable(data), indent=1, allow_nan=False) + "\n", encoding="utf-8")


def _write_parquet(path: Path, df: pd.DataFrame) -> None:
    rows = pd.DataFrame(df).reset_index(drop=True)
    rows.attrs = {}  # the sweep's sums and settings: not part of the rows
    rows.to_parquet(path, index=False)


def decisions_of(state: dict) -> dict:
    """The job's decisions by the manifest's keys: ``prediction``, ``beliefs``, ``calibration``."""
    pairs = (("prediction", "decision"), ("beliefs", "belief decision"), ("calibration", "calibration decision"))
    return {key: state[name] for key, name in pairs if state.get(name) is not None}


def _fits(state: dict) -> dict:
    out = {}
    for key, name in (("prior", "prior"), ("prior_before_test", "prior before test")):
        fit = state.get(name)
        if fit is not None:
            out[key] = {"k": fit.k_, "p0": fit.p0_, "log_likelihood": fit.log_likelihood_,
                        "boundary": bool(fit.boundary_), "objective": fit.objective_,
                        "summary": _frame(fit.summary_)}
    if state.get("prior candidate"):
        out["prior_candidate"] = dict(state["prior candidate"])
    if state.get("belief fit") is not None:
        fit = state["belief fit"]
        out["belief"] = {"half_life_days": fit.half_life_.to_dict(), "summary": _frame(fit.summary_)}
    if state.get("derive fit") is not None:
        out["derive"] = {"summary": _frame(state["derive fit"].summary_)}
    return out


def _job(ctx, policy) -> dict:
    st = ctx["state"]
    job = {"params": {e: _params(ctx["cfg"], e).to_dict() for e in _PARAMS if e in st},
           "configured": [e for e in _PARAMS if ctx["cfg"].get(e)],
           "releases": {e: release_of(ctx["cfg"], e) for e in _PARAMS if e in st},
           "policy": {"alpha": policy.alpha, "level": policy.level, "holdout": policy.holdout,
                      "rules": [r._asdict() for r in policy.rules]}}
    out = st.get("prediction outcome")
    if out is not None:
        job["sweep"] = {"space": out.space, "forecast_parameters": list(out.forecast_space),
                        "nudge_parameters": list(out.nudge_space), "forecast_metric": pol.FORECAST_METRIC,
                        "threshold_metric": pol.THRESHOLD_METRIC, "guard_metric": pol.GUARD_METRIC,
                        "regime_metrics": list(pol.REGIME_METRICS), "guard": out.guard,
                        "candidate": out.candidate, "n_configs": len(out.sweep)}
    return job


def save_results(ctx, metrics: dict) -> dict:
    """Write the results under ``ctx["out"] / "results"``; ``{key: path}`` of what was written.

    A result file of an earlier run that this run does not write is removed, so the folder
    always describes one run.
    """
    st = ctx["state"]
    folder = ctx["out"] / "results"
    folder.mkdir(parents=True, exist_ok=True)
    paths = {key: folder / name for key, name in RESULT_FILES.items()}
    written = {}
    _write_json(paths["job"], _job(ctx, _policy(ctx)))
    written["job"] = paths["job"]
    _write_json(paths["metrics"], metrics)
    written["metrics"] = paths["metrics"]
    decisions = decisions_of(st)
    if decisions:
        _write_json(paths["decisions"], {k: d.to_dict() for k, d in decisions.items()})
        written["decisions"] = paths["decisions"]
    if st.get("sweep") is not None:
        _write_parquet(paths["sweep"], st["sweep"])
        written["sweep"] = paths["sweep"]
    fits = _fits(st)
    if fits:
        _write_json(paths["fits"], fits)
        written["fits"] = paths["fits"]
    if st.get("calibration") is not None:
        _write_parquet(paths["calibration_reliability"], st["calibration"].reliability)
        written["calibration_reliability"] = paths["calibration_reliability"]
    for key, path in paths.items():
        if key not in written and path.is_file():
            path.unlink()
    return written


def write_notebook(ctx, written: dict, export_path, manifest_path) -> Path:
    """``run.ipynb`` beside the report, reading ``written``'s results and redrawing the report's figures."""
    st = ctx["state"]
    out = st.get("prediction outcome")
    figures = ["forests"] if out is not None else []
    if out is not None and out.prior is not None and len(out.forecast_space) >= 2:
        figures.append("heatmap")
    if out is not None and out.nudge is not None:
        figures.append("pareto")
    if st.get("belief fit") is not None:
        figures.append("currency")
    if st.get("calibration") is not None:
        figures.append("reliability")
    return write_run_notebook(ctx["out"] / "run.ipynb", present=written, figures=figures,
                              export=export_path.name if export_path else None,
                              manifest=manifest_path.name if manifest_path else None)
