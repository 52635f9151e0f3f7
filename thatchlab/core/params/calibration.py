"""Parameters of the ai-memory confidence pipeline: derive, decay, shadow, calibration.

The derive coefficients and the half-life are fields, so the hand-set values
production ships with (0.5, 0.1, 0.05, 0.02, 30 days) can be swept and fitted.
"""

from __future__ import annotations

from dataclasses import dataclass

from thatchlab.core.errors import ParamsError
from thatchlab.core.params._base import ParamsBase, check_number
from thatchlab.core.params._releases import latest_release, resolve_release

#: The longest report window in days (``thatchlab.calibration.MAX_WINDOW_DAYS``).
_MAX_WINDOW_DAYS = 36_500

__all__ = ["CalibrationParams", "CONFIDENCE_SOURCES", "RECALL_OUTCOMES"]

#: Values of ai-memory's ``memories.confidence_source`` (the trust path of a value).
CONFIDENCE_SOURCES = ("caller_provided", "auto_derived", "calibrated", "decayed", "curator_derived")
#: Values of ``confidence_shadow_observations.recall_outcome`` besides NULL.
RECALL_OUTCOMES = ("consumed", "unconsumed")


@dataclass(frozen=True)
class CalibrationParams(ParamsBase):
    """Confidence derive / decay / shadow parameters, production defaults.

    The derive base is ``intercept + atom_bump·atom + corroboration_weight·log10(1+n)
    − age_penalty·age·ln2/half_life``.

    Parameters
    ----------
    intercept : float, default=0.5
        Intercept of the derive base.
    atom_bump : float, default=0.1
        Added to the base for an atom (a memory derived from another).
    corroboration_weight : float, default=0.05
        Weight of ``log10(1 + corroboration)`` in the base.
    age_penalty : float, default=0.02
        Weight of ``age·ln2/half_life`` subtracted from the base.
    half_life_days : float, default=30.0
        Freshness half-life in days for derive and for decay on recall.
    baseline : float, default=0.5
        The per-source baseline derive blends toward as content ages.
    sample_rate : float, default=1.0
        Shadow sampling rate in [0, 1] (``AI_MEMORY_CONFIDENCE_SHADOW_SAMPLE_RATE``).
    window_days : float, default=30.0
        Calibration report window in days, 0 to 36500 (``--days``).
    retention_days : float, default=90.0
        Shadow-observation retention for GC; ``<= 0`` keeps everything
        (a thatchlab choice: 90 days; production does not fix a default here).
    decay_on_recall : bool, default=True
        Replay applies freshness decay on every recall touch
        (``AI_MEMORY_CONFIDENCE_DECAY=1``); production's default is off.
    auto_confidence : bool, default=False
        Memories store the derived value at write time (``auto_derived``)
        instead of the caller's (``AI_MEMORY_AUTO_CONFIDENCE=1``); production's default is off.
    confidence_weight : float, default=2.0
        Weight of confidence in the recall score (``text + confidence × 2.0``).
    release : str, default="0a5770a"
        The ai-memory code replayed (``"v0.7.0"``, ``"a78a228"``, ``"0a5770a"``; ``"latest"``:
        the newest).

    Raises
    ------
    ParamsError
        A field outside its domain or an unknown release.

    See Also
    --------
    ScoringParams, BeliefParams, AnticipationParams : The other engines' parameters.

    Examples
    --------
    >>> CalibrationParams().half_life_days, CalibrationParams().replace(atom_bump=0.2).atom_bump
    (30.0, 0.2)
    """

    intercept: float = 0.5
    atom_bump: float = 0.1
    corroboration_weight: float = 0.05
    age_penalty: float = 0.02
    half_life_days: float = 30.0
    baseline: float = 0.5
    sample_rate: float = 1.0
    window_days: float = 30.0
    retention_days: float = 90.0
    decay_on_recall: bool = True
    auto_confidence: bool = False
    confidence_weight: float = 2.0
    release: str = latest_release("ai-memory")

    def _validate(self) -> dict:
        for name in ("decay_on_recall", "auto_confidence"):
            if not isinstance(getattr(self, name), bool):
                raise ParamsError(f"{name}: expected true or false, got {getattr(self, name)!r}")
        return dict(
            intercept=check_number("intercept", self.intercept),
            atom_bump=check_number("atom_bump", self.atom_bump),
            corroboration_weight=check_number("corroboration_weight", self.corroboration_weight),
            age_penalty=check_number("age_penalty", self.age_penalty),
            half_life_days=check_number("half_life_days", self.half_life_days, lo=0, lo_open=True),
            baseline=check_number("baseline", self.baseline, lo=0, hi=1),
            sample_rate=check_number("sample_rate", self.sample_rate, lo=0, hi=1),
            # the report refuses a window beyond 100 years (calibration.MAX_WINDOW_DAYS): say so here,
            # not as an overflow of the replay's windows
            window_days=check_number("window_days", self.window_days, lo=0, hi=_MAX_WINDOW_DAYS),
            retention_days=check_number("retention_days", self.retention_days),
            confidence_weight=check_number("confidence_weight", self.confidence_weight),
            release=resolve_release("ai-memory", self.release),
        )

    def derive_kwargs(self) -> dict:
        """The keyword arguments of :func:`thatchlab.calibration.derive` these params set.

        Returns
        -------
        dict
            ``baseline``, ``half_life_days`` and the four derive coefficients.
        """
        return dict(baseline=self.baseline, half_life_days=self.half_life_days,
                    intercept=self.intercept, atom_bump=self.atom_bump,
                    corroboration_weight=self.corroboration_weight, age_penalty=self.age_penalty)
