"""The calibration window as production draws it: the number of days, the cutoff and its text.

Production keeps ``observed_at`` as RFC 3339 text and compares it with the cutoff
written as chrono's ``to_rfc3339`` (``…+00:00``, 0/3/6/9 fractional digits), so
the window is a *text* comparison; the functions here reproduce it, comparing
instants directly where the text order is the time order. Shared by the report
and the GC in :mod:`thatchlab.calibration._shadow`.
"""

from __future__ import annotations

import numbers

import numpy as np
import pandas as pd

from thatchlab.core.dtypes import arrow_array, bool_values, epoch_ns, is_text_dtype, native_times
from thatchlab.core.dtypes import present as present_cells
from thatchlab.core.errors import InputError
from thatchlab.core.schema import OBSERVED_AT_TEXT
from thatchlab.core.time import as_utc, utc_column

__all__ = ["MAX_WINDOW_DAYS", "finite_days", "window_days", "cutoff_text", "rfc3339", "observed_at_text",
           "before_cutoff", "cutoff_ns"]

_DAY_NS = 86_400 * 10**9


def finite_days(days, what="days") -> float:
    """``days`` as a float; InputError (naming ``what``) unless it is a finite real number."""
    if isinstance(days, bool) or not isinstance(days, numbers.Real) or np.isnan(days) or np.isinf(days):
        raise InputError(f"{what}: expected a finite number of days, got {days!r}")
    return float(days)


#: The range of ``days`` production accepts for a calibration window (inclusive).
MAX_WINDOW_DAYS = 36_500


def window_days(days) -> float:
    """A report window's ``days`` as a float; InputError outside production's 0..=36500."""
    ok = (not isinstance(days, bool) and isinstance(days, numbers.Real) and not np.isnan(days)
          and 0 <= days <= MAX_WINDOW_DAYS)
    if not ok:
        raise InputError(f"days: expected a number of days in 0..={MAX_WINDOW_DAYS} (inclusive), "
                         f"got {days!r}")
    return float(days)


def cutoff_text(cutoff) -> str:
    """The cutoff as production writes it before comparing: RFC 3339 in UTC with
    ``+00:00`` and as many fractional digits as the instant needs (none, 3, 6
    or 9, as chrono's ``to_rfc3339`` does).

    Parameters
    ----------
    cutoff : aware time or RFC 3339 text
        The instant.

    Returns
    -------
    str
        Its text, ending ``+00:00``.

    See Also
    --------
    observed_at_text : The text thatchlab writes for an observation time.

    Examples
    --------
    >>> cutoff_text("2025-12-11T19:19:39.890849474Z")
    '2025-12-11T19:19:39.890849474+00:00'
    >>> cutoff_text("2026-01-01T00:00:00.5Z"), cutoff_text("2026-01-01T00:00:00Z")
    ('2026-01-01T00:00:00.500+00:00', '2026-01-01T00:00:00+00:00')
    """
    return rfc3339(as_utc(cutoff, what="cutoff").as_unit("ns").value)


def rfc3339(ns: int) -> str:
    """chrono's ``to_rfc3339`` of an instant in epoch nanoseconds (see :func:`cutoff_text`)."""
    frac = ns % 1_000_000_000
    if frac == 0:
        digits = ""
    elif frac % 1_000_000 == 0:
        digits = f".{frac // 1_000_000:03d}"
    elif frac % 1_000 == 0:
        digits = f".{frac // 1_000:06d}"
    else:
        digits = f".{frac:09d}"
    return pd.Timestamp(ns - frac, tz="UTC").strftime("%Y-%m-%dT%H:%M:%S") + digits + "+00:00"


def observed_at_text(values) -> list:
    """The text thatchlab writes for each observation time (the store section's
    ``observed_at``): RFC 3339 in UTC with ``+00:00``, pandas' ``isoformat``
    (no fraction, 6 or 9 digits). Text stays as it is; missing values are None.

    Parameters
    ----------
    values : sequence, array or Series
        Aware times, RFC 3339 texts or missing values.

    Returns
    -------
    list of str or None
        One text per value.

    See Also
    --------
    cutoff_text : The text of a window's cutoff.

    Examples
    --------
    >>> observed_at_text([pd.Timestamp("2026-01-01T01:00:00.5+01:00"), "2026-01-01T00:00:00Z", None])
    ['2026-01-01T00:00:00.500000+00:00', '2026-01-01T00:00:00Z', None]
    """
    out = []
    for v in (values.tolist() if hasattr(values, "tolist") else list(values)):
        if isinstance(v, str):
            out.append(v)
        elif v is None or v is pd.NA or v is pd.NaT or (isinstance(v, float) and np.isnan(v)):
            out.append(None)
        else:
            out.append(as_utc(v, what="observed_at").isoformat())
    return out


