"""Deprecated: moved to :mod:`thatchlab.decide`; every name resolves there, with a warning.

Calling this module still calls :func:`thatchlab.decide.decide` (it was also the function's name in
``thatchlab.tune``), with the same warning.
"""

import importlib
import sys
import types

from thatchlab.tune import moved


def __getattr__(name: str):
    home = "thatchlab.decide" if hasattr(importlib.import_module("thatchlab.decide"), name) else "thatchlab.decide._core"
    return moved(__name__, home, name)


class _CallableShim(types.ModuleType):
    def __call__(self, *args, **kwargs):
        return moved("thatchlab.tune", "thatchlab.decide", "decide")(*args, **kwargs)


sys.modules[__name__].__class__ = _CallableShim
