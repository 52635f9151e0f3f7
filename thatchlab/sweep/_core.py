"""Honest parameter sweeps over logged interactions, locally or on a Dask cluster.

Every configuration replays the whole time-sorted log once and is scored
out of sample: on a validation stretch and a later test stretch (a holdout
fraction, or the folds of a scikit-learn ``TimeSeriesSplit``), so the
configuration picked on validation is reported with a score on data it
never saw. The engine's expensive preparation (validation, embeddings,
cosines) runs once per sweep and is shipped to the workers; configurations
are evaluated in chunks, and a Parquet cache lets a crashed sweep resume
where it stopped. Result columns follow
:class:`~thatchlab.sweep._columns.ColumnOrder`: fixed by the engine, the split
and whether intervals are asked for, whatever metrics are optimised.
Picking from the results (:func:`best`, :func:`pareto`,
:func:`identification`) is :mod:`thatchlab.sweep.reading`, re-exported here.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from thatchlab.core.dtypes import is_arrow_timestamp, is_text_dtype, native_times, object_text
from thatchlab.core.errors import InputError, warn
from thatchlab.core.progress import progress
from thatchlab.sweep._columns import ColumnOrder, result_frame, score_columns, score_segments
from thatchlab.sweep._description import keep_description
from thatchlab.sweep._runner import (
    SCORED_COLUMN,
    Cache,
    ChunkScores,
    Proposal,
    Runner,
    chunked,
    typed,
)
from thatchlab.sweep._space import check_space, grid_configs, optuna_suggest, random_configs
from thatchlab.sweep.reading import BestConfig, best, identification, metric_direction, pareto
from thatchlab.sweep.registry import (
    CLUSTERS_KEY,
    EngineSpec,
    Prepared,
    Segment,
    get_engine,
    metric_list,
)
from thatchlab.sweep.resampling import ClusterStats, segment_clusters

__all__ = ["sweep", "best", "BestConfig", "holdout_segments", "config_id", "pareto", "identification",
           "metric_direction"]

_SEARCHES = ("grid", "random", "optuna")
_BACKENDS = ("loky", "dask")


def config_id(engine: str, params) -> str:
    """Stable hash of one configuration: the engine name and every parameter value.

    Parameters
    ----------
    engine : str
        The engine's registered name.
    params : params
        The configuration.

    Returns
    -------
    str
        20 hex digits of a SHA-256 of both.

    See Also
    --------
    sweep : Records it in each row's ``config_id``.

    Examples
    --------
    >>> from thatchlab.core.params import ScoringParams
    >>> config_id("prediction", ScoringParams()) == config_id("prediction", ScoringParams(k=5))
    True
    """
    text = json.dumps({"engine": engine, "params": params.to_dict()}, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:20]


def holdout_segments(times, holdout=0.2) -> list[Segment]:
    """Validation and test segments of a time-sorted log.

    ``holdout = h`` (``0 < h < 0.5``) cuts the ``n`` rows at
    ``⌊(1−2h)·n⌋`` and ``⌊(1−h)·n⌋``: validation = ``[1−2h, 1−h)``,
    test = ``[1−h, 1]``. A ``TimeSeriesSplit`` gives one validation segment
    per fold but the last (``val0``, ``val1``...) and its last fold's test
    block as the test segment.

    Parameters
    ----------
    times : array-like of int
        The time-sorted log's timestamps (ns).
    holdout : float or TimeSeriesSplit, default=0.2
        The fraction ``h``, or a split.

    Returns
    -------
    list of Segment
        The validation segment(s), then ``test``.

    Raises
    ------
    InputError
        When the log has fewer than 2 rows, the split has fewer than 2 folds, or ``h`` is not a
        fraction in ``(0, 0.5)`` leaving both stretches non-empty.

    See Also
    --------
    sweep : Scores every configuration on these segments.

    Examples
    --------
    >>> [(s.name, s.lo, s.hi) for s in holdout_segments(np.arange(10), 0.2)]
    [('val', 6, 8), ('test', 8, 10)]
    """
    t = np.asarray(times, dtype=np.int64)
    n = t.size
    if n < 2:
        raise InputError(f"log: expected at least 2 rows to hold out a validation and a test "
                         f"stretch, got {n}")

    def segment(name: str, lo: int, hi: int) -> Segment:
        return Segment(name, lo, hi, int(t[lo]), int(t[hi]) if hi < n else None)

    if hasattr(holdout, "split") and hasattr(holdout, "get_n_splits"):
        tests = [test for _, test in holdout.split(np.arange(n))]
        if len(tests) < 2:
            raise InputError("holdout: a TimeSeriesSplit needs n_splits >= 2 (validation folds + test)")
        folds = [segment(f"val{i}", int(test[0]), int(test[-1]) + 1) for i, test in enumerate(tests)]
        return folds[:-1] + [dataclasses.replace(folds[-1], name="test")]
    if isinstance(holdout, bool) or not isinstance(holdout, (int, float)) or not 0 < holdout < 0.5:
        raise InputError(f"holdout: expected a fraction 0 < h < 0.5 or a TimeSeriesSplit, got {holdout!r}")
    a, b = int(math.floor((1 - 2 * holdout) * n)), int(math.floor((1 - holdout) * n))
    if not (a < b < n):
        raise InputError(f"holdout: {holdout} leaves an empty validation or test stretch of a "
                         f"{n}-row log")
    return [segment("val", a, b), segment("test", b, n)]


def _cell_digest(v) -> str:
    if not isinstance(v, (np.ndarray, list, tuple)):
        return str(v)
    arr = np.asarray(v)
    if arr.dtype.kind in "biuf":
        return hashlib.sha256(arr.astype(np.float64).tobytes()).hexdigest()
    return repr(list(v))


def _fingerprint(log) -> str:
    h = hashlib.sha256()
    if isinstance(log, (str, Path)):
        h.update(Path(log).read_bytes())
    elif isinstance(log, pd.DataFrame):
        h.update(repr(list(log.columns)).encode())
        # the same cells give the same text whatever their backing (Arrow, string, categorical)
        log = pd.DataFrame({c: object_text(native_times(log[c])) for c in log.columns}, index=log.index) \
            if any(is_text_dtype(t) or is_arrow_timestamp(t) for t in log.dtypes) else log
        text = log.astype(str)
        for col in log.columns:  # vectors in full, not their abbreviated repr
            cells = log[col].to_numpy(object)
            kinds = set(map(type, cells)) if pd.api.types.is_object_dtype(log[col]) else ()  # one C-level pass
            if any(issubclass(k, (np.ndarray, list, tuple)) for k in kinds):
                text[col] = [_cell_digest(v) for v in cells]
        h.update(pd.util.hash_pandas_object(text, index=False).to_numpy().tobytes())
    elif isinstance(log, dict):
        for k in sorted(log):
            h.update(k.encode() + _fingerprint(log[k]).encode())
    elif isinstance(log, (tuple, list)):
        for part in log:
            h.update(_fingerprint(part).encode())
    else:
        h.update(repr(log).encode())
    return h.hexdigest()


# -- the sweep ------------------------------------------------------------------------------------
@dataclass(frozen=True)
class _SweepRun:
    """What every chunk of one sweep shares: the engine, its prepared log, segments, runner and cache."""

    spec: EngineSpec
    prepared: Prepared
    segments: list
    metric: str
    sweep_id: str
    runner: Runner
    store: Cache
    chunk_size: int | None = None
    clusters: dict = field(default_factory=dict)  # config_id -> {(metric, segment): (num, den)}
    asked: tuple = ()  # every requested metric, the optimised one first
    intervals: bool = False

    @property
    def columns(self) -> ColumnOrder:
        """The result columns (the same for every request on this engine and split)."""
        return ColumnOrder.of(self.spec, self.segments, self.intervals)

    @property
    def filled(self) -> tuple:
        """The scores the engine reports for this request (the other score columns are NaN)."""
        return self.spec.filled(self.asked)

    @property
    def scored(self) -> str:
        """What the cache records beside each row: the scores its request filled (JSON)."""
        return json.dumps(list(self.filled))


def _bootstrap(intervals, seed) -> dict | None:
    """The engines' bootstrap settings ``{"n", "alpha", "seed"}`` (None when intervals are off)."""
    if not intervals:
        return None
    return {"n": 200 if intervals is True else int(intervals), "alpha": 0.05, "seed": int(seed),
            "resamples": "clusters"}


