"""Counting sequential pairs: per (trigger group, target node) bin, pairs, delay sums, latest target.

Rows are sorted by (workspace, ts); row ``a``'s followers are the rows
``jstart[a]:jend[a]``. Two exact ways to count, chosen per trigger node:

* **by enumeration**: every (trigger row, follower) pair is generated in
  chunks of rows and binned with ``bincount`` (cost ∝ pairs);
* **by coverage** (seed mode, a node whose rows open many pairs): the number
  of its rows whose window covers each row, and the sum of their times, are
  two cumulative sums of a difference array; one weighted ``bincount`` by
  (workspace, node) of every row then gives all of that trigger's bins at
  once (cost ∝ rows).

Delays are summed as integer nanoseconds in float64, so a bin's sum is exact
while below 2**53 ns (104 days of summed delay) whichever way it was counted.
"""

from __future__ import annotations

import numpy as np

__all__ = ["count_pairs"]

_NO_TIME = np.iinfo(np.int64).min


def count_pairs(ts_s, ws_s, nd_s, g_code, g_uni, jstart, jend, prev_same, n_nodes, *,
                chunk_pairs: int, dense_bins: int, coverage_load: float):
    """Bins ``group * n_nodes + target node`` holding a pair, sorted and unique, with their pair
    counts, delay sums (ns, float64) and latest target times (ns).

    ``prev_same`` (fraction mode) keeps only the first follower of each
    target node per trigger row. ``chunk_pairs`` bounds the pairs enumerated
    at once; bins are kept in arrays over every (group, node) up to
    ``dense_bins`` of them, else gathered by sorting; in seed mode a trigger
    node opening more than ``coverage_load`` pairs per row of the stream is
    counted by coverage.
    """
    n = len(ts_s)
    per = jend - jstart
    sink = _Bins(len(g_uni) * n_nodes, dense_bins, n)
    rows = None
    n_ws = int(ws_s[-1]) + 1
    if prev_same is None and n_ws * n_nodes <= min(dense_bins, 4 * n + 4096):
        load = np.bincount(nd_s, weights=per, minlength=n_nodes)
        heavy = np.zeros(n_nodes, dtype=bool)
        cell = ws_s * n_nodes + nd_s               # (workspace, node) of each row, as a target
        span = int(ts_s.max()) - int(ts_s.min()) + 1
        t_rel = ts_s - ts_s.min() if span < 1 << 62 else None   # coverage sums need times well inside int64
        for node in np.flatnonzero(load > coverage_load * n) if t_rel is not None else ():
            part = _by_coverage(int(node), ts_s, t_rel, span, cell, nd_s, g_uni, jstart, jend, n_ws,
                                n_nodes)
            if part is not None:
                heavy[node] = True
                sink.add(*part)
        if heavy.any():
            rows = np.flatnonzero(~heavy[nd_s])
    _by_enumeration(sink, ts_s, ws_s, nd_s, g_code, jstart, per, prev_same, n_nodes, rows, chunk_pairs,
                    dense_bins)
    return sink.result()


class _Bins:
    """Where binned pairs accumulate: arrays over every bin when there are at most
    ``dense_bins`` of them (and not many more than rows), else a list of parts merged by sorting."""

    def __init__(self, n_keys, dense_bins, n_rows):
        self.dense = n_keys <= min(dense_bins, max(4 * n_rows, 1 << 20))
        if self.dense:
            self.counts = np.zeros(n_keys, dtype=np.int64)
            self.dsum = np.zeros(n_keys, dtype=np.float64)
            self.last = np.full(n_keys, _NO_TIME, dtype=np.int64)
        else:
            self.parts = []

    def add_span(self, start, counts, dsum, last):
        """Add per-bin arrays covering bins ``start : start + len(counts)``."""
        if not self.dense:
            bins = np.flatnonzero(counts)
            return self.add(bins + start, counts[bins], dsum[bins], last[bins])
        end = start + len(counts)
        self.counts[start:end] += counts
        self.dsum[start:end] += dsum
        np.maximum(self.last[start:end], last, out=self.last[start:end])

    def add(self, keys, counts, dsum, last):
        """Add the bins ``keys`` (unique)."""
        if not self.dense:
            return self.parts.append((keys, counts, dsum, last))
        self.counts[keys] += counts
        self.dsum[keys] += dsum
        self.last[keys] = np.maximum(self.last[keys], last)

    def result(self):
        if self.dense:
            keys = np.flatnonzero(self.counts)
            return keys, self.counts[keys], self.dsum[keys], self.last[keys]
        if not self.parts:
            return (np.empty(0, np.int64), np.empty(0, np.int64), np.empty(0, np.float64),
                    np.empty(0, np.int64))
        keys, counts, dsum, last = (np.concatenate(a) for a in zip(*self.parts))
        if len(keys) < 2 or (keys[1:] > keys[:-1]).all():
            return keys, counts, dsum, last
        o = np.argsort(keys, kind="stable")  # sorted runs: merged in about linear time
        keys, counts, dsum, last = keys[o], counts[o], dsum[o], last[o]
        first = np.flatnonzero(np.r_[True, keys[1:] != keys[:-1]])
        if len(first) < len(keys):  # a bin in two parts (a workspace split over chunks)
            keys = keys[first]
            counts = np.add.reduceat(counts, first)
            dsum = np.add.reduceat(dsum, first)
            last = np.maximum.reduceat(last, first)
        return keys, counts, dsum, last


