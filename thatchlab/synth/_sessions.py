"""What every simulated interaction log shares: session spacing, the finished frame, input checks.

Used by the preference and behavior worlds and by the closed loop; the names
are public inside this private module.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from thatchlab.core.errors import InputError
from thatchlab.logs.interaction import validate_interaction_log

__all__ = ["SESSION_GAP", "finish_log", "object_array", "session_count"]

#: Time between the starts of consecutive simulated sessions (a session may start up to ten
#: minutes after its slot).
SESSION_GAP = pd.Timedelta(minutes=47)


def finish_log(rows: list) -> pd.DataFrame:
    """A validated interaction log from row dicts.

    Parameters
    ----------
    rows : list of dict, one per log row, ``ts`` given as anything :func:`pandas.to_datetime` reads.

    Returns
    -------
    DataFrame
        ``ts`` as UTC timestamps, checked and ordered by
        :func:`~thatchlab.logs.interaction.validate_interaction_log`.

    Examples
    --------
    >>> log = finish_log([{"ts": "2026-01-05T09:00:00Z", "session": "s0", "store": "user-00",
    ...                    "kind": "message", "text": "hello"}])
    >>> str(log["ts"].dt.tz), len(log)
    ('UTC', 1)
    """
    df = pd.DataFrame(rows)
    df["ts"] = pd.to_datetime(df["ts"], utc=True)
    return validate_interaction_log(df)


def object_array(values: list) -> np.ndarray:
    """A 1-d object array of ``values``: lists stay whole cells, numpy strings become ``str``.

    Examples
    --------
    >>> object_array([["a", "b"], np.str_("c")]).tolist()
    [['a', 'b'], 'c']
    """
    arr = np.empty(len(values), dtype=object)
    arr[:] = [str(v) if isinstance(v, np.str_) else v for v in values]
    return arr


def session_count(n_sessions) -> int:
    """``n_sessions`` as a positive ``int`` (a simulated log needs at least one session).

    Raises
    ------
    InputError
        If ``n_sessions`` is not a whole number (bools excluded) or is below 1.

    Examples
    --------
    >>> session_count(np.int64(3))
    3
    """
    if isinstance(n_sessions, bool) or not isinstance(n_sessions, (int, np.integer)) or n_sessions < 1:
        raise InputError(f"n_sessions: expected a whole number of sessions >= 1, got {n_sessions!r}")
    return int(n_sessions)
