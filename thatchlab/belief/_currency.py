"""Read-side currency of a belief (seed 001, rule 1): formulas only.

A belief's currency halves every half-life since it was last evidenced; a
named-date claim is fully current until its ``valid_to`` and history after
it. Currency is computed when a row is read, never stored, so nothing about
a row changes on time alone. Every function takes scalars or columns.
"""

from __future__ import annotations

import datetime as _dt

import numpy as np
import pandas as pd

from thatchlab.core.errors import InputError, TimeError
from thatchlab.core.params.belief import BELIEF_CLASSES, NO_DECAY_MEMORY_KINDS, BeliefParams
from thatchlab.core.time import as_utc, as_utc_series

__all__ = ["compute_currency", "currency_band", "derive_half_life_days", "evidence_clock",
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
    if isinstance(values, (pd.Series, pd.Index)) and isinstance(values.dtype, pd.DatetimeTZDtype):
        arr = values.array          # epoch nanoseconds do not depend on the zone: no conversion
        ns = (arr if arr.unit == "ns" else arr.as_unit("ns")).asi8
    else:
        ns = pd.DatetimeIndex(as_utc_series(pd.Series(values, dtype=object), what=what)).asi8
    return ns, ns == _NAT, False


def _half_lives(values):
    if _is_scalar(values):
        scalar, arr = True, None
        try:
            hl = np.array([np.nan if values is None else float(values)], dtype=np.float64)
        except (TypeError, ValueError):
            raise InputError(f"half_life_days: expected a number (days) or None, got {values!r}") from None
    else:
        scalar = False
        num = np.asarray(values)
        if num.dtype.kind in "fiu":          # numeric column: no per-value conversion
            hl = num.astype(np.float64, copy=False)
            arr = None
        else:
            arr = np.asarray(pd.Series(values, dtype=object).to_numpy(), dtype=object)
    if arr is not None:
        try:
            hl = pd.to_numeric(pd.Series(arr), errors="raise").to_numpy(dtype=np.float64, na_value=np.nan)
        except (TypeError, ValueError):
            raise InputError(f"half_life_days: expected numbers (days) or None, got {arr[:3]!r}") from None
    bad = hl <= 0                   # NaN (no decay) compares False
    if bad.any():
        raise InputError(f"half_life_days: expected > 0 days (or None for no decay), got "
                         f"{hl[bad][0]!r} at position {int(np.flatnonzero(bad)[0])}")
    return hl, scalar


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
            0.5^{\\max(age, 0) / half\\_life} & \\text{otherwise}
        \\end{cases}

    with ``age = (now - last_evidenced_at)`` in days (nanoseconds / 86400e9).

    Parameters
    ----------
    last_evidenced_at : aware time or column of them
        The evidence clock (missing → currency ``None``/NaN when it is needed).
    now : aware time or column
    half_life_days : number, ``None`` (no decay) or a column (NaN = None)
    valid_to : aware time, ``None`` or a column (NaT = not set); inclusive.

    Returns
    -------
    float or None for scalar inputs; a float array (a Series when a Series
    was given) with NaN for undefined currency.

    Raises
    ------
    TimeError : a naive or unparsable time, or a missing ``now``.
    InputError : a half-life ≤ 0.

    Examples
    --------
    >>> compute_currency("2026-01-01T00:00:00Z", "2026-01-31T00:00:00Z", 30)
    0.5
    >>> compute_currency("2026-01-01T00:00:00Z", "2026-01-31T00:00:00Z", None)
    1.0
    >>> compute_currency("2026-01-01T00:00:00Z", "2026-02-01T00:00:00Z", 7,
    ...                  valid_to="2026-02-01T00:00:00Z")
    1.0
    """
    last_ns, last_nat, s1 = _times(last_evidenced_at, "last_evidenced_at")
    now_ns, now_nat, s2 = _times(now, "now")
    if now_nat.any():
        raise TimeError("now: expected an aware timestamp for every row, got a missing value")
    hl, s3 = _half_lives(half_life_days)
    vt_ns, vt_nat, s4 = _times(valid_to, "valid_to")
    try:
        shape = np.broadcast_shapes(last_ns.shape, now_ns.shape, hl.shape, vt_ns.shape)
    except ValueError:
        raise InputError("compute_currency: columns differ in length") from None
    # whole-column arithmetic, then overrides; rows with a missing clock get garbage
    # ages here (integer wrap-around) that the masks below replace
    x = (now_ns - last_ns).astype(np.float64)              # age in ns, then in place:
    x /= NS_PER_DAY                                        # days
    np.maximum(x, 0.0, out=x)                              # negative age → 0
    x = x / hl if x.shape != shape else np.divide(x, hl, out=x)
    np.negative(x, out=x)
    out = np.exp2(x)                                       # = 0.5 ** (age / half_life)
    no_decay = np.isnan(hl)
    if no_decay.any():
        np.copyto(out, 1.0, where=no_decay)                # no half-life → 1.0
    if last_nat.any():
        out = np.where(last_nat & ~no_decay, np.nan, out)
    has_vt = ~vt_nat
    if has_vt.any():
        if out.shape != shape:
            out = np.broadcast_to(out, shape).copy()
        np.copyto(out, now_ns <= vt_ns, where=has_vt)      # named date: 1 until valid_to, then 0
    if out.shape != shape:
        out = np.broadcast_to(out, shape).copy()
    if s1 and s2 and s3 and s4:
        v = float(out[0])
        return None if np.isnan(v) else v
    index = _index_of(last_evidenced_at, now, half_life_days, valid_to)
    if index is not None and len(index) == out.size:
        return pd.Series(out, index=index, name="currency")
    return out


def currency_band(currency):
    """Band of a currency: ``current`` (c > 0.5), ``fading`` (0.25 ≤ c ≤ 0.5),
    ``history`` (c < 0.25), ``None`` for None/NaN.

    Scalars give a str or None; columns an object array (a Series for a Series).

    >>> currency_band(0.5), currency_band(0.25), currency_band(0.2499), currency_band(None)
    ('fading', 'fading', 'history', None)
    >>> currency_band([1.0, 0.5000001]).tolist()
    ['current', 'current']
    """
    if _is_scalar(currency):
        if currency is None:
            return None
        c = float(currency)
        if np.isnan(c):
            return None
        return "current" if c > 0.5 else ("fading" if c >= 0.25 else "history")
    if isinstance(currency, np.ndarray) and currency.dtype.kind == "f":
        c = currency.astype(np.float64, copy=False)
    else:
        s = currency if isinstance(currency, pd.Series) else pd.Series(
            np.asarray(currency, dtype=object))
        c = pd.to_numeric(s, errors="raise").to_numpy(dtype=np.float64, na_value=np.nan)
    codes = np.add(c <= 0.5, c < 0.25, dtype=np.intp)   # 0 current, 1 fading, 2 history, 3 None
    nan = np.isnan(c)
    if nan.any():
        codes[nan] = 3
    out = _BAND_LABELS.take(codes)
    if isinstance(currency, pd.Series):
        return pd.Series(out, index=currency.index, name="band")
    return out


def _text_col(values, n):
    if _is_scalar(values):
        v = None if values is None or (isinstance(values, float) and np.isnan(values)) else values
        return np.array([v] * n, dtype=object)
    s = pd.Series(values, dtype=object)
    return s.where(s.notna(), None).to_numpy(dtype=object)


#: Half-life production gives unclassified short-term memories.
SHORT_TERM_HALF_LIFE_DAYS = 30.0


def derive_half_life_days(stored=None, *, user_asserted=False, belief_class=None, kind=None,
                          tier=None, params: BeliefParams | None = None):
    """The half-life a row decays with, derived at read time (production order).

    1. a stored half-life wins (it must be > 0);
    2. user asserted without a class → ``None`` (no decay);
    3. a class → its prior in ``params`` (unknown class raises);
    4. memory kind ``document`` or ``trigger`` → ``None``;
    5. tier ``short_term`` → 30 days (a fixed fallback in production);
    6. otherwise ``None``.

    Scalars give a float or None; columns a float array (NaN = None).

    >>> derive_half_life_days(belief_class="preference")
    180.0
    >>> derive_half_life_days(12, belief_class="identity")
    12.0
    >>> derive_half_life_days(user_asserted=True) is None
    True
    >>> derive_half_life_days(tier="short_term"), derive_half_life_days(kind="trigger", tier="short_term")
    (30.0, None)
    """
    p = params if params is not None else BeliefParams()
    cols = (stored, user_asserted, belief_class, kind, tier)
    scalar = all(_is_scalar(v) for v in cols)
    n = 1 if scalar else max(len(v) for v in cols if not _is_scalar(v))
    if not scalar and any(not _is_scalar(v) and len(v) != n for v in cols):
        raise InputError("derive_half_life_days: columns differ in length")
    st, _ = _half_lives(stored if not _is_scalar(stored) else stored)
    st = np.broadcast_to(st, (n,))
    ua = _text_col(user_asserted, n)
    ua = np.array([bool(v) if v is not None else False for v in ua], dtype=bool)
    cls = _text_col(belief_class, n)
    knd = _text_col(kind, n)
    tr = _text_col(tier, n)
    known = set(BELIEF_CLASSES)
    has_cls = np.array([c is not None for c in cls], dtype=bool)
    bad = [i for i in np.flatnonzero(has_cls) if cls[i] not in known]
    if bad:
        raise InputError(f"belief_class: expected one of {list(BELIEF_CLASSES)} (or None), got "
                         f"{cls[bad[0]]!r} at position {bad[0]}")
    out = np.full(n, np.nan)
    decided = ~np.isnan(st)
    out[decided] = st[decided]
    decided |= ua & ~has_cls
    use_cls = has_cls & ~decided
    priors = p.priors
    out[use_cls] = [np.nan if priors[c] is None else priors[c] for c in cls[use_cls]]
    decided |= use_cls
    decided |= np.isin(knd, list(NO_DECAY_MEMORY_KINDS)) & ~decided
    short = (tr == "short_term") & ~decided
    out[short] = SHORT_TERM_HALF_LIFE_DAYS  # production's fixed fallback, not a class prior
    if scalar:
        return None if np.isnan(out[0]) else float(out[0])
    return out


def evidence_clock(memories: pd.DataFrame) -> pd.Series:
    """The evidence clock of each row: ``last_evidenced_at``, else
    ``last_corroborated_at``, else ``captured_at`` (columns that exist)."""
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

    >>> t = _dt.datetime(2026, 1, 1, tzinfo=_dt.timezone.utc)
    >>> currency_reference(t, t + _dt.timedelta(days=14), 7)
    0.25
    """
    if now.tzinfo is None or (last is not None and last.tzinfo is None) or (
            valid_to is not None and valid_to.tzinfo is None):
        raise TimeError("currency_reference: naive datetime; expected timezone-aware times")
    if half_life_days is not None and half_life_days <= 0:
        raise InputError(f"half_life_days: expected > 0 days, got {half_life_days!r}")
    if valid_to is not None:
        return 1.0 if now <= valid_to else 0.0
    if half_life_days is None:
        return 1.0
    if last is None:
        return None
    d = now - last
    ns = ((d.days * 86400 + d.seconds) * 1_000_000 + d.microseconds) * 1000
    age = ns / NS_PER_DAY
    return 0.5 ** (max(age, 0.0) / half_life_days)


def band_reference(c):
    """Band of one currency in plain Python (see :func:`currency_band`)."""
    if c is None:
        return None
    if c > 0.5:
        return "current"
    if c >= 0.25:
        return "fading"
    return "history"
