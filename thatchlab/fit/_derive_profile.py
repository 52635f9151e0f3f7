"""The likelihood of :class:`~thatchlab.fit.DeriveWeightsFitter` and its profiles.

``_Likelihood`` is the Bernoulli log-likelihood of consumption under ai-memory's
derive formula with its gradient and information; the functions below maximise
it over the free parameters, profile one parameter at a time (``_profile_interval``:
the interval where the profile deviance stays under the χ² quantile, and whether a
side is flat) and word the result (``_describe``).
"""

from __future__ import annotations

import copy
import math

import numpy as np

from thatchlab.calibration import EPS, LN2

#: The derive coefficients, in the order of the summary.
COEFS = ("intercept", "atom_bump", "corroboration_weight", "age_penalty", "half_life_days")
#: Where each parameter can live (the interval of a parameter the data cannot inform).
RANGES = {"intercept": (-math.inf, math.inf), "atom_bump": (-math.inf, math.inf),
          "corroboration_weight": (-math.inf, math.inf), "age_penalty": (-math.inf, math.inf),
          "half_life_days": (0.0, math.inf), "baseline": (0.0, 1.0)}
_LABEL = {"intercept": "intercept", "atom_bump": "atom bump", "corroboration_weight": "corroboration weight",
          "age_penalty": "age penalty", "half_life_days": "half-life", "baseline": "baseline"}


class _Likelihood:
    """Bernoulli log-likelihood of consumption under derive, on the fitting scale.

    ``theta`` holds the fitted names in order, the half-life as ``ln hl``;
    the other derive arguments come from ``fixed``. The formula is derive's,
    written with numpy's ``exp``/``log10`` (derive's own last-bit libm
    evaluation is not needed to profile or to differentiate).
    """

    def __init__(self, x: dict, names, fixed: dict, eps: float):
        self.names = tuple(names)
        self.age = np.maximum(np.asarray(x["age_days"], dtype=np.float64), 0.0)
        self.atom = np.asarray(x["is_atom"], dtype=np.float64)
        self.corr = np.maximum(np.log10(1.0 + np.maximum(np.asarray(x["corroboration"], np.float64), 0.0)), 0.0)
        self.y = np.asarray(x["consumed"], dtype=np.float64)
        self.fixed = {n: fixed[n] for n in COEFS + ("baseline",)}
        self.eps = eps
        self.idx = {n: i for i, n in enumerate(self.names)}

    def _get(self, theta, name):
        i = self.idx.get(name)
        if i is None:
            return self.fixed[name] if name != "half_life_days" else math.log(self.fixed[name])
        return theta[i]

    def p_and_jacobian(self, theta):
        """``p`` (clipped) per touch, ``∂v/∂theta`` (n × k) and the mask where the clip of ``v`` is inactive."""
        g = {n: self._get(theta, n) for n in COEFS + ("baseline",)}
        hl = max(math.exp(min(g["half_life_days"], 700.0)), EPS)  # e^700 days: no decay at all
        z = self.age * (LN2 / hl)
        ff = np.exp(-z)
        raw = g["intercept"] + g["atom_bump"] * self.atom + g["corroboration_weight"] * self.corr \
            - g["age_penalty"] * z
        base = np.clip(raw, 0.0, 1.0)
        inside = ((raw > 0.0) & (raw < 1.0)).astype(np.float64)
        b = min(max(g["baseline"], 0.0), 1.0)
        v = base * ff + b * (1.0 - ff)
        p = np.clip(v, self.eps, 1.0 - self.eps)
        free = (v > self.eps) & (v < 1.0 - self.eps)
        cols = {"intercept": inside * ff, "atom_bump": inside * self.atom * ff,
                "corroboration_weight": inside * self.corr * ff, "age_penalty": -inside * z * ff,
                "half_life_days": ff * z * (inside * g["age_penalty"] + base - b),
                "baseline": (1.0 - ff) * float(0.0 < g["baseline"] < 1.0)}
        jac = np.column_stack([cols[n] for n in self.names])
        return p, jac, free

    def loglik_of(self, p) -> float:
        return float(np.sum(self.y * np.log(p) + (1 - self.y) * np.log1p(-p)))

    def loglik(self, theta) -> float:
        return self.loglik_of(self.p_and_jacobian(theta)[0])

    def nll_and_grad(self, theta):
        """``(−ℓ, −∂ℓ/∂theta)``."""
        p, jac, free = self.p_and_jacobian(theta)
        y = self.y
        ll = float(np.sum(y * np.log(p) + (1 - y) * np.log1p(-p)))
        score = free * (y / p - (1 - y) / (1 - p))
        return -ll, -(score @ jac)

    def information(self, theta):
        """``Σ ∇v ∇vᵀ / (p(1 − p))`` over touches where the clip is inactive (Fisher information)."""
        p, jac, free = self.p_and_jacobian(theta)
        w = free / (p * (1 - p))
        return (jac * w[:, None]).T @ jac


def _hessian(f, x, rel=1e-4):
    """Central-difference Hessian of ``f`` at ``x``."""
    x = np.asarray(x, dtype=np.float64)
    k = len(x)
    h = rel * np.maximum(np.abs(x), 1.0)
    H = np.empty((k, k))
    f0 = f(x)
    for i in range(k):
        ei = np.zeros(k)
        ei[i] = h[i]
        H[i, i] = (f(x + ei) - 2 * f0 + f(x - ei)) / h[i] ** 2
        for j in range(i + 1, k):
            ej = np.zeros(k)
            ej[j] = h[j]
            H[i, j] = H[j, i] = (f(x + ei + ej) - f(x + ei - ej) - f(x - ei + ej) + f(x - ei - ej)) / (4 * h[i] * h[j])
    return H


def _present(hess, theta, f0, rel=1e-4) -> np.ndarray:
    """Which parameters the likelihood contains: the information diagonal is above 100 × the
    rounding noise of the central differences (``|f0|·eps/h²``).

    >>> _present(np.array([[4.0, 0.0], [0.0, 0.0]]), np.zeros(2), 100.0).tolist()
    [True, False]
    """
    step = rel * np.maximum(np.abs(np.asarray(theta, dtype=np.float64)), 1.0)
    diag = np.diag(hess)
    return np.isfinite(diag) & (diag > 100 * max(abs(float(f0)), 1.0) * np.finfo(np.float64).eps / step**2)


def _natural(name, v):
    return math.exp(min(v, 700.0)) if name == "half_life_days" else float(v)


def _fmt(name, v):
    return f"{v:.4g} days" if name == "half_life_days" else f"{v:.4g}"


def _describe(name, i, names, theta, prof, identified, age, absent=False):
    """``(ci_lower, ci_upper, bound, note)`` of parameter ``i`` from its profile (the class docstring's rule)."""
    lo_r, hi_r = RANGES[name]
    if np.ptp(age) == 0 and age.max() == 0:
        cause = "every age is 0, so derive does not depend on the age penalty or the half-life"
    elif np.ptp(age) == 0:
        cause = f"ages all equal ({age[0]:g} days), so the half-life and the age penalty trade off"
    elif "half_life_days" in names and theta[names.index("half_life_days")] > math.log(100 * max(age.max(), 1.0)) \
            and name in ("half_life_days", "age_penalty"):
        hl = _natural("half_life_days", theta[names.index("half_life_days")])
        cause = (f"no age effect: the half-life runs to {hl:.3g} days, far past the oldest touch "
                 f"({age.max():.3g} days), where the age penalty no longer acts")
    else:
        cause = "the data cannot tell its values apart"
    lo_f, hi_f, sides = prof
    lo = _natural(name, lo_f) if lo_f is not None else lo_r
    hi = _natural(name, hi_f) if hi_f is not None else hi_r
    if identified:
        if lo_f is not None and hi_f is not None:
            return lo, hi, f"{_fmt(name, lo)} to {_fmt(name, hi)}", ""
        if lo_f is None and hi_f is None:
            return lo, hi, "any value", "peaked, but the data rule out no value in the range searched"
        if hi_f is None:
            return lo, hi, f"≥ {_fmt(name, lo)}", "one-sided: the data set no upper bound"
        return lo, hi, f"≤ {_fmt(name, hi)}", "one-sided: the data set no lower bound"
    # flat: the reach of the flat part, and the parameters that move along it
    moved = set()
    for side in sides:
        d = np.abs(side["at"] - theta) > 0.05 * np.maximum(np.abs(theta), 0.01)
        moved |= {names[k] for k in np.flatnonzero(d) if k != i}
    r_lo, r_hi = (_natural(name, sd["reach"]) for sd in sides)
    where = (f"from {_fmt(name, r_lo)} to {_fmt(name, r_hi)}" if lo_f is not None and hi_f is not None
             else f"from {_fmt(name, r_lo)} up" if hi_f is None and lo_f is not None
             else f"up to {_fmt(name, r_hi)}" if lo_f is None and hi_f is not None
             else "over the whole range searched")
    note = f"flat: {cause}; the log-likelihood is within 0.01 of its maximum {where}"
    if absent and lo_f is None and hi_f is None:
        note = f"flat: {cause}; the likelihood does not depend on it"
    if moved:
        note += "; trades off with " + ", ".join(_LABEL[n] for n in names if n in moved)
    if lo_f is not None and hi_f is None:
        return lo, hi, f"≥ {_fmt(name, lo)}", note
    if hi_f is not None and lo_f is None:
        return lo, hi, f"≤ {_fmt(name, hi)}", note
    if lo_f is not None and hi_f is not None:
        return math.nan, math.nan, f"flat within {_fmt(name, lo)} to {_fmt(name, hi)}", note
    return math.nan, math.nan, "none", note


