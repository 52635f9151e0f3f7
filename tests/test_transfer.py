"""transfer_threshold: quantile matching of cosine distributions between embedders."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from thatchlab.core.errors import InputError
from thatchlab.fit import transfer_threshold

FROM = [0.1, 0.2, 0.3, 0.4]
TO = [0.5, 0.6, 0.7, 0.8]


def test_literal_values():
    assert transfer_threshold(0.25, FROM, TO) == pytest.approx(0.65, abs=1e-15)
    # a threshold equal to a cosine lets that pair pass (>=): 0.3 -> 2 below -> midpoint of 0.6, 0.7
    assert transfer_threshold(0.3, FROM, TO) == pytest.approx(0.65, abs=1e-15)
    assert transfer_threshold(0.0, FROM, TO) == 0.5           # every pair passes
    assert transfer_threshold(0.9, FROM, TO) == np.nextafter(0.8, 1.0)  # none passes
    out = transfer_threshold(np.array([0.15, 0.35]), FROM, TO)
    assert out.tolist() == pytest.approx([0.55, 0.75], abs=1e-15)


def test_unsorted_and_matrix_inputs():
    a = np.array([[0.4, 0.1], [0.3, 0.2]])
    b = np.array([[0.8, 0.5], [0.6, 0.7]])  # not aligned by rank; only distributions matter
    assert transfer_threshold(0.25, a, b) == pytest.approx(0.65, abs=1e-15)


def test_errors():
    with pytest.raises(InputError, match="same shape"):
        transfer_threshold(0.5, [0.1, 0.2], [0.1])
    with pytest.raises(InputError, match="finite"):
        transfer_threshold(0.5, [0.1, np.nan], [0.1, 0.2])
    with pytest.raises(InputError, match="at least one"):
        transfer_threshold(0.5, [], [])


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(-1, 1), min_size=2, max_size=40, unique=True), st.floats(-1, 1), st.floats(-1, 1),
       st.integers(0, 2**31))
def test_pass_share_preserved_and_monotone(src, t1, t2, seed):
    src = np.array(src)
    rng = np.random.default_rng(seed)
    dst = np.tanh(3 * src + 0.1) if seed % 2 else rng.permutation(np.linspace(-0.5, 0.9, len(src)))
    lo, hi = sorted((t1, t2))
    a, b = transfer_threshold(lo, src, dst), transfer_threshold(hi, src, dst)
    assert a <= b
    # same number of pairs pass under both models (distinct values: no ties)
    if len(np.unique(dst)) == len(dst):
        assert int((dst >= a).sum()) == int((src >= lo).sum())
    # identical distributions: a pass set of the same size
    same = transfer_threshold(lo, src, src)
    assert int((src >= same).sum()) == int((src >= lo).sum())


def test_adjacent_floats_keep_the_pass_count():
    # the midpoint of two adjacent floats rounds to one of them; the lower one would let both pass
    lo = 0.09966799462495582
    dst = np.array([lo, np.nextafter(lo, 1.0)])
    src = np.array([-1.4e-45, 2.3e-18])
    t = transfer_threshold(0.0, src, dst)
    assert int((dst >= t).sum()) == int((src >= 0.0).sum()) == 1
