"""Figures of mnemo's anticipation engine: pair-count (seed mode) vs fraction confidence, threshold sweeps."""

from __future__ import annotations

import pandas as pd

__all__ = ["confidence_modes_plot", "prefetch_sweep_plot"]

_LABELS = {
    "hit_rate_at_k": "hit rate@k (share of sessions)",
    "precision_at_k": "precision@k (useful / k)",
    "prefetch_precision": "useful prefetches / prefetches",
    "false_prefetches_per_session": "false prefetches per session (facts)",
    "round_trips_saved_per_session": "recall round-trips saved per session",
    "tokens_saved_per_session": "tokens saved per session (tokens)",
    "latency_saved_ms_per_session": "latency saved per session (ms)",
}


def confidence_modes_plot(seed: pd.DataFrame, fraction: pd.DataFrame):
    """Scatter of seed-mode vs fraction-mode confidence of the same (workspace, trigger, target).

    Pass both miners' outputs on the same stream (with low thresholds so the
    same pairs appear). Points above the dashed line at 1 are seed
    "confidences" that no probability can take.

    Parameters
    ----------
    seed : pandas.DataFrame
        Seed-mode miner output (``workspace, trigger, target, confidence``).
    fraction : pandas.DataFrame
        Fraction-mode miner output on the same stream, same columns.

    Returns
    -------
    matplotlib.figure.Figure
        The scatter, with the identity line and the dashed line at 1.

    Examples
    --------
    >>> s = pd.DataFrame({"workspace": "w", "trigger": ["a"], "target": ["b"], "confidence": [1.5]})
    >>> f = s.assign(confidence=[0.75])
    >>> confidence_modes_plot(s, f).axes[0].get_xlabel()
    'fraction confidence (A followed by B / A occurrences)'
    """
    from matplotlib.figure import Figure  # heavy: matplotlib only when a figure is drawn

    keys = ["workspace", "trigger", "target"]
    m = fraction[keys + ["confidence"]].merge(seed[keys + ["confidence"]], on=keys, suffixes=("_f", "_s"))
    fig = Figure(figsize=(5.5, 4.5))
    ax = fig.add_subplot()
    ax.scatter(m["confidence_f"], m["confidence_s"], s=10, alpha=0.5, color="tab:blue",
               label=f"{len(m)} (trigger, target) pairs")
    top = max(1.05, float(m["confidence_s"].max()) * 1.05) if len(m) else 1.05
    ax.plot([0, 1], [0, 1], color="grey", lw=1, label="production SQL = fraction")
    ax.axhline(1.0, color="tab:red", ls="--", lw=1, label="confidence 1")
    ax.set_xlim(0, 1.02)
    ax.set_ylim(0, top)
    ax.set_xlabel("fraction confidence (A followed by B / A occurrences)")
    ax.set_ylabel("production SQL confidence (pairs / A occurrences)")
    ax.set_title("Sequential confidence: mnemo's production SQL vs fraction")
    ax.legend(loc="upper left", fontsize=8)
    fig.tight_layout()
    return fig


def prefetch_sweep_plot(table: pd.DataFrame, x: str, *, hue: str | None = None,
                        metrics=("hit_rate_at_k", "false_prefetches_per_session"), xlabel: str | None = None):
    """One panel per metric against the swept parameter ``x`` (lines per ``hue``).

    ``table`` has one row per configuration with the parameter columns and
    the replay metrics.

    Parameters
    ----------
    table : pandas.DataFrame
        One row per configuration: the parameter columns and the replay metrics.
    x : str
        The swept parameter's column (the x axis).
    hue : str, default=None
        A column whose values get one line each (one line in all when None).
    metrics : sequence of str, default=("hit_rate_at_k", "false_prefetches_per_session")
        The metric columns, one panel each.
    xlabel : str, default=None
        The x-axis label (``x`` when None).

    Returns
    -------
    matplotlib.figure.Figure
        One panel per metric.

    Examples
    --------
    >>> t = pd.DataFrame({"min_conf": [0.3, 0.5], "hit_rate_at_k": [0.6, 0.5],
    ...                   "false_prefetches_per_session": [2.0, 1.0]})
    >>> len(prefetch_sweep_plot(t, "min_conf").axes)
    2
    """
    from matplotlib.figure import Figure  # heavy: matplotlib only when a figure is drawn

    fig = Figure(figsize=(4.2 * len(metrics), 3.6))
    groups = [(None, table)] if hue is None else list(table.groupby(hue, sort=True))
    for i, metric in enumerate(metrics):
        ax = fig.add_subplot(1, len(metrics), i + 1)
        for name, g in groups:
            g = g.sort_values(x)
            ax.plot(g[x], g[metric], marker="o", label=None if name is None else f"{hue}={name}")
        ax.set_xlabel(xlabel or x)
        ax.set_ylabel(_LABELS.get(metric, metric))
        ax.grid(alpha=0.3)
        if hue is not None:
            ax.legend(fontsize=8)
    fig.tight_layout()
    return fig
