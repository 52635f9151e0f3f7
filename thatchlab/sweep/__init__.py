"""Sweeping: replay a log under many parameter configurations and score each.

This package holds :func:`sweep` and what it is made of: search spaces (grid,
seeded random, Optuna), the engine registry (:class:`EngineSpec`,
:func:`register_engine`), the runners (in process, loky, a Dask cluster), the
clustered resampling sums a decision needs (:class:`ClusterStats`), saving and
loading results (:func:`save_sweep`, :func:`load_sweep`) and reading them
(:func:`best`, :func:`pareto`, :func:`identification`). It may import
``core``, the engines, ``replay`` and ``metrics``; never ``fit``, ``decide``
or anything above them.

What :func:`sweep` returns: one row per distinct configuration in proposal
order, columns in :class:`~thatchlab.sweep._columns.ColumnOrder`: every
parameter field, then for each scored segment (``val`` and ``test``; under a
``TimeSeriesSplit`` ``val`` holds each metric's mean over the folds ``val0``,
``val1``..., which follow it) every score the engine declares
(:meth:`EngineSpec.score_names`: its metrics in registered order, then counts
such as ``n_labelled``) and, with ``intervals``, ``<m>_lo``/``<m>_hi`` of
every metric; then ``engine``, ``config_id``, ``sweep_id``, ``embedder``,
``estimator``. The column set and order are fixed by the engine, the split (a
holdout fraction, or a ``TimeSeriesSplit`` and its number of folds) and
whether intervals are asked for, *never* by ``metric``: sweeps on different
metrics concatenate into one aligned frame. A score the engine does not
compute for a request is NaN, not absent (the ``prediction`` and ``behavior``
engines score only the forecasts, ``log_loss``, ``brier``, ``ece`` and
``n_forecasts``, when only those metrics are asked; their regime columns are
then NaN).

Its ``attrs``: ``engine``, ``metric`` (the optimised one), ``metrics`` (the
metrics asked), ``holdout``; ``unidentified`` (swept parameters that none of
the metrics can see, see :func:`identification`; a ``UserWarning`` names
them); ``identification`` (metric → its unidentified parameters);
``clusters`` (engines with clusters: a :class:`ClusterStats` of per-cluster
sums of every ratio metric, configuration and segment, for paired cluster
bootstraps such as :func:`thatchlab.decide.decide`) and ``cluster_parents``
(the levels the clusters nest in, e.g. users). :func:`describe` (or
``frame.sweep``) reads all of it once as a :class:`SweepDescription`.
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
