"""The half-life a belief decays with, derived when it is read: production's rules in order.

A stored half-life wins; a user assertion without a class means no decay; a
class gives its prior; a document or trigger never decays; a short-term
memory without a class decays over a fixed 30 days. Columns of any backing
are coded by value, so each rule is asked once per distinct class, kind or
tier, never once per row.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import pandas as pd
from pandas.api.types import is_bool_dtype

from thatchlab.belief._currency import _check_positive, _half_lives, _is_scalar
from thatchlab.core.dtypes import factorize
from thatchlab.core.errors import InputError
from thatchlab.core.params.belief import BELIEF_CLASSES, NO_DECAY_MEMORY_KINDS, BeliefParams

__all__ = ["derive_half_life_days", "SHORT_TERM_HALF_LIFE_DAYS"]


def _coded(values, n):
    """(code per row, distinct values) of a scalar or column over ``n`` rows; a missing value
    (None, NaN, NA, NaT) is code -1. Any backing is coded by value (:func:`factorize`), so the rules
    below look at each distinct value once."""
    if _is_scalar(values):
        missing = values is None or values is pd.NA or values is pd.NaT or (
            isinstance(values, float) and np.isnan(values))
        codes = np.full(n, -1 if missing else 0, dtype=np.intp)
        return codes, np.array([None if missing else values], dtype=object)
    return factorize(values if isinstance(values, pd.Series) else pd.Series(values, dtype=object))


def _per_row(codes, uniques, rule) -> np.ndarray:
    """``rule`` of each row's value (False for a missing one), from one call per distinct value."""
    return np.array([bool(rule(u)) for u in uniques] + [False], dtype=bool)[codes]


#: Half-life production gives unclassified short-term memories.
SHORT_TERM_HALF_LIFE_DAYS = 30.0


def derive_half_life_days(stored=None, *, user_asserted=False, belief_class=None, kind=None,
                          tier=None, params: BeliefParams | None = None):
    """The half-life a row decays with, derived at read time (production order).

    1. a stored half-life wins (it must be > 0; NaN passes through as NaN),
       whatever the class says — even a class thatchlab does not know;
    2. user asserted without a class → ``None`` (no decay);
    3. a class → its prior in ``params``;
    4. memory kind ``document`` or ``trigger`` → ``None``;
    5. tier ``short_term`` → 30 days (a fixed fallback in production);
    6. otherwise ``None``.

    The class is only looked at when no half-life is stored, so an unknown
    class raises only then: ``derive_half_life_days(stored=7.0,
    belief_class="nonsense")`` is 7.0, ``derive_half_life_days(
    belief_class="nonsense")`` raises. An empty class (``""``) counts as no
    class at all.

    Scalars give a float or None; columns a float array (NaN = None, so a
    stored NaN and "no half-life" look alike there).

    Parameters
    ----------
    stored : float, None or column, default=None
        The row's stored half-life in days.
    user_asserted : bool or column, default=False
        Whether the user asserted the row.
    belief_class : str, None or column, default=None
        One of the known belief classes; ``""`` is none.
    kind, tier : str, None or column, default=None
        The memory kind and tier.
    params : BeliefParams, default=None
        Gives the class priors; the defaults when None.

    Returns
    -------
    float, None or ndarray
        The half-life in days (None: no decay; NaN in an array).

    Raises
    ------
    InputError
        Columns of different lengths, a stored half-life <= 0 or not a
        number, or an unknown class on a row with no stored half-life.

    See Also
    --------
    compute_currency : Decays with the half-life.

    Examples
    --------
    >>> derive_half_life_days(belief_class="preference")
    180.0
    >>> derive_half_life_days(12, belief_class="identity")
    12.0
    >>> derive_half_life_days(stored=7.0, belief_class="nonsense")
    7.0
    >>> derive_half_life_days(belief_class="", tier="short_term")
    30.0
    >>> derive_half_life_days(user_asserted=True) is None
    True
    >>> derive_half_life_days(tier="short_term"), derive_half_life_days(kind="trigger", tier="short_term")
    (30.0, None)
    """
    p = params if params is not None else BeliefParams()
    cols = (stored, user_asserted, belief_class, kind, tier)
    scalar = all(_is_scalar(v) for v in cols)
    n = _common_length(cols, scalar)
    st, st_nan = _stored_half_lives(stored, n)
    has_stored = ~np.isnan(st) | st_nan
    ua = _flags(user_asserted, n)
    cls = _classes(belief_class, n)
    _check_classes(cls, cls.has & ~has_stored)
    out = _half_life_by_rule(st, has_stored, ua, cls, _coded(kind, n), _coded(tier, n), p.priors)
    if not scalar:
        return out
    if st_nan[0]:
        return float("nan")
    return None if np.isnan(out[0]) else float(out[0])


