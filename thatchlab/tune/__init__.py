"""Deprecated: the tuning room is now three packages, :mod:`thatchlab.fit`, :mod:`thatchlab.sweep` and
:mod:`thatchlab.decide`.

Every public name of ``thatchlab.tune`` (and its public modules, e.g. ``thatchlab.tune.prior``)
still resolves, with a :class:`DeprecationWarning` naming its new home; this shim is removed in the
next release.
"""

from __future__ import annotations

import importlib
import warnings

_FIT = ("BaseFitter", "NotFittedError", "PriorFitter", "HalfLifeFitter", "exposure_segments",
        "DeriveWeightsFitter", "transfer_threshold")
_SWEEP = ("sweep", "best", "BestConfig", "holdout_segments", "config_id", "pareto", "identification",
          "metric_direction", "EngineSpec", "Prepared", "Segment", "engines", "get_engine",
          "register_engine", "ClusterStats", "save_sweep", "load_sweep")
_DECIDE = ("decide", "Decision", "combine_decisions", "decide_calibration", "planted_sweep", "policy",
           "MainJobPolicy", "PredictionOutcome", "RULES")
MOVED = {**dict.fromkeys(_FIT, "thatchlab.fit"), **dict.fromkeys(_SWEEP, "thatchlab.sweep"),
         **dict.fromkeys(_DECIDE, "thatchlab.decide")}

__all__ = sorted(MOVED)


def moved(old: str, new: str, name: str):
    """``name`` of module ``new``, with a warning that ``old`` is deprecated (the shim modules' lookup)."""
    try:
        value = getattr(importlib.import_module(new), name)
    except AttributeError:
        raise AttributeError(f"module {old!r} has no attribute {name!r}") from None
    warnings.warn(f"{old}.{name} is deprecated and moves out in the next release: use {new}.{name}",
                  DeprecationWarning, stacklevel=3)
    return value


def __getattr__(name: str):
    if name not in MOVED:
        raise AttributeError(f"module 'thatchlab.tune' has no attribute {name!r}")
    value = moved(__name__, MOVED[name], name)
    globals()[name] = value  # warn once per name (a from-import looks a name up twice)
    return value


def __dir__():
    return sorted(set(globals()) | set(__all__))
