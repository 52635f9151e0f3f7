"""Frozen parameter dataclasses of every engine, with production defaults,
and the vocabularies (signals, belief classes, memory kinds) the engines share.

Each engine's parameters live in their own submodule and are re-exported here.
"""

from ._base import ParamsBase
from .scoring import BEHAVIOR_SIGNALS, DEDUP_SCOPES, PREDICTION_SIGNALS, ScoringParams

__all__ = ["ParamsBase", "ScoringParams", "PREDICTION_SIGNALS", "BEHAVIOR_SIGNALS", "DEDUP_SCOPES"]
