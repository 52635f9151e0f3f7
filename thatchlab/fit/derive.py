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

from thatchlab.calibration import derive, recall_features
from thatchlab.core.errors import InputError, warn
from thatchlab.core.params.calibration import CalibrationParams
from thatchlab.fit._base import BaseFitter
from thatchlab.fit._derive_profile import (
    COEFS,
    RANGES,
    _calibrated_cut,
    _describe,
    _fmt,
    _hessian,
    _Likelihood,
    _local_maxima,
    _maximise,
    _natural,
    _present,
    _profile_interval,
)
from thatchlab.fit._recalibrate import recalibrate
from thatchlab.metrics.calibration import brier, ece, log_loss
from thatchlab.synth.recall import PLANTED, RecallWorld

__all__ = ["DeriveWeightsFitter", "interval_coverage", "recall_features", "recalibrate"]



# -- the likelihood, vectorised over judged touches, with its gradient ------------------------

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

    **Several modes.** Derive's likelihood can have more than one maximum (a
    positive age penalty with one half-life and a negative one with a shorter
    half-life bend the age curve alike), and a profile walked out from one
    maximum stops at its basin's edge. When ages vary, the fit also climbs
    (L-BFGS, then Fisher scoring) from a grid of 12 starts, the age penalty
    in (−0.2, −0.05, 0.05, 0.2) and the half-life in (5, 20, 80) days with the
    other coefficients at the first estimate's, and keeps the best maximum.
    ``modes_`` lists every distinct maximum reached (log-likelihood, deviance
    from the best, the coefficients, ``reported``; two maxima are distinct
    only when the straight path between them dips more than 0.5 in
    log-likelihood below the lower one). A second maximum whose
    deviance passes the joint test, :math:`2(\ell(\hat\theta) - \ell_m) \le
    \chi^2_{k, 1-\alpha}` (``k`` fitted parameters), and that lies outside the
    estimate's intervals is profiled from its own peak; each interval is then
    the union of the modes' (``ci_lower``/``ci_upper`` their hull, ``bound``
    the pieces, ``note`` names the modes), ``mode_profiles_`` holds every
    reported mode's estimates and intervals, ``multimodal_`` is True and a
    UserWarning says so.

    **Calibrated cuts.** Where derive's base value sits near the baseline, the
    half-life and the age penalty are weakly identified and the profile
    deviance runs heavier than :math:`\chi^2_1`. With ``calibrate`` = B > 0
    the fit redraws every consumption B times from the fitted model, and for
    each draw and parameter records the profile deviance at the parameter's
    known value; parameter ``j``'s cut is
    :math:`\chi^2_{1,1-\alpha} \cdot \max(1, \overline{D^*_j})`, a
    parametric-bootstrap Bartlett factor (``deviance_cut_``).

    **Equal ages.** When every touch has the same age :math:`t > 0`, the data
    see the half-life only through the freshness at :math:`t` and the
    intercept and age penalty only through :math:`a - \delta z`; the
    half-life is then never identified and never gets an upper bound (its
    interval is "≥ X days" or none; only derive's clips could bound it), and
    the intercept and age penalty have no interval.

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
    params : CalibrationParams, default=None
        Starting point and fixed values (``baseline`` unless
        ``fit_baseline``); ``None``: the hand-set defaults.
    fit_baseline : bool, default=False
        Also fit the baseline.
    alpha : float, default=0.05
        1 − interval level.
    eps : float, default=1e-6
        Probabilities are clipped to ``[eps, 1 − eps]`` in the likelihood.
    calibrate : int, default=40
        Parametric-bootstrap draws for the Bartlett-calibrated cuts
        (0: the plain :math:`\chi^2_{1,1-\alpha}` cut).
    random_state : int, default=0
        Seed of those draws.

    Attributes
    ----------
    coef_ : dict
        Parameter → estimate (natural scale).
    summary_ : DataFrame
        Indexed by parameter, columns ``SUMMARY_COLUMNS``: coef, se (Wald),
        ci_lower, ci_upper (profile likelihood), identified, bound, note,
        hand_set.
    confidence_interval_ : DataFrame
        The two interval columns of ``summary_``.
    params_ : CalibrationParams
        ``params`` with the fitted values.
    log_likelihood_ : float
        :math:`\ell(\hat\theta)`.
    n_ : int
        Judged recalls.
    converged_ : bool
        The convergence verdict (above).
    gradient_norm_ : float
        :math:`\sqrt{g^\top I^{-1} g}` at the estimate.
    identified_ : bool
        All parameters identified.
    covariance_ : ndarray
        Wald, fitting scale; NaN rows and columns for parameters not identified.
    information_ : ndarray
        The observed information, fitting scale.
    modes_ : DataFrame
        One row per distinct maximum, 0 the estimate.
    mode_profiles_ : DataFrame
        Indexed by mode and parameter: coef, ci_lower, ci_upper.
    multimodal_ : bool
        A second mode was reported.
    deviance_cut_ : dict
        Each parameter's cut.
    chi2_cut_ : float
        :math:`\chi^2_{1,1-\alpha}`.

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
    #: The columns of ``summary_`` (indexed by parameter), in order.
    SUMMARY_COLUMNS = ("coef", "se", "ci_lower", "ci_upper", "identified", "bound", "note", "hand_set")

    @classmethod
    def _check_data(cls) -> pd.DataFrame:
        """A small synthetic recall log (:class:`~thatchlab.synth.recall.RecallWorld`, seed 1)."""
        return RecallWorld(n_memories=60, n_recalls=600, seed=1).log

    def __init__(self, params: CalibrationParams | None = None, fit_baseline: bool = False,
                 alpha: float = 0.05, eps: float = 1e-6, calibrate: int = 40, random_state: int = 0):
        self.params = params
        self.fit_baseline = fit_baseline
        self.alpha = alpha
        self.eps = eps
        self.calibrate = calibrate
        self.random_state = random_state
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
        for name in ("calibrate", "random_state"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 0:
                raise InputError(f"{name}: expected a whole number ≥ 0, got {value!r}")
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

    def fit(self, recalls: pd.DataFrame) -> DeriveWeightsFitter:
        """Fit on the judged touches of a recall log (or a :func:`recall_features` frame).

        The steps: the point estimate (simplex, then a BFGS polish), the
        multi-start grid when ages vary, the calibrated cuts, the profile
        intervals (restarting from a better maximum a profile finds), the
        other modes, the Wald covariance, the summary and the convergence
        verdict (see the class docstring for each).

        Parameters
        ----------
        recalls : DataFrame
            A recall log (what :func:`recall_features` reads) or its
            features (columns ``age_days``, ``is_atom``, ``corroboration``,
            ``consumed``); touches with no ``consumed`` judgement are left out.

        Returns
        -------
        DeriveWeightsFitter
            ``self``, fitted.

        Raises
        ------
        InputError
            When there are no more judged touches than fitted parameters.

        See Also
        --------
        compare : Refit on earlier touches and score the later ones.
        predict_proba : Consumption probabilities under the fitted parameters.
        """
        from scipy import stats  # heavy: SciPy takes about 0.5 s to import

        base = self.params if self.params is not None else CalibrationParams()
        names = self._names
        feats, x = self._judged(recalls)
        start = np.array([math.log(getattr(base, n)) if n == "half_life_days" else getattr(base, n)
                          for n in names])
        simplex, res = self._climb(start, x, base)
        lik = _Likelihood(x, names, base.derive_kwargs(), self.eps)
        chi2_cut = float(stats.chi2.ppf(1 - self.alpha, 1))
        ages_vary = bool(np.ptp(lik.age) > 0)
        # multi-start: one run finds the basin it starts in; a second maximum of the age curve's shape
        # (the age penalty's sign flipped, a different half-life) is found from the grid's starts
        ends = _local_maxima(lik, res.x) if ages_vary else []
        res = self._best_start(lik, ends, res, x, base)
        # at one common age the rule for equal ages decides; the cuts matter where ages vary
        cuts, _ = _calibrated_cut(lik, res.x, chi2_cut, self.calibrate if ages_vary else 0, self.random_state)
        res, hess, absent, wald_se, prof, gain = self._profile_with_restarts(lik, res, x, base, cuts)
        theta = res.x
        ident = np.array([not (pr[2][0]["flat"] or pr[2][1]["flat"]) for pr in prof])
        ll_hat = lik.loglik(theta)
        modes, extra = self._modes(lik, theta, ll_hat, ends, prof, cuts, wald_se)
        equal_age = self._equal_age_rule(lik.age, names)
        for j in equal_age:
            ident[j] = False
        cov, se = _wald_covariance(hess, ident)
        gnorm = _gradient_norm(lik, theta, ident)
        summary = self._summary_frame(theta, se, prof, ident, absent, lik.age, equal_age, extra, base)
        converged = self._converged(simplex, res, lik, ident, ll_hat, gnorm, gain)
        self._warn_modes_and_flats(extra, ident)
        self.coef_ = summary["coef"].to_dict()
        self.params_ = base.replace(**self.coef_)
        self.log_likelihood_ = -float(res.fun)
        self.n_ = int(len(feats))
        self.converged_ = bool(converged)
        self.gradient_norm_ = gnorm
        self.identified_ = bool(ident.all())
        self.covariance_ = cov
        self.information_ = hess
        self.deviance_cut_ = dict(zip(names, cuts.tolist(), strict=True))
        self.chi2_cut_ = float(chi2_cut)
        self.modes_ = modes
        self.mode_profiles_ = self._mode_profiles(names, theta, prof, extra)
        self.multimodal_ = bool(extra)
        self.summary_ = summary  # last: a fitter with summary_ is fitted
        return self

    # -- the steps of fit ----------------------------------------------------------------------
    def _judged(self, recalls: pd.DataFrame):
        """The judged touches as a features frame and as the arrays the likelihood reads."""
        feats = recalls if {"age_days", "consumed"} <= set(recalls.columns) else recall_features(recalls)
        feats = feats.loc[feats["consumed"].notna()]
        names = self._names
        if len(feats) < len(names) + 1:
            raise InputError(f"DeriveWeightsFitter.fit: {len(feats)} judged recalls; expected more than "
                             f"{len(names)}")
        x = {"age_days": feats["age_days"].to_numpy(np.float64), "is_atom": feats["is_atom"].to_numpy(bool),
             "corroboration": feats["corroboration"].to_numpy(np.float64),
             "consumed": feats["consumed"].astype(np.float64).to_numpy()}
        return feats, x

    def _climb(self, start, x, base):
        """The point estimate from ``start``: a simplex, then a BFGS polish (both results)."""
        from scipy import optimize  # heavy: SciPy takes about 0.5 s to import

        simplex = optimize.minimize(self._nll, start, args=(x, base), method="Nelder-Mead",
                                    options=_SIMPLEX_OPTIONS)
        res = optimize.minimize(self._nll, simplex.x, args=(x, base), method="BFGS", options=_BFGS_OPTIONS)
        return simplex, res

    def _best_start(self, lik, ends, res, x, base):
        """``res``, or the BFGS polish of the multi-start's best maximum when that one is higher."""
        from scipy import optimize  # heavy: SciPy takes about 0.5 s to import

        if ends and ends[0][0] > lik.loglik(res.x) + _KINK_GAIN:
            better_fit = optimize.minimize(self._nll, ends[0][1], args=(x, base), method="BFGS",
                                           options=_BFGS_OPTIONS)
            if -better_fit.fun > -res.fun:
                return better_fit
        return res

    def _profile_with_restarts(self, lik, res, x, base, cuts):
        """Profile every parameter; a profile that climbs above the estimate restarts the fit there.

        Returns the final optimiser result, the Hessian of the negative
        log-likelihood there, which parameters the likelihood does not
        contain, the Wald standard errors, the profiles and the largest gain
        a profile found.
        """
        theta, k = res.x, len(self._names)
        free = np.arange(k)
        for restart in range(_RESTARTS + 1):
            hess = _hessian(lambda t: self._nll(t, x, base), theta)
            # every parameter is profiled with all the others free, those the likelihood does not
            # contain (information at the noise floor) too: their profiles are flat throughout
            absent = ~_present(hess, theta, -res.fun)
            wald = np.full((k, k), np.nan)
            if len(free):
                wald[np.ix_(free, free)] = np.linalg.pinv(hess[np.ix_(free, free)])
            wald_se = np.sqrt(np.where(np.diag(wald) > 0, np.diag(wald), np.nan))
            prof, gain, better = self._profiles(lik, theta, cuts, wald_se, stop_early=restart < _RESTARTS)
            # a profile that climbed above the estimate found a better maximum: polish from there
            if gain <= _PROFILE_GAIN or restart == _RESTARTS:
                break
            _, again = self._climb(better, x, base)
            if not -again.fun > -res.fun + _PROFILE_GAIN:
                # the polish found nothing better: finish every profile at the estimate kept
                prof, gain, _ = self._profiles(lik, theta, cuts, wald_se, stop_early=False)
                break
            res, theta = again, again.x  # converged_ judges this polish (the simplex was a way out)
        return res, hess, absent, wald_se, prof, gain

    def _profiles(self, lik, theta, cuts, wald_se, stop_early):
        """Each parameter's profile interval and sides from ``theta``: ``(profiles, gain, better)``.

        With ``stop_early``, profiling stops at the first parameter whose
        profile found a log-likelihood more than ``_PROFILE_GAIN`` above the
        estimate's (``better`` is where).
        """
        ll_hat = lik.loglik(theta)
        free = np.arange(len(self._names))
        gain, better = 0.0, None
        prof = []
        for j, name in enumerate(self._names):
            step = wald_se[j] if np.isfinite(wald_se[j]) and wald_se[j] > 0 else 0.1
            lo, hi, (up, top), sides = _profile_interval(lik, theta, j, free, ll_hat, cuts[j], step,
                                                         self._limits(name, theta[j]),
                                                         flat_dev=_FLAT_DEVIANCE)
            if up > gain:
                gain, better = up, top
            prof.append((lo, hi, sides))
            if gain > _PROFILE_GAIN and stop_early:
                break  # not the maximum: restart from the better point before profiling the rest
        return prof, gain, better

    def _summary_frame(self, theta, se, prof, ident, absent, age, equal_age, extra, base) -> pd.DataFrame:
        """``summary_``: per parameter the estimate on its natural scale, its Wald ``se``, the
        interval read from the profile (or the equal-age rule, or the union over modes) in numbers
        and in words, and the hand-set value."""
        names = self._names
        rows = []
        for i, name in enumerate(names):
            if name == "half_life_days":
                coef = math.exp(min(theta[i], 700.0))
                se_i = coef * se[i]  # delta method
            else:
                coef, se_i = float(theta[i]), float(se[i])
            lo, hi, bound, note = _describe(name, i, names, theta, prof[i], bool(ident[i]), age,
                                            bool(absent[i]))
            if i in equal_age:
                lo, hi, bound, note = equal_age[i](lo, hi, note)
            elif extra and ident[i]:
                lo, hi, bound, note = _union(name, i, lo, hi, bound, note, extra)
            rows.append((name, coef, float(se_i), lo, hi, bool(ident[i]), bound, note, getattr(base, name)))
        return pd.DataFrame(rows, columns=["param", *self.SUMMARY_COLUMNS]).set_index("param")

    @staticmethod
    def _converged(simplex, res, lik, ident, ll_hat, gnorm, gain) -> bool:
        """The convergence verdict (class docstring); a UserWarning says why when it fails."""
        theta = res.x
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
            warn(f"DeriveWeightsFitter: the fit did not converge ({why}); the estimates and "
                          "intervals are not trustworthy", UserWarning)
        return converged

    def _warn_modes_and_flats(self, extra, ident) -> None:
        """UserWarnings for a likelihood with several modes kept and for parameters not identified."""
        if extra:
            warn(f"DeriveWeightsFitter: the likelihood has {len(extra) + 1} modes the data do not rule out; the "
                 "intervals are the union of every mode's profile interval (see modes_ and mode_profiles_)",
                 UserWarning)
        if not ident.all():
            warn("DeriveWeightsFitter: the data do not inform "
                          f"{', '.join(n for n, ok in zip(self._names, ident, strict=True) if not ok)}: the profile "
                          "likelihood is flat along them (identified=False; see summary_['note'])",
                          UserWarning)

    @staticmethod
    def _limits(name, value):
        """The profile search range of a parameter on the fitting scale, around ``value``."""
        lo_s, hi_s = _SEARCH.get(name, (value - _SEARCH_HALF_WIDTH, value + _SEARCH_HALF_WIDTH))
        if name != "baseline":  # a half-life fitted past the search range: search beyond it
            lo_s, hi_s = min(lo_s, value - 1.0), max(hi_s, value + 1.0)
        return lo_s, hi_s

    def _modes(self, lik, theta, ll_hat, ends, prof, cuts, wald_se):
        """Every local maximum the multi-start reached (``modes_``) and, for those the data do not
        rule out that lie outside the estimate's own confidence region, their profile intervals.

        A second maximum holds the truth only if its peak passes the joint likelihood-ratio test,
        ``2(ℓ̂ − ℓ_m) ≤ χ²_{k,1−α}`` (``k`` fitted parameters); a profile walked out from the
        estimate stops at its own basin's edge and never sees it. Such a mode's profile intervals
        are measured from its own peak (within the basin it is a regular maximum) with the same
        cuts, and join the estimate's as a union.
        """
        from scipy import stats  # heavy: SciPy takes about 0.5 s to import

        names = self._names
        joint = float(stats.chi2.ppf(1 - self.alpha, len(names)))
        rows = [(0, ll_hat, 0.0, True, *[_natural(n, v) for n, v in zip(names, theta, strict=True)])]
        extra = []
        for ll_m, t_m in ends:
            if np.all(np.abs(t_m - theta) <= 1e-3 * np.maximum(np.abs(theta), 1.0)) or ll_m > ll_hat + 1e-9:
                continue
            dev = 2.0 * (ll_hat - ll_m)
            inside = all((lo is None or t_m[j] >= lo) and (hi is None or t_m[j] <= hi)
                         for j, (lo, hi, _) in enumerate(prof))
            reported = dev <= joint and not inside
            rows.append((len(rows), ll_m, dev, reported, *[_natural(n, v) for n, v in zip(names, t_m, strict=True)]))
            if not reported:
                continue
            ivals = []
            for j, name in enumerate(names):
                step = wald_se[j] if np.isfinite(wald_se[j]) and wald_se[j] > 0 else 0.1
                lo, hi, _, _ = _profile_interval(lik, t_m, j, np.arange(len(names)), ll_m, cuts[j], step,
                                                 self._limits(name, t_m[j]))
                ivals.append((lo, hi))
            extra.append({"mode": rows[-1][0], "log_likelihood": ll_m, "deviance": dev, "theta": t_m,
                          "intervals": ivals})
        modes = pd.DataFrame(rows, columns=["mode", "log_likelihood", "deviance", "reported", *names])
        return modes.set_index("mode"), extra

    def _mode_profiles(self, names, theta, prof, extra) -> pd.DataFrame:
        """Each reported mode's estimate and profile interval per parameter (natural scale)."""
        rows = []
        for mode, t, ivals in [(0, theta, [(p[0], p[1]) for p in prof])] + \
                [(e["mode"], e["theta"], e["intervals"]) for e in extra]:
            for j, name in enumerate(names):
                lo_r, hi_r = RANGES[name]
                lo, hi = ivals[j]
                rows.append((mode, name, _natural(name, t[j]), _natural(name, lo) if lo is not None else lo_r,
                             _natural(name, hi) if hi is not None else hi_r))
        return pd.DataFrame(rows, columns=["mode", "param", "coef", "ci_lower", "ci_upper"]).set_index(
            ["mode", "param"])

    def _equal_age_rule(self, age, names) -> dict:
        """At one common age > 0 the half-life acts only through the freshness at that age and the
        intercept and age penalty only through ``a − δz``: parameter index → a rewrite of its
        ``(ci_lower, ci_upper, bound, note)`` that never claims an upper bound on the half-life or
        any interval for the other two (only derive's clips could tell them apart, which is no
        ground for a two-sided interval)."""
        if len(age) == 0 or np.ptp(age) > 0 or age[0] <= 0:
            return {}
        cause = f"flat: ages all equal ({age[0]:g} days), so the half-life and the age penalty trade off"

        def half_life(lo, hi, note):
            keep = lo if np.isfinite(lo) and lo > 0 else math.nan
            if not note.startswith("flat: "):
                note = (f"{cause}; at one age the half-life acts only through the freshness at that age, "
                        "which only where derive's clips bind could pin down, so no upper bound is claimed")
            if math.isnan(keep):
                return math.nan, math.nan, "none", note
            return keep, math.inf, f"≥ {_fmt('half_life_days', keep)}", note

        def linear(lo, hi, note):
            if not note.startswith("flat: "):
                note = f"{cause}; the intercept and the age penalty enter only through a − δz"
            return math.nan, math.nan, "none", note

        rule = {names.index("half_life_days"): half_life}
        for name in ("intercept", "age_penalty"):
            rule[names.index(name)] = linear
        return rule

    def predict_proba(self, recalls: pd.DataFrame, params: CalibrationParams | None = None) -> np.ndarray:
        """Consumption probability of each judged touch under ``params`` (default: the fitted ones).

        Parameters
        ----------
        recalls : DataFrame
            A recall log or its :func:`recall_features` frame.
        params : CalibrationParams, default=None
            The parameters (``None``: ``params_``, the fitted ones).

        Returns
        -------
        ndarray
            Derive's value of each touch.
        """
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

        Parameters
        ----------
        recalls : DataFrame
            A recall log (with ``ts``).
        holdout : float, default=0.2
            The later share of the judged touches scored.
        methods : sequence of str, default=("isotonic", "sigmoid", "temperature")
            The recalibrations (:func:`recalibrate`) compared.

        Returns
        -------
        DataFrame
            One row per method (first ``fitted_derive``), with a ``method`` column.

        Raises
        ------
        InputError
            When ``holdout`` is not in (0, 1).

        See Also
        --------
        recalibrate : One recalibration.
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


def _wald_covariance(hess, ident):
    """The Wald covariance over the identified parameters (NaN rows and columns for the others) and
    the standard errors (``inf`` for a parameter not identified)."""
    k = hess.shape[0]
    cov = np.full((k, k), np.nan)
    sub = np.ix_(ident, ident)
    if ident.any():
        cov[sub] = np.linalg.pinv(hess[sub])
    var = np.diag(cov)
    se = np.where(ident, np.sqrt(np.where(var > 0, var, np.nan)), np.inf)
    return cov, se


def _gradient_norm(lik, theta, ident) -> float:
    """``sqrt(gᵀ I⁻¹ g)`` over the identified parameters at ``theta`` (0 when none is)."""
    grad = -lik.nll_and_grad(theta)[1]
    info = lik.information(theta)[np.ix_(ident, ident)]
    g = grad[ident]
    return float(np.sqrt(max(float(g @ np.linalg.pinv(info) @ g), 0.0))) if ident.any() else 0.0


def _union(name, i, lo, hi, bound, note, extra):
    """Join the estimate's interval of parameter ``i`` with the other reported modes' (their hull in
    ``ci_lower``/``ci_upper``; the pieces in words when they do not overlap)."""
    lo_r, hi_r = RANGES[name]
    pieces = [(lo, hi)]
    for e in extra:
        a, b = e["intervals"][i]
        pieces.append((_natural(name, a) if a is not None else lo_r, _natural(name, b) if b is not None else hi_r))
    pieces.sort()
    merged = [list(pieces[0])]
    for a, b in pieces[1:]:
        if a <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], b)
        else:
            merged.append([a, b])
    words = " or ".join(f"{_fmt(name, a)} to {_fmt(name, b)}" for a, b in merged)
    others = "; ".join(f"mode {e['mode']} ({_fmt(name, _natural(name, e['theta'][i]))}, deviance "
                       f"{e['deviance']:.3g})" for e in extra)
    text = (f"{len(extra) + 1} modes the data do not rule out: the estimate and {others}; the interval "
            "is the union of their profile intervals")
    note = f"{note}; {text}" if note else text
    return min(p[0] for p in pieces), max(p[1] for p in pieces), words if len(merged) > 1 else \
        f"{_fmt(name, merged[0][0])} to {_fmt(name, merged[0][1])}", note


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

    Parameters
    ----------
    planted : CalibrationParams, default=None
        The truth planted (``None``: the worlds' ``PLANTED``).
    replications : int, default=200
        How many worlds.
    n_memories : int, default=400
        Memories per world.
    n_recalls : int, default=6000
        Recalls per world.
    seed : int, default=0
        Seed of the worlds' seeds.
    fitter : DeriveWeightsFitter, default=None
        Its parameters fit each world (``None``: the defaults).

    Returns
    -------
    DataFrame
        One row per replication and parameter (above).

    Examples
    --------
    >>> cov = interval_coverage(replications=2, n_memories=60, n_recalls=600, seed=1)
    >>> cov.shape, sorted(cov["param"].unique()) == sorted(COEFS)
    ((10, 10), True)
    """
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
