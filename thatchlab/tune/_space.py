"""Search spaces of a sweep: grid, seeded random draws, and Optuna suggestions (DESIGN §10).

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

import numpy as np

from thatchlab.core.errors import InputError, ParamsError

__all__ = ["grid_configs", "random_configs", "optuna_suggest", "check_space"]


def _is_range(v) -> bool:
    return isinstance(v, tuple) and len(v) in (2, 3) and (len(v) == 2 or v[2] == "log")


def _is_dist(v) -> bool:
    return hasattr(v, "rvs") and hasattr(v, "ppf")


def _plain(v):
    if isinstance(v, np.generic):
        return v.item()
    return v


def check_space(space: dict, params_class) -> dict:
    """Validate the names of ``space`` against the fields of ``params_class``."""
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
        if _is_range(values) or _is_dist(values):
            raise InputError(f"space[{name!r}]: a grid needs a list of values; ranges (low, high) and "
                             f"distributions are for search='random' or 'optuna'")
        values = list(values) if isinstance(values, (list, np.ndarray, range)) else [values]
        if not values:
            raise InputError(f"space[{name!r}]: expected at least one value")
        axes.append([_plain(v) for v in values])
    return [dict(zip(space, combo)) for combo in itertools.product(*axes)]


def _draw(name, values, rng, n):
    if _is_dist(values):
        return [_plain(x) for x in np.atleast_1d(values.rvs(size=n, random_state=rng))]
    if _is_range(values):
        lo, hi = values[0], values[1]
        log = len(values) == 3
        if not (isinstance(lo, (int, float)) and isinstance(hi, (int, float)) and lo <= hi):
            raise InputError(f"space[{name!r}]: expected (low, high[, 'log']) with low <= high, got {values!r}")
        if log and lo <= 0:
            raise InputError(f"space[{name!r}]: a log range needs low > 0, got {values!r}")
        integer = all(isinstance(x, int) and not isinstance(x, bool) for x in (lo, hi))
        if integer:
            if log:
                u = rng.uniform(math.log(lo), math.log(hi + 1), size=n)
                return [int(min(hi, math.floor(math.exp(x)))) for x in u]
            return [int(x) for x in rng.integers(lo, hi + 1, size=n)]
        if log:
            return [float(math.exp(x)) for x in rng.uniform(math.log(lo), math.log(hi), size=n)]
        return [float(x) for x in rng.uniform(lo, hi, size=n)]
    values = list(values) if isinstance(values, (list, np.ndarray, range)) else [values]
    if not values:
        raise InputError(f"space[{name!r}]: expected at least one value")
    return [_plain(values[i]) for i in rng.integers(0, len(values), size=n)]


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
    """One configuration suggested by an Optuna ``trial`` (scipy distributions via their ``ppf``)."""
    out = {}
    for name, values in space.items():
        if _is_dist(values):
            out[name] = float(values.ppf(trial.suggest_float(f"{name}__quantile", 1e-9, 1 - 1e-9)))
        elif _is_range(values):
            lo, hi = values[0], values[1]
            log = len(values) == 3
            if all(isinstance(x, int) and not isinstance(x, bool) for x in (lo, hi)):
                out[name] = trial.suggest_int(name, lo, hi, log=log)
            else:
                out[name] = trial.suggest_float(name, float(lo), float(hi), log=log)
        else:
            values = list(values) if isinstance(values, (list, np.ndarray, range)) else [values]
            out[name] = _plain(trial.suggest_categorical(name, [_plain(v) for v in values]))
    return out