def _common_length(cols, scalar: bool) -> int:
    """The rows of the column arguments (1 when all are scalars); columns of different lengths raise."""
    n = 1 if scalar else max(len(v) for v in cols if not _is_scalar(v))
    if not scalar and any(not _is_scalar(v) and len(v) != n for v in cols):
        raise InputError("derive_half_life_days: columns differ in length")
    return n


def _stored_half_lives(stored, n: int) -> tuple[np.ndarray, np.ndarray]:
    """(stored half-lives, stored-NaN mask) over ``n`` rows; a stored half-life <= 0 raises."""
    st, st_nan, _ = _half_lives(stored)
    _check_positive(st)
    return np.broadcast_to(st, (n,)), np.broadcast_to(st_nan, (n,))


def _flags(values, n: int) -> np.ndarray:
    """A bool per row (a missing value is False)."""
    if isinstance(values, pd.Series) and is_bool_dtype(values.dtype):
        return values.to_numpy(bool, na_value=False)      # booleans by dtype (nullable ones: NA is False)
    if isinstance(values, np.ndarray) and values.dtype == bool:
        return values
    return _per_row(*_coded(values, n), bool)


class _Classes(NamedTuple):
    """The belief class column, coded: ``""`` counts as no class."""

    codes: np.ndarray       # per row, its class's index in ``names`` (-1: missing)
    names: np.ndarray       # the distinct classes (objects)
    has: np.ndarray         # per row, whether it has a class


def _classes(belief_class, n: int) -> _Classes:
    codes, names = _coded(belief_class, n)
    return _Classes(codes, names, _per_row(codes, names, lambda c: not (isinstance(c, str) and c == "")))


def _check_classes(cls: _Classes, needed: np.ndarray) -> None:
    """Raise for an unknown class on a row that needs its class (no stored half-life)."""
    known = set(BELIEF_CLASSES)
    bad = np.flatnonzero(needed & ~_per_row(cls.codes, cls.names, lambda c: c in known))
    if bad.size:
        value = cls.names[cls.codes[bad[0]]]
        raise InputError(f"belief_class: expected one of {list(BELIEF_CLASSES)} (or None) when no "
                         f"half-life is stored, got {value!r} at position {bad[0]}")


def _half_life_by_rule(st, has_stored, ua, cls: _Classes, kind, tier, priors) -> np.ndarray:
    """Production's rules in order, each deciding the rows no earlier rule decided (NaN = None);
    ``kind`` and ``tier`` are ``(codes, distinct values)``."""
    n = len(st)
    out = np.full(n, np.nan)
    decided = has_stored.copy()
    out[decided] = st[decided]                             # a stored NaN stays NaN
    decided |= ua & ~cls.has
    use_cls = cls.has & ~decided
    prior = np.array([np.nan if priors.get(c) is None else priors[c] for c in cls.names] + [np.nan])
    out[use_cls] = prior[cls.codes[use_cls]]
    decided |= use_cls
    decided |= _per_row(*kind, lambda k: k in NO_DECAY_MEMORY_KINDS) & ~decided
    short = _per_row(*tier, lambda t: isinstance(t, str) and t == "short_term") & ~decided
    out[short] = SHORT_TERM_HALF_LIFE_DAYS  # production's fixed fallback, not a class prior
    return out
