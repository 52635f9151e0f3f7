"""The calibration engine's state in ai-memory's schema, and the confidence sources it names."""

from __future__ import annotations

import enum
import inspect
from dataclasses import dataclass, field

import pandas as pd

from thatchlab.core.params.calibration import CONFIDENCE_SOURCES, CalibrationParams
from thatchlab.core.schema import OBSERVATION_COLUMNS

__all__ = ["ConfidenceSource", "CONFIDENCE_SOURCES", "MEMORY_COLUMNS", "CalibrationState"]

#: Columns of the memories patch table (ai-memory's confidence columns, keyed by id).
MEMORY_COLUMNS = ("id", "confidence", "confidence_source", "confidence_signals", "confidence_decayed_at")


class ConfidenceSource(str, enum.Enum):
    """The trust path of a memory's confidence (``memories.confidence_source``).

    Parameters
    ----------
    value : str
        One of the five source names; the member of that name is returned.
    """

    # the members are looked up by value; the functional API's other arguments are not part of it
    __signature__ = inspect.Signature([inspect.Parameter("value", inspect.Parameter.POSITIONAL_ONLY)])

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

    Parameters
    ----------
    memories : DataFrame, default=empty
        :data:`MEMORY_COLUMNS` (ai-memory's ``memories`` confidence columns
        keyed by ``id``; times as ``datetime64[ns, UTC]``).
    observations : DataFrame, default=empty
        :data:`OBSERVATION_COLUMNS` (``confidence_shadow_observations``).
    params : CalibrationParams, default=CalibrationParams()
        The parameters that produced it.

    Attributes
    ----------
    memories : DataFrame
        The memories patch table.
    observations : DataFrame
        The shadow observations.
    params : CalibrationParams
        The parameters that produced it.
    tables : dict
        The two tables by their ai-memory names.
    """

    memories: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(columns=list(MEMORY_COLUMNS)))
    observations: pd.DataFrame = field(
        default_factory=lambda: pd.DataFrame(columns=list(OBSERVATION_COLUMNS)))
    params: CalibrationParams = field(default_factory=CalibrationParams)

    @property
    def tables(self) -> dict:
        """``{"memories": ..., "confidence_shadow_observations": ...}``: the tables by their
        ai-memory names."""
        return {"memories": self.memories, "confidence_shadow_observations": self.observations}
