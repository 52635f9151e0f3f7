"""The clustered bootstrap: resample weights, per-cluster sums and what they give.

A sweep resamples *clusters* (the sessions, or memories, that scored rows
came from; each row alone when there are none): resample ``b`` draws the
segment's clusters with replacement, and :func:`cluster_resamples` records
it as the counts ``W[b, c]``. The draws depend only on the seed, the segment and the number
of clusters, so every configuration scored on the same clusters sees the
same resamples and differences between configurations are paired.

A ratio metric ``m = Σ_c num_c / Σ_c den_c`` decomposes into per-cluster sums
(:func:`cluster_sums`); :class:`ClusterStats` keeps them for every
configuration of a sweep, and :func:`ratio_resamples` rescores them all on
``W`` with one matrix product. :func:`bootstrap_interval` gives any frame
scorer a percentile interval on the same draws (each row repeated as often
as its cluster is drawn). The tests built on these draws (studentized paired
differences, Holm) are :mod:`thatchlab.decide._testing`.
"""

from __future__ import annotations

import hashlib
import weakref
import zlib
from collections.abc import Mapping
from typing import Callable

import numpy as np
import pandas as pd

__all__ = ["config_seed", "segment_stream", "cluster_resamples", "cluster_sums", "segment_clusters",
           "ClusterStats", "ratio_resamples", "percentile_interval", "bootstrap_interval"]


# -- which resamples -------------------------------------------------------------------------------
def config_seed(seed: int, params) -> int:
    """A seed derived from the sweep seed and a configuration (stable across runs and workers).

    Sweeps no longer seed intervals with it: a per-configuration seed gives
    every configuration other resamples, so no two intervals can be compared.
    They draw one set of :func:`cluster_resamples` per segment instead.

    Parameters
    ----------
    seed : int
        The sweep's seed.
    params : params
        The configuration (any params object with ``to_dict``).

    Returns
    -------
    int
        A non-negative 63-bit seed.

    Examples
    --------
    >>> from thatchlab.core.params import ScoringParams
    >>> config_seed(0, ScoringParams()) == config_seed(0, ScoringParams())
    True
    """
    text = f"{int(seed)}|{sorted(params.to_dict().items())!r}"
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "little") >> 1


def segment_stream(name: str) -> int:
    """A stable stream number of a segment name, so each segment gets its own resamples.

    Parameters
    ----------
    name : str
        The segment's name (``"val"``, ``"test"``...).

    Returns
    -------
    int
        The CRC-32 of the name.

    Examples
    --------
    >>> segment_stream("test") == segment_stream("test"), segment_stream("val") == segment_stream("test")
    (True, False)
    """
    return zlib.crc32(str(name).encode())


def cluster_resamples(n_clusters: int, n_boot: int, seed: int = 0, stream: int = 0) -> np.ndarray:
    """Shared cluster-bootstrap resamples: how often each cluster is drawn, per resample.

    Resample ``b`` draws ``n_clusters`` clusters uniformly *with replacement*;
    ``W[b, c]`` counts the draws of cluster ``c`` (each row is one multinomial
    vector, ``Σ_c W[b, c] = n_clusters``). The draws depend only on
    ``(seed, stream, n_clusters, n_boot)``, so every configuration scored on
    the same clusters sees the *same* resamples: differences between
    configurations are paired.

    Parameters
    ----------
    n_clusters : int
        Clusters of the segment.
    n_boot : int
        Resamples.
    seed : int, default=0
        Seed of the draws.
    stream : int, default=0
        Stream of the draws (:func:`segment_stream` of the segment).

    Returns
    -------
    ndarray of int64, shape (n_boot, n_clusters)
        Draw counts.

    See Also
    --------
    ratio_resamples : Rescore every configuration on these weights.

    Examples
    --------
    >>> W = cluster_resamples(4, 3, seed=1)
    >>> W.shape, W.sum(axis=1).tolist()
    ((3, 4), [4, 4, 4])
    >>> bool((W == cluster_resamples(4, 3, seed=1)).all())
    True
    """
    n, b = int(n_clusters), int(n_boot)
    if n == 0:
        return np.zeros((b, 0), dtype=np.int64)
    rng = np.random.default_rng([int(seed), int(stream)])
    idx = rng.integers(0, n, size=(b, n)) + n * np.arange(b)[:, None]
    return np.bincount(idx.ravel(), minlength=b * n).reshape(b, n).astype(np.int64)


