"""thatchlab: the math behind agent memory.

Replay logged interactions through exact re-implementations of production
agent-memory engines (thatch's prediction and behavior scoring, omi's belief
currency, ai-memory's confidence calibration, mnemo's anticipation), measure
what their parameters do, tune them, and export stores production opens
unchanged.

The main names are available here and load on first use, so ``import
thatchlab`` stays fast:

>>> import thatchlab
>>> thatchlab.posterior_confidence(3, 1)
0.6111111111111112
>>> thatchlab.to_fixed(0.625, 2)
'0.63'
"""

from __future__ import annotations

import importlib

__version__ = "0.1.0"

#: public name → the module that defines it.
_NAMES = {
    "PredictionEngine": "thatchlab.scoring",
    "BehaviorEngine": "thatchlab.scoring",
    "EngineState": "thatchlab.scoring",
    "posterior_confidence": "thatchlab.scoring",
    "ScoringParams": "thatchlab.core.params",
    "BeliefParams": "thatchlab.core.params",
    "CalibrationParams": "thatchlab.core.params",
    "AnticipationParams": "thatchlab.core.params",
    "ThatchlabError": "thatchlab.core.errors",
    "js_round": "thatchlab.core.jsfmt",
    "to_fixed": "thatchlab.core.jsfmt",
    "Embedder": "thatchlab.embed",
    "LookupEmbedder": "thatchlab.embed",
    "default_embedder": "thatchlab.embed",
    "import_sqlite": "thatchlab.store",
    "export_sqlite": "thatchlab.store",
    "merge_into": "thatchlab.store",
    "best": "thatchlab.sweep",
    "PriorFitter": "thatchlab.fit",
    "HalfLifeFitter": "thatchlab.fit",
    "DeriveWeightsFitter": "thatchlab.fit",
}

_SUBPACKAGES = ("core", "embed", "logs", "datasets", "scoring", "belief", "calibration", "anticipation",
                "replay", "synth", "metrics", "fit", "sweep", "decide", "tune", "store", "plots", "report", "cli")

__all__ = sorted(_NAMES) + list(_SUBPACKAGES) + ["__version__"]


def __getattr__(name: str):
    if name in _NAMES:
        value = getattr(importlib.import_module(_NAMES[name]), name)
    elif name in _SUBPACKAGES:
        value = importlib.import_module(f"thatchlab.{name}")
    else:
        raise AttributeError(f"module 'thatchlab' has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(__all__))
