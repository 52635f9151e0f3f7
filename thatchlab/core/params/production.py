"""What production runs, per engine and parameter, and where a changed value would go.

The parameter reference (``docs/parameters.md``) in machine form. For every
field of every engine's parameters it says how production sets it:

- ``"env"``: production reads it from its environment; a shipped value
  travels as the environment line :func:`env_line` writes
  (``THATCH_PREDICTION_THRESHOLD=0.55``);
- ``"code"``: production hard-codes it (or takes it as a command argument); a
  shipped value is a *recommended production change*, which reaches
  production only by changing its code or its invocation;
- ``"none"``: production has no such setting (thatchlab's regime classifier,
  its study filters and rules): a value other than the default can be
  studied but never ships;
- ``"release"``: which production code runs (:data:`RELEASES`). It is not a
  value production reads: a replay under another release describes another
  production, so it is declared (what the comparison is against), never shipped.

:func:`production_params` is the configuration production runs, which is
the class defaults except where a class default is thatchlab's own choice
for replays and production's differs (:data:`PRODUCTION_VALUES`): the export
compares against these values, never the class defaults. Every class defaults
to its system's newest release; ``production_params(engine, release=...)``
is an older one.

>>> production_params("calibration").decay_on_recall
False
>>> setting("prediction", "threshold")
Setting(kind='env', name='THATCH_PREDICTION_THRESHOLD')
>>> setting("prediction", "conflict_margin").kind
'none'
>>> env_line("calibration", "decay_on_recall", True)
'AI_MEMORY_CONFIDENCE_DECAY=1'
>>> production_params("prediction", release="v0.1.30").item_dedup_scope
'store'
>>> [r.name for r in RELEASES["omi"]]
['4d5d5c5', '17fecf7']
"""

from __future__ import annotations

import dataclasses
from typing import NamedTuple

from thatchlab.core.errors import InputError
from thatchlab.core.jsfmt import js_number
from thatchlab.core.params._releases import (
    RELEASES,
    SYSTEMS,
    latest_release,
    release_info,
    resolve_release,
)
from thatchlab.core.params.anticipation import AnticipationParams
from thatchlab.core.params.belief import BeliefParams
from thatchlab.core.params.calibration import CalibrationParams
from thatchlab.core.params.scoring import ScoringParams

__all__ = ["Setting", "ENGINE_PARAMS", "PRODUCTION_VALUES", "SETTINGS", "RELEASES", "SYSTEMS", "production_params",
           "setting", "env_line", "differences", "engine_key", "latest_release", "release_info",
           "resolve_release"]


class Setting(NamedTuple):
    """How production sets one parameter.

    Parameters
    ----------
    kind : str
        ``"env"`` (read from its environment), ``"code"`` (hard-coded), ``"none"`` (no such
        setting) or ``"release"`` (which code runs).
    name : str
        The environment variable, or words for the other kinds.

    See Also
    --------
    setting : The setting of one parameter.
    """

    kind: str
    name: str


#: The params class of each engine, by the names decisions and manifests use.
ENGINE_PARAMS = {"prediction": ScoringParams, "behavior": ScoringParams, "belief": BeliefParams,
                 "calibration": CalibrationParams, "anticipation": AnticipationParams}
#: Export keyword → engine name, where they differ.
_ALIASES = {"beliefs": "belief", "patterns": "anticipation"}

#: Where production's value differs from the class default (the class default is
#: thatchlab's choice for replays): ai-memory's decay on recall is off unless
#: ``AI_MEMORY_CONFIDENCE_DECAY=1``, and it deletes no shadow observation unless its
#: GC is run with a retention (``retention_days <= 0`` keeps everything).
PRODUCTION_VALUES = {"calibration": {"decay_on_recall": False, "retention_days": 0.0}}
_CODE = Setting("code", "a constant in production's code")
_RELEASE = Setting("release", "which production code runs (RELEASES): declared, never shipped")
_CLASSIFIER = Setting("none", "thatchlab's regime classifier: production leaves the regime to the model")


def _scoring(threshold_env: str) -> dict:
    out = {f.name: _CODE for f in dataclasses.fields(ScoringParams)}
    out["threshold"] = Setting("env", threshold_env)
    out["min_confidence"] = Setting("none", "a study filter: production never filters on confidence")
    for name in ("strong_confidence", "strong_evidence", "conflict_margin"):
        out[name] = _CLASSIFIER
    out["dedup_scope"] = Setting("none", "a study option: the release decides which stores a write's item "
                                         "dedup searches")
    out["release"] = _RELEASE
    return out


def _calibration() -> dict:
    out = {f.name: _CODE for f in dataclasses.fields(CalibrationParams)}
    out.update(sample_rate=Setting("env", "AI_MEMORY_CONFIDENCE_SHADOW_SAMPLE_RATE"),
               decay_on_recall=Setting("env", "AI_MEMORY_CONFIDENCE_DECAY"),
               auto_confidence=Setting("env", "AI_MEMORY_AUTO_CONFIDENCE"),
               window_days=Setting("code", "the --days argument of production's calibration report"),
               retention_days=Setting("code", "the retention argument of production's shadow GC"),
               release=_RELEASE)
    return out


