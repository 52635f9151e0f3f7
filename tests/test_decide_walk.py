"""decide and combine_decisions read top to bottom: each module they call into is visited once.

The walk is recorded with :func:`sys.setprofile`: every call made directly from the function's own
frame, named by the module the callee lives in. Consecutive calls into one module are one visit; a
module visited again after the walk left it would mean the reader goes back and forth (as decide
did when it re-derived the engine, directions and identification from the raw frame).
"""

import sys

import numpy as np
import pytest

from thatchlab.core.params import ScoringParams
from thatchlab.decide import combine_decisions, decide, planted_sweep
from thatchlab.decide._combine import combine_decisions as combine_impl
from thatchlab.decide._core import decide as decide_impl


def _walk(code, fn, *args, **kw) -> tuple:
    """``(result, visits)``: the thatchlab modules entered from ``code``'s frames, in order, one entry
    per visit (consecutive calls into one module merged)."""
    visits: list = []

    def profile(frame, event, arg):
        if event == "call" and frame.f_back is not None and frame.f_back.f_code is code:
            name = frame.f_globals.get("__name__", "")
            if name.startswith("thatchlab") and (not visits or visits[-1] != name):
                visits.append(name)

    sys.setprofile(profile)
    try:
        out = fn(*args, **kw)
    finally:
        sys.setprofile(None)
    return out, visits


@pytest.fixture(scope="module")
def planted():
    return planted_sweep(30, -0.05, np.random.default_rng(0))


def test_decide_reads_the_description_once_then_walks_its_own_steps(planted):
    d, visits = _walk(decide_impl.__code__, decide, planted, "log_loss", n_boot=200)
    assert visits == ["thatchlab.sweep._description", "thatchlab.decide._core"]
    assert d.shipped_parameters() == ["k"] and d.params.k == 20.0
    assert len(visits) == len(set(visits))  # no module re-entered after the walk left it


def test_combine_decisions_walks_its_own_steps(planted):
    d = decide(planted, "log_loss", n_boot=200)
    joined, visits = _walk(combine_impl.__code__, combine_decisions, [d], planted)
    assert visits == ["thatchlab.decide._combine"]
    assert joined.params == ScoringParams(k=20.0) and joined.metric == "log_loss"
