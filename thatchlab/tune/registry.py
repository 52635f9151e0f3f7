"""The sweep's engine registry: what :func:`thatchlab.tune.sweep` needs from an engine (DESIGN §10).

An engine enters a sweep through an :class:`EngineSpec`: its parameter
dataclass, a ``prepare`` step done once per sweep (validation, time sort,
embeddings and cosines), an ``evaluate`` step that scores many parameter
settings on the same prepared log, its metric names and their direction.
Engines never register themselves: the registry lives here, in ``tune``.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np
import pandas as pd

from thatchlab.core.errors import InputError

__all__ = ["EngineSpec", "Prepared", "Segment", "register_engine", "get_engine", "engines",
           "frame_evaluator", "bootstrap_interval", "config_seed"]


@dataclass(frozen=True)
class Segment:
    """A scored stretch of the time-sorted log.

    Rows ``[lo, hi)`` of the time-sorted log; in time, ``[t_lo, t_hi)`` in
    nanoseconds since the epoch (``t_hi = None``: up to the end, inclusive).
    Engines whose outputs carry log positions use ``lo``/``hi``; engines whose
    outputs carry only times (anticipation sessions) use ``t_lo``/``t_hi``.
    """

    name: str
    lo: int
    hi: int
    t_lo: int
    t_hi: int | None

    def mask(self, position=None, time_ns=None) -> np.ndarray:
        """Boolean mask of the rows (by ``position`` if given, else by ``time_ns``) inside."""
        if position is not None:
            pos = np.asarray(position, dtype=np.int64)
            return (pos >= self.lo) & (pos < self.hi)
        t = np.asarray(time_ns, dtype=np.int64)
        inside = t >= self.t_lo
        if self.t_hi is not None:
            inside &= t < self.t_hi
        return inside


@dataclass
class Prepared:
    """The once-per-sweep work on a log, shipped to every worker.

    ``data`` is engine-specific (it must be picklable and must not hold an
    embedding model); ``times`` are the time-sorted log's timestamps (int64
    ns, position order); ``embedder`` names the embedding model (or None).
    """

    data: Any
    times: np.ndarray
    embedder: str | None = None
    estimator: str = ""


@dataclass(frozen=True)
class EngineSpec:
    """How the sweep drives one engine.

    Attributes
    ----------
    name : registry key (``"prediction"``, ``"belief"``...).
    params_class : the frozen parameter dataclass (a ``ParamsBase``).
    prepare : ``prepare(log, base_params, embedder=None, params_list=None) -> Prepared``
        (``params_list``: the proposed configurations when known in advance).
    evaluate : ``evaluate(prepared, params_list, segments, metric, boot) -> list[dict]``,
        one dict per params with ``"<segment>_<metric>"`` keys (and
        ``"<segment>_<metric>_lo"``/``"_hi"`` for ``metric`` when ``boot``
        is a dict ``{"n": ..., "alpha": ..., "seed": ...}``).
    metrics : metric name → ``"min"`` or ``"max"`` (the better direction).
    estimator : how the metrics are estimated (recorded in every result row).
    """

    name: str
    params_class: type
    prepare: Callable
    evaluate: Callable
    metrics: dict = field(default_factory=dict)
    estimator: str = ""


_REGISTRY: dict[str, EngineSpec | Callable[[], EngineSpec]] = {}


def register_engine(spec: EngineSpec | Callable[[], EngineSpec], name: str | None = None,
                    replace: bool = False) -> None:
    """Add an engine to the sweep registry (a spec, or a zero-argument factory loaded lazily)."""
    key = name or getattr(spec, "name", None)
    if not key:
        raise InputError("register_engine: expected a name for a spec factory")
    if key in _REGISTRY and not replace:
        raise InputError(f"register_engine: engine {key!r} is already registered (pass replace=True)")
    _REGISTRY[key] = spec


def get_engine(engine: str | EngineSpec) -> EngineSpec:
    """The :class:`EngineSpec` registered as ``engine`` (a spec passes through)."""
    if isinstance(engine, EngineSpec):
        return engine
    if engine not in _REGISTRY:
        raise InputError(f"engine: expected one of {sorted(_REGISTRY)}, got {engine!r}")
    spec = _REGISTRY[engine]
    if not isinstance(spec, EngineSpec):
        spec = spec()
        _REGISTRY[engine] = spec
    return spec


def engines() -> list[str]:
    """Names of the registered engines."""
    return sorted(_REGISTRY)


def config_seed(seed: int, params) -> int:
    """A seed derived from the sweep seed and a configuration (stable across runs and workers)."""
    text = f"{int(seed)}|{sorted(params.to_dict().items())!r}"
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "little") >> 1


def bootstrap_interval(frame: pd.DataFrame, score: Callable[[pd.DataFrame], float], n: int = 200,
                       alpha: float = 0.05, seed: int = 0) -> tuple[float, float]:
    """Percentile bootstrap interval of ``score(frame)`` resampling rows of ``frame``.

    >>> f = pd.DataFrame({"x": [0.0, 1.0, 2.0, 3.0]})
    >>> lo, hi = bootstrap_interval(f, lambda d: float(d["x"].mean()), n=100, seed=1)
    >>> 0.0 <= lo <= 1.5 <= hi <= 3.0
    True
    """
    if len(frame) == 0:
        return float("nan"), float("nan")
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, len(frame), size=(n, len(frame)))
    vals = np.array([score(frame.iloc[row]) for row in idx], dtype=np.float64)
    vals = vals[np.isfinite(vals)]
    if vals.size == 0:
        return float("nan"), float("nan")
    return float(np.quantile(vals, alpha / 2)), float(np.quantile(vals, 1 - alpha / 2))


def frame_evaluator(outputs: Callable, score: Callable, where: str = "position") -> Callable:
    """Build an ``evaluate`` from per-configuration output frames and a frame scorer.

    ``outputs(prepared, params_list)`` yields one frame per configuration
    whose rows are the scored units (reads, recalls, sessions, forecasts),
    with a ``position`` column (row of the time-sorted log) or, with
    ``where="time"``, a ``time_ns`` column; ``score(frame, prepared, params)``
    returns the metric dict of any subset of rows. Each segment is scored
    on its rows; the optional bootstrap resamples those rows.
    """

    def evaluate(prepared: Prepared, params_list, segments, metric=None, boot=None):
        rows = []
        for params, frame in zip(params_list, outputs(prepared, params_list)):
            key = frame["position"] if where == "position" else None
            times = frame["time_ns"] if where == "time" else None
            row = {}
            for seg in segments:
                part = frame[seg.mask(key, times)]
                scores = score(part, prepared, params)
                row.update({f"{seg.name}_{k}": v for k, v in scores.items()})
                if boot and metric is not None:
                    lo, hi = bootstrap_interval(
                        part, lambda d, p=params: score(d, prepared, p)[metric], n=boot["n"],
                        alpha=boot["alpha"], seed=config_seed(boot["seed"], params))
                    row[f"{seg.name}_{metric}_lo"], row[f"{seg.name}_{metric}_hi"] = lo, hi
            rows.append(row)
        return rows

    return evaluate