def _sweep_id(spec, log, segments, prepared, metric, boot) -> str:
    """Hash of what makes cached rows reusable: engine, log, segments, embedder and bootstrap.

    A request for which the engine fills only some of its scores
    (:meth:`~thatchlab.sweep.registry.EngineSpec.filled`: forecast metrics
    alone on the scoring engines) also hashes the scores it fills, so its
    rows and per-cluster sums never stand in for a fuller request's. The
    hashed JSON must not change otherwise, or existing caches stop resuming.
    """
    key = [spec.name, _fingerprint(log), [dataclasses.astuple(s) for s in segments], prepared.embedder,
           boot and [metric, boot]]
    filled = spec.filled(metric_list(metric))
    if filled != spec.score_names():
        key.append(list(filled))
    if spec.version:
        key.append(spec.version)
    return hashlib.sha256(json.dumps(key, default=str).encode()).hexdigest()[:20]


def _result_rows(run: _SweepRun, chunk: ChunkScores, params_list, cids) -> tuple[pd.DataFrame, dict]:
    """One scored chunk as result rows (:func:`~thatchlab.sweep._columns.result_frame`), Arrow-typed.

    Also returns the chunk's per-cluster sums, ``{config_id: {(metric, segment): (num, den)}}``,
    taken out of the engine's score dicts (they are no result column).
    """
    sums = {}
    rows = []
    for i, row in zip(chunk.indices, chunk.rows):
        if CLUSTERS_KEY in row:
            row = dict(row)
            sums[cids[i]] = row.pop(CLUSTERS_KEY)
        rows.append(row)
    chunk = ChunkScores(chunk.indices, rows)
    n = len(chunk.indices)
    meta = {"engine": [run.spec.name] * n, "config_id": [cids[i] for i in chunk.indices],
            "sweep_id": [run.sweep_id] * n, "embedder": [run.prepared.embedder] * n,
            "estimator": [row.get("estimator", run.prepared.estimator) for row in chunk.rows]}
    frame = result_frame([params_list[i].to_dict() for i in chunk.indices], chunk.rows, meta,
                         spec=run.spec, segments=run.segments, intervals=run.intervals)
    return typed(frame), sums


