"""The columns of a sweep result and their order: parameters, scores segment by segment, bookkeeping.

The columns are fixed by the engine, the split and whether intervals are
asked for, never by the metrics optimised: every score the engine declares
(:meth:`~thatchlab.sweep.registry.EngineSpec.score_names`) gets a column in
every scored segment, in the engine's order, and a score the engine did not
report for a configuration is NaN. Engines report one dict of
``<segment>_<score>`` values per configuration; :func:`result_frame` turns a
chunk of them into result rows. Under a ``TimeSeriesSplit`` it adds
``val_<m>``, each metric's mean over the validation folds, beside every
fold's own columns. The order is declared by :class:`ColumnOrder`, so fresh
and cached rows, local and Dask runs, and sweeps on different metrics
always line up.
"""

from __future__ import annotations

from dataclasses import dataclass, fields

import numpy as np
import pandas as pd

__all__ = ["META_COLUMNS", "ColumnOrder", "score_segments", "fold_names", "fold_means", "score_columns",
           "result_frame"]

#: The bookkeeping columns after the scores, in this order.
META_COLUMNS = ("engine", "config_id", "sweep_id", "embedder", "estimator")

_BOUNDS = ("lo", "hi")


def score_segments(segments) -> tuple[str, ...]:
    """Names of the scored segments in result-column order: ``val``, the validation folds, ``test``.

    Under a ``TimeSeriesSplit`` there is no ``val`` segment; its columns hold
    the mean over the folds ``val0``, ``val1``...

    >>> from thatchlab.sweep.registry import Segment
    >>> score_segments([Segment("val", 6, 8, 6, 8), Segment("test", 8, 10, 8, None)])
    ('val', 'test')
    >>> score_segments([Segment("val0", 3, 6, 3, 6), Segment("val1", 6, 9, 6, 9), Segment("test", 9, 12, 9, None)])
    ('val', 'val0', 'val1', 'test')
    """
    return tuple(dict.fromkeys(["val", *(s.name for s in segments if s.name != "test"), "test"]))


def fold_names(segments) -> list[str]:
    """The validation folds of a ``TimeSeriesSplit`` (none for a holdout fraction)."""
    return [s.name for s in segments if s.name.startswith("val") and s.name != "val"]


def _segment_of(column: str, names) -> str | None:
    """The segment a ``<segment>_<score>`` column belongs to (None for any other column)."""
    head, sep, _ = column.partition("_")
    return head if sep and head in names else None


def score_columns(segments, scores, metrics, bounds=()) -> dict[str, list[str]]:
    """The ``<segment>_<score>`` columns of each scored segment, in result-column order.

    Every segment the engine scores (the holdout's ``val``, or each fold,
    and ``test``) gets ``scores`` in their order, then ``<m>_lo`` and
    ``<m>_hi`` for each metric of ``bounds``. The ``val`` columns of a
    ``TimeSeriesSplit`` are the fold means of ``metrics`` (``metrics`` are
    the scores that have a mean).

    >>> from thatchlab.sweep.registry import Segment
    >>> folds = [Segment("val0", 3, 6, 3, 6), Segment("val1", 6, 9, 6, 9), Segment("test", 9, 12, 9, None)]
    >>> score_columns(folds, ["auc", "n"], ["auc"])  # doctest: +NORMALIZE_WHITESPACE
    {'val': ['val_auc'], 'val0': ['val0_auc', 'val0_n'], 'val1': ['val1_auc', 'val1_n'],
     'test': ['test_auc', 'test_n']}
    """
    means = bool(fold_names(segments))
    out = {}
    for name in score_segments(segments):
        if means and name == "val":
            out[name] = [f"val_{m}" for m in scores if m in set(metrics)]
        else:
            out[name] = ([f"{name}_{s}" for s in scores]
                         + [f"{name}_{m}_{end}" for m in bounds for end in _BOUNDS])
    return out


