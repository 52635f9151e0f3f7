"""Synthetic worlds with planted ground truth, seeded and deterministic."""

from .belief import BeliefWorld
from .patterns import PatternWorld
from .preference import BehaviorWorld, PreferenceWorld, simulate
from .recall import RecallWorld

__all__ = ["PreferenceWorld", "BehaviorWorld", "simulate", "PatternWorld", "BeliefWorld", "RecallWorld"]