def _maximise(lik: _Likelihood, theta, free, tol=1e-5, max_iter=50):
    """Maximise the likelihood over the coordinates ``free`` from ``theta`` (the others held).

    Fisher scoring, ``Δ = (I + λ·diag I)⁺ g`` with ``I`` the information of
    :meth:`_Likelihood.information` and ``g`` the score over ``free``; the
    damping ``λ`` grows until a step does not lower ``ℓ`` and shrinks after
    each accepted step. Stops when the Newton decrement ``gᵀΔ`` or the gain
    of an accepted step is below ``tol`` (a kink of a clip can keep the
    gradient from vanishing while ``ℓ`` no longer moves; ``1e-5`` in ``ℓ``
    moves an interval end by well under 0.001 standard errors). Returns
    ``(ℓ, theta)``.
    """
    t = np.array(theta, dtype=np.float64)
    y = lik.y
    p, jac, clip_free = lik.p_and_jacobian(t)
    ll = lik.loglik_of(p)
    if not len(free):
        return ll, t
    lam = 0.0
    for _ in range(max_iter):
        jf = jac[:, free]
        g = (clip_free * (y / p - (1 - y) / (1 - p))) @ jf
        info = (jf * (clip_free / (p * (1 - p)))[:, None]).T @ jf
        while True:
            step = np.linalg.pinv(info + lam * np.diag(np.diag(info))) @ g
            trial = t.copy()
            trial[free] += step
            p2, jac2, free2 = lik.p_and_jacobian(trial)
            ll2 = lik.loglik_of(p2)
            if math.isfinite(ll2) and ll2 >= ll - 1e-12 * abs(ll):
                break
            lam = max(10.0 * lam, 1e-4)
            if lam > 1e8:
                return ll, t
        decrement, gained = float(g @ step), ll2 - ll
        t, p, jac, clip_free, ll = trial, p2, jac2, free2, ll2
        lam = lam / 10.0 if lam > 1e-6 else 0.0
        if decrement < tol or gained < tol:
            break
    return ll, t


