"""What a sweep's result frame is, read once: its engine, metrics, clusters, identification, release.

A sweep's rows say which configurations scored what; the rest of what a
decision needs is the frame's *description*: the engine spec, the better
direction of each metric, the per-cluster sums (``attrs["clusters"]``) and the
levels above their unit (``attrs["cluster_parents"]``), which swept parameters
each metric can see, the production release(s) replayed and the split.
:class:`SweepDescription` gathers them from a frame's columns and attrs in one
place, so a reader such as :func:`~thatchlab.decide.decide` asks the frame
once and then works from the description. ``frame.sweep`` (a pandas accessor
registered when :mod:`thatchlab.sweep` is imported) returns it, built on
first use and kept while the frame's columns, length and attrs stay the same.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from types import MappingProxyType

import pandas as pd

from thatchlab.core.docstrings import fill_doc
from thatchlab.sweep.reading import (
    _RELEASE_TAIL,
    identification,
    metric_direction,
    spec_of,
    sweep_release,
)
from thatchlab.sweep.registry import EngineSpec
from thatchlab.sweep.resampling import ClusterStats

__all__ = ["SweepDescription", "describe", "keep_description"]

_SEGMENT = re.compile(r"^(val\d*|test)_")


@dataclass(frozen=True)
class SweepDescription:
    """A sweep result's description: engine, metrics and directions, clusters, identification, release.

    Build it with :func:`describe` (or ``results.sweep``) rather than by hand.

    Parameters
    ----------
    rows : DataFrame
        The sweep's rows (the frame described; not copied).
    spec : EngineSpec
        The engine that scored the rows (``attrs["engine"]``, else the ``engine`` column).
    directions : mapping of str to str
        Every metric the engine registers → ``"min"`` or ``"max"``.
    metrics : tuple of str
        The metrics the sweep asked for (``attrs["metrics"]``; empty for a frame without it).
    clusters : ClusterStats or None
        The per-cluster sums of every ratio metric, configuration and segment (None without them).
    cluster_parents : mapping of str to dict
        Coarser levels the clusters nest in (``{"user": {session: user}}``), empty when none.
    releases : tuple of str
        The distinct production releases the rows replayed, in row order (empty: no ``release``
        column).
    holdout : str or None
        The split the sweep used (``attrs["holdout"]``, its repr).
    segments : tuple of str
        The scored segments with result columns (``val``, ``val0``..., ``test``).
    config_ids : frozenset of str
        The rows' configuration ids (empty without a ``config_id`` column).

    Attributes
    ----------
    engine : str
        The engine's registered name.
    unit : str or None
        The clusters' unit (``"session"``, ``"memory"``), None without sums.

    See Also
    --------
    describe : Build the description of a frame.
    thatchlab.sweep.identification : Which swept parameters a metric can see.

    Examples
    --------
    >>> import numpy as np
    >>> from thatchlab.decide import planted_sweep
    >>> d = describe(planted_sweep(20, 0.0, np.random.default_rng(0)))
    >>> d.engine, d.direction("log_loss"), d.unit
    ('prediction', 'min', 'session')
    """

    rows: pd.DataFrame = field(repr=False)
    spec: EngineSpec
    directions: MappingProxyType
    metrics: tuple = ()
    clusters: ClusterStats | None = field(default=None, repr=False)
    cluster_parents: MappingProxyType = field(default_factory=lambda: MappingProxyType({}), repr=False)
    releases: tuple = ()
    holdout: str | None = None
    segments: tuple = ()
    config_ids: frozenset = field(default_factory=frozenset, repr=False)
    _identified: dict = field(default_factory=dict, init=False, repr=False, compare=False)

    @property
    def engine(self) -> str:
        """The engine's registered name."""
        return self.spec.name

    @property
    def unit(self) -> str | None:
        """The unit of the per-cluster sums (None without them)."""
        return None if self.clusters is None else self.clusters.unit

    def direction(self, metric: str) -> str:
        """The better direction of ``metric``: this engine's, else the one every engine agrees on.

        Parameters
        ----------
        metric : str
            A metric name.

        Returns
        -------
        str
            ``"min"`` or ``"max"``.

        Raises
        ------
        InputError
            When no engine registers ``metric`` with one direction.
        """
        if metric in self.directions:
            return self.directions[metric]
        return metric_direction(metric, self.spec)

    def minimizes(self, metric: str) -> bool:
        """Whether ``metric`` is minimised (its :meth:`direction` is ``"min"``).

        Parameters
        ----------
        metric : str
            A metric name.

        Returns
        -------
        bool
            True when lower is better.
        """
        return self.direction(metric) == "min"

    def identification(self, metric: str) -> dict:
        """:func:`~thatchlab.sweep.identification` of ``metric`` on these rows, computed once.

        Parameters
        ----------
        metric : str
            A metric the engine registers.

        Returns
        -------
        dict
            ``swept``, ``declared``, ``unidentified``, ``denominator`` and ``probed`` (lists of
            field names).
        """
        if metric not in self._identified:
            self._identified[metric] = identification(self.rows, metric, self.spec)
        return self._identified[metric]

    @fill_doc(release_tail=_RELEASE_TAIL)
    def release(self, what: str = "decide") -> str | None:
        """The one release the rows replayed (None when they carry none).

        Parameters
        ----------
        {release_tail}
        """
        if len(self.releases) > 1:
            sweep_release(self.rows, self.spec, what)  # raises, naming each release
        return self.releases[0] if self.releases else None


