"""Where a sweep's chunks run (inline, loky processes, a Dask cluster) and where results go.

:class:`Runner` ships the prepared log once per worker and yields each
chunk's scores as it finishes; :class:`Cache` appends finished
configurations to one Parquet file, rewritten atomically after every chunk,
so a crashed sweep loses at most the chunks in flight (each row with a
record of the scores its request filled, :data:`SCORED_COLUMN`); the configurations'
per-cluster sums go to a NumPy sidecar beside it
(``<file>.<sweep_id>.clusters.npz``, each distinct row stored once as in
:class:`~thatchlab.sweep.resampling.ClusterStats`), so a resumed sweep keeps them too.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import NamedTuple

import numpy as np
import pandas as pd

from thatchlab.core.errors import InputError, ThatchlabError
from thatchlab.sweep.registry import EngineSpec
from thatchlab.sweep.resampling import ClusterStats

__all__ = ["Proposal", "ChunkScores", "Runner", "Cache", "typed", "chunked", "evaluate_chunk", "SIDECAR_FORMAT",
           "SCORED_COLUMN"]

#: Column of the cache file (never of a sweep result): the scores the row's request filled, as
#: a JSON list; rows without it were written before it existed.
SCORED_COLUMN = "_scored"
#: Key of the cache file's schema metadata: per sweep id, the integer and boolean columns of its
#: rows, so rows stored beside other sweeps' (whose missing cells turn them float) read back typed.
_DTYPES_KEY = b"thatchlab.sweep_dtypes"

#: Version of the per-cluster sums sidecar: 2 stores each segment's distinct rows once
#: (``rows<i>``) and per key the row of every configuration (``num_index<j>``,
#: ``den_index<j>``); 1 (no ``format`` entry) stored full matrices ``num<j>``/``den<j>``.
SIDECAR_FORMAT = 2


class Proposal(NamedTuple):
    """One configuration to score: its position in the sweep's proposals and its params."""

    index: int
    params: object


class ChunkScores(NamedTuple):
    """A scored chunk: the proposal indices and, for each, the engine's ``<segment>_<score>`` dict."""

    indices: list
    rows: list


def evaluate_chunk(spec: EngineSpec, prepared, chunk, segments, metric, boot) -> ChunkScores:
    """Worker task: score the :class:`Proposal` s of one chunk with ``spec.evaluate``.

    Parameters
    ----------
    spec : EngineSpec
        The engine.
    prepared : Prepared
        The engine's once-per-sweep work on the log.
    chunk : list of Proposal
        The configurations to score.
    segments : list of Segment
        The validation and test stretches.
    metric : str
        The optimised metric (the one bootstrap intervals are drawn for).
    boot : dict or None
        ``{"n", "alpha", "seed"}`` of the bootstrap intervals, or None.
    """
    rows = spec.evaluate(prepared, [p.params for p in chunk], segments, metric, boot)
    return ChunkScores([p.index for p in chunk], rows)


class Runner:
    """Evaluates chunks locally (inline or loky) or on Dask, in the order they finish.

    Parameters
    ----------
    spec, prepared, segments, metric, boot
        What :func:`evaluate_chunk` needs, fixed for the whole sweep.
    n_jobs : int or None
        Local processes (``None`` or 1: inline; negative: every core).
    backend : {"loky", "dask"}
        Where chunks run.
    client : distributed.Client or None
        The Dask client when ``backend="dask"``.
    """

    def __init__(self, spec, prepared, segments, metric, boot, *, n_jobs, backend, client):
        self.spec, self.prepared, self.segments = spec, prepared, segments
        self.metric, self.boot, self.n_jobs, self.backend, self.client = metric, boot, n_jobs, backend, client
        self._remote = None

    def workers(self) -> int:
        """How many chunks can run at once."""
        if self.backend == "dask":
            return max(1, len(self.client.scheduler_info().get("workers", {})))
        if self.n_jobs is None or self.n_jobs == 1:
            return 1
        return (os.cpu_count() or 1) if self.n_jobs < 0 else int(self.n_jobs)

    def _task(self, chunk):
        return self.spec, self.prepared, chunk, self.segments, self.metric, self.boot

    def run(self, chunks):
        """Yield one :class:`ChunkScores` per chunk (in completion order for Dask)."""
        if not chunks:
            return
        if self.backend == "dask":
            from distributed import as_completed  # optional extra: dask backend only

            if self._remote is None:  # ship the prepared log once per worker
                self._remote = self.client.scatter(self.prepared, broadcast=True)
            futures = [self.client.submit(evaluate_chunk, self.spec, self._remote, chunk, self.segments,
                                          self.metric, self.boot, pure=False) for chunk in chunks]
            for fut in as_completed(futures):
                yield fut.result()
                fut.release()
        elif self.workers() == 1:
            for chunk in chunks:
                yield evaluate_chunk(*self._task(chunk))
        else:
            from joblib import Parallel, delayed  # heavy: worker pools only for n_jobs > 1

            par = Parallel(n_jobs=self.n_jobs, backend="loky", return_as="generator")
            yield from par(delayed(evaluate_chunk)(*self._task(chunk)) for chunk in chunks)


