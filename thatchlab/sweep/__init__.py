"""Sweeping: replay a log under many parameter configurations and score each.

This package holds :func:`sweep` and what it is made of: search spaces (grid,
seeded random, Optuna), the engine registry (:class:`EngineSpec`,
:func:`register_engine`), the runners (in process, loky, a Dask cluster), the
clustered resampling sums a decision needs (:class:`ClusterStats`), saving and
loading results (:func:`save_sweep`, :func:`load_sweep`) and reading them
(:func:`best`, :func:`pareto`, :func:`identification`). It may import
``core``, the engines, ``replay`` and ``metrics``; never ``fit``, ``decide``
or anything above them.
"""

import sys
import types
import warnings

from thatchlab.sweep import _engines, _scoring_engines  # the built-in engines, registered below
from thatchlab.sweep._core import config_id, holdout_segments, sweep
from thatchlab.sweep._description import SweepDescription, describe
from thatchlab.sweep.persist import load_sweep, save_sweep
from thatchlab.sweep.reading import BestConfig, best, identification, metric_direction, pareto
from thatchlab.sweep.registry import (
    EngineSpec,
    Prepared,
    Segment,
    engines,
    get_engine,
    register_engine,
)
from thatchlab.sweep.resampling import ClusterStats

__all__ = ["sweep", "best", "BestConfig", "holdout_segments", "config_id", "pareto", "identification",
           "metric_direction", "EngineSpec", "Prepared", "Segment", "engines", "get_engine",
           "register_engine", "ClusterStats", "save_sweep", "load_sweep", "SweepDescription", "describe"]


def _register_builtin() -> None:
    """Register the engines thatchlab ships; the registry sits below them, so the package does it."""
    builtin = {"prediction": _scoring_engines.prediction_spec, "behavior": _scoring_engines.behavior_spec,
               "belief": _engines.belief_spec, "calibration": _engines.calibration_spec,
               "anticipation": _engines.anticipation_spec}
    for name, factory in builtin.items():
        register_engine(factory, name=name, replace=True)


_register_builtin()


class _CallablePackage(types.ModuleType):
    """``thatchlab.sweep(...)`` was the function before this package existed; keep it for one release."""

    def __call__(self, *args, **kwargs):
        warnings.warn("calling the package thatchlab.sweep is deprecated; call thatchlab.sweep.sweep",
                      DeprecationWarning, stacklevel=2)
        return sweep(*args, **kwargs)


sys.modules[__name__].__class__ = _CallablePackage
