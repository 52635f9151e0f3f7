"""Sequential patterns: "after A, B usually follows" (mnemo's pattern type 1).

Two counting rules share one vectorised pair enumeration. ``mode="seed"``
reproduces mnemo's production SQL (every pair (A, B) with B strictly after A and
strictly before A + window counts; confidence = pairs / count(A), which can
exceed 1). ``mode="fraction"`` counts the A occurrences followed by at least
one B, so confidence is a true fraction in [0, 1].

Events are sorted by (workspace, ts); each event's window of followers is a
contiguous slice found with ``searchsorted``; pairs are counted per
(trigger group, target) bin by ``_seqcount``: enumerated in small chunks and
binned with ``bincount``, or, for a trigger name opening many pairs in seed
mode, from how many of its windows cover each event (no per-pair work).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import pandas as pd

from thatchlab.anticipation._groups import require_values, utc_ns
from thatchlab.anticipation._seqcount import count_pairs
from thatchlab.core.errors import InputError
from thatchlab.core.frames import plain_columns
from thatchlab.core.params.anticipation import SEQUENTIAL_MODES, parse_duration

__all__ = ["mine_sequential", "SEQUENTIAL_COLUMNS"]

SEQUENTIAL_COLUMNS = ["workspace", "trigger", "target", "observations", "confidence",
                      "avg_delay_s", "last_seen"]



_CHUNK_PAIRS = 1 << 16      # pairs enumerated per chunk: small enough for its arrays to stay in cache
_DENSE_BINS = 1 << 24       # a chunk with more (group, node) bins than this aggregates by sorting
_COVERAGE_LOAD = 3.0        # seed mode: a trigger node opening more pairs per stream row is counted by coverage


def _stream(events) -> tuple[pd.DataFrame, str]:
    if not isinstance(events, pd.DataFrame):
        raise InputError(f"events: expected a pandas DataFrame, got {type(events).__name__}")
    name_col = "name" if "name" in events.columns else ("fact_id" if "fact_id" in events.columns else None)
    missing = [c for c in ("ts", "workspace") if c not in events.columns]
    if name_col is None:
        missing.append("name")
    if missing:
        raise InputError(f"events: missing column(s) {missing}; expected ts, workspace, name "
                         "(or fact_id for a recall stream)")
    return plain_columns(events), name_col


def mine_sequential(events: pd.DataFrame, *, window="24h", min_obs: int = 3, min_conf: float = 0.5,
                    mode: str = "fraction") -> pd.DataFrame:
    """Mine "after A, B follows within ``window``" patterns per workspace.

    For an occurrence ``a`` of trigger A at time ``t_a``, the followers are the
    events of the same workspace with ``t_a < t < t_a + window`` (both strict).

    * ``mode="seed"``: observations = number of (A, B) follower pairs;
      confidence = observations / count(A); avg_delay_s = mean delay over the
      pairs (confidence may exceed 1, as in mnemo's SQL).
    * ``mode="fraction"``: observations = number of A occurrences with at
      least one B follower; confidence = observations / count(A) ∈ [0, 1];
      avg_delay_s = mean delay to the first B.

    Rows are kept when observations ≥ ``min_obs`` and confidence > ``min_conf``.
    ``trigger == target`` is allowed. ``last_seen`` is the latest counted
    target occurrence. When the input has a ``kind`` column (``"event"`` or
    ``"fact"``), names are distinguished by kind and the output gains
    ``trigger_kind`` and ``target_kind``.

    Parameters
    ----------
    events : DataFrame
        ``ts`` (aware), ``workspace`` and ``name`` (or ``fact_id``), and
        optionally ``kind``; not modified.
    window : duration text or Timedelta, default="24h"
        How long after a trigger its followers count (exclusive).
    min_obs : int, default=3
        Fewest observations kept (inclusive).
    min_conf : float, default=0.5
        Confidence must exceed it (strict).
    mode : {"fraction", "seed"}, default="fraction"
        The counting rule.

    Returns
    -------
    DataFrame
        (workspace, trigger, target, observations, confidence, avg_delay_s,
        last_seen), sorted by workspace, trigger, target.

    Raises
    ------
    InputError
        An unknown ``mode``, a stream that is not a DataFrame or misses a
        column, or a null time, workspace or name.

    Examples
    --------
    >>> t = pd.Timestamp("2026-01-05T09:00Z")
    >>> ev = pd.DataFrame({"ts": [t, t + pd.Timedelta("1h"), t + pd.Timedelta("2h"),
    ...                           t + pd.Timedelta("2d"), t + pd.Timedelta("2d1h")],
    ...                    "workspace": "w", "name": ["a", "b", "b", "a", "b"]})
    >>> mine_sequential(ev, min_obs=2, mode="fraction")[["trigger", "target", "observations", "confidence"]]
      trigger target  observations  confidence
    0       a      b             2         1.0
    >>> mine_sequential(ev, min_obs=2, mode="seed")[["trigger", "target", "observations", "confidence"]]
      trigger target  observations  confidence
    0       a      b             3         1.5
    """
    if mode not in SEQUENTIAL_MODES:
        raise InputError(f"mode: expected one of {list(SEQUENTIAL_MODES)}, got {mode!r}")
    w_ns = int(parse_duration("window", window).value)
    events, name_col = _stream(events)
    has_kind = "kind" in events.columns
    out_cols = SEQUENTIAL_COLUMNS + (["trigger_kind", "target_kind"] if has_kind else [])
    if len(events) == 0:
        return _empty(out_cols)
    ts = utc_ns(events["ts"], "events")
    codes = _name_codes(events, name_col, has_kind)
    rows = _kept_pairs(ts, codes, w_ns, mode, min_obs, min_conf)
    return _pattern_frame(rows, codes, out_cols)


class _Codes(NamedTuple):
    """The stream's rows as integer codes: workspace, and node = name (split by kind when given)."""

    ws_code: np.ndarray
    ws_uni: np.ndarray
    nm_uni: np.ndarray
    kd_uni: np.ndarray | None       # None without a ``kind`` column
    node_code: np.ndarray
    node_uni: np.ndarray


def _name_codes(events: pd.DataFrame, name_col: str, has_kind: bool) -> _Codes:
    """Factorise workspaces and names (sorted); with kinds, a node is a (kind, name) pair."""
    require_values(events, "events", ("workspace", name_col, "kind") if has_kind else ("workspace", name_col))
    ws_code, ws_uni = pd.factorize(events["workspace"].to_numpy(), sort=True)
    nm_code, nm_uni = pd.factorize(events[name_col].to_numpy(), sort=True)
    kd_uni = None
    if has_kind:
        kd_code, kd_uni = pd.factorize(events["kind"].to_numpy(), sort=True)
        nm_code = kd_code.astype(np.int64) * len(nm_uni) + nm_code
        node_code, node_uni = pd.factorize(nm_code, sort=True)
    else:
        node_code, node_uni = nm_code.astype(np.int64), np.arange(len(nm_uni))
    return _Codes(ws_code, ws_uni, nm_uni, kd_uni, node_code, node_uni)


def _kept_pairs(ts, codes: _Codes, w_ns: int, mode: str, min_obs, min_conf) -> tuple:
    """Count every (workspace, trigger node, target node) within the window and keep the rows
    past both thresholds: (trigger workspace, trigger node, target node, observations,
    confidence, delay sum in ns, last target time), in output order."""
    n_nodes = len(codes.node_uni)
    order = _time_order(ts, codes.ws_code)
    ts_s = ts[order]
    ws_s = codes.ws_code[order].astype(np.int64)
    nd_s = codes.node_code[order].astype(np.int64)

    jstart, jend = _windows(ts_s, ws_s, w_ns)
    # group = (workspace, trigger node): its total count is the denominator
    gid = ws_s * n_nodes + nd_s
    g_code, g_uni = _dense_codes(gid, len(codes.ws_uni) * n_nodes)
    n_groups = len(g_uni)
    g_total = np.bincount(g_code, minlength=n_groups)

    prev_same = None
    if mode == "fraction":
        prev_same = _previous_same(g_code)

    keys, counts, dsum, lmax = count_pairs(ts_s, ws_s, nd_s, g_code, g_uni, jstart, jend, prev_same, n_nodes,
                                           chunk_pairs=_CHUNK_PAIRS, dense_bins=_DENSE_BINS,
                                           coverage_load=_COVERAGE_LOAD)
    g_of = keys // n_nodes
    conf = counts.astype(np.float64) / g_total[g_of].astype(np.float64)
    keep = np.flatnonzero((counts >= min_obs) & (conf > min_conf))
    keys, g_of, obs, conf, dsum, lmax = (a[keep] for a in (keys, g_of, counts, conf, dsum, lmax))
    tgt = keys % n_nodes
    trig_ws = g_uni[g_of] // n_nodes
    trig_nd = g_uni[g_of] % n_nodes
    n_nm = len(codes.nm_uni)
    node_uni = codes.node_uni
    # rows are in (workspace, trigger node, target node) order; nodes order as names unless kinds split them
    if codes.kd_uni is not None:
        row = np.lexsort((node_uni[tgt] // n_nm, node_uni[trig_nd] // n_nm, node_uni[tgt] % n_nm,
                          node_uni[trig_nd] % n_nm, trig_ws))
        trig_ws, trig_nd, tgt, obs, conf, dsum, lmax = (a[row] for a in (trig_ws, trig_nd, tgt, obs, conf,
                                                                          dsum, lmax))
    return trig_ws, trig_nd, tgt, obs, conf, dsum, lmax


def _pattern_frame(rows: tuple, codes: _Codes, out_cols: list[str]) -> pd.DataFrame:
    """The kept pairs as the output frame: names back from codes, sorted by text when the
    factorised order differs from it."""
    trig_ws, trig_nd, tgt, obs, conf, dsum, lmax = rows
    has_kind = codes.kd_uni is not None
    ws_uni, nm_uni, kd_uni, node_uni = codes.ws_uni, codes.nm_uni, codes.kd_uni, codes.node_uni
    n_nm = len(nm_uni)

    def names(node):
        raw = node_uni[node] % n_nm if has_kind else node
        return nm_uni[raw]

    out = pd.DataFrame({
        "workspace": ws_uni[trig_ws],
        "trigger": names(trig_nd),
        "target": names(tgt),
        "observations": obs.astype(np.int64),
        "confidence": conf,
        "avg_delay_s": dsum / (obs * 1e9),
        "last_seen": pd.to_datetime(lmax.view("M8[ns]"), utc=True),
    }, copy=False)  # every column is a fresh array
    if has_kind:
        out["trigger_kind"] = kd_uni[node_uni[trig_nd] // n_nm]
        out["target_kind"] = kd_uni[node_uni[tgt] // n_nm]
    if not all(pd.Index(u).is_monotonic_increasing for u in (ws_uni, nm_uni) + ((kd_uni,) if has_kind else ())):
        sort_cols = ["workspace", "trigger", "target"] + (["trigger_kind", "target_kind"] if has_kind else [])
        out = out.sort_values(sort_cols, kind="stable").reset_index(drop=True)
    return out if list(out.columns) == out_cols else out[out_cols]


def _empty(cols) -> pd.DataFrame:
    out = pd.DataFrame({c: pd.Series(dtype=object) for c in cols})
    out["observations"] = out["observations"].astype(np.int64)
    out["confidence"] = out["confidence"].astype(np.float64)
    out["avg_delay_s"] = out["avg_delay_s"].astype(np.float64)
    out["last_seen"] = pd.Series(dtype="datetime64[ns, UTC]")
    return out


def _time_order(ts, ws_code) -> np.ndarray:
    """An order by (workspace, ts), as one sort of a combined int64 key when it fits (much faster
    than ``np.lexsort`` on 1M rows). Rows tied on both may come in any order: counts, times and
    delays (exact integer sums) do not depend on it."""
    t0, t1 = int(ts.min()), int(ts.max())
    span = t1 - t0 + 1
    n_ws = int(ws_code.max()) + 1 if len(ws_code) else 1
    if span < (1 << 62) // max(n_ws, 1):
        return np.argsort(ws_code.astype(np.int64) * span + (ts - t0))
    return np.lexsort((ts, ws_code))


def _dense_codes(keys: np.ndarray, n_keys: int):
    """``pd.factorize(keys, sort=True)`` for non-negative int keys below ``n_keys``:
    codes numbered in key order, and the keys present. A count per key replaces the
    hash table when the key space is small."""
    if n_keys > max(4 * len(keys), 1 << 20):
        codes, uniques = pd.factorize(keys, sort=True)
        return codes.astype(np.int64), uniques
    present = np.flatnonzero(np.bincount(keys, minlength=n_keys))
    renumber = np.zeros(n_keys, dtype=np.int64)
    renumber[present] = np.arange(len(present))
    return renumber[keys], present


def _windows(ts_s, ws_s, w_ns):
    """First follower index (strictly later) and window end (strictly before t + w) per event."""
    t0 = int(ts_s.min())
    # a window longer than the events' span holds every later event either way; shortened to it,
    # ``t + w`` stays an int64 however long the window given (``106751d`` overflowed)
    w_ns = min(w_ns, int(ts_s.max()) - t0 + 1)
    span = int(ts_s.max()) - t0 + w_ns + 1
    n_ws = int(ws_s.max()) + 1
    # the first strictly later row is the end of the row's run of equal (workspace, ts)
    n = len(ts_s)
    run_end = np.r_[np.flatnonzero((ts_s[1:] != ts_s[:-1]) | (ws_s[1:] != ws_s[:-1])) + 1, n]
    jstart = np.repeat(run_end, np.diff(np.r_[0, run_end]))
    if n_ws * span < (1 << 62):
        key = ws_s * span + (ts_s - t0)
        return jstart, np.searchsorted(key, key + w_ns, side="left")
    # very long logs with many workspaces: search workspace by workspace, in unsigned offsets from the
    # workspace's first time (exact over any span pandas holds); ``t + w`` past the top reaches every row
    jend = np.empty(n, dtype=np.int64)
    bounds = np.flatnonzero(np.diff(ws_s)) + 1
    top = int(np.iinfo(np.uint64).max)
    for lo, hi in zip(np.r_[0, bounds], np.r_[bounds, n]):
        seg = ts_s[lo:hi].view(np.uint64) - ts_s[lo:lo + 1].view(np.uint64)
        w = min(w_ns, int(seg[-1]) + 1)
        reach = np.minimum(seg, np.uint64(top - w)) + np.uint64(w)
        jend[lo:hi] = lo + np.searchsorted(seg, reach, side="left")
    return jstart, jend


def _previous_same(g_code):
    """Index (in sorted order) of the previous occurrence of the same (workspace, name), or -1."""
    o = np.argsort(g_code, kind="stable")
    prev = np.full(len(g_code), -1, dtype=np.int64)
    same = g_code[o[1:]] == g_code[o[:-1]]
    prev[o[1:][same]] = o[:-1][same]
    return prev