# -- per-cluster sums ------------------------------------------------------------------------------
def cluster_sums(codes, n_clusters: int, values) -> np.ndarray:
    """Per-cluster sums ``S[..., c] = Σ_{i: codes_i = c} values_i``.

    Parameters
    ----------
    codes : array-like of int
        Cluster code of every row.
    n_clusters : int
        Number of clusters (codes lie in ``[0, n_clusters)``).
    values : array-like of float
        Shape ``(n,)``, or ``(n, m)`` with one column per configuration.

    Returns
    -------
    ndarray of float64
        ``(n_clusters,)`` for 1-D ``values``; ``(m, n_clusters)`` for 2-D ones.

    Examples
    --------
    >>> cluster_sums([0, 2, 0], 3, [1.0, 2.0, 3.0]).tolist()
    [4.0, 0.0, 2.0]
    >>> cluster_sums([1, 1], 2, np.array([[1.0, 10.0], [2.0, 20.0]])).tolist()
    [[0.0, 3.0], [0.0, 30.0]]
    """
    codes = np.asarray(codes, dtype=np.int64)
    v = np.asarray(values, dtype=np.float64)
    if v.ndim == 1:
        return np.bincount(codes, weights=v, minlength=int(n_clusters)).astype(np.float64)
    out = np.zeros((v.shape[1], int(n_clusters)))
    if codes.size == 0:
        return out
    order = np.argsort(codes, kind="stable")
    sc = codes[order]
    starts = np.flatnonzero(np.r_[True, sc[1:] != sc[:-1]])
    out[:, sc[starts]] = np.add.reduceat(v[order], starts, axis=0).T
    return out


def segment_clusters(prepared, seg) -> np.ndarray:
    """Sorted cluster codes with at least one log row in ``seg`` (rows ``[lo, hi)``).

    Parameters
    ----------
    prepared : Prepared
        A :class:`~thatchlab.sweep.registry.Prepared` with ``clusters`` set.
    seg : Segment
        A :class:`~thatchlab.sweep.registry.Segment`.

    Returns
    -------
    ndarray of int64
        The codes, sorted (rows without a cluster, code ``-1``, left out).
    """
    codes = np.asarray(prepared.clusters[seg.lo:seg.hi], dtype=np.int64)
    return np.unique(codes[codes >= 0])


