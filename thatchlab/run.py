"""The main job: every engine replayed on the sample logs, a sweep, the fits, a report, an export.

``thatchlab run`` (and :func:`run_all`) does a researcher's whole loop on
one data directory: replay each engine under production defaults, run a
small honest holdout sweep of the prediction engine, fit the prior, the
belief half-lives and the derive coefficients, write an HTML report with
figures, and export the tuned state as a SQLite store with its manifest.
Each log that is absent from the data directory is skipped and the report
says so.
"""

from __future__ import annotations

import json
import platform
import time
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path

import pandas as pd

from thatchlab import __version__
from thatchlab.core.errors import InputError, ThatchlabError
from thatchlab.core.params import AnticipationParams, BeliefParams, CalibrationParams, ScoringParams
from thatchlab.core.progress import progress

__all__ = ["run_all", "RunResult", "DEFAULT_SWEEP_SPACE", "load_config"]

#: The small sweep the main job runs on the prediction engine (holdout 0.2). The prior
#: (K, P0) is decided on log-loss, with the empirical-Bayes fit on the log before the test
#: stretch as the candidate (the grid's validation winner when the fit is unusable); the
#: nudge threshold on nudge_net_rate (which items surface), constrained to wrong silent
#: follows no worse than production's on validation. Every list gains the value production
#: runs (and the fitted values), so each change can be compared with it alone.
DEFAULT_SWEEP_SPACE = {"k": [2.0, 5.0, 10.0], "p0": [0.2, 0.35, 0.5], "threshold": [0.5, 0.55, 0.6, 0.65]}
#: The metrics the two decisions use, and the constraint's.
FORECAST_METRIC = "log_loss"
THRESHOLD_METRIC = "nudge_net_rate"
GUARD_METRIC = "wrong_silent_follow_rate"
REGIME_METRICS = ("interruption_rate", GUARD_METRIC)
SWEEP_METRICS = (FORECAST_METRIC, THRESHOLD_METRIC, *REGIME_METRICS)
#: Family-wise error over the main job's decisions (Bonferroni): each of the
#: DECISIONS is made at ALPHA / DECISIONS.
ALPHA = 0.05
#: The prior and the threshold (prediction), the derive coefficients (calibration), the half-lives (belief).
DECISIONS = 4
LEVEL = ALPHA / DECISIONS

_PARAMS = {"prediction": ScoringParams, "behavior": ScoringParams, "belief": BeliefParams,
           "calibration": CalibrationParams, "anticipation": AnticipationParams}


@dataclass
class Section:
    """One part of the report: a title, text, tables and figure files."""

    title: str
    text: str = ""
    tables: list = field(default_factory=list)     # (caption, DataFrame)
    figures: list = field(default_factory=list)    # (caption, relative PNG path)


@dataclass
class RunResult:
    out_dir: Path
    report_path: Path
    export_path: Path | None
    manifest_path: Path | None
    metrics: dict
    timings: dict
    sections: list
    skipped: list


def load_config(path) -> dict:
    """Read a JSON or TOML config: ``{engine: {param: value}, "sweep": {"space": ..., "holdout": ...}}``."""
    if path is None:
        return {}
    p = Path(path)
    if p.is_dir():
        raise InputError(f"{p}: is a directory; expected a JSON or TOML config file")
    if not p.is_file():
        raise InputError(f"{p}: no such config file")
    try:
        if p.suffix.lower() == ".toml":
            import tomllib

            cfg = tomllib.loads(p.read_text(encoding="utf-8"))
        else:
            cfg = json.loads(p.read_text(encoding="utf-8"))
    except (ValueError, OSError) as exc:
        raise InputError(f"{p}: cannot read the config ({exc}); expected JSON or TOML") from None
    if not isinstance(cfg, dict):
        raise InputError(f"{p}: expected a mapping of engine → parameters")
    unknown = set(cfg) - set(_PARAMS) - {"sweep"}
    if unknown:
        raise InputError(f"{p}: unknown section(s) {sorted(unknown)}; expected some of "
                         f"{sorted(_PARAMS) + ['sweep']}")
    return cfg


def _params(cfg, engine):
    """The configured parameters of ``engine``, or what production runs (the parameter reference)."""
    from thatchlab.core.params.production import production_params

    base = production_params(engine)
    return _PARAMS[engine].from_dict({**base.to_dict(), **cfg[engine]}) if cfg.get(engine) else base


#: Where the report links metric names: the docs' glossary, built with
#: ``python -m sphinx -b html docs docs/_build/html`` (anchors ``#term-<metric>``).
GLOSSARY = Path(__file__).resolve().parents[1] / "docs" / "_build" / "html" / "glossary.html"
_METRIC_COLUMNS = ("metric",)  # columns whose cells are metric names


def _glossary_link(name: str, out_dir: Path | None) -> str:
    import html
    import os

    base = GLOSSARY.as_uri() if out_dir is None else os.path.relpath(GLOSSARY, out_dir)
    return f'<a href="{html.escape(base)}#term-{html.escape(name)}">{html.escape(name)}</a>'


