"""Read-side currency of a belief (weighed when read, never written): formulas only.

A belief's currency halves every half-life since it was last evidenced; a
named-date claim is fully current until its ``valid_to`` and history after
it. Currency is computed when a row is read, never stored, so nothing about
a row changes on time alone. Every function takes scalars or columns.

The order of the cases is production's, edges included: ``valid_to`` is
looked at before the half-life (half-life 0 beside a ``valid_to`` one second
in the past is 0.0, not an error); a NaN half-life gives a NaN currency,
whose band is ``history``; the age is the absolute time between two instants
(``2026-10-24T02:07:33+01:00`` to ``2026-10-25T01:07:33+00:00`` is one day
exactly); a stored half-life wins over any class, even one thatchlab does
not know, and an empty class is no class.
"""

from __future__ import annotations

import datetime as _dt
from typing import NamedTuple

import numpy as np
import pandas as pd

from thatchlab.core.dtypes import epoch_ns, float_values, is_arrow_timestamp, native_times
from thatchlab.core.errors import InputError, TimeError
from thatchlab.core.time import as_utc, as_utc_series

__all__ = ["compute_currency", "currency_band", "evidence_clock",
           "currency_reference", "band_reference", "NS_PER_DAY"]

#: Nanoseconds in a day; ages are ``delta_ns / NS_PER_DAY`` in float64.
NS_PER_DAY = 86_400_000_000_000.0
_NAT = np.iinfo(np.int64).min
_BAND_LABELS = np.array(["current", "fading", "history", None], dtype=object)


def _is_scalar(x) -> bool:
    return x is None or np.ndim(x) == 0


def _times(values, what):
    """(int64 ns since epoch, NaT mask, scalar?) of aware times; naive raises."""
    if _is_scalar(values):
        if values is None or (isinstance(values, float) and np.isnan(values)) or values is pd.NaT:
            return np.array([_NAT]), np.array([True]), True
        return np.array([as_utc(values, what=what).as_unit("ns").value]), np.array([False]), True
    if isinstance(values, np.ndarray) and np.issubdtype(values.dtype, np.datetime64):
        raise TimeError(f"{what}: numpy datetime64 values are naive; expected timezone-aware "
                        "times (e.g. a datetime64[ns, UTC] column)")
    if isinstance(values, pd.Series) and is_arrow_timestamp(values.dtype):
        ns = epoch_ns(values)           # aware Arrow nanoseconds: read in place
        if ns is not None:
            return ns, ns == _NAT, False
        values = native_times(values)   # another unit or naive: as pandas' datetime64, no pass per row
    if isinstance(values, (pd.Series, pd.Index)) and isinstance(values.dtype, pd.DatetimeTZDtype):
        arr = values.array          # epoch nanoseconds do not depend on the zone: no conversion
        ns = (arr if arr.unit == "ns" else as_utc_series(values, what=what).array).asi8   # range checked
    else:
        ns = pd.DatetimeIndex(as_utc_series(pd.Series(values, dtype=object), what=what)).asi8
    return ns, ns == _NAT, False


def _missing(v) -> bool:
    """A value that means "no half-life": None, pandas' NA or NaT (never a float NaN)."""
    return v is None or v is pd.NA or v is pd.NaT


def _half_lives(values):
    """(float64 half-lives, NaN mask, scalar?) without the > 0 check.

    A missing half-life (no decay) is NaN in the first array. A half-life that
    *is* NaN is kept apart in the mask, so it can give a NaN currency as in
    production: a scalar ``float("nan")`` or a NaN element of an object column.
    In a numeric column NaN is pandas' missing value and means no half-life.
    """
    if _is_scalar(values):
        scalar = True
        if _missing(values):
            return np.array([np.nan]), np.array([False]), True
        try:
            hl = np.array([float(values)], dtype=np.float64)
        except (TypeError, ValueError):
            raise InputError(f"half_life_days: expected a number (days) or None, got {values!r}") from None
        return hl, np.isnan(hl), scalar
    if isinstance(values, pd.Series) and values.dtype.kind in "fiu":
        num = float_values(values)       # nullable and Arrow numbers: a missing value is NaN
    else:
        num = np.asarray(values)
    if num.dtype.kind in "fiu":          # numeric column: no per-value conversion
        hl = num.astype(np.float64, copy=False)
        return hl, np.zeros(hl.shape, dtype=bool), False
    arr = np.asarray(pd.Series(values, dtype=object).to_numpy(), dtype=object)
    missing = np.fromiter((_missing(v) for v in arr), dtype=bool, count=arr.size)
    try:
        hl = pd.to_numeric(pd.Series(np.where(missing, None, arr)), errors="raise").to_numpy(
            dtype=np.float64, na_value=np.nan)
    except (TypeError, ValueError):
        raise InputError(f"half_life_days: expected numbers (days) or None, got {arr[:3]!r}") from None
    return hl, np.isnan(hl) & ~missing, False


