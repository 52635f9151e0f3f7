"""Deprecated: moved to :mod:`thatchlab.decide.policy`; every name resolves there, with a warning."""

from thatchlab.tune import moved


def __getattr__(name: str):
    return moved(__name__, "thatchlab.decide.policy", name)
