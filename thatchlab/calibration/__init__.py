"""ai-memory's confidence pipeline: derive, decay, shadow observations, calibration.

A memory's confidence is derived from observable signals (age, atom
derivation, corroboration) blended toward a per-source baseline as it ages,
decays with a half-life on recall touches, is observed in shadow beside the
caller's value, and is calibrated per (namespace, source) with consumption
utility from the recall ledger, as ai-memory does.
"""

from thatchlab.calibration._derive import (
    CONFIDENCE_SOURCES,
    EPS,
    LEDGER_ABSENT_WARNING,
    MEMORY_COLUMNS,
    OBSERVATION_COLUMNS,
    SIGNAL_FIELDS,
    CalibrationParams,
    CalibrationReport,
    CalibrationState,
    ConfidenceSource,
    backfill_recall_outcomes,
    calibrate_from_shadow,
    confidence_tier,
    decayed,
    derive,
    derive_signals,
    freshness_factor,
    gc_observations,
    recall_score,
    shadow_sample,
    signals_json,
)

__all__ = [
    "EPS",
    "derive",
    "derive_signals",
    "signals_json",
    "freshness_factor",
    "decayed",
    "confidence_tier",
    "recall_score",
    "ConfidenceSource",
    "CONFIDENCE_SOURCES",
    "CalibrationParams",
    "CalibrationReport",
    "CalibrationState",
    "SIGNAL_FIELDS",
    "shadow_sample",
    "backfill_recall_outcomes",
    "calibrate_from_shadow",
    "gc_observations",
    "OBSERVATION_COLUMNS",
    "MEMORY_COLUMNS",
    "LEDGER_ABSENT_WARNING",
]
