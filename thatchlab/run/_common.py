"""What the main job's steps and report share: its constants (from thatchlab.decide.policy), config, sections, figures."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from thatchlab.core.errors import InputError, ThatchlabError
from thatchlab.core.params import (
    RELEASES,
    SYSTEMS,
    AnticipationParams,
    BeliefParams,
    CalibrationParams,
    ScoringParams,
    resolve_release,
)
from thatchlab.decide.policy import (  # noqa: F401
    ALPHA,
    DEFAULT_SWEEP_SPACE,
    FORECAST_METRIC,
    GUARD_METRIC,
    REGIME_METRICS,
    RULES,
    SWEEP_METRICS,
    THRESHOLD_METRIC,
)
from thatchlab.report import GLOSSARY  # noqa: F401

#: The main job's decision policy lives in thatchlab.decide.policy; its constants are kept here
#: for the steps and for ``from thatchlab.run import LEVEL``.
DECISIONS = len(RULES)
LEVEL = ALPHA / DECISIONS

_PARAMS = {"prediction": ScoringParams, "behavior": ScoringParams, "belief": BeliefParams,
           "calibration": CalibrationParams, "anticipation": AnticipationParams}


@dataclass
class Section:
    """One part of the report: a title, a paragraph, text shown as is, tables and figure files."""

    title: str
    text: str = ""
    tables: list = field(default_factory=list)     # (caption, DataFrame)
    figures: list = field(default_factory=list)    # (caption, relative PNG path)
    preformatted: list = field(default_factory=list)  # text shown as is (production's own reports)

    @property
    def paragraphs(self) -> list:
        """The section's text as paragraphs (one per blank-line-separated block)."""
        return [p for p in self.text.split("\n\n") if p.strip()]


@dataclass
class RunResult:
    """What the main job wrote and found.

    Attributes
    ----------
    out_dir, report_path, export_path, manifest_path : where the report and the export are.
    metrics : ``{step: {metric: value}}``, as saved in ``results/metrics.json``.
    timings : seconds per step.
    sections : the report's sections (:class:`Section`), tables as DataFrames.
    skipped : the steps that had no log.
    decisions : ``{key: Decision}`` (keys as in the manifest: ``prediction``, ``beliefs``, ``calibration``).
    notebook_path : ``run.ipynb`` beside the report.
    results : ``{key: path}`` of the saved results (``results/*.json|parquet``).
    """

    out_dir: Path
    report_path: Path
    export_path: Path | None
    manifest_path: Path | None
    metrics: dict
    timings: dict
    sections: list
    skipped: list
    decisions: dict = field(default_factory=dict)
    notebook_path: Path | None = None
    results: dict = field(default_factory=dict)


def load_config(path) -> dict:
    """Read a JSON or TOML config: ``{engine: {param: value}, "release": {system: name},
    "sweep": {"space": ..., "holdout": ...}}``."""
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
    except RecursionError:
        raise InputError(f"{p}: the config nests arrays or objects too deeply to read; expected a mapping of "
                         "engine → parameters") from None
    except (ValueError, OSError) as exc:
        raise InputError(f"{p}: cannot read the config ({exc}); expected JSON or TOML") from None
    if not isinstance(cfg, dict):
        raise InputError(f"{p}: expected a mapping of engine → parameters")
    unknown = set(cfg) - set(_PARAMS) - {"sweep", "release"}
    if unknown:
        raise InputError(f"{p}: unknown section(s) {sorted(unknown)}; expected some of "
                         f"{sorted(_PARAMS) + ['release', 'sweep']}")
    for name, section in cfg.items():
        if not isinstance(section, dict):
            raise InputError(f"{p}: section [{name}]: expected a table of settings, got "
                             f"{type(section).__name__} {section!r}")
    try:
        check_releases(cfg.get("release") or {})
    except ThatchlabError as exc:
        raise InputError(f"{p}: section [release]: {exc}") from None
    for engine in sorted(set(cfg) & set(_PARAMS)):
        try:
            _params(cfg, engine)
        except ThatchlabError as exc:
            raise InputError(f"{p}: section [{engine}]: {exc}") from None
    extra = set(cfg.get("sweep", {})) - {"space", "holdout"}
    if extra:
        raise InputError(f"{p}: section [sweep]: unknown key(s) {sorted(extra)}; expected 'space' and/or 'holdout'")
    return cfg


def check_releases(releases) -> dict:
    """``{system: release}`` (a config's ``[release]`` table, ``--release SYSTEM=NAME``), each name
    resolved (``"latest"`` → the newest); an unknown system or release is a typed error."""
    if not isinstance(releases, dict):
        raise InputError(f"expected a table of system = release, got {releases!r}")
    out = {}
    for system, name in releases.items():
        if system not in RELEASES:
            raise InputError(f"unknown system {system!r}; expected some of {', '.join(RELEASES)}")
        out[system] = resolve_release(system, name)
    return out


def with_releases(cfg: dict, releases) -> dict:
    """``cfg`` with ``releases`` (``{system: name}`` or ``["system=name", ...]``) over its ``[release]`` table."""
    if not releases:
        return cfg
    if not isinstance(releases, dict):
        pairs = {}
        for item in releases:
            system, sep, name = str(item).partition("=")
            if not sep or not system.strip() or not name.strip():
                raise InputError(f"--release: expected SYSTEM=RELEASE (e.g. thatch=v0.1.30), got {item!r}")
            pairs[system.strip()] = name.strip()
        releases = pairs
    return {**cfg, "release": {**(cfg.get("release") or {}), **check_releases(releases)}}


def release_of(cfg, engine) -> str:
    """The production release ``engine`` runs in this job: its section's ``release``, else the
    ``[release]`` table's for its system, else the newest."""
    section = cfg.get(engine) or {}
    system = SYSTEMS[engine]
    name = section.get("release") or (cfg.get("release") or {}).get(system, "latest")
    return resolve_release(system, name)


def _params(cfg, engine):
    """The configured parameters of ``engine``, or what production runs (the parameter reference), under
    the release the job runs (:func:`release_of`; default the newest)."""
    from thatchlab.core.params.production import production_params

    base = production_params(engine, release_of(cfg, engine))
    return _PARAMS[engine].from_dict({**base.to_dict(), **cfg[engine]}) if cfg.get(engine) else base



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


