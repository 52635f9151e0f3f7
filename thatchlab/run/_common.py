"""What the main job's steps and report share: its constants, config, sections, tables and figures."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from thatchlab.core.errors import InputError
from thatchlab.core.params import AnticipationParams, BeliefParams, CalibrationParams, ScoringParams

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
GLOSSARY = Path(__file__).resolve().parents[2] / "docs" / "_build" / "html" / "glossary.html"
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


def _embedder(ctx):
    if ctx["embedder"] is None:
        from thatchlab.embed import default_embedder

        ctx["embedder"] = default_embedder()
    return ctx["embedder"]


