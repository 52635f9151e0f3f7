"""The confidence calibration report of ai-memory and its three renderings.

A report holds the window, the number of observations in it and one row per
(namespace, source): count, median, mean, a 10-bucket histogram of the derived
confidence and, from release ``a78a228`` on, the consumption utility and the
consume/access divergence. ``to_ascii`` reproduces the operator table of the
report's release byte for byte — ``n/a`` for a utility nothing was judged for,
``0.00`` for a negative zero; ``v0.7.0``'s table has no ``UTIL`` column — and
``to_json`` the report envelope's keys. :func:`report_rows` aggregates the rows
of a window in a few vector passes.

The releases' report code: ``alphaonedev/ai-memory-mcp``
``src/confidence/calibrate.rs`` (release/v0.7.0, @a78a2284, @0a5770af) and the
table of ``src/cli/commands/calibrate_confidence.rs`` of the same releases.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
import pandas as pd

from thatchlab.core.display import RichDisplay
from thatchlab.core.dtypes import factorize, is_arrow_dictionary, is_text_dtype, present, text_equal
from thatchlab.core.frames import float_column
from thatchlab.core.params import at_least, latest_release, resolve_release

__all__ = ["CalibrationReport", "REPORT_COLUMNS", "V070_COLUMNS", "DIVERGENCE_FIELDS", "empty_rows",
           "report_rows", "report_columns"]

#: Columns of :attr:`CalibrationReport.rows`, in order (releases ``a78a228`` and ``0a5770a``).
REPORT_COLUMNS = ("namespace", "source", "count", "median", "mean", "buckets", "consumption_utility",
                  "consume_access_divergence")
#: Columns of a ``v0.7.0`` report's rows: that release computed no utility and no divergence.
V070_COLUMNS = REPORT_COLUMNS[:6]
#: Keys of a row's ``consume_access_divergence`` (None when nothing in the group is judged).
DIVERGENCE_FIELDS = ("consumed_count", "unconsumed_count", "mean_access_consumed", "mean_access_unconsumed")
_HEADER = (f"{'NAMESPACE':<24}  {'SOURCE':<12}  {'COUNT':>6}  {'MEDIAN':>6}  {'MEAN':>6}  {'UTIL':>6}  "
           "HISTOGRAM (0.0..1.0)")
_HEADER_V070 = f"{'NAMESPACE':<24}  {'SOURCE':<12}  {'COUNT':>6}  {'MEDIAN':>6}  {'MEAN':>6}  HISTOGRAM (0.0..1.0)"


def _judges(release) -> bool:
    """Whether ``release`` computes consumption utility and the divergence (``a78a228`` on)."""
    return at_least("ai-memory", release, "a78a228")


def report_columns(release=None) -> tuple:
    """The rows' columns of a report made under ``release`` (default: the newest)."""
    return REPORT_COLUMNS if _judges(release or latest_release("ai-memory")) else V070_COLUMNS


def empty_rows(release=None) -> pd.DataFrame:
    """An empty rows table with the report's columns and dtypes (of ``release``; default the newest)."""
    cols = {"namespace": pd.Series(dtype=object), "source": pd.Series(dtype=object),
            "count": pd.Series(dtype="int64"), "median": pd.Series(dtype="float64"),
            "mean": pd.Series(dtype="float64"), "buckets": pd.Series(dtype=object),
            "consumption_utility": pd.Series(dtype=object), "consume_access_divergence": pd.Series(dtype=object)}
    return pd.DataFrame({c: cols[c] for c in report_columns(release)})


def _missing(v) -> bool:
    return v is None or (isinstance(v, float) and math.isnan(v))


def _text(v) -> str:
    return "" if _missing(v) else str(v)


def _util(v):
    return None if v is None or (isinstance(v, float) and math.isnan(v)) else float(v)


