"""Matplotlib figures; every function returns a Figure with labelled axes and units."""
from thatchlab.plots.anticipation import confidence_modes_plot, prefetch_sweep_plot
from thatchlab.plots.belief import band_table_figure, currency_curves
from thatchlab.plots.calibration import decay_ranking_plot, reliability_diagram
from thatchlab.plots.scoring import prequential_reliability_diagram, regime_bars
from thatchlab.plots.tuning import (
    decision_forest,
    metric_curve,
    metric_heatmap,
    pareto_plot,
    per_user_forest,
    prior_profile,
)

__all__ = ["prequential_reliability_diagram", "regime_bars", "confidence_modes_plot", "prefetch_sweep_plot", "reliability_diagram", "decay_ranking_plot", "currency_curves", "band_table_figure"]
__all__ += ["metric_heatmap", "metric_curve", "prior_profile", "pareto_plot", "decision_forest", "per_user_forest"]