def _profile_interval(lik: _Likelihood, theta, j, free, ll_hat, crit, step, lims, flat_dev=None):
    """Ends of ``{ψ: 2(ℓ̂ − ℓ_p(ψ)) ≤ crit}`` for coordinate ``j`` of ``theta`` (fitting scale), and
    whether the profile is flat on each side.

    ``ℓ_p(ψ)`` maximises the likelihood over the coordinates in ``free`` other
    than ``j`` (:class:`_SignedRoot`). The search works with the signed root
    ``r(ψ) = √(2(ℓ̂ − ℓ_p(ψ)))``, which is close to linear in ``ψ``: each
    side (:func:`_profile_side`) first tries the Wald end
    ``theta[j] ± √crit·step``, then doubles the distance (clamped to
    ``lims``) until ``r`` passes ``√crit``, and :func:`_bracketed_root` finds
    the crossing (warm-started from the last point inside).

    A side is *flat* when the deviance ``2(ℓ̂ − ℓ_p)`` stays below
    ``flat_dev`` at the midpoint between ``theta[j]`` and the side's end (a
    quadratic profile has ``crit/4`` there), or, on a side with no end up to
    the limit, at every point tried. Returns ``(lower, upper, (gain, best), sides)``:
    a bound ``None`` when ``r`` stays below ``√crit`` up to the limit,
    ``gain`` the largest ``ℓ_p − ℓ̂`` met (positive when ``theta`` was not the
    maximum), ``best`` the profile point where it was met, and ``sides`` one dict per side (lower, upper) with ``flat`` and
    ``reach``, the farthest point tried with a deviance below ``flat_dev``
    (``theta[j]`` when there is none), and ``at``, the profile's maximiser
    there.
    """
    theta = np.asarray(theta, dtype=np.float64)
    root = _SignedRoot(lik, theta, j, free, ll_hat)
    z = math.sqrt(crit)
    flat_dev = 0.0 if flat_dev is None else flat_dev
    out, sides = [], []
    for sign, limit in ((-1.0, lims[0]), (1.0, lims[1])):
        end, side = _profile_side(root, theta, j, sign, limit, z, step, flat_dev)
        out.append(end)
        sides.append(side)
    return out[0], out[1], (root.gain, root.top), sides


class _SignedRoot:
    """``root(ψ, warm) → (r(ψ), t)``: the signed root ``√(2(ℓ̂ − ℓ_p(ψ)))`` of coordinate ``j``'s
    profile and the profile's maximiser ``t``, remembering the highest profile point met.

    ``ℓ_p(ψ)`` is :func:`_maximise` over the coordinates in ``free`` other
    than ``j``, from the best of three starts: ``warm`` (the last profile
    point) with ``j`` moved to ``ψ``, and that point moved along the ridge's
    tangent as well (the others shifted by ``−I_oo⁺ I_oj Δψ``, which keeps
    every ``v_i`` fixed to first order, so a profile can follow a flat ridge
    through the clips' kinks), over all the others or over the linear ones
    only. ``gain`` is the largest ``ℓ_p − ℓ̂`` met and ``top`` where.
    """

    def __init__(self, lik: _Likelihood, theta, j, free, ll_hat):
        self.lik, self.j, self.ll_hat = lik, j, ll_hat
        self.others = np.array([i for i in free if i != j], dtype=int)
        # v is linear in every parameter but the half-life at a fixed half-life: a tangent over those
        # alone follows a linear ridge (intercept against age penalty at equal ages) exactly, however far
        self.linear = np.array([i for i in self.others if lik.names[i] != "half_life_days"], dtype=int)
        self.gain, self.top = 0.0, theta.copy()

    def __call__(self, psi, warm):
        lik, j = self.lik, self.j
        best, info = None, None
        for along in (None, self.others, self.linear):
            t = warm.copy()
            if along is not None:
                if not len(along):
                    continue
                if info is None:
                    p, jac, clip_free = lik.p_and_jacobian(warm)
                    info = (jac * (clip_free / (p * (1 - p)))[:, None]).T @ jac
                t[along] -= np.linalg.pinv(info[np.ix_(along, along)]) @ info[along, j] * (psi - warm[j])
            t[j] = psi
            llp, t = _maximise(lik, t, self.others)
            if math.isfinite(llp) and (best is None or llp > best[0]):
                best = (llp, t)
        llp, t = best if best is not None else (-math.inf, warm)
        if llp - self.ll_hat > self.gain:
            self.gain, self.top[:] = llp - self.ll_hat, t
        return math.sqrt(max(2 * (self.ll_hat - llp), 0.0)), t