def _fmt_table(df: pd.DataFrame, out_dir: Path | None = None, metric_names: bool = False) -> str:
    """An HTML table with no empty index row: a plain row number is dropped, a named index
    (metric names, parameter names) becomes the first column. With ``metric_names`` the
    metric names link to their glossary entries."""
    import html

    metric_cols = _METRIC_COLUMNS + (("",) if df.attrs.get("index_is_metric") else ())
    if not (isinstance(df.index, pd.RangeIndex) and df.index.name is None):
        df = df.reset_index().rename(columns={"index": ""})
    fmt = {}
    for col in df.columns:
        if metric_names and col in metric_cols:
            fmt[col] = lambda v: _glossary_link(str(v), out_dir)
        elif df[col].dtype == object:
            fmt[col] = lambda v: "–" if v is None or v != v else html.escape(str(v))
    return df.to_html(border=0, classes="t", float_format=lambda x: f"{x:.4g}", na_rep="–", index=False,
                      escape=False, formatters=fmt)


def _metrics_frame(metrics: dict) -> pd.DataFrame:
    rows = {k: v for k, v in metrics.items() if isinstance(v, (int, float)) and not isinstance(v, bool)}
    out = pd.DataFrame({"value": pd.Series(rows, dtype="float64")})
    out.attrs["index_is_metric"] = True  # the report links each name to its glossary entry
    return out


def _save(fig, out_dir: Path, name: str) -> str:
    rel = f"figures/{name}.png"
    (out_dir / "figures").mkdir(parents=True, exist_ok=True)
    fig.savefig(out_dir / rel, dpi=110, bbox_inches="tight", metadata={"Software": None})
    import matplotlib.pyplot as plt

    plt.close(fig)
    return rel


def run_all(data_dir="data", out_dir="reports/run", config=None, embedder=None,
            sweep_space=None, show_progress=None) -> RunResult:
    """Run the main job on ``data_dir`` and write the report and export to ``out_dir``.

    ``config`` is a path (JSON/TOML) or a dict of per-engine parameters and
    ``{"sweep": {"space": {...}, "holdout": 0.2}}``. The previous output of a
    run in ``out_dir`` is replaced.
    """
    import matplotlib

    matplotlib.use("Agg", force=False)
    data_dir, out_dir = Path(data_dir), Path(out_dir)
    if not data_dir.is_dir():
        raise InputError(f"{data_dir}: no such data directory")
    cfg = config if isinstance(config, dict) else load_config(config)
    out_dir.mkdir(parents=True, exist_ok=True)
    sections, timings, metrics, skipped = [], {}, {}, []
    state: dict = {}
    steps = [("prediction replay", _prediction), ("behavior replay", _behavior),
             ("prediction sweep", _sweep), ("prior fit", _prior), ("belief replay and fit", _belief),
             ("calibration replay and fit", _calibration), ("anticipation replay", _anticipation)]
    ctx = dict(data=data_dir, out=out_dir, cfg=cfg, embedder=embedder, state=state,
               sweep_space=sweep_space)
    for name, step in progress(steps, desc="thatchlab run", enabled=show_progress):
        t0 = time.perf_counter()
        sec = step(ctx)
        timings[name] = time.perf_counter() - t0
        if sec is None:
            skipped.append(name)
            continue
        sections.append(sec)
        metrics[name] = state.get(f"{name}:metrics", {})
    if not sections:
        raise InputError(f"{data_dir}: holds none of the logs the main job reads (interactions.jsonl, "
                         "behavior_interactions.jsonl, memory_log.jsonl, recall_log.jsonl, events.jsonl with "
                         "recalls.jsonl); nothing was run")
    t0 = time.perf_counter()
    export_path, manifest_path = _export(ctx)
    timings["export"] = time.perf_counter() - t0
    report_path = _write_report(out_dir, sections, timings, skipped, ctx, export_path)
    return RunResult(out_dir, report_path, export_path, manifest_path, metrics, timings, sections, skipped)


# ----------------------------------------------------------------- steps
def _embedder(ctx):
    if ctx["embedder"] is None:
        from thatchlab.embed import default_embedder

        ctx["embedder"] = default_embedder()
    return ctx["embedder"]


