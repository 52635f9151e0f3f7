"""Figures of omi's belief model: currency curves per class and the band table."""

from __future__ import annotations

import numpy as np
import pandas as pd

from thatchlab.belief import compute_currency
from thatchlab.core.params.belief import BELIEF_CLASSES, BeliefParams

__all__ = ["currency_curves", "band_table_figure"]


def currency_curves(params=None, days: float = 365.0, classes=None, fitted=None):
    """Currency against days since last evidence, one curve per belief class.

    Curves are ``0.5 ** (age / half_life)`` under ``params`` (solid); classes
    with no half-life are flat at 1, and classes that share a half-life share
    one labelled curve (they would overlap exactly). ``fitted`` (a Series class → half-life,
    e.g. ``HalfLifeFitter().half_life_``) adds dashed curves. The band
    boundaries 0.5 and 0.25 are drawn as dotted lines.

    Parameters
    ----------
    params : BeliefParams, default=None
        The half-lives of the solid curves (omi's priors when None).
    days : float, default=365.0
        The x-axis range, days since last evidence.
    classes : sequence of str, default=None
        The belief classes drawn (every class when None).
    fitted : pandas.Series, default=None
        Class → half-life (e.g. ``HalfLifeFitter().half_life_``), drawn dashed.

    Returns
    -------
    matplotlib.figure.Figure
        One curve per class (or per shared half-life).

    Examples
    --------
    >>> fig = currency_curves(days=60)
    >>> fig.axes[0].get_xlabel()
    'days since last evidence (d)'
    """
    from matplotlib.figure import Figure  # heavy: matplotlib only when a figure is drawn

    p = params if params is not None else BeliefParams()
    classes = list(classes) if classes is not None else list(BELIEF_CLASSES)
    age = np.linspace(0.0, float(days), 400)
    t0 = pd.Timestamp("2026-01-01", tz="UTC")
    now = pd.Series(t0 + pd.to_timedelta(age, unit="D"))
    fig = Figure(figsize=(7.5, 4.2))
    ax = fig.add_subplot(1, 1, 1)
    colors = {}
    # classes with the same half-life would draw the same curve on top of each other:
    # draw it once, labelled with every class it stands for
    by_half_life: dict = {}
    for c in classes:
        by_half_life.setdefault(p.half_life_for(c), []).append(c)
    for hl, names in by_half_life.items():
        line, = ax.plot(age, np.asarray(compute_currency(t0, now, hl), dtype=float),
                        label=f"{', '.join(names)} ({'no decay' if hl is None else f'{hl:g} d'})")
        colors.update({c: line.get_color() for c in names})
    if fitted is not None:
        for c, hl in pd.Series(fitted).items():
            if c in colors and np.isfinite(hl):
                ax.plot(age, np.asarray(compute_currency(t0, now, float(hl)), dtype=float),
                        linestyle="--", color=colors[c], label=f"{c} fitted ({hl:.3g} d)")
    for y, name in ((0.5, "current / fading"), (0.25, "fading / history")):
        ax.axhline(y, color="0.5", linestyle=":", linewidth=1)
        ax.text(days, y, f" {name}", va="bottom", ha="right", fontsize=7, color="0.35")
    ax.set_xlabel("days since last evidence (d)")
    ax.set_ylabel("currency (0–1)")
    ax.set_ylim(-0.02, 1.05)
    ax.set_xlim(0, days)
    ax.set_title("Belief currency by class")
    ax.legend(fontsize=7, ncol=2, loc="upper right", bbox_to_anchor=(1.0, 0.92))
    fig.tight_layout()
    return fig


def band_table_figure(tables: dict):
    """Share of reads still true per band, one bar group per labelled table.

    ``tables`` maps a label (e.g. "seed priors", "fitted") to a band table
    from :func:`thatchlab.replay.band_truth_table`.

    Parameters
    ----------
    tables : dict
        Label (e.g. "seed priors", "fitted") → band table from
        :func:`thatchlab.replay.band_truth_table`.

    Returns
    -------
    matplotlib.figure.Figure
        One bar group per band, one bar per labelled table.

    Examples
    --------
    >>> import pandas as pd
    >>> t = pd.DataFrame({"n": [2, 1, 1], "share_true": [1.0, 0.0, 0.0]},
    ...                  index=pd.Index(["current", "fading", "history"], name="band"))
    >>> band_table_figure({"priors": t}).axes[0].get_ylabel()
    'share of reads still true (fraction)'
    """
    from matplotlib.figure import Figure  # heavy: matplotlib only when a figure is drawn

    bands = ["current", "fading", "history"]
    fig = Figure(figsize=(6.5, 3.8))
    ax = fig.add_subplot(1, 1, 1)
    width = 0.8 / max(len(tables), 1)
    x = np.arange(len(bands))
    for i, (label, t) in enumerate(tables.items()):
        share = [float(t.loc[b, "share_true"]) if b in t.index else np.nan for b in bands]
        n = [int(t.loc[b, "n"]) if b in t.index else 0 for b in bands]
        bars = ax.bar(x + i * width - 0.4 + width / 2, np.nan_to_num(share), width, label=label)
        for rect, k in zip(bars, n):
            ax.text(rect.get_x() + rect.get_width() / 2, rect.get_height(), f"n={k}",
                    ha="center", va="bottom", fontsize=7)
    ax.set_xticks(x, bands)
    ax.set_xlabel("currency band")
    ax.set_ylabel("share of reads still true (fraction)")
    ax.set_ylim(0, 1.1)
    ax.set_title("Does the band say whether a belief still holds?")
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig
