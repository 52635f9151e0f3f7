"""Exposure segments of a memory log: the data the half-life of currency is fitted from.

A belief is exposed to being overturned from each piece of evidence until
the next one (censored), until it ends (an observed event), or until the
log ends (censored). The exponential model that currency assumes makes the
maximum-likelihood rate per class events / total exposure.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from thatchlab.logs.memory import validate_memory_log

__all__ = ["exposure_segments"]


def exposure_segments(log: pd.DataFrame, end=None) -> pd.DataFrame:
    """Exposure segments of a memory log (one row per segment).

    A segment runs from an evidence time (the ``write``, a ``restated``, a
    confirming ``review``) to the next evidence (censored), to the end of the
    belief (an observed event: ``resolved``, a refuting ``review``, or a
    ``contradicted`` whose ``authority`` is at least the row's — null counts
    as 0 — as the store would apply it), or to the row's deletion or the end
    of the log (censored). Rows written with a named ``valid_to`` do not
    decay and are left out. Events after a belief's end are ignored.
    Rows at the same timestamp are taken in log order. Evidence logged before
    an end at that same time still counts. So a belief contradicted at its
    write's own timestamp gives a zero-length segment that ends in an event.
    A zero-length segment that ends in no event says nothing and is left out.

    Parameters
    ----------
    log : DataFrame
        A memory log (checked by :func:`~thatchlab.logs.memory.validate_memory_log`).
    end : aware time, default=None
        The end of observation; the log's last time when None.

    Returns
    -------
    DataFrame
        Columns ``memory_id``, ``group`` (the class, ``unclassified`` when
        null), ``start``, ``stop``, ``duration_days``, ``event``.

    Examples
    --------
    >>> log = pd.DataFrame({"ts": pd.to_datetime(["2026-01-01", "2026-01-11", "2026-01-31"], utc=True),
    ...                     "kind": ["write", "restated", "resolved"], "memory_id": "m1",
    ...                     "text": ["likes tea", None, None], "belief_class": ["preference", None, None]})
    >>> exposure_segments(log)[["group", "duration_days", "event"]]
            group  duration_days  event
    0  preference           10.0  False
    1  preference           20.0   True
    """
    log = validate_memory_log(log)
    log = log.iloc[np.argsort(log["ts"].to_numpy(), kind="stable")].reset_index(drop=True)
    end_ts = log["ts"].max() if end is None else pd.Timestamp(end).tz_convert("UTC")
    writes = log[(log["kind"] == "write") & log["valid_to"].isna()].drop_duplicates("memory_id")
    rows = writes.set_index("memory_id")
    target = log["target_memory_id"].where(log["target_memory_id"].notna(), log["memory_id"])
    known = target.isin(rows.index)
    row_auth = target.map(rows["authority"]).fillna(0.0)
    kind, ts = log["kind"], log["ts"]
    pos = pd.Series(np.arange(len(log), dtype=np.float64), index=log.index)  # log order breaks time ties
    confirmed = log["confirmed"].fillna(False).astype(bool)
    is_start = known & ((kind == "restated") | ((kind == "review") & confirmed))
    is_end = known & ((kind == "resolved") | ((kind == "review") & ~confirmed & log["confirmed"].notna())
                      | ((kind == "contradicted") & (log["authority"].fillna(0.0) >= row_auth)))
    is_cens = known & (kind == "delete")
    stop, event, stop_pos = _belief_ends(rows.index, end_ts, target, ts, pos, is_end, is_cens)
    starts = pd.DataFrame({
        "memory_id": np.concatenate([rows.index.to_numpy(object), target[is_start].to_numpy(object)]),
        "ts": pd.concat([rows["ts"], ts[is_start]], ignore_index=True),
        "pos": np.concatenate([pos[writes.index].to_numpy(), pos[is_start].to_numpy()]),
    })
    starts["stop"] = starts["memory_id"].map(stop)
    # evidence at the very time of the end counts when the log lists it first (e.g. a contradiction
    # logged at the write's own timestamp ends a zero-length segment)
    tie = (starts["ts"] == starts["stop"]) & (starts["pos"] < starts["memory_id"].map(stop_pos))
    starts = starts[(starts["ts"] < starts["stop"]) | tie].sort_values(["memory_id", "ts", "pos"], kind="stable")
    nxt = starts.groupby("memory_id", sort=False)["ts"].shift(-1)
    last = nxt.isna()
    seg_stop = nxt.where(~last, starts["stop"])
    seg_event = last & starts["memory_id"].map(event).astype(bool)
    # a zero-length segment that ends in no event carries no information: kept only if it ends in one
    keep = ~(starts["ts"] == starts["stop"]) | seg_event
    return _segment_frame(starts[keep], seg_stop[keep], seg_event[keep], rows)


def _belief_ends(ids: pd.Index, end_ts, target, ts, pos, is_end, is_cens):
    """Per belief, its first end (an event) or deletion (censored), else the end of the log:
    (stop time, ended in an event, log position of the stop; inf for the end of the log)."""
    stops = pd.DataFrame({"memory_id": target[is_end | is_cens], "ts": ts[is_end | is_cens],
                          "event": is_end[is_end | is_cens], "pos": pos[is_end | is_cens]})
    stops = stops.drop_duplicates("memory_id", keep="first").set_index("memory_id")
    stop = pd.Series(end_ts, index=ids).astype("datetime64[ns, UTC]")
    event = pd.Series(False, index=ids)
    stop_pos = pd.Series(np.inf, index=ids)
    stop.loc[stops.index] = stops["ts"]
    event.loc[stops.index] = stops["event"].astype(bool)
    stop_pos.loc[stops.index] = stops["pos"]
    return stop, event, stop_pos


def _segment_frame(starts: pd.DataFrame, seg_stop, seg_event, rows: pd.DataFrame) -> pd.DataFrame:
    """The kept segments as the output frame (times in UTC nanoseconds, durations in days)."""
    out = pd.DataFrame({
        "memory_id": starts["memory_id"].to_numpy(),
        "group": starts["memory_id"].map(rows["belief_class"]).fillna("unclassified").to_numpy(),
        "start": starts["ts"].to_numpy(), "stop": seg_stop.to_numpy(),
    })
    out["start"] = pd.to_datetime(out["start"], utc=True).dt.as_unit("ns")
    out["stop"] = pd.to_datetime(out["stop"], utc=True).dt.as_unit("ns")
    out["duration_days"] = (out["stop"] - out["start"]).dt.total_seconds().to_numpy() / 86400.0
    out["event"] = seg_event.to_numpy()
    return out.reset_index(drop=True)
