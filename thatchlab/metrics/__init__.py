"""Metrics: calibration of forecasts, regime outcomes, ranking and estimators."""

from .calibration import brier, calibration_summary, ece, log_loss, reliability_curve

__all__ = ["brier", "calibration_summary", "ece", "log_loss", "reliability_curve"]
