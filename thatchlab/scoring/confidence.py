"""The confidence formulas shared by the engine, its replays and the fitters.

Both are vectorised (scalars or arrays broadcast together), so the engine,
the vectorised replay and the sweeps compute each number with one definition.
"""

from __future__ import annotations

import numpy as np

from thatchlab.core.jsfmt import js_round

__all__ = ["posterior_confidence", "evidence_count"]

_NUMBER = (float, int)


def posterior_confidence(c, d, k=5.0, p0=0.5):
    """Posterior mean confidence of an item: ``(c + K·P0) / (c + d + K)``.

    ``c`` counts confirms, ``d`` disconfirms (soft signals add their weight to
    ``d``). Vectorised: scalars or arrays broadcast together.

    Parameters
    ----------
    c : float or array-like
        Confirm count.
    d : float or array-like
        Disconfirm count (soft signals included).
    k : float or array-like, default=5.0
        Prior strength ``K``.
    p0 : float or array-like, default=0.5
        Prior mean ``P0``.

    Returns
    -------
    float or ndarray
        A float for scalars, else an array.

    See Also
    --------
    evidence_count : The number of tests shown beside the confidence.

    Examples
    --------
    >>> posterior_confidence(0, 0)
    0.5
    >>> posterior_confidence(1, 0), posterior_confidence(0, 1.25)
    (0.5833333333333334, 0.4)
    >>> posterior_confidence([3, 0], [0, 3], k=5, p0=0.5).round(4).tolist()
    [0.6875, 0.3125]
    """
    if type(c) is float and type(d) is float and type(k) in _NUMBER and type(p0) in _NUMBER:
        k, p0 = float(k), float(p0)
        total = c + d + k
        if total != 0.0:  # one write's counts: the same IEEE operations in Python floats
            return (c + k * p0) / total
    c = np.asarray(c, dtype=np.float64)
    d = np.asarray(d, dtype=np.float64)
    k = np.asarray(k, dtype=np.float64)
    p0 = np.asarray(p0, dtype=np.float64)
    out = (c + k * p0) / (c + d + k)
    if out.ndim == 0:
        return float(out)
    return out


def evidence_count(c, d):
    """Number of tests shown beside an item: JavaScript ``Math.round(c + d)``.

    Parameters
    ----------
    c : float or array-like
        Confirm count.
    d : float or array-like
        Disconfirm count.

    Returns
    -------
    int or ndarray
        An int for scalars, else an int64 array.

    See Also
    --------
    posterior_confidence : The confidence of the same counts.

    Examples
    --------
    >>> evidence_count(0, 0.5), evidence_count(2, 0.25), evidence_count(2, 0.5)
    (1, 2, 3)
    """
    out = js_round(np.asarray(c, dtype=np.float64) + np.asarray(d, dtype=np.float64))
    if np.ndim(out) == 0:
        return int(out)
    return out.astype(np.int64)