def _scoring(ctx, engine, filename):
    from thatchlab.logs import read_interaction_log
    from thatchlab.plots import prequential_reliability_diagram, regime_bars
    from thatchlab.replay import run

    path = ctx["data"] / filename
    if not path.is_file():
        return None
    log = read_interaction_log(path)
    params = _params(ctx["cfg"], engine)
    res = run(log, engine=engine, params=params, embedder=_embedder(ctx))
    ctx["state"][engine] = res
    ctx["state"][f"{engine}:log"] = log
    ctx["state"][f"{engine} replay:metrics"] = res.metrics
    sec = Section(f"{engine.capitalize()} engine: replay of {filename}",
                  f"{len(log)} events replayed under {'the configured' if ctx['cfg'].get(engine) else 'production default'}"
                  f" parameters with the {res.embedder} embedder.")
    sec.tables.append(("Replay metrics", _metrics_frame(res.metrics)))
    regimes = res.events.loc[res.events["kind"] == "message", "regime"].value_counts().rename("messages")
    sec.tables.append(("Nudge regimes", regimes.to_frame()))
    sec.figures.append(("Reliability of the prequential forecasts",
                        _save(prequential_reliability_diagram({"defaults": res}), ctx["out"], f"{engine}_reliability")))
    sec.figures.append(("Regimes per message", _save(regime_bars({"defaults": res}), ctx["out"], f"{engine}_regimes")))
    return sec


def _prediction(ctx):
    return _scoring(ctx, "prediction", "interactions.jsonl")


def _behavior(ctx):
    return _scoring(ctx, "behavior", "behavior_interactions.jsonl")


def _split_space(space: dict) -> tuple[dict, dict]:
    """The parameters a forecast metric can see, and the rest (decided on which items surface)."""
    from thatchlab.tune import get_engine

    forecast = set(get_engine("prediction").sensitivity[FORECAST_METRIC])
    return ({k: v for k, v in space.items() if k in forecast},
            {k: v for k, v in space.items() if k not in forecast})


def _with_values(space: dict, params, extra: dict) -> dict:
    """Each list of ``space`` with ``params``' value (what production runs) and ``extra``'s added."""
    out = {}
    for name, values in space.items():
        vals = list(values) + [getattr(params, name)] + ([extra[name]] if name in extra else [])
        out[name] = sorted(set(vals), key=lambda v: (str(type(v)), v))
    return out


def _before_test(log: pd.DataFrame, holdout) -> pd.DataFrame:
    """The rows of the time-sorted log before the sweep's test stretch (training and validation)."""
    from thatchlab.tune import holdout_segments

    ordered = log.sort_values("ts", kind="stable").reset_index(drop=True)
    ts = pd.to_datetime(ordered["ts"], utc=True).astype("int64").to_numpy()
    test = holdout_segments(ts, holdout)[-1]
    return ordered.iloc[:test.lo]


def _fit_prior(log, params, embedder):
    """PriorFitter on a replay of ``log``'s prediction signals (None without any)."""
    from thatchlab.replay import run
    from thatchlab.tune import PriorFitter

    res = run(log, engine="prediction", params=params, embedder=embedder)
    prov = res.tables["provenance"].rename(columns={"prediction_id": "item_id"})
    if not len(prov):
        return None
    return PriorFitter(soft_weight=params.soft_weight).fit(prov[["item_id", "signal"]])


