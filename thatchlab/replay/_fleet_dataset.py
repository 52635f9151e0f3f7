"""Fleets read from a partitioned Parquet dataset, and pooled scores without the forecasts.

The driver of :func:`~thatchlab.replay.run_fleet` lists a dataset's users
from its hive partition directories (``user=<id>/part-*.parquet``) without
opening a file (:func:`list_users`) and hands each task the location, the
user ids and those users' file paths. A worker reads one user's files at a
time through a ``pyarrow.dataset`` filtered on the partition key
(:func:`read_user_files`), embeds that user's texts with the embedder it was
sent and replays them (:func:`replay_users`); rows that fail the replay's
validation are validated again file by file, as
:func:`~thatchlab.logs.validate_interaction_log` does, so the error names
the file, the row in it and the column (:func:`check_files`).

Nothing the size of the fleet's rows reaches the driver: without
``keep_events`` each user sends back its metrics and a few sums of its
prequential forecasts (:func:`forecast_stats`), from which the pooled
log-loss, Brier score and ECE are made (:func:`pooled_scores`). The Dask
plumbing both kinds of fleet share (a bounded window of tasks, results
placed in the users' order) is :func:`stream`.
"""

from __future__ import annotations

import fnmatch
import functools
import os
import warnings
from dataclasses import dataclass
from urllib.parse import unquote

import numpy as np
import pandas as pd

from thatchlab.core.errors import InputError, LogValidationError
from thatchlab.logs import validate_interaction_log
from thatchlab.replay._fleet_tasks import (
    MAX_USERS_PER_TASK,
    N_BINS,
    TASKS_PER_THREAD,
    balanced_groups,
    forecast_stats,
    make_tasks,
    replay_user,
)

__all__ = ["FleetDataset", "list_users", "read_user_files", "check_files", "read_user_log", "replay_users",
           "replay_dataset", "forecast_stats", "pooled_scores", "stream", "dask_client", "dask_threads",
           "N_BINS"]

#: Bins of the pooled ECE (those of :func:`thatchlab.metrics.scoring.prequential_scores`).
_SUFFIXES = (".parquet", ".pq")
_GLOB = "*?["
_NULL_PARTITION = "__HIVE_DEFAULT_PARTITION__"


@dataclass(frozen=True)
class FleetDataset:
    """A dataset's users as the driver lists them (paths only, no rows).

    Attributes
    ----------
    source : the directory, glob or URI as given.
    location : the root the workers open their filesystem from (a URI or an absolute path).
    column : the partition column naming the user.
    users : user ids, sorted.
    files : per user, that user's file paths (as the filesystem names them), sorted.
    sizes : per user, the bytes of those files (what the tasks are balanced by).
    """

    source: str
    location: str
    column: str
    users: tuple
    files: tuple
    sizes: tuple


def _filesystem(location: str):
    """``(pyarrow filesystem, path)`` of a URI (``s3://``, ``gs://``, ``file://``...) or a local path."""
    import pyarrow.fs as pafs  # optional extra: pyarrow only for a parquet fleet

    if "://" in location:
        return _uri_filesystem(location)
    return pafs.LocalFileSystem(), os.path.abspath(os.path.expanduser(location))


@functools.lru_cache(maxsize=8)
def _uri_filesystem(location: str):
    """A URI's filesystem, opened once per process (a worker reads many users from it)."""
    import pyarrow.fs as pafs  # optional extra: pyarrow only for a parquet fleet

    try:
        fs, path = pafs.FileSystem.from_uri(location)
    except Exception as exc:  # noqa: BLE001 - pyarrow raises several kinds for a bad URI
        raise InputError(f"{location}: cannot open this location ({type(exc).__name__}: {exc}); "
                         "expected a local path or a URI pyarrow.fs.FileSystem.from_uri reads") from None
    return fs, path.rstrip("/") or "/"