@dataclass(frozen=True)
class ColumnOrder:
    """The column order of a sweep result: parameters, then scores, then bookkeeping.

    Attributes
    ----------
    params : tuple of str
        Every field of the engine's parameter dataclass, in field order.
    scores : tuple of str
        The ``<segment>_<score>`` columns, segment by segment in
        :func:`score_segments` order (:func:`score_columns`). Within a
        segment: every score of the engine in its
        :meth:`~thatchlab.sweep.registry.EngineSpec.score_names` order (the
        metrics as registered, then counts such as ``val_n_labelled``), then,
        with intervals, ``<segment>_<metric>_lo``/``_hi`` for every metric.
        Which metrics are optimised never changes them.
    meta : tuple of str
        Columns an engine reported that it does not declare and that belong
        to no segment (none for the built-in engines), then
        :data:`META_COLUMNS` in that order.

    Examples
    --------
    >>> from thatchlab.sweep.registry import get_engine, Segment
    >>> segments = [Segment("val", 6, 8, 6, 8), Segment("test", 8, 10, 8, None)]
    >>> order = ColumnOrder.of(get_engine("belief"), segments)
    >>> order.scores  # doctest: +NORMALIZE_WHITESPACE
    ('val_auc', 'val_brier', 'val_useful_now_precision', 'val_useful_now_recall', 'val_n_labelled',
     'test_auc', 'test_brier', 'test_useful_now_precision', 'test_useful_now_recall', 'test_n_labelled')
    >>> order.meta
    ('engine', 'config_id', 'sweep_id', 'embedder', 'estimator')
    """

    params: tuple
    scores: tuple
    meta: tuple

    @classmethod
    def of(cls, spec, segments, intervals: bool = False, reported=()) -> ColumnOrder:
        """The columns of a sweep of ``spec`` on ``segments``.

        Parameters
        ----------
        spec : EngineSpec
            The engine: its parameter fields, metrics and extra scores.
        segments : list of Segment
            The sweep's segments.
        intervals : bool
            Whether the sweep asks for bootstrap intervals.
        reported : sequence of str
            Columns seen in the rows (the engine's reports, cached rows); those
            the engine does not declare follow the declared ones of their
            segment, in the order seen, so nothing an engine reports is dropped.
        """
        params = tuple(f.name for f in fields(spec.params_class))
        metrics = tuple(spec.metrics)
        by_segment = score_columns(segments, spec.score_names(), metrics, metrics if intervals else ())
        declared = {c for columns in by_segment.values() for c in columns}
        unsegmented = []
        for column in reported:
            if column in params or column in declared or column in META_COLUMNS:
                continue
            name = _segment_of(column, by_segment)
            if name is None:
                unsegmented.append(column)
            elif column not in by_segment[name]:
                by_segment[name].append(column)
        scores = tuple(c for columns in by_segment.values() for c in columns)
        meta = tuple(dict.fromkeys(unsegmented)) + META_COLUMNS
        return cls(params, scores, meta)

    @property
    def columns(self) -> list[str]:
        """Every column, in order."""
        return [*self.params, *self.scores, *self.meta]


def fold_means(scores: list[dict], folds, metrics) -> dict[str, list[float]]:
    """``val_<m>`` for every metric ``m``: the mean of its finite fold scores, NaN when none.

    A metric scored in every fold of every row is averaged for all rows at
    once; otherwise rows are grouped by which folds have a finite score, so
    each mean is still the ``numpy.mean`` of exactly those scores.

    >>> rows = [{"val0_auc": 0.6, "val1_auc": 0.8}, {"val1_auc": 0.7}, {"val0_auc": None}]
    >>> [round(v, 6) for v in fold_means(rows, ["val0", "val1"], ["auc", "brier"])["val_auc"]]
    [0.7, 0.7, nan]
    """
    metrics = list(metrics)
    vals = np.array([[[row.get(f"{f}_{m}", np.nan) for f in folds] for m in metrics] for row in scores],
                    dtype=np.float64).reshape(len(scores), len(metrics), len(folds))
    finite = np.isfinite(vals)
    means = np.full(vals.shape[:2], np.nan)
    everywhere = finite.all(axis=(0, 2))
    means[:, everywhere] = np.mean(vals[:, everywhere], axis=2)
    for j in np.flatnonzero(~everywhere & finite.any(axis=(0, 2))):
        patterns, group = np.unique(finite[:, j], axis=0, return_inverse=True)
        for g, keep in enumerate(patterns):
            if keep.any():
                rows = group.reshape(-1) == g
                means[rows, j] = np.mean(np.ascontiguousarray(vals[rows, j][:, keep]), axis=1)
    return {f"val_{m}": means[:, j].tolist() for j, m in enumerate(metrics)}


def result_frame(params: list[dict], scores: list[dict], meta: dict, *, spec, segments,
                 intervals: bool = False) -> pd.DataFrame:
    """Result rows of one scored chunk, in :class:`ColumnOrder`.

    Parameters
    ----------
    params : list of dict
        One dict of parameter field → value per configuration.
    scores : list of dict
        The engine's reported ``<segment>_<score>`` dict of each configuration.
    meta : dict
        :data:`META_COLUMNS` name → one value per configuration.
    spec : EngineSpec
        The engine (its parameters, metrics and extra scores fix the columns).
    segments : list of Segment
        The sweep's segments.
    intervals : bool
        Whether the sweep asks for bootstrap intervals.

    Returns
    -------
    DataFrame
        One row per configuration, every column of :meth:`ColumnOrder.of`;
        a score the engine did not report is NaN.
    """
    reported = list(dict.fromkeys(c for row in scores for c in row))
    folds = fold_names(segments)
    extra = dict(meta)
    if folds:  # the fold means beside every fold's own columns
        extra = {**fold_means(scores, folds, spec.metrics), **extra}
    order = ColumnOrder.of(spec, segments, intervals, reported)
    records = [{**p, **s, **{c: v[j] for c, v in extra.items()}} for j, (p, s) in enumerate(zip(params, scores))]
    return pd.DataFrame(records, columns=order.columns)
