"""How often :func:`~thatchlab.decide.decide` ships a change that does nothing: a simulation study.

A world is a sweep-shaped frame built directly, no replay: production's
default and one changed configuration (``k = 20``) scored on ``G`` test
sessions of unequal size (3 to 59 signals). The changed configuration's
per-session log-loss sums are the default's plus ``(δ + σ·z_c)·n_c`` with
``z_c`` standard normal, so its true test difference to the default is
exactly ``δ``: a truth planted outside ``decide``. Validation always prefers
the change, so ``decide`` tests it in every world.

- null worlds (``δ = 0``): ``false_ship`` is the share that ship the change
  (nominal ``α/2``, the one-sided level of a two-sided ``1 − α`` interval);
- non-null worlds (``δ = −3·σ/√G``): ``power`` is the share that ship it and
  ``coverage`` the share whose ``1 − α`` interval of the change covers ``δ``.

For comparison each row also scores the plain percentile interval of the same
kind of cluster resamples (what ``decide`` used before its small-sample
correction) on a fresh null world. ``benchmarks/bench_decide_calibration.py``
runs the study at full size; notebook 02 plots it.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd

from thatchlab.core.params import ScoringParams
from thatchlab.decide._core import decide, paired_difference
from thatchlab.sweep import config_id
from thatchlab.sweep.resampling import ClusterStats, cluster_resamples, percentile_interval

__all__ = ["planted_sweep", "decide_calibration"]

#: The planted change: a configuration ``decide`` compares with production's default.
CHANGED = ScoringParams(k=20.0)


def planted_sweep(n_clusters: int, delta: float, rng, sigma: float = 0.05, changed=None,
                  metric: str = "log_loss") -> pd.DataFrame:
    """A two-configuration sweep frame whose change moves test ``metric`` by exactly ``delta``.

    The frame carries what :func:`~thatchlab.decide.decide` reads: ``config_id``,
    ``val_<metric>`` and ``test_<metric>`` columns, and ``attrs`` ``engine``, ``metric``,
    ``metrics``, ``holdout``, ``clusters`` (a :class:`~thatchlab.sweep.ClusterStats` of
    per-session sums), ``unidentified`` and ``identification``: the public way to plant a
    world for ``decide``.

    Parameters
    ----------
    n_clusters : int
        Test (and validation) sessions, of 3 to 59 signals each.
    delta : float
        The change's true test difference to the default.
    rng : numpy.random.Generator
        The draws of the world.
    sigma : float, default=0.05
        Per-session noise of the difference.
    changed : params, optional
        The changed configuration (default :data:`CHANGED`, ``k = 20``).
    metric : str, default="log_loss"
        Any minimised ratio metric the frame is scored on.

    Returns
    -------
    DataFrame
        Two rows, production's default then the change (validation prefers the change).

    See Also
    --------
    decide_calibration : The simulation study built on it.

    Examples
    --------
    >>> frame = planted_sweep(8, 0.0, np.random.default_rng(0))
    >>> frame[["k", "val_log_loss"]].values.tolist(), len(frame.attrs["clusters"].labels["test"])
    ([[5.0, 0.7], [20.0, 0.65]], 8)
    """
    den = rng.integers(3, 60, n_clusters).astype(np.float64)
    base = rng.gamma(3.0, 0.2, n_clusters) * den
    effect = delta + sigma * rng.standard_normal(n_clusters)
    changed = CHANGED if changed is None else changed
    configs = {ScoringParams(): (0.70, base), changed: (0.65, base + effect * den)}
    rows, parts = [], {}
    for params, (val, num) in configs.items():
        cid = config_id("prediction", params)
        parts[cid] = {(metric, "test"): (num, den), (metric, "val"): (base, den)}
        rows.append({**params.to_dict(), "config_id": cid, "engine": "prediction", f"val_{metric}": val,
                     f"test_{metric}": float(num.sum() / den.sum())})
    frame = pd.DataFrame(rows)
    labels = {"test": np.array([f"s{i}" for i in range(n_clusters)]),
              "val": np.array([f"v{i}" for i in range(n_clusters)])}
    frame.attrs.update(engine="prediction", metric=metric, metrics=[metric], holdout="0.2",
                       clusters=ClusterStats.merge(parts, "session", labels), unidentified=[],
                       identification={metric: []})
    return frame


def _one_count(n_clusters: int, reps: int, n_boot: int, seed: int, alpha: float, sigma: float) -> dict:
    rng = np.random.default_rng([seed, n_clusters])
    shipped_null = shipped_alt = covered = pct_null = pct_cover = 0
    delta = -3 * sigma / np.sqrt(n_clusters)
    changed = config_id("prediction", CHANGED)
    for r in range(reps):
        for truth in (0.0, delta):
            d = decide(planted_sweep(n_clusters, truth, rng, sigma), "log_loss", n_boot=n_boot, seed=r,
                       alpha=alpha)
            ships = d.combined["config_id"] == changed
            if truth == 0.0:
                shipped_null += ships
            else:
                shipped_alt += ships
                gate = d.combined["gate"]
                covered += gate["ci_lower"] <= truth <= gate["ci_upper"]
        frame = planted_sweep(n_clusters, 0.0, rng, sigma)
        s = frame.attrs["clusters"]
        (n0, d0), (n1, d1) = (tuple(a[0] for a in s.sums("log_loss", "test", [c]))
                              for c in frame["config_id"].tolist())
        out = paired_difference(n0, d0, n1, d1, cluster_resamples(n_clusters, n_boot, r), alpha)
        lo, hi = percentile_interval(out["draws"], alpha)
        pct_null += hi < 0
        pct_cover += lo <= 0 <= hi
    return {"clusters": n_clusters, "reps": reps, "false_ship": shipped_null / reps, "false_ships": shipped_null,
            "coverage": covered / reps, "power": shipped_alt / reps,
            "percentile_false_ship": pct_null / reps, "percentile_coverage": pct_cover / reps}


def decide_calibration(clusters=(5, 8, 12, 20, 40), reps: int = 200, n_boot: int = 400, seed: int = 20260301,
                       alpha: float = 0.05, sigma: float = 0.05) -> pd.DataFrame:
    """False-ship rate, coverage and power of ``decide`` per test-session count, by simulation.

    The rates are shares of ``reps`` worlds: a rate's binomial standard error is about
    ``√(r(1 − r)/reps)``.

    Parameters
    ----------
    clusters : sequence of int, default=(5, 8, 12, 20, 40)
        Test-session counts to study.
    reps : int, default=200
        Worlds per count (each a null and a non-null world).
    n_boot : int, default=400
        Cluster resamples per decision.
    seed : int, default=20260301
        Seed of the worlds.
    alpha : float, default=0.05
        The decisions' ``α``.
    sigma : float, default=0.05
        Per-session noise of the planted difference.

    Returns
    -------
    DataFrame
        One row per count in ``clusters``: ``clusters, reps``, ``false_ship`` (share of null worlds
        that shipped; ``false_ships`` the count), ``coverage`` and ``power`` (non-null worlds), and
        the percentile interval's ``percentile_false_ship`` and ``percentile_coverage``.

    See Also
    --------
    planted_sweep : One world.

    Examples
    --------
    >>> table = decide_calibration(clusters=(5,), reps=4, n_boot=100)
    >>> table[["clusters", "reps"]].values.tolist()
    [[5, 4]]
    """
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return pd.DataFrame([_one_count(int(g), int(reps), int(n_boot), int(seed), alpha, sigma) for g in clusters])
