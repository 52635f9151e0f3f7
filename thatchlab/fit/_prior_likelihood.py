"""PriorFitter's objectives on reduced data, with their derivatives and profiles (private).

Both objectives of :class:`~thatchlab.fit.PriorFitter` are functions of
``a = K·P0``, ``b = K·(1−P0)`` and ``K = a + b``, read at
``θ = (log K, logit P0)``. The data are reduced before the first
evaluation, so that one evaluation costs a few dot products:

- :class:`LogTerms`: ``ℓ = Σ wa·log(xa + a) + Σ wb·log(xb + b) − Σ wk·log(xk + K)``.
  The prequential score has this form (one term per distinct count before a
  signal), and so does the beta-binomial marginal likelihood of *integer*
  counts, since ``lnB(a + c, b + d) − lnB(a, b) = Σ_{j<c} log(a + j) +
  Σ_{j<d} log(b + j) − Σ_{j<c+d} log(K + j)``: with ``wa_j`` the weight of
  the items with more than ``j`` confirms (``wb_j``, ``wk_j`` likewise for
  disconfirms and signals), it is one log per count value instead of a
  ``betaln`` per distinct pair. Value, gradient and second derivatives are
  closed-form sums, so the maximum (:func:`newton_max`), each profile's
  inner maximum (:func:`inner_max`) and each interval end
  (:meth:`Profile.crossing`) are found by Newton's method.
- :class:`BetaPairs`: ``Σ w·[lnB(a + c, b + d) − lnB(a, b)]`` over the
  distinct (c, d) pairs, for fractional counts: BFGS, a bounded scalar
  search and ``brentq`` as before (no second derivatives).

:func:`distinct_pairs` checks per-item counts and reduces them to distinct
pairs with a bincount of integer keys.
"""

from __future__ import annotations

import math

import numpy as np

from thatchlab.core.errors import InputError

__all__ = ["BetaPairs", "LogTerms", "Profile", "distinct_pairs", "inner_max", "newton_max"]

#: Integer counts are keyed ``c·(max d + 1) + d`` and bincounted while the keys span at most
#: this (or twice the rows); wider keys are sorted.
_KEY_SPACE = 1 << 16
#: Steps of an ascent before it gives up (BFGS, or a bounded scalar search, takes over).
_NEWTON_STEPS = 100
#: A maximum is reached when the next Newton step would raise ℓ by less than this times
#: ``1 + |ℓ|`` (the rounding of a sum of that size).
_GAIN = 1e-13


def _first_bad(values: np.ndarray) -> int:
    return int(np.flatnonzero(~(np.isfinite(values) & (values >= 0)))[0])


def distinct_pairs(c, d):
    """Checked per-item counts reduced to the distinct (c, d) pairs with at least one signal.

    Returns ``(c, d, pairs_c, pairs_d, weights, n_items, integer)``: the
    checked float arrays, the distinct pairs in lexicographic order (that of
    ``np.unique(..., axis=0)``), how many items hold each, the number of
    items with a signal, and whether every count is an integer. Integer
    counts are keyed ``c·(max d + 1) + d`` and bincounted (or, over a wide
    key range, ``np.unique`` of the keys); other counts go through
    ``np.unique(..., axis=0)``. Raises :class:`InputError` naming the first
    bad row and column.
    """
    c = np.asarray(c, dtype=np.float64).ravel()
    d = np.asarray(d, dtype=np.float64).ravel()
    if c.shape != d.shape:
        raise InputError("c and d differ in length")
    if c.size == 0:
        raise InputError("signals: no confirm, disconfirm or soft signal to fit on")
    tops = []
    for name, values in (("c", c), ("d", d)):
        lo, hi = values.min(), values.max()  # NaN propagates: one pass each finds NaN, inf or < 0
        if not (lo >= 0 and hi < math.inf):
            row = _first_bad(values)
            raise InputError(f"counts row {row}, column {name!r}: expected a finite count >= 0, "
                             f"got {float(values[row])!r}")
        tops.append(int(hi))
    span_d = tops[1] + 1
    space = (tops[0] + 1) * span_d
    if space < 1 << 62:
        ci, di = c.astype(np.int64), d.astype(np.int64)
        if np.array_equal(ci, c) and np.array_equal(di, d):
            key = ci * span_d + di
            if space <= max(2 * key.size, _KEY_SPACE):
                held = np.bincount(key, minlength=space)
                held[0] = 0  # items without a signal are not fitted
                keys = np.flatnonzero(held)
                held = held[keys]
            else:
                keys, held = np.unique(key, return_counts=True)
                held[keys == 0] = 0
                keys, held = keys[held > 0], held[held > 0]
            if keys.size == 0:
                raise InputError("signals: no confirm, disconfirm or soft signal to fit on")
            pc, pd_ = np.divmod(keys, span_d)
            return (c, d, pc.astype(np.float64), pd_.astype(np.float64), held.astype(np.float64),
                    int(held.sum()), True)
    keep = (c + d) > 0
    if not keep.any():
        raise InputError("signals: no confirm, disconfirm or soft signal to fit on")
    pairs, weights = np.unique(np.stack([c[keep], d[keep]], axis=1), axis=0, return_counts=True)
    pc, pd_ = pairs[:, 0], pairs[:, 1]
    integer = not (np.any(pc % 1) or np.any(pd_ % 1))
    return c, d, pc, pd_, weights.astype(np.float64), int(keep.sum()), integer