def typed(frame: pd.DataFrame) -> pd.DataFrame:
    """Arrow round trip: fresh and cached rows get the same dtypes."""
    import pyarrow as pa  # heavy: Arrow only when rows are typed

    return pa.Table.from_pandas(frame, preserve_index=False).to_pandas()


class Cache:
    """Finished configurations in one Parquet file, rewritten atomically after each chunk.

    Parameters
    ----------
    path : str, Path or None
        The Parquet file (None: no cache).
    sweep_id : str
        Rows of other sweeps in the same file are kept but never reused.

    Columns one sweep's rows lack are NaN in the file; the integer and
    boolean columns of each sweep are recorded in the file's metadata, so
    :meth:`done` returns them with the dtypes a fresh sweep gives.
    """

    def __init__(self, path, sweep_id):
        self.path = None if path is None else Path(path)
        self.sweep_id = sweep_id
        self.frame = None
        self.dtypes: dict = {}  # sweep id -> {column: dtype} of its integer and boolean columns
        if self.path is not None and self.path.exists() and not self.path.is_file():
            kind = "a directory" if self.path.is_dir() else "not a regular file (a FIFO, a socket or a device)"
            raise InputError(f"{self.path}: is {kind}; expected the sweep cache, a Parquet file (or a path "
                             "where none exists yet)")
        if self.path is not None and self.path.exists():
            try:
                import pyarrow.parquet as pq  # heavy: Parquet only when a cache file exists

                self.frame = pd.read_parquet(self.path)
                meta = pq.read_schema(self.path).metadata or {}
                if _DTYPES_KEY in meta:
                    self.dtypes = json.loads(meta[_DTYPES_KEY])
            except Exception as exc:  # a truncated or foreign file: pyarrow raises several types

                raise InputError(f"{self.path}: the sweep cache is not a readable Parquet file "
                                 f"({type(exc).__name__}); expected a cache a sweep wrote, or remove it") from None
        self._sums = None

    @property
    def sidecar(self) -> Path | None:
        """The per-cluster sums file of this sweep (None without a cache)."""
        return None if self.path is None else self.path.with_name(f"{self.path.name}.{self.sweep_id}.clusters.npz")

    def clusters(self) -> dict:
        """Cached per-cluster sums, ``{config_id: {(metric, segment): (num, den)}}``.

        The arrays are read-only views of the sidecar's distinct rows, one
        object per row, so merging them stores each row once again.
        """
        if self._sums is None:
            self._sums = {}
            if self.sidecar is not None and self.sidecar.exists():
                self._sums = _load_sums(self.sidecar)
        return self._sums

    def _write_sums(self):
        stats = ClusterStats.merge(self._sums, None, {})
        keys, segments = stats.keys(), list(stats.distinct)
        arrays = {"format": np.array(SIDECAR_FORMAT), "config_ids": np.array(stats.config_ids, dtype=str),
                  "keys": np.array(json.dumps([list(k) for k in keys])), "segments": np.array(json.dumps(segments))}
        for i, seg in enumerate(segments):
            arrays[f"rows{i}"] = stats.distinct[seg]
        for j, k in enumerate(keys):
            arrays[f"num_index{j}"], arrays[f"den_index{j}"] = stats.num_index[k], stats.den_index[k]
        tmp = self.sidecar.with_name(f".{self.sidecar.name}.{os.getpid()}.tmp.npz")
        try:
            np.savez(tmp, **arrays)
            os.replace(tmp, self.sidecar)
        finally:
            if tmp.exists():
                tmp.unlink()

    def done(self) -> pd.DataFrame:
        """The cached rows of this sweep (an empty frame when none), with :data:`SCORED_COLUMN`
        when the file has it; columns of other sweeps' rows in the file are NaN."""
        if self.frame is None or "sweep_id" not in self.frame.columns:
            return pd.DataFrame()
        rows = self.frame[self.frame["sweep_id"] == self.sweep_id].copy()
        for column, dtype in self.dtypes.get(self.sweep_id, {}).items():
            if column in rows.columns and str(rows[column].dtype) != dtype and rows[column].notna().all():
                rows[column] = rows[column].astype(dtype)
        return rows

    def add(self, rows: pd.DataFrame, sums: dict | None = None, scored: str | None = None):
        """Append ``rows`` (and their per-cluster ``sums``) and rewrite the files atomically.

        ``scored`` (JSON list of the scores the request filled) goes into
        :data:`SCORED_COLUMN` of every row. A configuration's sums already
        stored keep their keys; ``sums`` adds or replaces keys.
        """
        if self.path is None:
            return
        if sums:
            stored = self.clusters()
            for cid, part in sums.items():
                stored[cid] = {**stored.get(cid, {}), **part}
            self._write_sums()
        if scored is not None:
            rows = rows.assign(**{SCORED_COLUMN: scored})
        exact = {c: str(t) for c, t in rows.dtypes.items() if t.kind in "iub"}
        known = self.dtypes.get(self.sweep_id)
        self.dtypes[self.sweep_id] = exact if known is None else {c: t for c, t in known.items()
                                                                 if exact.get(c) == t}
        self.frame = rows if self.frame is None else pd.concat([self.frame, rows], ignore_index=True)
        tmp = self.path.with_name(f".{self.path.name}.{os.getpid()}.tmp")
        try:
            import pyarrow as pa  # heavy: Parquet only when a cache is kept
            import pyarrow.parquet as pq  # heavy: as above

            table = pa.Table.from_pandas(self.frame, preserve_index=False)
            meta = {**(table.schema.metadata or {}), _DTYPES_KEY: json.dumps(self.dtypes).encode()}
            pq.write_table(table.replace_schema_metadata(meta), tmp)
            with open(tmp, "rb") as fh:
                os.fsync(fh.fileno())
            os.replace(tmp, self.path)
        finally:
            if tmp.exists():
                tmp.unlink()


