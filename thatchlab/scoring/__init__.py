"""The thatch scoring engine: Bayesian confidence on situation → item rules.

One engine over four production tables (matchers, items, edges, provenance)
scores "when X, the user tends to Y" predictions and the agent's own
behaviors exactly as production thatch does: posterior confidence
``(c + K·P0) / (c + d + K)``, cosine nudges with production's rounding and
reply texts. :class:`PredictionEngine` and :class:`BehaviorEngine` are its two
configurations; :class:`EngineState` is the public columnar state replay
builds on, :class:`WriteResult` what each write did, and :class:`DedupLookup`
the hook that lets a caller answer the dedup searches from precomputed cosines.
"""

from thatchlab.scoring.behavior import BEHAVIOR_CONFIG, BehaviorEngine, laziness_flags
from thatchlab.scoring.engine import (
    ITEM_COLUMNS,
    EngineConfig,
    ScoringEngine,
    evidence_count,
    posterior_confidence,
)
from thatchlab.scoring.lookup import DedupLookup
from thatchlab.scoring.prediction import PREDICTION_CONFIG, PredictionEngine
from thatchlab.scoring.results import WRITE_ACTIONS, EdgeRow, Nudge, Reply, WriteResult, counts_text
from thatchlab.scoring.seeding import default_behaviors, read_stamp, seed_defaults, seed_stamp
from thatchlab.scoring.state import (
    ID_NAMESPACE,
    TABLE_COLUMNS,
    EngineState,
    TableView,
    deterministic_id,
)

__all__ = ["posterior_confidence", "evidence_count", "deterministic_id", "ID_NAMESPACE",
           "EngineConfig", "ScoringEngine", "Reply", "Nudge", "ITEM_COLUMNS", "EngineState",
           "TableView", "TABLE_COLUMNS", "WriteResult", "EdgeRow", "WRITE_ACTIONS", "counts_text",
           "DedupLookup", "PredictionEngine", "PREDICTION_CONFIG", "BehaviorEngine", "BEHAVIOR_CONFIG",
           "default_behaviors", "seed_defaults", "seed_stamp", "read_stamp", "laziness_flags"]
