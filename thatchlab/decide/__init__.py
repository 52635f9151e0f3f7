"""Deciding: ship a configuration only when held-out data shows it helps.

This package holds :func:`decide` (a paired, cluster-robust test of a sweep's
candidate against production's default, with identification, constraints,
per-user harm and sequential looks), :class:`Decision` (what ships and the
evidence), :func:`combine_decisions` (several metrics of one engine), the
calibration study of the procedure itself (:func:`planted_sweep`,
:func:`decide_calibration`) and the main job's decision :mod:`policy`. It
reads sweep results, so it may import ``sweep`` and ``fit`` (and everything
below them); nothing but the front ends (``plots``, ``report``, ``run``,
``cli``) imports it.
"""

from thatchlab.decide import policy  # noqa: E402,I001  (the main job's policy, a public module)
from thatchlab.decide._core import Decision, combine_decisions, decide
from thatchlab.decide.calibration_study import decide_calibration, planted_sweep
from thatchlab.decide.policy import RULES, MainJobPolicy, PredictionOutcome

__all__ = ["decide", "Decision", "combine_decisions", "decide_calibration", "planted_sweep", "policy",
           "MainJobPolicy", "PredictionOutcome", "RULES"]