def _merge(x, w):
    """Equal ``x`` merged, their weights summed; zero weights dropped."""
    x = np.asarray(x, dtype=np.float64)
    w = np.asarray(w, dtype=np.float64)
    values, where = np.unique(x, return_inverse=True)
    weights = np.bincount(where.ravel(), weights=w, minlength=values.size)
    keep = weights != 0
    return values[keep], weights[keep]


def _survival(counts, w):
    """``(j, Σ_{counts > j} w)`` for ``j = 0 … max(counts) − 1`` (integer counts)."""
    held = np.bincount(counts.astype(np.int64), weights=w)
    above = np.cumsum(held[::-1])[::-1][1:]  # weight of the items with more than j
    j = np.arange(above.size, dtype=np.float64)
    keep = above > 0
    return j[keep], above[keep]


def _coords(theta):
    k = math.exp(theta[0])
    u = float(theta[1])
    p = 1.0 / (1.0 + math.exp(-u))
    q = 1.0 / (1.0 + math.exp(u))  # 1 − p without the cancellation near p = 1
    return k, p, q


class LogTerms:
    """``ℓ(θ) = Σ wa log(xa + a) + Σ wb log(xb + b) − Σ wk log(xk + K)``.

    Parameters
    ----------
    xa, wa, xb, wb, xk, wk : the offsets and weights of the three sums
        (equal offsets are merged).
    """

    has_curvature = True

    def __init__(self, xa, wa, xb, wb, xk, wk):
        self.xa, self.wa = _merge(xa, wa)
        self.xb, self.wb = _merge(xb, wb)
        self.xk, self.wk = _merge(xk, wk)

    @classmethod
    def from_pairs(cls, c, d, w) -> LogTerms:
        """The marginal likelihood of integer (c, d) pairs held by ``w`` items each."""
        xa, wa = _survival(c, w)
        xb, wb = _survival(d, w)
        xk, wk = _survival(c + d, w)
        return cls(xa, wa, xb, wb, xk, wk)

    def value(self, theta) -> float:
        k, p, q = _coords(theta)
        return float(self.wa @ np.log(self.xa + k * p) + self.wb @ np.log(self.xb + k * q)
                     - self.wk @ np.log(self.xk + k))

    def _parts(self, theta):
        k, p, q = _coords(theta)
        ta, tb, tk = self.xa + k * p, self.xb + k * q, self.xk + k
        f = float(self.wa @ np.log(ta) + self.wb @ np.log(tb) - self.wk @ np.log(tk))
        ra, rb, rk = 1.0 / ta, 1.0 / tb, 1.0 / tk
        return f, k, p, q, ra, rb, rk, float(self.wa @ ra), float(self.wb @ rb), float(self.wk @ rk)

    def value_grad(self, theta):
        """``ℓ`` and ``∂ℓ/∂θ``."""
        f, k, p, q, _, _, _, sa, sb, sk = self._parts(theta)
        return f, np.array([k * (p * sa + q * sb - sk), k * p * q * (sa - sb)])

    def along(self, theta, j: int):
        """``ℓ``, ``∂ℓ/∂θ_j`` and ``∂²ℓ/∂θ_j²``."""
        f, k, p, q, ra, rb, rk, sa, sb, sk = self._parts(theta)
        a, b = k * p, k * q
        qa, qb = float(self.wa @ (ra * ra)), float(self.wb @ (rb * rb))
        if j == 0:  # ∂a/∂θ0 = a, ∂b/∂θ0 = b, ∂K/∂θ0 = K
            g = a * sa + b * sb - k * sk
            h = g - a * a * qa - b * b * qb + k * k * float(self.wk @ (rk * rk))
        else:  # ∂a/∂θ1 = s = K·p·q = −∂b/∂θ1, ∂s/∂θ1 = s·(q − p), K fixed
            s = k * p * q
            g = s * (sa - sb)
            h = (q - p) * g - s * s * (qa + qb)
        return f, g, h

    def hessian(self, theta):
        """``ℓ``, ``∇ℓ`` and the 2 × 2 matrix of second derivatives."""
        f, k, p, q, ra, rb, rk, sa, sb, sk = self._parts(theta)
        a, b, s = k * p, k * q, k * p * q
        qa, qb, qk = float(self.wa @ (ra * ra)), float(self.wb @ (rb * rb)), float(self.wk @ (rk * rk))
        gx, gu = a * sa + b * sb - k * sk, s * (sa - sb)
        hxx = gx - a * a * qa - b * b * qb + k * k * qk
        hxu = s * (sa - a * qa - sb + b * qb)
        huu = (q - p) * gu - s * s * (qa + qb)
        return f, np.array([gx, gu]), np.array([[hxx, hxu], [hxu, huu]])


