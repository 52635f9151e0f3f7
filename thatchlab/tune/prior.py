"""Deprecated: moved to :mod:`thatchlab.fit.prior`; every name resolves there, with a warning."""

from thatchlab.tune import moved


def __getattr__(name: str):
    return moved(__name__, "thatchlab.fit.prior", name)