def _profile_side(root: _SignedRoot, theta, j, sign, limit, z, step, flat_dev):
    """One side of :func:`_profile_interval`: ``(end, {"flat", "reach", "at"})``, ``end`` ``None``
    when the signed root stays below ``z`` out to ``limit``.

    Walks outward from ``theta[j]`` (the Wald end first, then doubling the
    distance) until the root passes ``z``, finds the crossing, and checks
    the deviance at the midpoint between ``theta[j]`` and the end for
    flatness.
    """
    warm, inside, r_in, outside, r_out = theta.copy(), float(theta[j]), 0.0, None, None
    reach, at, peak = float(theta[j]), theta.copy(), 0.0
    dist = z * float(step)
    while True:
        psi = float(theta[j] + sign * dist)
        at_limit = (psi <= limit) if sign < 0 else (psi >= limit)
        if at_limit:
            psi = float(limit)
        r, t = root(psi, warm)
        if r >= z:
            outside, r_out = psi, r
            break
        peak = max(peak, r * r)
        if r * r < flat_dev:
            reach, at = psi, t
        inside, r_in, warm = psi, r, t
        if at_limit:
            break
        dist *= 2.0
    if outside is None:
        return None, {"flat": peak < flat_dev, "reach": reach, "at": at}
    end = _bracketed_root(lambda psi, w=warm: root(psi, w), inside, r_in - z, outside, r_out - z, z,
                          xtol=1e-3 * step)
    mid = 0.5 * (float(theta[j]) + end)
    if abs(mid - reach) > 1e-12 * max(1.0, abs(mid)) and (mid - reach) * sign > 0:
        r, t = root(mid, warm if (inside - mid) * sign > 0 else theta.copy())
        if r * r < flat_dev:
            reach, at = mid, t
    flat = (reach - mid) * sign >= 0 and reach != float(theta[j])
    return end, {"flat": flat, "reach": reach, "at": at}


def _bracketed_root(evaluate, a, fa, b, fb, z, xtol, max_iter=40):
    """A root of ``r(ψ) − z`` between ``a`` (``fa < 0``) and ``b`` (``fb ≥ 0``), with the end values given.

    Illinois regula falsi (the signed root is close to linear, so it takes a
    few steps), bisecting when it stalls; ``evaluate(ψ)`` returns ``(r, t)``.
    Ends are never re-evaluated, so a profile that re-optimises to a slightly
    different point cannot lose the bracket.
    """
    side = 0
    for _ in range(max_iter):
        if abs(b - a) <= xtol:
            break
        c = b - fb * (b - a) / (fb - fa) if fb != fa else 0.5 * (a + b)
        if not min(a, b) < c < max(a, b):
            c = 0.5 * (a + b)
        fc = evaluate(c)[0] - z
        if abs(fc) < 1e-6:
            return c
        if fc < 0:
            a, fa = c, fc
            if side == -1:
                fb /= 2.0
            side = -1
        else:
            b, fb = c, fc
            if side == 1:
                fa /= 2.0
            side = 1
    return b - fb * (b - a) / (fb - fa) if fb != fa else 0.5 * (a + b)


#: Multi-start grid: the age penalty and the half-life (days) each start tries, with the other
#: coefficients at the estimate's values. Ages that vary let two shapes of the age curve fit about as
#: well (a positive penalty with a longer half-life, a negative one with a shorter half-life), and a
#: single optimiser run finds whichever basin it starts in.
START_AGE_PENALTY = (-0.2, -0.05, 0.05, 0.2)
START_HALF_LIFE = (5.0, 20.0, 80.0)