def _split(source: str) -> tuple[str, list[str]]:
    """The root location (no glob characters) and the glob's segments below it."""
    query = ""
    if "://" in source:
        source, sep, q = source.partition("?")
        query = sep + q
        scheme, _, rest = source.partition("://")
        head, segs = scheme + "://", rest.split("/")
    else:
        path = os.path.abspath(os.path.expanduser(source))
        head, segs = "", path.split("/")
    first = next((i for i, s in enumerate(segs) if any(c in s for c in _GLOB)), len(segs))
    return head + "/".join(segs[:first]) + query, segs[first:]


def list_users(source, column: str = "user") -> FleetDataset:
    """List a hive-partitioned Parquet dataset's users from its directory names.

    Parameters
    ----------
    source : a directory, a glob of files or partition directories
        (``"fleet/user=u0*"``, ``"fleet/*/part-*.parquet"``) or a URI
        pyarrow opens (``"s3://bucket/fleet"``).
    column : the partition column naming the user.

    Raises
    ------
    InputError
        No such directory, or no Parquet file in it (or matching the glob).
    LogValidationError
        Files outside ``<column>=<id>/`` directories (``column`` names the
        missing partition column, ``file`` the first such file).

    Examples
    --------
    >>> import tempfile, pandas as pd
    >>> with tempfile.TemporaryDirectory() as root:
    ...     pd.DataFrame({"user": ["a", "b"], "x": [1, 2]}).to_parquet(root, partition_cols=["user"])
    ...     list_users(root).users
    ('a', 'b')
    """
    import pyarrow.fs as pafs  # optional extra: pyarrow only for a parquet fleet

    text = os.fspath(source)
    if not isinstance(text, str) or not text:
        raise InputError(f"dataset: expected a directory, glob or URI, got {source!r}")
    if not isinstance(column, str) or not column or "/" in column or "=" in column:
        raise InputError(f"user_column: expected a partition column name, got {column!r}")
    layout = f"Parquet files under hive partition directories {column}=<id>/"
    location, pattern = _split(text)
    fs, root = _filesystem(location)
    info = fs.get_file_info(root)
    if info.type == pafs.FileType.NotFound:
        raise InputError(f"{text}: no such directory ({root} does not exist); expected a directory "
                         f"(or glob) of {layout}")
    if info.type == pafs.FileType.File:
        raise InputError(f"{text}: a single file; expected a directory (or glob) of {layout}")
    by_user: dict = {}
    outside = []
    for f in fs.get_file_info(pafs.FileSelector(root, recursive=True)):
        rel = f.path[len(root):].lstrip("/").split("/")
        if (f.type != pafs.FileType.File or not f.path.lower().endswith(_SUFFIXES)
                or any(s[:1] in "._" for s in rel)
                or (pattern and not (len(rel) >= len(pattern)
                                     and all(map(fnmatch.fnmatchcase, rel, pattern))))):
            continue
        keys = [s for s in f.path.split("/")[:-1] if s.startswith(column + "=")]
        if not keys:
            outside.append(f.path)
            continue
        user = unquote(keys[-1][len(column) + 1:])
        if user in ("", _NULL_PARTITION):
            raise LogValidationError(f"{f.path}: a null '{column}' partition; expected a user id in "
                                     f"{column}=<id>/", file=f.path, column=column, expected="a user id")
        by_user.setdefault(user, []).append((f.path, int(f.size or 0)))
    if outside:
        found = sorted({s.split("=", 1)[0] for p in outside for s in p.split("/")[:-1] if "=" in s})
        hint = (f" (partition column(s) {found} found: pass user_column= one of them)" if found
                else f" (write it with DataFrame.to_parquet(path, partition_cols=[{column!r}]))")
        raise LogValidationError(
            f"{outside[0]}: no '{column}' partition column; expected {layout}{hint}; "
            f"{len(outside)} file(s) lie outside such directories", file=outside[0], column=column,
            expected=f"directories {column}=<id>/")
    if not by_user:
        what = f"match {text!r}" if pattern else f"under {root}"
        raise InputError(f"{text}: empty dataset: no Parquet files ({'/'.join(_SUFFIXES)}) {what}; "
                         f"expected {layout}")
    users = tuple(sorted(by_user))
    files = tuple(tuple(p for p, _ in sorted(by_user[u])) for u in users)
    sizes = tuple(sum(s for _, s in by_user[u]) for u in users)
    return FleetDataset(source=text, location=location, column=column, users=users, files=files,
                        sizes=sizes)


