"""The main job's decision policy: what ``thatchlab run`` decides, at which level, on which metric.

The main job makes :data:`RULES` decisions, each at ``α / len(RULES)``
(Bonferroni, so the family-wise error over the job is at most ``α``):

- the prediction prior (the swept parameters a forecast metric sees: K, P0)
  on ``log_loss``, with the empirical-Bayes prior fitted on the log before
  the test stretch as the candidate (the validation winner when the fit is at
  a boundary);
- the nudge parameters (the other swept parameters: the threshold) on
  ``nudge_net_rate`` (which items surface), with K, P0 and the soft weight at
  production's values, constrained to wrong silent follows no worse than
  production's on validation; the two are joined by
  :func:`~thatchlab.decide.combine_decisions`, which adds the threshold's change
  only if the joint configuration improves both metrics on test;
- the belief half-lives on ``brier``, with HalfLifeFitter's fit on the log
  before the test stretch as the candidate;
- the calibration derive coefficients on ``derived_log_loss``, with
  DeriveWeightsFitter's fit on the log before the test stretch as the candidate.

Every comparison is against ``base``: what production runs
(:func:`~thatchlab.core.params.production.production_params`) or the
configured values the caller takes as production's.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, field
from typing import NamedTuple

import pandas as pd

from thatchlab.core.errors import InputError, ThatchlabError
from thatchlab.core.params import BeliefParams
from thatchlab.decide._core import combine_decisions, decide
from thatchlab.fit import DeriveWeightsFitter, HalfLifeFitter, PriorFitter
from thatchlab.replay import run
from thatchlab.sweep import get_engine, holdout_segments, sweep

__all__ = ["MainJobPolicy", "PredictionOutcome", "Rule", "RULES", "ALPHA", "HOLDOUT", "DEFAULT_SWEEP_SPACE",
           "FORECAST_METRIC", "THRESHOLD_METRIC", "GUARD_METRIC", "REGIME_METRICS", "SWEEP_METRICS",
           "before_test", "rows_at", "row_at", "split_space", "with_values", "fit_prior", "half_lives",
           "derive_coefficients"]

#: The small sweep of the prediction engine. Every list gains the value production runs
#: (and the fitted values), so each change can be compared with it alone.
DEFAULT_SWEEP_SPACE = {"k": [2.0, 5.0, 10.0], "p0": [0.2, 0.35, 0.5], "threshold": [0.5, 0.55, 0.6, 0.65]}
#: The metric of the prior decision, of the nudge decision, and the nudge decision's constraint.
FORECAST_METRIC = "log_loss"
THRESHOLD_METRIC = "nudge_net_rate"
GUARD_METRIC = "wrong_silent_follow_rate"
REGIME_METRICS = ("interruption_rate", GUARD_METRIC)
SWEEP_METRICS = (FORECAST_METRIC, THRESHOLD_METRIC, *REGIME_METRICS)
#: Family-wise error over the main job's decisions, and the time-based holdout fraction.
ALPHA = 0.05
HOLDOUT = 0.2


class Rule(NamedTuple):
    """One decision of the main job: its engine, the parameters, the metric, the candidate, the constraint.

    Parameters
    ----------
    name : str
        The decision's name (``"prior"``, ``"nudge"``...).
    engine : str
        The engine decided on.
    parameters : str
        Which parameters, in words.
    metric : str
        The metric decided on.
    candidate : str
        Where the candidate comes from, in words.
    constraint : str, default=""
        The constraint, in words (empty: none).
    """

    name: str
    engine: str
    parameters: str
    metric: str
    candidate: str
    constraint: str = ""


#: The decisions the main job makes, each at ``ALPHA / len(RULES)``.
RULES = (
    Rule("prior", "prediction", "the swept parameters the forecast metric sees (K, P0)", FORECAST_METRIC,
         "the empirical-Bayes prior fitted on the log before the test stretch (the validation winner "
         "when the fit is at a boundary)"),
    Rule("nudge", "prediction", "the other swept parameters (the threshold), K and P0 at production's values",
         THRESHOLD_METRIC, "the validation winner",
         f"{GUARD_METRIC} no worse than production's on validation"),
    Rule("half-lives", "belief", "the half-life of each class production has a prior for", "brier",
         "HalfLifeFitter on the log before the test stretch"),
    Rule("derive coefficients", "calibration", "the derive coefficients the data identify", "derived_log_loss",
         "DeriveWeightsFitter on the log before the test stretch"),
)


@dataclass
class PredictionOutcome:
    """The prediction engine's decisions and what they were made on (see :meth:`MainJobPolicy.decide_prediction`).

    Parameters
    ----------
    decision : Decision
        The joined decision (:func:`~thatchlab.decide.combine_decisions` of ``parts``).
    parts : list of Decision
        The prior decision (on ``log_loss``) and the nudge decision, those the space allowed.
    sweep : DataFrame
        The sweep's rows (every configuration of ``space``).
    space : dict
        The swept space with production's and the fitted values added.
    forecast_space, nudge_space : dict
        ``space`` split by what ``log_loss`` sees.
    prior_fit : PriorFitter, optional
        The PriorFitter fitted before the test stretch (None without a forecast parameter).
    candidate : dict
        The fitted ``{"k", "p0"}`` the prior decision tested (empty when the fit was unusable).
    guard : float, optional
        Production's validation ``wrong_silent_follow_rate``, the nudge decision's bar (None:
        undefined).

    Attributes
    ----------
    prior, nudge : Decision or None
        The decisions on :data:`FORECAST_METRIC` and :data:`THRESHOLD_METRIC` (None when not made).

    See Also
    --------
    MainJobPolicy.decide_prediction : What returns it.

    Examples
    --------
    >>> PredictionOutcome(None, [], None, {}, {}, {}).prior is None
    True
    """

    decision: object
    parts: list
    sweep: pd.DataFrame
    space: dict
    forecast_space: dict
    nudge_space: dict
    prior_fit: object = None
    candidate: dict = field(default_factory=dict)
    guard: float | None = None

    @property
    def prior(self):
        """The decision on :data:`FORECAST_METRIC` (None when not made)."""
        return next((d for d in self.parts if d.metric == FORECAST_METRIC), None)

    @property
    def nudge(self):
        """The decision on :data:`THRESHOLD_METRIC` (None when not made)."""
        return next((d for d in self.parts if d.metric == THRESHOLD_METRIC), None)


@dataclass(frozen=True)
class MainJobPolicy:
    """What the main job decides: :data:`RULES`, each at ``alpha / len(RULES)`` on a ``holdout`` split.

    Parameters
    ----------
    alpha : float, default=ALPHA
        Family-wise error over the main job's decisions (0.05).
    holdout : float, default=HOLDOUT
        The time-based holdout fraction (0.2).

    Attributes
    ----------
    rules : tuple of Rule
        The decisions made (:data:`RULES`).
    level : float
        The level of each decision: ``alpha / len(rules)`` (Bonferroni).

    Examples
    --------
    >>> MainJobPolicy().level
    0.0125
    >>> [r.metric for r in MainJobPolicy().rules]
    ['log_loss', 'nudge_net_rate', 'brier', 'derived_log_loss']
    """

    alpha: float = ALPHA
    holdout: float = HOLDOUT

    @property
    def rules(self) -> tuple:
        """The decisions made (:data:`RULES`)."""
        return RULES

    @property
    def level(self) -> float:
        """The level of each decision: ``alpha / len(rules)`` (Bonferroni)."""
        return self.alpha / len(self.rules)

    def table(self) -> pd.DataFrame:
        """The rules as a table, one row per decision, with its level.

        Returns
        -------
        DataFrame
            Columns the :class:`Rule` fields and ``level``.
        """
        rows = [{**r._asdict(), "level": self.level} for r in self.rules]
        return pd.DataFrame(rows, columns=[*Rule._fields, "level"])

    def decide_prediction(self, log: pd.DataFrame, base, *, space=None, embedder=None) -> PredictionOutcome:
        """Sweep the prediction engine on ``log`` and decide the prior and the nudge parameters against ``base``.

        Parameters
        ----------
        log : DataFrame
            Interaction log.
        base : ScoringParams
            What production runs (the comparison's default).
        space : dict, optional
            ``{parameter: [values]}`` (default :data:`DEFAULT_SWEEP_SPACE`).
        embedder : Embedder, optional
            The embedder of the replays.

        Returns
        -------
        PredictionOutcome
            The joined decision, its parts and what they were made on.
        """
        space = dict(space or DEFAULT_SWEEP_SPACE)
        forecast_space, _ = split_space(space)
        parts, guard = [], None
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)  # ties and unidentified parameters: in the evidence
            fit = fit_prior(before_test(log, self.holdout), base, embedder) if forecast_space else None
            fitted = {}
            if fit is not None and not fit.boundary_ and {"k", "p0"} <= set(forecast_space):
                fitted = {"k": round(float(fit.k_), 2), "p0": round(float(fit.p0_), 3)}
            space = with_values(space, base, fitted)
            forecast_space, nudge_space = split_space(space)
            res = sweep(log, space, list(SWEEP_METRICS), engine="prediction", holdout=self.holdout,
                        embedder=embedder, base=base)
            if forecast_space:
                cand = base.replace(**fitted) if fitted else None
                parts.append(decide(res, FORECAST_METRIC, default=base, alpha=self.level, candidate=cand))
            if nudge_space:
                sub = rows_at(res, forecast_space, base)  # the forecast parameters at production's values
                bar = float(row_at(res, space, base)[f"val_{GUARD_METRIC}"])
                # no silent follow with an outcome on validation: nothing to hold the guard to
                guard = bar if bar == bar else None
                constraint = {GUARD_METRIC: ("<=", guard)} if guard is not None else None
                parts.append(decide(sub, THRESHOLD_METRIC, default=base, alpha=self.level, constraint=constraint))
            decision = combine_decisions(parts, results=res)
        return PredictionOutcome(decision, parts, res, space, forecast_space, nudge_space, fit, fitted, guard)

    def decide_fit(self, log: pd.DataFrame, engine: str, base, metric: str, fit_values):
        """A fit made on the log before the test stretch, tested against ``base`` on it.

        The sweep scores every combination of ``base``'s and the fitted value of each
        parameter the fit changes (so the reduction family is complete).

        Parameters
        ----------
        log : DataFrame
            The engine's log.
        engine : str
            The engine.
        base : params
            What production runs.
        metric : str
            The metric decided on.
        fit_values : callable
            ``fit_values(log) -> {parameter: value}``: the candidate of :func:`~thatchlab.decide.decide`.

        Returns
        -------
        Decision or None
            None when the fit fails or changes nothing.
        """
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            try:
                fitted = fit_values(before_test(log, self.holdout))
            except ThatchlabError:
                return None
            fitted = {k: v for k, v in fitted.items() if v != getattr(base, k)}
            if not fitted:
                return None
            space = {k: [getattr(base, k), v] for k, v in fitted.items()}
            res = sweep(log, space, metric, engine=engine, holdout=self.holdout, base=base)
            return decide(res, metric, default=base, alpha=self.level, candidate=base.replace(**fitted))

    def decide_half_lives(self, log: pd.DataFrame, base):
        """The fitted belief half-lives (:func:`half_lives`) decided on ``brier`` against ``base``.

        Parameters
        ----------
        log : DataFrame
            Memory log.
        base : BeliefParams
            What production runs.

        Returns
        -------
        Decision or None
            As :meth:`decide_fit`.
        """
        return self.decide_fit(log, "belief", base, "brier", half_lives)

    def decide_derive_coefficients(self, log: pd.DataFrame, base):
        """The fitted derive coefficients (:func:`derive_coefficients`) decided on ``derived_log_loss``.

        Parameters
        ----------
        log : DataFrame
            Recall log.
        base : CalibrationParams
            What production runs.

        Returns
        -------
        Decision or None
            As :meth:`decide_fit`.
        """
        return self.decide_fit(log, "calibration", base, "derived_log_loss", derive_coefficients)


def split_space(space: dict) -> tuple[dict, dict]:
    """The parameters :data:`FORECAST_METRIC` can see, and the rest (decided on which items surface).

    Parameters
    ----------
    space : dict
        ``{parameter: [values]}``.

    Returns
    -------
    tuple of dict
        ``(forecast_space, nudge_space)``.
    """
    forecast = set(get_engine("prediction").sensitivity[FORECAST_METRIC])
    return ({k: v for k, v in space.items() if k in forecast},
            {k: v for k, v in space.items() if k not in forecast})


def with_values(space: dict, params, extra: dict) -> dict:
    """Each list of ``space`` with ``params``' value (what production runs) and ``extra``'s added.

    Parameters
    ----------
    space : dict
        ``{parameter: [values]}``.
    params : params
        Production's configuration.
    extra : dict
        ``{parameter: value}`` to add (fitted values).

    Returns
    -------
    dict
        The space, each list sorted without repeats.
    """
    out = {}
    for name, values in space.items():
        vals = list(values) + [getattr(params, name)] + ([extra[name]] if name in extra else [])
        out[name] = sorted(set(vals), key=lambda v: (str(type(v)), v))
    return out


def before_test(log: pd.DataFrame, holdout=HOLDOUT) -> pd.DataFrame:
    """The rows of the time-sorted log before the sweep's test stretch (training and validation).

    Parameters
    ----------
    log : DataFrame
        A log with a ``ts`` column.
    holdout : float, default=HOLDOUT
        The holdout fraction.

    Returns
    -------
    DataFrame
        The rows, sorted by time.
    """
    ordered = log.sort_values("ts", kind="stable").reset_index(drop=True)
    ts = pd.to_datetime(ordered["ts"], utc=True).dt.as_unit("ns").astype("int64").to_numpy()
    test = holdout_segments(ts, holdout)[-1]
    return ordered.iloc[:test.lo]


def rows_at(results: pd.DataFrame, names, params) -> pd.DataFrame:
    """The sweep rows whose parameters ``names`` equal ``params``' values (attrs kept).

    Parameters
    ----------
    results : DataFrame
        A sweep result.
    names : iterable of str
        Parameter columns.
    params : params
        The values to match.

    Returns
    -------
    DataFrame
        The matching rows with ``results``' attrs.

    See Also
    --------
    row_at : The one row of a whole space.
    """
    mask = pd.Series(True, index=results.index)
    for name in names:
        mask &= results[name] == getattr(params, name)
    out = results[mask]
    out.attrs.update(results.attrs)
    return out


def row_at(results: pd.DataFrame, space, params) -> pd.Series:
    """The sweep row whose swept parameters equal ``params``' values.

    Parameters
    ----------
    results : DataFrame
        A sweep result.
    space : dict
        The swept space (its keys are matched).
    params : params
        The values to match.

    Returns
    -------
    Series
        The first matching row.

    Raises
    ------
    InputError
        When no row matches.

    See Also
    --------
    rows_at : Every row matching some parameters.
    """
    rows = rows_at(results, space, params)
    if not len(rows):
        raise InputError(f"sweep: no configuration with {params} in {space}; include production's "
                         "default values in every list of the space")
    return rows.iloc[0]


def fit_prior(log: pd.DataFrame, params, embedder=None):
    """PriorFitter on a replay of ``log``'s prediction signals under ``params``.

    Parameters
    ----------
    log : DataFrame
        Interaction log.
    params : ScoringParams
        The replay's parameters.
    embedder : Embedder, optional
        The replay's embedder.

    Returns
    -------
    PriorFitter or None
        The fitted prior; None when the replay has no prediction signal.
    """
    res = run(log, engine="prediction", params=params, embedder=embedder)
    prov = res.tables["provenance"].rename(columns={"prediction_id": "item_id"})
    if not len(prov):
        return None
    return PriorFitter(soft_weight=params.soft_weight).fit(prov[["item_id", "signal"]])


def half_lives(log: pd.DataFrame) -> dict:
    """Half-lives (days) HalfLifeFitter finds for the belief classes production has a prior for.

    Parameters
    ----------
    log : DataFrame
        Memory log.

    Returns
    -------
    dict
        Class → half-life in days, rounded to 0.1 (None when not finite).

    See Also
    --------
    derive_coefficients : The calibration engine's fit.
    """
    fit = HalfLifeFitter().fit_from_log(log)
    fields = set(BeliefParams().to_dict())
    return {cls: None if not math.isfinite(value) else round(float(value), 1)
            for cls, value in fit.half_life_.items() if cls in fields}


def derive_coefficients(log: pd.DataFrame) -> dict:
    """The derive coefficients DeriveWeightsFitter finds, where the data identify them.

    Parameters
    ----------
    log : DataFrame
        Recall log.

    Returns
    -------
    dict
        Coefficient → value rounded to 0.001, the identified ones only.

    See Also
    --------
    half_lives : The belief engine's fit.
    """
    s = DeriveWeightsFitter().fit(log).summary_
    return {name: round(float(r["coef"]), 3) for name, r in s.iterrows() if bool(r["identified"])}
