"""Synthetic worlds with planted ground truth, seeded and deterministic."""

from thatchlab.synth.belief import BeliefWorld
from thatchlab.synth.patterns import PatternWorld
from thatchlab.synth.preference import BehaviorWorld, PreferenceWorld, simulate
from thatchlab.synth.recall import RecallWorld

__all__ = ["PreferenceWorld", "BehaviorWorld", "simulate", "PatternWorld", "BeliefWorld", "RecallWorld"]
