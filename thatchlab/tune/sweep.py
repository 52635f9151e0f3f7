"""Deprecated: moved to :mod:`thatchlab.sweep`; every name resolves there, with a warning.

Calling this module still calls :func:`thatchlab.sweep.sweep` (it was also the function's name in
``thatchlab.tune``), with the same warning.
"""

import importlib
import sys
import types

from thatchlab.tune import moved


def __getattr__(name: str):
    home = "thatchlab.sweep" if hasattr(importlib.import_module("thatchlab.sweep"), name) else "thatchlab.sweep._core"
    return moved(__name__, home, name)


class _CallableShim(types.ModuleType):
    def __call__(self, *args, **kwargs):
        return moved("thatchlab.tune", "thatchlab.sweep", "sweep")(*args, **kwargs)


sys.modules[__name__].__class__ = _CallableShim
