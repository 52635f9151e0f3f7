"""Metrics: calibration of forecasts, regime outcomes, ranking and counterfactual estimators.

Forecast metrics (Brier, log-loss, ECE, reliability curves on scikit-learn's
``calibration_curve`` bins), the regime outcomes of nudges (silent follows,
interruptions, asks) with attribution of later feedback, and the estimators
that say what they assume about the logging policy.
"""

from thatchlab.metrics.calibration import (
    brier,
    calibration_bins,
    calibration_summary,
    ece,
    log_loss,
    reliability_curve,
)
from thatchlab.metrics.scoring import (
    ESS_FLOOR,
    Estimate,
    attribute,
    counterfactual_metrics,
    doubly_robust,
    effective_sample_size,
    estimate,
    prequential,
    prequential_scores,
    regime_outcomes,
    regime_rates,
    replay_metrics,
    weighted_reliability,
)

__all__ = ["ESS_FLOOR", "Estimate", "attribute", "counterfactual_metrics", "doubly_robust",
           "effective_sample_size", "estimate", "prequential",
           "prequential_scores", "regime_outcomes", "regime_rates", "replay_metrics",
           "weighted_reliability", "brier", "calibration_bins", "calibration_summary", "ece",
           "log_loss", "reliability_curve"]