def _check_positive(hl, needed=None):
    """Raise for a half-life <= 0 on a row that needs one (NaN compares False)."""
    bad = hl <= 0
    if needed is not None:
        bad = bad & needed
    if bad.any():
        pos = int(np.flatnonzero(bad)[0])
        value = np.broadcast_to(hl, bad.shape).ravel()[pos]
        raise InputError(f"half_life_days: expected > 0 days (or None for no decay), got "
                         f"{value!r} at position {pos}")


def _index_of(*values):
    for v in values:
        if isinstance(v, pd.Series):
            return v.index
    return None


def compute_currency(last_evidenced_at, now, half_life_days, valid_to=None):
    """Currency of beliefs at ``now``: the weight a reader gives each row.

    .. math::

        c = \\begin{cases}
            1 \\text{ if } now \\le valid\\_to \\text{ else } 0 & valid\\_to \\text{ set} \\\\
            1 & half\\_life \\text{ None} \\\\
            \\text{NaN} & half\\_life \\text{ NaN} \\\\
            0.5^{\\max(age, 0) / half\\_life} & \\text{otherwise}
        \\end{cases}

    with ``age = (now - last_evidenced_at)`` in days (nanoseconds / 86400e9).

    Production's order, case by case:

    * ``valid_to`` is looked at first, so whatever the half-life is (even 0,
      which raises on its own) does not matter for a named-date claim: a
      half-life of 0 with ``valid_to`` one second before ``now`` gives 0.0.
    * A half-life that is NaN gives a NaN currency (band ``history``), not 1.0.
      In a numeric column NaN is pandas' missing value and still means "no
      half-life"; pass a scalar or an object column to get the NaN case.
    * The age is the absolute time between the two instants, whatever zones
      they are written in: last evidence ``2026-10-24T02:07:33+01:00`` and now
      ``2026-10-25T01:07:33+00:00`` are 86,400 s apart, so a 1-day half-life
      gives exactly 0.5 (a wall-clock difference across the October DST change
      would say 23 h).

    Parameters
    ----------
    last_evidenced_at : aware time or column of them
        The evidence clock (missing → currency ``None``/NaN when it is needed).
    now : aware time or column
        The time of the read.
    half_life_days : number, None, NaN or column
        ``None`` is no decay; in numeric columns NaN is None.
    valid_to : aware time, None or column, default=None
        The named date (NaT = not set); inclusive.

    Returns
    -------
    float, None, ndarray or Series
        For scalar inputs a float or None (None when the clock is missing and
        needed; NaN for a NaN half-life); else a float array (a Series when a
        Series was given) with NaN for undefined currency.

    Raises
    ------
    TimeError
        A naive or unparsable time, or a missing ``now``.
    InputError
        A half-life <= 0 on a row without ``valid_to``.

    Examples
    --------
    >>> compute_currency("2026-01-01T00:00:00Z", "2026-01-31T00:00:00Z", 30)
    0.5
    >>> compute_currency("2026-01-01T00:00:00Z", "2026-01-31T00:00:00Z", None)
    1.0
    >>> compute_currency("2026-01-01T00:00:00Z", "2026-02-01T00:00:00Z", 7,
    ...                  valid_to="2026-02-01T00:00:00Z")
    1.0
    >>> compute_currency("2026-01-01T00:00:00Z", "2026-02-01T00:00:01Z", 0,
    ...                  valid_to="2026-02-01T00:00:00Z")
    0.0
    >>> compute_currency("2026-10-24T02:07:33+01:00", "2026-10-25T01:07:33+00:00", 1)
    0.5
    >>> compute_currency("2026-01-01T00:00:00Z", "2026-01-31T00:00:00Z", float("nan"))
    nan
    """
    given = _currency_inputs(last_evidenced_at, now, half_life_days, valid_to)
    return _as_returned(_currency_values(given), given, (last_evidenced_at, now, half_life_days, valid_to))


class _CurrencyInputs(NamedTuple):
    """The four inputs of :func:`compute_currency` as arrays, checked."""

    last_ns: np.ndarray
    last_nat: np.ndarray
    now_ns: np.ndarray
    hl: np.ndarray
    hl_nan: np.ndarray
    vt_ns: np.ndarray
    vt_nat: np.ndarray
    shape: tuple
    scalar: bool


