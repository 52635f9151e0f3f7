"""Frozen parameter dataclasses of every engine, with production defaults,
and the vocabularies (signals, belief classes, memory kinds) the engines share.

Each engine's parameters live in their own submodule and are re-exported here,
with :class:`ParamsMixin`, the ``get_params``/``set_params`` every engine and
fitter shares.
"""

from thatchlab.core.params._base import ParamsBase
from thatchlab.core.params._estimator import EstimatorParamsError, ParamsMixin
from thatchlab.core.params._releases import (
    RELEASES,
    SYSTEMS,
    Release,
    ReleaseError,
    Source,
    at_least,
    latest_release,
    release_info,
    release_names,
    resolve_release,
    system_of,
)
from thatchlab.core.params.anticipation import SEQUENTIAL_MODES, AnticipationParams
from thatchlab.core.params.belief import (
    BELIEF_BANDS,
    BELIEF_CLASSES,
    BELIEF_PRIORS,
    BELIEF_STATUSES,
    BELIEF_VIEWS,
    EVIDENCE_EVENTS,
    MEMORY_LOG_KINDS,
    MEMORY_TIERS,
    NO_DECAY_MEMORY_KINDS,
    BeliefParams,
)
from thatchlab.core.params.calibration import CONFIDENCE_SOURCES, RECALL_OUTCOMES, CalibrationParams
from thatchlab.core.params.scoring import (
    BEHAVIOR_SIGNALS,
    DEDUP_SCOPES,
    PREDICTION_SIGNALS,
    RELEASE_DEDUP_SCOPE,
    ScoringParams,
)

__all__ = ["ParamsBase", "ParamsMixin", "EstimatorParamsError", "AnticipationParams", "SEQUENTIAL_MODES", "ScoringParams", "PREDICTION_SIGNALS", "BEHAVIOR_SIGNALS", "DEDUP_SCOPES",
           "RELEASE_DEDUP_SCOPE", "RELEASES", "SYSTEMS", "Release", "ReleaseError", "Source", "at_least",
           "latest_release", "release_info", "release_names", "resolve_release", "system_of",
           "CalibrationParams", "CONFIDENCE_SOURCES", "RECALL_OUTCOMES",
           "BeliefParams", "BELIEF_PRIORS", "BELIEF_CLASSES", "BELIEF_STATUSES", "BELIEF_BANDS",
           "BELIEF_VIEWS", "EVIDENCE_EVENTS", "MEMORY_LOG_KINDS", "NO_DECAY_MEMORY_KINDS", "MEMORY_TIERS"]