def sweep(log, space: dict, metric, *, engine="prediction", search: str = "grid", n_trials=None,
          holdout=0.2, n_jobs=1, backend: str = "loky", client=None, seed: int = 0, cache=None,
          intervals=False, base=None, embedder=None, chunk_size=None) -> pd.DataFrame:
    """Score many parameter settings of an engine out of sample on one log.

    The log is sorted by time (stable) and replayed once per configuration, each scored on the
    validation and test segments of :func:`holdout_segments`. The engine's ``prepare`` step
    (embeddings, cosines) runs once; configurations run in chunks on ``n_jobs`` loky processes or
    on a Dask ``client``. :mod:`thatchlab.sweep`'s notes list the result's columns and attrs.

    Parameters
    ----------
    log : DataFrame or tuple
        The engine's log (``(events, recalls)`` for anticipation).
    space : dict
        Parameter → list of values (grid, random choice), ``(low, high)`` / ``(low, high, "log")``
        ranges or scipy distributions (random, optuna).
    metric : str or list of str
        The metric to optimise (``get_engine(engine).metrics``), or metrics scored together (the
        first is optimised: Optuna's objective, ``attrs["metric"]``); never changes the columns.
    engine : str or EngineSpec, default="prediction"
        A registered engine name or an :class:`~thatchlab.sweep.registry.EngineSpec`.
    search : {"grid", "random", "optuna"}, default="grid"
        ``"random"``: ``n_trials`` seeded draws; ``"optuna"``: TPE seeded by ``seed``,
        ``n_trials`` trials, validation score as objective.
    n_trials : int, optional
        Draws or trials of random and Optuna search (None for a grid).
    holdout : float or TimeSeriesSplit, default=0.2
        Fraction ``h``, or a scikit-learn ``TimeSeriesSplit``.
    n_jobs, backend, client : int, default=1; {"loky", "dask"}, default="loky"; Client, optional
        ``"loky"`` uses ``n_jobs`` local processes; ``"dask"`` submits chunks to ``client`` (a
        ``distributed.Client``; None: the current one).
    seed : int, default=0
        Seed of random search, Optuna and the bootstrap resamples.
    cache : str or Path, optional
        Parquet path: finished configurations are appended after each chunk and reused by a rerun
        of the same sweep (same log, holdout, engine and scores filled: a row scored on forecast
        metrics alone never stands in for a regime request).
    intervals : bool or int, default=False
        ``True`` (200 resamples) or a number of resamples: adds ``<segment>_<m>_lo/_hi`` (95 %
        percentile intervals) for every engine metric, filled for the requested ones (NaN for the
        others). Each segment's clusters (sessions for interaction logs) are drawn with
        replacement once from ``seed``: every row is rescored on the *same* resamples (paired).
    base : params, optional
        Parameters of the fields not in ``space`` (engine defaults when None).
    embedder : Embedder, optional
        Embedder of the prediction/behavior engines.
    chunk_size : int, optional
        Configurations per task (default: about four tasks per worker, at most 64).

    Returns
    -------
    DataFrame
        One row per distinct configuration in proposal order, columns in
        :class:`~thatchlab.sweep._columns.ColumnOrder`; ``attrs`` describe the sweep
        (:class:`~thatchlab.sweep.SweepDescription`, ``frame.sweep``).

    Raises
    ------
    InputError
        When the engine, search, backend, metric, base, space or ``n_trials`` cannot be used.

    See Also
    --------
    best : The configuration with the best validation score.

    Examples
    --------
    >>> from thatchlab.synth import BeliefWorld
    >>> log = BeliefWorld(seed=0).log(n_memories=30, days=60)
    >>> sweep(log, {"episodic": [3.0, 7.0]}, "brier", engine="belief")[["episodic", "test_brier"]].shape
    (2, 2)
    """
    spec, metrics = _check_request(engine, search, backend, metric)
    client = _dask_client(backend, client)
    base, params_list = _proposals(spec, space, base, search, n_trials, seed)
    run = _start(spec, log, base, params_list, metrics, holdout, intervals, seed, embedder,
                 dict(n_jobs=n_jobs, backend=backend, client=client), cache, chunk_size)
    frame = _evaluate_all(run, params_list) if params_list is not None else _optuna(run, space, base, n_trials, seed)
    return _describe_result(run, frame, holdout)


