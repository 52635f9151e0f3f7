"""``run.ipynb``: the notebook ``thatchlab run`` writes beside its report, for a researcher to continue from.

The notebook stores no outputs and reads the job's saved results by paths
relative to its own folder, so the folder can be moved or shared. Each code
cell carries the ``nbval-ignore-output`` tag: ``pytest --nbval`` checks that
it runs, not what it prints (nothing is stored to compare with).
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["RESULT_FILES", "FIGURES", "write_run_notebook"]

#: What the notebook reads, by key: the file names under ``results/`` the main job writes.
RESULT_FILES = {
    "job": "job.json",                        # what ran: parameters, the policy, the sweep's split
    "metrics": "metrics.json",                # RunResult.metrics: {step: {metric: value}}
    "decisions": "decisions.json",            # {key: Decision.to_dict()}, keys as in the manifest
    "sweep": "sweep.parquet",                 # the prediction sweep's rows
    "fits": "fits.json",                      # the prior, half-life and derive fits
    "calibration_reliability": "calibration_reliability.parquet",  # the reliability curves
}

_TAGS = {"tags": ["nbval-ignore-output"]}


def _load(present) -> str:
    lines = ["%matplotlib inline", "import json", "from pathlib import Path", "", "import pandas as pd", "",
             "from thatchlab import decide, plots", "from thatchlab.decide import policy", "from thatchlab.sweep import pareto", "",
             'results = Path("results")  # beside this notebook: paths are relative to its folder', "",
             "", "def load_json(name):",
             '    return json.loads((results / name).read_text(encoding="utf-8"))', "", ""]
    if "job" in present:
        lines.append('job = load_json("job.json")')
    if "metrics" in present:
        lines.append('metrics = load_json("metrics.json")')
    if "decisions" in present:
        lines += ['decisions = {key: decide.Decision.from_dict(d, f"decisions.json[{key}]")',
                  '             for key, d in load_json("decisions.json").items()}']
    if "sweep" in present:
        lines.append('sweep = pd.read_parquet(results / "sweep.parquet")')
    if "fits" in present:
        lines.append('fits = load_json("fits.json")')
    if "decisions" in present:
        lines += ["for decision in decisions.values():", "    print(decision.summary())"]
    return "\n".join(lines)


_METRICS = """\
pd.DataFrame([{"step": step, "metric": name, "value": value}
              for step, values in metrics.items() for name, value in values.items()]).set_index(["step", "metric"])"""

_EVIDENCE = """\
columns = ["parameter", "default", "candidate", "shipped", "delta", "ci_lower", "ci_upper", "reason"]
pd.concat({key: d.evidence[columns] for key, d in decisions.items()}, names=["decision", "row"])"""

_FORESTS = """\
for part in decisions["prediction"].parts:  # the prior and the nudge decisions, joined into one
    display(plots.decision_forest(part))"""

_HEATMAP = """\
prediction = decisions["prediction"]
base = prediction.default  # what production runs (or the configured values): the comparison's default
forecast, nudge = job["sweep"]["forecast_parameters"], job["sweep"]["nudge_parameters"]
plots.metric_heatmap(policy.rows_at(sweep, nudge, base), forecast[0], forecast[1], policy.FORECAST_METRIC)"""

_PARETO = """\
prediction = decisions["prediction"]
base, swept = prediction.default, job["sweep"]["forecast_parameters"] + job["sweep"]["nudge_parameters"]
at_base = policy.rows_at(sweep, job["sweep"]["forecast_parameters"], base)  # production's K and P0
front = pareto(at_base, list(policy.REGIME_METRICS))
nudge = next(d for d in prediction.parts if d.metric == policy.THRESHOLD_METRIC)
plots.pareto_plot(at_base, front, *policy.REGIME_METRICS, default=policy.row_at(sweep, swept, base),
                  chosen=policy.row_at(sweep, swept, nudge.params))"""

_CURRENCY = """\
from thatchlab.core.params import BeliefParams

