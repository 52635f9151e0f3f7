"""The check suite every fitter passes (scikit-learn's ``check_estimator``, for thatchlab's fitters).

:func:`check_fitter` fits a fitter on small data and checks the conventions
of :class:`~thatchlab.fit.BaseFitter` one by one, each check a named row of
a report; a researcher's own fitter runs through the same checks.
"""

from __future__ import annotations

import copy
import inspect
import math
import pickle
from collections.abc import Callable

import numpy as np
import pandas as pd

from thatchlab.core.errors import InputError, ThatchlabError
from thatchlab.fit._base import BaseFitter, NotFittedError

__all__ = ["FitterCheckError", "check_fitter", "CHECKS"]


class FitterCheckError(ThatchlabError, AssertionError):
    """A fitter failed one or more checks of :func:`check_fitter`.

    Also an :class:`AssertionError`, as a failed test is. The message names
    the fitter and every failed check with what went wrong.

    Parameters
    ----------
    message : str
        What failed.
    report : DataFrame
        The full report (one row per check: ``check``, ``passed``,
        ``detail``).

    Attributes
    ----------
    report : DataFrame
        The report the message was written from.

    See Also
    --------
    check_fitter : The checks.

    Examples
    --------
    >>> from thatchlab.fit import HalfLifeFitter, check_fitter
    >>> class Forgetful(HalfLifeFitter):
    ...     def fit(self, *args, **kwargs):
    ...         super().fit(*args, **kwargs)   # fitted, but fit returns None
    >>> try:
    ...     check_fitter(Forgetful, checks=["fit_returns_self", "summary_columns"])
    ... except FitterCheckError as err:
    ...     print(err.report.loc[~err.report["passed"], "check"].tolist())
    ['fit_returns_self']
    """

    def __init__(self, message: str, report: pd.DataFrame):
        super().__init__(message)
        self.report = report


class _Failed(Exception):
    """A check's verdict: what it found wrong."""


class _Run:
    """One fitter under check: its fresh copies, the fit arguments and what the first fit learned."""

    def __init__(self, fitter, args: tuple, kwargs: dict):
        self.fitter = fitter
        # fits see a copy (the caller's data stay as they are, whatever fit does); ``original`` is
        # the data as given, to compare with after the fits
        self.args, self.kwargs = copy.deepcopy((args, kwargs))
        self.original = copy.deepcopy((args, kwargs))
        self.name = type(fitter).__name__
        self.fitted = None  # the fitter of the first fit, once fit was called
        self.returned = None  # what that fit returned
        self.learned: dict = {}  # learned attributes of that fit, deep-copied

    def fresh(self):
        """An unfitted copy of the fitter, built from its constructor parameters."""
        return type(self.fitter)(**self.fitter.get_params(deep=False))

    def fit(self, fitter):
        """``fitter.fit`` on the data; returns what ``fit`` returned."""
        return fitter.fit(*self.args, **self.kwargs)

    def first_fit(self):
        """The fitter fitted once (fitted on the first call, reused after)."""
        if self.fitted is None:
            fitter = self.fresh()
            self.returned = self.fit(fitter)  # whether that is the fitter: fit_returns_self says
            self.fitted = fitter
            self.learned = copy.deepcopy(_learned(fitter))
        return self.fitted


# -- the checks, in the order they run ------------------------------------------------------------
def _check_params_round_trip(run: _Run) -> str:
    params = run.fitter.get_params(deep=False)
    rebuilt = type(run.fitter)(**params).get_params(deep=False)
    diff = _difference(params, rebuilt)
    if diff:
        raise _Failed(f"{run.name}(**get_params()) has other parameters: {diff} (the constructor must "
                      "store each argument unchanged)")
    copy_ = run.fresh()
    returned = copy_.set_params(**params)
    if returned is not copy_:
        raise _Failed(f"set_params returned {_kind(returned)}, not the fitter itself")
    diff = _difference(params, copy_.get_params(deep=False))
    if diff:
        raise _Failed(f"set_params(**get_params()) changed the parameters: {diff}")
    return f"parameters: {', '.join(params)}"


def _check_clone(run: _Run) -> str:
    from sklearn.base import clone  # heavy: scikit-learn only for its clone

    twin = clone(run.fitter)
    if type(twin) is not type(run.fitter) or twin is run.fitter:
        raise _Failed(f"sklearn.base.clone gave {_kind(twin)}, not a new {run.name}")
    diff = _difference(run.fitter.get_params(deep=False), twin.get_params(deep=False))
    if diff:
        raise _Failed(f"the clone's parameters differ: {diff}")
    return "sklearn.base.clone gives a new fitter with equal parameters"


