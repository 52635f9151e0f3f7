"""Integer-coded group operations shared by the session miners (conditional, co-occurrence).

Rows are reduced to integer codes once (workspace, session, item), then
first/last times, distinct counts and within-session pairs are computed with
``factorize``, ``bincount`` and ``searchsorted`` instead of string group-bys.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from thatchlab.core.errors import InputError
from thatchlab.core.frames import key_column
from thatchlab.core.time import as_utc_series

__all__ = ["session_codes", "first_or_last", "pairs_within", "require_values", "utc_ns"]


def require_values(df: pd.DataFrame, what: str, columns) -> None:
    """Raise :class:`InputError` naming the first row of ``df`` with no value in one of ``columns``
    (a null key would be coded -1 and counted with another group), or with a value that cannot
    key a group (a list, a dict: :func:`~thatchlab.core.frames.key_column`)."""
    for col in columns:
        missing = df[col].isna().to_numpy(bool)
        if missing.any():
            raise InputError(f"{what}: row {int(np.flatnonzero(missing)[0])}, column {col!r}: "
                             "expected a value, got null")
        key_column(df[col], what, col)


def utc_ns(col: pd.Series, what: str) -> np.ndarray:
    """A time column as UTC nanoseconds; a null time raises :class:`InputError`."""
    if isinstance(col.dtype, pd.DatetimeTZDtype) and col.dtype.unit == "ns":
        ts = col.array.asi8  # UTC nanoseconds already, in range by construction
    else:
        ts = as_utc_series(col.reset_index(drop=True), what=f"{what}.ts").array.asi8
    if (ts == np.iinfo(np.int64).min).any():
        raise InputError(f"{what}.ts: null timestamps; expected an aware time on every row")
    return ts


def session_codes(workspace, session):
    """Codes of (workspace, session) and of workspace; the session code orders by workspace first."""
    w_code, w_uni = pd.factorize(np.asarray(workspace, dtype=object), sort=True)
    s_code, _ = pd.factorize(np.asarray(session, dtype=object), sort=True)
    key = w_code.astype(np.int64) * (int(s_code.max()) + 1 if len(s_code) else 1) + s_code
    sess, sess_uni = pd.factorize(key, sort=True)
    return sess.astype(np.int64), w_code.astype(np.int64), w_uni


def first_or_last(sess, item, t, n_items, how):
    """One row per distinct (session, item): arrays (session, item, time) sorted by (session, item),
    time being the earliest (``how="min"``) or latest (``"max"``) of the group."""
    key = sess * n_items + item
    code, uni = pd.factorize(key, sort=True)
    fill = np.iinfo(np.int64).max if how == "min" else np.iinfo(np.int64).min
    out = np.full(len(uni), fill, dtype=np.int64)
    (np.minimum if how == "min" else np.maximum).at(out, code, t)
    return uni // n_items, uni % n_items, out


def pairs_within(sess_a, sess_b, *, strictly_after_self=False):
    """Index pairs (i, j) of rows of A and rows of B in the same session (both sorted by session).

    With ``strictly_after_self`` (A is B), only j > i: each unordered pair once.
    """
    lo = np.searchsorted(sess_b, sess_a, side="left")
    hi = np.searchsorted(sess_b, sess_a, side="right")
    if strictly_after_self:
        lo = np.arange(len(sess_a)) + 1
    cnt = np.maximum(hi - lo, 0)
    total = int(cnt.sum())
    i = np.repeat(np.arange(len(sess_a)), cnt)
    j = np.repeat(lo - (np.cumsum(cnt) - cnt), cnt) + np.arange(total)
    return i, j
