"""Reading sweep results: metric directions, identification, the best configuration, Pareto fronts.

:func:`~thatchlab.sweep.sweep` produces a frame of configurations and their
scores; the functions here pick from it. Directions come from the engine
registry (AUC is maximised, log-loss minimised); a parameter the metric
cannot see is reported, not tuned; ties are reported, never broken silently.
"""

from __future__ import annotations

import dataclasses
import math
import operator
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from thatchlab.core.docstrings import fill_doc
from thatchlab.core.errors import InputError, warn
from thatchlab.core.params.production import SYSTEMS, setting
from thatchlab.sweep.registry import EngineSpec, engines, get_engine, metric_list

__all__ = ["best", "BestConfig", "pareto", "identification", "metric_direction", "never_shipped", "sweep_release",
           "CONTEXT_FIELDS",
           "pick_candidate", "n_competitors"]

# the tail of sweep_release's sections, shared with SweepDescription.release (filled in by fill_doc)
_RELEASE_TAIL = """
what : str, default="decide"
    Who asks, named in the error.

Returns
-------
str or None
    The release.

Raises
------
InputError
    When the rows replay several releases.
"""

OPERATORS = {"<=": operator.le, "<": operator.lt, ">=": operator.ge, ">": operator.gt}


def spec_of(results: pd.DataFrame, spec=None) -> EngineSpec:
    """The :class:`~thatchlab.sweep.EngineSpec` that scored ``results``.

    Parameters
    ----------
    results : DataFrame
        A sweep result (``attrs["engine"]``, else its ``engine`` column).
    spec : str or EngineSpec, optional
        Given, it wins.

    Returns
    -------
    EngineSpec
        The spec.

    Raises
    ------
    InputError
        When the frame names no engine.
    """
    if spec is not None:
        return get_engine(spec)
    name = results.attrs.get("engine")
    if name is None and "engine" in results.columns and len(results):
        name = results["engine"].iloc[0]
    if name is None:
        raise InputError("results: no 'engine' column; expected a frame returned by thatchlab.sweep.sweep")
    return get_engine(name)


def metric_direction(metric: str, engine=None) -> str:
    """``"min"`` or ``"max"``: the better direction of ``metric``, from the engine registry.

    A metric the given engine does not register is looked up among every
    registered engine (it must have one direction there).

    Parameters
    ----------
    metric : str
        A metric name.
    engine : str or EngineSpec, optional
        The engine to look in first.

    Returns
    -------
    str
        ``"min"`` or ``"max"``.

    Raises
    ------
    InputError
        When no engine registers ``metric``, or engines disagree on its direction.

    See Also
    --------
    thatchlab.sweep.SweepDescription.direction : The same, read off a sweep's description.

    Examples
    --------
    >>> metric_direction("auc"), metric_direction("log_loss", "prediction")
    ('max', 'min')
    """
    if engine is not None:
        spec = get_engine(engine)
        if metric in spec.metrics:
            return spec.metrics[metric]
    found = {get_engine(e).metrics[metric] for e in engines() if metric in get_engine(e).metrics}
    if len(found) != 1:
        raise InputError(f"metric: {metric!r} has no registered direction"
                         f"{' (' + '/'.join(sorted(found)) + ' in different engines)' if found else ''}; "
                         "pass minimize=True or False")
    return found.pop()


def minimizes(results, metric, minimize, spec=None) -> bool:
    """True to minimise ``metric``: the explicit override, else the registered direction.

    Parameters
    ----------
    results : DataFrame
        A sweep result (its engine is looked in first, when it names one).
    metric : str
        A metric name.
    minimize : bool or None
        The override (None: the registered direction).
    spec : str or EngineSpec, optional
        The engine, instead of the frame's.

    Returns
    -------
    bool
        Whether lower is better.
    """
    if minimize is not None:
        return bool(minimize)
    engine = None
    try:
        engine = spec_of(results, spec)
    except InputError:
        pass
    return metric_direction(metric, engine) == "min"


def _same(a, b, rtol=1e-12, atol=1e-15) -> np.ndarray:
    """Element-wise equal within a relative 1e-12 (NaN equals NaN)."""
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    return np.isclose(a, b, rtol=rtol, atol=atol) | (np.isnan(a) & np.isnan(b))