def _check_fit_returns_self(run: _Run) -> str:
    fitter = run.first_fit()
    if run.returned is not fitter:
        raise _Failed(f"fit returned {_kind(run.returned)}; it must return self")
    return "fit returns self"


def _check_learned_attribute_names(run: _Run) -> str:
    before = set(vars(run.fresh()))
    fitted = run.first_fit()
    added = sorted(n for n in set(vars(fitted)) - before if not n.startswith("_") and not n.endswith("_"))
    if added:
        raise _Failed(f"fit set public attribute(s) {added} whose names do not end in '_' (learned "
                      "attributes end in '_'; private state starts with '_')")
    learned = sorted(_learned(fitted))
    if "summary_" not in learned:
        raise _Failed("fit did not set summary_ (a fitter with summary_ is fitted)")
    return f"{len(learned)} learned attributes: {', '.join(learned)}"


def _check_not_fitted_before_fit(run: _Run) -> str:
    run.first_fit()
    names = sorted(set(run.learned) | set(_learned_properties(type(run.fitter))))
    fresh = run.fresh()
    present = sorted(n for n in names if n in vars(fresh))
    if present:
        raise _Failed(f"learned attribute(s) {present} exist before fit")
    for name in names:
        try:
            getattr(fresh, name)
        except NotFittedError:
            continue
        except Exception as err:  # the wrong error is the finding
            raise _Failed(f"reading {name} before fit raised {type(err).__name__}, not NotFittedError") from err
        raise _Failed(f"reading {name} before fit raised nothing (expected NotFittedError)")
    return f"each of {len(names)} learned attributes raises NotFittedError before fit"


def _check_input_not_mutated(run: _Run) -> str:
    run.first_fit()
    for where, old, new in _inputs(run.original, (run.args, run.kwargs)):
        diff = _difference(old, new)
        if diff:
            raise _Failed(f"fit changed its input {where}: {diff}")
    return "fit leaves its inputs unchanged"


def _check_refit_identical(run: _Run) -> str:
    fitted = run.first_fit()
    run.fit(fitted)
    diff = _difference(run.learned, _learned(fitted))
    if diff:
        raise _Failed(f"a second fit on the same data learned something else: {diff}")
    return "a refit on the same data learns the same attributes"


def _check_summary_columns(run: _Run) -> str:
    fitted = run.first_fit()
    declared = tuple(getattr(type(fitted), "SUMMARY_COLUMNS", ()))
    summary = fitted.summary_
    if not isinstance(summary, pd.DataFrame):
        raise _Failed(f"summary_ is {_kind(summary)}, not a DataFrame")
    if tuple(summary.columns) != declared:
        raise _Failed(f"summary_ has columns {list(summary.columns)}; {run.name}.SUMMARY_COLUMNS "
                      f"documents {list(declared)}")
    return f"summary_ columns: {', '.join(declared)}"


def _check_repr_html(run: _Run) -> str:
    for state, fitter in (("unfitted", run.fresh()), ("fitted", run.first_fit())):
        html = _notebook_html(fitter)
        if not (isinstance(html, str) and html.strip() and run.name in html):
            raise _Failed(f"_repr_html_ of the {state} fitter gave {_kind(html)}; expected HTML naming "
                          f"{run.name}")
    return "_repr_html_ names the fitter, fitted or not"


def _check_pickle(run: _Run) -> str:
    fitted = run.first_fit()
    back = pickle.loads(pickle.dumps(fitted))
    diff = _difference(_learned(fitted), _learned(back))
    if diff:
        raise _Failed(f"the unpickled fitter learned something else: {diff}")
    diff = _difference(fitted.get_params(deep=False), back.get_params(deep=False))
    if diff:
        raise _Failed(f"the unpickled fitter has other parameters: {diff}")
    return "pickle round-trips the parameters and every learned attribute"


#: The checks :func:`check_fitter` runs, by name, in order.
CHECKS: dict[str, Callable[[_Run], str]] = {
    "params_round_trip": _check_params_round_trip,
    "clone": _check_clone,
    "fit_returns_self": _check_fit_returns_self,
    "learned_attribute_names": _check_learned_attribute_names,
    "not_fitted_before_fit": _check_not_fitted_before_fit,
    "input_not_mutated": _check_input_not_mutated,
    "refit_identical": _check_refit_identical,
    "summary_columns": _check_summary_columns,
    "repr_html": _check_repr_html,
    "pickle": _check_pickle,
}