plots.currency_curves(BeliefParams.from_dict(job["params"]["belief"]),
                      fitted=pd.Series(fits["belief"]["half_life_days"], dtype=float))"""

_RELIABILITY = """\
plots.reliability_diagram(pd.read_parquet(results / "calibration_reliability.parquet"))"""


#: The figures the notebook can redraw, each needing some of :data:`RESULT_FILES`.
FIGURES = {"forests": {"decisions", "sweep"}, "heatmap": {"job", "decisions", "sweep"},
           "pareto": {"job", "decisions", "sweep"}, "currency": {"job", "fits"},
           "reliability": {"calibration_reliability"}}


def write_run_notebook(path, *, present, figures=tuple(FIGURES), report="index.html", export=None,
                       manifest=None) -> Path:
    """Write ``run.ipynb`` to ``path`` (no outputs stored, fixed cell ids, so reruns write the same bytes).

    Parameters
    ----------
    path : str or path-like
        The notebook file; the results are read from ``results/`` beside it.
    present : iterable of str
        The keys of :data:`RESULT_FILES` the job saved; cells needing a missing one are left out.
    figures : iterable of str, default=tuple(FIGURES)
        The keys of :data:`FIGURES` to redraw (those the report draws).
    report, export, manifest : str or None
        File names beside the notebook (``None``: not written); ``report``
        defaults to ``"index.html"``, the others to None.

    Returns
    -------
    pathlib.Path
        ``path``.

    See Also
    --------
    render_run_report : the report the notebook sits beside.
    """
    import nbformat  # heavy: nbformat loads its JSON schemas; only writing a notebook needs it
    from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook  # heavy: as above

    present = set(present)
    figures = {f for f in figures if FIGURES[f] <= present}
    cells = [new_markdown_cell(
        "# thatchlab run: the main job's results\n\n"
        f"`thatchlab run` wrote this notebook beside its report (`{report}`). It loads what the job saved "
        "in `results/` (the decisions as JSON, the sweep's rows and the calibration curves as Parquet, the "
        "fits and the replay metrics as JSON) and redraws the report's main figures with `thatchlab.plots`. "
        "Paths are relative to this folder, so it can be moved; run the cells from here "
        "(`jupyter lab run.ipynb`).", id="title"),
        new_code_cell(_load(present), id="load", metadata=_TAGS)]

    def add(title, text, source, cell_id):
        cells.append(new_markdown_cell(f"## {title}\n\n{text}", id=f"{cell_id}-md"))
        cells.append(new_code_cell(source, id=cell_id, metadata=_TAGS))

    if "metrics" in present:
        add("Replay metrics", "Each step's metrics, as in the report's tables.", _METRICS, "metrics")
    if "decisions" in present:
        add("What ships, and why", "Each decision's evidence, one row per parameter it considered.",
            _EVIDENCE, "evidence")
    if "forests" in figures:
        add("The decisions' intervals", "The prediction decisions': each change alone and each configuration "
            "tested as a whole, on the test stretch; `plots.decision_forest(decisions[\"beliefs\"])` draws "
            "the half-life decision's the same way.", _FORESTS, "forests")
    if "heatmap" in figures:
        add("The sweep's validation log-loss", "The forecast parameters at production's nudge parameters.",
            _HEATMAP, "heatmap")
    if "pareto" in figures:
        add("Interruptions against wrong silent follows", "Every configuration at production's K and P0, "
            "the Pareto front, production's default and what the threshold decision ships.", _PARETO, "pareto")
    if "currency" in figures:
        add("Belief currency", "The priors and the half-lives fitted on the whole memory log.", _CURRENCY,
            "currency")
    if "reliability" in figures:
        add("Confidence calibration", "Caller and derived confidence against consumption.", _RELIABILITY,
            "reliability")
    files = [f"- `{export}`: the exported store (`thatchlab.store.import_sqlite`)" if export else "",
             f"- `{manifest}`: its manifest: what ships, each decision's records, where each value goes "
             "(environment lines, recommended production changes)" if manifest else "",
             f"- `{report}`: the report, with the figures this notebook leaves out (the replays' "
             "reliability and regimes, the prior's profile, the anticipation patterns: they need the "
             "replays, which `thatchlab.replay` reruns from the logs)"]
    cells.append(new_markdown_cell("## Where to go next\n\n" + "\n".join(f for f in files if f), id="next"))
    nb = new_notebook(cells=cells, metadata={
        "kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"},
        "language_info": {"name": "python"}})
    nbformat.validate(nb)
    path = Path(path)
    nbformat.write(nb, path)
    return path