def _check_request(engine, search, backend, metric) -> tuple:
    """The engine spec and the distinct metrics asked (the optimised one first), checked."""
    spec = get_engine(engine)
    if search not in _SEARCHES:
        raise InputError(f"search: expected one of {list(_SEARCHES)}, got {search!r}")
    if backend not in _BACKENDS:
        raise InputError(f"backend: expected one of {list(_BACKENDS)}, got {backend!r}")
    metrics = metric_list(metric)
    if not metrics:
        raise InputError("metric: expected a metric name or a non-empty list of them")
    for m in metrics:
        if m not in spec.metrics:
            raise InputError(f"metric: expected one of {sorted(spec.metrics)} for engine {spec.name!r}, "
                             f"got {m!r}")
    return spec, tuple(dict.fromkeys(metrics))


def _dask_client(backend, client):
    """The Dask client of ``backend="dask"`` (the current one when none is given)."""
    if backend == "dask" and client is None:
        try:
            from distributed import get_client  # optional extra: the dask backend only

            client = get_client()
        except (ImportError, ValueError):
            raise InputError("backend='dask': pass client=distributed.Client(...)") from None
    return client


def _proposals(spec, space, base, search, n_trials, seed) -> tuple:
    """``(base, params_list)``: the checked base parameters and the configurations to score (None
    for Optuna, which proposes as it goes)."""
    base = spec.params_class() if base is None else base
    if not isinstance(base, spec.params_class):
        raise InputError(f"base: expected {spec.params_class.__name__}, got {type(base).__name__}")
    check_space(space, spec.params_class)
    if search == "grid":
        if n_trials is not None:
            raise InputError("n_trials: a grid evaluates every combination; leave n_trials=None")
        return base, [base.replace(**cfg) for cfg in grid_configs(space)]
    if search == "random":
        return base, [base.replace(**cfg) for cfg in random_configs(space, n_trials, seed)]
    if n_trials is None or int(n_trials) < 1:
        raise InputError(f"n_trials: expected a positive number of Optuna trials, got {n_trials!r}")
    return base, None


