"""Metrics: calibration of forecasts, regime outcomes, ranking and estimators."""

from thatchlab.metrics.calibration import (
                      brier,
                      calibration_summary,
                      ece,
                      log_loss,
                      reliability_curve,
)
from thatchlab.metrics.scoring import (
                      Estimate,
                      attribute,
                      counterfactual_metrics,
                      estimate,
                      prequential,
                      prequential_scores,
                      regime_outcomes,
                      regime_rates,
                      replay_metrics,
                      weighted_reliability,
)

__all__ = ["Estimate", "attribute", "counterfactual_metrics", "estimate", "prequential", "prequential_scores", "regime_outcomes",
           "regime_rates", "replay_metrics", "weighted_reliability", "brier", "calibration_summary", "ece", "log_loss", "reliability_curve"]
