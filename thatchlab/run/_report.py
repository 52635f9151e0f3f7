"""The data of the main job's report (what ships and why, what each engine ran); thatchlab.report renders it."""

from __future__ import annotations

import platform
from importlib import metadata
from pathlib import Path

import pandas as pd

from thatchlab import __version__
from thatchlab.core.display import plural
from thatchlab.core.params import SYSTEMS, latest_release
from thatchlab.core.params.production import (
    ENGINE_PARAMS,
    differences,
    env_line,
    production_params,
    setting,
)
from thatchlab.report import render_run_report
from thatchlab.run._common import _PARAMS, _params, release_of
from thatchlab.run._steps import _policy, _prior_verdict


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
    where = setting(engine, name)
    if where.kind == "env":
        return f"environment: {env_line(engine, name, value)}"
    if where.kind == "code":
        return "recommended production change (a constant in production's code)"
    return f"never ships ({where.name})"


def _interval(lo, hi) -> str:
    return f"[{lo:.4g}, {hi:.4g}]" if lo == lo and hi == hi else "–"


def what_ships(ctx) -> pd.DataFrame:
    """Every engine, every decided parameter and every fit: shipped or kept, why, the interval, where it goes.

    Parameters
    ----------
    ctx : dict
        The job's context after its steps ran (its ``state`` holds the decisions and fits).

    Returns
    -------
    pandas.DataFrame
        One row per decided parameter or fit: ``engine, parameter, production, candidate, ships,
        metric, interval, goes to, why``.
    """
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
        base = _params(ctx["cfg"], "prediction")
        rows.append({"engine": "prediction", "parameter": "prior fit (K, P0)", "production": f"{base.k:g}, {base.p0:g}",
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


def _value(v) -> str:
    return f"{v:g}" if isinstance(v, float) else str(v)


def _pairs(values: dict) -> str:
    return ", ".join(f"{k} = {_value(v)}" for k, v in values.items())


def release_label(engine: str, release: str) -> str:
    """The production release an engine replayed, in words: ``"thatch 07ecf87 (newest)"``,
    ``"thatch v0.1.30 (newest: 07ecf87)"``."""
    system = SYSTEMS[engine]
    newest = latest_release(system)
    return f"{system} {release} " + ("(newest)" if release == newest else f"(newest: {newest})")


def engines_ran(ctx) -> list:
    """What each engine the job ran was run with: ``{"engine", "release", "ran", "values"}`` rows for
    the header.

    ``release`` names the production release replayed (:func:`release_label`). The values are the
    configured ones where a config sets them, else what production runs under that release
    (:func:`~thatchlab.core.params.production.production_params`); the words call them production's
    only where they are, and name production's values that differ from thatchlab's class defaults.
    """
    rows = []
    for engine in _PARAMS:
        if engine not in ctx["state"]:
            continue
        params = _params(ctx["cfg"], engine)
        release = release_of(ctx["cfg"], engine)
        changed = differences(engine, params)  # against what production runs under that release
        not_class = differences(engine, production_params(engine, release),
                                reference=ENGINE_PARAMS[engine](release=release))
        if changed:
            prod = production_params(engine, release)
            each = [f"{k} = {_value(v)} (production: {_value(getattr(prod, k))})" for k, v in changed.items()]
            ran = f"configured: {', '.join(each)}; every other value is production's"
        else:
            ran = "production's values" + (" (as configured)" if ctx["cfg"].get(engine) else "")
        kept = {k: v for k, v in not_class.items() if k not in changed}
        if kept:
            ran += (f"; {_pairs(kept)} {'is' if len(kept) == 1 else 'are'} production's, where thatchlab's "
                    f"{ENGINE_PARAMS[engine].__name__}() differs")
        rows.append({"engine": engine, "release": release_label(engine, release), "ran": ran,
                     "values": _pairs(params.to_dict())})
    return rows


def _write_report(out_dir: Path, sections, timings, skipped, ctx, export_path) -> Path:
    emb = ctx["embedder"]
    facts = [{"label": "Data", "value": str(ctx["data"])},
             {"label": "embedder", "value": getattr(emb, "name", str(emb)) if emb is not None else "none"}]
    if export_path:
        facts.append({"label": "export", "value": export_path.name, "note": "(and its manifest)"})
    facts.append({"label": "notebook", "value": "run.ipynb", "note": "(the saved results in results/)"})
    ran = engines_ran(ctx)
    if ran:
        labels = list(dict.fromkeys(r["release"] for r in ran))
        newest = all(label.endswith("(newest)") for label in labels)
        facts.append({"label": "production releases",
                      "value": ", ".join(label.rsplit(" (", 1)[0] for label in labels),
                      "note": "(each system's newest)" if newest else "(not all the newest: see below)"})
    ships = what_ships(ctx)
    shipped = ships[ships["ships"] & (ships["parameter"] != "combined")]
    lead = ("; ".join(f"{r.engine} {r.parameter} = {r.candidate} ({r['goes to']})" for _, r in shipped.iterrows())
            if len(shipped) else "nothing: production's values stay")
    configured = [e for e in _PARAMS if ctx["cfg"].get(e)]
    text = (f"Ships: {lead}. "
            + (f"The configured values of {', '.join(configured)} are taken as what production runs: every "
               "comparison is against them. " if configured else
               "Every comparison is against what production runs (its values, listed above). ")
            + "Every other row is kept, with the reason.")
    policy = _policy(ctx)
    rules = policy.table().rename(columns={"name": "decision"})
    ships_part = {"paragraphs": [text], "tables": [("", ships), (
        f"How the main job decides: {plural(len(policy.rules), 'decision')} at α = {policy.level:g} each "
        f"({policy.alpha:g} over all, Bonferroni)", rules)]}
    values = {name: _params(ctx["cfg"], name).to_dict() for name in _PARAMS}
    if "best_params" in ctx["state"]:
        base = "the configured values" if ctx["cfg"].get("prediction") else "production's values"
        values[f"prediction (exported: {base} with the shipped changes)"] = ctx["state"]["best_params"].to_dict()
    parameters = {"paragraphs": ["Each engine's values: production's (thatchlab.core.params.production) "
                                 "except where the config sets them (see the top of the report)."],
                  "values": values}
    return render_run_report(out_dir / "index.html", facts=facts, engines=ran, ships=ships_part,
                             sections=sections, parameters=parameters, versions=_versions(), timings=timings,
                             skipped=skipped)