def _moves_within(v, group) -> bool:
    """Whether ``v`` takes more than one value (relative 1e-12; NaN is a value) in some group."""
    g = pd.Series(v).groupby(group)
    lo, hi = g.min().to_numpy(), g.max().to_numpy()
    nans = pd.Series(np.isnan(v)).groupby(group).sum().to_numpy()
    size = g.size().to_numpy()
    mixed = (nans > 0) & (nans < size)
    with np.errstate(invalid="ignore"):
        spread = np.where(nans == size, 0.0, hi - lo) > 1e-12 * np.maximum(np.abs(hi), np.abs(lo)) + 1e-15
    return bool((mixed | spread).any())


#: Fields that are a sweep's context, not a value to tune: the production release replayed. They are
#: never swept parameters for :func:`identification` (never "unidentified"), never candidates.
CONTEXT_FIELDS = ("release",)


def _param_names(spec, results) -> list:
    return [f.name for f in dataclasses.fields(spec.params_class)
            if f.name in results.columns and f.name not in CONTEXT_FIELDS]


@fill_doc(release_tail=_RELEASE_TAIL)
def sweep_release(results, spec=None, what: str = "decide") -> str | None:
    """The one production release a sweep's rows replayed (None when they carry no ``release``).

    Rows of several releases describe several productions: :func:`~thatchlab.decide.decide`
    compares configurations under one, so it refuses them and says how to split them.

    Parameters
    ----------
    results : DataFrame
        A sweep result.
    spec : EngineSpec, optional
        Its engine (names the production system in the error).
    {release_tail}
    """
    if "release" not in results.columns or not len(results):
        return None
    names = list(dict.fromkeys(str(v) for v in results["release"].tolist()))
    if len(names) > 1:
        system = SYSTEMS.get(spec.name, "") if spec is not None else ""
        raise InputError(
            f"{what}: the sweep's rows replay {len(names)} production releases "
            f"({', '.join(f'{system} {n}'.strip() for n in names)}); a decision compares configurations under "
            "the one release production runs, and the release itself never ships. Decide on each "
            f"release's rows, e.g. results[results['release'] == {names[-1]!r}]")
    return names[0]


def _swept(results, names) -> list:
    return [n for n in names if results[n].nunique(dropna=False) > 1]


def identification(results: pd.DataFrame, metric: str, spec=None) -> dict:
    """Which swept parameters ``metric`` can see, by declaration and on the sweep's own rows.

    A swept parameter (more than one value in ``results``) is
    *unidentified* by ``metric`` when

    - the engine declares it cannot move the metric
      (:attr:`EngineSpec.sensitivity`: threshold under a forecast metric), or
    - the sensitivity probe finds that it does not on this data: among the
      groups of rows equal in every other swept parameter, some group holds
      two or more of its values, and in every such group the metric's
      ``val_`` and ``test_`` scores are all equal (relative 1e-12, NaN equals
      NaN). Example: K under a regime metric when every confidence is
      rounded to the same regime. A parameter never varied with the others
      held fixed (random search) cannot be probed and counts as identified
      when declared; or
    - it changes which rows the metric counts (:attr:`EngineSpec.denominators`:
      ``min_prompt_chars`` under ``interruption_rate``): the scores of two
      values are rates over different rows, whatever they show.

    Parameters
    ----------
    results : DataFrame
        A sweep result with ``val_<metric>``/``test_<metric>`` columns.
    metric : str
        The metric.
    spec : str or EngineSpec, optional
        The engine (default: the frame's).

    Returns
    -------
    dict
        ``swept``, ``declared`` (swept parameters the engine says can move
        the metric), ``unidentified`` (list of bare field names),
        ``denominator`` (the unidentified ones that change the metric's rows) and
        ``probed`` (those whose probe saw at least one comparison).

    See Also
    --------
    best : Picks with the unidentified parameters at production's default.

    Examples
    --------
    >>> res = pd.DataFrame({"k": [1.0, 1.0, 5.0, 5.0], "threshold": [0.5, 0.6, 0.5, 0.6],
    ...                     "val_log_loss": [0.7, 0.7, 0.6, 0.6], "test_log_loss": [0.8, 0.8, 0.5, 0.5],
    ...                     "engine": "prediction"})
    >>> identification(res, "log_loss")["unidentified"]
    ['threshold']
    """
    spec = spec_of(results, spec)
    names = _param_names(spec, results)
    swept = _swept(results, names)
    denominator = [p for p in swept if p in getattr(spec, "denominators", {}).get(metric, ())]
    declared = [p for p in swept if p in spec.moves(metric) and p not in denominator]
    cols = [c for c in (f"val_{metric}", f"test_{metric}") if c in results.columns]
    codes = np.column_stack([pd.factorize(results[q], use_na_sentinel=False)[0] for q in swept]) if swept else None
    values = [pd.to_numeric(results[c], errors="coerce").to_numpy(np.float64) for c in cols]
    unidentified = [p for p in swept if p not in declared]
    probed: list = []
    for p in declared:
        j = swept.index(p)
        others = np.delete(codes, j, axis=1)
        group = (np.unique(others, axis=0, return_inverse=True)[1].reshape(-1) if others.shape[1]
                 else np.zeros(len(results), dtype=np.int64))
        pairs = np.unique(np.column_stack([group, codes[:, j]]), axis=0)
        n_values = np.bincount(pairs[:, 0], minlength=group.max() + 1 if group.size else 0)
        inside = n_values[group] >= 2
        if not inside.any() or not cols:
            continue
        probed.append(p)
        if not any(_moves_within(v[inside], group[inside]) for v in values):
            unidentified.append(p)
    order = {p: i for i, p in enumerate(names)}
    return {"swept": swept, "declared": declared, "unidentified": sorted(unidentified, key=order.get),
            "denominator": denominator, "probed": probed}