def _anticipation() -> dict:
    out = {f.name: _CODE for f in dataclasses.fields(AnticipationParams)}
    for name in ("min_share", "slot_hours", "timezone"):
        out[name] = Setting("none", "thatchlab's periodic-pattern rule: production has no such setting")
    out["mode"] = Setting("none", "mnemo's SQL counts every pair (seed); fraction is thatchlab's study option")
    out["release"] = _RELEASE
    return out


#: ``{engine: {field: Setting}}`` for every field of every engine.
SETTINGS = {
    "prediction": _scoring("THATCH_PREDICTION_THRESHOLD"),
    "behavior": _scoring("THATCH_BEHAVIOR_THRESHOLD"),
    "belief": {**{f.name: _CODE for f in dataclasses.fields(BeliefParams)}, "release": _RELEASE,
               "automation_paused": Setting("env", "MEMORY_BELIEF_AUTOMATION_PAUSED")},
    "calibration": _calibration(),
    "anticipation": _anticipation(),
}


def engine_key(name: str) -> str:
    """The engine name of an export keyword (``beliefs`` → ``belief``, ``patterns`` → ``anticipation``).

    Parameters
    ----------
    name : str
        An engine name or an export keyword.

    Returns
    -------
    str
        A key of :data:`ENGINE_PARAMS`.

    Raises
    ------
    InputError
        ``name`` names no engine.

    Examples
    --------
    >>> engine_key("patterns")
    'anticipation'
    """
    key = _ALIASES.get(name, name)
    if key not in ENGINE_PARAMS:
        raise InputError(f"engine: expected one of {sorted(ENGINE_PARAMS)}, got {name!r}")
    return key


def production_params(engine: str, release: str = "latest"):
    """The parameters production runs for ``engine`` under ``release`` (default: the newest; see
    :data:`PRODUCTION_VALUES`).

    Parameters
    ----------
    engine : str
        An engine name or an export keyword.
    release : str, default="latest"
        The release, as :func:`resolve_release` takes it.

    Returns
    -------
    ScoringParams, BeliefParams, CalibrationParams or AnticipationParams
        The engine's parameters with production's values.

    See Also
    --------
    differences : What a setting changes from these.
    """
    key = engine_key(engine)
    name = resolve_release(SYSTEMS[key], release)
    return ENGINE_PARAMS[key](release=name).replace(**PRODUCTION_VALUES.get(key, {}))


def setting(engine: str, name: str) -> Setting:
    """How production sets parameter ``name`` of ``engine``.

    Parameters
    ----------
    engine : str
        An engine name or an export keyword.
    name : str
        A field of the engine's parameters.

    Returns
    -------
    Setting
        The kind of setting and its name.

    Raises
    ------
    InputError
        An unknown engine or parameter.

    See Also
    --------
    env_line : The environment line of an ``"env"`` setting.
    """
    try:
        return SETTINGS[engine_key(engine)][name]
    except KeyError:
        raise InputError(f"{engine}: no parameter {name!r}") from None


def _env_value(value) -> str:
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, (int, float)):
        return js_number(value)
    return str(value)


def env_line(engine: str, name: str, value) -> str:
    """The environment line that makes production run ``name = value`` (``"env"`` settings only).

    Parameters
    ----------
    engine : str
        An engine name or an export keyword.
    name : str
        A field production reads from its environment.
    value : bool, int, float or str
        The value; booleans are written ``1``/``0``, numbers as JavaScript prints them.

    Returns
    -------
    str
        ``VARIABLE=value``.

    Raises
    ------
    InputError
        An unknown engine or parameter, or one production does not read from its environment.

    See Also
    --------
    setting
    """
    s = setting(engine, name)
    if s.kind != "env":
        raise InputError(f"{engine}.{name}: production does not read it from its environment ({s.name})")
    return f"{s.name}={_env_value(value)}"


def differences(engine: str, params, reference=None) -> dict:
    """``{field: value}`` where ``params`` differs from ``reference`` (default: what production runs
    under ``params``' own release, so the release itself is never a difference).

    Parameters
    ----------
    engine : str
        An engine name or an export keyword.
    params : ScoringParams, BeliefParams, CalibrationParams or AnticipationParams
        The setting compared.
    reference : same type as params, optional
        What it is compared with; None is :func:`production_params` under ``params``' release.

    Returns
    -------
    dict
        Field → the value in ``params``, for every field that differs.

    See Also
    --------
    production_params

    Examples
    --------
    >>> differences("prediction", ScoringParams(k=2.0, threshold=0.6))
    {'k': 2.0}
    >>> differences("prediction", ScoringParams(release="v0.1.30"))
    {}
    """
    ref = production_params(engine, getattr(params, "release", "latest")) if reference is None else reference
    return {f.name: getattr(params, f.name) for f in dataclasses.fields(params)
            if getattr(params, f.name) != getattr(ref, f.name)}
