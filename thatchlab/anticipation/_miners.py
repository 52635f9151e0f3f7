"""Periodic, conditional and co-occurrence patterns of recalls (mnemo's pattern types 2–4).

Periodic: a topic that dominates the recalls of a weekly time slot.
Conditional: an entity mentioned in a session before a fact is first recalled.
Co-occurrence: facts recalled in the same sessions (mnemo's Hebbian
``co_recall_count``), grouped into connected components.
All three are group-by operations over the recall (and event) streams.
"""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd

from thatchlab.anticipation._groups import (
    first_or_last,
    pairs_within,
    require_values,
    session_codes,
    utc_ns,
)
from thatchlab.core.errors import InputError
from thatchlab.core.frames import cell_repr, need_columns
from thatchlab.core.time import as_utc_series

_DAY_NS = 86400 * 10**9

__all__ = ["mine_periodic", "mine_conditional", "mine_cooccurrence", "co_recall_count",
           "cooccurrence_groups", "slot_of"]


#: The columns of :func:`mine_periodic`'s frame, in order.
_PERIODIC_COLUMNS = ["workspace", "trigger", "target", "observations", "confidence", "last_seen", "slot", "weeks"]


def slot_of(ts, *, slot_hours: int = 2, timezone: str = "UTC"):
    """Weekly slot text ``"{dow}:{bucket}"`` of aware times (dow 0 = Monday, bucket = hour // slot_hours).

    Parameters
    ----------
    ts : Series of aware times
        The times to place in the week.
    slot_hours : int, default=2
        Hours per slot.
    timezone : str, default="UTC"
        The zone whose day of week and hour are used.

    Returns
    -------
    Series of str
        The slot text of each time.

    Examples
    --------
    >>> slot_of(pd.Series(pd.to_datetime(["2026-01-05T09:30Z"])), slot_hours=2).tolist()
    ['0:4']
    """
    local = as_utc_series(ts).dt.tz_convert(timezone)
    dow = local.dt.dayofweek.astype(np.int64).astype(str)
    bucket = (local.dt.hour // int(slot_hours)).astype(np.int64).astype(str)
    return dow + ":" + bucket


def mine_periodic(recalls: pd.DataFrame, *, slot_hours: int = 2, timezone: str = "UTC",
                  min_obs: int = 3, min_share: float = 0.5, min_weeks: int = 2) -> pd.DataFrame:
    """Topics that dominate a weekly slot ("every Monday 8–10, the agent asks about X").

    slot = (day of week, ``slot_hours`` bucket) in ``timezone``; topic = the
    ``topic`` column if present, else ``fact_id``. For each workspace and slot,
    share = recalls of the topic in the slot / all recalls in the slot. A
    (slot, topic) is kept when share ≥ ``min_share``, its recalls ≥ ``min_obs``
    and they fall in ≥ ``min_weeks`` distinct ISO year-weeks (in ``timezone``).
    confidence = share.

    Parameters
    ----------
    recalls : DataFrame
        Recalls with ``ts`` (aware), ``workspace`` and ``topic`` or
        ``fact_id``; not modified.
    slot_hours : int, default=2
        Hours per slot.
    timezone : str, default="UTC"
        The zone of the slots and of the ISO weeks.
    min_obs : int, default=3
        Fewest recalls of the topic in the slot.
    min_share : float, default=0.5
        Smallest share of the slot's recalls (inclusive).
    min_weeks : int, default=2
        Fewest distinct ISO year-weeks.

    Returns
    -------
    DataFrame
        Columns workspace, trigger (= slot text), target (= topic),
        observations, confidence, last_seen, slot, weeks; sorted by
        workspace, slot, target.

    Raises
    ------
    InputError
        When ``recalls`` is not a DataFrame or misses a column.

    See Also
    --------
    slot_of : The slot text of a time.

    Examples
    --------
    >>> ts = pd.to_datetime(["2026-01-05T09:00Z", "2026-01-12T09:10Z", "2026-01-19T08:50Z",
    ...                      "2026-01-19T09:20Z"])
    >>> rc = pd.DataFrame({"ts": ts, "workspace": "w", "fact_id": ["m", "m", "m", "x"]})
    >>> mine_periodic(rc)[["slot", "target", "observations", "confidence", "weeks"]]
      slot target  observations  confidence  weeks
    0  0:4      m             3        0.75      3
    """
    topic = "topic" if "topic" in getattr(recalls, "columns", ()) else "fact_id"
    recalls = need_columns(recalls, "recalls", ["ts", "workspace", topic])
    if recalls.empty:
        return pd.DataFrame({c: pd.Series(dtype=object) for c in _PERIODIC_COLUMNS})
    require_values(recalls, "recalls", ("workspace", topic))
    ts = as_utc_series(recalls["ts"].reset_index(drop=True), what="recalls.ts")
    times_ns = utc_ns(ts, "recalls")
    slot, monday, n_buckets = _week_slots(ts, slot_hours, timezone)
    w_code, w_uni = pd.factorize(recalls["workspace"].to_numpy(), sort=True)
    t_code, t_uni = pd.factorize(recalls[topic].to_numpy(), sort=True)
    n_slots, n_t = 7 * n_buckets, len(t_uni)
    ws_slot = w_code.astype(np.int64) * n_slots + slot
    key = ws_slot * n_t + t_code
    k_code, k_uni = pd.factorize(key, sort=True)
    obs = np.bincount(k_code)
    weeks = np.bincount(pd.unique(k_code.astype(np.int64) * (1 << 32) + (monday - monday.min())) >> 32,
                        minlength=len(k_uni))
    last = _latest(k_code, len(k_uni), times_ns)
    share = obs / _totals(ws_slot, k_uni // n_t)
    keep = (share >= min_share) & (obs >= min_obs) & (weeks >= min_weeks)
    k = k_uni[keep]
    slot_k = (k // n_t) % n_slots
    text = np.array([f"{d}:{b}" for d, b in zip(slot_k // n_buckets, slot_k % n_buckets)], dtype=object)
    out = pd.DataFrame({"workspace": w_uni[k // n_t // n_slots], "trigger": text, "target": t_uni[k % n_t],
                        "observations": obs[keep].astype(np.int64), "confidence": share[keep],
                        "last_seen": pd.to_datetime(last[keep], utc=True).as_unit("ns"), "slot": text,
                        "weeks": weeks[keep].astype(np.int64)})
    return out.sort_values(["workspace", "slot", "target"], kind="stable").reset_index(drop=True)[_PERIODIC_COLUMNS]


def _week_slots(ts: pd.Series, slot_hours, timezone) -> tuple[np.ndarray, np.ndarray, int]:
    """Each time's weekly slot number (day of week * buckets + bucket, local), the day number of
    its week's Monday (one per ISO year-week), and the buckets per day."""
    local_ns = ts.dt.tz_convert(timezone).dt.tz_localize(None).array.asi8
    day = local_ns // _DAY_NS
    dow = (day + 3) % 7                      # 1970-01-01 was a Thursday; Monday = 0
    bucket = (local_ns - day * _DAY_NS) // (3600 * 10**9) // int(slot_hours)
    n_buckets = 24 // int(slot_hours)
    return dow * n_buckets + bucket, day - dow, n_buckets


def _latest(codes: np.ndarray, n: int, ns: np.ndarray) -> np.ndarray:
    """The largest ``ns`` of each code in ``range(n)`` (int64 minimum where none)."""
    last = np.full(n, np.iinfo(np.int64).min, dtype=np.int64)
    np.maximum.at(last, codes, ns)
    return last


def _totals(groups: np.ndarray, wanted: np.ndarray) -> np.ndarray:
    """How many rows each group value has, read at the ``wanted`` values (all present)."""
    g_code, g_uni = pd.factorize(groups, sort=True)
    return np.bincount(g_code)[np.searchsorted(g_uni, wanted)]


def _mentions(df, what):
    """(workspace, session, entity, ts) rows of a stream's entity lists."""
    if "entities" not in df.columns or df.empty:
        return pd.DataFrame({"workspace": [], "session": [], "entity": [], "ts": pd.Series(
            dtype="datetime64[ns, UTC]")})
    ts = as_utc_series(df["ts"].reset_index(drop=True), what=f"{what}.ts")
    utc_ns(ts, what)                                   # a null time raises
    ent = _entity_lists(df["entities"], what)
    lens = np.fromiter(map(len, ent), dtype=np.intp, count=len(ent))
    idx = np.repeat(np.arange(len(df)), lens)
    flat = [x for v in ent for x in v]
    return pd.DataFrame({"workspace": df["workspace"].to_numpy()[idx], "session": df["session"].to_numpy()[idx],
                         "entity": np.asarray(flat, dtype=object), "ts": ts.to_numpy()[idx]})


def _entity_lists(col: pd.Series, what: str) -> list:
    """Each row's entity names as a list (``[]`` for a missing cell); :class:`InputError` names the
    first cell that is not a list of names (text alone would be read letter by letter)."""
    cells = col.tolist()
    out = [list(v) if isinstance(v, _LISTS) else [] if _missing(v) else _NOT_A_LIST for v in cells]
    if _NOT_A_LIST in out:
        i = out.index(_NOT_A_LIST)
        raise InputError(f"{what}: row {i}, column 'entities': expected a list of entity names or null, "
                         f"got {cell_repr(cells[i])}")
    kinds = set(map(type, itertools.chain.from_iterable(out)))         # one pass in C; rows only on failure
    if not all(issubclass(k, str) for k in kinds):
        i = next(i for i, names in enumerate(out) if not all(isinstance(x, str) for x in names))
        raise InputError(f"{what}: row {i}, column 'entities': expected a list of entity names, "
                         f"got {cell_repr(out[i])}")
    return out


def _missing(v) -> bool:
    return v is None or v is pd.NA or (isinstance(v, float) and np.isnan(v))


_LISTS = (list, tuple, np.ndarray)
_NOT_A_LIST = object()


def mine_conditional(events: pd.DataFrame, recalls: pd.DataFrame, *, min_obs: int = 3,
                     min_conf: float = 0.5) -> pd.DataFrame:
    """"When entity X is mentioned, fact Y is needed" patterns per workspace.

    A session mentions X before Y when an event or recall of the session
    lists X in ``entities`` at a time strictly earlier than the session's
    first recall of Y (so Y's own recall row never counts).
    observations = sessions with X then Y; confidence = observations /
    sessions mentioning X anywhere. Kept when observations ≥ ``min_obs`` and
    confidence > ``min_conf``. ``last_seen`` = latest counted first recall of Y.

    Parameters
    ----------
    events : DataFrame
        Events with ``ts`` (aware), ``workspace``, ``session`` and optionally
        ``entities`` (lists, or None).
    recalls : DataFrame
        Recalls with ``ts``, ``workspace``, ``session``, ``fact_id`` and
        optionally ``entities``.
    min_obs : int, default=3
        Fewest sessions with X then Y.
    min_conf : float, default=0.5
        Confidence must exceed it (strict).

    Returns
    -------
    DataFrame
        Columns workspace, trigger (= entity), target (= fact), observations,
        confidence, last_seen, trigger_sessions (the denominator); sorted by
        workspace, trigger, target.

    Raises
    ------
    InputError
        When a stream is not a DataFrame or misses a column.

    Examples
    --------
    >>> t = pd.Timestamp("2026-01-05T09:00Z")
    >>> ev = pd.DataFrame({"ts": [t, t, t], "workspace": "w", "session": ["s1", "s2", "s3"],
    ...                    "name": "chat", "entities": [["prod"], ["prod"], ["prod"]]})
    >>> rc = pd.DataFrame({"ts": [t + pd.Timedelta("5min")] * 3, "workspace": "w",
    ...                    "session": ["s1", "s2", "s3"], "fact_id": "runbook", "entities": None})
    >>> mine_conditional(ev, rc)[["trigger", "target", "observations", "confidence"]]
      trigger   target  observations  confidence
    0    prod  runbook             3         1.0
    """
    events = need_columns(events, "events", ["ts", "workspace", "session"])
    recalls = need_columns(recalls, "recalls", ["ts", "workspace", "session", "fact_id"])
    require_values(events, "events", ("workspace", "session"))
    require_values(recalls, "recalls", ("workspace", "session", "fact_id"))
    cols = ["workspace", "trigger", "target", "observations", "confidence", "last_seen", "trigger_sessions"]
    parts = [x for x in (_mentions(events, "events"), _mentions(recalls, "recalls")) if len(x)]
    m = pd.concat(parts, ignore_index=True) if parts else _mentions(events.iloc[0:0], "events")
    if m.empty or recalls.empty:
        return pd.DataFrame({c: pd.Series(dtype=object) for c in cols})
    (ms, me, tx), (rs, rf, ty), sess_ws, (ws_uni, e_uni, f_uni) = _session_firsts(m, recalls)
    ne, nf = len(e_uni), len(f_uni)
    # denominator: sessions mentioning the entity, per workspace
    we_code, we_uni = pd.factorize(sess_ws[ms] * ne + me, sort=True)
    trigger_sessions = np.bincount(we_code)
    i, j = pairs_within(ms, rs)
    ok = tx[i] < ty[j]
    i, j = i[ok], j[ok]
    key = (sess_ws[ms[i]] * ne + me[i]) * nf + rf[j]
    k_code, k_uni = pd.factorize(key, sort=True)
    obs = np.bincount(k_code, minlength=len(k_uni))
    last = np.full(len(k_uni), np.iinfo(np.int64).min, dtype=np.int64)
    np.maximum.at(last, k_code, ty[j])
    den = trigger_sessions[np.searchsorted(we_uni, k_uni // nf)]
    conf = obs / den
    keep = (obs >= min_obs) & (conf > min_conf)
    k = k_uni[keep]
    out = pd.DataFrame({"workspace": ws_uni[k // nf // ne], "trigger": e_uni[(k // nf) % ne],
                        "target": f_uni[k % nf], "observations": obs[keep].astype(np.int64),
                        "confidence": conf[keep], "last_seen": pd.to_datetime(last[keep], utc=True).as_unit("ns"),
                        "trigger_sessions": den[keep].astype(np.int64)})
    return out.sort_values(["workspace", "trigger", "target"], kind="stable").reset_index(drop=True)[cols]


def _session_firsts(m: pd.DataFrame, recalls: pd.DataFrame) -> tuple:
    """Per session, the first mention of each entity and the first recall of each fact, as
    (session, entity code, ns) and (session, fact code, ns); the workspace code of each
    session; and the workspace, entity and fact values the codes number (sorted)."""
    rts = utc_ns(recalls["ts"], "recalls")
    n_m = len(m)
    sess, ws, ws_uni = session_codes(np.r_[m["workspace"].to_numpy(), recalls["workspace"].to_numpy()],
                                     np.r_[m["session"].to_numpy(), recalls["session"].to_numpy()])
    sess_ws = np.zeros(int(sess.max()) + 1, dtype=np.int64)
    sess_ws[sess] = ws
    e_code, e_uni = pd.factorize(m["entity"].to_numpy(), sort=True)
    f_code, f_uni = pd.factorize(recalls["fact_id"].to_numpy(), sort=True)
    ne, nf = len(e_uni), len(f_uni)
    mentions = first_or_last(sess[:n_m], e_code.astype(np.int64), pd.to_datetime(m["ts"], utc=True)
                             .dt.as_unit("ns").array.asi8, ne, "min")  # rts is in ns too
    firsts = first_or_last(sess[n_m:], f_code.astype(np.int64), rts, nf, "min")
    return mentions, firsts, sess_ws, (ws_uni, e_uni, f_uni)


def co_recall_count(recalls: pd.DataFrame) -> pd.DataFrame:
    """Hebbian co-recall counts: sessions in which both facts A < B were recalled.

    Returns every pair recalled together at least once: (workspace, trigger = A,
    target = B, co_recall_count, sessions_trigger, sessions_target, last_seen),
    where last_seen is the latest recall of B in a session holding both.

    Parameters
    ----------
    recalls : DataFrame
        Recalls with ``ts`` (aware), ``workspace``, ``session`` and
        ``fact_id``.

    Returns
    -------
    DataFrame
        One row per pair, columns as above.

    Raises
    ------
    InputError
        When ``recalls`` is not a DataFrame or misses a column.

    See Also
    --------
    mine_cooccurrence : The pairs past both thresholds, grouped.

    Examples
    --------
    >>> rc = pd.DataFrame({"ts": pd.Timestamp("2026-01-05T09:00Z"), "workspace": "w",
    ...                    "session": ["s1", "s1", "s2"], "fact_id": ["b", "a", "a"]})
    >>> co_recall_count(rc)[["trigger", "target", "co_recall_count", "sessions_trigger"]]
      trigger target  co_recall_count  sessions_trigger
    0       a      b                1                 2
    """
    recalls = need_columns(recalls, "recalls", ["ts", "workspace", "session", "fact_id"])
    require_values(recalls, "recalls", ("workspace", "session", "fact_id"))
    cols = ["workspace", "trigger", "target", "co_recall_count", "sessions_trigger", "sessions_target",
            "last_seen"]
    if recalls.empty:
        out = pd.DataFrame({c: pd.Series(dtype=np.int64 if "s" in c[:9] else object) for c in cols})
        out["last_seen"] = pd.Series(dtype="datetime64[ns, UTC]")
        return out
    t = utc_ns(recalls["ts"], "recalls")
    sess, ws, ws_uni = session_codes(recalls["workspace"].to_numpy(), recalls["session"].to_numpy())
    sess_ws = np.zeros(int(sess.max()) + 1, dtype=np.int64)
    sess_ws[sess] = ws
    f_code, f_uni = pd.factorize(recalls["fact_id"].to_numpy(), sort=True)
    nf = len(f_uni)
    ps, pf, pt = first_or_last(sess, f_code.astype(np.int64), t, nf, "max")   # sorted by (session, fact)
    wf_code, wf_uni = pd.factorize(sess_ws[ps] * nf + pf, sort=True)
    n_sessions = np.bincount(wf_code)
    i, j = pairs_within(ps, ps, strictly_after_self=True)                     # fact[i] < fact[j]
    key = (sess_ws[ps[i]] * nf + pf[i]) * nf + pf[j]
    k_code, k_uni = pd.factorize(key, sort=True)
    co = np.bincount(k_code, minlength=len(k_uni))
    last = np.full(len(k_uni), np.iinfo(np.int64).min, dtype=np.int64)
    np.maximum.at(last, k_code, pt[j])
    w = k_uni // nf // nf
    a_, b_ = (k_uni // nf) % nf, k_uni % nf
    out = pd.DataFrame({"workspace": ws_uni[w], "trigger": f_uni[a_], "target": f_uni[b_],
                        "co_recall_count": co.astype(np.int64),
                        "sessions_trigger": n_sessions[np.searchsorted(wf_uni, w * nf + a_)].astype(np.int64),
                        "sessions_target": n_sessions[np.searchsorted(wf_uni, w * nf + b_)].astype(np.int64),
                        "last_seen": pd.to_datetime(last, utc=True).as_unit("ns")})
    return out[cols]


def mine_cooccurrence(recalls: pd.DataFrame, *, min_obs: int = 3, min_conf: float = 0.5) -> pd.DataFrame:
    """Facts recalled together: one row per pair (trigger < target) and its group.

    confidence = co_recall_count(A, B) / min(sessions(A), sessions(B)); kept
    when co_recall_count ≥ ``min_obs`` and confidence > ``min_conf``.
    ``group`` = the smallest fact id of the pair's connected component among
    the kept pairs of the workspace.

    Parameters
    ----------
    recalls : DataFrame
        Recalls with ``ts`` (aware), ``workspace``, ``session`` and
        ``fact_id``.
    min_obs : int, default=3
        Fewest sessions with both facts.
    min_conf : float, default=0.5
        Confidence must exceed it (strict).

    Returns
    -------
    DataFrame
        Columns workspace, trigger, target, observations (= co_recall_count),
        confidence, last_seen, group.

    Raises
    ------
    InputError
        When ``recalls`` is not a DataFrame or misses a column.

    See Also
    --------
    co_recall_count : Every pair's counts, before the thresholds.
    cooccurrence_groups : The facts of each group.

    Examples
    --------
    >>> rc = pd.DataFrame({"ts": pd.Timestamp("2026-01-05T09:00Z"), "workspace": "w",
    ...                    "session": ["s1", "s1", "s2", "s2", "s3", "s3"],
    ...                    "fact_id": ["a", "b", "a", "b", "b", "a"]})
    >>> mine_cooccurrence(rc)[["trigger", "target", "observations", "confidence", "group"]]
      trigger target  observations  confidence group
    0       a      b             3         1.0     a
    """
    cols = ["workspace", "trigger", "target", "observations", "confidence", "last_seen", "group"]
    co = co_recall_count(recalls)
    co["observations"] = co["co_recall_count"]
    co["confidence"] = co["co_recall_count"] / np.minimum(co["sessions_trigger"], co["sessions_target"])
    out = co[(co["observations"] >= min_obs) & (co["confidence"] > min_conf)].reset_index(drop=True)
    out["group"] = _components(out)
    return out[cols] if len(out) else pd.DataFrame({c: out[c] if c in out else pd.Series(dtype=object)
                                                     for c in cols})


def _components(pairs: pd.DataFrame) -> np.ndarray:
    """Label of each pair: the smallest fact id in its connected component (per workspace)."""
    from scipy.sparse import coo_matrix  # heavy: SciPy takes about 0.5 s to import
    from scipy.sparse.csgraph import connected_components  # heavy: as above

    if pairs.empty:
        return np.array([], dtype=object)
    nodes = pd.concat([pairs["workspace"] + "\x1f" + pairs["trigger"],
                       pairs["workspace"] + "\x1f" + pairs["target"]], ignore_index=True)
    code, uni = pd.factorize(nodes, sort=True)
    m = len(pairs)
    a, b = code[:m], code[m:]
    graph = coo_matrix((np.ones(m), (a, b)), shape=(len(uni), len(uni)))
    _, comp = connected_components(graph, directed=False)
    # uni is sorted, so the first node met per component is its smallest fact id
    first = pd.Series(np.arange(len(uni))).groupby(comp).min()
    label = np.array([u.split("\x1f", 1)[1] for u in uni], dtype=object)[first.to_numpy()]
    return label[comp[a]]


def cooccurrence_groups(patterns: pd.DataFrame) -> pd.DataFrame:
    """The fact groups of co-occurrence patterns: (workspace, group, facts sorted).

    Parameters
    ----------
    patterns : DataFrame
        Pairs with ``workspace``, ``group``, ``trigger`` and ``target`` (a
        ``type`` column, when present, keeps only ``co-occurrence`` rows).

    Returns
    -------
    DataFrame
        One row per (workspace, group), sorted, with ``facts``: the sorted
        list of the group's fact ids.

    See Also
    --------
    mine_cooccurrence : The pairs and their group.

    Examples
    --------
    >>> p = pd.DataFrame({"workspace": "w", "trigger": ["a", "b"], "target": ["b", "c"],
    ...                   "group": ["a", "a"]})
    >>> cooccurrence_groups(p)["facts"].tolist()
    [['a', 'b', 'c']]
    """
    if "type" in patterns.columns:
        patterns = patterns[patterns["type"] == "co-occurrence"]
    long = pd.concat([patterns[["workspace", "group", "trigger"]].rename(columns={"trigger": "fact"}),
                      patterns[["workspace", "group", "target"]].rename(columns={"target": "fact"})])
    g = long.drop_duplicates().sort_values(["workspace", "group", "fact"])
    return g.groupby(["workspace", "group"], sort=True)["fact"].agg(list).rename("facts").reset_index()