def read_user_files(location: str, column: str, user: str, files) -> list:
    """One user's rows as read, file by file: ``[(path, DataFrame)]``.

    ``files`` are the user's paths on the filesystem of ``location``
    (:attr:`FleetDataset.files`); those under a ``column=user`` directory are
    read whole, each straight from its path (its rows in file order, without
    the partition column): no dataset is built per user, which cost more than
    a small user's replay.
    """
    import pyarrow.parquet as pq  # optional extra: pyarrow only for a parquet fleet

    fs, _ = _filesystem(location)
    key = f"{column}="
    out = []
    for path in files:
        keys = [seg for seg in str(path).split("/")[:-1] if seg.startswith(key)]
        if not keys or unquote(keys[-1][len(key):]) != user:
            continue
        # the file alone: no partition discovery (its column would clash with a user column the
        # file holds, which pyarrow 23 refuses to merge when their dictionary index types differ)
        df = pq.read_table(path, filesystem=fs, partitioning=None).to_pandas()
        out.append((path, df.drop(columns=[column]) if column in df.columns else df))
    if not out:
        raise InputError(f"{location}: no file of {column}={user!r} among {list(files)[:3]}; expected "
                         "the files of that partition")
    return out


def check_files(parts) -> None:
    """Validate each file's rows as :func:`~thatchlab.logs.validate_interaction_log` does, the
    file as the source: a :class:`~thatchlab.core.errors.LogValidationError` names the file, the
    row in it (0-based, as read) and the column."""
    for path, df in parts:
        validate_interaction_log(df, source=path)


def read_user_log(location: str, column: str, user: str, files) -> pd.DataFrame:
    """One user's interaction log, typed: every file validated as :func:`check_files` does, the
    files' rows in order (what :func:`replay_users` replays for that user, loaded by hand).

    Examples
    --------
    >>> import tempfile, pandas as pd
    >>> with tempfile.TemporaryDirectory() as root:
    ...     pd.DataFrame({"user": ["a"], "ts": ["2026-01-01T09:00:00Z"], "session": ["s1"], "kind": ["message"],
    ...                   "text": ["hello"]}).to_parquet(root, partition_cols=["user"])
    ...     fleet = list_users(root)
    ...     log = read_user_log(fleet.location, "user", "a", fleet.files[0])
    >>> log[["session", "kind", "text"]].values.tolist(), str(log["ts"].dtype)
    ([['s1', 'message', 'hello']], 'datetime64[ns, UTC]')
    """
    parts = read_user_files(location, column, user, files)
    return _stack_files([(path, validate_interaction_log(df, source=path)) for path, df in parts])


def _stack_files(parts) -> pd.DataFrame:
    return parts[0][1] if len(parts) == 1 else pd.concat([df for _, df in parts], ignore_index=True)


def replay_users(common: dict, users: list, embedder) -> list:
    """Replay each of ``users`` (``{"user", "files"}``), one user's rows in memory at a time.

    The replay validates the user's rows once; only when they fail are the
    files validated one by one (:func:`check_files`), so the error raised
    names the file and the row in it.
    """
    out = []
    for u in users:
        parts = read_user_files(common["location"], common["column"], u["user"], u["files"])
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", UserWarning)
                (task,) = make_tasks([(u["user"], _stack_files(parts), None)], common["engine"], common["params"],
                                 embedder, keep_events=common["keep_events"])
            out.append(replay_user(task))
        except LogValidationError:
            check_files(parts)
            raise
        del parts, task
    return out


# -- Dask plumbing (shared with mapping fleets) -----------------------------------------------------
def dask_client(client):
    """``client``, or the current ``distributed`` client when None."""
    if client is None:
        try:
            from distributed import get_client  # optional extra: dask only for a cluster run

            return get_client()
        except (ImportError, ValueError):
            raise InputError("backend='dask': pass client=distributed.Client(...)") from None
    return client


def dask_threads(client) -> int:
    """Worker threads of the cluster ``client`` talks to."""
    workers = client.scheduler_info().get("workers", {})
    return max(1, sum(int(w.get("nthreads", 1) or 1) for w in workers.values()))


