"""Time order: logs are read, and replayed, sorted by ``ts``, saying when they had to be sorted.

Engines apply events at their own timestamps, so a log taken in file order
that is not in time order would replay a different history (a shuffled log
once moved the wrong-silent-follow rate from 0.19 to 0.33). Sorting is
stable: rows with the same ``ts`` keep their file order, so a log without
tied timestamps gives the same replay whatever order its rows come in.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from thatchlab.core.errors import warn

__all__ = ["sort_by_time", "read_in_time_order"]


def sort_by_time(log: pd.DataFrame, what: str = "log", column: str = "ts") -> pd.DataFrame:
    """``log`` stably sorted by ``column``, with ``attrs["reordered"]`` = rows that moved.

    Warns (``UserWarning``) when the log was not in time order, saying how many
    rows were reordered. The input is not modified (an already ordered log is
    returned as a shallow copy with a fresh 0-based index).

    Parameters
    ----------
    log : pandas.DataFrame
        The log.
    what : str, default="log"
        What to call the log in the warning (a file name, say).
    column : str, default="ts"
        The time column to sort by.

    Returns
    -------
    pandas.DataFrame
        The sorted log; ``attrs["reordered"]`` counts the rows that moved.

    Examples
    --------
    >>> df = pd.DataFrame({"ts": pd.to_datetime(["2026-01-02", "2026-01-01", "2026-01-01"], utc=True),
    ...                    "x": [0, 1, 2]})
    >>> import warnings
    >>> with warnings.catch_warnings(record=True) as w:
    ...     warnings.simplefilter("always")
    ...     out = sort_by_time(df)
    >>> out["x"].tolist(), out.attrs["reordered"], "not in time order" in str(w[0].message)
    ([1, 2, 0], 3, True)
    >>> sort_by_time(out).attrs["reordered"]
    0
    """
    col = log[column]
    # a tz-aware column as its UTC datetime64s (to_numpy would build Timestamp objects)
    values = col.dt.tz_convert(None).to_numpy() if isinstance(col.dtype, pd.DatetimeTZDtype) else col.to_numpy()
    order = np.argsort(values, kind="stable")
    moved = int(np.count_nonzero(order != np.arange(len(order))))
    out = log.take(order) if moved else log.copy(deep=False)
    out.index = pd.RangeIndex(len(out))
    out.attrs = {**log.attrs, "reordered": moved}
    if moved:
        warn(f"{what} was not in time order: {moved} of {len(log)} rows were reordered by "
             f"{column!r} (rows with equal {column!r} keep their file order)", UserWarning)
    return out


def read_in_time_order(result, path, errors: str):
    """A reader's validated ``result`` (or ``(valid, rejected)`` with ``errors="report"``) sorted by
    ``ts``, warning on behalf of the reader's caller when the file was not in time order."""
    if errors == "raise":
        return sort_by_time(result, str(path))
    valid, rejected = result
    return sort_by_time(valid, str(path)), rejected
