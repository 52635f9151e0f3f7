"""Calibration of probability forecasts: Brier, log-loss, ECE and reliability curves.

Thin wrappers over scikit-learn so every engine scores forecasts one way. Inputs are
validated as scikit-learn validates them: outcomes are labels in {0, 1} (booleans too),
forecasts are probabilities in [0, 1], neither may hold NaN, weights are finite and
non-negative; anything else raises :class:`~thatchlab.core.errors.MetricInputError` naming
the first offending position and value (never a silently wrong score).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from thatchlab.core.docstrings import fill_doc
from thatchlab.core.errors import MetricInputError

__all__ = ["brier", "log_loss", "clip_eps", "ece", "reliability_curve", "calibration_bins", "calibration_summary"]

# the outcome/forecast parameters and the scores' Raises, written once (filled in by fill_doc)
_PARAMS_YP = """
y : array-like of {0, 1}
    The outcomes (booleans too).
p : array-like of float
    The forecasts, probabilities in [0, 1].
"""
_PARAMS_YPW = _PARAMS_YP + """\
weight : array-like of float, default=None
    Per-forecast weights, finite and non-negative (``None``: equal).
"""
_RAISES_SCORE = """
Raises
------
MetricInputError
    When an outcome is no 0/1 label, a forecast no probability, a weight
    negative or not finite, or the lengths differ.
