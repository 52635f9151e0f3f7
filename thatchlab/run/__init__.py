"""The main job: every engine replayed on the sample logs, a sweep, the fits, a report, an export.

``thatchlab run`` (and :func:`run_all`) does a researcher's whole loop on
one data directory: replay each engine under what production runs, run a
small honest holdout sweep of the prediction engine, fit the prior, the
belief half-lives and the derive coefficients, decide what ships
(:mod:`thatchlab.decide.policy`), write an HTML report with figures
(:mod:`thatchlab.report`), export the tuned state as a SQLite store with its
manifest, and save the results (``results/``) with a notebook that reloads
them (``run.ipynb``). Each log that is absent from the data directory is
skipped and the report says so.
"""

from __future__ import annotations

import time
from pathlib import Path

from thatchlab.core.errors import InputError
from thatchlab.core.progress import progress
from thatchlab.datasets import samples_dir
from thatchlab.run._common import (  # noqa: F401
    ALPHA,
    DECISIONS,
    DEFAULT_SWEEP_SPACE,
    FORECAST_METRIC,
    GLOSSARY,
    GUARD_METRIC,
    LEVEL,
    REGIME_METRICS,
    SWEEP_METRICS,
    THRESHOLD_METRIC,
    RunResult,
    Section,
    load_config,
    with_releases,
)
from thatchlab.run._report import _write_report, what_ships
from thatchlab.run._results import decisions_of, save_results, write_notebook
from thatchlab.run._steps import (
    _anticipation,
    _behavior,
    _belief,
    _calibration,
    _export,
    _prediction,
    _prior,
    _sweep,
)

__all__ = ["run_all", "RunResult", "DEFAULT_SWEEP_SPACE", "load_config", "what_ships", "Section"]


def run_all(data_dir=None, out_dir="reports/run", config=None, embedder=None,
            sweep_space=None, show_progress=None, release=None) -> RunResult:
    """Run the main job on ``data_dir`` and write the report and export to ``out_dir``.

    The previous output of a run in ``out_dir`` is replaced: ``index.html`` and ``figures/``, the
    export ``thatch.db`` with its manifest, ``results/`` and ``run.ipynb``. Every engine replays
    its system's newest production release unless ``release`` or the config names another; the
    report header, the manifest and ``results/job.json`` name each engine's release.

    Parameters
    ----------
    data_dir : str or os.PathLike, default=None
        The directory holding the logs; None means the samples bundled with the package
        (:func:`thatchlab.datasets.samples_dir`), so the job runs wherever thatchlab is installed.
    out_dir : str or os.PathLike, default="reports/run"
        The directory for the report and the export (created when missing).
    config : str or os.PathLike or dict, default=None
        A path (JSON/TOML, see :func:`load_config`) or a dict of per-engine parameters and
        ``{"sweep": {"space": {...}, "holdout": 0.2}}``.
    embedder : Embedder, default=None
        What every text is embedded with (the bundled model when None).
    sweep_space : dict, default=None
        The prediction sweep's space (None: the config's ``sweep.space``, else the default space).
    show_progress : bool, default=None
        Show a progress bar over the steps (None: at a terminal or in Jupyter, see
        :func:`thatchlab.core.progress.progress`).
    release : dict, default=None
        ``{system: name}``, e.g. ``{"thatch": "v0.1.30"}``; over the config's ``[release]`` table.

    Returns
    -------
    RunResult
        Where the report, export, notebook and results went, and what each step found.

    Raises
    ------
    InputError
        ``data_dir`` is not a directory or holds none of the logs, ``out_dir`` is (or lies under) a
        file, or the config does not read.

    See Also
    --------
    what_ships : the table of what the job ships.
    """
    import matplotlib  # heavy: matplotlib only when a figure is drawn

    matplotlib.use("Agg", force=False)
    if data_dir is None:
        data_dir = samples_dir()
    data_dir, out_dir = Path(data_dir), Path(out_dir)
    _check_dirs(data_dir, out_dir)
    cfg = config if isinstance(config, dict) else load_config(config)
    cfg = with_releases(cfg, release)
    out_dir.mkdir(parents=True, exist_ok=True)
    state: dict = {}
    ctx = dict(data=data_dir, out=out_dir, cfg=cfg, embedder=embedder, state=state,
               sweep_space=sweep_space)
    sections, timings, metrics, skipped = _run_steps(ctx, show_progress)
    if not sections:
        raise InputError(f"{data_dir}: holds none of the logs the main job reads (interactions.jsonl, "
                         "behavior_interactions.jsonl, memory_log.jsonl, recall_log.jsonl, events.jsonl with "
                         "recalls.jsonl); nothing was run")
    t0 = time.perf_counter()
    export_path, manifest_path = _export(ctx)
    timings["export"] = time.perf_counter() - t0
    results = save_results(ctx, metrics)
    report_path = _write_report(out_dir, sections, timings, skipped, ctx, export_path)
    notebook_path = write_notebook(ctx, results, export_path, manifest_path)
    return RunResult(out_dir, report_path, export_path, manifest_path, metrics, timings, sections, skipped,
                     decisions_of(state), notebook_path, results)


def _check_dirs(data_dir: Path, out_dir: Path) -> None:
    """The data directory exists; the first part of ``out_dir`` that exists is a directory."""
    if data_dir.exists() and not data_dir.is_dir():
        raise InputError(f"{data_dir}: is a file; expected the data directory holding the logs")
    if not data_dir.is_dir():
        raise InputError(f"{data_dir}: no such data directory")
    for where in (out_dir, *out_dir.parents):  # the first part of the path that exists must be a directory
        if where.exists():
            if not where.is_dir():
                named = "is a file" if where == out_dir else f"holds the file {where}"
                raise InputError(f"{out_dir}: {named}; expected a directory for the report and the export")
            break


def _run_steps(ctx: dict, show_progress) -> tuple:
    """Every step in order, timed; a step without its log is skipped. Returns the report's
    sections, the timings, each step's metrics and the skipped steps."""
    sections, timings, metrics, skipped = [], {}, {}, []
    steps = [("prediction replay", _prediction), ("behavior replay", _behavior),
             ("prediction sweep", _sweep), ("prior fit", _prior), ("belief replay and fit", _belief),
             ("calibration replay and fit", _calibration), ("anticipation replay", _anticipation)]
    for name, step in progress(steps, desc="thatchlab run", enabled=show_progress):
        t0 = time.perf_counter()
        sec = step(ctx)
        timings[name] = time.perf_counter() - t0
        if sec is None:
            skipped.append(name)
            continue
        sections.append(sec)
        metrics[name] = ctx["state"].get(f"{name}:metrics", {})
    return sections, timings, metrics, skipped