def check_fitter(fitter, *, data=None, checks=None, raise_on_failure: bool = True) -> pd.DataFrame:
    """Check that a fitter follows the conventions every thatchlab fitter shares.

    The fitter is fitted on small data and checked one convention at a time
    (:data:`CHECKS`, in this order): ``params_round_trip``
    (``type(f)(**f.get_params())`` has the same parameters; ``set_params``
    returns the fitter and keeps them), ``clone`` (:func:`sklearn.base.clone`
    gives a new fitter with equal parameters), ``fit_returns_self``,
    ``learned_attribute_names`` (every public attribute ``fit`` sets ends in
    ``_``; ``summary_`` is one), ``not_fitted_before_fit`` (none of them, nor
    a property ending in ``_``, exists before ``fit``; reading one raises
    :class:`~thatchlab.fit.NotFittedError`), ``input_not_mutated`` (the data
    equal a deep copy taken before ``fit``, frames by
    :func:`pandas.testing.assert_frame_equal`), ``refit_identical`` (a second
    fit on the same data learns equal attributes, ``summary_`` included),
    ``summary_columns`` (exactly the class's documented ``SUMMARY_COLUMNS``,
    in order), ``repr_html`` (``_repr_html_`` is non-empty HTML naming the
    class, fitted or not) and ``pickle`` (a pickle round trip keeps the
    parameters and every learned attribute). Every check runs; an exception
    inside one is its failure. The fits see a copy of the data.

    Parameters
    ----------
    fitter : BaseFitter subclass or instance
        A class is checked with its default parameters, an instance with its
        own (never fitted itself: the checks fit copies).
    data : object, tuple or dict, default=None
        What to fit on: a tuple is unpacked into ``fit``'s positional
        arguments, a dict into its keyword arguments, anything else is
        ``fit``'s one argument. ``None`` takes the class's small example
        data (its ``_check_data()`` classmethod, which every thatchlab
        fitter defines; define it on your fitter, or pass ``data``).
    checks : sequence of str, default=None
        Names of the checks to run (``None``: all of :data:`CHECKS`).
    raise_on_failure : bool, default=True
        Raise :class:`FitterCheckError` when a check fails (else return the report).

    Returns
    -------
    DataFrame
        One row per check run: ``check``, ``passed`` and ``detail`` (what was found or went wrong).

    Raises
    ------
    FitterCheckError
        When a check fails and ``raise_on_failure``: the message names the
        fitter and each failed check; ``err.report`` holds the report.
    InputError
        When ``fitter`` is no BaseFitter, a check is unknown or there is no data.

    See Also
    --------
    BaseFitter : The conventions checked.

    Examples
    --------
    >>> from thatchlab.fit import PriorFitter, check_fitter
    >>> report = check_fitter(PriorFitter)
    >>> bool(report["passed"].all()), report["check"].tolist()[:3]
    (True, ['params_round_trip', 'clone', 'fit_returns_self'])

    A broken convention is named with its check:

    >>> class Careless(PriorFitter):
    ...     def fit(self, signals):
    ...         super().fit(signals)
    ...         self.items = len(self.counts_)   # a learned attribute without the trailing _
    ...         return self
    >>> check_fitter(Careless, checks=["learned_attribute_names"])  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    thatchlab.fit._check.FitterCheckError: Careless failed 1 of 1 check(s): learned_attribute_names: fit set public attribute(s) ['items'] whose names do not end in '_'...
    """
    run, names = _prepare(fitter, data, checks)
    report = pd.DataFrame([_verdict(run, name) for name in names], columns=["check", "passed", "detail"])
    failed = report.loc[~report["passed"]]
    if raise_on_failure and len(failed):
        lines = "; ".join(f"{row.check}: {row.detail}" for row in failed.itertuples())
        raise FitterCheckError(f"{run.name} failed {len(failed)} of {len(report)} check(s): {lines}", report)
    return report


def _verdict(run: _Run, name: str) -> dict:
    """One row of the report: the check ``name`` run on ``run``, passed or not, and what it found."""
    try:
        detail, passed = CHECKS[name](run), True
    except _Failed as err:
        detail, passed = str(err), False
    except Exception as err:  # any error is the check's failure, reported
        detail, passed = f"raised {type(err).__name__}: {err}", False
    return {"check": name, "passed": passed, "detail": detail}


