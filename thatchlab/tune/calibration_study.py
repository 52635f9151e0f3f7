"""Deprecated: moved to :mod:`thatchlab.decide.calibration_study`; every name resolves there, with a warning."""

from thatchlab.tune import moved


def __getattr__(name: str):
    return moved(__name__, "thatchlab.decide.calibration_study", name)
