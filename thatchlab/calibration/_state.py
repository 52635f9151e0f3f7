"""The calibration engine's state in ai-memory's schema, and the confidence sources it names."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field

import pandas as pd

from thatchlab.core.params.calibration import CONFIDENCE_SOURCES, CalibrationParams
from thatchlab.core.schema import OBSERVATION_COLUMNS

__all__ = ["ConfidenceSource", "CONFIDENCE_SOURCES", "MEMORY_COLUMNS", "CalibrationState"]

#: Columns of the memories patch table (ai-memory's confidence columns, keyed by id).
MEMORY_COLUMNS = ("id", "confidence", "confidence_source", "confidence_signals", "confidence_decayed_at")


class ConfidenceSource(str, enum.Enum):
    """The trust path of a memory's confidence (``memories.confidence_source``)."""

    CALLER_PROVIDED = "caller_provided"
    AUTO_DERIVED = "auto_derived"
    CALIBRATED = "calibrated"
    DECAYED = "decayed"
    CURATOR_DERIVED = "curator_derived"

    def __str__(self) -> str:
        return self.value


@dataclass
class CalibrationState:
    """The calibration engine's state in ai-memory's schema.

    Attributes
    ----------
    memories : DataFrame with :data:`MEMORY_COLUMNS` (ai-memory's ``memories``
        confidence columns keyed by ``id``; times as ``datetime64[ns, UTC]``).
    observations : DataFrame with :data:`OBSERVATION_COLUMNS`
        (``confidence_shadow_observations``).
    params : the :class:`CalibrationParams` that produced it.
    """

    memories: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(columns=list(MEMORY_COLUMNS)))
    observations: pd.DataFrame = field(
        default_factory=lambda: pd.DataFrame(columns=list(OBSERVATION_COLUMNS)))
    params: CalibrationParams = field(default_factory=CalibrationParams)

    @property
    def tables(self) -> dict:
        return {"memories": self.memories, "confidence_shadow_observations": self.observations}
