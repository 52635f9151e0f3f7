"""Synthetic worlds with planted ground truth, seeded and deterministic."""

from thatchlab.synth.belief import BeliefWorld
from thatchlab.synth.patterns import PatternWorld
from thatchlab.synth.preference import BehaviorWorld, PreferenceWorld, simulate, simulate_many
from thatchlab.synth.recall import RecallWorld

__all__ = ["PreferenceWorld", "BehaviorWorld", "simulate", "simulate_many", "PatternWorld", "BeliefWorld", "RecallWorld"]
