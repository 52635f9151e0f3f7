"""All four pattern types mined at once over a trailing lookback (mnemo's daily job).

``mine`` restricts both streams to ``[now - lookback, now)``, mines
sequential patterns over events ∪ recalls (a recall's name is its fact id,
so "after deploy.success, the agent recalls the runbook" is a pattern), and
stacks every type in one DataFrame with a ``type`` column.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from thatchlab.anticipation._groups import require_values
from thatchlab.anticipation._miners import mine_conditional, mine_cooccurrence, mine_periodic
from thatchlab.anticipation._sequential import mine_sequential
from thatchlab.core.errors import InputError
from thatchlab.core.frames import need_columns, plain_columns
from thatchlab.core.params.anticipation import AnticipationParams
from thatchlab.core.time import as_utc, as_utc_series

__all__ = ["mine", "PATTERN_COLUMNS", "PATTERN_TYPES", "in_lookback", "event_recall_union"]

PATTERN_TYPES = ("sequential", "periodic", "conditional", "co-occurrence")
PATTERN_COLUMNS = ["type", "workspace", "trigger", "target", "confidence", "observations", "last_seen",
                   "trigger_kind", "target_kind", "avg_delay_s", "slot", "weeks", "group"]


def in_lookback(df: pd.DataFrame, now, lookback) -> pd.DataFrame:
    """Rows with ``now - lookback <= ts < now``.

    Parameters
    ----------
    df : DataFrame
        A stream with an aware ``ts`` column; not modified.
    now : aware time
        The end of the lookback (excluded).
    lookback : duration text or Timedelta
        How far back from ``now`` rows are kept (the start is included); a
        lookback reaching past the earliest time pandas holds keeps every
        row before ``now``.

    Returns
    -------
    DataFrame
        The rows inside the lookback, in their order, with a fresh
        ``RangeIndex``.

    See Also
    --------
    lookback_start : The first time inside the lookback.

    Examples
    --------
    >>> df = pd.DataFrame({"ts": pd.to_datetime(["2026-01-01T00:00Z", "2026-01-31T00:00Z"])})
    >>> len(in_lookback(df, "2026-01-31T00:00Z", "30d"))
    1
    """
    now = as_utc(now, what="now")
    ts = as_utc_series(df["ts"].reset_index(drop=True), what="ts")
    start = lookback_start(now, lookback)
    mask = ((ts < now) if start is None else (ts >= start) & (ts < now)).to_numpy()
    return plain_columns(df).reset_index(drop=True)[mask].reset_index(drop=True)


def lookback_start(now, lookback):
    """``now - lookback``, or None when that is before the earliest time pandas holds (1677):
    the lookback then reaches back past every time a stream can hold.

    >>> lookback_start(pd.Timestamp("2026-01-31", tz="UTC"), "30d")
    Timestamp('2026-01-01 00:00:00+0000', tz='UTC')
    >>> lookback_start(pd.Timestamp("1700-01-01", tz="UTC"), "36500d") is None
    True
    """
    try:  # in nanoseconds whatever unit ``now`` has (pandas 3 parses text to coarser units)
        return pd.Timestamp(now).as_unit("ns") - pd.Timedelta(lookback)
    except (OverflowError, pd.errors.OutOfBoundsDatetime):
        return None


def event_recall_union(events: pd.DataFrame, recalls: pd.DataFrame) -> pd.DataFrame:
    """One stream ``ts, workspace, session, name, kind`` of events (kind "event")
    and recalls (kind "fact", name = fact_id).

    Parameters
    ----------
    events : DataFrame
        Events with ``ts``, ``workspace``, ``name`` and optionally ``session``.
    recalls : DataFrame
        Recalls with ``ts``, ``workspace``, ``fact_id`` and optionally
        ``session``.

    Returns
    -------
    DataFrame
        The events' rows, then the recalls', with columns ``ts`` (UTC),
        ``workspace``, ``session`` (None when a stream has none), ``name``
        and ``kind``.

    Examples
    --------
    >>> t = pd.Timestamp("2026-01-05T09:00Z")
    >>> ev = pd.DataFrame({"ts": [t], "workspace": "w", "session": "s", "name": ["deploy"]})
    >>> rc = pd.DataFrame({"ts": [t], "workspace": "w", "session": "s", "fact_id": ["runbook"]})
    >>> event_recall_union(ev, rc)[["name", "kind"]].values.tolist()
    [['deploy', 'event'], ['runbook', 'fact']]
    """
    e = pd.DataFrame({"ts": as_utc_series(events["ts"].reset_index(drop=True)),
                      "workspace": events["workspace"].to_numpy(),
                      "session": events["session"].to_numpy() if "session" in events else None,
                      "name": events["name"].to_numpy(), "kind": "event"})
    r = pd.DataFrame({"ts": as_utc_series(recalls["ts"].reset_index(drop=True)),
                      "workspace": recalls["workspace"].to_numpy(),
                      "session": recalls["session"].to_numpy() if "session" in recalls else None,
                      "name": recalls["fact_id"].to_numpy(), "kind": "fact"})
    return pd.concat([e, r], ignore_index=True)


def _keyed(df, what: str, name: str) -> pd.DataFrame:
    """``df`` made plain, each row's workspace and ``name`` checked: :func:`mine` mines the union
    of both streams, which numbers recall rows after the events, so a missing key is named in
    its own stream first."""
    df = need_columns(df, what, ["ts", "workspace", name])
    require_values(df, what, ("workspace", name))
    return df


def _frame(df, type_, trigger_kind=None, target_kind=None):
    out = df.reindex(columns=PATTERN_COLUMNS)
    out["type"] = type_
    if trigger_kind is not None:
        out["trigger_kind"] = trigger_kind
    if target_kind is not None:
        out["target_kind"] = target_kind
    return out


def mine(events: pd.DataFrame, recalls: pd.DataFrame, now, params: AnticipationParams | None = None
         ) -> pd.DataFrame:
    """Mine every pattern type over ``[now - lookback, now)``.

    Sequential patterns run over events ∪ recalls (``trigger_kind`` and
    ``target_kind`` say "event" or "fact"); periodic patterns have
    ``trigger_kind = "slot"``, conditional ones ``"entity"``, co-occurrence
    ones ``"fact"``. Columns: ``PATTERN_COLUMNS``; type-specific columns are
    null for the other types. Rows are ordered by type, workspace, trigger,
    target. ``attrs["params"]`` and ``attrs["now"]`` record how they were mined.

    Parameters
    ----------
    events : DataFrame
        Events with ``ts`` (aware), ``workspace``, ``session``, ``name`` and
        ``entities`` (lists, or None).
    recalls : DataFrame
        Recalls with ``ts`` (aware), ``workspace``, ``session``, ``fact_id``
        and ``entities``.
    now : aware time
        The end of the lookback (excluded); engines never read the clock.
    params : AnticipationParams, default=None
        Lookback, window, thresholds, slot and mode; the defaults when None.

    Returns
    -------
    DataFrame
        One row per pattern, with columns ``PATTERN_COLUMNS``.

    Raises
    ------
    InputError
        When ``params`` is not an :class:`~thatchlab.core.params.anticipation.AnticipationParams`,
        or a stream misses a column.

    See Also
    --------
    mine_sequential, mine_periodic, mine_conditional, mine_cooccurrence : The four miners.

    Examples
    --------
    >>> t = pd.Timestamp("2026-01-05T09:00Z")
    >>> ev = pd.DataFrame({"ts": [t + pd.Timedelta(days=d) for d in range(4)], "workspace": "w",
    ...                    "session": [f"s{d}" for d in range(4)], "name": "deploy", "entities": None})
    >>> rc = pd.DataFrame({"ts": [t + pd.Timedelta(days=d, hours=1) for d in range(4)], "workspace": "w",
    ...                    "session": [f"s{d}" for d in range(4)], "fact_id": "runbook", "entities": None})
    >>> p = mine(ev, rc, now="2026-01-10T06:30Z")
    >>> p[p.type == "sequential"][["trigger", "target", "target_kind", "observations", "confidence"]]
       trigger   target target_kind  observations  confidence
    0   deploy  runbook        fact             4        1.00
    1  runbook   deploy       event             3        0.75
    """
    params = params if params is not None else AnticipationParams()
    if not isinstance(params, AnticipationParams):
        raise InputError(f"params: expected AnticipationParams, got {type(params).__name__}")
    now = as_utc(now, what="now")
    ev = in_lookback(_keyed(events, "events", "name"), now, params.lookback)
    rc = in_lookback(_keyed(recalls, "recalls", "fact_id"), now, params.lookback)
    seq = mine_sequential(event_recall_union(ev, rc), window=params.window, min_obs=params.min_obs,
                          min_conf=params.min_conf, mode=params.mode)
    per = mine_periodic(rc, slot_hours=params.slot_hours, timezone=params.timezone,
                        min_obs=params.min_obs, min_share=params.min_share)
    cond = mine_conditional(ev, rc, min_obs=params.min_obs, min_conf=params.min_conf)
    co = mine_cooccurrence(rc, min_obs=params.min_obs, min_conf=params.min_conf)
    parts = [_frame(seq, "sequential"), _frame(per, "periodic", "slot", "fact"),
             _frame(cond, "conditional", "entity", "fact"), _frame(co, "co-occurrence", "fact", "fact")]
    parts = [p for p in parts if len(p)]
    if not parts:
        out = _frame(pd.DataFrame({c: [] for c in ("workspace", "trigger", "target", "confidence",
                                                  "observations", "last_seen")}), "sequential")
    else:
        out = pd.concat(parts, ignore_index=True)
    _set_dtypes(out)
    out.attrs["params"] = params.to_dict()
    out.attrs["now"] = now.isoformat()
    return out


def _set_dtypes(out: pd.DataFrame) -> None:
    """One dtype per column whatever types were stacked: times in UTC ns, counts int64, rates
    float64, weeks nullable, texts object with None for missing."""
    out["last_seen"] = pd.to_datetime(out["last_seen"], utc=True).dt.as_unit("ns")
    out["observations"] = out["observations"].astype(np.int64)
    out["confidence"] = out["confidence"].astype(np.float64)
    out["avg_delay_s"] = out["avg_delay_s"].astype(np.float64)
    out["weeks"] = out["weeks"].astype("Int64")
    for col in ("type", "workspace", "trigger", "target", "trigger_kind", "target_kind", "slot", "group"):
        out[col] = out[col].astype(object).where(out[col].notna(), None)
