"""Fitting ai-memory's derive coefficients to consumption.

Production's derive coefficients (0.5 intercept, 0.1 atom bump, 0.05
corroboration weight, 0.02 age penalty) and 30-day half-life are hand-set.
:class:`DeriveWeightsFitter` reads them as a model of the probability that a
recalled memory is consumed and fits them by maximum likelihood (scipy), with
profile-likelihood intervals, identification read from the shape of each
profile (flat, one-sided or bounded, said in words in the summary) and an
honest convergence flag, and compares the fitted derive
on held-out time with scikit-learn style recalibrations of the hand-set value.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd
from scipy import optimize, stats

from thatchlab.calibration import EPS, LN2, derive, recall_features
from thatchlab.core.errors import InputError
from thatchlab.core.params.calibration import CalibrationParams
from thatchlab.metrics.calibration import brier, ece, log_loss
from thatchlab.tune._fitter import BaseFitter

__all__ = ["DeriveWeightsFitter", "interval_coverage", "recall_features", "recalibrate"]

COEFS = ("intercept", "atom_bump", "corroboration_weight", "age_penalty", "half_life_days")


def _logit(p):
    p = np.clip(np.asarray(p, dtype=np.float64), 1e-6, 1 - 1e-6)
    return np.log(p) - np.log1p(-p)


def recalibrate(method: str, p_train, y_train, p_test):
    """Recalibrate forecasts: fit ``method`` on (p_train, y_train), apply to p_test.

    ``isotonic`` (scikit-learn ``IsotonicRegression``), ``sigmoid`` (Platt:
    logistic regression on logit p), ``temperature`` (``σ(logit p / T)``, T by
    maximum likelihood).

    >>> import numpy as np
    >>> recalibrate("isotonic", [0.2, 0.4, 0.6, 0.8], [0, 0, 1, 1], [0.3, 0.7]).tolist()
    [0.0, 1.0]
    """
    p_train, y_train, p_test = (np.asarray(a, dtype=np.float64) for a in (p_train, y_train, p_test))
    if method == "isotonic":
        from sklearn.isotonic import IsotonicRegression

        return IsotonicRegression(y_min=0.0, y_max=1.0, out_of_bounds="clip").fit(p_train, y_train).predict(p_test)
    if method == "sigmoid":
        from sklearn.linear_model import LogisticRegression

        lr = LogisticRegression(C=1e6).fit(_logit(p_train)[:, None], y_train.astype(int))
        return lr.predict_proba(_logit(p_test)[:, None])[:, 1]
    if method == "temperature":
        z = _logit(p_train)

        def nll(log_t):
            q = np.clip(1.0 / (1.0 + np.exp(-z / math.exp(log_t))), 1e-12, 1 - 1e-12)
            return -np.mean(y_train * np.log(q) + (1 - y_train) * np.log1p(-q))

        t = math.exp(optimize.minimize_scalar(nll, bounds=(-5, 5), method="bounded").x)
        return 1.0 / (1.0 + np.exp(-_logit(p_test) / t))
    raise InputError(f"method: expected 'isotonic', 'sigmoid' or 'temperature', got {method!r}")


# -- the likelihood, vectorised over judged touches, with its gradient ------------------------

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


#: Where each parameter can live (the interval of a parameter the data cannot inform).
RANGES = {"intercept": (-math.inf, math.inf), "atom_bump": (-math.inf, math.inf),
          "corroboration_weight": (-math.inf, math.inf), "age_penalty": (-math.inf, math.inf),
          "half_life_days": (0.0, math.inf), "baseline": (0.0, 1.0)}
#: How far a profile searches on the fitting scale (``ln hl`` for the half-life) before it calls a
#: bound unreachable and reports the end of the parameter's range.
_SEARCH = {"half_life_days": (math.log(1e-3), math.log(1e6)), "baseline": (0.0, 1.0)}
_SEARCH_HALF_WIDTH = 64.0
#: Options of the two optimiser passes of the point estimate (unchanged, so estimates are stable).
_SIMPLEX_OPTIONS = {"maxiter": 20000, "maxfev": 20000, "xatol": 1e-7, "fatol": 1e-9, "adaptive": True}
_BFGS_OPTIONS = {"gtol": 1e-6}
#: Convergence: ``sqrt(gᵀ I⁻¹ g)`` (the distance to the optimum, in standard errors, that a Newton step
#: would go) must be at most this, or else Fisher scoring from the estimate must gain at most
#: ``_KINK_GAIN`` in log-likelihood (a maximum on a kink of a clip); and no profile may find a
#: log-likelihood more than ``_PROFILE_GAIN`` above the estimate's (a better maximum elsewhere).
_GRADIENT_TOL, _KINK_GAIN, _PROFILE_GAIN = 1e-2, 1e-6, 0.05
#: How many times a fit restarts from a better maximum a profile found before it reports a local one.
_RESTARTS = 3
#: Flatness: a side of a profile is flat when the deviance ``2(ℓ̂ − ℓ_p)`` stays below this (a
#: log-likelihood drop of 0.01, 1/192 of χ²₁,₀.₉₅) halfway to the interval's end on that side.
_FLAT_DEVIANCE = 0.02
_LABEL = {"intercept": "intercept", "atom_bump": "atom bump", "corroboration_weight": "corroboration weight",
          "age_penalty": "age penalty", "half_life_days": "half-life", "baseline": "baseline"}


class DeriveWeightsFitter(BaseFitter):
    r"""Maximum-likelihood fit of the derive coefficients and half-life to consumption.

    Model: the judged touch ``i`` (age :math:`t_i` days, atom flag :math:`u_i`,
    corroboration count :math:`n_i`, consumed :math:`y_i \in \{0, 1\}`) is
    consumed with probability :math:`p_i = \mathrm{clip}(v_i, \epsilon, 1 - \epsilon)`,
    derive's value under the parameters
    :math:`\theta = (a, \beta, \gamma, \delta, h)` (intercept, atom bump,
    corroboration weight, age penalty, half-life) and the baseline :math:`B`:

    .. math::

        z_i = t_i \ln 2 / h, \qquad f_i = e^{-z_i}, \qquad
        b_i = \mathrm{clip}(a + \beta u_i + \gamma \log_{10}(1 + n_i) - \delta z_i, 0, 1),

        v_i = \mathrm{clip}(b_i f_i + B (1 - f_i), 0, 1),

        \ell(\theta) = \sum_i y_i \ln p_i + (1 - y_i) \ln(1 - p_i).

    The half-life is fitted as :math:`\ln h`; ``baseline`` is fixed unless
    ``fit_baseline``. :math:`\hat\theta` maximises :math:`\ell` (Nelder-Mead,
    then a BFGS polish).

    **Intervals** are profile-likelihood intervals: for each parameter
    :math:`\theta_j`, :math:`\ell_p(\psi) = \max_{\theta:\, \theta_j = \psi} \ell(\theta)`
    (the other parameters re-optimised, L-BFGS with the analytic gradient) and
    the interval is :math:`\{\psi : 2(\ell(\hat\theta) - \ell_p(\psi)) \le
    \chi^2_{1, 1-\alpha}\}`, its ends found by bracketing outward from
    :math:`\hat\theta_j` and root finding (regula falsi on the signed root
    :math:`\sqrt{2(\ell(\hat\theta) - \ell_p(\psi))}`). The half-life's interval is
    found on the log scale (profile intervals do not depend on the scale). A
    bound the profile never reaches inside a wide search range is the end of
    the parameter's range (``±inf``, ``0`` or ``inf`` for the half-life,
    ``0``/``1`` for the baseline). ``se`` is the Wald standard error from the
    observed information, for information only (delta method for the
    half-life).

    **Identification** is read from the shape of each profile, not from the
    curvature at :math:`\hat\theta` alone. With the profile deviance
    :math:`D_j(\psi) = 2(\ell(\hat\theta) - \ell_p(\psi))` and the interval's
    end :math:`e_\pm` on each side (the end of the search range where
    :math:`D_j` never reaches :math:`\chi^2_{1,1-\alpha}`), a side is **flat** when

    .. math::

        D_j\big(\tfrac12(\hat\theta_j + e_\pm)\big) < \tau = 0.02

    (the log-likelihood drops by less than 0.01 halfway to the end; a
    quadratic profile drops :math:`\chi^2_{1,1-\alpha}/8 \approx 0.48` there,
    48 times more) or, on a side the data do not bound, when :math:`D_j < \tau`
    at every point the search tried out to the end of the range. A parameter
    is ``identified`` when neither side of its profile is flat. The profiles
    re-optimise every other parameter, flat or not, and follow a ridge by
    starting each point from the ridge's tangent, so a ridge such as the
    half-life against the age penalty when every age is equal (where
    :math:`a - \delta z` and :math:`f (\beta, \gamma)` are all the data see) is
    flat along each parameter on it. A parameter the likelihood does not
    contain (the age penalty and half-life when every age is 0) is flat
    throughout.

    The summary says which, for each parameter: ``bound`` is the interval in
    words (``"0.5547 to 0.6477"``; ``"≥ 166.4 days"`` or ``"≤ 10.26"`` when the
    data bound one side only; ``"none"`` when neither), ``note`` says why a
    coefficient is flat (``"flat: ages all equal (10 days), so the half-life
    and the age penalty trade off; the log-likelihood is within 0.01 of its
    maximum from 40.2 days up; trades off with intercept, …"``) or that an
    identified one is one-sided (empty otherwise). For an unidentified
    parameter the interval is kept where it is one-sided (``ci_lower`` the
    bound and ``ci_upper`` ``inf``: a half-life with no age effect in the data
    is "≥ X days"), and is NaN otherwise (flat throughout, or flat between two
    ends: its value within them is not determined); ``se`` is ``inf`` and the
    ``covariance_`` row NaN. A UserWarning names the unidentified parameters.
    An identified parameter may still have a one-sided interval (e.g. an atom
    bump large enough that every atom's derive clips at 1): ``bound`` and
    ``note`` say so.

    A profile that climbs more than 0.05 above :math:`\ell(\hat\theta)` has
    found a better maximum: the fit restarts from there (simplex and BFGS, at
    most 3 times) before it profiles again.

    **Convergence** (``converged_``): the simplex reports success, the BFGS
    polish stopped on its gradient tolerance or on precision loss (not on an
    iteration limit or a non-finite value), and the gradient :math:`g` of
    :math:`\ell` over the identified parameters at :math:`\hat\theta` is small
    in the information metric, :math:`\sqrt{g^\top I^{-1} g} \le 0.01`
    (``gradient_norm_``; :math:`I = \sum_i \nabla v_i \nabla v_i^\top / (p_i(1-p_i))`
    over touches where no clip binds) — or, since the clips put kinks in
    :math:`\ell` where the gradient need not vanish at a maximum, Fisher
    scoring from :math:`\hat\theta` gains at most ``1e-6`` — and no profile
    found a likelihood higher than :math:`\ell(\hat\theta)` by more than 0.05
    after the restarts (which would make :math:`\hat\theta` a local maximum only). Otherwise
    ``converged_`` is False and a UserWarning is issued.

    Parameters
    ----------
    params : starting point and fixed values (``baseline`` unless ``fit_baseline``).
    fit_baseline : also fit the baseline.
    alpha : 1 − interval level.
    eps : probabilities are clipped to ``[eps, 1 − eps]`` in the likelihood.

    Attributes
    ----------
    coef_ (dict), summary_ (DataFrame indexed by parameter: coef, se (Wald),
    ci_lower, ci_upper (profile likelihood), identified, bound, note, hand_set),
    confidence_interval_, params_ (:class:`CalibrationParams` with the fitted
    values), log_likelihood_, n_ (judged recalls), converged_, gradient_norm_,
    identified_ (all parameters identified), covariance_ (Wald, fitting scale;
    NaN rows and columns for parameters not identified), information_ (the
    observed information, fitting scale).

    Examples
    --------
    >>> from thatchlab.synth.recall import RecallWorld
    >>> f = DeriveWeightsFitter().fit(RecallWorld(n_memories=200, n_recalls=3000, seed=2).log)
    >>> list(f.summary_.columns)
    ['coef', 'se', 'ci_lower', 'ci_upper', 'identified', 'bound', 'note', 'hand_set']
    >>> list(f.confidence_interval_.index) == list(COEFS), f.converged_, f.identified_
    (True, True, True)
    >>> s = f.summary_
    >>> bool(((s["ci_lower"] < s["coef"]) & (s["coef"] < s["ci_upper"])).all())
    True
    """

    _estimand = ("derive coefficients and half-life (Bernoulli likelihood of consumption, "
                 "profile-likelihood intervals)")
    _n_noun = "judged recalls"

    def __init__(self, params: CalibrationParams | None = None, fit_baseline: bool = False,
                 alpha: float = 0.05, eps: float = 1e-6):
        self.params = params
        self.fit_baseline = fit_baseline
        self.alpha = alpha
        self.eps = eps
        self._check_params()

    def _validate_params(self):
        if self.params is not None and not isinstance(self.params, CalibrationParams):
            raise InputError(f"params: expected CalibrationParams or None, got {type(self.params).__name__}")
        if not isinstance(self.fit_baseline, (bool, np.bool_)):
            raise InputError(f"fit_baseline: expected true or false, got {self.fit_baseline!r}")
        for name, hi in (("alpha", 1.0), ("eps", 0.5)):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value < hi:
                raise InputError(f"{name}: expected 0 < {name} < {hi:g}, got {value!r}")
        return {"fit_baseline": bool(self.fit_baseline)}

    def _repr_values(self):
        return [("log_likelihood_", self.log_likelihood_), ("converged_", self.converged_)]

    def _summary_header(self):
        return [("converged", self.converged_), ("gradient norm", self.gradient_norm_),
                ("identified", self.identified_)]

    @property
    def _names(self):
        return COEFS + (("baseline",) if self.fit_baseline else ())

    def _unpack(self, theta, base: CalibrationParams) -> dict:
        kw = base.derive_kwargs()
        for name, v in zip(self._names, theta, strict=True):
            kw[name] = math.exp(min(v, 700.0)) if name == "half_life_days" else v  # e^700: no decay; no OverflowError
        return kw

    def _nll(self, theta, x, base):
        p = np.asarray(derive(x["age_days"], x["is_atom"], x["corroboration"], **self._unpack(theta, base)))
        p = np.clip(p, self.eps, 1 - self.eps)
        y = x["consumed"]
        return -float(np.sum(y * np.log(p) + (1 - y) * np.log1p(-p)))

    def fit(self, recalls: pd.DataFrame):
        """Fit on the judged touches of a recall log (or a :func:`recall_features` frame)."""
        base = self.params if self.params is not None else CalibrationParams()
        feats = recalls if {"age_days", "consumed"} <= set(recalls.columns) else recall_features(recalls)
        feats = feats.loc[feats["consumed"].notna()]
        names = self._names
        if len(feats) < len(names) + 1:
            raise InputError(f"DeriveWeightsFitter.fit: {len(feats)} judged recalls; expected more than "
                             f"{len(names)}")
        x = {"age_days": feats["age_days"].to_numpy(np.float64), "is_atom": feats["is_atom"].to_numpy(bool),
             "corroboration": feats["corroboration"].to_numpy(np.float64),
             "consumed": feats["consumed"].astype(np.float64).to_numpy()}
        start = np.array([math.log(getattr(base, n)) if n == "half_life_days" else getattr(base, n)
                          for n in names])
        simplex = optimize.minimize(self._nll, start, args=(x, base), method="Nelder-Mead",
                                    options=_SIMPLEX_OPTIONS)
        res = optimize.minimize(self._nll, simplex.x, args=(x, base), method="BFGS", options=_BFGS_OPTIONS)
        theta = res.x
        lik = _Likelihood(x, names, base.derive_kwargs(), self.eps)
        crit = float(stats.chi2.ppf(1 - self.alpha, 1))
        k = len(names)
        for restart in range(_RESTARTS + 1):
            hess = _hessian(lambda t: self._nll(t, x, base), theta)
            # every parameter is profiled with all the others free, those the likelihood does not
            # contain (information at the noise floor) too: their profiles are flat throughout
            absent = ~_present(hess, theta, -res.fun)
            ll_hat = lik.loglik(theta)
            free = np.arange(len(names))
            wald = np.full((k, k), np.nan)
            if len(free):
                wald[np.ix_(free, free)] = np.linalg.pinv(hess[np.ix_(free, free)])
            wald_se = np.sqrt(np.where(np.diag(wald) > 0, np.diag(wald), np.nan))
            gain, better = 0.0, None
            prof = []
            for j, name in enumerate(names):
                lo_s, hi_s = _SEARCH.get(name, (theta[j] - _SEARCH_HALF_WIDTH, theta[j] + _SEARCH_HALF_WIDTH))
                if name != "baseline":  # a half-life fitted past the search range: search beyond it
                    lo_s, hi_s = min(lo_s, theta[j] - 1.0), max(hi_s, theta[j] + 1.0)
                step = wald_se[j] if np.isfinite(wald_se[j]) and wald_se[j] > 0 else 0.1
                lo, hi, (up, top), sides = _profile_interval(lik, theta, j, free, ll_hat, crit, step,
                                                             (lo_s, hi_s), flat_dev=_FLAT_DEVIANCE)
                if up > gain:
                    gain, better = up, top
                prof.append((lo, hi, sides))
                if gain > _PROFILE_GAIN and restart < _RESTARTS:
                    break  # not the maximum: restart from the better point before profiling the rest
            # a profile that climbed above the estimate found a better maximum: polish from there
            if gain <= _PROFILE_GAIN or restart == _RESTARTS:
                break
            simplex2 = optimize.minimize(self._nll, better, args=(x, base), method="Nelder-Mead",
                                         options=_SIMPLEX_OPTIONS)
            again = optimize.minimize(self._nll, simplex2.x, args=(x, base), method="BFGS",
                                      options=_BFGS_OPTIONS)
            if not -again.fun > -res.fun + _PROFILE_GAIN:
                break
            res, theta = again, again.x  # converged_ judges this polish (the simplex was a way out)
        ident = np.array([not (pr[2][0]["flat"] or pr[2][1]["flat"]) for pr in prof])
        cov = np.full((k, k), np.nan)
        sub = np.ix_(ident, ident)
        if ident.any():
            cov[sub] = np.linalg.pinv(hess[sub])
        var = np.diag(cov)
        se = np.where(ident, np.sqrt(np.where(var > 0, var, np.nan)), np.inf)

        grad = -lik.nll_and_grad(theta)[1]
        info = lik.information(theta)[sub]
        g = grad[ident]
        gnorm = float(np.sqrt(max(float(g @ np.linalg.pinv(info) @ g), 0.0))) if ident.any() else 0.0

        rows = []
        for i, name in enumerate(names):
            if name == "half_life_days":
                coef = math.exp(min(theta[i], 700.0))
                se_i = coef * se[i]  # delta method
            else:
                coef, se_i = float(theta[i]), float(se[i])
            lo, hi, bound, note = _describe(name, i, names, theta, prof[i], bool(ident[i]), lik.age,
                                            bool(absent[i]))
            rows.append((name, coef, float(se_i), lo, hi, bool(ident[i]), bound, note, getattr(base, name)))
        summary = pd.DataFrame(rows, columns=["param", "coef", "se", "ci_lower", "ci_upper", "identified",
                                              "bound", "note", "hand_set"]).set_index("param")
        stopped_ok = bool(simplex.success) and (bool(res.success) or res.status == 2) and np.isfinite(res.fun)
        # a clip's kink can keep the gradient from vanishing at a maximum: then no ascent step helps
        at_kink = gnorm > _GRADIENT_TOL and _maximise(lik, theta, np.flatnonzero(ident), tol=1e-9)[0] \
            - ll_hat <= _KINK_GAIN
        flat = gnorm <= _GRADIENT_TOL or at_kink
        converged = stopped_ok and flat and gain <= _PROFILE_GAIN
        if not converged:
            why = ("the optimiser stopped early: " + str(res.message if simplex.success else simplex.message)
                   if not stopped_ok else f"gradient norm {gnorm:.3g} in standard errors" if not flat
                   else f"a profile found a log-likelihood {gain:.3g} higher than the estimate's, which is "
                        "a local maximum")
            warnings.warn(f"DeriveWeightsFitter: the fit did not converge ({why}); the estimates and "
                          "intervals are not trustworthy", UserWarning, stacklevel=2)
        if not ident.all():
            warnings.warn("DeriveWeightsFitter: the data do not inform "
                          f"{', '.join(n for n, ok in zip(names, ident, strict=True) if not ok)}: the profile "
                          "likelihood is flat along them (identified=False; see summary_['note'])",
                          UserWarning, stacklevel=2)
        self.coef_ = summary["coef"].to_dict()
        self.params_ = base.replace(**self.coef_)
        self.log_likelihood_ = -float(res.fun)
        self.n_ = int(len(feats))
        self.converged_ = bool(converged)
        self.gradient_norm_ = gnorm
        self.identified_ = bool(ident.all())
        self.covariance_ = cov
        self.information_ = hess
        self.summary_ = summary  # last: a fitter with summary_ is fitted
        return self

    def predict_proba(self, recalls: pd.DataFrame, params: CalibrationParams | None = None) -> np.ndarray:
        """Consumption probability of each judged touch under ``params`` (default: the fitted ones)."""
        p = params if params is not None else self.params_
        f = recalls if {"age_days", "consumed"} <= set(recalls.columns) else recall_features(recalls)
        return np.asarray(derive(f["age_days"].to_numpy(np.float64), f["is_atom"].to_numpy(bool),
                                 f["corroboration"].to_numpy(np.float64), **p.derive_kwargs()), dtype=np.float64)

    def compare(self, recalls: pd.DataFrame, holdout: float = 0.2,
                methods=("isotonic", "sigmoid", "temperature")) -> pd.DataFrame:
        """Held-out-time comparison: fit on the first ``1 − holdout`` of the judged
        touches (by ``ts``), score the last ``holdout``.

        Rows: ``fitted_derive`` (this fitter refitted on the training part) and
        each recalibration of the hand-set derive; columns ``brier_before,
        brier_after, ece_before, ece_after, log_loss_before, log_loss_after``
        ("before" = the hand-set derive on the test part), ``n_train, n_test``.
        The fitter itself is not changed.
        """
        if not 0 < holdout < 1:
            raise InputError(f"holdout: expected a fraction in (0, 1), got {holdout!r}")
        feats = recall_features(recalls).sort_values("ts", kind="stable").reset_index(drop=True)
        cut = int(round(len(feats) * (1 - holdout)))
        train, test = feats.iloc[:cut], feats.iloc[cut:]
        hand = self.params if self.params is not None else CalibrationParams()
        y_tr, y_te = train["consumed"].to_numpy(), test["consumed"].to_numpy()
        p_tr, p_te = self.predict_proba(train, hand), self.predict_proba(test, hand)
        refit = DeriveWeightsFitter(**self.get_params(deep=False)).fit(train)
        after = {"fitted_derive": refit.predict_proba(test)}
        for m in methods:
            after[m] = recalibrate(m, p_tr, y_tr, p_te)
        b0, e0, l0 = brier(y_te, p_te), ece(y_te, p_te), log_loss(y_te, p_te)
        rows = [(m, b0, brier(y_te, q), e0, ece(y_te, q), l0, log_loss(y_te, q), len(train), len(test))
                for m, q in after.items()]
        return pd.DataFrame(rows, columns=["method", "brier_before", "brier_after", "ece_before", "ece_after",
                                           "log_loss_before", "log_loss_after", "n_train", "n_test"])


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
    than ``j`` (:func:`_maximise`), from the better of two starts: the last
    profile point with ``j`` moved to ``ψ``, and that point moved along the
    ridge's tangent as well (the others shifted by ``−I_oo⁺ I_oj Δψ``, which
    keeps every ``v_i`` fixed to first order, so a profile can follow a flat
    ridge through the clips' kinks). The search works with the signed root
    ``r(ψ) = √(2(ℓ̂ − ℓ_p(ψ)))``, which is close to linear in ``ψ``: each
    side first tries the Wald end ``theta[j] ± √crit·step``, then doubles the
    distance (clamped to ``lims``) until ``r`` passes ``√crit``, and
    :func:`_bracketed_root` finds the crossing (warm-started from the last
    point inside).

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
    others = np.array([i for i in free if i != j], dtype=int)
    # v is linear in every parameter but the half-life at a fixed half-life: a tangent over those
    # alone follows a linear ridge (intercept against age penalty at equal ages) exactly, however far
    linear = np.array([i for i in others if lik.names[i] != "half_life_days"], dtype=int)
    z = math.sqrt(crit)
    flat_dev = 0.0 if flat_dev is None else flat_dev
    gain, top = 0.0, theta.copy()

    def root(psi, warm):
        nonlocal gain
        best, info = None, None
        for along in (None, others, linear):
            t = warm.copy()
            if along is not None:
                if not len(along):
                    continue
                if info is None:
                    p, jac, clip_free = lik.p_and_jacobian(warm)
                    info = (jac * (clip_free / (p * (1 - p)))[:, None]).T @ jac
                t[along] -= np.linalg.pinv(info[np.ix_(along, along)]) @ info[along, j] * (psi - warm[j])
            t[j] = psi
            llp, t = _maximise(lik, t, others)
            if math.isfinite(llp) and (best is None or llp > best[0]):
                best = (llp, t)
        llp, t = best if best is not None else (-math.inf, warm)
        if llp - ll_hat > gain:
            gain, top[:] = llp - ll_hat, t
        return math.sqrt(max(2 * (ll_hat - llp), 0.0)), t

    out, sides = [], []
    for sign, limit in ((-1.0, lims[0]), (1.0, lims[1])):
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
            out.append(None)
            sides.append({"flat": peak < flat_dev, "reach": reach, "at": at})
            continue
        end = _bracketed_root(lambda psi, w=warm: root(psi, w), inside, r_in - z, outside, r_out - z, z,
                              xtol=1e-3 * step)
        out.append(end)
        mid = 0.5 * (float(theta[j]) + end)
        if abs(mid - reach) > 1e-12 * max(1.0, abs(mid)) and (mid - reach) * sign > 0:
            r, t = root(mid, warm if (inside - mid) * sign > 0 else theta.copy())
            if r * r < flat_dev:
                reach, at = mid, t
        flat = (reach - mid) * sign >= 0 and reach != float(theta[j])
        sides.append({"flat": flat, "reach": reach, "at": at})
    return out[0], out[1], (gain, top), sides


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


def interval_coverage(planted: CalibrationParams | None = None, replications: int = 200, *,
                      n_memories: int = 400, n_recalls: int = 6000, seed: int = 0,
                      fitter: DeriveWeightsFitter | None = None) -> pd.DataFrame:
    """Fit ``replications`` synthetic recall worlds with a planted truth; did each interval cover it?

    World ``r`` is :class:`~thatchlab.synth.recall.RecallWorld` (``n_memories``,
    ``n_recalls``, ``planted``) with the ``r``-th seed drawn from
    ``SeedSequence(seed)``; each is fitted by a clone of ``fitter`` (default
    :class:`DeriveWeightsFitter`), with its warnings recorded in the
    ``converged`` and ``identified`` columns rather than raised.

    Returns one row per replication and parameter: ``replication, seed,
    param, planted, coef, ci_lower, ci_upper, covered, identified,
    converged``. The empirical coverage is
    ``frame.groupby("param")["covered"].mean()``.

    >>> cov = interval_coverage(replications=2, n_memories=60, n_recalls=600, seed=1)
    >>> cov.shape, sorted(cov["param"].unique()) == sorted(COEFS)
    ((10, 10), True)
    """
    from thatchlab.synth.recall import PLANTED, RecallWorld  # synth sits above tune

    truth = planted if planted is not None else PLANTED
    template = fitter if fitter is not None else DeriveWeightsFitter()
    seeds = np.random.SeedSequence(seed).generate_state(int(replications), dtype=np.uint32)
    frames = []
    for r, s in enumerate(seeds.tolist()):
        world = RecallWorld(n_memories=n_memories, n_recalls=n_recalls, planted=truth, seed=s)
        f = DeriveWeightsFitter(**template.get_params(deep=False))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            f.fit(world.log)
        s_ = f.summary_
        frames.append(pd.DataFrame({
            "replication": r, "seed": s, "param": s_.index.to_numpy(),
            "planted": [getattr(truth, n) for n in s_.index],
            "coef": s_["coef"].to_numpy(), "ci_lower": s_["ci_lower"].to_numpy(),
            "ci_upper": s_["ci_upper"].to_numpy(), "identified": s_["identified"].to_numpy(),
            "converged": f.converged_}))
    out = pd.concat(frames, ignore_index=True)
    out.insert(7, "covered", (out["ci_lower"] <= out["planted"]) & (out["planted"] <= out["ci_upper"]))
    return out