def _currency_inputs(last_evidenced_at, now, half_life_days, valid_to) -> _CurrencyInputs:
    """Parse the inputs and raise for bad ones, in production's order: times, a missing ``now``,
    half-lives, lengths, then a half-life <= 0 only on rows without ``valid_to``."""
    last_ns, last_nat, s1 = _times(last_evidenced_at, "last_evidenced_at")
    now_ns, now_nat, s2 = _times(now, "now")
    if now_nat.any():
        raise TimeError("now: expected an aware timestamp for every row, got a missing value")
    hl, hl_nan, s3 = _half_lives(half_life_days)
    vt_ns, vt_nat, s4 = _times(valid_to, "valid_to")
    try:
        shape = np.broadcast_shapes(last_ns.shape, now_ns.shape, hl.shape, vt_ns.shape)
    except ValueError:
        raise InputError("compute_currency: columns differ in length") from None
    # valid_to comes first: a bad half-life beside a named date is never looked at
    _check_positive(hl, needed=vt_nat)
    return _CurrencyInputs(last_ns, last_nat, now_ns, hl, hl_nan, vt_ns, vt_nat, shape,
                           s1 and s2 and s3 and s4)


def _currency_values(a: _CurrencyInputs) -> np.ndarray:
    """Decay by age, then the overrides: no half-life 1.0, missing clock NaN, named date 1/0."""
    shape = a.shape
    # whole-column arithmetic, then overrides; rows with a missing clock get garbage
    # ages here (integer wrap-around) that the masks below replace
    x = (a.now_ns - a.last_ns).astype(np.float64)          # age in ns, then in place:
    x /= NS_PER_DAY                                        # days
    np.maximum(x, 0.0, out=x)                              # negative age → 0
    with np.errstate(divide="ignore", invalid="ignore"):   # half-life <= 0 only beside valid_to
        x = x / a.hl if x.shape != shape else np.divide(x, a.hl, out=x)
    np.negative(x, out=x)
    out = np.exp2(x)                                       # = 0.5 ** (age / half_life)
    no_decay = np.isnan(a.hl) & ~a.hl_nan
    if no_decay.any():
        np.copyto(out, 1.0, where=no_decay)                # no half-life → 1.0
    if a.last_nat.any():
        out = np.where(a.last_nat & ~no_decay, np.nan, out)
    has_vt = ~a.vt_nat
    if has_vt.any():
        if out.shape != shape:
            out = np.broadcast_to(out, shape).copy()
        np.copyto(out, a.now_ns <= a.vt_ns, where=has_vt)  # named date: 1 until valid_to, then 0
    if out.shape != shape:
        out = np.broadcast_to(out, shape).copy()
    return out


def _as_returned(out: np.ndarray, a: _CurrencyInputs, given: tuple):
    """A float or None for scalar inputs, a Series when a Series was given, else the array."""
    if a.scalar:
        v = float(out[0])
        if np.isnan(v) and not a.hl_nan[0]:
            return None                                    # the clock was needed and missing
        return v
    index = _index_of(*given)
    if index is not None and len(index) == out.size:
        return pd.Series(out, index=index, name="currency")
    return out


def currency_band(currency):
    """Band of a currency: ``current`` (c > 0.5), ``fading`` (0.25 ≤ c ≤ 0.5),
    ``history`` otherwise — NaN included, as production's two comparisons are
    both false for it — and ``None`` for None.

    Scalars give a str or None; columns an object array (a Series for a
    Series). In a column, None (or pandas' NA) gives None and NaN gives
    ``history``; a float column cannot hold None, so its NaN is ``history``.

    Parameters
    ----------
    currency : float, None, array or Series
        Currencies, e.g. from :func:`compute_currency`.

    Returns
    -------
    str, None, ndarray or Series
        The band of each value.

    See Also
    --------
    band_reference : One value in plain Python.
    compute_currency : The currencies banded here.

    Examples
    --------
    >>> currency_band(0.5), currency_band(0.25), currency_band(0.2499), currency_band(None)
    ('fading', 'fading', 'history', None)
    >>> currency_band(float("nan"))
    'history'
    >>> currency_band([1.0, 0.5000001, None]).tolist()
    ['current', 'current', None]
    """
    if _is_scalar(currency):
        if _missing(currency):
            return None
        c = float(currency)
        return "current" if c > 0.5 else ("fading" if c >= 0.25 else "history")
    missing = None
    if isinstance(currency, np.ndarray) and currency.dtype.kind == "f":
        c = currency.astype(np.float64, copy=False)
    elif isinstance(currency, pd.Series) and currency.dtype.kind == "f":
        c = currency.to_numpy(dtype=np.float64)
    else:
        arr = np.asarray(pd.Series(currency, dtype=object).to_numpy(), dtype=object)
        missing = np.fromiter((_missing(v) for v in arr), dtype=bool, count=arr.size)
        c = pd.to_numeric(pd.Series(np.where(missing, None, arr)), errors="raise").to_numpy(
            dtype=np.float64, na_value=np.nan)
    # 0 current, 1 fading, 2 history (NaN fails both tests, as in production), 3 None
    codes = np.where(c > 0.5, 0, np.where(c >= 0.25, 1, 2)).astype(np.intp)
    if missing is not None and missing.any():
        codes[missing] = 3
    out = _BAND_LABELS.take(codes)
    if isinstance(currency, pd.Series):
        return pd.Series(out, index=currency.index, name="band", dtype=object)
    return out


