"""JavaScript number text, reproduced exactly.

Production thatch is written in TypeScript, so every number it prints goes
through ``Math.round``, ``Number.prototype.toFixed`` or JavaScript's default
number-to-string conversion. Python's ``round`` and ``format`` differ from all
three at ties and for integral floats, and production compares texts, so every
piece of text thatchlab emits uses these functions.
"""

from __future__ import annotations

import math
from decimal import ROUND_HALF_UP, Decimal

import numpy as np

from thatchlab.core.docstrings import fill_doc

__all__ = ["js_round", "to_fixed", "js_number", "r3"]

# the Parameters and Returns of the two rounding functions, written once (filled in by fill_doc)
_ROUND_SECTIONS = """
Parameters
----------
x : float or array-like of float
    The values to round.

Returns
-------
float or numpy.ndarray
    A float for a scalar, else a float64 array of ``x``'s shape.
"""


@fill_doc(round_sections=_ROUND_SECTIONS)
def js_round(x):
    """JavaScript ``Math.round``: the nearest integer, ties toward +infinity.

    ``floor(x + 0.5)`` is *not* exact for values such as 0.49999999999999994;
    we round and then correct ties explicitly. Accepts scalars or arrays and
    returns floats (like JavaScript numbers); NaN and infinities pass through.

    {round_sections}

    See Also
    --------
    r3 : Production's rounding to three decimals.
    to_fixed : JavaScript's ``toFixed`` text.

    Examples
    --------
    >>> js_round(0.5), js_round(2.5), js_round(-2.5), js_round(2.25)
    (1.0, 3.0, -2.0, 2.0)
    """
    arr = np.asarray(x, dtype=np.float64)
    fl = np.floor(arr)
    with np.errstate(invalid="ignore"):
        diff = arr - fl  # exact for finite doubles
        out = np.where(diff >= 0.5, fl + 1.0, fl)
    out = np.where(np.isfinite(arr), out, arr)
    if out.ndim == 0:
        return float(out)
    return out


@fill_doc(round_sections=_ROUND_SECTIONS)
def r3(x):
    """Round to three decimals the way production does: ``Math.round(x * 1000) / 1000``.

    The multiplication happens in float64 first, so 0.1235 → 0.124 (123.5
    rounds up) where decimal rounding of the stored binary value would differ.

    {round_sections}

    See Also
    --------
    js_round

    Examples
    --------
    >>> r3(0.1235), r3(0.6004), r3(0.4545)
    (0.124, 0.6, 0.455)
    """
    arr = np.asarray(x, dtype=np.float64)
    out = js_round(arr * 1000.0) / 1000.0
    if np.ndim(out) == 0:
        return float(out)
    return out


def to_fixed(x, digits: int = 2) -> str:
    """JavaScript ``Number.prototype.toFixed``.

    Rounds the *exact binary value* of ``x`` to ``digits`` decimals, ties away
    from zero, which equals JavaScript's "let n be an integer for which
    n / 10^f - x is as close to zero as possible; if there are two such n,
    pick the larger n" for non-negative x.

    Parameters
    ----------
    x : float
        The number.
    digits : int, default=2
        Decimals after the point, 0 to 100.

    Returns
    -------
    str
        The text JavaScript prints (``"NaN"``, ``"Infinity"``, and ``String(x)`` from 1e21 on).

    Raises
    ------
    ValueError
        ``digits`` outside 0 to 100 (as JavaScript's RangeError).

    See Also
    --------
    js_number : JavaScript's default number text.
    js_round

    Examples
    --------
    >>> to_fixed(0.625, 2), to_fixed(0.185, 2), to_fixed(1, 2), to_fixed(0.455, 2)
    ('0.63', '0.18', '1.00', '0.46')
    """
    if not 0 <= int(digits) <= 100:
        raise ValueError("toFixed digits must be between 0 and 100")
    x = float(x)
    if math.isnan(x):
        return "NaN"
    if math.isinf(x):
        return "Infinity" if x > 0 else "-Infinity"
    if abs(x) >= 1e21:
        return js_number(x)
    q = Decimal(1).scaleb(-int(digits))
    d = Decimal(x)  # exact binary value
    # JavaScript picks the larger n on ties, i.e. half-up for x >= 0; for
    # negative x it formats -x and prepends the sign (half away from zero).
    text = format(abs(d).quantize(q, rounding=ROUND_HALF_UP), "f")
    # JavaScript keeps the sign even when the digits round to zero:
    # (-0.001).toFixed(2) == "-0.00", while (-0).toFixed(2) == "0.00".
    return "-" + text if x < 0 else text


def js_number(x) -> str:
    """JavaScript's default number-to-string (``String(x)``).

    Integral values print without a fraction (``1``, not ``1.0``); other
    values print the shortest round-tripping digits, as both languages do.

    Parameters
    ----------
    x : float
        The number.

    Returns
    -------
    str
        The text ``String(x)`` gives in JavaScript.

    See Also
    --------
    to_fixed

    Examples
    --------
    >>> js_number(1.0), js_number(1.25), js_number(0.5), js_number(3), js_number(-0.0)
    ('1', '1.25', '0.5', '3', '0')
    """
    x = float(x)
    if math.isnan(x):
        return "NaN"
    if math.isinf(x):
        return "Infinity" if x > 0 else "-Infinity"
    if x == 0:
        return "0"
    r = repr(x)  # shortest round-trip digits
    mantissa, _, exp = r.partition("e")
    digits_part = mantissa.replace("-", "")
    sign = "-" if x < 0 else ""
    if "." in digits_part:
        int_part, frac_part = digits_part.split(".")
    else:
        int_part, frac_part = digits_part, ""
    if frac_part == "0":
        frac_part = ""
    e = int(exp) if exp else 0
    digits = (int_part + frac_part).lstrip("0")
    # position of the decimal point relative to the start of `digits`
    lead_zeros = len(int_part + frac_part) - len((int_part + frac_part).lstrip("0"))
    point = len(int_part) - lead_zeros + e
    digits = digits.rstrip("0") or "0"
    k = len(digits)
    n = point
    # ECMAScript Number::toString algorithm (k digits, decimal exponent n)
    if k <= n <= 21:
        return sign + digits + "0" * (n - k)
    if 0 < n <= 21:
        return sign + digits[:n] + "." + digits[n:]
    if -6 < n <= 0:
        return sign + "0." + "0" * (-n) + digits
    e_out = n - 1
    e_text = ("+" if e_out >= 0 else "-") + str(abs(e_out))
    if k == 1:
        return sign + digits + "e" + e_text
    return sign + digits[0] + "." + digits[1:] + "e" + e_text