def _divergence(v):
    """A row's divergence as plain Python (None when nothing was judged)."""
    if not isinstance(v, dict):
        return None
    return {"consumed_count": int(v["consumed_count"]), "unconsumed_count": int(v["unconsumed_count"]),
            "mean_access_consumed": _util(v["mean_access_consumed"]),
            "mean_access_unconsumed": _util(v["mean_access_unconsumed"])}


def _two_places(v) -> str:
    """``{:.2f}`` as production prints it: ``-0.0`` is ``0.00`` (adding 0.0 drops the sign)."""
    return f"{float(v) + 0.0:.2f}"


@dataclass
class CalibrationReport(RichDisplay):
    """Per-(namespace, source) calibration baselines over a window of shadow observations.

    Parameters
    ----------
    window_days : float, default=30
        The window in days (an int when integral).
    total_observations : int, default=0
        Observations inside the window (the audience's, for a caller).
    rows : DataFrame, default=None
        The report's rows (see Attributes); an empty table of the release's
        columns when None.
    release : str, default=the newest ai-memory release
        The ai-memory release whose report this is
        (``thatchlab.core.params.RELEASES``); resolved on construction.
    audience : str, default=None
        The caller the sweep was scoped to, ``None`` for the admin (global) sweep.

    Attributes
    ----------
    window_days : float
        The window in days.
    total_observations : int
        Observations inside the window.
    rows : DataFrame
        :data:`REPORT_COLUMNS` (``v0.7.0``: :data:`V070_COLUMNS`), sorted by
        namespace then source; ``buckets`` holds lists of 10 ints, ``consumption_utility`` a
        float or None (never 0.0 when nothing was judged), ``consume_access_divergence`` a dict
        with :data:`DIVERGENCE_FIELDS` or None (nothing judged).
    release : str
        The resolved release.
    audience : str or None
        The scoped caller, ``None`` for the admin sweep.
    judges : bool
        Whether the release computes utility and divergence.
    """

    window_days: float = 30
    total_observations: int = 0
    rows: pd.DataFrame = None
    release: str = latest_release("ai-memory")
    audience: str | None = None

    def __post_init__(self):
        self.release = resolve_release("ai-memory", self.release)
        if self.rows is None:
            self.rows = empty_rows(self.release)

    @property
    def judges(self) -> bool:
        """Whether this report's release computes utility and divergence (``a78a228`` on)."""
        return _judges(self.release)

    def _display_(self):
        return ("Calibration report", {"release": self.release,
                                       "audience": "admin" if self.audience is None else self.audience,
                                       "window (days)": self.window_days,
                                       "observations": f"{int(self.total_observations):,}",
                                       "groups": len(self.rows)}, {"": self.to_frame(wide=True)})

    def to_frame(self, wide: bool = False) -> pd.DataFrame:
        """The rows as a DataFrame (a copy); ``wide=True`` spreads ``buckets`` into
        ``bucket_0`` … ``bucket_9`` and ``consume_access_divergence`` into its four fields
        (:data:`DIVERGENCE_FIELDS`; counts 0 and means NaN where nothing was judged).
        ``attrs`` carry the window, total, release and audience.

        Parameters
        ----------
        wide : bool, default=False
            Spread the list and dict columns into scalar columns.

        Returns
        -------
        DataFrame
            A copy of the rows, with the report's fields in ``attrs``.

        See Also
        --------
        to_dict, to_json, to_ascii : The other renderings.
        """
        out = self.rows.copy()
        if wide:
            spread = pd.DataFrame(out["buckets"].tolist() if len(out) else [],
                                  columns=[f"bucket_{i}" for i in range(10)], index=out.index)
            out = pd.concat([out.drop(columns="buckets"), spread.astype("int64")], axis=1)
            if "consume_access_divergence" in out.columns:
                div = [_divergence(v) for v in out["consume_access_divergence"].tolist()]
                fields = pd.DataFrame({
                    "consumed_count": [d["consumed_count"] if d else 0 for d in div],
                    "unconsumed_count": [d["unconsumed_count"] if d else 0 for d in div],
                    "mean_access_consumed": [np.nan if not d or d["mean_access_consumed"] is None
                                             else d["mean_access_consumed"] for d in div],
                    "mean_access_unconsumed": [np.nan if not d or d["mean_access_unconsumed"] is None
                                               else d["mean_access_unconsumed"] for d in div],
                }, index=out.index).astype({"consumed_count": "int64", "unconsumed_count": "int64",
                                            "mean_access_consumed": "float64",
                                            "mean_access_unconsumed": "float64"})
                out = pd.concat([out.drop(columns="consume_access_divergence"), fields], axis=1)
        out.attrs = {"window_days": self.window_days, "total_observations": self.total_observations,
                     "release": self.release, "audience": self.audience}
        return out

    def to_dict(self) -> dict:
        """The report envelope as plain Python (keys as :meth:`to_json`).

        Returns
        -------
        dict
            ``window_days``, ``total_observations`` and ``rows`` (a list of
            dicts of plain Python values).

        See Also
        --------
        to_json : The same as JSON text.
        """
        rows = []
        judges = self.judges
        for rec in self.rows.to_dict("records"):
            row = {"namespace": None if _missing(rec["namespace"]) else str(rec["namespace"]),
                   "source": None if _missing(rec["source"]) else str(rec["source"]),
                   "count": int(rec["count"]), "median": float(rec["median"]), "mean": float(rec["mean"]),
                   "buckets": [int(b) for b in rec["buckets"]]}
            if judges:
                row["consumption_utility"] = _util(rec.get("consumption_utility"))
                row["consume_access_divergence"] = _divergence(rec.get("consume_access_divergence"))
            rows.append(row)
        return {"window_days": self.window_days, "total_observations": int(self.total_observations),
                "rows": rows}

    def to_json(self, indent=None) -> str:
        """JSON text with keys ``window_days, total_observations, rows``; each row:
        ``namespace, source, count, median, mean, buckets`` and, from ``a78a228`` on,
        ``consumption_utility`` and ``consume_access_divergence`` (``null``, or an object with
        ``consumed_count, unconsumed_count, mean_access_consumed, mean_access_unconsumed``),
        the fields production's JSON output carries.

        Parameters
        ----------
        indent : int, default=None
            Passed to :func:`json.dumps`; one line when None.

        Returns
        -------
        str
            The JSON text.

        See Also
        --------
        to_dict : The same as plain Python.
        """
        return json.dumps(self.to_dict(), indent=indent)

    def to_ascii(self) -> str:
        """The operator table: title, blank line, column header, one line per row
        (or ``(no observations in window)``); no trailing spaces; ends with a newline.

        Median, mean and utility print with two decimals; a missing utility
        (nothing judged) prints ``n/a``, right-aligned in its 6-wide column,
        and ``-0.0`` prints ``0.00``, as production's table does. A ``v0.7.0``
        report has no ``UTIL`` column. The divergence is not printed: production's
        table never showed it (only its JSON carries it).

        Returns
        -------
        str
            The table, each line ending with a newline.

        See Also
        --------
        to_json : The machine-readable rendering.

        Examples
        --------
        >>> print(CalibrationReport(window_days=30).to_ascii(), end="")
        CONFIDENCE CALIBRATION REPORT (window: 30 days, observations: 0)
        <BLANKLINE>
        NAMESPACE                 SOURCE         COUNT  MEDIAN    MEAN    UTIL  HISTOGRAM (0.0..1.0)
        (no observations in window)
        """
        judges = self.judges
        lines = [f"CONFIDENCE CALIBRATION REPORT (window: {self.window_days} days, "
                 f"observations: {self.total_observations})", "", _HEADER if judges else _HEADER_V070]
        if len(self.rows) == 0:
            lines.append("(no observations in window)")
        utils = self.rows["consumption_utility"] if judges else [None] * len(self.rows)
        for ns, src, c, med, mu, buckets, u in zip(
                self.rows["namespace"], self.rows["source"], self.rows["count"], self.rows["median"],
                self.rows["mean"], self.rows["buckets"], utils, strict=True):
            hist = "".join("." if int(b) == 0 else "#" for b in buckets)
            head = f"{_text(ns):<24}  {_text(src):<12}  {int(c):>6}  {_two_places(med):>6}  {_two_places(mu):>6}  "
            if judges:
                util = "n/a" if _util(u) is None else _two_places(u)
                lines.append(f"{head}{util:>6}  {hist}")
            else:
                lines.append(f"{head}{hist}")
        return "\n".join(line.rstrip(" ") for line in lines) + "\n"

    def __str__(self) -> str:
        return self.to_ascii()