# -- a sweep's sums, each distinct row stored once -------------------------------------------------
class ClusterStats:
    """Per-cluster sufficient statistics of a sweep's ratio metrics.

    A ratio metric of one configuration on one segment is
    ``m = Σ_c num_c / Σ_c den_c`` over the segment's clusters ``c``
    (weighted means such as log-loss and Brier: ``num_c = Σ w·loss``,
    ``den_c = Σ w``; rates: counts). Resampling clusters with the weights
    ``W`` of :func:`cluster_resamples` gives ``m*_b = (W num)_b / (W den)_b``
    for every configuration with the same ``W``.

    Storage is compact: many configurations share the same sums (every
    configuration of a forecast group has the same log-loss sums, every
    strong bar of a threshold the same coverage), so each segment keeps its
    *distinct* rows once (``distinct[segment]``, ``(n_rows, n_clusters)``)
    and each ``(metric, segment)`` an index of the row of every
    configuration's numerator and denominator (``num_index``/``den_index``,
    ``(n_configs,)``). ``num_c`` of configuration ``i`` is
    ``distinct[segment][num_index[key][i]]``.

    The object is treated as immutable: copying a result frame (whose
    ``attrs["clusters"]`` holds it) shares it rather than copying arrays.

    Parameters
    ----------
    unit : str
        What a cluster is.
    labels : dict
        Segment name → cluster labels.
    config_ids : list of str
        Configuration order of ``num`` and ``den``'s rows.
    num, den : dict
        ``(metric, segment)`` → full matrices ``(n_configs, n_clusters)`` (stored compactly);
        :meth:`merge` and :meth:`from_rows` build from other forms.

    Attributes
    ----------
    unit : str
        What a cluster is (``"session"``: the ``session`` of the log row
        each scored event came from).
    labels : dict
        Segment name → cluster labels (array, in the order of the columns).
    config_ids : list of str
        Configuration order of the indexes (and of the rows of ``num``/``den``).
    distinct : dict
        Segment → float64 array ``(n_rows, n_clusters)`` of distinct rows.
    num_index, den_index : dict
        ``(metric, segment)`` → int64 array ``(n_configs,)`` of rows of ``distinct[segment]``.
    num, den : mapping
        ``(metric, segment)`` → the full float64 matrix ``(n_configs, n_clusters)``,
        gathered on access (read-only; prefer :meth:`sums` for a few configurations).

    See Also
    --------
    cluster_resamples : The resample weights the sums are rescored with.

    Examples
    --------
    >>> s = ClusterStats.merge({"a": {("m", "test"): (np.array([1.0, 2.0]), np.array([2.0, 2.0]))},
    ...                         "b": {("m", "test"): (np.array([1.0, 2.0]), np.array([2.0, 2.0]))}},
    ...                        "session", {"test": np.array(["s1", "s2"])})
    >>> s.n_rows(), s.num[("m", "test")].tolist(), s.value("m", "test", ["b"]).tolist()
    (2, [[1.0, 2.0], [1.0, 2.0]], [0.75])
    """

    def __init__(self, unit, labels, config_ids, num, den):
        # from full matrices num/den {(metric, segment): (n_configs, n_clusters)}
        ids = list(config_ids)
        pools, num_index, den_index = {}, {}, {}
        for key in num:
            pool = pools.setdefault(key[1], _RowPool())
            for out, source in ((num_index, num), (den_index, den)):
                out[key] = np.array([pool.add(row) for row in np.asarray(source[key], np.float64)],
                                    dtype=np.int64).reshape(len(ids))
        self._setup(unit, labels, ids, _finish(pools, labels), num_index, den_index)

    @classmethod
    def from_rows(cls, unit, labels, config_ids, distinct, num_index, den_index) -> ClusterStats:
        """From the compact form: distinct rows per segment and row indexes per ``(metric, segment)``.

        Parameters
        ----------
        unit : str
            What a cluster is.
        labels : dict
            Segment name → cluster labels.
        config_ids : list of str
            Configuration order of the indexes.
        distinct : dict
            Segment → ``(n_rows, n_clusters)`` distinct rows.
        num_index, den_index : dict
            ``(metric, segment)`` → row of every configuration's numerator / denominator.

        Returns
        -------
        ClusterStats
            The sums.
        """
        self = cls.__new__(cls)
        self._setup(unit, labels, list(config_ids), distinct, num_index, den_index)
        return self

    def _setup(self, unit, labels, config_ids, distinct, num_index, den_index):
        self.unit, self.labels, self.config_ids = unit, dict(labels), list(config_ids)
        self.distinct = {s: np.asarray(a, np.float64) for s, a in distinct.items()}
        for a in self.distinct.values():
            a.flags.writeable = False
        shared = {}  # equal indexes become one object, so their matrices are one object too

        def one(idx):
            idx = np.asarray(idx, dtype=np.int64)
            idx.flags.writeable = False
            return shared.setdefault((len(idx), idx.tobytes()), idx)

        self.num_index = {k: one(v) for k, v in num_index.items()}
        self.den_index = {k: one(v) for k, v in den_index.items()}
        for k, idx in [*self.num_index.items(), *self.den_index.items()]:
            if len(idx) != len(self.config_ids) or (len(idx) and not 0 <= idx.min() <= idx.max()
                                                    < len(self.distinct[k[1]])):
                raise ValueError(f"ClusterStats: index of {k!r} does not fit its rows")
        self._index = {c: i for i, c in enumerate(self.config_ids)}
        self._views()

    def _views(self):
        self.num, self.den = _Matrices(self, self.num_index), _Matrices(self, self.den_index)

    def __getstate__(self):
        state = dict(self.__dict__)
        state.pop("num"), state.pop("den")
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)
        self._views()

    def __deepcopy__(self, memo):
        return self

    def __repr__(self):
        sizes = {s: len(v) for s, v in self.labels.items()}
        return (f"ClusterStats(unit={self.unit!r}, configs={len(self.config_ids)}, metrics={self.metrics}, "
                f"clusters={sizes}, rows={self.n_rows()})")

    @property
    def metrics(self) -> list:
        """The metrics with per-cluster sums."""
        return sorted({m for m, _ in self.num_index})

    def keys(self) -> list:
        """The ``(metric, segment)`` pairs with sums, in merge order.

        Returns
        -------
        list of tuple
            The pairs.
        """
        return list(self.num_index)

    def n_rows(self) -> int:
        """Distinct rows stored, over every segment (at most ``2 · n_keys · n_configs``).

        Returns
        -------
        int
            The count.
        """
        return int(sum(len(a) for a in self.distinct.values()))

    def nbytes(self) -> int:
        """Memory held by the sums: the distinct rows and the row indexes.

        Returns
        -------
        int
            Bytes.
        """
        idx = {id(a): a for a in [*self.num_index.values(), *self.den_index.values()]}
        return int(sum(a.nbytes for a in self.distinct.values()) + sum(a.nbytes for a in idx.values()))

    def rows(self, config_ids) -> np.ndarray:
        """Positions of ``config_ids`` in :attr:`config_ids`.

        Parameters
        ----------
        config_ids : list of str
            Configurations.

        Returns
        -------
        ndarray of int64
            Their positions.

        Raises
        ------
        KeyError
            Listing the configurations without sums.
        """
        missing = [c for c in config_ids if c not in self._index]
        if missing:
            raise KeyError(missing)
        return np.array([self._index[c] for c in config_ids], dtype=np.int64)

    def sums(self, metric: str, segment: str, config_ids) -> tuple:
        """``(num, den)`` of configurations, gathered from the distinct rows.

        Parameters
        ----------
        metric : str
            A metric with sums.
        segment : str
            A segment (``"val"``, ``"test"``).
        config_ids : list of str
            Configurations.

        Returns
        -------
        tuple of ndarray
            ``(num, den)``, each ``(len(config_ids), n_clusters)``.

        See Also
        --------
        ClusterStats.value : The metric itself.
        """
        r = self.rows(config_ids)
        key = (metric, segment)
        pool = self.distinct[segment]
        return pool[self.num_index[key][r]], pool[self.den_index[key][r]]

    def value(self, metric: str, segment: str, config_ids) -> np.ndarray:
        """The metric of each configuration: ``Σ num / Σ den`` (NaN when ``Σ den = 0``).

        Parameters
        ----------
        metric : str
            A metric with sums.
        segment : str
            A segment.
        config_ids : list of str
            Configurations.

        Returns
        -------
        ndarray of float64
            One value per configuration.

        See Also
        --------
        ClusterStats.sums : The per-cluster sums behind it.
        """
        r = self.rows(config_ids)
        key = (metric, segment)
        total = self.distinct[segment].sum(axis=1)  # each row summed alone, as in the gathered matrix
        with np.errstate(divide="ignore", invalid="ignore"):
            return total[self.num_index[key][r]] / total[self.den_index[key][r]]

    @staticmethod
    def merge(parts, unit, labels) -> ClusterStats:
        """Combine per-configuration parts ``{config_id: {(metric, segment): (num, den)}}``.

        Keys missing for some configuration are dropped. Each distinct array
        is stored once per segment: the same object in many parts (a forecast
        group's sums, a threshold's coverage, shared denominators) is matched
        by identity without being read, other arrays with the same bits by
        a fingerprint and an exact comparison.

        Parameters
        ----------
        parts : dict
            ``{config_id: {(metric, segment): (num, den)}}``.
        unit : str
            What a cluster is.
        labels : dict
            Segment name → cluster labels.

        Returns
        -------
        ClusterStats
            The merged sums.

        See Also
        --------
        ClusterStats.parts : The inverse.
        """
        cids = list(parts)
        keys = list(dict.fromkeys(k for p in parts.values() for k in p))
        keys = [k for k in keys if cids and all(k in parts[c] for c in cids)]
        pools, num_index, den_index = {}, {}, {}
        for key in keys:
            pool = pools.setdefault(key[1], _RowPool())
            got = [parts[c][key] for c in cids]
            num_index[key] = np.array([pool.add(nd[0]) for nd in got], dtype=np.int64)
            den_index[key] = np.array([pool.add(nd[1]) for nd in got], dtype=np.int64)
        return ClusterStats.from_rows(unit, labels, cids, _finish(pools, labels),
                                      num_index, den_index)

    def coarsen(self, parents, unit: str) -> ClusterStats:
        """The same sums over coarser clusters: each cluster's column added into its parent's.

        Sums are additive, so the parent's ``num`` and ``den`` are the sums of its
        children's; a parent's label order is sorted.

        Parameters
        ----------
        parents : dict
            Every cluster label (of every segment) → the label of the cluster that contains it
            (``{session: user}``: sessions nested in users).
        unit : str
            What a coarser cluster is.

        Returns
        -------
        ClusterStats
            The coarser sums.

        Raises
        ------
        KeyError
            Listing labels without a parent.

        Examples
        --------
        >>> s = ClusterStats.merge({"a": {("m", "test"): (np.array([1.0, 2.0, 3.0]),
        ...                                               np.array([2.0, 2.0, 4.0]))}},
        ...                        "session", {"test": np.array(["s1", "s2", "s3"])})
        >>> u = s.coarsen({"s1": "u1", "s2": "u2", "s3": "u1"}, "user")
        >>> u.unit, u.labels["test"].tolist(), [a.tolist() for a in u.sums("m", "test", ["a"])]
        ('user', ['u1', 'u2'], [[[4.0, 2.0]], [[6.0, 2.0]]])
        """
        distinct, labels = {}, {}
        for seg, lab in self.labels.items():
            lab = np.asarray(lab, dtype=object)
            missing = [str(x) for x in lab if x not in parents]
            if missing:
                raise KeyError(missing[:5])
            codes, uniques = pd.factorize(np.array([parents[x] for x in lab], dtype=object), sort=True)
            rows = self.distinct[seg]
            out = np.zeros((rows.shape[0], len(uniques)), dtype=np.float64)
            for j in range(len(uniques)):
                out[:, j] = rows[:, codes == j].sum(axis=1)
            distinct[seg], labels[seg] = out, np.asarray(uniques, dtype=object)
        return ClusterStats.from_rows(unit, labels, self.config_ids, distinct, self.num_index, self.den_index)

    def parts(self) -> dict:
        """The inverse of :meth:`merge`: per configuration, its sums.

        The arrays are read-only views of the distinct rows (one object per row,
        so merging them again stores each row once without reading it).

        Returns
        -------
        dict
            ``{config_id: {(metric, segment): (num, den)}}``.
        """
        views = {s: list(a) for s, a in self.distinct.items()}
        out = {}
        for i, cid in enumerate(self.config_ids):
            out[cid] = {k: (views[k[1]][self.num_index[k][i]], views[k[1]][self.den_index[k][i]])
                        for k in self.num_index}
        return out