def _load_sums(path) -> dict:
    """The sums of the sidecar at ``path``; a truncated or foreign file is an InputError naming it."""
    try:
        with np.load(path, allow_pickle=False) as z:
            return _read_sums(z)
    except ThatchlabError:
        raise
    except (MemoryError, RecursionError, Exception) as exc:  # truncated zip, bad arrays, missing keys...
        raise InputError(f"{path}: not a readable sweep cache sidecar ({type(exc).__name__}: "
                         f"{' '.join(str(exc).split())[:200]}); remove it (and its cache) to rescore") from None


def _read_sums(z) -> dict:
    """``{config_id: {(metric, segment): (num, den)}}`` of an open sidecar (either format)."""
    cids = [str(c) for c in z["config_ids"]]
    keys = [tuple(k) for k in json.loads(str(z["keys"]))]
    if "format" not in z.files:  # format 1: full matrices, one row per configuration
        arrays = [(k, z[f"num{j}"], z[f"den{j}"]) for j, k in enumerate(keys)]
        return {cid: {k: (num[i], den[i]) for k, num, den in arrays} for i, cid in enumerate(cids)}
    if int(z["format"]) != SIDECAR_FORMAT:
        raise InputError(f"sweep cache: per-cluster sums of format {int(z['format'])} (this version reads "
                         f"{SIDECAR_FORMAT}); remove the .clusters.npz file to rescore")
    segments = json.loads(str(z["segments"]))
    distinct = {seg: z[f"rows{i}"] for i, seg in enumerate(segments)}
    index = {k: (z[f"num_index{j}"], z[f"den_index{j}"]) for j, k in enumerate(keys)}
    stats = ClusterStats.from_rows(None, {}, cids, distinct, {k: v[0] for k, v in index.items()},
                                   {k: v[1] for k, v in index.items()})
    return stats.parts()


def chunked(items, size):
    """``items`` in consecutive lists of ``size`` (the last may be shorter).

    >>> chunked([1, 2, 3, 4, 5], 2)
    [[1, 2], [3, 4], [5]]
    """
    return [items[i:i + size] for i in range(0, len(items), size)]