def _sweep(ctx):
    import warnings

    from thatchlab.plots import decision_forest, metric_heatmap, pareto_plot
    from thatchlab.tune import combine_decisions, decide, pareto, sweep

    log = ctx["state"].get("prediction:log")
    if log is None:
        return None
    scfg = ctx["cfg"].get("sweep", {})
    space = dict(ctx["sweep_space"] or scfg.get("space") or DEFAULT_SWEEP_SPACE)
    holdout = scfg.get("holdout", 0.2)
    base = _params(ctx["cfg"], "prediction")  # what production runs: the comparison's default
    forecast_space, nudge_space = _split_space(space)
    decisions, tables, figures, notes = [], [], [], []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # the report states ties and unidentified parameters
        fit = _fit_prior(_before_test(log, holdout), base, _embedder(ctx)) if forecast_space else None
        fitted = {}
        if fit is not None and not fit.boundary_ and {"k", "p0"} <= set(forecast_space):
            fitted = {"k": round(float(fit.k_), 2), "p0": round(float(fit.p0_), 3)}
        ctx["state"]["prior before test"] = fit
        ctx["state"]["prior candidate"] = fitted
        space = _with_values(space, base, fitted)
        forecast_space, nudge_space = _split_space(space)
        res = sweep(log, space, list(SWEEP_METRICS), engine="prediction", holdout=holdout,
                    embedder=_embedder(ctx), base=base)
        ctx["state"]["sweep"] = res
        if forecast_space:
            cand = base.replace(**fitted) if fitted else None
            decisions.append(decide(res, FORECAST_METRIC, default=base, alpha=LEVEL, candidate=cand))
            keys = list(forecast_space)
            if len(keys) >= 2:
                at_base = _rows_at(res, nudge_space, base)
                figures.append((f"Validation log-loss over {keys[0]} and {keys[1]} (production's threshold)",
                                _save(metric_heatmap(at_base, keys[0], keys[1], FORECAST_METRIC),
                                      ctx["out"], "sweep_heatmap")))
        if nudge_space:
            sub = _rows_at(res, forecast_space, base)  # the forecast parameters at production's values
            default = _default_row(res, space, base)
            bar = float(default[f"val_{GUARD_METRIC}"])
            # no silent follow with an outcome on validation: nothing to hold the guard to
            constraint = {GUARD_METRIC: ("<=", bar)} if bar == bar else None
            dec_t = decide(sub, THRESHOLD_METRIC, default=base, alpha=LEVEL, constraint=constraint)
            decisions.append(dec_t)
            notes.append(f"The nudge parameters ({', '.join(nudge_space)}) are decided on {THRESHOLD_METRIC} "
                         f"(which items surface), with K, P0 and the soft weight at production's values, "
                         + (f"subject to {GUARD_METRIC} ≤ {bar:.4f} (production's on validation)."
                            if constraint else f"unconstrained: no strong message had an outcome on "
                            f"validation under production's values, so {GUARD_METRIC} is undefined there."))
            front = pareto(sub, list(REGIME_METRICS))
            shown = front[list(nudge_space) + [f"val_{m}" for m in (THRESHOLD_METRIC, *REGIME_METRICS)]
                          + [f"test_{m}" for m in (THRESHOLD_METRIC, *REGIME_METRICS)]]
            tables.append(("Pareto front of interruptions and wrong silent follows (validation, production's "
                           "K and P0)", shown.reset_index(drop=True)))
            chosen = _default_row(res, space, dec_t.params)
            figures.append(("Interruptions against wrong silent follows: every configuration at production's "
                            "K and P0, the Pareto front, production's default and what the threshold decision "
                            "ships", _save(pareto_plot(sub, front, *REGIME_METRICS, default=default, chosen=chosen),
                                           ctx["out"], "sweep_pareto")))
    decision = combine_decisions(decisions, results=res)
    ctx["state"]["decision"] = decision
    ctx["state"]["best_params"] = decision.params
    shipped = decision.shipped_parameters()
    ctx["state"]["prediction sweep:metrics"] = {
        "n_configs": len(res), "shipped": ", ".join(shipped) or "nothing",
        **{f"optimism_{d.metric}": d.optimism for d in decisions}}
    unidentified = decision.unidentified
    configured = "the configured parameters" if ctx["cfg"].get("prediction") else "production's defaults"
    sec = Section(
        "Prediction engine: holdout sweep and decision",
        f"{len(res)} configurations scored on a time-based holdout of {holdout:g} (validation = "
        f"the {holdout:g} before the last {holdout:g} of the log, test = the last {holdout:g}), against "
        f"{configured}: what production runs. Each decision tests one candidate as a whole against it on "
        "the test stretch (a paired bootstrap over sessions, Student's t with one degree of freedom fewer "
        "than the sessions), and only if it improves are the configurations keeping part of its changes "
        "tested (Holm's correction) to drop changes that add nothing. K and P0 are decided on "
        f"{FORECAST_METRIC} with the prior fitted on the log before the test stretch as the candidate"
        + (f" (K = {fitted['k']:g}, P0 = {fitted['p0']:g})" if fitted else
           " (the fit was unusable here, so the validation winner is the candidate)")
        + f"; the main job's {DECISIONS} decisions are made at α = {LEVEL:g} each ({ALPHA:g} over all), and the "
        "threshold decision's change is added only if the joint configuration improves both metrics on "
        "test. "
        + (f"Shipped: {', '.join(f'{p} = {getattr(decision.params, p)!r}' for p in shipped)}. "
           if shipped else "Nothing is shipped: production's values stay. ")
        + (f"Not identified by their metric on this data (never shipped): {', '.join(unidentified)}. "
           if unidentified else "")
        + "The candidates' optimism (their validation advantage over production's minus their test "
        "advantage): " + "; ".join(f"{d.metric} {d.optimism:.4g}" for d in decisions) + ". "
        + " ".join(notes))
    sec.tables.append(("Decision evidence, one row per parameter", decision.evidence))
    sec.tables.extend(tables)
    for d in decisions:
        sec.figures.append((f"The {d.metric} decision's intervals: each change alone and each configuration "
                            "tested as a whole", _save(decision_forest(d), ctx["out"], f"decision_{d.metric}")))
    sec.figures.extend(figures)
    return sec


def _rows_at(results, names, params):
    """The sweep rows whose parameters ``names`` equal ``params``' values (attrs kept)."""
    mask = pd.Series(True, index=results.index)
    for name in names:
        mask &= results[name] == getattr(params, name)
    out = results[mask]
    out.attrs.update(results.attrs)
    return out


def _default_row(results, space, params):
    """The sweep row whose swept parameters equal ``params``' values."""
    rows = _rows_at(results, space, params)
    if not len(rows):
        raise InputError(f"sweep: no configuration with {params} in {space}; include production's "
                         "default values in every list of the space")
    return rows.iloc[0]


