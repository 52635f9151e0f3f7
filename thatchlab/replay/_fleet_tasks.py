"""A fleet's units of work: one user's task (only that user's vectors), its replay on a worker,
the sums its forecasts pool into, and the balancing of users into a few tasks per worker thread.

Shared by :mod:`thatchlab.replay.fleet` (mappings of logs) and
:mod:`thatchlab.replay._fleet_dataset` (partitioned Parquet datasets).
"""

from __future__ import annotations

import heapq
import warnings

import numpy as np
import pandas as pd

from thatchlab.core.errors import InputError
from thatchlab.embed import LookupEmbedder
from thatchlab.metrics.calibration import calibration_bins, clip_eps
from thatchlab.metrics.scoring import prequential
from thatchlab.replay.scoring import run

__all__ = ["MAX_USERS_PER_TASK", "TASKS_PER_THREAD", "N_BINS", "texts", "make_tasks", "replay_user",
           "forecast_stats", "balanced_groups"]

#: At most this many users in one task (on Dask, a task's users replay in one worker call).
MAX_USERS_PER_TASK = 256
#: Tasks per worker thread, so a slow task does not leave the other threads idle at the end.
TASKS_PER_THREAD = 4
#: Calibration bins of the pooled ECE.
N_BINS = 10
_TEXT_KINDS = ("message", "prediction_query")


def texts(log: pd.DataFrame) -> tuple[set, set]:
    """The texts a replay of ``log`` embeds: read texts as queries, matcher and statement
    texts as passages."""
    def cells(col, rows=None):
        if col not in log.columns:
            return set()
        values = log[col] if rows is None else log.loc[rows, col]
        return {v for v in values.tolist() if isinstance(v, str)}

    reads = log["kind"].isin(_TEXT_KINDS) if "kind" in log.columns else None
    return cells("text", reads), cells("matcher") | cells("statement")


def make_tasks(users, engine, params, embedder, keep_events: bool = True) -> list:
    """One task per user with only that user's vectors; every distinct text embedded once."""
    per_user = [texts(log) for _, log, _ in users]
    queries = sorted(set().union(*(q for q, _ in per_user)))
    passages = sorted(set().union(*(p for _, p in per_user)))
    qvec = dict(zip(queries, _as_rows(embedder.embed_queries(queries), len(queries)))) if queries else {}
    pvec = dict(zip(passages, _as_rows(embedder.embed_passages(passages), len(passages)))) if passages else {}
    name = getattr(embedder, "name", None) or "lookup"
    dim = getattr(embedder, "dim", None)
    tasks = []
    for (user, log, initial), (q, p) in zip(users, per_user):
        tasks.append({"user": user, "log": log, "initial": initial, "engine": engine, "params": params,
                      "name": name, "dim": dim, "queries": {t: qvec[t] for t in sorted(q)},
                      "passages": {t: pvec[t] for t in sorted(p)}, "keep_events": keep_events})
    return tasks


def _as_rows(arr, n):
    arr = np.asarray(arr, dtype=np.float32)
    if arr.ndim != 2 or arr.shape[0] != n:
        raise InputError(f"embedder returned shape {arr.shape} for {n} texts; expected ({n}, dim)")
    return list(arr)


def replay_user(task: dict) -> dict:
    """Replay one user's log; returns only what the fleet keeps: metrics, and forecasts and
    signals (``keep_events``) or the sums the pooled scores need."""
    dim = task["dim"] if isinstance(task["dim"], (int, np.integer)) else None
    passages = task["passages"] or {}
    emb = LookupEmbedder(passages, queries=task["queries"] or None, name=task["name"],
                         dim=None if passages or task["queries"] else dim)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)   # a silent replay's advice belongs to one user
        res = run(task["log"], task["engine"], task["params"], embedder=emb, initial=task["initial"])
    ev = res.events
    keep = ev["forecast"].notna()
    forecasts = ev.loc[keep, ["position", "item_id", "signal", "forecast"]].reset_index(drop=True)
    metrics = {k: v for k, v in res.metrics.items() if np.isscalar(v) or v is None}
    out = {"user": task["user"], "n_log_rows": int(len(task["log"])), "metrics": metrics}
    if task.get("keep_events", True):
        return {**out, "forecasts": forecasts, "signals": res.prior_signals()}
    return {**out, "scores": forecast_stats(forecasts, task["params"].soft_weight)}


def forecast_stats(forecasts: pd.DataFrame, soft_weight: float, n_bins: int = N_BINS) -> dict:
    """Sums of one user's prequential forecasts that pool into log-loss, Brier and ECE.

    ``n`` forecasts, ``w`` = Σ weight, ``ll`` = Σ weight · log-loss,
    ``se`` = Σ weight · squared error, and ``bins`` (``n_bins`` × 4: rows,
    Σw, Σw·forecast, Σw·outcome per calibration bin).
    """
    bins = np.zeros((n_bins, 4))
    pq = prequential(forecasts, soft_weight)
    if pq.empty:
        return {"n": 0, "w": 0.0, "ll": 0.0, "se": 0.0, "bins": bins}
    y, p, w = (pq[c].to_numpy(np.float64) for c in ("y", "forecast", "weight"))
    eps = clip_eps(p)
    pc = np.clip(p, eps, 1 - eps)
    ll = -(y * np.log(pc) + (1 - y) * np.log1p(-pc))
    _, idx = calibration_bins(p, n_bins=n_bins)
    for k, values in enumerate((np.ones_like(w), w, w * p, w * y)):
        np.add.at(bins[:, k], idx, values)
    return {"n": int(len(pq)), "w": float(w.sum()), "ll": float((w * ll).sum()),
            "se": float((w * (y - p) ** 2).sum()), "bins": bins}


def balanced_groups(sizes, n_chunks: int) -> list:
    """Positions split into at most ``n_chunks`` groups of similar total size (largest
    first, each to the lightest group), each group in the users' order, the groups
    heaviest first so the longest work starts first."""
    n_chunks = max(1, min(n_chunks, len(sizes)))
    heap = [(0, g) for g in range(n_chunks)]      # (load, group): the lightest group on top
    groups: list = [[] for _ in range(n_chunks)]
    for j in sorted(range(len(sizes)), key=lambda j: -sizes[j]):   # stable: ties in users' order
        load, g = heapq.heappop(heap)
        groups[g].append(j)
        heapq.heappush(heap, (load + sizes[j], g))
    loads = {g: load for load, g in heap}
    order = sorted(range(n_chunks), key=lambda g: -loads[g])
    return [sorted(groups[g]) for g in order if groups[g]]