def _local_maxima(lik: _Likelihood, theta) -> list:
    """Local maxima of ``ℓ`` reached from the multi-start grid (and ``theta`` itself): ``[(ℓ, t), …]``,
    best first.

    Each start sets the age penalty and ``ln hl`` of ``theta`` to a grid point, climbs with
    L-BFGS (analytic gradient) and polishes with Fisher scoring (:func:`_maximise`), so each end is a
    maximum up to the clips' kinks. Ends that are one mode (:func:`_same_mode`: equal to ``1e-3``,
    or no valley deeper than ``_VALLEY`` between them) keep the higher.
    """
    from scipy import optimize  # heavy: SciPy takes about 0.5 s to import

    theta = np.asarray(theta, dtype=np.float64)
    names = lik.names
    free = np.arange(len(names))
    starts = [theta.copy()]
    ia, ih = names.index("age_penalty"), names.index("half_life_days")
    for d in START_AGE_PENALTY:
        for h in START_HALF_LIFE:
            t = theta.copy()
            t[ia], t[ih] = d, math.log(h)
            starts.append(t)
    found = []
    for t in starts:
        with np.errstate(all="ignore"):
            res = optimize.minimize(lik.nll_and_grad, t, jac=True, method="L-BFGS-B",
                                    options={"maxiter": 500})
            ll, t2 = _maximise(lik, res.x if np.all(np.isfinite(res.x)) else t, free, tol=1e-8)
        if math.isfinite(ll):
            found.append((ll, t2))
    found.sort(key=lambda e: -e[0])
    ends = []
    for ll, t2 in found:
        if not any(_same_mode(lik, u, ll_u, t2, ll) for ll_u, u in ends):
            ends.append((ll, t2))
    return ends


#: Two maxima are distinct modes only when the straight path between them dips this far (in
#: log-likelihood) below the lower one; shallower dips are the clips' kinks stalling a climb on the
#: slope of one mode.
_VALLEY = 0.5


def _same_mode(lik: _Likelihood, a, ll_a, b, ll_b) -> bool:
    """Whether maxima ``a`` and ``b`` are one mode: equal to ``1e-3`` in every coordinate, or joined by
    a straight path (9 interior points) that never drops more than ``_VALLEY`` below the lower end."""
    if np.all(np.abs(b - a) <= 1e-3 * np.maximum(np.abs(a), 1.0)):
        return True
    low = min(ll_a, ll_b)
    return all(lik.loglik(a + s * (b - a)) >= low - _VALLEY for s in np.linspace(0.1, 0.9, 9))


def _calibrated_cut(lik: _Likelihood, theta, crit: float, draws: int, seed: int):
    """Per parameter, the χ² cut scaled by the profile deviance's mean under the fitted model (a
    parametric-bootstrap Bartlett factor, never below 1): ``(cuts, deviances)``.

    Each draw redraws every consumption from the fitted probabilities, maximises the likelihood
    from ``theta`` (the draw's truth) over all parameters and with each parameter in turn held at
    its true value, and records ``2(ℓ*(θ̂*) − ℓ*_p(θ_j))``, the statistic the profile interval
    compares with ``χ²₁``, whose mean is 1 where the likelihood is regular. Derive's blend toward
    the baseline makes the half-life and age penalty weakly identified wherever the base value sits
    near the baseline, and there the deviance runs heavier than ``χ²₁`` (its plain 95% intervals
    cover about 92.7% of worlds at 4000 touches); Bartlett's correction divides the deviance by its
    mean, so the cut becomes ``χ²₁,₁₋α · max(1, mean D*_j)``.
    """
    theta = np.asarray(theta, dtype=np.float64)
    k = len(theta)
    cuts = np.full(k, float(crit))
    if not int(draws):
        return cuts, np.zeros((0, k))
    everything = np.arange(k)
    p = lik.p_and_jacobian(theta)[0]
    rng = np.random.default_rng(seed)
    devs = np.zeros((int(draws), k))
    for b in range(int(draws)):
        boot = copy.copy(lik)
        boot.y = (rng.random(len(p)) < p).astype(np.float64)
        with np.errstate(all="ignore"):  # a draw can make the information singular; pinv copes
            ll_full, _ = _maximise(boot, theta, everything, tol=1e-7)
            ll_j = np.array([_maximise(boot, theta, everything[everything != j], tol=1e-7)[0]
                             for j in range(k)])
        devs[b] = 2.0 * (max(ll_full, float(ll_j.max())) - ll_j)
    moving = devs.max(axis=0) > 0.02
    cuts[moving] = crit * np.maximum(1.0, devs[:, moving].mean(axis=0))
    return cuts, devs
