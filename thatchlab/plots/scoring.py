"""Figures of thatch prediction/behavior replays: prequential reliability and regimes."""

from __future__ import annotations

import numpy as np
import pandas as pd

from thatchlab.metrics.scoring import prequential, weighted_reliability

__all__ = ["prequential_reliability_diagram", "regime_bars"]

_REGIMES = ("strong", "ambiguous", "none", "skipped")


def _label_results(results):
    if isinstance(results, dict):
        return list(results.items())
    if isinstance(results, (list, tuple)):
        return [(f"setting {j + 1}", r) for j, r in enumerate(results)]
    return [("replay", results)]


def prequential_reliability_diagram(results, n_bins: int = 10,
                                    title: str = "Stored confidence as a forecast of confirm"):
    """Reliability diagram of the prequential forecasts of one or more replays.

    ``results`` is a :class:`~thatchlab.replay.ReplayResult`, a list of them,
    or a dict label → result. For each, the stored confidence just before
    every confirm/disconfirm/soft signal is binned (soft weighted by
    ``soft_weight``) and the observed confirm rate plotted against the
    mean forecast; marker area follows the bin's weight.

    Parameters
    ----------
    results : ReplayResult or list or dict
        A :class:`~thatchlab.replay.ReplayResult`, a list of them, or a dict label → result.
    n_bins : int, default=10
        Forecast bins.
    title : str, default="Stored confidence as a forecast of confirm"
        The axes title.

    Returns
    -------
    matplotlib.figure.Figure
        Observed confirm rate against mean forecast, one line per replay.

    See Also
    --------
    regime_bars : the regimes of the same replays.

    Examples
    --------
    >>> import pandas as pd
    >>> from thatchlab.embed import LookupEmbedder
    >>> from thatchlab.replay import run
    >>> emb = LookupEmbedder({"writing tests": [1, 0], "use pytest": [0, 1]})
    >>> log = pd.DataFrame({"ts": ["2026-01-01T09:00:00Z", "2026-01-01T10:00:00Z"], "session": ["a", "b"],
    ...     "kind": ["prediction_update"] * 2, "matcher": ["writing tests"] * 2,
    ...     "statement": ["use pytest"] * 2, "signal": ["confirm", "disconfirm"]})
    >>> prequential_reliability_diagram(run(log, embedder=emb)).axes[0].get_xlabel()
    'stored confidence before the signal (probability)'
    """
    from matplotlib.figure import Figure  # heavy: matplotlib only when a figure is drawn

    fig = Figure(figsize=(5.5, 5))
    ax = fig.add_subplot(1, 1, 1)
    ax.plot([0, 1], [0, 1], color="0.6", linestyle="--", linewidth=1, label="perfect calibration")
    for j, (label, res) in enumerate(_label_results(results)):
        pq = prequential(res.events, res.params.soft_weight)
        curve = weighted_reliability(pq["y"], pq["forecast"], pq["weight"], n_bins)
        if curve.empty:
            continue
        sizes = 20 + 180 * curve["weight"] / max(curve["weight"].max(), 1e-12)
        ax.plot(curve["mean_forecast"], curve["observed"], color=f"C{j}", linewidth=1.2, label=label)
        ax.scatter(curve["mean_forecast"], curve["observed"], s=sizes, color=f"C{j}", alpha=0.6)
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1)
    ax.set_xlabel("stored confidence before the signal (probability)")
    ax.set_ylabel("observed confirm rate (fraction, soft-weighted)")
    ax.set_title(title)
    ax.legend(loc="upper left", frameon=False)
    return fig


def regime_bars(results, title: str = "Nudge regimes per message"):
    """Grouped bars: the share of messages in each regime, per replay.

    ``results`` as for :func:`prequential_reliability_diagram`.

    Parameters
    ----------
    results : ReplayResult or list or dict
        As for :func:`prequential_reliability_diagram`.
    title : str, default="Nudge regimes per message"
        The axes title.

    Returns
    -------
    matplotlib.figure.Figure
        One bar group per regime, one bar per replay.

    See Also
    --------
    prequential_reliability_diagram : the forecasts of the same replays.

    Examples
    --------
    >>> import pandas as pd
    >>> from types import SimpleNamespace
    >>> ev = pd.DataFrame({"kind": ["message"] * 3, "regime": ["strong", "none", "none"]})
    >>> fig = regime_bars({"a": SimpleNamespace(events=ev)})
    >>> fig.axes[0].get_ylabel()
    'share of messages (fraction)'
    """
    from matplotlib.figure import Figure  # heavy: matplotlib only when a figure is drawn

    pairs = _label_results(results)
    fig = Figure(figsize=(6.5, 4))
    ax = fig.add_subplot(1, 1, 1)
    width = 0.8 / max(len(pairs), 1)
    x = np.arange(len(_REGIMES))
    for j, (label, res) in enumerate(pairs):
        ev = res.events
        counts = pd.Series(ev.loc[ev["kind"] == "message", "regime"]).value_counts()
        total = max(int(counts.sum()), 1)
        share = [counts.get(r, 0) / total for r in _REGIMES]
        ax.bar(x + (j - (len(pairs) - 1) / 2) * width, share, width, label=label, color=f"C{j}")
    ax.set_xticks(x)
    ax.set_xticklabels(["strong\n(silent follow)", "ambiguous\n(interruption:\nasks which)", "none\n(interruption:\nasks)", "skipped"])
    ax.set_xlabel("regime")
    ax.set_ylabel("share of messages (fraction)")
    ax.set_ylim(0, 1)
    ax.set_title(title)
    ax.legend(frameon=False)
    return fig