class BetaPairs:
    """``ℓ(θ) = Σ w [lnB(a + c, b + d) − lnB(a, b)]`` over distinct pairs (any non-negative counts)."""

    has_curvature = False

    def __init__(self, c, d, w):
        self.c, self.d, self.w = c, d, w

    def value(self, theta) -> float:
        from scipy.special import betaln  # heavy: SciPy takes about 0.5 s to import

        k = math.exp(theta[0])
        p = 1.0 / (1.0 + math.exp(-theta[1]))
        a, b = k * p, k - k * p
        return float(self.w @ (betaln(a + self.c, b + self.d) - betaln(a, b)))

    def value_grad(self, theta):
        from scipy.special import digamma  # heavy: SciPy takes about 0.5 s to import

        k = math.exp(theta[0])
        p = float(1.0 / (1.0 + np.exp(-np.float64(theta[1]))))
        a, b = k * p, k * (1 - p)
        c, d, w = self.c, self.d, self.w
        tot = digamma(a + b) - digamma(a + b + c + d)
        ga = np.sum(w * (digamma(a + c) - digamma(a) + tot))
        gb = np.sum(w * (digamma(b + d) - digamma(b) + tot))
        return self.value(theta), np.array([a * ga + b * gb, k * p * (1 - p) * (ga - gb)])


def _step(g, H):
    """The Newton step ``−H⁻¹g`` and True, or, where ``H`` is not negative definite, an uphill step and False.

    The uphill step divides the gradient's part along each eigenvector of
    ``H`` by ``|λ|`` (at most one unit along each): Newton's step where the
    curvature is negative, a cautious one where it is not.
    """
    if g.size == 1:
        h = H[0, 0]
        if h < 0:
            return -g / h, True
        return np.clip(g / abs(h), -1.0, 1.0) if h != 0 else np.sign(g), False
    det = H[0, 0] * H[1, 1] - H[0, 1] * H[1, 0]
    if H[0, 0] < 0 and det > 0:
        return np.array([H[0, 1] * g[1] - H[1, 1] * g[0], H[1, 0] * g[0] - H[0, 0] * g[1]]) / det, True
    lam, vec = np.linalg.eigh(H)
    along = vec.T @ g
    with np.errstate(divide="ignore", invalid="ignore"):
        scaled = np.where(lam != 0, along / np.abs(lam), np.sign(along))
    return vec @ np.clip(scaled, -1.0, 1.0), False


