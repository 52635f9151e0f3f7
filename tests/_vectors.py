"""Hand-made vectors with known cosines for engine tests."""

import numpy as np


def unit(*xs):
    v = np.asarray(xs, dtype=np.float64)
    return (v / np.linalg.norm(v)).tolist()


def at_cos(c, dim=8, axis=0, other=1):
    """A unit vector whose cosine with basis vector ``axis`` is ``c``."""
    v = np.zeros(dim)
    v[axis] = c
    v[other] = np.sqrt(max(0.0, 1 - c * c))
    return v.tolist()


def basis(i, dim=8):
    v = np.zeros(dim)
    v[i] = 1.0
    return v.tolist()


def assert_same_metrics(a: dict, b: dict) -> None:
    """Two metrics dicts are equal key by key, NaN equal to NaN (a rate with no denominator)."""
    assert a.keys() == b.keys()
    for key in a:
        x, y = a[key], b[key]
        if isinstance(x, float) and isinstance(y, float) and x != x and y != y:
            continue
        assert x == y, (key, x, y)