def _unscored(results: pd.DataFrame, metric: str) -> bool:
    """Whether ``results`` hold no validation score of ``metric``: no ``val_`` column, or a
    column the engine left NaN because the metrics asked (``attrs["metrics"]``) do not fill it."""
    if f"val_{metric}" not in results.columns:
        return True
    asked = results.attrs.get("metrics")
    if asked is None:
        return False
    try:
        spec = spec_of(results)
    except InputError:
        return False
    return metric in spec.metrics and metric not in spec.filled(asked)


def _constraint_mask(results: pd.DataFrame, constraint) -> np.ndarray:
    """Rows whose validation values satisfy every ``{metric: (op, value)}`` (NaN fails)."""
    keep = np.ones(len(results), dtype=bool)
    for m, rule in (constraint or {}).items():
        if not (isinstance(rule, (tuple, list)) and len(rule) == 2 and rule[0] in OPERATORS):
            raise InputError(f"constraint: expected {{metric: (op, value)}} with op in "
                             f"{list(OPERATORS)}, got {m!r}: {rule!r}")
        col = f"val_{m}"
        if _unscored(results, m):
            raise InputError(f"constraint: no scores in column {col!r}; score {m!r} in the sweep "
                             "(metric=[...])")
        v = pd.to_numeric(results[col], errors="coerce").to_numpy(np.float64)
        with np.errstate(invalid="ignore"):
            keep &= np.isfinite(v) & OPERATORS[rule[0]](v, float(rule[1]))
    return keep


@dataclass
class BestConfig:
    """The configuration :func:`best` picked: its params object and its scores.

    Unpacks as ``params, row = best(...)``.

    Parameters
    ----------
    params : params
        The configuration (unidentified parameters at production's default).
    metric : str
        The metric it was picked on.
    val : float
        The validation score it was picked on.
    test : float
        The held-out score to report beside it.
    row : Series
        The whole result row.
    ties : DataFrame, optional
        Every configuration whose validation score equals the best one (relative 1e-12).
    unidentified : list of str
        The swept parameters the metric cannot see (set to production's default in ``params``).
    minimize : bool, default=True
        Whether the metric was minimised.

    See Also
    --------
    best : What builds it.

    Examples
    --------
    >>> res = pd.DataFrame({"k": [2.0, 5.0], "val_brier": [0.3, 0.2], "test_brier": [0.1, 0.25],
    ...                     "engine": "prediction"})
    >>> params, row = best(res, "brier")
    >>> params.k, float(row["test_brier"])
    (5.0, 0.25)
    """

    params: object
    metric: str
    val: float
    test: float
    row: pd.Series
    ties: pd.DataFrame = None
    unidentified: list = field(default_factory=list)
    minimize: bool = True

    def __iter__(self):
        return iter((self.params, self.row))


