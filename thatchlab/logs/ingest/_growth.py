"""Growing an ingested log from a grown source, by record id, without losing or duplicating a row.

A transcript is written while its session runs: a tool call's record comes
before its result, a prompt before the hook output that carried its nudge,
an opencode part is ``running`` before it is ``completed``. An ingest of the
file at one moment therefore holds rows that a later ingest *completes*.
:func:`grow` merges a fresh ingest into the log an earlier one wrote:

- a row whose ``record_id`` the earlier log has is replaced by the fresh row
  (completed: a reply, a nudge or a cleared ``skip_reason`` arrived; or
  updated: the source changed it);
- a fresh row with a new ``record_id`` is added;
- an earlier row whose ``record_id`` the source no longer holds (a ledger row
  deleted, a dump rotated) is kept: an ingest never shrinks its output.

When nothing left the source the merged log equals a fresh ingest of it,
row for row.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from thatchlab.core.errors import InputError

__all__ = ["Growth", "grow"]


@dataclass
class Growth:
    """What :func:`grow` did: the merged ``log`` and how many rows of each fate it holds.

    Parameters
    ----------
    log : pandas.DataFrame
        The merged log.
    new : int, default=0
        Rows the earlier log lacked.
    completed : int, default=0
        Rows whose reply, nudge or result arrived since.
    updated : int, default=0
        Rows the source changed otherwise.
    unchanged : int, default=0
        Rows as the earlier log held them.
    kept : int, default=0
        Rows no longer in the source, kept from the earlier log.
    """

    log: pd.DataFrame
    new: int = 0
    completed: int = 0
    updated: int = 0
    unchanged: int = 0
    kept: int = 0  # no longer in the source, kept from the earlier log

    def lines(self) -> list[tuple[str, int]]:
        """``(what, count)`` pairs for a summary, the zero ones left out.

        Returns
        -------
        list of tuple
            ``(what, count)`` in the order new, completed, updated, unchanged, kept.
        """
        pairs = [("new", self.new), ("completed (a reply, nudge or result arrived)", self.completed),
                 ("updated in the source", self.updated), ("unchanged", self.unchanged),
                 ("no longer in the source (kept)", self.kept)]
        return [(k, v) for k, v in pairs if v]


def _canon(v):
    """A comparable, hashable form of one cell (lists, arrays, NaN, times and JSON text alike)."""
    if v is None or v is pd.NA or v is pd.NaT:
        return None
    if isinstance(v, float) and math.isnan(v):
        return None
    if isinstance(v, np.ndarray):
        v = v.tolist()
    if isinstance(v, (list, tuple, dict)):
        return json.dumps(v, sort_keys=True, default=str)
    if isinstance(v, pd.Timestamp):
        return v.isoformat()
    if isinstance(v, (np.bool_, bool)):
        return bool(v)
    if isinstance(v, (np.integer, np.floating)):
        return v.item()
    return v


def _rows(df: pd.DataFrame, cols) -> list[tuple]:
    return [tuple(_canon(v) for v in row) for row in
            zip(*(df[c].to_numpy(object) if c in df.columns else [None] * len(df) for c in cols))]


def _completes(old: tuple, new: tuple, cols: list) -> bool:
    """Whether ``new`` only fills what ``old`` lacked: null cells given a value, a skip reason cleared."""
    for c, a, b in zip(cols, old, new):
        if a == b:
            continue
        if a is None or (c == "skip_reason" and b is None):
            continue
        return False
    return True


def grow(existing: pd.DataFrame, fresh: pd.DataFrame, key: str = "record_id") -> Growth:
    """Merge ``fresh`` (an ingest of the grown source) into ``existing`` (the log an earlier one wrote).

    Both must carry ``key`` on every row, unique within each. The result is
    ``fresh``'s rows in its order plus the earlier rows the source no longer
    holds, stably sorted by ``ts``.

    Parameters
    ----------
    existing : pandas.DataFrame
        The log an earlier ingest wrote.
    fresh : pandas.DataFrame
        The new ingest of the grown source.
    key : str, default="record_id"
        The column identifying a record.

    Returns
    -------
    Growth
        The merged log and its counts.

    Raises
    ------
    InputError
        A row of either log lacks ``key``, or a ``key`` repeats within one.

    Examples
    --------
    >>> old = pd.DataFrame({"ts": ["2026-01-01T09:00Z", "2026-01-01T09:01Z", "2026-01-01T08:00Z"],
    ...                     "record_id": ["a", "b", "gone"], "logged_reply": [None, "ok", "x"]})
    >>> new = pd.DataFrame({"ts": ["2026-01-01T09:00Z", "2026-01-01T09:01Z", "2026-01-01T09:02Z"],
    ...                     "record_id": ["a", "b", "c"], "logged_reply": ["done", "ok", None]})
    >>> g = grow(old, new)
    >>> g.log["record_id"].tolist(), g.new, g.completed, g.unchanged, g.kept
    (['gone', 'a', 'b', 'c'], 1, 1, 1, 1)
    """
    for name, df in (("existing log", existing), ("fresh ingest", fresh)):
        if key not in df.columns or df[key].isna().any():
            raise InputError(f"{name}: every row needs a {key!r} to be grown by it")
        dup = df[key][df[key].duplicated()]
        if len(dup):
            raise InputError(f"{name}: {key} {dup.iloc[0]!r} appears more than once")
    cols = [c for c in dict.fromkeys([*fresh.columns, *existing.columns]) if c != key]
    old_ids = existing[key].astype(str).tolist()
    old_rows = dict(zip(old_ids, _rows(existing, cols)))
    out = Growth(log=fresh)
    fresh_ids = fresh[key].astype(str).tolist()
    for rid, row in zip(fresh_ids, _rows(fresh, cols)):
        before = old_rows.get(rid)
        if before is None:
            out.new += 1
        elif before == row:
            out.unchanged += 1
        elif _completes(before, row, cols):
            out.completed += 1
        else:
            out.updated += 1
    gone = ~existing[key].astype(str).isin(set(fresh_ids))
    out.kept = int(gone.sum())
    if out.kept:
        kept = existing[gone.to_numpy()]
        both = pd.concat([fresh, kept[[c for c in kept.columns]]], ignore_index=True)
        order = pd.to_datetime(both["ts"], utc=True, format="ISO8601") if both["ts"].dtype == object else both["ts"]
        both = both.iloc[np.argsort(order.to_numpy(), kind="stable")].reset_index(drop=True)
        out.log = both
    else:
        out.log = fresh.reset_index(drop=True)
    return out
