"""Search spaces of a sweep: grid, seeded random draws, and Optuna suggestions.

A space maps a parameter name to a list of values (grid or random choice),
a ``(low, high)`` or ``(low, high, "log")`` range, or a frozen scipy
distribution (random and Optuna). Random draws come from one
``numpy.random.Generator`` seeded by the caller, so a sweep proposes the
same configurations on a laptop and on a cluster.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
from typing import NamedTuple

import numpy as np

from thatchlab.core.errors import InputError, ParamsError

__all__ = ["grid_configs", "random_configs", "optuna_suggest", "check_space"]


class _Range(NamedTuple):
    """A ``(low, high)`` or ``(low, high, "log")`` entry of a space, by name."""

    low: object
    high: object
    log: bool

    @property
    def integer(self) -> bool:
        """Both ends are ints (not bools): draw integers."""
        return all(isinstance(x, int) and not isinstance(x, bool) for x in (self.low, self.high))


def _as_range(v) -> _Range | None:
    """The range ``v`` spells, or None when ``v`` is not a range.

    >>> _as_range((1.0, 50.0, "log")), _as_range([1, 2])
    (_Range(low=1.0, high=50.0, log=True), None)
    """
    if isinstance(v, tuple) and len(v) in (2, 3) and (len(v) == 2 or v[2] == "log"):
        return _Range(v[0], v[1], len(v) == 3)
    return None


def _is_dist(v) -> bool:
    return hasattr(v, "rvs") and hasattr(v, "ppf")


def _plain(v):
    if isinstance(v, np.generic):
        return v.item()
    return v


def _values(name, values) -> list:
    """The listed values of a space entry (a scalar is a one-value list); at least one."""
    values = list(values) if isinstance(values, (list, np.ndarray, range)) else [values]
    if not values:
        raise InputError(f"space[{name!r}]: expected at least one value")
    return values


def check_space(space: dict, params_class) -> dict:
    """Validate the names of ``space`` against the fields of ``params_class``.

    Parameters
    ----------
    space : dict
        Parameter name → values, range or distribution.
    params_class : type
        The engine's parameter dataclass.

    Returns
    -------
    dict
        ``space`` itself.
    """
    if not isinstance(space, dict) or not space:
        raise InputError("space: expected a non-empty dict parameter → values")
    names = [f.name for f in dataclasses.fields(params_class)]
    unknown = [k for k in space if k not in names]
    if unknown:
        raise ParamsError(f"space: unknown parameter(s) {unknown} of {params_class.__name__}; "
                          f"expected some of {names}")
    return space


def grid_configs(space: dict) -> list[dict]:
    """Every combination of the listed values, in the space's key order (last key fastest).

    >>> grid_configs({"k": [2, 5], "p0": [0.5]})
    [{'k': 2, 'p0': 0.5}, {'k': 5, 'p0': 0.5}]
    """
    axes = []
    for name, values in space.items():
        if _as_range(values) is not None or _is_dist(values):
            raise InputError(f"space[{name!r}]: a grid needs a list of values; ranges (low, high) and "
                             f"distributions are for search='random' or 'optuna'")
        axes.append([_plain(v) for v in _values(name, values)])
    return [dict(zip(space, combo)) for combo in itertools.product(*axes)]


def _draw(name, values, rng, n):
    """``n`` draws of one space entry from ``rng``."""
    if _is_dist(values):
        return [_plain(x) for x in np.atleast_1d(values.rvs(size=n, random_state=rng))]
    span = _as_range(values)
    if span is None:
        values = _values(name, values)
        return [_plain(values[i]) for i in rng.integers(0, len(values), size=n)]
    lo, hi = span.low, span.high
    if not (isinstance(lo, (int, float)) and isinstance(hi, (int, float)) and lo <= hi):
        raise InputError(f"space[{name!r}]: expected (low, high[, 'log']) with low <= high, got {values!r}")
    if span.log and lo <= 0:
        raise InputError(f"space[{name!r}]: a log range needs low > 0, got {values!r}")
    if span.integer:
        if span.log:
            u = rng.uniform(math.log(lo), math.log(hi + 1), size=n)
            return [int(min(hi, math.floor(math.exp(x)))) for x in u]
        return [int(x) for x in rng.integers(lo, hi + 1, size=n)]
    if span.log:
        return [float(math.exp(x)) for x in rng.uniform(math.log(lo), math.log(hi), size=n)]
    return [float(x) for x in rng.uniform(lo, hi, size=n)]


def random_configs(space: dict, n_trials: int, seed: int = 0) -> list[dict]:
    """``n_trials`` configurations drawn with ``numpy.random.default_rng(seed)``.

    Parameters are drawn in the space's key order, all trials of one
    parameter at a time: lists uniformly, ``(low, high)`` uniformly (integers
    when both ends are ints), ``(low, high, "log")`` log-uniformly, scipy
    distributions with ``rvs(random_state=rng)``.

    >>> random_configs({"k": (1.0, 10.0), "p0": [0.3, 0.5]}, 2, seed=0)  # doctest: +ELLIPSIS
    [{'k': 6.7..., 'p0': 0.3}, {'k': 3.4..., 'p0': 0.3}]
    """
    if n_trials is None or int(n_trials) < 1:
        raise InputError(f"n_trials: expected a positive number of configurations, got {n_trials!r}")
    rng = np.random.default_rng(seed)
    cols = {name: _draw(name, values, rng, int(n_trials)) for name, values in space.items()}
    return [{name: cols[name][i] for name in space} for i in range(int(n_trials))]


def optuna_suggest(trial, space: dict) -> dict:
    """One configuration suggested by an Optuna ``trial`` (scipy distributions via their ``ppf``).

    Parameters
    ----------
    trial : optuna.trial.Trial
        The trial asked from the study.
    space : dict
        The search space (lists are categorical; ranges ints or floats).
    """
    out = {}
    for name, values in space.items():
        span = _as_range(values)
        if _is_dist(values):
            out[name] = float(values.ppf(trial.suggest_float(f"{name}__quantile", 1e-9, 1 - 1e-9)))
        elif span is not None:
            if span.integer:
                out[name] = trial.suggest_int(name, span.low, span.high, log=span.log)
            else:
                out[name] = trial.suggest_float(name, float(span.low), float(span.high), log=span.log)
        else:
            values = list(values) if isinstance(values, (list, np.ndarray, range)) else [values]
            out[name] = _plain(trial.suggest_categorical(name, [_plain(v) for v in values]))
    return out