def _prior(ctx):
    from thatchlab.plots import prior_profile
    from thatchlab.tune import PriorFitter

    res = ctx["state"].get("prediction")
    if res is None:
        return None
    prov = res.tables["provenance"].rename(columns={"prediction_id": "item_id"})
    fit = PriorFitter(soft_weight=res.params.soft_weight).fit(prov[["item_id", "signal"]])
    ctx["state"]["prior"] = fit
    ctx["state"]["prior fit:metrics"] = {"k": fit.k_, "p0": fit.p0_, "log_likelihood": fit.log_likelihood_}
    sec = Section("Prediction engine: empirical-Bayes prior",
                  ("K and P0 fitted by the weighted prequential log score of every prediction's signals "
                   "(soft signals as disconfirms of weight soft_weight, the sweep's own objective)"
                   if fit.objective_ == "prequential" else
                   "K and P0 fitted by the beta-binomial marginal likelihood of every prediction's "
                   "confirm/disconfirm counts") + f" ({fit.assumption_}), with profile-likelihood intervals, "
                  "on the whole log. Production hard-codes K = 5 and P0 = 0.5. " + _prior_verdict(ctx))
    sec.tables.append(("Fitted prior", fit.summary_))
    if fit.k_ not in (0.0, float("inf")):
        sec.figures.append(("Profile likelihood of K", _save(prior_profile(fit, "k"), ctx["out"], "prior_profile")))
    return sec


def _prior_verdict(ctx) -> str:
    """The prior fit reconciled with the decision, in words."""
    fit, fitted = ctx["state"].get("prior before test"), ctx["state"].get("prior candidate") or {}
    decision = ctx["state"].get("decision")
    if decision is None or not fitted:
        return "The fit was not tested on held-out data (no sweep, or the fit is at a boundary): not shipped."
    s = fit.summary_
    part = next((d for d in decision.parts if d.metric == FORECAST_METRIC), None)
    gate = part.combined.get("gate", {}) if part is not None else {}
    head = (f"Fitted on the log before the test stretch: K ≈ {fitted['k']:g} "
            f"[{s.loc['k', 'ci_lower']:.3g}, {s.loc['k', 'ci_upper']:.3g}], P0 ≈ {fitted['p0']:g} "
            f"[{s.loc['p0', 'ci_lower']:.3g}, {s.loc['p0', 'ci_upper']:.3g}]; as a whole it changes held-out "
            f"{FORECAST_METRIC} by {gate.get('delta', float('nan')):+.4g} "
            f"[{gate.get('ci_lower', float('nan')):.4g}, {gate.get('ci_upper', float('nan')):.4g}] against "
            "production's values")
    shipped = [p for p in ("k", "p0") if p in decision.shipped_parameters()]
    if shipped:
        return head + f": ships {', '.join(f'{p} = {getattr(decision.params, p):g}' for p in shipped)}" + (
            "" if len(shipped) == 2 else f" (the other adds nothing the data can show: production's "
            f"{'K' if 'k' not in shipped else 'P0'} stays)") + "."
    return head + ": not shipped."


def _half_lives(log) -> dict:
    """Half-lives (days) HalfLifeFitter finds for the belief classes production has a prior for."""
    import math

    from thatchlab.tune import HalfLifeFitter

    fit = HalfLifeFitter().fit_from_log(log)
    fields = set(_PARAMS["belief"]().to_dict())
    out = {}
    for cls, value in fit.half_life_.items():
        if cls in fields:
            out[cls] = None if not math.isfinite(value) else round(float(value), 1)
    return out


def _derive_coefficients(log) -> dict:
    """The derive coefficients DeriveWeightsFitter finds, where the data identify them."""
    from thatchlab.tune import DeriveWeightsFitter

    s = DeriveWeightsFitter().fit(log).summary_
    return {name: round(float(r["coef"]), 3) for name, r in s.iterrows() if bool(r["identified"])}


def _decide_fit(ctx, engine, log, metric, fit_values):
    """A fit made on the log before the test stretch, tested against what production runs on it.

    The fitted values are the candidate of :func:`~thatchlab.tune.decide`; the sweep scores every
    combination of production's and the fitted value of each parameter the fit changes (so the
    reduction family is complete). None when the fit changes nothing.
    """
    import warnings

    from thatchlab.tune import decide, sweep

    holdout = ctx["cfg"].get("sweep", {}).get("holdout", 0.2)
    base = _params(ctx["cfg"], engine)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        try:
            fitted = fit_values(_before_test(log, holdout))
        except ThatchlabError:
            return None
        fitted = {k: v for k, v in fitted.items() if v != getattr(base, k)}
        if not fitted:
            return None
        space = {k: [getattr(base, k), v] for k, v in fitted.items()}
        res = sweep(log, space, metric, engine=engine, holdout=holdout, base=base)
        return decide(res, metric, default=base, alpha=LEVEL, candidate=base.replace(**fitted))


