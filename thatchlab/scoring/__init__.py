"""The thatch scoring engine: Bayesian confidence on situation → item rules.

One engine over four production tables (matchers, items, edges, provenance)
scores "when X, the user tends to Y" predictions and the agent's own
behaviors exactly as production thatch does: posterior confidence
``(c + K·P0) / (c + d + K)``, cosine nudges with production's rounding and
reply texts. :class:`PredictionEngine` and :class:`BehaviorEngine` are its two
configurations; :class:`EngineState` is the public columnar state replay
builds on.
"""

from thatchlab.scoring.behavior import (
    BEHAVIOR_CONFIG,
    BehaviorEngine,
    default_behaviors,
    laziness_flags,
)
from thatchlab.scoring.engine import (
    ITEM_COLUMNS,
    EngineConfig,
    Nudge,
    Reply,
    ScoringEngine,
    evidence_count,
    posterior_confidence,
)
from thatchlab.scoring.prediction import PREDICTION_CONFIG, PredictionEngine
from thatchlab.scoring.state import ID_NAMESPACE, EngineState, deterministic_id

__all__ = ["posterior_confidence", "evidence_count", "deterministic_id", "ID_NAMESPACE",
           "EngineConfig", "ScoringEngine", "Reply", "Nudge", "ITEM_COLUMNS", "EngineState",
           "PredictionEngine", "PREDICTION_CONFIG", "BehaviorEngine", "BEHAVIOR_CONFIG",
           "default_behaviors", "laziness_flags"]
