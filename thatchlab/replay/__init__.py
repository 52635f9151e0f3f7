"""Replay logged events through the engines under chosen parameters.

One module per engine family; each ``run*`` function returns a result
dataclass with per-event outputs, final state and metrics. :func:`fidelity`
compares a replay with the replies and nudges production logged;
:func:`fidelity_by_release` says which thatch release wrote a log.
"""

from thatchlab.replay.anticipation import AnticipationReplayResult, run_anticipation
from thatchlab.replay.belief import BeliefReplayResult, band_truth_table, run_belief
from thatchlab.replay.calibration import CalibrationResult, decay_ranking_study, run_calibration
from thatchlab.replay.fidelity import (
    PRODUCTION_MODEL,
    FidelityReport,
    ReleaseFidelity,
    fidelity,
    fidelity_by_release,
)
from thatchlab.replay.fleet import FleetResult, run_fleet
from thatchlab.replay.scoring import ReplayResult, prepare, run

__all__ = ["run", "prepare", "ReplayResult", "run_fleet", "FleetResult", "fidelity", "FidelityReport", "PRODUCTION_MODEL", "fidelity_by_release", "ReleaseFidelity", "run_anticipation", "AnticipationReplayResult", "run_belief", "BeliefReplayResult", "band_truth_table", "CalibrationResult", "run_calibration", "decay_ranking_study"]
