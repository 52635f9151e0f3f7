"""Moving a cosine threshold from one embedder to another (quantile matching).

Thresholds tuned on one embedding model do not transfer to another: the two
models spread the same pairs of texts over different cosine ranges. Quantile
matching keeps the *share* of pairs that pass: the new threshold lets through
the same fraction of the same pairs under the new model.
"""

from __future__ import annotations

import numpy as np

from thatchlab.core.errors import InputError

__all__ = ["transfer_threshold"]


def transfer_threshold(threshold, from_cosines, to_cosines):
    """Map ``threshold`` from one embedder's cosines to another's by quantile matching.

    With ``m = #{from_cosines < threshold}`` (a pair passes when its cosine is
    ``≥ threshold``, as in production) and ``s`` the sorted ``to_cosines``,
    the new threshold is the midpoint ``(s[m−1] + s[m]) / 2`` — so exactly
    ``n − m`` pairs pass under both models when there are no ties — or
    ``s[0]`` when ``m = 0`` (every pair passes) and the next float above
    ``s[n−1]`` when ``m = n`` (none passes).

    Parameters
    ----------
    threshold : float or array-like of float
        Threshold(s) under the *from* model.
    from_cosines, to_cosines : array-like of float
        Cosines of the same text pairs under the two models (same shape;
        any shape, flattened).

    Returns
    -------
    float or ndarray
        The threshold(s) under the *to* model.

    Raises
    ------
    InputError
        When the two cosine arrays differ in shape, are empty, or a cosine
        or threshold is not finite.

    Examples
    --------
    >>> round(transfer_threshold(0.25, [0.1, 0.2, 0.3, 0.4], [0.5, 0.6, 0.7, 0.8]), 6)
    0.65
    >>> transfer_threshold([0.0, 0.35], [0.1, 0.2, 0.3, 0.4], [0.5, 0.6, 0.7, 0.8]).tolist()
    [0.5, 0.75]
    """
    src = np.asarray(from_cosines, dtype=np.float64)
    dst = np.asarray(to_cosines, dtype=np.float64)
    if src.shape != dst.shape:
        raise InputError(f"from_cosines and to_cosines: expected cosines of the same text pairs "
                         f"(same shape), got {src.shape} and {dst.shape}")
    src, dst = src.ravel(), dst.ravel()
    if src.size == 0:
        raise InputError("from_cosines: expected at least one cosine")
    if not (np.isfinite(src).all() and np.isfinite(dst).all()):
        raise InputError("from_cosines/to_cosines: expected finite cosines (no NaN or inf)")
    t = np.asarray(threshold, dtype=np.float64)
    if not np.isfinite(t).all():
        raise InputError(f"threshold: expected finite values, got {threshold!r}")
    n = src.size
    m = np.searchsorted(np.sort(src), t, side="left")
    s = np.sort(dst)
    lo = s[np.clip(m - 1, 0, n - 1)]
    hi = s[np.clip(m, 0, n - 1)]
    mid = (lo + hi) / 2.0
    # between two adjacent floats the midpoint rounds to one of them: never to the one below,
    # or that pair would pass too
    mid = np.where((mid <= lo) & (hi > lo), hi, mid)
    out = np.where(m == 0, s[0], np.where(m >= n, np.nextafter(s[-1], np.inf), mid))
    return float(out) if out.ndim == 0 else out
