"""The columns of a sweep result and their order: parameters, scores segment by segment, bookkeeping.

Engines report one dict of ``<segment>_<score>`` values per configuration;
:func:`result_frame` turns a chunk of them into result rows. Under a
``TimeSeriesSplit`` it adds ``val_<m>``, each metric's mean over the
validation folds, and keeps only the optimised metric's per-fold columns.
The order is declared by :class:`ColumnOrder`, so fresh and cached rows,
local and Dask runs, always line up.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

__all__ = ["META_COLUMNS", "ColumnOrder", "score_segments", "fold_names", "fold_means", "result_frame"]

#: The bookkeeping columns after the scores, in this order.
META_COLUMNS = ("engine", "config_id", "sweep_id", "embedder", "estimator")


def score_segments(segments) -> tuple[str, ...]:
    """Names of the scored segments in result-column order: ``val``, the validation folds, ``test``.

    Under a ``TimeSeriesSplit`` there is no ``val`` segment; its columns hold
    the mean over the folds ``val0``, ``val1``...

    >>> from thatchlab.tune.registry import Segment
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


@dataclass(frozen=True)
class ColumnOrder:
    """The column order of a sweep result: parameters, then scores, then bookkeeping.

    Attributes
    ----------
    params : tuple of str
        Every field of the engine's parameter dataclass, in field order.
    scores : tuple of str
        The ``<segment>_<score>`` columns, segment by segment in
        :func:`score_segments` order. Within a segment the optimised
        metric's column comes first, then the segment's other columns in the
        order the engine reported them (other metrics, counts such as
        ``val_n_labelled``, interval bounds ``val_<metric>_lo``/``_hi``).
    meta : tuple of str
        Columns the engine reported that belong to no segment (the scoring
        engines' per-row ``estimator``), in its order, then the rest of
        :data:`META_COLUMNS` in that order.

    Examples
    --------
    >>> from thatchlab.tune.registry import Segment
    >>> segments = [Segment("val", 6, 8, 6, 8), Segment("test", 8, 10, 8, None)]
    >>> order = ColumnOrder.arrange(["k", "p0"], ["val_log_loss", "val_brier", "test_log_loss",
    ...                                           "test_brier", "estimator"], segments, "brier")
    >>> order.columns  # doctest: +NORMALIZE_WHITESPACE
    ['k', 'p0', 'val_brier', 'val_log_loss', 'test_brier', 'test_log_loss',
     'estimator', 'engine', 'config_id', 'sweep_id', 'embedder']
    """

    params: tuple
    scores: tuple
    meta: tuple

    @classmethod
    def arrange(cls, params, reported, segments, metric: str) -> ColumnOrder:
        """Order the ``reported`` columns of a sweep on ``segments`` optimising ``metric``.

        Parameters
        ----------
        params : sequence of str
            The parameter fields.
        reported : sequence of str
            The columns the engine reported (and the fold means), in their
            order; parameter names among them stay in the parameter block.
        segments : list of Segment
            The sweep's segments.
        metric : str
            The optimised metric.
        """
        names = score_segments(segments)
        by_segment: dict[str, list[str]] = {name: [] for name in names}
        unsegmented = []
        for column in reported:
            if column in params:
                continue
            name = _segment_of(column, names)
            (unsegmented if name is None else by_segment[name]).append(column)
        scores = []
        for name, columns in by_segment.items():
            lead = f"{name}_{metric}"
            scores += [c for c in columns if c == lead] + [c for c in columns if c != lead]
        meta = unsegmented + [c for c in META_COLUMNS if c not in unsegmented]
        return cls(tuple(params), tuple(scores), tuple(meta))

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


def result_frame(params: list[dict], scores: list[dict], meta: dict, *, segments, metric: str,
                 metrics) -> pd.DataFrame:
    """Result rows of one scored chunk, in :class:`ColumnOrder`.

    Parameters
    ----------
    params : list of dict
        One dict of parameter field → value per configuration.
    scores : list of dict
        The engine's reported ``<segment>_<score>`` dict of each configuration.
    meta : dict
        :data:`META_COLUMNS` name → one value per configuration.
    segments : list of Segment
        The sweep's segments.
    metric : str
        The optimised metric.
    metrics : iterable of str
        Every metric of the engine (the fold means are taken over these).

    Returns
    -------
    DataFrame
        One row per configuration; a score an engine did not report is NaN.
    """
    reported = list(dict.fromkeys(c for row in scores for c in row))
    folds = fold_names(segments)
    extra = dict(meta)
    if folds:  # the per-fold columns of the optimised metric only, and the fold means
        of_a_fold, of_the_metric = tuple(f"{f}_" for f in folds), tuple(f"{f}_{metric}" for f in folds)
        reported = [c for c in reported if not c.startswith(of_a_fold) or c.startswith(of_the_metric)]
        means = fold_means(scores, folds, metrics)
        reported += [c for c in means if c not in reported]
        extra = {**means, **extra}
    order = ColumnOrder.arrange(list(dict.fromkeys(c for p in params for c in p)), reported, segments, metric)
    records = [{**p, **s, **{c: v[j] for c, v in extra.items()}} for j, (p, s) in enumerate(zip(params, scores))]
    return pd.DataFrame(records, columns=order.columns)