class _RowPool:
    """Distinct rows of one segment: each array stored once, matched by identity, then by bits.

    An array already added (the same object) gets its row back without being
    read; another array with the same bits (a fingerprint, then an exact
    comparison of the bits, so ``-0.0`` and ``0.0`` or two NaN payloads stay
    apart) gets the stored row. Every added object is kept alive until
    :meth:`finish`, so no identity can be reused by a new object meanwhile.
    """

    def __init__(self):
        self._by_id, self._by_print, self._rows, self._seen = {}, {}, [], []
        self._mult = None

    def add(self, obj) -> int:
        j = self._by_id.get(id(obj))
        if j is not None:
            return j
        a = np.ascontiguousarray(obj, dtype=np.float64).reshape(-1)
        bits = a.view(np.uint64)
        if self._mult is None or len(self._mult) != len(a):
            rng = np.random.default_rng(len(a))
            self._mult = rng.integers(0, 2**63, len(a), dtype=np.uint64) * np.uint64(2) + np.uint64(1)
        key = (len(a), int(np.multiply(bits, self._mult).sum(dtype=np.uint64)))
        same = self._by_print.setdefault(key, [])
        for j in same:
            if np.array_equal(self._rows[j].view(np.uint64), bits):
                break
        else:
            j = len(self._rows)
            self._rows.append(a)
            same.append(j)
        self._by_id[id(obj)] = j
        self._seen.append(obj)
        return j

    def finish(self, n_clusters: int) -> np.ndarray:
        out = np.stack(self._rows) if self._rows else np.zeros((0, int(n_clusters)))
        self._by_id, self._by_print, self._rows, self._seen = {}, {}, [], []
        return out