"""


def clip_eps(p) -> float:
    """The clipping bound of :func:`log_loss`: the machine epsilon of ``p``'s float dtype.

    scikit-learn's ``log_loss`` clips forecasts to ``[eps, 1 − eps]`` with
    ``eps = np.finfo(y_pred.dtype).eps`` (2.22e-16 for float64); so does this
    module, and so do the sweep's vectorised scores.

    Parameters
    ----------
    p : array-like
        Forecasts; their dtype decides (float64 for a non-float one).

    Returns
    -------
    float
        The machine epsilon.

    See Also
    --------
    log_loss : Where the bound clips.

    Examples
    --------
    >>> clip_eps(np.zeros(2)) == float(np.finfo(np.float64).eps)
    True
    """
    dtype = np.asarray(p).dtype
    return float(np.finfo(dtype if np.issubdtype(dtype, np.floating) else np.float64).eps)


def _numbers(values, what: str) -> np.ndarray:
    arr = np.asarray(values)
    if arr.dtype == object or arr.dtype.kind not in "biuf":
        try:
            arr = arr.astype(np.float64)
        except (TypeError, ValueError):
            raise MetricInputError(f"{what}: expected numbers, got dtype {arr.dtype}") from None
    return arr.ravel()


def _first(mask: np.ndarray, values: np.ndarray, what: str, expected: str):
    if mask.any():
        i = int(np.flatnonzero(mask)[0])
        raise MetricInputError(f"{what}: expected {expected}; position {i} holds {values[i].item()!r} "
                               f"({int(mask.sum())} such value(s))")


def _forecasts(p) -> np.ndarray:
    """Forecasts checked to be probabilities, in their own float dtype (float32 stays float32,
    so :func:`clip_eps` is that dtype's epsilon, as scikit-learn clips)."""
    p = _numbers(p, "forecasts")
    if p.dtype.kind != "f":
        p = p.astype(np.float64)
    _first(np.isnan(p), p, "forecasts", "probabilities (no NaN)")
    _first((p < 0) | (p > 1), p, "forecasts", "probabilities in [0, 1]")
    return p


def _clean(y, p, weight=None):
    y = _numbers(y, "outcomes")
    _first(~np.isin(y, (0, 1)), y, "outcomes", "labels in {0, 1}")
    y = y.astype(np.float64)
    p = _forecasts(p)
    if y.shape != p.shape:
        raise MetricInputError(f"outcomes and forecasts differ in length ({y.size} vs {p.size})")
    w = None
    if weight is not None:
        w = _numbers(weight, "weights").astype(np.float64)
        if w.shape != y.shape:
            raise MetricInputError(f"weights and outcomes differ in length ({w.size} vs {y.size})")
        _first(~np.isfinite(w) | (w < 0), w, "weights", "finite non-negative numbers")
    return y, p, w


@fill_doc(params_ypw=_PARAMS_YPW, raises_score=_RAISES_SCORE)
def brier(y, p, weight=None) -> float:
    """Mean squared error of forecasts ``p`` for 0/1 outcomes ``y`` (NaN when empty).

    Parameters
    ----------
    {params_ypw}

    Returns
    -------
    float
        The (weighted) Brier score.

    {raises_score}

    See Also
    --------
    log_loss : The logarithmic score.

    Examples
    --------
    >>> brier([1, 0], [0.8, 0.4])
    0.1
    """
    from sklearn.metrics import brier_score_loss  # heavy: sklearn on first use

    y, p, w = _clean(y, p, weight)
    if y.size == 0:
        return float("nan")
    return round(float(brier_score_loss(y, p.astype(np.float64), sample_weight=w)), 15)


@fill_doc(params_ypw=_PARAMS_YPW, raises_score=_RAISES_SCORE)
def log_loss(y, p, weight=None) -> float:
    """Mean negative log-likelihood of 0/1 outcomes (NaN when empty).

    Forecasts are clipped to ``[eps, 1 − eps]`` with ``eps`` the machine
    epsilon of their dtype (:func:`clip_eps`), as scikit-learn's ``log_loss``
    does, so a float64 forecast of exactly 0 for an event costs
    ``−ln(2.22e-16) ≈ 36.04`` and a float32 one ``−ln(1.19e-07) ≈ 15.94``.

    Parameters
    ----------
    {params_ypw}

    Returns
    -------
    float
        The (weighted) mean log loss.

    {raises_score}

    See Also
    --------
    brier : The quadratic score.

    Examples
    --------
    >>> round(log_loss([1, 0], [0.5, 0.5]), 6)
    0.693147
    >>> round(log_loss([1], [0.0]), 4)
    36.0437
    """
    y, p, w = _clean(y, p, weight)
    if y.size == 0:
        return float("nan")
    eps = clip_eps(p)
    p = np.clip(p, eps, 1 - eps).astype(np.float64)
    ll = -(y * np.log(p) + (1 - y) * np.log1p(-p))
    return float(np.average(ll, weights=w))


def calibration_bins(p, n_bins: int = 10, strategy: str = "uniform") -> tuple[np.ndarray, np.ndarray]:
    """Bin edges and each forecast's bin, exactly as scikit-learn's ``calibration_curve``.

    ``uniform`` edges are ``linspace(0, 1, n_bins + 1)``; ``quantile`` edges
    are the forecasts' percentiles (repeated edges kept, as scikit-learn does).
    A forecast goes to bin ``searchsorted(edges[1:-1], p)`` (left side), so a
    value on an inner edge belongs to the bin *below* it: with ten uniform
    bins, 0.2 is in bin 1 and 0.3 in bin 2 (the edge ``0.1 * 3`` is
    0.30000000000000004).

    Parameters
    ----------
    p : array-like of float
        The forecasts, probabilities in [0, 1].
    n_bins : int, default=10
        How many bins.
    strategy : {"uniform", "quantile"}, default="uniform"
        Equal-width bins or bins at the forecasts' percentiles.

    Returns
    -------
    edges : ndarray
        The ``n_bins + 1`` bin edges.
    idx : ndarray
        Each forecast's bin.

    Raises
    ------
    MetricInputError
        When ``strategy`` is neither, or a forecast is no probability.

    See Also
    --------
    reliability_curve : The bins' mean forecasts and observed frequencies.

    Examples
    --------
    >>> edges, idx = calibration_bins([0.2, 0.3, 0.5, 0.6, 1.0])
    >>> idx.tolist()
    [1, 2, 4, 5, 9]
    """
    p = _forecasts(p).astype(np.float64)
    if strategy == "uniform":
        edges = np.linspace(0.0, 1.0, n_bins + 1)
    elif strategy == "quantile":
        edges = np.percentile(p, np.linspace(0, 1, n_bins + 1) * 100)
    else:
        raise MetricInputError(f"strategy must be 'uniform' or 'quantile', got {strategy!r}")
    return edges, np.searchsorted(edges[1:-1], p)


@fill_doc(params_yp=_PARAMS_YP)
def reliability_curve(y, p, n_bins: int = 10, strategy: str = "uniform") -> pd.DataFrame:
    """Reliability-diagram data: per bin the mean forecast, observed frequency and count.

    The bins are scikit-learn's ``calibration_curve`` bins exactly (see
    :func:`calibration_bins`), values on bin edges included; empty bins are
    omitted, so ``observed`` and ``mean_forecast`` equal ``calibration_curve``'s
    ``prob_true`` and ``prob_pred``.

    Parameters
    ----------
    {params_yp}
    n_bins : int, default=10
        How many bins.
    strategy : {"uniform", "quantile"}, default="uniform"
        As :func:`calibration_bins`.

    Returns
    -------
    DataFrame
        One row per non-empty bin: ``bin``, ``bin_lo``, ``bin_hi``,
        ``mean_forecast``, ``observed``, ``count``.

    Raises
    ------
    MetricInputError
        When an outcome is no 0/1 label, a forecast no probability or the lengths differ.

    See Also
    --------
    ece : The curve's weighted mean gap.

    Examples
    --------
    >>> reliability_curve([0, 1, 1], [0.2, 0.3, 0.3])[["bin", "observed", "count"]].values.tolist()
    [[1.0, 0.0, 1.0], [2.0, 1.0, 2.0]]
    """
    y, p, _ = _clean(y, p)
    p = p.astype(np.float64)
    cols = ["bin", "bin_lo", "bin_hi", "mean_forecast", "observed", "count"]
    if y.size == 0:
        return pd.DataFrame(columns=cols)
    edges, idx = calibration_bins(p, n_bins=n_bins, strategy=strategy)
    df = pd.DataFrame({"bin": idx, "p": p, "y": y})
    g = df.groupby("bin", sort=True)
    out = pd.DataFrame({"mean_forecast": g["p"].mean(), "observed": g["y"].mean(),
                        "count": g.size()}).reset_index()
    out["bin_lo"] = edges[out["bin"].to_numpy()]
    out["bin_hi"] = edges[out["bin"].to_numpy() + 1]
    return out[cols]


@fill_doc(params_yp=_PARAMS_YP)
def ece(y, p, n_bins: int = 10) -> float:
    """Expected calibration error: ``Σ_bins (n_b / n) · |observed_b − mean_forecast_b|``.

    Over the ten uniform bins of scikit-learn's ``calibration_curve`` (see
    :func:`calibration_bins`); NaN when there are no forecasts.

    Parameters
    ----------
    {params_yp}
    n_bins : int, default=10
        How many uniform bins.

    Returns
    -------
    float
        The expected calibration error.

    See Also
    --------
    reliability_curve : The per-bin frequencies it averages.

    Examples
    --------
    >>> ece([1, 0, 1, 1], [0.9, 0.1, 0.8, 0.7])
    0.175
    """
    curve = reliability_curve(y, p, n_bins=n_bins)
    if curve.empty:
        return float("nan")
    n = curve["count"].sum()
    return round(float((curve["count"] / n * (curve["observed"] - curve["mean_forecast"]).abs()).sum()), 12)


@fill_doc(params_yp=_PARAMS_YP)
def calibration_summary(y, p, n_bins: int = 10) -> dict:
    """Brier, log-loss, ECE and n in one dict.

    Parameters
    ----------
    {params_yp}
    n_bins : int, default=10
        The bins of the ECE.

    Returns
    -------
    dict
        ``n``, ``brier``, ``log_loss`` and ``ece``.

    See Also
    --------
    brier, log_loss, ece : The three scores.

    Examples
    --------
    >>> calibration_summary([1, 0], [0.8, 0.4])["brier"]
    0.1
    """
    y_, p_, _ = _clean(y, p)
    return {"n": int(y_.size), "brier": brier(y_, p_), "log_loss": log_loss(y_, p_),
            "ece": ece(y_, p_, n_bins=n_bins)}