def describe(results: pd.DataFrame) -> SweepDescription:
    """The description of a sweep's result frame, read from its columns and attrs.

    Works on a frame :func:`~thatchlab.sweep.sweep` returned, one
    :func:`~thatchlab.sweep.load_sweep` read back and hand-built frames that
    carry an engine (``attrs["engine"]`` or an ``engine`` column), such as
    :func:`~thatchlab.decide.planted_sweep`'s.

    Parameters
    ----------
    results : DataFrame
        A sweep result.

    Returns
    -------
    SweepDescription
        Its description; identification is computed per metric on first request.

    Raises
    ------
    InputError
        When the frame names no engine.

    See Also
    --------
    SweepDescription : What the description holds.

    Examples
    --------
    >>> import numpy as np
    >>> from thatchlab.decide import planted_sweep
    >>> d = describe(planted_sweep(20, 0.0, np.random.default_rng(0)))
    >>> d.metrics, d.segments
    (('log_loss',), ('val', 'test'))
    """
    spec = spec_of(results)
    parents = results.attrs.get("cluster_parents") or {}
    releases = (tuple(dict.fromkeys(str(v) for v in results["release"].tolist()))
                if "release" in results.columns else ())
    segments = tuple(dict.fromkeys(m.group(1) for c in map(str, results.columns) if (m := _SEGMENT.match(c))))
    ids = frozenset(results["config_id"]) if "config_id" in results.columns else frozenset()
    holdout = results.attrs.get("holdout")
    return SweepDescription(results, spec, MappingProxyType(dict(spec.metrics)),
                            tuple(results.attrs.get("metrics") or ()), results.attrs.get("clusters"),
                            MappingProxyType(dict(parents)), releases,
                            None if holdout is None else str(holdout), segments, ids)


_CACHED = "_thatchlab_sweep_description"  # where a frame keeps its description (never in attrs)


def _fingerprint(frame: pd.DataFrame) -> tuple:
    """What must stay the same for a kept description to still describe ``frame``."""
    return (tuple(frame.columns), len(frame), tuple((k, id(v)) for k, v in frame.attrs.items()))


def keep_description(frame: pd.DataFrame, identified: dict) -> SweepDescription:
    """Describe a sweep's fresh result once, with the identification the sweep computed, and keep
    the description on the frame for ``frame.sweep``.

    Parameters
    ----------
    frame : DataFrame
        The result, its attrs complete.
    identified : dict
        Metric → :func:`~thatchlab.sweep.identification` of it on ``frame``.

    Returns
    -------
    SweepDescription
        The description kept.
    """
    description = describe(frame)
    description._identified.update(identified)
    object.__setattr__(frame, _CACHED, (_fingerprint(frame), description))
    return description


@pd.api.extensions.register_dataframe_accessor("sweep")
class SweepAccessor:
    """``frame.sweep``: the frame's :class:`SweepDescription`, rebuilt only when the frame changes.

    The description is kept on the frame object itself (not in ``attrs``, which pandas copies into
    every derived frame and :func:`~thatchlab.sweep.save_sweep` writes) with the frame's columns,
    length and the identity of its attrs; a frame whose values are edited in place keeps its
    description: call :func:`describe` for a fresh one.

    Parameters
    ----------
    frame : DataFrame
        The frame the accessor is attached to.
    """

    def __init__(self, frame: pd.DataFrame):
        self._frame = frame

    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(name)
        return getattr(self.description, name)

    @property
    def description(self) -> SweepDescription:
        """The frame's description (:func:`describe`), kept while the frame keeps its shape."""
        key = _fingerprint(self._frame)
        kept = self._frame.__dict__.get(_CACHED)
        if kept is None or kept[0] != key:
            kept = (key, describe(self._frame))
            object.__setattr__(self._frame, _CACHED, kept)
        return kept[1]

    def __repr__(self) -> str:
        return repr(self.description)