def _start(spec, log, base, params_list, metrics, holdout, intervals, seed, embedder, workers, cache,
           chunk_size) -> _SweepRun:
    """Prepare the log once, cut its segments and set up the runner and the cache of this sweep."""
    # what the engine and the cache key see: a str for one metric (as before), a tuple for several
    asked = metrics[0] if len(metrics) == 1 else metrics
    boot = _bootstrap(intervals, seed)
    prepared = spec.prepare(log, base, embedder=embedder, params_list=params_list)
    segments = holdout_segments(prepared.times, holdout)
    sweep_id = _sweep_id(spec, log, segments, prepared, asked if isinstance(asked, str) else list(asked), boot)
    return _SweepRun(spec, prepared, segments, metrics[0], sweep_id,
                     runner=Runner(spec, prepared, segments, asked, boot, **workers),
                     store=Cache(cache, sweep_id), chunk_size=chunk_size, asked=metrics,
                     intervals=boot is not None)


def _describe_result(run: _SweepRun, frame: pd.DataFrame, holdout) -> pd.DataFrame:
    """Record what the frame is in its attrs (engine, metrics, split, per-cluster sums, which
    parameters each metric sees), keep its :class:`~thatchlab.sweep.SweepDescription`, and warn
    about the swept parameters no metric asked can see."""
    spec, metrics = run.spec, run.asked
    primary = metrics[0]
    frame.attrs.update(engine=spec.name, metric=primary, metrics=list(metrics), holdout=repr(holdout))
    stats = _cluster_stats(run, frame)
    if stats is not None:
        frame.attrs["clusters"] = stats
        if getattr(run.prepared, "cluster_parents", None):
            frame.attrs["cluster_parents"] = run.prepared.cluster_parents
    idents = {m: identification(frame, m, spec) for m in metrics}
    by_metric = {m: i["unidentified"] for m, i in idents.items()}
    blind = [p for p in by_metric[primary] if all(p in by_metric[m] for m in metrics)]
    frame.attrs.update(unidentified=blind, identification=by_metric)
    keep_description(frame, idents)
    _warn_unidentified(blind, idents, metrics)
    return frame


def _warn_unidentified(blind, idents, metrics) -> None:
    """Name the swept parameters none of ``metrics`` can see: those that change the metrics' rows
    (the denominator), then those the probe found the scores blind to."""
    counts = [p for p in blind if all(p in idents[m]["denominator"] for m in metrics)]
    if counts:
        warn(f"sweep: {', '.join(counts)} {'changes' if len(counts) == 1 else 'change'} which rows "
             f"{' and '.join(metrics)} count{'s' if len(metrics) == 1 else ''} (the denominator), so "
             "scores under different values cannot be compared; not identified and will not be tuned",
             UserWarning)
    unseen = [p for p in blind if p not in counts]
    if unseen:
        warn(f"sweep: {' and '.join(metrics)} cannot see {', '.join(unseen)} on this data "
                      f"(changing {'it' if len(unseen) == 1 else 'them'} alone never changes the "
                      f"validation or test score); {'it is' if len(unseen) == 1 else 'they are'} "
                      "not identified and will not be tuned", UserWarning)


def _cluster_stats(run: _SweepRun, frame: pd.DataFrame) -> ClusterStats | None:
    """The sweep's per-cluster sums in result-row order (None when the engine has no clusters)."""
    prep = run.prepared
    if prep.clusters is None or not len(frame):
        return None
    cached = run.store.clusters()
    parts = {}
    for cid in frame["config_id"]:
        part = run.clusters.get(cid, cached.get(cid))
        if part is not None:
            parts[cid] = part
    if not parts:
        return None
    labels = {seg.name: np.asarray(prep.cluster_labels)[segment_clusters(prep, seg)] for seg in run.segments}
    return ClusterStats.merge(parts, prep.cluster_unit, labels)


def _legacy_reusable(run: _SweepRun, rows: pd.DataFrame) -> np.ndarray:
    """Which cached rows written without a record of their scores can serve this request.

    A row qualifies when the cache has every column the request fills, the
    row holds a value (in some segment) for every score the request fills,
    and none for the scores it does not (the scoring engines' rows scored on
    forecasts alone, under the same sweep id, hold no regime score).
    """
    segments, metrics = run.segments, tuple(run.spec.metrics)
    filled = run.filled
    bounds = [m for m in run.asked if m in filled] if run.intervals else []
    need = [c for cols in score_columns(segments, filled, metrics, bounds).values() for c in cols]
    if not set(need) <= set(rows.columns):
        return np.zeros(len(rows), dtype=bool)
    names = score_segments(segments)

    def has_value(score):
        cols = [f"{seg}_{score}" for seg in names if f"{seg}_{score}" in rows.columns]
        return rows[cols].notna().any(axis=1).to_numpy() if cols else np.zeros(len(rows), dtype=bool)

    ok = np.ones(len(rows), dtype=bool)
    for score in run.spec.score_names():
        ok &= has_value(score) if score in filled else ~has_value(score)
    return ok


