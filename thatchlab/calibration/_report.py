"""The confidence calibration report of ai-memory and its three renderings.

A report holds the window, the number of observations in it and one row per
(namespace, source): count, median, mean, a 10-bucket histogram of the derived
confidence and the consumption utility. ``to_ascii`` reproduces the operator
table byte for byte — ``n/a`` for a utility nothing was judged for, ``0.00``
for a negative zero — and ``to_json`` the report envelope's keys.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field

import pandas as pd

__all__ = ["CalibrationReport", "REPORT_COLUMNS", "empty_rows"]

#: Columns of :attr:`CalibrationReport.rows`, in order.
REPORT_COLUMNS = ("namespace", "source", "count", "median", "mean", "buckets", "consumption_utility")
_HEADER = (f"{'NAMESPACE':<24}  {'SOURCE':<12}  {'COUNT':>6}  {'MEDIAN':>6}  {'MEAN':>6}  {'UTIL':>6}  "
           "HISTOGRAM (0.0..1.0)")


def empty_rows() -> pd.DataFrame:
    """An empty rows table with the report's columns and dtypes."""
    return pd.DataFrame({"namespace": pd.Series(dtype=object), "source": pd.Series(dtype=object),
                         "count": pd.Series(dtype="int64"), "median": pd.Series(dtype="float64"),
                         "mean": pd.Series(dtype="float64"), "buckets": pd.Series(dtype=object),
                         "consumption_utility": pd.Series(dtype=object)})


def _missing(v) -> bool:
    return v is None or (isinstance(v, float) and math.isnan(v))


def _text(v) -> str:
    return "" if _missing(v) else str(v)


def _util(v):
    return None if v is None or (isinstance(v, float) and math.isnan(v)) else float(v)


def _two_places(v) -> str:
    """``{:.2f}`` as production prints it: ``-0.0`` is ``0.00`` (adding 0.0 drops the sign)."""
    return f"{float(v) + 0.0:.2f}"


@dataclass
class CalibrationReport:
    """Per-(namespace, source) calibration baselines over a window of shadow observations.

    Attributes
    ----------
    window_days : the window in days (an int when integral).
    total_observations : observations inside the window.
    rows : DataFrame with :data:`REPORT_COLUMNS`, sorted by namespace then source;
        ``buckets`` holds lists of 10 ints, ``consumption_utility`` a float or
        None (never 0.0 when nothing was judged).
    """

    window_days: float = 30
    total_observations: int = 0
    rows: pd.DataFrame = field(default_factory=empty_rows)

    def to_frame(self, wide: bool = False) -> pd.DataFrame:
        """The rows as a DataFrame (a copy); ``wide=True`` spreads ``buckets`` into
        ``bucket_0`` … ``bucket_9``. ``attrs`` carry the window and total."""
        out = self.rows.copy()
        if wide:
            spread = pd.DataFrame(out["buckets"].tolist() if len(out) else [],
                                  columns=[f"bucket_{i}" for i in range(10)], index=out.index)
            out = pd.concat([out.drop(columns="buckets"), spread.astype("int64")], axis=1)
        out.attrs = {"window_days": self.window_days, "total_observations": self.total_observations}
        return out

    def to_dict(self) -> dict:
        """The report envelope as plain Python (keys as :meth:`to_json`)."""
        return {
            "window_days": self.window_days,
            "total_observations": int(self.total_observations),
            "rows": [
                {"namespace": None if _missing(ns) else str(ns),
                 "source": None if _missing(src) else str(src),
                 "count": int(c), "median": float(med), "mean": float(mu),
                 "buckets": [int(b) for b in buckets], "consumption_utility": _util(u)}
                for ns, src, c, med, mu, buckets, u in zip(
                    self.rows["namespace"], self.rows["source"], self.rows["count"],
                    self.rows["median"], self.rows["mean"], self.rows["buckets"],
                    self.rows["consumption_utility"], strict=True)
            ],
        }

    def to_json(self, indent=None) -> str:
        """JSON text with keys ``window_days, total_observations, rows`` (each row:
        ``namespace, source, count, median, mean, buckets, consumption_utility``)."""
        return json.dumps(self.to_dict(), indent=indent)

    def to_ascii(self) -> str:
        """The operator table: title, blank line, column header, one line per row
        (or ``(no observations in window)``); no trailing spaces; ends with a newline.

        Median, mean and utility print with two decimals; a missing utility
        (nothing judged) prints ``n/a``, right-aligned in its 6-wide column,
        and ``-0.0`` prints ``0.00``, as production's table does.

        >>> print(CalibrationReport(window_days=30).to_ascii(), end="")
        CONFIDENCE CALIBRATION REPORT (window: 30 days, observations: 0)
        <BLANKLINE>
        NAMESPACE                 SOURCE         COUNT  MEDIAN    MEAN    UTIL  HISTOGRAM (0.0..1.0)
        (no observations in window)
        """
        lines = [f"CONFIDENCE CALIBRATION REPORT (window: {self.window_days} days, "
                 f"observations: {self.total_observations})", "", _HEADER]
        if len(self.rows) == 0:
            lines.append("(no observations in window)")
        for ns, src, c, med, mu, buckets, u in zip(
                self.rows["namespace"], self.rows["source"], self.rows["count"], self.rows["median"],
                self.rows["mean"], self.rows["buckets"], self.rows["consumption_utility"], strict=True):
            util = "n/a" if _util(u) is None else _two_places(u)
            hist = "".join("." if int(b) == 0 else "#" for b in buckets)
            lines.append(f"{_text(ns):<24}  {_text(src):<12}  {int(c):>6}  {_two_places(med):>6}  "
                         f"{_two_places(mu):>6}  {util:>6}  {hist}")
        return "\n".join(line.rstrip(" ") for line in lines) + "\n"

    def __str__(self) -> str:
        return self.to_ascii()
