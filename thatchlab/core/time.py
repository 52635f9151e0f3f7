"""Timestamps: parsing aware UTC times and production's text formats.

Engines never read the wall clock on their own: time arrives as an argument
or from an injected clock. Naive datetimes are rejected because a replay that
mixes local and UTC times silently reorders events.
"""

from __future__ import annotations

import datetime as _dt

import numpy as np
import pandas as pd

from thatchlab.core.docstrings import fill_doc
from thatchlab.core.dtypes import all_text, is_text_dtype, native_times
from thatchlab.core.errors import TimeError

__all__ = ["TIME_RANGE", "as_utc", "as_utc_series", "utc_column", "iso_ms", "iso_s", "system_clock", "resolve_now"]

# the Returns and Raises of the two column converters, written once (filled in by fill_doc)
_UTC_RETURNS = """
Returns
-------
pandas.Series
    ``datetime64[ns, UTC]``.

Raises
------
TimeError
    A naive column, or a value :func:`as_utc` refuses.
"""

UTC = _dt.timezone.utc


def as_utc(value, *, what: str = "time") -> pd.Timestamp:
    """Parse an aware time (datetime, Timestamp, ISO text with offset/Z, epoch
    seconds as int/float) into a UTC :class:`pandas.Timestamp`.

    Parameters
    ----------
    value : datetime, pandas.Timestamp, str, int or float
        The time: aware, or epoch seconds.
    what : str, default="time"
        How error messages name the value.

    Returns
    -------
    pandas.Timestamp
        The time in UTC, nanosecond unit.

    Raises
    ------
    TimeError
        ``value`` is missing, naive, unparsable, or outside :data:`TIME_RANGE`.

    See Also
    --------
    as_utc_series, utc_column : The same for a column.

    Examples
    --------
    >>> as_utc("2026-11-29T21:00:00.123Z").isoformat()
    '2026-11-29T21:00:00.123000+00:00'
    """
    if value is None:
        raise TimeError(f"{what}: expected an aware timestamp, got None")
    if isinstance(value, bool):
        raise TimeError(f"{what}: expected an aware timestamp, got {value!r}")
    if isinstance(value, (int, float, np.integer, np.floating)):
        if not np.isfinite(value):
            raise TimeError(f"{what}: expected a finite epoch time, got {value!r}")
        try:
            return _in_range(pd.Timestamp(float(value), unit="s", tz="UTC"), value, what)
        except (OverflowError, ValueError):  # OutOfBoundsDatetime is a ValueError
            raise TimeError(f"{what}: {value!r} is outside the supported range {TIME_RANGE}") from None
    try:
        ts = pd.Timestamp(value)
    except pd.errors.OutOfBoundsDatetime:
        raise TimeError(f"{what}: {value!r} is outside the supported range {TIME_RANGE}") from None
    except (TypeError, ValueError, OverflowError) as exc:
        raise TimeError(f"{what}: cannot parse {value!r} as a timestamp ({exc})") from None
    if ts is pd.NaT or pd.isna(ts):
        raise TimeError(f"{what}: expected an aware timestamp, got {value!r}")
    if ts.tzinfo is None:
        raise TimeError(
            f"{what}: naive datetime {value!r}; expected a timezone-aware time (UTC, e.g. '...Z')")
    return _in_range(ts.tz_convert("UTC"), value, what)


#: The times pandas' nanosecond timestamps hold (every time column is ``datetime64[ns, UTC]``).
TIME_RANGE = "1677-09-21T00:12:43Z to 2262-04-11T23:47:16Z"
_LO, _HI = pd.Timestamp.min.tz_localize("UTC"), pd.Timestamp.max.tz_localize("UTC")


def _in_range(ts: pd.Timestamp, value, what) -> pd.Timestamp:
    if ts < _LO or ts > _HI:
        raise TimeError(f"{what}: {value!r} is outside the supported range {TIME_RANGE}")
    return ts.as_unit("ns")


@fill_doc(utc_returns=_UTC_RETURNS)
def as_utc_series(values, *, what: str = "ts") -> pd.Series:
    """Parse a column of aware times to ``datetime64[ns, UTC]``; naive values raise.

    Each value is parsed as :func:`as_utc` does; a missing value becomes ``NaT``.

    Parameters
    ----------
    values : array-like
        The times.
    what : str, default="ts"
        How error messages name the column (a value is ``what[i]``).

    {utc_returns}

    See Also
    --------
    utc_column : The same, parsing ISO text in one pass.
    as_utc : One value.
    """
    s = native_times(pd.Series(values))
    if isinstance(s.dtype, pd.DatetimeTZDtype):
        return _ns(s, what)
    if pd.api.types.is_datetime64_dtype(s.dtype):
        raise TimeError(f"{what}: naive datetimes; expected timezone-aware times (UTC)")
    out = []
    for i, v in enumerate(s.tolist()):
        if v is None or v is pd.NA or (isinstance(v, float) and np.isnan(v)):
            out.append(pd.NaT)
            continue
        out.append(as_utc(v, what=f"{what}[{i}]"))
    return pd.Series(pd.to_datetime(out, utc=True), index=s.index).dt.as_unit("ns")