def _belief(ctx):
    from thatchlab.logs import read_memory_log
    from thatchlab.plots import currency_curves
    from thatchlab.replay import run_belief
    from thatchlab.tune import HalfLifeFitter

    path = ctx["data"] / "memory_log.jsonl"
    if not path.is_file():
        return None
    log = read_memory_log(path)
    res = run_belief(log, _params(ctx["cfg"], "belief"))
    fit = HalfLifeFitter().fit_from_log(log)
    ctx["state"]["belief"] = res
    ctx["state"]["belief fit"] = fit
    ctx["state"]["belief decision"] = _decide_fit(ctx, "belief", log, "brier", _half_lives)
    ctx["state"]["belief replay and fit:metrics"] = res.metrics
    sec = Section("Belief model: currency against truth, fitted half-lives",
                  f"{len(log)} memory-log events; currency and band recorded at each labelled read. "
                  f"Time-only transitions (must be 0): {res.metrics['time_only_transitions']}.")
    sec.tables.append(("Replay metrics", _metrics_frame(res.metrics)))
    sec.tables.append(("Band × truth", res.band_table))
    sec.tables.append(("Fitted half-lives (exponential MLE per class)", fit.summary_))
    sec.figures.append(("Currency curves: priors and fitted half-lives",
                        _save(currency_curves(res.params, fitted=fit.half_life_), ctx["out"], "belief_currency")))
    return sec


def _calibration(ctx):
    from thatchlab.logs import read_recall_log
    from thatchlab.plots import reliability_diagram
    from thatchlab.replay import run_calibration
    from thatchlab.tune import DeriveWeightsFitter

    path = ctx["data"] / "recall_log.jsonl"
    if not path.is_file():
        return None
    log = read_recall_log(path)
    res = run_calibration(log, _params(ctx["cfg"], "calibration"))
    fit = DeriveWeightsFitter().fit(log)
    ctx["state"]["calibration"] = res
    ctx["state"]["derive fit"] = fit
    ctx["state"]["calibration decision"] = _decide_fit(ctx, "calibration", log, "derived_log_loss",
                                                        _derive_coefficients)
    ctx["state"]["calibration replay and fit:metrics"] = res.metrics
    sec = Section("Confidence calibration: shadow report, reliability, fitted derive coefficients",
                  "The last window's calibration report, as production prints it:\n\n" + res.report.to_ascii())
    sec.tables.append(("Reliability of caller vs derived confidence", _metrics_frame(res.metrics)))
    sec.tables.append(("Derive coefficients by maximum likelihood of consumption", fit.summary_))
    sec.figures.append(("Reliability diagram", _save(reliability_diagram(res.reliability), ctx["out"],
                                                      "calibration_reliability")))
    return sec


def _anticipation(ctx):
    from thatchlab.anticipation import mine_sequential
    from thatchlab.logs import read_event_log, read_recall_stream
    from thatchlab.plots import confidence_modes_plot
    from thatchlab.replay import run_anticipation

    ev_path, rc_path = ctx["data"] / "events.jsonl", ctx["data"] / "recalls.jsonl"
    if not (ev_path.is_file() and rc_path.is_file()):
        return None
    events, recalls = read_event_log(ev_path), read_recall_stream(rc_path)
    params = _params(ctx["cfg"], "anticipation")
    res = run_anticipation(events, recalls, params)
    ctx["state"]["anticipation"] = res
    ctx["state"]["anticipation replay:metrics"] = res.metrics
    seed = mine_sequential(events, window=params.window, min_obs=params.min_obs, min_conf=params.min_conf,
                           mode="seed")
    frac = mine_sequential(events, window=params.window, min_obs=params.min_obs, min_conf=params.min_conf,
                           mode="fraction")
    sec = Section("Anticipation: mined patterns and prefetch savings",
                  f"{len(events)} events and {len(recalls)} recalls; patterns re-mined daily at 06:30 UTC "
                  f"over the trailing {params.lookback}, prefetching k = {params.k} facts per session.")
    sec.tables.append(("Replay metrics", _metrics_frame(res.metrics)))
    sec.tables.append(("Recall round-trips, tokens and latency per session", res.roi()))
    sec.figures.append(("Sequential confidence: mnemo's production SQL (pair counts) vs true fractions",
                        _save(confidence_modes_plot(seed, frac), ctx["out"], "anticipation_modes")))
    return sec


def _export(ctx):
    from thatchlab.store import export_sqlite

    st = ctx["state"]
    kwargs, params = {}, {}
    for engine in ("prediction", "behavior"):
        res = st.get(engine)
        if res is not None:
            from thatchlab.replay.scoring import engine_class

            kwargs[engine] = engine_class(engine).from_tables(res.tables, embedder=ctx["embedder"],
                                                              params=res.params)
    if st.get("belief") is not None:
        kwargs["beliefs"] = st["belief"].state
    if st.get("calibration") is not None:
        kwargs["calibration"] = st["calibration"].state
    if st.get("anticipation") is not None:
        kwargs["patterns"] = st["anticipation"].patterns
    if not kwargs:
        return None, None
    decision = {}
    if "decision" in st and "prediction" in kwargs:
        decision["prediction"] = st["decision"]
    for key, name in (("beliefs", "belief decision"), ("calibration", "calibration decision")):
        if st.get(name) is not None and key in kwargs:
            decision[key] = st[name]
    decision = decision or None
    # configured engines: their values are what production runs (declared, never shipped)
    keys = {"prediction": "prediction", "behavior": "behavior", "belief": "beliefs", "calibration": "calibration",
            "anticipation": "patterns"}
    declared = {keys[e]: _params(ctx["cfg"], e) for e in _PARAMS
                if ctx["cfg"].get(e) and keys[e] in kwargs and not (decision and keys[e] in decision)}
    ends = [st[f"{e}:log"]["ts"].max() for e in ("prediction", "behavior")
            if st.get(f"{e}:log") is not None and len(st[f"{e}:log"])]
    res = export_sqlite(ctx["out"] / "thatch.db", params=params or None, decision=decision,
                        declared=declared or None, log_end=max(ends) if ends else None, overwrite=True, **kwargs)
    st["export"] = res
    return res.path, res.manifest_path


