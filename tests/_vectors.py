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