def _ascend(evaluate, x0, lo, hi, exact: bool):
    """``(x, f)`` at the maximum of ``evaluate`` inside the box ``[lo, hi]``, or ``None`` if unsettled.

    ``evaluate(x)`` gives ``(f, ∇f, ∇²f)``. Newton steps where the
    curvature is negative definite, a cautious uphill step elsewhere
    (:func:`_step`); a step is halved until ``f`` does not fall (rises, for
    an uphill step) and a step off the box is cut to its edge. It stops
    when the next Newton step would gain less than ``_GAIN · (1 + |f|)``
    (``exact``: after one more Newton step, so that ``x`` too is settled),
    when no step improves ``f``, or on the box's edge with ``f`` still rising
    across it (coordinates held on an edge are left out of the Newton step).
    """
    x = np.clip(np.asarray(x0, dtype=np.float64), lo, hi)
    f, g, H = evaluate(x)
    settling = False
    for _ in range(_NEWTON_STEPS):
        tol = _GAIN * (1.0 + abs(f))  # ℓ is a sum: below this a change is rounding
        free = ~(((x <= lo) & (g < 0)) | ((x >= hi) & (g > 0)))  # not held on an edge it rises across
        if not free.any():
            return x, f
        if free.all():
            step, newton = _step(g, H)
        else:  # Newton in the free coordinates only
            sub, newton = _step(g[free], H[np.ix_(free, free)])
            step = np.zeros_like(x)
            step[free] = sub
            g = np.where(free, g, 0.0)
        if newton and 0.5 * float(g @ step) <= tol:
            if settling or not exact:
                return x, f
            settling = True
        floor = f - tol if newton else f  # an uphill step must rise
        new = np.clip(x + step, lo, hi)
        if np.array_equal(new, x):
            return x, f
        f_new, g_new, H_new = evaluate(new)
        halvings = 0
        while not (f_new > floor or (newton and f_new == floor)) and halvings < 40:
            step = step / 2.0
            new = np.clip(x + step, lo, hi)
            f_new, g_new, H_new = evaluate(new)
            halvings += 1
        if not (f_new > floor or (newton and f_new == floor)):
            return x, f
        x, f, g, H = new, f_new, g_new, H_new
    return None


def newton_max(objective, theta0, lo, hi):
    """``(θ, ℓ)`` at the maximum :func:`_ascend` reaches from ``theta0`` in the box ``[lo, hi]``, or ``None``."""
    return _ascend(objective.hessian, theta0, lo, hi, exact=True)


def _ascend1(evaluate, y: float, lo: float, hi: float):
    """:func:`_ascend` along one coordinate, in plain floats (the profiles' inner searches)."""
    y = min(max(float(y), lo), hi)
    f, g, h = evaluate(y)
    for _ in range(_NEWTON_STEPS):
        if g == 0 or (y <= lo and g < 0) or (y >= hi and g > 0):
            return y, f
        tol = _GAIN * (1.0 + abs(f))
        newton = h < 0
        if newton:
            step = -g / h
            if 0.5 * g * step <= tol:
                return y, f
        else:  # not concave here: at most one unit uphill
            step = max(-1.0, min(1.0, g / abs(h))) if h != 0 else math.copysign(1.0, g)
        floor = f - tol if newton else f
        for _ in range(41):
            new = min(max(y + step, lo), hi)
            if new == y:
                return y, f
            f_new, g_new, h_new = evaluate(new)
            if f_new > floor or (newton and f_new == floor):
                break
            step /= 2.0
        else:
            return y, f
        y, f, g, h = new, f_new, g_new, h_new
    return None


def inner_max(objective, which: int, value: float, start: float, bounds) -> tuple[float, float]:
    """``max_y ℓ`` with coordinate ``which`` fixed at ``value``, ``y`` the other one in ``bounds``.

    :func:`_ascend1` from ``start``; when it does not settle, or the
    objective has no curvature, a bounded scalar search over all of
    ``bounds`` (``xatol`` 1e-4). Returns ``(ℓ at the maximum, y)``.
    """
    from scipy.optimize import minimize_scalar  # heavy: SciPy takes about 0.5 s to import

    other = 1 - which
    lo, hi = bounds

    def at(y):
        return (value, y) if which == 0 else (y, value)

    if objective.has_curvature:
        reached = _ascend1(lambda y: objective.along(at(y), other), start, lo, hi)
        if reached is not None:
            return reached[1], reached[0]
    res = minimize_scalar(lambda y: -objective.value(at(y)), bounds=(lo, hi), method="bounded",
                          options={"xatol": 1e-4})
    return -float(res.fun), float(res.x)


