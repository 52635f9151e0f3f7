"""Timestamps: parsing aware UTC times and production's text formats.

Engines never read the wall clock on their own: time arrives as an argument
or from an injected clock. Naive datetimes are rejected because a replay that
mixes local and UTC times silently reorders events.
"""

from __future__ import annotations

import datetime as _dt

import numpy as np
import pandas as pd

from thatchlab.core.dtypes import all_text, is_text_dtype, native_times
from thatchlab.core.errors import TimeError

__all__ = ["TIME_RANGE", "as_utc", "as_utc_series", "utc_column", "iso_ms", "iso_s", "system_clock", "resolve_now"]

UTC = _dt.timezone.utc


def as_utc(value, *, what: str = "time") -> pd.Timestamp:
    """Parse an aware time (datetime, Timestamp, ISO text with offset/Z, epoch
    seconds as int/float) into a UTC :class:`pandas.Timestamp`.

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


def as_utc_series(values, *, what: str = "ts") -> pd.Series:
    """Parse a column of aware times to ``datetime64[ns, UTC]``; naive values raise."""
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

    >>> iso_ms("2026-11-29T21:00:00.123987Z")
    '2026-11-29T21:00:00.123Z'
    """
    t = as_utc(ts)
    return t.strftime("%Y-%m-%dT%H:%M:%S.") + f"{t.microsecond // 1000:03d}Z"


def iso_s(ts) -> str:
    """Second ISO text, truncated, as SQLite's ``strftime('%Y-%m-%dT%H:%M:%SZ')``.

    >>> iso_s("2026-11-29T21:00:00.999Z")
    '2026-11-29T21:00:00Z'
    """
    return as_utc(ts).strftime("%Y-%m-%dT%H:%M:%SZ")


def system_clock() -> pd.Timestamp:
    """The wall clock; used only when neither ``now`` nor a clock is given."""
    return pd.Timestamp.now(tz="UTC")


def resolve_now(now=None, clock=None) -> pd.Timestamp:
    """``now`` if given, else the injected ``clock()``, else the system clock."""
    if now is not None:
        return as_utc(now, what="now")
    if clock is not None:
        return as_utc(clock(), what="clock()")
    return system_clock()


def utc_column(values, what: str) -> pd.Series:
    """A column of aware times as ``datetime64[ns, UTC]`` (ISO text parsed in one pass).

    Arrow timestamps are taken as pandas' own (:func:`thatchlab.core.dtypes.native_times`)
    and ``string``/Arrow text columns are recognised by their dtype, without a pass per row.
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