def _by_coverage(node, ts_s, t_rel, span, cell, nd_s, g_uni, jstart, jend, n_ws, n_nodes):
    """All bins of trigger ``node`` from how many of its rows cover each row (``span`` bounds any
    delay); None when a row's sums could leave int64, and the node is enumerated instead."""
    n = len(ts_s)
    mine = np.flatnonzero(nd_s == node)
    lo, hi, t = jstart[mine], jend[mine], t_rel[mine]
    cover = np.zeros(n + 1, dtype=np.int64)
    np.add.at(cover, lo, 1)
    np.subtract.at(cover, hi, 1)
    np.cumsum(cover, out=cover)
    cover = cover[:n]
    if int(cover.max()) * span >= 1 << 62:
        return None
    t_sum = np.zeros(n + 1, dtype=np.int64)
    np.add.at(t_sum, lo, t)
    np.subtract.at(t_sum, hi, t)
    np.cumsum(t_sum, out=t_sum)
    delay = cover * t_rel - t_sum[:n]      # per row: summed delay from the trigger rows covering it
    n_cells = n_ws * n_nodes
    counts = np.bincount(cell, weights=cover, minlength=n_cells)
    cells = np.flatnonzero(counts)
    if not len(cells):
        return None
    dsum = np.bincount(cell, weights=delay, minlength=n_cells)[cells]
    hit = np.flatnonzero(cover)
    last = np.full(n_cells, _NO_TIME, dtype=np.int64)
    np.maximum.at(last, cell[hit], ts_s[hit])
    group = np.searchsorted(g_uni, (cells // n_nodes) * n_nodes + node)
    return group * n_nodes + cells % n_nodes, counts[cells].astype(np.int64), dsum, last[cells]


def _by_enumeration(sink, ts_s, ws_s, nd_s, g_code, jstart, per, prev_same, n_nodes, rows, chunk_pairs,
                    dense_bins):
    """Bin the pairs of trigger rows ``rows`` (all when None) into ``sink``, chunk by chunk; chunks
    are cut at a workspace start where one is near, so a chunk's groups form a short run of codes."""
    if rows is not None:
        ws_s, g_code, jstart, per, ts_r = ws_s[rows], g_code[rows], jstart[rows], per[rows], ts_s[rows]
    else:
        ts_r = ts_s
    n = len(per)
    csum = np.cumsum(per)
    ws_first = np.flatnonzero(ws_s[1:] != ws_s[:-1]) + 1
    nd_small = nd_s.astype(np.min_scalar_type(max(n_nodes - 1, 0)))
    lo = 0
    while lo < n:
        base = int(csum[lo - 1]) if lo else 0
        hi = int(np.searchsorted(csum, base + chunk_pairs, side="right"))
        if hi < n:  # back to the workspace start before the cut, when the chunk keeps some rows
            k = int(np.searchsorted(ws_first, hi, side="right")) - 1
            if k >= 0 and ws_first[k] > lo:
                hi = int(ws_first[k])
        hi = min(max(hi, lo + 1), n)
        total = int(csum[hi - 1]) - base
        if total:
            _chunk(sink, ts_s, nd_small, ts_r[lo:hi], g_code[lo:hi], jstart[lo:hi], per[lo:hi], prev_same,
                   n_nodes, total, dense_bins)
        lo = hi


def _chunk(sink, ts_s, nd_small, ti_rows, g, js, cnt, prev_same, n_nodes, total, dense_bins):
    """Bin the pairs of one chunk of trigger rows (``total`` pairs) into ``sink``."""
    g0 = int(g.min())
    n_bins = (int(g.max()) - g0 + 1) * n_nodes
    # per pair: the follower's row (the window start, then consecutive), the trigger's bin row and time
    j = np.repeat(js - (np.cumsum(cnt) - cnt), cnt)
    j += np.arange(total)
    key = np.repeat((g - g0) * n_nodes, cnt)
    ti = np.repeat(ti_rows, cnt)
    if prev_same is not None:  # fraction mode: the first B after each A only
        first = prev_same[j] < np.repeat(js, cnt)
        j, key, ti = j[first], key[first], ti[first]
    key += nd_small[j]
    tj = ts_s[j]
    delay = tj.view(np.uint64) - ti.view(np.uint64)  # tj >= ti: exact even when the span passes 2**63 ns
    if n_bins <= min(dense_bins, 8 * len(key) + 4096):
        last = np.full(n_bins, _NO_TIME, dtype=np.int64)
        np.maximum.at(last, key, tj)
        return sink.add_span(g0 * n_nodes, np.bincount(key, minlength=n_bins),
                             np.bincount(key, weights=delay, minlength=n_bins), last)
    o = np.argsort(key, kind="stable")  # many bins, few pairs: by sorting (the same summation order)
    key = key[o]
    first = np.flatnonzero(np.r_[True, key[1:] != key[:-1]])
    sink.add(key[first] + g0 * n_nodes, np.diff(np.r_[first, len(key)]),
             np.add.reduceat(delay[o].astype(np.float64), first), np.maximum.reduceat(tj[o], first))