def _ns(s: pd.Series, what: str) -> pd.Series:
    """An aware column in UTC nanoseconds; a time outside that range raises TimeError."""
    utc = s.dt.tz_convert("UTC")
    bad = s.notna() & ((utc < _LO) | (utc > _HI))
    if bad.any():
        i = int(np.flatnonzero(bad.to_numpy())[0])
        raise TimeError(f"{what}[{i}]: {utc.iloc[i]} is outside the supported range {TIME_RANGE}")
    return utc.dt.as_unit("ns")


def iso_ms(ts) -> str:
    """Millisecond ISO text, truncated, as a JavaScript ``Date.toISOString()``.

    Parameters
    ----------
    ts : datetime, pandas.Timestamp, str, int or float
        An aware time, as :func:`as_utc` takes it.

    Returns
    -------
    str
        ``YYYY-MM-DDTHH:MM:SS.mmmZ``.

    See Also
    --------
    iso_s : Whole seconds.

    Examples
    --------
    >>> iso_ms("2026-11-29T21:00:00.123987Z")
    '2026-11-29T21:00:00.123Z'
    """
    t = as_utc(ts)
    return t.strftime("%Y-%m-%dT%H:%M:%S.") + f"{t.microsecond // 1000:03d}Z"


def iso_s(ts) -> str:
    """Second ISO text, truncated, as SQLite's ``strftime('%Y-%m-%dT%H:%M:%SZ')``.

    Parameters
    ----------
    ts : datetime, pandas.Timestamp, str, int or float
        An aware time, as :func:`as_utc` takes it.

    Returns
    -------
    str
        ``YYYY-MM-DDTHH:MM:SSZ``.

    See Also
    --------
    iso_ms : Milliseconds.

    Examples
    --------
    >>> iso_s("2026-11-29T21:00:00.999Z")
    '2026-11-29T21:00:00Z'
    """
    return as_utc(ts).strftime("%Y-%m-%dT%H:%M:%SZ")


def system_clock() -> pd.Timestamp:
    """The wall clock; used only when neither ``now`` nor a clock is given.

    Returns
    -------
    pandas.Timestamp
        The current time in UTC.

    See Also
    --------
    resolve_now
    """
    return pd.Timestamp.now(tz="UTC")


def resolve_now(now=None, clock=None) -> pd.Timestamp:
    """``now`` if given, else the injected ``clock()``, else the system clock.

    Parameters
    ----------
    now : datetime, pandas.Timestamp, str, int or float, optional
        An aware time, as :func:`as_utc` takes it.
    clock : callable, optional
        Called with no argument; returns an aware time.

    Returns
    -------
    pandas.Timestamp
        The time in UTC.

    See Also
    --------
    system_clock

    Examples
    --------
    >>> resolve_now("2026-01-02T03:04:05Z").isoformat()
    '2026-01-02T03:04:05+00:00'
    """
    if now is not None:
        return as_utc(now, what="now")
    if clock is not None:
        return as_utc(clock(), what="clock()")
    return system_clock()


@fill_doc(utc_returns=_UTC_RETURNS)
def utc_column(values, what: str) -> pd.Series:
    """A column of aware times as ``datetime64[ns, UTC]`` (ISO text parsed in one pass).

    Arrow timestamps are taken as pandas' own (:func:`thatchlab.core.dtypes.native_times`)
    and ``string``/Arrow text columns are recognised by their dtype, without a pass per row.
    Anything else is parsed value by value, as :func:`as_utc_series` does.

    Parameters
    ----------
    values : array-like or pandas.Series
        The times.
    what : str
        How error messages name the column.

    {utc_returns}

    See Also
    --------
    as_utc_series
    """
    s = pd.Series(values) if not isinstance(values, pd.Series) else values
    s = native_times(s)
    if isinstance(s.dtype, pd.DatetimeTZDtype):
        return _ns(s, what)
    if pd.api.types.is_datetime64_dtype(s.dtype):
        raise TimeError(f"{what}: naive datetimes; expected timezone-aware times (UTC)")
    if len(s) and (is_text_dtype(s.dtype) or all_text(s)):     # a text dtype: missing cells parse to NaT
        try:
            parsed = pd.to_datetime(s, format="ISO8601")
        except (TypeError, ValueError):
            parsed = None
        if parsed is not None and isinstance(parsed.dtype, pd.DatetimeTZDtype):
            return parsed.dt.tz_convert("UTC").dt.as_unit("ns")
    return as_utc_series(s, what=what)