# ---------------------------------------------------------------- aggregation


class _References:
    """An object array's reference slots seen as pointer-sized integers (array interface).

    Holds the array, so the view (whose base this is) keeps every object alive;
    CPython never moves an object, so equal integers mean the same object.
    """

    def __init__(self, objects: np.ndarray):
        self.objects = objects
        self.__array_interface__ = {"version": 3, "shape": objects.shape, "strides": objects.strides,
                                    "typestr": np.dtype(np.intp).str,
                                    "data": (objects.__array_interface__["data"][0], True)}


#: Rows :func:`_codes` looks at to tell a column of shared string objects from fresh ones.
_HEAD_ROWS = 4096


def _codes(column: pd.Series, rows: np.ndarray, *, sort: bool, na_sentinel: bool):
    """``pd.factorize(column.to_numpy(object)[rows], sort=sort, use_na_sentinel=na_sentinel)``,
    hashing each distinct *object* once instead of each row.

    Rows that hold the same object (a column built from a few strings, a
    categorical) are grouped first by reference, an integer hash; one object
    of each reference is then factorized as the full column would be, so
    equal values held by distinct objects still merge, and codes and uniques
    (the first row's object of each value, sorted when asked) are the same.
    When the first :data:`_HEAD_ROWS` rows already hold mostly distinct
    objects (a fresh string per cell, as rows fetched one by one from
    ``sqlite3`` hold them) grouping by reference saves nothing, and the rows'
    values are factorized directly. Any other dtype is coded by
    :func:`thatchlab.core.dtypes.factorize` (categorical codes, Arrow's
    dictionary encoding) to the same codes and values.
    """
    if column.dtype != object:     # string, Arrow-backed or categorical: coded without hashing objects
        return factorize(column, rows, sort=sort, use_na_sentinel=na_sentinel)
    objects = column.to_numpy(object)
    references = np.asarray(_References(objects))
    head = references.take(rows[:_HEAD_ROWS])
    if 4 * len(pd.unique(head)) > len(head) >= 64:       # mostly fresh objects: hash the values once
        return pd.factorize(objects.take(rows), sort=sort, use_na_sentinel=na_sentinel)
    ref_codes, distinct = pd.factorize(references.take(rows))
    one_row = np.empty(len(distinct), dtype=np.intp)
    one_row[ref_codes] = rows           # any row of each reference: they hold the same object
    labels, uniques = pd.factorize(objects.take(one_row), sort=sort, use_na_sentinel=na_sentinel)
    return labels.take(ref_codes), uniques