def stream(client, chunks, n_results, n_threads, submit) -> list:
    """Results of ``submit(members)`` for each chunk of user positions, placed by position;
    two tasks in flight per thread keep every worker busy while bounding what the cluster
    holds. On an error the tasks still pending are cancelled and the error raised."""
    from distributed import as_completed  # optional extra: dask only for a cluster run

    window = 2 * n_threads
    results: list = [None] * n_results
    index, live = {}, {}
    pending = iter(chunks)

    def go(members):
        fut = submit(members)
        index[fut.key], live[fut.key] = members, fut
        return fut

    queue = as_completed([go(c) for _, c in zip(range(window), pending)], with_results=True)
    try:
        for fut, chunk_results in queue:
            for j, result in zip(index.pop(fut.key), chunk_results):
                results[j] = result
            live.pop(fut.key).release()
            nxt = next(pending, None)
            if nxt is not None:
                queue.add(go(nxt))
    except BaseException:
        client.cancel(list(live.values()))
        raise
    return results


def replay_dataset(source, column, engine, params, embedder, backend, client, n_jobs, keep_events) -> list:
    """Per-user results of a dataset's fleet, in :attr:`FleetDataset.users` order.

    On Dask the embedder is scattered to every worker once (a model embedder
    then loads its weights once per worker process); each task gets the
    location, its user ids and their file paths.
    """
    listing = list_users(source, column)
    common = {"location": listing.location, "column": column, "engine": engine, "params": params,
              "keep_events": keep_events}
    specs = [{"user": u, "files": list(f)} for u, f in zip(listing.users, listing.files)]
    if backend == "dask":
        client = dask_client(client)
        n_threads = dask_threads(client)
        n_chunks = max(TASKS_PER_THREAD * n_threads, -(-len(specs) // MAX_USERS_PER_TASK))
        groups = balanced_groups(listing.sizes, n_chunks)
        emb = client.scatter(embedder, broadcast=True, hash=False)
        try:
            return stream(client, groups, len(specs), n_threads, lambda members: client.submit(
                replay_users, common, [specs[j] for j in members], emb, pure=False))
        finally:
            emb.release()
    if n_jobs == 1 or len(specs) <= 1:
        return replay_users(common, specs, embedder)
    from joblib import Parallel, delayed  # heavy: joblib only for a parallel run

    n_procs = int(n_jobs) if n_jobs > 0 else (os.cpu_count() or 1)
    groups = balanced_groups(listing.sizes, TASKS_PER_THREAD * n_procs)
    parts = Parallel(n_jobs=int(n_jobs), backend="loky")(
        delayed(replay_users)(common, [specs[j] for j in g], embedder) for g in groups)
    results: list = [None] * len(specs)
    for g, part in zip(groups, parts):
        for j, r in zip(g, part):
            results[j] = r
    return results


# -- pooled scores from per-user sums --------------------------------------------------------------
def pooled_scores(stats: list) -> dict:
    """``n_forecasts, log_loss, brier, ece`` of every user's forecasts together, from their
    :func:`forecast_stats`: equal to :func:`~thatchlab.metrics.scoring.prequential_scores` of the
    stacked forecasts up to the order of summation (about 1e-15 relative)."""
    n = sum(s["n"] for s in stats)
    if n == 0:
        return {"n_forecasts": 0, "log_loss": float("nan"), "brier": float("nan"), "ece": float("nan")}
    w = np.float64(sum(s["w"] for s in stats))
    bins = np.sum([s["bins"] for s in stats], axis=0)
    live = bins[bins[:, 0] > 0]
    with np.errstate(invalid="ignore", divide="ignore"):
        ece = float((live[:, 1] / w * np.abs(live[:, 3] / live[:, 1] - live[:, 2] / live[:, 1])).sum())
        log_loss = sum(s["ll"] for s in stats) / w
        brier = round(sum(s["se"] for s in stats) / w, 15)
    return {"n_forecasts": int(n), "log_loss": float(log_loss), "brier": float(brier), "ece": round(ece, 12)}
