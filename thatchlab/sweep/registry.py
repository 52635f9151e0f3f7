"""The sweep's engine registry: what :func:`thatchlab.sweep.sweep` needs from an engine.

An engine enters a sweep through an :class:`EngineSpec`: its parameter
dataclass, a ``prepare`` step done once per sweep (validation, time sort,
embeddings and cosines), an ``evaluate`` step that scores many parameter
settings on the same prepared log, its metric names and their direction.
Engines never register themselves: the registry lives here, in ``thatchlab.sweep``.
:func:`frame_evaluator` builds an ``evaluate`` from per-configuration output
frames; the clustered bootstrap it draws on is :mod:`thatchlab.sweep.resampling`.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from thatchlab.core.errors import InputError
from thatchlab.sweep.resampling import (  # noqa: F401  (re-exports: see below)
    ClusterStats,
    bootstrap_interval,
    cluster_resamples,
    cluster_sums,
    config_seed,
    percentile_interval,
    ratio_resamples,
    segment_clusters,
    segment_stream,
)

# ClusterStats, cluster_resamples, config_seed, percentile_interval and ratio_resamples are
# re-exported, not used: the resampling machinery lived here, and its old import path still works.
__all__ = ["EngineSpec", "Prepared", "Segment", "register_engine", "get_engine", "engines", "metric_list",
           "frame_evaluator", "CLUSTERS_KEY"]

#: Reserved key of an engine's score dict holding its per-cluster sums (popped by the sweep).
CLUSTERS_KEY = "_clusters"


@dataclass(frozen=True)
class Segment:
    """A scored stretch of the time-sorted log.

    Engines whose outputs carry log positions use ``lo``/``hi``; engines whose
    outputs carry only times (anticipation sessions) use ``t_lo``/``t_hi``.

    Parameters
    ----------
    name : str
        ``"val"``, ``"val0"``..., ``"test"``.
    lo, hi : int
        Rows ``[lo, hi)`` of the time-sorted log.
    t_lo : int
        Start in nanoseconds since the epoch (inclusive).
    t_hi : int or None
        End in nanoseconds, exclusive (None: up to the end, inclusive).

    See Also
    --------
    thatchlab.sweep.holdout_segments : The segments of a holdout.

    Examples
    --------
    >>> seg = Segment("test", 2, 4, 20, None)
    >>> seg.mask(position=[1, 2, 3, 4]).tolist(), seg.mask(time_ns=[10, 20, 99]).tolist()
    ([False, True, True, False], [False, True, True])
    """

    name: str
    lo: int
    hi: int
    t_lo: int
    t_hi: int | None

    def mask(self, position=None, time_ns=None) -> np.ndarray:
        """Boolean mask of the rows inside (by ``position`` if given, else by ``time_ns``).

        Parameters
        ----------
        position : array-like of int, optional
            Log positions of the rows.
        time_ns : array-like of int, optional
            Times of the rows (used when ``position`` is None).

        Returns
        -------
        ndarray of bool
            True for the rows inside.
        """
        if position is not None:
            pos = np.asarray(position, dtype=np.int64)
            return (pos >= self.lo) & (pos < self.hi)
        t = np.asarray(time_ns, dtype=np.int64)
        inside = t >= self.t_lo
        if self.t_hi is not None:
            inside &= t < self.t_hi
        return inside


@dataclass
class Prepared:
    """The once-per-sweep work on a log, shipped to every worker.

    Parameters
    ----------
    data : object
        Engine-specific (it must be picklable and must not hold an embedding model).
    times : ndarray of int64
        The time-sorted log's timestamps (ns, position order).
    embedder : str, optional
        Names the embedding model (or None).
    estimator : str, default=""
        How the metrics are estimated.
    clusters : ndarray of int64, optional
        The resampling unit of every log position: an int code per position (``-1``: none), so
        that every configuration's scores decompose into sums over the same clusters.
    cluster_labels : ndarray, optional
        ``cluster_labels[code]``: each code's label.
    cluster_unit : str, optional
        The clusters' name (``"session"``).
    cluster_parents : dict, optional
        A coarser level → each cluster label's parent (``{"user": {session: user}}`` when the log
        names users): sums over users are the sums of their sessions, so a decision can resample
        the level at which rows depend.

    See Also
    --------
    EngineSpec : The engine whose ``prepare`` returns it.

    Examples
    --------
    >>> import numpy as np
    >>> Prepared(None, np.array([0, 1], dtype=np.int64), cluster_unit="session").cluster_unit
    'session'
    """

    data: Any
    times: np.ndarray
    embedder: str | None = None
    estimator: str = ""
    clusters: np.ndarray | None = None
    cluster_labels: np.ndarray | None = None
    cluster_unit: str | None = None
    cluster_parents: dict | None = None


@dataclass(frozen=True)
class EngineSpec:
    """How the sweep drives one engine.

    ``metric`` passed to ``evaluate`` is a str, or a tuple of str when a
    sweep scores several metrics (the first is the optimised one).

    Parameters
    ----------
    name : str
        Registry key (``"prediction"``, ``"belief"``...).
    params_class : type
        The frozen parameter dataclass (a ``ParamsBase``).
    prepare : callable
        ``prepare(log, base_params, embedder=None, params_list=None) -> Prepared``
        (``params_list``: the proposed configurations when known in advance).
    evaluate : callable
        ``evaluate(prepared, params_list, segments, metric, boot) -> list[dict]``,
        one dict per params with ``"<segment>_<metric>"`` keys (and
        ``"<segment>_<metric>_lo"``/``"_hi"`` for ``metric`` when ``boot``
        is a dict ``{"n": ..., "alpha": ..., "seed": ...}``).
    metrics : dict
        Metric name → ``"min"`` or ``"max"`` (the better direction).
    estimator : str, default=""
        How the metrics are estimated (recorded in every result row).
    sensitivity : dict
        Metric name → the parameter fields that can move it (a metric not listed may be moved by
        any field). A swept field outside its metric's set is *unidentified* by that metric.
    denominators : dict
        Metric name → the parameter fields that change which rows the metric counts
        (``min_prompt_chars`` decides which messages are live in ``interruption_rate``). Scores
        under two values of such a field are rates over different rows, so the field is
        *unidentified* by that metric whatever the scores do: it is never shipped on it.
    ratio_metrics : tuple of str, default=()
        The metrics the engine also reports as per-cluster sums (``m = Σ_c num_c / Σ_c den_c``)
        under the reserved score key :data:`CLUSTERS_KEY` ``{(metric, segment): (num, den)}``,
        over the clusters of :func:`~thatchlab.sweep.resampling.segment_clusters`; only these
        support paired cluster bootstraps (``thatchlab.decide.decide``).
    extra_scores : tuple of str, default=()
        The per-segment scores the engine reports besides its metrics (counts such as
        ``n_labelled``, rates such as ``consumption_rate``). With the metrics they fix the columns
        of a sweep result (:meth:`score_names`), whichever metrics are optimised.
    fills : callable, optional
        ``fills(metrics) -> tuple`` of the scores (of :meth:`score_names`) that ``evaluate``
        reports when asked for ``metrics`` (a tuple); None: every score, whatever is asked. An
        engine that skips work for some requests (the scoring engines score forecasts alone when
        only forecast metrics are asked) declares it here: the sweep's other score columns are NaN,
        and cached rows are reused only by requests that fill the same scores.
    version : str, default=""
        The definition of the engine's scores; a sweep's cache key hashes it when set, so rows
        scored under an older definition are never reused.

    See Also
    --------
    register_engine : Add a spec to the registry.
    get_engine : A registered spec.

    Examples
    --------
    >>> spec = get_engine("belief")
    >>> spec.metrics["brier"], spec.ratio_metrics, spec.score_names()[-1]
    ('min', ('brier',), 'n_labelled')
    """

    name: str
    params_class: type
    prepare: Callable
    evaluate: Callable
    metrics: dict = field(default_factory=dict)
    estimator: str = ""
    sensitivity: dict = field(default_factory=dict)
    denominators: dict = field(default_factory=dict)
    ratio_metrics: tuple = ()
    extra_scores: tuple = ()
    fills: Callable | None = None
    version: str = ""

    def score_names(self) -> tuple:
        """Every per-segment score in result-column order.

        Returns
        -------
        tuple of str
            The metrics as registered, then :attr:`extra_scores`.
        """
        return tuple(dict.fromkeys([*self.metrics, *self.extra_scores]))

    def filled(self, metrics) -> tuple:
        """The scores ``evaluate`` reports when asked for ``metrics``.

        Parameters
        ----------
        metrics : str or sequence of str
            The metrics asked.

        Returns
        -------
        tuple of str
            In :meth:`score_names` order.
        """
        names = self.score_names()
        if self.fills is None:
            return names
        got = set(self.fills(metric_list(metrics)))
        return tuple(n for n in names if n in got)

    def moves(self, metric: str) -> tuple:
        """The parameter fields that can move ``metric`` (every field when not declared).

        Parameters
        ----------
        metric : str
            A metric.

        Returns
        -------
        tuple of str
            Field names, in the params class's order.
        """
        fields = tuple(f.name for f in dataclasses.fields(self.params_class))
        declared = self.sensitivity.get(metric)
        return fields if declared is None else tuple(f for f in fields if f in declared)


_REGISTRY: dict[str, EngineSpec | Callable[[], EngineSpec]] = {}


def register_engine(spec: EngineSpec | Callable[[], EngineSpec], name: str | None = None,
                    replace: bool = False) -> None:
    """Add an engine to the sweep registry.

    Parameters
    ----------
    spec : EngineSpec or callable
        A spec, or a zero-argument factory returning one (loaded on first use).
    name : str, optional
        The registry key (default: the spec's ``name``; required for a factory).
    replace : bool, default=False
        Replace an engine registered under the same name.

    Raises
    ------
    InputError
        When a factory has no name, or the name is taken and ``replace`` is False.

    See Also
    --------
    get_engine : Read a registered engine back.

    Examples
    --------
    >>> spec = get_engine("belief")
    >>> register_engine(spec, replace=True)  # the same spec again: a name is registered once
    >>> get_engine("belief") is spec
    True
    """
    key = name or getattr(spec, "name", None)
    if not key:
        raise InputError("register_engine: expected a name for a spec factory")
    if key in _REGISTRY and not replace:
        raise InputError(f"register_engine: engine {key!r} is already registered (pass replace=True)")
    _REGISTRY[key] = spec


def get_engine(engine: str | EngineSpec) -> EngineSpec:
    """The :class:`EngineSpec` registered as ``engine`` (a spec passes through).

    Parameters
    ----------
    engine : str or EngineSpec
        A registered name, or a spec.

    Returns
    -------
    EngineSpec
        The spec (a factory is called once and replaced by its spec).

    Raises
    ------
    InputError
        When no engine has that name.

    See Also
    --------
    engines : The registered names.

    Examples
    --------
    >>> get_engine("prediction").metrics["log_loss"]
    'min'
    """
    if isinstance(engine, EngineSpec):
        return engine
    if engine not in _REGISTRY:
        raise InputError(f"engine: expected one of {sorted(_REGISTRY)}, got {engine!r}")
    spec = _REGISTRY[engine]
    if not isinstance(spec, EngineSpec):
        spec = spec()
        _REGISTRY[engine] = spec
    return spec


def engines() -> list[str]:
    """Names of the registered engines.

    Returns
    -------
    list of str
        Sorted.

    See Also
    --------
    get_engine : One engine's spec.

    Examples
    --------
    >>> {"prediction", "belief", "calibration", "anticipation", "behavior"} <= set(engines())
    True
    """
    return sorted(_REGISTRY)


def metric_list(metric) -> tuple:
    """``metric`` as a tuple of names (a str is one metric; the first is the optimised one).

    Parameters
    ----------
    metric : str or sequence of str
        One metric or several.

    Returns
    -------
    tuple of str
        The names.

    Examples
    --------
    >>> metric_list("brier"), metric_list(["log_loss", "ece"])
    (('brier',), ('log_loss', 'ece'))
    """
    return (metric,) if isinstance(metric, str) else tuple(metric)


def frame_evaluator(outputs: Callable, score: Callable, where: str = "position",
                    cluster: str | None = None, ratios: Callable | None = None) -> Callable:
    """Build an ``evaluate`` from per-configuration output frames and a frame scorer.

    Each segment is scored on its rows; the optional bootstrap (every requested
    metric) resamples the clusters of column ``cluster`` (rows when None) with
    the same resamples for every configuration (seeded by the sweep seed and the
    segment, never by the configuration).

    Parameters
    ----------
    outputs : callable
        ``outputs(prepared, params_list)`` yields one frame per configuration whose rows are the
        scored units (reads, recalls, sessions, forecasts), with a ``position`` column (row of the
        time-sorted log) or, with ``where="time"``, a ``time_ns`` column.
    score : callable
        ``score(frame, prepared, params)`` returns the metric dict of any subset of rows.
    where : {"position", "time"}, default="position"
        Which column places a row in a segment.
    cluster : str, optional
        The bootstrap's cluster column (None: rows).
    ratios : callable, optional
        ``ratios(frame) -> {metric: (num, den)}`` (row-aligned arrays; the metric is
        ``Σ num / Σ den`` over the rows) makes those metrics ratio metrics: with
        ``prepared.clusters`` set, each segment's per-cluster sums go under :data:`CLUSTERS_KEY`,
        the clusters being those of the rows' ``position`` (``where="position"`` only), so
        :func:`~thatchlab.decide.decide` can pair configurations.

    Returns
    -------
    callable
        ``evaluate(prepared, params_list, segments, metric=None, boot=None) -> list[dict]``.
    """

    def evaluate(prepared: Prepared, params_list, segments, metric=None, boot=None):
        rows = []
        wanted = metric_list(metric) if metric is not None else ()
        sums = ratios is not None and prepared.clusters is not None and where == "position"
        universes = {seg.name: segment_clusters(prepared, seg) for seg in segments} if sums else {}
        for params, frame in zip(params_list, outputs(prepared, params_list)):
            key = frame["position"] if where == "position" else None
            times = frame["time_ns"] if where == "time" else None
            row = {CLUSTERS_KEY: {}} if sums else {}
            for seg in segments:
                part = frame[seg.mask(key, times)]
                scores = score(part, prepared, params)
                row.update({f"{seg.name}_{k}": v for k, v in scores.items()})
                if sums:
                    universe = universes[seg.name]
                    codes = np.searchsorted(universe, np.asarray(prepared.clusters)[
                        part["position"].to_numpy(np.int64)])
                    for m, (num, den) in ratios(part).items():
                        row[CLUSTERS_KEY][(m, seg.name)] = (cluster_sums(codes, len(universe), num),
                                                            cluster_sums(codes, len(universe), den))
                if boot:
                    for m in wanted:
                        lo, hi = bootstrap_interval(
                            part, lambda d, p=params, m=m: score(d, prepared, p)[m], n=boot["n"],
                            alpha=boot["alpha"], seed=boot["seed"], cluster=cluster,
                            stream=segment_stream(seg.name))
                        row[f"{seg.name}_{m}_lo"], row[f"{seg.name}_{m}_hi"] = lo, hi
            rows.append(row)
        return rows

    return evaluate