def _prepare(fitter, data, checks):
    """The run (the fitter as an instance, ``fit``'s arguments) and the check names, all checked."""
    cls = fitter if inspect.isclass(fitter) else type(fitter)
    if not (inspect.isclass(cls) and issubclass(cls, BaseFitter)):
        raise InputError(f"fitter: expected a BaseFitter subclass or instance, got {_kind(fitter)}")
    instance = cls() if fitter is cls else fitter
    if data is None:
        data = cls._check_data()
        if data is None:
            raise InputError(f"data: {cls.__name__} has no example data (_check_data() returned None); "
                             "pass data= (what fit takes: one object, a tuple of arguments or a dict)")
    args, kwargs = ((data,), {})
    if isinstance(data, tuple):
        args = data
    elif isinstance(data, dict):
        args, kwargs = (), data
    names = list(CHECKS) if checks is None else list(checks)
    unknown = [n for n in names if n not in CHECKS]
    if unknown:
        raise InputError(f"checks: unknown check(s) {unknown}; expected names from {list(CHECKS)}")
    return _Run(instance, args, kwargs), names


# -- comparing what was learned -------------------------------------------------------------------
def _learned(fitter) -> dict:
    """The public attributes ending in ``_`` that ``fitter`` holds."""
    return {n: v for n, v in vars(fitter).items() if n.endswith("_") and not n.startswith("_")}


def _learned_properties(cls) -> list[str]:
    """Public properties ending in ``_`` (``confidence_interval_``...) anywhere in the class's MRO."""
    return [n for klass in cls.__mro__ for n, v in vars(klass).items()
            if isinstance(v, property) and n.endswith("_") and not n.startswith("_")]


def _inputs(old, new):
    """``(where, before, after)`` for each argument of ``fit``: ``args[i]`` or ``kwargs['name']``."""
    (old_args, old_kwargs), (new_args, new_kwargs) = old, new
    for i, (a, b) in enumerate(zip(old_args, new_args, strict=True)):
        yield f"args[{i}]", a, b
    for key in old_kwargs:
        yield f"kwargs[{key!r}]", old_kwargs[key], new_kwargs[key]


def _difference(a, b, where: str = "") -> str:
    """How ``a`` and ``b`` differ, in words (``""`` when they are equal); NaN equals NaN."""
    if isinstance(a, dict) and isinstance(b, dict):
        if set(a) != set(b):
            return f"{where or 'keys'}: {sorted(map(str, a))} against {sorted(map(str, b))}"
        for key in a:
            diff = _difference(a[key], b[key], f"{where}[{key!r}]" if where else str(key))
            if diff:
                return diff
        return ""
    label = where or "value"
    try:
        if isinstance(a, pd.DataFrame):
            pd.testing.assert_frame_equal(a, b, check_exact=True)
            return ""
        if isinstance(a, pd.Series):
            pd.testing.assert_series_equal(a, b, check_exact=True)
            return ""
        if isinstance(a, (pd.Index, np.ndarray)) or isinstance(b, (pd.Index, np.ndarray)):
            equal = _arrays_equal(a, b)
        elif isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)) and len(a) == len(b):
            return next((d for d in (_difference(x, y, f"{label}[{i}]") for i, (x, y)
                                     in enumerate(zip(a, b, strict=True))) if d), "")
        elif isinstance(a, float) and isinstance(b, float):
            equal = a == b or (math.isnan(a) and math.isnan(b))
        else:
            equal = bool(a == b)
    except AssertionError as err:
        return f"{label}: {' '.join(str(err).split())}"
    except (TypeError, ValueError) as err:
        return f"{label}: cannot compare {_kind(a)} with {_kind(b)} ({err})"
    return "" if equal else f"{label}: {_short(a)} against {_short(b)}"


def _arrays_equal(a, b) -> bool:
    a, b = np.asarray(a), np.asarray(b)
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    try:
        return bool(np.array_equal(a, b, equal_nan=True))
    except TypeError:  # object arrays: NaN-aware equality is not defined, plain equality is
        return bool(np.array_equal(a, b))


def _notebook_html(obj):
    """What a notebook shows for ``obj``: its ``_repr_html_`` display hook's result, the hook looked
    up by name as IPython's formatter looks it up (``None`` when there is none)."""
    hook = getattr(obj, "_repr_html_", None)
    return hook() if callable(hook) else None


def _kind(value) -> str:
    return "None" if value is None else f"a {type(value).__name__}"


def _short(value) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."