def _reusable(run: _SweepRun, done: pd.DataFrame) -> pd.DataFrame:
    """The cached rows of this sweep that serve this request, in the result's columns.

    Rows record the scores their request filled (the cache's
    :data:`~thatchlab.sweep._runner.SCORED_COLUMN`); rows of an older cache
    without that record go through :func:`_legacy_reusable`.
    """
    if not len(done):
        return done
    marks = done[SCORED_COLUMN] if SCORED_COLUMN in done.columns else pd.Series(None, index=done.index,
                                                                                 dtype=object)
    marked = marks.notna().to_numpy()
    ok = marked & (marks == run.scored).to_numpy()
    if not marked.all():
        ok |= ~marked & _legacy_reusable(run, done)
    rows = done[ok]
    order = ColumnOrder.of(run.spec, run.segments, run.intervals,
                           [c for c in rows.columns if c != SCORED_COLUMN and rows[c].notna().any()])
    return rows.reindex(columns=order.columns)


def _evaluate_all(run: _SweepRun, params_list) -> pd.DataFrame:
    """Score the distinct configurations of ``params_list`` not cached yet; rows in proposal order."""
    cids = [config_id(run.spec.name, p) for p in params_list]
    order = list(dict.fromkeys(cids))  # distinct configurations, first proposal first
    first = {cid: i for i, cid in reversed(list(enumerate(cids)))}
    done = _reusable(run, run.store.done())
    have = set(done["config_id"]) if len(done) else set()
    todo = [Proposal(first[c], params_list[first[c]]) for c in order if c not in have]
    size = run.chunk_size or max(1, min(64, math.ceil(len(todo) / (4 * run.runner.workers())) if todo else 1))
    chunks = chunked(todo, int(size))
    frames = [done] if len(done) else []
    bar = progress(total=len(chunks), desc=f"sweep {run.spec.name}")
    try:
        for scored in run.runner.run(chunks):
            part, sums = _result_rows(run, scored, params_list, cids)
            run.clusters.update(sums)
            run.store.add(part, sums, scored=run.scored)
            frames.append(part)
            bar.update(1)
    finally:
        bar.close()
    if not frames:
        return pd.DataFrame(columns=run.columns.columns)
    allrows = pd.concat(frames, ignore_index=True).drop_duplicates("config_id", keep="first")
    out = allrows.set_index("config_id").loc[order].reset_index()
    columns = ColumnOrder.of(run.spec, run.segments, run.intervals, list(allrows.columns)).columns
    return out.reindex(columns=columns).reset_index(drop=True)


def _optuna(run: _SweepRun, space, base, n_trials, seed) -> pd.DataFrame:
    """TPE search: ask a batch of trials (one per worker), score them, tell their validation scores."""
    import optuna  # optional extra: Optuna only for search="optuna"

    n_trials = int(n_trials)
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    direction = "minimize" if run.spec.metrics[run.metric] == "min" else "maximize"
    study = optuna.create_study(direction=direction, sampler=optuna.samplers.TPESampler(seed=seed))
    batch = max(1, run.runner.workers())
    run = dataclasses.replace(run, chunk_size=run.chunk_size or 1)
    frames, proposed = [], []
    while len(proposed) < n_trials:
        trials = [study.ask() for _ in range(min(batch, n_trials - len(proposed)))]
        params_list = [base.replace(**optuna_suggest(t, space)) for t in trials]
        part = _evaluate_all(run, params_list)
        by_id = part.set_index("config_id")
        for trial, params in zip(trials, params_list):
            value = by_id.loc[config_id(run.spec.name, params), f"val_{run.metric}"]
            value = float(value.iloc[0]) if isinstance(value, pd.Series) else float(value)
            if np.isfinite(value):
                study.tell(trial, value)
            else:
                study.tell(trial, state=optuna.trial.TrialState.FAIL)
        proposed.extend(params_list)
        frames.append(part)
    out = pd.concat(frames, ignore_index=True).drop_duplicates("config_id", keep="first")
    return out.reset_index(drop=True)