# ----------------------------------------------------------------- report
_CSS = """
body { font: 15px/1.45 -apple-system, 'Segoe UI', Helvetica, Arial, sans-serif; max-width: 1080px;
       margin: 2em auto; color: #222; padding: 0 1em; }
h1 { font-size: 1.6em; } h2 { margin-top: 2em; border-bottom: 1px solid #ddd; }
table.t { border-collapse: collapse; margin: .6em 0 1.2em; font-size: 13px; }
table.t th, table.t td { padding: 3px 10px; border-bottom: 1px solid #eee; text-align: right; }
figure { margin: 1em 0; } figcaption { color: #555; font-size: 13px; }
pre { background: #f6f8fa; padding: .8em; overflow-x: auto; font-size: 12px; }
.meta td { text-align: left; }
"""


def _versions() -> dict:
    out = {"python": platform.python_version(), "thatchlab": __version__}
    for pkg in ("numpy", "pandas", "scipy", "scikit-learn", "torch", "sentence-transformers", "lifelines",
                "duckdb", "dask"):
        try:
            out[pkg] = metadata.version(pkg)
        except metadata.PackageNotFoundError:
            continue
    return out


def _where(engine: str, name: str, value) -> str:
    from thatchlab.core.params.production import env_line, setting

    where = setting(engine, name)
    if where.kind == "env":
        return f"environment: {env_line(engine, name, value)}"
    if where.kind == "code":
        return "recommended production change (a constant in production's code)"
    return f"never ships ({where.name})"


def _interval(lo, hi) -> str:
    return f"[{lo:.4g}, {hi:.4g}]" if lo == lo and hi == hi else "–"


def what_ships(ctx) -> pd.DataFrame:
    """Every engine, every decided parameter and every fit: shipped or kept, why, the interval, where it goes."""
    st, rows = ctx["state"], []
    decision = st.get("decision")
    if decision is not None:
        for r in decision.evidence.itertuples():
            value = getattr(decision.params, r.parameter)
            rows.append({"engine": "prediction", "parameter": r.parameter, "production": r.default,
                         "candidate": r.candidate, "ships": bool(r.shipped), "metric": r.metric,
                         "interval": _interval(r.ci_lower, r.ci_upper),
                         "goes to": _where("prediction", r.parameter, value) if r.shipped else "–",
                         "why": r.reason})
        c = decision.combined_record()
        rows.append({"engine": "prediction", "parameter": "combined", "production": "–",
                     "candidate": ", ".join(f"{k}={v!r}" for k, v in c["params"].items()) or "–",
                     "ships": c["shipped"], "metric": c["metric"],
                     "interval": _interval(c["ci_lower"] if c["ci_lower"] is not None else float("nan"),
                                           c["ci_upper"] if c["ci_upper"] is not None else float("nan")),
                     "goes to": "the export's manifest (decisions.prediction)", "why": c["reason"]})
    prior = st.get("prior")
    if prior is not None:
        s = prior.summary_
        early = st.get("prior candidate") or {}
        tested = f"; {early['k']:g}, {early['p0']:g} before the test stretch (tested)" if early else ""
        rows.append({"engine": "prediction", "parameter": "prior fit (K, P0)", "production": "5, 0.5",
                     "candidate": f"{prior.k_:.3g}, {prior.p0_:.3g} on the whole log{tested}", "ships": False,
                     "metric": "likelihood",
                     "interval": f"K {_interval(s.loc['k', 'ci_lower'], s.loc['k', 'ci_upper'])}, P0 "
                                 f"{_interval(s.loc['p0', 'ci_lower'], s.loc['p0', 'ci_upper'])}",
                     "goes to": "–", "why": "a fit is a candidate, not a decision: " + _prior_verdict(ctx)})
    if "behavior" in st:
        rows.append({"engine": "behavior", "parameter": "all", "production": "production's", "candidate": "–",
                     "ships": False, "metric": "–", "interval": "–", "goes to": "–",
                     "why": "replayed under what production runs; the main job sweeps no behavior parameter"})
    for engine, key, fit_name in (("belief", "belief decision", "belief fit"),
                                  ("calibration", "calibration decision", "derive fit")):
        dec, fit = st.get(key), st.get(fit_name)
        if dec is not None:
            for r in dec.evidence.itertuples():
                value = getattr(dec.params, r.parameter)
                rows.append({"engine": engine, "parameter": r.parameter, "production": r.default,
                             "candidate": r.candidate, "ships": bool(r.shipped), "metric": r.metric,
                             "interval": _interval(r.ci_lower, r.ci_upper),
                             "goes to": _where(engine, r.parameter, value) if r.shipped else "–",
                             "why": f"fitted on the log before the test stretch, then tested: {r.reason}"})
            c = dec.combined_record()
            rows.append({"engine": engine, "parameter": "combined", "production": "–",
                         "candidate": ", ".join(f"{k}={v!r}" for k, v in c["params"].items()) or "–",
                         "ships": c["shipped"], "metric": c["metric"],
                         "interval": _interval(*(float("nan") if c[k] is None else c[k]
                                                 for k in ("ci_lower", "ci_upper"))),
                         "goes to": f"the export's manifest (decisions.{'beliefs' if engine == 'belief' else engine})",
                         "why": c["reason"]})
        elif fit is not None:
            rows.append({"engine": engine, "parameter": "all", "production": "production's", "candidate": "–",
                         "ships": False, "metric": "–", "interval": "–", "goes to": "–",
                         "why": "the fit on the log before the test stretch changes nothing production runs"})
    if "anticipation" in st:
        rows.append({"engine": "anticipation", "parameter": "all", "production": "production's",
                     "candidate": "–", "ships": False, "metric": "–", "interval": "–", "goes to": "–",
                     "why": "replayed under what production runs; nothing is swept or fitted"})
    return pd.DataFrame(rows, columns=["engine", "parameter", "production", "candidate", "ships", "metric",
                                       "interval", "goes to", "why"])