def best(results: pd.DataFrame, metric: str, minimize: bool | None = None, *,
         constraint: dict | None = None) -> BestConfig:
    """The configuration with the best *validation* score, its held-out test score beside it.

    Ties are never broken silently: ``ties`` holds every configuration
    within relative 1e-12 of the best validation score and a
    ``UserWarning`` says how many tie. Among the tied rows ``row`` is the
    one with the most parameters at production's default (the engine's
    params class defaults), the first proposed of those: equally good
    evidence never moves production. Parameters the metric cannot see
    (:func:`identification`) take production's default in ``params``
    whatever the row holds. Rows whose validation score is NaN are never
    picked.

    Parameters
    ----------
    results : DataFrame
        A frame returned by :func:`sweep`.
    metric : str
        The metric to pick on (its ``val_`` column).
    minimize : bool, optional
        Override of the direction; by default the metric's registered direction
        (:func:`metric_direction`: ``log_loss`` is minimised, ``auc`` maximised).
    constraint : dict, optional
        ``{metric: (op, value)}``, ``op`` in ``<=``, ``<``, ``>=``, ``>``: only rows whose
        validation values satisfy every rule compete.

    Returns
    -------
    BestConfig
        The configuration, its scores and the ties.

    Raises
    ------
    InputError
        When the metric has no scores, every score is NaN, no row meets the constraint or a
        constraint is malformed.

    See Also
    --------
    pareto : The configurations no other beats on several metrics at once.

    Examples
    --------
    >>> import pandas as pd
    >>> res = pd.DataFrame({"k": [2.0, 5.0], "p0": [0.5, 0.5], "val_brier": [0.3, 0.2],
    ...                     "test_brier": [0.1, 0.25], "engine": "prediction"})
    >>> b = best(res, "brier")
    >>> b.params.k, b.val, b.test
    (5.0, 0.2, 0.25)
    """
    col = f"val_{metric}"
    if _unscored(results, metric):
        raise InputError(f"results: no scores in column {col!r}; expected a sweep result scored on "
                         f"{metric!r} (metric=[...] for several)")
    spec = spec_of(results)
    lower = minimizes(results, metric, minimize, spec)
    top, tied = _best_rows(results, col, lower, constraint)
    unidentified = identification(results, metric, spec)["unidentified"]
    row = results.iloc[int(_least_change(results, spec, tied))]
    ties = results.iloc[tied]
    if len(tied) > 1:
        _warn_ties(ties, spec, col, top, unidentified)
    params = _params_of(row, spec, unidentified)
    test = row.get(f"test_{metric}", float("nan"))
    return BestConfig(params, metric, float(row[col]), float(test), row, ties, unidentified, lower)


def _best_rows(results, col, lower, constraint) -> tuple:
    """``(top, tied)``: the best finite validation score among the rows meeting the constraint,
    and the rows within relative 1e-12 of it."""
    vals = pd.to_numeric(results[col], errors="coerce").to_numpy(np.float64)
    if not np.isfinite(vals).any():
        raise InputError(f"results: every {col} is NaN; nothing to pick")
    ok = _constraint_mask(results, constraint) & np.isfinite(vals)
    if not ok.any():
        raise InputError(f"constraint: no configuration with a finite {col} satisfies {constraint!r}")
    key = np.where(ok, vals if lower else -vals, np.inf)
    top = vals[int(np.argmin(key))]
    return top, np.flatnonzero(ok & _same(vals, top))


def _least_change(results, spec, tied) -> int:
    """Among equally good rows, the one changing production the least: most fields at their
    default, then the first proposed."""
    if len(tied) == 1:
        return tied[0]
    defaults = spec.params_class()
    names = [*_param_names(spec, results), *(c for c in CONTEXT_FIELDS if c in results.columns)]
    same = np.zeros(len(tied), dtype=np.int64)
    for p in names:
        same += (results[p].iloc[tied].astype(str) == str(getattr(defaults, p))).to_numpy()
    return tied[int(np.argmax(same))]


def _warn_ties(ties, spec, col, top, unidentified) -> None:
    """Say how many configurations tie, in which parameters they differ, and what stays default."""
    differ = _swept(ties, [*_param_names(spec, ties), *(c for c in CONTEXT_FIELDS if c in ties.columns)])
    warn(f"best: {len(ties)} configurations tie on {col} = {top:.6g}"
                  f"{' (they differ in ' + ', '.join(differ) + ')' if differ else ''}; "
                  f"see BestConfig.ties"
                  f"{'; ' + ', '.join(unidentified) + ' kept at the default' if unidentified else ''}",
                  UserWarning)


def _params_of(row, spec, unidentified):
    """The params object of a result row, the unidentified fields at production's default."""
    defaults = spec.params_class()
    values = {}
    for name_ in (f.name for f in dataclasses.fields(spec.params_class)):
        if name_ in unidentified:
            values[name_] = getattr(defaults, name_)
        elif name_ in row.index:
            v = row[name_]
            if isinstance(v, np.generic):
                v = v.item()
            if isinstance(v, float) and math.isnan(v):
                v = None
            values[name_] = v
    return spec.params_class(**values)


