"""Synthetic worlds with planted ground truth, seeded and deterministic."""

from thatchlab.synth.behavior import BehaviorWorld
from thatchlab.synth.belief import BeliefWorld
from thatchlab.synth.closed_loop import simulate, simulate_many
from thatchlab.synth.patterns import PatternWorld
from thatchlab.synth.preference import PreferenceWorld
from thatchlab.synth.recall import RecallWorld
from thatchlab.synth.samples import SAMPLE_PRIOR, sample_interaction_logs

__all__ = ["PreferenceWorld", "BehaviorWorld", "simulate", "simulate_many", "PatternWorld", "BeliefWorld",
           "RecallWorld", "sample_interaction_logs", "SAMPLE_PRIOR"]
