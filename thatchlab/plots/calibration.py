"""Figures of ai-memory's confidence calibration: reliability and decay ranking."""

from __future__ import annotations

import numpy as np
import pandas as pd

__all__ = ["reliability_diagram", "decay_ranking_plot"]


def reliability_diagram(curves, title: str = "Reliability of confidence vs consumption"):
    """Reliability diagram of caller vs derived confidence against consumption.

    ``curves`` is a :class:`~thatchlab.replay.calibration.CalibrationResult` or
    its ``reliability`` frame (``confidence, mean_forecast, observed, count``).
    Returns a matplotlib Figure (x: forecast, y: observed consumption rate);
    marker area is proportional to the bin's count.

    Parameters
    ----------
    curves : CalibrationResult or pandas.DataFrame
        A :class:`~thatchlab.replay.calibration.CalibrationResult` or its ``reliability`` frame
        (``confidence, mean_forecast, observed, count``).
    title : str, default="Reliability of confidence vs consumption"
        The axes title.

    Returns
    -------
    matplotlib.figure.Figure
        x: forecast, y: observed consumption rate; marker area proportional to the bin's count.

    See Also
    --------
    decay_ranking_plot : the other figure of the calibration replay.

    Examples
    --------
    >>> from thatchlab.replay.calibration import run_calibration
    >>> from thatchlab.synth.recall import RecallWorld
    >>> fig = reliability_diagram(run_calibration(RecallWorld(n_memories=20, n_recalls=200, seed=1).log))
    >>> fig.axes[0].get_xlabel()
    'forecast confidence (probability)'
    """
    from matplotlib.figure import Figure  # heavy: matplotlib only when a figure is drawn

    df = curves.reliability if hasattr(curves, "reliability") else pd.DataFrame(curves)
    fig = Figure(figsize=(5.5, 5))
    ax = fig.add_subplot(1, 1, 1)
    ax.plot([0, 1], [0, 1], color="0.6", linestyle="--", linewidth=1, label="perfect calibration")
    for i, (name, g) in enumerate(df.groupby("confidence", sort=True)):
        marker, color = ("o", "s", "^", "D")[i % 4], f"C{i}"
        sizes = 20 + 180 * g["count"].to_numpy() / max(df["count"].max(), 1)
        ax.plot(g["mean_forecast"], g["observed"], color=color, linewidth=1.2, label=name)
        ax.scatter(g["mean_forecast"], g["observed"], s=sizes, marker=marker, color=color, alpha=0.6)
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1)
    ax.set_xlabel("forecast confidence (probability)")
    ax.set_ylabel("observed consumption rate (fraction)")
    ax.set_title(title)
    ax.legend(loc="upper left", frameon=False)
    return fig


def decay_ranking_plot(study: pd.DataFrame, title: str = "What a decay half-life does to recall ranking"):
    """Share of recalls whose top memory changes, and the top memory's mean age, per half-life.

    ``study`` is :func:`~thatchlab.replay.calibration.decay_ranking_study` output.

    Parameters
    ----------
    study : pandas.DataFrame
        :func:`~thatchlab.replay.calibration.decay_ranking_study` output.
    title : str, default="What a decay half-life does to recall ranking"
        The axes title.

    Returns
    -------
    matplotlib.figure.Figure
        Top-1 change share (left axis) and mean top-1 age (right axis) per half-life.

    Examples
    --------
    >>> import pandas as pd
    >>> study = pd.DataFrame({"half_life_days": [7.0, 30.0], "top1_changed": [0.2, 0.1],
    ...                       "mean_top1_age_days": [10.0, 12.0], "n_recalls": [50, 50]})
    >>> decay_ranking_plot(study).axes[0].get_xlabel()
    'decay half-life (days, log scale)'
    """
    from matplotlib.figure import Figure  # heavy: matplotlib only when a figure is drawn

    s = study.loc[np.isfinite(study["half_life_days"])]
    fig = Figure(figsize=(7, 4))
    ax = fig.add_subplot(1, 1, 1)
    ax.plot(s["half_life_days"], 100 * s["top1_changed"], marker="o", color="C0")
    ax.set_xscale("log")
    ax.set_xlabel("decay half-life (days, log scale)")
    ax.set_ylabel("recalls whose top memory changes (%)", color="C0")
    ax2 = ax.twinx()
    ax2.plot(s["half_life_days"], s["mean_top1_age_days"], marker="s", color="C1")
    ax2.set_ylabel("mean age of the top memory (days)", color="C1")
    ax.set_title(title)
    fig.tight_layout()
    return fig