def evidence_clock(memories: pd.DataFrame) -> pd.Series:
    """The evidence clock of each row: ``last_evidenced_at``, else
    ``last_corroborated_at``, else ``captured_at`` (columns that exist).

    Parameters
    ----------
    memories : DataFrame
        Memory rows with some of the three time columns.

    Returns
    -------
    Series
        The clock, named ``as_of`` (all NaT when none of the columns exists).

    Examples
    --------
    >>> m = pd.DataFrame({"last_corroborated_at": [None, "2026-02-01T00:00:00Z"],
    ...                   "captured_at": ["2026-01-01T00:00:00Z", "2026-01-01T00:00:00Z"]})
    >>> evidence_clock(m).dt.strftime("%Y-%m-%d").tolist()
    ['2026-01-01', '2026-02-01']
    """
    out = None
    for col in ("last_evidenced_at", "last_corroborated_at", "captured_at"):
        if col in memories.columns:
            s = as_utc_series(memories[col], what=col)
            out = s if out is None else out.fillna(s)
    if out is None:
        return pd.Series(pd.NaT, index=memories.index, dtype="datetime64[ns, UTC]")
    return out.rename("as_of")


# -- reference path (one row at a time, plain Python) -------------------------------------------

def currency_reference(last: _dt.datetime | None, now: _dt.datetime, half_life_days,
                       valid_to: _dt.datetime | None = None):
    """Currency of one row in plain Python (aware datetimes); the loop
    baseline of the benchmark and the oracle of the tests.

    Same order as production: ``valid_to`` first, then no half-life (1.0), a
    NaN half-life (NaN), a half-life <= 0 (raises), a missing clock (None).
    Every time is moved to UTC before it is compared or subtracted: Python
    subtracts two datetimes that share a tzinfo by their wall clocks, which
    across a DST change is an hour off.

    Parameters
    ----------
    last : datetime.datetime or None
        The evidence clock (aware).
    now : datetime.datetime
        The time of the read (aware).
    half_life_days : float or None
        Half-life in days; None for no decay.
    valid_to : datetime.datetime, default=None
        A named date (aware), inclusive.

    Returns
    -------
    float or None
        The currency; None when the clock is needed and missing.

    Raises
    ------
    TimeError
        A naive datetime.
    InputError
        A half-life <= 0 without ``valid_to``.

    See Also
    --------
    compute_currency : The same over columns.

    Examples
    --------
    >>> t = _dt.datetime(2026, 1, 1, tzinfo=_dt.timezone.utc)
    >>> currency_reference(t, t + _dt.timedelta(days=14), 7)
    0.25
    >>> from zoneinfo import ZoneInfo
    >>> london = ZoneInfo("Europe/London")
    >>> last = _dt.datetime(2026, 10, 24, 2, 7, 33, tzinfo=london)           # +01:00
    >>> now = _dt.datetime(2026, 10, 25, 1, 7, 33, fold=1, tzinfo=london)    # +00:00
    >>> currency_reference(last, now, 1)
    0.5
    """
    if now.tzinfo is None or (last is not None and last.tzinfo is None) or (
            valid_to is not None and valid_to.tzinfo is None):
        raise TimeError("currency_reference: naive datetime; expected timezone-aware times")
    now = now.astimezone(_dt.timezone.utc)
    if valid_to is not None:
        return 1.0 if now <= valid_to.astimezone(_dt.timezone.utc) else 0.0
    if half_life_days is None:
        return 1.0
    if half_life_days != half_life_days:      # NaN
        return float("nan")
    if half_life_days <= 0:
        raise InputError(f"half_life_days: expected > 0 days, got {half_life_days!r}")
    if last is None:
        return None
    d = now - last.astimezone(_dt.timezone.utc)
    ns = ((d.days * 86400 + d.seconds) * 1_000_000 + d.microseconds) * 1000 + getattr(d, "nanoseconds", 0)
    age = ns / NS_PER_DAY
    return 0.5 ** (max(age, 0.0) / half_life_days)


def band_reference(c):
    """Band of one currency in plain Python (see :func:`currency_band`); NaN
    fails both comparisons and is ``history``.

    Parameters
    ----------
    c : float or None
        A currency.

    Returns
    -------
    str or None
        ``current``, ``fading``, ``history``, or None for None.

    See Also
    --------
    currency_band : The same over columns.

    Examples
    --------
    >>> band_reference(float("nan")), band_reference(None)
    ('history', None)
    """
    if c is None:
        return None
    if c > 0.5:
        return "current"
    if c >= 0.25:
        return "fading"
    return "history"