def _group_medians(v: np.ndarray, g: np.ndarray, counts: np.ndarray, ranks=None) -> np.ndarray:
    """Each group's median of ``v`` (the mean of the two middle values for an even
    count; NaN sorts last, as in a sort).

    The rows are put group by group in row order with one stable counting sort
    of the group codes; each group then selects its middle values
    (``partition``) instead of sorting them. With ``-0.0`` beside ``0.0`` which
    one is "the middle" follows row order, so the groups are sorted stably.
    ``ranks`` (default the middle ones) are the two positions per group to
    average, in each group's sorted order.
    """
    starts = np.concatenate(([0], np.cumsum(counts)[:-1])).tolist()
    small = np.uint16 if len(counts) <= 2**16 else np.int64    # 16-bit keys sort by radix
    vs = v.take(np.argsort(g.astype(small), kind="stable"))
    zero = v == 0
    stable = bool(zero.any()) and bool(np.signbit(v[zero]).any())
    lo_rank, hi_rank = ((counts - 1) // 2, counts // 2) if ranks is None else ranks
    lo_rank, hi_rank = lo_rank.tolist(), hi_rank.tolist()
    lo, hi = np.empty(len(counts)), np.empty(len(counts))
    for j, (a, c) in enumerate(zip(starts, counts.tolist())):
        part = vs[a: a + c]            # a view: vs is ours to reorder
        if stable:
            part.sort(kind="stable")
        elif c > 2 or lo_rank[j] == hi_rank[j]:   # the two of two values: their sum ignores the order
            part.partition((lo_rank[j], hi_rank[j]))
        lo[j], hi[j] = part[lo_rank[j]], part[hi_rank[j]]
    return (lo + hi) / 2.0


def _bucket_medians(v: np.ndarray, g: np.ndarray, counts: np.ndarray, hist: np.ndarray, cell: np.ndarray):
    """:func:`_group_medians` read from the median's buckets alone, or None when ``v`` holds a NaN.

    A bucket (:func:`_bucket_cells`) never decreases as the value grows, so a
    group's values in order are its buckets' values one bucket after another,
    and a stable sort keeps row order among equal values inside a bucket as it
    does in the whole group. The histogram ``hist`` therefore names the bucket
    holding each middle value; only the rows of those (at most two) buckets
    per group are gathered, about a tenth of the window, and their middle
    values selected at the ranks less the rows of the buckets below. A NaN
    sits in bucket 0 but sorts last, so then the answer is None and the caller
    sorts whole groups.
    """
    if np.isnan(v).any():
        return None
    n_groups = len(counts)
    below = np.cumsum(hist, axis=1)                        # rows at or below each bucket, per group
    lo_rank, hi_rank = (counts - 1) // 2, counts // 2
    lo_b = (below <= lo_rank[:, None]).sum(axis=1)         # the bucket of each middle value
    hi_b = (below <= hi_rank[:, None]).sum(axis=1)
    first = np.where(lo_b > 0, below[np.arange(n_groups), np.maximum(lo_b - 1, 0)], 0)
    wanted = np.zeros((n_groups, 10), dtype=bool)
    wanted[np.arange(n_groups), lo_b] = True
    wanted[np.arange(n_groups), hi_b] = True
    picked = np.flatnonzero(np.repeat(wanted.ravel(), 3).take(cell))    # a cell is (g·10 + bucket)·3 + state
    sub_counts = np.bincount(g.take(picked), minlength=n_groups)
    return _group_medians(v.take(picked), g.take(picked), sub_counts, ranks=(lo_rank - first, hi_rank - first))


def report_rows(obs: pd.DataFrame, rows: np.ndarray, *, access=None, release=None) -> pd.DataFrame:
    """The report's rows over the observations ``obs.iloc[rows]`` (``rows`` ascending, not empty).

    ``release`` (default the newest) decides the columns (:func:`report_columns`);
    ``access`` holds, per row of ``obs``, the ``access_count`` of the row's memory
    (0 for an orphan, as production's ``COALESCE``; ``None``: all 0).

    One group per (namespace, source) present, sorted by namespace then
    source (a missing key is a group of its own, last); over
    ``derived_confidence``: count, median (:func:`_group_medians`), mean (a
    sum in row order over the count), the 10 buckets ``min(int(clamp(v, 0,
    1)·10), 9)`` (NaN in bucket 0) and ``consumed / judged`` with every
    non-null ``recall_outcome`` judged (None when nothing is).

    ``consume_access_divergence`` (``a78a228``, ``calibrate.rs`` @a78a2284): None when
    nothing is judged, else ``consumed_count`` (outcome ``consumed``),
    ``unconsumed_count = judged − consumed`` (legacy outcomes included, as
    production subtracts), ``mean_access_consumed`` = the consumed rows' access
    sum over ``consumed_count`` and ``mean_access_unconsumed`` = the access sum
    of the rows whose outcome is exactly ``unconsumed`` over ``unconsumed_count``
    (a legacy outcome counts below the line, not above it); a mean is None when
    its count is 0.

    Each key column is factorized once over its distinct objects
    (:func:`_codes`); counts, sums, buckets and outcomes are ``bincount``
    passes, the buckets and outcomes one joint tally.
    """
    groups = _group_rows(obs, rows)
    g, counts, n_groups = groups.g, groups.counts, len(groups.counts)
    v = float_column(obs["derived_confidence"], "calibrate_from_shadow observations", "derived_confidence").take(rows)
    cell = _bucket_cells(v, g)
    is_consumed, is_unconsumed = _add_outcome_states(cell, obs, rows, with_access=access is not None)
    hist, n_consumed, n_judged = _tally(cell, n_groups)
    median = _bucket_medians(v, g, counts, hist, cell)
    out = {
        "namespace": groups.namespace,
        "source": groups.source,
        "count": counts.astype(np.int64),
        "median": _group_medians(v, g, counts) if median is None else median,
        "mean": np.bincount(g, weights=v, minlength=n_groups) / counts,
        "buckets": hist.tolist(),
        "consumption_utility": _utilities(n_consumed, n_judged),
    }
    if not _judges(release or latest_release("ai-memory")):
        return pd.DataFrame({c: out[c] for c in V070_COLUMNS})
    acc = None if access is None else np.asarray(access, dtype=np.float64).take(rows)
    out["consume_access_divergence"] = _divergences(g, n_judged, n_consumed, is_consumed, is_unconsumed, acc)
    return pd.DataFrame(out)      # one constructor: adding a column to a frame costs more


class _Groups(NamedTuple):
    """The (namespace, source) groups of a window's rows, in the report's order."""

    namespace: np.ndarray   # per group, its namespace (object)
    source: np.ndarray      # per group, its source (object)
    counts: np.ndarray      # per group, its number of rows
    g: np.ndarray           # per row, its group's number


def _group_rows(obs: pd.DataFrame, rows: np.ndarray) -> _Groups:
    """Number the (namespace, source) pairs present among ``rows`` in key order
    (namespace, then source; a missing key sorts last), each key column factorized
    once over its distinct objects (:func:`_codes`)."""
    ns_codes, ns_uni = _codes(obs["namespace"], rows, sort=True, na_sentinel=False)
    src_codes, src_uni = _codes(obs["source"], rows, sort=True, na_sentinel=False)
    n_src = max(len(src_uni), 1)
    key = ns_codes * n_src + src_codes
    # groups are the (namespace, source) pairs present, in key order: a count per key, no sort
    per_key = np.bincount(key, minlength=len(ns_uni) * n_src)
    groups = np.flatnonzero(per_key)
    n_groups = len(groups)
    if n_groups == per_key.size:
        g = key
    else:
        renumber = np.zeros(per_key.size, dtype=np.intp)
        renumber[groups] = np.arange(n_groups)
        g = renumber.take(key)
    namespace = pd.Series(ns_uni.to_numpy(object) if hasattr(ns_uni, "to_numpy") else ns_uni,
                          dtype=object).to_numpy()[groups // n_src]
    source = np.asarray(src_uni, dtype=object)[groups % n_src]
    return _Groups(namespace, source, per_key[groups], g)


def _bucket_cells(v: np.ndarray, g: np.ndarray) -> np.ndarray:
    """Each row's cell of the joint tally before its outcome state: ``(g·10 + bucket)·3``."""
    # bucket: clamp to [0, 1] with NaN to 0 (minimum keeps NaN, fmax drops it), ×10, floor, at most 9
    scaled = np.fmax(np.minimum(v, 1.0), 0.0)
    scaled *= 10.0
    cell = scaled.astype(np.intp)
    np.minimum(cell, 9, out=cell)
    cell += g * 10
    cell *= 3                           # outcome state: 0 null, 1 judged, 2 judged and consumed
    return cell


def _add_outcome_states(cell: np.ndarray, obs: pd.DataFrame, rows: np.ndarray, *, with_access: bool):
    """Add each row's outcome state to its ``cell`` in place (0 null, 1 judged, 2 judged and
    consumed; every non-null outcome is judged, legacy ``recalled``/``skipped`` included).

    Returns ``(is_consumed, is_unconsumed)``, the row masks the access sums need, or None
    where a mask is not needed: without access counts every access sum is 0.
    """
    if "recall_outcome" not in obs.columns:
        return None, None
    outcome = obs["recall_outcome"]
    is_consumed = is_unconsumed = None
    coded = isinstance(outcome.dtype, pd.CategoricalDtype) or is_arrow_dictionary(outcome.dtype)
    if is_text_dtype(outcome.dtype) and not coded:
        # Arrow text: judged = present, two Arrow comparisons instead of coding every value
        state = present(outcome).view(np.int8) + text_equal(outcome, "consumed").view(np.int8)
        state = state.take(rows)        # 0 null, 1 judged, 2 consumed: one gather for both tests
        cell += state
        if with_access:                 # without access counts every access sum is 0: no need to look
            is_consumed = state == 2
            is_unconsumed = text_equal(outcome, "unconsumed").take(rows)
        return is_consumed, is_unconsumed
    codes, uniques = _codes(outcome, rows, sort=False, na_sentinel=True)
    cell += codes >= 0                  # every non-null outcome, legacy recalled/skipped included
    hit = [j for j, u in enumerate(uniques) if isinstance(u, str) and u == "consumed"]
    if hit:
        is_consumed = codes == hit[0]
        cell += is_consumed
    miss = [j for j, u in enumerate(uniques) if isinstance(u, str) and u == "unconsumed"]
    if miss and with_access:
        is_unconsumed = codes == miss[0]
    return is_consumed, is_unconsumed


def _tally(cell: np.ndarray, n_groups: int):
    """One ``bincount`` of the cells: per group its 10 buckets, consumed and judged counts."""
    tally = np.bincount(cell, minlength=n_groups * 30).reshape(n_groups, 10, 3)
    hist = tally.sum(axis=2)
    n_consumed = tally[:, :, 2].sum(axis=1)
    n_judged = n_consumed + tally[:, :, 1].sum(axis=1)
    return hist, n_consumed, n_judged


def _utilities(n_consumed: np.ndarray, n_judged: np.ndarray) -> pd.Series:
    """``consumed / judged`` per group, None where nothing is judged."""
    with np.errstate(invalid="ignore", divide="ignore"):
        util = n_consumed / n_judged
    return pd.Series([float(u) if j > 0 else None for u, j in zip(util, n_judged, strict=True)], dtype=object)


def _divergences(g, n_judged, n_consumed, is_consumed, is_unconsumed, acc) -> pd.Series:
    """Each group's ``consume_access_divergence`` (None when nothing is judged) from the
    window rows' access counts ``acc`` (None: all 0) and outcome masks (None: no such row)."""
    n_groups = len(n_judged)
    sum_c = (np.bincount(g, weights=np.where(is_consumed, acc, 0.0), minlength=n_groups)
             if is_consumed is not None and acc is not None else np.zeros(n_groups))
    sum_u = (np.bincount(g, weights=np.where(is_unconsumed, acc, 0.0), minlength=n_groups)
             if is_unconsumed is not None else np.zeros(n_groups))
    div = []
    for j in range(n_groups):
        judged, consumed = int(n_judged[j]), int(n_consumed[j])
        if judged == 0:
            div.append(None)
            continue
        unconsumed = judged - consumed
        div.append({"consumed_count": consumed, "unconsumed_count": unconsumed,
                    "mean_access_consumed": float(sum_c[j]) / consumed if consumed else None,
                    "mean_access_unconsumed": float(sum_u[j]) / unconsumed if unconsumed else None})
    return pd.Series(div, dtype=object)
