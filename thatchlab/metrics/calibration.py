"""Calibration of probability forecasts: Brier, log-loss, ECE and reliability curves.

Thin wrappers over scikit-learn so every engine scores forecasts one way.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

__all__ = ["brier", "log_loss", "ece", "reliability_curve", "calibration_summary"]

_EPS = 1e-15


def _clean(y, p, weight=None):
    y = np.asarray(y, dtype=np.float64).ravel()
    p = np.asarray(p, dtype=np.float64).ravel()
    if y.shape != p.shape:
        raise ValueError(f"outcomes and forecasts differ in length ({y.size} vs {p.size})")
    w = None if weight is None else np.asarray(weight, dtype=np.float64).ravel()
    return y, p, w


def brier(y, p, weight=None) -> float:
    """Mean squared error of forecasts ``p`` for 0/1 outcomes ``y`` (NaN when empty).

    >>> brier([1, 0], [0.8, 0.4])
    0.1
    """
    from sklearn.metrics import brier_score_loss

    y, p, w = _clean(y, p, weight)
    if y.size == 0:
        return float("nan")
    return round(float(brier_score_loss(y, p, sample_weight=w)), 15)


def log_loss(y, p, weight=None) -> float:
    """Mean negative log-likelihood of 0/1 (or fractional) outcomes (NaN when empty).

    >>> round(log_loss([1, 0], [0.5, 0.5]), 6)
    0.693147
    """
    y, p, w = _clean(y, p, weight)
    if y.size == 0:
        return float("nan")
    p = np.clip(p, _EPS, 1 - _EPS)
    ll = -(y * np.log(p) + (1 - y) * np.log1p(-p))
    return float(np.average(ll, weights=w))


def reliability_curve(y, p, n_bins: int = 10, strategy: str = "uniform") -> pd.DataFrame:
    """Reliability-diagram data: per bin the mean forecast, observed frequency and count.

    Uses scikit-learn's ``calibration_curve`` binning (``uniform`` bins on
    [0, 1]); empty bins are omitted.
    """
    y, p, _ = _clean(y, p)
    cols = ["bin", "bin_lo", "bin_hi", "mean_forecast", "observed", "count"]
    if y.size == 0:
        return pd.DataFrame(columns=cols)
    if strategy == "uniform":
        edges = np.linspace(0.0, 1.0, n_bins + 1)
    else:
        edges = np.unique(np.quantile(p, np.linspace(0, 1, n_bins + 1)))
    idx = np.clip(np.searchsorted(edges[1:-1], p, side="right"), 0, len(edges) - 2)
    df = pd.DataFrame({"bin": idx, "p": p, "y": y})
    g = df.groupby("bin", sort=True)
    out = pd.DataFrame({"mean_forecast": g["p"].mean(), "observed": g["y"].mean(),
                        "count": g.size()}).reset_index()
    out["bin_lo"] = edges[out["bin"].to_numpy()]
    out["bin_hi"] = edges[out["bin"].to_numpy() + 1]
    return out[cols]


def ece(y, p, n_bins: int = 10) -> float:
    """Expected calibration error: Σ_bins (n_b / n) · |observed_b − mean_forecast_b|.

    >>> ece([1, 0, 1, 1], [0.9, 0.1, 0.8, 0.7])
    0.175
    """
    curve = reliability_curve(y, p, n_bins=n_bins)
    if curve.empty:
        return float("nan")
    n = curve["count"].sum()
    return round(float((curve["count"] / n * (curve["observed"] - curve["mean_forecast"]).abs()).sum()), 12)


def calibration_summary(y, p, n_bins: int = 10) -> dict:
    """Brier, log-loss, ECE and n in one dict."""
    y_, p_, _ = _clean(y, p)
    return {"n": int(y_.size), "brier": brier(y_, p_), "log_loss": log_loss(y_, p_),
            "ece": ece(y_, p_, n_bins=n_bins)}
