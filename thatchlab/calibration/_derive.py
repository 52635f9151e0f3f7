"""ai-memory's confidence pipeline: derive, freshness decay, tiers and the recall score.

Models ai-memory v0.7.0 ("Form 5"): a memory's confidence is derived
from observable signals (age, atom derivation, corroboration) blended toward a
per-source baseline as it ages, decays with a half-life on recall touches, is
observed in shadow beside the caller's value, and calibrated per (namespace,
source) with consumption utility from the recall ledger. The formulas here are
vectorised (scalars, numpy arrays or pandas Series); the shadow log and the
calibration report live in :mod:`thatchlab.calibration._shadow` and
:mod:`thatchlab.calibration._report` and are re-exported here.

Freshness is production's ``exp(−age·ln 2 / hl)`` — not the equivalent
``2 ** (−age / hl)``, which rounds differently — computed in production's
operation order with the C library's ``exp`` and ``log10`` (numpy's own
vectorised ``exp`` differs in the last bit for a few percent of inputs). So
``derive`` and ``decayed`` equal the same formula in plain Python floats bit
for bit; production's compiled code can differ only where it fuses a
multiply-add, by at most 1 ulp. The signal record's
``prior_corroboration_count`` is the count as stored (``-5`` stays ``-5``,
``2**53 + 1`` stays exact); derive itself uses ``max(n, 0)``.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd

from thatchlab.core.docstrings import fill_doc

__all__ = ["EPS", "LN2", "SIGNAL_FIELDS", "derive", "derive_signals", "signals_json", "freshness_factor",
           "decayed", "confidence_tier", "recall_score"]


def _age_params(age_default: str) -> str:
    """The ``age_days`` and ``half_life_days`` parameters (``age_default`` follows age's type)."""
    return (f"age_days : float, array or Series{age_default}\n    Age in days; negative ages count as 0.\n"
            "half_life_days : float, array or Series, default=30.0\n    Half-life in days, floored at ``EPS``.\n")


# the age and half-life parameters of the decay functions, written once (filled in by fill_doc)
_AGE_PARAMS = _age_params("")
_AGE0_PARAMS = _age_params(", default=0.0")

#: Floor of the half-life, so a zero half-life means "instantly stale", not a division by zero.
EPS = float(np.finfo(np.float64).eps)
LN2 = math.log(2.0)
#: The signal record's field names, in the order production stores them.
SIGNAL_FIELDS = ("source_age_days", "atom_derivation", "prior_corroboration_count",
                 "freshness_factor", "baseline_per_source")


def _is_scalar(*xs) -> bool:
    return all(np.ndim(x) == 0 for x in xs)


def _wrap(value, *inputs):
    """Return a float for scalar inputs, a Series for Series inputs, else an array."""
    if _is_scalar(*inputs):
        return float(np.asarray(value))
    for x in inputs:
        if isinstance(x, pd.Series):
            return pd.Series(np.asarray(value), index=x.index)
    return np.asarray(value)


def _arr(x) -> np.ndarray:
    return np.asarray(x, dtype=np.float64)


def _libm(fn, x) -> np.ndarray:
    """``fn`` (``math.exp`` or ``math.log10``) on every element.

    Production calls the C library's ``exp``/``log10``, as Python's ``math``
    does; numpy's vectorised loops round differently in the last bit for a
    few percent of inputs, so they would break bit-identity.
    """
    a = np.asarray(x, dtype=np.float64)
    if a.ndim == 0:
        return np.asarray(fn(float(a)))
    return np.fromiter(map(fn, a.ravel().tolist()), dtype=np.float64, count=a.size).reshape(a.shape)


def _freshness(age, hl) -> np.ndarray:
    """``clamp(exp(−age·ln2/hl), 0, 1)`` for ``age >= 0`` and ``hl >= eps``, in production's
    operation order: ``((−age)·ln2)/hl`` and then ``exp``."""
    return np.clip(_libm(math.exp, -age * LN2 / hl), 0.0, 1.0)


@fill_doc(age_params=_AGE_PARAMS)
def freshness_factor(age_days, half_life_days=30.0):
    """Freshness ``clamp(exp(−max(age, 0)·ln 2 / max(half_life, eps)), 0, 1)``.

    Negative ages count as 0 (fresh); a zero half-life is floored at ``EPS``.
    The formula has production's shape (``exp`` of ``−age·ln2/hl``, not
    ``exp2(−age/hl)``, which can differ in the last bit), evaluated with the
    same operation order and the C library's ``exp``; the value equals
    ``math.exp(-age * math.log(2) / hl)`` bit for bit.

    Parameters
    ----------
    {age_params}

    Returns
    -------
    float, ndarray or Series
        A float for scalars, a Series when a Series was given, else an array.

    See Also
    --------
    decayed : The same factor applied to a confidence.

    Examples
    --------
    >>> freshness_factor(30.0, 30.0), freshness_factor(-5.0), freshness_factor(1.0, 0.0)
    (0.5, 1.0, 0.0)
    """
    age = np.maximum(_arr(age_days), 0.0)
    hl = np.maximum(_arr(half_life_days), EPS)
    return _wrap(_freshness(age, hl), age_days, half_life_days)


@fill_doc(age0_params=_AGE0_PARAMS)
def derive(age_days=0.0, is_atom=False, corroboration=0, baseline=0.5, half_life_days=30.0, *,
           intercept=0.5, atom_bump=0.1, corroboration_weight=0.05, age_penalty=0.02):
    """The auto-derived confidence of a memory from its observable signals.

    With ``age = max(age, 0)``, ``hl = max(hl, eps)``, ``ff = freshness_factor(age, hl)``::

        ff    = clamp(exp(−age·ln2/hl), 0, 1)
        base  = clamp(0.5 + 0.1·atom + 0.05·max(log10(1 + max(n, 0)), 0) − 0.02·age·ln2/hl, 0, 1)
        value = clamp(base·ff + clamp(baseline, 0, 1)·(1 − ff), 0, 1)

    The four coefficients are keyword arguments (``CalibrationParams.derive_kwargs()``
    gives them all). Scalars give a float; arrays or Series broadcast.

    Every step is production's, in its order, with the C library's ``exp``
    and ``log10`` (what Python's ``math`` calls), so the value is bit for bit
    what the same expression in plain Python floats gives. Production's
    compiled code may fuse a multiply and an add (one rounding instead of
    two) in ``base·ff + baseline·(1 − ff)`` or in ``base``; where it does,
    the two differ by at most 1 ulp (about 1e-16 here). Inputs whose
    products are exact (``age = 0``, ``ff`` of 0 or 1) cannot differ.

    Parameters
    ----------
    {age0_params}
    is_atom : bool, array or Series, default=False
        Whether the memory was derived as an atom (adds ``atom_bump``).
    corroboration : int, array or Series, default=0
        Corroboration count ``n``; negative counts as 0.
    baseline : float, array or Series, default=0.5
        The per-source baseline the value is blended toward, clamped to [0, 1].
    intercept : float, default=0.5
        The base value before the other terms.
    atom_bump : float, default=0.1
        Added for an atom.
    corroboration_weight : float, default=0.05
        Weight of ``log10(1 + n)``.
    age_penalty : float, default=0.02
        Weight of ``age·ln2/hl``, subtracted.

    Returns
    -------
    float, ndarray or Series
        The derived confidence in [0, 1].

    See Also
    --------
    derive_signals : The signal record of the same inputs.

    Examples
    --------
    >>> derive(), derive(is_atom=True, corroboration=9)
    (0.5, 0.65)
    >>> round(derive(age_days=30.0), 6)  # base 0.5 − 0.02·ln2, half blended to 0.5
    0.493069
    """
    age = np.maximum(_arr(age_days), 0.0)
    hl = np.maximum(_arr(half_life_days), EPS)
    ff = _freshness(age, hl)
    atom = _arr(is_atom)
    corr_term = np.maximum(_libm(math.log10, 1.0 + np.maximum(_arr(corroboration), 0.0)), 0.0)
    base = np.clip(intercept + atom_bump * atom + corroboration_weight * corr_term
                   - age_penalty * age * LN2 / hl, 0.0, 1.0)
    value = np.clip(base * ff + np.clip(_arr(baseline), 0.0, 1.0) * (1.0 - ff), 0.0, 1.0)
    return _wrap(value, age_days, is_atom, corroboration, baseline, half_life_days)


def _stored_count(values):
    """The corroboration count as stored: integers unchanged (negative or beyond
    2**53 included), whole floats as their integer, NaN as 0."""
    a = np.asarray(values)
    if a.dtype.kind in "iub":
        return a.astype(np.int64)
    if a.dtype.kind == "f":
        return np.where(np.isfinite(a), a, 0.0).astype(np.int64)
    if a.ndim == 0:
        v = a.item()
        return np.asarray(0 if v is None or (isinstance(v, float) and not math.isfinite(v)) else int(v),
                          dtype=np.int64)
    return np.array([0 if v is None or v is pd.NA or (isinstance(v, float) and not math.isfinite(v))
                     else int(v) for v in a.ravel().tolist()], dtype=np.int64).reshape(a.shape)


@fill_doc(age0_params=_AGE0_PARAMS)
def derive_signals(age_days=0.0, is_atom=False, corroboration=0, baseline=0.5, half_life_days=30.0):
    """The signal record that produced a derived value, with production's field names.

    ``source_age_days`` (``max(age, 0)``), ``atom_derivation`` (bool),
    ``prior_corroboration_count`` (the stored count, as an integer),
    ``freshness_factor`` and ``baseline_per_source`` (clamped to [0, 1]).
    Scalars give a dict; arrays give a DataFrame with one row per input.
    :func:`signals_json` turns records into the JSON stored in
    ``confidence_signals``.

    The count is recorded the way production stores it, not the way derive
    uses it: ``-5`` stays ``-5`` (derive counts it as 0) and ``2**53 + 1``
    stays exact (derive, in floats, sees ``2**53``). The other fields are the
    values derive used.

    Parameters
    ----------
    {age0_params}
    is_atom : bool, array or Series, default=False
        Whether the memory was derived as an atom.
    corroboration : int, array or Series, default=0
        Corroboration count as stored.
    baseline : float, array or Series, default=0.5
        The per-source baseline.

    Returns
    -------
    dict or DataFrame
        One record (:data:`SIGNAL_FIELDS`) for scalars, else one row per
        input (with a Series' index when one was given).

    See Also
    --------
    derive : The value the record explains.
    signals_json : The records as stored JSON.

    Examples
    --------
    >>> derive_signals(age_days=30.0, corroboration=2)
    {'source_age_days': 30.0, 'atom_derivation': False, 'prior_corroboration_count': 2, 'freshness_factor': 0.5, 'baseline_per_source': 0.5}
    >>> derive_signals(corroboration=-5)["prior_corroboration_count"], derive(corroboration=-5)
    (-5, 0.5)
    """
    age = np.maximum(_arr(age_days), 0.0)
    ff = _freshness(age, np.maximum(_arr(half_life_days), EPS))
    cols = {
        "source_age_days": age,
        "atom_derivation": np.asarray(is_atom).astype(bool),
        "prior_corroboration_count": _stored_count(corroboration),
        "freshness_factor": ff,
        "baseline_per_source": np.clip(_arr(baseline), 0.0, 1.0),
    }
    if _is_scalar(age_days, is_atom, corroboration, baseline, half_life_days):
        return {"source_age_days": float(age), "atom_derivation": bool(cols["atom_derivation"]),
                "prior_corroboration_count": int(cols["prior_corroboration_count"]),
                "freshness_factor": float(ff), "baseline_per_source": float(cols["baseline_per_source"])}
    n = np.broadcast(*[np.asarray(v) for v in cols.values()]).shape
    out = pd.DataFrame({k: np.broadcast_to(v, n) for k, v in cols.items()})
    for x in (age_days, is_atom, corroboration, baseline, half_life_days):
        if isinstance(x, pd.Series):
            out.index = x.index
            break
    return out


def signals_json(signals) -> str | list[str]:
    """JSON text of a signal record (dict → str) or of each row of a signal frame (→ list).

    Parameters
    ----------
    signals : dict or DataFrame
        A record or frame from :func:`derive_signals`.

    Returns
    -------
    str or list of str
        The JSON text, fields in :data:`SIGNAL_FIELDS` order.

    See Also
    --------
    derive_signals : Makes the records.

    Examples
    --------
    >>> signals_json(derive_signals())
    '{"source_age_days": 0.0, "atom_derivation": false, "prior_corroboration_count": 0, "freshness_factor": 1.0, "baseline_per_source": 0.5}'
    """
    if isinstance(signals, dict):
        return json.dumps({k: signals[k] for k in SIGNAL_FIELDS})
    age = signals["source_age_days"].to_numpy(np.float64).tolist()
    atom = signals["atom_derivation"].to_numpy(bool).tolist()
    corr = signals["prior_corroboration_count"].to_numpy(np.int64).tolist()
    ff = signals["freshness_factor"].to_numpy(np.float64).tolist()
    base = signals["baseline_per_source"].to_numpy(np.float64).tolist()
    return [json.dumps({"source_age_days": a, "atom_derivation": t, "prior_corroboration_count": c,
                        "freshness_factor": f, "baseline_per_source": b})
            for a, t, c, f, b in zip(age, atom, corr, ff, base, strict=True)]


@fill_doc(age_params=_AGE_PARAMS)
def decayed(base, age_days, half_life_days=30.0):
    """Freshness decay on a recall touch: ``clamp(base · exp(−max(age,0)·ln2/max(hl,eps)), 0, 1)``.

    At ``age == half_life`` the value halves; touches compound, so decaying
    twice over consecutive intervals equals one decay over their sum (up to
    rounding). Production's formula shape and operation order with the C
    library's ``exp``: bit-identical to ``base * math.exp(-age * math.log(2)
    / hl)`` in plain Python; production's compiled code could only differ
    where it fuses a multiply-add, by at most 1 ulp.

    Parameters
    ----------
    base : float, array or Series
        The confidence before the touch.
    {age_params}

    Returns
    -------
    float, ndarray or Series
        The decayed confidence in [0, 1].

    See Also
    --------
    freshness_factor : The factor alone.

    Examples
    --------
    >>> decayed(0.8, 30.0), decayed(0.8, -3.0), decayed(0.8, 10.0, 0.0)
    (0.4, 0.8, 0.0)
    """
    age = np.maximum(_arr(age_days), 0.0)
    hl = np.maximum(_arr(half_life_days), EPS)
    value = np.clip(_arr(base) * _libm(math.exp, -age * LN2 / hl), 0.0, 1.0)
    return _wrap(value, base, age_days, half_life_days)


def confidence_tier(confidence):
    """Production's tier of a confidence: ``>= 0.95`` confirmed, ``>= 0.7`` likely, else ambiguous.

    NaN (and None) is ambiguous. Scalars give a str; arrays/Series give an object array/Series.

    Parameters
    ----------
    confidence : float, array or Series
        Confidences; non-numbers read as NaN.

    Returns
    -------
    str, ndarray or Series
        ``"confirmed"``, ``"likely"`` or ``"ambiguous"`` per value.

    Examples
    --------
    >>> confidence_tier(0.95), confidence_tier(0.7), confidence_tier(0.69), confidence_tier(float("nan"))
    ('confirmed', 'likely', 'ambiguous', 'ambiguous')
    """
    x = pd.to_numeric(pd.Series(np.atleast_1d(np.asarray(confidence, dtype=object))),
                      errors="coerce").to_numpy(np.float64)
    with np.errstate(invalid="ignore"):
        tier = np.where(x >= 0.95, "confirmed", np.where(x >= 0.7, "likely", "ambiguous")).astype(object)
    if np.ndim(confidence) == 0:
        return str(tier[0])
    if isinstance(confidence, pd.Series):
        return pd.Series(tier, index=confidence.index, name="tier")
    return tier


def recall_score(text_score, confidence, confidence_weight=2.0, other=0.0):
    """The recall ranking score ``text_score + confidence × 2.0 + other``.

    ``text_score`` is the full-text relevance (higher is better), ``other``
    any further terms a study adds; only the confidence term is production's.

    Parameters
    ----------
    text_score : float, array or Series
        Full-text relevance.
    confidence : float, array or Series
        The memory's confidence.
    confidence_weight : float, default=2.0
        Weight of the confidence (production's 2.0).
    other : float, array or Series, default=0.0
        Further terms.

    Returns
    -------
    float, ndarray or Series
        The score.

    Examples
    --------
    >>> recall_score(1.0, 0.5)
    2.0
    """
    value = _arr(text_score) + confidence_weight * _arr(confidence) + _arr(other)
    return _wrap(value, text_score, confidence, other)