def _text_before(col: pd.Series, instants_before: np.ndarray, cut: str) -> np.ndarray:
    """``text < cut`` per row (a missing text: False) for the text a column stands for.

    A timestamp column's text orders like its instants (``instants_before``);
    a ``string``/Arrow text column is compared by Arrow's kernel, a categorical
    by its categories; only an object column is compared row by row.
    """
    if isinstance(col.dtype, pd.DatetimeTZDtype):
        return np.asarray(instants_before, dtype=bool)
    if isinstance(col.dtype, pd.CategoricalDtype) and is_text_dtype(col.dtype):
        cats = np.asarray(col.cat.categories.astype(object), dtype=object)
        cat_before = np.append(cats < cut, False).astype(bool)     # code -1 (missing) picks the last
        return cat_before.take(col.cat.codes.to_numpy(np.intp))
    if is_text_dtype(col.dtype):
        import pyarrow as pa  # optional: only an Arrow-backed text column gets here
        import pyarrow.compute as pc  # optional: as above

        arr = arrow_array(col)
        return bool_values(pc.less(arr, pa.scalar(cut, type=arr.type)))
    texts = observed_at_text(col)
    return np.fromiter((t is not None and t < cut for t in texts), dtype=bool, count=len(texts))


def before_cutoff(obs: pd.DataFrame, cutoff_ns: int):
    """(observed_at < cutoff, observed_at present) per row, compared as production does.

    Production compares the stored RFC 3339 *text* with :func:`cutoff_text`.
    Stored text (an ``observed_at_text`` column, or ``observed_at`` given as
    strings) is compared as it is. A column of timestamps stands for the text
    thatchlab writes (:func:`observed_at_text`), all in one UTC format; for
    such text the string order is the time order (a shorter fraction is
    followed by ``+``, which sorts before every digit), so the instants are
    compared directly and give the same answer. Arrow timestamps are such a
    column; text in a ``string``/Arrow/categorical column is compared by
    Arrow's kernel, with no pass per row.
    """
    has_text = OBSERVED_AT_TEXT in obs.columns
    parsed = epoch_ns(obs["observed_at"])   # UTC nanoseconds already (Arrow's read in place), in range
    if parsed is not None and not has_text:
        present = parsed != np.iinfo(np.int64).min
        return (parsed < cutoff_ns) & present, present
    col = native_times(obs["observed_at"])
    if parsed is None:
        parsed = utc_column(col, "observations.observed_at").array.asi8     # validates every row
    present = parsed != np.iinfo(np.int64).min
    cut = rfc3339(cutoff_ns)
    own = _text_before(col, parsed < cutoff_ns, cut)
    if not has_text:
        return own & present, present
    stored = obs[OBSERVED_AT_TEXT]
    if is_text_dtype(stored.dtype):
        before = np.where(present_cells(stored), _text_before(stored, own, cut), own)
    else:
        is_str = np.fromiter((isinstance(t, str) for t in stored.tolist()), dtype=bool, count=len(stored))
        before = own.copy()
        before[is_str] = [t < cut for t in stored[is_str].tolist()]
    return before & present, present


def cutoff_ns(now, d: float, days) -> int:
    """``now − d`` days in epoch nanoseconds; it must be a time pandas represents."""
    now_ns = as_utc(now, what="now").as_unit("ns").value
    cutoff_ns = now_ns - int(round(d * _DAY_NS))
    if not pd.Timestamp.min.value <= cutoff_ns <= pd.Timestamp.max.value:
        raise InputError(f"days: now − {days!r} days falls outside the years 1677–2262 thatchlab represents; "
                         "expected a smaller window")
    return cutoff_ns