class _Matrices(Mapping):
    """``(metric, segment)`` → full ``(n_configs, n_clusters)`` matrix, gathered on access.

    Read-only; a matrix stays the same object while someone holds it (and
    keys sharing one index, such as shared denominators, share it), and is
    freed when nobody does.
    """

    def __init__(self, stats, index):
        self._stats, self._index = stats, index
        self._built = weakref.WeakValueDictionary()

    def __getitem__(self, key):
        idx = self._index[key]
        tag = (key[1], id(idx))
        out = self._built.get(tag)
        if out is None:
            out = self._stats.distinct[key[1]][idx]
            out.flags.writeable = False
            self._built[tag] = out
        return out

    def __iter__(self):
        return iter(self._index)

    def __len__(self):
        return len(self._index)

    def __contains__(self, key):
        return key in self._index

    def __repr__(self):
        return f"<{len(self)} matrices gathered on access: {list(self._index)}>"


def _finish(pools, labels) -> dict:
    """Every pool's rows as one array (a segment without rows gets ``(0, n_clusters)``)."""
    out = {}
    for seg, pool in pools.items():
        out[seg] = pool.finish(len(labels.get(seg, ())))
    return out


# -- resampled values ------------------------------------------------------------------------------
def ratio_resamples(num, den, weights) -> np.ndarray:
    """Resampled ratios ``(W num_j) / (W den_j)``.

    Parameters
    ----------
    num, den : ndarray
        ``(n_configs, n_clusters)`` (or ``(n_clusters,)``).
    weights : ndarray
        ``(n_boot, n_clusters)`` (:func:`cluster_resamples`).

    Returns
    -------
    ndarray of float64, shape (n_boot, n_configs)
        A resample with ``W den = 0`` is NaN.

    Examples
    --------
    >>> W = np.array([[1, 1], [2, 0]])
    >>> ratio_resamples(np.array([1.0, 3.0]), np.array([2.0, 2.0]), W).ravel().tolist()
    [1.0, 0.5]
    """
    num = np.atleast_2d(np.asarray(num, np.float64))
    den = np.atleast_2d(np.asarray(den, np.float64))
    w = np.asarray(weights, np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        return (w @ num.T) / (w @ den.T)


def percentile_interval(draws, alpha: float = 0.05) -> tuple:
    """The ``(α/2, 1 − α/2)`` percentile interval of the finite ``draws``.

    Parameters
    ----------
    draws : array-like of float
        Resampled values (non-finite ones ignored).
    alpha : float, default=0.05
        One minus the coverage.

    Returns
    -------
    tuple of float
        ``(lower, upper)``; ``(nan, nan)`` when no draw is finite.

    Examples
    --------
    >>> percentile_interval([1.0, 2.0, 3.0, float("nan")], 0.5)
    (1.5, 2.5)
    """
    d = np.asarray(draws, np.float64)
    d = d[np.isfinite(d)]
    if d.size == 0:
        return float("nan"), float("nan")
    return float(np.quantile(d, alpha / 2)), float(np.quantile(d, 1 - alpha / 2))


def bootstrap_interval(frame: pd.DataFrame, score: Callable[[pd.DataFrame], float], n: int = 200,
                       alpha: float = 0.05, seed: int = 0, cluster: str | None = None,
                       stream: int = 0) -> tuple[float, float]:
    """Percentile cluster-bootstrap interval of ``score(frame)``.

    Clusters are the distinct values of column ``cluster`` (in sorted order),
    or every row on its own when ``cluster`` is None; resample ``b`` repeats
    each row as often as its cluster is drawn in
    :func:`cluster_resamples` ``(n_clusters, n, seed, stream)``. Frames with
    the same clusters therefore get the same resamples whatever
    configuration produced them (paired intervals).

    Parameters
    ----------
    frame : DataFrame
        The scored rows.
    score : callable
        ``score(frame) -> float``.
    n : int, default=200
        Resamples.
    alpha : float, default=0.05
        One minus the coverage.
    seed : int, default=0
        Seed of the draws.
    cluster : str, optional
        The cluster column (None: rows are clusters).
    stream : int, default=0
        Stream of the draws.

    Returns
    -------
    tuple of float
        ``(lower, upper)``; ``(nan, nan)`` for an empty frame.

    Examples
    --------
    >>> f = pd.DataFrame({"x": [0.0, 1.0, 2.0, 3.0]})
    >>> lo, hi = bootstrap_interval(f, lambda d: float(d["x"].mean()), n=100, seed=1)
    >>> 0.0 <= lo <= 1.5 <= hi <= 3.0
    True
    """
    if len(frame) == 0:
        return float("nan"), float("nan")
    if cluster is None:
        codes, n_cl = np.arange(len(frame)), len(frame)
    else:
        labels = frame[cluster].astype(str).to_numpy()
        uniq, codes = np.unique(labels, return_inverse=True)
        n_cl = len(uniq)
    W = cluster_resamples(n_cl, n, seed, stream)
    vals = np.array([score(frame.iloc[np.repeat(np.arange(len(frame)), w[codes])]) for w in W],
                    dtype=np.float64)
    return percentile_interval(vals, alpha)