def pareto(results: pd.DataFrame, metrics, *, constraint: dict | None = None) -> pd.DataFrame:
    """The configurations no other configuration beats on every metric at once (on validation).

    Row ``i`` is dominated when some row ``j`` is at least as good on every
    metric (each in its registered direction) and strictly better on one.
    Rows with a NaN validation score, or failing ``constraint``, are left out.

    Parameters
    ----------
    results : DataFrame
        A sweep result scored on every metric.
    metrics : sequence of str
        The metrics.
    constraint : dict, optional
        ``{metric: (op, value)}`` on validation values, as in :func:`best`.

    Returns
    -------
    DataFrame
        The non-dominated rows in their original order.

    Raises
    ------
    InputError
        When a metric has no scores or a constraint is malformed.

    See Also
    --------
    best : The one best configuration on one metric.

    Examples
    --------
    >>> res = pd.DataFrame({"val_interruption_rate": [0.2, 0.3, 0.1, 0.3],
    ...                     "val_coverage": [0.5, 0.6, 0.4, 0.5], "engine": "prediction"})
    >>> pareto(res, ["interruption_rate", "coverage"]).index.tolist()
    [0, 1, 2]
    """
    metrics = metric_list(metrics)
    cols = [f"val_{m}" for m in metrics]
    for m, c in zip(metrics, cols):
        if _unscored(results, m):
            raise InputError(f"results: no scores in column {c!r}; score every metric in the sweep "
                             "(metric=[...])")
    sign = np.array([1.0 if minimizes(results, m, None) else -1.0 for m in metrics])
    V = results[cols].apply(pd.to_numeric, errors="coerce").to_numpy(np.float64) * sign
    ok = np.isfinite(V).all(axis=1) & _constraint_mask(results, constraint)
    idx = np.flatnonzero(ok)
    X = V[idx]
    keep = np.ones(len(idx), dtype=bool)
    for lo in range(0, len(idx), 512):  # bounded memory: 512 rows against all at a time
        blk = X[lo:lo + 512]
        le = (X[None, :, :] <= blk[:, None, :]).all(axis=2)
        lt = (X[None, :, :] < blk[:, None, :]).any(axis=2)
        keep[lo:lo + 512] = ~(le & lt).any(axis=1)
    return results.iloc[idx[keep]]


# -- the candidate decide tests (in the order decide calls these) ----------------------------------
def never_shipped(spec) -> list:
    """The fields production has no setting for: studied in sweeps, never shipped.

    Parameters
    ----------
    spec : EngineSpec
        The engine.

    Returns
    -------
    list of str
        Field names.
    """
    return [f.name for f in dataclasses.fields(spec.params_class) if setting(spec.name, f.name).kind == "none"]


def pick_candidate(results, metric, spec, default, fixed, candidate, constraint):
    """The configuration to test: ``candidate`` if given, else the best on validation.

    Either way the ``fixed`` fields take the default's values.

    Parameters
    ----------
    results : DataFrame
        A sweep result.
    metric : str
        The metric picked on.
    spec : EngineSpec
        The engine.
    default : params
        Production's configuration.
    fixed : list of str
        Fields that never ship (kept at the default).
    candidate : params or None
        A configuration chosen elsewhere.
    constraint : dict or None
        ``{metric: (op, value)}`` on validation values.

    Returns
    -------
    params
        The candidate.

    Raises
    ------
    InputError
        When ``candidate`` is of another params class, or :func:`best` finds nothing to pick.
    """
    pool = results
    for f in fixed:
        if f in results.columns:
            pool = pool[pool[f] == getattr(default, f)]
    pool.attrs.update(results.attrs)
    try:
        if candidate is not None:
            if not isinstance(candidate, spec.params_class):
                raise InputError(f"candidate: expected {spec.params_class.__name__}, got {type(candidate).__name__}")
            return candidate.replace(**{f: getattr(default, f) for f in fixed})
        return best(pool if len(pool) else results, metric, constraint=constraint).params
    except InputError as err:
        held = [f for f in fixed if f in results.columns and results[f].nunique() > 1]
        raise InputError(f"{err}" + (f" among the configurations keeping {', '.join(held)} at production's "
                                      "default (production has no setting for them, so they never ship)"
                                      if held else "")) from None


def n_competitors(results, metric, constraint) -> int:
    """Configurations that competed on validation: a finite score, the constraint satisfied.

    Parameters
    ----------
    results : DataFrame
        A sweep result.
    metric : str
        The metric.
    constraint : dict or None
        ``{metric: (op, value)}`` on validation values.

    Returns
    -------
    int
        The count.
    """
    vals = pd.to_numeric(results[f"val_{metric}"], errors="coerce").to_numpy(np.float64)
    return int(np.count_nonzero(np.isfinite(vals) & _constraint_mask(results, constraint)))