class Profile:
    """The profile of ``ℓ`` in coordinate ``which``: the other coordinate maximised out.

    Each inner search starts where the one at the nearest value already
    searched ended (the estimate's, first). ``at_infinity(u)``, when given,
    is ``ℓ`` at K = ∞ as a function of ``u = logit P0``, which the profile
    in P0 includes.

    Parameters
    ----------
    objective : a :class:`LogTerms` or :class:`BetaPairs`.
    which : 0 (log K) or 1 (logit P0).
    theta : the estimate ``(log K, logit P0)``.
    bounds : the box of the other coordinate.
    at_infinity : ``u ↦ (ℓ, ∂ℓ/∂u)`` at K = ∞, or None.
    """

    def __init__(self, objective, which: int, theta, bounds, at_infinity=None):
        self.objective, self.which, self.bounds = objective, which, bounds
        self.theta = np.asarray(theta, dtype=np.float64)
        self.at_infinity = at_infinity
        self._where = {float(self.theta[which]): float(self.theta[1 - which])}
        self._done: dict[float, tuple[float, bool]] = {}

    def _point(self, value: float, y: float):
        return (value, y) if self.which == 0 else (y, value)

    def __call__(self, value: float) -> float:
        """The profile at ``value`` (of coordinate ``which``)."""
        value = float(value)
        if value not in self._done:
            near = min(self._where, key=lambda x: abs(x - value))
            best, y = inner_max(self.objective, self.which, value, self._where[near], self.bounds)
            limit = self.at_infinity is not None and self.at_infinity(value)[0] > best
            self._done[value] = (self.at_infinity(value)[0] if limit else best, limit)
            self._where[value] = y
        return self._done[value][0]

    def slope(self, value: float) -> float:
        """``d profile / d value``: ``∂ℓ/∂θ_which`` where the inner maximum is (envelope theorem)."""
        self(value)
        if self._done[float(value)][1]:
            return self.at_infinity(float(value))[1]
        return self.objective.along(self._point(float(value), self._where[float(value)]), self.which)[1]

    def crossing(self, target: float, start: float, end: float, cut: float) -> float:
        """A root of ``profile = target`` between ``start`` (above it) and ``end`` (below it).

        With curvature: Newton's method on the profile (slopes by
        :meth:`slope`) from the quadratic approximation's crossing, kept
        inside the shrinking bracket (a bisection whenever a step would leave
        it; scipy has no bracketed Newton), to 1e-8 in the coordinate.
        Without curvature: ``brentq`` over the bracket (``xtol`` 1e-5).
        """
        from scipy.optimize import brentq  # heavy: SciPy takes about 0.5 s to import

        def gap(x):
            return self(x) - target

        if not self.objective.has_curvature:
            return float(brentq(gap, *sorted((start, end)), xtol=1e-5))
        _, _, H = self.objective.hessian(self.theta)
        j, o = self.which, 1 - self.which
        curv = H[j, j] - H[j, o] * H[o, j] / H[o, o] if H[o, o] < 0 else 0.0
        above, below = start, end  # gap(above) > 0 > gap(below)
        x = start + math.copysign(math.sqrt(2.0 * cut / -curv), end - start) if curv < 0 else math.nan
        if not min(above, below) < x < max(above, below):
            x = 0.5 * (above + below)
        for _ in range(200):
            gx = gap(x)
            if gx == 0:
                return x
            if gx > 0:
                above = x
            else:
                below = x
            slope = self.slope(x)
            step = gx / slope if slope != 0 else math.nan
            new = x - step
            if not min(above, below) < new < max(above, below):
                new = 0.5 * (above + below)
            if abs(new - x) <= 1e-8 or abs(above - below) <= 1e-8:
                return new
            x = new
        return x
