"""The main job's HTML report, opening with what ships and why."""

from __future__ import annotations

import json
import platform
from importlib import metadata
from pathlib import Path

import pandas as pd

from thatchlab import __version__
from thatchlab.run._common import _PARAMS, _fmt_table, _params  # noqa: F401
from thatchlab.run._steps import _prior_verdict  # noqa: F401

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
