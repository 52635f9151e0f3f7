"""Replays of many users' logs, each against that user's own store, locally or on a Dask cluster.

:func:`run_fleet` replays every user's interaction log with
:func:`thatchlab.replay.run` and gathers per-user metrics, pooled metrics and
the pooled signal log a population prior is fitted from. The driver embeds
every distinct text once with the embedder; each user's replay gets a
:class:`~thatchlab.embed.LookupEmbedder` holding only that user's vectors,
so workers never load an embedding model; such a replay equals a replay with the embedder itself
when the embedder returns unit vectors (as the Embedder protocol asks) that do not depend on the
batch. On Dask the users are packed into
a few tasks per worker thread (balanced by log length, at most
:data:`MAX_USERS_PER_TASK` each), and a task carries its users' logs and
stores and each vector its users need once, so scheduling costs stay small
next to the replays and memory per task is bounded by the task, not the
fleet. Results do not depend on the backend or the number of workers: they
are collected in the users' order.

A fleet larger than the driver's memory is a partitioned Parquet dataset
(``user=<id>/part-*.parquet``, a directory, glob or ``s3://...`` URI), every
user starting empty, users in sorted id order: the driver lists its users from
the partition directories without reading a row and sends each task only the
location, user ids and file paths; the embedder itself goes to each worker
once (``client.scatter(..., broadcast=True)``), and a worker reads, validates
(a bad row raises :class:`~thatchlab.core.errors.LogValidationError` naming
the file, row and column), embeds and replays one user at a time
(:mod:`thatchlab.replay._fleet_dataset`). A worker then holds the embedder (a
``LookupEmbedder``'s table, or a model embedder's weights loaded once per
worker process, with its on-disk cache) plus one user's rows and vectors. By
default such a fleet keeps metrics only (``keep_events=False``), so the driver
holds one row per user.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from thatchlab.core.display import RichDisplay
from thatchlab.core.errors import InputError
from thatchlab.core.params import ScoringParams
from thatchlab.embed import default_embedder
from thatchlab.metrics.scoring import prequential_scores
from thatchlab.replay._fleet_dataset import (
    dask_client,
    dask_threads,
    pooled_scores,
    replay_dataset,
    stream,
)
from thatchlab.replay._fleet_tasks import (
    MAX_USERS_PER_TASK,
    TASKS_PER_THREAD,
    balanced_groups,
    make_tasks,
    replay_user,
)
from thatchlab.scoring import ScoringEngine

__all__ = ["FleetResult", "run_fleet", "FLEET_BACKENDS", "POOLED_COUNTS", "MAX_USERS_PER_TASK"]

FLEET_BACKENDS = ("loky", "dask")
#: Count metrics summed over users; the pooled rates are recomputed from these sums.
POOLED_COUNTS = ("n_events", "n_messages", "n_skipped", "n_calls_not_run", "n_strong", "n_ambiguous", "n_none",
                 "n_follow_right", "n_follow_wrong", "n_follow_unresolved", "n_surfaced", "n_unresolved",
                 "n_top_confirmed", "n_top_contradicted")
_ENGINES = ("prediction", "behavior")


@dataclass
class FleetResult(RichDisplay):
    """What :func:`run_fleet` returns.

    Every parameter is kept as the attribute of the same name.

    Parameters
    ----------
    per_user : pandas.DataFrame
        One row per user in input order: ``user``, ``n_log_rows`` and every scalar of that user's
        :attr:`ReplayResult.metrics <thatchlab.replay.ReplayResult>`.
    pooled : dict
        Dict over all users: ``n_users``, the :data:`POOLED_COUNTS` summed, ``interruption_rate``,
        ``wrong_silent_follow_rate`` and ``coverage`` from those sums, and ``n_forecasts``,
        ``log_loss``, ``brier``, ``ece`` of every user's prequential forecasts together (the values
        one replay of all the events would give).
    signals : pandas.DataFrame
        Columns ``user, item_id, signal, ts``: every user's final provenance in insertion order,
        item ids qualified by user (``"<user>/<item id>"``, since two users' stores can hold the
        same id), ready for ``thatchlab.fit.PriorFitter().fit(result.signals)``.
    forecasts : pandas.DataFrame
        Columns ``user, position, item_id, signal, forecast``: the prequential forecasts behind the
        pooled scores.
    engine, embedder, params, backend : str or str or None or ScoringParams
        What ran.
    keep_events : bool, default=True
        Whether ``signals`` and ``forecasts`` were kept; when False both are empty (their columns
        only) and the pooled scores come from per-user sums
        (:func:`~thatchlab.replay._fleet_dataset.pooled_scores`, equal to those of the stacked
        forecasts up to rounding, ~1e-15).
    """

    per_user: pd.DataFrame
    pooled: dict
    signals: pd.DataFrame
    forecasts: pd.DataFrame
    engine: str = "prediction"
    embedder: str | None = None
    params: ScoringParams = field(default_factory=ScoringParams)
    backend: str = "loky"
    keep_events: bool = True

    def _display_(self):
        pooled = pd.DataFrame({"value": pd.Series(
            {k: v for k, v in self.pooled.items() if isinstance(v, (int, float)) and not isinstance(v, bool)},
            dtype="float64")})
        return (f"Fleet replay ({self.engine})", {"users": len(self.per_user), "backend": self.backend,
                                                  "embedder": self.embedder, "events kept": self.keep_events},
                {"pooled": pooled, "per_user": self.per_user})

    def __repr__(self):
        return (f"FleetResult(engine={self.engine!r}, users={len(self.per_user)}, "
                f"events={self.pooled.get('n_events')}, backend={self.backend!r})")


def run_fleet(logs_by_user, engine: str = "prediction", params: ScoringParams | None = None,
              backend: str = "loky", client=None, embedder=None, n_jobs: int = 1, *,
              user_column: str = "user", keep_events: bool | None = None) -> FleetResult:
    """Replay each user's log against that user's own store; per-user and pooled metrics.

    Parameters
    ----------
    logs_by_user : Mapping or str or os.PathLike
        Mapping user → log, or user → ``(log, initial)`` where ``initial`` is that user's starting
        store (anything :func:`~thatchlab.replay.run` takes: ``store.import_sqlite(path)`` contents,
        an engine, or a dict of tables; ``None`` starts empty). Or a partitioned Parquet dataset, as
        a path, glob or URI (``"fleet/"``, ``"fleet/user=u0*"``, ``"s3://bucket/fleet"``): one hive
        directory ``<user_column>=<id>/`` of Parquet interaction-log files per user (read as the
        module's description says).
    engine : {"prediction", "behavior"}, default="prediction"
        The engine every user's log is replayed through.
    params : ScoringParams, default=None
        The parameters of every replay (production defaults when None).
    backend : {"loky", "dask"}, default="loky"
        ``"loky"``: ``n_jobs`` local processes (``n_jobs=1`` replays in this process, one user after
        another); ``"dask"``: tasks on ``client``.
    client : distributed.Client, default=None
        The Dask client of ``backend="dask"`` (the current client when None).
    embedder : Embedder, default=None
        What the driver embeds every distinct text with (the bundled model when None); replays see
        its vectors and its name. For a dataset the driver reads no text: the embedder goes to
        every worker once and each worker embeds its users' texts.
    n_jobs : int, default=1
        Processes for ``backend="loky"`` (-1 for every core).
    user_column : str, default="user"
        The partition column naming the user in a dataset.
    keep_events : bool, default=None
        Keep ``signals`` and ``forecasts`` (rows per event, which grow with the fleet); None means
        True for a mapping (as before), False for a dataset, whose result then holds one row per user.

    Returns
    -------
    FleetResult
        Per-user and pooled metrics, and the pooled signals and forecasts when kept.

    Raises
    ------
    InputError
        When ``engine``, ``backend``, ``n_jobs``, ``keep_events`` or ``logs_by_user`` is not one
        this function takes.

    Examples
    --------
    >>> from thatchlab.synth import PreferenceWorld
    >>> w = PreferenceWorld(n_users=3, n_situations=4, phrasings_per_situation=2, seed=0)
    >>> log = w.log(30)
    >>> res = run_fleet({s: g for s, g in log.groupby("store")}, embedder=w.lookup_embedder())
    >>> res.per_user["user"].tolist(), res.pooled["n_users"], res.pooled["n_events"] == len(log)
    (['user-00', 'user-01', 'user-02'], 3, True)
    >>> list(res.signals.columns)
    ['user', 'item_id', 'signal', 'ts']

    The same users as a partitioned Parquet dataset, metrics only:

    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as root:
    ...     log.assign(user=log["store"]).to_parquet(root, partition_cols=["user"])
    ...     ds_res = run_fleet(root, embedder=w.lookup_embedder())
    >>> ds_res.per_user.equals(res.per_user), len(ds_res.forecasts)
    (True, 0)
    """
    params = ScoringParams.coerce(params)
    dataset = isinstance(logs_by_user, (str, os.PathLike))
    keep = _check_options(engine, backend, n_jobs, keep_events, dataset)
    users = None if dataset else _users(logs_by_user, engine)
    if embedder is None:
        embedder = default_embedder()
    if dataset:
        results = replay_dataset(logs_by_user, user_column, engine, params, embedder, backend, client,
                                 n_jobs, keep)
    else:
        results = _replay_users(make_tasks(users, engine, params, embedder, keep_events=keep), backend,
                                client, n_jobs)
    return _collect(results, engine, params, getattr(embedder, "name", None), backend, keep)


def _check_options(engine, backend, n_jobs, keep_events, dataset: bool) -> bool:
    """Check :func:`run_fleet`'s options; whether per-event rows are kept."""
    if engine not in _ENGINES:
        raise InputError(f"engine: expected one of {list(_ENGINES)}, got {engine!r}")
    if backend not in FLEET_BACKENDS:
        raise InputError(f"backend: expected one of {list(FLEET_BACKENDS)}, got {backend!r}")
    if isinstance(n_jobs, bool) or not isinstance(n_jobs, (int, np.integer)) or n_jobs == 0:
        raise InputError(f"n_jobs: expected a non-zero int (-1 for every core), got {n_jobs!r}")
    if keep_events is not None and not isinstance(keep_events, (bool, np.bool_)):
        raise InputError(f"keep_events: expected True, False or None, got {keep_events!r}")
    return (not dataset) if keep_events is None else bool(keep_events)


def _replay_users(tasks: list, backend: str, client, n_jobs) -> list:
    """Every user's task replayed on the backend; results in the users' order."""
    if backend == "dask":
        return _on_dask(tasks, client)
    if n_jobs == 1 or len(tasks) <= 1:
        return [replay_user(t) for t in tasks]
    from joblib import Parallel, delayed  # heavy: joblib only for a parallel run

    return list(Parallel(n_jobs=int(n_jobs), backend="loky")(delayed(replay_user)(t) for t in tasks))


# -- inputs ----------------------------------------------------------------------------------------
def _users(logs_by_user, engine) -> list:
    """``[(user, log, initial)]`` in input order, logs checked, initial stores made portable."""
    if not isinstance(logs_by_user, Mapping):
        raise InputError("logs_by_user: expected a mapping user -> log (or user -> (log, initial)) "
                         f"or a partitioned Parquet dataset's path, got {type(logs_by_user).__name__}")
    if not logs_by_user:
        raise InputError("logs_by_user: expected at least one user")
    out = []
    for user, value in logs_by_user.items():
        log, initial = value if isinstance(value, tuple) else (value, None)
        if not isinstance(log, pd.DataFrame):
            raise InputError(f"logs_by_user[{user!r}]: expected a DataFrame log, got {type(log).__name__}")
        out.append((user, log, _portable(initial, engine)))
    return out


def _portable(initial, engine):
    """A starting store a worker can unpickle without a model: tables, or an engine with no embedder."""
    if initial is None or isinstance(initial, dict):
        return initial
    obj = initial
    if not isinstance(obj, ScoringEngine) and hasattr(obj, engine):
        obj = getattr(obj, engine)
    if isinstance(obj, ScoringEngine):
        return type(obj).from_tables(obj.tables, params=obj.params, project_store=obj.project_store,
                                     strict_model=obj.strict_model)
    return obj


# -- backends --------------------------------------------------------------------------------------
def _on_dask(tasks, client) -> list:
    """Run the users' replays on a Dask cluster, packed into a few tasks per worker
    thread, a bounded number in flight; results in the users' order."""
    client = dask_client(client)
    n_threads = dask_threads(client)
    chunks = _chunks(tasks, max(TASKS_PER_THREAD * n_threads, math.ceil(len(tasks) / MAX_USERS_PER_TASK)))
    return stream(client, chunks, len(tasks), n_threads, lambda members: client.submit(
        _replay_chunk, _pack([tasks[j] for j in members]), pure=False))


def _chunks(tasks, n_chunks: int) -> list:
    """Task positions split into at most ``n_chunks`` groups of similar total log length
    (see :func:`balanced_groups`)."""
    return balanced_groups([len(t["log"]) + 1 for t in tasks], n_chunks)


def _pack(tasks: list) -> dict:
    """Several users' tasks as one: their vectors once each, every user naming the texts
    of theirs (a vector shared by users of the task travels once)."""
    queries, passages = {}, {}
    users = []
    for t in tasks:
        queries.update(t["queries"])
        passages.update(t["passages"])
        users.append({**t, "queries": list(t["queries"]), "passages": list(t["passages"])})
    return {"users": users, "queries": queries, "passages": passages}


def _replay_chunk(chunk: dict) -> list:
    """Replay each user of a packed task with exactly that user's vectors, in order."""
    queries, passages = chunk["queries"], chunk["passages"]
    return [replay_user({**u, "queries": {t: queries[t] for t in u["queries"]},
                          "passages": {t: passages[t] for t in u["passages"]}}) for u in chunk["users"]]


# -- gathering -------------------------------------------------------------------------------------
def _collect(results, engine, params, embedder_name, backend, keep_events=True) -> FleetResult:
    rows = [{"user": r["user"], "n_log_rows": r["n_log_rows"], **r["metrics"]} for r in results]
    per_user = pd.DataFrame(rows)
    kept = [r for r in results if "forecasts" in r]
    forecasts = _stack(kept, "forecasts", ["position", "item_id", "signal", "forecast"])
    signals = _stack(kept, "signals", ["item_id", "signal", "ts"])
    if len(signals):
        signals["item_id"] = [f"{u}/{i}" for u, i in zip(signals["user"], signals["item_id"])]
    pooled: dict = {"n_users": len(results)}
    for key in POOLED_COUNTS:
        if key in per_user.columns:
            pooled[key] = int(per_user[key].sum())
    live = pooled.get("n_messages", 0) - pooled.get("n_skipped", 0)
    strong, amb, none = (pooled.get(k, 0) for k in ("n_strong", "n_ambiguous", "n_none"))
    right, wrong = pooled.get("n_follow_right", 0), pooled.get("n_follow_wrong", 0)
    pooled["interruption_rate"] = (amb + none) / live if live else math.nan
    pooled["wrong_silent_follow_rate"] = wrong / (right + wrong) if right + wrong else math.nan
    pooled["coverage"] = (strong + amb) / live if live else math.nan
    net = pooled.get("n_top_confirmed", 0) - pooled.get("n_top_contradicted", 0)
    pooled["nudge_net_rate"] = net / live if live else math.nan
    if keep_events:
        pooled.update(prequential_scores(forecasts, params.soft_weight))
    else:
        pooled.update(pooled_scores([r["scores"] for r in results]))
    return FleetResult(per_user=per_user, pooled=pooled, signals=signals, forecasts=forecasts,
                       engine=engine, embedder=embedder_name, params=params, backend=backend,
                       keep_events=keep_events)


def _stack(results, key, columns) -> pd.DataFrame:
    parts = [r[key].assign(user=r["user"]) for r in results if len(r[key])]
    if not parts:
        return pd.DataFrame(columns=["user"] + columns)
    out = pd.concat(parts, ignore_index=True)
    return out[["user"] + columns]