def _write_report(out_dir: Path, sections, timings, skipped, ctx, export_path) -> Path:
    import html

    emb = ctx["embedder"]
    parts = [f"<!doctype html><html><head><meta charset='utf-8'><title>thatchlab run</title>"
             f"<style>{_CSS}</style></head><body>",
             "<h1>thatchlab run</h1>",
             f"<p>Data: <code>{html.escape(str(ctx['data']))}</code> · embedder: "
             f"<code>{html.escape(getattr(emb, 'name', str(emb)) if emb is not None else 'none')}</code>"
             + (f" · export: <code>{html.escape(export_path.name)}</code> (and its manifest)" if export_path else "")
             + "</p>"]
    if skipped:
        parts.append(f"<p>Skipped (no log in the data directory): {html.escape(', '.join(skipped))}.</p>")
    ships = what_ships(ctx)
    shipped = ships[ships["ships"] & (ships["parameter"] != "combined")]
    lead = ("; ".join(f"{r.engine} {r.parameter} = {r.candidate} ({r['goes to']})" for _, r in shipped.iterrows())
            if len(shipped) else "nothing: production's values stay")
    configured = [e for e in _PARAMS if ctx["cfg"].get(e)]
    parts.append("<h2>What ships, and why</h2>"
                 f"<p>Ships: {html.escape(lead)}. "
                 + (f"The configured values of {html.escape(', '.join(configured))} are taken as what "
                    "production runs: every comparison is against them. " if configured else
                    "Every comparison is against what production runs (its defaults). ")
                 + "Every other row is kept, with the reason.</p>"
                 + _fmt_table(ships, out_dir))
    for sec in sections:
        parts.append(f"<h2>{html.escape(sec.title)}</h2>")
        if sec.text:
            if "\n" in sec.text:
                head, _, rest = sec.text.partition("\n\n")
                parts.append(f"<p>{html.escape(head)}</p><pre>{html.escape(rest)}</pre>")
            else:
                parts.append(f"<p>{html.escape(sec.text)}</p>")
        for caption, df in sec.tables:
            parts.append(f"<h3>{html.escape(caption)}</h3>{_fmt_table(df, out_dir, metric_names=True)}")
        for caption, rel in sec.figures:
            parts.append(f"<figure><img src='{rel}' alt='{html.escape(caption)}' style='max-width:100%'>"
                         f"<figcaption>{html.escape(caption)}</figcaption></figure>")
    params = {name: _params(ctx["cfg"], name).to_dict() for name in _PARAMS}
    if "best_params" in ctx["state"]:
        params["prediction (exported: production's defaults with the shipped changes)"] = \
            ctx["state"]["best_params"].to_dict()
    parts.append("<h2>Parameters</h2><pre>" + html.escape(json.dumps(params, indent=1, default=str)) + "</pre>")
    parts.append("<h2>Versions</h2>" + _fmt_table(pd.DataFrame({"version": pd.Series(_versions())})))
    parts.append("<h2>Timings</h2>" + _fmt_table(pd.DataFrame({"seconds": pd.Series(timings)})))
    parts.append("</body></html>")
    path = out_dir / "index.html"
    path.write_text("\n".join(parts), encoding="utf-8")
    return path
